//! Questions: writes that wait for a person. A session's supervisor registers one and goes on
//! with other notifications; subscribers (the launcher's prompt bar, `hallpass answer`, ...)
//! see it over the API; the first answer is applied here, from whichever thread brought it:
//! the grant is recorded, the log line written, and the waiting syscall answered.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hallpass_proto::shown::shown;
use hallpass_proto::{event, Answer, Event, Question, Resolved};
use tokio::sync::broadcast;

use crate::perform::emulate::Action as Write;
use crate::policy::{is_within, Decision, Reason};
use crate::rules::{self, Action};
use crate::sys::seccomp::{Notif, Reply};

/// Events kept for slow subscribers; one that falls further behind re-reads the pending list.
const EVENT_BUFFER: usize = 1024;

/// What a question needs of the session it waits in. The session implements it
/// (`session/mod.rs`); questions know nothing else of sessions, so their logic is tested with
/// a stand-in (`ask/tests.rs`).
pub trait Host: Send + Sync {
    /// Keeps notification `n` in the session's journal while it waits: its slot, `None` when
    /// the session keeps no journal, `Err` when the journal is full.
    fn hold(&self, n: &Notif) -> Result<Option<usize>, JournalFull>;
    /// Frees journal slot `slot`, held for notification `id`.
    fn release(&self, slot: usize, id: u64);
    /// The person's home directory, which no lasting answer may cover.
    fn home(&self) -> &Path;
    /// Counts a question asked.
    fn asked(&self);
    /// The session's decision for `syscall` writing `files`, with the lasting `rules` and its
    /// timed grants; and the index of the path that decided.
    fn decide(
        &self,
        syscall: &str,
        files: &[&Path],
        rules: &rules::Rules,
    ) -> (Decision, Reason, usize);
    /// Allows `scope` for the timed-answer duration.
    fn grant_for_a_while(&self, scope: PathBuf);
    /// Allows `scope` until the session ends.
    fn grant_for_the_session(&self, scope: PathBuf);
    /// A person answered `decision` (once or deny) for a `syscall` of thread `tid`, which
    /// still waits in it, writing `paths`: the same process's follow-up calls on that file
    /// are decided so for a moment (`burst.rs`).
    fn answered_once(&self, tid: i32, syscall: &str, paths: &[PathBuf], decision: Decision);
    /// Counts a decision.
    fn count(&self, decision: Decision);
    /// Writes one line to the session's log, if it has one; `false` when the line could not
    /// be written, and an allowed write must then be refused.
    #[must_use = "an allowed write whose line is lost must be refused"]
    fn record(
        &self,
        pid: i32,
        exe: &str,
        syscall: &str,
        path: &str,
        d: Decision,
        r: Reason,
    ) -> bool;
    /// [`Host::record`] for every path of `q` (both of a rename): `false` if a line was
    /// lost.
    #[must_use = "an allowed write whose line is lost must be refused"]
    fn record_question(&self, q: &Question, d: Decision, r: Reason) -> bool {
        // Every line is tried, whether or not one before was lost.
        let mut all = true;
        for p in std::iter::once(&q.path).chain(&q.also) {
            all &= self.record(q.pid, &q.exe, &q.syscall, p, d, r);
        }
        all
    }
    /// Answers notification `id`.
    fn reply(&self, id: u64, reply: Reply);
    /// Strict mode: performs the write prepared for notification `id` of thread `tid` on a
    /// thread of its own, answers it and frees its journal `slot`.
    fn perform(self: Arc<Self>, id: u64, tid: i32, action: Write, slot: Option<usize>);
    /// Whether the session still runs.
    fn live(&self) -> bool;
    /// Whether notification `id` still waits for its answer.
    fn waiting(&self, id: u64) -> bool;
}

/// A question and what is needed to answer it.
struct Pending {
    question: Question,
    /// Every path the syscall writes, as resolved (the question shows those that needed an
    /// answer): all are checked again before the write is let through.
    all: Vec<PathBuf>,
    session: Arc<dyn Host>,
    tid: i32,
    /// The notifications waiting on it: one, or more when the same thread asked again for
    /// the same write (a syscall restarted after a signal, on kernels without
    /// `WAIT_KILLABLE_RECV`).
    notifs: Vec<Waiting>,
}

