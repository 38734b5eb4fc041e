//! The command line. Parsing only checks values; `run.rs` acts on them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Examples:
  Ask about writes outside the project:   hallpass -- copilot
  Audit: allow everything, log it:        hallpass --prompt=allow --log=w.jsonl -- make install
  Unattended: deny what is not allowed:   hallpass --prompt=deny -- ./ci-step.sh
  Check the paths a tool declares:        hallpass --no-implicit --allow-path ~/.cache/t -- t
  Flags that would have asked nothing:    hallpass suggest w.jsonl
  What it wrote outside, as a tree:       hallpass report w.jsonl

Exit status: the command's own, 128+N if a signal N killed it; 125 if hallpass
itself failed, 126 if the command could not be run, 127 if it was not found,
2 for a usage error.";

const RULES_AFTER_HELP: &str = "\
Exit status: 0 when done, 1 if the rules file cannot be read whole, 2 for a usage
error, 3 if `remove` finds no rule for PATH (nothing removed), 125 if hallpass failed.";

/// Run a command; decide what it writes outside the project.
///
/// The project (the current directory), a private $TMPDIR, the usual devices and the
/// terminal stay writable. Every other write is asked about, allowed and logged, or
/// denied, as --prompt says. With no COMMAND, runs $SHELL.
#[derive(Parser, Debug)]
#[command(name = "hallpass", version, args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Option<Verb>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Verb {
    /// Show the daemon, its sessions and their counters.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List, add or remove lasting rules (what [a]lways and [n]ever answers saved).
    #[command(after_help = RULES_AFTER_HELP)]
    Rules(RulesArgs),
    /// Answer the questions of sessions run with --prompt=answer (or any session), from
    /// another terminal: interactively, or one by its number.
    Answer(AnswerArgs),
    /// List the profiles (built in and yours) and the paths each allows.
    Profiles {
        /// Print JSON instead of a list.
        #[arg(long)]
        json: bool,
    },
    /// From a --log file, the fewest --allow-path flags that would have let the run go by
    /// without a question.
    Suggest(SuggestArgs),
    /// What a session wrote outside the project, as a tree with counts and decisions.
    Report(ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), for `man -l -` or a man directory.
    Man,
}

#[derive(Args, Debug)]
pub struct SuggestArgs {
    /// The log of a run (`hallpass --prompt=allow --log=FILE -- COMMAND`).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Write a profile file instead of printing flags (use it with --profile FILE).
    #[arg(long = "profile-out", value_name = "FILE")]
    pub profile_out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The log of a run (`hallpass --log=FILE -- COMMAND`).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Write one self-contained HTML page to FILE instead.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct AnswerArgs {
    /// Print the pending questions as JSON and exit.
    #[arg(long, conflicts_with = "id")]
    pub json: bool,
    /// Answer the question with this number (as shown; or its id from --json) and exit.
    #[arg(long, value_name = "ID", requires = "answer")]
    pub id: Option<u64>,
    /// With --id: the answer.
    #[arg(value_enum, value_name = "ANSWER", requires = "id")]
    pub answer: Option<AnswerWord>,
    /// With --id and timed, always or never: the scope, if not the suggested one.
    #[arg(long, value_name = "PATH", requires = "id")]
    pub scope: Option<PathBuf>,
    /// Only this session's questions.
    #[arg(long, value_name = "ID")]
    pub session: Option<u64>,
    /// The daemon's API socket, if not the local one (for example one forwarded over ssh).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// An answer, in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnswerWord {
    /// Allow this one write.
    Once,
    /// Allow the scope for a while, in its session.
    Timed,
    /// Allow the scope from now on (a lasting rule).
    Always,
    /// Deny this one write.
    Deny,
    /// Deny the scope from now on (a lasting rule).
    Never,
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub action: Option<RulesAction>,
    /// Print JSON instead of a list.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum RulesAction {
    /// List the rules (the default).
    List,
    /// Allow writes to PATH and below in every session, without asking.
    Allow {
        #[arg(value_name = "PATH")]
        path: PathBuf,
    },
    /// Deny writes to PATH and below in every session, without asking.
    Deny {
        #[arg(value_name = "PATH")]
        path: PathBuf,
    },
    /// Remove the rule for PATH.
    Remove {
        #[arg(value_name = "PATH")]
        path: PathBuf,
    },
}

/// What `--prompt` does with a write that no rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PromptArg {
    /// Ask in this terminal.
    Ask,
    /// Audit: allow it and log it.
    Allow,
    /// Unattended: fail it with EACCES and log it.
    Deny,
    /// Wait for `hallpass answer` in another terminal.
    Answer,
    /// Ask with desktop notifications.
    Desktop,
}

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Decide on the path read; the kernel then runs the syscall (racy by design).
    Lite,
    /// The daemon performs allowed writes itself, so answers hold against races.
    Strict,
}

