//! The wire contract shared by `hallpassd` and its clients: the gRPC service and the control
//! messages of `hallpass.proto` (generated at build time by protox and tonic-prost-build, so no
//! system `protoc` is needed), the framing of the control socket, and where the sockets live.
#![deny(unsafe_code)]

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("hallpass.v1");
}

pub mod control;

/// The version of the control protocol (`control.sock`) this tree speaks, sent in
/// `OpenSession.protocol`. Raised by any change a daemon and a launcher of different versions
/// would not understand alike; the daemon refuses a launcher that speaks another.
pub const PROTOCOL: u32 = 3;

/// The size of the session journal the launcher makes and the daemon maps (`Attach`).
pub const JOURNAL_SIZE: usize = 1 << 20;

/// The last bytes of the session journal hold what the daemons of the session tell its
/// launcher about the `--log` file, as native-endian 64-bit counters that the next daemon
/// goes on counting: the daemon writes them, the launcher reads them.
pub mod journal_tail {
    use super::JOURNAL_SIZE;

    /// How many bytes at the end of the journal are not slots of notifications.
    pub const SIZE: usize = 64;
    /// Log lines that could not be written whole (each one taken back).
    pub const LOST: usize = JOURNAL_SIZE - 8;
    /// Of them, the lines of writes that were allowed and therefore refused (`EACCES`): a
    /// write allowed without a line in the log would break its promise.
    pub const REFUSED: usize = JOURNAL_SIZE - 16;
    /// The errno of the first line lost.
    pub const ERRNO: usize = JOURNAL_SIZE - 24;
}
pub mod paths;
pub mod pattern;
pub mod places;
pub mod shown;

pub use v1::*;
