//! `fleetbench pgbench -f`: pgbench's own kinds of custom scripts over two real agents on
//! a private PostgreSQL, each run's transaction count checked against what its script
//! did to the tables: the TPC-B-like script written out (balances agree), a `\gset`
//! chain with a zipfian draw and `permute`, a pipeline, `\if` over `-D`, weights beside
//! a built-in script, `-C` (a connection per transaction, counted by the server); and a
//! script's mistakes, each one line naming the file, line and column before anything
//! starts, and a run-time error ending its client with pgbench's line.
//!
//! They need PostgreSQL (scripts/test.sh installs it) and fail, rather than skip, without it.

use fleetbench_tests::{AgentProc, Postgres, Scratch, fleetbench_env};
use regex::Regex;

/// Runs `fleetbench pgbench ARGS... sbtest` against `pg` (none: no server options);
/// (exit code, stdout, stderr).
fn pgbench(pg: Option<&Postgres>, args: &[&str]) -> (Option<i32>, String, String) {
    let mut line: Vec<String> = vec!["pgbench".into()];
    line.extend(args.iter().map(|s| s.to_string()));
    if let Some(pg) = pg {
        let port = pg.port().to_string();
        line.extend(["-h", "127.0.0.1", "-p", &port, "-U", "sbtest", "sbtest"].map(String::from));
    }
    let refs: Vec<&str> = line.iter().map(String::as_str).collect();
    let out = fleetbench_env(
        &refs,
        &[("PGPASSWORD", "sbpass"), ("PGHOST", ""), ("PGDATABASE", "")],
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(pg: &Postgres, args: &[&str]) -> String {
    let (code, out, err) = pgbench(Some(pg), args);
    assert_eq!(
        code,
        Some(0),
        "pgbench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
    );
    out
}

/// The first capture of `re` on a line of `text`, as a number.
fn figure(text: &str, re: &str) -> u64 {
    let re = Regex::new(re).unwrap();
    text.lines()
        .find_map(|l| re.captures(l))
        .unwrap_or_else(|| panic!("no line matches {re} in:\n{text}"))[1]
        .parse()
        .unwrap()
}

fn processed(out: &str) -> u64 {
    figure(out, r"^number of transactions actually processed: (\d+)")
}

fn num(pg: &Postgres, sql: &str) -> i64 {
    let v = pg.sql(sql);
    v.trim().parse().unwrap_or_else(|_| panic!("{sql}: {v:?}"))
}

const TPCB: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

/// A zipfian key, scattered by permute, read with `\gset`; the next command uses what
/// it read, and `\aset` keeps both statements of a compound.
const GSET: &str = r"\set r random_zipfian(1, 100000 * :scale, 1.5)
\set k 1 + permute(:r - 1, 100000 * :scale)
SELECT aid, abalance FROM pgbench_accounts
  WHERE aid = :k \gset acc_
SELECT 4 AS four \; SELECT :acc_aid + 1 AS next \aset
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (:client_id, :four, :acc_aid, :next, now());
";

const PIPELINE: &str = r"\set aid random(1, 100000 * :scale)
\startpipeline
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, :aid, 1, now());
\endpipeline
";

const BRANCHES: &str = r"\if :mode = 1
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, 0, 1, now());
\elif :mode = 2 and :client_id >= 0
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, 0, 2, now());
\else
SELECT 1/0;
\endif
\sleep 1 ms
";

