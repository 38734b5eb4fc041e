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

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

use hallpass_tests::sys;

const AT_FDCWD: libc::c_long = libc::AT_FDCWD as libc::c_long;
const WR_APPEND: libc::c_long =
    (libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long;
const RD: libc::c_long = (libc::O_RDONLY | libc::O_CLOEXEC) as libc::c_long;
const RENAME_EXCHANGE: libc::c_long = 2;

fn close(fd: i64) {
    if fd >= 0 {
        // SAFETY: `fd` is a descriptor a syscall just returned to us.
        unsafe { libc::close(fd as i32) };
    }
}

/// Writes one byte to `fd` and closes it: an escaped open shows as one more byte.
fn append_byte(fd: i64) {
    if fd >= 0 {
        sys!(libc::SYS_write, fd, b"x".as_ptr(), 1);
        close(fd);
    }
}

/// Makes `p` (or lengthens it) by one byte: the allowed side a race writes, made beforehand.
fn append_to(p: &Path) {
    append_byte(sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(p).as_ptr(),
        WR_APPEND,
        0o644
    ));
}

fn step(r: i64) -> String {
    if r >= 0 {
        "ok".into()
    } else {
        format!("err {}", -r)
    }
}

fn die(msg: &str) -> ! {
    eprintln!("hp-race: {msg}");
    std::process::exit(2)
}

/// What can be seen of a file from outside: any difference is a write that happened.
#[derive(Debug, PartialEq, Eq, Clone)]
struct Snap {
    meta: Option<(u64, u32, u32, u32, u64, i64, i64)>,
    xattr: Option<Vec<u8>>,
}

