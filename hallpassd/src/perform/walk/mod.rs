//! Path lookup through descriptors, as the target's kernel lookup would do it, except that
//! every step is a descriptor the daemon holds: what is decided on is what was opened, and a
//! symlink or directory swapped afterwards changes nothing.
//!
//! Each component is opened `O_PATH|O_NOFOLLOW` relative to the last. Symlinks are read and
//! walked in place of the component (at most 40, path_resolution(7)). `/proc/self` and
//! `/proc/thread-self` are taken for the target; `/proc` magic links (`/proc/PID/fd/N`,
//! `cwd`, `root`) are followed by the kernel, which gives the very object the target's
//! descriptor names. The root is the daemon's `/`, which is the target's: the filter refuses
//! `chroot`, `pivot_root`, `setns`, mounts and new mount namespaces.
//!
//! The daemon looks up and acts with its own rights, which are the target's but for one
//! thing: the target runs in the session's Landlock domain, which keeps it from reaching
//! into processes outside the session (their memory, environment, descriptors, cwd and
//! root: everything behind a ptrace check). So nothing under `/proc/PID` of a process
//! outside the session is the target's to reach through the daemon: not its magic links
//! (never followed), not its files (never opened, nor acted on). Only its `/proc/PID`
//! directory itself is, as natively. A proc file system the daemon cannot place (one
//! mounted elsewhere than `/proc`) is refused whole. `EACCES`, as the kernel says.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use nix::errno::Errno;

use crate::sys::fsops::{self, HeldStat, Sys};

mod names;
mod roots;
mod who;

use names::{checked, checked_as};
pub use names::{path_of, self_path, still_named};
use roots::Place;
pub use roots::Roots;
pub use who::Who;

/// `MAXSYMLINKS` (include/linux/namei.h).
const MAX_LINKS: u32 = 40;
/// `NAME_MAX`.
const NAME_MAX: usize = 255;

// include/uapi/linux/openat2.h
pub const RESOLVE_NO_XDEV: u64 = 0x01;
pub const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
pub const RESOLVE_NO_SYMLINKS: u64 = 0x04;
pub const RESOLVE_BENEATH: u64 = 0x08;
pub const RESOLVE_IN_ROOT: u64 = 0x10;

/// A directory held, and the name of the last component in it as written (trailing slashes
/// kept, so the kernel applies its own rules for them; `.`, `..` and `/` possible).
pub struct Entry {
    pub dir: OwnedFd,
    pub name: CString,
}

impl Entry {
    /// The name without trailing slashes.
    pub fn bare(&self) -> &[u8] {
        let b = self.name.as_bytes();
        let end = b
            .iter()
            .rposition(|&c| c != b'/')
            .map_or(b.len().min(1), |i| i + 1);
        &b[..end]
    }

    /// Whether the name is one the lookup would not create or follow: `.`, `..`, `/`, or
    /// one with trailing slashes.
    pub fn special(&self) -> bool {
        let b = self.name.as_bytes();
        b == b"." || b == b".." || b.ends_with(b"/")
    }
}

/// How a lookup may go, from `openat2`'s `resolve` (0 for the other syscalls).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rules {
    pub resolve: u64,
}

/// A lookup for one target.
pub struct Walker<'r> {
    who: Who,
    roots: &'r Roots,
    /// Symlinks followed so far in this lookup.
    links: u32,
    rules: Rules,
    /// With `RESOLVE_BENEATH` or `IN_ROOT`: how deep below the start the walk is.
    depth: i64,
    start_dev: u64,
    /// With `RESOLVE_IN_ROOT`: the start, which absolute paths and `..` cannot leave.
    in_root: Option<OwnedFd>,
}

/// Where a relative path starts.
pub enum Base {
    Fd(i32),
}

fn cstr(b: &[u8]) -> Sys<CString> {
    CString::new(b).map_err(|_| Errno::EINVAL)
}

impl<'r> Walker<'r> {
    pub fn new(who: Who, rules: Rules, roots: &'r Roots) -> Walker<'r> {
        Walker {
            who,
            roots,
            links: 0,
            rules,
            depth: 0,
            start_dev: 0,
            in_root: None,
        }
    }

    pub fn roots(&self) -> &'r Roots {
        self.roots
    }

