//! The command line: pass-through of stdio, environment and exit status; clear one-line
//! errors for bad input; flags that are not built yet say so.

use std::io::Write;
use std::process::Stdio;

use hallpass_tests::*;

fn me() -> Variant {
    Variant {
        who: Who::Me,
        lend: false,
    }
}

fn first_line_err(o: &std::process::Output) -> String {
    stderr(o).lines().next().unwrap_or_default().to_string()
}

#[test]
fn exit_status_passes_through() {
    let s = Scratch::new("exit", me());
    let out = run(s.hallpass(["--prompt=deny", "--", "sh", "-c", "exit 7"]));
    assert_eq!(out.status.code(), Some(7));
    let out = run(s.hallpass(["--prompt=deny", "--", "sh", "-c", "kill -TERM $$"]));
    assert_eq!(out.status.code(), Some(128 + 15), "a signal death is 128+N");
    let out = run(s.hallpass(["--prompt=deny", "--", "no-such-command-xyz"]));
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        first_line_err(&out),
        "hallpass: no-such-command-xyz: command not found"
    );
    let out = run(s.hallpass(["--prompt=deny", "--", "/etc/passwd"]));
    assert_eq!(out.status.code(), Some(126));
    assert!(
        first_line_err(&out).starts_with("hallpass: cannot run /etc/passwd: Permission denied"),
        "{}",
        stderr(&out)
    );
}

