//! The gRPC API on `api.sock` (service `hallpass.v1.Hallpass`). Handlers only translate
//! between the wire and the daemon's state.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use std::path::{Path, PathBuf};
use std::pin::Pin;

use hallpass_proto::hallpass_server::{Hallpass, HallpassServer};
use hallpass_proto::shown::shown;
use hallpass_proto::{
    rule, AddRuleRequest, Answer, AnswerReply, AnswerRequest, CheckProcessReply,
    CheckProcessRequest, Event, ListRulesReply, ListRulesRequest, PendingReply, PendingRequest,
    ProcessVerdict, RemoveRuleRequest, Rule, SessionStatus, StatusReply, StatusRequest,
    WatchRequest,
};
use prost::Message;
use tokio::net::UnixListener;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use crate::ask::AnswerError;
use crate::bounds;
use crate::dlog::say;
use crate::rules::{self, Action, Rules};
use crate::server::State;

mod watch;

fn rules_reply(store: &rules::Store, r: &Rules) -> ListRulesReply {
    ListRulesReply {
        file: store.path().display().to_string(),
        rules: r
            .list
            .iter()
            .map(|r| Rule {
                action: match r.action {
                    Action::Allow => rule::Action::Allow,
                    Action::Deny => rule::Action::Deny,
                } as i32,
                path: r.path.to_string_lossy().into_owned(),
            })
            .collect(),
        error: store.error().map(|e| e.to_string()).unwrap_or_default(),
    }
}

/// A rule's path from the wire: absolute, normalized, no `..`.
fn rule_path(p: &str) -> Result<PathBuf, Status> {
    if !p.starts_with('/') {
        return Err(Status::invalid_argument(format!(
            "the path `{}` is not absolute",
            shown(p)
        )));
    }
    rules::normalize(p)
        .ok_or_else(|| Status::invalid_argument(format!("the path `{}` has `..`", shown(p))))
}

pub struct Api {
    state: Arc<State>,
}

#[tonic::async_trait]
impl Hallpass for Api {
    type WatchStream = Pin<Box<dyn Stream<Item = Result<Event, Status>> + Send>>;

