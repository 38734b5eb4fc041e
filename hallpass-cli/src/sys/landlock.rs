//! The command's Landlock domain, entered by the forked child before it installs the filter.
//! Everything is opened beforehand ([`Domain`]); [`enter`] makes only syscalls, as the child
//! between fork and exec must. See landlock(7).
//!
//! Two kinds of domain:
//! - the backstop, in every session (Landlock ABI 2, Linux 5.19): it restricts no write, but
//!   a process in it cannot trace or write the memory of a process outside it, and with
//!   scopes (ABI 6, Linux 6.12) cannot signal one;
//! - strict mode's write domain (ABI 2, Linux 5.19): the backstop, and the write rights
//!   handled, allowed only beneath the session's static allowlist. The daemon
//!   then lets the kernel make the writes it allows inside it: a race that sends one
//!   elsewhere meets the domain and fails with `EACCES`.

use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

// include/uapi/linux/landlock.h
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1 << 0;
const LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const LANDLOCK_SCOPE_SIGNAL: u64 = 1 << 1;
const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;
const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const ACCESS_FS_REMOVE_DIR: u64 = 1 << 4;
const ACCESS_FS_REMOVE_FILE: u64 = 1 << 5;
const ACCESS_FS_MAKE_CHAR: u64 = 1 << 6;
const ACCESS_FS_MAKE_DIR: u64 = 1 << 7;
const ACCESS_FS_MAKE_REG: u64 = 1 << 8;
const ACCESS_FS_MAKE_SOCK: u64 = 1 << 9;
const ACCESS_FS_MAKE_FIFO: u64 = 1 << 10;
const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
const ACCESS_FS_MAKE_SYM: u64 = 1 << 12;
/// Linking or renaming into another directory. A ruleset that handles any file system right
/// denies it unless allowed (since ABI 2), so where the backstop must handle one (no scopes)
/// it is this one, allowed everywhere.
const ACCESS_FS_REFER: u64 = 1 << 13;
const ACCESS_FS_TRUNCATE: u64 = 1 << 14;

/// The rights that change a file system, as of ABI 2. Two later ones are left out on purpose,
/// and the daemon never leaves to the kernel what they would guard: `TRUNCATE` (ABI 3), since
/// handling it makes the kernel walk the path of every open, read-only ones included, to the
/// root (about a microsecond each, measured), while the daemon performs `truncate` and
/// read-only `O_TRUNC` opens itself (a writing open needs `WRITE_FILE`); and `IOCTL_DEV` (ABI
/// 5), since ioctls are decided by the filter and the daemon, and handling it would refuse
/// terminal ioctls on every pty the command opens.
const WRITE_RIGHTS: u64 = ACCESS_FS_WRITE_FILE
    | ACCESS_FS_REMOVE_DIR
    | ACCESS_FS_REMOVE_FILE
    | ACCESS_FS_MAKE_CHAR
    | ACCESS_FS_MAKE_DIR
    | ACCESS_FS_MAKE_REG
    | ACCESS_FS_MAKE_SOCK
    | ACCESS_FS_MAKE_FIFO
    | ACCESS_FS_MAKE_BLOCK
    | ACCESS_FS_MAKE_SYM
    | ACCESS_FS_REFER;
const _: () = assert!(WRITE_RIGHTS & ACCESS_FS_TRUNCATE == 0);
/// The rights Landlock accepts on a rule for a file rather than a directory.
const FILE_RIGHTS: u64 = ACCESS_FS_WRITE_FILE;

/// The first ABI with the REFER right (Linux 5.19): the backstop needs it before scopes.
const ABI_REFER: libc::c_long = 2;
/// The first ABI with the REFER right (Linux 5.19): without it the kernel would not check
/// renames and links across directories, so the write domain needs it.
pub const ABI_WRITES: libc::c_long = 2;
/// The first ABI with scopes (Linux 6.12).
const ABI_SCOPES: libc::c_long = 6;

/// `struct open_how` (`include/uapi/linux/openat2.h`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// `struct landlock_path_beneath_attr` (packed).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `struct landlock_ruleset_attr` as of ABI 6. Older kernels read only the fields they know,
/// and accept the zeroed rest.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// A domain to enter, prepared before the fork.
pub struct Domain {
    /// The kernel's Landlock ABI (0: none), or less with `HALLPASS_LANDLOCK_ABI=N`, with
    /// which the tests cover older kernels' paths.
    abi: libc::c_long,
    /// The write domain's rules: what may be written, opened `O_PATH`, with its rights. Empty
    /// for the backstop.
    rules: Vec<(OwnedFd, u64)>,
    /// Strict mode: keep the command from abstract Unix sockets outside its domain (ABI 6).
    abstract_scoped: bool,
}

/// What the child entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entered {
    /// No domain: a kernel without Landlock ABI 2, or one that refused it.
    None,
    Backstop,
    /// Strict mode's write domain.
    Writes,
}

