//! Starts a program detached from us: in its own session, and not our child (double fork), so
//! it outlives us and is never reparented to a launcher acting as child subreaper.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Spawns `cmd` detached and returns once the intermediate process has exited.
pub fn spawn_detached(mut cmd: Command) -> io::Result<()> {
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (setsid, fork, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
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
