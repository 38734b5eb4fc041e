//! The command's terminal under `--prompt=ask`: the command runs on a pty of ours; we relay
//! what the user types to it and what it prints to the screen, through an allowlist of what
//! may reach the person's terminal (`termfilter.rs`), and keep a model of the screen (vt100)
//! so that the prompt bar, drawn over the bottom lines while a question is open, can be taken
//! away leaving exactly what the command drew. Like tmux's status line, the bar is out of the
//! command's reach: it is drawn from a known terminal state, whatever modes the command set,
//! and while it is up the command's output reaches the terminal only as redrawn by us.
//!
//! One thread owns the screen and the bar ([`Relay::run`]); others only feed it events: the
//! keyboard, the command's output, the daemon's questions, window changes, the command's end.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::acks::{pieces, Acks, Asker, Piece};
use crate::bar;
use crate::questions::follow::{self, Answers, Source, Update};
use crate::questions::model::{is_text, Key, Keys, Model};
use crate::session::Session;
use crate::sys::pty::{self, Size};
use crate::termfilter::{Filter, DA1, NEUTRAL};
use crate::typing::{route, Typed};
use hallpass_proto::Question;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long the command's last output may take to arrive after it exits.
const DRAIN: Duration = Duration::from_millis(300);
/// Events waiting for the relay at most; past that, readers wait (the command's output
/// blocks on the pty rather than piling up in memory).
const BACKLOG: usize = 256;
/// How long the bar waits for the terminal to say it shows a question before its keys count
/// anyway (a terminal that does not answer DA1).
const ACK_WAIT: Duration = Duration::from_secs(5);
/// How long processes get to end after `Ctrl-] s` before they are killed.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What the relay thread reacts to.
pub enum Event {
    /// Bytes the user typed, and when they were read.
    Input(Vec<u8>, Instant),
    /// Bytes the command printed.
    Output(Vec<u8>),
    /// The command's side of the pty is closed.
    OutputEnd,
    /// Our standard input ended.
    InputEnd,
    Asked(Box<Question>),
    /// A question was answered (here or elsewhere) or withdrawn.
    Resolved(u64),
    /// A line for the user: an answer that did not apply, the daemon gone.
    Note(String),
    /// The answer sent for this question was refused: it stays open.
    AnswerFailed(u64),
    /// The daemon went away: the questions shown are void (a new daemon asks them again).
    Reset,
    /// Our terminal's window changed size.
    Resize,
    /// The command exited: show what is left of its output, then stop.
    Exited,
}

/// A running relay: feed it events, then [`Handle::finish`].
pub struct Handle {
    tx: SyncSender<Event>,
    thread: std::thread::JoinHandle<Outcome>,
}

/// How the relay ended.
pub struct Outcome {
    /// The user pressed `Ctrl-] s`.
    pub stopped: bool,
}

impl Handle {
    pub fn resize(&self) {
        let _ = self.tx.send(Event::Resize);
    }

    /// Tells the relay the command exited; returns once its output is shown.
    pub fn finish(self) -> Outcome {
        let _ = self.tx.send(Event::Exited);
        self.thread.join().unwrap_or(Outcome { stopped: false })
    }
}

