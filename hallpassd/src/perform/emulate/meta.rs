//! Preparing a change of a file's metadata: its mode, owner, size, times, extended
//! attributes and flags, by path or through a descriptor.

use super::*;

/// `chmod`, `fchmodat`, `fchmodat2`.
pub(super) fn chmod_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
pub(super) fn chown_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
pub(super) fn truncate_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
    let len = a[1] as i64;
    let obj = match object(w, t, libc::AT_FDCWD, a[0], 0)? {
        Obj::Held(fd) => fd,
        Obj::Entry(_) => unreachable!("followed"),
    };
    let paths = vec![held_res(&obj, w)?];
    write(name, paths, Action::Truncate { obj, len })
}

/// The `utime*` calls, `futimens` (`utimensat` with no path) among them.
pub(super) fn times_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
    let at = |i: usize| a[i] as i32;
    let (d, p, tp, flags) = match name {
        "utime" | "utimes" => (libc::AT_FDCWD, a[0], a[1], 0),
        "futimesat" => (at(0), a[1], a[2], 0),
        _ => (at(0), a[1], a[2], a[3] as u32),
    };
    // In the kernel's order: the times are read first (EFAULT), and with both omitted there
    // is nothing to change: it succeeds at once, checking neither the flags nor the
    // descriptor nor the path (`SYSCALL_DEFINE4(utimensat)`).
    let times = read_times(t, name, tp)?;
    if name == "utimensat" && times.is_some_and(|t| t.iter().all(|t| t.tv_nsec == libc::UTIME_OMIT))
    {
        return Ok(Prepared::Fail(0));
    }
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Errno::EINVAL);
    }
    let obj = if p == 0 && name != "utime" && name != "utimes" {
        // No path: the descriptor's file, which takes no flag at all (`do_utimes_fd`); from
        // the cwd, a path lookup of NULL.
        if d == libc::AT_FDCWD {
            return Err(Errno::EFAULT);
        }
        if flags != 0 {
            return Err(Errno::EINVAL);
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
pub(super) fn setxattr_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
pub(super) fn removexattr_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
pub(super) fn fd_meta_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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

/// `file_setattr` (Linux 6.17).
pub(super) fn file_setattr_call(Call { name, a, t, w }: Call<'_, '_, '_>) -> Sys<Prepared> {
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
