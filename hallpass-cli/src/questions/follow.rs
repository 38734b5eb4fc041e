//! Following a session's questions over the API (`Watch`), and sending the answers given
//! for them (`Answer`): the one loop behind the prompt bar, the desktop notifier and
//! `hallpass answer`.
//!
//! When the daemon goes away, the questions held are void ([`Update::Void`]): a new daemon
//! asks them again. The follower then follows again: the launcher's own session once it is
//! registered with a new daemon (or the same daemon again, if only the stream broke), an API
//! socket as soon as it answers again.

use std::path::PathBuf;
use std::time::Duration;

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::{event, AnswerRequest, Event, Question, WatchRequest};
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::Streaming;

use crate::api::{client_at, say};
use crate::error::Failure;
use crate::session::Session;

/// How long a call to the daemon may take before the follower stops waiting for it (a
/// daemon that accepts and never answers must not freeze the questions).
const LIMIT: Duration = Duration::from_secs(5);
/// How long to wait before trying again to follow.
const RETRY: Duration = Duration::from_millis(500);
/// After the stream broke, how long to wait for the launcher to register the session with a
/// new daemon before following the same registration again (the daemon is alive and only
/// the stream broke).
const SETTLE: Duration = Duration::from_secs(1);

/// Whose questions to follow.
pub enum Source {
    /// The launcher's own session, as its link registers it (again, with each new daemon).
    Session(Session),
    /// The questions of session `session` (0: every session) at the API socket `socket`
    /// (`None`: the local daemon's).
    Socket {
        socket: Option<PathBuf>,
        session: u64,
    },
}

/// What the follower saw.
pub enum Update {
    /// A question waits.
    Asked(Box<Question>),
    /// A question no longer waits.
    Resolved(u64),
    /// Drop every question held: those still pending come again as `Asked`. Answers sent
    /// for them before this are dropped.
    Void(Why),
    /// The daemon answers again after [`Why::Lost`].
    Back,
    /// The session cannot be followed now: why. Said once until it is followed again.
    Trouble(String),
    /// What became of an answer sent with [`Answers::send`].
    Answered { id: u64, outcome: Outcome },
}

/// Why the questions held are void.
pub enum Why {
    /// The daemon went away, or the session was registered again.
    Lost,
    /// The stream fell behind and events were lost.
    Reset,
}

/// What became of an answer.
pub enum Outcome {
    /// Applied; the daemon may have something to say (a broken rules file).
    Applied { warning: String },
    /// The question was settled already (answered elsewhere first, or gone): why.
    Settled(String),
    /// Not applied: why.
    Refused(String),
    /// The daemon did not answer in time.
    NoReply,
}

/// Where answers go, tagged with the generation of questions they are for (how many
/// [`Update::Void`] the sender had seen). Dropping every copy ends the follower.
#[derive(Clone)]
pub struct Answers(mpsc::UnboundedSender<(u64, AnswerRequest)>);

impl Answers {
    pub fn send(&self, generation: u64, req: AnswerRequest) {
        let _ = self.0.send((generation, req));
    }
}

/// See the module's doc.
pub struct Follower {
    source: Source,
    answers: mpsc::UnboundedReceiver<(u64, AnswerRequest)>,
    /// How many times the questions were voided.
    generation: u64,
    /// A connection made by [`Follower::connect`], not yet followed.
    ready: Option<(HallpassClient<Channel>, Streaming<Event>)>,
}

/// Why following could not start.
enum Cannot {
    /// No daemon answers on the socket.
    Reach(Failure),
    /// The daemon would not serve `Watch`.
    Watch(tonic::Status),
    /// It did not answer in time.
    Late,
}

impl Cannot {
    fn say(self) -> String {
        match self {
            Cannot::Reach(f) => f.to_string(),
            Cannot::Watch(e) => format!("cannot follow questions: {}", say(&e)),
            Cannot::Late => "cannot follow questions: the daemon did not answer".into(),
        }
    }
}

/// How following one connection ended.
enum End {
    /// The daemon went away (or only the stream broke).
    Lost,
    /// The launcher registered the session again (or lost its daemon).
    Moved,
    /// Whoever reads the updates, or sends the answers, is gone.
    Done,
}

/// A follower of `source`, and where to send its answers.
pub fn follower(source: Source) -> (Follower, Answers) {
    let (tx, rx) = mpsc::unbounded_channel();
    let f = Follower {
        source,
        answers: rx,
        generation: 0,
        ready: None,
    };
    (f, Answers(tx))
}

impl Follower {
    /// Makes the first connection now, for a caller that ends if it cannot
    /// (`hallpass answer`).
    pub async fn connect(&mut self) -> Result<(), Failure> {
        let Source::Socket { socket, session } = &self.source else {
            return Ok(());
        };
        match connect(socket.clone(), *session).await {
            Ok(c) => {
                self.ready = Some(c);
                Ok(())
            }
            Err(Cannot::Reach(f)) => Err(f),
            Err(Cannot::Watch(e)) => Err(Failure::new(format!("answer: {}", say(&e)))),
            Err(Cannot::Late) => Err(Failure::new("answer: the daemon did not answer")),
        }
    }

