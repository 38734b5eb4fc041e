//! What a directory is to the tools that write in it, the one rule for the natural scope of
//! a grant: the daemon's suggested scope for a lasting answer (`hallpassd/src/scope.rs`) and
//! the flags `hallpass suggest` prints (`hallpass-cli/src/suggest.rs`) both start from
//! [`tool_dir`].
//!
//! - Containers hold one directory per tool: `~/.cache`, `~/.config`, `~/.local/share`,
//!   `~/.local/state`, ... and, outside the home, the shared scratch and cache directories
//!   (`/tmp`, `/var/tmp`, `/dev/shm`, `/var/cache`). A tool's own directory is the entry
//!   right below one (`~/.cache/pip`, `/tmp/build-1`); a dot directory of the home is one
//!   too (`~/.npm`, `~/.claude`).
//! - Sensitive directories (`~/.ssh`, `~/.config/systemd`, `~/.local/bin`, ...) hold what
//!   grants access or runs later: nothing in them is a tool's, every path is worth a
//!   question of its own.
//! - A grant never covers `/`, the home or a directory above it, or a container: that would
//!   be every tool's.

use std::path::{Component, Path, PathBuf};

/// Directories of the home that hold one directory per tool, the deepest first.
pub const CONTAINERS: &[&str] = &[
    ".local/share",
    ".local/state",
    ".local/lib",
    ".var/app",
    ".cache",
    ".config",
    ".local",
];

/// Directories outside the home that hold one directory per tool or run.
pub const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "/var/cache"];

/// Directories of the home where every path is named, never the directory.
pub const SENSITIVE: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".pki",
    ".password-store",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".local/share/applications",
    ".local/bin",
    // What the session bus and the user's service manager start, Python's user site
    // (`.pth` files run at every start), git's own configuration (hooks, fsmonitor).
    ".local/share/dbus-1",
    ".local/share/systemd",
    ".local/lib",
    ".config/git",
];

/// Whether `p` is `dir` or below it, by whole components.
fn within(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// Whether `path` is in a sensitive directory of `home`, or is one.
pub fn sensitive(path: &Path, home: &Path) -> bool {
    path.strip_prefix(home)
        .is_ok_and(|rel| SENSITIVE.iter().any(|s| within(rel, Path::new(s))))
}

/// Whether a grant of all of `dir` would cover what is not one tool's: `/`, a top-level
/// directory (`/usr`), `home` or a directory above it, a container.
pub fn shared(dir: &Path, home: &Path) -> bool {
    let depth = dir
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    depth <= 1
        || within(home, dir)
        || CONTAINERS.iter().any(|c| dir == home.join(c))
        || SCRATCH.iter().any(|s| dir == Path::new(s))
}

/// The tool's own directory that holds `path` (strictly below it): the entry right below a
/// container or a scratch directory, or a dot directory of the home. `None` in a sensitive
/// directory, and for a path with no such directory above it.
pub fn tool_dir(path: &Path, home: &Path) -> Option<PathBuf> {
    if home != Path::new("/") {
        if let Ok(rel) = path.strip_prefix(home) {
            if sensitive(path, home) {
                return None;
            }
            for c in CONTAINERS {
                if let Ok(inner) = rel.strip_prefix(c) {
                    return below(&home.join(c), inner);
                }
            }
            let first = rel.components().next()?;
            let dot = first.as_os_str().as_encoded_bytes().first() == Some(&b'.');
            return if dot { below(home, rel) } else { None };
        }
    }
    SCRATCH
        .iter()
        .find_map(|s| below(Path::new(s), path.strip_prefix(s).ok()?))
}

/// `base` joined with the first component of `inner`, if `inner` has more than one.
fn below(base: &Path, inner: &Path) -> Option<PathBuf> {
    let mut it = inner.components();
    let first = it.next()?;
    it.next()?;
    Some(base.join(first))
}

/// Whether `dir` is itself a tool's own directory (`~/.cache/pip`, `~/.npm`, `/tmp/x`).
pub fn is_tool_dir(dir: &Path, home: &Path) -> bool {
    tool_dir(&dir.join("x"), home).as_deref() == Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(p: &str) -> Option<String> {
        tool_dir(Path::new(p), Path::new("/home/me")).map(|d| d.display().to_string())
    }

    #[test]
    fn tool_dirs() {
        let t = |p| tool(p).unwrap_or_default();
        assert_eq!(t("/home/me/.npm/_cacache/tmp/x"), "/home/me/.npm");
        assert_eq!(t("/home/me/.cache/pip/http/a"), "/home/me/.cache/pip");
        assert_eq!(
            t("/home/me/.cache/agentx/models/m"),
            "/home/me/.cache/agentx"
        );
        assert_eq!(t("/home/me/.config/gh/hosts.yml"), "/home/me/.config/gh");
        assert_eq!(
            t("/home/me/.local/share/app/db"),
            "/home/me/.local/share/app"
        );
        assert_eq!(
            t("/home/me/.local/state/app/log"),
            "/home/me/.local/state/app"
        );
        assert_eq!(t("/home/me/.local/foo/x"), "/home/me/.local/foo");
        assert_eq!(t("/tmp/build-1/a"), "/tmp/build-1");
        assert_eq!(t("/var/cache/apt/archives/x"), "/var/cache/apt");
        // Strictly below: a file right in a container, or in the home, has none.
        for p in [
            "/home/me/.cache/x",
            "/home/me/.bashrc",
            "/home/me/src/a/b",
            "/tmp/f",
            "/etc/x/y",
            "/home/me/.ssh/authorized_keys",
            "/home/me/.local/bin/tool",
            "/home/me/.config/systemd/user/x.service",
        ] {
            assert_eq!(tool(p), None, "{p}");
        }
        assert!(is_tool_dir(
            Path::new("/home/me/.cache/agentx"),
            Path::new("/home/me")
        ));
        assert!(is_tool_dir(
            Path::new("/home/me/.claude"),
            Path::new("/home/me")
        ));
        assert!(!is_tool_dir(
            Path::new("/home/me/.cache"),
            Path::new("/home/me")
        ));
        assert!(!is_tool_dir(
            Path::new("/home/me/.ssh"),
            Path::new("/home/me")
        ));
    }

    #[test]
    fn shared_dirs() {
        let h = Path::new("/home/me");
        for d in [
            "/",
            "/usr",
            "/home",
            "/home/me",
            "/home/me/.cache",
            "/home/me/.local",
            "/home/me/.local/share",
            "/tmp",
            "/var/cache",
        ] {
            assert!(shared(Path::new(d), h), "{d}");
        }
        for d in ["/home/me/.cache/x", "/home/me/work", "/opt/x", "/tmp/x"] {
            assert!(!shared(Path::new(d), h), "{d}");
        }
        assert!(sensitive(Path::new("/home/me/.ssh"), h));
        assert!(sensitive(Path::new("/home/me/.ssh/a"), h));
        assert!(!sensitive(Path::new("/home/me/.sshx"), h));
    }
}
