//! Ignored errors by code, as every report writes them: each server error code
//! (a MySQL error number, or `SQLSTATE 40001` for PostgreSQL: model's `sqlstate`) with
//! what the common ones mean and how often it came, the commonest first. sysbench's own
//! lines give only the total ("ignored errors:"); this is fleetbench's line after them,
//! worded without "transactions", "queries", "tps" or "qps" (scripts that parse sysbench's
//! report match those words). Pure functions shared by the text and the HTML report.

use std::collections::BTreeMap;
use std::fmt::Write;

/// What a common error code means, as its server's manual names it.
pub fn meaning(code: &str) -> Option<&'static str> {
    Some(match code {
        "1020" => "record changed since last read",
        "1040" => "too many connections",
        "1053" => "server shutdown in progress",
        "1062" => "duplicate key",
        "1205" => "lock wait timeout",
        "1213" => "deadlock",
        "1317" => "query interrupted",
        "1927" => "connection killed",
        "2006" => "server has gone away",
        "2013" => "lost connection",
        "SQLSTATE 08006" => "connection failure",
        "SQLSTATE 23505" => "unique violation",
        "SQLSTATE 25P02" => "in failed transaction",
        "SQLSTATE 40001" => "serialization failure",
        "SQLSTATE 40P01" => "deadlock detected",
        "SQLSTATE 55P03" => "lock not available",
        "SQLSTATE 57014" => "query canceled",
        "SQLSTATE 57P01" => "admin shutdown",
        _ => return None,
    })
}

/// A run's counts by code as the reports name the codes (a result document's
/// `errors_by_code` has them so already).
pub fn named(by_code: &BTreeMap<u32, u64>) -> BTreeMap<String, u64> {
    by_code
        .iter()
        .map(|(c, n)| (fleetbench_model::sqlstate::name(*c), *n))
        .collect()
}

/// What the row of errors counted without a code says.
pub const NO_CODE: &str = "without a code";

/// The codes with their meanings and counts, the commonest first (equal counts in code
/// order), then the errors counted without a code (`total` beyond the codes' sum: a
/// script's own count) as [`NO_CODE`]. Empty when none was ignored.
pub fn rows(
    by_code: &BTreeMap<String, u64>,
    total: u64,
) -> Vec<(String, Option<&'static str>, u64)> {
    let mut rows: Vec<(String, Option<&'static str>, u64)> = by_code
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(c, n)| (c.clone(), meaning(c), *n))
        .collect();
    // Stable: equal counts keep the map's (code) order.
    rows.sort_by_key(|r| std::cmp::Reverse(r.2));
    let coded: u64 = rows.iter().map(|r| r.2).sum();
    if total > coded {
        rows.push((NO_CODE.to_string(), None, total - coded));
    }
    rows
}

/// The [`rows`] as one line's text: `1213 (deadlock) x 5, 1205 (lock wait timeout) x 2`.
pub fn text(by_code: &BTreeMap<String, u64>, total: u64) -> String {
    rows(by_code, total)
        .iter()
        .map(|(c, m, n)| match m {
            Some(m) => format!("{c} ({m}) x {n}"),
            None => format!("{c} x {n}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text report's line, `Ignored errors by code: 1213 (deadlock) x 5, ...`, or nothing
/// when no error was ignored.
pub fn line(by_code: &BTreeMap<String, u64>, total: u64) -> String {
    let t = text(by_code, total);
    let mut s = String::new();
    if !t.is_empty() {
        let _ = writeln!(s, "Ignored errors by code: {t}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(c, n)| (c.to_string(), *n)).collect()
    }

    #[test]
    fn codes_read_commonest_first_with_their_meanings() {
        let by = codes(&[("1205", 2), ("1213", 5), ("1020", 2), ("4025", 1)]);
        assert_eq!(
            text(&by, 10),
            "1213 (deadlock) x 5, 1020 (record changed since last read) x 2, \
             1205 (lock wait timeout) x 2, 4025 x 1"
        );
        assert_eq!(
            line(&by, 10),
            "Ignored errors by code: 1213 (deadlock) x 5, 1020 (record changed since last read) x 2, \
             1205 (lock wait timeout) x 2, 4025 x 1\n"
        );
        // None ignored: no line at all.
        assert_eq!(line(&BTreeMap::new(), 0), "");
        // A script's own count has no code.
        assert_eq!(
            text(&codes(&[("1062", 1)]), 3),
            "1062 (duplicate key) x 1, without a code x 2"
        );
        assert_eq!(text(&BTreeMap::new(), 4), "without a code x 4");
    }

    #[test]
    fn sqlstates_are_named_as_postgresql_names_them() {
        let serial = fleetbench_model::sqlstate::encode("40001").unwrap();
        let by = named(&[(serial, 3), (1213, 1)].into_iter().collect());
        assert_eq!(
            text(&by, 4),
            "SQLSTATE 40001 (serialization failure) x 3, 1213 (deadlock) x 1"
        );
        // sysbench's words stay out of fleetbench's line.
        for w in ["transactions", "queries", "tps", "qps"] {
            assert!(!line(&by, 4).to_lowercase().contains(w), "{w}");
        }
    }
}
