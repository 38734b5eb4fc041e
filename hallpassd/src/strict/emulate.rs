//! Strict mode: each intercepted write is performed by the daemon, through descriptors, and
//! the syscall answered with its result.
//!
//! [`prepare`] reads the arguments once, walks every path to descriptors the daemon holds
//! ([`super::walk`]) and names what they are for the policy. [`Action::perform`] then acts on
//! those descriptors only: a directory entry by name in a held directory, or a held object
//! through `/proc/self/fd/N`. Nothing is looked up again from a string, so a symlink,
//! directory or argument swapped after the check cannot redirect the write. Opens are
//! answered with the descriptor itself (`SECCOMP_IOCTL_NOTIF_ADDFD`).
//!
//! Errors are the kernel's own wherever the daemon makes the same call the target would; the
//! target's umask is applied, and the daemon runs as the same user.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use nix::errno::Errno;

use super::creds::{as_target, read_proc};
use super::walk::{self, Base, Entry, Last, Roots, Rules, Walker, Who};
use crate::mem::{Lender, Memory};
use crate::resolve::Resolved;
use crate::sys::fsops::{self, OpenHow, Sys};
use crate::sys::seccomp::{self, Notif, Reply};
use crate::syscalls::{
    is_write_open, Kind, Syscall, AT_EMPTY_PATH, AT_SYMLINK_FOLLOW, AT_SYMLINK_NOFOLLOW,
    TIOCGPTPEER, WRITE_IOCTLS,
};

/// What a notification asks for, in strict mode.
pub enum Prepared {
    /// A write: the objects the policy decides on, and the operation on the held descriptors.
    Write {
        syscall: &'static str,
        paths: Vec<Resolved>,
        action: Action,
    },
    /// Not a write, but its arguments are in memory the kernel would read again (a
    /// read-only `openat2`, a `bind` to an address that makes no file): performed all the
    /// same, with the daemon's copy of them, so that swapping them cannot turn it into one.
    Perform(Action),
    /// An exec, reported (lent memory descriptors go stale).
    Pass { exec: bool },
    /// Answered without a decision: the kernel's error for these arguments (a missing
    /// directory, a bad descriptor...), or a refusal.
    Fail(i32),
}

/// An object acted on.
pub enum Obj {
    /// The object itself, symlinks followed: acted on through `/proc/self/fd/N`.
    Held(OwnedFd),
    /// A directory entry, not followed: acted on by name in the held directory.
    Entry(Entry),
}

/// The operation, on held descriptors only.
pub enum Action {
    Open {
        entry: Entry,
        flags: i32,
        mode: u32,
        /// For `openat2`: its `resolve`, kept for the kernel's checks of the last step.
        how: Option<OpenHow>,
    },
    /// `TIOCGPTPEER`: the other end of a pseudo-terminal the process made, opened by the
    /// daemon from its master (`fd`). Not a write anyone decides: the pty is the process's
    /// own. Performed because the process's Landlock domain would refuse the kernel's open
    /// of `/dev/pts/N`, which it lets nobody write beyond the session's terminal.
    PtyPeer {
        master: OwnedFd,
        flags: i32,
    },
    /// An open of a held object: `O_TMPFILE` in a directory, `/proc/PID/fd/N`, a tty.
    Reopen {
        obj: OwnedFd,
        flags: i32,
        mode: u32,
    },
    Mkdir {
        entry: Entry,
        mode: u32,
    },
    Mknod {
        entry: Entry,
        mode: u32,
        dev: u64,
    },
    Unlink {
        entry: Entry,
        flags: i32,
    },
    Rename {
        from: Entry,
        to: Entry,
        flags: u32,
    },
    Link {
        from: Obj,
        to: Entry,
        empty: bool,
    },
    Symlink {
        target: CString,
        entry: Entry,
    },
    Chmod {
        obj: Obj,
        mode: u32,
    },
    Chown {
        obj: Obj,
        uid: u32,
        gid: u32,
    },
    Truncate {
        obj: OwnedFd,
        len: i64,
    },
    Times {
        obj: Obj,
        times: Option<[libc::timespec; 2]>,
    },
    SetXattr {
        obj: Obj,
        name: CString,
        value: Vec<u8>,
        flags: i32,
    },
    RemoveXattr {
        obj: Obj,
        name: CString,
    },
    Ioctl {
        fd: OwnedFd,
        cmd: u32,
        arg: Arg,
    },
    FileSetattr {
        obj: Obj,
        attr: Vec<u8>,
        size: usize,
    },
    Bind {
        sock: OwnedFd,
        entry: Entry,
        addr: Vec<u8>,
    },
    /// A bind that makes no file (another family, an abstract Unix address).
    BindAddr {
        sock: OwnedFd,
        addr: Vec<u8>,
    },
    /// A connection, made on the process's socket ([`super::connect`]).
    Connect(super::connect::Connect),
}

/// An ioctl argument: bytes read from the target, or a descriptor taken from it.
pub enum Arg {
    Bytes(Vec<u8>),
    Fd(OwnedFd),
    /// `struct file_clone_range`, whose first field is the source descriptor taken.
    Range(Vec<u8>, OwnedFd),
}

/// What is needed to prepare and perform for one target thread.
pub struct Target<'a> {
    pub tid: i32,
    /// Performing for lite mode (binds and `openat2`, which it performs too).
    pub lite: bool,
    pub session: i32,
    /// The session's terminals (the pty hallpass made, or the one it was started on).
    pub ttys: &'a [PathBuf],
    pub mem: &'a mut Memory,
    pub lender: &'a mut dyn Lender,
    /// The session's kept decision paths of descriptors ([`crate::dircache`]).
    pub descs: &'a crate::dircache::DirCache,
}

/// An error reading the target's arguments: the kernel would have said EFAULT (or
/// ENAMETOOLONG for a path too long).
fn read_err(e: std::io::Error) -> Errno {
    match e.raw_os_error() {
        Some(libc::ENAMETOOLONG) => Errno::ENAMETOOLONG,
        _ => Errno::EFAULT,
    }
}

const O_TMPFILE: i32 = libc::O_TMPFILE & !libc::O_DIRECTORY;

// include/uapi/linux/fs.h
const FICLONE: u32 = 0x4004_9409;
const FICLONERANGE: u32 = 0x4020_940d;
const FIDEDUPERANGE: u32 = 0xc018_9436;

/// Prepares notification `n` (syscall `sc`) for `t`.
pub fn prepare(sc: &'static Syscall, n: &Notif, t: &mut Target<'_>, roots: &Roots) -> Prepared {
    match prepare_call(sc, n, t, roots) {
        Ok(p) => p,
        Err(e) => Prepared::Fail(e as i32),
    }
}

