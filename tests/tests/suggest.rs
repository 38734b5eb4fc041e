//! Less friction, as a new user meets it: an audit run of a script that writes where a coding
//! agent does, `hallpass suggest` on its log, and the next run with the suggested flags (or
//! profile file) under `--prompt=deny` asking nothing; built-in profiles applied by the
//! command's name; user profiles; and what no profile can allow.

use std::path::Path;

use hallpass_tests::*;

/// Writes where Claude Code and npm do, and three loose files in the home.
const AGENT: &str = "set -e
mkdir -p ~/.claude/projects/p ~/.npm/_cacache/tmp
echo s > ~/.claude/projects/p/s.jsonl
echo t > ~/.claude/todos.json
echo c > ~/.claude.json
echo 1 > ~/.npm/_cacache/tmp/a
echo 2 > ~/.npm/_cacache/tmp/b
for n in 1 2 3; do echo $n > ~/notes$n; done
echo done";

fn reasons(s: &Scratch, log: &Path) -> Vec<String> {
    s.log_lines(log)
        .iter()
        .map(|l| l["reason"].as_str().unwrap().to_string())
        .collect()
}

/// The flags line of `hallpass suggest` (the one line that is not a comment).
fn suggested(s: &Scratch, log: &Path) -> (String, Vec<String>) {
    let out = run(s.hallpass(["suggest".as_ref(), log.as_os_str()]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let flags: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(flags.len(), 1, "{text}");
    let words = flags[0].split(' ').map(str::to_string).collect();
    (text, words)
}

/// `hallpass suggest LOG --profile-out FILE`, which must succeed.
fn profile_out(s: &Scratch, log: &Path, file: &Path) -> std::process::Output {
    let out = run(s.hallpass([
        "suggest".as_ref(),
        log.as_os_str(),
        "--profile-out".as_ref(),
        file.as_os_str(),
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn suggested_flags_let_the_next_run_go_by_without_a_question() {
    for v in variants() {
        let s = Scratch::new("suggest", v);
        let audit = s.root.join("audit.jsonl");
        let out = run(s.session_command("allow", &audit, AGENT));
        assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
        assert!(reasons(&s, &audit).iter().all(|r| r == "audit"));

        let (text, words) = suggested(&s, &audit);
        let allowed: Vec<&str> = words
            .chunks(2)
            .map(|w| {
                assert_eq!(w[0], "--allow-path", "{text}");
                w[1].as_str()
            })
            .collect();
        // The tools' own directories; the loose files by name, never `~`.
        assert_eq!(
            allowed,
            [
                "~/.claude",
                "~/.claude.json",
                "~/.npm",
                "~/notes1",
                "~/notes2",
                "~/notes3"
            ],
            "{text}"
        );
        assert!(
            text.contains("~/.claude       5 writes, 5 paths (its tool's own directory)"),
            "{text}"
        );

        for f in ["notes1", "notes2", "notes3", ".claude.json"] {
            std::fs::remove_file(s.home.join(f)).unwrap();
        }
        let next = s.root.join("next.jsonl");
        let mut cmd = s.hallpass(["--prompt=deny", &format!("--log={}", next.display())]);
        cmd.args(&words).args(["--", "sh", "-c", AGENT]);
        let out = run(cmd);
        assert_eq!(stdout(&out), "done\n", "{v:?}: {}", stderr(&out));
        let r = reasons(&s, &next);
        assert!(
            !r.is_empty() && r.iter().all(|r| r == "policy"),
            "{v:?}: {r:?}"
        );
        assert!(s.home.join("notes3").exists());
    }
}

/// Runs the line of flags `suggest` printed as a person pasting it would, through a shell:
/// `hallpass --prompt=deny --log=LOG FLAGS -- sh -c SCRIPT`.
fn pasted(s: &Scratch, flags: &str, log: &Path, script: &str) -> std::process::Output {
    let file = s.root.join("pasted.sh");
    std::fs::write(
        &file,
        format!(
            "exec hallpass --prompt=deny --log={} {flags} -- sh -c \"$1\"\n",
            log.display()
        ),
    )
    .unwrap();
    s.chown(&file);
    run(s.command("sh").arg(&file).arg(script))
}

/// Issue 19 (item 7): an audit run of `mkdir -p ~/.cache/agentx/models && echo >
/// ~/.cache/agentx/models/m` got `--allow-path ~/.cache/agentx/models/m`, and a rerun from
/// the same home (`~/.cache` there, `~/.cache/agentx` not) was denied at the `mkdir`.
#[test]
fn the_next_run_from_the_same_start_asks_nothing() {
    for v in variants() {
        let bases: &[&str] = if v.who == Who::Me && !v.lend {
            &[".cache", ".config", ".local/share", ".local/state"]
        } else {
            &[".cache"]
        };
        for base in bases {
            let s = Scratch::new("suggest-made", v);
            std::fs::create_dir_all(s.home.join(base)).unwrap();
            s.chown(&s.home);
            let script = format!(
                "mkdir -p ~/{base}/agentx/models && echo > ~/{base}/agentx/models/m && echo done"
            );
            let audit = s.root.join("audit.jsonl");
            let out = run(s.session_command("allow", &audit, &script));
            assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
            let (text, words) = suggested(&s, &audit);
            assert_eq!(
                words,
                ["--allow-path", &format!("~/{base}/agentx")],
                "{v:?}: {text}"
            );
            // The state the audit started in.
            std::fs::remove_dir_all(s.home.join(base).join("agentx")).unwrap();
            let next = s.root.join("next.jsonl");
            let out = pasted(&s, &words.join(" "), &next, &script);
            assert_eq!(stdout(&out), "done\n", "{v:?} {base}: {}", stderr(&out));
            let lines = s.log_lines(&next);
            assert!(
                lines.iter().all(|l| l["decision"] == "allow"),
                "{v:?} {base}: {lines:?}"
            );
            assert_eq!(lines.len(), 3, "{lines:?}");
        }
    }
}

/// Issue 19 (item 4): `suggest` printed paths raw. A path it names is shown through
/// `shown`; its line of flags holds only paths a person can read as they are, quoted for
/// the shell, and pasting it allows exactly those; the others are commented, to be typed
/// by hand.
#[test]
fn hostile_paths_are_shown_and_never_pasted() {
    for v in variants().into_iter().step_by(2) {
        let s = Scratch::new("suggest-hostile", v);
        let audit = s.root.join("audit.jsonl");
        let script = format!(
            "{}mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys && echo done",
            hostile::script(&s.outside)
        );
        let out = run(s.session_command("allow", &audit, &script));
        assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
        let (text, words) = suggested(&s, &audit);
        assert!(!hostile::has_raw_control(&text), "{text:?}");
        let out_dir = s.outside.display();
        for n in hostile::NAMES {
            let line = format!("#   --allow-path {out_dir}/{}", n.shown);
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
        let line = format!("#   --allow-path {out_dir}/{}", hostile::FLAG_DIR.shown);
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        // The line to paste: the sensitive file by name, and the path with quotes, `$` and
        // a backtick quoted for the shell.
        let flags = text.lines().find(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            flags,
            format!("--allow-path ~/.ssh/authorized_keys --allow-path '{out_dir}/q a'\\''b$c`d'"),
            "{text}"
        );
        assert_eq!(words.len(), 5, "{text}");
        assert!(
            text.contains("# still asked: a flag for these would allow all that is in them"),
            "{text}"
        );
        assert!(text.lines().any(|l| l == "#   ~/.ssh"), "{text}");
        // The same as a profile file: the paths that are not plain are comments.
        let file = s.root.join("p.toml");
        profile_out(&s, &audit, &file);
        let profile = std::fs::read_to_string(&file).unwrap();
        assert!(!hostile::has_raw_control(&profile), "{profile:?}");
        let entries: Vec<&str> = profile
            .lines()
            .filter(|l| l.starts_with("    \""))
            .collect();
        assert_eq!(entries.len(), 2, "{profile}");
        let out = run(s.hallpass([
            "--prompt=deny".to_string(),
            format!("--profile={}", file.display()),
            "--".into(),
            "true".into(),
        ]));
        assert_eq!(
            stderr(&out),
            format!(
                "hallpass: profile p allows ~/.ssh/authorized_keys, {out_dir}/q a'b$c`d (--no-profile: without)\n"
            )
        );
        // Pasted, it allows exactly the path that was read.
        let shelly = s.outside.join(hostile::SHELLY);
        std::fs::remove_file(&shelly).unwrap();
        let next = s.root.join("next.jsonl");
        let script = format!("echo 1 > '{out_dir}/q a'\\''b$c`d' && echo ok");
        let out = pasted(&s, flags, &next, &script);
        assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
        assert!(shelly.exists());
        let lines = s.log_lines(&next);
        assert!(
            lines.len() == 1 && lines[0]["reason"] == "policy",
            "{lines:?}"
        );
    }
}

#[test]
fn a_suggested_profile_file_does_the_same() {
    let v = variants()[0];
    let s = Scratch::new("suggest-profile", v);
    let audit = s.root.join("audit.jsonl");
    run(s.session_command("allow", &audit, AGENT));
    let file = s.root.join("agent.toml");
    let out = profile_out(&s, &audit, &file);
    assert!(
        stderr(&out).contains("use it with --profile"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"~/.npm\",  # 5 writes, 5 paths"), "{text}");

    let next = s.root.join("next.jsonl");
    let out = run(s.hallpass([
        "--prompt=deny",
        &format!("--log={}", next.display()),
        &format!("--profile={}", file.display()),
        "--",
        "sh",
        "-c",
        AGENT,
    ]));
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "hallpass: profile agent allows ~/.claude, ~/.claude.json, ~/.npm, ~/notes1"
        ),
        "{}",
        stderr(&out)
    );
    assert!(reasons(&s, &next).iter().all(|r| r == "policy"));

    // Kept in the project, the command could rewrite it: said.
    std::fs::copy(&file, s.project.join("agent.toml")).unwrap();
    let out = run(s.hallpass(["--prompt=deny", "--profile=./agent.toml", "--", "true"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("hallpass: warning: the profile ./agent.toml is in the project, which the command can write; keep it in ~/.config/hallpass/profiles"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_log_is_named_with_its_line() {
    let s = Scratch::new("suggest-bad", variants()[0]);
    let log = s.root.join("bad.jsonl");
    std::fs::write(
        &log,
        "{\"path\":\"/x\",\"decision\":\"allow\",\"reason\":\"audit\"}\nnot json\n",
    )
    .unwrap();
    for verb in ["suggest", "report"] {
        let out = run(s.hallpass([verb.as_ref(), log.as_os_str()]));
        assert_eq!(out.status.code(), Some(125));
        let e = stderr(&out);
        assert!(
            e.starts_with(&format!(
                "hallpass: {} line 2: not a hallpass log line",
                log.display()
            )),
            "{e}"
        );
        assert!(
            e.contains("hint: give the file written by `hallpass --log FILE`"),
            "{e}"
        );
    }
}

/// A script named like an agent, in the project.
fn fake_agent(s: &Scratch, name: &str, script: &str) -> String {
    let p = s.project.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    s.chown(&p);
    format!("./{name}")
}

#[test]
fn a_profile_applies_by_the_commands_name() {
    for v in variants() {
        let s = Scratch::new("profile", v);
        let claude = fake_agent(&s, "claude", "mkdir -p ~/.claude/projects && echo s > ~/.claude/projects/s.jsonl && echo c > ~/.claude.json && echo ok");
        let log = s.root.join("log.jsonl");
        let out = run(s.hallpass([
            "--prompt=deny",
            &format!("--log={}", log.display()),
            "--",
            &claude,
        ]));
        assert_eq!(stdout(&out), "ok\n", "{v:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "hallpass: profile claude allows 25 paths, which `hallpass profiles` lists (--no-profile: without)\n"
        );
        assert!(reasons(&s, &log).iter().all(|r| r == "policy"));

        // Off with --no-profile: denied, and nothing said about profiles.
        let out = run(s.hallpass(["--prompt=deny", "--no-profile", "--", &claude]));
        assert!(!out.status.success());
        assert!(
            !stderr(&out).contains("hallpass: profile"),
            "{}",
            stderr(&out)
        );

        // --deny-path wins over the profile: said at the start, and enforced.
        let out = run(s.hallpass(["--prompt=deny", "--deny-path=~/.claude.json", "--", &claude]));
        assert!(!out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("(not ~/.claude.json: denied)"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(".claude.json: Permission denied"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn status_shows_what_a_profile_adds() {
    let s = Scratch::new("profile-status", variants()[0]);
    let c = background(s.hallpass([
        "--prompt=deny",
        "--profile=npm",
        "--profile=cargo",
        "--",
        "sleep",
        "30",
    ]));
    let mut st = serde_json::Value::Null;
    assert!(wait_until(std::time::Duration::from_secs(30), || {
        let out = run(s.hallpass(["status", "--json"]));
        st = serde_json::from_slice(&out.stdout).unwrap_or_default();
        st["sessions"].as_array().is_some_and(|a| !a.is_empty())
    }));
    let p = &st["sessions"][0]["profiles"];
    assert_eq!(p[0]["name"], "npm");
    assert_eq!(
        p[0]["paths"][0],
        s.home.join(".npm/_cacache").to_string_lossy().as_ref()
    );
    assert_eq!(p[1]["name"], "cargo");
    let table = stdout(&run(s.hallpass(["status"])));
    assert!(
        table.contains(&format!(
            "   1  profile npm allows {}, ",
            s.home.join(".npm/_cacache").display()
        )),
        "{table}"
    );
    let _ = std::process::Command::new("kill")
        .arg(c.id().to_string())
        .status();
    finish(c);
}

#[test]
fn user_profiles_are_listed_and_never_allow_hallpass_config() {
    let s = Scratch::new("profile-user", variants()[0]);
    let dir = s.home.join(".config/hallpass/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    // Too wide on purpose: ~/.config holds hallpass's own, which stays denied.
    std::fs::write(
        dir.join("wide.toml"),
        "about = \"all of ~/.config\"\nallow = [\"~/.config\"]\n",
    )
    .unwrap();
    s.chown(&s.home);
    let log = s.root.join("log.jsonl");
    let out = run(s.hallpass([
        "--prompt=deny",
        &format!("--log={}", log.display()),
        "--profile=wide",
        "--",
        "sh",
        "-c",
        "echo a > ~/.config/tool.conf && echo ok; echo x > ~/.config/hallpass/rules || echo refused",
    ]));
    assert_eq!(stdout(&out), "ok\nrefused\n", "{}", stderr(&out));
    let r = reasons(&s, &log);
    assert_eq!(r, ["policy", "protected"]);

    let list = stdout(&run(s.hallpass(["profiles"])));
    assert!(
        list.contains(
            "wide  (~/.config/hallpass/profiles/wide.toml)  all of ~/.config\n    ~/.config\n"
        ),
        "{list}"
    );
    assert!(list.contains("claude  (built in)"), "{list}");
    let json: serde_json::Value =
        serde_json::from_slice(&run(s.hallpass(["profiles", "--json"])).stdout).unwrap();
    let names: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    for n in [
        "aider", "cargo", "claude", "codex", "copilot", "gemini", "go", "npm", "pip", "wide",
    ] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }

    // A broken file is named with what is wrong, and what to do.
    std::fs::write(dir.join("wide.toml"), "allow = \"~/.x\"\n").unwrap();
    let out = run(s.hallpass(["--prompt=deny", "--profile=wide", "--", "true"]));
    assert_eq!(out.status.code(), Some(125));
    let e = stderr(&out);
    assert!(e.contains("wide.toml does not parse"), "{e}");
    assert!(e.contains("hint: fix it, or run with --no-profile"), "{e}");
    let out = run(s.hallpass(["--prompt=deny", "--profile=nope", "--", "true"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .starts_with("hallpass: no profile named `nope`\nhint: `hallpass profiles` lists them"),
        "{}",
        stderr(&out)
    );
}

/// A profile reads `*` as a pattern: a logged path holding one would allow more there.
#[test]
fn a_path_with_a_star_stays_out_of_a_suggested_profile() {
    let s = Scratch::new("suggest-star", variants()[0]);
    let log = s.root.join("audit.jsonl");
    let line = |p: &str| {
        format!(
            "{{\"time\":\"t\",\"pid\":1,\"exe\":\"/bin/sh\",\"syscall\":\"openat\",\"path\":\"{}/{p}\",\"decision\":\"allow\",\"reason\":\"audit\"}}\n",
            s.home.display()
        )
    };
    // And a `$` a profile would expand: `~/.config/${NOPE:-}/a` would allow `~/.config`
    // (a red team's find).
    std::fs::write(
        &log,
        line(".tool/a*b") + &line(".other/x") + &line(".config/${NOPE:-}/a"),
    )
    .unwrap();
    let file = s.root.join("p.toml");
    profile_out(&s, &log, &file);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("    \"~/.other/x\",  # 1 write\n"), "{text}");
    assert!(
        text.contains(
            "    # left out, a profile would read its `*` or `${` as a pattern or variable: \"~/.tool/a*b\"\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("as a pattern or variable: \"~/.config/${NOPE:-}/a\"\n"),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("\"~/.config")),
        "{text}"
    );
}
