//! Private PostgreSQL instances for the end-to-end tests.
//!
//! [`Postgres::start`] runs `initdb` into a fresh temporary directory and starts `postgres` on
//! a free port of 127.0.0.1, with its Unix socket, log file and (with TLS) certificates in
//! that directory. Every setting the harness relies on is given on the command line, so the
//! machine's own clusters, their configuration, passwords and port 5432 are never read or
//! touched, and any number of instances can run side by side (tests run in parallel). They
//! are tuned for speed, not durability: fsync, synchronous commit and full page writes are off
//! (so [`Postgres::kill`] may lose the last commits).
//!
//! Every instance has a role `sbtest` (password `sbpass`, hashed as the chosen authentication
//! method needs) owning a database `sbtest` with `pg_stat_statements` installed, reachable
//! over TCP ([`Postgres::url`], [`Postgres::pgsql_args`]). The harness itself talks to the
//! server as the superuser `postgres` over the socket (trust) with `psql` ([`Postgres::sql`]).
//! [`PgOpts`] chooses the TCP authentication method, TLS and extra server settings.
//!
//! PostgreSQL refuses to run as root. When the tests run as root (CI, a fresh machine),
//! `initdb` and `postgres` run as the `postgres` account (which Debian's package creates), or
//! `nobody` without it: the process drops to that user itself before exec, so the server
//! stays this process's direct child. As any other user they run as that user.
//!
//! A missing PostgreSQL or a failed start panics with the reason and the tail of the server
//! log: a test that needs a database never skips silently. `scripts/test.sh` installs
//! `postgresql` and `postgresql-contrib`.
//!
//! Cleanup: dropping a [`Postgres`] stops the server and removes its directory. Servers are
//! spawned from one long-lived thread with `PR_SET_PDEATHSIG` (immediate shutdown), so they
//! also go when the test process dies without dropping them; the directories such processes
//! leave behind are removed by the next [`Postgres::start`].

use crate::servers::{
    Launch, LaunchError, launch_on_free_port, proc_stat, read_from, reap_stale_dirs, spawn_tied,
    tail,
};
use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Database created in every instance, owned by [`USER`].
pub const DATABASE: &str = "sbtest";
/// Login role created in every instance.
pub const USER: &str = "sbtest";
/// Password of [`USER`].
pub const PASSWORD: &str = "sbpass";
/// Superuser the harness uses over the Unix socket (trust, no password).
pub const SUPERUSER: &str = "postgres";

/// TCP authentication methods [`PgOpts::auth`] accepts.
const AUTH_METHODS: [&str; 4] = ["scram-sha-256", "md5", "trust", "password"];
/// How long a start or restart may take before it counts as failed.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits after the fast-shutdown signal before killing the server.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// Fresh ports tried when another process takes ours between probing and binding.
/// Prefix of every instance directory; the owning test process's pid follows it.
const DIR_PREFIX: &str = "fleetbench-pg-";

/// How to start an instance: [`Postgres::start_with`].
#[derive(Clone, Debug)]
pub struct PgOpts {
    /// pg_hba method of TCP connections: `scram-sha-256` (default), `md5`, `trust` or
    /// `password`. With `md5` the sbtest password is stored as an MD5 hash, so the server
    /// really asks for MD5 (it would use SCRAM for a SCRAM-hashed password).
    pub auth: &'static str,
    /// TLS on (`ssl=on`), with a certificate for 127.0.0.1 and localhost signed by a CA of
    /// the instance's own ([`Postgres::ca_path`]). Plain TCP is still accepted.
    pub tls: bool,
    /// Extra server settings, each passed as `-c name=value` after the harness's own (so
    /// they win).
    pub settings: Vec<(String, String)>,
}

impl Default for PgOpts {
    fn default() -> Self {
        PgOpts {
            auth: "scram-sha-256",
            tls: false,
            settings: Vec::new(),
        }
    }
}

impl PgOpts {
    /// These options with the server setting `name = value` added.
    pub fn setting(mut self, name: &str, value: impl ToString) -> PgOpts {
        self.settings.push((name.to_string(), value.to_string()));
        self
    }
}

