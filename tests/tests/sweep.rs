//! Thread sweeps and --histogram end to end: a real private MariaDB, embedded agents, the
//! real `fleetbench` binary; every row of the sweep is checked against its own run.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, fleetbench_ok, run_json};

#[test]
fn a_sweep_over_three_thread_counts_gives_three_consistent_rows() {
    let common = ["oltp_read_only", "--tables=2", "--table-size=500"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("sweep");
    let csv = dir.path("sweep.csv");
    let before = db.status("Com_select");
    let (out, doc) = db.run_json(
        &[
            &common,
            &[
                "--threads=1,2,3",
                "--time=2",
                "--warmup-time=1",
                "--cooldown=1",
            ],
            &["--local-agents=2", "--percentile=95,99"],
            &[&format!("--csv={}", csv.display())],
        ],
        &dir.path("sweep.json"),
    );
    let after = db.status("Com_select");

    // The printed table: a header and one row per thread count, in order.
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "Thread sweep:")
        .skip(1)
        .collect();
    assert_eq!(table.len(), 4, "{out}");
    assert!(
        table[0].contains("tps") && table[0].contains("p95 ms"),
        "{out}"
    );
    let first_col: Vec<u32> = table[1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(first_col, [1, 2, 3]);

    assert_eq!(doc["kind"], "sweep");
    assert_eq!(doc["format_version"], 2);
    assert_eq!(doc["warmup_time_s"], 1);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let csv_head: Vec<&str> = csv_text.lines().next().unwrap().split(',').collect();
    let csv_rows: Vec<&str> = csv_text.lines().skip(1).collect();
    assert_eq!(csv_rows.len(), 3, "{csv_text}");
    let mut reads = 0;
    for (i, step) in steps.iter().enumerate() {
        let threads = i as u64 + 1;
        let s = &step["summary"];
        let r = &step["result"];
        let t = &r["totals"];
        assert_eq!(step["threads"], threads);
        assert_eq!(r["kind"], "run");
        assert_eq!(r["config"]["threads"], threads);
        assert_eq!(t["threads"], threads, "every thread ran");
        assert_eq!(s["events"], t["events"]);
        assert_eq!(s["tps"], t["sql"]["tps"]);
        assert_eq!(s["qps"], t["sql"]["qps"]);
        for k in ["p50", "p95", "p99", "avg", "max"] {
            assert_eq!(s["latency_ms"][k], t["latency_ms"][k], "step {threads} {k}");
        }
        // Measured time only: the warm-up is not in the figures.
        let time = t["time_s"].as_f64().unwrap();
        assert!((1.9..2.9).contains(&time), "step {threads}: {time}s");
        let events = t["events"].as_u64().unwrap();
        assert!(events > 0);
        let tps = t["sql"]["tps"].as_f64().unwrap();
        assert!((tps - events as f64 / time).abs() < 1e-6 * tps.max(1.0));
        // read_only: 16 queries per transaction (14 selects, BEGIN, COMMIT); a
        // transaction cut off by the end of the time may add a few.
        let queries = t["sql"]["queries"].as_u64().unwrap();
        assert!(
            (events * 16..(events + threads) * 16).contains(&queries),
            "step {threads}: {queries} queries, {events} transactions"
        );
        reads += t["sql"]["reads"].as_u64().unwrap();
        // The CSV row carries the same figures (the scenario empty: not a scenario file;
        // the step is the thread count), rates to their two decimals.
        let f: Vec<&str> = csv_rows[i].split(',').collect();
        let col = |name: &str| f[csv_head.iter().position(|h| *h == name).expect(name)];
        assert_eq!(col("test"), "oltp_read_only");
        assert_eq!(col("run_id"), r["meta"]["run_id"].as_str().unwrap());
        assert_eq!(col("started_at"), r["meta"]["started_at"].as_str().unwrap());
        assert_eq!((col("scenario"), col("repeat")), ("", "1"));
        assert_eq!(col("step"), threads.to_string());
        assert_eq!(col("threads"), threads.to_string());
        assert_eq!(col("events"), events.to_string());
        assert_eq!(col("tps"), format!("{tps:.2}"));
        // The table row too, to its two decimals.
        assert!(
            table[i + 1].contains(&format!("{tps:.2}")),
            "{} lacks {tps:.2}",
            table[i + 1]
        );
    }
    // The server saw at least the measured selects, plus the warm-ups'.
    assert!(after - before > reads, "{} <= {reads}", after - before);
    fleetbench_ok(&db.args(&["oltp_read_only", "--tables=2", "cleanup"]));
}

#[test]
fn histogram_is_printed_before_the_statistics_and_counts_every_transaction() {
    let common = ["oltp_point_select", "--tables=1", "--table-size=200"];
    let db = MariaDb::prepared(&common);
    let out = db.fleetbench_ok(&[&common, &["--threads=2", "--time=1", "--histogram", "run"]]);
    let start = out
        .find("Latency histogram (values are in milliseconds)\n")
        .expect("histogram header");
    let sql = out.find("SQL statistics:").expect("SQL statistics");
    assert!(start < sql, "{out}");
    let block = &out[start..sql];
    let mut lines = block.lines().skip(1);
    assert_eq!(
        lines.next(),
        Some("       value  ------------- distribution ------------- count")
    );
    let mut total = 0u64;
    let mut widest = 0usize;
    let mut last = 0.0f64;
    for l in lines.take_while(|l| !l.is_empty()) {
        let (value, rest) = l.split_once(" |").expect(l);
        assert_eq!(value.len(), 12, "{l:?}");
        let v: f64 = value.trim().parse().unwrap();
        assert!(v > last, "increasing values: {l}");
        last = v;
        assert_eq!(value.trim().split('.').nth(1).unwrap().len(), 3);
        let bar = &rest[..40];
        assert!(bar.trim_end().chars().all(|c| c == '*'), "{l:?}");
        widest = widest.max(bar.trim_end().len());
        let count: u64 = rest[41..].parse().unwrap();
        assert!(count > 0);
        total += count;
    }
    assert_eq!(widest, 40, "the largest bucket fills the bar");
    let events: u64 = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(total, events);
    fleetbench_ok(&db.args(&["oltp_point_select", "--tables=1", "cleanup"]));
}

#[test]
fn repeated_sweeps_alternate_and_keep_every_measurement() {
    let dir = Scratch::new("sweep-repeat");
    let json = dir.path("sweep.json");
    let csv = dir.path("sweep.csv");
    let csv_opt = format!("--csv={}", csv.display());
    let (out, doc) = run_json(
        &[
            "cpu",
            "--threads=1,2",
            "--repeat=2",
            "--time=1",
            "--cpu-max-prime=2000",
            &csv_opt,
        ],
        &json,
    );
    assert!(out.contains("2 measurements each"), "{out}");
    assert!(out.contains("step 4/4: 1 thread, measurement 2/2"), "{out}");
    assert_eq!(doc["repeat"], 2);
    let order: Vec<(u64, u64)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["threads"].as_u64().unwrap(),
                s["repeat"].as_u64().unwrap(),
            )
        })
        .collect();
    // The passes go back and forth, so drift spreads evenly over both counts.
    assert_eq!(order, [(1, 1), (2, 1), (2, 2), (1, 2)]);
    // The table and the CSV carry the measurement's number.
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "Thread sweep:")
        .skip(1)
        .collect();
    assert!(
        table[0].trim_start().starts_with("repeat  threads"),
        "{out}"
    );
    assert_eq!(table.len(), 5, "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    // cpu's figures: events per second, no queries.
    assert!(
        text.starts_with("test,run_id,started_at,scenario,step,repeat,tags,threads,rate,rate_reached,time_s,events,events_per_sec,lat_min_ms,"),
        "{text}"
    );
    assert!(!text.contains("qps"), "{text}");
    assert_eq!(text.lines().count(), 5, "{text}");
    // (step, repeat) of the rows: measured 1, 2, 2, 1 threads.
    let steps: Vec<(&str, &str)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[4], f[5])
        })
        .collect();
    assert_eq!(steps.len(), 4, "{text}");
    assert!(
        steps.contains(&("2", "2")) && steps.contains(&("1", "1")),
        "{text}"
    );

    // The same command again appends its rows under the one header.
    run_json(
        &[
            "cpu",
            "--threads=1,2",
            "--time=1",
            "--cpu-max-prime=2000",
            &csv_opt,
        ],
        &dir.path("again.json"),
    );
    let again = std::fs::read_to_string(&csv).unwrap();
    assert!(again.starts_with(&text), "{again}");
    assert_eq!(again.lines().count(), 7, "{again}");
    assert_eq!(again.matches("test,run_id").count(), 1, "{again}");

    // `report FILE` prints the table again; compare finds two repeats per thread count.
    let path = json.display().to_string();
    let report = fleetbench_ok(&["report", &path]);
    assert!(report.starts_with("Thread sweep of cpu:\n"), "{report}");
    assert_eq!(report.lines().count(), 6, "{report}");
    let cmp = fleetbench_ok(&["compare", &path, &path]);
    assert!(cmp.contains("1 thread, compared with"), "{cmp}");
    assert!(cmp.contains("sweep.json: 2 repeats"), "{cmp}");
}

/// A step measured again (`--repeat`) on a saturated client host is named once in the
/// warning (issue 60: "4 threads, 4 threads, 4 threads" before).
#[test]
fn a_repeated_saturated_step_is_named_once() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = format!("--threads={}", 2 * cores);
    let out = fleetbench_tests::fleetbench(&[
        "cpu",
        &threads,
        "--time=1",
        "--repeat=3",
        "--warn-client-saturation",
        "run",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let step = format!("{} threads", 2 * cores);
    if let Some(line) = err.lines().find(|l| l.contains("was saturated in")) {
        assert!(line.contains(&format!("in step: {step} (in ")), "{line}");
        assert!(line.contains(" of 3 repeats):"), "{line}");
        assert!(!line.contains(&format!("{step}, {step}")), "{line}");
    }
    // (A host that never saturated, on an idle many-core box, has no line to check.)
    assert!(
        err.matches("was saturated in").count() <= 1,
        "one line per host: {err}"
    );
}
