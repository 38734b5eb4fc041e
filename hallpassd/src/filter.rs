//! Turns the syscall table into the session's seccomp filter.
//!
//! The program is an allowlist. It checks the architecture and refuses the foreign ABIs (x32,
//! and the 32-bit ABI but for its exits); lets through in the kernel the syscalls the table
//! knows to change no file system, read-only opens and harmless ioctls; sends the writers to
//! the daemon (`SECCOMP_RET_USER_NOTIF`); and fails everything else with an errno, `ENOSYS`
//! for a syscall the table does not know (a newer kernel's, say). Syscalls it decides without
//! looking at their arguments stay eligible for the kernel's per-syscall allow cache, so they
//! cost nothing. See `Documentation/userspace-api/seccomp_filter.rst`.

use crate::bpf::{Asm, AsmError, Cond, Label, SockFilter};
use crate::syscalls::{
    Arch, Kind, CLONE_NEW_MOUNT_OR_USER, OPEN_WRITE_FLAGS, REFUSED_IOCTLS, RLIMIT_CORE,
    SAFE_IOCTLS, SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_SET_MODE_FILTER, TABLE, TIOCGPTPEER,
    X32_SYSCALL_BIT,
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
    /// Report `connect` in lite mode: the session has a log, which records each connection
    /// to a service outside the session. Strict mode always decides them.
    pub report_connect: bool,
}

/// Where the dispatch sends a syscall.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Allow,
    Notify,
    Errno(i32),
    /// A handler that looks at the arguments.
    Check,
}

/// What `kind` gets under `opts`.
fn route(kind: Kind, opts: Options) -> Route {
    let strict = opts.coverage == Coverage::Strict;
    match kind {
        Kind::Pass => Route::Allow,
        Kind::Paths(_) | Kind::Openat2 { .. } | Kind::Bind { .. } => Route::Notify,
        Kind::Mknod { .. } if strict => Route::Check,
        Kind::Mknod { .. } => Route::Notify,
        Kind::Open { flags: None, .. } => Route::Notify,
        Kind::Open { .. } | Kind::Ioctl { .. } | Kind::Seccomp { .. } => Route::Check,
        Kind::OtherProcess { .. } | Kind::Rlimit { .. } => Route::Check,
        Kind::Utimensat(_) | Kind::FdMeta { .. } if strict => Route::Notify,
        Kind::Utimensat(_) => Route::Check,
        Kind::FdMeta { .. } => Route::Allow,
        Kind::Namespaces { .. } if strict => Route::Check,
        Kind::RefuseStrict(e) if strict => Route::Errno(e),
        // A Landlock domain of the process's own: refused in strict mode, reported in lite
        // mode (the daemon then stops performing for the session).
        Kind::OwnDomain if strict => Route::Errno(libc::ENOSYS),
        Kind::OwnDomain => Route::Notify,
        Kind::Namespaces { .. } | Kind::RefuseStrict(_) => Route::Allow,
        Kind::Refuse(e) => Route::Errno(e),
        Kind::Exec if opts.report_exec || strict => Route::Notify,
        Kind::Exec => Route::Allow,
        Kind::Creds if strict => Route::Notify,
        Kind::Creds => Route::Allow,
        Kind::Connect { .. } if strict || opts.report_connect => Route::Notify,
        Kind::Connect { .. } => Route::Allow,
        // Strict mode: a sendto with an address, and every sendmsg and sendmmsg (their
        // addresses are in memory). Lite mode leaves sends to the kernel.
        Kind::Send { addr: Some(_), .. } if strict => Route::Check,
        Kind::Send { .. } if strict => Route::Notify,
        Kind::Send { .. } => Route::Allow,
    }
}

/// The shared return instructions, placed at the end, and their labels.
struct Returns {
    allow: Label,
    notify: Label,
    errnos: Vec<(i32, Label)>,
}

impl Returns {
    fn new(a: &mut Asm) -> Returns {
        Returns {
            allow: a.label(),
            notify: a.label(),
            errnos: Vec::new(),
        }
    }

    fn errno(&mut self, a: &mut Asm, e: i32) -> Label {
        if let Some((_, l)) = self.errnos.iter().find(|(x, _)| *x == e) {
            return *l;
        }
        let l = a.label();
        self.errnos.push((e, l));
        l
    }

    fn place(self, a: &mut Asm) {
        a.bind(self.allow);
        a.ret(SECCOMP_RET_ALLOW);
        a.bind(self.notify);
        a.ret(SECCOMP_RET_USER_NOTIF);
        for (e, l) in self.errnos {
            a.bind(l);
            a.ret(SECCOMP_RET_ERRNO | e as u32);
        }
    }
}

