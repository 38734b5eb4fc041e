//! The file system calls strict mode makes on the target's behalf, relative to descriptors it
//! holds: thin wrappers that return the kernel's errno unchanged, because that errno is the
//! answer the target gets.
//!
//! Each call passes only pointers to live, NUL-terminated buffers or plain values; none keeps
//! a pointer past its return.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;

pub type Sys<T> = Result<T, Errno>;

fn fd_result(r: libc::c_long) -> Sys<OwnedFd> {
    if r < 0 {
        Err(Errno::last())
    } else {
        // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
    }
}

fn unit(r: libc::c_long) -> Sys<()> {
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// `openat(dir, name, flags, mode)`, with `O_CLOEXEC` always added: the daemon's copy never
/// leaks into a child (the flag the target asked for is given back when the descriptor is
/// installed). `dir` may be `None` for an absolute name.
pub fn openat(dir: Option<BorrowedFd<'_>>, name: &CStr, flags: i32, mode: u32) -> Sys<OwnedFd> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is a live NUL-terminated string.
    fd_result(unsafe { libc::openat(d, name.as_ptr(), flags | libc::O_CLOEXEC, mode) } as _)
}

/// `struct open_how` (`include/uapi/linux/openat2.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenHow {
    pub flags: u64,
    pub mode: u64,
    pub resolve: u64,
}

/// `openat2(dir, name, how)`. `dir` may be a raw number (even an invalid one, to have the
/// kernel validate `how` alone).
pub fn openat2(dir: RawFd, name: &CStr, how: &OpenHow) -> Sys<OwnedFd> {
    // SAFETY: `name` and `how` are live for the call; the size passed is `how`'s.
    fd_result(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            name.as_ptr(),
            how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })
}

/// An `O_PATH` descriptor of `name` in `dir` (the object itself when `nofollow`).
pub fn open_path(dir: Option<BorrowedFd<'_>>, name: &CStr, nofollow: bool) -> Sys<OwnedFd> {
    let f = libc::O_PATH | if nofollow { libc::O_NOFOLLOW } else { 0 };
    openat(dir, name, f, 0)
}

pub fn fstat(fd: BorrowedFd<'_>) -> Sys<libc::stat> {
    // SAFETY: an all-zero `struct stat` is a valid value; the kernel fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live, writable `struct stat`.
    unit(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } as _)?;
    Ok(st)
}

/// Whether `fd` is on a proc file system, any instance of it (`fstatfs`).
pub fn is_procfs(fd: BorrowedFd<'_>) -> Sys<bool> {
    let st = nix::sys::statfs::fstatfs(fd)?;
    Ok(st.filesystem_type() == nix::sys::statfs::PROC_SUPER_MAGIC)
}

/// The mount id, device major and minor, and inode of an object: which object it is, and
/// reached through which mount.
pub type Identity = (u64, u32, u32, u64);

/// What the daemon needs to know of an object it holds, from one `statx`.
#[derive(Clone, Copy, Debug)]
pub struct HeldStat {
    pub id: Identity,
    /// Its number of links: 0 once unlinked.
    pub nlink: u32,
    /// The mount id is the one the kernel never gives again (`STATX_MNT_ID_UNIQUE`, Linux
    /// 6.8), not one it reuses once that mount is gone.
    pub unique_mount: bool,
}

impl HeldStat {
    /// The object's device, as `st_dev`.
    pub fn dev(&self) -> u64 {
        libc::makedev(self.id.1, self.id.2)
    }
}

/// `STATX_MNT_ID_UNIQUE` (Linux 6.8), which the libc crate may not have yet.
const STATX_MNT_ID_UNIQUE: u32 = 0x4000;

/// [`HeldStat`] of `fd` (`statx`; needs `STATX_MNT_ID`, Linux 5.8).
pub fn held_stat(fd: BorrowedFd<'_>) -> Sys<HeldStat> {
    // SAFETY: an all-zero `struct statx` is a valid value; the kernel fills it.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let want = libc::STATX_INO | libc::STATX_NLINK | libc::STATX_MNT_ID | STATX_MNT_ID_UNIQUE;
    // SAFETY: the empty name is NUL-terminated and `st` is a live, writable `struct statx`.
    unit(unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            want,
            &mut st,
        )
    } as _)?;
    let unique_mount = st.stx_mask & STATX_MNT_ID_UNIQUE != 0;
    if !unique_mount && st.stx_mask & libc::STATX_MNT_ID == 0 {
        return Err(Errno::ENOSYS);
    }
    Ok(HeldStat {
        id: (
            st.stx_mnt_id,
            st.stx_dev_major,
            st.stx_dev_minor,
            st.stx_ino,
        ),
        nlink: st.stx_nlink,
        unique_mount,
    })
}

