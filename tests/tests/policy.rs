//! The policy flags end to end: --no-implicit, --allow-path (with ~, relative and
//! not-yet-existing paths), --deny-path, --allow-tty, and the log's reasons.

use hallpass_tests::*;

fn me() -> Variant {
    Variant {
        who: Who::Me,
        lend: false,
    }
}

/// The protections are the daemon's decisions, made on different roads in each mode.
const MODES: [&str; 2] = ["--mode=lite", "--mode=strict"];

fn sh(s: &Scratch, flags: &[&str], script: &str) -> std::process::Output {
    let mut a: Vec<&str> = flags.to_vec();
    a.extend(["--", "sh", "-c", script]);
    run(s.hallpass(&a))
}

#[test]
fn no_implicit_leaves_only_allow_paths_writable() {
    for v in variants() {
        let s = Scratch::new("noimpl", v);
        let log = s.root.join("w.jsonl");
        let logf = format!("--log={}", log.display());
        let script = "hp-write touch ./p; echo tmpdir=${TMPDIR:-unset}; hp-write touch /dev/null";
        let out = sh(&s, &["--prompt=deny", "--no-implicit", &logf], script);
        assert_eq!(
            stdout(&out),
            "err 13\ntmpdir=unset\nerr 13\n",
            "{v:?}: {}",
            stderr(&out)
        );
        // Under --no-implicit the project's writes are logged too.
        let lines = s.log_lines(&log);
        let project = s.project.join("p");
        assert!(
            lines
                .iter()
                .any(|l| l["path"] == project.to_str().unwrap() && l["reason"] == "unattended"),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l["path"] == "/dev/null" && l["decision"] == "deny"),
            "{lines:?}"
        );

        // --allow-path /dev/null and a relative path: exactly those become writable, logged `policy`.
        let out = sh(
            &s,
            &[
                "--prompt=deny",
                "--no-implicit",
                "--allow-path=/dev/null",
                "--allow-path=sub",
                &logf,
            ],
            "hp-write touch /dev/null; mkdir sub && hp-write touch sub/f; hp-write touch ./q",
        );
        assert_eq!(stdout(&out), "ok\nok\nerr 13\n", "{v:?}: {}", stderr(&out));
        assert!(s.project.join("sub/f").exists());
        let lines = s.log_lines(&log);
        assert!(lines.iter().any(|l| l["path"] == "/dev/null"
            && l["decision"] == "allow"
            && l["reason"] == "policy"));
    }
}

#[test]
fn allow_path_expands_tilde_and_accepts_missing_paths() {
    let s = Scratch::new("allow", me());
    // ~/.cache exists, ~/.cache/tool does not yet when the session starts.
    std::fs::create_dir(s.home.join(".cache")).unwrap();
    let log = s.root.join("w.jsonl");
    let out = sh(
        &s,
        &["--prompt=deny", "--allow-path=~/.cache/tool", &format!("--log={}", log.display())],
        "mkdir ~/.cache/tool ~/.cache/tool/x && hp-write touch ~/.cache/tool/x/f; hp-write touch ~/.cache/other",
    );
    assert_eq!(stdout(&out), "ok\nerr 13\n", "{}", stderr(&out));
    assert!(s.home.join(".cache/tool/x/f").exists());
    let lines = s.log_lines(&log);
    let allowed = s.home.join(".cache/tool/x/f");
    assert!(
        lines
            .iter()
            .any(|l| l["path"] == allowed.to_str().unwrap() && l["reason"] == "policy"),
        "{lines:?}"
    );
    let denied = s.home.join(".cache/other");
    assert!(
        lines
            .iter()
            .any(|l| l["path"] == denied.to_str().unwrap() && l["reason"] == "unattended"),
        "{lines:?}"
    );
}

#[test]
fn deny_path_wins_over_the_project_and_audit() {
    let s = Scratch::new("deny", me());
    std::fs::create_dir(s.project.join("secret")).unwrap();
    let log = s.root.join("w.jsonl");
    let out = sh(
        &s,
        &[
            "--prompt=allow",
            "--deny-path=secret",
            &format!("--log={}", log.display()),
        ],
        "hp-write touch secret/k; hp-write touch ok",
    );
    assert_eq!(stdout(&out), "err 13\nok\n", "{}", stderr(&out));
    let lines = s.log_lines(&log);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["reason"], "policy");
    assert_eq!(lines[0]["decision"], "deny");
}

