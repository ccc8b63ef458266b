//! prepare, cleanup and prewarm: the agents create, load, drop or read their share of the
//! tables (or files), with progress on stderr, then say what was done in sysbench's words.
//! A job interrupted by a signal (Ctrl-C, SIGTERM) is stopped on every agent, and the
//! error says which tables are complete, partial or not started, and the cleanup command.

use fleetbench_model::workloads::tpcc::TABLES as TPCC_TABLES;
use fleetbench_model::workloads::tpcc::{PrepareStep, TpccConfig};

use crate::error::{AgentEnd, Interrupted, SessionError};
use crate::plan::{Command, Plan, Workload};
use crate::report::progress::{JobLines, Unit};
use crate::report::{self, stdout};
use crate::session::{self, AgentConn};

/// A table job that did not finish because it was interrupted: the whole account, over
/// several lines (exit code 1, as a job that failed once it ran).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unfinished(pub String);

/// A table job of a plan from the command line: the banner, a progress bar on stderr (a
/// plain line every 10 s instead when it is not a terminal), then each agent's summary.
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
    let (template, unit) = match (create, files) {
        _ if plan.command == Command::Prewarm => (
            "{bar:40} {pos}/{len} tables  eta {eta}",
            Unit::Count("tables"),
        ),
        (true, false) => (
            "{bar:40} {pos}/{len} rows  {rows_per_sec}  eta {eta}",
            Unit::Rows,
        ),
        (false, false) => ("{bar:40} {pos}/{len} tables", Unit::Count("tables")),
        (true, true) => (
            "{bar:40} {bytes}/{total_bytes}  {bytes_per_sec}  eta {eta}",
            Unit::Bytes,
        ),
        (false, true) => ("{bar:40} {pos}/{len} files", Unit::Count("files")),
    };
    let bar = indicatif::ProgressBar::new(0);
    let lines = JobLines::new(plan.command.name(), unit);
    let summaries = match table_job_on_bar(conns, plan, create, (bar, lines), template).await {
        Err(SessionError::Interrupted(i)) => {
            return Err(Unfinished(interrupted_account(plan, &i, None)).into());
        }
        other => other?,
    };
    for s in summaries {
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
        let (template, unit) = if step == PrepareStep::Load && create {
            (
                "{bar:40} {pos}/{len} rows  {rows_per_sec}  eta {eta}",
                Unit::Rows,
            )
        } else {
            ("{bar:40} {pos}/{len} steps", Unit::Count("steps"))
        };
        // Where stderr is a log: a plain line every 10 s, under the scenario's name.
        let lines = JobLines::new(
            &match label {
                Some(l) => format!("[{l}] {}", step_name(plan.command, step)),
                None => step_name(plan.command, step).to_string(),
            },
            unit,
        );
        let started = std::time::Instant::now();
        let summaries = match table_job_on_bar(conns.clone(), &plan, create, (bar, lines), template)
            .await
        {
            Err(SessionError::Interrupted(i)) => {
                let account = interrupted_account(&plan, &i, Some(step));
                return Err(Unfinished(match label {
                    Some(l) => format!("[{l}] {account}"),
                    None => account,
                })
                .into());
            }
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

/// What a TPC-C step's plain progress lines call it.
fn step_name(command: Command, step: PrepareStep) -> &'static str {
    match (command, step) {
        (Command::Cleanup, _) => "cleanup",
        (_, PrepareStep::Create) => "create",
        (_, PrepareStep::Load) => "load",
        (_, PrepareStep::Index) => "index",
        (_, PrepareStep::Check) => "check",
    }
}

/// A load's rate as the progress bar shows it: whole rows a second, thousands grouped.
fn rows_per_sec(rate: f64) -> String {
    let n = rate.max(0.0).round() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out} rows/s")
}

/// Runs the table job of `plan` on `conns` with its progress on `bar`, drawn with
/// `template` and cleared at the end, and as plain `lines` where stderr is no terminal;
/// each agent's summary.
async fn table_job_on_bar(
    conns: Vec<AgentConn>,
    plan: &Plan,
    create: bool,
    (bar, mut lines): (indicatif::ProgressBar, Option<JobLines>),
    template: &str,
) -> Result<Vec<session::JobSummary>, SessionError> {
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .map(|style| {
                // Whole rows a second ("126,278 rows/s"), not indicatif's four decimals.
                style.with_key(
                    "rows_per_sec",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", rows_per_sec(state.per_sec()));
                    },
                )
            })
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let summaries = session::table_job(conns, plan, create, |done, total, notes| {
        bar.set_length(total);
        bar.set_position(done);
        if let Some(l) = lines.as_mut() {
            l.update(done, total);
        }
        // Above the bar, as they happen.
        for n in notes {
            bar.suspend(|| stdout::line(n));
        }
    })
    .await;
    bar.finish_and_clear();
    summaries
}

