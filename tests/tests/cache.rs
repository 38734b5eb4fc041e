//! Lite mode's cache of directory descriptors (hallpassd/src/dircache.rs) end to end: each
//! test would let a write be decided on a path it is not made at if the cache went stale.
//! With `--prompt=allow` every write outside the project is logged with its path (reason
//! `audit`), and a write inside it is not: the log says which path a write was decided on.

use hallpass_tests::*;
use std::path::Path;

fn sh(s: &Scratch, flags: &[&str], script: &str) -> std::process::Output {
    let mut a: Vec<&str> = flags.to_vec();
    a.extend(["--", "sh", "-c", script]);
    run(s.hallpass(&a))
}

/// Whether the log holds a write of `path` decided by `reason`.
fn logged(s: &Scratch, log: &Path, path: &Path, reason: &str) -> bool {
    s.log_lines(log)
        .iter()
        .any(|l| l["path"] == path.to_str().unwrap() && l["reason"] == reason)
}

/// Regression guard: a descriptor number closed and reopened on another directory must be
/// resolved again, not taken for the directory kept under that number.
#[test]
fn a_descriptor_number_reused_for_another_directory_is_resolved_again() {
    for v in variants() {
        let s = Scratch::new("cache-reuse", v);
        let inside = s.project.join("in");
        std::fs::create_dir(&inside).unwrap();
        s.chown(&inside);
        let out = sh(
            &s,
            &["--prompt=deny"],
            &format!(
                "hp-write dirfd-reuse {} {}",
                inside.display(),
                s.outside.display()
            ),
        );
        assert_eq!(
            stdout(&out),
            "a ok\nreused\nb err 13\n",
            "{v:?}: {}",
            stderr(&out)
        );
        assert!(inside.join("a").exists());
        assert!(!s.outside.join("b").exists(), "{v:?}");
    }
}

/// Regression guard: a directory renamed by the session under a descriptor the cache keeps:
/// the next write through that descriptor is decided where the directory is now, whether
/// the writer renamed it itself, renamed its parent, or had another process (`mv`) do it.
#[test]
fn a_directory_renamed_by_the_session_under_a_kept_descriptor_is_resolved_again() {
    for v in variants() {
        for how in ["self", "parent", "mv"] {
            let s = Scratch::new("cache-rename", v);
            let log = s.root.join("w.jsonl");
            let logf = format!("--log={}", log.display());
            let parent = s.project.join("p");
            let dir = parent.join("d");
            std::fs::create_dir_all(&dir).unwrap();
            s.chown(&parent);
            let new = s.outside.join("moved");
            let out = sh(
                &s,
                &["--prompt=allow", &logf],
                &format!(
                    "hp-write dirfd-rename {} {} {how}",
                    dir.display(),
                    new.display()
                ),
            );
            assert_eq!(
                stdout(&out),
                "a ok\nrename ok\nb ok\n",
                "{v:?} {how}: {}",
                stderr(&out)
            );
            let b = if how == "parent" {
                new.join("d/b")
            } else {
                new.join("b")
            };
            assert!(b.exists(), "{v:?} {how}");
            // Decided where it was made: outside the project, so audited and logged; on the
            // old path it would have been an implicit write of the project, not logged.
            assert!(
                logged(&s, &log, &b, "audit"),
                "{v:?} {how}: {:?}",
                s.log_lines(&log)
            );
            // The first write was in the project (implicit, not logged).
            assert!(!logged(&s, &log, &dir.join("a"), "audit"), "{v:?} {how}");
        }
    }
}

/// The cache is lite mode's: strict mode decides the same cases on the objects it holds.
#[test]
fn strict_mode_decides_the_same_cases() {
    let v = variants().into_iter().next().unwrap();
    let s = Scratch::new("cache-strict", v);
    let inside = s.project.join("in");
    std::fs::create_dir(&inside).unwrap();
    s.chown(&inside);
    let out = sh(
        &s,
        &["--mode=strict", "--prompt=deny"],
        &format!(
            "hp-write dirfd-reuse {} {}",
            inside.display(),
            s.outside.display()
        ),
    );
    assert_eq!(stdout(&out), "a ok\nreused\nb err 13\n", "{}", stderr(&out));
}
