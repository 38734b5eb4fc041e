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
pub mod paths;
pub mod pattern;
pub mod places;
pub mod shown;

pub use v1::*;
