//! The flags for a run, as a pure function of what its log says it wrote: the fewest
//! `--allow-path` roots that leave nothing asked when the command runs again from the state
//! the run started in, each no wider than the run gives a reason for (see the rule of
//! `hallpass_proto::places`):
//!
//! - a directory the run made (the daemon logs no `mkdir` of a directory that is there
//!   already, so a logged one is made by the run, and made again by the next): everything
//!   below it is the run's, so the directory itself;
//! - a tool's own directory (`~/.npm`, `~/.cache/pip`, `/tmp/x`) the run made, or wrote two
//!   or more paths in, since its tool writes new names there each run;
//! - otherwise the path itself.
//!
//! A flag covers all that is below its path, so never `/`, a top-level directory, the home or
//! above it, a directory every tool shares (`~/.cache`, `/tmp`), a sensitive one (`~/.ssh`)
//! or a directory made in one: a write of such a path (made by the run, or its mode or times
//! changed) is left to be asked about again, and said so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hallpass_proto::places;

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
    /// A tool's own directory: the run made it, or wrote several paths in it.
    Tool,
    /// A directory the run made.
    Made,
    /// Just this path.
    Path,
}

/// The flags, and the paths the run wrote that no flag may name.
#[derive(Debug, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    /// Asked about again on the next run: a flag for one would allow too much.
    pub left: Vec<PathBuf>,
}

/// Whether a flag for `p`, a path the run wrote (`made`: a directory it made), would allow
/// what is not the run's: `p` is shared, a sensitive directory, or made in one.
fn too_wide(p: &Path, made: bool, home: &Path) -> bool {
    places::shared(p, home)
        || places::SENSITIVE.iter().any(|s| p == home.join(s))
        || (made && places::sensitive(p, home))
}

