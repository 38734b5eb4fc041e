//! `hallpass report` read as a person would: plain when piped, in colour in a real terminal
//! (tmux), and the HTML page parsed by a real HTML parser (Python's html.parser); and the
//! shell completions loaded by bash and the man page rendered by groff.

use std::path::{Path, PathBuf};
use std::process::Command;

use hallpass_tests::*;

/// An audit run writing in two tool directories and one loose file, then one denied write.
fn logged(s: &Scratch) -> PathBuf {
    let log = s.root.join("w.jsonl");
    let script = "mkdir -p ~/.tool/cache && echo 1 > ~/.tool/cache/a && echo 2 > ~/.tool/cache/b && echo 3 > ~/loose && echo done";
    let out = run(s.session_command("allow", &log, script));
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let out = run(s.session_command("deny", &log, "echo x > ~/loose; echo x > ~/other; true"));
    assert!(out.status.success(), "{}", stderr(&out));
    log
}

#[test]
fn the_report_is_a_tree_with_counts_and_decisions() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("report", v);
        let log = logged(&s);
        let out = run(s.hallpass(["report".as_ref(), log.as_os_str()]));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains('\x1b'), "colour when piped: {text:?}");
        let home = s.home.display();
        let want = format!(
            "hallpass report: {log}\n\
             7 writes: 5 allowed (5 audit), 2 denied (2 unattended), 7 of them asked about (or would have been)\n\
             {home}  7 writes: 5 allowed (5 audit), 2 denied (2 unattended)\n\
             ├── .tool/  4 writes: 4 allowed (4 audit)\n\
             │   └── cache/  3 writes: 3 allowed (3 audit)\n\
             │       ├── a  1 write: 1 allowed (1 audit)\n\
             │       └── b  1 write: 1 allowed (1 audit)\n\
             ├── loose  2 writes: 1 allowed (1 audit), 1 denied (1 unattended)\n\
             └── other  1 write: 1 denied (1 unattended)\n",
            log = log.display()
        );
        assert_eq!(text, want);
    }
}

#[test]
fn the_report_is_in_colour_in_a_terminal() {
    let s = Scratch::new("report-tty", variants()[0]);
    let log = logged(&s);
    let t = s.tmux(120, 30);
    t.line(&format!("hallpass report {}; echo END", log.display()));
    // The line END alone: the command line typed holds "END" too (a flaky wait, under load).
    t.wait_for("the report", |s| s.lines().any(|l| l.trim() == "END"));
    let styled = t.screen_styled();
    // tmux shows colours as SGR sequences of its own: green allowed, red denied.
    let green = styled
        .lines()
        .find(|l| l.contains("loose"))
        .unwrap_or_default();
    assert!(green.contains("\x1b[32m1 allowed (1 audit)"), "{styled:?}");
    assert!(
        green.contains("\x1b[31m1 denied (1 unattended)"),
        "{styled:?}"
    );
}

/// Python's html.parser walks the page: every element closed in order, no resource from
/// elsewhere; prints the summaries' text and the file names, one a line.
const PARSE: &str = r#"
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "link", "input", "hr"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.out = []; self.cur = None
    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            assert k not in ("src", "href") and "url(" not in (v or ""), (tag, k, v)
        if tag in ("summary", "li") or (tag == "span" and ("class", "file") in attrs):
            self.cur = [] if tag != "li" else self.cur
        if tag not in VOID: self.stack.append(tag)
        if tag == "summary" or (tag == "span" and ("class", "file") in attrs): self.cur = []
    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()
        if tag in ("summary", "li") and self.cur is not None:
            self.out.append(tag + ": " + "".join(self.cur).strip()); self.cur = None
    def handle_data(self, d):
        if self.cur is not None: self.cur.append(d)
p = P(); p.feed(open(sys.argv[1]).read()); p.close()
assert not p.stack, p.stack
print("\n".join(p.out))
"#;

