//! A process's descriptors, taken for the daemon: a copy of one (`pidfd_getfd(2)`), or, where
//! the daemon may not take it (Yama `ptrace_scope`), one lent by the launcher, an ancestor of
//! the process. Both lite mode's decoder and strict mode's performing take them here.

use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;

use crate::mem::{Lender, Memory};
use crate::sys::fsops::{self, Sys};

/// A copy of thread `tid`'s descriptor `fd`: strict mode's `take_fd` (`perform/emulate/`)
/// for its `Target`, and this for a caller with none (lite mode's decoder).
pub fn take_fd_of(tid: i32, fd: i32, mem: &Memory, lender: &mut dyn Lender) -> Sys<OwnedFd> {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    // Where the daemon may not take it (Yama), the launcher, an ancestor, can.
    let own = if mem.lends() {
        Err(Errno::EPERM)
    } else {
        getfd(tid, fd)
    };
    match own {
        Err(Errno::EPERM) | Err(Errno::EACCES) => lender
            .lend_fd(tid, fd)
            .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EPERM))),
        r => r,
    }
}

thread_local! {
    /// The pidfd of the thread whose descriptor was taken last: a build's descriptor calls
    /// come from one thread after another, and opening a pidfd for each cost two syscalls.
    static LAST_PIDFD: std::cell::RefCell<Option<(i32, OwnedFd)>> =
        const { std::cell::RefCell::new(None) };
}

/// A copy of thread `tid`'s descriptor `fd`. A pidfd names its very thread: if the one kept
/// died and its id went to another, taking fails with `ESRCH`, and a pidfd is opened for the
/// thread that notified, which is alive.
fn getfd(tid: i32, fd: i32) -> Sys<OwnedFd> {
    LAST_PIDFD.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((kept, pidfd)) = last.as_ref() {
            if *kept == tid {
                match fsops::pidfd_getfd(pidfd.as_fd(), fd) {
                    Err(Errno::ESRCH) => {}
                    r => return r,
                }
            }
        }
        let pidfd = fsops::pidfd_open_thread(tid)?;
        let r = fsops::pidfd_getfd(pidfd.as_fd(), fd);
        *last = Some((tid, pidfd));
        r
    })
}
