//! The one table of intercepted syscalls: their numbers on each architecture and where their
//! path, dirfd and flag arguments are. The BPF filter (`filter.rs`) and the notification
//! decoder (`decode.rs`) both read it, so they cannot disagree.
//!
//! Numbers come from `arch/x86/entry/syscalls/syscall_64.tbl` and
//! `include/uapi/asm-generic/unistd.h` (aarch64); syscalls numbered 424 and above share one
//! number on every architecture.

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
    /// `utimensat`: a NULL path changes the times of the dirfd itself, which lite mode leaves
    /// to the kernel like the other fd metadata calls.
    Utimensat(&'static [PathArg]),
    /// Metadata changes through a descriptor that need not be writable (`fchmod`, `fchown`,
    /// `fsetxattr`, `fremovexattr`). Supervised in strict mode only.
    FdMeta { fd: u8 },
    /// `ioctl`: only the commands in [`WRITE_IOCTLS`] are sent to the daemon.
    Ioctl { fd: u8, cmd: u8 },
    /// `bind`: a Unix socket address with a path creates a file.
    Bind { addr: u8, len: u8 },
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
    /// `execve`, `execveat`: reported only when target memory is read through lent
    /// descriptors, which an exec makes stale (see `mem.rs`).
    Exec,
}

/// One intercepted syscall.
#[derive(Clone, Copy, Debug)]
pub struct Syscall {
    pub name: &'static str,
    pub x86_64: Option<u32>,
    pub aarch64: Option<u32>,
    pub kind: Kind,
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

/// ioctl commands that change a file through a descriptor that need not be writable, or that
/// write into one: `FS_IOC_SETFLAGS` (and its 32-bit form), `FS_IOC_FSSETXATTR`, `FICLONE`,
/// `FICLONERANGE`, `FIDEDUPERANGE` (`include/uapi/linux/fs.h`).
pub const WRITE_IOCTLS: [u32; 6] = [
    0x4008_6602, // FS_IOC_SETFLAGS = _IOW('f', 2, long)
    0x4004_6602, // FS_IOC32_SETFLAGS = _IOW('f', 2, int)
    0x401c_5820, // FS_IOC_FSSETXATTR = _IOW('X', 32, struct fsxattr)
    0x4004_9409, // FICLONE = _IOW(0x94, 9, int)
    0x4020_940d, // FICLONERANGE = _IOW(0x94, 13, struct file_clone_range)
    0xc018_9436, // FIDEDUPERANGE = _IOWR(0x94, 54, struct file_dedupe_range)
];

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
    }
}

const EPERM: i32 = libc::EPERM;
const ENOSYS: i32 = libc::ENOSYS;

/// Every syscall the filter looks at, the most frequent first (the filter tests them in this
/// order).
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
    sys("rmdir", Some(84), None, Kind::Paths(&[p(0, Never)])),
    sys("unlink", Some(87), None, Kind::Paths(&[p(0, Never)])),
    sys(
        "unlinkat",
        Some(263),
        Some(35),
        Kind::Paths(&[at(0, 1, Never)]),
    ),
    sys(
        "rename",
        Some(82),
        None,
        Kind::Paths(&[p(0, Never), p(1, Never)]),
    ),
    sys(
        "renameat",
        Some(264),
        Some(38),
        Kind::Paths(&[at(0, 1, Never), at(2, 3, Never)]),
    ),
    sys(
        "renameat2",
        Some(316),
        Some(276),
        Kind::Paths(&[at(0, 1, Never), at(2, 3, Never)]),
    ),
    // link() does not follow a symlink oldpath on Linux; linkat() only with AT_SYMLINK_FOLLOW.
    sys(
        "link",
        Some(86),
        None,
        Kind::Paths(&[p(0, Never), p(1, Never)]),
    ),
    sys(
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
    ),
    // The target of a symlink is only a string; the link itself is what is written.
    sys("symlink", Some(88), None, Kind::Paths(&[p(1, Never)])),
    sys(
        "symlinkat",
        Some(266),
        Some(36),
        Kind::Paths(&[at(1, 2, Never)]),
    ),
    sys("mknod", Some(133), None, Kind::Paths(&[p(0, Never)])),
    sys(
        "mknodat",
        Some(259),
        Some(33),
        Kind::Paths(&[at(0, 1, Never)]),
    ),
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
    sys("ioctl", Some(16), Some(29), Kind::Ioctl { fd: 0, cmd: 1 }),
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
];

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

    #[test]
    fn lookup_finds_by_number() {
        let l = Lookup::new(Arch::X86_64);
        assert_eq!(l.get(257).unwrap().name, "openat");
        assert!(l.get(0).is_none());
        assert!(l.get(-1).is_none());
        assert!(l.get(100_000).is_none());
        let l = Lookup::new(Arch::Aarch64);
        assert_eq!(l.get(56).unwrap().name, "openat");
        assert_eq!(l.get(452).unwrap().name, "fchmodat2");
    }
}
