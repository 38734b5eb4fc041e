//! Starts a program detached from us: in its own session, and not our child (double fork), so
//! it outlives us. (A launcher that is already a child subreaper, starting a new daemon
//! mid-session, inherits it all the same; `procs` keeps it out of the session's processes.)

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Spawns `cmd` detached and returns once the intermediate process has exited.
pub fn spawn_detached(mut cmd: Command) -> io::Result<()> {
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (sigemptyset, sigprocmask, setsid, fork, _exit) on a
    // sigset on its own stack; it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            // The mask survives exec: the daemon must not inherit the signals a launcher
            // blocks for itself (SIGTERM among them).
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => Ok(()),
                _ => libc::_exit(0),
            }
        });
    }
    let status = cmd.spawn()?.wait()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "the starter exited with {status}"
        )));
    }
    Ok(())
}
