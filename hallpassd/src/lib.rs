//! hallpassd: the per-user daemon that holds hallpass sessions and their policy, answers the
//! seccomp notifications of the supervised commands, and serves the gRPC API.
//!
//! Data flows one way: the launcher registers a session on `control.sock` (`server.rs`), the
//! session's thread decodes each notification (`decode.rs`, `resolve.rs`, `mem.rs`), asks the
//! policy (`policy.rs`), logs (`log.rs`) and answers the kernel (`sys/seccomp.rs`). The
//! filter the launcher installs is compiled here (`filter.rs`) from the one syscall table
//! (`syscalls.rs`). The modules' imports flow one way too: `docs/architecture.md` lists them
//! from the bottom up, and `tests/tests/house.rs` fails on an import circle.

pub(crate) mod api;
pub(crate) mod ask;
pub(crate) mod bounds;
pub mod bpf;
pub(crate) mod burst;
pub mod daemon;
pub(crate) mod decode;
pub(crate) mod dircache;
pub(crate) mod dlog;
pub(crate) mod fds;
pub mod filter;
pub(crate) mod journal;
pub(crate) mod log;
pub(crate) mod mem;
pub(crate) mod peer;
pub(crate) mod perform;
pub(crate) mod periodic;
pub(crate) mod policy;
pub(crate) mod process;
pub(crate) mod reach;
pub(crate) mod resolve;
pub(crate) mod rules;
pub(crate) mod scope;
pub(crate) mod server;
pub(crate) mod service;
pub(crate) mod session;
pub(crate) mod sys;
pub mod syscalls;
pub(crate) mod terminal;
