//! Deputies: services outside the session that would do for the command what it may not do
//! itself. Strict mode decides a connection to one like a write (asked, or refused with
//! `--prompt=deny`, logged with reason `service`) and makes it on the command's own socket;
//! lite mode lets it through and logs it. Each test starts a real service outside any
//! session, as the variant's user: a socat service that runs what it is sent, a tmux server,
//! a D-Bus session bus, a stand-in for the journal's socket. A control in each shows that the
//! service really does the harm when it is reached.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hallpass_tests::service::{run_session, start, Service};
use hallpass_tests::*;

/// A socat service on `outside/svc.sock` that runs each line it is sent with `sh`.
fn shell_service(s: &Scratch) -> (Service, PathBuf) {
    let sock = s.outside.join("svc.sock");
    let listen = format!("UNIX-LISTEN:{},fork", sock.display());
    (start(s, "socat", &[&listen, "EXEC:/bin/sh"], &sock), sock)
}

/// A script that asks the service on `sock` to make `file`, then says how the connection went.
fn ask_service(sock: &Path, file: &Path) -> String {
    format!(
        "echo 'touch {f}' | socat - UNIX-CONNECT:{s}; echo rc=$?",
        f = file.display(),
        s = sock.display()
    )
}

/// The log's lines for syscall `connect`.
fn connects(s: &Scratch, log: &Path) -> Vec<serde_json::Value> {
    s.log_lines(log)
        .into_iter()
        .filter(|l| l["syscall"] == "connect")
        .collect()
}

/// Waits a moment for a service's effect: it acts after the connection, on its own time.
fn appears(f: &Path) -> bool {
    wait_until(Duration::from_secs(3), || f.exists())
}

#[test]
fn a_service_outside_the_session_is_decided_like_a_write() {
    for v in variants() {
        let s = Scratch::new("svc-shell", v);
        let (_svc, sock) = shell_service(&s);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let sockp = sock.to_string_lossy().into_owned();

        // Strict, unattended: refused with EACCES; nothing made; logged as a service.
        let f = s.home.join("deny");
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=deny", &logf],
            &ask_service(&sock, &f),
        );
        assert!(
            stdout(&out).contains("rc=1"),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("Permission denied"),
            "{}",
            stderr(&out)
        );
        assert!(!appears(&f), "{v:?}: the service made {}", f.display());
        let l = connects(&s, &log);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0]["path"], sockp.as_str());
        assert_eq!(
            (l[0]["decision"].as_str(), l[0]["reason"].as_str()),
            (Some("deny"), Some("service"))
        );
        std::fs::remove_file(&log).unwrap();

        // Strict, audit: made, on the command's socket, and logged.
        let f = s.home.join("audit");
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=allow", &logf],
            &ask_service(&sock, &f),
        );
        assert!(
            stdout(&out).contains("rc=0"),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(appears(&f), "{v:?}: the connection was not made");
        let l = connects(&s, &log);
        assert_eq!(
            (l[0]["decision"].as_str(), l[0]["reason"].as_str()),
            (Some("allow"), Some("service"))
        );
        std::fs::remove_file(&log).unwrap();

        // --allow-service: made without asking, under --prompt=deny.
        let f = s.home.join("listed");
        let allow = format!("--allow-service={sockp}");
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=deny", &allow],
            &ask_service(&sock, &f),
        );
        assert!(
            stdout(&out).contains("rc=0"),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(appears(&f));

        // Lite mode keeps connections allowed, and its log says which services were used.
        let f = s.home.join("lite");
        let out = run_session(&s, &["--prompt=deny", &logf], &ask_service(&sock, &f));
        assert!(
            stdout(&out).contains("rc=0"),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(appears(&f));
        let l = connects(&s, &log);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0]["path"], sockp.as_str());
        assert_eq!(
            (l[0]["decision"].as_str(), l[0]["reason"].as_str()),
            (Some("allow"), Some("service"))
        );
    }
}

