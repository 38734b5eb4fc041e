//! The process's side of a write the daemon performs for it: its umask and file-system
//! credentials, read from `/proc/TID/status`. The daemon must never do for a process what it
//! could not do itself: for a process with other credentials than the daemon's (a root
//! daemon's process that switched user or dropped capabilities), the performing thread takes
//! on the process's for the walk and the call ([`Guise`]), so the kernel checks them as it
//! would natively. The umask is set on the performing thread alone (`unshare(CLONE_FS)`).

use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;

use crate::dlog::say;
use crate::sys::fsops::{self, Sys};
use crate::sys::thread_creds::{self, Caps};

/// Reads a small `/proc` file in one go into `buf`, without the size lookup
/// `read_to_string` makes: this runs for many writes.
pub fn read_proc<'b>(path: &str, buf: &'b mut [u8]) -> Sys<&'b str> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|_| Errno::ESRCH)?;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return Err(Errno::ESRCH),
        }
    }
    std::str::from_utf8(&buf[..n]).map_err(|_| Errno::ESRCH)
}

/// The target's file-size limit (`RLIMIT_FSIZE`, soft), `None` when it has none. Read from
/// `/proc/TID/limits`, which anyone may read.
pub fn fsize_limit(tid: i32) -> Sys<Option<u64>> {
    let mut buf = [0u8; 4096];
    let s = read_proc(&format!("/proc/{tid}/limits"), &mut buf)?;
    let soft = s
        .lines()
        .find_map(|l| l.strip_prefix("Max file size"))
        .and_then(|v| v.split_whitespace().next())
        .ok_or(Errno::ESRCH)?;
    match soft {
        "unlimited" => Ok(None),
        n => n.parse().map(Some).map_err(|_| Errno::ESRCH),
    }
}

/// What the kernel would check and apply for the target: its umask and file-system
/// credentials, from `/proc/TID/status`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Creds {
    umask: u32,
    /// The effective ids: what a service on a Unix socket sees of its peer (`SO_PEERCRED`).
    euid: u32,
    egid: u32,
    fsuid: u32,
    fsgid: u32,
    groups: Vec<u32>,
    cap_eff: u64,
}

impl Creds {
    /// Whether the kernel would grant these what it grants `other`, and a service would see
    /// the same peer: the same effective and file-system ids, groups and effective
    /// capabilities (the umask aside).
    fn same_rights(&self, other: &Creds) -> bool {
        let key = |c: &Creds| (c.euid, c.egid, c.fsuid, c.fsgid, c.cap_eff);
        key(self) == key(other) && self.groups == other.groups
    }
}

fn creds_of(tid: i32) -> Sys<Creds> {
    let mut buf = [0u8; 8192];
    let s = read_proc(&format!("/proc/{tid}/status"), &mut buf)?;
    let field = |name: &str| s.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
    // "Uid:" and "Gid:" list the real, effective, saved and file-system ids.
    let nth = |name: &str, n: usize| {
        field(name)
            .and_then(|v| v.split_whitespace().nth(n))
            .and_then(|v| v.parse().ok())
    };
    let parse = || {
        Some(Creds {
            umask: field("Umask:").and_then(|v| u32::from_str_radix(v, 8).ok())?,
            euid: nth("Uid:", 1)?,
            egid: nth("Gid:", 1)?,
            fsuid: nth("Uid:", 3)?,
            fsgid: nth("Gid:", 3)?,
            groups: field("Groups:")?
                .split_whitespace()
                .filter_map(|g| g.parse().ok())
                .collect(),
            cap_eff: field("CapEff:").and_then(|v| u64::from_str_radix(v, 16).ok())?,
        })
    };
    parse().ok_or(Errno::ESRCH)
}

/// The daemon's own credentials and capabilities, as it started.
struct Own {
    creds: Creds,
    caps: Caps,
}

