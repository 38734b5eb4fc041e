use super::*;
use crate::bpf::run;
use crate::syscalls::{AUDIT_ARCH_I386, O_PATH, TTY_IOCTLS, WRITE_IOCTLS};

fn data(arch: u32, nr: u32, args: [u64; 6]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&nr.to_ne_bytes());
    d.extend_from_slice(&arch.to_ne_bytes());
    d.extend_from_slice(&0u64.to_ne_bytes());
    for a in args {
        d.extend_from_slice(&a.to_ne_bytes());
    }
    d
}

fn opts(coverage: Coverage) -> Options {
    Options {
        coverage,
        report_exec: false,
        report_connect: false,
    }
}

fn decide(arch: Arch, cov: Coverage, name: &str, args: [u64; 6]) -> u32 {
    let prog = compile(arch, opts(cov)).unwrap();
    let nr = TABLE
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.nr(arch))
        .unwrap();
    run(&prog, &data(arch.audit(), nr, args)).unwrap()
}

const ERRNO_ENOSYS: u32 = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

#[test]
fn builds_for_every_arch_and_coverage() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for cov in [Coverage::Lite, Coverage::Strict] {
            let p = compile(arch, opts(cov)).unwrap();
            assert!(p.len() < 1024, "{arch:?} {cov:?}: {} instructions", p.len());
        }
    }
}

#[test]
fn opens_are_filtered_on_their_flags() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let rd = decide(
            arch,
            Coverage::Lite,
            "openat",
            [0, 0, libc::O_RDONLY as u64, 0, 0, 0],
        );
        assert_eq!(rd, SECCOMP_RET_ALLOW);
        let path = decide(
            arch,
            Coverage::Lite,
            "openat",
            [0, 0, O_PATH as u64, 0, 0, 0],
        );
        assert_eq!(path, SECCOMP_RET_ALLOW);
        for f in [
            libc::O_WRONLY,
            libc::O_RDWR,
            libc::O_CREAT,
            libc::O_TRUNC,
            libc::O_TMPFILE,
        ] {
            let v = decide(arch, Coverage::Lite, "openat", [0, 0, f as u64, 0, 0, 0]);
            assert_eq!(v, SECCOMP_RET_USER_NOTIF, "{arch:?} flags {f:#o}");
        }
        // High bits of an int argument are ignored by the kernel, and by us.
        let hi = decide(arch, Coverage::Lite, "openat", [0, 0, 1 << 40, 0, 0, 0]);
        assert_eq!(hi, SECCOMP_RET_ALLOW);
        let v = decide(arch, Coverage::Lite, "openat2", [0; 6]);
        assert_eq!(v, SECCOMP_RET_USER_NOTIF);
    }
    let v = decide(
        Arch::X86_64,
        Coverage::Lite,
        "open",
        [0, libc::O_WRONLY as u64, 0, 0, 0, 0],
    );
    assert_eq!(v, SECCOMP_RET_USER_NOTIF);
    let v = decide(Arch::X86_64, Coverage::Lite, "creat", [0; 6]);
    assert_eq!(v, SECCOMP_RET_USER_NOTIF);
}

#[test]
fn every_write_syscall_notifies() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for sc in TABLE {
            if sc.nr(arch).is_none() {
                continue;
            }
            if let Kind::Paths(_) = sc.kind {
                assert_eq!(
                    decide(arch, Coverage::Lite, sc.name, [1; 6]),
                    SECCOMP_RET_USER_NOTIF
                );
            }
            if let Kind::FdMeta { .. } = sc.kind {
                assert_eq!(
                    decide(arch, Coverage::Lite, sc.name, [1; 6]),
                    SECCOMP_RET_ALLOW
                );
                assert_eq!(
                    decide(arch, Coverage::Strict, sc.name, [1; 6]),
                    SECCOMP_RET_USER_NOTIF
                );
            }
            if let Kind::Refuse(e) = sc.kind {
                assert_eq!(
                    decide(arch, Coverage::Lite, sc.name, [1; 6]),
                    SECCOMP_RET_ERRNO | e as u32
                );
            }
        }
    }
}

/// Every `mknod` goes to the daemon, a device node's too: strict mode refuses one there, after
/// the kernel's own checks of the path and the name, not in the filter before them.
#[test]
fn mknod_of_any_type_notifies() {
    for cov in [Coverage::Lite, Coverage::Strict] {
        for mode in [libc::S_IFCHR | 0o600, libc::S_IFBLK | 0o600, libc::S_IFIFO] {
            let args = [0, 0, mode as u64, libc::makedev(1, 3), 0, 0];
            let v = decide(Arch::X86_64, cov, "mknodat", args);
            assert_eq!(v, SECCOMP_RET_USER_NOTIF, "{cov:?} {mode:o}");
        }
    }
}

