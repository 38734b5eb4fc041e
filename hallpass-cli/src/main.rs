//! `hallpass`: the thin command-line client. Launches commands under supervision and talks to
//! `hallpassd`; every decision is the daemon's.

mod answer;
mod api;
mod bar;
mod daemon;
mod desktop;
mod docs;
mod flags;
mod link;
mod logfile;
mod out;
mod procs;
mod profiles;
mod report;
mod rules;
mod run;
mod status;
mod suggest;
mod sys;
mod terminal;

use clap::Parser;

/// A failure of hallpass itself: one line (and perhaps a hint) for the user, and an exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

impl Failure {
    /// Exit code 125: hallpass's own failure, like env(1) and timeout(1).
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 125,
        }
    }

    pub fn with_code(message: impl Into<String>, code: i32) -> Failure {
        Failure {
            message: message.into(),
            code,
        }
    }
}

/// A line for the user on stderr, which may be a terminal in raw mode (where `\n` alone
/// does not return the cursor).
pub fn say(line: &str) {
    if sys::pty::is_raw() {
        eprint!("{line}\r\n");
    } else {
        eprintln!("{line}");
    }
}

fn main() {
    let cli = flags::Cli::parse();
    let r = match cli.verb {
        Some(flags::Verb::Status { json }) => status::status(json),
        Some(flags::Verb::Rules(r)) => rules::rules(r),
        Some(flags::Verb::Answer(a)) => answer::answer(a),
        Some(flags::Verb::Profiles { json }) => profiles::list::profiles(json),
        Some(flags::Verb::Suggest(a)) => suggest::suggest(a),
        Some(flags::Verb::Report(a)) => report::report(a),
        Some(flags::Verb::Completions { shell }) => docs::completions(shell),
        Some(flags::Verb::Man) => docs::man(),
        None => run::run(cli.run),
    };
    match r {
        Ok(code) => std::process::exit(code),
        Err(f) => {
            eprintln!("hallpass: {}", f.message);
            std::process::exit(f.code);
        }
    }
}
