//! Preparing a write: what a notification asks for, read once and looked up to descriptors
//! the daemon holds, by family of syscalls.

use super::meta::*;
use super::*;

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
                match crate::reach::process_call(sc.kind, rt, a, &mut read) {
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
        Kind::Send { .. } => return super::send::prepare(name, t, &mut w, a),
        _ => {}
    }
    // One function per family of syscalls; each reads its dirfd and path arguments (legacy
    // calls are relative to the cwd).
    let c = Call {
        name,
        a,
        t,
        w: &mut w,
    };
    match name {
        "open" | "openat" | "creat" => open_call(c),
        "openat2" => openat2_call(c),
        "mkdir" | "mkdirat" => mkdir_call(c),
        "mknod" | "mknodat" => mknod_call(c),
        "rmdir" | "unlink" | "unlinkat" => unlink_call(c),
        "rename" | "renameat" | "renameat2" => rename_call(c),
        "link" | "linkat" => link_call(c),
        "symlink" | "symlinkat" => symlink_call(c),
        "chmod" | "fchmodat" | "fchmodat2" => chmod_call(c),
        "chown" | "lchown" | "fchownat" => chown_call(c),
        "truncate" => truncate_call(c),
        "utime" | "utimes" | "futimesat" | "utimensat" => times_call(c),
        "setxattr" | "lsetxattr" | "setxattrat" => setxattr_call(c),
        "removexattr" | "lremovexattr" | "removexattrat" => removexattr_call(c),
        "fchmod" | "fchown" | "fsetxattr" | "fremovexattr" => fd_meta_call(c),
        "ioctl" => ioctl_call(c),
        "bind" => bind_call(c),
        "file_setattr" => file_setattr_call(c),
        _ => Err(Errno::ENOSYS),
    }
}

/// An `open`, `openat` or `creat` that writes (a read-only one passes).
fn open_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
fn openat2_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
fn mkdir_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
    let (d, p, mode) = pick(name == "mkdir", a, 1);
    let entry = parent(w, t, d, p)?;
    if never_made(&entry) {
        return Err(Errno::EEXIST);
    }
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

/// `mknod`, `mknodat`, in the kernel's order (`do_mknodat`): the type first, then the path.
/// A device node is never made (see [`Kind::Mknod`]): performed without `CAP_MKNOD`, it
/// fails with the kernel's own error, or `EPERM` where the kernel would have made it, and so
/// needs no decision.
fn mknod_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
    let (d, p, mode) = pick(name == "mknod", a, 1);
    let dev = if name == "mknod" { a[2] } else { a[3] };
    let device = makes_device(mode, dev);
    // As the kernel reads them: a 16-bit mode, a 32-bit device.
    let (mode, dev) = (mode as u16 as u32, dev as u32 as u64);
    match mode & libc::S_IFMT {
        0 | libc::S_IFREG | libc::S_IFCHR | libc::S_IFBLK | libc::S_IFIFO | libc::S_IFSOCK => {}
        libc::S_IFDIR => return Err(Errno::EPERM),
        _ => return Err(Errno::EINVAL),
    }
    let entry = parent(w, t, d, p)?;
    if never_made(&entry) {
        return Err(Errno::EEXIST);
    }
    let paths = vec![entry_res(&entry, w)?];
    let action = Action::Mknod { entry, mode, dev };
    if device {
        return Ok(Prepared::Perform(action));
    }
    write(name, paths, action)
}

/// Whether the kernel refuses to make `e` (`EEXIST`) once the path is walked, whatever it names
/// and whoever asks (`filename_create`): the root, `.` and `..`. Nothing to decide.
fn never_made(e: &Entry) -> bool {
    matches!(e.bare(), b"/" | b"." | b"..")
}

/// `rmdir`, `unlink`, `unlinkat`.
fn unlink_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
    // Names the kernel refuses once the path is walked, whatever they name and whoever asks
    // (`do_rmdir`, `do_unlinkat`): the root (a mount point), `.` and `..`. Nothing to decide.
    match (entry.bare(), flags & libc::AT_REMOVEDIR != 0) {
        (b"/", true) => return Err(Errno::EBUSY),
        (b".", true) => return Err(Errno::EINVAL),
        (b"..", true) => return Err(Errno::ENOTEMPTY),
        (b"/" | b"." | b"..", false) => return Err(Errno::EISDIR),
        _ => {}
    }
    let paths = vec![entry_res(&entry, w)?];
    write(name, paths, Action::Unlink { entry, flags })
}

/// `rename`, `renameat`, `renameat2`.
fn rename_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
fn link_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
fn symlink_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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

/// A write `ioctl` (the filter lets the harmless ones through).
fn ioctl_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let cmd = a[1] as u32;
    if cmd == TIOCGPTPEER {
        let master = take_fd(t, at(0))?;
        return Ok(Prepared::Perform(Action::PtyPeer {
            master,
            flags: a[2] as i32,
        }));
    }
    if let Some(tc) = crate::syscalls::tty_ioctl(a[1]) {
        return super::tty::terminal_call(Call { name, a, t, w }, tc);
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
fn bind_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
