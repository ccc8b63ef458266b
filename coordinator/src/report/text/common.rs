//! What every layout of the text report shares: the banner, sysbench's two-column rows
//! and its General statistics and Threads fairness blocks, sizes and table lists as
//! sysbench writes them, and an interval's statement rates.

use std::fmt::Write;

use crate::merge::{MergedInterval, RunResult};

/// The first line of every command's output, with the blank line sysbench leaves after it.
pub fn banner() -> String {
    format!(
        "fleetbench {} (sysbench 1.0 compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Left part padded to `width`, then the value (sysbench's two-column layout).
pub(super) fn row(s: &mut String, label: &str, width: usize, value: &str) {
    let _ = writeln!(s, "{label:<width$}{value}");
}

/// A latency row: label then the value right-aligned so the line ends at column 53.
pub(super) fn lat_row(s: &mut String, label: &str, ms: f64) {
    // Rounded as the result document stores it: `report FILE` prints the same digits.
    let ms = crate::report::json::round(ms);
    let label = format!("         {label}:");
    let width = 53usize.saturating_sub(label.len());
    let _ = writeln!(s, "{label}{ms:>width$.2}");
}

/// sysbench's "total time" and "total number of events" rows.
pub(super) fn general_rows(s: &mut String, r: &RunResult) {
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
pub(super) fn fairness_rows(s: &mut String, r: &RunResult) {
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

pub(super) const MIB: f64 = 1048576.0;

/// A size as sysbench prints it: the largest binary unit that divides it ("16MiB", "2GiB").
pub fn size_label(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}b")
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

/// sysbench's second interval line under --rate, after `stamp` in the layout's own form.
pub(super) fn with_queue_line(line: String, iv: &MergedInterval, stamp: String) -> String {
    match &iv.open {
        Some(o) => format!(
            "{line}\n{stamp} queue length: {}, concurrency: {}",
            o.queue_length, o.concurrency
        ),
        None => line,
    }
}

/// An interval's statement counters per second, as the interval lines print them.
pub(in crate::report) struct DbRates {
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
    /// The rates of `d` over `secs` seconds.
    pub(in crate::report) fn of(d: &crate::merge::DbCounters, secs: f64) -> DbRates {
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
