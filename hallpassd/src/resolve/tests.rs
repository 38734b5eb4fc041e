use super::*;
use std::collections::HashMap;

const T: Target = Target {
    tid: 11,
    tgid: 10,
    session: 0,
};

/// A tiny file system of symlinks; everything under /e exists, the rest does not.
fn fs<'a>(
    links: &'a HashMap<&'static str, &'static str>,
) -> impl Fn(&Path) -> io::Result<PathBuf> + 'a {
    move |p: &Path| {
        let s = p.to_str().unwrap();
        if let Some(t) = links.get(s) {
            return Ok(PathBuf::from(t));
        }
        if s == "/e"
            || s.starts_with("/e/")
            || s == "/proc"
            || s.starts_with("/proc/10")
            || s.starts_with("/proc/99")
        {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            Err(io::Error::from_raw_os_error(libc::ENOENT))
        }
    }
}

fn r(
    links: &HashMap<&'static str, &'static str>,
    base: &str,
    path: &str,
    follow: bool,
) -> io::Result<Resolved> {
    resolve_with(T, Path::new(base), path.as_bytes(), follow, &fs(links))
}

fn ok(p: &str) -> io::Result<Resolved> {
    Ok(Resolved::Path(PathBuf::from(p)))
}

fn same(a: io::Result<Resolved>, b: io::Result<Resolved>) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => assert_eq!(a.raw_os_error(), b.raw_os_error()),
        (a, b) => panic!("{a:?} != {b:?}"),
    }
}

#[test]
fn relative_and_dots() {
    let l = HashMap::new();
    same(r(&l, "/e/proj", "a/b", true), ok("/e/proj/a/b"));
    same(r(&l, "/e/proj", "./a/../b", true), ok("/e/proj/b"));
    same(r(&l, "/e/proj", "../../x", true), ok("/x"));
    same(r(&l, "/e/proj", "/e//x/", true), ok("/e/x"));
    same(r(&l, "/e", "../../..", true), ok("/"));
    // A missing directory: the rest is kept lexically.
    same(r(&l, "/e", "/no/such/../x", true), ok("/no/x"));
    same(
        r(&l, "/e", "", true),
        Err(io::Error::from_raw_os_error(libc::ENOENT)),
    );
}

#[test]
fn symlinks() {
    let l = HashMap::from([
        ("/e/proj/out", "/e/home"),
        ("/e/proj/rel", "../other"),
        ("/e/proj/file", "/e/etc/passwd"),
        ("/e/loop", "/e/loop"),
    ]);
    // A directory symlink inside the project that points out.
    same(r(&l, "/e/proj", "out/x", false), ok("/e/home/x"));
    same(r(&l, "/e/proj", "rel/x", true), ok("/e/other/x"));
    // The last component: followed or not, as the syscall does.
    same(r(&l, "/e/proj", "file", true), ok("/e/etc/passwd"));
    same(r(&l, "/e/proj", "file", false), ok("/e/proj/file"));
    // A trailing slash follows even where the syscall would not.
    same(r(&l, "/e/proj", "out/", false), ok("/e/home"));
    same(
        r(&l, "/", "/e/loop/x", true),
        Err(io::Error::from_raw_os_error(libc::ELOOP)),
    );
}

#[test]
fn proc_self_is_the_target() {
    let l = HashMap::from([
        ("/proc/10/fd/3", "/e/home/.bashrc"),
        ("/proc/10/fd/4", "pipe:[1234]"),
        ("/proc/10/fd/5", "/memfd:x (deleted)"),
        ("/proc/10/cwd", "/e/proj"),
        ("/proc/mounts", "self/mounts"),
        ("/proc/99/fd/4", "/memfd:hallpass-journal (deleted)"),
    ]);
    same(r(&l, "/", "/proc/mounts", true), ok("/proc/10/mounts"));
    same(r(&l, "/", "/proc/self/fd/3", true), ok("/e/home/.bashrc"));
    same(r(&l, "/", "/proc/self/cwd/../x", true), ok("/e/x"));
    same(
        r(&l, "/", "/proc/thread-self/comm", true),
        ok("/proc/10/task/11/comm"),
    );
    same(
        r(&l, "/", "/proc/self/fd/4", true),
        Ok(Resolved::NotAFile("pipe:[1234]".into())),
    );
    same(
        r(&l, "/", "/proc/self/fd/5", true),
        Ok(Resolved::NotAFile("/memfd:x (deleted)".into())),
    );
    // Another process's descriptor is not the writer's to reopen.
    same(
        r(&l, "/", "/proc/99/fd/4", true),
        Err(io::Error::from_raw_os_error(libc::EACCES)),
    );
    // Not followed: unlink("/proc/self/fd/3") names the link, not its target.
    same(r(&l, "/", "/proc/self/fd/3", false), ok("/proc/10/fd/3"));
    same(
        r(&l, "/", "/proc/self/fd/4/x", true),
        Err(io::Error::from_raw_os_error(libc::ENOTDIR)),
    );
}

#[test]
fn real_file_system() {
    let dir = std::env::temp_dir().join(format!("hallpass-resolve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
    let dir = std::fs::canonicalize(&dir).unwrap();
    let me = Target {
        tid: std::process::id() as i32,
        tgid: std::process::id() as i32,
        session: 0,
    };
    let got = resolve(me, &dir, b"link/new/file", true).unwrap();
    assert_eq!(got, Resolved::Path(dir.join("real/new/file")));
    assert_eq!(
        canonicalize_lenient(&dir.join("link/x")).unwrap(),
        dir.join("real/x")
    );
    let f = std::fs::File::create(dir.join("real/f")).unwrap();
    use std::os::fd::AsRawFd;
    let mut procs = ProcDirs::new();
    assert_eq!(
        fd_path(me, f.as_raw_fd(), &mut procs).unwrap(),
        Resolved::Path(dir.join("real/f"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fd_names() {
    let mut buf = [0u8; 16];
    assert_eq!(fd_name(&mut buf, 0), "fd/0");
    assert_eq!(fd_name(&mut buf, 7), "fd/7");
    assert_eq!(fd_name(&mut buf, 10), "fd/10");
    assert_eq!(fd_name(&mut buf, 1234), "fd/1234");
    assert_eq!(fd_name(&mut buf, i32::MAX), "fd/2147483647");
}

#[test]
fn proc_pids() {
    assert_eq!(proc_pid(Path::new("/proc/12/comm")), Some(12));
    assert_eq!(proc_pid(Path::new("/proc/12")), Some(12));
    assert_eq!(proc_pid(Path::new("/proc/sys/x")), None);
    assert_eq!(proc_pid(Path::new("/e/proc/12")), None);
}
