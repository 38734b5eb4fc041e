//! Opening a session: the policy and the private `$TMPDIR` built from the launcher's
//! `OpenSession`, after checking that the launcher lives in the daemon's world.

use super::*;
use hallpass_proto::pattern::Pattern;

fn canon(p: &str) -> Result<PathBuf, SetupError> {
    let path = Path::new(p);
    if !path.is_absolute() {
        return Err(SetupError::Path {
            path: p.into(),
            source: io::Error::other("not absolute"),
        });
    }
    canonicalize_lenient(path).map_err(|source| SetupError::Path {
        path: p.into(),
        source,
    })
}

/// An `--allow-path`, which must name what it allows: one with a symlink on the way is
/// refused, since a command given it could have made that symlink itself (allowed to write
/// there) and so chosen what the next session with the same flag allows.
fn literal_allow_path(p: &str) -> Result<PathBuf, SetupError> {
    let c = canon(p)?;
    match crate::rules::normalize(p) {
        Some(literal) if literal == c => Ok(c),
        _ => Err(SetupError::Refused(format!(
            "--allow-path {p}: a symlink on the way leads to {}: give that path instead",
            c.display()
        ))),
    }
}

/// A profile's allow pattern: its fixed part (the names before the first with a `*`) must
/// name what it allows, as an `--allow-path` must; the rest is matched on resolved paths.
fn allow_pattern(p: &str) -> Result<Pattern, SetupError> {
    let bad = || SetupError::Path {
        path: p.into(),
        source: io::Error::other("not an absolute pattern without `..`"),
    };
    let pat = Pattern::parse(p).ok_or_else(bad)?;
    let fixed = literal_allow_path(&pat.fixed_part().to_string_lossy())?;
    Pattern::parse(&fixed.join(pat.rest()).to_string_lossy()).ok_or_else(bad)
}

/// A profile's ask entry, as resolved and as written where that differs (as [`both_names`]).
fn ask_pattern(p: &str, asked: &mut Vec<Pattern>) -> Result<(), SetupError> {
    let pat = Pattern::parse(p).ok_or_else(|| SetupError::Path {
        path: p.into(),
        source: io::Error::other("not an absolute pattern without `..`"),
    })?;
    let mut fixed = PathSet::default();
    both_names(&pat.fixed_part().to_string_lossy(), &mut fixed)?;
    for f in fixed.iter() {
        asked.extend(Pattern::parse(&f.join(pat.rest()).to_string_lossy()));
    }
    Ok(())
}

/// Adds `p` to `set` as resolved, and as written where that differs: if `~/.config` is a
/// symlink, its entry must not be replaced either (the daemon reads its rules through it), nor
/// may a symlinked `.git` be swapped for a directory of other hooks under `--deny-path
/// .git/hooks`.
fn both_names(p: &str, set: &mut PathSet) -> Result<(), SetupError> {
    let c = canon(p)?;
    if let Some(literal) = crate::rules::normalize(p) {
        if literal != c {
            set.push(literal);
        }
    }
    set.push(c);
    Ok(())
}

