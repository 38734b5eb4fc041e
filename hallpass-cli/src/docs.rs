//! `hallpass completions SHELL` and `hallpass man`: generated from the clap definitions in
//! `flags.rs` (clap_complete, clap_mangen), so they never drift from the real flags.

use clap::CommandFactory;

use crate::error::{ExitCode, Failure};
use crate::flags::Cli;

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hallpass", &mut out);
    crate::out::print(&String::from_utf8_lossy(&out));
    Ok(ExitCode::Success)
}

/// `hallpass.1`: the flags, the subcommands (each with its one-line help; `hallpass help
/// SUBCOMMAND` has its flags), the examples and exit status.
pub fn man() -> Result<ExitCode, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| Failure::new(format!("cannot make the man page: {e}")))?;
    crate::out::print(&String::from_utf8_lossy(&out));
    Ok(ExitCode::Success)
}
