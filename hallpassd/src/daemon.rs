//! The daemon process: its lock and sockets (bound, or passed by a service manager), the
//! threads that serve launchers on the control socket, the API server, and the signals and
//! idle time that end it. `main.rs` only parses the flags.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hallpass_proto::paths;

use crate::ask::Questions;
use crate::dlog::say;
use crate::rules;
use crate::server::{self, State};

/// What `hallpassd`'s flags say.
pub struct Config {
    /// Directory for the sockets; `None`: where the service manager put them, else
    /// `$XDG_RUNTIME_DIR/hallpass`.
    pub runtime_dir: Option<PathBuf>,
    /// Exit after this many seconds without a session (0: never).
    pub idle_exit: u64,
}

/// The API server drops a connection that speaks garbage (not HTTP/2, a truncated frame) and
/// reports it only as a tracing event: into our log with it, one line each.
fn log_dropped_connections() {
    use tracing_subscriber::prelude::*;
    let only = tracing_subscriber::filter::filter_fn(|m| {
        m.target().starts_with("tonic::transport::server") && *m.level() <= tracing::Level::DEBUG
    });
    let _ = tracing_subscriber::registry()
        .with(DroppedConnections.with_filter(only))
        .try_init();
}

/// Writes the API server's reports of connections it dropped to the daemon's log.
struct DroppedConnections;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for DroppedConnections {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                if f.name() == "message" {
                    self.0 = format!("{v:?}");
                }
            }
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        say!("hallpassd: api: {}", m.0);
    }
}

