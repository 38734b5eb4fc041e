//! `--prompt=desktop` against a real desktop: an X server (Xvfb), a D-Bus session bus
//! (dbus-daemon) and a notification server with actions (dunst). dunst's action menu runs the
//! program its config names as `dmenu`; a script there is how the test "clicks".

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hallpass_tests::*;

/// A desktop for one test, run as the scratch's user; everything is stopped on drop.
struct Desktop {
    display: String,
    bus: String,
    dir: PathBuf,
    children: Vec<Child>,
    bus_pid: Option<String>,
}

impl Desktop {
    fn start(s: &Scratch, with_server: bool) -> Desktop {
        let dir = s.root.join("desktop");
        std::fs::create_dir_all(dir.join("cfg/dunst")).unwrap();
        // Xvfb picks a free display itself and says which once it is ready (-displayfd), so
        // tests running at once never share one.
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "800x600x24",
                "-ac",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (apt-get install xvfb)");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(xvfb.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let n: u32 = line.trim().parse().expect("Xvfb did not say its display");
        let display = format!(":{n}");
        let bus = format!("unix:path={}", dir.join("bus").display());
        // The menu "click": pick the "Allow once" line from the actions dunst offers.
        let pick = dir.join("pick.sh");
        std::fs::write(
            &pick,
            format!(
                "#!/bin/sh\ntee {}/menu.txt | grep -m1 'Allow once'\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&pick, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::write(
            dir.join("cfg/dunst/dunstrc"),
            format!("[global]\n    dmenu = {}\n", pick.display()),
        )
        .unwrap();
        s.chown(&dir);
        let mut d = Desktop {
            display,
            bus,
            dir: dir.clone(),
            children: vec![xvfb],
            bus_pid: None,
        };
        // A session bus that activates nothing: a notification server runs only if the test
        // starts one (dunst's package would have the standard bus start it on demand).
        std::fs::create_dir_all(dir.join("services")).unwrap();
        let conf = dir.join("bus.conf");
        std::fs::write(
            &conf,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><type>session</type><listen>{}</listen><servicedir>{}</servicedir>\
                 <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
                 <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n",
                d.bus,
                dir.join("services").display()
            ),
        )
        .unwrap();
        s.chown(&dir);
        let out = run(d
            .env(s.command("dbus-daemon"))
            .arg(format!("--config-file={}", conf.display()))
            .args(["--fork", "--print-pid=1"]));
        assert!(out.status.success(), "dbus-daemon: {}", stderr(&out));
        d.bus_pid = Some(stdout(&out).trim().to_string());
        if with_server {
            d.start_server(s);
        }
        d
    }

