//! The one table of intercepted syscalls: their numbers on each architecture and where their
//! path, dirfd and flag arguments are. The BPF filter (`filter.rs`) and the notification
//! decoder (`decode.rs`) both read it, so they cannot disagree.
//!
//! Numbers come from `arch/x86/entry/syscalls/syscall_64.tbl` and
//! `include/uapi/asm-generic/unistd.h` (aarch64); syscalls numbered 424 and above share one
//! number on every architecture.

pub mod change;
mod ioctls;
pub use ioctls::*;

/// `AUDIT_ARCH_X86_64` (`include/uapi/linux/audit.h`).
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
/// `AUDIT_ARCH_I386`: `int 0x80` from a 64-bit process, or a 32-bit program.
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
/// `AUDIT_ARCH_AARCH64`.
pub const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
/// `AUDIT_ARCH_ARM`: 32-bit programs on aarch64.
pub const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
/// `__X32_SYSCALL_BIT` (`arch/x86/include/uapi/asm/unistd.h`).
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// An architecture hallpass builds filters for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    /// The architecture this binary runs on.
    pub const fn native() -> Arch {
        #[cfg(target_arch = "x86_64")]
        {
            Arch::X86_64
        }
        #[cfg(target_arch = "aarch64")]
        {
            Arch::Aarch64
        }
    }

    /// The `AUDIT_ARCH_*` value the kernel puts in `seccomp_data.arch`.
    pub const fn audit(self) -> u32 {
        match self {
            Arch::X86_64 => AUDIT_ARCH_X86_64,
            Arch::Aarch64 => AUDIT_ARCH_AARCH64,
        }
    }

    /// The 32-bit ABI the same kernel may also run, and which hallpass refuses.
    pub const fn compat_audit(self) -> u32 {
        match self {
            Arch::X86_64 => AUDIT_ARCH_I386,
            Arch::Aarch64 => AUDIT_ARCH_ARM,
        }
    }

    /// `exit` and `exit_group` of the compat ABI, the only compat syscalls let through, so a
    /// refused 32-bit program can at least end.
    pub const fn compat_exits(self) -> [u32; 2] {
        match self {
            // arch/x86/entry/syscalls/syscall_32.tbl
            Arch::X86_64 => [1, 252],
            // arch/arm/tools/syscall.tbl
            Arch::Aarch64 => [1, 248],
        }
    }
}

/// Whether the last component of a path argument is followed when it is a symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// The syscall acts on the link itself (`unlink`, `mkdir`, `rename`, `lchown`...).
    Never,
    /// The syscall follows it (`chmod`, `truncate`, `setxattr`...).
    Always,
    /// Followed unless `AT_SYMLINK_NOFOLLOW` is set in the flags argument.
    UnlessNoFollow { flags: u8 },
    /// Followed only if `AT_SYMLINK_FOLLOW` is set in the flags argument (`linkat`).
    IfFollow { flags: u8 },
}

/// One path a syscall writes: the path argument, relative to a dirfd argument (or the cwd).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathArg {
    /// The dirfd argument, `None` for the legacy calls that are relative to the cwd.
    pub dirfd: Option<u8>,
    /// The path argument.
    pub path: u8,
    pub follow: Follow,
    /// The flags argument where `AT_EMPTY_PATH` makes an empty path mean the dirfd itself.
    pub empty_path: Option<u8>,
    /// A NULL path means the dirfd itself (`utimensat`, `futimesat`).
    pub null_is_fd: bool,
}

