//! Signals as operators send them (issue 17, rows 6 and 7): SIGTERM to an agent stops its
//! load and closes its database connections at once, then the agent exits; SIGTERM or SIGHUP
//! to the coordinator stops the run like Ctrl-C, with the partial report printed and saved.
//! An interrupted prepare (issue 42) stops on the agents and says which tables are complete,
//! partial or not started, and the cleanup command; a coordinator that dies mid-prepare
//! stops the agent's loading within a second.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Running, Scratch, bin, fleetbench_ok, hello, json, wait_until};

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

/// A private MariaDB server and an agent to load it.
struct DbAndAgent {
    db: MariaDb,
    agent: AgentProc,
}

impl DbAndAgent {
    fn start() -> Self {
        DbAndAgent {
            db: MariaDb::start(),
            agent: AgentProc::start(),
        }
    }

    /// A coordinator command line: `parts`, the agent, `command`, then the server's
    /// `--mysql-*` options.
    fn args(&self, parts: &[&str], command: &str) -> Vec<String> {
        self.db
            .args(&[parts, &["--agents", &self.agent.addr, command]].concat())
    }

    /// The connections the load (the sbtest user) has open to the server.
    fn user_conns(&self) -> u32 {
        self.db
            .sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user='sbtest'")
            .trim()
            .parse()
            .unwrap()
    }
}

