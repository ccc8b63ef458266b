//! `fleetbench pgbench` end to end: a private PostgreSQL, real agent processes. `-i` loads
//! pgbench's tables over two agents; a TPC-B-like run over them keeps the balances
//! consistent; the report reads with the regexes one would use on pgbench's own output,
//! and its count of transactions is the server's; a missing script file and bad options are
//! refused with one line and exit code 2. `-r` lists every command of the scripts with
//! latencies that add up to the transaction's; `-t` is exact per client (history rows per
//! backend); `-R` with `-L` skips late transactions and says how many; serialization
//! failures under REPEATABLE READ are retried and counted per transaction and per
//! statement; a non-retriable error aborts its client alone, and the run ends with
//! pgbench's line and exit code 2.
//!
//! They need PostgreSQL (scripts/test.sh installs it) and fail, rather than skip, without it.

use fleetbench_tests::{AgentProc, Postgres, Scratch, fleetbench_env};
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
            &["-U", "x", "-f", "/nonexistent/my.sql"][..],
            "could not open file \"/nonexistent/my.sql\"",
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

/// (exit code, stdout, stderr) of a run that is to end with some clients aborted.
fn aborted_run(pg: &Postgres, args: &[&str]) -> (String, String) {
    let (code, out, err) = pgbench(Some(pg), args);
    assert_eq!(code, Some(2), "{args:?}\nstdout:\n{out}\nstderr:\n{err}");
    assert_eq!(
        err.lines().last(),
        Some("pgbench: error: Run was aborted; the above results are incomplete."),
        "{err}"
    );
    (out, err)
}

/// The `-r` lines of `text` after `heading`: (average ms, failures, retries if shown, command).
fn command_lines(text: &str, heading: &str) -> Vec<(f64, u64, Option<u64>, String)> {
    let re =
        Regex::new(r"^ {3}[ 0-9]{6}[0-9]\.[0-9]{3}  [ 0-9]{10}(  [ 0-9]{10})?  (\S.*)$").unwrap();
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| re.is_match(l))
        .map(|l| {
            let mut w = l.split_whitespace();
            let avg = w.next().unwrap().parse().unwrap();
            let failures = w.next().unwrap().parse().unwrap();
            let retries = re
                .captures(l)
                .unwrap()
                .get(1)
                .map(|_| w.next().unwrap().parse().unwrap());
            (
                avg,
                failures,
                retries,
                re.captures(l).unwrap()[2].to_string(),
            )
        })
        .collect()
}