#[test]
fn sockets_of_the_session_itself_pass_unasked_and_unlogged() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-own", v);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let (_svc, sock) = shell_service(&s);
        let name = format!("hp-own-{}", std::process::id());
        // One in the project, and an abstract one: the listener is the session's. Then the
        // service outside, which strict mode refuses in the same session.
        let f = s.home.join("outside");
        let script = format!(
            "socat UNIX-LISTEN:own.sock EXEC:'echo file' & \
             socat ABSTRACT-LISTEN:{name} EXEC:'echo abstract' & sleep 0.5; \
             socat - UNIX-CONNECT:own.sock </dev/null; socat - ABSTRACT-CONNECT:{name} </dev/null; \
             wait; {}",
            ask_service(&sock, &f)
        );
        let out = run_session(&s, &["--mode=strict", "--prompt=deny", &logf], &script);
        let so = stdout(&out);
        assert!(
            so.contains("file\nabstract\nrc=1"),
            "{v:?}: {so}{}",
            stderr(&out)
        );
        assert!(!appears(&f));
        // The one line: the service outside.
        let l = connects(&s, &log);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0]["path"], sock.to_string_lossy().as_ref());
        std::fs::remove_file(&log).unwrap();
        let _ = std::fs::remove_file(s.project.join("own.sock"));
        let out = run_session(&s, &["--prompt=deny", &logf], &script);
        let so = stdout(&out);
        assert!(
            so.contains("file\nabstract\nrc=0"),
            "lite {v:?}: {so}{}",
            stderr(&out)
        );
        let l = connects(&s, &log);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(l[0]["path"], sock.to_string_lossy().as_ref());
    }
}

#[test]
fn an_abstract_service_outside_the_session_is_decided_too() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-abstract", v);
        let name = format!("hp-abstract-{}", std::process::id());
        let listen = format!("ABSTRACT-LISTEN:{name},fork");
        let c = s
            .command("socat")
            .args([&listen, "EXEC:/bin/sh"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let _svc = Service(c);
        std::thread::sleep(Duration::from_millis(500));
        let script = |f: &Path| {
            format!(
                "echo 'touch {}' | socat - ABSTRACT-CONNECT:{name}; echo rc=$?",
                f.display()
            )
        };
        // The control: lite mode reaches it.
        let f = s.home.join("lite");
        run_session(&s, &["--prompt=deny"], &script(&f));
        assert!(appears(&f), "{v:?}: the service is not reached natively");
        // Strict mode, with Landlock scopes and as on a kernel without them (ABI 5): the
        // daemon decides the connection either way.
        for abi in ["7", "5"] {
            let f = s.home.join(format!("strict-{abi}"));
            let mut c = s.hallpass(["--mode=strict", "--prompt=deny", "--", "sh", "-c"]);
            c.arg(script(&f)).env("HALLPASS_LANDLOCK_ABI", abi);
            let out = run_with_deadline(&mut c, Duration::from_secs(60));
            assert!(
                stdout(&out).contains("rc=1"),
                "ABI {abi}: {}{}",
                stdout(&out),
                stderr(&out)
            );
            assert!(
                !appears(&f),
                "{v:?} ABI {abi}: strict mode let the command reach an abstract service"
            );
        }
    }
}

#[test]
fn tmux_send_keys_from_inside_cannot_make_a_file_in_home() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-tmux", v);
        // A tmux server of the user's, started outside the session.
        let t = s.tmux(80, 24);
        let sock = s.root.join("tmux.sock");
        let script = |f: &Path| {
            format!(
                "tmux -S {} send-keys -t T 'touch {}' Enter; echo rc=$?",
                sock.display(),
                f.display()
            )
        };
        let f = s.home.join("lite");
        let out = run_session(&s, &["--prompt=deny"], &script(&f));
        assert!(
            appears(&f),
            "{v:?}: the control failed: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let f = s.home.join("strict");
        let out = run_session(&s, &["--mode=strict", "--prompt=deny"], &script(&f));
        assert!(
            !stdout(&out).contains("rc=0"),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            !appears(&f),
            "{v:?}: tmux wrote for the command: {}",
            t.screen()
        );
    }
}

#[test]
fn a_dbus_call_is_asked_and_answered() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-dbus", v);
        let bus = s.outside.join("bus");
        let addr = format!("--address=unix:path={}", bus.display());
        let _svc = start(&s, "dbus-daemon", &["--session", "--nofork", &addr], &bus);
        let call = format!(
            "dbus-send --bus=unix:path={} --print-reply --dest=org.freedesktop.DBus \
             /org/freedesktop/DBus org.freedesktop.DBus.ListNames; echo rc=$?",
            bus.display()
        );
        let out = run_session(&s, &["--mode=strict", "--prompt=deny"], &call);
        assert!(
            !stdout(&out).contains("rc=0"),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );

        // Asked (`hallpass answer`), with the service named, and allowed once.
        let log = s.root.join("log.jsonl");
        let cmd = s.hallpass([
            "--mode=strict",
            "--prompt=answer",
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            &call,
        ]);
        let c = background(cmd);
        let q = s.wait_pending(1, &[]);
        assert_eq!(q[0]["syscall"], "connect", "{q:?}");
        assert_eq!(q[0]["path"], bus.to_string_lossy().as_ref(), "{q:?}");
        assert_eq!(q[0]["scope"], bus.to_string_lossy().as_ref(), "{q:?}");
        let service = q[0]["service"].as_str().unwrap_or_default();
        assert!(service.starts_with("dbus-daemon --session"), "{q:?}");
        assert!(service.contains(&format!("pid {}", _svc.0.id())), "{q:?}");
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "once"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = finish(c);
        let so = stdout(&out);
        assert!(
            so.contains("org.freedesktop.DBus") && so.contains("rc=0"),
            "{so}{}",
            stderr(&out)
        );
    }
}

