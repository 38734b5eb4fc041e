//! One notification, strict mode's way: left to the kernel where its Landlock domain checks
//! it again, else prepared, decided and performed by the daemon as the process.

use super::*;
use crate::dlog::say;

impl Supervisor<'_> {
    /// Strict mode in a Landlock domain: a write the policy allows by a static rule (the
    /// project, `$TMPDIR`, the devices, `--allow-path`) inside what the domain
    /// lets the command write is left to the kernel, which makes it natively, with the
    /// process's own credentials. The path was read once, as lite mode reads it; if the
    /// process changes what it names before the kernel reads it again, the kernel checks the
    /// object it reaches against the domain, which holds nothing the policy denies: a race
    /// ends in `EACCES`, never elsewhere. `true` when answered.
    pub(super) fn kernel_makes(
        &mut self,
        listener: BorrowedFd<'_>,
        n: &seccomp::Notif,
        sc: &'static crate::syscalls::Syscall,
    ) -> bool {
        let shared = self.shared.clone();
        if shared.landlock.is_empty() || !crate::syscalls::landlock_covers(sc, &n.data.args) {
            return false;
        }
        let Ok(Op::Write { syscall, paths }) =
            self.decoder.decode(n, &mut self.mem, &mut self.lender)
        else {
            return false;
        };
        let mut files: Vec<&Path> = Vec::with_capacity(paths.len());
        for r in &paths {
            match r {
                Resolved::Path(p) if shared.landlock.covers(p) => files.push(p),
                _ => return false,
            }
        }
        let rules = self.questions.rules().current();
        // A lasting "never" rule made during the session, in or around the domain: the
        // domain would let a race reach it.
        if rules
            .never
            .iter()
            .any(|p| shared.landlock.covers(p) || shared.landlock.holds(p))
        {
            return false;
        }
        let (decision, reason, _) = shared.decide(syscall, &files, &rules);
        if decision != Decision::Allow || !matches!(reason, Reason::Implicit | Reason::Policy) {
            return false;
        }
        if reason != Reason::Implicit {
            if !seccomp::id_valid(listener, n.id) {
                return true;
            }
            // An allowed write whose line cannot be logged is refused.
            let logged = self.record_each(n.pid as i32, syscall, &files, decision, reason);
            if !logged {
                shared.count(Decision::Deny);
                let _ = seccomp::send(listener, n.id, Reply::Fail(libc::EACCES));
                return true;
            }
        }
        shared.count(decision);
        let _ = seccomp::send(listener, n.id, Reply::Continue);
        true
    }

    /// Strict mode: prepares the write on held descriptors, decides on what they are, and
    /// performs it (or asks, the prepared write waiting with the question).
    pub(super) fn handle_strict(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        let info = &*shared.info;
        let tid = n.pid as i32;
        let Some(sc) = self.decoder.syscall(n) else {
            info.denied.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Fail(libc::ENOSYS));
            return;
        };
        // Before the credentials: the kernel makes it with the process's own.
        if self.strict && self.kernel_makes(listener, n, sc) {
            return;
        }
        if matches!(sc.kind, Kind::Exec | Kind::Creds) {
            // The process changes its credentials: the daemon's answer for them goes, and
            // the kernel makes the call.
            let exec = sc.kind == Kind::Exec;
            // An exec may hand the thread its group leader's id: that one's answer goes too.
            let leader = if exec {
                crate::process::tgid_of(tid)
            } else {
                None
            };
            crate::perform::creds::changing(tid, exec, leader);
            if exec {
                self.mem.forget(tid);
            }
            info.passed.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Continue);
            return;
        }
        let valid = || seccomp::id_valid(listener, n.id);
        // A process with other credentials than the daemon's (a root daemon's process that
        // switched user or dropped capabilities): this thread takes on its credentials for
        // the walk and the call, so the kernel checks what it would natively.
        let _guise = match crate::perform::creds::guise(tid, &valid) {
            Ok(g) => g,
            Err(e) => {
                if !self.warned_credentials {
                    self.warned_credentials = true;
                    say!(
                        "hallpassd: session {}: cannot act with the credentials of pid {tid} ({e}): its writes fail",
                        info.id
                    );
                }
                let _ = seccomp::send(listener, n.id, Reply::Fail(e as i32));
                return;
            }
        };
        for _ in 0..emulate::OPEN_RETRIES {
            let mut t = emulate::Target {
                tid,
                lite: !self.strict,
                session: info.pid.load(Ordering::Relaxed),
                ttys: &shared.ttys,
                own: &shared.own,
                mem: &mut self.mem,
                lender: &mut self.lender,
                descs: &self.dircache,
            };
            let roots = self
                .roots
                .as_ref()
                .expect("roots of a session that performs");
            let prepared = emulate::prepare(sc, n, &mut t, roots);
            // Only a valid notification proves that what was read was the caller's; nothing
            // is performed for one that is gone.
            if !valid() {
                return;
            }
            // A connection: between the session's own processes, made undecided.
            let prepared = match prepared {
                Prepared::Write {
                    syscall,
                    paths,
                    mut action,
                } => match self.settle_connect(tid, syscall, &mut action, &paths) {
                    Some(Reply::Continue) => Prepared::Perform(action),
                    Some(r) => {
                        info.denied.fetch_add(1, Ordering::Relaxed);
                        let _ = seccomp::send(listener, n.id, r);
                        return;
                    }
                    None => Prepared::Write {
                        syscall,
                        paths,
                        action,
                    },
                },
                p => p,
            };
            let action = match prepared {
                Prepared::Pass { exec } => {
                    if exec {
                        self.mem.forget(tid);
                    }
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    let _ = seccomp::send(listener, n.id, Reply::Continue);
                    return;
                }
                Prepared::Fail(e) => {
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    let _ = seccomp::send(listener, n.id, Reply::Fail(e));
                    return;
                }
                // Not a write: nothing to decide, but performed here all the same.
                Prepared::Perform(action) => {
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    action
                }
                Prepared::Write {
                    syscall,
                    paths,
                    action,
                } => {
                    let mut action = Some(action);
                    match self.decide(n, syscall, &paths, &valid, &mut action) {
                        None => return,
                        Some(Reply::Continue) => {}
                        Some(r) => {
                            let _ = seccomp::send(listener, n.id, r);
                            return;
                        }
                    }
                    action.expect("kept unless asked")
                }
            };
            // An open that waits for a FIFO's other end does so on a thread of its own, kept
            // in the journal meanwhile (a daemon that dies leaves it to the next one).
            let wait_apart = |action| {
                let slot = shared.journal().and_then(|j| j.hold(n));
                perform_later(shared.clone(), n.id, tid, action, slot, true);
            };
            if action.may_block() {
                return wait_apart(action);
            }
            match action.perform(tid, false) {
                Outcome::Raced => continue,
                Outcome::Blocks => return wait_apart(action),
                outcome => {
                    // The daemon's copies of the process's descriptors go first: a file
                    // still open for writing here would fail the exec the process may make
                    // of it the moment it has its answer (ETXTBSY).
                    drop(action);
                    return emulate::answer(listener, n.id, outcome);
                }
            }
        }
        // The entry kept turning into a symlink: what the kernel says of too many.
        let _ = seccomp::send(listener, n.id, Reply::Fail(libc::ELOOP));
    }

    /// A connection (or a datagram) between the session's own processes passes
    /// (`Continue`: perform it), one to hallpassd is refused; `None` for any other, then
    /// decided as a write, the action now naming the service for the question
    /// (`perform/emulate/connect.rs`).
    pub(super) fn settle_connect(
        &self,
        tid: i32,
        syscall: &'static str,
        action: &mut Action,
        paths: &[Resolved],
    ) -> Option<Reply> {
        let (Some(c), [Resolved::Path(p)]) = (action.dest_mut(), paths) else {
            return None;
        };
        let shared = &self.shared;
        let allowed = || {
            let rules = self.questions.rules().current();
            shared.decide(syscall, &[p], &rules).0 == Decision::Allow
        };
        let session = shared.info.pid.load(Ordering::Relaxed);
        match crate::perform::emulate::connect::settle(c, session, allowed) {
            crate::perform::emulate::connect::Settled::Pass => Some(Reply::Continue),
            crate::perform::emulate::connect::Settled::Refuse(e) => {
                let shown = p.to_string_lossy();
                // Denied either way.
                let _ = self.record(tid, syscall, &shown, Decision::Deny, Reason::Protected);
                Some(Reply::Fail(e))
            }
            crate::perform::emulate::connect::Settled::Decide => None,
        }
    }
}
