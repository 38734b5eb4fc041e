//! `hp-conform run DIR [--xdev OTHER] [--mounts DIR] [--only SUBSTRING]`: the conformance
//! table for strict mode. For each case it makes `DIR/<case>/` with the same fixtures, makes ONE write-class
//! syscall there (raw `syscall(2)`, so glibc substitutes nothing) and prints
//!
//! ```text
//! case-name<TAB>result<TAB>state
//! ```
//!
//! `result` is `ok`, `ok fd`, `= N` (a positive return value) or the errno's name; `state`
//! describes, deterministically, the opened descriptor if any (access mode, status flags,
//! FD_CLOEXEC, what it is, whether reading and writing it work; never its number) and every
//! path of the case directory (type, mode & 07777, uid, gid, nlink, size, content, symlink
//! target, user.* xattrs, mtime as `old`/`now`/explicit). Timestamps are printed in full only
//! by the cases that set explicit times. The last line is `cases N`.
//!
//! Run natively and under supervision by the same user, the outputs must be identical once the
//! directory prefixes are replaced: `tests/tests/conformance.rs` does that. `OTHER` is a
//! directory on another file system (for EXDEV); without it, or on the same file system, those
//! cases print `skip`. `DIR` after `--mounts` holds a mount point and files of root's, made by
//! the caller as root (see `mount_cases`); without it, those cases print `skip`. Nothing here
//! needs root; as root the permission cases simply succeed.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

// Newer syscalls the libc crate may not name on every target.
const SYS_FCHMODAT2: libc::c_long = 452;
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_REMOVEXATTRAT: libc::c_long = 466;
const SYS_FILE_GETATTR: libc::c_long = 468;
const SYS_FILE_SETATTR: libc::c_long = 469;

// include/uapi/linux/openat2.h
const RESOLVE_NO_XDEV: u64 = 0x01;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;
const RESOLVE_IN_ROOT: u64 = 0x10;
const RESOLVE_CACHED: u64 = 0x20;

// include/uapi/linux/fs.h
const RENAME_NOREPLACE: i64 = 1;
const RENAME_EXCHANGE: i64 = 2;
const RENAME_WHITEOUT: i64 = 4;
const FS_IOC_GETFLAGS: u64 = 0x8008_6601;
const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
const FS_IOC_FSGETXATTR: u64 = 0x801c_581f;
const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;
const FICLONE: u64 = 0x4004_9409;
const FS_NOATIME_FL: i32 = 0x80;
const FS_XFLAG_NOATIME: u64 = 0x40;

// The kernel's O_LARGEFILE (glibc's is 0 on 64-bit targets: it is implied) and __O_TMPFILE
// without O_DIRECTORY, as F_GETFL reports them.
#[cfg(target_arch = "x86_64")]
const O_LARGEFILE: i32 = 0o100000;
#[cfg(not(target_arch = "x86_64"))]
const O_LARGEFILE: i32 = 0o400000;
const O_TMPFILE_BIT: i32 = libc::O_TMPFILE & !libc::O_DIRECTORY;

const XATTR_CREATE: i32 = 1;
const XATTR_REPLACE: i32 = 2;

/// The fixtures' atime and mtime, so that "unchanged" is recognisable.
const OLD_SEC: i64 = 1_500_000_000;
const OLD_NSEC: i64 = 111_111_111;
/// What the explicit-time cases set.
const T1: i64 = 1_000_000_000;
const T2: i64 = 1_234_567_890;

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct XattrArgs {
    value: u64,
    size: u32,
    flags: u32,
}

#[repr(C)]
#[derive(Default)]
struct FsXattr {
    xflags: u32,
    extsize: u32,
    nextents: u32,
    projid: u32,
    cowextsize: u32,
    pad: [u8; 8],
}

#[repr(C)]
#[derive(Default)]
struct FileAttr {
    xflags: u64,
    extsize: u32,
    nextents: u32,
    projid: u32,
    cowextsize: u32,
}

use hallpass_tests::sys;
use hallpass_tests::sys::cs;

const CWD: i64 = libc::AT_FDCWD as i64;
const NULL: *const libc::c_char = std::ptr::null();

fn errno_name(e: i32) -> String {
    let n = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EMLINK => "EMLINK",
        libc::EPIPE => "EPIPE",
        libc::ERANGE => "ERANGE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ENODATA => "ENODATA",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::ENOTSOCK => "ENOTSOCK",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ESTALE => "ESTALE",
        libc::EDQUOT => "EDQUOT",
        _ => return format!("E#{e}"),
    };
    n.to_string()
}

/// What a case's syscall returned.
enum Res {
    /// 0 (`ok`), a positive value (`= N`) or -errno.
    Ret(i64),
    /// A new descriptor (`ok fd`, described in the state) or -errno.
    Fd(i64),
    /// The case cannot run here (no second file system for EXDEV).
    Skip,
}

/// How a `*at` case names its path.
#[derive(Clone, Copy)]
enum W {
    /// `AT_FDCWD` and a relative path (the cwd is the case directory).
    Cwd,
    /// An `O_PATH|O_DIRECTORY` descriptor of the case directory and a relative path.
    Dfd,
    /// `AT_FDCWD` and an absolute path.
    Abs,
}
const WS: [W; 3] = [W::Cwd, W::Dfd, W::Abs];
impl W {
    fn tag(self) -> &'static str {
        match self {
            W::Cwd => "cwd",
            W::Dfd => "dfd",
            W::Abs => "abs",
        }
    }
}

/// What a case body gets: its directory (also the cwd), an `O_PATH|O_DIRECTORY` descriptor of
/// it, and its directory on the other file system, if any.
struct Ctx {
    dir: PathBuf,
    dfd: i64,
    xdev: Option<PathBuf>,
    /// `--mounts`: the caller's directory with a mount point in it (see [`mount_cases`]).
    mounts: Option<PathBuf>,
}

impl Ctx {
    /// `name` as an absolute path.
    fn a(&self, name: &str) -> CString {
        cs(self.dir.join(name).as_os_str().as_bytes())
    }
    /// `name` on the other file system.
    fn x(&self, name: &str) -> CString {
        cs(self
            .xdev
            .as_ref()
            .unwrap()
            .join(name)
            .as_os_str()
            .as_bytes())
    }
    /// `name` in the `--mounts` directory, if there is one.
    fn m(&self, name: &str) -> Option<CString> {
        let m = self.mounts.as_ref()?;
        Some(cs(m.join(name).as_os_str().as_bytes()))
    }
    /// The (dirfd, path) pair naming `name` the way `w` says.
    fn at(&self, w: W, name: &str) -> (i64, CString) {
        match w {
            W::Cwd => (CWD, cs(name)),
            W::Dfd => (self.dfd, cs(name)),
            W::Abs => (CWD, self.a(name)),
        }
    }
}

/// Opens `path` (relative to the case directory) with `flags`, not a write: the helper
/// descriptors fd-based cases work on.
fn hfd(path: &str, flags: i32) -> i64 {
    sys!(
        libc::SYS_openat,
        CWD,
        cs(path).as_ptr(),
        flags | libc::O_CLOEXEC
    )
}

