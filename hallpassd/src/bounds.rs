//! How much of what the command controls the daemon shows: every text a question carries
//! (a path, the executable, the chain of command lines, the session's command, a service)
//! has a bound, and what goes past it is cut in its middle with a visible mark
//! (`…[cut 131000 bytes]…`), so that a path still shows where it starts and where it ends.
//! A whole question then stays under [`MAX_QUESTION`] bytes on the wire, whatever the command
//! does: a process may carry a 128 KiB `argv[0]`, and a question names 32 of them.
//!
//! Only what is shown is cut. The daemon keeps the real paths of a question and decides on
//! them: an answer, a lasting rule or a log line is for the path the process named, never for
//! the text a person read (a scope sent back cut does not hold the real path, and is
//! refused).
//! A leaf: it knows the wire's `Question` and nothing of the daemon.

use hallpass_proto::Question;

/// A path, each of a syscall's other paths, the suggested scope: `PATH_MAX`, so that a path
/// a program can name in one call is shown whole.
pub const MAX_PATH: usize = 4096;
/// The executable.
pub const MAX_EXE: usize = 4096;
/// The process's name (`comm` is 16 bytes).
pub const MAX_NAME: usize = 64;
/// The syscall's name (from our own table).
pub const MAX_SYSCALL: usize = 64;
/// One entry of the process chain (`npm install`).
pub const MAX_CHAIN_ENTRY: usize = 256;
/// Entries of the process chain.
pub const MAX_CHAIN: usize = 32;
/// Paths of a syscall besides the first (a rename has one).
pub const MAX_ALSO: usize = 3;
/// One argument of the session's command.
pub const MAX_ARG: usize = 1024;
/// The session's whole command, arguments together.
pub const MAX_COMMAND: usize = 8192;
/// The service a connection reaches.
pub const MAX_SERVICE: usize = 512;
/// A whole question on the wire. The bounds above add up to about 41 KiB.
pub const MAX_QUESTION: usize = 64 * 1024;

/// `s` if it fits in `max` bytes; else its start and its end around a mark saying how many
/// bytes were cut, `max` bytes at most (for `max` of 64 or more).
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    // The mark's length depends on the number in it: at most as long as the text's.
    let mark_len = mark(s.len()).len();
    let keep = max.saturating_sub(mark_len);
    let head = floor_char(s, keep / 2);
    let tail = ceil_char(s, s.len() - (keep - keep / 2));
    let mut out = String::with_capacity(max);
    out.push_str(&s[..head]);
    out.push_str(&mark(tail - head));
    out.push_str(&s[tail..]);
    out
}

/// The start of `s`, `max` bytes at most (never splitting a character).
pub fn head(s: &str, max: usize) -> &str {
    &s[..floor_char(s, max.min(s.len()))]
}

/// The mark standing for `n` bytes cut.
fn mark(n: usize) -> String {
    format!("…[cut {n} bytes]…")
}

/// The greatest char boundary of `s` at or before `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The least char boundary of `s` at or after `i`.
fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Bytes of framing counted for each entry of a list on the wire.
const FRAME: usize = 3;

/// At most `max_items` entries of at most `max_each` bytes each, about `budget` bytes in all;
/// what is left out is said by a last entry, `…[12 more]`.
fn list(items: &[String], max_items: usize, max_each: usize, budget: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for (i, item) in items.iter().enumerate() {
        let item = cut(item, max_each);
        let left = items.len() - i;
        let fits = used + item.len() + FRAME <= budget;
        // The last slot says what is left out, unless the last item fits in it.
        let room = out.len() + 1 < max_items || left == 1;
        if !(fits && room) {
            out.push(format!("…[{left} more]"));
            return out;
        }
        used += item.len() + FRAME;
        out.push(item);
    }
    out
}

/// The session's command as it is kept and shown: see [`MAX_ARG`], [`MAX_COMMAND`].
pub fn command(argv: &[String]) -> Vec<String> {
    list(argv, MAX_COMMAND, MAX_ARG, MAX_COMMAND)
}

/// A process chain as shown: see [`MAX_CHAIN`], [`MAX_CHAIN_ENTRY`].
pub fn chain(entries: &[String]) -> Vec<String> {
    list(
        entries,
        MAX_CHAIN,
        MAX_CHAIN_ENTRY,
        MAX_CHAIN * (MAX_CHAIN_ENTRY + FRAME),
    )
}

