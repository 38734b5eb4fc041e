//! The session journal: the notifications the daemon has taken from the kernel and not yet
//! answered, kept in memory the launcher shares (a memfd it made and keeps). If the daemon
//! dies, the kernel will never deliver those notifications again (they are "sent"), so
//! without this their threads would wait forever. The launcher hands the journal to the next
//! daemon, which decides them again: a pending question is asked again.
//!
//! Layout: slots of 12 words. Word 0 of a slot says whether it is in use; words 1..=10 hold
//! the `struct seccomp_notif`; word 11 is unused. Slot 0 is the notification the supervisor
//! thread is handling now: the kernel writes it there itself ([`Journal::receive`]), so there
//! is no instant in which the daemon holds a notification the journal does not. The other
//! slots hold open questions. Writing a slot is a few stores: cheap enough for every
//! notification.
//!
//! The last [`hallpass_proto::journal_tail::SIZE`] bytes are no slot: they count the log
//! lines the session lost ([`Journal::log_lost`]) and the writes refused with no one
//! deciding them ([`Journal::refused`]), for the launcher to say; and that the session has
//! ended ([`Journal::ended`]).
//!
//! The memory is shared with the launcher only: it makes the memfd sealed against resizing
//! (a shrunk file would fault the daemon), and it is not dumpable, so the command cannot open
//! its descriptors.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use std::os::fd::BorrowedFd;

use crate::sys::seccomp::{self, Notif};
use crate::sys::shared_map::SharedMap;

/// The journal's size: 1 MiB, about 10,900 open questions.
pub const SIZE: usize = hallpass_proto::JOURNAL_SIZE;
const SLOT_WORDS: usize = 12;
const FREE: u64 = 0;
const USED: u64 = 1;
/// Slot 0 is lent to the kernel: it holds a notification if the kernel wrote one (its `arch`
/// word is never zero then).
const RECEIVING: u64 = 3;

pub struct Journal {
    map: SharedMap,
}

impl Journal {
    /// The journal in `fd`, which must be a file of [`SIZE`] bytes.
    pub fn open(fd: std::os::fd::OwnedFd) -> std::io::Result<Journal> {
        use nix::fcntl::{fcntl, FcntlArg, SealFlag};
        // Sealed at its size, or a truncation under our mapping could fault the daemon.
        let seals = fcntl(&fd, FcntlArg::F_GET_SEALS).map(SealFlag::from_bits_truncate);
        let want = SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW;
        if !seals.is_ok_and(|s| s.contains(want)) {
            return Err(std::io::Error::other(
                "the session journal is not sealed against resizing",
            ));
        }
        let len = std::fs::File::from(fd.try_clone()?).metadata()?.len();
        if len != SIZE as u64 {
            return Err(std::io::Error::other(format!(
                "the session journal is {len} bytes, not {SIZE}"
            )));
        }
        Ok(Journal {
            map: SharedMap::new(&fd, SIZE)?,
        })
    }

    fn slots(&self) -> usize {
        (self.map.words().len() - hallpass_proto::journal_tail::SIZE / 8) / SLOT_WORDS
    }

    /// A log line could not be written (`errno`); `refused` when it was an allowed write's,
    /// which is refused for it. Counted where the launcher reads it.
    pub fn log_lost(&self, errno: i32, refused: bool) {
        use hallpass_proto::journal_tail::{ERRNO, LOST, REFUSED};
        let words = self.map.words();
        words[LOST / 8].fetch_add(1, Release);
        if refused {
            words[REFUSED / 8].fetch_add(1, Release);
        }
        let _ = words[ERRNO / 8].compare_exchange(0, errno.max(1) as u64, Release, Relaxed);
    }