/// Starts relaying between our terminal (stdin, stdout) and the pty `leader`, with questions
/// of `session` shown in the bar. `pgid` is the command's process group (for `Ctrl-] s`).
/// With `all` (`--wait=all`), `Ctrl-] s` ends every process of the session, not only the
/// command's.
pub fn start(
    leader: OwnedFd,
    size: Size,
    session: Session,
    pgid: i32,
    all: bool,
) -> std::io::Result<Handle> {
    let (tx, rx) = sync_channel(BACKLOG);
    let to_cmd = spawn_writer(File::from(leader.try_clone()?));
    spawn_reader(
        File::from(leader.try_clone()?),
        tx.clone(),
        Event::Output,
        Event::OutputEnd,
    );
    let stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
    // A key is timed when it is read, not when the relay gets to it behind the output.
    let typed = |b| Event::Input(b, Instant::now());
    spawn_reader(stdin, tx.clone(), typed, Event::InputEnd);
    let answers = spawn_follower(session, tx.clone());
    let relay = Relay {
        out: std::io::stdout(),
        leader,
        model: vt100::Parser::new(nz(size.rows), nz(size.cols), 0),
        filter: Filter::new(size.rows),
        wake: None,
        acks: Acks::default(),
        acked: None,
        ack_by: None,
        size,
        shown: None,
        drawn: 0,
        alt_under_bar: None,
        questions: Model::new(crate::env::real_home_dir()).in_the_commands_terminal(),
        notice: None,
        escape: false,
        to_cmd,
        answers,
        pgid,
        all,
        stopped: false,
        exited: Arc::new(AtomicBool::new(false)),
    };
    // Start from a blank screen that matches the empty model (what was on it scrolls into
    // the terminal's history instead of being erased), in the drawing state the filter
    // starts from.
    let mut o = std::io::stdout();
    let _ = write!(
        o,
        "{NEUTRAL}\x1b[?7h\x1b[{};1H{}\x1b[H",
        size.rows,
        "\n".repeat(size.rows as usize)
    );
    let _ = o.flush();
    let thread = std::thread::Builder::new()
        .name("relay".into())
        .spawn(move || relay.run(rx))?;
    Ok(Handle { tx, thread })
}

/// One update of the screen: terminals that know synchronized updates (mode 2026) show it
/// whole or not at all, so the command's rows never show where the bar is, even briefly.
/// It also ends an update the command began and left open.
fn frame(s: &str) -> String {
    format!("\x1b[?2026h{s}\x1b[?2026l")
}

fn nz(v: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN)
}

fn spawn_reader(
    mut from: File,
    tx: SyncSender<Event>,
    wrap: impl Fn(Vec<u8>) -> Event + Send + 'static,
    end: Event,
) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(wrap(buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: no process has the pty's other side open any more.
                Err(_) => break,
            }
        }
        let _ = tx.send(end);
    });
}

/// Writes what the user types to the command from a thread of its own, so a command that
/// stops reading cannot stall the screen.
fn spawn_writer(mut to: File) -> Sender<Vec<u8>> {
    let (tx, rx) = channel::<Vec<u8>>();
    std::thread::spawn(move || {
        for b in rx {
            if to.write_all(&b).is_err() {
                return;
            }
        }
    });
    tx
}

/// Follows the session's questions (see `questions::follow`) on a thread of its own, and
/// passes them on to the relay; returns where the bar sends its answers.
fn spawn_follower(session: Session, tx: SyncSender<Event>) -> Answers {
    let (follower, answers) = follow::follower(Source::Session(session));
    std::thread::spawn(move || {
        let Ok(rt) = crate::api::runtime() else {
            let _ = tx.send(Event::Note(
                "hallpass: cannot follow questions: no async runtime".into(),
            ));
            return;
        };
        let note = |what: String| Event::Note(format!("hallpass: {what}"));
        rt.block_on(follower.run(&mut |u| {
            let events = match u {
                Update::Asked(q) => vec![Event::Asked(q)],
                Update::Resolved(id) => vec![Event::Resolved(id)],
                Update::Void(_) => vec![Event::Reset],
                Update::Back => Vec::new(),
                Update::Trouble(why) => vec![note(why)],
                Update::Answered { id, outcome } => match outcome {
                    follow::Outcome::Applied { warning } if !warning.is_empty() => {
                        vec![note(warning)]
                    }
                    follow::Outcome::Applied { .. } => Vec::new(),
                    // Settled already (here or elsewhere): gone from the bar too, even if the
                    // event saying so was missed.
                    follow::Outcome::Settled(_) => vec![Event::Resolved(id)],
                    follow::Outcome::Refused(why) => vec![
                        Event::AnswerFailed(id),
                        note(format!("the answer was refused: {why}")),
                    ],
                    follow::Outcome::NoReply => vec![
                        Event::AnswerFailed(id),
                        note("the answer was refused: the daemon did not answer".into()),
                    ],
                },
            };
            events.into_iter().all(|e| tx.send(e).is_ok())
        }));
    });
    answers
}

