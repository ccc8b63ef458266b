//! Rate sweeps end to end: `--rate A,B,C` against a real private MariaDB with embedded
//! agents and the real `fleetbench` binary. Every row of the table, the CSV and the JSON is
//! checked against its own step's run, and every point of the HTML report's
//! throughput-latency charts against the JSON. A cpu rate sweep (no database) goes through
//! `report` and `compare`, and a scenario file sweeps rates per scenario.

use std::collections::BTreeMap;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, fleetbench, fleetbench_ok, run_json};
use serde_json::Value;

/// The table printed under `title`: its header's words and each row's words.
fn table(out: &str, title: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = out
        .lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    let head = words(
        lines
            .next()
            .unwrap_or_else(|| panic!("no {title} in {out}")),
    );
    (head, lines.map(words).collect())
}

/// One data point of an HTML chart.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    series: String,
    x: f64,
    y: f64,
    offered: f64,
}

/// Every point of chart `id` in the page: its series, x, y and offered rate.
fn points(page: &str, id: &str) -> Vec<Point> {
    let start = page
        .find(&format!("<svg class=\"chart\" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
    let attr = |c: &str, name: &str| -> String {
        let at = c
            .find(&format!(" {name}=\""))
            .unwrap_or_else(|| panic!("no {name} in {c}"))
            + name.len()
            + 3;
        c[at..at + c[at..].find('"').unwrap()].to_string()
    };
    let num = |c: &str, name: &str| attr(c, name).parse::<f64>().unwrap();
    svg.split("<circle")
        .skip(1)
        .map(|c| Point {
            series: attr(c, "data-series"),
            x: num(c, "data-x"),
            y: num(c, "data-y"),
            offered: num(c, "data-offered"),
        })
        .collect()
}

/// A figure as the chart writes it: at most 3 decimals.
fn three(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[test]
fn a_rate_sweep_over_three_rates_gives_three_rows_matching_their_runs() {
    let common = ["oltp_point_select", "--tables=2", "--table-size=500"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("rate-sweep");
    let (json_path, csv_path, html_path) = (
        dir.path("rates.json"),
        dir.path("rates.csv"),
        dir.path("rates.html"),
    );
    let rates = [100.0, 200.0, 400.0];
    let (out, doc) = db.run_json(
        &[
            &common,
            &["--rate=100,200,400", "--threads=4", "--time=3"],
            &["--local-agents=2", "--percentile=95,99"],
            // A fixed seed makes the arrival schedule (a Poisson process per agent) the
            // same every time: at 100/s for 3 s its count alone varies by ±6 %.
            &["--rand-seed=7"],
            &[
                &format!("--csv={}", csv_path.display()),
                &format!("--html={}", html_path.display()),
            ],
        ],
        &json_path,
    );
    assert!(
        out.contains("Rate sweep of oltp_point_select: 100, 200, 400 tx/s at 4 threads"),
        "{out}"
    );
    assert!(out.contains("step 2/3: 200 tx/s (4 threads)"), "{out}");

    // The printed table: rate, achieved, threads, qps, latency columns, err/s, reconn/s.
    let (head, rows) = table(&out, "Rate sweep:");
    assert_eq!(
        head,
        [
            "rate", "achieved", "threads", "qps", "avg", "ms", "p50", "ms", "p95", "ms", "p99",
            "ms", "max", "ms", "err/s", "reconn/s"
        ],
        "{out}"
    );
    assert_eq!(rows.len(), 3, "{out}");

    assert_eq!(doc["kind"], "sweep");
    assert_eq!(doc["rates"], serde_json::json!(rates));
    assert_eq!(doc["threads"], serde_json::json!([4]));
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);

    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut csv_lines = csv.lines();
    let csv_head: Vec<&str> = csv_lines.next().unwrap().split(',').collect();
    let csv_rows: Vec<Vec<&str>> = csv_lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(csv_rows.len(), 3, "{csv}");
    // Each row says what it is; the step is the offered rate, the achieved one is `tps`.
    assert_eq!(
        csv_head[..10],
        [
            "test",
            "run_id",
            "started_at",
            "scenario",
            "step",
            "repeat",
            "tags",
            "threads",
            "rate",
            "rate_reached"
        ]
    );
    let col = |name: &str| {
        csv_head
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} in {csv}"))
    };

    for (i, step) in steps.iter().enumerate() {
        let rate = rates[i];
        let (s, r) = (&step["summary"], &step["result"]);
        let t = &r["totals"];
        let open = &t["open_loop"];
        // The step, its summary and its run agree on where it ran.
        assert_eq!(step["rate"], rate);
        assert_eq!(step["threads"], 4);
        assert_eq!(s["rate"], rate);
        assert_eq!(r["config"]["rate"], rate);
        assert_eq!(r["config"]["threads"], 4);
        assert_eq!(open["target_rate"], rate);
        // The summary is the run's figures.
        let tps = t["sql"]["tps"].as_f64().unwrap();
        assert_eq!(s["tps"], t["sql"]["tps"]);
        assert_eq!(s["events"], t["events"]);
        assert_eq!(s["rate_reached"], open["rate_reached"]);
        assert_eq!(open["rate_reached"], true, "step {rate}: {open}");
        for k in ["avg", "p50", "p95", "p99", "max"] {
            assert_eq!(s["latency_ms"][k], t["latency_ms"][k], "step {rate} {k}");
        }
        // Far below what the box can do: the rate is reached, to within 10 %, and
        // hardly anything is left waiting.
        assert!(
            (tps - rate).abs() <= rate * 0.1,
            "step {rate}: {tps:.2} tx/s achieved"
        );
        assert!(open["queue_length_end"].as_u64().unwrap() <= 4, "{open}");
        let time = t["time_s"].as_f64().unwrap();
        assert!((2.9..3.9).contains(&time), "step {rate}: {time}s");

        // The table row, to its two decimals.
        let row = &rows[i];
        assert_eq!(row.len(), 11, "no 'rate not reached': {row:?}");
        assert_eq!(row[0], format!("{rate}"));
        assert_eq!(row[1], format!("{tps:.2}"));
        assert_eq!(row[2], "4");
        assert_eq!(row[3], format!("{:.2}", t["sql"]["qps"].as_f64().unwrap()));
        for (j, k) in ["avg", "p50", "p95", "p99", "max"].iter().enumerate() {
            let v = t["latency_ms"][*k].as_f64().unwrap();
            assert_eq!(row[4 + j], format!("{v:.2}"), "step {rate} {k}");
        }

        // The CSV row.
        let f = &csv_rows[i];
        assert_eq!(f[col("test")], "oltp_point_select");
        assert_eq!(f[col("run_id")], r["meta"]["run_id"].as_str().unwrap());
        assert_eq!(f[col("step")], format!("{rate}"));
        assert_eq!(f[col("rate")], format!("{rate}"));
        assert_eq!(f[col("tps")], format!("{tps:.2}"));
        assert_eq!(f[col("rate_reached")], "true");
        assert_eq!(f[col("threads")], "4");
        assert_eq!(f[col("events")], t["events"].to_string());
        for k in ["p50", "p95", "p99"] {
            let v = t["latency_ms"][k].as_f64().unwrap();
            assert_eq!(f[col(&format!("lat_{k}_ms"))], format!("{v:.3}"), "{k}");
        }
    }

    // The HTML report: the throughput-latency curve has one point per step and
    // percentile, at (achieved rate, latency), labelled with the offered rate; the
    // achieved-against-offered chart one point per step.
    let page = std::fs::read_to_string(&html_path).unwrap();
    assert!(page.contains("<h1>fleetbench rate sweep of oltp_point_select</h1>"));
    let by_offered: BTreeMap<u64, &Value> = steps
        .iter()
        .map(|s| (s["rate"].as_f64().unwrap() as u64, &s["summary"]))
        .collect();
    let curve = points(&page, "latency-rate");
    assert_eq!(curve.len(), 9, "{curve:?}");
    for p in &curve {
        let s = by_offered[&(p.offered as u64)];
        assert_eq!(p.x, three(s["tps"].as_f64().unwrap()), "{p:?}");
        assert_eq!(p.y, s["latency_ms"][&p.series].as_f64().unwrap(), "{p:?}");
    }
    let mut seen: Vec<(String, u64)> = curve
        .iter()
        .map(|p| (p.series.clone(), p.offered as u64))
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 9, "every (percentile, rate) once: {curve:?}");
    let achieved = points(&page, "achieved-rate");
    assert_eq!(achieved.len(), 3);
    for (p, rate) in achieved.iter().zip(rates) {
        assert_eq!((p.x, p.offered), (rate, rate));
        assert_eq!(
            p.y,
            three(by_offered[&(rate as u64)]["tps"].as_f64().unwrap())
        );
    }
    // Every step runs at 4 threads: no chart against thread count.
    assert!(!page.contains("id=\"tps-threads\""));

    // `report` prints the same table again.
    let report = fleetbench_ok(&["report", json_path.to_str().unwrap()]);
    let (_, again) = table(&report, "Rate sweep of oltp_point_select:");
    assert_eq!(again, rows);
    fleetbench_ok(&db.args(&["oltp_point_select", "--tables=2", "cleanup"]));
}

#[test]
fn cpu_rate_sweeps_compare_by_offered_rate() {
    let dir = Scratch::new("rate-compare");
    let run = |threads: &str, file: &str| {
        let path = dir.path(file);
        let threads = format!("--threads={threads}");
        let (out, doc) = run_json(
            &[
                "cpu",
                "--rate=300,150",
                &threads,
                "--time=2",
                "--report-interval=1",
                "--cpu-max-prime=2000",
            ],
            &path,
        );
        assert!(out.contains("step 1/2: 300 events/s"), "{out}");
        (path.display().to_string(), doc)
    };
    let (a, doc) = run("2", "two.json");
    let (b, _) = run("3", "three.json");
    assert_eq!(doc["rates"], serde_json::json!([300.0, 150.0]));
    let cmp = fleetbench_ok(&["compare", &a, &b]);
    // One block per offered rate, in the order they ran; the thread count is what differs.
    assert!(cmp.contains("    threads: 2 / 3\n"), "{cmp}");
    let titles: Vec<&str> = cmp
        .lines()
        .filter(|l| l.contains(", compared with "))
        .collect();
    assert_eq!(
        titles,
        [
            "offered rate 300/s, compared with two.json",
            "offered rate 150/s, compared with two.json"
        ],
        "{cmp}"
    );
    assert!(
        !cmp.contains("rate: "),
        "the rate is the axis, not a setting: {cmp}"
    );
    // A gate on the achieved rate names the rate it failed at, or passes.
    let gate = fleetbench(&["compare", &a, &b, "--fail-if", "tps<-50%"]);
    let text = String::from_utf8_lossy(&gate.stdout);
    assert_eq!(gate.status.code(), Some(0), "{text}");
    assert!(text.contains("fail-if tps<-50%: passed"), "{text}");
}

#[test]
fn a_thread_list_and_a_rate_list_are_refused_together() {
    let out = fleetbench(&["cpu", "--threads=1,2", "--rate=100,200", "--time=1", "run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--threads=1,2 and --rate=100,200: a sweep steps over thread counts or over rates, not both"),
        "{err}"
    );
    let out = fleetbench(&["cpu", "--rate=100,100", "--time=1", "run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a rate is listed twice"));
}

#[test]
fn a_scenario_file_sweeps_rates_per_scenario() {
    let dir = Scratch::new("rate-scenarios");
    let html_path = dir.path("rates.html");
    // cpu needs no database: the target is named because a scenario must name one.
    let (out, doc) = dir.run_scenarios(
        "rates",
        r#"
test = "cpu"
threads = [2]
rate = [100, 200]
time = 2
prepare = false
[options]
cpu-max-prime = 2000
[targets]
unused = "mysql://sbtest:pw@127.0.0.1:9/sbtest"
[[scenario]]
name = "small"
targets = ["unused"]
[[scenario]]
name = "large"
targets = ["unused"]
rate = "150,300"
options = { cpu-max-prime = 4000 }
"#,
        &[&format!("--html={}", html_path.display())],
    );
    assert!(
        out.contains("[large] step 2/2: 300 events/s (2 threads)"),
        "{out}"
    );
    let (head, rows) = table(&out, "Scenarios compared:");
    assert_eq!(
        head[..4],
        ["scenario", "rate", "achieved", "threads"],
        "{out}"
    );
    let offered: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        offered,
        [
            ("small", "100"),
            ("small", "200"),
            ("large", "150"),
            ("large", "300")
        ]
    );
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios[0]["rates"], serde_json::json!([100.0, 200.0]));
    assert_eq!(scenarios[1]["rates"], serde_json::json!([150.0, 300.0]));
    // The curve per percentile: a line per scenario, a point per step.
    let page = std::fs::read_to_string(&html_path).unwrap();
    let p95 = points(&page, "p95-rate");
    assert_eq!(p95.len(), 4, "{p95:?}");
    for (sc, name) in scenarios.iter().zip(["small", "large"]) {
        for step in sc["steps"].as_array().unwrap() {
            let s = &step["summary"];
            let p = p95
                .iter()
                .find(|p| p.series == name && p.offered == s["rate"].as_f64().unwrap())
                .unwrap_or_else(|| panic!("{name} {step}"));
            assert_eq!(p.x, three(s["tps"].as_f64().unwrap()));
            assert_eq!(p.y, s["latency_ms"]["p95"].as_f64().unwrap());
        }
    }
    // Rates come from the file, as thread counts do.
    let file = dir.path("rates.toml");
    let refused = fleetbench(&["scenario", "run", file.to_str().unwrap(), "--rate=100,200"]);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("scenario run does not take --rate: the scenario file sets it"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