const XATTR: &str = "user.hp-race";

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
fn single(escaped: bool, r: i64) {
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
fn verdict(denied: &Path, before: &Snap, gate: Gate, steps: &[(&str, String)]) {
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
enum Gate {
    Errno(i64),
    Signal(i32),
}

// ---------------------------------------------------------------------------------------
// Races

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Open,
    Chmod,
}

fn op_arg(a: Option<&String>) -> Op {
    match a.map(String::as_str) {
        None | Some("open") => Op::Open,
        Some("chmod") => Op::Chmod,
        Some(o) => die(&format!("unknown race operation {o} (open or chmod)")),
    }
}

/// N attempts of `op` on the path at `path` while `swap` runs in a loop on another thread;
/// escapes are counted on `denied`.
fn race(n: u64, op: Op, path: *const libc::c_char, denied: &Path, swap: &(dyn Fn() -> i64 + Sync)) {
    let before = Snap::of(denied);
    if op == Op::Chmod && before.meta.is_none() {
        die(&format!(
            "{} must exist for the chmod race",
            denied.display()
        ));
    }
    // The swap must work at all, or there is no race to report.
    let first = swap();
    if first < 0 {
        die(&format!("the swap fails: {}", step(first)));
    }
    let stop = AtomicBool::new(false);
    let swaps = AtomicU64::new(0);
    let swap_errors = AtomicU64::new(0);
    let mut results: BTreeMap<i64, u64> = BTreeMap::new();
    let mut escapes = 0u64;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if swap() < 0 {
                    swap_errors.fetch_add(1, Ordering::Relaxed);
                } else {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        for _ in 0..n {
            let r = match op {
                Op::Open => {
                    let fd = sys!(libc::SYS_openat, AT_FDCWD, path, WR_APPEND, 0o644);
                    append_byte(fd);
                    fd
                }
                Op::Chmod => {
                    // A mode the denied file does not have now, so any escape is visible.
                    let cur = Snap::of(denied).mode();
                    let want = if cur == 0o600 { 0o640 } else { 0o600 };
                    let r = sys!(libc::SYS_fchmodat, AT_FDCWD, path, want);
                    if Snap::of(denied).mode() != cur {
                        escapes += 1;
                    }
                    r
                }
            };
            *results.entry(r.min(0)).or_default() += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    if op == Op::Open {
        // One byte per escaped open; a file created empty is one escape too.
        let after = Snap::of(denied);
        let grown =
            after.size().unwrap_or(0) - before.size().unwrap_or(0).min(after.size().unwrap_or(0));
        escapes = if grown == 0 && after.meta.is_some() && before.meta.is_none() {
            1
        } else {
            grown
        };
    }
    let res: Vec<String> = results
        .iter()
        .map(|(r, k)| format!("{} x{k}", step(*r)))
        .collect();
    eprintln!(
        "hp-race: swaps {} (failed {}); results {}",
        swaps.load(Ordering::Relaxed),
        swap_errors.load(Ordering::Relaxed),
        res.join(", ")
    );
    println!("attempts {n} escapes {escapes}");
}

/// "dir//name" names what "dir/name" does: pads the shorter path before its last component
/// so the flipping thread swaps whole paths, never leaving a stale tail.
fn same_length(a: &str, b: &str) -> (Vec<u8>, Vec<u8>) {
    let pad = |s: &str, n: usize| {
        let i = s
            .rfind('/')
            .unwrap_or_else(|| die("paths must contain a /"));
        format!("{}{}{}", &s[..i], "/".repeat(n), &s[i..])
    };
    let (a, b) = match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Less => (pad(a, b.len() - a.len()), b.to_string()),
        std::cmp::Ordering::Greater => (a.to_string(), pad(b, a.len() - b.len())),
        std::cmp::Ordering::Equal => (a.to_string(), b.to_string()),
    };
    let z = |s: String| {
        let mut v = s.into_bytes();
        v.push(0);
        v
    };
    (z(a), z(b))
}

fn buffer_flip(n: u64, allowed: &str, denied: &str, op: Op) {
    if op == Op::Chmod {
        append_to(Path::new(allowed));
    }
    let (a, b) = same_length(allowed, denied);
    // Atomics: the kernel reads the buffer while the flipper writes it.
    let buf: Vec<AtomicU8> = a.iter().map(|&x| AtomicU8::new(x)).collect();
    let state = AtomicBool::new(false);
    let flip = || {
        let to_denied = !state.load(Ordering::Relaxed);
        state.store(to_denied, Ordering::Relaxed);
        let src = if to_denied { &b } else { &a };
        for (slot, &x) in buf.iter().zip(src.iter()) {
            slot.store(x, Ordering::Relaxed);
        }
        0
    };
    race(n, op, buf.as_ptr().cast(), Path::new(denied), &flip);
}

/// The flipping thread, the attempts and the account, for the races on argument memory
/// other than paths (`how-flip`, `addr-flip`): `attempt` returns the syscall's result and
/// whether the forbidden effect happened.
fn flip_race(n: u64, flip: &(dyn Fn() + Sync), attempt: &mut dyn FnMut() -> (i64, bool)) {
    let stop = AtomicBool::new(false);
    let swaps = AtomicU64::new(0);
    let mut results: BTreeMap<i64, u64> = BTreeMap::new();
    let mut escapes = 0u64;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                flip();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        });
        for _ in 0..n {
            let (r, escaped) = attempt();
            escapes += u64::from(escaped);
            *results.entry(r.min(0)).or_default() += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    let res: Vec<String> = results
        .iter()
        .map(|(r, k)| format!("{} x{k}", step(*r)))
        .collect();
    eprintln!(
        "hp-race: swaps {} (failed 0); results {}",
        swaps.load(Ordering::Relaxed),
        res.join(", ")
    );
    println!("attempts {n} escapes {escapes}");
}

/// `fd-swap N ALLOWED DENIED`: descriptor T holds ALLOWED (made here) or DENIED (which must
/// exist), both opened read-only, as another thread `dup2`s one then the other onto it; the
/// main thread `fchmod`s T to a mode DENIED does not have. A supervisor that decides on the
/// object T holds and then lets the kernel look T up again changes DENIED.
fn fd_swap(n: u64, allowed: &Path, denied: &Path) {
    let before = Snap::of(denied);
    if before.meta.is_none() {
        die(&format!("{} must exist for fd-swap", denied.display()));
    }
    append_to(allowed);
    let ro = (libc::O_RDONLY | libc::O_CLOEXEC) as i64;
    let a = sys!(libc::SYS_openat, AT_FDCWD, c(allowed).as_ptr(), ro);
    let d = sys!(libc::SYS_openat, AT_FDCWD, c(denied).as_ptr(), ro);
    let t = sys!(libc::SYS_dup, a);
    if a < 0 || d < 0 || t < 0 {
        die(&format!("opening: {} {} {}", step(a), step(d), step(t)));
    }
    let holds_denied = AtomicBool::new(false);
    let flip = || {
        let next = !holds_denied.load(Ordering::Relaxed);
        sys!(libc::SYS_dup2, if next { d } else { a }, t);
        holds_denied.store(next, Ordering::Relaxed);
    };
    let mut attempt = || {
        let cur = Snap::of(denied).mode();
        let want = if cur == 0o600 { 0o640 } else { 0o600 };
        let r = sys!(libc::SYS_fchmod, t, want);
        (r, Snap::of(denied).mode() != cur)
    };
    flip_race(n, &flip, &mut attempt);
}

fn how_flip(n: u64, denied: &Path) {
    let before = Snap::of(denied);
    if before.meta.is_none() {
        die(&format!("{} must exist for how-flip", denied.display()));
    }
    let path = c(denied);
    let read = (libc::O_RDONLY | libc::O_CLOEXEC) as u64;
    let write = (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as u64;
    // struct open_how { flags, mode, resolve }: the flags word flips.
    let how: [AtomicU64; 3] = [AtomicU64::new(read), AtomicU64::new(0), AtomicU64::new(0)];
    let flip = || {
        let cur = how[0].load(Ordering::Relaxed);
        how[0].store(if cur == read { write } else { read }, Ordering::Relaxed);
    };
    let mut size = before.size().unwrap_or(0);
    let mut attempt = || {
        let fd = sys!(libc::SYS_openat2, AT_FDCWD, path.as_ptr(), how.as_ptr(), 24);
        append_byte(fd);
        let now = Snap::of(denied).size().unwrap_or(0);
        let escaped = now != size;
        size = now;
        (fd, escaped)
    };
    flip_race(n, &flip, &mut attempt);
}

fn addr_flip(n: u64, denied_dir: &Path) {
    let target = denied_dir.join("s");
    let name = target.as_os_str().as_bytes();
    // sockaddr_un: family, then the path; the first byte flips between NUL and '/'.
    let mut sa = vec![0u8; 2 + name.len() + 1];
    sa[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    sa[2..2 + name.len()].copy_from_slice(name);
    let buf: Vec<AtomicU8> = sa.iter().map(|&x| AtomicU8::new(x)).collect();
    let flip = || {
        let cur = buf[2].load(Ordering::Relaxed);
        buf[2].store(if cur == 0 { b'/' } else { 0 }, Ordering::Relaxed);
    };
    let mut attempt = || {
        let sock = sys!(
            libc::SYS_socket,
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0
        );
        let r = sys!(libc::SYS_bind, sock, buf.as_ptr(), sa.len());
        close(sock);
        let escaped = std::fs::symlink_metadata(&target).is_ok();
        if escaped {
            let _ = std::fs::remove_file(&target);
        }
        (r, escaped)
    };
    flip_race(n, &flip, &mut attempt);
}

/// A `sockaddr_un` for `p`.
fn sun(p: &Path) -> Vec<u8> {
    let mut sa = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    sa.extend_from_slice(p.as_os_str().as_bytes());
    sa.push(0);
    sa
}

fn send_flip(n: u64, allowed: &Path, denied: &Path) {
    let _ = std::fs::remove_file(allowed);
    let dgram = (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC) as i64;
    let (recv, send) = (
        sys!(libc::SYS_socket, libc::AF_UNIX, dgram, 0),
        sys!(libc::SYS_socket, libc::AF_UNIX, dgram, 0),
    );
    let (a, d) = (sun(allowed), sun(denied));
    if recv < 0 || send < 0 || sys!(libc::SYS_bind, recv, a.as_ptr(), a.len()) < 0 {
        die("binding the allowed socket");
    }
    let mut count = 0u64;
    let mut iov = libc::iovec {
        iov_base: (&mut count as *mut u64).cast(),
        iov_len: 8,
    };
    // SAFETY: an all-zero msghdr is valid; its name and data are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_namelen = a.len().max(d.len()) as u32;
    // msg_name, flipped by the other thread between the two addresses.
    let name = std::ptr::addr_of_mut!(msg.msg_name).cast::<AtomicU64>();
    // SAFETY: `msg` outlives both threads (scoped), and the word is only used atomically.
    let name = unsafe { &*name };
    name.store(a.as_ptr() as u64, Ordering::Relaxed);
    let flip = || {
        let cur = name.load(Ordering::Relaxed);
        let next = if cur == a.as_ptr() as u64 { &d } else { &a };
        name.store(next.as_ptr() as u64, Ordering::Relaxed);
    };
    let msg_ptr = &msg as *const libc::msghdr as u64;
    let mut attempt = || {
        count += 1;
        let want = count;
        let r = sys!(libc::SYS_sendmsg, send, msg_ptr, libc::MSG_DONTWAIT);
        let mut got = 0u64;
        let n = sys!(
            libc::SYS_recvfrom,
            recv,
            &mut got as *mut u64,
            8,
            libc::MSG_DONTWAIT,
            0,
            0
        );
        (r, r >= 0 && !(n == 8 && got == want))
    };
    flip_race(n, &flip, &mut attempt);
}

fn exchange(a: &CString, b: &CString) -> i64 {
    sys!(
        libc::SYS_renameat2,
        AT_FDCWD,
        a.as_ptr(),
        AT_FDCWD,
        b.as_ptr(),
        RENAME_EXCHANGE
    )
}

fn symlink(target: &Path, link: &Path) -> i64 {
    sys!(
        libc::SYS_symlinkat,
        c(target).as_ptr(),
        AT_FDCWD,
        c(link).as_ptr()
    )
}

fn symlink_swap(n: u64, link: &Path, allowed: &Path, denied: &Path, op: Op) {
    let spare = PathBuf::from(format!("{}.swap", link.display()));
    if op == Op::Chmod {
        append_to(allowed);
    }
    for (t, l) in [(allowed, link), (denied, spare.as_path())] {
        let r = symlink(t, l);
        if r < 0 {
            die(&format!("symlink {}: {}", l.display(), step(r)));
        }
    }
    let (l, s) = (c(link), c(&spare));
    race(n, op, l.as_ptr(), denied, &|| exchange(&l, &s));
}

fn dir_swap(n: u64, dir: &Path, allowed: &Path, denied_dir: &Path, op: Op) {
    let r = sys!(libc::SYS_mkdirat, AT_FDCWD, c(allowed).as_ptr(), 0o755);
    if r < 0 && r != -i64::from(libc::EEXIST) {
        die(&format!("mkdir {}: {}", allowed.display(), step(r)));
    }
    if op == Op::Chmod {
        append_to(&allowed.join("f"));
    }
    let r = symlink(denied_dir, dir);
    if r < 0 {
        die(&format!("symlink {}: {}", dir.display(), step(r)));
    }
    let (d, a) = (c(dir), c(allowed));
    let target = c(&dir.join("f"));
    race(n, op, target.as_ptr(), &denied_dir.join("f"), &|| {
        exchange(&d, &a)
    });
}

// ---------------------------------------------------------------------------------------
// Single-shot tries

/// `struct io_uring_params` as u32 words (include/uapi/linux/io_uring.h): sq_entries 0,
/// cq_entries 1, features 5, sq_off 10..20, cq_off 20..30.
fn io_uring(denied: &Path) {
    let before = Snap::of(denied);
    let mut p = [0u32; 30];
    let ring = sys!(libc::SYS_io_uring_setup, 4, p.as_mut_ptr());
    let mut steps = vec![("io_uring_setup", step(ring))];
    if ring < 0 {
        return verdict(denied, &before, Gate::Errno(ring), &steps);
    }
    let (sq_entries, cq_entries, features) = (p[0] as usize, p[1] as usize, p[5]);
    let (sq_tail, sq_mask, sq_array) = (p[11] as usize, p[12] as usize, p[16] as usize);
    let (cq_head, cq_mask, cqes) = (p[20] as usize, p[22] as usize, p[25] as usize);
    let sq_size = sq_array + sq_entries * 4;
    let cq_size = cqes + cq_entries * 16;
    let map = |len: usize, off: libc::off_t| {
        // SAFETY: a fresh shared mapping of the ring descriptor at the offsets the kernel
        // documents; nothing else is mapped over.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                ring as i32,
                off,
            )
        };
        if m == libc::MAP_FAILED {
            die("io_uring mmap failed");
        }
        m.cast::<u8>()
    };
    const IORING_FEAT_SINGLE_MMAP: u32 = 1;
    let (sq, cq) = if features & IORING_FEAT_SINGLE_MMAP != 0 {
        let m = map(sq_size.max(cq_size), 0);
        (m, m)
    } else {
        (map(sq_size, 0), map(cq_size, 0x800_0000))
    };
    let sqes = map(sq_entries * 64, 0x1000_0000);
    let path = c(denied);
    // SAFETY: every offset is one the kernel gave in io_uring_params, inside the mappings
    // made above with the sizes it implies; the tail is published with release ordering as
    // the io_uring ABI requires.
    unsafe {
        let tail = &*sq.add(sq_tail).cast::<AtomicU32>();
        let t = tail.load(Ordering::Acquire);
        let mask = *sq.add(sq_mask).cast::<u32>();
        let sqe = sqes.add((t & mask) as usize * 64);
        std::ptr::write_bytes(sqe, 0, 64);
        *sqe = 18; // IORING_OP_OPENAT
        *sqe.add(4).cast::<i32>() = libc::AT_FDCWD;
        *sqe.add(16).cast::<u64>() = path.as_ptr() as u64;
        *sqe.add(24).cast::<u32>() = 0o644;
        *sqe.add(28).cast::<u32>() = WR_APPEND as u32;
        *sqe.add(32).cast::<u64>() = 1;
        *sq.add(sq_array + (t & mask) as usize * 4).cast::<u32>() = t & mask;
        tail.store(t.wrapping_add(1), Ordering::Release);
    }
    const IORING_ENTER_GETEVENTS: libc::c_long = 1;
    let entered = sys!(
        libc::SYS_io_uring_enter,
        ring,
        1,
        1,
        IORING_ENTER_GETEVENTS,
        0,
        0
    );
    let res = if entered < 0 {
        entered
    } else {
        // SAFETY: as above; io_uring_enter returned after the completion was posted, and the
        // head is read with acquire ordering.
        unsafe {
            let head = (*cq.add(cq_head).cast::<AtomicU32>()).load(Ordering::Acquire);
            let m = *cq.add(cq_mask).cast::<u32>();
            i64::from(*cq.add(cqes + (head & m) as usize * 16 + 8).cast::<i32>())
        }
    };
    steps.push(("IORING_OP_OPENAT", step(res)));
    append_byte(res);
    verdict(denied, &before, Gate::Errno(res), &steps);
}

/// Runs `f` in a forked child (it may die of a signal); returns its exit code or the signal.
fn in_child(f: impl FnOnce() -> i32) -> Gate {
    // SAFETY: single-shot tries run single-threaded, so the child may go on with Rust code.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = f();
        // SAFETY: _exit ends the child at once, without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child, the status written to a live local.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFSIGNALED(status) {
        Gate::Signal(libc::WTERMSIG(status))
    } else {
        Gate::Errno(-i64::from(libc::WEXITSTATUS(status)))
    }
}

