//! A `Watch` stream: the pending questions, then every change, each within the bounds of
//! `bounds.rs`, to one client. A client that leaves its stream unread for a while is hung up
//! on rather than buffered for: it watches again, and gets the snapshot.

use std::sync::Arc;
use std::time::Duration;

use hallpass_proto::{event, Event, Question};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::mpsc;
use tonic::Status;

use crate::ask::Questions;
use crate::bounds;
use crate::dlog::say;

/// Events a `Watch` stream holds for its client; past that, the client is waited for
/// [`SLOW_CLIENT`] at most. A question is [`bounds::MAX_QUESTION`] at most.
pub const BUFFER: usize = 16;
/// How long a `Watch` client may leave its stream unread before it is hung up on: a client
/// that does not read must not make the daemon hold events for it.
pub const SLOW_CLIENT: Duration = Duration::from_secs(5);

/// An event as subscribers see it: its texts within bounds (see `bounds.rs`).
fn bounded(e: Event) -> Event {
    let kind = match e.kind {
        Some(event::Kind::Asked(q)) => Some(event::Kind::Asked(bounds::question(&q))),
        Some(event::Kind::Resolved(mut r)) => {
            r.scope = bounds::cut(&r.scope, bounds::MAX_PATH);
            Some(event::Kind::Resolved(r))
        }
        other => other,
    };
    Event { kind }
}

/// Sends `e` to a `Watch` client; `false` when it is gone, or has not read for `slow` (then
/// it is dropped).
async fn put(tx: &mpsc::Sender<Result<Event, Status>>, e: Event, slow: Duration) -> bool {
    match tx.send_timeout(Ok(bounded(e)), slow).await {
        Ok(()) => true,
        Err(mpsc::error::SendTimeoutError::Timeout(_)) => {
            say!(
                "hallpassd: api: a client left its questions unread for {} s: hung up on it (it follows again)",
                slow.as_secs_f32()
            );
            false
        }
        Err(mpsc::error::SendTimeoutError::Closed(_)) => false,
    }
}

fn asked(q: Question) -> Event {
    Event {
        kind: Some(event::Kind::Asked(q)),
    }
}

/// The questions `pending`, then every event of `session` (0: all) from `rx`, to `tx`, until
/// the client goes away or leaves its stream unread for `slow`.
pub async fn forward(
    session: u64,
    pending: Vec<Question>,
    mut rx: broadcast::Receiver<Event>,
    questions: Arc<Questions>,
    tx: mpsc::Sender<Result<Event, Status>>,
    slow: Duration,
) {
    for q in pending {
        if !put(&tx, asked(q), slow).await {
            return;
        }
    }
    loop {
        // A client that went away ends this task even when no event comes for it.
        let got = tokio::select! {
            got = rx.recv() => got,
            _ = tx.closed() => return,
        };
        let e = match got {
            Ok(e) => e,
            // Fell behind: start over from the pending list, which is the truth.
            Err(RecvError::Lagged(_)) => {
                let (again, newer) = questions.subscribe(session);
                rx = newer;
                // Resolutions were lost too: the client starts over from the list.
                let reset = Event {
                    kind: Some(event::Kind::Reset(hallpass_proto::Reset {})),
                };
                if !put(&tx, reset, slow).await {
                    return;
                }
                for q in again {
                    if !put(&tx, asked(q), slow).await {
                        return;
                    }
                }
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let sid = match &e.kind {
            Some(event::Kind::Asked(q)) => q.session_id,
            Some(event::Kind::Resolved(r)) => r.session_id,
            Some(event::Kind::Reset(_)) | None => continue,
        };
        if (session == 0 || sid == session) && !put(&tx, e, slow).await {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use std::time::Instant;

    fn questions() -> Arc<Questions> {
        let dir = std::env::temp_dir().join(format!("hallpass-watch-test-{}", std::process::id()));
        let rules = Arc::new(crate::rules::Store::open(dir.join("rules")));
        Arc::new(Questions::new(rules))
    }

    /// A question whose process chain holds 32 command lines of 128 KiB: 4 MiB.
    fn huge(id: u64) -> Event {
        asked(Question {
            id,
            session_id: 1,
            path: "/home/me/.bashrc".into(),
            chain: vec!["a".repeat(128 * 1024); 32],
            ..Question::default()
        })
    }

    /// Regression (issue 24): a client that did not read its stream had the daemon hold its
    /// events for as long as it lived. Now it is hung up on once it left the stream unread for
    /// `slow`, holding no more than [`BUFFER`] events.
    #[tokio::test]
    async fn a_client_that_does_not_read_is_hung_up_on() {
        let (events, rx) = broadcast::channel(1024);
        let (tx, mut out) = mpsc::channel(BUFFER);
        let slow = Duration::from_millis(200);
        let task = tokio::spawn(forward(0, Vec::new(), rx, questions(), tx, slow));
        for id in 0..100 {
            events.send(huge(id)).unwrap();
        }
        let start = Instant::now();
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("still waiting for a client that never reads")
            .unwrap();
        assert!(start.elapsed() >= slow);
        // What it held: a stream's buffer of events, each within bounds; then the end.
        let mut held = 0;
        while let Some(e) = out.recv().await {
            let e = e.unwrap();
            assert!(
                e.encoded_len() <= bounds::MAX_QUESTION,
                "{}",
                e.encoded_len()
            );
            held += 1;
        }
        assert_eq!(held, BUFFER);
    }

    /// A client that reads, however many events come, is served until it goes away.
    #[tokio::test]
    async fn a_client_that_reads_is_served() {
        let (events, rx) = broadcast::channel(1024);
        let (tx, mut out) = mpsc::channel(BUFFER);
        let slow = Duration::from_millis(200);
        let task = tokio::spawn(forward(0, Vec::new(), rx, questions(), tx, slow));
        let reader = tokio::spawn(async move {
            let mut n = 0;
            while out.recv().await.is_some() {
                n += 1;
                if n % 10 == 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            n
        });
        for id in 0..100 {
            events.send(huge(id)).unwrap();
        }
        drop(events);
        task.await.unwrap();
        assert_eq!(reader.await.unwrap(), 100);
    }
}