#[test]
fn the_html_report_is_one_page_with_collapsible_directories() {
    let s = Scratch::new("report-html", variants()[0]);
    let log = logged(&s);
    let page = s.root.join("r.html");
    let out = run(s.hallpass([
        "report".as_ref(),
        log.as_os_str(),
        "--html".as_ref(),
        page.as_os_str(),
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<details open><summary>"), "{html}");
    let parsed = Command::new("python3")
        .arg("-c")
        .arg(PARSE)
        .arg(&page)
        .output();
    let Ok(parsed) = parsed else {
        eprintln!("SKIP parsing the HTML report: python3 is missing");
        return;
    };
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let text = String::from_utf8_lossy(&parsed.stdout);
    let want = [
        format!(
            "summary: {}/7 writes5 allowed (5 audit)2 denied (2 unattended)",
            s.home.display()
        ),
        "summary: .tool/4 writes4 allowed (4 audit)".to_string(),
        "li: a1 write1 allowed (1 audit)".to_string(),
        "li: loose2 writes1 allowed (1 audit)1 denied (1 unattended)".to_string(),
    ];
    for w in &want {
        assert!(text.lines().any(|l| l == w), "{w} not in:\n{text}");
    }
}

/// An audit run that writes files named to fool the reader (`hostile`), and the write a
/// person must not miss: `~/.ssh/authorized_keys`.
fn hostile_log(s: &Scratch) -> PathBuf {
    let log = s.root.join("h.jsonl");
    let script = format!(
        "{}mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys && echo done",
        hostile::script(&s.outside)
    );
    let out = run(s.session_command("allow", &log, &script));
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    log
}

/// Issue 19: a path with escape sequences and a line break was printed raw; in a terminal
/// it erased the lines above it (hiding the write to `~/.ssh/authorized_keys`), could set
/// the clipboard, or added a line of its own.
#[test]
fn paths_the_command_chose_are_shown_not_obeyed() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("report-hostile", v);
        let log = hostile_log(&s);
        // The log itself is safe to `cat`: JSON escapes, the same strings to a parser.
        let raw = std::fs::read_to_string(&log).unwrap();
        assert!(!hostile::has_raw_control(&raw), "{raw:?}");
        assert!(s.log_lines(&log).iter().any(|l| l["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/clear\x1b[2J\x1b[3J\x1b[H"))));
        let out = run(s.hallpass(["report".as_ref(), log.as_os_str()]));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(!hostile::has_raw_control(&text), "{v:?}: {text:?}");
        for n in hostile::NAMES {
            assert!(
                text.lines()
                    .any(|l| l.contains(&format!("── {}  1 write", n.shown))),
                "{}: {text}",
                n.what
            );
        }
        assert!(
            text.contains(&format!("── {}/  2 writes", hostile::FLAG_DIR.shown)),
            "{text}"
        );
        assert!(text.contains("└── authorized_keys  1 write"), "{text}");
        // Every line is the report's: the title, the sum, or a line of the tree.
        for l in text.lines().skip(3) {
            assert!(l.starts_with(['├', '│', '└', ' ']), "{l:?} in\n{text}");
        }

        let page = s.root.join("r.html");
        let out = run(s.hallpass([
            "report".as_ref(),
            log.as_os_str(),
            "--html".as_ref(),
            page.as_os_str(),
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(!hostile::has_raw_control(&html), "{html:?}");
        assert!(html.contains(r"bidi\u{202e}hs.txt"), "{html}");
        assert!(html.contains(r"clear\e[2J\e[3J\e[H"), "{html}");
        assert!(html.contains("q a&#39;b$c`d"), "{html}");
        assert!(html.contains(">authorized_keys<"), "{html}");
    }
}

/// The same in a real terminal: every line above the hostile names is still on the
/// screen, and the clipboard (which tmux lets programs set with `set-clipboard on`) is
/// untouched.
#[test]
fn the_report_in_a_terminal_keeps_the_lines_above_a_hostile_path() {
    let s = Scratch::new("report-hostile-tty", variants()[0]);
    let log = hostile_log(&s);
    let t = s.tmux(120, 40);
    assert!(t
        .run(&["set", "-g", "set-clipboard", "on"])
        .status
        .success());
    t.line("echo BEFORE");
    t.line(&format!("hallpass report {}; echo END", log.display()));
    let screen = t.wait_for("the report", |x| x.lines().any(|l| l.trim() == "END"));
    for want in [
        "BEFORE",
        "$ hallpass report",
        "hallpass report: ",
        "11 writes: 11 allowed (11 audit)",
        "outside/  9 writes",
        r"clear\e[2J\e[3J\e[H  1 write",
        r"up\r\e[A\e[2K\e[A\e[2K\e[A\e[2K  1 write",
        "authorized_keys  1 write",
    ] {
        assert!(
            screen.contains(want),
            "{want} is not on the screen:\n{screen}"
        );
    }
    let buffers = t.run(&["list-buffers"]);
    assert_eq!(stdout(&buffers), "", "the clipboard was set");
}

#[test]
fn completions_load_in_bash() {
    let s = Scratch::new("completions", variants()[0]);
    let script = format!(
        "source <({} completions bash) && complete -p hallpass",
        bin("hallpass").display()
    );
    let out = run(s
        .command("bash")
        .args(["--norc", "--noprofile", "-c", &script]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).trim_end().ends_with("-F _hallpass hallpass"),
        "{}",
        stdout(&out)
    );
    // What it offers after `hallpass ` includes the new verbs and flags.
    let script = format!(
        "source <({} completions bash); COMP_WORDS=(hallpass --pro); COMP_CWORD=1; _hallpass hallpass --pro hallpass; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        bin("hallpass").display()
    );
    let out = run(s
        .command("bash")
        .args(["--norc", "--noprofile", "-c", &script]));
    let offered = stdout(&out);
    for w in ["--profile", "--prompt"] {
        assert!(offered.lines().any(|l| l == w), "{w}: {offered}");
    }
    for shell in ["zsh", "fish"] {
        let out = run(s.hallpass(["completions", shell]));
        assert!(
            out.status.success() && stdout(&out).contains("suggest"),
            "{shell}"
        );
    }
    let out = run(s.hallpass(["completions", "tcsh"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'tcsh'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_man_page_renders() {
    let s = Scratch::new("man", variants()[0]);
    let out = run(s.hallpass(["man"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let page = s.root.join("hallpass.1");
    std::fs::write(&page, &out.stdout).unwrap();
    assert!(
        stdout(&out).starts_with(".ie \\n(.g .ds Aq \\(aq"),
        "{}",
        stdout(&out)
    );
    if Command::new("groff").arg("--version").output().is_err() {
        eprintln!("SKIP rendering the man page: groff is missing (apt-get install groff-base)");
        return;
    }
    let out = run(Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(Path::new(&page)));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "groff warnings");
    let text = stdout(&out);
    for w in [
        "NAME",
        "hallpass - Run a command",
        "--profile",
        "suggest",
        "report",
        "completions",
    ] {
        assert!(text.contains(w), "{w} not in:\n{text}");
    }
}

/// A rename writes two paths, and the log names both, so that the report shows where the
/// file went. Found by a red team: only the source was logged, and `report` and `suggest`
/// never mentioned the `~/.profile` a rename replaced.
#[test]
fn a_rename_logs_where_it_goes() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("report-rename", v);
        let src = s.outside.join("src");
        std::fs::write(&src, "x").unwrap();
        s.chown(&src);
        let dst = s.home.join(".profile");
        let log = s.root.join("log.jsonl");
        let out = run(s.hallpass([
            "--prompt=allow",
            mode,
            &format!("--log={}", log.display()),
            "--",
            "mv",
            &src.to_string_lossy(),
            &dst.to_string_lossy(),
        ]));
        assert!(out.status.success(), "{mode}: {}", stderr(&out));
        assert!(dst.exists());
        let lines = s.log_lines(&log);
        for p in [&src, &dst] {
            assert!(
                lines.iter().any(|l| l["path"] == *p.to_string_lossy()
                    && l["syscall"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("rename"))
                    && l["reason"] == "audit"),
                "{mode}: no line for {}: {lines:?}",
                p.display()
            );
        }
        let report = run(s.hallpass(["report".as_ref(), log.as_os_str()]));
        assert!(stdout(&report).contains(".profile"), "{}", stdout(&report));
    }
}
