//! The human report, in sysbench 1.0's layout so that people and scripts used to sysbench
//! read it unchanged, followed by fleetbench's own per-agent block; or, by
//! `--report-style`, one of sysbench's layouts alone. One module per layout: sysbench
//! 1.0's (`sysbench10`), 0.5's and 0.4's (`legacy`), tpcc-mysql's for TPC-C
//! (`tpcc`) and fleetbench's own blocks (`fleetbench`); the preamble all of them
//! print (`header`) and what they share (`common`). This module picks the layout.

mod common;
pub mod fleetbench;
mod header;
pub mod legacy;
pub mod pgbench;
pub mod pgbench_doc;
pub mod pgbench_live;
pub mod servers;
pub mod sysbench10;
pub mod tpcc;

pub(in crate::report) use common::DbRates;
pub use common::{banner, size_label, table_ranges};
pub use fleetbench::{
    AGENTS_LISTED, EXTREMES, agent_warnings, agents_block, agents_line, agents_status,
    agents_summary, connect_retries, connections_header, extremes, open_loop_block, rate_shortfall,
    run_line, spread, targets_block,
};
pub use header::{fileio_options, header, header_in, warmup_line};
pub use legacy::legacy_report;
pub(in crate::report) use sysbench10::{LineFigures, LineKind, sysbench_line};
pub use sysbench10::{checkpoint_report, file_operations, interval_line, sql_statistics};

use crate::merge::{MergedInterval, RunResult};
use crate::plan::{Plan, Workload};
use crate::report::style::ReportStyle;

/// The final report: workload block, General statistics, Latency, Threads fairness, then
/// the per-agent block and any warnings about lost or stopped agents.
pub fn final_report(plan: &Plan, r: &RunResult) -> String {
    final_report_in(plan, r, ReportStyle::Fleetbench)
}

/// The final report in `style`: sysbench 1.0's alone ends after "Threads fairness" (the
/// caller sends [`agent_warnings`] to stderr instead).
pub fn final_report_in(plan: &Plan, r: &RunResult, style: ReportStyle) -> String {
    match style {
        ReportStyle::Sysbench05 | ReportStyle::Sysbench04 => {
            legacy::legacy_report(plan, r, style == ReportStyle::Sysbench04)
        }
        ReportStyle::Sysbench10 => sysbench10::end_report(plan, r),
        ReportStyle::Fleetbench => {
            let mut s = sysbench10::end_report(plan, r);
            s.push_str(&fleetbench::blocks(plan, r));
            // TPC-C's figure again at the very end, for whoever reads the tail.
            if matches!(plan.workload, crate::plan::Workload::Tpcc(_)) {
                let tpmc = crate::report::tpcc::tpmc(&r.txns(), r.total_time());
                s.push_str(&tpcc::last_line(tpmc));
            }
            s
        }
    }
}

/// `--live-agents`: one agent's part of an interval, under the merged line:
/// `    agent 10.0.0.1:7600: 1234.50 events/s, 95%: 2.61 ms, host CPU 45 %` (`name`: the
/// agent as reports name it).
pub fn agent_line(
    name: &str,
    part: &crate::merge::IntervalPart,
    load: Option<&fleetbench_model::host::HostFigures>,
    percentile: f64,
) -> String {
    let rate = crate::merge::per_sec(part.events, part.duration);
    let mut s = format!(
        "    agent {name}: {rate:.2} events/s, {}%: {:.2} ms",
        crate::report::pct_label(percentile),
        part.latency.percentile_ms(percentile)
    );
    if let Some(l) = load {
        s.push_str(&format!(", host CPU {:.0} %", l.cpu_busy_pct));
        if crate::report::hosts::saturated(l) {
            s.push_str(" (saturated)");
        }
    }
    s
}

/// An interval line in `style`: sysbench 1.0's, or for 0.4/0.5 0.5's.
pub fn interval_line_in(
    iv: &MergedInterval,
    percentile: f64,
    workload: &Workload,
    style: ReportStyle,
) -> String {
    match style {
        ReportStyle::Sysbench05 | ReportStyle::Sysbench04 => {
            legacy::interval_line(iv, percentile, workload)
        }
        ReportStyle::Fleetbench | ReportStyle::Sysbench10 => {
            sysbench10::interval_line(iv, percentile, workload)
        }
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::test_support::{plan, result, tick};
    use super::*;

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
}