#[test]
fn the_terminal_bar_asks_about_a_service() {
    let v = variants()[0];
    let s = Scratch::new("svc-bar", v);
    let (svc, sock) = shell_service(&s);
    let t = s.tmux(220, 30);
    t.line("hallpass --mode=strict -- env PS1='in$ ' bash --norc --noprofile");
    t.wait_for("the supervised shell", |x| x.contains("in$"));
    for (key, file, made) in [("d", "denied", false), ("o", "once", true)] {
        let f = s.home.join(file);
        t.line(&ask_service(&sock, &f));
        let screen = t.wait_for("the bar", |x| x.contains("[o] allow once"));
        std::thread::sleep(Duration::from_millis(500));
        let want = format!("wants to connect to {} (socat UNIX-LISTEN:", sock.display());
        assert!(screen.contains(&want), "{screen}");
        let pid = format!(", pid {})", svc.0.id());
        assert!(screen.contains(&pid), "{screen}");
        assert!(screen.contains(&want), "{screen}");
        t.keys(&[key]);
        t.wait_for("the connection's result", |x| {
            !x.contains("[o] allow once") && x.contains(if made { "rc=0" } else { "rc=1" })
        });
        assert_eq!(appears(&f), made, "[{key}]");
        t.line("clear");
    }
}

