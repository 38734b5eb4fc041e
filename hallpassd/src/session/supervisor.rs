//! The supervisor thread of a session: it receives the notifications (into the journal),
//! hands each to [`Supervisor::handle`], watches for the launcher going away, and decides
//! again what a daemon that died held.

use super::*;
use crate::dlog::say;

/// Supervises an attached session until its launcher goes away or nothing is left to
/// supervise. Runs on its own thread.
pub fn supervise(p: Pending, a: Attached, control: &UnixStream, questions: Arc<Questions>) {
    let Pending {
        info,
        policy,
        tmpdir,
        lend,
        timed_for,
        home,
        resumed: _,
        strict,
        performs,
        ttys,
    } = p;
    // Cheaper wake-ups where the kernel has them (6.6); harmless to lack.
    let _ = seccomp::set_sync_wake_up(a.listener.as_fd());
    // Only what the policy itself would give the domain: a launcher's word cannot widen it.
    let roots = policy.landlock_roots();
    let landlock = PathSet::new(
        a.landlock
            .into_iter()
            .filter(|p| strict && roots.contains(p)),
    );
    info.landlock.store(!landlock.is_empty(), Ordering::Relaxed);
    let own = Arc::new(crate::terminal::Own::new(&ttys, info.launcher_pid));
    let shared = Arc::new(Shared {
        info: info.clone(),
        policy,
        listener: a.listener,
        log: Mutex::new(a.log.map(Log::new)),
        log_failed: AtomicBool::new(false),
        timed: Mutex::new(Vec::new()),
        bursts: Mutex::new(Bursts::default()),
        timed_for,
        home,
        journal: a.journal,
        waiting: std::sync::atomic::AtomicUsize::new(0),
        ttys,
        own: own.clone(),
        landlock,
    });
    // The paths of descriptors are kept (in strict mode only for what the kernel checks
    // again in its Landlock domain, and for descriptor metadata); not for a session a dead
    // daemon held, which may have let renames through that have not happened yet.
    let dircache = Arc::new(DirCache::new(!a.resume));
    let mut s = Supervisor {
        shared: shared.clone(),
        questions: questions.clone(),
        decoder: Decoder::with_cache(
            Arch::native(),
            info.pid.load(Ordering::Relaxed),
            dircache.clone(),
        )
        .with_terminals(own),
        dircache,
        mem: Memory::new(lend),
        lender: ControlLender(control),
        roots: None,
        strict,
        performs,
        failing: false,
        warned_credentials: false,
    };
    match Roots::new() {
        Ok(r) => s.roots = Some(r),
        Err(e) => {
            say!(
                "hallpassd: session {}: cannot open / and /proc: {e}",
                info.id
            );
            // In strict mode nothing can be performed: every write fails, none is let
            // through. Lite mode does without.
            s.failing = strict;
        }
    }
    if a.resume {
        // The daemon that died may have heard of a Landlock domain of the command's own
        // (see `handle`): lite mode performs nothing more for this session.
        s.performs &= strict;
        s.recover();
    }
    s.run(control);
    info.live.store(false, Ordering::Relaxed);
    // Questions left open are dropped; their processes fail with ENOSYS once the listener
    // is closed (the last reference goes with them).
    questions.sweep();
    // Every refusal of the session is counted: the launcher may say them now.
    if let Some(j) = shared.journal() {
        j.ended();
    }
    drop(s);
    drop(shared);
    if let Some(t) = tmpdir {
        if let Err(e) = std::fs::remove_dir_all(&t) {
            say!(
                "hallpassd: session {}: cannot remove {}: {e}",
                info.id,
                hallpass_proto::shown::shown(&t)
            );
        }
    }
}