/// The filter for `arch`.
///
/// Layout: the architecture check (the foreign ABIs are refused on the spot); a short chain
/// that sends the syscalls whose arguments must be looked at to their handlers, so the
/// frequent `openat` is found at once; a binary search over the whole table, where numbers
/// the table does not hold fail with `ENOSYS`; the handlers; the shared returns. Every far
/// target is reached with an unconditional jump, whose offset has 32 bits, so the program
/// may grow with the table.
pub fn compile(arch: Arch, opts: Options) -> Result<Vec<SockFilter>, AsmError> {
    let mut a = Asm::new();
    let mut rets = Returns::new(&mut a);
    let enosys = rets.errno(&mut a, libc::ENOSYS);
    check_arch(&mut a, arch);

    let mut routes: Vec<(u32, Label)> = Vec::new();
    let mut handlers: Vec<(Label, Kind)> = Vec::new();
    for sc in TABLE {
        let Some(nr) = sc.nr(arch) else { continue };
        let label = match route(sc.kind, opts) {
            Route::Allow => rets.allow,
            Route::Notify => rets.notify,
            Route::Errno(e) => rets.errno(&mut a, e),
            Route::Check => {
                let l = a.label();
                handlers.push((l, sc.kind));
                // The hot chain: these run the filter on every call (their verdict depends
                // on the arguments, so the kernel cannot cache it).
                let (hit, next) = (a.label(), a.label());
                a.jump(Cond::Eq, nr, hit, next);
                a.bind(hit);
                a.goto(l);
                a.bind(next);
                l
            }
        };
        routes.push((nr, label));
    }
    routes.sort_by_key(|(nr, _)| *nr);
    search(&mut a, &segments(&routes, enosys));

    for (label, kind) in handlers {
        a.bind(label);
        handler(&mut a, &mut rets, kind, opts.coverage == Coverage::Strict);
    }
    rets.place(&mut a);
    a.finish()
}

