//! Raw syscalls for the test programs (`hp-write`, `hp-race`, `hp-conform`), which make them
//! as a supervised process would, arguments and errors as the kernel sees them.

use std::ffi::CString;

/// A syscall argument, widened to a full register (a variadic `i32` would leave the upper
/// half undefined).
pub trait Arg {
    fn a(self) -> libc::c_long;
}

macro_rules! arg_int {
    ($($t:ty),*) => {$(impl Arg for $t {
        fn a(self) -> libc::c_long {
            self as libc::c_long
        }
    })*};
}
arg_int!(i32, i64, u32, u64, usize);

impl<T> Arg for *const T {
    fn a(self) -> libc::c_long {
        self as libc::c_long
    }
}

impl<T> Arg for *mut T {
    fn a(self) -> libc::c_long {
        self as libc::c_long
    }
}

/// The result of a raw syscall: its return value, or -errno.
pub fn ret(r: libc::c_long) -> i64 {
    if r < 0 {
        -i64::from(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        r
    }
}

/// `sys!(SYS_nr, args...)`: the raw syscall, its value or -errno.
#[macro_export]
macro_rules! sys {
    ($nr:expr $(, $a:expr)* $(,)?) => {
        // SAFETY: every argument is an integer or a pointer to a live CString, struct or buffer
        // owned by the caller; the kernel validates them like any caller's.
        $crate::sys::ret(unsafe { libc::syscall($nr $(, $crate::sys::Arg::a($a))*) })
    };
}

/// A C string of `s`, which holds no NUL.
pub fn cs(s: impl AsRef<[u8]>) -> CString {
    CString::new(s.as_ref()).unwrap()
}
