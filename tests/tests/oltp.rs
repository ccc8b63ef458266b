//! OLTP end to end: real agent processes, real private MariaDB instances, checked against
//! the server's own view (SHOW CREATE TABLE, global status counters, the general log).

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use fleetbench_tests::mariadb::{MariaDb, STATEMENT_COUNTERS};
use fleetbench_tests::{
    AgentProc, Scratch, bin, fleetbench_ok, json, run_json, sum_over, wait_until,
};

/// Options pointing fleetbench at `db` as the default target.
fn db_opts(db: &MariaDb) -> Vec<String> {
    db.fleetbench_args()
}

fn args(parts: &[&str], extra: &[String]) -> Vec<String> {
    parts
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .collect()
}

/// SHOW CREATE TABLE without the AUTO_INCREMENT counter and with the table name neutral.
fn create_table(db: &MariaDb, schema: &str, table: &str) -> String {
    let out = db.sql(&format!("SHOW CREATE TABLE {schema}.{table}"));
    let ddl = out
        .split_once('\t')
        .map(|x| x.1)
        .unwrap_or(&out)
        .replace("\\n", "\n");
    ddl.split_whitespace()
        .filter(|w| !w.starts_with("AUTO_INCREMENT="))
        .collect::<Vec<_>>()
        .join(" ")
        .replace(&format!("`{table}`"), "`T`")
}