/// Builds a session's policy and private TMPDIR from the launcher's request.
pub fn open(
    id: u64,
    launcher_pid: i32,
    req: &OpenSession,
    protected: &Protected,
) -> Result<Pending, SetupError> {
    let prompt = match PromptMode::try_from(req.prompt) {
        Ok(PromptMode::Allow) => Prompt::Allow,
        Ok(PromptMode::Deny) => Prompt::Deny,
        // Where the question is shown is the launcher's business; here they are all asked.
        Ok(PromptMode::Ask) | Ok(PromptMode::Answer) | Ok(PromptMode::Desktop) => Prompt::Ask,
        _ => {
            return Err(SetupError::Refused(
                "unknown prompt mode (version mismatch between hallpass and hallpassd?)".into(),
            ))
        }
    };
    let strict = req.mode == hallpass_proto::EnforceMode::Strict as i32;
    if strict {
        strict_kernel()?;
    }
    let performs = same_world(launcher_pid, strict)?;
    let home = PathBuf::from(&req.home);
    let mut prot = PathSet::default();
    // hallpass's configuration and units, both as the launcher's $HOME names them and as
    // the daemon's does (they differ if a command was started with another HOME).
    let units = |base: PathBuf| {
        ["hallpassd.service", "hallpassd.socket"]
            .into_iter()
            .flat_map(move |u| [base.join(u), base.join(format!("{u}.d"))])
    };
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let mut list: Vec<PathBuf> = vec![
        home.join(".config/hallpass"),
        hallpass_proto::paths::config_dir(&home),
    ];
    list.extend(units(home.join(".config/systemd/user")));
    if let Some(x) = &xdg {
        list.extend(units(x.join("systemd/user")));
    }
    list.extend(protected.daemon.iter().cloned());
    list.extend(req.protected_paths.iter().map(PathBuf::from));
    for p in list {
        both_names(&p.to_string_lossy(), &mut prot)?;
    }
    let mut denied = PathSet::default();
    for p in &req.deny_paths {
        both_names(p, &mut denied)?;
    }
    let mut allowed = PathSet::default();
    for p in &req.allow_paths {
        allowed.push(literal_allow_path(p)?);
    }
    let allowed_patterns = req
        .allow_patterns
        .iter()
        .map(|p| allow_pattern(p))
        .collect::<Result<_, _>>()?;
    let mut asked = Vec::new();
    for p in &req.ask_patterns {
        ask_pattern(p, &mut asked)?;
    }
    let services = crate::service::allowed(&req.allow_services)?;
    let mut implicit_dirs = PathSet::default();
    let mut implicit_files = Vec::new();
    let mut tmp_base = None;
    if !req.no_implicit {
        implicit_dirs.push(canon(&req.cwd)?);
        let base = if req.tmp_base.is_empty() {
            "/tmp"
        } else {
            &req.tmp_base
        };
        tmp_base = Some(canon(base)?);
        implicit_files.extend(IMPLICIT_DEVICES.iter().map(PathBuf::from));
    }
    if !req.no_implicit || req.allow_tty {
        for t in &req.tty_paths {
            implicit_files.push(canon(t)?);
        }
    }
    let scope = crate::mem::yama_ptrace_scope();
    if scope >= 2 && !nix::unistd::geteuid().is_root() {
        return Err(SetupError::Kernel(format!(
            "Yama ptrace_scope is {scope}: hallpass cannot read the command's syscall arguments; it needs 0 or 1 (sysctl kernel.yama.ptrace_scope=1)"
        )));
    }
    // Made last, once nothing can refuse the session any more; a resumed session keeps its
    // own (if it is one: ours, private, named as we name them, in the base).
    let resumed = !req.resume_tmpdir.is_empty();
    let tmpdir = match (tmp_base, resumed) {
        (Some(base), true) => Some(check_tmpdir(&base, &req.resume_tmpdir)?),
        (Some(base), false) => Some(make_tmpdir(&base, id)?),
        (None, _) => None,
    };
    if let Some(t) = &tmpdir {
        implicit_dirs.push(t.clone());
    }
    let info = Info {
        id,
        // Shown in every question and by `hallpass status`: within bounds.
        argv: crate::bounds::command(&req.argv),
        cwd: req.cwd.clone(),
        launcher_pid,
        pid: AtomicI32::new(0),
        prompt: req.prompt,
        mode: req.mode,
        started: Instant::now(),
        live: AtomicBool::new(true),
        notifications: AtomicU64::new(0),
        allowed: AtomicU64::new(0),
        denied: AtomicU64::new(0),
        passed: AtomicU64::new(0),
        questions: AtomicU64::new(0),
        landlock: AtomicBool::new(false),
        profiles: req.profiles.clone(),
    };
    let policy = Policy {
        protected: prot,
        denied,
        allowed,
        allowed_patterns,
        asked,
        implicit_dirs,
        implicit_files,
        services,
        prompt,
    };
    Ok(Pending {
        info: Arc::new(info),
        policy,
        tmpdir,
        lend: req.force_lend || scope == 1,
        timed_for: match req.timed_secs {
            0 => TIMED_DEFAULT,
            n => Duration::from_secs(n.into()),
        },
        // The paths decided are resolved: so is the home they are told apart by (a scope is
        // never the home or above it, whichever name it was given by).
        home: std::fs::canonicalize(&home).unwrap_or(home),
        resumed,
        strict,
        performs,
        ttys: req.tty_paths.iter().filter_map(|t| canon(t).ok()).collect(),
    })
}

