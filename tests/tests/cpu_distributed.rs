//! A coordinator over two real agent processes: threads split, all agents start together,
//! merged totals equal the per-agent sums, and the JSON agrees with the text report.

use fleetbench_tests::{
    AgentProc, Scratch, expect_ok, fleetbench, json, run_json, sum_over, words,
};

/// The number after `label` on the line that starts with it (after trimming).
fn field(text: &str, label: &str) -> String {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{text}"))
        .trim()
        .to_string()
}

#[test]
fn two_agents_split_threads_and_merge_exactly() {
    let (a, b, agents) = AgentProc::pair();
    let scratch = Scratch::new("two-agents");
    let (text, j) = run_json(
        &words(&format!(
            "cpu --agents {agents} --threads=3 --time=3 --report-interval=1 \
             --cpu-max-prime=3000 --percentile=95,99"
        )),
        &scratch.path("result.json"),
    );

    // Threads: 3 over 2 agents = 2 + 1, in the order given.
    let agents = j["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(
        (
            agents[0]["addr"].as_str().unwrap(),
            agents[0]["threads"].as_u64().unwrap()
        ),
        (a.addr.as_str(), 2)
    );
    assert_eq!(
        (
            agents[1]["addr"].as_str().unwrap(),
            agents[1]["threads"].as_u64().unwrap()
        ),
        (b.addr.as_str(), 1)
    );
    assert!(
        text.contains(&format!("{} (2 threads), {} (1 thread)", a.addr, b.addr)),
        "{text}"
    );

    // Totals are the sums of the per-agent figures.
    let total = j["totals"]["events"].as_u64().unwrap();
    assert!(total > 0);
    let per_agent: u64 = agents.iter().map(|a| a["events"].as_u64().unwrap()).sum();
    assert_eq!(total, per_agent);
    let count: u64 = agents
        .iter()
        .map(|a| a["latency_ms"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(j["totals"]["latency_ms"]["count"].as_u64().unwrap(), count);
    for a in agents {
        assert_eq!(a["status"], "completed");
        assert!(a["events"].as_u64().unwrap() > 0, "every agent ran: {a}");
    }
    // Both agents started together after Ready: their run times agree closely.
    let t0 = agents[0]["time_s"].as_f64().unwrap();
    let t1 = agents[1]["time_s"].as_f64().unwrap();
    assert!((t0 - t1).abs() < 0.25, "{t0} vs {t1}");
    assert!((2.9..3.5).contains(&j["totals"]["time_s"].as_f64().unwrap()));

    // The text report says the same as the JSON.
    assert_eq!(field(&text, "total number of events:"), total.to_string());
    let lat = &j["totals"]["latency_ms"];
    // The text shows two decimals of the exact value, the JSON three: they agree to within
    // the text's rounding (comparing strings would fail on 72.0949 -> "72.09" vs 72.095).
    for (label, key) in [
        ("95th percentile:", "p95"),
        ("99th percentile:", "p99"),
        ("max:", "max"),
    ] {
        let shown: f64 = field(&text, label).parse().unwrap();
        let exact = lat[key].as_f64().unwrap();
        assert!(
            (shown - exact).abs() <= 0.0051,
            "{label} text {shown} vs JSON {exact}"
        );
    }
    let eps: f64 = field(&text, "events per second:").parse().unwrap();
    assert!((eps - j["totals"]["events_per_sec"].as_f64().unwrap()).abs() < 0.01);
    for key in [
        "p50", "p90", "p95", "p99", "p99.9", "min", "avg", "max", "sum",
    ] {
        assert!(lat[key].is_number(), "JSON latency lacks {key}");
    }

    // Interval lines: one per full second, the same series as the JSON, thds = 3.
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("[ ")).collect();
    let intervals = j["intervals"].as_array().unwrap();
    assert_eq!(lines.len(), intervals.len());
    assert!(lines.len() >= 2, "{text}");
    for (line, iv) in lines.iter().zip(intervals) {
        assert!(line.contains("thds: 3 eps: "), "{line}");
        assert!(
            line.contains(&format!(
                "eps: {:.2} ",
                iv["events_per_sec"].as_f64().unwrap()
            )),
            "{line} vs {iv}"
        );
        let sum = sum_over(&iv["agent_events"], |e| e.as_u64().unwrap());
        assert_eq!(sum, iv["events"].as_u64().unwrap());
    }
    // The per-agent block lists both agents with their events.
    for a in agents {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(a["addr"].as_str().unwrap()) && l.ends_with("ok"));
        let row = row.unwrap_or_else(|| panic!("no per-agent row for {a} in\n{text}"));
        assert!(
            row.split_whitespace()
                .any(|w| w == a["events"].as_u64().unwrap().to_string()),
            "{row}"
        );
    }
}