/// Extra state a case prints.
#[derive(Clone, Copy)]
enum Show {
    /// atime and mtime of this path (lstat), for cases that set explicit times.
    Times(&'static str),
    /// The inode flags (FS_IOC_GETFLAGS) of this path.
    IFlags(&'static str),
}

type Body = Box<dyn Fn(&Ctx) -> Res>;
type Prep = Box<dyn Fn(&Path)>;

struct Case {
    name: String,
    umask: u32,
    show: Vec<Show>,
    prep: Option<Prep>,
    body: Body,
}

impl Case {
    fn umask(&mut self, m: u32) -> &mut Case {
        self.umask = m;
        self
    }
    fn show(&mut self, s: Show) -> &mut Case {
        self.show.push(s);
        self
    }
    fn prep(&mut self, p: impl Fn(&Path) + 'static) -> &mut Case {
        self.prep = Some(Box::new(p));
        self
    }
}

fn add(
    v: &mut Vec<Case>,
    name: impl Into<String>,
    body: impl Fn(&Ctx) -> Res + 'static,
) -> &mut Case {
    v.push(Case {
        name: name.into(),
        umask: 0o022,
        show: Vec::new(),
        prep: None,
        body: Box::new(body),
    });
    v.last_mut().unwrap()
}

/// A pseudo-terminal of the case's own: its master and its other end, unlocked.
fn pty() -> (i64, i64) {
    let m = sys!(
        libc::SYS_openat,
        CWD,
        c"/dev/ptmx".as_ptr(),
        libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC
    );
    let unlock: i32 = 0;
    sys!(libc::SYS_ioctl, m, libc::TIOCSPTLCK, &unlock as *const i32);
    let t = sys!(
        libc::SYS_ioctl,
        m,
        libc::TIOCGPTPEER,
        libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC
    );
    (m, t)
}

/// `op` on a fresh pty (its master, its other end), then `check` of what it changed,
/// reading from the other end: its result if the change is seen, else -999.
fn on_pty(op: impl Fn(i64, i64) -> i64, check: impl Fn(i64) -> bool) -> Res {
    let (m, t) = pty();
    let r = op(m, t);
    let seen = r < 0 || check(t);
    for fd in [m, t] {
        sys!(libc::SYS_close, fd);
    }
    Res::Ret(if seen { r } else { -999 })
}

fn termios_of(t: i64) -> libc::termios {
    // SAFETY: an all-zero termios is a valid value; the kernel fills it.
    let mut tio: libc::termios = unsafe { std::mem::zeroed() };
    sys!(
        libc::SYS_ioctl,
        t,
        libc::TCGETS,
        &mut tio as *mut libc::termios
    );
    tio
}

fn rows_of(t: i64) -> u16 {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    sys!(
        libc::SYS_ioctl,
        t,
        libc::TIOCGWINSZ,
        &mut ws as *mut libc::winsize
    );
    ws.ws_row
}

/// The terminal commands on a pty the process made (its own: strict mode makes them on the
/// descriptor it took), and on what is no terminal.
fn terminal_cases(v: &mut Vec<Case>) {
    for (name, cmd) in [
        ("tty-tcsets", libc::TCSETS),
        ("tty-tcsetsw", libc::TCSETSW),
        ("tty-tcsetsf", libc::TCSETSF),
    ] {
        add(v, name, move |_| {
            on_pty(
                |_, t| {
                    let mut tio = termios_of(t);
                    tio.c_lflag &= !libc::ECHO;
                    sys!(libc::SYS_ioctl, t, cmd, &tio as *const libc::termios)
                },
                |t| termios_of(t).c_lflag & libc::ECHO == 0,
            )
        });
    }
    add(v, "tty-tcsets2", |_| {
        on_pty(
            |_, t| {
                // SAFETY: an all-zero termios2 is a valid value; the kernel fills it.
                let mut tio: libc::termios2 = unsafe { std::mem::zeroed() };
                sys!(
                    libc::SYS_ioctl,
                    t,
                    libc::TCGETS2,
                    &mut tio as *mut libc::termios2
                );
                tio.c_lflag &= !libc::ICANON;
                sys!(
                    libc::SYS_ioctl,
                    t,
                    libc::TCSETS2,
                    &tio as *const libc::termios2
                )
            },
            |t| termios_of(t).c_lflag & libc::ICANON == 0,
        )
    });
    for (name, through_master) in [("tty-winsz", false), ("tty-winsz-master", true)] {
        add(v, name, move |_| {
            on_pty(
                |m, t| {
                    let ws = libc::winsize {
                        ws_row: 33,
                        ws_col: 44,
                        ws_xpixel: 0,
                        ws_ypixel: 0,
                    };
                    let fd = if through_master { m } else { t };
                    sys!(
                        libc::SYS_ioctl,
                        fd,
                        libc::TIOCSWINSZ,
                        &ws as *const libc::winsize
                    )
                },
                |t| rows_of(t) == 33,
            )
        });
    }
    let ok = |_: i64| true;
    add(v, "tty-tcflsh", move |_| {
        on_pty(
            |_, t| sys!(libc::SYS_ioctl, t, libc::TCFLSH, libc::TCIOFLUSH),
            ok,
        )
    });
    add(v, "tty-tcflsh-bad", move |_| {
        on_pty(|_, t| sys!(libc::SYS_ioctl, t, libc::TCFLSH, 7), ok)
    });
    add(v, "tty-tcxonc", move |_| {
        on_pty(
            |_, t| {
                sys!(libc::SYS_ioctl, t, libc::TCXONC, libc::TCOOFF);
                sys!(libc::SYS_ioctl, t, libc::TCXONC, libc::TCOON)
            },
            ok,
        )
    });
    add(v, "tty-tcsbrk", move |_| {
        on_pty(|_, t| sys!(libc::SYS_ioctl, t, libc::TCSBRK, 1), ok)
    });
    add(v, "tty-excl", |_| {
        on_pty(
            |_, t| sys!(libc::SYS_ioctl, t, libc::TIOCEXCL),
            |t| {
                let mut on: i32 = 0;
                sys!(libc::SYS_ioctl, t, libc::TIOCGEXCL, &mut on as *mut i32);
                on == 1
            },
        )
    });
    add(v, "tty-pkt", move |_| {
        let on: i32 = 1;
        on_pty(
            |m, _| sys!(libc::SYS_ioctl, m, libc::TIOCPKT, &on as *const i32),
            ok,
        )
    });
    add(v, "tty-setd", move |_| {
        let ntty: i32 = 0;
        on_pty(
            |_, t| sys!(libc::SYS_ioctl, t, libc::TIOCSETD, &ntty as *const i32),
            ok,
        )
    });
    add(v, "tty-spgrp-not-ctty", move |_| {
        let pg = sys!(libc::SYS_getpgid, 0) as i32;
        on_pty(
            |_, t| sys!(libc::SYS_ioctl, t, libc::TIOCSPGRP, &pg as *const i32),
            ok,
        )
    });
    add(v, "tty-tcsets-efault", move |_| {
        on_pty(|_, t| sys!(libc::SYS_ioctl, t, libc::TCSETS, 8usize), ok)
    });
    add(v, "tty-winsz-efault", move |_| {
        on_pty(
            |_, t| sys!(libc::SYS_ioctl, t, libc::TIOCSWINSZ, 8usize),
            ok,
        )
    });
    add(v, "tty-winsz-opath", move |_| {
        on_pty(
            |m, _| {
                let mut n: u32 = 0;
                sys!(libc::SYS_ioctl, m, libc::TIOCGPTN, &mut n as *mut u32);
                let path = cs(format!("/dev/pts/{n}"));
                let f = sys!(libc::SYS_openat, CWD, path.as_ptr(), libc::O_PATH);
                let ws = libc::winsize {
                    ws_row: 33,
                    ws_col: 44,
                    ws_xpixel: 0,
                    ws_ypixel: 0,
                };
                let r = sys!(
                    libc::SYS_ioctl,
                    f,
                    libc::TIOCSWINSZ,
                    &ws as *const libc::winsize
                );
                sys!(libc::SYS_close, f);
                r
            },
            ok,
        )
    });
    add(v, "tty-tcsets-bad-fd", |_| {
        let tio = termios_of(0);
        Res::Ret(sys!(
            libc::SYS_ioctl,
            9999,
            libc::TCSETS,
            &tio as *const libc::termios
        ))
    });
    add(v, "tty-tcsets-file", |_| {
        let f = hfd("file", libc::O_RDONLY);
        // SAFETY: an all-zero termios is a valid value.
        let tio: libc::termios = unsafe { std::mem::zeroed() };
        Res::Ret(sys!(
            libc::SYS_ioctl,
            f,
            libc::TCSETS,
            &tio as *const libc::termios
        ))
    });
    add(v, "tty-winsz-fifo", |_| {
        let f = hfd("fifo", libc::O_RDWR | libc::O_NONBLOCK);
        let ws = libc::winsize {
            ws_row: 1,
            ws_col: 1,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        Res::Ret(sys!(
            libc::SYS_ioctl,
            f,
            libc::TIOCSWINSZ,
            &ws as *const libc::winsize
        ))
    });
}

/// The umask some cases set, to prove the target's own is honoured.
const U027: u32 = 0o027;

fn long_name() -> String {
    "n".repeat(300)
}

/// A relative path of exactly `len` bytes naming `file` ("./././.../file").
fn path_of_len(len: usize) -> String {
    let tail = "file";
    let n = len - tail.len();
    // "./" pairs, and one doubled slash when the length is odd.
    let mut s = "./".repeat(n / 2);
    if n % 2 == 1 {
        s.push('/');
    }
    s.push_str(tail);
    assert_eq!(s.len(), len);
    s
}

fn my_ids() -> (u32, u32) {
    // SAFETY: getuid and getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

fn unix_addr(path: &[u8]) -> (libc::sockaddr_un, usize) {
    // SAFETY: sockaddr_un is plain data; zero is a valid value.
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (i, b) in path.iter().take(sa.sun_path.len()).enumerate() {
        sa.sun_path[i] = *b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + path.len().min(sa.sun_path.len());
    (sa, len)
}

/// bind(2) of a new AF_UNIX stream socket to `path` (a leading NUL byte: abstract).
fn bind_to(path: &[u8]) -> Res {
    let s = sys!(
        libc::SYS_socket,
        libc::AF_UNIX,
        libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
        0
    );
    if s < 0 {
        return Res::Ret(s);
    }
    let (sa, len) = unix_addr(path);
    Res::Ret(sys!(
        libc::SYS_bind,
        s,
        &sa as *const libc::sockaddr_un,
        len
    ))
}

/// A new socket of `family` and `kind`, or -errno.
fn socket_of(family: i32, kind: i32) -> i64 {
    sys!(libc::SYS_socket, family, kind | libc::SOCK_CLOEXEC, 0)
}

/// sendto(2) of 3 bytes on `fd` to the Unix address `path` (none if empty).
fn sendto_path(fd: i64, path: &[u8]) -> Res {
    let (sa, len) = unix_addr(path);
    let (addr, len) = if path.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (&sa as *const libc::sockaddr_un, len)
    };
    Res::Ret(sys!(libc::SYS_sendto, fd, b"abc".as_ptr(), 3, 0, addr, len))
}

/// sendmsg(2) of 3 bytes on `fd` with no address.
fn sendmsg_plain(fd: i64) -> Res {
    let mut iov = libc::iovec {
        iov_base: b"abc".as_ptr() as *mut libc::c_void,
        iov_len: 3,
    };
    // SAFETY: an all-zero msghdr is valid; only its data is set.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    Res::Ret(sys!(libc::SYS_sendmsg, fd, &m as *const libc::msghdr, 0))
}

/// A datagram socket bound to `path`, for a send to reach (left open: the case's process
/// ends soon).
fn dgram_bound(path: &[u8]) -> i64 {
    let s = socket_of(libc::AF_UNIX, libc::SOCK_DGRAM);
    let (sa, len) = unix_addr(path);
    sys!(libc::SYS_bind, s, &sa as *const libc::sockaddr_un, len);
    s
}

fn ts(sec: i64, nsec: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    }
}

fn tv(sec: i64, usec: i64) -> libc::timeval {
    libc::timeval {
        tv_sec: sec,
        tv_usec: usec,
    }
}

fn how(flags: i32, mode: u64, resolve: u64) -> OpenHow {
    OpenHow {
        flags: flags as u32 as u64,
        mode,
        resolve,
    }
}

fn openat2(dfd: i64, path: &CStr, h: &OpenHow) -> Res {
    // `EAGAIN`: a rename or mount anywhere on the machine raced a `..` under `RESOLVE_BENEATH`
    // or `RESOLVE_IN_ROOT`; openat2(2) says to try again, as programs do.
    for _ in 0..100 {
        let r = sys!(
            libc::SYS_openat2,
            dfd,
            path.as_ptr(),
            h as *const OpenHow,
            std::mem::size_of::<OpenHow>()
        );
        if r != -i64::from(libc::EAGAIN) {
            return Res::Fd(r);
        }
    }
    Res::Fd(-i64::from(libc::EAGAIN))
}

const WR: i32 = libc::O_WRONLY;
const CR: i32 = libc::O_WRONLY | libc::O_CREAT;

fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = Vec::new();
    let v = &mut v;

    // ---- open(2) ----
    fn open<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        path: &'static str,
        flags: i32,
        mode: u32,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Fd(sys!(libc::SYS_open, cs(path).as_ptr(), flags, mode))
        })
    }
    open(v, "open-creat", "new", CR, 0o666);
    open(v, "open-creat-umask027", "new", CR, 0o666).umask(U027);
    open(v, "open-creat-mode-7777-umask027", "new", CR, 0o7777).umask(U027);
    open(
        v,
        "open-creat-rdwr-existing",
        "file",
        libc::O_RDWR | libc::O_CREAT,
        0o600,
    );
    open(v, "open-excl-existing", "file", CR | libc::O_EXCL, 0o644);
    open(
        v,
        "open-excl-dangling",
        "dangling",
        CR | libc::O_EXCL,
        0o644,
    );
    open(v, "open-excl-lnfile", "lnfile", CR | libc::O_EXCL, 0o644);
    open(v, "open-excl-without-creat", "file", WR | libc::O_EXCL, 0);
    open(v, "open-creat-dangling", "dangling", CR, 0o644);
    open(
        v,
        "open-creat-nofollow-dangling",
        "dangling",
        CR | libc::O_NOFOLLOW,
        0o644,
    );
    open(v, "open-trunc", "file", WR | libc::O_TRUNC, 0);
    open(
        v,
        "open-rdonly-trunc",
        "file",
        libc::O_RDONLY | libc::O_TRUNC,
        0,
    );
    open(v, "open-append", "file", WR | libc::O_APPEND, 0);
    open(v, "open-rdwr", "file", libc::O_RDWR, 0);
    open(v, "open-accmode-3", "file", 3, 0);
    open(
        v,
        "open-cloexec-nonblock",
        "file",
        WR | libc::O_CLOEXEC | libc::O_NONBLOCK,
        0,
    );
    open(v, "open-sync-dsync", "file", WR | libc::O_SYNC, 0);
    open(v, "open-noatime", "file", WR | libc::O_NOATIME, 0);
    open(v, "open-rdonly", "file", libc::O_RDONLY, 0);
    open(v, "open-lnfile-wronly", "lnfile", WR, 0);
    open(
        v,
        "open-nofollow-lnfile",
        "lnfile",
        WR | libc::O_NOFOLLOW,
        0,
    );
    open(
        v,
        "open-path-nofollow-lnfile",
        "lnfile",
        libc::O_PATH | libc::O_NOFOLLOW,
        0,
    );
    open(v, "open-loop", "loop", WR, 0);
    open(v, "open-loop-creat", "loop", CR, 0o644);
    open(v, "open-through-loop", "loop/new", CR, 0o644);
    open(v, "open-dir-wronly", "dir", WR, 0);
    open(v, "open-dir-rdwr", "dir", libc::O_RDWR, 0);
    open(v, "open-dir-creat", "dir", CR, 0o644);
    open(
        v,
        "open-dir-rdonly-creat",
        "dir",
        libc::O_RDONLY | libc::O_CREAT,
        0o644,
    );
    open(
        v,
        "open-directory-file",
        "file",
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    );
    open(
        v,
        "open-directory-creat",
        "new",
        libc::O_RDONLY | libc::O_CREAT | libc::O_DIRECTORY,
        0o755,
    );
    open(v, "open-trailing-file", "file/", WR, 0);
    open(v, "open-trailing-file-rdonly", "file/", libc::O_RDONLY, 0);
    open(v, "open-trailing-new-creat", "new/", CR, 0o644);
    open(v, "open-trailing-dir-wronly", "dir/", WR, 0);
    open(v, "open-trailing-lndir-wronly", "lndir/", WR, 0);
    open(v, "open-trailing-lndir-rdonly", "lndir/", libc::O_RDONLY, 0);
    open(v, "open-trailing-lnfile", "lnfile/", WR, 0);
    open(v, "open-trailing-dangling-creat", "dangling/", CR, 0o644);
    open(v, "open-empty", "", WR, 0);
    open(v, "open-empty-creat", "", CR, 0o644);
    open(v, "open-dot-wronly", ".", WR, 0);
    open(v, "open-dot-creat", ".", CR, 0o644);
    open(v, "open-dotdot-wronly", "..", WR, 0);
    open(v, "open-dir-dot-creat", "dir/.", CR, 0o644);
    open(v, "open-noent-parent", "nodir/new", CR, 0o644);
    open(v, "open-through-file", "file/new", CR, 0o644);
    open(v, "open-creat-in-lndir", "lndir/new", CR, 0o644);
    open(v, "open-ro-wronly", "ro", WR, 0);
    open(v, "open-ro-trunc", "ro", libc::O_RDONLY | libc::O_TRUNC, 0);
    open(v, "open-rodir-creat", "rodir/new", CR, 0o644);
    open(v, "open-rodir-existing-wronly", "rodir/f", WR, 0);
    open(v, "open-fifo-rdwr", "fifo", libc::O_RDWR, 0);
    open(
        v,
        "open-fifo-wronly-nonblock",
        "fifo",
        WR | libc::O_NONBLOCK,
        0,
    );
    open(
        v,
        "open-fifo-creat-rdwr",
        "fifo",
        libc::O_RDWR | libc::O_CREAT,
        0o644,
    );
    open(
        v,
        "open-tmpfile",
        "dir",
        libc::O_TMPFILE | libc::O_RDWR,
        0o600,
    );
    open(
        v,
        "open-tmpfile-umask027",
        "dir",
        libc::O_TMPFILE | libc::O_WRONLY,
        0o666,
    )
    .umask(U027);
    open(
        v,
        "open-tmpfile-excl",
        "dir",
        libc::O_TMPFILE | libc::O_WRONLY | libc::O_EXCL,
        0o600,
    );
    open(
        v,
        "open-tmpfile-rdonly",
        "dir",
        libc::O_TMPFILE | libc::O_RDONLY,
        0o600,
    );
    open(
        v,
        "open-tmpfile-on-file",
        "file",
        libc::O_TMPFILE | libc::O_WRONLY,
        0o600,
    );
    open(
        v,
        "open-tmpfile-noent",
        "nodir",
        libc::O_TMPFILE | libc::O_WRONLY,
        0o600,
    );
    open(
        v,
        "open-tmpfile-rodir",
        "rodir",
        libc::O_TMPFILE | libc::O_WRONLY,
        0o600,
    );
    open(v, "open-dev-null-wronly", "/dev/null", WR, 0);
    open(
        v,
        "open-dev-null-creat-trunc",
        "/dev/null",
        CR | libc::O_TRUNC,
        0o644,
    );
    open(v, "open-dev-stdout", "/dev/stdout", WR, 0);
    open(
        v,
        "open-dev-fd-1-append",
        "/dev/fd/1",
        WR | libc::O_APPEND,
        0,
    );
    open(v, "open-proc-self-fd-1", "/proc/self/fd/1", WR, 0);
    open(v, "open-lnout", "lnout", WR, 0)
        .prep(|d| std::os::unix::fs::symlink("/proc/self/fd/1", d.join("lnout")).unwrap());
    let long = Box::leak(long_name().into_boxed_str());
    open(v, "open-name-too-long", long, CR, 0o644);
    let p4096 = Box::leak(path_of_len(4096).into_boxed_str());
    open(v, "open-path-4096", p4096, WR, 0);
    let p4095 = Box::leak(path_of_len(4095).into_boxed_str());
    open(v, "open-path-4095", p4095, WR, 0);
    // The flags argument is an int: the upper half of the register is ignored.
    add(v, "open-flags-high-bits", |_| {
        Res::Fd(sys!(
            libc::SYS_open,
            cs("new").as_ptr(),
            (1u64 << 32) | CR as u64,
            0o644u64
        ))
    });
    add(v, "open-mode-high-bits", |_| {
        Res::Fd(sys!(
            libc::SYS_open,
            cs("new").as_ptr(),
            CR,
            (1u64 << 32) | 0o640
        ))
    });
    add(v, "open-abs-creat", |x| {
        Res::Fd(sys!(libc::SYS_open, x.a("new").as_ptr(), CR, 0o644))
    });
    add(v, "open-null-path", |_| {
        Res::Fd(sys!(libc::SYS_open, NULL, CR, 0o644))
    });
    // Reopening one's own descriptor through /proc for writing.
    fn reopen(v: &mut Vec<Case>, name: &str, file: &'static str, first: i32, then: i32) {
        add(v, name, move |_| {
            let fd = hfd(file, first);
            let p = cs(format!("/proc/self/fd/{fd}"));
            Res::Fd(sys!(libc::SYS_open, p.as_ptr(), then, 0o644))
        });
    }
    reopen(
        v,
        "open-proc-self-fd-reopen-wronly",
        "file",
        libc::O_RDONLY,
        WR,
    );
    reopen(
        v,
        "open-proc-self-fd-reopen-trunc",
        "file",
        libc::O_RDONLY,
        WR | libc::O_TRUNC,
    );
    reopen(
        v,
        "open-proc-self-fd-opath-reopen-rdwr",
        "file",
        libc::O_PATH,
        libc::O_RDWR,
    );
    reopen(
        v,
        "open-proc-self-fd-ro-reopen-wronly",
        "ro",
        libc::O_RDONLY,
        WR,
    );
    reopen(
        v,
        "open-proc-self-fd-dir-reopen-creat",
        "dir",
        libc::O_PATH,
        CR,
    );
    reopen(
        v,
        "open-proc-self-fd-symlink-opath-reopen",
        "lnfile",
        libc::O_PATH | libc::O_NOFOLLOW,
        WR,
    );
    reopen(
        v,
        "open-proc-self-fd-fifo-reopen-rdwr",
        "fifo",
        libc::O_PATH,
        libc::O_RDWR,
    );

    // ---- creat(2) ----
    fn creat<'a>(v: &'a mut Vec<Case>, name: &str, path: &'static str) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Fd(sys!(libc::SYS_creat, cs(path).as_ptr(), 0o666))
        })
    }
    creat(v, "creat-new", "new");
    creat(v, "creat-new-umask027", "new").umask(U027);
    creat(v, "creat-existing-truncates", "file");
    creat(v, "creat-dir", "dir");
    creat(v, "creat-dangling", "dangling");
    creat(v, "creat-lnfile", "lnfile");
    creat(v, "creat-loop", "loop");
    creat(v, "creat-trailing-slash", "new/");
    creat(v, "creat-ro", "ro");
    creat(v, "creat-rodir", "rodir/new");

    // ---- openat(2) ----
    for w in WS {
        add(v, format!("openat-creat-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "new");
            Res::Fd(sys!(
                libc::SYS_openat,
                d,
                p.as_ptr(),
                CR | libc::O_CLOEXEC,
                0o644
            ))
        });
        add(v, format!("openat-trunc-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            Res::Fd(sys!(
                libc::SYS_openat,
                d,
                p.as_ptr(),
                libc::O_RDWR | libc::O_TRUNC,
                0
            ))
        });
        add(v, format!("openat-tmpfile-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "dir");
            Res::Fd(sys!(
                libc::SYS_openat,
                d,
                p.as_ptr(),
                libc::O_TMPFILE | libc::O_RDWR,
                0o640
            ))
        });
    }
    add(v, "openat-creat-umask027-dfd", |x| {
        Res::Fd(sys!(libc::SYS_openat, x.dfd, cs("new").as_ptr(), CR, 0o777))
    })
    .umask(U027);
    add(v, "openat-tmpfile-dfd-dot", |x| {
        Res::Fd(sys!(
            libc::SYS_openat,
            x.dfd,
            cs(".").as_ptr(),
            libc::O_TMPFILE | WR,
            0o600
        ))
    });
    add(v, "openat-dfd-empty", |x| {
        Res::Fd(sys!(libc::SYS_openat, x.dfd, cs("").as_ptr(), WR, 0))
    });
    add(v, "openat-dfd-dotdot-wronly", |x| {
        Res::Fd(sys!(libc::SYS_openat, x.dfd, cs("..").as_ptr(), WR, 0))
    });
    add(v, "openat-dfd-lndir-creat", |x| {
        Res::Fd(sys!(
            libc::SYS_openat,
            x.dfd,
            cs("lndir/new").as_ptr(),
            CR,
            0o644
        ))
    });
    add(v, "openat-bad-dirfd", |_| {
        Res::Fd(sys!(libc::SYS_openat, 9999, cs("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-minus1-dirfd", |_| {
        Res::Fd(sys!(libc::SYS_openat, -1, cs("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-bad-dirfd-abs-path", |x| {
        Res::Fd(sys!(libc::SYS_openat, 9999, x.a("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-file-dirfd", |_| {
        let f = hfd("file", libc::O_RDONLY);
        Res::Fd(sys!(libc::SYS_openat, f, cs("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-file-dirfd-abs-path", |x| {
        let f = hfd("file", libc::O_RDONLY);
        Res::Fd(sys!(libc::SYS_openat, f, x.a("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-subdir-dirfd", |_| {
        let d = hfd("dir", libc::O_PATH | libc::O_DIRECTORY);
        Res::Fd(sys!(libc::SYS_openat, d, cs("new").as_ptr(), CR, 0o644))
    });
    add(v, "openat-subdir-dirfd-dotdot", |_| {
        let d = hfd("dir", libc::O_RDONLY | libc::O_DIRECTORY);
        Res::Fd(sys!(libc::SYS_openat, d, cs("../new").as_ptr(), CR, 0o644))
    });
    // The dirfd is an int too: AT_FDCWD with garbage in the upper half is still AT_FDCWD.
    add(v, "openat-dirfd-high-bits", |_| {
        Res::Fd(sys!(
            libc::SYS_openat,
            (1u64 << 32) | (CWD as u32 as u64),
            cs("new").as_ptr(),
            CR,
            0o644
        ))
    });
    add(v, "openat-flags-high-bits", |x| {
        Res::Fd(sys!(
            libc::SYS_openat,
            x.dfd,
            cs("file").as_ptr(),
            (1u64 << 40) | WR as u64,
            0
        ))
    });

    // ---- openat2(2) ----
    add(v, "openat2-creat-dfd", |x| {
        openat2(x.dfd, &cs("new"), &how(CR | libc::O_CLOEXEC, 0o644, 0))
    });
    add(v, "openat2-creat-cwd-umask027", |_| {
        openat2(CWD, &cs("new"), &how(CR, 0o666, 0))
    })
    .umask(U027);
    add(v, "openat2-creat-abs", |x| {
        openat2(CWD, &x.a("new"), &how(CR, 0o600, 0))
    });
    add(v, "openat2-rdonly", |x| {
        openat2(x.dfd, &cs("file"), &how(libc::O_RDONLY, 0, 0))
    });
    add(v, "openat2-append", |x| {
        openat2(x.dfd, &cs("file"), &how(WR | libc::O_APPEND, 0, 0))
    });
    add(v, "openat2-trunc", |x| {
        openat2(x.dfd, &cs("file"), &how(libc::O_RDWR | libc::O_TRUNC, 0, 0))
    });
    add(v, "openat2-excl-dangling", |x| {
        openat2(x.dfd, &cs("dangling"), &how(CR | libc::O_EXCL, 0o644, 0))
    });
    add(v, "openat2-tmpfile", |x| {
        openat2(
            x.dfd,
            &cs("dir"),
            &how(libc::O_TMPFILE | libc::O_RDWR, 0o600, 0),
        )
    });
    add(v, "openat2-trailing-file", |x| {
        openat2(x.dfd, &cs("file/"), &how(WR, 0, 0))
    });
    add(v, "openat2-bad-dirfd", |_| {
        openat2(9999, &cs("new"), &how(CR, 0o644, 0))
    });
    add(v, "openat2-beneath-ok", |x| {
        openat2(x.dfd, &cs("dir/../file"), &how(WR, 0, RESOLVE_BENEATH))
    });
    add(v, "openat2-beneath-dotdot", |x| {
        openat2(x.dfd, &cs("../new"), &how(CR, 0o644, RESOLVE_BENEATH))
    });
    add(v, "openat2-beneath-abs", |x| {
        openat2(x.dfd, &x.a("file"), &how(WR, 0, RESOLVE_BENEATH))
    });
    add(v, "openat2-beneath-lnabs", |x| {
        openat2(x.dfd, &cs("lnabs"), &how(WR, 0, RESOLVE_BENEATH))
    });
    add(v, "openat2-beneath-lnfile", |x| {
        openat2(x.dfd, &cs("lnfile"), &how(WR, 0, RESOLVE_BENEATH))
    });
    add(v, "openat2-in-root-abs", |x| {
        openat2(x.dfd, &cs("/file"), &how(WR, 0, RESOLVE_IN_ROOT))
    });
    add(v, "openat2-in-root-dotdot", |x| {
        openat2(x.dfd, &cs("../../file"), &how(WR, 0, RESOLVE_IN_ROOT))
    });
    add(v, "openat2-in-root-lnabs", |x| {
        openat2(x.dfd, &cs("lnabs"), &how(WR, 0, RESOLVE_IN_ROOT))
    });
    add(v, "openat2-in-root-creat-abs", |x| {
        openat2(x.dfd, &cs("/dir/new"), &how(CR, 0o644, RESOLVE_IN_ROOT))
    });
    add(v, "openat2-in-root-beneath", |x| {
        openat2(
            x.dfd,
            &cs("file"),
            &how(WR, 0, RESOLVE_IN_ROOT | RESOLVE_BENEATH),
        )
    });
    add(v, "openat2-no-symlinks-lnfile", |x| {
        openat2(x.dfd, &cs("lnfile"), &how(WR, 0, RESOLVE_NO_SYMLINKS))
    });
    add(v, "openat2-no-symlinks-through-lndir", |x| {
        openat2(
            x.dfd,
            &cs("lndir/new"),
            &how(CR, 0o644, RESOLVE_NO_SYMLINKS),
        )
    });
    add(v, "openat2-no-symlinks-path-nofollow", |x| {
        openat2(
            x.dfd,
            &cs("lnfile"),
            &how(libc::O_PATH | libc::O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS),
        )
    });
    add(v, "openat2-no-magiclinks-proc-fd", |_| {
        let fd = hfd("file", libc::O_RDONLY);
        openat2(
            CWD,
            &cs(format!("/proc/self/fd/{fd}")),
            &how(WR, 0, RESOLVE_NO_MAGICLINKS),
        )
    });
    add(v, "openat2-magiclinks-proc-fd", |_| {
        let fd = hfd("file", libc::O_RDONLY);
        openat2(CWD, &cs(format!("/proc/self/fd/{fd}")), &how(WR, 0, 0))
    });
    add(v, "openat2-no-magiclinks-lnout", |_| {
        openat2(CWD, &cs("lnout"), &how(WR, 0, RESOLVE_NO_MAGICLINKS))
    })
    .prep(|d| std::os::unix::fs::symlink("/proc/self/fd/1", d.join("lnout")).unwrap());
    add(v, "openat2-no-xdev-xdev", |x| {
        if x.xdev.is_none() {
            return Res::Skip;
        }
        openat2(CWD, &x.x("xfile"), &how(WR, 0, RESOLVE_NO_XDEV))
    });
    add(v, "openat2-no-xdev-same-fs", |x| {
        openat2(CWD, &x.a("file"), &how(WR, 0, RESOLVE_NO_XDEV))
    });
    add(v, "openat2-cached-creat", |x| {
        openat2(x.dfd, &cs("new"), &how(CR, 0o644, RESOLVE_CACHED))
    });
    add(v, "openat2-cached-tmpfile", |x| {
        openat2(
            x.dfd,
            &cs("dir"),
            &how(libc::O_TMPFILE | WR, 0o600, RESOLVE_CACHED),
        )
    });
    add(v, "openat2-unknown-resolve", |x| {
        openat2(x.dfd, &cs("file"), &how(WR, 0, 0x8000))
    });
    add(v, "openat2-mode-without-creat", |x| {
        openat2(x.dfd, &cs("file"), &how(WR, 0o644, 0))
    });
    add(v, "openat2-mode-too-big", |x| {
        openat2(x.dfd, &cs("new"), &how(CR, 0o10644, 0))
    });
    add(v, "openat2-flags-high-bits", |x| {
        let mut h = how(CR, 0o644, 0);
        h.flags |= 1 << 40;
        openat2(x.dfd, &cs("new"), &h)
    });
    add(v, "openat2-unknown-flag", |x| {
        openat2(x.dfd, &cs("new"), &how(CR | 0x4000_0000, 0o644, 0))
    });
    add(v, "openat2-size-too-small", |x| {
        let h = how(CR, 0o644, 0);
        Res::Fd(sys!(
            libc::SYS_openat2,
            x.dfd,
            cs("new").as_ptr(),
            &h as *const OpenHow,
            8usize
        ))
    });
    add(v, "openat2-size-bigger-zero-tail", |x| {
        let mut buf = [0u64; 8];
        buf[0] = CR as u64;
        buf[1] = 0o644;
        Res::Fd(sys!(
            libc::SYS_openat2,
            x.dfd,
            cs("new").as_ptr(),
            buf.as_ptr(),
            64usize
        ))
    });
    add(v, "openat2-size-bigger-nonzero-tail", |x| {
        let mut buf = [0u64; 8];
        buf[0] = CR as u64;
        buf[1] = 0o644;
        buf[5] = 1;
        Res::Fd(sys!(
            libc::SYS_openat2,
            x.dfd,
            cs("new").as_ptr(),
            buf.as_ptr(),
            64usize
        ))
    });
    add(v, "openat2-null-how", |x| {
        Res::Fd(sys!(
            libc::SYS_openat2,
            x.dfd,
            cs("new").as_ptr(),
            NULL,
            24usize
        ))
    });

    // ---- mkdir(2), mkdirat(2) ----
    fn mkdir<'a>(v: &'a mut Vec<Case>, name: &str, path: &'static str, mode: u32) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_mkdir, cs(path).as_ptr(), mode))
        })
    }
    mkdir(v, "mkdir-new", "new", 0o777);
    mkdir(v, "mkdir-new-umask027", "new", 0o777).umask(U027);
    mkdir(v, "mkdir-sticky-setgid", "new", 0o3777);
    mkdir(v, "mkdir-mode-high-bits", "new", 0o170_755);
    mkdir(v, "mkdir-existing-dir", "dir", 0o755);
    mkdir(v, "mkdir-existing-file", "file", 0o755);
    mkdir(v, "mkdir-dangling", "dangling", 0o755);
    mkdir(v, "mkdir-trailing-new", "new/", 0o755);
    mkdir(v, "mkdir-trailing-new-double", "new//", 0o755);
    mkdir(v, "mkdir-trailing-file", "file/", 0o755);
    mkdir(v, "mkdir-trailing-lndir", "lndir/", 0o755);
    mkdir(v, "mkdir-trailing-dangling", "dangling/", 0o755);
    mkdir(v, "mkdir-dot", ".", 0o755);
    mkdir(v, "mkdir-dotdot", "..", 0o755);
    mkdir(v, "mkdir-new-dot", "new/.", 0o755);
    mkdir(v, "mkdir-empty", "", 0o755);
    mkdir(v, "mkdir-noent-parent", "nodir/new", 0o755);
    mkdir(v, "mkdir-through-file", "file/new", 0o755);
    mkdir(v, "mkdir-in-lndir", "lndir/new", 0o755);
    mkdir(v, "mkdir-through-loop", "loop/new", 0o755);
    mkdir(v, "mkdir-rodir", "rodir/new", 0o755);
    mkdir(v, "mkdir-name-too-long", long, 0o755);
    for w in WS {
        add(v, format!("mkdirat-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "new");
            Res::Ret(sys!(libc::SYS_mkdirat, d, p.as_ptr(), 0o750))
        });
    }
    add(v, "mkdirat-dfd-umask027", |x| {
        Res::Ret(sys!(libc::SYS_mkdirat, x.dfd, cs("new").as_ptr(), 0o777))
    })
    .umask(U027);
    add(v, "mkdirat-bad-dirfd", |_| {
        Res::Ret(sys!(libc::SYS_mkdirat, 9999, cs("new").as_ptr(), 0o755))
    });
    add(v, "mkdirat-file-dirfd", |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(libc::SYS_mkdirat, f, cs("new").as_ptr(), 0o755))
    });
    add(v, "mkdirat-dfd-existing", |x| {
        Res::Ret(sys!(libc::SYS_mkdirat, x.dfd, cs("full").as_ptr(), 0o755))
    });

    // ---- mknod(2), mknodat(2) ----
    fn mknod<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        path: &'static str,
        mode: u32,
        dev: u64,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_mknod, cs(path).as_ptr(), mode, dev))
        })
    }
    mknod(v, "mknod-fifo", "new", libc::S_IFIFO | 0o666, 0);
    mknod(v, "mknod-fifo-umask027", "new", libc::S_IFIFO | 0o666, 0).umask(U027);
    mknod(v, "mknod-regular", "new", libc::S_IFREG | 0o640, 0);
    mknod(v, "mknod-type-zero", "new", 0o644, 0);
    mknod(v, "mknod-socket", "new", libc::S_IFSOCK | 0o755, 0);
    mknod(
        v,
        "mknod-chr-null",
        "new",
        libc::S_IFCHR | 0o600,
        libc::makedev(1, 3),
    );
    mknod(v, "mknod-dir-type", "new", libc::S_IFDIR | 0o755, 0);
    mknod(v, "mknod-bad-type", "new", 0o170_644, 0);
    mknod(v, "mknod-existing", "file", libc::S_IFIFO | 0o644, 0);
    mknod(v, "mknod-dangling", "dangling", libc::S_IFIFO | 0o644, 0);
    mknod(v, "mknod-trailing-slash", "new/", libc::S_IFIFO | 0o644, 0);
    mknod(v, "mknod-dot", ".", libc::S_IFIFO | 0o644, 0);
    mknod(v, "mknod-rodir", "rodir/new", libc::S_IFIFO | 0o644, 0);
    mknod(
        v,
        "mknod-noent-parent",
        "nodir/new",
        libc::S_IFIFO | 0o644,
        0,
    );
    for w in WS {
        add(v, format!("mknodat-fifo-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "new");
            Res::Ret(sys!(
                libc::SYS_mknodat,
                d,
                p.as_ptr(),
                libc::S_IFIFO | 0o640,
                0
            ))
        });
    }
    add(v, "mknodat-socket-dfd", |x| {
        Res::Ret(sys!(
            libc::SYS_mknodat,
            x.dfd,
            cs("new").as_ptr(),
            libc::S_IFSOCK | 0o777,
            0
        ))
    })
    .umask(U027);
    add(v, "mknodat-regular-dfd", |x| {
        Res::Ret(sys!(
            libc::SYS_mknodat,
            x.dfd,
            cs("new").as_ptr(),
            libc::S_IFREG | 0o4755,
            0
        ))
    });
    add(v, "mknodat-bad-dirfd", |_| {
        Res::Ret(sys!(
            libc::SYS_mknodat,
            9999,
            cs("new").as_ptr(),
            libc::S_IFIFO | 0o644,
            0
        ))
    });

    // ---- rmdir(2) ----
    fn rmdir(v: &mut Vec<Case>, name: &str, path: &'static str) {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_rmdir, cs(path).as_ptr()))
        });
    }
    rmdir(v, "rmdir-empty", "dir");
    add(v, "rmdir-abs", |x| {
        Res::Ret(sys!(libc::SYS_rmdir, x.a("dir").as_ptr()))
    });
    rmdir(v, "rmdir-trailing-slash", "dir/");
    rmdir(v, "rmdir-nonempty", "full");
    rmdir(v, "rmdir-file", "file");
    rmdir(v, "rmdir-lndir", "lndir");
    rmdir(v, "rmdir-lndir-trailing", "lndir/");
    rmdir(v, "rmdir-dangling", "dangling");
    rmdir(v, "rmdir-dot", ".");
    rmdir(v, "rmdir-dotdot", "..");
    rmdir(v, "rmdir-dir-dot", "dir/.");
    rmdir(v, "rmdir-dir-dotdot", "dir/..");
    rmdir(v, "rmdir-noent", "nodir");
    rmdir(v, "rmdir-empty-path", "");
    rmdir(v, "rmdir-rodir-sub", "rodir/sub");
    rmdir(v, "rmdir-loop", "loop");
    rmdir(v, "rmdir-name-too-long", long);
    // Names the kernel refuses before it looks at what they name, or at any permission: the
    // root (a mount point), `.` and `..`, outside the project as well as in it.
    add(v, "mkdir-root", |_| {
        Res::Ret(sys!(libc::SYS_mkdir, c"/".as_ptr(), 0o755))
    });
    add(v, "mkdir-outside-dotdot", |_| {
        Res::Ret(sys!(libc::SYS_mkdir, c"../../..".as_ptr(), 0o755))
    });
    add(v, "mknod-fifo-root", |_| {
        Res::Ret(sys!(
            libc::SYS_mknod,
            c"/".as_ptr(),
            libc::S_IFIFO | 0o644,
            0
        ))
    });
    rmdir(v, "rmdir-root", "/");
    rmdir(v, "rmdir-root-dot", "/.");
    rmdir(v, "rmdir-root-dotdot", "/..");
    rmdir(v, "rmdir-outside-dotdot", "../../..");
    unlink(v, "unlink-root", "/");
    unlink(v, "unlink-outside-dot", "../../../.");

    // ---- unlink(2), unlinkat(2) ----
    fn unlink(v: &mut Vec<Case>, name: &str, path: &'static str) {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_unlink, cs(path).as_ptr()))
        });
    }
    unlink(v, "unlink-file", "file");
    unlink(v, "unlink-lnfile", "lnfile");
    unlink(v, "unlink-dangling", "dangling");
    unlink(v, "unlink-loop", "loop");
    unlink(v, "unlink-fifo", "fifo");
    unlink(v, "unlink-inner", "full/inner");
    unlink(v, "unlink-through-lndir", "lndir/x");
    unlink(v, "unlink-dir", "dir");
    unlink(v, "unlink-lndir", "lndir");
    unlink(v, "unlink-trailing-file", "file/");
    unlink(v, "unlink-trailing-dir", "dir/");
    unlink(v, "unlink-trailing-lndir", "lndir/");
    unlink(v, "unlink-trailing-lnfile", "lnfile/");
    unlink(v, "unlink-trailing-dangling", "dangling/");
    unlink(v, "unlink-dot", ".");
    unlink(v, "unlink-dotdot", "..");
    unlink(v, "unlink-empty", "");
    unlink(v, "unlink-noent", "nothing");
    unlink(v, "unlink-ro", "ro");
    unlink(v, "unlink-rodir-file", "rodir/f");
    unlink(v, "unlink-path-4096", p4096);
    add(v, "unlink-abs", |x| {
        Res::Ret(sys!(libc::SYS_unlink, x.a("file").as_ptr()))
    });
    for w in WS {
        add(v, format!("unlinkat-file-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            Res::Ret(sys!(libc::SYS_unlinkat, d, p.as_ptr(), 0))
        });
        add(v, format!("unlinkat-removedir-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "dir");
            Res::Ret(sys!(libc::SYS_unlinkat, d, p.as_ptr(), libc::AT_REMOVEDIR))
        });
    }
    fn unlinkat(v: &mut Vec<Case>, name: &str, path: &'static str, flags: u64) {
        add(v, name, move |x| {
            Res::Ret(sys!(libc::SYS_unlinkat, x.dfd, cs(path).as_ptr(), flags))
        });
    }
    let rd = libc::AT_REMOVEDIR as u64;
    unlinkat(v, "unlinkat-removedir-file", "file", rd);
    unlinkat(v, "unlinkat-removedir-nonempty", "full", rd);
    unlinkat(v, "unlinkat-removedir-dot", ".", rd);
    unlinkat(v, "unlinkat-removedir-lndir", "lndir", rd);
    unlinkat(v, "unlinkat-removedir-trailing", "dir/", rd);
    unlinkat(v, "unlinkat-dir-without-flag", "dir", 0);
    unlinkat(v, "unlinkat-trailing-file", "file/", 0);
    unlinkat(v, "unlinkat-invalid-flag", "file", 0x1);
    unlinkat(v, "unlinkat-flags-high-bits", "dir", (1 << 32) | rd);
    unlinkat(v, "unlinkat-empty", "", 0);
    add(v, "unlinkat-bad-dirfd", |_| {
        Res::Ret(sys!(libc::SYS_unlinkat, 9999, cs("file").as_ptr(), 0))
    });
    add(v, "unlinkat-bad-dirfd-abs", |x| {
        Res::Ret(sys!(libc::SYS_unlinkat, 9999, x.a("file").as_ptr(), 0))
    });
    add(v, "unlinkat-file-dirfd", |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(libc::SYS_unlinkat, f, cs("x").as_ptr(), 0))
    });
    add(v, "unlinkat-subdir-dirfd", |_| {
        let d = hfd("full", libc::O_PATH | libc::O_DIRECTORY);
        Res::Ret(sys!(libc::SYS_unlinkat, d, cs("inner").as_ptr(), 0))
    });

    // ---- rename(2), renameat(2), renameat2(2) ----
    fn rename<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        from: &'static str,
        to: &'static str,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_rename, cs(from).as_ptr(), cs(to).as_ptr()))
        })
    }
    rename(v, "rename-file-new", "file", "new");
    rename(v, "rename-file-into-dir", "file", "dir/new");
    rename(v, "rename-file-over-file", "file", "ro");
    rename(v, "rename-file-over-symlink", "file", "lnfile");
    rename(v, "rename-file-over-dangling", "file", "dangling");
    rename(v, "rename-file-over-dir", "file", "dir");
    rename(v, "rename-file-itself", "file", "file");
    rename(v, "rename-hardlinks", "file", "hard")
        .prep(|d| std::fs::hard_link(d.join("file"), d.join("hard")).unwrap());
    rename(v, "rename-dir-new", "dir", "new");
    rename(v, "rename-dir-over-file", "dir", "file");
    rename(v, "rename-dir-over-nonempty", "dir", "full");
    rename(v, "rename-nonempty-over-empty", "full", "dir");
    rename(v, "rename-dir-into-itself", "dir", "dir/new");
    rename(v, "rename-dir-into-itself-via-lndir", "dir", "lndir/new");
    rename(v, "rename-dir-over-ancestor", "full/inner", "full");
    rename(v, "rename-symlink", "lndir", "new");
    rename(v, "rename-dangling", "dangling", "new");
    rename(v, "rename-noent", "nothing", "new");
    rename(v, "rename-to-noent-dir", "file", "nodir/new");
    rename(v, "rename-file-to-trailing", "file", "new/");
    rename(v, "rename-trailing-file", "file/", "new");
    rename(v, "rename-dir-to-trailing", "dir", "new/");
    rename(v, "rename-trailing-dir", "dir/", "new");
    rename(v, "rename-trailing-lndir", "lndir/", "new");
    rename(v, "rename-dot", ".", "new");
    rename(v, "rename-to-dot", "file", ".");
    rename(v, "rename-dir-to-dotdot", "dir", "..");
    rename(v, "rename-empty", "", "new");
    rename(v, "rename-to-empty", "file", "");
    rename(v, "rename-ro", "ro", "new");
    rename(v, "rename-out-of-rodir", "rodir/f", "new");
    rename(v, "rename-into-rodir", "file", "rodir/new");
    rename(v, "rename-name-too-long", "file", long);
    rename(v, "rename-through-file", "file", "file/new");
    add(v, "rename-xdev", |x| {
        if x.xdev.is_none() {
            return Res::Skip;
        }
        Res::Ret(sys!(
            libc::SYS_rename,
            cs("file").as_ptr(),
            x.x("new").as_ptr()
        ))
    });
    add(v, "rename-abs", |x| {
        Res::Ret(sys!(
            libc::SYS_rename,
            x.a("file").as_ptr(),
            x.a("dir/new").as_ptr()
        ))
    });
    for w in WS {
        add(v, format!("renameat-{}", w.tag()), move |x| {
            let (d1, p1) = x.at(w, "file");
            let (d2, p2) = x.at(w, "new");
            Res::Ret(sys!(libc::SYS_renameat, d1, p1.as_ptr(), d2, p2.as_ptr()))
        });
    }
    add(v, "renameat-mixed-dirfds", |x| {
        let d = hfd("dir", libc::O_PATH | libc::O_DIRECTORY);
        Res::Ret(sys!(
            libc::SYS_renameat,
            x.dfd,
            cs("file").as_ptr(),
            d,
            cs("new").as_ptr()
        ))
    });
    add(v, "renameat-bad-old-dirfd", |x| {
        Res::Ret(sys!(
            libc::SYS_renameat,
            9999,
            cs("file").as_ptr(),
            x.dfd,
            cs("new").as_ptr()
        ))
    });
    add(v, "renameat-bad-new-dirfd", |x| {
        Res::Ret(sys!(
            libc::SYS_renameat,
            x.dfd,
            cs("file").as_ptr(),
            9999,
            cs("new").as_ptr()
        ))
    });
    fn renameat2<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        from: &'static str,
        to: &'static str,
        flags: i64,
    ) -> &'a mut Case {
        add(v, name, move |x| {
            Res::Ret(sys!(
                libc::SYS_renameat2,
                x.dfd,
                cs(from).as_ptr(),
                x.dfd,
                cs(to).as_ptr(),
                flags
            ))
        })
    }
    renameat2(v, "renameat2-plain", "file", "new", 0);
    renameat2(
        v,
        "renameat2-noreplace-new",
        "file",
        "new",
        RENAME_NOREPLACE,
    );
    renameat2(
        v,
        "renameat2-noreplace-existing",
        "file",
        "ro",
        RENAME_NOREPLACE,
    );
    renameat2(
        v,
        "renameat2-noreplace-dangling",
        "file",
        "dangling",
        RENAME_NOREPLACE,
    );
    renameat2(
        v,
        "renameat2-noreplace-itself",
        "file",
        "file",
        RENAME_NOREPLACE,
    );
    renameat2(
        v,
        "renameat2-exchange-file-dir",
        "file",
        "dir",
        RENAME_EXCHANGE,
    );
    renameat2(
        v,
        "renameat2-exchange-symlinks",
        "lnfile",
        "lndir",
        RENAME_EXCHANGE,
    );
    renameat2(
        v,
        "renameat2-exchange-missing",
        "file",
        "new",
        RENAME_EXCHANGE,
    );
    renameat2(
        v,
        "renameat2-exchange-into-itself",
        "full",
        "full/inner",
        RENAME_EXCHANGE,
    );
    renameat2(
        v,
        "renameat2-exchange-noreplace",
        "file",
        "ro",
        RENAME_EXCHANGE | RENAME_NOREPLACE,
    );
    renameat2(v, "renameat2-whiteout", "file", "new", RENAME_WHITEOUT);
    renameat2(
        v,
        "renameat2-whiteout-exchange",
        "file",
        "ro",
        RENAME_WHITEOUT | RENAME_EXCHANGE,
    );
    renameat2(v, "renameat2-unknown-flag", "file", "new", 1 << 5);
    renameat2(v, "renameat2-flags-high-bits", "file", "new", 1 << 32);
    renameat2(
        v,
        "renameat2-trailing-noreplace",
        "dir",
        "new/",
        RENAME_NOREPLACE,
    );
    add(v, "renameat2-exchange-xdev", |x| {
        if x.xdev.is_none() {
            return Res::Skip;
        }
        Res::Ret(sys!(
            libc::SYS_renameat2,
            CWD,
            cs("file").as_ptr(),
            CWD,
            x.x("xfile").as_ptr(),
            RENAME_EXCHANGE
        ))
    });

    // ---- link(2), linkat(2) ----
    fn link(v: &mut Vec<Case>, name: &str, from: &'static str, to: &'static str) {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_link, cs(from).as_ptr(), cs(to).as_ptr()))
        });
    }
    link(v, "link-file", "file", "new");
    link(v, "link-into-dir", "file", "dir/new");
    link(v, "link-lnfile-not-followed", "lnfile", "new");
    link(v, "link-dangling", "dangling", "new");
    link(v, "link-dir", "dir", "new");
    link(v, "link-fifo", "fifo", "new");
    link(v, "link-ro", "ro", "new");
    link(v, "link-to-existing", "file", "ro");
    link(v, "link-to-dangling", "file", "dangling");
    link(v, "link-noent", "nothing", "new");
    link(v, "link-to-trailing", "file", "new/");
    link(v, "link-trailing-file", "file/", "new");
    link(v, "link-to-dot", "file", ".");
    link(v, "link-into-rodir", "file", "rodir/new");
    link(v, "link-name-too-long", "file", long);
    add(v, "link-xdev", |x| {
        if x.xdev.is_none() {
            return Res::Skip;
        }
        Res::Ret(sys!(
            libc::SYS_link,
            cs("file").as_ptr(),
            x.x("new").as_ptr()
        ))
    });
    for w in WS {
        add(v, format!("linkat-{}", w.tag()), move |x| {
            let (d1, p1) = x.at(w, "file");
            let (d2, p2) = x.at(w, "new");
            Res::Ret(sys!(libc::SYS_linkat, d1, p1.as_ptr(), d2, p2.as_ptr(), 0))
        });
    }
    let linkat =
        |v: &mut Vec<Case>, name: &str, from: &'static str, to: &'static str, flags: i32| {
            add(v, name, move |x| {
                Res::Ret(sys!(
                    libc::SYS_linkat,
                    x.dfd,
                    cs(from).as_ptr(),
                    x.dfd,
                    cs(to).as_ptr(),
                    flags
                ))
            });
        };
    linkat(
        v,
        "linkat-symlink-follow-lnfile",
        "lnfile",
        "new",
        libc::AT_SYMLINK_FOLLOW,
    );
    linkat(v, "linkat-no-follow-lnfile", "lnfile", "new", 0);
    linkat(
        v,
        "linkat-symlink-follow-dangling",
        "dangling",
        "new",
        libc::AT_SYMLINK_FOLLOW,
    );
    linkat(
        v,
        "linkat-symlink-follow-loop",
        "loop",
        "new",
        libc::AT_SYMLINK_FOLLOW,
    );
    linkat(v, "linkat-invalid-flag", "file", "new", 0x1);
    linkat(v, "linkat-empty-without-flag", "", "new", 0);
    add(v, "linkat-bad-dirfd", |x| {
        Res::Ret(sys!(
            libc::SYS_linkat,
            9999,
            cs("file").as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            0
        ))
    });
    // An O_TMPFILE file given a name: two intercepted syscalls, the second one is the case.
    let tmpfile = || {
        sys!(
            libc::SYS_openat,
            CWD,
            cs("dir").as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR,
            0o600
        )
    };
    add(v, "linkat-empty-path-tmpfile", move |x| {
        let t = tmpfile();
        Res::Ret(sys!(
            libc::SYS_linkat,
            t,
            cs("").as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            libc::AT_EMPTY_PATH
        ))
    });
    add(v, "linkat-proc-fd-follow-tmpfile", move |x| {
        let t = tmpfile();
        let p = cs(format!("/proc/self/fd/{t}"));
        Res::Ret(sys!(
            libc::SYS_linkat,
            CWD,
            p.as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            libc::AT_SYMLINK_FOLLOW
        ))
    });
    add(v, "linkat-proc-fd-follow-tmpfile-excl", |x| {
        let t = sys!(
            libc::SYS_openat,
            CWD,
            cs("dir").as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR | libc::O_EXCL,
            0o600
        );
        let p = cs(format!("/proc/self/fd/{t}"));
        Res::Ret(sys!(
            libc::SYS_linkat,
            CWD,
            p.as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            libc::AT_SYMLINK_FOLLOW
        ))
    });
    add(v, "linkat-empty-path-opath-file", |x| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(
            libc::SYS_linkat,
            f,
            cs("").as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            libc::AT_EMPTY_PATH
        ))
    });
    add(v, "linkat-proc-fd-follow-file", |x| {
        let f = hfd("file", libc::O_RDONLY);
        let p = cs(format!("/proc/self/fd/{f}"));
        Res::Ret(sys!(
            libc::SYS_linkat,
            CWD,
            p.as_ptr(),
            x.dfd,
            cs("new").as_ptr(),
            libc::AT_SYMLINK_FOLLOW
        ))
    });

    // ---- symlink(2), symlinkat(2) ----
    fn symlink<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        target: &'static str,
        path: &'static str,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(
                libc::SYS_symlink,
                cs(target).as_ptr(),
                cs(path).as_ptr()
            ))
        })
    }
    symlink(v, "symlink-new", "file", "new");
    symlink(v, "symlink-new-umask027", "anything", "new").umask(U027);
    symlink(v, "symlink-dangling-target", "nowhere/at/all", "new");
    symlink(v, "symlink-existing", "file", "file");
    symlink(v, "symlink-over-dangling", "file", "dangling");
    symlink(v, "symlink-trailing", "file", "new/");
    symlink(v, "symlink-dot", "file", ".");
    symlink(v, "symlink-empty-target", "", "new");
    symlink(v, "symlink-empty-path", "file", "");
    symlink(v, "symlink-in-lndir", "../file", "lndir/new");
    symlink(v, "symlink-through-dangling", "file", "dangling/new");
    symlink(v, "symlink-rodir", "file", "rodir/new");
    symlink(v, "symlink-name-too-long", "file", long);
    let t4096 = Box::leak("t".repeat(4096).into_boxed_str());
    symlink(v, "symlink-target-4096", t4096, "new");
    let t4095 = Box::leak("t".repeat(4095).into_boxed_str());
    symlink(v, "symlink-target-4095", t4095, "new");
    for w in WS {
        add(v, format!("symlinkat-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "new");
            Res::Ret(sys!(libc::SYS_symlinkat, cs("dir").as_ptr(), d, p.as_ptr()))
        });
    }
    add(v, "symlinkat-bad-dirfd", |_| {
        Res::Ret(sys!(
            libc::SYS_symlinkat,
            cs("dir").as_ptr(),
            9999,
            cs("new").as_ptr()
        ))
    });
    add(v, "symlinkat-file-dirfd", |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(
            libc::SYS_symlinkat,
            cs("dir").as_ptr(),
            f,
            cs("new").as_ptr()
        ))
    });

    // ---- chmod(2), fchmodat(2), fchmodat2(2) ----
    fn chmod<'a>(v: &'a mut Vec<Case>, name: &str, path: &'static str, mode: u32) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_chmod, cs(path).as_ptr(), mode))
        })
    }
    chmod(v, "chmod-file", "file", 0o600);
    chmod(v, "chmod-file-umask027", "file", 0o777).umask(U027);
    chmod(v, "chmod-file-7777", "file", 0o7777);
    chmod(v, "chmod-file-zero", "file", 0);
    chmod(v, "chmod-mode-high-bits", "file", 0o170_640);
    chmod(v, "chmod-ro", "ro", 0o644);
    chmod(v, "chmod-dir", "dir", 0o3700);
    chmod(v, "chmod-lnfile-follows", "lnfile", 0o600);
    chmod(v, "chmod-lndir-trailing", "lndir/", 0o700);
    chmod(v, "chmod-dangling", "dangling", 0o600);
    chmod(v, "chmod-loop", "loop", 0o600);
    chmod(v, "chmod-fifo", "fifo", 0o600);
    chmod(v, "chmod-trailing-file", "file/", 0o600);
    chmod(v, "chmod-rodir-file", "rodir/f", 0o600);
    chmod(v, "chmod-empty", "", 0o600);
    chmod(v, "chmod-noent", "nothing", 0o600);
    add(v, "chmod-abs", |x| {
        Res::Ret(sys!(libc::SYS_chmod, x.a("file").as_ptr(), 0o640))
    });
    for w in WS {
        add(v, format!("fchmodat-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            Res::Ret(sys!(libc::SYS_fchmodat, d, p.as_ptr(), 0o604))
        });
    }
    // fchmodat(2) has no flags argument: a fourth one is ignored.
    add(v, "fchmodat-ignores-flags", |x| {
        Res::Ret(sys!(
            libc::SYS_fchmodat,
            x.dfd,
            cs("lnfile").as_ptr(),
            0o600,
            libc::AT_SYMLINK_NOFOLLOW
        ))
    });
    add(v, "fchmodat-bad-dirfd", |_| {
        Res::Ret(sys!(libc::SYS_fchmodat, 9999, cs("file").as_ptr(), 0o600))
    });
    add(v, "fchmodat-dfd-empty", |x| {
        Res::Ret(sys!(libc::SYS_fchmodat, x.dfd, cs("").as_ptr(), 0o700))
    });
    fn fchmodat2(v: &mut Vec<Case>, name: &str, path: &'static str, mode: u32, flags: i32) {
        add(v, name, move |x| {
            Res::Ret(sys!(SYS_FCHMODAT2, x.dfd, cs(path).as_ptr(), mode, flags))
        });
    }
    fchmodat2(v, "fchmodat2-file", "file", 0o640, 0);
    fchmodat2(
        v,
        "fchmodat2-nofollow-file",
        "file",
        0o640,
        libc::AT_SYMLINK_NOFOLLOW,
    );
    fchmodat2(
        v,
        "fchmodat2-nofollow-lnfile",
        "lnfile",
        0o640,
        libc::AT_SYMLINK_NOFOLLOW,
    );
    fchmodat2(
        v,
        "fchmodat2-nofollow-dangling",
        "dangling",
        0o640,
        libc::AT_SYMLINK_NOFOLLOW,
    );
    fchmodat2(v, "fchmodat2-follow-lnfile", "lnfile", 0o640, 0);
    fchmodat2(
        v,
        "fchmodat2-empty-path-dir",
        "",
        0o700,
        libc::AT_EMPTY_PATH,
    );
    fchmodat2(v, "fchmodat2-empty-without-flag", "", 0o700, 0);
    fchmodat2(v, "fchmodat2-invalid-flag", "file", 0o640, 0x1);
    add(v, "fchmodat2-empty-path-opath-file", |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(
            SYS_FCHMODAT2,
            f,
            cs("").as_ptr(),
            0o606,
            libc::AT_EMPTY_PATH
        ))
    });
    add(v, "fchmodat2-empty-path-opath-symlink", |_| {
        let f = hfd("lnfile", libc::O_PATH | libc::O_NOFOLLOW);
        Res::Ret(sys!(
            SYS_FCHMODAT2,
            f,
            cs("").as_ptr(),
            0o606,
            libc::AT_EMPTY_PATH
        ))
    });

    // ---- chown(2), lchown(2), fchownat(2) ----
    let (uid, gid) = my_ids();
    let minus1 = u32::MAX;
    fn chown<'a>(
        v: &'a mut Vec<Case>,
        nr: i64,
        name: &str,
        path: &'static str,
        u: u32,
        g: u32,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(nr, cs(path).as_ptr(), u, g))
        })
    }
    chown(v, libc::SYS_chown, "chown-own", "file", uid, gid);
    chown(v, libc::SYS_chown, "chown-minus1", "file", minus1, minus1);
    chown(v, libc::SYS_chown, "chown-gid-only", "file", minus1, gid);
    chown(
        v,
        libc::SYS_chown,
        "chown-lnfile-follows",
        "lnfile",
        uid,
        gid,
    );
    chown(v, libc::SYS_chown, "chown-dangling", "dangling", uid, gid);
    chown(v, libc::SYS_chown, "chown-to-root-gid", "file", minus1, 0);
    chown(v, libc::SYS_chown, "chown-to-nobody", "file", 65534, minus1);
    chown(v, libc::SYS_chown, "chown-trailing-file", "file/", uid, gid);
    chown(v, libc::SYS_chown, "chown-dir", "dir", uid, gid);
    // Owner changes clear set-user-ID and (with group execute) set-group-ID on files.
    chown(v, libc::SYS_chown, "chown-clears-setuid", "file", uid, gid).prep(|d| {
        std::fs::set_permissions(d.join("file"), std::fs::Permissions::from_mode(0o6755)).unwrap()
    });
    chown(
        v,
        libc::SYS_chown,
        "chown-minus1-setuid",
        "file",
        minus1,
        minus1,
    )
    .prep(|d| {
        std::fs::set_permissions(d.join("file"), std::fs::Permissions::from_mode(0o6755)).unwrap()
    });
    chown(v, libc::SYS_chown, "chown-setgid-dir", "dir", uid, gid).prep(|d| {
        std::fs::set_permissions(d.join("dir"), std::fs::Permissions::from_mode(0o2755)).unwrap()
    });
    chown(v, libc::SYS_lchown, "lchown-lnfile", "lnfile", uid, gid);
    chown(v, libc::SYS_lchown, "lchown-dangling", "dangling", uid, gid);
    chown(
        v,
        libc::SYS_lchown,
        "lchown-minus1",
        "lnfile",
        minus1,
        minus1,
    );
    chown(v, libc::SYS_lchown, "lchown-file", "file", uid, gid);
    chown(v, libc::SYS_lchown, "lchown-noent", "nothing", uid, gid);
    chown(
        v,
        libc::SYS_lchown,
        "lchown-trailing-lndir",
        "lndir/",
        uid,
        gid,
    );
    for w in WS {
        add(v, format!("fchownat-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            Res::Ret(sys!(libc::SYS_fchownat, d, p.as_ptr(), uid, gid, 0))
        });
    }
    let fchownat =
        |v: &mut Vec<Case>, name: &str, path: &'static str, u: u32, g: u32, flags: i32| {
            add(v, name, move |x| {
                Res::Ret(sys!(
                    libc::SYS_fchownat,
                    x.dfd,
                    cs(path).as_ptr(),
                    u,
                    g,
                    flags
                ))
            });
        };
    fchownat(
        v,
        "fchownat-nofollow-lnfile",
        "lnfile",
        uid,
        gid,
        libc::AT_SYMLINK_NOFOLLOW,
    );
    fchownat(v, "fchownat-follow-lnfile", "lnfile", uid, gid, 0);
    fchownat(
        v,
        "fchownat-nofollow-dangling",
        "dangling",
        minus1,
        minus1,
        libc::AT_SYMLINK_NOFOLLOW,
    );
    fchownat(v, "fchownat-follow-dangling", "dangling", uid, gid, 0);
    fchownat(v, "fchownat-minus1", "file", minus1, minus1, 0);
    fchownat(
        v,
        "fchownat-empty-path-dir",
        "",
        uid,
        gid,
        libc::AT_EMPTY_PATH,
    );
    fchownat(v, "fchownat-empty-without-flag", "", uid, gid, 0);
    fchownat(v, "fchownat-invalid-flag", "file", uid, gid, 0x1);
    add(v, "fchownat-empty-path-opath-file", move |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(
            libc::SYS_fchownat,
            f,
            cs("").as_ptr(),
            uid,
            gid,
            libc::AT_EMPTY_PATH
        ))
    });
    add(v, "fchownat-bad-dirfd", move |_| {
        Res::Ret(sys!(
            libc::SYS_fchownat,
            9999,
            cs("file").as_ptr(),
            uid,
            gid,
            0
        ))
    });

    // ---- truncate(2) ----
    fn truncate<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        path: &'static str,
        len: i64,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_truncate, cs(path).as_ptr(), len))
        })
    }
    truncate(v, "truncate-shrink", "file", 2);
    truncate(v, "truncate-zero", "file", 0);
    truncate(v, "truncate-same-size", "file", 6);
    truncate(v, "truncate-extend", "file", 10);
    truncate(v, "truncate-negative", "file", -1);
    // Past the file-size limit: EFBIG (and SIGXFSZ, ignored here meanwhile).
    add(v, "truncate-past-fsize-limit", |_| {
        with_fsize_limit(4096, || {
            Res::Ret(sys!(libc::SYS_truncate, cs("file").as_ptr(), 100_000i64))
        })
    });
    add(v, "truncate-within-fsize-limit", |_| {
        with_fsize_limit(4096, || {
            Res::Ret(sys!(libc::SYS_truncate, cs("file").as_ptr(), 4096i64))
        })
    });
    truncate(v, "truncate-lnfile-follows", "lnfile", 1);
    truncate(v, "truncate-dir", "dir", 0);
    truncate(v, "truncate-fifo", "fifo", 0);
    truncate(v, "truncate-ro", "ro", 0);
    truncate(v, "truncate-rodir-file", "rodir/f", 0);
    truncate(v, "truncate-dangling", "dangling", 0);
    truncate(v, "truncate-loop", "loop", 0);
    truncate(v, "truncate-trailing-file", "file/", 0);
    truncate(v, "truncate-empty", "", 0);
    truncate(v, "truncate-dev-null", "/dev/null", 0);
    add(v, "truncate-abs", |x| {
        Res::Ret(sys!(libc::SYS_truncate, x.a("file").as_ptr(), 3))
    });
    truncate(v, "truncate-clears-setuid", "file", 1).prep(|d| {
        std::fs::set_permissions(d.join("file"), std::fs::Permissions::from_mode(0o6755)).unwrap()
    });

    // ---- utime(2), utimes(2), futimesat(2), utimensat(2) ----
    add(v, "utime-explicit", |_| {
        let t = libc::utimbuf {
            actime: T1,
            modtime: T2,
        };
        Res::Ret(sys!(
            libc::SYS_utime,
            cs("file").as_ptr(),
            &t as *const libc::utimbuf
        ))
    })
    .show(Show::Times("file"));
    add(v, "utime-null-now", |_| {
        Res::Ret(sys!(libc::SYS_utime, cs("file").as_ptr(), NULL))
    })
    .show(Show::Times("file"));
    add(v, "utime-lnfile-follows", |_| {
        let t = libc::utimbuf {
            actime: T1,
            modtime: T2,
        };
        Res::Ret(sys!(
            libc::SYS_utime,
            cs("lnfile").as_ptr(),
            &t as *const libc::utimbuf
        ))
    })
    .show(Show::Times("file"))
    .show(Show::Times("lnfile"));
    add(v, "utime-dangling", |_| {
        Res::Ret(sys!(libc::SYS_utime, cs("dangling").as_ptr(), NULL))
    });
    add(v, "utime-ro-null", |_| {
        Res::Ret(sys!(libc::SYS_utime, cs("ro").as_ptr(), NULL))
    })
    .show(Show::Times("ro"));
    add(v, "utimes-explicit", |_| {
        let t = [tv(T1, 5), tv(T2, 999_999)];
        Res::Ret(sys!(libc::SYS_utimes, cs("file").as_ptr(), t.as_ptr()))
    })
    .show(Show::Times("file"));
    add(v, "utimes-null", |_| {
        Res::Ret(sys!(libc::SYS_utimes, cs("dir").as_ptr(), NULL))
    })
    .show(Show::Times("dir"));
    add(v, "utimes-bad-usec", |_| {
        let t = [tv(T1, 1_000_000), tv(T2, 0)];
        Res::Ret(sys!(libc::SYS_utimes, cs("file").as_ptr(), t.as_ptr()))
    })
    .show(Show::Times("file"));
    add(v, "utimes-trailing-file", |_| {
        Res::Ret(sys!(libc::SYS_utimes, cs("file/").as_ptr(), NULL))
    });
    add(v, "futimesat-dfd", |x| {
        let t = [tv(T1, 1), tv(T2, 2)];
        Res::Ret(sys!(
            libc::SYS_futimesat,
            x.dfd,
            cs("file").as_ptr(),
            t.as_ptr()
        ))
    })
    .show(Show::Times("file"));
    add(v, "futimesat-cwd", |_| {
        let t = [tv(T2, 3), tv(T1, 4)];
        Res::Ret(sys!(
            libc::SYS_futimesat,
            CWD,
            cs("dir").as_ptr(),
            t.as_ptr()
        ))
    })
    .show(Show::Times("dir"));
    add(v, "futimesat-null-path-fd", |_| {
        let f = hfd("file", libc::O_RDONLY);
        let t = [tv(T1, 7), tv(T2, 8)];
        Res::Ret(sys!(libc::SYS_futimesat, f, NULL, t.as_ptr()))
    })
    .show(Show::Times("file"));
    add(v, "futimesat-bad-dirfd", |_| {
        Res::Ret(sys!(libc::SYS_futimesat, 9999, cs("file").as_ptr(), NULL))
    });
    for w in WS {
        add(v, format!("utimensat-explicit-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            let t = [ts(T1, 123_456_789), ts(T2, 987_654_321)];
            Res::Ret(sys!(libc::SYS_utimensat, d, p.as_ptr(), t.as_ptr(), 0))
        })
        .show(Show::Times("file"));
    }
    fn utimensat(
        v: &mut Vec<Case>,
        name: &str,
        path: &'static str,
        t: [libc::timespec; 2],
        flags: i32,
        show: &'static str,
    ) {
        add(v, name, move |x| {
            Res::Ret(sys!(
                libc::SYS_utimensat,
                x.dfd,
                cs(path).as_ptr(),
                t.as_ptr(),
                flags
            ))
        })
        .show(Show::Times(show));
    }
    let now = ts(0, libc::UTIME_NOW);
    let omit = ts(0, libc::UTIME_OMIT);
    utimensat(v, "utimensat-now-both", "file", [now, now], 0, "file");
    utimensat(
        v,
        "utimensat-omit-atime",
        "file",
        [omit, ts(T2, 5)],
        0,
        "file",
    );
    utimensat(
        v,
        "utimensat-omit-mtime-now-atime",
        "file",
        [now, omit],
        0,
        "file",
    );
    utimensat(v, "utimensat-omit-both", "file", [omit, omit], 0, "file");
    utimensat(
        v,
        "utimensat-nofollow-lnfile",
        "lnfile",
        [ts(T1, 1), ts(T2, 2)],
        libc::AT_SYMLINK_NOFOLLOW,
        "lnfile",
    );
    utimensat(
        v,
        "utimensat-follow-lnfile",
        "lnfile",
        [ts(T1, 1), ts(T2, 2)],
        0,
        "file",
    );
    utimensat(
        v,
        "utimensat-nofollow-dangling",
        "dangling",
        [ts(T1, 1), ts(T2, 2)],
        libc::AT_SYMLINK_NOFOLLOW,
        "dangling",
    );
    utimensat(
        v,
        "utimensat-follow-dangling",
        "dangling",
        [ts(T1, 1), ts(T2, 2)],
        0,
        "dangling",
    );
    utimensat(
        v,
        "utimensat-bad-nsec",
        "file",
        [ts(T1, 1_000_000_000), ts(T2, 0)],
        0,
        "file",
    );
    utimensat(
        v,
        "utimensat-negative-time",
        "file",
        [ts(-1, 0), ts(-5, 0)],
        0,
        "file",
    );
    utimensat(
        v,
        "utimensat-ro-explicit",
        "ro",
        [ts(T1, 0), ts(T2, 0)],
        0,
        "ro",
    );
    utimensat(v, "utimensat-ro-now", "ro", [now, now], 0, "ro");
    utimensat(v, "utimensat-dir", "dir", [ts(T1, 0), ts(T2, 0)], 0, "dir");
    utimensat(
        v,
        "utimensat-trailing-file",
        "file/",
        [ts(T1, 0), ts(T2, 0)],
        0,
        "file",
    );
    utimensat(
        v,
        "utimensat-trailing-lndir",
        "lndir/",
        [ts(T1, 0), ts(T2, 0)],
        libc::AT_SYMLINK_NOFOLLOW,
        "dir",
    );
    utimensat(
        v,
        "utimensat-invalid-flag",
        "file",
        [ts(T1, 0), ts(T2, 0)],
        0x1,
        "file",
    );
    utimensat(
        v,
        "utimensat-empty-path-dir",
        "",
        [ts(T1, 0), ts(T2, 0)],
        libc::AT_EMPTY_PATH,
        ".",
    );
    utimensat(
        v,
        "utimensat-empty-without-flag",
        "",
        [ts(T1, 0), ts(T2, 0)],
        0,
        ".",
    );
    add(v, "utimensat-times-null", |x| {
        Res::Ret(sys!(
            libc::SYS_utimensat,
            x.dfd,
            cs("file").as_ptr(),
            NULL,
            0
        ))
    })
    .show(Show::Times("file"));
    add(v, "utimensat-null-path-fd", |_| {
        let f = hfd("file", libc::O_RDONLY);
        let t = [ts(T1, 10), ts(T2, 20)];
        Res::Ret(sys!(libc::SYS_utimensat, f, NULL, t.as_ptr(), 0))
    })
    .show(Show::Times("file"));
    add(v, "utimensat-null-path-fd-null-times", |_| {
        let f = hfd("ro", libc::O_RDONLY);
        Res::Ret(sys!(libc::SYS_utimensat, f, NULL, NULL, 0))
    })
    .show(Show::Times("ro"));
    add(v, "utimensat-null-path-opath-fd", |_| {
        let f = hfd("file", libc::O_PATH);
        let t = [ts(T1, 10), ts(T2, 20)];
        Res::Ret(sys!(libc::SYS_utimensat, f, NULL, t.as_ptr(), 0))
    })
    .show(Show::Times("file"));
    add(v, "utimensat-null-path-fd-with-flag", |_| {
        let f = hfd("file", libc::O_RDONLY);
        let t = [ts(T1, 10), ts(T2, 20)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            f,
            NULL,
            t.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW
        ))
    })
    .show(Show::Times("file"));
    add(v, "utimensat-null-path-cwd", |_| {
        let t = [ts(T1, 10), ts(T2, 20)];
        Res::Ret(sys!(libc::SYS_utimensat, CWD, NULL, t.as_ptr(), 0))
    })
    .show(Show::Times("."));
    add(v, "utimensat-empty-path-opath-symlink", |_| {
        let f = hfd("lnfile", libc::O_PATH | libc::O_NOFOLLOW);
        let t = [ts(T1, 10), ts(T2, 20)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            f,
            cs("").as_ptr(),
            t.as_ptr(),
            libc::AT_EMPTY_PATH
        ))
    })
    .show(Show::Times("lnfile"))
    .show(Show::Times("file"));
    add(v, "utimensat-bad-dirfd", |_| {
        Res::Ret(sys!(
            libc::SYS_utimensat,
            9999,
            cs("file").as_ptr(),
            NULL,
            0
        ))
    });

    // ---- xattrs by path ----
    fn setx(
        v: &mut Vec<Case>,
        nr: i64,
        name: &str,
        path: &'static str,
        attr: &'static str,
        flags: i32,
    ) {
        add(v, name, move |_| {
            Res::Ret(sys!(
                nr,
                cs(path).as_ptr(),
                cs(attr).as_ptr(),
                b"v2".as_ptr(),
                2usize,
                flags
            ))
        });
    }
    setx(v, libc::SYS_setxattr, "setxattr-new", "file", "user.new", 0);
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-replace",
        "file",
        "user.x",
        XATTR_REPLACE,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-replace-missing",
        "file",
        "user.new",
        XATTR_REPLACE,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-create-existing",
        "file",
        "user.x",
        XATTR_CREATE,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-invalid-flags",
        "file",
        "user.new",
        4,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-lnfile-follows",
        "lnfile",
        "user.new",
        0,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-dangling",
        "dangling",
        "user.new",
        0,
    );
    setx(v, libc::SYS_setxattr, "setxattr-dir", "dir", "user.new", 0);
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-fifo",
        "fifo",
        "user.new",
        0,
    );
    setx(v, libc::SYS_setxattr, "setxattr-ro", "ro", "user.new", 0);
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-no-namespace",
        "file",
        "plain",
        0,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-unknown-namespace",
        "file",
        "bogus.x",
        0,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-trusted",
        "file",
        "trusted.x",
        0,
    );
    setx(v, libc::SYS_setxattr, "setxattr-empty-name", "file", "", 0);
    let longattr = Box::leak(format!("user.{}", "a".repeat(300)).into_boxed_str());
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-name-too-long",
        "file",
        longattr,
        0,
    );
    setx(
        v,
        libc::SYS_setxattr,
        "setxattr-trailing-file",
        "file/",
        "user.new",
        0,
    );
    setx(
        v,
        libc::SYS_lsetxattr,
        "lsetxattr-file",
        "file",
        "user.new",
        0,
    );
    setx(
        v,
        libc::SYS_lsetxattr,
        "lsetxattr-lnfile",
        "lnfile",
        "user.new",
        0,
    );
    setx(
        v,
        libc::SYS_lsetxattr,
        "lsetxattr-dangling",
        "dangling",
        "user.new",
        0,
    );
    add(v, "setxattr-value-too-big", |_| {
        let big = vec![b'v'; 70_000];
        Res::Ret(sys!(
            libc::SYS_setxattr,
            cs("file").as_ptr(),
            cs("user.big").as_ptr(),
            big.as_ptr(),
            big.len(),
            0
        ))
    });
    add(v, "setxattr-empty-value", |_| {
        Res::Ret(sys!(
            libc::SYS_setxattr,
            cs("file").as_ptr(),
            cs("user.e").as_ptr(),
            NULL,
            0usize,
            0
        ))
    });
    add(v, "setxattr-abs", |x| {
        Res::Ret(sys!(
            libc::SYS_setxattr,
            x.a("dir").as_ptr(),
            cs("user.d").as_ptr(),
            b"1".as_ptr(),
            1usize,
            0
        ))
    });
    fn rmx(v: &mut Vec<Case>, nr: i64, name: &str, path: &'static str, attr: &'static str) {
        add(v, name, move |_| {
            Res::Ret(sys!(nr, cs(path).as_ptr(), cs(attr).as_ptr()))
        });
    }
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-existing",
        "file",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-missing",
        "file",
        "user.none",
    );
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-lnfile-follows",
        "lnfile",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-dangling",
        "dangling",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-no-namespace",
        "file",
        "x",
    );
    rmx(v, libc::SYS_removexattr, "removexattr-ro", "ro", "user.x");
    rmx(
        v,
        libc::SYS_removexattr,
        "removexattr-noent",
        "nothing",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_lremovexattr,
        "lremovexattr-file",
        "file",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_lremovexattr,
        "lremovexattr-lnfile",
        "lnfile",
        "user.x",
    );
    rmx(
        v,
        libc::SYS_lremovexattr,
        "lremovexattr-dangling",
        "dangling",
        "user.x",
    );
    fn setxattrat(v: &mut Vec<Case>, name: &str, path: &'static str, at: i32, size: usize) {
        add(v, name, move |x| {
            let a = XattrArgs {
                value: b"v3".as_ptr() as u64,
                size: 2,
                flags: 0,
            };
            Res::Ret(sys!(
                SYS_SETXATTRAT,
                x.dfd,
                cs(path).as_ptr(),
                at,
                cs("user.at").as_ptr(),
                &a as *const XattrArgs,
                size
            ))
        });
    }
    setxattrat(v, "setxattrat-file", "file", 0, 16);
    setxattrat(v, "setxattrat-lnfile-follows", "lnfile", 0, 16);
    setxattrat(
        v,
        "setxattrat-nofollow-lnfile",
        "lnfile",
        libc::AT_SYMLINK_NOFOLLOW,
        16,
    );
    setxattrat(v, "setxattrat-empty-path-dir", "", libc::AT_EMPTY_PATH, 16);
    setxattrat(v, "setxattrat-bad-size", "file", 0, 8);
    setxattrat(v, "setxattrat-invalid-flag", "file", 0x1, 16);
    fn removexattrat(v: &mut Vec<Case>, name: &str, path: &'static str, at: i32) {
        add(v, name, move |x| {
            Res::Ret(sys!(
                SYS_REMOVEXATTRAT,
                x.dfd,
                cs(path).as_ptr(),
                at,
                cs("user.x").as_ptr()
            ))
        });
    }
    removexattrat(v, "removexattrat-file", "file", 0);
    removexattrat(
        v,
        "removexattrat-nofollow-lnfile",
        "lnfile",
        libc::AT_SYMLINK_NOFOLLOW,
    );
    removexattrat(v, "removexattrat-lnfile-follows", "lnfile", 0);
    removexattrat(v, "removexattrat-missing-dir", "dir", 0);
    add(v, "removexattrat-empty-path-opath", |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(
            SYS_REMOVEXATTRAT,
            f,
            cs("").as_ptr(),
            libc::AT_EMPTY_PATH,
            cs("user.x").as_ptr()
        ))
    });

    // ---- file_setattr(2) (6.17) ----
    add(v, "file_setattr-same", |x| {
        let mut fa = FileAttr::default();
        let sz = std::mem::size_of::<FileAttr>();
        let r = sys!(
            SYS_FILE_GETATTR,
            x.dfd,
            cs("file").as_ptr(),
            &mut fa as *mut FileAttr,
            sz,
            0
        );
        if r < 0 {
            return Res::Ret(r);
        }
        fa.nextents = 0;
        Res::Ret(sys!(
            SYS_FILE_SETATTR,
            x.dfd,
            cs("file").as_ptr(),
            &fa as *const FileAttr,
            sz,
            0
        ))
    })
    .show(Show::IFlags("file"));
    add(v, "file_setattr-noatime", |x| {
        let fa = FileAttr {
            xflags: FS_XFLAG_NOATIME,
            ..FileAttr::default()
        };
        let sz = std::mem::size_of::<FileAttr>();
        Res::Ret(sys!(
            SYS_FILE_SETATTR,
            x.dfd,
            cs("file").as_ptr(),
            &fa as *const FileAttr,
            sz,
            0
        ))
    })
    .show(Show::IFlags("file"));
    add(v, "file_setattr-nofollow-lnfile", |x| {
        let fa = FileAttr::default();
        let sz = std::mem::size_of::<FileAttr>();
        Res::Ret(sys!(
            SYS_FILE_SETATTR,
            x.dfd,
            cs("lnfile").as_ptr(),
            &fa as *const FileAttr,
            sz,
            libc::AT_SYMLINK_NOFOLLOW
        ))
    });
    add(v, "file_setattr-bad-size", |x| {
        let fa = FileAttr::default();
        Res::Ret(sys!(
            SYS_FILE_SETATTR,
            x.dfd,
            cs("file").as_ptr(),
            &fa as *const FileAttr,
            8usize,
            0
        ))
    });

    // ---- by descriptor: fchmod, fchown, fsetxattr, fremovexattr, ioctl ----
    fn byfd<'a>(
        v: &'a mut Vec<Case>,
        name: &str,
        path: &'static str,
        flags: i32,
        op: fn(i64) -> i64,
    ) -> &'a mut Case {
        add(v, name, move |_| {
            let f = hfd(path, flags);
            Res::Ret(op(f))
        })
    }
    let rd = libc::O_RDONLY;
    let opath = libc::O_PATH;
    byfd(v, "fchmod-file", "file", rd, |f| {
        sys!(libc::SYS_fchmod, f, 0o600)
    });
    byfd(v, "fchmod-file-7777", "file", rd, |f| {
        sys!(libc::SYS_fchmod, f, 0o7777)
    });
    byfd(v, "fchmod-ro", "ro", rd, |f| {
        sys!(libc::SYS_fchmod, f, 0o666)
    });
    byfd(v, "fchmod-dir", "dir", rd | libc::O_DIRECTORY, |f| {
        sys!(libc::SYS_fchmod, f, 0o700)
    });
    byfd(v, "fchmod-opath", "file", opath, |f| {
        sys!(libc::SYS_fchmod, f, 0o600)
    });
    byfd(
        v,
        "fchmod-opath-symlink",
        "lnfile",
        opath | libc::O_NOFOLLOW,
        |f| sys!(libc::SYS_fchmod, f, 0o600),
    );
    byfd(
        v,
        "fchmod-fifo",
        "fifo",
        libc::O_RDWR | libc::O_NONBLOCK,
        |f| sys!(libc::SYS_fchmod, f, 0o600),
    );
    add(v, "fchmod-bad-fd", |_| {
        Res::Ret(sys!(libc::SYS_fchmod, 9999, 0o600))
    });
    add(v, "fchmod-socket", |_| {
        let s = sys!(
            libc::SYS_socket,
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0
        );
        Res::Ret(sys!(libc::SYS_fchmod, s, 0o600))
    });
    byfd(v, "fchown-own", "file", rd, move |f| {
        let (u, g) = my_ids();
        sys!(libc::SYS_fchown, f, u, g)
    });
    byfd(v, "fchown-minus1", "file", rd, |f| {
        sys!(libc::SYS_fchown, f, u32::MAX, u32::MAX)
    });
    byfd(v, "fchown-to-root-gid", "file", rd, |f| {
        sys!(libc::SYS_fchown, f, u32::MAX, 0)
    });
    byfd(v, "fchown-opath", "file", opath, |f| {
        sys!(libc::SYS_fchown, f, u32::MAX, u32::MAX)
    });
    byfd(v, "fchown-clears-setuid", "file", rd, |f| {
        sys!(libc::SYS_fchown, f, u32::MAX, u32::MAX)
    })
    .prep(|d| {
        std::fs::set_permissions(d.join("file"), std::fs::Permissions::from_mode(0o6755)).unwrap()
    });
    add(v, "fchown-bad-fd", |_| {
        Res::Ret(sys!(libc::SYS_fchown, 9999, u32::MAX, u32::MAX))
    });
    fn fset(f: i64, name: &str, flags: i32) -> i64 {
        sys!(
            libc::SYS_fsetxattr,
            f,
            cs(name).as_ptr(),
            b"fv".as_ptr(),
            2usize,
            flags
        )
    }
    byfd(v, "fsetxattr-new", "file", rd, |f| fset(f, "user.new", 0));
    byfd(v, "fsetxattr-create-existing", "file", rd, |f| {
        fset(f, "user.x", XATTR_CREATE)
    });
    byfd(v, "fsetxattr-replace-missing", "file", rd, |f| {
        fset(f, "user.new", XATTR_REPLACE)
    });
    byfd(v, "fsetxattr-dir", "dir", rd | libc::O_DIRECTORY, |f| {
        fset(f, "user.new", 0)
    });
    byfd(v, "fsetxattr-opath", "file", opath, |f| {
        fset(f, "user.new", 0)
    });
    byfd(v, "fsetxattr-ro", "ro", rd, |f| fset(f, "user.new", 0));
    byfd(v, "fsetxattr-no-namespace", "file", rd, |f| {
        fset(f, "plain", 0)
    });
    add(v, "fsetxattr-bad-fd", |_| {
        Res::Ret(fset(9999, "user.new", 0))
    });
    fn frm(f: i64, name: &str) -> i64 {
        sys!(libc::SYS_fremovexattr, f, cs(name).as_ptr())
    }
    byfd(v, "fremovexattr-existing", "file", rd, |f| frm(f, "user.x"));
    byfd(v, "fremovexattr-missing", "file", rd, |f| {
        frm(f, "user.none")
    });
    byfd(v, "fremovexattr-opath", "file", opath, |f| frm(f, "user.x"));
    byfd(v, "fremovexattr-ro", "ro", rd, |f| frm(f, "user.x"));
    add(v, "fremovexattr-bad-fd", |_| Res::Ret(frm(9999, "user.x")));
    byfd(v, "ioctl-setflags-noatime", "file", rd, |f| {
        let mut fl: i32 = 0;
        sys!(libc::SYS_ioctl, f, FS_IOC_GETFLAGS, &mut fl as *mut i32);
        fl |= FS_NOATIME_FL;
        sys!(libc::SYS_ioctl, f, FS_IOC_SETFLAGS, &fl as *const i32)
    })
    .show(Show::IFlags("file"));
    byfd(
        v,
        "ioctl-setflags-same-dir",
        "dir",
        rd | libc::O_DIRECTORY,
        |f| {
            let mut fl: i32 = 0;
            sys!(libc::SYS_ioctl, f, FS_IOC_GETFLAGS, &mut fl as *mut i32);
            sys!(libc::SYS_ioctl, f, FS_IOC_SETFLAGS, &fl as *const i32)
        },
    )
    .show(Show::IFlags("dir"));
    byfd(v, "ioctl-setflags-opath", "file", opath, |f| {
        let fl: i32 = 0;
        sys!(libc::SYS_ioctl, f, FS_IOC_SETFLAGS, &fl as *const i32)
    });
    byfd(v, "ioctl-fssetxattr-same", "file", rd, |f| {
        let mut fa = FsXattr::default();
        let r = sys!(
            libc::SYS_ioctl,
            f,
            FS_IOC_FSGETXATTR,
            &mut fa as *mut FsXattr
        );
        if r < 0 {
            return r;
        }
        sys!(libc::SYS_ioctl, f, FS_IOC_FSSETXATTR, &fa as *const FsXattr)
    })
    .show(Show::IFlags("file"));
    byfd(v, "ioctl-ficlone", "ro", rd, |src| {
        let dst = hfd("file", libc::O_WRONLY);
        sys!(libc::SYS_ioctl, dst, FICLONE, src)
    });

    terminal_cases(v);

    // ---- bind(2) of AF_UNIX sockets ----
    add(v, "bind-rel", |_| bind_to(b"sock"));
    add(v, "bind-rel-umask027", |_| bind_to(b"sock")).umask(U027);
    add(v, "bind-rel-umask000", |_| bind_to(b"sock")).umask(0);
    add(v, "bind-abs", |x| bind_to(x.a("sock").as_bytes()));
    add(v, "bind-existing-file", |_| bind_to(b"file"));
    add(v, "bind-dangling", |_| bind_to(b"dangling"));
    add(v, "bind-in-lndir", |_| bind_to(b"lndir/sock"));
    add(v, "bind-noent-dir", |_| bind_to(b"nodir/sock"));
    add(v, "bind-through-file", |_| bind_to(b"file/sock"));
    add(v, "bind-trailing-slash", |_| bind_to(b"sock/"));
    add(v, "bind-rodir", |_| bind_to(b"rodir/sock"));
    // Abstract names are shared by the whole network namespace: one of this run's own, or
    // runs side by side (lite and strict) take each other's.
    add(v, "bind-abstract", |_| {
        bind_to(format!("\0hp-conform-abstract-{}", std::process::id()).as_bytes())
    });
    add(v, "bind-empty-autobind", |_| bind_to(b""));

    // ---- sendto(2), sendmsg(2) (strict mode sends them itself) ----
    let dgram = || socket_of(libc::AF_UNIX, libc::SOCK_DGRAM);
    add(v, "sendto-bound", move |_| {
        dgram_bound(b"rsock");
        sendto_path(dgram(), b"rsock")
    });
    add(v, "sendto-noent", move |_| sendto_path(dgram(), b"nosock"));
    add(v, "sendto-file", move |_| sendto_path(dgram(), b"file"));
    add(v, "sendto-no-receiver", move |_| {
        sys!(libc::SYS_close, dgram_bound(b"gone"));
        sendto_path(dgram(), b"gone")
    });
    add(v, "sendto-ebadf", |_| sendto_path(999, b"file"));
    add(v, "sendto-enotsock", |_| {
        let f = sys!(libc::SYS_openat, CWD, cs("file").as_ptr(), libc::O_RDONLY);
        sendto_path(f, b"file")
    });
    add(v, "sendto-stream-addr", |_| {
        dgram_bound(b"rsock");
        sendto_path(socket_of(libc::AF_UNIX, libc::SOCK_STREAM), b"rsock")
    });
    add(v, "sendmsg-unconnected-dgram", move |_| {
        sendmsg_plain(dgram())
    });
    add(v, "sendmsg-udp-edestaddrreq", |_| {
        sendmsg_plain(socket_of(libc::AF_INET, libc::SOCK_DGRAM))
    });
    add(v, "sendmsg-ebadf", |_| sendmsg_plain(999));

    // ---- after switching user or dropping capabilities (this thread only) ----
    // As root, each call runs as another user or without capabilities and must get what the
    // kernel gives that user: allowed on what it owns, refused on root's. Unprivileged, the
    // switches fail and the call runs as ourselves.
    add(v, "setfsuid-chmod-own", |_| {
        with_fsuid(OTHER, || {
            Res::Ret(sys!(libc::SYS_fchmodat, CWD, cs("file").as_ptr(), 0o604))
        })
    })
    .prep(|d| give_to_other(&d.join("file")));
    add(v, "setfsuid-chmod-roots", |_| {
        with_fsuid(OTHER, || {
            Res::Ret(sys!(libc::SYS_fchmodat, CWD, cs("file").as_ptr(), 0o604))
        })
    });
    add(v, "setfsuid-mkdir-in-roots-dir", |_| {
        with_fsuid(OTHER, || {
            Res::Ret(sys!(libc::SYS_mkdirat, CWD, cs("dir/new").as_ptr(), 0o755))
        })
    });
    add(v, "setfsuid-unlink-in-own-dir", |_| {
        with_fsuid(OTHER, || {
            Res::Ret(sys!(libc::SYS_unlinkat, CWD, cs("full/inner").as_ptr(), 0))
        })
    })
    .prep(|d| give_to_other(&d.join("full")));
    add(v, "seteuid-utimensat-now-own", |_| {
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_utimensat,
                CWD,
                cs("file").as_ptr(),
                std::ptr::null::<libc::timespec>(),
                0
            ))
        })
    })
    .prep(|d| give_to_other(&d.join("file")));
    add(v, "seteuid-utimensat-now-roots", |_| {
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_utimensat,
                CWD,
                cs("file").as_ptr(),
                std::ptr::null::<libc::timespec>(),
                0
            ))
        })
    });
    add(v, "seteuid-fchmod-own", |_| {
        let f = hfd("file", libc::O_RDONLY);
        with_euid(OTHER, || Res::Ret(sys!(libc::SYS_fchmod, f, 0o600)))
    })
    .prep(|d| give_to_other(&d.join("file")));
    add(v, "seteuid-fchmod-roots", |_| {
        let f = hfd("file", libc::O_RDONLY);
        with_euid(OTHER, || Res::Ret(sys!(libc::SYS_fchmod, f, 0o600)))
    });
    add(v, "seteuid-create-in-own-dir", |_| {
        with_euid(OTHER, || {
            Res::Fd(sys!(
                libc::SYS_openat,
                CWD,
                cs("dir/new").as_ptr(),
                CR,
                0o644
            ))
        })
    })
    .prep(|d| give_to_other(&d.join("dir")));
    add(v, "seteuid-rename-roots-file", |_| {
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_renameat,
                CWD,
                cs("file").as_ptr(),
                CWD,
                cs("moved").as_ptr()
            ))
        })
    });
    add(v, "capset-none-chmod-own", |_| {
        without_caps(|| Res::Ret(sys!(libc::SYS_fchmodat, CWD, cs("file").as_ptr(), 0o600)))
    });
    add(v, "capset-none-chown", |_| {
        without_caps(|| {
            Res::Ret(sys!(
                libc::SYS_fchownat,
                CWD,
                cs("file").as_ptr(),
                OTHER,
                OTHER,
                0
            ))
        })
    });
    add(v, "capset-none-chmod-others", |_| {
        without_caps(|| Res::Ret(sys!(libc::SYS_fchmodat, CWD, cs("file").as_ptr(), 0o600)))
    })
    .prep(|d| give_to_other(&d.join("file")));
    add(v, "capset-none-write-others-ro", |_| {
        without_caps(|| Res::Fd(sys!(libc::SYS_openat, CWD, cs("ro").as_ptr(), WR)))
    })
    .prep(|d| give_to_other(&d.join("ro")));

    device_cases(v);
    omit_cases(v);
    mount_cases(v);
    guise_cases(v);
    std::mem::take(v)
}

