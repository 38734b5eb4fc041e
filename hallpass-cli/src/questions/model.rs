//! The questions a person is answering, as the prompt bar and `hallpass answer` hold them:
//! the open questions oldest first, each with the scope chosen so far; which one is selected;
//! which were answered here and wait for the daemon to say so; how long the selected one has
//! been shown (a key answers only a question shown long enough: a key typed for the command,
//! or a double press, must not answer the question that just appeared), and when the person
//! last typed (a key that is part of a stream of typing answers nothing: an answer is a key
//! pressed after a pause). Pure: the time is passed in, nothing is drawn or sent here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hallpass_proto::{Answer, AnswerRequest, Question};

/// How long a question must have been shown before a key answers it.
pub const ARMED_AFTER: Duration = Duration::from_millis(400);

/// How long the person must have stopped typing before a key answers: longer than the
/// pauses between the keys and words of someone typing, shorter than reading a question.
pub const QUIET_BEFORE: Duration = Duration::from_millis(1500);

/// An open question and the scope chosen for it so far.
pub struct Open {
    pub question: Question,
    pub scope: PathBuf,
}

/// What a key did.
#[derive(Debug, PartialEq)]
pub enum Key {
    /// Nothing (not a question key, or the question is not armed or answered already).
    Nothing,
    /// The selection or the scope changed: draw again.
    Changed,
    /// Send this answer, tagged with the generation of questions it is for.
    Answer(u64, AnswerRequest),
    /// `hallpass answer`: leave.
    Quit,
}

/// See the module's doc.
pub struct Model {
    list: Vec<Open>,
    /// The selected question, by id: the list may change under it. `None`: the oldest.
    selected: Option<u64>,
    /// Questions answered here, until the daemon says they are resolved.
    sent: Vec<u64>,
    /// The question last shown selected, and since when.
    armed: Option<(u64, Instant)>,
    /// When the person last typed a key that was not taken as one for a question (for the
    /// command, a paste, a key the question did not take).
    typed: Option<Instant>,
    /// How many times the questions held were voided: an answer to an older generation is
    /// for a question of a daemon that is gone.
    generation: u64,
    /// The user's home: a scope is never widened to it or above.
    home: PathBuf,
}

impl Model {
    pub fn new(home: PathBuf) -> Model {
        Model {
            list: Vec::new(),
            selected: None,
            sent: Vec::new(),
            armed: None,
            typed: None,
            generation: 0,
            home,
        }
    }

    /// A question asked (or asked again: a question may be seen twice). Returns whether it
    /// is new.
    pub fn asked(&mut self, q: Question) -> bool {
        if self.list.iter().any(|o| o.question.id == q.id) {
            return false;
        }
        let scope = PathBuf::from(&q.scope);
        self.list.push(Open { question: q, scope });
        true
    }

    /// A question no longer waits. Returns whether it was held.
    pub fn resolved(&mut self, id: u64) -> bool {
        self.sent.retain(|x| *x != id);
        let before = self.list.len();
        self.list.retain(|o| o.question.id != id);
        self.list.len() != before
    }

    /// The questions held are void (the daemon went away, events were lost): those still
    /// pending come again.
    pub fn void(&mut self) {
        self.clear();
        // A question asked again is shown anew, even under the same id.
        self.armed = None;
        self.generation += 1;
    }

    /// Drops every question held (the session is ending).
    pub fn clear(&mut self) {
        self.list.clear();
        self.sent.clear();
    }

    /// The answer sent for `id` was not applied: it is open, and answerable, again.
    pub fn not_applied(&mut self, id: u64) {
        self.sent.retain(|x| *x != id);
    }

