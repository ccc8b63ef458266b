//! `fleetbench pgbench` end to end: a private PostgreSQL, real agent processes. `-i` loads
//! pgbench's tables over two agents; a TPC-B-like run over them keeps the balances
//! consistent; the report reads with the regexes one would use on pgbench's own output,
//! and its count of transactions is the server's; custom scripts and bad options are
//! refused with one line and exit code 2.
//!
//! They need PostgreSQL (scripts/test.sh installs it) and fail, rather than skip, without it.

use fleetbench_tests::{AgentProc, Postgres, fleetbench_env};
use regex::Regex;

/// The server options of a `fleetbench pgbench` command line for `pg`.
fn server(pg: &Postgres) -> Vec<String> {
    vec![
        "-h".into(),
        "127.0.0.1".into(),
        "-p".into(),
        pg.port().to_string(),
        "-U".into(),
        "sbtest".into(),
    ]
}

/// Runs `fleetbench pgbench ARGS... sbtest` with the password in PGPASSWORD; (exit code,
/// stdout, stderr).
fn pgbench(pg: Option<&Postgres>, args: &[&str]) -> (Option<i32>, String, String) {
    let mut line: Vec<String> = vec!["pgbench".into()];
    line.extend(args.iter().map(|s| s.to_string()));
    if let Some(pg) = pg {
        line.extend(server(pg));
        line.push("sbtest".into());
    }
    let refs: Vec<&str> = line.iter().map(String::as_str).collect();
    let out = fleetbench_env(
        &refs,
        &[
            ("PGPASSWORD", "sbpass"),
            ("PGHOST", ""),
            ("PGPORT", ""),
            ("PGUSER", ""),
            ("PGDATABASE", ""),
        ],
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(pg: &Postgres, args: &[&str]) -> (String, String) {
    let (code, out, err) = pgbench(Some(pg), args);
    assert_eq!(
        code,
        Some(0),
        "fleetbench pgbench {args:?}\nstdout:\n{out}\nstderr:\n{err}"
    );
    (out, err)
}

/// The first capture of `re` on a line of `text`, as a number.
fn figure(text: &str, re: &str) -> f64 {
    let re = Regex::new(re).unwrap();
    text.lines()
        .find_map(|l| re.captures(l))
        .unwrap_or_else(|| panic!("no line matches {re} in:\n{text}"))[1]
        .parse()
        .unwrap()
}

fn count(pg: &Postgres, table: &str) -> u64 {
    pg.sql(&format!("SELECT count(*) FROM {table}"))
        .parse()
        .unwrap()
}

#[test]
fn init_and_a_tpcb_run_over_two_agents_keep_the_balances() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");

    let (_, err) = ok(&pg, &[&agents, "-i", "-s", "2"]);
    for line in [
        "dropping old tables...",
        "creating tables...",
        "generating data (client-side)...",
        "vacuuming...",
        "creating primary keys...",
    ] {
        assert!(err.lines().any(|l| l == line), "{line:?} in\n{err}");
    }
    let done = Regex::new(
        r"^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s\)\.$",
    )
    .unwrap();
    assert!(err.lines().any(|l| done.is_match(l)), "{err}");
    assert!(err.contains("200022 of 200022 tuples (100%) done"), "{err}");
    assert_eq!(count(&pg, "pgbench_branches"), 2);
    assert_eq!(count(&pg, "pgbench_tellers"), 20);
    assert_eq!(count(&pg, "pgbench_accounts"), 200_000);
    assert_eq!(count(&pg, "pgbench_history"), 0);
    // Each account in its branch, every aid once, and the keys there.
    assert_eq!(
        pg.sql("SELECT count(DISTINCT aid), sum(bid), min(aid), max(aid) FROM pgbench_accounts"),
        "200000|300000|1|200000"
    );
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench_%'"),
        "3"
    );

    pg.sql("SELECT pg_stat_statements_reset()");
    let (out, err) = ok(
        &pg,
        &[
            &agents, "-c", "4", "-j", "2", "-T", "3", "-P", "1", "-M", "prepared",
        ],
    );
    assert!(err.contains("starting vacuum...end."), "{err}");
    let progress =
        Regex::new(r"^progress: [0-9.]+ s, [0-9.]+ tps, lat [0-9.]+ ms stddev [0-9.]+, 0 failed$")
            .unwrap();
    assert!(
        err.lines().filter(|l| progress.is_match(l)).count() >= 2,
        "{err}"
    );
    for line in [
        "transaction type: <builtin: TPC-B (sort of)>",
        "scaling factor: 2",
        "query mode: prepared",
        "number of clients: 4",
        "number of threads: 2",
        "maximum number of tries: 1",
        "duration: 3 s",
        "number of failed transactions: 0 (0.000%)",
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} in\n{out}");
    }
    let processed = figure(&out, r"^number of transactions actually processed: (\d+)") as u64;
    let tps = figure(
        &out,
        r"^tps = ([0-9.]+) \(without initial connection time\)$",
    );
    let avg = figure(&out, r"^latency average = ([0-9.]+) ms$");
    figure(&out, r"^latency stddev = ([0-9.]+) ms$");
    figure(&out, r"^initial connection time = ([0-9.]+) ms$");
    assert!(processed > 0 && tps > 0.0 && avg > 0.0, "{out}");
    assert!(
        (tps * 3.0 - processed as f64).abs() < processed as f64 * 0.2,
        "{out}"
    );
    // Both agents ran clients, and fleetbench's own block follows pgbench's.
    assert!(out.contains("latency percentiles (ms): p50 "), "{out}");
    assert_eq!(out.matches("  ok\n").count(), 2, "{out}");

    // Every committed transaction is one history row and one INSERT the server ran.
    assert_eq!(count(&pg, "pgbench_history"), processed);
    assert_eq!(
        pg.statement_calls("INSERT INTO pgbench_history%"),
        processed
    );
    let sums = pg.sql(
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(bbalance) FROM pgbench_branches), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(delta) FROM pgbench_history)",
    );
    let v: Vec<&str> = sums.split('|').collect();
    assert_eq!(v.len(), 4, "{sums}");
    assert!(v.iter().all(|s| *s == v[0]), "balances differ: {sums}");
}

