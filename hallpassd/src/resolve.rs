//! Resolves a path argument the way the target process's kernel lookup would: relative to its
//! cwd or dirfd, symlinks followed (the last one only where the syscall follows it), and
//! `/proc/self`, `/proc/thread-self` and `/proc/PID/fd/N` taken for the target, not for the
//! daemon. The result is the absolute path the policy decides on.
//!
//! Components that do not exist yet are kept as written (after `.` and `..` are applied), as
//! the kernel would create them. Follows path_resolution(7).
//!
//! The daemon shares the target's root and mount namespace: the filter refuses `chroot`,
//! `pivot_root`, `setns` and the mount syscalls.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use crate::dircache::ProcDirs;
use crate::process::{descends_from, tgid_of};
use crate::sys::readlink::read_link_at;

/// `MAXSYMLINKS` (include/linux/namei.h): more links than this in one lookup is ELOOP.
const MAX_LINKS: u32 = 40;

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A file system path, absolute and resolved.
    Path(PathBuf),
    /// Not a file system object: a magic link to a pipe, socket, anonymous inode or memfd
    /// (`pipe:[1234]`). Reopening it writes nothing on disk.
    NotAFile(OsString),
}

/// The process whose view a path is resolved in.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The thread that made the syscall.
    pub tid: i32,
    /// Its thread group (process) id, the value of `/proc/self` for it; 0 until needed, then
    /// looked up in `/proc/TID/status`.
    pub tgid: i32,
    /// The session's command (its first process), whose descendants' descriptors the target
    /// may reopen through `/proc/PID/fd` (a subshell's `/proc/$$/fd/N`); 0 for none.
    pub session: i32,
}

impl Target {
    /// Whether process (or thread) `pid` is one the target may act on as natively: itself,
    /// its own thread group, or a process of the session (a descendant of its first
    /// process), which shares its Landlock domain.
    pub fn reaches(&self, pid: i32) -> bool {
        if pid == self.tid || pid == self.tgid() {
            return true;
        }
        let group = tgid_of(pid).unwrap_or(pid);
        group == self.tgid() || descends_from(group, self.session)
    }

    pub fn tgid(&self) -> i32 {
        if self.tgid != 0 {
            return self.tgid;
        }
        tgid_of(self.tid).unwrap_or(self.tid)
    }
}

/// The controlling terminal of thread `tid`, by the name `/dev/tty` stands for when it opens
/// it (`None`: it has none, and the open fails with `ENXIO`). A pseudo-terminal is
/// `/dev/pts/N`; another terminal is named from sysfs (`/dev/tty1`, `/dev/ttyS0`).
pub fn controlling_terminal(tid: i32) -> io::Result<Option<PathBuf>> {
    let Some((major, minor)) = controlling_terminal_device(tid)? else {
        return Ok(None);
    };
    let bad = || io::Error::from_raw_os_error(libc::ESRCH);
    // include/uapi/linux/major.h: UNIX98_PTY_SLAVE_MAJOR and the 7 after it.
    if (136..144).contains(&major) {
        return Ok(Some(PathBuf::from(format!(
            "/dev/pts/{}",
            (major - 136) * 256 + minor
        ))));
    }
    let link = std::fs::read_link(format!("/sys/dev/char/{major}:{minor}"))?;
    let name = link.file_name().ok_or_else(bad)?;
    Ok(Some(Path::new("/dev").join(name)))
}

/// The device number (major, minor) of thread `tid`'s controlling terminal, from the
/// `tty_nr` field of `/proc/TID/stat`; `None` if it has none.
pub fn controlling_terminal_device(tid: i32) -> io::Result<Option<(u32, u32)>> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat"))?;
    let bad = || io::Error::from_raw_os_error(libc::ESRCH);
    // The fields after the command name, which may hold spaces and parentheses.
    let after = &stat[stat.rfind(')').ok_or_else(bad)? + 2..];
    let nr: u64 = after
        .split(' ')
        .nth(4)
        .and_then(|v| v.parse().ok())
        .ok_or_else(bad)?;
    if nr == 0 {
        return Ok(None);
    }
    let (major, minor) = ((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xfff00));
    Ok(Some((major as u32, minor as u32)))
}

/// A device node outside `/dev` (in the project, say), by the name of the device it is
/// (`/dev/char/M:m`, `/dev/block/M:m`): a write of it writes the device, wherever its node.
/// `None` for anything else.
pub fn stray_device(p: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if p.starts_with("/dev") {
        return None;
    }
    let m = std::fs::symlink_metadata(p).ok()?;
    let kind = if m.file_type().is_char_device() {
        "char"
    } else if m.file_type().is_block_device() {
        "block"
    } else {
        return None;
    };
    let (major, minor) = (libc::major(m.rdev()), libc::minor(m.rdev()));
    Some(PathBuf::from(format!("/dev/{kind}/{major}:{minor}")))
}

