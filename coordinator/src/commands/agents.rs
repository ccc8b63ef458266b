//! `fleetbench agents` and `fleetbench stop`: what each agent is and does, and stopping it.

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit::{EXIT_OK, EXIT_USAGE};
use crate::report::{self, stdout};
use crate::{plan, session};

/// `fleetbench agents --agents ...`: each agent's version, host, cores, state and round-trip
/// time. Exit 0 when every agent answered, 2 (setup) otherwise, as the README says.
pub async fn list(raw: &RawArgs, link: &session::Link) -> anyhow::Result<i32> {
    if raw.words.len() > 1 {
        return Err(UsageError(format!(
            "unexpected argument '{}' after 'agents'",
            raw.words[1]
        ))
        .into());
    }
    if raw.agents.is_empty() {
        return Err(UsageError::new("'fleetbench agents' needs --agents HOST:PORT,...").into());
    }
    let addrs = plan::parse_agents(&raw.agents)?;
    let lines = session::probe(&addrs, link).await;
    stdout::print(&report::text::agents_status(&lines));
    Ok(if lines.iter().all(|l| l.result.is_ok()) {
        EXIT_OK
    } else {
        EXIT_USAGE
    })
}

/// `fleetbench stop --agents ...`: stops whatever each agent runs, for whoever started it.
/// Exit 2 when an agent could not be reached or refused, like any other setup problem.
pub async fn stop(raw: &RawArgs, link: &session::Link) -> anyhow::Result<i32> {
    if raw.agents.is_empty() {
        return Err(UsageError::new("'fleetbench stop' needs --agents HOST:PORT,...").into());
    }
    let addrs = plan::parse_agents(&raw.agents)?;
    let mut code = EXIT_OK;
    for (addr, r) in session::stop_all(&addrs, link, "fleetbench stop").await {
        stdout::line(match r {
            Ok(run) if run.is_empty() => format!("{addr}: idle"),
            Ok(run) => format!("{addr}: stopped run {run}"),
            Err(e) => {
                code = EXIT_USAGE;
                format!("{addr}: error: {e}")
            }
        });
    }
    Ok(code)
}
