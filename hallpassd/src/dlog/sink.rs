//! Where the daemon's lines go: its stderr, written only by the log's writer thread. A
//! regular file there is bounded: rotated once it holds `max` bytes if it is `hallpassd.log`
//! of the runtime directory (stderr and stdout then point to the new one), else no more
//! written to once this daemon wrote `max` bytes to it. A write that fails is counted and
//! said once writing works again; nothing here panics.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

/// Below this size, a log on a full file system is not rotated to make room: too little to
/// gain.
const MIN_ROTATE_FOR_ROOM: u64 = 64 * 1024;

/// See the module.
pub struct Sink {
    max: u64,
    /// Bytes in the regular file behind stderr; `None` if it is not one (a pipe, the
    /// journal's socket, a terminal).
    size: Option<u64>,
    /// Bytes this daemon wrote there (since it rotated it).
    written: u64,
    /// The path of the file behind stderr, once known to be that file: rotated.
    rotate: Option<PathBuf>,
    /// A file that cannot be rotated has reached `max`: nothing more is written.
    capped: bool,
    /// Lines that could not be written since the last that was, and why.
    failed: u64,
    why: String,
}

impl Sink {
    /// The daemon's stderr, rotated or capped past `max` bytes.
    pub fn stderr(max: u64) -> Sink {
        Sink {
            max,
            size: regular_size(),
            written: 0,
            rotate: None,
            capped: false,
            failed: 0,
            why: String::new(),
        }
    }

    /// Rotates stderr at `path` when full, if stderr is that very file.
    pub fn rotate_at(&mut self, path: PathBuf) {
        let ours = nix::sys::stat::fstat(std::io::stderr()).ok();
        let there = std::fs::metadata(&path).ok();
        if let (Some(a), Some(b)) = (ours, there) {
            if b.is_file() && (a.st_dev, a.st_ino) == (b.dev(), b.ino()) {
                self.rotate = Some(path);
            }
        }
    }

    /// Writes `line` and a line feed.
    pub fn write(&mut self, line: &str) {
        let len = line.len() as u64 + 1;
        let full = match (&self.rotate, self.size) {
            (Some(_), Some(size)) => size + len > self.max,
            (None, Some(_)) => self.written + len > self.max,
            (_, None) => false,
        };
        if full && !self.capped {
            self.full();
        }
        if self.capped {
            return;
        }
        if self.failed > 0 {
            let note = format!(
                "hallpassd: {} lines of this log could not be written ({})",
                self.failed, self.why
            );
            if self.put(&note).is_err() {
                self.failed += 1;
                return;
            }
            self.failed = 0;
        }
        if let Err(e) = self.put(line) {
            // A full file system: rotating frees what the older file held.
            let room = e.raw_os_error() == Some(libc::ENOSPC)
                && self.rotate.is_some()
                && self.size.is_some_and(|s| s >= MIN_ROTATE_FOR_ROOM);
            if room && self.rotate().is_ok() && self.put(line).is_ok() {
                return;
            }
            self.failed += 1;
            self.why = e.to_string();
        }
    }

    /// One `write` of `line` and a line feed to stderr.
    fn put(&mut self, line: &str) -> std::io::Result<()> {
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        let r = std::io::stderr().lock().write_all(buf.as_bytes());
        if let (Ok(()), Some(s)) = (&r, self.size.as_mut()) {
            *s += buf.len() as u64;
            self.written += buf.len() as u64;
        }
        r
    }

    /// The file is full: rotate it, or cap it.
    fn full(&mut self) {
        if self.rotate.is_some() {
            match self.rotate() {
                Ok(()) => return,
                Err(e) => {
                    let _ = self.put(&format!(
                        "hallpassd: cannot rotate this log ({e}): nothing more is written to it"
                    ));
                }
            }
        } else {
            let _ = self.put(&format!(
                "hallpassd: {} bytes written to this log: nothing more is written to it until the daemon restarts",
                self.written
            ));
        }
        self.capped = true;
    }

    /// Renames the file `NAME.1` (replacing the one before) and starts a new one on stdout
    /// and stderr.
    fn rotate(&mut self) -> std::io::Result<()> {
        let Some(path) = self.rotate.clone() else {
            return Err(std::io::ErrorKind::NotFound.into());
        };
        let mut old = path.clone().into_os_string();
        old.push(".1");
        std::fs::rename(&path, &old)?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        nix::unistd::dup2_stderr(&f)?;
        nix::unistd::dup2_stdout(&f)?;
        self.size = Some(f.metadata().map(|m| m.len()).unwrap_or(0));
        self.written = 0;
        let _ = self.put(&format!(
            "hallpassd: the lines before this one are in {}",
            hallpass_proto::shown::shown(&old)
        ));
        Ok(())
    }
}

/// The size of the regular file behind stderr, if it is one.
fn regular_size() -> Option<u64> {
    let st = nix::sys::stat::fstat(std::io::stderr()).ok()?;
    let regular = st.st_mode & libc::S_IFMT == libc::S_IFREG;
    regular.then_some(st.st_size as u64)
}