/// The launcher must see the files as the daemon does: paths are decided in the daemon's
/// mount namespace and root. In strict mode it must also have the daemon's credentials,
/// which the daemon writes with (a daemon started before a group change has other groups).
/// Whether it has them (a root daemon checks each process instead): lite mode performs
/// binds and `openat2` only then, never with groups the command lacks.
fn same_world(launcher: i32, strict: bool) -> Result<bool, SetupError> {
    let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let root = |pid: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/{pid}/root"))
            .ok()
            .map(|m| (m.dev(), m.ino()))
    };
    let l = launcher.to_string();
    // A launcher registering again (its daemon died) has made itself undumpable, and its
    // entries cannot be read: it was checked when it first registered.
    let readable = ns(&l).is_some() && root(&l).is_some();
    if readable && (ns(&l) != ns("self") || root(&l) != root("self")) {
        return Err(SetupError::Refused(
            "hallpass runs in another mount namespace or root than hallpassd (a container or sandbox?): start it where the daemon runs, or give it a daemon of its own there (another XDG_RUNTIME_DIR)".into(),
        ));
    }
    if !nix::unistd::geteuid().is_root() {
        let ids = |pid: &str| {
            let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let f = |k: &str| {
                s.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            };
            Some((f("Uid:")?, f("Gid:")?, f("Groups:").unwrap_or_default()))
        };
        if ids(&l).is_none() || ids(&l) != ids("self") {
            if !strict {
                return Ok(false);
            }
            return Err(SetupError::Refused(
                "--mode=strict: hallpass runs with other user or group ids than hallpassd (started before a group change?): restart hallpassd (`systemctl --user restart hallpassd`, or kill it)".into(),
            ));
        }
    }
    Ok(true)
}

/// Strict mode answers opens with the descriptor itself, in one step with the answer
/// (`SECCOMP_ADDFD_FLAG_SEND`, Linux 5.14), and needs a process that cannot give up a syscall
/// the daemon is performing (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, 5.19): one restarted
/// after a signal would be performed twice.
fn strict_kernel() -> Result<(), SetupError> {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    strict_kernel_check(&release)
}

fn strict_kernel_check(release: &str) -> Result<(), SetupError> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    if (it.next().unwrap_or(0), it.next().unwrap_or(0)) >= (5, 19) {
        return Ok(());
    }
    Err(SetupError::Kernel(format!(
        "--mode=strict needs Linux 5.19 or newer (SECCOMP_ADDFD_FLAG_SEND, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV); this kernel is {release}: use --mode=lite or a newer kernel"
    )))
}

/// The TMPDIR a resumed session names, if it is one of ours.
fn check_tmpdir(base: &Path, dir: &str) -> Result<PathBuf, SetupError> {
    use std::os::unix::fs::MetadataExt;
    let bad = || SetupError::Resume(dir.into());
    let p = canon(dir).map_err(|_| bad())?;
    let md = std::fs::symlink_metadata(&p).map_err(|_| bad())?;
    // Named as `make_tmpdir` names them: hallpass-PID-ID-HEX.
    let named = |n: &str| {
        let parts: Vec<&str> = n.split('-').collect();
        parts.len() == 4
            && parts[0] == "hallpass"
            && parts[1..3]
                .iter()
                .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
            && parts[3].len() == 8
            && parts[3].bytes().all(|b| b.is_ascii_hexdigit())
    };
    let ours = p.parent() == Some(base)
        && p.file_name().and_then(|n| n.to_str()).is_some_and(named)
        && md.is_dir()
        && md.uid() == nix::unistd::geteuid().as_raw()
        && md.mode() & 0o077 == 0;
    if ours {
        Ok(p)
    } else {
        Err(bad())
    }
}

fn make_tmpdir(base: &Path, id: u64) -> Result<PathBuf, SetupError> {
    let mut last = None;
    for attempt in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let p = base.join(format!(
            "hallpass-{}-{id}-{:08x}",
            std::process::id(),
            nanos ^ attempt.wrapping_mul(0x9e37_79b9)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(SetupError::Tmpdir {
                    dir: base.into(),
                    source: e,
                })
            }
        }
    }
    Err(SetupError::Tmpdir {
        dir: base.into(),
        source: last.unwrap(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_mode_needs_linux_5_19() {
        for ok in ["5.19.0", "6.1.0-28-amd64", "6.18.44-fc-v669", "10.0"] {
            assert!(strict_kernel_check(ok).is_ok(), "{ok}");
        }
        for old in [
            "5.18.19",
            "5.15.0-91-generic",
            "5.4.0-150-generic",
            "4.19.0",
            "",
        ] {
            let e = strict_kernel_check(old).unwrap_err().to_string();
            assert!(e.contains("Linux 5.19") && e.contains(old), "{e}");
        }
    }
}
