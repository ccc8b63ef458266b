//! The text report parses like sysbench's, line for line: the patterns scripts use on
//! sysbench 1.0's report match the same lines on fleetbench's default report (two agents,
//! with its per-agent and per-target blocks) and give fleetbench's own figures, and
//! `--report-style=1.0` prints sysbench's report alone. sysbench runs side by side on the
//! same private MariaDB.

use fleetbench_tests::mariadb::{DATABASE, MariaDb};
use fleetbench_tests::{AgentProc, Scratch, fleetbench_ok, run_json};

/// What scripts written for sysbench's report grep for: its labels, and the interval line's.
const PATTERNS: [&str; 23] = [
    "read:",
    "write:",
    "other:",
    "total:",
    "transactions:",
    "queries:",
    "ignored errors:",
    "reconnects:",
    "total time:",
    "total number of events:",
    "min:",
    "avg:",
    "max:",
    "95th percentile:",
    "sum:",
    "events (avg/stddev):",
    "execution time (avg/stddev):",
    "transactions",
    "queries",
    "lat (ms,95%)",
    "tps",
    "qps",
    "reconn/s",
];

/// Lines matching `pattern` that are not interval lines, and the interval lines matching it.
fn counts(report: &str, pattern: &str) -> (usize, usize) {
    let hits = report.lines().filter(|l| l.contains(pattern));
    let (intervals, rest): (Vec<&str>, Vec<&str>) = hits.partition(|l| l.starts_with("[ "));
    (rest.len(), intervals.len())
}

/// `awk '/pattern/{print $n}'`: the n-th whitespace-separated field (1-based) of each line.
fn awk(report: &str, pattern: &str, n: usize) -> Vec<String> {
    report
        .lines()
        .filter(|l| l.contains(pattern))
        .filter_map(|l| l.split_whitespace().nth(n - 1).map(String::from))
        .collect()
}

