//! `fleetbench scenario run FILE [--only NAME]`: every scenario of the file on its own
//! agents, prepared, swept and cleaned up in turn (back and forth with `--repeat`), then one
//! table and the JSON, CSV and HTML files. The file itself is read by crate::topology.

use std::path::PathBuf;

use super::Invocation;
use crate::cli::RawArgs;
use crate::error::{SessionError, UsageError};
use crate::exit;
use crate::plan::{Command, Plan};
use crate::report::doc::Document;
use crate::report::{self, stdout};
use crate::session::{self, Link};
use crate::sweep::{self, Extras, Step, Summary};
use crate::topology::{self, Scenario, ScenarioFile};

/// `fleetbench scenario --help` and `fleetbench scenario help`.
pub const HELP: &str = "\
Usage: fleetbench scenario run|cleanup FILE [options]

  run FILE      every scenario of the file in turn: prepare, its sweep, cleanup; then one
                table, scenario by thread count
  cleanup FILE  drops each scenario's tables (after a run that was stopped before its
                own cleanup, or when prepare refused because the tables exist)

A scenario file (TOML) names the database targets once ([targets] NAME = \"mysql://...\")
and, per [[scenario]], the targets it uses, how the tables are spread over them
(table-map) and which options differ; at the top or per scenario: test, threads, rate,
time, warmup-time, cooldown, agents, [options] (any fleetbench option without the dashes),
prepare = false (tables loaded beforehand: no prepare, no cleanup). The whole file is
checked before anything runs.

Options:
  --only NAME         only this scenario (repeatable; all without it)
  --repeat N          go round all the scenarios N times, back and forth
  --json FILE         the whole result (a scenarios document)
  --csv FILE          one row per scenario and step, appended
  --html FILE         a self-contained HTML report with charts
  --agents LIST       the agents, host:port comma-separated (else the file's agents,
                      --local-agents or one embedded agent)
  --token-file FILE   the agents' token (or FLEETBENCH_TOKEN)

The test, threads and rate come from the file, not the command line.
More: docs/sweeps-and-scenarios.md
";

/// Whether a command line asks for the scenario command's help: `scenario --help` (or
/// `-h`, also after `run FILE`) or `scenario help`.
pub fn asks_help(args: &[std::ffi::OsString]) -> bool {
    let words: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let Some(at) = words.iter().position(|w| *w == "scenario") else {
        return false;
    };
    // The first word, not an option's value (`--json scenario`).
    if words[..at].iter().any(|w| !w.starts_with('-')) {
        return false;
    }
    let rest = &words[at + 1..];
    rest.first() == Some(&"help") || rest.iter().any(|w| *w == "--help" || *w == "-h")
}

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
        ..
    } = inv;
    let (cmd, path) = scenario_path(raw, extras)?;
    let file = topology::load(&path, &cli_agent_args(raw))?;
    let chosen = chosen(&file, &raw.only)?;
    if cmd == Command::Cleanup {
        return cleanup(&chosen, &file, link).await;
    }
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
    let regressed = crate::catalog::remember(&extras.catalog, &doc).await;
    if let Some(w) = &extras.web {
        w.done(crate::report::html::render(&doc));
    }
    Ok(super::after_regression(
        exit::of_run(passes.all_clean),
        regressed,
        &extras.catalog,
    ))
}

/// `fleetbench scenario cleanup FILE [--only NAME]...`: drops each chosen scenario's
/// tables as its own cleanup after a run does (scenarios with `prepare = false` keep
/// theirs), on its own agents.
async fn cleanup(chosen: &[&Scenario], file: &ScenarioFile, link: &Link) -> anyhow::Result<i32> {
    stdout::line(format!(
        "{}\nCleaning up the scenarios of {}\n",
        report::text::banner(),
        file.path
    ));
    for sc in chosen {
        if !sc.prepare {
            stdout::line(format!(
                "[{}] prepare = false: its tables are not fleetbench's to drop, left alone",
                sc.name
            ));
            continue;
        }
        let plan = sc.plan(Command::Cleanup.name(), sc.threads[0], &file.path)?;
        crate::local::with_agents(&plan, |addrs| async move {
            table_job(sc, Command::Cleanup, &addrs, link, &file.path).await
        })
        .await?;
    }
    Ok(exit::EXIT_OK)
}

/// The command and scenario file `scenario run|cleanup FILE` names; the test, threads and
/// rate are the file's, never the command line's.
fn scenario_path(raw: &RawArgs, extras: &Extras) -> Result<(Command, PathBuf), UsageError> {
    let usage = |m: &str| UsageError(m.to_string());
    let (cmd, path) = match &raw.words[..] {
        [_, cmd, file] if cmd == "run" => (Command::Run, PathBuf::from(file)),
        [_, cmd, file] if cmd == "cleanup" => (Command::Cleanup, PathBuf::from(file)),
        [_, cmd, ..] if cmd != "run" && cmd != "cleanup" => {
            return Err(usage(&format!(
                "unknown scenario command '{cmd}': expected run or cleanup (`fleetbench scenario help`)"
            )));
        }
        _ => {
            return Err(usage(
                "usage: fleetbench scenario run|cleanup FILE [--only NAME] (`fleetbench scenario help`)",
            ));
        }
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
    Ok((cmd, path))
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
    super::tables::run_labelled(&plan, conns, &sc.name)
        .await
        .map_err(|e| scenario_advice(e, &sc.name, path))
}

/// A table job's "run cleanup first" names the scenario command that drops a scenario's
/// tables, not the single run's `cleanup`.
fn scenario_advice(mut e: anyhow::Error, scenario: &str, path: &str) -> anyhow::Error {
    if let Some(SessionError::CheckRefused { reasons, .. }) = e.downcast_mut::<SessionError>() {
        *reasons = reasons.replace(
            "(run cleanup first, or pick other --tables)",
            &format!(
                "(run `fleetbench scenario cleanup {path} --only {scenario}` first, or pick other tables in the file)"
            ),
        );
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(Into::into).collect()
    }

    #[test]
    fn a_refusal_to_prepare_names_scenario_cleanup() {
        let e = anyhow::Error::from(SessionError::CheckRefused {
            what: "prepare",
            reasons: "tables already exist on target default: sbtest1 (run cleanup first, or pick other --tables)".into(),
        });
        let text = scenario_advice(e, "direct", "s.toml").to_string();
        assert!(
            text.contains("(run `fleetbench scenario cleanup s.toml --only direct` first, or pick other tables in the file)"),
            "{text}"
        );
        assert!(!text.contains("run cleanup first"), "{text}");
    }

    #[test]
    fn scenario_help_is_asked_for_where_the_words_say_so() {
        for args in [
            &["fb", "scenario", "--help"][..],
            &["fb", "scenario", "-h"],
            &["fb", "scenario", "help"],
            &["fb", "scenario", "run", "s.toml", "--help"],
        ] {
            assert!(asks_help(&os(args)), "{args:?}");
        }
        for args in [
            &["fb", "--help"][..],
            &["fb", "scenario", "run", "help.toml"],
            &["fb", "cpu", "--help"],
            &["fb", "oltp_read_write", "--json", "scenario", "--help"],
        ] {
            assert!(!asks_help(&os(args)), "{args:?}");
        }
        // What the help says is checked where a user sees it (tests/tests/scenario.rs).
    }
}
