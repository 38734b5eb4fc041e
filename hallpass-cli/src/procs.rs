//! The session's processes, as the launcher sees them: it is their child subreaper, so every
//! process the command starts (double-forked daemons included) stays its descendant.
//!
//! Ending them fails closed: a `/proc` that cannot be read means "not known to be finished",
//! never "none left"; SIGKILL goes out again and again until a scan finds no descendant, and
//! a process that forks while it is being killed (a chain of fork-and-exit, each one a new
//! pid) is chased among the pids handed out since the scan began.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long processes get after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);

/// How long one look at the session's processes may take before it gives up (see [`look`]).
const LOOK: Duration = Duration::from_millis(500);

/// How long leftovers get after SIGTERM, without `--wait=all`, before SIGKILL.
const LEFTOVER_TERM: Duration = Duration::from_secs(1);

/// The daemon's pid, when this process started it: as a child subreaper we inherit it when
/// its starter exits, but it is not the session's, and is never ended with it.
static DAEMON: AtomicI32 = AtomicI32::new(0);

/// Notes the daemon's pid (from the control socket's peer credentials).
pub fn set_daemon(pid: Option<i32>) {
    DAEMON.store(pid.unwrap_or(0), Ordering::Relaxed);
}

/// Every live descendant of this process but the daemon (and its own), from `/proc`. An
/// error (no descriptor left to read `/proc` with, say) is an error, never "none".
pub fn descendants() -> io::Result<Vec<i32>> {
    look(None)
}

/// One look at the session's processes: every descendant of this process but the daemon,
/// each sent `signal` (if any) as soon as it is seen.
///
/// A scan of `/proc` alone can miss a process that forks and exits over and over: it lists
/// the pids first and reads each one's parent after, by when the one listed has gone and its
/// child was not listed. So the look goes on among the pids handed out since it began (a
/// few before too, for forks then under way), oldest first, until none is handed out while
/// it looks. A process alive at the end was then seen: it was listed and read alive, or its
/// pid was handed out during the look, after its parent's (which, if gone, makes us its
/// parent).
fn look(signal: Option<Signal>) -> io::Result<Vec<i32>> {
    let me = std::process::id() as i32;
    let daemon = DAEMON.load(Ordering::Relaxed);
    let pid_max = pid_max()?;
    let start = last_pid()?;
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for e in std::fs::read_dir("/proc")? {
        let e = e?;
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(ppid) = parent_of(pid)? {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = BTreeSet::new();
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if c != daemon && found.insert(c) {
                todo.push(c);
            }
        }
    }
    if let Some(sig) = signal {
        for &p in &found {
            let _ = kill(Pid::from_raw(p), sig);
        }
    }
    let mut known: HashSet<i32> = found.iter().copied().collect();
    known.insert(me);
    let mut from = (start - 256).max(0);
    let deadline = Instant::now() + LOOK;
    while Instant::now() < deadline {
        let upto = last_pid()?;
        // Oldest first, past a wrap of the pid counter too.
        let range: Box<dyn Iterator<Item = i32>> = if upto >= from {
            Box::new(from + 1..=upto)
        } else {
            Box::new((from + 1..pid_max).chain(1..=upto))
        };
        for p in range {
            if known.contains(&p) || p == daemon {
                continue;
            }
            let Some(ppid) = parent_of(p)? else { continue };
            if !known.contains(&ppid) {
                continue;
            }
            // A thread's id names its process.
            let p = tgid_of(p)?.unwrap_or(p);
            if p == daemon || !known.insert(p) {
                continue;
            }
            if let Some(sig) = signal {
                let _ = kill(Pid::from_raw(p), sig);
            }
            found.insert(p);
        }
        // Done when no pid was handed out meanwhile; and, when only looking, as soon as one
        // is found: "some left" needs no more proof (and a process that forks on and on would
        // keep the look going).
        if last_pid()? == upto || (signal.is_none() && !found.is_empty()) {
            return Ok(found.into_iter().collect());
        }
        from = upto;
    }
    Err(io::Error::other(
        "processes are started faster than they can be looked at",
    ))
}

/// The parent of `pid`; `None` if it is gone, a zombie (gone for our purpose: but not a
/// process whose first thread alone has exited), or not ours to see. Any other failure to
/// read it is an error.
fn parent_of(pid: i32) -> io::Result<Option<i32>> {
    let Some(stat) = read_proc(pid, "stat")? else {
        return Ok(None);
    };
    let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("/proc/{pid}/stat"));
    let after = stat
        .rfind(')')
        .and_then(|i| stat.get(i + 2..))
        .ok_or_else(bad)?;
    if after.starts_with('Z')
        && field(&read_proc(pid, "status")?.unwrap_or_default(), "Threads") <= Some(1)
    {
        return Ok(None);
    }
    after
        .split(' ')
        .nth(1)
        .and_then(|p| p.parse().ok())
        .map(Some)
        .ok_or_else(bad)
}

