//! The end-to-end test kit: a scratch project, home and runtime directory per test, a builder
//! for the `hallpass` command (as the current user or as an unprivileged one, with or without
//! the Yama lending path forced), and waiting with a deadline instead of fixed sleeps.
#![forbid(unsafe_code)]

pub mod hostile;
pub mod load;
pub mod service;
pub mod sys;

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The unprivileged user the tests run as when they run as root (`.ci/run` creates it).
pub const TEST_USER: &str = "hptest";

/// Who runs hallpass in a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The user running the tests (root in CI).
    Me,
    /// [`TEST_USER`], through setpriv.
    Unprivileged { uid: u32, gid: u32 },
}

/// One way to run a session: who, and whether memory reads go through the launcher.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub who: Who,
    /// `HALLPASS_FORCE_LEND=1`: the Yama path.
    pub lend: bool,
}

/// The uid and gid of `user`, if it exists.
pub fn uid_gid_of(user: &str) -> Option<(u32, u32)> {
    let out = Command::new("id").arg("-u").arg(user).output().ok()?;
    let gid = Command::new("id").arg("-g").arg(user).output().ok()?;
    if !out.status.success() || !gid.status.success() {
        return None;
    }
    let n = |o: &Output| String::from_utf8_lossy(&o.stdout).trim().parse().ok();
    Some((n(&out)?, n(&gid)?))
}

/// Whether the tests run as root.
pub fn am_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Every variant the tests should cover here: the current user and, when we are root and
/// [`TEST_USER`] exists, an unprivileged one; each with and without lending. A missing
/// variant is announced, never silently skipped.
pub fn variants() -> Vec<Variant> {
    let mut whos = vec![Who::Me];
    if am_root() {
        match uid_gid_of(TEST_USER) {
            Some((uid, gid)) => whos.push(Who::Unprivileged { uid, gid }),
            None => eprintln!("SKIP unprivileged variant: user {TEST_USER} does not exist (useradd -M -s /bin/sh {TEST_USER})"),
        }
    }
    whos.into_iter()
        .flat_map(|who| [Variant { who, lend: false }, Variant { who, lend: true }])
        .collect()
}

/// The built binaries, copied to a directory every user can read, so the unprivileged user
/// needs no access to the build tree. One copy per build, shared by the test processes (a
/// copy per process filled /tmp); copies of other builds an hour old are removed.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        const NAMES: [&str; 6] = [
            "hallpass",
            "hallpassd",
            "hp-write",
            "hp-conform",
            "hp-race",
            "hp-notifyd",
        ];
        let exe = std::env::current_exe().unwrap();
        // target/debug/deps/<test> -> target/debug
        let build = exe.parent().unwrap().parent().unwrap().to_path_buf();
        // The build is known by where it is and when each binary was made.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        build.hash(&mut h);
        for name in NAMES {
            let src = build.join(name);
            let md = std::fs::metadata(&src).unwrap_or_else(|_| {
                panic!(
                    "{} is missing: run `cargo build --workspace` first",
                    src.display()
                )
            });
            (md.len(), md.modified().ok()).hash(&mut h);
        }
        let tmp = std::env::temp_dir();
        let dir = tmp.join(format!("hallpass-test-bin-{:016x}", h.finish()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        for name in NAMES {
            let dest = dir.join(name);
            if dest.exists() {
                continue;
            }
            // Beside, then renamed into place: another test process may be copying too.
            let part = dir.join(format!(".{name}.{}", std::process::id()));
            std::fs::copy(build.join(name), &part).unwrap();
            std::fs::rename(&part, &dest).unwrap();
        }
        let old = |p: &Path| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .map(|t| t.elapsed().unwrap_or_default() > Duration::from_secs(3600))
                .unwrap_or(false)
        };
        for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let p = e.path();
            let ours = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("hallpass-test-bin-") && p != dir);
            if ours && old(&p) {
                let _ = std::fs::remove_dir_all(&p);
            }
        }
        dir
    })
}

/// The path of a test binary (`hallpass`, `hallpassd`, `hp-write`, `hp-conform`, `hp-race`,
/// `hp-notifyd`).
pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(name)
}

/// A scratch world for one test: `home/`, `project/` (the cwd), `run/` (XDG_RUNTIME_DIR),
/// `outside/`, owned by the variant's user. Stops its daemon and removes itself on drop.
pub struct Scratch {
    pub root: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    pub runtime: PathBuf,
    pub outside: PathBuf,
    pub variant: Variant,
}

