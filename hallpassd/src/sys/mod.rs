//! The daemon's only unsafe code: the seccomp notification ioctls.

pub mod seccomp;
