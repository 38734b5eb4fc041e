//! `hallpass report LOG`: what a session wrote outside the project, as a tree of paths with
//! counts and decisions (allowed or denied, and why: the log's `reason`), in colour on a
//! terminal (`text.rs`) or as one self-contained HTML page with collapsible directories
//! (`html.rs`).

mod html;
mod text;
mod tree;

use hallpass_proto::shown::shown;

use crate::error::{ExitCode, Failure};
use crate::flags::ReportArgs;
use crate::logfile;
use tree::Node;

pub fn report(args: ReportArgs) -> Result<ExitCode, Failure> {
    let entries = logfile::read(&args.log)?;
    let tree = Node::build(&entries);
    let title = format!("hallpass report: {}", shown(&args.log));
    match &args.html {
        Some(out) => {
            logfile::write_atomic(out, &html::page(&title, &tree))?;
            eprintln!("hallpass: wrote {}", shown(out));
        }
        None => crate::out::print(&text::render(&title, &tree, colour())),
    }
    Ok(ExitCode::Success)
}

/// Colour on a terminal, unless NO_COLOR (no-color.org) or TERM=dumb.
fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

#[cfg(test)]
mod tests {
    use crate::logfile::Entry;

    pub fn entry(path: &str, decision: &str, reason: &str) -> Entry {
        Entry {
            syscall: "openat".into(),
            path: path.into(),
            decision: decision.into(),
            reason: reason.into(),
        }
    }
}