/// `--wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WaitArg {
    /// Stop supervising when the command exits.
    Command,
    /// Keep supervising processes the command left behind until the last exits.
    All,
}

/// `--allow-for`: `90` (seconds), or a duration as humantime reads it (`90s`, `5m`, `1h`,
/// `1h30m`); a whole number of seconds, at least one, that fits the wire's 32 bits.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        Duration::from_secs(s.parse().map_err(|_| format!("`{s}` is too long"))?)
    } else {
        humantime::parse_duration(s)
            .map_err(|_| format!("`{s}` is not a duration like 30s, 5m or 1h"))?
    };
    if d < Duration::from_secs(1) {
        return Err("the duration must be at least 1s".into());
    }
    if d.subsec_nanos() != 0 {
        return Err(format!("`{s}` is not a whole number of seconds"));
    }
    if u32::try_from(d.as_secs()).is_err() {
        return Err(format!("`{s}` is too long"));
    }
    Ok(d)
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Let the command write PATH and below without asking (repeatable).
    #[arg(long = "allow-path", value_name = "PATH")]
    pub allow_path: Vec<PathBuf>,
    /// Never let the command write PATH and below (repeatable).
    #[arg(long = "deny-path", value_name = "PATH")]
    pub deny_path: Vec<PathBuf>,
    /// Strict mode: connect to the service on socket PATH without asking (repeatable).
    #[arg(long = "allow-service", value_name = "PATH")]
    pub allow_service: Vec<PathBuf>,
    /// Make only --allow-path writable: not the project, $TMPDIR or devices.
    #[arg(long)]
    pub no_implicit: bool,
    /// With --no-implicit, keep this session's terminal writable.
    #[arg(long)]
    pub allow_tty: bool,
    /// What to do with writes no rule decides.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = PromptArg::Ask)]
    pub prompt: PromptArg,
    /// lite decides on the path; strict enforces answers on the real file.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ModeArg::Lite)]
    pub mode: ModeArg,
    /// When to stop supervising.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = WaitArg::Command)]
    pub wait: WaitArg,
    /// How long [t] allows a scope when asked: 30s, 5m, 1h.
    #[arg(long = "allow-for", value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub allow_for: Duration,
    /// Use the profile NAME (or a profile file) instead of the command's (repeatable).
    #[arg(long = "profile", value_name = "NAME")]
    pub profile: Vec<String>,
    /// Use no profile, not even the one named like the command.
    #[arg(long = "no-profile", conflicts_with = "profile")]
    pub no_profile: bool,
    /// Append one JSON line per decided write to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// The command and its arguments, after `--` [default: $SHELL].
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let secs = |s: &str| parse_duration(s).map(|d| d.as_secs());
        // What --allow-for always took.
        assert_eq!(secs("90"), Ok(90));
        assert_eq!(secs("90s"), Ok(90));
        assert_eq!(secs("5m"), Ok(300));
        assert_eq!(secs("1h"), Ok(3600));
        // And more, as humantime reads it.
        assert_eq!(secs("1h30m"), Ok(5400));
        assert_eq!(secs("2min"), Ok(120));
        assert_eq!(secs("0").unwrap_err(), "the duration must be at least 1s");
        assert_eq!(secs("0s").unwrap_err(), "the duration must be at least 1s");
        assert_eq!(
            secs("5x").unwrap_err(),
            "`5x` is not a duration like 30s, 5m or 1h"
        );
        assert_eq!(
            secs("").unwrap_err(),
            "`` is not a duration like 30s, 5m or 1h"
        );
        assert_eq!(
            secs("1500ms").unwrap_err(),
            "`1500ms` is not a whole number of seconds"
        );
        assert_eq!(secs("5000000000").unwrap_err(), "`5000000000` is too long");
        assert_eq!(secs("200years").unwrap_err(), "`200years` is too long");
    }
}