fn own() -> Sys<&'static Own> {
    static OWN: std::sync::OnceLock<Option<Own>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        Some(Own {
            creds: creds_of(std::process::id() as i32).ok()?,
            caps: thread_creds::caps().ok()?,
        })
    })
    .as_ref()
    .ok_or(Errno::EACCES)
}

thread_local! {
    static OWN_FS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// This thread's umask once it has its own: set only when it must change.
    static UMASK: std::cell::Cell<u32> = const { std::cell::Cell::new(u32::MAX) };
    /// This thread wears a [`Guise`].
    static IN_GUISE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `CAP_SYS_PTRACE`, kept by a thread in [`Guise`]: the daemon reads the process's memory
/// and descriptors through `/proc` while it walks for it. It grants nothing on files; what
/// it would grant on `/proc/PID` of other processes is refused while in guise
/// ([`in_guise`], `perform/walk/`).
const CAP_SYS_PTRACE: u64 = 1 << 19;

/// This thread, the daemon's, wears the credentials of a process for what it looks up and
/// writes for it; it takes back the daemon's own when dropped. A thread that could not take
/// them back would go on with credentials that are not the daemon's: the daemon exits then
/// (its sessions go on under the next one).
pub struct Guise(());

impl Guise {
    fn take_on(c: &Creds) -> Sys<Guise> {
        let own = own()?;
        IN_GUISE.with(|g| g.set(true));
        // From here, dropping puts back whatever was changed.
        let guise = Guise(());
        // A thread started by one in guise took back the daemon's own first ([`as_daemon`]).
        thread_creds::set_groups(&c.groups)?;
        // The effective ids first, so a connection the daemon makes shows the service the
        // process's user, not root. Leaving uid 0 clears the effective capabilities and
        // makes the file-system ids follow: the daemon's are raised again (its permitted
        // ones stay) to set those as the process has them, then lowered to the process's.
        thread_creds::set_egid(c.egid)?;
        thread_creds::set_euid(c.euid)?;
        thread_creds::set_caps(&own.caps)?;
        if !thread_creds::set_fsgid(c.fsgid) || !thread_creds::set_fsuid(c.fsuid) {
            return Err(Errno::EPERM);
        }
        thread_creds::set_caps(&Caps {
            effective: (c.cap_eff | CAP_SYS_PTRACE) & own.caps.permitted,
            ..own.caps
        })?;
        Ok(guise)
    }
}

impl Drop for Guise {
    fn drop(&mut self) {
        as_daemon();
    }
}

/// This thread takes (back) the daemon's own credentials: after a [`Guise`], or first thing
/// in a thread started by one in guise, which inherits the guise but not the knowledge of it.
/// A root daemon only; a thread that cannot ends the daemon (see [`Guise`]).
pub fn as_daemon() {
    let Ok(own) = own() else { return };
    if own.creds.fsuid != 0 {
        return;
    }
    let back = thread_creds::set_caps(&own.caps).is_ok()
        && thread_creds::set_euid(own.creds.euid).is_ok()
        && thread_creds::set_egid(own.creds.egid).is_ok()
        && thread_creds::set_fsuid(own.creds.fsuid)
        && thread_creds::set_fsgid(own.creds.fsgid)
        && thread_creds::set_groups(&own.creds.groups).is_ok();
    if !back {
        say!("hallpassd: a thread could not take back the daemon's credentials: exiting");
        crate::dlog::flush(std::time::Duration::from_secs(1));
        std::process::abort();
    }
    IN_GUISE.with(|g| g.set(false));
}

/// Whether this thread wears a [`Guise`] now.
pub fn in_guise() -> bool {
    IN_GUISE.with(|g| g.get())
}

/// What the daemon must do to act for thread `tid` as the kernel would: nothing (`None`)
/// when it has the daemon's credentials, else take on the thread's ([`Guise`]) until the
/// answer is dropped. A daemon that is not root runs as its user, whose processes cannot
/// have other credentials (the session start checks the launcher's); a root daemon checks
/// each process, with the answer kept for the last thread asked about (see [`Kept`]).
/// `waiting`: whether `tid` still waits in the syscall the daemon acts for (its
/// notification is valid), asked before an answer is kept.
pub fn guise(tid: i32, waiting: &dyn Fn() -> bool) -> Sys<Option<Guise>> {
    let own = own()?;
    if own.creds.fsuid != 0 {
        return Ok(None);
    }
    match KEPT.with(|k| k.borrow_mut().creds(tid, &own.creds, waiting))? {
        None => Ok(None),
        Some(c) => Guise::take_on(&c).map(Some),
    }
}

/// Runs `f` on this thread with the rights the kernel checks for thread `tid`: as it is
/// when it wears `tid`'s [`Guise`] already (strict mode, around a notification of `tid`) or
/// the daemon has the same rights, else in a [`Guise`] taken for the call (a root daemon).
/// `None` when the daemon cannot take on the process's rights: a daemon that is not root,
/// and a process with other rights than its own (other groups, say).
pub fn as_process<T>(tid: i32, f: impl FnOnce() -> T) -> Option<T> {
    if in_guise() {
        return Some(f());
    }
    let own = own().ok()?;
    let c = creds_of(tid).ok()?;
    if c.same_rights(&own.creds) {
        return Some(f());
    }
    if own.creds.fsuid != 0 {
        return None;
    }
    let _guise = Guise::take_on(&c).ok()?;
    Some(f())
}

/// `Ok` when thread `tid` has the daemon's credentials (lite mode performs only for those).
pub fn same_credentials(tid: i32) -> Sys<()> {
    let own = own()?;
    if own.creds.fsuid != 0 {
        return Ok(());
    }
    match KEPT.with(|k| k.borrow_mut().creds(tid, &own.creds, &|| false))? {
        None => Ok(()),
        Some(_) => Err(Errno::EPERM),
    }
}

/// A strict session's supervisor thread: a notification from `tid` was received, so the
/// syscall it made before (a change of credentials maybe) is done.
pub fn noted(tid: i32) {
    KEPT.with(|k| k.borrow_mut().changing.retain(|c| c.tid != tid));
}

/// `tid` changes its own credentials (`set*id`, `setgroups`, `capset`), or, with an exec
/// (`leader` set), those of the thread that then takes its group leader's id `leader`
/// (`None`: not known, any thread's). Nothing is kept for either until it is done.
pub fn changing(tid: i32, exec: bool, leader: Option<i32>) {
    let c = Change {
        tid,
        leader: if exec { leader } else { Some(tid) },
    };
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        k.last = None;
        k.changing.retain(|o| o.tid != tid);
        k.changing.push(c);
    });
}

