//! fleetbench coordinator: parses a sysbench-style command line into a plan, greets the
//! agents, runs the plan over them and prints one merged report.
//!
//! Exit codes: 0 success; 1 the run failed after it started; 2 bad input or setup (flags,
//! unreachable or incompatible agents); 3 the run finished but an agent was lost or stopped.

pub mod cli;
pub mod local;
pub mod merge;
pub mod plan;
pub mod report;
pub mod session;
pub mod sweep;
pub mod topology;
pub mod wire;

use std::ffi::OsString;
use std::io::Write;

use anyhow::Context;

use crate::plan::{AgentSource, Plan, PlanError};
use crate::session::SessionError;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_DEGRADED: i32 = 3;

/// A command line clap refused, reduced to its one-line message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// The exit code for an error that ended the program.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let setup = err.downcast_ref::<UsageError>().is_some()
        || err.downcast_ref::<PlanError>().is_some()
        || err.downcast_ref::<SessionError>().is_some()
        || err.downcast_ref::<topology::ScenarioError>().is_some()
        || err.downcast_ref::<report::compare::DocError>().is_some();
    if setup { EXIT_USAGE } else { EXIT_FAILED }
}

/// Runs the coordinator with a full argument vector (program name first); returns the exit
/// code for a run that happened, or the error that stopped it.
pub async fn run(args: Vec<OsString>) -> anyhow::Result<i32> {
    // For the result's meta: as typed, secrets masked.
    let command_line = report::meta::masked_command_line(&args);
    let mut raw = match cli::parse(args) {
        Ok(raw) => raw,
        Err(e) if !e.use_stderr() => {
            // --help / --version.
            print!("{e}");
            return Ok(EXIT_OK);
        }
        Err(e) => {
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid arguments");
            let mut line = first.trim_start_matches("error: ").to_string();
            // clap's "did you mean" hint, on the same line.
            use clap::error::{ContextKind, ContextValue};
            for kind in [ContextKind::SuggestedArg, ContextKind::SuggestedValue] {
                match e.get(kind) {
                    Some(ContextValue::String(s)) => {
                        line.push_str(&format!(" (did you mean '{s}'?)"))
                    }
                    Some(ContextValue::Strings(v)) if !v.is_empty() => {
                        line.push_str(&format!(" (did you mean '{}'?)", v.join("' or '")))
                    }
                    _ => {}
                }
            }
            return Err(UsageError(line).into());
        }
    };
    // `fleetbench help` and `fleetbench TEST help` (or `--test=TEST help`).
    let words: Vec<&str> = raw.words.iter().map(String::as_str).collect();
    let help_of = match (raw.test.as_deref(), &words[..]) {
        (None, ["help"]) => Some(None),
        (None, [test, "help"]) => Some(Some(*test)),
        (Some(test), ["help"]) => Some(Some(test)),
        _ => None,
    };
    if let Some(test) = help_of {
        match test {
            None => {
                use clap::CommandFactory;
                print!("{}", cli::RawArgs::command().render_help());
            }
            Some(t) => match cli::test_help(t) {
                Some(h) => print!("{h}"),
                None => {
                    return Err(
                        UsageError(format!("unknown test '{t}': try `fleetbench help`")).into(),
                    );
                }
            },
        }
        return Ok(EXIT_OK);
    }
    let extras = sweep::take_extras(&mut raw)?;
    if raw.test.is_none() {
        match raw.words.first().map(String::as_str) {
            Some("compare") => return report::compare::main(&raw),
            Some("report") if raw.html.is_none() => return report::doc_text::main(&raw),
            Some("report") => return report::html::main(&raw),
            _ => {}
        }
    }
    let token = fleetbench_agent::auth::load(raw.token_file.as_deref()).map_err(UsageError)?;
    let auth = fleetbench_agent::auth::Attach::new(token.as_deref()).map_err(UsageError)?;
    let link = session::Link {
        auth,
        tls: tls_config(&raw)?,
    };
    if raw.test.is_none() {
        match raw.words.first().map(String::as_str) {
            Some("agents") => return list_agents(&raw, &link).await,
            Some("stop") => return stop_agents(&raw, &link).await,
            Some("scenario") => return topology::main(&raw, &extras, &link).await,
            _ => {}
        }
    }
    let plan = Plan {
        command_line,
        ..plan::build(&raw)?
    };
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    for &n in extras.counts.iter().flatten() {
        plan::check_threads(n, &plan.agents)?;
    }
    let (addrs, local) = match &plan.agents {
        AgentSource::Remote(a) => (a.clone(), None),
        AgentSource::Local(..) => {
            let agents = local::start_for(&plan).await?.expect("local agents");
            (agents.addrs.clone(), Some(agents))
        }
    };
    let outcome = run_plan(&plan, &addrs, &link, &extras).await;
    if let Some(agents) = local {
        agents.stop().await;
    }
    outcome
}

