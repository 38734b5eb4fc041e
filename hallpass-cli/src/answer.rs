//! `hallpass answer`: answers questions from another terminal (or over ssh), with the keys of
//! the prompt bar; or, for scripts, lists them as JSON and answers one by id.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Instant;

use hallpass_proto::hallpass_client::HallpassClient;
use hallpass_proto::{Answer, AnswerRequest, PendingRequest, Question};
use tonic::transport::Channel;

use crate::api::{client_at, runtime, say};
use crate::error::{ExitCode, Failure};
use crate::flags::{AnswerArgs, AnswerWord};
use crate::questions::follow::{self, Outcome, Source, Update, Why};
use crate::questions::model::{Key, Model, Open};
use crate::questions::text::{clean, cut_right, keys, Words, SCOPE_LEAD};
use crate::sys::pty::{self, RawMode};

pub fn answer(args: AnswerArgs) -> Result<ExitCode, Failure> {
    // A socket named is another daemon's, perhaps forwarded: its failures are its own.
    let local = args.socket.is_none();
    answer_with(args).map_err(|f| match local {
        true => crate::inside::client_failed("answer", f),
        false => f,
    })
}

fn answer_with(args: AnswerArgs) -> Result<ExitCode, Failure> {
    let rt = runtime()?;
    rt.block_on(async {
        let mut c = client_at(args.socket.as_deref()).await?;
        let session = args.session.unwrap_or(0);
        if args.json {
            let list = pending(&mut c, session).await?;
            let v: Vec<_> = list.iter().map(QuestionJson::of).collect();
            crate::out::json(&v);
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
        drop(c);
        interactive(args.socket.as_deref(), session).await
    })
}

/// The questions waiting now (of `session`, or all with 0), a page at a time.
async fn pending(c: &mut HallpassClient<Channel>, session: u64) -> Result<Vec<Question>, Failure> {
    let mut all: Vec<Question> = Vec::new();
    loop {
        let page = c
            .pending(PendingRequest {
                session_id: session,
                after_id: all.last().map_or(0, |q| q.id),
            })
            .await
            .map_err(|e| Failure::new(format!("answer: {}", say(&e))))?
            .into_inner();
        let more = page.more && !page.questions.is_empty();
        all.extend(page.questions);
        if !more {
            return Ok(all);
        }
    }
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

/// A question in `hallpass answer --json` (see `Question` in `hallpass.proto`).
#[derive(serde::Serialize)]
struct QuestionJson<'a> {
    also: &'a [String],
    asked_ms: u64,
    chain: &'a [String],
    command: &'a [String],
    exe: &'a str,
    id: u64,
    name: &'a str,
    number: u32,
    path: &'a str,
    pid: i32,
    scope: &'a str,
    service: &'a str,
    session: u64,
    syscall: &'a str,
    timed_secs: u32,
}

impl<'a> QuestionJson<'a> {
    fn of(q: &'a Question) -> QuestionJson<'a> {
        QuestionJson {
            also: &q.also,
            asked_ms: q.asked_ms,
            chain: &q.chain,
            command: &q.command,
            exe: &q.exe,
            id: q.id,
            name: &q.name,
            number: q.number,
            path: &q.path,
            pid: q.pid,
            scope: &q.scope,
            service: &q.service,
            session: q.session_id,
            syscall: &q.syscall,
            timed_secs: q.timed_secs,
        }
    }
}

/// `hallpass answer`'s screen: a header, every open question (the selected one marked `>`,
/// one answered here `=`), the keys, and the note about the last answer.
fn render(model: &Model, note: &str, size: pty::Size) -> String {
    let cut = |s: String| cut_right(&s, size.cols as usize);
    let mut out = vec![cut(match model.list().len() {
        0 => "hallpass answer: no questions waiting; new ones show up here.  [q] quit".into(),
        1 => "hallpass answer: 1 question waiting.  [q] quit".into(),
        n => format!("hallpass answer: {n} questions waiting; [j]/[k] select.  [q] quit"),
    })];
    out.push(String::new());
    let current = model.current().map(|o| o.question.id);
    for Open { question: q, scope } in model.list() {
        // Past the screen's rows nothing shows: a long list costs no more than a screenful.
        if out.len() >= size.rows as usize {
            break;
        }
        let mark = if model.is_sent(q.id) {
            "="
        } else if Some(q.id) == current {
            ">"
        } else {
            " "
        };
        let words = Words::of(q, scope, &clean);
        let cmd = cut_right(&clean(&q.command.join(" ")), 40);
        out.push(cut(format!(
            "{mark} [{}] session {} ({cmd}): {}",
            q.number, q.session_id, words.who
        )));
        let room = (size.cols as usize).saturating_sub(16 + words.verb.len());
        out.push(cut(format!(
            "      wants to {} {}",
            words.verb,
            words.what_in(room)
        )));
        out.push(cut(format!("      by: {}", words.by)));
        out.push(cut(format!("      {SCOPE_LEAD}{}", words.scope)));
    }
    if let Some(o) = model.current() {
        out.push(String::new());
        out.push(cut(format!(
            "{}  [+]/[-] wider/narrower",
            keys(o.question.timed_secs)
        )));
    }
    if !note.is_empty() {
        out.push(String::new());
        out.push(cut(note.to_string()));
    }
    out.truncate(size.rows as usize);
    format!("\x1b[H\x1b[2J{}", out.join("\r\n"))
}

/// Takes what the follower saw into the model, and the note.
fn apply(u: Update, model: &mut Model, note: &mut String) {
    match u {
        Update::Asked(q) => {
            model.asked(*q);
        }
        Update::Resolved(id) => {
            model.resolved(id);
        }
        Update::Void(why) => {
            model.void();
            if let Why::Lost = why {
                *note = "the daemon went away: waiting for it to come back (it asks its questions again)".into();
            }
        }
        Update::Back => {
            *note = "the daemon is back: it asks the open questions again, numbered anew".into();
        }
        Update::Answered { id, outcome } => {
            *note = match outcome {
                Outcome::Applied { warning } => warning,
                Outcome::Settled(why) | Outcome::Refused(why) => {
                    // Not applied: it stays open, and answerable.
                    model.not_applied(id);
                    format!("not applied: {why}")
                }
                Outcome::NoReply => {
                    model.not_applied(id);
                    "not applied: the daemon did not answer".into()
                }
            };
        }
        Update::Trouble(_) => {}
    }
}

async fn interactive(socket: Option<&Path>, session: u64) -> Result<ExitCode, Failure> {
    let (mut follower, answers) = follow::follower(Source::Socket {
        socket: socket.map(Path::to_path_buf),
        session,
    });
    follower.connect().await?;
    let raw = RawMode::enter()
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
    let (utx, mut updates) = tokio::sync::mpsc::unbounded_channel();
    let following = tokio::spawn(async move { follower.run(&mut |u| utx.send(u).is_ok()).await });
    let mut out = std::io::stdout();
    // The alternate screen: leaving puts back what the terminal showed.
    let _ = out.write_all(b"\x1b[?1049h\x1b[?25l");
    let mut model = Model::new(crate::env::real_home_dir());
    // A line about the daemon, or the last answer that did not apply.
    let mut note = String::new();
    let size =
        || pty::size_of(std::io::stdout().as_fd()).unwrap_or(pty::Size { rows: 24, cols: 80 });
    loop {
        model.shown(Instant::now());
        let _ = out.write_all(render(&model, &note, size()).as_bytes());
        let _ = out.flush();
        tokio::select! {
            u = updates.recv() => {
                let Some(u) = u else { break };
                apply(u, &mut model, &mut note);
                // Everything that came meanwhile, then one screen: hundreds of questions
                // arriving at once are drawn once, not once each.
                while let Ok(u) = updates.try_recv() {
                    apply(u, &mut model, &mut note);
                }
            }
            k = keys.recv() => {
                let Some(k) = k else { break };
                match model.list_key(&k, Instant::now()) {
                    Key::Quit => break,
                    Key::Answer(generation, req) => answers.send(generation, req),
                    Key::Changed | Key::Nothing => {}
                }
            }
        }
    }
    following.abort();
    let _ = out.write_all(b"\x1b[?25h\x1b[?1049l");
    let _ = out.flush();
    drop(raw);
    Ok(ExitCode::Success)
}