/// A change of credentials reported and not known to be done (see [`Kept`]).
#[derive(Clone, Copy, Debug)]
struct Change {
    /// The thread that makes it.
    tid: i32,
    /// The other thread id whose credentials it may change: the group leader's for an
    /// exec (`None`: not known, so any), the thread's own else.
    leader: Option<i32>,
}

impl Change {
    /// Whether the answer for thread `t` may be changed by it.
    fn touches(&self, t: i32) -> bool {
        self.tid == t || self.leader.is_none_or(|l| l == t)
    }
}

thread_local! {
    /// A session's answers of [`guise`], on its supervisor thread.
    static KEPT: std::cell::RefCell<Kept> = std::cell::RefCell::new(Kept::default());
}

/// Reading `/proc/TID/status` is a quarter of what strict mode's daemon spends on a descriptor
/// call (tar restores the times, owner and mode of each file it writes), so the answer for the
/// last thread is kept, with a pidfd of that very thread: once it is gone, a thread that gets
/// its id is another. A thread's credentials change only by its own syscalls (`set*id`,
/// `setgroups`, `capset`, which strict mode's filter reports; `clone` makes a new thread) or
/// by an exec of its thread group (reported too), which may also give the group leader's id to
/// the thread that execs. Each empties the answer kept, and none is kept again for the
/// threads it may change (the thread itself, and with an exec its group leader's id) until
/// the thread that made it was heard of again (its syscall is done) or is gone; others are
/// kept meanwhile (a shell waiting for its child after its own exec holds back nothing of
/// the child's). Nor is an
/// answer kept unless the thread still waits in its syscall once its credentials were
/// read: an exec by another thread of its group ends that syscall, and the exec's thread
/// takes its id (and so the pidfd) before it takes on the new program's credentials, so a
/// read in between would be of the credentials the exec is about to drop. Lite mode does
/// not report them: its supervisor keeps nothing ([`changing`] is never called there, so it
/// reads every time through [`Kept::creds`] with `keep` false).
#[derive(Default)]
struct Kept {
    /// The thread, a pidfd of it, and its credentials where they differ from the daemon's.
    last: Option<(i32, OwnedFd, Option<Creds>)>,
    changing: Vec<Change>,
    /// This is a strict session's supervisor thread, which hears of every change.
    keeps: bool,
}