/// `fleetbench agents --agents ...`: each agent's version, host, cores, state and round-trip
/// time. Exit 0 when every agent answered, 2 (setup) otherwise, as the README says.
async fn list_agents(raw: &cli::RawArgs, link: &session::Link) -> anyhow::Result<i32> {
    if raw.words.len() > 1 {
        return Err(UsageError(format!(
            "unexpected argument '{}' after 'agents'",
            raw.words[1]
        ))
        .into());
    }
    if raw.agents.is_empty() {
        return Err(UsageError("'fleetbench agents' needs --agents HOST:PORT,...".into()).into());
    }
    let addrs = plan::parse_agents(&raw.agents)?;
    let lines = session::probe(&addrs, link).await;
    print!("{}", report::text::agents_status(&lines));
    Ok(if lines.iter().all(|l| l.result.is_ok()) {
        EXIT_OK
    } else {
        EXIT_USAGE
    })
}

/// `fleetbench stop --agents ...`: stops whatever each agent runs, for whoever started it.
/// Exit 2 when an agent could not be reached or refused, like any other setup problem.
async fn stop_agents(raw: &cli::RawArgs, link: &session::Link) -> anyhow::Result<i32> {
    if raw.agents.is_empty() {
        return Err(UsageError("'fleetbench stop' needs --agents HOST:PORT,...".into()).into());
    }
    let addrs = plan::parse_agents(&raw.agents)?;
    let mut code = EXIT_OK;
    for (addr, r) in session::stop_all(&addrs, link, "fleetbench stop").await {
        match r {
            Ok(run) if run.is_empty() => println!("{addr}: idle"),
            Ok(run) => println!("{addr}: stopped run {run}"),
            Err(e) => {
                println!("{addr}: error: {e}");
                code = EXIT_USAGE;
            }
        }
    }
    Ok(code)
}

/// prepare / cleanup with a progress bar on stderr (hidden when it is not a terminal),
/// then what was done, in sysbench's words, on stdout.
async fn table_job(plan: &Plan, conns: Vec<session::AgentConn>) -> anyhow::Result<i32> {
    let create = plan.command == plan::Command::Prepare;
    println!(
        "fleetbench {} (sysbench 1.0 compatible)\n",
        env!("CARGO_PKG_VERSION")
    );
    let files = match &plan.workload {
        plan::Workload::Fileio(f) => {
            print!("{}", report::text::fileio_options(f, false));
            println!(
                "{}",
                if create {
                    "Creating files for the test..."
                } else {
                    "Removing test files..."
                }
            );
            true
        }
        _ => false,
    };
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(match (create, files) {
            _ if plan.command == plan::Command::Prewarm => "{bar:40} {pos}/{len} tables  eta {eta}",
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
            println!("{s}");
        }
    }
    Ok(EXIT_OK)
}