    async fn watch(
        &self,
        req: Request<WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let session = req.into_inner().session_id;
        let (pending, rx) = self.state.questions.subscribe(session);
        let questions = self.state.questions.clone();
        let (tx, out) = tokio::sync::mpsc::channel(watch::BUFFER);
        tokio::spawn(watch::forward(
            session,
            pending,
            rx,
            questions,
            tx,
            watch::SLOW_CLIENT,
        ));
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(out),
        )))
    }

    async fn pending(
        &self,
        req: Request<PendingRequest>,
    ) -> Result<Response<PendingReply>, Status> {
        let req = req.into_inner();
        let (all, _) = self.state.questions.subscribe(req.session_id);
        let mut reply = PendingReply::default();
        let mut size = 0;
        for q in all.iter().filter(|q| q.id > req.after_id) {
            let q = bounds::question(q);
            size += q.encoded_len() + 8;
            if size > PAGE && !reply.questions.is_empty() {
                reply.more = true;
                break;
            }
            reply.questions.push(q);
        }
        Ok(Response::new(reply))
    }

    async fn answer(&self, req: Request<AnswerRequest>) -> Result<Response<AnswerReply>, Status> {
        let req = req.into_inner();
        let answer = Answer::try_from(req.answer)
            .map_err(|_| Status::invalid_argument(format!("unknown answer {}", req.answer)))?;
        let scope = (!req.scope.is_empty()).then(|| PathBuf::from(&req.scope));
        let questions = self.state.questions.clone();
        // Saving a rule writes a file: off the async workers.
        let r =
            tokio::task::spawn_blocking(move || questions.answer(req.question_id, answer, scope))
                .await
                .map_err(|e| Status::internal(e.to_string()))?;
        match r {
            Ok(w) => Ok(Response::new(AnswerReply {
                warning: w.unwrap_or_default(),
            })),
            Err(e @ AnswerError::NotPending(_)) => Err(Status::failed_precondition(e.to_string())),
            // Its paths may be long: a status travels in a header.
            Err(e) => Err(Status::invalid_argument(bounds::cut(
                &e.to_string(),
                MAX_STATUS,
            ))),
        }
    }

    async fn list_rules(
        &self,
        _req: Request<ListRulesRequest>,
    ) -> Result<Response<ListRulesReply>, Status> {
        let store = self.state.questions.rules().clone();
        store.reload();
        Ok(Response::new(rules_reply(&store, &store.current())))
    }

    async fn add_rule(
        &self,
        req: Request<AddRuleRequest>,
    ) -> Result<Response<ListRulesReply>, Status> {
        let r = req.into_inner().rule.unwrap_or_default();
        let action = match rule::Action::try_from(r.action) {
            Ok(rule::Action::Allow) => Action::Allow,
            Ok(rule::Action::Deny) => Action::Deny,
            _ => return Err(Status::invalid_argument("a rule is `allow` or `deny`")),
        };
        let path = rule_path(&r.path)?;
        if path == Path::new("/") {
            return Err(Status::invalid_argument(
                "a rule for / would cover everything",
            ));
        }
        let store = self.state.questions.rules().clone();
        let st = store.clone();
        let now = tokio::task::spawn_blocking(move || st.add(rules::Rule { action, path }))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(|e| Status::failed_precondition(e.to_string()))?;
        Ok(Response::new(rules_reply(&store, &now)))
    }

    async fn remove_rule(
        &self,
        req: Request<RemoveRuleRequest>,
    ) -> Result<Response<ListRulesReply>, Status> {
        let path = rule_path(&req.into_inner().path)?;
        let store = self.state.questions.rules().clone();
        let st = store.clone();
        let p = path.clone();
        let now = tokio::task::spawn_blocking(move || st.remove(&p))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(|e| Status::failed_precondition(e.to_string()))?
            .ok_or_else(|| Status::not_found(format!("no rule for {}", shown(&path))))?;
        Ok(Response::new(rules_reply(&store, &now)))
    }

    async fn check_process(
        &self,
        req: Request<CheckProcessRequest>,
    ) -> Result<Response<CheckProcessReply>, Status> {
        use crate::peer::PeerError;
        let pid = req.into_inner().pid;
        let launchers = self.state.launchers();
        // A few small reads of /proc: off the async workers all the same.
        let verdict = tokio::task::spawn_blocking(move || crate::peer::process(pid, &launchers))
            .await
            .map_err(|e| Status::internal(e.to_string()))?;
        let (verdict, why) = match verdict {
            Ok(()) => (ProcessVerdict::Free, String::new()),
            Err(
                e @ (PeerError::Supervised { .. }
                | PeerError::Sandboxed { .. }
                | PeerError::Daemon { .. }),
            ) => (ProcessVerdict::Supervised, e.to_string()),
            Err(e) => (ProcessVerdict::Unknown, e.to_string()),
        };
        Ok(Response::new(CheckProcessReply {
            verdict: verdict as i32,
            why,
        }))
    }

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
                questions: s.questions.load(Ordering::Relaxed),
                landlock: s.landlock.load(Ordering::Relaxed),
                profiles: s.profiles.clone(),
            })
            .collect();
        Ok(Response::new(StatusReply {
            pid: std::process::id() as i32,
            version: env!("CARGO_PKG_VERSION").into(),
            sessions,
        }))
    }
}

/// A page of `Pending`, in bytes: far under what a client decodes (4 MiB).
const PAGE: usize = 1 << 20;
// A page holds at least one question, and stays far under what a client decodes.
const _: () = assert!(bounds::MAX_QUESTION <= PAGE && PAGE <= (4 << 20) / 2);
/// An error message sent back, in bytes.
const MAX_STATUS: usize = 2048;

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
                    say!("hallpassd: api: dropped a connection: {e}");
                    None
                }
            }
        });
    tonic::transport::Server::builder()
        .add_service(HallpassServer::new(Api { state }))
        .serve_with_incoming(incoming)
        .await
}
