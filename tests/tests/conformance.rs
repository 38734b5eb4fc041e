//! Strict mode conforms: every intercepted write syscall, performed by the daemon through file
//! descriptors, gives exactly what the kernel gives when the command makes it itself. The
//! same table of cases (`hp-conform`: several hundred, each one raw syscall on fresh fixtures,
//! its successes and its provokable errnos) runs natively and under
//! `hallpass --mode=strict --prompt=deny`, inside the project; the return value or errno, the
//! opened descriptor (access mode, flags, FD_CLOEXEC, what it refers to, whether it reads and
//! writes) and the resulting tree (types, modes, owners, link counts, contents, symlink targets,
//! xattrs, times where set) must be identical, case by case. As root and as an unprivileged
//! user, with and without the Yama lending path. Strict mode runs it twice: in its Landlock
//! domain, which leaves most writes in the project to the kernel, and without one
//! (`HALLPASS_LANDLOCK_ABI=1`), where the daemon performs every write itself. As root, the
//! test mounts a file system for the cases about mount points.
//!
//! Lite mode is held to the same table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hallpass_tests::*;

/// A directory on another file system than the scratch (for EXDEV), removed on drop; `None`
/// where there is no tmpfs at /dev/shm (hp-conform then prints `skip` for those cases).
struct OtherFs(PathBuf);

impl OtherFs {
    fn new(tag: &str) -> Option<OtherFs> {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            eprintln!("SKIP the EXDEV cases: no /dev/shm");
            return None;
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = shm.join(format!("hp-conform-{}-{n}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        Some(OtherFs(d))
    }
}

impl Drop for OtherFs {
    fn drop(&mut self) {
        writable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `project/mounts-TAG`, made by root for hp-conform's `--mounts` (a mount point and files of
/// root's: see `mount_cases` there), unmounted on drop; `None` where this process cannot mount
/// (not root: hp-conform then prints `skip` for those cases).
struct Mounts(PathBuf);

impl Mounts {
    fn new(project: &Path, tag: &str) -> Option<Mounts> {
        if !am_root() {
            eprintln!("SKIP the mount-point cases: mounting needs root");
            return None;
        }
        let d = project.join(format!("mounts-{tag}"));
        std::fs::create_dir(&d).unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
        };
        mode(&d, 0o777);
        for (f, m) in [("rootrw", 0o666), ("rootro", 0o644)] {
            std::fs::write(d.join(f), "root\n").unwrap();
            mode(&d.join(f), m);
        }
        std::fs::create_dir(d.join("mnt")).unwrap();
        let out = run(std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "mode=0755,size=1m", "hp-conform"])
            .arg(d.join("mnt")));
        if !out.status.success() {
            eprintln!("SKIP the mount-point cases: mount failed: {}", stderr(&out));
            return None;
        }
        Some(Mounts(d))
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.join("mnt"))
            .status();
    }
}

/// Gives back write permission on everything under `dir` (the fixtures have a 0555 directory),
/// so it can be removed even when the tests do not run as root.
fn writable(dir: &Path) {
    let _ = std::process::Command::new("chmod")
        .arg("-R")
        .arg("u+rwX")
        .arg(dir)
        .status();
}

/// `case -> "result<TAB>state"` from hp-conform's output, with `dir` and `other` written as
/// `$DIR` and `$OTHER`; and the count it printed.
fn parse(out: &str, dir: &Path, other: Option<&Path>) -> (BTreeMap<String, String>, usize) {
    let mut cases = BTreeMap::new();
    let mut count = None;
    for line in out.lines() {
        if let Some(n) = line.strip_prefix("cases ") {
            count = Some(n.parse().unwrap());
            continue;
        }
        let mut l = line.replace(dir.to_str().unwrap(), "$DIR");
        if let Some(o) = other {
            l = l.replace(o.to_str().unwrap(), "$OTHER");
        }
        let (name, rest) = l
            .split_once('\t')
            .unwrap_or_else(|| panic!("not a case line: {line:?}"));
        assert!(
            cases.insert(name.to_string(), rest.to_string()).is_none(),
            "case {name} twice"
        );
    }
    let count = count.expect("no `cases N` line: hp-conform did not finish");
    assert_eq!(count, cases.len(), "`cases N` disagrees with the lines");
    (cases, count)
}

