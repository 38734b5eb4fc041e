//! Single-shot tries: ways around the filter or the policy, each tried once.

use super::*;

/// `struct io_uring_params` as u32 words (include/uapi/linux/io_uring.h): sq_entries 0,
/// cq_entries 1, features 5, sq_off 10..20, cq_off 20..30.
pub(crate) fn io_uring(denied: &Path) {
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
pub(crate) fn in_child(f: impl FnOnce() -> i32) -> Gate {
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
pub(crate) fn int80(denied: &Path) {
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

pub(crate) fn gate_str(g: Gate) -> String {
    match g {
        Gate::Errno(e) => step(e),
        Gate::Signal(s) => format!("signal {s}"),
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn x32(denied: &Path) {
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

pub(crate) fn open_by_handle(denied: &Path) {
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
pub(crate) fn map_to_root(uid: u32, gid: u32) -> String {
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

pub(crate) fn ids() -> (u32, u32) {
    // SAFETY: getuid and getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

pub(crate) fn unshare_user(denied: &Path) {
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
pub(crate) fn bind_and_write(allowed_dir: &Path, denied_dir: &Path) -> Vec<(&'static str, String)> {
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

pub(crate) fn mkdir_p(d: &Path) {
    let r = sys!(libc::SYS_mkdirat, AT_FDCWD, c(d).as_ptr(), 0o755);
    if r < 0 && r != -i64::from(libc::EEXIST) {
        die(&format!("mkdir {}: {}", d.display(), step(r)));
    }
}

pub(crate) fn unshare_mount(allowed_dir: &Path, denied_dir: &Path) {
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

pub(crate) fn clone3_user(allowed_dir: &Path, denied_dir: &Path) {
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

pub(crate) fn seccomp_listener(denied: &Path) {
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

pub(crate) fn tmpfile_link(project_dir: &Path, denied: &Path) {
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

pub(crate) fn hardlink(denied: &Path, link: &Path) {
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

pub(crate) fn rename_in(denied_dir: &Path, dest: &Path) {
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
pub(crate) fn with_read_only(denied: &Path, what: &'static str, f: impl FnOnce(i64) -> i64) {
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

pub(crate) fn symlink_out(link: &Path, denied: &Path) {
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
