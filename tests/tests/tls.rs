//! TLS between coordinator and agent: a verified round trip, a plain-text client refused
//! with a clear hint, and client certificates when the agent asks for them. Certificates
//! are made for each test with the openssl command (Debian's ca-certificates brings it).

use std::path::Path;
use std::process::Command;

use fleetbench_tests::{AgentProc, Scratch, fleetbench};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is installed");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, an agent certificate for 127.0.0.1 and a client certificate, in `dir`.
fn make_certs(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=fleetbench test CA",
    ]);
    openssl(dir, &ca);
    for (name, ext) in [
        (
            "agent",
            "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
        ),
        (
            "client",
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        ),
    ] {
        std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
        let mut req = vec!["req"];
        req.extend(ec);
        let (key, csr, subj) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("/CN={name}"),
        );
        req.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
        openssl(dir, &req);
        let (pem, extfile) = (format!("{name}.pem"), format!("{name}.ext"));
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "1",
                "-extfile",
                &extfile,
            ],
        );
    }
}

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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
