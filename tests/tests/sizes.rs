//! Sizes the command controls have bounds (issue 24, item 5): a question is 64 KiB at most
//! whatever command lines its processes carry, `hallpass answer --json` pages the pending
//! list, and a `Watch` client that does not read is dropped (it follows again) rather than
//! buffered. Meanwhile another session's question is answered from the same client.

use std::process::{Child, Command};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hallpass_tests::*;

/// `chain.sh DEPTH OUTSIDE N`: a chain of DEPTH processes, each with a 128 KiB `argv[0]`
/// (`exec -a`); the last starts N writers outside, each with such an `argv[0]` too, which
/// wait for their answers. A question then names 32 command lines of 128 KiB.
const CHAIN: &str = r#"
d=$1
big=$(head -c 131000 /dev/zero | tr '\0' a)
if [ "$d" -gt 1 ]; then
  (exec -a "$big" bash ./chain.sh $((d-1)) "$2" "$3")
  exit
fi
i=0
while [ $i -lt "$3" ]; do
  (exec -a "$big" hp-write touch "$2/q$i") &
  i=$((i+1))
done
wait
"#;

/// A Python program that writes its one file and prints when the write was answered (the
/// Unix time in seconds).
const ONE_WRITE: &str = r#"
import os, sys, time
os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644))
print(time.time(), flush=True)
"#;

/// `many.py DIR N`: N threads, each writing a file of its own in DIR, which wait for their
/// answers; the process waits until killed.
const MANY: &str = r#"
import os, sys, threading, time
d, n = sys.argv[1], int(sys.argv[2])
def ask(i):
    try:
        os.close(os.open(f"{d}/q{i}", os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        pass
for i in range(n):
    threading.Thread(target=ask, args=(i,), daemon=True).start()
time.sleep(120)
"#;

/// The pid of the process run by the tmux pane's shell (`hallpass answer`).
fn client_pid(t: &Tmux) -> String {
    let shell = stdout(&run(t.cmd_display("#{pane_pid}")));
    let out = run(Command::new("pgrep").args(["-P", shell.trim()]));
    let pid = stdout(&out).trim().to_string();
    assert!(!pid.is_empty() && !pid.contains('\n'), "children: {pid:?}");
    pid
}

fn signal(pid: &str, sig: &str) {
    let st = Command::new("kill").args([sig, pid]).status().unwrap();
    assert!(st.success());
}

/// `hallpass --prompt=answer -- PROGRAM ARGS...` in the background.
fn asking<S: AsRef<std::ffi::OsStr>>(s: &Scratch, program: &str, args: &[S]) -> Child {
    let mut c = s.hallpass(["--prompt=answer", "--", program]);
    c.args(args);
    background(c)
}

/// Ends a session whose questions nobody will answer.
fn end(c: Child) {
    let _ = Command::new("kill").arg(c.id().to_string()).status();
    let _ = finish(c);
}

/// Regression (issue 24): a command whose processes carry a 128 KiB `argv[0]` made
/// questions of 4 MiB: `hallpass answer` lost its stream on each ("decoded message length
/// too large"), so no other session's question could be answered from it, and
/// `answer --json` failed for every session. Now every field is cut to its bound with a
/// visible mark, and a question is 64 KiB at most.
#[test]
fn huge_command_lines_make_questions_of_bounded_size() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("sizes-chain", v);
        let chain = s.project.join("chain.sh");
        std::fs::write(&chain, CHAIN).unwrap();
        s.chown(&chain);
        let one = s.script("one.py", ONE_WRITE);
        let f = s.outside.join("b");
        // The other session asks first: the interactive client selects it (the oldest).
        let b = asking(&s, "python3", &[&one, &f]);
        s.wait_pending(1, &[]);
        let a = asking(
            &s,
            "bash",
            &["./chain.sh", "32", s.outside.to_str().unwrap(), "40"],
        );
        let q = s.wait_pending(41, &[]);
        let mut largest = 0;
        for x in &q {
            let size = serde_json::to_string(x).unwrap().len();
            largest = largest.max(size);
            assert!(size < 64 * 1024, "{v:?}: a question of {size} bytes");
        }
        assert_eq!(q[0]["path"], f.to_str().unwrap());
        let chain = q[1]["chain"].as_array().unwrap();
        assert_eq!(chain.len(), 32, "{v:?}: {chain:?}");
        for c in chain {
            let c = c.as_str().unwrap();
            assert!(c.starts_with("aaaa") && c.contains("…[cut"), "{v:?}: {c}");
        }
        let (rss, hwm) = s.daemon_memory();
        // 40 questions of 4 MiB each cost the daemon hundreds of MiB.
        assert!(hwm < 100 * 1024, "{v:?}: the daemon's peak: {hwm} KiB");
        // The interactive client follows all of them, and answers the other session's.
        let t = s.tmux(120, 30);
        t.line("hallpass answer");
        let sc = t.wait_for("every question", |x| x.contains("41 questions waiting"));
        assert!(sc.contains(&format!("{}", f.display())), "{sc}");
        std::thread::sleep(Duration::from_millis(600));
        let sent = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        t.keys(&["o"]);
        let out = finish(b);
        let done: f64 = stdout(&out).trim().parse().unwrap();
        let took_ms = (done - sent.as_secs_f64()) * 1000.0;
        t.wait_for("the rest", |x| x.contains("40 questions waiting"));
        assert!(f.exists());
        // A key pressed in tmux to the write made: measured, and far from a stall.
        assert!(took_ms < 1000.0, "{v:?}: {took_ms} ms");
        println!(
            "{v:?}: 41 questions, the largest {largest} bytes as JSON; the daemon's memory {rss} KiB (peak {hwm} KiB); the other session's answer, from the key to its write: {took_ms:.1} ms"
        );
        t.keys(&["q"]);
        end(a);
    }
}

