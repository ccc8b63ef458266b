//! sysbench Lua scripts end to end: sysbench's bundled scripts run as files over two real
//! agents against a private MariaDB (checked against the server's own counters and
//! sysbench's mix for the same script), fleetbench's test scripts (tests/fixtures/lua) for
//! the interface's parts, a 0.5-style script, SB_CNT_TRX counted as sysbench counts it
//! (run beside sysbench), and the refusals.

use std::collections::BTreeMap;
use std::path::PathBuf;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{
    AgentProc, Scratch, expect_usage_error, fleetbench, fleetbench_ok, json, run_tool,
    worker_threads,
};

/// A script of sysbench's own, as Debian's package installs it (scripts/test.sh installs
/// sysbench; a missing one fails here, loudly).
fn bundled(name: &str) -> String {
    let p = PathBuf::from("/usr/share/sysbench").join(name);
    assert!(
        p.is_file(),
        "{} is missing: install sysbench (scripts/test.sh does)",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

/// A test script of fleetbench's own.
fn fixture(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lua")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

/// Two agents that run scripts, and their `--agents` list.
fn script_agents() -> (AgentProc, AgentProc, String) {
    let a = AgentProc::start_with(&["--allow-scripts"], &[]);
    let b = AgentProc::start_with(&["--allow-scripts"], &[]);
    let list = format!("{},{}", a.addr, b.addr);
    (a, b, list)
}

fn args(parts: &[&str], db: &MariaDb) -> Vec<String> {
    db.args(parts)
}

/// The read, write and other statements of a sysbench report.
fn sysbench_counts(out: &str) -> [u64; 3] {
    ["read:", "write:", "other:"].map(|label| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {label} in sysbench's report:\n{out}"))
    })
}

fn delta(a: &BTreeMap<&str, u64>, b: &BTreeMap<&str, u64>, k: &str) -> u64 {
    b[k] - a[k]
}

#[test]
fn sysbench_bundled_scripts_run_as_files_over_two_agents() {
    let db = MariaDb::start();
    let scratch = Scratch::new("lua-bundled");
    let (_a, _b, agents) = script_agents();
    let rw = bundled("oltp_read_write.lua");
    // prepare: a PARALLEL_COMMAND, split by sysbench.tid over both agents' threads.
    let out = fleetbench_ok(&args(
        &[
            &rw,
            "--tables=4",
            "--table-size=200",
            "--threads=4",
            "--agents",
            &agents,
            "prepare",
        ],
        &db,
    ));
    for t in 1..=4 {
        assert!(
            out.contains(&format!("Creating table 'sbtest{t}'...")),
            "{out}"
        );
        assert_eq!(
            db.sql(&format!("SELECT COUNT(*) FROM sbtest.sbtest{t}"))
                .trim(),
            "200"
        );
    }
    // The same schema as the built-in prepare, index included.
    let ddl = db.sql("SHOW CREATE TABLE sbtest.sbtest3");
    assert!(ddl.contains("KEY `k_3` (`k`)"), "{ddl}");
    // run: the report's counts are the server's.
    for script in ["oltp_read_write.lua", "oltp_point_select.lua"] {
        let path = bundled(script);
        let out_json = scratch.path(&format!("{script}.json"));
        let before = db.statement_counters();
        let out = fleetbench_ok(&args(
            &[
                &path,
                "--tables=4",
                "--table-size=200",
                "--threads=4",
                "--events=400",
                "--time=0",
                "--agents",
                &agents,
                &format!("--json={}", out_json.display()),
                "run",
            ],
            &db,
        ));
        let after = db.statement_counters();
        assert!(out.contains(&format!("Script: {path} (run)")), "{out}");
        let j = json(&out_json);
        let sql = &j["totals"]["sql"];
        let (tx, reads, writes, others, ignored) = (
            sql["transactions"].as_u64().unwrap(),
            sql["reads"].as_u64().unwrap(),
            sql["writes"].as_u64().unwrap(),
            sql["others"].as_u64().unwrap(),
            sql["ignored_errors"].as_u64().unwrap(),
        );
        assert_eq!(tx, 400, "{script}");
        assert_eq!(j["agents"].as_array().unwrap().len(), 2, "{script}");
        let selects = delta(&before, &after, "Com_select");
        let dml = delta(&before, &after, "Com_update")
            + delta(&before, &after, "Com_delete")
            + delta(&before, &after, "Com_insert");
        let trx = delta(&before, &after, "Com_commit") + delta(&before, &after, "Com_begin");
        // Every statement the server ran counts once: a read, write or other when it
        // succeeded, an ignored error when it failed (and its event ran again).
        assert_eq!(
            reads + writes + others + ignored,
            selects + dml + trx,
            "{script}"
        );
        assert!(
            reads <= selects && writes <= dml && others <= trx + dml,
            "{script}"
        );
        // sysbench's mix for the same script and options (no conflicts: then exact).
        if ignored == 0 {
            assert_eq!((reads, writes, others), (selects, dml, trx), "{script}");
            let per_tx = match script {
                "oltp_read_write.lua" => (14, 4, 2),
                _ => (1, 0, 0),
            };
            assert_eq!(
                (reads, writes, others),
                (per_tx.0 * tx, per_tx.1 * tx, per_tx.2 * tx)
            );
        }
    }
    // A statement counts by its reply, as in sysbench: the same script through both tools
    // (an UPDATE that matched nothing is other, an empty result set a read).
    let counting = fixture("counting/counting.lua");
    let sb = db.sysbench(
        "sbtest",
        &[&counting, "--threads=1", "--events=10", "--time=0", "run"],
    );
    let counting_json = scratch.path("counting.json");
    fleetbench_ok(&args(
        &[
            &counting,
            "--threads=2",
            "--events=10",
            "--time=0",
            "--agents",
            &agents,
            &format!("--json={}", counting_json.display()),
            "run",
        ],
        &db,
    ));
    let sql = &json(&counting_json)["totals"]["sql"];
    let fb = ["reads", "writes", "others"].map(|k| sql[k].as_u64().unwrap());
    assert_eq!(fb, [30, 20, 50], "{sql}");
    assert_eq!(sysbench_counts(&sb), fb, "{sb}");
    // And sysbench itself on the same tables, same script: the same mix per transaction.
    let before = db.statement_counters();
    db.sysbench(
        "sbtest",
        &[
            &rw,
            "--tables=4",
            "--table-size=200",
            "--threads=1",
            "--events=100",
            "--time=0",
            "run",
        ],
    );
    let after = db.statement_counters();
    assert_eq!(delta(&before, &after, "Com_select"), 14 * 100);
    assert_eq!(delta(&before, &after, "Com_commit"), 100);
    let out = fleetbench_ok(&args(
        &[&rw, "--tables=4", "--agents", &agents, "cleanup"],
        &db,
    ));
    assert!(out.contains("Dropping table 'sbtest4'..."), "{out}");
    assert_eq!(db.sql("SHOW TABLES FROM sbtest").trim(), "");
    // bulk_insert.lua: its prepare runs once yet makes a table per thread of --threads
    // (sysbench.opt.threads as given); in the run each thread appends its events to its own
    // table (the global thread_id, unique over the agents), flushed in thread_done.
    let bulk = bundled("bulk_insert.lua");
    let base = |rest: &[&str]| {
        let mut v = vec![bulk.as_str(), "--threads=4", "--agents", agents.as_str()];
        v.extend_from_slice(rest);
        args(&v, &db)
    };
    let out = fleetbench_ok(&base(&["prepare"]));
    for t in 1..=4 {
        assert!(
            out.contains(&format!("Creating table 'sbtest{t}'...")),
            "{out}"
        );
    }
    fleetbench_ok(&base(&["--events=4000", "--time=0", "run"]));
    let per_table: Vec<(u64, u64)> = (1..=4)
        .map(|t| {
            let r = db.sql(&format!(
                "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM sbtest.sbtest{t}"
            ));
            let mut f = r.split_whitespace().map(|v| v.parse::<u64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    // Every event's row is there, each thread's numbered 1..n in its own table.
    assert_eq!(
        per_table.iter().map(|(n, _)| n).sum::<u64>(),
        4000,
        "{per_table:?}"
    );
    assert!(per_table.iter().all(|(n, max)| n == max), "{per_table:?}");
    fleetbench_ok(&base(&["cleanup"]));
    assert_eq!(db.sql("SHOW TABLES FROM sbtest").trim(), "");
}

#[test]
fn a_test_script_uses_the_whole_interface_over_two_agents() {
    let db = MariaDb::start();
    let scratch = Scratch::new("lua-fleet");
    let (_a, _b, agents) = script_agents();
    let script = fixture("fleet/fleet_test.lua");
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<&str> = vec![&script, "--agents", &agents];
        v.extend_from_slice(extra);
        args(&v, &db)
    };
    // Its own options (with dashes or underscores), a parallel prepare by bulk insert.
    let out = fleetbench_ok(&base(&["--threads=6", "--rows=7", "--tag=abc", "prepare"]));
    for tid in 0..6 {
        assert!(
            out.contains(&format!("thread {tid} inserted 7 rows")),
            "{out}"
        );
    }
    assert_eq!(
        db.sql("SELECT COUNT(DISTINCT tid), COUNT(*), MIN(tag), MAX(tag) FROM sbtest.fb_rows")
            .trim(),
        "6\t42\tabc\tabc"
    );
    // A custom command that runs once: a result set and query_row.
    let out = fleetbench_ok(&base(&["verify"]));
    assert!(out.contains("verify: 6 tids"), "{out}");
    assert!(out.contains("verify: tid 5 has 7 rows"), "{out}");
    assert!(out.contains("verify: total 42 tags 1"), "{out}");
    // A custom PARALLEL_COMMAND: every thread over both agents, each with its tid.
    let out = fleetbench_ok(&base(&["--threads=6", "check"]));
    for tid in 0..6 {
        assert!(
            out.contains(&format!("check: tid {tid} of 6 has 7 rows")),
            "{out}"
        );
    }
    // run: sysbench.tid unique over 2 agents x 3 threads, an ignorable error restarting
    // the first event of each thread, event returning true stopping its thread, the ffi
    // counter, report hooks once on the coordinator with the merged figures.
    let out_json = scratch.path("run.json");
    let out = fleetbench_ok(&base(&[
        "--threads=6",
        "--time=60",
        "--report-interval=1",
        "--fail_once",
        "--stop-after=30",
        &format!("--json={}", out_json.display()),
        "run",
    ]));
    let rows =
        db.sql("SELECT tid, COUNT(*), MAX(seq) FROM sbtest.fb_events GROUP BY tid ORDER BY tid");
    let expected: String = (0..6).map(|t| format!("{t}\t30\t30\n")).collect();
    assert_eq!(rows, expected, "each tid once per thread, 30 events each");
    let j = json(&out_json);
    let sql = &j["totals"]["sql"];
    // Each thread: 28 counted events (the first restarted, the 30th stopped it).
    assert_eq!(sql["transactions"].as_u64().unwrap(), 6 * 28, "{out}");
    assert_eq!(sql["ignored_errors"].as_u64().unwrap(), 6, "{out}");
    assert_eq!(sql["writes"].as_u64().unwrap(), 6 * 30, "{out}");
    // Per event: a SELECT and an ffi read. The failing SELECT of the failed try is an
    // ignored error, not a read (sysbench's hook prints reads=360 for this run too).
    assert_eq!(sql["reads"].as_u64().unwrap(), 6 * 30 * 2, "{out}");
    assert_eq!(
        out.matches("init ran").count(),
        2,
        "init once per agent: {out}"
    );
    assert_eq!(
        out.matches("done ran").count(),
        2,
        "done once per agent: {out}"
    );
    let hook: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("hook cumulative:"))
        .collect();
    assert_eq!(
        hook,
        [format!(
            "hook cumulative: events={} reads={} writes={} other=0 errors=6",
            6 * 28,
            6 * 60,
            6 * 30
        )
        .as_str()],
        "{out}"
    );
    // The interval hook replaced the interval lines.
    assert!(!out.contains("] thds:"), "{out}");
    assert!(j["agents"].as_array().unwrap().len() == 2);
    fleetbench_ok(&base(&["cleanup"]));
    assert_eq!(db.sql("SHOW TABLES FROM sbtest LIKE 'fb_%'").trim(), "");
}

#[test]
fn a_sysbench_0_5_script_runs_with_its_globals_and_db_functions() {
    let db = MariaDb::start();
    let script = fixture("legacy/legacy_test.lua");
    fleetbench_ok(&args(&[&script, "--legacy-rows=20", "prepare"], &db));
    // 0.5's MySQL option globals (mysql_table_engine, myisam_max_rows) made the table.
    let ddl = db.sql("SHOW CREATE TABLE sbtest.fb_legacy");
    assert!(
        ddl.contains("ENGINE=InnoDB") && ddl.contains("MAX_ROWS=1000000"),
        "{ddl}"
    );
    assert_eq!(db.sql("SELECT COUNT(*) FROM sbtest.fb_legacy").trim(), "20");
    let out = fleetbench_ok(&args(
        &[
            &script,
            "--legacy-rows=20",
            "--threads=3",
            "--local-agents=1",
            "--events=90",
            "--time=0",
            "run",
        ],
        &db,
    ));
    assert!(
        out.contains("transactions:                        90"),
        "{out}"
    );
    // thread_init(thread_id) and event(thread_id) saw the thread's id: every thread
    // wrote rows, and only its own id.
    let threads = db.sql("SELECT COUNT(DISTINCT thread), MIN(thread), MAX(thread) FROM sbtest.fb_legacy WHERE thread >= 0");
    assert_eq!(threads.trim(), "3\t0\t2", "{out}");
    fleetbench_ok(&args(&[&script, "cleanup"], &db));
}

#[test]
fn scripts_are_refused_where_they_must_be() {
    let db = MariaDb::start();
    // An agent without --allow-scripts: one line, nothing started.
    let plain = AgentProc::start();
    let rw = bundled("oltp_point_select.lua");
    let out = fleetbench(
        &args(&[&rw, "--agents", &plain.addr, "run"], &db)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("--allow-scripts"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(worker_threads(plain.pid()), 0);
    // Bad input: one line, exit 2.
    let scratch = Scratch::new("lua-refused");
    let syntax = scratch.write("broken.lua", "function event()\n  x = = 1\nend\n");
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            vec![syntax.to_string_lossy().into_owned(), "run".into()],
            vec!["broken.lua:2:"],
        ),
        (
            vec!["/no/such/dir/mine.lua".into(), "run".into()],
            vec!["cannot read the script", "mine.lua"],
        ),
        (
            vec![rw.clone(), "--no-such-option=1".into(), "run".into()],
            vec!["--no-such-option"],
        ),
        (
            vec![rw.clone(), "frobnicate".into()],
            vec!["does not define the command 'frobnicate'"],
        ),
        (
            vec![rw.clone(), "--table-size=many".into(), "run".into()],
            vec!["--table_size", "many"],
        ),
    ];
    for (argv, needles) in cases {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let out = fleetbench(&argv);
        expect_usage_error(&out, &argv.join(" "), &needles);
    }
    // The sandbox: os.execute is not there; the run ends with the script's file and line
    // on every agent, none hangs.
    let (_a, _b, agents) = script_agents();
    let marker = std::path::Path::new("/tmp/fleetbench-sandbox-escaped");
    let _ = std::fs::remove_file(marker);
    for (script, needle) in [
        (fixture("refused/os_execute.lua"), "os_execute.lua:3:"),
        (
            fixture("refused/runtime_error.lua"),
            "runtime_error.lua:10:",
        ),
    ] {
        let (out, all, took) = run_over(&script, &["--threads=4", "--time=30"], &agents, &db);
        // A failure after the start: exit 1, and the error on stderr in one line.
        assert_eq!(out.status.code(), Some(1), "{all}");
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with("error: run on agent "))
            .unwrap_or_else(|| panic!("no error line: {all}"));
        assert!(line.contains(needle), "{needle}: {all}");
        assert!(
            took < std::time::Duration::from_secs(20),
            "the run ended at once, not at its time: {all}"
        );
    }
    assert!(!marker.exists(), "os.execute ran");
}

#[test]
fn a_script_that_never_returns_cannot_keep_an_agent_busy() {
    // An endless loop in `event`: no hook reaches LuaJIT's compiled loop, so the run gives
    // its workers up a few seconds after the cancel, the coordinator hears why, and the
    // agent binary starts itself again in place (the threads end with the old image).
    // The same for `done()` after a run that went well: one thread left behind.
    let db = MariaDb::start();
    for (file, left) in [("endless.lua", 2), ("endless_done.lua", 1)] {
        let mut agent = AgentProc::start_with(&["--allow-scripts"], &[]);
        let script = fixture(&format!("refused/{file}"));
        let (out, all, took) = run_over(&script, &["--threads=2", "--time=1"], &agent.addr, &db);
        assert_eq!(out.status.code(), Some(3), "{file}: {all}");
        assert!(
            all.contains(&format!("{left} thread(s) of the run did not return")),
            "{file}: the report says why: {all}"
        );
        assert!(
            took < std::time::Duration::from_secs(40),
            "{file}: the run ended: {all}"
        );
        restarts_in_place(&mut agent);
    }
    // The same in thread_init: the coordinator gives up on the agent's readiness, and the
    // agent on the threads.
    let mut agent = AgentProc::start_with(&["--allow-scripts"], &[]);
    let script = fixture("refused/endless_init.lua");
    let extra = ["--threads=2", "--time=1", "--ready-timeout=2"];
    let (out, _, _) = run_over(&script, &extra, &agent.addr, &db);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("was not ready within 2s"), "{err}");
    restarts_in_place(&mut agent);
}

/// Runs `script` with `extra` options over `agents` against `db`: its output, stdout and
/// stderr together, and how long it took.
fn run_over(
    script: &str,
    extra: &[&str],
    agents: &str,
    db: &MariaDb,
) -> (std::process::Output, String, std::time::Duration) {
    let mut parts = vec![script];
    parts.extend(extra);
    parts.extend(["--agents", agents, "run"]);
    let argv = args(&parts, db);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let started = std::time::Instant::now();
    let out = fleetbench(&argv);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, all, started.elapsed())
}

