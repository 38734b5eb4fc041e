//! Strict mode: `sendto`, `sendmsg`, `sendmmsg`. A datagram to a Unix socket outside the
//! session reaches a service as a connection does, so it is decided as `connect` decides
//! (`connect.rs`). And whatever the decision, the daemon sends it itself, on its copy of the
//! process's socket (`pidfd_getfd`), with its copy of the address, data and control
//! messages, all read once: a swapped address, or another socket `dup2`'ed over the one
//! checked, reaches nothing else. A socket file is reached through
//! `/proc/thread-self/fd/N` of the held descriptor, the very inode decided on.
//!
//! No deputy: descriptors passed (`SCM_RIGHTS`) are the process's own, taken from it;
//! credentials (`SCM_CREDENTIALS`) only what the kernel would let it claim
//! ([`creds::message_creds`]). A send that would block waits on a thread of its own.

use std::cell::{Cell, RefCell};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::errno::Errno;

use super::connect::{self, Dest};
use super::{read_bytes, take_fd, Action, Outcome, Prepared, Target};
use crate::perform::creds;
use crate::perform::walk::Walker;
use crate::resolve::Resolved;
use crate::sys::fsops::{self, Sys};
use crate::sys::seccomp::Reply;

/// `UIO_MAXIOV`: more iovecs fail with `EMSGSIZE`; `sendmmsg` sends at most this many.
const UIO_MAXIOV: u64 = 1024;
/// The most data copied for one message. A datagram larger than this is beyond any send
/// buffer the kernel allows without privilege: `EMSGSIZE`. A stream send is cut there (a
/// short count, which a stream socket may give).
const MAX_DATA: usize = 4 << 20;
/// The most control data: far past the kernel's own limit (`optmem_max`, `ENOBUFS`).
const MAX_CONTROL: u64 = 1 << 20;
/// `SCM_MAX_FD`: more descriptors in one message fail with `EINVAL`.
const SCM_MAX_FD: usize = 253;
/// `struct msghdr`, `struct mmsghdr` and `struct cmsghdr` on both architectures (64-bit).
const MSGHDR: usize = 56;
const MMSGHDR: u64 = 64;
const CMSGHDR: usize = 16;

/// Where one message goes.
enum Addr {
    /// No address: the socket's peer.
    None,
    /// An address given to the kernel as it is (another family, a socket that ignores it).
    Raw(Dest),
    /// The destination decided on ([`Send::dest`]).
    Decided,
}

/// One message, as the daemon sends it.
struct Msg {
    to: Addr,
    data: Vec<u8>,
    /// The control messages, laid out again with the daemon's descriptor numbers.
    control: Vec<u8>,
    /// The process's descriptors in it, held until sent.
    _fds: Vec<OwnedFd>,
    /// Credentials attached for the process need capabilities ([`creds::with_message_caps`]).
    raise: bool,
}

/// A send to make on the process's socket.
pub struct Send {
    sock: OwnedFd,
    msgs: Vec<Msg>,
    /// The Unix socket the messages with an address go to, decided as a connection is.
    pub dest: Option<Dest>,
    flags: i32,
    stream: bool,
    /// `sendmmsg`: where the process's vector is, for each message's `msg_len`.
    many: Option<u64>,
    /// `sendmmsg`: the process's memory, opened while its notification was valid, to write
    /// the `msg_len`s through. It stays bound to that very process: the answer of a send
    /// that waited comes long after, when the thread id may be another process's.
    memory: Option<std::fs::File>,
    /// How far it got: the message, and bytes of it sent (a stream send taken up again on a
    /// thread of its own).
    done: Cell<(usize, usize)>,
    /// The bytes sent of each message sent.
    lens: RefCell<Vec<usize>>,
    /// Its share of the passed descriptors that sends may hold ([`Held`]).
    _held: Held,
}

/// The descriptors passed in `SCM_RIGHTS` that sends hold in the daemon, counted while the
/// send lives (waiting for its receiver, or for a person's answer): in all, and by session
/// (its first process's pid).
static HELD: std::sync::Mutex<(usize, Vec<(i32, usize)>)> = std::sync::Mutex::new((0, Vec::new()));

/// A send's share of [`HELD`], given back when it is dropped.
struct Held {
    n: usize,
    session: i32,
}

