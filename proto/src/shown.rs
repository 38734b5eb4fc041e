//! Text the command controls, made fit for a person to read: the one way a path, a process
//! name, a command line, a service or a host reaches a person, in every client, in the log
//! tools and in the daemon's own messages.
//!
//! A name the command chose is shown, never obeyed: an escape sequence in a file name could
//! erase the lines above it, set the clipboard (OSC 52) or draw a fake question; a line break
//! could add a line that reads like something hallpass said; a bidirectional override or an
//! invisible character could make one path read as another. So the rule is an allowlist: a
//! character is shown as itself only if it is printable and visible (a letter, mark, number,
//! punctuation, symbol, or the space between words); anything else is written as an escape:
//!
//! | what | shown as |
//! | --- | --- |
//! | `\` itself | `\\` |
//! | escape, line feed, carriage return, tab | `\e`, `\n`, `\r`, `\t` |
//! | other C0 controls, DEL | `\x01` ... `\x1f`, `\x7f` |
//! | a byte that is not UTF-8 (a path is bytes) | `\xff` (always 80 or above) |
//! | any other character not shown as itself | `\u{202e}` (its code point, lowercase hex) |
//! | a space at either end | `\x20` |
//!
//! Not shown as themselves: every C0 and C1 control; format characters (bidirectional
//! controls U+202A–202E, U+2066–2069, U+200E/200F, U+061C; zero-width space, joiners, word
//! joiner, BOM, soft hyphen, invisible operators U+2061–2064, tag characters); line and
//! paragraph separators; spaces other than U+0020; private-use and unassigned code points;
//! every Default_Ignorable_Code_Point of Unicode (variation selectors, Hangul fillers,
//! combining grapheme joiner...), which render as nothing; U+2800 (a blank braille pattern);
//! U+FFFD, which stands for bytes a program could not decode, so the name is not what it
//! shows; and a combining mark that does not follow a letter or number (or follows more than
//! [`MAX_MARKS`] others), which would draw over what is before it.
//!
//! Every `\` of the output starts an escape, so the output is unambiguous: two different
//! names are never shown alike, and what was shown can be decoded back to the bytes.
//! Printability is Rust's own (`char::escape_debug`, from the Unicode tables of the
//! compiler): letters, marks, numbers, punctuation, symbols and U+0020, not controls, format
//! characters, separators other than U+0020, surrogates, private use or unassigned.
//!
//! JSON written for a person to read too (`--json` outputs, the `--log` file) goes through
//! [`json`]: the same characters escaped, in JSON's own syntax (`\u202e`), so a parser reads
//! the same strings and a terminal shows them inert.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;

/// At most this many combining marks in a row are shown on one letter: enough for any
/// script's accents and vowel signs, not a stack that draws over the line above.
pub const MAX_MARKS: usize = 4;

/// `s` (a `str`, `String`, `Path`, `OsStr`...) as a person may see it; see the module.
/// `format!("{}", shown(path))`, or `shown(path).to_string()`.
pub fn shown<S: AsRef<OsStr> + ?Sized>(s: &S) -> Shown<'_> {
    Shown(s.as_ref().as_bytes())
}

/// Whether `s` is shown as it is, but for `\` and spaces at its ends (which quoting makes
/// plain): valid UTF-8 with every character printable and visible. A name that is not can
/// only be typed by hand: a person must never paste what names another file than the one
/// they read.
pub fn plain<S: AsRef<OsStr> + ?Sized>(s: &S) -> bool {
    let Ok(text) = std::str::from_utf8(s.as_ref().as_bytes()) else {
        return false;
    };
    let mut marks = Marks::default();
    text.chars().all(|c| marks.raw(c))
}