/// `mknod(2)` of devices, whose refusal in strict mode (`EPERM`, as without `CAP_MKNOD`) must
/// come only where the kernel would have made the node: every other error is the kernel's, in
/// its order (the type, then the path, then an existing name, then permission, then the
/// capability). And the argument widths the kernel reads: a 16-bit mode, a 32-bit device.
fn device_cases(v: &mut Vec<Case>) {
    fn node(v: &mut Vec<Case>, name: &str, path: &'static str, mode: u32, dev: u64) {
        add(v, name, move |_| {
            Res::Ret(sys!(libc::SYS_mknod, cs(path).as_ptr(), mode, dev))
        });
    }
    let (chr, blk) = (libc::S_IFCHR | 0o600, libc::S_IFBLK | 0o600);
    let null = libc::makedev(1, 3);
    node(v, "mknod-chr-existing", "file", chr, null);
    node(v, "mknod-chr-dangling", "dangling", chr, null);
    node(v, "mknod-chr-dot", ".", chr, null);
    node(v, "mknod-chr-trailing-slash", "new/", chr, null);
    node(v, "mknod-chr-notdir", "file/new", chr, null);
    node(v, "mknod-chr-noent", "nodir/new", chr, null);
    node(v, "mknod-chr-loop", "loop/new", chr, null);
    node(
        v,
        "mknod-chr-name-too-long",
        Box::leak(long_name().into_boxed_str()),
        chr,
        null,
    );
    node(v, "mknod-chr-rodir", "rodir/new", chr, null);
    node(v, "mknod-blk-new", "new", blk, libc::makedev(7, 0));
    node(v, "mknod-blk-existing", "file", blk, libc::makedev(7, 0));
    node(v, "mknod-blk-noent", "nodir/new", blk, libc::makedev(7, 0));
    // A whiteout (0:0) needs no capability; the kernel reads the device as 32 bits.
    node(v, "mknod-whiteout", "new", libc::S_IFCHR, 0);
    node(v, "mknod-whiteout-high-dev", "new", libc::S_IFCHR, 1 << 32);
    node(v, "mknod-chr-high-dev", "new", chr, (1 << 32) | null);
    // The kernel reads the mode as 16 bits, and checks the type before the path.
    node(
        v,
        "mknod-fifo-high-mode",
        "new",
        (1 << 16) | libc::S_IFIFO | 0o644,
        0,
    );
    node(
        v,
        "mknod-dir-type-noent",
        "nodir/new",
        libc::S_IFDIR | 0o755,
        0,
    );
    node(v, "mknod-bad-type-noent", "nodir/new", 0o170_644, 0);
    node(v, "mknod-type-030000", "new", 0o030_644, null);
    node(v, "mknod-type-070000", "new", 0o070_644, null);
    for w in WS {
        add(v, format!("mknodat-chr-existing-{}", w.tag()), move |x| {
            let (d, p) = x.at(w, "file");
            Res::Ret(sys!(libc::SYS_mknodat, d, p.as_ptr(), chr, null))
        });
    }
    add(v, "mknodat-chr-bad-dirfd", move |_| {
        Res::Ret(sys!(libc::SYS_mknodat, 9999, cs("new").as_ptr(), chr, null))
    });
    add(v, "mknodat-chr-dfd-new", move |x| {
        Res::Ret(sys!(
            libc::SYS_mknodat,
            x.dfd,
            cs("new").as_ptr(),
            chr,
            null
        ))
    });
}

