//! What a write does to the file it names, from the syscall, its flags and whether the file
//! is there: the [`Change`] a question names (`wants to create`, `wants to change the owner
//! of`), and the [`Family`] that says which calls may follow an answer unasked
//! (`burst.rs`). Pure: the caller says whether the file is there.

use hallpass_proto::Change;

use super::{Kind, Syscall, O_CREAT};

/// `AT_REMOVEDIR` (`include/uapi/linux/fcntl.h`): `unlinkat` removes a directory.
const AT_REMOVEDIR: u64 = 0x200;
/// `RENAME_EXCHANGE` (`include/uapi/linux/fs.h`): `renameat2` swaps the two names.
const RENAME_EXCHANGE: u64 = 1 << 1;
/// `__O_TMPFILE` (`include/uapi/asm-generic/fcntl.h`, without `O_DIRECTORY`).
const O_TMPFILE: u32 = 0o20_000_000;

/// The open flags of `sc` called with `args`: `creat`'s own, `None` for `openat2` (they are
/// in memory) and for every call that is no open.
pub fn open_flags(sc: &Syscall, args: &[u64; 6]) -> Option<u32> {
    match sc.kind {
        Kind::Open { flags: Some(f), .. } => Some(args[f as usize] as u32),
        Kind::Open { flags: None, .. } => {
            Some(O_CREAT | libc::O_WRONLY as u32 | libc::O_TRUNC as u32)
        }
        _ => None,
    }
}

/// Which of a two-path call's paths a question shows: the first (the source of a rename,
/// the file a link names), the second only, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    First,
    Second,
    Both,
}

/// What `sc` called with `args` does to its path `path`; `exists` says whether that file is
/// there (asked only for an open that may create it).
pub fn change(
    sc: &Syscall,
    args: &[u64; 6],
    path: &str,
    shown: Shown,
    exists: impl FnOnce() -> bool,
) -> Change {
    match sc.kind {
        Kind::Open { .. } | Kind::Openat2 { .. } => open_change(open_flags(sc, args), exists),
        Kind::Mknod { .. } | Kind::Bind { .. } => Change::Create,
        Kind::Connect { .. } => Change::Connect,
        Kind::Send { .. } => Change::Send,
        Kind::Ioctl { .. } if is_terminal(path) => Change::Terminal,
        Kind::Ioctl { .. } => Change::Write,
        _ => by_name(sc.name, args, shown),
    }
}

/// An open: it creates a file that is not there if it may (`O_CREAT`), else writes it.
/// `openat2`'s flags are in memory: a file that is not there is created (an open without
/// `O_CREAT` of one fails).
fn open_change(flags: Option<u32>, exists: impl FnOnce() -> bool) -> Change {
    match flags {
        Some(f) if f & O_TMPFILE != 0 => Change::Tmpfile,
        Some(f) if f & O_CREAT == 0 => Change::Write,
        _ if exists() => Change::Write,
        _ => Change::Create,
    }
}

/// The calls on paths, by name.
fn by_name(name: &str, args: &[u64; 6], shown: Shown) -> Change {
    let second = shown == Shown::Second;
    match name {
        "mkdir" | "mkdirat" => Change::MakeDir,
        "rmdir" => Change::RemoveDir,
        "unlinkat" if args[2] & AT_REMOVEDIR != 0 => Change::RemoveDir,
        "unlink" | "unlinkat" => Change::Remove,
        "renameat2" if args[4] & RENAME_EXCHANGE != 0 => Change::Exchange,
        "rename" | "renameat" | "renameat2" if second => Change::RenameTo,
        "rename" | "renameat" | "renameat2" => Change::Rename,
        "link" | "linkat" if second => Change::LinkTo,
        "link" | "linkat" => Change::Link,
        "symlink" | "symlinkat" => Change::Symlink,
        "truncate" => Change::Truncate,
        "chmod" | "fchmod" | "fchmodat" | "fchmodat2" => Change::Mode,
        "chown" | "lchown" | "fchown" | "fchownat" => Change::Owner,
        "utime" | "utimes" | "futimesat" | "utimensat" => Change::Times,
        "setxattr" | "lsetxattr" | "fsetxattr" | "setxattrat" | "removexattr" | "lremovexattr"
        | "fremovexattr" | "removexattrat" => Change::Xattr,
        "file_setattr" => Change::Flags,
        _ => Change::Write,
    }
}

