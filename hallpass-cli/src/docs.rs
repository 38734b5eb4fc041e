//! `hallpass completions SHELL` and `hallpass man`: generated from the clap definitions in
//! `flags.rs` (clap_complete, clap_mangen), so they never drift from the real flags.

use std::io::Write;

use clap::CommandFactory;

use crate::flags::Cli;
use crate::Failure;

pub fn completions(shell: clap_complete::Shell) -> Result<i32, Failure> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "hallpass", &mut std::io::stdout());
    Ok(0)
}

/// `hallpass.1`: the flags, the subcommands (each with its one-line help; `hallpass help
/// SUBCOMMAND` has its flags), the examples and exit status.
pub fn man() -> Result<i32, Failure> {
    let fail = |e: std::io::Error| Failure::new(format!("cannot write the man page: {e}"));
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(fail)?;
    std::io::stdout().write_all(&out).map_err(fail)?;
    Ok(0)
}
