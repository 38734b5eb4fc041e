//! The `--log` file when it cannot be written: audit mode promises a line for every write it
//! allows, so a write whose line is lost is refused (`EACCES`); the session says so once and
//! counts the lines lost at the end; the file stays valid JSON Lines. And a `--log` that is
//! not a regular file is refused at once.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use hallpass_tests::load::Tiny;
use hallpass_tests::*;

/// `N` writes outside the project, one `hp-write touch` each, printing `ok` or `err 13`.
fn many_touches(dir: &Path, n: usize) -> String {
    format!(
        "i=0; while [ $i -lt {n} ]; do hp-write touch {}/f$i; i=$((i+1)); done",
        dir.display()
    )
}

/// The notice said once when the first line is lost.
fn notice(log: &Path) -> String {
    format!(
        "hallpass: cannot write the log {} (No space left on device (os error 28)): writes it would record as allowed are refused (EACCES)\n",
        log.display()
    )
}

/// Regression (issue 24): with `--log` on a full file system, 18,564 writes were made and 397
/// logged; the lost lines were said only in the daemon's own log. Now a write whose line
/// cannot be written is refused, the session says so once and counts them at the end, and
/// every line in the file is whole.
#[test]
fn a_full_log_refuses_the_writes_it_cannot_record() {
    if !am_root() {
        eprintln!("SKIP a full file system: mounting a tmpfs needs root");
        return;
    }
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("log-full", v);
        let Some(tiny) = Tiny::mount(&s, &s.root.join("tiny"), "64k") else {
            return;
        };
        let log = tiny.dir.join("w.jsonl");
        let n = 600;
        let out = run(s.hallpass([
            "--prompt=allow",
            mode,
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &many_touches(&s.outside, n),
        ]));
        let results: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
        assert_eq!(results.len(), n, "{mode} {v:?}: {}", stderr(&out));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.ends_with('\n'), "a line cut short at the end");
        let lines = s.log_lines(&log);
        let logged: Vec<String> = lines
            .iter()
            .map(|l| {
                assert_eq!(l["decision"], "allow", "{l}");
                l["path"].as_str().unwrap().to_string()
            })
            .collect();
        let mut refused = 0;
        for (i, r) in results.iter().enumerate() {
            let f = s.outside.join(format!("f{i}"));
            let has_line = logged.contains(&f.to_string_lossy().into_owned());
            match r.as_str() {
                "ok" => assert!(
                    has_line && f.exists(),
                    "{mode} {v:?}: f{i} made without its line"
                ),
                EACCES => {
                    refused += 1;
                    assert!(
                        !has_line && !f.exists(),
                        "{mode} {v:?}: f{i} refused, yet there"
                    );
                }
                other => panic!("{mode} {v:?}: f{i}: {other}"),
            }
        }
        assert!(refused > 0, "{mode} {v:?}: the log never filled up");
        assert!(!logged.is_empty(), "{mode} {v:?}: nothing logged");
        // Once on the terminal as it happens, and the count at the end.
        let err = stderr(&out);
        assert_eq!(err.matches(&notice(&log)).count(), 1, "{err}");
        let end = format!(
            "hallpass: {refused} lines could not be written to the log {}: {refused} writes refused for it (EACCES), 0 writes denied not recorded\n",
            log.display()
        );
        assert!(err.ends_with(&end), "{mode} {v:?}: {err}");
    }
}

/// Under `--prompt=deny` nothing is refused for the log (every such write is denied anyway):
/// the lines lost are counted and said at the end.
#[test]
fn unattended_counts_the_lines_it_could_not_write() {
    if !am_root() {
        eprintln!("SKIP a full file system: mounting a tmpfs needs root");
        return;
    }
    let s = Scratch::new("log-full-deny", variants()[0]);
    let Some(tiny) = Tiny::mount(&s, &s.root.join("tiny"), "64k") else {
        return;
    };
    let log = tiny.dir.join("w.jsonl");
    let n = 600;
    let out = run(s.hallpass([
        "--prompt=deny",
        &format!("--log={}", log.display()),
        "--",
        "sh",
        "-c",
        &many_touches(&s.outside, n),
    ]));
    assert_eq!(stdout(&out), format!("{EACCES}\n").repeat(n));
    let lines = s.log_lines(&log);
    assert!(std::fs::read_to_string(&log).unwrap().ends_with('\n'));
    let lost = n - lines.len();
    assert!(lost > 0, "the log never filled up");
    let err = stderr(&out);
    assert_eq!(err.matches(&notice(&log)).count(), 1, "{err}");
    let end = format!(
        "hallpass: {lost} lines could not be written to the log {}: 0 writes refused for it (EACCES), {lost} writes denied not recorded\n\
         hallpass: {n} writes were refused ({n} unattended): {}, ...; see them all: hallpass report {}\n",
        log.display(),
        (0..3)
            .map(|i| s.outside.join(format!("f{i}")).display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        log.display()
    );
    assert!(err.ends_with(&end), "{err}");
}

/// Regression (issue 24): a `--log` naming a FIFO held the launcher until something read it.
/// Now it is refused at once, with a line that says what to do, as is any file that is not
/// a regular one.
#[test]
fn a_log_that_is_not_a_regular_file_is_refused_at_once() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("log-fifo", v);
        let fifo = s.root.join("log.fifo");
        let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(st.success());
        s.chown(&fifo);
        for (path, kind) in [(&fifo, "a FIFO"), (&s.outside, "a directory")] {
            let mut cmd = s.hallpass([
                "--prompt=deny",
                &format!("--log={}", path.display()),
                "--",
                "true",
            ]);
            let out = run_with_deadline(&mut cmd, Duration::from_secs(20));
            assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
            assert_eq!(
                stderr(&out),
                format!(
                    "hallpass: the log file {} is {kind}, not a regular file\nhint: name a file, and follow it with `tail -f FILE` if you want to watch it\n",
                    path.display()
                )
            );
        }
    }
}
