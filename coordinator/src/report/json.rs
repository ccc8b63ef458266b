//! The machine-readable result of a run: configuration, per-interval series, per-agent
//! figures and totals, with latency min/avg/max/sum and p50/p90/p95/p99/p99.9 always present
//! (plus any percentile the user asked for), built from a run's merged figures. The
//! document's types live in [`super::doc`]. Written atomically: a temporary file, then a
//! rename.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

pub use super::doc::{
    Agent, Config, DiskLoad, FORMAT_VERSION, Fairness, Figures, FileOps, HostLoad, Interval,
    IntervalDisk, IntervalHost, LatencyMs, MemoryOps, Meta, OpenLoopPart, OpenLoopTotals, Report,
    SpectrumPoint, Sql, TargetJson, Totals, Tpcc, TxnJson,
};
use super::pct_label;
use crate::merge::{AgentStatus, Latency, RunResult};
use crate::plan::{AgentSource, Plan, Workload};

fn meta(plan: &Plan, r: &RunResult) -> Meta {
    Meta {
        run_id: r.run_id.clone(),
        started_at: r.started.and_then(super::meta::utc),
        ended_at: r.ended.and_then(super::meta::utc),
        tags: plan.tags.iter().cloned().collect(),
        command_line: plan.command_line.clone(),
        fleetbench_commit: super::meta::COMMIT.to_string(),
    }
}

/// Percentiles every JSON latency object carries.
const ALWAYS: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

fn open_part(o: &Option<crate::merge::OpenLoop>, requested: &[f64]) -> Option<OpenLoopPart> {
    let o = o.as_ref()?;
    Some(OpenLoopPart {
        arrivals: o.arrivals,
        queue_length: o.queue_length,
        concurrency: o.concurrency,
        service_ms: latency_ms(&o.service, requested),
    })
}

/// A histogram as HdrHistogram's V2 deflate encoding in base64.
pub fn hdr_base64(h: &hdrhistogram::Histogram<u64>) -> String {
    use base64::Engine;
    let bytes = fleetbench_proto::histogram::encode(h).unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn sql(d: &crate::merge::DbCounters, events: u64, secs: f64) -> Sql {
    let secs = secs.max(f64::MIN_POSITIVE);
    let q = d.reads + d.writes + d.others;
    Sql {
        reads: d.reads,
        writes: d.writes,
        others: d.others,
        queries: q,
        transactions: events,
        tps: events as f64 / secs,
        qps: q as f64 / secs,
        ignored_errors: d.ignored_errors,
        errors_by_code: d
            .errors_by_code
            .iter()
            .map(|(k, v)| (fleetbench_model::sqlstate::name(*k), *v))
            .collect(),
        reconnects: d.reconnects,
        reconnect_failures: d.reconnect_failures,
    }
}

/// Which of [`Figures`] a workload reports.
#[derive(Debug, Clone, Copy)]
enum FigureKind {
    Sql,
    File,
    /// memory, with its block size.
    Memory(u64),
    Plain,
}

impl FigureKind {
    fn of(w: &Workload) -> FigureKind {
        match w {
            Workload::Oltp(_) | Workload::Tpcc(_) | Workload::Script(_) | Workload::Pgbench(_) => {
                FigureKind::Sql
            }
            Workload::Fileio(_) => FigureKind::File,
            Workload::Memory(m) => FigureKind::Memory(m.block_size),
            _ => FigureKind::Plain,
        }
    }

    /// The figures of a span of `secs` seconds with these counters and events.
    fn figures(
        self,
        db: &crate::merge::DbCounters,
        io: &crate::merge::IoCounters,
        events: u64,
        secs: f64,
    ) -> Figures {
        match self {
            FigureKind::Sql => Figures {
                sql: Some(sql(db, events, secs)),
                ..Figures::default()
            },
            FigureKind::File => Figures {
                file: Some(file_ops(io, secs)),
                ..Figures::default()
            },
            FigureKind::Memory(block) => Figures {
                memory: Some(memory_ops(events, block, secs)),
                ..Figures::default()
            },
            FigureKind::Plain => Figures::default(),
        }
    }
}

fn file_ops(io: &crate::merge::IoCounters, secs: f64) -> FileOps {
    let secs = secs.max(f64::MIN_POSITIVE);
    FileOps {
        reads: io.reads,
        writes: io.writes,
        fsyncs: io.fsyncs,
        bytes_read: io.bytes_read,
        bytes_written: io.bytes_written,
        reads_per_sec: io.reads as f64 / secs,
        writes_per_sec: io.writes as f64 / secs,
        fsyncs_per_sec: io.fsyncs as f64 / secs,
        read_mib_per_sec: io.bytes_read as f64 / 1048576.0 / secs,
        written_mib_per_sec: io.bytes_written as f64 / 1048576.0 / secs,
    }
}

fn memory_ops(events: u64, block: u64, secs: f64) -> MemoryOps {
    let secs = secs.max(f64::MIN_POSITIVE);
    let mib = events as f64 * block as f64 / 1048576.0;
    MemoryOps {
        operations: events,
        operations_per_sec: events as f64 / secs,
        mib_transferred: mib,
        mib_per_sec: mib / secs,
    }
}

pub fn latency_ms(l: &Latency, requested: &[f64]) -> LatencyMs {
    let mut percentiles = BTreeMap::new();
    // A requested 0 (percentiles off) adds nothing.
    for &p in ALWAYS.iter().chain(requested.iter().filter(|&&p| p != 0.0)) {
        percentiles.insert(format!("p{}", pct_label(p)), round(l.percentile_ms(p)));
    }
    LatencyMs {
        count: l.count(),
        min: round(l.min_ms()),
        avg: round(l.avg_ms()),
        max: round(l.max_ms()),
        sum: round(l.sum_ms()),
        percentiles,
    }
}

/// Percentiles of the spectrum: evenly up to 90, then ever closer to 100.
const SPECTRUM: [f64; 19] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.0, 99.0, 99.5, 99.9, 99.95,
    99.99, 99.999, 100.0,
];

