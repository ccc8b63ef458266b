//! TPC-C's report in tpcc-mysql's layout (its interval line, Raw Results, Constraint
//! Check and TpmC), then fleetbench's merged response times per transaction type. Pure
//! functions over each type's figures ([`TypeFigures`]), taken from merged histograms in
//! a live run (crate::report::tpcc) or from a saved result (`fleetbench report FILE`), so
//! that both print the same text.

use std::fmt::Write;
use std::time::Duration;

use fleetbench_model::workloads::tpcc::TXN_NAMES;

use crate::merge::{Latency, MergedInterval, TxnFigures, Txns};
use crate::report::doc::{Tpcc, TxnJson};
use crate::report::json::round;
use crate::report::tpcc::{MIN_MIX, tpmc, within_limit};

/// The types as tpcc-mysql's report names them.
pub const LABELS: [&str; 5] = [
    "New-Order",
    "Payment",
    "Order-Status",
    "Delivery",
    "Stock-Level",
];

/// One transaction type's figures as the report shows them (latencies in ms; 0 for a type
/// that completed none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypeFigures {
    pub count: u64,
    /// Completed within the type's response-time limit (tpcc-mysql's sc).
    pub within_limit: u64,
    pub retried: u64,
    pub failed: u64,
    pub rolled_back: u64,
    pub avg: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl TypeFigures {
    /// From merged histograms: type `kind` (its index in tpcc-mysql's order).
    fn of_merged(t: &TxnFigures, kind: usize) -> TypeFigures {
        let l = &t.latency;
        TypeFigures {
            count: t.count(),
            within_limit: within_limit(t, kind),
            retried: t.retried,
            failed: t.failed,
            rolled_back: t.rolled_back,
            // Rounded to the microsecond as the result document stores them: a max of
            // 41.5415 ms prints 41.542 both live and from the file.
            avg: round(l.avg_ms()),
            p50: round(pct(l, 50.0)),
            p90: round(pct(l, 90.0)),
            p95: round(pct(l, 95.0)),
            p99: round(pct(l, 99.0)),
            max: round(l.max_ms()),
        }
    }

    /// From a result document's figures of one type.
    fn of_doc(t: &TxnJson) -> TypeFigures {
        let l = &t.latency_ms;
        let p = |k: &str| {
            if t.count == 0 {
                0.0
            } else {
                l.get(k).unwrap_or(0.0)
            }
        };
        TypeFigures {
            count: t.count,
            within_limit: t.within_limit,
            retried: t.retried,
            failed: t.failed,
            rolled_back: t.rolled_back,
            avg: l.avg,
            p50: p("p50"),
            p90: p("p90"),
            p95: p("p95"),
            p99: p("p99"),
            max: l.max,
        }
    }

    /// Percent of the type's transactions within its limit (100 when there were none).
    fn share_within(&self) -> f64 {
        match self.count {
            0 => 100.0,
            n => 100.0 * self.within_limit as f64 / n as f64,
        }
    }
}

/// The five types' figures of merged transactions, in tpcc-mysql's order.
pub fn merged_types(txns: &Txns) -> [TypeFigures; 5] {
    std::array::from_fn(|i| TypeFigures::of_merged(&txns.0[i], i))
}

/// The five types' figures of a result document, in tpcc-mysql's order (a type the
/// document lacks reads as none completed).
pub fn doc_types(t: &Tpcc) -> [TypeFigures; 5] {
    std::array::from_fn(|i| {
        t.transactions
            .get(TXN_NAMES[i])
            .map(TypeFigures::of_doc)
            .unwrap_or_default()
    })
}

/// tpcc-mysql's Constraint Check of the five types (in its order), as its report and the
/// HTML page show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstraintCheck {
    /// Each type's share of the completed transactions and whether it reaches its
    /// minimum ([`MIN_MIX`]; New-Order has none).
    pub mix: [(f64, bool); 5],
    /// Each type's percent within its response-time limit, and whether that is 90 or more.
    pub within: [(f64, bool); 5],
}

impl ConstraintCheck {
    /// Whether every check passes.
    pub fn ok(&self) -> bool {
        self.mix.iter().chain(&self.within).all(|c| c.1)
    }
}

/// The Constraint Check of these types' figures.
pub fn constraint_check(types: &[TypeFigures; 5]) -> ConstraintCheck {
    let m = mix(types);
    ConstraintCheck {
        mix: std::array::from_fn(|i| (m[i], m[i] >= MIN_MIX[i])),
        within: std::array::from_fn(|i| {
            let share = types[i].share_within();
            (share, share >= 90.0)
        }),
    }
}