/// What `n` asks for: passed or refused at once by its kind, else prepared by the function
/// of its family of syscalls, each with a fresh walker of the process's lookups.
fn prepare_call(
    sc: &'static Syscall,
    n: &Notif,
    t: &mut Target<'_>,
    roots: &Roots,
) -> Sys<Prepared> {
    let a = &n.data.args;
    let mut w = Walker::new(Who::new(t.tid, t.session), Rules::default(), roots);
    let name = sc.name;
    match sc.kind {
        Kind::Exec => return Ok(Prepared::Pass { exec: true }),
        Kind::Pass | Kind::Creds => return Ok(Prepared::Pass { exec: false }),
        Kind::OtherProcess { .. } | Kind::Rlimit { .. } => {
            let rt = crate::resolve::Target {
                tid: t.tid,
                tgid: 0,
                session: t.session,
            };
            let (mem, lender) = (&mut *t.mem, &mut *t.lender);
            let mut read = |addr: u64, buf: &mut [u8]| mem.read_exact(t.tid, addr, buf, lender);
            return Ok(
                match crate::decode::process_call(sc.kind, rt, a, &mut read) {
                    Ok(()) => Prepared::Pass { exec: false },
                    Err(e) => Prepared::Fail(e),
                },
            );
        }
        Kind::Refuse(e) => return Ok(Prepared::Fail(e)),
        // The filter decides it; a notification would be a filter bug: refuse.
        Kind::Seccomp { .. } => return Ok(Prepared::Fail(libc::EBUSY)),
        Kind::Namespaces { .. } => return Ok(Prepared::Fail(libc::EPERM)),
        Kind::RefuseStrict(e) => return Ok(Prepared::Fail(e)),
        // The filter refuses it in strict mode; lite mode takes note before it gets here.
        Kind::OwnDomain => return Ok(Prepared::Fail(libc::ENOSYS)),
        Kind::Connect { .. } => return super::connect::prepare(t, &mut w, a),
        _ => {}
    }
    // One function per family of syscalls; each reads its dirfd and path arguments (legacy
    // calls are relative to the cwd).
    match name {
        "open" | "openat" | "creat" => open_call(name, a, t, &mut w),
        "openat2" => openat2_call(name, a, t, &mut w),
        "mkdir" | "mkdirat" => mkdir_call(name, a, t, &mut w),
        "mknod" | "mknodat" => mknod_call(name, a, t, &mut w),
        "rmdir" | "unlink" | "unlinkat" => unlink_call(name, a, t, &mut w),
        "rename" | "renameat" | "renameat2" => rename_call(name, a, t, &mut w),
        "link" | "linkat" => link_call(name, a, t, &mut w),
        "symlink" | "symlinkat" => symlink_call(name, a, t, &mut w),
        "chmod" | "fchmodat" | "fchmodat2" => chmod_call(name, a, t, &mut w),
        "chown" | "lchown" | "fchownat" => chown_call(name, a, t, &mut w),
        "truncate" => truncate_call(name, a, t, &mut w),
        "utime" | "utimes" | "futimesat" | "utimensat" => times_call(name, a, t, &mut w),
        "setxattr" | "lsetxattr" | "setxattrat" => setxattr_call(name, a, t, &mut w),
        "removexattr" | "lremovexattr" | "removexattrat" => removexattr_call(name, a, t, &mut w),
        "fchmod" | "fchown" | "fsetxattr" | "fremovexattr" => fd_meta_call(name, a, t, &mut w),
        "ioctl" => ioctl_call(name, a, t, &mut w),
        "bind" => bind_call(name, a, t, &mut w),
        "file_setattr" => file_setattr_call(name, a, t, &mut w),
        _ => Err(Errno::ENOSYS),
    }
}

/// A write of `paths` that `action` makes, for syscall `name`, to decide.
fn write(name: &'static str, paths: Vec<Resolved>, action: Action) -> Sys<Prepared> {
    Ok(Prepared::Write {
        syscall: name,
        paths,
        action,
    })
}

/// An `open`, `openat` or `creat` that writes (a read-only one passes).
fn open_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (dirfd, path, flags, mode) = match name {
        "open" => (libc::AT_FDCWD, a[0], a[1] as i32, a[2] as u32),
        "creat" => (
            libc::AT_FDCWD,
            a[0],
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            a[1] as u32,
        ),
        _ => (at(0), a[1], a[2] as i32, a[3] as u32),
    };
    if !is_write_open(flags as u32) {
        return Ok(Prepared::Pass { exec: false });
    }
    let path = read_path(t, path)?;
    open(w, t, dirfd, &path, flags, mode, None, name)
}

/// `openat2`: performed even read-only (its flags are in memory), with its `resolve` rules.
fn openat2_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let size = a[3] as usize;
    if size < 24 {
        return Err(Errno::EINVAL);
    }
    let mut raw = [0u8; 24];
    t.mem
        .read_exact(t.tid, a[2], &mut raw, t.lender)
        .map_err(read_err)?;
    let word = |i: usize| u64::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap());
    let how = OpenHow {
        flags: word(0),
        mode: word(1),
        resolve: word(2),
    };
    if size > 4096 {
        // copy_struct_from_user: more than a page is too big.
        return Err(Errno::E2BIG);
    }
    if size > 24 {
        // The kernel insists that a larger struct's unknown tail is zero.
        let mut tail = vec![0u8; size - 24];
        t.mem
            .read_exact(t.tid, a[2] + 24, &mut tail, t.lender)
            .map_err(read_err)?;
        if tail.iter().any(|&b| b != 0) {
            return Err(Errno::E2BIG);
        }
    }
    let read_only = !is_write_open(how.flags as u32);
    if how.flags & libc::O_PATH as u64 != 0 {
        // An O_PATH descriptor cannot be installed in the target (ADDFD takes no
        // O_PATH file), and letting the kernel open it would let its flags, in
        // memory, be swapped for writing ones: as on a kernel without openat2, so
        // that programs fall back to openat, whose flags the filter reads itself.
        // Lite mode lets the kernel open it, as it always did.
        if t.lite {
            return Ok(Prepared::Pass { exec: false });
        }
        return Err(Errno::ENOSYS);
    }
    // The kernel validates `how` before any lookup: have it do so (a descriptor
    // that cannot be valid makes it stop right after).
    match fsops::openat2(-1, c"x", &how) {
        Err(Errno::EBADF) => {}
        Err(e) => return Err(e),
        Ok(_) => return Err(Errno::EINVAL),
    }
    let path = read_path(t, a[1])?;
    *w = Walker::new(
        Who::new(t.tid, t.session),
        Rules {
            resolve: how.resolve,
        },
        w.roots(),
    );
    let flags = how.flags as i32;
    let p = open(w, t, at(0), &path, flags, how.mode as u32, Some(how), name)?;
    match p {
        Prepared::Write { action, .. } if read_only => Ok(Prepared::Perform(action)),
        p => Ok(p),
    }
}

/// `mkdir`, `mkdirat`.
fn mkdir_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let (d, p, mode) = pick(name == "mkdir", a, 1);
    let entry = parent(w, t, d, p)?;
    let paths = vec![entry_res(&entry, w)?];
    write(
        name,
        paths,
        Action::Mkdir {
            entry,
            mode: mode as u32,
        },
    )
}

/// `mknod`, `mknodat`.
fn mknod_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let (d, p, mode) = pick(name == "mknod", a, 1);
    let dev = if name == "mknod" { a[2] } else { a[3] };
    let entry = parent(w, t, d, p)?;
    let paths = vec![entry_res(&entry, w)?];
    write(
        name,
        paths,
        Action::Mknod {
            entry,
            mode: mode as u32,
            dev,
        },
    )
}

