//! One answer for one logical change. A program seldom writes a file in one call: `touch`
//! opens it, then sets its times; bash, leaving, opens its history twice and gives it back its
//! owner; `cp -p` writes, then sets mode, owner and times. After a person answers once ([o])
//! or denies ([d]) a write of a file, the same process's next calls on that very file, for
//! a moment ([`BURST`]), are decided as the person decided, unasked (logged with reason
//! `follow-up`): only calls that change what the answered one changed or less (after a
//! write of the content, more writes and changes of mode, owner, times and extended
//! attributes; after a change of those or a `mkdir`, changes of those), never a removal,
//! rename or link, another path or another process. Such an answer lasts no longer than
//! the burst and grants nothing to anyone else: it is not a timed grant.
//!
//! Plain data and functions, the clock passed in; the session keeps a [`Bursts`] and looks
//! the processes up (`session/mod.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::policy::Decision;
use crate::syscalls::change::{family, Family};

/// How long after an answer its process's follow-up calls are decided by it.
pub const BURST: Duration = Duration::from_secs(2);

/// Bursts kept at once per session, the oldest forgotten first: answers come from a person,
/// a few a minute.
const KEPT: usize = 64;

/// A process, as one that a pid names only once: its thread group id and its start time
/// (`/proc/PID/stat`, in clock ticks since boot), so that another process given the same
/// id later is not taken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    pub tgid: i32,
    pub start: u64,
    /// The program it runs (device and inode of `/proc/PID/exe`): after an exec it is
    /// another program, which the person did not answer for.
    pub exe: (u64, u64),
}

/// An answer and the calls it still decides.
#[derive(Clone, Debug)]
struct Burst {
    who: Process,
    path: PathBuf,
    /// What the answered call did to the file.
    family: Family,
    decision: Decision,
    until: Duration,
}

/// The answers of a session whose bursts may not be over.
#[derive(Debug, Default)]
pub struct Bursts(Vec<Burst>);

/// Whether a call of family `next` may follow one of family `answered` unasked: it changes
/// the same file no more than the answered one did.
fn follows(answered: Family, next: Family) -> bool {
    match answered {
        Family::Content => matches!(next, Family::Content | Family::Metadata),
        Family::Metadata | Family::Directory => next == Family::Metadata,
        Family::Other => false,
    }
}

impl Bursts {
    /// A person answered a `syscall` of `who` that writes `paths` with `decision` (allow
    /// once or deny) at `now`. Only a call on one path starts a burst (a rename or a link
    /// does not), and only one of a family that may be followed.
    pub fn answered(
        &mut self,
        who: Process,
        syscall: &str,
        paths: &[PathBuf],
        decision: Decision,
        now: Duration,
    ) {
        let ([path], Decision::Allow | Decision::Deny) = (paths, decision) else {
            return;
        };
        let family = family(syscall);
        if family == Family::Other {
            return;
        }
        self.0
            .retain(|b| b.until > now && !(b.who == who && b.path == *path));
        if self.0.len() >= KEPT {
            self.0.remove(0);
        }
        self.0.push(Burst {
            who,
            path: path.clone(),
            family,
            decision,
            until: now + BURST,
        });
    }

