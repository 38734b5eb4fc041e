//! The session journal: the notifications the daemon has taken from the kernel and not yet
//! answered, kept in memory the launcher shares (a memfd it made and keeps). If the daemon
//! dies, the kernel will never deliver those notifications again (they are "sent"), so
//! without this their threads would wait forever. The launcher hands the journal to the next
//! daemon, which decides them again: a pending question is asked again.
//!
//! Layout: slots of 12 words. Word 0 of a slot says whether it is in use; words 1..=10 hold
//! the `struct seccomp_notif`. Slot 0 is the notification the supervisor thread is handling
//! now (its id stays there after it is answered: the last id received); the others hold open
//! questions. Writing a slot is a few stores: cheap enough for every notification.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::sys::seccomp::{Notif, SeccompData};
use crate::sys::shared_map::SharedMap;

/// The journal's size: 1 MiB, about 10,900 open questions.
pub const SIZE: usize = hallpass_proto::JOURNAL_SIZE;
const SLOT_WORDS: usize = 12;
const FREE: u64 = 0;
const USED: u64 = 1;

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

    /// The question in `slot` is answered.
    pub fn release(&self, slot: usize) {
        if slot != 0 && slot < self.slots() {
            self.map.words()[slot * SLOT_WORDS].store(FREE, Release);
        }
    }

    /// What a daemon that died left: the notifications it held, and the id of the last one it
    /// received. Empties the journal.
    pub fn take(&self) -> (Vec<Notif>, Option<u64>) {
        let last = self.map.words()[1].load(Relaxed);
        let last = (last != 0).then_some(last);
        let mut out = Vec::new();
        for slot in 0..self.slots() {
            if let Some(n) = self.read(slot) {
                out.push(n);
            }
            self.map.words()[slot * SLOT_WORDS].store(FREE, Release);
        }
        (out, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memfd() -> std::os::fd::OwnedFd {
        let fd =
            nix::sys::memfd::memfd_create(c"journal-test", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
                .unwrap();
        nix::unistd::ftruncate(&fd, SIZE as i64).unwrap();
        fd
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
        a.release(r);
        // The daemon dies here; the next one maps the same memory.
        drop(a);
        let b = Journal::open(fd).unwrap();
        let (held, last) = b.take();
        let ids: Vec<u64> = held.iter().map(|n| n.id).collect();
        assert_eq!(ids, [11, 9]);
        assert_eq!(held[0].data.args, notif(11).data.args);
        assert_eq!(held[0].data.arch, 0xc000_003e);
        assert_eq!(held[0].pid, 4242);
        assert_eq!(last, Some(11));
        assert!(q > 0);
        // Taken: empty now.
        assert!(b.take().0.is_empty());
    }

    #[test]
    fn a_file_of_the_wrong_size_is_refused() {
        let fd = memfd();
        nix::unistd::ftruncate(&fd, 4096).unwrap();
        assert!(Journal::open(fd).is_err());
    }
}
