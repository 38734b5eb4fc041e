//! What the filter must refuse whatever the path: keystrokes into a terminal, syscalls
//! that write where the daemon cannot see, ioctls that change the file a read-only
//! descriptor holds.

use super::*;
// write where the daemon cannot see, ioctls that change the file a read-only descriptor holds.

pub(crate) const TIOCSTI: u64 = 0x5412;
pub(crate) const TIOCSPTLCK: u64 = 0x4004_5431;
pub(crate) const TIOCGPTPEER: u64 = 0x5441;
pub(crate) const TIOCSCTTY: u64 = 0x540e;
pub(crate) const FS_IOC_GETVERSION: u64 = 0x8008_7601;
pub(crate) const FS_IOC_SETVERSION: u64 = 0x4008_7602;

/// `tiocsti`: in a new session whose controlling terminal is a new pty of our own, pushes
/// `x\n` into the terminal's input with `TIOCSTI`, once with the plain command and once with
/// high bits set in the 64-bit argument (the kernel reads 32). An escape is each `x` read
/// back from the terminal: what a shell reading it would have run as typed.
pub(crate) fn tiocsti() {
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
pub(crate) fn acct(denied: &Path) {
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
pub(crate) fn mq_open() {
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
pub(crate) fn fs_ioctl(denied: &Path) {
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
pub(crate) fn core_dump(dir: &Path) {
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
pub(crate) fn prlimit_parent() {
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
pub(crate) fn tty_steal(tty: &Path) {
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
pub(crate) fn perf_parent() {
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
pub(crate) fn dev_open(dir: &Path) {
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
