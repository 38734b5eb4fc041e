//! A profile's ask entries and allow patterns: what `--allow-path` and a profile give around
//! an ask entry, the ask entry takes back, and only that.

use super::*;

fn pat(s: &str) -> Pattern {
    Pattern::parse(s).unwrap()
}

/// A gemini-like profile: `~/.gemini/tmp` allowed but its `bin`; the slugs of `history`
/// allowed, what is in them asked but the marker; `~/.claude.json`'s temporary names.
fn policy(prompt: Prompt) -> Policy {
    Policy {
        protected: PathSet::new(["/home/me/.config/hallpass".into()]),
        denied: PathSet::default(),
        allowed: PathSet::new([
            "/home/me/.gemini/tmp".into(),
            "/home/me/.claude.json".into(),
            "/home/me/.tool".into(),
        ]),
        allowed_patterns: vec![
            pat("/home/me/.claude.json.tmp.*"),
            pat("/home/me/.gemini/history/*"),
            pat("/home/me/.gemini/history/*/.project_root"),
        ],
        asked: vec![
            pat("/home/me/.gemini/tmp/bin"),
            pat("/home/me/.gemini/history/*/*"),
            pat("/home/me/.tool/hooks"),
        ],
        implicit_dirs: PathSet::new(["/home/me/proj".into()]),
        implicit_files: Vec::new(),
        services: PathSet::default(),
        prompt,
    }
}

const NAMES: Call = Call {
    names: true,
    content: false,
    connect: false,
    makes_dir: false,
};

#[test]
fn ask_entries_take_back_what_is_allowed_around_them() {
    for (prompt, rest) in [
        (Prompt::Ask, (Decision::Ask, Reason::Policy)),
        (Prompt::Deny, (Decision::Deny, Reason::Unattended)),
        (Prompt::Allow, (Decision::Allow, Reason::Audit)),
    ] {
        let p = policy(prompt);
        let d = |path: &str| p.decide(Path::new(path), &Answered::none());
        let allowed = (Decision::Allow, Reason::Policy);
        for ok in [
            "/home/me/.gemini/tmp/proj/chats/s.json",
            "/home/me/.gemini/tmp/binx",
            "/home/me/.gemini/history/proj",
            "/home/me/.gemini/history/proj/.project_root",
            "/home/me/.claude.json",
            "/home/me/.claude.json.tmp.123.abc",
            "/home/me/.tool/state",
        ] {
            assert_eq!(d(ok), allowed, "{ok} under {prompt:?}");
        }
        for asked in [
            "/home/me/.gemini/tmp/bin",
            "/home/me/.gemini/tmp/bin/rg",
            "/home/me/.gemini/history/proj/.git/hooks/pre-commit",
            "/home/me/.gemini/history/proj/.gitconfig",
            "/home/me/.tool/hooks/x",
            // Patterns match within one name, and only the names they say.
            "/home/me/.claude.jsonx",
            "/home/me/.gemini/history",
        ] {
            assert_eq!(d(asked), rest, "{asked} under {prompt:?}");
        }
    }
}

#[test]
fn a_name_holding_an_ask_entry_keeps_it() {
    let p = policy(Prompt::Deny);
    let d = |paths: &[&str], call| {
        let paths: Vec<&Path> = paths.iter().map(Path::new).collect();
        p.decide_syscall(&paths, call, &Answered::none())
    };
    let refused = (Decision::Deny, Reason::Unattended, 0);
    // `mv x ~/.gemini/tmp` (RENAME_EXCHANGE with an allowed x): x's bin/rg would become
    // ~/.gemini/tmp/bin/rg.
    assert_eq!(d(&["/home/me/.gemini/tmp"], NAMES), refused);
    assert_eq!(
        d(&["/home/me/.claude.json.tmp.1", "/home/me/.tool"], NAMES),
        (Decision::Deny, Reason::Unattended, 1)
    );
    assert_eq!(d(&["/home/me/.gemini/history/proj"], NAMES), refused);
    // Below or beside it, names are free; and the directory's content is not its name.
    let allowed = (Decision::Allow, Reason::Policy, 0);
    assert_eq!(d(&["/home/me/.gemini/tmp/proj/a.json"], NAMES), allowed);
    assert_eq!(
        d(
            &["/home/me/.claude.json.tmp.1", "/home/me/.claude.json"],
            NAMES
        ),
        allowed
    );
    assert_eq!(d(&["/home/me/.gemini/tmp"], Call::CONTENT), allowed);
}

