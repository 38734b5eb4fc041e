//! The policy: is this resolved path writable, and if not, what happens. Plain functions over
//! data, no syscalls, so every rule is tested here exhaustively.
//!
//! Order (docs/architecture.md, "One write"): the always-denied set, then `--deny-path` and the
//! lasting "never" rules, then grants (implicit, `--allow-path`, timed answers, lasting
//! "always" rules), then the prompt mode for the rest. The denied paths' parent directories
//! cannot be renamed, removed or replaced either, and the name of the project or `$TMPDIR`
//! (or a directory above them) is not theirs to change ([`Policy::decide_syscall`]). A
//! profile's ask entries take back what `--allow-path` and the profiles' allow entries give
//! around them ([`Policy::allows`]).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hallpass_proto::pattern::{self, Pattern};

/// What the session does with a write no rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prompt {
    /// Ask a person (terminal, `hallpass answer`, desktop).
    Ask,
    /// Audit: allow, and log with reason `audit`.
    Allow,
    /// Unattended: fail with EACCES, and log with reason `unattended`.
    Deny,
}

/// The outcome for one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    /// Nobody decided: ask.
    Ask,
}

/// Why. The string forms are the log's `reason` values, documented in README.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The project, the session's `$TMPDIR`, the usual devices, the terminal.
    Implicit,
    /// A rule decided: `--allow-path` or `--deny-path`.
    Policy,
    /// hallpass's own files: its configuration, binaries, runtime directory and log.
    Protected,
    /// Allowed because `--prompt=allow` audits instead of asking.
    Audit,
    /// Denied because `--prompt=deny` denies instead of asking.
    Unattended,
    /// The daemon could not tell what would be written (unreadable argument, a process that
    /// vanished): denied, fail closed.
    Unresolved,
    /// A person allowed this one syscall ([o]).
    Once,
    /// A person allowed the scope for a while ([t]), in this session.
    Timed,
    /// A lasting "allow" rule: a person answered always ([a]), or `hallpass rules add`.
    Always,
    /// A person denied this one syscall ([d]).
    Denied,
    /// A lasting "deny" rule: a person answered never ([n]), or `hallpass rules add`.
    Never,
    /// The question was still open when its session ended or its process went away: the
    /// write did not happen.
    Unanswered,
    /// A connection to a service outside the session that no rule decided: allowed by lite
    /// mode or `--prompt=allow`, denied by `--prompt=deny`.
    Service,
    /// The same process's next call on a file a person just answered [o] or [d] for,
    /// decided as they answered (`burst.rs`).
    FollowUp,
    /// The kernel refuses it anyway: the process's own credentials may not make this write
    /// (permissions, a read-only file system). It fails as it would without hallpass,
    /// unasked (`perform/refusal.rs`).
    Refused,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Implicit => "implicit",
            Reason::Policy => "policy",
            Reason::Protected => "protected",
            Reason::Audit => "audit",
            Reason::Unattended => "unattended",
            Reason::Unresolved => "unresolved",
            Reason::Once => "once",
            Reason::Timed => "timed",
            Reason::Always => "always",
            Reason::Denied => "denied",
            Reason::Never => "never",
            Reason::Unanswered => "unanswered",
            Reason::Service => "service",
            Reason::FollowUp => "follow-up",
            Reason::Refused => "refused",
        }
    }
}

/// Whether `path` is `dir` or below it, comparing whole components (`/a/bc` is not below
/// `/a/b`). Both are absolute and normalized (no `.`, `..`, `//` or trailing `/`), as
/// [`crate::resolve`] makes them, so a byte comparison is exact; it runs for every write, and
/// `Path::starts_with`, which re-parses components, was a visible share of the daemon's time.
pub fn is_within(path: &Path, dir: &Path) -> bool {
    let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    p.starts_with(d) && (p.len() == d.len() || d == b"/" || p[d.len()] == b'/')
}

/// A set of paths, each covering itself and everything below it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathSet(Vec<PathBuf>);

impl PathSet {
    pub fn new(paths: impl IntoIterator<Item = PathBuf>) -> PathSet {
        PathSet(paths.into_iter().collect())
    }

    pub fn push(&mut self, p: PathBuf) {
        self.0.push(p);
    }

    /// Whether `path` is one of the set or below one. Compares whole components, so `/a/bc` is
    /// not below `/a/b`.
    pub fn covers(&self, path: &Path) -> bool {
        self.0.iter().any(|p| is_within(path, p))
    }