#[test]
fn per_statement_latencies_and_exactly_t_transactions_per_client() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    ok(&pg, &["-i", "-s", "1"]);
    // Which client inserted each history row: its backend.
    pg.sql("ALTER TABLE pgbench_history ADD COLUMN pid int DEFAULT pg_backend_pid()");

    // 3 clients over two agents, one thread: each runs exactly 7, however fast it is.
    let (out, _) = ok(
        &pg,
        &[&agents, "-r", "-c", "3", "-t", "7", "-M", "prepared"],
    );
    assert!(
        out.lines()
            .any(|l| l == "number of transactions actually processed: 21/21"),
        "{out}"
    );
    assert_eq!(
        pg.sql("SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM pgbench_history GROUP BY pid) c"),
        "7,7,7"
    );

    // -r: pgbench's eleven commands of tpcb-like, each statement timed, no failures.
    let lines = command_lines(&out, "statement latencies in milliseconds and failures:");
    let texts: Vec<&str> = lines.iter().map(|l| l.3.as_str()).collect();
    assert_eq!(
        texts,
        [
            "\\set aid random(1, 100000 * :scale)",
            "\\set bid random(1, 1 * :scale)",
            "\\set tid random(1, 10 * :scale)",
            "\\set delta random(-5000, 5000)",
            "BEGIN;",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;",
            "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
            "END;",
        ],
        "{out}"
    );
    assert!(lines.iter().all(|l| l.1 == 0 && l.2.is_none()), "{out}");
    assert!(lines[4..].iter().all(|l| l.0 > 0.0), "{out}");
    // The commands make up the transaction: their averages add up to its latency.
    let sum: f64 = lines.iter().map(|l| l.0).sum();
    let avg = figure(&out, r"^latency average = ([0-9.]+) ms$");
    assert!(
        sum <= avg * 1.05 + 0.01 && sum >= avg * 0.7,
        "statements {sum} ms, transaction {avg} ms\n{out}"
    );

    // Several scripts: a block per script, each with its own commands.
    let tmp = Scratch::new("pgbench-json");
    let json = tmp.path("run.json");
    let json_opt = format!("--json={}", json.display());
    let (out, _) = ok(
        &pg,
        &[
            "-r",
            "-c",
            "2",
            "-t",
            "20",
            "-b",
            "select-only@3",
            "-N",
            &json_opt,
        ],
    );
    let second = out
        .split("SQL script 2: <builtin: simple update>")
        .nth(1)
        .unwrap_or_else(|| panic!("no second script in\n{out}"));
    let first = command_lines(&out, " - statement latencies in milliseconds and failures:");
    assert_eq!(first.len(), 2, "{out}");
    let lines = command_lines(
        second,
        " - statement latencies in milliseconds and failures:",
    );
    assert_eq!(lines.len(), 9, "{out}");
    assert_eq!(lines[8].3, "END;");

    // The JSON result has the same figures: per script its weight, count and commands.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON result"))
            .expect("JSON");
    let p = &doc["totals"]["pgbench"];
    assert_eq!(p["processed"], 40, "{p}");
    assert_eq!(p["failed"], 0, "{p}");
    assert_eq!(p["clients_aborted"], 0, "{p}");
    let scripts = p["scripts"].as_array().expect("scripts");
    let names: Vec<&str> = scripts
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["<builtin: select only>", "<builtin: simple update>"],
        "{p}"
    );
    assert_eq!(scripts[0]["weight"], 3, "{p}");
    assert_eq!(scripts[1]["weight"], 1, "{p}");
    let per_script: u64 = scripts
        .iter()
        .map(|s| s["processed"].as_u64().unwrap())
        .sum();
    assert_eq!(per_script, 40, "{p}");
    let commands = scripts[1]["commands"].as_array().expect("commands");
    assert_eq!(commands.len(), 9, "{p}");
    assert_eq!(commands[8]["command"], "END;", "{p}");
    for (c, l) in commands.iter().zip(&lines) {
        let ms = c["latency_avg_ms"].as_f64().unwrap();
        // The text prints three decimals of the same figure.
        assert!((ms - l.0).abs() <= 0.0005 + 1e-9, "{c} against {l:?}");
    }
    assert!(
        (p["tps"].as_f64().unwrap() - figure(&out, r"^tps = ([0-9.]+) ")).abs() < 0.01,
        "{p}\n{out}"
    );
}

