//! `kcmp(2)` with `KCMP_FILE`: whether a descriptor of another process is the very open file
//! a descriptor of the daemon is. Needs `CONFIG_KCMP` and the right to read the process
//! (`PTRACE_MODE_READ`, which Yama does not restrict).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `KCMP_FILE` (`include/uapi/linux/kcmp.h`).
const KCMP_FILE: libc::c_long = 0;

/// Whether descriptor `fd` of thread `tid` is the same open file as `ours`, a descriptor of
/// this process, whose id is `me`. Errors: `ESRCH` (no such thread), `EBADF` (no such
/// descriptor), `EPERM`, `ENOSYS` (no `CONFIG_KCMP`).
pub fn same_file(tid: i32, fd: i32, me: i32, ours: BorrowedFd<'_>) -> io::Result<bool> {
    // SAFETY: kcmp takes integers only; no memory is passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            libc::c_long::from(tid),
            libc::c_long::from(me),
            KCMP_FILE,
            libc::c_long::from(fd),
            libc::c_long::from(ours.as_raw_fd()),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn tells_files_apart() {
        let me = std::process::id() as i32;
        let a = std::fs::File::open("/").unwrap();
        let b = std::fs::File::open("/").unwrap();
        let a2 = a.try_clone().unwrap();
        assert!(same_file(me, a.as_raw_fd(), me, a2.as_fd()).unwrap());
        // The same directory opened twice is two open files.
        assert!(!same_file(me, a.as_raw_fd(), me, b.as_fd()).unwrap());
        let e = same_file(me, 1_000_000, me, a.as_fd()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }
}
