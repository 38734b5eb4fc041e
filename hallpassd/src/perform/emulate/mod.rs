//! Performing a write: each one the daemon makes for a process (strict mode's, lite mode's
//! binds and `openat2`) is made through descriptors, and the syscall answered with its result.
//!
//! [`prepare`] reads the arguments once, walks every path to descriptors the daemon holds
//! ([`super::walk`]) and names what they are for the policy. [`Action::perform`] then acts on
//! those descriptors only: a directory entry by name in a held directory, or a held object
//! through `/proc/self/fd/N`. Nothing is looked up again from a string, so a symlink,
//! directory or argument swapped after the check cannot redirect the write. Opens are
//! answered with the descriptor itself (`SECCOMP_IOCTL_NOTIF_ADDFD`).
//!
//! Errors are the kernel's own wherever the daemon makes the same call the target would; the
//! target's umask is applied, and the daemon acts with its credentials (`creds.rs`).
//!
//! Here the types; `calls.rs` prepares each family of syscalls (`meta.rs` those that change
//! metadata, `tty.rs` a terminal's settings, `connect.rs` a connection to a service,
//! `send.rs` a datagram sent to one), `args.rs` reads and looks up their arguments,
//! `call.rs` makes the call and answers.

mod args;
mod call;
mod calls;
pub mod connect;
mod meta;
pub mod send;
mod tty;

pub use args::OPEN_RETRIES;
use args::*;

pub use call::{answer, Outcome};
pub use calls::prepare;

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use nix::errno::Errno;

use super::creds::{as_target, read_proc, without_mknod};
use super::walk::{self, Base, Entry, Last, Roots, Rules, Walker, Who};
use crate::mem::{Lender, Memory};
use crate::resolve::Resolved;
use crate::sys::fsops::{self, OpenHow, Sys};
use crate::sys::seccomp::{self, Notif, Reply};
use crate::syscalls::{
    is_write_open, makes_device, Kind, Syscall, AT_EMPTY_PATH, AT_SYMLINK_FOLLOW,
    AT_SYMLINK_NOFOLLOW, TIOCGPTPEER, WRITE_IOCTLS,
};

/// A syscall being prepared: its name, its arguments, the process, and a walker of the
/// process's lookups.
pub(super) struct Call<'c, 't, 'r> {
    pub name: &'static str,
    pub a: &'c [u64; 6],
    pub t: &'c mut Target<'t>,
    pub w: &'c mut Walker<'r>,
}

/// What a notification asks for, in strict mode.
pub enum Prepared {
    /// A write: the objects the policy decides on, and the operation on the held descriptors.
    Write {
        syscall: &'static str,
        paths: Vec<Resolved>,
        action: Action,
    },
    /// Not a write, but its arguments are in memory the kernel would read again (a
    /// read-only `openat2`, a `bind` to an address that makes no file): performed all the
    /// same, with the daemon's copy of them, so that swapping them cannot turn it into one.
    Perform(Action),
    /// An exec, reported (lent memory descriptors go stale).
    Pass { exec: bool },
    /// Answered without a decision: the kernel's error for these arguments (a missing
    /// directory, a bad descriptor...), or a refusal; 0 for a call that succeeds doing
    /// nothing (`utimensat` with both times omitted).
    Fail(i32),
}

/// A write of `paths` that `action` makes, for syscall `name`, to decide.
fn write(name: &'static str, paths: Vec<Resolved>, action: Action) -> Sys<Prepared> {
    Ok(Prepared::Write {
        syscall: name,
        paths,
        action,
    })
}

/// An object acted on.
pub enum Obj {
    /// The object itself, symlinks followed: acted on through `/proc/self/fd/N`.
    Held(OwnedFd),
    /// A directory entry, not followed: acted on by name in the held directory.
    Entry(Entry),
}

