//! The cache of directory descriptors: the path of the directory that descriptor N
//! of thread T names, kept between notifications. `tar -C OUT` makes 20,000 `openat(4,
//! "./d/f")`, `rm -r` 20,000 `unlinkat(5, "f")`: reading `/proc/T/fd/N` for each is most of
//! what resolving such a path costs.
//!
//! An entry holds a copy of the open file itself (`pidfd_getfd`), and a hit is checked with
//! `kcmp(KCMP_FILE)`: descriptor N of T is still that very open file, whatever T closed,
//! reopened, duplicated or exec'd meanwhile, and whoever has thread id T by now. The copy
//! is of a directory only, is never used to act, and is let go once the session has been
//! idle for a second ([`DirCache::evict_idle`]), so the daemon does not keep a file system
//! busy for long.
//!
//! What the open file cannot tell is its path changing: a rename of the directory or of one
//! above it. Every rename a process of the session makes is a notification (`rename`,
//! `renameat`, `renameat2`): the cache is emptied when one is received
//! ([`DirCache::moving`]), and stays empty until the renaming thread is heard of again or is
//! gone, which proves the rename done (its path could otherwise be read and kept before the
//! rename happens). A rename made by a process outside the session is not seen: a write
//! relative to a descriptor of a directory moved so is decided on its old path
//! (docs/limitations.md). A directory removed keeps its old path here (`/proc` would add
//! " (deleted)"): nothing can be created in it any more, so no decision changes. In strict
//! mode these paths decide only the writes left to the kernel inside its Landlock domain,
//! which checks the object it reaches again: a stale path there can only end in `EACCES`.
//!
//! Strict mode keeps a second, smaller thing here: the decision path of the object a
//! descriptor held when its metadata was last changed (`futimens`, `fchmod`, `fchown`: tar
//! makes all three on each file it writes, on the same descriptor). No open file is kept
//! for these (a file kept open for writing would make the command's exec of it fail with
//! `ETXTBSY`): a hit is an object with the same identity (device, inode and mount) as the
//! one checked, read from the daemon's fresh copy of the descriptor. Its path can change
//! only if a name is moved or removed: renames and removals of the session empty them, as
//! above. A removal in flight holds back only these, not the directories (`rm -r` removes
//! in a directory it keeps a descriptor of, one name after another).
//!
//! Here too, the descriptors of the `/proc/TID` directories of the threads that notify
//! ([`ProcDirs`]), through which their cwd and descriptors are read (lite mode's directory
//! descriptors through the cache above first): a cache of directory descriptors as well,
//! and one piece with the first, each using the other.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::sys::readlink::read_link_at;

/// Directories kept per session.
const MAX_ENTRIES: usize = 32;
/// Renaming threads waited for at once; past this the cache is off for the session.
const MAX_PENDING: usize = 64;

/// See the module documentation.
pub struct DirCache {
    inner: Mutex<Inner>,
    /// Renames may be in flight (a cheap test for every notification).
    pending: AtomicBool,
    /// Used since the last [`DirCache::evict_idle`].
    used: AtomicBool,
    /// The daemon's pid (`getpid` is a syscall each time).
    me: i32,
}

struct Inner {
    on: bool,
    /// `(tid << 32 | fd)` → the open file and its path.
    entries: HashMap<u64, (OwnedFd, PathBuf), BuildHasherDefault<TidHasher>>,
    /// Strict mode: `(tid << 32 | fd)` → the identity of the object it held and its checked
    /// decision path.
    objects: HashMap<u64, (Identity, PathBuf), BuildHasherDefault<TidHasher>>,
    /// Threads whose rename was received and may not have happened yet.
    renaming: Vec<i32>,
    /// Strict mode: threads whose removal of a name was received and may not have happened
    /// yet. They hold back objects only: nothing can be made in a removed directory.
    removing: Vec<i32>,
}

/// An object's identity, as [`crate::sys::fsops::identity`] reads it.
pub use crate::sys::fsops::Identity;

impl Inner {
    /// A change of names may be in flight.
    fn in_flight(&self) -> bool {
        !self.renaming.is_empty() || !self.removing.is_empty()
    }
}