/// Whether `p` names a terminal, whose ioctls change its settings.
fn is_terminal(p: &str) -> bool {
    p.starts_with("/dev/pts/") || p.starts_with("/dev/tty") || p == "/dev/console"
}

/// What a call does to the one file it names, as far as the calls that may follow an answer
/// about it are concerned (`burst.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Writes its content: an open for writing (creating it maybe), `truncate`.
    Content,
    /// Sets its times: what follows a write (`touch`, `cp -p`), and gives nothing away.
    /// Its mode, owner and extended attributes are asked every time: a write answered once
    /// must not also make the file setuid, someone else's or a capability's holder.
    Metadata,
    /// Makes it, a directory.
    Directory,
    /// Anything else: names (remove, rename, link), devices, inode flags, ioctls,
    /// connections.
    Other,
}

/// Whether the syscall called `name` changes a file's mode, owner, times or extended
/// attributes (and nothing else).
pub fn changes_metadata(name: &str) -> bool {
    matches!(
        name,
        "chmod"
            | "fchmod"
            | "fchmodat"
            | "fchmodat2"
            | "chown"
            | "lchown"
            | "fchown"
            | "fchownat"
            | "utime"
            | "utimes"
            | "futimesat"
            | "utimensat"
            | "setxattr"
            | "lsetxattr"
            | "fsetxattr"
            | "setxattrat"
            | "removexattr"
            | "lremovexattr"
            | "fremovexattr"
            | "removexattrat"
    )
}

