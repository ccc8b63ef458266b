//! The README's main job, `scripts/demo.sh`, run as it is (with the binaries the suite built
//! in place of its release build, `FLEETBENCH_DEMO_BIN`, and 3 s runs on MariaDB): it must
//! exit 0, keep its three results and the HTML report, and end with the summary table of its
//! runs (issue 60), whose figures are those of the results it kept.

use std::process::Command;
use std::time::Duration;

use fleetbench_tests::shell::run_in_group;
use fleetbench_tests::{Scratch, bin, json};

const CHECKOUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[test]
fn the_demo_ends_with_a_summary_table_of_its_runs() {
    let scratch = Scratch::new("demo");
    let out = scratch.path("out");
    let profile = bin("fleetbench").parent().unwrap().to_path_buf();
    let ended = run_in_group(
        Command::new(format!("{CHECKOUT}/scripts/demo.sh"))
            .arg("--time=3")
            .env("FLEETBENCH_DEMO_BIN", &profile)
            .env("FLEETBENCH_DEMO_OUT", &out)
            .env_remove("FLEETBENCH_CATALOG"),
        Duration::from_secs(300),
    );
    assert!(
        ended.status.success(),
        "scripts/demo.sh failed ({})\nstdout:\n{}\nstderr:\n{}",
        ended.status,
        ended.stdout,
        ended.stderr
    );
    let text = &ended.stdout;
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "demo: summary of the runs")
        .unwrap_or_else(|| panic!("no summary:\n{text}"));
    let table = &lines[at + 1..];
    assert!(table[0].starts_with("$ ") && table[0].ends_with("/fleetbench runs list"));
    let head: Vec<&str> = table[1].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "id", "started", "(UTC)", "test", "thr", "tps", "lat", "ms", "step", "/", "tags"
        ],
        "{text}"
    );
    // Newest first: the PostgreSQL run, then the MariaDB runs without and with prepared
    // statements; each row with its result's threads, TPS and p95 latency.
    for (row, (file, tag)) in table[2..5].iter().zip([
        ("pg.json", "server=postgresql"),
        ("nops.json", "statements=plain"),
        ("ps.json", "statements=prepared"),
    ]) {
        let doc = json(&out.join(file));
        let cols: Vec<&str> = row.split_whitespace().collect();
        let want = [
            "oltp_read_write".to_string(),
            doc["config"]["threads"].to_string(),
            format!("{:.2}", doc["totals"]["sql"]["tps"].as_f64().unwrap()),
            format!(
                "p95={:.2}",
                doc["totals"]["latency_ms"]["p95"].as_f64().unwrap()
            ),
            tag.to_string(),
        ];
        assert_eq!(cols[3..], want, "{file}'s row:\n{text}");
        assert!(
            doc["totals"]["sql"]["tps"].as_f64().unwrap() > 0.0,
            "{file}"
        );
    }
    // The table is the last thing before the two lines that say where the results are.
    assert_eq!(table[5], "", "{text}");
    assert!(table[6].starts_with("demo: the results are "), "{text}");
    assert!(table[7].starts_with("demo: the HTML report of the first run is "));
    assert_eq!(table.len(), 8, "{text}");
    // The HTML report it names is there (what it shows is tests/tests/html_report.rs's).
    let html = std::fs::metadata(out.join("ps.html")).expect("ps.html");
    assert!(html.len() > 0, "ps.html is empty");
}
