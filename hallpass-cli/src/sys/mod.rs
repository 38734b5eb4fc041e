//! The launcher's unsafe code: forking the supervised child (filter install, descriptor
//! hand-over, exec), detaching the daemon, the terminal (pty, raw mode, window size),
//! taking a supervised process's descriptor for the daemon, and waiting for a signal with a
//! time limit.

pub mod detach;
pub mod landlock;
pub mod launch;
pub mod pidfd;
pub mod pty;
pub mod signals;