#[cfg(target_arch = "x86_64")]
fn int80(denied: &Path) {
    let before = Snap::of(denied);
    let gate = in_child(|| {
        // The 32-bit ABI takes 32-bit pointers: the path must live below 4 GiB.
        // SAFETY: a fresh private anonymous mapping.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
                -1,
                0,
            )
        };
        if m == libc::MAP_FAILED {
            return 99;
        }
        let bytes = denied.as_os_str().as_bytes();
        // SAFETY: the mapping is 4096 bytes, zeroed, and the path is shorter than that.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), m.cast::<u8>(), bytes.len().min(4095))
        };
        let mut r: u32 = 8; // __NR_creat in arch/x86/entry/syscalls/syscall_32.tbl
                            // SAFETY: int 0x80 enters the kernel's 32-bit syscall entry: eax is the number and
                            // the result, ebx/ecx/edx the arguments; r8-r11 are declared clobbered since the
                            // compat entry may not preserve them. LLVM reserves rbx, so the pointer is swapped
                            // into it and back around the call. The pointer is to the live mapping above.
        unsafe {
            std::arch::asm!(
                "xchg {p}, rbx",
                "int 0x80",
                "xchg {p}, rbx",
                p = inout(reg) m as u64 => _,
                inout("eax") r,
                in("ecx") 0o644u32,
                in("edx") 0u32,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            );
        }
        let r = r as i32;
        eprintln!("hp-race: int 0x80 creat {}", step(i64::from(r)));
        if r >= 0 {
            append_byte(i64::from(r));
            0
        } else {
            -r
        }
    });
    verdict(
        denied,
        &before,
        gate,
        &[("int 0x80 in a child", gate_str(gate))],
    );
}

fn gate_str(g: Gate) -> String {
    match g {
        Gate::Errno(e) => step(e),
        Gate::Signal(s) => format!("signal {s}"),
    }
}

#[cfg(target_arch = "x86_64")]
fn x32(denied: &Path) {
    let before = Snap::of(denied);
    const X32_SYSCALL_BIT: libc::c_long = 0x4000_0000;
    let fd = sys!(
        libc::SYS_openat | X32_SYSCALL_BIT,
        AT_FDCWD,
        c(denied).as_ptr(),
        WR_APPEND,
        0o644
    );
    append_byte(fd);
    verdict(
        denied,
        &before,
        Gate::Errno(fd),
        &[("x32 openat", step(fd))],
    );
}