/// Checks `seccomp_data.arch`: the native ABI goes on; the 32-bit one may only exit; x32 and
/// anything else fail with `ENOSYS`. Leaves the syscall number loaded.
fn check_arch(a: &mut Asm, arch: Arch) {
    let (native, not_native, compat, refuse, exit) =
        (a.label(), a.label(), a.label(), a.label(), a.label());
    a.load(ARCH);
    a.jump(Cond::Eq, arch.audit(), native, not_native);
    a.bind(not_native);
    a.jump(Cond::Eq, arch.compat_audit(), compat, refuse);
    a.bind(compat);
    a.load(NR);
    for nr in arch.compat_exits() {
        let next = a.label();
        a.jump(Cond::Eq, nr, exit, next);
        a.bind(next);
    }
    a.bind(refuse);
    a.ret(SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
    a.bind(exit);
    a.ret(SECCOMP_RET_ALLOW);
    a.bind(native);
    a.load(NR);
    if arch == Arch::X86_64 {
        let (x32, next) = (a.label(), a.label());
        a.jump(Cond::Ge, X32_SYSCALL_BIT, x32, next);
        a.bind(x32);
        a.ret(SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        a.bind(next);
    }
}

/// The number line cut where the route changes: `(first number, route)` from 0 up, numbers
/// not in `routes` (sorted, each once) going to `missing`.
fn segments(routes: &[(u32, Label)], missing: Label) -> Vec<(u32, Label)> {
    let mut out: Vec<(u32, Label)> = Vec::new();
    let mut add = |from: u32, to: Label| {
        if out.last().is_none_or(|(_, l)| *l != to) {
            out.push((from, to));
        }
    };
    let mut free = 0;
    for &(nr, label) in routes {
        if nr > free {
            add(free, missing);
        }
        add(nr, label);
        free = nr + 1;
    }
    add(free, missing);
    out
}

/// A binary search for the accumulator over `segs` (the first starts at 0).
fn search(a: &mut Asm, segs: &[(u32, Label)]) {
    if let [(_, only)] = segs {
        a.goto(*only);
        return;
    }
    let mid = segs.len() / 2;
    let (high, jump_high, low) = (a.label(), a.label(), a.label());
    a.jump(Cond::Ge, segs[mid].0, jump_high, low);
    a.bind(jump_high);
    a.goto(high);
    a.bind(low);
    search(a, &segs[..mid]);
    a.bind(high);
    search(a, &segs[mid..]);
}

/// Goes to `zero` if the whole 64-bit argument `arg` is 0 (a NULL pointer, device 0:0), else
/// to `other`.
fn jump_if_zero(a: &mut Asm, arg: u8, zero: Label, other: Label) {
    let lo_zero = a.label();
    a.load(arg_lo(arg));
    a.jump(Cond::Eq, 0, lo_zero, other);
    a.bind(lo_zero);
    a.load(arg_hi(arg));
    a.jump(Cond::Eq, 0, zero, other);
}

/// The code of a syscall whose verdict depends on its arguments.
fn handler(a: &mut Asm, rets: &mut Returns, kind: Kind, strict: bool) {
    let (allow, notify) = (rets.allow, rets.notify);
    match kind {
        Kind::Open { flags: Some(f), .. } => {
            // Only the low 32 bits: the kernel ignores the rest of an int argument.
            a.load(arg_lo(f));
            a.jump(Cond::Set, OPEN_WRITE_FLAGS, notify, allow);
        }
        Kind::Utimensat(paths) => {
            // A NULL path (both halves zero) changes the dirfd's own times.
            jump_if_zero(a, paths[0].path, allow, notify);
        }
        Kind::Ioctl { cmd, .. } => {
            // The kernel reads the command as 32 bits: high bits set change nothing.
            let eperm = rets.errno(a, libc::EPERM);
            a.load(arg_lo(cmd));
            if strict {
                // Opening a pty's other end: strict mode's Landlock domain would refuse the
                // kernel's open of /dev/pts/N; the daemon makes it (perform/emulate, PtyPeer).
                let next = a.label();
                a.jump(Cond::Eq, TIOCGPTPEER, notify, next);
                a.bind(next);
            }
            for (list, to) in [(&REFUSED_IOCTLS[..], eperm), (SAFE_IOCTLS, allow)] {
                for &c in list {
                    let next = a.label();
                    a.jump(Cond::Eq, c, to, next);
                    a.bind(next);
                }
            }
            a.goto(notify);
        }
        Kind::Seccomp { op, flags } => {
            let (is_filter, ebusy) = (a.label(), rets.errno(a, libc::EBUSY));
            a.load(arg_lo(op));
            a.jump(Cond::Eq, SECCOMP_SET_MODE_FILTER, is_filter, allow);
            a.bind(is_filter);
            a.load(arg_lo(flags));
            a.jump(Cond::Set, SECCOMP_FILTER_FLAG_NEW_LISTENER, ebusy, allow);
        }
        Kind::Namespaces { flags } => {
            let eperm = rets.errno(a, libc::EPERM);
            a.load(arg_lo(flags));
            a.jump(Cond::Set, CLONE_NEW_MOUNT_OR_USER, eperm, allow);
        }
        Kind::Mknod { mode, dev, .. } => {
            // S_IFCHR (0o020000) and S_IFBLK (0o060000) are the types with the 0o020000 bit
            // and without 0o100000 (S_IFLNK is 0o120000).
            let (eperm, typed, device, block, chr) = (
                rets.errno(a, libc::EPERM),
                a.label(),
                a.label(),
                a.label(),
                a.label(),
            );
            a.load(arg_lo(mode));
            a.jump(Cond::Set, 0o020000, typed, notify);
            a.bind(typed);
            a.jump(Cond::Set, 0o100000, notify, device);
            a.bind(device);
            a.jump(Cond::Set, 0o040000, block, chr);
            a.bind(block);
            a.goto(eperm);
            // A whiteout, device 0:0, is no device.
            a.bind(chr);
            jump_if_zero(a, dev, notify, eperm);
        }
        Kind::OtherProcess { pid, which } => {
            // The caller itself passes; any other target is the daemon's to check.
            if let Some((arg, process)) = which {
                let next = a.label();
                a.load(arg_lo(arg));
                a.jump(Cond::Eq, process, next, notify);
                a.bind(next);
            }
            a.load(arg_lo(pid));
            a.jump(Cond::Eq, 0, allow, notify);
        }
        Kind::Rlimit { pid, resource, new } => {
            if let Some(pid) = pid {
                let next = a.label();
                a.load(arg_lo(pid));
                a.jump(Cond::Eq, 0, next, notify);
                a.bind(next);
            }
            // A new core limit (a non-NULL pointer: either half set) is the daemon's.
            let core = a.label();
            a.load(arg_lo(resource));
            a.jump(Cond::Eq, RLIMIT_CORE, core, allow);
            a.bind(core);
            jump_if_zero(a, new, allow, notify);
        }
        Kind::Send {
            addr: Some(addr), ..
        } => {
            // send() is sendto with no address: it goes where the socket is connected.
            jump_if_zero(a, addr, allow, notify);
        }
        _ => unreachable!("only the kinds routed to Check get handlers"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::run;
    use crate::syscalls::{AUDIT_ARCH_I386, O_PATH, WRITE_IOCTLS};

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
                // Keystrokes pushed into a terminal: refused, whatever the high bits say.
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
}
