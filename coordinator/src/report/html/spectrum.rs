//! The latency percentile spectrum: each run's latency at percentiles from 0 to 100 on
//! a "nines" axis, one line per run (a sweep's step); and how steps are named.

use super::markup::num;
use super::svg::{Chart, Line, XAxis};
use crate::report::doc::Report;

/// x position of a percentile on the spectrum's axis: "nines" (90 -> 1, 99 -> 2, ...),
/// with 100 drawn one step past 99.999.
pub fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        6.0
    } else {
        -(1.0 - p / 100.0).log10()
    }
}

/// A run's latency spectrum as one line named `name`.
fn spectrum_line(name: &str, run: &Report) -> Line {
    let points = run
        .totals
        .latency_spectrum_ms
        .iter()
        .map(|p| (nines(p.percentile), p.ms))
        .collect();
    Line {
        offered: Vec::new(),
        name: name.to_string(),
        points,
    }
}

/// A spectrum chart of `lines`: percentiles on a "nines" axis, latency on a log scale.
fn spectrum_chart(id: &str, title: &str, lines: Vec<Line>) -> Chart {
    Chart {
        id: id.into(),
        title: title.into(),
        x_label: "percentile".into(),
        y_label: "latency (ms, log scale)".into(),
        lines,
        log_y: true,
        x_axis: XAxis::Labels(
            [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0]
                .iter()
                .map(|&p| (nines(p), crate::report::pct_label(p)))
                .collect(),
        ),
    }
}

/// "1 thread", "16 threads".
pub(super) fn threads_text(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// A step's name: "16 threads", in a rate sweep "offered 2000/s", and with `--repeat`
/// "16 threads, measurement 2".
pub(super) fn step_label(run: &Report, repeat: Option<u32>, by_rate: bool) -> String {
    let rate = run.config.rate();
    let name = if by_rate && rate > 0.0 {
        format!("offered {}/s", num(rate))
    } else {
        threads_text(run.config.threads)
    };
    match repeat {
        Some(r) => format!("{name}, measurement {r}"),
        None => name,
    }
}

/// The spectrum of a sweep's steps, one line per step (thread count, and measurement).
pub fn steps_spectrum(id: &str, title: &str, runs: &[(String, &Report)]) -> Chart {
    let lines = runs
        .iter()
        .map(|(name, r)| spectrum_line(name, r))
        .collect();
    spectrum_chart(id, title, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_axis() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0), 6.0);
    }
}
