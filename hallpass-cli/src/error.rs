//! How hallpass ends and what it says on the way: the documented exit codes, the failure of
//! hallpass itself (one line, perhaps a hint, and its code), and a line for the user on a
//! terminal that may be in raw mode. A leaf: every other module may use it.

/// hallpass's exit codes, as `hallpass --help` documents them. The command's own status
/// passes through unchanged (`Command`); the others are hallpass's, like env(1) and
/// timeout(1) use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitCode {
    /// Done, nothing to report.
    Success,
    /// Done, but something read on the way was broken (a rules or profile file).
    Problems,
    /// A usage error: a flag's value, an unknown profile.
    Usage,
    /// hallpass itself failed.
    Failed,
    /// The command was found but could not be run.
    CannotRun,
    /// The command was not found.
    NotFound,
    /// The command's own status (128+N if signal N killed it).
    Command(i32),
}

impl ExitCode {
    /// hallpass's own failure, as a plain number: for code that must not allocate (between
    /// `fork` and `exec`) and for the exit call.
    pub const FAILED: i32 = 125;
    /// See [`ExitCode::CannotRun`].
    pub const CANNOT_RUN: i32 = 126;
    /// See [`ExitCode::NotFound`].
    pub const NOT_FOUND: i32 = 127;

    /// The number the process exits with.
    pub fn code(self) -> i32 {
        match self {
            ExitCode::Success => 0,
            ExitCode::Problems => 1,
            ExitCode::Usage => 2,
            ExitCode::Failed => Self::FAILED,
            ExitCode::CannotRun => Self::CANNOT_RUN,
            ExitCode::NotFound => Self::NOT_FOUND,
            ExitCode::Command(c) => c,
        }
    }
}

/// A failure of hallpass itself: one line (and perhaps a hint on the next) for the user, and
/// the exit code it ends with.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Finding or starting the daemon.
    #[error(transparent)]
    Daemon(#[from] crate::daemon::DaemonError),
    /// Registering the session with the daemon.
    #[error(transparent)]
    Link(#[from] crate::link::LinkError),
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

/// A line for the user on stderr, which may be a terminal in raw mode (where `\n` alone
/// does not return the cursor).
pub fn say(line: &str) {
    if crate::sys::pty::is_raw() {
        eprint!("{line}\r\n");
    } else {
        eprintln!("{line}");
    }
}