impl Scratch {
    pub fn new(name: &str, variant: Variant) -> Scratch {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let root = PathBuf::from("/tmp").join(format!("hp-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let s = Scratch {
            home: root.join("home"),
            project: root.join("project"),
            runtime: root.join("run"),
            outside: root.join("outside"),
            root,
            variant,
        };
        for d in [&s.root, &s.home, &s.project, &s.runtime, &s.outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::set_permissions(&s.runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        s.chown(&s.root);
        bin_dir();
        s
    }

    /// Gives `path` (recursively) to the variant's user.
    pub fn chown(&self, path: &Path) {
        if let Who::Unprivileged { uid, gid } = self.variant.who {
            let st = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(path)
                .status()
                .unwrap();
            assert!(st.success());
        }
    }

    /// A command run as the variant's user with this scratch's environment, in the project.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        self.env().command(program)
    }

    /// What [`Scratch::command`] needs, apart from the scratch directory itself.
    pub fn env(&self) -> Env {
        Env {
            variant: self.variant,
            home: self.home.clone(),
            runtime: self.runtime.clone(),
            project: self.project.clone(),
        }
    }
}

/// Who runs a command, with which home, runtime directory and working directory.
#[derive(Clone, Debug)]
pub struct Env {
    pub variant: Variant,
    pub home: PathBuf,
    pub runtime: PathBuf,
    pub project: PathBuf,
}

impl Env {
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = match self.variant.who {
            Who::Me => Command::new(program),
            Who::Unprivileged { uid, gid } => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg("--");
                c.arg(program);
                c
            }
        };
        cmd.env_clear()
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()),
            )
            .env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .current_dir(&self.project)
            .stdin(Stdio::null());
        if self.variant.lend {
            cmd.env("HALLPASS_FORCE_LEND", "1");
        }
        cmd
    }
}

