//! What of the command's output reaches the person's terminal. The terminal is the person's,
//! not the command's: whatever the command prints there must leave the prompt bar where it is
//! and as it was drawn. So the output is parsed (ECMA-48, with `vte`, as the screen model
//! parses it) and rebuilt from an allowlist: text, the usual control characters, cursor
//! movement, erasing, colours and attributes, and the modes a program needs to run (keypad,
//! mouse, bracketed paste, the alternate screen). Anything else is dropped: sequences that
//! reach beyond the screen (the clipboard, window operations, the colour palette, device
//! control strings, printer modes, images) and those we do not know.
//!
//! Of what passes, a few modes change where and how later text is drawn: the scroll region
//! (DECSTBM), origin mode (DECOM), insert mode (IRM) and autowrap (DECAWM). The filter keeps
//! the state they leave the terminal in ([`Drawing`]), so that the bar is drawn from a known
//! state ([`NEUTRAL`]) and the command's is given back afterwards ([`Drawing::restore`]).
//! Character sets are translated here (DEC line drawing to Unicode), so the terminal's never
//! change; so are the few sequences the screen model does not follow into ones it does
//! (index and next line, the SCO and 1048 cursor saves, relative positioning, forward tabs),
//! so that what it redraws after the bar is what the terminal showed. The filter counts the
//! device attribute queries it passes (DA1), whose answers are the command's. See ECMA-48,
//! and xterm's ctlseqs for the private modes.

use vte::{Params, Parser, Perform};

/// Puts the terminal in the state the bar is drawn in, whatever the command left: the whole
/// screen as scroll region, origin mode, insert mode and autowrap off, no left/right margins,
/// the ASCII character set and the primary font (SGR 10: the Linux console keeps 11 and 12
/// past SGR 0), plain attributes, no hyperlink open (the bar is no link). The cursor ends
/// at the top left (setting the scroll region homes it).
pub const NEUTRAL: &str =
    "\x1b[?69l\x1b[r\x1b[?6l\x1b[4l\x1b[?7l\x0f\x1b(B\x1b[0m\x1b[10m\x1b]8;;\x1b\\";

/// A primary device attributes query (DA1): every terminal answers it, in order with what
/// it was sent after, so its answer says the terminal has shown all that came before.
pub const DA1: &str = "\x1b[c";

/// The drawing state the command's output left in the terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawing {
    /// The scroll region set with DECSTBM, 1-based and inclusive; `None`: the whole screen.
    pub region: Option<(u16, u16)>,
    /// DECOM: cursor addresses are relative to the scroll region.
    pub origin: bool,
    /// IRM: text is inserted, shifting what is right of the cursor.
    pub insert: bool,
    /// DECAWM: text wraps at the right margin.
    pub autowrap: bool,
}

impl Default for Drawing {
    fn default() -> Drawing {
        Drawing {
            region: None,
            origin: false,
            insert: false,
            autowrap: true,
        }
    }
}

impl Drawing {
    /// Sequences that bring a terminal in [`NEUTRAL`] state back to this one, with the cursor
    /// at `cursor` (0-based row and column, as the screen model has it). `at_cursor` is how
    /// the model itself puts the cursor back (it knows about a wrap pending at the end of a
    /// line): used where addresses are absolute, that is without origin mode.
    pub fn restore(&self, cursor: (u16, u16), at_cursor: &str) -> String {
        let mut s = String::new();
        if let Some((top, bottom)) = self.region {
            s.push_str(&format!("\x1b[{top};{bottom}r"));
        }
        if self.origin {
            s.push_str("\x1b[?6h");
        }
        if self.autowrap {
            s.push_str("\x1b[?7h");
        }
        // Both of the above moved the cursor home: place it now.
        match (self.origin, self.region) {
            (true, Some((top, _))) => {
                let row = cursor.0.saturating_sub(top - 1);
                s.push_str(&format!("\x1b[{};{}H", row + 1, cursor.1 + 1));
            }
            _ => s.push_str(at_cursor),
        }
        if self.insert {
            s.push_str("\x1b[4h");
        }
        s
    }
}