    /// The open questions, oldest first.
    pub fn list(&self) -> &[Open] {
        &self.list
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether an answer to `id` was sent from here and waits for the daemon.
    pub fn is_sent(&self, id: u64) -> bool {
        self.sent.contains(&id)
    }

    /// The selected question: the one chosen if still there, else the oldest.
    pub fn current(&self) -> Option<&Open> {
        self.index().map(|i| &self.list[i])
    }

    fn index(&self) -> Option<usize> {
        self.selected
            .and_then(|id| self.list.iter().position(|o| o.question.id == id))
            .or((!self.list.is_empty()).then_some(0))
    }

    /// The selected question is shown at `now`: if it was not the one shown before, its keys
    /// wait [`ARMED_AFTER`] from now.
    pub fn shown(&mut self, now: Instant) {
        let current = self.current().map(|o| o.question.id);
        if current != self.armed.map(|(id, _)| id) {
            self.armed = current.map(|id| (id, now));
        }
    }

    /// The selected question shows again from `now` (something hid it): its keys wait again.
    pub fn rearm(&mut self, now: Instant) {
        self.armed = self.current().map(|o| (o.question.id, now));
    }

    /// The person typed at `now` something that was not a question's key.
    pub fn typed(&mut self, now: Instant) {
        self.typed = Some(now);
    }

    /// When the selected question takes keys: once shown for [`ARMED_AFTER`] and
    /// [`QUIET_BEFORE`] after the last key typed. `None`: no question, or not shown yet.
    pub fn takes_keys_at(&self) -> Option<Instant> {
        let id = self.current()?.question.id;
        let (shown, since) = self.armed?;
        (shown == id).then_some(())?;
        let quiet = self.typed.map(|t| t + QUIET_BEFORE);
        Some((since + ARMED_AFTER).max(quiet.unwrap_or(since)))
    }

    /// Whether the selected question waits for the person to stop typing at `now` (the bar
    /// says so, rather than show keys that would do nothing).
    pub fn waits_for_quiet(&self, now: Instant) -> bool {
        self.current().is_some() && self.typed.is_some_and(|t| now < t + QUIET_BEFORE)
    }

    /// Selects the next question (`down`) or the previous one.
    pub fn select(&mut self, down: bool) {
        if let Some(i) = self.index() {
            let j = if down {
                (i + 1).min(self.list.len() - 1)
            } else {
                i.saturating_sub(1)
            };
            self.selected = Some(self.list[j].question.id);
        }
    }

    /// Selects the oldest question not answered here.
    pub fn move_on(&mut self) {
        self.selected = self
            .list
            .iter()
            .map(|o| o.question.id)
            .find(|id| !self.sent.contains(id));
    }

    /// A question key pressed at `now` for the selected question: `o` `t` `a` `d` `n`
    /// answer it, `+` (or `=`) and `-` widen and narrow its scope, if it takes keys and is
    /// not answered already. Any other key is typing, and makes the question wait for quiet.
    pub fn key(&mut self, b: u8, now: Instant) -> Key {
        let k = self.question_key(b, now);
        if k == Key::Nothing {
            self.typed(now);
        }
        k
    }

    fn question_key(&mut self, b: u8, now: Instant) -> Key {
        let Some(i) = self.index() else {
            return Key::Nothing;
        };
        let id = self.list[i].question.id;
        let armed = self.takes_keys_at().is_some_and(|at| now >= at);
        if !armed || self.sent.contains(&id) {
            return Key::Nothing;
        }
        let Open { question: q, scope } = &mut self.list[i];
        let answer = match b {
            b'o' => Answer::Once,
            b't' => Answer::Timed,
            b'a' => Answer::Always,
            b'd' => Answer::Deny,
            b'n' => Answer::Never,
            b'+' | b'=' => {
                *scope = wider(scope, &self.home);
                return Key::Changed;
            }
            b'-' => {
                *scope = narrower(scope, Path::new(&q.path));
                return Key::Changed;
            }
            _ => return Key::Nothing,
        };
        let req = AnswerRequest {
            question_id: id,
            answer: answer as i32,
            // Empty: the suggested one, which the daemon knows.
            scope: if scope.as_os_str() == q.scope.as_str() {
                String::new()
            } else {
                scope.to_string_lossy().into_owned()
            },
        };
        // Shown as answered until the daemon says it is resolved: if the answer is not
        // applied, it is open again.
        self.sent.push(id);
        Key::Answer(self.generation, req)
    }

    /// A chunk of input in `hallpass answer` at `now`: `q`, Ctrl-C or Ctrl-D leave; `j`/`k`
    /// or the arrows select; then the question keys, and an answer moves on to the next
    /// question. A chunk of more than one key is a paste and answers nothing.
    pub fn list_key(&mut self, chunk: &[u8], now: Instant) -> Key {
        let b = match chunk {
            b"\x1b[A" | b"\x1bOA" => b'k',
            b"\x1b[B" | b"\x1bOB" => b'j',
            [b] => *b,
            _ => {
                // A paste, or keys the client does not know: typing.
                self.typed(now);
                return Key::Nothing;
            }
        };
        match b {
            b'q' | 0x03 | 0x04 => Key::Quit,
            b'j' | b'k' => {
                self.select(b == b'j');
                Key::Changed
            }
            _ => {
                let k = self.key(b, now);
                if matches!(k, Key::Answer(..)) {
                    self.move_on();
                }
                k
            }
        }
    }
}

/// The scope one level wider: the parent directory, but never `/`, `home` or above it.
pub fn wider(scope: &Path, home: &Path) -> PathBuf {
    match scope.parent() {
        Some(p) if p != Path::new("/") && p.parent().is_some() && !home.starts_with(p) => {
            p.to_path_buf()
        }
        _ => scope.to_path_buf(),
    }
}

/// The scope one level narrower, toward `path`: at most `path` itself.
pub fn narrower(scope: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(scope) {
        Ok(rest) => match rest.components().next() {
            Some(c) => scope.join(c),
            None => scope.to_path_buf(),
        },
        Err(_) => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: u64) -> Question {
        Question {
            id,
            path: "/home/me/.npm/_cacache/tmp/x".into(),
            scope: "/home/me/.npm/_cacache".into(),
            ..Default::default()
        }
    }

    fn model(ids: &[u64]) -> Model {
        let mut m = Model::new("/home/me".into());
        for id in ids {
            m.asked(q(*id));
        }
        m
    }

    fn answered(k: Key) -> Option<(u64, u64, i32, String)> {
        match k {
            Key::Answer(g, r) => Some((g, r.question_id, r.answer, r.scope)),
            _ => None,
        }
    }

    #[test]
    fn a_key_answers_only_a_question_shown_long_enough() {
        let t0 = Instant::now();
        let mut m = model(&[1]);
        m.shown(t0);
        // Shown again: the clock does not start over for the same question.
        m.shown(t0 + ARMED_AFTER / 2);
        assert_eq!(m.takes_keys_at(), Some(t0 + ARMED_AFTER));
        let k = m.key(b'o', t0 + ARMED_AFTER);
        assert_eq!(
            answered(k),
            Some((0, 1, Answer::Once as i32, String::new()))
        );
        // Answered: no second answer while the daemon has not said it is resolved.
        let t = t0 + ARMED_AFTER * 2;
        assert_eq!(m.key(b'd', t), Key::Nothing);
        // Not applied: open again, to a key after a pause (that 'd' did nothing).
        m.not_applied(1);
        assert!(answered(m.key(b'd', t + QUIET_BEFORE)).is_some());
    }

    /// Typing "please see the test output" at a steady pace, through the question's arrival
    /// and after it, answers nothing, at any pace a person types; a key after a pause does.
    #[test]
    fn keys_that_are_part_of_typing_answer_nothing() {
        for every in [80u64, 120, 250, 600, 1400] {
            let t0 = Instant::now();
            let mut m = model(&[]);
            let mut t = t0;
            let mut answers = 0;
            for (i, _) in "please see the test output".bytes().enumerate() {
                t = t0 + Duration::from_millis(every * i as u64);
                if i == 5 {
                    m.asked(q(1));
                    m.shown(t);
                }
                match m.current() {
                    None => m.typed(t),
                    Some(_) => {
                        assert!(m.waits_for_quiet(t), "every {every} ms, key {i}");
                        // Every letter of the sentence, the answer keys among them.
                        for b in [b'o', b't', b'a', b'd', b'n'] {
                            answers += matches!(m.key(b, t), Key::Answer(..)) as u32;
                        }
                    }
                }
            }
            assert_eq!(answers, 0, "typing every {every} ms answered");
            // The person stops, reads, and answers.
            assert!(!m.waits_for_quiet(t + QUIET_BEFORE));
            assert_eq!(m.takes_keys_at(), Some(t + QUIET_BEFORE));
            assert_eq!(m.key(b'o', t + QUIET_BEFORE / 2), Key::Nothing);
            let t = t + QUIET_BEFORE / 2;
            assert!(answered(m.key(b'o', t + QUIET_BEFORE)).is_some());
        }
    }

    #[test]
    fn a_key_the_question_takes_is_not_typing() {
        let t0 = Instant::now();
        let mut m = model(&[1]);
        m.shown(t0);
        let t = t0 + ARMED_AFTER;
        assert_eq!(m.key(b'+', t), Key::Changed);
        assert!(answered(m.key(b'a', t)).is_some());
    }

    #[test]
    fn something_hiding_the_question_disarms_it() {
        let t0 = Instant::now();
        let mut m = model(&[1]);
        m.shown(t0);
        m.rearm(t0 + ARMED_AFTER);
        assert_eq!(m.takes_keys_at(), Some(t0 + ARMED_AFTER * 2));
        assert!(answered(m.key(b'o', t0 + ARMED_AFTER * 2)).is_some());
    }

    #[test]
    fn the_scope_widens_and_narrows_and_goes_with_the_answer() {
        let t0 = Instant::now();
        let mut m = model(&[1]);
        m.shown(t0);
        let t = t0 + ARMED_AFTER;
        assert_eq!(m.key(b'+', t), Key::Changed);
        assert_eq!(m.current().unwrap().scope, PathBuf::from("/home/me/.npm"));
        // Never the home directory.
        assert_eq!(m.key(b'=', t), Key::Changed);
        assert_eq!(m.current().unwrap().scope, PathBuf::from("/home/me/.npm"));
        let k = m.key(b'a', t);
        assert_eq!(
            answered(k),
            Some((0, 1, Answer::Always as i32, "/home/me/.npm".into()))
        );
        let mut m = model(&[1]);
        m.shown(t0);
        assert_eq!(m.key(b'-', t), Key::Changed);
        assert_eq!(
            m.current().unwrap().scope,
            PathBuf::from("/home/me/.npm/_cacache/tmp")
        );
        assert_eq!(m.key(b'x', t), Key::Nothing);
    }

    #[test]
    fn keys_of_the_answer_client() {
        let t0 = Instant::now();
        let mut m = model(&[1, 2, 3]);
        assert_eq!(m.list_key(b"q", t0), Key::Quit);
        assert_eq!(m.list_key(&[0x03], t0), Key::Quit);
        assert_eq!(m.list_key(b"\x1b[B", t0), Key::Changed);
        assert_eq!(m.current().unwrap().question.id, 2);
        assert_eq!(m.list_key(b"j", t0), Key::Changed);
        assert_eq!(m.list_key(b"j", t0), Key::Changed);
        assert_eq!(m.current().unwrap().question.id, 3);
        assert_eq!(m.list_key(b"\x1bOA", t0), Key::Changed);
        assert_eq!(m.current().unwrap().question.id, 2);
        // A paste answers nothing.
        m.shown(t0);
        let t = t0 + ARMED_AFTER;
        assert_eq!(m.list_key(b"oo", t), Key::Nothing);
        // An answer (after a pause: the paste was typing) moves on to the oldest question not
        // answered, which waits its turn.
        let t = t + QUIET_BEFORE;
        assert_eq!(answered(m.list_key(b"o", t)).unwrap().1, 2);
        assert_eq!(m.current().unwrap().question.id, 1);
        m.shown(t);
        assert_eq!(m.list_key(b"d", t + ARMED_AFTER / 2), Key::Nothing);
        // That early key was typing: the next waits for quiet.
        assert_eq!(m.list_key(b"d", t + ARMED_AFTER), Key::Nothing);
        let later = t + ARMED_AFTER + QUIET_BEFORE;
        assert_eq!(answered(m.list_key(b"d", later)).unwrap().1, 1);
        assert_eq!(m.current().unwrap().question.id, 3);
    }

    #[test]
    fn questions_come_go_and_are_voided() {
        let mut m = model(&[1, 2]);
        assert!(!m.asked(q(1)), "a question seen twice is held once");
        assert!(m.resolved(1));
        assert!(!m.resolved(1));
        assert_eq!(m.current().unwrap().question.id, 2);
        let t0 = Instant::now();
        m.shown(t0);
        m.void();
        assert!(m.is_empty());
        // Answers to the questions asked again are of a new generation.
        m.asked(q(2));
        m.shown(t0);
        assert_eq!(answered(m.key(b'o', t0 + ARMED_AFTER)).unwrap().0, 1);
    }

    #[test]
    fn scopes_widen_and_narrow() {
        let path = Path::new("/home/me/.npm/_cacache/tmp/x");
        let s = Path::new("/home/me/.npm/_cacache");
        let home = Path::new("/home/me");
        assert_eq!(wider(s, home), PathBuf::from("/home/me/.npm"));
        // Never the home directory, nor above it, nor /.
        assert_eq!(
            wider(Path::new("/home/me/.npm"), home),
            PathBuf::from("/home/me/.npm")
        );
        assert_eq!(wider(Path::new("/etc"), home), PathBuf::from("/etc"));
        assert_eq!(wider(Path::new("/etc/x"), home), PathBuf::from("/etc"));
        assert_eq!(
            narrower(s, path),
            PathBuf::from("/home/me/.npm/_cacache/tmp")
        );
        assert_eq!(narrower(path, path), path.to_path_buf());
    }
}
