//! `hallpass answer`: answers questions from another terminal (or over ssh), with the keys of
//! the prompt bar; or, for scripts, lists them as JSON and answers one by id.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::{event, Answer, AnswerRequest, PendingRequest, Question, WatchRequest};
use tonic::transport::Channel;

use crate::api::{client_at, runtime, say};
use crate::bar;
use crate::error::{ExitCode, Failure};
use crate::flags::{AnswerArgs, AnswerWord};
use crate::sys::pty::{self, RawMode};

pub fn answer(args: AnswerArgs) -> Result<ExitCode, Failure> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut c = client_at(args.socket.as_deref()).await?;
        let session = args.session.unwrap_or(0);
        if args.json {
            let list = pending(&mut c, session).await?;
            let v: Vec<_> = list.iter().map(to_json).collect();
            crate::out::line(format_args!("{}", serde_json::Value::Array(v)));
            return Ok(ExitCode::Success);
        }
        if let (Some(id), Some(word)) = (args.id, args.answer) {
            let id = resolve_id(&mut c, session, id).await?;
            let r = c
                .answer(AnswerRequest {
                    question_id: id,
                    answer: answer_of(word) as i32,
                    scope: args
                        .scope
                        .as_deref()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                })
                .await
                .map_err(|e| Failure::new(format!("answer: {}", say(&e))))?;
            let w = &r.get_ref().warning;
            if !w.is_empty() {
                eprintln!("hallpass: {w}");
            }
            return Ok(ExitCode::Success);
        }
        if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
            return Err(Failure::new(
                "hallpass answer needs a terminal to answer interactively; use --json to list the questions and --id ID ANSWER to answer one",
            ));
        }
        interactive(c, session, args.socket.as_deref()).await
    })
}

/// The questions waiting now (of `session`, or all with 0).
async fn pending(c: &mut HallpassClient<Channel>, session: u64) -> Result<Vec<Question>, Failure> {
    Ok(c.pending(PendingRequest {
        session_id: session,
    })
    .await
    .map_err(|e| Failure::new(format!("answer: {}", say(&e))))?
    .into_inner()
    .questions)
}

/// The question `id` names: its short number (`Question.number`, what people see) or its full
/// id (what scripts may have kept from `--json`). Resolved just before answering, against the
/// daemon that asks now.
async fn resolve_id(
    c: &mut HallpassClient<Channel>,
    session: u64,
    id: u64,
) -> Result<u64, Failure> {
    let list = pending(c, session).await?;
    list.iter()
        .find(|q| u64::from(q.number) == id)
        .or_else(|| list.iter().find(|q| q.id == id))
        .map(|q| q.id)
        .ok_or_else(|| {
            Failure::new(format!(
                "no pending question {id}: it was answered already, or its process went away\nhint: `hallpass answer --json` lists the pending questions and their numbers"
            ))
        })
}

fn answer_of(w: AnswerWord) -> Answer {
    match w {
        AnswerWord::Once => Answer::Once,
        AnswerWord::Timed => Answer::Timed,
        AnswerWord::Always => Answer::Always,
        AnswerWord::Deny => Answer::Deny,
        AnswerWord::Never => Answer::Never,
    }
}

fn to_json(q: &Question) -> serde_json::Value {
    serde_json::json!({
        "id": q.id, "number": q.number, "session": q.session_id, "command": q.command, "pid": q.pid, "name": q.name,
        "exe": q.exe, "syscall": q.syscall, "path": q.path, "also": q.also, "chain": q.chain, "scope": q.scope,
        "timed_secs": q.timed_secs, "asked_ms": q.asked_ms, "service": q.service,
    })
}

/// How long a call to the daemon may take before the client stops waiting for it.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A question must have been selected this long before a key answers it (a double press must
/// not answer the next one).
const ARMED_AFTER: std::time::Duration = std::time::Duration::from_millis(400);

/// What the interactive client shows.
struct View {
    /// Pending questions, oldest first, with the scope chosen so far.
    list: Vec<(Question, PathBuf)>,
    /// The selected question, by id: the list may change under it.
    selected: Option<u64>,
    /// Questions answered here, shown as such until the daemon says they are resolved.
    sent: Vec<u64>,
    /// The question last seen selected, and since when.
    armed: Option<(u64, std::time::Instant)>,
    /// A line about the last answer that did not apply.
    note: String,
}

impl View {
    /// The selected question's id: the one chosen if still there, else the oldest.
    fn current(&self) -> Option<u64> {
        self.selected
            .filter(|id| self.list.iter().any(|(q, _)| q.id == *id))
            .or_else(|| self.list.first().map(|(q, _)| q.id))
    }