fn key(tid: i32, fd: i32) -> u64 {
    u64::from(tid as u32) << 32 | u64::from(fd as u32)
}

impl DirCache {
    /// A cache; `on` false: one that keeps nothing (a session resumed from a daemon that
    /// died, which may have let renames through that are still in flight).
    pub fn new(on: bool) -> DirCache {
        DirCache {
            inner: Mutex::new(Inner {
                on,
                entries: HashMap::default(),
                objects: HashMap::default(),
                renaming: Vec::new(),
                removing: Vec::new(),
            }),
            pending: AtomicBool::new(false),
            used: AtomicBool::new(false),
            me: std::process::id() as i32,
        }
    }

    /// Keeps nothing from now on.
    pub fn off(&self) {
        let mut i = self.inner.lock().unwrap();
        i.on = false;
        i.entries.clear();
        i.objects.clear();
    }

    /// A notification from `tid` was received: its previous syscall, a rename maybe, is done.
    pub fn noted(&self, tid: i32) {
        if !self.pending.load(Ordering::Relaxed) {
            return;
        }
        let mut i = self.inner.lock().unwrap();
        i.renaming.retain(|&t| t != tid);
        i.removing.retain(|&t| t != tid);
        self.pending.store(i.in_flight(), Ordering::Relaxed);
    }

    /// `tid` renames something: every path kept may be about to change.
    pub fn moving(&self, tid: i32) {
        let mut i = self.inner.lock().unwrap();
        i.entries.clear();
        self.hold_back(&mut i, tid, true);
    }

    /// `tid` removes a name: an object kept may be about to lose the one it was decided by
    /// (directories kept are not concerned: nothing can be made in a removed one).
    pub fn unnaming(&self, tid: i32) {
        let mut i = self.inner.lock().unwrap();
        self.hold_back(&mut i, tid, false);
    }

