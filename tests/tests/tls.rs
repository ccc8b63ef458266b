//! TLS between coordinator and agent: a verified round trip, a plain-text client refused
//! with a clear hint, and client certificates when the agent asks for them. Certificates
//! are made for each test with the openssl command (Debian's ca-certificates brings it).

use std::path::Path;

use fleetbench_tests::{AgentProc, Scratch, expect_ok, expect_usage_error, fleetbench, make_certs};

fn p(dir: &Path, f: &str) -> String {
    dir.join(f).to_str().unwrap().to_string()
}

fn cpu(agent: &AgentProc, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["cpu", "--agents", &agent.addr, "--events=20", "--time=0"];
    args.extend_from_slice(extra);
    args.push("run");
    fleetbench(&args)
}

/// Makes the test certificates in `dir` and starts an agent serving TLS with agent.pem and
/// agent.key, and `extra` options.
fn tls_agent(dir: &Path, extra: &[&str]) -> AgentProc {
    make_certs(dir);
    let (cert, key) = (p(dir, "agent.pem"), p(dir, "agent.key"));
    let args = [
        &["--tls-cert", cert.as_str(), "--tls-key", key.as_str()][..],
        extra,
    ]
    .concat();
    AgentProc::start_with(&args, &[])
}

#[test]
fn tls_round_trip_and_a_plain_client_is_refused_clearly() {
    let scratch = Scratch::new("tls");
    let agent = tls_agent(&scratch.0, &[]);
    expect_ok(&cpu(&agent, &["--tls-ca", &p(&scratch.0, "ca.pem")]));

    let out = cpu(&agent, &[]);
    let reach = format!("cannot reach agent {}", agent.addr);
    expect_usage_error(&out, "a plain client", &[&reach, "--tls-ca"]);
}

#[test]
fn an_agent_that_wants_client_certificates_gets_them_or_refuses() {
    let scratch = Scratch::new("mtls");
    let d = &scratch.0;
    let agent = tls_agent(d, &["--tls-client-ca", &p(d, "ca.pem")]);
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
