//! Framing of `control.sock`: a 4-byte big-endian length, then the protobuf message, sent in
//! one `sendmsg` with its file descriptors as SCM_RIGHTS (unix(7)). The descriptors ride on
//! the message's first byte, so reading the length with `recvmsg` collects exactly them.

use std::io::{self, IoSlice, IoSliceMut, Read};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

/// No control message is near this big; a larger length means a confused or hostile peer.
pub const MAX_MESSAGE: usize = 1 << 20;
/// At most this many descriptors travel with one message.
pub const MAX_FDS: usize = 4;

/// Sends `msg` with `fds`.
pub fn send<M: prost::Message>(
    sock: &UnixStream,
    msg: &M,
    fds: &[BorrowedFd<'_>],
) -> io::Result<()> {
    let body = msg.encode_to_vec();
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&body);
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let cmsgs: &[ControlMessage<'_>] = if raw.is_empty() { &[] } else { &cmsg };
    let mut sent = 0;
    while sent < buf.len() {
        let n = sendmsg::<()>(
            sock.as_raw_fd(),
            &[IoSlice::new(&buf[sent..])],
            if sent == 0 { cmsgs } else { &[] },
            MsgFlags::MSG_NOSIGNAL,
            None,
        )
        .map_err(io::Error::from)?;
        sent += n;
    }
    Ok(())
}

/// Receives one message and the descriptors that came with it. A clean end of stream before
/// the message is `UnexpectedEof`.
pub fn recv<M: prost::Message + Default>(sock: &UnixStream) -> io::Result<(M, Vec<OwnedFd>)> {
    let mut len = [0u8; 4];
    let mut fds = Vec::new();
    let got = {
        let mut iov = [IoSliceMut::new(&mut len)];
        let mut space = nix::cmsg_space!([RawFd; MAX_FDS]);
        let msg = loop {
            match recvmsg::<()>(
                sock.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => break r.map_err(io::Error::from)?,
            }
        };
        for c in msg.cmsgs().map_err(io::Error::from)? {
            if let ControlMessageOwned::ScmRights(raw) = c {
                for fd in raw {
                    // SAFETY: the kernel has just installed `fd` in our table for this
                    // message; nothing else refers to it, so we are its only owner.
                    #[allow(unsafe_code)]
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        if msg.flags.contains(MsgFlags::MSG_CTRUNC) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "too many descriptors in a control message",
            ));
        }
        msg.bytes
    };
    if got == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the peer closed the connection",
        ));
    }
    let mut r = sock;
    r.read_exact(&mut len[got..])?;
    let n = u32::from_be_bytes(len) as usize;
    if n > MAX_MESSAGE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("control message of {n} bytes is too long"),
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    let m = M::decode(body.as_slice()).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad control message: {e}"),
        )
    })?;
    Ok((m, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{control_request, Attach, ControlRequest};
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn round_trip_with_descriptors() {
        let (a, b) = UnixStream::pair().unwrap();
        let f = std::fs::File::open("/dev/null").unwrap();
        let msg = ControlRequest {
            kind: Some(control_request::Kind::Attach(Attach {
                session_id: 7,
                pid: 42,
                has_log: true,
                resume: true,
                has_journal: false,
                landlock_paths: vec!["/home/me/project".into()],
            })),
        };
        send(&a, &msg, &[f.as_fd(), f.as_fd()]).unwrap();
        send(&a, &msg, &[]).unwrap();
        let (got, fds) = recv::<ControlRequest>(&b).unwrap();
        assert_eq!(got, msg);
        assert_eq!(fds.len(), 2);
        let (_, fds) = recv::<ControlRequest>(&b).unwrap();
        assert!(fds.is_empty());
        drop(a);
        assert_eq!(
            recv::<ControlRequest>(&b).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let (mut a, b) = UnixStream::pair().unwrap();
        a.write_all(&[0xff, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(
            recv::<ControlRequest>(&b).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let (mut a, b) = UnixStream::pair().unwrap();
        a.write_all(&[0, 0, 0, 3, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(
            recv::<ControlRequest>(&b).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let (mut a, b) = UnixStream::pair().unwrap();
        a.write_all(&[0, 0, 0, 9, 1]).unwrap();
        drop(a);
        assert_eq!(
            recv::<ControlRequest>(&b).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
