//! File names a command could choose to fool the person reading about it (issue 19): escape
//! sequences that clear the screen, move up and erase the lines above, or set the clipboard
//! (OSC 52); a line break followed by what reads like a flag; a bidirectional override; a C1
//! control; an invisible character; bytes that are not UTF-8. Each with the escaped form
//! `hallpass_proto::shown` gives it, so tests can look for what a person must see.

use std::path::Path;

/// One name: what it is for, its bytes as `printf` writes them (octal escapes, for `sh`),
/// the name itself, and how it is shown.
pub struct Name {
    pub what: &'static str,
    pub printf: &'static str,
    pub raw: &'static str,
    pub shown: &'static str,
}

/// The names, each a file of its own in one directory.
pub const NAMES: &[Name] = &[
    Name {
        what: "clear the screen and its history, cursor home",
        printf: r"clear\033[2J\033[3J\033[H",
        raw: "clear\x1b[2J\x1b[3J\x1b[H",
        shown: r"clear\e[2J\e[3J\e[H",
    },
    Name {
        what: "move up and erase the lines above",
        printf: r"up\r\033[A\033[2K\033[A\033[2K\033[A\033[2K",
        raw: "up\r\x1b[A\x1b[2K\x1b[A\x1b[2K\x1b[A\x1b[2K",
        shown: r"up\r\e[A\e[2K\e[A\e[2K\e[A\e[2K",
    },
    Name {
        what: "set the clipboard (OSC 52) to `rm -rf ~`",
        printf: r"clip\033]52;c;cm0gLXJmIH4=\007",
        raw: "clip\x1b]52;c;cm0gLXJmIH4=\x07",
        shown: r"clip\e]52;c;cm0gLXJmIH4=\x07",
    },
    Name {
        what: "a right-to-left override (reads `bidi` then `txt.sh` reversed)",
        printf: r"bidi\342\200\256hs.txt",
        raw: "bidi\u{202e}hs.txt",
        shown: r"bidi\u{202e}hs.txt",
    },
    Name {
        what: "a C1 control sequence introducer",
        printf: r"c1\302\2332J",
        raw: "c1\u{9b}2J",
        shown: r"c1\u{9b}2J",
    },
    Name {
        what: "a zero-width space",
        printf: r"zw\342\200\213x",
        raw: "zw\u{200b}x",
        shown: r"zw\u{200b}x",
    },
];

/// A directory whose name is a line break and what reads like a flag: the file `.ssh` in
/// it is `DIR/nl` + line break + `--allow-path ~/.ssh`.
pub const FLAG_DIR: Name = Name {
    what: "a line break and a flag",
    printf: r"nl\n--allow-path ~",
    raw: "nl\n--allow-path ~",
    shown: r"nl\n--allow-path ~",
};

/// A name that is plain but means something to a shell: pasted, it must stay one word.
pub const SHELLY: &str = "q a'b$c`d";

/// A `sh` script that writes every name of [`NAMES`] in `dir`, `.ssh` in [`FLAG_DIR`] in
/// `dir`, and [`SHELLY`] in `dir`.
pub fn script(dir: &Path) -> String {
    let d = dir.display();
    let mut s = format!("set -e\ncd '{d}'\n");
    for n in NAMES {
        s.push_str(&format!(": > \"$(printf '{}')\"\n", n.printf));
    }
    s.push_str(&format!(
        "f=\"$(printf '{}')\"\nmkdir \"$f\"\n: > \"$f/.ssh\"\n",
        FLAG_DIR.printf
    ));
    s.push_str(": > \"q a'b\\$c\\`d\"\n");
    s
}

/// Whether `text` holds a character no person should get raw from hallpass: a C0 control
/// but line feed, DEL, a C1 control, a bidirectional control or an invisible one.
pub fn has_raw_control(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}
