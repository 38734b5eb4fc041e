//! `hallpass suggest LOG`: from the log of a run (best an audit run, `--prompt=allow`), the
//! fewest `--allow-path` flags that would have let it go by without a question (`plan.rs`),
//! printed for a person to read and a shell to run: each path shown through `shown`, each
//! flag quoted for the shell, and a flag whose path is not plain (a control character, a
//! bidirectional override, an invisible character) left out of the line, commented, to be
//! typed by hand: pasting the line must never name another path than the one read.

mod plan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hallpass_proto::shown::{plain, shown};

use crate::error::{ExitCode, Failure};
use crate::flags::SuggestArgs;
use crate::logfile::{self, Entry};
use crate::profiles::tilde;
use plan::{plan, Group, Plan, Why};

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
    match g.why {
        Why::Tool => s.push_str(" (its tool's own directory)"),
        Why::Made => s.push_str(" (a directory the run made)"),
        Why::Path => {}
    }
    s
}

/// The plan for the writes of `entries` that were or would have been asked about, not
/// those a person denied.
fn plan_of(entries: &[Entry], home: &Path) -> (Plan, usize) {
    let asked: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.asked() && e.reason != "denied")
        .collect();
    let mut writes: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for p in asked.iter().filter_map(|e| e.abs_path()) {
        *writes.entry(p).or_default() += 1;
    }
    let made: BTreeSet<PathBuf> = asked
        .iter()
        .filter(|e| e.made_dir())
        .filter_map(|e| e.abs_path())
        .collect();
    let total = writes.values().sum();
    (plan(&writes, &made, home), total)
}

pub fn suggest(args: SuggestArgs) -> Result<ExitCode, Failure> {
    let home = crate::env::real_home_dir();
    let entries = logfile::read(&args.log)?;
    let (plan, total) = plan_of(&entries, &home);
    let log = shown(&args.log);
    if plan.groups.is_empty() && plan.left.is_empty() {
        crate::out::line(format_args!(
            "# nothing in {log} was or would have been asked about: no flag needed"
        ));
        return Ok(ExitCode::Success);
    }
    let mut out = vec![format!(
        "# {total} writes in {log} were or would have been asked about; these allow them:"
    )];
    let names: Vec<String> = plan
        .groups
        .iter()
        .map(|g| shown(&tilde(&g.root, &home)).to_string())
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (g, name) in plan.groups.iter().zip(&names) {
        out.push(format!("#   {name:<width$}  {}", describe(g)));
    }
    let denied = entries.iter().filter(|e| e.reason == "denied").count();
    if denied > 0 {
        out.push(format!("# left out: {denied} writes you denied"));
    }
    out.extend(left_lines(&plan.left, &home));
    for l in &out {
        crate::out::line(l);
    }
    match &args.profile_out {
        Some(file) => write_profile(file, &plan.groups, &home, &args.log),
        None => {
            for l in flag_lines(&plan.groups, &home) {
                crate::out::line(l);
            }
            Ok(ExitCode::Success)
        }
    }
}

/// The paths the run wrote that no flag names: asked about again.
fn left_lines(left: &[PathBuf], home: &Path) -> Vec<String> {
    if left.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "# still asked: a flag for these would allow all that is in them (your home or above it, a top-level directory, one every tool shares, or one where every path is named):".to_string(),
    ];
    out.extend(
        left.iter()
            .map(|d| format!("#   {}", shown(&tilde(d, home)))),
    );
    out
}

/// The line of flags to paste (paths quoted for the shell), then, commented, the flags
/// whose path is not plain.
fn flag_lines(groups: &[Group], home: &Path) -> Vec<String> {
    let (typed, by_hand): (Vec<String>, Vec<String>) = groups
        .iter()
        .map(|g| tilde(&g.root, home))
        .partition(|p| plain(p.as_str()));
    let mut out = Vec::new();
    if !typed.is_empty() {
        let flags: Vec<String> = typed
            .iter()
            .map(|p| format!("--allow-path {}", shell_word(p)))
            .collect();
        out.push(flags.join(" "));
    }
    if !by_hand.is_empty() {
        out.push(
            "# not in the line above: these paths have characters that cannot be shown as typed (shown escaped); type a flag by hand if you mean it:"
                .into(),
        );
        out.extend(
            by_hand
                .iter()
                .map(|p| format!("#   --allow-path {}", shown(p))),
        );
    }
    out
}

/// The groups as a profile file (see `profiles::ProfileFile`), written atomically. A path
/// that is not plain is a comment: the file must allow only what a person can read in it.
fn write_profile(
    out: &Path,
    groups: &[Group],
    home: &Path,
    log: &Path,
) -> Result<ExitCode, Failure> {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut text = format!(
        "# Made by `hallpass suggest --profile-out` from {}: the writes that were or would\n# have been asked about.\nabout = {}\nallow = [\n",
        shown(log),
        q(&format!("what {} wrote", shown(log)))
    );
    for g in groups {
        let p = tilde(&g.root, home);
        if p.contains('*') || p.contains("${") {
            // A profile reads `*` as any characters within a name and `${VAR:-}` as a
            // variable: such a path would allow more (`~/.config/${NOPE:-}/a` is
            // `~/.config/a`, and its directory `~/.config`).
            text.push_str(&format!(
                "    # left out, a profile would read its `*` or `${{` as a pattern or variable: {}\n",
                q(&shown(&p).to_string())
            ));
        } else if plain(&p) {
            text.push_str(&format!("    {},  # {}\n", q(&p), describe(g)));
        } else {
            text.push_str(&format!(
                "    # not allowed here, its path has characters that cannot be shown as typed: {}  # {}\n",
                shown(&p),
                describe(g)
            ));
        }
    }
    text.push_str("]\n");
    logfile::write_atomic(out, &text)?;
    let flag = match out.to_str().filter(|s| plain(*s)) {
        Some(s) => shell_word(s),
        None => "FILE".into(),
    };
    eprintln!(
        "hallpass: wrote {}: use it with --profile {flag}, or as {}/NAME.toml",
        shown(out),
        shown(&tilde(&crate::profiles::user_dir(home), home))
    );
    Ok(ExitCode::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("~/.claude"), "~/.claude");
        assert_eq!(shell_word("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(shell_word("/a/$HOME`x`\\"), "'/a/$HOME`x`\\'");
        assert_eq!(shell_word(""), "''");
    }

    fn group(root: &str) -> Group {
        Group {
            root: root.into(),
            why: Why::Path,
            writes: 1,
            paths: 1,
        }
    }

    /// A path that is not plain never reaches the line to paste; it is shown, commented.
    #[test]
    fn flags_to_paste_name_what_is_read() {
        let h = Path::new("/home/me");
        let l = flag_lines(
            &[
                group("/home/me/a b"),
                group("/tmp/x\n--allow-path ~/.ssh"),
                group("/tmp/\x1b[2Jy"),
                group("/tmp/\u{202e}gpj.exe"),
            ],
            h,
        );
        assert_eq!(
            l,
            [
                "--allow-path '~/a b'",
                "# not in the line above: these paths have characters that cannot be shown as typed (shown escaped); type a flag by hand if you mean it:",
                "#   --allow-path /tmp/x\\n--allow-path ~/.ssh",
                "#   --allow-path /tmp/\\e[2Jy",
                "#   --allow-path /tmp/\\u{202e}gpj.exe",
            ]
        );
    }
}
