use super::jobs::parse_stat;
use super::*;

#[test]
fn devices_are_decoded_as_the_kernel_encodes_them() {
    // new_encode_dev(136:4), as TIOCGDEV said of a pty master here.
    assert_eq!(decode_dev(34820), libc::makedev(136, 4));
    // A minor over 255 keeps its high bits above the major.
    let nr = (0x1234 & 0xff) | (136 << 8) | ((0x1234 & !0xff) << 12);
    assert_eq!(decode_dev(nr), libc::makedev(136, 0x1234));
}

#[test]
fn ptys_are_named_by_their_index() {
    assert_eq!(pty_index(libc::makedev(136, 3)), Some(3));
    assert_eq!(pty_index(libc::makedev(137, 1)), Some(257));
    assert_eq!(pty_index(libc::makedev(4, 1)), None);
    assert_eq!(path_of(libc::makedev(136, 7)), Path::new("/dev/pts/7"));
    assert_eq!(path_of(libc::makedev(143, 255)), Path::new("/dev/pts/2047"));
    // Another terminal by its name in sysfs; a device sysfs does not know, by its numbers.
    if Path::new("/sys/dev/char/5:0").exists() {
        assert_eq!(path_of(libc::makedev(5, 0)), Path::new("/dev/tty"));
    }
    assert_eq!(
        path_of(libc::makedev(4095, 1)),
        Path::new("/dev/char/4095:1")
    );
}

#[test]
fn a_stat_line_with_a_strange_name_is_parsed() {
    let line = "4242 (a) b (c) S 100 4242 99 34820 4300 4194304 0 0";
    let st = parse_stat(line).unwrap();
    assert_eq!(
        (st.state, st.ppid, st.pgrp, st.session, st.tty, st.tpgid),
        (b'S', 100, 4242, 99, libc::makedev(136, 4), 4300)
    );
    let none = parse_stat("1 (x) S 0 1 1 0 -1 0").unwrap();
    assert_eq!((none.tty, none.tpgid), (0, -1));
    assert!(parse_stat("1 (x) S 0").is_none());
}

#[test]
fn a_process_without_that_terminal_goes_on() {
    // The tests' own process: whatever its terminal, it has none with this device.
    let me = std::process::id() as i32;
    assert_eq!(job_control(me, libc::makedev(4095, 4095)), Job::Proceed);
}

/// A pty this process makes is its own: its master is held by the caller itself, found only
/// when the chain of processes reaches the launcher.
#[test]
fn a_pty_is_owned_where_its_master_is_held() {
    use std::os::fd::AsFd;
    let master = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/ptmx")
        .unwrap();
    let me = std::process::id() as i32;
    let tty = Tty::of_held(master.as_fd()).unwrap();
    assert!(tty.master && tty.is_pty());
    let index = pty_index(tty.dev).unwrap();
    // Our parent stands for the launcher.
    let parent = crate::process::parent_of(me).unwrap();
    let own = Own::new(&[], parent);
    let slave = Tty {
        dev: tty.dev,
        master: false,
    };
    assert!(own.owns(me, slave));
    // Any other pty index is not held; nor is this one for a chain that misses the launcher.
    let other = Tty {
        dev: libc::makedev(136, (index + 1) % 256),
        master: false,
    };
    assert!(!own.owns(me, other));
    assert!(!Own::new(&[], -5).owns(me, slave));
    // Registered by name, found by device.
    let named = Own::new(&[slave.path()], -5);
    assert!(named.registered(tty.dev) && named.owns(me, slave));
    drop(master);
    // Once the master is closed nobody holds it.
    assert!(!own.owns(me, slave));
}
