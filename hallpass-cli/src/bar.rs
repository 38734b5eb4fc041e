//! The prompt bar: how a question is laid out at the bottom of the terminal. Pure
//! functions; `terminal.rs` draws the result, `questions/text.rs` gives the words.

use std::path::Path;

use hallpass_proto::Question;

use crate::questions::model::Keys;
use crate::questions::text::{clean, cut_middle, cut_right, keys, width, Words, SCOPE_LEAD};

/// What the keys line says while the person is typing: keys then answer nothing.
pub const TYPING: &str = "(you are typing: the keys answer once you pause)";

/// What the keys line says of a question that came as the person typed.
pub const WAKE: &str = "(this came as you typed: press a key to take it, then answer)";

/// The bar's lines, plain text, each at most `cols` characters: four when there is room,
/// one on a terminal of fewer than 8 rows. `waiting` is how many more questions queue;
/// `state`, what the keys do now.
pub fn lines(
    q: &Question,
    scope: &Path,
    waiting: usize,
    state: Keys,
    (rows, cols): (u16, u16),
) -> Vec<String> {
    let w = cols as usize;
    let words = Words::of(q, scope, &clean);
    let (who, verb) = (&words.who, words.verb);
    let more = match waiting {
        0 => String::new(),
        1 => "  [1 more waiting]".into(),
        n => format!("  [{n} more waiting]"),
    };
    let keys = match state {
        Keys::Ready => keys(q.timed_secs),
        Keys::Typing => TYPING.to_string(),
        Keys::Wake => WAKE.to_string(),
    };
    // A long name of the process must not push the path out.
    let who = cut_right(who, (w / 4).max(12));
    let head = format!("hallpass: {who} wants to {verb} ");
    if rows < 8 {
        let tail = format!("  {keys}{more}");
        let room = w.saturating_sub(width(&head) + width(&tail));
        return vec![cut_right(
            &format!("{head}{}{tail}", words.what_in(room.max(12))),
            w,
        )];
    }
    let room = w.saturating_sub(width(&head) + width(&more));
    let first = format!("{head}{}{more}", words.what_in(room.max(12)));
    let by = format!("  by: {}", words.by);
    let scope_tail = "   [+]/[-] wider/narrower";
    let lead = format!("  {SCOPE_LEAD}");
    let room = w.saturating_sub(width(&lead) + scope_tail.len());
    let third = format!(
        "{lead}{}{scope_tail}",
        cut_middle(&words.scope, room.max(12))
    );
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
            Keys::Ready,
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
            Keys::Ready,
            (30, 40),
        ) {
            assert!(width(&l) <= 40, "{l}");
        }
        let short = lines(&q(), Path::new("/home/me/.npm"), 0, Keys::Ready, (5, 200));
        assert_eq!(short.len(), 1);
        assert!(short[0].contains("/home/me/.npm/_cacache/tmp/x"));
        assert!(short[0].contains("[o] allow once"));
        // While the person types, the keys line says they wait.
        let typing = lines(&q(), Path::new("/home/me/.npm"), 0, Keys::Typing, (30, 120));
        assert_eq!(typing[3], format!("  {TYPING}"));
        let typing = lines(&q(), Path::new("/home/me/.npm"), 0, Keys::Typing, (5, 200));
        assert!(typing[0].contains(TYPING), "{typing:?}");
    }

    /// A name made long, wide or to look like another path cannot push out where the
    /// write is: the path is cut in its middle, by the columns it takes.
    #[test]
    fn where_the_write_is_stays_in_sight() {
        let mut q = q();
        q.path = format!("/tmp/outside/{}∕home∕me∕project∕notes.txt", " ".repeat(70));
        let l = lines(&q, Path::new("/tmp/outside"), 0, Keys::Ready, (30, 100));
        assert!(l[0].contains("wants to write /tmp/outside/"), "{l:?}");
        assert!(l[0].contains("notes.txt"), "{l:?}");
        q.path = format!("/tmp/outside/{}-REAL-END.sh", "漢".repeat(60));
        q.name = "n".repeat(300);
        for l in lines(&q, Path::new("/tmp/outside"), 3, Keys::Ready, (30, 100)) {
            assert!(width(&l) <= 100, "{l}");
        }
        let l = lines(&q, Path::new("/tmp/outside"), 3, Keys::Ready, (30, 100));
        assert!(
            l[0].contains("/tmp/outside/") && l[0].ends_with("  [3 more waiting]"),
            "{l:?}"
        );
        assert!(l[0].contains("-REAL-END.sh"), "{l:?}");
    }

    #[test]
    fn what_a_process_names_is_shown_not_obeyed() {
        let mut q = q();
        q.name = "\x1b[2J".into();
        q.also = vec!["/home/me/.bashrc".into()];
        let l = lines(&q, Path::new("/x"), 0, Keys::Ready, (30, 200));
        assert!(!l.iter().any(|x| x.contains('\x1b')), "{l:?}");
        assert!(
            l[0].contains("/home/me/.npm/_cacache/tmp/x and /home/me/.bashrc"),
            "{l:?}"
        );
    }
}
