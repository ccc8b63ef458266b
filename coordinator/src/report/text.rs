//! The human report, in sysbench 1.0's layout so that people and scripts used to sysbench
//! read it unchanged, followed by fleetbench's own per-agent block.

use std::fmt::Write;

use super::format::{age, rate_label};
use super::pct_label;
use super::style::ReportStyle;
use crate::merge::{AgentResult, AgentStatus, MergedInterval, RunResult};
use crate::plan::{Plan, Workload};
use fleetbench_agent::workloads::fileio::{FileioConfig, IoMode};

/// The preamble printed before the run starts. `agents` is (address, threads) per agent.
/// The first line of every command's output, with the blank line sysbench leaves after it.
pub fn banner() -> String {
    format!(
        "fleetbench {} (sysbench 1.0 compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The line that says the run warms up first (None without a warm-up).
pub fn warmup_line(plan: &Plan) -> Option<String> {
    (!plan.warmup.is_zero()).then(|| {
        format!(
            "Warming up for {}s (not measured)...",
            plan.warmup.as_secs_f64()
        )
    })
}

pub fn header(plan: &Plan, agents: &[(String, u32)]) -> String {
    header_in(plan, agents, ReportStyle::Fleetbench)
}

/// The preamble in `style`: sysbench 1.0's alone leaves out the agents and targets.
pub fn header_in(plan: &Plan, agents: &[(String, u32)], style: ReportStyle) -> String {
    let own = style == ReportStyle::Fleetbench;
    let mut s = String::new();
    let _ = writeln!(s, "{}", banner());
    let _ = writeln!(s, "Running the test with following options:");
    let _ = writeln!(s, "Number of threads: {}", plan.threads);
    if let Some(r) = plan.report_interval {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            r.as_secs()
        );
    }
    if plan.rate > 0.0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", rate_label(plan.rate));
    }
    if own {
        let _ = writeln!(s, "{}", agents_line(agents));
    }
    if plan.seed == 0 {
        let _ = writeln!(s, "Initializing random number generator from current time");
    } else {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({}).",
            plan.seed
        );
    }
    s.push_str("\n\n");
    match &plan.workload {
        Workload::Cpu(c) => {
            let _ = writeln!(s, "Prime numbers limit: {}\n", c.max_prime);
        }
        Workload::Oltp(o) if own => {
            for (i, t) in o.config.targets.iter().enumerate() {
                let tables = o.config.tables_on(i);
                let names = match (tables.first(), o.config.table_name.is_empty()) {
                    (Some(&n), false) => o.config.table(n),
                    _ => table_ranges(&tables),
                };
                let _ = writeln!(s, "Target {}: {names}", t.describe());
            }
            s.push('\n');
        }
        Workload::Oltp(_) => {}
        Workload::Fileio(f) => s.push_str(&fileio_options(f, true)),
        Workload::Memory(m) => {
            let _ = writeln!(
                s,
                "Running memory speed test with the following options:\n  block size: {}\n  total size: {}MiB\n  operation: {}\n  scope: {}\n",
                size_label(m.block_size),
                m.total_size >> 20,
                m.oper.name(),
                if m.global { "global" } else { "local" }
            );
        }
        Workload::Threads(_) | Workload::Mutex(_) => {}
        Workload::Tpcc(t) => {
            let _ = writeln!(
                s,
                "TPC-C: {} warehouses on target {}, home warehouses {}, {}\n",
                t.options.warehouses,
                t.target.describe(),
                if t.options.partition {
                    "from each agent's share"
                } else {
                    "random over all"
                },
                if t.options.keying_think {
                    "the specification's keying and think times"
                } else {
                    "no keying or think time"
                }
            );
        }
    }
    s.push_str("Initializing worker threads...\n\n");
    s
}

/// The header's line of agents: each with its threads, or past [`AGENTS_LISTED`] agents,
/// the count, the range of threads per agent and the first and last address.
pub fn agents_line(agents: &[(String, u32)]) -> String {
    if agents.len() <= AGENTS_LISTED {
        let list: Vec<String> = agents
            .iter()
            .map(|(a, t)| format!("{a} ({t} threads)"))
            .collect();
        return format!("Agents: {}: {}", agents.len(), list.join(", "));
    }
    let min = agents.iter().map(|a| a.1).min().unwrap_or(0);
    let max = agents.iter().map(|a| a.1).max().unwrap_or(0);
    let threads = if min == max {
        format!("{min}")
    } else {
        format!("{min}-{max}")
    };
    format!(
        "Agents: {} ({threads} threads each): {} ... {}",
        agents.len(),
        agents[0].0,
        agents[agents.len() - 1].0
    )
}

/// A size as sysbench prints it: the largest binary unit that divides it ("16MiB", "2GiB").
pub fn size_label(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}b")
}

