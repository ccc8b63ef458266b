//! `fleetbench scenario run FILE [--only NAME]`: every scenario of the file on its own
//! agents, prepared, swept and cleaned up in turn (back and forth with `--repeat`), then one
//! table and the JSON, CSV and HTML files. The file itself is read by crate::topology.

use std::path::PathBuf;

use super::Invocation;
use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit;
use crate::plan::{Command, Plan};
use crate::report::doc::Document;
use crate::report::{self, stdout};
use crate::session::{self, Link};
use crate::sweep::{self, Extras, Step, Summary};
use crate::topology::{self, Scenario, ScenarioFile};

/// The agent options and tags given on the command line, passed on to every scenario
/// (its results carry the tags as a single run's do).
fn cli_agent_args(raw: &RawArgs) -> Vec<String> {
    let mut out: Vec<String> = raw.agents.iter().map(|a| format!("--agents={a}")).collect();
    if let Some(k) = &raw.local_agents {
        out.push(format!("--local-agents={k}"));
    }
    out.extend(raw.tag.iter().map(|t| format!("--tag={t}")));
    out
}

/// `fleetbench scenario run FILE [--only NAME]...`.
/// The masked command line goes into every result's metadata.
pub async fn run(inv: &Invocation, link: &Link) -> anyhow::Result<i32> {
    let Invocation {
        raw,
        extras,
        command_line,
    } = inv;
    let path = scenario_path(raw, extras)?;
    let file = topology::load(&path, &cli_agent_args(raw))?;
    let chosen = chosen(&file, &raw.only)?;
    let mut extras = extras.clone();
    if raw.warmup_time.is_none() {
        extras.warmup = std::time::Duration::from_secs(file.warmup_s.unwrap_or(0));
    }
    if raw.cooldown.is_none() {
        extras.cooldown = std::time::Duration::from_secs(file.cooldown_s.unwrap_or(0));
    }
    stdout::line(format!(
        "{}\nScenarios from {}: {}\n",
        report::text::banner(),
        file.path,
        chosen
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let passes = run_passes(&chosen, &file, &extras, command_line, link).await?;
    let done = &passes.done;
    let rows: Vec<(Option<&str>, &Summary)> = done
        .iter()
        .flat_map(|(sc, _, steps)| steps.iter().map(|s| (Some(sc.name.as_str()), &s.summary)))
        .collect();
    let requested = done
        .first()
        .map(|d| d.1.percentiles.clone())
        .unwrap_or_else(|| vec![95.0]);
    stdout::line("Scenarios compared:");
    stdout::print(&sweep::table(&rows, &requested));
    let doc = Document::Scenarios(topology::scenarios_doc(
        &file.path,
        &extras,
        done,
        passes.interrupted,
    ));
    super::write_outputs(raw.json.as_ref(), &extras, &doc)?;
    Ok(exit::of_run(passes.all_clean))
}

/// The scenario file `scenario run FILE` names; the test, threads and rate are the
/// file's, never the command line's.
fn scenario_path(raw: &RawArgs, extras: &Extras) -> Result<PathBuf, UsageError> {
    let usage = |m: &str| UsageError(m.to_string());
    let path = match &raw.words[..] {
        [_, cmd, file] if cmd == "run" => PathBuf::from(file),
        [_, cmd, ..] if cmd != "run" => {
            return Err(usage(&format!(
                "unknown scenario command '{cmd}': expected run"
            )));
        }
        _ => return Err(usage("usage: fleetbench scenario run FILE [--only NAME]")),
    };
    if extras.counts.is_some()
        || extras.rates.is_some()
        || raw.threads.is_some()
        || raw.rate.is_some()
        || raw.test.is_some()
    {
        return Err(usage(
            "the scenario file sets test, threads and rate, not the command line",
        ));
    }
    Ok(path)
}

/// The scenarios `--only` picks (all without it), in the file's order.
fn chosen<'a>(file: &'a ScenarioFile, only: &[String]) -> Result<Vec<&'a Scenario>, UsageError> {
    for o in only {
        if !file.scenarios.iter().any(|s| &s.name == o) {
            let names: Vec<&str> = file.scenarios.iter().map(|s| s.name.as_str()).collect();
            return Err(UsageError(format!(
                "--only {o}: no such scenario in {} (scenarios: {})",
                file.path,
                names.join(", ")
            )));
        }
    }
    Ok(file
        .scenarios
        .iter()
        .filter(|s| only.is_empty() || only.contains(&s.name))
        .collect())
}

