//! The session's processes, as the launcher sees them: it is their child subreaper, so every
//! process the command starts (double-forked daemons included) stays its descendant.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long processes get after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);

/// The daemon's pid, when this process started it: as a child subreaper we inherit it when
/// its starter exits, but it is not the session's, and is never ended with it.
static DAEMON: AtomicI32 = AtomicI32::new(0);

/// Notes the daemon's pid (from the control socket's peer credentials).
pub fn set_daemon(pid: Option<i32>) {
    DAEMON.store(pid.unwrap_or(0), Ordering::Relaxed);
}

/// Every live descendant of this process but the daemon (and its own), from `/proc`.
pub fn descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(ppid) = parent_of(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let daemon = DAEMON.load(Ordering::Relaxed);
    let mut out = Vec::new();
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if c == daemon {
                continue;
            }
            out.push(c);
            todo.push(c);
        }
    }
    out.sort_unstable();
    out
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    // A zombie is already gone for our purpose.
    if after.starts_with('Z') {
        return None;
    }
    after.split(' ').nth(1)?.parse().ok()
}

/// Ends every process of the session: SIGTERM (and SIGCONT, so stopped ones see it) now,
/// SIGKILL to what is left after [`GRACE`], from a thread of its own. Says what it did on
/// stderr.
pub fn stop_all(why: &str) {
    let pids = descendants();
    if pids.is_empty() {
        return;
    }
    for &p in &pids {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
        let _ = kill(Pid::from_raw(p), Signal::SIGCONT);
    }
    crate::say(&format!(
        "hallpass: {why}: sent SIGTERM to {} still running ({}); SIGKILL in {}s to any left",
        plural(pids.len()),
        list(&pids),
        GRACE.as_secs()
    ));
    std::thread::spawn(|| {
        std::thread::sleep(GRACE);
        let left = descendants();
        // Again until none is left: one may fork while the others are killed.
        for _ in 0..50 {
            let now = descendants();
            if now.is_empty() {
                break;
            }
            for &p in &now {
                let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !left.is_empty() {
            crate::say(&format!(
                "hallpass: sent SIGKILL to {} that outlived SIGTERM ({})",
                plural(left.len()),
                list(&left)
            ));
        }
    });
}

/// Without `--wait=all`, the session ends with the command: what it left behind is ended
/// too (SIGTERM, then SIGKILL after a second), while still supervised, and reaped. Returns how
/// many there were.
pub fn end_leftovers() -> usize {
    let pids = descendants();
    if pids.is_empty() {
        return 0;
    }
    for &p in &pids {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
        let _ = kill(Pid::from_raw(p), Signal::SIGCONT);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while !descendants().is_empty() && std::time::Instant::now() < deadline {
        reap();
        std::thread::sleep(Duration::from_millis(10));
    }
    for p in descendants() {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
    while !descendants().is_empty() && std::time::Instant::now() < deadline + GRACE {
        reap();
        std::thread::sleep(Duration::from_millis(10));
    }
    reap();
    crate::say(&format!(
        "hallpass: ended {} the command left behind ({}); --wait=all keeps supervising them instead",
        plural(pids.len()),
        list(&pids)
    ));
    pids.len()
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