/// A character set that G0 or G1 may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Charset {
    #[default]
    Ascii,
    /// DEC Special Graphics (line drawing), `ESC ( 0`.
    Graphics,
}

/// Which character sets are designated and which is invoked (SO/SI).
#[derive(Clone, Copy, Debug, Default)]
struct Charsets {
    g0: Charset,
    g1: Charset,
    /// SO: G1 is in use.
    shifted: bool,
}

impl Charsets {
    fn current(&self) -> Charset {
        if self.shifted {
            self.g1
        } else {
            self.g0
        }
    }
}

/// What DECSC saves that the filter follows.
#[derive(Clone, Copy, Debug, Default)]
struct Saved {
    origin: bool,
    charsets: Charsets,
}

/// See the module's doc.
pub struct Filter {
    parser: Parser,
    emit: Emit,
}

struct Emit {
    out: Vec<u8>,
    drawing: Drawing,
    charsets: Charsets,
    saved: Saved,
    /// The screen's height, to tell a valid scroll region from one the terminal ignores.
    rows: u16,
    /// DA1 queries passed since [`Filter::take_queries`] last asked.
    queries: usize,
}

impl Filter {
    pub fn new(rows: u16) -> Filter {
        Filter {
            parser: Parser::new(),
            emit: Emit {
                out: Vec::new(),
                drawing: Drawing::default(),
                charsets: Charsets::default(),
                saved: Saved::default(),
                rows,
                queries: 0,
            },
        }
    }

    /// The screen's height changed.
    pub fn resize(&mut self, rows: u16) {
        self.emit.rows = rows;
        if let Some((_, bottom)) = self.emit.drawing.region {
            if bottom > rows {
                self.emit.drawing.region = None;
            }
        }
    }

    /// Passes `bytes` of the command's output; returns what of it may reach the terminal.
    /// A sequence cut between two calls is completed by the next.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.emit.out.reserve(bytes.len());
        self.parser.advance(&mut self.emit, bytes);
        std::mem::take(&mut self.emit.out)
    }

    /// How many DA1 queries passed since the last call: the terminal's answers to them
    /// are the command's.
    pub fn take_queries(&mut self) -> usize {
        std::mem::take(&mut self.emit.queries)
    }

    /// The drawing state what passed so far left the terminal in.
    pub fn drawing(&self) -> Drawing {
        self.emit.drawing
    }
}

/// C0 controls that pass: BEL, BS, HT, LF, VT, FF, CR.
const CONTROLS: &[u8] = b"\x07\x08\x09\x0a\x0b\x0c\x0d";

/// CSI finals without a private marker or intermediate that pass as they are: cursor
/// movement, erasing, inserting and deleting, scrolling, attributes, and the device's
/// reports (the answers come back as input for the command). Tab stops set or cleared
/// (`ESC H`, `CSI g`) and backward tabs (`CSI Z`), which the screen model does not follow,
/// are dropped.
const PLAIN_CSI: &str = "@ABCDEFGHJKLMPSTX`bdfmn";

/// DEC private modes that pass, besides the tracked ones (6, 7) and the screen switches:
/// cursor keys, mouse reporting and its encodings, cursor blinking and visibility, focus
/// events, alternate scroll, bracketed paste, synchronized updates (ended before each bar).
const DEC_MODES: &[u16] = &[
    1, 9, 12, 25, 47, 1000, 1002, 1003, 1004, 1005, 1006, 1007, 1015, 1049, 2004, 2026,
];

/// Window operations that pass: the title stack (22, 23) and reports of sizes (14, 16, 18),
/// which change nothing.
const WINDOW_OPS: &[u16] = &[14, 16, 18, 22, 23];

/// OSC commands that pass when their text is printable: titles (0, 1, 2), the working
/// directory (7), hyperlinks (8), a shell's prompt marks (133).
const OSC_TEXT: &[&[u8]] = &[b"0", b"1", b"2", b"7", b"8", b"133"];

