//! prepare, cleanup and prewarm: the agents create, load, drop or read their share of the
//! tables (or files), with progress on stderr, then say what was done in sysbench's words.

use fleetbench_agent::workloads::tpcc::{PrepareStep, TpccConfig};

use crate::plan::{Command, Plan, Workload};
use crate::report::{self, stdout};
use crate::session::{self, AgentConn};

/// A table job of a plan from the command line: the banner, a progress bar on stderr
/// (hidden when it is not a terminal), then each agent's summary.
pub async fn run(plan: &Plan, conns: Vec<AgentConn>) -> anyhow::Result<i32> {
    if let Workload::Tpcc(t) = &plan.workload {
        return tpcc(plan, t, conns, None).await;
    }
    let create = plan.command == Command::Prepare;
    stdout::line(report::text::banner());
    let files = match &plan.workload {
        Workload::Fileio(f) => {
            stdout::print(&report::text::fileio_options(f, false));
            stdout::line(if create {
                "Creating files for the test..."
            } else {
                "Removing test files..."
            });
            true
        }
        _ => false,
    };
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(match (create, files) {
            _ if plan.command == Command::Prewarm => "{bar:40} {pos}/{len} tables  eta {eta}",
            (true, false) => "{bar:40} {pos}/{len} rows  {per_sec}  eta {eta}",
            (false, false) => "{bar:40} {pos}/{len} tables",
            (true, true) => "{bar:40} {bytes}/{total_bytes}  {bytes_per_sec}  eta {eta}",
            (false, true) => "{bar:40} {pos}/{len} files",
        })
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let summaries = session::table_job(conns, plan, create, |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })
    .await;
    bar.finish_and_clear();
    for s in summaries? {
        if !s.summary.is_empty() {
            stdout::line(s.summary);
        }
    }
    Ok(crate::exit::EXIT_OK)
}

/// TPC-C's table jobs: prepare is three steps (one agent creates the tables, every agent
/// loads its share of the warehouses, one agent adds the indexes and foreign keys), check
/// runs the consistency conditions over the agents' shares (exit 1 when one fails), cleanup
/// drops the nine tables. `label` prefixes each line inside a scenario (no bar then).
async fn tpcc(
    plan: &Plan,
    t: &TpccConfig,
    conns: Vec<AgentConn>,
    label: Option<&str>,
) -> anyhow::Result<i32> {
    let say = |line: String| match label {
        Some(l) => stdout::line(format!("[{l}] {line}")),
        None => stdout::line(line),
    };
    if label.is_none() {
        stdout::line(report::text::banner());
    }
    let steps: &[PrepareStep] = match plan.command {
        Command::Prepare => &[PrepareStep::Create, PrepareStep::Load, PrepareStep::Index],
        Command::Check => &[PrepareStep::Check],
        _ => &[PrepareStep::Create],
    };
    let create = plan.command != Command::Cleanup;
    let mut violations = 0u64;
    for &step in steps {
        let plan = Plan {
            workload: Workload::Tpcc(Box::new(TpccConfig { step, ..t.clone() })),
            ..plan.clone()
        };
        let what = match (create, step) {
            (false, _) => "Dropping the TPC-C tables...".to_string(),
            (_, PrepareStep::Create) => {
                format!("Creating the TPC-C tables on {}...", t.target.describe())
            }
            (_, PrepareStep::Load) => format!(
                "Loading {} warehouses and 100,000 items over {} agent(s)...",
                t.options.warehouses,
                conns.len().min(t.options.warehouses as usize)
            ),
            (_, PrepareStep::Index) => format!(
                "Adding the secondary indexes{}...",
                if t.options.foreign_keys {
                    " and foreign keys"
                } else {
                    ""
                }
            ),
            (_, PrepareStep::Check) => "Checking the consistency conditions...".to_string(),
        };
        say(what);
        let bar = if label.is_none() {
            indicatif::ProgressBar::new(0)
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(if step == PrepareStep::Load && create {
                "{bar:40} {pos}/{len} rows  {per_sec}  eta {eta}"
            } else {
                "{bar:40} {pos}/{len} steps"
            })
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let started = std::time::Instant::now();
        let summaries = session::table_job(conns.clone(), &plan, create, |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        })
        .await;
        bar.finish_and_clear();
        let summaries = match summaries {
            // The tables exist from here on: say so, and how to drop them.
            Err(e) if create && step != PrepareStep::Create && plan.command == Command::Prepare => {
                return Err(anyhow::Error::new(e).context(
                    "the TPC-C tables were created but not fully loaded; `fleetbench tpcc cleanup` drops them",
                ));
            }
            other => other?,
        };
        for s in summaries {
            if !s.summary.is_empty() {
                say(s.summary);
            }
            violations += s.violation_count;
            for v in s.violations {
                say(format!("  {v}"));
            }
        }
        match step {
            PrepareStep::Load if create => {
                say(format!("loaded in {:.1}s", started.elapsed().as_secs_f64()))
            }
            PrepareStep::Index => say(format!(
                "indexed in {:.1}s",
                started.elapsed().as_secs_f64()
            )),
            _ => {}
        }
    }
    if violations > 0 {
        say(format!(
            "TPC-C consistency check FAILED: {violations} violation(s)"
        ));
        return Ok(crate::exit::EXIT_FAILED);
    }
    if plan.command == Command::Check {
        say("TPC-C consistency check passed".into());
    }
    Ok(crate::exit::EXIT_OK)
}

/// A table job inside a scenario: no bar, every line of the agents' summaries under the
/// scenario's name.
pub async fn run_labelled(plan: &Plan, conns: Vec<AgentConn>, label: &str) -> anyhow::Result<()> {
    if let Workload::Tpcc(t) = &plan.workload {
        return match tpcc(plan, t, conns, Some(label)).await? {
            crate::exit::EXIT_OK => Ok(()),
            _ => anyhow::bail!("[{label}] {} failed", plan.command.name()),
        };
    }
    stdout::line(format!("[{label}] {} ...", plan.command.name()));
    let lines =
        session::table_job(conns, plan, plan.command == Command::Prepare, |_, _| {}).await?;
    for l in lines
        .iter()
        .flat_map(|l| l.summary.lines())
        .filter(|l| !l.is_empty())
    {
        stdout::line(format!("[{label}] {l}"));
    }
    Ok(())
}