/// Latency at the spectrum's percentiles (0 is the minimum); empty without events.
pub fn spectrum(l: &Latency) -> Vec<SpectrumPoint> {
    if l.count() == 0 {
        return Vec::new();
    }
    SPECTRUM
        .iter()
        .map(|&p| SpectrumPoint {
            percentile: p,
            ms: round(if p == 0.0 {
                l.min_ms()
            } else {
                l.percentile_ms(p)
            }),
        })
        .collect()
}

/// Microsecond precision is all a millisecond figure can honestly carry. Reports printed
/// live round through this too, so that `report FILE` reprints them digit for digit.
pub fn round(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}

/// One figure of every agent's host in tick `seq` (None where an agent sent none); empty
/// when no agent sent any (`none`).
fn per_agent_host<T>(
    r: &RunResult,
    none: bool,
    seq: u32,
    f: impl Fn(&fleetbench_model::host::HostFigures) -> T,
) -> Vec<Option<T>> {
    if none {
        return Vec::new();
    }
    r.hosts
        .iter()
        .map(|(_, v)| v.iter().find(|(s, _)| *s == seq).map(|(_, h)| f(h)))
        .collect()
}

pub fn build(plan: &Plan, r: &RunResult) -> Report {
    let figures = FigureSource {
        kind: FigureKind::of(&plan.workload),
        workload: &plan.workload,
        percentiles: &plan.percentiles,
    };
    Report {
        format_version: FORMAT_VERSION,
        kind: "run".into(),
        fleetbench_version: env!("CARGO_PKG_VERSION").into(),
        test: plan.workload.name().into(),
        command: plan.command.name().into(),
        config: config(plan, r),
        meta: Some(meta(plan, r)),
        interrupted: r.interrupted,
        totals: totals(plan, r, &figures),
        intervals: intervals(plan, r, &figures),
        agents: agents(plan, r, &figures),
    }
}

