//! What hallpass says when a session ends with writes refused that no one decided there and
//! then (issue 25: under `--prompt=deny` the README's first command printed only touch's
//! "Permission denied"): one line on stderr with how many, why, the first paths, and how to
//! see them all; nothing when nothing was refused, or when a person refused it.

use std::time::Duration;

use hallpass_tests::*;

const MODES: [&str; 2] = ["--mode=lite", "--mode=strict"];

/// The README's first command, as it reads there (after `target/release/hallpass`).
fn readme_first_command() -> Vec<String> {
    let readme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = std::fs::read_to_string(readme).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("cargo build --release && target/release/hallpass "))
        .expect("the README's first command");
    let args = line.split("target/release/hallpass ").nth(1).unwrap();
    assert_eq!(
        args, "--prompt=deny -- sh -c 'touch ~/x'",
        "the README changed"
    );
    ["--prompt=deny", "--", "sh", "-c", "touch ~/x"]
        .map(String::from)
        .to_vec()
}

/// The reasons of the log's lines, counted.
fn reasons(s: &Scratch, log: &std::path::Path) -> Vec<String> {
    s.log_lines(log)
        .iter()
        .map(|l| l["reason"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_readme_s_first_command_says_what_was_refused() {
    for v in variants().into_iter().step_by(2) {
        for mode in MODES {
            let s = Scratch::new("refused-readme", v);
            let mut args = vec![mode.to_string()];
            args.extend(readme_first_command());
            let out = run(s.hallpass(&args));
            let ctx = format!("{v:?} {mode}");
            assert_eq!(out.status.code(), Some(1), "{ctx}: {}", stderr(&out));
            let err = stderr(&out);
            let lines: Vec<&str> = err.lines().collect();
            let x = s.home.join("x");
            assert_eq!(
                lines[0],
                format!("touch: cannot touch '{}': Permission denied", x.display()),
                "{ctx}"
            );
            // The count is the log's: the same run with --log says how many lines it wrote.
            let log = s.root.join("w.jsonl");
            let mut logged = vec![mode.to_string(), format!("--log={}", log.display())];
            logged.extend(readme_first_command());
            let again = run(s.hallpass(&logged));
            let n = reasons(&s, &log).len();
            assert!(n >= 1, "{ctx}");
            let writes = if n == 1 {
                "1 write was".to_string()
            } else {
                format!("{n} writes were")
            };
            assert_eq!(
                lines[1..],
                [format!(
                    "hallpass: {writes} refused ({n} unattended): ~/x; to see them all, run with --log=FILE, then hallpass report FILE"
                )],
                "{ctx}: {err}"
            );
            assert_eq!(
                stderr(&again).lines().last().unwrap(),
                format!(
                    "hallpass: {writes} refused ({n} unattended): ~/x; see them all: hallpass report {}",
                    log.display()
                ),
                "{ctx}"
            );
        }
    }
}

#[test]
fn a_session_with_nothing_refused_adds_nothing() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("refused-none", v);
        // Writes in the project, audited writes outside, a --deny-path the person gave: no
        // refusal no one decided.
        let deny = s.outside.join("no");
        let out = run(s.hallpass([
            "--prompt=allow",
            &format!("--deny-path={}", deny.display()),
            "--",
            "sh",
            "-c",
            &format!(
                "touch ./in ~/audited; touch {} 2>/dev/null; echo done >&2",
                deny.display()
            ),
        ]));
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "done\n", "{v:?}");
        assert!(s.home.join("audited").exists() && !deny.exists());
    }
}

/// A person's own "deny" is not counted; a question left open when the command ends is.
#[test]
fn a_question_left_open_is_said_unanswered_and_a_denial_is_not() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("refused-open", v);
        let c = background(s.hallpass([
            "--prompt=answer",
            "--",
            "sh",
            "-c",
            "echo > ~/denied; echo > ~/open",
        ]));
        let q = s.wait_pending(1, &[]);
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(wait_until(Duration::from_secs(10), || {
            s.try_pending(&[]).is_ok_and(|p| {
                p.len() == 1 && p[0]["path"].as_str().is_some_and(|x| x.ends_with("/open"))
            })
        }));
        // The session ends with the question open: the command is stopped.
        let _ = std::process::Command::new("kill")
            .arg(c.id().to_string())
            .status();
        let out = finish(c);
        let err = stderr(&out);
        assert_eq!(
            err.lines().last().unwrap(),
            "hallpass: 1 write was refused (1 unanswered): ~/open; to see them all, run with --log=FILE, then hallpass report FILE",
            "{v:?}: {err}"
        );
        let said = err
            .lines()
            .filter(|l| l.starts_with("hallpass: ") && l.contains(" refused ("));
        assert_eq!(said.count(), 1, "{v:?}: {err}");
    }
}

/// hallpass's own files are refused even in audit mode: said, with their reason.
#[test]
fn a_protected_path_is_said_even_in_audit_mode() {
    let s = Scratch::new("refused-protected", variants()[0]);
    std::fs::create_dir_all(s.home.join(".config/hallpass")).unwrap();
    let out = run(s.hallpass([
        "--prompt=allow",
        "--",
        "sh",
        "-c",
        "echo x > ~/.config/hallpass/rules; touch ~/fine",
    ]));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "hallpass: 1 write was refused (1 protected): ~/.config/hallpass/rules; to see them all, run with --log=FILE, then hallpass report FILE",
        "{}",
        stderr(&out)
    );
}

/// In a real terminal, after the bar: stopping a session (Ctrl-] s) with a question open
/// leaves the line on the screen, on a line of its own after hallpass's other last words.
#[test]
fn the_line_shows_in_the_terminal_after_the_bar() {
    let s = Scratch::new("refused-tmux", variants()[0]);
    let t = s.tmux(160, 30);
    t.line("hallpass -- sh -c 'echo started; touch ~/asked'");
    t.wait_for("the bar", |x| x.contains("[o] allow once"));
    t.keys(&["C-]"]);
    t.keys(&["s"]);
    let want = "hallpass: 1 write was refused (1 unanswered): ~/asked; to see them all, run with --log=FILE, then hallpass report FILE";
    let screen = t.wait_for("the line", |x| x.lines().any(|l| l == want));
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().position(|l| *l == want).unwrap();
    assert_eq!(
        lines[at - 1],
        "hallpass: session stopped (Ctrl-] s): the command was sent SIGHUP",
        "{screen}"
    );
    assert_eq!(lines[at + 1].trim_end(), "$", "{screen}");
}
