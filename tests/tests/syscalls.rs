//! Every write-class syscall, made directly by `hp-write`, under the real filter: allowed in
//! the project, EACCES outside under `--prompt=deny`, allowed and logged `audit` under
//! `--prompt=allow`, EACCES on the always-denied paths in every mode; read-only opens never
//! reach the daemon. Each case runs as root and as an unprivileged user, with and without the
//! Yama lending path.

use std::collections::BTreeMap;
use std::path::Path;

use hallpass_tests::*;

/// Runs every operation in `dir` under `hallpass ARGS`, returning op -> result.
fn run_ops(s: &Scratch, args: &[&str], dir: &Path) -> BTreeMap<String, String> {
    let mut a: Vec<String> = args.iter().map(|x| x.to_string()).collect();
    a.extend([
        "--".into(),
        bin("hp-write").display().to_string(),
        "run".into(),
        dir.display().to_string(),
    ]);
    let out = run(s.hallpass(&a));
    assert!(
        out.status.success(),
        "hallpass {a:?} failed: {}",
        stderr(&out)
    );
    results(&out).into_iter().collect()
}

/// The same operations with no supervision: what the kernel alone says.
fn native(s: &Scratch, dir: &Path) -> BTreeMap<String, String> {
    let out = run(s.command(bin("hp-write")).arg("run").arg(dir));
    assert!(out.status.success());
    results(&out).into_iter().collect()
}

#[test]
fn every_write_syscall_in_every_mode() {
    let ops = operations();
    assert!(
        ops.len() >= 27,
        "hp-write knows only {} operations",
        ops.len()
    );
    for v in variants() {
        let s = Scratch::new("syscalls", v);
        let reference = s.root.join("native");
        s.fixtures(&reference);
        let want = native(&s, &reference);
        assert_eq!(want.len(), ops.len());
        // The fixtures are right: natively almost everything succeeds (xattrs and inode flags
        // depend on the file system, so those may fail the same way everywhere).
        for (op, r) in &want {
            if !op.contains("xattr") && op != "ioctl-setflags" {
                assert_eq!(r, "ok", "{op} fails natively: fixture problem");
            }
        }

        // Inside the project: exactly the native results, nothing logged.
        for prompt in ["deny", "allow"] {
            let dir = s.project.join(format!("in-{prompt}"));
            s.fixtures(&dir);
            let log = s.root.join(format!("in-{prompt}.jsonl"));
            let got = run_ops(
                &s,
                &[
                    &format!("--prompt={prompt}"),
                    &format!("--log={}", log.display()),
                ],
                &dir,
            );
            assert_eq!(
                got, want,
                "{v:?} inside the project under --prompt={prompt}"
            );
            assert!(
                s.log_lines(&log).is_empty(),
                "implicit writes are not logged"
            );
        }

        // Outside, unattended: every write fails with EACCES and is logged.
        let dir = s.outside.join("deny");
        s.fixtures(&dir);
        let log = s.root.join("out-deny.jsonl");
        let got = run_ops(
            &s,
            &["--prompt=deny", &format!("--log={}", log.display())],
            &dir,
        );
        for (op, r) in &got {
            assert_eq!(r, EACCES, "{v:?} {op} outside under --prompt=deny");
        }
        let lines = s.log_lines(&log);
        for (op, syscall) in &ops {
            let found = lines.iter().any(|l| {
                l["syscall"] == syscall.as_str()
                    && l["decision"] == "deny"
                    && l["reason"] == "unattended"
                    && l["path"]
                        .as_str()
                        .unwrap()
                        .starts_with(dir.to_str().unwrap())
            });
            assert!(
                found,
                "{v:?} no deny line for {op} ({syscall}) in {lines:#?}"
            );
        }

        // Outside, audit: the native results, each logged `audit`.
        let dir = s.outside.join("allow");
        s.fixtures(&dir);
        let log = s.root.join("out-allow.jsonl");
        let got = run_ops(
            &s,
            &["--prompt=allow", &format!("--log={}", log.display())],
            &dir,
        );
        assert_eq!(got, want, "{v:?} outside under --prompt=allow");
        let lines = s.log_lines(&log);
        for (op, syscall) in &ops {
            let found = lines.iter().any(|l| {
                l["syscall"] == syscall.as_str()
                    && l["decision"] == "allow"
                    && l["reason"] == "audit"
            });
            assert!(found, "{v:?} no audit line for {op} ({syscall})");
        }
        for l in &lines {
            assert_eq!(
                l.as_object().unwrap().len(),
                7,
                "exactly the documented keys: {l}"
            );
            assert!(l["pid"].as_i64().unwrap() > 0);
            assert!(l["exe"].as_str().unwrap().ends_with("hp-write"), "{l}");
            assert!(l["time"].as_str().unwrap().ends_with('Z'));
        }

        // The always-denied: hallpass's configuration, in every mode, even with --allow-path.
        let conf = s.home.join(".config/hallpass");
        for prompt in ["deny", "allow"] {
            let dir = conf.join(prompt);
            s.fixtures(&dir);
            // An allow that holds them (not the whole home, which is refused: issue 25).
            let allow = format!("--allow-path={}/.config", s.home.display());
            let got = run_ops(&s, &[&format!("--prompt={prompt}"), &allow], &dir);
            for (op, r) in &got {
                assert_eq!(
                    r, EACCES,
                    "{v:?} {op} in ~/.config/hallpass under --prompt={prompt}"
                );
            }
        }
    }
}

#[test]
fn read_only_opens_never_reach_the_daemon() {
    let v = Variant {
        who: Who::Me,
        lend: false,
    };
    let s = Scratch::new("reads", v);
    let file = s.outside.join("data");
    std::fs::write(&file, "x").unwrap();
    let out = run(s
        .hallpass(["--prompt=deny", "--", "hp-write", "reads"])
        .arg(&file)
        .arg("500"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "failed 0");
    let st = s.status();
    let session = &st["sessions"][0];
    assert_eq!(session["argv"][0], "hp-write");
    assert_eq!(
        session["notifications"], 0,
        "read-only opens reached the daemon: {st}"
    );
    // The counters do count: one write makes one notification.
    let out = run(s
        .hallpass(["--prompt=deny", "--", "hp-write", "touch"])
        .arg(s.project.join("w")));
    assert_eq!(stdout(&out).trim(), "ok");
    let st = s.status();
    assert_eq!(st["sessions"][1]["notifications"], 1, "{st}");
    assert_eq!(st["sessions"][1]["allowed"], 1, "{st}");
}
