//! The agent's listener against idle sockets (issue 17, row 15): a connection that never
//! starts HTTP/2 (or sends only part of the preface) is closed, also on a token-protected
//! agent, and the agent goes on serving.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use fleetbench_tests::{AgentProc, expect_ok, fleetbench_env};

/// Connects, sends `first`, and returns how long the agent took to close the connection.
fn closed_after(addr: &str, first: &[u8]) -> Duration {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(first).unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 64];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return t0.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return t0.elapsed(),
            Err(e) => panic!("the agent kept a silent connection open: {e}"),
        }
    }
}

#[test]
fn a_socket_that_never_speaks_http2_is_closed() {
    let agent = AgentProc::start_with(&[], &[("FLEETBENCH_TOKEN", "secret")]);
    let (silent, partial) = std::thread::scope(|s| {
        let a = s.spawn(|| closed_after(&agent.addr, b""));
        let b = s.spawn(|| closed_after(&agent.addr, b"PRI *"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let limit = Duration::from_secs(10);
    assert!(silent < limit && partial < limit, "{silent:?} {partial:?}");
    // Still serving real clients.
    let out = fleetbench_env(
        &["cpu", "--agents", &agent.addr, "--time=1", "run"],
        &[("FLEETBENCH_TOKEN", "secret")],
    );
    expect_ok(&out);
}
