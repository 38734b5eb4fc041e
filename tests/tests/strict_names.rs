//! Strict mode: what the name of an object the daemon holds proves. A decision path kept for
//! a descriptor's object, and the kernel's name of it, against another process (outside the
//! session) that moves, links, unlinks or unmounts what the command holds.

use std::path::Path;

use hallpass_tests::*;

/// A descriptor's metadata is decided on where its file is now: the path kept for it (tar
/// sets three things on each file through one descriptor) is checked to be still its name,
/// since a process outside the session may move it out of the project meanwhile.
#[test]
fn a_file_moved_out_of_the_project_by_another_process_is_decided_where_it_is() {
    let s = Scratch::new("strict-moved-fd", variants()[0]);
    let (inside, outside) = (s.project.join("f"), s.outside.join("f"));
    let out = fchmod_again_after(&s, "f", &s.project, || {
        std::fs::rename(&inside, &outside).unwrap()
    });
    assert_eq!(out, "refused\n");
    assert_eq!(mode_of(&outside), 0o600);
}

/// The kernel names a file that lost the name it was decided by " (deleted)", whatever other
/// name it has: a decision path ending so proves nothing. A file of the project called
/// `a (deleted)`, renamed `a` by another process, linked outside and unlinked in the project:
/// the kernel's name of it is `PROJECT/a (deleted)` again, the path kept for it.
#[test]
fn a_name_marked_deleted_does_not_prove_a_kept_path() {
    let s = Scratch::new("strict-deleted-name", variants()[0]);
    let outside = s.outside.join("a");
    let out = fchmod_again_after(&s, "a (deleted)", &s.project, || {
        std::fs::rename(s.project.join("a (deleted)"), s.project.join("a")).unwrap();
        std::fs::hard_link(s.project.join("a"), &outside).unwrap();
        std::fs::remove_file(s.project.join("a")).unwrap();
    });
    assert_eq!(out, "refused\n");
    assert_eq!(mode_of(&outside), 0o600);
}

/// Under strict mode, `--prompt=deny`: opens project file `name`, `fchmod`s it to 600
/// (allowed: its decision path is kept), lets `step` run outside the session, then tries
/// `fchmod` 666 on the same descriptor. What it says: `changed` or `refused`. `cwd`: where
/// this process sees the command's working directory (the project, unless `step` moves it).
fn fchmod_again_after(s: &Scratch, name: &str, cwd: &Path, step: impl FnOnce()) -> String {
    std::fs::write(s.project.join(name), "x").unwrap();
    let script = format!(
        "import os, time\n\
        fd = os.open({name:?}, os.O_RDONLY)\n\
        os.fchmod(fd, 0o600)\n\
        open('ready', 'w').close()\n\
        while not os.path.exists('moved'): time.sleep(0.05)\n\
        try:\n    os.fchmod(fd, 0o666); print('changed')\n\
        except PermissionError: print('refused')\n"
    );
    let child = s
        .hallpass([
            "--mode=strict",
            "--prompt=deny",
            "--",
            "python3",
            "-c",
            &script,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !cwd.join("ready").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the script never got ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Done by this process, outside the session: the daemon does not see it.
    step();
    std::fs::write(cwd.join("moved"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

fn mode_of(p: &std::path::Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions()) & 0o7777
}

#[test]
fn another_mount_namespace_is_not_reached_through_proc_root() {
    if !am_root() {
        eprintln!("SKIP: needs root (to make a mount namespace outside the session)");
        return;
    }
    let s = Scratch::new("strict-mntns", variants()[0]);
    let fake = s.project.join("fake");
    std::fs::create_dir_all(&fake).unwrap();
    // Unsupervised, in a mount namespace of its own: the outside directory is mounted over
    // the project's `fake` there.
    let mut other = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount --bind {} {} && echo ready && exec sleep 60",
            s.outside.display(),
            fake.display()
        ))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(other.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    let through = format!("/proc/{}/root{}/escaped", other.id(), fake.display());
    let out = run(s.hallpass([
        "--mode=strict",
        "--prompt=deny",
        "--",
        "sh",
        "-c",
        &format!("echo x > {through} && echo wrote || echo refused"),
    ]));
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(stdout(&out), "refused\n", "{}", stderr(&out));
    assert!(!s.outside.join("escaped").exists());
    assert!(!fake.join("escaped").exists());
}

/// Unmounts `path` lazily on drop (a test that fails leaves no mount behind).
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A project that is a bind mount, detached (`umount -l`) by root outside the session while
/// the command holds a file of it: the kernel now names that file from the detached mount's
/// own root, and a file moved to `SOURCE/PROJECT_PATH/a` is named `PROJECT_PATH/a`, the
/// decision path kept for it. That name proves nothing on a detached mount.
#[test]
fn a_detached_mount_does_not_prove_a_kept_path() {
    if !am_root() {
        eprintln!("SKIP: needs root (to mount)");
        return;
    }
    let s = Scratch::new("strict-detached", variants()[0]);
    let src = s.root.join("bmsrc");
    std::fs::create_dir_all(&src).unwrap();
    let ok = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&src)
        .arg(&s.project)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut mounted = Some(Mounted(s.project.clone()));
    let inner = src.join(s.project.strip_prefix("/").unwrap());
    // After the unmount, the command's cwd is the detached mount's root: the source.
    let out = fchmod_again_after(&s, "a", &src, || {
        drop(mounted.take());
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::rename(src.join("a"), inner.join("a")).unwrap();
    });
    assert_eq!(out, "refused\n");
    assert_eq!(mode_of(&inner.join("a")), 0o600);
}
