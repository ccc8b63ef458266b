//! Progress on stderr. A run's start: how many connections the agents have opened, as
//! `opening connections: 2500/4000`, a bar that redraws in place on a terminal, otherwise
//! (logs, CI, pipes) a plain line at most once a second and when all are open. Where
//! stderr is no terminal, also a plain line every 10 s of a long table job (a prepare's
//! rows, a cleanup's tables: `prepare: 1,200,000/4,000,000 rows (30 %) after 10s, ...`)
//! and of a run without interval lines (`progress: 20s of 60s, 1234.56 events/s`), where
//! a terminal gets a bar or nothing: a load logged to a file shows that it moves.
//! `FLEETBENCH_PROGRESS_EVERY_S` sets that period (tests use 1 s).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::report::format::age;
use fleetbench_model::limits::grouped;

/// The environment variable that sets the period of the plain lines, in seconds.
pub const EVERY_ENV: &str = "FLEETBENCH_PROGRESS_EVERY_S";

/// The plain lines' period without [`EVERY_ENV`].
const EVERY: Duration = Duration::from_secs(10);

/// How often the plain progress lines come: None where stderr is a terminal (its bars
/// redraw in place), else every 10 s or [`EVERY_ENV`]'s seconds.
pub fn plain_every() -> Option<Duration> {
    if std::io::stderr().is_terminal() {
        return None;
    }
    Some(period(std::env::var(EVERY_ENV).ok().as_deref()))
}

/// [`EVERY_ENV`]'s value as a period: a positive number of seconds, else 10 s.
fn period(v: Option<&str>) -> Duration {
    v.and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(EVERY, Duration::from_secs_f64)
}

/// What a table job's progress counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Rows loaded (a prepare): with their rate and the time left.
    Rows,
    /// Bytes written (fileio's prepare): in MiB, with their rate and the time left.
    Bytes,
    /// Tables, files or steps done, so named.
    Count(&'static str),
}

/// One plain line of a table job `what` (`prepare`) after `elapsed`: done of total in
/// `unit`, the share done and, for rows and bytes, the rate and the time left.
pub fn job_line(what: &str, unit: Unit, done: u64, total: u64, elapsed: Duration) -> String {
    let pct = if total == 0 {
        0.0
    } else {
        100.0 * done as f64 / total as f64
    };
    let after = age(elapsed.as_secs());
    let secs = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let left = |rate: f64| {
        if rate > 0.0 && total > done {
            format!(
                ", eta {}",
                age(((total - done) as f64 / rate).ceil() as u64)
            )
        } else {
            String::new()
        }
    };
    match unit {
        Unit::Rows => {
            let rate = done as f64 / secs;
            format!(
                "{what}: {}/{} rows ({pct:.0} %) after {after}, {} rows/s{}",
                grouped(done),
                grouped(total),
                grouped(rate.round() as u64),
                left(rate)
            )
        }
        Unit::Bytes => {
            let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
            let rate = done as f64 / secs;
            format!(
                "{what}: {:.1}/{:.1} MiB ({pct:.0} %) after {after}, {:.1} MiB/s{}",
                mib(done),
                mib(total),
                rate / f64::from(1u32 << 20),
                left(rate)
            )
        }
        Unit::Count(noun) => format!("{what}: {done}/{total} {noun} ({pct:.0} %) after {after}"),
    }
}

/// A table job's plain progress lines on stderr, one every period.
pub struct JobLines {
    what: String,
    unit: Unit,
    every: Duration,
    started: Instant,
    next: Instant,
}

impl JobLines {
    /// Lines of job `what` in `unit`; None where stderr is a terminal ([`plain_every`]).
    pub fn new(what: &str, unit: Unit) -> Option<JobLines> {
        let every = plain_every()?;
        let started = Instant::now();
        Some(JobLines {
            what: what.to_string(),
            unit,
            every,
            started,
            next: started + every,
        })
    }

    /// The job's progress now: a line when one is due.
    pub fn update(&mut self, done: u64, total: u64) {
        let now = Instant::now();
        if now >= self.next && total > 0 {
            eprintln!(
                "{}",
                job_line(&self.what, self.unit, done, total, now - self.started)
            );
            self.next = now + self.every;
        }
    }
}

/// A run's plain progress line at `secs` measured seconds of `of` (0: no time limit),
/// with the last interval's rate: `progress: 20s of 60s, 1234.56 events/s`.
pub fn run_line(secs: u64, of: u64, events_per_sec: f64) -> String {
    let of = if of > 0 {
        format!(" of {}", age(of))
    } else {
        String::new()
    };
    format!("progress: {}{of}, {events_per_sec:.2} events/s", age(secs))
}

