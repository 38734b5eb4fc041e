//! Datagrams to services outside the session: strict mode decides a `sendto`, `sendmsg` or
//! `sendmmsg` with an address on a Unix datagram socket like a connection (asked, refused
//! with `--prompt=deny`, logged with reason `service`) and sends it itself; lite mode leaves
//! sends to the kernel. Each test starts a real receiver (socat) outside any session.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hallpass_tests::service::{run_session, start, Service};
use hallpass_tests::*;

/// A datagram sent to an abstract address outside the session: strict mode's Landlock
/// domain scopes abstract sockets (ABI 6, Linux 6.12), so the kernel refuses it.
#[test]
fn a_datagram_to_an_abstract_address_outside_is_refused_by_the_scope() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-dgram", v);
        let name = format!("hp-dgram-{}", std::process::id());
        let got = s.outside.join("got");
        let recv = format!("ABSTRACT-RECV:{name}");
        let create = format!("CREATE:{}", got.display());
        let c = s
            .command("socat")
            .args(["-u", &recv, &create])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let _svc = Service(c);
        std::thread::sleep(Duration::from_millis(500));
        let send = |word: &str| format!("echo {word} | socat -u - ABSTRACT-SENDTO:{name}");
        run_session(&s, &["--mode=strict", "--prompt=deny"], &send("strict"));
        // The control: lite mode reaches it.
        run_session(&s, &["--prompt=deny"], &send("lite"));
        let ok = wait_until(Duration::from_secs(3), || {
            std::fs::read_to_string(&got).is_ok_and(|t| t.contains("lite"))
        });
        let text = std::fs::read_to_string(&got).unwrap_or_default();
        assert!(ok, "{v:?}: the control did not arrive: {text:?}");
        assert!(!text.contains("strict"), "{v:?}: {text:?}");
    }
}

/// A datagram service outside the session: socat writes what it receives on
/// `outside/dgram.sock` to `outside/got`.
fn datagram_service(s: &Scratch) -> (Service, PathBuf, PathBuf) {
    let sock = s.outside.join("dgram.sock");
    let got = s.outside.join("got");
    let recv = format!("UNIX-RECV:{}", sock.display());
    let create = format!("CREATE:{}", got.display());
    let svc = start(s, "socat", &["-u", &recv, &create], &sock);
    (svc, sock, got)
}

/// Sends `word` to `sock` three ways (socat, python3's sendto and sendmsg), each saying how
/// it went: `socat=0`, `sendto=ok`, `sendmsg=13`...
fn send_three_ways(sock: &Path, word: &str) -> String {
    format!(
        "echo {word}-socat | socat -u - UNIX-SENDTO:{s}; echo socat=$?; \
         python3 -c 'import socket, sys\n\
         s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         for how in (\"sendto\", \"sendmsg\"):\n\
         \x20   try:\n\
         \x20       if how == \"sendto\": s.sendto(b\"{word}-sendto\\n\", \"{s}\")\n\
         \x20       else: s.sendmsg([b\"{word}-\", b\"sendmsg\\n\"], [], 0, \"{s}\")\n\
         \x20       print(how + \"=ok\")\n\
         \x20   except OSError as e: print(how + \"=\" + str(e.errno))\n'",
        s = sock.display()
    )
}

fn got_text(got: &Path) -> String {
    std::fs::read_to_string(got).unwrap_or_default()
}

#[test]
fn a_datagram_to_a_service_outside_the_session_is_decided_like_a_write() {
    for v in variants() {
        let s = Scratch::new("svc-dgram-file", v);
        let (_svc, sock, got) = datagram_service(&s);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let sockp = sock.to_string_lossy().into_owned();

        // Strict, unattended: EACCES each way; nothing reaches the service; logged.
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=deny", &logf],
            &send_three_ways(&sock, "denied"),
        );
        let so = stdout(&out);
        assert_eq!(
            so,
            "socat=1\nsendto=13\nsendmsg=13\n",
            "{v:?}: {}",
            stderr(&out)
        );
        let lines: Vec<_> = s
            .log_lines(&log)
            .into_iter()
            .filter(|l| l["path"] == sockp.as_str())
            .collect();
        assert_eq!(lines.len(), 3, "{v:?}: {lines:?}");
        for l in &lines {
            assert_eq!(
                (l["decision"].as_str(), l["reason"].as_str()),
                (Some("deny"), Some("service"))
            );
        }
        assert!(lines.iter().any(|l| l["syscall"] == "sendmsg"), "{lines:?}");
        std::fs::remove_file(&log).unwrap();

        // Strict, audit: sent by the daemon, all three arrive.
        let out = run_session(
            &s,
            &["--mode=strict", "--prompt=allow", &logf],
            &send_three_ways(&sock, "audit"),
        );
        assert_eq!(
            stdout(&out),
            "socat=0\nsendto=ok\nsendmsg=ok\n",
            "{v:?}: {}",
            stderr(&out)
        );
        // Lite mode leaves sends to the kernel.
        let out = run_session(&s, &["--prompt=deny"], &send_three_ways(&sock, "lite"));
        assert_eq!(
            stdout(&out),
            "socat=0\nsendto=ok\nsendmsg=ok\n",
            "{v:?}: {}",
            stderr(&out)
        );
        let want = [
            "audit-socat",
            "audit-sendto",
            "audit-sendmsg",
            "lite-sendto",
        ];
        assert!(
            wait_until(Duration::from_secs(3), || want
                .iter()
                .all(|w| got_text(&got).contains(w))),
            "{v:?}: {:?}",
            got_text(&got)
        );
        assert!(
            !got_text(&got).contains("denied"),
            "{v:?}: {:?}",
            got_text(&got)
        );
    }
}