    /// A change of names by `tid` may be in flight (a rename if `moves`, else a removal):
    /// objects are read again until it is done, and directories too for a rename.
    fn hold_back(&self, i: &mut Inner, tid: i32, moves: bool) {
        i.objects.clear();
        if !i.on {
            return;
        }
        let tids = if moves {
            &mut i.renaming
        } else {
            &mut i.removing
        };
        if !tids.contains(&tid) {
            tids.push(tid);
        }
        self.pending.store(true, Ordering::Relaxed);
        if tids.len() > MAX_PENDING {
            prune_gone(tids);
            if tids.len() > MAX_PENDING {
                i.on = false;
                i.entries.clear();
                i.renaming.clear();
                i.removing.clear();
                self.pending.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Lets go of the open files if nothing used them since the last call (the session's
    /// watcher calls this every second).
    pub fn evict_idle(&self) {
        if !self.used.swap(false, Ordering::Relaxed) {
            let mut i = self.inner.lock().unwrap();
            if !i.entries.is_empty() {
                i.entries.clear();
            }
        }
    }

    /// The path of the directory that descriptor `fd` of thread `tid` names, from the cache
    /// or read and kept now; `None` when it cannot be kept (not a directory, a rename in
    /// flight, no `kcmp`...): the caller reads it as before.
    pub fn path(&self, tid: i32, fd: i32, procs: &mut ProcDirs) -> Option<PathBuf> {
        let mut i = self.inner.lock().unwrap();
        if !i.on {
            return None;
        }
        self.used.store(true, Ordering::Relaxed);
        let k = key(tid, fd);
        let kept = i
            .entries
            .get(&k)
            .map(|(file, _)| crate::sys::kcmp::same_file(tid, fd, self.me, file.as_fd()));
        match kept {
            None => {}
            Some(Ok(true)) => return i.entries.get(&k).map(|(_, path)| path.clone()),
            // No kcmp here, or not allowed to compare: not worth trying each time.
            Some(Err(e)) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) => {
                i.on = false;
                i.entries.clear();
                return None;
            }
            // Another open file by now, or the thread is gone.
            Some(_) => {
                i.entries.remove(&k);
            }
        }
        if !i.renaming.is_empty() {
            prune_gone(&mut i.renaming);
            self.pending.store(i.in_flight(), Ordering::Relaxed);
            if !i.renaming.is_empty() {
                return None;
            }
        }
        // The open file first, then its path: the path is then that of the file kept, even
        // if the thread moved its descriptor N elsewhere in between.
        let pidfd = crate::sys::fsops::pidfd_open_thread(tid).ok()?;
        let file = match crate::sys::fsops::pidfd_getfd(pidfd.as_fd(), fd) {
            Ok(f) => f,
            // Not allowed to (Yama): not worth asking each time.
            Err(nix::errno::Errno::EPERM) => {
                i.on = false;
                return None;
            }
            Err(_) => return None,
        };
        let st = crate::sys::fsops::fstat(file.as_fd()).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return None;
        }
        use std::os::fd::AsRawFd;
        let mut name = String::with_capacity(16);
        name.push_str("fd/");
        name.push_str(&file.as_raw_fd().to_string());
        let path = procs.read_link(self.me, &name).ok()?;
        let b = path.as_os_str().as_bytes();
        if b.first() != Some(&b'/') || b.ends_with(b" (deleted)") {
            return None;
        }
        if i.entries.len() >= MAX_ENTRIES {
            i.entries.clear();
        }
        i.entries.insert(k, (file, path.clone()));
        Some(path)
    }

    /// Strict mode: the decision path kept for the object descriptor `fd` of thread `tid`
    /// held, if it holds the same object now (`id`, read from a fresh copy of it).
    pub fn object_path(&self, tid: i32, fd: i32, id: Identity) -> Option<PathBuf> {
        let i = self.inner.lock().unwrap();
        match i.objects.get(&key(tid, fd)) {
            Some((kept, path)) if i.on && *kept == id => Some(path.clone()),
            _ => None,
        }
    }

    /// Strict mode: keeps `path`, checked just now, as the decision path of object `id`,
    /// which descriptor `fd` of thread `tid` holds; nothing while a change of names may be
    /// in flight (the path may have been read before it happens).
    pub fn keep_object(&self, tid: i32, fd: i32, id: Identity, path: &Path) {
        let mut i = self.inner.lock().unwrap();
        if !i.on {
            return;
        }
        if i.in_flight() {
            prune_gone(&mut i.renaming);
            prune_gone(&mut i.removing);
            self.pending.store(i.in_flight(), Ordering::Relaxed);
            if i.in_flight() {
                return;
            }
        }
        if i.objects.len() >= MAX_ENTRIES {
            i.objects.clear();
        }
        i.objects.insert(key(tid, fd), (id, path.to_path_buf()));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap().entries.len()
    }
}

/// Drops the threads that are gone: whatever they were renaming is done. A thread id taken
/// by another thread since counts as not gone, which only keeps the cache empty longer.
fn prune_gone(tids: &mut Vec<i32>) {
    tids.retain(|&t| {
        !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(t), None),
            Err(nix::errno::Errno::ESRCH)
        )
    });
}

/// Descriptors of the `/proc/TID` directories of the threads that made notifications, kept
/// between notifications so that the cwd and descriptors of a thread are read with one
/// `readlinkat(dir, "fd/N")`, without looking up `/proc` and `TID` each time (about a quarter
/// of the cost of `readlink("/proc/TID/fd/N")`, measured).
///
/// Sound against thread ids being reused: a `/proc/TID` descriptor stays bound to the thread
/// it was opened for (its `struct pid`), and once that thread is gone every lookup under it
/// fails (`ESRCH`), even if a new thread got the same id meanwhile. A lookup that fails so
/// is made again once on a fresh descriptor, which is then the new thread's. An exec from
/// another thread of the group hands the leader's id, and its `/proc` entry, to the thread
/// that execs, as the kernel then reports it. No other process's `/proc` entry is opened
/// than those of the threads that notified, as before.
#[derive(Default)]
pub struct ProcDirs {
    dirs: HashMap<i32, OwnedFd, BuildHasherDefault<TidHasher>>,
    /// Lite mode's paths of directory descriptors ([`DirCache`]).
    pub cache: Option<Arc<DirCache>>,
}

/// Thread ids are small distinct numbers: a multiplication spreads them well enough, where
/// the default SipHash showed in the daemon's instruction count.
#[derive(Default)]
pub struct TidHasher(u64);

