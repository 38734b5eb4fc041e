//! `--prompt=desktop`: a desktop notification per question, with a button per answer. A
//! question answered elsewhere (another notification, `hallpass answer`) closes its
//! notification. Without a notification server, hallpass says so once and the questions wait
//! for `hallpass answer`.
//!
//! The answer is a person's only if the server is not the command: before each notification
//! the daemon is asked whether the process that owns the server's name on the bus is free of
//! every session (`CheckProcess`, the test it applies to its own peers); a supervised one
//! (lite mode, or strict mode with the bus allowed, may take the name when no server runs)
//! or one that cannot be vetted is shown nothing, and hallpass says so once. Only that
//! server's signals about that notification count (`bus.rs`).

mod bus;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hallpass_proto::{Answer, AnswerRequest, CheckProcessRequest, ProcessVerdict, Question};
use tokio::sync::{mpsc, oneshot, watch};

use bus::{Bus, Note, Response, Server};

use crate::api::runtime;
use crate::questions::follow::{self, Answers, Outcome, Source, Update};
use crate::questions::text::{clean, duration, Words};
use crate::session::Session;

/// The notifier of one session, running on a thread of its own.
pub struct Desktop {
    stop: watch::Sender<bool>,
    thread: std::thread::JoinHandle<()>,
}

impl Desktop {
    /// Closes the notifications still open and stops.
    pub fn finish(self) {
        let _ = self.stop.send(true);
        let _ = self.thread.join();
    }
}

pub fn start(session: Session) -> Desktop {
    let (stop, stopped) = watch::channel(false);
    let thread = std::thread::spawn(move || {
        let Ok(rt) = runtime() else {
            eprintln!("hallpass: cannot show desktop notifications: no async runtime; answer with `hallpass answer`");
            return;
        };
        rt.block_on(run(session, stopped));
    });
    Desktop { stop, thread }
}