/// `utimensat(2)` with both times `UTIME_OMIT` does nothing, and checks nothing: not the
/// flags, the descriptor nor the path.
fn omit_cases(v: &mut Vec<Case>) {
    let omit = [ts(0, libc::UTIME_OMIT), ts(0, libc::UTIME_OMIT)];
    add(v, "utimensat-omit-both-noent", move |_| {
        let p = cs("nodir/x");
        Res::Ret(sys!(libc::SYS_utimensat, CWD, p.as_ptr(), omit.as_ptr(), 0))
    });
    add(v, "utimensat-omit-both-bad-flag", move |_| {
        let p = cs("file");
        Res::Ret(sys!(
            libc::SYS_utimensat,
            CWD,
            p.as_ptr(),
            omit.as_ptr(),
            0x1
        ))
    });
    add(v, "utimensat-omit-both-bad-dirfd", move |_| {
        let p = cs("file");
        Res::Ret(sys!(
            libc::SYS_utimensat,
            9999,
            p.as_ptr(),
            omit.as_ptr(),
            0
        ))
    });
    add(v, "utimensat-omit-both-opath-fd", move |_| {
        let f = hfd("file", libc::O_PATH);
        Res::Ret(sys!(libc::SYS_utimensat, f, NULL, omit.as_ptr(), 0))
    });
    add(v, "utimensat-omit-both-efault-flag", move |_| {
        let p = cs("file");
        Res::Ret(sys!(libc::SYS_utimensat, CWD, p.as_ptr(), 8usize, 0x1))
    });
    // Not omitted: the flags are checked before the path, the times' values after it.
    add(v, "utimensat-bad-nsec-noent", move |_| {
        let t = [ts(T1, 1_000_000_000), ts(T2, 0)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            CWD,
            cs("nodir/x").as_ptr(),
            t.as_ptr(),
            0
        ))
    });
    add(v, "utimensat-bad-flag-noent", move |_| {
        let t = [ts(T1, 0), ts(T2, 0)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            CWD,
            cs("nodir/x").as_ptr(),
            t.as_ptr(),
            0x1
        ))
    });
    add(v, "utimensat-null-path-fd-empty-flag", move |_| {
        let f = hfd("file", libc::O_RDONLY);
        let t = [ts(T1, 0), ts(T2, 0)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            f,
            NULL,
            t.as_ptr(),
            libc::AT_EMPTY_PATH
        ))
    });
    add(v, "utimensat-null-path-cwd-nofollow", move |_| {
        let t = [ts(T1, 0), ts(T2, 0)];
        Res::Ret(sys!(
            libc::SYS_utimensat,
            CWD,
            NULL,
            t.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW
        ))
    });
    add(v, "utimensat-omit-both-null-path-cwd", move |_| {
        Res::Ret(sys!(libc::SYS_utimensat, CWD, NULL, omit.as_ptr(), 0))
    });
}