#[test]
fn custom_scripts_over_two_agents_do_what_their_counts_say() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    let tmp = Scratch::new("pgbench-scripts");
    ok(&pg, &[&agents, "-i", "-s", "1", "-q"]);
    let file = |name: &str, text: &str| tmp.write(name, text).to_string_lossy().into_owned();
    let history = || num(&pg, "SELECT count(*) FROM pgbench_history");

    // The TPC-B-like script written out, prepared: every transaction's delta lands in
    // the four tables alike.
    let tpcb = file("tpcb.sql", TPCB);
    let out = ok(
        &pg,
        &[
            &agents, "-n", "-M", "prepared", "-c", "4", "-j", "2", "-t", "25", "-r", "-f", &tpcb,
        ],
    );
    assert!(
        out.contains(&format!("transaction type: {tpcb}\n")),
        "{out}"
    );
    assert_eq!(processed(&out), 100, "{out}");
    assert_eq!(history(), 100);
    let sums = pg.sql("SELECT (SELECT sum(delta) FROM pgbench_history), (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)");
    let s: Vec<&str> = sums.split('|').collect();
    assert!(s.iter().all(|x| *x == s[0]), "{sums}");
    assert!(
        out.contains("  \\set delta random(-5000, 5000)\n"),
        "-r lists the file's commands:\n{out}"
    );
    assert!(out.contains("  END;\n"), "{out}");

    // A \gset chain: each row's delta is the aid it read plus one; the zipfian draw
    // favours one key (P(first) = 1/zeta(1.5) = 38%), which permute moved elsewhere.
    pg.sql("TRUNCATE pgbench_history");
    let gset = file("gset.sql", GSET);
    for mode in ["simple", "extended"] {
        if mode == "extended" {
            // \; compounds need the simple protocol: refused in one line.
            let (code, _, err) = pgbench(
                Some(&pg),
                &[&agents, "-n", "-M", mode, "-t", "1", "-f", &gset],
            );
            assert_eq!((code, err.lines().count()), (Some(2), 1), "{err}");
            assert!(err.contains("gset.sql:5:1: several statements"), "{err}");
            continue;
        }
        let out = ok(
            &pg,
            &[
                &agents, "-n", "-M", mode, "-c", "4", "-t", "50", "-f", &gset,
            ],
        );
        assert_eq!(processed(&out), 200, "{out}");
    }
    assert_eq!(history(), 200);
    assert_eq!(
        num(
            &pg,
            "SELECT count(*) FROM pgbench_history WHERE delta <> aid + 1 OR bid <> 4"
        ),
        0
    );
    assert_eq!(
        num(&pg, "SELECT count(DISTINCT tid) FROM pgbench_history"),
        4,
        "client_id over the agents"
    );
    let top = num(
        &pg,
        "SELECT max(n) FROM (SELECT count(*) AS n FROM pgbench_history GROUP BY aid) c",
    );
    assert!(top > 50, "the most drawn key has {top} of 200 rows");
    assert_eq!(
        num(
            &pg,
            "SELECT count(*) FROM pgbench_history WHERE aid = 1 GROUP BY aid HAVING count(*) > 50 UNION ALL SELECT 0 LIMIT 1"
        ),
        0,
        "permute moved the hot key"
    );

    // A pipeline (extended and prepared): both statements of each transaction landed.
    pg.sql("TRUNCATE pgbench_history");
    let before = num(&pg, "SELECT sum(abalance) FROM pgbench_accounts");
    let pipe = file("pipe.sql", PIPELINE);
    let mut done = 0;
    for mode in ["extended", "prepared"] {
        let out = ok(
            &pg,
            &[&agents, "-n", "-M", mode, "-c", "2", "-T", "2", "-f", &pipe],
        );
        done += processed(&out) as i64;
    }
    assert!(done > 0);
    assert_eq!(history(), done);
    assert_eq!(
        num(&pg, "SELECT sum(abalance) FROM pgbench_accounts") - before,
        done
    );

    // \if over a -D variable, and weights beside a built-in script.
    pg.sql("TRUNCATE pgbench_history");
    let branches = file("branches.sql", BRANCHES);
    let out = ok(
        &pg,
        &[
            &agents,
            "-n",
            "-c",
            "2",
            "-t",
            "40",
            "-D",
            "mode=2",
            "-f",
            &format!("{branches}@3"),
            "-b",
            "select-only@1",
        ],
    );
    let first = figure(&out, r"^ - (\d+) transactions \(");
    assert!(
        out.contains(&format!(
            "SQL script 1: {branches}\n - weight: 3 (targets 75.0% of total)"
        )),
        "{out}"
    );
    assert!(
        out.contains("SQL script 2: <builtin: select only>"),
        "{out}"
    );
    assert_eq!(history(), first as i64);
    assert_eq!(
        num(&pg, "SELECT count(*) FROM pgbench_history WHERE delta <> 2"),
        0
    );
    assert!(first > 40 && first < 80, "{first} of 80 with weight 3 of 4");

    // -C: every transaction a connection of its own, as the server counts them.
    let sessions = || {
        num(
            &pg,
            "SELECT sessions FROM pg_stat_database WHERE datname = 'sbtest'",
        )
    };
    let s0 = sessions();
    let out = ok(
        &pg,
        &[
            &agents, "-n", "-C", "-c", "2", "-t", "10", "-f", &branches, "-D", "mode=1",
        ],
    );
    assert_eq!(processed(&out), 20);
    assert!(
        sessions() - s0 >= 20,
        "{} sessions for 20 transactions",
        sessions() - s0
    );
    assert!(
        Regex::new(r"(?m)^average connection time = \d+\.\d{3} ms$")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
    assert!(out.contains(" (including reconnection times)\n"), "{out}");
    assert!(!out.contains("initial connection time"), "{out}");
}