/// sysbench's description of the fileio options; `run` adds the run-only lines.
pub fn fileio_options(f: &FileioConfig, run: bool) -> String {
    let mut s = String::new();
    let flags = f.flags.names();
    let _ = writeln!(
        s,
        "Extra file open flags: {}",
        if flags.is_empty() {
            "(none)".to_string()
        } else {
            flags.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "{} files, {} each\n{} total file size",
        f.file_num,
        size_label(f.file_size()),
        size_label(f.file_size() * u64::from(f.file_num))
    );
    let _ = writeln!(
        s,
        "Files: test_file.0..{} in each agent's work directory{}",
        f.file_num.saturating_sub(1),
        if f.file_dir.is_empty() {
            String::new()
        } else {
            format!(", under {}", f.file_dir)
        }
    );
    if !run {
        return s;
    }
    let _ = writeln!(s, "Block size {}", size_label(f.block_size));
    let _ = writeln!(
        s,
        "Read/Write ratio for combined random IO test: {:.2}",
        f.rw_ratio
    );
    if f.fsync_all {
        let _ = writeln!(s, "Calling fsync() after each write operation.");
    } else if f.fsync_freq > 0 {
        let _ = writeln!(
            s,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            f.fsync_freq
        );
    } else {
        let _ = writeln!(s, "Periodic FSYNC disabled.");
    }
    let _ = writeln!(
        s,
        "Calling fsync() at the end of test, {}.",
        if f.fsync_end { "Enabled" } else { "Disabled" }
    );
    let _ = writeln!(
        s,
        "Using {} I/O mode",
        match f.io_mode {
            IoMode::Sync => "synchronous".to_string(),
            IoMode::Async => format!("asynchronous (backlog {})", f.async_backlog),
            IoMode::Mmap => "mmap".to_string(),
        }
    );
    if let Some(m) = f.mode {
        let _ = writeln!(s, "Doing {}", m.describe());
    }
    s
}

/// "sbtest1-3, sbtest7" for a sorted list of table numbers.
pub fn table_ranges(tables: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tables.len() {
        let mut j = i;
        while j + 1 < tables.len() && tables[j + 1] == tables[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            format!("sbtest{}", tables[i])
        } else {
            format!("sbtest{}-{}", tables[i], tables[j])
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "no tables".into()
    } else {
        parts.join(", ")
    }
}

/// One live interval line, sysbench's layout: for OLTP
/// `[ 10s ] thds: 16 tps: .. qps: .. (r/w/o: ../../..) lat (ms,95%): .. err/s: .. reconn/s: ..`,
/// otherwise `[ 1s ] thds: 8 eps: 123.45 lat (ms,95%): 1.67`.
pub fn interval_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let line = closed_loop_line(iv, percentile, workload);
    with_queue_line(line, iv, format!("[ {}s ]", iv.label_secs()))
}

/// sysbench's second interval line under --rate, after `stamp` in the layout's own form.
fn with_queue_line(line: String, iv: &MergedInterval, stamp: String) -> String {
    match &iv.open {
        Some(o) => format!(
            "{line}\n{stamp} queue length: {}, concurrency: {}",
            o.queue_length, o.concurrency
        ),
        None => line,
    }
}

/// An interval's statement counters per second, as the interval lines print them.
pub(super) struct DbRates {
    pub queries: f64,
    pub reads: f64,
    pub writes: f64,
    pub others: f64,
    /// Ignored errors.
    pub errors: f64,
    pub reconnects: f64,
    /// Failed attempts to reconnect (a server down): shown only when there are some.
    pub reconnect_failures: f64,
}

impl DbRates {
    fn of(d: &crate::merge::DbCounters, secs: f64) -> DbRates {
        DbRates {
            queries: (d.reads + d.writes + d.others) as f64 / secs,
            reads: d.reads as f64 / secs,
            writes: d.writes as f64 / secs,
            others: d.others as f64 / secs,
            errors: d.ignored_errors as f64 / secs,
            reconnects: d.reconnects as f64 / secs,
            reconnect_failures: d.reconnect_failures as f64 / secs,
        }
    }
}

/// What sysbench 1.0's interval line shows, from a live merge or a stored document.
pub(super) struct LineFigures {
    /// The second the line is labelled with.
    pub label: u64,
    pub threads: u32,
    pub events_per_sec: f64,
    pub percentile: f64,
    /// The latency at `percentile`.
    pub latency_ms: f64,
    pub kind: LineKind,
}

/// Which of sysbench 1.0's interval line layouts a line has, with its own figures.
pub(super) enum LineKind {
    /// OLTP's: tps, qps and r/w/o, errors and reconnects.
    Sql(DbRates),
    /// fileio's: MiB/s read and written, fsyncs per second.
    File {
        read_mib: f64,
        written_mib: f64,
        fsyncs: f64,
    },
    /// cpu's, threads', mutex's: events per second.
    Plain,
}

/// sysbench 1.0's interval line of `f`.
pub(super) fn sysbench_line(f: &LineFigures) -> String {
    let (label, p, lat) = (f.label, pct_label(f.percentile), f.latency_ms);
    match &f.kind {
        LineKind::Sql(r) => {
            let mut line = format!(
                "[ {label}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{p}%): {lat:.2} err/s: {:.2} reconn/s: {:.2}",
                f.threads,
                f.events_per_sec,
                r.queries,
                r.reads,
                r.writes,
                r.others,
                r.errors,
                r.reconnects,
            );
            // Beyond sysbench's layout, and only while a server cannot be reached.
            if r.reconnect_failures > 0.0 {
                line.push_str(&format!(" failed reconn/s: {:.2}", r.reconnect_failures));
            }
            line
        }
        LineKind::File {
            read_mib,
            written_mib,
            fsyncs,
        } => format!(
            "[ {label}s ] reads: {read_mib:.2} MiB/s writes: {written_mib:.2} MiB/s fsyncs: {fsyncs:.2}/s latency (ms,{p}%): {lat:.3}"
        ),
        LineKind::Plain => format!(
            "[ {label}s ] thds: {} eps: {:.2} lat (ms,{p}%): {lat:.2}",
            f.threads, f.events_per_sec
        ),
    }
}

/// The interval line proper, without an open loop's queue line.
fn closed_loop_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let secs = iv.duration.as_secs_f64().max(f64::MIN_POSITIVE);
    let kind = match workload {
        Workload::Fileio(_) => LineKind::File {
            read_mib: iv.io.bytes_read as f64 / MIB / secs,
            written_mib: iv.io.bytes_written as f64 / MIB / secs,
            fsyncs: iv.io.fsyncs as f64 / secs,
        },
        Workload::Tpcc(_) => return super::tpcc::interval_line(iv),
        Workload::Memory(m) => {
            return format!(
                "[ {}s ] {:.2} MiB/sec",
                iv.label_secs(),
                (iv.events as f64 * m.block_size as f64) / MIB / secs
            );
        }
        Workload::Oltp(_) => LineKind::Sql(DbRates::of(&iv.db, secs)),
        _ => LineKind::Plain,
    };
    sysbench_line(&LineFigures {
        label: iv.label_secs(),
        threads: iv.threads,
        events_per_sec: iv.events_per_sec(),
        percentile,
        latency_ms: iv.latency.requested_ms(percentile),
        kind,
    })
}

/// Left part padded to `width`, then the value (sysbench's two-column layout).
fn row(s: &mut String, label: &str, width: usize, value: &str) {
    let _ = writeln!(s, "{label:<width$}{value}");
}

/// An interval line in `style`: sysbench 1.0's, or for 0.4/0.5 0.5's
/// `[  10s] threads: 100, tps: .., reads: .., writes: .., response time: ..ms (99%), ...`.
pub fn interval_line_in(
    iv: &MergedInterval,
    percentile: f64,
    workload: &Workload,
    style: ReportStyle,
) -> String {
    if !matches!(style, ReportStyle::Sysbench05 | ReportStyle::Sysbench04) {
        return interval_line(iv, percentile, workload);
    }
    let line = legacy_interval_line(iv, percentile, workload);
    with_queue_line(line, iv, format!("[{:>4}s]", iv.label_secs()))
}

/// 0.5's interval line proper, without an open loop's queue line.
fn legacy_interval_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let secs = iv.duration.as_secs_f64().max(f64::MIN_POSITIVE);
    let lat = iv.latency.requested_ms(percentile);
    let p = pct_label(percentile);
    if matches!(workload, Workload::Oltp(_)) {
        let r = DbRates::of(&iv.db, secs);
        return format!(
            "[{:>4}s] threads: {}, tps: {:.2}, reads: {:.2}, writes: {:.2}, response time: {lat:.2}ms ({p}%), errors: {:.2}, reconnects: {:>5.2}",
            iv.label_secs(),
            iv.threads,
            iv.events_per_sec(),
            r.reads,
            r.writes,
            r.errors,
            r.reconnects,
        );
    }
    format!(
        "[{:>4}s] threads: {}, events/s: {:.2}, response time: {lat:.2}ms ({p}%)",
        iv.label_secs(),
        iv.threads,
        iv.events_per_sec(),
    )
}

/// A size in sysbench 0.4's units: `0b`, `512.0000Kb`, `1.6474Gb` (binary multiples).
fn legacy_size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes}b"),
        1024..1048576 => format!("{:.4}Kb", b / 1024.0),
        1048576..1073741824 => format!("{:.4}Mb", b / MIB),
        _ => format!("{:.4}Gb", b / (MIB * 1024.0)),
    }
}

