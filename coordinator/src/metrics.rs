//! Live figures for Prometheus (`--metrics-listen ADDR`, `--metrics-push URL`). A board
//! that the measured run updates as agents' intervals arrive; a pure renderer of
//! Prometheus' text format (0.0.4) and OpenMetrics 1.0; a small HTTP server that answers
//! scrapes from the board; and a push of a run's final figures to a Pushgateway.
//!
//! Counters and the latency histogram are per agent, so `sum()` over agents gives the
//! fleet's figures exactly; the merged percentiles of the last interval (which no sum of
//! per-agent percentiles can give) are a series of their own. Every series carries the
//! run id and the run's tags as labels.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleetbench_model::host::HostFigures;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::merge::{DbCounters, IntervalPart, IoCounters, Latency, MergedInterval, RunResult};

pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds, in seconds, of the exported latency histogram's buckets. Counts come from
/// the HDR histogram, so they are exact up to its 3 significant digits.
const BUCKETS_S: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// Percentiles of the interval-latency gauges (100 is the maximum). A gauge's label, not
/// a summary's `quantile`: they describe one interval, not the run's running totals.
const QUANTILES: [f64; 4] = [0.5, 0.95, 0.99, 1.0];

/// The `percentile` label of quantile `q`.
fn pct_label(q: f64) -> String {
    number(q * 100.0)
}

/// What the run is, as labels on every series.
#[derive(Debug, Clone, Default)]
pub struct RunLabels {
    pub run_id: String,
    pub workload: String,
    /// `--tag key=value`.
    pub tags: Vec<(String, String)>,
    /// (address, host name) of each agent taking part.
    pub agents: Vec<(String, String)>,
    /// (name, address) of each database target, by target index.
    pub targets: Vec<(String, String)>,
}

/// One interval's rates and percentiles.
#[derive(Debug, Clone, Copy, Default)]
struct Rates {
    tps: f64,
    /// Reads, writes, others per second.
    qps: [f64; 3],
    threads_running: u32,
    /// Latency at [`QUANTILES`], seconds.
    quantiles_s: [f64; 4],
    /// Open loop: queue length and threads inside an event at the interval's end.
    open: Option<(u64, u32)>,
}

impl Rates {
    fn of(events: u64, db: &DbCounters, d: Duration, threads: u32, lat: &Latency) -> Rates {
        let per = |n: u64| crate::merge::per_sec(n, d);
        Rates {
            tps: per(events),
            qps: [per(db.reads), per(db.writes), per(db.others)],
            threads_running: threads,
            quantiles_s: QUANTILES.map(|q| lat.percentile_ms(q * 100.0) / 1e3),
            open: None,
        }
    }
}

/// One agent's series: counters since the run's start, the last interval's rates.
#[derive(Debug, Default)]
struct AgentSeries {
    host: String,
    events: u64,
    db: DbCounters,
    io: IoCounters,
    latency: Latency,
    last: Option<Rates>,
    /// The host's load over its last interval, and its network bytes since the start.
    load: Option<HostFigures>,
    net_rx: u64,
    net_tx: u64,
    /// TPC-C, per transaction type: (completed, failed, retried) since the start, and
    /// completed per minute in the agent's last interval.
    txns: [(u64, u64, u64); 5],
    txn_per_min: [f64; 5],
}

/// A database target's figures: counters as the agents' intervals bring them (the run's
/// totals once it has ended), each agent's last interval's rates, and the statements'
/// latency once the run has ended.
#[derive(Debug, Clone, Default)]
struct TargetSeries {
    name: String,
    addr: String,
    db: DbCounters,
    /// Reads, writes, others per second in each agent's last interval, by agent.
    qps: BTreeMap<String, [f64; 3]>,
    statements: Latency,
}

#[derive(Debug, Default)]
struct State {
    run: RunLabels,
    agents: BTreeMap<String, AgentSeries>,
    /// The last merged interval: its number, end (seconds after the start) and rates.
    merged: Option<(u32, f64, Rates)>,
    finished: bool,
    targets: Vec<TargetSeries>,
}

/// The live figures of the run in progress (or the last one), shared by the run and the
/// HTTP server.
#[derive(Debug, Default)]
pub struct Board {
    state: Mutex<State>,
}

impl Board {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A new run begins: the last run's series are dropped.
    pub fn begin(&self, run: RunLabels) {
        self.with(|s| {
            *s = State {
                agents: run
                    .agents
                    .iter()
                    .map(|(a, h)| {
                        let series = AgentSeries {
                            host: h.clone(),
                            ..Default::default()
                        };
                        (a.clone(), series)
                    })
                    .collect(),
                targets: run
                    .targets
                    .iter()
                    .map(|(name, addr)| TargetSeries {
                        name: name.clone(),
                        addr: addr.clone(),
                        ..Default::default()
                    })
                    .collect(),
                run,
                ..Default::default()
            }
        });
    }

