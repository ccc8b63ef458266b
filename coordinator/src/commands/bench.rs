//! `fleetbench TEST COMMAND`: the plan from the command line, its agents (embedded ones
//! started and stopped here), then a table job, a sweep or one run with its report. Also
//! the one measured run that single runs and sweep steps share: interval lines, the
//! HdrHistogram log and checkpoints as the run goes.

use anyhow::Context;

use super::Invocation;
use crate::exit;
use crate::merge::{self, RunResult};
use crate::plan::{self, Command, Plan};
use crate::report::{self, stdout};
use crate::session::{self, AgentConn, Link};
use crate::sweep::{Extras, ReportStyle};

/// Plans the command line and runs it on its agents.
pub async fn run(inv: &Invocation, link: &Link) -> anyhow::Result<i32> {
    let (raw, extras) = (&inv.raw, &inv.extras);
    let plan = Plan {
        command_line: inv.command_line.clone(),
        ..plan::build(raw)?
    };
    for n in &plan.notes {
        eprintln!("note: {n}");
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
    if plan.command != Command::Run {
        return super::tables::run(plan, conns).await;
    }
    // A run's warm-up is its own first seconds, on the same threads and connections.
    let plan = &Plan {
        warmup: extras.warmup,
        ..plan.clone()
    };
    let shares = plan::split_evenly(u64::from(plan.threads), conns.len());
    let idle = shares.iter().filter(|&&t| t == 0).count();
    if idle > 0 {
        eprintln!(
            "warning: {} threads over {} agents: {idle} agent(s) get no thread and stay idle",
            plan.threads,
            conns.len()
        );
    }
    let listing: Vec<(String, u32)> = conns
        .iter()
        .zip(&shares)
        .map(|(c, &t)| (c.addr.clone(), t as u32))
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
    let live = Live {
        style: extras.style,
        banner: true,
        hlog,
        metrics: extras.metrics.clone(),
    };
    let result = measure(plan, conns, live).await?;
    if extras.histogram {
        stdout::print(&report::histogram::text(&result.latency()));
    }
    stdout::print(&report::text::final_report_in(plan, &result, extras.style));
    // A target that could not be reached: said in every layout, and it decides the exit.
    let (warnings, down) = crate::downtime::check(plan, &result);
    for w in warnings {
        eprintln!("{w}");
    }
    if extras.style.is_sysbench() {
        eprint!("{}", report::text::agent_warnings(&result.agents));
        for w in
            report::hosts::capped_warnings(&report::hosts::summarize(&result.hosts, plan.tick()))
        {
            eprintln!("{w}");
        }
        if let Some(why) = report::text::rate_shortfall(plan, &result) {
            eprintln!("warning: {why}");
        }
    }
    if let Some(path) = &plan.json {
        report::json::write(path, &report::json::build(plan, &result))
            .with_context(|| format!("cannot write the JSON result to {}", path.display()))?;
    }
    super::single_outputs(plan, &result, extras)?;
    let degraded = result
        .agents
        .iter()
        .any(|a| a.status != merge::AgentStatus::Completed);
    match exit::of_run(!degraded && !result.interrupted) {
        exit::EXIT_OK if down => Ok(exit::EXIT_TARGET_DOWN),
        code => Ok(code),
    }
}

/// What a measured run shows while it goes.
pub struct Live {
    /// The layout of the interval lines.
    pub style: ReportStyle,
    /// The connections line and "Threads started!" at Go (a single run's report; a sweep
    /// step has its own line instead).
    pub banner: bool,
    /// `--hlog`'s log, begun at Go and finished (or abandoned) at the end.
    pub hlog: Option<report::hlog::RunLog>,
    /// `--metrics-listen`/`--metrics-push`: the board the run keeps up to date, and the
    /// push of its final figures.
    pub metrics: Option<crate::metrics::Exporter>,
}

/// Runs `plan` on `conns`: the warm-up line, an interval line per tick when
/// `--report-interval` asks for them, checkpoint reports when they fall due, the
/// HdrHistogram log, the metrics board. A log of a run that fails is removed, or kept with
/// a note when it holds intervals already.
pub async fn measure(plan: &Plan, conns: Vec<AgentConn>, live: Live) -> anyhow::Result<RunResult> {
    let first_pct = plan.percentiles[0];
    let show_intervals = plan.report_interval.is_some();
    let hlog = std::cell::RefCell::new(live.hlog);
    let board = live.metrics.as_ref().map(|m| m.board());
    let agents: Vec<(String, String)> = conns
        .iter()
        .map(|c| (c.addr.clone(), c.hello.hostname.clone()))
        .collect();
    // Each target as the metrics name it: (name, where).
    let targets: Vec<(String, String)> = plan
        .workload
        .targets()
        .iter()
        .map(|t| {
            let at = t
                .socket
                .clone()
                .unwrap_or_else(|| format!("{}:{}", t.host, t.port));
            (t.name.clone(), at)
        })
        .collect();
    let go = |run_id: &str, ready: &merge::RunResult| {
        if let Some(b) = board {
            b.begin(crate::metrics::RunLabels {
                run_id: run_id.to_string(),
                workload: plan.workload.name().to_string(),
                tags: plan.tags.clone(),
                agents,
                targets,
            });
        }
        if let Some(log) = hlog.borrow_mut().as_mut() {
            let title = format!(
                "fleetbench {} {}: latency in microseconds",
                env!("CARGO_PKG_VERSION"),
                plan.workload.name()
            );
            log.begin(&title, std::time::SystemTime::now() + plan.warmup);
        }
        if live.banner {
            if live.style == ReportStyle::Fleetbench {
                stdout::print(&report::text::connections_header(plan, ready));
            } else {
                // sysbench's layouts have no such header: said beside them.
                eprint!("{}", report::text::connect_retries(plan, ready));
            }
            stdout::line("Threads started!\n");
        }
        if let Some(line) = report::text::warmup_line(plan) {
            stdout::line(line);
        }
    };
    // --report-checkpoints: the intervals since the last checkpoint merged into one (a
    // histogram's worth of memory, however long), and the checkpoints to come.
    let mut since_checkpoint: Option<merge::MergedInterval> = None;
    let mut checkpoints = plan.checkpoints.iter().copied().peekable();
    let mut opening = report::progress::Opening::new();
    let result = session::run(
        conns,
        plan,
        |d, t| opening.update(d, t),
        go,
        |iv| {
            if let Some(log) = hlog.borrow_mut().as_mut() {
                log.merged(iv);
            }
            if let Some(b) = board {
                b.merged(iv);
            }
            if show_intervals {
                stdout::line(report::text::interval_line_in(
                    iv,
                    first_pct,
                    &plan.workload,
                    live.style,
                ));
            }
            if checkpoints.peek().is_some() {
                match &mut since_checkpoint {
                    Some(acc) => acc.extend(iv),
                    None => since_checkpoint = Some(iv.clone()),
                }
                // A checkpoint falls due at the first interval whose line reaches it: a
                // tick's end, or the run's last, partial interval (which may end a little
                // before the run's time when a tick woke late).
                let mut due = None;
                while let Some(&c) = checkpoints.peek()
                    && iv.label_secs() >= c
                {
                    due = Some(c);
                    checkpoints.next();
                }
                if let Some(c) = due
                    && let Some(span) = since_checkpoint.take()
                {
                    stdout::print(&report::text::checkpoint_report(plan, c, &span));
                }
            }
        },
        |addr, seq, part, load| {
            if let Some(log) = hlog.borrow_mut().as_mut() {
                log.agent(addr, seq, part);
            }
            if let Some(b) = board {
                b.agent_interval(addr, part, load);
            }
        },
    )
    .await;
    match result {
        Ok(r) => {
            if let Some(log) = hlog.into_inner() {
                log.finish().map_err(anyhow::Error::msg)?;
            }
            if let Some(m) = &live.metrics {
                m.board().finish(&r);
                // The run's figures are kept whether or not the push works.
                match m.push().await {
                    Some(Ok(at)) => eprintln!("note: pushed the run's metrics to {at}"),
                    Some(Err(why)) => eprintln!("warning: cannot push the run's metrics: {why}"),
                    None => {}
                }
            }
            Ok(r)
        }
        Err(e) => {
            // Nothing half-written left behind unannounced.
            if let Some(note) = hlog.into_inner().and_then(|l| l.abandon()) {
                eprintln!("note: {note}");
            }
            Err(e.into())
        }
    }
}