    fn is_proc_root(&self, st: &libc::stat) -> bool {
        st.st_dev == self.roots.proc_dev && st.st_ino == self.roots.proc_ino
    }

    /// The directory a relative path starts from: the target's cwd or the object behind one
    /// of its descriptors, opened through `/proc` (the kernel follows the magic link to the
    /// object itself). A descriptor that is not open is `EBADF`.
    pub fn base(&self, base: &Base) -> Sys<OwnedFd> {
        let link = match base {
            Base::Fd(fd) if *fd == libc::AT_FDCWD => format!("/proc/{}/cwd", self.who.tid),
            Base::Fd(fd) if *fd < 0 => return Err(Errno::EBADF),
            Base::Fd(fd) => format!("/proc/{}/fd/{fd}", self.who.tid),
        };
        match fsops::open_path(None, &cstr(link.as_bytes())?, false) {
            // A process that changed its user is not dumpable: its `/proc/PID/fd` is root's
            // and closed to the user the daemon acts as, while the process itself reaches
            // its own descriptors. So does the daemon, with the right to trace it keeps.
            Err(Errno::EACCES) if super::creds::in_guise() => {
                let Base::Fd(fd) = *base;
                if fd == libc::AT_FDCWD {
                    return Err(Errno::EACCES);
                }
                let pidfd = fsops::pidfd_open_thread(self.who.tid)?;
                fsops::pidfd_getfd(pidfd.as_fd(), fd)
            }
            Err(Errno::ENOENT) => Err(Errno::EBADF),
            r => r,
        }
    }

    /// Walks `path` from `start` up to its last component, which is returned unresolved
    /// with the directory it is in. For syscalls that act on a directory entry (`mkdir`,
    /// `unlink`, `rename`, creating opens...).
    pub fn parent(&mut self, start: OwnedFd, path: &[u8]) -> Sys<Entry> {
        self.depth = 0;
        self.links = 0;
        if self.rules.resolve == 0 {
            if let Some(e) = self.parent_fast(&start, path)? {
                return Ok(e);
            }
        }
        if self.rules.resolve & RESOLVE_NO_XDEV != 0 {
            self.start_dev = fsops::fstat(start.as_fd())?.st_dev;
        }
        self.in_root = if self.rules.resolve & RESOLVE_IN_ROOT != 0 {
            Some(dup(&start)?)
        } else {
            None
        };
        self.walk_parent(start, path)
    }

