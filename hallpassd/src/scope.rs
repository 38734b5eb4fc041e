//! The scope a question suggests for lasting answers ([t], [a], [n]): a directory that holds
//! the written path and that a person would recognise as one thing (a tool's cache or config
//! directory, a project), never `$HOME` or `/`; a device is its own. Pure functions over
//! paths.

use std::path::{Component, Path, PathBuf};

/// Directories under `$HOME` that hold one directory per tool: the scope goes one level
/// deeper (`~/.cache/pip`, not `~/.cache`).
const CONTAINERS: [&str; 7] = [
    ".cache",
    ".config",
    ".local/share",
    ".local/state",
    ".local/lib",
    ".local/bin",
    ".var/app",
];

/// Shared scratch directories: the scope is the entry right below them.
const SCRATCH: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

fn names(p: &Path) -> Vec<&std::ffi::OsStr> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// `base` joined with the first `n` of `rest` (fewer if `rest` is shorter, the scope being
/// a directory above `path`), or `path` itself when that would be shallower than `min`.
fn take(base: &Path, rest: &[&std::ffi::OsStr], n: usize, min: usize, path: &Path) -> PathBuf {
    let n = n.min(rest.len().saturating_sub(1));
    if n == 0 || n < min {
        return path.to_path_buf();
    }
    let mut out = base.to_path_buf();
    out.extend(&rest[..n]);
    out
}

/// The suggested scope for a write to `path` (absolute, resolved) by a user whose home is
/// `home`: never `home` or above it (narrowed toward `path` until it is not).
pub fn suggest(path: &Path, home: &Path) -> PathBuf {
    let mut s = suggest_any(path, home);
    while crate::policy::is_within(home, &s) && s != path {
        let Some(next) = path
            .strip_prefix(&s)
            .ok()
            .and_then(|rest| rest.components().next())
        else {
            break;
        };
        s.push(next);
    }
    s
}

fn suggest_any(path: &Path, home: &Path) -> PathBuf {
    if home != Path::new("/") {
        if let Ok(rel) = path.strip_prefix(home) {
            let rest = names(rel);
            for c in CONTAINERS {
                let depth = names(Path::new(c)).len();
                if rel.starts_with(c) {
                    return take(home, &rest, depth + 1, depth + 1, path);
                }
            }
            // `~/.npm/_cacache`: a dot directory is a tool's, and its subdirectories are
            // what it keeps apart; `~/Downloads`, `~/src`: the directory itself.
            let dot = rest
                .first()
                .is_some_and(|n| n.as_encoded_bytes()[0] == b'.');
            return take(home, &rest, if dot { 2 } else { 1 }, 1, path);
        }
    }
    for s in SCRATCH {
        if let Ok(rel) = path.strip_prefix(s) {
            return take(Path::new(s), &names(rel), 1, 1, path);
        }
    }
    // A device is one thing: `/dev/pts` holds every terminal of the user.
    if path.starts_with("/dev") {
        return path.to_path_buf();
    }
    // Elsewhere: the directory the file is in, unless that is a top-level one (`/etc`).
    match path.parent() {
        Some(parent) if names(parent).len() >= 2 => parent.to_path_buf(),
        _ => path.to_path_buf(),
    }
}

/// Whether `scope` may be used for a lasting answer about `path`: the path itself or a
/// directory above it, absolute, and neither `/` nor `home` nor a directory above `home`
/// (allowing all of a home is not a scope, it is no supervision).
pub fn fits(scope: &Path, path: &Path, home: &Path) -> bool {
    scope.is_absolute()
        && scope != Path::new("/")
        && !scope
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        && crate::policy::is_within(path, scope)
        && !crate::policy::is_within(home, scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(p: &str) -> String {
        suggest(Path::new(p), Path::new("/home/me"))
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn suggestions() {
        assert_eq!(s("/home/me/.npm/_cacache/tmp/x"), "/home/me/.npm/_cacache");
        assert_eq!(s("/home/me/.npm/x"), "/home/me/.npm");
        assert_eq!(s("/home/me/.cache/pip/http/a/b"), "/home/me/.cache/pip");
        assert_eq!(
            s("/home/me/.local/share/app/db"),
            "/home/me/.local/share/app"
        );
        assert_eq!(s("/home/me/.config/gh/hosts.yml"), "/home/me/.config/gh");
        // Never $HOME itself: a file directly in it is its own scope.
        assert_eq!(s("/home/me/.bashrc"), "/home/me/.bashrc");
        assert_eq!(s("/home/me/.cache/x"), "/home/me/.cache/x");
        assert_eq!(s("/home/me/src/other/main.rs"), "/home/me/src");
        assert_eq!(s("/tmp/build-1/a/b"), "/tmp/build-1");
        assert_eq!(s("/tmp/f"), "/tmp/f");
        // Never /: a file in a top-level directory is its own scope.
        assert_eq!(s("/etc/hosts"), "/etc/hosts");
        assert_eq!(s("/usr/local/lib/x.so"), "/usr/local/lib");
        assert_eq!(s("/x"), "/x");
        // A device, a terminal: itself, never all of `/dev/pts`.
        assert_eq!(s("/dev/pts/3"), "/dev/pts/3");
        assert_eq!(s("/dev/snd/pcmC0D0p"), "/dev/snd/pcmC0D0p");
        // Not the home directory, nor what holds it.
        assert_eq!(s("/home/me"), "/home/me");
        assert_eq!(s("/home/x/y"), "/home/x");
        let h = Path::new("/tmp/t/home");
        assert_eq!(
            suggest(Path::new("/tmp/t/out/a/b"), h),
            PathBuf::from("/tmp/t/out")
        );
        // A home of / changes nothing.
        assert_eq!(
            suggest(Path::new("/var/lib/a/b"), Path::new("/")),
            PathBuf::from("/var/lib/a")
        );
    }

    #[test]
    fn scopes_that_fit() {
        let p = Path::new("/home/me/.npm/_cacache/x");
        let fits = |s: &str, p: &Path| fits(Path::new(s), p, Path::new("/home/me"));
        assert!(fits("/home/me/.npm", p));
        assert!(fits("/home/me/.npm/_cacache/x", p));
        assert!(!fits("/home/me", p));
        assert!(!fits("/home", p));
        assert!(!fits("/", p));
        assert!(!fits("/home/me/.np", p));
        assert!(!fits("/home/me/.npm/_cacache/x/y", p));
        assert!(!fits("home/me", p));
        assert!(!fits("/home/me/../me", p));
        assert!(fits("/tmp/a", Path::new("/tmp/a/b")));
    }
}
