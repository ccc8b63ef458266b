//! `--threads A,B,C run` and `--rate A,B,C run` (and `--repeat N`): one measured run per
//! step, a line per step, then the table and the JSON, CSV and HTML files. The steps of a
//! scenario go through the same `run_steps`.

use super::measure::{Live, measure};
use crate::exit;
use crate::merge::{AgentStatus, RunResult};
use crate::plan::{Plan, PlanError, Workload};
use crate::report::doc::Document;
use crate::report::{self, stdout};
use crate::session::{self, Link};
use crate::sweep::{self, Axis, Extras, Step, Summary};

/// Runs the steps of a sweep along `axis`; returns the steps done and whether all of them
/// ran cleanly. Stops early on an interrupt.
pub async fn run_steps(
    plan: &Plan,
    extras: &Extras,
    axis: &Axis,
    reps: std::ops::RangeInclusive<u32>,
    addrs: &[String],
    link: &Link,
    label: &str,
) -> anyhow::Result<(Vec<Step>, bool, bool)> {
    let mut steps = Vec::new();
    let mut all_clean = true;
    let mut interrupted = false;
    // The client hosts saturated in some step, with those steps' names and in how many of
    // their measurements.
    let mut saturated: Vec<(String, Vec<(String, u32)>)> = Vec::new();
    let n = axis.len();
    let total = n as u32 * extras.repeat;
    // Repeats go round the whole list, so that drift over time (a warming buffer pool, a
    // neighbour's load) spreads over every count or rate instead of biasing one.
    let order: Vec<(u32, usize)> = reps
        .flat_map(|r| sweep::pass_order(n, r).into_iter().map(move |i| (r, i)))
        .collect();
    for (k, &(rep, i)) in order.iter().enumerate() {
        if k > 0 && !extras.cooldown.is_zero() {
            tokio::time::sleep(extras.cooldown).await;
        }
        let p = axis.at(plan, i);
        let number = k as u32 + 1;
        let name = axis.step_name(&p, i);
        let step = if extras.repeat > 1 {
            format!(
                "{label}step {number}/{total}: {name}, measurement {rep}/{}",
                extras.repeat
            )
        } else {
            format!("{label}step {number}/{total}: {name}")
        };
        stdout::line(&step);
        let p = Plan {
            warmup: extras.warmup,
            ..p
        };
        let conns = session::connect_idle(addrs, &p.workload, link).await?;
        let live = Live {
            style: extras.style,
            banner: false,
            hlog: None,
            metrics: extras.metrics.clone(),
            hooks: None,
            web: extras.web.clone(),
            live_agents: extras.live_agents,
        };
        let r = measure(&p, conns, live).await?;
        // A step measured on a saturated client host: said once, after the last step (the
        // JSON has the figures).
        for host in report::hosts::saturated_hosts(&p, &r) {
            // A step measured again (--repeat) is named once, with its count.
            match saturated.iter_mut().find(|(h, _)| *h == host) {
                Some((_, steps)) => match steps.iter_mut().find(|(s, _)| *s == name) {
                    Some((_, n)) => *n += 1,
                    None => steps.push((name.clone(), 1)),
                },
                None => saturated.push((host, vec![(name.clone(), 1)])),
            }
        }
        if extras.histogram {
            stdout::print(&report::histogram::text(&r.latency()));
        }
        let measured = Step::of(report::json::build(&p, &r), rep);
        let summary = &measured.summary;
        stdout::line(format!(
            "{step}: {} {:.2}{} lat (ms,{}%): {:.2}{}\n",
            if summary.qps.is_some() {
                "tps"
            } else {
                "events/s"
            },
            summary.tps,
            summary
                .qps
                .map(|q| format!(" qps {q:.2}"))
                .unwrap_or_default(),
            report::pct_label(p.percentiles[0]),
            r.latency().requested_ms(p.percentiles[0]),
            report::text::rate_shortfall(&p, &r)
                .map(|why| format!("\n{step}: warning: {why}"))
                .unwrap_or_default(),
        ));
        for line in report::text::servers::step_lines(&measured.result.totals.targets) {
            stdout::line(format!("{step}: {line}\n"));
        }
        if r.interrupted {
            stdout::line(format!(
                "{step}: {}: the figures above cover the time until the interrupt; the steps after it were not run",
                sweep::INTERRUPTED
            ));
        }
        // A target down fails the step as a lost agent does (exit 3 for the sweep).
        let (warnings, down) = crate::downtime::check(&p, &r);
        for w in warnings {
            eprintln!("{step}: {w}");
        }
        all_clean &= clean(&r) && !down;
        steps.push(measured);
        if r.interrupted {
            interrupted = true;
            break;
        }
    }
    for (host, steps) in &saturated {
        eprintln!(
            "{label}WARNING: client host {host} was saturated in {}: {}: these figures may measure the client, not the server (host_load in the JSON has the figures)",
            if steps.len() == 1 { "step" } else { "steps" },
            saturated_steps(steps, extras.repeat)
        );
    }
    Ok((steps, all_clean, interrupted))
}