#[test]
fn utimensat_null_path_is_fd_metadata() {
    let a = Arch::X86_64;
    assert_eq!(
        decide(a, Coverage::Lite, "utimensat", [3, 0, 0, 0, 0, 0]),
        SECCOMP_RET_ALLOW
    );
    assert_eq!(
        decide(a, Coverage::Lite, "utimensat", [3, 1 << 33, 0, 0, 0, 0]),
        SECCOMP_RET_USER_NOTIF
    );
    assert_eq!(
        decide(a, Coverage::Lite, "utimensat", [3, 7, 0, 0, 0, 0]),
        SECCOMP_RET_USER_NOTIF
    );
    assert_eq!(
        decide(a, Coverage::Strict, "utimensat", [3, 0, 0, 0, 0, 0]),
        SECCOMP_RET_USER_NOTIF
    );
}

#[test]
fn ioctls_pass_only_when_known_harmless() {
    let eperm = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for cov in [Coverage::Lite, Coverage::Strict] {
            let ioctl = |cmd: u64| decide(arch, cov, "ioctl", [1, cmd, 0, 0, 0, 0]);
            assert_eq!(ioctl(0x5401), SECCOMP_RET_ALLOW, "TCGETS");
            for &c in SAFE_IOCTLS {
                // Strict mode opens a pty's other end itself.
                let want = if cov == Coverage::Strict && c == TIOCGPTPEER {
                    SECCOMP_RET_USER_NOTIF
                } else {
                    SECCOMP_RET_ALLOW
                };
                assert_eq!(ioctl(c as u64), want, "{c:#x}");
            }
            // Known writers, and every command nobody listed, go to the daemon.
            for c in WRITE_IOCTLS {
                assert_eq!(ioctl(c as u64), SECCOMP_RET_USER_NOTIF, "{c:#x}");
            }
            for c in [0x4008_7602u64, 0x800c_6613, 0x4100_9432, 0, 0xdead_beef] {
                assert_eq!(ioctl(c), SECCOMP_RET_USER_NOTIF, "{c:#x}");
            }
            // A terminal's settings, size, foreground group... are the daemon's to decide on
            // the terminal the descriptor reaches; reads of them stay in the kernel.
            for t in TTY_IOCTLS {
                for arg in [0u64, 2, 1 << 32] {
                    let got = decide(arch, cov, "ioctl", [1, t.cmd as u64, arg, 0, 0, 0]);
                    assert_eq!(got, SECCOMP_RET_USER_NOTIF, "{} {arg:#x}", t.name);
                }
            }
            for c in [0x5401u64, 0x5413, 0x802c_542a, 0x8004_5432] {
                assert_eq!(ioctl(c), SECCOMP_RET_ALLOW, "{c:#x}");
            }
            // Stealing a terminal (TIOCSCTTY with 1, read as an int): refused in the filter.
            let sctty = |arg: u64| decide(arch, cov, "ioctl", [1, 0x540e, arg, 0, 0, 0]);
            assert_eq!(sctty(1), eperm);
            assert_eq!(sctty(1 | 1 << 32), eperm);
            assert_eq!(sctty(0x1_0000_0001 | 0xffff_0000 << 32), eperm);
            assert_eq!(sctty(0), SECCOMP_RET_USER_NOTIF);
            assert_eq!(sctty(0x100), SECCOMP_RET_USER_NOTIF);
            // Keystrokes pushed into a terminal, the console sent elsewhere: refused,
            // whatever the high bits say.
            for c in REFUSED_IOCTLS {
                assert_eq!(ioctl(c as u64), eperm, "{c:#x}");
                assert_eq!(ioctl(c as u64 | 1 << 32), eperm, "{c:#x} | 1 << 32");
                assert_eq!(ioctl(c as u64 | 0xffff_ffff << 32), eperm);
            }
        }
    }
}