/// `rmdir`, `unlink`, `unlinkat`.
fn unlink_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, flags) = match name {
        "rmdir" => (libc::AT_FDCWD, a[0], libc::AT_REMOVEDIR),
        "unlink" => (libc::AT_FDCWD, a[0], 0),
        _ => (at(0), a[1], a[2] as i32),
    };
    if flags & !libc::AT_REMOVEDIR != 0 {
        return Err(Errno::EINVAL);
    }
    let entry = parent(w, t, d, p)?;
    let paths = vec![entry_res(&entry, w)?];
    write(name, paths, Action::Unlink { entry, flags })
}

/// `rename`, `renameat`, `renameat2`.
fn rename_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d1, p1, d2, p2, flags) = match name {
        "rename" => (libc::AT_FDCWD, a[0], libc::AT_FDCWD, a[1], 0),
        "renameat" => (at(0), a[1], at(2), a[3], 0),
        _ => (at(0), a[1], at(2), a[3], a[4] as u32),
    };
    let from = parent(w, t, d1, p1)?;
    let to = parent(w, t, d2, p2)?;
    let paths = vec![entry_res(&from, w)?, entry_res(&to, w)?];
    write(name, paths, Action::Rename { from, to, flags })
}

/// `link`, `linkat`.
fn link_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d1, p1, d2, p2, flags) = match name {
        "link" => (libc::AT_FDCWD, a[0], libc::AT_FDCWD, a[1], 0),
        _ => (at(0), a[1], at(2), a[3], a[4] as u32),
    };
    if flags & !(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let old = read_path(t, p1)?;
    let (from, empty) = if old.is_empty() && flags & AT_EMPTY_PATH != 0 {
        (Obj::Held(w.base(&Base::Fd(d1))?), true)
    } else {
        let start = start_for(w, d1, &old)?;
        if flags & AT_SYMLINK_FOLLOW != 0 {
            (Obj::Held(w.object(start, &old, true)?), false)
        } else {
            (Obj::Entry(w.parent(start, &old)?), false)
        }
    };
    let to = parent(w, t, d2, p2)?;
    let paths = vec![obj_res(&from, w)?, entry_res(&to, w)?];
    write(name, paths, Action::Link { from, to, empty })
}

/// `symlink`, `symlinkat`.
fn symlink_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (target, d, p) = if name == "symlink" {
        (a[0], libc::AT_FDCWD, a[1])
    } else {
        (a[0], at(1), a[2])
    };
    let text = read_path(t, target)?;
    if text.is_empty() {
        return Err(Errno::ENOENT);
    }
    let entry = parent(w, t, d, p)?;
    let paths = vec![entry_res(&entry, w)?];
    let target = CString::new(text).map_err(|_| Errno::EINVAL)?;
    write(name, paths, Action::Symlink { target, entry })
}

/// `chmod`, `fchmodat`, `fchmodat2`.
fn chmod_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, mode, flags) = match name {
        "chmod" => (libc::AT_FDCWD, a[0], a[1] as u32, 0),
        "fchmodat" => (at(0), a[1], a[2] as u32, 0),
        _ => (at(0), a[1], a[2] as u32, a[3] as u32),
    };
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let obj = object(w, t, d, p, flags)?;
    let paths = vec![obj_res(&obj, w)?];
    write(name, paths, Action::Chmod { obj, mode })
}

/// `chown`, `lchown`, `fchownat`.
fn chown_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, uid, gid, flags) = match name {
        "chown" => (libc::AT_FDCWD, a[0], a[1], a[2], 0),
        "lchown" => (libc::AT_FDCWD, a[0], a[1], a[2], AT_SYMLINK_NOFOLLOW),
        _ => (at(0), a[1], a[2], a[3], a[4] as u32),
    };
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let obj = object(w, t, d, p, flags)?;
    let paths = vec![obj_res(&obj, w)?];
    write(
        name,
        paths,
        Action::Chown {
            obj,
            uid: uid as u32,
            gid: gid as u32,
        },
    )
}

/// `truncate` (by path).
fn truncate_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let len = a[1] as i64;
    let obj = match object(w, t, libc::AT_FDCWD, a[0], 0)? {
        Obj::Held(fd) => fd,
        Obj::Entry(_) => unreachable!("followed"),
    };
    let paths = vec![held_res(&obj, w)?];
    write(name, paths, Action::Truncate { obj, len })
}

/// The `utime*` calls, `futimens` (`utimensat` with no path) among them.
fn times_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, tp, flags) = match name {
        "utime" | "utimes" => (libc::AT_FDCWD, a[0], a[1], 0),
        "futimesat" => (at(0), a[1], a[2], 0),
        _ => (at(0), a[1], a[2], a[3] as u32),
    };
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let times = read_times(t, name, tp)?;
    let obj = if p == 0 && name != "utime" && name != "utimes" {
        if flags & AT_SYMLINK_NOFOLLOW != 0 {
            return Err(Errno::EINVAL);
        }
        if d == libc::AT_FDCWD {
            return Err(Errno::EFAULT);
        }
        let (fd, path) = fd_call(w, t, d)?;
        return write(
            name,
            vec![path],
            Action::Times {
                obj: Obj::Held(fd),
                times,
            },
        );
    } else {
        object(w, t, d, p, flags)?
    };
    let paths = vec![obj_res(&obj, w)?];
    write(name, paths, Action::Times { obj, times })
}

/// `setxattr`, `lsetxattr`, `setxattrat`.
fn setxattr_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, flags, name_ptr, value, size, xflags) = if name == "setxattrat" {
        // setxattrat(dfd, path, at_flags, name, struct xattr_args *, size)
        let mut raw = [0u8; 16];
        if a[5] < 16 {
            return Err(Errno::EINVAL);
        }
        t.mem
            .read_exact(t.tid, a[4], &mut raw, t.lender)
            .map_err(read_err)?;
        let value = u64::from_ne_bytes(raw[0..8].try_into().unwrap());
        let size = u32::from_ne_bytes(raw[8..12].try_into().unwrap());
        let xf = u32::from_ne_bytes(raw[12..16].try_into().unwrap());
        (
            at(0),
            a[1],
            a[2] as u32,
            a[3],
            value,
            size as u64,
            xf as i32,
        )
    } else {
        let nf = if name == "lsetxattr" {
            AT_SYMLINK_NOFOLLOW
        } else {
            0
        };
        (libc::AT_FDCWD, a[0], nf, a[1], a[2], a[3], a[4] as i32)
    };
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let xname = read_xattr_name(t, name_ptr)?;
    if size > 65536 {
        return Err(Errno::E2BIG);
    }
    let mut v = vec![0u8; size as usize];
    if size > 0 {
        t.mem
            .read_exact(t.tid, value, &mut v, t.lender)
            .map_err(read_err)?;
    }
    let obj = object_as(w, t, d, p, flags, true)?;
    let paths = vec![obj_res(&obj, w)?];
    write(
        name,
        paths,
        Action::SetXattr {
            obj,
            name: xname,
            value: v,
            flags: xflags,
        },
    )
}

