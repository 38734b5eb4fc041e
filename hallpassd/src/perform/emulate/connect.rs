//! Strict mode: `connect`. A connection to a service outside the session is decided like a
//! write of its socket, and made by the daemon on the process's own socket (taken with
//! `pidfd_getfd`) with the address it checked, so an address swapped after the check
//! reaches nothing else. A socket file is held (`O_PATH`, found by the walk) and connected
//! to through `/proc/thread-self/fd/N`: the kernel reaches the very inode decided on.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::errno::Errno;

use super::{Action, Prepared, Target};
use crate::perform::walk::Walker;
use crate::resolve::Resolved;
use crate::service::{self, Listener, Name};
use crate::sys::fsops::{self, Sys};

/// What the process connects or sends to.
pub enum To {
    /// An address to give the kernel as it is: another family, `AF_UNSPEC`.
    Addr(Vec<u8>),
    /// A Unix socket file, held.
    File(OwnedFd),
    /// An abstract Unix address (the whole `sockaddr_un`).
    Abstract(Vec<u8>),
}

impl To {
    /// The address to give the kernel: for a socket file, `/proc/thread-self/fd/N` of the
    /// held descriptor, so the kernel reaches the very inode decided on.
    pub fn addr(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            To::Addr(a) | To::Abstract(a) => a.into(),
            To::File(f) => {
                let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
                a.extend_from_slice(format!("/proc/thread-self/fd/{}", f.as_raw_fd()).as_bytes());
                a.push(0);
                a.into()
            }
        }
    }
}

/// Where a connection or a datagram goes: the address and, for a Unix one, the socket the
/// policy decides on.
pub struct Dest {
    pub to: To,
    /// Who listens there, for a question: set by [`settle`].
    pub service: String,
    name: Option<Name>,
}

impl Dest {
    /// Whether `other` names the same socket as this one (a batch of datagrams decided once).
    pub fn same(&self, other: &Dest) -> bool {
        self.name.is_some() && self.name == other.name
    }
}

/// A connection to make on the process's socket.
pub struct Connect {
    pub sock: OwnedFd,
    pub dest: Dest,
}

/// Prepares `connect(fd, addr, len)`: a Unix address is a connection to decide, any other
/// is performed as it is.
pub fn prepare(t: &mut Target<'_>, w: &mut Walker, a: &[u64; 6]) -> Sys<Prepared> {
    let len = a[2] as usize;
    if len > std::mem::size_of::<libc::sockaddr_storage>() {
        return Err(Errno::EINVAL);
    }
    let mut sa = vec![0u8; len];
    super::read_bytes(t, a[1], &mut sa)?;
    let sock = super::take_fd(t, a[0] as i32)?;
    let unix = fsops::socket_domain(sock.as_fd())? == libc::AF_UNIX;
    let (dest, res) = dest(w, unix, sa)?;
    let action = Action::Connect(Connect { sock, dest });
    Ok(match res {
        Some(path) => Prepared::Write {
            syscall: "connect",
            paths: vec![path],
            action,
        },
        None => Prepared::Perform(action),
    })
}

/// Where address `sa` leads from a socket (`unix`: of the Unix family), and what the policy
/// decides on: nothing for another family's address (the kernel's own answer follows); a
/// socket file, walked as a write's path is and held; an abstract name as `@name`.
pub fn dest(w: &mut Walker, unix: bool, sa: Vec<u8>) -> Sys<(Dest, Option<Resolved>)> {
    let family = (sa.len() >= 2).then(|| u16::from_ne_bytes([sa[0], sa[1]]));
    if !unix || family != Some(libc::AF_UNIX as u16) || sa.len() <= 2 {
        return Ok((Dest::new(To::Addr(sa), None), None));
    }
    // The kernel's unix_validate_addr.
    if sa.len() > std::mem::size_of::<libc::sockaddr_un>() {
        return Err(Errno::EINVAL);
    }
    if sa[2] == 0 {
        let name = sa[3..].to_vec();
        let shown = service::abstract_shown(&name);
        let d = Dest::new(To::Abstract(sa), Some(Name::Abstract(name)));
        return Ok((d, Some(Resolved::Path(shown))));
    }
    let p = &sa[2..];
    let path = &p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())];
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    let start = super::start_for(w, libc::AT_FDCWD, path)?;
    let file = w.object(start, path, true)?;
    let st = fsops::fstat(file.as_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(Errno::ECONNREFUSED);
    }
    let res = super::held_res(&file, w)?;
    let name = Name::File {
        dev: st.st_dev,
        ino: st.st_ino,
    };
    Ok((Dest::new(To::File(file), Some(name)), Some(res)))
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

/// Looks at who listens where `c` leads. `allowed`: the policy allows it anyway (a
/// socket in the project, a listed service), so the listener need not be looked for.
pub fn settle(c: &mut Dest, session: i32, allowed: impl FnOnce() -> bool) -> Settled {
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
        |h: &[i32]| !h.is_empty() && h.iter().all(|&p| crate::process::descends_from(p, session));
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

impl Dest {
    fn new(to: To, name: Option<Name>) -> Dest {
        Dest {
            to,
            service: String::new(),
            name,
        }
    }
}

impl Connect {
    /// A blocking connect waits for the other end: made on a thread of its own.
    pub fn may_block(&self) -> bool {
        fsops::getfl(self.sock.as_fd()).is_ok_and(|f| f & libc::O_NONBLOCK == 0)
    }

    /// Connects the process's socket. The thread that does it wears the process's
    /// credentials where they differ from the daemon's ([`crate::perform::creds::Guise`]),
    /// its effective user and group among them: what the listener sees of its peer.
    pub fn perform(&self) -> Sys<()> {
        fsops::connect(self.sock.as_fd(), &self.dest.to.addr())
    }
}
