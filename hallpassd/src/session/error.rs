//! Why a session could not be opened: [`SetupError`], one line for the user. A leaf, so
//! that what checks a launcher's request (`setup.rs`, `crate::service`) can say why it
//! refuses without reaching back into the session.

use std::io;
use std::path::PathBuf;

use hallpass_proto::shown::shown;

/// Why a session could not be opened: one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Refused(String),
    /// The kernel lacks what the session needs, or a setting of it forbids it.
    #[error("{0}")]
    Kernel(String),
    #[error("cannot make the session's TMPDIR in {}: {source}", shown(.dir))]
    Tmpdir { dir: PathBuf, source: io::Error },
    #[error("invalid path {}: {source}", shown(.path))]
    Path { path: String, source: io::Error },
    #[error(
        "cannot resume with TMPDIR {}: not a hallpass session directory of this user",
        shown(.0)
    )]
    Resume(String),
}
