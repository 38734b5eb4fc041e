//! `hallpass [FLAGS] -- COMMAND`: registers a session with the daemon, starts the command
//! under the session's filter, lends the daemon what it cannot open itself, and passes the
//! command's exit status on.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use hallpass_proto::shown::shown;
use hallpass_proto::{EnforceMode, OpenSession, ProfileUse, PromptMode};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::error::{ExitCode, Failure};
use crate::flags::{ModeArg, PromptArg, RunArgs, WaitArg};
use crate::sys::launch::{
    self, ChildFailed, STAGE_EXEC, STAGE_FILTER, STAGE_NO_NEW_PRIVS, STAGE_TTY,
};
use crate::sys::pty::{self, RawMode, Size};
use crate::{desktop, env, inside, link, logwatch, pathargs, procs, profiles, refusals, terminal};

/// Runs the command; returns its exit status.
pub fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(format!("cannot read the current directory: {e}")))?;
    let home = env::home_dir();
    let abs = |p: &Path| -> PathBuf {
        let p = env::expand_tilde(p, &home);
        if p.is_absolute() {
            p
        } else {
            cwd.join(p)
        }
    };
    let allow: Vec<PathBuf> = args.allow_path.iter().map(|p| abs(p)).collect();
    let deny: Vec<PathBuf> = args.deny_path.iter().map(|p| abs(p)).collect();
    for (given, a) in args.allow_path.iter().zip(&allow) {
        pathargs::allow("--allow-path", given, a, &home)?;
    }
    for (given, d) in args.deny_path.iter().zip(&deny) {
        pathargs::deny("--deny-path", given, d, &home)?;
    }
    let ask = args.prompt == PromptArg::Ask;
    // Asking needs a person at a terminal: ours, to draw the bar on and read the keys from.
    let (pty, size) = if ask {
        use std::io::IsTerminal;
        if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
            return Err(Failure::new(
                "--prompt=ask (the default) needs a terminal, and stdin or stdout is not one; \
                 use --prompt=answer to answer with `hallpass answer` elsewhere, \
                 --prompt=deny to deny what is not allowed, or --prompt=allow to allow and log it",
            ));
        }
        let size = pty::size_of(std::io::stdin().as_fd()).unwrap_or(Size { rows: 24, cols: 80 });
        let p = pty::open(size)
            .map_err(|e| Failure::new(format!("cannot open a pseudo-terminal: {e}")))?;
        (Some(p), size)
    } else {
        (None, Size { rows: 24, cols: 80 })
    };
    let services: Vec<PathBuf> = args.allow_service.iter().map(|p| abs(p)).collect();
    let log_path = args.log.as_deref().map(abs);
    let log = match &log_path {
        Some(p) => Some(open_log(p)?),
        None => None,
    };

    let argv: Vec<OsString> = if args.command.is_empty() {
        vec![std::env::var_os("SHELL")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".into())]
    } else {
        args.command.clone()
    };
    let program = env::find_program(&argv[0])?;
    let profiles = session_profiles(&args, &argv[0], &home, &deny, log_path.as_deref())?;
    let allow: Vec<PathBuf> = allow
        .into_iter()
        .chain(profiles.iter().flat_map(|a| a.allowed(false).cloned()))
        .collect();
    let strings = |v: &mut dyn Iterator<Item = &PathBuf>| -> Vec<String> {
        v.map(|p| p.to_string_lossy().into_owned()).collect()
    };
    let allow_patterns = strings(&mut profiles.iter().flat_map(|a| a.allowed(true)));
    let ask_patterns = strings(&mut profiles.iter().flat_map(|a| a.ask.iter()));

    let mut protected = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        protected.push(exe);
    }
    protected.extend(log_path.clone());
    let open = OpenSession {
        protocol: hallpass_proto::PROTOCOL,
        argv: argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: cwd.to_string_lossy().into_owned(),
        home: home.to_string_lossy().into_owned(),
        allow_paths: allow
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        deny_paths: deny
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        allow_patterns,
        ask_patterns,
        allow_services: services
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        no_implicit: args.no_implicit,
        allow_tty: args.allow_tty,
        // The command's terminal is ours (the pty) when asking; otherwise the one it inherits.
        tty_paths: match &pty {
            Some(p) => vec![p.path.to_string_lossy().into_owned()],
            None => env::tty_paths(),
        },
        // At most u32::MAX, as parsing checked.
        timed_secs: args.allow_for.as_secs() as u32,
        prompt: match args.prompt {
            PromptArg::Ask => PromptMode::Ask,
            PromptArg::Allow => PromptMode::Allow,
            PromptArg::Deny => PromptMode::Deny,
            PromptArg::Answer => PromptMode::Answer,
            PromptArg::Desktop => PromptMode::Desktop,
        } as i32,
        mode: match args.mode {
            ModeArg::Lite => EnforceMode::Lite,
            ModeArg::Strict => EnforceMode::Strict,
        } as i32,
        protected_paths: protected
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        log_path: log_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        force_lend: std::env::var_os("HALLPASS_FORCE_LEND").is_some_and(|v| v == "1"),
        tmp_base: std::env::var("TMPDIR").unwrap_or_default(),
        resume_tmpdir: String::new(),
        profiles: profiles
            .iter()
            .map(|a| ProfileUse {
                name: a.name.clone(),
                paths: strings(&mut a.paths.iter()),
                ask: strings(&mut a.ask.iter()),
            })
            .collect(),
    };

    let (sock, opened) = link::open_session(&open).map_err(inside::nested)?;

    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k != "TMPDIR" && k != "HALLPASS_SESSION")
        .collect();
    if !opened.tmpdir.is_empty() {
        env.push(("TMPDIR".into(), opened.tmpdir.clone().into()));
    } else if let Some(t) = std::env::var_os("TMPDIR") {
        env.push(("TMPDIR".into(), t));
    }
    env.push((
        "HALLPASS_SESSION".into(),
        opened.session_id.to_string().into(),
    ));
    let mut prepared = launch::Prepared::new(
        program.into_os_string(),
        argv.clone(),
        env,
        &opened.filter,
        opened.wait_killable,
    )
    .map_err(|e| Failure::new(e.to_string()))?;
    if let Some(p) = &pty {
        prepared.on_terminal(p.follower.as_raw_fd());
    }
    if matches!(args.mode, ModeArg::Strict) {
        prepared.scope_abstract_sockets();
    }
    let landlock = prepared.allow_writes_beneath(&opened.landlock_paths);
    if !opened.landlock_paths.is_empty() && landlock.is_empty() {
        eprintln!(
            "hallpass: strict mode without Landlock ABI 2 (Linux 5.19): the daemon performs every write itself, which is slower"
        );
    }

    launch::become_subreaper()
        .map_err(|e| Failure::new(format!("cannot become a child subreaper: {e}")))?;
    // Signals are taken synchronously in `wait_for` (and the lending thread must not get
    // them); the child unblocks them before exec.
    let signals = forwarded_signals();
    signals
        .thread_block()
        .map_err(|e| Failure::new(format!("cannot block signals: {e}")))?;

    let child = launch::spawn(&prepared).map_err(|e| Failure::new(format!("cannot fork: {e}")))?;
    let pid = Pid::from_raw(child.pid);
    // The command (same user) must not reach into us: our descriptors (the listener, the
    // session journal) and memory. Not dumpable, /proc/OUR_PID/* is root's; lending
    // /proc/TID/mem of the command still works (it is the command that is opened).
    launch::not_dumpable().map_err(|e| {
        Failure::new(format!(
            "cannot protect the launcher (PR_SET_DUMPABLE): {e}"
        ))
    })?;
    // The child has its copy of the terminal; ours would keep the pty open after it exits.
    let leader = pty.map(|p| p.leader);
    type Tail = (
        std::os::fd::OwnedFd,
        Option<(std::os::fd::OwnedFd, PathBuf)>,
    );
    let attach = || -> Result<(link::Registration, Tail), Failure> {
        let listener = match launch::recv_listener(&child)
            .map_err(|e| Failure::new(format!("the command's process failed: {e}")))?
        {
            Ok(l) => l,
            Err(f) => return Err(child_failure(&f, &argv[0])),
        };
        let journal = link::journal()
            .map_err(|e| Failure::new(format!("cannot make the session journal: {e}")))?;
        // Where the daemons count the writes refused, and the log lines they could not write.
        let copy = || {
            journal
                .try_clone()
                .map_err(|e| Failure::new(format!("cannot make the session journal: {e}")))
        };
        let refused = copy()?;
        let watched = match &log_path {
            Some(p) => Some((copy()?, p.clone())),
            None => None,
        };
        let reg = link::Registration {
            open: OpenSession {
                resume_tmpdir: opened.tmpdir.clone(),
                ..open
            },
            listener: listener.fd,
            journal,
            log,
            pid: child.pid,
            // Only what the child really entered: the daemon leaves writes to the kernel on
            // the strength of it.
            landlock: if listener.write_domain {
                landlock
            } else {
                Vec::new()
            },
        };
        link::attach(&sock, opened.session_id, &reg, false)?;
        Ok((reg, (refused, watched)))
    };
    let (reg, (refused, watched)) = match attach() {
        Ok(r) => r,
        Err(f) => {
            let _ = kill(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
            return Err(f);
        }
    };
    link::wait_freely(&sock)?;
    let link = link::start(sock, reg, opened.session_id);
    let logwatch = watched.map(|(journal, path)| logwatch::start(journal, &path));
    if let Some(f) = launch::release(&child)
        .map_err(|e| Failure::new(format!("cannot start the command: {e}")))?
    {
        let _ = waitpid(pid, None);
        return Err(child_failure(&f, &argv[0]));
    }
    if args.prompt == PromptArg::Answer {
        eprintln!(
            "hallpass: session {}: writes that need an answer wait for `hallpass answer` (run it in another terminal)",
            opened.session_id
        );
    }
    let wait_all = args.wait == WaitArg::All;
    let desktop = (args.prompt == PromptArg::Desktop).then(|| desktop::start(link.session()));
    let end = |code: i32| {
        if !wait_all {
            procs::end_leftovers();
        }
        code
    };
    let code = match leader {
        None => end(wait_for(pid, &signals, &|| {}, wait_all)),
        Some(leader) => {
            // The command runs already: if its terminal cannot be set up, it must not go on
            // without one.
            let fail = |f: Failure| {
                let _ = kill(pid, Signal::SIGKILL);
                let _ = waitpid(pid, None);
                f
            };
            let raw = RawMode::enter().map_err(|e| {
                fail(Failure::new(format!(
                    "cannot set the terminal to raw mode: {e}"
                )))
            })?;
            let relay = terminal::start(leader, size, link.session(), child.pid, wait_all)
                .map_err(|e| fail(Failure::new(format!("cannot relay the terminal: {e}"))))?;
            let code = end(wait_for(pid, &signals, &|| relay.resize(), wait_all));
            let outcome = relay.finish();
            drop(raw);
            if outcome.stopped && !wait_all {
                eprintln!("hallpass: session stopped (Ctrl-] s): the command was sent SIGHUP");
            }
            code
        }
    };
    if let Some(d) = desktop {
        d.finish();
    }
    link.close();
    // After the daemon has ended the session: its last questions, left open, are counted.
    let refused = refusals::at_end(&refused);
    if let Some(w) = logwatch {
        w.finish();
    }
    let homes = [home.as_path(), &env::real_home_dir()];
    if let Some(line) = refusals::line(&refused, &homes, log_path.as_deref()) {
        crate::error::say(&line);
    }
    Ok(ExitCode::Command(code))
}