/// `removexattr`, `lremovexattr`, `removexattrat`.
fn removexattr_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, flags, name_ptr) = match name {
        "removexattrat" => (at(0), a[1], a[2] as u32, a[3]),
        "lremovexattr" => (libc::AT_FDCWD, a[0], AT_SYMLINK_NOFOLLOW, a[1]),
        _ => (libc::AT_FDCWD, a[0], 0, a[1]),
    };
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let xname = read_xattr_name(t, name_ptr)?;
    let obj = object_as(w, t, d, p, flags, name == "removexattrat")?;
    let paths = vec![obj_res(&obj, w)?];
    write(name, paths, Action::RemoveXattr { obj, name: xname })
}

/// The metadata calls through a descriptor: `fchmod`, `fchown`, `fsetxattr`, `fremovexattr`.
fn fd_meta_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (fd, path) = fd_call(w, t, at(0))?;
    let paths = vec![path];
    let obj = Obj::Held(fd);
    let action = match name {
        "fchmod" => Action::Chmod {
            obj,
            mode: a[1] as u32,
        },
        "fchown" => Action::Chown {
            obj,
            uid: a[1] as u32,
            gid: a[2] as u32,
        },
        "fsetxattr" => {
            let xname = read_xattr_name(t, a[1])?;
            if a[3] > 65536 {
                return Err(Errno::E2BIG);
            }
            let mut v = vec![0u8; a[3] as usize];
            if !v.is_empty() {
                t.mem
                    .read_exact(t.tid, a[2], &mut v, t.lender)
                    .map_err(read_err)?;
            }
            Action::SetXattr {
                obj,
                name: xname,
                value: v,
                flags: a[4] as i32,
            }
        }
        _ => Action::RemoveXattr {
            obj,
            name: read_xattr_name(t, a[1])?,
        },
    };
    write(name, paths, action)
}

/// A write `ioctl` (the filter lets the harmless ones through).
fn ioctl_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let cmd = a[1] as u32;
    if cmd == TIOCGPTPEER {
        let master = take_fd(t, at(0))?;
        return Ok(Prepared::Perform(Action::PtyPeer {
            master,
            flags: a[2] as i32,
        }));
    }
    if !WRITE_IOCTLS.contains(&cmd) {
        // Another command the filter does not know to be harmless. Its argument's
        // layout is unknown, so it cannot be performed on the daemon's copy (a
        // pointer in it would be read in the daemon's memory), and letting the kernel
        // make it would race a descriptor swapped meanwhile: refused as a command
        // this object does not support.
        return Err(Errno::ENOTTY);
    }
    if cmd == FIDEDUPERANGE {
        // Its destinations are a list of descriptors in memory: not supported.
        return Err(Errno::EOPNOTSUPP);
    }
    let fd = take_fd(t, at(0))?;
    let paths = vec![held_res(&fd, w)?];
    let arg = match cmd {
        FICLONE => Arg::Fd(take_fd(t, a[2] as i32)?),
        FICLONERANGE => {
            let mut raw = vec![0u8; 32];
            t.mem
                .read_exact(t.tid, a[2], &mut raw, t.lender)
                .map_err(read_err)?;
            let src = i64::from_ne_bytes(raw[0..8].try_into().unwrap());
            Arg::Range(raw, take_fd(t, src as i32)?)
        }
        _ => {
            let size = ((cmd >> 16) & 0x3fff) as usize;
            let mut raw = vec![0u8; size];
            t.mem
                .read_exact(t.tid, a[2], &mut raw, t.lender)
                .map_err(read_err)?;
            Arg::Bytes(raw)
        }
    };
    write(name, paths, Action::Ioctl { fd, cmd, arg })
}

/// `bind` of a Unix socket.
fn bind_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    // Every bind is performed on the daemon's copy of the address: the kernel would
    // read it again, and an address swapped to a path would make a file unchecked.
    let len = a[2] as usize;
    if len > std::mem::size_of::<libc::sockaddr_storage>() {
        return Err(Errno::EINVAL);
    }
    let mut sa = vec![0u8; len];
    t.mem
        .read_exact(t.tid, a[1], &mut sa, t.lender)
        .map_err(read_err)?;
    let sock = take_fd(t, at(0))?;
    let family = if len >= 2 {
        u16::from_ne_bytes([sa[0], sa[1]])
    } else {
        0
    };
    let path = if family == libc::AF_UNIX as u16 && len > 2 && sa[2] != 0 {
        let p = &sa[2..];
        let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
        p[..end].to_vec()
    } else {
        return Ok(Prepared::Perform(Action::BindAddr { sock, addr: sa }));
    };
    let start = start_for(w, libc::AT_FDCWD, &path)?;
    let entry = w.parent(start, &path)?;
    let paths = vec![entry_res(&entry, w)?];
    write(
        name,
        paths,
        Action::Bind {
            sock,
            entry,
            addr: sa,
        },
    )
}

/// `file_setattr` (Linux 6.17).
fn file_setattr_call(
    name: &'static str,
    a: &[u64; 6],
    t: &mut Target<'_>,
    w: &mut Walker,
) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    // file_setattr(dfd, path, struct file_attr *, size, at_flags): the struct is
    // read as the size says; the kernel checks both.
    let (d, p, size, flags) = (at(0), a[1], a[3] as usize, a[4] as u32);
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let mut attr = vec![0u8; size.min(4096)];
    t.mem
        .read_exact(t.tid, a[2], &mut attr, t.lender)
        .map_err(read_err)?;
    let obj = object(w, t, d, p, flags)?;
    let paths = vec![obj_res(&obj, w)?];
    write(name, paths, Action::FileSetattr { obj, attr, size })
}

/// `(dirfd, path, next argument)` of a legacy call (`legacy`) or its `*at` form.
fn pick(legacy: bool, a: &[u64; 6], next: usize) -> (i32, u64, u64) {
    if legacy {
        (libc::AT_FDCWD, a[0], a[next])
    } else {
        (a[0] as i32, a[1], a[next + 1])
    }
}

/// Reads `buf.len()` bytes of the target's memory at `ptr`.
pub(super) fn read_bytes(t: &mut Target<'_>, ptr: u64, buf: &mut [u8]) -> Sys<()> {
    t.mem
        .read_exact(t.tid, ptr, buf, t.lender)
        .map_err(read_err)
}

fn read_path(t: &mut Target<'_>, ptr: u64) -> Sys<Vec<u8>> {
    t.mem.read_cstr(t.tid, ptr, t.lender).map_err(read_err)
}

fn read_xattr_name(t: &mut Target<'_>, ptr: u64) -> Sys<CString> {
    let n = read_path(t, ptr).map_err(|e| {
        if e == Errno::ENAMETOOLONG {
            Errno::ERANGE
        } else {
            e
        }
    })?;
    if n.is_empty() || n.len() > 255 {
        return Err(Errno::ERANGE);
    }
    CString::new(n).map_err(|_| Errno::EINVAL)
}

/// The times a `utime*` call sets, as `utimensat` takes them (`None`: now).
fn read_times(t: &mut Target<'_>, name: &str, ptr: u64) -> Sys<Option<[libc::timespec; 2]>> {
    if ptr == 0 {
        return Ok(None);
    }
    let ts = |sec: i64, nsec: i64| libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    };
    let mut raw = [0u8; 32];
    let size = if name == "utime" { 16 } else { 32 };
    t.mem
        .read_exact(t.tid, ptr, &mut raw[..size], t.lender)
        .map_err(read_err)?;
    let w = |i: usize| i64::from_ne_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap());
    Ok(Some(match name {
        // struct utimbuf { actime, modtime }
        "utime" => [ts(w(0), 0), ts(w(1), 0)],
        // struct timeval[2]
        "utimes" | "futimesat" => {
            for usec in [w(1), w(3)] {
                if !(0..1_000_000).contains(&usec) {
                    return Err(Errno::EINVAL);
                }
            }
            [ts(w(0), w(1) * 1000), ts(w(2), w(3) * 1000)]
        }
        _ => [ts(w(0), w(1)), ts(w(2), w(3))],
    }))
}

