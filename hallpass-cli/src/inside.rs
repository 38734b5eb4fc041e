//! Whether this process runs inside a hallpass session, or a sandbox like one: under a
//! seccomp filter with no_new_privs (`Seccomp:` and `NoNewPrivs:` in `/proc/self/status`),
//! the mark on which the daemon turns a peer away on both its sockets
//! (`hallpassd/src/peer.rs`), since it cannot tell such a process from one it supervises. What
//! hallpass says then, instead of a transport error: when `hallpass status`, `rules` or
//! `answer` fail on the local daemon, why, in a line; and a nested `hallpass -- COMMAND` the
//! daemon refused gets a hint. The daemon is asked all the same: it decides. The session's number comes from `HALLPASS_SESSION`, which the launcher sets
//! for the command (text only: the mark is what counts). A leaf but for the error type.

use crate::error::{ExitCode, Failure, LinkError};

/// This process's mark, if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// `Seccomp:` (2: a filter).
    pub mode: String,
    /// `Seccomp_filters:`, how many.
    pub filters: String,
    /// The session it runs in, as `HALLPASS_SESSION` says.
    pub session: Option<u64>,
}

/// The mark in the text of a `/proc/PID/status` file, with `session` from the environment.
fn mark_in(status: &str, session: Option<u64>) -> Option<Mark> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    };
    let mode = field("Seccomp")?;
    if mode == "0" || field("NoNewPrivs").as_deref() != Some("1") {
        return None;
    }
    Some(Mark {
        mode,
        filters: field("Seccomp_filters").unwrap_or_else(|| "?".into()),
        session,
    })
}

/// This process's mark.
pub fn mark() -> Option<Mark> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let session = std::env::var("HALLPASS_SESSION")
        .ok()
        .and_then(|s| s.parse().ok());
    mark_in(&status, session)
}

impl Mark {
    /// Where this runs, in words.
    fn place(&self) -> String {
        match self.session {
            Some(n) => format!("this shell runs inside hallpass session {n}"),
            None => format!(
                "this process runs under a seccomp filter with no_new_privs (Seccomp: {}, {} \
                 filter(s)), as every process hallpass supervises does",
                self.mode, self.filters
            ),
        }
    }

    /// Where to run `hallpass VERB` instead.
    fn elsewhere(&self) -> &'static str {
        match self.session {
            Some(_) => "outside the session: in another terminal, or after leaving it (exit)",
            None => "outside such a sandbox",
        }
    }
}

/// Why the daemon hangs up on this process, if it is marked (for a connection that failed).
pub fn sandbox_hint() -> Option<String> {
    let m = mark()?;
    Some(format!(
        "{}, and the daemon refuses such clients: run `hallpass answer`, `hallpass rules` and \
         `hallpass status` {}",
        m.place(),
        m.elsewhere()
    ))
}

/// A failure of `hallpass VERB` on the local daemon, said plainly if this process is marked:
/// the daemon hung up on it (it decides; this only says why, instead of a transport error).
/// hallpass's usage errors and the like stay as they are.
pub fn client_failed(verb: &str, f: Failure) -> Failure {
    if f.code() != ExitCode::Failed {
        return f;
    }
    match mark() {
        Some(m) => client_refused(&m, verb),
        None => f,
    }
}

fn client_refused(m: &Mark, verb: &str) -> Failure {
    let why = match m.session {
        Some(_) => "answers no process of a session (a command could answer its own questions)",
        None => "answers no such process",
    };
    Failure::with_code(
        format!(
            "{verb}: {}, and the daemon {why}\nhint: run `hallpass {verb}` {}",
            m.place(),
            m.elsewhere()
        ),
        ExitCode::Failed,
    )
}

/// A session the daemon refused: with a hint when the refusal is of this process, marked.
pub fn nested(f: Failure) -> Failure {
    let peer = matches!(
        &f,
        Failure::Link(LinkError::Refused {
            reason: hallpass_proto::RefusalReason::Peer,
            ..
        })
    );
    match (peer, mark()) {
        (true, Some(m)) => Failure::new(format!("{f}\nhint: {}", nested_hint(&m))),
        _ => f,
    }
}

fn nested_hint(m: &Mark) -> String {
    match m.session {
        Some(n) => format!(
            "this shell already runs under hallpass (session {n}); run the command directly, \
             or leave the session first (exit)"
        ),
        None => format!("{}: run hallpass {}", m.place(), m.elsewhere()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKED: &str = "Name:\tsh\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";

    #[test]
    fn the_mark_is_a_filter_with_no_new_privs() {
        assert_eq!(mark_in("NoNewPrivs:\t0\nSeccomp:\t2\n", None), None);
        assert_eq!(mark_in("NoNewPrivs:\t1\nSeccomp:\t0\n", None), None);
        assert_eq!(mark_in("Name:\tx\n", None), None);
        let m = mark_in(MARKED, Some(3)).unwrap();
        assert_eq!((m.mode.as_str(), m.filters.as_str()), ("2", "1"));
    }

    #[test]
    fn inside_a_session_a_client_is_told_where_to_run() {
        let m = mark_in(MARKED, Some(3)).unwrap();
        assert_eq!(
            client_refused(&m, "rules").to_string(),
            "rules: this shell runs inside hallpass session 3, and the daemon answers no \
             process of a session (a command could answer its own questions)\n\
             hint: run `hallpass rules` outside the session: in another terminal, or after \
             leaving it (exit)"
        );
        assert_eq!(
            nested_hint(&m),
            "this shell already runs under hallpass (session 3); run the command directly, or \
             leave the session first (exit)"
        );
        let m = mark_in(MARKED, None).unwrap();
        assert!(client_refused(&m, "status")
            .to_string()
            .contains("hint: run `hallpass status` outside such a sandbox"));
    }
}
