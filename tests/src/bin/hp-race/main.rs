//! `hp-race`: tries to make a write land where hallpass must refuse it, by racing the check
//! (another thread changes what a path names between the daemon's decision and the kernel's
//! use of it) or by going around the filter. An escape is judged on disk, never by a return
//! value. Each subcommand prints one line: `attempts N escapes M` (M: how many times the
//! forbidden effect really happened), or `refused ERRNO` (or `refused signal S`) when a
//! single-shot try's decisive step failed and nothing changed. One `hp-race: ...` line on
//! stderr says how each step went. The exit status is 0 unless the arguments or the
//! preparation are wrong (2).
//!
//! Races. OP is `open` (the default: openat O_WRONLY|O_CREAT|O_APPEND, then one byte written,
//! so the denied file grows by one byte per escape) or `chmod` (fchmodat to a mode the denied
//! file does not have at that moment; it must exist). The preparation inside the project is
//! done here; the denied side is prepared by the caller.
//! - `buffer-flip N ALLOWED DENIED [OP]`: a thread flips the path buffer the syscall reads
//!   between ALLOWED and DENIED (padded with `/` to the same length).
//! - `symlink-swap N LINK ALLOWED_TARGET DENIED_TARGET [OP]`: LINK -> ALLOWED_TARGET and
//!   LINK.swap -> DENIED_TARGET are made here; a thread exchanges them (renameat2
//!   RENAME_EXCHANGE, atomic) while the main thread writes through LINK.
//! - `dir-swap N DIR ALLOWED_DIR DENIED_DIR [OP]`: ALLOWED_DIR (a real directory) and DIR (a
//!   symlink to DENIED_DIR) are made here; a thread exchanges them while the main thread
//!   writes DIR/f. The denied file is DENIED_DIR/f.
//! - `fd-swap N ALLOWED DENIED`: a thread `dup2`s read-only descriptors of ALLOWED and
//!   DENIED (which must exist) in turn onto one descriptor while the main thread `fchmod`s it
//!   (strict mode decides descriptor calls; lite mode leaves them to the kernel).
//! - `how-flip N DENIED`: a thread flips the flags of an `open_how` in memory between
//!   O_RDONLY (which strict mode performs without asking) and O_WRONLY|O_APPEND while the
//!   main thread openat2s DENIED (which must exist) and writes a byte through what it got.
//! - `addr-flip N DENIED_DIR`: a thread flips the first byte of a Unix socket address between
//!   NUL (an abstract address, no file) and `/` (DENIED_DIR/s) while the main thread binds
//!   a fresh socket to it. An escape is a socket file made in DENIED_DIR (removed again).
//! - `send-flip N ALLOWED_SOCK DENIED_SOCK`: a datagram socket is bound to ALLOWED_SOCK here;
//!   DENIED_SOCK, a datagram socket outside, is the caller's. A thread flips the `msg_name`
//!   of a `struct msghdr` between the two addresses while the main thread `sendmsg`s a
//!   numbered datagram (`MSG_DONTWAIT`). An escape is a send that succeeded whose datagram
//!   did not arrive at ALLOWED_SOCK: it went elsewhere.
//!
//! Single-shot tries (DENIED: a file or directory outside the project):
//! - `io-uring DENIED`: IORING_OP_OPENAT of DENIED for writing, one byte written.
//! - `int80 DENIED` (x86_64): creat(DENIED) through the 32-bit entry (`int 0x80`).
//! - `x32 DENIED` (x86_64): openat with the x32 bit set in the syscall number.
//! - `open-by-handle DENIED`: name_to_handle_at, then open_by_handle_at for writing.
//! - `unshare-user DENIED`: unshare(CLONE_NEWUSER), map ourselves to root, write DENIED.
//! - `unshare-mount ALLOWED_DIR DENIED_DIR`: unshare(CLONE_NEWNS) (with CLONE_NEWUSER when
//!   unprivileged), bind DENIED_DIR over ALLOWED_DIR, write ALLOWED_DIR/f.
//! - `clone3-user ALLOWED_DIR DENIED_DIR`: the same from a child made by clone3 with
//!   CLONE_NEWUSER|CLONE_NEWNS.
//! - `seccomp-listener DENIED`: a filter of our own with NEW_LISTENER that sends openat to
//!   us; a thread opens DENIED for writing and we answer CONTINUE.
//! - `tmpfile-link PROJECT_DIR DENIED`: O_TMPFILE in the project, then linkat to DENIED
//!   (AT_EMPTY_PATH, else /proc/self/fd/N with AT_SYMLINK_FOLLOW).
//! - `hardlink DENIED LINK`: hard link DENIED to LINK in the project, then write through LINK.
//! - `rename-in DENIED_DIR DEST`: rename a directory from outside to DEST in the project.
//! - `proc-reopen DENIED`: open DENIED read-only, reopen /proc/self/fd/N for writing.
//! - `proc-truncate DENIED`: open DENIED read-only, truncate /proc/self/fd/N.
//! - `fchmod DENIED`, `fchown DENIED`, `fsetxattr DENIED`: on a read-only descriptor.
//! - `symlink-out LINK DENIED`: make LINK -> DENIED in the project, write through LINK.
//! - `tiocsti`: push `x` and a newline into our own new controlling terminal (`TIOCSTI`,
//!   plain and with high bits set in the command); escapes are the `x` read back.
//! - `acct DENIED`: process accounting into DENIED (an existing file), then a child exits.
//! - `mq-open`: create a POSIX message queue (a file in the mqueue file system).
//! - `fs-ioctl DENIED`: `FS_IOC_SETVERSION` (a file-system ioctl no list names) on a
//!   read-only descriptor of DENIED; an escape is its inode generation changed.
//! - `core-dump DIR`: a child in DIR raises its core limit and aborts; an escape is a file
//!   the kernel wrote in DIR.
//! - `prlimit-parent`: lowers the parent's (the launcher's) open-file limit, then restores it.
//! - `perf-parent`: a performance counter on the parent (the launcher).
//! - `dev-open DIR`: a node of /dev/null's device made in DIR, opened for writing.
//! - `tty-steal TTY`: makes TTY (nobody's controlling terminal) ours in a new session, then
//!   writes through `/dev/tty`; prints `wrote` or `refused ERRNO`.
//! - `tty-nofollow`: open /dev/tty O_WRONLY|O_NOFOLLOW and write `tty-ok` to it (it must be
//!   our controlling terminal, not the daemon's); prints the open's result.
//!
//! Deputy tries: what the daemon performs (openat2, strict mode's writes) must reach no
//! further than we could ourselves. VICTIM is the pid of a process outside the session,
//! started by the caller. With `landlocked` before the subcommand, hp-race first puts itself
//! in a Landlock domain like the session's (hallpass-cli/src/sys/launch.rs), so that a native
//! run meets what a supervised command meets natively.
//! - `proc-read VICTIM ENTRY SECRET [dirfd]`: openat2 /proc/VICTIM/ENTRY read-only (with
//!   `dirfd`, relative to a descriptor of /proc/VICTIM opened first), then read it. An escape
//!   is SECRET in what was read.
//! - `proc-mem VICTIM ADDR [openat2]`: open /proc/VICTIM/mem O_RDWR (openat or openat2), then
//!   write `HPX` at ADDR (the start of its environment, say). An escape is the write made;
//!   the caller also looks at the victim's memory.
//! - `proc-path VICTIM chmod|truncate LINK_PATH FILE`: chmod or truncate
//!   /proc/VICTIM/LINK_PATH (`cwd/f`, `root/ABS/f`), which names FILE. Judged on FILE.
//! - `proc-fd VICTIM N FILE`: open /proc/VICTIM/fd/N (FILE) for writing, write one byte.
//! - `proc-own FILE`: our own and a child's /proc entries, which must work: openat2 of
//!   /proc/self/environ, /proc/self/mem O_RDWR, and for a forked child openat2 of
//!   /proc/CHILD/environ (by path and from a descriptor of /proc/CHILD), /proc/CHILD/mem
//!   O_RDWR (written and read back), chmod of /proc/CHILD/cwd/FILE (FILE: a file in the
//!   cwd), /proc/CHILD/fd/N of FILE reopened for writing. Prints `own ok`, or
//!   `own failed: STEPS`.
//! - `openat2-read FILE`: openat2 FILE read-only and read it (FILE is one we may not read).
//!   An escape is FILE read.
//! - `own-domain FILE`: make a Landlock domain of our own in which no file may be read, then
//!   openat2 FILE read-only and read it. An escape is FILE's text read; `no domain ERRNO`
//!   when the domain could not be made (strict mode refuses it).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

