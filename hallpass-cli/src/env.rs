//! The launcher's environment and paths: the user's home, `~` in flags, finding a program as
//! execvp(3) would, and the terminals of our standard streams. A leaf: no module of hallpass
//! is used here but the error type.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hallpass_proto::shown::shown;

use crate::error::{ExitCode, Failure};

/// The user's home: `$HOME`, else the password database's, else `/`.
pub fn home_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.dir)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The home directory with its symlinks resolved, as the paths the daemon names are: what
/// is in it, and what is the home itself (never a scope), is told apart on this one.
pub fn real_home_dir() -> PathBuf {
    let home = home_dir();
    std::fs::canonicalize(&home).unwrap_or(home)
}

/// `~` and `~/x` become the home directory; `~user` is left alone.
pub fn expand_tilde(p: &Path, home: &Path) -> PathBuf {
    let b = p.as_os_str().as_bytes();
    if b == b"~" {
        home.to_path_buf()
    } else if let Some(rest) = b.strip_prefix(b"~/") {
        home.join(OsStr::from_bytes(rest))
    } else {
        p.to_path_buf()
    }
}

/// The terminal devices of our standard streams: the session's own terminal.
pub fn tty_paths() -> Vec<String> {
    let mut out = Vec::new();
    for fd in 0..3 {
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            let s = p.to_string_lossy().into_owned();
            if (s.starts_with("/dev/pts/") || s.starts_with("/dev/tty")) && !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// `name` as execvp would find it.
pub fn find_program(name: &OsStr) -> Result<PathBuf, Failure> {
    if name.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(name));
    }
    search_path(name).ok_or_else(|| {
        Failure::with_code(
            format!("{}: command not found", shown(name)),
            ExitCode::NotFound,
        )
    })
}

/// The first executable `name` in `$PATH`.
pub fn search_path(name: &OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde() {
        let h = Path::new("/home/me");
        assert_eq!(expand_tilde(Path::new("~"), h), PathBuf::from("/home/me"));
        assert_eq!(
            expand_tilde(Path::new("~/.cache"), h),
            PathBuf::from("/home/me/.cache")
        );
        assert_eq!(expand_tilde(Path::new("~x/y"), h), PathBuf::from("~x/y"));
        assert_eq!(expand_tilde(Path::new("a/~"), h), PathBuf::from("a/~"));
    }

    #[test]
    fn programs() {
        assert!(search_path(OsStr::new("sh")).is_some());
        assert_eq!(
            find_program(OsStr::new("./x")).unwrap(),
            PathBuf::from("./x")
        );
        assert_eq!(
            find_program(OsStr::new("no-such-program-here"))
                .unwrap_err()
                .code(),
            ExitCode::NotFound
        );
    }
}
