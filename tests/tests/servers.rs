//! The servers' own figures, read over SQL each interval by the agents (issue: the servers
//! observed): the same data on a MariaDB with a 6 MB buffer pool (its least) and one with 256 MB, read
//! over two real agents; the small pool's server reads more from storage per transaction,
//! the report's Servers block says so, `report FILE` reprints it digit for digit, and
//! `compare` weighs it; the agents' CPU per transaction beside it. And PostgreSQL's
//! figures from its statistics views.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::postgres::Postgres;
use fleetbench_tests::{AgentProc, Scratch, fleetbench_ok, run_json};
use serde_json::Value;

/// The lines of the Servers block in `text`: its title to the blank line after it.
fn servers_block(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Servers ("))
        .take_while(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn per_tx(v: &Value, figure: &str) -> f64 {
    v["totals"]["targets"][0]["server"]["per_tx"][figure]
        .as_f64()
        .unwrap_or_else(|| panic!("no per_tx.{figure} in {}", v["totals"]["targets"][0]))
}

/// Each interval names the server, with transactions and figures, or says why not.
fn assert_series(v: &Value, target: &str) {
    let intervals = v["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 3, "{}", v["intervals"]);
    let mut with_figures = 0;
    for iv in intervals {
        let s = &iv["servers"][0];
        assert_eq!(s["target"], target, "{iv}");
        if s.get("missing").is_none() {
            with_figures += 1;
            assert!(s["transactions"].as_u64().unwrap() > 0, "{iv}");
            assert!(s["per_tx"]["rows_read"].as_f64().unwrap() > 0.0, "{iv}");
        }
    }
    // A loaded machine may make a read late; most intervals have figures.
    assert!(with_figures * 2 > intervals.len(), "{}", v["intervals"]);
}

#[test]
fn a_small_buffer_pool_reads_more_per_transaction_and_every_report_says_so() {
    let small = MariaDb::start_with(&["--innodb-buffer-pool-size=6M"]);
    let big = MariaDb::start_with(&["--innodb-buffer-pool-size=256M"]);
    let (_a, _b, agents) = AgentProc::pair();
    let scratch = Scratch::new("servers");
    let data = ["oltp_read_only", "--tables=2", "--table-size=40000"];
    let mut results = Vec::new();
    for (name, db) in [("small", &small), ("big", &big)] {
        db.fleetbench_ok(&[&data, &["--threads=2", "prepare"]]);
        let path = scratch.path(&format!("{name}.json"));
        let (text, v) = db.run_json(
            &[
                &data,
                &[
                    "--threads=4",
                    "--time=4",
                    "--rand-type=uniform",
                    "--agents",
                    &agents,
                ],
            ],
            &path,
        );
        let server = &v["totals"]["targets"][0]["server"];
        assert_eq!(server["source"], "SHOW GLOBAL STATUS", "{server}");
        assert!(server["transactions"].as_u64().unwrap() > 0, "{server}");
        // 10 point selects and 4 ranges of 100 rows: well over 100 rows per transaction.
        assert!(per_tx(&v, "rows_read") > 100.0, "{server}");
        assert!(per_tx(&v, "statements") >= 14.0, "{server}");
        assert_series(&v, "default");
        // And the client's side of the ledger, per agent and over them.
        assert!(text.contains("Client CPU: "), "{text}");
        for a in v["agents"].as_array().unwrap() {
            let us = a["host_load"]["agent_cpu_us_per_event"].as_f64();
            assert!(us.is_some_and(|us| us > 0.0), "{a}");
        }
        let block = servers_block(&text);
        assert!(block.len() >= 3, "{text}");
        assert!(block[2].starts_with("    default "), "{text}");
        // `report FILE` prints the block from the JSON, digit for digit.
        let again = fleetbench_ok(&["report", path.to_str().unwrap()]);
        assert_eq!(servers_block(&again), block, "{again}");
        results.push((path, v));
    }
    let (small_reads, big_reads) = (
        per_tx(&results[0].1, "server_reads"),
        per_tx(&results[1].1, "server_reads"),
    );
    assert!(
        small_reads > 0.5 && small_reads > 10.0 * big_reads,
        "reads from storage per transaction: 6 MB pool {small_reads}, 256 MB pool {big_reads}"
    );
    let misses = |v: &Value| v["totals"]["targets"][0]["server"]["read_misses_per_1000"].as_f64();
    assert!(misses(&results[0].1) > misses(&results[1].1));
    // compare weighs it: the big pool's reads per transaction fell.
    let out = fleetbench_ok(&[
        "compare",
        results[0].0.to_str().unwrap(),
        results[1].0.to_str().unwrap(),
    ]);
    let row = out
        .lines()
        .find(|l| l.starts_with("server disk reads/tx"))
        .unwrap_or_else(|| panic!("no server disk reads/tx row in\n{out}"));
    assert!(row.contains("-9") || row.contains("-100"), "{row}");
    assert!(out.contains("server rows read/tx"), "{out}");
}

#[test]
fn postgresql_figures_come_from_its_statistics_views() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let scratch = Scratch::new("servers-pg");
    let data = ["oltp_write_only", "--tables=1", "--table-size=2000"];
    let args = |rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = data.iter().chain(rest).map(|s| s.to_string()).collect();
        v.extend(pg.pgsql_args());
        v
    };
    fleetbench_ok(&args(&["prepare"]));
    let path = scratch.path("pg.json");
    let (text, v) = run_json(
        &args(&["--threads=2", "--time=3", "--agents", &agents]),
        &path,
    );
    let server = &v["totals"]["targets"][0]["server"];
    assert_eq!(server["source"], "pg_stat_database", "{server}");
    // oltp_write_only: two updates, a delete and an insert per transaction.
    let written = per_tx(&v, "rows_written");
    assert!((3.5..=4.5).contains(&written), "{server}");
    assert!(per_tx(&v, "log_bytes") > 100.0, "{server}");
    assert!(server["per_tx"].get("statements").is_none(), "{server}");
    assert!(servers_block(&text).len() >= 3, "{text}");
    let again = fleetbench_ok(&["report", path.to_str().unwrap()]);
    assert_eq!(servers_block(&again), servers_block(&text), "{again}");
}

#[test]
fn a_postgresql_standby_shows_its_lag_while_its_replay_is_paused() {
    let primary = Postgres::start();
    let standby = Postgres::start_replica_of(&primary);
    let (_a, _b, agents) = AgentProc::pair();
    let scratch = Scratch::new("servers-pg-replica");
    let data = ["oltp_write_only", "--tables=1", "--table-size=2000"];
    let args = |pg: &Postgres, rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = data.iter().chain(rest).map(|s| s.to_string()).collect();
        v.extend(pg.pgsql_args());
        v
    };
    fleetbench_ok(&args(&primary, &["prepare"]));
    let replica_opt = format!("--replica=standby={}", standby.url());
    let path = scratch.path("pg-replica.json");
    // The standby stops replaying for 3 s in the middle of the run.
    let (text, v) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(2500));
            standby.sql("SELECT pg_wal_replay_pause()");
            std::thread::sleep(std::time::Duration::from_secs(3));
            standby.sql("SELECT pg_wal_replay_resume()");
        });
        let run = args(
            &primary,
            &[
                "--threads=2",
                "--time=8",
                "--report-interval=1",
                "--agents",
                &agents,
                &replica_opt,
            ],
        );
        let out = run_json(&run, &path);
        h.join().unwrap();
        out
    });
    let r = v["totals"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "standby")
        .cloned()
        .unwrap_or_else(|| panic!("no standby in {}", v["totals"]["targets"]));
    assert_eq!(r["replica_of"], "default", "{r}");
    let lag = &r["server"]["replica_lag_s"];
    assert!(lag["max"].as_f64().unwrap() >= 2.0, "{lag}\n{text}");
    assert!(lag["intervals"].as_u64().unwrap() >= 5, "{lag}");
    assert!(text.contains("replica lag: "), "{text}");
    // Read on the standby itself while the primary is idle: caught up, so no lag, however
    // long ago the last write was.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let (_, v) = run_json(
        &[
            &["oltp_point_select", "--tables=1", "--table-size=2000"][..],
            &["--threads=1", "--time=2", "--agents", &agents],
            &standby
                .pgsql_args()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()[..],
        ]
        .concat(),
        &scratch.path("on-standby.json"),
    );
    let lag = &v["totals"]["targets"][0]["server"]["replica_lag_s"];
    assert!(lag["intervals"].as_u64().unwrap() >= 1, "{lag}");
    assert!(lag["max"].as_f64().unwrap() < 1.0, "{lag}");
}

