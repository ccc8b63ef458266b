//! How the coordinator ends: its exit codes, and which errors are the user's to fix
//! (crate::error). Every command returns one of these codes or an error that `exit_code`
//! maps.
//!
//! Exit codes: 0 success; 1 the run failed after it started; 2 bad input or setup (flags,
//! unreachable or incompatible agents); 3 the run finished but an agent was lost or stopped;
//! 4 the run finished but a database target was down (failed reconnects, nothing done) for
//! a whole interval, or for more than `--max-downtime` percent of the run.

use crate::error::{DocError, ScenarioError, SessionError, UsageError};
use crate::plan::PlanError;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_DEGRADED: i32 = 3;
pub const EXIT_TARGET_DOWN: i32 = 4;

/// The exit code for an error that ended the program: 2 for what the user must fix before
/// anything runs, 1 for a failure once it ran.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let setup = err.downcast_ref::<UsageError>().is_some()
        || err.downcast_ref::<PlanError>().is_some()
        || err.downcast_ref::<SessionError>().is_some()
        || err.downcast_ref::<ScenarioError>().is_some()
        || err.downcast_ref::<DocError>().is_some();
    if setup { EXIT_USAGE } else { EXIT_FAILED }
}

/// The code of a run that finished: 3 when an agent was lost or stopped, or the user
/// interrupted it, else 0.
pub fn of_run(clean: bool) -> i32 {
    if clean { EXIT_OK } else { EXIT_DEGRADED }
}