/// What the filter and the decoder do with a syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `open`, `openat`, `creat`: the filter sends only writing opens to the daemon.
    /// `flags: None` is `creat` (`O_CREAT|O_WRONLY|O_TRUNC`).
    Open {
        dirfd: Option<u8>,
        path: u8,
        flags: Option<u8>,
    },
    /// `openat2`: its flags are in memory the filter cannot read, so it always notifies.
    Openat2 { dirfd: u8, path: u8, how: u8 },
    /// Writes one or two paths.
    Paths(&'static [PathArg]),
    /// `mknod`, `mknodat`: writes a path. Strict mode never makes a device node
    /// ([`makes_device`]): a device node in the project would be in its Landlock domain,
    /// where the kernel may write (an open that a race sends there would write the device).
    /// Its daemon makes the call without `CAP_MKNOD`, so the kernel fails it with its own
    /// errors in its own order, and with `EPERM` where it would have made the node. Lite
    /// mode decides writing opens of a device node outside `/dev` as writes of the device
    /// itself.
    Mknod {
        paths: &'static [PathArg],
        mode: u8,
        dev: u8,
    },
    /// `utimensat`: a NULL path changes the times of the dirfd itself, which lite mode leaves
    /// to the kernel like the other fd metadata calls.
    Utimensat(&'static [PathArg]),
    /// Metadata changes through a descriptor that need not be writable (`fchmod`, `fchown`,
    /// `fsetxattr`, `fremovexattr`). Supervised in strict mode only.
    FdMeta { fd: u8 },
    /// `ioctl`: the commands in [`SAFE_IOCTLS`] pass, [`REFUSED_IOCTLS`] and a steal with
    /// [`TIOCSCTTY`] fail; the rest go to the daemon.
    Ioctl { fd: u8, cmd: u8, arg: u8 },
    /// `bind`: a Unix socket address with a path creates a file.
    Bind { addr: u8, len: u8 },
    /// `connect`: reaches a service, which may write for the caller. Strict mode decides a
    /// Unix socket whose listener is outside the session like a write and performs the
    /// connect itself; lite mode, with a log, records it.
    Connect { fd: u8, addr: u8, len: u8 },
    /// `sendto` (its address argument `addr`), `sendmsg`, `sendmmsg` (`addr` None: the
    /// addresses are in memory): a datagram to a Unix socket reaches a service as a
    /// connection does. Strict mode has the daemon make every send with an address (any
    /// `sendmsg`), deciding those to a Unix socket outside the session; lite mode lets them
    /// through.
    Send { fd: u8, addr: Option<u8> },
    /// `seccomp`: refused when it would install a second listener.
    Seccomp { op: u8, flags: u8 },
    /// `clone`, `unshare`: refused (`EPERM`) in strict mode when `flags` asks for a new user
    /// or mount namespace, where a path could name another file than the daemon sees. Lite
    /// mode allows them: browsers' sandboxes need them, and their mounts are refused anyway.
    Namespaces { flags: u8 },
    /// Refused with this errno in strict mode only.
    RefuseStrict(i32),
    /// `landlock_restrict_self`: a Landlock domain the process makes for itself binds it,
    /// not the daemon, which performs for it. Refused (`ENOSYS`) in strict mode, which
    /// performs everything; reported in lite mode, which then stops performing for the
    /// session.
    OwnDomain,
    /// Refused with this errno: what hallpass cannot supervise.
    Refuse(i32),
    /// `execve`, `execveat`: reported in strict mode (an exec changes credentials, which the
    /// daemon keeps), and in lite mode only when target memory is read through lent
    /// descriptors, which an exec makes stale (see `mem.rs`).
    Exec,
    /// Changes the calling thread's credentials (`setuid`..., `setgroups`, `capset`): passes
    /// in lite mode; reported in strict mode, where the daemon keeps the credentials it
    /// performs with (`perform/creds.rs`).
    Creds,
    /// Known to change no file system: passes in the kernel, in both modes.
    Pass,
    /// Changes another process's scheduling or I/O priority (`setpriority`, `ioprio_set`,
    /// `sched_set*`), which the Landlock domain does not guard: passes in the kernel for the
    /// caller itself (`pid` 0, and with `which`, the argument that must say "a process" and
    /// its value); any other target goes to the daemon, which lets it through only for a
    /// process of the session.
    OtherProcess { pid: u8, which: Option<(u8, u32)> },
    /// `prlimit64`, `setrlimit`: as [`Kind::OtherProcess`] for `pid`, and a new
    /// `RLIMIT_CORE` goes to the daemon, which lets through only a limit of 0: the kernel
    /// would write a core dump where the daemon never sees it (the launcher sets the limit
    /// to 0 for the session, which only root could raise again).
    Rlimit {
        pid: Option<u8>,
        resource: u8,
        new: u8,
    },
}

/// One intercepted syscall.
#[derive(Clone, Copy, Debug)]
pub struct Syscall {
    pub name: &'static str,
    pub x86_64: Option<u32>,
    pub aarch64: Option<u32>,
    pub kind: Kind,
    /// It removes or renames the directory entries it writes, or makes a name lead to what is
    /// already there (a hard link, a symlink): what lies below a name can then change with no
    /// write below it (`mv .git x; echo evil > x/hooks/pre-commit; mv x .git`), so the policy
    /// denies these on a parent directory of a denied path
    /// ([`crate::policy::Policy::decide_syscall`]). Not `mkdir`: a new directory is empty, and
    /// all that is later put below it is checked. `mknod` makes no directory either, but is
    /// counted in all the same: nothing needs it there.
    pub names: bool,
}

impl Syscall {
    /// Its number on `arch`, if it exists there.
    pub const fn nr(&self, arch: Arch) -> Option<u32> {
        match arch {
            Arch::X86_64 => self.x86_64,
            Arch::Aarch64 => self.aarch64,
        }
    }
}

// include/uapi/linux/fcntl.h
pub const AT_FDCWD: i32 = -100;
pub const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
pub const AT_SYMLINK_FOLLOW: u32 = 0x400;
pub const AT_EMPTY_PATH: u32 = 0x1000;

/// The open flags that make an open a write: `O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC` and
/// `__O_TMPFILE` (`include/uapi/asm-generic/fcntl.h`; the same values on x86_64 and aarch64).
pub const OPEN_WRITE_FLAGS: u32 = 0o1 | 0o2 | 0o100 | 0o1000 | 0o20_000_000;
/// `O_PATH`: the other access flags are then ignored.
pub const O_PATH: u32 = 0o10_000_000;

/// Whether an open with these flags may write (the filter's test, for the daemon).
pub fn is_write_open(flags: u32) -> bool {
    flags & O_PATH == 0 && flags & OPEN_WRITE_FLAGS != 0
}
pub const O_CREAT: u32 = 0o100;
pub const O_EXCL: u32 = 0o200;
/// `O_NOFOLLOW` of the native architecture: 0o400000 on x86_64 but 0o100000 on aarch64, where
/// 0o400000 is `O_LARGEFILE` (which Go and musl set on every open).
pub const O_NOFOLLOW: u32 = libc::O_NOFOLLOW as u32;

/// `RLIMIT_CORE` (`include/uapi/asm-generic/resource.h`; the same on x86_64 and aarch64).
pub const RLIMIT_CORE: u32 = 4;
/// `PRIO_PROCESS` (`include/uapi/linux/resource.h`) and `IOPRIO_WHO_PROCESS`
/// (`include/uapi/linux/ioprio.h`): the `which` that names one process.
const PRIO_PROCESS: u32 = 0;
const IOPRIO_WHO_PROCESS: u32 = 1;

/// `CLONE_NEWNS | CLONE_NEWUSER` (`include/uapi/linux/sched.h`).
pub const CLONE_NEW_MOUNT_OR_USER: u32 = 0x0002_0000 | 0x1000_0000;

/// `SECCOMP_SET_MODE_FILTER` and `SECCOMP_FILTER_FLAG_NEW_LISTENER` (`linux/seccomp.h`).
pub const SECCOMP_SET_MODE_FILTER: u32 = 1;
pub const SECCOMP_FILTER_FLAG_NEW_LISTENER: u32 = 1 << 3;

const fn p(path: u8, follow: Follow) -> PathArg {
    PathArg {
        dirfd: None,
        path,
        follow,
        empty_path: None,
        null_is_fd: false,
    }
}

const fn at(dirfd: u8, path: u8, follow: Follow) -> PathArg {
    PathArg {
        dirfd: Some(dirfd),
        path,
        follow,
        empty_path: None,
        null_is_fd: false,
    }
}

const fn at_flags(dirfd: u8, path: u8, flags: u8) -> PathArg {
    PathArg {
        dirfd: Some(dirfd),
        path,
        follow: Follow::UnlessNoFollow { flags },
        empty_path: Some(flags),
        null_is_fd: false,
    }
}

use Follow::{Always, Never};

const fn sys(name: &'static str, x86_64: Option<u32>, aarch64: Option<u32>, kind: Kind) -> Syscall {
    Syscall {
        name,
        x86_64,
        aarch64,
        kind,
        names: false,
    }
}

/// A syscall known to change no file system.
const fn pass(name: &'static str, x86_64: Option<u32>, aarch64: Option<u32>) -> Syscall {
    sys(name, x86_64, aarch64, Kind::Pass)
}

/// `sc`, marked as a syscall that changes [`Syscall::names`].
const fn names(sc: Syscall) -> Syscall {
    Syscall { names: true, ..sc }
}

const EPERM: i32 = libc::EPERM;
const ENOSYS: i32 = libc::ENOSYS;

/// Every syscall the filter knows: the writers and what it refuses first, then those it lets
/// pass. The filter finds a number by binary search; the order here is for the reader.
pub static TABLE: &[Syscall] = &[
    // Opens.
    sys(
        "openat",
        Some(257),
        Some(56),
        Kind::Open {
            dirfd: Some(0),
            path: 1,
            flags: Some(2),
        },
    ),
    sys(
        "open",
        Some(2),
        None,
        Kind::Open {
            dirfd: None,
            path: 0,
            flags: Some(1),
        },
    ),
    sys(
        "creat",
        Some(85),
        None,
        Kind::Open {
            dirfd: None,
            path: 0,
            flags: None,
        },
    ),
    sys(
        "openat2",
        Some(437),
        Some(437),
        Kind::Openat2 {
            dirfd: 0,
            path: 1,
            how: 2,
        },
    ),
    // Names: create, remove, rename, link.
    sys("mkdir", Some(83), None, Kind::Paths(&[p(0, Never)])),
    sys(
        "mkdirat",
        Some(258),
        Some(34),
        Kind::Paths(&[at(0, 1, Never)]),
    ),
    names(sys("rmdir", Some(84), None, Kind::Paths(&[p(0, Never)]))),
    names(sys("unlink", Some(87), None, Kind::Paths(&[p(0, Never)]))),
    names(sys(
        "unlinkat",
        Some(263),
        Some(35),
        Kind::Paths(&[at(0, 1, Never)]),
    )),
    names(sys(
        "rename",
        Some(82),
        None,
        Kind::Paths(&[p(0, Never), p(1, Never)]),
    )),
    names(sys(
        "renameat",
        Some(264),
        Some(38),
        Kind::Paths(&[at(0, 1, Never), at(2, 3, Never)]),
    )),
    names(sys(
        "renameat2",
        Some(316),
        Some(276),
        Kind::Paths(&[at(0, 1, Never), at(2, 3, Never)]),
    )),
    // link() does not follow a symlink oldpath on Linux; linkat() only with AT_SYMLINK_FOLLOW.
    names(sys(
        "link",
        Some(86),
        None,
        Kind::Paths(&[p(0, Never), p(1, Never)]),
    )),
    names(sys(
        "linkat",
        Some(265),
        Some(37),
        Kind::Paths(&[
            PathArg {
                dirfd: Some(0),
                path: 1,
                follow: Follow::IfFollow { flags: 4 },
                empty_path: Some(4),
                null_is_fd: false,
            },
            at(2, 3, Never),
        ]),
    )),
    // The target of a symlink is only a string; the link itself is what is written.
    names(sys("symlink", Some(88), None, Kind::Paths(&[p(1, Never)]))),
    names(sys(
        "symlinkat",
        Some(266),
        Some(36),
        Kind::Paths(&[at(1, 2, Never)]),
    )),
    names(sys(
        "mknod",
        Some(133),
        None,
        Kind::Mknod {
            paths: &[p(0, Never)],
            mode: 1,
            dev: 2,
        },
    )),
    names(sys(
        "mknodat",
        Some(259),
        Some(33),
        Kind::Mknod {
            paths: &[at(0, 1, Never)],
            mode: 2,
            dev: 3,
        },
    )),
    // Metadata by path.
    sys("chmod", Some(90), None, Kind::Paths(&[p(0, Always)])),
    sys(
        "fchmodat",
        Some(268),
        Some(53),
        Kind::Paths(&[at(0, 1, Always)]),
    ),
    sys(
        "fchmodat2",
        Some(452),
        Some(452),
        Kind::Paths(&[at_flags(0, 1, 3)]),
    ),
    sys("chown", Some(92), None, Kind::Paths(&[p(0, Always)])),
    sys("lchown", Some(94), None, Kind::Paths(&[p(0, Never)])),
    sys(
        "fchownat",
        Some(260),
        Some(54),
        Kind::Paths(&[at_flags(0, 1, 4)]),
    ),
    sys("truncate", Some(76), Some(45), Kind::Paths(&[p(0, Always)])),
    sys("utime", Some(132), None, Kind::Paths(&[p(0, Always)])),
    sys("utimes", Some(235), None, Kind::Paths(&[p(0, Always)])),
    sys(
        "futimesat",
        Some(261),
        None,
        Kind::Paths(&[PathArg {
            null_is_fd: true,
            ..at(0, 1, Always)
        }]),
    ),
    sys(
        "utimensat",
        Some(280),
        Some(88),
        Kind::Utimensat(&[PathArg {
            null_is_fd: true,
            ..at_flags(0, 1, 3)
        }]),
    ),
    sys("setxattr", Some(188), Some(5), Kind::Paths(&[p(0, Always)])),
    sys("lsetxattr", Some(189), Some(6), Kind::Paths(&[p(0, Never)])),
    sys(
        "removexattr",
        Some(197),
        Some(14),
        Kind::Paths(&[p(0, Always)]),
    ),
    sys(
        "lremovexattr",
        Some(198),
        Some(15),
        Kind::Paths(&[p(0, Never)]),
    ),
    sys(
        "setxattrat",
        Some(463),
        Some(463),
        Kind::Paths(&[at_flags(0, 1, 2)]),
    ),
    sys(
        "removexattrat",
        Some(466),
        Some(466),
        Kind::Paths(&[at_flags(0, 1, 2)]),
    ),
    // file_setattr(dfd, path, struct file_attr *, size, at_flags): inode flags by path (6.17).
    sys(
        "file_setattr",
        Some(469),
        Some(469),
        Kind::Paths(&[at_flags(0, 1, 4)]),
    ),
    // Metadata by descriptor.
    sys("fchmod", Some(91), Some(52), Kind::FdMeta { fd: 0 }),
    sys("fchown", Some(93), Some(55), Kind::FdMeta { fd: 0 }),
    sys("fsetxattr", Some(190), Some(7), Kind::FdMeta { fd: 0 }),
    sys("fremovexattr", Some(199), Some(16), Kind::FdMeta { fd: 0 }),
    sys(
        "ioctl",
        Some(16),
        Some(29),
        Kind::Ioctl {
            fd: 0,
            cmd: 1,
            arg: 2,
        },
    ),
    sys("bind", Some(49), Some(200), Kind::Bind { addr: 1, len: 2 }),
    // What cannot be supervised.
    sys(
        "seccomp",
        Some(317),
        Some(277),
        Kind::Seccomp { op: 0, flags: 1 },
    ),
    sys("io_uring_setup", Some(425), Some(425), Kind::Refuse(ENOSYS)),
    sys("io_uring_enter", Some(426), Some(426), Kind::Refuse(ENOSYS)),
    sys(
        "io_uring_register",
        Some(427),
        Some(427),
        Kind::Refuse(ENOSYS),
    ),
    sys(
        "open_by_handle_at",
        Some(304),
        Some(265),
        Kind::Refuse(EPERM),
    ),
    // Mounts would let a path the daemon checked name another file.
    sys("mount", Some(165), Some(40), Kind::Refuse(EPERM)),
    sys("umount2", Some(166), Some(39), Kind::Refuse(EPERM)),
    sys("pivot_root", Some(155), Some(41), Kind::Refuse(EPERM)),
    sys("chroot", Some(161), Some(51), Kind::Refuse(EPERM)),
    sys("open_tree", Some(428), Some(428), Kind::Refuse(EPERM)),
    sys("move_mount", Some(429), Some(429), Kind::Refuse(EPERM)),
    sys("fsopen", Some(430), Some(430), Kind::Refuse(EPERM)),
    sys("fsconfig", Some(431), Some(431), Kind::Refuse(EPERM)),
    sys("fsmount", Some(432), Some(432), Kind::Refuse(EPERM)),
    sys("fspick", Some(433), Some(433), Kind::Refuse(EPERM)),
    sys("mount_setattr", Some(442), Some(442), Kind::Refuse(EPERM)),
    sys("open_tree_attr", Some(467), Some(467), Kind::Refuse(EPERM)),
    sys("setns", Some(308), Some(268), Kind::Refuse(EPERM)),
    sys(
        "unshare",
        Some(272),
        Some(97),
        Kind::Namespaces { flags: 0 },
    ),
    sys("clone", Some(56), Some(220), Kind::Namespaces { flags: 0 }),
    // Its flags are in memory the filter cannot read; C libraries fall back to `clone`.
    sys("clone3", Some(435), Some(435), Kind::RefuseStrict(ENOSYS)),
    // A Landlock domain the command makes for itself would not bind the daemon, which
    // performs its writes: refused in strict mode as on a kernel without Landlock, so that
    // programs that sandbox themselves on a best-effort basis go on (strict mode supervises
    // them); in lite mode the domain is made, and the daemon performs nothing more.
    sys(
        "landlock_restrict_self",
        Some(446),
        Some(446),
        Kind::OwnDomain,
    ),
    sys("execve", Some(59), Some(221), Kind::Exec),
    sys("execveat", Some(322), Some(281), Kind::Exec),
    // Known to change no file system. Whatever is not in this table fails with ENOSYS: a
    // syscall added by a later kernel, and those left out on purpose because they write
    // where the daemon cannot see or change the machine for everyone (`acct`, `swapon`,
    // `quotactl`, `bpf`, `mq_open`, the key rings, `fanotify_init`, module loading,
    // `kexec_*`, `reboot`, setting the clock or the host name, `iopl`/`ioperm`, `syslog`,
    // `vhangup`).
    // I/O on descriptors the process already holds (writes through them were checked at open).
    pass("read", Some(0), Some(63)),
    pass("write", Some(1), Some(64)),
    pass("readv", Some(19), Some(65)),
    pass("writev", Some(20), Some(66)),
    pass("pread64", Some(17), Some(67)),
    pass("pwrite64", Some(18), Some(68)),
    pass("preadv", Some(295), Some(69)),
    pass("pwritev", Some(296), Some(70)),
    pass("preadv2", Some(327), Some(286)),
    pass("pwritev2", Some(328), Some(287)),
    pass("lseek", Some(8), Some(62)),
    pass("close", Some(3), Some(57)),
    pass("close_range", Some(436), Some(436)),
    pass("dup", Some(32), Some(23)),
    pass("dup2", Some(33), None),
    pass("dup3", Some(292), Some(24)),
    pass("pipe", Some(22), None),
    pass("pipe2", Some(293), Some(59)),
    pass("sendfile", Some(40), Some(71)),
    pass("splice", Some(275), Some(76)),
    pass("tee", Some(276), Some(77)),
    pass("vmsplice", Some(278), Some(75)),
    pass("copy_file_range", Some(326), Some(285)),
    pass("fsync", Some(74), Some(82)),
    pass("fdatasync", Some(75), Some(83)),
    pass("sync", Some(162), Some(81)),
    pass("syncfs", Some(306), Some(267)),
    pass("sync_file_range", Some(277), Some(84)),
    pass("fallocate", Some(285), Some(47)),
    pass("ftruncate", Some(77), Some(46)),
    pass("readahead", Some(187), Some(213)),
    pass("fadvise64", Some(221), Some(223)),
    pass("flock", Some(73), Some(32)),
    pass("fcntl", Some(72), Some(25)),
    // Waiting on descriptors.
    pass("poll", Some(7), None),
    pass("ppoll", Some(271), Some(73)),
    pass("select", Some(23), None),
    pass("pselect6", Some(270), Some(72)),
    pass("epoll_create", Some(213), None),
    pass("epoll_create1", Some(291), Some(20)),
    pass("epoll_ctl", Some(233), Some(21)),
    pass("epoll_wait", Some(232), None),
    pass("epoll_pwait", Some(281), Some(22)),
    pass("epoll_pwait2", Some(441), Some(441)),
    pass("eventfd", Some(284), None),
    pass("eventfd2", Some(290), Some(19)),
    pass("signalfd", Some(282), None),
    pass("signalfd4", Some(289), Some(74)),
    pass("timerfd_create", Some(283), Some(85)),
    pass("timerfd_settime", Some(286), Some(86)),
    pass("timerfd_gettime", Some(287), Some(87)),
    pass("inotify_init", Some(253), None),
    pass("inotify_init1", Some(294), Some(26)),
    pass("inotify_add_watch", Some(254), Some(27)),
    pass("inotify_rm_watch", Some(255), Some(28)),
    // Reading the file system.
    pass("stat", Some(4), None),
    pass("fstat", Some(5), Some(80)),
    pass("lstat", Some(6), None),
    pass("newfstatat", Some(262), Some(79)),
    pass("statx", Some(332), Some(291)),
    pass("access", Some(21), None),
    pass("faccessat", Some(269), Some(48)),
    pass("faccessat2", Some(439), Some(439)),
    pass("readlink", Some(89), None),
    pass("readlinkat", Some(267), Some(78)),
    pass("getdents", Some(78), None),
    pass("getdents64", Some(217), Some(61)),
    pass("getcwd", Some(79), Some(17)),
    pass("statfs", Some(137), Some(43)),
    pass("fstatfs", Some(138), Some(44)),
    pass("getxattr", Some(191), Some(8)),
    pass("lgetxattr", Some(192), Some(9)),
    pass("fgetxattr", Some(193), Some(10)),
    pass("listxattr", Some(194), Some(11)),
    pass("llistxattr", Some(195), Some(12)),
    pass("flistxattr", Some(196), Some(13)),
    pass("getxattrat", Some(464), Some(464)),
    pass("listxattrat", Some(465), Some(465)),
    pass("file_getattr", Some(468), Some(468)),
    pass("name_to_handle_at", Some(303), Some(264)),
    pass("statmount", Some(457), Some(457)),
    pass("listmount", Some(458), Some(458)),
    pass("chdir", Some(80), Some(49)),
    pass("fchdir", Some(81), Some(50)),
    pass("umask", Some(95), Some(166)),
    // Memory.
    pass("brk", Some(12), Some(214)),
    pass("mmap", Some(9), Some(222)),
    pass("munmap", Some(11), Some(215)),
    pass("mremap", Some(25), Some(216)),
    pass("mprotect", Some(10), Some(226)),
    pass("madvise", Some(28), Some(233)),
    pass("msync", Some(26), Some(227)),
    pass("mincore", Some(27), Some(232)),
    pass("mlock", Some(149), Some(228)),
    pass("mlock2", Some(325), Some(284)),
    pass("munlock", Some(150), Some(229)),
    pass("mlockall", Some(151), Some(230)),
    pass("munlockall", Some(152), Some(231)),
    pass("remap_file_pages", Some(216), Some(234)),
    pass("mbind", Some(237), Some(235)),
    pass("set_mempolicy", Some(238), Some(237)),
    pass("get_mempolicy", Some(239), Some(236)),
    pass("set_mempolicy_home_node", Some(450), Some(450)),
    pass("migrate_pages", Some(256), Some(238)),
    pass("move_pages", Some(279), Some(239)),
    pass("membarrier", Some(324), Some(283)),
    pass("memfd_create", Some(319), Some(279)),
    pass("memfd_secret", Some(447), Some(447)),
    pass("pkey_mprotect", Some(329), Some(288)),
    pass("pkey_alloc", Some(330), Some(289)),
    pass("pkey_free", Some(331), Some(290)),
    pass("process_madvise", Some(440), Some(440)),
    pass("process_mrelease", Some(448), Some(448)),
    pass("mseal", Some(462), Some(462)),
    pass("userfaultfd", Some(323), Some(282)),
    pass("cachestat", Some(451), Some(451)),
    pass("map_shadow_stack", Some(453), Some(453)),
    // Processes and threads.
    pass("fork", Some(57), None),
    pass("vfork", Some(58), None),
    pass("exit", Some(60), Some(93)),
    pass("exit_group", Some(231), Some(94)),
    pass("wait4", Some(61), Some(260)),
    pass("waitid", Some(247), Some(95)),
    pass("set_tid_address", Some(218), Some(96)),
    pass("set_robust_list", Some(273), Some(99)),
    pass("get_robust_list", Some(274), Some(100)),
    pass("rseq", Some(334), Some(293)),
    pass("futex", Some(202), Some(98)),
    pass("futex_waitv", Some(449), Some(449)),
    pass("futex_wake", Some(454), Some(454)),
    pass("futex_wait", Some(455), Some(455)),
    pass("futex_requeue", Some(456), Some(456)),
    pass("arch_prctl", Some(158), None),
    pass("prctl", Some(157), Some(167)),
    pass("personality", Some(135), Some(92)),
    pass("modify_ldt", Some(154), None),
    pass("set_thread_area", Some(205), None),
    pass("get_thread_area", Some(211), None),
    pass("sched_yield", Some(24), Some(124)),
    sys(
        "sched_setparam",
        Some(142),
        Some(118),
        Kind::OtherProcess {
            pid: 0,
            which: None,
        },
    ),
    pass("sched_getparam", Some(143), Some(121)),
    sys(
        "sched_setscheduler",
        Some(144),
        Some(119),
        Kind::OtherProcess {
            pid: 0,
            which: None,
        },
    ),
    pass("sched_getscheduler", Some(145), Some(120)),
    pass("sched_get_priority_max", Some(146), Some(125)),
    pass("sched_get_priority_min", Some(147), Some(126)),
    pass("sched_rr_get_interval", Some(148), Some(127)),
    sys(
        "sched_setaffinity",
        Some(203),
        Some(122),
        Kind::OtherProcess {
            pid: 0,
            which: None,
        },
    ),
    pass("sched_getaffinity", Some(204), Some(123)),
    sys(
        "sched_setattr",
        Some(314),
        Some(274),
        Kind::OtherProcess {
            pid: 0,
            which: None,
        },
    ),
    pass("sched_getattr", Some(315), Some(275)),
    pass("getcpu", Some(309), Some(168)),
    pass("getpriority", Some(140), Some(141)),
    sys(
        "setpriority",
        Some(141),
        Some(140),
        Kind::OtherProcess {
            pid: 1,
            which: Some((0, PRIO_PROCESS)),
        },
    ),
    pass("ioprio_get", Some(252), Some(31)),
    sys(
        "ioprio_set",
        Some(251),
        Some(30),
        Kind::OtherProcess {
            pid: 1,
            which: Some((0, IOPRIO_WHO_PROCESS)),
        },
    ),
    pass("getrlimit", Some(97), Some(163)),
    sys(
        "setrlimit",
        Some(160),
        Some(164),
        Kind::Rlimit {
            pid: None,
            resource: 0,
            new: 1,
        },
    ),
    sys(
        "prlimit64",
        Some(302),
        Some(261),
        Kind::Rlimit {
            pid: Some(0),
            resource: 1,
            new: 2,
        },
    ),
    pass("getrusage", Some(98), Some(165)),
    pass("times", Some(100), Some(153)),
    pass("uname", Some(63), Some(160)),
    pass("sysinfo", Some(99), Some(179)),
    pass("getrandom", Some(318), Some(278)),
    pass("kcmp", Some(312), Some(272)),
    pass("ptrace", Some(101), Some(117)),
    pass("process_vm_readv", Some(310), Some(270)),
    pass("process_vm_writev", Some(311), Some(271)),
    pass("pidfd_open", Some(434), Some(434)),
    pass("pidfd_getfd", Some(438), Some(438)),
    pass("pidfd_send_signal", Some(424), Some(424)),
    pass("uretprobe", Some(335), None),
    pass("uprobe", Some(336), None),
    // Identity.
    pass("getpid", Some(39), Some(172)),
    pass("getppid", Some(110), Some(173)),
    pass("gettid", Some(186), Some(178)),
    pass("getuid", Some(102), Some(174)),
    pass("geteuid", Some(107), Some(175)),
    pass("getgid", Some(104), Some(176)),
    pass("getegid", Some(108), Some(177)),
    pass("getresuid", Some(118), Some(148)),
    pass("getresgid", Some(120), Some(150)),
    pass("getgroups", Some(115), Some(158)),
    sys("setuid", Some(105), Some(146), Kind::Creds),
    sys("setgid", Some(106), Some(144), Kind::Creds),
    sys("setreuid", Some(113), Some(145), Kind::Creds),
    sys("setregid", Some(114), Some(143), Kind::Creds),
    sys("setresuid", Some(117), Some(147), Kind::Creds),
    sys("setresgid", Some(119), Some(149), Kind::Creds),
    sys("setfsuid", Some(122), Some(151), Kind::Creds),
    sys("setfsgid", Some(123), Some(152), Kind::Creds),
    sys("setgroups", Some(116), Some(159), Kind::Creds),
    pass("getpgid", Some(121), Some(155)),
    pass("setpgid", Some(109), Some(154)),
    pass("getpgrp", Some(111), None),
    pass("getsid", Some(124), Some(156)),
    pass("setsid", Some(112), Some(157)),
    pass("capget", Some(125), Some(90)),
    sys("capset", Some(126), Some(91), Kind::Creds),
    // Signals and time.
    pass("rt_sigaction", Some(13), Some(134)),
    pass("rt_sigprocmask", Some(14), Some(135)),
    pass("rt_sigreturn", Some(15), Some(139)),
    pass("rt_sigpending", Some(127), Some(136)),
    pass("rt_sigtimedwait", Some(128), Some(137)),
    pass("rt_sigqueueinfo", Some(129), Some(138)),
    pass("rt_tgsigqueueinfo", Some(297), Some(240)),
    pass("rt_sigsuspend", Some(130), Some(133)),
    pass("sigaltstack", Some(131), Some(132)),
    pass("kill", Some(62), Some(129)),
    pass("tkill", Some(200), Some(130)),
    pass("tgkill", Some(234), Some(131)),
    pass("pause", Some(34), None),
    pass("nanosleep", Some(35), Some(101)),
    pass("clock_nanosleep", Some(230), Some(115)),
    pass("getitimer", Some(36), Some(102)),
    pass("setitimer", Some(38), Some(103)),
    pass("alarm", Some(37), None),
    pass("timer_create", Some(222), Some(107)),
    pass("timer_settime", Some(223), Some(110)),
    pass("timer_gettime", Some(224), Some(108)),
    pass("timer_getoverrun", Some(225), Some(109)),
    pass("timer_delete", Some(226), Some(111)),
    pass("clock_gettime", Some(228), Some(113)),
    pass("clock_getres", Some(229), Some(114)),
    pass("gettimeofday", Some(96), Some(169)),
    pass("time", Some(201), None),
    pass("restart_syscall", Some(219), Some(128)),
    // Sockets (bind, which can make a file, and connect, which reaches a service, are
    // decided above and below).
    pass("socket", Some(41), Some(198)),
    pass("socketpair", Some(53), Some(199)),
    sys(
        "connect",
        Some(42),
        Some(203),
        Kind::Connect {
            fd: 0,
            addr: 1,
            len: 2,
        },
    ),
    pass("accept", Some(43), Some(202)),
    pass("accept4", Some(288), Some(242)),
    pass("listen", Some(50), Some(201)),
    pass("shutdown", Some(48), Some(210)),
    pass("getsockname", Some(51), Some(204)),
    pass("getpeername", Some(52), Some(205)),
    pass("setsockopt", Some(54), Some(208)),
    pass("getsockopt", Some(55), Some(209)),
    sys(
        "sendto",
        Some(44),
        Some(206),
        Kind::Send {
            fd: 0,
            addr: Some(4),
        },
    ),
    pass("recvfrom", Some(45), Some(207)),
    sys(
        "sendmsg",
        Some(46),
        Some(211),
        Kind::Send { fd: 0, addr: None },
    ),
    pass("recvmsg", Some(47), Some(212)),
    sys(
        "sendmmsg",
        Some(307),
        Some(269),
        Kind::Send { fd: 0, addr: None },
    ),
    pass("recvmmsg", Some(299), Some(243)),
    // System V IPC and message queues already open (their objects are in no file system).
    pass("shmget", Some(29), Some(194)),
    pass("shmat", Some(30), Some(196)),
    pass("shmdt", Some(67), Some(197)),
    pass("shmctl", Some(31), Some(195)),
    pass("semget", Some(64), Some(190)),
    pass("semop", Some(65), Some(193)),
    pass("semtimedop", Some(220), Some(192)),
    pass("semctl", Some(66), Some(191)),
    pass("msgget", Some(68), Some(186)),
    pass("msgsnd", Some(69), Some(189)),
    pass("msgrcv", Some(70), Some(188)),
    pass("msgctl", Some(71), Some(187)),
    pass("mq_timedsend", Some(242), Some(182)),
    pass("mq_timedreceive", Some(243), Some(183)),
    pass("mq_notify", Some(244), Some(184)),
    pass("mq_getsetattr", Some(245), Some(185)),
    // Asynchronous I/O on open descriptors.
    pass("io_setup", Some(206), Some(0)),
    pass("io_destroy", Some(207), Some(1)),
    pass("io_submit", Some(209), Some(2)),
    pass("io_cancel", Some(210), Some(3)),
    pass("io_getevents", Some(208), Some(4)),
    pass("io_pgetevents", Some(333), Some(292)),
    // Landlock rulesets (restricting oneself is decided above), performance counters, LSM attributes read.
    pass("landlock_create_ruleset", Some(444), Some(444)),
    pass("landlock_add_rule", Some(445), Some(445)),
    // As root (CAP_PERFMON and CAP_KILL) it reaches any process past the ptrace check the
    // Landlock domain hooks (a sigtrap event kills it, or makes it dump core).
    sys(
        "perf_event_open",
        Some(298),
        Some(241),
        Kind::OtherProcess {
            pid: 1,
            which: None,
        },
    ),
    pass("lsm_get_self_attr", Some(459), Some(459)),
    pass("lsm_list_modules", Some(461), Some(461)),
];

/// Whether the syscall called `name` changes [`Syscall::names`]. Asked for every decided
/// write: the dozen such names are gathered once rather than the table searched each time.
pub fn changes_names(name: &str) -> bool {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        TABLE
            .iter()
            .filter(|sc| sc.names)
            .map(|sc| sc.name)
            .collect()
    });
    NAMES.contains(&name)
}

