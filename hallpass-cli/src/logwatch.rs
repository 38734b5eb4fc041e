//! What the daemon could not write to the `--log` file, said on the terminal: once, as soon
//! as a line is lost (from then on, a write the daemon would record as allowed is refused),
//! and at the end, how many lines were lost. The daemons of the session count them at the
//! end of the session journal (`hallpass_proto::journal_tail`), which the launcher keeps
//! across daemon restarts; this reads them there. A leaf but for `error::say`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use hallpass_proto::journal_tail::{ERRNO, LOST, REFUSED};

/// How often the journal is looked at while the session runs.
const EVERY: Duration = Duration::from_millis(200);

/// The counters of the journal's tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Lost {
    lines: u64,
    refused: u64,
    errno: i32,
}

fn read(journal: &OwnedFd) -> Lost {
    let word = |at: usize| {
        let mut b = [0u8; 8];
        match nix::sys::uio::pread(journal, &mut b, at as i64) {
            Ok(8) => u64::from_ne_bytes(b),
            _ => 0,
        }
    };
    Lost {
        lines: word(LOST),
        refused: word(REFUSED),
        errno: word(ERRNO) as i32,
    }
}

fn why(errno: i32) -> String {
    std::io::Error::from_raw_os_error(errno).to_string()
}

/// Watches the session's journal on a thread of its own until [`Watch::finish`].
pub struct Watch {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<(OwnedFd, bool)>,
    log: PathBuf,
}

/// Starts watching `journal` (a copy of the session's) for lines lost from `log`.
pub fn start(journal: OwnedFd, log: &Path) -> Watch {
    let (stop, stopped) = mpsc::channel();
    let shown = log.display().to_string();
    let thread = std::thread::spawn(move || loop {
        let now = read(&journal);
        if now.lines > 0 {
            crate::error::say(&format!(
                    "hallpass: cannot write the log {shown} ({}): writes it would record as allowed are refused (EACCES)",
                    why(now.errno)
                ));
            return (journal, true);
        }
        if stopped.recv_timeout(EVERY) != Err(mpsc::RecvTimeoutError::Timeout) {
            return (journal, false);
        }
    });
    Watch {
        stop,
        thread,
        log: log.to_path_buf(),
    }
}

impl Watch {
    /// Stops watching; says how many lines were lost, if any (the first line too, if the
    /// watch had not said it yet).
    pub fn finish(self) {
        let _ = self.stop.send(());
        let Ok((journal, said)) = self.thread.join() else {
            return;
        };
        let lost = read(&journal);
        if let Some(line) = summary(lost, &self.log, said) {
            crate::error::say(&line);
        }
    }
}

/// The line that ends a session that lost log lines; `None` if it lost none.
fn summary(lost: Lost, log: &Path, said: bool) -> Option<String> {
    if lost.lines == 0 {
        return None;
    }
    let lines = |n: u64| {
        if n == 1 {
            "1 line".to_string()
        } else {
            format!("{n} lines")
        }
    };
    let writes = |n: u64| {
        if n == 1 {
            "1 write".to_string()
        } else {
            format!("{n} writes")
        }
    };
    let mut s = format!(
        "hallpass: {} could not be written to the log {}",
        lines(lost.lines),
        log.display()
    );
    if !said {
        s.push_str(&format!(" ({})", why(lost.errno)));
    }
    s.push_str(&format!(
        ": {} refused for it (EACCES), {} denied not recorded",
        writes(lost.refused),
        writes(lost.lines - lost.refused)
    ));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word() {
        let log = Path::new("/l/w.jsonl");
        assert_eq!(summary(Lost::default(), log, false), None);
        let lost = Lost {
            lines: 3,
            refused: 1,
            errno: libc::ENOSPC,
        };
        assert_eq!(
            summary(lost, log, true).unwrap(),
            "hallpass: 3 lines could not be written to the log /l/w.jsonl: 1 write refused for it (EACCES), 2 writes denied not recorded"
        );
        assert!(summary(lost, log, false)
            .unwrap()
            .contains("/l/w.jsonl (No space left on device (os error 28)): "));
    }
}
