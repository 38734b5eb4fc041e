//! Terminals the command does not own: their settings, size, flow, queues and foreground
//! group are decided like a write of the terminal, in both modes; a terminal cannot be
//! stolen as controlling terminal; the session's own terminal (its pty, a pty it made)
//! changes as natively, job control included. The other terminal is a real pty held by a
//! process outside the session, run as the variant's user, and checked from outside with
//! `stty -F`; the issue's attack runs in tmux against the launcher's own terminal.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hallpass_tests::*;

const MODES: [&str; 2] = ["--mode=lite", "--mode=strict"];

/// Holds two ptys outside any session: `a` nobody's controlling terminal, `b` its own.
/// Prints their paths, then waits for its stdin to close.
const HOLDER: &str = r#"
import os, sys, fcntl, struct, termios
ma, sa = os.openpty()
mb, sb = os.openpty()
for t in (sa, sb):
    fcntl.ioctl(t, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
os.setsid()
b = os.open(os.ttyname(sb), os.O_RDWR)
print(os.ttyname(sa), os.ttyname(sb), flush=True)
sys.stdin.read()
"#;

/// `poke.py A B OP...`: opens terminal A read-only and changes it in each way named, printing
/// `OP RESULT` (`ok` or the errno's name). `ctty-*` first makes A the controlling terminal
/// of a new session (A has none, so opening it does, in the kernel); `steal` takes B from
/// the session that has it (TIOCSCTTY 1).
const POKE: &str = r#"
import os, sys, fcntl, struct, termios, errno
a, b = sys.argv[1], sys.argv[2]
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
    except termios.error as e:
        return errno.errorcode[e.args[0]]
def noecho(fd):
    t = termios.tcgetattr(fd)
    t[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, t)
def in_session(f):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.write(w, f().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    return os.read(r, 100).decode()
ops = {
    "winsz": lambda fd: fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 200, 100, 0, 0)),
    "tcsets": noecho,
    "tcflsh": lambda fd: termios.tcflush(fd, termios.TCIFLUSH),
    "pgrp": lambda fd: fcntl.ioctl(fd, termios.TIOCSPGRP, struct.pack("i", os.getpgrp())),
}
fd = os.open(a, os.O_RDONLY | os.O_NOCTTY)
for op in sys.argv[3:]:
    if op in ops:
        print(op, attempt(lambda: ops[op](fd)))
    elif op == "ctty":
        def ctty():
            t = os.open(a, os.O_RDONLY)
            pg = struct.pack("i", os.getpgrp())
            return "ctty-pgrp %s\nctty-tcsets %s" % (
                attempt(lambda: fcntl.ioctl(t, termios.TIOCSPGRP, pg)),
                attempt(lambda: noecho(t)))
        print(in_session(ctty))
    elif op == "steal":
        def steal():
            t = os.open(b, os.O_RDONLY | os.O_NOCTTY)
            return "steal " + attempt(lambda: fcntl.ioctl(t, termios.TIOCSCTTY, 1))
        print(in_session(steal))
"#;

/// The issue's attack: finds the launcher's terminal through a parent's `tty_nr` (the first
/// that is not its own), opens it read-only and says it is 200 rows tall.
const ATTACK: &str = r#"
import os, fcntl, struct, termios, errno
mine = os.stat("/proc/self/fd/0").st_rdev
pid = os.getppid()
while True:
    st = open("/proc/%d/stat" % pid).read()
    f = st[st.rindex(")") + 2:].split()
    nr = int(f[4])
    dev = os.makedev((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xfff00))
    if nr and dev != mine:
        break
    pid = int(f[1])
path = "/dev/pts/%d" % ((os.major(dev) - 136) * 256 + os.minor(dev))
fd = os.open(path, os.O_RDONLY | os.O_NOCTTY)
try:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 200, 100, 0, 0))
    print("attack", path, "ok")
except OSError as e:
    print("attack", path, errno.errorcode[e.errno])
"#;

/// Changes its terminal (its standard error: a background job's input is `/dev/null`) a
/// moment after its group is orphaned, and says how that went.
const ORPHAN: &str = r#"
import sys, time, termios, errno
time.sleep(1)
try:
    termios.tcsetattr(2, termios.TCSANOW, termios.tcgetattr(2))
    r = "ok"
except termios.error as e:
    r = errno.errorcode[e.args[0]]
print("orphan" + "ed", r, file=sys.stderr)
"#;

