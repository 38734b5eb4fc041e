//! Reading a `--log` file (JSON Lines, one object per decided write) for `suggest` and
//! `report`. The format is the daemon's (`hallpassd/src/log.rs`, the README's "The log").

use std::path::{Path, PathBuf};

use hallpass_proto::shown::shown;

use crate::error::Failure;

/// One decided write, as logged.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub syscall: String,
    pub path: String,
    pub decision: String,
    pub reason: String,
}

/// The reasons of a write no rule decided: it was asked, or would have been (audit,
/// unattended).
pub const ASKED: &[&str] = &[
    "audit",
    "unattended",
    "once",
    "timed",
    "denied",
    "unanswered",
];

impl Entry {
    /// The path, if hallpass could resolve it (an unresolved one is a note in parentheses).
    pub fn abs_path(&self) -> Option<PathBuf> {
        let p = Path::new(&self.path);
        p.is_absolute().then(|| p.to_path_buf())
    }

    pub fn asked(&self) -> bool {
        ASKED.contains(&self.reason.as_str())
    }

    /// Whether it made a directory.
    pub fn made_dir(&self) -> bool {
        matches!(self.syscall.as_str(), "mkdir" | "mkdirat")
    }
}

/// Reads every line of `path`; a line that is not a log object is an error naming it.
pub fn read(path: &Path) -> Result<Vec<Entry>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::new(format!("cannot read the log {}: {e}", shown(path))))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e: Entry = serde_json::from_str(line).map_err(|e| {
            Failure::new(format!(
                "{} line {}: not a hallpass log line ({e})\nhint: give the file written by `hallpass --log FILE`",
                shown(path),
                i + 1
            ))
        })?;
        out.push(e);
    }
    Ok(out)
}

/// Writes `text` to `path` atomically: a file beside it, then renamed over it.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let fail = |e: std::io::Error| Failure::new(format!("cannot write {}: {e}", shown(path)));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Failure::new(format!("{} is not a file name", shown(path))))?;
    let part = dir.join(format!(
        ".{}.{}.part",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut f = std::fs::File::create(&part).map_err(fail)?;
    let done = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&part, path));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&part);
        return Err(fail(e));
    }
    Ok(())
}
