//! A run survives the loss of its parts without losing results: a killed agent is marked
//! lost while the others finish; Ctrl-C stops every agent and still prints and saves the
//! report; a database restart costs reconnects, not the run.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Scratch, bin, hello};
use serde_json::Value;

/// Starts the coordinator and returns it once its first interval line is out.
fn start_run(
    args: &[&str],
) -> (
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let mut child = Command::new(bin("fleetbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let t0 = Instant::now();
    loop {
        let line = lines.next().expect("coordinator output").unwrap();
        if line.starts_with("[ 1s ]") {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20));
    }
    (child, lines)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("json written")).expect("valid json")
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
    let (mut child, lines) = start_run(&[
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
    let mut victim = agents.into_iter();
    let (a, mut b, c) = (
        victim.next().unwrap(),
        victim.next().unwrap(),
        victim.next().unwrap(),
    );
    b.child.kill().unwrap();
    b.child.wait().unwrap();
    let text: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "an agent was lost: {text:?}");
    let text = text.join("\n");
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
    let (mut child, lines) = tokio::task::spawn_blocking(move || {
        start_run(&[
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
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let text: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "stopped promptly");
    let text = text.join("\n");
    assert_eq!(status.code(), Some(3), "{text}");
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
    let o = [
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", db.port()),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest-pw".into(),
        "--table-size=1000".into(),
    ];
    let prep = fleetbench_tests::fleetbench(&[
        "oltp_read_write",
        &o[0],
        &o[1],
        &o[2],
        &o[3],
        &o[4],
        "prepare",
    ]);
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stderr)
    );
    let scratch = Scratch::new("restart");
    let out = scratch.path("r.json");
    let (mut child, lines) = start_run(&[
        "oltp_read_write",
        &o[0],
        &o[1],
        &o[2],
        &o[3],
        &o[4],
        "--threads=2",
        "--time=6",
        "--report-interval=1",
        "--json",
        out.to_str().unwrap(),
        "run",
    ]);
    db.restart();
    let text: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{text:?}");
    let j = json(&out);
    let sql = &j["totals"]["sql"];
    assert!(
        sql["reconnects"].as_u64().unwrap() >= 2,
        "both workers reconnected: {sql}"
    );
    // Load went on after the restart: the last intervals have transactions.
    let iv = j["intervals"].as_array().unwrap();
    assert!(iv.last().unwrap()["events"].as_u64().unwrap() > 0, "{iv:?}");
}

#[test]
fn workers_stuck_past_the_runs_time_are_cancelled_at_the_hard_deadline() {
    let db = MariaDb::start();
    let o = [
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", db.port()),
        "--mysql-user=sbtest".into(),
        "--mysql-password=sbtest-pw".into(),
        "--table-size=1000".into(),
    ];
    let prep = fleetbench_tests::fleetbench(&[
        "oltp_point_select",
        &o[0],
        &o[1],
        &o[2],
        &o[3],
        &o[4],
        "prepare",
    ]);
    assert!(prep.status.success());
    let (mut child, lines) = start_run(&[
        "oltp_point_select",
        &o[0],
        &o[1],
        &o[2],
        &o[3],
        &o[4],
        "--threads=2",
        "--time=2",
        "--report-interval=1",
        "run",
    ]);
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
    let text: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    let _ = locker.kill();
    let _ = locker.wait();
    let waited = t0.elapsed();
    let text = text.join("\n");
    assert!(
        waited < Duration::from_secs(20),
        "ended {waited:?} after the lock"
    );
    assert_eq!(status.code(), Some(3), "{text}");
    assert!(text.contains("hard deadline"), "{text}");
}