/// Waits (15 s at most) for `agent` to start itself again in place (issue 57): the same
/// process (its pid) on the same address, the stuck threads gone with the old image, free
/// for the next run, which works.
fn restarts_in_place(agent: &mut AgentProc) {
    let pid = agent.pid();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while worker_threads(pid) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the script threads left behind still run"
        );
        assert!(
            agent.child.try_wait().expect("agent status").is_none(),
            "the agent exited instead of starting again in place"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        agent.child.try_wait().expect("agent status").is_none(),
        "the agent exited"
    );
    let agents = format!("--agents={}", agent.addr);
    let out = fleetbench(&["cpu", "--time=1", &agents, "run"]);
    assert!(
        out.status.success(),
        "the next run on the agent: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(agent.pid(), pid);
}

#[test]
fn a_script_with_its_own_loop_runs_its_events_and_its_hook_replaces_the_report() {
    let db = MariaDb::start();
    let script = fixture("own_loop/own_loop.lua");
    fleetbench_ok(&args(&[&script, "prepare"], &db));
    let out = fleetbench_ok(&args(
        &[
            &script,
            "--threads=3",
            "--local-agents=2",
            "--events=60",
            "--time=0",
            "run",
        ],
        &db,
    ));
    // The hook's line is the end report, merged over both agents; sysbench's usual
    // blocks are not printed then.
    // (Each thread's prepared UPDATE before its loop changes no row: other, not a write,
    // as sysbench counts it.)
    assert!(out.contains("own loop: events=60 writes=60"), "{out}");
    assert!(!out.contains("SQL statistics:"), "{out}");
    // Every event of thread_run's loop ran once (event() was never called: it fails).
    assert_eq!(
        db.sql("SELECT COUNT(*) FROM sbtest.fb_loop_events").trim(),
        "60"
    );
    // Each thread's code after its loop ran at the end, with its own count, and read
    // the whole 3,000-row result set.
    let threads = db.sql(
        "SELECT COUNT(*), SUM(events), MIN(rows_seen), MAX(rows_seen), MIN(last_n) \
         FROM sbtest.fb_loop_threads",
    );
    assert_eq!(threads.trim(), "3\t60\t3000\t3000\t3000", "{out}");
    let per_tid = db.sql(
        "SELECT COUNT(*) FROM sbtest.fb_loop_events e JOIN sbtest.fb_loop_threads t \
         USING (tid) GROUP BY tid HAVING COUNT(*) <> MAX(t.events)",
    );
    assert_eq!(
        per_tid.trim(),
        "",
        "events per thread differ from the loop's counts"
    );
    fleetbench_ok(&args(&[&script, "cleanup"], &db));
    assert_eq!(
        db.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE 'fb_loop%'")
            .trim(),
        "0"
    );
}

