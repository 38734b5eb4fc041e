//! A session: the policy built from the launcher's `OpenSession`, and the supervisor thread
//! that answers the session's seccomp notifications.
//!
//! Each session has a thread of its own that receives each notification, decodes it, decides
//! and answers, so the common case (a write inside the project) costs no hop between threads;
//! only the thread that wrote waits for its answer. Here: what a session is and shares with
//! the API ([`Info`], [`Shared`]); `setup.rs` opens one; `supervisor.rs` is its receiving
//! loop; `handle.rs` decides one notification (lite mode, and what both modes share),
//! `strict.rs` strict mode's; `later.rs` performs writes on threads of their own;
//! `lender.rs` borrows from the launcher what the daemon may not open itself; `error.rs` says
//! why a session could not be opened.

pub mod error;
mod handle;
mod later;
mod lender;
mod setup;
mod strict;
mod supervisor;

pub use error::SetupError;
pub use later::perform_later;
use lender::ControlLender;
pub use setup::open;
pub use supervisor::supervise;
use supervisor::Supervisor;

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
use crate::burst::{Bursts, Process};
use crate::decode::{Decoder, Op};
use crate::dircache::DirCache;
use crate::dlog::say;
use crate::journal::Journal;
use crate::log::{now_rfc3339, Log, Record};
use crate::mem::{Lender, Memory};
use crate::perform::emulate::{self, Action, Outcome, Prepared};
use crate::perform::walk::Roots;
use crate::policy::{
    boot_time, Answered, Decision, PathSet, Policy, Prompt, Reason, IMPLICIT_DEVICES,
};
use crate::process::tgid_of;
use crate::resolve::{canonicalize_lenient, proc_pid, Resolved};
use crate::rules::Rules;
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

/// What a session shares between its supervisor thread and whoever answers its questions.
pub struct Shared {
    pub info: Arc<Info>,
    policy: Policy,
    listener: OwnedFd,
    log: Mutex<Option<Log>>,
    /// Said once in the daemon's log: a line could not be written.
    log_failed: AtomicBool,
    /// Timed grants ([t], and [a] when the rules file cannot be written): scope and expiry.
    timed: Mutex<Vec<(PathBuf, Duration)>>,
    /// The answers once and deny whose process's follow-up calls they still decide.
    bursts: Mutex<Bursts>,
    timed_for: Duration,
    home: PathBuf,
    /// Where the notifications held are noted, for the next daemon if this one dies.
    journal: Option<Journal>,
    /// Strict-mode opens waiting for a FIFO's other end.
    waiting: std::sync::atomic::AtomicUsize,
    /// The session's terminals.
    ttys: Vec<PathBuf>,
    /// The same by device, and the ptys the session made: the terminals its commands may
    /// change undecided.
    own: Arc<crate::terminal::Own>,
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
            makes_dir: matches!(syscall, "mkdir" | "mkdirat"),
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

    /// The decision of an answer once or deny whose burst a call of thread `tid` to
    /// `syscall` writing `files` follows (`burst.rs`), if any: asked only for a write that
    /// would be asked.
    pub fn follow_up(&self, tid: i32, syscall: &str, files: &[&Path]) -> Option<Decision> {
        let who = process_of(tid)?;
        let bursts = self.bursts.lock().unwrap();
        bursts.decide(who, syscall, files, boot_time())
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

    /// Writes one log line, if the session has a log. `false` when the line could not be
    /// written: the caller then refuses a write it was to allow (`EACCES`), since audit mode
    /// promises a line for every write it allows. The launcher is told through the journal
    /// (it says so once, and counts the lines lost at the end); the daemon's log says it once.
    #[must_use = "an allowed write whose line is lost must be refused"]
    pub fn record(
        &self,
        pid: i32,
        exe: &str,
        syscall: &str,
        path: &str,
        decision: Decision,
        reason: Reason,
    ) -> bool {
        // What the launcher says at the end: refusals no one decided, log or no log.
        if decision != Decision::Allow {
            if let Some(j) = self.journal() {
                j.refused(reason.as_str(), path.as_bytes());
            }
        }
        let mut log = self.log.lock().unwrap();
        let Some(log) = log.as_mut() else {
            return true;
        };
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
        let Err(e) = log.write(&rec) else {
            return true;
        };
        let allowed = decision == Decision::Allow;
        if let Some(j) = self.journal() {
            j.log_lost(e.raw_os_error().unwrap_or(libc::EIO), allowed);
        }
        if !self.log_failed.swap(true, Ordering::Relaxed) {
            say!(
                "hallpassd: session {}: cannot write the log ({e}): writes it would record as allowed are refused",
                self.info.id
            );
        }
        false
    }
}

/// The process of thread `tid`, as one that its id names only once.
fn process_of(tid: i32) -> Option<Process> {
    let tgid = tgid_of(tid)?;
    let start = crate::process::start_time(tgid)?;
    let exe = std::fs::metadata(format!("/proc/{tgid}/exe")).ok()?;
    Some(Process {
        tgid,
        start,
        exe: (
            std::os::unix::fs::MetadataExt::dev(&exe),
            std::os::unix::fs::MetadataExt::ino(&exe),
        ),
    })
}

/// What questions need of the session they wait in.
impl crate::ask::Host for Shared {
    fn hold(&self, n: &seccomp::Notif) -> Result<Option<usize>, crate::ask::JournalFull> {
        match self.journal() {
            Some(j) => j.hold(n).map(Some).ok_or(crate::ask::JournalFull),
            None => Ok(None),
        }
    }

    fn release(&self, slot: usize, id: u64) {
        if let Some(j) = self.journal() {
            j.release(slot, id);
        }
    }

    fn home(&self) -> &Path {
        Shared::home(self)
    }

    fn asked(&self) {
        self.info.questions.fetch_add(1, Ordering::Relaxed);
    }

    fn decide(&self, syscall: &str, files: &[&Path], rules: &Rules) -> (Decision, Reason, usize) {
        Shared::decide(self, syscall, files, rules)
    }

    fn grant_for_a_while(&self, scope: PathBuf) {
        Shared::grant_for_a_while(self, scope)
    }

    fn grant_for_the_session(&self, scope: PathBuf) {
        Shared::grant_for_the_session(self, scope)
    }

    fn answered_once(&self, tid: i32, syscall: &str, paths: &[PathBuf], decision: Decision) {
        let Some(who) = process_of(tid) else { return };
        let mut bursts = self.bursts.lock().unwrap();
        bursts.answered(who, syscall, paths, decision, boot_time());
    }

    fn count(&self, decision: Decision) {
        Shared::count(self, decision)
    }

    fn record(
        &self,
        pid: i32,
        exe: &str,
        syscall: &str,
        path: &str,
        d: Decision,
        r: Reason,
    ) -> bool {
        Shared::record(self, pid, exe, syscall, path, d, r)
    }

    fn reply(&self, id: u64, reply: Reply) {
        let _ = seccomp::send(self.listener(), id, reply);
    }

    fn perform(self: Arc<Self>, id: u64, tid: i32, action: Action, slot: Option<usize>) {
        // A send may wait for its receiver: it takes a place among the waiting writes.
        let fifo = action.may_block() || action.sends();
        perform_later(self, id, tid, action, slot, fifo);
    }

    fn live(&self) -> bool {
        self.info.live.load(Ordering::Relaxed)
    }

    fn waiting(&self, id: u64) -> bool {
        seccomp::id_valid(self.listener(), id)
    }
}
