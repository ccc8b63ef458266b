//! The deployment pieces: the systemd unit is valid, and the agent tells systemd it is ready
//! (Type=notify) once it listens.

use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::time::Duration;

use fleetbench_tests::{AgentProc, Scratch, bin};

#[test]
fn the_agent_notifies_systemd_when_it_listens() {
    let scratch = Scratch::new("notify");
    let sock_path = scratch.path("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _agent = AgentProc::start_with(&[], &[("NOTIFY_SOCKET", sock_path.to_str().unwrap())]);
    let mut buf = [0u8; 64];
    let n = sock.recv(&mut buf).expect("READY=1 from the agent");
    assert_eq!(&buf[..n], b"READY=1");
}

#[test]
fn systemd_accepts_the_unit() {
    let scratch = Scratch::new("unit");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let unit = std::fs::read_to_string(root.join("deploy/fleetbench-agent.service")).unwrap();
    // Thousands of connections need thousands of open files and threads.
    let setting = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("the unit sets no {key}"))
            .to_string()
    };
    assert!(setting("LimitNOFILE").parse::<u64>().unwrap() >= 65_536);
    assert_eq!(setting("TasksMax"), "infinity");
    // Point the unit at this build and the sample environment file, which exist here.
    let unit = unit
        .replace(
            "/usr/local/bin/fleetbench-agent",
            bin("fleetbench-agent").to_str().unwrap(),
        )
        .replace(
            "/etc/fleetbench/agent.env",
            root.join("deploy/agent.env").to_str().unwrap(),
        );
    let path = scratch.path("fleetbench-agent.service");
    std::fs::write(&path, unit).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze is installed (scripts/test.sh installs systemd)");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