/// sysbench 0.4's or 0.5's end report: "OLTP test statistics" (OLTP) or 0.4's fileio
/// lines, then "Test execution summary" (0.4: "General statistics") with per-request
/// statistics (0.4: "response time") in ms, and Threads fairness.
pub fn legacy_report(plan: &Plan, r: &RunResult, v04: bool) -> String {
    let mut s = String::new();
    if r.interrupted {
        s.push_str("\nRun interrupted: the figures below cover the time until the interrupt.\n");
    }
    let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
    let rate = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / secs);
    match plan.workload {
        Workload::Oltp(_) => {
            let d = r.db();
            let deadlocks = d.errors_by_code.get(&1213).copied().unwrap_or(0);
            s.push_str("OLTP test statistics:\n    queries performed:\n");
            row(&mut s, "        read:", 41, &d.reads.to_string());
            row(&mut s, "        write:", 41, &d.writes.to_string());
            row(&mut s, "        other:", 41, &d.others.to_string());
            row(
                &mut s,
                "        total:",
                41,
                &(d.reads + d.writes + d.others).to_string(),
            );
            row(&mut s, "    transactions:", 41, &rate(r.events()));
            row(&mut s, "    deadlocks:", 41, &rate(deadlocks));
            row(
                &mut s,
                "    read/write requests:",
                41,
                &rate(d.reads + d.writes),
            );
            row(&mut s, "    other operations:", 41, &rate(d.others));
            s.push('\n');
        }
        Workload::Fileio(_) => {
            let io = r.io();
            let _ = writeln!(
                s,
                "Operations performed:  {} Read, {} Write, {} Other = {} Total",
                io.reads,
                io.writes,
                io.fsyncs,
                io.reads + io.writes + io.fsyncs
            );
            let _ = writeln!(
                s,
                "Read {}  Written {}  Total transferred {}  ({:.4}Mb/sec)",
                legacy_size(io.bytes_read),
                legacy_size(io.bytes_written),
                legacy_size(io.bytes_read + io.bytes_written),
                (io.bytes_read + io.bytes_written) as f64 / MIB / secs
            );
            let _ = writeln!(
                s,
                "{:>9.2} Requests/sec executed\n",
                (io.reads + io.writes) as f64 / secs
            );
        }
        _ => {}
    }
    let lat = r.latency();
    s.push_str(if v04 {
        "General statistics:\n"
    } else {
        "Test execution summary:\n"
    });
    general_rows(&mut s, r);
    row(
        &mut s,
        "    total time taken by event execution:",
        41,
        &format!("{:.4}s", lat.sum_ms() / 1e3),
    );
    s.push_str(if v04 {
        "    response time:\n"
    } else {
        "    per-request statistics:\n"
    });
    let ms_row = |s: &mut String, label: &str, ms: f64| {
        let label = format!("         {label}:");
        let value = format!("{ms:.2}ms");
        let width = 53usize.saturating_sub(label.len());
        let _ = writeln!(s, "{label}{value:>width$}");
    };
    ms_row(&mut s, "min", lat.min_ms());
    ms_row(&mut s, "avg", lat.avg_ms());
    ms_row(&mut s, "max", lat.max_ms());
    for &p in plan.percentiles.iter().filter(|&&p| p != 0.0) {
        ms_row(
            &mut s,
            &format!("approx. {:>3} percentile", pct_label(p)),
            lat.percentile_ms(p),
        );
    }
    fairness_rows(&mut s, r);
    s.push('\n');
    s
}

/// `--report-checkpoints`: the report of `span`, the intervals since the last checkpoint
/// merged into one (sysbench resets its counters at each), headed `[ 10s ] Checkpoint
/// report:`, in the end report's layout without Threads fairness (per-thread figures exist
/// only for the whole run).
pub fn checkpoint_report(plan: &Plan, at: u64, span: &MergedInterval) -> String {
    let r = RunResult {
        agents: vec![AgentResult {
            addr: String::new(),
            host: String::new(),
            facts: Default::default(),
            threads: span.threads,
            elapsed: span.duration,
            events: span.events,
            latency: span.latency.clone(),
            per_thread: Vec::new(),
            status: AgentStatus::Completed,
            db: span.db.clone(),
            io: span.io,
            open: span.open.clone(),
            txns: Default::default(),
        }],
        ..RunResult::default()
    };
    let full = final_report_in(plan, &r, ReportStyle::Sysbench10);
    let body = full.split("\nThreads fairness:").next().unwrap_or(&full);
    format!("[ {at}s ] Checkpoint report:\n{body}\n")
}

/// sysbench's "total time" and "total number of events" rows.
fn general_rows(s: &mut String, r: &RunResult) {
    row(
        s,
        "    total time:",
        41,
        &format!("{:.4}s", r.total_time().as_secs_f64()),
    );
    row(
        s,
        "    total number of events:",
        41,
        &r.events().to_string(),
    );
}

/// sysbench's "Threads fairness" block.
fn fairness_rows(s: &mut String, r: &RunResult) {
    let f = r.fairness();
    s.push_str("\nThreads fairness:\n");
    row(
        s,
        "    events (avg/stddev):",
        35,
        &format!("{:.4}/{:3.2}", f.events_avg, f.events_stddev),
    );
    row(
        s,
        "    execution time (avg/stddev):",
        35,
        &format!("{:.4}/{:3.2}", f.time_avg_s, f.time_stddev_s),
    );
}

/// fleetbench's own head for a latency percentile in ms ("p95 ms", "p99.9 ms"): unlike
/// sysbench's "lat (ms,95%)", which scripts count and parse.
fn own_pct_head(p: f64) -> String {
    format!("p{} ms", pct_label(p))
}

/// A latency row: label then the value right-aligned so the line ends at column 53.
fn lat_row(s: &mut String, label: &str, ms: f64) {
    let label = format!("         {label}:");
    let width = 53usize.saturating_sub(label.len());
    let _ = writeln!(s, "{label}{ms:>width$.2}");
}

/// The final report: workload block, General statistics, Latency, Threads fairness, then
/// the per-agent block and any warnings about lost or stopped agents.
pub fn final_report(plan: &Plan, r: &RunResult) -> String {
    final_report_in(plan, r, ReportStyle::Fleetbench)
}