/// A private `postgres` server with its own directory, port and socket.
pub struct Postgres {
    child: Option<Child>,
    /// Instance directory: the socket, the log, the certificates and `data/` (PGDATA).
    dir: PathBuf,
    port: u16,
    bins: Bins,
    /// The account the server runs as, when not this process's own (we are root).
    owner: Option<Account>,
    opts: PgOpts,
}

impl Postgres {
    /// Starts a private instance with the default options (SCRAM over TCP, no TLS) and waits
    /// until it answers queries, with role `sbtest`/`sbpass` and database `sbtest` in place.
    ///
    /// Panics with a clear message if PostgreSQL is not installed, or if the server does not
    /// come up within 30 s.
    pub fn start() -> Postgres {
        Self::start_with(PgOpts::default())
    }

    /// Like [`Postgres::start`], with `opts`.
    pub fn start_with(opts: PgOpts) -> Postgres {
        assert!(
            AUTH_METHODS.contains(&opts.auth),
            "PgOpts::auth {:?} is not one of {AUTH_METHODS:?}",
            opts.auth
        );
        let bins = find_bins();
        reap_stale_dirs(DIR_PREFIX, kill_orphan);
        let owner = server_account();
        let dir = new_dir(owner);

        let data = dir.join("data");
        let mut initdb = Command::new(&bins.initdb);
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C"])
            // Durability of the freshly created files is of no use to a throwaway server.
            .arg("--no-sync");
        let out = as_server(&mut initdb, owner, &dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", bins.initdb.display()));
        if !out.status.success() {
            let _ = fs::remove_dir_all(&dir);
            panic!(
                "{} failed ({}):\n{}{}",
                bins.initdb.display(),
                out.status,
                tail(&String::from_utf8_lossy(&out.stdout), 20),
                tail(&String::from_utf8_lossy(&out.stderr), 20)
            );
        }
        // Written over initdb's file (which keeps its owner): the harness's superuser comes in
        // over the socket without a password, everyone else over TCP with `auth`.
        // Replication over the socket too, for a replica of this server (`start_replica_of`).
        let mut hba = String::from("local all all trust\nlocal replication all trust\n");
        if opts.tls {
            hba += &format!("hostssl all all 127.0.0.1/32 {}\n", opts.auth);
        }
        hba += &format!("host all all 127.0.0.1/32 {}\n", opts.auth);
        fs::write(data.join("pg_hba.conf"), hba).expect("write pg_hba.conf");
        if opts.tls {
            make_certs(&dir, owner);
        }

        let mut pg = Postgres {
            child: None,
            dir,
            port: 0,
            bins,
            owner,
            opts,
        };
        launch_on_free_port(&mut pg);
        let encryption = if pg.opts.auth == "md5" {
            "md5"
        } else {
            "scram-sha-256"
        };
        // CREATE DATABASE cannot run in a transaction: psql sends each statement on its own.
        pg.setup_sql(
            "postgres",
            &format!(
                "SET password_encryption = '{encryption}';
                 CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}';
                 GRANT pg_read_all_stats TO {USER};
                 CREATE DATABASE {DATABASE} OWNER {USER};"
            ),
        );
        pg.setup_sql(DATABASE, "CREATE EXTENSION pg_stat_statements;");
        pg
    }

