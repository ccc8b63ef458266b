//! A chart's axes: the range its values span (linear from zero, or logarithmic by
//! decades) and round tick values, whole numbers for thread counts.

/// About `n` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of 10).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    ticks_from(lo, hi, n, 0.0)
}

/// Like [`ticks`], with steps of at least `min_step` (1 gives whole numbers only).
pub(super) fn ticks_from(lo: f64, hi: f64, n: usize, min_step: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .max(min_step);
    let mut out = Vec::new();
    let mut k = (lo / step).ceil();
    // Multiples of the step, computed afresh each time so that no rounding error builds up.
    while k * step <= hi + step * 1e-9 {
        let v = k * step;
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        k += 1.0;
    }
    out
}

/// Tick positions of a thread-count axis: the measured counts when there are few of them
/// and they are at least 36 px apart, else round integer ticks.
pub fn integer_ticks(xs: &[f64], lo: f64, hi: f64, px_per_unit: f64) -> Vec<f64> {
    let mut v: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && x.fract() == 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let readable = v.windows(2).all(|w| (w[1] - w[0]) * px_per_unit >= 36.0);
    if !v.is_empty() && v.len() <= 16 && readable {
        return v;
    }
    ticks_from(lo, hi, 8, 1.0)
        .into_iter()
        .filter(|t| t.fract() == 0.0)
        .collect()
}

/// The value range a chart's axis spans: from 0 (or the minimum, for x) to a round top.
pub(super) fn span(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (0.0, 1.0);
    }
    let mut lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if from_zero {
        lo = lo.min(0.0);
        hi *= 1.05;
    }
    if hi <= lo {
        // A single value (one step, one interval): put it in the middle.
        if from_zero {
            hi = lo + 1.0;
        } else {
            (lo, hi) = (lo - 1.0, hi + 1.0);
        }
    }
    (lo, hi)
}

/// The range and ticks of a logarithmic axis: whole decades around the positive values
/// (at least 0.001, the histograms' resolution in ms), with 2 and 5 in between when the
/// range spans at most two decades.
pub(super) fn log_span(values: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
    let v: Vec<f64> = values.filter(|x| x.is_finite() && *x > 0.0).collect();
    let (lo, hi) = if v.is_empty() {
        (1.0, 10.0)
    } else {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min).max(0.001);
        (lo, v.iter().copied().fold(lo, f64::max))
    };
    let d0 = lo.log10().floor();
    let d1 = hi.log10().ceil().max(d0 + 1.0);
    let mut out = Vec::new();
    let mut d = d0;
    while d <= d1 {
        // 1 / 100 is the double nearest 0.01; 10^-2 computed as a power may not be.
        let base = if d < 0.0 {
            1.0 / 10f64.powi(-d as i32)
        } else {
            10f64.powi(d as i32)
        };
        out.push(base);
        if d1 - d0 <= 2.0 && d < d1 {
            out.push(base * 2.0);
            out.push(base * 5.0);
        }
        d += 1.0;
    }
    (out[0], *out.last().unwrap_or(&1.0), out)
}

#[cfg(test)]
mod tests {
    use super::super::svg::svg;
    use super::super::test_support::thread_chart;
    use super::*;

    #[test]
    fn round_ticks() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.5, 1.0]);
        assert_eq!(
            ticks(16.0, 128.0, 8),
            vec![20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
        );
        assert_eq!(ticks(3.0, 3.0, 5), vec![3.0]);
    }

    #[test]
    fn thread_axes_have_whole_number_ticks() {
        // Few, well spaced counts: the counts themselves.
        assert_eq!(
            integer_ticks(&[4.0, 16.0, 64.0], 4.0, 64.0, 11.0),
            vec![4.0, 16.0, 64.0]
        );
        // 1 and 2 threads: never 1.2, 1.5.
        assert_eq!(integer_ticks(&[1.0, 2.0], 1.0, 2.0, 660.0), vec![1.0, 2.0]);
        // Counts too close to label each: round integer ticks.
        let t = integer_ticks(&[1.0, 2.0, 4.0, 8.0, 128.0], 1.0, 128.0, 5.0);
        assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
        assert_eq!(t, vec![20.0, 40.0, 60.0, 80.0, 100.0, 120.0]);
        assert!(
            ticks_from(2.0, 3.0, 8, 1.0)
                .iter()
                .all(|v| v.fract() == 0.0)
        );
        let c = thread_chart("a", vec![(2.0, 1.0), (3.0, 2.0)]);
        let s = svg(&c);
        let labels: Vec<&str> = s
            .split(r#"<text class="tick x""#)
            .skip(1)
            .map(|t| &t[t.find('>').unwrap() + 1..t.find('<').unwrap()])
            .collect();
        assert_eq!(labels, ["2", "3"]);
    }

    #[test]
    fn the_spectrum_has_a_log_axis() {
        let (lo, hi, t) = log_span([0.0, 0.05, 0.2, 380.0].into_iter());
        assert_eq!((lo, hi), (0.01, 1000.0));
        assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]);
        let (_, _, t) = log_span([2.0, 30.0].into_iter());
        assert_eq!(t, vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        let (lo, hi, _) = log_span(std::iter::empty());
        assert!(lo > 0.0 && hi > lo);
    }
}