    /// One agent's part of an interval, and its host's load over it.
    pub fn agent_interval(&self, addr: &str, part: &IntervalPart, load: Option<&HostFigures>) {
        self.with(|s| {
            let a = s.agents.entry(addr.to_string()).or_default();
            a.events = a.events.saturating_add(part.events);
            a.db.merge(&part.db);
            a.io.merge(&part.io);
            a.latency.merge(&part.latency);
            let mut rates = Rates::of(
                part.events,
                &part.db,
                part.duration,
                part.threads_running,
                &part.latency,
            );
            rates.open = part.open.as_ref().map(|o| (o.queue_length, o.concurrency));
            a.last = Some(rates);
            if !part.txns.is_empty() {
                for (i, t) in part.txns.0.iter().enumerate() {
                    let c = &mut a.txns[i];
                    *c = (
                        c.0.saturating_add(t.count()),
                        c.1.saturating_add(t.failed),
                        c.2.saturating_add(t.retried),
                    );
                    a.txn_per_min[i] = crate::merge::per_sec(t.count(), part.duration) * 60.0;
                }
            }
            if let Some(h) = load {
                a.net_rx = a.net_rx.saturating_add(h.net_rx_bytes);
                a.net_tx = a.net_tx.saturating_add(h.net_tx_bytes);
                a.load = Some(*h);
            }
            // Targets the plan does not name are not ours: left out.
            for (i, d) in &part.targets {
                if let Some(t) = s.targets.get_mut(*i) {
                    t.db.merge(d);
                    let per = |n: u64| crate::merge::per_sec(n, part.duration);
                    let rates = [per(d.reads), per(d.writes), per(d.others)];
                    t.qps.insert(addr.to_string(), rates);
                }
            }
        });
    }

    /// A merged interval: its exact percentiles over all agents.
    pub fn merged(&self, iv: &MergedInterval) {
        let rates = Rates::of(iv.events, &iv.db, iv.duration, iv.threads, &iv.latency);
        self.with(|s| s.merged = Some((iv.seq, iv.end.as_secs_f64(), rates)));
    }

    /// The run ended: each target's counters become the run's totals (the agents' final
    /// reports), and its statements' latency joins.
    pub fn finish(&self, r: &RunResult) {
        self.with(|s| {
            s.finished = true;
            for (i, db, l) in &r.targets {
                if let Some(t) = s.targets.get_mut(*i) {
                    t.db = db.clone();
                    t.statements = l.clone();
                }
            }
        });
    }

    /// The board in Prometheus' text format, or in OpenMetrics when `openmetrics`.
    pub fn render(&self, openmetrics: bool) -> String {
        self.with(|s| render(s, openmetrics))
    }

    pub fn run_id(&self) -> String {
        self.with(|s| s.run.run_id.clone())
    }
}

/// One TPC-C figure of an agent, by transaction type index.
type TxnFigure = fn(&AgentSeries, usize) -> f64;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// The exposition being written: families (HELP and TYPE once) and their samples.
struct Out {
    text: String,
    openmetrics: bool,
    /// run_id and the tags, rendered once: `run_id="..",tag_x=".."`.
    base: String,
}

impl Out {
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        // Text 0.0.4 names a counter's family as its samples (`..._total`); OpenMetrics
        // names the family without the suffix.
        let family = if kind == Kind::Counter && !self.openmetrics {
            format!("{name}_total")
        } else {
            name.to_string()
        };
        let t = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        };
        let _ = writeln!(self.text, "# HELP {family} {help}");
        let _ = writeln!(self.text, "# TYPE {family} {t}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        self.text.push('{');
        self.text.push_str(&self.base);
        for (k, v) in labels {
            let _ = write!(self.text, ",{k}=\"{}\"", escape(v));
        }
        self.text.push('}');
        let _ = writeln!(self.text, " {}", number(value));
    }
}

/// A sample value: integers without a fraction, the rest to 9 decimals (nanoseconds for
/// seconds) without trailing zeros and never in exponent form, infinities as the formats
/// spell them.
fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else if v.is_nan() {
        "NaN".to_string()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.9}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A label value as both formats quote it.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// Label names for the tags: `tag_` and the key with `-` and `.` made `_` (a label name is
/// letters, digits and `_`); a key that collides with an earlier one gets a number.
fn tag_labels(tags: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in tags {
        let base: String = k
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mut name = format!("tag_{base}");
        let mut n = 2;
        while out.iter().any(|(seen, _)| *seen == name) {
            name = format!("tag_{base}_{n}");
            n += 1;
        }
        out.push((name, v.clone()));
    }
    out
}

/// Cumulative bucket counts of `l` at [`BUCKETS_S`] (the histogram is in microseconds).
fn buckets(l: &Latency) -> Vec<u64> {
    BUCKETS_S
        .iter()
        .map(|&le| {
            let us = (le * 1e6) as u64;
            if l.count() == 0 {
                0
            } else {
                l.hist.count_between(0, us)
            }
        })
        .collect()
}

