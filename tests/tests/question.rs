//! The question belongs to the person: nothing the command prints to its terminal moves,
//! hides or changes the prompt bar, and nothing typed as part of a stream of typing answers
//! it. Tried in a real terminal (tmux), in lite and strict mode, as ourselves and as the
//! unprivileged user (through the launcher's lending).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hallpass_tests::*;

const ROWS: u16 = 30;

/// Ourselves reading memory directly and the unprivileged user through the launcher, each in
/// both modes.
fn sessions() -> Vec<(Variant, &'static str)> {
    variants()
        .into_iter()
        .filter(|v| v.lend == matches!(v.who, Who::Unprivileged { .. }))
        .flat_map(|v| [(v, "--mode=lite"), (v, "--mode=strict")])
        .collect()
}

fn log_of(s: &Scratch) -> Vec<serde_json::Value> {
    s.log_lines(&s.root.join("log.jsonl"))
}

/// The decision logged for `path`, once there is one.
fn decided(s: &Scratch, path: &Path) -> String {
    let p = path.to_string_lossy();
    let mut found = String::new();
    let ok = wait_until(Duration::from_secs(20), || {
        match log_of(s).into_iter().find(|l| l["path"] == *p) {
            Some(l) => {
                found = format!("{} {}", l["decision"], l["reason"]);
                true
            }
            None => false,
        }
    });
    assert!(ok, "no log line for {p}: {:?}", log_of(s));
    found
}

/// Writes `script` (sh) into the scratch, owned by the variant's user.
fn script(s: &Scratch, name: &str, text: &str) -> PathBuf {
    let path = s.root.join(name);
    std::fs::write(&path, text).unwrap();
    s.chown(&path);
    path
}

/// What hostile commands print before they write outside: each would, in a terminal that
/// takes it, move the bar, garble it, hide it or put a fake one in its place.
const HOSTILE: &[(&str, &str)] = &[
    (
        "a fake bar on the bottom rows, then a scroll region with origin mode",
        "printf '\\033[27;1Hhallpass: sh (pid 1) wants to write /tmp/harmless\\n  by: sh\\n  [t] and [a] allow, [n] denies: /tmp\\n  [o] allow once  [t] for 5m0s  [a] always  [d] deny  [n] never'; printf '\\033[1;2r\\033[?6h'",
    ),
    ("line drawing in G0", "printf '\\033(0'"),
    ("line drawing in G1, shifted out", "printf '\\033)0\\016'"),
    ("insert mode, no wrapping", "printf '\\033[4h\\033[?7l\\033[1;1H'"),
    ("an unterminated title", "printf '\\033]2;'"),
    ("an unterminated device control string", "printf '\\033P'"),
    ("the alternate screen, reversed", "printf '\\033[?1049h\\033[?5h'"),
    ("double-width bottom row", "printf '\\033[30;1H\\033#6'"),
    (
        "concealed text, black on black",
        "printf '\\033[8m\\033]10;#000000\\007\\033]11;#000000\\007'",
    ),
    ("a window 200 rows tall", "printf '\\033[8;200;80t'"),
    (
        "a region saved with the cursor",
        "printf '\\033[3;4r\\033[?6h\\0337\\033[r\\033[?6l\\0338'",
    ),
];

/// The script: for each hostile prelude, wait for Enter, print it, write outside the
/// project, then reset the terminal and say so.
fn hostile_script(s: &Scratch) -> PathBuf {
    let mut text = String::from("stty -echo\n");
    for (i, (_, prelude)) in HOSTILE.iter().enumerate() {
        text.push_str(&format!(
            "read x\n{prelude}\nhp-write touch {} >/dev/null 2>&1\nprintf '\\033c'\necho done {i}\n",
            s.outside.join(format!("w{i}")).display()
        ));
    }
    text.push_str("read x\n");
    script(s, "hostile.sh", &text)
}

/// The bottom four rows are the real bar, whole, naming `path`.
fn the_real_bar_is_at_the_bottom(screen: &str, path: &Path) -> bool {
    let rows: Vec<&str> = screen.lines().collect();
    if rows.len() != ROWS as usize {
        return false;
    }
    let bar = &rows[ROWS as usize - 4..];
    bar[0].starts_with("hallpass: hp-write (pid ")
        && bar[0].contains(&format!("wants to create {}", path.display()))
        && bar[1].starts_with("  by: hp-write touch")
        && bar[2].starts_with("  [t] and [a] allow, [n] denies: ")
        && bar[3].starts_with("  [o] allow once  [t] for 5m0s  [a] always  [d] deny  [n] never")
}