#[test]
fn unknown_syscalls_fail_with_enosys() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let p = compile(arch, opts(Coverage::Lite)).unwrap();
        let at = |nr: u32| run(&p, &data(arch.audit(), nr, [0; 6])).unwrap();
        // Past the newest syscall the table knows, and far past it.
        for nr in [470, 511, 512, 1000, 0x3fff_ffff] {
            assert_eq!(at(nr), ERRNO_ENOSYS, "{arch:?} {nr}");
        }
    }
    // Writers the daemon cannot see, left out of the table on purpose.
    #[cfg(target_arch = "x86_64")]
    {
        let p = compile(Arch::X86_64, opts(Coverage::Lite)).unwrap();
        for nr in [
            libc::SYS_acct,
            libc::SYS_swapon,
            libc::SYS_swapoff,
            libc::SYS_quotactl,
            libc::SYS_quotactl_fd,
            libc::SYS_bpf,
            libc::SYS_mq_open,
            libc::SYS_mq_unlink,
            libc::SYS_add_key,
            libc::SYS_keyctl,
            libc::SYS_fanotify_init,
            libc::SYS_init_module,
            libc::SYS_finit_module,
            libc::SYS_kexec_file_load,
            libc::SYS_reboot,
            libc::SYS_settimeofday,
            libc::SYS_sethostname,
            libc::SYS_iopl,
            libc::SYS_ioperm,
        ] {
            let v = run(&p, &data(Arch::X86_64.audit(), nr as u32, [0; 6]));
            assert_eq!(v, Some(ERRNO_ENOSYS), "syscall {nr}");
        }
    }
}

/// The binary search sends every number where the table says, on both architectures and
/// in both modes: checked against the table for every number up to past the last.
#[test]
fn every_number_gets_its_route() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for cov in [Coverage::Lite, Coverage::Strict] {
            let o = opts(cov);
            let p = compile(arch, o).unwrap();
            for nr in 0..600u32 {
                let sc = TABLE.iter().find(|s| s.nr(arch) == Some(nr));
                let want = match sc.map(|s| route(s.kind, o)) {
                    None => Some(ERRNO_ENOSYS),
                    Some(Route::Allow) => Some(SECCOMP_RET_ALLOW),
                    Some(Route::Notify) => Some(SECCOMP_RET_USER_NOTIF),
                    Some(Route::Errno(e)) => Some(SECCOMP_RET_ERRNO | e as u32),
                    // Decided on the arguments, tested above.
                    Some(Route::Check) => None,
                };
                if let Some(want) = want {
                    let got = run(&p, &data(arch.audit(), nr, [0; 6])).unwrap();
                    assert_eq!(got, want, "{arch:?} {cov:?} {nr} {:?}", sc.map(|s| s.name));
                }
            }
        }
    }
}

#[test]
fn connect_is_decided_in_strict_mode_and_reported_in_lite_mode_with_a_log() {
    let connect = |cov, report_connect| {
        let p = compile(
            Arch::X86_64,
            Options {
                coverage: cov,
                report_exec: false,
                report_connect,
            },
        )
        .unwrap();
        run(&p, &data(Arch::X86_64.audit(), 42, [3, 0, 110, 0, 0, 0])).unwrap()
    };
    assert_eq!(connect(Coverage::Lite, false), SECCOMP_RET_ALLOW);
    assert_eq!(connect(Coverage::Lite, true), SECCOMP_RET_USER_NOTIF);
    assert_eq!(connect(Coverage::Strict, false), SECCOMP_RET_USER_NOTIF);
}

#[test]
fn sends_with_an_address_go_to_the_daemon_in_strict_mode_only() {
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let nr = |name| {
            TABLE
                .iter()
                .find(|s| s.name == name)
                .and_then(|s| s.nr(arch))
                .unwrap()
        };
        let verdict = |cov, name, args| {
            let p = compile(arch, opts(cov)).unwrap();
            run(&p, &data(arch.audit(), nr(name), args)).unwrap()
        };
        let to_addr = [3, 0x1000, 5, 0, 0x2000, 110];
        // send() is sendto with a NULL address (both halves zero).
        let no_addr = [3, 0x1000, 5, 0, 0, 110];
        let high_addr = [3, 0x1000, 5, 0, 1 << 32, 110];
        for (cov, want) in [
            (Coverage::Lite, SECCOMP_RET_ALLOW),
            (Coverage::Strict, SECCOMP_RET_USER_NOTIF),
        ] {
            assert_eq!(verdict(cov, "sendto", to_addr), want, "{arch:?} {cov:?}");
            assert_eq!(verdict(cov, "sendto", high_addr), want, "{arch:?} {cov:?}");
            assert_eq!(verdict(cov, "sendmsg", [3; 6]), want, "{arch:?} {cov:?}");
            assert_eq!(verdict(cov, "sendmmsg", [3; 6]), want, "{arch:?} {cov:?}");
            assert_eq!(verdict(cov, "sendto", no_addr), SECCOMP_RET_ALLOW);
        }
    }
}

