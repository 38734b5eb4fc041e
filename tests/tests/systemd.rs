//! The systemd user units: `systemd-analyze verify` accepts them, and the daemon serves real
//! sessions when started by socket activation (`systemd-socket-activate`, which passes the
//! sockets exactly as systemd does).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hallpass_tests::*;

fn units() -> [std::path::PathBuf; 2] {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../systemd");
    [
        root.join("hallpassd.service"),
        root.join("hallpassd.socket"),
    ]
}

#[test]
fn the_units_verify() {
    let s = Scratch::new("units", variants()[0]);
    // ExecStart is %h/.local/bin/hallpassd: install it there, as README says.
    let bin = s.home.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(hallpass_tests::bin("hallpassd"), bin.join("hallpassd")).unwrap();
    s.chown(&s.home);
    let out = run(s
        .command("systemd-analyze")
        .args(["--user", "--man=no", "verify"])
        .args(units()));
    assert!(out.status.success(), "{}", stderr(&out));
    // Warnings (an unknown key, say) do not fail verify; they fail this test.
    assert_eq!(
        stderr(&out),
        "",
        "systemd-analyze verify had something to say"
    );
    // Without the binary, verify fails: the check is real.
    std::fs::remove_file(bin.join("hallpassd")).unwrap();
    let out = run(s
        .command("systemd-analyze")
        .args(["--user", "--man=no", "verify"])
        .args(units()));
    assert!(!out.status.success());
}

#[test]
fn a_socket_activated_daemon_serves_sessions() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("activate", v);
        let dir = s.runtime.join("hallpass");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        s.chown(&s.runtime);
        let (control, api) = (dir.join("control.sock"), dir.join("api.sock"));
        // What hallpassd.socket asks of systemd, by hand.
        let mut activator = s
            .command("systemd-socket-activate")
            .args(["-E", "HOME"])
            .arg("-l")
            .arg(&control)
            .arg("-l")
            .arg(&api)
            .arg("--")
            .arg(hallpass_tests::bin("hallpassd"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(control.exists() && api.exists()) {
            assert!(
                Instant::now() < deadline,
                "systemd-socket-activate did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // A launcher that could not start a daemon of its own: it must use the activated one.
        let out = run(s
            .hallpass([
                "--prompt=deny",
                "--",
                "sh",
                "-c",
                &format!(
                    "hp-write touch {}; hp-write touch {}",
                    s.project.join("in").display(),
                    s.outside.join("out").display()
                ),
            ])
            .env("HALLPASSD", "/nonexistent/hallpassd"));
        assert_eq!(stdout(&out), "ok\nerr 13\n", "{}", stderr(&out));
        // The daemon is the process systemd-socket-activate became.
        let st = run(s
            .hallpass(["status", "--json"])
            .env("HALLPASSD", "/nonexistent"));
        let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
        assert_eq!(st["pid"].as_u64(), Some(u64::from(activator.id())), "{st}");
        assert_eq!(st["sessions"][0]["denied"], 1, "{st}");
        let _ = Command::new("kill")
            .arg(activator.id().to_string())
            .status();
        let _ = activator.wait();
        // Its sockets are the service manager's: they stay.
        assert!(control.exists() && api.exists());
    }
}
