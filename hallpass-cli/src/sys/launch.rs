//! Forks the command's process. The child installs the session's seccomp filter with a new
//! listener, hands the listener to us over a socket pair, and waits; it execs only when we say
//! the daemon has attached. Nothing it runs escapes supervision.
//!
//! Between `fork` and `exec` the child allocates nothing and calls only async-signal-safe
//! functions: everything is prepared beforehand in [`Prepared`]. See seccomp(2),
//! seccomp_unotify(2), unix(7).

use std::ffi::{CString, OsString};
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;

use super::landlock::{self, Domain, Entered};
use crate::exit::ExitCode;

// include/uapi/linux/seccomp.h
const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;

/// What the child sends with its listener: the byte says whether it entered strict mode's
/// Landlock write domain.
const LISTENER: u8 = b'L';
const LISTENER_IN_WRITE_DOMAIN: u8 = b'W';

/// What the child reports when a step fails: the step, then the errno.
pub const STAGE_NO_NEW_PRIVS: u8 = b'N';
pub const STAGE_FILTER: u8 = b'F';
pub const STAGE_EXEC: u8 = b'E';
pub const STAGE_TTY: u8 = b'T';

/// A control message with room for one descriptor, laid out as `CMSG_SPACE(sizeof(int))`.
#[repr(C)]
struct FdCmsg {
    hdr: libc::cmsghdr,
    fd: libc::c_int,
    _pad: libc::c_int,
}

/// Everything the child needs, made before the fork.
pub struct Prepared {
    path: CString,
    _argv: Vec<CString>,
    argv_p: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    env_p: Vec<*const libc::c_char>,
    filter: Vec<libc::sock_filter>,
    wait_killable: bool,
    empty_mask: libc::sigset_t,
    /// The terminal to give the command (a pty follower), or -1 to leave its streams alone.
    tty: RawFd,
    /// The Landlock domain the command runs in (see `landlock.rs`).
    landlock: Domain,
}

fn cstring(s: OsString) -> io::Result<CString> {
    CString::new(s.into_vec()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument contains a NUL byte",
        )
    })
}

impl Prepared {
    /// `program` is the resolved path to exec; `filter` the daemon's program as bytes.
    pub fn new(
        program: OsString,
        argv: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
        filter: &[u8],
        wait_killable: bool,
    ) -> io::Result<Prepared> {
        let path = cstring(program)?;
        let argv: Vec<CString> = argv.into_iter().map(cstring).collect::<io::Result<_>>()?;
        let env: Vec<CString> = env
            .into_iter()
            .map(|(k, v)| {
                let mut kv = k;
                kv.push("=");
                kv.push(v);
                cstring(kv)
            })
            .collect::<io::Result<_>>()?;
        let mut argv_p: Vec<_> = argv.iter().map(|a| a.as_ptr()).collect();
        argv_p.push(std::ptr::null());
        let mut env_p: Vec<_> = env.iter().map(|a| a.as_ptr()).collect();
        env_p.push(std::ptr::null());
        if !filter.len().is_multiple_of(8)
            || filter.is_empty()
            || filter.len() / 8 > u16::MAX as usize
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the daemon sent a malformed filter",
            ));
        }
        let filter = filter
            .chunks_exact(8)
            .map(|c| libc::sock_filter {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        // SAFETY: sigemptyset initialises the zeroed set it is given.
        let empty_mask = unsafe {
            let mut m: libc::sigset_t = zeroed();
            libc::sigemptyset(&mut m);
            m
        };
        Ok(Prepared {
            path,
            _argv: argv,
            argv_p,
            _env: env,
            env_p,
            filter,
            wait_killable,
            empty_mask,
            tty: -1,
            landlock: Domain::new(),
        })
    }

    /// Strict mode: runs the command in a Landlock domain that may write beneath `paths`
    /// only, where the kernel can. Returns the paths it will allow (see
    /// [`Domain::allow_writes_beneath`]).
    pub fn allow_writes_beneath(&mut self, paths: &[String]) -> Vec<String> {
        self.landlock.allow_writes_beneath(paths)
    }

    /// Strict mode: keeps the command from abstract Unix sockets outside its session.
    pub fn scope_abstract_sockets(&mut self) {
        self.landlock.scope_abstract_sockets();
    }

    /// Runs the command in a session of its own with `tty` as its controlling terminal and
    /// standard streams. `tty` must stay open until [`spawn`].
    pub fn on_terminal(&mut self, tty: RawFd) {
        self.tty = tty;
    }
}

/// The forked child, stopped before exec.
pub struct Child {
    pub pid: libc::pid_t,
    /// Our end of the socket pair.
    pub sock: OwnedFd,
}