/// The profiles of the session (see `profiles::choose`), said in one line on stderr. What
/// hallpass always denies, and `--deny-path`, are left out of them.
fn session_profiles(
    args: &RunArgs,
    command: &OsStr,
    home: &Path,
    deny: &[PathBuf],
    log: Option<&Path>,
) -> Result<Vec<profiles::Applied>, Failure> {
    let mut denied = deny.to_vec();
    denied.push(profiles::config_dir(home));
    denied.extend(std::env::current_exe().ok());
    denied.extend(log.map(Path::to_path_buf));
    let applied = profiles::choose(&args.profile, args.no_profile, command, home, &denied)
        .map_err(|e| match e {
            profiles::ProfileError::Unknown(_) => {
                Failure::with_code(e.to_string(), ExitCode::Usage)
            }
            _ => Failure::new(format!("{e}\nhint: fix it, or run with --no-profile")),
        })?;
    if let Some(line) = profiles::announce(&applied, home) {
        eprintln!("{line}");
    }
    // A profile file the command can write (in the project) could widen the next session.
    let cwd = std::env::current_dir().unwrap_or_default();
    for n in args.profile.iter().filter(|n| n.contains('/')) {
        let abs = std::fs::canonicalize(n).unwrap_or_else(|_| cwd.join(n));
        if !args.no_implicit && abs.starts_with(&cwd) {
            eprintln!(
                "hallpass: warning: the profile {n} is in the project, which the command can write; keep it in {}",
                profiles::tilde(&profiles::user_dir(home), home)
            );
        }
    }
    Ok(applied)
}