/// A notification waiting for an answer.
struct Waiting {
    id: u64,
    /// Its slot in the session journal.
    slot: Option<usize>,
    /// Strict mode: the write prepared on held descriptors, performed if allowed.
    action: Option<Write>,
}

impl Pending {
    /// Frees the journal slots: the question is settled.
    fn release(&self) {
        for w in &self.notifs {
            if let Some(s) = w.slot {
                self.session.release(s, w.id);
            }
        }
    }
}

/// Why an answer was not applied.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("no pending question {0}: it was answered already, or its process went away")]
    NotPending(u64),
    #[error(
        "the scope {} does not hold {}, or is your home directory or above it",
        shown(.scope),
        shown(.path)
    )]
    Scope { scope: String, path: String },
    #[error("no answer given")]
    NoAnswer,
}

/// The session journal has no room left to keep another question.
#[derive(Debug)]
pub struct JournalFull;

/// Why a question was not asked (the write is then denied).
#[derive(Debug, thiserror::Error)]
pub enum NotAsked {
    #[error("the session journal is full")]
    JournalFull,
    #[error("{0} questions of the session already wait for an answer")]
    TooMany(usize),
}

/// Questions open at once per session: more than a person answers, and each holds what its
/// write needs (in strict mode a few descriptors of the daemon, whose table every session
/// shares): 256, or a thirty-second of that table if it is smaller than 8,192.
fn max_open() -> usize {
    (crate::sys::fsops::open_files_limit() / 32).min(256)
}

/// Every pending question of the daemon, and the subscribers' event stream.
pub struct Questions {
    pending: Mutex<BTreeMap<u64, Pending>>,
    next_id: AtomicU64,
    /// The next `Question.number`: short, for people.
    next_number: AtomicU32,
    events: broadcast::Sender<Event>,
    rules: Arc<rules::Store>,
}

impl Questions {
    pub fn new(rules: Arc<rules::Store>) -> Questions {
        Questions {
            pending: Mutex::new(BTreeMap::new()),
            // Ids unlike those of an earlier daemon (one that died, say), so that an answer
            // meant for its questions can never settle one of ours.
            next_id: AtomicU64::new(first_id()),
            next_number: AtomicU32::new(1),
            events: broadcast::channel(EVENT_BUFFER).0,
            rules,
        }
    }

    pub fn rules(&self) -> &Arc<rules::Store> {
        &self.rules
    }

    /// The pending questions (of `session`, or all for 0) and the events from now on. Subscribe
    /// first, then list, so nothing falls between the two.
    pub fn subscribe(&self, session: u64) -> (Vec<Question>, broadcast::Receiver<Event>) {
        let rx = self.events.subscribe();
        let list = self
            .pending
            .lock()
            .unwrap()
            .values()
            .filter(|p| session == 0 || p.question.session_id == session)
            .map(|p| p.question.clone())
            .collect();
        (list, rx)
    }

    /// Registers a question for notification `n`, or joins the one its thread already has
    /// open for the same write. `question.id` is assigned here. The notification is kept in
    /// the session's journal while it waits; `Err` when the journal is full (then nothing is
    /// asked: a question a daemon restart would lose must not be left waiting), or when
    /// [`max_open`] questions of the session wait already.
    pub fn ask(
        &self,
        session: &Arc<dyn Host>,
        n: &Notif,
        mut question: Question,
        all: Vec<PathBuf>,
        action: Option<Write>,
    ) -> Result<(), NotAsked> {
        let tid = n.pid as i32;
        let open = self
            .pending
            .lock()
            .unwrap()
            .values()
            .filter(|p| p.question.session_id == question.session_id)
            .count();
        if open >= max_open() {
            return Err(NotAsked::TooMany(open));
        }
        let slot = session
            .hold(n)
            .map_err(|JournalFull| NotAsked::JournalFull)?;
        let notif = Waiting {
            id: n.id,
            slot,
            action,
        };
        let mut pending = self.pending.lock().unwrap();
        if let Some(p) = pending.values_mut().find(|p| {
            p.tid == tid
                && p.question.session_id == question.session_id
                && p.question.syscall == question.syscall
                && p.question.path == question.path
                && p.question.also == question.also
        }) {
            p.notifs.push(notif);
            return Ok(());
        }
        question.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        question.number = self.next_number.fetch_add(1, Ordering::Relaxed);
        session.asked();
        pending.insert(
            question.id,
            Pending {
                question: question.clone(),
                all,
                session: session.clone(),
                tid,
                notifs: vec![notif],
            },
        );
        drop(pending);
        let _ = self.events.send(Event {
            kind: Some(event::Kind::Asked(question)),
        });
        Ok(())
    }

