//! hallpassd: the per-user daemon that holds hallpass sessions and their policy, answers the
//! seccomp notifications of the supervised commands, and serves the gRPC API.
//!
//! Data flows one way: the launcher registers a session on `control.sock` (`server.rs`), the
//! session's thread decodes each notification (`decode.rs`, `resolve.rs`, `mem.rs`), asks the
//! policy (`policy.rs`), logs (`log.rs`) and answers the kernel (`sys/seccomp.rs`). The
//! filter the launcher installs is compiled here (`filter.rs`) from the one syscall table
//! (`syscalls.rs`).

pub mod api;
pub mod ask;
pub mod bpf;
pub mod daemon;
pub mod decode;
pub mod dircache;
pub mod filter;
pub mod journal;
pub mod log;
pub mod mem;
pub mod peer;
pub mod periodic;
pub mod policy;
pub mod process;
pub mod resolve;
pub mod rules;
pub mod scope;
pub mod server;
pub mod service;
pub mod session;
pub mod strict;
pub mod sys;
pub mod syscalls;
