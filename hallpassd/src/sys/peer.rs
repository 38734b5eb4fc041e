//! Pinning the process on the other end of a Unix socket: a pidfd of the process that
//! connected (`SO_PEERPIDFD`, Linux 6.5), so what the daemon reads about it under
//! `/proc/PID` can be shown to be about that process and not one that got its pid since.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;

/// `SO_PEERPIDFD` (asm-generic, used by x86_64 and aarch64).
const SO_PEERPIDFD: libc::c_int = 77;

/// A pidfd of the process that connected `sock` (not of whoever holds it now).
pub fn peer_pidfd(sock: BorrowedFd<'_>) -> Result<OwnedFd, Errno> {
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` and `len` are live locals of the sizes the kernel writes.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(Errno::last());
    }
    if fd < 0 {
        return Err(Errno::ESRCH);
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether the process behind `pidfd` has not been reaped yet (`pidfd_send_signal` with
/// signal 0): while it has not, its pid names it and no other process.
pub fn alive(pidfd: BorrowedFd<'_>) -> bool {
    // SAFETY: no memory is passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    r == 0
}