/// Shows the session's questions (see `questions::follow`) until stopped, then closes what
/// it still shows.
async fn run(session: Session, mut stopped: watch::Receiver<bool>) {
    let (follower, answers) = follow::follower(Source::Session(session));
    let (tx, mut updates) = mpsc::unbounded_channel();
    let following = tokio::spawn(async move { follower.run(&mut |u| tx.send(u).is_ok()).await });
    let warned = Arc::new(AtomicBool::new(false));
    // The notifications shown, by question: sending on one closes it.
    let mut open: HashMap<u64, oneshot::Sender<()>> = HashMap::new();
    let mut tasks = tokio::task::JoinSet::new();
    let mut generation = 0;
    loop {
        let u = tokio::select! {
            u = updates.recv() => u,
            _ = stopped.changed() => None,
        };
        let Some(u) = u else { break };
        match u {
            Update::Asked(q) if !open.contains_key(&q.id) => {
                let (tx, rx) = oneshot::channel();
                open.insert(q.id, tx);
                let answer = Answering {
                    answers: answers.clone(),
                    generation,
                };
                tasks.spawn(notify(*q, rx, answer, warned.clone()));
            }
            Update::Resolved(id) => {
                if let Some(tx) = open.remove(&id) {
                    let _ = tx.send(());
                }
            }
            // Take everything down: the questions still pending come again.
            Update::Void(_) => {
                generation += 1;
                for (_, tx) in open.drain() {
                    let _ = tx.send(());
                }
            }
            Update::Answered { outcome, .. } => match outcome {
                Outcome::Applied { warning } if !warning.is_empty() => {
                    eprintln!("hallpass: {warning}")
                }
                Outcome::Applied { .. } | Outcome::Settled(_) => {}
                Outcome::Refused(why) => eprintln!("hallpass: the answer was refused: {why}"),
                Outcome::NoReply => {
                    eprintln!("hallpass: the answer was refused: the daemon did not answer")
                }
            },
            Update::Asked(_) | Update::Back | Update::Trouble(_) => {}
        }
    }
    // Take down what is still shown: its session is over.
    for (_, tx) in open.drain() {
        let _ = tx.send(());
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    following.abort();
}

/// Where a notification sends its answer, and for which generation of questions.
struct Answering {
    answers: Answers,
    generation: u64,
}

/// Says `line` on stderr, if nothing was said yet.
fn warn_once(warned: &AtomicBool, line: &str) {
    if !warned.swap(true, Ordering::Relaxed) {
        eprintln!(
            "hallpass: {line}; the question waits: answer it with `hallpass answer` in a terminal"
        );
    }
}

/// Whether the daemon finds `server`'s process free of every session; else why not, in
/// words.
async fn vet(server: &Server) -> Result<(), String> {
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", server.pid)).unwrap_or_default();
    let who = format!(
        "the notification server on the session bus ({}, pid {})",
        clean(comm.trim_end()),
        server.pid
    );
    let asked = async {
        let mut c = crate::api::client().await.map_err(|e| e.to_string())?;
        c.check_process(CheckProcessRequest {
            pid: i32::try_from(server.pid).unwrap_or(0),
        })
        .await
        .map(|r| r.into_inner())
        .map_err(|e| crate::api::say(&e))
    };
    match asked.await {
        Ok(r) if r.verdict() == ProcessVerdict::Free => started_before(server, &who),
        Ok(r) if r.verdict() == ProcessVerdict::Supervised => Err(format!(
            "{who} runs inside a hallpass session: it is shown no question"
        )),
        Ok(r) => Err(format!(
            "cannot tell whether {who} runs inside a hallpass session ({}): it is shown no question",
            r.why
        )),
        Err(e) => Err(format!(
            "cannot ask the daemon whether {who} runs inside a hallpass session ({e}): it is shown no question"
        )),
    }
}

/// Whether `server` was there before this session began: one started since may have been
/// started for the command (by the bus's activation, with an environment the command set).
fn started_before(server: &Server, who: &str) -> Result<(), String> {
    match (started(server.pid), started(std::process::id())) {
        (Some(theirs), Some(ours)) if theirs <= ours => Ok(()),
        (Some(_), Some(_)) => Err(format!(
            "{who} started after this session: it is shown no question (start it before hallpass)"
        )),
        _ => Err(format!(
            "cannot tell when {who} started: it is shown no question"
        )),
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`, field 22).
fn started(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the name in parentheses, which may hold spaces and parentheses itself.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// Shows one question until it is answered here (then sends the answer) or elsewhere (then
/// closes it).
async fn notify(
    q: Question,
    closed: oneshot::Receiver<()>,
    answer: Answering,
    warned: Arc<AtomicBool>,
) {
    // Text from the process, shown as text: through `shown` (controls, line breaks,
    // invisible and bidirectional characters escaped), then as markup text, since
    // notification servers with `body-markup` read `<b>`, `<a href>` and `&amp;` in bodies
    // (and some in summaries).
    let text = |s: &str| {
        clean(s)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let words = Words::of(&q, Path::new(&q.scope), &text);
    let Words {
        who,
        what,
        by,
        scope,
        ..
    } = &words;
    let summary = format!("hallpass: {who} wants to {}", words.verb);
    let body = format!("{what}\nby: {by}\n[t] [a] [n] apply to: {scope}");
    let actions = [
        ("once", "Allow once".to_string()),
        ("timed", format!("Allow for {}", duration(q.timed_secs))),
        ("always", "Always allow".to_string()),
        ("deny", "Deny".to_string()),
        ("never", "Never allow".to_string()),
    ];
    let note = Note {
        summary: &summary,
        body: &body,
        actions: &actions,
    };
    let shown = async {
        let bus = Bus::connect().await.map_err(|e| e.to_string())?;
        let server = bus.server().await.map_err(|e| e.to_string())?;
        vet(&server).await.map_err(Refusal::Vetted)?;
        // Followed before it is shown: a quick click must not be missed.
        let signals = bus.follow(&server).await.map_err(|e| e.to_string())?;
        let id = bus
            .notify(&server, &note)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, Refusal>((bus, server, signals, id))
    };
    let (bus, server, mut signals, id) = match shown.await {
        Ok(s) => s,
        Err(Refusal::Vetted(why)) => return warn_once(&warned, &why),
        Err(Refusal::Bus(e)) => {
            return warn_once(
                &warned,
                &format!("cannot show a desktop notification ({e})"),
            )
        }
    };
    let response = tokio::select! {
        r = signals.response(id) => Some(r),
        _ = closed => None,
    };
    // Taken down either way: answered elsewhere, or here (some servers keep a notification
    // up after an action).
    bus.close(&server, id).await;
    // Answered elsewhere, or dismissed without a button: the question stays open for other
    // ways to answer.
    let Some(Response::Action(action)) = response else {
        return;
    };
    let word = match action.as_str() {
        "once" => Answer::Once,
        "timed" => Answer::Timed,
        "always" => Answer::Always,
        "deny" => Answer::Deny,
        "never" => Answer::Never,
        _ => return,
    };
    answer.answers.send(
        answer.generation,
        AnswerRequest {
            question_id: q.id,
            answer: word as i32,
            scope: String::new(),
        },
    );
}

/// Why a question is not shown.
enum Refusal {
    /// The server is not one to trust with it.
    Vetted(String),
    /// The bus or the server failed.
    Bus(String),
}

impl From<String> for Refusal {
    fn from(e: String) -> Refusal {
        Refusal::Bus(e)
    }
}
