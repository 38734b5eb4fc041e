//! The daemon is no deputy (docs/strict-mode.md, "Nor with more reach"): what it performs for
//! the command (strict mode's writes, lite and strict mode's `openat2`) reaches no further
//! than the command could itself.
//! The command runs in the session's Landlock domain, which keeps it out of every process
//! outside the session: their memory, environment, descriptors, cwd and root. So a victim, a
//! `sleep` of the same user started here outside any session (as the user's shell or a root
//! daemon would be), is tried by `hp-race` through each road into `/proc`: an `openat2` of
//! its `environ` (by path, from a descriptor of `/proc/VICTIM`, through `task/TID`), of its
//! `fd/N`; its `mem` opened for writing (`openat` and `openat2`) and written; a `chmod`
//! through its `cwd` and a `truncate` through its `root`; its `fd/N` reopened for writing.
//!
//! Each runs natively inside an equivalent Landlock domain (`hp-race landlocked`), and under
//! hallpass in lite and strict mode with `--prompt=allow` (audit: the answer "allow" for
//! everything, which must widen what the command may write, never what it may reach). Every
//! supervised try must be refused, with no effect (judged on the victim's memory and on
//! disk); natively they are refused too but for the victim's `environ`, which the kernel lets
//! root read even from inside a domain (the daemon refuses it all the same: nothing under
//! `/proc/PID` of a process outside the session). The command's own entries and a child's
//! must still work, in every mode. As root and as the unprivileged user.
//!
//! The same holds for a Landlock domain the command makes for itself (a sandbox of its own,
//! Codex's say): lite mode, which lets it be made, then performs nothing more for the
//! session, so an `openat2` the domain forbids stays forbidden; strict mode refuses the
//! domain (`ENOSYS`, documented).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use hallpass_tests::*;

/// A process of the variant's user outside any session: `sleep`, its cwd `dir`, with a
/// secret in its environment and `dir/held` (which holds the secret too) open as fd 3.
struct Victim {
    child: Child,
    pid: u32,
    secret: String,
}

impl Victim {
    fn start(sc: &Scratch, dir: &Path) -> Victim {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let secret = format!("hp-deputy-secret-{}-{n}", std::process::id());
        std::fs::write(dir.join("held"), &secret).unwrap();
        std::fs::write(dir.join("f"), "xxxx").unwrap();
        sc.chown(dir);
        let child = sc
            .command("sh")
            .args(["-c", "exec sleep 120 3>>held"])
            .env("HP_VICTIM_SECRET", &secret)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        // setpriv and sh exec in place: the pid is sleep's once its name says so.
        let ready = wait_until(Duration::from_secs(10), || {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c == "sleep\n")
                && std::fs::read_link(format!("/proc/{pid}/fd/3")).is_ok()
        });
        assert!(ready, "the victim did not start");
        Victim { child, pid, secret }
    }

    /// Its environment, as the kernel shows it (to us, outside any domain).
    fn environ(&self) -> Vec<u8> {
        std::fs::read(format!("/proc/{}/environ", self.pid)).unwrap()
    }

    /// Where its environment starts in its memory (`env_start`, field 50 of `stat`).
    fn env_start(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.split(' ').nth(50 - 3).unwrap().parse().unwrap()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A road into an outside process's `/proc` entries.
struct Case {
    name: &'static str,
    /// hp-race's arguments for victim `v`, whose cwd is `dir`.
    args: fn(v: &Victim, dir: &Path) -> Vec<String>,
    /// Refused natively even for root (the environment root may read).
    native_refused_for_root: bool,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "openat2 /proc/V/environ",
            args: |v, _| strings(&["proc-read", &v.pid.to_string(), "environ", &v.secret]),
            native_refused_for_root: false,
        },
        Case {
            name: "openat2 environ from an fd of /proc/V",
            args: |v, _| {
                let pid = v.pid.to_string();
                strings(&["proc-read", &pid, "environ", &v.secret, "dirfd"])
            },
            native_refused_for_root: false,
        },
        Case {
            name: "openat2 /proc/V/task/V/environ",
            args: |v, _| {
                let entry = format!("task/{}/environ", v.pid);
                strings(&["proc-read", &v.pid.to_string(), &entry, &v.secret])
            },
            native_refused_for_root: false,
        },
        Case {
            name: "openat2 /proc/V/fd/3 (read)",
            args: |v, _| strings(&["proc-read", &v.pid.to_string(), "fd/3", &v.secret]),
            native_refused_for_root: true,
        },
        Case {
            name: "open /proc/V/mem O_RDWR, write",
            args: |v, _| {
                let addr = v.env_start().to_string();
                strings(&["proc-mem", &v.pid.to_string(), &addr])
            },
            native_refused_for_root: true,
        },
        Case {
            name: "openat2 /proc/V/mem O_RDWR, write",
            args: |v, _| {
                let addr = v.env_start().to_string();
                strings(&["proc-mem", &v.pid.to_string(), &addr, "openat2"])
            },
            native_refused_for_root: true,
        },
        Case {
            name: "chmod /proc/V/cwd/f",
            args: |v, dir| {
                let f = dir.join("f").display().to_string();
                strings(&["proc-path", &v.pid.to_string(), "chmod", "cwd/f", &f])
            },
            native_refused_for_root: true,
        },
        Case {
            name: "truncate /proc/V/root/DIR/f",
            args: |v, dir| {
                let f = dir.join("f").display().to_string();
                let link = format!("root{f}");
                strings(&["proc-path", &v.pid.to_string(), "truncate", &link, &f])
            },
            native_refused_for_root: true,
        },
        Case {
            name: "open /proc/V/fd/3 for writing",
            args: |v, dir| {
                let f = dir.join("held").display().to_string();
                strings(&["proc-fd", &v.pid.to_string(), "3", &f])
            },
            native_refused_for_root: true,
        },
    ]
}