/// Where the lookup of `path` starts.
pub(super) fn start_for(w: &Walker, dirfd: i32, path: &[u8]) -> Sys<OwnedFd> {
    if path.first() == Some(&b'/') {
        return w.roots().root();
    }
    w.base(&Base::Fd(dirfd))
}

fn parent(w: &mut Walker, t: &mut Target<'_>, dirfd: i32, ptr: u64) -> Sys<Entry> {
    let path = read_path(t, ptr)?;
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    let start = start_for(w, dirfd, &path)?;
    w.parent(start, &path)
}

/// The object of a path call: followed unless `AT_SYMLINK_NOFOLLOW`; the dirfd itself for an
/// empty path with `AT_EMPTY_PATH`.
fn object(w: &mut Walker, t: &mut Target<'_>, dirfd: i32, ptr: u64, flags: u32) -> Sys<Obj> {
    object_as(w, t, dirfd, ptr, flags, false)
}

/// [`object`]; `open_fd`: an empty path needs a descriptor that is not `O_PATH` (the
/// `*xattrat` calls act through the open file then).
fn object_as(
    w: &mut Walker,
    t: &mut Target<'_>,
    dirfd: i32,
    ptr: u64,
    flags: u32,
    open_fd: bool,
) -> Sys<Obj> {
    let path = read_path(t, ptr)?;
    if path.is_empty() {
        if flags & AT_EMPTY_PATH != 0 {
            if open_fd {
                return Ok(Obj::Held(fd_object(w, t, dirfd)?));
            }
            return Ok(Obj::Held(w.base(&Base::Fd(dirfd))?));
        }
        return Err(Errno::ENOENT);
    }
    let start = start_for(w, dirfd, &path)?;
    if flags & AT_SYMLINK_NOFOLLOW != 0 {
        let e = w.parent(start, &path)?;
        if e.special() {
            // `.`, `..` or a trailing slash: the kernel resolves these to the object (a
            // trailing slash follows a symlink even here).
            let mut e = e;
            loop {
                match w.last(e, false)? {
                    Last::Object(fd) => return Ok(Obj::Held(fd)),
                    Last::Link(next) => e = next,
                }
            }
        }
        // The entry must exist, as for the kernel's lookup.
        fsops::lstatat(e.dir.as_fd(), &e.name)?;
        return Ok(Obj::Entry(e));
    }
    Ok(Obj::Held(w.object(start, &path, true)?))
}

/// The object behind the target's descriptor `fd` for a call that acts through the open
/// file (`fchmod`, `futimens`...): `EBADF` for an `O_PATH` descriptor, as the kernel says.
fn fd_object(w: &Walker, t: &mut Target<'_>, fd: i32) -> Sys<OwnedFd> {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    // The very open file, where the daemon may take it: two syscalls, and its flags.
    if let Ok(file) = take_fd(t, fd) {
        if fsops::getfl(file.as_fd())? & libc::O_PATH != 0 {
            return Err(Errno::EBADF);
        }
        return Ok(file);
    }
    let mut buf = [0u8; 512];
    let info =
        read_proc(&format!("/proc/{}/fdinfo/{fd}", t.tid), &mut buf).map_err(|_| Errno::EBADF)?;
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| i32::from_str_radix(v.trim(), 8).ok())
        .ok_or(Errno::EBADF)?;
    if flags & libc::O_PATH != 0 {
        return Err(Errno::EBADF);
    }
    w.base(&Base::Fd(fd))
}

/// Whether `fd` is an open file the calls through a descriptor take (`fchmod`, `futimens`),
/// not an `O_PATH` one, which they refuse: that one is reached through `/proc/self/fd`.
fn open_file(fd: &OwnedFd) -> bool {
    fsops::getfl(fd.as_fd()).is_ok_and(|f| f & libc::O_PATH == 0)
}

/// [`fd_object`] and its decision path, for a call through the open file: the path kept
/// for the same object on the same descriptor when there is one ([`crate::dircache`]; tar
/// sets the times, owner and mode of each file it writes through one descriptor), else
/// checked and kept.
fn fd_call(w: &Walker, t: &mut Target<'_>, fd: i32) -> Sys<(OwnedFd, Resolved)> {
    let file = fd_object(w, t, fd)?;
    let Ok(id) = fsops::identity(file.as_fd()) else {
        let path = held_res(&file, w)?;
        return Ok((file, path));
    };
    if let Some(path) = t.descs.object_path(t.tid, fd, id) {
        // Still its name: a process outside the session may have moved it meanwhile.
        if walk::leads_to(&path, id, w.roots()) {
            return Ok((file, Resolved::Path(path)));
        }
    }
    let path = match w.held_path_lasting(file.as_fd())? {
        Some((path, lasting)) => {
            if lasting {
                t.descs.keep_object(t.tid, fd, id, &path);
            }
            Resolved::Path(path)
        }
        None => held_res(&file, w)?,
    };
    Ok((file, path))
}