fn render(s: &State, openmetrics: bool) -> String {
    let mut base = format!("run_id=\"{}\"", escape(&s.run.run_id));
    for (k, v) in tag_labels(&s.run.tags) {
        let _ = write!(base, ",{k}=\"{}\"", escape(&v));
    }
    let mut o = Out {
        text: String::new(),
        openmetrics,
        base,
    };
    let version = env!("CARGO_PKG_VERSION");
    o.family(
        "fleetbench_run_info",
        Kind::Gauge,
        "The run: its workload and fleetbench's version (always 1).",
    );
    o.sample(
        "fleetbench_run_info",
        &[("workload", &s.run.workload), ("version", version)],
        1.0,
    );
    o.family(
        "fleetbench_run_finished",
        Kind::Gauge,
        "1 once the run has ended, else 0.",
    );
    o.sample(
        "fleetbench_run_finished",
        &[],
        f64::from(u8::from(s.finished)),
    );
    o.family(
        "fleetbench_agent_info",
        Kind::Gauge,
        "An agent of the run and its host's name (always 1).",
    );
    for (addr, a) in &s.agents {
        o.sample(
            "fleetbench_agent_info",
            &[("agent", addr), ("host", &a.host)],
            1.0,
        );
    }
    if let Some((seq, end, r)) = &s.merged {
        o.family(
            "fleetbench_interval",
            Kind::Gauge,
            "Number of the last interval merged over all agents.",
        );
        o.sample("fleetbench_interval", &[], f64::from(*seq));
        o.family(
            "fleetbench_interval_end_seconds",
            Kind::Gauge,
            "End of the last merged interval, in seconds after the measurement's start.",
        );
        o.sample("fleetbench_interval_end_seconds", &[], *end);
        o.family("fleetbench_merged_latency_seconds", Kind::Gauge, "Latency percentiles of the last interval, merged exactly over all agents (percentile 100 is the maximum).");
        for (q, v) in QUANTILES.iter().zip(r.quantiles_s) {
            o.sample(
                "fleetbench_merged_latency_seconds",
                &[("percentile", &pct_label(*q))],
                v,
            );
        }
    }
    let agents: Vec<(&String, &AgentSeries)> = s.agents.iter().collect();
    let each = |o: &mut Out, name: &str, f: &dyn Fn(&AgentSeries) -> Option<f64>| {
        for (addr, a) in &agents {
            if let Some(v) = f(a) {
                o.sample(name, &[("agent", addr)], v);
            }
        }
    };
    o.family(
        "fleetbench_events",
        Kind::Counter,
        "Events (transactions) completed since the measurement's start.",
    );
    each(&mut o, "fleetbench_events_total", &|a| {
        Some(a.events as f64)
    });
    o.family(
        "fleetbench_tps",
        Kind::Gauge,
        "Events (transactions) per second over the agent's last interval.",
    );
    each(&mut o, "fleetbench_tps", &|a| a.last.map(|r| r.tps));
    o.family(
        "fleetbench_queries",
        Kind::Counter,
        "Queries sent since the measurement's start, by kind (read, write, other).",
    );
    for (addr, a) in &agents {
        for (kind, n) in [
            ("read", a.db.reads),
            ("write", a.db.writes),
            ("other", a.db.others),
        ] {
            o.sample(
                "fleetbench_queries_total",
                &[("agent", addr), ("kind", kind)],
                n as f64,
            );
        }
    }
    o.family(
        "fleetbench_qps",
        Kind::Gauge,
        "Queries per second over the agent's last interval, by kind.",
    );
    for (addr, a) in &agents {
        if let Some(r) = a.last {
            for (kind, v) in ["read", "write", "other"].iter().zip(r.qps) {
                o.sample("fleetbench_qps", &[("agent", addr), ("kind", kind)], v);
            }
        }
    }
    o.family(
        "fleetbench_errors",
        Kind::Counter,
        "Errors ignored per --mysql-ignore-errors (the event was retried), by server error code.",
    );
    for (addr, a) in &agents {
        for (code, n) in &a.db.errors_by_code {
            o.sample(
                "fleetbench_errors_total",
                &[("agent", addr), ("code", &code.to_string())],
                *n as f64,
            );
        }
    }
    o.family(
        "fleetbench_reconnects",
        Kind::Counter,
        "Reconnects to the database since the measurement's start.",
    );
    each(&mut o, "fleetbench_reconnects_total", &|a| {
        Some(a.db.reconnects as f64)
    });
    o.family(
        "fleetbench_threads_running",
        Kind::Gauge,
        "Threads running at the end of the agent's last interval.",
    );
    each(&mut o, "fleetbench_threads_running", &|a| {
        a.last.map(|r| f64::from(r.threads_running))
    });
    o.family(
        "fleetbench_interval_latency_seconds",
        Kind::Gauge,
        "Latency percentiles of the agent's last interval (percentile 100 is the maximum).",
    );
    for (addr, a) in &agents {
        if let Some(r) = a.last {
            for (q, v) in QUANTILES.iter().zip(r.quantiles_s) {
                o.sample(
                    "fleetbench_interval_latency_seconds",
                    &[("agent", addr), ("percentile", &pct_label(*q))],
                    v,
                );
            }
        }
    }
    o.family(
        "fleetbench_latency_seconds",
        Kind::Histogram,
        "Latency of every event since the measurement's start (buckets from the HDR histogram).",
    );
    for (addr, a) in &agents {
        for (le, n) in BUCKETS_S.iter().zip(buckets(&a.latency)) {
            o.sample(
                "fleetbench_latency_seconds_bucket",
                &[("agent", addr), ("le", &number(*le))],
                n as f64,
            );
        }
        o.sample(
            "fleetbench_latency_seconds_bucket",
            &[("agent", addr), ("le", "+Inf")],
            a.latency.count() as f64,
        );
        o.sample(
            "fleetbench_latency_seconds_sum",
            &[("agent", addr)],
            a.latency.sum_ns as f64 / 1e9,
        );
        o.sample(
            "fleetbench_latency_seconds_count",
            &[("agent", addr)],
            a.latency.count() as f64,
        );
    }
    if s.run.workload == "fileio" {
        o.family(
            "fleetbench_io_operations",
            Kind::Counter,
            "File operations since the measurement's start, by kind.",
        );
        for (addr, a) in &agents {
            for (op, n) in [
                ("read", a.io.reads),
                ("write", a.io.writes),
                ("fsync", a.io.fsyncs),
            ] {
                o.sample(
                    "fleetbench_io_operations_total",
                    &[("agent", addr), ("op", op)],
                    n as f64,
                );
            }
        }
        o.family(
            "fleetbench_io_bytes",
            Kind::Counter,
            "Bytes read and written since the measurement's start.",
        );
        for (addr, a) in &agents {
            for (dir, n) in [("read", a.io.bytes_read), ("write", a.io.bytes_written)] {
                o.sample(
                    "fleetbench_io_bytes_total",
                    &[("agent", addr), ("direction", dir)],
                    n as f64,
                );
            }
        }
    }
    if agents
        .iter()
        .any(|(_, a)| a.last.is_some_and(|r| r.open.is_some()))
    {
        o.family("fleetbench_queue_length", Kind::Gauge, "Open loop: events arrived and not yet taken by a thread, at the agent's last interval's end.");
        each(&mut o, "fleetbench_queue_length", &|a| {
            a.last.and_then(|r| r.open).map(|(q, _)| q as f64)
        });
        o.family(
            "fleetbench_concurrency",
            Kind::Gauge,
            "Open loop: threads inside an event at the agent's last interval's end.",
        );
        each(&mut o, "fleetbench_concurrency", &|a| {
            a.last.and_then(|r| r.open).map(|(_, c)| f64::from(c))
        });
    }
    if s.run.workload == "tpcc" {
        use fleetbench_model::workloads::tpcc::TXN_NAMES;
        // One family per figure, a sample per agent and transaction type.
        let families: [(&str, Kind, &str, TxnFigure); 4] = [
            (
                "fleetbench_tpcc_transactions",
                Kind::Counter,
                "TPC-C: transactions completed since the measurement's start, by type.",
                |a, i| a.txns[i].0 as f64,
            ),
            (
                "fleetbench_tpcc_failed",
                Kind::Counter,
                "TPC-C: transactions that failed after their retries, by type.",
                |a, i| a.txns[i].1 as f64,
            ),
            (
                "fleetbench_tpcc_retried",
                Kind::Counter,
                "TPC-C: retries after a deadlock or lock wait timeout, by type.",
                |a, i| a.txns[i].2 as f64,
            ),
            (
                "fleetbench_tpcc_per_minute",
                Kind::Gauge,
                "TPC-C: transactions completed per minute in the agent's last interval, by type (new_order summed over agents is the TpmC).",
                |a, i| a.txn_per_min[i],
            ),
        ];
        for (name, kind, help, f) in families {
            o.family(name, kind, help);
            let sample = if kind == Kind::Counter {
                format!("{name}_total")
            } else {
                name.to_string()
            };
            for (addr, a) in &agents {
                for (i, t) in TXN_NAMES.iter().enumerate() {
                    o.sample(&sample, &[("agent", addr), ("type", t)], f(a, i));
                }
            }
        }
    }
    if agents.iter().any(|(_, a)| a.load.is_some()) {
        let load = |f: fn(&HostFigures) -> f64| move |a: &AgentSeries| a.load.as_ref().map(f);
        o.family(
            "fleetbench_host_cpu_busy_percent",
            Kind::Gauge,
            "The agent host's CPU busy over its last interval, % of all cores.",
        );
        each(
            &mut o,
            "fleetbench_host_cpu_busy_percent",
            &load(|h| h.cpu_busy_pct),
        );
        o.family(
            "fleetbench_agent_cpu_percent",
            Kind::Gauge,
            "The agent process's CPU over its last interval, % of all cores.",
        );
        each(
            &mut o,
            "fleetbench_agent_cpu_percent",
            &load(|h| h.agent_cpu_pct),
        );
        o.family(
            "fleetbench_host_run_queue",
            Kind::Gauge,
            "Runnable tasks on the agent host at its last interval's end.",
        );
        each(
            &mut o,
            "fleetbench_host_run_queue",
            &load(|h| f64::from(h.run_queue)),
        );
        o.family(
            "fleetbench_host_cores",
            Kind::Gauge,
            "Cores of the agent host.",
        );
        each(
            &mut o,
            "fleetbench_host_cores",
            &load(|h| f64::from(h.cores)),
        );
        o.family(
            "fleetbench_host_memory_used_bytes",
            Kind::Gauge,
            "Memory in use on the agent host.",
        );
        each(
            &mut o,
            "fleetbench_host_memory_used_bytes",
            &load(|h| h.mem_used_bytes as f64),
        );
        o.family(
            "fleetbench_host_memory_total_bytes",
            Kind::Gauge,
            "Memory of the agent host.",
        );
        each(
            &mut o,
            "fleetbench_host_memory_total_bytes",
            &load(|h| h.mem_total_bytes as f64),
        );
        o.family("fleetbench_host_network_receive_bytes", Kind::Counter, "Bytes the agent host received since the measurement's start (all interfaces but loopback).");
        each(
            &mut o,
            "fleetbench_host_network_receive_bytes_total",
            &|a| a.load.map(|_| a.net_rx as f64),
        );
        o.family("fleetbench_host_network_transmit_bytes", Kind::Counter, "Bytes the agent host sent since the measurement's start (all interfaces but loopback).");
        each(
            &mut o,
            "fleetbench_host_network_transmit_bytes_total",
            &|a| a.load.map(|_| a.net_tx as f64),
        );
    }
    if agents
        .iter()
        .any(|(_, a)| a.load.is_some_and(|h| h.disk.is_some()))
    {
        let disk = |f: fn(&fleetbench_model::host::DiskFigures) -> f64| {
            move |a: &AgentSeries| a.load.and_then(|h| h.disk).as_ref().map(f)
        };
        o.family(
            "fleetbench_host_disk_util_percent",
            Kind::Gauge,
            "fileio: share of the agent's last interval its work directory's disk was busy.",
        );
        each(
            &mut o,
            "fleetbench_host_disk_util_percent",
            &disk(|d| d.util_pct),
        );
        o.family(
            "fleetbench_host_disk_queue_depth",
            Kind::Gauge,
            "fileio: requests in flight on the work directory's disk, on average over the agent's last interval.",
        );
        each(
            &mut o,
            "fleetbench_host_disk_queue_depth",
            &disk(|d| d.queue_depth),
        );
    }
    if !s.targets.is_empty() {
        o.family(
            "fleetbench_target_queries",
            Kind::Counter,
            "Queries a database target received since the measurement's start, by kind.",
        );
        for t in &s.targets {
            for (kind, n) in [
                ("read", t.db.reads),
                ("write", t.db.writes),
                ("other", t.db.others),
            ] {
                o.sample(
                    "fleetbench_target_queries_total",
                    &[
                        ("target", &t.name),
                        ("target_addr", &t.addr),
                        ("kind", kind),
                    ],
                    n as f64,
                );
            }
        }
        o.family(
            "fleetbench_target_qps",
            Kind::Gauge,
            "Queries per second a database target received, by kind: the sum of every agent's last interval.",
        );
        for t in &s.targets {
            let sum = t
                .qps
                .values()
                .fold([0.0; 3], |a, q| [a[0] + q[0], a[1] + q[1], a[2] + q[2]]);
            for (kind, v) in ["read", "write", "other"].iter().zip(sum) {
                o.sample(
                    "fleetbench_target_qps",
                    &[
                        ("target", &t.name),
                        ("target_addr", &t.addr),
                        ("kind", kind),
                    ],
                    v,
                );
            }
        }
        o.family(
            "fleetbench_target_errors",
            Kind::Counter,
            "Errors a database target returned that were ignored, by code, since the measurement's start.",
        );
        for t in &s.targets {
            for (code, n) in &t.db.errors_by_code {
                o.sample(
                    "fleetbench_target_errors_total",
                    &[
                        ("target", &t.name),
                        ("target_addr", &t.addr),
                        ("code", &code.to_string()),
                    ],
                    *n as f64,
                );
            }
        }
        o.family(
            "fleetbench_target_reconnects",
            Kind::Counter,
            "Reconnects to a database target since the measurement's start.",
        );
        for t in &s.targets {
            o.sample(
                "fleetbench_target_reconnects_total",
                &[("target", &t.name), ("target_addr", &t.addr)],
                t.db.reconnects as f64,
            );
        }
        o.family(
            "fleetbench_target_statement_latency_seconds",
            Kind::Gauge,
            "Latency percentiles of single statements sent to a database target over the run (once it has ended).",
        );
        for t in &s.targets {
            if t.statements.count() > 0 {
                for q in QUANTILES {
                    let v = t.statements.percentile_ms(q * 100.0) / 1e3;
                    o.sample(
                        "fleetbench_target_statement_latency_seconds",
                        &[
                            ("target", &t.name),
                            ("target_addr", &t.addr),
                            ("percentile", &pct_label(q)),
                        ],
                        v,
                    );
                }
            }
        }
    }
    if openmetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

/// `--metrics-push`'s Pushgateway: where to PUT a run's final figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushUrl {
    pub host: String,
    pub port: u16,
    /// The path the URL gave, without a trailing `/`.
    pub path: String,
}

