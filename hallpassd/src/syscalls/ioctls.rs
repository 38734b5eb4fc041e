//! The `ioctl` commands the filter and the daemon know: those that only read and pass in the
//! kernel, those refused whatever the descriptor, the file writers strict mode performs, and
//! the commands that change a terminal, which the daemon decides on the terminal they reach.
//!
//! Values from `include/uapi/asm-generic/ioctls.h` (the terminal ones, the same on x86_64
//! and aarch64) and `include/uapi/linux/fs.h`. Anything not listed here goes to the daemon,
//! which decides it as a write of the descriptor's object.

/// ioctl commands that change a file through a descriptor that need not be writable, or that
/// write into one, and that strict mode knows how to perform: `FS_IOC_SETFLAGS` (and its
/// 32-bit form), `FS_IOC_FSSETXATTR`, `FICLONE`, `FICLONERANGE`, `FIDEDUPERANGE`
/// (`include/uapi/linux/fs.h`). Any other command not in [`SAFE_IOCTLS`] is decided as a
/// write of the descriptor's object too; strict mode refuses those it cannot perform.
pub const WRITE_IOCTLS: [u32; 6] = [
    0x4008_6602, // FS_IOC_SETFLAGS = _IOW('f', 2, long)
    0x4004_6602, // FS_IOC32_SETFLAGS = _IOW('f', 2, int)
    0x401c_5820, // FS_IOC_FSSETXATTR = _IOW('X', 32, struct fsxattr)
    0x4004_9409, // FICLONE = _IOW(0x94, 9, int)
    0x4020_940d, // FICLONERANGE = _IOW(0x94, 13, struct file_clone_range)
    0xc018_9436, // FIDEDUPERANGE = _IOWR(0x94, 54, struct file_dedupe_range)
];

/// ioctl commands refused in the kernel (`EPERM`) whatever the descriptor: `TIOCSTI` pushes
/// bytes into a terminal's input, which the user's shell (or the prompt bar) would read as
/// typed; `TIOCLINUX` can do the same on a virtual console (`TIOCL_PASTESEL`); `TIOCCONS`
/// sends the machine's console output to another terminal (root only, as natively).
pub const REFUSED_IOCTLS: [u32; 3] = [
    0x5412, // TIOCSTI
    0x541c, // TIOCLINUX
    0x541d, // TIOCCONS
];

/// `TIOCGPTPEER`: opens the other end of a pty from its master. Harmless, but strict mode
/// makes it itself: its Landlock domain would refuse the kernel's open of `/dev/pts/N`.
pub const TIOCGPTPEER: u32 = 0x5441;
/// `TIOCSCTTY`: makes the terminal the caller's controlling terminal; with argument 1 a root
/// caller steals it from the session that has it (the user's shell), which the filter
/// refuses (`EPERM`, as for a caller without `CAP_SYS_ADMIN`).
pub const TIOCSCTTY: u32 = 0x540e;
/// `TIOCSPGRP`: sets the foreground process group of the caller's controlling terminal.
pub const TIOCSPGRP: u32 = 0x5410;
/// `TIOCGDEV`: the device number of the terminal a descriptor reaches (through `/dev/tty`,
/// `/dev/console` or a pty master, the real one).
pub const TIOCGDEV: u32 = 0x8004_5432;

