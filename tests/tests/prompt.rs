//! Asking in the terminal (`--prompt=ask`), in a real terminal: tmux runs a shell, the shell
//! runs hallpass, and the tests type keys and read the screen (`send-keys`, `capture-pane`).
//! Every answer is checked on the file system and in the log.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hallpass_tests::*;

/// The variants these (slow, interactive) tests run as: ourselves reading memory directly,
/// and the unprivileged user through the launcher (the Yama path).
fn two_variants() -> Vec<Variant> {
    variants()
        .into_iter()
        .filter(|v| v.lend == matches!(v.who, Who::Unprivileged { .. }))
        .collect()
}

fn bar_up(s: &str) -> bool {
    s.contains("[o] allow once")
}

/// The bar takes keys only once a question has been shown for a moment (a key typed for the
/// command just as it appears must not answer it): wait that long.
fn settle() {
    std::thread::sleep(Duration::from_millis(500));
}

/// Waits for the bar, and until it takes keys.
fn bar(t: &Tmux) -> String {
    let s = t.wait_for("the bar", bar_up);
    settle();
    s
}

fn log_of(s: &Scratch) -> Vec<serde_json::Value> {
    s.log_lines(&s.root.join("log.jsonl"))
}

/// Starts `hallpass --log=... FLAGS -- bash` in the pane and waits for its prompt.
fn start_session(s: &Scratch, t: &Tmux, flags: &str) {
    t.line(&format!(
        "hallpass --log={} {flags} -- env PS1='in$ ' bash --norc --noprofile",
        s.root.join("log.jsonl").display()
    ));
    t.wait_for("the supervised shell", |x| x.contains("in$"));
}