#[test]
fn symlinks_are_decided_on_their_target() {
    let s = Scratch::new("symlink", me());
    std::os::unix::fs::symlink(&s.outside, s.project.join("out")).unwrap();
    std::fs::write(s.outside.join("victim"), "x").unwrap();
    std::os::unix::fs::symlink(s.outside.join("victim"), s.project.join("file")).unwrap();
    let out = sh(&s, &["--prompt=deny"], "hp-write touch out/new; hp-write touch file; hp-write touch /proc/self/cwd/via-proc; rm file && echo unlinked");
    // Through a directory link, through a file link: outside. Through /proc/self: the project.
    // Removing the link itself is a write in the project.
    assert_eq!(
        stdout(&out),
        "err 13\nerr 13\nok\nunlinked\n",
        "{}",
        stderr(&out)
    );
    assert!(s.project.join("via-proc").exists());
    assert!(s.outside.join("victim").exists());
}

#[test]
fn hard_links_and_renames_need_both_paths() {
    let s = Scratch::new("links", me());
    std::fs::write(s.outside.join("o"), "x").unwrap();
    std::fs::write(s.project.join("p"), "x").unwrap();
    let o = s.outside.join("o");
    let script = format!(
        "ln {o} ./hard; mv {o} ./moved; mv ./p {out}/p2; echo done",
        o = o.display(),
        out = s.outside.display()
    );
    let out = sh(&s, &["--prompt=deny"], &script);
    assert!(stdout(&out).ends_with("done\n"));
    assert!(
        !s.project.join("hard").exists(),
        "a hard link brought an outside file in"
    );
    assert!(!s.project.join("moved").exists());
    assert!(
        s.project.join("p").exists(),
        "a rename moved a project file out"
    );
}

#[test]
fn allow_tty_keeps_the_terminal_writable() {
    // script(1) gives the session a real pseudo-terminal.
    for (flags, want) in [
        ("--no-implicit --allow-tty", "ok"),
        ("--no-implicit", "err 13"),
        ("", "ok"),
    ] {
        let s = Scratch::new("tty", me());
        let inner = format!(
            "{} --prompt=deny {flags} -- sh -c 'hp-write touch $(tty)'",
            bin("hallpass").display()
        );
        let out = run(s.command("script").args(["-qec", &inner, "/dev/null"]));
        let text = stdout(&out);
        assert!(
            text.contains(want),
            "flags {flags:?}: want {want}, got {text:?} {}",
            stderr(&out)
        );
    }
}

/// Regression: renaming a parent of ~/.config/hallpass would have moved the protected
/// configuration away, since only the path and what is below it were protected.
#[test]
fn parents_of_protected_paths_cannot_be_moved() {
    for mode in MODES {
        let s = Scratch::new("protparent", me());
        std::fs::create_dir_all(s.home.join(".config/hallpass")).unwrap();
        let out = sh(
            &s,
            &[
                mode,
                "--prompt=allow",
                // What the renames name, allowed (the whole home cannot be: issue 25).
                "--allow-path=~/.config",
                "--allow-path=~/.config.old",
            ],
            "mv ~/.config ~/.config.old && echo moved; mkdir ~/.config/x && echo made",
        );
        assert_eq!(stdout(&out), "made\n", "{mode}: {}", stderr(&out));
        assert!(s.home.join(".config/hallpass").is_dir());
    }
}

