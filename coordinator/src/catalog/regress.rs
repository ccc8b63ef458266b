//! Regressions: whether a run's figures moved beyond the noise of the earlier runs of the
//! same comparison key. The baseline is the last [`BASELINE_RUNS`] complete runs (from
//! [`MIN_RUNS`] on); its centre is their median and its noise band three robust standard
//! deviations (1.4826 x the median absolute deviation), at least a floor in percent of the
//! median ([`floor_pct`]: latencies wobble more than rates between short runs). Median and MAD are not moved by one odd run among the baseline, need no
//! assumption about the figures' distribution and work from three runs, where a mean and a
//! standard deviation (or a change-point method) need more. Pure, beside its tests.

/// At most this many earlier runs make a baseline.
pub const BASELINE_RUNS: usize = 10;
/// Fewer earlier runs than this: no verdict.
pub const MIN_RUNS: usize = 3;
/// The narrowest noise band of figure `name`, in percent of the median: runs closer than
/// this to each other are not told apart (a machine's own noise). A rate or a server's
/// cost 5 %, a latency 10 % (a percentile of a short run rests on few samples).
pub fn floor_pct(name: &str) -> f64 {
    if name.contains("latency") { 10.0 } else { 5.0 }
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// Which way figure `name` of a record is better: the rate higher, every latency and
/// cost lower.
pub fn better(name: &str) -> Better {
    if name == "tps" {
        Better::Higher
    } else {
        Better::Lower
    }
}

/// A figure that left its baseline's band.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub figure: String,
    pub value: f64,
    pub median: f64,
    /// The band's half-width, in percent of the median.
    pub noise_pct: f64,
    /// (value - median) / median, in percent.
    pub change_pct: f64,
    /// The run is worse on this figure (a regression), not better.
    pub worse: bool,
    /// How many earlier runs made the baseline.
    pub runs: usize,
}

/// The median and the band's half-width (absolute) of `values`, at least `floor_pct` % of
/// the median; None for fewer than [`MIN_RUNS`] values.
pub fn band(values: &[f64], floor_pct: f64) -> Option<(f64, f64)> {
    if values.len() < MIN_RUNS {
        return None;
    }
    let m = median(values);
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let sigma = 1.4826 * median(&deviations);
    Some((m, (3.0 * sigma).max(m.abs() * floor_pct / 100.0)))
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The figures of `current` that left the band of the same figure over `history` (each
/// earlier run's figures, newest first; only the first [`BASELINE_RUNS`] count).
pub fn check(
    current: &[(String, f64, Better)],
    history: &[std::collections::BTreeMap<String, f64>],
) -> Vec<Moved> {
    let history = &history[..history.len().min(BASELINE_RUNS)];
    current
        .iter()
        .filter_map(|(name, value, better)| {
            let past: Vec<f64> = history
                .iter()
                .filter_map(|h| h.get(name).copied())
                .collect();
            let (m, half) = band(&past, floor_pct(name))?;
            if (value - m).abs() <= half || m == 0.0 {
                return None;
            }
            let worse = match better {
                Better::Higher => *value < m,
                Better::Lower => *value > m,
            };
            Some(Moved {
                figure: name.clone(),
                value: *value,
                median: m,
                noise_pct: half / m.abs() * 100.0,
                change_pct: (value - m) / m.abs() * 100.0,
                worse,
                runs: past.len(),
            })
        })
        .collect()
}

/// Indexes of the change points of a series (oldest first): where a value leaves the band
/// of the [`BASELINE_RUNS`] values before it (from [`MIN_RUNS`] on), the same test as
/// [`check`] applied along the series of figure `name`, and the value after it (if any)
/// stays out on the same side: one run off the band and back is noise, not a change. After
/// a change the baseline starts again there.
pub fn change_points(name: &str, series: &[f64]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..series.len() {
        let from = start.max(i.saturating_sub(BASELINE_RUNS));
        let Some((m, half)) = band(&series[from..i], floor_pct(name)) else {
            continue;
        };
        let side = |v: f64| {
            if (v - m).abs() <= half {
                0.0
            } else {
                (v - m).signum()
            }
        };
        let here = side(series[i]);
        let stays = series.get(i + 1).is_none_or(|&next| side(next) == here);
        if here != 0.0 && stays {
            out.push(i);
            start = i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn runs(tps: &[f64]) -> Vec<BTreeMap<String, f64>> {
        tps.iter()
            .map(|t| [("tps".to_string(), *t)].into())
            .collect()
    }

    #[test]
    fn half_the_throughput_of_five_steady_runs_is_a_regression() {
        let history = runs(&[1010.0, 990.0, 1000.0, 1005.0, 995.0]);
        let moved = check(&[("tps".into(), 500.0, Better::Higher)], &history);
        assert_eq!(moved.len(), 1);
        let m = &moved[0];
        assert!(m.worse && m.runs == 5, "{m:?}");
        assert_eq!(m.median, 1000.0);
        assert!((m.change_pct + 50.0).abs() < 1e-9, "{m:?}");
        // Within the noise: nothing to say; better: said, not as a regression.
        assert!(check(&[("tps".into(), 1012.0, Better::Higher)], &history).is_empty());
        let better = check(&[("tps".into(), 1500.0, Better::Higher)], &history);
        assert!(!better[0].worse);
        // A latency that grew is worse.
        let lat = check(&[("tps".into(), 1500.0, Better::Lower)], &history);
        assert!(lat[0].worse);
    }

    #[test]
    fn the_band_follows_the_noise_and_ignores_one_odd_run() {
        // Noisy runs (about ±10 %): a 12 % drop is within the noise.
        let noisy = runs(&[900.0, 1100.0, 1000.0, 950.0, 1050.0]);
        assert!(check(&[("tps".into(), 880.0, Better::Higher)], &noisy).is_empty());
        // One odd run among steady ones does not widen the band.
        let odd = runs(&[1000.0, 1001.0, 999.0, 400.0, 1000.0]);
        assert_eq!(
            check(&[("tps".into(), 900.0, Better::Higher)], &odd).len(),
            1
        );
        // Identical runs: the floor keeps a 4 % wobble quiet.
        let same = runs(&[1000.0; 4]);
        assert!(check(&[("tps".into(), 960.0, Better::Higher)], &same).is_empty());
        // Two runs are not a baseline; figures the history lacks are skipped.
        assert!(check(&[("tps".into(), 1.0, Better::Higher)], &runs(&[5.0, 5.0])).is_empty());
        assert!(check(&[("p95".into(), 1.0, Better::Lower)], &same).is_empty());
    }

    #[test]
    fn change_points_mark_where_a_series_leaves_its_band() {
        let s = [100.0, 101.0, 99.0, 100.0, 50.0, 51.0, 49.0, 50.0, 50.0];
        assert_eq!(change_points("tps", &s), [4]);
        assert!(change_points("tps", &[1.0, 1.0, 1.0, 1.04]).is_empty());
        // One run above the band, then the fall: the change is the fall.
        let blip = [394.0, 398.0, 407.0, 394.0, 417.0, 222.0, 203.0];
        assert_eq!(change_points("tps", &blip), [5]);
        assert!(change_points("tps", &[400.0, 400.0, 400.0, 500.0, 400.0]).is_empty());
        assert!(change_points("tps", &[]).is_empty());
        // A latency's floor is wider: 8 % is its noise, 30 % is not.
        assert!(change_points("p95 latency", &[1.0, 1.0, 1.0, 1.08]).is_empty());
        assert_eq!(change_points("p95 latency", &[1.0, 1.0, 1.0, 1.3]), [3]);
    }
}