impl Emit {
    fn push_csi(&mut self, params: &Params, inter: &[u8], c: char) {
        self.out.extend_from_slice(b"\x1b[");
        let (marker, rest) = match inter.first() {
            Some(m @ (b'?' | b'>' | b'=' | b'<')) => (Some(*m), &inter[1..]),
            _ => (None, inter),
        };
        self.out.extend(marker);
        // A lone 0 is the default, which most often goes unwritten.
        let lone_zero = params.len() == 1 && params.iter().next() == Some(&[0][..]);
        for (i, p) in params.iter().enumerate().filter(|_| !lone_zero) {
            if i > 0 {
                self.out.push(b';');
            }
            for (j, sub) in p.iter().enumerate() {
                if j > 0 {
                    self.out.push(b':');
                }
                self.out.extend_from_slice(sub.to_string().as_bytes());
            }
        }
        self.out.extend_from_slice(rest);
        let mut b = [0u8; 4];
        self.out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }

    /// DECSTBM: kept only if the terminal would take it (top above bottom, on the screen).
    fn margins(&mut self, params: &Params) {
        let mut it = params.iter().map(|p| p.first().copied().unwrap_or(0));
        let top = it.next().filter(|&t| t > 0).unwrap_or(1);
        let bottom = it.next().filter(|&b| b > 0).unwrap_or(self.rows);
        if top >= bottom || bottom > self.rows {
            return;
        }
        self.drawing.region = if (top, bottom) == (1, self.rows) {
            None
        } else {
            Some((top, bottom))
        };
        self.out
            .extend_from_slice(format!("\x1b[{top};{bottom}r").as_bytes());
    }

    /// SM/RM: insert mode passes and is followed; the others (keyboard lock, local echo,
    /// new-line mode) are the terminal's and are dropped.
    fn ansi_modes(&mut self, params: &Params, set: bool) {
        if params.iter().any(|p| p == [4]) {
            self.drawing.insert = set;
            self.out
                .extend_from_slice(if set { b"\x1b[4h" } else { b"\x1b[4l" });
        }
    }

    /// DECSET/DECRST, mode by mode.
    fn dec_modes(&mut self, params: &Params, set: bool) {
        for p in params.iter() {
            let [mode] = p else { continue };
            match mode {
                6 => self.drawing.origin = set,
                7 => self.drawing.autowrap = set,
                // As DECSC and DECRC, which the screen model follows.
                1048 => {
                    self.save_or_restore(set);
                    self.out
                        .extend_from_slice(if set { b"\x1b7" } else { b"\x1b8" });
                    continue;
                }
                // The alternate screen without the cursor's save: as 47, which the screen
                // model follows.
                1047 => {
                    self.out
                        .extend_from_slice(if set { b"\x1b[?47h" } else { b"\x1b[?47l" });
                    continue;
                }
                1049 if set => self.save_or_restore(true),
                m if DEC_MODES.contains(m) => {}
                _ => continue,
            }
            let end = if set { 'h' } else { 'l' };
            self.out
                .extend_from_slice(format!("\x1b[?{mode}{end}").as_bytes());
            if *mode == 1049 && !set {
                self.save_or_restore(false);
            }
        }
    }

    /// DECSC (`true`) or DECRC: the terminal saves origin mode and the character sets with
    /// the cursor.
    fn save_or_restore(&mut self, save: bool) {
        if save {
            self.saved = Saved {
                origin: self.drawing.origin,
                charsets: self.charsets,
            };
        } else {
            self.drawing.origin = self.saved.origin;
            self.charsets = self.saved.charsets;
        }
    }

