//! memory, threads and mutex over two real agent processes: merged figures equal the sums
//! of the per-agent ones, and each test's own limits (total size, one event per mutex
//! thread) hold across agents.

use fleetbench_tests::{AgentProc, Scratch, run_json, sum_over, words};
use serde_json::Value;

/// Runs `fleetbench --agents A,B ARGS run` over two fresh agents (`args`: the words of a
/// command line), its result in `name`.json of `scratch`; its stdout and that result.
fn on_two_agents(scratch: &Scratch, name: &str, args: &str) -> (String, Value) {
    let (_a, _b, agents) = AgentProc::pair();
    let all = [&["--agents", agents.as_str()][..], &words(args)].concat();
    run_json(&all, &scratch.path(&format!("{name}.json")))
}

fn agent_sum(j: &Value, f: impl Fn(&Value) -> u64) -> u64 {
    sum_over(&j["agents"], f)
}

#[test]
fn memory_transfers_exactly_the_total_size_across_agents() {
    let scratch = Scratch::new("memory");
    // 8 MiB in 1 KiB blocks: exactly 8192 operations over both agents, whatever the time.
    let (text, j) = on_two_agents(
        &scratch,
        "memory",
        "memory --threads=3 --memory-block-size=1K --memory-total-size=8M \
         --memory-scope=local --time=0",
    );
    assert!(text.contains("Total operations: 8192 ("), "{text}");
    assert!(text.contains("8.00 MiB transferred"), "{text}");
    assert_eq!(j["totals"]["memory"]["operations"].as_u64(), Some(8192));
    assert_eq!(
        agent_sum(&j, |a| a["memory"]["operations"].as_u64().unwrap()),
        8192
    );
    assert_eq!(agent_sum(&j, |a| a["events"].as_u64().unwrap()), 8192);

    // Timed, random reads in a shared block.
    let (text, j) = on_two_agents(
        &scratch,
        "memory-rnd",
        "memory --threads=2 --memory-oper=read --memory-access-mode=rnd --time=1 \
         --report-interval=1",
    );
    assert!(text.contains("operation: read"), "{text}");
    let total = j["totals"]["events"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(total, agent_sum(&j, |a| a["events"].as_u64().unwrap()));
    let mib = j["totals"]["memory"]["mib_transferred"].as_f64().unwrap();
    assert!(
        (mib - total as f64 / 1024.0).abs() < 1e-6,
        "{mib} vs {total}"
    );
}

#[test]
fn threads_events_merge_over_agents() {
    let scratch = Scratch::new("threads");
    let (text, j) = on_two_agents(
        &scratch,
        "threads",
        "threads --threads=4 --thread-yields=100 --thread-locks=2 --time=1",
    );
    assert!(text.contains("General statistics:"), "{text}");
    let total = j["totals"]["events"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(total, agent_sum(&j, |a| a["events"].as_u64().unwrap()));
    assert_eq!(
        j["totals"]["latency_ms"]["count"].as_u64(),
        Some(agent_sum(&j, |a| a["latency_ms"]["count"]
            .as_u64()
            .unwrap()))
    );
}

#[test]
fn mutex_runs_one_event_per_thread_on_every_agent() {
    let scratch = Scratch::new("mutex");
    let (_, j) = on_two_agents(
        &scratch,
        "mutex",
        "mutex --threads=3 --mutex-num=64 --mutex-locks=2000 --mutex-loops=100",
    );
    assert_eq!(j["totals"]["events"].as_u64(), Some(3));
    for a in j["agents"].as_array().unwrap() {
        assert_eq!(a["events"], a["threads"], "{a}");
    }
    assert_eq!(j["totals"]["fairness"]["events_avg"].as_f64(), Some(1.0));
}
