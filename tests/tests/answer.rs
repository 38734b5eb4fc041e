//! Answering from elsewhere: `hallpass answer` (scripted and interactive in tmux), through a
//! relayed socket, and the refusals: a supervised process cannot answer its own question or
//! change the rules, and garbage on the API socket harms nothing.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use hallpass_tests::*;

/// Starts `hallpass --prompt=answer --log=LOG -- sh -c SCRIPT` in the background.
fn session(s: &Scratch, log: &Path, script: &str) -> Child {
    background(s.session_command("answer", log, script))
}

/// A session (as [`session`], logging to `log.jsonl`) whose command writes `a`, then `b`,
/// outside the project: the log, both paths and the launcher.
fn two_writes_outside(s: &Scratch) -> (PathBuf, PathBuf, PathBuf, Child) {
    let log = s.root.join("log.jsonl");
    let (a, b) = (s.outside.join("a"), s.outside.join("b"));
    let script = format!(
        "hp-write touch {}; hp-write touch {}",
        a.display(),
        b.display()
    );
    let c = session(s, &log, &script);
    (log, a, b, c)
}

fn pending(s: &Scratch, extra: &[&str]) -> Vec<serde_json::Value> {
    s.try_pending(extra).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_pending_write_is_listed_and_answered_by_id() {
    for v in variants() {
        let s = Scratch::new("answer-id", v);
        let (log, a, b, c) = two_writes_outside(&s);
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["path"], a.to_string_lossy().as_ref());
        assert_eq!(q[0]["syscall"], "openat");
        assert_eq!(q[0]["name"], "hp-write");
        assert_eq!(q[0]["chain"][0], "hp-write touch");
        // Not the scratch root: it holds the home directory.
        assert_eq!(q[0]["scope"], s.outside.to_string_lossy().as_ref());
        let id = q[0]["id"].to_string();
        let out = run(s.hallpass(["answer", "--id", &id, "once"]));
        assert!(out.status.success(), "{}", stderr(&out));
        // The first answer wins; a second one is refused.
        let out = run(s.hallpass(["answer", "--id", &id, "deny"]));
        assert_eq!(out.status.code(), Some(125));
        assert!(
            stderr(&out).contains("no pending question"),
            "{}",
            stderr(&out)
        );
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["path"], b.to_string_lossy().as_ref());
        // A scope that does not hold the path is refused.
        let id = q[0]["id"].to_string();
        let out = run(s.hallpass(["answer", "--id", &id, "always", "--scope", "/nowhere"]));
        assert_eq!(out.status.code(), Some(125));
        assert!(stderr(&out).contains("does not hold"), "{}", stderr(&out));
        let out = run(s.hallpass(["answer", "--id", &id, "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = finish(c);
        assert_eq!(stdout(&out), "ok\nerr 13\n");
        assert!(
            stderr(&out).contains("wait for `hallpass answer` (run it in another terminal)"),
            "{}",
            stderr(&out)
        );
        assert!(a.exists() && !b.exists());
        let lines = s.log_lines(&log);
        let reasons: Vec<_> = lines
            .iter()
            .map(|l| l["reason"].as_str().unwrap())
            .collect();
        assert_eq!(reasons, ["once", "denied"]);
    }
}

/// People answer by the short number a question shows (`hallpass answer --id 2`), counted from
/// 1 by each daemon, not by the 16-digit id.
#[test]
fn a_question_is_answered_by_its_short_number() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("answer-number", v);
        let (_, _, b, c) = two_writes_outside(&s);
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["number"], 1, "{q:?}");
        let out = run(s.hallpass(["answer", "--id", "1", "once"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let q = s.wait_pending(1, &[]);
        assert_eq!(
            (q[0]["number"].as_u64(), q[0]["path"].as_str()),
            (Some(2), b.to_str())
        );
        // Not a pending number: said, with what to do.
        let out = run(s.hallpass(["answer", "--id", "7", "once"]));
        assert_eq!(out.status.code(), Some(125));
        assert!(
            stderr(&out).contains("no pending question 7"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("hint: `hallpass answer --json` lists"),
            "{}",
            stderr(&out)
        );
        let out = run(s.hallpass(["answer", "--id", "2", "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&finish(c)), "ok\nerr 13\n");
    }
}

#[test]
fn the_interactive_client_answers_two_sessions_in_turn() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("answer-tmux", v);
        let (a, b) = (s.outside.join("a"), s.outside.join("b"));
        let c1 = session(
            &s,
            &s.root.join("1.jsonl"),
            &format!("hp-write touch {}", a.display()),
        );
        s.wait_pending(1, &[]);
        let c2 = session(
            &s,
            &s.root.join("2.jsonl"),
            &format!("hp-write touch {}", b.display()),
        );
        let q = s.wait_pending(2, &[]);
        assert_ne!(q[0]["session"], q[1]["session"]);
        let t = s.tmux(120, 30);
        t.line("hallpass answer");
        let sc = t.wait_for("two questions", |x| x.contains("2 questions waiting"));
        assert!(
            sc.contains(&format!("wants to create {}", a.display())),
            "{sc}"
        );
        assert!(
            sc.contains(&format!("wants to create {}", b.display())),
            "{sc}"
        );
        assert!(sc.contains("by: hp-write touch"), "{sc}");
        assert!(sc.contains("[o] allow once  [t] for 5m0s"), "{sc}");
        // The oldest is selected: allow it; then deny the other. A question takes keys once
        // it has been selected a moment (a double press must not answer the next one).
        std::thread::sleep(Duration::from_millis(500));
        t.keys(&["o"]);
        t.wait_for("one question", |x| x.contains("1 question waiting"));
        std::thread::sleep(Duration::from_millis(500));
        t.keys(&["d"]);
        t.wait_for("none", |x| x.contains("no questions waiting"));
        t.keys(&["q"]);
        t.wait_for("the shell", |x| x.lines().any(|l| l.trim() == "$"));
        assert_eq!(stdout(&finish(c1)), "ok\n");
        assert_eq!(stdout(&finish(c2)), "err 13\n");
        assert!(a.exists() && !b.exists());
    }
}

#[test]
fn a_relayed_socket_answers_like_the_local_one() {
    let s = Scratch::new("answer-relay", variants()[0]);
    let log = s.root.join("log.jsonl");
    let f = s.outside.join("f");
    let c = session(&s, &log, &format!("hp-write touch {}", f.display()));
    s.wait_pending(1, &[]);
    let relay = s.root.join("relay.sock");
    let api = s.runtime.join("hallpass/api.sock");
    let mut socat = s
        .command("socat")
        .arg(format!("UNIX-LISTEN:{},fork", relay.display()))
        .arg(format!("UNIX-CONNECT:{}", api.display()))
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !relay.exists() {
        assert!(Instant::now() < deadline, "socat did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sock = relay.to_string_lossy().into_owned();
    let q = pending(&s, &["--socket", &sock]);
    assert_eq!(q.len(), 1);
    let out = run(s.hallpass([
        "answer",
        "--socket",
        &sock,
        "--id",
        &q[0]["id"].to_string(),
        "once",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&finish(c)), "ok\n");
    let _ = socat.kill();
    let _ = socat.wait();
}

#[test]
fn a_supervised_process_cannot_answer_or_change_the_rules() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("answer-self", v);
        let log = s.root.join("log.jsonl");
        let f = s.outside.join("f");
        // The session asks, then tries to answer its own question and to add a rule, then
        // says how that went; the write waits for a real answer.
        let script = format!(
            "hp-write touch {f} & sleep 1; \
             hallpass answer --json >/dev/null 2>&1; echo list=$?; \
             hallpass answer --id 1 once >/dev/null 2>&1; echo answer=$?; \
             hallpass rules allow {out} >/dev/null 2>&1; echo rules=$?; \
             wait",
            f = f.display(),
            out = s.outside.display()
        );
        let c = background(s.hallpass([
            mode,
            "--prompt=answer",
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &script,
        ]));
        let q = s.wait_pending(1, &[]);
        // Give the inner attempts time to fail.
        std::thread::sleep(Duration::from_millis(2500));
        let q2 = pending(&s, &[]);
        assert_eq!(
            q2.len(),
            1,
            "{mode}: the question was answered from inside: {q2:?}"
        );
        assert_eq!(q2[0]["id"], q[0]["id"], "{mode}: {q:?} then {q2:?}");
        assert!(!f.exists());
        assert!(!s.home.join(".config/hallpass/rules").exists());
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = finish(c);
        let so = stdout(&out);
        for what in ["list", "answer", "rules"] {
            assert!(
                so.lines()
                    .any(|l| l.starts_with(&format!("{what}=")) && !l.ends_with("=0")),
                "{what} succeeded from inside the session: {so}"
            );
        }
        assert!(so.ends_with("err 13\n") || so.contains("err 13"), "{so}");
        // The daemon says why in its log; strict mode refuses the connection to its socket
        // before it is made, and logs that.
        let dlog =
            std::fs::read_to_string(s.runtime.join("hallpass/hallpassd.log")).unwrap_or_default();
        if mode == "--mode=strict" {
            let refused = s.log_lines(&log).into_iter().any(|l| {
                l["syscall"] == "connect" && l["decision"] == "deny" && l["reason"] == "protected"
            });
            assert!(refused, "{:?}", s.log_lines(&log));
        } else {
            assert!(dlog.contains("is supervised by session launcher"), "{dlog}");
        }
    }
}

#[test]
fn garbage_on_the_api_socket_leaves_the_daemon_up() {
    use std::io::Write;
    let s = Scratch::new("api-garbage", variants()[0]);
    assert!(run(s.hallpass(["--prompt=deny", "--", "true"]))
        .status
        .success());
    let api = s.runtime.join("hallpass/api.sock");
    for junk in [
        &b"\xff\xff\xff\xff garbage"[..],
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00",
        b"GET / HTTP/1.1\r\n\r\n",
        b"",
    ] {
        let mut c = std::os::unix::net::UnixStream::connect(&api).unwrap();
        let _ = c.write_all(junk);
        drop(c);
    }
    // Still serving.
    let st = s.status();
    assert!(st["pid"].as_i64().unwrap() > 0);
    // And said so in its log, a line per dropped connection.
    let log = s.runtime.join("hallpass/hallpassd.log");
    assert!(
        wait_until(Duration::from_secs(10), || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .matches("hallpassd: api: failed serving connection")
                .count()
                >= 3
        }),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

#[test]
fn a_rename_shows_both_paths_and_the_answer_is_for_both() {
    let s = Scratch::new("answer-rename", variants()[0]);
    let log = s.root.join("log.jsonl");
    let (from, to) = (s.outside.join("from"), s.outside.join("sub/to"));
    std::fs::create_dir_all(s.outside.join("sub")).unwrap();
    std::fs::write(&from, "x").unwrap();
    let c = session(
        &s,
        &log,
        &format!("mv {} {} && echo moved", from.display(), to.display()),
    );
    let q = s.wait_pending(1, &[]);
    let paths: Vec<&str> = std::iter::once(q[0]["path"].as_str().unwrap())
        .chain(
            q[0]["also"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap()),
        )
        .collect();
    assert_eq!(
        paths,
        [from.to_str().unwrap(), to.to_str().unwrap()],
        "{:?}",
        q[0]
    );
    let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "once"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&finish(c)), "moved\n");
    assert!(to.exists() && !from.exists());
}

#[test]
fn the_interactive_client_follows_a_daemon_restart() {
    let s = Scratch::new("answer-restart", variants()[0]);
    let f = s.outside.join("f");
    let c = session(
        &s,
        &s.root.join("log.jsonl"),
        &format!("hp-write touch {}", f.display()),
    );
    let first = s.wait_pending(1, &[]);
    let t = s.tmux(120, 30);
    t.line("hallpass answer");
    t.wait_for("the question", |x| x.contains("1 question waiting"));
    s.kill_daemon();
    // The launcher brings a new daemon, which asks again (a new id, numbered from 1 again);
    // the client says so and shows it.
    let again = s.wait_asked_again(&first[0]);
    assert_eq!(again["number"], 1);
    t.wait_for("the question, asked again", |x| {
        x.contains("the daemon is back") && x.contains("[1]") && x.contains("1 question waiting")
    });
    std::thread::sleep(Duration::from_millis(500));
    t.keys(&["o"]);
    t.wait_for("none", |x| x.contains("no questions waiting"));
    t.keys(&["q"]);
    assert_eq!(stdout(&finish(c)), "ok\n");
}

/// The daemon's log, for what it says of refused peers.
fn daemon_log(s: &Scratch) -> String {
    std::fs::read_to_string(s.runtime.join("hallpass/hallpassd.log")).unwrap_or_default()
}

#[test]
fn a_process_under_a_seccomp_filter_cannot_answer_or_change_the_rules() {
    // As a process the command left behind is once its session is over: under the session's
    // filter, with no launcher above it. Here the filter is one of its own (allowing
    // everything), and the process is started from outside any session.
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("answer-filtered", v);
        let log = s.root.join("log.jsonl");
        let f = s.outside.join("f");
        let c = session(&s, &log, &format!("hp-write touch {}", f.display()));
        let q = s.wait_pending(1, &[]);
        let id = q[0]["id"].to_string();
        let filtered = |args: &[&str]| {
            let mut cmd = s.command(bin("hp-write"));
            cmd.arg("sandboxed").arg(bin("hallpass")).args(args);
            run(cmd)
        };
        let rules = s.home.join(".config/hallpass/rules");
        for args in [
            &["answer", "--id", &id, "once"][..],
            &["answer", "--id", &id, "always"],
            &["answer", "--json"],
            &["rules", "allow", &s.outside.to_string_lossy()],
            // (Not the whole home: that is a usage error before any daemon is asked.)
            &["rules", "allow", &s.home.join(".profile").to_string_lossy()],
            &["status"],
            &["--prompt=allow", "--", "true"],
        ] {
            let out = filtered(args);
            assert_eq!(
                out.status.code(),
                Some(125),
                "{v:?} {args:?}: {}",
                stdout(&out)
            );
            let err = stderr(&out);
            assert!(err.contains("seccomp"), "{v:?} {args:?}: {err}");
        }
        // Nothing changed: the rules file was never written, the question waits as it was.
        assert!(!rules.exists(), "{v:?}");
        let q2 = pending(&s, &[]);
        assert_eq!(q2.len(), 1, "{v:?}: {q2:?}");
        assert_eq!(q2[0]["id"], q[0]["id"], "{v:?}");
        // The daemon says why.
        assert!(
            daemon_log(&s).contains("runs under a seccomp filter"),
            "{v:?}: {}",
            daemon_log(&s)
        );
        // From outside the question is answered as ever.
        let out = run(s.hallpass(["answer", "--id", &id, "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&finish(c)), "err 13\n");
        assert!(!f.exists());
    }
}

#[test]
fn a_process_that_outlives_its_session_cannot_add_a_rule_or_answer() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("answer-survivor", v);
        // Another session's question, for the survivor to try to answer.
        let q_file = s.outside.join("q");
        let other = session(
            &s,
            &s.root.join("other.jsonl"),
            &format!("hp-write touch {}", q_file.display()),
        );
        let q = s.wait_pending(1, &[]);
        let id = q[0]["id"].to_string();
        // The command takes its launcher's descriptors away (so it cannot read /proc to end
        // what is left), leaves a process that waits until the launcher is gone, then tries
        // to add a lasting rule for the home directory and to answer the other question.
        let script = format!(
            "L=$PPID; prlimit --pid $L --nofile=0:0 2>/dev/null && echo starved; \
             ( while [ -e /proc/$L ] && ! grep -q '^State:.Z' /proc/$L/status; do sleep 0.1; done; sleep 0.5; \
               hallpass rules allow {home} 2>&1; echo rules=$?; \
               hallpass answer --id {id} always 2>&1; echo answer=$?; \
               echo done ) & exit 0",
            home = s.home.display()
        );
        let child = background(s.hallpass([mode, "--prompt=deny", "--", "sh", "-c", &script]));
        // The survivor holds the pipes: reading them to the end waits for it too.
        let out = finish(child);
        let (text, err) = (stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{v:?} {mode}: {err}");
        if text.contains("done") {
            // It survived: the launcher said it could not end it, and the daemon refused it.
            assert!(text.contains("starved"), "{v:?} {mode}: {text}");
            assert!(
                err.contains("cannot list the processes the command left behind"),
                "{v:?} {mode}: {err}"
            );
            for what in ["rules", "answer"] {
                assert!(
                    text.lines()
                        .any(|l| l.starts_with(&format!("{what}=")) && !l.ends_with("=0")),
                    "{v:?} {mode}: {what} succeeded after the session: {text}"
                );
            }
            assert!(text.contains("runs under a seccomp filter"), "{text}");
            assert!(
                daemon_log(&s).contains("runs under a seccomp filter"),
                "{}",
                daemon_log(&s)
            );
        } else {
            // Taking the launcher's descriptors was refused, or the launcher took them back
            // (as root where it may): what was left was ended, nothing survived to try.
            eprintln!("{v:?} {mode}: no survivor to try ({text:?}; {err})");
            assert!(
                err.contains("hallpass: ended ") && !err.contains("could not end"),
                "{v:?} {mode}: {err}"
            );
        }
        // Whatever happened, the rules are as they were and the question still waits.
        assert!(
            !s.home.join(".config/hallpass/rules").exists(),
            "{v:?} {mode}"
        );
        let q2 = pending(&s, &[]);
        assert_eq!(q2.len(), 1, "{v:?} {mode}: {q2:?}");
        assert_eq!(q2[0]["id"], q[0]["id"], "{v:?} {mode}");
        let out = run(s.hallpass(["answer", "--id", &id, "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&finish(other)), "err 13\n");
        // A later unattended session still cannot write outside.
        let out = run(s.hallpass([
            "--prompt=deny",
            "--",
            "hp-write",
            "touch",
            &s.home.join("x").to_string_lossy(),
        ]));
        assert_eq!(stdout(&out), "err 13\n", "{v:?} {mode}: {}", stderr(&out));
    }
}

/// Issue 19: a question about a path with escape sequences, a line break and a
/// bidirectional override. `--json` carries the path exactly, inert on a terminal; the
/// interactive client shows it escaped, its lines above intact.
#[test]
fn a_hostile_path_is_shown_not_obeyed() {
    const PRINTF: &str = r"k\033[2J\033[H\n      by: you\342\200\256x";
    const SHOWN: &str = r"k\e[2J\e[H\n      by: you\u{202e}x";
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("answer-hostile", v);
        let script = format!(
            "hp-write touch \"{}/$(printf '{PRINTF}')\"",
            s.outside.display()
        );
        let c = session(&s, &s.root.join("log.jsonl"), &script);
        let q = s.wait_pending(1, &[]);
        let raw = format!(
            "{}/k\x1b[2J\x1b[H\n      by: you\u{202e}x",
            s.outside.display()
        );
        assert_eq!(q[0]["path"], raw.as_str());
        let out = run(s.hallpass(["answer", "--json"]));
        assert!(
            !hostile::has_raw_control(&stdout(&out)),
            "{:?}",
            stdout(&out)
        );

        let t = s.tmux(160, 30);
        t.line("hallpass answer");
        let sc = t.wait_for("the question", |x| x.contains("1 question waiting"));
        assert!(
            sc.contains(&format!("wants to create {}/{SHOWN}", s.outside.display())),
            "{sc}"
        );
        assert!(sc.contains("by: hp-write touch"), "{sc}");
        std::thread::sleep(Duration::from_millis(500));
        t.keys(&["d"]);
        t.wait_for("none", |x| x.contains("no questions waiting"));
        t.keys(&["q"]);
        assert_eq!(stdout(&finish(c)), "err 13\n");
    }
}
