//! Finding the daemon: connect to its control socket, or start it (detached, under a lock so
//! two launchers don't both start one) and wait until it answers.

use std::fs::OpenOptions;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hallpass_proto::paths;
use hallpass_proto::shown::shown;

use crate::error::DaemonError;

/// How long a started daemon may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// A daemon the launcher starts exits after this long without sessions.
const IDLE_EXIT_SECS: &str = "300";

/// A connection to the daemon's control socket, starting the daemon if needed.
pub fn connect() -> Result<UnixStream, DaemonError> {
    let dir = paths::runtime_dir();
    let control = dir.join(paths::CONTROL_SOCKET);
    if let Ok(s) = UnixStream::connect(&control) {
        return Ok(s);
    }
    paths::ensure_private_dir(&dir).map_err(|source| DaemonError::RuntimeDir {
        dir: dir.clone(),
        source,
    })?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(paths::START_LOCK))
        .map_err(|source| DaemonError::RuntimeDir {
            dir: dir.clone(),
            source,
        })?;
    let _guard =
        nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| {
            DaemonError::RuntimeDir {
                dir: dir.clone(),
                source: e.into(),
            }
        })?;
    // Another launcher may have started it while we waited for the lock.
    if let Ok(s) = UnixStream::connect(&control) {
        return Ok(s);
    }
    start(&dir)?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match UnixStream::connect(&control) {
            Ok(s) => return Ok(s),
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                let log = dir.join(paths::DAEMON_LOG);
                let last = std::fs::read_to_string(&log)
                    .ok()
                    .and_then(|t| t.lines().last().map(str::to_owned));
                return Err(DaemonError::Start(match last {
                    Some(l) => format!("{l} (see {})", shown(&log)),
                    None => format!(
                        "it did not listen on {} within {START_TIMEOUT:?}: {e}",
                        shown(&control)
                    ),
                }));
            }
        }
    }
}

/// The daemon binary: `$HALLPASSD`, else beside our own binary, else in PATH.
fn daemon_binary() -> Result<PathBuf, DaemonError> {
    if let Some(p) = std::env::var_os("HALLPASSD").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let beside = exe.with_file_name("hallpassd");
    if beside.is_file() {
        return Ok(beside);
    }
    crate::env::search_path("hallpassd".as_ref()).ok_or(DaemonError::NotFound { exe })
}

fn start(dir: &Path) -> Result<(), DaemonError> {
    let bin = daemon_binary()?;
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(paths::DAEMON_LOG))
        .map_err(|source| DaemonError::RuntimeDir {
            dir: dir.into(),
            source,
        })?;
    let err = log
        .try_clone()
        .map_err(|e| DaemonError::Start(e.to_string()))?;
    let mut cmd = Command::new(&bin);
    cmd.arg("--runtime-dir")
        .arg(dir)
        .arg("--idle-exit")
        .arg(IDLE_EXIT_SECS);
    cmd.stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .current_dir("/");
    crate::sys::detach::spawn_detached(cmd)
        .map_err(|e| DaemonError::Start(format!("{}: {e}", shown(&bin))))
}
