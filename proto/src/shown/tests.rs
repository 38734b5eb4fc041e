//! The rule of `shown`, checked over every code point, every category the module names, and
//! random byte strings decoded back.

use super::*;

fn s(b: &[u8]) -> String {
    shown(OsStr::from_bytes(b)).to_string()
}

/// The inverse of `shown`: every `\` starts an escape.
fn decode(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut it = text.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match it.next() {
            Some('\\') => out.push(b'\\'),
            Some('e') => out.push(0x1b),
            Some('n') => out.push(b'\n'),
            Some('r') => out.push(b'\r'),
            Some('t') => out.push(b'\t'),
            Some('x') => {
                let h: String = it.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&h, 16).unwrap());
            }
            Some('u') => {
                assert_eq!(it.next(), Some('{'), "{text}");
                let h: String = it.by_ref().take_while(|&c| c != '}').collect();
                let c = char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap();
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            x => panic!("a lone backslash before {x:?} in {text:?}"),
        }
    }
    out
}

/// Code points that must never reach a person as themselves, by category.
fn hidden_ranges() -> Vec<(&'static str, u32, u32)> {
    vec![
        ("C0 controls", 0x00, 0x1f),
        ("DEL", 0x7f, 0x7f),
        ("C1 controls", 0x80, 0x9f),
        ("no-break space", 0xa0, 0xa0),
        ("soft hyphen", 0xad, 0xad),
        ("combining grapheme joiner", 0x34f, 0x34f),
        ("Arabic number signs", 0x600, 0x605),
        ("Arabic letter mark", 0x61c, 0x61c),
        ("Hangul fillers", 0x115f, 0x1160),
        ("ogham space", 0x1680, 0x1680),
        ("Mongolian selectors and vowel separator", 0x180b, 0x180f),
        ("spaces", 0x2000, 0x200a),
        ("zero-width space, joiners, LRM, RLM", 0x200b, 0x200f),
        ("line and paragraph separators", 0x2028, 0x2029),
        ("bidirectional embeddings and overrides", 0x202a, 0x202e),
        ("narrow no-break space", 0x202f, 0x202f),
        ("medium mathematical space", 0x205f, 0x205f),
        ("word joiner, invisible operators", 0x2060, 0x2064),
        ("bidirectional isolates", 0x2066, 0x2069),
        ("deprecated format characters", 0x206a, 0x206f),
        ("braille blank", 0x2800, 0x2800),
        ("ideographic space", 0x3000, 0x3000),
        ("Hangul filler", 0x3164, 0x3164),
        ("private use", 0xe000, 0xf8ff),
        ("variation selectors", 0xfe00, 0xfe0f),
        ("BOM, zero-width no-break space", 0xfeff, 0xfeff),
        ("halfwidth Hangul filler", 0xffa0, 0xffa0),
        ("interlinear annotation", 0xfff9, 0xfffb),
        ("replacement character", 0xfffd, 0xfffd),
        ("noncharacters", 0xfffe, 0xffff),
        ("shorthand format controls", 0x1bca0, 0x1bca3),
        ("musical format", 0x1d173, 0x1d17a),
        ("tags", 0xe0000, 0xe007f),
        ("variation selectors supplement", 0xe0100, 0xe01ef),
        ("supplementary private use", 0xf0000, 0x10ffff),
        ("unassigned", 0x378, 0x379),
    ]
}

fn is_hidden(c: char) -> bool {
    hidden_ranges()
        .iter()
        .any(|&(_, a, b)| (a..=b).contains(&(c as u32)))
}

/// Every code point, alone and after a letter: shown as itself only where the rule allows,
/// and decoded back to itself.
#[test]
fn every_code_point() {
    for cp in 0..=0x10ffffu32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        for before in ["", "a"] {
            let text = format!("{before}{c}x");
            let out = shown(&text).to_string();
            assert_eq!(decode(&out).as_slice(), text.as_bytes(), "{cp:x}: {out}");
            let raw = out == text;
            if is_hidden(c) || c == '\\' {
                assert!(!raw, "U+{cp:04X} shown as itself");
            }
            if raw {
                assert!(!out.chars().any(is_hidden), "U+{cp:04X}");
            }
        }
    }
}

#[test]
fn each_category_is_escaped() {
    for (what, a, b) in hidden_ranges() {
        for cp in [a, b, (a + b) / 2] {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let out = shown(&format!("a{c}b")).to_string();
            assert!(
                out.starts_with("a\\") && out.ends_with('b'),
                "{what}: {out}"
            );
            assert!(!out.contains(c), "{what} U+{cp:04X}: {out}");
        }
    }
}

