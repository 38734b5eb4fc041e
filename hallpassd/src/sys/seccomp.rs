//! The seccomp user-notification ioctls on a listener fd (seccomp_unotify(2),
//! `include/uapi/linux/seccomp.h`).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub instruction_pointer: u64,
    pub args: [u64; 6],
}

/// `struct seccomp_notif`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Notif {
    pub id: u64,
    pub pid: u32,
    pub flags: u32,
    pub data: SeccompData,
}

/// `struct seccomp_notif_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct NotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

const SECCOMP_IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100; // _IOWR('!', 0, struct seccomp_notif)
const SECCOMP_IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101; // _IOWR('!', 1, struct seccomp_notif_resp)
const SECCOMP_IOCTL_NOTIF_ID_VALID: libc::c_ulong = 0x4008_2102; // _IOW('!', 2, __u64)
const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104; // _IOW('!', 4, __u64)
const SECCOMP_IOCTL_NOTIF_ADDFD: libc::c_ulong = 0x4018_2103; // _IOW('!', 3, struct seccomp_notif_addfd)
const SECCOMP_USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const SECCOMP_ADDFD_FLAG_SEND: u32 = 1 << 1;
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

const _: () = assert!(std::mem::size_of::<Notif>() == 80);
const _: () = assert!(std::mem::size_of::<NotifResp>() == 24);

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Takes the next notification. Blocks until there is one, even on a non-blocking fd, so
/// call it when `poll` says the fd is readable. `ENOENT`: the target went away meanwhile.
pub fn recv(listener: BorrowedFd<'_>) -> io::Result<Notif> {
    // The kernel insists on a zeroed struct.
    let mut n = Notif::default();
    // SAFETY: `n` is a live, writable `struct seccomp_notif` of the size the ioctl number
    // encodes; the kernel writes only within it.
    check(unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_RECV,
            &mut n as *mut Notif,
        )
    })?;
    Ok(n)
}

/// The answer to a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Let the kernel run the syscall as it was made.
    Continue,
    /// Fail it with this errno.
    Fail(i32),
    /// Return this value: the syscall was performed by the daemon (strict mode).
    Value(i64),
}

/// Answers notification `id`. `ENOENT`: the target went away, or was interrupted and gave up.
pub fn send(listener: BorrowedFd<'_>, id: u64, reply: Reply) -> io::Result<()> {
    let r = match reply {
        Reply::Continue => NotifResp {
            id,
            val: 0,
            error: 0,
            flags: SECCOMP_USER_NOTIF_FLAG_CONTINUE,
        },
        Reply::Fail(e) => NotifResp {
            id,
            val: 0,
            error: -e,
            flags: 0,
        },
        Reply::Value(val) => NotifResp {
            id,
            val,
            error: 0,
            flags: 0,
        },
    };
    // SAFETY: `r` is a live `struct seccomp_notif_resp` of the size the ioctl number encodes;
    // the kernel only reads it.
    check(unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_SEND,
            &r as *const NotifResp,
        )
    })
}

/// Whether notification `id` is still pending: after reading the target's memory, this proves
/// the memory was the caller's and not that of a process that reused its pid.
pub fn id_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the kernel reads one `u64` from the pointer, which points at `id`.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id as *const u64,
        ) == 0
    }
}

/// Asks the kernel to wake the target on the daemon's CPU when answered
/// (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6). Returns whether it took.
pub fn set_sync_wake_up(listener: BorrowedFd<'_>) -> bool {
    let flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
    // SAFETY: SET_FLAGS takes the flags by value in the argument; no memory is shared.
    unsafe { libc::ioctl(listener.as_raw_fd(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0 }
}

/// `struct seccomp_notif_addfd`.
#[repr(C)]
struct NotifAddfd {
    id: u64,
    flags: u32,
    srcfd: u32,
    newfd: u32,
    newfd_flags: u32,
}

const _: () = assert!(std::mem::size_of::<NotifAddfd>() == 24);

/// Installs a copy of `fd` in the target of notification `id` and, in the same step, answers
/// the syscall with its number there (`SECCOMP_ADDFD_FLAG_SEND`, Linux 5.14): an open the
/// daemon performed. `cloexec` is the target's `O_CLOEXEC`.
pub fn send_fd(
    listener: BorrowedFd<'_>,
    id: u64,
    fd: BorrowedFd<'_>,
    cloexec: bool,
) -> io::Result<i32> {
    let a = NotifAddfd {
        id,
        flags: SECCOMP_ADDFD_FLAG_SEND,
        srcfd: fd.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: `a` is a live `struct seccomp_notif_addfd` of the size the ioctl number
    // encodes; the kernel only reads it.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_ADDFD,
            &a as *const NotifAddfd,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Whether the kernel installs descriptors and answers in one step
/// (`SECCOMP_ADDFD_FLAG_SEND`, Linux 5.14), which strict mode needs. Asked of a real
/// listener with an id no notification has: a kernel that knows the flag looks the id up
/// (`ENOENT`); an older one refuses the flag first (`EINVAL`).
pub fn can_send_fd(listener: BorrowedFd<'_>) -> bool {
    let a = NotifAddfd {
        id: u64::MAX,
        flags: SECCOMP_ADDFD_FLAG_SEND,
        srcfd: listener.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: 0,
    };
    // SAFETY: as in `send_fd`.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_ADDFD,
            &a as *const NotifAddfd,
        )
    };
    r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
}
