//! The launcher's connection to the daemon, for the whole session: registering it
//! (`OpenSession`, then `Attach` with the listener), lending `/proc/TID/mem` descriptors on
//! request, and, if the daemon dies, registering the running session again with a new one.
//!
//! The launcher keeps the seccomp listener and the session journal for that. While no daemon
//! listens, the command's writes wait in the kernel; what the dead daemon held is in the
//! journal, and the new one decides it again. If no daemon can be reached for a minute, the
//! launcher lets go of the listener: the kernel then fails every write (ENOSYS), nothing
//! waits forever.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hallpass_proto::{
    control, control_reply, control_request, Attach, ControlReply, ControlRequest, LentFd,
    OpenSession, RefusalReason, Refused, SessionOpened,
};
use tokio::sync::watch;

use crate::error::{Failure, LinkError};
use crate::session::{Registered, Session};

/// How long the launcher tries to reach a new daemon before it gives the session up.
const RECONNECT_FOR: Duration = Duration::from_secs(60);
/// A registration that ends sooner than this failed: the next one waits (see [`next_pause`]).
const SHORT_LIVED: Duration = Duration::from_secs(2);
/// The first and the longest waits before registering again after registrations that failed.
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Everything needed to register the session (again).
pub struct Registration {
    /// The session as first opened; sent again with `resume_tmpdir` set.
    pub open: OpenSession,
    pub listener: OwnedFd,
    pub journal: OwnedFd,
    pub log: Option<File>,
    /// The command's first process.
    pub pid: i32,
    /// Strict mode: the paths the command's Landlock domain may write; empty when it runs in
    /// no such domain.
    pub landlock: Vec<String>,
}

/// Makes the session journal: a memfd of the size the daemon expects, sealed at that size
/// (a file shrunk under its mapping would fault the daemon), closed on exec so the command
/// never holds it.
pub fn journal() -> io::Result<OwnedFd> {
    use nix::fcntl::{fcntl, FcntlArg, SealFlag};
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let fd = memfd_create(
        c"hallpass-journal",
        MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
    )?;
    nix::unistd::ftruncate(&fd, hallpass_proto::JOURNAL_SIZE as i64)?;
    fcntl(
        &fd,
        FcntlArg::F_ADD_SEALS(
            SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL,
        ),
    )?;
    Ok(fd)
}

/// How long one exchange with a daemon may take before it counts as gone (a stopped or
/// wedged daemon must not hold the session forever).
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

fn refused(r: Refused) -> LinkError {
    LinkError::Refused {
        reason: r.reason(),
        message: r.message,
    }
}

fn lost(e: io::Error) -> LinkError {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        return LinkError::Timeout;
    }
    LinkError::Lost(e)
}

/// Sets both timeouts of `sock`: `None` waits for ever.
fn timeouts(sock: &UnixStream, t: Option<Duration>) -> Result<(), LinkError> {
    sock.set_read_timeout(t)
        .and_then(|()| sock.set_write_timeout(t))
        .map_err(LinkError::Timeouts)
}