struct Relay {
    out: std::io::Stdout,
    leader: OwnedFd,
    /// The screen as the terminal shows it without the bar.
    model: vt100::Parser,
    /// What of the command's output may reach the terminal, and the state it left there.
    filter: Filter,
    /// When to draw the bar again by itself: the keys it shows wait for the person to stop
    /// typing until then.
    wake: Option<Instant>,
    /// The terminal's answers to DA1, the command's and the bar's (`acks.rs`).
    acks: Acks,
    /// The question the terminal has said it shows: its keys count from then.
    acked: Option<u64>,
    /// A question drawn and not yet acknowledged, and until when to wait for the terminal
    /// (one that never answers DA1 gets its keys then).
    ack_by: Option<(u64, Instant)>,
    size: Size,
    /// While the bar is up: the screen as the terminal shows it under the bar.
    shown: Option<vt100::Screen>,
    /// How many bottom rows the bar covers now (0: not drawn).
    drawn: u16,
    /// While the bar is up: whether the terminal shows the alternate screen (switches made
    /// meanwhile reach it only when the bar goes).
    alt_under_bar: Option<bool>,
    /// Open questions; the bar shows the oldest.
    questions: Model,
    /// A one-line message over the bottom row until the next key (help, a warning).
    notice: Option<String>,
    /// `Ctrl-]` was pressed; the next key is for us.
    escape: bool,
    to_cmd: Sender<Vec<u8>>,
    answers: Answers,
    pgid: i32,
    all: bool,
    stopped: bool,
    exited: Arc<AtomicBool>,
}

