//! `fleetbench compare` on fixture files (tests/fixtures): the change in % of TPS, QPS and
//! every latency figure against the first file, a format 1 file as the baseline; and on
//! real runs: tested from noise over repeats, written as HTML, CSV and JSON, and across
//! database engines.

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

/// The figure of `series` for `key` in a comparison's JSON (its first block).
fn figure<'a>(cmp: &'a serde_json::Value, series: &str, key: &str) -> &'a serde_json::Value {
    cmp["blocks"][0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["series"] == series && f["key"] == key)
        .unwrap_or_else(|| panic!("no {key} of {series} in {cmp}"))
}

/// `a` and `b` agree to the 4 decimals the comparison's files give.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * b.abs().max(1.0)
}

/// A comparison leaves the terminal (issue 60): two real runs compared into an HTML page,
/// a CSV and a JSON file. The files hold the runs' own figures and their changes; the
/// page, in headless Chromium, shows every figure in its table and charts each change
/// with its interval, its texts inside their charts; `report A B --html` makes the same
/// page.
#[test]
fn compare_writes_a_page_a_csv_and_a_json_of_two_real_runs() {
    use fleetbench_tests::browser::{TEXT_PROBE, attr, dump_dom, dump_probed, element};
    use fleetbench_tests::mariadb::MariaDb;
    let common = ["oltp_read_only", "--tables=1", "--table-size=1000"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("compare-files");
    let (a, b) = (dir.path("one.json"), dir.path("two.json"));
    let (_, ja) = db.run_json(&[&common, &["--threads=1", "--time=5"]], &a);
    let (_, jb) = db.run_json(&[&common, &["--threads=2", "--time=5"]], &b);
    let (html, csv, json) = (
        dir.path("cmp.html"),
        dir.path("cmp.csv"),
        dir.path("cmp.json"),
    );
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let path = |p: &std::path::Path| p.display().to_string();
    let text = expect_ok(&fleetbench(&[
        "compare",
        &a,
        &b,
        "--fail-if=tps<-99%",
        "--html",
        &path(&html),
        "--csv",
        &path(&csv),
        "--json",
        &path(&json),
    ]));
    assert!(
        text.contains("Compared with one.json (threads: 1 / 2)"),
        "{text}"
    );

    // The JSON: its layout, and the runs' own figures with their changes.
    let cmp = fleetbench_tests::json(&json);
    assert_eq!(
        (cmp["format"].as_u64(), cmp["kind"].as_str()),
        (Some(1), Some("comparison"))
    );
    assert_eq!(cmp["baseline"], "one.json");
    assert_eq!(cmp["series"][1]["label"], "two.json");
    assert_eq!(cmp["fail_if"][0]["passed"], true, "{cmp}");
    let total = |j: &serde_json::Value, path: &[&str]| -> f64 {
        path.iter()
            .fold(&j["totals"], |v, k| &v[*k])
            .as_f64()
            .unwrap()
    };
    for (key, path) in [
        ("tps", &["sql", "tps"][..]),
        ("qps", &["sql", "qps"]),
        ("avg", &["latency_ms", "avg"]),
        ("p95", &["latency_ms", "p95"]),
        ("max", &["latency_ms", "max"]),
    ] {
        let (base, new) = (total(&ja, path), total(&jb, path));
        let f = figure(&cmp, "two.json", key);
        assert!(close(f["baseline"].as_f64().unwrap(), base), "{key}: {f}");
        assert!(close(f["value"].as_f64().unwrap(), new), "{key}: {f}");
        let pct = f["change_pct"].as_f64().unwrap();
        assert!(close(pct, (new - base) / base * 100.0), "{key}: {f}");
        // One run's spread comes from its 5 intervals: every change has its interval.
        let (lo, hi) = (
            f["change_ci_low_pct"].as_f64().unwrap(),
            f["change_ci_high_pct"].as_f64().unwrap(),
        );
        assert!(lo <= pct + 1e-4 && pct <= hi + 1e-4, "{key}: {f}");
        assert_eq!(figure(&cmp, "one.json", key)["verdict"], "baseline");
        assert_eq!(figure(&cmp, "one.json", key)["value"], f["baseline"]);
    }
    let figures = cmp["blocks"][0]["figures"].as_array().unwrap();

    // The CSV: the header, then the JSON's figures row by row.
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv_text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "series,test,threads,offered_rate,block,metric,key,better,baseline,baseline_ci_half_width,value,value_ci_half_width,change_pct,change_ci_low_pct,change_ci_high_pct,verdict"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), figures.len(), "{csv_text}");
    for (row, f) in rows.iter().zip(figures) {
        assert_eq!(row.len(), 16, "{row:?}");
        assert_eq!(
            (row[0], row[6], row[15]),
            (
                f["series"].as_str().unwrap(),
                f["key"].as_str().unwrap(),
                f["verdict"].as_str().unwrap()
            )
        );
        assert_eq!(row[2], f["threads"].to_string(), "{row:?}");
        for (col, field) in [
            (8, "baseline"),
            (10, "value"),
            (12, "change_pct"),
            (13, "change_ci_low_pct"),
            (14, "change_ci_high_pct"),
        ] {
            match f[field].as_f64() {
                Some(v) => assert!(close(row[col].parse().unwrap(), v), "{field}: {row:?} {f}"),
                None => assert_eq!(row[col], "", "{field}: {row:?}"),
            }
        }
    }

    // The page in a browser: its script found every chart whole; every figure is in the
    // table, and charted (or named as having no change to chart).
    let dom = dump_dom(&dir.0, &html);
    let status = element(&dom, "status").expect("the status element");
    assert_eq!(attr(status, "data-ok"), "true", "{status}");
    let charts: usize = attr(status, "data-charts").parse().unwrap();
    let mut keys: Vec<&str> = figures.iter().map(|f| f["key"].as_str().unwrap()).collect();
    keys.dedup();
    let left_out: Vec<&str> = dom
        .split("<p class=\"nodata\"")
        .skip(1)
        .flat_map(|p| attr(p, "data-left-out").split(' '))
        .collect();
    let mut charted = 0;
    for f in figures.iter().filter(|f| f["series"] == "two.json") {
        let (key, metric) = (f["key"].as_str().unwrap(), f["metric"].as_str().unwrap());
        assert!(
            dom.contains(&format!("<td>{}</td>", metric.replace('&', "&amp;"))),
            "{metric} not in the page's table"
        );
        let id = format!(
            "change-{}",
            key.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        );
        match (element(&dom, &id), f["change_pct"].as_f64()) {
            (Some(chart), Some(pct)) => {
                charted += 1;
                assert!(chart.starts_with("<svg class=\"chart change\""), "{id}");
                assert_eq!(attr(chart, "data-points"), "1", "{id}");
                let pt = &chart[chart.find("<circle class=\"pt\"").unwrap()..];
                let y: f64 = attr(pt, "data-y").parse().unwrap();
                assert!(
                    (y - pct).abs() < 1e-3 * pct.abs().max(1.0),
                    "{id}: {y} against {pct}"
                );
                assert_eq!(
                    attr(pt, "data-verdict"),
                    f["verdict"].as_str().unwrap(),
                    "{id}"
                );
            }
            (None, None) => assert!(
                left_out.contains(&id.as_str()),
                "{id} neither charted nor named"
            ),
            (chart, pct) => panic!("{id}: chart {} and change {pct:?}", chart.is_some()),
        }
    }
    assert_eq!(charts, charted, "{status}");
    assert!(
        charted >= keys.len() - left_out.len() && charted >= 8,
        "{charted} of {keys:?}"
    );
    // Every chart's texts stay inside it and apart.
    let probed = dump_probed(&dir.0, &html, TEXT_PROBE);
    let probe = &probed[probed.find("<pre id=\"probe\"").expect("the probe ran")..];
    let texts: usize = attr(probe, "data-texts").parse().unwrap();
    assert!(texts > 6 * charted, "{texts} texts in {charted} charts");
    let findings = &probe[probe.find('>').unwrap() + 1..probe.find("</pre>").unwrap()];
    assert!(findings.is_empty(), "{findings}");

    // `report` given both results makes the same page (and prints the same comparison).
    let again = dir.path("report.html");
    let report_text = expect_ok(&fleetbench(&["report", &a, &b, "--html", &path(&again)]));
    assert_eq!(
        report_text,
        text.replace("\nfail-if tps<-99%: passed\n", "")
    );
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&html).unwrap().replace(
            "<h2 id=\"fail-if\">--fail-if</h2><p class=\"rule passed\">fail-if tps&lt;-99%: passed</p>",
            ""
        )
    );
    db.fleetbench_ok(&[&common, &["cleanup"]]);
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

