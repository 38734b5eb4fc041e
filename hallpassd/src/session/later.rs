//! Writes performed on a thread of their own: an answered question's, an open that waits for
//! a FIFO's other end, a blocking connect or send; with a watchdog that interrupts one whose
//! process is gone (and a send whose process has a signal to take).

use super::*;
use crate::dlog::say;

/// Performs a strict-mode write on a thread of its own and answers it: one a person allowed,
/// or (`fifo`) one that waits as long as the process would have: an open for a FIFO's other
/// end, a send for its receiver. At most [`MAX_WAITING`] of the latter per session; past
/// that it fails with `EAGAIN` (the descriptors a send passes are budgeted where it is
/// prepared, `perform/emulate/send.rs`). One whose process goes away is interrupted. `slot`: its journal
/// slot, freed once it is answered.
pub fn perform_later(
    shared: Arc<Shared>,
    id: u64,
    tid: i32,
    action: Action,
    slot: Option<usize>,
    fifo: bool,
) {
    let release_slot = move |s: &Shared| {
        if let (Some(j), Some(slot)) = (s.journal(), slot) {
            j.release(slot, id);
        }
    };
    let waits = match Waits::take(&shared, fifo) {
        Ok(w) => w,
        Err(why) => {
            say!("hallpassd: session {}: {why}: EAGAIN", shared.info.id);
            let _ = seccomp::send(shared.listener(), id, Reply::Fail(libc::EAGAIN));
            release_slot(&shared);
            return;
        }
    };
    // A send may wait as long as its receiver does not read, answered question or not.
    let sends = action.sends();
    let state = Arc::new(Mutex::new(Performing::Starting));
    let (s2, state2) = (shared.clone(), state.clone());
    let spawned = std::thread::Builder::new()
        .name("hallpassd-perform".into())
        .spawn(move || {
            // Started maybe by a supervisor in the guise of its process: it takes on the
            // process's credentials itself, from the daemon's own.
            crate::perform::creds::as_daemon();
            let _ = crate::sys::fsops::interruptible();
            *state2.lock().unwrap() = Performing::Running(crate::sys::fsops::this_thread());
            // Checked again right before acting: nothing is written for a process gone.
            let outcome = if seccomp::id_valid(s2.listener(), id) {
                match action.perform(tid, true) {
                    // Prepared before the question; cannot be prepared again here.
                    Outcome::Raced => Outcome::Reply(Reply::Fail(libc::ELOOP)),
                    o => o,
                }
            } else {
                Outcome::Reply(Reply::Fail(libc::EINTR))
            };
            // Done before answering: the watchdog signals only a thread still at it.
            *state2.lock().unwrap() = Performing::Done;
            // The copies of the process's descriptors go before the answer (ETXTBSY).
            drop(action);
            emulate::answer(s2.listener(), id, outcome);
            release_slot(&s2);
            drop(waits);
        });
    if let Err(e) = spawned {
        say!("hallpassd: cannot start a thread to perform a write: {e}");
        let _ = seccomp::send(shared.listener(), id, Reply::Fail(libc::EAGAIN));
        release_slot(&shared);
        return;
    }
    if !fifo && !sends {
        return;
    }
    // The watchdog: once the process is gone, its open is interrupted (EINTR), as often as
    // it takes. A send also once the process has a signal pending, which natively would
    // interrupt it (the process sees EINTR, or the count sent so far).
    let _ = std::thread::Builder::new()
        .name("hallpassd-fifo-watch".into())
        .spawn(move || {
            crate::perform::creds::as_daemon();
            loop {
                std::thread::sleep(Duration::from_millis(100));
                let st = state.lock().unwrap();
                match *st {
                    Performing::Done => break,
                    Performing::Starting => {}
                    Performing::Running(t) => {
                        if !seccomp::id_valid(shared.listener(), id)
                            || (sends && crate::perform::emulate::send::signalled(tid))
                        {
                            crate::sys::fsops::interrupt(t);
                        }
                    }
                }
            }
        });
}

/// Where a write performed on a thread of its own is.
enum Performing {
    Starting,
    Running(libc::pthread_t),
    Done,
}

/// Writes waiting on threads of their own at once, per session (FIFO opens, sends).
const MAX_WAITING: usize = 32;

/// A place among a session's [`MAX_WAITING`] (none if not `place`), given back when dropped.
struct Waits {
    shared: Arc<Shared>,
    place: bool,
}

impl Waits {
    fn take(shared: &Arc<Shared>, place: bool) -> Result<Waits, String> {
        if place && shared.waiting.fetch_add(1, Ordering::Relaxed) >= MAX_WAITING {
            shared.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(format!(
                "{MAX_WAITING} writes already wait (FIFO opens, sends)"
            ));
        }
        Ok(Waits {
            shared: shared.clone(),
            place,
        })
    }
}

impl Drop for Waits {
    fn drop(&mut self) {
        if self.place {
            self.shared.waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
