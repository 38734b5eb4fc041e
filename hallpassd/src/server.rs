//! The daemon's sockets: the control socket where launchers register sessions, and the gRPC
//! API socket. Owns the registry of sessions.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hallpass_proto::{
    control, control_reply, control_request, Attached, ControlReply, ControlRequest, RefusalReason,
    Refused, SessionOpened,
};

use crate::ask::Questions;
use crate::dlog::say;
use crate::filter::{self, Coverage};
use crate::session::{self, Info, Protected};
use crate::syscalls::Arch;

/// Ended sessions kept for `hallpass status`.
const KEEP_ENDED: usize = 20;

/// What the daemon knows: its sessions, live and recently ended.
pub struct State {
    sessions: Mutex<Vec<Arc<Info>>>,
    next_id: AtomicU64,
    protected: Protected,
    /// When the last session ended (or the daemon started).
    idle_since: Mutex<Instant>,
    /// Pending questions, and the lasting rules.
    pub questions: Arc<Questions>,
}

impl State {
    pub fn new(runtime_dir: &Path, questions: Arc<Questions>) -> State {
        let mut daemon = vec![runtime_dir.to_path_buf()];
        // Where this daemon reads its rules, whatever HOME a launcher has.
        if let Some(dir) = questions.rules().path().parent() {
            daemon.push(dir.to_path_buf());
        }
        if let Ok(exe) = std::env::current_exe() {
            daemon.push(exe);
        }
        State {
            sessions: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            protected: Protected { daemon },
            idle_since: Mutex::new(Instant::now()),
            questions,
        }
    }

    /// Every session shown by status, oldest first.
    pub fn sessions(&self) -> Vec<Arc<Info>> {
        self.sessions.lock().unwrap().clone()
    }

    /// The launcher pids of the live sessions.
    pub fn launchers(&self) -> Vec<i32> {
        self.sessions
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.live.load(Ordering::Relaxed))
            .map(|s| s.launcher_pid)
            .collect()
    }

    /// How long the daemon has had no live session, if it has none.
    pub fn idle_for(&self) -> Option<Duration> {
        let live = self
            .sessions
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.live.load(Ordering::Relaxed));
        (!live).then(|| self.idle_since.lock().unwrap().elapsed())
    }

    fn add(&self, info: Arc<Info>) {
        let mut s = self.sessions.lock().unwrap();
        s.push(info);
        let ended = s.iter().filter(|i| !i.live.load(Ordering::Relaxed)).count();
        if ended > KEEP_ENDED {
            let mut drop_n = ended - KEEP_ENDED;
            s.retain(|i| {
                if drop_n > 0 && !i.live.load(Ordering::Relaxed) {
                    drop_n -= 1;
                    false
                } else {
                    true
                }
            });
        }
    }

    pub fn touch(&self) {
        *self.idle_since.lock().unwrap() = Instant::now();
    }
}

fn refuse(sock: &UnixStream, reason: RefusalReason, message: String) {
    say!("hallpassd: refused a session: {message}");
    let r = ControlReply {
        kind: Some(control_reply::Kind::Refused(Refused {
            message,
            reason: reason as i32,
        })),
    };
    let _ = control::send(sock, &r, &[]);
}

