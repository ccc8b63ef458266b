//! What the text report and the messages say beyond sysbench's own lines (issue 60), with
//! real runs: the embedded agent is named `embedded` in the report and in an error, not
//! `127.0.0.1:<port>`; the ignored errors are listed by code after sysbench's lines, which
//! keep their layout; and where stderr is a log (a pipe here), long table jobs and runs
//! without interval lines print a plain progress line every period
//! (`FLEETBENCH_PROGRESS_EVERY_S`, 10 s by default).
//!
//! Run alone: build the binaries, then `cargo test -p fleetbench-tests --test report_words`.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, fleetbench_env, run_json, words};

/// Runs the coordinator with `env`; asserts it exited 0; its stdout and stderr.
fn ok_env(args: &[String], env: &[(&str, &str)]) -> (String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = fleetbench_env(&refs, env);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{refs:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

/// The numbers `done/total` of each progress line of `what` (`prepare: 12,000/40,000 rows
/// ...`) in `stderr`.
fn job_lines(stderr: &str, what: &str, unit: &str) -> Vec<(u64, u64)> {
    let num = |s: &str| s.replace(',', "").parse::<u64>().unwrap();
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("{what}: ")))
        .filter(|l| l.contains(&format!(" {unit} (")))
        .map(|l| {
            let (done, rest) = l.split_once('/').unwrap();
            (num(done), num(rest.split(' ').next().unwrap()))
        })
        .collect()
}