impl Kept {
    /// `tid`'s credentials where they differ from `own`'s; kept only if `waiting()` says
    /// afterwards that `tid` still waits in the syscall they are read for.
    fn creds(&mut self, tid: i32, own: &Creds, waiting: &dyn Fn() -> bool) -> Sys<Option<Creds>> {
        if let Some((t, pidfd, c)) = &self.last {
            if *t == tid && fsops::pidfd_alive(pidfd.as_fd()) {
                return Ok(c.clone());
            }
        }
        self.last = None;
        // The pidfd first: if it still names a live thread after the read, the credentials
        // read were that thread's, not those of another that took its id in between.
        let pidfd = fsops::pidfd_open_thread(tid).ok();
        let c = creds_of(tid)?;
        let differ = (!c.same_rights(own)).then_some(c);
        self.changing.retain(|c| {
            !matches!(
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(c.tid), None),
                Err(Errno::ESRCH)
            )
        });
        let unchanging = !self.changing.iter().any(|c| c.touches(tid));
        if let Some(pidfd) =
            pidfd.filter(|p| self.keeps && unchanging && fsops::pidfd_alive(p.as_fd()) && waiting())
        {
            self.last = Some((tid, pidfd, differ.clone()));
        }
        Ok(differ)
    }
}

/// Marks this thread as a strict session's supervisor, which hears of every change of
/// credentials: [`guise`] may keep its answers.
pub fn supervising() {
    KEPT.with(|k| k.borrow_mut().keeps = true);
}

/// `SCM_CREDENTIALS` as (pid, uid, gid).
pub type Ucred = (i32, u32, u32);

const CAP_SETGID: u64 = 1 << 6;
const CAP_SETUID: u64 = 1 << 7;
const CAP_SYS_ADMIN: u64 = 1 << 21;

/// What a process may claim in `SCM_CREDENTIALS`, from `/proc/TID/status`.
struct Claimable {
    /// Its thread group's id in its own pid namespace (`NStgid`, last), and as the daemon
    /// sees it (`Tgid`).
    own_tgid: i32,
    tgid: i32,
    /// In a pid namespace of its own (`NStgid` has more than one id).
    nested: bool,
    /// Real, effective and saved ids.
    uids: [u32; 3],
    gids: [u32; 3],
    cap_eff: u64,
}

fn claimable(tid: i32) -> Sys<Claimable> {
    let mut buf = [0u8; 8192];
    let s = read_proc(&format!("/proc/{tid}/status"), &mut buf)?;
    let field = |name: &str| s.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
    let ids = |name: &str| -> Option<[u32; 3]> {
        let mut it = field(name)?.split_whitespace().map(|v| v.parse().ok());
        Some([it.next()??, it.next()??, it.next()??])
    };
    let parse = || {
        let ns: Vec<i32> = field("NStgid:")?
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        Some(Claimable {
            own_tgid: *ns.last()?,
            tgid: field("Tgid:")?.parse().ok()?,
            nested: ns.len() > 1,
            uids: ids("Uid:")?,
            gids: ids("Gid:")?,
            cap_eff: field("CapEff:").and_then(|v| u64::from_str_radix(v, 16).ok())?,
        })
    };
    parse().ok_or(Errno::ESRCH)
}

