//! `--warmup-time` in sysbench 1.0's meaning, end to end against a private MariaDB: the
//! run's first seconds on the same threads and connections, in none of the figures, with
//! the time and the event limit counted after it.

use fleetbench_tests::Scratch;
use fleetbench_tests::mariadb::MariaDb;

#[test]
fn warm_up_runs_on_the_measured_connections_and_is_in_no_figure() {
    let common = ["oltp_point_select", "--tables=2", "--table-size=500"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("warmup");

    // (connections opened, SELECTs the server ran, the run's JSON) for one run.
    let run = |extra: &[&str], name: &str| {
        let conns = db.status("Connections");
        let selects = db.status("Com_select");
        let (out, doc) = db.run_json(
            &[&common, &["--threads=2", "--report-interval=1"], extra],
            &dir.path(name),
        );
        (
            db.status("Connections") - conns,
            db.status("Com_select") - selects,
            doc,
            out,
        )
    };

    let (cold_conns, _, _, _) = run(&["--time=1"], "cold.json");
    let (conns, selects, doc, out) = run(&["--time=2", "--warmup-time=1"], "warm.json");
    // The warm-up opens no connection of its own: the measurement goes on with its.
    assert_eq!(conns, cold_conns, "{out}");
    assert!(out.contains("Warming up for 1s (not measured)..."), "{out}");

    let totals = &doc["totals"];
    let reads = totals["sql"]["reads"].as_u64().unwrap();
    // The server ran the warm-up's statements too (a second of two threads: tens of
    // thousands, though a busy machine's first second can run far fewer than the
    // measured ones); the figures hold none of them.
    assert!(
        selects >= reads + 1_000,
        "server SELECTs {selects}, reported reads {reads}\n{out}"
    );
    assert_eq!(doc["config"]["warmup_time_s"], 1.0);
    let time = totals["time_s"].as_f64().unwrap();
    assert!((1.9..2.6).contains(&time), "measured time {time}\n{out}");
    // Two interval lines from the end of the warm-up, adding up to the totals; so do the
    // per-target and per-statement figures.
    let intervals = doc["intervals"].as_array().unwrap();
    let labels: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(
        labels[0].starts_with("[ 1s ]") && labels.len() == 2,
        "{labels:?}"
    );
    let summed: u64 = intervals
        .iter()
        .map(|i| i["sql"]["queries"].as_u64().unwrap_or(0))
        .sum();
    let queries = totals["sql"]["queries"].as_u64().unwrap();
    assert_eq!(summed, queries, "{out}");
    let per_target: u64 = totals["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["queries"].as_u64().unwrap())
        .sum();
    assert_eq!(per_target, queries, "{out}");
    assert_eq!(
        totals["statements_latency_ms"]["point_select"]["count"].as_u64(),
        Some(reads),
        "{out}"
    );
    // Threads fairness: the measured events and busy time, not the warm-up's.
    let fairness = &totals["fairness"];
    assert_eq!(
        fairness["events_avg"].as_f64().unwrap() * 2.0,
        totals["events"].as_f64().unwrap(),
        "{doc}"
    );
    assert!(
        fairness["execution_time_avg_s"].as_f64().unwrap() <= time + 0.05,
        "{doc}"
    );

    // The event limit counts measured events only: exactly that many, whatever the
    // warm-up ran before them.
    let (_, selects, doc, out) = run(&["--time=0", "--events=300", "--warmup-time=1"], "ev.json");
    assert_eq!(doc["totals"]["events"], 300, "{out}");
    assert!(
        selects > 400,
        "the warm-up ran too: {selects} SELECTs\n{out}"
    );
    db.fleetbench_ok(&[&common, &["cleanup"]]);
}
