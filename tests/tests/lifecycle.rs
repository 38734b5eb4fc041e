//! Processes that outlive the command: `--wait=all` keeps supervising them (double-forked
//! ones too) and SIGTERM stops them early; without it they are left unsupervised in the safe
//! way: every write the filter sends to the daemon fails with ENOSYS.

use std::time::{Duration, Instant};

use hallpass_tests::*;

/// Lines of a file the session's leftover process writes, waiting until it has `n`.
fn lines_of(path: &std::path::Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "only {} lines in {}: {lines:?}",
            lines.len(),
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn wait_all_supervises_what_the_command_leaves_behind() {
    for v in variants() {
        let s = Scratch::new("wait-all", v);
        let log = s.root.join("log.jsonl");
        let out_file = s.project.join("every.out");
        let started = Instant::now();
        // The command starts a writer (every 100 ms, outside the project) and exits at once.
        let out = run(s.hallpass([
            "--wait=all",
            "--prompt=deny",
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &format!(
                "hp-write every {} 8 100 > {} & exit 3",
                s.outside.display(),
                out_file.display()
            ),
        ]));
        // hallpass stayed until the writer was done, and passed on the command's status.
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(
            started.elapsed() >= Duration::from_millis(700),
            "did not wait"
        );
        let lines = lines_of(&out_file, 8);
        assert!(lines.iter().all(|l| l.ends_with(" err 13")), "{lines:?}");
        let logged = s.log_lines(&log);
        assert_eq!(logged.len(), 8, "{logged:?}");
        assert!(logged.iter().all(|l| l["reason"] == "unattended"));
    }
}

#[test]
fn a_double_forked_daemon_stays_supervised() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("double-fork", v);
        let log = s.root.join("log.jsonl");
        let out_file = s.project.join("daemon.out");
        // Fork twice and leave a new session: the classic daemon; its parent is gone at once.
        let out = run(s.hallpass([
            "--wait=all",
            "--prompt=deny",
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &format!(
                "(setsid hp-write every {} 5 100 > {} &) ; exit 0",
                s.outside.display(),
                out_file.display()
            ),
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        let lines = lines_of(&out_file, 5);
        assert!(lines.iter().all(|l| l.ends_with(" err 13")), "{lines:?}");
        assert_eq!(s.log_lines(&log).len(), 5);
    }
}

#[test]
fn sigterm_stops_what_is_left_early() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("wait-stop", v);
        let out_file = s.project.join("every.out");
        let child = s
            .hallpass([
                "--wait=all",
                "--prompt=deny",
                "--",
                "sh",
                "-c",
                &format!(
                    "hp-write every {} 1000 100 > {} & exit 0",
                    s.project.display(),
                    out_file.display()
                ),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Supervised and allowed while it runs.
        let lines = lines_of(&out_file, 3);
        assert!(lines.iter().all(|l| l.ends_with(" ok")), "{lines:?}");
        let pid = child.id();
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with(
                "hallpass: stopping on SIGTERM: sent SIGTERM to 1 process still running (pid "
            ),
            "{err}"
        );
        // The writer is gone: nothing more is written.
        let n = lines_of(&out_file, 1).len();
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            lines_of(&out_file, 1).len(),
            n,
            "the writer outlived hallpass"
        );
    }
}

