//! Whose each of the terminal's answers to a device attributes query (DA1) is. The bar asks
//! one after drawing a question, and takes keys only once the terminal answers it: the
//! answer comes after everything sent before it was shown, so a key the person pressed
//! while the terminal still showed older output (a flood of it, a slow link) comes before
//! it in the input and answers nothing. The command asks its own, which the filter counts;
//! the terminal answers in order, so the answers are matched to the queries in order. Pure:
//! `terminal.rs` feeds it and acts on what it says.

use std::collections::VecDeque;

/// A DA1 query waiting for the terminal's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    /// The command's: the answer is passed on to it.
    Command,
    /// The bar's, sent once question `id` was drawn.
    Bar(u64),
}

/// The queries sent, oldest first.
#[derive(Default)]
pub struct Acks {
    waiting: VecDeque<Asker>,
}

impl Acks {
    /// `n` queries of the command reached the terminal.
    pub fn command_asked(&mut self, n: usize) {
        self.waiting
            .extend(std::iter::repeat_n(Asker::Command, n.min(1024)));
        // A terminal that never answers must not make this grow without end.
        while self.waiting.len() > 1024 {
            self.waiting.pop_front();
        }
    }

    /// Whether the bar asks for question `id` now: not while its query is still waiting.
    pub fn bar_asks(&mut self, id: u64) -> bool {
        if self.waiting.contains(&Asker::Bar(id)) {
            return false;
        }
        self.waiting.push_back(Asker::Bar(id));
        true
    }

    /// The terminal answered: whose answer it is (the command's if nobody's is waiting, as
    /// for a query sent before the session).
    pub fn answered(&mut self) -> Asker {
        self.waiting.pop_front().unwrap_or(Asker::Command)
    }

    /// The bar's queries are void (the questions were): their answers go nowhere.
    pub fn forget_bar(&mut self) {
        for a in self.waiting.iter_mut() {
            if matches!(a, Asker::Bar(_)) {
                *a = Asker::Bar(u64::MAX);
            }
        }
    }
}

/// A piece of what was read from the terminal: typed bytes, or an answer to DA1.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    Typed(&'a [u8]),
    Answer(&'a [u8]),
}

/// Splits a read into typed bytes and DA1 answers (`ESC [ ? digits and ; c`), in order.
pub fn pieces(bytes: &[u8]) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match answer_at(&bytes[i..]) {
            Some(n) => {
                if i > start {
                    out.push(Piece::Typed(&bytes[start..i]));
                }
                out.push(Piece::Answer(&bytes[i..i + n]));
                i += n;
                start = i;
            }
            None => i += 1,
        }
    }
    if start < bytes.len() {
        out.push(Piece::Typed(&bytes[start..]));
    }
    out
}

/// The length of a DA1 answer at the start of `b`, if there is one.
fn answer_at(b: &[u8]) -> Option<usize> {
    let rest = b.strip_prefix(b"\x1b[?")?;
    let n = rest
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b';')
        .count();
    (n > 0 && rest.get(n) == Some(&b'c')).then_some(3 + n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_found_among_keys() {
        assert_eq!(pieces(b"o"), [Piece::Typed(b"o")]);
        assert_eq!(
            pieces(b"ab\x1b[?1;2cd\x1b[?62;22c"),
            [
                Piece::Typed(b"ab"),
                Piece::Answer(b"\x1b[?1;2c"),
                Piece::Typed(b"d"),
                Piece::Answer(b"\x1b[?62;22c"),
            ]
        );
        // Not an answer: an arrow key, a DA2 answer, a cut one.
        for b in [&b"\x1b[A"[..], b"\x1b[>1;2c", b"\x1b[?1;2", b"\x1b[?c"] {
            assert_eq!(pieces(b), [Piece::Typed(b)], "{b:?}");
        }
    }

    #[test]
    fn answers_go_to_who_asked_in_order() {
        let mut a = Acks::default();
        a.command_asked(2);
        assert!(a.bar_asks(7));
        assert!(!a.bar_asks(7), "one query per question at a time");
        a.command_asked(1);
        assert_eq!(a.answered(), Asker::Command);
        assert_eq!(a.answered(), Asker::Command);
        assert_eq!(a.answered(), Asker::Bar(7));
        assert_eq!(a.answered(), Asker::Command);
        // Nobody waiting: the command's (a query from before the session).
        assert_eq!(a.answered(), Asker::Command);
        assert!(a.bar_asks(8));
        a.forget_bar();
        assert_eq!(a.answered(), Asker::Bar(u64::MAX));
    }
}
