//! A process as `/proc` tells of it: how it is shown to a person (its command as a
//! question's chain names it, `npm install`, its `comm`, and the chain of its parents up to
//! the session's command; a process gone meanwhile shows as its pid), and its kin: the
//! thread group of a thread, the parent of a process, whether one descends from another.
//! A leaf: it reads `/proc` and nothing of the daemon.

use std::path::Path;

/// How much of a command line is read: far more than the few first arguments a chain
/// shows need, unless one is huge (an argument may be 128 KiB, a command line megabytes).
const MAX_CMDLINE: u64 = 16 * 1024;

/// The start of `/proc/PID/cmdline`, [`MAX_CMDLINE`] bytes at most; `cut`: whether there is
/// more.
pub fn cmdline(pid: i32) -> Option<(Vec<u8>, bool)> {
    use std::io::Read;
    let f = std::fs::File::open(format!("/proc/{pid}/cmdline")).ok()?;
    let mut raw = Vec::new();
    f.take(MAX_CMDLINE + 1).read_to_end(&mut raw).ok()?;
    let cut = raw.len() as u64 > MAX_CMDLINE;
    raw.truncate(MAX_CMDLINE as usize);
    Some((raw, cut))
}

/// How a process shows in a question's chain: its program and first argument (`npm
/// install`), the script rather than the interpreter (`node /usr/bin/npm` shows as `npm`);
/// [`crate::bounds::MAX_CHAIN_ENTRY`] bytes at most.
pub fn describe(pid: i32) -> Option<String> {
    let (raw, cut) = cmdline(pid)?;
    if raw.iter().all(|&b| b == 0) {
        // A kernel thread or a zombie: its comm.
        return comm(pid);
    }
    // A program name longer than what was read shows as its start, and says so.
    if cut && !raw.contains(&0) {
        let start = String::from_utf8_lossy(&raw);
        let start = crate::bounds::head(&start, crate::bounds::MAX_CHAIN_ENTRY / 2);
        return Some(format!("{start}…[cut: over {MAX_CMDLINE} bytes]"));
    }
    let name = describe_args(&raw)?;
    Some(crate::bounds::cut(&name, crate::bounds::MAX_CHAIN_ENTRY))
}

/// [`describe`] of a command line read; `None` if it is empty.
fn describe_args(raw: &[u8]) -> Option<String> {
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let mut it = args.iter();
    let mut name = base(it.next()?);
    let mut next = it.next();
    // An interpreter running a script: show the script.
    if let Some(a) = next {
        if a.starts_with('/') && !a.starts_with("/dev/") && Path::new(a).is_file() {
            name = base(a);
            next = it.next();
        }
    }
    if let Some(a) = next {
        if !a.starts_with('-') && !a.contains('/') && a.len() <= 24 {
            name.push(' ');
            name.push_str(a);
        }
    }
    Some(name)
}

/// The process's `comm`.
pub fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The chain from `pid` up to `top` (the session's command), each described.
pub fn chain(pid: i32, top: i32) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = pid;
    for _ in 0..32 {
        out.push(describe(p).unwrap_or_else(|| format!("pid {p}")));
        if p == top || p <= 1 {
            break;
        }
        match parent_of(p) {
            Some(pp) => p = pp,
            None => break,
        }
    }
    out
}

/// The thread group of thread `tid`.
pub fn tgid_of(tid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The parent of `pid`, from `/proc/PID/stat` (the field after the parenthesised name).
pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(1)?.parse().ok()
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`, field 22): with
/// its id, it names one process, not a later one given the same id.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    // The fields after the name start with the third, the state.
    after.split(' ').nth(22 - 3)?.parse().ok()
}

/// Whether process `pid` is `top` or one of its descendants (`top` 0: never).
pub fn descends_from(pid: i32, top: i32) -> bool {
    if top <= 0 {
        return false;
    }
    let mut p = pid;
    for _ in 0..4096 {
        if p == top {
            return true;
        }
        match parent_of(p) {
            Some(pp) if pp > 1 => p = pp,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents() {
        assert_eq!(
            parent_of(std::process::id() as i32),
            Some(nix::unistd::getppid().as_raw())
        );
        assert_eq!(parent_of(-5), None);
    }

    #[test]
    fn start_times() {
        let me = std::process::id() as i32;
        let mine = start_time(me).unwrap();
        assert_eq!(start_time(me), Some(mine));
        // init started first.
        assert!(start_time(1).is_some_and(|t| t <= mine));
        assert_eq!(start_time(-5), None);
    }
}