#[test]
fn server_side_init_and_weighted_scripts_in_each_query_mode() {
    let pg = Postgres::start();
    let (_, err) = ok(
        &pg,
        &[
            "-i",
            "-I",
            "dtGvpf",
            "-s",
            "1",
            "--partitions=3",
            "--unlogged-tables",
            "-F",
            "90",
        ],
    );
    assert!(err.contains("server-side generate"), "{err}");
    assert!(err.contains("foreign keys"), "{err}");
    assert_eq!(count(&pg, "pgbench_accounts"), 100_000);
    assert_eq!(count(&pg, "pgbench_tellers"), 10);
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'pgbench_accounts'::regclass"),
        "3"
    );
    assert_eq!(
        pg.sql("SELECT relpersistence FROM pg_class WHERE relname = 'pgbench_branches'"),
        "u"
    );
    assert_eq!(
        pg.sql("SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conrelid::regclass::text LIKE 'pgbench_%'"),
        "5"
    );

    for mode in ["simple", "extended", "prepared"] {
        let (out, _) = ok(
            &pg,
            &[
                "-c",
                "2",
                "-t",
                "50",
                "-M",
                mode,
                "-b",
                "select-only@2",
                "-N",
            ],
        );
        assert!(
            out.lines()
                .any(|l| l == "number of transactions actually processed: 100/100"),
            "{out}"
        );
        assert!(out.contains("transaction type: multiple scripts"), "{out}");
        assert!(
            out.contains("SQL script 1: <builtin: select only>"),
            "{out}"
        );
        let updates = figure(
            &out,
            r"^ - (\d+) transactions \([0-9.]+% of total, tps = [0-9.]+\)$",
        );
        let second = out
            .split("SQL script 2: <builtin: simple update>")
            .nth(1)
            .unwrap_or_else(|| panic!("no second script block in\n{out}"));
        let simple = figure(
            second,
            r"^ - (\d+) transactions \([0-9.]+% of total, tps = [0-9.]+\)$",
        ) as u64;
        assert_eq!(updates as u64 + simple, 100, "{out}");
        // The run emptied the history first: its rows are this run's updates.
        assert_eq!(count(&pg, "pgbench_history"), simple, "{mode}: {out}");
    }
}

#[test]
fn custom_scripts_and_bad_options_are_refused_with_one_line() {
    for (args, needle) in [
        (
            &["-f", "my.sql"][..],
            "custom scripts (-f/--file) are not supported",
        ),
        (&["--bogus"][..], "unrecognized option '--bogus'"),
        (&["-c", "0"][..], "invalid number of clients"),
        (&["-T", "5", "-t", "5"][..], "not both"),
        (&["-i", "-c", "2"][..], "initialization (-i) mode"),
        (&["-M", "fast"][..], "invalid query mode"),
    ] {
        let (code, out, err) = pgbench(None, args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("fleetbench: error: pgbench: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_run_before_init_says_to_initialise() {
    let pg = Postgres::start();
    let (code, _, err) = pgbench(Some(&pg), &["-t", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("fleetbench pgbench -i"), "{err}");
}
