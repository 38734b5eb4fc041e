//! The scope a question suggests for lasting answers ([t], [a], [n]): a directory that holds
//! the written path and that a person would recognise as one thing (a tool's cache or config
//! directory, a project), never `$HOME` or `/`; a device is its own. Pure functions over
//! paths. What a tool's own directory is, and where every path is named, is the one rule of
//! `hallpass_proto::places`, which `hallpass suggest` follows too.

use std::path::{Component, Path, PathBuf};

use hallpass_proto::places;

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
    // A device is one thing: `/dev/pts` holds every terminal of the user.
    if places::sensitive(path, home) || path.starts_with("/dev") {
        return path.to_path_buf();
    }
    if let Some(tool) = places::tool_dir(path, home) {
        // `~/.npm/_cacache`: a dot directory of the home is a tool's, and its
        // subdirectories are what it keeps apart; [+] widens to the tool's directory.
        if tool.parent() == Some(home) {
            let mut rest = path.strip_prefix(&tool).unwrap_or(path).components();
            if let (Some(first), Some(_)) = (rest.next(), rest.next()) {
                return tool.join(first);
            }
        }
        return tool;
    }
    let Some(parent) = path.parent() else {
        return path.to_path_buf();
    };
    // A file right in a top-level directory (`/etc/hosts`), in the home, in a container
    // (`~/.cache/x`) or in `/tmp`: its own scope.
    if places::shared(parent, home) {
        return path.to_path_buf();
    }
    // `~/Downloads`, `~/src`: the directory of the home itself; elsewhere, the directory
    // the file is in.
    match path.strip_prefix(home) {
        Ok(rel) if home != Path::new("/") => rel
            .components()
            .next()
            .map_or_else(|| path.to_path_buf(), |first| home.join(first)),
        _ => parent.to_path_buf(),
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
        assert_eq!(
            s("/home/me/.local/state/app/x/y"),
            "/home/me/.local/state/app"
        );
        assert_eq!(s("/var/cache/apt/archives/x"), "/var/cache/apt");
        assert_eq!(s("/var/cache/x"), "/var/cache/x");
        // Where every path is named, the path itself ([+] still widens).
        assert_eq!(
            s("/home/me/.ssh/authorized_keys"),
            "/home/me/.ssh/authorized_keys"
        );
        assert_eq!(s("/home/me/.local/bin/tool"), "/home/me/.local/bin/tool");
        // What the bus, the service manager, Python or git start later (a red team's find).
        for p in [
            "/home/me/.local/share/dbus-1/services/x.service",
            "/home/me/.local/share/systemd/user/x.service",
            "/home/me/.local/lib/python3.11/site-packages/x.pth",
            "/home/me/.config/git/config",
        ] {
            assert_eq!(s(p), p);
        }
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
