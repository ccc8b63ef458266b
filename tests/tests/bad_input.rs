//! Bad input: one clear error line, exit code 2, and no agent left running load.

use std::net::TcpListener;

use fleetbench_proto::v1::agent_server::{Agent, AgentServer};
use fleetbench_proto::v1::{
    HelloReply, HelloRequest, PrepareRequest, Progress, RunEvent, RunRequest, StopReply,
    StopRequest,
};
use fleetbench_tests::{AgentProc, expect_usage_error, fleetbench, hello, worker_threads};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status, Streaming};

/// Runs the coordinator and checks: exit 2, exactly one line on stderr containing `expect`.
fn refused(args: &[&str], expect: &str) -> String {
    let out = fleetbench(args);
    let err = expect_usage_error(&out, &format!("{args:?}"), &[expect]);
    assert!(
        out.stdout.is_empty() || !String::from_utf8_lossy(&out.stdout).contains("Threads started")
    );
    err
}

#[test]
fn bad_flags_are_refused_with_one_line() {
    refused(&["nosuch", "run"], "unknown test 'nosuch'");
    refused(&["cpu", "--threads=0", "run"], "--threads: '0'");
    refused(&["cpu", "--threads=many", "run"], "--threads: 'many'");
    refused(
        &["cpu", "--time=0", "--events=0", "run"],
        "--time and --events are both 0",
    );
    refused(&["cpu", "--percentile=0,95", "run"], "--percentile: '0'");
    refused(
        &["cpu", "--percentile=100.5", "run"],
        "--percentile: '100.5'",
    );
    refused(&["cpu", "--no-such-flag=1", "run"], "--no-such-flag");
    refused(
        &["cpu", "prepare"],
        "does not implement the 'prepare' command",
    );
    refused(&["cpu"], "requires a command");
    // clap's hint reaches the user, on the same line.
    refused(
        &["cpu", "--thread=3", "run"],
        "unexpected argument '--thread' found (did you mean '--threads'?)",
    );
    refused(&["nosuch", "help"], "unknown test 'nosuch'");
}