/// A mount point, and files of root's, in a directory the caller (root) made: hp-conform
/// cannot mount, nor can anyone in a strict session. `--mounts DIR` names it: `DIR` (mode
/// 0777, root's) holds `mnt`, on which a file system is mounted, `rootrw`, a file of root's
/// that anyone may write (0666), and `rootro`, one only root may (0644). Without it these
/// cases print `skip`.
fn mount_cases(v: &mut Vec<Case>) {
    /// `f` on the absolute path of `name` in the mounts directory.
    fn on(v: &mut Vec<Case>, case: &str, name: &'static str, f: impl Fn(&CStr) -> i64 + 'static) {
        add(v, case, move |x| match x.m(name) {
            Some(p) => Res::Ret(f(&p)),
            None => Res::Skip,
        });
    }
    let rmdir = |p: &CStr| sys!(libc::SYS_rmdir, p.as_ptr());
    on(v, "rmdir-mount-point", "mnt", rmdir);
    on(v, "rmdir-mount-point-slash", "mnt/", rmdir);
    on(v, "rmdir-mount-point-dot", "mnt/.", rmdir);
    on(v, "rmdir-mount-point-dotdot", "mnt/..", rmdir);
    on(v, "unlink-mount-point", "mnt", |p| {
        sys!(libc::SYS_unlink, p.as_ptr())
    });
    on(v, "mkdir-mount-point", "mnt", |p| {
        sys!(libc::SYS_mkdir, p.as_ptr(), 0o755)
    });
    on(v, "mknod-fifo-mount-point", "mnt", |p| {
        sys!(libc::SYS_mknod, p.as_ptr(), libc::S_IFIFO | 0o644, 0)
    });
    on(v, "mknod-chr-mount-point", "mnt", |p| {
        sys!(
            libc::SYS_mknod,
            p.as_ptr(),
            libc::S_IFCHR | 0o644,
            libc::makedev(1, 3)
        )
    });
    on(v, "rename-mount-point", "mnt", |p| {
        let to = cs([p.to_bytes(), b"-moved"].concat());
        sys!(libc::SYS_rename, p.as_ptr(), to.as_ptr())
    });
    on(v, "rename-onto-mount-point", "mnt", |p| {
        sys!(libc::SYS_rename, cs("dir").as_ptr(), p.as_ptr())
    });
    on(v, "utimensat-now-mount-point", "mnt", |p| {
        sys!(libc::SYS_utimensat, CWD, p.as_ptr(), NULL, 0)
    });
    add(v, "rmdir-mount-point-dfd", |x| match mounts_dfd(x) {
        Some(d) => Res::Ret(sys!(
            libc::SYS_unlinkat,
            d,
            cs("mnt").as_ptr(),
            libc::AT_REMOVEDIR
        )),
        None => Res::Skip,
    });
    // Times of a file the caller may write but does not own: "now" is allowed (write
    // permission is enough), explicit times are the owner's.
    let now = ts(0, libc::UTIME_NOW);
    let omit = ts(0, libc::UTIME_OMIT);
    for (case, file, t) in [
        ("utimensat-null-others-writable", "rootrw", None),
        ("utimensat-now-others-writable", "rootrw", Some([now, now])),
        (
            "utimensat-now-omit-others-writable",
            "rootrw",
            Some([now, omit]),
        ),
        (
            "utimensat-explicit-others-writable",
            "rootrw",
            Some([ts(T1, 0), ts(T2, 0)]),
        ),
        ("utimensat-null-others-readonly", "rootro", None),
    ] {
        on(v, case, file, move |p| {
            let tp = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
            sys!(libc::SYS_utimensat, CWD, p.as_ptr(), tp, 0)
        });
        add(
            v,
            format!("futimens-{}", &case["utimensat-".len()..]),
            move |x| {
                let Some(p) = x.m(file) else { return Res::Skip };
                let f = sys!(
                    libc::SYS_openat,
                    CWD,
                    p.as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC
                );
                let tp = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                Res::Ret(sys!(libc::SYS_utimensat, f, NULL, tp, 0))
            },
        );
    }
}

