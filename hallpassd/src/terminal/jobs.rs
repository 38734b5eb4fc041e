//! The kernel's job control for a terminal change the daemon makes for a process
//! (`__tty_check_change` in `drivers/tty/tty_jobctrl.c`): a process of a background group
//! that changes its controlling terminal's settings is stopped with `SIGTTOU`, unless it
//! ignores or blocks the signal; one of an orphaned group gets `EIO`. Made by the daemon, the
//! change would meet no such check, so it is made here first, from `/proc`.

use super::{decode_dev, Dev};

/// What job control makes of a terminal change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Not the caller's controlling terminal, or the caller is in its foreground: go on.
    Proceed,
    /// A background group: it is stopped with `SIGTTOU` and the call made again once it
    /// goes on.
    Stop { pgrp: i32 },
    /// A background group that no shell would continue (orphaned): `EIO`.
    Eio,
}

/// The fields of `/proc/PID/stat` job control looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stat {
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// The controlling terminal's device, 0 for none.
    pub tty: Dev,
    /// The foreground group of the controlling terminal, -1 for none.
    pub tpgid: i32,
}

/// Parses `/proc/PID/stat`: the fields after the command name, which may hold spaces and
/// parentheses (proc_pid_stat(5)).
pub(super) fn parse_stat(s: &str) -> Option<Stat> {
    let after = s.get(s.rfind(')')? + 2..)?;
    let mut f = after.split(' ');
    let state = *f.next()?.as_bytes().first()?;
    let mut num = || -> Option<i64> { f.next()?.parse().ok() };
    let (ppid, pgrp, session, tty, tpgid) = (num()?, num()?, num()?, num()?, num()?);
    Some(Stat {
        state,
        ppid: ppid as i32,
        pgrp: pgrp as i32,
        session: session as i32,
        tty: if tty == 0 { 0 } else { decode_dev(tty as u32) },
        tpgid: tpgid as i32,
    })
}

fn stat_of(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// `SIGTTOU` blocked by thread `tid` or ignored by its process (`SigBlk`, `SigIgn` in
/// `/proc/TID/status`): the kernel then lets the change through.
fn ttou_ignored(tid: i32) -> bool {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return false;
    };
    let bit = 1u64 << (libc::SIGTTOU - 1);
    ["SigBlk:", "SigIgn:"].iter().any(|k| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|m| m & bit != 0)
    })
}

/// Whether process group `pgrp` of session `session` is orphaned: no live member has a
/// parent in another group of the same session (`will_become_orphaned_pgrp`).
fn orphaned(pgrp: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Some(p) = stat_of(pid).filter(|p| p.pgrp == pgrp && p.state != b'Z') else {
            continue;
        };
        if p.ppid <= 1 {
            continue;
        }
        if stat_of(p.ppid).is_some_and(|pp| pp.pgrp != pgrp && pp.session == p.session) {
            return false;
        }
    }
    true
}

/// What job control makes of thread `tid` changing terminal `dev`, as the kernel would
/// decide it now. A thread whose state cannot be read goes on: the change is made on the
/// terminal that was decided, whichever the answer.
pub fn job_control(tid: i32, dev: Dev) -> Job {
    let Some(st) = stat_of(tid) else {
        return Job::Proceed;
    };
    if st.tty != dev || st.tpgid <= 0 || st.tpgid == st.pgrp || ttou_ignored(tid) {
        return Job::Proceed;
    }
    if orphaned(st.pgrp) {
        return Job::Eio;
    }
    Job::Stop { pgrp: st.pgrp }
}
