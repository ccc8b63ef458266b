//! Scripts the tests run as a user would (the README's quick tour, the demo): in a process
//! group of their own, with a deadline, and with whatever they leave running in the
//! background stopped when they end.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a script printed and how it ended.
pub struct Ended {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to its end in a process group of its own, its output captured; panics (with
/// that output) if it is not done `within`. Every process still in the group when it ends
/// (or times out) is killed.
pub fn run_in_group(cmd: &mut Command, within: Duration) -> Ended {
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let group = child.id() as libc::pid_t;
    let read_all = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read_all(Box::new(child.stdout.take().expect("stdout")));
    let err = read_all(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + within;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill(2) on our own child's process group; it holds only what the script
    // started.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let timed_out = status.is_none();
    let status = status.unwrap_or_else(|| child.wait().expect("wait"));
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        !timed_out,
        "{cmd:?} did not finish within {within:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Ended {
        status,
        stdout,
        stderr,
    }
}
