//! The lasting rules: what "always" and "never" answers saved, in a file people can read and
//! edit, `~/.config/hallpass/rules` (or `$XDG_CONFIG_HOME/hallpass/rules`):
//!
//! ```text
//! # comments and blank lines are kept out of the way
//! allow /home/me/.npm/_cacache
//! deny /home/me/.ssh
//! ```
//!
//! A rule covers its path and everything below it. The daemon writes the file atomically (a
//! temporary file in the same directory, then rename) and re-reads it when it changes, so an
//! edit by hand takes effect without a restart.
//!
//! A file that cannot be read whole (a line that does not parse, bytes that are not UTF-8,
//! no permission to read it, something other than a regular file in its place) fails
//! closed: its deny rules cannot be known, so no new session starts until it is fixed (the
//! server asks [`Store::damage`]), while the sessions running keep the rules last read. It
//! is never written over, and the error names the file and, where there is one, the line.
//! It is opened without blocking and checked to be a regular file before it is read: a FIFO
//! in its place would otherwise hold the daemon's start for good.

use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use hallpass_proto::shown::shown;

use crate::dlog::say;
use crate::policy::PathSet;

/// What a rule does to the writes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Allow,
    Deny,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub action: Action,
    pub path: PathBuf,
}

/// The rules in force, split for the policy.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    pub list: Vec<Rule>,
    pub always: PathSet,
    pub never: PathSet,
}

impl Rules {
    fn from_list(list: Vec<Rule>) -> Rules {
        let pick = |a: Action| {
            PathSet::new(
                list.iter()
                    .filter(|r| r.action == a)
                    .map(|r| r.path.clone()),
            )
        };
        // A "never" rule holds under the name it was given and under the one it leads to
        // (`deny ~/link/secret` where `link` is a symlink to the project): writes are
        // decided on resolved paths. "Always" rules stay literal: following a symlink made
        // later would widen them.
        let mut never = pick(Action::Deny);
        for r in list.iter().filter(|r| r.action == Action::Deny) {
            if let Some(resolved) = resolve_existing(&r.path).filter(|c| *c != r.path) {
                never.push(resolved);
            }
        }
        Rules {
            always: pick(Action::Allow),
            never,
            list,
        }
    }
}

/// `path` with the symlinks of its longest existing prefix resolved, and the rest as
/// written; `None` if nothing of it exists.
fn resolve_existing(path: &Path) -> Option<PathBuf> {
    let mut prefix = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&prefix) {
            return Some(rest.iter().rev().fold(c, |acc: PathBuf, n| acc.join(n)));
        }
        rest.push(prefix.file_name()?.to_os_string());
        prefix.pop();
    }
}

/// A rules file that cannot be read whole: which file, which line (0: the file as a whole),
/// and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "the rules file {}: {}", shown(&self.file), self.why),
            n => write!(
                f,
                "{}:{n}: {}; fix or remove that line",
                shown(&self.file),
                self.why
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses the file's text. `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<Rule>, ParseError> {
    let mut out: Vec<Rule> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |why: String| ParseError {
            file: file.into(),
            line: i + 1,
            why,
        };
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let action = match word {
            "allow" => Action::Allow,
            "deny" => Action::Deny,
            w => {
                return Err(err(format!(
                    "expected `allow PATH` or `deny PATH`, found `{}`",
                    shown(w)
                )))
            }
        };
        let path = rest.trim();
        if path.is_empty() {
            return Err(err(format!("`{word}` needs a path")));
        }
        if !path.starts_with('/') {
            return Err(err(format!("the path `{}` is not absolute", shown(path))));
        }
        let path =
            normalize(path).ok_or_else(|| err(format!("the path `{}` has `..`", shown(path))))?;
        out.retain(|r| r.path != path);
        out.push(Rule { action, path });
    }
    Ok(out)
}

