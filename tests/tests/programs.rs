//! Real programs under the real filter: git, tar, a shell, Python and Node.js, as root and as an unprivileged
//! user, with and without the Yama lending path.

use hallpass_tests::*;

#[test]
fn git_and_tar_work_in_the_project_and_outside_writes_are_denied() {
    for v in variants() {
        let s = Scratch::new("programs", v);
        // A tarball made natively, extracted under supervision.
        let src = s.root.join("src");
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        for i in 0..50 {
            std::fs::write(src.join(format!("a/b/f{i}")), format!("{i}")).unwrap();
        }
        let tarball = s.root.join("t.tar");
        assert!(std::process::Command::new("tar")
            .arg("cf")
            .arg(&tarball)
            .arg("-C")
            .arg(&src)
            .arg("a")
            .status()
            .unwrap()
            .success());
        s.chown(&s.root);
        let log = s.root.join("w.jsonl");
        let script = format!(
            "set -e; git init -q . && echo hello > README && git add README && \
             git -c user.name=t -c user.email=t@example.com commit -qm first && \
             tar xf {} && echo extracted; \
             if touch ~/outside; then echo touched; else echo denied; fi",
            tarball.display()
        );
        let out = run(s.session_command("deny", &log, &script));
        assert_eq!(
            stdout(&out),
            "extracted\ndenied\n",
            "{v:?}: {}",
            stderr(&out)
        );
        assert!(out.status.success());
        let git_log = run(s.command("git").args(["log", "--oneline"]));
        assert!(stdout(&git_log).contains("first"), "{v:?}");
        assert_eq!(
            std::fs::read_to_string(s.project.join("a/b/f49")).unwrap(),
            "49"
        );
        assert!(!s.home.join("outside").exists());
        let lines = s.log_lines(&log);
        let outside = s.home.join("outside");
        assert!(
            lines.iter().any(|l| l["path"] == outside.to_str().unwrap()
                && l["decision"] == "deny"
                && l["exe"].as_str().unwrap().ends_with("touch")),
            "{v:?}: {lines:#?}"
        );
    }
}

#[test]
fn the_private_tmpdir_is_made_and_removed() {
    let s = Scratch::new(
        "tmpdir",
        Variant {
            who: Who::Me,
            lend: false,
        },
    );
    let out = run(s.hallpass([
        "--prompt=deny",
        "--",
        "sh",
        "-c",
        "echo $TMPDIR; echo x > $TMPDIR/f && cat $TMPDIR/f",
    ]));
    let text = stdout(&out);
    let mut lines = text.lines();
    let tmp = std::path::PathBuf::from(lines.next().unwrap());
    assert!(
        tmp.starts_with("/tmp")
            && tmp
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("hallpass-"),
        "{text}"
    );
    assert_eq!(lines.next(), Some("x"));
    assert!(
        wait_until(std::time::Duration::from_secs(5), || !tmp.exists()),
        "{} was not removed",
        tmp.display()
    );
}

/// Python and Node.js do their usual work under the allowlist filter, in both modes: threads,
/// subprocesses, a process pool, temporary files, SQLite, sockets, a worker thread. A syscall
/// or ioctl the filter wrongly refuses shows up here as a failure.
#[test]
fn python_and_node_run_under_both_modes() {
    let python = r#"
import json, multiprocessing, os, socket, sqlite3, subprocess, tempfile, threading
assert subprocess.run(["true"]).returncode == 0
with tempfile.NamedTemporaryFile() as f:
    f.write(b"x")
db = sqlite3.connect("py.db")
db.execute("create table if not exists t (x)")
db.execute("insert into t values (1)")
db.commit()
a, b = socket.socketpair()
a.send(b"hi")
assert b.recv(2) == b"hi"
t = threading.Thread(target=lambda: None)
t.start()
t.join()
with multiprocessing.Pool(2) as p:
    assert p.map(abs, [1, -2]) == [1, 2]
os.isatty(0)
print("python ok")
"#;
    let node = r#"
const fs = require('fs');
const { execSync } = require('child_process');
const { Worker } = require('worker_threads');
fs.writeFileSync('node.txt', 'x');
fs.mkdirSync('nd', { recursive: true });
fs.renameSync('node.txt', 'nd/node.txt');
execSync('true');
require('os').networkInterfaces();
require('crypto').randomBytes(8);
new Worker('require("worker_threads").parentPort.postMessage(1)', { eval: true })
  .on('message', () => console.log('node ok'));
"#;
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("py-node", v);
        std::fs::write(s.project.join("t.py"), python).unwrap();
        std::fs::write(s.project.join("t.js"), node).unwrap();
        s.chown(&s.project);
        for mode in ["--mode=lite", "--mode=strict"] {
            // A process pool's semaphores are files in /dev/shm, outside the project.
            let out = run(s.hallpass([
                mode,
                "--prompt=deny",
                "--allow-path=/dev/shm",
                "--",
                "sh",
                "-c",
                "python3 t.py && node t.js",
            ]));
            assert_eq!(
                stdout(&out),
                "python ok\nnode ok\n",
                "{v:?} {mode}: {}",
                stderr(&out)
            );
            assert!(s.project.join("nd/node.txt").exists());
            std::fs::remove_dir_all(s.project.join("nd")).unwrap();
        }
    }
}
