//! The command's own pseudo-terminal, and raw mode on ours. See pty(7), termios(3),
//! ioctl_tty(2). Through nix where it has a safe call; the window size and TIOCGPTPEER,
//! which it has none for, are ioctls here.
//!
//! Raw mode is undone on every way out: when [`RawMode`] drops, from the panic hook, and by
//! [`restore`], which anyone may call before exiting.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Mutex;

use nix::fcntl::OFlag;
use nix::pty;
use nix::sys::termios::{self, SetArg, Termios};

/// A terminal's size in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub rows: u16,
    pub cols: u16,
}

/// The size of the terminal on `fd`, if it is one and says.
pub fn size_of(fd: BorrowedFd<'_>) -> Option<Size> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // nix has no safe call for TIOCGWINSZ.
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
    // nix has no safe call for TIOCSWINSZ.
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
    let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let leader = pty::posix_openpt(flags)?;
    pty::grantpt(&leader)?;
    pty::unlockpt(&leader)?;
    // TIOCGPTPEER opens the follower through the leader itself, with no path lookup that
    // could be raced (Linux 4.13); nix has no call for it.
    // SAFETY: TIOCGPTPEER takes open flags and returns a new descriptor or -1.
    let f = unsafe { libc::ioctl(leader.as_raw_fd(), libc::TIOCGPTPEER, flags.bits()) };
    if f < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `f` is a fresh descriptor that nothing else owns.
    let follower = unsafe { OwnedFd::from_raw_fd(f) };
    let path = std::fs::read_link(format!("/proc/self/fd/{f}"))?;
    set_size(follower.as_fd(), size)?;
    Ok(Pty {
        leader: leader.into(),
        follower,
        path,
    })
}

/// The settings of our standard input that raw mode replaced, to put back.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

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
    if let Some(t) = saved {
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSAFLUSH, &t);
    }
}

/// Raw mode on our standard input, a terminal, for as long as this lives: every byte the
/// user types reaches us (and through us, the command) as typed.
pub struct RawMode(());

impl RawMode {
    pub fn enter() -> io::Result<RawMode> {
        let stdin = std::io::stdin();
        let t = termios::tcgetattr(stdin.as_fd())?;
        *SAVED.lock().unwrap() = Some(t.clone());
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let mut raw = t;
        termios::cfmakeraw(&mut raw);
        if let Err(e) = termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw) {
            SAVED.lock().unwrap().take();
            return Err(e.into());
        }
        Ok(RawMode(()))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        restore();
    }
}
