//! The built-in profiles keep out what decides what runs next (issue 19, item 5): under
//! `--prompt=deny`, an agent's profile lets it write its state, and a file through the lock
//! and temporary names it saves it with, while its settings, commands, skills, native install
//! and the programs a state directory holds are refused (EACCES), in lite and strict mode, as
//! root and as an unprivileged user.

use hallpass_tests::*;

/// Runs each `NAME COMMAND` line of `tries` in the shell and prints `NAME ok`, `NAME EACCES`
/// or `NAME other: MESSAGE`.
fn script(tries: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "r() { if out=$( { eval \"$2\"; } 2>&1); then echo \"$1 ok\"; \
         else case $out in *'Permission denied'*) echo \"$1 EACCES\";; \
         *) echo \"$1 other: $out\";; esac; fi; }\n",
    );
    for (name, cmd) in tries {
        s.push_str(&format!("r {name} '{cmd}'\n"));
    }
    s
}

/// Makes `dirs` in the home as the variant's user, outside any session.
fn make_dirs(s: &Scratch, dirs: &[&str]) {
    for d in dirs {
        std::fs::create_dir_all(s.home.join(d)).unwrap();
    }
    s.chown(&s.home);
}

/// Runs `tries` under `--profile=PROFILE --prompt=deny` in `mode`; returns the outcome lines
/// and the log's reasons, one per decided write.
fn session(
    s: &Scratch,
    mode: &str,
    profile: &str,
    tries: &[(&str, &str)],
) -> (String, Vec<String>) {
    let log = s.root.join(format!("{profile}.jsonl"));
    let out = run(s.hallpass([
        "--prompt=deny",
        mode,
        &format!("--profile={profile}"),
        &format!("--log={}", log.display()),
        "--",
        "sh",
        "-c",
        &script(tries),
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let reasons = s
        .log_lines(&log)
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l["reason"].as_str().unwrap(),
                l["path"].as_str().unwrap()
            )
        })
        .collect();
    (stdout(&out), reasons)
}

fn expect(out: &str, ok: &[&str], refused: &[&str], ctx: &str) {
    let want: Vec<String> = ok
        .iter()
        .map(|n| format!("{n} ok"))
        .chain(refused.iter().map(|n| format!("{n} EACCES")))
        .collect();
    let got: Vec<&str> = out.lines().collect();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    let mut got_sorted: Vec<String> = got.iter().map(|s| s.to_string()).collect();
    got_sorted.sort();
    assert_eq!(got_sorted, want_sorted, "{ctx}");
}

#[test]
fn claude_keeps_its_state_and_not_its_settings_commands_or_install() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("rule-claude", v);
        make_dirs(&s, &[".claude/commands", ".local/share/claude/versions"]);
        std::fs::write(s.home.join(".claude.json"), "old").unwrap();
        s.chown(&s.home);
        let (out, reasons) = session(
            &s,
            mode,
            "claude",
            &[
                (
                    "projects",
                    "mkdir -p ~/.claude/projects/-p && echo s > ~/.claude/projects/-p/s.jsonl",
                ),
                // What Claude Code does around every save of ~/.claude.json.
                ("lock", "mkdir ~/.claude.json.lock"),
                ("tmp", "echo new > ~/.claude.json.tmp.123.abc"),
                ("save", "mv ~/.claude.json.tmp.123.abc ~/.claude.json"),
                ("unlock", "rmdir ~/.claude.json.lock"),
                ("settings", "echo {} > ~/.claude/settings.json"),
                ("command", "echo x > ~/.claude/commands/x.md"),
                ("skills", "mkdir ~/.claude/skills"),
                ("hook", "echo x > ~/.claude/notify.sh"),
                ("version", "echo x > ~/.local/share/claude/versions/9.9.9"),
                ("launcher", "mkdir -p ~/.local/bin"),
                // A look-alike of the temporary name is no temporary name.
                ("lookalike", "echo x > ~/.claude.jsonx"),
            ],
        );
        let ctx = format!("{v:?} {mode}: {out}\n{reasons:#?}");
        expect(
            &out,
            &["projects", "lock", "tmp", "save", "unlock"],
            &[
                "settings",
                "command",
                "skills",
                "hook",
                "version",
                "launcher",
                "lookalike",
            ],
            &ctx,
        );
        let state = std::fs::read_to_string(s.home.join(".claude.json")).unwrap();
        assert_eq!(state, "new\n", "{ctx}");
        assert!(!s.home.join(".claude/settings.json").exists(), "{ctx}");
        assert!(!s.home.join(".claude/commands/x.md").exists(), "{ctx}");
        // Every allowed write by the profile's rule, every refused one by --prompt=deny.
        assert!(
            reasons
                .iter()
                .all(|r| r.starts_with("policy ") || r.starts_with("unattended ")),
            "{ctx}"
        );
    }
}

