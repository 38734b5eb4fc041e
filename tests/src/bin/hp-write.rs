//! `hp-write`: makes each write-class syscall directly (raw `syscall(2)`, not through what
//! coreutils happens to call), so the tests can check every one against the filter.
//!
//! - `hp-write setup DIR`: creates the fixtures the operations need (run it unsupervised).
//! - `hp-write run DIR [OP...]`: performs the operations (all by default) on paths in DIR and
//!   prints one line per operation: `OP ok` or `OP err ERRNO`.
//! - `hp-write ops`: lists the operations and the syscall each makes.
//! - `hp-write reads FILE N`: opens FILE read-only N times (openat, open and openat2).
//! - `hp-write threads DIR N`: N threads each create DIR/t<i> at once; prints `created K`.
//! - `hp-write signals DIR N`: creates DIR/s<i> N times while another thread keeps sending
//!   the writer SIGURG (with a handler, no SA_RESTART), retrying on EINTR as a Go program
//!   would; prints `ok K err E eintr X`.
//! - `hp-write touch PATH`: one openat(O_WRONLY|O_CREAT); prints `ok` or `err ERRNO`.
//! - `hp-write attach PID`: ptrace(PTRACE_SEIZE) on PID (the tracer's exit detaches it);
//!   prints `ok` or `err ERRNO`.
//! - `hp-write getfd PID FD`: pidfd_getfd of PID's descriptor FD; prints `ok` or `err ERRNO`.
//! - `hp-write vmwrite PID`: process_vm_writev of one byte to address 0x1000 in PID: `err 14`
//!   (EFAULT) means the access itself was allowed, `err 1` (EPERM) that it was refused.
//! - `hp-write every DIR N MS`: creates DIR/e<i> N times, one every MS milliseconds, printing
//!   `e<i> ok` or `e<i> err ERRNO` for each (flushed at once): a process that outlives its
//!   session.
//! - `hp-write hop SECS [TAG]`: prints `hopping PID`, then ignores SIGTERM, SIGHUP and SIGINT and,
//!   for SECS seconds, forks and exits over and over (each child leaves the session and group
//!   with `setsid`), as fast as it can: a chain of new pids that a single round of SIGKILL
//!   over a list of pids misses. Every link keeps the standard streams open. TAG is ignored
//!   (it tells a test's chain apart in `/proc/PID/cmdline`).
//! - `hp-write sandboxed PROGRAM ARGS...`: sets no_new_privs and installs a seccomp filter
//!   that allows everything, then runs PROGRAM: a process under a filter of its own, as a
//!   process that outlived its hallpass session is under that session's.
//! - `hp-write dirfd-reuse A B`: opens directory A, creates `a` relative to it, closes it,
//!   opens directory B (the same descriptor number, it checks), creates `b` relative to it;
//!   prints `a RESULT`, `reused` (or `not reused N M`), `b RESULT`.
//! - `hp-write dirfd-rename DIR NEW HOW`: opens directory DIR, creates `a` relative to it,
//!   renames DIR (or, for HOW `parent`, DIR's parent) to NEW, itself (`self`, `parent`) or
//!   through `mv` (`mv`), then creates `b` relative to the same descriptor; prints `a
//!   RESULT`, `rename RESULT`, `b RESULT`.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

type Op = (&'static str, &'static str, fn(&Path) -> i64);

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

use hallpass_tests::sys::cs;

use hallpass_tests::sys;

const AT_FDCWD: libc::c_long = libc::AT_FDCWD as libc::c_long;
const WR_CREAT: libc::c_long = (libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC) as libc::c_long;

fn close_if_fd(r: i64) -> i64 {
    if r >= 0 {
        // SAFETY: `r` is a descriptor the syscall just returned to us.
        unsafe { libc::close(r as i32) };
        0
    } else {
        r
    }
}