/// Whether the syscall called `name` writes an object's content (an open for writing,
/// `truncate`, an `ioctl`) rather than its name or metadata: only those may use the implicit
/// devices and the terminal ([`crate::policy::Call::content`]).
pub fn writes_content(name: &str) -> bool {
    matches!(
        name,
        "open" | "openat" | "creat" | "openat2" | "truncate" | "ioctl"
    )
}

/// Whether strict mode's Landlock domain (see `hallpass-cli/src/sys/landlock.rs`) checks
/// every effect of `sc`, with arguments `args`, on the object the kernel reaches: the opens
/// that write (`WRITE_FILE`) or only create (`MAKE_REG`), making and removing names (`mkdir`,
/// `mknod`, `symlink`, `link`, `rename`, `unlink`, `rmdir`). Not a read-only open with
/// `O_TRUNC`, nor `truncate` (the domain does not handle truncation), nor the metadata calls
/// (mode, owner, times, xattrs, inode flags), which Landlock does not see: those the daemon
/// performs.
pub fn landlock_covers(sc: &Syscall, args: &[u64; 6]) -> bool {
    match sc.kind {
        // A device node is never left to the kernel (see [`Kind::Mknod`]).
        Kind::Mknod { mode, dev, .. } => !makes_device(args[mode as usize], args[dev as usize]),
        Kind::Open { flags: Some(f), .. } => {
            let flags = args[f as usize] as u32;
            flags & libc::O_TRUNC as u32 == 0 || flags & libc::O_ACCMODE as u32 != 0
        }
        Kind::Open { flags: None, .. } => true,
        _ => sc.names || matches!(sc.name, "mkdir" | "mkdirat"),
    }
}

