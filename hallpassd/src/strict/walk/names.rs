//! The kernel's name for an object the daemon holds (`/proc/self/fd/N`), checked before the
//! policy decides on it: looked up again from the root without symlinks, it must lead to the
//! very object held.

use super::*;

/// The path of an object the daemon holds, for the policy, checked: looked up afresh from
/// the root without following any symlink, it must lead to this very object on this very
/// mount. A name the kernel gives can lie: for an object of another mount namespace (reached
/// through `/proc/PID/root`, or a descriptor passed in from one) it is relative to that
/// namespace. `EACCES` then. An unlinked object is checked by its directory's mount.
/// `None` for what is not a file on disk (a pipe, socket, anonymous inode).
pub fn checked_path_of(fd: BorrowedFd<'_>, roots: &Roots) -> Sys<Option<PathBuf>> {
    Ok(checked(fd, roots)?.map(|(p, _)| p))
}

/// [`checked_path_of`], and the object's device.
pub(super) fn checked(fd: BorrowedFd<'_>, roots: &Roots) -> Sys<Option<(PathBuf, u64)>> {
    // Once more if it fails: an honest rename of a parent between reading the name and
    // looking it up again.
    match check_path(fd, roots) {
        Err(Errno::EACCES) => check_path(fd, roots),
        r => r,
    }
}

pub(super) fn check_path(fd: BorrowedFd<'_>, roots: &Roots) -> Sys<Option<(PathBuf, u64)>> {
    use std::os::unix::ffi::OsStrExt as _;
    let Some((path, deleted, dev)) = name_of(fd)? else {
        return Ok(None);
    };
    let held = fsops::identity(fd)?;
    let how = fsops::OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    let look = if deleted {
        path.parent().unwrap_or(&path).to_path_buf()
    } else {
        path.clone()
    };
    let again = cstr(look.as_os_str().as_bytes())
        .and_then(|p| fsops::openat2(roots.root.as_raw_fd(), &p, &how))
        .map_err(|e| {
            if e == Errno::ENAMETOOLONG {
                e
            } else {
                Errno::EACCES
            }
        })?;
    let found = fsops::identity(again.as_fd())?;
    let same = if deleted {
        found.0 == held.0
    } else {
        found == held
    };
    if !same {
        return Err(Errno::EACCES);
    }
    Ok(Some((path, dev)))
}

/// Whether `path`, looked up afresh from the root without following any symlink, still
/// leads to the object whose identity is `id` ([`fsops::identity`]): a decision path kept
/// for it ([`crate::dircache`]) may have been moved away since by a process outside the
/// session, whose renames are not seen.
pub fn leads_to(path: &std::path::Path, id: (u64, u32, u32, u64), roots: &Roots) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let how = fsops::OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    cstr(path.as_os_str().as_bytes())
        .and_then(|p| fsops::openat2(roots.root.as_raw_fd(), &p, &how))
        .and_then(|found| fsops::identity(found.as_fd()))
        .is_ok_and(|found| found == id)
}

/// The kernel's name for an object the daemon holds (`/proc/self/fd/N`), and whether it was
/// unlinked (told by its link count, not by the " (deleted)" the name ends with, which a
/// file may be called); `None` for what is not a file: a pipe, a socket, an anonymous inode,
/// a memfd. With the object's device.
pub(super) fn name_of(fd: BorrowedFd<'_>) -> Sys<Option<(PathBuf, bool, u64)>> {
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let mut b = std::fs::read_link(link)
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?
        .into_os_string()
        .into_vec();
    let st = fsops::fstat(fd)?;
    let unlinked = st.st_nlink == 0;
    let deleted = unlinked && b.ends_with(b" (deleted)");
    if b.first() != Some(&b'/') || (b.starts_with(b"/memfd:") && deleted) {
        return Ok(None);
    }
    if deleted {
        b.truncate(b.len() - b" (deleted)".len());
    }
    Ok(Some((
        PathBuf::from(std::ffi::OsString::from_vec(b)),
        deleted,
        st.st_dev,
    )))
}

/// The path of an object the daemon holds, as the kernel names it (`/proc/self/fd/N`), not
/// checked. `None` for what is not a file on disk (a pipe, socket, anonymous inode, memfd).
pub fn path_of(fd: BorrowedFd<'_>) -> Sys<Option<PathBuf>> {
    Ok(name_of(fd)?.map(|(p, _, _)| p))
}

/// `/proc/self/fd/N` of a descriptor the daemon holds: a name for that very object in path
/// calls (`chmod`, `truncate`, `setxattr`) that have no descriptor form for `O_PATH`.
pub fn self_path(fd: BorrowedFd<'_>) -> CString {
    use std::os::fd::AsRawFd;
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
}
