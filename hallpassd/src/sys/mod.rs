//! The daemon's only unsafe code: the seccomp notification ioctls, taking the sockets a
//! service manager passes, and the shared mapping of the session journal.

pub mod activation;
pub mod seccomp;
pub mod shared_map;
