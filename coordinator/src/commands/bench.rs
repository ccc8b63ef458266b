//! `fleetbench TEST COMMAND`: the plan from the command line, its agents (embedded ones
//! started and stopped here), then a table job, a sweep or one run with its report.

use anyhow::Context;

use super::Invocation;
use super::measure::{Live, measure};
use crate::exit;
use crate::merge;
use crate::plan::{self, Command, Plan};
use crate::report::{self, stdout};
use crate::session::{self, Link};
use crate::sweep::Extras;

/// Plans the command line and runs it on its agents.
pub async fn run(inv: &Invocation, link: &Link) -> anyhow::Result<i32> {
    let (raw, extras) = (&inv.raw, &inv.extras);
    let mut plan = Plan {
        command_line: inv.command_line.clone(),
        ..plan::build(raw)?
    };
    if let plan::Workload::Script(s) = &mut plan.workload {
        use fleetbench_model::workloads::script::files::MAX_ARGV_BYTES;
        // Every Lua state of the run holds a copy.
        if inv.argv.iter().map(String::len).sum::<usize>() > MAX_ARGV_BYTES {
            return Err(crate::UsageError::new(format!(
                "the command line is longer than {} KiB, the most a script's sysbench.cmdline.argv holds",
                MAX_ARGV_BYTES >> 10
            ))
            .into());
        }
        s.argv = inv.argv.clone();
    }
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    // --cooldown rests between measurements: one run has only one.
    if raw.cooldown.is_some()
        && plan.command == Command::Run
        && extras.counts.is_none()
        && extras.rates.is_none()
        && extras.repeat == 1
    {
        return Err(crate::UsageError::new(
            "--cooldown rests between the steps of a sweep or the measurements of --repeat: this run is one measurement (give --threads or --rate a list, or --repeat N)",
        )
        .into());
    }
    for &n in extras.counts.iter().flatten() {
        plan::check_threads(n, &plan.agents)?;
    }
    let plan = &plan;
    crate::local::with_agents(plan, |addrs| async move {
        run_plan(plan, &addrs, link, extras).await
    })
    .await
}

async fn run_plan(
    plan: &Plan,
    addrs: &[String],
    link: &Link,
    extras: &Extras,
) -> anyhow::Result<i32> {
    if let (plan::Workload::Tpcc(t), Command::Run) = (&plan.workload, plan.command)
        && t.options.partition
    {
        // Every thread count the run will use, over these agents.
        let counts = extras.counts.clone().unwrap_or_else(|| vec![plan.threads]);
        for n in counts {
            let shares = plan::split_evenly(u64::from(n), addrs.len());
            plan::check_tpcc_partition(t.options.warehouses, &shares)?;
        }
    }
    if plan.command == Command::Run
        && (extras.counts.is_some() || extras.rates.is_some() || extras.repeat > 1)
    {
        return super::sweep::run(plan, extras, addrs, link).await;
    }
    let conns = session::connect_idle(addrs, &plan.workload, link).await?;
    if plan.command == Command::Script {
        return super::script::run(plan, conns).await;
    }
    if plan.command != Command::Run {
        return super::tables::run(plan, conns).await;
    }
    measure_one(plan, conns, extras).await
}

