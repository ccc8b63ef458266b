//! Old (0.4/0.5) OLTP command lines end to end, 0.4's options that change the load, and
//! sysbench 1.0's prewarm, on a private MariaDB: what the server sees (connections,
//! transactions, statements, tables and their options, client hosts) is what the options
//! say.

use std::time::Duration;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Running, Scratch, fleetbench_ok, wait_until};

#[test]
fn transaction_reconnect_mode_opens_a_connection_per_transaction() {
    let common = [
        "--test=oltp",
        "--oltp-tables-count=1",
        "--oltp-table-size=500",
    ];
    let db = MariaDb::prepared(&common);
    let before = db.status("Connections");
    let out = db.fleetbench_ok(&[
        &common,
        &[
            "--num-threads=2",
            "--max-requests=200",
            "--oltp-reconnect-mode=transaction",
            "run",
        ],
    ]);
    let opened = db.status("Connections") - before;
    // One per transaction after each thread's first, plus the two first connections and
    // the few of the coordinator's checks.
    assert!(
        (198..=215).contains(&opened),
        "{opened} connections:\n{out}"
    );
    assert!(
        out.contains("transactions:                        200 "),
        "{out}"
    );
    // query with one statement per event (simple) is the same; random about every other.
    for (mode, range) in [
        (
            &["--oltp-test-mode=simple", "--oltp-reconnect-mode=query"][..],
            198..=215,
        ),
        (&["--oltp-reconnect-mode=random"][..], 60..=140),
    ] {
        let before = db.status("Connections");
        let out = db.fleetbench_ok(&[
            &common,
            mode,
            &["--num-threads=2", "--max-requests=200", "run"],
        ]);
        let opened = db.status("Connections") - before;
        assert!(
            range.contains(&opened),
            "{mode:?}: {opened} connections:\n{out}"
        );
    }
}

#[test]
fn myisam_without_transactions_and_table_options() {
    let common = [
        "--test=oltp",
        "--oltp-table-size=300",
        "--mysql-table-engine=myisam",
        "--mysql-create-options=COMMENT='made by fleetbench'",
    ];
    let db = MariaDb::prepared(&common);
    // 0.4's one table, named as 0.4 named it.
    let ddl = db.sql("SHOW CREATE TABLE sbtest.sbtest");
    assert!(ddl.contains("ENGINE=MyISAM"), "{ddl}");
    // 0.4 gave MyISAM tables MAX_ROWS (1,000,000 unless --myisam-max-rows says otherwise).
    assert!(ddl.contains("MAX_ROWS=1000000"), "{ddl}");
    assert!(ddl.contains("COMMENT='made by fleetbench'"), "{ddl}");
    let (begin, commit) = (db.status("Com_begin"), db.status("Com_commit"));
    let selects = db.status("Com_select");
    let out = db.fleetbench_ok(&[&common, &["--num-threads=1", "--max-requests=50", "run"]]);
    // --mysql-engine-trx=auto: MyISAM has no transactions, so neither BEGIN nor COMMIT.
    // (One thread: without transactions, two threads' DELETE/INSERT pairs of the same id
    // collide on the primary key, with sysbench as here.)
    assert_eq!(db.status("Com_begin"), begin, "{out}");
    assert_eq!(db.status("Com_commit"), commit, "{out}");
    assert!(db.status("Com_select") - selects >= 50 * 14, "{out}");
}

