//! Profiles: named sets of paths a command may write without asking (an agent's own state,
//! a package manager's cache). Built in (`builtin.rs`), or the user's own in
//! `~/.config/hallpass/profiles/NAME.toml`, a directory sessions cannot write. A profile only
//! adds `--allow-path` entries, and ask entries that take back what those give around them
//! (`~/.gemini/tmp/bin` in `~/.gemini/tmp`): the daemon's order (always-denied, then
//! `--deny-path` and `deny` rules, then allows) means it never allows what those deny. A `*`
//! in a name of an entry stands for any run of characters within that name
//! (`hallpass_proto::pattern`).

mod builtin;
mod check;
mod expand;
pub mod list;

pub use expand::expand;

use std::path::{Path, PathBuf};

pub use builtin::BUILTIN;

/// Where a profile comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    /// A file: in the user's profile directory, or named by `--profile PATH`.
    File(PathBuf),
}

/// A profile as written: paths may hold `~` and `${VAR:-default}`.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub about: String,
    pub allow: Vec<String>,
    /// Asked about although an allow entry covers them.
    pub ask: Vec<String>,
    pub origin: Origin,
}

/// A profile file: `about = "..."`, `allow = ["~/.cache/tool", ...]` and
/// `ask = ["~/.cache/tool/bin", ...]`.
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    #[serde(default)]
    pub about: String,
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("no profile named `{0}`\nhint: `hallpass profiles` lists them; a file needs a `/` in its name (./{0}.toml)")]
    Unknown(String),
    #[error("cannot read the profile {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the profile {path} does not parse: {message}\nhint: it needs `allow = [\"~/.cache/tool\", ...]` and may have `ask = [...]` and `about = \"...\"`")]
    Parse { path: PathBuf, message: String },
    #[error("the profile {profile}: path `{raw}` {why}")]
    Path {
        profile: String,
        raw: String,
        why: String,
    },
}

/// hallpass's own config directory: `$XDG_CONFIG_HOME/hallpass` or `~/.config/hallpass`
/// (always denied to sessions, as the daemon's rules file is).
pub fn config_dir(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(x) => PathBuf::from(x).join("hallpass"),
        None => home.join(".config/hallpass"),
    }
}

/// The user's profile directory.
pub fn user_dir(home: &Path) -> PathBuf {
    config_dir(home).join("profiles")
}

/// Reads a profile file; its name is the file's stem.
pub fn load_file(path: &Path) -> Result<Profile, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let f: ProfileFile = toml::from_str(&text).map_err(|e| ProfileError::Parse {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Profile {
        name,
        about: f.about,
        allow: f.allow,
        ask: f.ask,
        origin: Origin::File(path.to_path_buf()),
    })
}

fn builtin(name: &str) -> Option<Profile> {
    BUILTIN.iter().find(|b| b.name == name).map(|b| Profile {
        name: b.name.into(),
        about: b.about.into(),
        allow: b.allow.iter().map(|s| s.to_string()).collect(),
        ask: b.ask.iter().map(|s| s.to_string()).collect(),
        origin: Origin::BuiltIn,
    })
}

/// The profile `name` names: a file if it holds a `/`, else the user's `NAME.toml`, else the
/// built-in one. `Ok(None)` when there is none of that name.
pub fn find(name: &str, home: &Path) -> Result<Option<Profile>, ProfileError> {
    if name.contains('/') {
        return load_file(Path::new(name)).map(Some);
    }
    if name.is_empty() || name.starts_with('.') {
        return Ok(None);
    }
    let user = user_dir(home).join(format!("{name}.toml"));
    if user.exists() {
        return load_file(&user).map(Some);
    }
    Ok(builtin(name))
}

/// A profile made ready for a session: the paths and patterns it allows, those it asks
/// about, and those it would have allowed but a deny covers (said, not sent).
#[derive(Debug)]
pub struct Applied {
    pub name: String,
    pub paths: Vec<PathBuf>,
    pub ask: Vec<PathBuf>,
    pub dropped: Vec<PathBuf>,
}

impl Applied {
    /// The allowed entries without a `*` (`--allow-path` entries), or those with one.
    pub fn allowed(&self, patterns: bool) -> impl Iterator<Item = &PathBuf> {
        self.paths
            .iter()
            .filter(move |p| check::is_pattern(p) == patterns)
    }
}

