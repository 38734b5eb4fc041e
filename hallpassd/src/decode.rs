//! Turns a seccomp notification into what it would write: the syscall's name and the resolved
//! path(s), read from the target's memory and `/proc` with the layout the syscall table gives.

use std::io;
use std::path::{Path, PathBuf};

use crate::dircache::{DirCache, ProcDirs};
use crate::mem::{Lender, Memory};
use crate::reach::process_call;
use crate::resolve::{base_of, fd_path, object_of, resolve, Resolved, Target};
use crate::sys::seccomp::Notif;
use crate::syscalls::{
    is_write_open, tty_ioctl, Follow, Kind, Lookup, PathArg, Syscall, AT_EMPTY_PATH,
    AT_SYMLINK_FOLLOW, AT_SYMLINK_NOFOLLOW, O_CREAT, O_EXCL, O_NOFOLLOW, TIOCSPGRP,
};
use crate::terminal::{pty_index, Own, Tty};
use std::sync::Arc;

/// What a notification asks for.
#[derive(Debug)]
pub enum Op {
    /// A write to these objects (one, or two for a rename or link).
    Write {
        syscall: &'static str,
        paths: Vec<Resolved>,
    },
    /// Nothing to decide: not a write after all (a read-only `openat2`, an inet `bind`), or an
    /// `execve` reported for the memory cache.
    Pass { exec: bool },
    /// Refused whatever the policy says.
    Refuse(i32),
    /// A connection to the Unix socket at `path` (a file, or `@name` for an abstract one),
    /// which lite mode logs when a service outside the session listens there.
    Connect {
        path: Resolved,
        name: Option<crate::service::Name>,
    },
}

/// Why a notification could not be decoded; the write is then denied.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("syscall {0} is not one hallpass intercepts")]
    Unknown(i32),
    #[error("syscall from a foreign architecture {0:#x}")]
    Arch(u32),
    #[error("{syscall}: cannot read its arguments: {source}")]
    Read {
        syscall: &'static str,
        source: io::Error,
    },
    #[error("{syscall}: {why}")]
    Unsupported {
        syscall: &'static str,
        why: &'static str,
    },
}

const AF_UNIX: u16 = libc::AF_UNIX as u16;
/// `RESOLVE_IN_ROOT` (`include/uapi/linux/openat2.h`).
const RESOLVE_IN_ROOT: u64 = 0x10;

/// Decodes one notification.
pub struct Decoder {
    lookup: Lookup,
    arch: u32,
    /// The session's command, for [`Target::session`].
    session: i32,
    /// Where the cwd and descriptors of the threads are read.
    procs: ProcDirs,
    /// The session's own terminals, which the commands may change undecided.
    own: Arc<Own>,
}

impl Decoder {
    /// A decoder for a session whose command is `session` (its first pid; 0 if unknown).
    pub fn new(arch: crate::syscalls::Arch, session: i32) -> Decoder {
        Decoder {
            lookup: Lookup::new(arch),
            arch: arch.audit(),
            session,
            procs: ProcDirs::new(),
            own: Arc::new(Own::default()),
        }
    }

    /// The decoder, deciding terminal changes on the session's own terminals `own`.
    pub fn with_terminals(self, own: Arc<Own>) -> Decoder {
        Decoder { own, ..self }
    }

    /// A decoder that resolves directory descriptors through `cache` (lite mode).
    pub fn with_cache(arch: crate::syscalls::Arch, session: i32, cache: Arc<DirCache>) -> Decoder {
        Decoder {
            procs: ProcDirs::with_cache(cache),
            ..Decoder::new(arch, session)
        }
    }

