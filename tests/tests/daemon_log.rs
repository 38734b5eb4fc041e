//! The daemon's own log (`hallpassd.log`) cannot be turned against it (issue 24, item 4): a
//! session that floods the daemon with what it refuses leaves a few lines and a count; a log
//! on a pipe nobody reads, or on a full file system, stops no session; the file is rotated
//! past 1 MiB. Meanwhile a second session's writes are answered as fast as ever.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hallpass_tests::load::{wait_for_file, Latency, Tiny, FLOOD, LATENCY};
use hallpass_tests::*;

/// How long the first session floods the daemon.
const FLOOD_SECS: &str = "4";

/// Starts the flooding session (see [`FLOOD`]) and waits until its flood runs. `gate`: the
/// flood waits for a file `go` in the project first.
fn flood(s: &Scratch, gate: bool) -> Child {
    let flood = s.script("flood.py", FLOOD);
    let dir = s.runtime.join("hallpass");
    let cmd = format!(
        "{}exec python3 {} {} {FLOOD_SECS} {}",
        if gate {
            "while [ ! -e go ]; do sleep 0.05; done; "
        } else {
            ""
        },
        flood.display(),
        dir.display(),
        s.outside.display()
    );
    let c = background(s.hallpass(["--prompt=answer", "--", "sh", "-c", &cmd]));
    if !gate {
        assert!(
            wait_for_file(&s.project.join("started"), Duration::from_secs(30)),
            "the flood did not start"
        );
    }
    c
}

/// A second session's denied writes, timed while the first floods: must all be answered
/// (denied), quickly; returns what they took.
fn second_session(s: &Scratch) -> Latency {
    let lat = s.script("latency.py", LATENCY);
    let out = run(s
        .hallpass(["--prompt=deny", "--", "python3"])
        .arg(&lat)
        .arg(&s.outside)
        .arg("100"));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("lost the daemon"), "{err}");
    let l = Latency::parse(&stdout(&out));
    assert_eq!(l.errno, libc::EACCES, "{l:?}");
    // Speed is measured, not asserted, past what says the daemon did not stall: a write
    // waiting on a blocked log would take seconds, or never end.
    assert!(l.median_ms < 50.0, "{l:?}");
    l
}

/// The flood ended: how many rounds it made (each used to write three lines).
fn rounds(a: Child) -> u64 {
    let out = finish(a);
    stdout(&out)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the flood printed {:?}: {}", stdout(&out), stderr(&out)))
}

fn daemon_log(s: &Scratch) -> String {
    std::fs::read_to_string(s.runtime.join("hallpass/hallpassd.log")).unwrap_or_default()
}

/// The daemon still runs as `pid`.
fn alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .status()
        .is_ok_and(|s| s.success())
}

/// Regression (issue 24): every refused connection and every write denied for too many
/// questions added a line to `hallpassd.log` (17 MB in 20 s from one session). Now a few
/// lines of each are written and the rest counted.
#[test]
fn a_flood_leaves_a_few_lines_and_a_count() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("dlog-flood", v);
        let a = flood(&s, false);
        let pid = s.daemon_pid();
        let l = second_session(&s);
        let n = rounds(a);
        assert!(n > 100, "{v:?}: the flood made {n} rounds");
        // A window of repeats ends 10 s after its first line, with the count.
        let counted = wait_until(Duration::from_secs(20), || {
            daemon_log(&s).contains("more like it in 10 s]")
        });
        let log = daemon_log(&s);
        assert!(counted, "{v:?}: no count of repeats:\n{log}");
        for what in [
            "api: dropped a connection: peer pid",
            "refused a session: refused: peer pid",
            "questions of the session already wait for an answer: a write that needs an answer is denied",
        ] {
            assert!(log.contains(what), "{v:?}: {what:?} not in\n{log}");
        }
        assert!(log.len() < 32 * 1024, "{v:?}: {} bytes", log.len());
        assert!(alive(&pid));
        println!(
            "{v:?}: {n} rounds of flood ({} refusals) left {} bytes in hallpassd.log; the other session's writes: median {} ms, 99th percentile {} ms, longest {} ms",
            3 * n,
            log.len(),
            l.median_ms,
            l.p99_ms,
            l.max_ms
        );
    }
}

