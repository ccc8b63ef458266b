//! Hostile sizes, counts and durations (issue 17, rows 1-4, 10-13 and 16): from the command
//! line they are refused with one line and exit 2; sent straight over gRPC, the agent refuses
//! them itself, allocates nothing and stays up. Every process here has its address space
//! capped, so a regression fails the test instead of exhausting the machine's memory.

use fleetbench_proto::v1::agent_client::AgentClient;
use fleetbench_proto::v1::{
    self as pb, RunRequest, Start, WorkloadSpec, run_request, workload_spec,
};
use fleetbench_tests::{
    AgentProc, Running, Scratch, expect_usage_error, fleetbench_capped, hello, worker_threads,
};

/// The address-space cap of every process these tests start.
const CAP: u64 = 2 << 30;

/// Runs the capped coordinator and checks: exit 2, one line on stderr containing `expect`.
fn refused(args: &[&str], expect: &str) {
    expect_usage_error(
        &fleetbench_capped(args, CAP),
        &format!("{args:?}"),
        &[expect],
    );
}

#[test]
fn the_command_line_is_checked_before_anything_starts() {
    // Row 1, embedded agent: the coordinator used to abort on the allocation.
    refused(
        &[
            "memory",
            "--memory-block-size=1000000T",
            "--memory-total-size=1000000T",
            "run",
        ],
        "needs 1099511627776000000 bytes of memory",
    );
    // Found by the wire property test (agent/tests/wire_props.rs): the lock and mutex
    // arrays were allocated at any size, and the coordinator aborted.
    refused(
        &["threads", "--thread-locks=4000000000", "--events=10", "run"],
        "thread locks (--thread-locks) needs",
    );
    refused(
        &["mutex", "--mutex-num=4000000000", "run"],
        "mutexes (--mutex-num) needs",
    );
    // Row 3: a billion tables grew the coordinator past 3 GB.
    refused(
        &["oltp_read_write", "--tables=1000000000", "run"],
        "--tables: '1000000000' (at most 100000 tables)",
    );
    // Row 4: a time that overflows the clock panicked.
    refused(
        &["cpu", "--time=18446744073709551615", "--events=10", "run"],
        "--time: '18446744073709551615'",
    );
    refused(
        &["cpu", "--warmup-time=99999999999", "run"],
        "--warmup-time",
    );
    // Row 16, from the command line.
    refused(
        &["cpu", "--agents=127.0.0.1:1", "--threads=1000000000", "run"],
        "more than the 100000 accepted",
    );
    refused(
        &["cpu", "--threads=1000000000", "run"],
        "--threads=1000000000",
    );
    // Row 12: used to hang silently.
    refused(&["cpu", "--local-agents=100000", "run"], "--local-agents");
    // Row 13: empty list items. A repeated option, or an alias next to its name, takes the
    // last value as in sysbench 1.0 (issue 42): the hostile one, given last, is refused.
    refused(&["cpu", "--threads=4,,8", "run"], "an empty item");
    refused(
        &["cpu", "--threads=4", "--num-threads=1000000000", "run"],
        "--threads=1000000000",
    );
    refused(
        &[
            "cpu",
            "--time=1",
            "--events=10",
            "run",
            "--time=18446744073709551615",
        ],
        "--time: '18446744073709551615'",
    );
    // Rows 10 and 11: an IPv6 literal parses; a port out of range is refused.
    refused(
        &[
            "oltp_read_write",
            "--target",
            "a=mysql://u:p@[::1]:70000/db",
            "run",
        ],
        "the port must be a number from 1 to 65535",
    );
    refused(
        &["oltp_read_write", "--mysql-port=70000", "run"],
        "--mysql-port",
    );
}

#[test]
fn a_remote_agent_refuses_what_its_host_cannot_give() {
    let work = Scratch::new("hostile-fileio");
    let agent = AgentProc::start_capped(CAP, &["--work-dir", work.0.to_str().unwrap()]);
    // Row 1 on a remote agent: refused by the agent, which stays up.
    refused(
        &[
            "memory",
            "--agents",
            &agent.addr,
            "--memory-block-size=1000000T",
            "--memory-total-size=1000000T",
            "run",
        ],
        "bytes of memory",
    );
    // Row 2: a 1 TiB block used to be allocated and filled until the kernel killed the agent.
    refused(
        &[
            "fileio",
            "--agents",
            &agent.addr,
            "--file-num=1",
            "--file-block-size=1T",
            "--file-total-size=1T",
            "prepare",
        ],
        "I/O buffers",
    );
    refused(
        &[
            "fileio",
            "--agents",
            &agent.addr,
            "--file-num=1",
            "--file-total-size=1000000T",
            "prepare",
        ],
        "bytes free",
    );
    assert!(std::fs::read_dir(&work.0).unwrap().next().is_none());
    let rt = tokio::runtime::Runtime::new().unwrap();
    assert_eq!(
        rt.block_on(hello(&agent.addr)).0,
        "",
        "the agent is up and idle"
    );
}