/// What the passes over the scenarios did: each scenario with its plan and steps, in the
/// order first run; whether all ran cleanly; whether an interrupt stopped them.
struct Passes<'a> {
    done: Vec<(&'a Scenario, Plan, Vec<Step>)>,
    all_clean: bool,
    interrupted: bool,
}

/// Runs the chosen scenarios, each on its own agents. With --repeat, one pass over every
/// scenario per measurement, back and forth, so that drift over time does not fall on one
/// scenario.
async fn run_passes<'a>(
    chosen: &[&'a Scenario],
    file: &ScenarioFile,
    extras: &Extras,
    command_line: &str,
    link: &Link,
) -> anyhow::Result<Passes<'a>> {
    let mut passes = Passes {
        done: Vec::new(),
        all_clean: true,
        interrupted: false,
    };
    for rep in 1..=extras.repeat {
        for sc in sweep::pass_order(chosen.len(), rep)
            .into_iter()
            .map(|i| chosen[i])
        {
            let plan = Plan {
                command_line: command_line.to_string(),
                ..sc.plan("run", sc.threads[0], &file.path)?
            };
            stdout::line(format!(
                "=== scenario {}{}: {} on {}{}",
                sc.name,
                sc.description
                    .as_deref()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default(),
                plan.workload.name(),
                sc.targets.join(", "),
                if extras.repeat > 1 {
                    format!(", measurement {rep}/{}", extras.repeat)
                } else {
                    String::new()
                }
            ));
            let plan_ref = &plan;
            let (steps, clean, stopped) = crate::local::with_agents(&plan, |addrs| async move {
                run_scenario(sc, plan_ref, extras, rep, &addrs, link, &file.path).await
            })
            .await?;
            passes.all_clean &= clean;
            match passes.done.iter_mut().find(|d| std::ptr::eq(d.0, sc)) {
                Some(d) => d.2.extend(steps),
                None => passes.done.push((sc, plan, steps)),
            }
            if stopped {
                passes.interrupted = true;
                return Ok(passes);
            }
        }
    }
    Ok(passes)
}

/// prepare, sweep, cleanup of one scenario. Cleanup runs even when the sweep failed.
async fn run_scenario(
    sc: &Scenario,
    plan: &Plan,
    extras: &Extras,
    rep: u32,
    addrs: &[String],
    link: &Link,
    path: &str,
) -> anyhow::Result<(Vec<Step>, bool, bool)> {
    let label = format!("[{}] ", sc.name);
    if sc.prepare {
        table_job(sc, Command::Prepare, addrs, link, path).await?;
    }
    let outcome =
        super::sweep::run_steps(plan, extras, &sc.axis(), rep..=rep, addrs, link, &label).await;
    if sc.prepare {
        let cleaned = table_job(sc, Command::Cleanup, addrs, link, path).await;
        if outcome.is_ok() {
            cleaned?;
        }
    }
    outcome
}

/// prepare or cleanup of one scenario's tables, with its own plan of that command.
async fn table_job(
    sc: &Scenario,
    command: Command,
    addrs: &[String],
    link: &Link,
    path: &str,
) -> anyhow::Result<()> {
    let plan = sc.plan(command.name(), sc.threads[0], path)?;
    let conns = session::connect_idle(addrs, &plan.workload, link).await?;
    super::tables::run_labelled(&plan, conns, &sc.name).await
}