fn open_by_handle(denied: &Path) {
    let before = Snap::of(denied);
    #[repr(C)]
    struct FileHandle {
        bytes: u32,
        kind: i32,
        handle: [u8; 128],
    }
    let mut fh = FileHandle {
        bytes: 128,
        kind: 0,
        handle: [0; 128],
    };
    let mut mount_id: i32 = 0;
    let r = sys!(
        libc::SYS_name_to_handle_at,
        AT_FDCWD,
        c(denied).as_ptr(),
        &mut fh as *mut FileHandle,
        &mut mount_id as *mut i32,
        0
    );
    let mut steps = vec![("name_to_handle_at", step(r))];
    let dir = denied.parent().unwrap_or(Path::new("/"));
    let mount_fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(dir).as_ptr(),
        RD | libc::O_DIRECTORY as libc::c_long
    );
    steps.push(("open the directory read-only", step(mount_fd)));
    let fd = sys!(
        libc::SYS_open_by_handle_at,
        mount_fd,
        &fh as *const FileHandle,
        (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
    );
    steps.push(("open_by_handle_at for writing", step(fd)));
    append_byte(fd);
    close(mount_fd);
    verdict(denied, &before, Gate::Errno(fd), &steps);
}

/// Maps our uid and gid to root in the new user namespace; how it went, for the record.
fn map_to_root(uid: u32, gid: u32) -> String {
    let w = |f: &str, s: String| match std::fs::write(f, s) {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
    };
    format!(
        "setgroups {}, uid_map {}, gid_map {}",
        w("/proc/self/setgroups", "deny".into()),
        w("/proc/self/uid_map", format!("0 {uid} 1")),
        w("/proc/self/gid_map", format!("0 {gid} 1"))
    )
}

fn ids() -> (u32, u32) {
    // SAFETY: getuid and getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

fn unshare_user(denied: &Path) {
    let before = Snap::of(denied);
    let (uid, gid) = ids();
    let r = sys!(libc::SYS_unshare, libc::CLONE_NEWUSER as libc::c_long);
    let mut steps = vec![("unshare(CLONE_NEWUSER)", step(r))];
    if r < 0 {
        return verdict(denied, &before, Gate::Errno(r), &steps);
    }
    let maps = map_to_root(uid, gid);
    steps.push(("maps", maps));
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(denied).as_ptr(),
        WR_APPEND,
        0o644
    );
    steps.push(("open for writing", step(fd)));
    append_byte(fd);
    verdict(denied, &before, Gate::Errno(r), &steps);
}

/// In a new mount namespace: keep our mounts from propagating out, bind the denied directory
/// over the allowed one, and write a file in the allowed one. Returns the steps.
fn bind_and_write(allowed_dir: &Path, denied_dir: &Path) -> Vec<(&'static str, String)> {
    let root = CString::new("/").unwrap();
    let r = sys!(
        libc::SYS_mount,
        0,
        root.as_ptr(),
        0,
        (libc::MS_REC | libc::MS_PRIVATE) as libc::c_long,
        0
    );
    let mut steps = vec![("mount --make-rprivate /", step(r))];
    // Without a private tree the bind could show in the parent namespace: stop there.
    if r < 0 {
        return steps;
    }
    let r = sys!(
        libc::SYS_mount,
        c(denied_dir).as_ptr(),
        c(allowed_dir).as_ptr(),
        0,
        libc::MS_BIND as libc::c_long,
        0
    );
    steps.push(("mount --bind", step(r)));
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(&allowed_dir.join("f")).as_ptr(),
        WR_APPEND,
        0o644
    );
    steps.push(("open ALLOWED_DIR/f", step(fd)));
    append_byte(fd);
    steps
}

fn mkdir_p(d: &Path) {
    let r = sys!(libc::SYS_mkdirat, AT_FDCWD, c(d).as_ptr(), 0o755);
    if r < 0 && r != -i64::from(libc::EEXIST) {
        die(&format!("mkdir {}: {}", d.display(), step(r)));
    }
}

fn unshare_mount(allowed_dir: &Path, denied_dir: &Path) {
    mkdir_p(allowed_dir);
    let denied = denied_dir.join("f");
    let before = Snap::of(&denied);
    let (uid, gid) = ids();
    let mut r = sys!(libc::SYS_unshare, libc::CLONE_NEWNS as libc::c_long);
    let mut steps = vec![("unshare(CLONE_NEWNS)", step(r))];
    if r < 0 {
        r = sys!(
            libc::SYS_unshare,
            (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as libc::c_long
        );
        steps.push(("unshare(CLONE_NEWUSER|CLONE_NEWNS)", step(r)));
        if r >= 0 {
            steps.push(("maps", map_to_root(uid, gid)));
        }
    }
    if r >= 0 {
        steps.extend(bind_and_write(allowed_dir, denied_dir));
    }
    verdict(&denied, &before, Gate::Errno(r), &steps);
}

fn clone3_user(allowed_dir: &Path, denied_dir: &Path) {
    mkdir_p(allowed_dir);
    let denied = denied_dir.join("f");
    let before = Snap::of(&denied);
    // struct clone_args, CLONE_ARGS_SIZE_VER0: flags, pidfd, child_tid, parent_tid,
    // exit_signal, stack, stack_size, tls.
    let args: [u64; 8] = [
        (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64,
        0,
        0,
        0,
        libc::SIGCHLD as u64,
        0,
        0,
        0,
    ];
    let pid = sys!(libc::SYS_clone3, args.as_ptr(), 64);
    if pid == 0 {
        // The child: a copy of this single-threaded process, in its own namespaces.
        let steps = bind_and_write(allowed_dir, denied_dir);
        let d: Vec<String> = steps.iter().map(|(n, r)| format!("{n} {r}")).collect();
        eprintln!("hp-race: child: {}", d.join(", "));
        // SAFETY: _exit ends the child at once.
        unsafe { libc::_exit(0) };
    }
    let steps = vec![("clone3(CLONE_NEWUSER|CLONE_NEWNS)", step(pid))];
    if pid > 0 {
        let mut status = 0;
        // SAFETY: waiting for our own child, the status written to a live local.
        unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    }
    verdict(&denied, &before, Gate::Errno(pid), &steps);
}

fn seccomp_listener(denied: &Path) {
    let before = Snap::of(denied);
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_USER_NOTIF: u32 = 0x7fc0_0000;
    // openat goes to our listener, everything else runs.
    let prog = [
        SockFilter {
            code: 0x20,
            jt: 0,
            jf: 0,
            k: 0,
        }, // ld [nr]
        SockFilter {
            code: 0x15,
            jt: 0,
            jf: 1,
            k: libc::SYS_openat as u32,
        }, // jeq openat
        SockFilter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: RET_USER_NOTIF,
        },
        SockFilter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: RET_ALLOW,
        },
    ];
    let fprog = SockFprog {
        len: prog.len() as u16,
        filter: prog.as_ptr(),
    };
    sys!(
        libc::SYS_prctl,
        libc::PR_SET_NO_NEW_PRIVS as libc::c_long,
        1,
        0,
        0,
        0
    );
    const NEW_LISTENER: libc::c_long = 1 << 3;
    let listener = sys!(
        libc::SYS_seccomp,
        1,
        NEW_LISTENER,
        &fprog as *const SockFprog
    );
    let mut steps = vec![("seccomp(SET_MODE_FILTER, NEW_LISTENER)", step(listener))];
    if listener < 0 {
        return verdict(denied, &before, Gate::Errno(listener), &steps);
    }
    let done = AtomicBool::new(false);
    let mut answered = 0;
    let opened = std::thread::scope(|sc| {
        let t = sc.spawn(|| {
            let fd = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                c(denied).as_ptr(),
                WR_APPEND,
                0o644
            );
            append_byte(fd);
            done.store(true, Ordering::SeqCst);
            fd
        });
        // Answer CONTINUE to every openat until the writer is done.
        const RECV: libc::c_ulong = 0xc050_2100; // SECCOMP_IOCTL_NOTIF_RECV
        const SEND: libc::c_ulong = 0xc018_2101; // SECCOMP_IOCTL_NOTIF_SEND
        while !done.load(Ordering::SeqCst) {
            let mut pfd = libc::pollfd {
                fd: listener as i32,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one live pollfd.
            if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
                continue;
            }
            let mut notif = [0u64; 10]; // struct seccomp_notif, zeroed as RECV wants
            if sys!(libc::SYS_ioctl, listener, RECV, notif.as_mut_ptr()) < 0 {
                continue;
            }
            // struct seccomp_notif_resp: id, val, error, flags (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
            let resp: [u64; 3] = [notif[0], 0, 1 << 32];
            if sys!(libc::SYS_ioctl, listener, SEND, resp.as_ptr()) == 0 {
                answered += 1;
            }
        }
        t.join().unwrap()
    });
    steps.push(("CONTINUE answers", answered.to_string()));
    steps.push(("open for writing", step(opened)));
    verdict(denied, &before, Gate::Errno(opened), &steps);
}

