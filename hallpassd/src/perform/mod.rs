//! Performing writes for a process: strict mode's every write beyond its Landlock domain, and
//! lite mode's binds and `openat2`. The daemon makes each through descriptors it holds, so
//! what was decided is what happens to the real file (`emulate/`), after a lookup made of
//! descriptors (`walk/`), as the process (`creds.rs`); a connection to a service likewise
//! (`emulate/connect.rs`), and a datagram sent to one (`emulate/send.rs`). And asking the
//! kernel, as the process, whether it would refuse a write anyway (`refusal.rs`).

pub mod creds;
pub mod emulate;
pub mod refusal;
pub mod walk;
