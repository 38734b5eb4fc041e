//! The daemon's only unsafe code: the seccomp notification ioctls, taking the sockets a
//! service manager passes, the shared mapping of the session journal, the file system
//! calls strict mode makes for its targets, and reading links into a buffer.

pub mod activation;
pub mod fsops;
pub mod readlink;
pub mod seccomp;
pub mod shared_map;