impl Held {
    /// `n` more for `session`, if all sends together then hold at most a quarter of the
    /// daemon's descriptor table (which every session shares) and this session's a sixteenth,
    /// at most 1,024; else `EAGAIN`. A send that passes none is never refused.
    fn take(session: i32, n: usize) -> Sys<Held> {
        let max = fsops::open_files_limit() / 4;
        let per_session = (max / 4).min(1024);
        if n == 0 {
            return Ok(Held { n, session });
        }
        let mut held = HELD.lock().unwrap();
        let (all, by) = &mut *held;
        let i = match by.iter().position(|&(s, _)| s == session) {
            Some(i) => i,
            None => {
                by.push((session, 0));
                by.len() - 1
            }
        };
        if *all + n > max || by[i].1 + n > per_session {
            if by[i].1 == 0 {
                by.swap_remove(i);
            }
            return Err(Errno::EAGAIN);
        }
        *all += n;
        by[i].1 += n;
        Ok(Held { n, session })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.n == 0 {
            return;
        }
        let mut held = HELD.lock().unwrap();
        let (all, by) = &mut *held;
        *all -= self.n;
        if let Some(i) = by.iter().position(|&(s, _)| s == self.session) {
            by[i].1 -= self.n;
            if by[i].1 == 0 {
                by.swap_remove(i);
            }
        }
    }
}

/// One message as the process gave it, read once.
struct Raw {
    name: Vec<u8>,
    data: Vec<u8>,
    control: Vec<u8>,
}

/// Prepares `sendto`, `sendmsg` or `sendmmsg` (`name`). A Unix datagram socket's
/// messages to a Unix address are a write of that socket to decide; every other send is
/// performed all the same (its arguments are in memory the kernel would read again).
pub fn prepare(
    name: &'static str,
    t: &mut Target<'_>,
    w: &mut Walker,
    a: &[u64; 6],
) -> Sys<Prepared> {
    let sock = take_fd(t, a[0] as i32)?;
    let family = fsops::socket_domain(sock.as_fd())?;
    let kind = fsops::socket_type(sock.as_fd())?;
    let stream = kind == libc::SOCK_STREAM;
    // Only a Unix datagram socket goes where a message says: a stream socket refuses an
    // address (EISCONN, EOPNOTSUPP), a seqpacket one ignores it.
    let decides = family == libc::AF_UNIX && kind == libc::SOCK_DGRAM;
    let (count, flags, many) = match name {
        "sendto" => (1, a[3] as i32, None),
        "sendmsg" => (1, a[2] as i32, None),
        _ => (
            (a[2] as u32 as u64).min(UIO_MAXIOV),
            a[3] as i32,
            Some(a[1]),
        ),
    };
    let mut s = Send {
        sock,
        msgs: Vec::new(),
        dest: None,
        flags,
        stream,
        many,
        // Where the daemon may not open it (Yama), the lengths are not written back.
        memory: many.and_then(|_| process_memory(t.tid)),
        done: Cell::new((0, 0)),
        lens: RefCell::new(Vec::new()),
        _held: Held {
            n: 0,
            session: t.session,
        },
    };
    let mut path = None;
    for i in 0..count {
        let added = match name {
            "sendto" => read_sendto(t, a, stream),
            "sendmsg" => read_msghdr(t, a[1], stream),
            _ => read_msghdr(t, a[1] + i * MMSGHDR, stream),
        }
        .and_then(|raw| {
            // One budget for the whole call: a batch stops before the message that would
            // pass it, so one sendmmsg cannot make the daemon hold gigabytes.
            let size = raw.data.len() + raw.control.len();
            if i > 0 && s.size() + size > MAX_DATA {
                return Ok(false);
            }
            s.add(t, w, raw, decides, family, &mut path)
        });
        match added {
            Ok(true) => {}
            // Another destination than the first's: left for the process's next call, as
            // a batch the kernel cuts short.
            Ok(false) => break,
            Err(e) if i == 0 => return Err(e),
            // The kernel sends those before a bad one, and says how many.
            Err(_) => break,
        }
    }
    s._held = Held::take(t.session, s.held_fds())?;
    let action = Action::Send(s);
    Ok(match path {
        Some(p) => Prepared::Write {
            syscall: name,
            paths: vec![p],
            action,
        },
        None => Prepared::Perform(action),
    })
}

/// `sendto(fd, buf, len, flags, addr, addrlen)`.
fn read_sendto(t: &mut Target<'_>, a: &[u64; 6], stream: bool) -> Sys<Raw> {
    let len = (a[2] as usize).min(i32::MAX as usize);
    let data = read_data(t, &[(a[1], len)], stream)?;
    let alen = a[5] as i32;
    if a[4] != 0 && !(0..=SOCKADDR_STORAGE as i32).contains(&alen) {
        return Err(Errno::EINVAL);
    }
    let mut name = vec![0u8; if a[4] == 0 { 0 } else { alen as usize }];
    if !name.is_empty() {
        read_bytes(t, a[4], &mut name)?;
    }
    Ok(Raw {
        name,
        data,
        control: Vec::new(),
    })
}