fn p(d: &Path, name: &str) -> CString {
    c(&d.join(name))
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

#[repr(C)]
struct XattrArgs {
    value: u64,
    size: u32,
    flags: u32,
}

const SYS_FCHMODAT2: libc::c_long = 452;
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_REMOVEXATTRAT: libc::c_long = 466;
const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
const FS_IOC_SETFLAGS: libc::c_ulong = 0x4008_6602;

#[cfg(target_arch = "x86_64")]
mod legacy {
    pub const OPEN: libc::c_long = libc::SYS_open;
    pub const CREAT: libc::c_long = libc::SYS_creat;
    pub const MKDIR: libc::c_long = libc::SYS_mkdir;
    pub const RMDIR: libc::c_long = libc::SYS_rmdir;
    pub const UNLINK: libc::c_long = libc::SYS_unlink;
    pub const RENAME: libc::c_long = libc::SYS_rename;
    pub const LINK: libc::c_long = libc::SYS_link;
    pub const SYMLINK: libc::c_long = libc::SYS_symlink;
    pub const MKNOD: libc::c_long = libc::SYS_mknod;
    pub const CHMOD: libc::c_long = libc::SYS_chmod;
    pub const CHOWN: libc::c_long = libc::SYS_chown;
    pub const LCHOWN: libc::c_long = libc::SYS_lchown;
    pub const UTIME: libc::c_long = libc::SYS_utime;
    pub const UTIMES: libc::c_long = libc::SYS_utimes;
    pub const FUTIMESAT: libc::c_long = libc::SYS_futimesat;
}

fn ops() -> Vec<Op> {
    let mut v: Vec<Op> = vec![
        ("openat", "openat", |d| {
            close_if_fd(sys!(
                libc::SYS_openat,
                AT_FDCWD,
                p(d, "openat.new").as_ptr(),
                WR_CREAT,
                0o644
            ))
        }),
        ("openat-dirfd", "openat", |d| {
            let dir = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                c(d).as_ptr(),
                (libc::O_PATH | libc::O_DIRECTORY) as libc::c_long
            );
            if dir < 0 {
                return dir;
            }
            let r = close_if_fd(sys!(
                libc::SYS_openat,
                dir,
                cs("dirfd.new").as_ptr(),
                WR_CREAT,
                0o644
            ));
            close_if_fd(dir);
            r
        }),
        ("openat-trunc", "openat", |d| {
            close_if_fd(sys!(
                libc::SYS_openat,
                AT_FDCWD,
                p(d, "trunc.file").as_ptr(),
                (libc::O_WRONLY | libc::O_TRUNC) as libc::c_long
            ))
        }),
        ("openat-rdwr", "openat", |d| {
            close_if_fd(sys!(
                libc::SYS_openat,
                AT_FDCWD,
                p(d, "trunc.file").as_ptr(),
                libc::O_RDWR as libc::c_long
            ))
        }),
        ("openat-tmpfile", "openat", |d| {
            close_if_fd(sys!(
                libc::SYS_openat,
                AT_FDCWD,
                c(d).as_ptr(),
                (libc::O_TMPFILE | libc::O_WRONLY) as libc::c_long,
                0o600
            ))
        }),
        ("openat2", "openat2", |d| {
            let how = OpenHow {
                flags: WR_CREAT as u64,
                mode: 0o644,
                resolve: 0,
            };
            close_if_fd(sys!(
                libc::SYS_openat2,
                AT_FDCWD,
                p(d, "openat2.new").as_ptr(),
                &how as *const OpenHow,
                24
            ))
        }),
        ("mkdirat", "mkdirat", |d| {
            sys!(
                libc::SYS_mkdirat,
                AT_FDCWD,
                p(d, "mkdirat.new").as_ptr(),
                0o755
            )
        }),
        ("unlinkat", "unlinkat", |d| {
            sys!(
                libc::SYS_unlinkat,
                AT_FDCWD,
                p(d, "unlinkat.file").as_ptr(),
                0
            )
        }),
        ("unlinkat-dir", "unlinkat", |d| {
            sys!(
                libc::SYS_unlinkat,
                AT_FDCWD,
                p(d, "unlinkat.dir").as_ptr(),
                libc::AT_REMOVEDIR as libc::c_long
            )
        }),
        ("renameat", "renameat", |d| {
            sys!(
                libc::SYS_renameat,
                AT_FDCWD,
                p(d, "renameat.src").as_ptr(),
                AT_FDCWD,
                p(d, "renameat.dst").as_ptr()
            )
        }),
        ("renameat2", "renameat2", |d| {
            sys!(
                libc::SYS_renameat2,
                AT_FDCWD,
                p(d, "renameat2.src").as_ptr(),
                AT_FDCWD,
                p(d, "renameat2.dst").as_ptr(),
                0
            )
        }),
        ("linkat", "linkat", |d| {
            sys!(
                libc::SYS_linkat,
                AT_FDCWD,
                p(d, "linkat.src").as_ptr(),
                AT_FDCWD,
                p(d, "linkat.dst").as_ptr(),
                0
            )
        }),
        ("symlinkat", "symlinkat", |d| {
            sys!(
                libc::SYS_symlinkat,
                cs("target").as_ptr(),
                AT_FDCWD,
                p(d, "symlinkat.new").as_ptr()
            )
        }),
        ("mknodat", "mknodat", |d| {
            sys!(
                libc::SYS_mknodat,
                AT_FDCWD,
                p(d, "mknodat.fifo").as_ptr(),
                (libc::S_IFIFO | 0o644) as libc::c_long,
                0
            )
        }),
        ("fchmodat", "fchmodat", |d| {
            sys!(
                libc::SYS_fchmodat,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                0o600
            )
        }),
        ("fchmodat2", "fchmodat2", |d| {
            sys!(
                SYS_FCHMODAT2,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                0o644,
                0
            )
        }),
        ("fchownat", "fchownat", |d| {
            // SAFETY: getuid and getgid cannot fail.
            let (u, g) = unsafe { (libc::getuid(), libc::getgid()) };
            sys!(
                libc::SYS_fchownat,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                u as libc::c_long,
                g as libc::c_long,
                0
            )
        }),
        ("truncate", "truncate", |d| {
            sys!(libc::SYS_truncate, p(d, "meta.file").as_ptr(), 0)
        }),
        ("utimensat", "utimensat", |d| {
            sys!(
                libc::SYS_utimensat,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                0,
                0
            )
        }),
        ("setxattr", "setxattr", |d| {
            sys!(
                libc::SYS_setxattr,
                p(d, "meta.file").as_ptr(),
                cs("user.hp").as_ptr(),
                b"1".as_ptr(),
                1,
                0
            )
        }),
        ("lsetxattr", "lsetxattr", |d| {
            sys!(
                libc::SYS_lsetxattr,
                p(d, "meta.file").as_ptr(),
                cs("user.hp2").as_ptr(),
                b"1".as_ptr(),
                1,
                0
            )
        }),
        ("removexattr", "removexattr", |d| {
            sys!(
                libc::SYS_removexattr,
                p(d, "xattr.file").as_ptr(),
                cs("user.rm1").as_ptr()
            )
        }),
        ("lremovexattr", "lremovexattr", |d| {
            sys!(
                libc::SYS_lremovexattr,
                p(d, "xattr.file").as_ptr(),
                cs("user.rm2").as_ptr()
            )
        }),
        ("setxattrat", "setxattrat", |d| {
            let a = XattrArgs {
                value: b"1".as_ptr() as u64,
                size: 1,
                flags: 0,
            };
            sys!(
                SYS_SETXATTRAT,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                0,
                cs("user.hp3").as_ptr(),
                &a as *const XattrArgs,
                16
            )
        }),
        ("removexattrat", "removexattrat", |d| {
            sys!(
                SYS_REMOVEXATTRAT,
                AT_FDCWD,
                p(d, "xattr.file").as_ptr(),
                0,
                cs("user.rm3").as_ptr()
            )
        }),
        ("bind", "bind", |d| {
            let s = sys!(
                libc::SYS_socket,
                libc::AF_UNIX as libc::c_long,
                libc::SOCK_STREAM as libc::c_long,
                0
            );
            if s < 0 {
                return s;
            }
            // SAFETY: sockaddr_un is plain data; zero is a valid value.
            let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
            sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
            let path = d.join("bind.sock");
            for (i, b) in path.as_os_str().as_bytes().iter().enumerate() {
                sa.sun_path[i] = *b as libc::c_char;
            }
            let r = sys!(
                libc::SYS_bind,
                s,
                &sa as *const libc::sockaddr_un,
                std::mem::size_of::<libc::sockaddr_un>() as libc::c_long
            );
            close_if_fd(s);
            r
        }),
        ("ioctl-setflags", "ioctl", |d| {
            let fd = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                p(d, "meta.file").as_ptr(),
                libc::O_RDONLY as libc::c_long
            );
            if fd < 0 {
                return fd;
            }
            let mut flags: libc::c_long = 0;
            sys!(
                libc::SYS_ioctl,
                fd,
                FS_IOC_GETFLAGS,
                &mut flags as *mut libc::c_long
            );
            let r = sys!(
                libc::SYS_ioctl,
                fd,
                FS_IOC_SETFLAGS,
                &flags as *const libc::c_long
            );
            close_if_fd(fd);
            r
        }),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend_from_slice(&[
        (
            "open",
            "open",
            (|d| {
                close_if_fd(sys!(
                    legacy::OPEN,
                    p(d, "open.new").as_ptr(),
                    WR_CREAT,
                    0o644
                ))
            }) as fn(&Path) -> i64,
        ),
        ("creat", "creat", |d| {
            close_if_fd(sys!(legacy::CREAT, p(d, "creat.new").as_ptr(), 0o644))
        }),
        ("mkdir", "mkdir", |d| {
            sys!(legacy::MKDIR, p(d, "mkdir.new").as_ptr(), 0o755)
        }),
        ("rmdir", "rmdir", |d| {
            sys!(legacy::RMDIR, p(d, "rmdir.dir").as_ptr())
        }),
        ("unlink", "unlink", |d| {
            sys!(legacy::UNLINK, p(d, "unlink.file").as_ptr())
        }),
        ("rename", "rename", |d| {
            sys!(
                legacy::RENAME,
                p(d, "rename.src").as_ptr(),
                p(d, "rename.dst").as_ptr()
            )
        }),
        ("link", "link", |d| {
            sys!(
                legacy::LINK,
                p(d, "link.src").as_ptr(),
                p(d, "link.dst").as_ptr()
            )
        }),
        ("symlink", "symlink", |d| {
            sys!(
                legacy::SYMLINK,
                cs("target").as_ptr(),
                p(d, "symlink.new").as_ptr()
            )
        }),
        ("mknod", "mknod", |d| {
            sys!(
                legacy::MKNOD,
                p(d, "mknod.fifo").as_ptr(),
                (libc::S_IFIFO | 0o644) as libc::c_long,
                0
            )
        }),
        ("chmod", "chmod", |d| {
            sys!(legacy::CHMOD, p(d, "meta.file").as_ptr(), 0o644)
        }),
        ("chown", "chown", |d| {
            // SAFETY: getuid and getgid cannot fail.
            let (u, g) = unsafe { (libc::getuid(), libc::getgid()) };
            sys!(
                legacy::CHOWN,
                p(d, "meta.file").as_ptr(),
                u as libc::c_long,
                g as libc::c_long
            )
        }),
        ("lchown", "lchown", |d| {
            // SAFETY: getuid and getgid cannot fail.
            let (u, g) = unsafe { (libc::getuid(), libc::getgid()) };
            sys!(
                legacy::LCHOWN,
                p(d, "meta.file").as_ptr(),
                u as libc::c_long,
                g as libc::c_long
            )
        }),
        ("utime", "utime", |d| {
            sys!(legacy::UTIME, p(d, "meta.file").as_ptr(), 0)
        }),
        ("utimes", "utimes", |d| {
            sys!(legacy::UTIMES, p(d, "meta.file").as_ptr(), 0)
        }),
        ("futimesat", "futimesat", |d| {
            sys!(legacy::FUTIMESAT, AT_FDCWD, p(d, "meta.file").as_ptr(), 0)
        }),
    ]);
    v
}

