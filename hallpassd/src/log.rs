//! The `--log` file: JSON Lines, one object per decided write, each line written with a single
//! `write(2)` on an `O_APPEND` descriptor, so lines never interleave and a crash loses none.
//! Characters a terminal would obey are JSON escapes (`hallpass_proto::shown::json`).
//!
//! A line that cannot be written whole (a full file system, a quota, a file size limit) is
//! taken back, so the file stays valid JSON Lines, and reported to the caller: audit mode
//! promises a line for every write it allows, so the session refuses a write whose line is
//! lost (`Shared::record`).

use std::fs::File;
use std::io::{self, Seek, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// One line of the log. The keys are documented in README.md.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    /// UTC, RFC 3339 with milliseconds.
    pub time: String,
    pub pid: i32,
    pub exe: &'a str,
    pub syscall: &'a str,
    pub path: &'a str,
    /// `allow` or `deny`.
    pub decision: &'a str,
    pub reason: &'a str,
}

/// The session's log file, opened by the launcher and lent to the daemon.
pub struct Log {
    file: File,
}

impl Log {
    pub fn new(file: File) -> Log {
        Log { file }
    }

    /// Appends one line, whole or not at all: an error means the file does not hold it.
    pub fn write(&mut self, rec: &Record<'_>) -> io::Result<()> {
        // Inert on a terminal (`cat`, `tail -f`): what the command named is escaped in
        // JSON's own syntax, the same string to a parser.
        let mut line = hallpass_proto::shown::json(rec).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut written = 0;
        // One write(2) holds the whole line. One cut short (the file system filled up) is
        // followed by another for the rest, which says why it cannot be written.
        let why = loop {
            match self.file.write(&line[written..]) {
                Ok(0) => break io::Error::from(io::ErrorKind::WriteZero),
                Ok(n) => {
                    written += n;
                    if written == line.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break e,
            }
        };
        if written > 0 {
            self.take_back(written);
        }
        Err(why)
    }

    /// Removes the last `n` bytes written, a part of a line, if nothing was appended after
    /// them (another session may log to the same file): the next line must not be glued to
    /// it. Truncating frees space, so it works on a full file system.
    fn take_back(&mut self, n: usize) {
        let end = self.file.stream_position();
        let len = self.file.metadata().map(|m| m.len());
        if let (Ok(end), Ok(len)) = (end, len) {
            if end == len && end >= n as u64 {
                let _ = self.file.set_len(end - n as u64);
            }
        }
    }
}

/// Now, as `2026-11-29T11:16:48.123Z`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(d.as_secs() as i64, d.subsec_millis())
}

/// Formats a Unix time (civil-from-days, Howard Hinnant's algorithm).
pub fn rfc3339(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_037_408, 123), "2026-11-30T11:16:48.123Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
    }

    #[test]
    fn one_line_per_record() {
        let dir = std::env::temp_dir().join(format!("hallpass-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("w.jsonl");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap();
        let mut log = Log::new(f);
        for path in ["/a", "/b\n\"c\u{1b}[2J\u{202e}\u{9b}"] {
            let rec = Record {
                time: now_rfc3339(),
                pid: 1,
                exe: "/bin/sh",
                syscall: "openat",
                path,
                decision: "deny",
                reason: "unattended",
            };
            log.write(&rec).unwrap();
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(v["path"], "/b\n\"c\u{1b}[2J\u{202e}\u{9b}");
        assert!(
            !lines[1].contains(['\u{1b}', '\u{202e}', '\u{9b}']),
            "{}",
            lines[1]
        );
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys.len(), 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