#[test]
fn sysbench_patterns_read_fleetbench_reports_as_they_read_sysbench() {
    let common = ["oltp_read_write", "--tables=2", "--table-size=1000"];
    let db = MariaDb::prepared(&common);
    let (_a, _b, agents) = AgentProc::pair();
    let with = |extra: &[&str]| db.args(&[&common[..], extra].concat());
    // The runs compared: four threads over both agents.
    let on_agents = |extra: &[&str]| with(&[&["--agents", &agents, "--threads=4"], extra].concat());

    let sb = db.sysbench(
        DATABASE,
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--threads=4",
            "--time=3",
            "--report-interval=1",
            "run",
        ],
    );

    let scratch = Scratch::new("report-parsing");
    let (fb, j) = run_json(
        &on_agents(&["--time=3", "--report-interval=1"]),
        &scratch.path("fb.json"),
    );
    // fleetbench's own blocks are there ...
    assert!(
        fb.contains("Per agent:") && fb.contains("Per target:"),
        "{fb}"
    );
    // ... and every pattern matches the lines it matches in sysbench's report.
    for p in PATTERNS {
        let (sb_rest, sb_iv) = counts(&sb, p);
        let (fb_rest, fb_iv) = counts(&fb, p);
        assert_eq!(
            fb_rest, sb_rest,
            "{p:?} outside interval lines\nfleetbench:\n{fb}\nsysbench:\n{sb}"
        );
        // Interval lines: the same on both when the pattern is part of the interval line.
        assert_eq!(fb_iv > 0, sb_iv > 0, "{p:?} on interval lines\n{fb}\n{sb}");
    }
    let fb_lines = fb.lines().filter(|l| l.starts_with("[ ")).count();
    let sb_lines = sb.lines().filter(|l| l.starts_with("[ ")).count();
    assert_eq!(fb_lines, 3, "[ 1s ] to [ 3s ]:\n{fb}");
    // sysbench prints one per second too, but its reporting thread can miss the last
    // tick on a loaded machine (then it prints one line fewer); never more.
    assert!(
        sb_lines == fb_lines || sb_lines + 1 == fb_lines,
        "as many interval lines as sysbench:\n{fb}\n{sb}"
    );

    // The values those patterns pick are fleetbench's figures.
    let sql = &j["totals"]["sql"];
    assert_eq!(
        awk(&fb, "transactions:", 2),
        [sql["transactions"].to_string()]
    );
    assert_eq!(awk(&fb, "queries:", 2), [sql["queries"].to_string()]);
    assert_eq!(awk(&fb, "read:", 2), [sql["reads"].to_string()]);
    assert_eq!(
        awk(&fb, "transactions", 3).len(),
        awk(&sb, "transactions", 3).len()
    );
    assert_eq!(
        awk(&fb, "total number of events:", 5),
        [j["totals"]["events"].to_string()]
    );
    let p95 = awk(&fb, "95th percentile:", 3);
    assert_eq!(
        p95,
        [format!(
            "{:.2}",
            j["totals"]["latency_ms"]["p95"].as_f64().unwrap()
        )]
    );

    // --report-style=1.0: sysbench's report alone, the same lines as sysbench's.
    let plain = fleetbench_ok(&on_agents(&["--time=2", "--report-style=1.0", "run"]));
    for own in [
        "Per agent",
        "Per target",
        "Agents:",
        "Connections to",
        "Target ",
    ] {
        assert!(!plain.contains(own), "{own:?} in the 1.0 style:\n{plain}");
    }
    let labels = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("[ "))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim().to_string()))
            .filter(|k| !k.is_empty())
            .collect()
    };
    let sb_labels = labels(&sb);
    let from = |v: &[String], first: &str| -> Vec<String> {
        v.iter().skip_while(|k| *k != first).cloned().collect()
    };
    assert_eq!(
        from(&labels(&plain), "SQL statistics"),
        from(&sb_labels, "SQL statistics"),
        "the report's labels, in order:\n{plain}\n{sb}"
    );
    // --report-style=0.5: an old script's regexes read every figure, and they are the JSON's.
    let (old, j) = run_json(
        &on_agents(&[
            "--time=3",
            "--report-interval=1",
            "--percentile=99",
            "--report-style=0.5",
        ]),
        &scratch.path("old.json"),
    );
    let re = |p: &str| regex::Regex::new(p).unwrap();
    let interval = re(
        r"^\[\s*(\d+)s\] threads: (\d+), tps: ([\d.]+), reads: ([\d.]+), writes: ([\d.]+), response time: ([\d.]+)ms \(99%\), errors: ([\d.]+), reconnects:\s+([\d.]+)$",
    );
    let lines: Vec<regex::Captures> = old.lines().filter_map(|l| interval.captures(l)).collect();
    let ivs = j["intervals"].as_array().unwrap();
    assert_eq!(lines.len(), ivs.len(), "{old}");
    for (c, iv) in lines.iter().zip(ivs) {
        let tps: f64 = c[3].parse().unwrap();
        assert!(
            (tps - iv["sql"]["tps"].as_f64().unwrap()).abs() < 0.01,
            "{}",
            &c[0]
        );
        let p99: f64 = c[6].parse().unwrap();
        assert!(
            (p99 - iv["latency_ms"]["p99"].as_f64().unwrap()).abs() < 0.01,
            "{}",
            &c[0]
        );
    }
    let one = |pattern: &str| -> String {
        let r = re(pattern);
        let hits: Vec<String> = old
            .lines()
            .filter_map(|l| r.captures(l).map(|c| c[1].to_string()))
            .collect();
        assert_eq!(hits.len(), 1, "{pattern} in\n{old}");
        hits[0].clone()
    };
    let sql = &j["totals"]["sql"];
    let t = &j["totals"];
    assert_eq!(one(r"^OLTP test statistics:$()"), "");
    assert_eq!(one(r"^\s+read:\s+(\d+)$"), sql["reads"].to_string());
    assert_eq!(one(r"^\s+write:\s+(\d+)$"), sql["writes"].to_string());
    assert_eq!(one(r"^\s+other:\s+(\d+)$"), sql["others"].to_string());
    assert_eq!(one(r"^\s+total:\s+(\d+)$"), sql["queries"].to_string());
    assert_eq!(
        one(r"^\s+transactions:\s+(\d+)\s+\([\d.]+ per sec\.\)$"),
        sql["transactions"].to_string()
    );
    assert_eq!(
        one(r"^\s+read/write requests:\s+(\d+)\s+\([\d.]+ per sec\.\)$")
            .parse::<u64>()
            .unwrap(),
        sql["reads"].as_u64().unwrap() + sql["writes"].as_u64().unwrap()
    );
    assert_eq!(
        one(r"^\s+other operations:\s+(\d+)\s"),
        sql["others"].to_string()
    );
    assert_eq!(one(r"^Test execution summary:$()"), "");
    assert_eq!(
        one(r"^\s+total number of events:\s+(\d+)$"),
        t["events"].to_string()
    );
    let close = |pattern: &str, want: f64| {
        let got: f64 = one(pattern).parse().unwrap();
        assert!((got - want).abs() < 0.01, "{pattern}: {got} against {want}");
    };
    close(
        r"^\s+total time:\s+([\d.]+)s$",
        t["time_s"].as_f64().unwrap(),
    );
    for (pattern, figure) in [
        (r"^\s+min:\s+([\d.]+)ms$", "min"),
        (r"^\s+avg:\s+([\d.]+)ms$", "avg"),
        (r"^\s+max:\s+([\d.]+)ms$", "max"),
        (r"^\s+approx\.\s+99 percentile:\s+([\d.]+)ms$", "p99"),
    ] {
        close(pattern, t["latency_ms"][figure].as_f64().unwrap());
    }
    for own in [
        "Per agent",
        "Per target",
        "SQL statistics",
        "General statistics",
    ] {
        assert!(!old.contains(own), "{own:?} in the 0.5 style:\n{old}");
    }
    fleetbench_ok(&with(&["cleanup"]));
}
