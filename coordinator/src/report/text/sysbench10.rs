//! sysbench 1.0's layout: its interval line (OLTP's, fileio's, memory's and the plain
//! one), its end report (the workload's block, General statistics, Latency, Threads
//! fairness) and `--report-checkpoints`' reports.

use std::fmt::Write;

use super::common::{DbRates, MIB, fairness_rows, general_rows, lat_row, row, with_queue_line};
use crate::merge::{AgentResult, AgentStatus, MergedInterval, RunResult};
use crate::plan::{Plan, Workload};
use crate::report::json::round;
use crate::report::pct_label;

/// One live interval line, sysbench's layout: for OLTP
/// `[ 10s ] thds: 16 tps: .. qps: .. (r/w/o: ../../..) lat (ms,95%): .. err/s: .. reconn/s: ..`,
/// otherwise `[ 1s ] thds: 8 eps: 123.45 lat (ms,95%): 1.67`.
pub fn interval_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let line = closed_loop_line(iv, percentile, workload);
    with_queue_line(line, iv, format!("[ {}s ]", iv.label_secs()))
}

/// What sysbench 1.0's interval line shows, from a live merge or a stored document.
pub(in crate::report) struct LineFigures {
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
pub(in crate::report) enum LineKind {
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
pub(in crate::report) fn sysbench_line(f: &LineFigures) -> String {
    // Rounded as the result document stores it, so that `report FILE` reprints the line
    // digit for digit (a raw 1.2349996 would print 1.23 live and 1.24 from the document).
    let (label, p, lat) = (f.label, pct_label(f.percentile), round(f.latency_ms));
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
        Workload::Oltp(_) | Workload::Script(_) => LineKind::Sql(DbRates::of(&iv.db, secs)),
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

/// sysbench 1.0's end report: the workload's block, General statistics, Latency and
/// Threads fairness.
pub fn end_report(plan: &Plan, r: &RunResult) -> String {
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
        Workload::Oltp(_) | Workload::Script(_) | Workload::Pgbench(_) => {
            s.push_str(&sql_statistics(r))
        }
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
            name: String::new(),
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
    let full = end_report(plan, &r);
    let body = full.split("\nThreads fairness:").next().unwrap_or(&full);
    format!("[ {at}s ] Checkpoint report:\n{body}\n")
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{plan_of, result, tick};
    use super::*;
    use crate::report::text::table_ranges;

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
    fn a_latency_prints_as_the_document_reprints_it() {
        // 1.2349996 ms is stored as 1.235; live and reprinted lines must agree.
        let line = |ms: f64| {
            sysbench_line(&LineFigures {
                label: 1,
                threads: 2,
                events_per_sec: 10.0,
                percentile: 95.0,
                latency_ms: ms,
                kind: LineKind::Plain,
            })
        };
        let raw = 1.2349996;
        assert_eq!(line(raw), line(round(raw)));
        assert!(line(raw).ends_with("lat (ms,95%): 1.24"), "{}", line(raw));
        let mut s = String::new();
        lat_row(&mut s, "max", raw);
        assert!(s.trim_end().ends_with("1.24"), "{s}");
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
}
