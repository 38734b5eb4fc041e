//! The kernel's name for an object the daemon holds (`/proc/self/fd/N`), checked before the
//! policy decides on it: looked up again from the root without symlinks, it must lead to the
//! very object held.

use super::*;

/// The path of an object the daemon holds, for the policy, checked: looked up afresh from
/// the root without following any symlink, it must lead to this very object on this very
/// mount. A name the kernel gives can lie: for an object of another mount namespace (reached
/// through `/proc/PID/root`, or a descriptor passed in from one) it is relative to that
/// namespace. `EACCES` then. An unlinked object is checked by its directory's mount.
/// `None` for what is not a file on disk (a pipe, socket, anonymous inode); else the path
/// and the object's device.
pub(super) fn checked(fd: BorrowedFd<'_>, roots: &Roots) -> Sys<Option<(PathBuf, u64)>> {
    checked_as(fd, &fsops::held_stat(fd)?, roots)
}

/// [`checked`], for an object whose [`HeldStat`] was read just now.
pub(super) fn checked_as(
    fd: BorrowedFd<'_>,
    st: &HeldStat,
    roots: &Roots,
) -> Sys<Option<(PathBuf, u64)>> {
    // Once more if it fails: an honest rename of a parent between reading the name and
    // looking it up again (or an unlink: its link count is read again).
    match check_path(fd, st, roots) {
        Err(Errno::EACCES) => check_path(fd, &fsops::held_stat(fd)?, roots),
        r => r,
    }
}

fn check_path(fd: BorrowedFd<'_>, held: &HeldStat, roots: &Roots) -> Sys<Option<(PathBuf, u64)>> {
    use std::os::unix::ffi::OsStrExt as _;
    let Some((path, deleted)) = name_of(fd, held)? else {
        return Ok(None);
    };
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
        found.0 == held.id.0
    } else {
        found == held.id
    };
    if !same {
        return Err(Errno::EACCES);
    }
    Ok(Some((path, held.dev())))
}

/// Whether the object held by `fd` (its [`HeldStat`] read just now) still has `path`, a
/// decision path checked for this very object before ([`crate::dircache`]): a process outside
/// the session, whose renames are not seen, may have moved it away since.
///
/// Where mount ids are never reused (Linux 6.8), the kernel's name of the object tells: the
/// identity kept was checked on this very mount, and while that mount is attached in this
/// namespace (`statmount`), the kernel names an object by where it now is (two syscalls,
/// against three and a lookup of every component). A mount hidden since by another one
/// mounted over it still holds the object where it was decided; an unlinked object, or one
/// on a mount detached since, is checked again. Elsewhere, `path` is looked
/// up afresh from the root without following any symlink, and must lead to the object.
pub fn still_named(
    fd: BorrowedFd<'_>,
    path: &std::path::Path,
    st: &HeldStat,
    roots: &Roots,
) -> bool {
    if st.unique_mount {
        // A name the kernel marks " (deleted)" proves nothing, whatever the link count: the
        // object may have lost the name it was decided by and kept another elsewhere (a
        // hard link), and a kept path may end so itself.
        let named = kernel_name(fd)
            .is_ok_and(|n| !n.as_os_str().as_bytes().ends_with(b" (deleted)") && n == path);
        // Only on a mount attached in this namespace is the kernel's name a path from `/`.
        // Asked after the name is read: a mount once detached is never attached again, so
        // attached now means attached when the name was made.
        if named && fsops::mount_attached(st.id.0) {
            return true;
        }
    }
    leads_to(path, st.id, roots)
}

/// Whether `path`, looked up afresh from the root without following any symlink, still
/// leads to the object whose identity is `id`.
fn leads_to(path: &std::path::Path, id: fsops::Identity, roots: &Roots) -> bool {
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
/// unlinked (told by its link count in `st`, not by the " (deleted)" the name ends with,
/// which a file may be called); `None` for what is not a file: a pipe, a socket, an
/// anonymous inode, a memfd.
fn name_of(fd: BorrowedFd<'_>, st: &HeldStat) -> Sys<Option<(PathBuf, bool)>> {
    let name = kernel_name(fd)?;
    let b = name.as_os_str().as_bytes();
    let deleted = st.nlink == 0 && b.ends_with(b" (deleted)");
    if b.first() != Some(&b'/') || (b.starts_with(b"/memfd:") && deleted) {
        return Ok(None);
    }
    let b = if deleted {
        &b[..b.len() - b" (deleted)".len()]
    } else {
        b
    };
    Ok(Some((
        PathBuf::from(std::ffi::OsStr::from_bytes(b)),
        deleted,
    )))
}

/// The kernel's name for what descriptor `fd` of the daemon holds.
fn kernel_name(fd: BorrowedFd<'_>) -> Sys<PathBuf> {
    crate::sys::readlink::read_link_at(Some(own_fds()?), fd.as_raw_fd().to_string().as_bytes())
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
}

/// The daemon's `/proc/self/fd`, opened once: a name is read from it without looking up
/// `/proc` and `self` each time.
fn own_fds() -> Sys<BorrowedFd<'static>> {
    static FDS: std::sync::OnceLock<OwnedFd> = std::sync::OnceLock::new();
    if let Some(fds) = FDS.get() {
        return Ok(fds.as_fd());
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let fds = fsops::openat(None, c"/proc/self/fd", flags, 0)?;
    Ok(FDS.get_or_init(|| fds).as_fd())
}

/// The path of an object the daemon holds, as the kernel names it (`/proc/self/fd/N`), not
/// checked. `None` for what is not a file on disk (a pipe, socket, anonymous inode, memfd).
pub fn path_of(fd: BorrowedFd<'_>) -> Sys<Option<PathBuf>> {
    Ok(name_of(fd, &fsops::held_stat(fd)?)?.map(|(p, _)| p))
}

/// `/proc/self/fd/N` of a descriptor the daemon holds: a name for that very object in path
/// calls (`chmod`, `truncate`, `setxattr`) that have no descriptor form for `O_PATH`.
pub fn self_path(fd: BorrowedFd<'_>) -> CString {
    use std::os::fd::AsRawFd;
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
}
