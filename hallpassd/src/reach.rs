//! Calls that act on another process and that Landlock does not confine (its scheduling,
//! priority, resource limits: [`Kind::OtherProcess`], [`Kind::Rlimit`]): whether one may go
//! on, the same in both modes, so it reaches no process beyond the session. A leaf that lite
//! mode's decoder and strict mode's preparing both ask.

use std::io;

use crate::resolve::Target;
use crate::syscalls::Kind;

/// Whether a call on a process ([`Kind::OtherProcess`], [`Kind::Rlimit`]) may go on: only on
/// the caller or a process of its session (the rest belong to the user's other work, which
/// the session must not slow down, starve or make dump core), and a new core limit only of
/// 0. `read` reads the target's memory. `Err` is the errno to fail it with.
pub fn process_call(
    kind: Kind,
    t: Target,
    args: &[u64; 6],
    read: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
) -> Result<(), i32> {
    // 0 is the caller itself.
    let reaches = |pid: i32| pid == 0 || t.reaches(pid);
    match kind {
        Kind::OtherProcess { pid, which } => {
            // A process group or every process of a user reaches beyond the session.
            if which.is_some_and(|(arg, process)| args[arg as usize] as u32 != process) {
                return Err(libc::EPERM);
            }
            if !reaches(args[pid as usize] as i32) {
                return Err(libc::EPERM);
            }
            Ok(())
        }
        Kind::Rlimit { pid, resource, new } => {
            if pid.is_some_and(|p| !reaches(args[p as usize] as i32)) {
                return Err(libc::EPERM);
            }
            let new = args[new as usize];
            if args[resource as usize] as u32 == crate::syscalls::RLIMIT_CORE && new != 0 {
                // `struct rlimit64`: the soft limit, then the hard one. The kernel reads it
                // again; raising it after this check takes root, whose core dump Landlock
                // still confines in strict mode.
                let mut raw = [0u8; 16];
                read(new, &mut raw).map_err(|_| libc::EFAULT)?;
                if raw != [0u8; 16] {
                    return Err(libc::EPERM);
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