/// The process (thread group) of thread `tid`, if it still exists.
fn tgid_of(tid: i32) -> io::Result<Option<i32>> {
    Ok(read_proc(tid, "status")?.and_then(|s| field(&s, "Tgid")))
}

/// `/proc/PID/NAME`; `None` if the process is gone or not ours to see.
fn read_proc(pid: i32, name: &str) -> io::Result<Option<String>> {
    match std::fs::read_to_string(format!("/proc/{pid}/{name}")) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => {
            Ok(None)
        }
        // Under `hidepid=1` other users' processes: never ours, since a supervised process
        // cannot change its user (no_new_privs).
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(None),
        Err(e) => Err(e),
    }
}

/// A numeric field of a `/proc/PID/status` text.
fn field(status: &str, name: &str) -> Option<i32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// The pid the kernel handed out last in our pid namespace (`/proc/loadavg`).
fn last_pid() -> io::Result<i32> {
    let s = std::fs::read_to_string("/proc/loadavg")?;
    s.split_whitespace()
        .nth(4)
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "/proc/loadavg"))
}

/// Where the pid counter wraps (`/proc/sys/kernel/pid_max`).
fn pid_max() -> io::Result<i32> {
    static MAX: AtomicI32 = AtomicI32::new(0);
    let m = MAX.load(Ordering::Relaxed);
    if m > 0 {
        return Ok(m);
    }
    let m = std::fs::read_to_string("/proc/sys/kernel/pid_max")?
        .trim()
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "pid_max"))?;
    MAX.store(m, Ordering::Relaxed);
    Ok(m)
}

/// Whether this process has no child at all, not even a zombie (`waitid` says `ECHILD`),
/// and so no descendant: known without reading `/proc`.
fn childless() -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    waitid(Id::All, flags) == Err(nix::errno::Errno::ECHILD)
}

/// Whether no process of the session is left (`--wait=all`). An error means "not known".
pub fn none_left() -> io::Result<bool> {
    match descendants() {
        Ok(v) => Ok(v.is_empty()),
        Err(_) if childless() => Ok(true),
        Err(e) => {
            more_descriptors(&e);
            Err(e)
        }
    }
}