/// The credentials the daemon attaches to a message it sends for thread `tid`, and whether
/// it must raise capabilities to ([`with_caps`]). `claim`: the process's own
/// `SCM_CREDENTIALS`, checked as the kernel checks them (`scm_check_creds`): its own pid,
/// and a uid and gid among its real, effective and saved ones, unless it has
/// `CAP_SYS_ADMIN`, `CAP_SETUID`, `CAP_SETGID`; else `EPERM`. `unix`: on a Unix socket,
/// where a root daemon attaches the process's own (its pid, real uid and gid: what the
/// kernel attaches natively) even unasked, so a receiver with `SO_PASSCRED` (the journal)
/// sees the process rather than the daemon's thread (root). A daemon that is not root
/// cannot attach another pid than its own: the receiver sees hallpassd's pid.
pub fn message_creds(tid: i32, claim: Option<Ucred>, unix: bool) -> Sys<(Option<Ucred>, bool)> {
    let root = own()?.creds.fsuid == 0;
    let attach = root && unix;
    let Some((pid, uid, gid)) = claim else {
        if !attach {
            return Ok((None, false));
        }
        let c = claimable(tid)?;
        return Ok((Some((c.tgid, c.uids[0], c.gids[0])), true));
    };
    if uid == u32::MAX || gid == u32::MAX {
        return Err(Errno::EINVAL);
    }
    let c = claimable(tid)?;
    let has = |cap: u64| c.cap_eff & cap != 0;
    let pid_ok = pid == c.own_tgid || (has(CAP_SYS_ADMIN) && !c.nested);
    let uid_ok = c.uids.contains(&uid) || has(CAP_SETUID);
    let gid_ok = c.gids.contains(&gid) || has(CAP_SETGID);
    if !(pid_ok && uid_ok && gid_ok) {
        return Err(Errno::EPERM);
    }
    let pid = match (attach, pid == c.own_tgid) {
        (false, _) => std::process::id() as i32,
        (true, true) => c.tgid,
        (true, false) => pid,
    };
    Ok((Some((pid, uid, gid)), attach))
}

/// Runs `f` with the capabilities that let a root daemon's thread attach another process's
/// credentials to a message (`CAP_SYS_ADMIN`, `CAP_SETUID`, `CAP_SETGID`), then lowers them
/// again. Only around a send on a Unix socket, where they change nothing else but the
/// per-user limit of descriptors in flight. A thread that cannot lower them ends the daemon.
pub fn with_message_caps<T>(f: impl FnOnce() -> T) -> Sys<T> {
    let before = thread_creds::caps()?;
    let want = CAP_SYS_ADMIN | CAP_SETUID | CAP_SETGID;
    if before.effective & want == want {
        return Ok(f());
    }
    thread_creds::set_caps(&Caps {
        effective: before.effective | (want & before.permitted),
        ..before
    })?;
    let r = f();
    if thread_creds::set_caps(&before).is_err() {
        say!("hallpassd: a thread could not lower its capabilities again: exiting");
        crate::dlog::flush(std::time::Duration::from_secs(1));
        std::process::abort();
    }
    Ok(r)
}

/// `CAP_MKNOD` (include/uapi/linux/capability.h).
const CAP_MKNOD: u64 = 1 << 27;

/// Runs `f` (a `mknodat`) without `CAP_MKNOD` in this thread's effective set, then puts it
/// back. Strict mode never makes a device node, and the kernel, asked for one without the
/// capability, refuses it (`EPERM`) only after every other check (the path, an existing name,
/// a read-only mount, write permission on the directory), in its own order: the process sees
/// what it would in a container. A thread that cannot drop it does not call `f`; one that
/// cannot take it back ends the daemon.
pub fn without_mknod<T>(f: impl FnOnce() -> Sys<T>) -> Sys<T> {
    let before = thread_creds::caps()?;
    if before.effective & CAP_MKNOD == 0 {
        return f();
    }
    thread_creds::set_caps(&Caps {
        effective: before.effective & !CAP_MKNOD,
        ..before
    })?;
    let r = f();
    if thread_creds::set_caps(&before).is_err() {
        eprintln!("hallpassd: a thread could not take back CAP_MKNOD: exiting");
        std::process::abort();
    }
    r
}

