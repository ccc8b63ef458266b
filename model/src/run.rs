//! A run's own options (how many threads, how long, how many events, how fast, what the
//! report shows), declared once as the workloads' options are: the command line's names,
//! sysbench 0.4/0.5's spellings and the defaults ([`RUN_OPTIONS`]), the names a script
//! sees in `sysbench.opt` ([`script_name`]), and the limits one agent's Start carries
//! ([`RunLimits`], written and read by the same pair of functions on both sides).

use std::time::Duration;

use fleetbench_proto::v1 as pb;

use crate::limits;
use crate::options::{Kind, OptionDef};

const fn run_option(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    help: &'static str,
    aliases: &'static [&'static str],
) -> OptionDef {
    OptionDef {
        name,
        default,
        kind,
        help,
        aliases,
    }
}

/// The run's options, in the order sysbench 1.0 lists them; the aliases are sysbench
/// 0.4/0.5's names, which `sysbench.opt` also shows.
pub const RUN_OPTIONS: &[OptionDef] = &[
    run_option(
        "threads",
        Kind::Count,
        "1",
        "number of threads to use",
        &["num-threads"],
    ),
    run_option(
        "time",
        Kind::Count,
        "10",
        "limit for total execution time in seconds",
        &["max-time"],
    ),
    run_option(
        "events",
        Kind::Count,
        "0",
        "limit for total number of events",
        &["max-requests"],
    ),
    run_option(
        "rate",
        Kind::Float,
        "0",
        "average transactions rate; 0 for an unlimited rate",
        &["tx-rate"],
    ),
    run_option(
        "report-interval",
        Kind::Count,
        "0",
        "periodically report intermediate statistics with a specified interval in seconds",
        &[],
    ),
    run_option(
        "percentile",
        Kind::Text,
        "95",
        "percentile to calculate in latency statistics (1-100); 0 to disable",
        &[],
    ),
    run_option(
        "rand-seed",
        Kind::Count,
        "0",
        "seed for the random number generators; 0 to use the current time",
        &[],
    ),
    run_option(
        "warmup-time",
        Kind::Count,
        "0",
        "execute events for this many seconds with statistics disabled before the actual benchmark run",
        &[],
    ),
];

/// The declaration of run option `name`.
///
/// # Panics
/// If `name` is not one of [`RUN_OPTIONS`] (a programming error).
pub fn option(name: &str) -> &'static OptionDef {
    RUN_OPTIONS
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("'{name}' is not a run option"))
}

/// The default of run option `name`, as the user would write it.
pub fn default_of(name: &str) -> &'static str {
    option(name).default
}

/// The default of numeric run option `name`.
pub fn default_number(name: &str) -> u64 {
    default_of(name)
        .parse()
        .unwrap_or_else(|_| panic!("run option '{name}' has no numeric default"))
}

/// The name `sysbench.opt` gives an option of the command line: dashes as underscores.
pub fn script_name(name: &str) -> String {
    name.replace('-', "_")
}

/// One agent's limits and pace for a run, as its Start carries them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLimits {
    /// `--time`; None: only the event limit ends the run.
    pub time: Option<Duration>,
    /// This agent's share of `--events`; None: unlimited.
    pub events: Option<u64>,
    /// The interval of the figures the agent streams (`--report-interval`, or the
    /// coordinator's own tick).
    pub tick: Duration,
    /// This agent's share of `--rate`, events per second; None: the closed loop.
    pub rate: Option<f64>,
    /// `--warmup-time`.
    pub warmup: Duration,
}

impl RunLimits {
    /// Writes the limits into `start`.
    pub fn to_start(&self, start: &mut pb::Start) {
        start.time_limit_ms = self.time.map_or(0, |t| t.as_millis() as u64);
        start.event_limit = self.events.unwrap_or(0);
        start.tick_ms = self.tick.as_millis() as u64;
        start.rate = self.rate.unwrap_or(0.0);
        start.warmup_ms = self.warmup.as_millis() as u64;
    }

    /// Reads the limits of `start`, each checked against what an agent takes (seconds
    /// within [`limits::MAX_SECONDS`], a rate within [`limits::MAX_RATE`]); the error
    /// names the option. The interval is at least 10 ms.
    pub fn from_start(start: &pb::Start) -> Result<RunLimits, String> {
        limits::check_seconds("the time limit", start.time_limit_ms / 1000)?;
        limits::check_seconds("the warm-up", start.warmup_ms / 1000)?;
        limits::check_seconds("the report interval", start.tick_ms / 1000)?;
        if !(start.rate.is_finite() && (0.0..=limits::MAX_RATE).contains(&start.rate)) {
            return Err(format!(
                "an agent paces at most {} events per second, not {} (spread the rate over more agents)",
                limits::MAX_RATE,
                start.rate
            ));
        }
        Ok(RunLimits {
            time: (start.time_limit_ms > 0).then(|| Duration::from_millis(start.time_limit_ms)),
            events: (start.event_limit > 0).then_some(start.event_limit),
            tick: Duration::from_millis(start.tick_ms.max(10)),
            rate: (start.rate > 0.0).then_some(start.rate),
            warmup: Duration::from_millis(start.warmup_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_travel_to_the_agent_and_back_unchanged() {
        let cases = [
            RunLimits {
                time: Some(Duration::from_secs(30)),
                events: None,
                tick: Duration::from_secs(1),
                rate: Some(1234.5),
                warmup: Duration::from_secs(5),
            },
            RunLimits {
                time: None,
                events: Some(10_000),
                tick: Duration::from_millis(250),
                rate: None,
                warmup: Duration::ZERO,
            },
        ];
        for limits in cases {
            let mut start = pb::Start::default();
            limits.to_start(&mut start);
            assert_eq!(RunLimits::from_start(&start), Ok(limits));
        }
    }

    #[test]
    fn limits_beyond_an_agents_reach_are_refused_with_their_name() {
        let start = pb::Start {
            rate: f64::NAN,
            ..Default::default()
        };
        assert!(
            RunLimits::from_start(&start)
                .unwrap_err()
                .contains("events per second")
        );
        let start = pb::Start {
            warmup_ms: u64::MAX,
            ..Default::default()
        };
        assert!(
            RunLimits::from_start(&start)
                .unwrap_err()
                .contains("warm-up")
        );
    }

    #[test]
    fn every_run_option_has_a_default_of_its_kind() {
        for o in RUN_OPTIONS {
            match o.kind {
                Kind::Count => assert!(o.default.parse::<u64>().is_ok(), "{}", o.name),
                Kind::Float => assert!(o.default.parse::<f64>().is_ok(), "{}", o.name),
                _ => assert!(!o.default.is_empty(), "{}", o.name),
            }
        }
        assert_eq!(default_number("time"), 10);
        assert_eq!(script_name("warmup-time"), "warmup_time");
    }
}