/// The run's configuration: the plan's settings and the workload's own options.
fn config(plan: &Plan, r: &RunResult) -> Config {
    let agents = match &plan.agents {
        AgentSource::Remote(a) => a.clone(),
        AgentSource::Local(..) => r
            .agents
            .iter()
            .map(|a| format!("local:{}", a.addr))
            .collect(),
    };
    Config {
        threads: plan.threads,
        time_s: plan.time.map_or(0, |t| t.as_secs()),
        events: plan.events.unwrap_or(0),
        report_interval_s: plan.report_interval.map_or(0, |t| t.as_secs()),
        interval_s: plan.tick().as_secs_f64(),
        percentiles: plan.percentiles.clone(),
        rand_seed: plan.seed,
        agents,
        rate: Some(plan.rate),
        warmup_time_s: Some(plan.warmup.as_secs_f64()),
        warn_client_saturation: plan.warn_client_saturation,
        workload: plan
            .workload
            .fields()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

/// The whole run's figures, merged over the agents.
fn totals(plan: &Plan, r: &RunResult, figures: &FigureSource) -> Totals {
    let f = r.fairness();
    // Merging every agent's histogram is the costliest step at a thousand agents: once.
    let total_latency = r.latency();
    Totals {
        time_s: r.total_time().as_secs_f64(),
        threads: r.threads(),
        events: r.events(),
        events_per_sec: r.events_per_sec(),
        latency_ms: latency_ms(&total_latency, &plan.percentiles),
        latency_spectrum_ms: spectrum(&total_latency),
        fairness: Fairness {
            events_avg: f.events_avg,
            events_stddev: f.events_stddev,
            execution_time_avg_s: f.time_avg_s,
            execution_time_stddev_s: f.time_stddev_s,
        },
        agents_lost: r.lost_agents().count(),
        figures: figures.of(
            &r.db(),
            &r.io(),
            r.events(),
            &r.txns(),
            r.total_time().as_secs_f64(),
        ),
        statements_latency_ms: r
            .kinds
            .iter()
            .map(|(k, l)| (k.clone(), latency_ms(l, &plan.percentiles)))
            .collect(),
        targets: targets(plan, r),
        open_loop: open_loop_totals(plan, r, &total_latency),
        // Set by `fleetbench pgbench`, which knows pgbench's options.
        pgbench: None,
    }
}

/// The servers read each interval: the loaded targets, then the replicas.
pub(crate) fn readables(plan: &Plan) -> Vec<crate::servers::Readable> {
    let targets = plan.workload.targets();
    let loaded = targets
        .iter()
        .enumerate()
        .map(|(i, t)| crate::servers::Readable {
            index: i,
            name: t.name.clone(),
            driver: t.driver,
            tx_of: i,
            primary: None,
        });
    let replicas =
        plan.observe
            .replicas
            .iter()
            .enumerate()
            .map(|(j, (t, p))| crate::servers::Readable {
                index: targets.len() + j,
                name: t.name.clone(),
                driver: t.driver,
                tx_of: *p,
                primary: Some(*p),
            });
    loaded.chain(replicas).collect()
}

/// Server `i`'s figures: its own counters and what observers saw of its host; None when
/// neither was read.
fn server_of(plan: &Plan, r: &RunResult, i: usize) -> Option<crate::servers::ServerJson> {
    let read = readables(plan);
    let s = read.get(i)?;
    let loaded = plan.workload.targets().len();
    let mut server = crate::servers::over_run(r, s, loaded);
    let hosts = crate::servers::observed(r, i, loaded);
    if !hosts.is_empty() {
        let server = server.get_or_insert_with(Default::default);
        server.per_tx.with_host(
            hosts
                .iter()
                .map(|h| [h.cpu_us_per_tx, h.disk_reads_per_tx, h.disk_write_kb_per_tx]),
        );
        server.hosts = hosts;
    }
    server
}

/// The replicas read beside the run, as targets that received nothing from it.
fn replica_targets(plan: &Plan, r: &RunResult) -> Vec<TargetJson> {
    let loaded = plan.workload.targets();
    plan.observe
        .replicas
        .iter()
        .enumerate()
        .map(|(j, (t, p))| TargetJson {
            name: t.name.clone(),
            replica_of: loaded.get(*p).map(|t| t.name.clone()),
            server: server_of(plan, r, loaded.len() + j),
            ..Default::default()
        })
        .collect()
}

/// Per database target: what it received, its statements' latency, how the agents
/// connected to it and the time it was down.
pub(crate) fn targets(plan: &Plan, r: &RunResult) -> Vec<TargetJson> {
    let trouble = crate::downtime::find(&r.intervals);
    let target_names: Vec<String> = plan
        .workload
        .targets()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let mut out: Vec<TargetJson> = r
        .targets
        .iter()
        .map(|(i, d, l)| TargetJson {
            name: target_names
                .get(*i)
                .cloned()
                .unwrap_or_else(|| format!("#{i}")),
            reads: d.reads,
            writes: d.writes,
            others: d.others,
            queries: d.reads + d.writes + d.others,
            qps: (d.reads + d.writes + d.others) as f64
                / r.total_time().as_secs_f64().max(f64::MIN_POSITIVE),
            ignored_errors: d.ignored_errors,
            reconnects: d.reconnects,
            statement_latency_ms: latency_ms(l, &plan.percentiles),
            connections: r.connections_to(*i).cloned().collect(),
            connect_retries: r
                .connect_retries
                .iter()
                .filter(|(t, _, _)| t == i)
                .map(|(_, why, n)| (why.clone(), *n))
                .collect(),
            downtime: trouble
                .iter()
                .find(|d| d.target == *i)
                .map(|d| super::doc::DowntimeJson {
                    reconnect_failures: d.reconnect_failures,
                    down_s: d.down.as_secs_f64(),
                    down_intervals: d.intervals,
                    from_s: d.from.as_secs_f64(),
                    to_s: d.to.as_secs_f64(),
                    failed_run: crate::downtime::fails(d, r.total_time(), plan.max_downtime_pct),
                }),
            replica_of: None,
            server: server_of(plan, r, *i),
        })
        .collect();
    out.extend(replica_targets(plan, r));
    out
}

/// An open loop's totals (None in a closed loop), with the merged latency's histogram.
fn open_loop_totals(plan: &Plan, r: &RunResult, total_latency: &Latency) -> Option<OpenLoopTotals> {
    r.open().map(|o| OpenLoopTotals {
        target_rate: plan.rate,
        arrivals: o.arrivals,
        arrivals_per_sec: crate::merge::per_sec(o.arrivals, r.total_time()),
        events_per_sec: r.events_per_sec(),
        queue_length_end: o.queue_length,
        rate_reached: !o.fell_behind(),
        service_ms: latency_ms(&o.service, &plan.percentiles),
        service_spectrum_ms: spectrum(&o.service),
        latency_hdr: hdr_base64(&total_latency.hist),
        service_hdr: hdr_base64(&o.service.hist),
    })
}

/// The merged intervals, each with every agent's host figures of it.
fn intervals(plan: &Plan, r: &RunResult, figures: &FigureSource) -> Vec<Interval> {
    let no_hosts = r.hosts.iter().all(|(_, v)| v.is_empty());
    let tick_s = plan.tick().as_secs_f64().max(f64::MIN_POSITIVE);
    let read = readables(plan);
    let loaded = plan.workload.targets().len();
    let lags: Vec<Vec<(u32, Option<f64>)>> = read
        .iter()
        .map(|s| crate::servers::lag_of(r, s.index, s.primary.unwrap_or(usize::MAX)))
        .collect();
    r.intervals
        .iter()
        .map(|iv| Interval {
            t_s: iv.end.as_secs_f64(),
            duration_s: iv.duration.as_secs_f64(),
            threads: iv.threads,
            events: iv.events,
            events_per_sec: iv.events_per_sec(),
            latency_ms: latency_ms(&iv.latency, &plan.percentiles),
            agent_events: iv.per_agent.clone(),
            agent_cpu_busy_pct: per_agent_host(r, no_hosts, iv.seq, |h| round(h.cpu_busy_pct)),
            agent_hosts: per_agent_host(r, no_hosts, iv.seq, |h| interval_host(h, tick_s)),
            figures: figures.of(
                &iv.db,
                &iv.io,
                iv.events,
                &iv.txns,
                iv.duration.as_secs_f64(),
            ),
            open_loop: open_part(&iv.open, &plan.percentiles),
            servers: crate::servers::in_interval(r, iv.seq, &read, loaded, &lags),
        })
        .collect()
}

/// Each agent's row: its host, figures, status and its host's load over the run.
fn agents(plan: &Plan, r: &RunResult, figures: &FigureSource) -> Vec<Agent> {
    let hosts = super::hosts::summarize(&r.hosts, plan.tick());
    r.agents
        .iter()
        .map(|a| {
            let (status, reason) = match &a.status {
                AgentStatus::Completed => ("completed", None),
                AgentStatus::Aborted(w) => ("stopped", Some(w.clone())),
                AgentStatus::Lost(w) => ("lost", Some(w.clone())),
            };
            Agent {
                addr: a.addr.clone(),
                name: a.name.clone(),
                host: a.host.clone(),
                cores: a.facts.cores,
                cpu_model: a.facts.cpu_model.clone(),
                kernel: a.facts.kernel.clone(),
                mem_total_bytes: a.facts.mem_total_bytes,
                threads: a.threads,
                time_s: a.elapsed.as_secs_f64(),
                events: a.events,
                events_per_sec: a.events_per_sec(),
                latency_ms: latency_ms(&a.latency, &plan.percentiles),
                status: status.into(),
                reason,
                figures: figures.of(&a.db, &a.io, a.events, &a.txns, a.elapsed.as_secs_f64()),
                open_loop: open_part(&a.open, &plan.percentiles),
                host_load: hosts.iter().find(|h| h.addr == a.addr).map(|h| HostLoad {
                    agent_cpu_us_per_event: (a.events > 0 && h.agent_cpu_s > 0.0)
                        .then(|| round(h.agent_cpu_s * 1e6 / a.events as f64)),
                    ..host_load(h)
                }),
            }
        })
        .collect()
}

/// An agent host's load over the run.
fn host_load(h: &super::hosts::HostSummary) -> HostLoad {
    HostLoad {
        cpu_busy_pct_avg: round(h.cpu_busy_avg),
        cpu_busy_pct_peak: round(h.cpu_busy_peak),
        agent_cpu_pct_avg: round(h.agent_cpu_avg),
        agent_cpu_pct_peak: round(h.agent_cpu_peak),
        agent_cpu_us_per_event: None,
        run_queue_peak: h.run_queue_peak,
        cores: h.cores,
        mem_used_bytes_peak: h.mem_used_peak_bytes,
        mem_total_bytes: h.mem_total_bytes,
        net_rx_bytes_per_sec: round(h.net_rx_bytes_per_sec),
        net_tx_bytes_per_sec: round(h.net_tx_bytes_per_sec),
        saturated_intervals: h.saturated.clone(),
        disk: h.disk.map(|d| DiskLoad {
            util_pct_avg: round(d.util_avg),
            util_pct_peak: round(d.util_peak),
            queue_depth_avg: round(d.queue_avg),
            queue_depth_peak: round(d.queue_peak),
        }),
    }
}

/// One agent host's figures of one interval `tick_s` seconds long.
fn interval_host(h: &fleetbench_model::host::HostFigures, tick_s: f64) -> IntervalHost {
    IntervalHost {
        cpu_busy_pct: round(h.cpu_busy_pct),
        agent_cpu_pct: round(h.agent_cpu_pct),
        run_queue: h.run_queue,
        mem_used_bytes: h.mem_used_bytes,
        net_rx_bytes_per_sec: round(h.net_rx_bytes as f64 / tick_s),
        net_tx_bytes_per_sec: round(h.net_tx_bytes as f64 / tick_s),
        disk: h.disk.map(|d| IntervalDisk {
            util_pct: round(d.util_pct),
            queue_depth: round(d.queue_depth),
        }),
    }
}

/// TPC-C's figures of a span of `secs` seconds (None for other workloads).
fn tpcc(w: &Workload, t: &crate::merge::Txns, secs: f64, pcts: &[f64]) -> Option<Tpcc> {
    use crate::report::tpcc as tr;
    if !matches!(w, Workload::Tpcc(_)) {
        return None;
    }
    let mix = tr::mix(t);
    let transactions = fleetbench_model::workloads::tpcc::TXN_NAMES
        .iter()
        .zip(&t.0)
        .enumerate()
        .map(|(i, (name, f))| {
            let within = tr::within_limit(f, i);
            (
                name.to_string(),
                TxnJson {
                    count: f.count(),
                    mix_pct: round(mix[i]),
                    within_limit: within,
                    late: f.count() - within,
                    retried: f.retried,
                    failed: f.failed,
                    rolled_back: f.rolled_back,
                    latency_ms: latency_ms(&f.latency, pcts),
                },
            )
        })
        .collect();
    Some(Tpcc {
        tpmc: round(tr::tpmc(
            t,
            std::time::Duration::from_secs_f64(secs.max(0.0)),
        )),
        constraints_ok: tr::constraints_ok(t),
        transactions,
    })
}

/// What a span's figures depend on besides its own counters: the workload and the
/// percentiles asked for.
struct FigureSource<'a> {
    kind: FigureKind,
    workload: &'a Workload,
    percentiles: &'a [f64],
}

impl FigureSource<'_> {
    /// The figures of a span of `secs` seconds with these counters, events and (TPC-C)
    /// transactions.
    fn of(
        &self,
        db: &crate::merge::DbCounters,
        io: &crate::merge::IoCounters,
        events: u64,
        txns: &crate::merge::Txns,
        secs: f64,
    ) -> Figures {
        Figures {
            tpcc: tpcc(self.workload, txns, secs, self.percentiles),
            ..self.kind.figures(db, io, events, secs)
        }
    }
}