/// An `O_PATH` descriptor of the `--mounts` directory.
fn mounts_dfd(x: &Ctx) -> Option<i64> {
    let p = x.m("")?;
    Some(sys!(
        libc::SYS_openat,
        CWD,
        p.as_ptr(),
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC
    ))
}

/// Calls relative to a descriptor by a process that switched to another user: as root, the
/// thread takes [`OTHER`]'s effective id (which leaves the process not dumpable, so its
/// `/proc/PID/fd` is root's); unprivileged, the switch fails and the call runs as ourselves.
/// Strict mode must reach the descriptor as the process reaches its own.
fn guise_cases(v: &mut Vec<Case>) {
    let now = ts(0, libc::UTIME_NOW);
    let omit = ts(0, libc::UTIME_OMIT);
    for (case, file, t) in [
        ("seteuid-utimensat-null-dfd-others-writable", "rootrw", None),
        (
            "seteuid-utimensat-now-dfd-others-writable",
            "rootrw",
            Some([now, now]),
        ),
        (
            "seteuid-utimensat-now-omit-dfd-others-writable",
            "rootrw",
            Some([now, omit]),
        ),
        (
            "seteuid-utimensat-explicit-dfd-others-writable",
            "rootrw",
            Some([ts(T1, 0), ts(T2, 0)]),
        ),
        ("seteuid-utimensat-null-dfd-others-readonly", "rootro", None),
    ] {
        add(v, case, move |x| {
            let Some(d) = mounts_dfd(x) else {
                return Res::Skip;
            };
            let tp = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
            with_euid(OTHER, || {
                Res::Ret(sys!(libc::SYS_utimensat, d, cs(file).as_ptr(), tp, 0))
            })
        });
    }
    add(v, "seteuid-rmdir-mount-point-dfd", |x| {
        let Some(d) = mounts_dfd(x) else {
            return Res::Skip;
        };
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_unlinkat,
                d,
                cs("mnt").as_ptr(),
                libc::AT_REMOVEDIR
            ))
        })
    });
    add(v, "seteuid-utimensat-now-own-dfd", |x| {
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_utimensat,
                x.dfd,
                cs("file").as_ptr(),
                NULL,
                0
            ))
        })
    })
    .show(Show::Times("file"))
    .prep(|d| give_to_other(&d.join("file")));
    add(v, "seteuid-rmdir-own-dfd", |_| {
        let d = hfd("full", libc::O_PATH | libc::O_DIRECTORY);
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_unlinkat,
                d,
                cs("sub").as_ptr(),
                libc::AT_REMOVEDIR
            ))
        })
    })
    .prep(|d| {
        std::fs::create_dir(d.join("full/sub")).unwrap();
        give_to_other(&d.join("full/sub"));
        give_to_other(&d.join("full"));
    });
    add(v, "seteuid-chmod-own-dfd", |x| {
        with_euid(OTHER, || {
            Res::Ret(sys!(libc::SYS_fchmodat, x.dfd, cs("file").as_ptr(), 0o600))
        })
    })
    .prep(|d| give_to_other(&d.join("file")));
    // Its own descriptors through `/proc/self/fd`, which the kernel lets a process reach
    // whoever owns the directory.
    for (case, path) in [
        ("seteuid-utimensat-proc-self-fd", "/proc/self/fd"),
        (
            "seteuid-utimensat-proc-thread-self-fd",
            "/proc/thread-self/fd",
        ),
    ] {
        add(v, case, move |_| {
            let f = hfd("file", libc::O_RDONLY);
            let p = cs(format!("{path}/{f}"));
            with_euid(OTHER, || {
                Res::Ret(sys!(libc::SYS_utimensat, CWD, p.as_ptr(), NULL, 0))
            })
        })
        .show(Show::Times("file"))
        .prep(|d| give_to_other(&d.join("file")));
    }
    add(v, "seteuid-mknod-chr-existing-dfd", |x| {
        with_euid(OTHER, || {
            Res::Ret(sys!(
                libc::SYS_mknodat,
                x.dfd,
                cs("file").as_ptr(),
                libc::S_IFCHR | 0o600,
                libc::makedev(1, 3)
            ))
        })
    });
}

