//! The series table: what the board holds of a run, per agent and per database target,
//! as the agents' intervals and the run's end bring it.

use std::collections::BTreeMap;
use std::time::Duration;

use fleetbench_model::host::HostFigures;

use crate::merge::{DbCounters, IoCounters, Latency};

/// Percentiles of the interval-latency gauges (100 is the maximum). A gauge's label, not
/// a summary's `quantile`: they describe one interval, not the run's running totals.
pub(super) const QUANTILES: [f64; 4] = [0.5, 0.95, 0.99, 1.0];

/// What the run is, as labels on every series.
#[derive(Debug, Clone, Default)]
pub struct RunLabels {
    pub run_id: String,
    pub workload: String,
    /// `--tag key=value`.
    pub tags: Vec<(String, String)>,
    /// (address, host name) of each agent taking part.
    pub agents: Vec<(String, String)>,
    /// (name, address) of each database target, by target index.
    pub targets: Vec<(String, String)>,
}

/// One interval's rates and percentiles.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rates {
    pub(super) tps: f64,
    /// Reads, writes, others per second.
    pub(super) qps: [f64; 3],
    pub(super) threads_running: u32,
    /// Latency at [`QUANTILES`], seconds.
    pub(super) quantiles_s: [f64; 4],
    /// Open loop: queue length and threads inside an event at the interval's end.
    pub(super) open: Option<(u64, u32)>,
}

impl Rates {
    pub(super) fn of(
        events: u64,
        db: &DbCounters,
        d: Duration,
        threads: u32,
        lat: &Latency,
    ) -> Rates {
        let per = |n: u64| crate::merge::per_sec(n, d);
        Rates {
            tps: per(events),
            qps: [per(db.reads), per(db.writes), per(db.others)],
            threads_running: threads,
            quantiles_s: QUANTILES.map(|q| lat.percentile_ms(q * 100.0) / 1e3),
            open: None,
        }
    }
}

/// One agent's series: counters since the run's start, the last interval's rates.
#[derive(Debug, Default)]
pub(super) struct AgentSeries {
    pub(super) host: String,
    pub(super) events: u64,
    pub(super) db: DbCounters,
    pub(super) io: IoCounters,
    pub(super) latency: Latency,
    pub(super) last: Option<Rates>,
    /// The host's load over its last interval, and its network bytes since the start.
    pub(super) load: Option<HostFigures>,
    pub(super) net_rx: u64,
    pub(super) net_tx: u64,
    /// TPC-C, per transaction type: (completed, failed, retried) since the start, and
    /// completed per minute in the agent's last interval.
    pub(super) txns: [(u64, u64, u64); 5],
    pub(super) txn_per_min: [f64; 5],
}

/// A database target's figures: counters as the agents' intervals bring them (the run's
/// totals once it has ended), each agent's last interval's rates, and the statements'
/// latency once the run has ended.
#[derive(Debug, Clone, Default)]
pub(super) struct TargetSeries {
    pub(super) name: String,
    pub(super) addr: String,
    pub(super) db: DbCounters,
    /// Reads, writes, others per second in each agent's last interval, by agent.
    pub(super) qps: BTreeMap<String, [f64; 3]>,
    pub(super) statements: Latency,
}

/// Everything the board holds of the run in progress (or the last one).
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) run: RunLabels,
    pub(super) agents: BTreeMap<String, AgentSeries>,
    /// The last merged interval: its number, end (seconds after the start) and rates.
    pub(super) merged: Option<(u32, f64, Rates)>,
    pub(super) finished: bool,
    pub(super) targets: Vec<TargetSeries>,
    /// The servers' own figures in the last merged interval.
    pub(super) servers: Vec<crate::servers::IntervalServer>,
}
