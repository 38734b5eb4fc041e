//! The command's own pseudo-terminal, and raw mode on ours. See pty(7), termios(3),
//! ioctl_tty(2).
//!
//! Raw mode is undone on every way out: when [`RawMode`] drops, from the panic hook, and by
//! [`restore`], which anyone may call before exiting.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Mutex;

/// A terminal's size in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub rows: u16,
    pub cols: u16,
}

/// The size of the terminal on `fd`, if it is one and says.
pub fn size_of(fd: BorrowedFd<'_>) -> Option<Size> {
    // SAFETY: `winsize` is plain data; TIOCGWINSZ fills it and reads nothing else.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one `winsize` to the pointer, which is valid.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_row > 0 && ws.ws_col > 0).then_some(Size {
        rows: ws.ws_row,
        cols: ws.ws_col,
    })
}

/// Sets the size of the terminal on `fd`; for a pty master, the kernel then sends SIGWINCH
/// to the foreground process group of its terminal.
pub fn set_size(fd: BorrowedFd<'_>, s: Size) -> io::Result<()> {
    let ws = libc::winsize {
        ws_row: s.rows,
        ws_col: s.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer, which is valid.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &ws) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A new pseudo-terminal pair; both ends close on exec (the child dups the follower onto its
/// standard streams, which clears the flag there).
pub struct Pty {
    pub leader: OwnedFd,
    pub follower: OwnedFd,
    /// The follower's device, for example `/dev/pts/7`.
    pub path: PathBuf,
}

pub fn open(size: Size) -> io::Result<Pty> {
    // SAFETY: posix_openpt takes flags and returns a new descriptor or -1.
    let m = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if m < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `m` is a fresh descriptor that nothing else owns.
    let leader = unsafe { OwnedFd::from_raw_fd(m) };
    // SAFETY: grantpt and unlockpt take the leader's descriptor only.
    if unsafe { libc::grantpt(m) } != 0 || unsafe { libc::unlockpt(m) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // TIOCGPTPEER opens the follower through the leader itself, with no path lookup that
    // could be raced (Linux 4.13).
    // SAFETY: TIOCGPTPEER takes open flags and returns a new descriptor or -1.
    let f = unsafe {
        libc::ioctl(
            m,
            libc::TIOCGPTPEER,
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if f < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `f` is a fresh descriptor that nothing else owns.
    let follower = unsafe { OwnedFd::from_raw_fd(f) };
    let path = std::fs::read_link(format!("/proc/self/fd/{f}"))?;
    // SAFETY: as in `size_of`, with the follower's descriptor.
    set_size(unsafe { BorrowedFd::borrow_raw(f) }, size)?;
    Ok(Pty {
        leader,
        follower,
        path,
    })
}

/// The settings raw mode replaced, to put back.
static SAVED: Mutex<Option<(RawFd, libc::termios)>> = Mutex::new(None);

/// Whether raw mode is on.
pub fn is_raw() -> bool {
    SAVED.lock().map(|s| s.is_some()).unwrap_or(false)
}

/// Puts back the terminal settings raw mode replaced, if it is on. Safe to call twice.
pub fn restore() {
    let saved = match SAVED.lock() {
        Ok(mut s) => s.take(),
        Err(p) => p.into_inner().take(),
    };
    if let Some((fd, t)) = saved {
        // SAFETY: `t` is the termios read from `fd` by `RawMode::enter`.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &t) };
    }
}

/// Raw mode on a terminal for as long as this lives: every byte the user types reaches us
/// (and through us, the command) as typed.
pub struct RawMode(());

impl RawMode {
    pub fn enter(fd: BorrowedFd<'_>) -> io::Result<RawMode> {
        let fd = fd.as_raw_fd();
        // SAFETY: termios is plain data that tcgetattr fills.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `t` is valid for writing.
        if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        *SAVED.lock().unwrap() = Some((fd, t));
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let mut raw = t;
        // SAFETY: cfmakeraw edits the termios it is given.
        unsafe { libc::cfmakeraw(&mut raw) };
        // SAFETY: `raw` is a valid termios.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            let e = io::Error::last_os_error();
            SAVED.lock().unwrap().take();
            return Err(e);
        }
        Ok(RawMode(()))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        restore();
    }
}