#[test]
fn an_observer_agent_says_what_a_transaction_cost_the_servers_host() {
    let db = MariaDb::start();
    let (_a, _b, agents) = AgentProc::pair();
    let observer = AgentProc::start();
    let scratch = Scratch::new("servers-observed");
    let data = ["oltp_read_write", "--tables=1", "--table-size=2000"];
    db.fleetbench_ok(&[&data, &["prepare"]]);
    let path = scratch.path("observed.json");
    let observe = format!("--observe=default={}", observer.addr);
    let (text, v) = db.run_json(
        &[
            &data,
            &[
                "--threads=2",
                "--time=3",
                "--agents",
                &agents,
                &observe,
                "--observe-process=mariadbd",
            ],
        ],
        &path,
    );
    let host = &v["totals"]["targets"][0]["server"]["hosts"][0];
    assert_eq!(host["addr"], observer.addr.as_str(), "{host}");
    assert!(host["intervals"].as_u64().unwrap() >= 2, "{host}");
    // The server's data directory, which the observer is told (its disk is watched).
    let datadir = &v["totals"]["targets"][0]["connections"][0]["server_vars"]["datadir"];
    assert!(
        datadir.as_str().is_some_and(|d| d.starts_with('/')),
        "{datadir}"
    );
    assert!(host["disk_write_kb_per_tx"].as_f64().is_some(), "{host}");
    let cpu = host["cpu_us_per_tx"].as_f64().unwrap();
    let process = host["process_cpu_us_per_tx"].as_f64().unwrap();
    // The server's processes did part of the host's work for each transaction.
    assert!(cpu > 0.0 && process > 0.0, "{host}");
    assert!(host["processes"].as_u64().unwrap() >= 1, "{host}");
    assert!(host.get("error").is_none(), "{host}");
    // And interval by interval.
    let per_interval: Vec<f64> = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|iv| iv["servers"][0]["hosts"][0]["cpu_us_per_tx"].as_f64())
        .collect();
    assert!(per_interval.len() >= 2, "{}", v["intervals"]);
    assert!(per_interval.iter().all(|&us| us > 0.0), "{per_interval:?}");
    let line = format!("host {}: CPU ", observer.addr);
    assert!(text.contains(&line), "{text}");
    let again = fleetbench_ok(&["report", path.to_str().unwrap()]);
    assert_eq!(servers_block(&again), servers_block(&text), "{again}");
    // An observer that cannot be reached is said, and the run goes on.
    let (text, v) = db.run_json(
        &[
            &data,
            &[
                "--threads=1",
                "--time=1",
                "--agents",
                &agents,
                "--observe=default=127.0.0.1:1",
            ],
        ],
        &scratch.path("unreached.json"),
    );
    assert!(text.contains("host 127.0.0.1:1: not observed ("), "{text}");
    let host = &v["totals"]["targets"][0]["server"]["hosts"][0];
    assert!(host["error"].as_str().is_some(), "{host}");
    assert!(v["totals"]["events"].as_u64().unwrap() > 0);
}