    /// The depth ([`pattern::depth`]) of the deepest path of the set that covers `path`.
    pub fn deepest(&self, path: &Path) -> Option<usize> {
        self.0
            .iter()
            .filter(|p| is_within(path, p))
            .map(|p| pattern::depth(p))
            .max()
    }

    /// Whether `dir` is one of the set or a parent directory of one: renaming or removing it
    /// would take a path of the set along.
    pub fn holds(&self, dir: &Path) -> bool {
        self.0.iter().any(|p| is_within(p, dir))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &PathBuf> {
        self.0.iter()
    }
}

/// Whether `p` names a terminal (`/dev/tty*`, `/dev/pts/*`, `/dev/console`).
fn is_terminal(p: &Path) -> bool {
    let b = p.as_os_str().as_bytes();
    b.starts_with(b"/dev/tty") || b.starts_with(b"/dev/pts/") || b == b"/dev/console"
}

/// Time since boot, suspended time included (`CLOCK_BOOTTIME`): a grant "for 5 minutes" must
/// not outlast a night of suspend, as it would on the monotonic clock.
pub fn boot_time() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
        .map(Duration::from)
        .unwrap_or_default()
}

/// What people answered before: the lasting rules (every session) and this session's timed
/// grants, with their expiry (in [`boot_time`]).
#[derive(Clone, Copy, Debug)]
pub struct Answered<'a> {
    pub never: &'a PathSet,
    pub always: &'a PathSet,
    pub timed: &'a [(PathBuf, Duration)],
    pub now: Duration,
}

#[cfg(test)]
static NO_PATHS: PathSet = PathSet(Vec::new());

impl Answered<'_> {
    /// Nothing answered yet.
    #[cfg(test)]
    pub fn none() -> Answered<'static> {
        Answered {
            never: &NO_PATHS,
            always: &NO_PATHS,
            timed: &[],
            now: boot_time(),
        }
    }

    fn timed_covers(&self, path: &Path) -> bool {
        self.timed
            .iter()
            .any(|(p, until)| *until > self.now && is_within(path, p))
    }
}

/// What a syscall does to the paths it writes, as far as the policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// It renames, removes or links names ([`crate::syscalls::Syscall::names`]).
    pub names: bool,
    /// It writes an object's content (an open for writing, `truncate`, an `ioctl`), not its
    /// name or metadata.
    pub content: bool,
    /// It connects to the service listening on the path ([`Policy::decide_connect`]).
    pub connect: bool,
    /// It makes a directory (`mkdir`): one on the way to an allowed path is allowed, empty
    /// as it is made, so that a tool's first run can make `~/.claude` for
    /// `~/.claude/projects` ([`Policy::allows`]).
    pub makes_dir: bool,
}

impl Call {
    /// A write of an object's content, an open for writing.
    #[cfg(test)]
    pub const CONTENT: Call = Call {
        names: false,
        content: true,
        connect: false,
        makes_dir: false,
    };
    /// A connection to a service.
    const CONNECT: Call = Call {
        names: false,
        content: false,
        connect: true,
        makes_dir: false,
    };
}

/// A session's rules, with every path already absolute and resolved.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Never writable: hallpass's own files and `--deny-path`, kept apart for the reason.
    pub protected: PathSet,
    pub denied: PathSet,
    /// `--allow-path`, and the profiles' plain allow entries.
    pub allowed: PathSet,
    /// The profiles' allow entries with a `*` in a name (`~/.claude.json.tmp.*`).
    pub allowed_patterns: Vec<Pattern>,
    /// The profiles' ask entries: what `allowed` and `allowed_patterns` give around them,
    /// they take back ([`Policy::allows`]).
    pub asked: Vec<Pattern>,
    /// Writable without a rule: the project, the session's `$TMPDIR` (directories).
    pub implicit_dirs: PathSet,
    /// Writable without a rule: the devices and the terminal (exact paths only).
    pub implicit_files: Vec<PathBuf>,
    /// Services reached without asking: [`DEFAULT_SERVICES`] and `--allow-service`.
    pub services: PathSet,
    pub prompt: Prompt,
}

/// Services that cannot write for the caller, reached without asking in strict mode: the
/// journal's and syslog's sockets (they store a log line) and nscd's (it answers lookups).
pub const DEFAULT_SERVICES: [&str; 6] = [
    "/dev/log",
    "/run/systemd/journal/dev-log",
    "/run/systemd/journal/socket",
    "/run/systemd/journal/stdout",
    "/run/nscd/socket",
    "/var/run/nscd/socket",
];

/// The usual devices, writable in every session but under `--no-implicit`.
pub const IMPLICIT_DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