/// Runs hp-race with `args` natively (in a Landlock domain) or under hallpass in `mode`,
/// with `--prompt=allow`. Its verdict line and its account.
fn try_in(sc: &Scratch, mode: Mode, args: &[String]) -> (String, String) {
    // Natively in a Landlock domain like the session's.
    let out = sc.hp_race(mode, "allow", &["landlocked"], args);
    let how: Vec<String> = stderr(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("hp-race: "))
        .map(String::from)
        .collect();
    let verdict = if out.status.success() {
        stdout(&out).trim().to_string()
    } else {
        format!(
            "FAILED (status {:?}): {} {}",
            out.status.code(),
            stdout(&out).trim(),
            stderr(&out).trim()
        )
    };
    (verdict, how.join("; "))
}

fn who(v: &Variant) -> &'static str {
    match v.who {
        Who::Me if am_root() => "root",
        Who::Me => "me",
        Who::Unprivileged { .. } => TEST_USER,
    }
}

/// Whether the kernel has Landlock with the ptrace restriction the session relies on: what
/// `hp-race landlocked` says it made (before it stops on the missing file).
fn landlock() -> bool {
    let sc = Scratch::new("deputy-ll", variants()[0]);
    let (_, how) = try_in(&sc, Mode::Native, &strings(&["proc-own", "/nonexistent"]));
    how.contains("landlock: ABI")
}

