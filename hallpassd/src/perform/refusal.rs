//! Writes the kernel refuses anyway. A user's `touch /etc/x` fails natively with `EACCES`:
//! nobody should be asked about it, nor should audit mode log it as a write it let through.
//! Before a write is asked (or decided by `--prompt=allow|deny`), the daemon asks the kernel
//! what it checks first, with the process's own credentials (`faccessat2` with `AT_EACCESS`,
//! `creds.rs`): may it look the name up in its directory, add or remove a name there, write
//! the file, and is the file system read-only. Where the kernel says no (`EACCES`, `EPERM`,
//! `EROFS`), the daemon fails the call with that errno itself, unasked, logged with reason
//! `refused`. A change of a file that is not there (its mode, times, removal) fails with
//! `ENOENT` at once, and an exclusive create of one that is with `EEXIST`, as a `mkdir` of a
//! directory that is there does.
//!
//! Never a `CONTINUE` on the strength of it: if the permissions change between the check
//! and the call, the worst that happens is a write refused that would have succeeded a
//! moment later, never a write made unasked. Each check is of one directory or file itself,
//! from a descriptor of its directory, so a process that reached it by a way the daemon
//! cannot take (a directory descriptor below one it may not search) is not refused for
//! that; where the daemon cannot take on the process's credentials, or the answer is
//! anything else, nothing is refused and the write is decided as before.

use std::ffi::CString;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;

use crate::sys::fsops;
use crate::syscalls::change::{changes_metadata, open_flags};
use crate::syscalls::{Kind, Syscall, O_CREAT, O_EXCL};

/// What the kernel checks first for a write, which the daemon can ask it ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing asked ahead: a rename or link (the kernel checks other things first, such
    /// as two mounts), a connection, an ioctl, an `openat2` (its flags are in memory).
    Nothing,
    /// An open: it writes the file if it is there (`write`: for writing, or `O_TRUNC`), or
    /// creates it if not (`create`); with `excl` (`O_CREAT|O_EXCL`), a file there fails it
    /// with `EEXIST` first.
    Open {
        create: bool,
        excl: bool,
        write: bool,
    },
    /// `O_TMPFILE`: a file in the directory the path names.
    InDir,
    /// A new name (`mkdir`, `mknod`, `symlink`): its directory must take it. A name that is
    /// there already fails with `EEXIST` first.
    Create,
    /// Removes the name (`unlink`, `rmdir`): its directory must let it go.
    Remove,
    /// Writes the file's content (`truncate`).
    Write,
    /// Changes its mode, owner, times or extended attributes: the owner may, whatever the
    /// mode says, so only a read-only file system is told.
    Metadata,
}

/// `__O_TMPFILE` (`include/uapi/asm-generic/fcntl.h`).
const O_TMPFILE: u32 = 0o20_000_000;

/// What to ask ahead for `sc` called with `args` on one path.
pub fn check(sc: &Syscall, args: &[u64; 6]) -> Check {
    if let Some(f) = open_flags(sc, args) {
        if f & O_TMPFILE != 0 {
            return Check::InDir;
        }
        let write = f & libc::O_ACCMODE as u32 != 0 || f & libc::O_TRUNC as u32 != 0;
        let create = f & O_CREAT != 0;
        return Check::Open {
            create,
            excl: create && f & O_EXCL != 0,
            write,
        };
    }
    match sc.kind {
        Kind::Mknod { .. } => return Check::Create,
        Kind::Paths(_) | Kind::Utimensat(_) | Kind::FdMeta { .. } => {}
        _ => return Check::Nothing,
    }
    match sc.name {
        "mkdir" | "mkdirat" | "symlink" | "symlinkat" => Check::Create,
        "unlink" | "unlinkat" | "rmdir" => Check::Remove,
        "truncate" => Check::Write,
        name if changes_metadata(name) => Check::Metadata,
        _ => Check::Nothing,
    }
}