/// Writes `report` to `path` as crate::output says: a regular file atomically, so a reader
/// never sees half a file; a link, FIFO or device in place; `-` to standard output.
pub fn write(path: &Path, report: &Report) -> std::io::Result<()> {
    write_value(path, report)
}

/// Writes any serialisable document to `path` (see [`write`]).
pub fn write_value(path: &Path, report: &impl Serialize) -> std::io::Result<()> {
    crate::output::write(path, |w| {
        serde_json::to_writer_pretty(&mut *w, report)?;
        w.write_all(b"\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_always_carries_the_standard_percentiles() {
        let mut l = Latency::default();
        for v in 1..=1000u64 {
            l.hist.record(v).unwrap();
            l.sum_ns += v * 1000;
        }
        l.min_ns = 1_000;
        l.max_ns = 1_000_000;
        let j = latency_ms(&l, &[97.5]);
        let keys: Vec<&str> = j.percentiles.keys().map(String::as_str).collect();
        assert_eq!(keys, ["p50", "p90", "p95", "p97.5", "p99", "p99.9"]);
        assert_eq!(j.count, 1000);
        assert_eq!((j.min, j.max), (0.001, 1.0));
        assert!((j.percentiles["p50"] - 0.5).abs() < 0.001);
        assert!((j.avg - 0.5005).abs() < 0.001);
    }

    #[test]
    fn every_agent_is_in_the_json_however_many_there_are() {
        // The text report condenses past 20 agents; the JSON never does.
        let n = 3 * crate::report::text::AGENTS_LISTED;
        let plan =
            crate::plan::build(&crate::cli::parse(["fleetbench", "cpu", "run"]).unwrap()).unwrap();
        let r = RunResult {
            agents: (0..n)
                .map(|i| crate::merge::AgentResult {
                    addr: format!("10.0.1.{i}:7600"),
                    name: format!("10.0.1.{i}:7600"),
                    host: format!("c{i}"),
                    facts: Default::default(),
                    threads: 1,
                    elapsed: std::time::Duration::from_secs(1),
                    events: i as u64,
                    latency: Latency::default(),
                    per_thread: vec![(i as u64, 1)],
                    status: AgentStatus::Completed,
                    db: Default::default(),
                    io: Default::default(),
                    open: None,
                    txns: Default::default(),
                })
                .collect(),
            ..RunResult::default()
        };
        let v = serde_json::to_value(build(&plan, &r)).unwrap();
        let agents = v["agents"].as_array().unwrap();
        assert_eq!(agents.len(), n);
        assert_eq!(agents[n - 1]["addr"], format!("10.0.1.{}:7600", n - 1));
        assert_eq!(agents[n - 1]["events"], n as u64 - 1);
        assert_eq!(v["totals"]["events"], (0..n as u64).sum::<u64>());
    }

    #[test]
    fn write_is_atomic_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("fb-json-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        let plan =
            crate::plan::build(&crate::cli::parse(["fleetbench", "cpu", "run"]).unwrap()).unwrap();
        write(&path, &build(&plan, &RunResult::default())).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["format_version"], FORMAT_VERSION);
        assert_eq!(v["config"]["cpu_max_prime"], 10_000);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The strings of a JSON array (a schema's `required`), sorted.
    fn names(v: &serde_json::Value) -> Vec<&str> {
        let a = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
        let mut names: Vec<&str> = a.iter().map(|k| k.as_str().unwrap()).collect();
        names.sort_unstable();
        names
    }

    /// The keys of a JSON object (a document's fields), sorted.
    fn keys(v: &serde_json::Value) -> Vec<&str> {
        let o = v
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {v}"));
        let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn the_schema_in_docs_names_every_field_written() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/result-schema.json")).unwrap();
        let plan =
            crate::plan::build(&crate::cli::parse(["fleetbench", "cpu", "run"]).unwrap()).unwrap();
        let v = serde_json::to_value(build(&plan, &RunResult::default())).unwrap();
        let run = &schema["$defs"]["run"];
        assert_eq!(run["properties"]["format_version"]["const"], FORMAT_VERSION);
        let required = names(&run["required"]);
        let mut written = keys(&v);
        // Every field written is in the schema; every required one is written (meta is
        // optional: files written before it lack it).
        let known = run["properties"].as_object().unwrap();
        for k in &written {
            assert!(known.contains_key(*k), "{k} is not in the schema");
        }
        written.retain(|k| *k != "meta");
        assert_eq!(required, written);
        assert_eq!(
            names(&run["properties"]["meta"]["required"]),
            keys(&v["meta"])
        );
        let totals = schema["$defs"]["totals"]["properties"].as_object().unwrap();
        for k in v["totals"].as_object().unwrap().keys() {
            assert!(totals.contains_key(k), "totals.{k} is not in the schema");
        }
        // The workloads' own sections, with every field they write.
        for (words, section) in [
            (
                ["fleetbench", "fileio", "--file-test-mode=rndrw", "run"],
                "file",
            ),
            (["fleetbench", "memory", "--threads=1", "run"], "memory"),
        ] {
            let plan = crate::plan::build(&crate::cli::parse(words).unwrap()).unwrap();
            let v = serde_json::to_value(build(&plan, &RunResult::default())).unwrap();
            assert!(totals.contains_key(section), "totals.{section}");
            let def = &schema["$defs"][section];
            assert_eq!(
                names(&def["required"]),
                keys(&v["totals"][section]),
                "{section}"
            );
        }
        // A rate sweep's document, its step and its summary (with every optional field).
        let mut raw = crate::cli::parse(["fleetbench", "cpu", "--rate=100,200", "run"]).unwrap();
        let extras = crate::sweep::take_extras(&mut raw).unwrap();
        let plan = crate::plan::build(&raw).unwrap();
        let result = build(&plan, &RunResult::default());
        let mut summary = crate::sweep::Summary::from_run(&result);
        summary.rate_reached = Some(true);
        let step = crate::sweep::Step {
            threads: plan.threads,
            rate: plan.rate,
            repeat: 1,
            summary,
            result,
        };
        let doc =
            serde_json::to_value(crate::sweep::sweep_doc(&plan, &extras, &[step], false)).unwrap();
        // A scenario run's document, of a rate sweep with a description (every optional
        // field written).
        let file = crate::topology::parse(
            "s.toml",
            "test = \"oltp_read_write\"\nthreads = [4]\nrate = [100, 200]\ntime = 10\n\
             [targets]\ndb = \"mysql://u:p@h:3306/sbtest\"\n\
             [[scenario]]\nname = \"direct\"\ndescription = \"to the server\"\ntargets = [\"db\"]\n",
            &[],
        )
        .unwrap();
        let sc = &file.scenarios[0];
        let plan = sc.plan("run", 4, "s.toml").unwrap();
        let result = build(&plan, &RunResult::default());
        let step = crate::sweep::Step {
            threads: 4,
            rate: 100.0,
            repeat: 1,
            summary: crate::sweep::Summary::from_run(&result),
            result,
        };
        let extras = crate::sweep::Extras {
            repeat: 1,
            ..Default::default()
        };
        let scenarios = serde_json::to_value(crate::topology::scenarios_doc(
            "s.toml",
            &extras,
            &[(sc, plan, vec![step])],
            false,
        ))
        .unwrap();
        assert_eq!(
            scenarios["scenarios"][0]["rates"],
            serde_json::json!([100.0, 200.0])
        );
        let scenario_def = serde_json::json!({
            "properties": schema["$defs"]["scenarios"]["properties"]["scenarios"]["items"]["properties"],
            "required": schema["$defs"]["scenarios"]["properties"]["scenarios"]["items"]["required"],
        });
        let defs = &schema["$defs"];
        for (def, v) in [
            (&defs["sweep"], &doc),
            (&defs["step"], &doc["steps"][0]),
            (&defs["summary"], &doc["steps"][0]["summary"]),
            (&defs["scenarios"], &scenarios),
            (&scenario_def, &scenarios["scenarios"][0]),
            (&defs["step"], &scenarios["scenarios"][0]["steps"][0]),
        ] {
            let props = def["properties"].as_object().unwrap();
            for k in v.as_object().unwrap().keys() {
                assert!(props.contains_key(k), "{k} is not in the schema of {v}");
            }
            for k in def["required"].as_array().unwrap() {
                assert!(v.get(k.as_str().unwrap()).is_some(), "{k} is not written");
            }
        }
    }
}