fn setup(d: &Path) {
    std::fs::create_dir_all(d).unwrap();
    for f in [
        "trunc.file",
        "unlinkat.file",
        "unlink.file",
        "renameat.src",
        "renameat2.src",
        "rename.src",
        "linkat.src",
        "link.src",
        "meta.file",
        "xattr.file",
    ] {
        std::fs::write(d.join(f), b"x").unwrap();
    }
    for dir in ["rmdir.dir", "unlinkat.dir"] {
        std::fs::create_dir_all(d.join(dir)).unwrap();
    }
    for (i, name) in ["user.rm1", "user.rm2", "user.rm3"].iter().enumerate() {
        let path = p(d, "xattr.file");
        let r = sys!(
            libc::SYS_setxattr,
            path.as_ptr(),
            cs(name).as_ptr(),
            b"1".as_ptr(),
            1,
            0
        );
        if r < 0 && i == 0 {
            eprintln!("hp-write: setup: user xattrs unsupported here ({})", -r);
        }
    }
}

fn errname(e: i64) -> String {
    format!("err {}", -e)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| {
        args.get(i)
            .cloned()
            .unwrap_or_else(|| panic!("usage: see the top of hp-write.rs"))
    };
    match arg(1).as_str() {
        "setup" => setup(Path::new(&arg(2))),
        "ops" => {
            for (name, syscall, _) in ops() {
                println!("{name} {syscall}");
            }
        }
        "run" => {
            let d = PathBuf::from(arg(2));
            let only: Vec<&String> = args[3..].iter().collect();
            for (name, _, f) in ops() {
                if !only.is_empty() && !only.iter().any(|o| *o == name) {
                    continue;
                }
                let r = f(&d);
                println!(
                    "{name} {}",
                    if r >= 0 { "ok".to_string() } else { errname(r) }
                );
            }
        }
        "reads" => {
            let f = c(Path::new(&arg(2)));
            let n: usize = arg(3).parse().unwrap();
            let mut failed = 0;
            for _ in 0..n {
                if close_if_fd(sys!(
                    libc::SYS_openat,
                    AT_FDCWD,
                    f.as_ptr(),
                    (libc::O_RDONLY | libc::O_CLOEXEC) as libc::c_long
                )) < 0
                {
                    failed += 1;
                }
                #[cfg(target_arch = "x86_64")]
                if close_if_fd(sys!(
                    legacy::OPEN,
                    f.as_ptr(),
                    libc::O_RDONLY as libc::c_long
                )) < 0
                {
                    failed += 1;
                }
            }
            println!("failed {failed}");
        }
        "threads" => {
            let d = PathBuf::from(arg(2));
            let n: usize = arg(3).parse().unwrap();
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
            let hs: Vec<_> = (0..n)
                .map(|i| {
                    let d = d.clone();
                    let b = barrier.clone();
                    std::thread::spawn(move || {
                        b.wait();
                        close_if_fd(sys!(
                            libc::SYS_openat,
                            AT_FDCWD,
                            p(&d, &format!("t{i}")).as_ptr(),
                            WR_CREAT,
                            0o644
                        ))
                    })
                })
                .collect();
            let results: Vec<i64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
            println!("created {}", results.iter().filter(|r| **r == 0).count());
            for (i, r) in results.iter().enumerate() {
                if *r != 0 {
                    println!("t{i} {}", errname(*r));
                }
            }
        }
        "signals" => signals(Path::new(&arg(2)), arg(3).parse().unwrap()),
        "attach" => {
            let pid: libc::pid_t = arg(2).parse().unwrap();
            let r = sys!(libc::SYS_ptrace, libc::PTRACE_SEIZE, pid, 0, 0);
            println!("{}", if r >= 0 { "ok".to_string() } else { errname(r) });
        }
        "getfd" => {
            let pid: libc::pid_t = arg(2).parse().unwrap();
            let fd: libc::c_int = arg(3).parse().unwrap();
            let pidfd = sys!(libc::SYS_pidfd_open, pid, 0);
            let r = if pidfd < 0 {
                pidfd
            } else {
                close_if_fd(sys!(libc::SYS_pidfd_getfd, pidfd, fd, 0))
            };
            println!("{}", if r >= 0 { "ok".to_string() } else { errname(r) });
        }
        "vmwrite" => {
            let pid: libc::pid_t = arg(2).parse().unwrap();
            let byte = [0u8; 1];
            let local = libc::iovec {
                iov_base: byte.as_ptr() as *mut libc::c_void,
                iov_len: 1,
            };
            let remote = libc::iovec {
                iov_base: 0x1000 as *mut libc::c_void,
                iov_len: 1,
            };
            let r = sys!(
                libc::SYS_process_vm_writev,
                pid,
                &local as *const libc::iovec,
                1,
                &remote as *const libc::iovec,
                1,
                0
            );
            println!("{}", if r >= 0 { "ok".to_string() } else { errname(r) });
        }
        "every" => {
            use std::io::Write;
            let d = PathBuf::from(arg(2));
            let n: usize = arg(3).parse().unwrap();
            let ms: u64 = arg(4).parse().unwrap();
            for i in 0..n {
                let r = close_if_fd(sys!(
                    libc::SYS_openat,
                    AT_FDCWD,
                    p(&d, &format!("e{i}")).as_ptr(),
                    WR_CREAT,
                    0o644
                ));
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "e{i} {}",
                    if r >= 0 { "ok".to_string() } else { errname(r) }
                );
                let _ = out.flush();
                drop(out);
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
        }
        "touch" => {
            let r = close_if_fd(sys!(
                libc::SYS_openat,
                AT_FDCWD,
                c(Path::new(&arg(2))).as_ptr(),
                WR_CREAT,
                0o644
            ));
            println!("{}", if r >= 0 { "ok".to_string() } else { errname(r) });
        }
        "hop" => hop(arg(2).parse().unwrap()),
        "sandboxed" => sandboxed(&args[2..]),
        "dirfd-reuse" => {
            let open_dir = |d: &str| {
                sys!(
                    libc::SYS_openat,
                    AT_FDCWD,
                    cs(d).as_ptr(),
                    (libc::O_RDONLY | libc::O_DIRECTORY) as libc::c_long
                )
            };
            let create = |fd: i64, name: &str| {
                close_if_fd(sys!(
                    libc::SYS_openat,
                    fd,
                    cs(name).as_ptr(),
                    WR_CREAT,
                    0o644
                ))
            };
            let show = |r: i64| if r >= 0 { "ok".to_string() } else { errname(r) };
            let fd = open_dir(&arg(2));
            assert!(fd >= 0, "open {}: {}", arg(2), errname(fd));
            println!("a {}", show(create(fd, "a")));
            // SAFETY: `fd` is ours, opened above.
            unsafe { libc::close(fd as i32) };
            let fd2 = open_dir(&arg(3));
            assert!(fd2 >= 0, "open {}: {}", arg(3), errname(fd2));
            if fd2 == fd {
                println!("reused");
            } else {
                println!("not reused {fd} {fd2}");
            }
            println!("b {}", show(create(fd2, "b")));
        }
        "dirfd-rename" => {
            let (dir, new, how) = (arg(2), arg(3), arg(4));
            let show = |r: i64| if r >= 0 { "ok".to_string() } else { errname(r) };
            let fd = sys!(
                libc::SYS_openat,
                AT_FDCWD,
                cs(&dir).as_ptr(),
                (libc::O_RDONLY | libc::O_DIRECTORY) as libc::c_long
            );
            assert!(fd >= 0, "open {dir}: {}", errname(fd));
            let create = |name: &str| {
                close_if_fd(sys!(
                    libc::SYS_openat,
                    fd,
                    cs(name).as_ptr(),
                    WR_CREAT,
                    0o644
                ))
            };
            println!("a {}", show(create("a")));
            let from = match how.as_str() {
                "parent" => Path::new(&dir).parent().unwrap().to_path_buf(),
                _ => PathBuf::from(&dir),
            };
            let r = match how.as_str() {
                "mv" => {
                    let st = std::process::Command::new("mv")
                        .arg(&from)
                        .arg(&new)
                        .status()
                        .unwrap();
                    if st.success() {
                        0
                    } else {
                        -1
                    }
                }
                _ => sys!(
                    libc::SYS_renameat,
                    AT_FDCWD,
                    c(&from).as_ptr(),
                    AT_FDCWD,
                    cs(&new).as_ptr()
                ),
            };
            println!("rename {}", show(r));
            println!("b {}", show(create("b")));
        }
        other => {
            eprintln!("hp-write: unknown command {other}");
            std::process::exit(2);
        }
    }
}

