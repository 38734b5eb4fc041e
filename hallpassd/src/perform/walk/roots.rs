//! Where a lookup starts and what it may reach: the daemon's root, and the places under
//! `/proc` that belong to the process, to the session, or to nobody it may reach.

use super::*;

/// What every lookup of a session starts from, opened once: the root, and `/proc`'s device
/// and inode (a walk that steps into `/proc` takes `self` for the target) and the name the
/// kernel gives it (where its entries are placed).
pub struct Roots {
    pub(super) root: OwnedFd,
    pub(super) proc_dev: u64,
    pub(super) proc_ino: u64,
    pub(super) proc_path: PathBuf,
    /// `fs.protected_symlinks` is on (the default of most distributions).
    pub(super) protected_symlinks: bool,
}

impl Roots {
    pub fn new() -> Sys<Roots> {
        let root = fsops::open_path(None, c"/", false)?;
        let proc = fsops::open_path(None, c"/proc", false)?;
        let st = fsops::fstat(proc.as_fd())?;
        let proc_path = path_of(proc.as_fd())?.ok_or(Errno::ENOENT)?;
        let protected_symlinks = std::fs::read_to_string("/proc/sys/fs/protected_symlinks")
            .map_or(true, |v| v.trim() != "0");
        Ok(Roots {
            root,
            proc_dev: st.st_dev,
            proc_ino: st.st_ino,
            proc_path,
            protected_symlinks,
        })
    }

    /// A descriptor of the root, to walk an absolute path from.
    pub fn root(&self) -> Sys<OwnedFd> {
        dup(&self.root)
    }

    /// Where object `fd` (device `dev`, named `path` as checked) is, for reach.
    pub(super) fn place(&self, fd: BorrowedFd<'_>, path: &std::path::Path, dev: u64) -> Sys<Place> {
        if dev != self.proc_dev {
            return Ok(if self.other_proc(fd, dev)? {
                Place::Unknown
            } else {
                Place::Elsewhere
            });
        }
        // The kernel names an object of this proc file system by the mount it was reached
        // through: `/proc/...`, or another place it is bound to, which cannot be told apart.
        let Ok(rest) = path.strip_prefix(&self.proc_path) else {
            return Ok(Place::Unknown);
        };
        let mut c = rest.components();
        let Some(first) = c.next() else {
            return Ok(Place::Proc);
        };
        let first = first.as_os_str().as_bytes();
        if !first.first().is_some_and(u8::is_ascii_digit) {
            return Ok(Place::Proc);
        }
        // A process's directory; one named otherwise (`123 (deleted)`: it died) is not
        // placed.
        match std::str::from_utf8(first)
            .ok()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            Some(n) => Ok(Place::Pid {
                pid: n.parse().map_err(|_| Errno::EACCES)?,
                top: c.next().is_none(),
            }),
            None => Ok(Place::Unknown),
        }
    }

    /// Whether `fd`, on device `dev`, is on a proc file system other than `/proc`'s (one
    /// mounted elsewhere, a container's). Asked only of anonymous devices, where every
    /// instance of procfs is.
    pub(super) fn other_proc(&self, fd: BorrowedFd<'_>, dev: u64) -> Sys<bool> {
        if dev == self.proc_dev || libc::major(dev) != 0 {
            return Ok(false);
        }
        fsops::is_procfs(fd)
    }
}

/// Where an object is, as far as reach goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Not on a proc file system.
    Elsewhere,
    /// On `/proc`, not under a process's directory (`/proc` itself, `/proc/sys/...`).
    Proc,
    /// `/proc/PID` itself (`top`) or something under it.
    Pid { pid: i32, top: bool },
    /// On a proc file system the daemon cannot place: refused.
    Unknown,
}