/// A table job inside a scenario: no bar, every line of the agents' summaries under the
/// scenario's name.
pub async fn run_labelled(plan: &Plan, conns: Vec<AgentConn>, label: &str) -> anyhow::Result<()> {
    if let Workload::Script(s) = &plan.workload {
        stdout::line(format!("[{label}] {} ...", s.command));
        return match super::script::run(plan, conns).await? {
            crate::exit::EXIT_OK => Ok(()),
            _ => anyhow::bail!("[{label}] {} failed", s.command),
        };
    }
    if let Workload::Tpcc(t) = &plan.workload {
        return match tpcc(plan, t, conns, Some(label)).await? {
            crate::exit::EXIT_OK => Ok(()),
            _ => anyhow::bail!("[{label}] {} failed", plan.command.name()),
        };
    }
    stdout::line(format!("[{label}] {} ...", plan.command.name()));
    let unit = match (&plan.workload, plan.command) {
        (_, Command::Prewarm) => Unit::Count("tables"),
        (Workload::Fileio(_), Command::Prepare) => Unit::Bytes,
        (Workload::Fileio(_), _) => Unit::Count("files"),
        (_, Command::Prepare) => Unit::Rows,
        _ => Unit::Count("tables"),
    };
    let mut lines = JobLines::new(&format!("[{label}] {}", plan.command.name()), unit);
    let notes = |done: u64, total: u64, notes: &[String]| {
        if let Some(l) = lines.as_mut() {
            l.update(done, total);
        }
        for n in notes {
            stdout::line(format!("[{label}] {n}"));
        }
    };
    let lines = match session::table_job(conns, plan, plan.command == Command::Prepare, notes).await
    {
        Err(SessionError::Interrupted(i)) => {
            let account = interrupted_account(plan, &i, None);
            return Err(Unfinished(format!("[{label}] {account}")).into());
        }
        other => other?,
    };
    for l in lines
        .iter()
        .flat_map(|l| l.summary.lines())
        .filter(|l| !l.is_empty())
    {
        stdout::line(format!("[{label}] {l}"));
    }
    Ok(())
}

/// What an interrupted table job leaves behind, for the user: a first line, then one line
/// per agent (OLTP: its tables complete, partial and not started, in the agent's words;
/// fileio: the files it removed again) or, for TPC-C, per table, and the command that
/// drops what was created. `step` is TPC-C's step that was interrupted.
fn interrupted_account(plan: &Plan, i: &Interrupted, step: Option<PrepareStep>) -> String {
    if !i.begun {
        return i.to_string();
    }
    let mut lines = vec![format!(
        "{} interrupted by {} before it finished",
        i.what, i.signal
    )];
    if let (Workload::Tpcc(t), Some(step)) = (&plan.workload, step) {
        lines.push(tpcc_state(t, step, i));
    }
    for (agent, end) in &i.agents {
        lines.push(match end {
            AgentEnd::Finished(_) => format!("agent {agent}: finished its share before the stop"),
            AgentEnd::Stopped(why) => format!("agent {agent}: {why}"),
            AgentEnd::Silent => {
                format!("agent {agent}: did not say where it stopped; take its share as partial")
            }
        });
    }
    match plan.command {
        Command::Prepare => lines.push(format!(
            "to drop what was created: {}",
            cleanup_command(&plan.command_line)
        )),
        Command::Cleanup => lines.push(format!(
            "to finish dropping: {}",
            if plan.command_line.is_empty() {
                "run the same cleanup again".to_string()
            } else {
                plan.command_line.clone()
            }
        )),
        _ => {}
    }
    lines.join("\n  ")
}

/// Where TPC-C's tables stand after step `step` was interrupted.
fn tpcc_state(t: &TpccConfig, step: PrepareStep, i: &Interrupted) -> String {
    let all = TPCC_TABLES.join(", ");
    match step {
        // One agent creates the nine tables in order, one step each.
        PrepareStep::Create => {
            let made = (i.done as usize).min(TPCC_TABLES.len());
            format!(
                "complete: none; partial (created, empty): {}; not started: {}",
                none_if_empty(&TPCC_TABLES[..made].join(", ")),
                none_if_empty(&TPCC_TABLES[made..].join(", "))
            )
        }
        PrepareStep::Load => format!(
            "complete: none; partial (loading stopped; last reported {} of {} rows of {} warehouses): {all}",
            i.done, i.total, t.options.warehouses
        ),
        _ => format!(
            "loaded in full: {all}; partial: their secondary indexes{} ({} of {} added)",
            if t.options.foreign_keys {
                " and foreign keys"
            } else {
                ""
            },
            i.done,
            i.total
        ),
    }
}