impl Scratch {
    /// `hallpass ARGS...` in the project.
    pub fn hallpass<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = self.command(bin("hallpass"));
        c.args(args);
        c
    }

    /// Runs `hp-write setup DIR` as the variant's user, outside any session.
    pub fn fixtures(&self, dir: &Path) {
        let out = run(self.command(bin("hp-write")).arg("setup").arg(dir));
        assert!(out.status.success(), "setup failed: {}", stderr(&out));
    }

    /// The parsed lines of a JSON Lines log.
    pub fn log_lines(&self, path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad log line {l:?}: {e}")))
            .collect()
    }

    /// `hallpass --prompt=PROMPT --log=LOG -- sh -c SCRIPT`, to start with [`background`].
    pub fn session_command(&self, prompt: &str, log: &Path, script: &str) -> Command {
        self.hallpass([
            &format!("--prompt={prompt}"),
            &format!("--log={}", log.display()),
            "--",
            "sh",
            "-c",
            script,
        ])
    }

    /// The pending questions (`hallpass answer --json EXTRA...`), or why they could not be
    /// listed (no daemon yet, say).
    pub fn try_pending(&self, extra: &[&str]) -> Result<Vec<serde_json::Value>, String> {
        let out = run(self.hallpass(["answer", "--json"]).args(extra));
        if !out.status.success() {
            return Err(stderr(&out));
        }
        Ok(serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone())
    }

    /// Waits (30 s at most) until `n` questions are pending; returns them.
    pub fn wait_pending(&self, n: usize, extra: &[&str]) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // The session's launcher starts the daemon: it may not answer yet.
            let p = self.try_pending(extra).unwrap_or_default();
            if p.len() == n {
                return p;
            }
            assert!(
                Instant::now() < deadline,
                "{} questions pending, not {n}: {p:?}",
                p.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pid of the scratch's daemon, from its pid file.
    pub fn daemon_pid(&self) -> String {
        std::fs::read_to_string(self.runtime.join("hallpass/hallpassd.pid"))
            .expect("no daemon pid file")
            .trim()
            .to_string()
    }

    /// Kills the scratch's daemon with SIGKILL (a crash); returns its pid.
    pub fn kill_daemon(&self) -> String {
        let pid = self.daemon_pid();
        let _ = Command::new("kill").arg("-9").arg(&pid).status();
        // Gone, not just signalled: a launcher started next must not reach the dying one. Its
        // leader shows as a zombie while other threads still hold its sockets: wait for those.
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let gone = wait_until(Duration::from_secs(10), || {
            let zombie =
                std::fs::read_to_string(proc.join("stat")).map_or(true, |s| s.contains(") Z "));
            let threads = std::fs::read_dir(proc.join("task")).map_or(0, |d| d.count());
            zombie && threads <= 1
        });
        assert!(gone, "daemon {pid} survived SIGKILL");
        pid
    }

    /// Waits (30 s at most) for the one pending question to be `first` asked again, by a new
    /// daemon (another id); returns it.
    pub fn wait_asked_again(&self, first: &serde_json::Value) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let p = self.try_pending(&[]).unwrap_or_default();
            if p.len() == 1 && p[0]["id"] != first["id"] {
                return p[0].clone();
            }
            assert!(Instant::now() < deadline, "not asked again: {p:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `hallpass status --json`, parsed.
    pub fn status(&self) -> serde_json::Value {
        let out = run(self.hallpass(["status", "--json"]));
        assert!(out.status.success(), "status failed: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let pid_file = self.runtime.join("hallpass/hallpassd.pid");
        if let Ok(pid) = std::fs::read_to_string(pid_file) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
        // And any other daemon of this scratch (one a launcher started while another was
        // dying, say): they are told apart by their runtime directory.
        let _ = Command::new("pkill")
            .arg("-f")
            .arg(format!(
                "hallpassd --runtime-dir {}/",
                self.runtime.display()
            ))
            .status();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// Runs `cmd` to completion with a deadline of 120 s; panics (after killing it) past that.
pub fn run(mut cmd: impl std::borrow::BorrowMut<Command>) -> Output {
    run_with_deadline(cmd.borrow_mut(), Duration::from_secs(120))
}

pub fn run_with_deadline(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

/// Starts `cmd` with its output piped, for [`finish`].
pub fn background(mut cmd: Command) -> std::process::Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"))
}

/// Waits for a child started in the background (its output piped), with a deadline of 60 s;
/// kills it and panics past that.
pub fn finish(c: std::process::Child) -> Output {
    let pid = c.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(c.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("the process did not finish within 60 s");
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Polls `cond` every 20 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// The lines `OP RESULT` of `hp-write run` as pairs.
pub fn results(out: &Output) -> Vec<(String, String)> {
    stdout(out)
        .lines()
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
        })
        .collect()
}

/// `(operation, syscall)` for every operation hp-write knows.
pub fn operations() -> Vec<(String, String)> {
    let out = run({
        let mut c = Command::new(bin("hp-write"));
        c.arg("ops");
        c
    });
    results(&out)
}

/// `EACCES` as hp-write prints it.
pub const EACCES: &str = "err 13";

/// A real terminal: a tmux server of its own (socket in the scratch directory), run as the
/// variant's user, with one window of `cols` x `rows` running a plain shell in the project.
/// Killed on drop.
pub struct Tmux {
    sock: PathBuf,
    env: Env,
}

impl Scratch {
    pub fn tmux(&self, cols: u16, rows: u16) -> Tmux {
        let t = Tmux {
            sock: self.root.join("tmux.sock"),
            env: self.env(),
        };
        let shell = "env PS1='$ ' TERM=xterm-256color bash --norc --noprofile";
        let out = run(t.cmd("new-session").args([
            "-d",
            "-s",
            "T",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            shell,
        ]));
        assert!(out.status.success(), "tmux: {}", stderr(&out));
        t.wait_for("the shell prompt", |s| s.contains('$'));
        t
    }
}

impl Tmux {
    fn cmd(&self, sub: &str) -> Command {
        let mut c = self.env.command("tmux");
        c.arg("-S").arg(&self.sock).arg(sub);
        c
    }

    /// Types `text` literally, then Enter.
    pub fn line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    /// `tmux send-keys` with these arguments (key names like `C-]`, `Enter`, or `-l TEXT`).
    pub fn keys(&self, keys: &[&str]) {
        let out = run(self.cmd("send-keys").arg("-t").arg("T").args(keys));
        assert!(out.status.success(), "send-keys: {}", stderr(&out));
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        stdout(&run(self.cmd("capture-pane").args(["-p", "-t", "T"])))
    }

    /// The screen with colours and attributes as escape codes.
    pub fn screen_styled(&self) -> String {
        stdout(&run(self.cmd("capture-pane").args(["-p", "-e", "-t", "T"])))
    }

    /// `tmux display -p FORMAT` for the pane, to read its state (`#{alternate_on}`, say).
    pub fn cmd_display(&self, format: &str) -> Command {
        let mut c = self.cmd("display");
        c.args(["-p", "-t", "T", format]);
        c
    }

    /// Any other tmux command on this server (`set -g set-clipboard on`, `show-buffer`).
    pub fn run(&self, args: &[&str]) -> Output {
        let mut c = self.env.command("tmux");
        c.arg("-S").arg(&self.sock).args(args);
        run(c)
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        let out = run(self.cmd("resize-window").args([
            "-t",
            "T",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]));
        assert!(out.status.success(), "resize-window: {}", stderr(&out));
    }

    /// Polls the screen until `pred` holds; panics with the screen after 30 s.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd("kill-server").output();
        let _ = std::fs::remove_file(&self.sock);
    }
}

/// How a test program runs: natively, or under hallpass in lite or strict mode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Native,
    Lite,
    Strict,
}

impl Scratch {
    /// `hp-race ARGS`: natively (after `native_prefix`, such as `landlocked`), or under
    /// `hallpass --prompt=PROMPT` in `mode`.
    pub fn hp_race(
        &self,
        mode: Mode,
        prompt: &str,
        native_prefix: &[&str],
        args: &[String],
    ) -> std::process::Output {
        let flag = match mode {
            Mode::Native => {
                return run(self.command(bin("hp-race")).args(native_prefix).args(args));
            }
            Mode::Lite => "--mode=lite",
            Mode::Strict => "--mode=strict",
        };
        run(self
            .hallpass([&format!("--prompt={prompt}"), flag, "--"])
            .arg(bin("hp-race"))
            .args(args))
    }
}

/// Lite mode in every variant but the lending ones, and strict mode once (the first variant):
/// the runs of a test about the session's reach rather than about either mode.
pub fn lite_everywhere_and_strict_once() -> Vec<(Variant, &'static str)> {
    let mut runs: Vec<(Variant, &str)> = variants()
        .into_iter()
        .filter(|v| !v.lend)
        .map(|v| (v, "--mode=lite"))
        .collect();
    runs.push((variants()[0], "--mode=strict"));
    runs
}