    /// The common case in one syscall: a path whose directories hold no symlink at all is
    /// opened by the kernel with symlinks refused, which is exactly the walk below. `None`
    /// when there is one (ELOOP): then the walk does it step by step.
    fn parent_fast(&mut self, start: &OwnedFd, path: &[u8]) -> Sys<Option<Entry>> {
        // All slashes, or one component: nothing to open first.
        let Some(end) = path.iter().rposition(|&c| c != b'/') else {
            return Ok(None);
        };
        let Some(i) = path[..=end].iter().rposition(|&c| c == b'/') else {
            return Ok(None);
        };
        let (dir, name, last) = (&path[..=i], &path[i + 1..], &path[i + 1..=end]);
        if last.len() > NAME_MAX || last == b"." || last == b".." {
            return Ok(None);
        }
        let how = fsops::OpenHow {
            flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
            mode: 0,
            resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        match fsops::openat2(start.as_raw_fd(), &cstr(dir)?, &how) {
            Ok(d) => Ok(Some(Entry {
                dir: d,
                name: cstr(name)?,
            })),
            Err(Errno::ELOOP) | Err(Errno::EXDEV) | Err(Errno::EAGAIN) => Ok(None),
            // Perhaps the process's own `/proc/PID/fd` (see [`Self::own_fd`]).
            Err(Errno::EACCES) if super::creds::in_guise() => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn walk_parent(&mut self, start: OwnedFd, path: &[u8]) -> Sys<Entry> {
        let limit = self.rules.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT) != 0;
        if path.is_empty() {
            return Err(Errno::ENOENT);
        }
        let mut cur = start;
        let mut rest: Vec<u8> = path.to_vec();
        loop {
            if rest.first() == Some(&b'/') {
                if self.rules.resolve & RESOLVE_BENEATH != 0 {
                    return Err(Errno::EXDEV);
                }
                cur = match &self.in_root {
                    Some(r) => dup(r)?,
                    None => self.roots.root()?,
                };
                self.depth = 0;
                let n = rest.iter().position(|&c| c != b'/').unwrap_or(rest.len());
                rest.drain(..n);
                if rest.is_empty() {
                    return Ok(Entry {
                        dir: cur,
                        name: c"/".into(),
                    });
                }
            }
            let end = rest.iter().position(|&c| c == b'/').unwrap_or(rest.len());
            let after = rest[end..].iter().position(|&c| c != b'/');
            let comp: Vec<u8> = rest[..end].to_vec();
            if after.is_none() {
                if comp.len() > NAME_MAX {
                    return Err(Errno::ENAMETOOLONG);
                }
                if comp == b".." && limit && self.depth <= 0 {
                    if self.in_root.is_none() {
                        return Err(Errno::EXDEV);
                    }
                    return Ok(Entry {
                        dir: cur,
                        name: c".".into(),
                    });
                }
                return Ok(Entry {
                    dir: cur,
                    name: cstr(&rest)?,
                });
            }
            rest.drain(..end + after.unwrap_or(0));
            cur = self.step(cur, &comp, &mut rest)?;
        }
    }

    /// One intermediate component: the directory it leads to (a symlink's target is put in
    /// front of `rest` instead, and the walk goes on from `cur`).
    fn step(&mut self, cur: OwnedFd, comp: &[u8], rest: &mut Vec<u8>) -> Sys<OwnedFd> {
        if comp == b"." {
            return Ok(cur);
        }
        if comp.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let limit = self.rules.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT) != 0;
        if comp == b".." {
            if limit && self.depth <= 0 {
                return match &self.in_root {
                    // Above the root is the root.
                    Some(r) => dup(r),
                    None => Err(Errno::EXDEV),
                };
            }
            self.depth -= 1;
            let up = fsops::open_path(Some(cur.as_fd()), c"..", true)?;
            self.check_xdev(&up)?;
            return Ok(up);
        }
        let name = cstr(comp)?;
        let fd = match fsops::open_path(Some(cur.as_fd()), &name, true) {
            Err(Errno::EACCES) => {
                let obj = self.own_fd(&cur, comp)?.ok_or(Errno::EACCES)?;
                let st = fsops::fstat(obj.as_fd())?;
                return self.enter_dir(obj, &st);
            }
            r => r?,
        };
        let st = fsops::fstat(fd.as_fd())?;
        if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            if st.st_dev == self.roots.proc_dev {
                let in_proc_root = self.is_proc_root(&fsops::fstat(cur.as_fd())?);
                if in_proc_root && (comp == b"self" || comp == b"thread-self") {
                    // The target's own entry, not the daemon's.
                    let own = self.own_proc(comp);
                    self.link(own.as_bytes(), rest)?;
                    return Ok(cur);
                }
                if !in_proc_root {
                    // A magic link: the kernel follows it to the object itself.
                    if let Some(obj) = self.magic(&cur, &name)? {
                        let st = fsops::fstat(obj.as_fd())?;
                        return self.enter_dir(obj, &st);
                    }
                }
            }
            if self.roots.other_proc(fd.as_fd(), st.st_dev)? {
                // A link of a proc file system the daemon cannot place: perhaps another
                // process's magic link, which it would follow with its own rights.
                return Err(Errno::EACCES);
            }
            self.may_follow(&cur, &st)?;
            let text = fsops::readlinkat(fd.as_fd(), c"")?;
            self.link(&text, rest)?;
            return Ok(cur);
        }
        self.enter_dir(fd, &st)
    }

