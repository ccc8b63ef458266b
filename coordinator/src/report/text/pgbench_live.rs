//! What `fleetbench pgbench` prints while a run goes, in pgbench's order: the `pgbench
//! (...)` banner comes first, before the lines of the run's start and every progress line
//! (it needs the server's version, which the agents' Ready brings, so the lines before
//! the run wait for it: [`Early`]), and which intervals have a `-P` line (every full
//! period, the run's last one included, as pgbench prints them).

use crate::merge::MergedInterval;
use crate::plan::pgbench::PgbenchArgs;

use super::pgbench::{Figures, RunFacts, run_report};

/// The banner line, "pgbench (fleetbench 0.1.0, PostgreSQL 15.8 ...)": the first line of
/// pgbench's report as [`run_report`] writes it, so the two never differ.
pub fn banner(args: &PgbenchArgs, facts: &RunFacts) -> String {
    let report = run_report(args, facts, &Figures::default());
    report.lines().next().unwrap_or_default().to_string()
}

/// [`run_report`]'s text without its first line, the banner (printed when the run began).
pub fn without_banner(report: &str) -> &str {
    report.split_once('\n').map_or("", |(_, rest)| rest)
}

/// Whether interval `iv` of a run of `args` has a `-P` line. pgbench prints one at the end
/// of each full period: every tick, and the run's last interval when it is a whole period
/// that ends by `-T`'s end (a `-T` that is a multiple of `-P` ends on a period, which the
/// agents send as the run's last interval). A last interval cut short (`-t`, a `-T` between
/// periods, clients that all aborted) has none, as in pgbench.
pub fn shows_progress(args: &PgbenchArgs, iv: &MergedInterval) -> bool {
    let Some(period) = args.progress else {
        return false;
    };
    if !iv.last {
        return true;
    }
    let Some(time) = args.duration else {
        return false;
    };
    // A few milliseconds either way: the last period ends when the clients have stopped.
    let whole = iv.duration.as_secs_f64() >= period as f64 * 0.9;
    whole && u64::from(iv.seq) * period <= time
}

/// The lines pgbench prints between its banner and the run (the scale note, "starting
/// vacuum...end."), held until the banner is out so that they follow it, as in pgbench.
#[derive(Debug, Default)]
pub struct Early {
    lines: Vec<String>,
    /// Printed already: later lines go out at once.
    flushed: bool,
}

impl Early {
    /// A line for stderr: printed now once the banner is out, else held.
    pub fn line(&mut self, text: impl Into<String>) {
        let text = text.into();
        if self.flushed {
            eprintln!("{text}");
        } else {
            self.lines.push(text);
        }
    }

    /// Prints what is held (after the banner, or before an error ends the run without one).
    pub fn flush(&mut self) {
        for l in self.lines.drain(..) {
            eprintln!("{l}");
        }
        self.flushed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn args(line: &str) -> PgbenchArgs {
        let v: Vec<String> = line.split_whitespace().map(String::from).collect();
        crate::plan::pgbench::parse(&v, &|k| (k == "USER").then(|| "me".to_string())).unwrap()
    }

    fn facts() -> RunFacts {
        RunFacts {
            server_version: "PostgreSQL 15.8".into(),
            scale: 1,
            conn_time: Duration::from_millis(3),
        }
    }

    #[test]
    fn the_banner_is_the_report_s_first_line() {
        for line in [
            "-c 2 -T 5",
            "-b select-only@2 -N -t 3 -r",
            "-R 10 -L 2 -T 1",
        ] {
            let a = args(line);
            let f = Figures {
                processed: 10,
                secs: 1.0,
                scripts: vec![Default::default(); a.scripts.len()],
                ..Figures::default()
            };
            let report = run_report(&a, &facts(), &f);
            let b = banner(&a, &facts());
            assert_eq!(
                b,
                format!(
                    "pgbench (fleetbench {}, PostgreSQL 15.8)",
                    env!("CARGO_PKG_VERSION")
                )
            );
            assert_eq!(format!("{b}\n{}", without_banner(&report)), report);
            assert!(without_banner(&report).starts_with("transaction type: "));
        }
    }

    fn interval(seq: u32, ms: u64, last: bool) -> MergedInterval {
        MergedInterval {
            seq,
            end: Duration::from_millis(u64::from(seq - 1) * 1000 + ms),
            duration: Duration::from_millis(ms),
            last,
            ..MergedInterval::default()
        }
    }

    #[test]
    fn every_full_period_has_a_progress_line_the_last_one_too() {
        // -T 3 -P 1: ticks 1 and 2, then the third period as the run's last interval.
        let a = args("-T 3 -P 1");
        assert!(shows_progress(&a, &interval(1, 1000, false)));
        assert!(shows_progress(&a, &interval(2, 1000, false)));
        assert!(shows_progress(&a, &interval(3, 1002, true)));
        assert!(shows_progress(&a, &interval(3, 997, true)));
        // -T 5 -P 2: 2 and 4; the last second is no period.
        let a = args("-T 5 -P 2");
        assert!(!shows_progress(&a, &interval(3, 1000, true)));
        // Clients that all aborted half way through a period.
        let a = args("-T 10 -P 1");
        assert!(!shows_progress(&a, &interval(4, 300, true)));
        // -t: the run ends between periods.
        let a = args("-t 100 -P 1");
        assert!(shows_progress(&a, &interval(1, 1000, false)));
        assert!(!shows_progress(&a, &interval(2, 990, true)));
        // No -P, no line.
        assert!(!shows_progress(&args("-T 3"), &interval(1, 1000, false)));
    }

    #[test]
    fn early_lines_wait_for_the_banner() {
        let mut e = Early::default();
        e.line("starting vacuum...end.");
        assert_eq!(e.lines, ["starting vacuum...end."]);
        e.flush();
        assert!(e.lines.is_empty() && e.flushed);
    }
}
