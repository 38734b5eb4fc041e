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
fn without_wait_all_leftovers_write_nothing_unchecked() {
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
                "hp-write every {} 12 100 > {} & sleep 0.35; exit 0",
                s.project.display(),
                out_file.display()
            ),
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        let lines = lines_of(&out_file, 12);
        // While the session lived: allowed. After: ENOSYS, never an unchecked write.
        assert!(lines[0].ends_with(" ok"), "{lines:?}");
        assert!(lines[11].ends_with(" err 38"), "{lines:?}");
        let first_err = lines.iter().position(|l| l.ends_with(" err 38")).unwrap();
        assert!(
            lines[first_err..].iter().all(|l| l.ends_with(" err 38")),
            "{lines:?}"
        );
        for i in first_err..12 {
            assert!(!s.project.join(format!("e{i}")).exists());
        }
    }
}