/// When `/proc` could not be read for want of descriptors (the command may have lowered our
/// limit), raises ours again as far as we may.
fn more_descriptors(e: &io::Error) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if !matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
        return;
    }
    const ENOUGH: u64 = 1024;
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < ENOUGH && setrlimit(Resource::RLIMIT_NOFILE, ENOUGH, hard.max(ENOUGH)).is_err() {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

/// How a round of ending went.
enum Left {
    /// A look found no descendant.
    None,
    /// These were still there at the last look.
    Some(Vec<i32>),
    /// `/proc` could not be read, up to the end.
    Unknown(io::Error),
}

/// Sends SIGKILL to every descendant, look after look, until one finds none or `limit`
/// passes; what was signalled is added to `ended`.
fn kill_until_none(limit: Duration, ended: &mut BTreeSet<i32>) -> Left {
    let deadline = Instant::now() + limit;
    loop {
        reap();
        let left = match look(Some(Signal::SIGKILL)) {
            Ok(v) if v.is_empty() => return Left::None,
            Ok(v) => {
                ended.extend(&v);
                Left::Some(v)
            }
            Err(_) if childless() => return Left::None,
            Err(e) => {
                more_descriptors(&e);
                Left::Unknown(e)
            }
        };
        if Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends SIGTERM (and SIGCONT, so stopped ones see it) to each of `pids` not yet in `sent`.
fn terminate(pids: &[i32], sent: &mut BTreeSet<i32>) {
    for &p in pids {
        if sent.insert(p) {
            let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
            let _ = kill(Pid::from_raw(p), Signal::SIGCONT);
        }
    }
}

/// What is said when SIGKILL rounds leave some process behind, or `/proc` could not be read.
fn report_left(left: &Left, whose: &str) {
    let tail = "it runs on unsupervised: its writes fail (ENOSYS), and the daemon refuses it";
    match left {
        Left::None => {}
        Left::Some(pids) => crate::error::say(&format!(
            "hallpass: could not end {} {whose} ({}), SIGKILL after SIGKILL for {}s; {tail}",
            plural(pids.len()),
            list(pids),
            GRACE.as_secs()
        )),
        Left::Unknown(e) => crate::error::say(&format!(
            "hallpass: cannot list the processes {whose} (reading /proc: {e}), tried for {}s; \
             if any is still running, {tail}",
            GRACE.as_secs()
        )),
    }
}

/// Ends every process of the session: SIGTERM (and SIGCONT, so stopped ones see it) now,
/// SIGKILL to what is left after [`GRACE`], from a thread of its own, until none is left.
/// Says what it did on stderr.
pub fn stop_all(why: &str) {
    let mut sent = BTreeSet::new();
    match descendants() {
        Ok(pids) if pids.is_empty() => return,
        Ok(pids) => {
            terminate(&pids, &mut sent);
            crate::error::say(&format!(
                "hallpass: {why}: sent SIGTERM to {} still running ({}); SIGKILL in {}s to any left",
                plural(pids.len()),
                list(&pids),
                GRACE.as_secs()
            ));
        }
        Err(e) => {
            more_descriptors(&e);
            crate::error::say(&format!(
                "hallpass: {why}: cannot list the processes still running (reading /proc: {e}); SIGKILL in {}s to any left",
                GRACE.as_secs()
            ));
        }
    }
    std::thread::spawn(move || {
        let deadline = Instant::now() + GRACE;
        // Those that come along meanwhile get SIGTERM too.
        while Instant::now() < deadline {
            if let Ok(pids) = descendants() {
                if pids.is_empty() {
                    return;
                }
                terminate(&pids, &mut sent);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut killed = BTreeSet::new();
        let left = kill_until_none(GRACE, &mut killed);
        if !killed.is_empty() {
            let killed: Vec<i32> = killed.into_iter().collect();
            crate::error::say(&format!(
                "hallpass: sent SIGKILL to {} that outlived SIGTERM ({})",
                plural(killed.len()),
                list(&killed)
            ));
        }
        report_left(&left, "still running");
    });
}

/// Without `--wait=all`, the session ends with the command: what it left behind is ended
/// too (SIGTERM, then SIGKILL after a second, again until none is left), while still
/// supervised, and reaped. Returns how many there were.
pub fn end_leftovers() -> usize {
    let mut sent = BTreeSet::new();
    let mut unlisted = None;
    match descendants() {
        Ok(pids) if pids.is_empty() => return 0,
        Ok(pids) => terminate(&pids, &mut sent),
        Err(_) if childless() => return 0,
        Err(e) => {
            more_descriptors(&e);
            unlisted = Some(e);
        }
    }
    let deadline = Instant::now() + LEFTOVER_TERM;
    while Instant::now() < deadline {
        reap();
        match descendants() {
            Ok(pids) if pids.is_empty() => {
                unlisted = None;
                break;
            }
            // Those that come along meanwhile get SIGTERM too.
            Ok(pids) => {
                unlisted = None;
                terminate(&pids, &mut sent);
            }
            Err(_) if childless() => {
                unlisted = None;
                break;
            }
            Err(e) => {
                more_descriptors(&e);
                unlisted = Some(e);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut ended = sent;
    // Gone already, and the last look could list them: nothing more to do.
    let left = if unlisted.is_none() && descendants().is_ok_and(|v| v.is_empty()) {
        Left::None
    } else {
        kill_until_none(GRACE, &mut ended)
    };
    reap();
    let ended: Vec<i32> = ended.into_iter().collect();
    if !ended.is_empty() {
        crate::error::say(&format!(
            "hallpass: ended {} the command left behind ({}); --wait=all keeps supervising them instead",
            plural(ended.len()),
            list(&ended)
        ));
    }
    report_left(&left, "the command left behind");
    ended.len()
}

/// Collects the exit status of every child that has exited.
pub fn reap() {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if st == WaitStatus::StillAlive {
            break;
        }
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 process".into()
    } else {
        format!("{n} processes")
    }
}

fn list(pids: &[i32]) -> String {
    let shown: Vec<String> = pids.iter().take(10).map(|p| format!("pid {p}")).collect();
    let more = if pids.len() > 10 { ", ..." } else { "" };
    format!("{}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_and_the_last_pid() {
        let me = std::process::id() as i32;
        assert_eq!(
            parent_of(me).unwrap(),
            Some(nix::unistd::getppid().as_raw())
        );
        // Gone is not an error.
        assert_eq!(parent_of(i32::MAX).unwrap(), None);
        assert!(last_pid().unwrap() >= me || last_pid().unwrap() > 0);
    }

    #[test]
    fn a_child_is_a_descendant_until_reaped() {
        let mut c = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = c.id() as i32;
        assert!(descendants().unwrap().contains(&pid));
        assert!(!none_left().unwrap());
        c.kill().unwrap();
        c.wait().unwrap();
        assert!(!descendants().unwrap().contains(&pid));
    }
}
