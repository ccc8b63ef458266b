//! The deployment pieces: the systemd unit is valid and hardened (`systemd-analyze
//! security` under 2.0), the agent tells systemd it is ready (Type=notify) once it listens
//! and takes its token from a systemd credential, and the gRPC health service the
//! Kubernetes probes use answers without the token while every agent call still needs it.

use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::time::Duration;

use fleetbench_proto::v1 as pb;
use fleetbench_proto::v1::agent_client::AgentClient;
use fleetbench_tests::{AgentProc, Scratch, bin};
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};

const TOKEN: &str = "probe-me-not";

fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
}

/// The unit pointed at this build and the sample environment file, which exist here.
fn unit_here(scratch: &Scratch) -> std::path::PathBuf {
    let unit = std::fs::read_to_string(repo().join("deploy/fleetbench-agent.service")).unwrap();
    let unit = unit
        .replace(
            "/usr/local/bin/fleetbench-agent",
            bin("fleetbench-agent").to_str().unwrap(),
        )
        .replace(
            "/etc/fleetbench/agent.env",
            repo().join("deploy/agent.env").to_str().unwrap(),
        );
    let path = scratch.path("fleetbench-agent.service");
    std::fs::write(&path, unit).unwrap();
    path
}

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
    let path = unit_here(&scratch);
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
    // The token arrives as a credential, not only through the environment file.
    assert_eq!(setting("LoadCredential"), "token:/etc/fleetbench/token");
}

#[test]
fn systemd_rates_the_unit_under_2() {
    let scratch = Scratch::new("security");
    let path = unit_here(&scratch);
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(&path)
        .output()
        .expect("systemd-analyze is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| {
            panic!(
                "no score from systemd-analyze security: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    // "→ Overall exposure level for fleetbench-agent.service: 1.2 OK 🙂"
    let score: f64 = line
        .rsplit_once(": ")
        .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the score in {line:?}"));
    assert!(score < 2.0, "exposure {score} (want < 2.0):\n{text}");
    // The unit's own comment quotes the score systemd prints.
    let unit = std::fs::read_to_string(repo().join("deploy/fleetbench-agent.service")).unwrap();
    assert!(
        unit.contains(&format!("rates this unit {score:.1} ")),
        "the unit's comment does not quote the score {score:.1}"
    );
}

#[test]
fn the_agent_reads_its_token_from_a_systemd_credential() {
    let scratch = Scratch::new("credential");
    let creds = scratch.path("creds");
    std::fs::create_dir_all(&creds).unwrap();
    std::fs::write(creds.join("token"), format!("{TOKEN}\n")).unwrap();
    // Without a token an agent refuses a non-loopback address: it starts, so it read one.
    let mut child = Command::new(bin("fleetbench-agent"))
        .args(["--listen", "0.0.0.0:0"])
        .env_remove("FLEETBENCH_TOKEN")
        .env("CREDENTIALS_DIRECTORY", &creds)
        .env("FLEETBENCH_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn fleetbench-agent");
    let _agent = Reap(&mut child);
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(_agent.0.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on 0.0.0.0:")
        .unwrap_or_else(|| panic!("agent did not start: {line:?}"));
    let addr = format!("127.0.0.1:{port}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let channel = connect(&addr).await;
        let mut agent = AgentClient::new(channel);
        let refused = agent.hello(pb::HelloRequest::default()).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        let hello = pb::HelloRequest {
            protocol_version: fleetbench_proto::PROTOCOL_VERSION,
            coordinator_version: "test".into(),
        };
        let reply = agent
            .hello(with_token(hello, TOKEN))
            .await
            .expect("the credential's token is accepted")
            .into_inner();
        assert_eq!(reply.protocol_version, fleetbench_proto::PROTOCOL_VERSION);
    });
}

/// Kills and waits for the agent when the test ends, passed or not.
struct Reap<'a>(&'a mut std::process::Child);

impl Drop for Reap<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn connect(addr: &str) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connect to the agent")
}

fn with_token<T>(msg: T, token: &str) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    r
}