#[test]
fn a_rate_with_a_latency_limit_skips_late_transactions() {
    let pg = Postgres::start();
    ok(&pg, &["-i", "-s", "1"]);
    let tmp = Scratch::new("pgbench-late");
    let json = tmp.path("run.json");
    let json_opt = format!("--json={}", json.display());
    // One client cannot keep up with 20,000 a second: what is over 1 ms late when it
    // could start is skipped.
    let (out, err) = ok(
        &pg,
        &[
            "-n", "-S", "-c", "1", "-T", "2", "-P", "1", "-R", "20000", "-L", "1", &json_opt,
        ],
    );
    let processed = figure(&out, r"^number of transactions actually processed: (\d+)$");
    let skipped = figure(
        &out,
        r"^number of transactions skipped: (\d+) \([0-9.]+%\)$",
    );
    let share = figure(
        &out,
        r"^number of transactions skipped: \d+ \(([0-9.]+)%\)$",
    );
    assert!(processed > 0.0 && skipped > 0.0, "{out}");
    assert!(
        (share - 100.0 * skipped / (processed + skipped)).abs() < 0.001,
        "{out}"
    );
    // Every arrival was run or skipped but those still waiting when the time was up
    // (Poisson: 40,000 within a few hundred; a client held off the CPU at the end leaves
    // more).
    let arrivals = processed + skipped;
    assert!(
        (arrivals - 40_000.0).abs() < 4_000.0,
        "{arrivals} arrivals\n{out}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON result"))
            .expect("JSON");
    let p = &doc["totals"]["pgbench"];
    assert_eq!(p["processed"].as_f64(), Some(processed), "{p}");
    assert_eq!(p["skipped"].as_f64(), Some(skipped), "{p}");
    assert_eq!(p["latency_limit_ms"].as_f64(), Some(1.0), "{p}");
    assert!(p["schedule_lag_ms"]["max"].as_f64().unwrap() <= 1.0, "{p}");
    let late = Regex::new(&format!(
        r"^number of transactions above the 1\.0 ms latency limit: (\d+)/{processed} \([0-9.]+%\)$"
    ))
    .unwrap();
    assert!(out.lines().any(|l| late.is_match(l)), "{out}");
    let late_n = out
        .lines()
        .find_map(|l| late.captures(l))
        .map(|c| c[1].parse::<u64>().unwrap());
    assert_eq!(p["late"].as_u64(), late_n, "{p}");
    // Those that ran started within the limit of their schedule.
    let max_lag = figure(
        &out,
        r"^rate limit schedule lag: avg [0-9.]+ \(max ([0-9.]+)\) ms$",
    );
    assert!(max_lag <= 1.0, "{out}");
    let progress = Regex::new(
        r"^progress: [0-9.]+ s, [0-9.]+ tps, lat [0-9.]+ ms stddev [0-9.]+, 0 failed, lag [0-9.]+ ms, \d+ skipped$",
    )
    .unwrap();
    assert!(err.lines().any(|l| progress.is_match(l)), "{err}");

    // -L without -R: late ones are counted, nothing is skipped.
    let (out, _) = ok(&pg, &["-n", "-S", "-c", "2", "-t", "100", "-L", "0.001"]);
    assert!(
        out.lines()
            .any(|l| l
                == "number of transactions above the 0.0 ms latency limit: 200/200 (100.000%)"),
        "{out}"
    );
    assert!(
        !out.contains("skipped") && !out.contains("schedule lag"),
        "{out}"
    );
}

#[test]
fn serialization_failures_are_retried_and_counted_per_transaction_and_statement() {
    let pg = Postgres::start();
    ok(&pg, &["-i", "-s", "1"]);
    // Under REPEATABLE READ the clients' updates of the one branch collide.
    pg.sql("ALTER DATABASE sbtest SET default_transaction_isolation = 'repeatable read'");
    let (out, _) = ok(
        &pg,
        &[
            "-n",
            "-r",
            "-c",
            "4",
            "-T",
            "3",
            "--max-tries=1000",
            "-P",
            "1",
        ],
    );
    let processed = figure(&out, r"^number of transactions actually processed: (\d+)$") as u64;
    let failed = figure(&out, r"^number of failed transactions: (\d+) ") as u64;
    let retried = figure(
        &out,
        r"^number of transactions retried: (\d+) \([0-9.]+%\)$",
    ) as u64;
    let share = figure(
        &out,
        r"^number of transactions retried: \d+ \(([0-9.]+)%\)$",
    );
    let retries = figure(&out, r"^total number of retries: (\d+)$") as u64;
    assert!(retried > 0, "no transaction was retried:\n{out}");
    assert!(retries >= retried && retried <= processed + failed, "{out}");
    assert!(
        (share - 100.0 * retried as f64 / (processed + failed) as f64).abs() < 0.001,
        "{out}"
    );
    // The statements that hit the failures say so; together, what the summary says.
    let lines = command_lines(
        &out,
        "statement latencies in milliseconds, failures and retries:",
    );
    assert_eq!(lines.len(), 11, "{out}");
    assert_eq!(
        lines.iter().map(|l| l.2.unwrap()).sum::<u64>(),
        retries,
        "{out}"
    );
    assert_eq!(lines.iter().map(|l| l.1).sum::<u64>(), failed, "{out}");
    assert_eq!(
        lines[..5].iter().map(|l| l.2.unwrap()).sum::<u64>(),
        0,
        "{out}"
    );
}