    /// The kernel's `fs.protected_symlinks` rule, which following a symlink by its text
    /// would skip: in a sticky, world-writable directory (`/tmp`), a symlink is followed
    /// only if its owner is the follower or the directory's owner; else `EACCES`.
    fn may_follow(&self, dir: &OwnedFd, link: &libc::stat) -> Sys<()> {
        if !self.roots.protected_symlinks {
            return Ok(());
        }
        let d = fsops::fstat(dir.as_fd())?;
        let sticky_world =
            d.st_mode & (libc::S_ISVTX | libc::S_IWOTH) == libc::S_ISVTX | libc::S_IWOTH;
        // The daemon follows as the process's user (strict mode checks they are the same).
        let me = nix::unistd::geteuid().as_raw();
        if sticky_world && link.st_uid != me && link.st_uid != d.st_uid {
            return Err(Errno::EACCES);
        }
        Ok(())
    }

    /// What `/proc/self` or `/proc/thread-self` is for the target.
    fn own_proc(&self, comp: &[u8]) -> String {
        if comp == b"self" {
            format!("{}", self.who.tgid())
        } else {
            format!("{}/task/{}", self.who.tgid(), self.who.tid)
        }
    }

    /// Follows the magic link `name` in the `/proc` directory `dir`: only the writer's own
    /// (`fd/N`, `cwd`, `root`, `exe`, `map_files/...`) or those of a process of its session.
    /// Another process's (the user's shell, the launcher, the daemon, a root daemon's) the
    /// kernel would follow for the daemon, not for the writer: whatever it leads to, a file,
    /// a directory, a pipe or socket, is not the writer's to reach. Decided before the link
    /// is followed, on the checked name of its directory. `None` for a plain symlink of
    /// `/proc`, outside any process's directory: followed by its text, as any other.
    fn magic(&mut self, dir: &OwnedFd, name: &CString) -> Sys<Option<OwnedFd>> {
        if self.rules.resolve & RESOLVE_NO_SYMLINKS != 0 {
            return Err(Errno::ELOOP);
        }
        let (path, dev) = checked(dir.as_fd(), self.roots)?.ok_or(Errno::EACCES)?;
        match self.roots.place(dir.as_fd(), &path, dev)? {
            Place::Pid { pid, .. } if self.reaches_within(pid) => {}
            Place::Proc => return Ok(None),
            Place::Pid { .. } | Place::Elsewhere | Place::Unknown => return Err(Errno::EACCES),
        }
        // As the kernel, which refuses a magic link once it may follow it.
        if self.rules.resolve & RESOLVE_NO_MAGICLINKS != 0 {
            return Err(Errno::ELOOP);
        }
        self.count_link()?;
        fsops::open_path(Some(dir.as_fd()), name, false).map(Some)
    }

