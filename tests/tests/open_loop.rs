//! Open-loop load (`--rate`) end to end: real agent processes pace their share of the
//! rate, latency counts from each event's arrival (so a stall shows in it), service time
//! does not, and the queue is reported as sysbench does.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Running, Scratch, json, run_json, words};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The `queue length: N` of every `[ Ns ] queue length: N, concurrency: M` line.
fn queue_lines(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.split_once("] queue length: "))
        .map(|(_, rest)| rest.split(',').next().unwrap().trim().parse().unwrap())
        .collect()
}

#[test]
fn a_rate_below_capacity_is_met_over_two_agents() {
    let (_a, _b, agents) = AgentProc::pair();
    let dir = Scratch::new("open-loop-cpu");
    let (text, j) = run_json(
        &words(&format!(
            "cpu --agents {agents} --threads=4 --rate=4000 --time=10 --report-interval=1 \
             --cpu-max-prime=500"
        )),
        &dir.path("rate.json"),
    );
    assert_eq!(f(&j["config"]["rate"]), 4000.0);
    let open = &j["totals"]["open_loop"];
    let achieved = f(&open["events_per_sec"]);
    // Poisson arrivals: 40,000 expected in 10 s, a standard deviation of 0.5 %.
    assert!(
        (achieved / 4000.0 - 1.0).abs() < 0.02,
        "achieved {achieved}/s:\n{text}"
    );
    assert_eq!(open["rate_reached"], true, "{text}");
    let arrivals = u(&open["arrivals"]);
    let events = u(&j["totals"]["events"]);
    // Far below capacity, nearly every arrival ran: at most a handful were queued when
    // the time was up.
    assert!(
        arrivals >= events && arrivals - events < 50,
        "{arrivals} {events}"
    );
    assert!(u(&open["queue_length_end"]) < 50);

    // Each agent ran its half of the rate (2 threads of 4).
    for ag in j["agents"].as_array().unwrap() {
        let r = f(&ag["events_per_sec"]);
        assert!((r / 2000.0 - 1.0).abs() < 0.05, "agent at {r}/s");
        assert!(ag["open_loop"]["service_ms"]["count"].as_u64().unwrap() > 0);
    }
    // The intervals add up: arrivals and service-time samples.
    let iv = j["intervals"].as_array().unwrap();
    let iv_arrivals: u64 = iv.iter().map(|i| u(&i["open_loop"]["arrivals"])).sum();
    assert_eq!(iv_arrivals, arrivals);
    let iv_service: u64 = iv
        .iter()
        .map(|i| u(&i["open_loop"]["service_ms"]["count"]))
        .sum();
    assert_eq!(iv_service, events);

    // With threads free, latency is service time plus the wake-up: close to it.
    let lat = &j["totals"]["latency_ms"];
    let svc = &open["service_ms"];
    assert!(f(&lat["p50"]) >= f(&svc["p50"]), "{lat} {svc}");
    assert!(f(&lat["p50"]) - f(&svc["p50"]) < 1.0, "{lat} {svc}");
    assert!(f(&lat["avg"]) - f(&svc["avg"]) < 1.0, "{lat} {svc}");

    // sysbench's lines: the header's rate, a queue line under each interval line, and
    // the open-loop block with service time.
    assert!(text.contains("Target transaction rate: 4000/sec"), "{text}");
    assert_eq!(queue_lines(&text).len(), iv.len(), "{text}");
    assert!(text.contains("Open loop (--rate=4000):"), "{text}");
    assert!(
        text.contains("service time (ms, from a thread taking the event):"),
        "{text}"
    );
    assert!(!text.contains("not reached"), "{text}");
}