impl Policy {
    /// The decision for a write to `path` (absolute, resolved as the target sees it).
    #[cfg(test)]
    pub fn decide(&self, path: &Path, answered: &Answered) -> (Decision, Reason) {
        self.decide_as(path, answered, Call::CONTENT)
    }

    /// [`Policy::decide`] for a write that does or does not write `content` (an open, an
    /// ioctl): the implicit devices and the terminal are writable, not renamed, removed or
    /// changed in mode, owner or times (`chmod 600 /dev/null`, `rm /dev/full`).
    fn decide_as(&self, path: &Path, answered: &Answered, call: Call) -> (Decision, Reason) {
        self.decide_granted(path, answered, call, true)
    }

    /// [`Policy::decide_as`]; `grants`: whether the static grants (the implicit directories
    /// and files, `--allow-path`, profiles) may allow it, which they may not for the name of
    /// a root ([`Policy::names_a_root`]).
    fn decide_granted(
        &self,
        path: &Path,
        answered: &Answered,
        call: Call,
        grants: bool,
    ) -> (Decision, Reason) {
        let content = call.content;
        if self.protected.covers(path) {
            return (Decision::Deny, Reason::Protected);
        }
        if self.denied.covers(path) {
            return (Decision::Deny, Reason::Policy);
        }
        if answered.never.covers(path) {
            return (Decision::Deny, Reason::Never);
        }
        if grants
            && (self.implicit_dirs.covers(path)
                || (content && self.implicit_files.iter().any(|f| f == path)))
        {
            return (Decision::Allow, Reason::Implicit);
        }
        if grants && self.allows(path, call) {
            return (Decision::Allow, Reason::Policy);
        }
        if answered.timed_covers(path) {
            return (Decision::Allow, Reason::Timed);
        }
        if answered.always.covers(path) {
            return (Decision::Allow, Reason::Always);
        }
        match self.prompt {
            Prompt::Allow => (Decision::Allow, Reason::Audit),
            Prompt::Deny => (Decision::Deny, Reason::Unattended),
            Prompt::Ask => (Decision::Ask, Reason::Policy),
        }
    }

    /// The decision for a connection to the service listening on the socket `path`, as for a
    /// write of it, but for the services that need no question (the defaults and
    /// `--allow-service`) and the reason `service` where the prompt mode decides.
    pub fn decide_connect(&self, path: &Path, answered: &Answered) -> (Decision, Reason) {
        let (d, r) = self.decide_as(path, answered, Call::CONNECT);
        let by_prompt = d == Decision::Ask || matches!(r, Reason::Audit | Reason::Unattended);
        if by_prompt && self.services.covers(path) {
            return (Decision::Allow, Reason::Policy);
        }
        match r {
            Reason::Audit | Reason::Unattended => (d, Reason::Service),
            _ => (d, r),
        }
    }

    /// Whether `--allow-path` or a profile's allow entry decides `path`: one covers it and no
    /// ask entry covers it deeper (the deeper entry decides; allow when as deep). A call that
    /// renames, removes or links (`names`) `path` is not allowed either when an ask entry
    /// lies at or below it: moving it would move what is asked (`mv x ~/.gemini/tmp` with a
    /// `bin/rg` of one's own in `x`). A directory made on the way to an allowed path is.
    fn allows(&self, path: &Path, call: Call) -> bool {
        let on_the_way = |p: &Pattern| p.holds(path);
        if call.makes_dir
            && (self.allowed.holds(path) || self.allowed_patterns.iter().any(on_the_way))
        {
            return true;
        }
        if self.asked.is_empty() {
            return self.allowed.covers(path)
                || self
                    .allowed_patterns
                    .iter()
                    .any(|p| p.covers(path).is_some());
        }
        let plain = self.allowed.deepest(path);
        let patterns = self.allowed_patterns.iter().filter_map(|p| p.covers(path));
        let allow = patterns.max().max(plain);
        if allow.is_none() || (call.names && self.asked.iter().any(|q| q.holds(path))) {
            return false;
        }
        let ask = self.asked.iter().filter_map(|q| q.covers(path)).max();
        pattern::allow_wins(allow, ask)
    }

    /// Whether `dir` is a denied path or a parent directory of one, and if so the reason that
    /// path is denied with: renaming, removing or replacing `dir` would change what the denied
    /// path is (`mv .git x; echo evil > x/hooks/pre-commit; mv x .git` under
    /// `--deny-path .git/hooks`).
    fn holds_denied(&self, dir: &Path, answered: &Answered) -> Option<Reason> {
        if self.protected.holds(dir) {
            Some(Reason::Protected)
        } else if self.denied.holds(dir) {
            Some(Reason::Policy)
        } else if answered.never.holds(dir) {
            Some(Reason::Never)
        } else {
            None
        }
    }

