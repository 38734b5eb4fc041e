//! A question in words, for the bar, a desktop notification and `hallpass answer` alike:
//! who wants to do what (create, write, remove, rename, change the owner of...) to which
//! file, by whom, the scope an answer covers and the keys. Pure; the callers lay the words
//! out.

use std::path::Path;

use hallpass_proto::shown::shown;
use hallpass_proto::{Change, Question};

/// `s` fit to draw on a terminal, through the one function that shows what the command
/// controls ([`hallpass_proto::shown`]): an escape sequence, a line break or a bidirectional
/// override in a process name or a path is shown escaped, not obeyed. The form
/// [`Words::of`] takes.
pub fn clean(s: &str) -> String {
    shown(s).to_string()
}

/// `300` → `5m0s`, `90` → `1m30s`, `45` → `45s`, `3600` → `1h0m0s`.
pub fn duration(secs: u32) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// The answer keys, as the bar and `hallpass answer` show them.
pub fn keys(timed_secs: u32) -> String {
    format!(
        "[o] allow once  [t] for {}  [a] always  [d] deny  [n] never",
        duration(timed_secs)
    )
}

/// What the scope line starts with: which answers the scope is for.
pub const SCOPE_LEAD: &str = "[t] and [a] allow, [n] denies: ";

/// How many columns `s` takes on a terminal.
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// The longest start of `s` that takes at most `cols` columns.
fn head(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used > cols {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` that takes at most `cols` columns.
fn tail(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used > cols {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// Cuts `s` to `cols` columns from the right.
pub fn cut_right(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols == 0 {
        return String::new();
    }
    format!("{}…", head(s, cols - 1))
}

/// Cuts a path to `cols` columns in its middle: where it is (its start: a name made long
/// or made to look like another path cannot push that out) and its last part stay.
pub fn cut_middle(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols < 3 {
        return cut_right(s, cols);
    }
    let front = (cols - 1) * 3 / 5;
    let back = cols - 1 - front;
    format!("{}…{}", head(s, front), tail(s, back))
}

/// The parts of a question, each passed through the caller's `clean` (what the process
/// chose, its name and paths, is shown as text, never obeyed).
pub struct Words {
    /// `node (pid 41237)`, or `pid 41237` without a name.
    pub who: String,
    /// What the call does: `write`, `create`, `remove`, `rename`, `change the owner of`,
    /// `set the times of`, `connect to`, ... (see [`verb`]).
    pub verb: &'static str,
    /// Every path the answer is for (`A to B` for a rename), and the service for a
    /// connection.
    pub what: String,
    /// The paths alone, what joins them (` to ` for a rename) and what follows them (the
    /// service), for [`Words::what_in`].
    paths: Vec<String>,
    joint: &'static str,
    after: String,
    /// The process chain, the writer first: `npm install ← bash ← copilot`.
    pub by: String,
    /// The scope a lasting or timed answer covers.
    pub scope: String,
}

/// What the syscall of `q` does, in words: its verb, what joins two paths, and what follows
/// the last one (before a service's name). An older daemon names no change: then worded
/// from the syscall alone, as it was.
fn verb(q: &Question) -> (&'static str, &'static str, &'static str) {
    let two = !q.also.is_empty();
    match q.change() {
        Change::Unspecified => match q.syscall.as_str() {
            "connect" => ("connect to", "", ""),
            "sendto" | "sendmsg" | "sendmmsg" => ("send to", "", ""),
            // An ioctl on a terminal changes its settings, size or foreground group.
            "ioctl" if is_terminal(&q.path) => ("change the settings of", "", ""),
            _ => ("write", " and ", ""),
        },
        Change::Write => ("write", " and ", ""),
        Change::Create => ("create", " and ", ""),
        Change::MakeDir => ("create the directory", " and ", ""),
        Change::Tmpfile => ("create an unnamed file in", " and ", ""),
        Change::Symlink => ("create the symlink", " and ", ""),
        Change::Link if two => ("link", " as ", ""),
        Change::Link => ("give another name to", "", ""),
        Change::LinkTo => ("create the hard link", "", ""),
        Change::Remove => ("remove", " and ", ""),
        Change::RemoveDir => ("remove the directory", " and ", ""),
        Change::Rename => ("rename", " to ", ""),
        Change::RenameTo => ("rename a file to", "", ""),
        Change::Exchange if two => ("exchange", " and ", ""),
        Change::Exchange => ("exchange", "", " with another file"),
        Change::Truncate => ("truncate", " and ", ""),
        Change::Mode => ("change the mode of", " and ", ""),
        Change::Owner => ("change the owner of", " and ", ""),
        Change::Times => ("set the times of", " and ", ""),
        Change::Xattr => ("change the extended attributes of", " and ", ""),
        Change::Flags => ("change the flags of", " and ", ""),
        Change::Connect => ("connect to", "", ""),
        Change::Send => ("send to", "", ""),
        Change::Terminal => ("change the settings of", "", ""),
    }
}

impl Words {
    /// `q` in words, with `scope` as chosen so far.
    pub fn of(q: &Question, scope: &Path, clean: &dyn Fn(&str) -> String) -> Words {
        let who = if q.name.is_empty() {
            format!("pid {}", q.pid)
        } else {
            format!("{} (pid {})", clean(&q.name), q.pid)
        };
        let paths: Vec<String> = std::iter::once(&q.path)
            .chain(&q.also)
            .map(|p| clean(p))
            .collect();
        let (verb, joint, after) = verb(q);
        // A connection or a datagram to a service outside the session names what listens
        // there.
        let after = match verb {
            "connect to" | "send to" => format!("{after} ({})", clean(&q.service)),
            _ => after.to_string(),
        };
        let what = format!("{}{after}", paths.join(joint));
        let by = q
            .chain
            .iter()
            .map(|c| clean(c))
            .collect::<Vec<_>>()
            .join(" ← ");
        Words {
            who,
            verb,
            what,
            paths,
            joint,
            after,
            by,
            scope: clean(&scope.to_string_lossy()),
        }
    }
}

impl Words {
    /// [`Words::what`] in at most `cols` columns: each path cut in its middle to its share,
    /// so that a long first path (the source of a rename) cannot push the second (where it
    /// goes) out of sight.
    pub fn what_in(&self, cols: usize) -> String {
        if width(&self.what) <= cols {
            return self.what.clone();
        }
        let joints = width(self.joint) * (self.paths.len() - 1) + width(&self.after);
        let share = (cols.saturating_sub(joints) / self.paths.len()).max(12);
        let paths: Vec<String> = self.paths.iter().map(|p| cut_middle(p, share)).collect();
        format!("{}{}", paths.join(self.joint), cut_right(&self.after, 40))
    }
}

/// Whether the daemon named a terminal: its ioctls on one are a terminal's settings.
fn is_terminal(p: &str) -> bool {
    p.starts_with("/dev/pts/") || p.starts_with("/dev/tty") || p == "/dev/console"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts() {
        assert_eq!(cut_right("abcdef", 4), "abc…");
        assert_eq!(cut_right("abc", 4), "abc");
        assert_eq!(cut_middle("/abcdefghij/x", 8), "/abc…j/x");
        // By columns: a wide character takes two.
        assert_eq!(width("漢字"), 4);
        assert_eq!(cut_right("漢字漢字", 5), "漢字…");
        assert_eq!(cut_middle("漢字漢字漢字", 7), "漢…字");
    }

    /// A rename's source made long does not hide where it goes.
    #[test]
    fn each_path_keeps_its_share() {
        let q = Question {
            path: format!("/tmp/outside/{}/src", "a".repeat(200)),
            also: vec!["/home/me/.bashrc".into()],
            syscall: "renameat2".into(),
            ..Default::default()
        };
        let w = Words::of(&q, Path::new("/tmp"), &clean);
        let what = w.what_in(80);
        assert!(width(&what) <= 80, "{what}");
        assert!(what.starts_with("/tmp/outside/"), "{what}");
        assert!(what.ends_with(" and /home/me/.bashrc"), "{what}");
    }

    /// A rename says where it goes, cut by columns as any two paths are.
    #[test]
    fn a_rename_says_from_where_to_where() {
        let q = Question {
            path: format!("/tmp/outside/{}/src", "a".repeat(200)),
            also: vec!["/home/me/.bashrc".into()],
            syscall: "renameat2".into(),
            change: Change::Rename as i32,
            ..Default::default()
        };
        let w = Words::of(&q, Path::new("/tmp"), &clean);
        assert_eq!(w.verb, "rename");
        let what = w.what_in(80);
        assert!(width(&what) <= 80, "{what}");
        assert!(what.starts_with("/tmp/outside/"), "{what}");
        assert!(what.ends_with(" to /home/me/.bashrc"), "{what}");
        let short = Question {
            path: "/a".into(),
            ..q.clone()
        };
        assert_eq!(
            Words::of(&short, Path::new("/"), &clean).what,
            "/a to /home/me/.bashrc"
        );
        // Only the source needs an answer (it goes into the project): no "to".
        let alone = Question {
            also: vec![],
            ..short.clone()
        };
        let w = Words::of(&alone, Path::new("/"), &clean);
        assert_eq!((w.verb, w.what.as_str()), ("rename", "/a"));
        let to = Question {
            change: Change::RenameTo as i32,
            ..alone
        };
        let w = Words::of(&to, Path::new("/"), &clean);
        assert_eq!((w.verb, w.what.as_str()), ("rename a file to", "/a"));
    }

    /// Each change in the words the bar, `hallpass answer` and a notification show after
    /// "wants to".
    #[test]
    fn each_change_says_what_it_does() {
        let said = |change: Change, also: &[&str]| {
            let q = Question {
                path: "/x/f".into(),
                also: also.iter().map(|s| s.to_string()).collect(),
                syscall: "whatever".into(),
                change: change as i32,
                service: "svc (pid 3)".into(),
                ..Default::default()
            };
            let w = Words::of(&q, Path::new("/x"), &clean);
            format!("{} {}", w.verb, w.what)
        };
        let cases = [
            (Change::Write, "write /x/f"),
            (Change::Create, "create /x/f"),
            (Change::MakeDir, "create the directory /x/f"),
            (Change::Tmpfile, "create an unnamed file in /x/f"),
            (Change::Symlink, "create the symlink /x/f"),
            (Change::Link, "give another name to /x/f"),
            (Change::LinkTo, "create the hard link /x/f"),
            (Change::Remove, "remove /x/f"),
            (Change::RemoveDir, "remove the directory /x/f"),
            (Change::Rename, "rename /x/f"),
            (Change::RenameTo, "rename a file to /x/f"),
            (Change::Exchange, "exchange /x/f with another file"),
            (Change::Truncate, "truncate /x/f"),
            (Change::Mode, "change the mode of /x/f"),
            (Change::Owner, "change the owner of /x/f"),
            (Change::Times, "set the times of /x/f"),
            (Change::Xattr, "change the extended attributes of /x/f"),
            (Change::Flags, "change the flags of /x/f"),
            (Change::Connect, "connect to /x/f (svc (pid 3))"),
            (Change::Send, "send to /x/f (svc (pid 3))"),
            (Change::Terminal, "change the settings of /x/f"),
        ];
        for (change, want) in cases {
            assert_eq!(said(change, &[]), want, "{change:?}");
        }
        assert_eq!(said(Change::Link, &["/y/g"]), "link /x/f as /y/g");
        assert_eq!(said(Change::Exchange, &["/y/g"]), "exchange /x/f and /y/g");
        assert_eq!(said(Change::Write, &["/y/g"]), "write /x/f and /y/g");
        // An older daemon names no change: worded from the syscall, as before.
        assert_eq!(said(Change::Unspecified, &[]), "write /x/f");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(300), "5m0s");
        assert_eq!(duration(90), "1m30s");
        assert_eq!(duration(2), "2s");
        assert_eq!(duration(3600), "1h0m0s");
    }

    #[test]
    fn what_a_process_names_is_shown_not_obeyed() {
        assert_eq!(clean("a\x1b[1Ab\nc\u{202e}d"), "a\\e[1Ab\\nc\\u{202e}d");
        assert_eq!(clean("\u{9b}2J\u{200b}\\"), "\\u{9b}2J\\u{200b}\\\\");
    }

    #[test]
    fn a_connection_names_the_service() {
        let q = Question {
            pid: 7,
            path: "/run/user/1/bus".into(),
            syscall: "connect".into(),
            service: "dbus-daemon (pid 812)".into(),
            chain: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let w = Words::of(&q, Path::new("/run/user/1/bus"), &clean);
        assert_eq!(
            (w.who.as_str(), w.verb, w.what.as_str(), w.by.as_str()),
            (
                "pid 7",
                "connect to",
                "/run/user/1/bus (dbus-daemon (pid 812))",
                "a ← b"
            )
        );
    }

    #[test]
    fn a_terminal_ioctl_is_a_change_of_its_settings() {
        let q = |path: &str| Question {
            pid: 7,
            path: path.into(),
            syscall: "ioctl".into(),
            ..Default::default()
        };
        let verb = |path: &str| Words::of(&q(path), Path::new(path), &clean).verb;
        assert_eq!(verb("/dev/pts/3"), "change the settings of");
        assert_eq!(verb("/dev/tty1"), "change the settings of");
        // An ioctl on a file writes it (inode flags, a clone).
        assert_eq!(verb("/home/u/f"), "write");
    }

    #[test]
    fn a_datagram_names_the_service() {
        let q = Question {
            pid: 7,
            path: "/run/x.sock".into(),
            syscall: "sendmsg".into(),
            service: "socat (pid 9)".into(),
            ..Default::default()
        };
        let w = Words::of(&q, Path::new("/run/x.sock"), &clean);
        assert_eq!(
            (w.verb, w.what.as_str()),
            ("send to", "/run/x.sock (socat (pid 9))")
        );
    }
}
