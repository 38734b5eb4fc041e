//! `hallpass status`: the daemon's sessions and their counters, over the gRPC API.

use hallpass_proto::shown::shown;
use hallpass_proto::{EnforceMode, StatusRequest};

use crate::api::{client, runtime, say};
use crate::error::{ExitCode, Failure};

pub fn status(json: bool) -> Result<ExitCode, Failure> {
    show(json).map_err(|f| crate::inside::client_failed("status", f))
}

fn show(json: bool) -> Result<ExitCode, Failure> {
    runtime()?.block_on(async {
        let mut c = client().await?;
        let s = c
            .status(StatusRequest {})
            .await
            .map_err(|e| Failure::new(format!("status: {}", say(&e))))?;
        let s = s.into_inner();
        if json {
            crate::out::json(&StatusJson {
                pid: s.pid,
                sessions: s.sessions.iter().map(SessionJson::of).collect(),
                version: &s.version,
            });
        } else {
            crate::out::line(format_args!("hallpassd {} (pid {}), {} sessions", s.version, s.pid, s.sessions.len()));
            if !s.sessions.is_empty() {
                crate::out::line(format_args!("{:>4}  {:<5}  {:<7}  {:>7}  {:>8}  {:>8}  {:>7}  {:>5}  COMMAND", "ID", "STATE", "MODE", "PID", "NOTIFS", "ALLOWED", "DENIED", "ASKED"));
            }
            let performs_all = |x: &hallpass_proto::SessionStatus| {
                x.mode == EnforceMode::Strict as i32 && !x.landlock
            };
            for x in &s.sessions {
                let mode = if performs_all(x) { "strict*" } else { mode_name(x.mode) };
                crate::out::line(format_args!(
                    "{:>4}  {:<5}  {:<7}  {:>7}  {:>8}  {:>8}  {:>7}  {:>5}  {}",
                    x.session_id,
                    if x.live { "live" } else { "ended" },
                    mode,
                    x.pid,
                    x.notifications,
                    x.allowed,
                    x.denied,
                    x.questions,
                    words(&x.argv)
                ));
            }
            for x in &s.sessions {
                for p in &x.profiles {
                    let list = |v: &[String]| {
                        v.iter().map(|p| shown(p).to_string()).collect::<Vec<_>>().join(", ")
                    };
                    let asks = match p.ask.is_empty() {
                        true => String::new(),
                        false => format!("; asks about {}", list(&p.ask)),
                    };
                    crate::out::line(format_args!("{:>4}  profile {} allows {}{asks}", x.session_id, shown(&p.name), list(&p.paths)));
                }
            }
            if s.sessions.iter().any(performs_all) {
                crate::out::line(format_args!("* strict mode without a Landlock domain (Landlock ABI 2, Linux 5.19): the daemon performs every write, which is slower"));
            }
        }
        Ok(ExitCode::Success)
    })
}

/// A command line as a person reads it: each word through `shown` (a command line is text
/// the command may have chosen: a script's arguments, a name it made).
fn words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shown(a).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `hallpass status --json` (see `StatusReply` in `hallpass.proto`).
#[derive(serde::Serialize)]
struct StatusJson<'a> {
    pid: i32,
    sessions: Vec<SessionJson<'a>>,
    version: &'a str,
}

#[derive(serde::Serialize)]
struct SessionJson<'a> {
    age_secs: u64,
    allowed: u64,
    argv: &'a [String],
    cwd: &'a str,
    denied: u64,
    landlock: bool,
    launcher_pid: i32,
    live: bool,
    /// `lite` or `strict`.
    mode: &'static str,
    notifications: u64,
    passed: u64,
    pid: i32,
    profiles: Vec<ProfileJson<'a>>,
    questions: u64,
    session: u64,
}

#[derive(serde::Serialize)]
struct ProfileJson<'a> {
    ask: &'a [String],
    name: &'a str,
    paths: &'a [String],
}

impl<'a> SessionJson<'a> {
    fn of(x: &'a hallpass_proto::SessionStatus) -> SessionJson<'a> {
        SessionJson {
            age_secs: x.age_secs,
            allowed: x.allowed,
            argv: &x.argv,
            cwd: &x.cwd,
            denied: x.denied,
            landlock: x.landlock,
            launcher_pid: x.launcher_pid,
            live: x.live,
            mode: mode_name(x.mode),
            notifications: x.notifications,
            passed: x.passed,
            pid: x.pid,
            profiles: x
                .profiles
                .iter()
                .map(|p| ProfileJson {
                    ask: &p.ask,
                    name: &p.name,
                    paths: &p.paths,
                })
                .collect(),
            questions: x.questions,
            session: x.session_id,
        }
    }
}

fn mode_name(mode: i32) -> &'static str {
    match EnforceMode::try_from(mode) {
        Ok(EnforceMode::Strict) => "strict",
        _ => "lite",
    }
}
