//! One notification, lite mode's way: decoded, decided by the policy (or asked), logged, and
//! answered; strict mode's go to `strict.rs`.

use super::*;
use crate::dlog::say;

/// The executable of thread `tid`, or "" if it cannot be read.
fn exe_of(tid: i32) -> String {
    std::fs::read_link(format!("/proc/{tid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A `mkdir` of a directory that is there already (`mkdir -p` makes one for every parent of
/// the path) changes nothing: it fails with `EEXIST` at once, as the kernel would, instead
/// of asking a person about `/home` or logging it. Where no rule decided (a question, audit
/// or unattended), or where one allows it (the directories on the way to an allowed path);
/// a rule's denial stands. Failing a write is always safe. Not for a process with other
/// credentials than the daemon's: the daemon's look would tell it of a path it may not see
/// (it then gets the question, or its prompt mode's answer).
fn exists_already(
    tid: i32,
    syscall: &str,
    files: &[&Path],
    decision: Decision,
    reason: Reason,
) -> bool {
    let undecided = decision == Decision::Ask
        || decision == Decision::Allow
        || matches!(reason, Reason::Audit | Reason::Unattended);
    undecided
        && matches!(syscall, "mkdir" | "mkdirat")
        && files.len() == 1
        && std::fs::symlink_metadata(files[0]).is_ok()
        && crate::perform::creds::same_credentials(tid).is_ok()
}

impl Supervisor<'_> {
    pub(super) fn handle(&mut self, listener: BorrowedFd<'_>, n: &seccomp::Notif) {
        let shared = self.shared.clone();
        let info = &*shared.info;
        info.notifications.fetch_add(1, Ordering::Relaxed);
        let tid = n.pid as i32;
        if self.failing {
            let _ = seccomp::send(listener, n.id, Reply::Fail(libc::EACCES));
            return;
        }
        let sc = self.decoder.syscall(n);
        // Whatever this thread did before is done; a rename may move directories kept, a
        // removal take the name an object kept was decided by.
        self.dircache.noted(tid);
        if let Some(sc) = sc.filter(|sc| crate::syscalls::changes_names(sc.name)) {
            if crate::syscalls::renames(sc.name) {
                self.dircache.moving(tid);
            } else if self.strict {
                self.dircache.unnaming(tid);
            }
        }
        if self.strict {
            crate::perform::creds::noted(tid);
            return self.handle_strict(listener, n);
        }
        let kind = sc.map(|sc| sc.kind);
        if matches!(kind, Some(crate::syscalls::Kind::OwnDomain)) {
            // A process makes a Landlock domain of its own (a sandbox: Codex's, say). It
            // binds the process, not the daemon: nothing more is performed for the session,
            // or an openat2 or bind would escape it. The kernel makes them again, within the
            // domain. Noted before the domain is made, so nothing slips in between.
            if self.performs {
                self.performs = false;
                say!(
                    "hallpassd: session {}: pid {tid} makes a Landlock domain of its own: its binds and openat2 are left to the kernel from now on",
                    info.id
                );
            }
            info.passed.fetch_add(1, Ordering::Relaxed);
            let _ = seccomp::send(listener, n.id, Reply::Continue);
            return;
        }
        // Lite mode performs binds and openat2 too, as strict mode does: they are rare, and
        // their arguments are in memory the kernel would read again (an abstract address
        // swapped for a path, read-only flags for writing ones, would write unchecked). Not
        // for a process with other credentials than the daemon's (a root daemon's process
        // that dropped them, a launcher with other groups), which must not act with the
        // daemon's power: those the kernel makes, as before.
        let in_memory = matches!(
            kind,
            Some(crate::syscalls::Kind::Bind { .. } | crate::syscalls::Kind::Openat2 { .. })
        );
        if in_memory
            && self.performs
            && self.roots.is_some()
            && crate::perform::creds::same_credentials(tid).is_ok()
        {
            return self.handle_strict(listener, n);
        }
        let op = self.decoder.decode(n, &mut self.mem, &mut self.lender);
        // Only a valid notification proves that the memory read was the caller's. The kernel
        // refuses a reply to one that died meanwhile (ENOENT), so a silent answer needs no
        // check; anything with an effect beyond the reply (a log line, a question) checks
        // first. This saves an ioctl on the hot path: a write inside the project.
        let valid = || seccomp::id_valid(listener, n.id);
        let reply = match op {
            Ok(Op::Pass { exec }) => {
                if exec {
                    self.mem.forget(tid);
                }
                info.passed.fetch_add(1, Ordering::Relaxed);
                Reply::Continue
            }
            Ok(Op::Refuse(e)) => {
                info.denied.fetch_add(1, Ordering::Relaxed);
                Reply::Fail(e)
            }
            Ok(Op::Connect { path, name }) => {
                if valid() && !self.log_connect(tid, &path, name.as_ref()) {
                    info.denied.fetch_add(1, Ordering::Relaxed);
                    Reply::Fail(libc::EACCES)
                } else {
                    info.passed.fetch_add(1, Ordering::Relaxed);
                    Reply::Continue
                }
            }
            Ok(Op::Write { syscall, paths }) => {
                match self.decide(n, syscall, &paths, &valid, &mut None) {
                    Some(r) => r,
                    None => return,
                }
            }
            // The arguments name nothing the kernel could write either (a bad descriptor, a
            // symlink loop, a path too long, a bad pointer, an empty path): its own error.
            Err(crate::decode::DecodeError::Read { source, .. })
                if source.raw_os_error().is_some_and(|e| {
                    [
                        libc::ENOENT,
                        libc::EBADF,
                        libc::ELOOP,
                        libc::ENAMETOOLONG,
                        libc::EFAULT,
                        libc::ENOTDIR,
                    ]
                    .contains(&e)
                }) =>
            {
                info.passed.fetch_add(1, Ordering::Relaxed);
                Reply::Fail(source.raw_os_error().unwrap_or(libc::EACCES))
            }
            Err(e) => {
                if !valid() {
                    return;
                }
                let syscall = match &e {
                    crate::decode::DecodeError::Read { syscall, .. }
                    | crate::decode::DecodeError::Unsupported { syscall, .. } => syscall,
                    _ => "?",
                };
                info.denied.fetch_add(1, Ordering::Relaxed);
                say!("hallpassd: session {}: pid {tid}: {e}", info.id);
                // Denied either way.
                let _ = self.record(
                    tid,
                    syscall,
                    &format!("({e})"),
                    Decision::Deny,
                    Reason::Unresolved,
                );
                Reply::Fail(libc::EACCES)
            }
        };
        match seccomp::send(listener, n.id, reply) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => say!(
                "hallpassd: session {}: answering a notification: {e}",
                info.id
            ),
        }
    }

    /// The answer to a write; `None` when there is none to send now: the notification died
    /// before anything was written about it, or it waits for a person.
    ///
    /// In strict mode `action` is the write to perform: `Continue` then means "perform it",
    /// and a question takes it along to perform once answered.
    pub(super) fn decide(
        &mut self,
        n: &seccomp::Notif,
        syscall: &'static str,
        paths: &[Resolved],
        valid: &dyn Fn() -> bool,
        action: &mut Option<Action>,
    ) -> Option<Reply> {
        let tid = n.pid as i32;
        // One or two paths (a rename, a link): on the stack.
        let mut kept: [&Path; 2] = [Path::new(""); 2];
        let mut count = 0;
        let mut more: Vec<&Path> = Vec::new();
        for r in paths {
            match r {
                Resolved::Path(p) if !self.own_proc(tid, p) => {
                    if count < kept.len() {
                        kept[count] = p;
                        count += 1;
                    } else {
                        more.push(p);
                    }
                }
                // A pipe or socket reopened through /proc/self/fd, or the writer's own /proc
                // entries: nothing on disk.
                _ => {}
            }
        }
        let files: &[&Path] = if more.is_empty() {
            &kept[..count]
        } else {
            more.splice(0..0, kept[..count].iter().copied());
            &more
        };
        let shared = &*self.shared;
        if files.is_empty() {
            shared.count(Decision::Allow);
            return Some(Reply::Continue);
        }
        let rules = self.questions.rules().current();
        let (decision, reason, i) = shared.decide(syscall, files, &rules);
        if reason == Reason::Implicit {
            shared.count(decision);
            return Some(if decision == Decision::Allow {
                Reply::Continue
            } else {
                Reply::Fail(libc::EACCES)
            });
        }
        if !valid() {
            return None;
        }
        if exists_already(tid, syscall, files, decision, reason) {
            shared.info.passed.fetch_add(1, Ordering::Relaxed);
            return Some(Reply::Fail(libc::EEXIST));
        }
        // Where no rule decided, a write the kernel refuses anyway fails as it would
        // natively, unasked.
        let by_prompt =
            decision == Decision::Ask || matches!(reason, Reason::Audit | Reason::Unattended);
        if by_prompt {
            if let Some(r) = self.fails_natively(n, syscall, files) {
                return Some(r);
            }
        }
        if decision == Decision::Ask {
            // The same process finishing a change a person just answered for.
            if let Some(d) = shared.follow_up(tid, syscall, files) {
                return Some(self.settle(tid, syscall, files, d, Reason::FollowUp));
            }
            // Every path that needs an answer is shown (both of a rename, say): the answer
            // applies to the whole syscall.
            let undecided = shared.undecided(syscall, files, &rules);
            let all: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
            if self.ask(n, syscall, &undecided, all, action) {
                return None;
            }
            // Denied either way.
            let _ = self.record(
                tid,
                syscall,
                &files[i].to_string_lossy(),
                Decision::Deny,
                Reason::Unresolved,
            );
            shared.count(Decision::Deny);
            return Some(Reply::Fail(libc::EACCES));
        }
        Some(self.settle(tid, syscall, files, decision, reason))
    }

    /// The answer to the write of `n` to `files` where the kernel would fail it, made by
    /// the process itself (`perform/refusal.rs`; only for a write of one path): its errno,
    /// logged with reason `refused`; a change of a file that is not there fails with
    /// `ENOENT` and an exclusive create of one that is with `EEXIST`, unlogged, as a `mkdir`
    /// of one that is there does.
    fn fails_natively(&self, n: &seccomp::Notif, syscall: &str, files: &[&Path]) -> Option<Reply> {
        use crate::perform::refusal;
        let ([path], Some(sc)) = (files, self.decoder.syscall(n)) else {
            return None;
        };
        let tid = n.pid as i32;
        let errno = refusal::refused(refusal::check(sc, &n.data.args), path, tid)?;
        if matches!(errno, libc::ENOENT | libc::EEXIST) {
            self.shared.info.passed.fetch_add(1, Ordering::Relaxed);
        } else {
            // Denied either way.
            let _ = self.record_each(tid, syscall, files, Decision::Deny, Reason::Refused);
            self.shared.count(Decision::Deny);
        }
        Some(Reply::Fail(errno))
    }

    /// Logs a decided write and counts it: its answer. An allowed write whose line cannot
    /// be logged is refused.
    fn settle(
        &self,
        tid: i32,
        syscall: &str,
        files: &[&Path],
        decision: Decision,
        reason: Reason,
    ) -> Reply {
        let logged = self.record_each(tid, syscall, files, decision, reason);
        let decision = if logged { decision } else { Decision::Deny };
        self.shared.count(decision);
        if decision == Decision::Allow {
            Reply::Continue
        } else {
            Reply::Fail(libc::EACCES)
        }
    }

    /// [`Supervisor::record`] for every path the syscall writes (both of a rename): `false`
    /// if a line was lost.
    #[must_use = "an allowed write whose line is lost must be refused"]
    pub(super) fn record_each(
        &self,
        tid: i32,
        syscall: &str,
        files: &[&Path],
        decision: Decision,
        reason: Reason,
    ) -> bool {
        // Every line is tried, whether or not one before was lost.
        let mut all = true;
        for f in files {
            all &= self.record(tid, syscall, &f.to_string_lossy(), decision, reason);
        }
        all
    }

    /// Publishes a question about this write; the notification waits for its answer.
    /// `false` when the question could not be kept (the journal is full, too many wait): then
    /// deny.
    pub(super) fn ask(
        &self,
        n: &seccomp::Notif,
        syscall: &'static str,
        paths: &[PathBuf],
        all: Vec<PathBuf>,
        action: &mut Option<Action>,
    ) -> bool {
        let Some((path, also)) = paths.split_first() else {
            return false;
        };
        let tid = n.pid as i32;
        let shared = &self.shared;
        let pid = tgid_of(tid).unwrap_or(tid);
        let top = shared.info.pid.load(Ordering::Relaxed);
        let q = Question {
            id: 0,
            session_id: shared.info.id,
            command: shared.info.argv.clone(),
            pid,
            name: crate::process::comm(pid).unwrap_or_default(),
            exe: exe_of(tid),
            syscall: syscall.into(),
            path: path.to_string_lossy().into_owned(),
            also: also
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            chain: crate::process::chain(pid, top),
            // A service is its socket, not the directory it is in.
            scope: match action.as_mut().and_then(|a| a.dest_mut()) {
                Some(_) => path.to_string_lossy().into_owned(),
                None => crate::scope::suggest(path, &shared.home)
                    .to_string_lossy()
                    .into_owned(),
            },
            service: match action.as_mut().and_then(|a| a.dest_mut()) {
                Some(d) => d.service.clone(),
                None => String::new(),
            },
            timed_secs: shared.timed_secs(),
            asked_ms: crate::ask::now_ms(),
            number: 0,
            change: self.change(n, path, paths, &all) as i32,
        };
        let host = shared.clone() as Arc<dyn crate::ask::Host>;
        if let Err(e) = self.questions.ask(&host, n, q, all, action.take()) {
            say!(
                "hallpassd: session {}: {e}: a write that needs an answer is denied",
                shared.info.id
            );
            return false;
        }
        true
    }

    /// What the call of `n` does to `path`, the first of the `shown` paths of `all` it
    /// writes, for the question's words.
    fn change(
        &self,
        n: &seccomp::Notif,
        path: &Path,
        shown: &[PathBuf],
        all: &[PathBuf],
    ) -> hallpass_proto::Change {
        use crate::syscalls::change::{change, Shown};
        let Some(sc) = self.decoder.syscall(n) else {
            return hallpass_proto::Change::Write;
        };
        let side = match (shown.len(), all.first()) {
            (1, Some(first)) if all.len() == 2 && first != path => Shown::Second,
            (1, _) => Shown::First,
            _ => Shown::Both,
        };
        let exists = || std::fs::symlink_metadata(path).is_ok();
        change(sc, &n.data.args, &path.to_string_lossy(), side, exists)
    }

    /// Lite mode: logs a connection to a service outside the session (reason `service`); not
    /// one to a socket in the project or `$TMPDIR`, nor between the session's processes.
    /// `false` when its line could not be written: the connection is then refused.
    #[must_use = "a connection whose line is lost must be refused"]
    pub(super) fn log_connect(
        &self,
        tid: i32,
        path: &Resolved,
        name: Option<&crate::service::Name>,
    ) -> bool {
        let Resolved::Path(p) = path else {
            return true;
        };
        let rules = self.questions.rules().current();
        if self.shared.decide("connect", &[p], &rules).1 == Reason::Implicit {
            return true;
        }
        let session = self.shared.info.pid.load(Ordering::Relaxed);
        let holders = match name.and_then(crate::service::holders) {
            Some(crate::service::Listener::Held(h)) => h,
            _ => Vec::new(),
        };
        if !holders.is_empty()
            && holders
                .iter()
                .all(|&h| crate::process::descends_from(h, session))
        {
            return true;
        }
        let shown = p.to_string_lossy();
        self.record(tid, "connect", &shown, Decision::Allow, Reason::Service)
    }

    /// Whether `p` is one of the writer's own `/proc/PID/` entries (`comm`, `attr/...`),
    /// which are not files on disk. Not its magic links (`fd/N`, `cwd`, `root`, `exe`,
    /// `map_files/...`): one of those still here was not resolved (the descriptor closed
    /// meanwhile, say) and could name anything by the time the kernel follows it.
    pub(super) fn own_proc(&self, tid: i32, p: &Path) -> bool {
        // Resolved paths are normalized: one test of their bytes rules out nearly all.
        if !p.as_os_str().as_bytes().starts_with(b"/proc/") {
            return false;
        }
        let Some(pid) = proc_pid(p) else { return false };
        if pid != tid && Some(pid) != tgid_of(tid) {
            return false;
        }
        let magic = ["fd", "cwd", "root", "exe", "map_files"];
        !p.components()
            .skip(3)
            .any(|c| c.as_os_str().to_str().is_some_and(|c| magic.contains(&c)))
    }

    /// Logs one decided write (see [`Shared::record`]): `false` when its line is lost, and
    /// an allowed write must then be refused.
    #[must_use = "an allowed write whose line is lost must be refused"]
    pub(super) fn record(
        &self,
        tid: i32,
        syscall: &str,
        path: &str,
        decision: Decision,
        reason: Reason,
    ) -> bool {
        let pid = tgid_of(tid).unwrap_or(tid);
        self.shared
            .record(pid, &exe_of(tid), syscall, path, decision, reason)
    }
}
