//! A session: the policy built from the launcher's `OpenSession`, and the supervisor loop that
//! answers the session's seccomp notifications.
//!
//! Each session has a dedicated thread that polls its listener and its launcher connection,
//! decodes each notification, decides and answers, so the common case (a write inside the
//! project) costs no hop between threads. Only the thread that wrote waits for its answer.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hallpass_proto::{
    control, control_reply, ControlReply, ControlRequest, LendRequest, OpenSession, PromptMode,
};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::decode::{Decoder, Op};
use crate::log::{now_rfc3339, Log, Record};
use crate::mem::{Lender, Memory};
use crate::policy::{Decision, PathSet, Policy, Prompt, Reason, IMPLICIT_DEVICES};
use crate::resolve::{canonicalize_lenient, proc_pid, tgid_of, Resolved};
use crate::sys::seccomp::{self, Reply};
use crate::syscalls::Arch;

/// What the daemon shows of a session, shared with the status API.
#[derive(Debug)]
pub struct Info {
    pub id: u64,
    pub argv: Vec<String>,
    pub cwd: String,
    pub launcher_pid: i32,
    pub pid: AtomicI32,
    pub prompt: i32,
    pub mode: i32,
    pub started: Instant,
    pub live: AtomicBool,
    pub notifications: AtomicU64,
    pub allowed: AtomicU64,
    pub denied: AtomicU64,
    pub passed: AtomicU64,
}

/// Why a session could not be opened: one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Refused(String),
    #[error("cannot make the session's TMPDIR in {dir}: {source}")]
    Tmpdir { dir: PathBuf, source: io::Error },
    #[error("invalid path {path}: {source}")]
    Path { path: String, source: io::Error },
}

/// A session between `OpenSession` and `Attach`.
pub struct Pending {
    pub info: Arc<Info>,
    pub policy: Policy,
    pub tmpdir: Option<PathBuf>,
    pub lend: bool,
}

/// The paths of hallpass itself that no session may write.
pub struct Protected {
    /// The daemon's binary and runtime directory.
    pub daemon: Vec<PathBuf>,
}

fn canon(p: &str) -> Result<PathBuf, SetupError> {
    let path = Path::new(p);
    if !path.is_absolute() {
        return Err(SetupError::Path {
            path: p.into(),
            source: io::Error::other("not absolute"),
        });
    }
    canonicalize_lenient(path).map_err(|source| SetupError::Path {
        path: p.into(),
        source,
    })
}

/// Builds a session's policy and private TMPDIR from the launcher's request.
pub fn open(
    id: u64,
    launcher_pid: i32,
    req: &OpenSession,
    protected: &Protected,
) -> Result<Pending, SetupError> {
    let prompt = match PromptMode::try_from(req.prompt) {
        Ok(PromptMode::Allow) => Prompt::Allow,
        Ok(PromptMode::Deny) => Prompt::Deny,
        Ok(PromptMode::Ask) | Ok(PromptMode::Answer) | Ok(PromptMode::Desktop) => {
            return Err(SetupError::Refused(
                "this daemon cannot ask yet: use --prompt=allow or --prompt=deny".into(),
            ))
        }
        _ => {
            return Err(SetupError::Refused(
                "unknown prompt mode (version mismatch between hallpass and hallpassd?)".into(),
            ))
        }
    };
    if req.mode == hallpass_proto::EnforceMode::Strict as i32 {
        return Err(SetupError::Refused(
            "--mode=strict is not available yet".into(),
        ));
    }
    let home = PathBuf::from(&req.home);
    let mut prot = PathSet::default();
    for p in [
        home.join(".config/hallpass"),
        hallpass_proto::paths::config_dir(&home),
    ]
    .into_iter()
    .chain(
        ["hallpassd.service", "hallpassd.socket"]
            .map(|u| home.join(".config/systemd/user").join(u)),
    )
    .chain(protected.daemon.iter().cloned())
    {
        prot.push(canon(&p.to_string_lossy())?);
    }
    for p in &req.protected_paths {
        prot.push(canon(p)?);
    }
    let mut denied = PathSet::default();
    for p in &req.deny_paths {
        denied.push(canon(p)?);
    }
    let mut allowed = PathSet::default();
    for p in &req.allow_paths {
        allowed.push(canon(p)?);
    }
    let mut implicit_dirs = PathSet::default();
    let mut implicit_files = Vec::new();
    let mut tmp_base = None;
    if !req.no_implicit {
        implicit_dirs.push(canon(&req.cwd)?);
        let base = if req.tmp_base.is_empty() {
            "/tmp"
        } else {
            &req.tmp_base
        };
        tmp_base = Some(canon(base)?);
        implicit_files.extend(IMPLICIT_DEVICES.iter().map(PathBuf::from));
    }
    if !req.no_implicit || req.allow_tty {
        for t in &req.tty_paths {
            implicit_files.push(canon(t)?);
        }
    }
    let scope = crate::mem::yama_ptrace_scope();
    if scope >= 2 && !nix::unistd::geteuid().is_root() {
        return Err(SetupError::Refused(format!(
            "Yama ptrace_scope is {scope}: hallpass cannot read the command's syscall arguments; it needs 0 or 1 (sysctl kernel.yama.ptrace_scope=1)"
        )));
    }
    // Made last, once nothing can refuse the session any more.
    let tmpdir = match tmp_base {
        Some(base) => Some(make_tmpdir(&base, id)?),
        None => None,
    };
    if let Some(t) = &tmpdir {
        implicit_dirs.push(t.clone());
    }
    let info = Info {
        id,
        argv: req.argv.clone(),
        cwd: req.cwd.clone(),
        launcher_pid,
        pid: AtomicI32::new(0),
        prompt: req.prompt,
        mode: req.mode,
        started: Instant::now(),
        live: AtomicBool::new(true),
        notifications: AtomicU64::new(0),
        allowed: AtomicU64::new(0),
        denied: AtomicU64::new(0),
        passed: AtomicU64::new(0),
    };
    let policy = Policy {
        protected: prot,
        denied,
        allowed,
        implicit_dirs,
        implicit_files,
        prompt,
    };
    Ok(Pending {
        info: Arc::new(info),
        policy,
        tmpdir,
        lend: req.force_lend || scope == 1,
    })
}