    /// Whether `dir` is the name of a root of what the session may write unasked, which is
    /// not inside it: the project or the session's `$TMPDIR` itself, or a directory above
    /// one of them or above an `--allow-path`. Renaming, removing or replacing it (`mv
    /// PROJECT $TMPDIR/x && ln -s /elsewhere PROJECT`) changes what the name is for every
    /// later session and tool that names it: the next `cd PROJECT && hallpass` would take
    /// `/elsewhere` for the project. An `--allow-path` itself keeps its grant (a file there
    /// is replaced by a rename when written atomically): the next session refuses one with
    /// a symlink on the way.
    fn names_a_root(&self, dir: &Path) -> bool {
        self.implicit_dirs.holds(dir) || self.allowed.iter().any(|r| r != dir && is_within(r, dir))
    }

    /// The decision for a syscall writing `paths`: [`Policy::decide_all`], except that a
    /// syscall that changes `names` (renames, removes, links: see
    /// [`crate::syscalls::Syscall::names`]) is denied on a parent of a denied path, whatever
    /// else allows it, and decided like a write outside on the name of a root
    /// ([`Policy::names_a_root`]); and only one that writes `content` may use the implicit
    /// devices.
    pub fn decide_syscall(
        &self,
        paths: &[&Path],
        call: Call,
        answered: &Answered,
    ) -> (Decision, Reason, usize) {
        if call.connect {
            let (d, r) = self.decide_connect(paths[0], answered);
            return (d, r, 0);
        }
        if call.names {
            for (i, p) in paths.iter().enumerate() {
                if let Some(reason) = self.holds_denied(p, answered) {
                    return (Decision::Deny, reason, i);
                }
            }
        }
        self.decide_each(paths, answered, call)
    }

    /// What a strict session's Landlock domain may write: the static allowlist (the implicit
    /// directories and files, `--allow-path`), less every path with a protected or denied
    /// path at, above or below it, and every allowed path holding an ask entry (patterns are
    /// no Landlock rules: what they allow is performed). Inside these the daemon lets the
    /// kernel make the writes it allows, and the kernel refuses any that a race sends
    /// elsewhere; that is sound only if everything the domain lets through is also what the
    /// policy allows, whatever the path.
    /// A project holding a `--deny-path` is left out: its writes are performed instead.
    pub fn landlock_roots(&self) -> Vec<PathBuf> {
        let overlaps = |r: &Path| {
            let set_overlaps = |s: &PathSet| s.covers(r) || s.holds(r);
            set_overlaps(&self.protected) || set_overlaps(&self.denied)
        };
        let asks = |r: &Path| self.asked.iter().any(|q| q.holds(r));
        self.implicit_dirs
            .iter()
            .chain(self.allowed.iter().filter(|r| !asks(r)))
            .chain(self.implicit_files.iter())
            .filter(|r| !overlaps(r))
            // No terminal: `/dev/tty` opens whichever terminal is the process's controlling
            // one, and the domain, which sees `/dev/tty`, cannot tell them apart (the policy
            // decides it as the terminal it stands for); the daemon performs those opens.
            .filter(|r| !is_terminal(r))
            .cloned()
            .collect()
    }

    /// The decision for a syscall that writes several paths (a rename, a link): denied if any
    /// is denied, asked if any is asked, allowed only if all are. Returns the index of the path
    /// that decided, for the log.
    #[cfg(test)]
    pub fn decide_all(&self, paths: &[&Path], answered: &Answered) -> (Decision, Reason, usize) {
        self.decide_each(paths, answered, Call::CONTENT)
    }

    fn decide_each(
        &self,
        paths: &[&Path],
        answered: &Answered,
        call: Call,
    ) -> (Decision, Reason, usize) {
        let mut worst = (Decision::Allow, Reason::Implicit, 0);
        for (i, p) in paths.iter().enumerate() {
            let grants = !(call.names && self.names_a_root(p));
            let (d, r) = self.decide_granted(p, answered, call, grants);
            let rank = |d: Decision| match d {
                Decision::Allow => 0,
                Decision::Ask => 1,
                Decision::Deny => 2,
            };
            // Among allowed paths report a logged reason over an implicit one.
            let better_reason =
                d == worst.0 && worst.1 == Reason::Implicit && r != Reason::Implicit;
            if i == 0 || rank(d) > rank(worst.0) || better_reason {
                worst = (d, r, i);
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod ask_tests;