/// Text made visible (see [`shown`]); `Display` writes it, honouring width and alignment.
#[derive(Clone, Copy)]
pub struct Shown<'a>(&'a [u8]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(self.0.len());
        let mut marks = Marks::default();
        let len = self.0.len();
        let mut at = 0;
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                let end = at == 0 || at + c.len_utf8() == len;
                at += c.len_utf8();
                if c == ' ' && end {
                    marks.after_escape();
                    out.push_str("\\x20");
                } else if c == '\\' {
                    marks.after_escape();
                    out.push_str("\\\\");
                } else if marks.raw(c) {
                    out.push(c);
                } else {
                    escape(c, &mut out);
                }
            }
            for b in chunk.invalid() {
                at += 1;
                marks.after_escape();
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        f.pad(&out)
    }
}

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// `c`, which is not shown as itself, as an escape.
fn escape(c: char, out: &mut String) {
    match c {
        '\x1b' => out.push_str("\\e"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// What decides a combining mark: the character before it, and how many marks it has.
#[derive(Default)]
struct Marks {
    /// The last character was a letter or number shown as itself, or a mark on one.
    on_base: bool,
    /// Marks shown on it so far.
    count: usize,
}

impl Marks {
    /// Whether `c` is shown as itself here (`\` aside, which the caller escapes).
    fn raw(&mut self, c: char) -> bool {
        let raw = match kind(c) {
            Kind::Visible => {
                self.on_base = c.is_alphanumeric();
                self.count = 0;
                true
            }
            Kind::Mark if self.on_base && self.count < MAX_MARKS => {
                self.count += 1;
                true
            }
            Kind::Mark | Kind::Hidden => false,
        };
        if !raw {
            self.after_escape();
        }
        raw
    }

    /// An escape was written: a mark after it has nothing to sit on.
    fn after_escape(&mut self) {
        self.on_base = false;
        self.count = 0;
    }
}

enum Kind {
    /// Printable and visible on its own.
    Visible,
    /// A combining mark (grapheme extender): drawn on the character before it.
    Mark,
    /// Never shown as itself.
    Hidden,
}

fn kind(c: char) -> Kind {
    if c.is_ascii() {
        return if c.is_ascii_graphic() || c == ' ' {
            Kind::Visible
        } else {
            Kind::Hidden
        };
    }
    if ignorable(c) || c == '\u{2800}' || c == '\u{fffd}' || !printable(c) {
        return Kind::Hidden;
    }
    // `char::escape_debug` escapes a printable character only if it extends a grapheme.
    if c.escape_debug().next() == Some('\\') {
        Kind::Mark
    } else {
        Kind::Visible
    }
}

/// Rust's printability (`str::escape_debug` leaves a grapheme extender after a letter as it
/// is, and escapes what is not printable).
fn printable(c: char) -> bool {
    let mut buf = [0u8; 5];
    buf[0] = b'a';
    let n = 1 + c.encode_utf8(&mut buf[1..]).len();
    let s = std::str::from_utf8(&buf[..n]).unwrap_or("");
    let mut e = s.escape_debug();
    e.next() == Some('a') && e.next() == Some(c) && e.next().is_none()
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that
/// render as nothing where they are not supported, and often where they are.
fn ignorable(c: char) -> bool {
    const RANGES: &[(u32, u32)] = &[
        (0x00ad, 0x00ad),
        (0x034f, 0x034f),
        (0x061c, 0x061c),
        (0x115f, 0x1160),
        (0x17b4, 0x17b5),
        (0x180b, 0x180f),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x206f),
        (0x3164, 0x3164),
        (0xfe00, 0xfe0f),
        (0xfeff, 0xfeff),
        (0xffa0, 0xffa0),
        (0xfff0, 0xfff8),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0000, 0xe0fff),
    ];
    let c = c as u32;
    RANGES.iter().any(|&(a, b)| (a..=b).contains(&c))
}

/// `value` as one line of JSON, every character that [`shown`] would escape written as a
/// JSON escape (`\u202e`, a surrogate pair above U+FFFF): the same value to a parser, inert
/// on a terminal.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Inert);
    value.serialize(&mut ser)?;
    Ok(out)
}

/// serde_json's compact formatter, with the characters it leaves raw that are not plain
/// escaped too (it escapes only `"`, `\` and C0 controls).
struct Inert;

impl serde_json::ser::Formatter for Inert {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            // Context-free: a mark is escaped even on a letter (JSON readers decode it).
            if matches!(kind(c), Kind::Visible) {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{u:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests;