#[test]
fn exec_is_reported_only_when_asked() {
    let p = compile(Arch::X86_64, opts(Coverage::Lite)).unwrap();
    assert_eq!(
        run(&p, &data(Arch::X86_64.audit(), 59, [0; 6])),
        Some(SECCOMP_RET_ALLOW)
    );
    let p = compile(
        Arch::X86_64,
        Options {
            coverage: Coverage::Lite,
            report_exec: true,
            report_connect: false,
        },
    )
    .unwrap();
    assert_eq!(
        run(&p, &data(Arch::X86_64.audit(), 59, [0; 6])),
        Some(SECCOMP_RET_USER_NOTIF)
    );
}

#[test]
fn a_second_listener_is_refused() {
    let a = Arch::X86_64;
    let busy = SECCOMP_RET_ERRNO | libc::EBUSY as u32;
    assert_eq!(
        decide(a, Coverage::Lite, "seccomp", [1, 8, 0, 0, 0, 0]),
        busy
    );
    assert_eq!(
        decide(a, Coverage::Lite, "seccomp", [1, 8 | 1, 0, 0, 0, 0]),
        busy
    );
    assert_eq!(
        decide(a, Coverage::Lite, "seccomp", [1, 0, 0, 0, 0, 0]),
        SECCOMP_RET_ALLOW
    );
    assert_eq!(
        decide(a, Coverage::Lite, "seccomp", [0, 8, 0, 0, 0, 0]),
        SECCOMP_RET_ALLOW
    );
}

#[test]
fn new_user_and_mount_namespaces_are_refused_in_strict_mode() {
    let eperm = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    for arch in [Arch::X86_64, Arch::Aarch64] {
        for name in ["clone", "unshare", "clone3"] {
            assert_eq!(
                decide(arch, Coverage::Lite, name, [0x1000_0000, 0, 0, 0, 0, 0]),
                SECCOMP_RET_ALLOW
            );
        }
        // Lite mode lets a process make a Landlock domain of its own, but hears of it:
        // it must stop performing for the session.
        assert_eq!(
            decide(
                arch,
                Coverage::Lite,
                "landlock_restrict_self",
                [3, 0, 0, 0, 0, 0]
            ),
            SECCOMP_RET_USER_NOTIF
        );
        for cov in [Coverage::Strict] {
            for name in ["clone", "unshare"] {
                for (flags, want) in [
                    (0x1000_0000u64, eperm),
                    (0x0002_0000, eperm),
                    (0x0002_0000 | 0x0001_0000, eperm),
                    (0x0001_0000 | 0x11, SECCOMP_RET_ALLOW),
                    (0x0400_0000, SECCOMP_RET_ALLOW),
                ] {
                    assert_eq!(
                        decide(arch, cov, name, [flags, 0, 0, 0, 0, 0]),
                        want,
                        "{arch:?} {name} {flags:#x}"
                    );
                }
            }
            assert_eq!(
                decide(arch, cov, "clone3", [0; 6]),
                SECCOMP_RET_ERRNO | libc::ENOSYS as u32
            );
            // A Landlock domain of its own would not bind the daemon's writes.
            assert_eq!(
                decide(arch, cov, "landlock_restrict_self", [3, 0, 0, 0, 0, 0]),
                SECCOMP_RET_ERRNO | libc::ENOSYS as u32
            );
        }
    }
}

#[test]
fn foreign_abis_are_refused() {
    let p = compile(Arch::X86_64, opts(Coverage::Lite)).unwrap();
    // x32: openat with the x32 bit.
    assert_eq!(
        run(
            &p,
            &data(Arch::X86_64.audit(), 257 | X32_SYSCALL_BIT, [0; 6])
        ),
        Some(ERRNO_ENOSYS)
    );
    // ia32: any syscall but the exits.
    assert_eq!(
        run(&p, &data(AUDIT_ARCH_I386, 5, [0; 6])),
        Some(ERRNO_ENOSYS)
    );
    assert_eq!(
        run(&p, &data(AUDIT_ARCH_I386, 252, [0; 6])),
        Some(SECCOMP_RET_ALLOW)
    );
    // An unknown architecture.
    assert_eq!(run(&p, &data(0x1234, 0, [0; 6])), Some(ERRNO_ENOSYS));
    // A syscall the table knows to change nothing (read).
    assert_eq!(
        run(&p, &data(Arch::X86_64.audit(), 0, [0; 6])),
        Some(SECCOMP_RET_ALLOW)
    );
}
