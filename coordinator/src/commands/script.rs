//! A script's command other than `run` (`prepare`, `cleanup`, `prewarm` or one of its
//! own): its function runs in every thread over the agents (a PARALLEL_COMMAND, each with
//! its `sysbench.tid`) or once on the first agent. What the script prints is shown as it
//! comes; a script error on any agent stops the others and ends the command with it.

use crate::exit;
use crate::merge::{AgentStatus, MergedInterval, RunResult};
use crate::plan::{Plan, Workload};
use crate::session::{self, AgentConn, AgentTick, RunObserver};

/// Sees nothing: a command has no report, only the script's output.
struct Quiet;

impl RunObserver for Quiet {
    fn opening(&mut self, _open: u64, _total: u64) {}
    fn go(&mut self, _run_id: &str, _ready: &RunResult) {}
    fn interval(&mut self, _iv: &MergedInterval) {}
    fn agent_interval(&mut self, _tick: AgentTick) {}
}

/// Runs the plan's script command on `conns`.
pub async fn run(plan: &Plan, conns: Vec<AgentConn>) -> anyhow::Result<i32> {
    let Workload::Script(s) = &plan.workload else {
        anyhow::bail!("not a script");
    };
    // Once: on the first agent alone.
    let conns: Vec<AgentConn> = if s.parallel {
        conns
    } else {
        conns.into_iter().take(1).collect()
    };
    let r = session::run(conns, plan, &mut Quiet).await?;
    let mut failed = None;
    for a in &r.agents {
        match &a.status {
            AgentStatus::Completed => {}
            AgentStatus::Aborted(why) | AgentStatus::Lost(why) => {
                failed.get_or_insert_with(|| format!("{} on agent {}: {why}", s.command, a.name));
            }
        }
    }
    if let Some(why) = failed {
        eprintln!("error: {why}");
        return Ok(exit::EXIT_FAILED);
    }
    Ok(exit::of_run(!r.interrupted))
}
