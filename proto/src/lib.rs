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
pub const PROTOCOL: u32 = 4;

/// The size of the session journal the launcher makes and the daemon maps (`Attach`).
pub const JOURNAL_SIZE: usize = 1 << 20;

/// The last bytes of the session journal hold what the daemons of the session tell its
/// launcher, as native-endian 64-bit words that the next daemon goes on counting: the daemon
/// writes them, the launcher reads them. First (at the very end) the `--log` file's lost
/// lines; below them, the writes refused with no one deciding ([`journal_tail::refusals`]).
pub mod journal_tail {
    use super::JOURNAL_SIZE;

    /// How many bytes at the end of the journal are not slots of notifications.
    pub const SIZE: usize = 64 + refusals::SIZE;
    /// Log lines that could not be written whole (each one taken back).
    pub const LOST: usize = JOURNAL_SIZE - 8;
    /// Of them, the lines of writes that were allowed and therefore refused (`EACCES`): a
    /// write allowed without a line in the log would break its promise.
    pub const REFUSED: usize = JOURNAL_SIZE - 16;
    /// The errno of the first line lost.
    pub const ERRNO: usize = JOURNAL_SIZE - 24;

    /// The writes of the session refused with no one deciding them there and then (the log's
    /// reasons in [`REASONS`]; not a person's `denied`, a lasting `never`, or `--deny-path`),
    /// which the launcher says when the session ends: how many, by reason, and the first few
    /// paths. A block of words below the log's counters; offsets in bytes from the start of
    /// the journal.
    pub mod refusals {
        use super::super::JOURNAL_SIZE;

        /// The log's reasons counted, in the order of their counters at [`BY_REASON`].
        pub const REASONS: [&str; 5] = [
            "unattended",
            "unanswered",
            "protected",
            "unresolved",
            "service",
        ];
        /// How many paths are kept: the first different ones refused.
        pub const PATHS: usize = 3;
        /// How many bytes of a path are kept; a longer one is cut there.
        pub const PATH_BYTES: usize = 248;
        /// A kept path: a word with its whole length (0: none yet), then its first bytes.
        pub const ENTRY: usize = 8 + PATH_BYTES;
        /// The words before the kept paths.
        const HEAD: usize = 80;
        /// The block's size.
        pub const SIZE: usize = HEAD + PATHS * ENTRY;
        /// Where the block starts.
        pub const AT: usize = JOURNAL_SIZE - 64 - SIZE;
        /// Not zero once a daemon has ended the session (its launcher hung up, every question
        /// left open is counted): the launcher waits for it before it reads the rest.
        pub const ENDED: usize = AT;
        /// Writes refused.
        pub const COUNT: usize = AT + 8;
        /// Paths kept (or being kept): the next entry to take.
        pub const CLAIMED: usize = AT + 16;
        /// Writes refused whose path is none of those kept.
        pub const OTHERS: usize = AT + 24;
        /// Writes refused, one counter per reason of [`REASONS`].
        pub const BY_REASON: usize = AT + 32;

        /// Where kept path `i` (below [`PATHS`]) is.
        pub const fn path(i: usize) -> usize {
            AT + HEAD + i * ENTRY
        }

        const _: () = assert!(BY_REASON + 8 * REASONS.len() <= path(0));
        const _: () = assert!(SIZE.is_multiple_of(8) && PATH_BYTES.is_multiple_of(8));
    }
}
pub mod paths;
pub mod pattern;
pub mod places;
pub mod shown;

pub use v1::*;
