//! Each workload's validated configuration, as the plan builds it and an agent runs it.

pub mod driver;
pub mod fileio;
pub mod memory;
pub mod oltp;
pub mod pgbench;
pub mod script;
pub mod server;
pub mod tpcc;