/// Environment variables for hallpass.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// Runs `hp-conform run DIR` (with hallpass's arguments before it, if any, and its
/// environment) as the variant's user in the project; returns its parsed output.
fn conform(
    s: &Scratch,
    hallpass_args: Option<(&[String], Vars)>,
    dir: &Path,
    other: Option<&OtherFs>,
    mounts: Option<&Mounts>,
) -> (BTreeMap<String, String>, usize) {
    let mut args: Vec<String> = vec![
        bin("hp-conform").display().to_string(),
        "run".into(),
        dir.display().to_string(),
    ];
    if let Some(o) = other {
        args.extend(["--xdev".into(), o.0.display().to_string()]);
    }
    if let Some(m) = mounts {
        args.extend(["--mounts".into(), m.0.display().to_string()]);
    }
    let out = match hallpass_args {
        None => run(s.command(&args[0]).args(&args[1..])),
        Some((h, env)) => {
            let mut c = s.hallpass(h.iter().chain(["--".to_string()].iter()).chain(&args));
            c.envs(env.iter().copied());
            run(c)
        }
    };
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{:?} failed ({}): {}\nlast lines: {}",
        hallpass_args,
        out.status,
        stderr(&out),
        text.lines().rev().take(2).collect::<Vec<_>>().join("\n")
    );
    parse(&text, dir, other.map(|o| o.0.as_path()))
}

/// Where strict mode differs from the kernel on purpose (docs/strict-mode.md), and what it
/// gives instead, only where the call succeeds natively: an `O_PATH` `openat2` is refused with
/// `ENOSYS`, since its descriptor cannot be installed in the target and its flags cannot be
/// left for the kernel to read again; a device node is not made (`EPERM`, as without
/// `CAP_MKNOD`), since in the project's Landlock domain the kernel could write the device
/// through it. Where the call fails natively, strict mode fails it alike.
const STRICT_DIFFERS: &[(&str, &str)] = &[
    ("openat2-no-symlinks-path-nofollow", "ENOSYS"),
    ("mknod-chr-null", "EPERM"),
    ("mknod-chr-rodir", "EPERM"),
    ("mknod-chr-high-dev", "EPERM"),
    ("mknod-blk-new", "EPERM"),
    ("mknodat-chr-dfd-new", "EPERM"),
];

#[test]
fn strict_mode_gives_what_the_kernel_gives() {
    conforms("--mode=strict", &[]);
}

/// Without Landlock (ABI 2) the daemon performs every write itself, those in the project
/// too, which the Landlock domain otherwise leaves to the kernel: the same table must hold.
#[test]
fn strict_mode_without_landlock_gives_what_the_kernel_gives() {
    conforms("--mode=strict", &[("HALLPASS_LANDLOCK_ABI", "1")]);
}

/// Lite mode lets the kernel make the calls, but answers itself where the arguments name
/// nothing, and performs binds and openat2: those must match too.
#[test]
fn lite_mode_gives_what_the_kernel_gives() {
    conforms("--mode=lite", &[]);
}

