//! Many threads writing at once, and a writer bombarded with signals: the same decisions, no
//! write lost, one log line per write.

use hallpass_tests::*;

#[test]
fn threads_writing_at_once() {
    for v in variants() {
        let s = Scratch::new("threads", v);
        let out = run(s.hallpass(["--prompt=deny", "--", "hp-write", "threads", ".", "32"]));
        assert_eq!(stdout(&out).trim(), "created 32", "{v:?}: {}", stderr(&out));
        let log = s.root.join("w.jsonl");
        let out = run(s
            .hallpass([
                "--prompt=deny",
                &format!("--log={}", log.display()),
                "--",
                "hp-write",
                "threads",
            ])
            .arg(&s.outside)
            .arg("32"));
        let text = stdout(&out);
        assert!(text.starts_with("created 0\n"), "{v:?}: {text}");
        assert_eq!(text.matches("err 13").count(), 32);
        assert_eq!(s.log_lines(&log).len(), 32, "{v:?}: one line per write");
    }
}

#[test]
fn signals_while_writing() {
    for v in variants() {
        let s = Scratch::new("signals", v);
        let out = run(s.hallpass(["--prompt=deny", "--", "hp-write", "signals", ".", "300"]));
        let text = stdout(&out);
        assert!(
            text.starts_with("ok 300 err 0 "),
            "{v:?}: {text} {}",
            stderr(&out)
        );
        assert_eq!(
            (0..300)
                .filter(|i| s.project.join(format!("s{i}")).exists())
                .count(),
            300
        );
        let log = s.root.join("w.jsonl");
        let out = run(s
            .hallpass([
                "--prompt=deny",
                &format!("--log={}", log.display()),
                "--",
                "hp-write",
                "signals",
            ])
            .arg(&s.outside)
            .arg("300"));
        let text = stdout(&out);
        assert!(text.starts_with("ok 0 err 300 "), "{v:?}: {text}");
        assert_eq!(
            s.log_lines(&log).len(),
            300,
            "{v:?}: a write interrupted by signals is decided once"
        );
    }
}