#[test]
fn a_datagram_is_asked_and_an_answer_delivers_it() {
    let v = variants()[0];
    let s = Scratch::new("svc-dgram-answer", v);
    let (svc, sock, got) = datagram_service(&s);
    let script = format!(
        "python3 -c 'import socket; print(socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b\"answered\", \"{}\"))'",
        sock.display()
    );
    let c = background(s.hallpass([
        "--mode=strict",
        "--prompt=answer",
        "--",
        "sh",
        "-c",
        &script,
    ]));
    let q = s.wait_pending(1, &[]);
    assert_eq!(q[0]["syscall"], "sendto", "{q:?}");
    assert_eq!(q[0]["path"], sock.to_string_lossy().as_ref(), "{q:?}");
    let service = q[0]["service"].as_str().unwrap_or_default();
    assert!(service.starts_with("socat -u UNIX-RECV:"), "{q:?}");
    assert!(service.contains(&format!("pid {}", svc.0.id())), "{q:?}");
    let out = run(s.hallpass(["answer", "--id", &q[0]["id"].to_string(), "once"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = finish(c);
    assert_eq!(stdout(&out), "8\n", "{}", stderr(&out));
    assert!(wait_until(Duration::from_secs(3), || got_text(&got)
        .contains("answered")));
}

/// What the session does among its own sockets, and on the network, passes unasked under
/// `--prompt=deny`: a datagram to a socket it made in its project, descriptors sent over
/// its own socketpair, its own credentials, UDP to 127.0.0.1. Credentials it may not claim
/// are refused as the kernel refuses them.
#[test]
fn the_sessions_own_datagrams_pass_unasked() {
    for v in variants() {
        let s = Scratch::new("svc-dgram-own", v);
        let log = s.root.join("log.jsonl");
        let logf = format!("--log={}", log.display());
        let script = r#"python3 -c '
import array, os, socket
def ints(*v): return array.array("i", v).tobytes()
r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind("own.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"file", "own.sock"); print(r.recv(10).decode())
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
f = open("/etc/hostname")
a.sendmsg([b"fds"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, ints(f.fileno(), 0))])
m, anc, _, _ = b.recvmsg(10, 100)
fds = array.array("i"); fds.frombytes(anc[0][2])
print(m.decode(), len(fds), os.readlink("/proc/self/fd/%d" % fds[0]))
b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
a.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, ints(os.getpid(), os.getuid(), os.getgid()))])
pid, uid, gid = array.array("i", b.recvmsg(10, 100)[1][0][2])
print("creds", uid == os.getuid(), gid == os.getgid())
for bad in [ints(os.getpid(), 4242, os.getgid()), ints(os.getpid(), os.getuid(), 4242), ints(1, os.getuid(), os.getgid())]:
    try: a.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, bad)]); print("forged", b.recvmsg(10, 100)[1][0][2] == bad)
    except OSError as e: print("forged", e.errno)
