//! A shared memory mapping of a file (the session journal's memfd), seen as 64-bit atomic
//! words, so that the safe code above it needs no `unsafe` and two processes never see a torn
//! word.

use std::os::fd::AsFd;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};

pub struct SharedMap {
    ptr: NonNull<std::ffi::c_void>,
    len: usize,
}

// SAFETY: the mapping is only ever accessed through `AtomicU64`s, which are Sync, and it
// lives until `drop`; moving or sharing the handle between threads is as safe as sharing a
// `&[AtomicU64]`.
unsafe impl Send for SharedMap {}
// SAFETY: as above.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// Maps the first `len` bytes of `fd` (a file of at least that size), shared, read-write.
    pub fn new(fd: impl AsFd, len: usize) -> std::io::Result<SharedMap> {
        let n = std::num::NonZeroUsize::new(len)
            .ok_or_else(|| std::io::Error::other("an empty mapping"))?;
        // SAFETY: a fresh mapping at an address the kernel picks, of a file we hold: it
        // aliases no Rust object. A file shorter than `len` would fault on access, so the
        // caller checks its size first.
        let ptr = unsafe {
            mmap(
                None,
                n,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                fd,
                0,
            )
        }?;
        Ok(SharedMap { ptr, len })
    }

    /// The mapping as words; `len / 8` of them.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so aligned for u64), `len` bytes long, valid
        // until drop (which needs `&mut self`), and only accessed atomically, here and in the
        // other process sharing it.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<AtomicU64>(), self.len / 8) }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no reference from `words` outlives `self`.
        let _ = unsafe { munmap(self.ptr, self.len) };
    }
}