/// When a run's plain progress lines are due, by its measured seconds.
pub struct RunLines {
    every: u64,
    next: u64,
    /// The run's time limit in seconds (0: none): no line at or past its end.
    time: u64,
}

impl RunLines {
    /// Lines every period of a run `time` seconds long (0: unlimited); None where stderr is
    /// a terminal.
    pub fn new(time: u64) -> Option<RunLines> {
        Some(Self::every(plain_every()?, time))
    }

    fn every(every: Duration, time: u64) -> RunLines {
        let every = every.as_secs().max(1);
        RunLines {
            every,
            next: every,
            time,
        }
    }

    /// The line to print after the interval ending at `secs`, if one is due.
    pub fn at(&mut self, secs: u64, events_per_sec: f64) -> Option<String> {
        if secs < self.next || (self.time > 0 && secs >= self.time) {
            return None;
        }
        self.next = (secs / self.every + 1) * self.every;
        Some(run_line(secs, self.time, events_per_sec))
    }
}

/// The text of one progress line.
pub fn opening_line(done: u64, total: u64) -> String {
    format!("opening connections: {done}/{total}")
}

/// Shows connection-opening progress; clears its bar when dropped.
pub struct Opening {
    bar: Option<indicatif::ProgressBar>,
    last_line: Option<Instant>,
}

impl Default for Opening {
    fn default() -> Self {
        Self::new()
    }
}

impl Opening {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "opening connections: {pos}/{len} {bar:30}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Opening {
            bar,
            last_line: None,
        }
    }

    pub fn update(&mut self, done: u64, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(done);
            return;
        }
        let due = self
            .last_line
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if due || done >= total {
            eprintln!("{}", opening_line(done, total));
            self.last_line = Some(Instant::now());
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_says_open_of_total() {
        assert_eq!(opening_line(2500, 4000), "opening connections: 2500/4000");
    }

    #[test]
    fn the_period_is_ten_seconds_unless_the_environment_gives_a_positive_one() {
        assert_eq!(period(None), Duration::from_secs(10));
        assert_eq!(period(Some("1")), Duration::from_secs(1));
        assert_eq!(period(Some("0.5")), Duration::from_millis(500));
        for bad in ["0", "-3", "x", "", "inf"] {
            assert_eq!(period(Some(bad)), Duration::from_secs(10), "{bad}");
        }
    }

    #[test]
    fn job_lines_say_done_of_total_with_the_rate_and_time_left() {
        let ten = Duration::from_secs(10);
        assert_eq!(
            job_line("prepare", Unit::Rows, 1_200_000, 4_000_000, ten),
            "prepare: 1,200,000/4,000,000 rows (30 %) after 10s, 120,000 rows/s, eta 24s"
        );
        assert_eq!(
            job_line("prepare", Unit::Bytes, 512 << 20, 2048 << 20, ten),
            "prepare: 512.0/2048.0 MiB (25 %) after 10s, 51.2 MiB/s, eta 30s"
        );
        assert_eq!(
            job_line(
                "cleanup",
                Unit::Count("tables"),
                3,
                10,
                Duration::from_secs(75)
            ),
            "cleanup: 3/10 tables (30 %) after 1m15s"
        );
        // Nothing done yet: no rate to tell the time left by.
        assert_eq!(
            job_line("prepare", Unit::Rows, 0, 100, ten),
            "prepare: 0/100 rows (0 %) after 10s, 0 rows/s"
        );
    }

    #[test]
    fn run_lines_come_every_period_and_not_at_the_end() {
        let mut r = RunLines::every(Duration::from_secs(10), 30);
        let said: Vec<(u64, String)> = (1..=30)
            .filter_map(|s| Some((s, r.at(s, 1234.5)?)))
            .collect();
        assert_eq!(
            said,
            [
                (10, "progress: 10s of 30s, 1234.50 events/s".to_string()),
                (20, "progress: 20s of 30s, 1234.50 events/s".to_string())
            ]
        );
        // Ticks of 3 s: the first at or past each period; no time limit, no end.
        let mut r = RunLines::every(Duration::from_secs(10), 0);
        let at: Vec<u64> = (1..=10)
            .map(|i| i * 3)
            .filter(|&s| r.at(s, 1.0).is_some())
            .collect();
        assert_eq!(at, [12, 21, 30]);
        assert_eq!(run_line(5, 0, 2.0), "progress: 5s, 2.00 events/s");
    }
}
