//! The credentials of the calling thread alone, as the kernel keeps them per thread: its
//! supplementary groups, effective and file-system user and group, and capabilities. The raw syscalls are
//! used on purpose: glibc's `setgroups` and friends change every thread of the process (they
//! signal each one), and the daemon changes only the thread that performs a write for a
//! process with other credentials than its own (`perform/creds.rs`).

use nix::errno::Errno;

use super::fsops::Sys;

/// Sets this thread's supplementary groups.
pub fn set_groups(groups: &[libc::gid_t]) -> Sys<()> {
    // SAFETY: `groups` is live for `len` elements of the kernel's gid_t.
    let r = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Sets this thread's effective user (the real and saved ones stay, so it can come back).
/// Leaving 0 clears the effective capabilities; coming back to 0 restores them.
pub fn set_euid(uid: libc::uid_t) -> Sys<()> {
    // SAFETY: no memory is passed; -1 leaves the real and saved ids as they are.
    let r = unsafe { libc::syscall(libc::SYS_setresuid, u32::MAX, uid, u32::MAX) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Sets this thread's effective group, as [`set_euid`].
pub fn set_egid(gid: libc::gid_t) -> Sys<()> {
    // SAFETY: no memory is passed; -1 leaves the real and saved ids as they are.
    let r = unsafe { libc::syscall(libc::SYS_setresgid, u32::MAX, gid, u32::MAX) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Sets this thread's file-system user, and says whether it now is `uid` (`setfsuid` cannot
/// report a failure: it returns the previous value either way). Leaving 0 clears the file
/// capabilities from the effective set; coming back to 0 restores them from the permitted.
pub fn set_fsuid(uid: libc::uid_t) -> bool {
    // SAFETY: no memory is passed.
    unsafe {
        libc::syscall(libc::SYS_setfsuid, uid);
        libc::syscall(libc::SYS_setfsuid, u32::MAX) as libc::uid_t == uid
    }
}

/// Sets this thread's file-system group; as [`set_fsuid`].
pub fn set_fsgid(gid: libc::gid_t) -> bool {
    // SAFETY: no memory is passed.
    unsafe {
        libc::syscall(libc::SYS_setfsgid, gid);
        libc::syscall(libc::SYS_setfsgid, u32::MAX) as libc::gid_t == gid
    }
}

/// A thread's capability sets, one bit per capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub effective: u64,
    pub permitted: u64,
    pub inheritable: u64,
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct Header {
    version: u32,
    pid: i32,
}

/// `struct __user_cap_data_struct`; version 3 takes two, the low and high 32 bits.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`.
const VERSION_3: u32 = 0x2008_0522;

/// This thread's capabilities.
pub fn caps() -> Sys<Caps> {
    let mut h = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut d = [Data::default(); 2];
    // SAFETY: a version-3 header and room for the two data structs it asks for.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut h as *mut Header, d.as_mut_ptr()) };
    if r < 0 {
        return Err(Errno::last());
    }
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    Ok(Caps {
        effective: join(d[0].effective, d[1].effective),
        permitted: join(d[0].permitted, d[1].permitted),
        inheritable: join(d[0].inheritable, d[1].inheritable),
    })
}

/// Sets this thread's capabilities (the kernel refuses to raise any beyond the permitted).
pub fn set_caps(c: &Caps) -> Sys<()> {
    let mut h = Header {
        version: VERSION_3,
        pid: 0,
    };
    let split = |v: u64| (v as u32, (v >> 32) as u32);
    let (e, p, i) = (split(c.effective), split(c.permitted), split(c.inheritable));
    let d = [
        Data {
            effective: e.0,
            permitted: p.0,
            inheritable: i.0,
        },
        Data {
            effective: e.1,
            permitted: p.1,
            inheritable: i.1,
        },
    ];
    // SAFETY: a version-3 header and the two data structs it asks for.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut h as *mut Header, d.as_ptr()) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}
