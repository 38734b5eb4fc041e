//! The session as the daemon supervising it knows it, now: what the launcher's link to the
//! daemon publishes and every follower of its questions watches. A leaf.

use tokio::sync::watch;

/// The session's registration with a daemon: its id there, and how many times it was
/// registered (so that followers can tell a new registration from the one they follow, even
/// with the same id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registered {
    pub id: u64,
    pub count: u64,
}

/// The session's registration as it changes; `None` while no daemon supervises it.
pub type Session = watch::Receiver<Option<Registered>>;
