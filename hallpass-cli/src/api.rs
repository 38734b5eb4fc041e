//! The daemon's gRPC API, from the client side: how to reach it.

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::paths;
use hallpass_proto::shown::shown;
use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::error::Failure;

/// A client of the daemon's API socket.
pub async fn client() -> Result<HallpassClient<Channel>, Failure> {
    client_at(None).await
}

/// A client of the API socket at `socket`, or the daemon's own when `None` (a socket forwarded
/// over ssh, or relayed, works the same).
pub async fn client_at(
    socket: Option<&std::path::Path>,
) -> Result<HallpassClient<Channel>, Failure> {
    let path = match socket {
        Some(p) => p.to_path_buf(),
        None => paths::runtime_dir().join(paths::API_SOCKET),
    };
    let p = path.clone();
    let channel = Endpoint::from_static("http://hallpassd")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let p = p.clone();
            async move {
                Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(p).await?))
            }
        }))
        .await
        .map_err(|e| {
            let hint = crate::inside::sandbox_hint()
                .unwrap_or_else(|| "it starts with the first `hallpass -- COMMAND`".into());
            Failure::new(format!(
                "no daemon answers on {}: {e}\nhint: {hint}",
                shown(&path)
            ))
        })?;
    Ok(HallpassClient::new(channel))
}

/// A runtime for a client call from synchronous code.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start an async runtime: {e}")))
}

/// A gRPC error as one line for the user.
pub fn say(e: &tonic::Status) -> String {
    match e.code() {
        tonic::Code::Unimplemented => {
            "the daemon does not know this request (hallpass and hallpassd versions differ?)".into()
        }
        tonic::Code::Unavailable | tonic::Code::Unknown => match crate::inside::sandbox_hint() {
            Some(h) => format!("{}\nhint: {h}", e.message()),
            None => e.message().to_string(),
        },
        _ => e.message().to_string(),
    }
}