/// The final report in `style`: sysbench 1.0's alone ends after "Threads fairness" (the
/// caller sends [`agent_warnings`] to stderr instead).
pub fn final_report_in(plan: &Plan, r: &RunResult, style: ReportStyle) -> String {
    if matches!(style, ReportStyle::Sysbench05 | ReportStyle::Sysbench04) {
        return legacy_report(plan, r, style == ReportStyle::Sysbench04);
    }
    let mut s = String::new();
    if r.interrupted {
        s.push_str("\nRun interrupted: the figures below cover the time until the interrupt.\n");
    }
    match plan.workload {
        Workload::Cpu(_) => {
            let _ = writeln!(
                s,
                "CPU speed:\n    events per second: {:8.2}\n",
                r.events_per_sec()
            );
        }
        Workload::Oltp(_) => s.push_str(&sql_statistics(r)),
        Workload::Fileio(_) => s.push_str(&file_operations(r)),
        Workload::Memory(m) => {
            let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
            let mib = r.events() as f64 * m.block_size as f64 / MIB;
            let _ = writeln!(
                s,
                "Total operations: {} ({:.2} per second)\n\n{:.2} MiB transferred ({:.2} MiB/sec)\n\n",
                r.events(),
                r.events_per_sec(),
                mib,
                mib / secs
            );
        }
        Workload::Threads(_) | Workload::Mutex(_) => s.push('\n'),
        Workload::Tpcc(_) => {
            let txns = r.txns();
            s.push_str(&super::tpcc::end_report(&txns, r.total_time()));
            s.push_str(&super::tpcc::types_block(&txns));
            s.push_str(&sql_statistics(r));
        }
    }
    let lat = r.latency();
    s.push_str("General statistics:\n");
    general_rows(&mut s, r);
    s.push_str("\nLatency (ms):\n");
    lat_row(&mut s, "min", lat.min_ms());
    lat_row(&mut s, "avg", lat.avg_ms());
    lat_row(&mut s, "max", lat.max_ms());
    for &p in &plan.percentiles {
        if p == 0.0 {
            // --percentile=0: sysbench's own words for percentiles turned off.
            row(&mut s, "         percentile stats:", 41, "disabled");
            continue;
        }
        lat_row(
            &mut s,
            &format!("{}th percentile", pct_label(p)),
            lat.percentile_ms(p),
        );
    }
    lat_row(&mut s, "sum", lat.sum_ms());
    fairness_rows(&mut s, r);
    s.push('\n');
    if style.is_sysbench() {
        return s;
    }
    s.push_str(&open_loop_block(plan, r));
    s.push_str(&agents_block(plan, r));
    s.push_str(&targets_block(plan, r));
    s.push_str(&super::hosts::block(
        &super::hosts::summarize(&r.hosts, plan.tick()),
        AGENTS_LISTED,
        matches!(plan.workload, Workload::Fileio(_)),
    ));
    s.push_str(&run_line(plan, r));
    s
}

const MIB: f64 = 1048576.0;

/// An open loop's figures after sysbench's report: the rate asked for, arrivals and events
/// run per second, the queue left at the end, and the service time (latency above counts
/// from each event's arrival). Empty in a closed loop.
pub fn open_loop_block(plan: &Plan, r: &RunResult) -> String {
    let Some(o) = r.open() else {
        return String::new();
    };
    let secs = r.total_time();
    let mut s = String::new();
    let _ = writeln!(s, "Open loop (--rate={}):", rate_label(plan.rate));
    row(
        &mut s,
        "    arrivals:",
        41,
        &format!(
            "{} ({:.2} per sec.)",
            o.arrivals,
            crate::merge::per_sec(o.arrivals, secs)
        ),
    );
    row(
        &mut s,
        "    events run:",
        41,
        &format!("{} ({:.2} per sec.)", r.events(), r.events_per_sec()),
    );
    row(
        &mut s,
        "    queue length at the end:",
        41,
        &o.queue_length.to_string(),
    );
    s.push_str(
        "    service time (ms, from a thread taking the event):
",
    );
    let svc = &o.service;
    lat_row(&mut s, "min", svc.min_ms());
    lat_row(&mut s, "avg", svc.avg_ms());
    lat_row(&mut s, "max", svc.max_ms());
    for &p in plan.percentiles.iter().filter(|&&p| p > 0.0) {
        lat_row(
            &mut s,
            &format!("{}th percentile", pct_label(p)),
            svc.percentile_ms(p),
        );
    }
    if let Some(why) = rate_shortfall(plan, r) {
        let _ = writeln!(s, "\nWARNING: {why}");
    }
    s.push('\n');
    s
}

/// The run's id, when it ran (UTC) and its tags, as the last line of fleetbench's own
/// blocks.
pub fn run_line(plan: &Plan, r: &RunResult) -> String {
    if r.run_id.is_empty() {
        return String::new();
    }
    let at = |t: Option<std::time::SystemTime>| {
        t.and_then(super::meta::utc).unwrap_or_else(|| "?".into())
    };
    let mut s = format!("\nRun {}: {} to {}", r.run_id, at(r.started), at(r.ended));
    if !plan.tags.is_empty() {
        let tags: Vec<String> = plan.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!("; tags: {}", tags.join(", ")));
    }
    s.push('\n');
    s
}

/// Why an open loop's target rate was not reached, if it was not (see
/// [`crate::merge::OpenLoop::fell_behind`]).
pub fn rate_shortfall(plan: &Plan, r: &RunResult) -> Option<String> {
    let o = r.open()?;
    o.fell_behind().then(|| {
        format!(
            "the target rate was not reached: {} events/s asked for, {:.2}/s run; {} arrived events were still waiting for a thread at the end",
            rate_label(plan.rate),
            r.events_per_sec(),
            o.queue_length
        )
    })
}

/// sysbench's "File operations" and "Throughput" blocks, merged over agents.
pub fn file_operations(r: &RunResult) -> String {
    let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
    let io = r.io();
    let mut s = String::from("File operations:\n");
    row(
        &mut s,
        "    reads/s:",
        34,
        &format!("{:.2}", io.reads as f64 / secs),
    );
    row(
        &mut s,
        "    writes/s:",
        34,
        &format!("{:.2}", io.writes as f64 / secs),
    );
    row(
        &mut s,
        "    fsyncs/s:",
        34,
        &format!("{:.2}", io.fsyncs as f64 / secs),
    );
    s.push_str("\nThroughput:\n");
    row(
        &mut s,
        "    read, MiB/s:",
        34,
        &format!("{:.2}", io.bytes_read as f64 / MIB / secs),
    );
    row(
        &mut s,
        "    written, MiB/s:",
        34,
        &format!("{:.2}", io.bytes_written as f64 / MIB / secs),
    );
    s.push('\n');
    s
}

/// sysbench's "SQL statistics" block, merged over agents.
pub fn sql_statistics(r: &RunResult) -> String {
    let d = r.db();
    let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
    let total = d.reads + d.writes + d.others;
    let mut s = String::from("SQL statistics:\n    queries performed:\n");
    row(&mut s, "        read:", 41, &d.reads.to_string());
    row(&mut s, "        write:", 41, &d.writes.to_string());
    row(&mut s, "        other:", 41, &d.others.to_string());
    row(&mut s, "        total:", 41, &total.to_string());
    let rate = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / secs);
    row(&mut s, "    transactions:", 41, &rate(r.events()));
    row(&mut s, "    queries:", 41, &rate(total));
    row(&mut s, "    ignored errors:", 41, &rate(d.ignored_errors));
    row(&mut s, "    reconnects:", 41, &rate(d.reconnects));
    s.push('\n');
    s
}

