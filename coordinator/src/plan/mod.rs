//! The validated plan of a fleetbench invocation, built from raw flags, plus the pure
//! functions that split work over agents. Everything here is checked before any agent is
//! contacted, so bad input never starts load anywhere.
//!
//! `build` makes the plan (`model`) from the option values (`values`), the
//! workload's options (`workloads`), its targets (`targets`) and its agents
//! (`agents`); `shares` splits the work.

pub mod agents;
pub mod build;
pub mod model;
pub mod observe;
pub mod pgbench;
pub mod script;
pub mod shares;
pub mod targets;
pub mod values;
pub mod workloads;

pub use agents::{MAX_LOCAL_AGENTS, check_threads, parse_agents};

/// `--ready-timeout`'s default: how long agents may take to open a run, every command alike.
pub const READY_TIMEOUT_SECS: u64 = 30;
pub use build::{FIXED_SEED, LEGACY_EVENTS, TPCC_LOAD_THREADS, build};
pub use model::{
    AgentSource, Command, CpuSpec, MemorySpec, MutexSpec, OltpSpec, Plan, PlanError, SpecError,
    TableSplit, ThreadsSpec, Workload,
};
pub use shares::{
    check_tpcc_partition, split_by_threads, split_evenly, split_rate, tables_for_agents,
    warehouse_shares,
};
pub use targets::{parse_table_map, parse_target};
pub use values::{MAX_RATE, num, parse_flag, parse_percentiles, parse_rate, parse_size, seconds};

#[cfg(test)]
mod test_support;
