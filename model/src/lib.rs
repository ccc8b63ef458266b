//! fleetbench's shared model: what a run asks for and what comes back, as both the
//! coordinator and the agents understand it.
//!
//! - [`options`] and [`spec`]: every test's options, declared once, parsed from the command
//!   line or a scenario, validated, and written back for reports.
//! - [`workloads`]: each workload's validated configuration (OLTP, TPC-C, fileio, memory,
//!   the database servers).
//! - [`run`]: the run's own options (threads, time, events, rate, ...) and the limits a
//!   Start carries.
//! - [`wire`]: the conversions between these and the contract (`fleetbench-proto`).
//! - [`host`], [`limits`], [`counters`]: the facts and figures of a host and a run.
//! - [`auth`] and [`capped`]: the token both sides share, and bounded reads of the files a
//!   user names.
//!
//! The agent's workers call a few of these types' methods for every statement (a
//! statement's kind, a config's transactions, counters): those are `#[inline]`, since a
//! call into another crate is not inlined otherwise.

pub mod auth;
pub mod capped;
pub mod counters;
pub mod host;
pub mod limits;
pub mod options;
pub mod rand;
pub mod run;
pub mod server_host;
pub mod server_status;
pub mod spec;
pub mod sqlstate;
pub mod wire;
pub mod workloads;

/// How long a keepalive ping (one a second) may go unanswered before the peer counts as
/// gone, on both ends of the coordinator's connection to an agent: the lease of a run when
/// the network between them fails (a partition, a frozen host) rather than a process. An
/// agent cut off from its coordinator stops its load within this and a second; the
/// coordinator counts the agent lost as soon. Short enough that a cut-off agent does not
/// load a database for long on its own, long enough that a busy host answers in time.
pub const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);
