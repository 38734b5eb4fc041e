//! `hallpass profiles`: every profile, built in or the user's, and what each allows here.

use std::path::Path;

use super::{apply, builtin, load_file, tilde, user_dir, Origin, Profile, ProfileError, BUILTIN};
use crate::error::{ExitCode, Failure};

/// The user's profiles (sorted by name) and the files that could not be read.
fn user_profiles(home: &Path) -> (Vec<Profile>, Vec<ProfileError>) {
    let mut files: Vec<_> = std::fs::read_dir(user_dir(home))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for f in files {
        match load_file(&f) {
            Ok(p) => good.push(p),
            Err(e) => bad.push(e),
        }
    }
    (good, bad)
}

pub fn profiles(json: bool) -> Result<ExitCode, Failure> {
    let home = crate::env::home_dir();
    let (mine, bad) = user_profiles(&home);
    let mut all: Vec<Profile> = BUILTIN
        .iter()
        .filter(|b| !mine.iter().any(|m| m.name == b.name))
        .filter_map(|b| builtin(b.name))
        .collect();
    all.extend(mine);
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let rows: Vec<_> = all.iter().map(|p| (p, apply(p, &home, &[]))).collect();
    if json {
        let v: Vec<_> = rows.iter().map(|(p, a)| ProfileJson::of(p, a)).collect();
        crate::out::json(&v);
    } else {
        crate::out::line(format_args!(
            "Applied when the command's name matches, or with --profile NAME; --no-profile: none."
        ));
        crate::out::line(format_args!(
            "Yours go in {}/NAME.toml.",
            tilde(&user_dir(&home), &home)
        ));
        for (p, a) in &rows {
            crate::out::line("");
            let from = match &p.origin {
                Origin::BuiltIn => "built in".to_string(),
                Origin::File(f) if builtin(&p.name).is_some() => {
                    format!("{}, instead of the built-in one", tilde(f, &home))
                }
                Origin::File(f) => tilde(f, &home),
            };
            crate::out::line(format_args!("{}  ({from})  {}", p.name, p.about));
            match a {
                Ok(a) => {
                    for path in &a.paths {
                        crate::out::line(format_args!("    {}", tilde(path, &home)));
                    }
                    for path in &a.ask {
                        crate::out::line(format_args!("    asked: {}", tilde(path, &home)));
                    }
                }
                Err(e) => crate::out::line(format_args!("    error: {e}")),
            }
        }
    }
    for e in &bad {
        eprintln!("hallpass: {e}");
    }
    Ok(if bad.is_empty() {
        ExitCode::Success
    } else {
        ExitCode::Problems
    })
}

/// A profile in `hallpass profiles --json`.
#[derive(serde::Serialize)]
struct ProfileJson<'a> {
    about: &'a str,
    /// The entries as written, `~` and variables unexpanded.
    allow: &'a [String],
    /// The ask entries as written.
    ask: &'a [String],
    /// The absolute paths it asks about although it allows around them.
    ask_paths: Vec<String>,
    /// Why the profile does not apply here; null when it does.
    error: Option<String>,
    /// Its file; null for a built-in one.
    file: Option<String>,
    name: &'a str,
    /// The absolute paths it allows here.
    paths: Vec<String>,
}

impl<'a> ProfileJson<'a> {
    fn of(p: &'a Profile, a: &Result<super::Applied, ProfileError>) -> ProfileJson<'a> {
        let strings = |v: &[std::path::PathBuf]| -> Vec<String> {
            v.iter().map(|x| x.to_string_lossy().into_owned()).collect()
        };
        let (paths, ask_paths, error) = match a {
            Ok(a) => (strings(&a.paths), strings(&a.ask), None),
            Err(e) => (Vec::new(), Vec::new(), Some(e.to_string())),
        };
        ProfileJson {
            about: &p.about,
            allow: &p.allow,
            ask: &p.ask,
            ask_paths,
            error,
            file: match &p.origin {
                Origin::BuiltIn => None,
                Origin::File(f) => Some(f.to_string_lossy().into_owned()),
            },
            name: &p.name,
            paths,
        }
    }
}