#[test]
fn an_error_aborts_only_its_client_and_the_run_says_it_is_incomplete() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    ok(&pg, &["-i", "-s", "1"]);
    // The 30th history row of the run fails with an error no retry can help.
    pg.sql(
        "CREATE SEQUENCE boom; GRANT ALL ON SEQUENCE boom TO PUBLIC; \
         CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN IF nextval('boom') = 30 THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER boom BEFORE INSERT ON pgbench_history FOR EACH ROW EXECUTE FUNCTION boom()",
    );
    let (out, err) = aborted_run(&pg, &[&agents, "-c", "3", "-t", "20", "--max-tries=3"]);
    let abort = Regex::new(
        r"^pgbench: error: client [0-2] script 0 aborted in command 9 query 0: ERROR:  boom$",
    )
    .unwrap();
    assert_eq!(
        err.lines().filter(|l| abort.is_match(l)).count(),
        1,
        "{err}"
    );
    // The other two clients ran their 20; the aborted one's done before it count too.
    let processed = figure(
        &out,
        r"^number of transactions actually processed: (\d+)/60$",
    ) as u64;
    assert!((40..60).contains(&processed), "{out}");
    assert_eq!(count(&pg, "pgbench_history"), processed);
    assert!(
        out.contains("number of failed transactions: 0 (0.000%)"),
        "{out}"
    );

    // Every client aborts: the run ends then, long before its time.
    pg.sql("CREATE OR REPLACE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$");
    let began = std::time::Instant::now();
    let (out, err) = aborted_run(&pg, &[&agents, "-c", "3", "-T", "60"]);
    assert!(began.elapsed().as_secs() < 50, "{out}{err}");
    assert_eq!(
        err.lines().filter(|l| abort.is_match(l)).count(),
        3,
        "{err}"
    );
    assert!(
        out.lines()
            .any(|l| l == "number of transactions actually processed: 0"),
        "{out}"
    );
}

