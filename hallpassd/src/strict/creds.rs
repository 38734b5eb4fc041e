//! The process's side of a write the daemon performs for it: its umask and file-system
//! credentials, read from `/proc/TID/status`. The daemon writes with its own credentials, so
//! it does so only for a process that has the same ones; the umask is set on the performing
//! thread alone (`unshare(CLONE_FS)`).

use nix::errno::Errno;

use crate::sys::fsops::{self, Sys};

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

/// What the kernel would check and apply for the target: its umask and file-system
/// credentials, from `/proc/TID/status`.
#[derive(Debug, PartialEq, Eq)]
struct Creds {
    umask: u32,
    fsuid: u32,
    fsgid: u32,
    groups: Vec<u32>,
    cap_eff: u64,
}

impl Creds {
    /// Whether the kernel would grant these what it grants `other`: the same file-system
    /// ids, groups and effective capabilities (the umask aside).
    fn same_rights(&self, other: &Creds) -> bool {
        (self.fsuid, self.fsgid, &self.groups, self.cap_eff)
            == (other.fsuid, other.fsgid, &other.groups, other.cap_eff)
    }
}

fn creds_of(tid: i32) -> Sys<Creds> {
    let mut buf = [0u8; 8192];
    let s = read_proc(&format!("/proc/{tid}/status"), &mut buf)?;
    let field = |name: &str| s.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
    let fourth = |name: &str| {
        field(name)
            .and_then(|v| v.split_whitespace().nth(3))
            .and_then(|v| v.parse().ok())
    };
    let parse = || {
        Some(Creds {
            umask: field("Umask:").and_then(|v| u32::from_str_radix(v, 8).ok())?,
            fsuid: fourth("Uid:")?,
            fsgid: fourth("Gid:")?,
            groups: field("Groups:")?
                .split_whitespace()
                .filter_map(|g| g.parse().ok())
                .collect(),
            cap_eff: field("CapEff:").and_then(|v| u64::from_str_radix(v, 16).ok())?,
        })
    };
    parse().ok_or(Errno::ESRCH)
}

/// The daemon's own credentials, as it started.
fn own_creds() -> &'static Option<Creds> {
    static OWN: std::sync::OnceLock<Option<Creds>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| creds_of(std::process::id() as i32).ok())
}

thread_local! {
    static OWN_FS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// This thread's umask once it has its own: set only when it must change.
    static UMASK: std::cell::Cell<u32> = const { std::cell::Cell::new(u32::MAX) };
}

/// `Ok` when thread `tid` has the daemon's credentials, so that what the daemon looks up and
/// writes for it, it could itself. A daemon that is not root runs as its user, whose
/// processes cannot have other credentials (the session start checks the launcher's); a root
/// daemon checks each process (one that dropped to another user or dropped capabilities
/// gets `EPERM`).
pub fn same_credentials(tid: i32) -> Sys<()> {
    let Some(own) = own_creds() else {
        return Err(Errno::EACCES);
    };
    if own.fsuid != 0 {
        return Ok(());
    }
    let c = creds_of(tid)?;
    if !c.same_rights(own) {
        return Err(Errno::EPERM);
    }
    Ok(())
}

/// Runs `f` as the kernel would run the target's call: with its umask if `creates`, and only
/// if it has the daemon's credentials. `checked`: [`same_credentials`] said so a moment ago
/// (a write performed at once); a question's write, performed long after it was prepared, is
/// checked again. The umask is set on this thread only.
pub fn as_target<T>(tid: i32, creates: bool, checked: bool, f: impl FnOnce() -> T) -> Sys<T> {
    let Some(own) = own_creds() else {
        return Err(Errno::EACCES);
    };
    if !creates && (own.fsuid != 0 || checked) {
        return Ok(f());
    }
    let c = creds_of(tid)?;
    if own.fsuid == 0 && !c.same_rights(own) {
        return Err(Errno::EPERM);
    }
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