fn count_rows(db: &MariaDb, tables: u32) -> u64 {
    (1..=tables)
        .map(|n| {
            db.sql(&format!("SELECT COUNT(*) FROM sbtest.sbtest{n}"))
                .trim()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

#[test]
fn schema_and_query_mix_equal_sysbench_side_by_side() {
    let db = MariaDb::start();
    let o = db_opts(&db);
    db.sql("CREATE DATABASE sbref");
    for flags in [
        &[][..],
        &["--secondary=on"],
        &["--auto-inc=off"],
        &["--mysql-storage-engine=myisam"],
    ] {
        let mut a = args(
            &[
                "oltp_read_write",
                "--tables=2",
                "--table-size=50",
                "--range-size=10",
                "prepare",
            ],
            &o,
        );
        a.extend(flags.iter().map(|s| s.to_string()));
        fleetbench_ok(&a);
        let sb: Vec<&str> = [
            "oltp_read_write",
            "--tables=2",
            "--table-size=50",
            "prepare",
        ]
        .into_iter()
        .chain(flags.iter().copied())
        .collect();
        db.sysbench("sbref", &sb);
        for t in ["sbtest1", "sbtest2"] {
            assert_eq!(
                create_table(&db, "sbtest", t),
                create_table(&db, "sbref", t),
                "{flags:?} {t}"
            );
        }
        assert_eq!(count_rows(&db, 2), 100);
        let mut c = args(&["oltp_read_write", "--tables=2", "cleanup"], &o);
        c.extend(flags.iter().map(|s| s.to_string()));
        fleetbench_ok(&c);
        db.sysbench("sbref", &["oltp_read_write", "--tables=2", "cleanup"]);
    }
    // The same transactions reach the server: per-command counters of 200 events of each
    // script agree (one thread, so no conflicts and no retries).
    fleetbench_ok(&args(
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "prepare",
        ],
        &o,
    ));
    for script in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "select_random_points",
        "select_random_ranges",
    ] {
        let common = [
            "--tables=2",
            "--table-size=1000",
            "--events=200",
            "--time=0",
            "--threads=1",
        ];
        let before = db.statement_counters();
        let sb: Vec<&str> = [script].into_iter().chain(common).chain(["run"]).collect();
        db.sysbench("sbtest", &sb);
        let mid = db.statement_counters();
        let fb: Vec<&str> = [script].into_iter().chain(common).chain(["run"]).collect();
        fleetbench_ok(&args(&fb, &o));
        let after = db.statement_counters();
        for k in STATEMENT_COUNTERS
            .into_iter()
            .filter(|k| *k != "Com_stmt_prepare")
        {
            assert_eq!(
                delta(&before, &mid, k),
                delta(&mid, &after, k),
                "{script}: {k} sysbench vs fleetbench"
            );
        }
    }
}

fn delta(
    before: &BTreeMap<&'static str, u64>,
    after: &BTreeMap<&'static str, u64>,
    k: &str,
) -> u64 {
    after[k] - before[k]
}

#[test]
fn query_counts_agree_with_the_server() {
    let tables = ["--tables=2", "--table-size=1000"];
    let db = MariaDb::prepared(&[&["oltp_read_write"], &tables[..], &["--threads=2"]].concat());
    let scratch = Scratch::new("oltp-counts");
    assert_eq!(
        count_rows(&db, 2),
        2000,
        "tables x table-size rows after prepare"
    );
    // Runs `test` on both tables with `extra`: the server's counters before and after, and
    // the run's stdout.
    let counted = |test: &str, extra: &[&str]| {
        let before = db.statement_counters();
        let text = db.fleetbench_ok(&[&[test], &tables, extra, &["run"]]);
        (before, db.statement_counters(), text)
    };

    // Defaults: 14 reads, 4 writes, 2 other per transaction; one thread so nothing conflicts.
    let (_a, _b, agents) = AgentProc::pair();
    let out_json = scratch.path("rw.json");
    let json_opt = format!("--json={}", out_json.display());
    let (before, after, _) = counted(
        "oltp_read_write",
        &[
            "--threads=2",
            "--events=300",
            "--time=0",
            "--agents",
            &agents,
            &json_opt,
        ],
    );
    let j = json(&out_json);
    let sql = &j["totals"]["sql"];
    let tx = sql["transactions"].as_u64().unwrap();
    let ignored = sql["ignored_errors"].as_u64().unwrap();
    assert_eq!(tx, 300);
    if ignored == 0 {
        assert_eq!(sql["reads"].as_u64().unwrap(), 14 * tx);
        assert_eq!(sql["writes"].as_u64().unwrap(), 4 * tx);
        assert_eq!(sql["others"].as_u64().unwrap(), 2 * tx);
    }
    // The server saw what the report says.
    assert_eq!(
        delta(&before, &after, "Com_select"),
        sql["reads"].as_u64().unwrap(),
        "{before:?} {after:?}"
    );
    assert_eq!(delta(&before, &after, "Com_commit"), tx);
    assert_eq!(delta(&before, &after, "Com_begin"), tx + ignored);
    let dml = delta(&before, &after, "Com_update")
        + delta(&before, &after, "Com_delete")
        + delta(&before, &after, "Com_insert");
    assert!(dml >= sql["writes"].as_u64().unwrap());
    // Both agents ran their share; rows are unchanged by read_write.
    assert_eq!(j["agents"].as_array().unwrap().len(), 2);
    assert_eq!(count_rows(&db, 2), 2000, "read_write keeps the row count");
    // Statement-kind latencies are there.
    let kinds = "point_select simple_range sum_range order_range distinct_range index_update \
                 non_index_update delete insert begin commit";
    for k in kinds.split_whitespace() {
        assert!(
            j["totals"]["statements_latency_ms"][k]["count"]
                .as_u64()
                .unwrap()
                > 0,
            "no {k} latency"
        );
    }

    // The counts follow the options.
    let (before, after, text) = counted(
        "oltp_read_write",
        &[
            "--threads=1",
            "--events=100",
            "--time=0",
            "--point-selects=3",
            "--range-selects=off",
            &json_opt,
        ],
    );
    let sql = &json(&out_json)["totals"]["sql"];
    assert_eq!(sql["reads"].as_u64().unwrap(), 300);
    assert_eq!(delta(&before, &after, "Com_select"), 300);
    assert_eq!(
        sql["writes"].as_u64().unwrap() + sql["others"].as_u64().unwrap(),
        600
    );
    assert!(
        text.contains("        read:                            300\n"),
        "{text}"
    );
    assert!(
        text.contains("    transactions:                        100    ("),
        "{text}"
    );

    // Prepared statements by default; --db-ps-mode=disable prepares nothing.
    let point_selects = ["--threads=2", "--events=200", "--time=0"];
    let (before, after, _) = counted("oltp_point_select", &point_selects);
    assert!(
        delta(&before, &after, "Com_stmt_prepare") >= 4,
        "2 threads x 2 tables prepared"
    );
    assert_eq!(delta(&before, &after, "Com_stmt_execute"), 200);
    let (before, after, _) = counted(
        "oltp_point_select",
        &[&point_selects[..], &["--db-ps-mode=disable"]].concat(),
    );
    assert_eq!(delta(&before, &after, "Com_stmt_prepare"), 0);
    assert_eq!(delta(&before, &after, "Com_stmt_execute"), 0);
    assert_eq!(delta(&before, &after, "Com_select"), 200);

    db.fleetbench_ok(&[&["oltp_read_write", "--tables=2", "cleanup"]]);
    assert_eq!(db.sql("SHOW TABLES FROM sbtest LIKE 'sbtest%'").trim(), "");
}

/// Starts `fleetbench oltp_read_write --table-size=1000 EXTRA run` against `db` in the
/// background, its stdout discarded and its stderr going to `stderr`.
fn start_read_write(db: &MariaDb, extra: &[&str], stderr: Stdio) -> std::process::Child {
    let parts = [
        &["oltp_read_write", "--table-size=1000"][..],
        extra,
        &["run"],
    ]
    .concat();
    Command::new(bin("fleetbench"))
        .args(db.args(&parts))
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Tables each server connection touched, from the general log.
fn tables_by_connection(db: &MariaDb) -> BTreeMap<u64, BTreeSet<u32>> {
    let rows = db.sql(
        "SELECT thread_id, argument FROM mysql.general_log WHERE command_type IN ('Execute','Query') AND argument LIKE '%FROM sbtest%' OR argument LIKE 'UPDATE sbtest%'",
    );
    let mut out: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
    for line in rows.lines() {
        let Some((id, q)) = line.split_once('\t') else {
            continue;
        };
        let Ok(id) = id.trim().parse() else { continue };
        for part in q.split("sbtest").skip(1) {
            let n: String = part.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = n.parse() {
                out.entry(id).or_default().insert(n);
            }
        }
    }
    out
}

#[test]
fn partition_split_keeps_each_agent_on_its_own_tables() {
    let tables = ["--tables=4", "--table-size=200"];
    let db = MariaDb::prepared(&[&["oltp_read_write"], &tables[..], &["--threads=2"]].concat());
    db.sql("SET GLOBAL log_output='TABLE'");
    let (_a, _b, agents) = AgentProc::pair();
    // Runs oltp_read_only over both agents with `extra`, the server's general log on; the
    // tables each connection touched.
    let logged = |extra: &[&str]| {
        db.sql("TRUNCATE mysql.general_log; SET GLOBAL general_log=1");
        let run = ["--events=200", "--time=0", "--agents", &agents, "run"];
        db.fleetbench_ok(&[&["oltp_read_only"], &tables, extra, &run]);
        db.sql("SET GLOBAL general_log=0");
        tables_by_connection(&db)
    };
    let by_conn = logged(&["--threads=4", "--table-split=partition"]);
    let first: BTreeSet<u32> = [1, 2].into();
    let second: BTreeSet<u32> = [3, 4].into();
    assert!(
        by_conn.len() >= 4,
        "4 worker connections expected: {by_conn:?}"
    );
    let mut seen = [0, 0];
    for (conn, tables) in &by_conn {
        if tables.is_subset(&first) {
            seen[0] += 1;
        } else if tables.is_subset(&second) {
            seen[1] += 1;
        } else {
            panic!("connection {conn} touched tables of both agents: {tables:?}");
        }
    }
    assert_eq!(seen, [2, 2], "two connections per agent: {by_conn:?}");

    // Shared (sysbench's semantics): connections pick among all tables.
    let by_conn = logged(&["--threads=2"]);
    assert!(
        by_conn.values().any(|t| t.len() == 4),
        "shared: some connection uses all tables: {by_conn:?}"
    );
}

#[test]
fn contention_errors_are_counted_and_retried() {
    let db = MariaDb::start();
    let o = db_opts(&db);
    db.sql("SET GLOBAL innodb_lock_wait_timeout=1");
    let scratch = Scratch::new("oltp-contention");
    let out_json = scratch.path("r.json");
    fleetbench_ok(&args(
        &[
            "oltp_read_write",
            "--table-size=10",
            "--range-size=5",
            "prepare",
        ],
        &o,
    ));
    fleetbench_ok(&args(
        &[
            "oltp_read_write",
            "--table-size=10",
            "--range-size=5",
            "--threads=32",
            "--time=4",
            "--json",
            out_json.to_str().unwrap(),
            "run",
        ],
        &o,
    ));
    let j = json(&out_json);
    let sql = &j["totals"]["sql"];
    assert!(sql["transactions"].as_u64().unwrap() > 0);
    let ignored = sql["ignored_errors"].as_u64().unwrap();
    assert!(ignored > 0, "32 threads on 10 rows must collide: {sql}");
    let by_code = sum_over(&sql["errors_by_code"], |v| v.as_u64().unwrap());
    assert_eq!(by_code, ignored);
    assert!(
        sql["errors_by_code"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| ["1213", "1205", "1020"].contains(&k.as_str())),
        "{sql}"
    );
    assert_eq!(count_rows(&db, 1), 10, "delete/insert pairs keep the rows");
}

#[test]
fn a_killed_connection_is_reconnected_and_counted() {
    let db = MariaDb::prepared(&["oltp_read_write", "--table-size=1000"]);
    let scratch = Scratch::new("oltp-kill");
    let out_json = scratch.path("r.json");
    let json_opt = format!("--json={}", out_json.display());
    // The server's status is not read: every sbtest connection is then a worker's.
    let mut child = start_read_write(
        &db,
        &["--threads=2", "--time=5", "--server-status=off", &json_opt],
        Stdio::piped(),
    );
    let ids = || -> Vec<String> {
        db.sql("SELECT id FROM information_schema.processlist WHERE user='sbtest' AND command <> 'Daemon'")
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(10), || ids().len() >= 2),
        "workers connected"
    );
    std::thread::sleep(Duration::from_millis(500));
    let victim = ids()[0].clone();
    db.sql(&format!("KILL CONNECTION {victim}"));
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "run continued after the kill: {err}");
    let j = json(&out_json);
    assert!(
        j["totals"]["sql"]["reconnects"].as_u64().unwrap() >= 1,
        "{}",
        j["totals"]["sql"]
    );
    assert!(j["totals"]["time_s"].as_f64().unwrap() >= 4.9);
    // --server-status=off: no figures of the server's own.
    let target = &j["totals"]["targets"][0];
    assert!(target.get("server").is_none(), "{target}");
}

