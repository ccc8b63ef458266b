//! Exit statuses as operators expect (issue 17, rows 17 and 19): a closed stdout ends the
//! coordinator quietly, killed by SIGPIPE like any other tool in a pipeline, and an
//! unreachable agent is a setup problem (exit 2), as the README says.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use fleetbench_tests::{AgentProc, bin, fleetbench};

/// Runs the coordinator with a stdout whose reader is already gone.
fn with_closed_stdout(args: &[&str]) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(bin("fleetbench"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_the_coordinator_quietly() {
    for args in [&["--help"][..], &["cpu", "--time=1", "run"]] {
        let (status, err) = with_closed_stdout(args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(
            status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {status:?} {err}"
        );
    }
}

#[test]
fn an_unreachable_agent_is_exit_2_for_agents_and_stop() {
    let good = AgentProc::start();
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let list = format!("{},{dead}", good.addr);
    for cmd in ["agents", "stop"] {
        let out = fleetbench(&[cmd, "--agents", &list]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {text}");
        assert!(text.contains(&dead), "{cmd}: {text}");
    }
    let out = fleetbench(&["agents", "--agents", &good.addr]);
    assert_eq!(out.status.code(), Some(0));
}
