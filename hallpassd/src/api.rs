//! The gRPC API on `api.sock` (service `hallpass.v1.Hallpass`). Handlers only translate
//! between the wire and the daemon's state.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use hallpass_proto::hallpass_server::{Hallpass, HallpassServer};
use hallpass_proto::{SessionStatus, StatusReply, StatusRequest};
use tokio::net::UnixListener;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status};

use crate::server::State;

pub struct Api {
    state: Arc<State>,
}

#[tonic::async_trait]
impl Hallpass for Api {
    async fn status(&self, _req: Request<StatusRequest>) -> Result<Response<StatusReply>, Status> {
        let sessions = self
            .state
            .sessions()
            .iter()
            .map(|s| SessionStatus {
                session_id: s.id,
                argv: s.argv.clone(),
                cwd: s.cwd.clone(),
                launcher_pid: s.launcher_pid,
                pid: s.pid.load(Ordering::Relaxed),
                prompt: s.prompt,
                mode: s.mode,
                live: s.live.load(Ordering::Relaxed),
                notifications: s.notifications.load(Ordering::Relaxed),
                allowed: s.allowed.load(Ordering::Relaxed),
                denied: s.denied.load(Ordering::Relaxed),
                passed: s.passed.load(Ordering::Relaxed),
                age_secs: s.started.elapsed().as_secs(),
            })
            .collect();
        Ok(Response::new(StatusReply {
            pid: std::process::id() as i32,
            version: env!("CARGO_PKG_VERSION").into(),
            sessions,
        }))
    }
}

/// Serves the API on `listener` until the daemon exits. Connections from other users or from
/// supervised processes are dropped before any request is read.
pub async fn serve(
    state: Arc<State>,
    listener: UnixListener,
) -> Result<(), tonic::transport::Error> {
    let st = state.clone();
    let incoming =
        tokio_stream::wrappers::UnixListenerStream::new(listener).filter_map(move |conn| {
            let conn = match conn {
                Ok(c) => c,
                Err(e) => return Some(Err(e)),
            };
            let std = match conn.into_std() {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            };
            match crate::peer::check(&std, &st.launchers()) {
                Ok(_) => Some(tokio::net::UnixStream::from_std(std)),
                Err(e) => {
                    eprintln!("hallpassd: api: dropped a connection: {e}");
                    None
                }
            }
        });
    tonic::transport::Server::builder()
        .add_service(HallpassServer::new(Api { state }))
        .serve_with_incoming(incoming)
        .await
}
