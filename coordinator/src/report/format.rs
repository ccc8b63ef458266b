//! How the reports and messages write a few recurring values: a percentile's label, a
//! rate as given, a duration as people say it. Pure functions that every writer (and the
//! session's messages) shares; nothing here depends on the rest of the coordinator.

/// Label of a percentile as sysbench prints it: 95 -> "95", 99.9 -> "99.9".
pub fn pct_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        let s = format!("{p:.3}");
        s.trim_end_matches('0').to_string()
    }
}

/// A rate as given: `2000`, `2500.5`.
pub fn rate_label(rate: f64) -> String {
    if rate.fract() == 0.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate}")
    }
}

/// The name of embedded agent `i` (from 0) of `k` in reports and errors: `embedded`
/// alone, else numbered from 1 (`embedded-2`): one word, as the text tables' columns are.
pub fn embedded_name(i: u32, k: u32) -> String {
    if k == 1 {
        "embedded".to_string()
    } else {
        format!("embedded-{}", i + 1)
    }
}

/// A duration in seconds as people say it: `42s`, `3m05s`, `2h07m`, `3d04h`.
/// `n` and the noun for it: "1 thread", "2 threads".
pub fn count_of(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        3600..86400 => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d{:02}h", secs / 86400, secs % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_singular_for_one() {
        assert_eq!(count_of(1u32, "thread", "threads"), "1 thread");
        assert_eq!(count_of(0u32, "thread", "threads"), "0 threads");
        assert_eq!(count_of(12u64, "warehouse", "warehouses"), "12 warehouses");
    }

    #[test]
    fn embedded_agents_are_one_word_numbered_when_several() {
        assert_eq!(embedded_name(0, 1), "embedded");
        assert_eq!(embedded_name(0, 3), "embedded-1");
        assert_eq!(embedded_name(2, 3), "embedded-3");
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(super::pct_label(95.0), "95");
        assert_eq!(super::pct_label(99.9), "99.9");
        assert_eq!(super::pct_label(99.99), "99.99");
        assert_eq!(super::pct_label(100.0), "100");
    }

    #[test]
    fn ages_read_like_people_say_them() {
        let ages = [
            (0, "0s"),
            (59, "59s"),
            (185, "3m05s"),
            (7620, "2h07m"),
            (3 * 86400 + 4 * 3600 + 59, "3d04h"),
        ];
        for (secs, said) in ages {
            assert_eq!(age(secs), said);
        }
    }
}
