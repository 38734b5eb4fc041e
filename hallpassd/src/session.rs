//! A session: the policy built from the launcher's `OpenSession`, and the supervisor loop that
//! answers the session's seccomp notifications.
//!
//! Each session has a dedicated thread that polls its listener and its launcher connection,
//! decodes each notification, decides and answers, so the common case (a write inside the
//! project) costs no hop between threads. Only the thread that wrote waits for its answer.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hallpass_proto::{
    control, control_reply, ControlReply, ControlRequest, LendRequest, OpenSession, PromptMode,
    Question,
};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::ask::Questions;
use crate::decode::{Decoder, Op};
use crate::dircache::DirCache;
use crate::journal::Journal;
use crate::log::{now_rfc3339, Log, Record};
use crate::mem::{Lender, Memory};
use crate::policy::{
    boot_time, Answered, Decision, PathSet, Policy, Prompt, Reason, IMPLICIT_DEVICES,
};
use crate::resolve::{canonicalize_lenient, proc_pid, tgid_of, Resolved};
use crate::rules::Rules;
use crate::strict::emulate::{self, Action, Outcome, Prepared};
use crate::strict::walk::Roots;
use crate::sys::seccomp::{self, Reply};
use crate::syscalls::{Arch, Kind};

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
    /// Questions asked (a write no rule decided, in `--prompt=ask`).
    pub questions: AtomicU64,
    /// Strict mode: the command runs in a Landlock domain of the static allowlist.
    pub landlock: AtomicBool,
    /// The profiles the session uses, as the launcher sent them (for `hallpass status`).
    pub profiles: Vec<hallpass_proto::ProfileUse>,
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
    #[error("cannot resume with TMPDIR {0}: not a hallpass session directory of this user")]
    Resume(String),
}

/// A session between `OpenSession` and `Attach`.
pub struct Pending {
    pub info: Arc<Info>,
    pub policy: Policy,
    pub tmpdir: Option<PathBuf>,
    pub lend: bool,
    /// How long a timed answer ([t]) lasts.
    pub timed_for: Duration,
    pub home: PathBuf,
    /// A running session registered again (its daemon died): `tmpdir` is its own, kept.
    pub resumed: bool,
    /// Strict mode: the daemon performs each write itself.
    pub strict: bool,
    /// The launcher has the daemon's credentials (a root daemon checks each process
    /// instead), so the daemon may perform for the session's processes: always in strict
    /// mode, which needs it; in lite mode, without it, binds and `openat2` are left to the
    /// kernel as they were.
    pub performs: bool,
    /// The session's terminals, as the launcher named them.
    pub ttys: Vec<PathBuf>,
}

/// What `Attach` brought.
pub struct Attached {
    pub listener: OwnedFd,
    pub log: Option<File>,
    pub journal: Option<Journal>,
    /// Decide again what the journal held (a previous daemon died).
    pub resume: bool,
    /// Strict mode: the paths the command's Landlock domain may write, as the launcher made
    /// it (checked against the policy's [`Policy::landlock_roots`]).
    pub landlock: Vec<PathBuf>,
}

/// Default length of a timed answer ([t]): 5 minutes.
pub const TIMED_DEFAULT: Duration = Duration::from_secs(300);

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

/// An `--allow-path`, which must name what it allows: one with a symlink on the way is
/// refused, since a command given it could have made that symlink itself (allowed to write
/// there) and so chosen what the next session with the same flag allows.
fn literal_allow_path(p: &str) -> Result<PathBuf, SetupError> {
    let c = canon(p)?;
    match crate::rules::normalize(p) {
        Some(literal) if literal == c => Ok(c),
        _ => Err(SetupError::Refused(format!(
            "--allow-path {p}: a symlink on the way leads to {}: give that path instead",
            c.display()
        ))),
    }
}

/// Adds `p` to `set` as resolved, and as written where that differs: if `~/.config` is a
/// symlink, its entry must not be replaced either (the daemon reads its rules through it), nor
/// may a symlinked `.git` be swapped for a directory of other hooks under `--deny-path
/// .git/hooks`.
fn both_names(p: &str, set: &mut PathSet) -> Result<(), SetupError> {
    let c = canon(p)?;
    if let Some(literal) = crate::rules::normalize(p) {
        if literal != c {
            set.push(literal);
        }
    }
    set.push(c);
    Ok(())
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
        // Where the question is shown is the launcher's business; here they are all asked.
        Ok(PromptMode::Ask) | Ok(PromptMode::Answer) | Ok(PromptMode::Desktop) => Prompt::Ask,
        _ => {
            return Err(SetupError::Refused(
                "unknown prompt mode (version mismatch between hallpass and hallpassd?)".into(),
            ))
        }
    };
    let strict = req.mode == hallpass_proto::EnforceMode::Strict as i32;
    if strict {
        strict_kernel()?;
    }
    let performs = same_world(launcher_pid, strict)?;
    let home = PathBuf::from(&req.home);
    let mut prot = PathSet::default();
    // hallpass's configuration and units, both as the launcher's $HOME names them and as
    // the daemon's does (they differ if a command was started with another HOME).
    let units = |base: PathBuf| {
        ["hallpassd.service", "hallpassd.socket"]
            .into_iter()
            .flat_map(move |u| [base.join(u), base.join(format!("{u}.d"))])
    };
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let mut list: Vec<PathBuf> = vec![
        home.join(".config/hallpass"),
        hallpass_proto::paths::config_dir(&home),
    ];
    list.extend(units(home.join(".config/systemd/user")));
    if let Some(x) = &xdg {
        list.extend(units(x.join("systemd/user")));
    }
    list.extend(protected.daemon.iter().cloned());
    list.extend(req.protected_paths.iter().map(PathBuf::from));
    for p in list {
        both_names(&p.to_string_lossy(), &mut prot)?;
    }
    let mut denied = PathSet::default();
    for p in &req.deny_paths {
        both_names(p, &mut denied)?;
    }
    let mut allowed = PathSet::default();
    for p in &req.allow_paths {
        allowed.push(literal_allow_path(p)?);
    }
    let services = crate::service::allowed(&req.allow_services)?;
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
    // Made last, once nothing can refuse the session any more; a resumed session keeps its
    // own (if it is one: ours, private, named as we name them, in the base).
    let resumed = !req.resume_tmpdir.is_empty();
    let tmpdir = match (tmp_base, resumed) {
        (Some(base), true) => Some(check_tmpdir(&base, &req.resume_tmpdir)?),
        (Some(base), false) => Some(make_tmpdir(&base, id)?),
        (None, _) => None,
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
        questions: AtomicU64::new(0),
        landlock: AtomicBool::new(false),
        profiles: req.profiles.clone(),
    };
    let policy = Policy {
        protected: prot,
        denied,
        allowed,
        implicit_dirs,
        implicit_files,
        services,
        prompt,
    };
    Ok(Pending {
        info: Arc::new(info),
        policy,
        tmpdir,
        lend: req.force_lend || scope == 1,
        timed_for: match req.timed_secs {
            0 => TIMED_DEFAULT,
            n => Duration::from_secs(n.into()),
        },
        home,
        resumed,
        strict,
        performs,
        ttys: req.tty_paths.iter().filter_map(|t| canon(t).ok()).collect(),
    })
}