/// Where a relative path starts: the target's cwd, or the directory behind a dirfd.
pub fn base_of(t: Target, dirfd: Option<i32>, procs: &mut ProcDirs) -> io::Result<Resolved> {
    if let (Some(fd), Some(cache)) = (dirfd, procs.cache.clone()) {
        if fd >= 0 {
            if let Some(p) = cache.path(t.tid, fd, procs) {
                return Ok(Resolved::Path(p));
            }
        }
    }
    object_of(t, dirfd, procs)
}

/// What `dirfd` itself names (the cwd for none or `AT_FDCWD`): read from `/proc` each time,
/// since it may be any kind of file.
pub fn object_of(t: Target, dirfd: Option<i32>, procs: &mut ProcDirs) -> io::Result<Resolved> {
    let mut name = [0u8; 16];
    let name = match dirfd {
        None | Some(crate::syscalls::AT_FDCWD) => "cwd",
        Some(fd) if fd < 0 => return Err(io::Error::from_raw_os_error(libc::EBADF)),
        Some(fd) => fd_name(&mut name, fd),
    };
    let target = procs
        .read_link(t.tid, name)
        .map_err(|e| match (dirfd, e.raw_os_error()) {
            // No such descriptor: what the kernel says of it.
            (Some(fd), Some(libc::ENOENT)) if fd != crate::syscalls::AT_FDCWD => {
                io::Error::from_raw_os_error(libc::EBADF)
            }
            _ => e,
        })?;
    Ok(classify(target))
}

/// `fd/N` in `buf`, for `fd` >= 0, with no allocation (and no formatting machinery, which
/// showed in the daemon's instruction count).
fn fd_name(buf: &mut [u8; 16], fd: i32) -> &str {
    let mut digits = [0u8; 10];
    let mut n = fd.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = 3 + digits.len() - i;
    buf[..3].copy_from_slice(b"fd/");
    buf[3..len].copy_from_slice(&digits[i..]);
    std::str::from_utf8(&buf[..len]).unwrap_or("fd")
}

/// The object an open descriptor of the target refers to.
pub fn fd_path(t: Target, fd: i32, procs: &mut ProcDirs) -> io::Result<Resolved> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    object_of(t, Some(fd), procs)
}

/// A magic link's target: a path, or one of the kernel's names for things that are not files.
fn classify(link: PathBuf) -> Resolved {
    let b = link.as_os_str().as_bytes();
    if b.first() != Some(&b'/') || b.starts_with(b"/memfd:") {
        Resolved::NotAFile(link.into_os_string())
    } else {
        Resolved::Path(link)
    }
}

/// Resolves `path` for `t`, relative paths against `base` (absolute and already resolved).
pub fn resolve(t: Target, base: &Path, path: &[u8], follow_last: bool) -> io::Result<Resolved> {
    resolve_with(t, base, path, follow_last, &read_link)
}

/// `std::fs::read_link` without its allocation when there is no link (most components).
fn read_link(p: &Path) -> io::Result<PathBuf> {
    read_link_at(None, p.as_os_str().as_bytes())
}