/// The figures of a "General statistics"/"Threads fairness" report: total number of
/// events, and the fairness line's average events per thread.
fn events_and_fairness(out: &str) -> (u64, f64) {
    let total = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .unwrap_or_else(|| panic!("no total number of events in\n{out}"))
        .trim()
        .parse()
        .unwrap();
    let avg = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("events (avg/stddev):"))
        .and_then(|v| v.trim().split('/').next())
        .unwrap_or_else(|| panic!("no fairness line in\n{out}"))
        .parse()
        .unwrap();
    (total, avg)
}

#[test]
fn sb_cnt_trx_counts_one_more_event_as_in_sysbench() {
    let script = fixture("trx_counter/trx_counter.lua");
    let tmp = Scratch::new("trx-counter");
    let path = tmp.path("r.json");
    let json_opt = format!("--json={}", path.display());
    let run = [
        script.as_str(),
        "--threads=2",
        "--events=100",
        "--time=0",
        "--local-agents=2",
    ];
    let mut with_json = run.to_vec();
    with_json.extend([json_opt.as_str(), "run"]);
    let out = fleetbench_ok(&with_json);
    // sysbench with the same script and options (one process, no agents).
    let sb = std::process::Command::new("sysbench")
        .args([
            script.as_str(),
            "--threads=2",
            "--events=100",
            "--time=0",
            "run",
        ])
        .output()
        .expect("sysbench is installed (scripts/test.sh installs it): apt-get install sysbench");
    let sb = String::from_utf8_lossy(&sb.stdout).into_owned();
    // 100 events run, each counting one more: 200 in the totals, 50 per thread in the
    // fairness line, in both tools.
    assert_eq!(events_and_fairness(&sb), (200, 50.0), "sysbench:\n{sb}");
    assert_eq!(events_and_fairness(&out), (200, 50.0), "fleetbench:\n{out}");
    let j = json(&path);
    assert_eq!(j["totals"]["events"].as_u64(), Some(200), "{j}");
    // Only the events run are timed.
    assert_eq!(
        j["totals"]["latency_ms"]["count"].as_u64(),
        Some(100),
        "{j}"
    );
}

