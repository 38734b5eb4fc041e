//! Turns the syscall table into the session's seccomp filter.
//!
//! The program checks the architecture, refuses the foreign ABIs (x32, and the 32-bit ABI but
//! for its exits), lets read-only opens and every syscall not in the table through in the
//! kernel, and sends the rest to the daemon (`SECCOMP_RET_USER_NOTIF`) or refuses them with an
//! errno. Syscalls it decides without looking at their arguments stay eligible for the
//! kernel's per-syscall allow cache, so they cost nothing. See
//! `Documentation/userspace-api/seccomp_filter.rst`.

use crate::bpf::{Asm, AsmError, Cond, Label, SockFilter};
use crate::syscalls::{
    Arch, Kind, CLONE_NEW_MOUNT_OR_USER, OPEN_WRITE_FLAGS, SECCOMP_FILTER_FLAG_NEW_LISTENER,
    SECCOMP_SET_MODE_FILTER, TABLE, WRITE_IOCTLS, X32_SYSCALL_BIT,
};

// include/uapi/linux/seccomp.h
pub const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
pub const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
pub const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `i` (little endian: both our architectures).
const fn arg_lo(i: u8) -> u32 {
    16 + 8 * i as u32
}
const fn arg_hi(i: u8) -> u32 {
    20 + 8 * i as u32
}

/// How much the filter sends to the daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Lite mode: descriptor-based metadata changes (`fchmod`, `fchown`, `fsetxattr`,
    /// `fremovexattr`, `utimensat(fd, NULL)`) are left to the kernel.
    Lite,
    /// Strict mode: every write-class syscall.
    Strict,
}

/// What a session's filter sends to the daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub coverage: Coverage,
    /// Report `execve`: the session reads memory through lent descriptors.
    pub report_exec: bool,
}