    /// Applies a person's answer. Returns a warning to pass on, if any.
    pub fn answer(
        &self,
        id: u64,
        answer: Answer,
        scope: Option<PathBuf>,
    ) -> Result<Option<String>, AnswerError> {
        if answer == Answer::Unspecified {
            return Err(AnswerError::NoAnswer);
        }
        let p = {
            let mut pending = self.pending.lock().unwrap();
            let p = pending.get(&id).ok_or(AnswerError::NotPending(id))?;
            let path = Path::new(&p.question.path);
            let scope = scope.unwrap_or_else(|| PathBuf::from(&p.question.scope));
            let lasting = matches!(answer, Answer::Timed | Answer::Always | Answer::Never);
            if lasting && !crate::scope::fits(&scope, path, p.session.home()) {
                return Err(AnswerError::Scope {
                    scope: scope.display().to_string(),
                    path: p.question.path.clone(),
                });
            }
            let mut p = pending.remove(&id).unwrap();
            p.question.scope = scope.to_string_lossy().into_owned();
            p
        };
        let scope = PathBuf::from(&p.question.scope);
        let mut warning = None;
        let (decision, reason) = match answer {
            Answer::Once => (Decision::Allow, Reason::Once),
            Answer::Timed => {
                p.session.grant_for_a_while(scope.clone());
                (Decision::Allow, Reason::Timed)
            }
            Answer::Always => {
                if let Err(e) = self.rules.add(rules::Rule {
                    action: Action::Allow,
                    path: scope.clone(),
                }) {
                    // Allowed all the same, for this session: the person said so.
                    p.session.grant_for_the_session(scope.clone());
                    warning = Some(format!("not saved: {e}; allowed for this session only"));
                }
                (Decision::Allow, Reason::Always)
            }
            Answer::Deny => (Decision::Deny, Reason::Denied),
            Answer::Never => {
                if let Err(e) = self.rules.add(rules::Rule {
                    action: Action::Deny,
                    path: scope.clone(),
                }) {
                    warning = Some(format!("not saved: {e}; denied this time only"));
                }
                (Decision::Deny, Reason::Never)
            }
            Answer::Unspecified => unreachable!(),
        };
        let sid = p.question.session_id;
        // The person saw every path that needed an answer; the answer is for the syscall. But
        // what a rule denies now (a "never" added meanwhile, on a path that was allowed when
        // asked) still wins.
        let (decision, reason) = if decision == Decision::Allow {
            let rules = self.rules.current();
            let all: Vec<&Path> = p.all.iter().map(PathBuf::as_path).collect();
            match p.session.decide(&p.question.syscall, &all, &rules) {
                (Decision::Deny, r, _) => (Decision::Deny, r),
                _ => (decision, reason),
            }
        } else {
            (decision, reason)
        };
        self.resolve(p, decision, reason, answer);
        // A lasting answer may settle other open questions: each is decided again, by its
        // session's policy with the rules and grants as they are now (so a "never" rule or a
        // protected path still wins). Grants that stayed in one session settle only there.
        if matches!(answer, Answer::Timed | Answer::Always | Answer::Never) {
            let only = (answer == Answer::Timed || warning.is_some()).then_some(sid);
            self.settle_covered(&scope, only);
        }
        Ok(warning)
    }