/// Runs `f` with a soft file-size limit of `limit` bytes and SIGXFSZ ignored, then puts both
/// back.
fn with_fsize_limit(limit: u64, f: impl FnOnce() -> Res) -> Res {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with live structs; signal with a valid disposition.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut old), 0);
        let new = libc::rlimit {
            rlim_cur: limit,
            rlim_max: old.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &new), 0);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let r = f();
    // SAFETY: as above.
    unsafe {
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &old), 0);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
    r
}

/// The user the credential cases switch to: nobody.
const OTHER: u32 = 65534;

/// As root, gives `p` to [`OTHER`]; unprivileged, leaves it ours (chown would be refused).
fn give_to_other(p: &Path) {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::lchown(p, Some(OTHER), Some(OTHER)).unwrap();
    }
}

/// Runs `f` with this thread's file-system user `uid` (`setfsuid`: this thread only; a root
/// caller loses its file capabilities meanwhile), then switches back.
fn with_fsuid(uid: u32, f: impl FnOnce() -> Res) -> Res {
    let old = sys!(libc::SYS_setfsuid, uid);
    let r = f();
    sys!(libc::SYS_setfsuid, old);
    r
}

/// Runs `f` with this thread's effective user `uid` (the raw `setresuid`, which changes this
/// thread only; glibc's would change every thread), then switches back.
fn with_euid(uid: u32, f: impl FnOnce() -> Res) -> Res {
    // SAFETY: geteuid cannot fail.
    let old = unsafe { libc::geteuid() };
    let keep = u32::MAX;
    let switched = sys!(libc::SYS_setresuid, keep, uid, keep) == 0;
    let r = f();
    if switched {
        assert_eq!(sys!(libc::SYS_setresuid, keep, old, keep), 0);
    }
    r
}