fn child_failure(f: &ChildFailed, cmd: &OsStr) -> Failure {
    let e = io::Error::from_raw_os_error(f.errno);
    let name = shown(cmd);
    match f.stage {
        STAGE_EXEC => Failure::with_code(
            format!("cannot run {name}: {e}"),
            if f.errno == libc::ENOENT { ExitCode::NotFound } else { ExitCode::CannotRun },
        ),
        STAGE_FILTER if f.errno == libc::EBUSY => Failure::new(format!(
            "cannot install the seccomp filter: {e}\nhint: is this already running under hallpass? sessions do not nest"
        )),
        STAGE_FILTER => Failure::new(format!(
            "cannot install the seccomp filter: {e}\nhint: hallpass needs Linux 5.9 or newer with seccomp user notification"
        )),
        STAGE_NO_NEW_PRIVS => Failure::new(format!("cannot set no_new_privs: {e}")),
        STAGE_TTY => Failure::new(format!("cannot give the command its terminal: {e}")),
        _ => Failure::new("the command's process failed before it could start"),
    }
}

fn forwarded_signals() -> SigSet {
    let mut s = SigSet::empty();
    for sig in [
        Signal::SIGCHLD,
        Signal::SIGWINCH,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGQUIT,
    ] {
        s.add(sig);
    }
    s
}

