//! How a process is shown to a person: its command as a question's chain names it (`npm
//! install`), its `comm`, and the chain of its parents up to the session's command. Read from
//! `/proc`; a process gone meanwhile shows as its pid.

use std::path::Path;

/// How a process shows in a question's chain: its program and first argument (`npm
/// install`), the script rather than the interpreter (`node /usr/bin/npm` shows as `npm`).
pub fn describe(pid: i32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let mut it = args.iter();
    let mut name = match it.next() {
        Some(a) => base(a),
        // A kernel thread or a zombie: its comm.
        None => return comm(pid),
    };
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
        match crate::peer::parent_of(p) {
            Some(pp) => p = pp,
            None => break,
        }
    }
    out
}
