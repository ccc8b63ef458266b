//! Scenario files end to end: two private MariaDB servers, one scenario on each; the
//! comparison table has a row per scenario and thread count, and each server's own
//! counters show that only its scenario's queries reached it. Malformed files are refused
//! with one line naming the line and the field.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, expect_usage_error, fleetbench, fleetbench_ok};
use serde_json::Value;

const COUNTERS: [&str; 3] = ["Com_select", "Com_stmt_execute", "Com_stmt_prepare"];

fn counters(db: &MariaDb) -> Vec<u64> {
    COUNTERS.iter().map(|c| db.status(c)).collect()
}

fn delta(before: &[u64], after: &[u64], name: &str) -> u64 {
    let i = COUNTERS.iter().position(|c| *c == name).unwrap();
    after[i] - before[i]
}

#[test]
fn two_scenarios_on_two_servers_give_one_row_per_scenario_and_thread_count() {
    let db1 = MariaDb::start();
    let db2 = MariaDb::start();
    let dir = Scratch::new("scenario");
    let html = dir.path("scenarios.html");
    let toml = format!(
        r#"
test = "oltp_read_only"
threads = [1, 2]
time = 2
cooldown = 1

[options]
tables = 2
table-size = 300
local-agents = 2

[targets]
first = "{}"
second = "{}"

[[scenario]]
name = "text-on-first"
description = "text protocol, like a proxy"
targets = ["first"]
[scenario.options]
db-ps-mode = "disable"

[[scenario]]
name = "prepared-on-second"
targets = ["second"]
"#,
        db1.url(),
        db2.url()
    );
    let (b1, b2) = (counters(&db1), counters(&db2));
    let (stdout, doc) =
        dir.run_scenarios("scenarios", &toml, &[&format!("--html={}", html.display())]);
    let (a1, a2) = (counters(&db1), counters(&db2));

    // Every line of a scenario's prepare and cleanup carries its name.
    let jobs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("table") && (l.contains("Creating") || l.contains("Dropping")))
        .collect();
    assert!(!jobs.is_empty(), "{stdout}");
    for l in jobs {
        assert!(
            l.starts_with("[text-on-first] ") || l.starts_with("[prepared-on-second] "),
            "{l:?} in\n{stdout}"
        );
    }

    // One table, scenario by thread count.
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "Scenarios compared:")
        .skip(1)
        .collect();
    let keys: Vec<(String, String)> = table[1..]
        .iter()
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap().into(), f.next().unwrap().into())
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("text-on-first", "1"),
            ("text-on-first", "2"),
            ("prepared-on-second", "1"),
            ("prepared-on-second", "2")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string())),
        "{stdout}"
    );

    assert_eq!(doc["kind"], "scenarios");
    let sc = doc["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 2);
    let sum = |s: &Value, what: &str| -> u64 {
        s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["result"]["totals"]["sql"][what].as_u64().unwrap())
            .sum()
    };
    for s in sc {
        assert_eq!(s["steps"].as_array().unwrap().len(), 2);
        for (st, threads) in s["steps"].as_array().unwrap().iter().zip([1, 2]) {
            assert_eq!(st["threads"], threads);
            let targets = st["result"]["totals"]["targets"].as_array().unwrap();
            assert_eq!(targets.len(), 1);
            assert_eq!(targets[0]["name"], s["targets"][0]);
        }
    }
    let reads1 = sum(&sc[0], "reads");
    let reads2 = sum(&sc[1], "reads");
    assert!(reads1 > 100 && reads2 > 100, "{reads1} {reads2}");
    // First server: text protocol only, so no prepared statement ever reached it (the
    // second scenario prepares every statement); its selects are the first scenario's,
    // plus a few from prepare's checks.
    assert_eq!(delta(&b1, &a1, "Com_stmt_prepare"), 0);
    assert_eq!(delta(&b1, &a1, "Com_stmt_execute"), 0);
    let sel1 = delta(&b1, &a1, "Com_select");
    assert!((reads1..reads1 + 100).contains(&sel1), "{sel1} vs {reads1}");
    // Second server: every read of the second scenario was a prepared execution, and
    // its selects (MariaDB counts prepared executions there too) are the second
    // scenario's alone: the first scenario's thousands of selects did not arrive.
    let exec2 = delta(&b2, &a2, "Com_stmt_execute");
    assert!(exec2 >= reads2, "{exec2} < {reads2}");
    let sel2 = delta(&b2, &a2, "Com_select");
    assert!((reads2..reads2 + 100).contains(&sel2), "{sel2} vs {reads2}");
    assert!(reads1 > 100, "the first scenario's selects would show");
    // The HTML charts QPS against threads with one line per scenario, a point per step.
    let page = std::fs::read_to_string(&html).unwrap();
    let qps_chart = &page[page.find("id=\"qps-threads\"").expect("qps chart")..];
    let qps_chart = &qps_chart[..qps_chart.find("</svg>").unwrap()];
    for (s, name) in sc.iter().zip(["text-on-first", "prepared-on-second"]) {
        assert_eq!(s["name"], name);
        for st in s["steps"].as_array().unwrap() {
            let point = format!(
                "data-series=\"{name}\" data-x=\"{}\"",
                st["threads"].as_u64().unwrap()
            );
            assert!(qps_chart.contains(&point), "{point} missing");
        }
    }
    // prepare and cleanup ran around each scenario: nothing is left behind.
    assert_eq!(db1.sql("SHOW TABLES FROM sbtest").trim(), "");
    assert_eq!(db2.sql("SHOW TABLES FROM sbtest").trim(), "");
}

