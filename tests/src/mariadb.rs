//! Private MariaDB instances for the end-to-end tests.
//!
//! [`MariaDb::start`] runs `mariadb-install-db` into a fresh temporary datadir and starts
//! `mariadbd` on a free loopback port with its own socket, pid file and error log inside that
//! datadir. Both run with `--no-defaults`, so the machine's own MySQL/MariaDB configuration,
//! service, passwords and port 3306 are never read or touched, and any number of instances can
//! run side by side (tests run in parallel).
//!
//! Every instance has a database `sbtest` and a user `sbtest` (password `sbtest-pw`, ALL on
//! `*.*`) reachable over TCP ([`MariaDb::url`]); the harness itself talks to the server as
//! `root` (no password) over the socket with the `mariadb` command-line client.
//! [`MariaDb::prepared`], [`MariaDb::fleetbench_ok`], [`MariaDb::run_json`] and
//! [`MariaDb::sysbench`] run fleetbench and sysbench against an instance with its options.
//!
//! A missing server or a failed start panics with the reason and the tail of the error log:
//! a test that needs a database never skips silently. `scripts/test.sh` installs
//! `mariadb-server` when `mariadbd` is missing.
//!
//! Cleanup: dropping a [`MariaDb`] stops the server and removes the datadir. Servers are
//! spawned from one long-lived thread with `PR_SET_PDEATHSIG`, so they also die when the test
//! process dies without dropping them (killed, or an instance kept in a `static`); the
//! datadirs such processes leave behind are removed by the next [`MariaDb::start`].

use crate::servers::{
    Launch, LaunchError, launch_on_free_port, read_from, reap_stale_dirs, spawn_tied, tail,
};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Database created in every instance.
pub const DATABASE: &str = "sbtest";
/// User created in every instance, with ALL on `*.*`.
pub const USER: &str = "sbtest";
/// Password of [`USER`].
pub const PASSWORD: &str = "sbtest-pw";

/// How long a start or restart may take before it counts as failed.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// Fresh ports tried when another process takes ours between probing and binding.
/// Prefix of every datadir; the owning test process's pid follows it.
const DIR_PREFIX: &str = "fleetbench-mariadb-";

/// A private `mariadbd` process with its own datadir, port and socket.
pub struct MariaDb {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    socket: PathBuf,
    mariadbd: PathBuf,
    client: PathBuf,
    /// Server options given after the harness's own (later ones win).
    extra: Vec<String>,
}

impl MariaDb {
    /// Starts a private instance and waits until it answers queries, with database `sbtest`
    /// and user `sbtest`@`%`/`localhost` (password `sbtest-pw`, ALL on `*.*`) in place.
    ///
    /// Panics with a clear message if `mariadbd`, `mariadb-install-db` or `mariadb` is
    /// missing, or if the server does not come up within 30 s.
    pub fn start() -> MariaDb {
        Self::start_with(&[])
    }

    /// Starts an instance (as [`MariaDb::start`]) and runs `fleetbench COMMON prepare` on it:
    /// `common` names the test and its table options.
    pub fn prepared(common: &[&str]) -> MariaDb {
        let db = Self::start();
        db.fleetbench_ok(&[common, &["prepare"]]);
        db
    }