fn start(workload: workload_spec::Kind, threads: u32, time_limit_ms: u64) -> RunRequest {
    RunRequest {
        msg: Some(run_request::Msg::Start(Start {
            run_id: "hostile".into(),
            workload: Some(WorkloadSpec {
                kind: Some(workload),
            }),
            threads,
            time_limit_ms,
            tick_ms: 1000,
            ..Default::default()
        })),
    }
}

/// A declared workload's Start payload: its test and options as the command line spells them.
fn declared(test: &str, options: &[(&str, &str)]) -> workload_spec::Kind {
    workload_spec::Kind::Options(pb::OptionSpec {
        test: test.into(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

fn memory(block_size: u64) -> workload_spec::Kind {
    let size = block_size.to_string();
    declared(
        "memory",
        &[("memory-block-size", &size), ("memory-total-size", &size)],
    )
}

/// Sends one Start straight to the agent and returns the error it answers with.
async fn send(addr: &str, req: RunRequest) -> tonic::Status {
    let mut c = AgentClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    match c.run(tokio_stream::iter(vec![req])).await {
        Err(s) => s,
        Ok(mut stream) => match stream.get_mut().message().await {
            Err(s) => s,
            other => panic!("the agent accepted a hostile Start: {other:?}"),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_checks_what_arrives_on_the_wire() {
    let agent = AgentProc::start_capped(CAP, &[]);
    let idle = worker_threads(agent.pid());
    let cpu = || declared("cpu", &[("cpu-max-prime", "100")]);
    let cases = [
        // Row 1: a 2^62-byte memory block.
        (start(memory(1 << 62), 1, 1000), "bytes of memory"),
        // Options the test does not declare, or values its own parser refuses, held to
        // the command line's messages.
        (
            start(declared("cpu", &[("file-num", "3")]), 1, 1000),
            "cpu has no option --file-num",
        ),
        (
            start(declared("cpu", &[("cpu-max-prime", "2")]), 1, 1000),
            "invalid value for --cpu-max-prime: '2' (must be at least 3)",
        ),
        (
            start(declared("memory", &[("memory-oper", "erase")]), 1, 1000),
            "invalid value for --memory-oper: 'erase'",
        ),
        (
            start(declared("pgbench", &[]), 1, 1000),
            "no workload this agent knows ('pgbench')",
        ),
        // Row 16: a billion threads.
        (
            start(cpu(), 1_000_000_000, 1000),
            "more than the 100000 accepted",
        ),
        // Row 4: a time limit that overflows the clock.
        (start(cpu(), 1, u64::MAX), "the time limit is"),
        // Row 11: a port no TCP has, which used to become 3306.
        (
            start(
                workload_spec::Kind::Oltp(pb::OltpSpec {
                    script: "oltp_point_select".into(),
                    targets: vec![pb::Target {
                        name: "t".into(),
                        host: "127.0.0.1".into(),
                        port: 70000,
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                1,
                1000,
            ),
            "port 70000 is not a port",
        ),
    ];
    for (req, expect) in cases {
        let s = send(&agent.addr, req).await;
        assert!(s.message().contains(expect), "{expect}: {s:?}");
    }
    assert_eq!(hello(&agent.addr).await.0, "", "the agent is up and idle");
    assert_eq!(worker_threads(agent.pid()), idle, "no worker was started");
}

#[test]
fn a_busy_agent_allocates_nothing_for_a_second_coordinator() {
    let agent = AgentProc::start_capped(CAP, &[]);
    let first = Running::until_first_interval(&[
        "cpu",
        "--agents",
        &agent.addr,
        "--time=3",
        "--report-interval=1",
        "run",
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(send(&agent.addr, start(memory(1 << 62), 1, 1000)));
    assert!(s.message().starts_with("busy"), "{s:?}");
    let (code, _) = first.finish();
    assert_eq!(code, Some(0), "the first run was not disturbed");
}
