//! `hallpass status`: the daemon's sessions and their counters, over the gRPC API.

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::{paths, StatusRequest};
use hyper_util::rt::TokioIo;
use tonic::transport::{Endpoint, Uri};

use crate::Failure;

/// A client of the daemon's API socket.
pub async fn client() -> Result<HallpassClient<tonic::transport::Channel>, Failure> {
    let path = paths::runtime_dir().join(paths::API_SOCKET);
    let p = path.clone();
    let channel = Endpoint::from_static("http://hallpassd")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let p = p.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(p).await?)) }
        }))
        .await
        .map_err(|e| Failure::new(format!("no daemon answers on {}: {e}\nhint: it starts with the first `hallpass -- COMMAND`", path.display())))?;
    Ok(HallpassClient::new(channel))
}

pub fn status(json: bool) -> Result<i32, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(e.to_string()))?;
    rt.block_on(async {
        let mut c = client().await?;
        let s = c.status(StatusRequest {}).await.map_err(|e| match e.code() {
            tonic::Code::Unimplemented => Failure::new("the daemon does not know this request (version mismatch)"),
            _ => Failure::new(format!("status: {}", e.message())),
        })?;
        let s = s.into_inner();
        if json {
            let sessions: Vec<_> = s
                .sessions
                .iter()
                .map(|x| {
                    serde_json::json!({
                        "session": x.session_id, "argv": x.argv, "cwd": x.cwd, "launcher_pid": x.launcher_pid,
                        "pid": x.pid, "live": x.live, "notifications": x.notifications, "allowed": x.allowed,
                        "denied": x.denied, "passed": x.passed, "age_secs": x.age_secs,
                    })
                })
                .collect();
            println!("{}", serde_json::json!({"pid": s.pid, "version": s.version, "sessions": sessions}));
        } else {
            println!("hallpassd {} (pid {}), {} sessions", s.version, s.pid, s.sessions.len());
            if !s.sessions.is_empty() {
                println!("{:>4}  {:<5}  {:>7}  {:>8}  {:>8}  {:>7}  COMMAND", "ID", "STATE", "PID", "NOTIFS", "ALLOWED", "DENIED");
            }
            for x in &s.sessions {
                println!(
                    "{:>4}  {:<5}  {:>7}  {:>8}  {:>8}  {:>7}  {}",
                    x.session_id,
                    if x.live { "live" } else { "ended" },
                    x.pid,
                    x.notifications,
                    x.allowed,
                    x.denied,
                    x.argv.join(" ")
                );
            }
        }
        Ok(0)
    })
}
