//! A question in words, for the bar, a desktop notification and `hallpass answer` alike:
//! who wants to write what, by whom, the scope an answer covers and the keys. Pure; the
//! callers lay the words out.

use std::path::Path;

use hallpass_proto::shown::shown;
use hallpass_proto::Question;

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
    /// `write`, `connect to`, `send to` or `change the settings of`.
    pub verb: &'static str,
    /// Every path the answer is for (both of a rename), and the service for a connection.
    pub what: String,
    /// The paths alone, and what follows them (the service), for [`Words::what_in`].
    paths: Vec<String>,
    service: String,
    /// The process chain, the writer first: `npm install ← bash ← copilot`.
    pub by: String,
    /// The scope a lasting or timed answer covers.
    pub scope: String,
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
        // A connection or a datagram to a service outside the session names what listens
        // there.
        let service = format!(" ({})", clean(&q.service));
        let (verb, service) = match q.syscall.as_str() {
            "connect" => ("connect to", service),
            "sendto" | "sendmsg" | "sendmmsg" => ("send to", service),
            // An ioctl on a terminal changes its settings, size or foreground group.
            "ioctl" if is_terminal(&q.path) => ("change the settings of", String::new()),
            _ => ("write", String::new()),
        };
        let what = format!("{}{service}", paths.join(" and "));
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
            service,
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
        let joints = 5 * (self.paths.len() - 1) + width(&self.service);
        let share = (cols.saturating_sub(joints) / self.paths.len()).max(12);
        let paths: Vec<String> = self.paths.iter().map(|p| cut_middle(p, share)).collect();
        format!("{}{}", paths.join(" and "), cut_right(&self.service, 40))
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
