//! `hallpass suggest LOG`: from the log of a run (best an audit run, `--prompt=allow`), the
//! fewest `--allow-path` flags that would have let it go by without a question, each no
//! wider than the run gives a reason for: a tool's own directory (`~/.npm`, `~/.cache/pip`,
//! `/tmp/x`) it wrote two or more paths in, otherwise the path itself. Never `~`, `~/.cache`
//! or `/tmp` because of a few files in them: those are named. (Whether the run made a
//! directory cannot be told from the log: `mkdir -p` logs a `mkdir` of every parent.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{ExitCode, Failure};
use crate::flags::SuggestArgs;
use crate::logfile::{self, Entry};
use crate::profiles::tilde;

/// Directories of the home that hold other tools' directories, not one tool's.
const SHARED: &[&str] = &[".cache", ".config", ".local/share", ".local/state"];
/// Directories outside the home that hold one directory per tool or run.
const SHARED_OUTSIDE: &[&str] = &["/tmp", "/var/tmp", "/dev/shm", "/var/cache"];
/// Where a write is worth a question every time: each path is named, never the directory.
const SENSITIVE: &[&str] = &[
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
];

/// One `--allow-path` and what it covers.
#[derive(Debug, PartialEq, Eq)]
pub struct Group {
    pub root: PathBuf,
    pub why: Why,
    /// Writes (log lines) under it.
    pub writes: usize,
    /// Distinct paths under it.
    pub paths: usize,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Why {
    /// A tool's own directory it wrote several paths in.
    Tool,
    /// Just this path.
    Path,
}

/// The directory a tool keeps for itself that holds `p` (strictly), if there is one.
fn tool_dir(p: &Path, home: &Path) -> Option<PathBuf> {
    if let Ok(rel) = p.strip_prefix(home) {
        if SENSITIVE.iter().any(|s| rel.starts_with(s)) {
            return None;
        }
        for base in SHARED {
            if let Ok(inner) = rel.strip_prefix(base) {
                let first = inner.components().next()?;
                return (inner.components().count() > 1).then(|| home.join(base).join(first));
            }
        }
        let first = rel
            .components()
            .next()?
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let dot = first.starts_with('.') && first != ".local";
        return (dot && rel.components().count() > 1).then(|| home.join(first));
    }
    SHARED_OUTSIDE.iter().find_map(|base| {
        let inner = p.strip_prefix(base).ok()?;
        let first = inner.components().next()?;
        (inner.components().count() > 1).then(|| Path::new(base).join(first))
    })
}

/// The allow paths for `writes` (path → how many times). `parents` are `mkdir`s of a
/// directory with other writes below it: covered by those if the run made it, and there
/// already otherwise (the daemon then answers EEXIST, unasked), so not allowed by
/// themselves.
pub fn plan(
    writes: &BTreeMap<PathBuf, usize>,
    parents: &BTreeSet<PathBuf>,
    home: &Path,
) -> Vec<Group> {
    let own: BTreeMap<PathBuf, usize> = writes
        .iter()
        .filter(|(p, _)| !parents.contains(*p))
        .map(|(p, n)| (p.clone(), *n))
        .collect();
    let writes = &own;
    let mut per_tool: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for p in writes.keys() {
        if let Some(t) = tool_dir(p, home) {
            *per_tool.entry(t).or_default() += 1;
        }
    }
    let mut roots: BTreeMap<PathBuf, Why> = BTreeMap::new();
    for p in writes.keys() {
        let (root, why) = match tool_dir(p, home) {
            Some(t) if per_tool[&t] >= 2 => (t, Why::Tool),
            _ => (p.clone(), Why::Path),
        };
        roots.entry(root).or_insert(why);
    }
    let keep: Vec<(PathBuf, Why)> = roots
        .iter()
        .filter(|(r, _)| !r.ancestors().skip(1).any(|a| roots.contains_key(a)))
        .map(|(r, w)| (r.clone(), *w))
        .collect();
    keep.into_iter()
        .map(|(root, why)| {
            let under: Vec<usize> = writes
                .iter()
                .filter(|(p, _)| p.starts_with(&root))
                .map(|(_, n)| *n)
                .collect();
            Group {
                writes: under.iter().sum(),
                paths: under.len(),
                root,
                why,
            }
        })
        .collect()
}

/// A path as a shell word: bare when safe, else in single quotes (hallpass expands a
/// leading `~/` itself, quoted or not).
pub fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./~+-@%:,=".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn describe(g: &Group) -> String {
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let mut s = n(g.writes, "write", "writes");
    if g.paths > 1 {
        s.push_str(&format!(", {}", n(g.paths, "path", "paths")));
    }
    if g.why == Why::Tool {
        s.push_str(" (its tool's own directory)");
    }
    s
}

