//! `fleetbench report RESULT.json` without `--html`: the text report of a saved result. A
//! run reads as it printed (sysbench 1.0's interval lines and end report, then one row per
//! agent; a TPC-C run tpcc-mysql's interval lines, Raw Results, Constraint Check and TpmC,
//! then its response times by type; a `fleetbench pgbench` run pgbench's report, from
//! `text::pgbench_doc`); a sweep or scenario file as its table (a rate sweep's with its
//! offered and achieved rates).

use std::fmt::Write;

use super::doc::{
    Document, Fairness, FileOps, Interval, Meta, OpenLoopTotals, Report, Sql, Totals,
};
use super::text::{DbRates, LineFigures, LineKind, sysbench_line, tpcc};
use super::{compare, pct_label};
use crate::sweep::{self, Summary};

/// The text of a result document.
pub fn render(doc: &Document) -> String {
    let (first, title) = match doc {
        Document::Run(r) => return run(r),
        Document::Sweep(sw) => (sw.steps.first(), Some(sw.test.as_str())),
        Document::Scenarios(sc) => (sc.scenarios.first().and_then(|s| s.steps.first()), None),
    };
    let series = compare::series(doc, "");
    let named = matches!(doc, Document::Scenarios(_));
    let rows: Vec<(Option<&str>, &Summary)> = series
        .iter()
        .flat_map(|s| {
            s.rows
                .iter()
                .map(move |r| (named.then_some(s.label.as_str()), r))
        })
        .collect();
    let pcts: Vec<f64> = first.map_or_else(|| vec![95.0], |s| s.result.config.percentiles.clone());
    let by_rate = sweep::is_rate_sweep(rows.iter().map(|r| r.1));
    let title = match title {
        Some(t) if by_rate => format!("Rate sweep of {t}:\n"),
        Some(t) => format!("Thread sweep of {t}:\n"),
        None => "Scenarios compared:\n".to_string(),
    };
    format!("{title}{}", sweep::table(&rows, &pcts))
}

/// The run's id, times and tags from its meta (nothing for files written before meta).
fn meta_line(meta: Option<&Meta>) -> String {
    let Some(m) = meta else {
        return String::new();
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let mut s = format!(
        "Run {}: {} to {}",
        m.run_id,
        text(&m.started_at),
        text(&m.ended_at)
    );
    if !m.tags.is_empty() {
        let t: Vec<String> = m.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!("; tags: {}", t.join(", ")));
    }
    s.push_str("\n\n");
    s
}

/// A run: header line, interval lines, sysbench's end report, agents; a `fleetbench
/// pgbench` run in pgbench's layout instead.
fn run(doc: &Report) -> String {
    if let Some(text) = super::text::pgbench_doc::render(doc) {
        return text;
    }
    let totals = &doc.totals;
    let cfg = &doc.config;
    let p = cfg.percentiles.first().copied().unwrap_or(95.0);
    let key = format!("p{}", pct_label(p));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} threads over {} agent(s), fleetbench {}\n",
        doc.test,
        cfg.threads,
        cfg.agents.len(),
        doc.fleetbench_version,
    );
    s.push_str(&meta_line(doc.meta.as_ref()));
    let secs = totals.time_s.max(f64::MIN_POSITIVE);
    if let Some(t) = &totals.figures.tpcc {
        // As the live run printed it: tpcc-mysql's layout, then the SQL statistics.
        s.push_str(&tpcc_intervals(&doc.intervals));
        s.push_str(&tpcc::end_report_of(
            &tpcc::doc_types(t),
            totals.time_s.max(0.0) as u64,
            t.tpmc,
        ));
        s.push_str(&tpcc::types_block_of(&tpcc::doc_types(t)));
    } else {
        s.push_str(&interval_lines(&doc.intervals, &key, p));
    }
    if let Some(q) = &totals.figures.sql {
        s.push_str(&sql_statistics(q, secs));
    }
    if let Some(io) = &totals.figures.file {
        s.push_str(&file_operations(io));
    }
    s.push_str(&general_statistics(totals, &key, p));
    if let Some(o) = &totals.open_loop {
        s.push_str(&open_loop(o, &key, p));
    }
    s.push_str(&fairness(&totals.fairness));
    if !doc.agents.is_empty() {
        s.push_str(&super::doc_agents::agents(
            &doc.agents,
            &doc.agent_names(),
            &key,
            "threads",
        ));
    }
    if let Some(q) = &totals.figures.sql {
        s.push_str(&super::errors::line(&q.errors_by_code, q.ignored_errors));
    }
    s.push_str(&super::text::servers::block(&totals.targets));
    if let Some(t) = &totals.figures.tpcc {
        // As the run ended: its TpmC once more, last.
        s.push_str(&tpcc::last_line(t.tpmc));
    }
    s
}