    /// Starts dunst on this desktop's bus, and waits until it answers there.
    fn start_server(&mut self, s: &Scratch) {
        let d = self;
        let dunst = d
            .env(s.command("dunst"))
            .env("XDG_CONFIG_HOME", d.dir.join("cfg"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dunst (apt-get install dunst)");
        d.children.push(dunst);
        // Ready when it answers on the bus.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !run(d.env(s.command("dunstctl")).arg("count"))
            .status
            .success()
        {
            assert!(Instant::now() < deadline, "dunst did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `cmd` with this desktop's display and bus.
    fn env(&self, mut cmd: Command) -> Command {
        cmd.env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus);
        cmd
    }

    /// Notifications on screen.
    fn displayed(&self, s: &Scratch) -> usize {
        let out = run(self
            .env(s.command("dunstctl"))
            .arg("count")
            .arg("displayed"));
        stdout(&out).trim().parse().unwrap_or(usize::MAX)
    }

    fn wait_displayed(&self, s: &Scratch, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.displayed(s) != n {
            assert!(
                Instant::now() < deadline,
                "{} notifications shown, not {n}",
                self.displayed(s)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(p) = &self.bus_pid {
            let _ = Command::new("kill").arg(p).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn session(s: &Scratch, d: &Desktop, log: &Path, script: &str) -> Child {
    background(d.env(s.session_command("desktop", log, script)))
}

fn pending(s: &Scratch) -> Vec<serde_json::Value> {
    s.try_pending(&[]).unwrap_or_default()
}

#[test]
fn clicking_allow_once_releases_the_write_and_an_answer_elsewhere_closes_it() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("desktop", v);
        let d = Desktop::start(&s, true);
        let log = s.root.join("log.jsonl");
        let (a, b) = (s.outside.join("a"), s.outside.join("b"));
        let c = session(
            &s,
            &d,
            &log,
            &format!(
                "hp-write touch {}; hp-write touch {}",
                a.display(),
                b.display()
            ),
        );
        d.wait_displayed(&s, 1);
        // The action menu, through pick.sh: "Allow once".
        let out = run(d.env(s.command("dunstctl")).arg("context"));
        assert!(out.status.success(), "{}", stderr(&out));
        // The first write goes through; the second asks with a new notification.
        let deadline = Instant::now() + Duration::from_secs(30);
        let q = loop {
            let q = pending(&s);
            if q.len() == 1 && q[0]["path"] == b.to_string_lossy().as_ref() {
                break q;
            }
            assert!(
                Instant::now() < deadline,
                "the second question never came: {q:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(a.exists());
        let menu = std::fs::read_to_string(d.dir.join("menu.txt")).unwrap_or_default();
        for label in [
            "Allow once",
            "Allow for 5m0s",
            "Always allow",
            "Deny",
            "Never allow",
        ] {
            assert!(
                menu.contains(label),
                "{label} missing from the actions: {menu}"
            );
        }
        d.wait_displayed(&s, 1);
        // Answered in a terminal: its notification goes away.
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        d.wait_displayed(&s, 0);
        let out = finish(c);
        assert_eq!(stdout(&out), "ok\nerr 13\n", "{}", stderr(&out));
        let reasons: Vec<_> = s
            .log_lines(&log)
            .iter()
            .map(|l| l["reason"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(reasons, ["once", "denied"]);
    }
}

#[test]
fn without_a_notification_server_it_says_so_and_the_question_waits() {
    let s = Scratch::new("desktop-none", variants()[0]);
    let d = Desktop::start(&s, false);
    let log = s.root.join("log.jsonl");
    let f = s.outside.join("f");
    let c = session(&s, &d, &log, &format!("hp-write touch {}", f.display()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let q = loop {
        let q = pending(&s);
        if q.len() == 1 {
            break q;
        }
        assert!(Instant::now() < deadline, "no question");
        std::thread::sleep(Duration::from_millis(50));
    };
    // Still answerable from a terminal.
    let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "once"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = finish(c);
    assert_eq!(stdout(&out), "ok\n");
    let err = stderr(&out);
    assert!(
        err.contains("hallpass: cannot show a desktop notification (")
            && err.contains("answer it with `hallpass answer` in a terminal"),
        "{err}"
    );
}

fn rules_file(s: &Scratch) -> PathBuf {
    s.home.join(".config/hallpass/rules")
}

/// `hallpass --prompt=desktop MODE... --log=LOG -- sh -c SCRIPT` on this desktop; strict mode
/// gets the bus as an allowed service, as the README suggests for a command that needs it.
fn desktop_session(s: &Scratch, d: &Desktop, mode: &str, log: &Path, script: &str) -> Command {
    let mut args = vec![
        "--prompt=desktop".to_string(),
        mode.to_string(),
        format!("--log={}", log.display()),
    ];
    if mode == "--mode=strict" {
        args.push(format!("--allow-service={}", d.dir.join("bus").display()));
    }
    args.extend(["--", "sh", "-c", script].map(String::from));
    d.env(s.hallpass(args))
}

/// Waits (30 s at most) until `cond` holds of the pending questions; returns them.
fn wait_questions(
    s: &Scratch,
    what: &str,
    cond: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let q = pending(s);
        if cond(&q) {
            return q;
        }
        assert!(Instant::now() < deadline, "{what}: {q:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Regression (issue 24): the notifier took an `ActionInvoked` signal from anyone on the
/// session bus, so a supervised process broadcasting `ActionInvoked(id, "always")` with
/// `dbus-send` made its own write and saved a lasting rule. Now only the server that showed
/// the notification is heard: the forged answers change nothing, and a real click still
/// answers.
#[test]
fn a_forged_action_on_the_bus_answers_nothing() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("desktop-forged", v);
        let d = Desktop::start(&s, true);
        let log = s.root.join("log.jsonl");
        let f = s.outside.join("f");
        // Broadcasts "always" for every id a fresh dunst can have given, round after round,
        // and counts the rounds in the project.
        let script = format!(
            "(n=0; while [ ! -e stop ]; do i=1; while [ $i -le 20 ]; do \
             dbus-send --session --type=signal /org/freedesktop/Notifications \
             org.freedesktop.Notifications.ActionInvoked uint32:$i string:always; \
             i=$((i+1)); done; n=$((n+1)); echo $n > rounds; done) & \
             hp-write touch {}; touch stop; wait",
            f.display()
        );
        let c = background(desktop_session(&s, &d, mode, &log, &script));
        d.wait_displayed(&s, 1);
        let rounds = || {
            std::fs::read_to_string(s.project.join("rounds"))
                .ok()
                .and_then(|r| r.trim().parse::<u32>().ok())
                .unwrap_or(0)
        };
        // Two whole rounds of forgeries after the notification was up.
        let seen = rounds();
        assert!(
            wait_until(Duration::from_secs(30), || rounds() >= seen + 2),
            "{mode} {v:?}: the forger never ran"
        );
        let q = wait_questions(&s, "the question went away", |q| q.len() == 1);
        assert_eq!(q[0]["path"], f.to_string_lossy().as_ref());
        assert!(
            !f.exists(),
            "{mode} {v:?}: the forged answer made the write"
        );
        assert!(!rules_file(&s).exists(), "{mode} {v:?}: a rule was saved");
        // The person's click still answers.
        let out = run(d.env(s.command("dunstctl")).arg("context"));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = finish(c);
        assert_eq!(stdout(&out), "ok\n", "{mode} {v:?}: {}", stderr(&out));
        // The write's line (connections to the bus have theirs too).
        let reasons: Vec<_> = s
            .log_lines(&log)
            .iter()
            .filter(|l| l["path"] == f.to_string_lossy().as_ref())
            .map(|l| l["reason"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(reasons, ["once"], "{mode} {v:?}");
        assert!(!rules_file(&s).exists(), "{mode} {v:?}: a rule was saved");
    }
}

/// Regression (issue 24): with no notification server running, the command itself could take
/// `org.freedesktop.Notifications`, receive the question and answer it. Now the daemon is
/// asked whether the server's process is supervised, and a supervised one is shown nothing:
/// hallpass says so once, and the question waits for `hallpass answer`. In strict mode the
/// bus sees hallpassd's pid for the command's connection, which counts as supervised too.
#[test]
fn a_notification_server_run_by_the_command_is_shown_nothing() {
    for (v, mode) in lite_everywhere_and_strict_once() {
        let s = Scratch::new("desktop-own", v);
        let d = Desktop::start(&s, false);
        let log = s.root.join("log.jsonl");
        let f = s.outside.join("f");
        let script = format!(
            "hp-notifyd always > server.out 2>&1 & \
             while ! grep -q ready server.out; do sleep 0.05; done; hp-write touch {}",
            f.display()
        );
        // Its stderr in a file, to read while it runs.
        let err_path = s.root.join("stderr.txt");
        let err_file = std::fs::File::create(&err_path).unwrap();
        let c = desktop_session(&s, &d, mode, &log, &script)
            .stdout(Stdio::piped())
            .stderr(err_file)
            .spawn()
            .unwrap();
        let said = || std::fs::read_to_string(&err_path).unwrap_or_default();
        assert!(
            wait_until(Duration::from_secs(30), || said()
                .contains("it is shown no question")),
            "{mode} {v:?}: nothing said: {}",
            said()
        );
        let q = wait_questions(&s, "the question went away", |q| q.len() == 1);
        assert!(
            !f.exists(),
            "{mode} {v:?}: the command answered its own question"
        );
        assert!(!rules_file(&s).exists(), "{mode} {v:?}: a rule was saved");
        let served = std::fs::read_to_string(s.project.join("server.out")).unwrap_or_default();
        assert!(!served.contains("notified"), "{mode} {v:?}: {served}");
        // Still answerable from a terminal.
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = finish(c);
        assert_eq!(stdout(&out), "err 13\n", "{mode} {v:?}");
        let err = said();
        let pid_word = if mode == "--mode=strict" {
            "hallpassd"
        } else {
            "hp-notifyd"
        };
        assert_eq!(
            err.matches("the question waits: answer it with `hallpass answer` in a terminal")
                .count(),
            1,
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "hallpass: the notification server on the session bus ({pid_word}, pid "
            )) && err.contains(
                ") runs inside a hallpass session: it is shown no question; the question waits"
            ),
            "{mode} {v:?}: {err}"
        );
        assert!(!rules_file(&s).exists(), "{mode} {v:?}: a rule was saved");
    }
}

/// Issue 19: a notification about a path with markup, an escape sequence, a line break and a
/// bidirectional override shows them as text: what dunst received (its history, once the
/// notification is closed there) is the path through `shown`, then escaped as markup.
#[test]
fn a_hostile_path_is_shown_as_text() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("desktop-hostile", v);
        let d = Desktop::start(&s, true);
        let log = s.root.join("log.jsonl");
        let printf = r"<b>m<img src=x>&amp;\033[2J\nz\342\200\256y";
        // The writer is named to fool too: its name is in the summary.
        let writer = s.root.join("w<i>\x1b[2J");
        std::fs::copy(bin("hp-write"), &writer).unwrap();
        s.chown(&writer);
        let script = format!(
            "'{}' touch \"{}/$(printf '{printf}')\"",
            writer.display(),
            s.outside.display()
        );
        let c = session(&s, &d, &log, &script);
        d.wait_displayed(&s, 1);
        // Closed in dunst, not answered: the question stays, the notification's text is in
        // dunst's history.
        let out = run(d.env(s.command("dunstctl")).arg("close-all"));
        assert!(out.status.success(), "{}", stderr(&out));
        let out = run(d.env(s.command("dunstctl")).arg("history"));
        let history: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
        let n = &history["data"][0][0];
        let body = n["body"]["data"].as_str().unwrap_or_default();
        let summary = n["summary"]["data"].as_str().unwrap_or_default();
        assert!(!hostile::has_raw_control(body), "{body:?}");
        assert!(!body.contains("<b>") && !body.contains("<img"), "{body}");
        let want = format!(
            "{}/&lt;b&gt;m&lt;img src=x&gt;&amp;amp;\\e[2J\\nz\\u{{202e}}y",
            s.outside.display()
        );
        assert!(body.starts_with(&want), "{body}");
        assert!(!hostile::has_raw_control(summary), "{summary:?}");
        assert!(
            summary.starts_with("hallpass: w&lt;i&gt;\\e[2J (pid ")
                && summary.ends_with(" wants to create"),
            "{summary}"
        );
        let q = pending(&s);
        assert_eq!(q.len(), 1, "{q:?}");
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&finish(c)), "err 13\n");
    }
}

/// A notification server that started after the session began may have been started for
/// the command (the bus starts one with an activation environment any client may change):
/// it is shown nothing. Found by a red team: a supervised process poisoned the activation
/// environment, and the server the bus then started answered its question.
#[test]
fn a_notification_server_started_during_the_session_is_shown_nothing() {
    let s = Scratch::new("desktop-late", variants()[0]);
    let mut d = Desktop::start(&s, false);
    let log = s.root.join("log.jsonl");
    let (f, go) = (s.outside.join("f"), s.root.join("go"));
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; hp-write touch {}",
        go.display(),
        f.display()
    );
    let c = session(&s, &d, &log, &script);
    std::thread::sleep(Duration::from_millis(500));
    d.start_server(&s);
    std::fs::write(&go, "").unwrap();
    let q = wait_questions(&s, "the question", |q| q.len() == 1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(d.displayed(&s), 0, "a late server was shown the question");
    let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = finish(c);
    assert_eq!(stdout(&out), "err 13\n");
    let err = stderr(&out);
    assert!(
        err.contains("(dunst, pid ")
            && err.contains(") started after this session: it is shown no question"),
        "{err}"
    );
}