    /// A hot standby of `primary` (streaming replication): `pg_basebackup -R` over the
    /// primary's socket into a fresh directory, started on a free port of its own; it
    /// answers read-only queries, with the primary's roles and databases.
    pub fn start_replica_of(primary: &Postgres) -> Postgres {
        let owner = primary.owner;
        let dir = new_dir(owner);
        let basebackup = primary.bins.postgres.with_file_name("pg_basebackup");
        let mut cmd = Command::new(&basebackup);
        cmd.arg("-D")
            .arg(dir.join("data"))
            .arg("-h")
            .arg(&primary.dir)
            .args(["-p", &primary.port.to_string(), "-U", SUPERUSER])
            .args(["-R", "-X", "stream", "--no-sync", "-c", "fast"]);
        let out = as_server(&mut cmd, owner, &dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", basebackup.display()));
        if !out.status.success() {
            let _ = fs::remove_dir_all(&dir);
            panic!(
                "{} failed ({}):\n{}",
                basebackup.display(),
                out.status,
                tail(&String::from_utf8_lossy(&out.stderr), 20)
            );
        }
        let mut pg = Postgres {
            child: None,
            dir,
            port: 0,
            bins: primary.bins.clone(),
            owner,
            opts: primary.opts.clone(),
        };
        launch_on_free_port(&mut pg);
        pg
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Directory of the server's Unix socket (`.s.PGSQL.<port>`): the instance directory,
    /// which also holds `postgres.log` and, with TLS, the certificates.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// Connection URL for the `sbtest` role over TCP:
    /// `postgres://sbtest:sbpass@127.0.0.1:PORT/sbtest`.
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port
        )
    }

    /// The CA certificate (PEM) that signed the server's certificate, with TLS on.
    pub fn ca_path(&self) -> Option<PathBuf> {
        self.opts.tls.then(|| self.dir.join("ca.pem"))
    }

    /// sysbench's options for this instance as the sbtest role: `--db-driver=pgsql`
    /// and the `--pgsql-*` connection options.
    pub fn pgsql_args(&self) -> Vec<String> {
        vec![
            "--db-driver=pgsql".into(),
            "--pgsql-host=127.0.0.1".into(),
            format!("--pgsql-port={}", self.port),
            format!("--pgsql-user={USER}"),
            format!("--pgsql-password={PASSWORD}"),
            format!("--pgsql-db={DATABASE}"),
        ]
    }

    /// Runs sysbench 1.0 (the compatibility reference) with `args`, then
    /// [`Postgres::pgsql_args`]; its stdout. Panics with its output if it fails.
    pub fn sysbench(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("sysbench");
        cmd.args(args).args(self.pgsql_args());
        clear_pg_env(&mut cmd);
        crate::run_tool(
            &mut cmd,
            "sysbench is installed (scripts/test.sh installs it): apt-get install sysbench",
        )
    }

    /// A `psql -X` command of the instance's PostgreSQL, with no `PG*` variables inherited
    /// from the environment and no connection options yet (for a test's own logins).
    pub fn psql_command(&self) -> Command {
        let mut cmd = Command::new(&self.bins.psql);
        cmd.arg("-X");
        clear_pg_env(&mut cmd);
        cmd
    }

    /// PostgreSQL's own `pgbench` of the instance's installation (to set fleetbench's output
    /// beside it), with no `PG*` variables inherited and no options yet.
    pub fn pgbench_command(&self) -> Command {
        let mut cmd = Command::new(self.bins.postgres.with_file_name("pgbench"));
        clear_pg_env(&mut cmd);
        cmd
    }

    /// Runs `sql` (one or more `;`-separated statements, each in its own transaction) as
    /// the superuser over the socket on database `sbtest`; the output without headers,
    /// columns separated by `|`, one row per line, trimmed. Panics with psql's error if a
    /// statement fails.
    pub fn sql(&self, sql: &str) -> String {
        self.sql_db(DATABASE, sql)
    }

    /// Like [`Postgres::sql`], on database `db`.
    pub fn sql_db(&self, db: &str, sql: &str) -> String {
        match self.try_sql(db, sql) {
            Ok(out) => out,
            Err(e) => panic!(
                "SQL failed on the PostgreSQL at port {} (database {db}): {e}\nSQL: {sql}",
                self.port
            ),
        }
    }

    /// Sum of pg_stat_statements' `calls` over the statements whose normalised text is
    /// `LIKE pattern` (e.g. `SELECT c FROM sbtest%`), in every database.
    pub fn statement_calls(&self, pattern: &str) -> u64 {
        let out = self.sql(&format!(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE '{}'",
            pattern.replace('\'', "''")
        ));
        out.parse()
            .unwrap_or_else(|_| panic!("sum(calls) = {out:?} is not a number"))
    }

