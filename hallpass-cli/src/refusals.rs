//! The writes refused with no one deciding them (unattended under `--prompt=deny`, left
//! unanswered, hallpass's own files, what could not be resolved, a service), said in one
//! line on stderr when the session ends, so a denial is never only the command's own
//! "Permission denied". The daemons of the session count them, with the first few paths, in
//! the session journal's tail (`hallpass_proto::journal_tail::refusals`), which the launcher
//! keeps across daemon restarts; the daemon that ends the session marks it ended once its
//! last open question is counted, and the launcher waits for that (a moment) before it
//! reads. A person's own `denied` answer, a lasting `never` rule and `--deny-path` are not
//! counted: those were decided. A leaf.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

use hallpass_proto::journal_tail::refusals as r;
use hallpass_proto::shown::shown;

/// How long the launcher waits for the daemon to end the session: it takes a few
/// milliseconds; a daemon that is gone or stuck must not hold the launcher long.
const WAIT_FOR_END: Duration = Duration::from_secs(2);

/// What the journal's tail says of the session's refusals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
    pub ended: bool,
    pub count: u64,
    /// Per reason of [`r::REASONS`].
    pub by_reason: [u64; r::REASONS.len()],
    /// The first paths refused, as kept (cut at [`r::PATH_BYTES`]), and whether cut.
    pub paths: Vec<(Vec<u8>, bool)>,
    /// Refusals of paths not kept.
    pub others: u64,
}

/// Reads the refusals from the block's bytes.
fn parse(block: &[u8]) -> Refusals {
    let word = |at: usize| {
        let i = at - r::AT;
        block
            .get(i..i + 8)
            .map_or(0, |b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
    };
    let mut by_reason = [0; r::REASONS.len()];
    for (k, n) in by_reason.iter_mut().enumerate() {
        *n = word(r::BY_REASON + 8 * k);
    }
    let paths = (0..r::PATHS)
        .filter_map(|i| {
            let len = word(r::path(i)) as usize;
            let start = r::path(i) + 8 - r::AT;
            let kept = block.get(start..start + len.min(r::PATH_BYTES))?;
            (len > 0).then(|| (kept.to_vec(), len > r::PATH_BYTES))
        })
        .collect();
    Refusals {
        ended: word(r::ENDED) != 0,
        count: word(r::COUNT),
        by_reason,
        paths,
        others: word(r::OTHERS),
    }
}

fn read(journal: &OwnedFd) -> Refusals {
    let mut block = vec![0u8; r::SIZE];
    match nix::sys::uio::pread(journal, &mut block, r::AT as i64) {
        Ok(n) if n == r::SIZE => parse(&block),
        _ => Refusals::default(),
    }
}

/// The refusals once the daemon has ended the session (or [`WAIT_FOR_END`] has passed).
pub fn at_end(journal: &OwnedFd) -> Refusals {
    let deadline = Instant::now() + WAIT_FOR_END;
    loop {
        let now = read(journal);
        if now.ended || Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How many characters of a path the line shows.
const SHOWN_CHARS: usize = 80;

/// A refused path as the line shows it: `~` for the home, escaped, cut to a length.
fn path_shown(p: &[u8], cut: bool, homes: &[&Path]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(p));
    let mut s = match homes.iter().find_map(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", shown(rest)),
        None => shown(path).to_string(),
    };
    if cut || s.chars().count() > SHOWN_CHARS {
        s = s.chars().take(SHOWN_CHARS - 3).collect::<String>() + "...";
    }
    s
}

/// The line that ends a session with refusals; `None` when nothing was refused. `log` is
/// the `--log` file, if any; `homes` the home directory as named and as resolved.
pub fn line(x: &Refusals, homes: &[&Path], log: Option<&Path>) -> Option<String> {
    if x.count == 0 {
        return None;
    }
    let writes = if x.count == 1 {
        "1 write was".to_string()
    } else {
        format!("{} writes were", x.count)
    };
    let why: Vec<String> = r::REASONS
        .iter()
        .zip(x.by_reason)
        .filter(|(_, n)| *n > 0)
        .map(|(w, n)| format!("{n} {w}"))
        .collect();
    let mut paths: Vec<String> = x
        .paths
        .iter()
        .map(|(p, cut)| path_shown(p, *cut, homes))
        .collect();
    if x.others > 0 {
        paths.push("...".into());
    }
    let see = match log {
        Some(l) => format!("see them all: hallpass report {}", shown(l)),
        None => "to see them all, run with --log=FILE, then hallpass report FILE".into(),
    };
    Some(format!(
        "hallpass: {writes} refused ({}): {}; {see}",
        why.join(", "),
        paths.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(words: &[(usize, u64)], paths: &[&[u8]]) -> Vec<u8> {
        let mut b = vec![0u8; r::SIZE];
        let mut put = |at: usize, v: u64| {
            b[at - r::AT..at - r::AT + 8].copy_from_slice(&v.to_ne_bytes());
        };
        for &(at, v) in words {
            put(at, v);
        }
        for (i, p) in paths.iter().enumerate() {
            put(r::path(i), p.len() as u64);
        }
        for (i, p) in paths.iter().enumerate() {
            let at = r::path(i) + 8 - r::AT;
            let n = p.len().min(r::PATH_BYTES);
            b[at..at + n].copy_from_slice(&p[..n]);
        }
        b
    }

    #[test]
    fn nothing_refused_says_nothing() {
        let x = parse(&block_of(&[(r::ENDED, 1)], &[]));
        assert!(x.ended);
        assert_eq!(line(&x, &[Path::new("/h")], None), None);
    }

    #[test]
    fn the_last_word_names_the_first_paths_and_where_to_see_the_rest() {
        let x = parse(&block_of(
            &[
                (r::COUNT, 1),
                (r::BY_REASON, 1), // unattended
            ],
            &[b"/home/me/x"],
        ));
        let homes = [Path::new("/home/me")];
        assert_eq!(
            line(&x, &homes, None).unwrap(),
            "hallpass: 1 write was refused (1 unattended): ~/x; to see them all, run with \
             --log=FILE, then hallpass report FILE"
        );
        let long = [b'y'; 300];
        let mut cut = b"/home/me/.npm/".to_vec();
        cut.extend_from_slice(&long);
        let x = parse(&block_of(
            &[
                (r::COUNT, 6),
                (r::OTHERS, 2),
                (r::BY_REASON, 4),
                (r::BY_REASON + 16, 2), // protected
            ],
            &[b"/etc/x\x1b[2J", b"/home/me", &cut],
        ));
        let got = line(&x, &homes, Some(Path::new("/p/w.jsonl"))).unwrap();
        let cut_shown = format!("~/.npm/{}...", "y".repeat(SHOWN_CHARS - 3 - 7));
        assert_eq!(
            got,
            format!(
                "hallpass: 6 writes were refused (4 unattended, 2 protected): /etc/x\\e[2J, ~, \
                 {cut_shown}, ...; see them all: hallpass report /p/w.jsonl"
            )
        );
    }
}