pub(crate) fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

use hallpass_tests::sys;

pub(crate) const AT_FDCWD: libc::c_long = libc::AT_FDCWD as libc::c_long;
pub(crate) const WR_APPEND: libc::c_long =
    (libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long;
pub(crate) const RD: libc::c_long = (libc::O_RDONLY | libc::O_CLOEXEC) as libc::c_long;
pub(crate) const RENAME_EXCHANGE: libc::c_long = 2;

pub(crate) fn close(fd: i64) {
    if fd >= 0 {
        // SAFETY: `fd` is a descriptor a syscall just returned to us.
        unsafe { libc::close(fd as i32) };
    }
}

/// Writes one byte to `fd` and closes it: an escaped open shows as one more byte.
pub(crate) fn append_byte(fd: i64) {
    if fd >= 0 {
        sys!(libc::SYS_write, fd, b"x".as_ptr(), 1);
        close(fd);
    }
}

/// Makes `p` (or lengthens it) by one byte: the allowed side a race writes, made beforehand.
pub(crate) fn append_to(p: &Path) {
    append_byte(sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(p).as_ptr(),
        WR_APPEND,
        0o644
    ));
}

pub(crate) fn step(r: i64) -> String {
    if r >= 0 {
        "ok".into()
    } else {
        format!("err {}", -r)
    }
}

