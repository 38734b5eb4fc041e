//! The question logic against a stand-in session: what each answer does to the waiting
//! notifications, the log and the grants; questions joined, settled by a lasting answer,
//! swept when nobody can answer them.

use super::*;
use std::sync::atomic::AtomicBool;

/// A session as questions see it. It decides as a session would for paths no static rule
/// covers: a lasting "never" rule denies, an "always" rule or a grant allows, else ask. Every
/// call is written down.
struct Stand {
    home: PathBuf,
    granted: Mutex<Vec<PathBuf>>,
    live: AtomicBool,
    /// Notifications no longer waiting (their process was killed).
    gone: Mutex<Vec<u64>>,
    /// Its log file is full: no line can be written.
    log_full: AtomicBool,
    calls: Mutex<Vec<String>>,
}

impl Stand {
    fn new() -> Arc<Stand> {
        Arc::new(Stand {
            home: PathBuf::from("/home/me"),
            granted: Mutex::new(Vec::new()),
            live: AtomicBool::new(true),
            gone: Mutex::new(Vec::new()),
            log_full: AtomicBool::new(false),
            calls: Mutex::new(Vec::new()),
        })
    }

    fn note(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }

    /// The calls made since the last look.
    fn calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl Host for Stand {
    fn hold(&self, n: &Notif) -> Result<Option<usize>, JournalFull> {
        // The journal of the stand-in has room for ids below 1,000.
        if n.id >= 1000 {
            return Err(JournalFull);
        }
        Ok(Some(n.id as usize))
    }

    fn release(&self, slot: usize, id: u64) {
        self.note(format!("release {slot} {id}"));
    }

    fn home(&self) -> &Path {
        &self.home
    }

    fn asked(&self) {
        self.note("asked".into());
    }

    fn decide(&self, _: &str, files: &[&Path], rules: &rules::Rules) -> (Decision, Reason, usize) {
        let granted = self.granted.lock().unwrap();
        for (i, f) in files.iter().enumerate() {
            if rules.never.covers(f) {
                return (Decision::Deny, Reason::Never, i);
            }
        }
        let allowed =
            |f: &&Path| rules.always.covers(f) || granted.iter().any(|g| f.starts_with(g));
        match files.iter().position(|f| !allowed(f)) {
            Some(i) => (Decision::Ask, Reason::Unattended, i),
            None if files.iter().all(|f| rules.always.covers(f)) => {
                (Decision::Allow, Reason::Always, 0)
            }
            None => (Decision::Allow, Reason::Timed, 0),
        }
    }

    fn grant_for_a_while(&self, scope: PathBuf) {
        self.note(format!("timed {}", scope.display()));
        self.granted.lock().unwrap().push(scope);
    }

    fn grant_for_the_session(&self, scope: PathBuf) {
        self.note(format!("session {}", scope.display()));
        self.granted.lock().unwrap().push(scope);
    }

    fn answered_once(&self, tid: i32, syscall: &str, paths: &[PathBuf], d: Decision) {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        self.note(format!("burst {tid} {syscall} {} {d:?}", paths.join(" ")));
    }

    fn count(&self, decision: Decision) {
        self.note(format!("count {decision:?}"));
    }

    fn record(&self, _: i32, _: &str, syscall: &str, path: &str, d: Decision, r: Reason) -> bool {
        if self.log_full.load(Ordering::Relaxed) {
            self.note(format!("lost {syscall} {path} {d:?} {}", r.as_str()));
            return false;
        }
        self.note(format!("log {syscall} {path} {d:?} {}", r.as_str()));
        true
    }

    fn reply(&self, id: u64, reply: Reply) {
        self.note(format!("reply {id} {reply:?}"));
    }

    fn perform(self: Arc<Self>, id: u64, tid: i32, _: Write, slot: Option<usize>) {
        self.note(format!("perform {id} {tid} {slot:?}"));
    }

    fn live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    fn waiting(&self, id: u64) -> bool {
        !self.gone.lock().unwrap().contains(&id)
    }
}

/// The questions of a daemon whose rules file is in a fresh directory.
fn questions(name: &str) -> Questions {
    let dir = std::env::temp_dir().join(format!("hallpass-ask-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Questions::new(Arc::new(rules::Store::open(dir.join("rules"))))
}

fn notif(id: u64, tid: u32) -> Notif {
    Notif {
        id,
        pid: tid,
        ..Notif::default()
    }
}

/// Asks, for notification `id` of thread `tid` in `session`, about an `openat` of `path`;
/// the question's id.
fn ask(q: &Questions, session: &Arc<Stand>, sid: u64, id: u64, tid: u32, path: &str) -> u64 {
    let question = Question {
        session_id: sid,
        pid: tid as i32,
        syscall: "openat".into(),
        path: path.into(),
        scope: Path::new(path)
            .parent()
            .unwrap()
            .to_string_lossy()
            .into_owned(),
        ..Question::default()
    };
    let host: Arc<dyn Host> = session.clone();
    q.ask(
        &host,
        &notif(id, tid),
        question,
        vec![PathBuf::from(path)],
        None,
    )
    .unwrap();
    let (list, _) = q.subscribe(sid);
    // The newest question about it: ids only grow.
    list.iter()
        .filter(|x| x.path == path)
        .map(|x| x.id)
        .max()
        .expect("asked")
}

#[test]
fn allowed_once_continues_and_denied_fails_with_eacces() {
    let (q, s) = (questions("once"), Stand::new());
    let a = ask(&q, &s, 1, 7, 70, "/w/a");
    let b = ask(&q, &s, 1, 8, 80, "/w/b");
    assert_eq!(s.calls(), ["asked", "asked"]);
    assert_eq!(q.answer(a, Answer::Once, None).unwrap(), None);
    assert_eq!(
        s.calls(),
        [
            "log openat /w/a Allow once",
            "count Allow",
            "burst 70 openat /w/a Allow",
            "reply 7 Continue",
            "release 7 7"
        ]
    );
    q.answer(b, Answer::Deny, None).unwrap();
    assert_eq!(
        s.calls(),
        [
            "log openat /w/b Deny denied",
            "count Deny",
            "burst 80 openat /w/b Deny",
            "reply 8 Fail(13)",
            "release 8 8"
        ]
    );
    assert!(matches!(
        q.answer(a, Answer::Once, None),
        Err(AnswerError::NotPending(_))
    ));
    assert!(matches!(
        q.answer(b, Answer::Unspecified, None),
        Err(AnswerError::NoAnswer)
    ));
}

#[test]
fn the_same_write_asked_again_joins_its_question_and_one_answer_settles_both() {
    let (q, s) = (questions("join"), Stand::new());
    let a = ask(&q, &s, 1, 7, 70, "/w/a");
    // The same thread, the same write (a syscall restarted after a signal).
    assert_eq!(ask(&q, &s, 1, 9, 70, "/w/a"), a);
    // Another thread's is a question of its own.
    assert_ne!(ask(&q, &s, 1, 10, 71, "/w/a"), a);
    assert_eq!(q.subscribe(1).0.len(), 2);
    s.calls();
    q.answer(a, Answer::Once, None).unwrap();
    let calls = s.calls();
    assert!(calls.contains(&"reply 7 Continue".to_string()), "{calls:?}");
    assert!(calls.contains(&"reply 9 Continue".to_string()), "{calls:?}");
    assert!(
        !calls.iter().any(|c| c.starts_with("reply 10")),
        "{calls:?}"
    );
}

#[test]
fn a_timed_answer_settles_the_questions_it_covers_in_its_own_session_only() {
    let q = questions("timed");
    let (s1, s2) = (Stand::new(), Stand::new());
    let a = ask(&q, &s1, 1, 1, 10, "/w/x/a");
    ask(&q, &s1, 1, 2, 11, "/w/x/b");
    ask(&q, &s1, 1, 3, 12, "/w/y/c");
    ask(&q, &s2, 2, 4, 20, "/w/x/d");
    s1.calls();
    s2.calls();
    q.answer(a, Answer::Timed, Some(PathBuf::from("/w/x")))
        .unwrap();
    let calls = s1.calls();
    assert_eq!(calls[0], "timed /w/x");
    assert!(calls.contains(&"reply 1 Continue".into()), "{calls:?}");
    assert!(
        calls.contains(&"log openat /w/x/b Allow timed".into()),
        "{calls:?}"
    );
    assert!(calls.contains(&"reply 2 Continue".into()), "{calls:?}");
    assert!(
        !calls.iter().any(|c| c.starts_with("reply 3")),
        "outside the scope: {calls:?}"
    );
    assert_eq!(q.subscribe(1).0.len(), 1);
    assert_eq!(
        q.subscribe(2).0.len(),
        1,
        "another session's question settled by a timed answer"
    );
    assert!(s2.calls().is_empty());
}

#[test]
fn a_lasting_answer_may_not_cover_the_home_directory() {
    let (q, s) = (questions("home"), Stand::new());
    let a = ask(&q, &s, 1, 1, 10, "/home/me/.bashrc");
    for scope in ["/home/me", "/home", "/", "relative", "/home/me/../me"] {
        let r = q.answer(a, Answer::Always, Some(PathBuf::from(scope)));
        assert!(
            matches!(r, Err(AnswerError::Scope { .. })),
            "{scope}: {r:?}"
        );
    }
    // A scope that does not hold the path.
    let r = q.answer(a, Answer::Never, Some(PathBuf::from("/etc")));
    assert!(matches!(r, Err(AnswerError::Scope { .. })));
    // Still open, and "once" takes no scope.
    assert_eq!(q.subscribe(1).0.len(), 1);
    q.answer(a, Answer::Once, Some(PathBuf::from("/"))).unwrap();
}

#[test]
fn a_never_rule_made_meanwhile_wins_over_an_allow() {
    let (q, s) = (questions("never"), Stand::new());
    let a = ask(&q, &s, 1, 1, 10, "/w/a");
    let b = ask(&q, &s, 1, 2, 11, "/w/b");
    // Another question's "never" answer covers the first one's path too.
    q.answer(b, Answer::Never, Some(PathBuf::from("/w")))
        .unwrap();
    s.calls();
    // Settled already by the rule, as denied.
    assert!(matches!(
        q.answer(a, Answer::Once, None),
        Err(AnswerError::NotPending(_))
    ));
    let c = ask(&q, &s, 1, 3, 12, "/v/c");
    q.answer(c, Answer::Always, Some(PathBuf::from("/v")))
        .unwrap();
    q.answer(ask(&q, &s, 1, 4, 13, "/v/d"), Answer::Deny, None)
        .unwrap();
    let calls = s.calls();
    assert!(
        calls.contains(&"log openat /v/c Allow always".into()),
        "{calls:?}"
    );
    assert!(calls.contains(&"reply 4 Fail(13)".into()), "{calls:?}");
}

#[test]
fn a_full_journal_asks_nothing() {
    let (q, s) = (questions("full"), Stand::new());
    let host: Arc<dyn Host> = s.clone();
    let question = Question {
        session_id: 1,
        path: "/w/a".into(),
        ..Question::default()
    };
    let r = q.ask(&host, &notif(1000, 5), question, vec![], None);
    assert!(matches!(r, Err(NotAsked::JournalFull)), "{r:?}");
    assert!(q.subscribe(1).0.is_empty());
}

#[test]
fn a_session_keeps_a_bounded_number_of_questions_open() {
    let (q, s) = (questions("many"), Stand::new());
    for i in 0..max_open() as u64 {
        ask(&q, &s, 1, i, 10 + i as u32, &format!("/w/{i}"));
    }
    let host: Arc<dyn Host> = s.clone();
    let one_more = Question {
        session_id: 1,
        path: "/w/more".into(),
        ..Question::default()
    };
    let r = q.ask(&host, &notif(999, 5), one_more.clone(), vec![], None);
    assert!(matches!(r, Err(NotAsked::TooMany(_))), "{r:?}");
    // Another session's are its own.
    let other = Question {
        session_id: 2,
        ..one_more
    };
    q.ask(&host, &notif(998, 6), other, vec![], None).unwrap();
}

#[test]
fn questions_nobody_can_answer_are_swept_denied() {
    let q = questions("sweep");
    let (s1, s2) = (Stand::new(), Stand::new());
    ask(&q, &s1, 1, 1, 10, "/w/a");
    ask(&q, &s1, 1, 2, 11, "/w/b");
    ask(&q, &s2, 2, 3, 20, "/w/c");
    s1.calls();
    s2.calls();
    q.sweep();
    assert!(s1.calls().is_empty(), "swept a question still waiting");
    // Its process was killed: the notification is gone.
    s1.gone.lock().unwrap().push(2);
    // Its session ended.
    s2.live.store(false, Ordering::Relaxed);
    let (_, mut events) = q.subscribe(0);
    q.sweep();
    assert_eq!(
        s1.calls(),
        [
            "reply 2 Fail(13)",
            "release 2 2",
            "log openat /w/b Deny unanswered"
        ]
    );
    assert_eq!(
        s2.calls(),
        [
            "reply 3 Fail(13)",
            "release 3 3",
            "log openat /w/c Deny unanswered"
        ]
    );
    assert_eq!(q.subscribe(0).0.len(), 1);
    for _ in 0..2 {
        let e = events.try_recv().unwrap();
        assert!(matches!(e.kind, Some(event::Kind::Resolved(_))));
    }
}

/// Regression (issue 24): with `--log` on a full file system, writes were made and their
/// lines dropped. An answer that allows a write whose line cannot be written is refused.
#[test]
fn an_allowed_write_whose_line_is_lost_is_refused() {
    let (q, s) = (questions("lost"), Stand::new());
    let a = ask(&q, &s, 1, 7, 70, "/w/a");
    s.calls();
    s.log_full.store(true, Ordering::Relaxed);
    q.answer(a, Answer::Once, None).unwrap();
    assert_eq!(
        s.calls(),
        [
            "lost openat /w/a Allow once",
            "count Deny",
            "reply 7 Fail(13)",
            "release 7 7"
        ]
    );
}

/// Only a person's own answer for the write, [o] or [d], covers the process's follow-up
/// calls (`burst.rs`), and only while its thread still waits (else another process may
/// have its id): not a lasting or timed answer, which a rule or grant carries, nor a
/// question settled by another's answer, nor one nobody answered.
#[test]
fn only_an_answer_once_or_deny_starts_a_burst() {
    let (q, s) = (questions("burst"), Stand::new());
    let bursts = |s: &Stand| -> Vec<String> {
        s.calls()
            .into_iter()
            .filter(|c| c.starts_with("burst"))
            .collect()
    };
    for (i, answer) in [Answer::Timed, Answer::Always, Answer::Never]
        .into_iter()
        .enumerate()
    {
        let dir = format!("/w{i}");
        let a = ask(&q, &s, 1, i as u64, 70, &format!("{dir}/a"));
        // Another question its scope covers is settled by it.
        ask(&q, &s, 1, 10 + i as u64, 71, &format!("{dir}/b"));
        q.answer(a, answer, Some(PathBuf::from(&dir))).unwrap();
        assert_eq!(bursts(&s), Vec::<String>::new(), "{answer:?}");
    }
    // The thread went away meanwhile.
    let a = ask(&q, &s, 1, 20, 72, "/v/a");
    s.gone.lock().unwrap().push(20);
    q.answer(a, Answer::Once, None).unwrap();
    assert_eq!(bursts(&s), Vec::<String>::new());
    // Nobody answered.
    ask(&q, &s, 1, 21, 73, "/v/b");
    s.gone.lock().unwrap().push(21);
    q.sweep();
    assert_eq!(bursts(&s), Vec::<String>::new());
    // The answer's line was lost: refused, and nothing follows.
    let a = ask(&q, &s, 1, 22, 74, "/v/c");
    s.log_full.store(true, Ordering::Relaxed);
    q.answer(a, Answer::Once, None).unwrap();
    assert_eq!(bursts(&s), Vec::<String>::new());
}
