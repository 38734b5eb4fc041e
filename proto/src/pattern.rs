//! Path patterns, as `OpenSession.allow_patterns` and `ask_patterns` carry them, and what a
//! profile's entries mean together. A pattern is an absolute path whose names may hold `*`,
//! which stands for any run of characters within one name, never a `/` (as in a shell glob:
//! `~/.claude.json.tmp.*`, `~/.gemini/history/*/.project_root`). Like a plain path entry, a
//! pattern covers every path it matches and everything below it. Pure functions over bytes,
//! shared by the daemon's policy and the launcher's profile checks so the two cannot differ.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A parsed pattern: its names, from the root down.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    names: Vec<Vec<u8>>,
}

/// The names of an absolute, normalized path (none for `/`).
fn names_of(path: &Path) -> impl Iterator<Item = &[u8]> {
    path.as_os_str()
        .as_bytes()
        .split(|&b| b == b'/')
        .filter(|n| !n.is_empty())
}

/// How many names `path` has: the depth at which an entry naming it decides.
pub fn depth(path: &Path) -> usize {
    names_of(path).count()
}

/// Whether `name` matches the glob `pat`, where `*` matches any run of bytes (none too).
fn glob(pat: &[u8], name: &[u8]) -> bool {
    // The classic linear matcher: on a mismatch, let the last `*` swallow one byte more.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() && pat[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if p < pat.len() && pat[p] == name[n] {
            p += 1;
            n += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&b| b == b'*')
}

impl Pattern {
    /// Reads an absolute pattern; `None` if it is relative or has a `..` in it.
    pub fn parse(s: &str) -> Option<Pattern> {
        let path = Path::new(s);
        if !path.is_absolute() {
            return None;
        }
        let mut names = Vec::new();
        for c in path.components() {
            match c {
                Component::Normal(n) => names.push(n.as_bytes().to_vec()),
                Component::RootDir | Component::CurDir => {}
                Component::ParentDir | Component::Prefix(_) => return None,
            }
        }
        Some(Pattern { names })
    }

    /// Whether no name holds a `*`: the pattern is a plain path.
    pub fn is_plain(&self) -> bool {
        !self.names.iter().any(|n| n.contains(&b'*'))
    }

    /// The names before the first that holds a `*`, as a path: the directory the pattern
    /// lies in (all of it, if it is plain).
    pub fn fixed_part(&self) -> PathBuf {
        let mut p = PathBuf::from("/");
        for n in self.names.iter().take_while(|n| !n.contains(&b'*')) {
            p.push(std::ffi::OsStr::from_bytes(n));
        }
        p
    }

    /// The names after [`Pattern::fixed_part`], joined with `/`.
    pub fn rest(&self) -> String {
        let fixed = self.names.iter().take_while(|n| !n.contains(&b'*')).count();
        let rest: Vec<String> = self.names[fixed..]
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        rest.join("/")
    }

    /// If the pattern covers `path` (an absolute, normalized path: it or a path above it
    /// matches), how deep the match is: the number of names of the pattern.
    pub fn covers(&self, path: &Path) -> Option<usize> {
        let mut it = names_of(path);
        for pat in &self.names {
            let name = it.next()?;
            if !glob(pat, name) {
                return None;
            }
        }
        Some(self.names.len())
    }

    /// Whether `dir` is a path that a match of the pattern lies at or below: renaming or
    /// removing `dir` would take that match along.
    pub fn holds(&self, dir: &Path) -> bool {
        let mut pats = self.names.iter();
        names_of(dir).all(|name| pats.next().is_some_and(|pat| glob(pat, name)))
    }

    /// Whether a match of the pattern and `dir` lie one in the other: the pattern covers
    /// `dir` or `dir` holds a match.
    pub fn overlaps(&self, dir: &Path) -> bool {
        self.covers(dir).is_some() || self.holds(dir)
    }
}

