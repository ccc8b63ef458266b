//! Scale of one agent: thousands of database connections within the memory budget (128 MiB
//! of peak RSS per 1,000 connections), progress while they open, and a run too big for the
//! agent's open-files limit refused before any connection is opened.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Scratch, expect_ok, fleetbench, json};

/// Peak resident memory of a process, in KiB (VmHWM).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("agent status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status"))
}

fn args<'a>(db: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = rest.to_vec();
    v.extend(db.iter().map(String::as_str));
    v
}

#[test]
fn two_thousand_connections_stay_within_128_mib_per_thousand() {
    const CONNS: u64 = 2_000;
    let db = MariaDb::start_with(&[
        "--max-connections=2200",
        "--thread-handling=pool-of-threads",
        "--max-prepared-stmt-count=100000",
    ]);
    let conn = db.fleetbench_args();
    let scratch = Scratch::new("scale-2000");
    let prep = ["oltp_point_select", "--tables=2", "--table-size=1000"];
    expect_ok(&fleetbench(&args(
        &conn,
        &[&prep[..], &["prepare"]].concat(),
    )));
    let agent = AgentProc::start();
    let json_path = scratch.path("run.json");
    let json_arg = format!("--json={}", json_path.display());
    let threads = format!("--threads={CONNS}");
    let out = fleetbench(&args(
        &conn,
        &[
            &prep[..],
            &[
                "--agents",
                &agent.addr,
                &threads,
                "--time=3",
                "--ready-timeout=60",
            ],
            &[&json_arg, "run"],
        ]
        .concat(),
    ));
    let stdout = expect_ok(&out);
    let peak_mib = peak_rss_kib(agent.pid()) / 1024;
    let budget_mib = 128 * CONNS / 1000;
    assert!(
        peak_mib < budget_mib,
        "agent peak RSS {peak_mib} MiB with {CONNS} connections, budget {budget_mib} MiB"
    );
    let doc = json(&json_path);
    let events = doc["totals"]["events"]
        .as_u64()
        .expect("events in the JSON");
    assert!(events > 0, "no events:\n{stdout}");
    // Every connection took part: the server saw at least that many logins.
    assert!(db.status("Connections") >= CONNS, "server logins");
    // Progress, when it was shown (opening took over half a second), ends complete.
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(last) = stderr
        .lines()
        .rfind(|l| l.starts_with("opening connections:"))
    {
        assert_eq!(
            last,
            format!("opening connections: {CONNS}/{CONNS}"),
            "{stderr}"
        );
    }
}

#[test]
fn a_run_beyond_the_open_files_limit_is_refused_before_any_connection_opens() {
    let db = MariaDb::start();
    let conn = db.fleetbench_args();
    let agent = AgentProc::start_with_nofile(400);
    let before = db.status("Connections");
    let out = fleetbench(&args(
        &conn,
        &[
            "oltp_point_select",
            "--agents",
            &agent.addr,
            "--threads=500",
            "--time=1",
            "run",
        ],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("500 database connections")
            && stderr.contains("open-files limit is 400 (hard limit 400)"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one error line: {stderr}");
    // Only the status query's own login, no connection of the run.
    assert_eq!(db.status("Connections") - before, 1, "the run connected");
}
