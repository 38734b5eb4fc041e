//! Strict mode: the daemon performs each write itself through descriptors it holds, so
//! what was decided is what happens to the real file (`emulate.rs`), after a lookup made of
//! descriptors (`walk.rs`), as the process (`creds.rs`).

pub mod connect;
pub mod creds;
pub mod emulate;
pub mod walk;
