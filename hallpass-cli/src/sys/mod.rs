//! The launcher's unsafe code: forking the supervised child (filter install, descriptor
//! hand-over, exec) and detaching the daemon.

pub mod detach;
pub mod launch;