/// A copy of the target's descriptor `fd` (`pidfd_getfd`), for what needs the open file
/// itself: a socket to bind, a file for an ioctl. Where the daemon may not take it (Yama
/// `ptrace_scope=1` and not root), `EPERM`.
pub(super) fn take_fd(t: &mut Target<'_>, fd: i32) -> Sys<OwnedFd> {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    // Where the daemon may not take it (Yama), the launcher, an ancestor, can.
    let own = if t.mem.lends() {
        Err(Errno::EPERM)
    } else {
        getfd(t.tid, fd)
    };
    match own {
        Err(Errno::EPERM) | Err(Errno::EACCES) => t
            .lender
            .lend_fd(t.tid, fd)
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

/// What an entry is for the policy, if the process may reach it (see [`Walker::entry_path`]).
fn entry_res(e: &Entry, w: &Walker) -> Sys<Resolved> {
    match w.entry_path(e)? {
        Some(p) => Ok(Resolved::Path(p)),
        // A directory always has a path; one that does not cannot be decided on.
        None => Err(Errno::EACCES),
    }
}

/// What a held object is for the policy, if the process may reach it (see
/// [`Walker::held_path`]).
pub(super) fn held_res(fd: &OwnedFd, w: &Walker) -> Sys<Resolved> {
    Ok(match w.held_path(fd.as_fd())? {
        Some(p) => Resolved::Path(p),
        None => {
            let link =
                std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default();
            Resolved::NotAFile(link.into_os_string())
        }
    })
}

fn obj_res(o: &Obj, w: &Walker) -> Sys<Resolved> {
    match o {
        Obj::Held(fd) => held_res(fd, w),
        Obj::Entry(e) => entry_res(e, w),
    }
}

/// How many times an open is prepared again when the entry it checked became a symlink
/// before it was opened (a race, or a busy directory): then the kernel's ELOOP.
pub const OPEN_RETRIES: u32 = 8;

#[allow(clippy::too_many_arguments)]
fn open(
    w: &mut Walker,
    t: &mut Target<'_>,
    dirfd: i32,
    path: &[u8],
    flags: i32,
    mode: u32,
    how: Option<OpenHow>,
    name: &'static str,
) -> Sys<Prepared> {
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    if how.is_none() && flags & O_TMPFILE != 0 {
        // The kernel's own check of the flags, before any lookup.
        if let Err(Errno::EINVAL) = fsops::openat(None, c"", flags & !libc::O_CREAT, mode) {
            return Err(Errno::EINVAL);
        }
    }
    let follow = flags & libc::O_NOFOLLOW == 0
        && flags & (libc::O_CREAT | libc::O_EXCL) != (libc::O_CREAT | libc::O_EXCL);
    let beneath =
        how.is_some_and(|h| h.resolve & (walk::RESOLVE_BENEATH | walk::RESOLVE_IN_ROOT) != 0);
    let start = if beneath {
        // These resolve absolute paths from the dirfd, or refuse them.
        w.base(&Base::Fd(dirfd))?
    } else {
        start_for(w, dirfd, path)?
    };
    let write = |paths: Vec<Resolved>, action: Action| {
        Ok(Prepared::Write {
            syscall: name,
            paths,
            action,
        })
    };
    if flags & O_TMPFILE != 0 {
        // The path names the directory the file is made in.
        let dir = w.object(start, path, flags & libc::O_NOFOLLOW == 0)?;
        let paths = vec![held_res(&dir, w)?];
        return write(
            paths,
            Action::Reopen {
                obj: dir,
                flags,
                mode,
            },
        );
    }
    let mut entry = w.parent(start, path)?;
    loop {
        if entry.special() || !follow {
            // Nothing to follow: `.`, `..` and trailing slashes can only be directories,
            // which no write open succeeds on; O_NOFOLLOW and O_CREAT|O_EXCL fail on a
            // symlink in the kernel.
            break;
        }
        match fsops::lstatat(entry.dir.as_fd(), &entry.name) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => match w.last(entry, true)? {
                Last::Link(next) => entry = next,
                // A /proc magic link, or /proc/self: the object itself.
                Last::Object(obj) => {
                    if fsops::fstat(obj.as_fd()).is_ok_and(|st| is_dev_tty(&st)) {
                        return tty(t, flags, mode, name);
                    }
                    let paths = vec![held_res(&obj, w)?];
                    return write(paths, Action::Reopen { obj, flags, mode });
                }
            },
            _ => break,
        }
    }
    if !entry.special()
        && fsops::lstatat(entry.dir.as_fd(), &entry.name).is_ok_and(|st| is_dev_tty(&st))
    {
        return tty(t, flags, mode, name);
    }
    let paths = vec![entry_res(&entry, w)?];
    write(
        paths,
        Action::Open {
            entry,
            flags,
            mode,
            how,
        },
    )
}

/// `/dev/tty`, which names the caller's controlling terminal: opened in the daemon it would
/// be the daemon's (or none).
fn is_dev_tty(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == libc::makedev(5, 0)
}

/// An open of `/dev/tty`: the target's controlling terminal, reopened from one of its own
/// descriptors.
fn tty(t: &Target<'_>, flags: i32, mode: u32, name: &'static str) -> Sys<Prepared> {
    if flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL {
        return Err(Errno::EEXIST);
    }
    let obj = controlling_tty(t.tid, t.ttys)?;
    // Decided on the terminal it is, not on `/dev/tty`: a process that made another
    // terminal its controlling one (`TIOCSCTTY`) would otherwise write there as if to its own.
    let real = walk::path_of(obj.as_fd())?.ok_or(Errno::EACCES)?;
    Ok(Prepared::Write {
        syscall: name,
        paths: vec![Resolved::Path(real)],
        action: Action::Reopen { obj, flags, mode },
    })
}

/// The target's controlling terminal, held: one of its descriptors open on it.
fn controlling_tty(tid: i32, ttys: &[PathBuf]) -> Sys<OwnedFd> {
    let (major, minor) = crate::resolve::controlling_terminal_device(tid)
        .map_err(|_| Errno::ESRCH)?
        .ok_or(Errno::ENXIO)?;
    let dev = libc::makedev(major, minor);
    let dir = std::fs::read_dir(format!("/proc/{tid}/fd")).map_err(|_| Errno::ENXIO)?;
    for e in dir.flatten() {
        let p = CString::new(e.path().into_os_string().into_encoded_bytes()).unwrap_or_default();
        if let Ok(fd) = fsops::open_path(None, &p, false) {
            if let Ok(st) = fsops::fstat(fd.as_fd()) {
                if st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == dev {
                    return Ok(fd);
                }
            }
        }
    }
    // None of its descriptors is on it (stdio redirected): the session's terminal, if that
    // is the one.
    for p in ttys {
        let Ok(p) = CString::new(p.as_os_str().as_encoded_bytes()) else {
            continue;
        };
        if let Ok(fd) = fsops::open_path(None, &p, false) {
            if fsops::fstat(fd.as_fd())
                .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == dev)
            {
                return Ok(fd);
            }
        }
    }
    Err(Errno::ENXIO)
}

/// Whether `fd` is a device node that is not in `/dev` (nor `/dev/pts`): its path, in the
/// project say, would let the policy take a write of the device for a write of the project.
/// Opened for writing, it is refused, whatever was decided on the name (it may have been
/// swapped for the node since).
fn stray_device(fd: &OwnedFd) -> bool {
    static DEV: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let homes = DEV.get_or_init(|| {
        ["/dev", "/dev/pts"]
            .iter()
            .filter_map(|d| std::fs::metadata(d).ok())
            .map(|m| std::os::unix::fs::MetadataExt::dev(&m))
            .collect()
    });
    fsops::fstat(fd.as_fd()).is_ok_and(|st| {
        let kind = st.st_mode & libc::S_IFMT;
        (kind == libc::S_IFCHR || kind == libc::S_IFBLK) && !homes.contains(&st.st_dev)
    })
}

/// What performing gives: the syscall's answer, or a descriptor to install and return.
pub enum Outcome {
    Reply(Reply),
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// The entry changed under the check (it became a symlink): prepare again.
    Raced,
    /// An open that would wait for a FIFO's other end: to be made on a thread of its own.
    Blocks,
}

impl From<Sys<()>> for Outcome {
    fn from(r: Sys<()>) -> Outcome {
        Outcome::Reply(match r {
            Ok(()) => Reply::Value(0),
            Err(e) => Reply::Fail(e as i32),
        })
    }
}

const O_NOCTTY: i32 = libc::O_NOCTTY;

impl Action {
    /// Whether performing may block for as long as the target would have: opening a FIFO
    /// waits for the other end. Such an action is performed on a thread of its own.
    pub fn may_block(&self) -> bool {
        let (st, flags) = match self {
            Action::Open { entry, flags, .. } if !entry.special() => {
                (fsops::lstatat(entry.dir.as_fd(), &entry.name), *flags)
            }
            Action::Reopen { obj, flags, .. } => (fsops::fstat(obj.as_fd()), *flags),
            Action::Connect(c) => return c.may_block(),
            _ => return false,
        };
        let fifo = st.is_ok_and(|st| is_fifo(&st));
        fifo && flags & (libc::O_NONBLOCK | libc::O_PATH) == 0
            && flags & libc::O_ACCMODE != libc::O_RDWR
    }

