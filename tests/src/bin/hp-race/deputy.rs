//! Deputy tries: what the daemon performs must reach no further than we could ourselves.

use super::*;

/// Puts this process in a Landlock domain like the session's: with scopes (ABI 6), signals
/// scoped and no file system right handled; before (ABI 2 to 5), only REFER handled and
/// allowed beneath `/`. Either way the domain keeps us from tracing processes outside it,
/// which is what matters here. Prints what it did on stderr.
pub(crate) fn landlock() {
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

pub(crate) fn openat2_read(file: &Path) {
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
pub(crate) fn own_domain(file: &Path) {
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
pub(crate) struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// `openat2(dir, path, {flags})`.
pub(crate) fn openat2(dir: libc::c_long, path: &CString, flags: libc::c_long) -> i64 {
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
pub(crate) fn read_all(fd: i64) -> Result<Vec<u8>, i64> {
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

pub(crate) fn proc_read(victim: &str, entry: &str, secret: &str, dirfd: bool) {
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

pub(crate) fn proc_mem(victim: &str, addr: u64, use_openat2: bool) {
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

pub(crate) fn proc_path(victim: &str, op: &str, link_path: &str, file: &Path) {
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

pub(crate) fn proc_fd(victim: &str, n: &str, file: &Path) {
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
pub(crate) fn proc_own(file: &Path) {
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
