//! `hp-floor -- CMD [ARGS...]`: the cheapest possible seccomp-notify supervisor, the floor the
//! benchmark (`bench/run.sh`) compares hallpass against.
//!
//! It installs on CMD the very filter hallpassd builds for a session (`hallpassd::filter`, lite
//! coverage unless told), so exactly the same syscalls reach user space, and answers every notification
//! with `SECCOMP_USER_NOTIF_FLAG_CONTINUE` at once from a blocking loop: poll, `NOTIF_RECV`,
//! `NOTIF_SEND`. Whatever hallpass costs beyond this is the daemon's own work.
//!
//! Environment:
//! - `HP_FLOOR_SYNC_WAKEUP=1` sets `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (Linux 6.6);
//! - `HP_FLOOR_READ=1` also does, per notification, the two reads no path-deciding supervisor
//!   can skip: the path argument (`process_vm_readv`) and, for a relative path, the target's
//!   cwd (`readlink /proc/TID/cwd`). It decides nothing; it measures the floor of lite mode's
//!   own work (bench/README.md, "floor-read");
//! - `HP_FLOOR_REPORT_EXEC=1` also sends `execve`/`execveat`, as hallpass does when it must
//!   borrow `/proc/PID/mem` from the launcher (Yama `ptrace_scope` 1);
//! - `HP_FLOOR_STRICT=1` installs strict mode's filter instead, which also sends what only the
//!   daemon can check (the calls through a descriptor: `fchmod`, `fchown`, `futimens`...):
//!   the floor of strict mode, its round trips alone ("floor-strict").
//!
//! Exits with CMD's status (128 + signal if it was killed), 127 if CMD was not found, 126 if it
//! could not be run, 125 if the supervision could not be set up. See
//! `Documentation/userspace-api/seccomp_filter.rst` and `seccomp_unotify(2)`.

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStringExt;

use hallpassd::bpf::SockFilter;
use hallpassd::filter::{compile, Coverage, Options};
use hallpassd::syscalls::{Arch, Kind, Lookup};

/// Our own failures, as opposed to the command's status.
const EXIT_SETUP: i32 = 125;

// include/uapi/linux/seccomp.h
const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const SECCOMP_USER_NOTIF_FLAG_CONTINUE: u32 = 1;
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
/// `SECCOMP_IOWR(0, struct seccomp_notif)`.
const SECCOMP_IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
/// `SECCOMP_IOWR(1, struct seccomp_notif_resp)`.
const SECCOMP_IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
/// `SECCOMP_IOW(4, __u64)`; the flags are the argument itself, not a pointer.
const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Default)]
struct SeccompData {
    nr: i32,
    arch: u32,
    instruction_pointer: u64,
    args: [u64; 6],
}

/// `struct seccomp_notif` (80 bytes).
#[repr(C)]
#[derive(Default)]
struct SeccompNotif {
    id: u64,
    pid: u32,
    flags: u32,
    data: SeccompData,
}

/// `struct seccomp_notif_resp` (24 bytes).
#[repr(C)]
struct SeccompNotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

const _: () = assert!(std::mem::size_of::<SeccompNotif>() == 80);
const _: () = assert!(std::mem::size_of::<SeccompNotifResp>() == 24);
const _: () =
    assert!(std::mem::size_of::<SockFilter>() == std::mem::size_of::<libc::sock_filter>());

fn fail(what: &str, e: io::Error) -> ! {
    eprintln!("hp-floor: {what}: {e}");
    std::process::exit(EXIT_SETUP)
}

fn env_is_1(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| v == "1")
}