/// TPC-C's interval lines as the run printed them, in tpcc-mysql's layout.
fn tpcc_intervals(intervals: &[Interval]) -> String {
    let mut s = String::new();
    for iv in intervals {
        if let Some(t) = &iv.figures.tpcc {
            s.push_str(&tpcc::types_line(label_secs(iv), &tpcc::doc_types(t)));
            s.push('\n');
        }
    }
    s
}

/// The second an interval line is labelled with, as the run labelled it: a last, partial
/// interval ends between whole seconds, after the one before it (a millisecond of slack:
/// the seconds were stored as floating point).
fn label_secs(iv: &Interval) -> u64 {
    let d = iv.duration_s.max(f64::MIN_POSITIVE);
    let t = iv.t_s;
    (t.round().max((t - d + 1e-3).floor() + 1.0)).max(0.0) as u64
}

/// The interval lines as the run printed them, an open loop's second line included.
fn interval_lines(intervals: &[Interval], key: &str, p: f64) -> String {
    let mut s = String::new();
    for iv in intervals {
        s.push_str(&interval_line(iv, key, p));
        s.push('\n');
        // An open loop's second line, as the run printed it.
        if let Some(o) = &iv.open_loop {
            let line = interval_line(iv, key, p);
            let label = line.split(" ]").next().unwrap_or("[ ?s");
            let _ = writeln!(
                s,
                "{label} ] queue length: {}, concurrency: {}",
                o.queue_length, o.concurrency
            );
        }
    }
    if !intervals.is_empty() {
        s.push('\n');
    }
    s
}

/// sysbench's "SQL statistics" block of a run `secs` seconds long.
fn sql_statistics(q: &Sql, secs: f64) -> String {
    let mut s = String::new();
    let rate = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / secs);
    s.push_str("SQL statistics:\n    queries performed:\n");
    for (label, n) in [
        ("read", q.reads),
        ("write", q.writes),
        ("other", q.others),
        ("total", q.queries),
    ] {
        let _ = writeln!(s, "{:<41}{}", format!("        {label}:"), n);
    }
    for (label, n) in [
        ("transactions", q.transactions),
        ("queries", q.queries),
        ("ignored errors", q.ignored_errors),
        ("reconnects", q.reconnects),
    ] {
        let _ = writeln!(s, "{:<41}{}", format!("    {label}:"), rate(n));
    }
    s.push('\n');
    s
}

/// sysbench's "File operations" and "Throughput" blocks.
fn file_operations(io: &FileOps) -> String {
    let mut s = String::from("File operations:\n");
    for (label, v) in [
        ("reads/s", io.reads_per_sec),
        ("writes/s", io.writes_per_sec),
        ("fsyncs/s", io.fsyncs_per_sec),
    ] {
        let _ = writeln!(s, "{:<34}{:.2}", format!("    {label}:"), v);
    }
    s.push_str("\nThroughput:\n");
    for (label, v) in [
        ("read, MiB/s", io.read_mib_per_sec),
        ("written, MiB/s", io.written_mib_per_sec),
    ] {
        let _ = writeln!(s, "{:<34}{:.2}", format!("    {label}:"), v);
    }
    s.push('\n');
    s
}

