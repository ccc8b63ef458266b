//! What the private database servers of the tests (`mariadb`, `postgres`) share: starting
//! a server so that it dies with the test process, and reading the end of its log.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::{OnceLock, mpsc};

/// Spawns `cmd` so that it gets `signal` when this process dies.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, and every test runs
/// on its own short-lived thread, so the fork happens on one thread that lives as long as the
/// process.
pub(crate) fn spawn_tied(mut cmd: Command, signal: libc::c_int) -> std::io::Result<Child> {
    type Request = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<mpsc::Sender<Request>> = OnceLock::new();
    // SAFETY: the closure only calls prctl, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("server-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawn the server-spawner thread");
        tx
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .send((cmd, reply_tx))
        .expect("server-spawner thread is gone");
    reply_rx.recv().expect("server-spawner thread is gone")
}

/// The part of `path` after byte `from` (the log of the current launch only).
pub(crate) fn read_from(path: &Path, from: u64) -> String {
    let mut s = String::new();
    if let Ok(mut f) = fs::File::open(path) {
        let _ = f.seek(SeekFrom::Start(from));
        let mut buf = Vec::new();
        let _ = f.read_to_end(&mut buf);
        s = String::from_utf8_lossy(&buf).into_owned();
    }
    s
}

/// Last `n` lines of `s`, each ending in a newline.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let mut out = lines[lines.len().saturating_sub(n)..].join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}
