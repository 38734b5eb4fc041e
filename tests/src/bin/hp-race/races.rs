//! Races: another thread changes what a syscall names between the check and its use.

use super::*;

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Open,
    Chmod,
}

pub(crate) fn op_arg(a: Option<&String>) -> Op {
    match a.map(String::as_str) {
        None | Some("open") => Op::Open,
        Some("chmod") => Op::Chmod,
        Some(o) => die(&format!("unknown race operation {o} (open or chmod)")),
    }
}

/// N attempts of `op` on the path at `path` while `swap` runs in a loop on another thread;
/// escapes are counted on `denied`.
pub(crate) fn race(
    n: u64,
    op: Op,
    path: *const libc::c_char,
    denied: &Path,
    swap: &(dyn Fn() -> i64 + Sync),
) {
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
pub(crate) fn same_length(a: &str, b: &str) -> (Vec<u8>, Vec<u8>) {
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

pub(crate) fn buffer_flip(n: u64, allowed: &str, denied: &str, op: Op) {
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
pub(crate) fn flip_race(
    n: u64,
    flip: &(dyn Fn() + Sync),
    attempt: &mut dyn FnMut() -> (i64, bool),
) {
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
pub(crate) fn fd_swap(n: u64, allowed: &Path, denied: &Path) {
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

pub(crate) fn how_flip(n: u64, denied: &Path) {
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

pub(crate) fn addr_flip(n: u64, denied_dir: &Path) {
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
pub(crate) fn sun(p: &Path) -> Vec<u8> {
    let mut sa = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    sa.extend_from_slice(p.as_os_str().as_bytes());
    sa.push(0);
    sa
}

pub(crate) fn send_flip(n: u64, allowed: &Path, denied: &Path) {
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

pub(crate) fn exchange(a: &CString, b: &CString) -> i64 {
    sys!(
        libc::SYS_renameat2,
        AT_FDCWD,
        a.as_ptr(),
        AT_FDCWD,
        b.as_ptr(),
        RENAME_EXCHANGE
    )
}

pub(crate) fn symlink(target: &Path, link: &Path) -> i64 {
    sys!(
        libc::SYS_symlinkat,
        c(target).as_ptr(),
        AT_FDCWD,
        c(link).as_ptr()
    )
}

pub(crate) fn symlink_swap(n: u64, link: &Path, allowed: &Path, denied: &Path, op: Op) {
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

pub(crate) fn dir_swap(n: u64, dir: &Path, allowed: &Path, denied_dir: &Path, op: Op) {
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