#[test]
fn script_mistakes_are_one_line_before_anything_starts() {
    let tmp = Scratch::new("pgbench-script-errors");
    let cases = [
        (
            "SELECT 1;\n\\set x random(1,\n",
            "bad.sql:2:17: syntax error",
        ),
        (
            "\\set x 1\n\\shell rm -rf /\n",
            "bad.sql:2:1: \\shell is not supported",
        ),
        (
            "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
            "bad.sql:1:1: pipeline mode requires the extended query protocol",
        ),
        (
            "\\if true\nSELECT 1;\n",
            "bad.sql:3:1: end of script reached without closing an \\if",
        ),
        (
            "SELECT 'unterminated;\n",
            "bad.sql:1:8: unterminated quoted string",
        ),
        (
            "\\set x nosuch(1)\n",
            "bad.sql:1:8: unexpected word \"nosuch\"",
        ),
    ];
    for (text, needle) in cases {
        let f = tmp.write("bad.sql", text).to_string_lossy().into_owned();
        // No server is named: a script is refused before any connection is tried.
        let (code, out, err) = pgbench(
            None,
            &[
                "-n",
                "-t",
                "1",
                "-f",
                &f,
                "-h",
                "127.0.0.1",
                "-p",
                "1",
                "-U",
                "nobody",
            ],
        );
        assert_eq!(code, Some(2), "{text}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{text}: {err}");
        assert!(
            err.starts_with("fleetbench: error: pgbench: ") && err.contains(needle),
            "{text}: {err}"
        );
    }
    for (args, needle) in [
        (
            &["-U", "x", "-f", "/nonexistent/my.sql"][..],
            "could not open file \"/nonexistent/my.sql\"",
        ),
        (&["-D", "1x=3"][..], "invalid variable name"),
        (&["-D", "novalue"][..], "invalid variable definition"),
    ] {
        let (code, _, err) = pgbench(None, args);
        assert_eq!((code, err.lines().count()), (Some(2), 1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_run_time_error_ends_its_client_with_pgbenchs_line() {
    let pg = Postgres::start();
    let tmp = Scratch::new("pgbench-script-abort");
    ok(&pg, &["-i", "-s", "1", "-q"]);
    let f = tmp
        .write("div.sql", "\\set x 0\nSELECT 1;\nSELECT 1 / :x;\n")
        .to_string_lossy()
        .into_owned();
    let (code, _, err) = pgbench(Some(&pg), &["-n", "-c", "1", "-t", "3", "-f", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("pgbench: error: client 0 script 0 aborted in command 2 query 0: ERROR:  division by zero"), "{err}");
    assert!(
        err.contains("Run was aborted; the above results are incomplete."),
        "{err}"
    );
    let f = tmp
        .write("undef.sql", "\\set y :nope + 1\n")
        .to_string_lossy()
        .into_owned();
    let (code, _, err) = pgbench(Some(&pg), &["-n", "-t", "1", "-f", &f]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("aborted in command 0 query 0: undefined variable \"nope\""),
        "{err}"
    );
}

/// The log files `prefix.PID[.N]` in `dir`, sorted by name.
fn log_files(dir: &std::path::Path, prefix: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.starts_with(&format!("{prefix}.")).then(|| {
                (
                    name.clone(),
                    std::fs::read_to_string(dir.join(&name)).unwrap(),
                )
            })
        })
        .collect();
    out.sort();
    out
}

#[test]
fn transaction_logs_are_pgbenchs_one_file_per_agent() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    let tmp = Scratch::new("pgbench-logs");
    ok(&pg, &[&agents, "-i", "-s", "1", "-q"]);
    let dir = tmp.0.clone();
    let prefix = dir.join("tx").to_string_lossy().into_owned();
    let out = ok(
        &pg,
        &[
            &agents,
            "-n",
            "-S",
            "-c",
            "4",
            "-t",
            "30",
            "-l",
            "--log-prefix",
            &prefix,
        ],
    );
    assert_eq!(processed(&out), 120);
    let files = log_files(&dir, "tx");
    assert_eq!(files.len(), 2, "{files:?}");
    let pid = files[0].0.strip_prefix("tx.").unwrap().to_string();
    assert!(pid.bytes().all(|b| b.is_ascii_digit()), "{}", files[0].0);
    assert_eq!(files[1].0, format!("tx.{pid}.1"));
    // client_id transaction_no time script_no time_epoch time_us, each client's
    // transactions numbered 1..=30, the clients split over the two files.
    let line = Regex::new(r"^(\d+) (\d+) (\d+) 0 (\d{10}) (\d{1,6})$").unwrap();
    let mut per_client = std::collections::BTreeMap::<u64, Vec<u64>>::new();
    for (name, text) in &files {
        for l in text.lines() {
            let c = line.captures(l).unwrap_or_else(|| panic!("{name}: {l:?}"));
            per_client
                .entry(c[1].parse().unwrap())
                .or_default()
                .push(c[2].parse().unwrap());
        }
    }
    assert_eq!(
        per_client.keys().copied().collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    for (c, mut numbers) in per_client {
        numbers.sort();
        assert_eq!(numbers, (1..=30).collect::<Vec<u64>>(), "client {c}");
    }

    // Aggregated, with the rate's lag and the retries: 15 fields a line, the counts of
    // the closed windows within the run's.
    let prefix = dir.join("agg").to_string_lossy().into_owned();
    let out = ok(
        &pg,
        &[
            &agents,
            "-n",
            "-S",
            "-c",
            "2",
            "-T",
            "4",
            "-R",
            "200",
            "--max-tries",
            "2",
            "-l",
            "--aggregate-interval",
            "1",
            "--log-prefix",
            &prefix,
        ],
    );
    let done = processed(&out);
    let files = log_files(&dir, "agg");
    assert_eq!(files.len(), 2);
    let mut logged = 0;
    for (name, text) in &files {
        assert!(text.lines().count() >= 2, "{name}: {text}");
        for l in text.lines() {
            let f: Vec<u64> = l
                .split(' ')
                .map(|x| x.parse().unwrap_or_else(|_| panic!("{l}")))
                .collect();
            assert_eq!(f.len(), 15, "{name}: {l}");
            let (n, sum, min, max) = (f[1], f[2], f[4], f[5]);
            if n > 0 {
                assert!(min <= max && sum >= n * min && sum <= n * max, "{l}");
                assert!(f[6] > 0 || f[9] == 0, "lag sums with -R: {l}");
            }
            logged += n;
        }
    }
    assert!(logged > done / 2 && logged <= done, "{logged} of {done}");

    // Sampling keeps about its share.
    let prefix = dir.join("smp").to_string_lossy().into_owned();
    let out = ok(
        &pg,
        &[
            &agents,
            "-n",
            "-S",
            "-c",
            "2",
            "-t",
            "500",
            "-l",
            "--sampling-rate",
            "0.2",
            "--log-prefix",
            &prefix,
        ],
    );
    assert_eq!(processed(&out), 1000);
    let kept: usize = log_files(&dir, "smp")
        .iter()
        .map(|(_, t)| t.lines().count())
        .sum();
    assert!((120..=280).contains(&kept), "{kept} of 1000 at 0.2");

    // Their mistakes are one line.
    for (args, needle) in [
        (
            &["--sampling-rate", "0.5"][..],
            "allowed only when logging transactions",
        ),
        (&["-l", "--sampling-rate", "2"][..], "invalid sampling rate"),
        (
            &["-l", "--sampling-rate", "0.5", "--aggregate-interval", "1"][..],
            "cannot be used at the same time",
        ),
        (
            &["-l", "-T", "3", "--aggregate-interval", "2"][..],
            "must be a multiple",
        ),
        (
            &["-l", "--log-prefix", "/nonexistent/dir/x"][..],
            "could not open log file /nonexistent/dir/x.",
        ),
    ] {
        let (code, _, err) = pgbench(Some(&pg), &[&["-n", "-S"][..], args].concat());
        assert_eq!((code, err.lines().count()), (Some(2), 1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