/// Serves one launcher connection, from `OpenSession` to the session's end. Blocking; runs on
/// its own thread.
pub fn serve_launcher(state: Arc<State>, sock: UnixStream) {
    // A launcher registering is activity: the idle timer starts over.
    state.touch();
    let peer = match crate::peer::check(&sock, &state.launchers()) {
        Ok(p) => p,
        Err(e) => return refuse(&sock, RefusalReason::Peer, format!("refused: {e}")),
    };
    let open = match control::recv::<ControlRequest>(&sock) {
        Ok((
            ControlRequest {
                kind: Some(control_request::Kind::Open(o)),
            },
            _,
        )) => o,
        Ok(_) => {
            return refuse(
                &sock,
                RefusalReason::BadRequest,
                "expected OpenSession first".into(),
            )
        }
        // A client making sure the daemon runs (`hallpass rules`), then hanging up.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return,
        Err(e) => return say!("hallpassd: control connection from pid {}: {e}", peer.pid),
    };
    if open.protocol != hallpass_proto::PROTOCOL {
        return refuse(
            &sock,
            RefusalReason::Protocol,
            format!(
                "hallpass speaks protocol {} and this hallpassd {}: install both from one release, then stop the running hallpassd (the next hallpass starts the new one)",
                open.protocol,
                hallpass_proto::PROTOCOL
            ),
        );
    }
    // A session never runs with fewer deny rules than the file holds: while it cannot be read
    // whole, none starts (the sessions running keep the rules last read).
    if let Some(e) = state.questions.rules().damage() {
        return refuse(
            &sock,
            RefusalReason::Rules,
            format!("{e} (no session starts while the rules file cannot be read whole)"),
        );
    }
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let pending = match session::open(id, peer.pid, &open, &state.protected) {
        Ok(p) => p,
        Err(e) => {
            let reason = match e {
                session::SetupError::Resume(_) => RefusalReason::ResumeTmpdir,
                session::SetupError::Kernel(_) => RefusalReason::Kernel,
                _ => RefusalReason::Setup,
            };
            return refuse(&sock, reason, e.to_string());
        }
    };
    let opts = filter::Options {
        coverage: if pending.strict {
            Coverage::Strict
        } else {
            Coverage::Lite
        },
        report_exec: pending.lend,
        report_connect: !open.log_path.is_empty(),
    };
    let prog = match filter::compile(Arch::native(), opts) {
        Ok(p) => p,
        Err(e) => {
            return refuse(
                &sock,
                RefusalReason::Internal,
                format!("internal error: cannot build the filter: {e}"),
            )
        }
    };
    let opened = SessionOpened {
        session_id: id,
        filter: crate::bpf::to_bytes(&prog),
        tmpdir: pending
            .tmpdir
            .as_deref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        wait_killable: kernel_at_least(5, 19),
        landlock_paths: if pending.strict {
            let roots = pending.policy.landlock_roots();
            roots
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        } else {
            Vec::new()
        },
    };
    // A session that could not start removes the TMPDIR made for it; a resumed one's is
    // still in use.
    let cleanup = |p: &session::Pending| {
        if let Some(t) = p.tmpdir.as_ref().filter(|_| !p.resumed) {
            let _ = std::fs::remove_dir_all(t);
        }
    };
    if control::send(
        &sock,
        &ControlReply {
            kind: Some(control_reply::Kind::Opened(opened)),
        },
        &[],
    )
    .is_err()
    {
        return cleanup(&pending);
    }
    let (attach, mut fds) = match control::recv::<ControlRequest>(&sock) {
        Ok((
            ControlRequest {
                kind: Some(control_request::Kind::Attach(a)),
            },
            fds,
        )) => (a, fds),
        Ok(_) => {
            cleanup(&pending);
            return refuse(&sock, RefusalReason::BadRequest, "expected Attach".into());
        }
        Err(e) => {
            cleanup(&pending);
            return say!("hallpassd: session {id}: launcher went away before attaching: {e}");
        }
    };
    let want = 1 + usize::from(attach.has_log) + usize::from(attach.has_journal);
    if attach.session_id != id || fds.len() != want {
        cleanup(&pending);
        return refuse(
            &sock,
            RefusalReason::BadRequest,
            format!(
                "bad Attach: session {} with {} descriptors",
                attach.session_id,
                fds.len()
            ),
        );
    }
    let log: Option<std::fs::File> = attach.has_log.then(|| fds.pop().unwrap().into());
    let journal = if attach.has_journal {
        match crate::journal::Journal::open(fds.pop().unwrap()) {
            Ok(j) => Some(j),
            Err(e) => {
                cleanup(&pending);
                return refuse(
                    &sock,
                    RefusalReason::BadRequest,
                    format!("bad session journal: {e}"),
                );
            }
        }
    } else {
        None
    };
    let listener: OwnedFd = fds.remove(0);
    if !is_seccomp_listener(&listener) {
        cleanup(&pending);
        return refuse(
            &sock,
            RefusalReason::BadRequest,
            "the descriptor sent is not a seccomp listener".into(),
        );
    }
    if pending.strict && !crate::sys::seccomp::can_send_fd(listener.as_fd()) {
        cleanup(&pending);
        return refuse(
            &sock,
            RefusalReason::Kernel,
            "--mode=strict needs SECCOMP_ADDFD_FLAG_SEND (Linux 5.14), which this kernel refuses: use --mode=lite".into(),
        );
    }
    pending.info.pid.store(attach.pid, Ordering::Relaxed);
    let info = pending.info.clone();
    state.add(info.clone());
    if control::send(
        &sock,
        &ControlReply {
            kind: Some(control_reply::Kind::Attached(Attached {})),
        },
        &[],
    )
    .is_err()
    {
        info.live.store(false, Ordering::Relaxed);
        state.touch();
        return cleanup(&pending);
    }
    say!(
        "hallpassd: session {id} started: pid {}: {}",
        attach.pid,
        info.argv
            .iter()
            .map(|a| hallpass_proto::shown::shown(a).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    if attach.resume {
        say!("hallpassd: session {id} resumes a running session (its previous daemon died)");
    }
    session::supervise(
        pending,
        session::Attached {
            listener,
            log,
            journal,
            resume: attach.resume,
            landlock: attach.landlock_paths.iter().map(PathBuf::from).collect(),
        },
        &sock,
        state.questions.clone(),
    );
    state.touch();
    say!(
        "hallpassd: session {id} ended: {} notifications, {} allowed, {} denied",
        info.notifications.load(Ordering::Relaxed),
        info.allowed.load(Ordering::Relaxed),
        info.denied.load(Ordering::Relaxed)
    );
}

/// A seccomp listener is an anonymous inode named `[seccomp]`.
fn is_seccomp_listener(fd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd()))
        .map(|p| p == Path::new("anon_inode:seccomp notify"))
        .unwrap_or(false)
}