/// [`resolve`] with the symlink reader given, so the walk is testable on its own.
pub fn resolve_with(
    t: Target,
    base: &Path,
    path: &[u8],
    follow_last: bool,
    read_link: &dyn Fn(&Path) -> io::Result<PathBuf>,
) -> io::Result<Resolved> {
    if path.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    // A trailing slash makes the kernel follow the last component even where the syscall
    // itself would not (lookup_last in fs/namei.c).
    let follow_last = follow_last || path.last() == Some(&b'/');
    // Plain bytes rather than PathBuf and a queue of components: this runs for every write,
    // and allocating per component showed in the daemon's profile.
    let mut cur: Vec<u8> = Vec::with_capacity(256);
    if path[0] == b'/' {
        cur.push(b'/');
    } else {
        cur.extend_from_slice(base.as_os_str().as_bytes());
    }
    // What is left to walk is `rest[pos..]`; a symlink's target is put in front of it.
    let mut rest: Cow<[u8]> = Cow::Borrowed(path);
    let mut pos = 0;
    let mut links = 0;
    while let Some((start, end)) = next_component(&rest, pos) {
        pos = end;
        let comp = &rest[start..end];
        if comp == b"." {
            continue;
        }
        if comp == b".." {
            pop(&mut cur);
            continue;
        }
        if cur == b"/proc" {
            if comp == b"self" {
                push(&mut cur, t.tgid().to_string().as_bytes());
                continue;
            }
            if comp == b"thread-self" {
                push(&mut cur, format!("{}/task/{}", t.tgid(), t.tid).as_bytes());
                continue;
            }
        }
        push(&mut cur, comp);
        let last = next_component(&rest, pos).is_none();
        if last && !follow_last {
            break;
        }
        match read_link(Path::new(OsStr::from_bytes(&cur))) {
            Ok(target) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                pop(&mut cur);
                let tb = target.as_os_str().as_bytes();
                // The kernel's names for what is not a file all have a colon (`pipe:[1]`,
                // `anon_inode:[eventfd]`); /proc's ordinary relative links (`self/mounts`) do
                // not.
                if (cur == b"/proc" || cur.starts_with(b"/proc/"))
                    && (tb.starts_with(b"/memfd:")
                        || (tb.first() != Some(&b'/') && tb.contains(&b':')))
                {
                    // Only a whole path can name such an object; and only the writer's own
                    // is harmless to reopen. Another process's (the launcher's journal, a
                    // daemon's socket) is not the writer's to reach into: refused.
                    let own = |id: i32| {
                        let dir = format!("/proc/{id}/");
                        cur.starts_with(dir.as_bytes())
                    };
                    let in_session = || {
                        proc_pid(Path::new(OsStr::from_bytes(&cur)))
                            .is_some_and(|pid| descends_from(pid, t.session))
                    };
                    if !(own(t.tgid()) || own(t.tid) || in_session()) {
                        return Err(io::Error::from_raw_os_error(libc::EACCES));
                    }
                    return if last {
                        Ok(Resolved::NotAFile(target.into_os_string()))
                    } else {
                        Err(io::Error::from_raw_os_error(libc::ENOTDIR))
                    };
                }
                if tb.first() == Some(&b'/') {
                    cur.truncate(1);
                }
                let mut next = Vec::with_capacity(tb.len() + 1 + rest.len() - pos);
                next.extend_from_slice(tb);
                next.push(b'/');
                next.extend_from_slice(&rest[pos..]);
                rest = Cow::Owned(next);
                pos = 0;
            }
            // Exists and is not a symlink.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            // The rest cannot be looked up: keep it as written, as the kernel would create it
            // (or fail on it).
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                while let Some((start, end)) = next_component(&rest, pos) {
                    pos = end;
                    match &rest[start..end] {
                        b"." => {}
                        b".." => pop(&mut cur),
                        c => push(&mut cur, c),
                    }
                }
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Resolved::Path(PathBuf::from(OsString::from_vec(cur))))
}

/// The next component of `p` at or after `pos`, as a range: slashes skipped.
fn next_component(p: &[u8], pos: usize) -> Option<(usize, usize)> {
    let start = pos + p.get(pos..)?.iter().position(|&b| b != b'/')?;
    let end = p[start..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(p.len(), |i| start + i);
    Some((start, end))
}

/// `cur` without its last component; `/` stays `/`.
fn pop(cur: &mut Vec<u8>) {
    match cur.iter().rposition(|&b| b == b'/') {
        Some(0) | None => cur.truncate(1),
        Some(i) => cur.truncate(i),
    }
}

/// `cur` with `comp` appended as one or more components.
fn push(cur: &mut Vec<u8>, comp: &[u8]) {
    if cur.last() != Some(&b'/') {
        cur.push(b'/');
    }
    cur.extend_from_slice(comp);
}

/// Makes a user-given path (a flag value) absolute and resolves what exists of it, so it
/// compares with the paths [`resolve`] returns. Paths that don't exist yet are accepted.
pub fn canonicalize_lenient(path: &Path) -> io::Result<PathBuf> {
    let me = Target {
        tid: std::process::id() as i32,
        tgid: std::process::id() as i32,
        session: 0,
    };
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    match resolve(me, Path::new("/"), abs.as_os_str().as_bytes(), true)? {
        Resolved::Path(p) => Ok(p),
        Resolved::NotAFile(n) => Err(io::Error::other(format!(
            "{} is not a file",
            Path::new(&n).display()
        ))),
    }
}

/// The pid a path under `/proc/PID/` belongs to, if any.
pub fn proc_pid(path: &Path) -> Option<i32> {
    let mut c = path.components();
    if c.next() != Some(Component::RootDir)
        || c.next() != Some(Component::Normal(OsStr::new("proc")))
    {
        return None;
    }
    match c.next() {
        Some(Component::Normal(n)) => n.to_str()?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