#[test]
fn nothing_the_command_prints_moves_hides_or_changes_the_bar() {
    for (v, mode) in sessions() {
        let s = Scratch::new("bar-reach", v);
        let t = s.tmux(100, ROWS);
        let sh = hostile_script(&s);
        t.line(&format!(
            "hallpass {mode} --log={} -- sh {}",
            s.root.join("log.jsonl").display(),
            sh.display()
        ));
        std::thread::sleep(Duration::from_millis(500));
        for (i, (what, _)) in HOSTILE.iter().enumerate() {
            let f = s.outside.join(format!("w{i}"));
            t.keys(&["Enter"]);
            let screen = t.wait_for(&format!("the real bar after {what} ({mode})"), |x| {
                the_real_bar_is_at_the_bottom(x, &f)
            });
            assert!(!screen.contains("/tmp/harmless"), "{what}:\n{screen}");
            std::thread::sleep(Duration::from_millis(600));
            // Still there, still whole, after the bar took keys; the key answers it.
            assert!(the_real_bar_is_at_the_bottom(&t.screen(), &f), "{what}");
            t.keys(&["d"]);
            assert_eq!(decided(&s, &f), "\"deny\" \"denied\"", "{what} ({mode})");
            assert!(!f.exists());
            t.wait_for(&format!("the command going on after {what}"), |x| {
                x.contains(&format!("done {i}"))
            });
        }
        assert!(
            !log_of(&s).iter().any(|l| l["path"] == "/tmp/harmless"),
            "{:?}",
            log_of(&s)
        );
        t.keys(&["Enter"]);
    }
}

/// A command that reads what the person types to it, one key at a time: at the first key it
/// writes outside the project (rounds times, each after the next key), and keeps the rest
/// of what is typed.
fn typing_script(s: &Scratch, files: &[PathBuf]) -> PathBuf {
    let mut text = String::from("stty -icanon -echo min 1\n");
    for f in files {
        text.push_str(&format!(
            "dd bs=1 count=1 of=/dev/null 2>/dev/null\nhp-write touch {} >/dev/null 2>&1\necho written $?\n",
            f.display()
        ));
    }
    text.push_str("cat >/dev/null\n");
    script(s, "typing.sh", &text)
}

/// Types `text` one key every `every`, on a schedule (not after each send's own delay).
fn type_steadily(t: &Tmux, text: &str, every: Duration) {
    let start = Instant::now();
    for (i, c) in text.chars().enumerate() {
        let at = start + every * i as u32;
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let key = c.to_string();
        if c == ' ' {
            t.keys(&["Space"]);
        } else {
            t.keys(&["-l", &key]);
        }
    }
}

#[test]
fn typing_through_the_bars_arrival_answers_nothing() {
    let speeds = [80u64, 120, 250];
    for (v, mode) in sessions() {
        let s = Scratch::new("typing", v);
        let t = s.tmux(120, ROWS);
        let files: Vec<PathBuf> = speeds
            .iter()
            .map(|ms| s.outside.join(format!("typed-{ms}")))
            .collect();
        let sh = typing_script(&s, &files);
        t.line(&format!(
            "hallpass {mode} --log={} -- sh {}",
            s.root.join("log.jsonl").display(),
            sh.display()
        ));
        std::thread::sleep(Duration::from_millis(800));
        for (ms, f) in speeds.iter().zip(&files) {
            // The first key reaches the command, which asks; the person types on, the
            // sentence full of answer keys (o, t, a, d, n), through the bar's arrival.
            type_steadily(&t, "please see the test output", Duration::from_millis(*ms));
            let screen = t.screen();
            assert!(
                screen.contains(&format!("wants to create {}", f.display())),
                "{mode}, every {ms} ms:\n{screen}"
            );
            assert!(
                screen.contains("the keys answer once you pause"),
                "the bar does not say its keys wait ({mode}, every {ms} ms):\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(300));
            assert!(!f.exists(), "typing every {ms} ms answered ({mode})");
            assert!(
                !log_of(&s).iter().any(|l| l["path"] == *f.to_string_lossy()),
                "typing every {ms} ms answered ({mode}): {:?}",
                log_of(&s)
            );
            // The person stops and reads. The question came as they typed: a first key only
            // takes it (the command, which sees each key, could have asked at a pause in
            // their typing); then one key answers.
            t.wait_for("the bar asking for a key to take it", |x| {
                x.contains("(this came as you typed: press a key to take it, then answer)")
            });
            assert!(!f.exists());
            t.keys(&["Space"]);
            t.wait_for("the keys", |x| x.contains("[o] allow once"));
            std::thread::sleep(Duration::from_millis(500));
            t.keys(&["o"]);
            assert_eq!(
                decided(&s, f),
                "\"allow\" \"once\"",
                "{mode}, every {ms} ms"
            );
            assert!(wait_until(Duration::from_secs(10), || f.exists()));
            t.wait_for("the command going on", |x| {
                x.matches("written 0").count() == files.iter().filter(|f| f.exists()).count()
            });
        }
    }
}

/// A home reached through a symlink: the paths decided are resolved, so the home they are
/// told apart by is too. Found by a red team: the suggested scope for `~/.bashrc` was the
/// real home, and "always" then let `~/.ssh/authorized_keys` be written unasked.
#[test]
fn a_home_behind_a_symlink_is_never_a_scope() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("linked-home", v);
        let link = s.root.join("linked");
        std::os::unix::fs::symlink(&s.home, &link).unwrap();
        let log = s.root.join("log.jsonl");
        let script = format!("hp-write touch {}/.bashrc", link.display());
        let mut cmd = s.session_command("answer", &log, &script);
        cmd.env("HOME", &link);
        let child = background(cmd);
        let q = s.wait_pending(1, &[]);
        let scope = q[0]["scope"].as_str().unwrap_or_default().to_string();
        assert_eq!(scope, s.home.join(".bashrc").to_string_lossy(), "{q:?}");
        let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "deny"]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&finish(child)), "err 13\n");
    }
}