/// `fleetbench pgbench ARGS...` with exactly the PG variables in `env` (the others empty).
fn pgbench_with(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut all = vec![
        ("PGPASSWORD", ""),
        ("PGHOST", ""),
        ("PGPORT", ""),
        ("PGUSER", ""),
        ("PGDATABASE", ""),
        ("PGPASSFILE", ""),
        ("PGSSLMODE", ""),
    ];
    for (k, v) in env {
        all.retain(|(n, _)| n != k);
        all.push((k, v));
    }
    let mut line = vec!["pgbench"];
    line.extend_from_slice(args);
    let out = fleetbench_env(&line, &all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_unix_socket_the_password_file_and_pgsslmode_are_libpqs() {
    let pg = Postgres::start();
    let port = pg.port().to_string();
    let dir = pg.socket_dir().to_string_lossy().into_owned();

    // A host that is a directory is the server's Unix socket in it (trust there, as the
    // server's pg_hba says): init and a run over it.
    let sock = ["-h", dir.as_str(), "-p", port.as_str(), "-U", "sbtest"];
    let mut init = sock.to_vec();
    init.extend(["-i", "-s", "1", "sbtest"]);
    let (code, _, err) = pgbench_with(&init, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(count(&pg, "pgbench_accounts"), 100_000);
    // One agent loads every table over one connection: in one transaction with the
    // TRUNCATE, by COPY FREEZE as pgbench does, so every page is all-frozen.
    pg.sql("CREATE EXTENSION IF NOT EXISTS pg_visibility");
    let frozen = pg.sql(
        "SELECT all_frozen || '/' || (SELECT relpages FROM pg_class WHERE relname = 'pgbench_accounts') \
         FROM pg_visibility_map_summary('pgbench_accounts')",
    );
    let (f, p) = frozen.split_once('/').unwrap();
    assert!(
        p.parse::<u64>().unwrap() > 0 && f == p,
        "all-frozen/pages {frozen}"
    );
    let mut run = sock.to_vec();
    run.extend(["-n", "-c", "2", "-t", "5", "sbtest"]);
    let (code, out, err) = pgbench_with(&run, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("number of transactions actually processed: 10/10"),
        "{out}"
    );
    assert_eq!(count(&pg, "pgbench_history"), 10);
    let tcp = ["-h", "127.0.0.1", "-p", port.as_str(), "-U", "sbtest"];
    let mut run = tcp.to_vec();
    run.extend(["-n", "-t", "3", "sbtest"]);

    // Over TCP the server wants SCRAM: the password comes from the file PGPASSFILE names
    // when PGPASSWORD is empty; a wrong one there is one line and a failure.
    let tmp = Scratch::new("pgpass");
    let file = tmp.write(
        "pgpass",
        &format!("# bench\nother:{port}:*:*:nope\n127.0.0.1:{port}:sbtest:sbtest:sbpass\n"),
    );
    let f = file.to_string_lossy().into_owned();
    let (code, out, err) = pgbench_with(&run, &[("PGPASSFILE", f.as_str())]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("number of transactions actually processed: 3/3"),
        "{out}"
    );
    std::fs::write(&file, format!("127.0.0.1:{port}:*:*:wrong\n")).unwrap();
    let (code, _, err) = pgbench_with(&run, &[("PGPASSFILE", f.as_str())]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("password") || err.contains("access denied"),
        "{err}"
    );

    // PGSSLMODE: require against a server without TLS is refused, with the mode named.
    let (code, _, err) = pgbench_with(&run, &[("PGPASSWORD", "sbpass"), ("PGSSLMODE", "require")]);
    assert_ne!(code, Some(0));
    assert!(err.contains("sslmode is require"), "{err}");
    let (code, _, err) = pgbench_with(&run, &[("PGSSLMODE", "sometimes")]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A server that takes fewer connections than the run has clients (issue 57): the opening
/// gives up by `--ready-timeout`, as an OLTP run's does and with the same message, instead
/// of retrying for twice as long; the tables it checked are left as they were.
#[test]
fn a_full_server_is_given_up_by_the_ready_timeout() {
    let pg =
        Postgres::start_with(fleetbench_tests::PgOpts::default().setting("max_connections", 8));
    ok(&pg, &["-i", "-s", "1"]);
    let t0 = std::time::Instant::now();
    let (code, _, err) = pgbench(
        Some(&pg),
        &["-c", "20", "-j", "2", "-T", "2", "--ready-timeout=6"],
    );
    let took = t0.elapsed();
    assert_ne!(code, Some(0), "{err}");
    assert!(
        took < std::time::Duration::from_secs(20),
        "gave up only after {took:?}: {err}"
    );
    assert!(
        took >= std::time::Duration::from_secs(4),
        "gave up before retrying: {took:?}: {err}"
    );
    // The same words as an OLTP run against a full server.
    let (oltp_err, oltp_took) = {
        let port = format!("--pgsql-port={}", pg.port());
        let oltp = |more: &[&str]| {
            let mut args = vec![
                "oltp_point_select",
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                &port,
                "--pgsql-user=sbtest",
                "--pgsql-password=sbpass",
                "--pgsql-db=sbtest",
                "--tables=1",
                "--table-size=100",
            ];
            args.extend_from_slice(more);
            fleetbench_tests::fleetbench_env(&args, &[])
        };
        let prepared = oltp(&["prepare"]);
        assert!(prepared.status.success(), "{prepared:?}");
        let t0 = std::time::Instant::now();
        let out = oltp(&["--threads=20", "--time=2", "--ready-timeout=6", "run"]);
        (
            String::from_utf8_lossy(&out.stderr).into_owned(),
            t0.elapsed(),
        )
    };
    let words = |e: &str| {
        e.lines()
            .last()
            .unwrap_or_default()
            .split(": ")
            .last()
            .unwrap_or_default()
            .to_string()
    };
    eprintln!("pgbench: {took:?}: {err}\noltp: {oltp_took:?}: {oltp_err}");
    assert_eq!(
        words(&err),
        words(&oltp_err),
        "pgbench: {err}\noltp: {oltp_err}"
    );
}