    /// The syscall of `n`, if it is one of ours on our architecture.
    pub fn syscall(&self, n: &Notif) -> Option<&'static Syscall> {
        if n.data.arch != self.arch {
            return None;
        }
        self.lookup.get(n.data.nr)
    }

    pub fn decode(
        &mut self,
        n: &Notif,
        mem: &mut Memory,
        lender: &mut dyn Lender,
    ) -> Result<Op, DecodeError> {
        if n.data.arch != self.arch {
            return Err(DecodeError::Arch(n.data.arch));
        }
        let sc = self
            .lookup
            .get(n.data.nr)
            .ok_or(DecodeError::Unknown(n.data.nr))?;
        let t = Target {
            tid: n.pid as i32,
            tgid: 0,
            session: self.session,
        };
        let procs = &mut self.procs;
        let args = &n.data.args;
        let err = |source: io::Error| DecodeError::Read {
            syscall: sc.name,
            source,
        };
        let one = |r: io::Result<Resolved>| -> Result<Op, DecodeError> {
            Ok(Op::Write {
                syscall: sc.name,
                paths: vec![r.map_err(err)?],
            })
        };
        match sc.kind {
            Kind::Open { dirfd, path, flags } => {
                let flags = flags.map_or(libc::O_CREAT as u32 | libc::O_WRONLY as u32, |f| {
                    args[f as usize] as u32
                });
                let dirfd = dirfd.map(|d| args[d as usize] as i32);
                open(
                    sc,
                    t,
                    dirfd,
                    args[path as usize],
                    flags as u64,
                    mem,
                    lender,
                    procs,
                )
            }
            Kind::Openat2 { dirfd, path, how } => {
                let size = args[3] as usize;
                if size < 24 {
                    // The kernel fails it with EINVAL; nothing to decide.
                    return Ok(Op::Pass { exec: false });
                }
                let mut raw = [0u8; 24];
                mem.read_exact(t.tid, args[how as usize], &mut raw, lender)
                    .map_err(err)?;
                let flags = u64::from_ne_bytes(raw[0..8].try_into().unwrap());
                let resolve_flags = u64::from_ne_bytes(raw[16..24].try_into().unwrap());
                if resolve_flags & RESOLVE_IN_ROOT != 0 && is_write_open(flags as u32) {
                    return Err(DecodeError::Unsupported {
                        syscall: sc.name,
                        why: "RESOLVE_IN_ROOT is not supported",
                    });
                }
                open(
                    sc,
                    t,
                    Some(args[dirfd as usize] as i32),
                    args[path as usize],
                    flags,
                    mem,
                    lender,
                    procs,
                )
            }
            Kind::Paths(list) | Kind::Utimensat(list) | Kind::Mknod { paths: list, .. } => {
                if writes_nothing(sc, t, args, mem, lender) {
                    return Ok(Op::Pass { exec: false });
                }
                let mut paths = Vec::with_capacity(list.len());
                for pa in list {
                    paths.push(path_arg(t, pa, args, mem, lender, procs).map_err(err)?);
                }
                Ok(Op::Write {
                    syscall: sc.name,
                    paths,
                })
            }
            Kind::Ioctl { fd, cmd, .. } => {
                let fd = args[fd as usize] as i32;
                let (own, mem) = (&*self.own, &*mem);
                let change = tty_ioctl(args[cmd as usize]).is_some();
                match terminal_of(t, fd, change, own, procs, mem, lender).map_err(err)? {
                    // The kernel refuses it on anything but the caller's own controlling
                    // terminal: nothing to ask about.
                    Some((tty, _))
                        if args[cmd as usize] as u32 == TIOCSPGRP
                            && crate::terminal::controlling(t.tid) != Some(tty.dev) =>
                    {
                        Ok(Op::Refuse(libc::ENOTTY))
                    }
                    Some((_, true)) => Ok(Op::Pass { exec: false }),
                    Some((tty, false)) => Ok(Op::Write {
                        syscall: sc.name,
                        paths: vec![Resolved::Path(tty.path())],
                    }),
                    // No terminal: a terminal change means nothing to it (the kernel says
                    // ENOTTY); any other command is a write of the object.
                    None if change => Ok(Op::Pass { exec: false }),
                    None => one(fd_path(t, fd, procs)),
                }
            }
            Kind::FdMeta { fd } => one(fd_path(t, args[fd as usize] as i32, procs)),
            Kind::Bind { addr, len } => {
                let sa = unix_addr(t, args, addr, len, mem, lender).map_err(err)?;
                // An abstract address (leading NUL) or another family creates no file.
                let Some(path) = sa.filter(|p| p[0] != 0) else {
                    return Ok(Op::Pass { exec: false });
                };
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                let base = base_of(t, None, procs).map_err(err)?;
                one(resolve_from(t, base, &path[..end], false))
            }
            Kind::Connect { addr, len, .. } => {
                let Some(path) = unix_addr(t, args, addr, len, mem, lender).map_err(err)? else {
                    return Ok(Op::Pass { exec: false });
                };
                if path[0] == 0 {
                    let name = path[1..].to_vec();
                    return Ok(Op::Connect {
                        path: Resolved::Path(crate::service::abstract_shown(&name)),
                        name: Some(crate::service::Name::Abstract(name)),
                    });
                }
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                let base = base_of(t, None, procs).map_err(err)?;
                let path = resolve_from(t, base, &path[..end], true).map_err(err)?;
                let name = match &path {
                    Resolved::Path(p) => crate::service::file_name(p),
                    _ => None,
                };
                Ok(Op::Connect { path, name })
            }
            Kind::Exec => Ok(Op::Pass { exec: true }),
            // Lite mode lets sends through in the filter; strict mode performs them.
            Kind::Creds | Kind::Send { .. } => Ok(Op::Pass { exec: false }),
            // The filter lets it through; a notification would be a filter bug.
            Kind::Pass => Ok(Op::Pass { exec: false }),
            Kind::OtherProcess { .. } | Kind::Rlimit { .. } => {
                let mut read = |addr: u64, buf: &mut [u8]| mem.read_exact(t.tid, addr, buf, lender);
                Ok(match process_call(sc.kind, t, args, &mut read) {
                    Ok(()) => Op::Pass { exec: false },
                    Err(e) => Op::Refuse(e),
                })
            }
            Kind::Refuse(e) => Ok(Op::Refuse(e)),
            // The filter decides it; a notification would be a filter bug: refuse.
            Kind::Seccomp { .. } => Ok(Op::Refuse(libc::EBUSY)),
            Kind::Namespaces { .. } => Ok(Op::Refuse(libc::EPERM)),
            Kind::RefuseStrict(e) => Ok(Op::Refuse(e)),
            // Lite mode's: the session takes note before it decodes anything.
            Kind::OwnDomain => Ok(Op::Pass { exec: false }),
        }
    }
}