/// Waits for the command, reaping orphans we inherit as subreaper, and forwarding the
/// signals meant for the command; `resized` runs on SIGWINCH. With `all` (`--wait=all`),
/// waits until no process of the session is left, and SIGTERM or SIGHUP stop them all.
/// Returns the command's exit code to pass on.
fn wait_for(pid: Pid, signals: &SigSet, resized: &dyn Fn(), all: bool) -> i32 {
    // Terminal-generated SIGINT/SIGQUIT already reached the command (same process group).
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let mut code = None;
    let mut stopping = false;
    // Whether the last look for the session's processes failed: then look again soon, not
    // only when a signal comes. Said once.
    let mut unlisted = false;
    let mut said = false;
    loop {
        loop {
            match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(p, c)) if p == pid => code = Some(c),
                Ok(WaitStatus::Signaled(p, s, _)) if p == pid => code = Some(128 + s as i32),
                Ok(WaitStatus::StillAlive) | Err(_) => break,
                Ok(_) => {}
            }
        }
        if let Some(c) = code {
            if !all {
                return c;
            }
            // Left: the session's processes, not a daemon we may have started and inherited.
            // Not knowing is not "none left".
            match procs::none_left() {
                Ok(true) => return c,
                Ok(false) => unlisted = false,
                Err(e) => {
                    unlisted = true;
                    if !said {
                        said = true;
                        crate::error::say(&format!(
                            "hallpass: cannot list the session's processes (reading /proc: {e}); waiting on until none is left"
                        ));
                    }
                }
            }
        }
        let signal = if unlisted {
            crate::sys::signals::wait(signals, std::time::Duration::from_millis(100))
        } else {
            signals.wait().ok()
        };
        match signal {
            Some(Signal::SIGCHLD) => {}
            Some(Signal::SIGWINCH) => resized(),
            Some(Signal::SIGINT | Signal::SIGQUIT) if interactive => {}
            Some(s) if all && !stopping => {
                stopping = true;
                procs::stop_all(&format!("stopping on {s}"));
            }
            Some(_) if all => {}
            Some(s) => {
                let _ = kill(pid, s);
            }
            None => {}
        }
    }
}

/// Opens the `--log` file for appending, creating it if needed. Only a regular file: the log
/// is a record to keep, and a FIFO would hold the launcher until something reads it (then
/// the daemon, when it is full). Opened without blocking, so one put there meanwhile cannot.
fn open_log(p: &Path) -> Result<File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: io::Error| Failure::new(format!("cannot open the log file {}: {e}", shown(p)));
    let not_a_file = |kind: &str| {
        Failure::new(format!(
            "the log file {} is {kind}, not a regular file\nhint: name a file, and follow it with `tail -f FILE` if you want to watch it",
            shown(p)
        ))
    };
    if let Ok(md) = std::fs::metadata(p) {
        if !md.is_file() {
            return Err(not_a_file(hallpass_proto::paths::kind_of(md.file_type())));
        }
    }
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| match e.raw_os_error() {
            // A FIFO with no reader, or a socket.
            Some(libc::ENXIO) => not_a_file("a FIFO or a socket"),
            _ => cannot(e),
        })?;
    let md = f.metadata().map_err(cannot)?;
    if !md.is_file() {
        return Err(not_a_file(hallpass_proto::paths::kind_of(md.file_type())));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel without seccomp user notification fails the filter install with EINVAL.
    #[test]
    fn an_old_kernel_gets_a_clear_error() {
        let f = child_failure(
            &ChildFailed {
                stage: STAGE_FILTER,
                errno: libc::EINVAL,
            },
            OsStr::new("x"),
        );
        assert_eq!(f.code(), ExitCode::Failed);
        assert_eq!(
            f.to_string(),
            "cannot install the seccomp filter: Invalid argument (os error 22)\n\
             hint: hallpass needs Linux 5.9 or newer with seccomp user notification"
        );
        let f = child_failure(
            &ChildFailed {
                stage: STAGE_FILTER,
                errno: libc::EBUSY,
            },
            OsStr::new("x"),
        );
        assert!(f.to_string().contains("sessions do not nest"));
        let f = child_failure(
            &ChildFailed {
                stage: STAGE_EXEC,
                errno: libc::EACCES,
            },
            OsStr::new("x"),
        );
        assert_eq!(
            (f.code(), f.to_string().as_str()),
            (
                ExitCode::CannotRun,
                "cannot run x: Permission denied (os error 13)"
            )
        );
    }
}
