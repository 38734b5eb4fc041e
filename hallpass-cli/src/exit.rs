//! hallpass's exit codes. A leaf below every module, `sys` included (the launcher's child
//! exits with them between `fork` and `exec`).

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
    /// Nothing to act on: `hallpass rules remove` found no rule for the path.
    Nothing,
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
            ExitCode::Nothing => 3,
            ExitCode::Failed => Self::FAILED,
            ExitCode::CannotRun => Self::CANNOT_RUN,
            ExitCode::NotFound => Self::NOT_FOUND,
            ExitCode::Command(c) => c,
        }
    }
}