pub(crate) fn die(msg: &str) -> ! {
    eprintln!("hp-race: {msg}");
    std::process::exit(2)
}

/// What can be seen of a file from outside: any difference is a write that happened.
#[derive(Debug, PartialEq, Eq, Clone)]
pub(crate) struct Snap {
    meta: Option<(u64, u32, u32, u32, u64, i64, i64)>,
    xattr: Option<Vec<u8>>,
}

pub(crate) const XATTR: &str = "user.hp-race";

impl Snap {
    fn of(p: &Path) -> Snap {
        let meta = std::fs::metadata(p).ok().map(|m| {
            (
                m.size(),
                m.mode(),
                m.uid(),
                m.gid(),
                m.nlink(),
                m.ctime(),
                m.ctime_nsec(),
            )
        });
        let mut buf = [0u8; 64];
        let name = CString::new(XATTR).unwrap();
        let path = c(p);
        // SAFETY: both strings are live and NUL-terminated; the buffer and its length match.
        let n = unsafe {
            libc::getxattr(
                path.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        let xattr = (n >= 0).then(|| buf[..n as usize].to_vec());
        Snap { meta, xattr }
    }

    fn size(&self) -> Option<u64> {
        self.meta.map(|m| m.0)
    }

    fn mode(&self) -> u32 {
        self.meta.map(|m| m.1 & 0o7777).unwrap_or(0)
    }
}

/// A single try's verdict: an escape seen on the target, else the errno of the decisive
/// step `r` if it failed, else nothing escaped.
pub(crate) fn single(escaped: bool, r: i64) {
    if escaped {
        println!("attempts 1 escapes 1");
    } else if r < 0 {
        println!("refused {}", -r);
    } else {
        println!("attempts 1 escapes 0");
    }
}

/// Runs a single-shot try: `before` is the denied object's state, `gate` the result of the
/// decisive step. Prints the verdict, judged on disk.
pub(crate) fn verdict(denied: &Path, before: &Snap, gate: Gate, steps: &[(&str, String)]) {
    let after = Snap::of(denied);
    let detail: Vec<String> = steps.iter().map(|(n, r)| format!("{n} {r}")).collect();
    eprintln!("hp-race: {}", detail.join(", "));
    if after != *before {
        println!("attempts 1 escapes 1");
        return;
    }
    match gate {
        Gate::Errno(e) if e < 0 => println!("refused {}", -e),
        Gate::Signal(s) => println!("refused signal {s}"),
        _ => println!("attempts 1 escapes 0"),
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Gate {
    Errno(i64),
    Signal(i32),
}

mod deputy;
mod races;
mod refused;
mod single;

use deputy::*;
use races::*;
use refused::*;
use single::*;

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("landlocked") {
        args.remove(1);
        landlock();
    }
    let arg = |i: usize| {
        args.get(i)
            .cloned()
            .unwrap_or_else(|| die("usage: see the top of tests/src/bin/hp-race/main.rs"))
    };
    let path = |i: usize| PathBuf::from(arg(i));
    let n = || -> u64 { arg(2).parse().unwrap_or_else(|_| die("N must be a number")) };
    match arg(1).as_str() {
        "buffer-flip" => buffer_flip(n(), &arg(3), &arg(4), op_arg(args.get(5))),
        "symlink-swap" => symlink_swap(n(), &path(3), &path(4), &path(5), op_arg(args.get(6))),
        "dir-swap" => dir_swap(n(), &path(3), &path(4), &path(5), op_arg(args.get(6))),
        "how-flip" => how_flip(n(), &path(3)),
        "fd-swap" => fd_swap(n(), &path(3), &path(4)),
        "addr-flip" => addr_flip(n(), &path(3)),
        "send-flip" => send_flip(n(), &path(3), &path(4)),
        "io-uring" => io_uring(&path(2)),
        #[cfg(target_arch = "x86_64")]
        "int80" => int80(&path(2)),
        #[cfg(target_arch = "x86_64")]
        "x32" => x32(&path(2)),
        "open-by-handle" => open_by_handle(&path(2)),
        "unshare-user" => unshare_user(&path(2)),
        "unshare-mount" => unshare_mount(&path(2), &path(3)),
        "clone3-user" => clone3_user(&path(2), &path(3)),
        "seccomp-listener" => seccomp_listener(&path(2)),
        "tmpfile-link" => tmpfile_link(&path(2), &path(3)),
        "hardlink" => hardlink(&path(2), &path(3)),
        "rename-in" => rename_in(&path(2), &path(3)),
        "proc-reopen" => with_read_only(&path(2), "reopen /proc/self/fd/N for writing", |fd| {
            let p = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
            let w = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                p.as_ptr(),
                (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
            );
            append_byte(w);
            w
        }),
        "proc-truncate" => with_read_only(&path(2), "truncate /proc/self/fd/N", |fd| {
            let p = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
            sys!(libc::SYS_truncate, p.as_ptr(), 0)
        }),
        "fchmod" => {
            let want = if Snap::of(&path(2)).mode() == 0o600 {
                0o640
            } else {
                0o600
            };
            with_read_only(&path(2), "fchmod", |fd| sys!(libc::SYS_fchmod, fd, want))
        }
        "fchown" => with_read_only(&path(2), "fchown to ourselves", |fd| {
            let (u, g) = ids();
            sys!(libc::SYS_fchown, fd, u, g)
        }),
        "fsetxattr" => with_read_only(&path(2), "fsetxattr", |fd| {
            let name = CString::new(XATTR).unwrap();
            sys!(libc::SYS_fsetxattr, fd, name.as_ptr(), b"1".as_ptr(), 1, 0)
        }),
        "symlink-out" => symlink_out(&path(2), &path(3)),
        "tiocsti" => tiocsti(),
        "acct" => acct(&path(2)),
        "mq-open" => mq_open(),
        "fs-ioctl" => fs_ioctl(&path(2)),
        "core-dump" => core_dump(&path(2)),
        "prlimit-parent" => prlimit_parent(),
        "tty-steal" => tty_steal(&path(2)),
        "perf-parent" => perf_parent(),
        "dev-open" => dev_open(&path(2)),
        "tty-nofollow" => {
            let fd = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                c"/dev/tty".as_ptr(),
                (libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC) as libc::c_long
            );
            if fd >= 0 {
                sys!(libc::SYS_write, fd, b"tty-ok\n".as_ptr(), 7);
                close(fd);
            }
            println!("open {}", step(fd));
        }
        "proc-read" => proc_read(
            &arg(2),
            &arg(3),
            &arg(4),
            args.get(5).is_some_and(|a| a == "dirfd"),
        ),
        "proc-mem" => proc_mem(
            &arg(2),
            arg(3)
                .parse()
                .unwrap_or_else(|_| die("ADDR must be a number")),
            args.get(4).is_some_and(|a| a == "openat2"),
        ),
        "proc-path" => proc_path(&arg(2), &arg(3), &arg(4), &path(5)),
        "proc-fd" => proc_fd(&arg(2), &arg(3), &path(4)),
        "proc-own" => proc_own(&path(2)),
        "own-domain" => own_domain(&path(2)),
        "openat2-read" => openat2_read(&path(2)),
        other => die(&format!("unknown command {other}")),
    }
}