/// Takes the daemon's lock in `dir`, held until the process exits.
fn lock(dir: &Path) -> anyhow::Result<nix::fcntl::Flock<std::fs::File>> {
    let path = dir.join("hallpassd.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // A daemon that was just killed lets go within moments: wait that long.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    let mut f = f;
    loop {
        match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(l) => return Ok(l),
            Err((back, e)) if std::time::Instant::now() >= deadline => {
                drop(back);
                let pid = std::fs::read_to_string(dir.join(paths::PID_FILE)).unwrap_or_default();
                anyhow::bail!(
                    "another hallpassd runs for {} (pid {}): {e}",
                    dir.display(),
                    pid.trim()
                );
            }
            Err((back, _)) => {
                f = back;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Binds the sockets ourselves (started by `hallpass`, or by hand).
fn bind(control_path: &Path, api_path: &Path) -> anyhow::Result<(UnixListener, UnixListener)> {
    if std::os::unix::net::UnixStream::connect(control_path).is_ok() {
        anyhow::bail!(
            "another hallpassd already listens on {}",
            control_path.display()
        );
    }
    let _ = std::fs::remove_file(control_path);
    let _ = std::fs::remove_file(api_path);
    // The API first: a client that finds the control socket (what `hallpass rules` waits for
    // after starting a daemon) must find the API socket too.
    let api = UnixListener::bind(api_path)
        .with_context(|| format!("cannot listen on {}", api_path.display()))?;
    let control = UnixListener::bind(control_path)
        .with_context(|| format!("cannot listen on {}", control_path.display()))?;
    for p in [control_path, api_path] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok((control, api))
}

/// Picks the control and API sockets out of those the service manager passed, by path.
fn take_activated(
    activated: Vec<(PathBuf, UnixListener)>,
    control_path: &Path,
    api_path: &Path,
) -> anyhow::Result<(UnixListener, UnixListener)> {
    let (mut control, mut api) = (None, None);
    for (path, l) in activated {
        if path == control_path {
            control = Some(l);
        } else if path == api_path {
            api = Some(l);
        } else {
            anyhow::bail!(
                "the service manager passed a socket on {}; expected {} and {} (check ListenStream= in hallpassd.socket)",
                path.display(),
                control_path.display(),
                api_path.display()
            );
        }
    }
    match (control, api) {
        (Some(c), Some(a)) => Ok((c, a)),
        _ => anyhow::bail!(
            "socket activation must pass both {} and {} (check ListenStream= in hallpassd.socket)",
            control_path.display(),
            api_path.display()
        ),
    }
}

/// Runs the daemon until a signal or its idle time ends it; exits the process.
pub fn main(args: Config) -> ! {
    // A signal mask survives exec: a daemon started by a launcher that blocks signals for
    // itself would otherwise never see SIGTERM.
    let _ = nix::sys::signal::SigSet::empty().thread_set_mask();
    crate::dlog::start();
    log_dropped_connections();
    // The daemon holds every session's listener: no process of the same user (a supervised
    // one included) may open its descriptors or memory through /proc or ptrace.
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        say!("hallpassd: cannot make itself not dumpable: {e}");
        exit(1);
    }
    // Every session's copies of its processes' descriptors share this one table: as large as
    // the hard limit allows (systemd's and most shells' soft limit is 1,024).
    crate::sys::fsops::raise_open_files();
    // Before the runtime starts its threads: this edits the environment.
    let activated = match crate::sys::activation::listeners() {
        Ok(l) => l,
        Err(e) => {
            say!("hallpassd: the sockets passed by the service manager: {e}");
            exit(1);
        }
    };
    match run(args, activated) {
        Ok(()) => exit(0),
        Err(e) => {
            say!("hallpassd: {e:#}");
            exit(1);
        }
    }
}

/// Exits once the log has what was said (a launcher that started us reads its last line).
fn exit(code: i32) -> ! {
    crate::dlog::flush(Duration::from_secs(2));
    std::process::exit(code)
}

#[tokio::main]
async fn run(args: Config, activated: Vec<(PathBuf, UnixListener)>) -> anyhow::Result<()> {
    // Socket-activated, the runtime directory is where the service manager put the sockets.
    let passed_dir = activated
        .iter()
        .find(|(p, _)| p.file_name() == Some(std::ffi::OsStr::new(paths::CONTROL_SOCKET)))
        .and_then(|(p, _)| p.parent().map(Path::to_path_buf));
    let dir = args
        .runtime_dir
        .or(passed_dir)
        .unwrap_or_else(paths::runtime_dir);
    paths::ensure_private_dir(&dir)
        .with_context(|| format!("runtime directory {}", dir.display()))?;
    // One daemon per runtime directory, for its whole life: a second one (started by hand, or
    // racing a service manager) stops here instead of taking the sockets from the first.
    let _only_one = lock(&dir)?;
    let (control_path, api_path) = server::socket_paths(&dir);
    let socket_activated = !activated.is_empty();
    let (control, api) = if socket_activated {
        take_activated(activated, &control_path, &api_path)?
    } else {
        bind(&control_path, &api_path)?
    };
    // The control socket is served by blocking threads, the API by the async runtime; a
    // service manager may pass either way.
    control.set_nonblocking(false)?;
    api.set_nonblocking(true)?;
    let api = tokio::net::UnixListener::from_std(api)?;
    // Its stderr, when a launcher started it: bounded from now on.
    crate::dlog::rotate_at(dir.join(paths::DAEMON_LOG));
    let pid_file = dir.join(paths::PID_FILE);
    // Not needed to serve (the lock and the sockets are): a full file system must not stop
    // the daemon here.
    if let Err(e) = std::fs::write(&pid_file, format!("{}\n", std::process::id())) {
        say!("hallpassd: cannot write {}: {e}", pid_file.display());
    }
    say!(
        "hallpassd: pid {} listening in {}",
        std::process::id(),
        dir.display()
    );

    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/".into());
    let rules = Arc::new(rules::Store::open(
        paths::config_dir(&home).join(paths::RULES_FILE),
    ));
    // Edits by hand take effect within this long.
    rules.watch(Duration::from_millis(500));
    let questions = Arc::new(Questions::new(rules));
    // Questions whose process was killed disappear within this long.
    questions.sweep_every(Duration::from_millis(500));
    let state = Arc::new(State::new(&dir, questions));
    let st = state.clone();
    std::thread::spawn(move || {
        for conn in control.incoming() {
            match conn {
                Ok(sock) => {
                    let st = st.clone();
                    std::thread::spawn(move || server::serve_launcher(st, sock));
                }
                Err(e) => {
                    // Out of descriptors, say: wait rather than spin.
                    say!("hallpassd: accept: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    });
    let api_task = tokio::spawn(crate::api::serve(state.clone(), api));

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let idle = Duration::from_secs(args.idle_exit);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let why = loop {
        tokio::select! {
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
            _ = tick.tick() => {
                if args.idle_exit > 0 && state.idle_for().is_some_and(|d| d >= idle) {
                    break "idle";
                }
                if api_task.is_finished() {
                    break "the API server stopped";
                }
            }
        }
    };
    say!("hallpassd: exiting ({why})");
    // Sessions still running lose their supervisor: their writes now fail (ENOSYS). The
    // sockets of a socket-activated daemon are the service manager's: they stay.
    if !socket_activated {
        for p in [&control_path, &api_path] {
            let _ = std::fs::remove_file(p);
        }
    }
    let _ = std::fs::remove_file(&pid_file);
    exit(0);
}