/// Before "Threads started!": per target, how the agents connected to it (client, login,
/// TLS), e.g. `Connections to default (db1:3306): lean client, caching_sha2_password, TLSv1_3`,
/// and the connects tried again while opening, with why.
pub fn connections_header(plan: &Plan, ready: &RunResult) -> String {
    let mut s = String::new();
    for (i, t) in plan.workload.targets().iter().enumerate() {
        let these: Vec<String> = ready
            .connections
            .iter()
            .filter(|(n, _)| *n == i)
            .map(|(_, c)| c.describe())
            .collect();
        if !these.is_empty() {
            let _ = writeln!(s, "Connections to {}: {}", t.describe(), these.join("; "));
        }
        s.push_str(&retried_line(plan, ready, i));
    }
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// The connects retried while opening, one line per target that had any (for the layouts
/// without fleetbench's header, on stderr).
pub fn connect_retries(plan: &Plan, ready: &RunResult) -> String {
    (0..plan.workload.targets().len())
        .map(|i| retried_line(plan, ready, i))
        .collect()
}

/// `Connects to T retried while opening: N (timed out a, reset b)` for target `i`, or
/// nothing when none was.
fn retried_line(plan: &Plan, ready: &RunResult, i: usize) -> String {
    let retried: Vec<(&str, u64)> = ready
        .connect_retries
        .iter()
        .filter(|(n, _, _)| *n == i)
        .map(|(_, why, k)| (why.as_str(), *k))
        .collect();
    let Some(t) = plan
        .workload
        .targets()
        .get(i)
        .filter(|_| !retried.is_empty())
    else {
        return String::new();
    };
    let total: u64 = retried.iter().map(|(_, k)| k).sum();
    let why: Vec<String> = retried.iter().map(|(w, k)| format!("{w} {k}")).collect();
    format!(
        "Connects to {} retried while opening: {total} ({})\n",
        t.describe(),
        why.join(", ")
    )
}

/// One row per target: where it is, the queries it received by class, errors, reconnects
/// and the latency of single statements.
pub fn targets_block(plan: &Plan, r: &RunResult) -> String {
    if plan.workload.targets().is_empty() {
        return String::new();
    }
    let p = plan.percentiles.first().copied().unwrap_or(95.0);
    let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
    let names: Vec<String> = plan
        .workload
        .targets()
        .iter()
        .map(|t| t.describe())
        .collect();
    let w = names.iter().map(String::len).max().unwrap_or(6).max(6);
    let mut s = String::from("\nPer target:\n");
    let _ = writeln!(
        s,
        "    {:<w$}  {:>10}  {:>10}  {:>10}  {:>12}  {:>8}  {:>8}  {:>17}",
        "target",
        "rd stmts",
        "wr stmts",
        "oth stmts",
        "stmts/s",
        "ign errs",
        "reconn",
        format!("stmt {}", own_pct_head(p))
    );
    for (i, d, l) in &r.targets {
        let name = names.get(*i).cloned().unwrap_or_else(|| format!("#{i}"));
        let q = d.reads + d.writes + d.others;
        // TPC-C times transactions, not single statements.
        let stmt = if l.count() == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", l.requested_ms(p))
        };
        let _ = writeln!(
            s,
            "    {name:<w$}  {:>10}  {:>10}  {:>10}  {:>12.2}  {:>8}  {:>8}  {stmt:>17}",
            d.reads,
            d.writes,
            d.others,
            q as f64 / secs,
            d.ignored_errors,
            d.reconnects,
        );
    }
    // How the connections were made: the client on the hot path, the login, TLS.
    for (i, name) in names.iter().enumerate() {
        let ways: Vec<String> = r.connections_to(i).map(|c| c.describe()).collect();
        if !ways.is_empty() {
            let _ = writeln!(s, "    {name:<w$}  connections: {}", ways.join("; "));
        }
        // The server's settings the result records (--server-vars), as its first
        // connection read them.
        if let Some(c) = r.connections_to(i).find(|c| !c.server_vars.is_empty()) {
            let vars: Vec<String> = c
                .server_vars
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let _ = writeln!(s, "    {name:<w$}  server variables: {}", vars.join(", "));
        }
    }
    s
}

/// `fleetbench agents`: one row per agent with version, host, cores, state and round trip.
pub fn agents_status(lines: &[crate::wire::AgentStatusLine]) -> String {
    let w = lines.iter().map(|l| l.addr.len()).max().unwrap_or(5).max(5);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9}  state",
        "agent", "version", "host", "cores", "rtt (ms)"
    );
    for l in lines {
        match &l.result {
            Ok(h) => {
                let state = match &h.busy {
                    None => "idle".to_string(),
                    Some((run, since, peer)) => {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_secs());
                        format!(
                            "busy: run {run} for {} from {peer}",
                            age(now.saturating_sub(*since))
                        )
                    }
                };
                let _ = writeln!(
                    s,
                    "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9.2}  {state}",
                    l.addr,
                    h.version,
                    h.hostname,
                    h.cores,
                    h.rtt.as_secs_f64() * 1e3
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9}  error: {e}",
                    l.addr, "-", "-", "-", "-"
                );
            }
        }
    }
    // What the hosts are (CPU model, kernel, memory), each distinct host once.
    let facts: Vec<(&str, &fleetbench_agent::host::HostFacts)> = lines
        .iter()
        .filter_map(|l| l.result.as_ref().ok())
        .map(|h| (h.hostname.as_str(), &h.host))
        .collect();
    s.push_str(&crate::report::hosts::facts_block(&facts, AGENTS_LISTED));
    s
}

/// Past this many agents the per-agent block is condensed to a summary; the JSON result
/// always lists every agent.
pub const AGENTS_LISTED: usize = 20;

/// How many of the slowest and of the fastest agents the condensed block names.
pub const EXTREMES: usize = 3;

/// Per agent: up to [`AGENTS_LISTED`] agents one row each (address, host, threads, events,
/// events/s, first percentile, status); more are summarised by [`agents_summary`]. Then a
/// warning for each agent that stopped early or was lost.
pub fn agents_block(plan: &Plan, r: &RunResult) -> String {
    let mut s = if r.agents.len() <= AGENTS_LISTED {
        let all: Vec<&AgentResult> = r.agents.iter().collect();
        let table = AgentTable::new(plan, &all);
        let mut s = String::from("Per agent:\n");
        s.push_str(&table.head());
        for a in &all {
            s.push_str(&table.row(a));
        }
        s
    } else {
        agents_summary(plan, r)
    };
    let facts: Vec<(&str, &fleetbench_agent::host::HostFacts)> = r
        .agents
        .iter()
        .map(|a| (a.host.as_str(), &a.facts))
        .collect();
    s.push_str(&super::hosts::facts_block(&facts, AGENTS_LISTED));
    s.push_str(&agent_warnings(&r.agents));
    s
}

