//! The daemon's only unsafe code: the seccomp notification ioctls, taking the sockets a
//! service manager passes, the shared mapping of the session journal, the file system
//! calls strict mode makes for its targets, pinning a socket's peer (`SO_PEERPIDFD`),
//! reading links into a buffer, comparing open files (kcmp), and the credentials of one
//! thread.

pub mod activation;
pub mod fsops;
pub mod kcmp;
pub mod peer;
pub mod readlink;
pub mod seccomp;
pub mod shared_map;
pub mod thread_creds;