const SOCKADDR_STORAGE: usize = std::mem::size_of::<libc::sockaddr_storage>();

/// A `struct msghdr` at `ptr`, with its address, data and control messages.
fn read_msghdr(t: &mut Target<'_>, ptr: u64, stream: bool) -> Sys<Raw> {
    let mut h = [0u8; MSGHDR];
    read_bytes(t, ptr, &mut h)?;
    let at = |o: usize| u64::from_ne_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let namelen = i32::from_ne_bytes(h[8..12].try_into().expect("4 bytes"));
    let (name_ptr, iov, iovlen, ctl, ctllen) = (at(0), at(16), at(24), at(32), at(40));
    // As `__copy_msghdr`: no name without a pointer, a negative length refused, a long
    // one cut to the largest address.
    if name_ptr != 0 && namelen < 0 {
        return Err(Errno::EINVAL);
    }
    let namelen = if name_ptr == 0 {
        0
    } else {
        (namelen as usize).min(SOCKADDR_STORAGE)
    };
    if iovlen > UIO_MAXIOV {
        return Err(Errno::EMSGSIZE);
    }
    let mut name = vec![0u8; namelen];
    if namelen > 0 {
        read_bytes(t, name_ptr, &mut name)?;
    }
    let mut vec = vec![0u8; iovlen as usize * 16];
    read_bytes(t, iov, &mut vec)?;
    let mut iovs = Vec::with_capacity(iovlen as usize);
    for v in vec.chunks_exact(16) {
        let base = u64::from_ne_bytes(v[..8].try_into().expect("8 bytes"));
        let len = i64::from_ne_bytes(v[8..].try_into().expect("8 bytes"));
        if len < 0 {
            return Err(Errno::EINVAL);
        }
        iovs.push((base, len as usize));
    }
    if ctllen > i32::MAX as u64 || ctllen > MAX_CONTROL {
        return Err(Errno::ENOBUFS);
    }
    let mut control = vec![0u8; ctllen as usize];
    read_bytes(t, ctl, &mut control)?;
    let data = read_data(t, &iovs, stream)?;
    Ok(Raw {
        name,
        data,
        control,
    })
}

/// The data of `iovs`, gathered: at most [`MAX_DATA`] bytes (a stream send is cut there; a
/// larger datagram is `EMSGSIZE`).
fn read_data(t: &mut Target<'_>, iovs: &[(u64, usize)], stream: bool) -> Sys<Vec<u8>> {
    let total = iovs
        .iter()
        .try_fold(0usize, |n, (_, l)| n.checked_add(*l))
        .ok_or(Errno::EINVAL)?;
    if total > MAX_DATA && !stream {
        return Err(Errno::EMSGSIZE);
    }
    let mut data = vec![0u8; total.min(MAX_DATA)];
    let mut at = 0;
    for &(base, len) in iovs {
        let take = len.min(data.len() - at);
        read_bytes(t, base, &mut data[at..at + take])?;
        at += take;
    }
    Ok(data)
}

impl Send {
    /// The process's descriptors held to pass on.
    fn held_fds(&self) -> usize {
        self.msgs.iter().map(|m| m._fds.len()).sum()
    }

    /// The bytes of data and control held.
    fn size(&self) -> usize {
        self.msgs
            .iter()
            .map(|m| m.data.len() + m.control.len())
            .sum()
    }

    /// Adds one message read from the process; `false` when it goes to another Unix socket
    /// than the one decided on (the batch stops before it).
    fn add(
        &mut self,
        t: &mut Target<'_>,
        w: &mut Walker,
        raw: Raw,
        decides: bool,
        family: i32,
        path: &mut Option<Resolved>,
    ) -> Sys<bool> {
        let (control, fds, raise) = control(t, &raw.control, family)?;
        // One budget of descriptors for the whole call too, as of data: each is a copy in
        // the daemon, whose descriptor table every session shares.
        if !self.msgs.is_empty() && self.held_fds() + fds.len() > SCM_MAX_FD {
            return Ok(false);
        }
        let to = if raw.name.is_empty() {
            Addr::None
        } else {
            match connect::dest(w, decides, raw.name)? {
                (d, None) => Addr::Raw(d),
                (d, Some(p)) => match &self.dest {
                    // Decided alone, in the process's next call: a refusal fails that message,
                    // not those before it.
                    None if !self.msgs.is_empty() => return Ok(false),
                    None => {
                        self.dest = Some(d);
                        *path = Some(p);
                        Addr::Decided
                    }
                    Some(first) if first.same(&d) => Addr::Decided,
                    Some(_) => return Ok(false),
                },
            }
        };
        self.msgs.push(Msg {
            to,
            data: raw.data,
            control,
            _fds: fds,
            raise,
        });
        Ok(true)
    }
}