#[test]
fn think_time_paces_a_thread_without_entering_its_latency() {
    let common = ["--test=oltp", "--oltp-table-size=300"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("legacy-think");
    let (_, j) = db.run_json(
        &[
            &common,
            &["--oltp-read-only=on", "--num-threads=1", "--max-time=2"],
            &["--oltp-user-delay-min=40000", "--oltp-user-delay-max=40000"],
            &["--oltp-connect-delay=100000"],
        ],
        &dir.path("think.json"),
    );
    let events = j["totals"]["events"].as_u64().unwrap();
    // 40 ms between transactions: at most 50 in 2 s.
    assert!((10..=51).contains(&events), "{events}");
    let avg = j["totals"]["latency_ms"]["avg"].as_f64().unwrap();
    assert!(avg < 30.0, "the think time is not latency: avg {avg} ms");
}

#[test]
fn a_host_list_spreads_connections_round_robin() {
    // One server on two loopback addresses, as two hosts of a cluster would be.
    let db = MariaDb::start_with(&["--bind-address=127.0.0.1,127.0.0.2"]);
    let mut prepare = db.args(&["oltp_point_select", "--table-size=300", "prepare"]);
    prepare.retain(|a| !a.starts_with("--mysql-host"));
    prepare.push("--mysql-host=127.0.0.1".into());
    fleetbench_ok(&prepare);
    let mut run = db.args(&[
        "oltp_point_select",
        "--table-size=300",
        "--threads=4",
        "--time=4",
        "--report-interval=1",
    ]);
    run.retain(|a| !a.starts_with("--mysql-host"));
    run.extend(["--mysql-host=127.0.0.1,127.0.0.2".into(), "run".into()]);
    let running = Running::until_first_interval(&run);
    // The server sees every loopback client as 127.0.0.1, so count from the client's side:
    // established connections to each of the server's two addresses.
    let port = db.port();
    let mut counts = (0, 0);
    let seen = wait_until(Duration::from_secs(3), || {
        counts = (
            established_to([127, 0, 0, 1], port),
            established_to([127, 0, 0, 2], port),
        );
        counts == (2, 2)
    });
    let (code, out) = running.finish();
    assert_eq!(code, Some(0), "{out}");
    assert!(seen, "connections to 127.0.0.1 and 127.0.0.2: {counts:?}");
}

/// Established TCP connections (IPv4) whose remote end is `addr:port`, from /proc/net/tcp.
fn established_to(addr: [u8; 4], port: u16) -> usize {
    // The kernel writes the address as the little-endian hex of its 32-bit value.
    let want = format!("{:08X}:{port:04X}", u32::from_le_bytes(addr));
    std::fs::read_to_string("/proc/net/tcp")
        .expect("/proc/net/tcp")
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2] == want && f[3] == "01"
        })
        .count()
}

#[test]
fn test_modes_of_0_4_send_their_statements() {
    let common = ["--test=oltp", "--oltp-table-size=300"];
    let db = MariaDb::prepared(&common);
    let counters = [
        "Com_select",
        "Com_update",
        "Com_insert",
        "Com_delete",
        "Com_begin",
    ];
    // (options, the counter that grows by one per event)
    for (mode, grows) in [
        (&["--oltp-test-mode=simple"][..], "Com_select"),
        (&["--oltp-test-mode=nontrx"][..], "Com_select"),
        (
            &["--oltp-test-mode=nontrx", "--oltp-nontrx-mode=update_key"][..],
            "Com_update",
        ),
        (
            &["--oltp-test-mode=nontrx", "--oltp-nontrx-mode=update_nokey"][..],
            "Com_update",
        ),
        (
            &["--oltp-test-mode=nontrx", "--oltp-nontrx-mode=insert"][..],
            "Com_insert",
        ),
        (
            &["--oltp-test-mode=nontrx", "--oltp-nontrx-mode=delete"][..],
            "Com_delete",
        ),
    ] {
        let before: Vec<u64> = counters.iter().map(|c| db.status(c)).collect();
        let out = db.fleetbench_ok(&[
            &common,
            mode,
            &["--num-threads=1", "--max-requests=40", "run"],
        ]);
        for (c, b) in counters.iter().zip(&before) {
            let grew = db.status(c) - b;
            let want = if *c == grows { 40 } else { 0 };
            assert_eq!(grew, want, "{mode:?}: {c} grew by {grew}\n{out}");
        }
    }
}

#[test]
fn prewarm_reads_every_table_by_both_keys_over_the_agents() {
    let common = ["oltp_read_write", "--tables=3", "--table-size=300"];
    let db = MariaDb::prepared(&common);
    let selects = db.status("Com_select");
    let out = db.fleetbench_ok(&[&common, &["--local-agents=2", "prewarm"]]);
    // Two statements per table: the primary key, then the secondary index.
    assert_eq!(db.status("Com_select") - selects, 6, "{out}");
    for n in 1..=3 {
        assert!(
            out.contains(&format!("Prewarming table 'sbtest{n}'...")),
            "{out}"
        );
    }
    // A table that is not there is one error line and exit 2.
    let bad_args = db.args(&[
        "oltp_read_write",
        "--tables=4",
        "--table-size=300",
        "prewarm",
    ]);
    let bad_args: Vec<&str> = bad_args.iter().map(String::as_str).collect();
    let bad = fleetbench_tests::fleetbench(&bad_args);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("sbtest4") && err.contains("doesn't exist"),
        "{err}"
    );
}