/// ioctl commands known to change nothing in any file system, nor any terminal, whatever
/// kind of object the descriptor holds: they pass in the kernel. Every other command goes to
/// the daemon: a terminal's settings to [`TTY_IOCTLS`], the rest decided as a write of the
/// descriptor's object when that is a file, a directory or a device (a socket, pipe or
/// anonymous inode has no file to protect). Only commands whose numbers no file system or
/// block driver gives another meaning are listed: the terminal reads ('T',
/// `include/uapi/asm-generic/ioctls.h`), the generic descriptor ones the VFS answers itself,
/// and reads of file, block device and socket attributes. To add one: check that it only
/// reads, or only changes the descriptor, on every kind of object, and add its value with
/// its name.
pub const SAFE_IOCTLS: &[u32] = &[
    // Terminals: reads of attributes, window size, job control, pseudo-terminal set-up.
    0x5401,      // TCGETS
    0x5405,      // TCGETA
    0x540f,      // TIOCGPGRP
    0x5411,      // TIOCOUTQ
    0x5413,      // TIOCGWINSZ
    0x5415,      // TIOCMGET
    0x5424,      // TIOCGETD
    0x5429,      // TIOCGSID
    0x802c_542a, // TCGETS2
    0x8004_5430, // TIOCGPTN
    TIOCGDEV,
    0x8004_5438, // TIOCGPKT
    0x8004_5439, // TIOCGPTLCK
    0x8004_5440, // TIOCGEXCL
    TIOCGPTPEER,
    // Gives up the caller's own controlling terminal: the kernel refuses it on any other
    // (ENOTTY), and the signals a session leader's leaving sends go to its own session.
    0x5422, // TIOCNOTTY
    // The descriptor itself (the VFS answers these before any file system).
    0x541b, // FIONREAD
    0x5421, // FIONBIO
    0x5450, // FIONCLEX
    0x5451, // FIOCLEX
    0x5452, // FIOASYNC
    0x5460, // FIOQSIZE
    // Reads of a file's attributes and layout.
    0x8008_6601, // FS_IOC_GETFLAGS
    0x8004_6601, // FS_IOC32_GETFLAGS
    0x8008_7601, // FS_IOC_GETVERSION
    0x801c_581f, // FS_IOC_FSGETXATTR
    0xc020_660b, // FS_IOC_FIEMAP
    0x8100_9431, // FS_IOC_GETFSLABEL
    0x400c_6615, // FS_IOC_GET_ENCRYPTION_POLICY
    // Reads of a block device's geometry.
    0x8008_1272, // BLKGETSIZE64
    0x1268,      // BLKSSZGET
    0x127b,      // BLKPBSZGET
    0x125e,      // BLKROGET
    0x1260,      // BLKGETSIZE
    0x1278,      // BLKIOMIN
    0x1279,      // BLKIOOPT
    0x127a,      // BLKALIGNOFF
    0x8008_1270, // BLKBSZGET
    0x127c,      // BLKDISCARDZEROES
    0x127e,      // BLKROTATIONAL
    // Reads of a socket's interfaces and state.
    0x8905, // SIOCATMARK
    0x8906, // SIOCGSTAMP
    0x8910, // SIOCGIFNAME
    0x8912, // SIOCGIFCONF
    0x8913, // SIOCGIFFLAGS
    0x8915, // SIOCGIFADDR
    0x891b, // SIOCGIFNETMASK
    0x8921, // SIOCGIFMTU
    0x8927, // SIOCGIFHWADDR
    0x8933, // SIOCGIFINDEX
];

/// How a terminal command's argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtyArg {
    /// None: the argument is ignored.
    Nothing,
    /// A number, in the argument itself.
    Value,
    /// A pointer to this many bytes, which the kernel reads.
    Reads(usize),
}

/// A command that changes a terminal, and what the kernel does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtyIoctl {
    pub cmd: u32,
    pub name: &'static str,
    pub arg: TtyArg,
    /// The kernel's job control applies (`tty_check_change`): on the caller's controlling
    /// terminal, from a background process group, it stops the group with `SIGTTOU`.
    pub job_control: bool,
    /// It may wait until the terminal has sent its output (or a break): never on a pty.
    pub drains: bool,
}

const fn tty(cmd: u32, name: &'static str, arg: TtyArg, jc: bool, drains: bool) -> TtyIoctl {
    TtyIoctl {
        cmd,
        name,
        arg,
        job_control: jc,
        drains,
    }
}

use TtyArg::{Nothing, Reads, Value};

