//! sysbench 0.5's and 0.4's layouts: 0.5's interval line, and their end reports ("OLTP
//! test statistics" or 0.4's fileio lines, then "Test execution summary" or 0.4's
//! "General statistics").

use std::fmt::Write;

use super::common::{DbRates, MIB, fairness_rows, general_rows, row, with_queue_line};
use crate::merge::{MergedInterval, RunResult};
use crate::plan::{Plan, Workload};
use crate::report::pct_label;

/// 0.5's interval line (0.4's too, which had none of its own)
/// `[  10s] threads: 100, tps: .., reads: .., writes: .., response time: ..ms (99%), ...`,
/// with an open loop's queue line.
pub fn interval_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let line = legacy_interval_line(iv, percentile, workload);
    with_queue_line(line, iv, format!("[{:>4}s]", iv.label_secs()))
}

/// 0.5's interval line proper, without an open loop's queue line.
fn legacy_interval_line(iv: &MergedInterval, percentile: f64, workload: &Workload) -> String {
    let secs = iv.duration.as_secs_f64().max(f64::MIN_POSITIVE);
    let lat = iv.latency.requested_ms(percentile);
    let p = pct_label(percentile);
    if workload.is_sql() {
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
        Workload::Oltp(_) | Workload::Script(_) => {
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{plan_of, result, tick};
    use super::*;
    use crate::report::style::ReportStyle;
    use crate::report::text::interval_line_in;

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
}