try: a.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, ints(999))])
except OSError as e: print("badfd", e.errno)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.bind(("127.0.0.1", 0)); u.sendto(b"udp", v.getsockname()); print(v.recv(10).decode())
'"#;
        let out = run_session(&s, &["--mode=strict", "--prompt=deny", &logf], script);
        // Root may claim any uid and gid (CAP_SETUID, CAP_SETGID); a user may not.
        let forged = match v.who {
            Who::Me if am_root() => "forged True\nforged True\nforged True\n",
            _ => "forged 1\nforged 1\nforged 1\n",
        };
        assert_eq!(
            stdout(&out),
            format!("file\nfds 2 /etc/hostname\ncreds True True\n{forged}badfd 9\nudp\n"),
            "{v:?}: {}",
            stderr(&out)
        );
        assert!(
            s.log_lines(&log).is_empty(),
            "{v:?}: {:?}",
            s.log_lines(&log)
        );
    }
}

/// A receiver with `SO_PASSCRED` (the journal attributes each line so) sees the process's
/// user, not the daemon's: a root daemon sends for a process that switched to another user
/// with that user's credentials, and its pid. A daemon that is not root cannot claim
/// another pid than its own: the receiver sees hallpassd's.
#[test]
fn a_datagram_receiver_sees_the_process_credentials() {
    for v in variants().into_iter().filter(|v| !v.lend) {
        let s = Scratch::new("svc-dgram-creds", v);
        let dir = s.outside.join("creds");
        std::fs::create_dir_all(&dir).unwrap();
        for d in [&s.root, &s.outside, &dir] {
            std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777))
                .unwrap();
        }
        let (sock, seen) = (dir.join("creds.sock"), dir.join("seen"));
        let receiver = format!(
            "import array, os, socket\n\
             s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
             s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)\n\
             s.bind({sock:?}); os.chmod({sock:?}, 0o777)\n\
             while True:\n\
             \x20   m, anc, _, _ = s.recvmsg(100, 100)\n\
             \x20   open({seen:?}, 'a').write(m.decode() + ' ' + ' '.join(map(str, array.array('i', anc[0][2]))) + '\\n')\n",
            sock = sock.display().to_string(),
            seen = seen.display().to_string(),
        );
        let _svc = start(&s, "python3", &["-c", &receiver], &sock);
        let send = format!(
            "python3 -c 'import os, socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(\"%d %d %d\" % (os.getpid(), os.getuid(), os.getgid()), \"{}\")'",
            sock.display()
        )
        .replace("\"%d %d %d\" %", "(\"%d %d %d\" %")
        .replace("os.getgid()),", "os.getgid())).encode(),");
        let switched = match (v.who, uid_gid_of(TEST_USER)) {
            (Who::Me, Some((uid, gid))) if am_root() => {
                format!("setpriv --reuid={uid} --regid={gid} --clear-groups {send}")
            }
            _ => send.clone(),
        };
        let allow = format!("--allow-service={}", sock.display());
        let out = run_session(&s, &["--mode=strict", "--prompt=deny", &allow], &switched);
        assert!(
            out.status.success(),
            "{v:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(wait_until(Duration::from_secs(3), || got_text(&seen)
            .lines()
            .count()
            >= 1));
        let text = got_text(&seen);
        let f: Vec<&str> = text.split_whitespace().collect();
        // What the process said of itself, then what the receiver saw: pid, uid, gid.
        assert_eq!(f[1..3], f[4..6], "{v:?}: the ids differ: {text}");
        if am_root() && v.who == Who::Me {
            assert_eq!(f[0], f[3], "{v:?}: the pid differs: {text}");
        } else {
            assert_eq!(f[3], s.daemon_pid().trim(), "{v:?}: {text}");
        }
    }
}

/// A python3 program that sends three datagrams with `sendmmsg` (through ctypes: python has
/// no sendmmsg): to `inside`, `outside`, `inside` again, as a careful program does (on a
/// failure it skips the message that failed and goes on with the rest). It prints what each
/// call returned (`ret=N` or `err=ERRNO`) and the lengths the kernel wrote back, then what
/// `inside` received.
fn sendmmsg_program(inside: &Path, outside: &Path) -> String {
    format!(
        r#"
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
inside, outside = "{inside}", "{outside}"
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(inside)
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
keep = []
msgs = (mmsghdr * 3)()
for i, (to, word) in enumerate([(inside, b"one"), (outside, b"two"), (inside, b"three")]):
    addr = ctypes.create_string_buffer(b"\x01\x00" + to.encode() + b"\x00")
    buf = ctypes.create_string_buffer(word, len(word))
    iov = iovec(ctypes.cast(buf, ctypes.c_void_p), len(word))
    keep += [addr, buf, iov]
    msgs[i].hdr.name = ctypes.cast(addr, ctypes.c_void_p)
    msgs[i].hdr.namelen = len(addr)
    msgs[i].hdr.iov = ctypes.pointer(iov)
    msgs[i].hdr.iovlen = 1
sent, out = 0, []
while sent < 3:
    r = libc.sendmmsg(tx.fileno(), ctypes.byref(msgs, sent * ctypes.sizeof(mmsghdr)), 3 - sent, 0)
    if r < 0:
        out.append("err=%d" % ctypes.get_errno())
        sent += 1
    else:
        out.append("ret=%d" % r)
        sent += r
out.append("lens=" + ",".join(str(m.len) for m in msgs))
rx.setblocking(False)
got = []
while True:
    try:
        got.append(rx.recv(64).decode())
    except BlockingIOError:
        break
out.append("got=" + ",".join(got))
print(" ".join(out))
"#,
        inside = inside.display(),
        outside = outside.display()
    )
}

