//! Taking a copy of a supervised thread's descriptor (`pidfd_getfd`), which the launcher may
//! do where the daemon may not: under Yama `ptrace_scope=1` only an ancestor may, and the
//! launcher is one of every supervised process.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

fn fd_result(r: libc::c_long) -> io::Result<OwnedFd> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
    }
}

/// A copy of descriptor `fd` of thread `tid`.
pub fn take(tid: i32, fd: i32) -> io::Result<OwnedFd> {
    // PIDFD_THREAD (Linux 6.9) names the thread itself; before it, only a leader's id works.
    const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;
    // SAFETY: no memory is passed.
    let pidfd = fd_result(unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) })
        // SAFETY: no memory is passed.
        .or_else(|_| fd_result(unsafe { libc::syscall(libc::SYS_pidfd_open, tid, 0) }))?;
    // SAFETY: no memory is passed.
    fd_result(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })
}
