//! Tests of the private-MariaDB harness itself (`fleetbench_tests::mariadb`): instances are
//! independent, reachable as the `sbtest` user over TCP, report status counters, survive a
//! restart with their data and port, and leave nothing behind when stopped.
//!
//! They need `mariadbd` and `mariadb-install-db` (scripts/test.sh installs them) and fail,
//! rather than skip, without them.

use std::net::TcpStream;
use std::time::Instant;

use fleetbench_tests::mariadb::MariaDb;
use mysql_async::prelude::Queryable;

/// The `sbtest` user's view over TCP: `SELECT 1` through `url()`.
async fn select_one(url: &str) -> i64 {
    let mut conn = mysql_async::Conn::from_url(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    let v: Option<i64> = conn.query_first("SELECT 1").await.expect("SELECT 1");
    conn.disconnect().await.expect("disconnect");
    v.expect("a row")
}

#[test]
fn two_instances_at_once_are_independent() {
    // Started from two threads at once, as parallel tests would.
    let t = Instant::now();
    let a = std::thread::spawn(MariaDb::start);
    let b = std::thread::spawn(MariaDb::start);
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    eprintln!("two instances started in {:?}", t.elapsed());

    assert_ne!(a.port(), b.port());
    assert_ne!(a.port(), 3306, "must never be the system server's port");
    assert_ne!(a.socket(), b.socket());

    a.sql("CREATE TABLE sbtest.only_in_a (id INT PRIMARY KEY); INSERT INTO sbtest.only_in_a VALUES (7)");
    assert_eq!(a.sql("SELECT id FROM sbtest.only_in_a").trim(), "7");
    let in_b = b.sql(
        "SELECT COUNT(*) FROM information_schema.tables \
         WHERE table_schema = 'sbtest' AND table_name = 'only_in_a'",
    );
    assert_eq!(in_b.trim(), "0");
}

#[tokio::test]
async fn sbtest_user_connects_over_tcp() {
    let db = MariaDb::start();
    assert_eq!(
        db.url(),
        format!("mysql://sbtest:sbtest-pw@127.0.0.1:{}/sbtest", db.port())
    );
    assert_eq!(select_one(&db.url()).await, 1);

    // The grants reach every schema and DDL, as the OLTP prepare step needs.
    let mut conn = mysql_async::Conn::from_url(db.url())
        .await
        .expect("connect");
    conn.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
        .await
        .expect("create table as sbtest");
    conn.query_drop("INSERT INTO t VALUES (1, 10), (2, 20)")
        .await
        .expect("insert");
    let db_name: Option<String> = conn.query_first("SELECT DATABASE()").await.unwrap();
    assert_eq!(db_name.as_deref(), Some("sbtest"));
    conn.disconnect().await.unwrap();
    assert_eq!(db.sql("SELECT SUM(k) FROM sbtest.t").trim(), "30");
}

#[tokio::test]
async fn com_select_counts_selects() {
    let db = MariaDb::start();
    let before = db.status("Com_select");
    let mut conn = mysql_async::Conn::from_url(db.url())
        .await
        .expect("connect");
    for i in 0..5i64 {
        let v: Option<i64> = conn.query_first(format!("SELECT {i}")).await.unwrap();
        assert_eq!(v, Some(i));
    }
    conn.disconnect().await.unwrap();
    let after = db.status("Com_select");
    assert!(
        after >= before + 5,
        "Com_select went from {before} to {after} after 5 SELECTs"
    );
    // Names are matched case-insensitively, as SHOW STATUS does.
    assert!(db.status("com_select") >= after);
}

#[test]
#[should_panic(expected = "no global status variable")]
fn unknown_status_variable_panics() {
    let db = MariaDb::start();
    db.status("No_such_counter");
}

#[tokio::test]
async fn restart_keeps_data_and_port() {
    let mut db = MariaDb::start();
    let port = db.port();
    db.sql("CREATE TABLE sbtest.kept (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO sbtest.kept VALUES (1), (2), (3)");

    let t = Instant::now();
    db.restart();
    eprintln!("restart took {:?}", t.elapsed());

    assert_eq!(db.port(), port);
    assert_eq!(db.sql("SELECT COUNT(*) FROM sbtest.kept").trim(), "3");
    // Counters start over: it really is a new server process.
    assert!(db.status("Uptime") < 60);
    assert_eq!(select_one(&db.url()).await, 1);
}

#[test]
fn stop_frees_the_port_and_removes_the_datadir() {
    let mut db = MariaDb::start();
    let port = db.port();
    let dir = db.socket().parent().expect("datadir").to_path_buf();
    assert!(dir.is_dir());
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());

    db.stop();
    assert!(!dir.exists(), "{} still exists after stop", dir.display());
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still accepts connections after stop"
    );
    db.stop(); // idempotent, and drop after stop is fine too
}
