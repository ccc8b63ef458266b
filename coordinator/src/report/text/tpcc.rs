//! TPC-C's report in tpcc-mysql's layout (its interval line, Raw Results, Constraint
//! Check and TpmC), then fleetbench's merged response times per transaction type. Pure
//! functions over merged figures (crate::report::tpcc).

use std::fmt::Write;
use std::time::Duration;

use crate::merge::{Latency, MergedInterval, Txns};
use crate::report::tpcc::{MIN_MIX, mix, share_within, tpmc, within_limit};

/// The types as tpcc-mysql's report names them.
pub const LABELS: [&str; 5] = [
    "New-Order",
    "Payment",
    "Order-Status",
    "Delivery",
    "Stock-Level",
];

/// tpcc-mysql's interval line: seconds since measuring began, New-Order count, its 95th
/// and 99th percentile and max (ms), then `count|max` of the other four types, e.g.
/// `  10, trx: 3241, 95%: 15.638, 99%: 34.394, max_rt: 135.266, 3238|80.319, ...`.
pub fn interval_line(iv: &MergedInterval) -> String {
    let t = &iv.txns.0;
    let no = &t[0].latency;
    let mut s = format!(
        "{:>4}, trx: {}, 95%: {:.3}, 99%: {:.3}, max_rt: {:.3}",
        iv.label_secs(),
        no.count(),
        pct(no, 95.0),
        pct(no, 99.0),
        no.max_ms()
    );
    for f in &t[1..] {
        let _ = write!(s, ", {}|{:.3}", f.count(), f.latency.max_ms());
    }
    s
}

fn pct(l: &Latency, p: f64) -> f64 {
    if l.count() == 0 {
        0.0
    } else {
        l.percentile_ms(p)
    }
}

/// tpcc-mysql's end of run: Raw Results, Constraint Check, TpmC.
pub fn end_report(txns: &Txns, measured: Duration) -> String {
    let mut s = String::from("\n<Raw Results>\n");
    for (i, t) in txns.0.iter().enumerate() {
        let sc = within_limit(t, i);
        let _ = writeln!(
            s,
            "  [{i}] sc:{sc}  lt:{}  rt:{}  fl:{}  avg_rt: {:.1} (ms; {})",
            t.count() - sc,
            t.retried,
            t.failed,
            t.latency.avg_ms(),
            LABELS[i]
        );
    }
    let _ = writeln!(s, " in {} sec.\n", measured.as_secs());
    s.push_str("<Constraint Check> (all must be [OK])\n [transaction percentage]\n");
    let m = mix(txns);
    for i in 1..5 {
        let ok = m[i] >= MIN_MIX[i];
        let _ = writeln!(
            s,
            "   {:>12}: {:5.2}% (>={:4.1}%) [{}]",
            LABELS[i],
            m[i],
            MIN_MIX[i],
            if ok { "OK" } else { "NG" }
        );
    }
    s.push_str(" [response time (at least 90% passed)]\n");
    for (i, t) in txns.0.iter().enumerate() {
        let share = share_within(t, i);
        let _ = writeln!(
            s,
            "   {:>12}: {:6.2}%  [{}]",
            LABELS[i],
            share,
            if share >= 90.0 { "OK" } else { "NG" }
        );
    }
    let _ = writeln!(
        s,
        "\n<TpmC>\n                 {:.3} TpmC\n",
        tpmc(txns, measured)
    );
    s
}

/// fleetbench's block: per type the count, share, merged percentiles and max, retries,
/// failures and (New-Order) rollbacks.
pub fn types_block(txns: &Txns) -> String {
    let mut s = String::from(
        "Response time by transaction type (ms, merged over agents):\n\
         \x20 type              count    mix %      p50      p90      p95      p99      max  retried  failed  rolled back\n",
    );
    let m = mix(txns);
    for (i, t) in txns.0.iter().enumerate() {
        let l = &t.latency;
        let _ = writeln!(
            s,
            "  {:<12} {:>10} {:>8.2} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8} {:>7} {:>12}",
            LABELS[i],
            t.count(),
            m[i],
            pct(l, 50.0),
            pct(l, 90.0),
            pct(l, 95.0),
            pct(l, 99.0),
            l.max_ms(),
            t.retried,
            t.failed,
            t.rolled_back
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::TxnFigures;
    use crate::report::tpcc::constraints_ok;
    use crate::report::tpcc::tests::{deck, figures};

    #[test]
    fn late_transactions_are_told_by_the_limit() {
        let t = figures(&[10, 4_900, 5_100, 6_000]);
        assert_eq!(within_limit(&t, 0), 2);
        // Delivery's limit is 80 s.
        assert_eq!(within_limit(&t, 3), 4);
        let report = end_report(
            &Txns([
                t,
                TxnFigures::default(),
                TxnFigures::default(),
                TxnFigures::default(),
                TxnFigures::default(),
            ]),
            Duration::from_secs(60),
        );
        assert!(report.contains("[0] sc:2  lt:2  rt:0  fl:0"), "{report}");
        assert!(report.contains("New-Order:  50.00%  [NG]"), "{report}");
    }

    #[test]
    fn the_deck_passes_the_constraint_check() {
        let t = deck(4);
        assert!(constraints_ok(&t));
        let m = mix(&t);
        assert!(
            (m[0] - 43.48).abs() < 0.01 && (m[4] - 4.35).abs() < 0.01,
            "{m:?}"
        );
        let r = end_report(&t, Duration::from_secs(60));
        assert!(r.contains("Payment: 43.48% (>=43.0%) [OK]"), "{r}");
        assert!(r.contains("<TpmC>\n                 40.000 TpmC"), "{r}");
        assert!(!r.contains("[NG]"));
        let mut few = t.clone();
        few.0[2] = TxnFigures::default();
        assert!(!constraints_ok(&few));
    }

    #[test]
    fn interval_line_has_tpcc_mysqls_fields() {
        let mut iv = crate::merge::MergedInterval {
            seq: 1,
            end: Duration::from_secs(10),
            last: false,
            duration: Duration::from_secs(10),
            threads: 4,
            events: 0,
            latency: Latency::default(),
            db: Default::default(),
            io: Default::default(),
            per_agent: vec![],
            open: None,
            txns: deck(2),
            targets: Vec::new(),
        };
        iv.txns.0[1].latency.max_ns = 80_319_000;
        let line = interval_line(&iv);
        assert!(
            line.starts_with(
                "  10, trx: 20, 95%: 10.000, 99%: 10.000, max_rt: 10.000, 20|80.319, 2|10.000"
            ),
            "{line}"
        );
        assert_eq!(line.matches('|').count(), 4);
    }
}
