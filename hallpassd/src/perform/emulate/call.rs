//! Making a prepared write on the descriptors it holds, as the process, and answering the
//! notification with the result.

use super::*;

/// What performing gives: the syscall's answer, or a descriptor to install and return.
pub enum Outcome {
    Reply(Reply),
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// The entry changed under the check (it became a symlink): prepare again.
    Raced,
    /// An open that would wait for a FIFO's other end: to be made on a thread of its own.
    Blocks,
}

impl From<Sys<()>> for Outcome {
    fn from(r: Sys<()>) -> Outcome {
        Outcome::Reply(match r {
            Ok(()) => Reply::Value(0),
            Err(e) => Reply::Fail(e as i32),
        })
    }
}

const O_NOCTTY: i32 = libc::O_NOCTTY;

impl Action {
    /// Whether performing may block for as long as the target would have: opening a FIFO
    /// waits for the other end. Such an action is performed on a thread of its own.
    pub fn may_block(&self) -> bool {
        let (st, flags) = match self {
            Action::Open { entry, flags, .. } if !entry.special() => {
                (fsops::lstatat(entry.dir.as_fd(), &entry.name), *flags)
            }
            Action::Reopen { obj, flags, .. } => (fsops::fstat(obj.as_fd()), *flags),
            Action::Connect(c) => return c.may_block(),
            Action::Terminal(c) => return c.may_block(),
            _ => return false,
        };
        let fifo = st.is_ok_and(|st| is_fifo(&st));
        fifo && flags & (libc::O_NONBLOCK | libc::O_PATH) == 0
            && flags & libc::O_ACCMODE != libc::O_RDWR
    }

    /// Performs the operation for thread `tid`, with its credentials. `wait`: on a thread of
    /// its own, where an open may wait for a FIFO's other end; otherwise such an open is not
    /// made but answered [`Outcome::Blocks`].
    pub fn perform(&self, tid: i32, wait: bool) -> Outcome {
        // Those that create apply the target's umask and credentials around the call itself.
        let itself = match self {
            Action::Open { .. } | Action::Mkdir { .. } | Action::Mknod { .. } => true,
            Action::Bind { .. } => true,
            Action::Reopen { flags, .. } => flags & O_TMPFILE != 0,
            _ => false,
        };
        if itself {
            return self.perform_as(tid, wait);
        }
        match as_target(tid, false, !wait, || self.perform_as(tid, wait)) {
            Ok(o) => o,
            Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
        }
    }

