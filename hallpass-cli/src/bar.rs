//! The prompt bar: what a question looks like at the bottom of the terminal, and how its
//! scope is widened or narrowed. Pure functions; `terminal.rs` draws the result.

use std::path::{Path, PathBuf};

use hallpass_proto::Question;

/// `s` fit to draw on a terminal: control characters (escape sequences in a process name or
/// a path could redraw the bar) and bidirectional overrides shown escaped, not obeyed.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_control()
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
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

/// The scope one level wider: the parent directory, but never `/`, `home` or above it.
pub fn wider(scope: &Path, home: &Path) -> PathBuf {
    match scope.parent() {
        Some(p) if p != Path::new("/") && p.parent().is_some() && !home.starts_with(p) => {
            p.to_path_buf()
        }
        _ => scope.to_path_buf(),
    }
}

/// What a key does to the question shown, in the bar and in `hallpass answer` alike.
pub enum KeyAction {
    Answer(hallpass_proto::Answer),
    Wider,
    Narrower,
}

/// The question keys: `o` `t` `a` `d` `n`, and `+` (or `=`) / `-` for the scope.
pub fn key_action(b: u8) -> Option<KeyAction> {
    use hallpass_proto::Answer;
    Some(match b {
        b'o' => KeyAction::Answer(Answer::Once),
        b't' => KeyAction::Answer(Answer::Timed),
        b'a' => KeyAction::Answer(Answer::Always),
        b'd' => KeyAction::Answer(Answer::Deny),
        b'n' => KeyAction::Answer(Answer::Never),
        b'+' | b'=' => KeyAction::Wider,
        b'-' => KeyAction::Narrower,
        _ => return None,
    })
}

/// The user's home, for [`wider`].
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The scope one level narrower, toward `path`: at most `path` itself.
pub fn narrower(scope: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(scope) {
        Ok(rest) => match rest.components().next() {
            Some(c) => scope.join(c),
            None => scope.to_path_buf(),
        },
        Err(_) => path.to_path_buf(),
    }
}

/// Cuts `s` to `width` characters, dropping from the left with `…` (the end of a path is
/// what tells it apart).
fn cut_left(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let keep: String = s.chars().skip(n - (width - 1)).collect();
    format!("…{keep}")
}

/// Cuts `s` to `width` characters from the right.
fn cut_right(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(width - 1).collect();
    t.push('…');
    t
}

/// The bar's lines, plain text, each at most `cols` characters: four when there is room,
/// one on a terminal of fewer than 8 rows. `waiting` is how many more questions queue.
pub fn lines(q: &Question, scope: &Path, waiting: usize, rows: u16, cols: u16) -> Vec<String> {
    let w = cols as usize;
    let who = if q.name.is_empty() {
        format!("pid {}", q.pid)
    } else {
        format!("{} (pid {})", clean(&q.name), q.pid)
    };
    // Every path the answer is for (both of a rename).
    let what = std::iter::once(&q.path)
        .chain(&q.also)
        .map(|p| clean(p))
        .collect::<Vec<_>>()
        .join(" and ");
    let (verb, what) = crate::answer::verb_and_what(q, what);
    let more = match waiting {
        0 => String::new(),
        1 => "  [1 more waiting]".into(),
        n => format!("  [{n} more waiting]"),
    };
    let keys = format!(
        "[o] allow once  [t] for {}  [a] always  [d] deny  [n] never",
        duration(q.timed_secs)
    );
    let scope = clean(&scope.to_string_lossy());
    if rows < 8 {
        let head = format!("hallpass: {who} wants to {verb} ");
        let tail = format!("  {keys}{more}");
        let room = w.saturating_sub(head.chars().count() + tail.chars().count());
        return vec![cut_right(
            &format!("{head}{}{tail}", cut_left(&what, room.max(12))),
            w,
        )];
    }
    let head = format!("hallpass: {who} wants to {verb} ");
    let room = w.saturating_sub(head.chars().count() + more.chars().count());
    let first = format!("{head}{}{more}", cut_left(&what, room.max(12)));
    let chain: Vec<String> = q.chain.iter().map(|c| clean(c)).collect();
    let by = format!("  by: {}", chain.join(" ← "));
    let scope_tail = "   [+]/[-] wider/narrower";
    let lead = "  [t] and [a] allow, [n] denies: ";
    let room = w.saturating_sub(lead.chars().count() + scope_tail.len());
    let third = format!("{lead}{}{scope_tail}", cut_left(&scope, room.max(12)));
    vec![
        cut_right(&first, w),
        cut_right(&by, w),
        cut_right(&third, w),
        cut_right(&format!("  {keys}"), w),
    ]
}

