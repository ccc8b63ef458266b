//! `fleetbench compare` on fixture files (tests/fixtures): the change in % of TPS, QPS and
//! every latency figure against the first file, a format 1 file as the baseline.

use std::path::PathBuf;

use fleetbench_tests::{Scratch, expect_ok, fleetbench};

/// The cells of the row whose first column is `metric`: cells are two or more spaces
/// apart, and may hold single spaces ("12.00 ±0.50", "within noise").
fn row(out: &str, metric: &str) -> Vec<String> {
    let head = format!("{metric}  ");
    let cells = out
        .lines()
        .find_map(|l| l.strip_prefix(&head))
        .unwrap_or_else(|| panic!("no row {metric} in\n{out}"));
    cells
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn compare_computes_the_change_against_the_first_file() {
    let out = fleetbench(&[
        "compare",
        &fixture("compare-base.json"),
        &fixture("compare-new.json"),
        &fixture("compare-third.json"),
    ]);
    let text = expect_ok(&out);
    assert!(
        text.contains("\nCompared with compare-base.json (threads: 16 / 16 / 32)\n"),
        "{text}"
    );
    // The settings that differ come first; these files have no interval series to give
    // a spread, so no verdict is possible.
    assert!(
        text.starts_with(
            "Settings that differ (compare-base.json / compare-new.json / compare-third.json):\n"
        ),
        "{text}"
    );
    assert!(text.contains("    threads: 16 / 16 / 32\n"), "{text}");
    let expect = [
        (
            "tps",
            [
                "500.00",
                "600.00",
                "+20.0%",
                "no spread",
                "250.00",
                "-50.0%",
                "no spread",
            ],
        ),
        (
            "qps",
            [
                "10000.00",
                "9000.00",
                "-10.0%",
                "no spread",
                "5000.00",
                "-50.0%",
                "no spread",
            ],
        ),
        (
            "lat min (ms)",
            [
                "1.00",
                "1.00",
                "+0.0%",
                "no spread",
                "2.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat avg (ms)",
            [
                "12.00",
                "9.00",
                "-25.0%",
                "no spread",
                "24.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat p50 (ms)",
            [
                "10.00",
                "12.50",
                "+25.0%",
                "no spread",
                "20.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat p90 (ms)",
            [
                "18.00",
                "18.00",
                "+0.0%",
                "no spread",
                "36.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat p95 (ms)",
            [
                "20.00",
                "15.00",
                "-25.0%",
                "no spread",
                "40.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat p99 (ms)",
            [
                "40.00",
                "50.00",
                "+25.0%",
                "no spread",
                "80.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat p99.9 (ms)",
            [
                "80.00",
                "88.00",
                "+10.0%",
                "no spread",
                "160.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "lat max (ms)",
            [
                "100.00",
                "150.00",
                "+50.0%",
                "no spread",
                "200.00",
                "+100.0%",
                "no spread",
            ],
        ),
        (
            "err/s",
            [
                "1.00",
                "1.00",
                "+0.0%",
                "no spread",
                "1.00",
                "+0.0%",
                "no spread",
            ],
        ),
    ];
    for (metric, cells) in expect {
        assert_eq!(row(&text, metric), cells, "{metric}:\n{text}");
    }
}

#[test]
fn compare_refuses_what_it_cannot_read() {
    let base = fixture("compare-base.json");
    for (args, what) in [
        (
            vec!["compare", base.as_str()],
            "one result alone has nothing to compare with; usage: fleetbench compare",
        ),
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

/// A comparison asked for as a file (`--html`, `--csv`, `--json`), and `report` given
/// several results: refused in one line that says what to run, never ignored with exit 0
/// and no file (issue 60).
#[test]
fn output_files_of_a_comparison_are_refused_not_ignored() {
    let (base, new) = (fixture("compare-base.json"), fixture("compare-new.json"));
    let dir = Scratch::new("compare-files");
    let out_file = dir.path("cmp.html").display().to_string();
    for opt in ["--html", "--csv", "--json"] {
        let out = fleetbench(&["compare", &base, &new, opt, &out_file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("writes no {opt} file yet")), "{err}");
        assert!(!dir.path("cmp.html").exists(), "{opt}: a file was written");
    }
    let out = fleetbench(&["report", &base, &new, "--html", &out_file]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("report takes one result") && err.contains("fleetbench compare"),
        "{err}"
    );
}

/// Runs `fleetbench compare` and returns (exit code, stdout).
fn compare(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["compare"];
    all.extend(args);
    let out = fleetbench(&all);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn compare_tells_an_effect_from_noise_over_repeated_runs() {
    use fleetbench_tests::mariadb::MariaDb;
    use fleetbench_tests::{Scratch, scenario_json};
    let common = ["oltp_read_only", "--tables=1", "--table-size=1000"];
    let db = MariaDb::prepared(&common);
    let scratch = Scratch::new("compare-repeat");
    // Scenario files with --repeat alternate their scenarios, so that drift over time (a
    // neighbour's load on a shared machine) falls on both sides alike. A transaction of 36
    // queries against one of 3 is an effect far larger than that noise.
    let heavy = r#"{ point-selects = 30 }"#;
    let light = r#"{ point-selects = 1, simple-ranges = 0, sum-ranges = 0, order-ranges = 0, distinct-ranges = 0 }"#;
    let measure = |name: &str, first: (&str, &str), second: (&str, &str)| {
        let file = scratch.write(
            &format!("{name}.toml"),
            &format!(
                "test = \"oltp_read_only\"\nthreads = [2]\ntime = 2\nwarmup-time = 1\n\
                 [options]\ntables = 1\ntable-size = 1000\n[targets]\ndb = \"{}\"\n\
                 [[scenario]]\nname = \"{}\"\ntargets = [\"db\"]\nprepare = false\noptions = {}\n\
                 [[scenario]]\nname = \"{}\"\ntargets = [\"db\"]\nprepare = false\noptions = {}\n",
                db.url(),
                first.0,
                first.1,
                second.0,
                second.1
            ),
        );
        let path = scratch.path(&format!("{name}.json"));
        let (text, _) = scenario_json(&file, &["--repeat=4"], &path);
        assert!(text.contains("measurement 4/4"), "{text}");
        path.display().to_string()
    };
    let aa = measure("aa", ("a1", heavy), ("a2", heavy));
    let effect = measure("effect", ("light", light), ("heavy", heavy));

    // Every measurement is kept: four steps of two threads each per scenario.
    let doc = fleetbench_tests::json(std::path::Path::new(&aa));
    for sc in doc["scenarios"].as_array().unwrap() {
        let steps = sc["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 4, "{doc}");
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(
                (s["threads"].as_u64(), s["repeat"].as_u64()),
                (Some(2), Some(i as u64 + 1))
            );
        }
    }

    // A/A: the same settings twice. A 95% interval misses one time in twenty by design, and a
    // shared machine drifts, so a "better"/"worse" here is allowed only for a small change; a
    // broken compare (wrong pairing, wrong arithmetic) shows as a large one. A gate with room
    // for that noise passes.
    let (code, text) = compare(&[&aa, "--fail-if", "tps<-15%"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("95% intervals from aa.json:a1: 4 repeats; aa.json:a2: 4 repeats"),
        "{text}"
    );
    let tps = row(&text, "tps");
    let change: f64 = tps[2]
        .split('%')
        .next()
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no change in {tps:?}: {text}"));
    assert!(
        tps.last().map(String::as_str) == Some("within noise") || change.abs() < 10.0,
        "{text}"
    );
    assert!(tps[0].contains(" ±"), "mean with its interval: {text}");
    assert!(text.contains("fail-if tps<-15%: passed"), "{text}");

    // The heavy transactions against the light ones: far fewer per second, and the gate
    // fails.
    let (code, text) = compare(&[&effect, "--fail-if", "tps<-5%"]);
    let tps = row(&text, "tps");
    assert_eq!(tps.last().map(String::as_str), Some("worse"), "{text}");
    assert!(
        text.contains("fail-if tps<-5%: FAILED: tps of effect.json:heavy"),
        "{text}"
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.starts_with("Settings that differ (effect.json:light / effect.json:heavy):\n"),
        "{text}"
    );
    assert!(text.contains("\n    point_selects: 1 / 30\n"), "{text}");

    // Two files compare too; a cpu result is another test: refused unless --force, and
    // then its missing figures are n/a, not 0.
    let cpu = scratch.path("cpu.json").display().to_string();
    expect_ok(&fleetbench(&["cpu", "--time=1", "--json", &cpu, "run"]));
    let (code, text) = compare(&[&aa, &cpu]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("aa.json:a1 ran oltp_read_only and cpu.json ran cpu"),
        "{text}"
    );
    let (code, text) = compare(&[&aa, &cpu, "--force"]);
    assert_eq!(code, Some(0), "{text}");
    // qps: a1, a2, its change and verdict, then cpu's n/a.
    assert_eq!(row(&text, "qps")[4], "n/a", "{text}");

    // A rule on a figure the documents lack, or one that does not parse, is a usage error.
    for bad in ["latency<-5%", "tps<5", "tps=3%"] {
        let (code, text) = compare(&[&aa, "--fail-if", bad]);
        assert_eq!(code, Some(2), "{bad}: {text}");
        assert!(text.contains("--fail-if"), "{text}");
    }
    db.fleetbench_ok(&[&common, &["cleanup"]]);
}

#[test]
fn compare_lists_server_settings_by_server_and_only_those_that_differ() {
    // One server under two target names (a sweep's `default`, a scenario's `a`): the
    // targets differ, as text; the server's settings are the same and not listed.
    let text = expect_ok(&fleetbench(&[
        "compare",
        &fixture("compare-server-sweep.json"),
        &fixture("compare-server-scen.json"),
    ]));
    let settings: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        settings,
        [
            "Settings that differ (compare-server-sweep.json / compare-server-scen.json):",
            "    targets: default: sbtest@127.0.0.1:3306/sbtest (tables 1-10) / a: sbtest@127.0.0.1:3306/sbtest (tables 1-10)",
        ],
        "{text}"
    );
    // A tuning study: another server with a bigger buffer pool. The servers are named by
    // address and version, and of their settings only the buffer pool is listed.
    let text = expect_ok(&fleetbench(&[
        "compare",
        &fixture("compare-server-sweep.json"),
        &fixture("compare-server-scen.json"),
        &fixture("compare-server-big.json"),
    ]));
    let settings: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        settings[1..3],
        [
            "    server: 127.0.0.1:3306 (10.11.6-MariaDB) / 127.0.0.1:3306 (10.11.6-MariaDB) / 127.0.0.1:3307 (10.11.6-MariaDB)",
            "    server innodb_buffer_pool_size: 134217728 / 134217728 / 8589934592",
        ],
        "{text}"
    );
    assert_eq!(settings.len(), 4, "{text}");
    assert!(settings[3].starts_with("    targets: default: "), "{text}");
    assert!(!text.contains("n/a /") && !text.contains('{'), "{text}");
}