/// Expands a profile's paths, leaving out the allowed ones under a denied path.
pub fn apply(p: &Profile, home: &Path, denied: &[PathBuf]) -> Result<Applied, ProfileError> {
    let env = |v: &str| std::env::var(v).ok();
    let mut a = Applied {
        name: p.name.clone(),
        paths: Vec::new(),
        ask: Vec::new(),
        dropped: Vec::new(),
    };
    let entry = |raw: &String, allow: bool| {
        let var = match allow {
            true => check::leading_variable(raw, home, &env),
            false => Ok(()),
        };
        var.and_then(|_| expand(raw, home, &env))
            .and_then(|path| check::entry(path, home, allow))
            .map_err(|why| ProfileError::Path {
                profile: p.name.clone(),
                raw: raw.clone(),
                why,
            })
    };
    for raw in &p.allow {
        let path = entry(raw, true)?;
        if denied
            .iter()
            .any(|d| check::fixed_part(&path).starts_with(d))
        {
            a.dropped.push(path);
        } else if !a.paths.contains(&path) {
            a.paths.push(path);
        }
    }
    for raw in &p.ask {
        let path = entry(raw, false)?;
        if !a.ask.contains(&path) {
            a.ask.push(path);
        }
    }
    Ok(a)
}

/// The profiles a session uses: those named with `--profile`, else the one named like the
/// command (its basename), if any; none with `--no-profile`. Paths under `denied` are left
/// out.
pub fn choose(
    named: &[String],
    off: bool,
    command: &std::ffi::OsStr,
    home: &Path,
    denied: &[PathBuf],
) -> Result<Vec<Applied>, ProfileError> {
    if off {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    if named.is_empty() {
        let base = Path::new(command).file_name().unwrap_or_default();
        if let Some(p) = find(&base.to_string_lossy(), home)? {
            found.push(p);
        }
    }
    for n in named {
        found.push(find(n, home)?.ok_or_else(|| ProfileError::Unknown(n.clone()))?);
    }
    found.iter().map(|p| apply(p, home, denied)).collect()
}

/// The most paths the line at the start names; a profile with more is counted.
const NAMED: usize = 6;

/// The line said at the start: what the profiles allow.
pub fn announce(applied: &[Applied], home: &Path) -> Option<String> {
    let parts: Vec<String> = applied
        .iter()
        .map(|a| {
            let paths: Vec<String> = a.paths.iter().map(|p| tilde(p, home)).collect();
            let mut s = format!("profile {} allows {}", a.name, paths.join(", "));
            if paths.is_empty() {
                s = format!("profile {} allows nothing", a.name);
            } else if paths.len() > NAMED || !a.ask.is_empty() {
                s = format!(
                    "profile {} allows {} path{}{}, which `hallpass profiles` lists",
                    a.name,
                    paths.len(),
                    if paths.len() == 1 { "" } else { "s" },
                    match a.ask.len() {
                        0 => String::new(),
                        n => format!(" and asks about {n} in them"),
                    }
                );
            }
            if !a.dropped.is_empty() {
                let d: Vec<String> = a.dropped.iter().map(|p| tilde(p, home)).collect();
                s.push_str(&format!(" (not {}: denied)", d.join(", ")));
            }
            s
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "hallpass: {} (--no-profile: without)",
        parts.join("; ")
    ))
}

/// `/home/me/x` as `~/x`, for people.
pub fn tilde(p: &Path, home: &Path) -> String {
    match p.strip_prefix(home) {
        Ok(rest) if home != Path::new("/") && rest.as_os_str().is_empty() => "~".into(),
        Ok(rest) if home != Path::new("/") => format!("~/{}", rest.display()),
        _ => p.display().to_string(),
    }
}

#[cfg(test)]
mod rule_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &str) -> Option<String> {
        match v {
            "CARGO_HOME" => Some("/opt/cargo".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn a_path_that_holds_the_home_directory_is_refused() {
        let h = Path::new("/home/me");
        let p = |allow: &str| Profile {
            name: "wide".into(),
            about: String::new(),
            allow: vec![allow.into()],
            ask: Vec::new(),
            origin: Origin::File(PathBuf::from("/x.toml")),
        };
        for wide in [
            "~",
            "~/",
            "/home",
            "/",
            "/home/me/.",
            "${NOT_SET_ANYWHERE:-~}",
        ] {
            let e = apply(&p(wide), h, &[]).unwrap_err().to_string();
            assert!(e.contains("whole home directory"), "{wide}: {e}");
        }
        let up = apply(&p("~/.tool/.."), h, &[]).unwrap_err().to_string();
        assert!(up.contains("`..`"), "{up}");
        let ok = apply(&p("~/.tool"), h, &[]).unwrap();
        assert_eq!(ok.paths, [PathBuf::from("/home/me/.tool")]);
    }

    #[test]
    fn expansion() {
        let h = Path::new("/home/me");
        let e = |s: &str| expand(s, h, &env);
        assert_eq!(e("~/.claude").unwrap(), PathBuf::from("/home/me/.claude"));
        assert_eq!(
            e("${CARGO_HOME:-~/.cargo}/git").unwrap(),
            PathBuf::from("/opt/cargo/git")
        );
        assert_eq!(
            e("${GOPATH:-~/go}/pkg").unwrap(),
            PathBuf::from("/home/me/go/pkg")
        );
        assert_eq!(e("${EMPTY:-~/x}").unwrap(), PathBuf::from("/home/me/x"));
        assert_eq!(
            e("${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/pip}").unwrap(),
            PathBuf::from("/home/me/.cache/pip")
        );
        assert!(e("relative/x").unwrap_err().contains("not absolute"));
        assert!(e("${NOPE}/x").unwrap_err().contains("not set"));
        assert!(e("${NOPE").unwrap_err().contains("without its"));
        assert!(e("${A B:-x}").unwrap_err().contains("not one"));
    }

    /// Every built-in entry expands, with nothing set, to a path in the home directory and
    /// never to the home directory itself or a shared directory of it.
    #[test]
    fn builtins_stay_in_their_own_directories() {
        let h = Path::new("/home/me");
        for b in BUILTIN {
            for raw in b.allow {
                let p = expand(raw, h, &|_| None).unwrap();
                assert!(p.starts_with(h), "{raw}");
                for wide in [
                    "",
                    ".cache",
                    ".config",
                    ".local",
                    ".local/share",
                    "go",
                    "go/pkg",
                    ".cargo",
                ] {
                    assert_ne!(p, h.join(wide), "{} allows {}", b.name, p.display());
                }
            }
        }
    }

    #[test]
    fn denied_paths_are_dropped() {
        let p = Profile {
            name: "t".into(),
            about: String::new(),
            allow: vec!["/home/me/.config/hallpass/x".into(), "/home/me/.t".into()],
            ask: Vec::new(),
            origin: Origin::BuiltIn,
        };
        let a = apply(
            &p,
            Path::new("/home/me"),
            &[PathBuf::from("/home/me/.config/hallpass")],
        )
        .unwrap();
        assert_eq!(a.paths, vec![PathBuf::from("/home/me/.t")]);
        assert_eq!(
            a.dropped,
            vec![PathBuf::from("/home/me/.config/hallpass/x")]
        );
    }

    #[test]
    fn the_start_line_names_a_few_paths_and_counts_more() {
        let h = Path::new("/home/me");
        let a = |name: &str, paths: &[&str], ask: &[&str]| Applied {
            name: name.into(),
            paths: paths.iter().map(PathBuf::from).collect(),
            ask: ask.iter().map(PathBuf::from).collect(),
            dropped: Vec::new(),
        };
        let few = a(
            "npm",
            &["/home/me/.npm/_cacache", "/home/me/.npm/_logs"],
            &[],
        );
        let many = a("claude", &["/a", "/b", "/c", "/d", "/e", "/f", "/g"], &[]);
        let asks = a(
            "gemini",
            &["/home/me/.gemini/tmp"],
            &["/home/me/.gemini/tmp/bin"],
        );
        assert_eq!(
            announce(&[few, many, asks], h).unwrap(),
            "hallpass: profile npm allows ~/.npm/_cacache, ~/.npm/_logs; \
             profile claude allows 7 paths, which `hallpass profiles` lists; \
             profile gemini allows 1 path and asks about 1 in them, which `hallpass profiles` lists \
             (--no-profile: without)"
        );
    }

    #[test]
    fn tildes() {
        let h = Path::new("/home/me");
        assert_eq!(tilde(Path::new("/home/me/.x"), h), "~/.x");
        assert_eq!(tilde(Path::new("/home/me"), h), "~");
        assert_eq!(tilde(Path::new("/home/mex"), h), "/home/mex");
    }
}
