//! Plans, results and intervals the text report's tests share.

use std::time::Duration;

use crate::merge::{AgentResult, AgentStatus, Latency, MergedInterval, RunResult};
use crate::plan::{AgentSource, Plan, Workload};

pub(super) fn plan() -> Plan {
    Plan {
        workload: Workload::Cpu(crate::plan::CpuSpec { max_prime: 10_000 }),
        command: crate::plan::Command::Run,
        threads: 3,
        time: Some(Duration::from_secs(10)),
        events: None,
        report_interval: Some(Duration::from_secs(1)),
        percentiles: vec![95.0, 99.9],
        seed: 0,
        json: None,
        agents: AgentSource::Local(2),
        ready_timeout: Duration::from_secs(30),
        max_downtime_pct: None,
        notes: Vec::new(),
        forced_shutdown: None,
        checkpoints: Vec::new(),
        rate: 0.0,
        tags: Vec::new(),
        command_line: String::new(),
        warmup: Duration::ZERO,
        warn_client_saturation: false,
        observe: Default::default(),
    }
}

pub(super) fn plan_of(words: &[&str]) -> Plan {
    let mut args: Vec<std::ffi::OsString> = vec!["fleetbench".into()];
    args.extend(words.iter().map(|w| w.into()));
    crate::plan::build(&crate::cli::parse(args).unwrap()).unwrap()
}

/// Tick `seq`, one second long, of `threads` threads, `events` events of `latency_us`.
pub(super) fn tick(seq: u32, threads: u32, events: u64, latency_us: u64) -> MergedInterval {
    MergedInterval {
        seq,
        end: Duration::from_secs(u64::from(seq)),
        duration: Duration::from_secs(1),
        threads,
        events,
        latency: latency(&[latency_us]),
        ..Default::default()
    }
}

pub(super) fn latency(us: &[u64]) -> Latency {
    let mut l = Latency::default();
    for &v in us {
        l.hist.record(v).unwrap();
        l.sum_ns += v * 1000;
    }
    l.min_ns = us.iter().min().unwrap() * 1000;
    l.max_ns = us.iter().max().unwrap() * 1000;
    l
}

pub(super) fn result() -> RunResult {
    let a = AgentResult {
        addr: "10.0.0.1:7600".into(),
        name: "10.0.0.1:7600".into(),
        host: "db1".into(),
        facts: Default::default(),
        threads: 2,
        elapsed: Duration::from_millis(10_000),
        events: 4,
        latency: latency(&[1_000, 2_000, 3_000, 4_000]),
        per_thread: vec![(2, 4_000_000_000), (2, 6_000_000_000)],
        status: AgentStatus::Completed,
        db: Default::default(),
        io: Default::default(),
        open: None,
        txns: Default::default(),
    };
    let b = AgentResult {
        addr: "10.0.0.2:7600".into(),
        name: "10.0.0.2:7600".into(),
        host: "db2".into(),
        facts: Default::default(),
        threads: 1,
        elapsed: Duration::from_millis(10_002),
        events: 2,
        latency: latency(&[5_000, 6_000]),
        per_thread: vec![(2, 11_000_000_000)],
        status: AgentStatus::Lost("connection reset".into()),
        db: Default::default(),
        io: Default::default(),
        open: None,
        txns: Default::default(),
    };
    RunResult {
        clients: Default::default(),
        commands: Vec::new(),
        agents: vec![a, b],
        intervals: Vec::new(),
        interrupted: false,
        kinds: Vec::new(),
        targets: Vec::new(),
        connections: Vec::new(),
        connect_retries: Vec::new(),
        hosts: Vec::new(),
        servers: Vec::new(),
        observed: Vec::new(),
        run_id: "r1".into(),
        started: Some(std::time::UNIX_EPOCH + Duration::from_secs(1_796_166_245)),
        ended: Some(std::time::UNIX_EPOCH + Duration::from_secs(1_796_166_255)),
    }
}

/// `n` completed agents; agent i ran 10 s with 100 + 10 i events of (i + 1) ms each.
pub(super) fn many(n: usize) -> RunResult {
    let agents = (0..n)
        .map(|i| AgentResult {
            addr: format!("10.0.0.{i}:7600"),
            name: format!("10.0.0.{i}:7600"),
            host: format!("c{i}"),
            facts: Default::default(),
            threads: 1,
            elapsed: Duration::from_secs(10),
            events: 100 + 10 * i as u64,
            latency: latency(&[1_000 * (i as u64 + 1)]),
            per_thread: vec![(100 + 10 * i as u64, 10_000_000_000)],
            status: AgentStatus::Completed,
            db: Default::default(),
            io: Default::default(),
            open: None,
            txns: Default::default(),
        })
        .collect();
    RunResult {
        agents,
        ..RunResult::default()
    }
}
