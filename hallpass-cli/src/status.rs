//! `hallpass status`: the daemon's sessions and their counters, over the gRPC API.

use hallpass_proto::{EnforceMode, StatusRequest};

use crate::api::{client, runtime, say};
use crate::error::{ExitCode, Failure};

pub fn status(json: bool) -> Result<ExitCode, Failure> {
    runtime()?.block_on(async {
        let mut c = client().await?;
        let s = c
            .status(StatusRequest {})
            .await
            .map_err(|e| Failure::new(format!("status: {}", say(&e))))?;
        let s = s.into_inner();
        if json {
            let sessions: Vec<_> = s
                .sessions
                .iter()
                .map(|x| {
                    serde_json::json!({
                        "session": x.session_id, "argv": x.argv, "cwd": x.cwd, "launcher_pid": x.launcher_pid,
                        "pid": x.pid, "live": x.live, "notifications": x.notifications, "allowed": x.allowed,
                        "denied": x.denied, "passed": x.passed, "questions": x.questions, "age_secs": x.age_secs,
                        "mode": mode_name(x.mode), "landlock": x.landlock,
                        "profiles": x.profiles.iter().map(|p| serde_json::json!({"name": p.name, "paths": p.paths})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            crate::out::line(format_args!("{}", serde_json::json!({"pid": s.pid, "version": s.version, "sessions": sessions})));
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
                    x.argv.join(" ")
                ));
            }
            for x in &s.sessions {
                for p in &x.profiles {
                    crate::out::line(format_args!("{:>4}  profile {} allows {}", x.session_id, p.name, p.paths.join(", ")));
                }
            }
            if s.sessions.iter().any(performs_all) {
                crate::out::line(format_args!("* strict mode without a Landlock domain (Landlock ABI 2, Linux 5.19): the daemon performs every write, which is slower"));
            }
        }
        Ok(ExitCode::Success)
    })
}

fn mode_name(mode: i32) -> &'static str {
    match EnforceMode::try_from(mode) {
        Ok(EnforceMode::Strict) => "strict",
        _ => "lite",
    }
}
