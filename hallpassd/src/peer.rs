//! Who is on the other end of a socket: same user only (`SO_PEERCRED`), and never a process
//! the daemon supervises, which must not register sessions, answer questions or change rules.
//!
//! A supervised process is known by a mark the kernel keeps: it runs under a seccomp filter
//! (`Seccomp: 2` in `/proc/PID/status`, with `no_new_privs`), which it can neither remove
//! nor leave behind in a child, and which stays when its launcher is gone. Ancestry alone is
//! not enough: a process the command leaves behind that outlives the session has no
//! launcher above it any more. So every peer under a seccomp filter with `no_new_privs` is
//! refused, whatever installed them (the launcher sets both before the command runs, and
//! neither can be undone): `hallpass answer`, `hallpass rules`, `hallpass status` and
//! launchers must run outside such a sandbox (a container's default seccomp profile, which
//! leaves `no_new_privs` off, is fine). A launcher ancestor is still looked for too (it names
//! the session in the refusal).
//!
//! Other marks considered: a Landlock domain cannot be asked about from outside; Landlock's
//! abstract Unix socket scope (ABI 6, Linux 6.12) would keep a scoped command from reaching an
//! abstract socket of the daemon, but it needs that kernel (the seccomp mark is needed as the
//! floor anyway), an abstract name any user of the network namespace can take first (so
//! clients would have to check the server too), and it would cut the command off from every
//! abstract socket outside the session (X11, D-Bus). The seccomp mark is there on every kernel
//! hallpass runs on.
//!
//! The pid `SO_PEERCRED` gives is the connecting process's at connect time. Everything read
//! under `/proc/PID` is read while a pidfd of that process is held (`SO_PEERPIDFD`, Linux
//! 6.5, else `pidfd_open` at once), and counts only if the process is still alive after the
//! reads: then the pid was still its own. A peer that is gone is refused.

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

use crate::process::parent_of;
use crate::sys;

/// A checked peer: it runs as the daemon's user.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub pid: i32,
}

/// Why a peer was turned away.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("cannot read peer credentials: {0}")]
    Creds(nix::Error),
    #[error("peer pid {pid} runs as uid {uid}, not {me}")]
    OtherUser { pid: i32, uid: u32, me: u32 },
    #[error("peer pid {pid} is supervised by session launcher {launcher}")]
    Supervised { pid: i32, launcher: i32 },
    #[error(
        "peer pid {pid} runs under a seccomp filter with no_new_privs (Seccomp: {mode}, \
         {filters} filter(s)), as every process hallpass supervises does, even after its \
         session ended; run `hallpass answer`, `hallpass rules`, `hallpass status` and \
         `hallpass -- COMMAND` outside such a sandbox"
    )]
    Sandboxed { pid: i32, mode: u32, filters: u32 },
    #[error(
        "pid {pid} is hallpassd itself, which in strict mode makes the connections of \
         supervised processes (a service sees its pid)"
    )]
    Daemon { pid: i32 },
    #[error("cannot trace the ancestry of peer pid {pid}")]
    Unknown { pid: i32 },
    #[error("cannot tell whether peer pid {pid} is supervised: {why}")]
    Unreadable { pid: i32, why: String },
}

/// What `/proc/PID/status` says of a process's seccomp state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seccomp {
    /// 0: none, 1: strict, 2: filter.
    pub mode: u32,
    /// How many filters it runs under (0 on kernels before 5.9, which cannot supervise).
    pub filters: u32,
    pub no_new_privs: bool,
}

/// The seccomp state in the text of a `/proc/PID/status` file; `None` if it does not say
/// (a kernel without seccomp: read as unknown, never as unfiltered).
impl Seccomp {
    /// Whether this is the mark every supervised process has: a seccomp filter and
    /// no_new_privs. A container's default seccomp profile comes without no_new_privs, so
    /// `hallpass answer` still works inside one.
    pub fn marks_supervised(&self) -> bool {
        self.mode != 0 && self.no_new_privs
    }
}

pub fn parse_seccomp(status: &str) -> Option<Seccomp> {
    let field = |name: &str| -> Option<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(Seccomp {
        mode: field("Seccomp")?,
        filters: field("Seccomp_filters").unwrap_or(0),
        no_new_privs: field("NoNewPrivs")? != 0,
    })
}

/// The seccomp state of process `pid`.
pub fn seccomp_of(pid: i32) -> Result<Seccomp, String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    parse_seccomp(&text).ok_or_else(|| "its status has no Seccomp and NoNewPrivs fields".into())
}

/// Checks the peer of `stream`; `launchers` are the pids of the live sessions' launchers.
pub fn check(stream: &UnixStream, launchers: &[i32]) -> Result<Peer, PeerError> {
    let c = getsockopt(stream, PeerCredentials).map_err(PeerError::Creds)?;
    let me = nix::unistd::geteuid().as_raw();
    if c.uid() != me {
        return Err(PeerError::OtherUser {
            pid: c.pid(),
            uid: c.uid(),
            me,
        });
    }
    let pid = c.pid();
    if pid <= 0 {
        return Err(PeerError::Unknown { pid });
    }
    // The process that connected, held while we read about it (see the module's doc).
    let pidfd = sys::peer::peer_pidfd(stream.as_fd()).or_else(|_| sys::fsops::pidfd_open(pid));
    unsupervised(pid, pidfd, launchers).map(|()| Peer { pid })
}