#[test]
fn without_wait_all_leftovers_end_with_the_command() {
    for v in variants() {
        let s = Scratch::new("leftover", v);
        let out_file = s.project.join("every.out");
        // The writer creates files in the project (allowed) every 100 ms; the command exits
        // after about 3 of them.
        let out = run(s.hallpass([
            "--prompt=deny",
            "--",
            "sh",
            "-c",
            &format!(
                "hp-write every {} 100 100 > {} & sleep 0.35; exit 0",
                s.project.display(),
                out_file.display()
            ),
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("hallpass: ended 1 process the command left behind (pid "),
            "{err}"
        );
        // Ended, while still supervised: nothing more is written, and nothing unchecked was.
        let lines = lines_of(&out_file, 1);
        assert!(lines.iter().all(|l| l.ends_with(" ok")), "{lines:?}");
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            lines_of(&out_file, 1).len(),
            lines.len(),
            "the writer outlived hallpass"
        );
    }
}

#[test]
fn if_the_launcher_is_killed_leftovers_write_nothing_unchecked() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("launcher-kill", v);
        let out_file = s.project.join("every.out");
        let mut child = s
            .hallpass([
                "--prompt=deny",
                "--",
                "sh",
                "-c",
                &format!(
                    "hp-write every {} 30 100 > {}",
                    s.project.display(),
                    out_file.display()
                ),
            ])
            .spawn()
            .unwrap();
        lines_of(&out_file, 3);
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(child.id().to_string())
            .status();
        let _ = child.wait();
        // Nobody ends the writer now; the session has no supervisor, and every write it
        // tries fails with ENOSYS.
        let lines = lines_of(&out_file, 30);
        assert!(lines[0].ends_with(" ok"), "{lines:?}");
        assert!(lines[29].ends_with(" err 38"), "{lines:?}");
        let first_err = lines.iter().position(|l| l.ends_with(" err 38")).unwrap();
        assert!(
            lines[first_err..].iter().all(|l| l.ends_with(" err 38")),
            "{lines:?}"
        );
        for i in first_err..30 {
            assert!(!s.project.join(format!("e{i}")).exists());
        }
    }
}

