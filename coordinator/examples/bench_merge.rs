//! The coordinator at scale, without the network: feeds N agents' interval messages (real
//! `fleetbench.v1.Interval` protobufs whose HDR histograms come from the real encoder) through
//! the real conversion, merge and report code for a number of ticks, then every agent's
//! `Final` and the end report, and prints what it cost against the targets of issue 10.
//!
//! ```sh
//! cargo run --release -p fleetbench --example bench_merge -- [AGENTS] [INTERVALS] \
//!     [--workload oltp|cpu] [--threads-per-agent N] [--samples N] [--show-report]
//! ```
//!
//! Defaults: 1000 agents, 30 intervals, oltp (oltp_read_write), 4 threads per agent, 3000
//! events per agent and tick, latencies spread between 100 us and 100 ms. Messages are built
//! tick by tick (their building is not timed), encoded to bytes and decoded again as the
//! coordinator receives them. The peak RSS includes the benchmark's own buffers of one tick.

use std::ffi::OsString;
use std::hint::black_box;
use std::time::{Duration, Instant};

use fleetbench::merge::{IntervalMerger, RunResult};
use fleetbench::plan::Plan;
use fleetbench::report::{json, text};
use fleetbench::wire;
use fleetbench_proto::histogram::{encode_plain, new_histogram};
use fleetbench_proto::v1 as pb;
use hdrhistogram::Histogram;
use prost::Message;

/// Statement kinds an oltp_read_write agent reports in its Final.
const KINDS: [&str; 11] = [
    "point_select",
    "simple_range",
    "sum_range",
    "order_range",
    "distinct_range",
    "index_update",
    "non_index_update",
    "delete",
    "insert",
    "begin",
    "commit",
];

const TARGET_MERGE_MS: f64 = 50.0;
const TARGET_MESSAGE_BYTES: usize = 8 * 1024;
const TARGET_RSS_MIB: f64 = 512.0;

struct Options {
    agents: usize,
    intervals: u32,
    oltp: bool,
    threads_per_agent: u32,
    samples: u64,
    show_report: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        agents: 1000,
        intervals: 30,
        oltp: true,
        threads_per_agent: 4,
        samples: 3000,
        show_report: false,
    };
    let mut positional = 0;
    let mut args = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> Result<u64, String> {
        v.as_deref()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{what} needs a positive number"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--workload" => match args.next().as_deref() {
                Some("oltp") => o.oltp = true,
                Some("cpu") => o.oltp = false,
                _ => return Err("--workload is oltp or cpu".into()),
            },
            "--threads-per-agent" => {
                o.threads_per_agent = num(args.next(), "--threads-per-agent")? as u32
            }
            "--samples" => o.samples = num(args.next(), "--samples")?,
            "--show-report" => o.show_report = true,
            "-h" | "--help" => {
                return Err(
                    "usage: bench_merge [AGENTS] [INTERVALS] [--workload oltp|cpu] \
                     [--threads-per-agent N] [--samples N] [--show-report]"
                        .into(),
                );
            }
            _ if positional == 0 => {
                o.agents = num(Some(a), "AGENTS")? as usize;
                positional += 1;
            }
            _ if positional == 1 => {
                o.intervals = num(Some(a), "INTERVALS")? as u32;
                positional += 1;
            }
            _ => return Err(format!("unexpected argument '{a}'")),
        }
    }
    Ok(o)
}

/// xorshift64*: repeatable samples without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform between `lo` and `hi`.
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// One event latency in microseconds: mostly 0.3-5 ms, a tenth anywhere in 0.1-100 ms,
/// scaled by the agent's own speed.
fn latency_us(rng: &mut Rng, speed: f64) -> u64 {
    let us = if rng.unit() < 0.9 {
        rng.log_uniform(300.0, 5_000.0)
    } else {
        rng.log_uniform(100.0, 100_000.0)
    };
    ((us * speed) as u64).clamp(100, 100_000)
}

/// Agent `a`'s speed factor: 0.8 to 1.2, spread over the agents.
fn speed(a: usize, agents: usize) -> f64 {
    0.8 + 0.4 * (a as f64 / agents.max(2) as f64 - 0.5).abs() * 2.0
}

/// Records `n` samples into `h` (cleared first); returns (min, max, sum) in nanoseconds.
fn fill(h: &mut Histogram<u64>, rng: &mut Rng, speed: f64, n: u64, weight: u64) -> [u64; 3] {
    h.reset();
    let (mut min, mut max, mut sum) = (u64::MAX, 0u64, 0u64);
    for _ in 0..n {
        let us = latency_us(rng, speed);
        h.record_n(us, weight).expect("auto-resizing histogram");
        min = min.min(us * 1000);
        max = max.max(us * 1000);
        sum += us * 1000 * weight;
    }
    [min, max, sum]
}

fn latency_msg(h: &Histogram<u64>, [min_ns, max_ns, sum_ns]: [u64; 3]) -> pb::Latency {
    pb::Latency {
        // As agents send it (plain V2).
        histogram: encode_plain(h).expect("encodable"),
        min_ns,
        max_ns,
        sum_ns,
    }
}

