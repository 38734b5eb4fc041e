//! Where hallpass keeps things: the daemon's runtime directory (its sockets, lock and log) and
//! the user's configuration directory.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The registration socket.
pub const CONTROL_SOCKET: &str = "control.sock";
/// The gRPC socket.
pub const API_SOCKET: &str = "api.sock";
/// Held while a launcher checks for, or starts, the daemon.
pub const START_LOCK: &str = "start.lock";
/// The daemon's pid, written once it listens.
pub const PID_FILE: &str = "hallpassd.pid";
/// Where a daemon the launcher started writes its messages.
pub const DAEMON_LOG: &str = "hallpassd.log";

/// `$XDG_RUNTIME_DIR/hallpass`, or `/tmp/hallpass-UID` when that is unset.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("hallpass"),
        None => PathBuf::from(format!("/tmp/hallpass-{}", nix::unistd::geteuid())),
    }
}

/// Creates `dir` (mode 0700) if needed and checks that it is a real directory owned by us and
/// closed to others, so nobody else can plant or read our sockets.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let md = std::fs::symlink_metadata(dir)?;
    let me = nix::unistd::geteuid().as_raw();
    if !md.is_dir() || md.uid() != me {
        return Err(io::Error::other(format!(
            "{} is not a directory owned by uid {me}",
            dir.display()
        )));
    }
    if md.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The lasting rules, in [`config_dir`].
pub const RULES_FILE: &str = "rules";

/// `$XDG_CONFIG_HOME/hallpass`, or `~/.config/hallpass`.
pub fn config_dir(home: &Path) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("hallpass"),
        None => home.join(".config/hallpass"),
    }
}

/// What a file that is not a regular file is, in words, for a message that refuses it (the
/// `--log` file, the rules file).
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}