/// The terminal the target's descriptor `fd` reaches, and whether it is the session's own;
/// `None` if it is no terminal. Lite mode decides on what it finds: a device the launcher
/// registered is known by its number at once; a pty by its number too; through `/dev/tty`,
/// `/dev/console`, a pty master or `/dev/tty0` (majors 5 and 4), the descriptor is taken and
/// asked which terminal it reaches. So is any other device for a terminal `change`; for
/// another command (a GPU's, say) such a device is decided by its own name, as before.
fn terminal_of(
    t: Target,
    fd: i32,
    change: bool,
    own: &Own,
    procs: &mut ProcDirs,
    mem: &Memory,
    lender: &mut dyn Lender,
) -> io::Result<Option<(Tty, bool)>> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    let st = procs
        .stat(t.tid, &format!("fd/{fd}"))
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => io::Error::from_raw_os_error(libc::EBADF),
            _ => e,
        })?;
    if st.st_mode & libc::S_IFMT != libc::S_IFCHR {
        return Ok(None);
    }
    let plain = Tty {
        dev: st.st_rdev,
        master: false,
    };
    if own.registered(st.st_rdev) {
        return Ok(Some((plain, true)));
    }
    let indirect = matches!(libc::major(st.st_rdev), 4 | 5);
    let tty = if pty_index(st.st_rdev).is_some() {
        plain
    } else if !change && !indirect {
        return Ok(None);
    } else {
        let held = crate::fds::take_fd_of(t.tid, fd, mem, lender)
            .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
        match Tty::of_held(std::os::fd::AsFd::as_fd(&held)) {
            Some(tty) => tty,
            None => return Ok(None),
        }
    };
    Ok(Some((tty, own.owns(t.tid, tty))))
}

/// The path part of the Unix socket address at argument `addr`, of the length at argument
/// `len` (`sun_path`, not NUL-terminated when it fills the structure); `None` for an address
/// of another family, or too short to hold a path.
fn unix_addr(
    t: Target,
    args: &[u64; 6],
    addr: u8,
    len: u8,
    mem: &mut Memory,
    lender: &mut dyn Lender,
) -> io::Result<Option<Vec<u8>>> {
    let len = (args[len as usize] as usize).min(std::mem::size_of::<libc::sockaddr_un>());
    if len <= 2 {
        return Ok(None);
    }
    let mut sa = vec![0u8; len];
    mem.read_exact(t.tid, args[addr as usize], &mut sa, lender)?;
    Ok((u16::from_ne_bytes([sa[0], sa[1]]) == AF_UNIX).then(|| sa.split_off(2)))
}