fn db(events: u64) -> Option<pb::DbCounters> {
    Some(pb::DbCounters {
        reads: events * 14,
        writes: events * 4,
        others: events * 2,
        ..Default::default()
    })
}

/// Agent `a`'s encoded Interval message for tick `seq`.
fn interval_bytes(o: &Options, h: &mut Histogram<u64>, a: usize, seq: u32) -> Vec<u8> {
    let s = speed(a, o.agents);
    let events = (o.samples as f64 / s) as u64;
    let mut rng = Rng::new((a as u64) << 32 | u64::from(seq));
    let stats = fill(h, &mut rng, s, events, 1);
    pb::Interval {
        seq,
        duration_ns: 1_000_000_000 + (a as u64 % 7) * 1_000,
        events,
        threads_running: o.threads_per_agent,
        latency: Some(latency_msg(h, stats)),
        db: if o.oltp { db(events) } else { None },
        io: None,
        last: false,
        open_loop: None,
        host: None,
        txns: Vec::new(),
        targets: Vec::new(),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Agent `a`'s encoded Final: its whole run's latency, and for OLTP every statement kind's
/// latency and its one target's figures.
fn final_bytes(o: &Options, h: &mut Histogram<u64>, a: usize) -> Vec<u8> {
    let s = speed(a, o.agents);
    let events = (o.samples as f64 / s) as u64 * u64::from(o.intervals);
    let mut rng = Rng::new(!(a as u64));
    // As many distinct draws as one tick has, each standing for `intervals` events.
    let stats = fill(h, &mut rng, s, events / u64::from(o.intervals), 1);
    let stats = [stats[0], stats[1], stats[2] * u64::from(o.intervals)];
    let latency = latency_msg(h, stats);
    let mut kinds = Vec::new();
    let mut targets = Vec::new();
    if o.oltp {
        for k in KINDS {
            // Single statements: a twentieth of a transaction's time.
            let st = fill(h, &mut rng, s / 20.0, 2000, events / 2000 + 1);
            kinds.push(pb::KindLatency {
                kind: k.into(),
                latency: Some(latency_msg(h, st)),
            });
        }
        let st = fill(h, &mut rng, s / 20.0, 2000, events * 20 / 2000 + 1);
        targets.push(pb::TargetStats {
            target: 0,
            db: db(events),
            statements: Some(latency_msg(h, st)),
        });
    }
    let per_thread = events / u64::from(o.threads_per_agent);
    pb::Final {
        elapsed_ns: u64::from(o.intervals) * 1_000_000_000 + a as u64 * 10_000,
        events,
        latency: Some(latency),
        threads: (0..o.threads_per_agent)
            .map(|t| pb::ThreadStat {
                events: per_thread + u64::from(t),
                busy_ns: u64::from(o.intervals) * 999_000_000,
            })
            .collect(),
        aborted: String::new(),
        db: if o.oltp { db(events) } else { None },
        kinds,
        targets,
        io: None,
        open_loop: None,
        txns: Vec::new(),
        ..Default::default()
    }
    .encode_to_vec()
}

fn plan(o: &Options, addrs: &[String]) -> Plan {
    let threads = o.threads_per_agent as usize * o.agents;
    let args: Vec<OsString> = vec![
        "fleetbench".into(),
        if o.oltp { "oltp_read_write" } else { "cpu" }.into(),
        format!("--threads={threads}").into(),
        format!("--time={}", o.intervals).into(),
        "--report-interval=1".into(),
        format!("--agents={}", addrs.join(",")).into(),
        "run".into(),
    ];
    let raw = fleetbench::cli::parse(args).expect("benchmark command line");
    fleetbench::plan::build(&raw).expect("benchmark plan")
}

/// Peak resident set size of this process in MiB, from /proc/self/status.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Mean and max in milliseconds.
fn mean_max(v: &[Duration]) -> (f64, f64) {
    let max = v.iter().copied().max().unwrap_or_default();
    let sum: Duration = v.iter().sum();
    (ms(sum) / v.len().max(1) as f64, ms(max))
}

fn verdict(ok: bool) -> &'static str {
    if ok { "ok" } else { "OVER TARGET" }
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench_merge: {e}");
            std::process::exit(2);
        }
    };
    let addrs: Vec<String> = (0..o.agents)
        .map(|a| format!("10.{}.{}.{}:7600", a >> 16 & 255, a >> 8 & 255, a & 255))
        .collect();
    let plan = plan(&o, &addrs);
    let pct = plan.percentiles[0];
    let senders: Vec<wire::Sender> = addrs
        .iter()
        .enumerate()
        .map(|(a, addr)| wire::Sender {
            addr: addr.clone(),
            name: addr.clone(),
            host: format!("client{a}"),
            facts: Default::default(),
            threads: o.threads_per_agent,
        })
        .collect();

    let mut h = new_histogram();
    let mut merger = IntervalMerger::new(o.agents, plan.tick());
    let mut received = vec![fleetbench::merge::Received::default(); o.agents];
    let mut result = RunResult::default();
    let (mut decode_t, mut merge_t, mut total_t) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bytes_sum, mut bytes_max, mut messages) = (0usize, 0usize, 0usize);
    let mut last_line = String::new();
    for seq in 1..=o.intervals {
        let msgs: Vec<Vec<u8>> = (0..o.agents)
            .map(|a| interval_bytes(&o, &mut h, a, seq))
            .collect();
        for m in &msgs {
            bytes_sum += m.len();
            bytes_max = bytes_max.max(m.len());
            messages += 1;
        }
        let (mut decode, mut merge) = (Duration::ZERO, Duration::ZERO);
        for (a, bytes) in msgs.iter().enumerate() {
            let t0 = Instant::now();
            let iv = pb::Interval::decode(bytes.as_slice()).expect("our own message");
            let part = wire::interval_part(&iv).expect("our own histogram");
            // As the session's reader tasks do: each agent's running sum (its share if it
            // is lost), counted with the decoding, off the merge's path.
            received[a].add(&part);
            let t1 = Instant::now();
            for m in merger.add(a, iv.seq, part) {
                last_line = text::interval_line(&m, pct, &plan.workload);
                black_box(&last_line);
                result.intervals.push(m);
            }
            let t2 = Instant::now();
            decode += t1 - t0;
            merge += t2 - t1;
        }
        decode_t.push(decode);
        merge_t.push(merge);
        total_t.push(decode + merge);
    }

    let mut finals_t = Duration::ZERO;
    let mut agents = Vec::with_capacity(o.agents);
    for (a, sender) in senders.iter().enumerate() {
        let bytes = final_bytes(&o, &mut h, a);
        let t0 = Instant::now();
        let f = pb::Final::decode(bytes.as_slice()).expect("our own message");
        let wire::AgentFinal {
            agent,
            kinds,
            targets,
            ..
        } = wire::agent_final(sender, &f);
        result.add_statements(kinds, targets);
        agents.push(agent);
        for m in merger.finish(a) {
            result.intervals.push(m);
        }
        finals_t += t0.elapsed();
    }
    result.agents = agents;
    drop(h);

    let t0 = Instant::now();
    let report = text::final_report(&plan, &result);
    let text_t = t0.elapsed();
    let t0 = Instant::now();
    let doc = serde_json::to_vec(&json::build(&plan, &result)).expect("serialisable");
    let json_t = t0.elapsed();
    if o.show_report {
        println!("{last_line}\n{report}");
    }
    black_box((&report, &doc));

    let (merge_mean, merge_max) = mean_max(&merge_t);
    let (decode_mean, decode_max) = mean_max(&decode_t);
    let (total_mean, total_max) = mean_max(&total_t);
    let bytes_mean = bytes_sum as f64 / messages.max(1) as f64;
    let rss = peak_rss_mib();
    let build = if cfg!(debug_assertions) {
        "debug build: figures are not representative, use --release"
    } else {
        "release build"
    };
    println!(
        "fleetbench merge benchmark: {} agents, {} intervals, {}, {} threads per agent, ~{} events per agent and interval ({build})",
        o.agents,
        o.intervals,
        plan.workload.name(),
        o.threads_per_agent,
        o.samples
    );
    println!(
        "  merge+line per interval:         {merge_mean:8.2} ms mean, {merge_max:8.2} ms max   (target < {TARGET_MERGE_MS} ms: {})",
        verdict(merge_max < TARGET_MERGE_MS)
    );
    println!(
        "  decode per interval:             {decode_mean:8.2} ms mean, {decode_max:8.2} ms max   (protobuf + histograms of all agents on one core; in a run each agent's reader task decodes its own, in parallel)"
    );
    println!(
        "  decode+merge+line, one core:     {total_mean:8.2} ms mean, {total_max:8.2} ms max   (for reference)"
    );
    println!(
        "  Interval message per agent:      {bytes_mean:8.0} B mean, {bytes_max:8} B max    (target < {TARGET_MESSAGE_BYTES} B: {})",
        verdict(bytes_max < TARGET_MESSAGE_BYTES)
    );
    println!("  finals (decode + merge, all):    {:8.2} ms", ms(finals_t));
    println!(
        "  end report:                      {:8.2} ms text ({} lines), {:.2} ms JSON ({:.1} MB)",
        ms(text_t),
        report.lines().count(),
        ms(json_t),
        doc.len() as f64 / 1e6
    );
    match rss {
        Some(mib) => println!(
            "  peak RSS (VmHWM):                {mib:8.1} MiB   (target < {TARGET_RSS_MIB} MiB: {})",
            verdict(mib < TARGET_RSS_MIB)
        ),
        None => println!("  peak RSS (VmHWM):                unavailable (no /proc/self/status)"),
    }
    println!("  last interval line: {last_line}");
}
