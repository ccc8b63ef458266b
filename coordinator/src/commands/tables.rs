//! prepare, cleanup and prewarm: the agents create, load, drop or read their share of the
//! tables (or files), with progress on stderr, then say what was done in sysbench's words.

use crate::plan::{Command, Plan, Workload};
use crate::report::{self, stdout};
use crate::session::{self, AgentConn};

/// A table job of a plan from the command line: the banner, a progress bar on stderr
/// (hidden when it is not a terminal), then each agent's summary.
pub async fn run(plan: &Plan, conns: Vec<AgentConn>) -> anyhow::Result<i32> {
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
        if !s.is_empty() {
            stdout::line(s);
        }
    }
    Ok(crate::exit::EXIT_OK)
}

/// A table job inside a scenario: no bar, every line of the agents' summaries under the
/// scenario's name.
pub async fn run_labelled(plan: &Plan, conns: Vec<AgentConn>, label: &str) -> anyhow::Result<()> {
    stdout::line(format!("[{label}] {} ...", plan.command.name()));
    let lines =
        session::table_job(conns, plan, plan.command == Command::Prepare, |_, _| {}).await?;
    for l in lines
        .iter()
        .flat_map(|l| l.lines())
        .filter(|l| !l.is_empty())
    {
        stdout::line(format!("[{label}] {l}"));
    }
    Ok(())
}
