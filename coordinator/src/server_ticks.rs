//! What the agents sent of the servers during a run, as the run's result keeps it: each
//! server's readings by tick, and what each observer agent saw of a server's host. Plain
//! data, apart from the arithmetic over it (crate::servers), so that the result's types
//! and that arithmetic do not import each other.

use std::collections::BTreeMap;

/// One server's figures over one tick, as the agent that reads it sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTick {
    /// Index into the plan's targets.
    pub target: usize,
    pub seq: u32,
    /// Counters' changes and gauges' levels by the server's names; empty when missing.
    pub values: BTreeMap<String, u64>,
    /// Why the tick has no figures.
    pub missing: Option<String>,
    /// What the reading could not get, said once (a missing privilege and its GRANT).
    pub note: Option<String>,
}

/// What an observer agent saw of a target's host over a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedHost {
    /// Index into the plan's targets.
    pub target: usize,
    pub addr: String,
    /// (tick number, figures), in the order they came.
    pub samples: Vec<(u32, fleetbench_model::server_host::ServerHostFigures)>,
    /// Why it observed nothing, or stopped early.
    pub error: Option<String>,
}