#[test]
fn a_rate_above_capacity_says_it_was_not_reached() {
    let dir = Scratch::new("open-loop-over");
    // One thread at ~1 ms per event cannot run 5,000 events a second.
    let (text, j) = run_json(
        &words("cpu --threads=1 --rate=5000 --time=3 --report-interval=1 --cpu-max-prime=20000"),
        &dir.path("over.json"),
    );
    let open = &j["totals"]["open_loop"];
    assert_eq!(open["rate_reached"], false, "{text}");
    assert!(text.contains("WARNING: the target rate was not reached: 5000 events/s asked for"));
    let queue = queue_lines(&text);
    assert!(
        queue.windows(2).all(|w| w[1] >= w[0]) && queue[queue.len() - 1] > 1000,
        "the queue grows: {queue:?}"
    );
    // Every arrival was run, is still queued, or is the one event the thread had taken
    // when the time was up (cut short at the deadline: neither run nor queued).
    let untaken = u(&open["arrivals"]) - u(&j["totals"]["events"]);
    let queued = u(&open["queue_length_end"]);
    assert!(
        untaken == queued || untaken == queued + 1,
        "arrivals - events {untaken}, queued {queued}"
    );
    // Waiting is in the latency, not in the service time.
    assert!(f(&j["totals"]["latency_ms"]["p99"]) > 100.0 * f(&open["service_ms"]["p99"]));
}

#[test]
fn an_event_limit_ends_an_open_loop_run() {
    let dir = Scratch::new("open-loop-events");
    let (_, j) = run_json(
        &words(
            "cpu --local-agents=2 --threads=2 --rate=1000 --events=400 --time=0 --cpu-max-prime=500",
        ),
        &dir.path("events.json"),
    );
    assert_eq!(u(&j["totals"]["events"]), 400);
    // 400 events at 1,000 a second take about 0.4 s.
    let t = f(&j["totals"]["time_s"]);
    assert!((0.25..1.5).contains(&t), "{t}");
}

#[test]
fn a_stall_shows_in_latency_and_queue_but_not_in_service_time() {
    let db = MariaDb::prepared(&["oltp_point_select", "--tables=1", "--table-size=1000"]);
    let conn = db.fleetbench_args();
    let dir = Scratch::new("open-loop-stall");
    let out_json = dir.path("stall.json");
    let mut args: Vec<String> = vec![
        "oltp_point_select".into(),
        "--tables=1".into(),
        "--table-size=1000".into(),
        "--threads=4".into(),
        "--rate=300".into(),
        "--time=8".into(),
        "--report-interval=1".into(),
        "--local-agents=2".into(),
        format!("--json={}", out_json.display()),
    ];
    args.extend(conn.iter().cloned());
    args.push("run".into());
    let run = Running::until_first_interval(&args);
    // Another session holds the table for 2 s: every statement on it waits.
    let t0 = Instant::now();
    let locker = Command::new("mariadb")
        .args(["--no-defaults", "-uroot", "-S"])
        .arg(db.socket())
        .args([
            "-e",
            "LOCK TABLES sbtest.sbtest1 WRITE; SELECT SLEEP(2); UNLOCK TABLES",
        ])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(locker.success());
    assert!(t0.elapsed() >= Duration::from_secs(2));
    let (code, text) = run.finish();
    assert_eq!(code, Some(0), "{text}");
    let j = json(&out_json);
    let open = &j["totals"]["open_loop"];
    // About 600 of some 2,400 events arrived during the stall and waited up to 2 s.
    let p99 = f(&j["totals"]["latency_ms"]["p99"]);
    assert!(p99 > 1500.0, "latency p99 {p99} ms:\n{text}");
    // Only the 4 statements caught inside the lock took long to serve.
    let svc99 = f(&open["service_ms"]["p99"]);
    assert!(svc99 < 200.0, "service p99 {svc99} ms:\n{text}");
    assert!(f(&open["service_ms"]["max"]) > 1500.0, "{open}");
    // The queue rose in the interval lines while the table was locked, and drained after.
    let queue = queue_lines(&text);
    assert!(queue.iter().any(|&q| q >= 100), "{queue:?}\n{text}");
    assert!(*queue.last().unwrap() < 20, "{queue:?}");
    let peak = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| u(&i["open_loop"]["queue_length"]))
        .max()
        .unwrap();
    assert_eq!(peak, *queue.iter().max().unwrap());
    // The backlog was worked off: the rate was reached over the run.
    assert_eq!(open["rate_reached"], true, "{text}");
    let achieved = f(&open["events_per_sec"]);
    assert!((achieved / 300.0 - 1.0).abs() < 0.1, "{achieved}");
}