/// `/a//b/./c/` → `/a/b/c`; `None` with a `..` component (ambiguous before resolution).
pub fn normalize(p: &str) -> Option<PathBuf> {
    let mut out = String::from("/");
    for c in p.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            return None;
        }
        if out.len() > 1 {
            out.push('/');
        }
        out.push_str(c);
    }
    Some(PathBuf::from(out))
}

/// The file's text for `list`.
pub fn format(list: &[Rule]) -> String {
    let mut s = String::from(
        "# hallpass rules: `allow PATH` or `deny PATH`, one per line; each covers PATH and\n\
         # everything below it. Written by hallpass (answers [a] and [n], `hallpass rules`);\n\
         # edits by hand are picked up without a restart.\n",
    );
    for r in list {
        s.push_str(r.action.word());
        s.push(' ');
        s.push_str(&r.path.to_string_lossy());
        s.push('\n');
    }
    s
}

/// What identifies a version of the file, to notice changes: where it is, its size, and when
/// its content and its status last changed (a `chmod` that makes it readable again).
type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64)>;

fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path).ok().as_ref().and_then(stamp_of)
}

/// What tells one version of the file from another: where it is, its size and its times.
fn stamp_of(m: &std::fs::Metadata) -> Stamp {
    Some((
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// The rules in the file at `path` (none if there is no file), or why it cannot be read
/// whole. `file` names it in errors.
pub fn read(path: &Path, file: &str) -> Result<Vec<Rule>, ParseError> {
    let whole = |why: String| ParseError {
        file: file.into(),
        line: 0,
        why,
    };
    let unreadable = |e: io::Error| {
        whole(format!(
            "cannot read it ({e}): make it readable, or remove it"
        ))
    };
    // Without blocking: a FIFO in its place would wait for a writer for ever.
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(unreadable(e)),
    };
    let kind = f.metadata().map_err(unreadable)?.file_type();
    if !kind.is_file() {
        return Err(whole(format!(
            "it is {}, not a regular file: remove it",
            hallpass_proto::paths::kind_of(kind)
        )));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(unreadable)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        ParseError {
            file: file.into(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            why: "it is not UTF-8 text".into(),
        }
    })?;
    parse(&text, file)
}

/// The rules file and the rules in force, shared by every session.
pub struct Store {
    path: PathBuf,
    /// Held across a read-modify-write of the file, so two changes never lose one another.
    writing: Mutex<()>,
    rules: RwLock<Arc<Rules>>,
    /// The stamp of the file last read, and the error it had, if any.
    seen: Mutex<(Stamp, Option<ParseError>)>,
}

impl Store {
    /// Reads `path` if it exists. A file that cannot be read whole is reported, not fatal:
    /// no rules are in force, and no session may start ([`Store::damage`]), until it is fixed.
    pub fn open(path: PathBuf) -> Store {
        let s = Store {
            path,
            writing: Mutex::new(()),
            rules: RwLock::new(Arc::new(Rules::default())),
            seen: Mutex::new((None, None)),
        };
        s.reload();
        s
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rules in force.
    pub fn current(&self) -> Arc<Rules> {
        self.rules.read().unwrap().clone()
    }

    /// Why the file could not be read, if it could not.
    pub fn error(&self) -> Option<ParseError> {
        self.seen.lock().unwrap().1.clone()
    }

    /// Why the file cannot be read whole now, if it cannot: read again first if it changed.
    /// While it says so, no new session may start (its deny rules are not known).
    pub fn damage(&self) -> Option<ParseError> {
        self.reload();
        self.error()
    }

    /// Re-reads the file if it changed since last read. A file that cannot be read whole
    /// leaves the rules last read in force (see the module's doc).
    pub fn reload(&self) {
        let mut seen = self.seen.lock().unwrap();
        let now = stamp(&self.path);
        if now == seen.0 && now.is_some() {
            return;
        }
        match read(&self.path, &self.path.display().to_string()) {
            Ok(list) => {
                *self.rules.write().unwrap() = Arc::new(Rules::from_list(list));
                *seen = (now, None);
            }
            Err(e) => {
                if seen.1.as_ref() != Some(&e) {
                    say!("hallpassd: {e}");
                }
                *seen = (now, Some(e));
            }
        }
    }

    /// Adds or replaces the rule for `rule.path` and saves the file. A path the file cannot
    /// hold as one line (a control character, space at either end) is refused.
    pub fn add(&self, rule: Rule) -> io::Result<Arc<Rules>> {
        let p = rule.path.to_string_lossy();
        if p.chars().any(char::is_control) || p.trim() != p {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a rule cannot hold the path {} (a control character, or space at an end)",
                    shown(&rule.path)
                ),
            ));
        }
        self.change(|list| {
            list.retain(|r| r.path != rule.path);
            list.push(rule);
            true
        })
    }

    /// Removes the rule for `path`; `Ok(None)` if there was none.
    pub fn remove(&self, path: &Path) -> io::Result<Option<Arc<Rules>>> {
        let mut found = false;
        let r = self.change(|list| {
            let before = list.len();
            list.retain(|r| r.path != path);
            found = list.len() != before;
            found
        })?;
        Ok(found.then_some(r))
    }

    /// Applies `edit` to the rules as the file has them now, and saves them if it says so.
    /// Refuses to write over a file that does not parse.
    fn change(&self, edit: impl FnOnce(&mut Vec<Rule>) -> bool) -> io::Result<Arc<Rules>> {
        let _one_at_a_time = self.writing.lock().unwrap();
        self.reload();
        if let Some(e) = self.error() {
            return Err(io::Error::other(format!(
                "{e} (hallpass does not write over a rules file it cannot read)"
            )));
        }
        let mut list = self.current().list.clone();
        if edit(&mut list) {
            // The stamp of what we wrote, taken before it is in place: an edit by hand right
            // after must not pass for ours.
            let written = write_atomically(&self.path, format(&list).as_bytes())?;
            let mut seen = self.seen.lock().unwrap();
            let rules = Arc::new(Rules::from_list(list));
            *self.rules.write().unwrap() = rules.clone();
            *seen = (written, None);
            return Ok(rules);
        }
        Ok(self.current())
    }

    /// Re-reads the file whenever it changes, every `every`, until the process exits.
    pub fn watch(self: &Arc<Self>, every: Duration) {
        crate::periodic::every("rules-watch", self, every, Store::reload);
    }
}

