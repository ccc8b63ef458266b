//! TPC-C's figures over merged transactions: TpmC, the mix of types, the transactions
//! within their response-time limits and tpcc-mysql's Constraint Check. Pure functions;
//! the text report lays them out (crate::report::text::tpcc), the JSON result records them.

use std::time::Duration;

use fleetbench_model::workloads::tpcc::LIMITS_S;

use crate::merge::{TxnFigures, Txns};

/// The specification's minimum share of each type but New-Order (clause 5.2.3), percent.
pub const MIN_MIX: [f64; 5] = [0.0, 43.0, 4.0, 4.0, 4.0];

/// Transactions of a type that finished within its response-time limit (`sc`), from the
/// histogram (microseconds, three significant digits: exact at the limits' scale).
pub fn within_limit(t: &TxnFigures, kind: usize) -> u64 {
    let limit_us = (LIMITS_S[kind] * 1e6) as u64;
    t.latency
        .hist
        .iter_recorded()
        .filter(|v| t.latency.hist.highest_equivalent(v.value_iterated_to()) <= limit_us)
        .map(|v| v.count_at_value())
        .sum()
}

/// TpmC: New-Orders completed per minute of the measured time.
pub fn tpmc(txns: &Txns, measured: Duration) -> f64 {
    let mins = measured.as_secs_f64() / 60.0;
    if mins > 0.0 {
        txns.0[0].count() as f64 / mins
    } else {
        0.0
    }
}

/// Share of each type in all completed transactions, percent.
pub fn mix(txns: &Txns) -> [f64; 5] {
    let total = txns.total().max(1) as f64;
    let mut m = [0.0; 5];
    for (i, t) in txns.0.iter().enumerate() {
        m[i] = 100.0 * t.count() as f64 / total;
    }
    m
}

/// Whether every check of tpcc-mysql's Constraint Check passes.
pub fn constraints_ok(txns: &Txns) -> bool {
    let m = mix(txns);
    (1..5).all(|i| m[i] >= MIN_MIX[i])
        && txns
            .0
            .iter()
            .enumerate()
            .all(|(i, t)| share_within(t, i) >= 90.0)
}

/// Percent of a type's transactions within its limit (100 when there were none).
pub fn share_within(t: &TxnFigures, kind: usize) -> f64 {
    match t.count() {
        0 => 100.0,
        n => 100.0 * within_limit(t, kind) as f64 / n as f64,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn figures(ms: &[u64]) -> TxnFigures {
        let mut t = TxnFigures::default();
        for &m in ms {
            let _ = t.latency.hist.record(m * 1_000);
            t.latency.max_ns = t.latency.max_ns.max(m * 1_000_000);
            t.latency.sum_ns += m * 1_000_000;
        }
        t
    }

    pub(crate) fn deck(n: u64) -> Txns {
        let mut t = Txns::default();
        for (i, k) in [10, 10, 1, 1, 1].into_iter().enumerate() {
            t.0[i] = figures(&vec![10; (k * n) as usize]);
        }
        t
    }

    #[test]
    fn tpmc_is_new_orders_per_minute() {
        let t = deck(6);
        assert_eq!(tpmc(&t, Duration::from_secs(30)), 120.0);
        assert_eq!(tpmc(&t, Duration::ZERO), 0.0);
    }
}
