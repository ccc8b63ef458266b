//! OLTP bad input: one clear error line on stderr, a non-zero exit, and nothing created or
//! dropped behind the user's back.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{expect_usage_error, fleetbench};

/// The `--mysql-*` options that point at `db`, but for the database (the default, sbtest,
/// unless a test names another).
fn opts(db: &MariaDb) -> Vec<String> {
    let mut o = db.fleetbench_args();
    o.retain(|a| !a.starts_with("--mysql-db="));
    o
}

/// Runs fleetbench with `args` + `extra`; expects exit 2 and one stderr line holding every
/// string of `expect`.
fn refused(args: &[&str], extra: &[String], expect: &[&str]) -> String {
    let all: Vec<&str> = args
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
        .collect();
    let out = fleetbench(&all);
    let err = expect_usage_error(&out, &format!("{all:?}"), expect);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Threads started"));
    err
}

fn tables(db: &MariaDb) -> String {
    db.sql("SHOW TABLES FROM sbtest").trim().to_string()
}

#[test]
fn connection_problems_are_named() {
    let db = MariaDb::start();
    let mut o = opts(&db);
    o[3] = "--mysql-password=wrong".into();
    refused(
        &["oltp_read_write", "prepare"],
        &o,
        &["access denied on target default", "1045"],
    );
    refused(
        &["oltp_read_write", "--time=1", "run"],
        &o,
        &["access denied"],
    );
    refused(
        &["oltp_read_write", "--mysql-host=nohost.invalid", "prepare"],
        &[],
        &["cannot connect to target default (nohost.invalid:3306)"],
    );
    let o = opts(&db);
    refused(
        &["oltp_read_write", "--mysql-db=nosuch", "prepare"],
        &o,
        &[
            "database 'nosuch' does not exist on target default",
            "CREATE DATABASE nosuch",
        ],
    );
    assert_eq!(tables(&db), "", "nothing was created");
}

#[test]
fn existing_tables_stop_prepare_before_anything_is_created() {
    let db = MariaDb::start();
    let o = opts(&db);
    db.sql(
        "CREATE TABLE sbtest.sbtest2 (id INT PRIMARY KEY); INSERT INTO sbtest.sbtest2 VALUES (7)",
    );
    let err = refused(
        &[
            "oltp_read_write",
            "--tables=3",
            "--table-size=100",
            "prepare",
        ],
        &o,
        &["already exist", "sbtest2"],
    );
    assert!(err.contains("nothing was created or dropped"), "{err}");
    // Not sbtest1 nor sbtest3: the check runs before any CREATE.
    assert_eq!(tables(&db), "sbtest2");
    assert_eq!(
        db.sql("SELECT id FROM sbtest.sbtest2").trim(),
        "7",
        "the user's table is untouched"
    );
}

#[test]
fn a_prepare_refused_by_several_agents_names_every_agent_and_table() {
    use fleetbench_tests::AgentProc;
    let db = MariaDb::start();
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let mut o = opts(&db);
    o.push(format!("--agents={},{}", a.addr, b.addr));
    db.sql(
        "CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY); CREATE TABLE sbtest.sbtest4 (id INT PRIMARY KEY)",
    );
    // Tables 1-2 are the first agent's share, 3-4 the second's: both refuse.
    let err = refused(
        &[
            "oltp_read_write",
            "--tables=4",
            "--table-size=100",
            "prepare",
        ],
        &o,
        &[
            "prepare refused, nothing was created or dropped",
            &format!("agent {}: tables already exist on target default", a.addr),
            &format!("agent {}: tables already exist on target default", b.addr),
            "sbtest1",
            "sbtest4",
            "run cleanup first",
        ],
    );
    assert!(!err.contains("refused the run"), "{err}");
    assert_eq!(tables(&db), "sbtest1\nsbtest4");
}

#[test]
fn running_without_tables_names_the_missing_table() {
    let db = MariaDb::start();
    let o = opts(&db);
    refused(
        &["oltp_read_write", "--time=1", "run"],
        &o,
        &[
            "table sbtest1 does not exist on target default",
            "run prepare first",
        ],
    );
    refused(
        &[
            "oltp_point_select",
            "--time=1",
            "--db-ps-mode=disable",
            "run",
        ],
        &o,
        &["table sbtest1 does not exist"],
    );
}

#[test]
fn bad_options_are_refused_before_any_connection() {
    // No database needed: these never get that far.
    let t = ["--target=a=mysql://sbtest@127.0.0.1:1/sbtest".to_string()];
    for (map, says) in [
        ("--table-map=sbtest1-3=b", "unknown target 'b'"),
        ("--table-map=sbtest1-2=a", "no target for sbtest3"),
        (
            "--table-map=sbtest1-3=a,sbtest2=a",
            "sbtest2 is mapped twice",
        ),
    ] {
        refused(&["oltp_read_write", "--tables=3", map, "run"], &t, &[says]);
    }
    let two = [
        t[0].clone(),
        "--target=b=mysql://sbtest@127.0.0.1:2/sbtest".to_string(),
    ];
    refused(&["oltp_read_write", "run"], &two, &["--table-map"]);
    // Conflicting options: one target name twice, a target with the --mysql-* options
    // that say where to connect (either would be silently ignored).
    let twice = [
        t[0].clone(),
        "--target=a=mysql://sbtest@127.0.0.1:2/sbtest".to_string(),
    ];
    for test in ["oltp_read_write", "tpcc"] {
        refused(&[test, "prepare"], &twice, &["--target a is given twice"]);
    }
    for option in [
        "--mysql-host=db2",
        "--mysql-port=3307",
        "--mysql-socket=/tmp/my.sock",
        "--mysql-user=u",
        "--mysql-password=pw",
        "--mysql-db=other",
    ] {
        let name = option.split('=').next().unwrap();
        for test in ["oltp_read_write", "tpcc"] {
            refused(
                &[test, option, "run"],
                &t,
                &["--target a and", &format!("{name} contradict each other")],
            );
        }
    }
    // (the option, what the error says)
    for (option, says) in [
        (
            "--table-size=50",
            &["--range-size=100 is larger than --table-size=50"][..],
        ),
        ("--target=nourl", &["invalid --target 'nourl'"]),
        ("--db-ps-mode=sometimes", &["--db-ps-mode"]),
        ("--rand-type=lumpy", &["lumpy"]),
        ("--auto-inc=maybe", &["--auto-inc"]),
        (
            "--mysql-ssl-mode=sometimes",
            &["--mysql-ssl-mode", "verify_identity"],
        ),
        ("--mysql-ssl-mode=verify_ca", &["needs --mysql-ssl-ca"]),
    ] {
        refused(&["oltp_read_write", option, "run"], &[], says);
    }
}
