//! Borrowing from the launcher what the daemon may not open itself (Yama): a thread's
//! `/proc/TID/mem`, a copy of one of its descriptors.

use super::*;

/// Lends through the launcher's connection: the daemon asks, the launcher opens
/// `/proc/TID/mem` (it is an ancestor of every supervised process) and sends it back.
pub(super) struct ControlLender<'a>(pub(super) &'a UnixStream);

impl Lender for ControlLender<'_> {
    fn lend(&mut self, tid: i32) -> io::Result<File> {
        Ok(File::from(self.ask(LendRequest {
            tid,
            take_fd: false,
            fd: 0,
        })?))
    }

    fn lend_fd(&mut self, tid: i32, fd: i32) -> io::Result<OwnedFd> {
        self.ask(LendRequest {
            tid,
            take_fd: true,
            fd,
        })
    }
}

impl ControlLender<'_> {
    fn ask(&mut self, req: LendRequest) -> io::Result<OwnedFd> {
        let (tid, copy) = (req.tid, req.take_fd);
        let req = ControlReply {
            kind: Some(control_reply::Kind::Lend(req)),
        };
        control::send(self.0, &req, &[])?;
        let (msg, mut fds) = control::recv::<ControlRequest>(self.0)?;
        match msg.kind {
            Some(hallpass_proto::control_request::Kind::Lent(l))
                if l.tid == tid && l.error == 0 && !l.closed && fds.len() == 1 =>
            {
                let fd = fds.remove(0);
                if copy {
                    self.released(tid)?;
                }
                Ok(fd)
            }
            Some(hallpass_proto::control_request::Kind::Lent(l)) if l.error != 0 => {
                Err(io::Error::from_raw_os_error(l.error))
            }
            _ => Err(unexpected()),
        }
    }

    /// Waits for the launcher's word that it closed its copy of the descriptor it lent
    /// (`LentFd.closed`): the process's own close must end the open file as it would natively.
    fn released(&mut self, tid: i32) -> io::Result<()> {
        match control::recv::<ControlRequest>(self.0)? {
            (
                ControlRequest {
                    kind: Some(hallpass_proto::control_request::Kind::Lent(l)),
                },
                fds,
            ) if l.tid == tid && l.closed && l.error == 0 && fds.is_empty() => Ok(()),
            _ => Err(unexpected()),
        }
    }
}

fn unexpected() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "unexpected reply to a lend request",
    )
}
