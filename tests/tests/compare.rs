//! `fleetbench compare` on fixture files (tests/fixtures): the change in % of TPS, QPS and
//! every latency figure against the first file, a format 1 file as the baseline.

use std::path::PathBuf;

use fleetbench_tests::fleetbench;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

/// The cells of the row whose first column is `metric`.
fn row(out: &str, metric: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{metric}  ")))
        .unwrap_or_else(|| panic!("no row {metric} in\n{out}"));
    line[metric.len()..]
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn compare_computes_the_change_against_the_first_file() {
    let out = fleetbench(&[
        "compare",
        &fixture("compare-base.json"),
        &fixture("compare-new.json"),
        &fixture("compare-third.json"),
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("Compared with compare-base.json (threads: 16 / 16 / 32)\n"));
    let expect = [
        ("tps", ["500.00", "600.00", "+20.0%", "250.00", "-50.0%"]),
        (
            "qps",
            ["10000.00", "9000.00", "-10.0%", "5000.00", "-50.0%"],
        ),
        ("lat min (ms)", ["1.00", "1.00", "+0.0%", "2.00", "+100.0%"]),
        (
            "lat avg (ms)",
            ["12.00", "9.00", "-25.0%", "24.00", "+100.0%"],
        ),
        (
            "lat p50 (ms)",
            ["10.00", "12.50", "+25.0%", "20.00", "+100.0%"],
        ),
        (
            "lat p90 (ms)",
            ["18.00", "18.00", "+0.0%", "36.00", "+100.0%"],
        ),
        (
            "lat p95 (ms)",
            ["20.00", "15.00", "-25.0%", "40.00", "+100.0%"],
        ),
        (
            "lat p99 (ms)",
            ["40.00", "50.00", "+25.0%", "80.00", "+100.0%"],
        ),
        (
            "lat p99.9 (ms)",
            ["80.00", "88.00", "+10.0%", "160.00", "+100.0%"],
        ),
        (
            "lat max (ms)",
            ["100.00", "150.00", "+50.0%", "200.00", "+100.0%"],
        ),
        ("err/s", ["1.00", "1.00", "+0.0%", "1.00", "+0.0%"]),
    ];
    for (metric, cells) in expect {
        assert_eq!(row(&text, metric), cells, "{metric}:\n{text}");
    }
}

#[test]
fn compare_refuses_what_it_cannot_read() {
    let base = fixture("compare-base.json");
    for (args, what) in [
        (vec!["compare", base.as_str()], "usage: fleetbench compare"),
        (
            vec!["compare", base.as_str(), "/nonexistent/x.json"],
            "cannot read /nonexistent/x.json",
        ),
        (
            vec!["compare", base.as_str(), env!("CARGO_MANIFEST_PATH")],
            "is not a fleetbench result: invalid JSON",
        ),
    ] {
        let out = fleetbench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(what), "{err:?} lacks {what:?}");
    }
}