#[test]
fn a_symlinked_config_directory_cannot_be_swapped() {
    for mode in MODES {
        // Dotfile managers make ~/.config a symlink: its entry must not be replaced (the daemon
        // reads its rules through it), nor the target's.
        let s = Scratch::new("protlink", me());
        std::fs::create_dir_all(s.home.join("dotfiles/config/hallpass")).unwrap();
        std::os::unix::fs::symlink(s.home.join("dotfiles/config"), s.home.join(".config")).unwrap();
        std::fs::create_dir_all(s.home.join("evil/hallpass")).unwrap();
        // Everything around them allowed: by a rule written by hand, as `--allow-path`
        // refuses the whole home (issue 25) and a path with a symlink on the way.
        std::fs::write(
            s.home.join("dotfiles/config/hallpass/rules"),
            format!("allow {}\n", s.home.display()),
        )
        .unwrap();
        let out = sh(
            &s,
            &[mode, "--prompt=allow"],
            "rm ~/.config && echo removed; ln -sfn ~/evil ~/.config && echo relinked; \
             mv ~/dotfiles/config ~/dotfiles/old && echo moved; echo done",
        );
        assert_eq!(stdout(&out), "done\n", "{mode}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_link(s.home.join(".config")).unwrap(),
            s.home.join("dotfiles/config")
        );
    }
}

#[test]
fn the_daemon_s_own_rules_are_protected_whatever_home_the_command_has() {
    for mode in MODES {
        // A command started with another HOME still cannot reach the daemon's rules.
        let s = Scratch::new("prototherhome", me());
        let rules_dir = s.home.join(".config/hallpass");
        std::fs::create_dir_all(&rules_dir).unwrap();
        // The daemon starts with the scratch's HOME...
        assert!(sh(&s, &[mode, "--prompt=deny"], "true").status.success());
        // ...and a launcher with another one.
        let other = s.root.join("otherhome");
        std::fs::create_dir_all(&other).unwrap();
        let out = run(s
            .hallpass([
                mode,
                "--prompt=allow",
                "--",
                "sh",
                "-c",
                &format!(
                    "echo 'allow /' > {}/rules && echo wrote; echo done",
                    rules_dir.display()
                ),
            ])
            .env("HOME", &other));
        assert_eq!(stdout(&out), "done\n", "{mode}: {}", stderr(&out));
        assert!(!rules_dir.join("rules").exists());
    }
}

#[test]
fn session_processes_reopen_each_other_s_pipes_but_not_the_launcher_s() {
    let s = Scratch::new("procfd", me());
    // A background subshell writes through its parent's /proc/$$/fd/1 (a pipe to us); the
    // launcher's descriptors ($PPID of the command) stay out of reach.
    let out = sh(
        &s,
        &["--prompt=deny"],
        "(echo viaparent > /proc/$$/fd/1) & wait; \
         echo x > /proc/$PPID/fd/1 2>/dev/null && echo reached-launcher; echo done",
    );
    assert_eq!(stdout(&out), "viaparent\ndone\n", "{}", stderr(&out));
}

/// Moves the project's `.git` away and back around planting a hook; makes the absent
/// `sub/.git` by a rename and by a symlink, each leading to hooks of its own; and removes the
/// symlink `link/.git` (to make a directory there).
const PLANT: &str =
    "mv .git .gitx && echo moved; echo evil > .gitx/hooks/pre-commit && echo planted; \
     mv .gitx .git && echo back; mkdir -p evil/hooks && echo evil > evil/hooks/pre-commit; \
     mv evil sub/.git && echo moved-in; ln -s \"$PWD/evil\" sub/.git && echo linked; \
     rm link/.git && echo unlinked; echo done";

/// The hooks [`PLANT`] goes for, as the project names them.
const HOOKS: [&str; 3] = [".git/hooks", "sub/.git/hooks", "link/.git/hooks"];

/// A project with `.git/hooks`, a `sub/` without `.git`, and a `link/.git` that is a symlink
/// to `real/`.
fn git_project(v: Variant) -> Scratch {
    let s = Scratch::new("denyparent", v);
    for d in [".git/hooks", "sub", "link", "real/hooks"] {
        std::fs::create_dir_all(s.project.join(d)).unwrap();
    }
    std::fs::write(s.project.join(".git/config"), "").unwrap();
    std::os::unix::fs::symlink("../real", s.project.join("link/.git")).unwrap();
    s.chown(&s.project);
    s
}