pub fn suggest(args: SuggestArgs) -> Result<ExitCode, Failure> {
    let home = crate::env::home_dir();
    let entries = logfile::read(&args.log)?;
    let asked: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.asked() && e.reason != "denied")
        .collect();
    let mut writes: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for p in asked.iter().filter_map(|e| e.abs_path()) {
        *writes.entry(p).or_default() += 1;
    }
    let parents: BTreeSet<PathBuf> = asked
        .iter()
        .filter(|e| e.made_dir())
        .filter_map(|e| e.abs_path())
        .filter(|d| writes.keys().any(|p| p != d && p.starts_with(d)))
        .collect();
    let groups = plan(&writes, &parents, &home);
    let log = args.log.display();
    if groups.is_empty() {
        crate::out::line(format_args!(
            "# nothing in {log} was or would have been asked about: no flag needed"
        ));
        return Ok(ExitCode::Success);
    }
    let total: usize = writes.values().sum();
    crate::out::line(format_args!(
        "# {total} writes in {log} were or would have been asked about; these allow them:"
    ));
    let width = groups
        .iter()
        .map(|g| tilde(&g.root, &home).chars().count())
        .max()
        .unwrap_or(0);
    for g in &groups {
        crate::out::line(format_args!(
            "#   {:<width$}  {}",
            tilde(&g.root, &home),
            describe(g)
        ));
    }
    let denied = entries.iter().filter(|e| e.reason == "denied").count();
    if denied > 0 {
        crate::out::line(format_args!("# left out: {denied} writes you denied"));
    }
    match &args.profile_out {
        Some(out) => write_profile(out, &groups, &home, &args.log),
        None => {
            let flags: Vec<String> = groups
                .iter()
                .map(|g| format!("--allow-path {}", shell_word(&tilde(&g.root, &home))))
                .collect();
            crate::out::line(format_args!("{}", flags.join(" ")));
            Ok(ExitCode::Success)
        }
    }
}

/// The groups as a profile file (see `profiles::ProfileFile`), written atomically.
fn write_profile(
    out: &Path,
    groups: &[Group],
    home: &Path,
    log: &Path,
) -> Result<ExitCode, Failure> {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut text = format!(
        "# Made by `hallpass suggest --profile-out` from {}: the writes that were or would\n# have been asked about.\nabout = {}\nallow = [\n",
        log.display(),
        q(&format!("what {} wrote", log.display()))
    );
    for g in groups {
        let path = tilde(&g.root, home);
        // A profile reads `*` as any characters within a name: such a path would allow more.
        if path.contains('*') {
            text.push_str(&format!(
                "    # left out, a profile would read its `*` as a pattern: {}\n",
                q(&path)
            ));
            continue;
        }
        text.push_str(&format!("    {},  # {}\n", q(&path), describe(g)));
    }
    text.push_str("]\n");
    logfile::write_atomic(out, &text)?;
    eprintln!(
        "hallpass: wrote {}: use it with --profile {}, or as {}/NAME.toml",
        out.display(),
        shell_word(&out.display().to_string()),
        tilde(&crate::profiles::user_dir(home), home)
    );
    Ok(ExitCode::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(paths: &[(&str, usize)], made: &[&str]) -> Vec<(String, Why, usize, usize)> {
        let w = paths.iter().map(|(p, n)| (PathBuf::from(p), *n)).collect();
        let m = made.iter().map(PathBuf::from).collect();
        plan(&w, &m, Path::new("/home/me"))
            .into_iter()
            .map(|g| (g.root.display().to_string(), g.why, g.writes, g.paths))
            .collect()
    }

    /// Three files in the home are named, never `~`.
    #[test]
    fn files_in_the_home_are_named() {
        let g = run(
            &[("/home/me/a", 1), ("/home/me/b", 2), ("/home/me/c", 1)],
            &[],
        );
        assert_eq!(
            g.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["/home/me/a", "/home/me/b", "/home/me/c"]
        );
    }

    #[test]
    fn a_tools_directory_with_several_paths() {
        let g = run(
            &[
                ("/home/me/.claude/projects/x.jsonl", 3),
                ("/home/me/.claude/todos/y", 1),
                ("/home/me/.claude.json", 2),
            ],
            &[],
        );
        assert_eq!(
            g,
            [
                ("/home/me/.claude".into(), Why::Tool, 4, 2),
                ("/home/me/.claude.json".into(), Why::Path, 2, 1)
            ]
        );
        // One path in it: that path, not the directory.
        let g = run(&[("/home/me/.ssh/authorized_keys", 1)], &[]);
        assert_eq!(g[0].0, "/home/me/.ssh/authorized_keys");
        // Sensitive directories are never widened to.
        let g = run(&[("/home/me/.ssh/a", 1), ("/home/me/.ssh/b", 1)], &[]);
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn shared_directories_are_not_widened_to() {
        let g = run(
            &[
                ("/home/me/.cache/pip/http/1", 1),
                ("/home/me/.cache/pip/http/2", 1),
                ("/home/me/.cache/x", 1),
                ("/tmp/f", 1),
                ("/tmp/d/1", 1),
                ("/tmp/d/2", 1),
            ],
            &[],
        );
        let roots: Vec<_> = g.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            roots,
            [
                "/home/me/.cache/pip",
                "/home/me/.cache/x",
                "/tmp/d",
                "/tmp/f"
            ]
        );
    }

    /// `mkdir -p ~/.tool/d` logs a mkdir of /, /home, ...: none of those is allowed.
    #[test]
    fn parents_made_on_the_way_are_not_allowed() {
        let g = run(
            &[
                ("/home", 1),
                ("/home/me", 1),
                ("/home/me/.tool", 1),
                ("/home/me/.tool/d", 1),
                ("/home/me/.tool/d/f", 1),
                ("/etc/x", 1),
            ],
            &["/home", "/home/me", "/home/me/.tool", "/home/me/.tool/d"],
        );
        assert_eq!(
            g,
            [
                ("/etc/x".into(), Why::Path, 1, 1),
                ("/home/me/.tool/d/f".into(), Why::Path, 1, 1)
            ]
        );
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("~/.claude"), "~/.claude");
        assert_eq!(shell_word("/a b/it's"), "'/a b/it'\\''s'");
    }
}