/// sysbench's "General statistics" and "Latency (ms)" blocks, with the percentile `p`
/// (`key` in the document).
fn general_statistics(totals: &Totals, key: &str, p: f64) -> String {
    let mut s = String::from("General statistics:\n");
    let _ = writeln!(s, "{:<41}{:.4}s", "    total time:", totals.time_s);
    let _ = writeln!(s, "{:<41}{}", "    total number of events:", totals.events);
    s.push_str("\nLatency (ms):\n");
    let lat = &totals.latency_ms;
    let rows = [
        ("min".to_string(), lat.min),
        ("avg".into(), lat.avg),
        ("max".into(), lat.max),
        (
            format!("{}th percentile", pct_label(p)),
            lat.get(key).unwrap_or(0.0),
        ),
        ("sum".into(), lat.sum),
    ];
    for (label, v) in rows {
        let label = format!("         {label}:");
        let _ = writeln!(
            s,
            "{label}{v:>w$.2}",
            w = 53usize.saturating_sub(label.len())
        );
    }
    s
}

/// An open loop's figures: the rate asked for, arrivals, events run, the queue left and
/// the service time.
fn open_loop(o: &OpenLoopTotals, key: &str, p: f64) -> String {
    let svc = &o.service_ms;
    let mut s = format!(
        "\nOpen loop (--rate={}): {} arrivals ({:.2}/s), {:.2} events/s run, {} queued at the end\n    service time (ms): avg {:.2}, {}th percentile {:.2}, max {:.2}\n",
        crate::report::format::rate_label(o.target_rate),
        o.arrivals,
        o.arrivals_per_sec,
        o.events_per_sec,
        o.queue_length_end,
        svc.avg,
        pct_label(p),
        svc.get(key).unwrap_or(0.0),
        svc.max,
    );
    if !o.rate_reached {
        s.push_str("    WARNING: the target rate was not reached\n");
    }
    s
}

/// sysbench's "Threads fairness" block.
fn fairness(fair: &Fairness) -> String {
    let mut s = String::from("\nThreads fairness:\n");
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    events (avg/stddev):", fair.events_avg, fair.events_stddev
    );
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    execution time (avg/stddev):", fair.execution_time_avg_s, fair.execution_time_stddev_s
    );
    s
}