/// `struct termios` (4 flag words, the line discipline, 19 control characters), `struct
/// termios2` (and two speeds), `struct termio` (4 short flag words, the line discipline, 8
/// control characters, padded), `struct winsize`: the same on x86_64 and aarch64.
const TERMIOS: usize = 36;
const TERMIOS2: usize = 44;
const TERMIO: usize = 18;
const WINSIZE: usize = 8;
const INT: usize = 4;

/// The commands that change a terminal: its settings, size, flow, queues, line discipline,
/// modem lines, exclusive use, packet mode and lock (a pty master's), a break, a hangup, its
/// foreground group, and taking it as controlling terminal. The daemon decides them on the
/// terminal the descriptor reaches: the session's own (its pty, the one it was started on,
/// or a pty it made) as natively, any other as a write of that terminal
/// (`crate::terminal`). The kernel's own checks (job control, capabilities) still apply.
pub const TTY_IOCTLS: &[TtyIoctl] = &[
    tty(0x5402, "TCSETS", Reads(TERMIOS), true, false),
    tty(0x5403, "TCSETSW", Reads(TERMIOS), true, true),
    tty(0x5404, "TCSETSF", Reads(TERMIOS), true, true),
    tty(0x5406, "TCSETA", Reads(TERMIO), true, false),
    tty(0x5407, "TCSETAW", Reads(TERMIO), true, true),
    tty(0x5408, "TCSETAF", Reads(TERMIO), true, true),
    tty(0x5409, "TCSBRK", Value, true, true),
    tty(0x540a, "TCXONC", Value, true, false),
    tty(0x540b, "TCFLSH", Value, true, false),
    tty(0x540c, "TIOCEXCL", Nothing, false, false),
    tty(0x540d, "TIOCNXCL", Nothing, false, false),
    tty(TIOCSCTTY, "TIOCSCTTY", Value, false, false),
    tty(TIOCSPGRP, "TIOCSPGRP", Reads(INT), false, false),
    tty(0x5414, "TIOCSWINSZ", Reads(WINSIZE), false, false),
    tty(0x5416, "TIOCMBIS", Reads(INT), false, false),
    tty(0x5417, "TIOCMBIC", Reads(INT), false, false),
    tty(0x5418, "TIOCMSET", Reads(INT), false, false),
    tty(0x541a, "TIOCSSOFTCAR", Reads(INT), false, false),
    tty(0x5420, "TIOCPKT", Reads(INT), false, false),
    tty(0x5423, "TIOCSETD", Reads(INT), true, true),
    tty(0x5425, "TCSBRKP", Value, true, true),
    tty(0x5427, "TIOCSBRK", Nothing, true, true),
    tty(0x5428, "TIOCCBRK", Nothing, true, false),
    tty(0x402c_542b, "TCSETS2", Reads(TERMIOS2), true, false),
    tty(0x402c_542c, "TCSETSW2", Reads(TERMIOS2), true, true),
    tty(0x402c_542d, "TCSETSF2", Reads(TERMIOS2), true, true),
    tty(0x4004_5431, "TIOCSPTLCK", Reads(INT), false, false),
    tty(0x4004_5436, "TIOCSIG", Value, false, false),
    tty(0x5437, "TIOCVHANGUP", Nothing, false, false),
];