/// What [`PLANT`] must leave: every rename and link failed with EACCES, logged with the
/// reason the denied path itself gets, and no hook anywhere.
fn nothing_planted(s: &Scratch, out: &std::process::Output, log: &std::path::Path, reason: &str) {
    let ctx = format!("{:?}, reason {reason}: {}", s.variant, stderr(out));
    assert_eq!(stdout(out), "done\n", "{ctx}");
    for refused in [
        "mv: cannot move '.git' to '.gitx': Permission denied",
        "mv: cannot move 'evil' to 'sub/.git': Permission denied",
        "ln: failed to create symbolic link 'sub/.git': Permission denied",
        "rm: cannot remove 'link/.git': Permission denied",
    ] {
        assert!(stderr(out).contains(refused), "{refused}: {ctx}");
    }
    assert!(s.project.join(".git/hooks").is_dir(), "{ctx}");
    assert!(!s.project.join(".git/hooks/pre-commit").exists(), "{ctx}");
    assert!(!s.project.join(".gitx").exists(), "{ctx}");
    assert!(
        std::fs::symlink_metadata(s.project.join("sub/.git")).is_err(),
        "{ctx}"
    );
    assert!(s.project.join("link/.git").is_symlink(), "{ctx}");
    let lines = s.log_lines(log);
    for name in [".git", "sub/.git", "link/.git"] {
        let path = s.project.join(name);
        assert!(
            lines.iter().any(|l| l["path"] == path.to_str().unwrap()
                && l["decision"] == "deny"
                && l["reason"] == reason),
            "{name}: {ctx}: {lines:?}"
        );
    }
}

/// Issue 11: a denied path's parent moved away and back (`mv .git .gitx; echo evil >
/// .gitx/hooks/pre-commit; mv .gitx .git`) planted the hook. Renaming, removing or linking
/// over a parent of a denied path is denied in both modes, though the project allows it.
#[test]
fn parents_of_denied_paths_cannot_be_moved_away_and_back() {
    for v in variants() {
        for mode in MODES {
            let s = git_project(v);
            let log = s.root.join("w.jsonl");
            let logf = format!("--log={}", log.display());
            let mut flags = vec![mode, "--prompt=deny", &logf];
            for hooks in HOOKS {
                flags.extend(["--deny-path", hooks]);
            }
            let out = sh(&s, &flags, PLANT);
            nothing_planted(&s, &out, &log, "policy");
        }
    }
}

/// The same with lasting "never" rules instead of `--deny-path`.
#[test]
fn parents_of_never_rules_cannot_be_moved_away_and_back() {
    for v in variants() {
        for mode in MODES {
            let s = git_project(v);
            for hooks in HOOKS {
                let out = run(s.hallpass(["rules", "deny", hooks]));
                assert!(out.status.success(), "{}", stderr(&out));
            }
            let log = s.root.join("w.jsonl");
            let logf = format!("--log={}", log.display());
            let out = sh(&s, &[mode, "--prompt=deny", &logf], PLANT);
            nothing_planted(&s, &out, &log, "never");
        }
    }
}

/// And for hallpass's own configuration: neither `~/.config` nor the home holding it can be
/// renamed, though a rule allows everything around them (a lasting rule written by hand:
/// `--allow-path` refuses the whole home, issue 25).
#[test]
fn parents_of_the_configuration_cannot_be_renamed() {
    for v in variants() {
        for mode in MODES {
            let s = Scratch::new("protrename", v);
            std::fs::create_dir_all(s.home.join(".config/hallpass")).unwrap();
            std::fs::write(
                s.home.join(".config/hallpass/rules"),
                format!("allow {}\n", s.root.display()),
            )
            .unwrap();
            s.chown(&s.home);
            let log = s.root.join("w.jsonl");
            let flags = [mode, "--prompt=deny", &format!("--log={}", log.display())];
            let script = "mv ~/.config ~/.config.old && echo moved; \
                          mv \"$HOME\" \"$HOME.old\" && echo moved-home; echo done";
            let out = sh(&s, &flags, script);
            let ctx = format!("{v:?} {mode}: {}", stderr(&out));
            assert_eq!(stdout(&out), "done\n", "{ctx}");
            let h = s.home.display();
            for (from, to) in [
                (format!("{h}/.config"), format!("{h}/.config.old")),
                (format!("{h}"), format!("{h}.old")),
            ] {
                let refused = format!("mv: cannot move '{from}' to '{to}': Permission denied");
                assert!(stderr(&out).contains(&refused), "{refused}: {ctx}");
            }
            assert!(s.home.join(".config/hallpass").is_dir(), "{ctx}");
            let lines = s.log_lines(&log);
            for p in [s.home.join(".config"), s.home.clone()] {
                assert!(
                    lines.iter().any(|l| l["path"] == p.to_str().unwrap()
                        && l["decision"] == "deny"
                        && l["reason"] == "protected"),
                    "{}: {ctx}: {lines:?}",
                    p.display()
                );
            }
        }
    }
}

