//! Services outside any session, for the tests of what a session may ask them to do.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::{run_with_deadline, wait_until, Scratch};

/// A process started outside any session, killed (by its pid) on drop.
pub struct Service(pub Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `program args` as the variant's user outside any session and waits for `sock`.
pub fn start(s: &Scratch, program: &str, args: &[&str], sock: &Path) -> Service {
    let c = s
        .command(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let svc = Service(c);
    assert!(
        wait_until(Duration::from_secs(10), || sock.exists()),
        "{program} did not listen on {}",
        sock.display()
    );
    svc
}

/// Runs `sh -c script` under hallpass with `flags`, within a minute.
pub fn run_session(s: &Scratch, flags: &[&str], script: &str) -> std::process::Output {
    let mut c = s.hallpass(flags);
    c.args(["--", "sh", "-c", script]);
    run_with_deadline(&mut c, Duration::from_secs(60))
}
