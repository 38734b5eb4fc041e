//! A write's arguments: read once from the process's memory, and looked up, path by path,
//! to descriptors the daemon holds (the walk of `perform/walk/`), with the decision path of
//! each.

use super::*;

/// `(dirfd, path, next argument)` of a legacy call (`legacy`) or its `*at` form.
pub(super) fn pick(legacy: bool, a: &[u64; 6], next: usize) -> (i32, u64, u64) {
    if legacy {
        (libc::AT_FDCWD, a[0], a[next])
    } else {
        (a[0] as i32, a[1], a[next + 1])
    }
}

/// Reads `buf.len()` bytes of the target's memory at `ptr`.
pub(in crate::perform) fn read_bytes(t: &mut Target<'_>, ptr: u64, buf: &mut [u8]) -> Sys<()> {
    t.mem
        .read_exact(t.tid, ptr, buf, t.lender)
        .map_err(read_err)
}

pub(super) fn read_path(t: &mut Target<'_>, ptr: u64) -> Sys<Vec<u8>> {
    t.mem.read_cstr(t.tid, ptr, t.lender).map_err(read_err)
}

pub(super) fn read_xattr_name(t: &mut Target<'_>, ptr: u64) -> Sys<CString> {
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
pub(super) fn read_times(
    t: &mut Target<'_>,
    name: &str,
    ptr: u64,
) -> Sys<Option<[libc::timespec; 2]>> {
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
pub(in crate::perform) fn start_for(w: &Walker, dirfd: i32, path: &[u8]) -> Sys<OwnedFd> {
    if path.first() == Some(&b'/') {
        return w.roots().root();
    }
    w.base(&Base::Fd(dirfd))
}

pub(super) fn parent(w: &mut Walker, t: &mut Target<'_>, dirfd: i32, ptr: u64) -> Sys<Entry> {
    let path = read_path(t, ptr)?;
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    let start = start_for(w, dirfd, &path)?;
    w.parent(start, &path)
}

/// The object of a path call: followed unless `AT_SYMLINK_NOFOLLOW`; the dirfd itself for an
/// empty path with `AT_EMPTY_PATH`.
pub(super) fn object(
    w: &mut Walker,
    t: &mut Target<'_>,
    dirfd: i32,
    ptr: u64,
    flags: u32,
) -> Sys<Obj> {
    object_as(w, t, dirfd, ptr, flags, false)
}

/// [`object`]; `open_fd`: an empty path needs a descriptor that is not `O_PATH` (the
/// `*xattrat` calls act through the open file then).
pub(super) fn object_as(
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
pub(super) fn fd_object(w: &Walker, t: &mut Target<'_>, fd: i32) -> Sys<OwnedFd> {
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

/// [`fd_object`] and its decision path, for a call through the open file: the path kept
/// for the same object on the same descriptor when there is one ([`crate::dircache`]; tar
/// sets the times, owner and mode of each file it writes through one descriptor), else
/// checked and kept.
pub(super) fn fd_call(w: &Walker, t: &mut Target<'_>, fd: i32) -> Sys<(OwnedFd, Resolved)> {
    let file = fd_object(w, t, fd)?;
    let Ok(st) = fsops::held_stat(file.as_fd()) else {
        let path = held_res(&file, w)?;
        return Ok((file, path));
    };
    if let Some(path) = t.descs.object_path(t.tid, fd, st.id) {
        // Still its name: a process outside the session may have moved it meanwhile.
        if walk::still_named(file.as_fd(), &path, &st, w.roots()) {
            return Ok((file, Resolved::Path(path)));
        }
    }
    let path = match w.held_path_lasting_as(file.as_fd(), &st)? {
        Some((path, lasting)) => {
            if lasting {
                t.descs.keep_object(t.tid, fd, st.id, &path);
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
pub(in crate::perform) fn take_fd(t: &mut Target<'_>, fd: i32) -> Sys<OwnedFd> {
    crate::fds::take_fd_of(t.tid, fd, t.mem, t.lender)
}

/// What an entry is for the policy, if the process may reach it (see [`Walker::entry_path`]).
pub(super) fn entry_res(e: &Entry, w: &Walker) -> Sys<Resolved> {
    match w.entry_path(e)? {
        Some(p) => Ok(Resolved::Path(p)),
        // A directory always has a path; one that does not cannot be decided on.
        None => Err(Errno::EACCES),
    }
}

/// What a held object is for the policy, if the process may reach it (see
/// [`Walker::held_path`]).
pub(in crate::perform) fn held_res(fd: &OwnedFd, w: &Walker) -> Sys<Resolved> {
    Ok(match w.held_path(fd.as_fd())? {
        Some(p) => Resolved::Path(p),
        None => {
            let link =
                std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default();
            Resolved::NotAFile(link.into_os_string())
        }
    })
}

pub(super) fn obj_res(o: &Obj, w: &Walker) -> Sys<Resolved> {
    match o {
        Obj::Held(fd) => held_res(fd, w),
        Obj::Entry(e) => entry_res(e, w),
    }
}

/// How many times an open is prepared again when the entry it checked became a symlink
/// before it was opened (a race, or a busy directory): then the kernel's ELOOP.
pub const OPEN_RETRIES: u32 = 8;

#[allow(clippy::too_many_arguments)]
pub(super) fn open(
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
pub(super) fn is_dev_tty(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == libc::makedev(5, 0)
}

/// An open of `/dev/tty`: the target's controlling terminal, reopened from one of its own
/// descriptors.
pub(super) fn tty(t: &Target<'_>, flags: i32, mode: u32, name: &'static str) -> Sys<Prepared> {
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
pub(super) fn controlling_tty(tid: i32, ttys: &[PathBuf]) -> Sys<OwnedFd> {
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
pub(super) fn stray_device(fd: &OwnedFd) -> bool {
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
