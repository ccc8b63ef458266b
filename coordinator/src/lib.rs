//! fleetbench coordinator: parses a sysbench-style command line into a plan, greets the
//! agents, runs the plan over them and prints one merged report.
//!
//! This file only dispatches: each command lives in crate::commands, the exit codes in
//! crate::exit, and what reaches stdout goes through crate::report::stdout.

pub mod catalog;
pub mod cli;
pub mod commands;
pub mod downtime;
pub mod error;
pub mod exit;
pub mod local;
pub mod merge;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod replication;
pub mod report;
pub mod script;
pub mod server_ticks;
pub mod servers;
pub mod session;
pub mod sweep;
pub mod topology;
pub mod web;
pub mod wire;

use std::ffi::OsString;

use commands::{Parsed, Which};
pub use error::UsageError;
pub use exit::{EXIT_DEGRADED, EXIT_FAILED, EXIT_OK, EXIT_USAGE, exit_code};

/// Runs the coordinator with a full argument vector (program name first); returns the exit
/// code for a run that happened, or the error that stopped it (a report that could not be
/// written to standard output included).
pub async fn run(args: Vec<OsString>) -> anyhow::Result<i32> {
    report::stdout::settle(run_command(args).await)
}

async fn run_command(args: Vec<OsString>) -> anyhow::Result<i32> {
    // For the result's meta: as typed, secrets masked.
    let argv = report::meta::masked_args(&args);
    let command_line = report::meta::shell_line(&argv);
    if commands::pgbench::asked(&args) {
        return commands::pgbench::run(args, command_line).await;
    }
    let mut raw = match commands::parse(args)? {
        Parsed::Shown(text) => {
            report::stdout::print(&text);
            return Ok(EXIT_OK);
        }
        Parsed::Args(raw) => raw,
    };
    // Never a silently ignored option: one the command does not take is refused now.
    for note in commands::honoured::check(&raw)? {
        eprintln!("note: {note}");
    }
    // Output paths, before anything runs: a missing directory costs a second, not a run.
    output::check_all(&raw)?;
    // A CSV file collects runs: one of another layout is refused now, not after the run.
    // (A comparison's CSV replaces its file.)
    if let Some(path) = &raw.csv
        && matches!(Which::of(&raw), Which::Bench | Which::Scenario)
    {
        report::csv::check_existing(path)
            .map_err(|why| UsageError(format!("--csv {}: {why}", path.display())))?;
    }
    let mut extras = sweep::take_extras(&mut raw)?;
    if matches!(Which::of(&raw), Which::Bench | Which::Scenario) {
        extras.catalog = catalog::Settings::of(&raw)?;
    }
    let web_settings = web::WebSettings::of(&raw)?;
    let mut page = None;
    if let Some(w) = &web_settings
        && matches!(Which::of(&raw), Which::Bench | Which::Scenario)
    {
        let live = std::sync::Arc::new(web::LiveView::default());
        let started = w
            .start(live.clone(), extras.catalog.location.clone())
            .await?;
        extras.web = Some(live);
        page = Some(started);
    }
    if matches!(Which::of(&raw), Which::Bench | Which::Scenario)
        && (extras.metrics_listen.is_some() || extras.metrics_push.is_some())
    {
        let (exporter, bound) =
            metrics::Exporter::start(extras.metrics_listen, extras.metrics_push.clone())
                .await
                .map_err(|e| UsageError::new(e.to_string()))?;
        if let Some(addr) = bound {
            eprintln!("note: serving the run's metrics for Prometheus at http://{addr}/metrics");
        }
        extras.metrics = Some(exporter);
    }
    let code = match Which::of(&raw) {
        Which::Serve => commands::serve::run(&raw, web_settings).await,
        Which::Compare => commands::docs::compare(&raw),
        Which::Report => commands::docs::report(&raw),
        Which::Runs => commands::runs::run(&raw).await,
        Which::Agents => commands::agents::list(&raw, &commands::link(&raw)?).await,
        Which::Stop => commands::agents::stop(&raw, &commands::link(&raw)?).await,
        Which::Scenario | Which::Bench => {
            let link = commands::link(&raw)?;
            let inv = commands::Invocation {
                raw,
                extras,
                command_line,
                argv,
            };
            if matches!(Which::of(&inv.raw), Which::Scenario) {
                commands::scenario::run(&inv, &link).await
            } else {
                commands::bench::run(&inv, &link).await
            }
        }
    };
    // The pages open on the run get its report before the coordinator goes.
    if let Some(p) = page {
        p.linger(std::time::Duration::from_secs(3)).await;
    }
    code
}
