//! Reading the command line, and what a mistyped one gets. clap reports a word before `--`
//! that is no subcommand (`hallpass claude`, `hallpass stauts`) as an unexpected argument,
//! with no "did you mean" (the trailing COMMAND takes its suggestions away); the usual
//! mistakes are a forgotten `--` and a misspelt subcommand, so this says which, with the line
//! that would work. Every other error is clap's own.

use std::ffi::{OsStr, OsString};

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};
use hallpass_proto::shown::shown;

use crate::exit::ExitCode;
use crate::flags::Cli;

/// The command line, parsed; a usage error ends hallpass with status 2.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => match mistyped(&e, &args) {
            Some(text) => {
                eprintln!("{text}");
                std::process::exit(ExitCode::Usage.code());
            }
            None => e.exit(),
        },
    }
}

/// What to say of `e`, the error of `args`, if it is a word before `--` that no subcommand
/// or flag takes; `None` to leave it to clap.
fn mistyped(e: &clap::Error, args: &[OsString]) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    if word.starts_with('-') {
        return None;
    }
    // The first place of the word where a `--` before it makes a line that parses: the
    // command the person meant to run.
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (at, fixed) = (1..end).find_map(|i| {
        if args[i].to_string_lossy() != word.as_str() {
            return None;
        }
        let mut fixed = args.to_vec();
        fixed.insert(i, "--".into());
        Cli::try_parse_from(&fixed).is_ok().then_some((i, fixed))
    })?;
    let similar = if at == 1 { similar_verb(word) } else { None };
    let runnable = crate::env::search_path(OsStr::new(word)).is_some();
    Some(message(word, at == 1, similar, runnable, &fixed[1..]))
}

/// The message: what is wrong, a did-you-mean for a word like a subcommand, and the line
/// with `--` (unless the word looks like a misspelt subcommand and names no program).
fn message(
    word: &str,
    first: bool,
    similar: Option<String>,
    runnable: bool,
    fixed: &[OsString],
) -> String {
    let what = if first {
        "unknown subcommand"
    } else {
        "unexpected argument"
    };
    let mut s = format!("hallpass: {what} `{}`", shown(word));
    let dashes = similar.is_none() || runnable;
    if let Some(v) = similar {
        s.push_str(&format!("\nhint: did you mean `hallpass {v}`?"));
    }
    if dashes {
        let line: Vec<String> = fixed.iter().map(|a| shell_word(a)).collect();
        s.push_str(&format!(
            "\nhint: to run a command, put -- before it: hallpass {}",
            line.join(" ")
        ));
    }
    s
}

/// The subcommand `word` is most like, if any is like it (as clap suggests flags: Jaro
/// similarity above 0.7).
fn similar_verb(word: &str) -> Option<String> {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .map(|name| (strsim::jaro(word, &name), name))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// An argument as a person would type it again: bare when safe, else in single quotes;
/// what cannot be typed as it is shows escaped.
fn shell_word(a: &OsStr) -> String {
    let s = shown(a).to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./~+-@%:,=".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(line: &[&str]) -> Option<String> {
        let args: Vec<OsString> = line.iter().map(OsString::from).collect();
        let e = Cli::try_parse_from(&args).expect_err("a usage error");
        mistyped(&e, &args)
    }

    #[test]
    fn a_forgotten_double_dash_gets_the_line_that_works() {
        let s = said(&["hallpass", "no-such-program-x", "--yes"]).unwrap();
        assert_eq!(
            s,
            "hallpass: unknown subcommand `no-such-program-x`\n\
             hint: to run a command, put -- before it: hallpass -- no-such-program-x --yes"
        );
        let s = said(&["hallpass", "--prompt=deny", "no-such-program-x", "a b"]).unwrap();
        assert_eq!(
            s,
            "hallpass: unexpected argument `no-such-program-x`\n\
             hint: to run a command, put -- before it: hallpass --prompt=deny -- no-such-program-x 'a b'"
        );
        // A flag's value equal to the word is not where `--` goes.
        let s = said(&["hallpass", "--log", "sh", "sh"]).unwrap();
        assert!(s.ends_with("hallpass --log sh -- sh"), "{s}");
    }

    #[test]
    fn a_misspelt_subcommand_gets_a_did_you_mean() {
        let s = said(&["hallpass", "stauts"]).unwrap();
        assert_eq!(
            s,
            "hallpass: unknown subcommand `stauts`\nhint: did you mean `hallpass status`?"
        );
        // Like a subcommand, and a program too: both.
        let both = message(
            "make",
            true,
            Some("man".into()),
            true,
            &["--".into(), "make".into()],
        );
        assert_eq!(
            both,
            "hallpass: unknown subcommand `make`\n\
             hint: did you mean `hallpass man`?\n\
             hint: to run a command, put -- before it: hallpass -- make"
        );
    }

    #[test]
    fn other_errors_are_clap_s() {
        assert_eq!(said(&["hallpass", "--bogus"]), None);
        assert_eq!(said(&["hallpass", "rules", "lsit"]), None);
    }
}