/// One measurement of `plan` over the agents of `conns`: the header, the run, its report.
async fn measure_one(
    plan: &Plan,
    conns: Vec<session::AgentConn>,
    extras: &Extras,
) -> anyhow::Result<i32> {
    // A run's warm-up is its own first seconds, on the same threads and connections.
    let plan = &Plan {
        warmup: extras.warmup,
        ..plan.clone()
    };
    let shares = plan::split_evenly(u64::from(plan.threads), conns.len());
    let idle = shares.iter().filter(|&&t| t == 0).count();
    if idle > 0 {
        eprintln!(
            "warning: {} over {} agents: {idle} agent(s) get no thread and stay idle",
            crate::report::format::count_of(plan.threads, "thread", "threads"),
            conns.len()
        );
    }
    let listing: Vec<(String, u32)> = conns
        .iter()
        .zip(&shares)
        .map(|(c, &t)| (c.name.clone(), t as u32))
        .collect();
    stdout::print(&report::text::header_in(plan, &listing, extras.style));
    // --hlog: created before the run, so that a path it cannot write fails first.
    let hlog = match &extras.hlog {
        Some(path) => Some(
            report::hlog::RunLog::create(path, extras.hlog_per_agent, plan.tick()).with_context(
                || format!("cannot create the HdrHistogram log {}", path.display()),
            )?,
        ),
        None => None,
    };
    let hooks = crate::script::hooks(plan)?.map(std::sync::Arc::new);
    let live = Live {
        style: extras.style,
        banner: true,
        hlog,
        metrics: extras.metrics.clone(),
        hooks: hooks.clone(),
        web: extras.web.clone(),
        live_agents: extras.live_agents,
    };
    let result = match measure(plan, conns, live).await {
        Ok(r) => r,
        Err(e) => {
            // What `sysbench.report_json` opened is closed, so that its output still parses.
            if let Some(h) = &hooks {
                h.finish();
            }
            return Err(e);
        }
    };
    // A script's report_cumulative hook prints the end report in place of the usual one,
    // as in sysbench (the result files still have every figure).
    let replaced = hooks
        .as_ref()
        .is_some_and(|h| h.cumulative(&result, plan.percentiles[0]));
    if let Some(h) = &hooks {
        h.finish();
    }
    if extras.histogram {
        stdout::print(&report::histogram::text(&result.latency()));
    }
    if !replaced {
        stdout::print(&report::text::final_report_in(plan, &result, extras.style));
    }
    conclude(plan, &result, extras).await
}

/// After a run's report: its warnings, its files, and the exit code it decides.
async fn conclude(plan: &Plan, result: &merge::RunResult, extras: &Extras) -> anyhow::Result<i32> {
    // A target that could not be reached: said in every layout, and it decides the exit.
    let (warnings, down) = crate::downtime::check(plan, result);
    for w in warnings {
        eprintln!("{w}");
    }
    if extras.style.is_sysbench() {
        eprint!("{}", report::text::agent_warnings(&result.agents));
        for w in report::hosts::run_warnings(plan, result) {
            eprintln!("{w}");
        }
        if let Some(why) = report::text::rate_shortfall(plan, result) {
            eprintln!("warning: {why}");
        }
    }
    if let Some(path) = &plan.json {
        report::json::write(path, &report::json::build(plan, result))
            .with_context(|| format!("cannot write the JSON result to {}", path.display()))?;
    }
    super::single_outputs(plan, result, extras)?;
    let doc = crate::report::doc::Document::Run(Box::new(report::json::build(plan, result)));
    let regressed = crate::catalog::remember(&extras.catalog, &doc).await;
    if let Some(w) = &extras.web {
        let lost: Vec<String> = result
            .agents
            .iter()
            .filter(|a| a.status != merge::AgentStatus::Completed)
            .map(|a| a.addr.clone())
            .collect();
        w.end(&lost, report::hosts::run_warnings(plan, result));
        w.done(report::html::render(&doc));
    }
    // A script's own error failed the run (sysbench's FATAL): one line on stderr and exit 1,
    // after the report of what ran before it.
    if let Some(why) = script_failed(plan, result) {
        eprintln!("error: {why}");
        return Ok(exit::EXIT_FAILED);
    }
    let degraded = result
        .agents
        .iter()
        .any(|a| a.status != merge::AgentStatus::Completed);
    match exit::of_run(!degraded && !result.interrupted) {
        exit::EXIT_OK if down => Ok(exit::EXIT_TARGET_DOWN),
        code => Ok(super::after_regression(code, regressed, &extras.catalog)),
    }
}

/// The first agent that stopped the run for a runtime error of the plan's script, with
/// the error (the agent words its reason "script error: FILE:LINE: ...").
fn script_failed(plan: &Plan, result: &merge::RunResult) -> Option<String> {
    if !matches!(plan.workload, plan::Workload::Script(_)) {
        return None;
    }
    result.agents.iter().find_map(|a| match &a.status {
        merge::AgentStatus::Aborted(why) if why.starts_with("script error") => {
            Some(format!("run on agent {}: {why}", a.name))
        }
        _ => None,
    })
}