fn tmpfile_link(project_dir: &Path, denied: &Path) {
    let before = Snap::of(denied);
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(project_dir).as_ptr(),
        (libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC) as libc::c_long,
        0o644
    );
    let mut steps = vec![("O_TMPFILE in the project", step(fd))];
    if fd < 0 {
        return verdict(denied, &before, Gate::Errno(fd), &steps);
    }
    sys!(libc::SYS_write, fd, b"x".as_ptr(), 1);
    let empty = CString::new("").unwrap();
    let mut r = sys!(
        libc::SYS_linkat,
        fd,
        empty.as_ptr(),
        AT_FDCWD,
        c(denied).as_ptr(),
        libc::AT_EMPTY_PATH as libc::c_long
    );
    steps.push(("linkat AT_EMPTY_PATH", step(r)));
    if r < 0 {
        let proc_path = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
        r = sys!(
            libc::SYS_linkat,
            AT_FDCWD,
            proc_path.as_ptr(),
            AT_FDCWD,
            c(denied).as_ptr(),
            libc::AT_SYMLINK_FOLLOW as libc::c_long
        );
        steps.push(("linkat /proc/self/fd/N AT_SYMLINK_FOLLOW", step(r)));
    }
    close(fd);
    verdict(denied, &before, Gate::Errno(r), &steps);
}

fn hardlink(denied: &Path, link: &Path) {
    let before = Snap::of(denied);
    let r = sys!(
        libc::SYS_linkat,
        AT_FDCWD,
        c(denied).as_ptr(),
        AT_FDCWD,
        c(link).as_ptr(),
        0
    );
    let mut steps = vec![("link into the project", step(r))];
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(link).as_ptr(),
        (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
    );
    steps.push(("open the link for writing", step(fd)));
    append_byte(fd);
    verdict(denied, &before, Gate::Errno(r), &steps);
}

fn rename_in(denied_dir: &Path, dest: &Path) {
    let before = Snap::of(denied_dir);
    let r = sys!(
        libc::SYS_renameat,
        AT_FDCWD,
        c(denied_dir).as_ptr(),
        AT_FDCWD,
        c(dest).as_ptr()
    );
    verdict(
        denied_dir,
        &before,
        Gate::Errno(r),
        &[("rename into the project", step(r))],
    );
}

/// Opens `denied` read-only (no write, so not intercepted) and runs `f` on the descriptor.
fn with_read_only(denied: &Path, what: &'static str, f: impl FnOnce(i64) -> i64) {
    let before = Snap::of(denied);
    let fd = sys!(libc::SYS_openat, AT_FDCWD, c(denied).as_ptr(), RD);
    let mut steps = vec![("open read-only", step(fd))];
    if fd < 0 {
        return verdict(denied, &before, Gate::Errno(fd), &steps);
    }
    // The coarse clock must move on, or a ctime-only change (fchown to ourselves) is invisible.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let r = f(fd);
    steps.push((what, step(r)));
    close(fd);
    verdict(denied, &before, Gate::Errno(r), &steps);
}

fn symlink_out(link: &Path, denied: &Path) {
    let before = Snap::of(denied);
    let r = symlink(denied, link);
    let mut steps = vec![("symlink in the project", step(r))];
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c(link).as_ptr(),
        (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
    );
    steps.push(("open the symlink for writing", step(fd)));
    append_byte(fd);
    verdict(denied, &before, Gate::Errno(fd), &steps);
}

// ---------------------------------------------------------------------------------------
// Deputy tries

/// Puts this process in a Landlock domain like the session's: with scopes (ABI 6), signals
/// scoped and no file system right handled; before (ABI 2 to 5), only REFER handled and
/// allowed beneath `/`. Either way the domain keeps us from tracing processes outside it,
/// which is what matters here. Prints what it did on stderr.
fn landlock() {
    #[repr(C)]
    struct RulesetAttr {
        fs: u64,
        net: u64,
        scoped: u64,
    }
    #[repr(C, packed)]
    struct PathBeneath {
        allowed: u64,
        parent_fd: i32,
    }
    const REFER: u64 = 1 << 13;
    let abi = sys!(
        libc::SYS_landlock_create_ruleset,
        std::ptr::null::<RulesetAttr>(),
        0,
        1
    );
    if abi < 2 {
        eprintln!("hp-race: landlock: none (ABI {abi})");
        return;
    }
    let scoped = abi >= 6;
    let attr = RulesetAttr {
        fs: if scoped { 0 } else { REFER },
        net: 0,
        scoped: if scoped { 2 } else { 0 },
    };
    let rs = sys!(
        libc::SYS_landlock_create_ruleset,
        &attr as *const RulesetAttr,
        std::mem::size_of::<RulesetAttr>(),
        0
    );
    if rs < 0 {
        die(&format!("landlock_create_ruleset: {}", step(rs)));
    }
    if !scoped {
        let root = sys!(
            libc::SYS_openat,
            AT_FDCWD,
            c"/".as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC
        );
        let rule = PathBeneath {
            allowed: REFER,
            parent_fd: root as i32,
        };
        let r = sys!(
            libc::SYS_landlock_add_rule,
            rs,
            1,
            &rule as *const PathBeneath,
            0
        );
        if r < 0 {
            die(&format!("landlock_add_rule: {}", step(r)));
        }
        close(root);
    }
    sys!(libc::SYS_prctl, libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    let r = sys!(libc::SYS_landlock_restrict_self, rs, 0);
    if r < 0 {
        die(&format!("landlock_restrict_self: {}", step(r)));
    }
    close(rs);
    eprintln!("hp-race: landlock: ABI {abi}");
}

fn openat2_read(file: &Path) {
    let fd = openat2(AT_FDCWD, &c(file), RD);
    let got = if fd >= 0 { read_all(fd) } else { Err(fd) };
    eprintln!(
        "hp-race: openat2 FILE {}, read {}",
        step(fd),
        got.as_ref()
            .map_or_else(|e| step(*e), |b| format!("{} bytes", b.len()))
    );
    single(got.is_ok_and(|b| !b.is_empty()), fd);
}

/// Makes a Landlock domain that handles reading files and allows it nowhere, then tries to
/// read `file` with openat2 (which lite mode's daemon performs).
fn own_domain(file: &Path) {
    #[repr(C)]
    struct RulesetAttr {
        fs: u64,
        net: u64,
        scoped: u64,
    }
    const READ_FILE: u64 = 1 << 2;
    let text = std::fs::read(file).unwrap_or_else(|e| die(&format!("{}: {e}", file.display())));
    let attr = RulesetAttr {
        fs: READ_FILE,
        net: 0,
        scoped: 0,
    };
    let rs = sys!(
        libc::SYS_landlock_create_ruleset,
        &attr as *const RulesetAttr,
        std::mem::size_of::<RulesetAttr>(),
        0
    );
    sys!(libc::SYS_prctl, libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    let r = if rs >= 0 {
        sys!(libc::SYS_landlock_restrict_self, rs, 0)
    } else {
        rs
    };
    close(rs);
    if r < 0 {
        eprintln!("hp-race: landlock_restrict_self {}", step(r));
        println!("no domain {}", -r);
        return;
    }
    let fd = openat2(AT_FDCWD, &c(file), RD);
    let got = if fd >= 0 { read_all(fd) } else { Err(fd) };
    eprintln!(
        "hp-race: landlock_restrict_self ok, openat2 FILE {}, read {}",
        step(fd),
        got.as_ref()
            .map_or_else(|e| step(*e), |b| format!("{} bytes", b.len()))
    );
    single(got.is_ok_and(|b| b == text), fd);
}

/// `struct open_how` (include/uapi/linux/openat2.h).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// `openat2(dir, path, {flags})`.
fn openat2(dir: libc::c_long, path: &CString, flags: libc::c_long) -> i64 {
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC as libc::c_long) as u64,
        mode: 0,
        resolve: 0,
    };
    sys!(
        libc::SYS_openat2,
        dir,
        path.as_ptr(),
        &how as *const OpenHow,
        std::mem::size_of::<OpenHow>()
    )
}

