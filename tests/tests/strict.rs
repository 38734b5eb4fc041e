//! Strict mode with real programs and a real person's answers: git, tar, make with a C
//! compiler, `cp -a` and rsync leave exactly the tree they leave without hallpass; a write
//! outside is asked, and what the answer allows is performed by the daemon (and what it
//! denies is not); FIFOs, reopening through `/proc/self/fd` and `/dev/fd`, and the umask
//! behave as natively. As root and as an unprivileged user, with and without the Yama lending path.

use std::path::Path;

use hallpass_tests::*;

/// A description of the tree under `dir`: type, mode, size and link target of every entry,
/// sorted; what two runs of the same script must agree on.
fn tree(s: &Scratch, dir: &Path) -> String {
    let out = run(s
        .command("find")
        .arg(".")
        .args(["-printf", "%y %m %s %p -> %l\n"])
        .current_dir(dir));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines: Vec<&str> = text
        .lines()
        // Git's index and logs hold times; the objects are the same (fixed dates).
        .filter(|l| !l.contains("./.git/index") && !l.contains("./.git/logs"))
        .collect::<Vec<_>>();
    lines.sort();
    lines.join("\n")
}

const PROGRAMS: &str = r#"set -e
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
umask 022
mkdir -p src/a/b
for i in 1 2 3 4 5 6 7 8; do echo "file $i" > src/a/b/f$i; done
ln -s b/f1 src/a/link
chmod 750 src/a/b; chmod 600 src/a/b/f2
git init -q repo
cd repo
git config user.name t; git config user.email t@example.com
cp -a ../src/a .
git add -A; git commit -qm first
git checkout -qb topic; echo more >> a/b/f3; git commit -qam second
git checkout -q -; git merge -q --no-edit topic; git gc -q --prune=now
cd ..
tar cf t.tar src; mkdir untar; tar xf t.tar -C untar; rm t.tar
cp -a src copy
rsync -a src/ synced/
cat > Makefile <<'EOF'
hello: hello.c
	cc -o hello hello.c
EOF
printf '#include <stdio.h>\nint main(void){puts("built");return 0;}\n' > hello.c
make -s
./hello
mkfifo fifo; (cat fifo > from-fifo &) ; echo via-fifo > fifo; wait
umask 027; mkdir masked; touch masked/f; mkfifo masked/p
exec 3> reopened; echo via-proc > /proc/self/fd/3; echo via-dev-fd >> /dev/fd/3; exec 3>&-
echo done
"#;

#[test]
fn real_programs_leave_the_same_tree_as_without_hallpass() {
    for v in variants() {
        let s = Scratch::new("strict-programs", v);
        let native = s.project.join("native");
        let strict = s.project.join("strict");
        std::fs::create_dir_all(&native).unwrap();
        std::fs::create_dir_all(&strict).unwrap();
        s.chown(&s.project);
        let out = run(s.command("sh").args(["-c", PROGRAMS]).current_dir(&native));
        assert!(out.status.success(), "natively: {}", stderr(&out));
        let want = stdout(&out);
        let log = s.root.join("w.jsonl");
        let out = run(s
            .hallpass([
                "--mode=strict",
                "--prompt=deny",
                &format!("--log={}", log.display()),
                "--",
                "sh",
                "-c",
                PROGRAMS,
            ])
            .current_dir(&strict));
        assert!(
            out.status.success(),
            "{v:?}: {:?}: {}{}",
            out.status,
            stdout(&out),
            stderr(&out)
        );
        assert_eq!(stdout(&out), want, "{v:?}");
        assert_eq!(stdout(&out), "built\ndone\n");
        assert_eq!(
            std::fs::read_to_string(strict.join("reopened")).unwrap(),
            "via-proc\nvia-dev-fd\n"
        );
        assert_eq!(tree(&s, &strict), tree(&s, &native), "{v:?}");
        assert_eq!(
            std::fs::read_to_string(strict.join("from-fifo")).unwrap(),
            "via-fifo\n"
        );
        // Nothing outside the project was needed, so nothing was logged as denied.
        let denied: Vec<_> = s
            .log_lines(&log)
            .into_iter()
            .filter(|l| l["decision"] == "deny")
            .collect();
        assert!(denied.is_empty(), "{v:?}: {denied:#?}");
    }
}

