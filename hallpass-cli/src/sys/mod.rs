//! The launcher's unsafe code: forking the supervised child (filter install, descriptor
//! hand-over, exec), detaching the daemon, and the terminal (pty, raw mode, window size).

pub mod detach;
pub mod launch;
pub mod pty;