    /// Follows until `out` returns false (its reader is gone), every [`Answers`] is dropped,
    /// or the launcher's session ends.
    pub async fn run(mut self, out: &mut (dyn FnMut(Update) -> bool + Send)) {
        // The registration followed last: a new one (the daemon was replaced) is followed
        // afresh, even under the same session id.
        let mut followed: Option<u64> = None;
        let mut told = false;
        let mut lost = false;
        loop {
            let (socket, id) = match &mut self.source {
                Source::Session(s) => {
                    let current = *s.borrow_and_update();
                    let Some(r) = current.filter(|r| Some(r.count) != followed) else {
                        if s.changed().await.is_err() {
                            return;
                        }
                        continue;
                    };
                    followed = Some(r.count);
                    (None, r.id)
                }
                Source::Socket { socket, session } => (socket.clone(), *session),
            };
            let conn = match self.ready.take() {
                Some(c) => Ok(c),
                None => connect(socket, id).await,
            };
            let (client, stream) = match conn {
                Ok(c) => c,
                Err(why) => {
                    // The daemon is there but would not serve us, or not yet: try again
                    // shortly, saying so once.
                    if !told && !out(Update::Trouble(why.say())) {
                        return;
                    }
                    told = true;
                    followed = None;
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            };
            if std::mem::take(&mut lost) && !out(Update::Back) {
                return;
            }
            let end = self.follow(client, stream, out).await;
            if let End::Done = end {
                return;
            }
            told = false;
            lost = true;
            self.generation += 1;
            if !out(Update::Void(Why::Lost)) {
                return;
            }
            match &mut self.source {
                // The registration to follow now is there already (or will be said).
                Source::Session(_) if matches!(end, End::Moved) => {}
                // A daemon that died is noticed by the launcher at once (it registers the
                // session again, or says it has none). If nothing changes, the daemon is
                // alive and only the stream broke: follow it again.
                Source::Session(s) => match tokio::time::timeout(SETTLE, s.changed()).await {
                    Ok(Err(_)) => return,
                    Ok(Ok(())) => {}
                    Err(_) => followed = None,
                },
                Source::Socket { .. } => tokio::time::sleep(RETRY).await,
            }
        }
    }

    /// Passes on the questions of one connection, and sends the answers, until it ends.
    async fn follow(
        &mut self,
        mut c: HallpassClient<Channel>,
        mut stream: Streaming<Event>,
        out: &mut (dyn FnMut(Update) -> bool + Send),
    ) -> End {
        loop {
            let source = &mut self.source;
            let registered_again = async move {
                match source {
                    Source::Session(s) => {
                        let _ = s.changed().await;
                    }
                    Source::Socket { .. } => std::future::pending().await,
                }
            };
            let u = tokio::select! {
                m = stream.message() => match m {
                    Ok(Some(ev)) => match ev.kind {
                        Some(event::Kind::Asked(q)) => Update::Asked(Box::new(q)),
                        Some(event::Kind::Resolved(r)) => Update::Resolved(r.question_id),
                        // The pending ones follow on the same stream.
                        Some(event::Kind::Reset(_)) => {
                            self.generation += 1;
                            Update::Void(Why::Reset)
                        }
                        None => continue,
                    },
                    Ok(None) | Err(_) => return End::Lost,
                },
                _ = registered_again => return End::Moved,
                a = self.answers.recv() => {
                    let Some((g, req)) = a else { return End::Done };
                    // An answer to a question of a daemon that is gone: void.
                    if g != self.generation {
                        continue;
                    }
                    let id = req.question_id;
                    let outcome = match tokio::time::timeout(LIMIT, c.answer(req)).await {
                        Ok(Ok(r)) => Outcome::Applied { warning: r.into_inner().warning },
                        Ok(Err(e)) if e.code() == tonic::Code::FailedPrecondition => {
                            Outcome::Settled(say(&e))
                        }
                        Ok(Err(e)) => Outcome::Refused(say(&e)),
                        Err(_) => Outcome::NoReply,
                    };
                    Update::Answered { id, outcome }
                }
            };
            if !out(u) {
                return End::Done;
            }
        }
    }
}

/// A client of the API at `socket` and its stream of session `session`'s questions.
async fn connect(
    socket: Option<PathBuf>,
    session: u64,
) -> Result<(HallpassClient<Channel>, Streaming<Event>), Cannot> {
    let attempt = async {
        let mut c = client_at(socket.as_deref()).await.map_err(Cannot::Reach)?;
        let s = c
            .watch(WatchRequest {
                session_id: session,
            })
            .await
            .map_err(Cannot::Watch)?;
        Ok((c, s.into_inner()))
    };
    tokio::time::timeout(LIMIT, attempt)
        .await
        .unwrap_or(Err(Cannot::Late))
}
