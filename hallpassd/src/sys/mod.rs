//! The daemon's only unsafe code: the seccomp notification ioctls, taking the sockets a
//! service manager passes, the shared mapping of the session journal, the file system
//! calls strict mode makes for its targets, and pinning a socket's peer (`SO_PEERPIDFD`).

pub mod activation;
pub mod fsops;
pub mod peer;
pub mod seccomp;
pub mod shared_map;