#[test]
fn the_daemon_reaches_no_further_than_the_command() {
    let native_domain = landlock();
    if !native_domain {
        eprintln!("NOTE: no Landlock here: the native runs are not confined, only the supervised runs are checked");
    }
    let mut bad = Vec::new();
    let mut table = Vec::new();
    for v in variants().into_iter().filter(|v| !v.lend) {
        let sc = Scratch::new("deputy", v);
        let root = who(&v) == "root";
        for (idx, case) in cases().iter().enumerate() {
            let mut row = vec![format!("{} ({})", case.name, who(&v))];
            for mode in [Mode::Native, Mode::Lite, Mode::Strict] {
                let dir = sc.outside.join(format!("{idx}-{mode:?}"));
                std::fs::create_dir_all(&dir).unwrap();
                let victim = Victim::start(&sc, &dir);
                let (f, held) = (dir.join("f"), dir.join("held"));
                let before = (victim.environ(), snap(&f), snap(&held));
                let args = (case.args)(&victim, &dir);
                let (verdict, how) = try_in(&sc, mode, &args);
                let after = (victim.environ(), snap(&f), snap(&held));
                let id = format!("{} as {} ({mode:?})", case.name, who(&v));
                if after != before {
                    let files = |x: &(Vec<u8>, _, _)| (x.1, x.2);
                    bad.push(format!(
                        "{id}: the victim or its files CHANGED: {verdict} ({how}); files {:?} -> {:?}, environment {}",
                        files(&before),
                        files(&after),
                        if after.0 == before.0 { "same" } else { "changed" }
                    ));
                }
                let refused = verdict.starts_with("refused ");
                match mode {
                    Mode::Native => {
                        let must = native_domain && (!root || case.native_refused_for_root);
                        if must && !refused {
                            bad.push(format!(
                                "{id}: not refused natively in the domain, so the test proves nothing: {verdict} ({how})"
                            ));
                        }
                    }
                    Mode::Lite | Mode::Strict => {
                        if !refused {
                            bad.push(format!("{id}: NOT REFUSED: {verdict} ({how})"));
                        }
                    }
                }
                row.push(verdict);
            }
            table.push(row);
        }
        // The command's own entries and a child's: they must work in every mode.
        let mut row = vec![format!("own and a child's entries ({})", who(&v))];
        for mode in [Mode::Native, Mode::Lite, Mode::Strict] {
            let f = sc.project.join(format!("own-{mode:?}"));
            std::fs::write(&f, "x").unwrap();
            sc.chown(&f);
            let (verdict, how) =
                try_in(&sc, mode, &strings(&["proc-own", &f.display().to_string()]));
            if verdict != "own ok" {
                bad.push(format!(
                    "own entries as {} ({mode:?}): {verdict} ({how})",
                    who(&v)
                ));
            }
            row.push(verdict);
        }
        table.push(row);
    }
    println!("\n| try | native (Landlock) | lite | strict |\n|---|---|---|---|");
    for r in &table {
        println!("| {} |", r.join(" | "));
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn a_landlock_domain_of_the_commands_own_binds_what_lite_mode_performs() {
    let mut bad = Vec::new();
    for v in variants().into_iter().filter(|v| !v.lend) {
        let sc = Scratch::new("own-domain", v);
        let f = sc.project.join("readable");
        std::fs::write(&f, "text").unwrap();
        sc.chown(&f);
        let args = strings(&["own-domain", &f.display().to_string()]);
        for (mode, want) in [
            (Mode::Native, "refused 13"),
            (Mode::Lite, "refused 13"),
            // Refused as on a kernel without Landlock: strict mode performs every write.
            (Mode::Strict, "no domain 38"),
        ] {
            let (verdict, how) = try_in(&sc, mode, &args);
            println!(
                "own Landlock domain, openat2 a file it forbids ({}, {mode:?}): {verdict}",
                who(&v)
            );
            if verdict != want {
                bad.push(format!(
                    "{} ({mode:?}): {verdict}, not {want} ({how})",
                    who(&v)
                ));
            }
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// Lite mode performs `openat2` only for a process with the daemon's credentials: not for one
/// that dropped them under a root daemon, nor when the launcher lacks the daemon's groups (a
/// daemon started before a group change). The kernel makes those, with the process's own.
#[test]
fn lite_mode_performs_nothing_with_rights_the_process_lacks() {
    if !am_root() || uid_of(TEST_USER).is_none() {
        eprintln!("SKIP: needs root and the user {TEST_USER}");
        return;
    }
    let (uid, gid) = uid_of(TEST_USER).unwrap();
    let mut bad = Vec::new();
    // A root daemon, a process that drops to the user: root's file is not its to read.
    let sc = Scratch::new("lite-creds", variants()[0]);
    let secret = sc.project.join("root-only");
    std::fs::write(&secret, "root's").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let script = format!(
        "setpriv --reuid={uid} --regid={gid} --clear-groups {} openat2-read {}",
        bin("hp-race").display(),
        secret.display()
    );
    let out = run(sc.hallpass(["--mode=lite", "--prompt=allow", "--", "sh", "-c", &script]));
    if stdout(&out).trim() != "refused 13" {
        bad.push(format!(
            "a process that dropped root's rights read root's file: {} {}",
            stdout(&out).trim(),
            stderr(&out).trim()
        ));
    }
    // A daemon of the user with a group its launcher lacks.
    const GROUP: u32 = 54_321;
    let sc = Scratch::new(
        "lite-groups",
        Variant {
            who: Who::Unprivileged { uid, gid },
            lend: false,
        },
    );
    let file = sc.project.join("group-only");
    std::fs::write(&file, "the group's").unwrap();
    std::os::unix::fs::chown(&file, Some(0), Some(GROUP)).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let dir = sc.runtime.join("hallpass");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    sc.chown(&dir);
    let mut daemon = std::process::Command::new("setpriv")
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .arg(format!("--groups={GROUP}"))
        .arg("--")
        .arg(bin("hallpassd"))
        .arg("--runtime-dir")
        .arg(&dir)
        .arg("--idle-exit")
        .arg("60")
        .env_clear()
        .env("HOME", &sc.home)
        .env("XDG_RUNTIME_DIR", &sc.runtime)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let up = wait_until(Duration::from_secs(20), || {
        dir.join("control.sock").exists()
    });
    assert!(up, "hallpassd did not start");
    let args = strings(&["openat2-read", &file.display().to_string()]);
    for (mode, want) in [(Mode::Native, "refused 13"), (Mode::Lite, "refused 13")] {
        let (verdict, how) = try_in(&sc, mode, &args);
        if verdict != want {
            bad.push(format!(
                "the daemon's group ({mode:?}): {verdict}, not {want} ({how})"
            ));
        }
    }
    // Strict mode refuses such a session outright (it performs everything).
    let out = run(sc.hallpass(["--mode=strict", "--prompt=allow", "--", "true"]));
    if out.status.success() || !stderr(&out).contains("other user or group ids") {
        bad.push(format!(
            "strict mode took a launcher without the daemon's groups: {}",
            stderr(&out).trim()
        ));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

fn uid_of(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| {
        let out = std::process::Command::new("id")
            .arg(flag)
            .arg(user)
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    Some((id("-u")?, id("-g")?))
}

/// What can be seen of a file from outside: size, mode and change time.
fn snap(p: &PathBuf) -> Option<(u64, u32, i64, i64)> {
    std::fs::metadata(p)
        .ok()
        .map(|m| (m.size(), m.mode(), m.ctime(), m.ctime_nsec()))
}