/// "4 threads, 8 threads", or with `--repeat` "4 threads (in 3 of 3 repeats)".
fn saturated_steps(steps: &[(String, u32)], repeats: u32) -> String {
    let named: Vec<String> = steps
        .iter()
        .map(|(s, n)| {
            if repeats > 1 {
                format!("{s} (in {n} of {repeats} repeats)")
            } else {
                s.clone()
            }
        })
        .collect();
    named.join(", ")
}

/// Whether every agent completed and nobody interrupted.
fn clean(r: &RunResult) -> bool {
    !r.interrupted && r.agents.iter().all(|a| a.status == AgentStatus::Completed)
}

/// What a sweep command runs: steps over rates or thread counts, or one run measured
/// again and again (`--repeat` alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SweepKind {
    Rates,
    Threads,
    Repeated,
}

impl SweepKind {
    fn of(axis: &Axis) -> SweepKind {
        match axis {
            Axis::Rates(_) => SweepKind::Rates,
            Axis::Threads(c) if c.len() > 1 => SweepKind::Threads,
            Axis::Threads(_) => SweepKind::Repeated,
        }
    }

    /// The title of its start line.
    fn title(self) -> &'static str {
        match self {
            SweepKind::Rates => "Rate sweep",
            SweepKind::Threads => "Thread sweep",
            SweepKind::Repeated => "Repeated run",
        }
    }

    /// The heading of its table.
    fn table_heading(self) -> &'static str {
        match self {
            SweepKind::Repeated => "Measurements",
            other => other.title(),
        }
    }
}

/// `--threads A,B,C ... run` or `--rate A,B,C ... run`: every step, then the table, CSV,
/// JSON and HTML.
pub async fn run(
    plan: &Plan,
    extras: &Extras,
    addrs: &[String],
    link: &Link,
) -> anyhow::Result<i32> {
    let axis = Axis::of(plan, extras);
    if matches!(&plan.workload, Workload::Oltp(o)
        if o.config.script == fleetbench_model::workloads::oltp::Script::BulkInsert)
    {
        return Err(PlanError::NotSupported("a thread sweep of bulk_insert".into()).into());
    }
    let points = match &axis {
        Axis::Threads(c) => format!(
            "{} threads",
            c.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        Axis::Rates(r) => format!(
            "{} {} at {} threads",
            r.iter()
                .map(|&x| report::format::rate_label(x))
                .collect::<Vec<_>>()
                .join(", "),
            sweep::rate_unit(&plan.workload),
            plan.threads
        ),
    };
    stdout::line(format!(
        "{}\n{} of {}: {}, {} per step{}{}{}\n",
        report::text::banner(),
        SweepKind::of(&axis).title(),
        plan.workload.name(),
        points,
        plan.time
            .map_or("no time limit".into(), |t| format!("{}s", t.as_secs())),
        if extras.warmup.is_zero() {
            String::new()
        } else {
            format!(", {}s warm-up", extras.warmup.as_secs())
        },
        if extras.cooldown.is_zero() {
            String::new()
        } else {
            format!(", {}s cool-down", extras.cooldown.as_secs())
        },
        if extras.repeat > 1 {
            format!(", {} measurements each", extras.repeat)
        } else {
            String::new()
        },
    ));
    let (steps, all_clean, interrupted) =
        run_steps(plan, extras, &axis, 1..=extras.repeat, addrs, link, "").await?;
    let rows: Vec<(Option<&str>, &Summary)> = steps.iter().map(|s| (None, &s.summary)).collect();
    stdout::line(format!("{}:", SweepKind::of(&axis).table_heading()));
    stdout::print(&sweep::table(&rows, &plan.percentiles));
    let doc = Document::Sweep(sweep::sweep_doc(plan, extras, &steps, interrupted));
    super::write_outputs(plan.json.as_ref(), extras, &doc)?;
    let regressed = crate::catalog::remember(&extras.catalog, &doc).await;
    if let Some(w) = &extras.web {
        w.done(report::html::render(&doc));
    }
    Ok(super::after_regression(
        exit::of_run(all_clean),
        regressed,
        &extras.catalog,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_steps_warning_says_in_how_many_repeats() {
        let steps = [("4 threads".to_string(), 3), ("8 threads".to_string(), 1)];
        assert_eq!(
            saturated_steps(&steps, 3),
            "4 threads (in 3 of 3 repeats), 8 threads (in 1 of 3 repeats)"
        );
        assert_eq!(saturated_steps(&steps[..1], 1), "4 threads");
    }
}