impl PushUrl {
    /// `http://HOST[:PORT][/PATH]`; the port defaults to the Pushgateway's 9091.
    pub fn parse(s: &str) -> Result<PushUrl, &'static str> {
        let rest = match s.strip_prefix("http://") {
            Some(r) => r,
            None if s.starts_with("https://") => {
                return Err(
                    "https is not supported: use http:// (a Pushgateway behind TLS needs a proxy)",
                );
            }
            None => return Err("expected http://HOST[:PORT][/PATH]"),
        };
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h,
                p.parse::<u16>()
                    .map_err(|_| "the port is not a number in 1..65535")?,
            ),
            _ => (hostport, 9091),
        };
        if host.is_empty() || port == 0 {
            return Err("expected http://HOST[:PORT][/PATH]");
        }
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("the path holds a space or a control character");
        }
        Ok(PushUrl {
            host: host.to_string(),
            port,
            path: path.trim_end_matches('/').to_string(),
        })
    }

    /// The path a run's figures go to: the Pushgateway's grouping of job `fleetbench` and
    /// the run id, unless the URL named its own grouping (`/metrics/job/...`).
    pub fn grouping_path(&self, run_id: &str) -> String {
        if self.path.contains("/metrics/job/") {
            self.path.clone()
        } else {
            format!("{}/metrics/job/fleetbench/run_id/{run_id}", self.path)
        }
    }
}

