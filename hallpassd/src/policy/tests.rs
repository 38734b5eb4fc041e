use super::*;

fn policy(prompt: Prompt) -> Policy {
    Policy {
        protected: PathSet::new([
            "/home/me/.config/hallpass".into(),
            "/usr/bin/hallpass".into(),
        ]),
        denied: PathSet::new(["/home/me/proj/secret".into()]),
        allowed: PathSet::new([
            "/home/me/.cache/tool".into(),
            "/home/me/proj/secret/ok".into(),
        ]),
        allowed_patterns: Vec::new(),
        asked: Vec::new(),
        implicit_dirs: PathSet::new(["/home/me/proj".into(), "/tmp/hallpass-1".into()]),
        implicit_files: vec!["/dev/null".into(), "/dev/pts/3".into()],
        services: PathSet::new(["/dev/log".into(), "/run/me/editor.sock".into()]),
        prompt,
    }
}

#[test]
fn connections_are_decided_as_writes_but_for_the_listed_services() {
    const CONNECT: Call = Call {
        names: false,
        content: false,
        connect: true,
        makes_dir: false,
    };
    let bus = Path::new("/run/user/1000/bus");
    let never = PathSet::new(["/run/docker.sock".into()]);
    let always = PathSet::new(["/run/user/1000/bus".into()]);
    let a = Answered {
        never: &never,
        ..Answered::none()
    };
    let d = |p: &Policy, path: &str, a: &Answered| p.decide_syscall(&[Path::new(path)], CONNECT, a);
    let cases = [
        (Prompt::Ask, (Decision::Ask, Reason::Policy, 0)),
        (Prompt::Allow, (Decision::Allow, Reason::Service, 0)),
        (Prompt::Deny, (Decision::Deny, Reason::Service, 0)),
    ];
    for (prompt, want) in cases {
        let p = policy(prompt);
        assert_eq!(d(&p, "/run/user/1000/bus", &a), want, "{prompt:?}");
        let listed = (Decision::Allow, Reason::Policy, 0);
        assert_eq!(d(&p, "/dev/log", &a), listed);
        assert_eq!(d(&p, "/run/me/editor.sock", &a), listed);
        // The session's own sockets, and the rules, as for a write.
        let own = (Decision::Allow, Reason::Implicit, 0);
        assert_eq!(d(&p, "/home/me/proj/s.sock", &a), own);
        assert_eq!(d(&p, "/tmp/hallpass-1/s", &a), own);
        let denied = (Decision::Deny, Reason::Never, 0);
        assert_eq!(d(&p, "/run/docker.sock", &a), denied);
        let a = Answered {
            always: &always,
            ..Answered::none()
        };
        let held = (Decision::Allow, Reason::Always, 0);
        assert_eq!(p.decide_syscall(&[bus], CONNECT, &a), held);
        // A listed service is not exempt from hallpass's own protection.
        assert_eq!(
            d(&p, "/home/me/.config/hallpass/x", &a),
            (Decision::Deny, Reason::Protected, 0)
        );
    }
}

#[test]
fn landlock_roots_hold_no_denied_path() {
    let p = policy(Prompt::Deny);
    let roots: Vec<String> = p
        .landlock_roots()
        .iter()
        .map(|r| r.display().to_string())
        .collect();
    // The project holds `secret` (denied), and `secret/ok` lies below it: both left
    // out; so is the terminal. The rest of the static allowlist is in.
    assert_eq!(
        roots,
        ["/tmp/hallpass-1", "/home/me/.cache/tool", "/dev/null"]
    );
    // A protected path above a root, or the root itself, leaves it out too.
    let mut p = policy(Prompt::Deny);
    p.protected.push("/tmp".into());
    p.protected.push("/dev/null".into());
    let roots = p.landlock_roots();
    assert!(!roots
        .iter()
        .any(|r| r.starts_with("/tmp") || r == Path::new("/dev/null")));
    assert!(roots.contains(&PathBuf::from("/home/me/.cache/tool")));
}

fn d(p: &Policy, path: &str) -> (Decision, Reason) {
    p.decide(Path::new(path), &Answered::none())
}