    fn index(&self) -> Option<usize> {
        let id = self.current()?;
        self.list.iter().position(|(q, _)| q.id == id)
    }

    fn render(&self, size: pty::Size) -> String {
        let w = size.cols as usize;
        let cut = |s: String| -> String {
            if s.chars().count() > w {
                s.chars().take(w.saturating_sub(1)).chain(['…']).collect()
            } else {
                s
            }
        };
        let mut out = vec![cut(match self.list.len() {
            0 => "hallpass answer: no questions waiting; new ones show up here.  [q] quit".into(),
            1 => "hallpass answer: 1 question waiting.  [q] quit".into(),
            n => format!("hallpass answer: {n} questions waiting; [j]/[k] select.  [q] quit"),
        })];
        out.push(String::new());
        let clean = bar::clean;
        for (q, scope) in &self.list {
            let mark = if self.sent.contains(&q.id) {
                "="
            } else if Some(q.id) == self.current() {
                ">"
            } else {
                " "
            };
            let who = if q.name.is_empty() {
                format!("pid {}", q.pid)
            } else {
                format!("{} (pid {})", clean(&q.name), q.pid)
            };
            let mut cmd = clean(&q.command.join(" "));
            if cmd.chars().count() > 40 {
                cmd = cmd.chars().take(39).chain(['…']).collect();
            }
            out.push(cut(format!(
                "{mark} [{}] session {} ({cmd}): {who}",
                q.number, q.session_id
            )));
            let what: Vec<String> = std::iter::once(&q.path)
                .chain(&q.also)
                .map(|p| clean(p))
                .collect();
            let (verb, what) = verb_and_what(q, what.join(" and "));
            out.push(cut(format!("      wants to {verb} {what}")));
            let chain: Vec<String> = q.chain.iter().map(|c| clean(c)).collect();
            out.push(cut(format!("      by: {}", chain.join(" ← "))));
            out.push(cut(format!(
                "      [t] and [a] allow, [n] denies: {}",
                clean(&scope.to_string_lossy())
            )));
        }
        if let Some((q, _)) = self.list.iter().find(|(q, _)| Some(q.id) == self.current()) {
            out.push(String::new());
            out.push(cut(format!(
                "[o] allow once  [t] for {}  [a] always  [d] deny  [n] never  [+]/[-] wider/narrower",
                bar::duration(q.timed_secs)
            )));
        }
        if !self.note.is_empty() {
            out.push(String::new());
            out.push(cut(self.note.clone()));
        }
        let rows = size.rows as usize;
        out.truncate(rows);
        format!("\x1b[H\x1b[2J{}", out.join("\r\n"))
    }
}

async fn interactive(
    mut c: HallpassClient<Channel>,
    session: u64,
    socket: Option<&Path>,
) -> Result<ExitCode, Failure> {
    let watch = WatchRequest {
        session_id: session,
    };
    let mut stream = Some(
        c.watch(watch)
            .await
            .map_err(|e| Failure::new(format!("answer: {}", say(&e))))?
            .into_inner(),
    );
    let raw = RawMode::enter(std::io::stdin().as_fd())
        .map_err(|e| Failure::new(format!("cannot set the terminal to raw mode: {e}")))?;
    let (ktx, mut keys) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 || ktx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    let mut out = std::io::stdout();
    // The alternate screen: leaving puts back what the terminal showed.
    let _ = out.write_all(b"\x1b[?1049h\x1b[?25l");
    let mut view = View {
        list: Vec::new(),
        selected: None,
        sent: Vec::new(),
        armed: None,
        note: String::new(),
    };
    let size =
        || pty::size_of(std::io::stdout().as_fd()).unwrap_or(pty::Size { rows: 24, cols: 80 });
    let result = loop {
        let current = view.current();
        if current != view.armed.map(|(id, _)| id) {
            view.armed = current.map(|id| (id, std::time::Instant::now()));
        }
        let _ = out.write_all(view.render(size()).as_bytes());
        let _ = out.flush();
        // Without a daemon (it died, say), try again now and then: a new one asks the open
        // questions again.
        let Some(live) = stream.as_mut() else {
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {
                    // Bounded: a daemon that accepts and never answers must not freeze the keys.
                    let attempt = tokio::time::timeout(LIMIT, async {
                        let mut nc = client_at(socket).await.ok()?;
                        let s = nc.watch(watch).await.ok()?;
                        Some((nc, s.into_inner()))
                    });
                    if let Ok(Some((nc, s))) = attempt.await {
                        stream = Some(s);
                        c = nc;
                        view.note = "the daemon is back: it asks the open questions again, numbered anew".into();
                    }
                }
                k = keys.recv() => match k.as_deref() {
                    None | Some(b"q") | Some([0x03]) | Some([0x04]) => break Ok(ExitCode::Success),
                    _ => {}
                },
            }
            continue;
        };
        tokio::select! {
            m = live.message() => match m {
                Ok(Some(ev)) => match ev.kind {
                    Some(event::Kind::Asked(q)) if !view.list.iter().any(|(x, _)| x.id == q.id) => {
                        let scope = PathBuf::from(&q.scope);
                        view.list.push((q, scope));
                    }
                    Some(event::Kind::Asked(_)) => {}
                    Some(event::Kind::Resolved(r)) => {
                        view.list.retain(|(q, _)| q.id != r.question_id);
                        view.sent.retain(|id| *id != r.question_id);
                    }
                    // Events were lost: the pending list follows.
                    Some(event::Kind::Reset(_)) => {
                        view.list.clear();
                        view.sent.clear();
                    }
                    None => {}
                },
                Ok(None) | Err(_) => {
                    stream = None;
                    view.list.clear();
                    view.sent.clear();
                    view.note = "the daemon went away: waiting for it to come back (it asks its questions again)".into();
                }
            },
            k = keys.recv() => {
                let Some(k) = k else { break Ok(ExitCode::Success) };
                match key(&mut view, &k) {
                    Key::Quit => break Ok(ExitCode::Success),
                    Key::Answer(req) => {
                        let id = req.question_id;
                        view.note = match tokio::time::timeout(LIMIT, c.answer(req)).await {
                            Ok(Ok(r)) if !r.get_ref().warning.is_empty() => r.get_ref().warning.clone(),
                            Ok(Ok(_)) => String::new(),
                            Ok(Err(e)) => {
                                // Not applied: it stays open, and answerable.
                                view.sent.retain(|x| *x != id);
                                format!("not applied: {}", say(&e))
                            }
                            Err(_) => {
                                view.sent.retain(|x| *x != id);
                                "not applied: the daemon did not answer".into()
                            }
                        };
                    }
                    Key::Redraw => {}
                }
            }
        }
    };
    let _ = out.write_all(b"\x1b[?25h\x1b[?1049l");
    let _ = out.flush();
    drop(raw);
    result
}