extern "C" fn on_signal(_: libc::c_int) {}

fn signals(d: &Path, n: usize) {
    // SAFETY: a zeroed sigaction with a handler that does nothing is valid; installing it
    // affects only this process.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigaction(libc::SIGURG, &sa, std::ptr::null_mut());
    }
    // SAFETY: gettid and getpid cannot fail.
    let (pid, tid) = unsafe {
        (
            libc::getpid(),
            libc::syscall(libc::SYS_gettid) as libc::pid_t,
        )
    };
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let sender = std::thread::spawn(move || {
        let mut sent = 0u64;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: tgkill sends a signal with a handler installed above.
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGURG) };
            sent += 1;
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        sent
    });
    let (mut ok, mut err, mut eintr) = (0, 0, 0);
    for i in 0..n {
        let path = p(d, &format!("s{i}"));
        loop {
            let r = sys!(libc::SYS_openat, AT_FDCWD, path.as_ptr(), WR_CREAT, 0o644);
            if r == -i64::from(libc::EINTR) {
                eintr += 1;
                continue;
            }
            if close_if_fd(r) == 0 {
                ok += 1;
            } else {
                err += 1;
                if r != -i64::from(libc::EACCES) {
                    println!("s{i} {}", errname(r));
                }
            }
            break;
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent = sender.join().unwrap();
    eprintln!("hp-write: sent {sent} signals");
    println!("ok {ok} err {err} eintr {eintr}");
}

fn hop(secs: u64) -> ! {
    use std::io::Write;
    println!("hopping {}", std::process::id());
    let _ = std::io::stdout().flush();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    // SAFETY: ignoring signals affects only this process (and its children, as wanted).
    unsafe {
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    while std::time::Instant::now() < deadline {
        // SAFETY: single-threaded; the child only forks, calls setsid, reads the clock and
        // exits, all async-signal-safe.
        match unsafe { libc::fork() } {
            0 => {
                // SAFETY: no memory is passed.
                unsafe { libc::setsid() };
            }
            // The parent's part is done; a failed fork (EAGAIN) tries again.
            p if p > 0 => {
                // SAFETY: exiting without running destructors, as a forked process should.
                unsafe { libc::_exit(0) }
            }
            _ => {}
        }
    }
    // SAFETY: as above.
    unsafe { libc::_exit(0) }
}

fn sandboxed(argv: &[String]) -> ! {
    const SECCOMP_SET_MODE_FILTER: libc::c_long = 1;
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    let mut allow = [libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ALLOW,
    }];
    let prog = libc::sock_fprog {
        len: 1,
        filter: allow.as_mut_ptr(),
    };
    // SAFETY: no memory is passed.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        panic!("no_new_privs: {}", std::io::Error::last_os_error());
    }
    let r = sys!(
        libc::SYS_seccomp,
        SECCOMP_SET_MODE_FILTER,
        0,
        &prog as *const libc::sock_fprog
    );
    assert_eq!(r, 0, "seccomp: {}", errname(r));
    let args: Vec<CString> = argv.iter().map(cs).collect();
    let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: `ptrs` is a NULL-terminated array of live NUL-terminated strings.
    unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
    panic!(
        "cannot run {}: {}",
        argv[0],
        std::io::Error::last_os_error()
    );
}