/// The [`Family`] of the syscall called `name`.
pub fn family(name: &str) -> Family {
    match name {
        "open" | "openat" | "creat" | "openat2" | "truncate" => Family::Content,
        "utime" | "utimes" | "futimesat" | "utimensat" => Family::Metadata,
        "mkdir" | "mkdirat" => Family::Directory,
        _ => Family::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscalls::TABLE;

    fn sc(name: &str) -> &'static Syscall {
        TABLE.iter().find(|s| s.name == name).unwrap()
    }

    fn of(name: &str, args: [u64; 6], shown: Shown, exists: bool) -> Change {
        change(sc(name), &args, "/x/f", shown, || exists)
    }

    const WR: u64 = libc::O_WRONLY as u64;
    const CREAT: u64 = O_CREAT as u64;
    const TRUNC: u64 = libc::O_TRUNC as u64;

    #[test]
    fn an_open_creates_only_what_is_not_there() {
        let openat =
            |flags: u64, exists| of("openat", [0, 0, flags, 0, 0, 0], Shown::First, exists);
        assert_eq!(openat(WR | CREAT, false), Change::Create);
        assert_eq!(openat(WR | CREAT, true), Change::Write);
        assert_eq!(openat(WR | TRUNC, false), Change::Write);
        assert_eq!(openat(WR, true), Change::Write);
        assert_eq!(openat(WR | u64::from(O_TMPFILE), true), Change::Tmpfile);
        // creat: O_CREAT|O_WRONLY|O_TRUNC, whatever its arguments.
        assert_eq!(of("creat", [0; 6], Shown::First, false), Change::Create);
        assert_eq!(of("creat", [0; 6], Shown::First, true), Change::Write);
        // openat2's flags are in memory: by the file.
        assert_eq!(of("openat2", [0; 6], Shown::First, false), Change::Create);
        assert_eq!(of("openat2", [0; 6], Shown::First, true), Change::Write);
        // The file is looked at only when it matters.
        let asked = std::cell::Cell::new(false);
        change(
            sc("openat"),
            &[0, 0, WR, 0, 0, 0],
            "/x",
            Shown::First,
            || {
                asked.set(true);
                true
            },
        );
        assert!(!asked.get());
    }

    #[test]
    fn names_say_which_side_is_asked() {
        let both = Shown::Both;
        assert_eq!(of("renameat2", [0; 6], both, true), Change::Rename);
        assert_eq!(of("renameat2", [0; 6], Shown::First, true), Change::Rename);
        assert_eq!(of("rename", [0; 6], Shown::Second, true), Change::RenameTo);
        let exchange = [0, 0, 0, 0, RENAME_EXCHANGE, 0];
        assert_eq!(of("renameat2", exchange, both, true), Change::Exchange);
        assert_eq!(of("linkat", [0; 6], both, true), Change::Link);
        assert_eq!(of("linkat", [0; 6], Shown::Second, true), Change::LinkTo);
        assert_eq!(of("symlinkat", [0; 6], both, true), Change::Symlink);
        assert_eq!(of("unlinkat", [0; 6], both, true), Change::Remove);
        let dir = [0, 0, AT_REMOVEDIR, 0, 0, 0];
        assert_eq!(of("unlinkat", dir, both, true), Change::RemoveDir);
        assert_eq!(of("rmdir", [0; 6], both, true), Change::RemoveDir);
        assert_eq!(of("mkdirat", [0; 6], both, false), Change::MakeDir);
        assert_eq!(of("mknodat", [0; 6], both, false), Change::Create);
    }

    #[test]
    fn metadata_is_named() {
        let one = |name| of(name, [0; 6], Shown::First, true);
        for (names, want) in [
            (
                &["chmod", "fchmod", "fchmodat", "fchmodat2"][..],
                Change::Mode,
            ),
            (&["chown", "lchown", "fchown", "fchownat"], Change::Owner),
            (
                &["utime", "utimes", "futimesat", "utimensat"],
                Change::Times,
            ),
            (&["setxattr", "fsetxattr", "removexattrat"], Change::Xattr),
            (&["truncate"], Change::Truncate),
            (&["file_setattr"], Change::Flags),
        ] {
            for n in names {
                assert_eq!(one(n), want, "{n}");
            }
        }
        let ioctl = |path| change(sc("ioctl"), &[0; 6], path, Shown::First, || true);
        assert_eq!(ioctl("/dev/pts/3"), Change::Terminal);
        assert_eq!(ioctl("/home/u/f"), Change::Write);
        assert_eq!(one("connect"), Change::Connect);
        assert_eq!(one("sendmsg"), Change::Send);
    }

    /// Every write in the table is of a family or named as `Other` on purpose: a new
    /// metadata call added to the table without a family would ask after an answer.
    #[test]
    fn families() {
        assert_eq!(family("openat"), Family::Content);
        assert_eq!(family("truncate"), Family::Content);
        assert_eq!(family("fchownat"), Family::Other);
        assert_eq!(family("utimensat"), Family::Metadata);
        assert_eq!(family("mkdirat"), Family::Directory);
        for other in [
            "unlinkat",
            "renameat2",
            "linkat",
            "mknodat",
            "ioctl",
            "file_setattr",
        ] {
            assert_eq!(family(other), Family::Other, "{other}");
        }
        // Every call of the table that sets times is named as such, and in the family; no
        // change of mode, owner or extended attributes is (a red team's find: a write
        // answered once also made the file setuid, root's, a capability's holder).
        for s in TABLE {
            let change = by_name(s.name, &[0; 6], Shown::First);
            if matches!(s.kind, Kind::Pass) {
                continue;
            }
            match change {
                Change::Times => assert_eq!(family(s.name), Family::Metadata, "{}", s.name),
                Change::Mode | Change::Owner | Change::Xattr => {
                    assert_eq!(family(s.name), Family::Other, "{}", s.name)
                }
                _ => {}
            }
        }
    }
}
