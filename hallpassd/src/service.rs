//! Services: the processes listening on the Unix sockets a command connects to. Strict mode
//! asks before the command reaches one outside its session, and names it in the question;
//! lite mode logs the connection (see docs/strict-mode.md, "Services").
//!
//! A socket file is matched to its listening socket by the inode it is bound to, as the
//! kernel reports it (`sock_diag(7)`, `UNIX_DIAG_VFS`), never by the path it was bound
//! with, which a process can later make name another socket (a rename, a hard link). The
//! processes holding that socket are found by its inode among their descriptors
//! (`/proc/PID/fd`, `socket:[INODE]`).

use std::path::PathBuf;

use nix::sys::socket::SockType;
use nix::sys::socket::{recv, send, socket, AddressFamily, MsgFlags, SockFlag, SockProtocol};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

use crate::policy::{PathSet, DEFAULT_SERVICES};
use crate::session::error::SetupError;

/// The services reached without asking: [`DEFAULT_SERVICES`] as they resolve on this
/// machine (`/dev/log` is a symlink into the journal's directory), and `--allow-service`,
/// which must name its socket with no symlink on the way (the command could have made it).
pub fn allowed(extra: &[String]) -> Result<PathSet, SetupError> {
    let mut set = PathSet::default();
    for p in DEFAULT_SERVICES {
        set.push(PathBuf::from(p));
        if let Ok(c) = std::fs::canonicalize(p) {
            set.push(c);
        }
    }
    for p in extra {
        let literal = crate::rules::normalize(p).filter(|_| p.starts_with('/'));
        let Some(literal) = literal else {
            return Err(SetupError::Refused(format!(
                "--allow-service {p}: not an absolute path"
            )));
        };
        match std::fs::canonicalize(&literal) {
            Ok(c) if c != literal => {
                return Err(SetupError::Refused(format!(
                    "--allow-service {p}: a symlink on the way leads to {}: give that path instead",
                    c.display()
                )))
            }
            _ => set.push(literal),
        }
    }
    Ok(set)
}

/// How a socket is named: a file (its device and inode, as `stat` gives them), or an
/// abstract name (without its leading NUL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    File { dev: u64, ino: u64 },
    Abstract(Vec<u8>),
}

/// How an abstract name (without its leading NUL) is shown and decided on: `@name`, each NUL
/// in it an `@` too, as `ss` and `/proc/net/unix` show them.
pub fn abstract_shown(name: &[u8]) -> std::path::PathBuf {
    format!("@{}", String::from_utf8_lossy(name).replace('\0', "@")).into()
}

/// The device and inode of a socket file, for [`Name::File`] in tests and lite mode.
pub fn file_name(path: &std::path::Path) -> Option<Name> {
    let md = std::fs::metadata(path).ok()?;
    Some(Name::File {
        dev: md.dev(),
        ino: md.ino(),
    })
}

/// Who listens on a socket.
#[derive(Debug, PartialEq, Eq)]
pub enum Listener {
    /// No socket is bound to it.
    Nobody,
    /// The processes that hold the sockets bound to it, each once. Empty when none is
    /// visible to the daemon: another user's (root's docker daemon), or one whose descriptor
    /// is in flight in a message.
    Held(Vec<i32>),
}

/// Who listens on `name`; `None` when the kernel could not be asked.
pub fn holders(name: &Name) -> Option<Listener> {
    let inodes = bound_to(name)?;
    if inodes.is_empty() {
        return Some(Listener::Nobody);
    }
    let mut pids = Vec::new();
    let proc = std::fs::read_dir("/proc").ok()?;
    for e in proc.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if holds(pid, &inodes) {
            pids.push(pid);
        }
    }
    Some(Listener::Held(pids))
}

/// Whether process `pid` has a descriptor of one of the sockets `inodes`.
fn holds(pid: i32, inodes: &[u64]) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|l| {
            let l = l.as_os_str().as_encoded_bytes();
            l.strip_prefix(b"socket:[")
                .and_then(|r| r.strip_suffix(b"]"))
                .and_then(|n| std::str::from_utf8(n).ok()?.parse::<u64>().ok())
                .is_some_and(|ino| inodes.contains(&ino))
        })
    })
}

/// Whether this daemon holds one of the sockets bound to `name`: its own API, which must
/// never be reached through it.
pub fn is_ours(name: &Name) -> bool {
    bound_to(name).is_none_or(|inodes| holds(std::process::id() as i32, &inodes))
}