#[test]
fn sendmmsg_is_decided_message_by_message() {
    for v in variants() {
        let s = Scratch::new("svc-dgram-mmsg", v);
        let (_svc, sock, got) = datagram_service(&s);
        let prog = s.project.join("mmsg.py");
        let inside = s.project.join("in.sock");
        std::fs::write(&prog, sendmmsg_program(&inside, &sock)).unwrap();
        let run = |flags: &[&str]| {
            let _ = std::fs::remove_file(&inside);
            let mut c = s.hallpass(flags);
            c.args(["--", "python3"]).arg(&prog);
            let out = run_with_deadline(&mut c, Duration::from_secs(60));
            assert!(out.status.success(), "{v:?} {flags:?}: {}", stderr(&out));
            stdout(&out)
        };
        // Natively (lite mode leaves sends to the kernel): one call sends all three.
        assert_eq!(
            run(&["--prompt=deny"]),
            "ret=3 lens=3,3,5 got=one,three\n",
            "{v:?}"
        );
        // Strict, unattended: the batch stops before the message to the outside, which then
        // fails alone; the rest is sent, and only the sent messages' lengths are written.
        assert_eq!(
            run(&["--mode=strict", "--prompt=deny"]),
            "ret=1 err=13 ret=1 lens=3,0,5 got=one,three\n",
            "{v:?}"
        );
        assert!(
            wait_until(Duration::from_secs(2), || got_text(&got).contains("two")),
            "{v:?}: lite mode's datagram did not arrive"
        );
        assert_eq!(got_text(&got).matches("two").count(), 1, "{v:?}");
    }
}

/// Six threads make blocking sends of 253 descriptors each on a datagram socketpair whose
/// queue is full. Natively all six wait, then go once the other end reads. In strict mode
/// the daemon holds a copy of every descriptor a waiting send passes, in a table all
/// sessions share: a session's waiting sends may hold 1,024 at most, so the fifth and sixth
/// fail at once with EAGAIN and the four others go.
#[test]
fn waiting_sends_hold_a_bounded_number_of_descriptors() {
    let script = r#"
import array, errno, socket, threading, time
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.setblocking(False)
try:
    while True:
        a.send(b"f")
except BlockingIOError:
    pass
a.setblocking(True)
fds = array.array("i", [0] * 253)
res = []
def send():
    try:
        a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        res.append("sent")
    except OSError as e:
        res.append(errno.errorcode[e.errno])
ts = [threading.Thread(target=send) for _ in range(6)]
for t in ts:
    t.start()
    time.sleep(0.2)
time.sleep(0.3)
print("early", sorted(res))
b.setblocking(False)
deadline = time.time() + 20
while any(t.is_alive() for t in ts) and time.time() < deadline:
    try:
        b.recvmsg(16, socket.CMSG_SPACE(253 * 4))
    except BlockingIOError:
        time.sleep(0.05)
print("late", sorted(res))
"#;
    for v in variants() {
        let s = Scratch::new("svc-fd-budget", v);
        let run = |flags: &[&str]| {
            let mut c = s.hallpass(flags);
            c.args(["--", "python3", "-c", script]);
            let out = run_with_deadline(&mut c, Duration::from_secs(60));
            assert!(out.status.success(), "{v:?} {flags:?}: {}", stderr(&out));
            stdout(&out)
        };
        let six = "['sent', 'sent', 'sent', 'sent', 'sent', 'sent']";
        assert_eq!(
            run(&["--prompt=deny"]),
            format!("early []\nlate {six}\n"),
            "{v:?}"
        );
        assert_eq!(
            run(&["--mode=strict", "--prompt=deny"]),
            "early ['EAGAIN', 'EAGAIN']\nlate ['EAGAIN', 'EAGAIN', 'sent', 'sent', 'sent', 'sent']\n",
            "{v:?}"
        );
    }
}