/// An `--allow-path` with a symlink on the way is refused with a message that names where it
/// leads: a command given the path could have made the symlink (it may write there) and so
/// chosen what the next session allows (issue 11, second red-team pass).
#[test]
fn an_allow_path_through_a_symlink_is_refused() {
    let s = Scratch::new("allowlink", variants()[0]);
    std::os::unix::fs::symlink(&s.home, s.outside.join("c")).unwrap();
    let link = s.outside.join("c");
    let out = run(s.hallpass([
        "--prompt=deny",
        &format!("--allow-path={}", link.join("sub").display()),
        "--",
        "sh",
        "-c",
        "echo pwned > ~/.bashrc",
    ]));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("a symlink on the way leads to")
            && err.contains(&s.home.display().to_string()),
        "{err}"
    );
    assert!(!s.home.join(".bashrc").exists());
}

/// `mkdir -p DIR/new` makes a `mkdir` of every parent of DIR, all there already: they fail with
/// EEXIST at once, unasked and unlogged, in both modes; only the new directory is decided.
#[test]
fn a_mkdir_of_a_directory_that_is_there_asks_nothing() {
    for v in variants().into_iter().step_by(2) {
        for mode in MODES {
            let s = Scratch::new("mkdir-there", v);
            let log = s.root.join("log.jsonl");
            let new = s.outside.join("new");
            let script = format!(
                "mkdir -p {new}; echo p=$?; mkdir {out} 2>&1; echo m=$?",
                new = new.display(),
                out = s.outside.display()
            );
            let out = run(s.hallpass([
                "--prompt=deny",
                mode,
                &format!("--log={}", log.display()),
                "--",
                "sh",
                "-c",
                &script,
            ]));
            let text = stdout(&out);
            assert!(text.starts_with("p=1\n"), "{mode}: {text}");
            assert!(text.ends_with("File exists\nm=1\n"), "{mode}: {text}");
            let lines = s.log_lines(&log);
            let paths: Vec<_> = lines.iter().map(|l| l["path"].as_str().unwrap()).collect();
            assert_eq!(paths, [new.to_str().unwrap()], "{mode}");
            assert_eq!(lines[0]["reason"], "unattended");
        }
    }
}