/// Reads what `fd` holds (at most 64 KiB), and closes it.
fn read_all(fd: i64) -> Result<Vec<u8>, i64> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < 65536 {
        let n = sys!(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len());
        if n < 0 {
            close(fd);
            return Err(n);
        }
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    close(fd);
    Ok(out)
}

fn proc_read(victim: &str, entry: &str, secret: &str, dirfd: bool) {
    let (fd, mut steps) = if dirfd {
        let dir = CString::new(format!("/proc/{victim}")).unwrap();
        let d = sys!(
            libc::SYS_openat,
            AT_FDCWD,
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC
        );
        let name = CString::new(entry).unwrap();
        let fd = if d >= 0 { openat2(d, &name, RD) } else { d };
        close(d);
        (
            fd,
            vec![
                ("open /proc/VICTIM", step(d)),
                ("openat2 ENTRY from it", step(fd)),
            ],
        )
    } else {
        let p = CString::new(format!("/proc/{victim}/{entry}")).unwrap();
        let fd = openat2(AT_FDCWD, &p, RD);
        (fd, vec![("openat2 /proc/VICTIM/ENTRY", step(fd))])
    };
    let got = if fd >= 0 { read_all(fd) } else { Err(fd) };
    let found = got
        .as_ref()
        .is_ok_and(|b| b.windows(secret.len()).any(|w| w == secret.as_bytes()));
    steps.push((
        "read",
        match &got {
            Ok(b) => format!(
                "{} bytes, secret {}",
                b.len(),
                if found { "read" } else { "not read" }
            ),
            Err(e) => step(*e),
        },
    ));
    let d: Vec<String> = steps.iter().map(|(n, r)| format!("{n} {r}")).collect();
    eprintln!("hp-race: {}", d.join(", "));
    single(found, fd);
}

fn proc_mem(victim: &str, addr: u64, use_openat2: bool) {
    let p = CString::new(format!("/proc/{victim}/mem")).unwrap();
    let flags = (libc::O_RDWR | libc::O_CLOEXEC) as libc::c_long;
    let fd = if use_openat2 {
        openat2(AT_FDCWD, &p, flags)
    } else {
        sys!(libc::SYS_openat, AT_FDCWD, p.as_ptr(), flags)
    };
    let w = if fd >= 0 {
        sys!(libc::SYS_pwrite64, fd, b"HPX".as_ptr(), 3, addr)
    } else {
        fd
    };
    close(fd);
    eprintln!(
        "hp-race: open /proc/VICTIM/mem O_RDWR {}, write {}",
        step(fd),
        step(w)
    );
    single(w == 3, fd);
}

fn proc_path(victim: &str, op: &str, link_path: &str, file: &Path) {
    let before = Snap::of(file);
    let p = CString::new(format!("/proc/{victim}/{link_path}")).unwrap();
    let r = match op {
        "chmod" => {
            let want = if before.mode() == 0o600 { 0o640 } else { 0o600 };
            sys!(libc::SYS_fchmodat, AT_FDCWD, p.as_ptr(), want)
        }
        "truncate" => sys!(libc::SYS_truncate, p.as_ptr(), 0),
        o => die(&format!("unknown operation {o} (chmod or truncate)")),
    };
    verdict(file, &before, Gate::Errno(r), &[(op, step(r))]);
}

fn proc_fd(victim: &str, n: &str, file: &Path) {
    let before = Snap::of(file);
    let p = CString::new(format!("/proc/{victim}/fd/{n}")).unwrap();
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        p.as_ptr(),
        (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
    );
    append_byte(fd);
    verdict(
        file,
        &before,
        Gate::Errno(fd),
        &[("open /proc/VICTIM/fd/N for writing", step(fd))],
    );
}