/// Share of each type in all completed transactions, percent.
fn mix(types: &[TypeFigures; 5]) -> [f64; 5] {
    let total = types.iter().map(|t| t.count).sum::<u64>().max(1) as f64;
    types.map(|t| 100.0 * t.count as f64 / total)
}

/// tpcc-mysql's interval line: seconds since measuring began, New-Order count, its 95th
/// and 99th percentile and max (ms), then `count|max` of the other four types, e.g.
/// `  10, trx: 3241, 95%: 15.638, 99%: 34.394, max_rt: 135.266, 3238|80.319, ...`.
pub fn interval_line(iv: &MergedInterval) -> String {
    types_line(iv.label_secs(), &merged_types(&iv.txns))
}

/// The interval line labelled `secs`, of these types' figures.
pub fn types_line(secs: u64, types: &[TypeFigures; 5]) -> String {
    let no = &types[0];
    let mut s = format!(
        "{:>4}, trx: {}, 95%: {:.3}, 99%: {:.3}, max_rt: {:.3}",
        secs, no.count, no.p95, no.p99, no.max
    );
    for f in &types[1..] {
        let _ = write!(s, ", {}|{:.3}", f.count, f.max);
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

/// The report's last line, the TpmC of the `<TpmC>` block above repeated: a reader of the
/// tail (`| tail -1`) finds it there.
pub fn last_line(tpmc: f64) -> String {
    format!("\nTpmC: {tpmc:.3}\n")
}

/// tpcc-mysql's end of run: Raw Results, Constraint Check, TpmC.
pub fn end_report(txns: &Txns, measured: Duration) -> String {
    end_report_of(
        &merged_types(txns),
        measured.as_secs(),
        tpmc(txns, measured),
    )
}

/// The end of run of these types' figures over `secs` whole seconds measured, with its
/// TpmC.
pub fn end_report_of(types: &[TypeFigures; 5], secs: u64, tpmc: f64) -> String {
    let mut s = String::from("\n<Raw Results>\n");
    for (i, t) in types.iter().enumerate() {
        let sc = t.within_limit;
        let _ = writeln!(
            s,
            "  [{i}] sc:{sc}  lt:{}  rt:{}  fl:{}  avg_rt: {:.1} (ms; {})",
            t.count - sc,
            t.retried,
            t.failed,
            t.avg,
            LABELS[i]
        );
    }
    let _ = writeln!(s, " in {secs} sec.\n");
    s.push_str("<Constraint Check> (all must be [OK])\n [transaction percentage]\n");
    let check = constraint_check(types);
    for i in 1..5 {
        let (share, ok) = check.mix[i];
        let _ = writeln!(
            s,
            "   {:>12}: {:5.2}% (>={:4.1}%) [{}]",
            LABELS[i],
            share,
            MIN_MIX[i],
            if ok { "OK" } else { "NG" }
        );
    }
    s.push_str(" [response time (at least 90% passed)]\n");
    for (i, (share, ok)) in check.within.iter().enumerate() {
        let _ = writeln!(
            s,
            "   {:>12}: {:6.2}%  [{}]",
            LABELS[i],
            share,
            if *ok { "OK" } else { "NG" }
        );
    }
    let _ = writeln!(s, "\n<TpmC>\n                 {tpmc:.3} TpmC\n");
    s
}

/// fleetbench's block: per type the count, share, merged percentiles and max, retries,
/// failures and (New-Order) rollbacks.
pub fn types_block(txns: &Txns) -> String {
    types_block_of(&merged_types(txns))
}

/// fleetbench's block of these types' figures.
pub fn types_block_of(types: &[TypeFigures; 5]) -> String {
    let mut s = String::from(
        "Response time by transaction type (ms, merged over agents):\n\
         \x20 type              count    mix %      p50      p90      p95      p99      max  retried  failed  rolled back\n",
    );
    let m = mix(types);
    for (i, t) in types.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:<12} {:>10} {:>8.2} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8} {:>7} {:>12}",
            LABELS[i],
            t.count,
            m[i],
            t.p50,
            t.p90,
            t.p95,
            t.p99,
            t.max,
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
    use crate::report::tpcc::tests::{deck, figures};
    use crate::report::tpcc::{constraints_ok, mix};

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
            clients: Default::default(),
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
        // A max half-way between two microseconds prints as the result document keeps it
        // (rounded half away from zero), so `report FILE` reprints the same line.
        iv.txns.0[0].latency.max_ns = 41_541_500;
        let line = interval_line(&iv);
        assert!(line.contains("max_rt: 41.542,"), "{line}");
    }
}