impl Hasher for TidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_i32(&mut self, i: i32) {
        self.0 = u64::from(i as u32).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Directories kept per session; all are closed when there would be more (threads that
/// exited leave theirs behind). Small: the daemon's descriptors are shared by every session.
const MAX_PROC_DIRS: usize = 128;

impl ProcDirs {
    pub fn new() -> ProcDirs {
        ProcDirs::default()
    }

    /// Resolves directory descriptors through `cache`.
    pub fn with_cache(cache: Arc<DirCache>) -> ProcDirs {
        ProcDirs {
            cache: Some(cache),
            ..ProcDirs::default()
        }
    }

    /// The target of the magic link `name` (`cwd`, `fd/N`) of thread `tid`.
    pub fn read_link(&mut self, tid: i32, name: &str) -> io::Result<PathBuf> {
        let fresh = !self.dirs.contains_key(&tid);
        if fresh {
            self.open(tid)?;
        }
        match self.read_at(tid, name) {
            // A thread that exited, whose id may be another's by now (Linux says ESRCH under
            // the directory of a thread that is gone; older kernels ENOENT): once more,
            // afresh.
            Err(e) if !fresh && matches!(e.raw_os_error(), Some(libc::ESRCH | libc::ENOENT)) => {
                self.dirs.remove(&tid);
                self.open(tid)?;
                self.read_at(tid, name)
            }
            r => r,
        }
    }

    /// What the magic link `name` (`fd/N`) of thread `tid` leads to, as `stat` sees it.
    pub fn stat(&mut self, tid: i32, name: &str) -> io::Result<libc::stat> {
        if !self.dirs.contains_key(&tid) {
            self.open(tid)?;
        }
        let name =
            std::ffi::CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        crate::sys::fsops::statat(self.dirs[&tid].as_fd(), &name)
            .map_err(|e| io::Error::from_raw_os_error(e as i32))
    }

    fn read_at(&self, tid: i32, name: &str) -> io::Result<PathBuf> {
        read_link_at(Some(self.dirs[&tid].as_fd()), name.as_bytes())
    }

    fn open(&mut self, tid: i32) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        if self.dirs.len() >= MAX_PROC_DIRS {
            self.dirs.clear();
        }
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open(format!("/proc/{tid}"))?;
        self.dirs.insert(tid, dir.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("hallpass-dircache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a")).unwrap();
        std::fs::create_dir_all(d.join("b")).unwrap();
        d.canonicalize().unwrap()
    }

    /// The test process plays the supervised thread: its own descriptors are looked up.
    #[test]
    fn a_descriptor_number_reused_for_another_directory_is_read_again() {
        let d = scratch("reuse");
        let me = std::process::id() as i32;
        let c = DirCache::new(true);
        let mut procs = ProcDirs::new();
        let mut a = std::os::fd::OwnedFd::from(std::fs::File::open(d.join("a")).unwrap());
        let n = a.as_raw_fd();
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("a")));
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("a")));
        assert_eq!(c.len(), 1);
        // Same number, another directory (dup2 makes it so whatever other tests open
        // meanwhile): kcmp tells, and the new one is read.
        let b = std::fs::File::open(d.join("b")).unwrap();
        nix::unistd::dup2(&b, &mut a).unwrap();
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("b")));
        // A file is not kept.
        let f = std::fs::File::create(d.join("f")).unwrap();
        assert_eq!(c.path(me, f.as_raw_fd(), &mut procs), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_rename_empties_the_cache_until_the_renaming_thread_is_heard_of_again() {
        let d = scratch("rename");
        let me = std::process::id() as i32;
        let c = DirCache::new(true);
        let mut procs = ProcDirs::new();
        let a = std::fs::File::open(d.join("a")).unwrap();
        let n = a.as_raw_fd();
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("a")));
        // A thread of the session renames (this process, still alive): nothing is kept
        // meanwhile, whatever the path reads now.
        c.moving(me);
        assert_eq!(c.len(), 0);
        std::fs::rename(d.join("a"), d.join("moved")).unwrap();
        assert_eq!(c.path(me, n, &mut procs), None);
        assert_eq!(c.len(), 0);
        // Heard of again: its rename is done; the new path is read and kept.
        c.noted(me);
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("moved")));
        // A renaming thread that is gone counts as done.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id() as i32;
        child.wait().unwrap();
        c.moving(gone);
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("moved")));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A removal in flight holds back the objects' decision paths, not the directories
    /// (`rm -r` in strict mode: each `unlinkat` is relative to a kept directory).
    #[test]
    fn a_removal_holds_back_objects_only() {
        let d = scratch("removal");
        let me = std::process::id() as i32;
        let c = DirCache::new(true);
        let mut procs = ProcDirs::new();
        let a = std::fs::File::open(d.join("a")).unwrap();
        let n = a.as_raw_fd();
        let id = (1, 2, 3, 4);
        c.unnaming(me);
        assert_eq!(c.path(me, n, &mut procs), Some(d.join("a")));
        assert_eq!(
            c.len(),
            1,
            "a directory is kept while a removal is in flight"
        );
        c.keep_object(me, 7, id, Path::new("/x"));
        assert_eq!(c.object_path(me, 7, id), None, "an object kept meanwhile");
        c.noted(me);
        c.keep_object(me, 7, id, Path::new("/x"));
        assert_eq!(c.object_path(me, 7, id), Some(PathBuf::from("/x")));
        // Another removal empties the objects until it is done.
        c.unnaming(me);
        assert_eq!(c.object_path(me, 7, id), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn idle_entries_are_let_go_and_off_keeps_nothing() {
        let d = scratch("idle");
        let me = std::process::id() as i32;
        let c = DirCache::new(true);
        let mut procs = ProcDirs::new();
        let a = std::fs::File::open(d.join("a")).unwrap();
        assert!(c.path(me, a.as_raw_fd(), &mut procs).is_some());
        c.evict_idle();
        assert_eq!(c.len(), 1, "used since the last look");
        c.evict_idle();
        assert_eq!(c.len(), 0, "idle for a whole period");
        c.off();
        assert_eq!(c.path(me, a.as_raw_fd(), &mut procs), None);
        assert_eq!(
            DirCache::new(false).path(me, a.as_raw_fd(), &mut procs),
            None
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A child that sleeps in `dir` until killed.
    fn sleeper(dir: &Path) -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("60")
            .current_dir(dir)
            .spawn()
            .unwrap()
    }

    #[test]
    fn proc_dirs_read_the_live_thread() {
        let base = std::env::temp_dir().join(format!("hallpass-procdirs-{}", std::process::id()));
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let (a, b) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
        let mut procs = ProcDirs::new();
        let mut first = sleeper(&a);
        let tid = first.id() as i32;
        assert_eq!(procs.read_link(tid, "cwd").unwrap(), a);
        // The thread is gone: its kept directory answers nothing any more, and neither does
        // a fresh one.
        first.kill().unwrap();
        first.wait().unwrap();
        assert!(procs.read_link(tid, "cwd").is_err());

        // A kept directory of a thread that is gone, filed under the id another thread has
        // now (what a reused thread id looks like): the live thread is read, not the dead
        // one, and not an error.
        let mut second = sleeper(&b);
        let mut gone = sleeper(&a);
        let dead = gone.id() as i32;
        procs.read_link(dead, "cwd").unwrap();
        gone.kill().unwrap();
        gone.wait().unwrap();
        let stale = procs.dirs.remove(&dead).unwrap();
        let live = second.id() as i32;
        procs.dirs.insert(live, stale);
        assert_eq!(procs.read_link(live, "cwd").unwrap(), b);
        let me = std::process::id() as i32;
        let f = std::fs::File::open(&a).unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(
            procs
                .read_link(me, &format!("fd/{}", f.as_raw_fd()))
                .unwrap(),
            a
        );
        // No such descriptor: what the kernel says of it.
        let t = crate::resolve::Target {
            tid: me,
            tgid: me,
            session: 0,
        };
        let e = crate::resolve::base_of(t, Some(1_000_000), &mut procs).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        second.kill().unwrap();
        second.wait().unwrap();
        std::fs::remove_dir_all(&base).unwrap();
    }
}