#[test]
fn two_targets_hold_and_receive_only_their_tables() {
    let (m, s) = (MariaDb::start(), MariaDb::start());
    let t = m.master_slave_args(&s);
    fleetbench_ok(&args(&["oltp_read_write", "--threads=2", "prepare"], &t));
    let tables = |db: &MariaDb| {
        db.sql("SHOW TABLES FROM sbtest")
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(tables(&m), ["sbtest1", "sbtest2"]);
    assert_eq!(tables(&s), ["sbtest3", "sbtest4"]);
    for db in [&m, &s] {
        db.sql(
            "SET GLOBAL log_output='TABLE'; TRUNCATE mysql.general_log; SET GLOBAL general_log=1",
        );
    }
    let scratch = Scratch::new("oltp-targets");
    let (text, j) = run_json(
        &args(
            &["oltp_read_write", "--threads=2", "--events=100", "--time=0"],
            &t,
        ),
        &scratch.path("r.json"),
    );
    for db in [&m, &s] {
        db.sql("SET GLOBAL general_log=0");
    }
    let on_master: BTreeSet<u32> = tables_by_connection(&m).into_values().flatten().collect();
    let on_slave: BTreeSet<u32> = tables_by_connection(&s).into_values().flatten().collect();
    assert_eq!(on_master, [1, 2].into());
    assert_eq!(on_slave, [3, 4].into());
    let targets = j["totals"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    let q: u64 = targets.iter().map(|t| t["queries"].as_u64().unwrap()).sum();
    assert_eq!(
        q,
        j["totals"]["sql"]["queries"].as_u64().unwrap(),
        "per-target figures add up"
    );
    assert!(
        text.contains("Per target:")
            && text.contains("master (127.0.0.1:")
            && text.contains("slave (127.0.0.1:"),
        "{text}"
    );
    fleetbench_ok(&args(&["oltp_read_write", "cleanup"], &t));
    assert!(tables(&m).is_empty() && tables(&s).is_empty());
}

#[test]
fn killing_the_coordinator_closes_every_worker_connection() {
    let db = MariaDb::prepared(&["oltp_read_write", "--table-size=1000"]);
    let o = db_opts(&db);
    let agent = AgentProc::start();
    // The server's status is not read: the sbtest user's connections are the workers'.
    let mut child = start_read_write(
        &db,
        &[
            "--threads=4",
            "--time=60",
            "--server-status=off",
            "--agents",
            &agent.addr,
        ],
        Stdio::null(),
    );
    let workers = || {
        db.sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user='sbtest'")
            .trim()
            .parse::<u32>()
            .unwrap()
    };
    assert!(
        wait_until(Duration::from_secs(10), || workers() == 4),
        "4 worker connections"
    );
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(2), || workers() == 0),
        "{} worker connections still open 2s after the coordinator died",
        workers()
    );
    // The agent is free for the next run.
    fleetbench_ok(&args(
        &[
            "oltp_point_select",
            "--table-size=1000",
            "--events=10",
            "--time=0",
            "--agents",
            &agent.addr,
            "run",
        ],
        &o,
    ));
}

