//! `--prompt=desktop`: a desktop notification per question, with a button per answer. A
//! question answered elsewhere (another notification, `hallpass answer`) closes its
//! notification. Without a notification server, hallpass says so once and the questions wait
//! for `hallpass answer`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hallpass_proto::{Answer, AnswerRequest, Question};
use notify_rust::{Notification, NotificationResponse, Timeout};
use tokio::sync::{mpsc, oneshot, watch};

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
    let mut n = Notification::new();
    n.appname("hallpass")
        .summary(&format!("hallpass: {who} wants to {}", words.verb))
        .body(&format!("{what}\nby: {by}\n[t] [a] [n] apply to: {scope}"))
        .action("once", "Allow once")
        .action("timed", &format!("Allow for {}", duration(q.timed_secs)))
        .action("always", "Always allow")
        .action("deny", "Deny")
        .action("never", "Never allow")
        .timeout(Timeout::Never);
    let handle = match n.show_async().await {
        Ok(h) => h,
        Err(e) => {
            if !warned.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "hallpass: cannot show a desktop notification ({e}); the question waits: answer it with `hallpass answer` in a terminal"
                );
            }
            return;
        }
    };
    let (atx, arx) = oneshot::channel::<String>();
    let elsewhere = {
        let wait = handle.wait_for_action_async(move |r: &NotificationResponse| {
            if let NotificationResponse::Action(a) = r {
                let _ = atx.send(a.clone());
            }
        });
        tokio::select! {
            _ = wait => false,
            _ = closed => true,
        }
    };
    // Taken down either way: answered elsewhere, or here (some servers keep a notification
    // up after an action).
    handle.close_async().await;
    if elsewhere {
        return;
    }
    // Dismissed without a button: the question stays open for other ways to answer.
    let Ok(action) = arx.await else { return };
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