/// `sessions` sessions asking `each` questions of about 12 KiB each (a path of 3.8 KiB
/// under a deep directory of the scratch's `outside`, and a command of eight such
/// arguments, which the daemon shows cut to 1 KiB each); the sessions, and a piece of the
/// path to look for.
fn deep_questions(s: &Scratch, sessions: usize, each: usize) -> (Vec<Child>, String) {
    let seg = "d".repeat(250);
    let mut deep = s.outside.clone();
    for _ in 0..15 {
        deep.push(&seg);
    }
    std::fs::create_dir_all(&deep).unwrap();
    s.chown(&s.outside);
    let many = s.script("many.py", MANY);
    let each = each.to_string();
    let mut args = vec![many.as_os_str(), deep.as_os_str(), each.as_ref()];
    args.extend(std::iter::repeat_n(deep.as_os_str(), 8));
    let children = (0..sessions).map(|_| asking(s, "python3", &args)).collect();
    (children, seg)
}

/// A `hallpass answer` stopped (`SIGSTOP`) while 500 questions of 12 KiB are asked costs the
/// daemon little (what the socket does not take, the daemon holds for 5 s at most, then
/// hangs up: `api/watch.rs` tests that), and catches up once it runs again. Regression
/// (issue 24): the client drew its whole screen for each question that came, every question
/// of the list each time, and took minutes to catch up with 500.
#[test]
fn a_stopped_client_costs_the_daemon_little_and_catches_up() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("sizes-slow", v);
        let starter = asking(&s, "sleep", &["120"]);
        let up = hallpass_tests::load::wait_for_file(
            &s.runtime.join("hallpass/api.sock"),
            Duration::from_secs(30),
        );
        assert!(up, "no daemon");
        let (idle, _) = s.daemon_memory();
        let t = s.tmux(120, 30);
        t.line("hallpass answer");
        t.wait_for("the client", |x| x.contains("no questions waiting"));
        let pid = client_pid(&t);
        signal(&pid, "-STOP");
        let (sessions, seg) = deep_questions(&s, 2, 250);
        s.wait_pending(500, &[]);
        // Past 5 s, whatever it could not send is let go of.
        std::thread::sleep(Duration::from_secs(6));
        let (stopped, hwm) = s.daemon_memory();
        assert!(hwm < 100 * 1024, "{v:?}: the daemon's peak: {hwm} KiB");
        signal(&pid, "-CONT");
        let start = Instant::now();
        let sc = t.wait_for("the client catching up", |x| {
            x.contains("500 questions waiting")
        });
        let caught_up = start.elapsed();
        assert!(sc.contains(&seg[..20]), "{sc}");
        println!(
            "{v:?}: the daemon's memory: {idle} KiB idle, {stopped} KiB (peak {hwm} KiB) with 500 questions of 12 KiB and a client stopped; the client caught up in {caught_up:?}"
        );
        t.keys(&["q"]);
        for c in sessions {
            end(c);
        }
        end(starter);
    }
}

/// `hallpass answer --json` lists every pending question, a page at a time: 600 questions
/// of about 12 KiB each are more than the 4 MiB a client decodes in one message.
#[test]
fn the_pending_list_comes_in_pages() {
    let s = Scratch::new("sizes-pages", variants()[0]);
    let (sessions, _) = deep_questions(&s, 3, 200);
    let q = s.wait_pending(600, &[]);
    let mut ids: Vec<u64> = q.iter().map(|x| x["id"].as_u64().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 600, "listed twice");
    let total: usize = q
        .iter()
        .map(|x| serde_json::to_string(x).unwrap().len())
        .sum();
    assert!(total > 4 << 20, "{total} bytes: one message would do");
    println!("600 questions, {total} bytes as JSON, listed");
    for c in sessions {
        end(c);
    }
}
