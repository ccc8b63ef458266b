//! `--histogram`: the merged latency histogram in sysbench 1.0's layout. sysbench keeps 1024
//! logarithmic buckets between 0.001 ms and 100 s (about 1.8 % wide each); fleetbench's HDR
//! histogram is finer, so its values are regrouped into the same buckets before printing.

use std::fmt::Write;

use crate::merge::Latency;

const BUCKETS: usize = 1024;
const MIN_MS: f64 = 0.001;
const MAX_MS: f64 = 100_000.0;

/// Bucket multiplier: index = (ln v - ln min) * MULT, rounded.
fn mult() -> f64 {
    (BUCKETS - 1) as f64 / (MAX_MS.ln() - MIN_MS.ln())
}

/// The bucket a value in ms falls in (clamped to the ends, as sysbench does).
pub fn bucket_of(ms: f64) -> usize {
    if ms <= MIN_MS {
        return 0;
    }
    let i = ((ms.ln() - MIN_MS.ln()) * mult()).round();
    (i.max(0.0) as usize).min(BUCKETS - 1)
}

/// The value a bucket is printed with, in ms.
pub fn bucket_value(i: usize) -> f64 {
    (i as f64 / mult() + MIN_MS.ln()).exp()
}

/// Non-empty buckets as (value in ms, count), in increasing order.
pub fn buckets(l: &Latency) -> Vec<(f64, u64)> {
    let mut counts = vec![0u64; BUCKETS];
    for v in l.hist.iter_recorded() {
        let ms = v.value_iterated_to() as f64 / 1e3;
        counts[bucket_of(ms)] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| (bucket_value(i), *c))
        .collect()
}

/// The text block: header, one row per non-empty bucket with a bar of up to 40 '*'
/// scaled to the largest count, then an empty line.
pub fn text(l: &Latency) -> String {
    let rows = buckets(l);
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    s.push_str("       value  ------------- distribution ------------- count\n");
    for (v, c) in rows {
        let stars = "*".repeat(((c as u128 * 40) / max as u128) as usize);
        let _ = writeln!(s, "{v:>12.3} |{stars:<40} {c}");
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_about_two_percent_wide() {
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(1e9), BUCKETS - 1);
        let i = bucket_of(2.0);
        let ratio = bucket_value(i + 1) / bucket_value(i);
        assert!((1.017..1.019).contains(&ratio), "{ratio}");
        assert!((bucket_value(i) / 2.0 - 1.0).abs() < 0.01);
    }

    #[test]
    fn layout_matches_sysbench() {
        let mut l = Latency::default();
        for _ in 0..123 {
            l.hist.record(2_030).unwrap();
        }
        for _ in 0..41 {
            l.hist.record(10_000).unwrap();
        }
        let t = text(&l);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "Latency histogram (values are in milliseconds)");
        assert_eq!(
            lines[1],
            "       value  ------------- distribution ------------- count"
        );
        assert_eq!(lines.len(), 5, "{t}");
        assert_eq!(lines[4], "");
        assert_eq!(
            lines[2],
            format!(
                "{:>12.3} |{} 123",
                bucket_value(bucket_of(2.03)),
                "*".repeat(40)
            )
        );
        assert!(lines[2].starts_with("       2.03"), "{}", lines[2]);
        assert_eq!(
            lines[3],
            format!(
                "{:>12.3} |{:<40} 41",
                bucket_value(bucket_of(10.0)),
                "*".repeat(13)
            )
        );
    }
}
