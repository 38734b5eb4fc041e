//! What the person's typing is for while hallpass relays the command's terminal: the
//! command's, the escape key's (`Ctrl-]`), a notice's or a question's. Pure: `terminal.rs`
//! acts on the result.

/// The escape prefix, like telnet's: Ctrl-].
pub const ESCAPE: u8 = 0x1d;

/// What one byte typed is for.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    /// The command's: sent on.
    Command(u8),
    /// `Ctrl-] s`: stop the command.
    Stop,
    /// `Ctrl-]` then another key: show what the escape keys are.
    Help,
    /// A key that takes a notice away, and does nothing else (it was not meant for a question
    /// the notice hid).
    Dismiss,
    /// A lone keypress while a question is up: the question's.
    Key(u8),
    /// Typed while a question is up, but part of a paste: nobody's.
    Dropped,
}

/// Routes `bytes`, one read of the person's typing. `escape`: `Ctrl-]` was the last key,
/// carried from read to read. `notice`: a notice is up. `asking`: a question is up. A
/// paste arrives as one read: only a lone keypress answers a question.
pub fn route(bytes: &[u8], escape: &mut bool, mut notice: bool, asking: bool) -> Vec<Typed> {
    let lone = bytes.len() == 1;
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        let t = if std::mem::take(escape) {
            match b {
                b's' | b'S' => Typed::Stop,
                ESCAPE => Typed::Command(ESCAPE),
                _ => Typed::Help,
            }
        } else if b == ESCAPE {
            *escape = true;
            continue;
        } else if notice {
            Typed::Dismiss
        } else if asking {
            if lone {
                Typed::Key(b)
            } else {
                Typed::Dropped
            }
        } else {
            Typed::Command(b)
        };
        match t {
            Typed::Help => notice = true,
            Typed::Dismiss => notice = false,
            _ => {}
        }
        out.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Typed::*;

    fn typed(bytes: &[u8], notice: bool, asking: bool) -> Vec<Typed> {
        route(bytes, &mut false, notice, asking)
    }

    #[test]
    fn typing_goes_to_the_command() {
        assert_eq!(
            typed(b"ls\r", false, false),
            [Command(b'l'), Command(b's'), Command(b'\r')]
        );
    }

    #[test]
    fn the_escape_key_stops_passes_itself_or_shows_help() {
        assert_eq!(typed(&[ESCAPE, b's'], false, false), [Stop]);
        assert_eq!(typed(&[ESCAPE, b'S'], false, true), [Stop]);
        assert_eq!(typed(&[ESCAPE, ESCAPE], false, false), [Command(ESCAPE)]);
        // Any other key: the help, which the next key takes away.
        assert_eq!(typed(&[ESCAPE, b'x', b'y'], false, false), [Help, Dismiss]);
        // Carried from one read to the next.
        let mut escape = false;
        assert_eq!(route(&[ESCAPE], &mut escape, false, false), []);
        assert!(escape);
        assert_eq!(route(b"s", &mut escape, false, false), [Stop]);
        assert!(!escape);
    }

    #[test]
    fn a_notice_is_taken_away_by_the_next_key_alone() {
        assert_eq!(typed(b"ab", true, false), [Dismiss, Command(b'b')]);
        // Not answering the question it hid.
        assert_eq!(typed(b"o", true, true), [Dismiss]);
    }

    #[test]
    fn only_a_lone_key_answers_a_question() {
        assert_eq!(typed(b"o", false, true), [Key(b'o')]);
        assert_eq!(typed(b"od", false, true), [Dropped, Dropped]);
        // The escape keys still work while a question is up.
        assert_eq!(typed(&[ESCAPE, ESCAPE], false, true), [Command(ESCAPE)]);
    }
}