/// The condensed per-agent block: how many agents and threads and how their runs ended,
/// min/median/max over agents of events/s (tps for OLTP) and of the first percentile, the
/// [`EXTREMES`] slowest and fastest agents in the full block's layout, and where the full
/// list is. Lost agents delivered no figures and are left out of the spread.
pub fn agents_summary(plan: &Plan, r: &RunResult) -> String {
    let p = plan.percentiles.first().copied().unwrap_or(95.0);
    let rate = if matches!(plan.workload, Workload::Oltp(_)) {
        "txns/s"
    } else {
        "evts/s"
    };
    let count = |f: fn(&AgentStatus) -> bool| r.agents.iter().filter(|a| f(&a.status)).count();
    let ok = count(|s| *s == AgentStatus::Completed);
    let stopped = count(|s| matches!(s, AgentStatus::Aborted(_)));
    let lost = count(|s| matches!(s, AgentStatus::Lost(_)));
    let mut s = String::from("Per agent (condensed):\n");
    let _ = write!(
        s,
        "    {} agents, {} threads: {ok} completed",
        r.agents.len(),
        r.threads()
    );
    if stopped > 0 {
        let _ = write!(s, ", {stopped} stopped early");
    }
    if lost > 0 {
        let _ = write!(s, ", {lost} lost");
    }
    s.push('\n');
    let ran: Vec<&AgentResult> = r
        .agents
        .iter()
        .filter(|a| !matches!(a.status, AgentStatus::Lost(_)))
        .collect();
    let rates = spread(ran.iter().map(|a| a.events_per_sec()).collect());
    let lats = spread(ran.iter().map(|a| a.latency.requested_ms(p)).collect());
    if let (Some(rates), Some(lats)) = (rates, lats) {
        let lat_head = own_pct_head(p);
        let w = lat_head.len().max(rate.len()) + 1;
        for (head, [min, median, max]) in [(rate, rates), (lat_head.as_str(), lats)] {
            let _ = writeln!(
                s,
                "    {:<w$}  min {min:>12.2}  median {median:>12.2}  max {max:>12.2}",
                format!("{head}:")
            );
        }
        let (slowest, fastest) = extremes(&ran, EXTREMES);
        let shown: Vec<&AgentResult> = slowest.iter().chain(&fastest).copied().collect();
        let table = AgentTable::new(plan, &shown);
        for (title, list) in [("Slowest", &slowest), ("Fastest", &fastest)] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  {title} {} by {rate}:", list.len());
            s.push_str(&table.head());
            for a in list {
                s.push_str(&table.row(a));
            }
        }
    } else {
        s.push_str("    no agent delivered its figures\n");
    }
    match &plan.json {
        Some(path) => {
            let _ = writeln!(s, "The full list of agents is in {}.", path.display());
        }
        None => s.push_str("The full list of agents is in the JSON result (--json FILE).\n"),
    }
    s
}

/// [min, median, max] of `v` (the median of an even count is the mean of the middle two);
/// None when empty. NaN sorts last.
pub fn spread(mut v: Vec<f64>) -> Option<[f64; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some([v[0], median, v[n - 1]])
}

/// The `k` agents with the fewest events/s (slowest first) and the `k` with the most
/// (fastest first), never the same agent twice; equal rates keep the agents' order.
pub fn extremes<'a>(
    agents: &[&'a AgentResult],
    k: usize,
) -> (Vec<&'a AgentResult>, Vec<&'a AgentResult>) {
    // Stable sorts: equal rates stay in agent order.
    let mut slowest: Vec<&AgentResult> = agents.to_vec();
    slowest.sort_by(|a, b| a.events_per_sec().total_cmp(&b.events_per_sec()));
    let slow = k.min(slowest.len());
    let fast = k.min(slowest.len() - slow);
    let mut fastest = slowest.split_off(slowest.len() - fast);
    fastest.sort_by(|a, b| b.events_per_sec().total_cmp(&a.events_per_sec()));
    slowest.truncate(slow);
    (slowest, fastest)
}

/// A warning line for each agent that stopped early or was lost, at most
/// [`AGENTS_LISTED`], then how many more there are.
pub fn agent_warnings(agents: &[AgentResult]) -> String {
    let mut notes: Vec<String> = Vec::new();
    for a in agents {
        match &a.status {
            AgentStatus::Completed => {}
            AgentStatus::Aborted(why) => {
                notes.push(format!("WARNING: agent {} stopped early: {why}", a.addr))
            }
            AgentStatus::Lost(why) => {
                notes.push(format!("WARNING: agent {} was lost: {why}", a.addr))
            }
        }
    }
    let mut s = String::new();
    if notes.is_empty() {
        return s;
    }
    s.push('\n');
    for n in notes.iter().take(AGENTS_LISTED) {
        let _ = writeln!(s, "{n}");
    }
    if notes.len() > AGENTS_LISTED {
        let _ = writeln!(
            s,
            "WARNING: {} more agents stopped early or were lost; the JSON result lists them all",
            notes.len() - AGENTS_LISTED
        );
    }
    s
}

/// The layout of the per-agent table for a plan and the agents it will show.
struct AgentTable {
    percentile: f64,
    addr_w: usize,
    host_w: usize,
    db: bool,
    fileio: bool,
    /// memory: its block size.
    memory: Option<u64>,
}

impl AgentTable {
    fn new(plan: &Plan, agents: &[&AgentResult]) -> Self {
        AgentTable {
            percentile: plan.percentiles.first().copied().unwrap_or(95.0),
            addr_w: agents
                .iter()
                .map(|a| a.addr.len())
                .max()
                .unwrap_or(5)
                .max(5),
            host_w: agents
                .iter()
                .map(|a| a.host.len())
                .max()
                .unwrap_or(4)
                .max(4),
            db: matches!(plan.workload, Workload::Oltp(_)),
            fileio: matches!(plan.workload, Workload::Fileio(_)),
            memory: match plan.workload {
                Workload::Memory(m) => Some(m.block_size),
                _ => None,
            },
        }
    }

    fn head(&self) -> String {
        let (addr_w, host_w) = (self.addr_w, self.host_w);
        // fleetbench's own labels, none of which a pattern written for sysbench's report
        // ("transactions", "tps", "lat (ms,95%)", "read:") matches.
        let (events_head, rate_head) = if self.db {
            ("txns", "txns/s")
        } else {
            ("evts", "evts/s")
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "    {:<addr_w$}  {:<host_w$}  {:>7}  {:>12}  {:>12}  ",
            "agent", "host", "threads", events_head, rate_head
        );
        if self.db {
            let _ = write!(s, "{:>12}  ", "stmts/s");
        }
        if self.fileio {
            let _ = write!(
                s,
                "{:>10}  {:>10}  {:>10}  {:>10}  {:>10}  ",
                "rd ops/s", "wr ops/s", "syncs/s", "rd MiB/s", "wr MiB/s"
            );
        }
        if self.memory.is_some() {
            let _ = write!(s, "{:>12}  ", "MiB/s");
        }
        let lat_head = own_pct_head(self.percentile);
        let _ = writeln!(s, "{lat_head:>13}  status");
        s
    }

