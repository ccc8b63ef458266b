//! The host's thread ceiling (issue 42): a run with more threads than the machine can start
//! (vm.max_map_count, RLIMIT_NPROC, kernel.threads-max, pids.max, memory) is refused before
//! any thread starts, with one line naming the limit and exit 2, embedded and through
//! `--agents`; the agent says its ceilings in Hello, refuses such a Start itself, and stays
//! up for the next run. These runs used to abort the process at about 16,000 threads
//! ("failed to set up alternative stack guard page") and kill a remote agent.

use fleetbench_model::limits::{MAX_THREADS, ThreadLimit, thread_ceiling};
use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::v1::agent_client::AgentClient;
use fleetbench_proto::v1::{
    self as pb, HelloRequest, RunRequest, Start, WorkloadSpec, run_request, workload_spec,
};
use fleetbench_tests::{AgentProc, expect_usage_error, fleetbench, fleetbench_ok, worker_threads};

/// A thread count far beyond this host's ceiling and within fleetbench's own bound, with
/// the name of the limit that refuses it; None on a host whose limits are all above that
/// bound (then the bound refuses, which other tests cover).
fn beyond_the_ceiling() -> Option<(u64, &'static str)> {
    let c = thread_ceiling();
    eprintln!(
        "this host's ceiling: {} threads ({})",
        c.threads,
        c.reason()
    );
    if c.limit == ThreadLimit::Fleetbench || c.threads.saturating_mul(2) > MAX_THREADS {
        eprintln!("skipped: this host allows nearly {MAX_THREADS} threads");
        return None;
    }
    // Twice the ceiling: the agent's and the coordinator's own figures differ a little
    // from this process's (mappings and threads in use).
    Some((c.threads * 2, c.limit.name()))
}

fn cpu_start(threads: u32) -> RunRequest {
    RunRequest {
        msg: Some(run_request::Msg::Start(Start {
            run_id: "too-many".into(),
            workload: Some(WorkloadSpec {
                kind: Some(workload_spec::Kind::Options(pb::OptionSpec {
                    test: "cpu".into(),
                    options: [("cpu-max-prime".to_string(), "100".to_string())].into(),
                })),
            }),
            threads,
            time_limit_ms: 1000,
            tick_ms: 1000,
            ..Default::default()
        })),
    }
}

#[test]
fn an_embedded_run_beyond_the_host_is_refused_with_the_limit() {
    let Some((n, limit)) = beyond_the_ceiling() else {
        return;
    };
    let threads = format!("--threads={n}");
    let out = fleetbench(&["cpu", &threads, "--time=1", "run"]);
    let line = expect_usage_error(
        &out,
        "embedded",
        &[&threads, limit, "exceed this host's limit"],
    );
    eprintln!("{line}");
    // The process survived to say so; a run that fits still runs.
    fleetbench_ok(&["cpu", "--threads=2", "--time=1", "run"]);
}

#[test]
fn a_remote_run_beyond_the_agent_is_refused_and_the_agent_stays_up() {
    let Some((n, limit)) = beyond_the_ceiling() else {
        return;
    };
    let mut agent = AgentProc::start();
    let idle = worker_threads(agent.pid());
    let threads = format!("--threads={n}");
    let out = fleetbench(&["cpu", "--agents", &agent.addr, &threads, "--time=1", "run"]);
    let line = expect_usage_error(
        &out,
        "--agents",
        &[&format!("agent {}", agent.addr), limit, "allows at most"],
    );
    eprintln!("{line}");
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent is alive"
    );
    agent_runs_on_unharmed(&agent, idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_says_its_ceilings_and_refuses_a_start_beyond_them() {
    let agent = AgentProc::start();
    let mut c = AgentClient::connect(format!("http://{}", agent.addr))
        .await
        .unwrap();
    let h = c
        .hello(HelloRequest {
            protocol_version: PROTOCOL_VERSION,
            coordinator_version: "test".into(),
        })
        .await
        .unwrap()
        .into_inner();
    eprintln!(
        "Hello: max_threads {} ({}), max_open_files {}, mem_available_bytes {}",
        h.max_threads, h.max_threads_limit, h.max_open_files, h.mem_available_bytes
    );
    assert!(h.max_threads > 100 && h.max_threads <= MAX_THREADS, "{h:?}");
    assert!(!h.max_threads_limit.is_empty(), "{h:?}");
    assert!(h.max_open_files > 0 && h.mem_available_bytes > 0, "{h:?}");
    let Some((n, limit)) = beyond_the_ceiling() else {
        return;
    };
    // A coordinator that does not look at Hello: the agent refuses the Start itself.
    let idle = worker_threads(agent.pid());
    let refused = match c.run(tokio_stream::iter(vec![cpu_start(n as u32)])).await {
        Err(s) => s,
        Ok(mut stream) => match stream.get_mut().message().await {
            Err(s) => s,
            other => panic!("the agent accepted {n} threads: {other:?}"),
        },
    };
    let msg = refused.message();
    eprintln!("{msg}");
    assert!(
        msg.starts_with(&format!("{n} threads exceed this host's limit")),
        "{msg}"
    );
    assert!(msg.contains(limit), "{msg}");
    agent_runs_on_unharmed(&agent, idle);
}

/// The refused plan started no worker on `agent` (still `idle` threads), and a small run
/// goes through right after.
fn agent_runs_on_unharmed(agent: &AgentProc, idle: usize) {
    assert_eq!(worker_threads(agent.pid()), idle, "no worker was started");
    fleetbench_ok(&[
        "cpu",
        "--agents",
        &agent.addr,
        "--threads=2",
        "--time=1",
        "run",
    ]);
}
