//! `--prompt=desktop`: a desktop notification per question, with a button per answer. A
//! question answered elsewhere (another notification, `hallpass answer`) closes its
//! notification. Without a notification server, hallpass says so once and the questions wait
//! for `hallpass answer`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::{event, Answer, AnswerRequest, Question, WatchRequest};
use notify_rust::{Notification, NotificationResponse, Timeout};
use tokio::sync::{oneshot, watch};
use tonic::transport::Channel;

use crate::api::{client, runtime, say};
use crate::bar;
use crate::session::Registered;

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

pub fn start(session: watch::Receiver<Option<Registered>>) -> Desktop {
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

/// Follows the session, and follows it again each time the launcher registers it with a new
/// daemon, until stopped.
async fn run(mut session: watch::Receiver<Option<Registered>>, mut stopped: watch::Receiver<bool>) {
    let warned = Arc::new(AtomicBool::new(false));
    // The registration followed last: a new one is followed afresh, even under the same id.
    let mut followed: Option<u64> = None;
    loop {
        let current = *session.borrow_and_update();
        if let Some(r) = current.filter(|r| Some(r.count) != followed) {
            followed = Some(r.count);
            match follow(r.id, &mut session, &mut stopped, &warned).await {
                Some(true) => return,
                Some(false) => continue,
                // Could not start following: again shortly.
                None => {
                    followed = None;
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(500)) => continue,
                        _ = stopped.changed() => return,
                    }
                }
            }
        }
        tokio::select! {
            r = session.changed() => if r.is_err() { return },
            _ = stopped.changed() => return,
        }
    }
}

/// Shows session `id`'s questions until its daemon goes away or the session is registered
/// again (`Some(false)`), or the notifier is stopped (`Some(true)`); closes what it showed
/// either way. `None`: could not start following.
async fn follow(
    id: u64,
    session: &mut watch::Receiver<Option<Registered>>,
    stopped: &mut watch::Receiver<bool>,
    warned: &Arc<AtomicBool>,
) -> Option<bool> {
    let c = client().await.ok()?;
    let mut stream = c
        .clone()
        .watch(WatchRequest { session_id: id })
        .await
        .ok()?
        .into_inner();
    let mut open: HashMap<u64, oneshot::Sender<()>> = HashMap::new();
    let mut tasks = tokio::task::JoinSet::new();
    let stop = loop {
        tokio::select! {
            m = stream.message() => match m {
                Ok(Some(ev)) => match ev.kind {
                    Some(event::Kind::Asked(q)) if !open.contains_key(&q.id) => {
                        let (tx, rx) = oneshot::channel();
                        open.insert(q.id, tx);
                        tasks.spawn(notify(q, rx, c.clone(), warned.clone()));
                    }
                    Some(event::Kind::Resolved(r)) => {
                        if let Some(tx) = open.remove(&r.question_id) {
                            let _ = tx.send(());
                        }
                    }
                    // Events were lost: take everything down; the pending list follows.
                    Some(event::Kind::Reset(_)) => {
                        for (_, tx) in open.drain() {
                            let _ = tx.send(());
                        }
                    }
                    _ => {}
                },
                _ => break false,
            },
            _ = session.changed() => break false,
            _ = stopped.changed() => break true,
        }
    };
    // Take down what is still shown: its session is over, or its daemon (a new one asks
    // again).
    for (_, tx) in open.drain() {
        let _ = tx.send(());
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    Some(stop)
}

/// Shows one question until it is answered here (then sends the answer) or elsewhere (then
/// closes it).
async fn notify(
    q: Question,
    closed: oneshot::Receiver<()>,
    mut c: HallpassClient<Channel>,
    warned: Arc<AtomicBool>,
) {
    // Text from the process, shown as text: notification servers read markup in bodies.
    let text = |s: &str| {
        bar::clean(s)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let who = if q.name.is_empty() {
        format!("pid {}", q.pid)
    } else {
        format!("{} (pid {})", text(&q.name), q.pid)
    };
    let what: Vec<String> = std::iter::once(&q.path)
        .chain(&q.also)
        .map(|p| text(p))
        .collect();
    let chain: Vec<String> = q.chain.iter().map(|c| text(c)).collect();
    let (verb, what) = crate::answer::verb_and_what(&q, what.join(" and "));
    let mut n = Notification::new();
    n.appname("hallpass")
        .summary(&format!("hallpass: {who} wants to {verb}"))
        .body(&format!(
            "{}\nby: {}\n[t] [a] [n] apply to: {}",
            what,
            chain.join(" ← "),
            text(&q.scope)
        ))
        .action("once", "Allow once")
        .action(
            "timed",
            &format!("Allow for {}", bar::duration(q.timed_secs)),
        )
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
    let answer = match action.as_str() {
        "once" => Answer::Once,
        "timed" => Answer::Timed,
        "always" => Answer::Always,
        "deny" => Answer::Deny,
        "never" => Answer::Never,
        _ => return,
    };
    let r = c
        .answer(AnswerRequest {
            question_id: q.id,
            answer: answer as i32,
            scope: String::new(),
        })
        .await;
    match r {
        Ok(r) if !r.get_ref().warning.is_empty() => eprintln!("hallpass: {}", r.get_ref().warning),
        Ok(_) => {}
        Err(e) if e.code() == tonic::Code::FailedPrecondition => {}
        Err(e) => eprintln!("hallpass: the answer was refused: {}", say(&e)),
    }
}
