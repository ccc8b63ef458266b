//! Talks to agents: Hello (reachability, protocol version, capabilities), then one Run
//! stream per agent with the Start / Ready / Go barrier, merging what comes back; and the
//! table jobs (prepare, cleanup, prewarm) shared out over them. Wire messages become
//! result types in [`crate::wire`].
//!
//! One module a stage: reaching and greeting agents (`connect`), running a plan over them
//! (`run`) and gathering what comes back (`collect`), the table jobs (`table_job`), and
//! the run ids (`ids`).

mod collect;
mod connect;
mod ids;
mod observe;
mod observer;
mod participant;
mod run;
mod table_job;

pub use connect::{AgentConn, Link, check_ceilings, connect, connect_idle, probe, stop_all};
pub use ids::started_here;
pub use observer::{AgentTick, RunObserver};
pub use run::run;
pub use table_job::{JobSummary, table_job};
