//! sysbench's OLTP tests and Lua scripts on PostgreSQL, end to end: real agent processes and
//! private PostgreSQL servers the tests start themselves, checked against the server's own
//! view (its catalog, pg_stat_statements) and against sysbench's pgsql driver side by side.

use std::process::Output;

use fleetbench_tests::postgres::{PgOpts, Postgres};
use fleetbench_tests::{AgentProc, Running, Scratch, fleetbench, json, run_json};

fn args(parts: &[&str], db: &Postgres) -> Vec<String> {
    parts
        .iter()
        .map(|s| s.to_string())
        .chain(db.pgsql_args())
        .collect()
}

fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}\n{text}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn run(a: &[String]) -> Output {
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    fleetbench(&refs)
}

/// sbtest1 as the catalog describes it: columns (type, default, null) and indexes.
fn schema(db: &Postgres) -> String {
    let cols = db.sql(
        "SELECT column_name, data_type, character_maximum_length, column_default, is_nullable \
         FROM information_schema.columns WHERE table_name = 'sbtest1' ORDER BY ordinal_position",
    );
    let idx =
        db.sql("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'sbtest1' ORDER BY 1");
    format!("{cols}\n{idx}")
}

/// What the server ran since the last reset, as sysbench counts it: SELECTs on the sbtest
/// tables are reads, UPDATE/INSERT/DELETE writes, BEGIN, COMMIT and ROLLBACK other.
fn server_mix(db: &Postgres) -> (u64, u64, u64) {
    let reads = db.statement_calls("SELECT%sbtest%");
    let writes = db.statement_calls("UPDATE sbtest%")
        + db.statement_calls("INSERT INTO sbtest%")
        + db.statement_calls("DELETE FROM sbtest%");
    let other =
        db.statement_calls("BEGIN") + db.statement_calls("COMMIT") + db.statement_calls("ROLLBACK");
    (reads, writes, other)
}

fn report_mix(j: &serde_json::Value) -> (u64, u64, u64, u64) {
    let sql = &j["totals"]["sql"];
    let n = |k: &str| sql[k].as_u64().unwrap_or_else(|| panic!("{k} in {sql}"));
    (n("reads"), n("writes"), n("others"), n("ignored_errors"))
}