/// The errno the kernel would fail thread `tid`'s write of `path` (absolute and resolved)
/// with, by what [`check`] said to ask: `EACCES`, `EPERM` or `EROFS` where the process may
/// not make it, `ENOENT` where it changes a file that is not there, `EEXIST` where it must
/// create one that is; `None` when it would not fail, or that cannot be told.
pub fn refused(check: Check, path: &Path, tid: i32) -> Option<i32> {
    // A file reached through a descriptor after its name was removed is named so by the
    // kernel: its name says nothing of it (a red team's find: `fchmod` of an unlinked
    // temporary file failed with ENOENT, where it succeeds natively). Asked as before.
    if check == Check::Nothing || path.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") {
        return None;
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return None;
    };
    let dir = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let name = CString::new(name.as_bytes()).ok()?;
    crate::perform::creds::as_process(tid, || {
        // Held as the process would look it up; one it may not reach is not told.
        let dir = fsops::open_path(None, &dir, false).ok()?;
        ask(check, dir.as_fd(), &name)
    })
    .flatten()
}

/// [`refused`], on this thread as the process: `name` in the directory `dir`.
fn ask(check: Check, dir: std::os::fd::BorrowedFd<'_>, name: &std::ffi::CStr) -> Option<i32> {
    const WX: i32 = libc::W_OK | libc::X_OK;
    let here = c"";
    // A name in a directory the process may not search cannot be looked up at all.
    let exists = match fsops::access(dir, name, libc::F_OK, true) {
        Ok(()) => true,
        Err(Errno::ENOENT) => false,
        Err(Errno::EACCES) => return Some(libc::EACCES),
        Err(_) => return None,
    };
    // A change of a file that is not there: the kernel's own answer, at once (`touch`
    // sets the times of the file its open could not create).
    let changes_what_is_there = matches!(
        check,
        Check::Open { create: false, .. } | Check::Write | Check::Remove | Check::Metadata
    );
    if changes_what_is_there && !exists {
        return Some(libc::ENOENT);
    }
    if matches!(check, Check::Open { excl: true, .. }) && exists {
        return Some(libc::EEXIST);
    }
    let verdict = match (check, exists) {
        // A symlink is writable to all: only a file itself may refuse.
        (Check::Open { write: true, .. }, true) | (Check::Write, true) => {
            fsops::access(dir, name, libc::W_OK, true)
        }
        (Check::Open { create: true, .. } | Check::Create, false) | (Check::Remove, true) => {
            fsops::access(dir, here, WX, false)
        }
        (Check::InDir, true) => fsops::access(dir, name, WX, false),
        (Check::Metadata, true) => match fsops::access(dir, name, libc::W_OK, true) {
            Err(Errno::EROFS) => Err(Errno::EROFS),
            _ => Ok(()),
        },
        _ => Ok(()),
    };
    match verdict {
        Err(e @ (Errno::EACCES | Errno::EPERM | Errno::EROFS)) => Some(e as i32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscalls::TABLE;
    use std::os::unix::process::CommandExt;

    fn sc(name: &str) -> &'static Syscall {
        TABLE.iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn what_is_asked_ahead() {
        let openat = |flags: i32| check(sc("openat"), &[0, 0, flags as u64, 0, 0, 0]);
        let wr = libc::O_WRONLY;
        assert_eq!(
            openat(wr | libc::O_CREAT),
            Check::Open {
                create: true,
                excl: false,
                write: true,
            }
        );
        assert_eq!(
            openat(libc::O_RDONLY | libc::O_CREAT | libc::O_EXCL),
            Check::Open {
                create: true,
                excl: true,
                write: false,
            }
        );
        assert_eq!(
            openat(libc::O_RDONLY | libc::O_TRUNC | libc::O_EXCL),
            Check::Open {
                create: false,
                excl: false,
                write: true,
            }
        );
        assert_eq!(openat(libc::O_RDWR | libc::O_TMPFILE), Check::InDir);
        assert_eq!(check(sc("openat2"), &[0; 6]), Check::Nothing);
        assert_eq!(check(sc("mkdirat"), &[0; 6]), Check::Create);
        assert_eq!(check(sc("mknodat"), &[0; 6]), Check::Create);
        assert_eq!(check(sc("symlinkat"), &[0; 6]), Check::Create);
        assert_eq!(check(sc("unlinkat"), &[0; 6]), Check::Remove);
        assert_eq!(check(sc("rmdir"), &[0; 6]), Check::Remove);
        assert_eq!(check(sc("truncate"), &[0; 6]), Check::Write);
        for meta in ["fchownat", "utimensat", "fchmod", "setxattr"] {
            assert_eq!(check(sc(meta), &[0; 6]), Check::Metadata, "{meta}");
        }
        for other in ["renameat2", "linkat", "ioctl", "connect", "file_setattr"] {
            assert_eq!(check(sc(other), &[0; 6]), Check::Nothing, "{other}");
        }
    }

    /// The kernel's own answers, asked as this test's thread, and (as root) as a process
    /// of another user, whose credentials the check takes on.
    #[test]
    fn the_kernel_says() {
        use std::os::unix::fs::PermissionsExt;
        let me = nix::unistd::gettid().as_raw();
        let dir = std::env::temp_dir().join(format!("hallpass-refusal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mode = |p: &Path, m: u32| std::fs::set_permissions(p, PermissionsExt::from_mode(m));
        mode(&dir, 0o755).unwrap();
        let open = Check::Open {
            create: true,
            excl: false,
            write: true,
        };
        // A change of what is not there fails as it would.
        let missing = dir.join("missing");
        assert_eq!(refused(Check::Metadata, &missing, me), Some(libc::ENOENT));
        assert_eq!(refused(Check::Remove, &missing, me), Some(libc::ENOENT));
        let plain_open = Check::Open {
            create: false,
            excl: false,
            write: true,
        };
        assert_eq!(refused(plain_open, &missing, me), Some(libc::ENOENT));
        // A file whose name was removed, reached through a descriptor: not told by a name.
        let deleted = dir.join("tmp (deleted)");
        assert_eq!(refused(Check::Metadata, &deleted, me), None);
        assert_eq!(refused(plain_open, &deleted, me), None);
        // An exclusive create of what is there fails as it would, whatever the mode.
        let excl = Check::Open {
            create: true,
            excl: true,
            write: true,
        };
        assert_eq!(refused(excl, &dir, me), Some(libc::EEXIST));
        // A directory of one's own takes new names.
        assert_eq!(refused(open, &dir.join("new"), me), None);
        assert_eq!(refused(Check::Create, &dir.join("new"), me), None);
        assert_eq!(refused(Check::Nothing, Path::new("/nowhere/x"), me), None);
        // A file there, not writable; a directory not writable; one not searchable.
        let ro = dir.join("ro");
        std::fs::write(&ro, "").unwrap();
        mode(&ro, 0o444).unwrap();
        let locked = dir.join("locked");
        std::fs::create_dir(&locked).unwrap();
        mode(&locked, 0o555).unwrap();
        let closed = dir.join("closed");
        std::fs::create_dir(&closed).unwrap();
        mode(&closed, 0o700).unwrap();
        // The owner may change the mode whatever it says.
        assert_eq!(refused(Check::Metadata, &ro, me), None);
        if nix::unistd::geteuid().is_root() {
            // Root may: nothing refused.
            assert_eq!(refused(open, &ro, me), None);
            assert_eq!(refused(open, &locked.join("x"), me), None);
            // Another user may not, and is refused as the kernel would refuse it.
            let mut other = std::process::Command::new("sleep")
                .arg("30")
                .uid(65534)
                .gid(65534)
                .spawn()
                .unwrap();
            let pid = other.id() as i32;
            let eacces = Some(libc::EACCES);
            assert_eq!(refused(open, &ro, pid), eacces, "a file not writable");
            assert_eq!(refused(Check::Write, &ro, pid), eacces);
            assert_eq!(refused(open, &locked.join("x"), pid), eacces, "no new name");
            assert_eq!(refused(Check::Create, &locked.join("x"), pid), eacces);
            assert_eq!(refused(Check::Remove, &ro, pid), eacces, "no name removed");
            assert_eq!(refused(open, &closed.join("x"), pid), eacces, "no lookup");
            // Not the owner: the mode is no sign.
            assert_eq!(refused(Check::Metadata, &ro, pid), None);
            // A file it may write is not refused.
            let rw = dir.join("rw");
            std::fs::write(&rw, "").unwrap();
            mode(&rw, 0o666).unwrap();
            assert_eq!(refused(open, &rw, pid), None);
            // This thread took back its own credentials.
            assert_eq!(refused(open, &ro, me), None);
            let _ = other.kill();
            let _ = other.wait();
        } else {
            eprintln!("skipped: the checks as another user need root");
            assert_eq!(refused(open, &ro, me), Some(libc::EACCES));
        }
        let _ = mode(&locked, 0o755);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