/// Serves scrapes from a board (`--metrics-listen`) and pushes final figures
/// (`--metrics-push`). Cloned into every run of a command; the server stops when the last
/// clone goes.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

struct Inner {
    board: Arc<Board>,
    push: Option<PushUrl>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(s) = &self.server {
            s.abort();
        }
    }
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("push", &self.inner.push)
            .field("serving", &self.inner.server.is_some())
            .finish()
    }
}

impl PartialEq for Exporter {
    fn eq(&self, o: &Exporter) -> bool {
        Arc::ptr_eq(&self.inner, &o.inner)
    }
}

/// The HTTP server could not listen.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {addr} for --metrics-listen: {source}")]
pub struct ListenError {
    addr: SocketAddr,
    source: std::io::Error,
}

impl Exporter {
    /// Starts serving on `listen` (when given; the bound address is returned, which
    /// differs from `listen` for port 0) and remembers where to push.
    pub async fn start(
        listen: Option<SocketAddr>,
        push: Option<PushUrl>,
    ) -> Result<(Exporter, Option<SocketAddr>), ListenError> {
        let board = Arc::new(Board::default());
        let (server, bound) = match listen {
            Some(addr) => {
                let l = TcpListener::bind(addr)
                    .await
                    .map_err(|source| ListenError { addr, source })?;
                let bound = l
                    .local_addr()
                    .map_err(|source| ListenError { addr, source })?;
                (Some(tokio::spawn(serve(l, board.clone()))), Some(bound))
            }
            None => (None, None),
        };
        let inner = Inner {
            board,
            push,
            server,
        };
        Ok((
            Exporter {
                inner: Arc::new(inner),
            },
            bound,
        ))
    }

