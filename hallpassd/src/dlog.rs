//! The daemon's own messages, on its stderr: `hallpassd.log` in the runtime directory when a
//! launcher started it, the journal under systemd. Every message goes through [`say!`], so
//! that what a session does cannot turn the log against the daemon:
//!
//! - a message never blocks the thread that says it, nor panics: it is queued for a writer
//!   thread, and dropped (counted, said later) when the queue is full; a write that fails
//!   (a full file system) is counted and said once writing works again;
//! - repeats are counted, not repeated: past [`BURST`] lines of one message (one format
//!   string, whatever its arguments) in [`WINDOW`], the rest are held, and the window ends
//!   with the last of them and how many there were;
//! - the file is bounded: `hallpassd.log` is renamed `hallpassd.log.1` once it holds
//!   [`MAX_FILE`] bytes (so the two hold twice that at most); another regular file on stderr
//!   (the daemon started by hand) stops growing there, with a line saying so.
//!
//! A leaf: it knows nothing of the daemon.

mod repeats;
mod sink;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use repeats::Repeats;
use sink::Sink;

/// Lines of one message written in a window before the rest are held.
pub const BURST: u32 = 10;
/// How long a window of repeats lasts.
pub const WINDOW: Duration = Duration::from_secs(10);
/// `hallpassd.log` is rotated once it holds this many bytes.
pub const MAX_FILE: u64 = 1 << 20;
/// Messages queued for the writer; more are dropped (and counted).
const QUEUE: usize = 4096;
/// A line is cut to this many bytes.
const MAX_LINE: usize = 4096;

/// What the writer thread is told.
enum Msg {
    Line(&'static str, String),
    /// The file to rotate: stderr is this file.
    RotateAt(PathBuf),
    /// Write everything held, then say so.
    Flush(SyncSender<()>),
}

/// Messages dropped because the queue was full.
static LOST: AtomicU64 = AtomicU64::new(0);

/// The writer thread's queue, started on first use.
fn queue() -> Option<&'static SyncSender<Msg>> {
    static TX: OnceLock<Option<SyncSender<Msg>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("dlog".into())
            .spawn(move || writer(rx))
            .ok()
            .map(|_| tx)
    })
    .as_ref()
}

/// Starts the writer thread now, from the daemon's main thread: a thread started later by
/// one acting with a process's credentials (`perform/creds.rs`) would inherit them.
pub fn start() {
    let _ = queue();
}

/// Says `text`, a line of the message `key` (its format string). Never blocks, never panics.
pub fn line(key: &'static str, text: String) {
    let sent = queue().map(|q| q.try_send(Msg::Line(key, text)));
    if !matches!(sent, Some(Ok(()))) {
        LOST.fetch_add(1, Ordering::Relaxed);
    }
}

/// `say!("hallpassd: session {id}: {e}")`: a line of the daemon's log (see the module).
macro_rules! say {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::dlog::line($fmt, ::std::format!($fmt $(, $arg)*))
    };
}
pub(crate) use say;

/// Stderr is `path` (`hallpassd.log` in the runtime directory): rotate it when it is full.
pub fn rotate_at(path: PathBuf) {
    if let Some(q) = queue() {
        let _ = q.try_send(Msg::RotateAt(path));
    }
}

/// Writes what is queued and held, waiting `limit` at most: before the process exits.
pub fn flush(limit: Duration) {
    let Some(q) = queue() else { return };
    let (tx, rx) = mpsc::sync_channel(1);
    let end = Instant::now() + limit;
    let mut msg = Msg::Flush(tx);
    loop {
        match q.try_send(msg) {
            Ok(()) => break,
            Err(TrySendError::Full(m)) if Instant::now() < end => {
                msg = m;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return,
        }
    }
    let _ = rx.recv_timeout(end.saturating_duration_since(Instant::now()));
}

/// The writer thread: takes the lines in order, holds repeats, writes the rest.
fn writer(rx: Receiver<Msg>) {
    let mut repeats = Repeats::new(BURST, WINDOW);
    let mut sink = Sink::stderr(MAX_FILE);
    loop {
        let msg = rx.recv_timeout(Duration::from_millis(500));
        let now = Instant::now();
        match msg {
            Ok(Msg::Line(key, text)) => {
                if let Some(l) = repeats.offer(key, text, now) {
                    sink.write(&crate::bounds::cut(&l, MAX_LINE));
                }
            }
            Ok(Msg::RotateAt(path)) => sink.rotate_at(path),
            Ok(Msg::Flush(done)) => {
                for l in repeats.all() {
                    sink.write(&crate::bounds::cut(&l, MAX_LINE));
                }
                lost(&mut sink);
                let _ = done.send(());
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        for l in repeats.due(now) {
            sink.write(&crate::bounds::cut(&l, MAX_LINE));
        }
        lost(&mut sink);
    }
}

/// Says how many lines the full queue dropped, if any.
fn lost(sink: &mut Sink) {
    let n = LOST.swap(0, Ordering::Relaxed);
    if n > 0 {
        sink.write(&format!(
            "hallpassd: {n} lines of this log were dropped: they came faster than it is written"
        ));
    }
}