    /// The decision for a `syscall` of `who` writing `paths` at `now` that would be asked:
    /// the answer whose burst it follows, if any.
    pub fn decide(
        &self,
        who: Process,
        syscall: &str,
        paths: &[&Path],
        now: Duration,
    ) -> Option<Decision> {
        let [path] = paths else { return None };
        let next = family(syscall);
        self.0
            .iter()
            .rev()
            .find(|b| b.until > now && b.who == who && b.path == *path && follows(b.family, next))
            .map(|b| b.decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Process = Process {
        tgid: 40,
        start: 1000,
        exe: (8, 9),
    };
    const T0: Duration = Duration::from_secs(100);

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn after(ms: u64) -> Duration {
        T0 + Duration::from_millis(ms)
    }

    fn answered(syscall: &str, path: &str, d: Decision) -> Bursts {
        let mut b = Bursts::default();
        b.answered(ME, syscall, &[p(path)], d, T0);
        b
    }

    /// `touch`: the open answered, the times follow; bash's history: open, open. Its mode,
    /// owner and extended attributes are asked (a red team's find: a write answered once
    /// made the file setuid, root's and a capability's holder unasked).
    #[test]
    fn the_same_process_finishes_its_change_unasked() {
        let b = answered("openat", "/h/.bash_history", Decision::Allow);
        let f = [Path::new("/h/.bash_history")];
        assert_eq!(
            b.decide(ME, "utimensat", &f, after(10)),
            Some(Decision::Allow)
        );
        assert_eq!(b.decide(ME, "openat", &f, after(20)), Some(Decision::Allow));
        assert_eq!(
            b.decide(ME, "truncate", &f, after(50)),
            Some(Decision::Allow)
        );
        for asked in ["fchownat", "fchmod", "setxattr", "fsetxattr", "removexattr"] {
            assert_eq!(b.decide(ME, asked, &f, after(30)), None, "{asked}");
        }
    }

    /// Another program, after an exec in the same process, is not the one answered.
    #[test]
    fn an_exec_ends_the_burst() {
        let b = answered("openat", "/h/f", Decision::Allow);
        let f = [Path::new("/h/f")];
        let execd = Process { exe: (1, 2), ..ME };
        assert_eq!(b.decide(execd, "utimensat", &f, after(10)), None);
    }

    /// A denial covers the burst too: the retry fails unasked.
    #[test]
    fn a_denial_covers_the_retries() {
        let b = answered("openat", "/h/f", Decision::Deny);
        let f = [Path::new("/h/f")];
        assert_eq!(b.decide(ME, "openat", &f, after(10)), Some(Decision::Deny));
        assert_eq!(
            b.decide(ME, "utimensat", &f, after(10)),
            Some(Decision::Deny)
        );
    }

    /// Not a standing grant: not after the burst, not for another path, another process or
    /// a process that took the same id, not for a removal, rename or link.
    #[test]
    fn nothing_else_follows() {
        let b = answered("openat", "/h/f", Decision::Allow);
        let f = [Path::new("/h/f")];
        assert_eq!(b.decide(ME, "utimensat", &f, T0 + BURST), None);
        assert_eq!(b.decide(ME, "utimensat", &f, after(2500)), None);
        let other_path = [Path::new("/h/g")];
        assert_eq!(b.decide(ME, "utimensat", &other_path, after(10)), None);
        let below = [Path::new("/h/f/x")];
        assert_eq!(b.decide(ME, "openat", &below, after(10)), None);
        let other = Process { tgid: 41, ..ME };
        assert_eq!(b.decide(other, "utimensat", &f, after(10)), None);
        let reused = Process { start: 1001, ..ME };
        assert_eq!(b.decide(reused, "utimensat", &f, after(10)), None);
        for names in [
            "unlinkat",
            "renameat2",
            "linkat",
            "mknodat",
            "ioctl",
            "file_setattr",
        ] {
            assert_eq!(b.decide(ME, names, &f, after(10)), None, "{names}");
        }
        let two = [Path::new("/h/f"), Path::new("/h/f")];
        assert_eq!(b.decide(ME, "openat", &two, after(10)), None);
    }

    /// Times set, or a new directory, are followed by times set only: not by a write of the
    /// content, nor by a change of mode or owner (asked every time).
    #[test]
    fn metadata_leads_to_no_content() {
        let b = answered("utimensat", "/h/f", Decision::Allow);
        let f = [Path::new("/h/f")];
        assert_eq!(
            b.decide(ME, "utimensat", &f, after(10)),
            Some(Decision::Allow)
        );
        assert_eq!(b.decide(ME, "openat", &f, after(10)), None);
        assert_eq!(b.decide(ME, "truncate", &f, after(10)), None);
        assert_eq!(b.decide(ME, "fchownat", &f, after(10)), None);
        // A change of mode answered starts nothing.
        let b = answered("fchmodat", "/h/f", Decision::Allow);
        assert_eq!(b.decide(ME, "utimensat", &f, after(10)), None);
        let b = answered("mkdirat", "/h/d", Decision::Allow);
        let d = [Path::new("/h/d")];
        assert_eq!(
            b.decide(ME, "utimensat", &d, after(10)),
            Some(Decision::Allow)
        );
        assert_eq!(b.decide(ME, "fchmodat", &d, after(10)), None);
        assert_eq!(b.decide(ME, "mkdirat", &d, after(10)), None);
        assert_eq!(b.decide(ME, "openat", &d, after(10)), None);
    }

    /// A removal, rename or link answered starts no burst, nor does a call on two paths.
    #[test]
    fn names_start_no_burst() {
        for syscall in [
            "unlinkat",
            "renameat2",
            "linkat",
            "symlinkat",
            "ioctl",
            "connect",
        ] {
            let b = answered(syscall, "/h/f", Decision::Allow);
            let f = [Path::new("/h/f")];
            assert_eq!(b.decide(ME, "fchmodat", &f, after(10)), None, "{syscall}");
        }
        let mut b = Bursts::default();
        b.answered(ME, "openat", &[p("/h/f"), p("/h/g")], Decision::Allow, T0);
        assert_eq!(
            b.decide(ME, "fchmodat", &[Path::new("/h/f")], after(10)),
            None
        );
        // Nor does a decision that is no answer.
        let b = answered("openat", "/h/f", Decision::Ask);
        assert_eq!(
            b.decide(ME, "fchmodat", &[Path::new("/h/f")], after(10)),
            None
        );
    }

    /// A later answer for the same file replaces the earlier; the list stays bounded.
    #[test]
    fn the_last_answer_counts_and_the_list_is_bounded() {
        let mut b = answered("openat", "/h/f", Decision::Allow);
        b.answered(ME, "openat", &[p("/h/f")], Decision::Deny, after(100));
        let f = [Path::new("/h/f")];
        assert_eq!(b.decide(ME, "openat", &f, after(200)), Some(Decision::Deny));
        for i in 0..(KEPT as u64 * 2) {
            b.answered(
                ME,
                "openat",
                &[p(&format!("/h/{i}"))],
                Decision::Allow,
                after(i),
            );
        }
        assert!(b.0.len() <= KEPT);
        // Expired ones go first.
        let mut b = answered("openat", "/h/old", Decision::Allow);
        b.answered(ME, "openat", &[p("/h/new")], Decision::Allow, T0 + BURST);
        assert_eq!(b.0.len(), 1);
    }
}