    fn row(&self, a: &AgentResult) -> String {
        let (addr_w, host_w) = (self.addr_w, self.host_w);
        let status = match &a.status {
            AgentStatus::Completed => "ok",
            AgentStatus::Aborted(_) => "stopped",
            AgentStatus::Lost(_) => "LOST",
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "    {:<addr_w$}  {:<host_w$}  {:>7}  {:>12}  {:>12.2}  ",
            a.addr,
            a.host,
            a.threads,
            a.events,
            a.events_per_sec(),
        );
        if self.db {
            let q = a.db.reads + a.db.writes + a.db.others;
            let _ = write!(s, "{:>12.2}  ", crate::merge::per_sec(q, a.elapsed));
        }
        let secs = a.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        if self.fileio {
            let _ = write!(
                s,
                "{:>10.2}  {:>10.2}  {:>10.2}  {:>10.2}  {:>10.2}  ",
                a.io.reads as f64 / secs,
                a.io.writes as f64 / secs,
                a.io.fsyncs as f64 / secs,
                a.io.bytes_read as f64 / MIB / secs,
                a.io.bytes_written as f64 / MIB / secs,
            );
        }
        if let Some(block) = self.memory {
            let _ = write!(s, "{:>12.2}  ", a.events as f64 * block as f64 / MIB / secs);
        }
        let _ = writeln!(
            s,
            "{:>13.2}  {status}",
            a.latency.requested_ms(self.percentile)
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::merge::{AgentResult, Latency};
    use crate::plan::AgentSource;

    fn plan() -> Plan {
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
        }
    }

    fn plan_of(words: &[&str]) -> Plan {
        let mut args: Vec<std::ffi::OsString> = vec!["fleetbench".into()];
        args.extend(words.iter().map(|w| w.into()));
        crate::plan::build(&crate::cli::parse(args).unwrap()).unwrap()
    }

    /// Tick `seq`, one second long, of `threads` threads, `events` events of `latency_us`.
    fn tick(seq: u32, threads: u32, events: u64, latency_us: u64) -> MergedInterval {
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

    fn latency(us: &[u64]) -> Latency {
        let mut l = Latency::default();
        for &v in us {
            l.hist.record(v).unwrap();
            l.sum_ns += v * 1000;
        }
        l.min_ns = us.iter().min().unwrap() * 1000;
        l.max_ns = us.iter().max().unwrap() * 1000;
        l
    }

    fn result() -> RunResult {
        let a = AgentResult {
            addr: "10.0.0.1:7600".into(),
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
            agents: vec![a, b],
            intervals: Vec::new(),
            interrupted: false,
            kinds: Vec::new(),
            targets: Vec::new(),
            connections: Vec::new(),
            connect_retries: Vec::new(),
            hosts: Vec::new(),
            run_id: "r1".into(),
            started: Some(std::time::UNIX_EPOCH + Duration::from_secs(1_796_166_245)),
            ended: Some(std::time::UNIX_EPOCH + Duration::from_secs(1_796_166_255)),
        }
    }

    #[test]
    fn final_report_has_sysbench_layout() {
        let text = final_report(&plan(), &result());
        let expected = "\
CPU speed:
    events per second:     0.60

General statistics:
    total time:                          10.0020s
    total number of events:              6

Latency (ms):
         min:                                    1.00
         avg:                                    3.50
         max:                                    6.00
         95th percentile:                        6.00
         99.9th percentile:                      6.00
         sum:                                   21.00

Threads fairness:
    events (avg/stddev):           2.0000/0.00
    execution time (avg/stddev):   7.0000/2.94
";
        assert!(text.starts_with(expected), "got:\n{text}");
        assert!(
            text.contains(
                "    10.0.0.2:7600  db2         1             2          0.20           6.00  LOST"
            ),
            "{text}"
        );
        assert!(text.contains("WARNING: agent 10.0.0.2:7600 was lost: connection reset"));
    }

    #[test]
    fn percentile_zero_turns_percentiles_off_as_in_sysbench() {
        let mut p = plan();
        p.percentiles = vec![0.0];
        let text = final_report(&p, &result());
        assert!(
            text.contains("\n         percentile stats:               disabled\n"),
            "{text}"
        );
        assert!(!text.contains("th percentile"), "{text}");
        let iv = tick(1, 1, 10, 1_670);
        assert_eq!(
            interval_line(&iv, 0.0, &p.workload),
            "[ 1s ] thds: 1 eps: 10.00 lat (ms,0%): 0.00"
        );
        assert_eq!(crate::plan::parse_percentiles("0").unwrap(), vec![0.0]);
        assert!(crate::plan::parse_percentiles("0,95").is_err());
    }

    #[test]
    fn sysbench_0_5_and_0_4_layouts() {
        let mut p = plan_of(&["oltp_read_write", "--percentile=99", "run"]);
        p.percentiles = vec![99.0];
        let mut r = result();
        r.agents[0].db.reads = 28;
        r.agents[0].db.writes = 8;
        r.agents[0].db.others = 4;
        r.agents[0].db.errors_by_code.insert(1213, 1);
        let t = legacy_report(&p, &r, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "OLTP test statistics:");
        assert_eq!(lines[2], "        read:                            28");
        assert_eq!(
            lines[6],
            format!(
                "    transactions:                        6      ({:.2} per sec.)",
                6.0 / 10.002
            )
        );
        assert!(
            lines[7].starts_with("    deadlocks:                           1      ("),
            "{t}"
        );
        assert!(
            lines[8].starts_with("    read/write requests:                 36     ("),
            "{t}"
        );
        assert!(
            t.contains(
                "\nTest execution summary:\n    total time:                          10.0020s\n"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "\n    total time taken by event execution: 0.0210s\n    per-request statistics:\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\n         min:                                  1.00ms\n"),
            "{t}"
        );
        assert!(
            t.contains("\n         approx.  99 percentile:               6.00ms\n"),
            "{t}"
        );
        assert!(
            t.contains("\nThreads fairness:\n    events (avg/stddev):           "),
            "{t}"
        );
        let t4 = legacy_report(&p, &r, true);
        assert!(
            t4.contains("\nGeneral statistics:\n") && t4.contains("\n    response time:\n"),
            "{t4}"
        );

        let iv = MergedInterval {
            db: crate::merge::DbCounters {
                reads: 39585,
                writes: 11310,
                ..Default::default()
            },
            ..tick(10, 100, 2827, 111_120)
        };
        assert_eq!(
            interval_line_in(&iv, 99.0, &p.workload, ReportStyle::Sysbench05),
            "[  10s] threads: 100, tps: 2827.00, reads: 39585.00, writes: 11310.00, response time: 111.12ms (99%), errors: 0.00, reconnects:  0.00"
        );
        assert_eq!(legacy_size(0), "0b");
        assert_eq!(legacy_size(1_768_857_600), "1.6474Gb");
    }

    #[test]
    fn interval_line_layout() {
        let iv = tick(3, 8, 1234, 1_670);
        assert_eq!(
            interval_line(
                &iv,
                95.0,
                &Workload::Cpu(crate::plan::CpuSpec { max_prime: 3 })
            ),
            "[ 3s ] thds: 8 eps: 1234.00 lat (ms,95%): 1.67"
        );
        let mut iv = iv;
        iv.events = 500;
        iv.db.reads = 7000;
        iv.db.writes = 2000;
        iv.db.others = 1000;
        iv.db.ignored_errors = 2;
        assert_eq!(
            interval_line(&iv, 95.0, &plan_of(&["oltp_read_write", "run"]).workload),
            "[ 3s ] thds: 8 tps: 500.00 qps: 10000.00 (r/w/o: 7000.00/2000.00/1000.00) lat (ms,95%): 1.67 err/s: 2.00 reconn/s: 0.00"
        );
    }

    #[test]
    fn sql_statistics_layout_matches_sysbench() {
        let mut r = result();
        r.agents[1].status = AgentStatus::Completed;
        r.agents[0].db.reads = 140;
        r.agents[1].db.reads = 140;
        r.agents[0].db.writes = 40;
        r.agents[0].db.others = 20;
        let text = sql_statistics(&r);
        let expected = "\
SQL statistics:
    queries performed:
        read:                            280
        write:                           40
        other:                           20
        total:                           340
    transactions:                        6      (0.60 per sec.)
    queries:                             340    (33.99 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)
";
        assert!(text.starts_with(expected), "got:\n{text}");
        assert_eq!(
            table_ranges(&[1, 2, 3, 5, 7, 8]),
            "sbtest1-3, sbtest5, sbtest7-8"
        );
    }

    /// `n` completed agents; agent i ran 10 s with 100 + 10 i events of (i + 1) ms each.
    fn many(n: usize) -> RunResult {
        let agents = (0..n)
            .map(|i| AgentResult {
                addr: format!("10.0.0.{i}:7600"),
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

    #[test]
    fn up_to_twenty_agents_are_listed_one_row_each() {
        let text = agents_block(&plan(), &many(AGENTS_LISTED));
        assert!(text.starts_with("Per agent:\n    agent"), "{text}");
        assert_eq!(text.lines().count(), 2 + AGENTS_LISTED, "{text}");
        assert!(
            text.contains(
                "    10.0.0.19:7600  c19         1           290         29.00          20.00  ok\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn past_twenty_agents_the_block_is_condensed() {
        let mut r = many(25);
        // The slowest agent by rate is lost: it is left out of the spread and the extremes.
        r.agents[0].status = AgentStatus::Lost("connection reset".into());
        r.agents[0].events = 0;
        r.agents[3].status = AgentStatus::Aborted("stopped by the user".into());
        let mut plan = plan();
        let text = agents_block(&plan, &r);
        let expected = "\
Per agent (condensed):
    25 agents, 25 threads: 23 completed, 1 stopped early, 1 lost
    evts/s:  min        11.00  median        22.50  max        34.00
    p95 ms:  min         2.00  median        13.50  max        25.00
  Slowest 3 by evts/s:
    agent           host  threads          evts        evts/s         p95 ms  status
    10.0.0.1:7600   c1          1           110         11.00           2.00  ok
    10.0.0.2:7600   c2          1           120         12.00           3.00  ok
    10.0.0.3:7600   c3          1           130         13.00           4.00  stopped
  Fastest 3 by evts/s:
    agent           host  threads          evts        evts/s         p95 ms  status
    10.0.0.24:7600  c24         1           340         34.00          25.00  ok
    10.0.0.23:7600  c23         1           330         33.00          24.00  ok
    10.0.0.22:7600  c22         1           320         32.00          23.00  ok
The full list of agents is in the JSON result (--json FILE).

WARNING: agent 10.0.0.0:7600 was lost: connection reset
WARNING: agent 10.0.0.3:7600 stopped early: stopped by the user
";
        assert_eq!(text, expected);
        plan.json = Some("out/run.json".into());
        assert!(agents_block(&plan, &r).contains("The full list of agents is in out/run.json.\n"));
        // Every agent lost: no spread, no extremes, and the warnings are capped.
        for a in &mut r.agents {
            a.status = AgentStatus::Lost("gone".into());
        }
        let text = agents_block(&plan, &r);
        assert!(
            text.contains(
                "25 agents, 25 threads: 0 completed, 25 lost\n    no agent delivered its figures\n"
            ),
            "{text}"
        );
        assert_eq!(
            text.matches("was lost: gone").count(),
            AGENTS_LISTED,
            "{text}"
        );
        assert!(text.ends_with("WARNING: 5 more agents stopped early or were lost; the JSON result lists them all\n"), "{text}");
    }

    #[test]
    fn spread_gives_min_median_max() {
        assert_eq!(spread(vec![]), None);
        assert_eq!(spread(vec![3.0]), Some([3.0, 3.0, 3.0]));
        assert_eq!(spread(vec![4.0, 1.0, 3.0, 2.0]), Some([1.0, 2.5, 4.0]));
        assert_eq!(spread(vec![5.0, 1.0, 2.0]), Some([1.0, 2.0, 5.0]));
    }

    #[test]
    fn extremes_never_name_an_agent_twice() {
        let r = many(5);
        let all: Vec<&AgentResult> = r.agents.iter().rev().collect();
        let names = |v: &[&AgentResult]| v.iter().map(|a| a.host.clone()).collect::<Vec<_>>();
        let (slow, fast) = extremes(&all, 3);
        assert_eq!(names(&slow), ["c0", "c1", "c2"]);
        assert_eq!(names(&fast), ["c4", "c3"]);
        let (slow, fast) = extremes(&all[..1], 3);
        assert_eq!((names(&slow), fast.len()), (vec!["c4".to_string()], 0));
        // Equal rates keep the given order at both ends.
        let mut r = many(4);
        for a in &mut r.agents {
            a.events = 7;
        }
        let all: Vec<&AgentResult> = r.agents.iter().collect();
        let (slow, fast) = extremes(&all, 2);
        assert_eq!(
            (names(&slow), names(&fast)),
            (
                vec!["c0".to_string(), "c1".into()],
                vec!["c2".to_string(), "c3".into()]
            )
        );
    }

    #[test]
    fn header_lists_up_to_twenty_agents_then_summarises() {
        let few: Vec<(String, u32)> = (0..AGENTS_LISTED).map(|i| (format!("h{i}:1"), 2)).collect();
        let line = agents_line(&few);
        assert!(
            line.starts_with("Agents: 20: h0:1 (2 threads), h1:1 (2 threads), "),
            "{line}"
        );
        let mut many: Vec<(String, u32)> = (0..1000).map(|i| (format!("h{i}:1"), 4)).collect();
        assert_eq!(
            agents_line(&many),
            "Agents: 1000 (4 threads each): h0:1 ... h999:1"
        );
        many[5].1 = 3;
        assert_eq!(
            agents_line(&many),
            "Agents: 1000 (3-4 threads each): h0:1 ... h999:1"
        );
    }

    #[test]
    fn header_names_agents_and_options() {
        let h = header(&plan(), &[("a:1".into(), 2), ("b:2".into(), 1)]);
        assert!(h.contains("Number of threads: 3\n"));
        assert!(h.contains("Report intermediate results every 1 second(s)\n"));
        assert!(h.contains("Agents: 2: a:1 (2 threads), b:2 (1 threads)\n"));
        assert!(h.contains("Prime numbers limit: 10000\n"));
    }
}