/// Reaches the daemon (starting one if none runs) and opens the session. A daemon that dies
/// in the instant it is reached (killed, or restarting after an upgrade) is replaced by
/// another, as one that dies mid-session is: three tries.
pub fn open_session(open: &OpenSession) -> Result<(UnixStream, SessionOpened), Failure> {
    let mut tries = 0;
    loop {
        let sock = crate::daemon::connect()?;
        crate::procs::set_daemon(peer_pid(&sock));
        // A daemon that accepts and then never answers (stopped, wedged) gets a clear error,
        // not a launcher that hangs.
        timeouts(&sock, Some(Duration::from_secs(30)))?;
        match self::open(&sock, open) {
            Ok(opened) => return Ok((sock, opened)),
            Err(e) if e.gone() && tries < 2 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100 * tries));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Lets the session's exchanges with the daemon wait as long as they need, once registered.
pub fn wait_freely(sock: &UnixStream) -> Result<(), Failure> {
    Ok(timeouts(sock, None)?)
}

/// Sends `OpenSession`; returns the daemon's answer.
pub fn open(sock: &UnixStream, open: &OpenSession) -> Result<SessionOpened, LinkError> {
    // The daemon may refuse us before reading anything (a supervised peer): then the send
    // fails, and its reason is waiting to be read.
    let sent = control::send(
        sock,
        &ControlRequest {
            kind: Some(control_request::Kind::Open(open.clone())),
        },
        &[],
    );
    let reply = control::recv::<ControlReply>(sock);
    if let (Err(e), Err(_)) = (&sent, &reply) {
        return Err(lost(io::Error::new(e.kind(), e.to_string())));
    }
    match reply.map_err(lost)?.0.kind {
        Some(control_reply::Kind::Opened(o)) => Ok(o),
        Some(control_reply::Kind::Refused(r)) => Err(refused(r)),
        _ => Err(LinkError::Unexpected),
    }
}

/// Sends `Attach` with the listener, the journal and the log; waits for `Attached`.
pub fn attach(
    sock: &UnixStream,
    session_id: u64,
    reg: &Registration,
    resume: bool,
) -> Result<(), LinkError> {
    let a = Attach {
        session_id,
        pid: reg.pid,
        has_log: reg.log.is_some(),
        resume,
        has_journal: true,
        landlock_paths: reg.landlock.clone(),
    };
    let mut fds = vec![reg.listener.as_fd(), reg.journal.as_fd()];
    if let Some(l) = &reg.log {
        fds.push(l.as_fd());
    }
    control::send(
        sock,
        &ControlRequest {
            kind: Some(control_request::Kind::Attach(a)),
        },
        &fds,
    )
    .map_err(lost)?;
    match control::recv::<ControlReply>(sock).map_err(lost)?.0.kind {
        Some(control_reply::Kind::Attached(_)) => Ok(()),
        Some(control_reply::Kind::Refused(r)) => Err(refused(r)),
        _ => Err(LinkError::Unexpected),
    }
}

/// The session's link to whichever daemon supervises it, kept by a thread of its own.
pub struct Link {
    current: Arc<Mutex<Option<UnixStream>>>,
    done: Arc<AtomicBool>,
    session: watch::Receiver<Option<Registered>>,
}

impl Link {
    /// The session's registration now; `None` while no daemon supervises it.
    pub fn session(&self) -> Session {
        self.session.clone()
    }

    /// Ends the session: the daemon sees the connection close.
    pub fn close(self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(s) = self.current.lock().unwrap().take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Starts serving the daemon on `sock` (attached as `session_id`).
pub fn start(sock: UnixStream, reg: Registration, session_id: u64) -> Link {
    let (tx, rx) = watch::channel(Some(Registered {
        id: session_id,
        count: 0,
    }));
    let current = Arc::new(Mutex::new(sock.try_clone().ok()));
    let done = Arc::new(AtomicBool::new(false));
    let (c, d) = (current.clone(), done.clone());
    std::thread::spawn(move || run(sock, reg, c, d, tx));
    Link {
        current,
        done,
        session: rx,
    }
}

fn run(
    mut sock: UnixStream,
    reg: Registration,
    current: Arc<Mutex<Option<UnixStream>>>,
    done: Arc<AtomicBool>,
    session: watch::Sender<Option<Registered>>,
) {
    let mut count = 0;
    let mut since = Instant::now();
    let mut pause = Duration::ZERO;
    loop {
        lend(&sock);
        if done.load(Ordering::SeqCst) {
            return;
        }
        let _ = session.send(None);
        // If the daemon is in fact alive (it sent something we did not understand), it must
        // let go of the session before another registration takes it over.
        let _ = sock.shutdown(std::net::Shutdown::Both);
        crate::error::say(
            "hallpass: lost the daemon; the command's writes wait while a new one starts",
        );
        pause = next_pause(pause, since.elapsed());
        wait(pause, &done);
        match reconnect(&reg, &done) {
            Some((s, id)) => {
                since = Instant::now();
                *current.lock().unwrap() = s.try_clone().ok();
                // Closed meanwhile: this one must see the end too.
                if done.load(Ordering::SeqCst) {
                    let _ = s.shutdown(std::net::Shutdown::Both);
                    return;
                }
                crate::error::say(&format!(
                    "hallpass: a new daemon supervises the session (now session {id})"
                ));
                count += 1;
                let _ = session.send(Some(Registered { id, count }));
                sock = s;
            }
            None => {
                crate::error::say(&format!(
                    "hallpass: no daemon for {}s: giving the session up; the command's writes now fail (ENOSYS)",
                    RECONNECT_FOR.as_secs()
                ));
                // Dropping `reg` closes our listener: the kernel fails what waits.
                return;
            }
        }
    }
}

/// How long to wait before registering again, after `prev`, once a registration ended
/// after `lasted`: a daemon that takes the session and drops it at once (one that fails as
/// it starts it, say) is not asked again hundreds of times a second.
fn next_pause(prev: Duration, lasted: Duration) -> Duration {
    if lasted >= SHORT_LIVED {
        return Duration::ZERO;
    }
    (prev * 2).clamp(FIRST_PAUSE, MAX_PAUSE)
}

/// Sleeps `d`, or less if the session is closed meanwhile.
fn wait(d: Duration, done: &AtomicBool) {
    let end = Instant::now() + d;
    while !done.load(Ordering::SeqCst) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
}

/// Registers the running session with a new daemon, starting one if needed.
fn reconnect(reg: &Registration, done: &AtomicBool) -> Option<(UnixStream, u64)> {
    let deadline = Instant::now() + RECONNECT_FOR;
    let mut pause = Duration::from_millis(50);
    let mut open = reg.open.clone();
    while Instant::now() < deadline && !done.load(Ordering::SeqCst) {
        let attempt = (|| -> Result<(UnixStream, u64), Failure> {
            let sock = crate::daemon::connect()?;
            // At once: a daemon we just started is our descendant now (we are a subreaper),
            // and must never be ended with the session's processes.
            crate::procs::set_daemon(peer_pid(&sock));
            let limit = Some(
                EXCHANGE_TIMEOUT
                    .min(deadline.saturating_duration_since(Instant::now()))
                    .max(Duration::from_millis(100)),
            );
            timeouts(&sock, limit)?;
            let opened = self::open(&sock, &open)?;
            attach(&sock, opened.session_id, reg, true)?;
            timeouts(&sock, None)?;
            Ok((sock, opened.session_id))
        })();
        match attempt {
            Ok(r) => return Some(r),
            Err(Failure::Link(LinkError::Refused {
                reason: RefusalReason::ResumeTmpdir,
                ..
            })) => {
                // Gone (cleaned up?): a fresh one rather than no supervision.
                open.resume_tmpdir.clear();
            }
            Err(_) => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_secs(1));
    }
    None
}

/// The pid of the process at the other end of `sock`.
pub fn peer_pid(sock: &UnixStream) -> Option<i32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    getsockopt(sock, PeerCredentials).ok().map(|c| c.pid())
}

/// Serves the daemon's requests for `/proc/TID/mem` descriptors, and for copies of a
/// supervised thread's descriptors, until it hangs up.
fn lend(sock: &UnixStream) {
    loop {
        let req = match control::recv::<ControlReply>(sock) {
            Ok((
                ControlReply {
                    kind: Some(control_reply::Kind::Lend(l)),
                },
                _,
            )) => l,
            Ok(_) => continue,
            Err(_) => return,
        };
        let tid = req.tid;
        let got = if req.take_fd {
            crate::sys::pidfd::take(tid, req.fd)
        } else {
            File::open(format!("/proc/{tid}/mem")).map(OwnedFd::from)
        };
        let r = match got {
            Ok(f) => {
                let sent = control::send(sock, &lent(tid, 0, false), &[f.as_fd()]);
                // Closed before the daemon may answer for what it does with the copy (see
                // LentFd.closed): a lingering copy keeps a socket bound after the process
                // closed it, a file open for writing from being executed.
                drop(f);
                sent.and_then(|()| match req.take_fd {
                    true => control::send(sock, &lent(tid, 0, true), &[]),
                    false => Ok(()),
                })
            }
            Err(e) => control::send(
                sock,
                &lent(tid, e.raw_os_error().unwrap_or(libc::EIO), false),
                &[],
            ),
        };
        if r.is_err() {
            return;
        }
    }
}

fn lent(tid: i32, error: i32, closed: bool) -> ControlRequest {
    ControlRequest {
        kind: Some(control_request::Kind::Lent(LentFd { tid, error, closed })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 24): a daemon that dropped each session it registered (its log on a
    /// full file system panicked) had the launcher register again hundreds of times a second.
    #[test]
    fn registrations_that_fail_wait_longer_each_time() {
        let short = Duration::from_millis(10);
        let mut p = Duration::ZERO;
        let mut seen = Vec::new();
        for _ in 0..8 {
            p = next_pause(p, short);
            seen.push(p.as_millis());
        }
        assert_eq!(seen, [50, 100, 200, 400, 800, 1600, 2000, 2000]);
        // One that lasted starts over: a daemon that died after a while is replaced at once.
        assert_eq!(next_pause(p, SHORT_LIVED), Duration::ZERO);
    }
}