/// TLS settings for talking to agents, from --tls-ca (and --tls-cert/--tls-key).
fn tls_config(raw: &cli::RawArgs) -> anyhow::Result<Option<tonic::transport::ClientTlsConfig>> {
    let Some(ca) = &raw.tls_ca else {
        return Ok(None);
    };
    let read = |p: &std::path::Path| {
        std::fs::read(p).map_err(|e| UsageError(format!("cannot read {}: {e}", p.display())))
    };
    let mut cfg = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(read(ca)?));
    if let (Some(c), Some(k)) = (&raw.tls_cert, &raw.tls_key) {
        cfg = cfg.identity(tonic::transport::Identity::from_pem(read(c)?, read(k)?));
    }
    Ok(Some(cfg))
}

async fn run_plan(
    plan: &Plan,
    addrs: &[String],
    link: &session::Link,
    extras: &sweep::Extras,
) -> anyhow::Result<i32> {
    if plan.command == plan::Command::Run
        && (extras.counts.is_some() || extras.rates.is_some() || extras.repeat > 1)
    {
        return sweep::run(plan, extras, addrs, link).await;
    }
    // A run's warm-up is its own first seconds, on the same threads and connections.
    let warmed;
    let plan = if plan.command == plan::Command::Run {
        warmed = Plan {
            warmup: extras.warmup,
            ..plan.clone()
        };
        &warmed
    } else {
        plan
    };
    let conns = sweep::connect_idle(addrs, &plan.workload, link).await?;
    match plan.command {
        plan::Command::Run => {}
        plan::Command::Prepare | plan::Command::Cleanup | plan::Command::Prewarm => {
            return table_job(plan, conns).await;
        }
    }
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
    let mut out = std::io::stdout();
    print!("{}", report::text::header_in(plan, &listing, extras.style));
    out.flush().ok();
    let first_pct = plan.percentiles[0];
    let show_intervals = plan.report_interval.is_some();
    // --hlog: created before the run, so that a path it cannot write fails first.
    let hlog = match &extras.hlog {
        Some(path) => Some(
            report::hlog::RunLog::create(path, extras.hlog_per_agent, plan.tick()).with_context(
                || format!("cannot create the HdrHistogram log {}", path.display()),
            )?,
        ),
        None => None,
    };
    let hlog = std::cell::RefCell::new(hlog);
    let go = |ways: &[(usize, merge::Connection)]| {
        if let Some(log) = hlog.borrow_mut().as_mut() {
            let title = format!(
                "fleetbench {} {}: latency in microseconds",
                env!("CARGO_PKG_VERSION"),
                plan.workload.name()
            );
            log.begin(&title, std::time::SystemTime::now() + plan.warmup);
        }
        if extras.style == sweep::ReportStyle::Fleetbench {
            print!("{}", report::text::connections_header(plan, ways));
        }
        println!("Threads started!\n");
        if let Some(line) = sweep::warmup_line(plan) {
            println!("{line}");
        }
        std::io::stdout().flush().ok();
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
            if show_intervals {
                println!(
                    "{}",
                    report::text::interval_line_in(iv, first_pct, &plan.workload, extras.style)
                );
                std::io::stdout().flush().ok();
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
                    print!("{}", report::text::checkpoint_report(plan, c, &span));
                }
            }
        },
        |addr, seq, part| {
            if let Some(log) = hlog.borrow_mut().as_mut() {
                log.agent(addr, seq, part);
            }
        },
    )
    .await;
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            // Nothing half-written left behind unannounced.
            if let Some(note) = hlog.into_inner().and_then(|l| l.abandon()) {
                eprintln!("note: {note}");
            }
            return Err(e.into());
        }
    };
    if let Some(log) = hlog.into_inner() {
        log.finish().map_err(anyhow::Error::msg)?;
    }
    if extras.histogram {
        print!("{}", report::histogram::text(&result.latency()));
    }
    print!(
        "{}",
        report::text::final_report_in(plan, &result, extras.style)
    );
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
    sweep::single_outputs(plan, &result, extras)?;
    let degraded = result
        .agents
        .iter()
        .any(|a| a.status != merge::AgentStatus::Completed);
    Ok(if degraded || result.interrupted {
        EXIT_DEGRADED
    } else {
        EXIT_OK
    })
}