/// The tables that exist in the test database.
fn sbtest_tables(db: &MariaDb) -> Vec<String> {
    db.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'sbtest' ORDER BY table_name")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn old_command_lines_run_prepare_run_and_cleanup() {
    let db = MariaDb::start();
    // 0.5, as published write-ups give it: a script path, old names, bare and =on switches.
    let v05 = [
        "--test=/usr/share/doc/sysbench/tests/db/oltp.lua",
        "--oltp-tables-count=2",
        "--oltp-table-size=500",
        "--mysql-table-engine=innodb",
        "--num-threads=4",
        "--rand-init=on",
        "--oltp-read-only=off",
    ];
    db.fleetbench_ok(&[&v05, &["prepare"]]);
    assert_eq!(sbtest_tables(&db), ["sbtest1", "sbtest2"]);
    let out = db.fleetbench_ok(&[
        &v05,
        &[
            "--max-requests=0",
            "--max-time=2",
            "--report-interval=1",
            "--report-style=0.5",
            "run",
        ],
    ]);
    assert!(out.contains("[   1s] threads: 4, tps: "), "{out}");
    assert!(out.contains("OLTP test statistics:"), "{out}");
    // 0.5's other scripts on the same tables, then cleanup.
    for script in ["select.lua", "update_index.lua", "oltp_simple.lua"] {
        let out = fleetbench_ok(&db.args(&[
            &format!("--test=tests/db/{script}"),
            "--oltp-tables-count=2",
            "--oltp-table-size=500",
            "--num-threads=2",
            "--max-requests=100",
            "run",
        ]));
        assert!(
            out.contains("total number of events:              100"),
            "{script}: {out}"
        );
    }
    db.fleetbench_ok(&[&v05, &["cleanup"]]);
    assert!(sbtest_tables(&db).is_empty());

    // 0.5's parallel_prepare.lua: its run prepares (0.5's sbtest1..N), its cleanup drops.
    let pp = [
        "--test=parallel_prepare.lua",
        "--oltp-tables-count=2",
        "--oltp-table-size=500",
        "--num-threads=2",
    ];
    db.fleetbench_ok(&[&pp, &["run"]]);
    assert_eq!(sbtest_tables(&db), ["sbtest1", "sbtest2"]);
    assert_eq!(db.sql("SELECT COUNT(*) FROM sbtest.sbtest2").trim(), "500");
    db.fleetbench_ok(&[&pp, &["cleanup"]]);
    assert!(sbtest_tables(&db).is_empty());

    // 0.4's built-in test: its one table is sbtest, as 0.4 named it.
    let v04 = ["--test=oltp", "--oltp-table-size=500", "--num-threads=2"];
    db.fleetbench_ok(&[&v04, &["prepare"]]);
    assert_eq!(sbtest_tables(&db), ["sbtest"]);
    let out = db.fleetbench_ok(&[
        &v04,
        &[
            "--oltp-test-mode=complex",
            "--max-requests=200",
            "--init-rng=on",
            "--report-style=0.4",
            "run",
        ],
    ]);
    assert!(
        out.contains("transactions:                        200 "),
        "{out}"
    );
    assert!(out.contains("General statistics:"), "{out}");
    db.fleetbench_ok(&[&v04, &["cleanup"]]);
    assert!(sbtest_tables(&db).is_empty());
}