/// The log line for `path`, waiting for it to be written.
fn logged(s: &Scratch, path: &Path) -> serde_json::Value {
    let p = path.to_string_lossy();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(l) = log_of(s).into_iter().rev().find(|l| l["path"] == *p) {
            return l;
        }
        assert!(
            Instant::now() < deadline,
            "no log line for {p}: {:?}",
            log_of(s)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rules_file(s: &Scratch) -> String {
    std::fs::read_to_string(s.home.join(".config/hallpass/rules")).unwrap_or_default()
}

#[test]
fn each_key_does_what_it_says() {
    for v in two_variants() {
        let s = Scratch::new("keys", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "--allow-for=3s");
        let out = &s.outside;
        let cases = [
            ("o", "once", "allow", true),
            ("d", "denied", "deny", false),
            ("t", "timed", "allow", true),
            ("a", "always", "allow", true),
            ("n", "never", "deny", false),
        ];
        for (i, (key, reason, decision, exists)) in cases.iter().enumerate() {
            // Each in a directory of its own, so earlier lasting answers don't cover it.
            let dir = out.join(format!("k{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            s.chown(&dir);
            let f = dir.join("f");
            t.line(&format!("hp-write touch {}", f.display()));
            let screen = bar(&t);
            assert!(screen.contains("hp-write (pid "), "{screen}");
            assert!(
                screen.contains(&format!("wants to create {}", f.display())),
                "{screen}"
            );
            assert!(screen.contains("by: hp-write touch ← bash"), "{screen}");
            assert!(
                screen.contains("[o] allow once  [t] for 3s  [a] always  [d] deny  [n] never"),
                "{screen}"
            );
            // The suggested scope: not the scratch root below /tmp (it holds the home
            // directory), the directory below it.
            assert!(
                screen.contains(&format!(
                    "[t] and [a] allow, [n] denies: {}  ",
                    out.display()
                )),
                "{screen}"
            );
            // Narrowed to this case's directory, so that lasting answers don't cover the next.
            t.keys(&["-"]);
            t.wait_for("the narrower scope", |x| {
                x.contains(&format!("denies: {}  ", dir.display()))
            });
            // A new scope is read before it is answered: the keys wait a moment again.
            settle();
            t.keys(&[key]);
            let want = if *exists { "ok" } else { "err 13" };
            t.wait_for("the write's result", |x| {
                !bar_up(x) && x.lines().any(|l| l.trim() == want)
            });
            assert_eq!(f.exists(), *exists, "[{key}]");
            let l = logged(&s, &f);
            assert_eq!(
                (l["decision"].as_str(), l["reason"].as_str()),
                (Some(*decision), Some(*reason)),
                "[{key}]: {l}"
            );
            t.line("clear");
            t.wait_for("a clear screen", |x| !x.contains(want) || x.trim() == "in$");
        }
        // [a] and [n] saved their scope, not just the file.
        let rules = rules_file(&s);
        assert!(
            rules.contains(&format!("allow {}/k3\n", out.display())),
            "{rules}"
        );
        assert!(
            rules.contains(&format!("deny {}/k4\n", out.display())),
            "{rules}"
        );
        t.line("exit");
        drop(t);
    }
}

#[test]
fn timed_grants_expire() {
    for v in two_variants() {
        let s = Scratch::new("timed", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "--allow-for=5s");
        let a = s.outside.join("a");
        t.line(&format!("hp-write touch {}", a.display()));
        // The suggestion: outside/ (the scratch root above it holds the home directory).
        let sc = bar(&t);
        assert!(
            sc.contains(&format!("denies: {}  ", s.outside.display())),
            "{sc}"
        );
        // Not wider: that would hold the home directory.
        t.keys(&["+"]);
        // (And the keys wait a moment, as after any change of scope.)
        settle();
        assert!(t
            .screen()
            .contains(&format!("denies: {}  ", s.outside.display())));
        t.keys(&["t"]);
        t.wait_for("ok", |x| !bar_up(x) && x.contains("\nok"));
        let granted = Instant::now();
        // Within the grant: no question.
        let b = s.outside.join("b");
        t.line(&format!("hp-write touch {}", b.display()));
        let l = logged(&s, &b);
        assert!(
            granted.elapsed() < Duration::from_secs(5),
            "too slow to test the grant"
        );
        assert_eq!(l["reason"], "timed", "{l}");
        // The log line comes first, then the reply: the file follows in a moment.
        assert!(wait_until(Duration::from_secs(10), || b.exists()));
        // After it: asked again.
        std::thread::sleep(
            Duration::from_secs(5).saturating_sub(granted.elapsed()) + Duration::from_millis(300),
        );
        let c = s.outside.join("c");
        t.line(&format!("hp-write touch {}", c.display()));
        t.wait_for("the bar again", |x| {
            bar_up(x) && x.contains(&c.display().to_string())
        });
        settle();
        t.keys(&["d"]);
        assert_eq!(logged(&s, &c)["reason"], "denied");
        assert!(!c.exists());
    }
}

#[test]
fn lasting_answers_survive_a_daemon_restart() {
    let v = two_variants()[0];
    let s = Scratch::new("lasting", v);
    let yes = s.outside.join("yes");
    let no = s.outside.join("no");
    for d in [&yes, &no] {
        std::fs::create_dir_all(d).unwrap();
    }
    s.chown(&s.outside);
    {
        let t = s.tmux(120, 30);
        start_session(&s, &t, "");
        for (dir, key, result) in [(&yes, "a", "ok"), (&no, "n", "err 13")] {
            t.line(&format!("hp-write touch {}/f", dir.display()));
            bar(&t);
            // Narrow to the directory itself.
            t.keys(&["-"]);
            t.wait_for("the scope", |x| {
                x.contains(&format!("denies: {}  ", dir.display()))
            });
            settle();
            t.keys(&[key]);
            t.wait_for("the result", |x| {
                !bar_up(x) && x.lines().any(|l| l.trim() == result)
            });
            t.line("clear");
            t.wait_for("a clear screen", |x| !x.contains(result));
        }
        t.line("exit");
    }
    let rules = rules_file(&s);
    assert!(
        rules.contains(&format!("allow {}\n", yes.display())),
        "{rules}"
    );
    assert!(
        rules.contains(&format!("deny {}\n", no.display())),
        "{rules}\n{:?}",
        log_of(&s)
    );
    // A new daemon, a session with nobody to ask: the rules still decide.
    s.kill_daemon();
    let log = s.root.join("log2.jsonl");
    let out = run(s.session_command(
        "deny",
        &log,
        &format!(
            "hp-write touch {0}/g; hp-write touch {1}/g",
            yes.display(),
            no.display()
        ),
    ));
    assert_eq!(stdout(&out), "ok\nerr 13\n", "{}", stderr(&out));
    let lines = s.log_lines(&log);
    assert_eq!(lines[0]["reason"], "always", "{lines:?}");
    assert_eq!(lines[1]["reason"], "never", "{lines:?}");
    // And `hallpass rules` lists and removes them.
    let out = run(s.hallpass(["rules"]));
    assert!(
        stdout(&out).contains(&format!("allow {}", yes.display())),
        "{}",
        stdout(&out)
    );
    let out = run(s.hallpass(["rules", "remove", &no.to_string_lossy()]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !rules_file(&s).contains(&format!("deny {}", no.display())),
        "{}",
        rules_file(&s)
    );
}

/// A full-screen program: alternate screen, colours, every row drawn; then it waits for
/// Enter (echo off), writes outside the project, and draws nothing more.
fn full_screen_script(s: &Scratch, target: &Path) -> std::path::PathBuf {
    let script = s.root.join("screen.sh");
    std::fs::write(
        &script,
        format!(
            "stty -echo\n\
             printf '\\033[?1049h\\033[H\\033[2J'\n\
             i=1; while [ $i -le 28 ]; do printf '\\033[3%dmrow %02d \\033[1mbold\\033[0m tail\\r\\n' $((i % 7 + 1)) $i; i=$((i+1)); done\n\
             printf '\\033[44mready\\033[0m'\n\
             read x\n\
             hp-write touch {} >/dev/null\n\
             read y\n",
            target.display()
        ),
    )
    .unwrap();
    s.chown(&script);
    script
}

#[test]
fn the_screen_under_the_bar_is_restored() {
    for v in two_variants() {
        let s = Scratch::new("screen", v);
        let t = s.tmux(100, 30);
        let target = s.outside.join("f");
        let script = full_screen_script(&s, &target);
        t.line(&format!("hallpass -- sh {}", script.display()));
        t.wait_for("the full screen", |x| x.contains("ready"));
        let before = t.screen_styled();
        t.keys(&["Enter"]);
        bar(&t);
        t.keys(&["o"]);
        t.wait_for("no bar", |x| !bar_up(x));
        // The write happened, and the screen is exactly as the program left it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !target.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(target.exists());
        assert_eq!(t.screen_styled(), before);
        t.keys(&["Enter"]);
        t.wait_for("the outer shell", |x| {
            x.contains('$') && !x.contains("ready")
        });
    }
}

#[test]
fn a_resize_keeps_the_bar_and_the_command_right() {
    let v = two_variants()[0];
    let s = Scratch::new("resize", v);
    let t = s.tmux(120, 30);
    start_session(&s, &t, "");
    t.line("stty size");
    t.wait_for("the size", |x| x.contains("30 120"));
    let f = s.outside.join("f");
    t.line(&format!("hp-write touch {}", f.display()));
    bar(&t);
    t.resize(90, 20);
    // The bar is redrawn at the new bottom, within the new width.
    let sc = t.wait_for("the bar at the new bottom", |x| {
        let lines: Vec<&str> = x.lines().collect();
        lines.len() == 20 && lines[19].contains("[o] allow once")
    });
    assert!(sc.lines().all(|l| l.chars().count() <= 90), "{sc}");
    t.keys(&["o"]);
    t.wait_for("no bar", |x| !bar_up(x));
    // The command saw the new size, and sees the next one too.
    size_is(&t, "20 90");
    t.resize(100, 25);
    size_is(&t, "25 100");
}

/// Asks the shell for its terminal's size until it says `want`: the window change reaches
/// the command asynchronously (SIGWINCH to hallpass, then to the command's terminal).
fn size_is(t: &Tmux, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        t.line("clear; stty size");
        std::thread::sleep(Duration::from_millis(300));
        if t.screen().lines().any(|l| l.trim() == want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the size never became {want}:\n{}",
            t.screen()
        );
    }
}

#[test]
fn the_escape_prefix() {
    let v = two_variants()[0];
    let s = Scratch::new("escape", v);
    let t = s.tmux(120, 30);
    // Ctrl-] twice reaches the command as one Ctrl-] (od prints it as 035). od reads the
    // terminal first thing, so no shell's line editor sees the keys before it.
    t.line(&format!(
        "hallpass --log={} -- sh -c 'od -c | head -1; exec env PS1=\"in$ \" bash --norc --noprofile'",
        s.root.join("log.jsonl").display()
    ));
    // Keys typed before hallpass has the terminal in raw mode would be the outer line
    // discipline's; it is ready once it has scrolled the old screen away.
    t.wait_for("hallpass to take the terminal", |x| {
        !x.contains("hallpass --log")
    });
    t.keys(&["C-]", "C-]"]);
    t.keys(&["Enter", "C-d"]);
    t.wait_for("od's output", |x| x.contains("035"));
    t.wait_for("the supervised shell", |x| x.contains("in$"));
    // An unknown key after Ctrl-] shows the help, and any key takes it away.
    t.keys(&["C-]", "x"]);
    t.wait_for("the help", |x| x.contains("[s] stop the session"));
    t.keys(&["x"]);
    t.wait_for("no help", |x| !x.contains("[s] stop the session"));
    // Ctrl-] s ends the session with a message.
    t.keys(&["C-]", "s"]);
    // ... and gives the terminal back to the outer shell.
    t.wait_for("the message and the outer prompt", |x| {
        x.contains("session stopped (Ctrl-] s)") && x.lines().any(|l| l.trim() == "$")
    });
}

#[test]
fn questions_queue_and_are_answered_in_turn() {
    for v in two_variants() {
        let s = Scratch::new("queue", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "");
        let (a, b) = (s.outside.join("a"), s.outside.join("b"));
        let p = s.project.join("p");
        // Two writers ask at once; meanwhile writes inside the project go on.
        t.line(&format!(
            "hp-write touch {} & hp-write touch {} & sleep 0.5; for i in 1 2 3; do hp-write touch {}$i; done; wait",
            a.display(),
            b.display(),
            p.display()
        ));
        // The keys show once the person has stopped typing (the command line just typed).
        let sc = t.wait_for("two questions", |x| {
            x.contains("[1 more waiting]") && bar_up(x)
        });
        settle();
        // The project writes were not held up by the open questions.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !s.project.join("p3").exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            s.project.join("p3").exists(),
            "project writes waited for the questions"
        );
        // So does another session, with its own question-free writes.
        let other = run(s.hallpass([
            "--prompt=deny",
            "--",
            "hp-write",
            "touch",
            &s.project.join("other").to_string_lossy(),
        ]));
        assert_eq!(stdout(&other), "ok\n", "{}", stderr(&other));
        // The first asked is shown first; answer it, then the other.
        let first_is_a = sc.contains(&format!("wants to create {}", a.display()));
        t.keys(&["o"]);
        let sc = t.wait_for("the second question", |x| {
            bar_up(x) && !x.contains("more waiting")
        });
        settle();
        let second = if first_is_a { &b } else { &a };
        assert!(
            sc.contains(&format!("wants to create {}", second.display())),
            "{sc}"
        );
        t.keys(&["d"]);
        t.wait_for("no bar", |x| !bar_up(x));
        let first = if first_is_a { &a } else { &b };
        assert_eq!(logged(&s, first)["reason"], "once");
        assert_eq!(logged(&s, second)["reason"], "denied");
        assert!(wait_until(Duration::from_secs(10), || first.exists()));
        assert!(!second.exists());
    }
}

#[test]
fn a_writer_flooded_with_signals_is_asked_once() {
    for v in two_variants() {
        let s = Scratch::new("signals", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "");
        // hp-write signals: one thread creates outside/s0 while another sends it SIGURG in a
        // loop, as Go's runtime does.
        t.line(&format!("hp-write signals {} 1", s.outside.display()));
        bar(&t);
        // Let the signals pile up while the question is open.
        std::thread::sleep(Duration::from_millis(700));
        let sc = t.screen();
        assert!(!sc.contains("more waiting"), "asked again: {sc}");
        t.keys(&["o"]);
        t.wait_for("the result", |x| x.contains("ok 1 err 0"));
        let status = s.status();
        let session = status["sessions"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(session["questions"], 1, "{session}");
        let n = log_of(&s)
            .iter()
            .filter(|l| l["path"].as_str().is_some_and(|p| p.ends_with("/s0")))
            .count();
        assert_eq!(n, 1, "{:?}", log_of(&s));
    }
}

/// The terminal's settings in the outer shell, as `stty -a` prints them.
fn stty(t: &Tmux) -> String {
    // The marker is typed split (EN""D) so that the echo of the command line never matches.
    t.line(
        "clear; stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo|isig)$' | tr '\\n' ' '; echo EN\"\"D",
    );
    let out = |l: &&str| l.ends_with("END") && !l.contains("stty");
    let sc = t.wait_for("stty", |x| x.lines().any(|l| out(&l)));
    sc.lines().find(out).unwrap().to_string()
}

#[test]
fn the_terminal_is_given_back_as_it_was_after_a_signal() {
    let v = two_variants()[0];
    let s = Scratch::new("restore", v);
    let t = s.tmux(100, 30);
    let before = stty(&t);
    assert!(
        before.contains("icanon echo") || before.contains("icanon"),
        "{before}"
    );
    for sig in ["TERM", "HUP"] {
        t.line("hallpass -- sleep 1000");
        t.wait_for("hallpass to take the terminal", |x| {
            !x.contains("hallpass --")
        });
        // The launcher: the live session's.
        let launcher = {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let st = s.status();
                if let Some(x) = st["sessions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["live"] == true)
                {
                    break x["launcher_pid"].as_i64().unwrap();
                }
                assert!(Instant::now() < deadline, "no live session");
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let _ = std::process::Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(launcher.to_string())
            .status();
        t.wait_for("the outer prompt", |x| x.lines().any(|l| l.trim() == "$"));
        assert_eq!(stty(&t), before, "after SIG{sig}");
    }
}

#[test]
fn output_reaches_the_terminal_through_the_allowlist() {
    let v = two_variants()[0];
    let s = Scratch::new("bytes", v);
    // Text, UTF-8, tabs, colours, attributes, cursor movement and erasing: as they are.
    let mut text: Vec<u8> = (0x20..0x7fu8).collect();
    text.extend_from_slice(
        "\théllo ✓ 漢字\x1b[1;31mbold red\x1b[m\x1b[3;5H\x1b[2Kx\x1b[38;5;208my\x1b[m\n".as_bytes(),
    );
    // Every byte value, and sequences that reach beyond the screen: the clipboard, the
    // window's size, a multiplexer's passthrough.
    let mut hostile: Vec<u8> = (0..=255u8).collect();
    hostile.extend_from_slice(
        b"\x1b]52;c;aGVsbG8=\x07\x1b[8;200;80t\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\\n",
    );
    let (tf, hf) = (s.root.join("text"), s.root.join("hostile"));
    std::fs::write(&tf, &text).unwrap();
    std::fs::write(&hf, &hostile).unwrap();
    s.chown(&s.root);
    // script(1) gives both runs a terminal; the pty's own processing (\n to \r\n) is the
    // same in both.
    let through = |cmd: String| -> Vec<u8> {
        let out = run(s
            .command("script")
            .args(["-q", "-e", "-c", &cmd, "/dev/null"]));
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    let native = through(format!("cat {}", tf.display()));
    let supervised = through(format!("hallpass -- cat {}", tf.display()));
    assert!(native.len() > text.len());
    assert!(
        supervised
            .windows(native.len())
            .any(|w| w == native.as_slice()),
        "the command's text did not come through intact"
    );
    let supervised = through(format!("hallpass -- cat {}", hf.display()));
    // (The ESC among the bytes takes " !\"#$%&'()*+,-./0" after it as its own, as in any
    // terminal: the printable bytes after those.)
    let printable: Vec<u8> = (b'1'..0x7fu8).collect();
    assert!(
        supervised.windows(printable.len()).any(|w| w == printable),
        "the printable bytes did not come through"
    );
    for bad in [
        &b"\x1b]52"[..],
        b"\x1b[8;200;80t",
        b"\x1bP",
        b"\x00",
        b"\x01",
        b"\x7f",
    ] {
        assert!(
            !supervised.windows(bad.len()).any(|w| w == bad),
            "{bad:?} reached the terminal"
        );
    }
}

#[test]
fn a_screen_switch_under_the_bar_reaches_the_terminal() {
    let v = two_variants()[0];
    let s = Scratch::new("altscreen", v);
    let t = s.tmux(100, 30);
    start_session(&s, &t, "");
    let f = s.outside.join("f");
    // One process asks; another switches to the alternate screen while the bar is up.
    t.line(&format!(
        "hp-write touch {} & sleep 1; printf '\\033[?1049h\\033[Hon the alternate screen'; wait",
        f.display()
    ));
    bar(&t);
    std::thread::sleep(Duration::from_millis(1200));
    t.keys(&["o"]);
    let sc = t.wait_for("the alternate screen", |x| {
        !bar_up(x) && x.contains("on the alternate screen")
    });
    assert!(!sc.contains("in$ hp-write"), "{sc}");
    let alt = run(t.cmd_display("#{alternate_on}"));
    assert_eq!(stdout(&alt).trim(), "1");
}

/// Issue 19: the bar names a path with an escape sequence that clears the screen, a line
/// break and a bidirectional override: shown escaped, the command's lines above it intact.
#[test]
fn a_hostile_path_in_the_bar_is_shown_not_obeyed() {
    for v in two_variants() {
        let s = Scratch::new("bar-hostile", v);
        let t = s.tmux(160, 30);
        start_session(&s, &t, "");
        t.line("echo MARK");
        t.wait_for("the mark", |x| x.lines().any(|l| l.trim() == "MARK"));
        t.line(&format!(
            r#"hp-write touch "{}/$(printf 'k\033[2J\033[H\n  by: you\342\200\256x')""#,
            s.outside.display()
        ));
        let screen = bar(&t);
        assert!(
            screen.contains(&format!(
                r"wants to create {}/k\e[2J\e[H\n  by: you\u{{202e}}x",
                s.outside.display()
            )),
            "{screen}"
        );
        assert!(screen.lines().any(|l| l.trim() == "MARK"), "{screen}");
        t.keys(&["d"]);
        t.wait_for("the write's result", |x| {
            !bar_up(x) && x.lines().any(|l| l.trim() == "err 13")
        });
        let raw = s.outside.join("k\x1b[2J\x1b[H\n  by: you\u{202e}x");
        let l = logged(&s, &raw);
        assert_eq!(l["reason"], "denied", "{l}");
    }
}

/// The lines logged for `path`: (syscall, decision, reason), in order.
fn lines_for(s: &Scratch, path: &Path) -> Vec<(String, String, String)> {
    let p = path.to_string_lossy();
    log_of(s)
        .into_iter()
        .filter(|l| l["path"] == *p)
        .map(|l| {
            let f = |k: &str| l[k].as_str().unwrap_or_default().to_string();
            (f("syscall"), f("decision"), f("reason"))
        })
        .collect()
}

fn line(syscall: &str, decision: &str, reason: &str) -> (String, String, String) {
    (syscall.into(), decision.into(), reason.into())
}

/// Issue 25: the same path was asked again and again. `touch` opens the file, then sets its
/// times (strict mode sees both): one question, which says what the write is; the times
/// follow unasked, logged as `follow-up`.
#[test]
fn touch_asks_once() {
    for v in two_variants() {
        let s = Scratch::new("touch-once", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "--mode=strict");
        let f = s.outside.join("f");
        let before = std::time::SystemTime::now() - Duration::from_secs(2);
        t.line(&format!("touch {} && echo touched", f.display()));
        let sc = bar(&t);
        assert!(
            sc.contains("touch (pid ") && sc.contains(&format!("wants to create {}", f.display())),
            "{sc}"
        );
        t.keys(&["o"]);
        // No second question: touch ends.
        t.wait_for("touch's end", |x| {
            !bar_up(x) && x.lines().any(|l| l.trim() == "touched")
        });
        let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
        assert!(mtime >= before, "{f:?}: its times were not set");
        assert_eq!(
            lines_for(&s, &f),
            [
                line("openat", "allow", "once"),
                line("utimensat", "allow", "follow-up")
            ]
        );
        // Denied: the times are not asked about either.
        let g = s.outside.join("g");
        t.line(&format!("touch {}; echo touch=$?", g.display()));
        bar(&t);
        t.keys(&["d"]);
        t.wait_for("touch's end", |x| {
            !bar_up(x) && x.lines().any(|l| l.trim() == "touch=1")
        });
        assert!(!g.exists());
        let lines = lines_for(&s, &g);
        assert_eq!(lines[0], line("openat", "deny", "denied"), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.2 == "follow-up"), "{lines:?}");
        t.line("exit");
    }
}

/// Issue 25: leaving a supervised shell asked three times about `~/.bash_history` (an open,
/// another, a chown). One question now, which says the file is created.
#[test]
fn leaving_a_shell_asks_once_about_its_history() {
    for v in two_variants() {
        let s = Scratch::new("history-once", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "");
        let history = s.home.join(".bash_history");
        t.line("echo remembered");
        t.line("exit");
        let sc = bar(&t);
        assert!(
            sc.contains(&format!("wants to create {}", history.display())),
            "{sc}"
        );
        t.keys(&["o"]);
        // bash 5 opens it twice (the second open follows the first answer) and gives it
        // its owner back, which is asked: a change of owner never follows an answer.
        let sc = t.wait_for("the outer shell or the owner's question", |x| {
            (!bar_up(x) && x.lines().any(|l| l.trim() == "$"))
                || x.contains("wants to change the owner of")
        });
        if sc.contains("wants to change the owner of") {
            settle();
            t.keys(&["o"]);
            t.wait_for("the outer shell", |x| {
                !bar_up(x) && x.lines().any(|l| l.trim() == "$")
            });
        }
        let text = std::fs::read_to_string(&history).unwrap();
        assert!(text.contains("echo remembered"), "{text}");
        let lines = lines_for(&s, &history);
        assert!(lines.len() >= 2, "{lines:?}");
        assert_eq!(lines[0].2, "once", "{lines:?}");
        for l in &lines[1..] {
            let owner = l.0.contains("chown");
            let want = if owner { "once" } else { "follow-up" };
            assert_eq!((l.1.as_str(), l.2.as_str()), ("allow", want), "{lines:?}");
        }
    }
}

/// Issue 25: a user was asked about `touch /etc/x`, which fails natively with `EACCES`. The
/// kernel's answer now comes unasked, logged as `refused`; root, who may write there, is
/// still asked.
#[test]
fn a_write_the_kernel_refuses_is_not_asked() {
    for v in two_variants() {
        let s = Scratch::new("refused", v);
        let t = s.tmux(120, 30);
        start_session(&s, &t, "");
        let f = PathBuf::from(format!("/etc/hallpass-refused-{}", std::process::id()));
        t.line(&format!("touch {}; echo touch=$?", f.display()));
        if matches!(v.who, Who::Unprivileged { .. }) {
            // No bar: touch ends at once, as it would without hallpass.
            let sc = t.wait_for("touch's end", |x| x.lines().any(|l| l.trim() == "touch=1"));
            assert!(!bar_up(&sc), "{sc}");
            assert!(sc.contains("Permission denied"), "{sc}");
            assert_eq!(lines_for(&s, &f), [line("openat", "deny", "refused")]);
        } else {
            let sc = bar(&t);
            assert!(
                sc.contains(&format!("wants to create {}", f.display())),
                "{sc}"
            );
            t.keys(&["d"]);
            t.wait_for("touch's end", |x| {
                !bar_up(x) && x.lines().any(|l| l.trim() == "touch=1")
            });
            assert_eq!(lines_for(&s, &f)[0], line("openat", "deny", "denied"));
        }
        assert!(!f.exists());
        t.line("exit");
    }
}