/// Forks the child. It installs the filter and sends us its listener; collect it with
/// [`recv_listener`], then call [`release`] to let it exec.
pub fn spawn(p: &Prepared) -> io::Result<Child> {
    let mut pair = [0 as RawFd; 2];
    // SAFETY: socketpair writes two descriptors into `pair`, which has room for them.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } < 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded, so both descriptors are fresh and ours alone.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    let prog = libc::sock_fprog {
        len: p.filter.len() as u16,
        filter: p.filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: we fork a process that only runs `child`, which uses prepared memory and
    // async-signal-safe calls, and always ends in execve or _exit.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: see `child`; it never returns.
            unsafe { child(p, &prog, theirs.as_raw_fd()) }
        }
        pid => Ok(Child { pid, sock: ours }),
    }
}

/// The child's side. Never returns.
///
/// # Safety
/// Must be called only in a freshly forked child, with `prog` pointing into `p`.
unsafe fn child(p: &Prepared, prog: &libc::sock_fprog, sock: RawFd) -> ! {
    let fail = |stage: u8| -> ! {
        let e = *libc::__errno_location();
        let mut msg = [stage, 0, 0, 0, 0];
        msg[1..].copy_from_slice(&e.to_ne_bytes());
        libc::write(sock, msg.as_ptr().cast(), msg.len());
        libc::_exit(if stage == STAGE_EXEC {
            if e == libc::ENOENT {
                ExitCode::NOT_FOUND
            } else {
                ExitCode::CANNOT_RUN
            }
        } else {
            ExitCode::FAILED
        });
    };
    libc::sigprocmask(libc::SIG_SETMASK, &p.empty_mask, std::ptr::null_mut());
    // The Rust runtime ignores SIGPIPE in the launcher, and an ignored signal stays ignored
    // across exec: the command gets the default back, as it has when run natively (`yes |
    // head -1` ends quietly, not with "Broken pipe").
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    if p.tty >= 0 {
        // A new session, so the terminal can become its controlling one; job control and
        // ^C then work inside it as they would without us.
        if libc::setsid() < 0 || libc::ioctl(p.tty, libc::TIOCSCTTY, 0) != 0 {
            fail(STAGE_TTY);
        }
        for fd in 0..3 {
            if libc::dup2(p.tty, fd) < 0 {
                fail(STAGE_TTY);
            }
        }
    }
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        fail(STAGE_NO_NEW_PRIVS);
    }
    // No core dumps: the kernel would write them where the daemon never sees a write (the
    // cwd, a core_pattern path). Only root could raise the hard limit again, and the filter
    // sends that to the daemon, which refuses it.
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    // A backstop the kernel enforces, best effort (lite mode does not depend on it); in
    // strict mode, where it can, the domain that lets the daemon leave writes to the kernel.
    let entered = landlock::enter(&p.landlock);
    // The listener is handed over by a helper made before the filter: it shares this
    // process's descriptors (CLONE_FILES) but not its filter. Under the filter, strict
    // mode's sendmsg would wait for the very daemon the listener is sent to.
    let mut pipe = [-1; 2];
    if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
        fail(STAGE_FILTER);
    }
    // SAFETY: a fork-like clone (no CLONE_VM, no new stack): the helper runs on its own
    // copy of this memory, makes only async-signal-safe calls, and ends in _exit.
    let helper = libc::syscall(
        libc::SYS_clone,
        libc::CLONE_FILES | libc::SIGCHLD,
        0,
        0,
        0,
        0,
    );
    if helper == 0 {
        // The helper: waits for the listener's number and its byte, sends it, and is done.
        let mut got = [0u8; 5];
        let ok = libc::read(pipe[0], got.as_mut_ptr().cast(), got.len()) == got.len() as isize
            && hand_over(
                sock,
                i32::from_ne_bytes([got[1], got[2], got[3], got[4]]),
                got[0],
            );
        libc::_exit(if ok { 0 } else { 1 });
    }
    if helper < 0 {
        fail(STAGE_FILTER);
    }
    let mut flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if p.wait_killable {
        flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    }
    let mut fd = libc::syscall(
        libc::SYS_seccomp,
        SECCOMP_SET_MODE_FILTER,
        flags,
        prog as *const libc::sock_fprog,
    );
    if fd < 0 && p.wait_killable && *libc::__errno_location() == libc::EINVAL {
        fd = libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            prog as *const libc::sock_fprog,
        );
    }
    if fd < 0 {
        fail(STAGE_FILTER);
    }
    let listener = fd as libc::c_int;
    // The listener's number and one byte that says what domain the child entered, for the
    // helper to send; then its word that it did.
    let byte = if entered == Entered::Writes {
        LISTENER_IN_WRITE_DOMAIN
    } else {
        LISTENER
    };
    let mut word = [byte, 0, 0, 0, 0];
    word[1..].copy_from_slice(&listener.to_ne_bytes());
    let mut status = 0;
    if libc::write(pipe[1], word.as_ptr().cast(), word.len()) != word.len() as isize
        || libc::waitpid(helper as libc::pid_t, &mut status, 0) != helper as libc::pid_t
        || status != 0
    {
        libc::_exit(ExitCode::FAILED);
    }
    libc::close(pipe[0]);
    libc::close(pipe[1]);
    libc::close(listener);
    // Wait for the go: one byte once the daemon has attached, end of file if not.
    let mut go = [0u8];
    if libc::read(sock, go.as_mut_ptr().cast(), 1) != 1 {
        libc::_exit(ExitCode::FAILED);
    }
    libc::execve(p.path.as_ptr(), p.argv_p.as_ptr(), p.env_p.as_ptr());
    fail(STAGE_EXEC);
}