pub(super) struct Supervisor<'a> {
    pub(super) shared: Arc<Shared>,
    pub(super) questions: Arc<Questions>,
    pub(super) decoder: Decoder,
    /// Lite mode's paths of directory descriptors (also the decoder's).
    pub(super) dircache: Arc<DirCache>,
    pub(super) mem: Memory,
    pub(super) lender: ControlLender<'a>,
    /// Where strict lookups start.
    pub(super) roots: Option<Roots>,
    /// Strict mode: every write is performed by the daemon.
    pub(super) strict: bool,
    /// The launcher has the daemon's credentials: lite mode may perform.
    pub(super) performs: bool,
    /// A strict session that cannot perform anything: every notification fails.
    pub(super) failing: bool,
    /// Said once: a process with other credentials than the daemon's.
    pub(super) warned_credentials: bool,
}

/// The watcher of [`Supervisor::run`]: waits for the launcher to hang up (the launcher sends
/// nothing unasked after attaching, and the supervisor itself reads the replies to its lend
/// requests, so only a hang-up is looked for), then sets `stop` and interrupts the supervisor
/// thread `supervisor` until it says it is `done` (a signal that lands just before it blocks
/// again is sent again). Returns when `wake` hangs up: the supervisor is done. Meanwhile,
/// every second, lets go of the directories `dircache` holds if the session was idle.
fn watch_launcher(
    control: &UnixStream,
    wake: &UnixStream,
    stop: &AtomicBool,
    done: &AtomicBool,
    supervisor: libc::pthread_t,
    dircache: &DirCache,
) {
    loop {
        let mut fds = [
            // Only POLLHUP and POLLERR, which poll always reports: the launcher closed.
            PollFd::new(control.as_fd(), PollFlags::empty()),
            PollFd::new(wake.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
            Ok(0) => {
                dircache.evict_idle();
                continue;
            }
            Ok(_) => {}
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            return;
        }
        if fds[0].revents().is_some_and(|r| !r.is_empty()) {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    while !done.load(Ordering::SeqCst) {
        crate::sys::fsops::interrupt(supervisor);
        let mut fds = [PollFd::new(wake.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(10u8));
    }
}

impl Supervisor<'_> {
    /// Receives and handles notifications until the launcher goes away. This thread blocks in
    /// `SECCOMP_IOCTL_NOTIF_RECV` itself, with no `poll` before each notification (one
    /// syscall less per write, and no wait queue of two descriptors to set up and tear down);
    /// a watcher thread waits for the launcher's hang-up and interrupts it. Where the kernel
    /// cannot be interrupted so (the handler could not be installed), it polls as before.
    pub(super) fn run(&mut self, control: &UnixStream) {
        if self.strict {
            crate::perform::creds::supervising();
        }
        if crate::sys::fsops::interruptible().is_err() {
            return self.run_polling(control);
        }
        let stop = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let (wake_rx, wake_tx) = match UnixStream::pair() {
            Ok(p) => p,
            Err(_) => return self.run_polling(control),
        };
        let me = crate::sys::fsops::this_thread();
        let dircache = self.dircache.clone();
        std::thread::scope(|scope| {
            let watcher = std::thread::Builder::new()
                .name("hallpassd-watch".into())
                .spawn_scoped(scope, || {
                    watch_launcher(control, &wake_rx, &stop, &done, me, &dircache);
                });
            if watcher.is_err() {
                drop(wake_tx);
                return self.run_polling(control);
            }
            self.receive(control, &stop);
            done.store(true, Ordering::SeqCst);
            // The watcher returns once this end is gone.
            drop(wake_tx);
        });
    }

    /// The receiving loop of [`Self::run`]: `stop` is set when the launcher went away.
    pub(super) fn receive(&mut self, control: &UnixStream, stop: &AtomicBool) {
        let shared = self.shared.clone();
        let listener = shared.listener();
        let id = shared.info.id;
        while !stop.load(Ordering::SeqCst) {
            match self.next(listener) {
                Ok(n) => self.take(listener, &n),
                // The watcher interrupts us to look at `stop`.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // The target died, or a signal made it give up, before we took it; or no
                // process uses the filter any more (Linux 6.6 and later say so at once).
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    let mut fds = [PollFd::new(listener, PollFlags::empty())];
                    let hup = poll(&mut fds, PollTimeout::ZERO).is_ok()
                        && fds[0]
                            .revents()
                            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR));
                    if hup {
                        // Nothing left to supervise: wait for the launcher to finish.
                        return self.wait_for_launcher(control, stop);
                    }
                }
                Err(e) => {
                    say!("hallpassd: session {id}: receiving a notification: {e}");
                    return;
                }
            }
        }
    }

    /// Takes the next notification from the kernel: into the journal, where there is one.
    pub(super) fn next(&self, listener: BorrowedFd<'_>) -> std::io::Result<seccomp::Notif> {
        match self.shared.journal() {
            Some(j) => j.receive(listener),
            None => seccomp::recv(listener),
        }
    }

    /// Handles one notification just received, then lets its journal slot go.
    pub(super) fn take(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        self.handle(listener, n);
        if let Some(j) = shared.journal() {
            j.end();
        }
    }

    /// Blocks until the launcher goes away (or `stop` says it did).
    pub(super) fn wait_for_launcher(&self, control: &UnixStream, stop: &AtomicBool) {
        while !stop.load(Ordering::SeqCst) {
            let mut fds = [PollFd::new(control.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
                Ok(_) if fds[0].revents().is_some_and(|r| !r.is_empty()) => return,
                Ok(_) => {}
            }
        }
    }

    /// The loop of [`Self::run`] where this thread cannot be interrupted: poll the launcher's
    /// connection and the listener, receive when the listener is readable.
    pub(super) fn run_polling(&mut self, control: &UnixStream) {
        // No watcher to let go of idle directories: keep none.
        self.dircache.off();
        let shared = self.shared.clone();
        let listener = shared.listener();
        let id = shared.info.id;
        let mut orphaned = false;
        loop {
            let mut fds = [
                PollFd::new(control.as_fd(), PollFlags::POLLIN),
                PollFd::new(listener, PollFlags::POLLIN),
            ];
            let n = if orphaned {
                &mut fds[..1]
            } else {
                &mut fds[..]
            };
            match poll(n, PollTimeout::NONE) {
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => {
                    say!("hallpassd: session {id}: poll: {e}");
                    return;
                }
                Ok(_) => {}
            }
            // The launcher sends nothing unasked after attaching: readable means it is gone.
            if fds[0].revents().is_some_and(|r| !r.is_empty()) {
                return;
            }
            let ev = fds[1].revents().unwrap_or(PollFlags::empty());
            if ev.contains(PollFlags::POLLIN) {
                match self.next(listener) {
                    Ok(n) => self.take(listener, &n),
                    // The target died, or a signal made it give up, before we took it.
                    Err(e)
                        if e.raw_os_error() == Some(libc::ENOENT)
                            || e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => {
                        say!("hallpassd: session {id}: receiving a notification: {e}");
                        return;
                    }
                }
            } else if ev.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                // No process uses the filter any more; wait for the launcher to finish.
                orphaned = true;
            }
        }
    }

    /// Decides again the notifications a daemon that died held, noted in the journal (a
    /// question open there is asked again). The kernel wrote each into the journal as it
    /// handed it over, so none can be missing.
    pub(super) fn recover(&mut self) {
        let shared = self.shared.clone();
        let Some(j) = shared.journal() else { return };
        let listener = shared.listener();
        let held = j.held();
        let mut again = 0;
        for (slot, n) in held {
            if seccomp::id_valid(listener, n.id) {
                again += 1;
                j.begin(&n);
                self.handle(listener, &n);
                j.end();
            }
            // Only now, decided again (answered, or held in a slot of its own): if this daemon
            // dies first, the next one still finds it.
            j.settle(slot, n.id);
        }
        say!(
            "hallpassd: session {}: {again} notifications left by the previous daemon decided again",
            shared.info.id
        );
    }
}