/// The plan for `writes` (path → how many times), of which `made` are directories the run
/// made.
pub fn plan(writes: &BTreeMap<PathBuf, usize>, made: &BTreeSet<PathBuf>, home: &Path) -> Plan {
    let left: Vec<&PathBuf> = writes
        .keys()
        .filter(|p| too_wide(p, made.contains(*p), home))
        .collect();
    let granted: Vec<&PathBuf> = made.iter().filter(|d| !left.contains(d)).collect();
    // What a directory the run made holds is that directory's; a left one is asked again.
    let below_made = |p: &Path| granted.iter().any(|d| p != d.as_path() && p.starts_with(d));
    let own: Vec<&PathBuf> = writes
        .keys()
        .filter(|p| !left.contains(p) && !below_made(p))
        .collect();
    // Not one that holds the home (`/tmp/x` for a home in `/tmp/x/home`).
    let tool_of = |p: &Path| {
        let t = match made.contains(p) && places::is_tool_dir(p, home) {
            true => Some(p.to_path_buf()),
            false => places::tool_dir(p, home),
        };
        t.filter(|t| !places::shared(t, home))
    };
    let mut per_tool: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for p in &own {
        if let Some(t) = tool_of(p) {
            *per_tool.entry(t).or_default() += 1;
        }
    }
    let mut roots: BTreeMap<PathBuf, Why> = BTreeMap::new();
    for p in own {
        let (root, why) = match tool_of(p) {
            Some(t) if per_tool[&t] >= 2 || t == *p => (t, Why::Tool),
            _ if made.contains(p) => (p.clone(), Why::Made),
            _ => (p.clone(), Why::Path),
        };
        let w = roots.entry(root).or_insert(why);
        if why == Why::Tool {
            *w = why;
        }
    }
    let groups = roots
        .iter()
        .filter(|(r, _)| !r.ancestors().skip(1).any(|a| roots.contains_key(a)))
        .map(|(root, why)| {
            let under: Vec<usize> = writes
                .iter()
                .filter(|(p, _)| p.starts_with(root))
                .map(|(_, n)| *n)
                .collect();
            Group {
                writes: under.iter().sum(),
                paths: under.len(),
                root: root.clone(),
                why: *why,
            }
        })
        .collect();
    Plan {
        groups,
        left: left.into_iter().cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups (root, why, writes, paths), and the directories left to ask.
    type Seen = (Vec<(String, Why, usize, usize)>, Vec<String>);

    fn run(paths: &[(&str, usize)], made: &[&str]) -> Seen {
        let w = paths.iter().map(|(p, n)| (PathBuf::from(p), *n)).collect();
        let m = made.iter().map(PathBuf::from).collect();
        let p = plan(&w, &m, Path::new("/home/me"));
        (
            p.groups
                .into_iter()
                .map(|g| (g.root.display().to_string(), g.why, g.writes, g.paths))
                .collect(),
            p.left.iter().map(|l| l.display().to_string()).collect(),
        )
    }

    fn roots(paths: &[(&str, usize)], made: &[&str]) -> Vec<String> {
        run(paths, made).0.into_iter().map(|g| g.0).collect()
    }

    /// Three files in the home are named, never `~`.
    #[test]
    fn files_in_the_home_are_named() {
        let g = roots(
            &[("/home/me/a", 1), ("/home/me/b", 2), ("/home/me/c", 1)],
            &[],
        );
        assert_eq!(g, ["/home/me/a", "/home/me/b", "/home/me/c"]);
    }

    #[test]
    fn a_tools_directory_with_several_paths() {
        let (g, _) = run(
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
        let g = roots(&[("/home/me/.ssh/authorized_keys", 1)], &[]);
        assert_eq!(g, ["/home/me/.ssh/authorized_keys"]);
        // Sensitive directories are never widened to.
        let g = roots(&[("/home/me/.ssh/a", 1), ("/home/me/.ssh/b", 1)], &[]);
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn shared_directories_are_not_widened_to() {
        let g = roots(
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
        assert_eq!(
            g,
            [
                "/home/me/.cache/pip",
                "/home/me/.cache/x",
                "/tmp/d",
                "/tmp/f"
            ]
        );
    }

    /// Issue 19: `mkdir -p ~/.cache/agentx/models && echo > ~/.cache/agentx/models/m` got
    /// `--allow-path ~/.cache/agentx/models/m`, and the next run was denied its `mkdir`.
    #[test]
    fn a_tools_directory_the_run_made() {
        let (g, left) = run(
            &[
                ("/home/me/.cache/agentx", 1),
                ("/home/me/.cache/agentx/models", 1),
                ("/home/me/.cache/agentx/models/m", 1),
            ],
            &["/home/me/.cache/agentx", "/home/me/.cache/agentx/models"],
        );
        assert_eq!(g, [("/home/me/.cache/agentx".into(), Why::Tool, 3, 3)]);
        assert!(left.is_empty());
        // The same for ~/.config, ~/.local/share, ~/.local/state and a dot directory.
        for base in [".config", ".local/share", ".local/state"] {
            let d = format!("/home/me/{base}/agentx");
            let f = format!("{d}/m");
            assert_eq!(roots(&[(&d, 1), (&f, 1)], &[&d]), [d.as_str()]);
        }
        let g = roots(
            &[("/home/me/.agentx", 1), ("/home/me/.agentx/m", 1)],
            &["/home/me/.agentx"],
        );
        assert_eq!(g, ["/home/me/.agentx"]);
    }

    /// A directory the run made below a tool's existing one, or anywhere else: itself.
    #[test]
    fn a_directory_the_run_made() {
        let (g, _) = run(
            &[
                ("/home/me/.npm/_cacache/tmp/abc", 1),
                ("/home/me/.npm/_cacache/tmp/abc/f", 2),
                ("/opt/x/y", 1),
                ("/opt/x/y/z", 1),
            ],
            &["/home/me/.npm/_cacache/tmp/abc", "/opt/x/y", "/opt/x/y/z"],
        );
        assert_eq!(
            g,
            [
                ("/home/me/.npm/_cacache/tmp/abc".into(), Why::Made, 3, 2),
                ("/opt/x/y".into(), Why::Made, 2, 2)
            ]
        );
    }

    /// A scratch directory's entry that holds the home is no tool's.
    #[test]
    fn not_a_directory_that_holds_the_home() {
        let w = [("/tmp/t/out/a", 1), ("/tmp/t/out/b", 1)]
            .iter()
            .map(|(p, n)| (PathBuf::from(p), *n))
            .collect();
        let p = plan(&w, &BTreeSet::new(), Path::new("/tmp/t/home"));
        let roots: Vec<_> = p
            .groups
            .iter()
            .map(|g| g.root.display().to_string())
            .collect();
        assert_eq!(roots, ["/tmp/t/out/a", "/tmp/t/out/b"]);
    }

    /// `/`, a top-level directory, the home and above it, a container, a sensitive
    /// directory: never a flag, even made by the run (as a process the daemon cannot look
    /// for might log), or written itself (`chmod 700 ~/.ssh`).
    #[test]
    fn made_but_never_granted() {
        let (g, left) = run(
            &[
                ("/home", 1),
                ("/home/me", 1),
                ("/home/me/.cache", 1),
                ("/home/me/.ssh", 1),
                ("/home/me/.ssh/authorized_keys", 1),
                ("/home/me/.config/systemd/user", 1),
                ("/home/me/.config/systemd/user/x.service", 1),
                ("/opt", 1),
                ("/opt/x", 1),
                ("/etc/x", 1),
                ("/home/me/.gnupg", 2),
                ("/home/me/.config", 1),
            ],
            &[
                "/home",
                "/home/me",
                "/home/me/.cache",
                "/home/me/.ssh",
                "/home/me/.config/systemd/user",
                "/opt",
                "/opt/x",
            ],
        );
        assert_eq!(
            g.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            [
                "/etc/x",
                "/home/me/.config/systemd/user/x.service",
                "/home/me/.ssh/authorized_keys",
                "/opt/x"
            ]
        );
        assert_eq!(
            left,
            [
                "/home",
                "/home/me",
                "/home/me/.cache",
                "/home/me/.config",
                "/home/me/.config/systemd/user",
                "/home/me/.gnupg",
                "/home/me/.ssh",
                "/opt"
            ]
        );
    }
}