    fn perform_as(&self, tid: i32, wait: bool) -> Outcome {
        match self {
            Action::Open {
                entry,
                flags,
                mode,
                how,
            } => {
                let follow = flags & libc::O_NOFOLLOW == 0;
                // The entry was checked not to be a symlink; if it became one, the kernel's
                // ELOOP (RESOLVE_NO_SYMLINKS: unlike O_NOFOLLOW it does not show in the
                // file's flags) tells us and the open is prepared again. The flags and mode
                // are cleaned as open(2) cleans them, since openat2 refuses what it ignores.
                let h = match how {
                    Some(h) => OpenHow {
                        // openat2 refuses any other flag beside O_PATH.
                        flags: h.flags
                            | libc::O_CLOEXEC as u64
                            | if h.flags & libc::O_PATH as u64 == 0 {
                                O_NOCTTY as u64
                            } else {
                                0
                            },
                        mode: h.mode,
                        resolve: if entry.special() {
                            h.resolve
                        } else {
                            h.resolve | walk::RESOLVE_NO_SYMLINKS
                        },
                    },
                    None => open_how(*flags, *mode, !entry.special()),
                };
                // Never blocks here: a FIFO found at the name is opened on a thread of its own
                // (the name was checked before, but what it names may change).
                let mut h = h;
                let added = !wait && h.flags & libc::O_NONBLOCK as u64 == 0;
                if added {
                    h.flags |= libc::O_NONBLOCK as u64;
                }
                let r = as_target(tid, flags & libc::O_CREAT != 0, !wait, || {
                    fsops::openat2(entry.dir.as_raw_fd(), &entry.name, &h)
                });
                let fifo_here =
                    || fsops::lstatat(entry.dir.as_fd(), &entry.name).is_ok_and(|st| is_fifo(&st));
                match r {
                    Err(e) | Ok(Err(e)) if e == Errno::ELOOP && follow && !entry.special() => {
                        Outcome::Raced
                    }
                    Ok(Err(Errno::ENXIO)) if added && fifo_here() => Outcome::Blocks,
                    Err(e) | Ok(Err(e)) => Outcome::Reply(Reply::Fail(e as i32)),
                    Ok(Ok(fd)) if stray_device(&fd) => Outcome::Reply(Reply::Fail(libc::EACCES)),
                    Ok(Ok(fd)) => opened(fd, *flags, added),
                }
            }
            Action::PtyPeer { master, flags } => {
                // Never the daemon's controlling terminal.
                let f = (flags | O_NOCTTY) & !libc::O_CLOEXEC;
                match fsops::pty_peer(master.as_fd(), f) {
                    Ok(fd) => opened(fd, *flags, false),
                    Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
                }
            }
            Action::Reopen { obj, flags, mode } => {
                if !wait && self.may_block() {
                    return Outcome::Blocks;
                }
                let f = (flags | O_NOCTTY) & !libc::O_CLOEXEC;
                let r = if flags & O_TMPFILE != 0 {
                    as_target(tid, true, !wait, || {
                        fsops::openat(Some(obj.as_fd()), c".", f, *mode)
                    })
                } else {
                    Ok(fsops::openat(
                        None,
                        &walk::self_path(obj.as_fd()),
                        f & !(libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW),
                        0,
                    ))
                };
                match r {
                    Err(e) | Ok(Err(e)) => Outcome::Reply(Reply::Fail(e as i32)),
                    Ok(Ok(fd)) if stray_device(&fd) => Outcome::Reply(Reply::Fail(libc::EACCES)),
                    Ok(Ok(fd)) => opened(fd, *flags, false),
                }
            }
            Action::Mkdir { entry, mode } => flatten(as_target(tid, true, !wait, || {
                fsops::mkdirat(entry.dir.as_fd(), &entry.name, *mode)
            })),
            // Never a device node: without CAP_MKNOD the kernel refuses one, after its own
            // checks, as it would a process in a container.
            Action::Mknod { entry, mode, dev } => flatten(as_target(tid, true, !wait, || {
                without_mknod(|| fsops::mknodat(entry.dir.as_fd(), &entry.name, *mode, *dev))
            })),
            Action::Unlink { entry, flags } => {
                fsops::unlinkat(entry.dir.as_fd(), &entry.name, *flags).into()
            }
            Action::Rename { from, to, flags } => fsops::renameat2(
                from.dir.as_fd(),
                &from.name,
                to.dir.as_fd(),
                &to.name,
                *flags,
            )
            .into(),
            Action::Link { from, to, empty } => match from {
                Obj::Held(fd) if *empty => fsops::linkat(
                    Some(fd.as_fd()),
                    c"",
                    to.dir.as_fd(),
                    &to.name,
                    libc::AT_EMPTY_PATH,
                )
                .into(),
                Obj::Held(fd) => fsops::linkat(
                    None,
                    &walk::self_path(fd.as_fd()),
                    to.dir.as_fd(),
                    &to.name,
                    libc::AT_SYMLINK_FOLLOW,
                )
                .into(),
                Obj::Entry(e) => {
                    fsops::linkat(Some(e.dir.as_fd()), &e.name, to.dir.as_fd(), &to.name, 0).into()
                }
            },
            Action::Symlink { target, entry } => {
                fsops::symlinkat(target, entry.dir.as_fd(), &entry.name).into()
            }
            Action::Chmod { obj, mode } => match obj {
                // An `O_PATH` descriptor (EBADF: the daemon's copy is open) through its name.
                Obj::Held(fd) => match fsops::fchmod(fd.as_fd(), *mode) {
                    Err(Errno::EBADF) => fsops::fchmodat(None, &walk::self_path(fd.as_fd()), *mode),
                    r => r,
                }
                .into(),
                Obj::Entry(e) => fsops::fchmodat2(
                    Some(e.dir.as_fd()),
                    &e.name,
                    *mode,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::Chown { obj, uid, gid } => match obj {
                Obj::Held(fd) => {
                    fsops::fchownat(Some(fd.as_fd()), c"", *uid, *gid, libc::AT_EMPTY_PATH).into()
                }
                Obj::Entry(e) => fsops::fchownat(
                    Some(e.dir.as_fd()),
                    &e.name,
                    *uid,
                    *gid,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::Truncate { obj, len } => {
                // Past the process's file-size limit the kernel refuses it with EFBIG and
                // SIGXFSZ, as it would had the process made it.
                match crate::perform::creds::fsize_limit(tid) {
                    Ok(Some(limit)) if *len >= 0 && *len as u64 > limit => {
                        fsops::signal_thread(tid, libc::SIGXFSZ);
                        Outcome::Reply(Reply::Fail(libc::EFBIG))
                    }
                    Ok(_) => fsops::truncate(&walk::self_path(obj.as_fd()), *len).into(),
                    Err(e) => Outcome::Reply(Reply::Fail(e as i32)),
                }
            }
            Action::Times { obj, times } => match obj {
                Obj::Held(fd) => match fsops::futimens(fd.as_fd(), times.as_ref()) {
                    Err(Errno::EBADF) => {
                        fsops::utimensat(None, &walk::self_path(fd.as_fd()), times.as_ref(), 0)
                    }
                    r => r,
                }
                .into(),
                Obj::Entry(e) => fsops::utimensat(
                    Some(e.dir.as_fd()),
                    &e.name,
                    times.as_ref(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::SetXattr {
                obj,
                name,
                value,
                flags,
            } => match obj {
                Obj::Held(fd) => {
                    fsops::setxattr(&walk::self_path(fd.as_fd()), name, value, *flags, false).into()
                }
                Obj::Entry(e) => {
                    fsops::setxattr(&entry_self_path(e), name, value, *flags, true).into()
                }
            },
            Action::RemoveXattr { obj, name } => match obj {
                Obj::Held(fd) => {
                    fsops::removexattr(&walk::self_path(fd.as_fd()), name, false).into()
                }
                Obj::Entry(e) => fsops::removexattr(&entry_self_path(e), name, true).into(),
            },
            Action::Ioctl { fd, cmd, arg } => {
                let r = match arg {
                    Arg::Fd(src) => fsops::ioctl_val(fd.as_fd(), *cmd, src.as_raw_fd() as u64),
                    Arg::Bytes(b) => {
                        let mut b = b.clone();
                        fsops::ioctl_ptr(fd.as_fd(), *cmd, &mut b)
                    }
                    Arg::Range(b, src) => {
                        let mut b = b.clone();
                        b.splice(0..8, (src.as_raw_fd() as i64).to_ne_bytes());
                        fsops::ioctl_ptr(fd.as_fd(), *cmd, &mut b)
                    }
                };
                Outcome::Reply(match r {
                    Ok(v) => Reply::Value(v),
                    Err(e) => Reply::Fail(e as i32),
                })
            }
            Action::Terminal(c) => Outcome::Reply(c.perform(tid)),
            Action::Continue => Outcome::Reply(Reply::Continue),
            Action::FileSetattr { obj, attr, size } => match obj {
                Obj::Held(fd) => {
                    fsops::file_setattr(None, &walk::self_path(fd.as_fd()), attr, *size, 0).into()
                }
                Obj::Entry(e) => fsops::file_setattr(
                    Some(e.dir.as_fd()),
                    &e.name,
                    attr,
                    *size,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into(),
            },
            Action::BindAddr { sock, addr } => fsops::bind(sock.as_fd(), addr).into(),
            Action::Connect(c) => c.perform().into(),
            Action::Send(s) => s.perform(tid, wait),
            Action::Bind { sock, entry, addr } => {
                // The name alone, from the held directory made this thread's cwd: the socket
                // is made in that very directory.
                let mut a = addr[..2].to_vec();
                a.extend_from_slice(entry.name.as_bytes());
                a.push(0);
                flatten(as_target(tid, true, !wait, || {
                    let r = fsops::fchdir(entry.dir.as_fd())
                        .and_then(|()| fsops::bind(sock.as_fd(), &a));
                    // Not left there: a cwd pins its directory.
                    let _ = fsops::chdir_root();
                    r
                }))
            }
        }
    }
}

fn flatten(r: Sys<Sys<()>>) -> Outcome {
    r.and_then(|x| x).into()
}

/// The `open_how` that `open(2)` would make of `flags` and `mode` (`build_open_how` in
/// fs/open.c), with symlinks refused in the last step when `no_symlinks`.
fn open_how(flags: i32, mode: u32, no_symlinks: bool) -> OpenHow {
    const VALID: i32 = libc::O_ACCMODE
        | libc::O_CREAT
        | libc::O_EXCL
        | libc::O_NOCTTY
        | libc::O_TRUNC
        | libc::O_APPEND
        | libc::O_NONBLOCK
        | libc::O_DSYNC
        | libc::O_ASYNC
        | libc::O_DIRECT
        | libc::O_LARGEFILE
        | libc::O_DIRECTORY
        | libc::O_NOFOLLOW
        | libc::O_NOATIME
        | libc::O_CLOEXEC
        | libc::O_SYNC
        | libc::O_PATH
        | libc::O_TMPFILE;
    let f = flags & VALID;
    let creates = f & libc::O_CREAT != 0 || f & O_TMPFILE == O_TMPFILE;
    OpenHow {
        flags: (f | O_NOCTTY | libc::O_CLOEXEC) as u32 as u64,
        mode: if creates { (mode & 0o7777) as u64 } else { 0 },
        resolve: if no_symlinks {
            walk::RESOLVE_NO_SYMLINKS
        } else {
            0
        },
    }
}

/// `/proc/self/fd/D/NAME`: the entry itself, for the calls with no `*at` form (the `l*xattr`
/// calls do not follow the last component).
fn entry_self_path(e: &Entry) -> CString {
    let mut p = walk::self_path(e.dir.as_fd()).into_bytes();
    p.push(b'/');
    p.extend_from_slice(e.name.as_bytes());
    CString::new(p).unwrap_or_default()
}

fn is_fifo(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFIFO
}

/// The descriptor to install, as the target asked for it: `O_NONBLOCK` taken off again if
/// the daemon `added` it. A FIFO opened that way that would have waited (the read end) is
/// opened again on a thread of its own.
fn opened(fd: OwnedFd, flags: i32, added: bool) -> Outcome {
    if added {
        if fsops::fstat(fd.as_fd()).is_ok_and(|st| is_fifo(&st))
            && flags & libc::O_ACCMODE != libc::O_RDWR
        {
            return Outcome::Blocks;
        }
        let restored = fsops::getfl(fd.as_fd())
            .and_then(|fl| fsops::setfl(fd.as_fd(), fl & !libc::O_NONBLOCK));
        if let Err(e) = restored {
            return Outcome::Reply(Reply::Fail(e as i32));
        }
    }
    Outcome::Fd {
        fd,
        cloexec: flags & libc::O_CLOEXEC != 0,
    }
}

/// Answers notification `id` with what performing gave. A descriptor the target can no
/// longer take (it died) is closed with the action.
pub fn answer(listener: BorrowedFd<'_>, id: u64, outcome: Outcome) {
    match outcome {
        Outcome::Reply(r) => {
            let _ = seccomp::send(listener, id, r);
        }
        Outcome::Fd { fd, cloexec } => {
            if let Err(e) = seccomp::send_fd(listener, id, fd.as_fd(), cloexec) {
                // Installing failed in the target (EMFILE...): the syscall fails so.
                if let Some(errno) = e.raw_os_error().filter(|&x| x != libc::ENOENT) {
                    let _ = seccomp::send(listener, id, Reply::Fail(errno));
                }
            }
        }
        Outcome::Raced => {
            let _ = seccomp::send(listener, id, Reply::Fail(libc::ELOOP));
        }
        // Only a thread of its own may wait; one that still got this cannot.
        Outcome::Blocks => {
            let _ = seccomp::send(listener, id, Reply::Fail(libc::EAGAIN));
        }
    }
}