/// An interval line as the run printed it, from the document's interval.
fn interval_line(iv: &Interval, key: &str, p: f64) -> String {
    let d = iv.duration_s.max(f64::MIN_POSITIVE);
    let label = label_secs(iv);
    let kind = if let Some(q) = &iv.figures.sql {
        // The queries per second the document has; the rest as the run's line makes them.
        LineKind::Sql(DbRates {
            queries: q.qps,
            ..DbRates::of(&q.counters(), d)
        })
    } else if let Some(io) = &iv.figures.file {
        LineKind::File {
            read_mib: io.read_mib_per_sec,
            written_mib: io.written_mib_per_sec,
            fsyncs: io.fsyncs_per_sec,
        }
    } else {
        LineKind::Plain
    };
    // OLTP's line gives the transactions per second the document has.
    let events_per_sec = iv.figures.sql.as_ref().map_or(iv.events_per_sec, |q| q.tps);
    sysbench_line(&LineFigures {
        label,
        threads: iv.threads,
        events_per_sec,
        percentile: p,
        latency_ms: iv.latency_ms.get(key).unwrap_or(0.0),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tpcc_run_reads_in_tpcc_mysqls_layout_as_it_printed() {
        use crate::merge::{AgentResult, AgentStatus, MergedInterval, RunResult};
        use crate::report::tpcc::tests::{deck, figures};
        use std::time::Duration;
        let plan = crate::plan::build(
            &crate::cli::parse(["fleetbench", "tpcc", "--threads=4", "run"]).unwrap(),
        )
        .unwrap();
        // Two intervals of 10 s and one agent over 20 s; a late Delivery and a slow one.
        let interval = |seq: u32, txns| MergedInterval {
            clients: Default::default(),
            seq,
            end: Duration::from_secs(10 * u64::from(seq)),
            last: seq == 2,
            duration: Duration::from_secs(10),
            threads: 4,
            events: 0,
            latency: Default::default(),
            db: Default::default(),
            io: Default::default(),
            per_agent: vec![],
            open: None,
            txns,
            targets: Vec::new(),
        };
        let mut first = deck(2);
        first.0[3] = figures(&[12, 85_000]);
        let mut whole = deck(3);
        whole.0[3] = figures(&[12, 85_000, 40]);
        whole.0[0].retried = 3;
        whole.0[0].rolled_back = 1;
        let r = RunResult {
            agents: vec![AgentResult {
                addr: "c1:7600".into(),
                name: "c1:7600".into(),
                host: "c1".into(),
                facts: Default::default(),
                threads: 4,
                elapsed: Duration::from_secs(20),
                events: 60,
                latency: Default::default(),
                per_thread: vec![(60, 1)],
                status: AgentStatus::Completed,
                db: Default::default(),
                io: Default::default(),
                open: None,
                txns: whole.clone(),
            }],
            intervals: vec![interval(1, first), interval(2, deck(1))],
            ..Default::default()
        };
        let doc = crate::report::json::build(&plan, &r);
        let t = render(&Document::Run(Box::new(doc)));
        // The live run's own lines: its interval lines, end report and types block.
        let live: Vec<String> = r.intervals.iter().map(tpcc::interval_line).collect();
        let end = tpcc::end_report(&whole, r.total_time());
        let types = tpcc::types_block(&whole);
        let at = |needle: &str| t.find(needle).unwrap_or_else(|| panic!("{needle} in\n{t}"));
        let lines = format!("{}\n{}\n", live[0], live[1]);
        assert!(lines.starts_with("  10, trx: 20, "), "{lines}");
        assert!(at(&lines) < at(&end) && at(&end) < at(&types), "{t}");
        assert!(end.contains("[3] sc:2  lt:1  rt:0"), "{end}");
        assert!(end.contains(" in 20 sec.\n"), "{end}");
        assert!(
            end.contains("<TpmC>\n                 90.000 TpmC"),
            "{end}"
        );
        assert!(types.contains("  New-Order            30"), "{types}");
        // No sysbench layout: its interval line and OLTP's transactions line are not there.
        assert!(!t.contains("[ 10s ]") && !t.contains("thds:"), "{t}");
        assert!(t.contains("General statistics:"), "{t}");
    }

    #[test]
    fn a_run_reads_as_it_printed() {
        let mut doc = crate::sweep::tests::run_doc(4, 100.0, 2000.0, 5.5);
        doc.test = "oltp_read_write".into();
        doc.config.percentiles = vec![95.0];
        doc.totals.figures.sql.as_mut().unwrap().transactions = 1000;
        let interval = |t_s: f64, duration_s: f64, p95: f64, rwo: (u64, u64, u64)| Interval {
            t_s,
            duration_s,
            threads: 4,
            events_per_sec: 100.0,
            latency_ms: crate::sweep::tests::latency(1, p95, p95, p95, &[("p95", p95)]),
            figures: crate::report::doc::Figures {
                sql: Some(crate::report::doc::Sql {
                    tps: 100.0,
                    qps: 2000.0,
                    reads: rwo.0,
                    writes: rwo.1,
                    others: rwo.2,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        doc.intervals = vec![
            interval(1.0, 1.0, 5.0, (1400, 400, 200)),
            interval(1.4, 0.4, 6.0, (560, 160, 80)),
        ];
        doc.agents = vec![crate::report::doc::Agent {
            addr: "10.0.0.1:7600".into(),
            host: "c1".into(),
            cores: 8,
            cpu_model: "AMD EPYC 7B13".into(),
            kernel: "6.1.0-18-amd64".into(),
            mem_total_bytes: 32 << 30,
            ..Default::default()
        }];
        let t = render(&Document::Run(Box::new(doc)));
        assert!(
            t.contains(
                "Agent hosts:\n    c1: 8 cores, AMD EPYC 7B13, Linux 6.1.0-18-amd64, 32.0 GiB\n"
            ),
            "{t}"
        );
        assert!(t.contains("[ 1s ] thds: 4 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 5.00"), "{t}");
        assert!(
            t.contains("[ 2s ] thds: 4"),
            "the partial last interval: {t}"
        );
        assert!(
            t.contains("    transactions:                        1000   (100.00 per sec.)"),
            "{t}"
        );
        assert!(
            t.contains("         95th percentile:                        5.50"),
            "{t}"
        );
    }
}