/// Whether process `pid`, of any user, is free of every session: neither under a seccomp
/// filter with no_new_privs nor below a launcher. What a client asks of a process it is to
/// trust (the desktop notifier, of the notification server on the bus). The pid is held as
/// a pidfd from now on, and the verdict counts only if it is still alive after.
pub fn process(pid: i32, launchers: &[i32]) -> Result<(), PeerError> {
    if pid <= 0 {
        return Err(PeerError::Unknown { pid });
    }
    // Strict mode connects for the command: a connection of ours is a session's.
    if pid == std::process::id() as i32 {
        return Err(PeerError::Daemon { pid });
    }
    unsupervised(pid, sys::fsops::pidfd_open(pid), launchers)
}

/// The verdict on `pid`, read while `pidfd` holds it.
fn unsupervised(
    pid: i32,
    pidfd: Result<std::os::fd::OwnedFd, nix::errno::Errno>,
    launchers: &[i32],
) -> Result<(), PeerError> {
    let unknown = || PeerError::Unknown { pid };
    let pidfd = pidfd.map_err(|_| unknown())?;
    let verdict = ancestry(pid, launchers).and_then(|()| match seccomp_of(pid) {
        Ok(s) if !s.marks_supervised() => Ok(()),
        Ok(s) => Err(PeerError::Sandboxed {
            pid,
            mode: s.mode,
            filters: s.filters,
        }),
        Err(why) => Err(PeerError::Unreadable { pid, why }),
    });
    // A verdict on a pid that has since been reaped may be about another process.
    if !sys::peer::alive(pidfd.as_fd()) {
        return Err(unknown());
    }
    verdict
}

/// Every supervised process descends from its launcher, which is a child subreaper, as long
/// as the launcher lives. An ancestry we cannot read to the end (a peer that already exited)
/// is refused.
fn ancestry(pid: i32, launchers: &[i32]) -> Result<(), PeerError> {
    let unknown = || PeerError::Unknown { pid };
    let mut p = parent_of(pid).ok_or_else(unknown)?;
    for _ in 0..4096 {
        if p <= 1 {
            return Ok(());
        }
        // A launcher this daemon knows, or any `hallpass` launcher: one whose session a
        // previous daemon had, not registered here yet (this daemon just started).
        if launchers.contains(&p) || is_launcher(p) {
            return Err(PeerError::Supervised { pid, launcher: p });
        }
        p = parent_of(p).ok_or_else(unknown)?;
    }
    Err(unknown())
}

/// Whether `pid` runs the `hallpass` launcher. Its `comm`, which stays readable when the
/// launcher is not dumpable (as it makes itself); a supervised process cannot change its
/// ancestors' names.
fn is_launcher(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim_end() == "hallpass")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seccomp_mark() {
        let filtered = "Name:\tsh\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\nSpeculation_Store_Bypass:\tx\n";
        assert_eq!(
            parse_seccomp(filtered),
            Some(Seccomp {
                mode: 2,
                filters: 1,
                no_new_privs: true
            })
        );
        let container = "NoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert!(!parse_seccomp(container).unwrap().marks_supervised());
        assert!(parse_seccomp(filtered).unwrap().marks_supervised());
        let free = "NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n";
        assert_eq!(parse_seccomp(free).map(|s| s.mode), Some(0));
        // A status that does not say is not read as unfiltered.
        assert_eq!(parse_seccomp("Name:\tsh\nNoNewPrivs:\t0\n"), None);
        assert_eq!(parse_seccomp("Seccomp:\tx\nNoNewPrivs:\t0\n"), None);
        // This test process runs under none (the tests must run outside any sandbox).
        assert_eq!(seccomp_of(std::process::id() as i32).unwrap().mode, 0);
        assert!(seccomp_of(-5).is_err());
    }

    #[test]
    fn same_user_passes_and_a_launcher_ancestor_fails() {
        let (a, _b) = UnixStream::pair().unwrap();
        assert!(check(&a, &[]).is_ok());
        let parent = nix::unistd::getppid().as_raw();
        match check(&a, &[parent]) {
            Err(PeerError::Supervised { launcher, .. }) => assert_eq!(launcher, parent),
            other => panic!("{other:?}"),
        }
    }

    /// What `CheckProcess` answers: this test process is free (it runs outside any
    /// sandbox); the daemon's own pid is a session's (strict mode connects for the
    /// command); a pid that is no process cannot be told.
    #[test]
    fn a_process_checked_by_pid() {
        let parent = nix::unistd::getppid().as_raw();
        assert!(process(parent, &[]).is_ok());
        assert!(matches!(
            process(std::process::id() as i32, &[]),
            Err(PeerError::Daemon { .. })
        ));
        assert!(matches!(process(0, &[]), Err(PeerError::Unknown { .. })));
        // A process below a launcher is a session's.
        let mut child = std::process::Command::new("sleep")
            .arg("10")
            .spawn()
            .unwrap();
        let me = nix::unistd::getpid().as_raw();
        let verdict = process(child.id() as i32, &[me]);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            matches!(verdict, Err(PeerError::Supervised { launcher, .. }) if launcher == me),
            "{verdict:?}"
        );
    }
}
