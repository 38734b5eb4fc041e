//! Who is on the other end of a socket: same user only (`SO_PEERCRED`), and never a process
//! the daemon supervises, which must not register sessions, answer questions or change rules.

use std::os::unix::net::UnixStream;

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

/// A checked peer.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub pid: i32,
    pub uid: u32,
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
    #[error("cannot trace the ancestry of peer pid {pid}")]
    Unknown { pid: i32 },
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
    // Every supervised process descends from its launcher, which is a child subreaper. An
    // ancestry we cannot read to the end (a peer that already exited) is refused.
    let unknown = || PeerError::Unknown { pid: c.pid() };
    if c.pid() <= 0 {
        return Err(unknown());
    }
    let mut p = parent_of(c.pid()).ok_or_else(unknown)?;
    for _ in 0..4096 {
        if p <= 1 {
            return Ok(Peer {
                pid: c.pid(),
                uid: c.uid(),
            });
        }
        // A launcher this daemon knows, or any `hallpass` launcher: one whose session a
        // previous daemon had, not registered here yet (this daemon just started).
        if launchers.contains(&p) || is_launcher(p) {
            return Err(PeerError::Supervised {
                pid: c.pid(),
                launcher: p,
            });
        }
        p = parent_of(p).ok_or_else(unknown)?;
    }
    Err(unknown())
}

/// The parent of `pid`, from `/proc/PID/stat` (the field after the parenthesised name).
/// Whether `pid` runs the `hallpass` launcher. Its `comm`, which stays readable when the
/// launcher is not dumpable (as it makes itself); a supervised process cannot change its
/// ancestors' names.
fn is_launcher(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim_end() == "hallpass")
}

pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents() {
        assert_eq!(
            parent_of(std::process::id() as i32),
            Some(nix::unistd::getppid().as_raw())
        );
        assert_eq!(parent_of(-5), None);
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
}