    pub fn board(&self) -> &Board {
        &self.inner.board
    }

    /// Pushes the board (a run that has ended) to the Pushgateway, if there is one.
    /// Returns where it went, or why it could not.
    pub async fn push(&self) -> Option<Result<String, String>> {
        let url = self.inner.push.as_ref()?;
        let path = url.grouping_path(&self.inner.board.run_id());
        let body = self.inner.board.render(false);
        let at = format!("http://{}:{}{path}", url.host, url.port);
        Some(
            tokio::time::timeout(Duration::from_secs(10), put(url, &path, &body))
                .await
                .unwrap_or_else(|_| Err("no answer within 10 s".into()))
                .map(|()| at.clone())
                .map_err(|e| format!("{at}: {e}")),
        )
    }
}

/// Answers every connection on `l` from `board` until the task is aborted.
async fn serve(l: TcpListener, board: Arc<Board>) {
    loop {
        let Ok((conn, _)) = l.accept().await else {
            // Out of descriptors, say: try again shortly rather than spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let board = board.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(10), answer(conn, &board)).await;
        });
    }
}

/// The longest request head read; a scrape's is a few hundred bytes.
const MAX_HEAD: usize = 16 * 1024;

/// Reads one request and writes one response, then closes.
async fn answer(mut conn: TcpStream, board: &Board) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return respond(
                &mut conn,
                "431 Request Header Fields Too Large",
                "text/plain",
                "request head too large\n",
                false,
            )
            .await;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let (status, ctype, body, head_only) = route(&head, board);
    respond(&mut conn, status, ctype, &body, head_only).await
}

/// What a request gets: status, content type, body, and whether to send the body (HEAD).
fn route(head: &str, board: &Board) -> (&'static str, &'static str, String, bool) {
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return (
            "405 Method Not Allowed",
            "text/plain",
            "only GET and HEAD\n".into(),
            false,
        );
    }
    match path {
        "/metrics" => {
            let openmetrics = lines.any(|l| {
                l.split_once(':').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("accept")
                        && v.contains("application/openmetrics-text")
                })
            });
            let ctype = if openmetrics {
                OPENMETRICS_CONTENT_TYPE
            } else {
                TEXT_CONTENT_TYPE
            };
            ("200 OK", ctype, board.render(openmetrics), head_only)
        }
        "/" => (
            "200 OK",
            "text/plain",
            "fleetbench: the run's figures are at /metrics\n".into(),
            head_only,
        ),
        _ => (
            "404 Not Found",
            "text/plain",
            "not found: try /metrics\n".into(),
            head_only,
        ),
    }
}

async fn respond(
    conn: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &str,
    head_only: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await?;
    if !head_only {
        conn.write_all(body.as_bytes()).await?;
    }
    conn.shutdown().await
}

