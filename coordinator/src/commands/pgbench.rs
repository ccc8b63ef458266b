//! `fleetbench pgbench [pgbench options] [DBNAME]`: pgbench's command line over the agents.
//! `-i` runs the initialisation steps one Prepare call each (the loads spread over the
//! agents by ranges of accounts), with pgbench's lines on stderr; a run reads the tables'
//! scale, vacuums unless `-n`, runs the built-in scripts on the agents' clients and prints
//! pgbench's report, then fleetbench's percentiles and per-agent block.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use anyhow::Context;
use fleetbench_model::workloads::pgbench::Step;

use crate::error::UsageError;
use crate::exit;
use crate::merge::{MergedInterval, RunResult};
use crate::plan::pgbench::{PgbenchArgs, load_scripts, parse};
use crate::plan::{AgentSource, Command, Plan, Workload};
use crate::report::pgbench_log::{Columns, LogFiles};
use crate::report::text::pgbench as layout;
use crate::report::{self, stdout};
use crate::session::{self, AgentConn, AgentTick, Link, RunObserver};

/// pgbench's exit code when clients were aborted: the figures are incomplete.
const EXIT_ABORTED: i32 = 2;

/// pgbench's last line on stderr when the run was aborted.
const ABORTED_LINE: &str = "pgbench: error: Run was aborted; the above results are incomplete.";

/// Whether a command line (program name first) is `fleetbench pgbench ...`.
pub fn asked(args: &[OsString]) -> bool {
    args.get(1).is_some_and(|a| a == "pgbench")
}

/// Runs `fleetbench pgbench ...`; `command_line` is the line as results record it.
pub async fn run(args: Vec<OsString>, command_line: String) -> anyhow::Result<i32> {
    let words = args
        .iter()
        .skip(2)
        .map(|a| {
            a.to_str()
                .map(String::from)
                .ok_or_else(|| UsageError::new("pgbench: arguments must be UTF-8"))
        })
        .collect::<Result<Vec<String>, UsageError>>()?;
    let mut a = parse(&words, &|k| std::env::var(k).ok())
        .map_err(|e| UsageError(format!("pgbench: {e}")))?;
    load_scripts(&mut a, &read_script).map_err(|e| UsageError(format!("pgbench: {e}")))?;
    if let Some(text) = &a.shown {
        stdout::line(text.trim_end().to_string());
        return Ok(exit::EXIT_OK);
    }
    for n in &a.notes {
        eprintln!("note: {n}");
    }
    let plan = base_plan(&a, command_line);
    let token = fleetbench_model::auth::load(a.token_file.as_deref()).map_err(UsageError)?;
    let link = Link {
        auth: fleetbench_model::auth::Attach::new(token.as_deref()).map_err(UsageError)?,
        tls: None,
    };
    let (a, plan, link) = (&a, &plan, &link);
    crate::local::with_agents(plan, |addrs| async move {
        let conns = session::connect_idle(&addrs, &plan.workload, link).await?;
        if a.init {
            init(a, plan, conns).await
        } else {
            bench(a, plan, conns).await
        }
    })
    .await
}

/// The most a script file may hold: it travels to every agent in the run's request.
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// A script file's text (`-f`), refused when it is not a file of at most 1 MiB.
fn read_script(path: &str) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_SCRIPT_BYTES {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    std::fs::read_to_string(path)
}

/// The plan every step and the run start from.
fn base_plan(a: &PgbenchArgs, command_line: String) -> Plan {
    let agents = match &a.agents {
        Some(list) => AgentSource::Remote(list.clone()),
        None => AgentSource::Local(1),
    };
    let threads = match (&a.agents, a.init) {
        // One connection per agent loads its share, as pgbench's one connection.
        (Some(list), true) => list.len() as u32,
        (None, true) => 1,
        (_, false) => a.clients,
    };
    Plan {
        workload: Workload::Pgbench(Box::new(a.config(a.scale.unwrap_or(1), Step::Check))),
        command: Command::Prepare,
        threads,
        time: a.duration.map(Duration::from_secs),
        events: a
            .transactions
            .map(|t| t.saturating_mul(u64::from(a.clients))),
        report_interval: a.progress.map(Duration::from_secs),
        percentiles: vec![95.0],
        seed: a.seed.unwrap_or(0),
        json: a.json.clone(),
        agents,
        ready_timeout: Duration::from_secs(a.ready_timeout),
        max_downtime_pct: None,
        notes: Vec::new(),
        forced_shutdown: None,
        checkpoints: Vec::new(),
        rate: a.rate.unwrap_or(0.0),
        tags: Vec::new(),
        command_line,
        warmup: Duration::ZERO,
        warn_client_saturation: false,
        observe: Default::default(),
    }
}

