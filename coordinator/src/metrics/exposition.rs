//! Exposition: the board's figures in Prometheus' text format (0.0.4) or OpenMetrics 1.0,
//! one family after another. Pure functions of the series table.

use std::fmt::Write;

use fleetbench_model::host::HostFigures;

use super::series::{AgentSeries, QUANTILES, State};
use crate::merge::Latency;

pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds, in seconds, of the exported latency histogram's buckets. Counts come from
/// the HDR histogram, so they are exact up to its 3 significant digits.
const BUCKETS_S: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// The `percentile` label of quantile `q`.
fn pct_label(q: f64) -> String {
    number(q * 100.0)
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
    /// An empty exposition of the run of `s`.
    fn new(s: &State, openmetrics: bool) -> Out {
        let mut base = format!("run_id=\"{}\"", escape(&s.run.run_id));
        for (k, v) in tag_labels(&s.run.tags) {
            let _ = write!(base, ",{k}=\"{}\"", escape(&v));
        }
        Out {
            text: String::new(),
            openmetrics,
            base,
        }
    }

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

/// The agents' series, by address.
type Agents<'a> = [(&'a String, &'a AgentSeries)];

/// A sample of `name` per agent for which `f` gives a value.
fn each(o: &mut Out, agents: &Agents, name: &str, f: &dyn Fn(&AgentSeries) -> Option<f64>) {
    for (addr, a) in agents {
        if let Some(v) = f(a) {
            o.sample(name, &[("agent", addr)], v);
        }
    }
}

/// The board's state in Prometheus' text format, or in OpenMetrics when `openmetrics`.
pub(super) fn render(s: &State, openmetrics: bool) -> String {
    let mut o = Out::new(s, openmetrics);
    let agents: Vec<(&String, &AgentSeries)> = s.agents.iter().collect();
    run_families(&mut o, s);
    event_families(&mut o, &agents);
    error_families(&mut o, &agents);
    latency_families(&mut o, &agents);
    io_families(&mut o, s, &agents);
    open_loop_families(&mut o, &agents);
    tpcc_families(&mut o, s, &agents);
    host_families(&mut o, &agents);
    disk_families(&mut o, &agents);
    target_families(&mut o, s);
    target_error_families(&mut o, s);
    server_families(&mut o, s);
    if openmetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

/// The run, its agents and, once there is one, the last merged interval.
fn run_families(o: &mut Out, s: &State) {
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
}

/// Events and queries per agent: since the start, and per second in its last interval.
fn event_families(o: &mut Out, agents: &Agents) {
    o.family(
        "fleetbench_events",
        Kind::Counter,
        "Events (transactions) completed since the measurement's start.",
    );
    each(o, agents, "fleetbench_events_total", &|a| {
        Some(a.events as f64)
    });
    o.family(
        "fleetbench_tps",
        Kind::Gauge,
        "Events (transactions) per second over the agent's last interval.",
    );
    each(o, agents, "fleetbench_tps", &|a| a.last.map(|r| r.tps));
    o.family(
        "fleetbench_queries",
        Kind::Counter,
        "Queries sent since the measurement's start, by kind (read, write, other).",
    );
    for (addr, a) in agents {
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
    for (addr, a) in agents {
        if let Some(r) = a.last {
            for (kind, v) in ["read", "write", "other"].iter().zip(r.qps) {
                o.sample("fleetbench_qps", &[("agent", addr), ("kind", kind)], v);
            }
        }
    }
}

/// Ignored errors, reconnects and the threads running, per agent.
fn error_families(o: &mut Out, agents: &Agents) {
    o.family(
        "fleetbench_errors",
        Kind::Counter,
        "Errors ignored per --mysql-ignore-errors (the event was retried), by server error code.",
    );
    for (addr, a) in agents {
        for (code, n) in &a.db.errors_by_code {
            o.sample(
                "fleetbench_errors_total",
                &[
                    ("agent", addr),
                    ("code", &fleetbench_model::sqlstate::name(*code)),
                ],
                *n as f64,
            );
        }
    }
    o.family(
        "fleetbench_reconnects",
        Kind::Counter,
        "Reconnects to the database since the measurement's start.",
    );
    each(o, agents, "fleetbench_reconnects_total", &|a| {
        Some(a.db.reconnects as f64)
    });
    o.family(
        "fleetbench_threads_running",
        Kind::Gauge,
        "Threads running at the end of the agent's last interval.",
    );
    each(o, agents, "fleetbench_threads_running", &|a| {
        a.last.map(|r| f64::from(r.threads_running))
    });
}

/// Each agent's last interval's latency percentiles, and its latency histogram since the start.
fn latency_families(o: &mut Out, agents: &Agents) {
    o.family(
        "fleetbench_interval_latency_seconds",
        Kind::Gauge,
        "Latency percentiles of the agent's last interval (percentile 100 is the maximum).",
    );
    for (addr, a) in agents {
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
    for (addr, a) in agents {
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
}

/// fileio: each agent's file operations and bytes.
fn io_families(o: &mut Out, s: &State, agents: &Agents) {
    if s.run.workload == "fileio" {
        o.family(
            "fleetbench_io_operations",
            Kind::Counter,
            "File operations since the measurement's start, by kind.",
        );
        for (addr, a) in agents {
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
        for (addr, a) in agents {
            for (dir, n) in [("read", a.io.bytes_read), ("write", a.io.bytes_written)] {
                o.sample(
                    "fleetbench_io_bytes_total",
                    &[("agent", addr), ("direction", dir)],
                    n as f64,
                );
            }
        }
    }
}

/// An open loop's queue and concurrency, per agent.
fn open_loop_families(o: &mut Out, agents: &Agents) {
    if agents
        .iter()
        .any(|(_, a)| a.last.is_some_and(|r| r.open.is_some()))
    {
        o.family("fleetbench_queue_length", Kind::Gauge, "Open loop: events arrived and not yet taken by a thread, at the agent's last interval's end.");
        each(o, agents, "fleetbench_queue_length", &|a| {
            a.last.and_then(|r| r.open).map(|(q, _)| q as f64)
        });
        o.family(
            "fleetbench_concurrency",
            Kind::Gauge,
            "Open loop: threads inside an event at the agent's last interval's end.",
        );
        each(o, agents, "fleetbench_concurrency", &|a| {
            a.last.and_then(|r| r.open).map(|(_, c)| f64::from(c))
        });
    }
}

/// TPC-C: transactions per agent and type.
fn tpcc_families(o: &mut Out, s: &State, agents: &Agents) {
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
            for (addr, a) in agents {
                for (i, t) in TXN_NAMES.iter().enumerate() {
                    o.sample(&sample, &[("agent", addr), ("type", t)], f(a, i));
                }
            }
        }
    }
}

/// The agent hosts' load, once their intervals bring it.
fn host_families(o: &mut Out, agents: &Agents) {
    if agents.iter().any(|(_, a)| a.load.is_some()) {
        let load = |f: fn(&HostFigures) -> f64| move |a: &AgentSeries| a.load.as_ref().map(f);
        o.family(
            "fleetbench_host_cpu_busy_percent",
            Kind::Gauge,
            "The agent host's CPU busy over its last interval, % of all cores.",
        );
        each(
            o,
            agents,
            "fleetbench_host_cpu_busy_percent",
            &load(|h| h.cpu_busy_pct),
        );
        o.family(
            "fleetbench_agent_cpu_percent",
            Kind::Gauge,
            "The agent process's CPU over its last interval, % of all cores.",
        );
        each(
            o,
            agents,
            "fleetbench_agent_cpu_percent",
            &load(|h| h.agent_cpu_pct),
        );
        o.family(
            "fleetbench_host_run_queue",
            Kind::Gauge,
            "Runnable tasks on the agent host at its last interval's end.",
        );
        each(
            o,
            agents,
            "fleetbench_host_run_queue",
            &load(|h| f64::from(h.run_queue)),
        );
        o.family(
            "fleetbench_host_cores",
            Kind::Gauge,
            "Cores of the agent host.",
        );
        each(
            o,
            agents,
            "fleetbench_host_cores",
            &load(|h| f64::from(h.cores)),
        );
        o.family(
            "fleetbench_host_memory_used_bytes",
            Kind::Gauge,
            "Memory in use on the agent host.",
        );
        each(
            o,
            agents,
            "fleetbench_host_memory_used_bytes",
            &load(|h| h.mem_used_bytes as f64),
        );
        o.family(
            "fleetbench_host_memory_total_bytes",
            Kind::Gauge,
            "Memory of the agent host.",
        );
        each(
            o,
            agents,
            "fleetbench_host_memory_total_bytes",
            &load(|h| h.mem_total_bytes as f64),
        );
        o.family("fleetbench_host_network_receive_bytes", Kind::Counter, "Bytes the agent host received since the measurement's start (all interfaces but loopback).");
        each(
            o,
            agents,
            "fleetbench_host_network_receive_bytes_total",
            &|a| a.load.map(|_| a.net_rx as f64),
        );
        o.family("fleetbench_host_network_transmit_bytes", Kind::Counter, "Bytes the agent host sent since the measurement's start (all interfaces but loopback).");
        each(
            o,
            agents,
            "fleetbench_host_network_transmit_bytes_total",
            &|a| a.load.map(|_| a.net_tx as f64),
        );
    }
}

/// fileio: the agent hosts' disk load, once their intervals bring it.
fn disk_families(o: &mut Out, agents: &Agents) {
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
            o,
            agents,
            "fleetbench_host_disk_util_percent",
            &disk(|d| d.util_pct),
        );
        o.family(
            "fleetbench_host_disk_queue_depth",
            Kind::Gauge,
            "fileio: requests in flight on the work directory's disk, on average over the agent's last interval.",
        );
        each(
            o,
            agents,
            "fleetbench_host_disk_queue_depth",
            &disk(|d| d.queue_depth),
        );
    }
}

/// What each database target received: queries by kind, since the start and per second.
fn target_families(o: &mut Out, s: &State) {
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
    }
}

/// A server's level in the exposition: its family, help and where an interval has it.
type Level = (
    &'static str,
    &'static str,
    fn(&crate::servers::IntervalServer) -> Option<f64>,
);

/// The servers' own figures in the last merged interval: per transaction, cache misses,
/// statements running, a replica's lag (docs/servers.md).
fn server_families(o: &mut Out, s: &State) {
    if s.servers.is_empty() {
        return;
    }
    o.family(
        "fleetbench_server_per_tx",
        Kind::Gauge,
        "What one transaction cost a database server in the last interval, by its own counters: rows read and written, reads from storage, log bytes, statements.",
    );
    for sv in &s.servers {
        let p = &sv.per_tx;
        let figures = [
            ("rows_read", p.rows_read),
            ("rows_written", p.rows_written),
            ("server_reads", p.server_reads),
            ("log_bytes", p.log_bytes),
            ("statements", p.statements),
        ];
        for (figure, v) in figures {
            if let Some(v) = v {
                o.sample(
                    "fleetbench_server_per_tx",
                    &[("target", &sv.target), ("figure", figure)],
                    v,
                );
            }
        }
    }
    let levels: [Level; 3] = [
        (
            "fleetbench_server_read_misses_per_1000",
            "Reads that missed the server's cache per 1,000 logical reads in the last interval.",
            |s| s.read_misses_per_1000,
        ),
        (
            "fleetbench_server_threads_running",
            "Statements running on the server at the last interval's end (the reading left out).",
            |s| s.threads_running,
        ),
        (
            "fleetbench_server_replica_lag_seconds",
            "A replica's lag as it reports it, at the last interval's end.",
            |s| s.replica_lag_s,
        ),
    ];
    for (name, help, get) in levels {
        if !s.servers.iter().any(|sv| get(sv).is_some()) {
            continue;
        }
        o.family(name, Kind::Gauge, help);
        for sv in &s.servers {
            if let Some(v) = get(sv) {
                o.sample(name, &[("target", &sv.target)], v);
            }
        }
    }
}

/// What each database target returned: ignored errors, reconnects and, once the run has ended, its statements' latency.
fn target_error_families(o: &mut Out, s: &State) {
    if !s.targets.is_empty() {
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
                        ("code", &fleetbench_model::sqlstate::name(*code)),
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