/// The process's control messages, laid out again for the daemon's send, walked as the
/// kernel walks them (`CMSG_OK`, else `EINVAL`): descriptors (`SCM_RIGHTS`) taken from the
/// process (a bad one is `EBADF`), so the daemon never sends its own; credentials
/// (`SCM_CREDENTIALS`) checked ([`creds::message_creds`]). Both are only for Unix and
/// netlink sockets; the others ignore them, and they are dropped. The rest passes as bytes.
/// Also says whether the credentials need capabilities raised.
fn control(t: &mut Target<'_>, raw: &[u8], family: i32) -> Sys<(Vec<u8>, Vec<OwnedFd>, bool)> {
    let scm = family == libc::AF_UNIX || family == libc::AF_NETLINK;
    let (mut out, mut fds, mut claim) = (Vec::new(), Vec::new(), None);
    let mut at = 0;
    while raw.len() >= at + CMSGHDR {
        let len = u64::from_ne_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
        if len < CMSGHDR as u64 || len > (raw.len() - at) as u64 {
            return Err(Errno::EINVAL);
        }
        let len = len as usize;
        let level = i32::from_ne_bytes(raw[at + 8..at + 12].try_into().expect("4 bytes"));
        let kind = i32::from_ne_bytes(raw[at + 12..at + 16].try_into().expect("4 bytes"));
        let mut body = raw[at + CMSGHDR..at + len].to_vec();
        match (level, kind) {
            (libc::SOL_SOCKET, libc::SCM_RIGHTS | libc::SCM_CREDENTIALS) if !scm => {}
            (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                // The kernel's limit is for the whole message, whatever its cmsgs.
                if fds.len() + body.len() / 4 > SCM_MAX_FD {
                    return Err(Errno::EINVAL);
                }
                for slot in body.chunks_exact_mut(4) {
                    let fd = take_fd(t, i32::from_ne_bytes(slot[..].try_into().expect("4")))?;
                    slot.copy_from_slice(&fd.as_raw_fd().to_ne_bytes());
                    fds.push(fd);
                }
                push_cmsg(&mut out, level, kind, &body);
            }
            (libc::SOL_SOCKET, libc::SCM_CREDENTIALS) => {
                if body.len() != 12 {
                    return Err(Errno::EINVAL);
                }
                let w = |i: usize| u32::from_ne_bytes(body[i..i + 4].try_into().expect("4"));
                // Each is checked by the kernel; the last one counts.
                let c = (w(0) as i32, w(4), w(8));
                creds::message_creds(t.tid, Some(c), family == libc::AF_UNIX)?;
                claim = Some(c);
            }
            _ => push_cmsg(&mut out, level, kind, &body),
        }
        at += (len + 7) & !7;
    }
    let (creds, raise) = if scm {
        creds::message_creds(t.tid, claim, family == libc::AF_UNIX)?
    } else {
        (None, false)
    };
    if let Some((pid, uid, gid)) = creds {
        let mut b = pid.to_ne_bytes().to_vec();
        b.extend_from_slice(&uid.to_ne_bytes());
        b.extend_from_slice(&gid.to_ne_bytes());
        push_cmsg(&mut out, libc::SOL_SOCKET, libc::SCM_CREDENTIALS, &b);
    }
    Ok((out, fds, raise))
}