#[test]
fn what_a_person_allows_is_performed_and_what_they_deny_is_not() {
    for v in variants() {
        let s = Scratch::new("strict-ask", v);
        let log = s.root.join("w.jsonl");
        let allowed = s.outside.join("allowed");
        let denied = s.outside.join("denied");
        let made = s.outside.join("made");
        let script = format!(
            "umask 077; echo yes > {a} && echo wrote-a; echo no > {d} || echo refused-d; \
             mkdir {m} && echo made-m",
            a = allowed.display(),
            d = denied.display(),
            m = made.display()
        );
        let child = background(s.hallpass([
            "--mode=strict",
            "--prompt=answer",
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &script,
        ]));
        for (path, answer) in [(&allowed, "once"), (&denied, "deny"), (&made, "once")] {
            let q = s.wait_pending(1, &[]);
            assert_eq!(q[0]["path"], path.to_str().unwrap(), "{v:?}: {q:?}");
            let id = q[0]["id"].to_string();
            let out = run(s.hallpass(["answer", "--id", &id, answer]));
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let out = finish(child);
        assert_eq!(
            stdout(&out),
            "wrote-a\nrefused-d\nmade-m\n",
            "{v:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "yes\n");
        assert!(!denied.exists());
        // Performed by the daemon with the target's umask, owned by the target's user.
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::metadata(&allowed).unwrap();
        assert_eq!(md.mode() & 0o777, 0o600, "{v:?}");
        assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o777, 0o700);
        if let Who::Unprivileged { uid, gid } = v.who {
            assert_eq!((md.uid(), md.gid()), (uid, gid));
        }
        let lines = s.log_lines(&log);
        let reasons: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| {
                (
                    l["decision"].as_str().unwrap(),
                    l["reason"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            reasons,
            [("allow", "once"), ("deny", "denied"), ("allow", "once")],
            "{v:?}"
        );
    }
}

#[test]
fn the_status_names_the_mode() {
    let s = Scratch::new("strict-status", variants()[0]);
    let child = background(s.hallpass([
        "--mode=strict",
        "--prompt=answer",
        "--",
        "sh",
        "-c",
        &format!("echo x > {}/f", s.outside.display()),
    ]));
    s.wait_pending(1, &[]);
    let st = s.status();
    assert_eq!(st["sessions"][0]["mode"], "strict", "{st}");
    // This kernel has Landlock ABI 2: the command runs in the write domain.
    assert_eq!(st["sessions"][0]["landlock"], true, "{st}");
    let q = s.wait_pending(1, &[]);
    run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
    let out = finish(child);
    assert!(!out.status.success());
}

/// Where Landlock is too old for the write domain (forced here with
/// `HALLPASS_LANDLOCK_ABI=1`), strict mode performs every write, says so once, and the
/// status shows it.
#[test]
fn strict_mode_without_landlock_says_so_and_performs_everything() {
    let s = Scratch::new("strict-noll", variants()[0]);
    let mut c = s.hallpass([
        "--mode=strict",
        "--prompt=answer",
        "--",
        "sh",
        "-c",
        &format!("echo in > inside; echo x > {}/f", s.outside.display()),
    ]);
    c.env("HALLPASS_LANDLOCK_ABI", "1");
    let child = background(c);
    let q = s.wait_pending(1, &[]);
    let st = s.status();
    assert_eq!(st["sessions"][0]["landlock"], false, "{st}");
    let text = stdout(&run(s.hallpass(["status"])));
    assert!(text.contains("strict*"), "{text}");
    run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
    let out = finish(child);
    let err = stderr(&out);
    assert_eq!(err.matches("without Landlock ABI 2").count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(s.project.join("inside")).unwrap(),
        "in\n"
    );
}

#[test]
fn a_question_survives_a_daemon_restart_and_its_answer_is_performed() {
    let s = Scratch::new("strict-restart", variants()[0]);
    let target = s.outside.join("after-restart");
    let child = background(s.hallpass([
        "--mode=strict",
        "--prompt=answer",
        "--",
        "sh",
        "-c",
        &format!("echo kept > {} && echo wrote", target.display()),
    ]));
    let first = s.wait_pending(1, &[]).remove(0);
    s.kill_daemon();
    // The new daemon prepares the write again from the journal and asks again.
    let again = s.wait_asked_again(&first);
    assert_eq!(again["path"], target.to_str().unwrap());
    let out = run(s.hallpass(["answer", "--id", &again["id"].to_string(), "once"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = finish(child);
    assert_eq!(stdout(&out), "wrote\n", "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept\n");
}

/// A process that switched to another user or dropped capabilities gets what the kernel
/// gives it: in the project the kernel makes its writes with its own credentials; what the
/// daemon performs for it (a write outside, allowed by `--prompt=allow`) a root daemon
/// performs with the process's credentials, so it can do no more than natively.
#[test]
fn a_root_daemon_writes_for_a_process_with_fewer_rights_with_those_rights() {
    if !am_root() {
        eprintln!("SKIP: needs root (the daemon runs as the user who starts hallpass)");
        return;
    }
    let s = Scratch::new("strict-creds", variants()[0]);
    let (closed, users) = (s.outside.join("closed"), s.outside.join("users"));
    for d in [&closed, &users] {
        std::fs::create_dir_all(d).unwrap();
    }
    for d in [&s.project, &s.outside] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let Some((uid, gid)) = uid_gid_of(TEST_USER) else {
        panic!("the test user {TEST_USER} is missing (useradd -M -s /bin/sh {TEST_USER})");
    };
    std::os::unix::fs::chown(&users, Some(uid), Some(gid)).unwrap();
    // Natively: the 0777 directories are writable by anyone; root's 0755 one not by hptest;
    // hptest's not by root without capabilities; without CAP_MKNOD no device.
    let user = "setpriv --reuid=hptest --regid=hptest --clear-groups";
    let nocaps = "setpriv --bounding-set=-all --inh-caps=-all";
    let script = format!(
        "{user} sh -c 'echo x > as-user' || echo refused-user; \
         {nocaps} sh -c 'mknod dev c 1 3' || echo refused-caps; \
         echo x > as-root && echo root-ok; \
         {user} sh -c 'echo x > {out}/as-user' || echo refused-outside; \
         {user} sh -c 'echo x > {closed}/f' 2>/dev/null || echo refused-closed; \
         {nocaps} sh -c 'echo x > {users}/f' 2>/dev/null || echo refused-nocaps",
        out = s.outside.display(),
        closed = closed.display(),
        users = users.display(),
    );
    let expected = "refused-caps\nroot-ok\nrefused-closed\nrefused-nocaps\n";
    let native = run(s.command("sh").args(["-c", &script]));
    assert_eq!(stdout(&native), expected, "{}", stderr(&native));
    for f in [
        s.project.join("as-user"),
        s.project.join("as-root"),
        s.outside.join("as-user"),
    ] {
        std::fs::remove_file(f).unwrap();
    }
    let out = run(s.hallpass(["--mode=strict", "--prompt=allow", "--", "sh", "-c", &script]));
    assert_eq!(stdout(&out), expected, "{}", stderr(&out));
    // Made with the process's own user: by the kernel in the project, by the daemon outside.
    for f in [s.project.join("as-user"), s.outside.join("as-user")] {
        let meta = std::fs::metadata(&f).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), uid, "{f:?}");
    }
    assert!(!s.project.join("dev").exists());
    assert!(!closed.join("f").exists());
    assert!(!users.join("f").exists());
}

/// What the daemon performs for a process with fewer rights reaches no further than the
/// process: it keeps the right to trace while it wears the process's credentials, but a
/// process that dropped its capabilities cannot follow `/proc/PID/fd/N` of a root process
/// of its session that kept them (the kernel refuses it the trace), so neither may the
/// daemon for it: not to a pipe another process reads (nothing on disk, which no policy
/// stops), nor to a file outside that the other process holds and removed.
#[test]
fn a_process_with_fewer_rights_reaches_no_other_process_s_descriptors() {
    if !am_root() {
        eprintln!("SKIP: needs root (the daemon runs as the user who starts hallpass)");
        return;
    }
    let s = Scratch::new("strict-creds-reach", variants()[0]);
    let nocaps = "setpriv --bounding-set=-all --inh-caps=-all";
    let victim = s.outside.join("victim");
    let holders = [
        (
            "--prompt=deny",
            "sleep 2 | cat > got & pid=$!".to_string(),
            0,
        ),
        (
            "--prompt=allow",
            format!(
                "sh -c 'exec 3<>{v}; rm {v}; sleep 2; cat <&3' > got & pid=$!",
                v = victim.display()
            ),
            3,
        ),
    ];
    for (prompt, holder, fd) in holders {
        let script = format!(
            "{holder}; sleep 0.5; \
             {nocaps} sh -c \"echo injected > /proc/$pid/fd/{fd}\" 2>/dev/null || echo refused; \
             wait"
        );
        let _ = std::fs::remove_file(s.project.join("got"));
        let native = run(s.command("sh").args(["-c", &script]));
        assert_eq!(stdout(&native), "refused\n", "{}", stderr(&native));
        assert_eq!(std::fs::read_to_string(s.project.join("got")).unwrap(), "");
        std::fs::remove_file(s.project.join("got")).unwrap();
        let out = run(s.hallpass(["--mode=strict", prompt, "--", "sh", "-c", &script]));
        assert_eq!(stdout(&out), "refused\n", "{prompt}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(s.project.join("got")).unwrap(),
            "",
            "{prompt}"
        );
    }
}

/// A process with other credentials than a root daemon's opens a FIFO outside the project,
/// which the daemon performs on a thread of its own (the open waits for the other end):
/// as natively, it gets the FIFO (that thread takes on its credentials too).
#[test]
fn a_process_with_fewer_rights_opens_a_fifo_outside() {
    if !am_root() {
        eprintln!("SKIP: needs root (the daemon runs as the user who starts hallpass)");
        return;
    }
    let s = Scratch::new("strict-creds-fifo", variants()[0]);
    std::fs::set_permissions(
        &s.outside,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let fifo = s.outside.join("fifo");
    let user = "setpriv --reuid=hptest --regid=hptest --clear-groups";
    let script = format!(
        "mkfifo -m 666 {f}; cat {f} > got & {user} sh -c 'echo through > {f}' && echo wrote; wait",
        f = fifo.display()
    );
    let native = run(s.command("sh").args(["-c", &script]));
    assert_eq!(stdout(&native), "wrote\n", "{}", stderr(&native));
    assert_eq!(
        std::fs::read_to_string(s.project.join("got")).unwrap(),
        "through\n"
    );
    std::fs::remove_file(&fifo).unwrap();
    std::fs::remove_file(s.project.join("got")).unwrap();
    let out = run(s.hallpass(["--mode=strict", "--prompt=allow", "--", "sh", "-c", &script]));
    assert_eq!(stdout(&out), "wrote\n", "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(s.project.join("got")).unwrap(),
        "through\n"
    );
}

#[test]
fn dev_tty_is_the_command_s_terminal_even_with_o_nofollow() {
    let s = Scratch::new("strict-tty", variants()[0]);
    // script(1) gives the command a controlling terminal; its output is what was written.
    let inner = format!(
        "{} --mode=strict --prompt=deny -- {} tty-nofollow",
        bin("hallpass").display(),
        bin("hp-race").display()
    );
    let (text, err) = under_script(&s, &inner);
    assert!(
        text.contains("tty-ok") && text.contains("open ok"),
        "{text}{err}"
    );
    // With none of its descriptors on the terminal (a password prompt's case).
    let inner = format!(
        "{} --mode=strict --prompt=deny -- sh -c 'exec </dev/null >/dev/null 2>&1; echo via-dev-tty > /dev/tty'; echo rc=$?",
        bin("hallpass").display()
    );
    let (text, err) = under_script(&s, &inner);
    assert!(
        text.contains("via-dev-tty") && text.contains("rc=0"),
        "{text}{err}"
    );
}

/// What `sh -c COMMAND` printed (stdout, stderr), run by script(1) on a terminal of its own.
fn under_script(s: &Scratch, command: &str) -> (String, String) {
    let out = run(s.command("script").args(["-qec", command, "/dev/null"]));
    (stdout(&out), stderr(&out))
}

#[test]
fn fifo_opens_left_waiting_by_killed_processes_do_not_pile_up() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        fifo_waits(v);
    }
}

fn fifo_waits(v: Variant) {
    let s = Scratch::new("strict-fifo", v);
    assert!(
        run(s.hallpass(["--mode=strict", "--prompt=deny", "--", "true"]))
            .status
            .success()
    );
    let daemon = s.daemon_pid();
    let threads = || {
        std::fs::read_dir(format!("/proc/{daemon}/task"))
            .unwrap()
            .count()
    };
    let before = threads();
    // Each writer waits for a reader that never comes, and is killed.
    let out = run(s.hallpass([
        "--mode=strict",
        "--prompt=deny",
        "--",
        "sh",
        "-c",
        // Write-only for its owner: nobody may open the other end to release a waiter.
        "mkfifo -m 0200 p; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do \
         sh -c 'echo x > p' & w=$!; sleep 0.05; kill -9 $w; done; wait; echo done",
    ]));
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    assert!(
        wait_until(std::time::Duration::from_secs(5), || threads()
            <= before + 1),
        "{v:?}: daemon threads: {} before, {} after",
        before,
        threads()
    );
    // And a FIFO with a reader still works.
    let out = run(s.hallpass([
        "--mode=strict",
        "--prompt=deny",
        "--",
        "sh",
        "-c",
        "mkfifo q; cat q & echo through-fifo > q; wait",
    ]));
    assert_eq!(stdout(&out), "through-fifo\n", "{v:?}: {}", stderr(&out));
}

/// Sets a sysctl for the life of the guard.
struct Sysctl(&'static str, String);

impl Sysctl {
    fn set(path: &'static str, value: &str) -> Sysctl {
        let old = std::fs::read_to_string(path).unwrap();
        std::fs::write(path, value).unwrap();
        Sysctl(path, old)
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, &self.1);
    }
}

#[test]
fn protected_symlinks_are_not_followed_in_strict_mode_either() {
    if !am_root() || variants().len() < 3 {
        eprintln!("SKIP: needs root and the unprivileged user (another user's symlink)");
        return;
    }
    let Who::Unprivileged { uid, gid } = variants()[2].who else {
        unreachable!()
    };
    let s = Scratch::new("strict-protsym", variants()[0]);
    let _on = Sysctl::set("/proc/sys/fs/protected_symlinks", "1");
    // A sticky, world-writable directory with a symlink another user planted in it.
    let sticky = s.root.join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(
        &sticky,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let link = sticky.join("link");
    std::os::unix::fs::symlink(s.project.join("target"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(uid), Some(gid)).unwrap();
    let script = format!("echo x > {} && echo wrote || echo refused", link.display());
    let native = run(s.command("sh").args(["-c", &script]));
    assert_eq!(stdout(&native), "refused\n");
    let out = run(s.hallpass(["--mode=strict", "--prompt=deny", "--", "sh", "-c", &script]));
    assert_eq!(stdout(&out), "refused\n", "{}", stderr(&out));
    assert!(!s.project.join("target").exists());
}

/// A lasting "never" rule made while a strict session runs, inside its Landlock domain: the
/// kernel no longer makes the writes there (the domain, made at the start, would let a race
/// reach the denied path); they are decided and refused.
#[test]
fn a_never_rule_made_during_the_session_holds_inside_the_domain() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("strict-never", v);
        std::fs::create_dir_all(s.project.join("sub")).unwrap();
        s.chown(&s.project);
        let script = "echo a > sub/f1 && touch go; \
                      while [ ! -e ready ]; do sleep 0.05; done; \
                      echo b > sub/f2 && echo wrote || echo refused";
        let child =
            background(s.hallpass(["--mode=strict", "--prompt=deny", "--", "sh", "-c", script]));
        assert!(
            wait_until(std::time::Duration::from_secs(10), || s
                .project
                .join("go")
                .exists()),
            "{v:?}: the session did not start"
        );
        let sub = s.project.join("sub");
        let out = run(s.hallpass(["rules", "deny", sub.to_str().unwrap()]));
        assert!(out.status.success(), "{}", stderr(&out));
        std::fs::write(s.project.join("ready"), "").unwrap();
        let out = finish(child);
        assert_eq!(stdout(&out), "refused\n", "{v:?}: {}", stderr(&out));
        assert!(s.project.join("sub/f1").exists());
        assert!(!s.project.join("sub/f2").exists());
    }
}