    /// Like [`MariaDb::start`], with extra server options (e.g. `--max-connections=2500`).
    pub fn start_with(extra: &[&str]) -> MariaDb {
        let mariadbd = find_binary(&["mariadbd", "mysqld"]);
        let install_db = find_binary(&["mariadb-install-db", "mysql_install_db"]);
        let client = find_binary(&["mariadb", "mysql"]);
        reap_stale_dirs(DIR_PREFIX, kill_orphan);

        let dir = new_dir();
        let data = dir.join("data");
        // Same InnoDB sizes as the server gets, so the first start need not resize the redo log.
        let mut install = Command::new(&install_db);
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            // The bootstrap's temporary tables must not live in the shared /tmp: concurrent
            // installs there failed with "Unknown table 'mysql.tmp_user_sys'".
            .arg(format!("--tmpdir={}", dir.display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
                // No host name check: minimal machines may have no /etc/hosts at all.
                "--force",
                "--innodb-buffer-pool-size=128M",
                "--innodb-log-file-size=48M",
            ])
            .stdin(Stdio::null());
        if is_root() {
            install.arg("--user=root");
        }
        let out = install
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", install_db.display()));
        if !out.status.success() {
            let _ = fs::remove_dir_all(&dir);
            panic!(
                "{} failed ({}):\n{}{}",
                install_db.display(),
                out.status,
                tail(&String::from_utf8_lossy(&out.stdout), 20),
                tail(&String::from_utf8_lossy(&out.stderr), 20)
            );
        }

        let mut db = MariaDb {
            child: None,
            socket: dir.join("mysqld.sock"),
            dir,
            port: 0,
            mariadbd,
            client,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        launch_on_free_port(&mut db);
        db.sql(&format!(
            "CREATE DATABASE IF NOT EXISTS {DATABASE};
             CREATE USER IF NOT EXISTS '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';
             CREATE USER IF NOT EXISTS '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}';
             GRANT ALL ON *.* TO '{USER}'@'%';
             GRANT ALL ON *.* TO '{USER}'@'localhost';"
        ));
        db
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Unix socket of the server.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Connection URL for the `sbtest` user over TCP:
    /// `mysql://sbtest:sbtest-pw@127.0.0.1:PORT/sbtest`.
    pub fn url(&self) -> String {
        format!(
            "mysql://{USER}:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port
        )
    }

    /// Two targets, `master` (this instance, tables sbtest1-2) and `slave` (`other`,
    /// sbtest3-4), four tables of 300 rows: the tests' two-server OLTP layout.
    pub fn master_slave_args(&self, other: &MariaDb) -> Vec<String> {
        vec![
            format!("--target=master={}", self.url()),
            format!("--target=slave={}", other.url()),
            "--tables=4".into(),
            "--table-size=300".into(),
            "--table-map=sbtest1-2=master,sbtest3-4=slave".into(),
        ]
    }

    /// The `--mysql-*` options that point fleetbench at this instance as the sbtest user.
    pub fn fleetbench_args(&self) -> Vec<String> {
        vec![
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", self.port),
            format!("--mysql-user={USER}"),
            format!("--mysql-password={PASSWORD}"),
            format!("--mysql-db={DATABASE}"),
        ]
    }

    /// A fleetbench command line: `parts`, then this instance's `--mysql-*` options.
    pub fn args(&self, parts: &[&str]) -> Vec<String> {
        parts
            .iter()
            .map(|s| s.to_string())
            .chain(self.fleetbench_args())
            .collect()
    }

    /// Runs `fleetbench` with `parts` one after the other, then this instance's `--mysql-*`
    /// options, and asserts it exited 0; its stdout.
    pub fn fleetbench_ok(&self, parts: &[&[&str]]) -> String {
        crate::fleetbench_ok(&self.args(&parts.concat()))
    }

    /// Like [`MariaDb::fleetbench_ok`], with `--json=<path>` and `run` after `parts`; its
    /// stdout and the JSON result it wrote to `path`.
    pub fn run_json(&self, parts: &[&[&str]], path: &Path) -> (String, serde_json::Value) {
        crate::run_json(&self.args(&parts.concat()), path)
    }

    /// Runs sysbench 1.0 (the compatibility reference) with `args`, then the options that
    /// point it at database `schema` of this instance as the sbtest user; its stdout.
    pub fn sysbench(&self, schema: &str, args: &[&str]) -> String {
        crate::run_tool(
            Command::new("sysbench").args(args).args([
                "--mysql-host=127.0.0.1".to_string(),
                format!("--mysql-port={}", self.port),
                format!("--mysql-user={USER}"),
                format!("--mysql-password={PASSWORD}"),
                format!("--mysql-db={schema}"),
            ]),
            "sysbench is installed (scripts/test.sh installs it): apt-get install sysbench",
        )
    }

    /// Runs `sql` (one or more `;`-separated statements) as root over the socket with the
    /// `mariadb` client in batch mode without column names, and returns its stdout
    /// (tab-separated columns, one row per line). Panics if the client fails.
    pub fn sql(&self, sql: &str) -> String {
        match self.try_sql(sql) {
            Ok(out) => out,
            Err(e) => panic!(
                "SQL failed on the MariaDB at port {}: {e}\nSQL: {sql}",
                self.port
            ),
        }
    }
    /// Makes this instance a replica of `primary` (started with `--log-bin` and a
    /// `--server-id` of its own) from the primary's current GTID position, and waits until
    /// both replication threads run.
    pub fn replicate_from(&self, primary: &MariaDb) {
        primary.sql(
            "CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY 'repl-pw'; \
             GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'",
        );
        let pos = primary.sql("SELECT @@gtid_binlog_pos").trim().to_string();
        self.sql(&format!(
            "SET GLOBAL gtid_slave_pos = '{pos}'; \
             CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, \
             MASTER_USER = 'repl', MASTER_PASSWORD = 'repl-pw', MASTER_USE_GTID = slave_pos; \
             START SLAVE",
            primary.port
        ));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let status = self.sql("SHOW SLAVE STATUS");
            let cols: Vec<&str> = status.split('\t').collect();
            if cols.get(10) == Some(&"Yes") && cols.get(11) == Some(&"Yes") {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the replica on port {} did not start replicating from port {}: {status}",
                self.port,
                primary.port
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The statement counters an OLTP mix moves ([`STATEMENT_COUNTERS`]), and the prepared
    /// statements' pair, now.
    pub fn statement_counters(&self) -> std::collections::BTreeMap<&'static str, u64> {
        STATEMENT_COUNTERS
            .into_iter()
            .map(|n| (n, self.status(n)))
            .collect()
    }

    /// Value of `SHOW GLOBAL STATUS LIKE 'name'` as a number; panics if there is no such
    /// variable or it is not a number.
    pub fn status(&self, name: &str) -> u64 {
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "status variable name {name:?} must be letters, digits and _"
        );
        let out = self.sql(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        let value = out
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once('\t')?;
                k.eq_ignore_ascii_case(name).then_some(v)
            })
            .unwrap_or_else(|| panic!("no global status variable {name}: {out:?}"));
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("global status {name} = {value:?} is not a number"))
    }