enum Key {
    Quit,
    Answer(AnswerRequest),
    Redraw,
}

fn key(view: &mut View, k: &[u8]) -> Key {
    // Arrow keys arrive as one escape sequence; any other multi-byte chunk is a paste and
    // answers nothing.
    let b = match k {
        b"\x1b[A" | b"\x1bOA" => b'k',
        b"\x1b[B" | b"\x1bOB" => b'j',
        [b] => *b,
        _ => return Key::Redraw,
    };
    match b {
        b'q' | 0x03 | 0x04 => return Key::Quit,
        b'j' | b'k' => {
            if let Some(i) = view.index() {
                let j = if b == b'j' {
                    (i + 1).min(view.list.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                view.selected = Some(view.list[j].0.id);
            }
            return Key::Redraw;
        }
        _ => {}
    }
    let Some(i) = view.index() else {
        return Key::Redraw;
    };
    let id = view.list[i].0.id;
    let ready = view
        .armed
        .is_some_and(|(a, since)| a == id && since.elapsed() >= ARMED_AFTER);
    if view.sent.contains(&id) || (!ready && bar::key_action(b).is_some()) {
        return Key::Redraw;
    }
    let Some((q, scope)) = view.list.get_mut(i) else {
        return Key::Redraw;
    };
    let answer = match bar::key_action(b) {
        Some(bar::KeyAction::Answer(a)) => a,
        Some(bar::KeyAction::Wider) => {
            *scope = bar::wider(scope, &bar::home());
            return Key::Redraw;
        }
        Some(bar::KeyAction::Narrower) => {
            *scope = bar::narrower(scope, Path::new(&q.path));
            return Key::Redraw;
        }
        None => return Key::Redraw,
    };
    let req = AnswerRequest {
        question_id: q.id,
        answer: answer as i32,
        scope: if scope.as_os_str() == q.scope.as_str() {
            String::new()
        } else {
            scope.to_string_lossy().into_owned()
        },
    };
    // Moves on to the next; this one goes when the daemon says it is resolved.
    view.sent.push(req.question_id);
    view.selected = view
        .list
        .iter()
        .map(|(q, _)| q.id)
        .find(|id| !view.sent.contains(id));
    Key::Answer(req)
}

/// What a question asks for: `write PATH`, or `connect to SOCKET (SERVICE)` for a
/// connection to a service outside the session.
pub fn verb_and_what(q: &Question, what: String) -> (&'static str, String) {
    if q.syscall == "connect" {
        let service = crate::bar::clean(&q.service);
        ("connect to", format!("{what} ({service})"))
    } else {
        ("write", what)
    }
}
