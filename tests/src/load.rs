//! Loads on the daemon, for the tests that one session's load harms no other: a small tmpfs
//! to fill, a session that floods the daemon with what it must refuse, a session that times
//! how fast its writes are answered meanwhile, and the daemon's memory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{run, stderr, Scratch, Who};

/// A small tmpfs mounted for one test (root only), owned by the variant's user, mode 0700;
/// unmounted on drop.
pub struct Tiny {
    pub dir: PathBuf,
}

impl Tiny {
    /// A tmpfs of `size` (`64k`) on `dir`; `None` (and says why) where mounting is not
    /// permitted.
    pub fn mount(s: &Scratch, dir: &Path, size: &str) -> Option<Tiny> {
        std::fs::create_dir_all(dir).unwrap();
        let (uid, gid) = match s.variant.who {
            Who::Me => (0, 0),
            Who::Unprivileged { uid, gid } => (uid, gid),
        };
        let out = run(Command::new("mount").args([
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size},mode=0700,uid={uid},gid={gid}"),
            "tmpfs",
            &dir.to_string_lossy(),
        ]));
        if !out.status.success() {
            eprintln!(
                "SKIP a full file system: cannot mount a tmpfs here: {}",
                stderr(&out).trim()
            );
            return None;
        }
        Some(Tiny {
            dir: dir.to_path_buf(),
        })
    }

    /// Fills it up (as root): a file `fill` that grows until the file system is full, then
    /// `also` (a file there that is written to) with lines of filler until its last page is
    /// full too.
    pub fn fill(&self, also: &Path) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.join("fill")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let mut f = std::fs::OpenOptions::new().append(true).open(also).unwrap();
        while f.write_all(b"filler\n").is_ok() {}
    }

    /// Makes room again.
    pub fn unfill(&self) {
        std::fs::remove_file(self.dir.join("fill")).unwrap();
    }
}

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// A Python program that floods the daemon with what it refuses, each of which it used to
/// write a line about: `flood.py DIR SECS OUTSIDE` connects to the daemon's sockets in DIR
/// (refused: the process is supervised), and once 256 questions of its own wait (a thread
/// each, writing in OUTSIDE), writes outside in a loop (denied: too many questions wait).
/// Makes `started` in its cwd once the flood runs; prints the rounds made.
pub const FLOOD: &str = r#"
import os, socket, sys, threading, time
d, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
def ask(i):
    try:
        os.close(os.open(f"{out}/q{i}", os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        pass
for i in range(260):
    threading.Thread(target=ask, args=(i,), daemon=True).start()
open("started", "w").close()
end = time.time() + secs
n = 0
while time.time() < end:
    for name in ("api.sock", "control.sock"):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(os.path.join(d, name))
            s.recv(1)
        except OSError:
            pass
        s.close()
    try:
        os.close(os.open(f"{out}/loop", os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        pass
    n += 1
print(n, flush=True)
os._exit(0)
"#;

/// A Python program that times its writes: `latency.py OUTSIDE N` makes N writes outside,
/// 10 ms apart, and prints the median, the 99th percentile and the longest, in
/// milliseconds, and the errno of the last (0 if it was allowed).
pub const LATENCY: &str = r#"
import os, sys, time
out, n = sys.argv[1], int(sys.argv[2])
lat, err = [], 0
for i in range(n):
    t = time.perf_counter()
    try:
        os.close(os.open(f"{out}/b{i}", os.O_WRONLY | os.O_CREAT, 0o644))
        err = 0
    except OSError as e:
        err = e.errno
    lat.append((time.perf_counter() - t) * 1000)
    time.sleep(0.01)
lat.sort()
print(f"{lat[len(lat) // 2]:.3f} {lat[len(lat) * 99 // 100]:.3f} {lat[-1]:.3f} {err}")
"#;

/// What [`LATENCY`] printed.
#[derive(Debug)]
pub struct Latency {
    pub median_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub errno: i32,
}

impl Latency {
    pub fn parse(out: &str) -> Latency {
        let v: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(v.len(), 4, "latency.py printed {out:?}");
        Latency {
            median_ms: v[0].parse().unwrap(),
            p99_ms: v[1].parse().unwrap(),
            max_ms: v[2].parse().unwrap(),
            errno: v[3].parse().unwrap(),
        }
    }
}

impl Scratch {
    /// Writes `text` to `name` in the scratch root, readable by the variant's user; its path.
    pub fn script(&self, name: &str, text: &str) -> PathBuf {
        let p = self.root.join(name);
        std::fs::write(&p, text).unwrap();
        self.chown(&p);
        p
    }

    /// The daemon's resident memory now and at its peak, in KiB (`VmRSS`, `VmHWM`).
    pub fn daemon_memory(&self) -> (u64, u64) {
        let pid = self.daemon_pid();
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let field = |name: &str| {
            st.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

/// Waits (`limit` at most) for `path` to exist.
pub fn wait_for_file(path: &Path, limit: Duration) -> bool {
    crate::wait_until(limit, || path.exists())
}
