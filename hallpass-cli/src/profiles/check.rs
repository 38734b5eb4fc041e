//! What a profile entry may be: once expanded, never the whole home directory or a directory
//! above it, no `..`, and a `*` only where it cannot stand for every name of the home
//! directory; nor may a tool's directory variable it starts with name the home directory.
//! An ask entry only needs to be a path: asking about more is never unsafe.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use hallpass_proto::pattern::Pattern;

/// Whether a name of `path` holds a `*`: the entry is a pattern, not a plain path.
pub fn is_pattern(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if n.as_bytes().contains(&b'*')))
}

/// The names of `path` before the first that holds a `*` (all of it, if none does).
pub fn fixed_part(path: &Path) -> PathBuf {
    path.components()
        .take_while(|c| !matches!(c, Component::Normal(n) if n.as_bytes().contains(&b'*')))
        .collect()
}

/// Checks an expanded entry: an allow entry (`allow`) must not match the home directory or a
/// directory above it (a variable set to `$HOME` by mistake must not allow all of it), nor
/// have a name made of `*` and `.` alone there (`~/*`, `~/.*`).
pub fn entry(path: PathBuf, home: &Path, allow: bool) -> Result<PathBuf, String> {
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("has a `..` in it: name the directory itself".into());
    }
    if !allow {
        return Ok(path);
    }
    let normal: PathBuf = path.components().collect();
    let pattern = Pattern::parse(&normal.to_string_lossy()).ok_or("is not absolute")?;
    if pattern.covers(home).is_some() {
        return Err(format!(
            "would allow {}, which holds your whole home directory: name a directory inside it",
            normal.display()
        ));
    }
    let mut dir = PathBuf::from("/");
    for c in normal.components().skip(1) {
        let name = c.as_os_str();
        let wild = name.as_bytes().iter().all(|&b| b == b'*' || b == b'.');
        let above_home =
            Pattern::parse(&dir.to_string_lossy()).is_some_and(|d| d.covers(home).is_some());
        if wild && is_pattern(Path::new(name)) && above_home {
            return Err(format!(
                "would allow every name `{}` matches in {}: give the name's fixed part too (`.tool*`)",
                name.to_string_lossy(),
                dir.display()
            ));
        }
        dir.push(name);
    }
    Ok(path)
}

/// An allow entry that starts with a tool's own directory variable, whose default lies inside
/// the home directory (`${CLAUDE_CONFIG_DIR:-~/.claude}/projects`): the variable, when set,
/// must not name the home directory or one above it, or the entry would allow a name of the
/// home directory itself (`~/projects`). A variable whose default is the home directory
/// (`${GEMINI_CLI_HOME:-~}`) stands for one, and may.
pub fn leading_variable(
    raw: &str,
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let Some(body) = raw.strip_prefix("${") else {
        return Ok(());
    };
    let Some(end) = super::expand::closing(body) else {
        return Ok(());
    };
    let (var, default) = match body[..end].split_once(":-") {
        Some((v, d)) => (v, Some(d)),
        None => (&body[..end], None),
    };
    let Some(value) = env(var).filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let inside_home = |d: &str| {
        super::expand::expand(d, home, env).is_ok_and(|p| p.starts_with(home) && p != home)
    };
    let normal: PathBuf = Path::new(&value).components().collect();
    if default.is_none_or(inside_home) && home.starts_with(&normal) {
        return Err(format!(
            "uses ${{{var}}}, set to {value}, which holds your whole home directory: unset it, or set it to the tool's own directory"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_variable_set_to_the_home_directory_is_refused() {
        let h = Path::new("/home/me");
        let env = |v: &str| match v {
            "CLAUDE_CONFIG_DIR" | "GEMINI_CLI_HOME" | "GOPATH" => Some("/home/me".to_string()),
            "CODEX_HOME" => Some("/home/me/.codex-work".to_string()),
            _ => None,
        };
        let check = |raw: &str| leading_variable(raw, h, &env);
        let e = check("${CLAUDE_CONFIG_DIR:-~/.claude}/projects").unwrap_err();
        assert!(e.contains("${CLAUDE_CONFIG_DIR}, set to /home/me"), "{e}");
        assert!(check("${CLAUDE_CONFIG_DIR}/projects").is_err());
        // A home-like variable, a variable set elsewhere, one unset, none at the start.
        assert!(check("${CLAUDE_CONFIG_DIR:-~}/.claude.json").is_ok());
        assert!(check("${GEMINI_CLI_HOME:-~}/.gemini/tmp").is_ok());
        assert!(check("${CODEX_HOME:-~/.codex}/sessions").is_ok());
        assert!(check("${COPILOT_HOME:-~/.copilot}/logs").is_ok());
        assert!(check("${GOMODCACHE:-${GOPATH:-~/go}/pkg/mod}").is_ok());
        assert!(check("~/.tool").is_ok());
    }

    #[test]
    fn patterns_stay_in_their_own_names() {
        let h = Path::new("/home/me");
        let ok = |s: &str| entry(PathBuf::from(s), h, true);
        for good in [
            "/home/me/.claude.json.tmp.*",
            "/home/me/.gemini/history/*",
            "/home/me/.gemini/history/*/.project_root",
            "/home/me/.tool/*",
            "/opt/x/*",
        ] {
            assert!(ok(good).is_ok(), "{good}");
        }
        for wide in ["/home/me/*", "/home/me/.*", "/home/*/x", "/*", "/home/*"] {
            let e = ok(wide).unwrap_err();
            assert!(
                e.contains("every name") || e.contains("whole home"),
                "{wide}: {e}"
            );
        }
        // Asking about them is fine.
        assert!(entry(PathBuf::from("/home/me/*"), h, false).is_ok());
        assert!(entry(PathBuf::from("/home/me/x/../y"), h, false).is_err());
    }

    #[test]
    fn parts() {
        assert!(is_pattern(Path::new("/h/a*/b")));
        assert!(!is_pattern(Path::new("/h/a/b")));
        assert_eq!(fixed_part(Path::new("/h/a*/b")), PathBuf::from("/h"));
        assert_eq!(fixed_part(Path::new("/h/a/b")), PathBuf::from("/h/a/b"));
    }
}