fn none_if_empty(s: &str) -> &str {
    if s.is_empty() { "none" } else { s }
}

/// The command line with `cleanup` in place of its `prepare` word (the last one, so that
/// an option value of that name stays); passwords stay masked as the line shows them.
fn cleanup_command(command_line: &str) -> String {
    let mut words: Vec<&str> = command_line.split(' ').collect();
    let Some(at) = words.iter().rposition(|w| *w == "prepare") else {
        return "the same command line with cleanup in place of prepare".into();
    };
    words[at] = "cleanup";
    let line = words.join(" ");
    if line.contains("***") {
        format!("{line} (with the password where it shows ***)")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_rate_reads_in_whole_rows() {
        assert_eq!(rows_per_sec(126_277.988_1), "126,278 rows/s");
        assert_eq!(rows_per_sec(999.4), "999 rows/s");
        assert_eq!(rows_per_sec(1_000.0), "1,000 rows/s");
        assert_eq!(rows_per_sec(f64::NAN), "0 rows/s");
    }

    fn plan(args: &[&str]) -> Plan {
        let raw =
            crate::cli::parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap();
        Plan {
            command_line: format!("fleetbench {}", args.join(" ")),
            ..crate::plan::build(&raw).unwrap()
        }
    }

    #[test]
    fn the_cleanup_command_replaces_the_last_prepare_word() {
        assert_eq!(
            cleanup_command("fleetbench oltp_read_write --tables=4 prepare --threads=2"),
            "fleetbench oltp_read_write --tables=4 cleanup --threads=2"
        );
        assert_eq!(
            cleanup_command("fleetbench --mysql-password=*** --table-name=prepare tpcc prepare"),
            "fleetbench --mysql-password=*** --table-name=prepare tpcc cleanup (with the password where it shows ***)"
        );
        assert!(cleanup_command("fleetbench parallel_prepare.lua run").contains("in place of"));
    }

    #[test]
    fn an_interrupted_prepare_names_each_agents_tables_and_the_cleanup() {
        let p = plan(&[
            "oltp_read_write",
            "--tables=3",
            "--agents=a:1,b:2",
            "prepare",
        ]);
        let i = Interrupted {
            what: "prepare",
            signal: "SIGINT",
            begun: true,
            agents: vec![
                (
                    "a:1".into(),
                    AgentEnd::Stopped(
                        "stopped before it finished; complete: sbtest1 on default; partial: sbtest2 on default; not started: none".into(),
                    ),
                ),
                ("b:2".into(), AgentEnd::Silent),
            ],
            done: 10,
            total: 30,
        };
        let text = interrupted_account(&p, &i, None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "prepare interrupted by SIGINT before it finished");
        assert!(lines[1].contains("agent a:1: stopped before it finished; complete: sbtest1"));
        assert!(lines[2].contains("agent b:2: did not say"));
        assert_eq!(
            lines[3],
            "  to drop what was created: fleetbench oltp_read_write --tables=3 --agents=a:1,b:2 cleanup"
        );
        // Interrupted in the dry run: nothing to drop.
        let early = Interrupted {
            begun: false,
            agents: Vec::new(),
            ..i
        };
        assert_eq!(
            interrupted_account(&p, &early, None),
            "prepare interrupted by SIGINT before it began: nothing was created or dropped"
        );
    }

    #[test]
    fn an_interrupted_tpcc_prepare_says_which_step_left_what() {
        let p = plan(&["tpcc", "--warehouses=2", "prepare"]);
        let Workload::Tpcc(t) = &p.workload else {
            panic!("not tpcc")
        };
        let at = |done, total| Interrupted {
            what: "prepare",
            signal: "SIGTERM",
            begun: true,
            agents: Vec::new(),
            done,
            total,
        };
        let created = tpcc_state(t, PrepareStep::Create, &at(2, 9));
        assert!(
            created.starts_with("complete: none; partial (created, empty): warehouse, district; not started: customer,"),
            "{created}"
        );
        let load = tpcc_state(t, PrepareStep::Load, &at(500, 1000));
        assert!(
            load.contains("500 of 1000 rows") && load.contains("order_line"),
            "{load}"
        );
        let index = tpcc_state(t, PrepareStep::Index, &at(3, 10));
        assert!(index.starts_with("loaded in full: warehouse,"), "{index}");
        let text = interrupted_account(&p, &at(500, 1000), Some(PrepareStep::Load));
        assert!(text.ends_with("cleanup"), "{text}");
    }
}