fn make_tmpdir(base: &Path, id: u64) -> Result<PathBuf, SetupError> {
    let mut last = None;
    for attempt in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let p = base.join(format!(
            "hallpass-{}-{id}-{:08x}",
            std::process::id(),
            nanos ^ attempt.wrapping_mul(0x9e37_79b9)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(SetupError::Tmpdir {
                    dir: base.into(),
                    source: e,
                })
            }
        }
    }
    Err(SetupError::Tmpdir {
        dir: base.into(),
        source: last.unwrap(),
    })
}

/// Lends through the launcher's connection: the daemon asks, the launcher opens
/// `/proc/TID/mem` (it is an ancestor of every supervised process) and sends it back.
struct ControlLender<'a>(&'a UnixStream);

impl Lender for ControlLender<'_> {
    fn lend(&mut self, tid: i32) -> io::Result<File> {
        let req = ControlReply {
            kind: Some(control_reply::Kind::Lend(LendRequest { tid })),
        };
        control::send(self.0, &req, &[])?;
        let (msg, mut fds) = control::recv::<ControlRequest>(self.0)?;
        match msg.kind {
            Some(hallpass_proto::control_request::Kind::Lent(l))
                if l.tid == tid && l.error == 0 && fds.len() == 1 =>
            {
                Ok(File::from(fds.remove(0)))
            }
            Some(hallpass_proto::control_request::Kind::Lent(l)) if l.error != 0 => {
                Err(io::Error::from_raw_os_error(l.error))
            }
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unexpected reply to a lend request",
            )),
        }
    }
}

/// Supervises an attached session until its launcher goes away or nothing is left to
/// supervise. Runs on its own thread.
pub fn supervise(p: Pending, listener: OwnedFd, control: &UnixStream, log: Option<File>) {
    let Pending {
        info,
        policy,
        tmpdir,
        lend,
    } = p;
    // Cheaper wake-ups where the kernel has them (6.6); harmless to lack.
    let _ = seccomp::set_sync_wake_up(listener.as_fd());
    let mut s = Supervisor {
        info: &info,
        policy,
        decoder: Decoder::new(Arch::native()),
        mem: Memory::new(lend),
        log: log.map(Log::new),
        lender: ControlLender(control),
    };
    s.run(listener.as_fd(), control);
    info.live.store(false, Ordering::Relaxed);
    drop(listener);
    if let Some(t) = tmpdir {
        if let Err(e) = std::fs::remove_dir_all(&t) {
            eprintln!(
                "hallpassd: session {}: cannot remove {}: {e}",
                info.id,
                t.display()
            );
        }
    }
}

struct Supervisor<'a> {
    info: &'a Info,
    policy: Policy,
    decoder: Decoder,
    mem: Memory,
    log: Option<Log>,
    lender: ControlLender<'a>,
}