    fn osc(&mut self, params: &[&[u8]]) {
        let Some(&cmd) = params.first() else { return };
        let printable =
            |p: &&[u8]| std::str::from_utf8(p).is_ok_and(|s| s.chars().all(|c| !c.is_control()));
        let pass = if OSC_TEXT.contains(&cmd) {
            params.iter().all(printable)
        } else if matches!(cmd, b"10" | b"11" | b"12") {
            // Colour queries only: a colour set could make the bar unreadable.
            params[1..].iter().all(|p| *p == b"?")
        } else if cmd == b"4" {
            params[1..].chunks(2).all(|c| c.len() == 2 && c[1] == b"?")
        } else {
            false
        };
        if pass {
            self.out.extend_from_slice(b"\x1b]");
            self.out.extend_from_slice(&params.join(&b';'));
            self.out.extend_from_slice(b"\x1b\\");
        }
    }
}

impl Perform for Emit {
    fn print(&mut self, c: char) {
        if c.is_control() {
            return;
        }
        let c = match self.charsets.current() {
            Charset::Graphics => line_drawing(c),
            Charset::Ascii => c,
        };
        let mut b = [0u8; 4];
        self.out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            0x0e => self.charsets.shifted = true,
            0x0f => self.charsets.shifted = false,
            b if CONTROLS.contains(&b) => self.out.push(b),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, inter: &[u8], ignore: bool, c: char) {
        if ignore {
            return;
        }
        let first = params.iter().next().and_then(|p| p.first().copied());
        match (inter, c) {
            ([], 'r') => self.margins(params),
            ([], 'h' | 'l') => self.ansi_modes(params, c == 'h'),
            ([b'?'], 'h' | 'l') => self.dec_modes(params, c == 'h'),
            // SCOSC/SCORC: xterm saves and restores as DECSC and DECRC do, and so they go.
            ([], 's' | 'u') => {
                self.save_or_restore(c == 's');
                self.out
                    .extend_from_slice(if c == 's' { b"\x1b7" } else { b"\x1b8" });
            }
            // Relative positioning (HPR, VPR) as the cursor moves the model follows (CUF,
            // CUD); forward tabs (CHT) as tabs.
            ([], 'a') => self.push_csi(params, inter, 'C'),
            ([], 'e') => self.push_csi(params, inter, 'B'),
            ([], 'I') => {
                let n = first.unwrap_or(1).clamp(1, 512) as usize;
                self.out.extend(std::iter::repeat_n(b'\t', n));
            }
            ([], 'c') if first.unwrap_or(0) == 0 => {
                self.queries += 1;
                self.push_csi(params, inter, c)
            }
            ([], 't') if first.is_some_and(|op| WINDOW_OPS.contains(&op)) => {
                self.push_csi(params, inter, c)
            }
            ([], c) if PLAIN_CSI.contains(c) => self.push_csi(params, inter, c),
            // Selective erase, private reports, the cursor's shape, the device's attributes
            // and version, reports of modes.
            ([b'?'], 'J' | 'K' | 'n')
            | ([b' '], 'q')
            | ([b'>'], 'c' | 'q')
            | ([b'='], 'c')
            | ([b'$'], 'p')
            | ([b'?', b'$'], 'p') => self.push_csi(params, inter, c),
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, inter: &[u8], ignore: bool, byte: u8) {
        if ignore {
            return;
        }
        let set = if byte == b'0' {
            Charset::Graphics
        } else {
            Charset::Ascii
        };
        match (inter, byte) {
            ([b'('], _) => self.charsets.g0 = set,
            ([b')'], _) => self.charsets.g1 = set,
            ([], b'7' | b'8') => {
                self.save_or_restore(byte == b'7');
                self.out.extend_from_slice(&[0x1b, byte]);
            }
            ([], b'c') => {
                // RIS: the terminal is reset whole, and so is what we follow of it.
                self.drawing = Drawing::default();
                self.charsets = Charsets::default();
                self.saved = Saved::default();
                self.out.extend_from_slice(b"\x1bc");
            }
            // Index and next line as the line feeds the screen model follows (new-line mode,
            // which would make them differ, is dropped).
            ([], b'D') => self.out.push(b'\n'),
            ([], b'E') => self.out.extend_from_slice(b"\r\n"),
            // Reverse index, keypad modes.
            ([], b'M' | b'=' | b'>') => {
                self.out.extend_from_slice(&[0x1b, byte]);
            }
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        self.osc(params);
    }

    // Device control strings (`hook`, `put`, `unhook`: sixel images, terminal queries, a
    // multiplexer's passthrough to the terminal outside it) are all dropped: the default
    // no-op methods of `Perform`.
}

/// DEC Special Graphics, as Unicode (the VT100's line drawing set).
fn line_drawing(c: char) -> char {
    const SET: &str = " ◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    match c {
        '_'..='~' => SET.chars().nth(c as usize - '_' as usize).unwrap_or(c),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(bytes: &[u8]) -> (String, Drawing) {
        let mut f = Filter::new(30);
        let out = f.feed(bytes);
        (String::from_utf8(out).unwrap(), f.drawing())
    }

    fn passed(bytes: &str) -> String {
        through(bytes.as_bytes()).0
    }

    #[test]
    fn text_colours_and_movement_pass_as_they_are() {
        for s in [
            "plain text, é ✓ 漢字\r\n",
            "\x1b[1;31mred\x1b[m \x1b[38;5;208mx\x1b[38:2:1:2:3my\x1b[m",
            "\x1b[H\x1b[2J\x1b[10;5Hx\x1b[3A\x1b[2K\x1b[K\x1b[5@\x1b[2P\x1b[3L\x1b[M",
            "\x07\x08\t\x0b\x0c",
            "\x1b[?25l\x1b[?1049h\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?1049l\x1b[?25h",
            "\x1b=\x1b>\x1bM",
            "\x1b[6n\x1b[c\x1b[>c\x1b[2 q\x1b[?2026h\x1b[?2026l",
            "\x1b]0;my title\x1b\\\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\",
        ] {
            assert_eq!(passed(s), s, "{s:?}");
        }
    }

    #[test]
    fn what_reaches_beyond_the_screen_is_dropped() {
        for s in [
            // The clipboard, the palette and default colours, a font.
            "\x1b]52;c;aGVsbG8=\x07",
            "\x1b]4;1;#000000\x07",
            "\x1b]10;#000000\x07\x1b]11;#000000\x07",
            "\x1b]50;fixed\x07",
            // Window operations: resize, move, iconify; reporting the title.
            "\x1b[8;200;80t\x1b[3;0;0t\x1b[2t\x1b[21t",
            // Device control strings: a multiplexer's passthrough, sixel, a query.
            "\x1bPtmux;\x1b\x1b[8;200;80t\x1b\\",
            "\x1bPq#0;2;0;0;0#1!10~\x1b\\",
            "\x1b_Gf=100;AAAA\x1b\\",
            // Printer, keyboard lock, local echo, new-line mode, 132 columns, reverse screen,
            // left/right margins, soft reset, double-size lines, screen alignment.
            "\x1b[5i\x1b[2h\x1b[12h\x1b[20h\x1b[?3h\x1b[?5h\x1b[?69h\x1b[!p\x1b#6\x1b#8",
            // The keyboard's encoding: kitty's flags, modifyOtherKeys.
            "\x1b[>1u\x1b[=1;1u\x1b[>4;2m",
            // C0 and C1 controls that are not layout.
            "\x00\x01\x05\x7f\u{9b}\u{90}",
            // Character sets other than G0/G1, single shifts.
            "\x1b*0\x1b+0\x1bN\x1bO\x1bn",
        ] {
            assert_eq!(passed(s), "", "{s:?}");
        }
        // A title that is not plain text.
        assert_eq!(passed("\x1b]2;a\u{85}b\x07"), "");
        // Only the colour queries pass.
        assert_eq!(passed("\x1b]11;?\x07"), "\x1b]11;?\x1b\\");
        assert_eq!(passed("\x1b]4;1;?\x07"), "\x1b]4;1;?\x1b\\");
        // From a mixed list of modes, only the known ones.
        assert_eq!(passed("\x1b[?3;25;5h"), "\x1b[?25h");
    }

    #[test]
    fn the_drawing_state_is_followed() {
        let (s, d) = through(b"\x1b[5;20r\x1b[?6h\x1b[4h\x1b[?7l");
        assert_eq!(s, "\x1b[5;20r\x1b[?6h\x1b[4h\x1b[?7l");
        assert_eq!(
            d,
            Drawing {
                region: Some((5, 20)),
                origin: true,
                insert: true,
                autowrap: false
            }
        );
        // The whole screen, or a region the terminal would refuse.
        assert_eq!(through(b"\x1b[5;20r\x1b[r").1.region, None);
        assert_eq!(through(b"\x1b[5;20r\x1b[1;30r").1.region, None);
        assert_eq!(through(b"\x1b[20;5r").1.region, None);
        assert_eq!(passed("\x1b[20;5r\x1b[1;99r"), "");
        // DECSC saves origin mode, DECRC brings it back; so do 1048 and 1049.
        assert!(!through(b"\x1b7\x1b[?6h\x1b8").1.origin);
        assert!(through(b"\x1b[?6h\x1b[?1049h\x1b[?6l\x1b[?1049l").1.origin);
        assert!(!through(b"\x1b[?1048h\x1b[?6h\x1b[?1048l").1.origin);
        // RIS: everything back to the start.
        assert_eq!(through(b"\x1b[5;20r\x1b[?6h\x1bc").1, Drawing::default());
    }

    #[test]
    fn what_the_model_does_not_follow_becomes_what_it_does() {
        assert_eq!(passed("a\x1bDb\x1bEc"), "a\nb\r\nc");
        assert_eq!(
            passed("\x1b[s\x1b[u\x1b[?1048h\x1b[?1048l"),
            "\x1b7\x1b8\x1b7\x1b8"
        );
        assert_eq!(passed("\x1b[?1047h\x1b[?1047l"), "\x1b[?47h\x1b[?47l");
        assert_eq!(passed("\x1b[3a\x1b[2e\x1b[3I"), "\x1b[3C\x1b[2B\t\t\t");
        // Tab stops of its own, backward tabs: dropped.
        assert_eq!(passed("\x1bH\x1b[3g\x1b[Z"), "");
    }

    #[test]
    fn device_attribute_queries_are_counted() {
        let mut f = Filter::new(30);
        f.feed(b"\x1b[c\x1b[0c\x1b[>c\x1b[5n");
        assert_eq!(f.take_queries(), 2);
        assert_eq!(f.take_queries(), 0);
    }

    #[test]
    fn a_sequence_cut_between_reads_is_completed() {
        let mut f = Filter::new(30);
        let mut out = f.feed(b"ab\x1b[3");
        out.extend(f.feed(b";4Hc\xe2\x9c"));
        out.extend(f.feed(b"\x93\x1b]52;c;x"));
        out.extend(f.feed(b"\x07d"));
        assert_eq!(String::from_utf8(out).unwrap(), "ab\x1b[3;4Hc✓d");
    }

    #[test]
    fn line_drawing_becomes_unicode() {
        assert_eq!(passed("\x1b(0lqqk\x1b(B x"), "┌──┐ x");
        assert_eq!(passed("\x1b)0a\x0eq\x0fq"), "a─q");
        // DECRC brings the saved character sets back.
        assert_eq!(passed("\x1b(0\x1b7\x1b(Bq\x1b8q"), "\x1b7q\x1b8─");
    }

    #[test]
    fn the_state_is_given_back_after_the_bar() {
        let d = Drawing {
            region: Some((5, 20)),
            origin: true,
            insert: true,
            autowrap: false,
        };
        // Origin mode: the cursor's row is counted from the region's top.
        assert_eq!(
            d.restore((9, 3), "unused"),
            "\x1b[5;20r\x1b[?6h\x1b[6;4H\x1b[4h"
        );
        assert_eq!(Drawing::default().restore((9, 3), "AT"), "\x1b[?7hAT");
    }
}
