//! `hallpassd`: parses its flags and runs the daemon (`hallpassd::daemon`).

use std::path::PathBuf;

use clap::Parser;

/// The per-user hallpass daemon. `hallpass` starts it when none answers; you rarely run it
/// yourself.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Directory for the sockets [default: $XDG_RUNTIME_DIR/hallpass].
    #[arg(long, value_name = "DIR")]
    runtime_dir: Option<PathBuf>,
    /// Exit after this many seconds without a session (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    idle_exit: u64,
}

fn main() {
    let args = Args::parse();
    hallpassd::daemon::main(hallpassd::daemon::Config {
        runtime_dir: args.runtime_dir,
        idle_exit: args.idle_exit,
    })
}