#[allow(clippy::too_many_arguments)]
fn open(
    sc: &'static Syscall,
    t: Target,
    dirfd: Option<i32>,
    path: u64,
    flags: u64,
    mem: &mut Memory,
    lender: &mut dyn Lender,
    procs: &mut ProcDirs,
) -> Result<Op, DecodeError> {
    let flags = flags as u32;
    if !is_write_open(flags) {
        return Ok(Op::Pass { exec: false });
    }
    let err = |source: io::Error| DecodeError::Read {
        syscall: sc.name,
        source,
    };
    let s = mem.read_cstr(t.tid, path, lender).map_err(err)?;
    // O_CREAT|O_EXCL fails on an existing symlink rather than following it.
    let follow = flags & O_NOFOLLOW == 0 && flags & (O_CREAT | O_EXCL) != (O_CREAT | O_EXCL);
    let mut r = relative(t, dirfd, &s, procs).and_then(|base| resolve_from(t, base, &s, follow));
    // `/dev/tty` opens the controlling terminal, whichever it is: decided as that one, so a
    // process that made another terminal its own (`TIOCSCTTY`) is asked about writing there.
    if matches!(&r, Ok(Resolved::Path(p)) if p == Path::new("/dev/tty")) {
        if let Some(tty) = crate::resolve::controlling_terminal(t.tid).map_err(err)? {
            r = Ok(Resolved::Path(tty));
        }
    }
    // A device node in the project is the device, not the project.
    if let Ok(Resolved::Path(p)) = &r {
        if let Some(dev) = crate::resolve::stray_device(p) {
            r = Ok(Resolved::Path(dev));
        }
    }
    Ok(Op::Write {
        syscall: sc.name,
        paths: vec![r.map_err(err)?],
    })
}

/// The base for `path`: its dirfd (or the cwd) when relative, `/` when absolute.
fn relative(
    t: Target,
    dirfd: Option<i32>,
    path: &[u8],
    procs: &mut ProcDirs,
) -> io::Result<Resolved> {
    if path.first() == Some(&b'/') {
        Ok(Resolved::Path(PathBuf::from("/")))
    } else {
        base_of(t, dirfd, procs)
    }
}

fn resolve_from(t: Target, base: Resolved, path: &[u8], follow: bool) -> io::Result<Resolved> {
    match base {
        Resolved::Path(b) => resolve(t, &b, path, follow),
        // A dirfd that is a pipe or socket: the kernel fails the call with ENOTDIR.
        Resolved::NotAFile(_) => Err(io::Error::from_raw_os_error(libc::ENOTDIR)),
    }
}

fn path_arg(
    t: Target,
    pa: &PathArg,
    args: &[u64; 6],
    mem: &mut Memory,
    lender: &mut dyn Lender,
    procs: &mut ProcDirs,
) -> io::Result<Resolved> {
    let dirfd = pa.dirfd.map(|d| args[d as usize] as i32);
    let ptr = args[pa.path as usize];
    if ptr == 0 && pa.null_is_fd {
        return fd_path(t, dirfd.unwrap_or(libc::AT_FDCWD), procs);
    }
    let s = mem.read_cstr(t.tid, ptr, lender)?;
    if s.is_empty() {
        if let Some(f) = pa.empty_path {
            if args[f as usize] as u32 & AT_EMPTY_PATH != 0 {
                return object_of(t, dirfd, procs);
            }
        }
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    let follow = match pa.follow {
        Follow::Never => false,
        Follow::Always => true,
        Follow::UnlessNoFollow { flags } => args[flags as usize] as u32 & AT_SYMLINK_NOFOLLOW == 0,
        Follow::IfFollow { flags } => args[flags as usize] as u32 & AT_SYMLINK_FOLLOW != 0,
    };
    let base = relative(t, dirfd, &s, procs)?;
    resolve_from(t, base, &s, follow)
}

/// Whether the kernel makes `sc` write nothing whatever its path names, and before it looks
/// at any permission, so that there is nothing to decide: `utimensat` with both times
/// `UTIME_OMIT` (it succeeds at once), and `rmdir`, `unlink`, `mkdir` or `mknod` of the root,
/// `.` or `..` (refused once the path is walked: `do_rmdir`, `do_unlinkat`,
/// `filename_create`). Left to the kernel, they get its own answer, in its order.
fn writes_nothing(
    sc: &Syscall,
    t: Target,
    args: &[u64; 6],
    mem: &mut Memory,
    lender: &mut dyn Lender,
) -> bool {
    let path = match sc.name {
        "utimensat" => {
            let mut raw = [0u8; 32];
            let omitted = |raw: &[u8; 32], i: usize| {
                i64::from_ne_bytes(raw[i..i + 8].try_into().unwrap()) == libc::UTIME_OMIT
            };
            return args[2] != 0
                && mem.read_exact(t.tid, args[2], &mut raw, lender).is_ok()
                && omitted(&raw, 8)
                && omitted(&raw, 24);
        }
        "rmdir" | "unlink" | "mkdir" | "mknod" => args[0],
        "unlinkat" | "mkdirat" | "mknodat" => args[1],
        _ => return false,
    };
    let Ok(s) = mem.read_cstr(t.tid, path, lender) else {
        return false;
    };
    let bare = match s.iter().rposition(|&c| c != b'/') {
        Some(end) => &s[..=end],
        None => return !s.is_empty(),
    };
    let last = bare.rsplit(|&c| c == b'/').next().unwrap_or(bare);
    last == b"." || last == b".."
}
