//! Strict mode: `connect`. A connection to a service outside the session is decided like a
//! write of its socket, and made by the daemon on the process's own socket (taken with
//! `pidfd_getfd`) with the address it checked, so an address swapped after the check
//! reaches nothing else. A socket file is held (`O_PATH`, found by the walk) and connected
//! to through `/proc/thread-self/fd/N`: the kernel reaches the very inode decided on.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use nix::errno::Errno;

use super::emulate::{Action, Prepared, Target};
use super::walk::Walker;
use crate::resolve::Resolved;
use crate::service::{self, Listener, Name};
use crate::sys::fsops::{self, Sys};

/// What the process connects to.
pub enum To {
    /// An address to give the kernel as it is: another family, `AF_UNSPEC`.
    Addr(Vec<u8>),
    /// A Unix socket file, held.
    File(OwnedFd),
    /// An abstract Unix address (the whole `sockaddr_un`).
    Abstract(Vec<u8>),
}

/// A connection to make on the process's socket.
pub struct Connect {
    pub sock: OwnedFd,
    pub to: To,
    /// Who listens there, for a question: set by [`settle`].
    pub service: String,
    name: Option<Name>,
}

/// Prepares `connect(fd, addr, len)`: a Unix address is a connection to decide, any other
/// is performed as it is.
pub fn prepare(t: &mut Target<'_>, w: &mut Walker, a: &[u64; 6]) -> Sys<Prepared> {
    let len = a[2] as usize;
    if len > std::mem::size_of::<libc::sockaddr_storage>() {
        return Err(Errno::EINVAL);
    }
    let mut sa = vec![0u8; len];
    super::emulate::read_bytes(t, a[1], &mut sa)?;
    let sock = super::emulate::take_fd(t, a[0] as i32)?;
    let family = (len >= 2).then(|| u16::from_ne_bytes([sa[0], sa[1]]));
    let unix = family == Some(libc::AF_UNIX as u16) && len > 2;
    let perform = |sock, to| Prepared::Perform(Action::Connect(Connect::new(sock, to, None)));
    if !unix || fsops::socket_domain(sock.as_fd())? != libc::AF_UNIX {
        // The kernel's own answer for an address of another family than the socket's.
        return Ok(perform(sock, To::Addr(sa)));
    }
    if sa[2] == 0 {
        let name = sa[3..].to_vec();
        let shown = service::abstract_shown(&name);
        let c = Connect::new(sock, To::Abstract(sa), Some(Name::Abstract(name)));
        return Ok(write(c, Resolved::Path(shown)));
    }
    let p = &sa[2..];
    let path = &p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())];
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    let start = super::emulate::start_for(w, libc::AT_FDCWD, path)?;
    let file = w.object(start, path, true)?;
    let st = fsops::fstat(file.as_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(Errno::ECONNREFUSED);
    }
    let res = super::emulate::held_res(&file, w)?;
    let name = Name::File {
        dev: st.st_dev,
        ino: st.st_ino,
    };
    Ok(write(Connect::new(sock, To::File(file), Some(name)), res))
}

fn write(c: Connect, path: Resolved) -> Prepared {
    Prepared::Write {
        syscall: "connect",
        paths: vec![path],
        action: Action::Connect(c),
    }
}

/// What a connection needs before the policy is asked.
pub enum Settled {
    /// Between the session's own processes (or to a socket nothing listens on): made
    /// without a decision.
    Pass,
    /// To hallpassd itself: refused.
    Refuse(i32),
    /// Decided as a write of its socket; [`Connect::service`] names the listener.
    Decide,
}

/// Looks at who listens where `c` connects. `allowed`: the policy allows it anyway (a
/// socket in the project, a listed service), so the listener need not be looked for.
pub fn settle(c: &mut Connect, session: i32, allowed: impl FnOnce() -> bool) -> Settled {
    let Some(name) = &c.name else {
        return Settled::Pass;
    };
    if service::is_ours(name) {
        return Settled::Refuse(libc::EACCES);
    }
    if allowed() {
        return Settled::Decide;
    }
    let in_session =
        |h: &[i32]| !h.is_empty() && h.iter().all(|&p| crate::resolve::descends_from(p, session));
    match service::holders(name) {
        // No socket of the daemon's network namespace is bound to the file. That is not
        // "nothing listens": sock_diag dumps one namespace, while a socket file reaches its
        // listener in any (a container's, `unshare -n`, a service with PrivateNetwork=):
        // decided, as a listener the daemon cannot see is (below).
        Some(Listener::Held(h)) if in_session(&h) => Settled::Pass,
        Some(Listener::Held(h)) => {
            c.service = service::describe(&h);
            Settled::Decide
        }
        Some(Listener::Nobody) => {
            c.service = match name {
                Name::File { .. } => "no listener hallpass can see (another network namespace?)",
                Name::Abstract(_) => "nothing listens there yet",
            }
            .into();
            Settled::Decide
        }
        None => {
            c.service = "hallpass could not find its listener".into();
            Settled::Decide
        }
    }
}

impl Connect {
    fn new(sock: OwnedFd, to: To, name: Option<Name>) -> Connect {
        Connect {
            sock,
            to,
            service: String::new(),
            name,
        }
    }

    /// A blocking connect waits for the other end: made on a thread of its own.
    pub fn may_block(&self) -> bool {
        fsops::getfl(self.sock.as_fd()).is_ok_and(|f| f & libc::O_NONBLOCK == 0)
    }

    /// Connects the process's socket. The thread that does it wears the process's
    /// credentials where they differ from the daemon's ([`crate::strict::creds::Guise`]),
    /// its effective user and group among them: what the listener sees of its peer.
    pub fn perform(&self) -> Sys<()> {
        match &self.to {
            To::Addr(a) | To::Abstract(a) => fsops::connect(self.sock.as_fd(), a),
            To::File(f) => {
                let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
                a.extend_from_slice(format!("/proc/thread-self/fd/{}", f.as_raw_fd()).as_bytes());
                a.push(0);
                fsops::connect(self.sock.as_fd(), &a)
            }
        }
    }
}

/// The device and inode of a socket file, for [`Name::File`] in tests and lite mode.
pub fn file_name(path: &std::path::Path) -> Option<Name> {
    let md = std::fs::metadata(path).ok()?;
    Some(Name::File {
        dev: md.dev(),
        ino: md.ino(),
    })
}
