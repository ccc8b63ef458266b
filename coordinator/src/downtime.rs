//! When a database target could not be reached during a run, from the merged intervals:
//! an interval in which workers failed to reconnect to a target and the target completed
//! nothing (no statement, no reconnect) is a whole interval down. A run with such time is
//! not a clean measurement: the report warns, and `--max-downtime` decides the exit code.

use std::time::Duration;

use crate::merge::{MergedInterval, RunResult};
use crate::plan::Plan;

/// One target's trouble over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Down {
    /// Index into the plan's targets.
    pub target: usize,
    /// Whole intervals down, and their time.
    pub intervals: u32,
    pub down: Duration,
    /// From the start of the first interval with failed reconnects to the end of the
    /// last one, since the measurement began.
    pub from: Duration,
    pub to: Duration,
    /// Failed attempts to reconnect over the run.
    pub reconnect_failures: u64,
}

/// Each target that had failed reconnects in any interval, by target index.
pub fn find(intervals: &[MergedInterval]) -> Vec<Down> {
    let mut out: Vec<Down> = Vec::new();
    for iv in intervals {
        let start = iv.end.saturating_sub(iv.duration);
        for (t, d) in &iv.targets {
            if d.reconnect_failures == 0 {
                continue;
            }
            let whole = d.reads == 0 && d.writes == 0 && d.others == 0 && d.reconnects == 0;
            let i = match out.binary_search_by_key(t, |x| x.target) {
                Ok(i) => i,
                Err(i) => {
                    out.insert(
                        i,
                        Down {
                            target: *t,
                            intervals: 0,
                            down: Duration::ZERO,
                            from: start,
                            to: iv.end,
                            reconnect_failures: 0,
                        },
                    );
                    i
                }
            };
            let e = &mut out[i];
            e.to = iv.end;
            e.reconnect_failures = e.reconnect_failures.saturating_add(d.reconnect_failures);
            if whole {
                e.intervals += 1;
                e.down = e.down.saturating_add(iv.duration);
            }
        }
    }
    out
}

/// A run's warnings, one line per target that could not be reached at times, and whether
/// that fails the run (see [`fails`]).
pub fn check(plan: &Plan, r: &RunResult) -> (Vec<String>, bool) {
    let targets = plan.workload.targets();
    let trouble = find(&r.intervals);
    let lines = trouble
        .iter()
        .map(|d| {
            let name = targets.get(d.target).map(|t| t.describe());
            warning(d, &name.unwrap_or_else(|| format!("#{}", d.target)))
        })
        .collect();
    let failed = trouble
        .iter()
        .any(|d| fails(d, r.total_time(), plan.max_downtime_pct));
    (lines, failed)
}

/// Whether `d` fails the run: down longer than `max_pct` percent of `run` time, or, without
/// a share given, down for any whole interval.
pub fn fails(d: &Down, run: Duration, max_pct: Option<f64>) -> bool {
    match max_pct {
        None => d.intervals > 0,
        Some(p) => d.down.as_secs_f64() > run.as_secs_f64() * p / 100.0,
    }
}

/// The warning line for `d`, naming the target as `name`.
pub fn warning(d: &Down, name: &str) -> String {
    let mut s = format!(
        "warning: target {name} could not be reached: {} failed reconnect(s) between {:.0}s and {:.0}s of the run",
        d.reconnect_failures,
        d.from.as_secs_f64(),
        d.to.as_secs_f64()
    );
    if d.intervals > 0 {
        s.push_str(&format!(
            "; down for {:.1}s ({} whole interval(s) with nothing done)",
            d.down.as_secs_f64(),
            d.intervals
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetbench_model::counters::DbCounters;

    fn iv(seq: u32, targets: Vec<(usize, DbCounters)>) -> MergedInterval {
        MergedInterval {
            seq,
            end: Duration::from_secs(u64::from(seq)),
            duration: Duration::from_secs(1),
            targets,
            ..Default::default()
        }
    }

    fn db(reads: u64, failures: u64) -> DbCounters {
        DbCounters {
            reads,
            reconnect_failures: failures,
            ..Default::default()
        }
    }

    #[test]
    fn whole_intervals_with_only_failures_are_down_time() {
        let ivs = vec![
            iv(1, vec![(0, db(100, 0)), (1, db(50, 0))]),
            iv(2, vec![(0, db(40, 3)), (1, db(50, 0))]),
            iv(3, vec![(0, db(0, 20)), (1, db(50, 0))]),
            iv(4, vec![(0, db(0, 20)), (1, db(50, 0))]),
            iv(5, vec![(0, db(10, 1)), (1, db(50, 0))]),
        ];
        let found = find(&ivs);
        assert_eq!(
            found,
            vec![Down {
                target: 0,
                intervals: 2,
                down: Duration::from_secs(2),
                from: Duration::from_secs(1),
                to: Duration::from_secs(5),
                reconnect_failures: 44,
            }]
        );
        let d = &found[0];
        assert!(fails(d, Duration::from_secs(5), None));
        assert!(fails(d, Duration::from_secs(5), Some(39.0)));
        assert!(!fails(d, Duration::from_secs(5), Some(40.0)));
        let w = warning(d, "db1 (h:3306)");
        assert!(
            w.contains("44 failed reconnect(s) between 1s and 5s"),
            "{w}"
        );
        assert!(w.contains("down for 2.0s (2 whole interval(s)"), "{w}");
    }

    #[test]
    fn a_blip_inside_an_interval_warns_but_does_not_fail() {
        let found = find(&[iv(1, vec![(0, db(100, 2))])]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].intervals, 0);
        assert!(!fails(&found[0], Duration::from_secs(1), None));
        assert!(!warning(&found[0], "t").contains("down for"));
    }

    #[test]
    fn a_clean_run_has_no_trouble() {
        assert!(find(&[iv(1, vec![(0, db(100, 0))]), iv(2, vec![])]).is_empty());
    }
}