#[test]
fn the_single_table_of_0_4_goes_by_its_name() {
    let db = MariaDb::start();
    let common = [
        "--test=oltp",
        "--oltp-table-name=sbtest",
        "--oltp-table-size=300",
    ];
    let out = db.fleetbench_ok(&[&common, &["prepare"]]);
    assert!(out.contains("Creating table 'sbtest'..."), "{out}");
    assert_eq!(sbtest_tables(&db), ["sbtest"]);
    assert_eq!(db.sql("SELECT COUNT(*) FROM sbtest.sbtest").trim(), "300");
    let out = db.fleetbench_ok(&[&common, &["--max-requests=50", "--num-threads=2", "run"]]);
    assert!(
        out.contains("transactions:                        50 "),
        "{out}"
    );
    assert!(
        out.contains("(127.0.0.1:") && out.contains("): sbtest\n"),
        "{out}"
    );
    db.fleetbench_ok(&[&common, &["cleanup"]]);
    assert!(sbtest_tables(&db).is_empty());
    // Without the option, 0.4's test still names its table as 0.4 did; counting tables
    // (0.5's option) numbers them.
    let plain = ["--test=oltp", "--oltp-table-size=100"];
    let out = db.fleetbench_ok(&[&plain, &["prepare"]]);
    assert!(out.contains("Creating table 'sbtest'..."), "{out}");
    db.fleetbench_ok(&[&plain, &["cleanup"]]);
    let counted = [
        "--test=oltp",
        "--oltp-tables-count=1",
        "--oltp-table-size=100",
    ];
    db.fleetbench_ok(&[&counted, &["prepare"]]);
    assert_eq!(sbtest_tables(&db), ["sbtest1"]);
    db.fleetbench_ok(&[&counted, &["cleanup"]]);
    assert!(sbtest_tables(&db).is_empty());
    // One name is one table.
    let two = db.args(&[&common[..], &["--oltp-tables-count=2", "prepare"]].concat());
    let two: Vec<&str> = two.iter().map(String::as_str).collect();
    let refused = fleetbench_tests::fleetbench(&two);
    assert_eq!(refused.status.code(), Some(2));
    assert!(sbtest_tables(&db).is_empty());
}

#[test]
fn sp_mode_calls_the_stored_procedure_once_per_event() {
    let common = ["--test=oltp", "--oltp-table-size=200"];
    let db = MariaDb::prepared(&common);
    // The user's own procedures beside the table: one that writes (each call leaves a row)
    // and one that returns a result set, which the client must read past.
    db.sql(
        "CREATE TABLE sbtest.sp_calls (n INT) ENGINE=InnoDB; \
         CREATE PROCEDURE sbtest.bench_write() INSERT INTO sbtest.sp_calls VALUES (1); \
         CREATE PROCEDURE sbtest.bench_read() SELECT c FROM sbtest.sbtest WHERE id <= 3",
    );
    for (name, ps) in [
        ("bench_write", "--db-ps-mode=auto"),
        ("sbtest.bench_read", "--db-ps-mode=disable"),
    ] {
        let calls = db.status("Com_call_procedure");
        let out = db.fleetbench_ok(&[
            &common,
            &[
                "--oltp-test-mode=sp",
                &format!("--oltp-sp-name={name}"),
                ps,
                "--num-threads=2",
                "--max-requests=40",
                "run",
            ],
        ]);
        assert_eq!(
            db.status("Com_call_procedure") - calls,
            40,
            "{name}: one CALL per event\n{out}"
        );
        // Each call is one "other" query of its transaction, as sysbench counts a CALL.
        assert!(
            out.contains("transactions:                        40 "),
            "{out}"
        );
        assert!(out.contains("other:                           40"), "{out}");
    }
    assert_eq!(db.sql("SELECT COUNT(*) FROM sbtest.sp_calls").trim(), "40");

    // Without a name, or with one that is not a name, nothing runs.
    for bad in [
        &["--oltp-test-mode=sp"][..],
        &[
            "--oltp-test-mode=sp",
            "--oltp-sp-name=p(); DROP TABLE sbtest1",
        ][..],
    ] {
        let args = db.args(&[&common[..], bad, &["run"]].concat());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fleetbench_tests::fleetbench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--oltp-sp-name"), "{err}");
    }
    // A procedure that does not exist stops the run with the server's word for it.
    let args = db.args(
        &[
            &common[..],
            &[
                "--oltp-test-mode=sp",
                "--oltp-sp-name=missing",
                "--max-requests=5",
                "run",
            ],
        ]
        .concat(),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = fleetbench_tests::fleetbench(&args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("missing does not exist"), "{text}");

    // Cleanup drops what fleetbench made, not the user's procedures and table.
    db.fleetbench_ok(&[&common, &["cleanup"]]);
    assert_eq!(sbtest_tables(&db), ["sp_calls"]);
    assert_eq!(
        db.sql("SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = 'sbtest'")
            .trim(),
        "2"
    );
}