/// Whether the running kernel is at least `major.minor`.
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(u) = nix::sys::utsname::uname() else {
        return false;
    };
    let rel = u.release().to_string_lossy().into_owned();
    let mut it = rel
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    (it.next().unwrap_or(0), it.next().unwrap_or(0)) >= (major, minor)
}

/// The daemon's socket paths in `dir`.
pub fn socket_paths(dir: &Path) -> (PathBuf, PathBuf) {
    (
        dir.join(hallpass_proto::paths::CONTROL_SOCKET),
        dir.join(hallpass_proto::paths::API_SOCKET),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hallpass_proto::OpenSession;

    /// A launcher of another protocol version is refused with one line that says what to do,
    /// and a reason it can act on.
    #[test]
    fn another_protocol_is_refused() {
        let dir = std::env::temp_dir().join(format!("hallpass-server-test-{}", std::process::id()));
        let rules = Arc::new(crate::rules::Store::open(dir.join("rules")));
        let state = Arc::new(State::new(&dir, Arc::new(Questions::new(rules))));
        let (ours, theirs) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || serve_launcher(state, theirs));
        let open = OpenSession {
            protocol: hallpass_proto::PROTOCOL + 1,
            ..Default::default()
        };
        let req = ControlRequest {
            kind: Some(control_request::Kind::Open(open)),
        };
        control::send(&ours, &req, &[]).unwrap();
        let (reply, _) = control::recv::<ControlReply>(&ours).unwrap();
        t.join().unwrap();
        let Some(control_reply::Kind::Refused(r)) = reply.kind else {
            panic!("not refused: {reply:?}");
        };
        assert_eq!(r.reason(), RefusalReason::Protocol);
        assert!(!r.message.contains('\n'), "{}", r.message);
        assert!(
            r.message.contains("stop the running hallpassd"),
            "{}",
            r.message
        );
    }
}
