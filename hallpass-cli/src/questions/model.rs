//! The questions a person is answering, as the prompt bar and `hallpass answer` hold them:
//! the open questions oldest first, each with the scope chosen so far; which one is selected;
//! which were answered here and wait for the daemon to say so; how long the selected one has
//! been shown (a key answers only a question shown long enough: a key typed for the command,
//! or a double press, must not answer the question that just appeared), and when the person
//! last typed (a key that is part of a stream of typing answers nothing: an answer is a key
//! pressed after a pause). A question that came while the person was in the middle of
//! typing (text, not a line ended with Enter) first takes one key that only wakes it: the
//! command, which sees every key, could have asked at a pause in the person's typing, and
//! the next word would then answer it. Pure: the time is passed in, nothing is drawn or sent
//! here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hallpass_proto::{Answer, AnswerRequest, Question};

/// How long a question must have been shown before a key answers it.
pub const ARMED_AFTER: Duration = Duration::from_millis(400);

/// How long the person must have stopped typing before a key answers: longer than the
/// pauses between the keys and words of someone typing, shorter than reading a question.
pub const QUIET_BEFORE: Duration = Duration::from_millis(1500);

/// How long after the person typed text a question that appears takes a key to wake first.
pub const WAKE_AFTER_TEXT: Duration = Duration::from_secs(10);