#[test]
fn the_daemon_can_die_mid_session() {
    for v in variants() {
        let s = Scratch::new("kill9", v);
        let forbidden = s.outside.join("forbidden");
        std::fs::create_dir_all(&forbidden).unwrap();
        s.chown(&s.outside);
        let log = s.root.join("log.jsonl");
        let q = s.outside.join("q");
        // Writes allowed and denied all along, and a question left open.
        let child = s
            .hallpass([
                "--prompt=answer",
                &format!("--deny-path={}", forbidden.display()),
                &format!("--log={}", log.display()),
                "--",
                "sh",
                "-c",
                &format!(
                    "hp-write every {p} 60 50 > every.out & hp-write every {f} 60 50 > forb.out & hp-write touch {q}; wait",
                    p = s.project.display(),
                    f = forbidden.display(),
                    q = q.display()
                ),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pending = |s: &Scratch| s.try_pending(&[]).unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(30);
        let first = loop {
            let p = pending(&s);
            if p.len() == 1 {
                break p[0].clone();
            }
            assert!(Instant::now() < deadline, "no question");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(first["path"], q.to_string_lossy().as_ref());
        // Mid-stream: some allowed writes done, more to come.
        lines_of(&s.project.join("every.out"), 5);
        let pid = s.kill_daemon();
        // The launcher starts a new daemon, which asks the question again.
        let again = s.wait_asked_again(&first);
        assert_eq!(again["path"], q.to_string_lossy().as_ref());
        let new_pid = s.daemon_pid();
        assert_ne!(new_pid, pid);
        let out = run(s.hallpass(["answer", "--id", &again["id"].to_string(), "once"]));
        assert!(out.status.success(), "{}", stderr(&out));
        // The session finishes its work: nothing hung, nothing forbidden landed.
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "ok\n");
        let err = stderr(&out);
        assert!(err.contains("hallpass: lost the daemon"), "{err}");
        assert!(err.contains("a new daemon supervises the session"), "{err}");
        let every = lines_of(&s.project.join("every.out"), 60);
        assert!(every.iter().all(|l| l.ends_with(" ok")), "{every:?}");
        let forb = lines_of(&s.project.join("forb.out"), 60);
        assert!(forb.iter().all(|l| l.ends_with(" err 13")), "{forb:?}");
        assert_eq!(std::fs::read_dir(&forbidden).unwrap().count(), 0);
        assert!(q.exists());
        // The daemon the launcher started mid-session stops on SIGTERM like any other (it
        // must not inherit the signals the launcher blocks for itself).
        let _ = std::process::Command::new("kill").arg(&new_pid).status();
        let gone = || {
            std::fs::read_to_string(format!("/proc/{new_pid}/stat"))
                .map(|st| st.contains(") Z "))
                .unwrap_or(true)
        };
        assert!(
            wait_until(Duration::from_secs(10), gone),
            "the new daemon ignored SIGTERM"
        );
    }
}

/// A daemon that goes away in the instant the launcher reaches it (killed, or restarting
/// after an upgrade): here a listener on the control socket that takes one connection and
/// hangs up. The launcher starts a real daemon and the session runs.
#[test]
fn a_daemon_gone_while_the_session_registers_is_replaced() {
    let s = Scratch::new("gone-at-open", variants()[0]);
    let dir = s.runtime.join("hallpass");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    s.chown(&s.runtime);
    s.chown(&dir);
    let control = dir.join("control.sock");
    let mut gone = std::process::Command::new("socat")
        .arg(format!("UNIX-LISTEN:{},unlink-close=0", control.display()))
        .arg("EXEC:true")
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(10), || control.exists()));
    let out = run(s.hallpass(["--prompt=deny", "--", "sh", "-c", "echo ran"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ran\n");
    // The stand-in took the first connection and is gone (its status says nothing: the
    // launcher may hang up first); a real daemon runs now.
    let took = wait_until(Duration::from_secs(10), || {
        gone.try_wait().unwrap().is_some()
    });
    if !took {
        let _ = gone.kill();
    }
    assert!(took, "the launcher never reached the stand-in");
    assert!(!s.daemon_pid().is_empty());
}

#[test]
fn many_sessions_with_open_questions_stay_independent() {
    let s = Scratch::new("many", variants()[0]);
    const SESSIONS: usize = 32;
    const WRITES: usize = 1000;
    let mut children = Vec::new();
    let started = Instant::now();
    for i in 0..SESSIONS {
        let dir = s.project.join(format!("s{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        // Each: one question left open (outside), and 1,000 allowed writes meanwhile.
        let c = s
            .hallpass([
                "--prompt=answer",
                "--",
                "sh",
                "-c",
                &format!(
                    "hp-write touch {q} > {d}/q.out & hp-write every {d} {WRITES} 0 > {d}/every.out; echo done; wait",
                    q = s.outside.join(format!("q{i}")).display(),
                    d = dir.display()
                ),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        children.push(c);
    }
    // Every session's allowed writes complete while all the questions stay open.
    for i in 0..SESSIONS {
        let f = s.project.join(format!("s{i}/every.out"));
        let lines = lines_of(&f, WRITES);
        assert!(lines.iter().all(|l| l.ends_with(" ok")), "session {i}");
    }
    let elapsed = started.elapsed();
    let out = run(s.hallpass(["answer", "--json"]));
    let open: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(open.len(), SESSIONS, "every question still open");
    eprintln!(
        "{SESSIONS} sessions x {WRITES} allowed writes with a question open each: {:.1} s, {:.1} us per write overall",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / (SESSIONS * WRITES) as f64
    );
    // Deny them all; every session ends.
    for q in &open {
        let out = run(s.hallpass(["answer", "--id", &q["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(stdout(&out), "done\n");
    }
}

#[test]
fn the_command_cannot_reach_the_daemon_or_the_launcher() {
    let modes = ["--mode=lite", "--mode=strict"];
    for (v, mode) in variants()
        .into_iter()
        .filter(|v| !v.lend)
        .flat_map(|v| modes.map(|m| (v, m)))
    {
        let s = Scratch::new("reach", v);
        assert!(run(s.hallpass(["--prompt=deny", "--", "true"]))
            .status
            .success());
        let daemon = s.daemon_pid();
        // Signals out of the session (Landlock scoping), the launcher's descriptors (it is not
        // dumpable; and Landlock keeps ptrace-class access inside the session).
        let out = run(s.hallpass([
            mode,
            "--prompt=deny",
            "--",
            "sh",
            "-c",
            &format!(
                "kill -0 {d} 2>/dev/null && echo signalled-daemon; \
                 kill -0 $PPID 2>/dev/null && echo signalled-launcher; \
                 readlink /proc/$PPID/fd/0 >/dev/null 2>&1 && echo read-launcher-fd; \
                 kill -0 $$ && echo signalled-self; \
                 echo traced-outside $(hp-write attach {me}); \
                 echo launcher-fd $(hp-write getfd $PPID 0); \
                 echo daemon-fd $(hp-write getfd {d} 0); \
                 echo wrote-outside $(hp-write vmwrite {me}); \
                 sleep 5 & echo traced-own $(hp-write attach $!); \
                 echo own-fd $(hp-write getfd $! 0); echo wrote-own $(hp-write vmwrite $!); \
                 kill $!; echo done",
                d = daemon,
                me = std::process::id()
            ),
        ]));
        // Tracing, taking a descriptor from (the launcher's listener, the daemon's) or writing
        // the memory of a process outside the session is refused; the command's own processes
        // stay reachable (debuggers work). EFAULT: the write was allowed, the address is bad.
        assert_eq!(
            stdout(&out),
            "signalled-self\ntraced-outside err 1\nlauncher-fd err 1\ndaemon-fd err 1\n\
             wrote-outside err 1\ntraced-own ok\nown-fd ok\nwrote-own err 14\ndone\n",
            "{v:?} {mode}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn on_kernels_without_landlock_scopes_renames_still_work_and_tracing_out_is_refused() {
    let s = Scratch::new("landlock-abi2", variants()[0]);
    std::fs::create_dir_all(s.project.join("a")).unwrap();
    std::fs::create_dir_all(s.project.join("b")).unwrap();
    std::fs::write(s.project.join("a/f"), "x").unwrap();
    // The older kernels' domain handles the REFER right (allowed everywhere), so a rename or
    // link into another directory works as without hallpass.
    let out = run(s
        .hallpass([
            "--prompt=deny",
            "--",
            "sh",
            "-c",
            &format!(
                "mv a/f b/f && ln b/f a/g && echo moved; echo traced-outside $(hp-write attach {})",
                std::process::id()
            ),
        ])
        .env("HALLPASS_LANDLOCK_ABI", "2"));
    assert_eq!(
        stdout(&out),
        "moved\ntraced-outside err 1\n",
        "{}",
        stderr(&out)
    );
    assert!(s.project.join("b/f").exists() && s.project.join("a/g").exists());
}

/// The processes whose command line holds `tag`, from `/proc`.
fn with_tag(tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(tag) {
            out.push(format!("{name}: {cmd}"));
        }
    }
    out
}

#[test]
fn a_chain_of_fork_and_exit_is_ended_with_the_command() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("hopper", v);
        // Unique to this run: how its chain is told apart in /proc.
        let tag = format!(
            "hop-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        // The chain ignores SIGTERM, forks and exits as fast as it can, and gives up by itself
        // after 30 s (were it to escape). Every link holds our end of its stdout.
        let mut child = s
            .hallpass([
                mode,
                "--prompt=deny",
                "--",
                "sh",
                "-c",
                &format!("hp-write hop 30 {tag} & sleep 0.5; exit 0"),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut text);
            let _ = tx.send(text);
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "{v:?} {mode}: hallpass did not end"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err);
        assert_eq!(status.code(), Some(0), "{v:?} {mode}: {err}");
        // Every link of the chain holds the pipe: it closes only once none is left.
        let text = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| {
            panic!(
                "{v:?} {mode}: the chain outlived hallpass: {:?}\n{err}",
                with_tag(&tag)
            )
        });
        assert!(text.starts_with("hopping "), "{v:?} {mode}: {text:?}");
        assert_eq!(with_tag(&tag), Vec::<String>::new(), "{v:?} {mode}");
        // It did hop (more than one pid was ended), and all of it was ended.
        let ended: usize = err
            .strip_prefix("hallpass: ended ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{v:?} {mode}: {err}"));
        assert!(ended >= 2, "{v:?} {mode}: {err}");
        assert!(!err.contains("could not end"), "{v:?} {mode}: {err}");
    }
}
