//! Noise for `compare`: the mean of a figure with its 95 % confidence interval, from repeated
//! measurements or from one run's per-interval series, and whether a change between two
//! such estimates stands out from the noise.

/// Where an estimate's spread comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Separate measurements (`--repeat`): this many.
    Repeats(usize),
    /// One run's interval series, grouped into this many batches.
    Intervals(usize),
    /// Nothing to estimate a spread from (one measurement, too few intervals).
    None,
}

impl Spread {
    pub fn describe(&self) -> String {
        match self {
            Spread::Repeats(n) => format!("{n} repeats"),
            Spread::Intervals(n) => format!("the interval series ({n} batches)"),
            Spread::None => "no spread (one measurement, too few intervals)".into(),
        }
    }
}

/// A figure's estimate: the value, and the standard error of the mean with its degrees of
/// freedom when a spread is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// Standard error of `mean`, with degrees of freedom.
    pub se: Option<(f64, f64)>,
}

impl Estimate {
    /// Half the width of the 95 % confidence interval.
    pub fn half_width(&self) -> Option<f64> {
        self.se.map(|(se, df)| t975(df) * se)
    }
}

/// The 97.5 % quantile of Student's t distribution with `df` degrees of freedom (two-sided
/// 95 %): the table up to 30, then an approximation within 0.1 % of the exact values.
pub fn t975(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if !df.is_finite() || df > 30.0 {
        return 1.96 + 2.5 / df.max(30.0);
    }
    // Degrees of freedom below 1 (Welch with a near-zero spread) are treated as 1.
    TABLE[(df.floor() as usize).clamp(1, 30) - 1]
}

/// Mean and sample standard deviation of `v` (None for fewer than two values).
fn mean_sd(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n.max(1.0);
    if v.len() < 2 {
        return (mean, None);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Some(var.sqrt()))
}

/// The estimate from repeated measurements: their mean and its standard error.
pub fn from_repeats(v: &[f64]) -> Estimate {
    let (mean, sd) = mean_sd(v);
    Estimate {
        mean,
        se: sd.map(|sd| (sd / (v.len() as f64).sqrt(), v.len() as f64 - 1.0)),
    }
}

/// Batches a run's interval series is grouped into: neighbouring intervals are correlated
/// (a slow second follows a slow second), batch means much less so.
pub const BATCHES: usize = 10;

/// The spread of one run from its interval values (rates or percentiles per interval), by
/// batch means, centred on the run's own figure `value`. None below four intervals.
pub fn from_intervals(value: f64, series: &[f64]) -> (Estimate, Spread) {
    if series.len() < 4 {
        return (
            Estimate {
                mean: value,
                se: None,
            },
            Spread::None,
        );
    }
    let batches = BATCHES.min(series.len());
    let means: Vec<f64> = (0..batches)
        .map(|b| {
            let (lo, hi) = (b * series.len() / batches, (b + 1) * series.len() / batches);
            let part = &series[lo..hi];
            part.iter().sum::<f64>() / part.len() as f64
        })
        .collect();
    let (_, sd) = mean_sd(&means);
    let se = sd.map(|sd| (sd / (batches as f64).sqrt(), batches as f64 - 1.0));
    (Estimate { mean: value, se }, Spread::Intervals(batches))
}

/// The change from `a` to `b`: the difference of the means with the half-width of its 95 %
/// confidence interval (Welch), None when neither side has a spread.
pub fn difference(a: &Estimate, b: &Estimate) -> (f64, Option<f64>) {
    let d = b.mean - a.mean;
    let hw = match (a.se, b.se) {
        (Some((sa, na)), Some((sb, nb))) => {
            let (va, vb) = (sa * sa, sb * sb);
            let se = (va + vb).sqrt();
            // Welch–Satterthwaite degrees of freedom.
            let df = if va + vb > 0.0 {
                (va + vb).powi(2) / (va * va / na.max(1.0) + vb * vb / nb.max(1.0))
            } else {
                na + nb
            };
            Some(t975(df) * se)
        }
        // One side without a spread: the other's stands for both.
        (Some((s, n)), None) | (None, Some((s, n))) => Some(t975(n) * s * 2f64.sqrt()),
        (None, None) => None,
    };
    (d, hw)
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// The verdict on a change: better, worse, within noise, or unknown without a spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    Noise,
    Unknown,
}

impl Verdict {
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "within noise",
            Verdict::Unknown => "no spread",
        }
    }
}

/// Better or worse when the confidence interval of the difference excludes zero.
pub fn verdict(diff: f64, half_width: Option<f64>, better: Better) -> Verdict {
    let Some(hw) = half_width else {
        return Verdict::Unknown;
    };
    if diff.abs() <= hw || !diff.is_finite() {
        return Verdict::Noise;
    }
    match (diff > 0.0, better) {
        (true, Better::Higher) | (false, Better::Lower) => Verdict::Better,
        _ => Verdict::Worse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1.0), 12.706);
        assert_eq!(t975(2.5), 4.303);
        assert_eq!(t975(30.0), 2.042);
        assert!((t975(60.0) - 2.000).abs() < 0.003);
        assert!((t975(120.0) - 1.980).abs() < 0.003);
        assert!((t975(f64::INFINITY) - 1.96).abs() < 0.09);
        assert_eq!(t975(0.2), 12.706);
    }

    #[test]
    fn repeats_give_mean_and_standard_error() {
        let e = from_repeats(&[10.0, 12.0, 14.0]);
        assert_eq!(e.mean, 12.0);
        let (se, df) = e.se.unwrap();
        assert!((se - 2.0 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(df, 2.0);
        assert!((e.half_width().unwrap() - 4.303 * se).abs() < 1e-12);
        assert_eq!(from_repeats(&[5.0]).se, None);
    }

    #[test]
    fn interval_batches() {
        let flat = vec![100.0; 20];
        let (e, s) = from_intervals(100.0, &flat);
        assert_eq!(s, Spread::Intervals(10));
        assert_eq!(e.se.unwrap().0, 0.0);
        let (e, s) = from_intervals(7.0, &[1.0, 2.0, 3.0]);
        assert_eq!((e.mean, e.se, s), (7.0, None, Spread::None));
        // Alternating values average out within each batch of two.
        let alt: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 90.0 } else { 110.0 })
            .collect();
        assert_eq!(from_intervals(100.0, &alt).0.se.unwrap().0, 0.0);
    }

    #[test]
    fn verdicts_follow_the_interval_and_the_direction() {
        let a = from_repeats(&[100.0, 101.0, 99.0]);
        let same = from_repeats(&[100.5, 99.5, 100.0]);
        let (d, hw) = difference(&a, &same);
        assert_eq!(verdict(d, hw, Better::Higher), Verdict::Noise);
        let up = from_repeats(&[130.0, 131.0, 129.0]);
        let (d, hw) = difference(&a, &up);
        assert_eq!(d, 30.0);
        assert_eq!(verdict(d, hw, Better::Higher), Verdict::Better);
        assert_eq!(verdict(d, hw, Better::Lower), Verdict::Worse);
        let lone = Estimate {
            mean: 1.0,
            se: None,
        };
        let (d, hw) = difference(&lone, &lone);
        assert_eq!(verdict(d, hw, Better::Higher), Verdict::Unknown);
    }
}