/// One step as a table job on `conns`; with `tuples`, pgbench's load lines as it goes.
async fn step(
    a: &PgbenchArgs,
    plan: &Plan,
    conns: &[AgentConn],
    scale: u32,
    step: Step,
) -> anyhow::Result<Vec<session::JobSummary>> {
    let plan = Plan {
        workload: Workload::Pgbench(Box::new(a.config(scale, step))),
        command: Command::Prepare,
        // A step other than a load is one connection's statements on each agent, however
        // many clients the run to come has.
        threads: if step.spread() {
            plan.threads
        } else {
            conns.len() as u32
        },
        ..plan.clone()
    };
    let t0 = Instant::now();
    let mut last = 0;
    let tuples = step.spread();
    let summaries = session::table_job(conns.to_vec(), &plan, true, |done, total, _| {
        if tuples && done != last && total > 0 {
            last = done;
            eprintln!("{}", layout::tuples_line(done, total, t0.elapsed()));
        }
    })
    .await?;
    Ok(summaries)
}

/// `-i`: the steps in order, each timed, then pgbench's "done in" line.
async fn init(a: &PgbenchArgs, plan: &Plan, conns: Vec<AgentConn>) -> anyhow::Result<i32> {
    let scale = a.scale.unwrap_or(1);
    let started = Instant::now();
    let mut times = Vec::new();
    for &s in &a.steps {
        eprintln!("{}", s.banner());
        let t0 = Instant::now();
        if s.spread() {
            // As pgbench's generate: the tables are emptied first.
            step(a, plan, &conns, scale, Step::Truncate).await?;
        }
        step(a, plan, &conns, scale, s)
            .await
            .with_context(|| format!("pgbench: initialization step {} failed", s.name()))?;
        times.push((s, t0.elapsed()));
    }
    eprintln!("{}", layout::done_line(started.elapsed(), &times));
    Ok(exit::EXIT_OK)
}

/// A run: the tables' scale, the vacuum, the run itself and its report.
async fn bench(a: &PgbenchArgs, plan: &Plan, conns: Vec<AgentConn>) -> anyhow::Result<i32> {
    // As pgbench: the scale is read from pgbench_branches only when a built-in script
    // runs; script files alone take -s (default 1), and their vacuum's errors are said
    // and passed over.
    let builtin = a.scripts.iter().any(|(s, _)| s.builtin().is_some());
    let scale = if builtin {
        table_scale(a, plan, &conns).await?
    } else {
        a.scale.unwrap_or(1)
    };
    if !a.no_vacuum {
        eprint!("starting vacuum...");
        let vacuum = step(a, plan, &conns, scale, Step::RunVacuum).await;
        match vacuum {
            Err(e) if !builtin => {
                eprintln!("pgbench: error: {e:#}");
                eprintln!("pgbench: detail: (ignoring this error and continuing anyway)");
            }
            other => {
                other?;
            }
        }
        eprintln!("end.");
    }
    let plan = Plan {
        workload: Workload::Pgbench(Box::new(a.config(scale, Step::Check))),
        command: Command::Run,
        ..plan.clone()
    };
    let mut watch = Watch {
        args: a.clone(),
        progress: a.progress.is_some(),
        started: Instant::now(),
        conn_time: Duration::ZERO,
        server_version: String::new(),
        addrs: conns.iter().map(|c| c.addr.clone()).collect(),
        logs: log_files(a, conns.len())?,
    };
    let result = session::run(conns, &plan, &mut watch).await;
    if let Some(logs) = watch.logs.take() {
        logs.finish();
    }
    let result = result?;
    let facts = layout::RunFacts {
        server_version: watch.server_version.clone(),
        scale,
        conn_time: watch.conn_time,
    };
    let figures = layout::figures(a, &result);
    stdout::print(&layout::run_report(a, &facts, &figures));
    stdout::print(&format!(
        "\n{}",
        layout::percentiles_line(&result.latency())
    ));
    stdout::print(&report::text::agents_block(&plan, &result));
    stdout::print(&report::text::servers::block(&report::json::targets(
        &plan, &result,
    )));
    let mut doc = report::json::build(&plan, &result);
    doc.totals.pgbench = Some(layout::json(a, &figures));
    if let Some(path) = &plan.json {
        report::json::write(path, &doc)
            .with_context(|| format!("cannot write the JSON result to {}", path.display()))?;
    }
    let catalog = crate::catalog::Settings::from_env()?;
    crate::catalog::remember(&catalog, &report::doc::Document::Run(Box::new(doc))).await;
    if let Some(why) = aborted(&result) {
        eprintln!("pgbench: error: {why}");
        eprintln!("{ABORTED_LINE}");
        return Ok(EXIT_ABORTED);
    }
    if result.clients.clients_aborted > 0 {
        // Each client's own line came while the run went on.
        eprintln!("{ABORTED_LINE}");
        return Ok(EXIT_ABORTED);
    }
    let degraded = result
        .agents
        .iter()
        .any(|a| a.status != crate::merge::AgentStatus::Completed);
    Ok(exit::of_run(!degraded && !result.interrupted))
}

