//! Option values as the command line gives them: numbers, seconds, switches, rates,
//! percentiles and checkpoints, each checked against its bounds.

use std::time::Duration;

use super::model::PlanError;

/// Most events per second `--rate` may ask for over the whole run (each agent paces at
/// most `fleetbench_model::limits::MAX_RATE` of it).
pub const MAX_RATE: f64 = 100_000_000.0;

/// One `--rate` value: events per second, 0 for the closed loop.
pub fn parse_rate(s: &str) -> Result<f64, PlanError> {
    let r: f64 = s.trim().parse().map_err(|_| PlanError::Invalid {
        option: "rate",
        value: s.to_string(),
        why: "expected events per second (0 = closed loop), or a comma-separated list for a rate sweep",
    })?;
    if !r.is_finite() || r < 0.0 {
        return Err(invalid(
            "rate",
            s,
            "must be 0 or a positive number of events per second",
        ));
    }
    if r > MAX_RATE {
        return Err(invalid("rate", s, "at most 100,000,000 events per second"));
    }
    Ok(r)
}

/// `--report-checkpoints=10,20,30`: distinct positive seconds, in ascending order.
pub(super) fn checkpoints(raw: &Option<String>) -> Result<Vec<u64>, PlanError> {
    let Some(v) = raw.as_deref() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let n: u64 = part.parse().map_err(|_| {
            invalid(
                "report-checkpoints",
                v,
                "expected a comma-separated list of seconds",
            )
        })?;
        if n == 0 || n > fleetbench_model::limits::MAX_SECONDS {
            return Err(invalid(
                "report-checkpoints",
                part,
                "each must lie in 1..=31622400",
            ));
        }
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `--forced-shutdown=off|N|N%`: N seconds, or N % of --time, after the run's time.
pub(super) fn forced_shutdown(
    raw: &Option<String>,
    time: u64,
) -> Result<Option<Duration>, PlanError> {
    let Some(v) = raw.as_deref().map(str::trim) else {
        return Ok(None);
    };
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad = |why| invalid("forced-shutdown", v, why);
    let secs = match v.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| bad("expected off, N or N%"))?;
            if !(0.0..=10_000.0).contains(&p) {
                return Err(bad("a percentage from 0 to 10000"));
            }
            (time as f64 * p / 100.0).ceil() as u64
        }
        None => v.parse::<u64>().map_err(|_| bad("expected off, N or N%"))?,
    };
    if time == 0 {
        return Err(bad("needs a time limit (--time) to count from"));
    }
    if secs > fleetbench_model::limits::MAX_SECONDS {
        return Err(bad("at most 31622400 seconds (a year)"));
    }
    Ok(Some(Duration::from_secs(secs)))
}

/// A duration in seconds, at most [`fleetbench_model::limits::MAX_SECONDS`].
pub fn seconds(raw: &Option<String>, option: &'static str, default: u64) -> Result<u64, PlanError> {
    let secs: u64 = num(raw, option, default)?;
    if secs > fleetbench_model::limits::MAX_SECONDS {
        return Err(invalid(option, secs, "at most 31622400 seconds (a year)"));
    }
    Ok(secs)
}

/// sysbench's boolean spellings.
pub(super) fn flag(
    raw: &Option<String>,
    option: &'static str,
    default: bool,
) -> Result<bool, PlanError> {
    match raw.as_deref() {
        None => Ok(default),
        Some(s) => parse_flag(s).ok_or_else(|| invalid(option, s, "expected on or off")),
    }
}

pub use fleetbench_model::options::{parse_flag, parse_size};

pub(super) fn invalid(option: &'static str, value: impl ToString, why: &'static str) -> PlanError {
    PlanError::Invalid {
        option,
        value: value.to_string(),
        why,
    }
}

pub fn num<T: std::str::FromStr>(
    raw: &Option<String>,
    option: &'static str,
    default: T,
) -> Result<T, PlanError> {
    match raw {
        None => Ok(default),
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| invalid(option, s, "not a non-negative integer")),
    }
}

/// Parses `95` or `50,95,99.9`; each value must lie in (0, 100].
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, PlanError> {
    // sysbench's --percentile=0: percentiles off (the report says "disabled").
    if s.trim().parse::<f64>() == Ok(0.0) {
        return Ok(vec![0.0]);
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| invalid("percentile", s, "not a number"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(invalid(
                "percentile",
                part.trim(),
                "must lie in (0, 100]; 0 alone turns percentiles off",
            ));
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::plan;
    use std::time::Duration;

    #[test]
    fn forced_shutdown_counts_seconds_or_a_share_of_the_time() {
        let f =
            |args: &[&str]| plan(&[&["cpu"], args, &["run"]].concat()).map(|p| p.forced_shutdown);
        assert_eq!(f(&[]).unwrap(), None);
        assert_eq!(f(&["--forced-shutdown=off"]).unwrap(), None);
        assert_eq!(
            f(&["--forced-shutdown=5"]).unwrap(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            f(&["--time=60", "--forced-shutdown=10%"]).unwrap(),
            Some(Duration::from_secs(6))
        );
        for bad in ["x", "-1", "5s", "200000%", "99999999999"] {
            assert!(f(&[&format!("--forced-shutdown={bad}")]).is_err(), "{bad}");
        }
        assert!(f(&["--time=0", "--events=10", "--forced-shutdown=5"]).is_err());
    }

    #[test]
    fn checkpoints_are_sorted_seconds() {
        let c = |v: &str| {
            plan(&["cpu", &format!("--report-checkpoints={v}"), "run"]).map(|p| p.checkpoints)
        };
        assert_eq!(c("30,10,20,10").unwrap(), vec![10, 20, 30]);
        for bad in ["", "0", "x", "5,,6", "-1"] {
            assert!(c(bad).is_err(), "{bad:?}");
        }
        assert!(plan(&["cpu", "run"]).unwrap().checkpoints.is_empty());
    }
}