/// Writes `data` to `path` so that readers see the old file or the new one, never a part:
/// a temporary file beside it, flushed to disk, then renamed over it. Returns the new file's
/// stamp.
fn write_atomically(path: &Path, data: &[u8]) -> io::Result<Stamp> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let tmp = dir.join(format!(
        ".{}.{}-{nanos}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        // Taken before the rename, which changes its ctime: the next look reads it again,
        // which costs little, rather than missing an edit.
        let m = f.metadata()?;
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable once the directory is.
        std::fs::File::open(dir)?.sync_all()?;
        Ok(stamp_of(&m))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats() {
        let text = "# c\n\nallow /a/b\n  deny   /c d/e/  \nallow /a//b/./x\n";
        let list = parse(text, "rules").unwrap();
        assert_eq!(
            list,
            vec![
                Rule {
                    action: Action::Allow,
                    path: "/a/b".into()
                },
                Rule {
                    action: Action::Deny,
                    path: "/c d/e".into()
                },
                Rule {
                    action: Action::Allow,
                    path: "/a/b/x".into()
                },
            ]
        );
        assert_eq!(parse(&format(&list), "rules").unwrap(), list);
        // A later rule for the same path replaces the earlier one.
        let list = parse("allow /a\ndeny /a\n", "r").unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].action, Action::Deny);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("allow /a\n\nallw /b\n", "/h/rules").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "/h/rules:3: expected `allow PATH` or `deny PATH`, found `allw`; fix or remove that line"
        );
        assert_eq!(parse("deny\n", "r").unwrap_err().why, "`deny` needs a path");
        assert!(parse("allow rel/x\n", "r")
            .unwrap_err()
            .why
            .contains("not absolute"));
        assert!(parse("allow /a/../b\n", "r")
            .unwrap_err()
            .why
            .contains(".."));
    }

    #[test]
    fn a_never_rule_through_a_symlink_holds_where_it_leads() {
        let dir = std::env::temp_dir().join(format!("hallpass-rules-ln-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proj")).unwrap();
        std::os::unix::fs::symlink(dir.join("proj"), dir.join("link")).unwrap();
        let rules = Rules::from_list(vec![
            Rule {
                action: Action::Deny,
                path: dir.join("link/secret"),
            },
            Rule {
                action: Action::Allow,
                path: dir.join("link/open"),
            },
        ]);
        assert!(rules.never.covers(&dir.join("proj/secret/a")));
        assert!(rules.never.covers(&dir.join("link/secret/a")));
        // Allow rules stay as written.
        assert!(!rules.always.covers(&dir.join("proj/open/a")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_broken_file_is_never_overwritten() {
        let dir = std::env::temp_dir().join(format!("hallpass-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rules");
        let store = Store::open(path.clone());
        assert!(store.current().list.is_empty());
        store
            .add(Rule {
                action: Action::Allow,
                path: "/x".into(),
            })
            .unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("allow /x\n"));
        assert!(store.current().always.covers(Path::new("/x/y")));

        std::fs::write(&path, "allow /x\nbogus\n").unwrap();
        store.reload();
        assert_eq!(store.error().unwrap().line, 2);
        // The rules last read stay in force.
        assert!(store.current().always.covers(Path::new("/x/y")));
        let e = store
            .add(Rule {
                action: Action::Deny,
                path: "/y".into(),
            })
            .unwrap_err();
        assert!(e.to_string().contains(":2:"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "allow /x\nbogus\n");

        std::fs::write(&path, "deny /z\n").unwrap();
        store.reload();
        assert!(store.error().is_none());
        assert!(store.current().never.covers(Path::new("/z")));
        assert!(!store.current().always.covers(Path::new("/x")));
        assert!(store
            .add(Rule {
                action: Action::Allow,
                path: "/a\nallow /home".into(),
            })
            .is_err());
        assert!(store.remove(Path::new("/z")).unwrap().is_some());
        assert!(store.remove(Path::new("/z")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Regression (issue 24): a FIFO in the rules file's place held the daemon's start for
    /// good, and a file that could not be read whole left no rules in force, silently.
    #[test]
    fn what_cannot_be_read_whole_is_named_and_never_blocks() {
        let dir = std::env::temp_dir().join(format!("hallpass-rules-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rules");
        let file = path.display().to_string();
        let store = Store::open(path.clone());
        assert!(store.damage().is_none());
        std::fs::write(&path, "deny /d\n").unwrap();
        assert!(store.damage().is_none());
        assert!(store.current().never.covers(Path::new("/d/x")));

        std::fs::write(&path, b"deny /d\nallow /\xff\n").unwrap();
        let e = store.damage().unwrap();
        assert_eq!((e.line, e.why.as_str()), (2, "it is not UTF-8 text"));
        // The rules last read stay in force.
        assert!(store.current().never.covers(Path::new("/d/x")));

        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = store.damage().unwrap();
        assert_eq!(
            e.to_string(),
            format!("the rules file {file}: it is a FIFO, not a regular file: remove it")
        );
        // A fresh store (a daemon starting) is not held by it either.
        assert!(Store::open(path.clone()).error().is_some());
        std::fs::remove_file(&path).unwrap();

        std::fs::create_dir(&path).unwrap();
        assert!(store.damage().unwrap().why.contains("a directory"));
        std::fs::remove_dir(&path).unwrap();
        assert!(store.damage().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