#[test]
fn lasting_rules_hold_services() {
    let v = variants()[0];
    let s = Scratch::new("svc-rules", v);
    let (_svc, sock) = shell_service(&s);
    let sockp = sock.to_string_lossy().into_owned();
    let out = run(s.hallpass(["rules", "allow", &sockp]));
    assert!(out.status.success(), "{}", stderr(&out));
    let f = s.home.join("ruled");
    let out = run_session(
        &s,
        &["--mode=strict", "--prompt=deny"],
        &ask_service(&sock, &f),
    );
    assert!(
        stdout(&out).contains("rc=0"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(appears(&f));
    let out = run(s.hallpass(["rules", "deny", &sockp]));
    assert!(out.status.success(), "{}", stderr(&out));
    let f = s.home.join("never");
    let out = run_session(
        &s,
        &["--mode=strict", "--prompt=allow"],
        &ask_service(&sock, &f),
    );
    assert!(
        stdout(&out).contains("rc=1"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(!appears(&f));
}

#[test]
fn the_journals_socket_passes() {
    let journal = Path::new("/run/systemd/journal/socket");
    if !am_root() {
        eprintln!("SKIP the_journals_socket_passes: needs root to stand in for the journal");
        return;
    }
    if journal.exists() {
        eprintln!("SKIP the_journals_socket_passes: a journal runs here; not touching it");
        return;
    }
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let s = Scratch::new("svc-journal", variants()[0]);
    let got = s.outside.join("got");
    let recv = format!("UNIX-RECV:{},mode=666", journal.display());
    let create = format!("CREATE:{}", got.display());
    let c = std::process::Command::new("socat")
        .args(["-u", &recv, &create])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _svc = Service(c);
    assert!(wait_until(Duration::from_secs(10), || journal.exists()));
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-journal", v);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let msg = format!("hp-journal-{v:?}").replace(' ', "");
        // And, in the same session, a service that is not on the list: refused.
        let (_other, sock) = shell_service(&s);
        let script = format!(
            "logger -u {} {msg}; echo rc=$?; {}",
            journal.display(),
            ask_service(&sock, &s.home.join("f"))
        );
        let out = run_session(&s, &["--mode=strict", "--prompt=deny", &logf], &script);
        assert!(
            stdout(&out).contains("rc=0\nrc=1"),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            wait_until(Duration::from_secs(3), || std::fs::read_to_string(&got)
                .unwrap_or_default()
                .contains(&msg)),
            "{v:?}: the journal got nothing"
        );
        // Passed by the policy's list; the other refused.
        let other = sock.to_string_lossy();
        for l in connects(&s, &log) {
            assert!(
                l["decision"] == "allow" || l["path"] == other.as_ref(),
                "{l}"
            );
        }
    }
    drop(_svc);
    let _ = std::fs::remove_file(journal);
}

/// Regression: a listener the daemon cannot see (another user's, as root's docker daemon is
/// to a user's hallpassd) was taken for "nothing listens there" and let through.
#[test]
fn a_service_of_another_user_is_decided_too() {
    let Some(v) = variants()
        .into_iter()
        .find(|v| !v.lend && matches!(v.who, Who::Unprivileged { .. }))
    else {
        eprintln!("SKIP a_service_of_another_user_is_decided_too: needs root and {TEST_USER}");
        return;
    };
    let s = Scratch::new("svc-other-user", v);
    let sock = s.outside.join("root.sock");
    let listen = format!("UNIX-LISTEN:{},fork,mode=666", sock.display());
    let c = std::process::Command::new("socat")
        .args([&listen, "EXEC:/bin/sh"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _svc = Service(c);
    assert!(wait_until(Duration::from_secs(10), || sock.exists()));
    // What root's service makes, in a directory the user may write (the control).
    let f = |n: &str| s.outside.join(n);
    run_session(&s, &["--prompt=deny"], &ask_service(&sock, &f("lite")));
    assert!(appears(&f("lite")), "the control failed");
    let out = run_session(
        &s,
        &["--mode=strict", "--prompt=deny"],
        &ask_service(&sock, &f("strict")),
    );
    assert!(
        stdout(&out).contains("rc=1"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(!appears(&f("strict")), "another user's service was reached");
}

/// A process that switched to another user and connects to a service the session may reach:
/// the service sees that user as its peer (`SO_PEERCRED`), as natively, not the root daemon
/// that makes the connection for it in strict mode. Services decide on that user.
#[test]
fn a_service_sees_the_user_the_process_switched_to() {
    if !am_root() {
        eprintln!("SKIP a_service_sees_the_user_the_process_switched_to: needs root");
        return;
    }
    let Some((uid, gid)) = uid_gid_of(TEST_USER) else {
        panic!("the test user {TEST_USER} is missing (useradd -M -s /bin/sh {TEST_USER})");
    };
    let s = Scratch::new("svc-peer-user", variants()[0]);
    let dir = s.outside.join("peer");
    std::fs::create_dir_all(&dir).unwrap();
    for d in [&s.root, &s.outside, &dir] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    let (sock, seen) = (dir.join("peer.sock"), dir.join("seen"));
    // Records the uid of each peer, one line per connection.
    let listener = format!(
        "import os, socket, struct\n\
         s = socket.socket(socket.AF_UNIX)\n\
         s.bind({sock:?}); os.chmod({sock:?}, 0o777); s.listen()\n\
         while True:\n\
         \x20   c, _ = s.accept()\n\
         \x20   pid, uid, gid = struct.unpack('3i', c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))\n\
         \x20   open({seen:?}, 'a').write(f'{{uid}}\\n'); c.close()\n",
        sock = sock.display().to_string(),
        seen = seen.display().to_string(),
    );
    let _svc = start(&s, "python3", &["-c", &listener], &sock);
    let script = format!(
        "setpriv --reuid={uid} --regid={gid} --clear-groups socat -u /dev/null UNIX-CONNECT:{}; echo rc=$?",
        sock.display()
    );
    let lines = |n: usize| {
        assert!(wait_until(Duration::from_secs(5), || {
            std::fs::read_to_string(&seen).is_ok_and(|t| t.lines().count() >= n)
        }));
        std::fs::read_to_string(&seen).unwrap()
    };
    let native = run(s.command("sh").args(["-c", &script]));
    assert_eq!(stdout(&native), "rc=0\n", "{}", stderr(&native));
    let allow = format!("--allow-service={}", sock.display());
    let out = run_session(&s, &["--mode=strict", "--prompt=deny", &allow], &script);
    assert_eq!(stdout(&out), "rc=0\n", "{}", stderr(&out));
    assert_eq!(
        lines(2),
        format!("{uid}\n{uid}\n"),
        "native, then strict mode"
    );
}

/// Regression: `sock_diag` dumps the daemon's network namespace only, while a socket file
/// reaches its listener in any. A service started in another one (a container's,
/// `unshare -n`, a systemd unit with `PrivateNetwork=`) was taken for "nothing listens there"
/// and let through.
#[test]
fn a_service_in_another_network_namespace_is_decided_too() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-netns", v);
        let sock = s.outside.join("svc.sock");
        let listen = format!("UNIX-LISTEN:{},fork", sock.display());
        // Root makes a network namespace; the user, one in a user namespace of its own.
        let unshare = match v.who {
            Who::Me if am_root() => "-n",
            _ => "-rn",
        };
        let probe = s
            .command("unshare")
            .args([unshare, "true"])
            .status()
            .unwrap();
        if !probe.success() {
            eprintln!("SKIP {v:?}: unshare {unshare} fails here");
            continue;
        }
        let _svc = start(
            &s,
            "unshare",
            &[unshare, "socat", &listen, "EXEC:/bin/sh"],
            &sock,
        );
        let f = |n: &str| s.home.join(n);
        run_session(&s, &["--prompt=deny"], &ask_service(&sock, &f("lite")));
        assert!(appears(&f("lite")), "{v:?}: the control failed");
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=deny"],
            &ask_service(&sock, &f("strict")),
        );
        assert!(
            stdout(&out).contains("rc=1"),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            !appears(&f("strict")),
            "{v:?}: a service of another network namespace was reached"
        );
    }
}

/// Regression: a root daemon connected for a process that switched to another user with its
/// own effective user and group, root: the listener saw root as its peer (`SO_PEERCRED`),
/// and a service that trusts root (nscd's SHUTDOWN, the D-Bus system bus) did for the user
/// what only root may. Blocking and non-blocking connects (the first is made on a thread of
/// its own, which failed with EPERM when the process had other credentials).
#[test]
fn a_connection_shows_the_process_user_to_the_service() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    if !am_root() {
        eprintln!("SKIP a_connection_shows_the_process_user_to_the_service: needs root");
        return;
    }
    let Some((uid, gid)) = uid_gid_of(TEST_USER) else {
        eprintln!("SKIP a_connection_shows_the_process_user_to_the_service: needs {TEST_USER}");
        return;
    };
    let v = variants()
        .into_iter()
        .find(|v| !v.lend && v.who == Who::Me)
        .unwrap();
    let s = Scratch::new("svc-peercred", v);
    let sock = s.outside.join("peer.sock");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    // This test's thread is the service, outside any session: it notes each peer's ids,
    // until this test itself connects, when the sessions are over.
    let me = std::process::id() as i32;
    let peers = std::thread::spawn(move || {
        let mut seen = Vec::new();
        loop {
            let (mut c, _) = l.accept().unwrap();
            let mut cred = libc::ucred {
                pid: 0,
                uid: 0,
                gid: 0,
            };
            let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
            // SAFETY: a ucred and its length.
            let r = unsafe {
                libc::getsockopt(
                    c.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_PEERCRED,
                    (&mut cred as *mut libc::ucred).cast(),
                    &mut len,
                )
            };
            assert_eq!(r, 0);
            if cred.pid == me {
                return seen;
            }
            let _ = c.read(&mut [0u8; 16]);
            seen.push((cred.uid, cred.gid));
        }
    });
    let sockp = sock.display().to_string();
    let allow = format!("--allow-service={sockp}");
    let script = format!(
        "socat -u /dev/null UNIX-CONNECT:{sockp}; socat -u /dev/null UNIX-CONNECT:{sockp},nonblock; \
         setpriv --reuid=0 --regid=0 --clear-groups -- true"
    );
    let mut c = s.hallpass(["--mode=strict", "--prompt=deny", &allow, "--"]);
    c.args([
        "setpriv",
        &format!("--reuid={uid}"),
        &format!("--regid={gid}"),
        "--clear-groups",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let out = run_with_deadline(&mut c, Duration::from_secs(60));
    // And root's own, unchanged.
    let mut c = s.hallpass(["--mode=strict", "--prompt=deny", &allow, "--"]);
    c.args(["socat", "-u", "/dev/null", &format!("UNIX-CONNECT:{sockp}")]);
    let out2 = run_with_deadline(&mut c, Duration::from_secs(60));
    drop(std::os::unix::net::UnixStream::connect(&sock).unwrap());
    let seen = peers.join().unwrap();
    assert_eq!(
        seen,
        vec![(uid, gid), (uid, gid), (0, 0)],
        "{}{}{}",
        stderr(&out),
        stdout(&out2),
        stderr(&out2)
    );
}