fn main() {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("hp-floor: missing command\nusage: hp-floor -- CMD [ARGS...]");
        std::process::exit(2);
    }
    let argv: Vec<CString> = match args
        .into_iter()
        .map(|a| CString::new(a.into_vec()))
        .collect()
    {
        Ok(v) => v,
        Err(_) => {
            eprintln!("hp-floor: an argument contains a NUL byte");
            std::process::exit(2);
        }
    };
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());

    let opts = Options {
        coverage: if env_is_1("HP_FLOOR_STRICT") {
            Coverage::Strict
        } else {
            Coverage::Lite
        },
        report_exec: env_is_1("HP_FLOOR_REPORT_EXEC"),
        report_connect: false,
    };
    let prog = match compile(Arch::native(), opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("hp-floor: cannot build the filter: {e}");
            std::process::exit(EXIT_SETUP);
        }
    };
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        // The kernel only reads the program; `SockFilter` is `#[repr(C)]` with the same fields
        // as `struct sock_filter` (size checked above).
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };

    let mut pair = [0 as RawFd; 2];
    // SAFETY: `pair` is a valid array of two ints for the kernel to fill.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        fail("socketpair", io::Error::last_os_error());
    }
    let (parent_end, child_end) = (pair[0], pair[1]);

    // SAFETY: we are single-threaded here, and the child only makes async-signal-safe
    // syscalls on memory prepared before the fork, then execs or `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fail("fork", io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: see `child`: no allocation, only syscalls on prepared memory.
        unsafe { child(child_end, parent_end, &fprog, &argv_ptrs) }
    }
    // SAFETY: `child_end` is our descriptor and nothing else owns it.
    unsafe { libc::close(child_end) };
    let listener = match take_listener(parent_end, pid) {
        Ok(fd) => fd,
        Err(_) => {
            // The child failed before sending (it said why) or died: report its status.
            std::process::exit(wait_child(pid));
        }
    };
    // SAFETY: `parent_end` is our descriptor and nothing else owns it.
    unsafe { libc::close(parent_end) };

    if env_is_1("HP_FLOOR_SYNC_WAKEUP") {
        // SAFETY: the flags are passed by value; `listener` is a seccomp listener descriptor.
        let r = unsafe {
            libc::ioctl(
                listener,
                SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            )
        };
        if r != 0 {
            fail(
                "SECCOMP_IOCTL_NOTIF_SET_FLAGS(SYNC_WAKE_UP)",
                io::Error::last_os_error(),
            );
        }
    }

    let read = env_is_1("HP_FLOOR_READ").then(|| Lookup::new(Arch::native()));
    serve(listener, read.as_ref());
    std::process::exit(wait_child(pid));
}

/// The forked child: installs the filter with a new listener, hands the listener to the parent
/// and execs the command. Never returns.
///
/// # Safety
///
/// Call only in the child of a fork, with `fprog` pointing to a valid program and `argv` a
/// NULL-terminated array of valid C strings. Allocates nothing.
unsafe fn child(
    sock: RawFd,
    other: RawFd,
    fprog: &libc::sock_fprog,
    argv: &[*const libc::c_char],
) -> ! {
    fn die(msg: &[u8]) -> ! {
        // SAFETY: `msg` is a valid buffer; write and _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(EXIT_SETUP)
        }
    }
    // SAFETY: `other` is the parent's end of the pair, ours to close in this process.
    unsafe { libc::close(other) };
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        die(b"hp-floor: PR_SET_NO_NEW_PRIVS failed\n");
    }
    // SAFETY: `fprog` points to a valid `sock_fprog` whose program outlives the call (the
    // kernel copies it).
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            fprog as *const libc::sock_fprog,
        )
    };
    if listener < 0 {
        die(b"hp-floor: installing the seccomp filter failed\n");
    }
    let listener = listener as RawFd;
    // Its number for the parent, which takes it (see `take_listener`) and says so.
    let n = listener.to_ne_bytes();
    let mut ok = [0u8; 1];
    // SAFETY: `sock` is ours; `n` is a valid buffer of 4 bytes.
    let sent = unsafe { libc::write(sock, n.as_ptr().cast(), 4) } == 4;
    // SAFETY: `sock` is ours; `ok` is a valid buffer of 1 byte.
    if !sent || unsafe { libc::read(sock, ok.as_mut_ptr().cast(), 1) } != 1 {
        die(b"hp-floor: handing the listener to the parent failed\n");
    }
    // SAFETY: both are ours; the parent holds its own copy of the listener now.
    unsafe {
        libc::close(listener);
        libc::close(sock);
    }
    // SAFETY: `argv` is NULL-terminated and its strings live until exec replaces us.
    unsafe { libc::execvp(argv[0], argv.as_ptr()) };
    // SAFETY: reading errno right after the failed call, in this thread.
    let not_found = unsafe { *libc::__errno_location() } == libc::ENOENT;
    let msg: &[u8] = if not_found {
        b"hp-floor: command not found\n"
    } else {
        b"hp-floor: cannot execute the command\n"
    };
    // SAFETY: `msg` is a valid buffer; write and _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(if not_found { 127 } else { 126 })
    }
}

