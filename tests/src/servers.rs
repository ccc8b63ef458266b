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

/// Binds the harness may try before it gives up on a server: the probed free port is free
/// only until released, and another process may take it first.
pub(crate) const PORT_ATTEMPTS: usize = 5;

/// Why a server did not start, and whether another port may do.
pub(crate) struct LaunchError {
    pub(crate) port_taken: bool,
    pub(crate) message: String,
}

/// What the harness does alike for every private server: launching it on a free port,
/// restarting it on the same one.
pub(crate) trait Launch {
    /// The port the next launch binds.
    fn set_port(&mut self, port: u16);
    /// Starts the server on its port and waits until it answers.
    fn launch(&mut self) -> Result<(), LaunchError>;
    /// Stops the server, its directory kept.
    fn shutdown(&mut self);
    /// Fails the test with `what` and the end of the server's log.
    fn fail(&mut self, what: &str) -> !;
}

/// Launches `server` on a fresh free port, again on another when one was taken meanwhile.
pub(crate) fn launch_on_free_port(server: &mut impl Launch) {
    for attempt in 1..=PORT_ATTEMPTS {
        server.set_port(crate::free_port());
        match server.launch() {
            Ok(()) => return,
            Err(e) if e.port_taken && attempt < PORT_ATTEMPTS => continue,
            Err(e) => server.fail(&e.message),
        }
    }
}

/// Restarts `server` on its port (its data survives) and waits until it answers again.
/// Callers rely on the port staying the same, so no other port is tried; an outgoing
/// connection may briefly hold it as its ephemeral port, so the launch is tried a few times.
pub(crate) fn restart(server: &mut impl Launch) {
    server.shutdown();
    for attempt in 1..=PORT_ATTEMPTS {
        match server.launch() {
            Ok(()) => return,
            Err(e) if e.port_taken && attempt < PORT_ATTEMPTS => {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            Err(e) => server.fail(&e.message),
        }
    }
}

/// Removes the directories `<tmp>/<prefix><pid>-<n>` of test processes that no longer
/// exist (a zombie is dead too), after `kill_orphan` stopped a server still running there.
/// Done once per prefix and process.
pub(crate) fn reap_stale_dirs(prefix: &'static str, kill_orphan: fn(&Path)) {
    static DONE: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    {
        let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
        if done.contains(&prefix) {
            return;
        }
        done.push(prefix);
    }
    let mut tmps = vec![std::env::temp_dir(), std::path::PathBuf::from("/tmp")];
    tmps.dedup();
    for tmp in tmps {
        let Ok(entries) = fs::read_dir(&tmp) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(owner) = name
                .strip_prefix(prefix)
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            if matches!(proc_stat(owner), Some((state, _)) if state != b'Z') {
                continue;
            }
            let dir = e.path();
            kill_orphan(&dir);
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

/// State letter and parent pid of process `pid` from /proc, if it exists.
pub(crate) fn proc_stat(pid: libc::pid_t) -> Option<(u8, libc::pid_t)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may itself contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}