/// PUTs `body` to `path` on the Pushgateway; Ok on a 2xx answer.
async fn put(url: &PushUrl, path: &str, body: &str) -> Result<(), String> {
    let mut conn = TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let req = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: {TEXT_CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        url.host,
        url.port,
        body.len()
    );
    conn.write_all(req.as_bytes())
        .await
        .map_err(|e| format!("cannot send: {e}"))?;
    let mut answer = Vec::new();
    conn.take(64 * 1024)
        .read_to_end(&mut answer)
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or("");
    let code = status.split(' ').nth(1).unwrap_or("");
    if code.starts_with('2') {
        Ok(())
    } else {
        // The Pushgateway says why in the body.
        let why = answer
            .split("\r\n\r\n")
            .nth(1)
            .and_then(|b| b.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        Err(format!("{status} {why}").trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::IntervalPart;

    fn latency(us: &[u64]) -> Latency {
        let mut l = Latency::default();
        for &v in us {
            l.hist.record(v).unwrap();
            l.sum_ns += v * 1000;
        }
        l.min_ns = us.iter().min().copied().unwrap_or(0) * 1000;
        l.max_ns = us.iter().max().copied().unwrap_or(0) * 1000;
        l
    }

    fn part(events: u64, us: &[u64]) -> IntervalPart {
        IntervalPart {
            duration: Duration::from_secs(1),
            events,
            threads_running: 4,
            latency: latency(us),
            db: DbCounters {
                reads: events * 10,
                writes: events * 4,
                others: events * 2,
                ignored_errors: 1,
                reconnects: 0,
                errors_by_code: [(1213, 1)].into_iter().collect(),
                reconnect_failures: 0,
            },
            ..Default::default()
        }
    }

    fn board() -> Board {
        let b = Board::default();
        b.begin(RunLabels {
            run_id: "r1".into(),
            workload: "oltp_read_write".into(),
            tags: vec![
                ("buffer-pool".into(), "8G".into()),
                ("proxy".into(), "my\"cat".into()),
            ],
            agents: vec![
                ("10.0.0.1:7600".into(), "c1".into()),
                ("10.0.0.2:7600".into(), "c2".into()),
            ],
            targets: vec![
                ("a".into(), "h0:3306".into()),
                ("b".into(), "h1:3306".into()),
            ],
        });
        b
    }

    /// The value of the one sample line starting with `prefix`.
    fn value(text: &str, prefix: &str) -> f64 {
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
        assert_eq!(lines.len(), 1, "{prefix} in\n{text}");
        lines[0].rsplit(' ').next().unwrap().parse().unwrap()
    }

    #[test]
    fn counters_add_up_per_agent_and_rates_are_the_last_interval() {
        let b = board();
        b.agent_interval("10.0.0.1:7600", &part(100, &[1000, 2000]), None);
        b.agent_interval("10.0.0.1:7600", &part(50, &[4000]), None);
        b.agent_interval("10.0.0.2:7600", &part(70, &[300]), None);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_events_total{{{base},agent=\"10.0.0.1:7600\"}}")
            ),
            150.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_tps{{{base},agent=\"10.0.0.1:7600\"}}")
            ),
            50.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_tps{{{base},agent=\"10.0.0.2:7600\"}}")
            ),
            70.0
        );
        assert_eq!(
            value(
                &t,
                &format!(
                    "fleetbench_queries_total{{{base},agent=\"10.0.0.1:7600\",kind=\"read\"}}"
                )
            ),
            1500.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_errors_total{{{base},agent=\"10.0.0.1:7600\",code=\"1213\"}}")
            ),
            2.0
        );
        // The histogram: cumulative, +Inf equal to the count, sum in seconds.
        let a1 = format!("{base},agent=\"10.0.0.1:7600\"");
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"0.001\"}}")
            ),
            1.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"0.0025\"}}")
            ),
            2.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"+Inf\"}}")
            ),
            3.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_latency_seconds_count{{{a1}}}")),
            3.0
        );
        assert!(
            (value(&t, &format!("fleetbench_latency_seconds_sum{{{a1}}}")) - 0.007).abs() < 1e-9
        );
        // The last interval's percentiles: one event of 4 ms.
        let p99 = value(
            &t,
            &format!("fleetbench_interval_latency_seconds{{{a1},percentile=\"99\"}}"),
        );
        assert!((p99 - 0.004).abs() < 0.00001, "{p99}");
        assert_eq!(
            value(&t, &format!("fleetbench_run_finished{{{base}}}")),
            0.0
        );
        // Text format: a counter's family is named as its samples; no EOF.
        assert!(t.contains("# TYPE fleetbench_events_total counter\n"));
        assert!(!t.contains("# EOF"));
    }

    #[test]
    fn openmetrics_names_counter_families_without_total_and_ends_with_eof() {
        let b = board();
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), None);
        let t = b.render(true);
        assert!(t.contains("# TYPE fleetbench_events counter\n"));
        assert!(t.contains("# TYPE fleetbench_latency_seconds histogram\n"));
        assert!(t.ends_with("# EOF\n"));
        // Every family is declared once, and every sample line belongs to a declared one.
        let families: Vec<&str> = t
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let mut dedup = families.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), families.len());
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split('{').next().unwrap();
            assert!(
                families.iter().any(|f| name == *f
                    || name == format!("{f}_total")
                    || name == format!("{f}_bucket")
                    || name == format!("{f}_sum")
                    || name == format!("{f}_count")),
                "{name}"
            );
        }
    }

    #[test]
    fn merged_percentiles_host_load_and_targets_appear_when_known() {
        let b = board();
        let t = b.render(false);
        assert!(!t.contains("fleetbench_merged_latency_seconds{"));
        assert!(!t.contains("fleetbench_host_cpu_busy_percent{"));
        let load = HostFigures {
            cpu_busy_pct: 93.5,
            net_rx_bytes: 1000,
            net_tx_bytes: 10,
            cores: 8,
            disk: Some(fleetbench_model::host::DiskFigures {
                util_pct: 41.5,
                queue_depth: 2.25,
            }),
            ..Default::default()
        };
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), Some(&load));
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), Some(&load));
        let iv = MergedInterval {
            seq: 3,
            end: Duration::from_secs(3),
            duration: Duration::from_secs(1),
            events: 20,
            latency: latency(&[500, 9000]),
            ..Default::default()
        };
        b.merged(&iv);
        let mut r = RunResult::default();
        r.targets.push((1, part(5, &[]).db, latency(&[200])));
        b.finish(&r);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        let a1 = format!("{base},agent=\"10.0.0.1:7600\"");
        assert_eq!(
            value(&t, &format!("fleetbench_host_cpu_busy_percent{{{a1}}}")),
            93.5
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_host_network_receive_bytes_total{{{a1}}}")
            ),
            2000.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_host_disk_util_percent{{{a1}}}")),
            41.5
        );
        assert_eq!(
            value(&t, &format!("fleetbench_host_disk_queue_depth{{{a1}}}")),
            2.25
        );
        assert_eq!(value(&t, &format!("fleetbench_interval{{{base}}}")), 3.0);
        let max = value(
            &t,
            &format!("fleetbench_merged_latency_seconds{{{base},percentile=\"100\"}}"),
        );
        assert!((max - 0.009).abs() < 0.00001, "{max}");
        assert_eq!(
            value(
                &t,
                &format!(
                    "fleetbench_target_queries_total{{{base},target=\"b\",target_addr=\"h1:3306\",kind=\"write\"}}"
                )
            ),
            20.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_run_finished{{{base}}}")),
            1.0
        );
        // A new run drops the last one's series.
        b.begin(RunLabels {
            run_id: "r2".into(),
            ..Default::default()
        });
        let t = b.render(false);
        assert!(!t.contains("r1") && !t.contains("fleetbench_target_queries_total{"));
    }

    #[test]
    fn targets_are_live_from_the_agents_intervals_and_final_at_the_end() {
        let b = board();
        let mut p1 = part(10, &[500]);
        p1.targets = vec![(0, p1.db.clone())];
        let mut p2 = part(20, &[500]);
        // An agent whose tables are on both targets; an index the plan does not name.
        p2.targets = vec![
            (0, part(5, &[]).db),
            (1, part(15, &[]).db),
            (9, p2.db.clone()),
        ];
        b.agent_interval("10.0.0.1:7600", &p1, None);
        b.agent_interval("10.0.0.2:7600", &p2, None);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        let ta = format!("{base},target=\"a\",target_addr=\"h0:3306\"");
        let tb = format!("{base},target=\"b\",target_addr=\"h1:3306\"");
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{ta},kind=\"read\"}}")
            ),
            150.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{tb},kind=\"read\"}}")
            ),
            150.0
        );
        // Rates: both agents' last intervals (1 s each) summed.
        assert_eq!(
            value(&t, &format!("fleetbench_target_qps{{{ta},kind=\"write\"}}")),
            60.0
        );
        assert!(!t.contains("target=\"#9\""));
        assert!(!t.contains("fleetbench_target_statement_latency_seconds{"));
        // The end: the final reports' totals replace what the intervals added up to.
        let mut r = RunResult::default();
        r.targets.push((0, part(100, &[]).db, latency(&[200])));
        b.finish(&r);
        let t = b.render(false);
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{ta},kind=\"read\"}}")
            ),
            1000.0
        );
        assert!(t.contains(&format!(
            "fleetbench_target_statement_latency_seconds{{{ta},percentile=\"99\"}}"
        )));
    }

    #[test]
    fn tpcc_runs_get_their_transactions_by_type() {
        let b = Board::default();
        b.begin(RunLabels {
            run_id: "t".into(),
            workload: "tpcc".into(),
            ..Default::default()
        });
        let mut p = part(4, &[1000, 1000, 1000, 1000]);
        p.txns.0[0] = crate::merge::TxnFigures {
            latency: latency(&[1000, 1000, 1000]),
            failed: 1,
            retried: 2,
            rolled_back: 0,
        };
        p.txns.0[1].latency = latency(&[500]);
        b.agent_interval("a:1", &p, None);
        b.agent_interval("a:1", &p, None);
        let t = b.render(false);
        let l = r#"run_id="t",agent="a:1",type="new_order""#;
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_transactions_total{{{l}}}")),
            6.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_failed_total{{{l}}}")),
            2.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_retried_total{{{l}}}")),
            4.0
        );
        // 3 New-Orders in a 1 s interval: 180 a minute.
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_per_minute{{{l}}}")),
            180.0
        );
        assert!(!board().render(false).contains("fleetbench_tpcc_"));
    }

    #[test]
    fn tag_keys_become_label_names_without_collisions() {
        let tags = vec![
            ("a-b".to_string(), "1".to_string()),
            ("a.b".to_string(), "2".to_string()),
            ("a_b".to_string(), "3".to_string()),
        ];
        let names: Vec<String> = tag_labels(&tags).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["tag_a_b", "tag_a_b_2", "tag_a_b_3"]);
        assert_eq!(escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.00025), "0.00025");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }

    #[test]
    fn requests_route_to_the_metrics_in_the_format_asked() {
        let b = board();
        let (s, ct, body, _) = route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &b);
        assert_eq!((s, ct), ("200 OK", TEXT_CONTENT_TYPE));
        assert!(body.contains("fleetbench_run_info"));
        let (_, ct, body, _) = route(
            "GET /metrics?x=1 HTTP/1.1\r\naccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n",
            &b,
        );
        assert_eq!(ct, OPENMETRICS_CONTENT_TYPE);
        assert!(body.ends_with("# EOF\n"));
        assert_eq!(route("GET /nope HTTP/1.1\r\n\r\n", &b).0, "404 Not Found");
        assert_eq!(
            route("POST /metrics HTTP/1.1\r\n\r\n", &b).0,
            "405 Method Not Allowed"
        );
        assert!(route("HEAD /metrics HTTP/1.1\r\n\r\n", &b).3);
    }

    #[test]
    fn push_urls_parse_and_group_by_run() {
        let u = PushUrl::parse("http://pgw.example:9091").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("pgw.example", 9091, "")
        );
        assert_eq!(u.grouping_path("r1"), "/metrics/job/fleetbench/run_id/r1");
        let u = PushUrl::parse("http://127.0.0.1/base/").unwrap();
        assert_eq!(
            (u.port, u.grouping_path("r1").as_str()),
            (9091, "/base/metrics/job/fleetbench/run_id/r1")
        );
        let u = PushUrl::parse("http://[::1]:1234/metrics/job/nightly").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 1234));
        assert_eq!(u.grouping_path("r1"), "/metrics/job/nightly");
        assert!(PushUrl::parse("https://x").unwrap_err().contains("https"));
        assert!(PushUrl::parse("pgw:9091").is_err());
        assert!(PushUrl::parse("http://:9091").is_err());
        assert!(PushUrl::parse("http://x:port").is_err());
    }

    #[tokio::test]
    async fn the_server_answers_a_scrape_over_tcp() {
        let (e, bound) = Exporter::start(Some("127.0.0.1:0".parse().unwrap()), None)
            .await
            .unwrap();
        e.board().begin(RunLabels {
            run_id: "live".into(),
            ..Default::default()
        });
        let mut c = TcpStream::connect(bound.unwrap()).await.unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).await.unwrap();
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        let body = got.split("\r\n\r\n").nth(1).unwrap();
        let len: usize = got
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(len, body.len());
        assert!(body.contains("fleetbench_run_info{run_id=\"live\""));
        assert!(e.push().await.is_none());
    }
}
