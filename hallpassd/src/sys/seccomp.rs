//! The seccomp user-notification ioctls on a listener fd (seccomp_unotify(2),
//! `include/uapi/linux/seccomp.h`).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::AtomicU64;

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

/// Takes the next notification straight into `slot`: ten zeroed words of memory shared with
/// the launcher (the session journal), which the kernel fills with a `struct seccomp_notif`.
/// The moment the kernel hands a notification over it is where a successor daemon looks, so
/// no daemon can die holding one that nobody can find. Read `slot` back with
/// [`Notif::from_words`]. Blocks like [`recv`].
pub fn recv_into(listener: BorrowedFd<'_>, slot: &[AtomicU64; 10]) -> io::Result<()> {
    // SAFETY: `slot` is 80 bytes of live memory, aligned for u64, that may be written through
    // a shared reference (atomics have interior mutability): the size and layout of `struct
    // seccomp_notif`, which the ioctl number encodes. The kernel writes only within it, and
    // only before the ioctl returns, in this thread; nothing else writes slot 0 meanwhile.
    check(unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_RECV,
            slot.as_ptr().cast_mut(),
        )
    })
}

// The journal reads what the kernel wrote word by word: `pid` and `flags` share a word, as do
// `nr` and `arch`, in this order only on a little-endian machine.
#[cfg(not(target_endian = "little"))]
compile_error!("the session journal assumes a little-endian `struct seccomp_notif`");

impl Notif {
    /// The notification as ten words, laid out as the kernel writes it.
    pub fn to_words(self) -> [u64; 10] {
        let d = &self.data;
        [
            self.id,
            u64::from(self.pid) | (u64::from(self.flags) << 32),
            u64::from(d.nr as u32) | (u64::from(d.arch) << 32),
            d.instruction_pointer,
            d.args[0],
            d.args[1],
            d.args[2],
            d.args[3],
            d.args[4],
            d.args[5],
        ]
    }

    /// The notification the kernel wrote as ten words.
    pub fn from_words(w: &[u64; 10]) -> Notif {
        Notif {
            id: w[0],
            pid: w[1] as u32,
            flags: (w[1] >> 32) as u32,
            data: SeccompData {
                nr: w[2] as u32 as i32,
                arch: (w[2] >> 32) as u32,
                instruction_pointer: w[3],
                args: [w[4], w[5], w[6], w[7], w[8], w[9]],
            },
        }
    }
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

/// For tests of what receives notifications: a real listener and a thread waiting on it.
#[cfg(test)]
pub mod testing {
    /// A thread of this test that asks for `getppid` under a filter of its own, which sends
    /// that syscall to the listener it returns.
    pub fn a_thread_notifying_getppid() -> (std::os::fd::OwnedFd, std::thread::JoinHandle<i64>) {
        use crate::bpf::{Asm, Cond};
        use std::os::fd::FromRawFd;
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut asm = Asm::new();
            let (notify, allow) = (asm.label(), asm.label());
            asm.load(0);
            asm.jump(Cond::Eq, libc::SYS_getppid as u32, notify, allow);
            asm.bind(notify);
            asm.ret(0x7fc0_0000); // SECCOMP_RET_USER_NOTIF
            asm.bind(allow);
            asm.ret(0x7fff_0000); // SECCOMP_RET_ALLOW
            let prog = asm.finish().unwrap();
            let fprog = libc::sock_fprog {
                len: prog.len() as u16,
                filter: prog.as_ptr() as *mut libc::sock_filter,
            };
            // SAFETY: prctl and seccomp with valid arguments; `fprog` points at `prog`, alive
            // for the call. The filter binds this thread only (no TSYNC), which ends soon.
            let fd = unsafe {
                assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
                libc::syscall(libc::SYS_seccomp, 1, 1 << 3, &fprog)
            };
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            // SAFETY: a descriptor the kernel just made for us.
            tx.send(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
                .unwrap();
            // SAFETY: getppid has no arguments.
            unsafe { libc::syscall(libc::SYS_getppid) }
        });
        (rx.recv().unwrap(), thread)
    }
}