/// The operation, on held descriptors only.
pub enum Action {
    Open {
        entry: Entry,
        flags: i32,
        mode: u32,
        /// For `openat2`: its `resolve`, kept for the kernel's checks of the last step.
        how: Option<OpenHow>,
    },
    /// `TIOCGPTPEER`: the other end of a pseudo-terminal the process made, opened by the
    /// daemon from its master (`fd`). Not a write anyone decides: the pty is the process's
    /// own. Performed because the process's Landlock domain would refuse the kernel's open
    /// of `/dev/pts/N`, which it lets nobody write beyond the session's terminal.
    PtyPeer {
        master: OwnedFd,
        flags: i32,
    },
    /// An open of a held object: `O_TMPFILE` in a directory, `/proc/PID/fd/N`, a tty.
    Reopen {
        obj: OwnedFd,
        flags: i32,
        mode: u32,
    },
    Mkdir {
        entry: Entry,
        mode: u32,
    },
    Mknod {
        entry: Entry,
        mode: u32,
        dev: u64,
    },
    Unlink {
        entry: Entry,
        flags: i32,
    },
    Rename {
        from: Entry,
        to: Entry,
        flags: u32,
    },
    Link {
        from: Obj,
        to: Entry,
        empty: bool,
    },
    Symlink {
        target: CString,
        entry: Entry,
    },
    Chmod {
        obj: Obj,
        mode: u32,
    },
    Chown {
        obj: Obj,
        uid: u32,
        gid: u32,
    },
    Truncate {
        obj: OwnedFd,
        len: i64,
    },
    Times {
        obj: Obj,
        times: Option<[libc::timespec; 2]>,
    },
    SetXattr {
        obj: Obj,
        name: CString,
        value: Vec<u8>,
        flags: i32,
    },
    RemoveXattr {
        obj: Obj,
        name: CString,
    },
    Ioctl {
        fd: OwnedFd,
        cmd: u32,
        arg: Arg,
    },
    /// A change of a terminal's settings, size... (`tty.rs`).
    Terminal(tty::TtyChange),
    /// Left to the kernel once allowed: a call whose effect it confines itself
    /// (`TIOCSPGRP`, `TIOCSCTTY`: see `tty.rs`).
    Continue,
    FileSetattr {
        obj: Obj,
        attr: Vec<u8>,
        size: usize,
    },
    Bind {
        sock: OwnedFd,
        entry: Entry,
        addr: Vec<u8>,
    },
    /// A bind that makes no file (another family, an abstract Unix address).
    BindAddr {
        sock: OwnedFd,
        addr: Vec<u8>,
    },
    /// A connection, made on the process's socket ([`connect`]).
    Connect(connect::Connect),
    /// Messages sent on the process's socket ([`send`]).
    Send(send::Send),
}

impl Action {
    /// Where a connection or a datagram goes, when it is a Unix socket to decide on.
    pub fn dest_mut(&mut self) -> Option<&mut connect::Dest> {
        match self {
            Action::Connect(c) => Some(&mut c.dest),
            Action::Send(s) => s.dest.as_mut(),
            _ => None,
        }
    }

    /// A send, which may wait for the other end (see `session/later.rs`).
    pub fn sends(&self) -> bool {
        matches!(self, Action::Send(_))
    }
}

/// An ioctl argument: bytes read from the target, or a descriptor taken from it.
pub enum Arg {
    Bytes(Vec<u8>),
    Fd(OwnedFd),
    /// `struct file_clone_range`, whose first field is the source descriptor taken.
    Range(Vec<u8>, OwnedFd),
}

/// What is needed to prepare and perform for one target thread.
pub struct Target<'a> {
    pub tid: i32,
    /// Performing for lite mode (binds and `openat2`, which it performs too).
    pub lite: bool,
    pub session: i32,
    /// The session's terminals (the pty hallpass made, or the one it was started on).
    pub ttys: &'a [PathBuf],
    /// The same by device, and the ptys the session made ([`crate::terminal::Own`]).
    pub own: &'a crate::terminal::Own,
    pub mem: &'a mut Memory,
    pub lender: &'a mut dyn Lender,
    /// The session's kept decision paths of descriptors ([`crate::dircache`]).
    pub descs: &'a crate::dircache::DirCache,
}

/// An error reading the target's arguments: the kernel would have said EFAULT (or
/// ENAMETOOLONG for a path too long).
pub(in crate::perform) fn read_err(e: std::io::Error) -> Errno {
    match e.raw_os_error() {
        Some(libc::ENAMETOOLONG) => Errno::ENAMETOOLONG,
        _ => Errno::EFAULT,
    }
}

pub(super) const O_TMPFILE: i32 = libc::O_TMPFILE & !libc::O_DIRECTORY;

// include/uapi/linux/fs.h
pub(super) const FICLONE: u32 = 0x4004_9409;
pub(super) const FICLONERANGE: u32 = 0x4020_940d;
pub(super) const FIDEDUPERANGE: u32 = 0xc018_9436;