/// Takes the listener from the child: its number comes over `sock` (a plain write, which the
/// filter lets through: a `sendmsg` under strict mode's filter would wait for this very
/// supervisor), the descriptor itself with `pidfd_getfd` (the child is ours); then one byte
/// tells the child it may close its copy.
fn take_listener(sock: RawFd, child: libc::pid_t) -> io::Result<RawFd> {
    let mut n = [0u8; 4];
    // SAFETY: `n` is a valid buffer of 4 bytes.
    if unsafe { libc::read(sock, n.as_mut_ptr().cast(), 4) } != 4 {
        return Err(io::Error::other("the child sent no listener"));
    }
    // SAFETY: plain syscalls with integer arguments.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child, 0) };
    if pidfd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; `pidfd` is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd, i32::from_ne_bytes(n), 0) };
    let err = io::Error::last_os_error();
    // SAFETY: `pidfd` is ours, and closed once.
    unsafe { libc::close(pidfd as RawFd) };
    if fd < 0 {
        return Err(err);
    }
    // SAFETY: a valid buffer of one byte.
    unsafe { libc::write(sock, b"k".as_ptr().cast(), 1) };
    Ok(fd as RawFd)
}

/// Answers every notification with CONTINUE until no task uses the filter any more (POLLHUP);
/// with `read`, reads the path argument and the cwd first (`HP_FLOOR_READ`).
fn serve(listener: RawFd, read: Option<&Lookup>) {
    let mut pfd = libc::pollfd {
        fd: listener,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        pfd.revents = 0;
        // SAFETY: `pfd` is one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            fail("poll", e);
        }
        if pfd.revents & libc::POLLIN == 0 {
            if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                return;
            }
            continue;
        }
        // The kernel refuses a buffer that is not zeroed.
        let mut n = SeccompNotif::default();
        // SAFETY: `n` is a zeroed `struct seccomp_notif` the kernel fills.
        let r = unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &mut n) };
        if r != 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // The target was killed before we read it, or a signal interrupted us.
                Some(libc::ENOENT) | Some(libc::EINTR) => continue,
                _ => fail("SECCOMP_IOCTL_NOTIF_RECV", e),
            }
        }
        if let Some(lookup) = read {
            read_path(lookup, &n);
        }
        let resp = SeccompNotifResp {
            id: n.id,
            val: 0,
            error: 0,
            flags: SECCOMP_USER_NOTIF_FLAG_CONTINUE,
        };
        // SAFETY: `resp` is a valid `struct seccomp_notif_resp` the kernel reads.
        let r = unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        if r != 0 {
            let e = io::Error::last_os_error();
            // ENOENT: the target was interrupted or died meanwhile; nothing to answer.
            if e.raw_os_error() != Some(libc::ENOENT) {
                fail("SECCOMP_IOCTL_NOTIF_SEND", e);
            }
        }
    }
}

/// The reads every path-deciding supervisor makes: the path string, and the cwd it is relative
/// to. Results are ignored: this is a measurement.
fn read_path(lookup: &Lookup, n: &SeccompNotif) {
    let arg = match lookup.get(n.data.nr).map(|sc| &sc.kind) {
        Some(Kind::Open { path, .. }) | Some(Kind::Openat2 { path, .. }) => *path,
        Some(Kind::Paths(list)) | Some(Kind::Utimensat(list)) if !list.is_empty() => list[0].path,
        _ => return,
    };
    let mut buf = [0u8; 512];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: n.data.args[arg as usize] as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one local iovec over `buf`, which outlives the call; the remote one is only
    // read by the kernel, in the target, where a bad address is an error, not UB here.
    let got = unsafe { libc::process_vm_readv(n.pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if got > 0 && buf[0] != b'/' {
        let _ = std::fs::read_link(format!("/proc/{}/cwd", n.pid));
    }
}

/// Reaps the child and turns its status into ours.
fn wait_child(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid int for the kernel to fill.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            fail("waitpid", e);
        }
        if libc::WIFEXITED(status) {
            return libc::WEXITSTATUS(status);
        }
        if libc::WIFSIGNALED(status) {
            return 128 + libc::WTERMSIG(status);
        }
    }
}