#[test]
fn help_lists_every_command_and_each_tests_options() {
    let stdout = |args: &[&str]| {
        let out = fleetbench(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = stdout(&["help"]);
    assert_eq!(top, stdout(&["--help"]));
    // The commands come first, one line each, then the options in groups (issue 60).
    let commands = &top[top.find("Commands").expect("a Commands section")
        ..top.find("Run options:").expect("a Run options group")];
    for command in [
        "TEST prepare|run|cleanup",
        "tpcc prepare|run|check|cleanup",
        "pgbench ",
        "scenario run",
        "runs list",
        "serve --web",
        "compare",
        "report",
        "agents",
        "stop",
        "`fleetbench TEST help`",
    ] {
        assert!(
            commands.lines().any(|l| l.contains(command)),
            "{command} in\n{commands}"
        );
    }
    let mut at = 0;
    for group in [
        "Run options:",
        "Output options:",
        "Catalog, compare and runs:",
        "Agents:",
    ] {
        let found = top[at..].find(&format!("\n{group}\n"));
        let found = found.unwrap_or_else(|| panic!("{group} after {at} in\n{top}"));
        at += found + 1;
    }
    // No option is left in the flat list but --help and --version.
    let flat = &top[top.find("\nOptions:\n").unwrap()..top.find("\nRun options:").unwrap()];
    assert_eq!(flat.matches("--").count(), 2, "{flat}");
    assert!(top.contains("\n      --threads <THREADS>"), "{top}");
    let cpu = stdout(&["cpu", "help"]);
    assert!(
        cpu.starts_with("cpu options (cpu):\n  --cpu-max-prime "),
        "{cpu}"
    );
    assert!(cpu.contains("[default: 10000]"), "{cpu}");
    let oltp = stdout(&["--test=oltp_read_write", "help"]);
    for option in [
        "--tables ",
        "--point-selects ",
        "--mysql-host ",
        "--rand-type ",
    ] {
        assert!(oltp.contains(option), "{option} in\n{oltp}");
    }
    assert!(!oltp.contains("--file-num"), "{oltp}");
    assert!(stdout(&["fileio", "help"]).contains("--file-total-size"));
    // TPC-C: tpcc-mysql's letters, the run's thread and time options, its own database.
    let tpcc = stdout(&["tpcc", "help"]);
    for needle in [
        "-w  --warehouses",
        "-c  --threads",
        "-l  --time",
        "-i  --report-interval",
        "\n  --warmup-time ",
    ] {
        assert!(tpcc.contains(needle), "{needle} in\n{tpcc}");
    }
    let db = |help: &str| {
        let line = help.lines().find(|l| l.starts_with("  --mysql-db "));
        line.unwrap_or_default().to_string()
    };
    assert!(db(&tpcc).ends_with("[default: tpcc]"), "{tpcc}");
    assert!(db(&oltp).ends_with("[default: sbtest]"), "{oltp}");
}

#[test]
fn an_unreachable_agent_is_named_and_the_others_stay_idle() {
    let good = AgentProc::start();
    let idle = worker_threads(good.pid());
    // A port that was free a moment ago: nothing listens there now.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let agents = format!("{},{dead}", good.addr);
    let err = refused(
        &["cpu", "--agents", &agents, "--threads=2", "run"],
        &format!("cannot reach agent {dead}"),
    );
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert_eq!(
        worker_threads(good.pid()),
        idle,
        "the reachable agent started no workers"
    );
}

#[test]
fn the_same_agent_twice_is_refused_by_its_own_message() {
    let a = AgentProc::start();
    let idle = worker_threads(a.pid());
    let port = a.addr.rsplit_once(':').unwrap().1;
    // As given twice in one list, in two --agents, and spelt with a leading zero: not the
    // agent's "busy" answer to its second share.
    for agents in [
        vec![format!("--agents={},{}", a.addr, a.addr)],
        vec![
            format!("--agents={}", a.addr),
            format!("--agents={}", a.addr),
        ],
        vec![format!("--agents={},127.0.0.1:0{port}", a.addr)],
    ] {
        let mut args: Vec<&str> = vec!["cpu", "--threads=2", "--time=1"];
        args.extend(agents.iter().map(String::as_str));
        args.push("run");
        let err = refused(&args, &format!("--agents lists the agent {} twice", a.addr));
        assert!(!err.contains("busy"), "{err}");
    }
    assert_eq!(
        worker_threads(a.pid()),
        idle,
        "the agent started no workers"
    );
}

#[test]
fn a_repeated_option_takes_the_last_value_as_in_sysbench() {
    // A value option, an alias with its main name, and a flag, each given twice.
    let out = fleetbench(&[
        "cpu",
        "--threads=1",
        "--events=50",
        "--time=0",
        "--max-requests=20",
        "--histogram",
        "--histogram=off",
        "run",
        "--threads=3",
        "--cpu-max-prime=100",
        "--cpu-max-prime=200",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Number of threads: 3\n"), "{text}");
    assert!(text.contains("Prime numbers limit: 200"), "{text}");
    let events = text
        .lines()
        .find(|l| l.contains("total number of events:"))
        .and_then(|l| l.split_whitespace().last());
    assert_eq!(events, Some("20"), "{text}");
    assert!(!text.contains("Latency histogram"), "{text}");
}

/// An agent that answers Hello with another protocol version.
struct FutureAgent;

#[tonic::async_trait]
impl Agent for FutureAgent {
    async fn hello(&self, _: Request<HelloRequest>) -> Result<Response<HelloReply>, Status> {
        Ok(Response::new(HelloReply {
            protocol_version: fleetbench_proto::PROTOCOL_VERSION + 1,
            agent_version: "9.9.9".into(),
            hostname: "future".into(),
            cores: 1,
            workloads: vec!["cpu".into()],
            busy_run_id: String::new(),
            busy_since_unix: 0,
            busy_peer: String::new(),
            ..Default::default()
        }))
    }

    type RunStream = tokio_stream::Empty<Result<RunEvent, Status>>;
    type PrepareStream = tokio_stream::Empty<Result<Progress, Status>>;
    type CleanupStream = tokio_stream::Empty<Result<Progress, Status>>;
    type ObserveStream = tokio_stream::Empty<Result<fleetbench_proto::v1::HostSample, Status>>;

    async fn stop(&self, _: Request<StopRequest>) -> Result<Response<StopReply>, Status> {
        panic!("nothing to stop");
    }

    async fn observe(
        &self,
        _: Request<fleetbench_proto::v1::ObserveRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        panic!("the coordinator must not observe with an incompatible agent");
    }

    async fn prepare(
        &self,
        _: Request<PrepareRequest>,
    ) -> Result<Response<Self::PrepareStream>, Status> {
        panic!("the coordinator must not prepare on an incompatible agent");
    }

    async fn cleanup(
        &self,
        _: Request<PrepareRequest>,
    ) -> Result<Response<Self::CleanupStream>, Status> {
        panic!("the coordinator must not clean up on an incompatible agent");
    }

    async fn run(
        &self,
        _: Request<Streaming<RunRequest>>,
    ) -> Result<Response<Self::RunStream>, Status> {
        panic!("the coordinator must not start a run on an incompatible agent");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_of_another_protocol_version_is_refused() {
    let (good, idle, fake, agents) = beside_a_real_agent(FutureAgent).await;
    let err = tokio::task::spawn_blocking(move || {
        refused(
            &["cpu", "--agents", &agents, "--threads=2", "run"],
            "protocol",
        )
    })
    .await
    .unwrap();
    assert!(err.contains(&fake) && err.contains("9.9.9"), "{err}");
    assert_eq!(worker_threads(good.pid()), idle);
    assert!(
        hello(&good.addr).await.0.is_empty(),
        "the compatible agent is idle"
    );
}

/// Serves `fake` on a loopback port next to a real agent; the real agent, its idle thread
/// count, the fake's address and both addresses as an `--agents` list.
async fn beside_a_real_agent(fake: impl Agent) -> (AgentProc, usize, String, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(AgentServer::new(fake))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    let good = AgentProc::start();
    let idle = worker_threads(good.pid());
    let agents = format!("{},{addr}", good.addr);
    (good, idle, addr, agents)
}

/// An agent that takes Start and never answers Ready.
struct SilentAgent;

#[tonic::async_trait]
impl Agent for SilentAgent {
    async fn hello(&self, _: Request<HelloRequest>) -> Result<Response<HelloReply>, Status> {
        Ok(Response::new(HelloReply {
            protocol_version: fleetbench_proto::PROTOCOL_VERSION,
            agent_version: "silent".into(),
            hostname: "silent".into(),
            cores: 1,
            workloads: vec!["cpu".into()],
            ..Default::default()
        }))
    }

    type RunStream =
        std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<RunEvent, Status>> + Send>>;
    type PrepareStream = tokio_stream::Empty<Result<Progress, Status>>;
    type CleanupStream = tokio_stream::Empty<Result<Progress, Status>>;
    type ObserveStream = tokio_stream::Empty<Result<fleetbench_proto::v1::HostSample, Status>>;

    async fn run(
        &self,
        _: Request<Streaming<RunRequest>>,
    ) -> Result<Response<Self::RunStream>, Status> {
        Ok(Response::new(Box::pin(tokio_stream::pending())))
    }

    async fn observe(
        &self,
        _: Request<fleetbench_proto::v1::ObserveRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        Err(Status::unimplemented("silent"))
    }

    async fn stop(&self, _: Request<StopRequest>) -> Result<Response<StopReply>, Status> {
        Ok(Response::new(StopReply::default()))
    }

    async fn prepare(
        &self,
        _: Request<PrepareRequest>,
    ) -> Result<Response<Self::PrepareStream>, Status> {
        Err(Status::unimplemented("silent"))
    }

    async fn cleanup(
        &self,
        _: Request<PrepareRequest>,
    ) -> Result<Response<Self::CleanupStream>, Status> {
        Err(Status::unimplemented("silent"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_not_ready_in_time_cancels_the_run_everywhere() {
    let (good, idle, silent, agents) = beside_a_real_agent(SilentAgent).await;
    let run = tokio::task::spawn_blocking(move || {
        refused(
            &[
                "cpu",
                "--agents",
                &agents,
                "--threads=2",
                "--ready-timeout=1",
                "run",
            ],
            "not ready within 1s",
        )
    });
    // The ready agent's share (1 of the 2 threads) waits at its start gate meanwhile.
    let mut parked = false;
    for _ in 0..100 {
        if worker_threads(good.pid()) == idle + 1 {
            parked = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let err = run.await.unwrap();
    assert!(parked, "the ready agent's worker was never seen");
    assert!(err.contains(&silent), "{err}");
    // The ready agent was released without running anything.
    let mut released = false;
    for _ in 0..100 {
        if hello(&good.addr).await.0.is_empty() && worker_threads(good.pid()) == idle {
            released = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(released, "the ready agent is idle again");
}

#[test]
fn a_database_port_given_as_an_agent_is_named_for_what_it_is() {
    // A stand-in MySQL server: it greets every client with a handshake packet (protocol
    // 10, then its version), as a real one does before the client says anything.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { break };
            let mut packet = vec![0x20, 0, 0, 0, 10];
            packet.extend_from_slice(b"8.0.36\0");
            packet.resize(36, 0);
            let _ = std::io::Write::write_all(&mut conn, &packet);
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    });
    let out = fleetbench(&["cpu", "--agents", &addr, "run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a MySQL server (8.0.36) answers there, not a fleetbench agent"),
        "{err}"
    );
    assert!(!err.contains("--tls-ca"), "{err}");
}
