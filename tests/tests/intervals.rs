//! The interval series covers the whole run: for cpu, fileio and OLTP over two real agents,
//! with and without `--report-interval`, the intervals add up to the totals exactly (per
//! agent too), and the last, partial interval is printed as sysbench prints its last line.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Scratch, expect_ok, fleetbench, json};
use serde_json::Value;

/// Runs `args` plus `--json` over agents `a` and `b`, and checks the series against the
/// totals. Returns the text report and the document.
fn run_and_check(label: &str, args: &[String], text_lines: bool) -> (String, Value) {
    let scratch = Scratch::new(label);
    let out_json = scratch.path("result.json");
    let mut all: Vec<String> = args.to_vec();
    all.extend([
        "--json".into(),
        out_json.display().to_string(),
        "run".into(),
    ]);
    let text = expect_ok(&fleetbench(
        &all.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let j = json(&out_json);
    let intervals = j["intervals"].as_array().expect("intervals");
    assert!(!intervals.is_empty(), "{label}: no intervals");
    let sum = |f: &dyn Fn(&Value) -> u64| intervals.iter().map(f).sum::<u64>();

    let total = j["totals"]["events"].as_u64().unwrap();
    assert!(total > 0, "{label}: nothing ran");
    assert_eq!(
        sum(&|i| i["events"].as_u64().unwrap()),
        total,
        "{label}: interval events against the total"
    );
    assert_eq!(
        sum(&|i| i["latency_ms"]["count"].as_u64().unwrap()),
        j["totals"]["latency_ms"]["count"].as_u64().unwrap(),
        "{label}: latency samples"
    );
    for (k, agent) in j["agents"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            sum(&|i| i["agent_events"][k].as_u64().unwrap_or(0)),
            agent["events"].as_u64().unwrap(),
            "{label}: agent {k}'s intervals against its total"
        );
    }
    for kind in ["sql", "file"] {
        let Some(t) = j["totals"].get(kind) else {
            continue;
        };
        for field in ["reads", "writes"] {
            assert_eq!(
                sum(&|i| i[kind][field].as_u64().unwrap_or(0)),
                t[field].as_u64().unwrap(),
                "{label}: {kind}.{field}"
            );
        }
    }
    // The series ends where the run does, with the last interval shorter than a tick at most.
    let last = intervals.last().unwrap();
    let run_time = j["totals"]["time_s"].as_f64().unwrap();
    assert!(
        (last["t_s"].as_f64().unwrap() - run_time).abs() < 0.25,
        "{label}: the last interval ends at {} s, the run at {run_time} s",
        last["t_s"]
    );
    if text_lines {
        let secs = j["config"]["time_s"].as_u64().unwrap();
        assert!(
            text.contains(&format!("[ {secs}s ]")),
            "{label}: no last line [ {secs}s ]:\n{text}"
        );
        let lines = text.lines().filter(|l| l.starts_with("[ ")).count();
        assert_eq!(lines, intervals.len(), "{label}: one line per interval");
    }
    (text, j)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// prepare or cleanup with `common`'s options; must succeed.
fn job(common: &[String], command: &str) {
    let mut args: Vec<&str> = common.iter().map(String::as_str).collect();
    args.push(command);
    expect_ok(&fleetbench(&args));
}

#[test]
fn cpu_and_fileio_intervals_add_up_to_the_totals() {
    // Each agent has its own work directory, as on two hosts: sharing one, both would
    // write the same test files.
    let (wa, wb) = (Scratch::new("intervals-a"), Scratch::new("intervals-b"));
    let a = AgentProc::start_with(&["--work-dir", wa.0.to_str().unwrap()], &[]);
    let b = AgentProc::start_with(&["--work-dir", wb.0.to_str().unwrap()], &[]);
    let agents = format!("{},{}", a.addr, b.addr);
    for (label, extra) in [("cpu-ri", &["--report-interval=1"][..]), ("cpu", &[][..])] {
        let mut args = strings(&["cpu", "--agents", &agents, "--threads=3", "--time=3"]);
        args.extend(strings(extra));
        run_and_check(label, &args, !extra.is_empty());
    }
    // An event-limited run ends between ticks: its last line is a partial interval.
    let (text, j) = run_and_check(
        "cpu-events",
        &strings(&[
            "cpu",
            "--agents",
            &agents,
            "--threads=2",
            "--time=0",
            "--events=3000",
            "--cpu-max-prime=20000",
            "--report-interval=1",
        ]),
        false,
    );
    assert_eq!(j["totals"]["events"].as_u64(), Some(3000), "{text}");

    let common = strings(&[
        "fileio",
        "--agents",
        &agents,
        "--file-num=2",
        "--file-total-size=2M",
        "--file-dir=data",
    ]);
    job(&common, "prepare");
    for (label, extra) in [
        ("fileio-ri", &["--report-interval=1"][..]),
        ("fileio", &[][..]),
    ] {
        let mut args = common.clone();
        args.extend(strings(&[
            "--file-test-mode=rndrw",
            "--threads=2",
            "--time=2",
        ]));
        args.extend(strings(extra));
        run_and_check(label, &args, !extra.is_empty());
    }
    job(&common, "cleanup");
}

#[test]
fn oltp_intervals_add_up_to_the_totals() {
    let db = MariaDb::start();
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let agents = format!("{},{}", a.addr, b.addr);
    let mut common = strings(&[
        "oltp_read_write",
        "--agents",
        &agents,
        "--tables=2",
        "--table-size=1000",
    ]);
    common.extend(db.fleetbench_args());
    job(&common, "prepare");
    for (label, extra) in [("oltp-ri", &["--report-interval=1"][..]), ("oltp", &[][..])] {
        let mut args = common.clone();
        args.extend(strings(&["--threads=4", "--time=3"]));
        args.extend(strings(extra));
        let (text, j) = run_and_check(label, &args, !extra.is_empty());
        let queries: u64 = j["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["sql"]["queries"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(
            queries,
            j["totals"]["sql"]["queries"].as_u64().unwrap(),
            "{label}: {text}"
        );
    }
}

#[test]
fn checkpoint_reports_cover_the_time_since_the_previous_one() {
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let agents = format!("{},{}", a.addr, b.addr);
    let (text, j) = run_and_check(
        "checkpoints",
        &strings(&[
            "cpu",
            "--agents",
            &agents,
            "--threads=2",
            "--time=4",
            "--report-checkpoints=2,4",
            "--cpu-max-prime=3000",
        ]),
        false,
    );
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.ends_with("Checkpoint report:"))
        .collect();
    assert_eq!(
        heads,
        ["[ 2s ] Checkpoint report:", "[ 4s ] Checkpoint report:"],
        "{text}"
    );
    // Counters reset at each checkpoint: the two add up to the whole run.
    let events: Vec<u64> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("total number of events:"))
        .map(|v| v.trim().parse().unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{text}");
    assert_eq!(events[0] + events[1], events[2], "{text}");
    assert_eq!(events[2], j["totals"]["events"].as_u64().unwrap());
}