    /// Descriptor `name` of the process itself, looked up in `dir` and refused (`EACCES`):
    /// in the guise of a process that is not dumpable (it changed its user), the daemon may
    /// not search the process's `/proc/PID/fd`, which is root's, while the process reaches
    /// its own descriptors there whoever owns it (`proc_fd_permission`). Taken with the
    /// right to trace the daemon keeps, as the magic link would give it. `None` for any
    /// other lookup: the refusal stands.
    fn own_fd(&mut self, dir: &OwnedFd, name: &[u8]) -> Sys<Option<OwnedFd>> {
        let Some(n) = std::str::from_utf8(name)
            .ok()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            return Ok(None);
        };
        if !super::creds::in_guise() {
            return Ok(None);
        }
        let Some((path, _)) = checked(dir.as_fd(), self.roots)? else {
            return Ok(None);
        };
        let Ok(rest) = path.strip_prefix(&self.roots.proc_path) else {
            return Ok(None);
        };
        let (tgid, tid) = (self.who.tgid(), self.who.tid);
        // The process's table, or the thread's own (which may have left it: CLONE_FILES).
        let pidfd = if rest == std::path::Path::new(&format!("{tgid}/fd")) {
            fsops::pidfd_open(tgid)?
        } else if rest == std::path::Path::new(&format!("{tgid}/task/{tid}/fd")) {
            fsops::pidfd_open_thread(tid)?
        } else {
            return Ok(None);
        };
        if self.rules.resolve & (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) != 0 {
            return Err(Errno::ELOOP);
        }
        self.count_link()?;
        match fsops::pidfd_getfd(pidfd.as_fd(), n) {
            // No such descriptor: no such entry.
            Err(Errno::EBADF) => Err(Errno::ENOENT),
            r => r.map(Some),
        }
    }

    /// Whether what is under `/proc/PID` (its entries, and its magic links `fd/N`, `cwd`,
    /// `root`, `exe`) is the target's to reach: a process of its session. In the guise of a
    /// process with other credentials the daemon keeps the right to trace (to read the
    /// process), which the kernel would grant on any other process of the session, even one
    /// the process could not trace natively (a root one, for a process that dropped to
    /// another user or dropped its capabilities): only the process's own, then.
    fn reaches_within(&self, pid: i32) -> bool {
        self.who.reaches(pid)
            && (!super::creds::in_guise()
                || pid == self.who.tgid()
                || pid == self.who.tid
                || crate::process::tgid_of(pid) == Some(self.who.tgid()))
    }

    /// Whether the target may reach what `path` (checked, device `dev`) names: `under` it
    /// (an entry in a directory) or the object itself. `EACCES` for what is under
    /// `/proc/PID` of a process outside the session, or on a proc file system the daemon
    /// cannot place.
    fn may_reach(
        &self,
        fd: BorrowedFd<'_>,
        path: &std::path::Path,
        dev: u64,
        under: bool,
    ) -> Sys<Place> {
        let place = self.roots.place(fd, path, dev)?;
        match place {
            Place::Elsewhere | Place::Proc => Ok(place),
            // The directory itself the target may open, as natively; not what is in it.
            Place::Pid { top: true, .. } if !under => Ok(place),
            Place::Pid { pid, .. } if self.reaches_within(pid) => Ok(place),
            Place::Pid { .. } | Place::Unknown => Err(Errno::EACCES),
        }
    }

    /// The decision path of an object the walk reached (checked, as [`checked_path_of`]),
    /// if the target may reach it; `None` for what is not a file on disk.
    pub fn held_path(&self, fd: BorrowedFd<'_>) -> Sys<Option<PathBuf>> {
        Ok(self.held_path_lasting(fd)?.map(|(p, _)| p))
    }

    /// [`Self::held_path`], and whether the answer lasts as long as the object keeps its
    /// name: not for an object of a proc file system, whose reach changes with processes.
    pub fn held_path_lasting(&self, fd: BorrowedFd<'_>) -> Sys<Option<(PathBuf, bool)>> {
        self.held_path_lasting_as(fd, &fsops::held_stat(fd)?)
    }

    /// [`Self::held_path_lasting`] of an object whose [`HeldStat`] was read just now.
    pub fn held_path_lasting_as(
        &self,
        fd: BorrowedFd<'_>,
        st: &HeldStat,
    ) -> Sys<Option<(PathBuf, bool)>> {
        let Some((path, dev)) = checked_as(fd, st, self.roots)? else {
            return Ok(None);
        };
        let place = self.may_reach(fd, &path, dev, false)?;
        Ok(Some((path, matches!(place, Place::Elsewhere))))
    }

    /// The decision path of `name` in directory `dir`, the directory's checked, if the
    /// target may reach it.
    pub fn entry_path(&self, e: &Entry) -> Sys<Option<PathBuf>> {
        let Some((mut p, dev)) = checked(e.dir.as_fd(), self.roots)? else {
            return Ok(None);
        };
        let bare = e.bare();
        // `.` and `..` name the directory itself or its parent, not something in it.
        let under = !matches!(bare, b"." | b".." | b"/");
        self.may_reach(e.dir.as_fd(), &p, dev, under)?;
        match bare {
            b"/" => return Ok(Some(PathBuf::from("/"))),
            b"." => {}
            b".." => {
                p.pop();
            }
            _ => p.push(std::ffi::OsStr::from_bytes(bare)),
        }
        Ok(Some(p))
    }

    fn enter_dir(&mut self, fd: OwnedFd, st: &libc::stat) -> Sys<OwnedFd> {
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(Errno::ENOTDIR);
        }
        self.check_xdev(&fd)?;
        // Search permission on it is checked by the kernel when the next component is
        // looked up relative to it, as on the target's own walk.
        self.depth += 1;
        Ok(fd)
    }

    fn check_xdev(&self, fd: &OwnedFd) -> Sys<()> {
        if self.rules.resolve & RESOLVE_NO_XDEV != 0
            && fsops::fstat(fd.as_fd())?.st_dev != self.start_dev
        {
            return Err(Errno::EXDEV);
        }
        Ok(())
    }

    fn count_link(&mut self) -> Sys<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Errno::ELOOP);
        }
        Ok(())
    }

    /// Puts a symlink's target in front of what is left to walk.
    fn link(&mut self, text: &[u8], rest: &mut Vec<u8>) -> Sys<()> {
        if self.rules.resolve & RESOLVE_NO_SYMLINKS != 0 {
            return Err(Errno::ELOOP);
        }
        self.count_link()?;
        if text.is_empty() {
            return Err(Errno::ENOENT);
        }
        let mut v = Vec::with_capacity(text.len() + 1 + rest.len());
        v.extend_from_slice(text);
        if !rest.is_empty() {
            v.push(b'/');
            v.extend_from_slice(rest);
        }
        *rest = v;
        Ok(())
    }

    /// Resolves `path` from `start` to the object it names, the last component followed if
    /// `follow` (or if written with a trailing slash). An `O_PATH` descriptor of it.
    pub fn object(&mut self, start: OwnedFd, path: &[u8], follow: bool) -> Sys<OwnedFd> {
        let mut e = self.parent(start, path)?;
        loop {
            match self.last(e, follow)? {
                Last::Object(fd) => return Ok(fd),
                Last::Link(next) => e = next,
            }
        }
    }

    /// The last component of `e`: the object, or (a symlink followed) the next entry to look
    /// at.
    pub fn last(&mut self, e: Entry, follow: bool) -> Sys<Last> {
        let slash = e.name.as_bytes().ends_with(b"/") && e.name.as_bytes() != b"/";
        let bare = e.bare().to_vec();
        if bare == b"/" {
            return Ok(Last::Object(dup(&e.dir)?));
        }
        if bare == b"." || bare == b".." {
            let mut rest = Vec::new();
            let d = self.step(e.dir, &bare, &mut rest)?;
            return Ok(Last::Object(d));
        }
        let name = cstr(&bare)?;
        let fd = match fsops::open_path(Some(e.dir.as_fd()), &name, true) {
            Err(Errno::EACCES) if follow || slash => {
                let obj = self.own_fd(&e.dir, &bare)?.ok_or(Errno::EACCES)?;
                if slash && !is_dir(&obj)? {
                    return Err(Errno::ENOTDIR);
                }
                return Ok(Last::Object(obj));
            }
            r => r?,
        };
        let st = fsops::fstat(fd.as_fd())?;
        let is_link = st.st_mode & libc::S_IFMT == libc::S_IFLNK;
        if is_link && (follow || slash) {
            let in_proc_root = st.st_dev == self.roots.proc_dev
                && self.is_proc_root(&fsops::fstat(e.dir.as_fd())?);
            if in_proc_root && (bare == b"self" || bare == b"thread-self") {
                let mut rest = self.own_proc(&bare).into_bytes();
                if slash {
                    rest.push(b'/');
                }
                return self.relink(e.dir, rest);
            }
            if st.st_dev == self.roots.proc_dev && !in_proc_root {
                if let Some(obj) = self.magic(&e.dir, &name)? {
                    if slash && !is_dir(&obj)? {
                        return Err(Errno::ENOTDIR);
                    }
                    return Ok(Last::Object(obj));
                }
            }
            if self.roots.other_proc(fd.as_fd(), st.st_dev)? {
                return Err(Errno::EACCES);
            }
            self.may_follow(&e.dir, &st)?;
            let mut text = fsops::readlinkat(fd.as_fd(), c"")?;
            if self.rules.resolve & RESOLVE_NO_SYMLINKS != 0 {
                return Err(Errno::ELOOP);
            }
            self.count_link()?;
            if text.is_empty() {
                return Err(Errno::ENOENT);
            }
            if slash {
                text.push(b'/');
            }
            return self.relink(e.dir, text);
        }
        if slash && !is_link && !is_dir(&fd)? {
            return Err(Errno::ENOTDIR);
        }
        Ok(Last::Object(fd))
    }

    /// The entry a followed symlink leads to, walked from the directory it is in.
    fn relink(&mut self, dir: OwnedFd, text: Vec<u8>) -> Sys<Last> {
        Ok(Last::Link(self.walk_parent(dir, &text)?))
    }
}

