//! A terminal change in strict mode ([`crate::syscalls::TTY_IOCTLS`]): decided on the
//! terminal the process's very descriptor reaches, and made by the daemon on that
//! descriptor, so a descriptor swapped meanwhile (`dup2` from another thread) changes
//! nothing. On the session's own terminal it is made undecided; on any other it is a write
//! of that terminal (`crate::terminal`).
//!
//! Made by the daemon, a change meets none of the checks the kernel makes of the caller: job
//! control is applied first (`crate::terminal::jobs`), and the daemon acts with the
//! process's credentials. The two commands that only mean something for the caller itself
//! are left to the kernel instead: `TIOCSPGRP` acts on the caller's controlling terminal
//! only, and `TIOCSCTTY` takes only a terminal no session has (the filter refuses the steal),
//! so whatever descriptor the kernel then finds, it cannot reach another's terminal.

use super::*;
use crate::syscalls::{TtyArg, TtyIoctl, TIOCSCTTY, TIOCSPGRP};
use crate::terminal::{job_control, Job, Tty};

/// The argument of a terminal command, as the kernel would read it.
pub enum TtyVal {
    Nothing,
    Value(u64),
    Bytes(Vec<u8>),
}

/// A terminal command made on a held descriptor.
pub struct TtyChange {
    pub fd: OwnedFd,
    pub cmd: &'static TtyIoctl,
    pub arg: TtyVal,
    /// The terminal it reaches.
    pub tty: Tty,
}

/// `ERESTARTSYS` (`include/linux/errno.h`): the kernel makes the call again once the signal
/// sent with it is handled (the process stopped, then continued), as job control does.
const ERESTARTSYS: i32 = 512;

/// Prepares terminal command `tc` on the process's descriptor `a[0]`.
pub(super) fn terminal_call(
    Call { name, a, t, .. }: Call<'_, '_, '_>,
    tc: &'static TtyIoctl,
) -> Sys<Prepared> {
    let fd = take_fd(t, a[0] as i32)?;
    if fsops::getfl(fd.as_fd())? & libc::O_PATH != 0 {
        return Err(Errno::EBADF);
    }
    let Some(tty) = Tty::of_held(fd.as_fd()) else {
        // No terminal: the kernel says ENOTTY of a file, a pipe or a socket. Not made on
        // the object: a driver or file system that gives the number another meaning would
        // read its argument as it pleases, in the daemon's memory.
        return Err(Errno::ENOTTY);
    };
    let own = t.own.owns(t.tid, tty);
    let paths = vec![Resolved::Path(tty.path())];
    if tc.cmd == TIOCSPGRP || tc.cmd == TIOCSCTTY {
        if tc.cmd == TIOCSCTTY && a[2] as i32 == 1 {
            // The filter refuses a steal; a notification of one is a filter bug.
            return Err(Errno::EPERM);
        }
        if tc.cmd == TIOCSPGRP && crate::terminal::controlling(t.tid) != Some(tty.dev) {
            return Err(Errno::ENOTTY);
        }
        return match own {
            true => Ok(Prepared::Pass { exec: false }),
            false => write(name, paths, Action::Continue),
        };
    }
    let arg = read_arg(t, tc, a[2])?;
    let change = Action::Terminal(TtyChange {
        fd,
        cmd: tc,
        arg,
        tty,
    });
    match own {
        true => Ok(Prepared::Perform(change)),
        false => write(name, paths, change),
    }
}

fn read_arg(t: &mut Target<'_>, tc: &TtyIoctl, ptr: u64) -> Sys<TtyVal> {
    Ok(match tc.arg {
        TtyArg::Nothing => TtyVal::Nothing,
        TtyArg::Value => TtyVal::Value(ptr),
        TtyArg::Reads(n) => {
            let mut b = vec![0u8; n];
            read_bytes(t, ptr, &mut b)?;
            TtyVal::Bytes(b)
        }
    })
}

impl TtyChange {
    /// It may wait for a terminal to send its output or a break: not a pty's, which never
    /// waits.
    pub fn may_block(&self) -> bool {
        self.cmd.drains && !self.tty.is_pty()
    }

    /// Makes the command for thread `tid`, job control first. Through a pty master the
    /// kernel checks the master, never a controlling terminal, but for the settings, which
    /// it checks on the other end: that one case is made without the check.
    pub fn perform(&self, tid: i32) -> Reply {
        let checked = self.cmd.job_control && !self.tty.master;
        let job = match checked {
            true => job_control(tid, self.tty.dev),
            false => Job::Proceed,
        };
        match job {
            Job::Proceed => {}
            Job::Eio => return Reply::Fail(libc::EIO),
            Job::Stop { pgrp } => {
                // The thread itself first, so it has the signal when it wakes: the kernel
                // then stops it and makes the call again.
                fsops::signal_thread(tid, libc::SIGTTOU);
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pgrp),
                    nix::sys::signal::Signal::SIGTTOU,
                );
                return Reply::Fail(ERESTARTSYS);
            }
        }
        let fd = self.fd.as_fd();
        let r = match &self.arg {
            TtyVal::Nothing => fsops::ioctl_val(fd, self.cmd.cmd, 0),
            TtyVal::Value(v) => fsops::ioctl_val(fd, self.cmd.cmd, *v),
            TtyVal::Bytes(b) => fsops::ioctl_ptr(fd, self.cmd.cmd, &mut b.clone()),
        };
        match r {
            Ok(v) => Reply::Value(v),
            Err(e) => Reply::Fail(e as i32),
        }
    }
}
