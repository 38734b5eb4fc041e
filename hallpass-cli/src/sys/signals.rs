//! Waiting for one of a set of blocked signals, with a time limit (`sigtimedwait`), which
//! nix does not offer; and ending by SIGPIPE as other tools do when their reader goes away.

use std::time::Duration;

use nix::sys::signal::{SigSet, Signal};

/// The next signal of `set` (which must be blocked), or `None` once `limit` has passed
/// without one (or on an interruption).
pub fn wait(set: &SigSet, limit: Duration) -> Option<Signal> {
    let ts = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `set` and `ts` are live for the call; no siginfo is asked for.
    let r = unsafe { libc::sigtimedwait(set.as_ref(), std::ptr::null_mut(), &ts) };
    if r < 0 {
        return None;
    }
    Signal::try_from(r).ok()
}

/// Ends the process as a closed pipe ends a Unix tool: by SIGPIPE, with its default action
/// (the Rust runtime ignores it at start).
pub fn die_of_sigpipe() -> ! {
    // SAFETY: setting a signal's disposition to the default installs no handler; raising it
    // then ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE);
}