    /// Performs the operation for thread `tid`, with its credentials. `wait`: on a thread of
    /// its own, where an open may wait for a FIFO's other end; otherwise such an open is not
    /// made but answered [`Outcome::Blocks`].
    pub fn perform(&self, tid: i32, wait: bool) -> Outcome {
        // Those that create apply the target's umask and credentials around the call itself.
        let itself = match self {
            Action::Open { .. } | Action::Mkdir { .. } | Action::Mknod { .. } => true,
            Action::Bind { .. } => true,
            Action::Reopen { flags, .. } => flags & O_TMPFILE != 0,
            _ => false,
        };
        if itself {
            return self.perform_as(tid, wait);
        }
        match as_target(tid, false, !wait, || self.perform_as(tid, wait)) {
            Ok(o) => o,
            Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
        }
    }

    fn perform_as(&self, tid: i32, wait: bool) -> Outcome {
        match self {
            Action::Open {
                entry,
                flags,
                mode,
                how,
            } => {
                let follow = flags & libc::O_NOFOLLOW == 0;
                // The entry was checked not to be a symlink; if it became one, the kernel's
                // ELOOP (RESOLVE_NO_SYMLINKS: unlike O_NOFOLLOW it does not show in the
                // file's flags) tells us and the open is prepared again. The flags and mode
                // are cleaned as open(2) cleans them, since openat2 refuses what it ignores.
                let h = match how {
                    Some(h) => OpenHow {
                        // openat2 refuses any other flag beside O_PATH.
                        flags: h.flags
                            | libc::O_CLOEXEC as u64
                            | if h.flags & libc::O_PATH as u64 == 0 {
                                O_NOCTTY as u64
                            } else {
                                0
                            },
                        mode: h.mode,
                        resolve: if entry.special() {
                            h.resolve
                        } else {
                            h.resolve | walk::RESOLVE_NO_SYMLINKS
                        },
                    },
                    None => open_how(*flags, *mode, !entry.special()),
                };
                // Never blocks here: a FIFO found at the name is opened on a thread of its own
                // (the name was checked before, but what it names may change).
                let mut h = h;
                let added = !wait && h.flags & libc::O_NONBLOCK as u64 == 0;
                if added {
                    h.flags |= libc::O_NONBLOCK as u64;
                }
                let r = as_target(tid, flags & libc::O_CREAT != 0, !wait, || {
                    fsops::openat2(entry.dir.as_raw_fd(), &entry.name, &h)
                });
                let fifo_here =
                    || fsops::lstatat(entry.dir.as_fd(), &entry.name).is_ok_and(|st| is_fifo(&st));
                match r {
                    Err(e) | Ok(Err(e)) if e == Errno::ELOOP && follow && !entry.special() => {
                        Outcome::Raced
                    }
                    Ok(Err(Errno::ENXIO)) if added && fifo_here() => Outcome::Blocks,
                    Err(e) | Ok(Err(e)) => Outcome::Reply(Reply::Fail(e as i32)),
                    Ok(Ok(fd)) if stray_device(&fd) => Outcome::Reply(Reply::Fail(libc::EACCES)),
                    Ok(Ok(fd)) => opened(fd, *flags, added),
                }
            }
            Action::PtyPeer { master, flags } => {
                // Never the daemon's controlling terminal.
                let f = (flags | O_NOCTTY) & !libc::O_CLOEXEC;
                match fsops::pty_peer(master.as_fd(), f) {
                    Ok(fd) => opened(fd, *flags, false),
                    Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
                }
            }
            Action::Reopen { obj, flags, mode } => {
                if !wait && self.may_block() {
                    return Outcome::Blocks;
                }
                let f = (flags | O_NOCTTY) & !libc::O_CLOEXEC;
                let r = if flags & O_TMPFILE != 0 {
                    as_target(tid, true, !wait, || {
                        fsops::openat(Some(obj.as_fd()), c".", f, *mode)
                    })
                } else {
                    Ok(fsops::openat(
                        None,
                        &walk::self_path(obj.as_fd()),
                        f & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW),
                        0,
                    ))
                };
                match r {
                    Err(e) | Ok(Err(e)) => Outcome::Reply(Reply::Fail(e as i32)),
                    Ok(Ok(fd)) if stray_device(&fd) => Outcome::Reply(Reply::Fail(libc::EACCES)),
                    Ok(Ok(fd)) => opened(fd, *flags, false),
                }
            }
            Action::Mkdir { entry, mode } => flatten(as_target(tid, true, !wait, || {
                fsops::mkdirat(entry.dir.as_fd(), &entry.name, *mode)
            })),
            Action::Mknod { entry, mode, dev } => flatten(as_target(tid, true, !wait, || {
                fsops::mknodat(entry.dir.as_fd(), &entry.name, *mode, *dev)
            })),
            Action::Unlink { entry, flags } => {
                fsops::unlinkat(entry.dir.as_fd(), &entry.name, *flags).into()
            }
            Action::Rename { from, to, flags } => fsops::renameat2(
                from.dir.as_fd(),
                &from.name,
                to.dir.as_fd(),
                &to.name,
                *flags,
            )
            .into(),
            Action::Link { from, to, empty } => match from {
                Obj::Held(fd) if *empty => fsops::linkat(
                    Some(fd.as_fd()),
                    c"",
                    to.dir.as_fd(),
                    &to.name,
                    libc::AT_EMPTY_PATH,
                )
                .into(),
                Obj::Held(fd) => fsops::linkat(
                    None,
                    &walk::self_path(fd.as_fd()),
                    to.dir.as_fd(),
                    &to.name,
                    libc::AT_SYMLINK_FOLLOW,
                )
                .into(),
                Obj::Entry(e) => {
                    fsops::linkat(Some(e.dir.as_fd()), &e.name, to.dir.as_fd(), &to.name, 0).into()
                }
            },
            Action::Symlink { target, entry } => {
                fsops::symlinkat(target, entry.dir.as_fd(), &entry.name).into()
            }
            Action::Chmod { obj, mode } => match obj {
                Obj::Held(fd) if open_file(fd) => fsops::fchmod(fd.as_fd(), *mode).into(),
                Obj::Held(fd) => fsops::fchmodat(None, &walk::self_path(fd.as_fd()), *mode).into(),
                Obj::Entry(e) => fsops::fchmodat2(
                    Some(e.dir.as_fd()),
                    &e.name,
                    *mode,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::Chown { obj, uid, gid } => match obj {
                Obj::Held(fd) => {
                    fsops::fchownat(Some(fd.as_fd()), c"", *uid, *gid, libc::AT_EMPTY_PATH).into()
                }
                Obj::Entry(e) => fsops::fchownat(
                    Some(e.dir.as_fd()),
                    &e.name,
                    *uid,
                    *gid,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::Truncate { obj, len } => {
                // Past the process's file-size limit the kernel refuses it with EFBIG and
                // SIGXFSZ, as it would had the process made it.
                match super::creds::fsize_limit(tid) {
                    Ok(Some(limit)) if *len >= 0 && *len as u64 > limit => {
                        fsops::signal_thread(tid, libc::SIGXFSZ);
                        Outcome::Reply(Reply::Fail(libc::EFBIG))
                    }
                    Ok(_) => fsops::truncate(&walk::self_path(obj.as_fd()), *len).into(),
                    Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
                }
            }
            Action::Times { obj, times } => match obj {
                Obj::Held(fd) if open_file(fd) => {
                    fsops::futimens(fd.as_fd(), times.as_ref()).into()
                }
                Obj::Held(fd) => {
                    fsops::utimensat(None, &walk::self_path(fd.as_fd()), times.as_ref(), 0).into()
                }
                Obj::Entry(e) => fsops::utimensat(
                    Some(e.dir.as_fd()),
                    &e.name,
                    times.as_ref(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::SetXattr {
                obj,
                name,
                value,
                flags,
            } => match obj {
                Obj::Held(fd) => {
                    fsops::setxattr(&walk::self_path(fd.as_fd()), name, value, *flags, false).into()
                }
                Obj::Entry(e) => {
                    fsops::setxattr(&entry_self_path(e), name, value, *flags, true).into()
                }
            },
            Action::RemoveXattr { obj, name } => match obj {
                Obj::Held(fd) => {
                    fsops::removexattr(&walk::self_path(fd.as_fd()), name, false).into()
                }
                Obj::Entry(e) => fsops::removexattr(&entry_self_path(e), name, true).into(),
            },
            Action::Ioctl { fd, cmd, arg } => {
                let r = match arg {
                    Arg::Fd(src) => fsops::ioctl_val(fd.as_fd(), *cmd, src.as_raw_fd() as u64),
                    Arg::Bytes(b) => {
                        let mut b = b.clone();
                        fsops::ioctl_ptr(fd.as_fd(), *cmd, &mut b)
                    }
                    Arg::Range(b, src) => {
                        let mut b = b.clone();
                        b.splice(0..8, (src.as_raw_fd() as i64).to_ne_bytes());
                        fsops::ioctl_ptr(fd.as_fd(), *cmd, &mut b)
                    }
                };
                Outcome::Reply(match r {
                    Ok(v) => Reply::Value(v),
                    Err(e) => Reply::Fail(e as i32),
                })
            }
            Action::FileSetattr { obj, attr, size } => match obj {
                Obj::Held(fd) => {
                    fsops::file_setattr(None, &walk::self_path(fd.as_fd()), attr, *size, 0).into()
                }
                Obj::Entry(e) => fsops::file_setattr(
                    Some(e.dir.as_fd()),
                    &e.name,
                    attr,
                    *size,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::BindAddr { sock, addr } => fsops::bind(sock.as_fd(), addr).into(),
            Action::Connect(c) => c.perform().into(),
            Action::Bind { sock, entry, addr } => {
                // The name alone, from the held directory made this thread's cwd: the socket
                // is made in that very directory.
                let mut a = addr[..2].to_vec();
                a.extend_from_slice(entry.name.as_bytes());
                a.push(0);
                flatten(as_target(tid, true, !wait, || {
                    let r = fsops::fchdir(entry.dir.as_fd())
                        .and_then(|()| fsops::bind(sock.as_fd(), &a));
                    // Not left there: a cwd pins its directory.
                    let _ = fsops::chdir_root();
                    r
                }))
            }
        }
    }
}

fn flatten(r: Sys<Sys<()>>) -> Outcome {
    r.and_then(|x| x).into()
}

/// The `open_how` that `open(2)` would make of `flags` and `mode` (`build_open_how` in
/// fs/open.c), with symlinks refused in the last step when `no_symlinks`.
fn open_how(flags: i32, mode: u32, no_symlinks: bool) -> OpenHow {
    const VALID: i32 = libc::O_ACCMODE
        | libc::O_CREAT
        | libc::O_EXCL
        | libc::O_NOCTTY
        | libc::O_TRUNC
        | libc::O_APPEND
        | libc::O_NONBLOCK
        | libc::O_DSYNC
        | libc::O_ASYNC
        | libc::O_DIRECT
        | libc::O_LARGEFILE
        | libc::O_DIRECTORY
        | libc::O_NOFOLLOW
        | libc::O_NOATIME
        | libc::O_CLOEXEC
        | libc::O_SYNC
        | libc::O_PATH
        | libc::O_TMPFILE;
    let f = flags & VALID;
    let creates = f & libc::O_CREAT != 0 || f & O_TMPFILE == O_TMPFILE;
    OpenHow {
        flags: (f | O_NOCTTY | libc::O_CLOEXEC) as u32 as u64,
        mode: if creates { (mode & 0o7777) as u64 } else { 0 },
        resolve: if no_symlinks {
            walk::RESOLVE_NO_SYMLINKS
        } else {
            0
        },
    }
}

/// `/proc/self/fd/D/NAME`: the entry itself, for the calls with no `*at` form (the `l*xattr`
/// calls do not follow the last component).
fn entry_self_path(e: &Entry) -> CString {
    let mut p = walk::self_path(e.dir.as_fd()).into_bytes();
    p.push(b'/');
    p.extend_from_slice(e.name.as_bytes());
    CString::new(p).unwrap_or_default()
}

fn is_fifo(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFIFO
}

/// The descriptor to install, as the target asked for it: `O_NONBLOCK` taken off again if
/// the daemon `added` it. A FIFO opened that way that would have waited (the read end) is
/// opened again on a thread of its own.
fn opened(fd: OwnedFd, flags: i32, added: bool) -> Outcome {
    if added {
        if fsops::fstat(fd.as_fd()).is_ok_and(|st| is_fifo(&st))
            && flags & libc::O_ACCMODE != libc::O_RDWR
        {
            return Outcome::Blocks;
        }
        let restored = fsops::getfl(fd.as_fd())
            .and_then(|fl| fsops::setfl(fd.as_fd(), fl & !libc::O_NONBLOCK));
        if let Err(e) = restored {
            return Outcome::Reply(Reply::Fail(e as i32));
        }
    }
    Outcome::Fd {
        fd,
        cloexec: flags & libc::O_CLOEXEC != 0,
    }
}

/// Answers notification `id` with what performing gave. A descriptor the target can no
/// longer take (it died) is closed with the action.
pub fn answer(listener: BorrowedFd<'_>, id: u64, outcome: Outcome) {
    match outcome {
        Outcome::Reply(r) => {
            let _ = seccomp::send(listener, id, r);
        }
        Outcome::Fd { fd, cloexec } => {
            if let Err(e) = seccomp::send_fd(listener, id, fd.as_fd(), cloexec) {
                // Installing failed in the target (EMFILE...): the syscall fails so.
                if let Some(errno) = e.raw_os_error().filter(|&x| x != libc::ENOENT) {
                    let _ = seccomp::send(listener, id, Reply::Fail(errno));
                }
            }
        }
        Outcome::Raced => {
            let _ = seccomp::send(listener, id, Reply::Fail(libc::ELOOP));
        }
        // Only a thread of its own may wait; one that still got this cannot.
        Outcome::Blocks => {
            let _ = seccomp::send(listener, id, Reply::Fail(libc::EAGAIN));
        }
    }
}
