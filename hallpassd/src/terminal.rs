//! Which terminal an `ioctl` reaches, and whether it is the session's own. A command that
//! changes a terminal ([`crate::syscalls::TTY_IOCTLS`]: its settings, size, flow, foreground
//! group...) changes it natively on the session's own and is decided as a write of any
//! other: a command that opened the launcher's terminal read-only must not set its size
//! under the prompt bar, or its settings under the user's shell.
//!
//! A terminal is known by its device number, never by a path: the device of the object a
//! descriptor holds, and through `/dev/tty`, `/dev/console` or a pty master (whose device
//! says nothing of the terminal they reach) the one `TIOCGDEV` gives. Its name
//! (`/dev/pts/N`, `/dev/ttyN`) is only what the policy and the person see.
//!
//! The session's own terminals ([`Own`]): those the launcher registered (its pty under
//! `--prompt=ask`, else the terminal it was started on), a pty master (opening `ptmx` makes
//! a new pty: the session made it, unless the master came from outside, a descriptor from
//! before the session), and a pty whose master a process of the session holds (`script`,
//! tmux, an agent's shell tool made it), looked for in the calling process and its ancestors
//! up to the launcher. See ioctl_tty(2), `drivers/tty/tty_io.c`.

mod jobs;

pub use jobs::{job_control, Job};

use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::sys::fsops;
use crate::syscalls::TIOCGDEV;

/// A device number as `stat` gives it.
pub type Dev = libc::dev_t;

/// The terminal a descriptor reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tty {
    /// The terminal's device: for a pty master, its other end's.
    pub dev: Dev,
    /// The descriptor is a pty master (`/dev/ptmx`, or devpts's `ptmx`).
    pub master: bool,
}

/// `/dev/ptmx`'s device (`TTYAUX_MAJOR`, 2), also devpts's own `ptmx` node's.
fn ptmx() -> Dev {
    libc::makedev(5, 2)
}

impl Tty {
    /// The terminal the held descriptor `fd` reaches, `None` if it is none. `TIOCGDEV` only
    /// reads (it passes in the kernel for the process itself).
    pub fn of_held(fd: BorrowedFd<'_>) -> Option<Tty> {
        let st = fsops::fstat(fd).ok()?;
        if st.st_mode & libc::S_IFMT != libc::S_IFCHR {
            return None;
        }
        let mut raw = [0u8; 4];
        fsops::ioctl_ptr(fd, TIOCGDEV, &mut raw).ok()?;
        Some(Tty {
            dev: decode_dev(u32::from_ne_bytes(raw)),
            master: st.st_rdev == ptmx(),
        })
    }

    /// Whether it is a pseudo-terminal, of either end (whose output never waits).
    pub fn is_pty(&self) -> bool {
        self.master || pty_index(self.dev).is_some()
    }

    /// The name the policy decides on and a person reads.
    pub fn path(&self) -> PathBuf {
        path_of(self.dev)
    }
}

/// A device number as `TIOCGDEV` and `/proc/PID/stat` encode it (`new_encode_dev`).
pub fn decode_dev(nr: u32) -> Dev {
    let major = (nr >> 8) & 0xfff;
    let minor = (nr & 0xff) | ((nr >> 12) & 0xfff00);
    libc::makedev(major, minor)
}

/// The index of a pty's other end (`/dev/pts/N`): majors 136 to 143
/// (`UNIX98_PTY_SLAVE_MAJOR`, `include/uapi/linux/major.h`).
pub fn pty_index(dev: Dev) -> Option<u32> {
    let major = libc::major(dev);
    (136..144)
        .contains(&major)
        .then(|| (major - 136) * 256 + libc::minor(dev))
}

/// The name of terminal `dev`: `/dev/pts/N` for a pty, else its name in sysfs under `/dev`
/// (`/dev/tty1`, `/dev/ttyS0`), else `/dev/char/M:m`.
pub fn path_of(dev: Dev) -> PathBuf {
    if let Some(n) = pty_index(dev) {
        return PathBuf::from(format!("/dev/pts/{n}"));
    }
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let link = std::fs::read_link(format!("/sys/dev/char/{major}:{minor}"));
    match link.ok().as_deref().and_then(Path::file_name) {
        Some(name) => Path::new("/dev").join(name),
        None => PathBuf::from(format!("/dev/char/{major}:{minor}")),
    }
}

/// The controlling terminal of thread `tid`'s process, if it has one.
pub fn controlling(tid: i32) -> Option<Dev> {
    let (major, minor) = crate::resolve::controlling_terminal_device(tid).ok()??;
    Some(libc::makedev(major, minor))
}

/// The session's own terminals.
#[derive(Debug, Default)]
pub struct Own {
    /// The devices of the terminals the launcher registered.
    devs: Vec<Dev>,
    /// The launcher: the processes below it are the session's.
    launcher: i32,
}

impl Own {
    /// The terminals at `ttys` (as the launcher named them) of the session whose launcher is
    /// `launcher`.
    pub fn new(ttys: &[PathBuf], launcher: i32) -> Own {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let devs = ttys
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.file_type().is_char_device())
            .map(|m| m.rdev())
            .collect();
        Own { devs, launcher }
    }

    /// Whether `dev` is one the launcher registered: the quick test on a device `stat` gave.
    pub fn registered(&self, dev: Dev) -> bool {
        self.devs.contains(&dev)
    }

    /// Whether `tty`, reached by thread `tid`, is the session's own.
    pub fn owns(&self, tid: i32, tty: Tty) -> bool {
        tty.master
            || self.registered(tty.dev)
            || pty_index(tty.dev).is_some_and(|n| self.master_held(tid, n))
    }

    /// Whether the process of thread `tid`, or one of its ancestors below the launcher, holds
    /// the master of pty `index`. Only a chain that reaches the launcher is looked at: the
    /// processes of one that does not (reparented elsewhere) may not be the session's.
    fn master_held(&self, tid: i32, index: u32) -> bool {
        let Some(mut pid) = crate::process::tgid_of(tid) else {
            return false;
        };
        let mut chain = Vec::new();
        for _ in 0..256 {
            if pid == self.launcher {
                return chain.iter().any(|&p| holds_master(p, index));
            }
            if pid <= 1 {
                return false;
            }
            chain.push(pid);
            match crate::process::parent_of(pid) {
                Some(p) => pid = p,
                None => return false,
            }
        }
        false
    }
}

/// Whether process `pid` holds the master of pty `index`: a descriptor opened on a `ptmx`
/// whose `/proc/PID/fdinfo` says `tty-index: INDEX` (Linux 4.19; before it, none is found and
/// the pty is not the session's).
fn holds_master(pid: i32, index: u32) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    for e in dir.flatten() {
        let Ok(link) = std::fs::read_link(e.path()) else {
            continue;
        };
        if !link.as_os_str().as_bytes().ends_with(b"/ptmx") {
            continue;
        }
        let info = format!("/proc/{pid}/fdinfo/{}", e.file_name().to_string_lossy());
        let held = std::fs::read_to_string(info).is_ok_and(|s| {
            s.lines()
                .filter_map(|l| l.strip_prefix("tty-index:"))
                .any(|v| v.trim().parse() == Ok(index))
        });
        if held {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests;