#[test]
fn event_limit_is_exact_and_split_by_threads() {
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    let scratch = Scratch::new("events");
    let out_json = scratch.path("r.json");
    // sysbench 0.4 spellings, options after the command, underscores.
    let out = fleetbench(&[
        "--test=cpu",
        &agents,
        "run",
        "--num_threads=4",
        "--max-requests=1001",
        "--max-time=0",
        "--cpu-max-prime=2000",
        &format!("--json={}", out_json.display()),
    ]);
    expect_ok(&out);
    let j = json(&out_json);
    assert_eq!(j["totals"]["events"], 1001);
    // 1001 events over 4 threads = 251, 250, 250, 250; agent 1 has threads 0-1.
    assert_eq!(j["agents"][0]["events"], 501);
    assert_eq!(j["agents"][1]["events"], 500);
    assert_eq!(j["config"]["threads"], 4);

    // An old command line without any limit: 0.4/0.5's 10,000 events, no time limit.
    let (_, j) = run_json(
        &[
            "--test=cpu",
            &agents,
            "--num-threads=2",
            "--cpu-max-prime=2000",
        ],
        &out_json,
    );
    assert_eq!(
        (
            j["totals"]["events"].as_u64(),
            j["config"]["time_s"].as_u64()
        ),
        (Some(10_000), Some(0))
    );
}

#[test]
fn embedded_agents_need_nothing_installed() {
    let scratch = Scratch::new("local");
    let (_, j) = run_json(
        &words("cpu --threads=2 --local-agents=2 --time=1 --cpu-max-prime=2000"),
        &scratch.path("r.json"),
    );
    let agents = j["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert!(
        agents
            .iter()
            .all(|a| a["addr"].as_str().unwrap().starts_with("127.0.0.1:"))
    );
    assert!(
        agents
            .iter()
            .all(|a| a["threads"] == 1 && a["events"].as_u64().unwrap() > 0)
    );
}

#[test]
fn named_agents_are_shown_by_name_and_idle_ones_are_warned_about() {
    let a = AgentProc::start_with(&["--name", "client-a"], &[]);
    let b = AgentProc::start();
    let scratch = Scratch::new("named-agents");
    let out_json = scratch.path("result.json");
    let agents = format!("{},{}", a.addr, b.addr);
    let out = fleetbench(&[
        "cpu",
        "--agents",
        &agents,
        "--threads=1",
        "--time=1",
        "--json",
        out_json.to_str().unwrap(),
        "run",
    ]);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    // One thread over two agents: the second one idles, and the user is told.
    assert!(
        err.contains("warning: 1 thread over 2 agents: 1 agent(s) get no thread and stay idle"),
        "{err}"
    );
    let j = json(&out_json);
    assert_eq!(j["agents"][0]["host"], "client-a", "{j}");
    assert_ne!(j["agents"][1]["host"], "client-a");
    // What each agent's host is, from its Hello: this machine, both times (the idle one too).
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let kernel = kernel.trim();
    let mem_total = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        * 1024;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    for a in j["agents"].as_array().unwrap() {
        assert!(!a["cpu_model"].as_str().unwrap().is_empty(), "{a}");
        assert_eq!(a["kernel"].as_str(), Some(kernel), "{a}");
        assert_eq!(a["cores"].as_u64(), Some(cores), "{a}");
        let mem = a["mem_total_bytes"].as_u64().unwrap();
        assert!(
            mem.abs_diff(mem_total) * 100 <= mem_total,
            "{mem} vs {mem_total}: {a}"
        );
    }
    // And one line for it after the per-agent block.
    assert!(
        text.lines().any(|l| l.starts_with("    client-a: ")
            && l.contains(&format!("{cores} cores, "))
            && l.contains(&format!(", Linux {kernel}, "))
            && l.ends_with(" GiB")),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(&a.addr))
        .unwrap_or_else(|| panic!("no row for {} in {text}", a.addr));
    assert!(row.contains(" client-a "), "{row}");
    // `agents` lists it by name too, with what its host is.
    let listing = fleetbench(&["agents", "--agents", &a.addr]);
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(listing.contains("client-a"), "{listing}");
    assert!(
        listing.contains("Agent hosts:\n")
            && listing.lines().any(|l| l.starts_with("    client-a: ")
                && l.contains(&format!(", Linux {kernel}, "))
                && l.ends_with(" GiB")),
        "{listing}"
    );
    // A name with a space would break the report's columns: refused at start.
    let bad = std::process::Command::new(fleetbench_tests::bin("fleetbench-agent"))
        .args(["--listen", "127.0.0.1:0", "--name", "two words"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--name"));
}