/// What the question's keys do now, for the bar to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// They answer (or will, once the question has been shown a moment).
    Ready,
    /// The person is typing: they answer nothing until a pause.
    Typing,
    /// The question came as the person typed: the next key only wakes it.
    Wake,
}

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
    /// command, a paste, a key the question did not take), and whether it was text.
    typed: Option<(Instant, bool)>,
    /// The selected question came as the person typed text: its next key only wakes it.
    wake: bool,
    /// Whether questions that come as the person types text wake first: in the command's
    /// terminal, where the command sees each key (not in `hallpass answer`'s).
    wakes: bool,
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
            wake: false,
            wakes: false,
            generation: 0,
            home,
        }
    }

    /// The model of the prompt bar, in the command's own terminal: a question that comes as
    /// the person types text takes a key to wake first.
    pub fn in_the_commands_terminal(mut self) -> Model {
        self.wakes = true;
        self
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
    /// wait [`ARMED_AFTER`] from now, and a key to wake it first if the person was typing
    /// text [`WAKE_AFTER_TEXT`] before.
    pub fn shown(&mut self, now: Instant) {
        let current = self.current().map(|o| o.question.id);
        if current != self.armed.map(|(id, _)| id) {
            self.armed = current.map(|id| (id, now));
            self.wake = self.wakes
                && self.typed.is_some_and(|(t, text)| {
                    text && now.saturating_duration_since(t) < WAKE_AFTER_TEXT
                });
        }
    }

    /// The selected question shows again from `now` (something hid it): its keys wait again.
    pub fn rearm(&mut self, now: Instant) {
        self.armed = self.current().map(|o| (o.question.id, now));
    }

    /// The person typed at `now` something that was not a question's key: `text` (a letter,
    /// a space, a paste), or a key that ends or leaves a line (Enter, Ctrl-C).
    pub fn typed(&mut self, now: Instant, text: bool) {
        self.typed = Some((now, text));
    }

    /// When the selected question takes keys: once shown for [`ARMED_AFTER`] and
    /// [`QUIET_BEFORE`] after the last key typed. `None`: no question, or not shown yet.
    pub fn takes_keys_at(&self) -> Option<Instant> {
        let id = self.current()?.question.id;
        let (shown, since) = self.armed?;
        (shown == id).then_some(())?;
        let quiet = self.typed.map(|(t, _)| t + QUIET_BEFORE);
        Some((since + ARMED_AFTER).max(quiet.unwrap_or(since)))
    }

    /// Whether the selected question waits for the person to stop typing at `now` (the bar
    /// says so, rather than show keys that would do nothing).
    fn waits_for_quiet(&self, now: Instant) -> bool {
        self.current().is_some() && self.typed.is_some_and(|(t, _)| now < t + QUIET_BEFORE)
    }

    /// What the selected question's keys do at `now`, for the bar to say.
    pub fn keys(&self, now: Instant) -> Keys {
        if self.waits_for_quiet(now) {
            Keys::Typing
        } else if self.wake {
            Keys::Wake
        } else {
            Keys::Ready
        }
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
            self.typed(now, is_text(b));
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
        if std::mem::take(&mut self.wake) {
            // Awake: the keys are shown, and wait a moment as for a question just shown.
            self.rearm(now);
            return Key::Changed;
        }
        let Open { question: q, scope } = &mut self.list[i];
        let answer = match b {
            b'o' => Answer::Once,
            b't' => Answer::Timed,
            b'a' => Answer::Always,
            b'd' => Answer::Deny,
            b'n' => Answer::Never,
            // A new scope to read: the keys wait a moment again (so `-a`, typed, is not a
            // narrower "always").
            b'+' | b'=' => {
                *scope = wider(scope, &self.home);
                self.rearm(now);
                return Key::Changed;
            }
            b'-' => {
                *scope = narrower(scope, Path::new(&q.path));
                self.rearm(now);
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
                self.typed(now, true);
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

/// Whether a key typed is text (a letter, a space, a correction) rather than one that ends
/// or leaves a line (Enter, Ctrl-C, Ctrl-D, Escape).
pub fn is_text(b: u8) -> bool {
    !matches!(b, b'\r' | b'\n' | 0x03 | 0x04 | 0x1b)
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
            let mut m = model(&[]).in_the_commands_terminal();
            let mut t = t0;
            let mut answers = 0;
            for (i, _) in "please see the test output".bytes().enumerate() {
                t = t0 + Duration::from_millis(every * i as u64);
                if i == 5 {
                    m.asked(q(1));
                    m.shown(t);
                }
                match m.current() {
                    None => m.typed(t, true),
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
            // The person stops and reads; the question came as they typed, so a first key
            // only wakes it; a moment later one key answers.
            assert!(!m.waits_for_quiet(t + QUIET_BEFORE));
            assert_eq!(m.keys(t + QUIET_BEFORE), Keys::Wake);
            assert_eq!(m.takes_keys_at(), Some(t + QUIET_BEFORE));
            assert_eq!(m.key(b'o', t + QUIET_BEFORE / 2), Key::Nothing);
            let t = t + QUIET_BEFORE / 2 + QUIET_BEFORE;
            assert_eq!(m.key(b'o', t), Key::Changed);
            assert_eq!(m.keys(t), Keys::Ready);
            assert_eq!(m.key(b'o', t + ARMED_AFTER / 2), Key::Nothing);
            assert!(answered(m.key(b'o', t + ARMED_AFTER / 2 + QUIET_BEFORE)).is_some());
        }
    }

    /// The command sees each key, and can ask at a pause in the person's typing: a question
    /// that came then does not take the next word's first key as its answer.
    #[test]
    fn a_question_timed_into_a_pause_in_typing_takes_a_key_to_wake() {
        let t0 = Instant::now();
        let mut m = model(&[]).in_the_commands_terminal();
        m.typed(t0, true);
        m.asked(q(1));
        let shown = t0 + Duration::from_millis(900);
        m.shown(shown);
        // "add tests", after a pause of 2.6 s.
        let mut t = t0 + Duration::from_millis(2600);
        let mut answers = 0;
        for b in "add tests".bytes() {
            answers += matches!(m.key(b, t), Key::Answer(..)) as u32;
            t += Duration::from_millis(80);
        }
        assert_eq!(answers, 0);
        // After Enter (a line ended), a question takes its key at once.
        let mut m = model(&[]).in_the_commands_terminal();
        m.typed(t0, false);
        m.asked(q(1));
        m.shown(shown);
        assert_eq!(m.keys(t0 + QUIET_BEFORE), Keys::Ready);
        assert!(answered(m.key(b'o', t0 + QUIET_BEFORE)).is_some());
        // In `hallpass answer`'s terminal, which the command does not see, at once too.
        let mut m = model(&[]);
        m.typed(t0, true);
        m.asked(q(1));
        m.shown(shown);
        assert!(answered(m.key(b'o', t0 + QUIET_BEFORE)).is_some());
        // And long after text was typed, too.
        let mut m = model(&[]).in_the_commands_terminal();
        m.typed(t0, true);
        m.asked(q(1));
        let later = t0 + WAKE_AFTER_TEXT;
        m.shown(later);
        assert!(answered(m.key(b'o', later + ARMED_AFTER)).is_some());
    }

    #[test]
    fn a_key_the_question_takes_is_not_typing() {
        let t0 = Instant::now();
        let mut m = model(&[1]);
        m.shown(t0);
        let t = t0 + ARMED_AFTER;
        assert_eq!(m.key(b'+', t), Key::Changed);
        // A new scope to read: a moment, but no pause in typing, before the answer.
        assert_eq!(m.key(b'a', t + ARMED_AFTER / 2), Key::Nothing);
        let mut m = model(&[1]);
        m.shown(t0);
        assert_eq!(m.key(b'+', t), Key::Changed);
        assert!(answered(m.key(b'a', t + ARMED_AFTER)).is_some());
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
        let t = t + ARMED_AFTER;
        assert_eq!(m.key(b'=', t), Key::Changed);
        assert_eq!(m.current().unwrap().scope, PathBuf::from("/home/me/.npm"));
        let t = t + ARMED_AFTER;
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
