//! Reads syscall arguments out of a target's memory.
//!
//! Two ways, chosen per session:
//! - directly, with `process_vm_readv(2)`: one syscall, always the target's current memory;
//! - through `/proc/TID/mem` descriptors that the launcher opens and lends us, when Yama's
//!   `ptrace_scope=1` keeps the daemon (not an ancestor of the target) from reading it. A lent
//!   descriptor is cached per thread; it keeps pointing at the memory of the program that ran
//!   when it was opened, so the filter then also reports `execve` and the cache entry of a
//!   thread that execs is dropped.
//!
//! Either way, only a `SECCOMP_IOCTL_NOTIF_ID_VALID` check after reading proves that the memory
//! read was the caller's: the caller makes it before acting on what it read, beyond replying.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;

/// `PATH_MAX`: longer paths are refused by the kernel with ENAMETOOLONG.
pub const PATH_MAX: usize = 4096;
const PAGE: usize = 4096;
/// The first read of a string: most paths are shorter.
const FIRST_READ: usize = 512;
/// Lent descriptors kept; the cache is emptied when it grows past this.
const MAX_CACHED: usize = 1024;

/// Opens `/proc/TID/mem` on the daemon's behalf: the launcher, over the control socket.
pub trait Lender {
    fn lend(&mut self, tid: i32) -> io::Result<File>;
    /// A copy of thread `tid`'s descriptor `fd`, taken by an ancestor (strict mode).
    fn lend_fd(&mut self, tid: i32, fd: i32) -> io::Result<std::os::fd::OwnedFd>;
}

/// How a session reads target memory.
pub struct Memory {
    lend: bool,
    cache: HashMap<i32, File>,
}

impl Memory {
    /// `lend`: read only through descriptors the launcher lends.
    pub fn new(lend: bool) -> Memory {
        Memory {
            lend,
            cache: HashMap::new(),
        }
    }

    pub fn lends(&self) -> bool {
        self.lend
    }

    /// Forgets what is cached for `tid` (it execs, or exited).
    pub fn forget(&mut self, tid: i32) {
        self.cache.remove(&tid);
    }

    /// Fills `buf` from `addr` in `tid`; returns how many bytes could be read (a read may stop
    /// at an unmapped page).
    fn read_some(
        &mut self,
        tid: i32,
        addr: u64,
        buf: &mut [u8],
        lender: &mut dyn Lender,
    ) -> io::Result<usize> {
        if !self.lend {
            // Split the remote range at page boundaries: the kernel transfers whole iovecs
            // only, and a string may end just before an unmapped page.
            let mut remote = [RemoteIoVec { base: 0, len: 0 }; 3];
            let mut n = 0;
            let efault = || io::Error::from_raw_os_error(libc::EFAULT);
            let mut at = addr as usize;
            let end = at.checked_add(buf.len()).ok_or_else(efault)?;
            while at < end && n < remote.len() {
                let stop = (at / PAGE)
                    .checked_add(1)
                    .and_then(|p| p.checked_mul(PAGE))
                    .unwrap_or(end);
                let stop = stop.min(end);
                remote[n] = RemoteIoVec {
                    base: at,
                    len: stop - at,
                };
                n += 1;
                at = stop;
            }
            let mut local = [io::IoSliceMut::new(buf)];
            return process_vm_readv(Pid::from_raw(tid), &mut local, &remote[..n])
                .map_err(io::Error::from);
        }
        for attempt in 0..2 {
            if !self.cache.contains_key(&tid) {
                if self.cache.len() >= MAX_CACHED {
                    self.cache.clear();
                }
                let f = lender.lend(tid)?;
                self.cache.insert(tid, f);
            }
            let f = &self.cache[&tid];
            match f.read_at(buf, addr) {
                Ok(n) if n > 0 => return Ok(n),
                // A descriptor of a thread that has since exited: try a fresh one once.
                r => {
                    self.cache.remove(&tid);
                    if attempt == 1 {
                        return r;
                    }
                }
            }
        }
        unreachable!()
    }

