//! TLS between coordinator and agent: a verified round trip, a plain-text client refused
//! with a clear hint, and client certificates when the agent asks for them. Certificates
//! are made for each test with the openssl command (Debian's ca-certificates brings it).

use std::path::Path;

use fleetbench_tests::{AgentProc, Scratch, expect_ok, fleetbench, make_certs};

fn p(dir: &Path, f: &str) -> String {
    dir.join(f).to_str().unwrap().to_string()
}

fn cpu(agent: &AgentProc, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["cpu", "--agents", &agent.addr, "--events=20", "--time=0"];
    args.extend_from_slice(extra);
    args.push("run");
    fleetbench(&args)
}

#[test]
fn tls_round_trip_and_a_plain_client_is_refused_clearly() {
    let scratch = Scratch::new("tls");
    let d = &scratch.0;
    make_certs(d);
    let agent = AgentProc::start_with(
        &[
            "--tls-cert",
            &p(d, "agent.pem"),
            "--tls-key",
            &p(d, "agent.key"),
        ],
        &[],
    );
    let out = cpu(&agent, &["--tls-ca", &p(d, "ca.pem")]);
    expect_ok(&out);

    let out = cpu(&agent, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("cannot reach agent {}", agent.addr)) && err.contains("--tls-ca"),
        "{err}"
    );
}

#[test]
fn an_agent_that_wants_client_certificates_gets_them_or_refuses() {
    let scratch = Scratch::new("mtls");
    let d = &scratch.0;
    make_certs(d);
    let agent = AgentProc::start_with(
        &[
            "--tls-cert",
            &p(d, "agent.pem"),
            "--tls-key",
            &p(d, "agent.key"),
            "--tls-client-ca",
            &p(d, "ca.pem"),
        ],
        &[],
    );
    let out = cpu(&agent, &["--tls-ca", &p(d, "ca.pem")]);
    assert_eq!(out.status.code(), Some(2), "no client certificate: refused");
    let out = cpu(
        &agent,
        &[
            "--tls-ca",
            &p(d, "ca.pem"),
            "--tls-cert",
            &p(d, "client.pem"),
            "--tls-key",
            &p(d, "client.key"),
        ],
    );
    expect_ok(&out);
}
