//! Turns the syscall table into the session's seccomp filter.
//!
//! The program is an allowlist. It checks the architecture and refuses the foreign ABIs (x32,
//! and the 32-bit ABI but for its exits); lets through in the kernel the syscalls the table
//! knows to change no file system, read-only opens and ioctls that only read; sends the writers to
//! the daemon (`SECCOMP_RET_USER_NOTIF`); and fails everything else with an errno, `ENOSYS`
//! for a syscall the table does not know (a newer kernel's, say). Syscalls it decides without
//! looking at their arguments stay eligible for the kernel's per-syscall allow cache, so they
//! cost nothing. See `Documentation/userspace-api/seccomp_filter.rst`.

use crate::bpf::{Asm, AsmError, Cond, Label, SockFilter};
use crate::syscalls::{
    Arch, Kind, CLONE_NEW_MOUNT_OR_USER, OPEN_WRITE_FLAGS, REFUSED_IOCTLS, RLIMIT_CORE,
    SAFE_IOCTLS, SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_SET_MODE_FILTER, TABLE, TIOCGPTPEER,
    TIOCSCTTY, X32_SYSCALL_BIT,
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
        // Strict mode's daemon refuses a device node itself, after the kernel's own checks of
        // the path and the name (`perform/emulate`), so that only a node the kernel would
        // have made fails with EPERM.
        Kind::Paths(_) | Kind::Openat2 { .. } | Kind::Bind { .. } | Kind::Mknod { .. } => {
            Route::Notify
        }
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
        Kind::Ioctl { cmd, arg, .. } => {
            // The kernel reads the command as 32 bits: high bits set change nothing.
            let eperm = rets.errno(a, libc::EPERM);
            // TIOCSCTTY with 1 (read as an int) steals a terminal from the session that has
            // it, the user's shell: refused. Any other TIOCSCTTY is the daemon's to decide.
            let (sctty, other) = (a.label(), a.label());
            a.load(arg_lo(cmd));
            a.jump(Cond::Eq, TIOCSCTTY, sctty, other);
            a.bind(sctty);
            a.load(arg_lo(arg));
            a.jump(Cond::Eq, 1, eperm, notify);
            a.bind(other);
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
mod tests;