#[test]
fn escapes_are_readable() {
    assert_eq!(
        s(b"a\x1b[1Ab\nc\r\td\x07\x7f\\"),
        "a\\e[1Ab\\nc\\r\\td\\x07\\x7f\\\\"
    );
    assert_eq!(
        shown("x\u{202e}y\u{9b}z").to_string(),
        "x\\u{202e}y\\u{9b}z"
    );
    assert_eq!(shown("\u{e0041}").to_string(), "\\u{e0041}");
    // A path is bytes: what is not UTF-8 is shown byte by byte, unlike the character U+FF.
    assert_eq!(s(b"/tmp/\xff\xc3"), "/tmp/\\xff\\xc3");
    assert_eq!(shown("/tmp/\u{ff}").to_string(), "/tmp/ÿ");
    assert_eq!(s(b"\xe2\x80"), "\\xe2\\x80");
    // The terminal sequences of the issue: clear, line up and erase, the clipboard.
    assert_eq!(s(b"\x1b[2J"), "\\e[2J");
    assert_eq!(s(b"\x1b[A\x1b[2K"), "\\e[A\\e[2K");
    assert_eq!(s(b"\x1b]52;c;aGk=\x07"), "\\e]52;c;aGk=\\x07");
}

#[test]
fn what_people_write_is_shown_as_is() {
    for t in [
        "/home/me/.cache/pip/http/a",
        "/tmp/a b/it's $HOME `x` \"q\" ~!#%^&*()[]{}<>|;:,.?=+@",
        "/home/me/Документы/résumé.txt",
        "/srv/数据/ファイル",
        "/home/me/שלום/مرحبا",
        "/home/me/हिन्दी/ไทย",
        "café\u{301}",
        "/tmp/😀",
    ] {
        assert_eq!(shown(t).to_string(), t);
        assert!(plain(t), "{t}");
    }
}

#[test]
fn marks_sit_on_letters_only() {
    assert_eq!(shown("e\u{301}").to_string(), "e\u{301}");
    assert_eq!(shown("\u{301}e").to_string(), "\\u{301}e");
    assert_eq!(shown("/\u{338}").to_string(), "/\\u{338}");
    assert_eq!(shown("\t\u{301}").to_string(), "\\t\\u{301}");
    let four = "a\u{301}\u{302}\u{303}\u{304}";
    assert_eq!(shown(four).to_string(), four);
    assert_eq!(
        shown(&format!("{four}\u{305}")).to_string(),
        format!("{four}\\u{{305}}")
    );
    assert!(!plain("\u{301}a"));
}

#[test]
fn spaces_at_the_ends_are_seen() {
    assert_eq!(shown(" a b ").to_string(), "\\x20a b\\x20");
    assert_eq!(shown(" ").to_string(), "\\x20");
    assert_eq!(shown("").to_string(), "");
    assert_eq!(decode(&shown("  ").to_string()), b"  ");
    // Quoting shows them: such a name is still plain.
    assert!(plain("/tmp/a "));
}

#[test]
fn plain_names() {
    assert!(plain("/tmp/a\\b"));
    assert!(!plain(OsStr::from_bytes(b"/tmp/\xff")));
    assert!(!plain("/tmp/a\nb"));
    assert!(!plain("/tmp/\u{202e}txt.exe"));
    assert!(!plain("/tmp/a\u{200b}"));
}

/// A small generator (xorshift): random byte strings, mostly of the bytes that matter.
fn bytes(seed: &mut u64) -> Vec<u8> {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let pieces: [&[u8]; 12] = [
        b"\\",
        b" ",
        b"a",
        b"\x1b",
        b"\n",
        b"\xff",
        b"\xc3",
        "\u{301}".as_bytes(),
        "\u{202e}".as_bytes(),
        "é".as_bytes(),
        b"x",
        b"\\x41",
    ];
    let n = next() % 12;
    (0..n)
        .flat_map(|_| {
            let r = next();
            if r % 4 == 0 {
                vec![(r >> 8) as u8]
            } else {
                pieces[(r >> 8) as usize % pieces.len()].to_vec()
            }
        })
        .collect()
}

/// Two different names are never shown alike: what is shown decodes back to the bytes.
#[test]
fn unambiguous() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..200_000 {
        let b = bytes(&mut seed);
        let out = s(&b);
        assert_eq!(decode(&out), b, "{out}");
        assert!(!out.chars().any(is_hidden), "{out:?}");
    }
}

#[test]
fn width_and_alignment() {
    assert_eq!(format!("{:<6}|", shown("ab")), "ab    |");
    assert_eq!(format!("{:?}", shown("a\n")), "\"a\\n\"");
}

#[test]
fn json_is_inert_and_the_same_value() {
    let v = "a\u{202e}\u{9b}\x7f\x1b\u{e0041}\u{301}é\"\\";
    let out = String::from_utf8(json(&v).unwrap()).unwrap();
    assert_eq!(
        out,
        "\"a\\u202e\\u009b\\u007f\\u001b\\udb40\\udc41\\u0301é\\\"\\\\\""
    );
    let back: String = serde_json::from_str(&out).unwrap();
    assert_eq!(back, v);
    assert!(out.chars().all(|c| !is_hidden(c)));
}