impl Supervisor<'_> {
    fn run(&mut self, listener: std::os::fd::BorrowedFd<'_>, control: &UnixStream) {
        let mut orphaned = false;
        loop {
            let mut fds = [
                PollFd::new(control.as_fd(), PollFlags::POLLIN),
                PollFd::new(listener, PollFlags::POLLIN),
            ];
            let n = if orphaned {
                &mut fds[..1]
            } else {
                &mut fds[..]
            };
            match poll(n, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => {
                    eprintln!("hallpassd: session {}: poll: {e}", self.info.id);
                    return;
                }
                Ok(_) => {}
            }
            // The launcher sends nothing unasked after attaching: readable means it is gone.
            if fds[0].revents().is_some_and(|r| !r.is_empty()) {
                return;
            }
            let ev = fds[1].revents().unwrap_or(PollFlags::empty());
            if ev.contains(PollFlags::POLLIN) {
                match seccomp::recv(listener) {
                    Ok(n) => self.handle(listener, &n),
                    // The target died, or a signal made it give up, before we took it.
                    Err(e)
                        if e.raw_os_error() == Some(libc::ENOENT)
                            || e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => {
                        eprintln!(
                            "hallpassd: session {}: receiving a notification: {e}",
                            self.info.id
                        );
                        return;
                    }
                }
            } else if ev.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                // No process uses the filter any more; wait for the launcher to finish.
                orphaned = true;
            }
        }
    }

    fn handle(&mut self, listener: std::os::fd::BorrowedFd<'_>, n: &seccomp::Notif) {
        let info = self.info;
        info.notifications.fetch_add(1, Ordering::Relaxed);
        let tid = n.pid as i32;
        let op = self.decoder.decode(n, &mut self.mem, &mut self.lender);
        // Only a valid notification proves that the memory read was the caller's. The kernel
        // refuses a reply to one that died meanwhile (ENOENT), so a silent answer needs no
        // check; anything with an effect beyond the reply (a log line) checks first. This saves
        // an ioctl on the hot path: a write inside the project.
        let valid = || seccomp::id_valid(listener, n.id);
        let reply = match op {
            Ok(Op::Pass { exec }) => {
                if exec {
                    self.mem.forget(tid);
                }
                info.passed.fetch_add(1, Ordering::Relaxed);
                Reply::Continue
            }
            Ok(Op::Refuse(e)) => {
                info.denied.fetch_add(1, Ordering::Relaxed);
                Reply::Fail(e)
            }
            Ok(Op::Write { syscall, paths }) => match self.decide(tid, syscall, &paths, &valid) {
                Some(r) => r,
                None => return,
            },
            Err(e) => {
                if !valid() {
                    return;
                }
                let syscall = match &e {
                    crate::decode::DecodeError::Read { syscall, .. }
                    | crate::decode::DecodeError::Unsupported { syscall, .. } => syscall,
                    _ => "?",
                };
                info.denied.fetch_add(1, Ordering::Relaxed);
                eprintln!("hallpassd: session {}: pid {tid}: {e}", info.id);
                self.record(
                    tid,
                    syscall,
                    &format!("({e})"),
                    Decision::Deny,
                    Reason::Unresolved,
                );
                Reply::Fail(libc::EACCES)
            }
        };
        match seccomp::send(listener, n.id, reply) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => eprintln!(
                "hallpassd: session {}: answering a notification: {e}",
                info.id
            ),
        }
    }

    /// The answer to a write; `None` when the notification turned out dead before its log
    /// line was written.
    fn decide(
        &mut self,
        tid: i32,
        syscall: &'static str,
        paths: &[Resolved],
        valid: &dyn Fn() -> bool,
    ) -> Option<Reply> {
        let mut files: Vec<&Path> = Vec::with_capacity(paths.len());
        for r in paths {
            match r {
                Resolved::Path(p) if !self.own_proc(tid, p) => files.push(p),
                // A pipe or socket reopened through /proc/self/fd, or the writer's own /proc
                // entries: nothing on disk.
                _ => {}
            }
        }
        if files.is_empty() {
            self.info.allowed.fetch_add(1, Ordering::Relaxed);
            return Some(Reply::Continue);
        }
        let moves = matches!(
            syscall,
            "rename" | "renameat" | "renameat2" | "rmdir" | "unlinkat"
        );
        let (decision, reason, i) = match files
            .iter()
            .position(|p| moves && self.policy.holds_protected(p))
        {
            Some(i) => (Decision::Deny, Reason::Protected, i),
            None => self.policy.decide_all(&files),
        };
        let decision = match decision {
            // Nobody can be asked in the modes this daemon runs yet: fail closed.
            Decision::Ask => Decision::Deny,
            d => d,
        };
        if reason != Reason::Implicit {
            if !valid() {
                return None;
            }
            self.record(tid, syscall, &files[i].to_string_lossy(), decision, reason);
        }
        Some(if decision == Decision::Allow {
            self.info.allowed.fetch_add(1, Ordering::Relaxed);
            Reply::Continue
        } else {
            self.info.denied.fetch_add(1, Ordering::Relaxed);
            Reply::Fail(libc::EACCES)
        })
    }

    /// Whether `p` is under the writer's own `/proc/PID/`.
    fn own_proc(&self, tid: i32, p: &Path) -> bool {
        match proc_pid(p) {
            Some(pid) => pid == tid || Some(pid) == tgid_of(tid),
            None => false,
        }
    }

    fn record(&mut self, tid: i32, syscall: &str, path: &str, decision: Decision, reason: Reason) {
        let Some(log) = self.log.as_mut() else { return };
        let exe = std::fs::read_link(format!("/proc/{tid}/exe"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rec = Record {
            time: now_rfc3339(),
            pid: tgid_of(tid).unwrap_or(tid),
            exe: &exe,
            syscall,
            path,
            decision: if decision == Decision::Allow {
                "allow"
            } else {
                "deny"
            },
            reason: reason.as_str(),
        };
        if let Err(e) = log.write(&rec) {
            eprintln!("hallpassd: session {}: writing the log: {e}", self.info.id);
        }
    }
}
