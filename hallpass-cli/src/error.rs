//! What hallpass says when it fails, and on the way: the failure of hallpass itself (one
//! line, perhaps a hint, and its exit code), the typed errors it is made of (finding the
//! daemon, registering the session with it), and a line for the user on a terminal that may
//! be in raw mode. Below every module but `sys` and `exit`.

use std::io;
use std::path::PathBuf;

use hallpass_proto::RefusalReason;

pub use crate::exit::ExitCode;

/// A failure of hallpass itself: one line (and perhaps a hint on the next) for the user, and
/// the exit code it ends with.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Finding or starting the daemon.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    /// Registering the session with the daemon.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The command could not be started (`CannotRun`, `NotFound`) or the flags were wrong
    /// (`Usage`).
    #[error("{message}")]
    Coded { message: String, code: ExitCode },
    /// Anything else hallpass could not do.
    #[error("{0}")]
    Other(String),
}

impl Failure {
    /// hallpass's own failure: exit code 125.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure::Other(message.into())
    }

    /// A failure that ends with `code`.
    pub fn with_code(message: impl Into<String>, code: ExitCode) -> Failure {
        Failure::Coded {
            message: message.into(),
            code,
        }
    }

    /// The exit code hallpass ends with.
    pub fn code(&self) -> ExitCode {
        match self {
            Failure::Coded { code, .. } => *code,
            _ => ExitCode::Failed,
        }
    }
}

/// Why the daemon could not be found or started (`daemon.rs`).
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("cannot use the runtime directory {dir}: {source}")]
    RuntimeDir { dir: PathBuf, source: io::Error },
    #[error("cannot find hallpassd (looked beside {exe} and in PATH)")]
    NotFound { exe: PathBuf },
    #[error("failed to start the daemon: {0}")]
    Start(String),
}

/// Why the session could not be registered with a daemon.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error(
        "the daemon did not answer in time while registering the session (is it stopped or stuck? see hallpassd.log in its runtime directory)"
    )]
    Timeout,
    #[error("lost the daemon while registering the session: {0}")]
    Lost(io::Error),
    #[error("the daemon refused the session: {message}")]
    Refused {
        reason: RefusalReason,
        message: String,
    },
    #[error("the daemon sent an unexpected reply (version mismatch?)")]
    Unexpected,
    #[error("cannot set the control socket's timeouts: {0}")]
    Timeouts(io::Error),
}

impl LinkError {
    /// Whether the daemon went away in the middle of it (killed, or restarting): another
    /// may do.
    pub fn gone(&self) -> bool {
        matches!(self, LinkError::Lost(e) if matches!(
            e.kind(),
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionAborted
        ))
    }
}

/// A line for the user on stderr, which may be a terminal in raw mode (where `\n` alone
/// does not return the cursor).
pub fn say(line: &str) {
    if crate::sys::pty::is_raw() {
        eprint!("{line}\r\n");
    } else {
        eprintln!("{line}");
    }
}