/// The scale a run of built-in scripts uses: pgbench_branches' rows.
async fn table_scale(a: &PgbenchArgs, plan: &Plan, conns: &[AgentConn]) -> anyhow::Result<u32> {
    let checked = step(a, plan, conns, 1, Step::Check).await?;
    let scale: u32 = checked
        .iter()
        .find_map(|s| s.summary.strip_prefix("scale=")?.trim().parse().ok())
        .unwrap_or(0);
    if scale == 0 {
        return Err(UsageError::new(
            "pgbench: pgbench_branches has no rows: run `fleetbench pgbench -i` first",
        )
        .into());
    }
    if a.scale.is_some_and(|s| s != scale) {
        eprintln!("scale option ignored, using count from pgbench_branches table ({scale})");
    }
    Ok(scale)
}

/// Why an agent's clients stopped before the run's end, if one did.
fn aborted(r: &RunResult) -> Option<String> {
    r.agents.iter().find_map(|a| match &a.status {
        crate::merge::AgentStatus::Completed => None,
        crate::merge::AgentStatus::Aborted(why) | crate::merge::AgentStatus::Lost(why) => {
            Some(format!("agent {}: {why}", a.addr))
        }
    })
}

/// `-l`'s files, one per agent, made before the run starts.
fn log_files(a: &PgbenchArgs, agents: usize) -> anyhow::Result<Option<LogFiles>> {
    let Some(l) = &a.log else {
        return Ok(None);
    };
    let columns = Columns {
        lag: a.rate.is_some(),
        retries: a.max_tries != 1,
        detailed: a.failures_detailed,
    };
    let files = LogFiles::create(&l.prefix, agents, l.aggregate, columns)
        .map_err(|e| UsageError(format!("pgbench: could not open log file {e}")))?;
    Ok(Some(files))
}

/// What a run shows while it goes: `-P`'s progress lines on stderr, as pgbench, and
/// `-l`'s log lines into the agents' files.
struct Watch {
    args: PgbenchArgs,
    progress: bool,
    started: Instant,
    conn_time: Duration,
    server_version: String,
    /// The agents' addresses, in the order of their log files.
    addrs: Vec<String>,
    logs: Option<LogFiles>,
}

impl RunObserver for Watch {
    fn opening(&mut self, _open: u64, _total: u64) {}

    fn go(&mut self, _run_id: &str, ready: &RunResult) {
        self.conn_time = self.started.elapsed();
        if let Some((_, c)) = ready.connections.first() {
            self.server_version = c.server_version.clone();
        }
    }

    fn interval(&mut self, iv: &MergedInterval) {
        // Clients aborted on an error, as pgbench says it when it happens.
        for m in &iv.clients.client_errors {
            eprintln!("pgbench: error: {m}");
        }
        let unsaid = iv
            .clients
            .clients_aborted
            .saturating_sub(iv.clients.client_errors.len() as u64);
        if unsaid > 0 {
            eprintln!("pgbench: error: {unsaid} more clients aborted");
        }
        // The run's last, partial interval has no line, as in pgbench.
        if self.progress && !iv.last {
            eprintln!("{}", layout::progress_line(&self.args, iv));
        }
    }

    fn agent_interval(&mut self, tick: AgentTick) {
        if let (Some(logs), false) = (self.logs.as_mut(), tick.txn_log.is_empty())
            && let Some(k) = self.addrs.iter().position(|a| a == tick.addr)
        {
            logs.write(k, tick.txn_log);
        }
    }
}