#[test]
fn cooperative_workers_run_transactions_as_threads_do() {
    // An open loop's OLTP workers share cooperative threads (FLEETBENCH_OPEN_LOOP_THREADS,
    // here one) unless told to take one OS thread each (0). Either way every statement of
    // every transaction runs, the rate is met and the server sees what the report says.
    let db = MariaDb::prepared(&["oltp_read_write", "--tables=2", "--table-size=1000"]);
    let dir = Scratch::new("open-loop-coop");
    let mut threads_seen = Vec::new();
    for loops in ["1", "0"] {
        let agent = AgentProc::start_with(&[], &[("FLEETBENCH_OPEN_LOOP_THREADS", loops)]);
        let out_json = dir.path(&format!("coop-{loops}.json"));
        let json_opt = format!("--json={}", out_json.display());
        let args = db.args(&[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--threads=16",
            "--rate=150",
            "--time=4",
            "--report-interval=1",
            "--agents",
            &agent.addr,
            &json_opt,
            "run",
        ]);
        let selects = db.status("Com_select");
        let run = Running::until_first_interval(&args);
        threads_seen.push(fleetbench_tests::thread_count(agent.pid()));
        let (code, text) = run.finish();
        assert_eq!(code, Some(0), "{text}");
        let j = json(&out_json);
        let sql = &j["totals"]["sql"];
        let tx = u(&sql["transactions"]);
        let counts = [u(&sql["reads"]), u(&sql["writes"]), u(&sql["others"])];
        if u(&sql["ignored_errors"]) == 0 {
            assert_eq!(counts, [14 * tx, 4 * tx, 2 * tx], "{sql}");
        } else {
            // A deadlock's statements count, and its transaction runs again.
            assert!(
                counts[0] >= 14 * tx && counts[1] >= 4 * tx && counts[2] >= 2 * tx,
                "{sql}"
            );
        }
        assert_eq!(db.status("Com_select") - selects, u(&sql["reads"]));
        let open = &j["totals"]["open_loop"];
        assert_eq!(open["rate_reached"], true, "{text}");
        let achieved = f(&open["events_per_sec"]);
        assert!((achieved / 150.0 - 1.0).abs() < 0.2, "{achieved}");
    }
    // Sixteen workers on one thread, against sixteen threads of their own.
    assert!(
        threads_seen[1] >= threads_seen[0] + 15,
        "agent threads with one cooperative thread, and with a thread per worker: {threads_seen:?}"
    );
}

#[test]
fn a_bad_open_loop_thread_count_is_one_clear_error() {
    let db = MariaDb::prepared(&["oltp_point_select", "--tables=1", "--table-size=100"]);
    let agent = AgentProc::start_with(&[], &[("FLEETBENCH_OPEN_LOOP_THREADS", "many")]);
    let args = db.args(&[
        "oltp_point_select",
        "--tables=1",
        "--table-size=100",
        "--rate=100",
        "--time=1",
        "--agents",
        &agent.addr,
        "run",
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = fleetbench_tests::fleetbench(&args);
    // A setting the run cannot start with: exit 2, as for other setup errors.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("fleetbench: error:"))
        .unwrap_or_else(|| panic!("no error line in {err}"));
    assert!(
        line.contains("FLEETBENCH_OPEN_LOOP_THREADS must be a whole number"),
        "{line}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
}
