//! Signals as operators send them (issue 17, rows 6 and 7): SIGTERM to an agent stops its
//! load and closes its database connections at once, then the agent exits; SIGTERM or SIGHUP
//! to the coordinator stops the run like Ctrl-C, with the partial report printed and saved.

use std::time::Duration;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Running, Scratch, fleetbench_ok, json, wait_until};

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

#[test]
fn sigterm_to_an_agent_mid_oltp_closes_its_connections_and_it_exits() {
    let db = MariaDb::start();
    let mut agent = AgentProc::start();
    let with_db = |parts: &[&str]| -> Vec<String> {
        parts
            .iter()
            .map(|s| s.to_string())
            .chain(db.fleetbench_args())
            .chain(["--agents".to_string(), agent.addr.clone()])
            .collect()
    };
    fleetbench_ok(&with_db(&[
        "oltp_point_select",
        "--table-size=100",
        "prepare",
    ]));
    let run = Running::until_first_interval(&with_db(&[
        "oltp_point_select",
        "--table-size=100",
        "--threads=4",
        "--time=60",
        "--report-interval=1",
        "run",
    ]));
    let conns = || {
        db.sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user='sbtest'")
            .trim()
            .parse::<u32>()
            .unwrap()
    };
    assert!(conns() >= 4, "the workers are connected");
    signal(agent.pid(), libc::SIGTERM);
    assert!(
        wait_until(Duration::from_secs(2), || conns() == 0),
        "connections still open 2 s after SIGTERM: {}",
        conns()
    );
    assert!(
        wait_until(Duration::from_secs(5), || agent
            .child
            .try_wait()
            .unwrap()
            .is_some()),
        "the agent did not exit after SIGTERM"
    );
    // The coordinator reports what ran, with the agent stopped early (exit 3).
    let (code, out) = run.finish();
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("shutting down"), "{out}");
}

#[test]
fn sigterm_and_sighup_to_the_coordinator_stop_the_run_like_ctrl_c() {
    let scratch = Scratch::new("signals");
    for (name, sig) in [("term", libc::SIGTERM), ("hup", libc::SIGHUP)] {
        let path = scratch.path(&format!("{name}.json"));
        let run = Running::until_first_interval(&[
            "cpu",
            "--time=60",
            "--report-interval=1",
            "--json",
            path.to_str().unwrap(),
            "run",
        ]);
        signal(run.child.id(), sig);
        let (code, out) = run.finish();
        assert_eq!(code, Some(3), "{name}: {out}");
        assert!(out.contains("Run interrupted"), "{name}: {out}");
        assert!(out.contains("total number of events"), "{name}: {out}");
        assert_eq!(json(&path)["interrupted"], true, "{name}");
    }
}