    /// Stops the server (SIGTERM, up to 10 s, then SIGKILL) and removes the datadir.
    /// Idempotent; also done on drop. The instance cannot be restarted afterwards.
    pub fn stop(&mut self) {
        self.shutdown();
        let _ = fs::remove_dir_all(&self.dir);
    }

    /// Restarts the server on the same port and datadir (data survives) and waits until it
    /// answers queries again.
    pub fn restart(&mut self) {
        assert!(
            self.dir.join("data").is_dir(),
            "restart after stop: the datadir {} is gone",
            self.dir.display()
        );
        crate::servers::restart(self);
    }

    /// Starts mariadbd on `self.port` and waits until it answers over the socket.
    fn launch(&mut self) -> Result<(), LaunchError> {
        let data = self.dir.join("data");
        let log = self.dir.join("error.log");
        // Server messages before the error log opens (and on some failures) go to stderr.
        let out = fs::File::create(self.dir.join("mariadbd.out")).expect("create mariadbd.out");
        let log_start = fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
        let mut cmd = Command::new(&self.mariadbd);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", self.socket.display()))
            .arg(format!(
                "--pid-file={}",
                self.dir.join("mariadbd.pid").display()
            ))
            .arg(format!("--log-error={}", log.display()))
            .arg(format!("--tmpdir={}", self.dir.display()))
            .arg(format!("--port={}", self.port))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-log-bin",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=128M",
                "--innodb-log-file-size=48M",
                "--max-connections=1000",
            ])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup mariadbd.out"))
            .stderr(out);
        // mariadbd refuses to run as root unless told to.
        if is_root() {
            cmd.arg("--user=root");
        }
        self.child = Some(
            spawn_tied(cmd, libc::SIGTERM)
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.mariadbd.display())),
        );

        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let child = self.child.as_mut().expect("child");
            if let Some(status) = child.try_wait().expect("wait for mariadbd") {
                self.child = None;
                let new_log = read_from(&log, log_start);
                let port_taken = new_log.contains("Address already in use")
                    || new_log.contains("Bind on TCP/IP port");
                return Err(LaunchError {
                    port_taken,
                    message: format!("mariadbd exited during startup ({status})"),
                });
            }
            // mariadbd listens on TCP before the socket and answers neither before it is
            // ready, so a query over the socket covers both (and a raw TCP probe would count
            // as an aborted connect).
            if self.try_sql("SELECT 1").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(LaunchError {
                    port_taken: false,
                    message: format!(
                        "mariadbd did not answer within {}s",
                        READY_TIMEOUT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Stops the process, keeping the datadir.
    fn shutdown(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SIGTERM is mariadbd's clean shutdown: it flushes InnoDB, so a restart needs no
        // crash recovery.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Panics with `what`, the tail of the error log and of the server's own output, after
    /// stopping the server and removing the datadir.
    fn fail(&mut self, what: &str) -> ! {
        let log = fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
        let out = fs::read_to_string(self.dir.join("mariadbd.out")).unwrap_or_default();
        let dir = self.dir.display().to_string();
        self.stop();
        panic!(
            "private MariaDB in {dir} (port {}): {what}\n--- error.log (tail) ---\n{}--- mariadbd output (tail) ---\n{}",
            self.port,
            tail(&log, 30),
            tail(&out, 10)
        );
    }

    /// Like [`MariaDb::sql`], tried again (up to `tries` times) while the server answers
    /// that a lock wait timed out: a statement that waits for the load's locks, such as
    /// `SET GLOBAL read_only = 1`, may time out on a loaded machine.
    pub fn sql_past_lock_waits(&self, sql: &str, tries: u32) -> String {
        for _ in 1..tries {
            match self.try_sql(sql) {
                Ok(out) => return out,
                Err(e) if e.contains("ERROR 1205") => continue,
                Err(e) => panic!(
                    "SQL failed on the MariaDB at port {}: {e}\nSQL: {sql}",
                    self.port
                ),
            }
        }
        self.sql(sql)
    }

    fn try_sql(&self, sql: &str) -> Result<String, String> {
        let mut child = Command::new(&self.client)
            .arg("--no-defaults")
            .arg(format!("--socket={}", self.socket.display()))
            .args(["--user=root", "--batch", "--skip-column-names"])
            .args(["--connect-timeout=5"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.client.display()))?;
        // SQL goes through stdin so its size is not limited by the command line.
        {
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(sql.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("waiting for the client: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "{} ({}): {}",
                self.client.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl Launch for MariaDb {
    fn set_port(&mut self, port: u16) {
        self.port = port;
    }

    fn launch(&mut self) -> Result<(), LaunchError> {
        MariaDb::launch(self)
    }

    fn shutdown(&mut self) {
        MariaDb::shutdown(self)
    }

    fn fail(&mut self, what: &str) -> ! {
        MariaDb::fail(self, what)
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.stop();
    }
}

/// First of `names` found on PATH, /usr/sbin or /usr/bin (Debian puts mariadbd in /usr/sbin,
/// which is often not on a non-root PATH).
fn find_binary(names: &[&str]) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"].map(PathBuf::from));
    for name in names {
        for d in &dirs {
            let p = d.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "{} not found on PATH, /usr/sbin or /usr/bin: the end-to-end tests need MariaDB \
         (scripts/test.sh installs it; or `apt-get install mariadb-server`)",
        names[0]
    );
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// A new empty directory for one instance: `<tmp>/fleetbench-mariadb-<pid>-<n>`.
fn new_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{DIR_PREFIX}{}-{n}", std::process::id());
    let mut dir = std::env::temp_dir().join(&name);
    // A Unix socket path must fit in 108 bytes; fall back to /tmp for a long TMPDIR.
    if dir.join("mysqld.sock").as_os_str().len() > 100 {
        dir = Path::new("/tmp").join(&name);
    }
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// SIGKILLs the server of an abandoned datadir, if its pid file names a live mariadbd that
/// really uses this datadir (the pid may have been reused by anything else).
fn kill_orphan(dir: &Path) {
    let Some(pid) = fs::read_to_string(dir.join("mariadbd.pid"))
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
    else {
        return;
    };
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let needle = format!("--datadir={}", dir.join("data").display());
    if String::from_utf8_lossy(&cmdline).contains(&needle) {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The global status counters that count an OLTP mix's statements by kind, and the two that
/// count prepared statements (Com_stmt_prepare, Com_stmt_execute).
pub const STATEMENT_COUNTERS: [&str; 8] = [
    "Com_select",
    "Com_update",
    "Com_delete",
    "Com_insert",
    "Com_commit",
    "Com_begin",
    "Com_stmt_prepare",
    "Com_stmt_execute",
];
