//! What the printing commands (`status`, `rules`, `profiles`, `suggest`, `report`, `answer
//! --json`, `completions`, `man`) write to stdout. A reader that goes away (`hallpass status |
//! head -1`) ends hallpass as it ends other Unix tools, by SIGPIPE, quietly. SIGPIPE itself
//! stays ignored: the daemon's sockets must fail with an error, not kill the client.

use std::io::Write;

/// Writes `text` to stdout as it is.
pub fn print(text: &str) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        failed(e);
    }
}

/// Writes one line to stdout.
pub fn line(text: impl std::fmt::Display) {
    print(&format!("{text}\n"));
}

/// Writes `value` as one line of JSON. The `--json` outputs are `Serialize` structs whose
/// fields are declared in alphabetical order: the order these outputs have always had. What
/// the command named in them (paths, names, command lines) may reach a terminal: every
/// character `shown` would escape is a JSON escape (`\u202e`), the same string to a parser.
pub fn json(value: &impl serde::Serialize) {
    match hallpass_proto::shown::json(value) {
        Ok(s) => line(String::from_utf8_lossy(&s)),
        // Only a map with keys that are not strings fails; none of ours has one.
        Err(e) => {
            eprintln!("hallpass: cannot write JSON: {e}");
            std::process::exit(crate::error::ExitCode::FAILED);
        }
    }
}

fn failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        crate::sys::signals::die_of_sigpipe();
    }
    eprintln!("hallpass: cannot write to stdout: {e}");
    std::process::exit(crate::error::ExitCode::FAILED);
}