/// The short help for `Ctrl-]` followed by a key it does not know.
pub const ESCAPE_HELP: &str =
    "hallpass: after Ctrl-]: [s] stop the session  [Ctrl-]] send Ctrl-] to the command  (any key: back)";

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> Question {
        Question {
            id: 7,
            session_id: 1,
            pid: 41237,
            name: "node".into(),
            path: "/home/me/.npm/_cacache/tmp/x".into(),
            chain: vec!["npm install".into(), "bash".into(), "copilot".into()],
            scope: "/home/me/.npm/_cacache".into(),
            timed_secs: 300,
            syscall: "openat".into(),
            ..Default::default()
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration(300), "5m0s");
        assert_eq!(duration(90), "1m30s");
        assert_eq!(duration(2), "2s");
        assert_eq!(duration(3600), "1h0m0s");
    }

    #[test]
    fn the_bar_says_who_what_by_whom_and_the_keys() {
        let l = lines(&q(), Path::new("/home/me/.npm/_cacache"), 1, 30, 120);
        assert_eq!(
            l,
            vec![
                "hallpass: node (pid 41237) wants to write /home/me/.npm/_cacache/tmp/x  [1 more waiting]",
                "  by: npm install ← bash ← copilot",
                "  [t] and [a] allow, [n] denies: /home/me/.npm/_cacache   [+]/[-] wider/narrower",
                "  [o] allow once  [t] for 5m0s  [a] always  [d] deny  [n] never",
            ]
        );
        // Narrow terminals cut, never wrap; the end of the path stays.
        for l in lines(&q(), Path::new("/home/me/.npm/_cacache"), 0, 30, 40) {
            assert!(l.chars().count() <= 40, "{l}");
        }
        let short = lines(&q(), Path::new("/home/me/.npm"), 0, 5, 200);
        assert_eq!(short.len(), 1);
        assert!(short[0].contains("/home/me/.npm/_cacache/tmp/x"));
        assert!(short[0].contains("[o] allow once"));
    }

    #[test]
    fn scopes_widen_and_narrow() {
        let path = Path::new("/home/me/.npm/_cacache/tmp/x");
        let s = Path::new("/home/me/.npm/_cacache");
        let home = Path::new("/home/me");
        assert_eq!(wider(s, home), PathBuf::from("/home/me/.npm"));
        // Never the home directory, nor above it, nor /.
        assert_eq!(
            wider(Path::new("/home/me/.npm"), home),
            PathBuf::from("/home/me/.npm")
        );
        assert_eq!(wider(Path::new("/etc"), home), PathBuf::from("/etc"));
        assert_eq!(wider(Path::new("/etc/x"), home), PathBuf::from("/etc"));
        assert_eq!(
            narrower(s, path),
            PathBuf::from("/home/me/.npm/_cacache/tmp")
        );
        assert_eq!(narrower(path, path), path.to_path_buf());
        assert_eq!(cut_left("abcdef", 4), "…def");
    }

    #[test]
    fn what_a_process_names_is_shown_not_obeyed() {
        assert_eq!(clean("a\x1b[1Ab\nc\u{202e}d"), "a\\e[1Ab\\nc\\u{202e}d");
        let mut q = q();
        q.name = "\x1b[2J".into();
        q.also = vec!["/home/me/.bashrc".into()];
        let l = lines(&q, Path::new("/x"), 0, 30, 200);
        assert!(!l.iter().any(|x| x.contains('\x1b')), "{l:?}");
        assert!(
            l[0].contains("/home/me/.npm/_cacache/tmp/x and /home/me/.bashrc"),
            "{l:?}"
        );
    }
}