/// Regression (issue 24): the daemon wrote its log with `eprintln!`, which waits while the
/// log is a pipe nobody reads: once it was full, the thread saying something stopped, and
/// with it a session's registration or the API. Now nothing waits on the log.
#[test]
fn a_log_nobody_reads_stops_no_session() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("dlog-pipe", v);
        let dir = s.runtime.join("hallpass");
        // Started by hand, its output into a pipe this test never reads.
        let mut daemon = s
            .command(bin("hallpassd"))
            .arg("--runtime-dir")
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(wait_for_file(
            &dir.join("control.sock"),
            Duration::from_secs(10)
        ));
        let a = flood(&s, false);
        let l = second_session(&s);
        let n = rounds(a);
        assert!(n > 100, "{v:?}: the flood made {n} rounds");
        assert!(alive(&daemon.id().to_string()));
        println!(
            "{v:?}: log on a pipe nobody reads, {n} rounds of flood; the other session's writes: median {} ms, 99th percentile {} ms, longest {} ms",
            l.median_ms, l.p99_ms, l.max_ms
        );
        let _ = Command::new("kill").arg(daemon.id().to_string()).status();
        let _ = daemon.wait();
    }
}

/// Regression (issue 24): with `$XDG_RUNTIME_DIR` on a small tmpfs that filled up, every
/// `eprintln!` of the daemon panicked: the API stopped, and a new session could not register
/// (its launcher registered again hundreds of times a second). Now the lines that cannot be
/// written are counted, said once there is room, and every session is served.
#[test]
fn a_full_runtime_directory_stops_no_session() {
    if !am_root() {
        eprintln!("SKIP a full runtime directory: mounting a tmpfs needs root");
        return;
    }
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("dlog-full", v);
        let Some(tiny) = Tiny::mount(&s, &s.runtime, "512k") else {
            return;
        };
        let a = flood(&s, true);
        assert!(wait_for_file(
            &s.runtime.join("hallpass/hallpassd.pid"),
            Duration::from_secs(30)
        ));
        let pid = s.daemon_pid();
        tiny.fill(&s.runtime.join("hallpass/hallpassd.log"));
        std::fs::write(s.project.join("go"), "").unwrap();
        assert!(wait_for_file(
            &s.project.join("started"),
            Duration::from_secs(30)
        ));
        let l = second_session(&s);
        let n = rounds(a);
        assert!(n > 100, "{v:?}: the flood made {n} rounds");
        assert!(alive(&pid), "{v:?}: the daemon died:\n{}", daemon_log(&s));
        // Room again: the next line says what was lost.
        tiny.unfill();
        let out = run(s.hallpass(["--prompt=deny", "--", "true"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let said = wait_until(Duration::from_secs(10), || {
            daemon_log(&s)
                .contains("lines of this log could not be written (No space left on device")
        });
        let log = daemon_log(&s);
        assert!(said, "{v:?}:\n{log}");
        assert!(!log.contains("panicked"), "{v:?}:\n{log}");
        println!(
            "{v:?}: runtime directory full, {n} rounds of flood; the other session's writes: median {} ms, 99th percentile {} ms, longest {} ms",
            l.median_ms, l.p99_ms, l.max_ms
        );
        // The daemon first (its pid file is on the tmpfs), then the tmpfs.
        drop(s);
        drop(tiny);
    }
}

/// `hallpassd.log` is renamed `hallpassd.log.1` once it holds 1 MiB, so the two hold 2 MiB
/// at most; the new one starts by saying where the older lines are.
#[test]
fn the_log_is_rotated_past_a_mebibyte() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("dlog-rotate", v);
        let dir = s.runtime.join("hallpass");
        std::fs::create_dir_all(&dir).unwrap();
        let old: PathBuf = dir.join("hallpassd.log.1");
        let log = dir.join("hallpassd.log");
        std::fs::write(&log, "an older line\n".repeat(100_000)).unwrap();
        s.chown(&s.runtime);
        let out = run(s.hallpass(["--prompt=deny", "--", "true"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let now = wait_until(Duration::from_secs(10), || {
            daemon_log(&s).contains("session 1 ended")
        });
        let text = daemon_log(&s);
        assert!(now, "{v:?}:\n{text}");
        assert!(
            text.starts_with(&format!(
                "hallpassd: the lines before this one are in {}\n",
                old.display()
            )),
            "{v:?}:\n{text}"
        );
        assert!(text.len() < 4096, "{v:?}: {}", text.len());
        let before = std::fs::read_to_string(&old).unwrap();
        assert!(before.starts_with("an older line\n"));
        assert!(before.len() >= 1_400_000, "{}", before.len());
    }
}
