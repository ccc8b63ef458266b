//! Tests of the private-PostgreSQL harness itself (`fleetbench_tests::postgres`): instances
//! answer the harness's SQL, have pg_stat_statements, let the `sbtest` role in over TCP with
//! its password only (SCRAM, MD5, or TLS verified against the instance's CA), work with
//! sysbench's pgsql driver, survive a kill and a restart with their data and port, and leave
//! nothing running when stopped or when the test process dies.
//!
//! They need PostgreSQL (scripts/test.sh installs it) and fail, rather than skip, without it.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{PgOpts, Postgres};

/// Runs `sql` with psql as the sbtest role over TCP with `conninfo` (host, port and user are
/// added) and `password`; psql's output, or its error.
fn login(pg: &Postgres, conninfo: &str, password: &str, sql: &str) -> Result<String, String> {
    let conninfo = format!(
        "host=127.0.0.1 port={} user=sbtest dbname=sbtest connect_timeout=5 {conninfo}",
        pg.port()
    );
    let out = pg
        .psql_command()
        .args(["-A", "-t", "-d", &conninfo, "-c", sql])
        .env("PGPASSWORD", password)
        .stdin(Stdio::null())
        .output()
        .expect("run psql");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The sbtest role gets in with `sbpass` and not with another password.
fn assert_password_checked(pg: &Postgres, conninfo: &str) {
    assert_eq!(
        login(pg, conninfo, "sbpass", "SELECT current_user").unwrap(),
        "sbtest"
    );
    let err = login(pg, conninfo, "wrong", "SELECT 1").unwrap_err();
    assert!(
        err.contains("password authentication failed for user \"sbtest\""),
        "a wrong password: {err}"
    );
}

#[test]
fn default_server_uses_scram_and_has_pg_stat_statements() {
    let t = Instant::now();
    let pg = Postgres::start();
    eprintln!("started in {:?}", t.elapsed());

    assert_ne!(pg.port(), 5432, "must never be the system server's port");
    assert_eq!(
        pg.url(),
        format!("postgres://sbtest:sbpass@127.0.0.1:{}/sbtest", pg.port())
    );
    assert_eq!(pg.ca_path(), None);
    assert!(
        pg.socket_dir()
            .join(format!(".s.PGSQL.{}", pg.port()))
            .exists()
    );
    assert_eq!(pg.sql("SELECT 1"), "1");
    assert_eq!(
        pg.sql_db("postgres", "SELECT current_database()"),
        "postgres"
    );
    assert_eq!(
        pg.sql("SHOW max_connections; SHOW fsync; SHOW listen_addresses"),
        "1200\noff\n127.0.0.1"
    );
    assert_eq!(
        pg.sql("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'sbtest'"),
        "t"
    );
    assert_eq!(
        pg.sql("SELECT DISTINCT auth_method FROM pg_hba_file_rules WHERE type = 'host'"),
        "scram-sha-256"
    );
    assert_eq!(
        pg.sql("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'sbtest'"),
        "sbtest"
    );
    assert_password_checked(&pg, "");

    // pg_stat_statements is loaded and counts the sbtest role's statements.
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'"),
        "1"
    );
    assert_eq!(pg.statement_calls("SELECT $1 + $2 AS fleetbench%"), 0);
    for i in 0..3 {
        let sql = format!("SELECT {i} + 1 AS fleetbench_probe");
        assert_eq!(login(&pg, "", "sbpass", &sql).unwrap(), (i + 1).to_string());
    }
    assert_eq!(pg.statement_calls("SELECT $1 + $2 AS fleetbench%"), 3);

    // The sbtest role owns its schema: it can create tables, as sysbench's prepare does.
    login(&pg, "", "sbpass", "CREATE TABLE t (id int PRIMARY KEY)").unwrap();
    pg.sql("INSERT INTO t VALUES (1), (2)");
    assert_eq!(
        login(&pg, "", "sbpass", "SELECT sum(id) FROM t").unwrap(),
        "3"
    );
}

#[test]
#[should_panic(expected = "SQL failed on the PostgreSQL")]
fn failed_sql_panics() {
    let pg = Postgres::start();
    pg.sql("SELECT * FROM no_such_table");
}

#[test]
fn md5_server_stores_and_asks_for_md5() {
    let pg = Postgres::start_with(PgOpts {
        auth: "md5",
        ..PgOpts::default()
    });
    assert_eq!(
        pg.sql("SELECT rolpassword LIKE 'md5%' FROM pg_authid WHERE rolname = 'sbtest'"),
        "t"
    );
    assert_eq!(
        pg.sql("SELECT DISTINCT auth_method FROM pg_hba_file_rules WHERE type = 'host'"),
        "md5"
    );
    assert_password_checked(&pg, "");
}