/// `struct __user_cap_header_struct` and the two `struct __user_cap_data_struct` of
/// `_LINUX_CAPABILITY_VERSION_3`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Runs `f` with no effective capability on this thread (`capset`), then restores them.
fn without_caps(f: impl FnOnce() -> Res) -> Res {
    let mut h = CapHeader {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    assert_eq!(
        sys!(
            libc::SYS_capget,
            &mut h as *mut CapHeader,
            data.as_mut_ptr()
        ),
        0
    );
    let saved = data;
    for d in &mut data {
        d.effective = 0;
    }
    assert_eq!(
        sys!(libc::SYS_capset, &mut h as *mut CapHeader, data.as_ptr()),
        0
    );
    let r = f();
    assert_eq!(
        sys!(libc::SYS_capset, &mut h as *mut CapHeader, saved.as_ptr()),
        0
    );
    r
}

// ---- fixtures ----

fn set_old_times(p: &Path) {
    let t = [ts(OLD_SEC, OLD_NSEC), ts(OLD_SEC, OLD_NSEC)];
    let c = cs(p.as_os_str().as_bytes());
    // SAFETY: a valid path and two timespecs.
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            t.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    assert_eq!(
        r,
        0,
        "utimensat {}: {}",
        p.display(),
        std::io::Error::last_os_error()
    );
}

fn write_file(p: &Path, content: &str, mode: u32) {
    std::fs::write(p, content).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The same fixtures in every case directory `d` (created here).
fn fixtures(d: &Path, xdev: Option<&Path>) {
    use std::os::unix::fs::symlink;
    std::fs::create_dir(d).unwrap();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_file(&d.join("file"), "hello\n", 0o644);
    let c = cs(d.join("file").as_os_str().as_bytes());
    // SAFETY: a valid path, name and value. It may fail where user xattrs are unsupported.
    unsafe { libc::setxattr(c.as_ptr(), c"user.x".as_ptr(), b"1".as_ptr().cast(), 1, 0) };
    for sub in ["dir", "full", "rodir", "rodir/sub"] {
        std::fs::create_dir(d.join(sub)).unwrap();
        std::fs::set_permissions(d.join(sub), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    write_file(&d.join("full/inner"), "in\n", 0o644);
    write_file(&d.join("rodir/f"), "f\n", 0o644);
    write_file(&d.join("ro"), "ro\n", 0o644);
    symlink("file", d.join("lnfile")).unwrap();
    symlink("dir", d.join("lndir")).unwrap();
    symlink("nowhere", d.join("dangling")).unwrap();
    symlink("loop", d.join("loop")).unwrap();
    symlink(d.join("file"), d.join("lnabs")).unwrap();
    let f = cs(d.join("fifo").as_os_str().as_bytes());
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(f.as_ptr(), 0o644) }, 0);
    std::fs::set_permissions(d.join("fifo"), std::fs::Permissions::from_mode(0o644)).unwrap();
    if let Some(x) = xdev {
        std::fs::create_dir(x).unwrap();
        write_file(&x.join("xfile"), "x\n", 0o644);
        set_old_times(&x.join("xfile"));
        set_old_times(x);
    }
}

/// After any case-specific preparation: the times everything starts with, then the read-only
/// modes (last, so the preparation could still write).
fn finish_fixtures(d: &Path) {
    let mut all = Vec::new();
    walk(d, Path::new(""), &mut all);
    for rel in all.iter().rev() {
        set_old_times(&d.join(rel));
    }
    std::fs::set_permissions(d.join("ro"), std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(d.join("rodir"), std::fs::Permissions::from_mode(0o555)).unwrap();
}

/// Every path under `d` (relative, depth first, sorted), `d` itself first as "".
fn walk(d: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    out.push(rel.to_path_buf());
    let full = d.join(rel);
    let Ok(md) = std::fs::symlink_metadata(&full) else {
        return;
    };
    if !md.is_dir() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(&full) else {
        return;
    };
    let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    names.sort();
    for n in names {
        walk(d, &rel.join(n), out);
    }
}

// ---- describing the state ----

fn file_type(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "f",
        libc::S_IFDIR => "d",
        libc::S_IFLNK => "l",
        libc::S_IFIFO => "p",
        libc::S_IFSOCK => "s",
        libc::S_IFCHR => "c",
        libc::S_IFBLK => "b",
        _ => "?",
    }
}

fn now_sec() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A timestamp as `old` (the fixtures'), `now` (within ten minutes) or in full.
fn time_class(sec: i64, nsec: i64) -> String {
    if sec == OLD_SEC && nsec == OLD_NSEC {
        "old".into()
    } else if (sec - now_sec()).abs() < 600 {
        "now".into()
    } else {
        format!("{sec}.{nsec:09}")
    }
}

fn short(bytes: &[u8]) -> String {
    // Long enough for an absolute symlink target in the scratch directory.
    if bytes.len() > 200 {
        format!(
            "{:?}..({})",
            String::from_utf8_lossy(&bytes[..16]),
            bytes.len()
        )
    } else {
        format!("{:?}", String::from_utf8_lossy(bytes))
    }
}

/// The user.* xattrs of `p` (not following a symlink), sorted: `x[user.a=1,...]`.
fn xattrs(p: &Path) -> String {
    let c = cs(p.as_os_str().as_bytes());
    let mut buf = vec![0u8; 4096];
    // SAFETY: a valid path and a buffer of the length given.
    let n = unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 {
        return String::new();
    }
    let mut names: Vec<&[u8]> = buf[..n as usize]
        .split(|b| *b == 0)
        .filter(|s| s.starts_with(b"user."))
        .collect();
    if names.is_empty() {
        return String::new();
    }
    names.sort();
    let mut parts = Vec::new();
    for name in names {
        let cn = cs(name);
        let mut val = vec![0u8; 256];
        // SAFETY: a valid path, name and buffer of the length given.
        let m =
            unsafe { libc::lgetxattr(c.as_ptr(), cn.as_ptr(), val.as_mut_ptr().cast(), val.len()) };
        let v = if m < 0 {
            "?".to_string()
        } else {
            String::from_utf8_lossy(&val[..m as usize]).into_owned()
        };
        parts.push(format!("{}={v}", String::from_utf8_lossy(name)));
    }
    format!(" x[{}]", parts.join(","))
}

fn fstat(fd: i32) -> Option<libc::stat> {
    // SAFETY: stat is plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a descriptor number and a stat buffer.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

fn lstat(p: &Path) -> Option<libc::stat> {
    let c = cs(p.as_os_str().as_bytes());
    // SAFETY: stat is plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid path and a stat buffer.
    (unsafe { libc::lstat(c.as_ptr(), &mut st) } == 0).then_some(st)
}

/// One path: `name=TYPE MODE uid:gid nLINKS [sSIZE "content" | ->target | dev] m=MTIME x[...]`.
fn describe_path(d: &Path, rel: &Path) -> String {
    let p = d.join(rel);
    let name = if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel.display().to_string()
    };
    let Some(st) = lstat(&p) else {
        return format!("{name}=-");
    };
    let t = file_type(st.st_mode);
    let mut s = format!(
        "{name}={t}{:04o} {}:{} n{}",
        st.st_mode & 0o7777,
        st.st_uid,
        st.st_gid,
        st.st_nlink
    );
    match t {
        "f" => {
            s += &format!(" s{}", st.st_size);
            match std::fs::read(&p) {
                Ok(b) => s += &format!(" {}", short(&b)),
                Err(e) => s += &format!(" read:{}", errno_name(e.raw_os_error().unwrap_or(0))),
            }
        }
        "l" => {
            let target = std::fs::read_link(&p).unwrap_or_default();
            s += &format!(" ->{}", short(target.as_os_str().as_bytes()));
        }
        "c" | "b" => {
            s += &format!(
                " dev{},{}",
                libc::major(st.st_rdev),
                libc::minor(st.st_rdev)
            );
        }
        _ => {}
    }
    s += &format!(" m={}", time_class(st.st_mtime, st.st_mtime_nsec));
    s += &xattrs(&p);
    s
}

fn describe_tree(d: &Path) -> String {
    let mut all = Vec::new();
    walk(d, Path::new(""), &mut all);
    all.iter()
        .map(|r| describe_path(d, r))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `/proc/self/fd/N`'s target with the kernel's numbers (inode, pipe id) made constant.
fn normalize_link(s: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() && (in_num || out.ends_with('#') || out.ends_with('[')) {
            if !in_num {
                out.push('N');
            }
            in_num = true;
            continue;
        }
        in_num = false;
        out.push(ch);
    }
    out
}

fn fd_is_open(fd: i32) -> bool {
    // SAFETY: F_GETFD on any number is harmless.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// What a new descriptor is: never its number, but whether it is the lowest free one.
fn describe_fd(fd: i32) -> String {
    // SAFETY: F_GETFL/F_GETFD on a descriptor we own.
    let (fl, fdfl) = unsafe {
        (
            libc::fcntl(fd, libc::F_GETFL),
            libc::fcntl(fd, libc::F_GETFD),
        )
    };
    let acc = match fl & libc::O_ACCMODE {
        libc::O_RDONLY => "r",
        libc::O_WRONLY => "w",
        libc::O_RDWR => "rw",
        _ => "3",
    };
    let mut s = format!("fd[{acc}");
    let mut rest = fl & !libc::O_ACCMODE;
    for (bit, name) in [
        (libc::O_APPEND, "append"),
        (libc::O_NONBLOCK, "nonblock"),
        (libc::O_PATH, "path"),
        (libc::O_SYNC, "sync"),
        (libc::O_DSYNC, "dsync"),
        (libc::O_NOATIME, "noatime"),
        (libc::O_DIRECTORY, "directory"),
        (libc::O_NOFOLLOW, "nofollow"),
        (O_LARGEFILE, "largefile"),
        (O_TMPFILE_BIT, "tmpfile"),
        (libc::O_CLOEXEC, "cloexec-fl"),
    ] {
        if bit != 0 && fl & bit == bit {
            s += &format!(" {name}");
            rest &= !bit;
        }
    }
    if rest != 0 {
        s += &format!(" fl+{rest:#o}");
    }
    if fdfl & libc::FD_CLOEXEC != 0 {
        s += " cloexec";
    }
    let lowest = (0..fd).all(fd_is_open);
    s += if lowest { " lowest" } else { " not-lowest" };
    let st = fstat(fd);
    let out = fstat(1);
    if st.is_some()
        && out.is_some()
        && st.map(|s| (s.st_dev, s.st_ino)) == out.map(|s| (s.st_dev, s.st_ino))
    {
        // Our own standard output (/dev/stdout and the like): what it is depends on who runs
        // us, and a real write would land in the results.
        let mut buf = [0u8; 1];
        let w = sys!(libc::SYS_write, fd, buf.as_mut_ptr(), 0usize);
        return s + &format!(
            " =stdout write0={}]",
            if w < 0 {
                errno_name(-w as i32)
            } else {
                w.to_string()
            }
        );
    }
    let st = st.unwrap_or_else(|| {
        // SAFETY: stat is plain data; zero is a valid value.
        unsafe { std::mem::zeroed() }
    });
    if st.st_mode != 0 {
        let t = file_type(st.st_mode);
        s += &format!(
            " {t}{:04o} {}:{} n{}",
            st.st_mode & 0o7777,
            st.st_uid,
            st.st_gid,
            st.st_nlink
        );
        if t == "f" {
            s += &format!(" s{}", st.st_size);
        }
        if t == "c" {
            s += &format!(
                " dev{},{}",
                libc::major(st.st_rdev),
                libc::minor(st.st_rdev)
            );
        }
    }
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| normalize_link(&p.to_string_lossy()))
        .unwrap_or_else(|e| format!("?{e}"));
    s += &format!(" ->{link}");
    let err = |r: i64| {
        if r < 0 {
            errno_name(-r as i32)
        } else {
            format!("{r}")
        }
    };
    if file_type(st.st_mode) == "f" && fl & libc::O_PATH == 0 {
        // A real write and read: where the byte lands shows O_APPEND and O_TRUNC at work.
        let w = sys!(libc::SYS_write, fd, b"+".as_ptr(), 1usize);
        let mut buf = [0u8; 64];
        let r = sys!(libc::SYS_pread64, fd, buf.as_mut_ptr(), buf.len(), 0i64);
        s += &format!(" write={}", err(w));
        if r >= 0 {
            s += &format!(" read={}", short(&buf[..r as usize]));
        } else {
            s += &format!(" read={}", err(r));
        }
    } else {
        // Zero-byte transfers: whether the direction is allowed, without blocking or output.
        let mut buf = [0u8; 1];
        let w = sys!(libc::SYS_write, fd, buf.as_ptr(), 0usize);
        let r = sys!(libc::SYS_read, fd, buf.as_mut_ptr(), 0usize);
        s += &format!(" write0={} read0={}", err(w), err(r));
    }
    s + "]"
}

fn iflags(p: &Path) -> String {
    let c = cs(p.as_os_str().as_bytes());
    let fd = sys!(
        libc::SYS_openat,
        CWD,
        c.as_ptr(),
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC
    );
    if fd < 0 {
        return errno_name(-fd as i32);
    }
    let mut fl: i32 = 0;
    let r = sys!(libc::SYS_ioctl, fd, FS_IOC_GETFLAGS, &mut fl as *mut i32);
    sys!(libc::SYS_close, fd);
    if r < 0 {
        errno_name(-r as i32)
    } else {
        format!("{fl:#x}")
    }
}

fn result_text(r: &Res) -> String {
    match *r {
        Res::Ret(0) => "ok".into(),
        Res::Fd(n) if n >= 0 => "ok fd".into(),
        Res::Ret(n) | Res::Fd(n) if n < 0 => errno_name(-n as i32),
        Res::Ret(n) | Res::Fd(n) => format!("= {n}"),
        Res::Skip => "skip".into(),
    }
}

fn open_fds() -> Vec<i32> {
    let mut fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    // The directory stream's own descriptor is closed by now.
    fds.retain(|fd| fd_is_open(*fd));
    fds
}

fn usage() -> ! {
    eprintln!("usage: hp-conform run DIR [--xdev OTHER-FS-DIR] [--mounts DIR] [--only SUBSTRING]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("run") || args.len() < 2 {
        usage();
    }
    let dir = std::path::absolute(&args[1]).unwrap();
    let mut xdev: Option<PathBuf> = None;
    let mut only: Option<String> = None;
    let mut mounts: Option<PathBuf> = None;
    let mut it = args[2..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--xdev" => {
                xdev = Some(std::path::absolute(it.next().unwrap_or_else(|| usage())).unwrap())
            }
            "--only" => only = Some(it.next().unwrap_or_else(|| usage()).clone()),
            "--mounts" => {
                mounts = Some(std::path::absolute(it.next().unwrap_or_else(|| usage())).unwrap())
            }
            _ => usage(),
        }
    }
    std::fs::create_dir_all(&dir).unwrap();
    // EXDEV needs a directory on another file system.
    let xdev = xdev.filter(|x| {
        std::fs::create_dir_all(x).is_ok()
            && std::fs::metadata(x).map(|m| m.dev()).ok()
                != std::fs::metadata(&dir).map(|m| m.dev()).ok()
    });
    let baseline = open_fds();
    let mut n = 0;
    for case in cases() {
        if only
            .as_ref()
            .is_some_and(|o| !case.name.contains(o.as_str()))
        {
            continue;
        }
        n += 1;
        let cdir = dir.join(&case.name);
        let cx = xdev
            .as_ref()
            .filter(|_| case.name.contains("xdev"))
            .map(|x| x.join(&case.name));
        fixtures(&cdir, cx.as_deref());
        if let Some(p) = &case.prep {
            p(&cdir);
        }
        finish_fixtures(&cdir);
        let dfd = sys!(
            libc::SYS_openat,
            CWD,
            cs(cdir.as_os_str().as_bytes()).as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC
        );
        assert!(dfd >= 0, "cannot open {}", cdir.display());
        let ctx = Ctx {
            dir: cdir.clone(),
            dfd,
            xdev: cx.clone(),
            mounts: mounts.clone(),
        };
        let cd = cs(cdir.as_os_str().as_bytes());
        // SAFETY: chdir and umask with valid arguments.
        unsafe {
            assert_eq!(libc::chdir(cd.as_ptr()), 0);
            libc::umask(case.umask as libc::mode_t);
        }
        // A case that blocks (a fifo opened for writing, say) ends the run instead of hanging
        // it; the last line printed names the case before.
        // SAFETY: alarm cannot fail.
        unsafe { libc::alarm(30) };
        let res = (case.body)(&ctx);
        // SAFETY: as above.
        unsafe { libc::alarm(0) };
        // SAFETY: umask cannot fail.
        unsafe { libc::umask(0o022) };
        let mut state = Vec::new();
        if let Res::Fd(fd) = res {
            if fd >= 0 {
                state.push(describe_fd(fd as i32));
            }
        }
        for s in &case.show {
            match *s {
                Show::Times(p) => {
                    let st = lstat(&cdir.join(p));
                    state.push(match st {
                        Some(st) => format!(
                            "times({p})=a:{},m:{}",
                            time_class(st.st_atime, st.st_atime_nsec),
                            time_class(st.st_mtime, st.st_mtime_nsec)
                        ),
                        None => format!("times({p})=-"),
                    });
                }
                Show::IFlags(p) => state.push(format!("iflags({p})={}", iflags(&cdir.join(p)))),
            }
        }
        state.push(describe_tree(&cdir));
        if let Some(x) = &cx {
            state.push(format!("xdev: {}", describe_tree(x)));
        }
        println!(
            "{}\t{}\t{}",
            case.name,
            result_text(&res),
            state.join(" || ")
        );
        // Whatever the case opened goes, so every case starts with the same descriptors.
        for fd in open_fds() {
            if !baseline.contains(&fd) {
                // SAFETY: a descriptor this case opened and nothing else uses.
                unsafe { libc::close(fd) };
            }
        }
    }
    // SAFETY: chdir to a valid path.
    unsafe { libc::chdir(c"/".as_ptr()) };
    println!("cases {n}");
}