#[test]
fn the_deeper_entry_decides() {
    let mut p = policy(Prompt::Deny);
    let d = |p: &Policy, path: &str| p.decide(Path::new(path), &Answered::none());
    // An `--allow-path` naming what a profile asks, or a path in it, is the person's choice.
    p.allowed.push("/home/me/.gemini/tmp/bin/rg".into());
    p.allowed.push("/home/me/.tool/hooks".into());
    let allowed = (Decision::Allow, Reason::Policy);
    assert_eq!(d(&p, "/home/me/.gemini/tmp/bin/rg"), allowed);
    assert_eq!(d(&p, "/home/me/.tool/hooks/x"), allowed);
    let refused = (Decision::Deny, Reason::Unattended);
    assert_eq!(d(&p, "/home/me/.gemini/tmp/bin/other"), refused);
    // An ask entry takes nothing from the project, answers or rules, nor gives anything.
    p.asked.push(pat("/home/me/proj/hooks"));
    p.asked.push(pat("/home/me/elsewhere"));
    assert_eq!(
        d(&p, "/home/me/proj/hooks/x"),
        (Decision::Allow, Reason::Implicit)
    );
    assert_eq!(d(&p, "/home/me/elsewhere/x"), refused);
    let always = PathSet::new(["/home/me/.gemini/tmp/bin".into()]);
    let a = Answered {
        always: &always,
        ..Answered::none()
    };
    assert_eq!(
        p.decide(Path::new("/home/me/.gemini/tmp/bin/x"), &a),
        (Decision::Allow, Reason::Always)
    );
}

#[test]
fn landlock_roots_hold_no_ask_entry_and_no_pattern() {
    let p = policy(Prompt::Deny);
    // ~/.gemini/tmp holds tmp/bin; the patterns are performed; ~/.tool holds hooks.
    assert_eq!(
        p.landlock_roots(),
        [
            PathBuf::from("/home/me/proj"),
            PathBuf::from("/home/me/.claude.json")
        ]
    );
}

#[test]
fn a_directory_on_the_way_to_an_allowed_path_may_be_made() {
    let mut p = policy(Prompt::Deny);
    p.allowed.push("/home/me/.claude/projects".into());
    let mkdir = Call {
        makes_dir: true,
        ..Call::CONTENT
    };
    let d = |p: &Policy, path: &str, call| {
        p.decide_syscall(&[Path::new(path)], call, &Answered::none())
    };
    let allowed = (Decision::Allow, Reason::Policy, 0);
    let refused = (Decision::Deny, Reason::Unattended, 0);
    // `mkdir -p ~/.claude/projects` on a first run; `mkdir ~/.gemini/history/p` for the
    // marker a pattern allows in it.
    assert_eq!(d(&p, "/home/me/.claude", mkdir), allowed);
    assert_eq!(d(&p, "/home/me/.gemini/history", mkdir), allowed);
    // Made, not written, renamed or removed; and nothing beside the way.
    let open = Call::CONTENT;
    assert_eq!(d(&p, "/home/me/.claude", open), refused);
    assert_eq!(d(&p, "/home/me/.claude", NAMES), refused);
    assert_eq!(d(&p, "/home/me/.claude/commands", mkdir), refused);
    assert_eq!(d(&p, "/home/me/.gemini/history/p/.git", mkdir), refused);
    // What is denied stays denied.
    p.denied.push("/home/me/.claude".into());
    assert_eq!(
        d(&p, "/home/me/.claude", mkdir),
        (Decision::Deny, Reason::Policy, 0)
    );
}