/// The terminal command `cmd` (its low 32 bits, as the kernel reads it), if it is one.
pub fn tty_ioctl(cmd: u64) -> Option<&'static TtyIoctl> {
    TTY_IOCTLS.iter().find(|t| t.cmd == cmd as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terminal commands, read and change alike, against the C library's values.
    #[test]
    fn terminal_commands_match_libc() {
        let known: &[(u32, libc::Ioctl)] = &[
            (0x5401, libc::TCGETS),
            (0x5402, libc::TCSETS),
            (0x5403, libc::TCSETSW),
            (0x5404, libc::TCSETSF),
            (0x5405, libc::TCGETA),
            (0x5406, libc::TCSETA),
            (0x5407, libc::TCSETAW),
            (0x5408, libc::TCSETAF),
            (0x5409, libc::TCSBRK),
            (0x540a, libc::TCXONC),
            (0x540b, libc::TCFLSH),
            (0x540c, libc::TIOCEXCL),
            (0x540d, libc::TIOCNXCL),
            (TIOCSCTTY, libc::TIOCSCTTY),
            (0x540f, libc::TIOCGPGRP),
            (TIOCSPGRP, libc::TIOCSPGRP),
            (0x5411, libc::TIOCOUTQ),
            (0x5412, libc::TIOCSTI),
            (0x5413, libc::TIOCGWINSZ),
            (0x5414, libc::TIOCSWINSZ),
            (0x5415, libc::TIOCMGET),
            (0x5416, libc::TIOCMBIS),
            (0x5417, libc::TIOCMBIC),
            (0x5418, libc::TIOCMSET),
            (0x541a, libc::TIOCSSOFTCAR),
            (0x541b, libc::FIONREAD),
            (0x541c, libc::TIOCLINUX),
            (0x541d, libc::TIOCCONS),
            (0x5420, libc::TIOCPKT),
            (0x5422, libc::TIOCNOTTY),
            (0x5423, libc::TIOCSETD),
            (0x5424, libc::TIOCGETD),
            (0x5425, libc::TCSBRKP),
            (0x5427, libc::TIOCSBRK),
            (0x5428, libc::TIOCCBRK),
            (0x5429, libc::TIOCGSID),
            (0x802c_542a, libc::TCGETS2),
            (0x402c_542b, libc::TCSETS2),
            (0x402c_542c, libc::TCSETSW2),
            (0x402c_542d, libc::TCSETSF2),
            (0x8004_5430, libc::TIOCGPTN),
            (0x4004_5431, libc::TIOCSPTLCK),
            (TIOCGDEV, libc::TIOCGDEV),
            (0x4004_5436, libc::TIOCSIG),
            (0x5437, libc::TIOCVHANGUP),
            (0x8004_5438, libc::TIOCGPKT),
            (0x8004_5439, libc::TIOCGPTLCK),
            (0x8004_5440, libc::TIOCGEXCL),
            (TIOCGPTPEER, libc::TIOCGPTPEER),
        ];
        for (ours, theirs) in known {
            assert_eq!(*ours, *theirs as u32, "{ours:#x}");
        }
        let size = |t: &str| match t {
            "termios" => std::mem::size_of::<libc::termios>(),
            _ => std::mem::size_of::<libc::winsize>(),
        };
        // The C library's termios has the speeds at its end; the kernel's TCSETS reads the
        // part before them.
        assert!(size("termios") >= TERMIOS);
        assert_eq!(size("winsize"), WINSIZE);
        assert_eq!(std::mem::size_of::<libc::termios2>(), TERMIOS2);
    }

    /// A command is in one list at most: what only reads passes, what changes is decided,
    /// what is refused is refused.
    #[test]
    fn the_lists_do_not_overlap() {
        for t in TTY_IOCTLS {
            assert!(!SAFE_IOCTLS.contains(&t.cmd), "{}", t.name);
            assert!(!REFUSED_IOCTLS.contains(&t.cmd), "{}", t.name);
            assert!(!WRITE_IOCTLS.contains(&t.cmd), "{}", t.name);
            assert_eq!(tty_ioctl(t.cmd as u64 | 1 << 32), Some(t));
        }
        for c in REFUSED_IOCTLS {
            assert!(!SAFE_IOCTLS.contains(&c));
        }
        let mut seen = std::collections::HashSet::new();
        assert!(TTY_IOCTLS.iter().all(|t| seen.insert(t.cmd)));
        assert!(SAFE_IOCTLS.iter().all(|c| seen.insert(*c)));
    }
}