#[test]
fn health_answers_without_the_token_and_nothing_else_does() {
    let agent_proc = AgentProc::start_with(&[], &[("FLEETBENCH_TOKEN", TOKEN)]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let channel = connect(&agent_proc.addr).await;
        let mut health = HealthClient::new(channel.clone());
        // What kubelet's gRPC probe sends (service "" unless configured) and the agent's name.
        for service in ["", "fleetbench.v1.Agent"] {
            let status = health
                .check(HealthCheckRequest {
                    service: service.into(),
                })
                .await
                .unwrap_or_else(|e| panic!("health check of {service:?}: {e}"))
                .into_inner()
                .status();
            assert_eq!(status, ServingStatus::Serving, "{service:?}");
        }
        let unknown = health
            .check(HealthCheckRequest {
                service: "no.such.Service".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(unknown.code(), tonic::Code::NotFound);

        // Every call of the agent's own service still needs the token.
        let mut agent = AgentClient::new(channel);
        let hello = agent.hello(pb::HelloRequest::default()).await.unwrap_err();
        assert_eq!(hello.code(), tonic::Code::Unauthenticated);
        let stop = agent.stop(pb::StopRequest::default()).await.unwrap_err();
        assert_eq!(stop.code(), tonic::Code::Unauthenticated);
        let prepare = agent
            .prepare(pb::PrepareRequest::default())
            .await
            .unwrap_err();
        assert_eq!(prepare.code(), tonic::Code::Unauthenticated);
        let start = pb::RunRequest {
            msg: Some(pb::run_request::Msg::Start(pb::Start {
                run_id: "no-token".into(),
                workload: Some(pb::WorkloadSpec {
                    kind: Some(pb::workload_spec::Kind::Options(pb::OptionSpec {
                        test: "cpu".into(),
                        options: [("cpu-max-prime".to_string(), "100".to_string())].into(),
                    })),
                }),
                threads: 1,
                event_limit: 10,
                tick_ms: 1000,
                total_threads: 1,
                ..Default::default()
            })),
        };
        let run = agent
            .run(tokio_stream::iter(vec![start.clone()]))
            .await
            .unwrap_err();
        assert_eq!(run.code(), tonic::Code::Unauthenticated, "{run}");
        // The same Start with the token runs: the refusal was the token, not the message.
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.send(start).await.unwrap();
        let mut events = agent
            .run(with_token(
                tokio_stream::wrappers::ReceiverStream::new(rx),
                TOKEN,
            ))
            .await
            .expect("Run with the token")
            .into_inner();
        loop {
            let event = events.message().await.expect("an event").expect("Ready");
            match event.msg {
                Some(pb::run_event::Msg::Ready(r)) => {
                    assert_eq!(r.threads, 1);
                    break;
                }
                Some(pb::run_event::Msg::Opening(_)) => {}
                other => panic!("expected Ready, got {other:?}"),
            }
        }
        drop(tx);
    });
}

#[test]
fn the_kubernetes_manifests_agree_with_each_other_and_the_dockerfile() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).unwrap();
    let (agents, job, policy, docker) = (
        read("deploy/kubernetes/agents.yaml"),
        read("deploy/kubernetes/coordinator-job.yaml"),
        read("deploy/kubernetes/network-policy.yaml"),
        read("Dockerfile"),
    );
    // The image the manifests name is the one the Dockerfile says it builds, at this version.
    let image = format!("fleetbench:{}", env!("CARGO_PKG_VERSION"));
    assert!(docker.contains(&format!("docker build -t {image} .")));
    for m in [&agents, &job] {
        let images: Vec<&str> = m
            .lines()
            .filter_map(|l| l.trim().strip_prefix("image: "))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert!(
            !images.is_empty() && images.iter().all(|i| *i == image),
            "{images:?}"
        );
        // Restricted Pod Security: the settings the admission check requires.
        for needed in [
            "runAsNonRoot: true",
            "allowPrivilegeEscalation: false",
            "capabilities: { drop: [\"ALL\"] }",
            "seccompProfile: { type: RuntimeDefault }",
            "limits: {",
            "requests: {",
        ] {
            assert!(m.contains(needed), "a manifest lacks {needed}");
        }
    }
    assert!(agents.contains("pod-security.kubernetes.io/enforce: restricted"));
    // Probes use gRPC health on the port the agent listens on.
    assert!(agents.contains("\"--listen\", \"0.0.0.0:7600\""));
    assert_eq!(agents.matches("grpc: { port: 7600 }").count(), 3);
    // The Job's status is fleetbench's: nothing runs after it in the container.
    assert!(job.contains("exec fleetbench ") && job.contains("backoffLimit: 0"));
    // The policy admits exactly the Job's pods to the agents.
    assert!(job.contains("labels: { app: fleetbench-coordinator }"));
    assert!(policy.contains("matchLabels: { app: fleetbench-coordinator }"));
    assert!(policy.contains("matchLabels: { app: fleetbench-agent }"));
}

/// Runs deploy/install-agent.sh with `args` into the directory `root`.
fn install_agent(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(repo().join("deploy/install-agent.sh"))
        .args(args)
        .arg(bin("fleetbench-agent"))
        .env("FLEETBENCH_INSTALL_ROOT", root)
        .output()
        .expect("run install-agent.sh")
}

#[test]
fn install_agent_takes_the_fleets_token_and_says_which_one_the_coordinator_needs() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("install-agent");
    let root = scratch.path("root");
    let fleet = scratch.write("fleet-token", "one-token-for-the-whole-fleet\n");
    let out = install_agent(&root, &["--token-file", fleet.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = root.join("etc/fleetbench/token");
    assert_eq!(
        std::fs::read_to_string(&installed).unwrap(),
        "one-token-for-the-whole-fleet\n"
    );
    let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(root.join("usr/local/bin/fleetbench-agent").is_file());
    assert!(
        root.join("etc/systemd/system/fleetbench-agent.service")
            .is_file()
    );
    let last = said.lines().last().unwrap();
    assert!(
        last.contains("the coordinator needs the fleet's token: --token-file")
            && last.contains(fleet.to_str().unwrap()),
        "{said}"
    );
    // Again without a token: the installed one is kept, and said so.
    let out = install_agent(&root, &[]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("(kept as it was)"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&installed).unwrap(),
        "one-token-for-the-whole-fleet\n"
    );
    // A token file that is not one: refused in one line before anything is installed.
    let other = scratch.path("other-root");
    let bad = scratch.write("bad-token", "two words\n");
    let out = install_agent(&other, &["--token-file", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("without spaces"), "{err}");
    assert!(!other.exists(), "installed despite the refusal");
}
