//! Who a lookup is made for: a thread of the session, and which `/proc` entries it reaches.

/// The process a lookup is made for.
#[derive(Clone, Debug)]
pub struct Who {
    pub tid: i32,
    /// Its thread group, looked up when first needed (rarely: for `/proc/self`).
    tgid: std::cell::Cell<i32>,
    /// The session's first process: its descendants may reopen each other's pipes.
    pub session: i32,
}

impl Who {
    pub fn new(tid: i32, session: i32) -> Who {
        Who {
            tid,
            tgid: std::cell::Cell::new(0),
            session,
        }
    }

    pub fn tgid(&self) -> i32 {
        if self.tgid.get() == 0 {
            self.tgid
                .set(crate::process::tgid_of(self.tid).unwrap_or(self.tid));
        }
        self.tgid.get()
    }

    /// Whether the `/proc/PID` entries of process (or thread) `pid` are the target's to
    /// reach: its own thread group's, or a process of the session's (a descendant of its
    /// first process), which share its Landlock domain.
    pub fn reaches(&self, pid: i32) -> bool {
        crate::resolve::Target {
            tid: self.tid,
            tgid: self.tgid(),
            session: self.session,
        }
        .reaches(pid)
    }
}