/// `q` as it is shown to subscribers: every field within its bound. Every field is named
/// here, so that a field added to `Question` gets a bound before it builds.
pub fn question(q: &Question) -> Question {
    let Question {
        id,
        session_id,
        command,
        pid,
        name,
        exe,
        syscall,
        path,
        chain,
        scope,
        timed_secs,
        asked_ms,
        also,
        number,
        service,
        change,
    } = q;
    Question {
        id: *id,
        session_id: *session_id,
        command: self::command(command),
        pid: *pid,
        name: cut(name, MAX_NAME),
        exe: cut(exe, MAX_EXE),
        syscall: cut(syscall, MAX_SYSCALL),
        path: cut(path, MAX_PATH),
        chain: self::chain(chain),
        scope: cut(scope, MAX_PATH),
        timed_secs: *timed_secs,
        asked_ms: *asked_ms,
        also: list(also, MAX_ALSO, MAX_PATH, MAX_ALSO * (MAX_PATH + FRAME)),
        number: *number,
        service: cut(service, MAX_SERVICE),
        // An enum the daemon names: nothing of the command's.
        change: *change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn short_text_is_kept() {
        assert_eq!(cut("/home/me/.npmrc", 64), "/home/me/.npmrc");
        let s = "x".repeat(64);
        assert_eq!(cut(&s, 64), s);
    }

    /// A cut path keeps its start and its end, says how much is gone, and fits.
    #[test]
    fn a_cut_path_shows_both_ends() {
        let p = format!("/home/me/{}.bashrc", "d/".repeat(70_000));
        let c = cut(&p, 4096);
        assert!(c.len() <= 4096, "{}", c.len());
        assert!(c.starts_with("/home/me/d/d/"), "{c}");
        assert!(c.ends_with("d/d/.bashrc"), "{c}");
        let (head, rest) = c.split_once("…[cut ").unwrap();
        let (n, tail) = rest.split_once(" bytes]…").unwrap();
        assert_eq!(
            head.len() + n.parse::<usize>().unwrap() + tail.len(),
            p.len()
        );
    }

    /// Cutting never splits a character.
    #[test]
    fn cuts_fall_between_characters() {
        for n in 100..140 {
            let s = "é".repeat(n) + &"日本".repeat(n);
            let c = cut(&s, 64 + n % 7);
            assert!(c.len() <= 64 + n % 7);
            assert!(c.contains("…[cut "));
        }
    }

    #[test]
    fn long_lists_say_what_they_left_out() {
        let argv: Vec<String> = (0..5000).map(|i| format!("arg{i}")).collect();
        let c = command(&argv);
        let total: usize = c.iter().map(|a| a.len() + FRAME).sum();
        assert!(total <= MAX_COMMAND + 32, "{total}");
        assert!(c.last().unwrap().starts_with("…["), "{:?}", c.last());
        assert_eq!(c[0], "arg0");
        let few = vec!["sh".to_string(), "-c".into(), "x".repeat(5000)];
        let c = command(&few);
        assert_eq!(c.len(), 3);
        assert!(c[2].len() <= MAX_ARG && c[2].contains("…[cut "));
    }

    /// Regression (issue 24): a command whose processes carry a 128 KiB `argv[0]` made
    /// questions of 4 MiB, past what a client decodes. Every field at its worst still fits.
    #[test]
    fn the_worst_question_fits() {
        let big = "a".repeat(128 * 1024);
        let q = Question {
            id: u64::MAX,
            session_id: u64::MAX,
            command: vec![big.clone(); 64],
            pid: i32::MAX,
            name: big.clone(),
            exe: big.clone(),
            syscall: big.clone(),
            path: big.clone(),
            chain: vec![big.clone(); 40],
            scope: big.clone(),
            timed_secs: u32::MAX,
            asked_ms: u64::MAX,
            also: vec![big.clone(); 10],
            number: u32::MAX,
            service: big,
            change: i32::MAX,
        };
        let shown = question(&q);
        assert!(
            shown.encoded_len() <= MAX_QUESTION,
            "{}",
            shown.encoded_len()
        );
        assert_eq!(shown.chain.len(), MAX_CHAIN);
        assert_eq!(shown.also.len(), MAX_ALSO);
        assert_eq!((shown.id, shown.number), (q.id, q.number));
    }
}
