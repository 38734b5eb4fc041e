//! What a path given on the command line may be (`--allow-path`, `--deny-path`,
//! `hallpass rules allow|deny`), checked before anything runs, so that a mistake is said
//! rather than taken silently:
//! - an allow never holds the whole home directory (the home itself, `/`, or a directory
//!   above it), as a profile's allow entry may not either (`profiles/check.rs`): a session
//!   that may write all of the home is one that may write its shell's rc files;
//! - a `*` there is a plain character (only a profile's entries are patterns,
//!   `proto/src/pattern.rs`): `--allow-path '~/.foo.*'` would allow a file of that very
//!   name, and `--deny-path '~/.ssh/*'` would deny nothing in `~/.ssh`. Refused unless such
//!   a file is there.
//!
//! Above `profiles` (its directory, named in a hint).

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use hallpass_proto::shown::shown;

use crate::error::{ExitCode, Failure};

/// Checks an allow path: `given` as typed, `abs` as hallpass takes it (absolute, `~`
/// expanded), against the home directory `home`. `what` names the argument in the message
/// (`--allow-path`, `rules allow`).
pub fn allow(what: &str, given: &Path, abs: &Path, home: &Path) -> Result<(), Failure> {
    star(what, given, abs, home)?;
    let real = real(abs);
    let homes = [home.to_path_buf(), real_of(home)];
    if homes.iter().any(|h| h.starts_with(&real)) {
        return Err(Failure::with_code(
            format!(
                "{what} {} holds your whole home directory ({}): name a directory inside it\n\
                 hint: a run with --prompt=allow --log=FILE, then `hallpass suggest FILE`, lists \
                 what the command writes",
                shown(given),
                shown(home)
            ),
            ExitCode::Usage,
        ));
    }
    Ok(())
}

/// Checks a deny path (see [`allow`] for the arguments): no `*`.
pub fn deny(what: &str, given: &Path, abs: &Path, home: &Path) -> Result<(), Failure> {
    star(what, given, abs, home)
}

/// A `*` in a name of `given`, where no file of that name is, is refused with a hint.
fn star(what: &str, given: &Path, abs: &Path, home: &Path) -> Result<(), Failure> {
    let wild = given
        .components()
        .any(|c| matches!(c, Component::Normal(n) if n.as_bytes().contains(&b'*')));
    if !wild || abs.symlink_metadata().is_ok() {
        return Ok(());
    }
    let hint = if what == "--allow-path" {
        let entry = shown(given).to_string().replace('"', "\\\"");
        let dir = crate::profiles::tilde(&crate::profiles::user_dir(home), home);
        format!(
            "a `*` pattern works in a profile: allow = [\"{entry}\"] in {dir}/NAME.toml, \
             used with --profile NAME"
        )
    } else {
        "it covers its path and everything below it: name the directory".to_string()
    };
    Err(Failure::with_code(
        format!(
            "{what} {}: a `*` here is no wildcard, and no file has that name\nhint: {hint}",
            shown(given)
        ),
        ExitCode::Usage,
    ))
}

/// `p` with its symlinks resolved where it exists, else with `.` and `..` taken away by name.
fn real(p: &Path) -> PathBuf {
    if let Ok(r) = std::fs::canonicalize(p) {
        return r;
    }
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

fn real_of(home: &Path) -> PathBuf {
    std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_home_is_refused() {
        let h = Path::new("/nonexistent-home/me");
        let check =
            |given: &str, abs: &str| allow("--allow-path", Path::new(given), Path::new(abs), h);
        for (given, abs) in [
            ("~", "/nonexistent-home/me"),
            ("/", "/"),
            ("/nonexistent-home", "/nonexistent-home"),
            ("~/..", "/nonexistent-home/me/.."),
            ("~/x/../", "/nonexistent-home/me/x/.."),
        ] {
            let e = check(given, abs).unwrap_err();
            assert_eq!(e.code(), ExitCode::Usage);
            assert!(
                e.to_string()
                    .starts_with(&format!("--allow-path {given} holds your whole home directory (/nonexistent-home/me): name a directory inside it\nhint: ")),
                "{e}"
            );
        }
        assert!(check("~/.cache/x", "/nonexistent-home/me/.cache/x").is_ok());
        assert!(check("/nonexistent-home/mex", "/nonexistent-home/mex").is_ok());
    }

    #[test]
    fn a_star_is_refused_unless_a_file_has_that_name() {
        let e = allow(
            "--allow-path",
            Path::new("~/.foo.*"),
            Path::new("/nonexistent-home/me/.foo.*"),
            Path::new("/nonexistent-home/me"),
        )
        .unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with(
                "--allow-path ~/.foo.*: a `*` here is no wildcard, and no file has that name\n\
                 hint: a `*` pattern works in a profile: allow = [\"~/.foo.*\"] in "
            ),
            "{e}"
        );
        assert!(e.ends_with("/NAME.toml, used with --profile NAME"), "{e}");
        let h = Path::new("/nonexistent-home/me");
        let e = deny("--deny-path", Path::new("/x/*"), Path::new("/x/*"), h).unwrap_err();
        assert!(e.to_string().ends_with("name the directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("pathargs-{}", std::process::id()));
        let file = dir.join("a*b");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&file, "").unwrap();
        assert!(deny("--deny-path", &file, &file, h).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