/// Our own /proc entries and a child's, which the daemon must still reach for us.
fn proc_own(file: &Path) {
    static BUF: [u8; 8] = *b"original";
    let mut steps: Vec<(&str, String)> = Vec::new();
    let mut failed = Vec::new();
    let mut check = |name: &'static str, ok: bool, how: String| {
        if !ok {
            failed.push(name);
        }
        steps.push((name, how));
    };
    let ro = CString::new(file.as_os_str().as_bytes()).unwrap();
    let held = sys!(libc::SYS_openat, AT_FDCWD, ro.as_ptr(), RD);
    if held < 0 {
        die(&format!("open {}: {}", file.display(), step(held)));
    }
    // SAFETY: single-shot tries run single-threaded; the child only sleeps until killed.
    let child = unsafe { libc::fork() };
    if child == 0 {
        loop {
            // SAFETY: pause takes nothing; the parent kills us.
            unsafe { libc::pause() };
        }
    }
    if child < 0 {
        die("fork failed");
    }
    let environ = |base: &str| {
        let p = CString::new(format!("{base}/environ")).unwrap();
        let fd = openat2(AT_FDCWD, &p, RD);
        let got = if fd >= 0 { read_all(fd) } else { Err(fd) };
        (
            got.as_ref().is_ok_and(|b| !b.is_empty()),
            match got {
                Ok(b) => format!("{} bytes", b.len()),
                Err(e) => step(e),
            },
        )
    };
    let (ok, how) = environ("/proc/self");
    check("openat2 /proc/self/environ", ok, how);
    let (ok, how) = environ(&format!("/proc/{child}"));
    check("openat2 /proc/CHILD/environ", ok, how);
    // From a descriptor of /proc/CHILD.
    let dir = CString::new(format!("/proc/{child}")).unwrap();
    let d = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        dir.as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC
    );
    let fd = if d >= 0 {
        openat2(d, &CString::new("environ").unwrap(), RD)
    } else {
        d
    };
    close(d);
    let got = if fd >= 0 { read_all(fd) } else { Err(fd) };
    check(
        "openat2 environ from /proc/CHILD",
        got.as_ref().is_ok_and(|b| !b.is_empty()),
        got.map_or_else(step, |b| format!("{} bytes", b.len())),
    );
    // Memory, written and read back: our own, then the child's.
    let addr = BUF.as_ptr() as u64;
    for (name, who) in [
        ("open /proc/self/mem O_RDWR", "self".to_string()),
        ("open /proc/CHILD/mem O_RDWR", child.to_string()),
    ] {
        let p = CString::new(format!("/proc/{who}/mem")).unwrap();
        let fd = sys!(
            libc::SYS_openat,
            AT_FDCWD,
            p.as_ptr(),
            (libc::O_RDWR | libc::O_CLOEXEC) as libc::c_long
        );
        let mut back = [0u8; 3];
        let (w, r) = if fd >= 0 {
            let w = sys!(libc::SYS_pwrite64, fd, b"HPX".as_ptr(), 3, addr);
            let r = sys!(libc::SYS_pread64, fd, back.as_mut_ptr(), 3, addr);
            (w, r)
        } else {
            (fd, fd)
        };
        close(fd);
        check(
            name,
            w == 3 && r == 3 && &back == b"HPX",
            format!("{}, write {}, read back {}", step(fd), step(w), step(r)),
        );
    }
    // The child's cwd (ours): a path call through it.
    let name = file.file_name().unwrap().to_string_lossy();
    let want = if Snap::of(file).mode() == 0o600 {
        0o640
    } else {
        0o600
    };
    let p = CString::new(format!("/proc/{child}/cwd/{name}")).unwrap();
    let r = sys!(libc::SYS_fchmodat, AT_FDCWD, p.as_ptr(), want);
    check(
        "chmod /proc/CHILD/cwd/FILE",
        r == 0 && Snap::of(file).mode() == want,
        step(r),
    );
    // The child's descriptor of FILE (inherited), reopened for writing.
    let size = Snap::of(file).size();
    let p = CString::new(format!("/proc/{child}/fd/{held}")).unwrap();
    let w = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        p.as_ptr(),
        (libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC) as libc::c_long
    );
    append_byte(w);
    check(
        "open /proc/CHILD/fd/N for writing",
        w >= 0 && Snap::of(file).size() == size.map(|s| s + 1),
        step(w),
    );
    // SAFETY: kill and waitpid on our own child, the status written to a live local.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(child, &mut status, 0);
    }
    close(held);
    let d: Vec<String> = steps.iter().map(|(n, r)| format!("{n} {r}")).collect();
    eprintln!("hp-race: {}", d.join(", "));
    if failed.is_empty() {
        println!("own ok");
    } else {
        println!("own failed: {}", failed.join(", "));
    }
}

// ---------------------------------------------------------------------------------------
// What the filter must refuse whatever the path: keystrokes into a terminal, syscalls that
// write where the daemon cannot see, ioctls that change the file a read-only descriptor holds.

const TIOCSTI: u64 = 0x5412;
const TIOCSPTLCK: u64 = 0x4004_5431;
const TIOCGPTPEER: u64 = 0x5441;
const TIOCSCTTY: u64 = 0x540e;
const FS_IOC_GETVERSION: u64 = 0x8008_7601;
const FS_IOC_SETVERSION: u64 = 0x4008_7602;

/// `tiocsti`: in a new session whose controlling terminal is a new pty of our own, pushes
/// `x\n` into the terminal's input with `TIOCSTI`, once with the plain command and once with
/// high bits set in the 64-bit argument (the kernel reads 32). An escape is each `x` read
/// back from the terminal: what a shell reading it would have run as typed.
fn tiocsti() {
    let m = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        c"/dev/ptmx".as_ptr(),
        (libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) as libc::c_long
    );
    if m < 0 {
        die(&format!("cannot open /dev/ptmx: {}", -m));
    }
    let unlock: libc::c_int = 0;
    sys!(
        libc::SYS_ioctl,
        m,
        TIOCSPTLCK,
        &unlock as *const libc::c_int
    );
    let mut pipe = [0i32; 2];
    sys!(
        libc::SYS_pipe2,
        pipe.as_mut_ptr(),
        libc::O_CLOEXEC as libc::c_long
    );
    // SAFETY: the process has one thread here; the child only makes syscalls and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        sys!(libc::SYS_setsid);
        let t = sys!(
            libc::SYS_ioctl,
            m,
            TIOCGPTPEER,
            (libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK) as libc::c_long
        );
        sys!(libc::SYS_ioctl, t, TIOCSCTTY, 0);
        let mut results = Vec::new();
        for cmd in [TIOCSTI, TIOCSTI | 1 << 32] {
            let r = sys!(libc::SYS_ioctl, t, cmd, b"x".as_ptr());
            sys!(libc::SYS_ioctl, t, cmd, b"\n".as_ptr());
            results.push(r);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        // A terminal in canonical mode hands out one line per read.
        let mut got = 0;
        let mut buf = [0u8; 64];
        loop {
            let n = sys!(libc::SYS_read, t, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            got += buf[..n as usize].iter().filter(|&&b| b == b'x').count();
        }
        let line = format!("{} {} {got}", results[0], results[1]);
        sys!(libc::SYS_write, pipe[1], line.as_ptr(), line.len());
        // SAFETY: ends the forked child without running the parent's exit handlers.
        unsafe { libc::_exit(0) };
    }
    close(pipe[1] as i64);
    let mut buf = [0u8; 64];
    let n = sys!(libc::SYS_read, pipe[0], buf.as_mut_ptr(), buf.len());
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let text = String::from_utf8_lossy(&buf[..n.max(0) as usize]).to_string();
    let v: Vec<i64> = text.split(' ').filter_map(|w| w.parse().ok()).collect();
    let [plain, high, got] = v[..] else {
        die(&format!("the child said {text:?}"))
    };
    eprintln!(
        "hp-race: TIOCSTI {}, TIOCSTI with high bits {}, read back {got}",
        step(plain),
        step(high)
    );
    if got == 0 && plain < 0 && plain == high {
        println!("refused {}", -plain);
    } else {
        println!("attempts 2 escapes {got}");
    }
}

/// `acct DENIED`: turns process accounting on into DENIED (an existing file), runs a child
/// that exits, and turns it off. An escape is a record appended to DENIED.
fn acct(denied: &Path) {
    let before = Snap::of(denied);
    let r = sys!(libc::SYS_acct, c(denied).as_ptr());
    let steps = vec![("acct", step(r))];
    if r == 0 {
        let _ = std::process::Command::new("/bin/true").status();
        sys!(libc::SYS_acct, 0);
    }
    verdict(denied, &before, Gate::Errno(r), &steps);
}

/// `mq-open`: creates a POSIX message queue, a file in the mqueue file system, which no
/// path the daemon sees names. An escape is the queue made (removed again).
fn mq_open() {
    let name = CString::new(format!("hp-race-{}", std::process::id())).unwrap();
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC;
    let fd = sys!(
        libc::SYS_mq_open,
        name.as_ptr(),
        flags as libc::c_long,
        0o600,
        0
    );
    eprintln!("hp-race: mq_open O_CREAT {}", step(fd));
    if fd >= 0 {
        sys!(libc::SYS_mq_unlink, name.as_ptr());
        close(fd);
        println!("attempts 1 escapes 1");
    } else {
        println!("refused {}", -fd);
    }
}

