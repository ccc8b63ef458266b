//! A result's meta end to end (private MariaDB): run id, times, `--tag` labels and the
//! command line in the JSON and the reports, the database password nowhere, and `compare`
//! naming the tags that differ.

use fleetbench_tests::mariadb::{MariaDb, PASSWORD};
use fleetbench_tests::{Scratch, fleetbench, fleetbench_ok, json};

/// `2026-12-01T23:04:05Z` as seconds since the epoch, roughly (for ordering only).
fn seconds(rfc3339: &str) -> u64 {
    let b = rfc3339.as_bytes();
    assert!(
        rfc3339.len() == 20 && b[4] == b'-' && b[10] == b'T' && b[19] == b'Z',
        "{rfc3339}"
    );
    let n = |r: std::ops::Range<usize>| rfc3339[r].parse::<u64>().unwrap();
    ((((n(0..4) * 12 + n(5..7)) * 31 + n(8..10)) * 24 + n(11..13)) * 60 + n(14..16)) * 60
        + n(17..19)
}

#[test]
fn results_carry_their_tags_times_and_command_line_but_no_password() {
    let common = ["oltp_point_select", "--tables=1", "--table-size=200"];
    let db = MariaDb::prepared(&common);
    let dir = Scratch::new("meta");
    let run = |pool: &str, name: &str| {
        let out_json = dir.path(&format!("{name}.json"));
        let html = dir.path(&format!("{name}.html"));
        let args = db.args(
            &[
                &common[..],
                &[
                    "--time=1",
                    "--tag",
                    &format!("pool={pool}"),
                    "--tag=note=first try",
                    &format!("--json={}", out_json.display()),
                    &format!("--html={}", html.display()),
                    "run",
                ],
            ]
            .concat(),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fleetbench(&args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(0), "{text}");
        (out_json, html, text)
    };
    let (a, a_html, text) = run("8G", "a");
    let (b, _, _) = run("16G", "b");

    let doc = json(&a);
    let meta = &doc["meta"];
    assert_eq!(meta["tags"]["pool"], "8G", "{meta}");
    assert_eq!(meta["tags"]["note"], "first try", "{meta}");
    let started = seconds(meta["started_at"].as_str().unwrap());
    let ended = seconds(meta["ended_at"].as_str().unwrap());
    assert!(started <= ended && ended - started <= 60, "{meta}");
    let commit = meta["fleetbench_commit"].as_str().unwrap();
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
    let line = meta["command_line"].as_str().unwrap();
    assert!(
        line.contains("oltp_point_select --tables=1")
            && line.contains("--mysql-password=***")
            && line.contains("'--tag=note=first try'"),
        "{line}"
    );
    // The run's id and tags close fleetbench's report; `report` shows them again.
    let run_id = meta["run_id"].as_str().unwrap();
    assert!(
        text.contains(&format!("\nRun {run_id}: "))
            && text.contains("; tags: pool=8G, note=first try\n"),
        "{text}"
    );
    let again = fleetbench_ok(&["report", a.to_str().unwrap()]);
    assert!(again.contains(&format!("Run {run_id}: ")), "{again}");

    // The password is in no output.
    for (what, content) in [
        ("stdout and stderr", text),
        ("the JSON", std::fs::read_to_string(&a).unwrap()),
        ("the HTML", std::fs::read_to_string(&a_html).unwrap()),
    ] {
        assert!(!content.contains(PASSWORD), "the password is in {what}");
    }

    // compare names the tag that differs, not the ones that do not.
    let cmp = fleetbench_ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(cmp.contains("    tag pool: 8G / 16G\n"), "{cmp}");
    assert!(!cmp.contains("tag note"), "{cmp}");

    // A tag that is not key=value is a usage error, before anything runs.
    let bad = db.args(&[&common[..], &["--tag", "pool", "run"]].concat());
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let out = fleetbench(&bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--tag: 'pool' is not key=value"), "{err}");
    db.fleetbench_ok(&[&common, &["cleanup"]]);
}

#[test]
fn results_record_each_server_and_compare_names_the_settings_that_differ() {
    let dir = Scratch::new("meta-server");
    let small = MariaDb::start_with(&["--innodb-buffer-pool-size=32M"]);
    let large = MariaDb::start_with(&["--innodb-buffer-pool-size=64M"]);
    let common = ["oltp_point_select", "--tables=1", "--table-size=100"];
    let mut docs = Vec::new();
    for (db, name, extra) in [
        (&small, "small", None),
        (&large, "large", None),
        (
            &large,
            "chosen",
            Some("--server-vars=max_connections,sync_binlog"),
        ),
    ] {
        db.fleetbench_ok(&[&common, &["prepare"]]);
        let out_json = dir.path(&format!("{name}.json"));
        let extra: &[&str] = extra.as_slice();
        let (out, doc) = db.run_json(&[&common, extra, &["--time=1"]], &out_json);
        let conn = &doc["totals"]["targets"][0]["connections"][0];
        // As the server itself says.
        let version = db.sql("SELECT VERSION()").trim().to_string();
        assert_eq!(conn["server_version"], version.as_str(), "{conn}");
        assert!(
            out.contains(&format!(", server {version}")),
            "the connections line names the server: {out}"
        );
        let vars = conn["server_vars"].as_object().unwrap();
        if !extra.is_empty() {
            let keys: Vec<&str> = vars.keys().map(String::as_str).collect();
            assert_eq!(keys, ["max_connections", "sync_binlog"], "{conn}");
            assert_eq!(
                vars["max_connections"],
                db.sql("SELECT @@max_connections").trim()
            );
        } else {
            assert_eq!(
                vars["innodb_buffer_pool_size"],
                db.sql("SELECT @@innodb_buffer_pool_size").trim(),
                "{conn}"
            );
            // The data directory first (the names in order), then the tuning settings.
            assert_eq!(vars["datadir"], db.sql("SELECT @@datadir").trim(), "{conn}");
            assert!(
                out.contains("server variables: datadir=")
                    && out.contains(", innodb_buffer_pool_size="),
                "{out}"
            );
        }
        db.fleetbench_ok(&[&common, &["cleanup"]]);
        docs.push(out_json);
    }
    let cmp = fleetbench_ok(&[
        "compare",
        docs[0].to_str().unwrap(),
        docs[1].to_str().unwrap(),
    ]);
    assert!(
        cmp.contains("    server innodb_buffer_pool_size: 33554432 / 67108864\n"),
        "{cmp}"
    );
    assert!(!cmp.contains("max_connections"), "{cmp}");

    // Names that are not variable names are refused before anything runs.
    let bad = small.args(&[&common[..], &["--server-vars=a;b", "run"]].concat());
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let out = fleetbench(&bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--server-vars"));
}