#[test]
fn order_of_rules() {
    for prompt in [Prompt::Ask, Prompt::Allow, Prompt::Deny] {
        let p = policy(prompt);
        assert_eq!(
            d(&p, "/home/me/.config/hallpass/rules"),
            (Decision::Deny, Reason::Protected)
        );
        assert_eq!(
            d(&p, "/home/me/.config/hallpass"),
            (Decision::Deny, Reason::Protected)
        );
        assert_eq!(
            d(&p, "/usr/bin/hallpass"),
            (Decision::Deny, Reason::Protected)
        );
        // --deny-path beats the project and a more specific --allow-path.
        assert_eq!(
            d(&p, "/home/me/proj/secret/ok/x"),
            (Decision::Deny, Reason::Policy)
        );
        assert_eq!(
            d(&p, "/home/me/proj/src/main.rs"),
            (Decision::Allow, Reason::Implicit)
        );
        assert_eq!(d(&p, "/home/me/proj"), (Decision::Allow, Reason::Implicit));
        assert_eq!(
            d(&p, "/tmp/hallpass-1/x"),
            (Decision::Allow, Reason::Implicit)
        );
        assert_eq!(d(&p, "/dev/null"), (Decision::Allow, Reason::Implicit));
        assert_eq!(d(&p, "/dev/pts/3"), (Decision::Allow, Reason::Implicit));
        assert_eq!(
            d(&p, "/home/me/.cache/tool/a/b"),
            (Decision::Allow, Reason::Policy)
        );
    }
}

#[test]
fn the_rest_follows_the_prompt() {
    let cases = [
        (Prompt::Allow, (Decision::Allow, Reason::Audit)),
        (Prompt::Deny, (Decision::Deny, Reason::Unattended)),
        (Prompt::Ask, (Decision::Ask, Reason::Policy)),
    ];
    for (prompt, want) in cases {
        let p = policy(prompt);
        for path in [
            "/home/me/outside",
            "/",
            "/dev/pts/4",
            "/dev/null/x",
            "/home/me/projx",
            "/tmp/hallpass-10",
        ] {
            assert_eq!(d(&p, path), want, "{path} under {prompt:?}");
        }
    }
}

/// A rename, an unlink, a link: the syscalls that change names.
const NAMES: Call = Call {
    names: true,
    content: false,
    connect: false,
    makes_dir: false,
};
/// An open for writing.
const OPEN: Call = Call {
    names: false,
    content: true,
    connect: false,
    makes_dir: false,
};

#[test]
fn parents_of_denied_paths_keep_their_names() {
    let never = PathSet::new(["/home/me/proj/gen/out".into()]);
    let all = PathSet::new(["/".into()]);
    // Whatever else allows it: the project, an "always" rule for everything, audit.
    let a = Answered {
        never: &never,
        always: &all,
        ..Answered::none()
    };
    for prompt in [Prompt::Ask, Prompt::Allow, Prompt::Deny] {
        let p = policy(prompt);
        let d = |paths: &[&str]| {
            let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
            p.decide_syscall(&paths, NAMES, &a)
        };
        let deny = |r, i| (Decision::Deny, r, i);
        // Each with the reason the denied path below it gets.
        assert_eq!(d(&["/home/me/.config"]), deny(Reason::Protected, 0));
        assert_eq!(d(&["/home"]), deny(Reason::Protected, 0));
        assert_eq!(d(&["/usr"]), deny(Reason::Protected, 0));
        assert_eq!(d(&["/"]), deny(Reason::Protected, 0));
        assert_eq!(d(&["/home/me/proj"]), deny(Reason::Policy, 0));
        assert_eq!(d(&["/home/me/proj/gen"]), deny(Reason::Never, 0));
        // Source and destination: `mv evil gen` where gen is absent makes gen/out.
        let evil = "/home/me/proj/evil";
        assert_eq!(d(&[evil, "/home/me/proj/gen"]), deny(Reason::Never, 1));
        assert_eq!(d(&["/home/me/proj/gen", evil]), deny(Reason::Never, 0));
        // The denied paths themselves, and what is below them, as before.
        assert_eq!(d(&["/home/me/proj/secret"]), deny(Reason::Policy, 0));
        assert_eq!(d(&["/home/me/proj/gen/out/x"]), deny(Reason::Never, 0));
        // Siblings and look-alikes keep their names free.
        let allowed = (Decision::Allow, Reason::Implicit, 0);
        for free in [
            "/home/me/proj/src",
            "/home/me/proj/secretx",
            "/home/me/proj/gen/other",
            "/home/me/proj/ge",
        ] {
            assert_eq!(d(&[free]), allowed, "{free}");
        }
        assert_eq!(
            d(&["/home/me/.configx"]),
            (Decision::Allow, Reason::Always, 0)
        );
    }
}

