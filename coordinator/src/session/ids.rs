//! The ids of runs and table jobs, and the seeds drawn from the clock.

use std::time::{SystemTime, UNIX_EPOCH};

pub(super) fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

pub(super) fn run_id() -> String {
    format!("{:x}-{:x}", now_nanos() / 1_000_000, std::process::id())
}

/// Whether `run_id` was made by this process (its pid is the id's suffix).
pub fn started_here(run_id: &str) -> bool {
    run_id.ends_with(&format!("-{:x}", std::process::id()))
}