/// A reader that goes away ends a writer quietly, with SIGPIPE, as natively: the command's
/// (the launcher must not hand it SIGPIPE ignored) and hallpass's own printing commands.
#[test]
fn a_closed_pipe_ends_a_writer_quietly() {
    let s = Scratch::new("sigpipe", me());
    let script = "yes | head -1";
    let native = run(s.command("sh").args(["-c", script]));
    assert_eq!(
        (stdout(&native).as_str(), stderr(&native).as_str()),
        ("y\n", "")
    );
    let out = run(s.hallpass(["--prompt=deny", "--", "sh", "-c", script]));
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("y\n", ""));
    // `hallpass status` with a reader that leaves before it reads anything.
    let hp = bin("hallpass");
    let out = run(s
        .command("sh")
        .args(["-c", &format!("'{}' status | true", hp.display())]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no panic, no message");
}

#[test]
fn stdio_and_environment_pass_through() {
    let s = Scratch::new("stdio", me());
    let mut cmd = s.hallpass([
        "--prompt=deny",
        "--",
        "sh",
        "-c",
        "cat; echo \"$FOO\" >&2; printf '\\000\\377'",
    ]);
    cmd.env("FOO", "bar baz")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line one\nline two\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.stdout, b"line one\nline two\n\x00\xff");
    assert_eq!(stderr(&out), "bar baz\n");
    // No command: $SHELL reads its commands from stdin.
    let mut cmd = s.hallpass(["--prompt=deny"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo from-the-shell $HALLPASS_SESSION\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        stdout(&out).starts_with("from-the-shell "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bad_input_gets_one_clear_line() {
    let s = Scratch::new("badinput", me());
    let out = run(s.hallpass(["--bogus", "--", "true"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        first_line_err(&out).contains("unexpected argument '--bogus'"),
        "{}",
        stderr(&out)
    );
    let out = run(s.hallpass(["--prompt=bogus", "--", "true"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'bogus' for '--prompt <MODE>'"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("[possible values: ask, allow, deny, answer, desktop]"));
    let out = run(s.hallpass([
        "--prompt=deny",
        "--log=/nonexistent-dir/w.jsonl",
        "--",
        "true",
    ]));
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(first_line_err(&out), "hallpass: cannot open the log file /nonexistent-dir/w.jsonl: No such file or directory (os error 2)");
    let out = run(s.hallpass(["--prompt=deny", "--log=/", "--", "true"]));
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(
        first_line_err(&out),
        "hallpass: the log file / is a directory, not a regular file"
    );
}

/// Issue 25: `hallpass claude` (the `--` forgotten) said only "unexpected argument 'claude'",
/// and a misspelt subcommand got no "did you mean"; each now says what to type.
#[test]
fn a_forgotten_double_dash_and_a_misspelt_subcommand_say_what_to_type() {
    let s = Scratch::new("usage", me());
    let out = run(s.hallpass(["claude-not-installed", "--resume"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "hallpass: unknown subcommand `claude-not-installed`\n\
         hint: to run a command, put -- before it: hallpass -- claude-not-installed --resume\n"
    );
    let out = run(s.hallpass(["--prompt=deny", "sh", "-c", "exit 3"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "hallpass: unexpected argument `sh`\n\
         hint: to run a command, put -- before it: hallpass --prompt=deny -- sh -c 'exit 3'\n"
    );
    // The line it suggests works.
    let out = run(s.hallpass(["--prompt=deny", "--", "sh", "-c", "exit 3"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = run(s.hallpass(["stauts"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "hallpass: unknown subcommand `stauts`\nhint: did you mean `hallpass status`?\n"
    );
    // A subcommand's own mistakes keep clap's did-you-mean.
    let out = run(s.hallpass(["rules", "lsit"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a similar subcommand exists: 'list'"),
        "{}",
        stderr(&out)
    );
}

/// Issue 25: `--allow-path ~` (the whole home) and `--allow-path '~/.foo.*'` (a `*` taken
/// as a plain character) were accepted without a word; each is refused with a hint, before
/// the command runs.
#[test]
fn a_path_flag_that_cannot_mean_what_it_says_is_refused() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("pathflags", v);
        let home = s.home.display().to_string();
        let above = s.root.display().to_string();
        for whole in ["~", "/", "~/..", home.as_str(), above.as_str()] {
            let out =
                run(s.hallpass(["--prompt=deny", "--allow-path", whole, "--", "touch", "ran"]));
            assert_eq!(out.status.code(), Some(2), "{whole}: {}", stderr(&out));
            assert_eq!(
                stderr(&out),
                format!(
                    "hallpass: --allow-path {whole} holds your whole home directory ({home}): name a directory inside it\n\
                     hint: a run with --prompt=allow --log=FILE, then `hallpass suggest FILE`, lists what the command writes\n"
                )
            );
            assert!(!s.project.join("ran").exists(), "the command ran");
        }
        let out = run(s.hallpass(["--prompt=deny", "--allow-path", "~/.foo.*", "--", "true"]));
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            "hallpass: --allow-path ~/.foo.*: a `*` here is no wildcard, and no file has that name\n\
             hint: a `*` pattern works in a profile: allow = [\"~/.foo.*\"] in ~/.config/hallpass/profiles/NAME.toml, used with --profile NAME\n"
        );
        let out = run(s.hallpass(["--prompt=deny", "--deny-path", "~/.ssh/*", "--", "true"]));
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            "hallpass: --deny-path ~/.ssh/*: a `*` here is no wildcard, and no file has that name\n\
             hint: it covers its path and everything below it: name the directory\n"
        );
        // A directory in the home, and a file whose name has a `*`, are what they say.
        std::fs::write(s.home.join("a*b"), "").unwrap();
        s.chown(&s.home);
        let out = run(s.hallpass([
            "--prompt=deny",
            "--allow-path",
            "~/.foo",
            "--allow-path",
            "~/a*b",
            "--",
            "sh",
            "-c",
            "mkdir ~/.foo && echo x > ~/'a*b'",
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(s.home.join("a*b")).unwrap(), "x\n");
    }
}

#[test]
fn ask_without_a_terminal_says_what_to_use_instead() {
    let s = Scratch::new("noterm", me());
    // Without a terminal (stdin is /dev/null here), asking says what to use instead.
    let want = "hallpass: --prompt=ask (the default) needs a terminal, and stdin or stdout is not one; use --prompt=answer to answer with `hallpass answer` elsewhere, --prompt=deny to deny what is not allowed, or --prompt=allow to allow and log it";
    let out = run(s.hallpass(["--", "true"]));
    assert_eq!(out.status.code(), Some(125));
    assert!(first_line_err(&out).starts_with(want), "{}", stderr(&out));
}

#[test]
fn a_daemon_that_cannot_start_is_a_clear_error() {
    let s = Scratch::new("nodaemon", me());
    let out = run(s
        .hallpass(["--prompt=deny", "--", "true"])
        .env("HALLPASSD", "/nonexistent/hallpassd"));
    assert_eq!(out.status.code(), Some(125));
    assert!(
        first_line_err(&out)
            .starts_with("hallpass: failed to start the daemon: /nonexistent/hallpassd:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn garbage_on_the_control_socket_leaves_the_daemon_up() {
    let s = Scratch::new("garbage", me());
    assert!(run(s.hallpass(["--prompt=deny", "--", "true"]))
        .status
        .success());
    let sock = s.runtime.join("hallpass/control.sock");
    for junk in [
        &b"\xff\xff\xff\xff"[..],
        b"\x00\x00\x00\x05hello",
        b"\x00\x00",
    ] {
        let mut c = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        c.write_all(junk).unwrap();
    }
    let out = run(s.hallpass(["--prompt=deny", "--", "true"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.status()["sessions"].as_array().unwrap().len(), 2);
}

#[test]
fn a_supervised_process_cannot_open_a_session() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("nested", v);
        let out = run(s.hallpass([
            "--prompt=deny",
            "--",
            "sh",
            "-c",
            "hallpass --prompt=allow -- true; echo $HALLPASS_SESSION",
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        let n = stdout(&out).trim().to_string();
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with("hallpass: the daemon refused the session: refused: peer pid"),
            "{err}"
        );
        // Issue 25: with what to do.
        assert_eq!(
            lines[1],
            format!("hint: this shell already runs under hallpass (session {n}); run the command directly, or leave the session first (exit)")
        );
    }
}

/// Issue 25: `hallpass rules` inside a session started with "transport error"; `status`,
/// `rules` and `answer` now say in a line why the daemon would not answer, and where to run
/// them.
#[test]
fn the_api_verbs_inside_a_session_say_where_to_run_them() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("inside-verbs", v);
        for verb in ["status", "rules", "answer"] {
            let out = run(s.hallpass([
                "--prompt=deny",
                "--",
                "sh",
                "-c",
                &format!("hallpass {verb}; echo \"$? $HALLPASS_SESSION\""),
            ]));
            let got = stdout(&out);
            let (code, n) = got.trim().split_once(' ').unwrap();
            assert_eq!(code, "125", "{verb}");
            assert_eq!(
                stderr(&out),
                format!(
                    "hallpass: {verb}: this shell runs inside hallpass session {n}, and the daemon answers no process of a session (a command could answer its own questions)\n\
                     hint: run `hallpass {verb}` outside the session: in another terminal, or after leaving it (exit)\n"
                )
            );
        }
        // Without the variable (a process that cleared its environment), the mark is enough.
        let out = run(s.hallpass([
            "--prompt=deny",
            "--",
            "env",
            "-u",
            "HALLPASS_SESSION",
            "hallpass",
            "status",
        ]));
        assert_eq!(out.status.code(), Some(125));
        let err = stderr(&out);
        assert!(
            err.starts_with("hallpass: status: this process runs under a seccomp filter with no_new_privs (Seccomp: 2, ")
                && err.ends_with("and the daemon answers no such process\nhint: run `hallpass status` outside such a sandbox\n"),
            "{err}"
        );
        assert!(!err.contains("transport error"), "{err}");
    }
}

#[test]
fn help_is_stable() {
    let out = run(std::process::Command::new(bin("hallpass")).arg("--help"));
    let got = stdout(&out);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/help.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want =
        std::fs::read_to_string(&path).expect("snapshot missing: run with UPDATE_SNAPSHOTS=1");
    assert_eq!(
        got, want,
        "`hallpass --help` changed; if on purpose, rerun with UPDATE_SNAPSHOTS=1"
    );
    for line in got.lines() {
        assert!(line.chars().count() <= 100, "help line too long: {line}");
    }
}

/// Issue 19: `hallpass status` printed a session's command line raw. An argument with an
/// escape sequence and a bidirectional override is shown escaped, and exactly (inert) in
/// `--json`.
#[test]
fn status_shows_a_command_line_escaped() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("status-hostile", v);
        let word = "x\x1b[2J\u{202e}y";
        let c = background(s.hallpass(["--prompt=deny", "--", "sh", "-c", "sleep 30", word]));
        assert!(wait_until(std::time::Duration::from_secs(30), || {
            let out = run(s.hallpass(["status", "--json"]));
            serde_json::from_slice::<serde_json::Value>(&out.stdout)
                .is_ok_and(|st| st["sessions"].as_array().is_some_and(|a| !a.is_empty()))
        }));
        let out = run(s.hallpass(["status"]));
        let table = stdout(&out);
        assert!(!hostile::has_raw_control(&table), "{table:?}");
        assert!(table.contains(r"sh -c sleep 30 x\e[2J\u{202e}y"), "{table}");
        let out = run(s.hallpass(["status", "--json"]));
        assert!(!hostile::has_raw_control(&stdout(&out)), "{}", stdout(&out));
        let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(st["sessions"][0]["argv"][3], word);
        let _ = std::process::Command::new("kill")
            .arg(c.id().to_string())
            .status();
        finish(c);
    }
}