/// `fs-ioctl DENIED`: on a read-only descriptor of DENIED, a file-system ioctl that no list
/// names as a writer (`FS_IOC_SETVERSION`: the inode's generation, on ext2/3/4). An escape
/// is the generation changed, read again through a fresh descriptor.
fn fs_ioctl(denied: &Path) {
    let generation = || -> Option<u32> {
        let fd = sys!(libc::SYS_openat, AT_FDCWD, c(denied).as_ptr(), RD);
        let mut v: u32 = 0;
        let r = sys!(libc::SYS_ioctl, fd, FS_IOC_GETVERSION, &mut v as *mut u32);
        close(fd);
        (r == 0).then_some(v)
    };
    let before = generation();
    let fd = sys!(libc::SYS_openat, AT_FDCWD, c(denied).as_ptr(), RD);
    let want = before.unwrap_or(0).wrapping_add(1);
    let r = sys!(libc::SYS_ioctl, fd, FS_IOC_SETVERSION, &want as *const u32);
    close(fd);
    let after = generation();
    eprintln!(
        "hp-race: open read-only {}, FS_IOC_SETVERSION {}, generation {before:?} -> {after:?}",
        step(fd),
        step(r)
    );
    single(after != before, r);
}

/// `core-dump DIR`: a child moves to DIR, raises its core limit as far as it may, and aborts:
/// the kernel writes `DIR/core` (with the usual `core_pattern`) where no write is seen. An
/// escape is a file made in DIR.
fn core_dump(dir: &Path) {
    let before = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    // SAFETY: the process has one thread here; the child only makes syscalls and aborts.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let inf = libc::rlimit {
            rlim_cur: libc::RLIM_INFINITY,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: plain syscalls on live values; abort ends the child.
        unsafe {
            libc::chdir(c(dir).as_ptr());
            if libc::setrlimit(libc::RLIMIT_CORE, &inf) != 0 {
                // Unprivileged: the soft limit up to the hard one.
                let mut soft = inf;
                libc::getrlimit(libc::RLIMIT_CORE, &mut soft);
                soft.rlim_cur = soft.rlim_max;
                libc::setrlimit(libc::RLIMIT_CORE, &soft);
            }
            libc::abort();
        }
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let after = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    let dumped = libc::WCOREDUMP(status);
    eprintln!(
        "hp-race: child killed by signal {}, core dumped {dumped}, files {before} -> {after}",
        libc::WTERMSIG(status)
    );
    if after > before {
        println!("attempts 1 escapes 1");
    } else if !dumped {
        println!("refused signal {}", libc::WTERMSIG(status));
    } else {
        println!("attempts 1 escapes 0");
    }
}

/// `prlimit-parent`: lowers the open-file limit of our parent (under hallpass, the launcher:
/// a process outside the session) by one, then puts it back. An escape is the change seen.
fn prlimit_parent() {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let mut old = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let r = sys!(
        libc::SYS_prlimit64,
        parent,
        libc::RLIMIT_NOFILE,
        0,
        &mut old as *mut libc::rlimit64
    );
    if r < 0 {
        eprintln!("hp-race: reading the parent's limit {}", step(r));
        println!("refused {}", -r);
        return;
    }
    let lower = libc::rlimit64 {
        rlim_cur: old.rlim_cur - 1,
        rlim_max: old.rlim_max,
    };
    let r = sys!(
        libc::SYS_prlimit64,
        parent,
        libc::RLIMIT_NOFILE,
        &lower as *const libc::rlimit64,
        0
    );
    let mut now = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    sys!(
        libc::SYS_prlimit64,
        parent,
        libc::RLIMIT_NOFILE,
        0,
        &mut now as *mut libc::rlimit64
    );
    let changed = now.rlim_cur != old.rlim_cur;
    if changed {
        sys!(
            libc::SYS_prlimit64,
            parent,
            libc::RLIMIT_NOFILE,
            &old as *const libc::rlimit64,
            0
        );
    }
    eprintln!(
        "hp-race: prlimit on the parent {}, changed {changed}",
        step(r)
    );
    single(changed, r);
}

/// `tty-steal TTY`: in a new session, opens TTY (another terminal, which is nobody's
/// controlling terminal) read-only, which makes it ours, then writes `INJECTED` through
/// `/dev/tty`. Prints the write's result; the caller judges the escape on the terminal.
fn tty_steal(tty: &Path) {
    // SAFETY: the process has one thread here; the child only makes syscalls and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        sys!(libc::SYS_setsid);
        let r = sys!(libc::SYS_openat, AT_FDCWD, c(tty).as_ptr(), RD);
        let w = sys!(
            libc::SYS_openat,
            AT_FDCWD,
            c"/dev/tty".as_ptr(),
            (libc::O_WRONLY | libc::O_CLOEXEC) as libc::c_long
        );
        if w >= 0 {
            sys!(libc::SYS_write, w, b"INJECTED\n".as_ptr(), 9);
        }
        eprintln!(
            "hp-race: open the terminal read-only {}, /dev/tty for writing {}",
            step(r),
            step(w)
        );
        // SAFETY: ends the forked child.
        unsafe { libc::_exit(if w >= 0 { 0 } else { (-w) as i32 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match libc::WEXITSTATUS(status) {
        0 => println!("wrote"),
        e => println!("refused {e}"),
    }
}

/// `perf-parent`: opens a performance counter on our parent (under hallpass, the launcher:
/// outside the session). As root that reaches past the ptrace check, and a `sigtrap` event
/// would kill it; holding the counter is the escape (it is closed at once).
fn perf_parent() {
    // struct perf_event_attr as of its first published size (64 bytes): type, size, config,
    // then flags at offset 40 (bit 5 exclude_kernel, bit 6 exclude_hv).
    let mut attr = [0u8; 64];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // PERF_TYPE_SOFTWARE
    attr[4..8].copy_from_slice(&64u32.to_ne_bytes());
    attr[8..16].copy_from_slice(&1u64.to_ne_bytes()); // PERF_COUNT_SW_TASK_CLOCK
    attr[40..48].copy_from_slice(&((1u64 << 5) | (1 << 6)).to_ne_bytes());
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let fd = sys!(libc::SYS_perf_event_open, attr.as_ptr(), parent, -1, -1, 0);
    eprintln!("hp-race: perf_event_open on the parent {}", step(fd));
    close(fd);
    single(fd >= 0, fd);
}

/// `dev-open DIR`: makes DIR/null, a node of /dev/null's device (1:3), and opens it for
/// writing: a device reached through a name in the project. An escape is the open.
fn dev_open(dir: &Path) {
    let node = c(&dir.join("null"));
    let mode = (libc::S_IFCHR | 0o600) as libc::c_long;
    let made = sys!(
        libc::SYS_mknodat,
        AT_FDCWD,
        node.as_ptr(),
        mode,
        libc::makedev(1, 3)
    );
    let fd = sys!(
        libc::SYS_openat,
        AT_FDCWD,
        node.as_ptr(),
        (libc::O_WRONLY | libc::O_CLOEXEC) as libc::c_long
    );
    eprintln!(
        "hp-race: mknod {}, open for writing {}",
        step(made),
        step(fd)
    );
    close(fd);
    single(fd >= 0, if made < 0 { made } else { fd });
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("landlocked") {
        args.remove(1);
        landlock();
    }
    let arg = |i: usize| {
        args.get(i)
            .cloned()
            .unwrap_or_else(|| die("usage: see the top of hp-race.rs"))
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
