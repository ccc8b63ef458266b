//! One coordinator over 50 real agent processes on loopback (cpu, one thread each): every
//! agent takes part and appears in the JSON, the totals are the sums of the per-agent
//! figures, every interval is the sum of its per-agent events, and the text report's
//! per-agent block is condensed while the JSON lists every agent.

use fleetbench_tests::{AgentProc, Scratch, run_json};

const AGENTS: usize = 50;

#[test]
fn fifty_agents_fan_out_and_merge_to_the_sums() {
    // Started in parallel; each start waits for its agent's "listening on" line.
    let agents: Vec<AgentProc> = std::thread::scope(|s| {
        let starting: Vec<_> = (0..AGENTS).map(|_| s.spawn(AgentProc::start)).collect();
        starting
            .into_iter()
            .map(|h| h.join().expect("agent started"))
            .collect()
    });
    let addrs: Vec<&str> = agents.iter().map(|a| a.addr.as_str()).collect();
    let scratch = Scratch::new("fan-out");
    let out_json = scratch.path("result.json");
    let (text, j) = run_json(
        &[
            "cpu",
            "--agents",
            &addrs.join(","),
            &format!("--threads={AGENTS}"),
            "--time=3",
            "--report-interval=1",
            "--cpu-max-prime=2000",
            // Generous: 50 agents opening their workers on a loaded 2-core machine.
            "--ready-timeout=60",
        ],
        &out_json,
    );

    // Every agent, in the order given, with one thread, ran to the end.
    let listed = j["agents"].as_array().unwrap();
    assert_eq!(listed.len(), AGENTS);
    assert_eq!(j["config"]["agents"].as_array().unwrap().len(), AGENTS);
    for (a, addr) in listed.iter().zip(&addrs) {
        assert_eq!(a["addr"].as_str(), Some(*addr));
        assert_eq!(a["threads"], 1, "{a}");
        assert_eq!(a["status"], "completed", "{a}");
        assert!(a["events"].as_u64().unwrap() > 0, "every agent ran: {a}");
    }

    // Totals are the sums of the per-agent figures.
    let totals = &j["totals"];
    let sum = |key: &dyn Fn(&serde_json::Value) -> u64| listed.iter().map(key).sum::<u64>();
    let events = totals["events"].as_u64().unwrap();
    assert_eq!(events, sum(&|a| a["events"].as_u64().unwrap()));
    assert_eq!(
        totals["latency_ms"]["count"].as_u64().unwrap(),
        sum(&|a| a["latency_ms"]["count"].as_u64().unwrap())
    );
    assert_eq!(totals["threads"], AGENTS as u64);
    assert_eq!(totals["agents_lost"], 0);

    // Each interval is the sum of its per-agent events; an agent's intervals add up to at
    // most its total (what ran after the last full tick is in its final report only).
    let intervals = j["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2, "{text}");
    let mut per_agent = vec![0u64; AGENTS];
    for iv in intervals {
        let parts = iv["agent_events"].as_array().unwrap();
        assert_eq!(parts.len(), AGENTS, "{iv}");
        let mut sum = 0;
        for (i, p) in parts.iter().enumerate() {
            let n = p.as_u64().unwrap_or(0);
            per_agent[i] += n;
            sum += n;
        }
        assert_eq!(iv["events"].as_u64().unwrap(), sum, "{iv}");
    }
    for (i, a) in listed.iter().enumerate() {
        assert!(per_agent[i] > 0, "agent {i} is in no interval");
        assert!(per_agent[i] <= a["events"].as_u64().unwrap(), "{a}");
    }
    let in_intervals: u64 = intervals
        .iter()
        .map(|i| i["events"].as_u64().unwrap())
        .sum();
    assert!(in_intervals <= events);

    // The text report: one interval line per JSON interval with all 50 threads, the same
    // total, and a condensed per-agent block that points to the JSON.
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), intervals.len(), "{text}");
    for line in &lines {
        assert!(line.contains(&format!("thds: {AGENTS} eps: ")), "{line}");
    }
    assert!(
        text.contains(&format!("total number of events:              {events}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Agents: {AGENTS} (1 thread each): {} ... {}\n",
            addrs[0],
            addrs[AGENTS - 1]
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Per agent (condensed):\n    {AGENTS} agents, {AGENTS} threads: {AGENTS} completed\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "The full list of agents is in {}.\n",
            out_json.display()
        )),
        "{text}"
    );
    let rows = text
        .lines()
        .filter(|l| addrs.iter().any(|a| l.trim_start().starts_with(a)))
        .count();
    assert_eq!(rows, 6, "3 slowest and 3 fastest agents named:\n{text}");
}
