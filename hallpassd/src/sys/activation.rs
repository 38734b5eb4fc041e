//! Socket activation: the listening sockets systemd (or `systemd-socket-activate`) passes, as
//! sd_listen_fds(3) describes: descriptors 3 .. 3+`$LISTEN_FDS`, meant for the process whose
//! pid is `$LISTEN_PID`. Each is told apart by the path it is bound to, so the unit needs no
//! descriptor names.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// `SD_LISTEN_FDS_START`.
const FIRST: RawFd = 3;

/// The listening Unix sockets passed to this process, with the paths they are bound to; empty
/// when the process was not socket-activated. The variables are removed so that no child
/// believes they are its own. Call it before any other thread runs: it edits the environment.
pub fn listeners() -> std::io::Result<Vec<(PathBuf, UnixListener)>> {
    let pid = std::env::var("LISTEN_PID").ok();
    let n = std::env::var("LISTEN_FDS").ok();
    for v in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
        std::env::remove_var(v);
    }
    let (Some(pid), Some(n)) = (pid, n) else {
        return Ok(Vec::new());
    };
    if pid.parse::<u32>().ok() != Some(std::process::id()) {
        return Ok(Vec::new());
    }
    let n: RawFd = n.parse().map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "LISTEN_FDS is not a number",
        )
    })?;
    let mut out = Vec::new();
    for fd in FIRST..FIRST.saturating_add(n) {
        // SAFETY: the service manager hands these descriptors to this process (LISTEN_PID
        // checked above) and nothing else in it uses or owns them; each is taken once.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        nix::fcntl::fcntl(
            &owned,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )?;
        let listening = nix::sys::socket::getsockopt(&owned, nix::sys::socket::sockopt::AcceptConn)
            .unwrap_or(false);
        if !listening {
            return Err(std::io::Error::other(format!(
                "passed descriptor {fd} is not a listening socket (ListenStream= in hallpassd.socket)"
            )));
        }
        let l = UnixListener::from(owned);
        let addr = l.local_addr()?;
        let Some(path) = addr.as_pathname().map(Path::to_path_buf) else {
            return Err(std::io::Error::other(format!(
                "passed descriptor {fd} is not a Unix socket bound to a path"
            )));
        };
        out.push((path, l));
    }
    Ok(out)
}