/// Sends `listener` on `sock` with one byte of data, `byte`.
///
/// # Safety
/// Async-signal-safe: called in a forked child, on descriptors it holds.
unsafe fn hand_over(sock: RawFd, listener: RawFd, byte: u8) -> bool {
    let mut byte = [byte];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut cmsg: FdCmsg = zeroed();
    cmsg.hdr.cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
    cmsg.hdr.cmsg_level = libc::SOL_SOCKET;
    cmsg.hdr.cmsg_type = libc::SCM_RIGHTS;
    cmsg.fd = listener;
    let mut msg: libc::msghdr = zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = (&mut cmsg as *mut FdCmsg).cast();
    msg.msg_controllen = libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) as _;
    libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) == 1
}

/// The command's seccomp listener, as the child sent it.
pub struct Listener {
    pub fd: OwnedFd,
    /// The child entered strict mode's Landlock write domain.
    pub write_domain: bool,
}

/// What the child reported instead of a listener.
#[derive(Debug)]
pub struct ChildFailed {
    pub stage: u8,
    pub errno: i32,
}

/// Receives the listener from the child, or the step that failed.
pub fn recv_listener(c: &Child) -> io::Result<Result<Listener, ChildFailed>> {
    let mut data = [0u8; 5];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    // SAFETY: zeroed is a valid (empty) value for these plain C structs.
    let mut cmsg: FdCmsg = unsafe { zeroed() };
    // SAFETY: as above.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = (&mut cmsg as *mut FdCmsg).cast();
    msg.msg_controllen = size_of::<FdCmsg>() as _;
    // SAFETY: msg points at live buffers of the sizes it states.
    let n = unsafe { libc::recvmsg(c.sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n >= 1 && (data[0] == LISTENER || data[0] == LISTENER_IN_WRITE_DOMAIN) {
        let ok = msg.msg_controllen as usize >= size_of::<libc::cmsghdr>()
            && cmsg.hdr.cmsg_level == libc::SOL_SOCKET
            && cmsg.hdr.cmsg_type == libc::SCM_RIGHTS;
        if !ok {
            return Err(io::Error::other("the child sent no listener"));
        }
        // SAFETY: the kernel installed this descriptor for us with the message.
        let fd = unsafe { OwnedFd::from_raw_fd(cmsg.fd) };
        return Ok(Ok(Listener {
            fd,
            write_domain: data[0] == LISTENER_IN_WRITE_DOMAIN,
        }));
    }
    Ok(Err(read_failure(&data[..n as usize])))
}

fn read_failure(data: &[u8]) -> ChildFailed {
    if data.len() == 5 {
        ChildFailed {
            stage: data[0],
            errno: i32::from_ne_bytes([data[1], data[2], data[3], data[4]]),
        }
    } else {
        ChildFailed { stage: 0, errno: 0 }
    }
}

/// Lets the child exec, and returns whether the exec failed (and how).
pub fn release(c: &Child) -> io::Result<Option<ChildFailed>> {
    let go = [1u8];
    // SAFETY: writes one byte from a live buffer.
    if unsafe { libc::write(c.sock.as_raw_fd(), go.as_ptr().cast(), 1) } != 1 {
        return Err(io::Error::last_os_error());
    }
    let mut data = [0u8; 5];
    let mut got = 0;
    loop {
        // SAFETY: reads into the unfilled part of a live buffer.
        let n = unsafe {
            libc::read(
                c.sock.as_raw_fd(),
                data[got..].as_mut_ptr().cast(),
                data.len() - got,
            )
        };
        match n {
            // The socket closed on exec: the command runs.
            0 => break,
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            n => got += n as usize,
        }
        if got == data.len() {
            break;
        }
    }
    Ok((got > 0).then(|| read_failure(&data[..got])))
}

/// Makes this process not dumpable: its `/proc/PID/` entries (descriptors, memory) then
/// belong to root, so processes of the same user (the command) cannot open them.
pub fn not_dumpable() -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE takes an integer flag; no memory is involved.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // The name the daemon knows launchers by (`comm`), whatever the binary is called.
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes, which this is.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"hallpass".as_ptr(), 0, 0, 0) };
    Ok(())
}

/// Makes this process the reaper of its orphaned descendants, so every supervised process
/// stays our descendant (needed to lend `/proc/PID/mem` under Yama, and to wait for them).
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag; no memory is involved.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