impl Domain {
    pub fn new() -> Domain {
        let abi = match std::env::var("HALLPASS_LANDLOCK_ABI")
            .ok()
            .and_then(|v| v.parse::<libc::c_long>().ok())
        {
            Some(n) => kernel_abi().min(n),
            None => kernel_abi(),
        };
        Domain {
            abi,
            rules: Vec::new(),
            abstract_scoped: false,
        }
    }

    /// Strict mode: where the kernel has scopes (ABI 6, Linux 6.12), the command cannot
    /// reach an abstract Unix socket made outside its session, by `connect` or by a
    /// datagram sent to its address; the daemon decides (and makes) its connections itself.
    pub fn scope_abstract_sockets(&mut self) {
        self.abstract_scoped = true;
    }

    /// Makes it strict mode's write domain, allowing writes beneath `paths` only, where the
    /// kernel has ABI 2. Returns the paths it will allow: those that could be opened (one
    /// that does not exist yet is left out, and its writes are performed by the daemon);
    /// none on an older kernel, which then gets the backstop.
    pub fn allow_writes_beneath(&mut self, paths: &[String]) -> Vec<String> {
        if self.abi < ABI_WRITES {
            return Vec::new();
        }
        let mut allowed = Vec::new();
        for p in paths {
            let Ok(c) = std::ffi::CString::new(std::path::Path::new(p).as_os_str().as_bytes())
            else {
                continue;
            };
            // Not through a symlink: the daemon decided on this very path, and one swapped in
            // since would give the domain another place (that path's writes are performed).
            let how = OpenHow {
                flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
                mode: 0,
                resolve: RESOLVE_NO_SYMLINKS,
            };
            // SAFETY: `c` is a live NUL-terminated string and `how` a live `struct open_how`
            // of the size given; O_PATH opens nothing for I/O.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    &how as *const OpenHow,
                    size_of::<OpenHow>(),
                )
            } as i32;
            if fd < 0 {
                continue;
            }
            // SAFETY: `fd` was just returned to us and is owned by nobody else.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let dir = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .is_ok_and(|m| m.is_dir());
            self.rules
                .push((fd, if dir { WRITE_RIGHTS } else { FILE_RIGHTS }));
            allowed.push(p.clone());
        }
        if allowed.is_empty() {
            self.rules.clear();
        }
        allowed
    }
}

/// The kernel's Landlock ABI version; 0 without Landlock.
fn kernel_abi() -> libc::c_long {
    // SAFETY: with a null attribute, size 0 and the VERSION flag, the call reads no memory
    // and returns the ABI version or -1.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

/// Enters `d`: the write domain if it has rules and the kernel takes them all, else the
/// backstop. Needs `no_new_privs` set. Best effort: a kernel that refuses a step gets the
/// next kind down, and the caller hears which it got.
///
/// # Safety
/// Async-signal-safe (only syscalls, no allocation): fit for a forked child.
pub unsafe fn enter(d: &Domain) -> Entered {
    if d.abi < ABI_REFER {
        return Entered::None;
    }
    let scoped = match (d.abi >= ABI_SCOPES, d.abstract_scoped) {
        (true, true) => LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
        (true, false) => LANDLOCK_SCOPE_SIGNAL,
        (false, _) => 0,
    };
    if !d.rules.is_empty() && restrict(WRITE_RIGHTS, scoped, &d.rules, -1) {
        return Entered::Writes;
    }
    // The backstop: with scopes, it handles no file system right; without, it handles only
    // REFER and allows it beneath `/` (without its rule it would deny every cross-directory
    // rename).
    if scoped != 0 {
        return if restrict(0, scoped, &[], -1) {
            Entered::Backstop
        } else {
            Entered::None
        };
    }
    let root = libc::open(c"/".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
    if root < 0 {
        return Entered::None;
    }
    let entered = restrict(ACCESS_FS_REFER, 0, &[], root);
    libc::close(root);
    if entered {
        Entered::Backstop
    } else {
        Entered::None
    }
}

/// Makes a ruleset handling `handled` and `scoped`, with `rules` (and `ACCESS_FS_REFER`
/// beneath `refer_root` if that is a descriptor), and restricts the calling thread with it.
///
/// # Safety
/// Async-signal-safe, as [`enter`].
unsafe fn restrict(handled: u64, scoped: u64, rules: &[(OwnedFd, u64)], refer_root: i32) -> bool {
    let attr = RulesetAttr {
        handled_access_fs: handled,
        handled_access_net: 0,
        scoped,
    };
    let ruleset = libc::syscall(
        libc::SYS_landlock_create_ruleset,
        &attr as *const RulesetAttr,
        size_of::<RulesetAttr>(),
        0,
    );
    if ruleset < 0 {
        return false;
    }
    let add = |fd: i32, access: u64| {
        let rule = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneathAttr,
            0,
        ) == 0
    };
    let mut ok = rules
        .iter()
        .all(|(fd, access)| add(fd.as_raw_fd(), *access));
    if ok && refer_root >= 0 {
        ok = add(refer_root, ACCESS_FS_REFER);
    }
    ok = ok && libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) == 0;
    libc::close(ruleset as libc::c_int);
    ok
}