#[test]
fn sysbench_opt_and_cmdline_hold_what_sysbench_shows() {
    // The same command line through sysbench and through fleetbench over two agents: the
    // built-in options' values and types (lists as tables, 0.5's names beside 1.0's), the
    // script's own, sysbench.sql.error, ARG_MAX, command_defined/_parallel and thread_id.
    let script = fixture("opts/opts.lua");
    let (_a, _b, agents) = script_agents();
    let common = [
        "--threads=2",
        "--events=2",
        "--time=0",
        "--mysql-host=127.0.0.1,localhost",
        "--mysql-port=3307",
        "--mine=7",
        "--rand-spec-pct=3",
    ];
    let line = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("opts: "))
            .unwrap_or_else(|| panic!("no opts line:\n{out}"))
            .to_string()
    };
    let sb = run_tool(
        std::process::Command::new("sysbench")
            .arg(&script)
            .args(common)
            .arg("run"),
        "sysbench is installed (scripts/test.sh installs it): apt-get install sysbench",
    );
    let mut args: Vec<&str> = vec![&script];
    args.extend(common);
    args.extend(["--agents", &agents, "run"]);
    let fb = fleetbench_ok(&args);
    assert_eq!(line(&fb), line(&sb));
    // sysbench.cmdline.argv: the command line as typed, word by word.
    let argv = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("argv: "))
            .unwrap_or_else(|| panic!("no argv line:\n{out}"))
            .to_string()
    };
    let typed = |extra: &[&str]| {
        let mut w = vec!["argv: string", script.as_str()];
        w.extend(common);
        w.extend(extra);
        w.push("run");
        w.join(" ")
    };
    assert_eq!(argv(&sb), typed(&[]));
    assert_eq!(argv(&fb), typed(&["--agents", &agents]));
    // And the line says what it should, not only what both say.
    let l = line(&fb);
    for part in [
        "mine=number:7",
        "threads=number:2 num_threads=number:1",
        "rand_spec_pct=number:3",
        "mysql_host={string:127.0.0.1,string:localhost} mysql_port={string:3307}",
        "mysql_ignore_errors={string:1213,string:1020,string:1205}",
        "sql.error={number:0,number:1,number:2}",
        "defined={boolean:true,boolean:false,boolean:true}",
        "thread_id=number:0",
    ] {
        assert!(l.contains(part), "{part} in {l}");
    }
}