    /// Stops the server (fast shutdown: sessions are ended, up to 10 s, then it is killed)
    /// and removes the directory. Idempotent; also done on drop. The instance cannot be
    /// restarted afterwards.
    pub fn stop(&mut self) {
        self.shutdown();
        let _ = fs::remove_dir_all(&self.dir);
    }

    /// Kills the whole server at once with SIGKILL, postmaster and backends, as a crash
    /// would: clients see their connections drop mid-statement. The directory stays;
    /// [`Postgres::restart`] brings the server back through crash recovery. With
    /// `synchronous_commit=off` the commits of the last ~200 ms (wal_writer_delay) may be
    /// lost: run `CHECKPOINT` first, or start with `synchronous_commit=on`, if they must
    /// survive.
    pub fn kill(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pm = child.id() as libc::pid_t;
        // Stopped first, the postmaster can neither fork new processes nor reap the ones
        // killed below, so none is missed and their pids stay theirs until it dies.
        unsafe {
            libc::kill(pm, libc::SIGSTOP);
        }
        crate::wait_until(Duration::from_secs(5), || {
            matches!(proc_stat(pm), Some((b'T', _)) | None)
        });
        let backends = children_of(pm);
        for &pid in &backends {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        // A restart refuses to start while old backends still hold the shared memory.
        crate::wait_until(STOP_TIMEOUT, || {
            backends
                .iter()
                .all(|&pid| !matches!(proc_stat(pid), Some((state, _)) if state != b'Z'))
        });
    }

    /// Restarts the server on the same port and directory (data survives; after
    /// [`Postgres::kill`] through crash recovery) and waits until it answers queries again.
    pub fn restart(&mut self) {
        assert!(
            self.dir.join("data").is_dir(),
            "restart after stop: the directory {} is gone",
            self.dir.display()
        );
        crate::servers::restart(self);
    }

    /// Starts postgres on `self.port` and waits until it answers over the socket.
    fn launch(&mut self) -> Result<(), LaunchError> {
        let log = self.dir.join("postgres.log");
        let log_start = fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
        // The server's stderr is its log: messages before and after logging starts alike.
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("open postgres.log");
        let mut settings: Vec<(String, String)> = [
            ("listen_addresses", "127.0.0.1".to_string()),
            ("port", self.port.to_string()),
            // Quoted: the setting is a comma-separated list.
            (
                "unix_socket_directories",
                format!("\"{}\"", self.dir.display()),
            ),
            ("shared_preload_libraries", "pg_stat_statements".into()),
            ("max_connections", "1200".into()),
            ("fsync", "off".into()),
            ("synchronous_commit", "off".into()),
            ("full_page_writes", "off".into()),
            ("logging_collector", "off".into()),
            ("log_destination", "stderr".into()),
            // English messages: a taken port is recognised by its message.
            ("lc_messages", "C".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if self.opts.tls {
            settings.push(("ssl".into(), "on".into()));
            for (name, file) in [
                ("ssl_cert_file", "server.crt"),
                ("ssl_key_file", "server.key"),
            ] {
                settings.push((name.into(), self.dir.join(file).display().to_string()));
            }
        }
        settings.extend(self.opts.settings.iter().cloned());

        let mut cmd = Command::new(&self.bins.postgres);
        cmd.arg("-D").arg(self.dir.join("data"));
        for (name, value) in &settings {
            cmd.arg("-c").arg(format!("{name}={value}"));
        }
        as_server(&mut cmd, self.owner, &self.dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup postgres.log"))
            .stderr(out);
        self.child = Some(
            spawn_tied(cmd, libc::SIGQUIT)
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bins.postgres.display())),
        );

        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let child = self.child.as_mut().expect("child");
            if let Some(status) = child.try_wait().expect("wait for postgres") {
                self.child = None;
                let new_log = read_from(&log, log_start);
                let port_taken = new_log.contains("Address already in use")
                    || new_log.contains("could not bind IPv4 address");
                return Err(LaunchError {
                    port_taken,
                    message: format!("postgres exited during startup ({status})"),
                });
            }
            // The socket exists before the server accepts sessions (it refuses them while
            // starting up or recovering), so a query is the test of readiness.
            if self.try_sql("postgres", "SELECT 1").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(LaunchError {
                    port_taken: false,
                    message: format!(
                        "postgres did not answer within {}s",
                        READY_TIMEOUT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Stops the process, keeping the directory.
    fn shutdown(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        // SIGINT is the fast shutdown: sessions are ended rather than waited for, and the
        // checkpoint makes a restart need no recovery.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                self.child = None;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }

    /// Runs the setup statements `sql` on `db`, failing the start (with the log) if they fail.
    fn setup_sql(&mut self, db: &str, sql: &str) {
        if let Err(e) = self.try_sql(db, sql) {
            self.fail(&format!("setup failed: {e}\nSQL: {sql}"));
        }
    }

    /// Panics with `what` and the tail of the server log, after stopping the server and
    /// removing the directory.
    fn fail(&mut self, what: &str) -> ! {
        let log = fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default();
        let dir = self.dir.display().to_string();
        self.stop();
        panic!(
            "private PostgreSQL in {dir} (port {}): {what}\n--- postgres.log (tail) ---\n{}",
            self.port,
            tail(&log, 30)
        );
    }

    fn try_sql(&self, db: &str, sql: &str) -> Result<String, String> {
        let mut child = self
            .psql_command()
            .args(["-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args(["-U", SUPERUSER, "-d", db])
            .env("PGCONNECT_TIMEOUT", "5")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.bins.psql.display()))?;
        // SQL goes through stdin: its size is not limited by the command line, and each
        // statement runs on its own (CREATE DATABASE cannot run in a transaction).
        {
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(sql.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("waiting for psql: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(format!(
                "{} ({}): {}",
                self.bins.psql.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl Launch for Postgres {
    fn set_port(&mut self, port: u16) {
        self.port = port;
    }

    fn launch(&mut self) -> Result<(), LaunchError> {
        Postgres::launch(self)
    }

    fn shutdown(&mut self) {
        Postgres::shutdown(self)
    }

    fn fail(&mut self, what: &str) -> ! {
        Postgres::fail(self, what)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The PostgreSQL programs the harness runs, all of one installation.
#[derive(Clone)]
struct Bins {
    initdb: PathBuf,
    postgres: PathBuf,
    psql: PathBuf,
}

/// The newest `/usr/lib/postgresql/<version>/bin` (Debian's layout: several versions may be
/// installed side by side, none of their server programs on PATH), else PATH.
fn find_bins() -> Bins {
    static BINS: OnceLock<Option<Bins>> = OnceLock::new();
    let found = BINS.get_or_init(|| {
        let mut versioned: Vec<(Vec<u32>, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let version = e
                    .file_name()
                    .to_str()?
                    .split('.')
                    .map(|p| p.parse().ok())
                    .collect::<Option<Vec<u32>>>()?;
                Some((version, e.path().join("bin")))
            })
            .collect();
        versioned.sort();
        let mut dirs: Vec<PathBuf> = versioned.into_iter().rev().map(|(_, d)| d).collect();
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        // initdb and postgres must come from the same installation; psql may be anywhere.
        let server = dirs
            .iter()
            .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())?;
        let psql = std::iter::once(server)
            .chain(&dirs)
            .map(|d| d.join("psql"))
            .find(|p| p.is_file())?;
        Some(Bins {
            initdb: server.join("initdb"),
            postgres: server.join("postgres"),
            psql,
        })
    });
    found.clone().unwrap_or_else(|| {
        panic!(
            "PostgreSQL's initdb, postgres or psql not found in /usr/lib/postgresql/*/bin or on \
             PATH: the end-to-end tests need PostgreSQL (scripts/test.sh installs it; or \
             `apt-get install postgresql postgresql-contrib`)"
        )
    })
}

/// A user account the server can run as.
#[derive(Clone, Copy, Debug)]
struct Account {
    uid: u32,
    gid: u32,
}

/// The account to run initdb and postgres as: `None` (this process's own) unless we are
/// root, which PostgreSQL refuses to run as; then `postgres` (Debian's package creates it),
/// else `nobody`.
fn server_account() -> Option<Account> {
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    static ACCOUNT: OnceLock<Option<Account>> = OnceLock::new();
    let account = *ACCOUNT.get_or_init(|| {
        ["postgres", "nobody"]
            .into_iter()
            .filter_map(lookup_account)
            .find(|a| a.uid != 0)
    });
    Some(account.unwrap_or_else(|| {
        panic!(
            "the tests run as root, which PostgreSQL refuses to run as, and there is no \
             `postgres` or `nobody` account to run it as (apt-get install postgresql creates \
             `postgres`)"
        )
    }))
}

fn lookup_account(name: &str) -> Option<Account> {
    let name = CString::new(name).ok()?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // The reentrant lookup: tests start instances from several threads at once.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some(Account {
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

/// `cmd` set to run as `owner` (if any) in `dir`, without the environment's `PG*` variables.
fn as_server<'a>(cmd: &'a mut Command, owner: Option<Account>, dir: &Path) -> &'a mut Command {
    if let Some(a) = owner {
        // std drops the supplementary groups too when it changes the uid of a root process.
        cmd.uid(a.uid).gid(a.gid);
    }
    // The test's working directory may be unreadable to that account (under /root).
    cmd.current_dir(dir);
    clear_pg_env(cmd);
    cmd
}

/// Removes the `PG*` variables (PGHOST, PGPASSWORD, PGSSLMODE, ...) a developer's shell may
/// have set, which libpq-based programs would otherwise obey.
fn clear_pg_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PG") {
            cmd.env_remove(name);
        }
    }
}

/// A CA (`ca.pem`, `ca.key`) and a server certificate for 127.0.0.1 and localhost
/// (`server.crt`, `server.key`, the key readable by the server's account only) in `dir`.
fn make_certs(dir: &Path, owner: Option<Account>) {
    crate::make_ca(dir, "/CN=fleetbench PostgreSQL test CA");
    crate::issue_cert(
        dir,
        "server",
        "localhost",
        "basicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\n\
         subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        "server.crt",
    );
    // postgres refuses a key that others can read, or that belongs to someone else.
    let key = dir.join("server.key");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).expect("chmod server.key");
    if let Some(a) = owner {
        for f in ["server.key", "server.crt"] {
            std::os::unix::fs::chown(dir.join(f), Some(a.uid), Some(a.gid))
                .unwrap_or_else(|e| panic!("chown {f}: {e}"));
        }
    }
}

/// A new empty directory for one instance, `<tmp>/fleetbench-pg-<pid>-<n>`, owned by `owner`.
fn new_dir(owner: Option<Account>) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{DIR_PREFIX}{}-{n}", std::process::id());
    let tmp = std::env::temp_dir();
    let mut dir = tmp.join(&name);
    // A Unix socket path must fit in 108 bytes, and the server's account must be able to
    // reach the directory: otherwise /tmp.
    let reachable = owner.is_none() || tmp.ancestors().all(searchable_by_others);
    if !reachable || dir.join(".s.PGSQL.65535.lock").as_os_str().len() > 100 {
        dir = Path::new("/tmp").join(&name);
    }
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", dir.display()));
    if let Some(a) = owner {
        std::os::unix::fs::chown(&dir, Some(a.uid), Some(a.gid))
            .unwrap_or_else(|e| panic!("chown {}: {e}", dir.display()));
    }
    dir
}

fn searchable_by_others(dir: &Path) -> bool {
    fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
}

/// Shuts down (immediately) the server of an abandoned directory, if its pid file names a
/// live postgres that really uses this directory (the pid may have been reused).
fn kill_orphan(dir: &Path) {
    let data = dir.join("data");
    let Some(pid) = fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|s| s.lines().next()?.trim().parse::<i32>().ok())
    else {
        return;
    };
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let needle = format!("-D\0{}\0", data.display());
    if String::from_utf8_lossy(&cmdline).contains(&needle) {
        // SIGQUIT: the postmaster takes its backends down with it.
        unsafe {
            libc::kill(pid, libc::SIGQUIT);
        }
    }
}

/// Live processes whose parent is `parent`.
fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| matches!(proc_stat(pid), Some((_, ppid)) if ppid == parent))
        .collect()
}