#[test]
fn a_replica_read_beside_the_run_shows_its_lag_while_its_sql_thread_stops() {
    let primary =
        MariaDb::start_with(&["--log-bin=binlog", "--server-id=1", "--binlog-format=ROW"]);
    let replica = MariaDb::start_with(&["--server-id=2"]);
    replica.replicate_from(&primary);
    let (_a, _b, agents) = AgentProc::pair();
    // One observer agent watches both servers' host (loopback: the same machine).
    let observer = AgentProc::start();
    let scratch = Scratch::new("servers-replica");
    let data = ["oltp_write_only", "--tables=1", "--table-size=2000"];
    primary.fleetbench_ok(&[&data, &["prepare"]]);
    let path = scratch.path("replica.json");
    let replica_opt = format!("--replica=replica={}", replica.url());
    let observe = [
        format!("--observe=default={}", observer.addr),
        format!("--observe=replica={}", observer.addr),
    ];
    // The replica's SQL thread stops for 3 s in the middle of the run.
    let stopper = {
        let sql = |q: &str| replica.sql(q);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(2500));
                sql("STOP SLAVE SQL_THREAD");
                std::thread::sleep(std::time::Duration::from_secs(3));
                sql("START SLAVE SQL_THREAD");
            });
            let out = primary.run_json(
                &[
                    &data,
                    &[
                        "--threads=2",
                        "--time=8",
                        "--report-interval=1",
                        "--agents",
                        &agents,
                        &replica_opt,
                        &observe[0],
                        &observe[1],
                    ],
                ],
                &path,
            );
            h.join().unwrap();
            out
        })
    };
    let (text, v) = stopper;
    let targets = v["totals"]["targets"].as_array().unwrap();
    let r = targets
        .iter()
        .find(|t| t["name"] == "replica")
        .unwrap_or_else(|| panic!("no replica in {}", v["totals"]["targets"]));
    assert_eq!(r["replica_of"], "default", "{r}");
    // It received nothing from the run, and applied the primary's writes.
    assert_eq!(r["queries"], 0, "{r}");
    let lag = &r["server"]["replica_lag_s"];
    assert!(lag["max"].as_f64().unwrap() >= 2.0, "{lag}");
    assert!(
        r["server"]["per_tx"]["rows_written"].as_f64().unwrap() > 1.0,
        "{r}"
    );
    let series: Vec<f64> = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|iv| {
            let s = iv["servers"].as_array()?;
            s.iter().find(|x| x["target"] == "replica")?["replica_lag_s"].as_f64()
        })
        .collect();
    assert!(series.len() >= 5, "{series:?}");
    assert!(series.iter().any(|&l| l >= 2.0), "{series:?}");
    // The observer's figures, per transaction of the primary, interval by interval: the
    // host's CPU and its disks (a write-only load writes), beside the rows.
    let primary_series: Vec<&Value> = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|iv| {
            let s = iv["servers"].as_array()?;
            s.iter().find(|x| x["target"] == "default")
        })
        .collect();
    // Every interval has the rows; the observer's figures are in each interval it sampled
    // whole (the last, cut by the run's end, is missing: absent, never zero).
    assert!(primary_series.len() >= 5, "{}", v["intervals"]);
    let observed: Vec<&&Value> = primary_series
        .iter()
        .filter(|s| s.get("hosts").is_some())
        .collect();
    assert!(
        observed.len() >= primary_series.len() - 1,
        "{}",
        v["intervals"]
    );
    for s in &primary_series {
        let p = &s["per_tx"];
        assert!(p["rows_written"].as_f64().is_some_and(|r| r > 1.0), "{s}");
        assert_eq!(p.get("cpu_us").is_some(), s.get("hosts").is_some(), "{s}");
    }
    for s in observed {
        let p = &s["per_tx"];
        assert!(p["cpu_us"].as_f64().is_some_and(|c| c > 0.0), "{s}");
        assert!(p["disk_write_kb"].as_f64().is_some(), "{s}");
    }
    let total = &targets[0]["server"]["per_tx"];
    assert!(total["disk_write_kb"].as_f64().unwrap() > 0.0, "{total}");
    // The replica's host, observed too: applying the primary's work cost it CPU.
    assert_eq!(
        r["server"]["hosts"][0]["addr"],
        observer.addr.as_str(),
        "{r}"
    );
    assert!(
        r["server"]["per_tx"]["cpu_us"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(text.contains("replica lag: "), "{text}");
    // A target that turns out to be a replica (reads against the replica itself) has the
    // lag it reports, and a plain target none.
    let (_, v) = replica.run_json(
        &[&[
            "oltp_point_select",
            "--tables=1",
            "--table-size=2000",
            "--threads=1",
            "--time=2",
            "--agents",
            &agents,
        ]],
        &scratch.path("on-replica.json"),
    );
    let lag = &v["totals"]["targets"][0]["server"]["replica_lag_s"];
    assert!(lag["intervals"].as_u64().unwrap() >= 1, "{lag}");
    let server = &results_of_primary(&scratch)["totals"]["targets"][0]["server"];
    assert!(server.get("replica_lag_s").is_none(), "{server}");
    // A user without the privilege replication status needs: the GRANT is named, once,
    // and the run goes on.
    replica.sql(
        "CREATE USER 'weak'@'%' IDENTIFIED BY 'weak-pw'; GRANT SELECT ON sbtest.* TO 'weak'@'%'",
    );
    let weak = format!(
        "--replica=weak=mysql://weak:weak-pw@127.0.0.1:{}/sbtest",
        replica.port()
    );
    let (text, v) = primary.run_json(
        &[
            &data,
            &["--threads=1", "--time=2", "--agents", &agents, &weak],
        ],
        &scratch.path("weak.json"),
    );
    let r = v["totals"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "weak")
        .cloned()
        .unwrap();
    let warnings = r["server"]["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}\n{text}"));
    assert_eq!(warnings.len(), 1, "{r}");
    assert!(warnings[0].as_str().unwrap().contains("GRANT"), "{r}");
    assert!(text.contains("no replication figures: "), "{text}");
}

/// The primary's result of the replica test.
fn results_of_primary(scratch: &Scratch) -> Value {
    fleetbench_tests::json(&scratch.path("replica.json"))
}