/// Runs `f` as the kernel would run the target's call: with its umask if `creates`, and with
/// its credentials. `checked`: [`guise`] was asked a moment ago and this thread wears what it
/// said (a write performed at once); a question's write, performed long after it was
/// prepared, takes on the target's credentials as they are now. The umask is set on this
/// thread only.
pub fn as_target<T>(tid: i32, creates: bool, checked: bool, f: impl FnOnce() -> T) -> Sys<T> {
    let own = own()?;
    if !creates && (own.creds.fsuid != 0 || checked) {
        return Ok(f());
    }
    let c = creds_of(tid)?;
    let _guise = if !checked && own.creds.fsuid == 0 && !c.same_rights(&own.creds) {
        Some(Guise::take_on(&c)?)
    } else {
        None
    };
    if !OWN_FS.with(|o| o.get()) {
        fsops::unshare_fs()?;
        OWN_FS.with(|o| o.set(true));
    }
    // The thread's own umask serves only the writes it performs: left as the last target's.
    if UMASK.with(|u| u.get()) != c.umask {
        fsops::umask(c.umask);
        UMASK.with(|u| u.set(c.umask));
    }
    Ok(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials read are kept only for a thread that still waits in its syscall
    /// afterwards (see [`Kept`]): a read that an exec by another thread of the group may
    /// have overtaken serves once, and is not kept.
    #[test]
    fn credentials_are_kept_only_for_a_thread_still_waiting() {
        let me = nix::unistd::gettid().as_raw();
        let own = creds_of(std::process::id() as i32).unwrap();
        let mut k = Kept {
            keeps: true,
            ..Kept::default()
        };
        k.creds(me, &own, &|| false).unwrap();
        assert!(k.last.is_none(), "kept for a notification that is gone");
        k.creds(me, &own, &|| true).unwrap();
        assert!(k.last.as_ref().is_some_and(|(t, _, _)| *t == me));
        // A hit does not ask again.
        k.creds(me, &own, &|| panic!("asked on a hit")).unwrap();
    }

    /// A change reported by another thread holds back only the answers it may change: its
    /// own, and with an exec its group leader's (any thread's when that is not known).
    #[test]
    fn a_change_holds_back_only_the_threads_it_may_change() {
        let me = nix::unistd::gettid().as_raw();
        // A live thread of another process: this test's parent, which is not `me`'s group.
        let other = nix::unistd::getppid().as_raw();
        let own = creds_of(std::process::id() as i32).unwrap();
        let kept_with = |changes: Vec<Change>| {
            let mut k = Kept {
                keeps: true,
                changing: changes,
                ..Kept::default()
            };
            k.creds(me, &own, &|| true).unwrap();
            k.last.is_some()
        };
        assert!(kept_with(vec![]));
        let setuid = Change {
            tid: other,
            leader: Some(other),
        };
        assert!(
            kept_with(vec![setuid]),
            "held back by another thread's setuid"
        );
        let exec_elsewhere = Change {
            tid: other,
            leader: Some(other),
        };
        assert!(kept_with(vec![exec_elsewhere]));
        let exec_in_group = Change {
            tid: other,
            leader: Some(me),
        };
        assert!(
            !kept_with(vec![exec_in_group]),
            "kept across an exec of its group"
        );
        let exec_unknown = Change {
            tid: other,
            leader: None,
        };
        assert!(
            !kept_with(vec![exec_unknown]),
            "kept across an exec of an unknown group"
        );
        let own_change = Change {
            tid: me,
            leader: Some(me),
        };
        assert!(!kept_with(vec![own_change]), "kept across its own change");
    }
}