    /// Reads exactly `buf.len()` bytes, however many pages they span; `EFAULT` if any of them
    /// is not mapped, as the kernel's own copy would say.
    pub fn read_exact(
        &mut self,
        tid: i32,
        addr: u64,
        buf: &mut [u8],
        lender: &mut dyn Lender,
    ) -> io::Result<()> {
        let efault = || io::Error::from_raw_os_error(libc::EFAULT);
        if buf.is_empty() {
            return Ok(());
        }
        if !self.lend {
            // One remote range: any fault is EFAULT, as the kernel's own copy would be.
            let remote = [RemoteIoVec {
                base: addr as usize,
                len: buf.len(),
            }];
            let want = buf.len();
            let n = process_vm_readv(Pid::from_raw(tid), &mut [io::IoSliceMut::new(buf)], &remote)
                .map_err(|e| match e {
                    nix::errno::Errno::EFAULT | nix::errno::Errno::EINVAL => efault(),
                    e => io::Error::from(e),
                })?;
            return if n == want { Ok(()) } else { Err(efault()) };
        }
        let mut done = 0;
        while done < buf.len() {
            let n = self.read_some(tid, addr + done as u64, &mut buf[done..], lender)?;
            if n == 0 {
                return Err(efault());
            }
            done += n;
        }
        Ok(())
    }

    /// Reads a NUL-terminated string of at most [`PATH_MAX`] bytes (NUL included).
    pub fn read_cstr(
        &mut self,
        tid: i32,
        addr: u64,
        lender: &mut dyn Lender,
    ) -> io::Result<Vec<u8>> {
        if addr == 0 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        // Read on the stack: most paths end in it, and are then copied once, to their size.
        let mut first = [0u8; FIRST_READ];
        let n = self.read_some(tid, addr, &mut first, lender)?;
        if let Some(end) = first[..n].iter().position(|&b| b == 0) {
            return Ok(first[..end].to_vec());
        }
        if n < FIRST_READ {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        let mut buf = vec![0u8; PATH_MAX];
        buf[..FIRST_READ].copy_from_slice(&first);
        let m = self.read_some(
            tid,
            addr + FIRST_READ as u64,
            &mut buf[FIRST_READ..],
            lender,
        )?;
        match buf[..FIRST_READ + m].iter().position(|&b| b == 0) {
            Some(end) => {
                buf.truncate(end);
                Ok(buf)
            }
            None if FIRST_READ + m == PATH_MAX => {
                Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
            }
            None => Err(io::Error::from_raw_os_error(libc::EFAULT)),
        }
    }
}

/// Opens `/proc/TID/mem` ourselves: what the launcher does when asked to lend.
#[cfg(test)]
fn open_mem(tid: i32) -> io::Result<File> {
    File::open(format!("/proc/{tid}/mem"))
}

/// Yama's `ptrace_scope`, 0 when Yama is absent.
pub fn yama_ptrace_scope() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct SelfLender(u32);
    impl Lender for SelfLender {
        fn lend(&mut self, tid: i32) -> io::Result<File> {
            self.0 += 1;
            open_mem(tid)
        }
        fn lend_fd(&mut self, _: i32, _: i32) -> io::Result<std::os::fd::OwnedFd> {
            Err(io::Error::from_raw_os_error(libc::ENOSYS))
        }
    }

    #[test]
    fn reads_strings_both_ways() {
        let me = std::process::id() as i32;
        let long = vec![b'x'; 3000];
        let mut s = long.clone();
        s.push(0);
        let short = b"/tmp/some/path\0".to_vec();
        let huge = vec![b'y'; PATH_MAX + 10];
        for lend in [false, true] {
            let mut l = SelfLender(0);
            let mut m = Memory::new(lend);
            assert_eq!(
                m.read_cstr(me, short.as_ptr() as u64, &mut l).unwrap(),
                b"/tmp/some/path"
            );
            assert_eq!(m.read_cstr(me, s.as_ptr() as u64, &mut l).unwrap(), long);
            let e = m.read_cstr(me, huge.as_ptr() as u64, &mut l).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENAMETOOLONG));
            assert_eq!(
                m.read_cstr(me, 0, &mut l).unwrap_err().raw_os_error(),
                Some(libc::EFAULT)
            );
            let mut four = [0u8; 4];
            m.read_exact(me, short.as_ptr() as u64, &mut four, &mut l)
                .unwrap();
            assert_eq!(&four, b"/tmp");
            // One lent descriptor served every read.
            assert_eq!(l.0, u32::from(lend));
        }
    }
}