/// The launcher must see the files as the daemon does: paths are decided in the daemon's
/// mount namespace and root. In strict mode it must also have the daemon's credentials,
/// which the daemon writes with (a daemon started before a group change has other groups).
/// Whether it has them (a root daemon checks each process instead): lite mode performs
/// binds and `openat2` only then, never with groups the command lacks.
fn same_world(launcher: i32, strict: bool) -> Result<bool, SetupError> {
    let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let root = |pid: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/{pid}/root"))
            .ok()
            .map(|m| (m.dev(), m.ino()))
    };
    let l = launcher.to_string();
    // A launcher registering again (its daemon died) has made itself undumpable, and its
    // entries cannot be read: it was checked when it first registered.
    let readable = ns(&l).is_some() && root(&l).is_some();
    if readable && (ns(&l) != ns("self") || root(&l) != root("self")) {
        return Err(SetupError::Refused(
            "hallpass runs in another mount namespace or root than hallpassd (a container or sandbox?): start it where the daemon runs, or give it a daemon of its own there (another XDG_RUNTIME_DIR)".into(),
        ));
    }
    if !nix::unistd::geteuid().is_root() {
        let ids = |pid: &str| {
            let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let f = |k: &str| {
                s.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            };
            Some((f("Uid:")?, f("Gid:")?, f("Groups:").unwrap_or_default()))
        };
        if ids(&l).is_none() || ids(&l) != ids("self") {
            if !strict {
                return Ok(false);
            }
            return Err(SetupError::Refused(
                "--mode=strict: hallpass runs with other user or group ids than hallpassd (started before a group change?): restart hallpassd (`systemctl --user restart hallpassd`, or kill it)".into(),
            ));
        }
    }
    Ok(true)
}

/// Strict mode answers opens with the descriptor itself, in one step with the answer
/// (`SECCOMP_ADDFD_FLAG_SEND`, Linux 5.14), and needs a process that cannot give up a syscall
/// the daemon is performing (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, 5.19): one restarted
/// after a signal would be performed twice.
fn strict_kernel() -> Result<(), SetupError> {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    strict_kernel_check(&release)
}

fn strict_kernel_check(release: &str) -> Result<(), SetupError> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    if (it.next().unwrap_or(0), it.next().unwrap_or(0)) >= (5, 19) {
        return Ok(());
    }
    Err(SetupError::Refused(format!(
        "--mode=strict needs Linux 5.19 or newer (SECCOMP_ADDFD_FLAG_SEND, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV); this kernel is {release}: use --mode=lite or a newer kernel"
    )))
}

/// The TMPDIR a resumed session names, if it is one of ours.
fn check_tmpdir(base: &Path, dir: &str) -> Result<PathBuf, SetupError> {
    use std::os::unix::fs::MetadataExt;
    let bad = || SetupError::Resume(dir.into());
    let p = canon(dir).map_err(|_| bad())?;
    let md = std::fs::symlink_metadata(&p).map_err(|_| bad())?;
    // Named as `make_tmpdir` names them: hallpass-PID-ID-HEX.
    let named = |n: &str| {
        let parts: Vec<&str> = n.split('-').collect();
        parts.len() == 4
            && parts[0] == "hallpass"
            && parts[1..3]
                .iter()
                .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
            && parts[3].len() == 8
            && parts[3].bytes().all(|b| b.is_ascii_hexdigit())
    };
    let ours = p.parent() == Some(base)
        && p.file_name().and_then(|n| n.to_str()).is_some_and(named)
        && md.is_dir()
        && md.uid() == nix::unistd::geteuid().as_raw()
        && md.mode() & 0o077 == 0;
    if ours {
        Ok(p)
    } else {
        Err(bad())
    }
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
        Ok(File::from(self.ask(LendRequest {
            tid,
            take_fd: false,
            fd: 0,
        })?))
    }

    fn lend_fd(&mut self, tid: i32, fd: i32) -> io::Result<OwnedFd> {
        self.ask(LendRequest {
            tid,
            take_fd: true,
            fd,
        })
    }
}