/// The filter for `arch`.
pub fn compile(arch: Arch, opts: Options) -> Result<Vec<SockFilter>, AsmError> {
    let coverage = opts.coverage;
    let mut a = Asm::new();
    let native = a.label();
    let check_compat = a.label();
    let compat = a.label();
    let allow = a.label();
    let notify = a.label();
    let mut errnos: Vec<(i32, Label)> = Vec::new();
    let mut errno = |a: &mut Asm, e: i32| -> Label {
        if let Some((_, l)) = errnos.iter().find(|(x, _)| *x == e) {
            return *l;
        }
        let l = a.label();
        errnos.push((e, l));
        l
    };
    let enosys = errno(&mut a, libc::ENOSYS);

    a.load(ARCH);
    a.jump(Cond::Eq, arch.audit(), native, check_compat);
    a.bind(check_compat);
    a.jump(Cond::Eq, arch.compat_audit(), compat, enosys);

    a.bind(native);
    a.load(NR);
    if arch == Arch::X86_64 {
        let next = a.label();
        a.jump(Cond::Ge, X32_SYSCALL_BIT, enosys, next);
        a.bind(next);
    }

    // Dispatch: one comparison per syscall, to a shared return or to a handler placed after.
    let mut handlers: Vec<(Label, Kind)> = Vec::new();
    for sc in TABLE {
        let Some(nr) = sc.nr(arch) else { continue };
        let target = match sc.kind {
            Kind::Paths(_) | Kind::Openat2 { .. } | Kind::Bind { .. } => notify,
            Kind::Exec if opts.report_exec => notify,
            Kind::Exec => continue,
            Kind::Refuse(e) => errno(&mut a, e),
            Kind::RefuseStrict(_) | Kind::Namespaces { .. } if coverage == Coverage::Lite => {
                continue
            }
            Kind::RefuseStrict(e) => errno(&mut a, e),
            Kind::OwnDomain if coverage == Coverage::Lite => notify,
            Kind::OwnDomain => errno(&mut a, libc::ENOSYS),
            Kind::FdMeta { .. } if coverage == Coverage::Lite => continue,
            Kind::FdMeta { .. } => notify,
            Kind::Utimensat(_) if coverage == Coverage::Strict => notify,
            Kind::Open { flags: None, .. } => notify,
            Kind::Utimensat(_)
            | Kind::Open { .. }
            | Kind::Ioctl { .. }
            | Kind::Seccomp { .. }
            | Kind::Namespaces { .. } => {
                let l = a.label();
                handlers.push((l, sc.kind));
                l
            }
        };
        let next = a.label();
        a.jump(Cond::Eq, nr, target, next);
        a.bind(next);
    }
    a.ret(SECCOMP_RET_ALLOW);

    let ebusy = errno(&mut a, libc::EBUSY);
    for (label, kind) in handlers {
        a.bind(label);
        match kind {
            Kind::Open { flags: Some(f), .. } => {
                // Only the low 32 bits: the kernel ignores the rest of an int argument.
                a.load(arg_lo(f));
                a.jump(Cond::Set, OPEN_WRITE_FLAGS, notify, allow);
            }
            Kind::Utimensat(paths) => {
                // A NULL path (both halves zero) changes the dirfd's own times.
                let p = paths[0].path;
                let lo_zero = a.label();
                a.load(arg_lo(p));
                a.jump(Cond::Eq, 0, lo_zero, notify);
                a.bind(lo_zero);
                a.load(arg_hi(p));
                a.jump(Cond::Eq, 0, allow, notify);
            }
            Kind::Ioctl { cmd, .. } => {
                a.load(arg_lo(cmd));
                for c in WRITE_IOCTLS {
                    let next = a.label();
                    a.jump(Cond::Eq, c, notify, next);
                    a.bind(next);
                }
                a.goto(allow);
            }
            Kind::Seccomp { op, flags } => {
                let is_filter = a.label();
                a.load(arg_lo(op));
                a.jump(Cond::Eq, SECCOMP_SET_MODE_FILTER, is_filter, allow);
                a.bind(is_filter);
                a.load(arg_lo(flags));
                a.jump(Cond::Set, SECCOMP_FILTER_FLAG_NEW_LISTENER, ebusy, allow);
            }
            Kind::Namespaces { flags } => {
                let eperm = errno(&mut a, libc::EPERM);
                a.load(arg_lo(flags));
                a.jump(Cond::Set, CLONE_NEW_MOUNT_OR_USER, eperm, allow);
            }
            _ => unreachable!("only the kinds above get handlers"),
        }
    }

    a.bind(compat);
    a.load(NR);
    for nr in arch.compat_exits() {
        let next = a.label();
        a.jump(Cond::Eq, nr, allow, next);
        a.bind(next);
    }
    a.goto(enosys);

    a.bind(allow);
    a.ret(SECCOMP_RET_ALLOW);
    a.bind(notify);
    a.ret(SECCOMP_RET_USER_NOTIF);
    for (e, l) in errnos {
        a.bind(l);
        a.ret(SECCOMP_RET_ERRNO | e as u32);
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::run;
    use crate::syscalls::{AUDIT_ARCH_I386, O_PATH};

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
                assert!(p.len() < 200, "{arch:?} {cov:?}: {} instructions", p.len());
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
    fn ioctls_only_the_writing_commands() {
        let a = Arch::Aarch64;
        assert_eq!(
            decide(a, Coverage::Lite, "ioctl", [1, 0x5401, 0, 0, 0, 0]),
            SECCOMP_RET_ALLOW
        );
        for c in WRITE_IOCTLS {
            assert_eq!(
                decide(a, Coverage::Lite, "ioctl", [1, c as u64, 0, 0, 0, 0]),
                SECCOMP_RET_USER_NOTIF
            );
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
        // A syscall not in the table.
        assert_eq!(
            run(&p, &data(Arch::X86_64.audit(), 0, [0; 6])),
            Some(SECCOMP_RET_ALLOW)
        );
    }
}