impl Relay {
    fn run(mut self, rx: Receiver<Event>) -> Outcome {
        let mut deadline: Option<Instant> = None;
        let mut output_done = false;
        loop {
            let ev = match deadline.into_iter().chain(self.timer()).min() {
                None => match rx.recv() {
                    Ok(e) => e,
                    Err(_) => break,
                },
                Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(e) => e,
                    Err(RecvTimeoutError::Timeout) if self.timer().is_some_and(|w| w <= d) => {
                        self.tick();
                        continue;
                    }
                    Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
                },
            };
            match ev {
                Event::Input(b, at) => self.input(&b, at),
                Event::Output(b) => self.output(&b),
                Event::OutputEnd => {
                    if deadline.is_some() {
                        break;
                    }
                    output_done = true;
                }
                Event::Asked(q) => self.asked(*q),
                Event::Resolved(id) => self.resolved(id),
                Event::InputEnd => {}
                Event::Note(n) => {
                    self.notice = Some(n);
                    self.redraw();
                }
                Event::Resize => self.resize(),
                Event::Reset => {
                    self.questions.void();
                    self.acks.forget_bar();
                    (self.acked, self.ack_by) = (None, None);
                    self.redraw();
                }
                Event::AnswerFailed(id) => self.questions.not_applied(id),
                Event::Exited => {
                    self.exited.store(true, Ordering::Relaxed);
                    if output_done {
                        break;
                    }
                    deadline = Some(Instant::now() + DRAIN);
                }
            }
        }
        self.leave();
        Outcome {
            stopped: self.stopped,
        }
    }

    /// When the relay must act by itself: the bar's keys come back after typing, or the
    /// terminal took too long to say it shows a question.
    fn timer(&self) -> Option<Instant> {
        self.wake
            .into_iter()
            .chain(self.ack_by.map(|(_, t)| t))
            .min()
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if let Some((id, by)) = self.ack_by {
            if by <= now {
                return self.confirmed(id, now);
            }
        }
        self.wake = None;
        self.redraw();
    }

    /// The terminal shows question `id` since `at` (it answered the query sent after it).
    fn confirmed(&mut self, id: u64, at: Instant) {
        if self.ack_by.is_some_and(|(waited, _)| waited == id) {
            self.ack_by = None;
        }
        if self.questions.current().map(|o| o.question.id) == Some(id) {
            self.questions.shown(at);
            self.acked = Some(id);
            self.redraw();
        }
    }

    fn write(&mut self, s: &[u8]) {
        let mut o = self.out.lock();
        let _ = o.write_all(s);
        let _ = o.flush();
    }

    /// What covers the bottom rows now: the notice, or the bar for the oldest question.
    fn overlay(&self, now: Instant) -> Vec<String> {
        if let Some(n) = &self.notice {
            return vec![n.clone()];
        }
        match self.questions.current() {
            Some(o) => bar::lines(
                &o.question,
                &o.scope,
                self.questions.list().len() - 1,
                self.questions.keys(now),
                (self.size.rows, self.size.cols),
            ),
            None => Vec::new(),
        }
    }

    /// Draws the overlay, or takes it away if there is none.
    fn redraw(&mut self) {
        let s = self.overlay_text();
        if !s.is_empty() {
            self.write(frame(&s).as_bytes());
        }
    }

    /// What draws the overlay (or takes it away): from the neutral drawing state, at absolute
    /// rows, so nothing the command set moves or changes it. The terminal stays in that
    /// state while the bar is up.
    fn overlay_text(&mut self) -> String {
        let now = Instant::now();
        let lines = self.overlay(now);
        if lines.is_empty() {
            return self.undraw_text();
        }
        if self.drawn == 0 {
            self.shown = Some(self.model.screen().clone());
            if self.alt_under_bar.is_none() {
                self.alt_under_bar = Some(self.model.screen().alternate_screen());
            }
        }
        self.wake = if self.questions.keys(now) == Keys::Typing {
            self.questions.takes_keys_at()
        } else {
            None
        };
        let n = (lines.len() as u16).min(self.size.rows);
        let mut s = format!("{NEUTRAL}\x1b[?25l");
        // Rows the previous, taller overlay covered and this one does not.
        if self.drawn > n {
            s.push_str(&self.rows_of_model(self.size.rows - self.drawn, self.size.rows - n));
        }
        let top = self.size.rows - n;
        let blank = " ".repeat(self.size.cols as usize);
        for (i, l) in lines.iter().take(n as usize).enumerate() {
            // The whole row first: nothing of the command's stays beside a line that is
            // narrower on the terminal than it measures.
            let row = top + i as u16 + 1;
            s.push_str(&format!(
                "\x1b[{row};1H\x1b[0m\x1b[7m{blank}\x1b[{row};1H{l}\x1b[0m"
            ));
        }
        self.drawn = n;
        self.ask_terminal(now, &mut s);
        s
    }

    /// Once a question is drawn, asks the terminal to say when it shows it (DA1, `acks.rs`).
    fn ask_terminal(&mut self, now: Instant, s: &mut String) {
        let Some(id) = self.questions.current().map(|o| o.question.id) else {
            return;
        };
        if self.notice.is_none() && self.acked != Some(id) && self.acks.bar_asks(id) {
            s.push_str(DA1);
            self.ack_by = Some((id, now + ACK_WAIT));
        }
    }

    /// Puts back what the command drew under the overlay.
    fn undraw(&mut self) {
        let s = self.undraw_text();
        if !s.is_empty() {
            self.write(frame(&s).as_bytes());
        }
    }

    /// What puts back the rows under the overlay, then the drawing state, cursor and
    /// attributes the command had.
    fn undraw_text(&mut self) -> String {
        if self.drawn == 0 {
            return String::new();
        }
        self.alt_under_bar = None;
        self.wake = None;
        let mut s = self.rows_of_model(self.size.rows - self.drawn, self.size.rows);
        let screen = self.model.screen();
        s.push_str(if screen.hide_cursor() {
            "\x1b[?25l"
        } else {
            "\x1b[?25h"
        });
        s.push_str(
            &self
                .filter
                .drawing()
                .restore(screen.cursor_position(), &screen.cursor_state_formatted()),
        );
        s.push_str(&screen.attributes_formatted());
        self.drawn = 0;
        self.shown = None;
        s
    }

    /// Escape codes that draw rows `from..to` as the model has them.
    fn rows_of_model(&self, from: u16, to: u16) -> String {
        let mut s = String::new();
        let screen = self.model.screen();
        for (r, text) in screen.rows_formatted(0, self.size.cols).enumerate() {
            let r = r as u16;
            if r >= from && r < to {
                s.push_str(&format!("\x1b[{};1H\x1b[0m\x1b[2K", r + 1));
                s.push_str(&text);
            }
        }
        s
    }

    fn output(&mut self, raw: &[u8]) {
        let b = &self.filter.feed(raw)[..];
        let queries = self.filter.take_queries();
        if self.drawn == 0 {
            self.write(b);
            self.model.process(b);
            self.acks.command_asked(queries);
            return;
        }
        // Under the bar, draw only what changed, by position, so nothing scrolls the bar away;
        // then the bar again on top.
        self.model.process(b);
        let alt = self.model.screen().alternate_screen();
        if self.alt_under_bar.is_some_and(|was| was != alt) {
            // A screen switch: the terminal follows at once (it saves or restores the main
            // screen itself), then gets everything drawn.
            let screen = self.model.screen();
            let mut s = String::from(if alt { "\x1b[?1049h" } else { "\x1b[?1049l" });
            s.push_str("\x1b[?7h");
            s.push_str(&screen.contents_formatted());
            s.push_str(&screen.input_mode_formatted());
            self.alt_under_bar = Some(alt);
            self.shown = Some(screen.clone());
            self.write(s.as_bytes());
            self.drawn = 0;
            return self.redraw();
        }
        let diff = match &self.shown {
            // The diff moves the cursor relative to where `prev` left it, with its
            // attributes: put both back first (drawing the bar moved and reset them).
            Some(prev) => {
                // The model draws wrapped lines by wrapping: autowrap on (the bar's state
                // has it off, and sets it off again after).
                let mut d = String::from("\x1b[?7h");
                d.push_str(&prev.cursor_state_formatted());
                d.push_str(&prev.attributes_formatted());
                // Contents and input modes (keypad, mouse, bracketed paste) alike.
                d.push_str(&self.model.screen().state_diff(prev));
                d
            }
            None => self.model.screen().contents_formatted(),
        };
        self.shown = Some(self.model.screen().clone());
        // The rows under the bar may have been overwritten: draw all of it again, in the
        // same update.
        self.drawn = 0;
        let bar = self.overlay_text();
        self.write(frame(&(diff + &bar)).as_bytes());
    }

    /// A read of the person's terminal at `at`: what they typed, and the terminal's answers
    /// to DA1 (the command's passed on, the bar's saying a question is shown), in order.
    fn input(&mut self, bytes: &[u8], at: Instant) {
        for piece in pieces(bytes) {
            match piece {
                Piece::Typed(b) => self.typed(b, at),
                Piece::Answer(a) => match self.acks.answered() {
                    Asker::Command => {
                        let _ = self.to_cmd.send(a.to_vec());
                    }
                    Asker::Bar(id) => self.confirmed(id, at),
                },
            }
        }
    }

    fn typed(&mut self, bytes: &[u8], now: Instant) {
        let (notice, asking) = (self.notice.is_some(), !self.questions.is_empty());
        let keys = self.questions.keys(now);
        let mut pass = Vec::with_capacity(bytes.len());
        for t in route(bytes, &mut self.escape, notice, asking) {
            match t {
                Typed::Command(b) => self.questions.typed(now, is_text(b)),
                Typed::Dropped | Typed::Dismiss => self.questions.typed(now, true),
                _ => {}
            }
            match t {
                Typed::Command(b) => pass.push(b),
                Typed::Stop => self.stop(),
                Typed::Help => {
                    self.notice = Some(bar::ESCAPE_HELP.into());
                    self.redraw();
                }
                Typed::Dismiss => {
                    // The question shows from now: its keys wait again.
                    self.notice = None;
                    self.questions.rearm(now);
                    self.redraw();
                }
                Typed::Key(b) => match self.questions.key(b, now) {
                    Key::Changed => self.redraw(),
                    Key::Answer(generation, req) => self.answers.send(generation, req),
                    Key::Nothing | Key::Quit => {}
                },
                Typed::Dropped => {}
            }
        }
        if !pass.is_empty() {
            let _ = self.to_cmd.send(pass);
        }
        // The bar says when its keys wait for the person to stop typing.
        if self.drawn > 0 && self.questions.keys(now) != keys {
            self.redraw();
        }
    }

    fn asked(&mut self, q: Question) {
        if self.questions.asked(q) {
            self.redraw();
        }
    }

    fn resolved(&mut self, id: u64) {
        if self.questions.resolved(id) {
            self.redraw();
        }
    }

    fn resize(&mut self) {
        let Some(size) = pty::size_of(std::io::stdin().as_fd()) else {
            return;
        };
        if size == self.size {
            return;
        }
        let _ = pty::set_size(self.leader.as_fd(), size);
        self.model
            .screen_mut()
            .set_size(nz(size.rows), nz(size.cols));
        self.filter.resize(size.rows);
        self.size = size;
        if self.drawn > 0 {
            // The terminal rearranged what it showed; draw it all from the model, then the
            // bar where the new bottom is.
            let full = self.model.screen().contents_formatted();
            let mut s = format!("{NEUTRAL}\x1b[?7h\x1b[H\x1b[2J{full}");
            self.shown = Some(self.model.screen().clone());
            self.drawn = 0;
            s.push_str(&self.overlay_text());
            self.write(frame(&s).as_bytes());
        }
    }

    /// `Ctrl-] s`: ends the command (hang-up, as if the terminal closed), then kills what is
    /// left after a grace period.
    fn stop(&mut self) {
        self.stopped = true;
        if self.all {
            self.notice = None;
            self.questions.clear();
            self.undraw();
            crate::procs::stop_all("stopping (Ctrl-] s)");
            return;
        }
        let pg = Pid::from_raw(-self.pgid);
        let _ = kill(pg, Signal::SIGHUP);
        let _ = kill(pg, Signal::SIGCONT);
        let exited = self.exited.clone();
        std::thread::spawn(move || {
            std::thread::sleep(STOP_GRACE);
            if !exited.load(Ordering::Relaxed) {
                let _ = kill(pg, Signal::SIGKILL);
            }
        });
    }

    /// Leaves the terminal usable whatever the command left it in.
    fn leave(&mut self) {
        self.notice = None;
        self.questions.clear();
        self.undraw();
        // The whole screen to scroll in, no origin or insert mode, wrapping: the shell after
        // us gets a terminal as it expects one, its cursor where the command left it.
        let mut s = format!("{NEUTRAL}\x1b[?7h");
        s.push_str(&self.model.screen().cursor_state_formatted());
        s.push_str("\x1b[0m\x1b[?25h");
        if self.model.screen().alternate_screen() {
            s.push_str("\x1b[?1049l");
        }
        // Bracketed paste, mouse reporting and application keys off.
        s.push_str("\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1l\x1b>");
        self.write(s.as_bytes());
    }
}