/// Whether an allow entry decides a path over an ask entry, given how deep the deepest of
/// each that covers it is: the deeper entry decides, and allow when they are as deep (an
/// `--allow-path` naming exactly what a profile asks about is the person's own choice).
pub fn allow_wins(allow: Option<usize>, ask: Option<usize>) -> bool {
    match (allow, ask) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(a), Some(q)) => a >= q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Pattern {
        Pattern::parse(s).unwrap()
    }

    #[test]
    fn globs_match_within_one_name() {
        for (pat, name, m) in [
            ("*", "", true),
            ("*", "abc", true),
            (".claude.json.tmp.*", ".claude.json.tmp.123.ab", true),
            (".claude.json.tmp.*", ".claude.json.tmp.", true),
            (".claude.json.tmp.*", ".claude.json.tm", false),
            (".claude.json.tmp.*", ".claude.json", false),
            ("state_*.sqlite*", "state_5.sqlite-wal", true),
            ("state_*.sqlite*", "state_5.db", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("abc", "abc", true),
            ("abc", "abcd", false),
        ] {
            assert_eq!(glob(pat.as_bytes(), name.as_bytes()), m, "{pat} {name}");
        }
    }

    #[test]
    fn a_pattern_covers_its_matches_and_what_is_below() {
        let tmp = p("/h/.claude.json.tmp.*");
        assert_eq!(tmp.covers(Path::new("/h/.claude.json.tmp.1.x")), Some(2));
        assert_eq!(tmp.covers(Path::new("/h/.claude.json.tmp.1.x/y")), Some(2));
        assert_eq!(tmp.covers(Path::new("/h/.claude.json")), None);
        assert_eq!(tmp.covers(Path::new("/h")), None);
        assert_eq!(tmp.covers(Path::new("/g/.claude.json.tmp.1")), None);
        let mid = p("/h/.gemini/history/*/.project_root");
        assert_eq!(
            mid.covers(Path::new("/h/.gemini/history/proj/.project_root")),
            Some(5)
        );
        // `*` never crosses a `/`.
        assert_eq!(
            mid.covers(Path::new("/h/.gemini/history/a/b/.project_root")),
            None
        );
        assert_eq!(mid.covers(Path::new("/h/.gemini/history/proj")), None);
        assert_eq!(p("/").covers(Path::new("/x")), Some(0));
    }

    #[test]
    fn what_holds_a_pattern() {
        let mid = p("/h/.gemini/history/*/.git");
        for dir in [
            "/",
            "/h",
            "/h/.gemini/history",
            "/h/.gemini/history/x",
            "/h/.gemini/history/x/.git",
        ] {
            assert!(mid.holds(Path::new(dir)), "{dir}");
        }
        for dir in ["/h/.gemini/tmp", "/h/.gemini/history/x/.git/hooks", "/g"] {
            assert!(!mid.holds(Path::new(dir)), "{dir}");
        }
        assert!(mid.overlaps(Path::new("/h/.gemini/history/x/.git/hooks")));
        assert!(!mid.overlaps(Path::new("/h/.gemini/tmp")));
    }

    #[test]
    fn parts_and_parsing() {
        let g = p("/h/go/pkg/mod/golang.org/toolchain@*");
        assert_eq!(g.fixed_part(), PathBuf::from("/h/go/pkg/mod/golang.org"));
        assert_eq!(g.rest(), "toolchain@*");
        assert!(!g.is_plain());
        assert!(p("/h/.claude").is_plain());
        assert_eq!(p("/h/.claude").fixed_part(), PathBuf::from("/h/.claude"));
        assert_eq!(p("/h/.claude").rest(), "");
        assert_eq!(p("/h//a/./b/"), p("/h/a/b"));
        assert!(Pattern::parse("h/a").is_none());
        assert!(Pattern::parse("/h/../a").is_none());
        assert_eq!(depth(Path::new("/")), 0);
        assert_eq!(depth(Path::new("/h/a")), 2);
    }

    #[test]
    fn the_deeper_entry_decides_and_allow_wins_a_tie() {
        assert!(!allow_wins(None, None));
        assert!(!allow_wins(None, Some(3)));
        assert!(allow_wins(Some(2), None));
        assert!(!allow_wins(Some(2), Some(3)));
        assert!(allow_wins(Some(3), Some(3)));
        assert!(allow_wins(Some(4), Some(3)));
    }
}
