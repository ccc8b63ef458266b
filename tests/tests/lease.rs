//! The Run stream is the lease: when the coordinator dies, the agent stops its load within a
//! second and is free for the next run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{
    AgentProc, Running, bin, cpu_ticks, expect_ok, hello, thread_count, wait_until,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_the_coordinator_stops_the_agents_load_within_a_second() {
    let agent = AgentProc::start();
    let pid = agent.pid();
    let idle_threads = thread_count(pid);
    let run = long_cpu_run(&agent.addr);
    let mut coordinator = run.child;
    assert_eq!(
        thread_count(pid),
        idle_threads + 2,
        "two worker threads run"
    );
    assert!(
        !hello(&agent.addr).await.0.is_empty(),
        "agent reports itself busy"
    );

    coordinator.kill().expect("SIGKILL");
    let killed = Instant::now();
    coordinator.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(1), || thread_count(pid) <= idle_threads),
        "worker threads still alive 1s after the coordinator died ({} threads)",
        thread_count(pid)
    );
    let stopped_after = killed.elapsed();
    // And the CPU use has dropped: well under one core over the next half second.
    let t0 = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let used = cpu_ticks(pid) - t0;
    assert!(
        used <= 10,
        "agent used {used} ticks in 0.5s after its coordinator died"
    );
    assert!(hello(&agent.addr).await.0.is_empty(), "agent idle again");
    eprintln!("load stopped {stopped_after:?} after SIGKILL");
}

#[test]
fn a_finished_run_leaves_the_agent_idle_for_the_next() {
    let agent = AgentProc::start();
    for _ in 0..2 {
        let out = fleetbench_tests::fleetbench(&[
            "cpu",
            "--agents",
            &agent.addr,
            "--events=50",
            "--time=0",
            "run",
        ]);
        expect_ok(&out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_agent_turns_a_second_coordinator_away_and_says_so() {
    let agent = AgentProc::start();
    let mut first = Command::new(bin("fleetbench"))
        .args([
            "cpu",
            "--agents",
            &agent.addr,
            "--threads=1",
            "--time=30",
            "run",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while hello(&agent.addr).await.0.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "first run never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let addr = agent.addr.clone();
    let (second, status, waited) = tokio::task::spawn_blocking(move || {
        let t0 = Instant::now();
        let second = fleetbench_tests::fleetbench(&["cpu", "--agents", &addr, "--time=1", "run"]);
        let waited = t0.elapsed();
        let status = fleetbench_tests::fleetbench(&["agents", "--agents", &addr]);
        (second, status, waited)
    })
    .await
    .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    // Answered at once (issue 17 row 14), not after waiting for the agent to come free.
    assert!(
        waited < Duration::from_secs(3),
        "turned away after {waited:?}"
    );
    assert!(
        err.contains(&format!("agent {} refused the run: busy: run ", agent.addr)),
        "{err}"
    );
    assert!(
        err.contains(" for ") && err.contains(" from 127.0.0.1:"),
        "{err}"
    );
    let listing = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0));
    assert!(
        listing.contains("busy: run ") && listing.contains(" from 127.0.0.1:"),
        "{listing}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
}

#[test]
fn fleetbench_stop_ends_another_coordinators_run() {
    let agent = AgentProc::start();
    let run = long_cpu_run(&agent.addr);
    let t0 = Instant::now();
    let out = fleetbench_tests::fleetbench(&["stop", "--agents", &agent.addr]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        said.contains(&format!("{}: stopped run ", agent.addr)),
        "{said}"
    );
    let (code, rest) = run.finish();
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "the run ended promptly"
    );
    assert_eq!(code, Some(3), "an agent stopped early");
    assert!(
        rest.contains("stopped early: stopped by 127.0.0.1:"),
        "{rest}"
    );
    assert!(
        rest.contains("total number of events:"),
        "the report is still printed: {rest}"
    );
    let out = fleetbench_tests::fleetbench(&["stop", "--agents", &agent.addr]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(": idle"));
}

/// A minute of cpu load on `addr`, two threads, returned once its first interval is out.
fn long_cpu_run(addr: &str) -> Running {
    Running::until_first_interval(&[
        "cpu",
        "--agents",
        addr,
        "--threads=2",
        "--time=60",
        "--report-interval=1",
        "run",
    ])
}

#[test]
fn sigkill_of_the_coordinator_ends_an_open_loop_oltp_run_within_a_second() {
    // Open-loop workers share a cooperative thread; the lease still ends them, sockets
    // and all, within a second.
    let db = fleetbench_tests::mariadb::MariaDb::prepared(&[
        "oltp_point_select",
        "--tables=1",
        "--table-size=1000",
    ]);
    let agent = AgentProc::start_with(&[], &[("FLEETBENCH_OPEN_LOOP_THREADS", "1")]);
    let pid = agent.pid();
    // The agent's own sockets: its listener and gRPC connections, then its run's.
    let sockets = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|l| l.to_string_lossy().starts_with("socket:"))
            .count()
    };
    let idle_threads = thread_count(pid);
    let args = db.args(&[
        "oltp_point_select",
        "--tables=1",
        "--table-size=1000",
        "--threads=8",
        "--rate=2000",
        "--time=60",
        "--report-interval=1",
        "--agents",
        &agent.addr,
        "run",
    ]);
    let idle_sockets = sockets();
    let mut coordinator = Running::until_first_interval(&args).child;
    // One cooperative thread, and the one that reads the server's status each interval.
    assert_eq!(
        thread_count(pid),
        idle_threads + 2,
        "one cooperative thread and the server status reader"
    );
    let running_sockets = sockets();
    assert!(
        running_sockets >= idle_sockets + 8,
        "8 database connections: {idle_sockets} sockets before, {running_sockets} during"
    );
    coordinator.kill().expect("SIGKILL");
    let killed = Instant::now();
    coordinator.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(1), || thread_count(pid) <= idle_threads
            && sockets() <= running_sockets - 8),
        "1 s after the coordinator died: {} agent threads, {} sockets (during the run {running_sockets})",
        thread_count(pid),
        sockets()
    );
    eprintln!("open loop stopped {:?} after SIGKILL", killed.elapsed());
}
