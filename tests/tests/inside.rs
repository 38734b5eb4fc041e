//! Inside a session, in a real terminal (issue 25): a bare `hallpass` starts a shell that
//! knows it is supervised (`HALLPASS_SESSION`, which the README's prompt snippet shows), and
//! hallpass run in it says why it cannot do what it was asked, with what to do instead.

use hallpass_tests::*;

/// The line of the README's prompt snippet for bash: the test runs what the README says.
fn readme_snippet() -> String {
    let readme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    std::fs::read_to_string(readme)
        .unwrap()
        .lines()
        .find(|l| l.contains("PS1=\"[hallpass"))
        .expect("the README's bash prompt snippet")
        .split(" # ")
        .next()
        .unwrap()
        .trim()
        .to_string()
}

/// The session number the prompt shows, once it shows one.
fn prompt_session(screen: &str) -> Option<u64> {
    let rest = screen.split("[hallpass ").nth(1)?;
    rest.split(']').next()?.parse().ok()
}

#[test]
fn a_bare_hallpass_shell_shows_it_is_supervised_and_says_so_when_nested() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("inside", v);
        std::fs::write(
            s.home.join(".bashrc"),
            // No history: bash would write it on exit, and be asked about it.
            format!("PS1='$ '\nunset HISTFILE\n{}\n", readme_snippet()),
        )
        .unwrap();
        s.chown(&s.home);
        let t = s.tmux(200, 30);
        t.line("SHELL=/bin/bash hallpass");
        let screen = t.wait_for("the supervised shell's prompt", |x| {
            prompt_session(x).is_some() && x.trim_end().ends_with("] $")
        });
        let n = prompt_session(&screen).unwrap();
        t.line("clear; hallpass -- true");
        let hint = format!(
            "hint: this shell already runs under hallpass (session {n}); run the command directly, or leave the session first (exit)"
        );
        let screen = t.wait_for("the nested session's hint", |x| x.contains(&hint));
        assert!(
            screen.contains("hallpass: the daemon refused the session: refused: peer pid"),
            "{screen}"
        );
        t.line("clear; hallpass rules");
        let line = format!("hallpass: rules: this shell runs inside hallpass session {n}, and the daemon answers no process of a session");
        let screen = t.wait_for("rules' refusal", |x| x.contains(&line));
        assert!(!screen.contains("transport error"), "{screen}");
        // Left: the outer shell's prompt, without the mark.
        t.line("exit");
        let screen = t.wait_for("the outer shell", |x| {
            x.trim_end().lines().last() == Some("$")
        });
        assert!(screen.contains("] $ exit"), "{screen}");
    }
}