/// Starts `fleetbench ARGS` in the background, its stdout and stderr captured.
fn spawn_fleetbench(args: &[String]) -> Child {
    Command::new(bin("fleetbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fleetbench")
}

/// Sends `sig` to the coordinator `child` of a table job and waits for its end, which must
/// be exit code 1 (a job that failed once it ran) with each of `parts` on stderr; its
/// stderr (shown in the test's output too) and the time from the signal to the end.
fn interrupt(child: Child, sig: i32, parts: &[&str]) -> (String, Duration) {
    let t0 = Instant::now();
    signal(child.id(), sig);
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("the coordinator said, {took:?} after signal {sig}:\n{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    for part in parts {
        assert!(err.contains(part), "missing {part:?} in:\n{err}");
    }
    (err, took)
}

#[test]
fn sigterm_to_an_agent_mid_oltp_closes_its_connections_and_it_exits() {
    let mut s = DbAndAgent::start();
    fleetbench_ok(&s.args(&["oltp_point_select", "--table-size=100"], "prepare"));
    let run = Running::until_first_interval(&s.args(
        &[
            "oltp_point_select",
            "--table-size=100",
            "--threads=4",
            "--time=60",
            "--report-interval=1",
        ],
        "run",
    ));
    assert!(s.user_conns() >= 4, "the workers are connected");
    signal(s.agent.pid(), libc::SIGTERM);
    assert!(
        wait_until(Duration::from_secs(2), || s.user_conns() == 0),
        "connections still open 2 s after SIGTERM: {}",
        s.user_conns()
    );
    assert!(
        wait_until(Duration::from_secs(5), || s
            .agent
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

#[test]
fn an_interrupted_prepare_says_what_is_partial_and_how_to_clean_up() {
    let s = DbAndAgent::start();
    // Four tables over two loading connections, each far too big to finish in the time the
    // test waits: sbtest1 and sbtest2 are being loaded, sbtest3 and sbtest4 not begun.
    let args = |command: &str| {
        s.args(
            &[
                "oltp_read_write",
                "--tables=4",
                "--table-size=2000000",
                "--threads=2",
            ],
            command,
        )
    };
    let loading = || {
        s.db.sql(
            "SELECT COUNT(*) FROM information_schema.tables \
             WHERE table_schema='sbtest' AND table_name IN ('sbtest1','sbtest2')",
        )
        .trim()
            == "2"
    };
    let start = || {
        let child = spawn_fleetbench(&args("prepare"));
        assert!(
            wait_until(Duration::from_secs(30), loading),
            "the prepare did not begin loading"
        );
        // Rows are going in.
        std::thread::sleep(Duration::from_millis(500));
        assert!(s.user_conns() >= 2, "the loaders are connected");
        child
    };

    // The coordinator killed outright: the agent notices the broken stream and stops
    // loading, its connections closed within about a second.
    let mut child = start();
    signal(child.id(), libc::SIGKILL);
    let _ = child.wait();
    let t0 = Instant::now();
    assert!(
        wait_until(Duration::from_millis(1500), || s.user_conns() == 0),
        "the agent still loads {:?} after the coordinator died: {} connections",
        t0.elapsed(),
        s.user_conns()
    );
    // And is free for the next command within the second too.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(1), || rt
            .block_on(hello(&s.agent.addr))
            .0
            .is_empty()),
        "the agent is still busy {:?} after the coordinator died",
        t0.elapsed()
    );
    fleetbench_ok(&args("cleanup"));

    // Ctrl-C: the agents are stopped, and the coordinator says where each table stands.
    let (err, took) = interrupt(
        start(),
        libc::SIGINT,
        &[
            "prepare interrupted by SIGINT before it finished",
            &format!("agent {}: stopped before it finished", s.agent.addr),
            "complete: none",
            "partial: sbtest1 on default, sbtest2 on default",
            "not started: sbtest3 on default, sbtest4 on default",
            "to drop what was created: ",
        ],
    );
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    // The cleanup command is this command line with cleanup for prepare (password masked).
    let cleanup_line = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("to drop what was created: "))
        .unwrap();
    assert!(
        cleanup_line.contains("--tables=4") && cleanup_line.contains(" cleanup"),
        "{cleanup_line}"
    );
    assert!(!cleanup_line.contains(" prepare"), "{cleanup_line}");
    assert!(!cleanup_line.contains("sbtest-pw"), "{cleanup_line}");
    // The agent is idle at once: no connection left, and the cleanup runs straight away.
    assert!(
        wait_until(Duration::from_secs(1), || s.user_conns() == 0),
        "connections left after the interrupted prepare: {}",
        s.user_conns()
    );
    fleetbench_ok(&args("cleanup"));
    assert_eq!(
        s.db.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest'")
            .trim(),
        "0"
    );
}

#[test]
fn an_interrupted_tpcc_load_says_the_tables_are_partial() {
    let s = DbAndAgent::start();
    let args = |command: &str| s.args(&["tpcc", "--warehouses=8", "--threads=2"], command);
    let child = spawn_fleetbench(&args("prepare"));
    // The nine tables exist and rows are going into them: the load step runs.
    assert!(
        wait_until(Duration::from_secs(30), || {
            // Rows in any of the nine (the table statistics lag; a row counted is enough).
            s.db.sql(
                "SELECT COUNT(*) FROM information_schema.tables \
                 WHERE table_schema='sbtest' AND table_name IN ('item','stock','customer') \
                 AND data_length > 16384",
            )
            .trim()
                != "0"
        }),
        "the TPC-C load did not begin"
    );
    interrupt(
        child,
        libc::SIGTERM,
        &[
            "prepare interrupted by SIGTERM before it finished",
            "complete: none; partial (loading stopped; last reported ",
            "rows of 8 warehouses): warehouse, district,",
            "to drop what was created: ",
            " cleanup",
        ],
    );
    fleetbench_ok(&args("cleanup"));
}

/// An interrupted sweep (issue 57): the step that was running says so in its line and in
/// its row of the table, as its JSON does, and the steps after it are not run.
#[test]
fn an_interrupted_sweep_step_is_marked_in_its_line_and_its_row() {
    let scratch = Scratch::new("signals-sweep");
    let path = scratch.path("sweep.json");
    let run = Running::until_first_interval(&[
        "cpu",
        "--threads=1,2",
        "--time=60",
        "--report-interval=1",
        "--json",
        path.to_str().unwrap(),
        "run",
    ]);
    signal(run.child.id(), libc::SIGINT);
    let (code, out) = run.finish();
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains(
            "step 1/2: 1 thread: interrupted: the figures above cover the time until the interrupt"
        ),
        "{out}"
    );
    assert!(
        !out.contains("step 2/2"),
        "a step after the interrupt ran: {out}"
    );
    let row = out
        .lines()
        .skip_while(|l| !l.starts_with("threads"))
        .nth(1)
        .unwrap_or_else(|| panic!("no table row: {out}"));
    assert!(
        row.trim_start().starts_with("1 ") && row.ends_with("  interrupted"),
        "{row}"
    );
    let doc = json(&path);
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["steps"][0]["summary"]["interrupted"], true, "{doc}");
}