/// The [`Identity`] of `fd`.
pub fn identity(fd: BorrowedFd<'_>) -> Sys<Identity> {
    held_stat(fd).map(|h| h.id)
}

/// `fstatat(dir, name, 0)`: symlinks followed, magic links too.
pub fn statat(dir: BorrowedFd<'_>, name: &CStr) -> Sys<libc::stat> {
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated and `st` is a live, writable `struct stat`.
    unit(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, 0) } as _)?;
    Ok(st)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`.
pub fn lstatat(dir: BorrowedFd<'_>, name: &CStr) -> Sys<libc::stat> {
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated and `st` is a live, writable `struct stat`.
    unit(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } as _)?;
    Ok(st)
}

/// The target of the symlink `name` in `dir` (of `dir` itself for an empty name).
pub fn readlinkat(dir: BorrowedFd<'_>, name: &CStr) -> Sys<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is live and writable for its whole length, which is what we pass.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(Errno::last());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

pub fn mkdirat(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> Sys<()> {
    // SAFETY: `name` is NUL-terminated.
    unit(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode) } as _)
}

pub fn mknodat(dir: BorrowedFd<'_>, name: &CStr, mode: u32, dev: u64) -> Sys<()> {
    // SAFETY: `name` is NUL-terminated.
    unit(unsafe { libc::mknodat(dir.as_raw_fd(), name.as_ptr(), mode, dev) } as _)
}

pub fn unlinkat(dir: BorrowedFd<'_>, name: &CStr, flags: i32) -> Sys<()> {
    // SAFETY: `name` is NUL-terminated.
    unit(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } as _)
}

pub fn renameat2(
    old_dir: BorrowedFd<'_>,
    old: &CStr,
    new_dir: BorrowedFd<'_>,
    new: &CStr,
    flags: u32,
) -> Sys<()> {
    // SAFETY: both names are NUL-terminated.
    unit(unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            old_dir.as_raw_fd(),
            old.as_ptr(),
            new_dir.as_raw_fd(),
            new.as_ptr(),
            flags,
        )
    })
}

pub fn linkat(
    old_dir: Option<BorrowedFd<'_>>,
    old: &CStr,
    new_dir: BorrowedFd<'_>,
    new: &CStr,
    flags: i32,
) -> Sys<()> {
    let o = old_dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: both names are NUL-terminated.
    unit(unsafe { libc::linkat(o, old.as_ptr(), new_dir.as_raw_fd(), new.as_ptr(), flags) } as _)
}

pub fn symlinkat(target: &CStr, dir: BorrowedFd<'_>, name: &CStr) -> Sys<()> {
    // SAFETY: both strings are NUL-terminated.
    unit(unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) } as _)
}

/// `fchmodat2` where the kernel has it (6.6), which alone honours `AT_SYMLINK_NOFOLLOW`.
pub fn fchmodat2(dir: Option<BorrowedFd<'_>>, name: &CStr, mode: u32, flags: i32) -> Sys<()> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is NUL-terminated. 452 is fchmodat2 on every architecture.
    unit(unsafe { libc::syscall(452, d, name.as_ptr(), mode, flags) })
}

pub fn fchmodat(dir: Option<BorrowedFd<'_>>, name: &CStr, mode: u32) -> Sys<()> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is NUL-terminated. The raw syscall: glibc's wrapper emulates flags.
    unit(unsafe { libc::syscall(libc::SYS_fchmodat, d, name.as_ptr(), mode) })
}

/// `fchmod` of an open file (not `O_PATH`).
pub fn fchmod(fd: BorrowedFd<'_>, mode: u32) -> Sys<()> {
    // SAFETY: no memory is passed.
    unit(unsafe { libc::fchmod(fd.as_raw_fd(), mode) } as _)
}

/// `futimens` of an open file (not `O_PATH`); `times` `None` sets both to now.
pub fn futimens(fd: BorrowedFd<'_>, times: Option<&[libc::timespec; 2]>) -> Sys<()> {
    let t = times.map_or(std::ptr::null(), |t| t.as_ptr());
    // SAFETY: a NULL name, as futimens passes it; `t` is NULL or points at two live
    // timespecs.
    unit(unsafe {
        libc::syscall(
            libc::SYS_utimensat,
            fd.as_raw_fd(),
            std::ptr::null::<libc::c_char>(),
            t,
            0,
        )
    })
}

pub fn fchownat(
    dir: Option<BorrowedFd<'_>>,
    name: &CStr,
    uid: u32,
    gid: u32,
    flags: i32,
) -> Sys<()> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is NUL-terminated.
    unit(unsafe { libc::fchownat(d, name.as_ptr(), uid, gid, flags) } as _)
}

/// `utimensat`; `times` `None` sets both to now.
pub fn utimensat(
    dir: Option<BorrowedFd<'_>>,
    name: &CStr,
    times: Option<&[libc::timespec; 2]>,
    flags: i32,
) -> Sys<()> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    let t = times.map_or(std::ptr::null(), |t| t.as_ptr());
    // SAFETY: `name` is NUL-terminated; `t` is NULL or points at two live timespecs.
    unit(unsafe { libc::syscall(libc::SYS_utimensat, d, name.as_ptr(), t, flags) })
}

/// `setxattr`, or `lsetxattr` when `nofollow`, on an absolute path.
pub fn setxattr(path: &CStr, name: &CStr, value: &[u8], flags: i32, nofollow: bool) -> Sys<()> {
    let f = if nofollow {
        libc::lsetxattr
    } else {
        libc::setxattr
    };
    // SAFETY: both strings are NUL-terminated; `value` is live for its length.
    unit(unsafe {
        f(
            path.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            flags,
        )
    } as _)
}

pub fn removexattr(path: &CStr, name: &CStr, nofollow: bool) -> Sys<()> {
    let f = if nofollow {
        libc::lremovexattr
    } else {
        libc::removexattr
    };
    // SAFETY: both strings are NUL-terminated.
    unit(unsafe { f(path.as_ptr(), name.as_ptr()) } as _)
}

/// `file_setattr` (Linux 6.17): inode flags from `struct file_attr` of `size` bytes.
pub fn file_setattr(
    dir: Option<BorrowedFd<'_>>,
    name: &CStr,
    attr: &[u8],
    size: usize,
    flags: i32,
) -> Sys<()> {
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // The kernel reads `size` bytes: never more than we have.
    let size = size.min(attr.len());
    // SAFETY: `name` is NUL-terminated; `attr` is live for `size` bytes. 469 is file_setattr
    // on every architecture.
    unit(unsafe { libc::syscall(469, d, name.as_ptr(), attr.as_ptr(), size, flags) })
}

/// Sends `sig` to thread `tid` (of whichever process it belongs to).
pub fn signal_thread(tid: i32, sig: i32) {
    let Some(tgid) = crate::process::tgid_of(tid) else {
        return;
    };
    // SAFETY: no memory is passed.
    unsafe {
        libc::syscall(libc::SYS_tgkill, tgid, tid, sig);
    }
}

/// `faccessat2(dir, name, mode, AT_EACCESS | flags)`: whether this thread, with its own
/// file-system ids, groups and effective capabilities, may access `name` in `dir` so: the
/// kernel's own permission check (ACLs, read-only mounts, immutable files included).
/// `nofollow` checks a symlink itself; an empty `name` checks `dir` itself.
pub fn access(dir: BorrowedFd<'_>, name: &CStr, mode: i32, nofollow: bool) -> Sys<()> {
    let mut flags = libc::AT_EACCESS;
    if nofollow {
        flags |= libc::AT_SYMLINK_NOFOLLOW;
    }
    if name.is_empty() {
        flags |= libc::AT_EMPTY_PATH;
    }
    // SAFETY: `name` is a live NUL-terminated string; the rest are plain values.
    unit(unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            mode,
            flags,
        )
    })
}

pub fn truncate(path: &CStr, len: i64) -> Sys<()> {
    // SAFETY: `path` is NUL-terminated.
    unit(unsafe { libc::truncate(path.as_ptr(), len) } as _)
}

/// An ioctl whose argument is a pointer to `arg` (read, and for some commands written).
pub fn ioctl_ptr(fd: BorrowedFd<'_>, cmd: u32, arg: &mut [u8]) -> Sys<i64> {
    // SAFETY: `arg` is live and writable, and at least as large as the command encodes (the
    // caller sizes it from the command).
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), cmd as _, arg.as_mut_ptr()) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r as i64)
    }
}

/// An ioctl whose argument is a plain number (`FICLONE`'s source descriptor).
pub fn ioctl_val(fd: BorrowedFd<'_>, cmd: u32, arg: u64) -> Sys<i64> {
    // SAFETY: no memory is passed.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), cmd as _, arg) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r as i64)
    }
}

pub fn bind(sock: BorrowedFd<'_>, addr: &[u8]) -> Sys<()> {
    // SAFETY: `addr` is live for its length, which is what we pass.
    unit(unsafe {
        libc::bind(
            sock.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    } as _)
}

pub fn connect(sock: BorrowedFd<'_>, addr: &[u8]) -> Sys<()> {
    // SAFETY: `addr` is live for its length, which is what we pass.
    unit(unsafe {
        libc::connect(
            sock.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    } as _)
}

/// Whether the mount whose never-reused id is `id` (`STATX_MNT_ID_UNIQUE`) is attached in
/// the daemon's mount namespace: `statmount(2)` (Linux 6.8) finds no other. A mount
/// detached since (`umount -l`) names its files from its own root, not from `/`.
pub fn mount_attached(id: u64) -> bool {
    /// `struct mnt_id_req`, its first version.
    #[repr(C)]
    struct MntIdReq {
        size: u32,
        spare: u32,
        mnt_id: u64,
        param: u64,
    }
    // The same number on every architecture (syscalls added since 5.x share one numbering).
    const SYS_STATMOUNT: libc::c_long = 457;
    const STATMOUNT_MNT_BASIC: u64 = 0x2;
    let req = MntIdReq {
        size: std::mem::size_of::<MntIdReq>() as u32,
        spare: 0,
        mnt_id: id,
        param: STATMOUNT_MNT_BASIC,
    };
    // Larger than `struct statmount` (512 bytes); no string is asked for.
    let mut buf = [0u64; 512];
    // SAFETY: `req` is a live `mnt_id_req` of the size it says; the kernel writes at most
    // `size_of_val(&buf)` bytes into `buf`, which is ours.
    let r = unsafe {
        libc::syscall(
            SYS_STATMOUNT,
            &req as *const MntIdReq,
            buf.as_mut_ptr(),
            std::mem::size_of_val(&buf),
            0,
        )
    };
    r == 0
}

/// Raises the soft limit on open files to the hard one.
pub fn raise_open_files() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < hard {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

/// The soft limit on open files (1,024 if it cannot be read), read once: after
/// [`raise_open_files`], in the daemon.
pub fn open_files_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
            .map_or(1024, |(soft, _)| soft.min(usize::MAX as u64) as usize)
    })
}

/// The address family of socket `sock` (`SO_DOMAIN`); `ENOTSOCK` for another file.
pub fn socket_domain(sock: BorrowedFd<'_>) -> Sys<i32> {
    int_sockopt(sock, libc::SO_DOMAIN)
}

/// The type of socket `sock` (`SO_TYPE`: `SOCK_STREAM`, `SOCK_DGRAM`...).
pub fn socket_type(sock: BorrowedFd<'_>) -> Sys<i32> {
    int_sockopt(sock, libc::SO_TYPE)
}

/// An `int` socket option of level `SOL_SOCKET`.
fn int_sockopt(sock: BorrowedFd<'_>, name: libc::c_int) -> Sys<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are live and sized as passed.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    unit(r as _).map(|()| v)
}

/// `sendmsg(sock)` of one message: `data`, to `name` (none if empty), with the control
/// messages `control` as they are laid out for the kernel. Returns the bytes sent.
pub fn sendmsg(
    sock: BorrowedFd<'_>,
    name: &[u8],
    data: &[u8],
    control: &[u8],
    flags: i32,
) -> Sys<usize> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: an all-zero msghdr is valid (no name, data or control).
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    if !name.is_empty() {
        m.msg_name = name.as_ptr() as *mut libc::c_void;
        m.msg_namelen = name.len() as libc::socklen_t;
    }
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    if !control.is_empty() {
        m.msg_control = control.as_ptr() as *mut libc::c_void;
        m.msg_controllen = control.len() as _;
    }
    // SAFETY: every pointer in `m` is to a live buffer of the length given with it, and the
    // kernel only reads them (sendmsg writes nothing back).
    let r = unsafe { libc::sendmsg(sock.as_raw_fd(), &m, flags) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r as usize)
    }
}

/// Sets this thread's umask, returning the previous one. Per thread only once the thread
/// has its own fs context ([`unshare_fs`]).
pub fn umask(mask: u32) -> u32 {
    // SAFETY: umask cannot fail and touches no memory.
    unsafe { libc::umask(mask) }
}

/// Gives this thread its own cwd and umask (`unshare(CLONE_FS)`), so that setting them for
/// one target's operation changes nothing for the daemon's other threads.
pub fn unshare_fs() -> Sys<()> {
    // SAFETY: no memory is passed.
    unit(unsafe { libc::unshare(libc::CLONE_FS) } as _)
}

pub fn chdir_root() -> Sys<()> {
    // SAFETY: the path is NUL-terminated.
    unit(unsafe { libc::chdir(c"/".as_ptr()) } as _)
}

/// The signal that interrupts a thread of the daemon blocked in an open (a FIFO whose other
/// end never comes): its handler does nothing and is installed without `SA_RESTART`, so the
/// open returns `EINTR`.
fn interrupt_signal() -> i32 {
    libc::SIGRTMIN() + 3
}

extern "C" fn interrupted(_: libc::c_int) {}

/// Installs the handler of [`interrupt`] (once) and unblocks its signal in this thread.
pub fn interruptible() -> Sys<()> {
    static INSTALLED: std::sync::OnceLock<Sys<()>> = std::sync::OnceLock::new();
    (*INSTALLED.get_or_init(|| {
        // SAFETY: an all-zero sigaction is valid; we set a handler that touches nothing,
        // an empty mask, and no flags (no SA_RESTART: the point is EINTR).
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = interrupted as *const () as usize;
        // SAFETY: `sa` is a live sigaction; the old action is not asked for.
        unit(unsafe {
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(interrupt_signal(), &sa, std::ptr::null_mut())
        } as _)
    }))?;
    // SAFETY: `set` is a live sigset_t, initialised before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, interrupt_signal());
        unit(libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) as _)
    }
}

/// This thread, for [`interrupt`].
pub fn this_thread() -> libc::pthread_t {
    // SAFETY: no memory is passed.
    unsafe { libc::pthread_self() }
}

/// Interrupts a blocking syscall of `thread`, a live thread of the daemon that called
/// [`interruptible`].
pub fn interrupt(thread: libc::pthread_t) {
    // SAFETY: the caller keeps `thread` alive (it waits for it to say it is done).
    unsafe {
        libc::pthread_kill(thread, interrupt_signal());
    }
}

pub fn fchdir(dir: BorrowedFd<'_>) -> Sys<()> {
    // SAFETY: no memory is passed.
    unit(unsafe { libc::fchdir(dir.as_raw_fd()) } as _)
}

/// A descriptor of process `pid` (`pidfd_open`).
pub fn pidfd_open(pid: i32) -> Sys<OwnedFd> {
    // SAFETY: no memory is passed.
    fd_result(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })
}

/// A descriptor of thread `tid` (`pidfd_open` with `PIDFD_THREAD`, Linux 6.9), or of the
/// process if `tid` leads one (older kernels refuse other threads with `EINVAL`).
pub fn pidfd_open_thread(tid: i32) -> Sys<OwnedFd> {
    const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;
    // SAFETY: no memory is passed.
    fd_result(unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) })
        .or_else(|_| pidfd_open(tid))
}

/// The other end of the pseudo-terminal whose master is `master`, opened with `flags`
/// (`TIOCGPTPEER`).
pub fn pty_peer(master: BorrowedFd<'_>, flags: i32) -> Sys<OwnedFd> {
    // SAFETY: no memory is passed; the ioctl returns a new descriptor or -1.
    fd_result(
        unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER as _, flags) } as libc::c_long,
    )
}

/// A copy of descriptor `fd` of the process behind `pidfd` (`pidfd_getfd`).
/// Whether the thread or process `pidfd` names is alive: `pidfd_send_signal` with signal 0,
/// which checks and sends nothing (`ESRCH` once it exited; `EPERM` still means alive).
pub fn pidfd_alive(pidfd: BorrowedFd<'_>) -> bool {
    // SAFETY: no memory is passed (a null siginfo); signal 0 is only a check.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    r == 0 || Errno::last() != Errno::ESRCH
}

pub fn pidfd_getfd(pidfd: BorrowedFd<'_>, fd: i32) -> Sys<OwnedFd> {
    // SAFETY: no memory is passed.
    fd_result(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })
}

/// The current `O_*` status flags of `fd` (`F_GETFL`).
pub fn getfl(fd: BorrowedFd<'_>) -> Sys<i32> {
    // SAFETY: no memory is passed.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r)
    }
}

pub fn setfl(fd: BorrowedFd<'_>, flags: i32) -> Sys<()> {
    // SAFETY: no memory is passed.
    unit(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) } as _)
}

#[cfg(test)]
mod mount_tests {
    use super::*;
    use std::os::fd::AsFd;

    /// The mount of `/` is attached; an id no mount has is not.
    #[test]
    fn attached_mounts_are_found() {
        let root = std::fs::File::open("/").unwrap();
        let st = held_stat(root.as_fd()).unwrap();
        if !st.unique_mount {
            eprintln!("SKIP: no STATX_MNT_ID_UNIQUE (Linux 6.8)");
            return;
        }
        assert!(mount_attached(st.id.0));
        assert!(!mount_attached(u64::MAX));
    }
}