/// `pid` and its command line, for a question: `dbus-daemon --session (pid 812)`.
pub fn describe(pids: &[i32]) -> String {
    let Some(&pid) = pids.first() else {
        return "its listener is not visible to hallpass".into();
    };
    // Only its start is shown: read no more (a command line may be megabytes).
    let mut cmd = crate::process::cmdline(pid)
        .map(|(b, _)| {
            let s = String::from_utf8_lossy(&b).replace('\0', " ");
            s.trim_end().to_string()
        })
        .unwrap_or_default();
    if cmd.is_empty() {
        cmd = crate::process::comm(pid).unwrap_or_else(|| "?".into());
    }
    if cmd.chars().count() > 60 {
        cmd = cmd.chars().take(59).chain(['…']).collect();
    }
    match pids.len() {
        1 => format!("{cmd}, pid {pid}"),
        n => format!("{cmd}, pid {pid} and {} more", n - 1),
    }
}

// include/uapi/linux/sock_diag.h, unix_diag.h
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const UDIAG_SHOW_NAME: u32 = 0x1;
const UDIAG_SHOW_VFS: u32 = 0x2;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;

/// The socket inodes (sockfs) of the Unix sockets bound to `name`, from a dump of the
/// daemon's network namespace; `None` when the kernel could not be asked.
fn bound_to(name: &Name) -> Option<Vec<u64>> {
    let sock = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )
    .ok()?;
    // struct nlmsghdr (16) + struct unix_diag_req (24).
    let mut req = Vec::with_capacity(40);
    req.extend_from_slice(&40u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req.extend_from_slice(&[0; 8]);
    req.extend_from_slice(&[libc::AF_UNIX as u8, 0, 0, 0]);
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS).to_ne_bytes());
    req.extend_from_slice(&u64::MAX.to_ne_bytes());
    send(sock.as_raw_fd(), &req, MsgFlags::empty()).ok()?;
    let mut found = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = recv(sock.as_raw_fd(), &mut buf, MsgFlags::empty()).ok()?;
        if n == 0 {
            return None;
        }
        let mut msgs = &buf[..n];
        while msgs.len() >= 16 {
            let len = u32_at(msgs, 0) as usize;
            let kind = u16::from_ne_bytes([msgs[4], msgs[5]]);
            if len < 16 || len > msgs.len() {
                return None;
            }
            match kind {
                NLMSG_DONE => return Some(found),
                NLMSG_ERROR => return None,
                _ => {
                    if let Some(ino) = matches(&msgs[16..len], name) {
                        found.push(ino);
                    }
                }
            }
            msgs = &msgs[(len + 3) & !3..];
        }
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The socket inode of one `struct unix_diag_msg` and its attributes, if bound to `name`.
fn matches(msg: &[u8], name: &Name) -> Option<u64> {
    // struct unix_diag_msg: family, type, state, pad, ino (u32), cookie (2 x u32).
    if msg.len() < 16 {
        return None;
    }
    let ino = u32_at(msg, 4) as u64;
    let mut attrs = &msg[16..];
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]);
        if len < 4 || len > attrs.len() {
            return None;
        }
        let data = &attrs[4..len];
        let hit = match (kind, name) {
            (UNIX_DIAG_VFS, Name::File { dev, ino }) if data.len() >= 8 => {
                // struct unix_diag_vfs: the inode (32 bits) and the kernel's dev_t, whose
                // major is above bit 20.
                let kdev = u32_at(data, 4);
                let udev = libc::makedev(kdev >> 20, kdev & 0xf_ffff);
                u32_at(data, 0) as u64 == *ino & 0xffff_ffff && udev == *dev
            }
            (UNIX_DIAG_NAME, Name::Abstract(want)) => {
                data.first() == Some(&0) && &data[1..] == want.as_slice()
            }
            _ => false,
        };
        if hit {
            return Some(ino);
        }
        attrs = &attrs[((len + 3) & !3).min(attrs.len())..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_listener_is_found_by_the_inode_it_is_bound_to() {
        let dir = std::env::temp_dir().join(format!("hallpass-svc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.sock");
        let _ = std::fs::remove_file(&path);
        let _l = UnixListener::bind(&path).unwrap();
        let md = std::fs::metadata(&path).unwrap();
        let name = Name::File {
            dev: md.dev(),
            ino: md.ino(),
        };
        let me = std::process::id() as i32;
        assert_eq!(holders(&name).unwrap(), Listener::Held(vec![me]));
        assert!(is_ours(&name));
        assert!(describe(&[me]).ends_with(&format!(", pid {me}")));
        // Renamed, it is still the same socket; a file put at its old path is not.
        let moved = dir.join("moved");
        std::fs::rename(&path, &moved).unwrap();
        std::fs::write(&path, b"").unwrap();
        let md2 = std::fs::metadata(&path).unwrap();
        let other = Name::File {
            dev: md2.dev(),
            ino: md2.ino(),
        };
        assert_eq!(holders(&other).unwrap(), Listener::Nobody);
        assert_eq!(holders(&name).unwrap(), Listener::Held(vec![me]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