/// Writes `text` as `name` in the scratch directory, readable by the variant's user.
fn script(s: &Scratch, name: &str, text: &str) -> PathBuf {
    let p = s.root.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A process outside the session holding two ptys ([`HOLDER`]), as the variant's user.
struct Holder {
    child: Child,
    a: String,
    b: String,
}

impl Holder {
    fn start(s: &Scratch) -> Holder {
        let p = script(s, "holder.py", HOLDER);
        let mut c = s.command("python3");
        c.arg(p).stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut it = line.split_whitespace().map(str::to_string);
        let (a, b) = (it.next().unwrap(), it.next().unwrap());
        Holder { child, a, b }
    }

    /// Whether the holder still has `b` as its controlling terminal.
    fn has_b(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        let nr: u64 = stat[stat.rfind(')').unwrap() + 2..]
            .split(' ')
            .nth(4)
            .unwrap()
            .parse()
            .unwrap();
        let rdev = std::fs::metadata(&self.b).unwrap().rdev();
        let (major, minor) = (rdev >> 8 & 0xfff, rdev & 0xff);
        nr == (major << 8 | minor)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// `stty -F TTY ARGS`, read from outside the session.
fn stty(tty: &str, args: &[&str]) -> String {
    let out = run({
        let mut c = Command::new("stty");
        c.arg("-F").arg(tty).args(args);
        c
    });
    assert!(out.status.success(), "stty -F {tty}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// `poke.py` under `hallpass FLAGS`, as `OP RESULT` pairs.
fn poke(s: &Scratch, h: &Holder, flags: &[&str], ops: &[&str]) -> Vec<(String, String)> {
    let p = script(s, "poke.py", POKE);
    let out = run(s
        .hallpass(flags)
        .arg("--")
        .arg("python3")
        .arg(p)
        .arg(&h.a)
        .arg(&h.b)
        .args(ops));
    assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
    results(&out)
}

fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

const ALL: [&str; 6] = ["winsz", "tcsets", "tcflsh", "pgrp", "ctty", "steal"];

/// Regression: a command could open another terminal of the user's read-only and change its
/// size, settings, flow and foreground group, which passed in the kernel.
#[test]
fn another_terminal_is_denied_unattended() {
    for v in variants() {
        for mode in MODES {
            let s = Scratch::new("tty-deny", v);
            let h = Holder::start(&s);
            let (size, settings) = (stty(&h.a, &["size"]), stty(&h.a, &["-a"]));
            let log = s.root.join("log.jsonl");
            let logf = format!("--log={}", log.display());
            let got = poke(&s, &h, &["--prompt=deny", mode, &logf], &ALL);
            let want = pairs(&[
                ("winsz", "EACCES"),
                ("tcsets", "EACCES"),
                ("tcflsh", "EACCES"),
                // Not its controlling terminal: the kernel refuses it, nothing to ask.
                ("pgrp", "ENOTTY"),
                ("ctty-pgrp", "EACCES"),
                ("ctty-tcsets", "EACCES"),
                ("steal", "EPERM"),
            ]);
            assert_eq!(got, want, "{v:?} {mode}");
            assert_eq!(stty(&h.a, &["size"]), size, "{v:?} {mode}");
            assert_eq!(stty(&h.a, &["-a"]), settings, "{v:?} {mode}");
            assert!(h.has_b(), "{v:?} {mode}: the terminal was stolen");
            let lines = s.log_lines(&log);
            let denied = lines
                .iter()
                .filter(|l| l["syscall"] == "ioctl" && l["path"] == h.a.as_str())
                .filter(|l| l["decision"] == "deny" && l["reason"] == "unattended")
                .count();
            assert_eq!(denied, 5, "{v:?} {mode}: {lines:?}");
        }
    }
}

#[test]
fn another_terminal_is_changed_and_logged_in_audit() {
    for (v, mode) in variants()
        .into_iter()
        .filter(|v| !v.lend)
        .flat_map(|v| MODES.map(|m| (v, m)))
    {
        let s = Scratch::new("tty-audit", v);
        let h = Holder::start(&s);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let got = poke(&s, &h, &["--prompt=allow", mode, &logf], &ALL);
        let want = pairs(&[
            ("winsz", "ok"),
            ("tcsets", "ok"),
            ("tcflsh", "ok"),
            ("pgrp", "ENOTTY"),
            ("ctty-pgrp", "ok"),
            ("ctty-tcsets", "ok"),
            ("steal", "EPERM"),
        ]);
        assert_eq!(got, want, "{v:?} {mode}");
        assert_eq!(stty(&h.a, &["size"]), "200 100", "{v:?} {mode}");
        assert!(stty(&h.a, &["-a"]).contains("-echo"), "{v:?} {mode}");
        assert!(h.has_b(), "{v:?} {mode}: the terminal was stolen");
        let lines = s.log_lines(&log);
        let audited = lines
            .iter()
            .filter(|l| l["syscall"] == "ioctl" && l["path"] == h.a.as_str())
            .filter(|l| l["decision"] == "allow" && l["reason"] == "audit")
            .count();
        assert_eq!(audited, 5, "{v:?} {mode}: {lines:?}");
    }
}

/// A pty the session makes is its own: `script` sets it up (TIOCSCTTY, TCSETS, TIOCSWINSZ)
/// and the shell in it changes it, nothing asked.
#[test]
fn a_pty_the_session_makes_is_its_own() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        for mode in MODES {
            let s = Scratch::new("tty-made", v);
            let log = s.root.join("log.jsonl");
            let logf = format!("--log={}", log.display());
            let out = run(s.hallpass([
                "--prompt=deny",
                mode,
                &logf,
                "--",
                "script",
                "-qc",
                "stty rows 33 cols 44; stty size; stty -echo && echo changed",
                "/dev/null",
            ]));
            let text = stdout(&out);
            assert!(
                text.contains("33 44"),
                "{v:?} {mode}: {text} {}",
                stderr(&out)
            );
            assert!(text.contains("changed"), "{v:?} {mode}: {text}");
            let lines = s.log_lines(&log);
            assert!(
                !lines.iter().any(|l| l["syscall"] == "ioctl"),
                "{v:?} {mode}: {lines:?}"
            );
        }
    }
}

/// The variants the tmux tests run as: ourselves, and the unprivileged user through the
/// launcher (the Yama path).
fn two_variants() -> Vec<Variant> {
    variants()
        .into_iter()
        .filter(|v| v.lend == matches!(v.who, Who::Unprivileged { .. }))
        .collect()
}

/// The pane's terminal, as tmux names it.
fn pane_tty(t: &Tmux) -> String {
    stdout(&run(t.cmd_display("#{pane_tty}")))
        .trim()
        .to_string()
}

/// The issue's attack, in a real terminal: the command finds the launcher's terminal through
/// its parent's `tty_nr` and tells it it has 200 rows. The bar asks about it, on the real
/// bottom rows; `d` denies it; the terminal keeps its size.
#[test]
fn the_launchers_terminal_is_not_resized_from_inside() {
    for v in two_variants() {
        for mode in MODES {
            let s = Scratch::new("tty-attack", v);
            let t = s.tmux(100, 30);
            let outer = pane_tty(&t);
            let attack = script(&s, "attack.py", ATTACK);
            let log = s.root.join("log.jsonl");
            t.line(&format!(
                "clear; hallpass {mode} --log={} -- python3 {}",
                log.display(),
                attack.display()
            ));
            let want = format!("wants to change the settings of {outer}");
            let sc = t.wait_for("the question", |x| x.contains(&want));
            let lines: Vec<&str> = sc.lines().collect();
            assert_eq!(lines.len(), 30, "{sc}");
            assert!(lines[29].contains("[o] allow once"), "{sc}");
            assert!(lines[26].contains(&want), "{sc}");
            assert_eq!(stty(&outer, &["size"]), "30 100", "{v:?} {mode}");
            std::thread::sleep(Duration::from_millis(500));
            t.keys(&["d"]);
            t.wait_for("the attack refused", |x| {
                x.contains(&format!("attack {outer} EACCES"))
            });
            assert_eq!(stty(&outer, &["size"]), "30 100", "{v:?} {mode}");
            let sz = stdout(&run(t.cmd_display("#{pane_height} #{pane_width}")));
            assert_eq!(sz.trim(), "30 100");
            let logged = s.log_lines(&log);
            assert!(
                logged.iter().any(|l| l["syscall"] == "ioctl"
                    && l["path"] == outer.as_str()
                    && l["reason"] == "denied"),
                "{v:?} {mode}: {logged:?}"
            );
        }
    }
}

/// The session's own terminal changes natively: its size and settings, unasked, and job
/// control stops a background job that changes it, which goes on in the foreground.
#[test]
fn the_sessions_own_terminal_changes_as_natively() {
    for v in two_variants() {
        for mode in MODES {
            let s = Scratch::new("tty-own", v);
            let t = s.tmux(100, 30);
            let log = s.root.join("log.jsonl");
            t.line(&format!(
                "hallpass {mode} --log={} -- env PS1='in$ ' bash --norc --noprofile",
                log.display()
            ));
            t.wait_for("the supervised shell", |x| x.contains("in$"));
            t.line("clear; stty rows 40; stty size; stty rows 30");
            t.wait_for("the new size", |x| x.lines().any(|l| l.trim() == "40 100"));
            let set = "import termios; termios.tcsetattr(0, termios.TCSANOW, termios.tcgetattr(0)); print('set' + 'tled')";
            t.line(&format!("clear; python3 -c \"{set}\" &"));
            t.line("sleep 1; jobs");
            t.wait_for("the background job stopped", |x| x.contains("Stopped"));
            t.line("fg");
            t.wait_for("the job done in the foreground", |x| x.contains("settled"));
            // A background group no shell would continue (orphaned): EIO, as natively.
            let orphan = script(&s, "orphan.py", ORPHAN);
            t.line(&format!("clear; (python3 {} &)", orphan.display()));
            t.wait_for("the orphan refused", |x| x.contains("orphaned EIO"));
            assert!(!t.screen().contains("[o] allow once"), "{}", t.screen());
            let lines = s.log_lines(&log);
            assert!(
                !lines.iter().any(|l| l["syscall"] == "ioctl"),
                "{v:?} {mode}: {lines:?}"
            );
        }
    }
}

/// Strict mode decides on the very descriptor: another thread swapping it with `dup2`
/// between another terminal and one of the session's own never gets a change through to the
/// other. Lite mode's escapes are counted, not asserted (it decides on what it read).
#[test]
fn a_swapped_descriptor_changes_no_other_terminal_in_strict_mode() {
    const RACE: &str = r#"
import os, sys, fcntl, struct, termios, threading
a, n = sys.argv[1], int(sys.argv[2])
m, own = os.openpty()
other = os.open(a, os.O_RDONLY | os.O_NOCTTY)
slot = os.dup(own)
done = False
def swap():
    while not done:
        os.dup2(other, slot)
        os.dup2(own, slot)
threading.Thread(target=swap, daemon=True).start()
hits = 0
for i in range(n):
    rows = 100 + i % 100
    try:
        fcntl.ioctl(slot, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 99, 0, 0))
    except OSError:
        pass
    if struct.unpack("HHHH", fcntl.ioctl(other, termios.TIOCGWINSZ, b"\0" * 8))[0] == rows:
        hits += 1
done = True
print("hits", hits)
"#;
    let v = variants()
        .into_iter()
        .find(|v| !v.lend && matches!(v.who, Who::Unprivileged { .. }))
        .unwrap_or(variants()[0]);
    let n = "3000";
    for mode in MODES {
        let s = Scratch::new("tty-race", v);
        let h = Holder::start(&s);
        let p = script(&s, "race.py", RACE);
        let out = run(s
            .hallpass(["--prompt=deny", mode, "--"])
            .arg("python3")
            .arg(&p)
            .arg(&h.a)
            .arg(n));
        let hits = stdout(&out);
        eprintln!(
            "{mode}: {} of {n} changes reached the other terminal",
            hits.trim()
        );
        assert!(hits.starts_with("hits "), "{mode}: {hits} {}", stderr(&out));
        if mode == "--mode=strict" {
            assert_eq!(hits.trim(), "hits 0", "{v:?}");
            assert_eq!(stty(&h.a, &["size"]), "24 80", "{v:?}");
        }
    }
    // The race is real: natively the other terminal is hit (in one of a few rounds: on a
    // loaded machine the threads can miss each other for a whole round).
    let s = Scratch::new("tty-race-native", v);
    let h = Holder::start(&s);
    let p = script(&s, "race.py", RACE);
    let native: u64 = (0..10)
        .map(|_| {
            let out = run(s.command("python3").arg(&p).arg(&h.a).arg(n));
            stdout(&out)
                .trim()
                .trim_start_matches("hits ")
                .parse::<u64>()
                .unwrap()
        })
        .find(|&hits| hits > 0)
        .unwrap_or(0);
    eprintln!("native: {native} of {n}");
    assert!(native > 0, "the race never hit natively in 10 rounds");
}