fn push_cmsg(out: &mut Vec<u8>, level: i32, kind: i32, body: &[u8]) {
    out.extend_from_slice(&((CMSGHDR + body.len()) as u64).to_ne_bytes());
    out.extend_from_slice(&level.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(body);
    out.resize((out.len() + 7) & !7, 0);
}

impl Send {
    /// Sends the messages not yet sent, as the process (the thread wears its guise). `wait`:
    /// on a thread of its own, where a blocking send may wait; otherwise one that would wait
    /// is left there ([`Outcome::Blocks`]) and taken up again on such a thread.
    pub fn perform(&self, tid: i32, wait: bool) -> Outcome {
        let blocking = self.flags & libc::MSG_DONTWAIT == 0
            && fsops::getfl(self.sock.as_fd()).is_ok_and(|f| f & libc::O_NONBLOCK == 0);
        // Never a SIGPIPE for the daemon: the process gets its own (below).
        let mut flags = self.flags | libc::MSG_NOSIGNAL;
        if !wait {
            flags |= libc::MSG_DONTWAIT;
        }
        let (mut i, mut off) = self.done.get();
        let mut err = None;
        while i < self.msgs.len() {
            match self.send_one(&self.msgs[i], off, flags) {
                Ok(n) => {
                    off += n;
                    let more = self.stream && off < self.msgs[i].data.len() && blocking;
                    if more && !wait {
                        self.done.set((i, off));
                        return Outcome::Blocks;
                    }
                    if !more {
                        self.lens.borrow_mut().push(off);
                        (i, off) = (i + 1, 0);
                    }
                }
                Err(Errno::EAGAIN) if blocking && !wait => {
                    self.done.set((i, off));
                    return Outcome::Blocks;
                }
                Err(e) => {
                    // Part of a stream send made: that much was sent.
                    if off > 0 {
                        self.lens.borrow_mut().push(off);
                        i += 1;
                    }
                    err = Some(e);
                    break;
                }
            }
        }
        self.done.set((i, 0));
        Outcome::Reply(self.answer(tid, i, err))
    }

    fn send_one(&self, m: &Msg, off: usize, flags: i32) -> Sys<usize> {
        let name = match &m.to {
            Addr::None => Default::default(),
            Addr::Raw(d) => d.to.addr(),
            Addr::Decided => match &self.dest {
                Some(d) => d.to.addr(),
                None => return Err(Errno::EINVAL),
            },
        };
        let send = || fsops::sendmsg(self.sock.as_fd(), &name, &m.data[off..], &m.control, flags);
        if m.raise {
            creds::with_message_caps(send)?
        } else {
            send()
        }
    }

    /// The syscall's answer once `sent` messages went: a count of bytes (`sendto`,
    /// `sendmsg`) or of messages (`sendmmsg`, whose `msg_len`s are written back), or the
    /// error if none went.
    fn answer(&self, tid: i32, sent: usize, err: Option<Errno>) -> Reply {
        let lens = self.lens.borrow();
        if let (Some(vec), Some(memory)) = (self.many, &self.memory) {
            write_lens(memory, vec, &lens);
        }
        match (sent, err) {
            (0, Some(e)) => {
                // The kernel's SIGPIPE for a stream whose other end is gone.
                if e == Errno::EPIPE && self.stream && self.flags & libc::MSG_NOSIGNAL == 0 {
                    fsops::signal_thread(tid, libc::SIGPIPE);
                }
                Reply::Fail(e as i32)
            }
            _ if self.many.is_some() => Reply::Value(sent as i64),
            _ => Reply::Value(lens.first().copied().unwrap_or(0) as i64),
        }
    }
}

/// `/proc/TID/mem` of thread `tid`, for writing: bound to the memory of the process it is
/// opened for, which outlives no exit or exec of that process (writes then fail). `None`
/// where the daemon may not open it.
fn process_memory(tid: i32) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{tid}/mem"))
        .ok()
}

/// Writes each sent message's `msg_len` into the process's `struct mmsghdr` vector, as the
/// kernel does: its own memory, at the address it gave in a register, through `memory`
/// ([`process_memory`]), never through a thread id that may name another process by then. A
/// write that fails (the process is gone) leaves it as it was.
fn write_lens(memory: &std::fs::File, vec: u64, lens: &[usize]) {
    use std::os::unix::fs::FileExt;
    for (k, &len) in lens.iter().enumerate() {
        let at = vec + k as u64 * MMSGHDR + MSGHDR as u64;
        let _ = memory.write_at(&(len as u32).to_ne_bytes(), at);
    }
}

/// Whether thread `tid` has a signal pending that it neither blocks nor ignores: a send it
/// waits in is then interrupted (`EINTR`), as the kernel would interrupt its own.
pub fn signalled(tid: i32) -> bool {
    let mut buf = [0u8; 8192];
    let Ok(s) = creds::read_proc(&format!("/proc/{tid}/status"), &mut buf) else {
        return false;
    };
    let mask = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or(0)
    };
    let pending = mask("SigPnd:") | mask("ShdPnd:");
    pending & !mask("SigBlk:") & !mask("SigIgn:") != 0
}
