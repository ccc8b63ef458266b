//! `--hlog`: the interval log is read by HdrHistogram's own Python library (the `hdrhistogram`
//! package from PyPI, which scripts/test.sh installs into target/pyenv), and what it decodes
//! is what the JSON says, interval by interval and agent by agent.

use fleetbench_tests::{Scratch, fleetbench, run_json, run_tool};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python with `hdrhistogram` installed: $FLEETBENCH_HDR_PYTHON, or the venv that
/// scripts/test.sh makes. Fails loudly when there is none.
fn python() -> PathBuf {
    let p = std::env::var_os("FLEETBENCH_HDR_PYTHON").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/pyenv/bin/python3"),
        PathBuf::from,
    );
    let ok = Command::new(&p)
        .args(["-c", "import hdrh.log"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} cannot import hdrh (Python's hdrhistogram): run scripts/test.sh, which installs it",
        p.display()
    );
    p
}

/// Every interval of the log as (tag, start s, count, p98.9, p99.1 in microseconds),
/// decoded by HdrHistogram's Python reader.
const DECODE: &str = r#"
import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 1000 * 1000, 3))
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    start = h.get_start_time_stamp() / 1000.0 - reader.get_start_time_sec()
    print(h.get_tag() or "-", "%.3f" % start, h.get_total_count(),
          h.get_value_at_percentile(98.9), h.get_value_at_percentile(99.1))
"#;

/// Runs `fleetbench ARGS --hlog=<log> run` and asserts it failed; its stderr.
fn fails_with_hlog(args: &[&str], log: &Path) -> String {
    let hlog = format!("--hlog={}", log.display());
    let out = fleetbench(&[args, &[&hlog, "run"]].concat());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_ne!(out.status.code(), Some(0), "{err}");
    err
}

#[test]
fn hdrhistogram_tools_read_every_interval_of_the_log() {
    let py = python();
    let dir = Scratch::new("hlog");
    let log = dir.path("run.hlog");
    let (_, doc) = run_json(
        &[
            "cpu",
            "--threads=2",
            "--local-agents=2",
            "--time=3",
            "--report-interval=1",
            "--cpu-max-prime=3000",
            &format!("--hlog={}", log.display()),
            "--hlog-per-agent",
        ],
        &dir.path("run.json"),
    );
    let text = run_tool(
        Command::new(&py).args(["-c", DECODE, log.to_str().unwrap()]),
        "python runs",
    );
    let rows: Vec<(String, f64, u64, (u64, u64))> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                (f[3].parse().unwrap(), f[4].parse().unwrap()),
            )
        })
        .collect();

    let intervals = doc["intervals"].as_array().unwrap();
    let merged: Vec<_> = rows.iter().filter(|r| r.0 == "-").collect();
    assert_eq!(merged.len(), intervals.len(), "{text}");
    for (k, (row, iv)) in merged.iter().zip(intervals).enumerate() {
        assert_eq!(Some(row.2), iv["events"].as_u64(), "interval {k}: {text}");
        // The JSON's p99 lies between the decoded histogram's p98.9 and p99.1 (libraries
        // round the rank of a percentile differently, so one rank apart is the same p99).
        let want = iv["latency_ms"]["p99"].as_f64().unwrap() * 1000.0;
        let (lo, hi) = (row.3.0 as f64, row.3.1 as f64);
        assert!(
            lo - 1.0 <= want && want <= hi + 1.0,
            "interval {k}: p99 {want} µs outside [{lo}, {hi}]: {text}"
        );
        // Each starts where the previous one ended, from the measurement's start.
        let end = iv["t_s"].as_f64().unwrap();
        let length = iv["duration_s"].as_f64().unwrap();
        assert!((row.1 - (end - length)).abs() < 0.01, "{row:?} {iv}");
        // The agents' own histograms of the interval add up to the merged one.
        let own: Vec<_> = rows
            .iter()
            .filter(|r| r.0 != "-" && (r.1 - k as f64).abs() < 0.01)
            .collect();
        assert_eq!(own.len(), 2, "interval {k}: {text}");
        assert_eq!(own.iter().map(|r| r.2).sum::<u64>(), row.2, "{text}");
    }
    // Tagged with the agents' addresses.
    let mut tags: Vec<String> = rows
        .iter()
        .filter(|r| r.0 != "-")
        .map(|r| r.0.clone())
        .collect();
    tags.sort();
    tags.dedup();
    let mut addrs: Vec<String> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["addr"].as_str().unwrap().to_string())
        .collect();
    addrs.sort();
    assert_eq!(tags, addrs);

    // Refused where it has no single run to log, and before anything runs.
    for (args, says) in [
        (
            vec!["cpu", "--threads=1,2", "--hlog=x.hlog", "run"],
            "--hlog with a sweep",
        ),
        (vec!["cpu", "--hlog-per-agent", "run"], "needs --hlog"),
    ] {
        let out = fleetbench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert!(!std::path::Path::new("x.hlog").exists());
    // A path it cannot create fails before the run, with the path in the message.
    let bad = dir.path("no/such/dir/run.hlog");
    let err = fails_with_hlog(&["cpu", "--time=1"], &bad);
    assert!(
        err.contains("--hlog") && err.contains("no/such/dir") && err.contains("does not exist"),
        "{err}"
    );
    // A run that fails before it starts leaves no empty log behind.
    let never = dir.path("never.hlog");
    let unreachable = [
        "oltp_point_select",
        "--mysql-host=127.0.0.1",
        "--mysql-port=1",
    ];
    let err = fails_with_hlog(&[&unreachable[..], &["--time=1"]].concat(), &never);
    assert!(!never.exists(), "an empty log was left: {err}");
}