#[test]
fn the_implicit_devices_are_written_not_renamed_or_changed() {
    let p = policy(Prompt::Deny);
    let a = Answered::none();
    let metadata = Call {
        names: false,
        content: false,
        connect: false,
        makes_dir: false,
    };
    for dev in ["/dev/null", "/dev/pts/3"] {
        let d = |call| p.decide_syscall(&[Path::new(dev)], call, &a);
        assert_eq!(d(OPEN), (Decision::Allow, Reason::Implicit, 0), "{dev}");
        assert_eq!(d(NAMES), (Decision::Deny, Reason::Unattended, 0), "{dev}");
        assert_eq!(
            d(metadata),
            (Decision::Deny, Reason::Unattended, 0),
            "{dev}"
        );
    }
    // The project's files take any write.
    let d = p.decide_syscall(&[Path::new("/home/me/proj/f")], metadata, &a);
    assert_eq!(d, (Decision::Allow, Reason::Implicit, 0));
}

#[test]
fn other_writes_of_parents_are_decided_as_before() {
    // mkdir, chmod, an open: a parent keeps its name, and what lies below it is unchanged.
    let never = PathSet::new(["/home/me/proj/gen/out".into()]);
    let a = Answered {
        never: &never,
        ..Answered::none()
    };
    let p = policy(Prompt::Deny);
    let d = |path: &str| p.decide_syscall(&[Path::new(path)], OPEN, &a);
    assert_eq!(
        d("/home/me/proj/gen"),
        (Decision::Allow, Reason::Implicit, 0)
    );
    assert_eq!(d("/home/me/proj"), (Decision::Allow, Reason::Implicit, 0));
    assert_eq!(
        d("/home/me/.config"),
        (Decision::Deny, Reason::Unattended, 0)
    );
    assert_eq!(
        d("/home/me/proj/gen/out"),
        (Decision::Deny, Reason::Never, 0)
    );
}

#[test]
fn component_boundaries() {
    let s = PathSet::new(["/a/b".into()]);
    assert!(s.covers(Path::new("/a/b")));
    assert!(s.covers(Path::new("/a/b/c")));
    assert!(!s.covers(Path::new("/a/bc")));
    assert!(!s.covers(Path::new("/a")));
    assert!(PathSet::new(["/".into()]).covers(Path::new("/etc")));
    assert!(PathSet::new(["/".into()]).covers(Path::new("/")));
    assert!(!s.covers(Path::new("/a/")));
    assert!(!s.covers(Path::new("/")));
    // What holds a path of the set: itself and its parents.
    for parent in ["/a/b", "/a", "/"] {
        assert!(s.holds(Path::new(parent)), "{parent}");
    }
    for other in ["/a/bc", "/a/b/c", "/b", "/a/"] {
        assert!(!s.holds(Path::new(other)), "{other}");
    }
}

#[test]
fn answers_rank_with_the_rules() {
    let p = policy(Prompt::Ask);
    let never = PathSet::new(["/home/me/proj/gen".into(), "/home/me/.npm".into()]);
    let always = PathSet::new(["/home/me/.npm/_cacache".into(), "/opt/a".into()]);
    let now = boot_time();
    let timed = [
        (
            PathBuf::from("/srv/t"),
            now + std::time::Duration::from_secs(60),
        ),
        (PathBuf::from("/srv/old"), now),
    ];
    let a = Answered {
        never: &never,
        always: &always,
        timed: &timed,
        now,
    };
    let d = |path: &str| p.decide(Path::new(path), &a);
    // "never" beats the project and a more specific "always".
    assert_eq!(d("/home/me/proj/gen/x"), (Decision::Deny, Reason::Never));
    assert_eq!(
        d("/home/me/.npm/_cacache/x"),
        (Decision::Deny, Reason::Never)
    );
    // The always-denied set and --deny-path beat "always".
    let all = PathSet::new(["/".into()]);
    let b = Answered { always: &all, ..a };
    assert_eq!(
        p.decide(Path::new("/home/me/.config/hallpass/r"), &b),
        (Decision::Deny, Reason::Protected)
    );
    assert_eq!(
        p.decide(Path::new("/home/me/proj/secret/x"), &b),
        (Decision::Deny, Reason::Policy)
    );
    assert_eq!(d("/home/me/proj/x"), (Decision::Allow, Reason::Implicit));
    assert_eq!(d("/opt/a/b"), (Decision::Allow, Reason::Always));
    assert_eq!(d("/srv/t/x"), (Decision::Allow, Reason::Timed));
    // An expired grant asks again.
    assert_eq!(d("/srv/old/x"), (Decision::Ask, Reason::Policy));
    assert_eq!(d("/opt/ab"), (Decision::Ask, Reason::Policy));
}