/// A MariaDB result compared with a PostgreSQL one (issue 60): the settings list only what
/// both servers have, and says in one line how many server settings were one-sided.
#[test]
fn a_cross_engine_comparison_lists_only_the_server_settings_both_sides_have() {
    use fleetbench_tests::Postgres;
    use fleetbench_tests::mariadb::MariaDb;
    let common = ["oltp_read_only", "--tables=1", "--table-size=1000"];
    let maria = MariaDb::prepared(&common);
    let pg = Postgres::start();
    let pg_args = |extra: &[&str]| -> Vec<String> {
        common
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .chain(pg.pgsql_args())
            .collect()
    };
    fleetbench_tests::fleetbench_ok(&pg_args(&["prepare"]));
    let dir = Scratch::new("compare-engines");
    let (m, p) = (dir.path("maria.json"), dir.path("pg.json"));
    maria.run_json(&[&common, &["--time=2"]], &m);
    fleetbench_tests::run_json(&pg_args(&["--time=2"]), &p);
    let text = expect_ok(&fleetbench(&[
        "compare",
        &m.display().to_string(),
        &p.display().to_string(),
    ]));
    let settings: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        settings[0], "Settings that differ (maria.json / pg.json):",
        "{text}"
    );
    // The servers are named, each by its address and version.
    let server = settings
        .iter()
        .find(|l| l.starts_with("    server: "))
        .unwrap_or_else(|| panic!("no server line in {text}"));
    assert!(
        server.contains("MariaDB") && server.contains("PostgreSQL"),
        "{server}"
    );
    // No server setting that only one side has is listed; they are counted.
    for l in &settings[1..] {
        assert!(
            !(l.starts_with("    server ") && l.contains("n/a")),
            "{l} in\n{text}"
        );
    }
    let last = settings.last().unwrap();
    let n: usize = last
        .strip_prefix("    (")
        .and_then(|r| r.strip_suffix(" server settings only on one side not shown)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of one-sided settings in {text}"));
    assert!(n >= 10, "{text}");
    // The settings block is short: a screen's worth of n/a lines was the complaint.
    assert!(settings.len() < 12, "{text}");
    maria.fleetbench_ok(&[&common, &["cleanup"]]);
    fleetbench_tests::fleetbench_ok(&pg_args(&["cleanup"]));
}
