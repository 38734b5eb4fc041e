//! The daemon's only unsafe code: the seccomp notification ioctls, and taking the sockets a
//! service manager passes.

pub mod activation;
pub mod seccomp;