/// Runs `scenario run` on `text`; expects exit 2 and one stderr line naming the line and
/// the field.
fn refused(text: &str, line: usize, field: &str, what: &str) {
    let dir = Scratch::new(&format!("bad-scenario-{line}-{}", field.replace('.', "_")));
    let file = dir.write("bad.toml", text);
    let out = fleetbench(&["scenario", "run", file.to_str().unwrap()]);
    let (at, named) = (format!("line {line}:"), format!("field '{field}'"));
    expect_usage_error(&out, "the scenario file", &[&at, &named, what]);
    assert!(String::from_utf8_lossy(&out.stdout).is_empty());
}

#[test]
fn scenario_help_is_the_scenario_commands_own() {
    let global = fleetbench(&["--help"]);
    let global = String::from_utf8_lossy(&global.stdout).into_owned();
    for args in [
        &["scenario", "--help"][..],
        &["scenario", "help"],
        &["scenario", "run", "s.toml", "--help"],
    ] {
        let out = fleetbench(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert_ne!(help, global, "{args:?}");
        for needle in [
            "Usage: fleetbench scenario run|cleanup FILE [options]",
            "[[scenario]]",
            "[targets]",
            "--only NAME",
            "--repeat N",
            "--json FILE",
            "--csv FILE",
            "--html FILE",
            "--agents LIST",
            "--token-file FILE",
            "docs/sweeps-and-scenarios.md",
        ] {
            assert!(help.contains(needle), "{needle} in {args:?}:\n{help}");
        }
    }
}

#[test]
fn malformed_scenario_files_name_line_and_field() {
    let good = r#"test = "oltp_read_write"
threads = [4, 8]
[targets]
master = "mysql://sbtest:pw@127.0.0.1:1/sbtest"
[[scenario]]
name = "direct"
targets = ["master"]
"#;
    // (what the good file has, what it gets instead, line, field, error)
    for (from, to, line, field, what) in [
        (
            "threads = [4, 8]",
            "threads = [4, 8]\nthredas = 3",
            3,
            "thredas",
            "unknown field",
        ),
        (
            "threads = [4, 8]",
            "threads = \"many\"",
            2,
            "threads",
            "invalid type",
        ),
        (
            "targets = [\"master\"]",
            "targets = [\"slave\"]",
            7,
            "targets",
            "unknown target 'slave'",
        ),
        (
            "targets = [\"master\"]\n",
            "",
            5,
            "targets",
            "missing field `targets`",
        ),
    ] {
        refused(&good.replace(from, to), line, field, what);
    }
    refused(
        &format!("{good}[scenario.options]\ntable-size = \"big\"\n"),
        9,
        "options.table-size",
        "--table-size",
    );
    // A typo gets "did you mean", as the file spells it: an option and a top-level key.
    refused(
        &format!("{good}[options]\ntabels = 2\n"),
        9,
        "options.tabels",
        "(did you mean 'tables'?)",
    );
    refused(
        &good.replace("threads = [4, 8]", "threads = [4, 8]\ncooldwn = 3"),
        3,
        "cooldwn",
        "(did you mean 'cooldown'?)",
    );
    // --only must name a scenario of the file.
    let dir = Scratch::new("only");
    let file = dir.write("s.toml", good);
    let out = fleetbench(&["scenario", "run", file.to_str().unwrap(), "--only=nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such scenario"));
}

#[test]
fn repeated_scenarios_alternate_and_keep_every_measurement() {
    let db = MariaDb::start();
    let dir = Scratch::new("scenario-repeat");
    let toml = format!(
        r#"
test = "oltp_point_select"
threads = [1]
time = 1
[options]
tables = 1
table-size = 200
[targets]
db = "{}"
[[scenario]]
name = "text"
targets = ["db"]
options = {{ db-ps-mode = "disable" }}
[[scenario]]
name = "prepared"
targets = ["db"]
"#,
        db.url()
    );
    let (stdout, doc) =
        dir.run_scenarios("scenarios", &toml, &["--repeat=2", "--tag=study=ps-mode"]);
    // One pass over both scenarios per measurement, the second one backwards.
    let passes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("=== scenario "))
        .collect();
    assert_eq!(passes.len(), 4, "{stdout}");
    for (line, (name, rep)) in
        passes
            .iter()
            .zip([("text", 1), ("prepared", 1), ("prepared", 2), ("text", 2)])
    {
        assert!(
            line.starts_with(&format!("=== scenario {name}:"))
                && line.ends_with(&format!("measurement {rep}/2")),
            "{line}"
        );
    }
    assert_eq!(doc["repeat"], 2);
    for sc in doc["scenarios"].as_array().unwrap() {
        let reps: Vec<u64> = sc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["repeat"].as_u64().unwrap())
            .collect();
        assert_eq!(reps, [1, 2], "{sc}");
        // Each measurement's metadata: the command line's tags and the command line, as
        // a single run's.
        for step in sc["steps"].as_array().unwrap() {
            let meta = &step["result"]["meta"];
            assert_eq!(meta["tags"]["study"], "ps-mode", "{meta}");
            let cmd = meta["command_line"].as_str().unwrap();
            assert!(
                cmd.contains("scenario run") && cmd.contains("--repeat=2"),
                "{cmd}"
            );
            assert!(!meta["run_id"].as_str().unwrap().is_empty());
        }
    }
    // Each measurement prepared and cleaned up after itself: nothing is left.
    assert_eq!(db.sql("SHOW TABLES FROM sbtest").trim(), "");
}