/// A script whose directory holds more `.lua` files than are shipped to the agents (issue
/// 57): refused in one line before anything starts, not run with a silent subset whose
/// `require` would fail on the agents.
#[test]
fn more_modules_than_are_shipped_are_refused_in_one_line() {
    let dir = fleetbench_tests::Scratch::new("lua-many-modules");
    let script = dir.write("main.lua", "function event() end\n");
    for i in 0..=fleetbench_model::workloads::script::files::MAX_FILES {
        dir.write(&format!("m{i:03}.lua"), "return {}\n");
    }
    let out = fleetbench_tests::fleetbench(&[script.to_str().unwrap(), "--time=1", "run"]);
    fleetbench_tests::expect_usage_error(
        &out,
        "257 modules beside a script",
        &["257 .lua files", "256 shipped", "main.lua"],
    );
}

/// A script error of many megabytes (issue 57), past the time limit on two agents: the run
/// ends with exit 1 and one error line cut to its documented size, not as a success and
/// not as a lost agent; both agents stay up and take the next run.
#[test]
fn a_huge_script_error_is_an_error_of_bounded_size() {
    let scratch = Scratch::new("lua-huge-error");
    let script = scratch.write(
        "huge_error.lua",
        "function event()\n  error(string.rep(\"E\", 20 * 2^20))\nend\n",
    );
    let (mut a, mut b, agents) = script_agents();
    let agents = format!("--agents={agents}");
    let script = script.to_string_lossy().into_owned();
    let out = fleetbench(&[&script, "--threads=2", "--time=1", &agents, "run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        &err[..err.len().min(2000)]
    );
    let line = err
        .lines()
        .find(|l| l.starts_with("error: run on agent"))
        .unwrap_or_else(|| panic!("no error line: {}", &err[..err.len().min(2000)]));
    assert!(line.contains("huge_error.lua:2: EEEE"), "{}", &line[..200]);
    let max = fleetbench_script::state::MAX_ERROR_BYTES + 200;
    assert!(line.len() < max, "the error line is {} bytes", line.len());
    assert!(
        line.contains("bytes in all; cut at"),
        "{}",
        &line[line.len() - 80..]
    );
    assert!(err.len() < 64 << 10, "stderr holds {} bytes", err.len());
    for agent in [&mut a, &mut b] {
        assert!(agent.child.try_wait().unwrap().is_none(), "an agent died");
    }
    let out = fleetbench(&["cpu", "--time=1", &agents, "run"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A script that keeps allocating (issue 57: distinct 16 MiB strings per event, some
/// 350 MB/s) is stopped at the agent's `--script-memory`: exit 1 with one error line
/// naming the script and the limit, the agent's peak within 1 GiB of the limit, and the
/// agent up, idle and taking the next run.
#[test]
fn a_script_past_the_agents_memory_bound_is_stopped_and_the_agent_stays_up() {
    let scratch = Scratch::new("lua-memory-hog");
    let script = scratch.write(
        "hog.lua",
        "local t = {}\nfunction event()\n  t[#t + 1] = string.rep(tostring(#t), 16 * 2^20)\nend\n",
    );
    let mut agent = AgentProc::start_with(&["--allow-scripts", "--script-memory=256M"], &[]);
    let agents = format!("--agents={}", agent.addr);
    let script = script.to_string_lossy().into_owned();
    let out = fleetbench(&[&script, "--threads=2", "--time=60", &agents, "run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        line.contains("hog.lua") && line.contains("--script-memory of 256 MiB"),
        "{line}"
    );
    let status = std::fs::read_to_string(format!("/proc/{}/status", agent.pid())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(
        peak_kib < (256 + 1024) << 10,
        "the agent peaked at {} MiB",
        peak_kib >> 10
    );
    assert!(agent.child.try_wait().unwrap().is_none(), "the agent died");
    assert_eq!(worker_threads(agent.pid()), 0, "workers left after the run");
    let out = fleetbench(&["cpu", "--time=1", &agents, "run"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