#[test]
fn the_embedded_agent_is_named_embedded_in_the_report_and_in_errors() {
    let db = MariaDb::start();
    let dir = Scratch::new("words-embedded");
    let (text, doc) = run_json(
        &words("cpu --time=1 --cpu-max-prime=2000"),
        &dir.path("cpu.json"),
    );
    // The JSON keeps the address and adds the name.
    let agent = &doc["agents"][0];
    assert_eq!(agent["name"], "embedded", "{agent}");
    assert!(agent["addr"].as_str().unwrap().starts_with("127.0.0.1:"));
    assert!(
        text.contains("Agents: 1: embedded (1 thread)"),
        "the header names it:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("    embedded ") && l.ends_with("ok")),
        "its per-agent row:\n{text}"
    );
    assert!(!text.contains("127.0.0.1:"), "no loopback port in\n{text}");

    // An error on the embedded agent names it so: the run of a table that is not there.
    let out = fleetbench_env(
        &db.args(&["oltp_point_select", "--tables=1", "--time=1", "run"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("agent embedded refused the run: table sbtest1 does not exist"),
        "{err}"
    );
    // The database's address, but not the agent's.
    assert!(!err.contains("agent 127.0.0.1:"), "{err}");
}

/// 32 threads on 10 rows collide (deadlocks, lock wait timeouts): sysbench's lines stay as
/// they are, and one line after them lists the codes as the JSON counts them.
#[test]
fn ignored_errors_are_listed_by_code_after_sysbenchs_lines() {
    let db = MariaDb::start();
    db.sql("SET GLOBAL innodb_lock_wait_timeout=1");
    let data = ["oltp_read_write", "--table-size=10", "--range-size=5"];
    db.fleetbench_ok(&[&data, &["prepare"]]);
    let dir = Scratch::new("words-errors");
    let json = dir.path("r.json");
    let (text, doc) = db.run_json(&[&data, &["--threads=32", "--time=4"]], &json);
    let sql = &doc["totals"]["sql"];
    let ignored = sql["ignored_errors"].as_u64().unwrap();
    assert!(ignored > 0, "32 threads on 10 rows must collide: {sql}");
    // sysbench's line, unchanged.
    let sysbench = format!(
        "    ignored errors:                      {ignored:<6} ({:.2} per sec.)",
        ignored as f64 / doc["totals"]["time_s"].as_f64().unwrap()
    );
    assert!(
        text.lines().any(|l| l == sysbench),
        "{sysbench:?} in\n{text}"
    );
    // fleetbench's, once, after Threads fairness, naming every code with its count.
    let line = text
        .lines()
        .find(|l| l.starts_with("Ignored errors by code: "))
        .unwrap_or_else(|| panic!("no line of codes in\n{text}"));
    assert_eq!(text.matches("Ignored errors by code: ").count(), 1);
    assert!(text.find(line).unwrap() > text.find("Threads fairness:").unwrap());
    let codes = sql["errors_by_code"].as_object().unwrap();
    assert!(!codes.is_empty(), "{sql}");
    for (code, n) in codes {
        let n = n.as_u64().unwrap();
        let meaning = match code.as_str() {
            "1213" => " (deadlock)",
            "1205" => " (lock wait timeout)",
            "1020" => " (record changed since last read)",
            _ => "",
        };
        assert!(
            line.contains(&format!("{code}{meaning} x {n}")),
            "{code} x {n} in {line}"
        );
    }
    for w in ["transactions", "queries", "tps", "qps"] {
        assert!(!line.to_lowercase().contains(w), "{w} in {line}");
    }
    // `report FILE` says it again, the same.
    let again = fleetbench_tests::fleetbench_ok(&["report", json.to_str().unwrap()]);
    assert!(again.lines().any(|l| l == line), "{line} in\n{again}");
}

#[test]
fn a_load_logged_to_a_file_says_how_far_it_is() {
    let db = MariaDb::start();
    let every = [("FLEETBENCH_PROGRESS_EVERY_S", "1")];
    // About 3 s of loading on this machine: 2 tables of 150,000 rows.
    let data = db.args(&["oltp_read_only", "--tables=2", "--table-size=150000"]);
    let with = |more: &[&str]| -> Vec<String> {
        data.iter()
            .cloned()
            .chain(more.iter().map(|s| s.to_string()))
            .collect()
    };
    let started = std::time::Instant::now();
    let (_, stderr) = ok_env(&with(&["--threads=2", "prepare"]), &every);
    let took = started.elapsed();
    let lines = job_lines(&stderr, "prepare", "rows");
    assert!(took.as_secs_f64() > 2.0, "the load was too short: {took:?}");
    assert!(!lines.is_empty(), "no progress line in\n{stderr}");
    // About one a second while it loaded; each of the whole 300,000 rows, growing.
    assert!(
        (lines.len() as f64) <= took.as_secs_f64() + 1.0,
        "{lines:?} in {took:?}"
    );
    assert!(
        lines.iter().all(|&(_, total)| total == 300_000),
        "{lines:?}"
    );
    assert!(lines.windows(2).all(|w| w[0].0 <= w[1].0), "{lines:?}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("prepare: ") && l.contains(" rows/s") && l.contains(" after ")),
        "{stderr}"
    );

    // A run without interval lines: a line a period, none at its end.
    let (stdout, stderr) = ok_env(&with(&["--threads=2", "--time=3", "run"]), &every);
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert_eq!(progress.len(), 2, "{stderr}");
    assert!(progress[0].starts_with("progress: 1s of 3s, "), "{stderr}");
    assert!(progress[1].starts_with("progress: 2s of 3s, "), "{stderr}");
    assert!(
        progress.iter().all(|l| l.ends_with(" events/s")),
        "{stderr}"
    );
    assert!(!stdout.contains("progress: "), "stderr only:\n{stdout}");
    // With interval lines (they are the progress) or at the default period: none.
    let (_, stderr) = ok_env(
        &with(&["--threads=2", "--time=3", "--report-interval=1", "run"]),
        &every,
    );
    assert!(!stderr.contains("progress: "), "{stderr}");
    let (_, stderr) = ok_env(&with(&["--threads=2", "--time=3", "run"]), &[]);
    assert!(!stderr.contains("progress: "), "{stderr}");
    // Cleanup is quick: no line before its first period.
    let (_, stderr) = ok_env(&with(&["cleanup"]), &[]);
    assert!(
        job_lines(&stderr, "cleanup", "tables").is_empty(),
        "{stderr}"
    );
}

#[test]
fn a_tpcc_load_logged_to_a_file_says_how_far_it_is() {
    let db = MariaDb::start();
    db.sql("CREATE DATABASE tpcc");
    let args: Vec<String> = [
        "tpcc",
        "-h127.0.0.1",
        &format!("-P{}", db.port()),
        "-dtpcc",
        "-usbtest",
        "-psbtest-pw",
        "-w1",
        "prepare",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (stdout, stderr) = ok_env(&args, &[("FLEETBENCH_PROGRESS_EVERY_S", "1")]);
    let lines = job_lines(&stderr, "load", "rows");
    let took: f64 = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("loaded in ")?
                .strip_suffix('s')?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no load time in\n{stdout}"));
    assert!(took > 2.0, "the load was too short: {took}s\n{stdout}");
    assert!(!lines.is_empty(), "no load progress in\n{stderr}");
    let total = lines[0].1;
    assert!(total > 100_000, "{lines:?}");
    assert!(
        lines.iter().all(|&(d, t)| t == total && d <= t),
        "{lines:?}"
    );
}