    /// Decides again the open questions under `scope` (of session `only`, if given); those
    /// that no longer need a person are resolved.
    fn settle_covered(&self, scope: &Path, only: Option<u64>) {
        let rules = self.rules.current();
        let settled: Vec<(Pending, Decision, Reason)> = {
            let mut pending = self.pending.lock().unwrap();
            let mut out = Vec::new();
            let ids: Vec<u64> = pending
                .values()
                .filter(|q| {
                    only.is_none_or(|s| q.question.session_id == s)
                        && std::iter::once(&q.question.path)
                            .chain(&q.question.also)
                            .any(|p| is_within(Path::new(p), scope))
                })
                .map(|q| q.question.id)
                .collect();
            for id in ids {
                let q = &pending[&id];
                let paths: Vec<&Path> = q.all.iter().map(PathBuf::as_path).collect();
                let (d, r, _) = q.session.decide(&q.question.syscall, &paths, &rules);
                if d != Decision::Ask {
                    let mut q = pending.remove(&id).unwrap();
                    q.question.scope = scope.to_string_lossy().into_owned();
                    out.push((q, d, r));
                }
            }
            out
        };
        for (q, d, r) in settled {
            let answer = match r {
                Reason::Timed => Answer::Timed,
                Reason::Always => Answer::Always,
                Reason::Never => Answer::Never,
                _ if d == Decision::Allow => Answer::Once,
                _ => Answer::Deny,
            };
            self.resolve(q, d, r, answer);
        }
    }

    /// Answers every notification of `p`, logs it and tells the subscribers. An allowed write
    /// whose line cannot be logged is refused (see `Host::record`).
    fn resolve(&self, mut p: Pending, decision: Decision, reason: Reason, answer: Answer) {
        let s = &p.session;
        // Logged first: a crash between the two loses no line for a write that happened.
        let logged = s.record_question(&p.question, decision, reason);
        let decision = if logged { decision } else { Decision::Deny };
        s.count(decision);
        // A person's own answer for this write (not a rule that settled it) covers the
        // process's follow-up calls on the file; noted while the thread still waits, so
        // the process is the one that asked.
        let personal = matches!(reason, Reason::Once | Reason::Denied);
        if personal && logged && p.notifs.iter().any(|w| s.waiting(w.id)) {
            s.answered_once(p.tid, &p.question.syscall, &p.all, decision);
        }
        let reply = match decision {
            Decision::Allow => Reply::Continue,
            _ => Reply::Fail(libc::EACCES),
        };
        for w in std::mem::take(&mut p.notifs) {
            match (w.action, reply) {
                // Strict mode: allowed means performed, on the descriptors held since the
                // question was asked (the journal slot is freed once answered).
                (Some(action), Reply::Continue) => s.clone().perform(w.id, p.tid, action, w.slot),
                _ => {
                    s.reply(w.id, reply);
                    if let Some(slot) = w.slot {
                        s.release(slot, w.id);
                    }
                }
            }
        }
        let _ = self.events.send(Event {
            kind: Some(event::Kind::Resolved(Resolved {
                question_id: p.question.id,
                session_id: p.question.session_id,
                answer: answer as i32,
                scope: p.question.scope.clone(),
            })),
        });
    }

    /// Drops the questions nobody can answer any more: their session ended, or every
    /// notification they wait on is gone (the process was killed).
    pub fn sweep(&self) {
        let gone: Vec<Pending> = {
            let mut pending = self.pending.lock().unwrap();
            let ids: Vec<u64> = pending
                .values()
                .filter(|p| !p.session.live() || !p.notifs.iter().any(|w| p.session.waiting(w.id)))
                .map(|p| p.question.id)
                .collect();
            ids.iter().filter_map(|i| pending.remove(i)).collect()
        };
        for p in gone {
            // Answered, not just dropped: the launcher may still hold the listener (the
            // session ended on the daemon's side), and nothing may wait forever.
            for w in &p.notifs {
                p.session.reply(w.id, Reply::Fail(libc::EACCES));
            }
            p.release();
            // Denied either way: a line lost is counted, nothing more to do.
            let _ = p
                .session
                .record_question(&p.question, Decision::Deny, Reason::Unanswered);
            let _ = self.events.send(Event {
                kind: Some(event::Kind::Resolved(Resolved {
                    question_id: p.question.id,
                    session_id: p.question.session_id,
                    answer: Answer::Unspecified as i32,
                    scope: String::new(),
                })),
            });
        }
    }

    /// Sweeps every `every` until the process exits.
    pub fn sweep_every(self: &Arc<Self>, every: std::time::Duration) {
        crate::periodic::every("questions-sweep", self, every, Questions::sweep);
    }
}

/// The first question id of this daemon: the clock in microseconds, so that a daemon
/// started after another does not reuse its ids (that would take more than one question per
/// microsecond).
fn first_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(1)
}

/// Milliseconds since the Unix epoch, for `Question.asked_ms`.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