#[test]
fn two_paths_take_the_worst() {
    let p = policy(Prompt::Deny);
    let inside = Path::new("/home/me/proj/a");
    let outside = Path::new("/home/me/b");
    let cached = Path::new("/home/me/.cache/tool/c");
    assert_eq!(
        p.decide_all(&[inside, inside], &Answered::none()),
        (Decision::Allow, Reason::Implicit, 0)
    );
    assert_eq!(
        p.decide_all(&[outside, inside], &Answered::none()),
        (Decision::Deny, Reason::Unattended, 0)
    );
    assert_eq!(
        p.decide_all(&[inside, outside], &Answered::none()),
        (Decision::Deny, Reason::Unattended, 1)
    );
    assert_eq!(
        p.decide_all(&[inside, cached], &Answered::none()),
        (Decision::Allow, Reason::Policy, 1)
    );
    let p = policy(Prompt::Ask);
    assert_eq!(
        p.decide_all(
            &[outside, Path::new("/usr/bin/hallpass")],
            &Answered::none()
        ),
        (Decision::Deny, Reason::Protected, 1)
    );
    assert_eq!(
        p.decide_all(&[inside, outside], &Answered::none()),
        (Decision::Ask, Reason::Policy, 1)
    );
}

/// Regression: in lite mode a command moved the project into its `$TMPDIR` and put a symlink
/// to a directory outside in its place; the next `cd PROJECT && hallpass` wrote there.
#[test]
fn the_names_of_the_project_and_tmpdir_are_not_theirs() {
    let never = PathSet::default();
    let always = PathSet::new(["/home/me/work".into()]);
    for prompt in [Prompt::Ask, Prompt::Allow, Prompt::Deny] {
        let p = Policy {
            protected: PathSet::new(["/home/me/.config/hallpass".into()]),
            denied: PathSet::default(),
            allowed: PathSet::new(["/home/me/.cache/tool".into(), "/srv/a/b".into()]),
            allowed_patterns: Vec::new(),
            asked: Vec::new(),
            implicit_dirs: PathSet::new(["/home/me/src/proj".into(), "/tmp/hallpass-1".into()]),
            implicit_files: vec!["/dev/null".into()],
            services: PathSet::default(),
            prompt,
        };
        let by_prompt = p.decide(Path::new("/elsewhere"), &Answered::none());
        let a = Answered {
            never: &never,
            always: &always,
            ..Answered::none()
        };
        let d = |call: Call, paths: &[&str]| {
            let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
            let (d, r, i) = p.decide_syscall(&paths, call, &a);
            ((d, r), i)
        };
        let outside = (by_prompt, 0);
        // `mv PROJECT $TMPDIR/x`, `rmdir PROJECT`, `ln -s /outside PROJECT`, a rename onto it.
        let (project, tmp) = ("/home/me/src/proj", "/tmp/hallpass-1/x");
        assert_eq!(d(NAMES, &[project, tmp]), outside, "{prompt:?}");
        assert_eq!(d(NAMES, &[project]), outside, "{prompt:?}");
        assert_eq!(d(NAMES, &[tmp, project]), (by_prompt, 1), "{prompt:?}");
        // $TMPDIR's own name, a directory above either, or above an --allow-path.
        assert_eq!(d(NAMES, &["/tmp/hallpass-1"]), outside, "{prompt:?}");
        assert_eq!(d(NAMES, &["/home/me/src"]), outside, "{prompt:?}");
        assert_eq!(d(NAMES, &["/srv/a"]), outside, "{prompt:?}");
        // A person's lasting answer still covers it.
        assert_eq!(
            d(NAMES, &["/home/me/work"]),
            ((Decision::Allow, Reason::Always), 0)
        );
        // Inside: renames, removals and links as before; the roots' other writes too.
        let implicit = ((Decision::Allow, Reason::Implicit), 0);
        assert_eq!(
            d(NAMES, &["/home/me/src/proj/a", "/home/me/src/proj/b"]),
            implicit
        );
        assert_eq!(d(NAMES, &["/home/me/src/proj/a", tmp]), implicit);
        assert_eq!(d(NAMES, &["/home/me/src/proj/sub"]), implicit);
        assert_eq!(d(OPEN, &["/home/me/src/proj/f"]), implicit);
        assert_eq!(d(OPEN, &[project]), implicit);
        let metadata = Call {
            content: false,
            ..OPEN
        };
        assert_eq!(d(metadata, &[project]), implicit);
        // An --allow-path itself keeps its grant: a file there is replaced atomically.
        let policy = ((Decision::Allow, Reason::Policy), 0);
        assert_eq!(d(NAMES, &["/home/me/.cache/tool"]), policy);
        assert_eq!(d(NAMES, &["/home/me/.cache/tool/x"]), policy);
    }
}
