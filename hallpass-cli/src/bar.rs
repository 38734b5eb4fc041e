//! The prompt bar: how a question is laid out at the bottom of the terminal. Pure
//! functions; `terminal.rs` draws the result, `questions/text.rs` gives the words.

use std::path::Path;

use hallpass_proto::Question;

use crate::questions::text::{clean, cut_left, cut_right, keys, Words, SCOPE_LEAD};

/// What the keys line says while the person is typing: keys then answer nothing.
pub const TYPING: &str = "(you are typing: the keys answer once you pause)";

/// The bar's lines, plain text, each at most `cols` characters: four when there is room,
/// one on a terminal of fewer than 8 rows. `waiting` is how many more questions queue;
/// `typing`: the person is typing, and the keys wait for a pause.
pub fn lines(
    q: &Question,
    scope: &Path,
    waiting: usize,
    typing: bool,
    (rows, cols): (u16, u16),
) -> Vec<String> {
    let w = cols as usize;
    let words = Words::of(q, scope, &clean);
    let (who, verb, what) = (&words.who, words.verb, &words.what);
    let more = match waiting {
        0 => String::new(),
        1 => "  [1 more waiting]".into(),
        n => format!("  [{n} more waiting]"),
    };
    let keys = if typing {
        TYPING.to_string()
    } else {
        keys(q.timed_secs)
    };
    let head = format!("hallpass: {who} wants to {verb} ");
    if rows < 8 {
        let tail = format!("  {keys}{more}");
        let room = w.saturating_sub(head.chars().count() + tail.chars().count());
        return vec![cut_right(
            &format!("{head}{}{tail}", cut_left(what, room.max(12))),
            w,
        )];
    }
    let room = w.saturating_sub(head.chars().count() + more.chars().count());
    let first = format!("{head}{}{more}", cut_left(what, room.max(12)));
    let by = format!("  by: {}", words.by);
    let scope_tail = "   [+]/[-] wider/narrower";
    let lead = format!("  {SCOPE_LEAD}");
    let room = w.saturating_sub(lead.chars().count() + scope_tail.len());
    let third = format!("{lead}{}{scope_tail}", cut_left(&words.scope, room.max(12)));
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
    fn the_bar_says_who_what_by_whom_and_the_keys() {
        let l = lines(
            &q(),
            Path::new("/home/me/.npm/_cacache"),
            1,
            false,
            (30, 120),
        );
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
        for l in lines(
            &q(),
            Path::new("/home/me/.npm/_cacache"),
            0,
            false,
            (30, 40),
        ) {
            assert!(l.chars().count() <= 40, "{l}");
        }
        let short = lines(&q(), Path::new("/home/me/.npm"), 0, false, (5, 200));
        assert_eq!(short.len(), 1);
        assert!(short[0].contains("/home/me/.npm/_cacache/tmp/x"));
        assert!(short[0].contains("[o] allow once"));
        // While the person types, the keys line says they wait.
        let typing = lines(&q(), Path::new("/home/me/.npm"), 0, true, (30, 120));
        assert_eq!(typing[3], format!("  {TYPING}"));
        let typing = lines(&q(), Path::new("/home/me/.npm"), 0, true, (5, 200));
        assert!(typing[0].contains(TYPING), "{typing:?}");
    }

    #[test]
    fn what_a_process_names_is_shown_not_obeyed() {
        let mut q = q();
        q.name = "\x1b[2J".into();
        q.also = vec!["/home/me/.bashrc".into()];
        let l = lines(&q, Path::new("/x"), 0, false, (30, 200));
        assert!(!l.iter().any(|x| x.contains('\x1b')), "{l:?}");
        assert!(
            l[0].contains("/home/me/.npm/_cacache/tmp/x and /home/me/.bashrc"),
            "{l:?}"
        );
    }
}