#[test]
fn scenario_cleanup_drops_the_chosen_scenarios_tables() {
    let common = ["oltp_read_only", "--tables=2", "--table-size=100"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("scenario-cleanup");
    let toml = format!(
        r#"
test = "oltp_read_only"
threads = [1]
time = 1
[options]
tables = 2
table-size = 100
[targets]
db = "{}"
[[scenario]]
name = "a"
targets = ["db"]
[[scenario]]
name = "keep"
targets = ["db"]
prepare = false
"#,
        db.url()
    );
    let file = dir.write("s.toml", &toml);
    let file = file.to_str().unwrap();
    let tables = || db.sql("SHOW TABLES FROM sbtest").trim().to_string();
    assert_ne!(tables(), "");
    // The tables are there: prepare refuses, and says which command drops them.
    let out = fleetbench(&["scenario", "run", file, "--only=a"]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "(run `fleetbench scenario cleanup {file} --only a` first"
        )) && !err.contains("run cleanup first"),
        "{err}"
    );
    // --only a scenario that does not prepare its tables: nothing is dropped.
    let kept = fleetbench_ok(&["scenario", "cleanup", file, "--only=keep"]);
    assert!(kept.contains("[keep] prepare = false"), "{kept}");
    assert_ne!(tables(), "");
    // All scenarios: scenario a's cleanup drops the tables.
    let out = fleetbench_ok(&["scenario", "cleanup", file]);
    assert!(out.contains("[a] cleanup"), "{out}");
    assert_eq!(tables(), "");
    // The advice names a command that exists.
    let out = fleetbench(&["scenario", "nosuch", file]);
    expect_usage_error(&out, "scenario nosuch", &["expected run or cleanup"]);
}