#[test]
fn codex_keeps_its_sessions_and_not_its_skills_or_config() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        // A first run: no ~/.codex yet. It may be made, on the way to its sessions.
        let s = Scratch::new("rule-codex", v);
        let (out, reasons) = session(
            &s,
            mode,
            "codex",
            &[
                (
                    "session",
                    "mkdir -p ~/.codex/sessions/2026 && echo x > ~/.codex/sessions/2026/r.jsonl",
                ),
                ("history", "echo x >> ~/.codex/history.jsonl"),
                ("db", "echo x > ~/.codex/state_5.sqlite-wal"),
                // What `codex exec` writes at start: skills/.system with scripts in it.
                ("system", "mkdir -p ~/.codex/skills/.system"),
                ("script", "echo x > ~/.codex/notify.py"),
                ("config", "echo x > ~/.codex/config.toml"),
                ("agents", "echo x > ~/.codex/AGENTS.md"),
                ("rules", "mkdir ~/.codex/rules"),
            ],
        );
        let ctx = format!("{v:?} {mode}: {out}\n{reasons:#?}");
        expect(
            &out,
            &["session", "history", "db"],
            &["system", "script", "config", "agents", "rules"],
            &ctx,
        );
    }
}

/// An ask entry inside an allowed directory: Gemini CLI's `tmp/bin`, where it keeps the
/// ripgrep it runs, and the git repositories of its checkpoints in `history/`.
#[test]
fn gemini_state_is_allowed_around_what_it_runs() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("rule-gemini", v);
        make_dirs(&s, &[".gemini/tmp"]);
        let (out, reasons) = session(
            &s,
            mode,
            "gemini",
            &[
                // A directory of its own, with a bin/rg, put in place of the empty tmp/:
                // both names are allowed, but tmp/ holds what is asked.
                ("plant", "mkdir -p ~/.gemini/projects.json.lock/bin && echo x > ~/.gemini/projects.json.lock/bin/rg"),
                ("replace", "mv -T ~/.gemini/projects.json.lock ~/.gemini/tmp"),
                ("cleanup", "rm -r ~/.gemini/projects.json.lock"),
                ("chat", "mkdir -p ~/.gemini/tmp/p/chats && echo x > ~/.gemini/tmp/p/chats/s.json"),
                ("slug", "mkdir -p ~/.gemini/history/p && echo /p > ~/.gemini/history/p/.project_root"),
                ("registry", "echo {} > ~/.gemini/projects.json.tmp && mv ~/.gemini/projects.json.tmp ~/.gemini/projects.json"),
                ("staged", "mkdir ~/.gemini/tmp/p/bin && echo x > ~/.gemini/tmp/p/bin/rg"),
                ("bin", "mkdir ~/.gemini/tmp/bin"),
                // The same, by a name: moving a directory of one's own into place.
                ("swap", "mv ~/.gemini/tmp/p/bin ~/.gemini/tmp/bin"),
                // Or moving the directory that holds it (and back, had it worked).
                ("move-tmp", "mv ~/.gemini/tmp ~/.gemini/tmp2"),
                ("git", "mkdir ~/.gemini/history/p/.git"),
                ("gitconfig", "echo x > ~/.gemini/history/p/.gitconfig"),
                ("settings", "echo {} > ~/.gemini/settings.json"),
            ],
        );
        let ctx = format!("{v:?} {mode}: {out}\n{reasons:#?}");
        expect(
            &out,
            &["plant", "cleanup", "chat", "slug", "registry", "staged"],
            &[
                "replace",
                "bin",
                "swap",
                "move-tmp",
                "git",
                "gitconfig",
                "settings",
            ],
            &ctx,
        );
        assert!(!s.home.join(".gemini/tmp/bin").exists(), "{ctx}");
        assert!(s.home.join(".gemini/tmp/p/chats/s.json").exists(), "{ctx}");
    }
}

/// What a profile asks about, a person may still allow: an `--allow-path` naming it wins
/// over the profile's ask entry.
#[test]
fn an_allow_path_names_what_a_profile_asks_about() {
    let s = Scratch::new("rule-override", variants()[0]);
    make_dirs(&s, &[".gemini/tmp"]);
    let log = s.root.join("log.jsonl");
    let out = run(s.hallpass([
        "--prompt=deny",
        "--profile=gemini",
        "--allow-path=~/.gemini/tmp/bin",
        &format!("--log={}", log.display()),
        "--",
        "sh",
        "-c",
        "mkdir ~/.gemini/tmp/bin && echo x > ~/.gemini/tmp/bin/rg && echo ok",
    ]));
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "hallpass: profile gemini allows 10 paths and asks about 2 in them, which `hallpass profiles` lists"
        ),
        "{}",
        stderr(&out)
    );
}