/// Whether `mknod` with `mode` and `dev` (as the syscall passes them) makes a device node: a
/// block device, or a character device but a whiteout (0:0). The kernel reads the mode as
/// 16 bits (`umode_t`) and the device as 32 (`unsigned int`).
pub fn makes_device(mode: u64, dev: u64) -> bool {
    match mode as u16 as u32 & libc::S_IFMT {
        libc::S_IFBLK => true,
        libc::S_IFCHR => dev as u32 != 0,
        _ => false,
    }
}

/// Whether the syscall called `name` connects to a service: decided on the socket's path,
/// but as a connection, not a write ([`crate::policy::Call::connect`]).
pub fn connects(name: &str) -> bool {
    matches!(name, "connect" | "sendto" | "sendmsg" | "sendmmsg")
}

/// Whether the syscall called `name` renames: it may move a directory, and everything below
/// it with it, under another path (lite mode's [`crate::dircache`] must hear of it).
pub fn renames(name: &str) -> bool {
    matches!(name, "rename" | "renameat" | "renameat2")
}

/// Syscall numbers are below this on both architectures; the decoder indexes an array by them.
pub const MAX_NR: usize = 512;

/// The table for one architecture, indexed by syscall number.
pub struct Lookup {
    by_nr: Vec<Option<&'static Syscall>>,
}

