//! The session journal: the notifications the daemon has taken from the kernel and not yet
//! answered, kept in memory the launcher shares (a memfd it made and keeps). If the daemon
//! dies, the kernel will never deliver those notifications again (they are "sent"), so
//! without this their threads would wait forever. The launcher hands the journal to the next
//! daemon, which decides them again: a pending question is asked again.
//!
//! Layout: slots of 12 words. Word 0 of a slot says whether it is in use; words 1..=10 hold
//! the `struct seccomp_notif`. Slot 0 is the notification the supervisor thread is handling
//! now; its word 11 is the highest notification id ever received. The other slots hold open
//! questions. Writing a slot is a few stores: cheap enough for every notification.
//!
//! The memory is shared with the launcher only: it makes the memfd sealed against resizing
//! (a shrunk file would fault the daemon), and it is not dumpable, so the command cannot open
//! its descriptors.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::sys::seccomp::{Notif, SeccompData};
use crate::sys::shared_map::SharedMap;

/// The journal's size: 1 MiB, about 10,900 open questions.
pub const SIZE: usize = hallpass_proto::JOURNAL_SIZE;
const SLOT_WORDS: usize = 12;
const FREE: u64 = 0;
const USED: u64 = 1;
/// Word 11 of slot 0: the highest notification id received.
const LAST: usize = 11;

pub struct Journal {
    map: SharedMap,
}

fn encode(n: &Notif) -> [u64; 10] {
    let d = &n.data;
    [
        n.id,
        u64::from(n.pid) | (u64::from(n.flags) << 32),
        u64::from(d.nr as u32) | (u64::from(d.arch) << 32),
        d.instruction_pointer,
        d.args[0],
        d.args[1],
        d.args[2],
        d.args[3],
        d.args[4],
        d.args[5],
    ]
}

fn decode(w: &[u64; 10]) -> Notif {
    Notif {
        id: w[0],
        pid: w[1] as u32,
        flags: (w[1] >> 32) as u32,
        data: SeccompData {
            nr: w[2] as u32 as i32,
            arch: (w[2] >> 32) as u32,
            instruction_pointer: w[3],
            args: [w[4], w[5], w[6], w[7], w[8], w[9]],
        },
    }
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
        self.map.words().len() / SLOT_WORDS
    }

    fn write(&self, slot: usize, n: &Notif) {
        let w = &self.map.words()[slot * SLOT_WORDS..(slot + 1) * SLOT_WORDS];
        for (i, v) in encode(n).into_iter().enumerate() {
            w[1 + i].store(v, Relaxed);
        }
        w[0].store(USED, Release);
    }

    fn read(&self, slot: usize) -> Option<Notif> {
        let w = &self.map.words()[slot * SLOT_WORDS..(slot + 1) * SLOT_WORDS];
        if w[0].load(Acquire) != USED {
            return None;
        }
        let mut v = [0u64; 10];
        for (i, x) in v.iter_mut().enumerate() {
            *x = w[1 + i].load(Relaxed);
        }
        Some(decode(&v))
    }

    /// The supervisor took `n` from the kernel.
    pub fn begin(&self, n: &Notif) {
        self.map.words()[LAST].fetch_max(n.id, Relaxed);
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

    /// The highest notification id a daemon received, if any.
    pub fn last(&self) -> Option<u64> {
        let last = self.map.words()[LAST].load(Relaxed);
        (last != 0).then_some(last)
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
        assert_eq!(b.last(), Some(11));
        assert!(q > 0);
        // Still there until settled: a daemon dying now loses nothing.
        assert_eq!(b.held().len(), 2);
        for (slot, n) in held {
            b.settle(slot, n.id);
        }
        assert!(b.held().is_empty());
        // An older id never lowers the last one.
        b.begin(&notif(3));
        assert_eq!(b.last(), Some(11));
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
