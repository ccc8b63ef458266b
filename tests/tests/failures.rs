//! A run survives the loss of its parts without losing results: a killed agent is marked
//! lost while the others finish; Ctrl-C stops every agent and still prints and saves the
//! report; a database restart costs reconnects, not the run; work stuck past the run's time
//! is cancelled at the hard deadline.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Running, Scratch, fleetbench, hello, json};

/// `words` followed by the options that point fleetbench at `db` (1,000-row tables).
fn oltp(db: &MariaDb, words: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    a.extend(db.fleetbench_args());
    a.push("--table-size=1000".into());
    a
}

fn prepare(db: &MariaDb, script: &str) {
    let out = fleetbench(
        &oltp(db, &[script, "prepare"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_killed_agent_is_marked_lost_and_the_others_finish() {
    let agents: Vec<AgentProc> = (0..3).map(|_| AgentProc::start()).collect();
    let list = agents
        .iter()
        .map(|a| a.addr.clone())
        .collect::<Vec<_>>()
        .join(",");
    let scratch = Scratch::new("lost");
    let out = scratch.path("r.json");
    let run = Running::until_first_interval(&[
        "cpu",
        "--agents",
        &list,
        "--threads=3",
        "--time=4",
        "--report-interval=1",
        "--cpu-max-prime=2000",
        "--json",
        out.to_str().unwrap(),
        "run",
    ]);
    let mut agents = agents.into_iter();
    let (a, mut b, c) = (
        agents.next().unwrap(),
        agents.next().unwrap(),
        agents.next().unwrap(),
    );
    b.child.kill().unwrap();
    b.child.wait().unwrap();
    let (code, text) = run.finish();
    assert_eq!(code, Some(3), "an agent was lost: {text}");
    assert!(
        text.contains(&format!("WARNING: agent {} was lost", b.addr)),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains(&b.addr) && l.ends_with("LOST")),
        "{text}"
    );
    let j = json(&out);
    let agents = j["agents"].as_array().unwrap();
    assert_eq!(agents[1]["status"], "lost");
    for (i, addr) in [(0, &a.addr), (2, &c.addr)] {
        assert_eq!(agents[i]["addr"].as_str().unwrap(), addr.as_str());
        assert_eq!(agents[i]["status"], "completed");
        assert!(agents[i]["events"].as_u64().unwrap() > 0);
    }
    assert_eq!(j["totals"]["agents_lost"], 1);
    // The lost agent's share of the totals is what its intervals reported, no more, no
    // less, and its status says which part of the run that covers.
    let lost_events = agents[1]["events"].as_u64().unwrap();
    let in_intervals: u64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|iv| iv["agent_events"][1].as_u64())
        .sum();
    assert!(lost_events > 0, "{}", agents[1]);
    assert_eq!(lost_events, in_intervals, "{}", agents[1]);
    let summed: u64 = agents.iter().map(|a| a["events"].as_u64().unwrap()).sum();
    assert_eq!(j["totals"]["events"].as_u64().unwrap(), summed);
    assert!(text.contains("interval report(s)"), "{text}");
    // Intervals went on without the lost agent.
    let last = j["intervals"].as_array().unwrap().last().unwrap().clone();
    assert!(last["agent_events"][1].is_null(), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_every_agent_and_still_reports() {
    let agents = [AgentProc::start(), AgentProc::start()];
    let list = format!("{},{}", agents[0].addr, agents[1].addr);
    let scratch = Scratch::new("sigint");
    let out = scratch.path("r.json");
    let out_s = out.to_str().unwrap().to_string();
    let run = tokio::task::spawn_blocking(move || {
        Running::until_first_interval(&[
            "cpu",
            "--agents",
            &list,
            "--threads=2",
            "--time=60",
            "--report-interval=1",
            "--json",
            &out_s,
            "run",
        ])
    })
    .await
    .unwrap();
    let t0 = Instant::now();
    // SAFETY: kill(2) with the pid of our own child process and a plain signal number.
    unsafe { libc::kill(run.child.id() as i32, libc::SIGINT) };
    let (code, text) = run.finish();
    assert!(t0.elapsed() < Duration::from_secs(5), "stopped promptly");
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("Run interrupted") && text.contains("total number of events:"),
        "{text}"
    );
    let j = json(&out);
    assert_eq!(j["interrupted"], true);
    assert!(j["totals"]["events"].as_u64().unwrap() > 0);
    for a in &agents {
        assert!(
            hello(&a.addr).await.0.is_empty(),
            "agent {} idle after the interrupt",
            a.addr
        );
    }
}

#[test]
fn a_database_restart_costs_reconnects_not_the_run() {
    let mut db = MariaDb::start();
    prepare(&db, "oltp_read_write");
    let scratch = Scratch::new("restart");
    let out = scratch.path("r.json");
    let run = Running::until_first_interval(&oltp(
        &db,
        &[
            "oltp_read_write",
            "--threads=2",
            "--time=6",
            "--report-interval=1",
            "--json",
            out.to_str().unwrap(),
            "run",
        ],
    ));
    db.restart();
    let (code, text) = run.finish();
    assert_eq!(code, Some(0), "{text}");
    let j = json(&out);
    let sql = &j["totals"]["sql"];
    assert!(
        sql["reconnects"].as_u64().unwrap() >= 2,
        "both workers reconnected: {sql}"
    );
    // Load went on after the restart: the last interval has transactions.
    let iv = j["intervals"].as_array().unwrap();
    assert!(iv.last().unwrap()["events"].as_u64().unwrap() > 0, "{iv:?}");
}

/// Runs a 2 s point-select load with `extra` options, then locks its table from another
/// session so that every worker blocks; returns the exit code, the output and how long the
/// run took to end after the lock.
fn stuck_run(db: &MariaDb, extra: &[&str]) -> (Option<i32>, String, Duration) {
    prepare(db, "oltp_point_select");
    let mut args = vec![
        "oltp_point_select",
        "--threads=2",
        "--time=2",
        "--report-interval=1",
    ];
    args.extend(extra);
    args.push("run");
    let run = Running::until_first_interval(&oltp(db, &args));
    // Another session takes the table away: every worker blocks in its next statement.
    let mut locker = Command::new("mariadb")
        .args([
            "--no-defaults",
            "-uroot",
            "-S",
            db.socket().to_str().unwrap(),
            "-e",
        ])
        .arg("LOCK TABLES sbtest.sbtest1 WRITE; SELECT SLEEP(60)")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let (code, text) = run.finish();
    let _ = locker.kill();
    let _ = locker.wait();
    (code, text, t0.elapsed())
}

#[test]
fn workers_stuck_past_the_runs_time_are_cancelled_at_the_hard_deadline() {
    let db = MariaDb::start();
    let (code, text, waited) = stuck_run(&db, &[]);
    assert!(
        waited < Duration::from_secs(20),
        "ended {waited:?} after the lock"
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("hard deadline"), "{text}");
}

#[test]
fn forced_shutdown_stops_stuck_workers_before_the_hard_deadline() {
    let db = MariaDb::start();
    let (code, text, waited) = stuck_run(&db, &["--forced-shutdown=1"]);
    // 2 s of run time and 1 s of grace, well before the agents' own 10 s hard deadline.
    assert!(
        waited < Duration::from_secs(8),
        "ended {waited:?} after the lock:\n{text}"
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("forced shutdown 1s after the run's time (--forced-shutdown)"),
        "{text}"
    );
}