impl ControlLender<'_> {
    fn ask(&mut self, req: LendRequest) -> io::Result<OwnedFd> {
        let tid = req.tid;
        let req = ControlReply {
            kind: Some(control_reply::Kind::Lend(req)),
        };
        control::send(self.0, &req, &[])?;
        let (msg, mut fds) = control::recv::<ControlRequest>(self.0)?;
        match msg.kind {
            Some(hallpass_proto::control_request::Kind::Lent(l))
                if l.tid == tid && l.error == 0 && fds.len() == 1 =>
            {
                Ok(fds.remove(0))
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

/// What a session shares between its supervisor thread and whoever answers its questions.
pub struct Shared {
    pub info: Arc<Info>,
    policy: Policy,
    listener: OwnedFd,
    log: Mutex<Option<Log>>,
    /// Timed grants ([t], and [a] when the rules file cannot be written): scope and expiry.
    timed: Mutex<Vec<(PathBuf, Duration)>>,
    timed_for: Duration,
    home: PathBuf,
    /// Where the notifications held are noted, for the next daemon if this one dies.
    journal: Option<Journal>,
    /// Strict-mode opens waiting for a FIFO's other end.
    waiting: std::sync::atomic::AtomicUsize,
    /// The session's terminals.
    ttys: Vec<PathBuf>,
    /// Strict mode: what the command's Landlock domain lets it write. The kernel makes the
    /// writes the policy allows inside it; the daemon performs the rest.
    landlock: PathSet,
}

impl Shared {
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The decision for `syscall` writing `files` under the session's policy, the lasting
    /// `rules` and the session's timed grants; and the index of the path that decided.
    /// Renaming, removing or linking over a parent directory of a denied path is denied too
    /// ([`Policy::decide_syscall`]).
    pub fn decide(
        &self,
        syscall: &str,
        files: &[&Path],
        rules: &Rules,
    ) -> (Decision, Reason, usize) {
        let timed = self.timed.lock().unwrap();
        let answered = Answered {
            never: &rules.never,
            always: &rules.always,
            timed: &timed,
            now: boot_time(),
        };
        let call = crate::policy::Call {
            names: crate::syscalls::changes_names(syscall),
            content: crate::syscalls::writes_content(syscall),
            connect: crate::syscalls::connects(syscall),
        };
        self.policy.decide_syscall(files, call, &answered)
    }

    /// Those of `files` that no rule decides: what a question must show.
    fn undecided(&self, syscall: &str, files: &[&Path], rules: &Rules) -> Vec<PathBuf> {
        files
            .iter()
            .filter(|p| self.decide(syscall, &[p], rules).0 == Decision::Ask)
            .map(|p| p.to_path_buf())
            .collect()
    }

    /// The seccomp listener, to answer the session's notifications from any thread.
    pub fn listener(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    pub fn timed_secs(&self) -> u32 {
        self.timed_for.as_secs().try_into().unwrap_or(u32::MAX)
    }

    /// Allows `scope` for the timed-answer duration.
    pub fn grant_for_a_while(&self, scope: PathBuf) {
        let now = boot_time();
        let until = now + self.timed_for;
        let mut t = self.timed.lock().unwrap();
        t.retain(|(_, u)| *u > now);
        t.push((scope, until));
    }

    /// Allows `scope` until the session ends.
    pub fn grant_for_the_session(&self, scope: PathBuf) {
        // A century: longer than any session, and no overflow.
        let until = boot_time() + Duration::from_secs(100 * 365 * 86_400);
        self.timed.lock().unwrap().push((scope, until));
    }

    pub fn count(&self, d: Decision) {
        match d {
            Decision::Allow => &self.info.allowed,
            _ => &self.info.denied,
        }
        .fetch_add(1, Ordering::Relaxed);
    }

    /// Writes one log line, if the session has a log.
    pub fn record(
        &self,
        pid: i32,
        exe: &str,
        syscall: &str,
        path: &str,
        decision: Decision,
        reason: Reason,
    ) {
        let mut log = self.log.lock().unwrap();
        let Some(log) = log.as_mut() else { return };
        let rec = Record {
            time: now_rfc3339(),
            pid,
            exe,
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

/// Supervises an attached session until its launcher goes away or nothing is left to
/// supervise. Runs on its own thread.
pub fn supervise(p: Pending, a: Attached, control: &UnixStream, questions: Arc<Questions>) {
    let Pending {
        info,
        policy,
        tmpdir,
        lend,
        timed_for,
        home,
        resumed: _,
        strict,
        performs,
        ttys,
    } = p;
    // Cheaper wake-ups where the kernel has them (6.6); harmless to lack.
    let _ = seccomp::set_sync_wake_up(a.listener.as_fd());
    // Only what the policy itself would give the domain: a launcher's word cannot widen it.
    let roots = policy.landlock_roots();
    let landlock = PathSet::new(
        a.landlock
            .into_iter()
            .filter(|p| strict && roots.contains(p)),
    );
    info.landlock.store(!landlock.is_empty(), Ordering::Relaxed);
    let shared = Arc::new(Shared {
        info: info.clone(),
        policy,
        listener: a.listener,
        log: Mutex::new(a.log.map(Log::new)),
        timed: Mutex::new(Vec::new()),
        timed_for,
        home,
        journal: a.journal,
        waiting: std::sync::atomic::AtomicUsize::new(0),
        ttys,
        landlock,
    });
    // The paths of descriptors are kept (in strict mode only for what the kernel checks
    // again in its Landlock domain, and for descriptor metadata); not for a session a dead
    // daemon held, which may have let renames through that have not happened yet.
    let dircache = Arc::new(DirCache::new(!a.resume));
    let mut s = Supervisor {
        shared: shared.clone(),
        questions: questions.clone(),
        decoder: Decoder::with_cache(
            Arch::native(),
            info.pid.load(Ordering::Relaxed),
            dircache.clone(),
        ),
        dircache,
        mem: Memory::new(lend),
        lender: ControlLender(control),
        roots: None,
        strict,
        performs,
        failing: false,
        warned_credentials: false,
    };
    match Roots::new() {
        Ok(r) => s.roots = Some(r),
        Err(e) => {
            eprintln!(
                "hallpassd: session {}: cannot open / and /proc: {e}",
                info.id
            );
            // In strict mode nothing can be performed: every write fails, none is let
            // through. Lite mode does without.
            s.failing = strict;
        }
    }
    if a.resume {
        // The daemon that died may have heard of a Landlock domain of the command's own
        // (see `handle`): lite mode performs nothing more for this session.
        s.performs &= strict;
        s.recover();
    }
    s.run(control);
    info.live.store(false, Ordering::Relaxed);
    // Questions left open are dropped; their processes fail with ENOSYS once the listener
    // is closed (the last reference goes with them).
    questions.sweep();
    drop(s);
    drop(shared);
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
    shared: Arc<Shared>,
    questions: Arc<Questions>,
    decoder: Decoder,
    /// Lite mode's paths of directory descriptors (also the decoder's).
    dircache: Arc<DirCache>,
    mem: Memory,
    lender: ControlLender<'a>,
    /// Where strict lookups start.
    roots: Option<Roots>,
    /// Strict mode: every write is performed by the daemon.
    strict: bool,
    /// The launcher has the daemon's credentials: lite mode may perform.
    performs: bool,
    /// A strict session that cannot perform anything: every notification fails.
    failing: bool,
    /// Said once: a process with other credentials than the daemon's.
    warned_credentials: bool,
}

impl Supervisor<'_> {
    /// Receives and handles notifications until the launcher goes away. This thread blocks in
    /// `SECCOMP_IOCTL_NOTIF_RECV` itself, with no `poll` before each notification (one
    /// syscall less per write, and no wait queue of two descriptors to set up and tear down);
    /// a watcher thread waits for the launcher's hang-up and interrupts it. Where the kernel
    /// cannot be interrupted so (the handler could not be installed), it polls as before.
    fn run(&mut self, control: &UnixStream) {
        if self.strict {
            crate::strict::creds::supervising();
        }
        if crate::sys::fsops::interruptible().is_err() {
            return self.run_polling(control);
        }
        let stop = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let (wake_rx, wake_tx) = match UnixStream::pair() {
            Ok(p) => p,
            Err(_) => return self.run_polling(control),
        };
        let me = crate::sys::fsops::this_thread();
        let dircache = self.dircache.clone();
        std::thread::scope(|scope| {
            let watcher = std::thread::Builder::new()
                .name("hallpassd-watch".into())
                .spawn_scoped(scope, || {
                    watch_launcher(control, &wake_rx, &stop, &done, me, &dircache);
                });
            if watcher.is_err() {
                drop(wake_tx);
                return self.run_polling(control);
            }
            self.receive(control, &stop);
            done.store(true, Ordering::SeqCst);
            // The watcher returns once this end is gone.
            drop(wake_tx);
        });
    }

    /// The receiving loop of [`Self::run`]: `stop` is set when the launcher went away.
    fn receive(&mut self, control: &UnixStream, stop: &AtomicBool) {
        let shared = self.shared.clone();
        let listener = shared.listener();
        let id = shared.info.id;
        while !stop.load(Ordering::SeqCst) {
            match self.next(listener) {
                Ok(n) => self.take(listener, &n),
                // The watcher interrupts us to look at `stop`.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // The target died, or a signal made it give up, before we took it; or no
                // process uses the filter any more (Linux 6.6 and later say so at once).
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    let mut fds = [PollFd::new(listener, PollFlags::empty())];
                    let hup = poll(&mut fds, PollTimeout::ZERO).is_ok()
                        && fds[0]
                            .revents()
                            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
                    if hup {
                        // Nothing left to supervise: wait for the launcher to finish.
                        return self.wait_for_launcher(control, stop);
                    }
                }
                Err(e) => {
                    eprintln!("hallpassd: session {id}: receiving a notification: {e}");
                    return;
                }
            }
        }
    }

    /// Takes the next notification from the kernel: into the journal, where there is one.
    fn next(&self, listener: BorrowedFd<'_>) -> std::io::Result<seccomp::Notif> {
        match self.shared.journal() {
            Some(j) => j.receive(listener),
            None => seccomp::recv(listener),
        }
    }

    /// Handles one notification just received, then lets its journal slot go.
    fn take(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        self.handle(listener, n);
        if let Some(j) = shared.journal() {
            j.end();
        }
    }

    /// Blocks until the launcher goes away (or `stop` says it did).
    fn wait_for_launcher(&self, control: &UnixStream, stop: &AtomicBool) {
        while !stop.load(Ordering::SeqCst) {
            let mut fds = [PollFd::new(control.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
                Ok(_) if fds[0].revents().is_some_and(|r| !r.is_empty()) => return,
                Ok(_) => {}
            }
        }
    }

    /// The loop of [`Self::run`] where this thread cannot be interrupted: poll the launcher's
    /// connection and the listener, receive when the listener is readable.
    fn run_polling(&mut self, control: &UnixStream) {
        // No watcher to let go of idle directories: keep none.
        self.dircache.off();
        let shared = self.shared.clone();
        let listener = shared.listener();
        let id = shared.info.id;
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
                    eprintln!("hallpassd: session {id}: poll: {e}");
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
                match self.next(listener) {
                    Ok(n) => self.take(listener, &n),
                    // The target died, or a signal made it give up, before we took it.
                    Err(e)
                        if e.raw_os_error() == Some(libc::ENOENT)
                            || e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => {
                        eprintln!("hallpassd: session {id}: receiving a notification: {e}");
                        return;
                    }
                }
            } else if ev.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                // No process uses the filter any more; wait for the launcher to finish.
                orphaned = true;
            }
        }
    }

    fn handle(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        let info = &*shared.info;
        info.notifications.fetch_add(1, Ordering::Relaxed);
        let tid = n.pid as i32;
        if self.failing {
            let _ = seccomp::send(listener, n.id, Reply::Fail(libc::EACCES));
            return;
        }
        let sc = self.decoder.syscall(n);
        // Whatever this thread did before is done; a rename may move directories kept, a
        // removal take the name an object kept was decided by.
        self.dircache.noted(tid);
        if let Some(sc) = sc.filter(|sc| crate::syscalls::changes_names(sc.name)) {
            if crate::syscalls::renames(sc.name) {
                self.dircache.moving(tid);
            } else if self.strict {
                self.dircache.unnaming(tid);
            }
        }
        if self.strict {
            crate::strict::creds::noted(tid);
            return self.handle_strict(listener, n);
        }
        let kind = sc.map(|sc| sc.kind);
        if matches!(kind, Some(crate::syscalls::Kind::OwnDomain)) {
            // A process makes a Landlock domain of its own (a sandbox: Codex's, say). It
            // binds the process, not the daemon: nothing more is performed for the session,
            // or an openat2 or bind would escape it. The kernel makes them again, within the
            // domain. Noted before the domain is made, so nothing slips in between.
            if self.performs {
                self.performs = false;
                eprintln!(
                    "hallpassd: session {}: pid {tid} makes a Landlock domain of its own: its binds and openat2 are left to the kernel from now on",
                    info.id
                );
            }
            info.passed.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Continue);
            return;
        }
        // Lite mode performs binds and openat2 too, as strict mode does: they are rare, and
        // their arguments are in memory the kernel would read again (an abstract address
        // swapped for a path, read-only flags for writing ones, would write unchecked). Not
        // for a process with other credentials than the daemon's (a root daemon's process
        // that dropped them, a launcher with other groups), which must not act with the
        // daemon's power: those the kernel makes, as before.
        let in_memory = matches!(
            kind,
            Some(crate::syscalls::Kind::Bind { .. } | crate::syscalls::Kind::Openat2 { .. })
        );
        if in_memory
            && self.performs
            && self.roots.is_some()
            && crate::strict::creds::same_credentials(tid).is_ok()
        {
            return self.handle_strict(listener, n);
        }
        let op = self.decoder.decode(n, &mut self.mem, &mut self.lender);
        // Only a valid notification proves that the memory read was the caller's. The kernel
        // refuses a reply to one that died meanwhile (ENOENT), so a silent answer needs no
        // check; anything with an effect beyond the reply (a log line, a question) checks
        // first. This saves an ioctl on the hot path: a write inside the project.
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
            Ok(Op::Connect { path, name }) => {
                if valid() {
                    self.log_connect(tid, &path, name.as_ref());
                }
                info.passed.fetch_add(1, Ordering::Relaxed);
                Reply::Continue
            }
            Ok(Op::Write { syscall, paths }) => {
                match self.decide(n, syscall, &paths, &valid, &mut None) {
                    Some(r) => r,
                    None => return,
                }
            }
            // The arguments name nothing the kernel could write either (a bad descriptor, a
            // symlink loop, a path too long, a bad pointer, an empty path): its own error.
            Err(crate::decode::DecodeError::Read { source, .. })
                if source.raw_os_error().is_some_and(|e| {
                    [
                        libc::ENOENT,
                        libc::EBADF,
                        libc::ELOOP,
                        libc::ENAMETOOLONG,
                        libc::EFAULT,
                        libc::ENOTDIR,
                    ]
                    .contains(&e)
                }) =>
            {
                info.passed.fetch_add(1, Ordering::Relaxed);
                Reply::Fail(source.raw_os_error().unwrap_or(libc::EACCES))
            }
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

    /// The answer to a write; `None` when there is none to send now: the notification died
    /// before anything was written about it, or it waits for a person.
    ///
    /// In strict mode `action` is the write to perform: `Continue` then means "perform it",
    /// and a question takes it along to perform once answered.
    fn decide(
        &mut self,
        n: &seccomp::Notif,
        syscall: &'static str,
        paths: &[Resolved],
        valid: &dyn Fn() -> bool,
        action: &mut Option<Action>,
    ) -> Option<Reply> {
        let tid = n.pid as i32;
        // One or two paths (a rename, a link): on the stack.
        let mut kept: [&Path; 2] = [Path::new(""); 2];
        let mut count = 0;
        let mut more: Vec<&Path> = Vec::new();
        for r in paths {
            match r {
                Resolved::Path(p) if !self.own_proc(tid, p) => {
                    if count < kept.len() {
                        kept[count] = p;
                        count += 1;
                    } else {
                        more.push(p);
                    }
                }
                // A pipe or socket reopened through /proc/self/fd, or the writer's own /proc
                // entries: nothing on disk.
                _ => {}
            }
        }
        let files: &[&Path] = if more.is_empty() {
            &kept[..count]
        } else {
            more.splice(0..0, kept[..count].iter().copied());
            &more
        };
        let shared = &*self.shared;
        if files.is_empty() {
            shared.count(Decision::Allow);
            return Some(Reply::Continue);
        }
        let rules = self.questions.rules().current();
        let (decision, reason, i) = shared.decide(syscall, files, &rules);
        if reason == Reason::Implicit {
            shared.count(decision);
            return Some(if decision == Decision::Allow {
                Reply::Continue
            } else {
                Reply::Fail(libc::EACCES)
            });
        }
        if !valid() {
            return None;
        }
        if exists_already(tid, syscall, files, decision, reason) {
            shared.info.passed.fetch_add(1, Ordering::Relaxed);
            return Some(Reply::Fail(libc::EEXIST));
        }
        if decision == Decision::Ask {
            // Every path that needs an answer is shown (both of a rename, say): the answer
            // applies to the whole syscall.
            let undecided = shared.undecided(syscall, files, &rules);
            let all: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
            if self.ask(n, syscall, &undecided, all, action) {
                return None;
            }
            self.record(
                tid,
                syscall,
                &files[i].to_string_lossy(),
                Decision::Deny,
                Reason::Unresolved,
            );
            shared.count(Decision::Deny);
            return Some(Reply::Fail(libc::EACCES));
        }
        self.record(tid, syscall, &files[i].to_string_lossy(), decision, reason);
        shared.count(decision);
        Some(if decision == Decision::Allow {
            Reply::Continue
        } else {
            Reply::Fail(libc::EACCES)
        })
    }

    /// Publishes a question about this write; the notification waits for its answer.
    /// `false` when the question could not be kept (the journal is full): then deny.
    fn ask(
        &self,
        n: &seccomp::Notif,
        syscall: &'static str,
        paths: &[PathBuf],
        all: Vec<PathBuf>,
        action: &mut Option<Action>,
    ) -> bool {
        let Some((path, also)) = paths.split_first() else {
            return false;
        };
        let tid = n.pid as i32;
        let shared = &self.shared;
        let pid = tgid_of(tid).unwrap_or(tid);
        let top = shared.info.pid.load(Ordering::Relaxed);
        let q = Question {
            id: 0,
            session_id: shared.info.id,
            command: shared.info.argv.clone(),
            pid,
            name: crate::ask::comm(pid).unwrap_or_default(),
            exe: exe_of(tid),
            syscall: syscall.into(),
            path: path.to_string_lossy().into_owned(),
            also: also
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            chain: crate::ask::chain(pid, top),
            // A service is its socket, not the directory it is in.
            scope: match action {
                Some(Action::Connect(_)) => path.to_string_lossy().into_owned(),
                _ => crate::scope::suggest(path, &shared.home)
                    .to_string_lossy()
                    .into_owned(),
            },
            service: match action {
                Some(Action::Connect(c)) => c.service.clone(),
                _ => String::new(),
            },
            timed_secs: shared.timed_secs(),
            asked_ms: crate::ask::now_ms(),
            number: 0,
        };
        if self
            .questions
            .ask(shared, n, q, all, action.take())
            .is_err()
        {
            eprintln!(
                "hallpassd: session {}: the session journal is full: a write that needs an answer is denied",
                shared.info.id
            );
            return false;
        }
        true
    }

    /// Strict mode in a Landlock domain: a write the policy allows by a static rule (the
    /// project, `$TMPDIR`, the devices, `--allow-path`) inside what the domain
    /// lets the command write is left to the kernel, which makes it natively, with the
    /// process's own credentials. The path was read once, as lite mode reads it; if the
    /// process changes what it names before the kernel reads it again, the kernel checks the
    /// object it reaches against the domain, which holds nothing the policy denies: a race
    /// ends in `EACCES`, never elsewhere. `true` when answered.
    fn kernel_makes(
        &mut self,
        listener: BorrowedFd<'_>,
        n: &seccomp::Notif,
        sc: &'static crate::syscalls::Syscall,
    ) -> bool {
        let shared = self.shared.clone();
        if shared.landlock.is_empty() || !crate::syscalls::landlock_covers(sc, &n.data.args) {
            return false;
        }
        let Ok(Op::Write { syscall, paths }) =
            self.decoder.decode(n, &mut self.mem, &mut self.lender)
        else {
            return false;
        };
        let mut files: Vec<&Path> = Vec::with_capacity(paths.len());
        for r in &paths {
            match r {
                Resolved::Path(p) if shared.landlock.covers(p) => files.push(p),
                _ => return false,
            }
        }
        let rules = self.questions.rules().current();
        // A lasting "never" rule made during the session, in or around the domain: the
        // domain would let a race reach it.
        if rules
            .never
            .iter()
            .any(|p| shared.landlock.covers(p) || shared.landlock.holds(p))
        {
            return false;
        }
        let (decision, reason, i) = shared.decide(syscall, &files, &rules);
        if decision != Decision::Allow || !matches!(reason, Reason::Implicit | Reason::Policy) {
            return false;
        }
        if reason != Reason::Implicit {
            if !seccomp::id_valid(listener, n.id) {
                return true;
            }
            self.record(
                n.pid as i32,
                syscall,
                &files[i].to_string_lossy(),
                decision,
                reason,
            );
        }
        shared.count(decision);
        let _ = seccomp::send(listener, n.id, Reply::Continue);
        true
    }

    /// Strict mode: prepares the write on held descriptors, decides on what they are, and
    /// performs it (or asks, the prepared write waiting with the question).
    fn handle_strict(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        let info = &*shared.info;
        let tid = n.pid as i32;
        let Some(sc) = self.decoder.syscall(n) else {
            info.denied.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Fail(libc::ENOSYS));
            return;
        };
        // Before the credentials: the kernel makes it with the process's own.
        if self.strict && self.kernel_makes(listener, n, sc) {
            return;
        }
        if matches!(sc.kind, Kind::Exec | Kind::Creds) {
            // The process changes its credentials: the daemon's answer for them goes, and
            // the kernel makes the call.
            crate::strict::creds::changing(tid);
            if sc.kind == Kind::Exec {
                self.mem.forget(tid);
            }
            info.passed.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Continue);
            return;
        }
        let valid = || seccomp::id_valid(listener, n.id);
        // A process with other credentials than the daemon's (a root daemon's process that
        // switched user or dropped capabilities): this thread takes on its credentials for
        // the walk and the call, so the kernel checks what it would natively.
        let _guise = match crate::strict::creds::guise(tid, &valid) {
            Ok(g) => g,
            Err(e) => {
                if !self.warned_credentials {
                    self.warned_credentials = true;
                    eprintln!(
                        "hallpassd: session {}: cannot act with the credentials of pid {tid} ({e}): its writes fail",
                        info.id
                    );
                }
                let _ = seccomp::send(listener, n.id, Reply::Fail(e as i32));
                return;
            }
        };
        for _ in 0..emulate::OPEN_RETRIES {
            let mut t = emulate::Target {
                tid,
                lite: !self.strict,
                session: info.pid.load(Ordering::Relaxed),
                ttys: &shared.ttys,
                mem: &mut self.mem,
                lender: &mut self.lender,
                descs: &self.dircache,
            };
            let roots = self
                .roots
                .as_ref()
                .expect("roots of a session that performs");
            let prepared = emulate::prepare(sc, n, &mut t, roots);
            // Only a valid notification proves that what was read was the caller's; nothing
            // is performed for one that is gone.
            if !valid() {
                return;
            }
            // A connection: between the session's own processes, made undecided.
            let prepared = match prepared {
                Prepared::Write {
                    syscall,
                    paths,
                    mut action,
                } => match self.settle_connect(tid, &mut action, &paths) {
                    Some(Reply::Continue) => Prepared::Perform(action),
                    Some(r) => {
                        info.denied.fetch_add(1, Ordering::Relaxed);
                        let _ = seccomp::send(listener, n.id, r);
                        return;
                    }
                    None => Prepared::Write {
                        syscall,
                        paths,
                        action,
                    },
                },
                p => p,
            };
            let action = match prepared {
                Prepared::Pass { exec } => {
                    if exec {
                        self.mem.forget(tid);
                    }
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    let _ = seccomp::send(listener, n.id, Reply::Continue);
                    return;
                }
                Prepared::Fail(e) => {
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    let _ = seccomp::send(listener, n.id, Reply::Fail(e));
                    return;
                }
                // Not a write: nothing to decide, but performed here all the same.
                Prepared::Perform(action) => {
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    action
                }
                Prepared::Write {
                    syscall,
                    paths,
                    action,
                } => {
                    let mut action = Some(action);
                    match self.decide(n, syscall, &paths, &valid, &mut action) {
                        None => return,
                        Some(Reply::Continue) => {}
                        Some(r) => {
                            let _ = seccomp::send(listener, n.id, r);
                            return;
                        }
                    }
                    action.expect("kept unless asked")
                }
            };
            // An open that waits for a FIFO's other end does so on a thread of its own, kept
            // in the journal meanwhile (a daemon that dies leaves it to the next one).
            let wait_apart = |action| {
                let slot = shared.journal().and_then(|j| j.hold(n));
                perform_later(shared.clone(), n.id, tid, action, slot, true);
            };
            if action.may_block() {
                return wait_apart(action);
            }
            match action.perform(tid, false) {
                Outcome::Raced => continue,
                Outcome::Blocks => return wait_apart(action),
                outcome => {
                    // The daemon's copies of the process's descriptors go first: a file
                    // still open for writing here would fail the exec the process may make
                    // of it the moment it has its answer (ETXTBSY).
                    drop(action);
                    return emulate::answer(listener, n.id, outcome);
                }
            }
        }
        // The entry kept turning into a symlink: what the kernel says of too many.
        let _ = seccomp::send(listener, n.id, Reply::Fail(libc::ELOOP));
    }

    /// Lite mode: logs a connection to a service outside the session (reason `service`); not
    /// one to a socket in the project or `$TMPDIR`, nor between the session's processes.
    fn log_connect(&self, tid: i32, path: &Resolved, name: Option<&crate::service::Name>) {
        let Resolved::Path(p) = path else { return };
        let rules = self.questions.rules().current();
        if self.shared.decide("connect", &[p], &rules).1 == Reason::Implicit {
            return;
        }
        let session = self.shared.info.pid.load(Ordering::Relaxed);
        let holders = match name.and_then(crate::service::holders) {
            Some(crate::service::Listener::Held(h)) => h,
            _ => Vec::new(),
        };
        if !holders.is_empty()
            && holders
                .iter()
                .all(|&h| crate::resolve::descends_from(h, session))
        {
            return;
        }
        let shown = p.to_string_lossy();
        self.record(tid, "connect", &shown, Decision::Allow, Reason::Service);
    }

    /// A connection between the session's own processes passes (`Continue`: perform it),
    /// one to hallpassd is refused; `None` for any other, then decided as a write, the
    /// action now naming the service for the question (`strict/connect.rs`).
    fn settle_connect(&self, tid: i32, action: &mut Action, paths: &[Resolved]) -> Option<Reply> {
        let (Action::Connect(c), [Resolved::Path(p)]) = (action, paths) else {
            return None;
        };
        let shared = &self.shared;
        let allowed = || {
            let rules = self.questions.rules().current();
            shared.decide("connect", &[p], &rules).0 == Decision::Allow
        };
        let session = shared.info.pid.load(Ordering::Relaxed);
        match crate::strict::connect::settle(c, session, allowed) {
            crate::strict::connect::Settled::Pass => Some(Reply::Continue),
            crate::strict::connect::Settled::Refuse(e) => {
                let shown = p.to_string_lossy();
                self.record(tid, "connect", &shown, Decision::Deny, Reason::Protected);
                Some(Reply::Fail(e))
            }
            crate::strict::connect::Settled::Decide => None,
        }
    }

    /// Decides again the notifications a daemon that died held, noted in the journal (a
    /// question open there is asked again). The kernel wrote each into the journal as it
    /// handed it over, so none can be missing.
    fn recover(&mut self) {
        let shared = self.shared.clone();
        let Some(j) = shared.journal() else { return };
        let listener = shared.listener();
        let held = j.held();
        let mut again = 0;
        for (slot, n) in held {
            if seccomp::id_valid(listener, n.id) {
                again += 1;
                j.begin(&n);
                self.handle(listener, &n);
                j.end();
            }
            // Only now, decided again (answered, or held in a slot of its own): if this daemon
            // dies first, the next one still finds it.
            j.settle(slot, n.id);
        }
        eprintln!(
            "hallpassd: session {}: {again} notifications left by the previous daemon decided again",
            shared.info.id
        );
    }

    /// Whether `p` is one of the writer's own `/proc/PID/` entries (`comm`, `attr/...`),
    /// which are not files on disk. Not its magic links (`fd/N`, `cwd`, `root`, `exe`,
    /// `map_files/...`): one of those still here was not resolved (the descriptor closed
    /// meanwhile, say) and could name anything by the time the kernel follows it.
    fn own_proc(&self, tid: i32, p: &Path) -> bool {
        // Resolved paths are normalized: one test of their bytes rules out nearly all.
        if !p.as_os_str().as_bytes().starts_with(b"/proc/") {
            return false;
        }
        let Some(pid) = proc_pid(p) else { return false };
        if pid != tid && Some(pid) != tgid_of(tid) {
            return false;
        }
        let magic = ["fd", "cwd", "root", "exe", "map_files"];
        !p.components()
            .skip(3)
            .any(|c| c.as_os_str().to_str().is_some_and(|c| magic.contains(&c)))
    }

    fn record(&self, tid: i32, syscall: &str, path: &str, decision: Decision, reason: Reason) {
        let pid = tgid_of(tid).unwrap_or(tid);
        self.shared
            .record(pid, &exe_of(tid), syscall, path, decision, reason);
    }
}

/// The watcher of [`Supervisor::run`]: waits for the launcher to hang up (the launcher sends
/// nothing unasked after attaching, and the supervisor itself reads the replies to its lend
/// requests, so only a hang-up is looked for), then sets `stop` and interrupts the supervisor
/// thread `supervisor` until it says it is `done` (a signal that lands just before it blocks
/// again is sent again). Returns when `wake` hangs up: the supervisor is done. Meanwhile,
/// every second, lets go of the directories `dircache` holds if the session was idle.
fn watch_launcher(
    control: &UnixStream,
    wake: &UnixStream,
    stop: &AtomicBool,
    done: &AtomicBool,
    supervisor: libc::pthread_t,
    dircache: &DirCache,
) {
    loop {
        let mut fds = [
            // Only POLLHUP and POLLERR, which poll always reports: the launcher closed.
            PollFd::new(control.as_fd(), PollFlags::empty()),
            PollFd::new(wake.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
            Ok(0) => {
                dircache.evict_idle();
                continue;
            }
            Ok(_) => {}
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            return;
        }
        if fds[0].revents().is_some_and(|r| !r.is_empty()) {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    while !done.load(Ordering::SeqCst) {
        crate::sys::fsops::interrupt(supervisor);
        let mut fds = [PollFd::new(wake.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(10u8));
    }
}

/// Performs a strict-mode write on a thread of its own and answers it: one a person allowed,
/// or (`fifo`) an open that waits as long as the process would have for a FIFO's other end.
/// At most [`MAX_WAITING`] of the latter per session; past that the open fails with
/// `EAGAIN`. One whose process goes away is interrupted. `slot`: its journal slot, freed
/// once it is answered.
pub fn perform_later(
    shared: Arc<Shared>,
    id: u64,
    tid: i32,
    action: Action,
    slot: Option<usize>,
    fifo: bool,
) {
    let release_slot = move |s: &Shared| {
        if let (Some(j), Some(slot)) = (s.journal(), slot) {
            j.release(slot, id);
        }
    };
    if fifo && shared.waiting.fetch_add(1, Ordering::Relaxed) >= MAX_WAITING {
        shared.waiting.fetch_sub(1, Ordering::Relaxed);
        eprintln!(
            "hallpassd: session {}: {MAX_WAITING} opens already wait for the other end of a FIFO: EAGAIN",
            shared.info.id
        );
        let _ = seccomp::send(shared.listener(), id, Reply::Fail(libc::EAGAIN));
        release_slot(&shared);
        return;
    }
    let state = Arc::new(Mutex::new(Performing::Starting));
    let (s2, state2) = (shared.clone(), state.clone());
    let spawned = std::thread::Builder::new()
        .name("hallpassd-perform".into())
        .spawn(move || {
            // Started maybe by a supervisor in the guise of its process: it takes on the
            // process's credentials itself, from the daemon's own.
            crate::strict::creds::as_daemon();
            let _ = crate::sys::fsops::interruptible();
            *state2.lock().unwrap() = Performing::Running(crate::sys::fsops::this_thread());
            // Checked again right before acting: nothing is written for a process gone.
            let outcome = if seccomp::id_valid(s2.listener(), id) {
                match action.perform(tid, true) {
                    // Prepared before the question; cannot be prepared again here.
                    Outcome::Raced => Outcome::Reply(Reply::Fail(libc::ELOOP)),
                    o => o,
                }
            } else {
                Outcome::Reply(Reply::Fail(libc::EINTR))
            };
            // Done before answering: the watchdog signals only a thread still at it.
            *state2.lock().unwrap() = Performing::Done;
            // The copies of the process's descriptors go before the answer (ETXTBSY).
            drop(action);
            emulate::answer(s2.listener(), id, outcome);
            release_slot(&s2);
            if fifo {
                s2.waiting.fetch_sub(1, Ordering::Relaxed);
            }
        });
    if let Err(e) = spawned {
        if fifo {
            shared.waiting.fetch_sub(1, Ordering::Relaxed);
        }
        eprintln!("hallpassd: cannot start a thread to perform a write: {e}");
        let _ = seccomp::send(shared.listener(), id, Reply::Fail(libc::EAGAIN));
        release_slot(&shared);
        return;
    }
    if !fifo {
        return;
    }
    // The watchdog: once the process is gone, its open is interrupted (EINTR), as often as
    // it takes.
    let _ = std::thread::Builder::new()
        .name("hallpassd-fifo-watch".into())
        .spawn(move || {
            crate::strict::creds::as_daemon();
            loop {
                std::thread::sleep(Duration::from_millis(100));
                let st = state.lock().unwrap();
                match *st {
                    Performing::Done => break,
                    Performing::Starting => {}
                    Performing::Running(t) => {
                        if !seccomp::id_valid(shared.listener(), id) {
                            crate::sys::fsops::interrupt(t);
                        }
                    }
                }
            }
        });
}

/// Where a write performed on a thread of its own is.
enum Performing {
    Starting,
    Running(libc::pthread_t),
    Done,
}

/// Opens waiting for a FIFO's other end at once, per session.
const MAX_WAITING: usize = 32;

/// The executable of thread `tid`, or "" if it cannot be read.
fn exe_of(tid: i32) -> String {
    std::fs::read_link(format!("/proc/{tid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A `mkdir` of a directory that is there already (`mkdir -p` makes one for every parent of
/// the path) changes nothing: it fails with `EEXIST` at once, as the kernel would, instead
/// of asking a person about `/home` or logging it. Only where no rule decided (a question,
/// audit or unattended); a rule's answer stands. Failing a write is always safe. Not for a
/// process with other credentials than the daemon's: the daemon's look would tell it of a
/// path it may not see (it then gets the question, or its prompt mode's answer).
fn exists_already(
    tid: i32,
    syscall: &str,
    files: &[&Path],
    decision: Decision,
    reason: Reason,
) -> bool {
    let undecided =
        decision == Decision::Ask || matches!(reason, Reason::Audit | Reason::Unattended);
    undecided
        && matches!(syscall, "mkdir" | "mkdirat")
        && files.len() == 1
        && std::fs::symlink_metadata(files[0]).is_ok()
        && crate::strict::creds::same_credentials(tid).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_mode_needs_linux_5_19() {
        for ok in ["5.19.0", "6.1.0-28-amd64", "6.18.44-fc-v669", "10.0"] {
            assert!(strict_kernel_check(ok).is_ok(), "{ok}");
        }
        for old in [
            "5.18.19",
            "5.15.0-91-generic",
            "5.4.0-150-generic",
            "4.19.0",
            "",
        ] {
            let e = strict_kernel_check(old).unwrap_err().to_string();
            assert!(e.contains("Linux 5.19") && e.contains(old), "{e}");
        }
    }
}