#[test]
fn tls_server_is_verified_against_its_ca() {
    let pg = Postgres::start_with(PgOpts {
        tls: true,
        ..PgOpts::default()
    });
    let ca = pg.ca_path().expect("a CA with tls");
    assert!(ca.is_file(), "{} is missing", ca.display());
    let verified = format!("sslmode=verify-full sslrootcert={}", ca.display());
    assert_password_checked(&pg, &verified);
    let ssl = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
    assert_eq!(login(&pg, &verified, "sbpass", ssl).unwrap(), "t");
    // The certificate names localhost too.
    let by_name = login(
        &pg,
        &format!("{verified} host=localhost hostaddr=127.0.0.1"),
        "sbpass",
        ssl,
    );
    assert_eq!(by_name.unwrap(), "t");
    // Another CA does not vouch for it, and plain TCP is still accepted.
    let err = login(
        &pg,
        "sslmode=verify-full sslrootcert=/etc/ssl/certs/ca-certificates.crt",
        "sbpass",
        ssl,
    )
    .unwrap_err();
    assert!(err.contains("certificate verify failed"), "{err}");
    assert_eq!(login(&pg, "sslmode=disable", "sbpass", ssl).unwrap(), "f");
}

#[test]
fn trust_server_with_extra_settings() {
    let pg = Postgres::start_with(
        PgOpts {
            auth: "trust",
            ..PgOpts::default()
        }
        .setting("max_connections", 50)
        .setting("work_mem", "8MB"),
    );
    assert_eq!(pg.sql("SHOW max_connections; SHOW work_mem"), "50\n8MB");
    assert_eq!(login(&pg, "", "anything", "SELECT 1").unwrap(), "1");
}

#[test]
fn sysbench_pgsql_prepare_and_run() {
    let pg = Postgres::start();
    let common = ["oltp_point_select", "--tables=1", "--table-size=100"];
    pg.sysbench(&[&common[..], &["prepare"]].concat());
    assert_eq!(pg.sql("SELECT count(*) FROM sbtest1"), "100");
    let out = pg.sysbench(&[&common[..], &["--events=50", "--time=0", "run"]].concat());
    assert!(out.contains("transactions:"), "{out}");
    assert!(
        pg.statement_calls("SELECT c FROM sbtest1 WHERE id=%") >= 50,
        "{}",
        pg.sql("SELECT calls, query FROM pg_stat_statements")
    );
}

#[test]
fn kill_then_restart_keeps_data_and_port() {
    let mut pg = Postgres::start();
    let port = pg.port();
    pg.sql("CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1), (2), (3)");
    // With synchronous_commit=off the last commits may be in memory only: on disk now.
    pg.sql("CHECKPOINT");
    let started = pg.sql("SELECT pg_postmaster_start_time()");

    pg.kill();
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still accepts connections after kill"
    );
    let t = Instant::now();
    pg.restart();
    eprintln!("restart after kill took {:?}", t.elapsed());
    assert_eq!(pg.port(), port);
    assert_eq!(pg.sql("SELECT count(*) FROM kept"), "3");
    assert_ne!(pg.sql("SELECT pg_postmaster_start_time()"), started);
    assert_password_checked(&pg, "");

    // A clean restart too.
    pg.sql("INSERT INTO kept VALUES (4)");
    pg.restart();
    assert_eq!(pg.sql("SELECT count(*) FROM kept"), "4");
}

#[test]
fn synchronous_commit_on_survives_a_kill() {
    let mut pg = Postgres::start_with(PgOpts::default().setting("synchronous_commit", "on"));
    pg.sql("CREATE TABLE kept (id int); INSERT INTO kept VALUES (1)");
    pg.kill();
    pg.restart();
    assert_eq!(pg.sql("SELECT count(*) FROM kept"), "1");
}

#[test]
fn stop_frees_the_port_and_removes_the_directory() {
    let mut pg = Postgres::start();
    let port = pg.port();
    let dir = pg.socket_dir().to_path_buf();
    assert!(dir.join("data").is_dir());
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());

    pg.stop();
    assert!(!dir.exists(), "{} still exists after stop", dir.display());
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still accepts connections after stop"
    );
    pg.stop(); // idempotent, and drop after stop is fine too
}

/// Marks the line on which [`owner_process`] says where its server is.
const OWNER_LINE: &str = "private postgres at";

#[test]
fn server_dies_with_the_test_process() {
    // This test binary again, running only `owner_process`, killed without any cleanup.
    let mut owner = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "owner_process", "--ignored", "--nocapture"])
        .env("FLEETBENCH_PG_OWNER", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the owner process");
    let stdout = BufReader::new(owner.stdout.take().unwrap());
    let line = stdout
        .lines()
        .map_while(Result::ok)
        .find(|l| l.starts_with(OWNER_LINE))
        .expect("the owner process started a server");
    let mut words = line[OWNER_LINE.len()..].split_whitespace();
    let port: u16 = words.next().unwrap().parse().unwrap();
    let dir = words.next().unwrap().to_string();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());

    owner.kill().unwrap();
    owner.wait().unwrap();
    let gone = fleetbench_tests::wait_until(Duration::from_secs(10), || {
        TcpStream::connect(("127.0.0.1", port)).is_err()
    });
    assert!(gone, "the server on port {port} outlived its test process");
    // Another test process's next start would reap it; this one already has.
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "run by server_dies_with_the_test_process, as a process of its own"]
fn owner_process() {
    if std::env::var_os("FLEETBENCH_PG_OWNER").is_none() {
        return;
    }
    let pg = Postgres::start();
    println!("{OWNER_LINE} {} {}", pg.port(), pg.socket_dir().display());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}