#[test]
fn the_schema_is_sysbenchs_and_every_test_matches_the_servers_counts_over_two_agents() {
    let db = Postgres::start();
    // The table each tool creates, with and without --auto-inc.
    for flags in [&[][..], &["--auto-inc=off"]] {
        let mut sb = vec!["oltp_common", "--tables=1", "--table-size=100"];
        sb.extend_from_slice(flags);
        sb.push("prepare");
        db.sysbench(&sb);
        let theirs = schema(&db);
        db.sql("DROP TABLE sbtest1");
        let mut ours = vec!["oltp_read_write", "--tables=1", "--table-size=100"];
        ours.extend_from_slice(flags);
        ours.push("prepare");
        ok(&run(&args(&ours, &db)));
        assert_eq!(schema(&db), theirs, "{flags:?}");
        ok(&run(&args(
            &["oltp_read_write", "--tables=1", "cleanup"],
            &db,
        )));
        assert_eq!(
            db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sbtest%'"),
            "0"
        );
    }

    let (_a, _b, agents) = AgentProc::pair();
    let common = [
        "--agents",
        agents.as_str(),
        "--tables=4",
        "--table-size=10000",
    ];
    let mut prep: Vec<&str> = vec!["oltp_read_write"];
    prep.extend_from_slice(&common);
    prep.push("prepare");
    ok(&run(&args(&prep, &db)));
    for n in 1..=4 {
        assert_eq!(db.sql(&format!("SELECT count(*) FROM sbtest{n}")), "10000");
    }
    let scratch = Scratch::new("pg-mix");
    for test in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
        "select_random_points",
        "select_random_ranges",
    ] {
        db.sql("SELECT pg_stat_statements_reset()");
        let mut a: Vec<&str> = vec![test];
        a.extend_from_slice(&common);
        a.extend(["--threads=2", "--events=300"]);
        let (text, j) = run_json(&args(&a, &db), &scratch.path(&format!("{test}.json")));
        let (reads, writes, others, ignored) = report_mix(&j);
        assert!(reads + writes > 0, "{test}: {text}");
        if ignored == 0 {
            // sysbench counts a DML statement that changed no row (a DELETE of an id
            // deleted before) as "other": the server's DML and others add up the same.
            let (r, w, o) = server_mix(&db);
            assert_eq!(
                (r, w + o),
                (reads, writes + others),
                "{test}: the server's statements against the report's"
            );
            assert!(writes <= w && others >= o, "{test}: {:?}", (r, w, o));
        }
        assert!(text.contains("scram-sha-256"), "{test}: {text}");
    }

    // sysbench's pgsql driver runs the same mix per transaction on the same tables.
    db.sql("SELECT pg_stat_statements_reset()");
    let sb = db.sysbench(&[
        "oltp_read_write",
        "--tables=4",
        "--table-size=10000",
        "--threads=2",
        "--events=300",
        "run",
    ]);
    let per_trx = |text: &str, what: &str| -> f64 {
        let n = |key: &str| -> f64 {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(key))
                .unwrap_or_else(|| panic!("no {key} in {text}"));
            line.split_whitespace()
                .find_map(|w| w.parse::<f64>().ok())
                .unwrap()
        };
        n(what) / n("transactions:")
    };
    let (text, _) = run_json(
        &args(
            &[
                "oltp_read_write",
                "--agents",
                agents.as_str(),
                "--tables=4",
                "--table-size=10000",
                "--threads=2",
                "--events=300",
            ],
            &db,
        ),
        &scratch.path("rw-again.json"),
    );
    // Reads per transaction, and writes and others together (a DELETE of a missing row
    // is "other" in both tools, and how many there are depends on the draws).
    let dml = |t: &str| per_trx(t, "write:") + per_trx(t, "other:");
    for (what, ours, theirs) in [
        ("reads", per_trx(&text, "read:"), per_trx(&sb, "read:")),
        ("writes and others", dml(&text), dml(&sb)),
    ] {
        assert!(
            (ours - theirs).abs() < 0.02 * theirs,
            "{what} per transaction: {ours} here, {theirs} from sysbench"
        );
    }
    ok(&run(&args(
        &[
            "oltp_read_write",
            "--agents",
            &agents,
            "--tables=4",
            "cleanup",
        ],
        &db,
    )));
    assert_eq!(
        db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sbtest%'"),
        "0"
    );
}

fn point_select(db: &Postgres, extra: &[&str]) -> Output {
    let mut a = args(
        &[
            "oltp_point_select",
            "--tables=1",
            "--table-size=100",
            "--events=50",
        ],
        db,
    );
    a.extend(extra.iter().map(|s| s.to_string()));
    a.push("run".into());
    run(&a)
}