#[test]
fn bulk_insert_writes_one_row_per_event_into_each_threads_table() {
    let db = MariaDb::prepared(&["bulk_insert", "--threads=2"]);
    let o = db_opts(&db);
    assert_eq!(
        db.sql("SHOW TABLES FROM sbtest")
            .lines()
            .collect::<Vec<_>>(),
        ["sbtest1", "sbtest2"]
    );
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let agents = format!("{},{}", a.addr, b.addr);
    fleetbench_ok(&args(
        &[
            "bulk_insert",
            "--threads=2",
            "--events=50000",
            "--time=0",
            "--agents",
            &agents,
            "run",
        ],
        &o,
    ));
    let rows = |n: u32| {
        db.sql(&format!("SELECT COUNT(*) FROM sbtest.sbtest{n}"))
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(rows(1), 25_000);
    assert_eq!(rows(2), 25_000);
    fleetbench_ok(&args(&["bulk_insert", "--threads=2", "cleanup"], &o));
    assert_eq!(db.sql("SHOW TABLES FROM sbtest").trim(), "");
}

/// The lean protocol client (the default) and the mysql_async fallback send the server the
/// same statements; the fallback is what runs when FLEETBENCH_OLTP_CLIENT=mysql_async (or the
/// server wants an authentication plugin the lean client lacks). Which one ran is in the
/// agent's log.
#[test]
fn lean_client_and_mysql_async_fallback_send_the_same_statements() {
    let db = MariaDb::prepared(&["oltp_read_write", "--table-size=1000"]);
    let o = db_opts(&db);
    let run = |client: &str| {
        let before = db.statement_counters();
        let out = Command::new(bin("fleetbench"))
            .args(args(
                &[
                    "oltp_read_write",
                    "--table-size=1000",
                    "--threads=1",
                    "--events=200",
                    "--time=0",
                    "run",
                ],
                &o,
            ))
            .env("FLEETBENCH_OLTP_CLIENT", client)
            .env("FLEETBENCH_LOG", "info")
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{client}: {log}");
        let after = db.statement_counters();
        let deltas: BTreeMap<&str, u64> = after
            .keys()
            .map(|&k| (k, delta(&before, &after, k)))
            .collect();
        (deltas, log)
    };
    let (lean, lean_log) = run("lean");
    let (fallback, fallback_log) = run("mysql_async");
    assert!(
        lean_log.contains("OLTP workers use the lean protocol client"),
        "{lean_log}"
    );
    assert!(
        fallback_log.contains("OLTP workers use mysql_async"),
        "{fallback_log}"
    );
    assert_eq!(lean, fallback);
    assert_eq!(lean["Com_stmt_execute"], 200 * 20, "{lean:?}");
}

#[test]
fn reinserted_rows_draw_k_from_the_rand_type_as_sysbench_does() {
    let common = ["oltp_write_only", "--tables=1", "--table-size=10000"];
    let db = MariaDb::prepared(&common);
    let rows = |db: &MariaDb| -> BTreeMap<u64, (u64, String)> {
        db.sql("SELECT id, k, c FROM sbtest.sbtest1")
            .lines()
            .map(|l| {
                let mut f = l.split('\t');
                let id = f.next().unwrap().parse().unwrap();
                let k = f.next().unwrap().parse().unwrap();
                (id, (k, f.next().unwrap().to_string()))
            })
            .collect()
    };
    let before = rows(&db);
    // Only the delete-insert pair writes; Pareto with a small h picks ids (and, as in
    // sysbench 1.0's get_id(), the re-inserted rows' k) near 1.
    db.fleetbench_ok(&[
        &common,
        &[
            "--index-updates=0",
            "--non-index-updates=0",
            "--rand-type=pareto",
            "--rand-pareto-h=0.05",
            "--threads=2",
            "--time=2",
            "run",
        ],
    ]);
    let after = rows(&db);
    let mut ks: Vec<u64> = after
        .iter()
        .filter(|(id, (_, c))| before.get(id).is_some_and(|(_, old)| old != c))
        .map(|(_, (k, _))| *k)
        .collect();
    assert!(!ks.is_empty(), "no row was re-inserted");
    ks.sort_unstable();
    // Drawn uniformly, the median would be near 5,000.
    let median = ks[ks.len() / 2];
    assert!(
        median <= 100,
        "median k of {} re-inserted rows: {median}",
        ks.len()
    );
}

#[test]
fn prepare_says_each_table_as_it_goes_and_once() {
    use std::io::BufRead;
    let db = MariaDb::start();
    let mut child = Command::new(fleetbench_tests::bin("fleetbench"))
        .args(args(
            &[
                "oltp_read_write",
                "--tables=3",
                "--table-size=30000",
                "prepare",
            ],
            &db_opts(&db),
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        lines.push((started.elapsed(), line.unwrap()));
    }
    assert!(child.wait().unwrap().success(), "{lines:?}");
    let end = started.elapsed();
    for t in 1..=3 {
        let said: Vec<_> = lines
            .iter()
            .filter(|(_, l)| *l == format!("Creating table 'sbtest{t}'..."))
            .collect();
        assert_eq!(said.len(), 1, "sbtest{t} said once: {lines:?}");
    }
    // The first table is said while the job runs, not with the summary at its end.
    let first = lines
        .iter()
        .find(|(_, l)| l.starts_with("Creating table"))
        .unwrap()
        .0;
    assert!(
        end - first > Duration::from_millis(300),
        "said {first:?}, done {end:?}: {lines:?}"
    );
}