/// What the last component turned out to be.
pub enum Last {
    Object(OwnedFd),
    Link(Entry),
}

fn is_dir(fd: &OwnedFd) -> Sys<bool> {
    Ok(fsops::fstat(fd.as_fd())?.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

pub fn dup(fd: &OwnedFd) -> Sys<OwnedFd> {
    fd.try_clone()
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EMFILE)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(p: &str) -> OwnedFd {
        fsops::open_path(None, &CString::new(p).unwrap(), true).unwrap()
    }

    fn place(roots: &Roots, p: &str) -> Place {
        let fd = open(p);
        let (path, dev) = checked(fd.as_fd(), roots).unwrap().unwrap();
        roots.place(fd.as_fd(), &path, dev).unwrap()
    }

    /// This process, the session's first: its own entries and its children's it reaches,
    /// pid 1's (outside the session) it does not.
    fn me() -> Who {
        let pid = std::process::id() as i32;
        Who::new(pid, pid)
    }

    #[test]
    fn objects_are_placed() {
        let roots = Roots::new().unwrap();
        let me = std::process::id();
        assert_eq!(place(&roots, "/"), Place::Elsewhere);
        assert_eq!(place(&roots, "/proc"), Place::Proc);
        assert_eq!(place(&roots, "/proc/sys/kernel"), Place::Proc);
        let pid = me as i32;
        assert_eq!(
            place(&roots, &format!("/proc/{me}")),
            Place::Pid { pid, top: true }
        );
        assert_eq!(
            place(&roots, &format!("/proc/{me}/task/{me}/fd")),
            Place::Pid { pid, top: false }
        );
    }

    #[test]
    fn nothing_under_proc_pid_of_a_process_outside_the_session() {
        let roots = Roots::new().unwrap();
        let who = me();
        let w = Walker::new(who.clone(), Rules::default(), &roots);
        let entry = |dir: &str, name: &str| Entry {
            dir: open(dir),
            name: CString::new(name).unwrap(),
        };
        // Pid 1 is no descendant of this process.
        assert_eq!(
            w.entry_path(&entry("/proc/1", "environ")).unwrap_err(),
            Errno::EACCES
        );
        assert_eq!(
            w.entry_path(&entry("/proc/1/task", "1")).unwrap_err(),
            Errno::EACCES
        );
        // Its directory itself is another matter, as natively.
        assert!(w.entry_path(&entry("/proc/1", ".")).is_ok());
        assert!(w.held_path(open("/proc/1").as_fd()).is_ok());
        assert_eq!(
            w.held_path(open("/proc/1/environ").as_fd()).unwrap_err(),
            Errno::EACCES
        );
        // Our own, and a child's.
        let me = std::process::id();
        assert!(w
            .entry_path(&entry(&format!("/proc/{me}"), "environ"))
            .is_ok());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let c = child.id();
        assert!(w
            .entry_path(&entry(&format!("/proc/{c}"), "environ"))
            .is_ok());
        assert!(w.held_path(open(&format!("/proc/{c}/mem")).as_fd()).is_ok());
        // Magic links: followed for us and our child, never for pid 1.
        let mut w = Walker::new(who, Rules::default(), &roots);
        assert!(w
            .object(roots.root().unwrap(), b"/proc/self/cwd", true)
            .is_ok());
        let own = format!("/proc/{c}/cwd/.");
        assert!(w
            .object(roots.root().unwrap(), own.as_bytes(), true)
            .is_ok());
        for p in ["/proc/1/cwd", "/proc/1/root/etc", "/proc/1/task/1/fd/0"] {
            assert_eq!(
                w.object(roots.root().unwrap(), p.as_bytes(), true)
                    .unwrap_err(),
                Errno::EACCES,
                "{p}"
            );
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