#[test]
fn scram_md5_and_tls_logins_work_and_a_wrong_password_is_one_line() {
    let scram = Postgres::start();
    ok(&run(&args(
        &[
            "oltp_point_select",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
        &scram,
    )));
    let text = ok(&point_select(&scram, &[]));
    assert!(text.contains("scram-sha-256, no TLS"), "{text}");

    let out = point_select(&scram, &["--pgsql-password=wrong"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("password")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("password authentication failed for user \"sbtest\""),
        "{err}"
    );

    let md5 = Postgres::start_with(PgOpts {
        auth: "md5",
        ..PgOpts::default()
    });
    ok(&run(&args(
        &[
            "oltp_point_select",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
        &md5,
    )));
    let text = ok(&point_select(&md5, &[]));
    assert!(text.contains("md5, no TLS"), "{text}");

    let tls = Postgres::start_with(PgOpts {
        tls: true,
        ..PgOpts::default()
    });
    let ca = tls.ca_path().expect("a CA for the TLS server");
    let ca_opt = format!("--pgsql-sslrootcert={}", ca.display());
    ok(&run(&args(
        &[
            "oltp_point_select",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
        &tls,
    )));
    let text = ok(&point_select(
        &tls,
        &["--pgsql-sslmode=verify-full", ca_opt.as_str()],
    ));
    assert!(text.contains("scram-sha-256, TLSv1"), "{text}");
    // Another CA than the one that signed the server's certificate: refused.
    let out = point_select(
        &tls,
        &[
            "--pgsql-sslmode=verify-full",
            "--pgsql-sslrootcert=/etc/ssl/certs/ca-certificates.crt",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TLS"), "{err}");
    // sslmode=require on a server without TLS: refused, not silently in the clear.
    let out = point_select(&scram, &["--pgsql-sslmode=require"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not offer TLS"), "{err}");
}

#[test]
fn a_serialization_failure_is_retried_unless_its_sqlstate_is_not_ignored() {
    let db = Postgres::start_with(
        PgOpts::default().setting("default_transaction_isolation", "serializable"),
    );
    ok(&run(&args(
        &[
            "oltp_update_index",
            "--tables=1",
            "--table-size=100",
            "prepare",
        ],
        &db,
    )));
    let scratch = Scratch::new("pg-serial");
    let (text, j) = run_json(
        &args(
            &[
                "oltp_read_write",
                "--tables=1",
                "--table-size=100",
                "--threads=4",
                "--events=400",
            ],
            &db,
        ),
        &scratch.path("r.json"),
    );
    let sql = &j["totals"]["sql"];
    let by_code = sql["errors_by_code"].as_object().unwrap();
    assert!(
        by_code.contains_key("SQLSTATE 40001") || by_code.contains_key("SQLSTATE 40P01"),
        "{text}\n{sql}"
    );
    assert!(sql["ignored_errors"].as_u64().unwrap() > 0, "{sql}");
    // Every event still finished.
    assert_eq!(j["totals"]["events"].as_u64(), Some(400), "{text}");

    let out = run(&args(
        &[
            "oltp_read_write",
            "--tables=1",
            "--table-size=100",
            "--threads=4",
            "--events=400",
            "--pgsql-ignore-errors=none",
            "run",
        ],
        &db,
    ));
    assert!(!out.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains("SQLSTATE 40001") || all.contains("SQLSTATE 40P01"),
        "{all}"
    );
}

#[test]
fn a_restarted_server_costs_reconnects_and_a_dead_one_fails_the_run() {
    let mut db = Postgres::start_with(PgOpts::default().setting("synchronous_commit", "on"));
    ok(&run(&args(
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "prepare",
        ],
        &db,
    )));
    let scratch = Scratch::new("pg-restart");
    let out = scratch.path("r.json");
    let out_opt = format!("--json={}", out.display());
    let load = args(
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--threads=2",
            "--time=10",
            "--report-interval=1",
            out_opt.as_str(),
            "run",
        ],
        &db,
    );
    let running = Running::until_first_interval(&load);
    db.kill();
    db.restart();
    let (code, text) = running.finish();
    assert_eq!(code, Some(0), "{text}");
    let j = json(&out);
    let sql = &j["totals"]["sql"];
    // Both workers lost their connection; a restart under load may take seconds, which
    // the run waits out.
    assert!(sql["reconnects"].as_u64().unwrap() >= 2, "{sql}");
    let iv = j["intervals"].as_array().unwrap();
    assert!(iv.last().unwrap()["events"].as_u64().unwrap() > 0, "{iv:?}");

    // Killed and not back: the run says the target was down and exits with 4.
    let running = Running::until_first_interval(&load);
    db.kill();
    let (code, text) = running.finish();
    assert_eq!(code, Some(4), "{text}");
}

#[test]
fn lua_scripts_run_on_postgresql_over_two_agents() {
    let db = Postgres::start();
    let a = AgentProc::start_with(&["--allow-scripts"], &[]);
    let b = AgentProc::start_with(&["--allow-scripts"], &[]);
    let agents = format!("{},{}", a.addr, b.addr);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/lua/pgsql/pg_binds.lua"
    );
    let with = |words: &[&str]| {
        let mut v = vec![script, "--agents", agents.as_str(), "--threads=4"];
        v.extend_from_slice(words);
        args(&v, &db)
    };
    ok(&run(&with(&["prepare"])));
    assert_eq!(
        db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgb%'"),
        "4",
        "one table per thread over both agents"
    );
    let scratch = Scratch::new("pg-lua");
    let (text, j) = run_json(
        &with(&["--events=200", "--rows=3"]),
        &scratch.path("r.json"),
    );
    let rows: u64 = (0..4)
        .map(|t| {
            db.sql(&format!("SELECT count(*) FROM pgb{t}"))
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(rows, 600, "{text}");
    assert_eq!(j["totals"]["sql"]["writes"].as_u64(), Some(600), "{text}");
    ok(&run(&with(&["cleanup"])));
    assert_eq!(
        db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgb%'"),
        "0"
    );

    // sysbench's own script, as a file, through Lua: the server's counts match.
    let file = "/usr/share/sysbench/oltp_point_select.lua";
    let on = |words: &[&str]| {
        let mut v = vec![
            file,
            "--agents",
            agents.as_str(),
            "--tables=2",
            "--table-size=1000",
        ];
        v.extend_from_slice(words);
        args(&v, &db)
    };
    ok(&run(&on(&["prepare"])));
    db.sql("SELECT pg_stat_statements_reset()");
    let (text, j) = run_json(
        &on(&["--threads=2", "--events=500"]),
        &scratch.path("ps.json"),
    );
    let (reads, writes, others, _) = report_mix(&j);
    assert_eq!((reads, writes, others), (500, 0, 0), "{text}");
    assert_eq!(server_mix(&db), (500, 0, 0));
    ok(&run(&on(&["cleanup"])));
}

#[test]
fn one_scenario_file_compares_a_mariadb_and_a_postgresql_target() {
    let my = fleetbench_tests::mariadb::MariaDb::start();
    let pg = Postgres::start();
    let dir = Scratch::new("pg-scenario");
    let toml = format!(
        r#"
test = "oltp_point_select"
threads = [2]
time = 2

[options]
tables = 1
table-size = 500

[targets]
maria = "{}"
pg = "{}"

[[scenario]]
name = "on-mariadb"
targets = ["maria"]

[[scenario]]
name = "on-postgresql"
targets = ["pg"]
"#,
        my.url(),
        pg.url()
    );
    pg.sql("SELECT pg_stat_statements_reset()");
    let (stdout, doc) = dir.run_scenarios("mixed", &toml, &[]);
    let sc = doc["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 2, "{stdout}");
    let reads = |i: usize| -> u64 {
        sc[i]["steps"][0]["result"]["totals"]["sql"]["reads"]
            .as_u64()
            .unwrap()
    };
    assert!(reads(0) > 0 && reads(1) > 0, "{stdout}");
    // Each server saw its own scenario's statements only.
    assert_eq!(pg.statement_calls("SELECT c FROM sbtest1%"), reads(1));
    assert!(
        stdout.contains("on-mariadb") && stdout.contains("on-postgresql"),
        "{stdout}"
    );
    // Both prepared their tables and dropped them again.
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'sbtest1'"),
        "0"
    );
}

#[test]
fn a_socket_directory_as_the_host_in_options_and_target_urls() {
    let db = Postgres::start();
    let a = AgentProc::start();
    let dir = db.socket_dir().to_string_lossy().into_owned();
    let port = db.port().to_string();
    // As libpq: the directory %-escaped as the URL's host, or as its `host` parameter; the
    // server's pg_hba trusts sbtest on its socket, so no password is given.
    let escaped = dir.replace('/', "%2F");
    let common = [
        "oltp_point_select",
        "--agents",
        a.addr.as_str(),
        "--tables=1",
        "--table-size=100",
    ];
    let with = |extra: &[String]| -> Vec<String> {
        common
            .iter()
            .map(|s| s.to_string())
            .chain(extra.iter().cloned())
            .collect()
    };
    ok(&run(&with(&[
        format!("--target=pg=postgres://sbtest@{escaped}:{port}/sbtest"),
        "prepare".into(),
    ])));
    assert_eq!(db.sql("SELECT count(*) FROM sbtest1"), "100");

    db.sql("SELECT pg_stat_statements_reset()");
    let scratch = Scratch::new("pg-socket");
    let run_args = with(&[
        "--db-driver=pgsql".into(),
        format!("--pgsql-host={dir}"),
        format!("--pgsql-port={port}"),
        "--pgsql-user=sbtest".into(),
        "--pgsql-db=sbtest".into(),
        "--threads=2".into(),
        "--events=60".into(),
    ]);
    let refs: Vec<&str> = run_args.iter().map(String::as_str).collect();
    let (text, j) = run_json(&refs, &scratch.path("r.json"));
    let (reads, _, _, _) = report_mix(&j);
    assert_eq!(reads, 60, "{text}");
    assert_eq!(server_mix(&db).0, 60);

    ok(&run(&with(&[
        format!("--target=pg=postgres://sbtest@/sbtest?host={dir}&port={port}"),
        "cleanup".into(),
    ])));
    assert_eq!(
        db.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'sbtest1'"),
        "0"
    );
}
