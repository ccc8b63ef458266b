//! What a run tells its caller as it goes.

use fleetbench_model::host::HostFigures;

use crate::merge::{IntervalPart, MergedInterval, RunResult};

/// What the caller of [`super::run`] is told while the run goes, in this order: the
/// opening, Go, then the intervals.
pub trait RunObserver {
    /// (open, total) connections summed over the agents while they open them (only when
    /// that takes a while).
    fn opening(&mut self, open: u64, total: u64);
    /// Once all agents are Ready, just before Go: the run's id and what their Ready said
    /// (how the agents connected to each target, each distinct way once, and the connects
    /// retried). Called once.
    fn go(&mut self, run_id: &str, ready: &RunResult);
    /// Each merged tick as it completes.
    fn interval(&mut self, iv: &MergedInterval);
    /// Each agent's part of a tick as it arrives.
    fn agent_interval(&mut self, tick: AgentTick);
}

/// An agent's part of a tick, as it arrives.
pub struct AgentTick<'a> {
    /// The agent's address.
    pub addr: &'a str,
    /// The tick's number.
    pub seq: u32,
    pub part: &'a IntervalPart,
    /// The agent host's load over the tick, when the agent sends it.
    pub load: Option<&'a HostFigures>,
    /// The servers this agent reads, over the tick.
    pub servers: &'a [crate::servers::ServerTick],
    /// pgbench's `-l`: the transactions the agent logged in the tick.
    pub txn_log: &'a [fleetbench_proto::v1::TxnLogEntry],
}