    /// A write of `path` was refused for `reason` (the log's word): counted if it is one no
    /// one decided there and then ([`refusals::REASONS`]), and its path kept if it is among
    /// the first [`refusals::PATHS`] different ones. Several threads may refuse at once: an
    /// entry is claimed before it is written, and its length word, stored last, says it is
    /// whole.
    ///
    /// [`refusals::REASONS`]: hallpass_proto::journal_tail::refusals::REASONS
    /// [`refusals::PATHS`]: hallpass_proto::journal_tail::refusals::PATHS
    pub fn refused(&self, reason: &str, path: &[u8]) {
        use hallpass_proto::journal_tail::refusals as r;
        let Some(k) = r::REASONS.iter().position(|x| *x == reason) else {
            return;
        };
        let w = self.map.words();
        w[r::COUNT / 8].fetch_add(1, Release);
        w[r::BY_REASON / 8 + k].fetch_add(1, Release);
        if path.is_empty() || (0..r::PATHS).any(|i| self.kept_is(i, path)) {
            return;
        }
        let i = w[r::CLAIMED / 8].fetch_add(1, AcqRel) as usize;
        if i >= r::PATHS {
            w[r::OTHERS / 8].fetch_add(1, Release);
            return;
        }
        let at = r::path(i) / 8;
        let kept = &path[..path.len().min(r::PATH_BYTES)];
        for (j, chunk) in kept.chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w[at + 1 + j].store(u64::from_ne_bytes(b), Relaxed);
        }
        w[at].store(path.len() as u64, Release);
    }

    /// Whether kept path `i` is `path` (as far as it was kept).
    fn kept_is(&self, i: usize, path: &[u8]) -> bool {
        use hallpass_proto::journal_tail::refusals as r;
        let w = self.map.words();
        let at = r::path(i) / 8;
        if w[at].load(Acquire) != path.len() as u64 {
            return false;
        }
        let kept = &path[..path.len().min(r::PATH_BYTES)];
        kept.chunks(8).enumerate().all(|(j, chunk)| {
            let b = w[at + 1 + j].load(Relaxed).to_ne_bytes();
            b[..chunk.len()] == *chunk
        })
    }

    /// The session has ended on this daemon's side: the launcher hung up and every question
    /// left open is counted. The launcher waits for this before it says what was refused.
    pub fn ended(&self) {
        use hallpass_proto::journal_tail::refusals as r;
        self.map.words()[r::ENDED / 8].store(1, Release);
    }

    fn write(&self, slot: usize, n: &Notif) {
        let w = &self.map.words()[slot * SLOT_WORDS..(slot + 1) * SLOT_WORDS];
        for (i, v) in n.to_words().into_iter().enumerate() {
            w[1 + i].store(v, Relaxed);
        }
        w[0].store(USED, Release);
    }

    fn read(&self, slot: usize) -> Option<Notif> {
        let w = &self.map.words()[slot * SLOT_WORDS..(slot + 1) * SLOT_WORDS];
        let state = w[0].load(Acquire);
        if state != USED && !(slot == 0 && state == RECEIVING) {
            return None;
        }
        let mut v = [0u64; 10];
        for (i, x) in v.iter_mut().enumerate() {
            *x = w[1 + i].load(Relaxed);
        }
        let n = Notif::from_words(&v);
        (n.data.arch != 0).then_some(n)
    }

    /// Takes the next notification from the kernel into slot 0 (see [`seccomp::recv_into`]).
    /// Blocks like [`seccomp::recv`]; on an error, slot 0 holds nothing.
    pub fn receive(&self, listener: BorrowedFd<'_>) -> std::io::Result<Notif> {
        let w = &self.map.words()[..SLOT_WORDS];
        let notif: &[std::sync::atomic::AtomicU64; 10] = w[1..11].try_into().expect("ten words");
        // The kernel insists on a zeroed struct; zeroed, the slot says it holds nothing.
        for x in notif {
            x.store(0, Relaxed);
        }
        w[0].store(RECEIVING, Release);
        seccomp::recv_into(listener, notif)?;
        let words = notif.each_ref().map(|x| x.load(Relaxed));
        w[0].store(USED, Release);
        Ok(Notif::from_words(&words))
    }

    /// The supervisor decides `n` again (a notification a daemon that died held).
    pub fn begin(&self, n: &Notif) {
        self.write(0, n);
    }

    /// The supervisor answered it, or handed it to a question.
    pub fn end(&self) {
        self.map.words()[0].store(FREE, Release);
    }

    /// Keeps `n` while its question is open; `None` when every slot is taken (then the
    /// question is not kept: if the daemon dies, its thread gets no answer).
    pub fn hold(&self, n: &Notif) -> Option<usize> {
        let words = self.map.words();
        for slot in 1..self.slots() {
            if words[slot * SLOT_WORDS]
                .compare_exchange(FREE, USED + 1, Acquire, Relaxed)
                .is_ok()
            {
                self.write(slot, n);
                return Some(slot);
            }
        }
        None
    }

    /// The question in `slot`, about notification `id`, is settled. A slot that holds
    /// another notification by now is left alone.
    pub fn release(&self, slot: usize, id: u64) {
        if slot != 0 && slot < self.slots() {
            let w = &self.map.words()[slot * SLOT_WORDS..(slot + 1) * SLOT_WORDS];
            if w[1].load(Relaxed) == id {
                w[0].store(FREE, Release);
            }
        }
    }

    /// What a daemon that died left: the notifications it held, each once, with its slot. The
    /// slots stay taken until [`Journal::settle`]: if this daemon dies too while deciding
    /// them again, the next one finds them still.
    pub fn held(&self) -> Vec<(usize, Notif)> {
        let mut out: Vec<(usize, Notif)> = Vec::new();
        // Questions first: slot 0 may hold a copy of one (taken, then asked).
        for slot in (1..self.slots()).chain([0]) {
            if let Some(n) = self.read(slot) {
                if out.iter().any(|(_, m)| m.id == n.id) {
                    if slot == 0 {
                        self.end();
                    }
                    continue;
                }
                out.push((slot, n));
            }
        }
        out
    }

    /// A notification [`Journal::held`] returned is decided again (answered, or held anew).
    pub fn settle(&self, slot: usize, id: u64) {
        if slot == 0 {
            let w = self.map.words();
            if w[1].load(Relaxed) == id {
                self.end();
            }
        } else {
            self.release(slot, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::seccomp::SeccompData;

    fn memfd_of(size: usize) -> std::os::fd::OwnedFd {
        use nix::fcntl::{fcntl, FcntlArg, SealFlag};
        use nix::sys::memfd::{memfd_create, MFdFlags};
        let fd = memfd_create(
            c"journal-test",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )
        .unwrap();
        nix::unistd::ftruncate(&fd, size as i64).unwrap();
        fcntl(
            &fd,
            FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW),
        )
        .unwrap();
        fd
    }

    fn memfd() -> std::os::fd::OwnedFd {
        memfd_of(SIZE)
    }

    fn notif(id: u64) -> Notif {
        Notif {
            id,
            pid: 4242,
            flags: 0,
            data: SeccompData {
                nr: 257,
                arch: 0xc000_003e,
                instruction_pointer: 0x1234,
                args: [1, 2, 3, 4, 5, u64::MAX],
            },
        }
    }

    #[test]
    fn a_second_mapping_sees_what_the_first_left() {
        let fd = memfd();
        let a = Journal::open(fd.try_clone().unwrap()).unwrap();
        a.begin(&notif(10));
        a.end();
        a.begin(&notif(11));
        let q = a.hold(&notif(9)).unwrap();
        let r = a.hold(&notif(8)).unwrap();
        a.release(r, 8);
        // A copy of a held one in slot 0 (taken, then asked) counts once.
        a.hold(&notif(11)).unwrap();
        // The daemon dies here; the next one maps the same memory.
        drop(a);
        let b = Journal::open(fd).unwrap();
        let held = b.held();
        let ids: Vec<u64> = held.iter().map(|(_, n)| n.id).collect();
        assert_eq!(ids, [9, 11]);
        assert_eq!(held[1].1.data.args, notif(11).data.args);
        assert_eq!(held[1].1.data.arch, 0xc000_003e);
        assert_eq!(held[1].1.pid, 4242);
        assert!(q > 0);
        // Still there until settled: a daemon dying now loses nothing.
        assert_eq!(b.held().len(), 2);
        for (slot, n) in held {
            b.settle(slot, n.id);
        }
        assert!(b.held().is_empty());
    }

    #[test]
    fn what_the_kernel_hands_over_is_in_the_journal_before_the_daemon_has_it() {
        use std::os::fd::AsFd;
        let (listener, thread) = seccomp::testing::a_thread_notifying_getppid();
        let fd = memfd();
        let a = Journal::open(fd.try_clone().unwrap()).unwrap();
        let n = a.receive(listener.as_fd()).unwrap();
        assert_eq!(i64::from(n.data.nr), libc::SYS_getppid);
        // The daemon dies before it looks at `n`: the next one finds it all the same.
        drop(a);
        let b = Journal::open(fd).unwrap();
        let held = b.held();
        assert_eq!(held.len(), 1);
        let (slot, m) = held[0];
        assert_eq!((slot, m.id, m.pid, m.data.nr), (0, n.id, n.pid, n.data.nr));
        assert!(seccomp::id_valid(listener.as_fd(), m.id));
        seccomp::send(listener.as_fd(), m.id, seccomp::Reply::Value(4242)).unwrap();
        assert_eq!(thread.join().unwrap(), 4242);
        b.settle(slot, m.id);
        assert!(b.held().is_empty());
    }

    #[test]
    fn a_slot_lent_to_the_kernel_and_left_empty_holds_nothing() {
        use std::os::fd::AsFd;
        let (listener, thread) = seccomp::testing::a_thread_notifying_getppid();
        let fd = memfd();
        let a = Journal::open(fd.try_clone().unwrap()).unwrap();
        // A receive that fails (here: not a listener) leaves slot 0 lent and empty.
        assert!(a.receive(fd.as_fd()).is_err());
        assert!(Journal::open(fd.try_clone().unwrap())
            .unwrap()
            .held()
            .is_empty());
        let n = a.receive(listener.as_fd()).unwrap();
        seccomp::send(listener.as_fd(), n.id, seccomp::Reply::Value(1)).unwrap();
        a.end();
        assert_eq!(thread.join().unwrap(), 1);
        assert!(Journal::open(fd).unwrap().held().is_empty());
    }

    #[test]
    fn refusals_are_counted_with_their_first_paths_for_the_launcher() {
        use hallpass_proto::journal_tail::refusals as r;
        let fd = memfd();
        let a = Journal::open(fd.try_clone().unwrap()).unwrap();
        let long = vec![b'x'; r::PATH_BYTES + 5];
        for (reason, path) in [
            ("unattended", &b"/h/a"[..]),
            ("denied", b"/h/mine"),
            ("never", b"/h/mine"),
            ("policy", b"/h/mine"),
            ("unattended", b"/h/a"),
            ("protected", b"/h/.config/hallpass/x"),
            ("unanswered", &long),
            ("unattended", b"/h/d"),
            ("unattended", b"/h/a"),
        ] {
            a.refused(reason, path);
        }
        // A second mapping (the launcher's, or the next daemon's) reads the same.
        drop(a);
        let b = Journal::open(fd).unwrap();
        let w = b.map.words();
        let word = |at: usize| w[at / 8].load(Relaxed);
        assert_eq!(word(r::COUNT), 6);
        assert_eq!(word(r::OTHERS), 1, "/h/d");
        let by: Vec<u64> = (0..5).map(|k| word(r::BY_REASON + 8 * k)).collect();
        assert_eq!(by, [4, 1, 1, 0, 0]);
        assert_eq!(word(r::path(0)), 4);
        assert_eq!(&word(r::path(0) + 8).to_ne_bytes()[..4], b"/h/a");
        assert_eq!(word(r::path(2)), long.len() as u64);
        assert!(b.kept_is(1, b"/h/.config/hallpass/x") && b.kept_is(2, &long));
        assert_eq!(word(r::ENDED), 0);
        b.ended();
        assert_eq!(word(r::ENDED), 1);
    }

    #[test]
    fn a_file_of_the_wrong_size_or_unsealed_is_refused() {
        assert!(Journal::open(memfd_of(4096)).is_err());
        let unsealed =
            nix::sys::memfd::memfd_create(c"journal-test", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
                .unwrap();
        nix::unistd::ftruncate(&unsealed, SIZE as i64).unwrap();
        assert!(Journal::open(unsealed).is_err());
    }
}