impl Lookup {
    pub fn new(arch: Arch) -> Lookup {
        let mut by_nr = vec![None; MAX_NR];
        for sc in TABLE {
            if let Some(nr) = sc.nr(arch) {
                by_nr[nr as usize] = Some(sc);
            }
        }
        Lookup { by_nr }
    }

    pub fn get(&self, nr: i32) -> Option<&'static Syscall> {
        usize::try_from(nr)
            .ok()
            .and_then(|n| self.by_nr.get(n).copied().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_unique_per_arch() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let mut seen = std::collections::HashSet::new();
            for sc in TABLE {
                if let Some(nr) = sc.nr(arch) {
                    assert!(
                        seen.insert(nr),
                        "{} reuses number {nr} on {arch:?}",
                        sc.name
                    );
                    assert!((nr as usize) < MAX_NR);
                }
            }
        }
        let mut names = std::collections::HashSet::new();
        assert!(TABLE.iter().all(|sc| names.insert(sc.name)));
    }

    /// The numbers of the native architecture must match the C library's.
    #[test]
    fn native_numbers_match_libc() {
        let arch = Arch::native();
        let known: &[(&str, libc::c_long)] = &[
            ("openat", libc::SYS_openat),
            ("openat2", libc::SYS_openat2),
            ("mkdirat", libc::SYS_mkdirat),
            ("unlinkat", libc::SYS_unlinkat),
            ("renameat", libc::SYS_renameat),
            ("renameat2", libc::SYS_renameat2),
            ("linkat", libc::SYS_linkat),
            ("symlinkat", libc::SYS_symlinkat),
            ("mknodat", libc::SYS_mknodat),
            ("fchmodat", libc::SYS_fchmodat),
            ("fchownat", libc::SYS_fchownat),
            ("truncate", libc::SYS_truncate),
            ("utimensat", libc::SYS_utimensat),
            ("setxattr", libc::SYS_setxattr),
            ("lsetxattr", libc::SYS_lsetxattr),
            ("removexattr", libc::SYS_removexattr),
            ("lremovexattr", libc::SYS_lremovexattr),
            ("fchmod", libc::SYS_fchmod),
            ("fchown", libc::SYS_fchown),
            ("fsetxattr", libc::SYS_fsetxattr),
            ("fremovexattr", libc::SYS_fremovexattr),
            ("ioctl", libc::SYS_ioctl),
            ("bind", libc::SYS_bind),
            ("seccomp", libc::SYS_seccomp),
            ("io_uring_setup", libc::SYS_io_uring_setup),
            ("open_by_handle_at", libc::SYS_open_by_handle_at),
            ("mount", libc::SYS_mount),
            ("umount2", libc::SYS_umount2),
            ("pivot_root", libc::SYS_pivot_root),
            ("chroot", libc::SYS_chroot),
            ("setns", libc::SYS_setns),
            ("execve", libc::SYS_execve),
            ("execveat", libc::SYS_execveat),
            ("open_tree", libc::SYS_open_tree),
            ("move_mount", libc::SYS_move_mount),
            ("fsopen", libc::SYS_fsopen),
            ("fsmount", libc::SYS_fsmount),
            ("mount_setattr", libc::SYS_mount_setattr),
        ];
        for (name, nr) in known {
            let sc = TABLE.iter().find(|sc| sc.name == *name).unwrap();
            assert_eq!(sc.nr(arch), Some(*nr as u32), "{name}");
        }
        #[cfg(target_arch = "x86_64")]
        for (name, nr) in [
            ("open", libc::SYS_open),
            ("creat", libc::SYS_creat),
            ("mkdir", libc::SYS_mkdir),
            ("rmdir", libc::SYS_rmdir),
            ("unlink", libc::SYS_unlink),
            ("rename", libc::SYS_rename),
            ("link", libc::SYS_link),
            ("symlink", libc::SYS_symlink),
            ("mknod", libc::SYS_mknod),
            ("chmod", libc::SYS_chmod),
            ("chown", libc::SYS_chown),
            ("lchown", libc::SYS_lchown),
            ("utime", libc::SYS_utime),
            ("utimes", libc::SYS_utimes),
            ("futimesat", libc::SYS_futimesat),
        ] {
            let sc = TABLE.iter().find(|sc| sc.name == name).unwrap();
            assert_eq!(sc.nr(arch), Some(nr as u32), "{name}");
        }
    }

    /// Every syscall the table lets pass (or decides on its arguments) has the C library's
    /// number on this architecture
    /// (the aarch64 numbers come from the same library's aarch64 definitions).
    #[test]
    fn passed_numbers_match_libc() {
        macro_rules! check {
            ($($name:ident),* $(,)?) => {
                $(
                    let name = &stringify!($name)["SYS_".len()..];
                    let sc = TABLE.iter().find(|sc| sc.name == name);
                    let sc = sc.unwrap_or_else(|| panic!("{name} is not in the table"));
                    assert_eq!(sc.nr(Arch::native()), Some(libc::$name as u32), "{}", sc.name);
                )*
            };
        }
        check!(
            SYS_read,
            SYS_write,
            SYS_readv,
            SYS_writev,
            SYS_pread64,
            SYS_pwrite64,
            SYS_preadv,
            SYS_pwritev,
            SYS_preadv2,
            SYS_pwritev2,
            SYS_lseek,
            SYS_close,
            SYS_close_range,
            SYS_dup,
            SYS_dup3,
            SYS_pipe2,
            SYS_sendfile,
            SYS_splice,
            SYS_tee,
            SYS_vmsplice,
            SYS_copy_file_range,
            SYS_fsync,
            SYS_fdatasync,
            SYS_sync,
            SYS_syncfs,
            SYS_fallocate,
            SYS_ftruncate,
            SYS_readahead,
            SYS_fadvise64,
            SYS_flock,
            SYS_fcntl,
            SYS_ppoll,
            SYS_pselect6,
            SYS_epoll_create1,
            SYS_epoll_ctl,
            SYS_epoll_pwait,
            SYS_epoll_pwait2,
            SYS_eventfd2,
            SYS_signalfd4,
            SYS_timerfd_create,
            SYS_timerfd_settime,
            SYS_timerfd_gettime,
            SYS_inotify_init1,
            SYS_inotify_add_watch,
            SYS_inotify_rm_watch,
            SYS_fstat,
            SYS_newfstatat,
            SYS_statx,
            SYS_faccessat,
            SYS_faccessat2,
            SYS_readlinkat,
            SYS_getdents64,
            SYS_getcwd,
            SYS_statfs,
            SYS_fstatfs,
            SYS_getxattr,
            SYS_lgetxattr,
            SYS_fgetxattr,
            SYS_listxattr,
            SYS_llistxattr,
            SYS_flistxattr,
            SYS_name_to_handle_at,
            SYS_chdir,
            SYS_fchdir,
            SYS_umask,
            SYS_brk,
            SYS_mmap,
            SYS_munmap,
            SYS_mremap,
            SYS_mprotect,
            SYS_madvise,
            SYS_msync,
            SYS_mincore,
            SYS_mlock,
            SYS_mlock2,
            SYS_munlock,
            SYS_mlockall,
            SYS_munlockall,
            SYS_remap_file_pages,
            SYS_mbind,
            SYS_set_mempolicy,
            SYS_get_mempolicy,
            SYS_set_mempolicy_home_node,
            SYS_migrate_pages,
            SYS_move_pages,
            SYS_membarrier,
            SYS_memfd_create,
            SYS_memfd_secret,
            SYS_pkey_mprotect,
            SYS_pkey_alloc,
            SYS_pkey_free,
            SYS_process_madvise,
            SYS_process_mrelease,
            SYS_mseal,
            SYS_userfaultfd,
            SYS_exit,
            SYS_exit_group,
            SYS_wait4,
            SYS_waitid,
            SYS_set_tid_address,
            SYS_set_robust_list,
            SYS_get_robust_list,
            SYS_rseq,
            SYS_futex,
            SYS_futex_waitv,
            SYS_prctl,
            SYS_personality,
            SYS_sched_yield,
            SYS_sched_setparam,
            SYS_sched_getparam,
            SYS_sched_setscheduler,
            SYS_sched_getscheduler,
            SYS_sched_get_priority_max,
            SYS_sched_get_priority_min,
            SYS_sched_rr_get_interval,
            SYS_sched_setaffinity,
            SYS_sched_getaffinity,
            SYS_sched_setattr,
            SYS_sched_getattr,
            SYS_getcpu,
            SYS_getpriority,
            SYS_setpriority,
            SYS_ioprio_get,
            SYS_ioprio_set,
            SYS_prlimit64,
            SYS_getrusage,
            SYS_times,
            SYS_uname,
            SYS_sysinfo,
            SYS_getrandom,
            SYS_kcmp,
            SYS_ptrace,
            SYS_process_vm_readv,
            SYS_process_vm_writev,
            SYS_pidfd_open,
            SYS_pidfd_getfd,
            SYS_pidfd_send_signal,
            SYS_getpid,
            SYS_getppid,
            SYS_gettid,
            SYS_getuid,
            SYS_geteuid,
            SYS_getgid,
            SYS_getegid,
            SYS_getresuid,
            SYS_getresgid,
            SYS_getgroups,
            SYS_setuid,
            SYS_setgid,
            SYS_setreuid,
            SYS_setregid,
            SYS_setresuid,
            SYS_setresgid,
            SYS_setfsuid,
            SYS_setfsgid,
            SYS_setgroups,
            SYS_getpgid,
            SYS_setpgid,
            SYS_getsid,
            SYS_setsid,
            SYS_capget,
            SYS_capset,
            SYS_rt_sigaction,
            SYS_rt_sigprocmask,
            SYS_rt_sigreturn,
            SYS_rt_sigpending,
            SYS_rt_sigtimedwait,
            SYS_rt_sigqueueinfo,
            SYS_rt_tgsigqueueinfo,
            SYS_rt_sigsuspend,
            SYS_sigaltstack,
            SYS_kill,
            SYS_tkill,
            SYS_tgkill,
            SYS_nanosleep,
            SYS_clock_nanosleep,
            SYS_getitimer,
            SYS_setitimer,
            SYS_timer_create,
            SYS_timer_settime,
            SYS_timer_gettime,
            SYS_timer_getoverrun,
            SYS_timer_delete,
            SYS_clock_gettime,
            SYS_clock_getres,
            SYS_gettimeofday,
            SYS_restart_syscall,
            SYS_socket,
            SYS_socketpair,
            SYS_connect,
            SYS_accept,
            SYS_accept4,
            SYS_listen,
            SYS_shutdown,
            SYS_getsockname,
            SYS_getpeername,
            SYS_setsockopt,
            SYS_getsockopt,
            SYS_sendto,
            SYS_recvfrom,
            SYS_sendmsg,
            SYS_recvmsg,
            SYS_sendmmsg,
            SYS_recvmmsg,
            SYS_shmget,
            SYS_shmat,
            SYS_shmdt,
            SYS_shmctl,
            SYS_semget,
            SYS_semop,
            SYS_semtimedop,
            SYS_semctl,
            SYS_msgget,
            SYS_msgsnd,
            SYS_msgrcv,
            SYS_msgctl,
            SYS_mq_timedsend,
            SYS_mq_timedreceive,
            SYS_mq_notify,
            SYS_mq_getsetattr,
            SYS_io_setup,
            SYS_io_destroy,
            SYS_io_submit,
            SYS_io_cancel,
            SYS_io_getevents,
            SYS_landlock_create_ruleset,
            SYS_landlock_add_rule,
            SYS_perf_event_open,
        );
        #[cfg(target_arch = "x86_64")]
        check!(
            SYS_dup2,
            SYS_pipe,
            SYS_sync_file_range,
            SYS_poll,
            SYS_select,
            SYS_epoll_create,
            SYS_epoll_wait,
            SYS_eventfd,
            SYS_signalfd,
            SYS_inotify_init,
            SYS_stat,
            SYS_lstat,
            SYS_access,
            SYS_readlink,
            SYS_getdents,
            SYS_fork,
            SYS_vfork,
            SYS_arch_prctl,
            SYS_modify_ldt,
            SYS_set_thread_area,
            SYS_get_thread_area,
            SYS_getrlimit,
            SYS_setrlimit,
            SYS_getpgrp,
            SYS_pause,
            SYS_alarm,
            SYS_time,
        );
    }

    #[test]
    fn the_syscalls_that_change_names() {
        let names: Vec<&str> = TABLE
            .iter()
            .filter(|sc| sc.names)
            .map(|sc| sc.name)
            .collect();
        assert_eq!(
            names,
            [
                "rmdir",
                "unlink",
                "unlinkat",
                "rename",
                "renameat",
                "renameat2",
                "link",
                "linkat",
                "symlink",
                "symlinkat",
                "mknod",
                "mknodat"
            ]
        );
        assert!(changes_names("renameat2"));
        // Every rename of the table, and nothing else, is a rename for the directory cache.
        for sc in TABLE {
            assert_eq!(
                renames(sc.name),
                sc.name.starts_with("rename"),
                "{}",
                sc.name
            );
        }
        for name in ["mkdir", "mkdirat", "openat", "chmod", "bind", "nope"] {
            assert!(!changes_names(name), "{name}");
        }
    }

    #[test]
    fn landlock_covers_what_its_domain_checks() {
        let sc = |name: &str| TABLE.iter().find(|s| s.name == name).unwrap();
        let open = |flags: i32| landlock_covers(sc("openat"), &[0, 0, flags as u64, 0, 0, 0]);
        assert!(open(libc::O_WRONLY | libc::O_TRUNC));
        assert!(open(libc::O_RDWR | libc::O_CREAT));
        assert!(open(libc::O_RDONLY | libc::O_CREAT));
        // Truncation the domain does not guard: performed by the daemon.
        assert!(!open(libc::O_RDONLY | libc::O_TRUNC));
        assert!(!landlock_covers(sc("truncate"), &[0; 6]));
        for name in [
            "mkdirat",
            "unlinkat",
            "renameat2",
            "linkat",
            "symlinkat",
            "mknodat",
        ] {
            assert!(landlock_covers(sc(name), &[0; 6]), "{name}");
        }
        for name in [
            "fchmodat",
            "fchownat",
            "utimensat",
            "setxattr",
            "openat2",
            "bind",
        ] {
            assert!(!landlock_covers(sc(name), &[0; 6]), "{name}");
        }
        // A device node is the daemon's to refuse, a FIFO or a whiteout the kernel's to make.
        let node =
            |mode: u32, dev: u64| landlock_covers(sc("mknodat"), &[0, 0, mode as u64, dev, 0, 0]);
        assert!(!node(libc::S_IFCHR | 0o600, libc::makedev(1, 3)));
        assert!(!node(libc::S_IFBLK | 0o600, 0));
        assert!(!node(libc::S_IFCHR, (1 << 32) | 7), "the device is 32 bits");
        assert!(node(libc::S_IFCHR, 0), "a whiteout");
        assert!(
            node(libc::S_IFCHR, 1 << 32),
            "a whiteout: the device is 32 bits"
        );
        assert!(node(libc::S_IFIFO | 0o644, 0));
        assert!(node((1 << 16) | libc::S_IFIFO, 7), "the mode is 16 bits");
    }

    #[test]
    fn lookup_finds_by_number() {
        let l = Lookup::new(Arch::X86_64);
        assert_eq!(l.get(257).unwrap().name, "openat");
        assert_eq!(l.get(0).unwrap().kind, Kind::Pass);
        assert!(l.get(163).is_none(), "acct");
        assert!(l.get(-1).is_none());
        assert!(l.get(100_000).is_none());
        let l = Lookup::new(Arch::Aarch64);
        assert_eq!(l.get(56).unwrap().name, "openat");
        assert_eq!(l.get(452).unwrap().name, "fchmodat2");
    }
}
