//! `readlinkat(2)` with its buffers on the stack, left uninitialized. The daemon reads links
//! for every write (the target's cwd or descriptor, then each directory on the way, to check
//! it is none), and `std::fs::read_link` allocates a buffer for each, found or not.

use std::ffi::{OsStr, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// `PATH_MAX`, terminating NUL included.
pub const PATH_MAX: usize = libc::PATH_MAX as usize;

/// The target of the symlink `path`, relative to `dir` (the cwd if `None`). `ENAMETOOLONG`
/// for a path of [`PATH_MAX`] bytes or more (the kernel refuses those too) or a target that
/// long, `EINVAL` for a NUL inside the path (or for what is no symlink, as the kernel says).
pub fn read_link_at(dir: Option<BorrowedFd<'_>>, path: &[u8]) -> io::Result<PathBuf> {
    if path.len() >= PATH_MAX {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    if path.contains(&0) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut name = [MaybeUninit::<u8>::uninit(); PATH_MAX];
    for (d, s) in name.iter_mut().zip(path) {
        d.write(*s);
    }
    name[path.len()].write(0);
    let mut out = [MaybeUninit::<u8>::uninit(); PATH_MAX];
    let fd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` holds `path` and a NUL, all written above, and outlives the call; the
    // kernel writes at most `out.len()` bytes into `out`, which is ours to write.
    let n =
        unsafe { libc::readlinkat(fd, name.as_ptr().cast(), out.as_mut_ptr().cast(), out.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    if n >= out.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    // SAFETY: the kernel wrote the first `n` bytes of `out` (readlinkat returned `n`).
    let target = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n) };
    Ok(PathBuf::from(OsString::from(OsStr::from_bytes(target))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_links() {
        let dir = std::env::temp_dir().join(format!("hallpass-readlink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("target/of/it", dir.join("l")).unwrap();
        let long = "x".repeat(PATH_MAX - 1);
        std::os::unix::fs::symlink(&long[..255], dir.join("m")).unwrap();
        let at = |p: &std::path::Path| read_link_at(None, p.as_os_str().as_bytes());
        assert_eq!(at(&dir.join("l")).unwrap(), PathBuf::from("target/of/it"));
        assert_eq!(at(&dir.join("m")).unwrap(), PathBuf::from(&long[..255]));
        let dirfd = std::fs::File::open(&dir).unwrap();
        use std::os::fd::AsFd;
        assert_eq!(
            read_link_at(Some(dirfd.as_fd()), b"l").unwrap(),
            PathBuf::from("target/of/it")
        );
        // Not a link; no such file; a NUL inside; too long.
        let errno = |r: io::Result<PathBuf>| r.unwrap_err().raw_os_error();
        assert_eq!(errno(at(&dir)), Some(libc::EINVAL));
        assert_eq!(errno(at(&dir.join("none"))), Some(libc::ENOENT));
        assert_eq!(errno(read_link_at(None, b"a\0b")), Some(libc::EINVAL));
        assert_eq!(
            errno(read_link_at(None, long.as_bytes())),
            Some(libc::ENAMETOOLONG)
        );
        assert_eq!(
            errno(read_link_at(None, &[b'/'; PATH_MAX])),
            Some(libc::ENAMETOOLONG)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
