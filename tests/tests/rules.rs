//! The lasting rules file (`~/.config/hallpass/rules`): edits by hand take effect without a
//! restart, `hallpass rules` changes it, and a broken file is reported by line and never
//! written over.

use std::path::Path;
use std::time::{Duration, Instant};

use hallpass_tests::*;

fn rules_path(s: &Scratch) -> std::path::PathBuf {
    s.home.join(".config/hallpass/rules")
}

/// Runs `hp-write touch PATH` unattended; returns its output line and the log's reason.
fn touch(s: &Scratch, path: &Path) -> (String, String) {
    let log = s.root.join("log.jsonl");
    let _ = std::fs::remove_file(&log);
    let out = run(s.hallpass([
        "--prompt=deny",
        &format!("--log={}", log.display()),
        "--",
        "hp-write",
        "touch",
        &path.to_string_lossy(),
    ]));
    let reason = s
        .log_lines(&log)
        .last()
        .map(|l| l["reason"].as_str().unwrap_or("").to_string())
        .unwrap_or_default();
    (stdout(&out).trim().to_string(), reason)
}

fn write_rules(s: &Scratch, text: &str) {
    let p = rules_path(s);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    s.chown(&s.home);
}

#[test]
fn edits_by_hand_take_effect_without_a_restart() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("rules-edit", v);
        let f = s.outside.join("f");
        // The daemon starts with no rules: denied, unattended.
        assert_eq!(touch(&s, &f), ("err 13".into(), "unattended".into()));
        write_rules(&s, &format!("# mine\nallow {}\n", s.outside.display()));
        // The daemon re-reads the file within half a second.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = touch(&s, &f);
            if got == ("ok".into(), "always".into()) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the edit never took effect: {got:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        write_rules(&s, &format!("deny {}\n", s.outside.display()));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = touch(&s, &f);
            if got == ("err 13".into(), "never".into()) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the edit never took effect: {got:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

#[test]
fn the_rules_verb_adds_lists_and_removes() {
    let s = Scratch::new("rules-verb", variants()[0]);
    let out = run(s.hallpass(["rules"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("no rules ("), "{}", stdout(&out));
    // Relative paths and ~ are made absolute, as for --allow-path.
    let out = run(s.hallpass(["rules", "allow", "~/.cache/tool"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(s.hallpass(["rules", "deny", "sub/dir"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(rules_path(&s)).unwrap();
    assert!(
        text.contains(&format!("allow {}/.cache/tool\n", s.home.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("deny {}/sub/dir\n", s.project.display())),
        "{text}"
    );
    let out = run(s.hallpass(["rules", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rules"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["rules"][0]["action"], "allow");
    let out = run(s.hallpass(["rules", "remove", "sub/dir"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(s.hallpass(["rules", "remove", "sub/dir"]));
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("no rule for"), "{}", stderr(&out));
    let out = run(s.hallpass(["rules", "allow", "/"]));
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains("would cover everything"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_broken_file_is_reported_by_line_and_never_written_over() {
    let s = Scratch::new("rules-broken", variants()[0]);
    let f = s.outside.join("f");
    let text = format!("allow {}\n\nalow /x\n", s.outside.display());
    write_rules(&s, &text);
    let out = run(s.hallpass(["rules"]));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "hallpass: {}:3: expected `allow PATH` or `deny PATH`, found `alow`; fix or remove that line",
            rules_path(&s).display()
        )),
        "{err}"
    );
    // No rules from a file that does not parse: asked (here: denied) as if there were none.
    assert_eq!(touch(&s, &f), ("err 13".into(), "unattended".into()));
    // Adding a rule is refused rather than losing the line.
    let out = run(s.hallpass(["rules", "deny", "/y"]));
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains(":3:"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(rules_path(&s)).unwrap(), text);
    // Fixed by hand: in force again.
    write_rules(&s, &text.replace("alow /x\n", ""));
    let deadline = Instant::now() + Duration::from_secs(10);
    while touch(&s, &f) != ("ok".into(), "always".into()) {
        assert!(Instant::now() < deadline, "the fix never took effect");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Issue 19: an always-rule for a path with a bidirectional override is listed escaped (and
/// exactly, inert, in `--json`); one for a path with an escape sequence cannot be saved, and
/// the warning that says so shows it escaped.
#[test]
fn a_rule_for_a_hostile_path_is_shown_escaped() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("rules-hostile", v);
        let o = s.outside.display();
        let script = format!(
            "hp-write touch \"{o}/$(printf 'r\\342\\200\\256gpj.sh')\"; hp-write touch \"{o}/$(printf 'e\\033[2J')\""
        );
        let c = background(s.session_command("answer", &s.root.join("log.jsonl"), &script));
        let bidi = format!("{o}/r\u{202e}gpj.sh");
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["path"], bidi.as_str());
        let id = q[0]["id"].to_string();
        let out = run(s.hallpass(["answer", "--id", &id, "always", "--scope", &bidi]));
        assert!(out.status.success(), "{}", stderr(&out));
        let esc = format!("{o}/e\x1b[2J");
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["path"], esc.as_str());
        let id = q[0]["id"].to_string();
        let out = run(s.hallpass(["answer", "--id", &id, "always", "--scope", &esc]));
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(!hostile::has_raw_control(&err), "{err:?}");
        assert!(
            err.contains(&format!(
                "hallpass: not saved: a rule cannot hold the path {o}/e\\e[2J (a control character, or space at an end); allowed for this session only"
            )),
            "{err}"
        );
        assert_eq!(stdout(&finish(c)), "ok\nok\n");

        let out = run(s.hallpass(["rules"]));
        let text = stdout(&out);
        assert!(!hostile::has_raw_control(&text), "{text:?}");
        assert!(
            text.lines()
                .any(|l| l == format!("allow {o}/r\\u{{202e}}gpj.sh")),
            "{text}"
        );
        let out = run(s.hallpass(["rules", "--json"]));
        assert!(!hostile::has_raw_control(&stdout(&out)), "{}", stdout(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["rules"][0]["path"], bidi.as_str(), "{v}");
    }
}