fn conforms(mode: &str, env: Vars) {
    let mode = mode.to_string();
    let mut diffs = Vec::new();
    for v in variants() {
        let s = Scratch::new("conform", v);
        // Same-length names, so that paths (an AF_UNIX address, say) fit or not alike.
        let native_dir = s.project.join("n");
        let super_dir = s.project.join("s");
        let native_other = OtherFs::new("n");
        let super_other = OtherFs::new("s");
        for o in [&native_other, &super_other].into_iter().flatten() {
            s.chown(&o.0);
        }
        let native_mounts = Mounts::new(&s.project, "n");
        let super_mounts = Mounts::new(&s.project, "s");

        let (want, count) = conform(
            &s,
            None,
            &native_dir,
            native_other.as_ref(),
            native_mounts.as_ref(),
        );
        assert!(count >= 150, "only {count} cases");
        // The table provokes what it claims to: natively, the errnos it is about do occur.
        let results: Vec<&str> = want
            .values()
            .map(|r| r.split('\t').next().unwrap())
            .collect();
        let mut expected = vec![
            "EEXIST",
            "ENOENT",
            "ENOTDIR",
            "EISDIR",
            "ELOOP",
            "ENAMETOOLONG",
            "ENOTEMPTY",
            "EINVAL",
            "EBADF",
            "EBUSY",
            "ok fd",
        ];
        if native_other.is_some() {
            expected.push("EXDEV");
        }
        if matches!(v.who, Who::Unprivileged { .. }) {
            expected.push("EACCES");
        }
        for e in expected {
            assert!(results.contains(&e), "{v:?}: no case gives {e} natively");
        }

        // The project is writable without asking: whatever differs is strict mode's doing.
        let mut args = vec![mode.clone(), "--prompt=deny".to_string()];
        if let Some(o) = &super_other {
            args.push(format!("--allow-path={}", o.0.display()));
        }
        let (got, _) = conform(
            &s,
            Some((&args, env)),
            &super_dir,
            super_other.as_ref(),
            super_mounts.as_ref(),
        );

        let before = diffs.len();
        for (name, w) in &want {
            let documented = STRICT_DIFFERS
                .iter()
                .find(|(n, _)| mode == "--mode=strict" && n == name);
            // The documented refusal where the call succeeds natively, and there only: a
            // device node strict mode made would look native, and be wrong.
            let refusal = documented.filter(|_| w.starts_with("ok")).map(|(_, r)| *r);
            match (got.get(name), refusal) {
                (Some(g), Some(r)) if g.split('\t').next() == Some(r) => {}
                (Some(g), Some(r)) => diffs.push(format!("{v:?} {name}: not refused ({r}): {g}")),
                (Some(g), None) if g == w => {}
                (Some(g), None) => diffs.push(format!("{v:?} {name}: {}", difference(w, g))),
                (None, _) => diffs.push(format!("{v:?} {name}: missing under {mode}")),
            }
        }
        for name in got.keys().filter(|n| !want.contains_key(*n)) {
            diffs.push(format!("{v:?} {name}: only under {mode}"));
        }
        eprintln!(
            "{v:?}: {count} cases, {} differ under {mode} {env:?}",
            diffs.len() - before
        );
        drop((native_mounts, super_mounts));
        writable(&s.project);
    }
    // Every variant's differences at once: they tell more together than the first alone.
    assert!(
        diffs.is_empty(),
        "{} cases differ from native under {mode} {env:?}:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// What differs between two `result<TAB>state` lines: the results, and the parts of the state
/// only one side has.
fn difference(native: &str, other: &str) -> String {
    let (rn, sn) = native.split_once('\t').unwrap_or((native, ""));
    let (ro, so) = other.split_once('\t').unwrap_or((other, ""));
    let parts = |s: &str| -> Vec<String> {
        s.split(" || ")
            .flat_map(|p| p.split(" | "))
            .map(str::to_string)
            .collect()
    };
    let (pn, po) = (parts(sn), parts(so));
    let mut out = if rn == ro {
        format!("both {rn}")
    } else {
        format!("native {rn}, supervised {ro}")
    };
    for p in pn.iter().filter(|p| !po.contains(p)) {
        out += &format!("\n    native only:     {p}");
    }
    for p in po.iter().filter(|p| !pn.contains(p)) {
        out += &format!("\n    supervised only: {p}");
    }
    out
}