/// Regression: in lite mode the command moved the project into its `$TMPDIR` and put a
/// symlink to a directory outside in its place, so the next `cd PROJECT && hallpass` (and
/// every tool naming the project) wrote there. The project's own name, `$TMPDIR`'s, and a
/// directory above them are decided like writes outside; renames and writes inside are not.
#[test]
fn the_project_keeps_its_name() {
    for v in variants() {
        for mode in MODES {
            let s = Scratch::new("projname", v);
            let log = s.root.join("w.jsonl");
            let (p, o) = (s.project.display(), s.outside.display());
            let parent = s.root.display();
            let script = format!(
                "cd /; echo \"$TMPDIR\" >&2; \
                 mv {p} \"$TMPDIR/x\"; echo mv=$?; \
                 ln -sT {o} {p}; echo ln=$?; \
                 rmdir {p}; echo rmdir=$?; \
                 mv {parent} {parent}.moved; echo parent=$?; \
                 mv \"$TMPDIR\" {p}/t; echo tmpdir=$?; \
                 echo inside > {p}/f; echo write=$?; \
                 mv {p}/f {p}/g; echo rename=$?"
            );
            let out = sh(
                &s,
                &[mode, "--prompt=deny", &format!("--log={}", log.display())],
                &script,
            );
            let ctx = format!("{v:?} {mode}: {}", stderr(&out));
            assert_eq!(
                stdout(&out),
                "mv=1\nln=1\nrmdir=1\nparent=1\ntmpdir=1\nwrite=0\nrename=0\n",
                "{ctx}"
            );
            for cmd in ["mv", "ln", "rmdir"] {
                assert!(stderr(&out).contains(&format!("{cmd}: ")), "{ctx}");
            }
            assert_eq!(
                stderr(&out).matches("Permission denied").count(),
                5,
                "{ctx}"
            );
            let md = std::fs::symlink_metadata(&s.project).unwrap();
            assert!(md.is_dir(), "{ctx}");
            assert_eq!(
                std::fs::read_to_string(s.project.join("g")).unwrap(),
                "inside\n"
            );
            assert!(!s.project.join("t").exists(), "{ctx}");
            let lines = s.log_lines(&log);
            let denied = |path: &str| {
                lines.iter().any(|l| {
                    l["path"] == path && l["decision"] == "deny" && l["reason"] == "unattended"
                })
            };
            let project = s.project.to_str().unwrap();
            assert!(denied(project), "{ctx}: {lines:?}");
            // The scratch directory holds the daemon's runtime directory: protected too.
            let parent = s.root.to_str().unwrap();
            assert!(
                lines
                    .iter()
                    .any(|l| l["path"] == parent && l["decision"] == "deny"),
                "{ctx}: {lines:?}"
            );
            let tmpdir = stderr(&out).lines().next().unwrap_or_default().to_string();
            assert!(tmpdir.starts_with("/tmp/hallpass-"), "{ctx}");
            assert!(denied(&tmpdir), "{ctx}: {lines:?}");
        }
    }
}

/// Issue 25: audit mode logged `touch /etc/x` by a user as a write it let through
/// (`audit`), though the kernel refuses it. What the process's own credentials cannot write
/// (a directory it may not write into, a file it may not write) fails as natively, logged
/// `refused`, in audit and unattended mode alike; what it may write is decided as before.
/// As root, who may write there, nothing is refused.
#[test]
fn a_write_the_kernel_refuses_fails_natively() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("refused", v);
        let log = s.root.join("w.jsonl");
        let logf = format!("--log={}", log.display());
        let x = format!("/etc/hallpass-refused-{}", std::process::id());
        let mine = s.outside.join("mine");
        let user = matches!(v.who, Who::Unprivileged { .. });
        for (prompt, reason) in [("--prompt=allow", "audit"), ("--prompt=deny", "unattended")] {
            if prompt == "--prompt=allow" && !user {
                // Root would write there: not in audit mode.
                continue;
            }
            let _ = std::fs::remove_file(&log);
            let script = format!(
                "touch {x}; echo touch=$?; echo >> /etc/hostname; echo append=$?; hp-write touch {}",
                mine.display()
            );
            let out = sh(&s, &[prompt, &logf], &script);
            let mine_result = if reason == "audit" { "ok" } else { "err 13" };
            assert_eq!(
                stdout(&out),
                format!("touch=1\nappend=2\n{mine_result}\n"),
                "{v:?} {prompt}: {}",
                stderr(&out)
            );
            let lines = s.log_lines(&log);
            let of = |p: &str| -> Vec<(String, String)> {
                lines
                    .iter()
                    .filter(|l| l["path"] == p)
                    .map(|l| (l["decision"].to_string(), l["reason"].to_string()))
                    .collect()
            };
            let (deny, refused) = ("\"deny\"".to_string(), "\"refused\"".to_string());
            let by_prompt = (
                format!("{:?}", if reason == "audit" { "allow" } else { "deny" }),
                format!("{reason:?}"),
            );
            if user {
                // One line each: touch's later change of the times of what is not there
                // fails at once (ENOENT), unlogged.
                assert_eq!(of(&x), [(deny.clone(), refused.clone())], "{lines:?}");
                assert_eq!(of("/etc/hostname"), [(deny.clone(), refused.clone())]);
            } else {
                assert_eq!(of(&x)[0], by_prompt, "{lines:?}");
            }
            assert_eq!(of(mine.to_str().unwrap())[0], by_prompt, "{lines:?}");
            assert!(!std::path::Path::new(&x).exists());
        }
    }
}
