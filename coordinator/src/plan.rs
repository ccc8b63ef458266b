//! The validated plan of a fleetbench invocation, built from raw flags, plus the pure
//! functions that split work over agents. Everything here is checked before any agent is
//! contacted, so bad input never starts load anywhere.

use std::path::PathBuf;
use std::time::Duration;

use fleetbench_model::options::Declared;
use fleetbench_model::options::OptionDef;
use fleetbench_model::rand::Distribution;
use fleetbench_model::spec::TableSet;
use fleetbench_model::workloads::oltp::legacy::{OltpLegacy, ReconnectMode};
use fleetbench_model::workloads::oltp::tls::SslMode;
use fleetbench_model::workloads::oltp::{OltpConfig, OltpDb, OltpOptions, Script};
use fleetbench_model::workloads::server::Target;
use fleetbench_model::workloads::server::{ServerOptions, TargetOptions};
use fleetbench_model::workloads::tpcc::{TpccConfig, TpccOptions};

use crate::cli::RawArgs;

/// The most embedded agents (`--local-agents`): each is a gRPC server in this process.
pub const MAX_LOCAL_AGENTS: u32 = 256;

/// What is wrong with the command line; always the user's to fix (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("missing test name: try `fleetbench cpu run`")]
    MissingTest,
    #[error("the '{0}' test requires a command argument: prepare, run, cleanup or prewarm")]
    MissingCommand(String),
    #[error(
        "unknown test '{0}': available tests are: cpu, fileio, memory, threads, mutex, oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select, oltp_insert, oltp_delete, oltp_update_index, oltp_update_non_index, select_random_points, select_random_ranges, bulk_insert, oltp_sp, tpcc"
    )]
    UnknownTest(String),
    #[error("unknown command '{0}': expected prepare, run, cleanup or prewarm")]
    UnknownCommand(String),
    #[error("unexpected argument '{0}'")]
    ExtraArgument(String),
    #[error("--tag: {0}")]
    Tag(String),
    #[error("the '{test}' test does not implement the '{command}' command")]
    Unsupported { test: String, command: String },
    #[error("invalid value for --{option}: '{value}' ({why})")]
    Invalid {
        option: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("--time and --events are both 0: the run would never end; set one of them")]
    Endless,
    #[error("--agents and --local-agents exclude each other")]
    AgentsConflict,
    #[error("invalid --target '{0}': {1}")]
    Target(String, String),
    #[error(
        "--target {0} is given twice (a target name stands for one server): give each name once"
    )]
    TargetTwice(String),
    #[error(
        "--target {target} and --{option} contradict each other: a --target URL sets host, port, socket, user, password and database itself (NAME=mysql://USER:PASSWORD@HOST:PORT/DB?socket=PATH); give one or the other"
    )]
    TargetAndConnection { target: String, option: String },
    /// The agent as first given, and how both spellings read when they differ.
    #[error(
        "--agents lists the agent {0} twice{1}: each agent takes one share of the load; list it once"
    )]
    AgentTwice(String, String),
    #[error("invalid --table-map: {0}")]
    TableMap(String),
    #[error(
        "--table-split=partition needs at least one table per agent ({tables} tables, {agents} agents)"
    )]
    TooFewTables { tables: u32, agents: usize },
    #[error("{0} is not supported")]
    NotSupported(String),
    #[error("{0} contradict each other")]
    Conflict(String),
    #[error(
        "--threads={threads} and --rate={rates}: a sweep steps over thread counts or over rates, not both; give one of them a single value"
    )]
    TwoSweeps { threads: String, rates: String },
    #[error("target {0}: {1}")]
    Ssl(String, String),
    /// A workload's own bounds ([`Workload::validate`], the same check the agents make).
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Limit(String),
    #[error(
        "missing required argument: --file-test-mode (seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw)"
    )]
    MissingTestMode,
}

use fleetbench_model::options::SpecError;
pub use fleetbench_model::spec::{
    Command, CpuSpec, MemorySpec, MutexSpec, OltpSpec, TableSplit, ThreadsSpec, Workload,
};

/// Where the load runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentSource {
    /// Agents already running elsewhere, by address.
    Remote(Vec<String>),
    /// This many agents embedded in the coordinator's process.
    Local(u32),
}

/// A fully validated invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub workload: Workload,
    pub command: Command,
    pub threads: u32,
    pub time: Option<Duration>,
    pub events: Option<u64>,
    pub report_interval: Option<Duration>,
    /// Requested percentiles, in (0, 100], in the order given.
    pub percentiles: Vec<f64>,
    pub seed: u64,
    pub json: Option<PathBuf>,
    pub agents: AgentSource,
    /// How long an agent may take from Start to Ready (opening connections, threads).
    pub ready_timeout: Duration,
    /// `--max-downtime`: the percent of the run a database target may be down before the
    /// run fails; None: any whole interval down fails it.
    pub max_downtime_pct: Option<f64>,
    /// One-line notes for stderr: old options accepted without an effect here.
    pub notes: Vec<String>,
    /// sysbench's --forced-shutdown: stop agents still running this long after the time.
    pub forced_shutdown: Option<Duration>,
    /// --report-checkpoints: seconds since Go, ascending.
    pub checkpoints: Vec<u64>,
    /// --rate: events per second over all agents in an open loop; 0 = closed loop.
    pub rate: f64,
    /// The user's labels of the result (`--tag key=value`).
    pub tags: crate::report::meta::Tags,
    /// The command line that made this plan, secrets masked (set by the caller: a plan
    /// built from a scenario file has none).
    pub command_line: String,
    /// Load before the measurement, on the same threads and connections, not counted
    /// (--warmup-time, sysbench 1.0's meaning). Set per measurement by the sweep layer,
    /// which also owns the option; zero from `build`.
    pub warmup: Duration,
}

impl Plan {
    /// The tick agents report at: the report interval, or one second when none is asked
    /// for (the JSON always carries a per-second series).
    pub fn tick(&self) -> Duration {
        self.report_interval.unwrap_or(Duration::from_secs(1))
    }
}

/// Validates raw flags into a plan.
pub fn build(raw: &RawArgs) -> Result<Plan, PlanError> {
    let mut words = raw.words.iter();
    let test = match &raw.test {
        Some(t) => t.clone(),
        None => words.next().cloned().ok_or(PlanError::MissingTest)?,
    };
    let command = match words.next().map(String::as_str) {
        None => return Err(PlanError::MissingCommand(test)),
        Some("prepare") => Command::Prepare,
        Some("run") => Command::Run,
        Some("cleanup") => Command::Cleanup,
        Some("prewarm") => Command::Prewarm,
        Some("check") => Command::Check,
        Some(other) => return Err(PlanError::UnknownCommand(other.to_string())),
    };
    if let Some(extra) = words.next() {
        return Err(PlanError::ExtraArgument(extra.clone()));
    }
    // 0.5's parallel_prepare.lua: its `run` creates and loads the tables in parallel, one
    // share per thread, which is what prepare does here.
    let base = test.rsplit('/').next().unwrap_or(&test);
    let command = match (base.strip_suffix(".lua").unwrap_or(base), command) {
        ("parallel_prepare", Command::Run) => Command::Prepare,
        _ => command,
    };
    let name = test_name(&test, raw)?;
    let workload = match (fleetbench_model::spec::declared(&name), name.as_str()) {
        (Some(d), _) => d.workload(own_options(raw, d.options))?,
        (None, "tpcc") => Workload::Tpcc(Box::new(tpcc(raw)?)),
        (None, other) => match Script::from_name(other) {
            Some(script) => Workload::Oltp(Box::new(oltp(
                script,
                raw,
                num(&raw.threads, "threads", 1)?,
            )?)),
            None => return Err(PlanError::UnknownTest(test.clone())),
        },
    };
    if let Workload::Fileio(f) = &workload
        && f.mode.is_none()
        && command == Command::Run
    {
        return Err(PlanError::MissingTestMode);
    }
    // The bounds the agents hold a Start to, checked here first so that bad options
    // never reach an agent.
    workload.validate()?;
    if !workload.commands().contains(&command) {
        return Err(PlanError::Unsupported {
            test,
            command: command.name().into(),
        });
    }
    // TPC-C's load has no thread option in tpcc-mysql (tpcc_load is single-threaded):
    // without --threads it loads over 4 connections, spread over the agents.
    let default_threads = match (&workload, command) {
        (Workload::Tpcc(_), Command::Prepare) => TPCC_LOAD_THREADS,
        _ => 1,
    };
    let threads: u32 = num(&raw.threads, "threads", default_threads)?;
    if threads == 0 {
        return Err(invalid("threads", 0, "must be at least 1"));
    }
    // An old (0.4/0.5) command line without limits runs 0.4/0.5's default of 10,000
    // events and no time limit; 1.0 spellings keep 1.0's 10 seconds.
    // An old command line with an event limit alone has 0.4/0.5's time limit: none.
    let old_limits = raw.legacy && !matches!(workload, Workload::Memory(_) | Workload::Mutex(_));
    let (time_default, events_default) = match (old_limits, &raw.time, &raw.events) {
        (true, None, None) => (0, LEGACY_EVENTS),
        (true, None, Some(_)) => (0, 0),
        _ => (10, 0),
    };
    let time: u64 = seconds(&raw.time, "time", time_default)?;
    let mut events: u64 = num(&raw.events, "events", events_default)?;
    match &workload {
        // memory ends when --memory-total-size has been transferred.
        Workload::Memory(m) => {
            let by_size = m.total_size / m.block_size;
            events = if events == 0 {
                by_size
            } else {
                events.min(by_size)
            };
        }
        // Each mutex thread runs exactly one event; --events does not apply.
        Workload::Mutex(_) => events = 0,
        _ => {}
    }
    let one_shot = matches!(workload, Workload::Mutex(_));
    if command == Command::Run && time == 0 && events == 0 && !one_shot {
        return Err(PlanError::Endless);
    }
    let report_interval: u64 = seconds(&raw.report_interval, "report-interval", 0)?;
    let percentiles = parse_percentiles(raw.percentile.as_deref().unwrap_or("95"))?;
    let mut seed = num(&raw.rand_seed, "rand-seed", 0)?;
    // 0.4/0.5's switch between a clock seed and a fixed one.
    match (
        raw.rand_init.is_some(),
        flag(&raw.rand_init, "rand-init", false)?,
    ) {
        (true, true) if seed != 0 => {
            return Err(PlanError::Conflict(
                "--rand-init=on (a seed from the clock) and --rand-seed".into(),
            ));
        }
        (true, false) if raw.rand_seed.is_none() => seed = FIXED_SEED,
        _ => {}
    }
    let rate = match raw.rate.as_deref() {
        None => 0.0,
        Some(r) => parse_rate(r)?,
    };
    if rate > 0.0 && workload.one_event_per_thread() {
        return Err(PlanError::NotSupported(format!(
            "--rate with {} (each thread runs one event; there is nothing to pace)",
            workload.name()
        )));
    }
    let mut notes = Vec::new();
    for (given, option, why) in [
        (
            raw.thread_stack_size.is_some(),
            "--thread-stack-size",
            "fleetbench sizes its worker stacks itself",
        ),
        (
            raw.debug.is_some(),
            "--debug",
            "for debug logs set FLEETBENCH_LOG=debug",
        ),
        (
            raw.validate.is_some(),
            "--validate",
            "fleetbench counts results exactly anyway",
        ),
    ] {
        if given {
            notes.push(format!(
                "{option} is accepted for sysbench 0.4/0.5 command lines and has no effect: {why}"
            ));
        }
    }
    let ready_timeout: u64 = seconds(&raw.ready_timeout, "ready-timeout", 30)?;
    if ready_timeout == 0 {
        return Err(invalid("ready-timeout", 0, "must be at least 1"));
    }
    let max_downtime_pct = match raw.max_downtime.as_deref().map(str::trim) {
        None => None,
        Some(v) => match v.parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => Some(p),
            _ => return Err(invalid("max-downtime", v, "a percent from 0 to 100")),
        },
    };
    let agents = match (&raw.agents[..], &raw.local_agents) {
        ([], None) => AgentSource::Local(1),
        ([], Some(_)) => {
            let k: u32 = num(&raw.local_agents, "local-agents", 1)?;
            if k == 0 {
                return Err(invalid("local-agents", 0, "must be at least 1"));
            }
            if k > MAX_LOCAL_AGENTS {
                return Err(invalid(
                    "local-agents",
                    k,
                    "at most 256 embedded agents; start fleetbench-agent processes for more",
                ));
            }
            AgentSource::Local(k)
        }
        (_, Some(_)) => return Err(PlanError::AgentsConflict),
        (list, None) => AgentSource::Remote(parse_agents(list)?),
    };
    check_threads(threads, &agents)?;
    if let (Workload::Memory(m), AgentSource::Local(k)) = (&workload, &agents) {
        // Embedded agents allocate in this process: check before any is started. Remote
        // agents check their own memory when the Start arrives.
        // One shared block per embedded agent (global), or one per thread (local).
        let (blocks, one) = match (m.global, *k) {
            (true, 1) => (1, true),
            (true, k) => (k, false),
            (false, _) => (threads, false),
        };
        fleetbench_model::workloads::memory::check_sizes(m.block_size, blocks, one)
            .map_err(|e| PlanError::Limit(e.to_string()))?;
    }
    Ok(Plan {
        workload,
        command,
        threads,
        time: (time > 0).then(|| Duration::from_secs(time)),
        events: (events > 0).then_some(events),
        report_interval: (report_interval > 0).then(|| Duration::from_secs(report_interval)),
        percentiles,
        seed,
        json: raw.json.clone(),
        agents,
        ready_timeout: Duration::from_secs(ready_timeout),
        max_downtime_pct,
        notes,
        forced_shutdown: forced_shutdown(&raw.forced_shutdown, time)?,
        checkpoints: checkpoints(&raw.report_checkpoints)?,
        rate,
        tags: crate::report::meta::parse_tags(&raw.tag).map_err(PlanError::Tag)?,
        command_line: String::new(),
        warmup: Duration::ZERO,
    })
}

/// Most events per second `--rate` may ask for over the whole run (each agent paces at
/// most `fleetbench_model::limits::MAX_RATE` of it).
pub const MAX_RATE: f64 = 100_000_000.0;

/// One `--rate` value: events per second, 0 for the closed loop.
pub fn parse_rate(s: &str) -> Result<f64, PlanError> {
    let r: f64 = s.trim().parse().map_err(|_| PlanError::Invalid {
        option: "rate",
        value: s.to_string(),
        why: "expected events per second (0 = closed loop), or a comma-separated list for a rate sweep",
    })?;
    if !r.is_finite() || r < 0.0 {
        return Err(invalid(
            "rate",
            s,
            "must be 0 or a positive number of events per second",
        ));
    }
    if r > MAX_RATE {
        return Err(invalid("rate", s, "at most 100,000,000 events per second"));
    }
    Ok(r)
}

/// Each agent's share of `rate`: in proportion to its threads, so that every thread
/// faces the same offered load.
pub fn split_rate(rate: f64, threads: &[u64]) -> Vec<f64> {
    let total: u64 = threads.iter().sum();
    if total == 0 {
        return vec![0.0; threads.len()];
    }
    threads
        .iter()
        .map(|&t| rate * t as f64 / total as f64)
        .collect()
}

/// `--report-checkpoints=10,20,30`: distinct positive seconds, in ascending order.
fn checkpoints(raw: &Option<String>) -> Result<Vec<u64>, PlanError> {
    let Some(v) = raw.as_deref() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let n: u64 = part.parse().map_err(|_| {
            invalid(
                "report-checkpoints",
                v,
                "expected a comma-separated list of seconds",
            )
        })?;
        if n == 0 || n > fleetbench_model::limits::MAX_SECONDS {
            return Err(invalid(
                "report-checkpoints",
                part,
                "each must lie in 1..=31622400",
            ));
        }
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `--forced-shutdown=off|N|N%`: N seconds, or N % of --time, after the run's time.
fn forced_shutdown(raw: &Option<String>, time: u64) -> Result<Option<Duration>, PlanError> {
    let Some(v) = raw.as_deref().map(str::trim) else {
        return Ok(None);
    };
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad = |why| invalid("forced-shutdown", v, why);
    let secs = match v.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| bad("expected off, N or N%"))?;
            if !(0.0..=10_000.0).contains(&p) {
                return Err(bad("a percentage from 0 to 10000"));
            }
            (time as f64 * p / 100.0).ceil() as u64
        }
        None => v.parse::<u64>().map_err(|_| bad("expected off, N or N%"))?,
    };
    if time == 0 {
        return Err(bad("needs a time limit (--time) to count from"));
    }
    if secs > fleetbench_model::limits::MAX_SECONDS {
        return Err(bad("at most 31622400 seconds (a year)"));
    }
    Ok(Some(Duration::from_secs(secs)))
}

/// sysbench 0.4/0.5's `--max-requests` default, for old command lines without limits.
pub const LEGACY_EVENTS: u64 = 10_000;

/// The seed of `--rand-init=off` (0.4/0.5's fixed seed) when --rand-seed gives none.
pub const FIXED_SEED: u64 = 1;

/// Checks `threads` over `agents`: at most [`fleetbench_model::limits::MAX_THREADS`] on
/// each, and, for embedded agents (all threads in this process), this host's limits.
pub fn check_threads(threads: u32, agents: &AgentSource) -> Result<(), PlanError> {
    let n = match agents {
        AgentSource::Remote(a) => a.len().max(1) as u64,
        AgentSource::Local(k) => u64::from(*k),
    };
    let per_agent = u64::from(threads).div_ceil(n);
    let checked = match agents {
        AgentSource::Local(_) => fleetbench_model::limits::check_threads(u64::from(threads)),
        AgentSource::Remote(_) if per_agent > fleetbench_model::limits::MAX_THREADS => {
            Err(format!(
                "{per_agent} threads on one agent are more than the {} accepted: spread them over more agents",
                fleetbench_model::limits::MAX_THREADS
            ))
        }
        AgentSource::Remote(_) => Ok(()),
    };
    checked.map_err(|why| PlanError::Limit(format!("--threads={threads}: {why}")))
}

/// A duration in seconds, at most [`fleetbench_model::limits::MAX_SECONDS`].
pub fn seconds(raw: &Option<String>, option: &'static str, default: u64) -> Result<u64, PlanError> {
    let secs: u64 = num(raw, option, default)?;
    if secs > fleetbench_model::limits::MAX_SECONDS {
        return Err(invalid(option, secs, "at most 31622400 seconds (a year)"));
    }
    Ok(secs)
}

/// Whether the test is 0.4's built-in `--test=oltp` (not a 0.5 script such as oltp.lua).
fn is_builtin_oltp_0_4(raw: &RawArgs) -> bool {
    raw.test
        .as_deref()
        .or(raw.words.first().map(String::as_str))
        == Some("oltp")
}

/// Maps sysbench's other spellings of a test to its 1.0 name: `tests/db/oltp.lua` and
/// `oltp` (0.5) mean oltp_read_write, or oltp_read_only with --oltp-read-only=on; the other
/// 0.5 scripts (`select.lua`, `insert.lua`, ...) their 1.0 tests; a path or a `.lua`
/// suffix is dropped.
fn test_name(test: &str, raw: &RawArgs) -> Result<String, PlanError> {
    let base = test.rsplit('/').next().unwrap_or(test);
    // A 0.5 script (a path, or a name ending in .lua): only its file name matters, and
    // each maps to its 1.0 test.
    let script = base.len() != test.len() || base.ends_with(".lua");
    let base = base.strip_suffix(".lua").unwrap_or(base);
    if script {
        let mapped = match base {
            "select" | "oltp_simple" => Some("oltp_point_select"),
            "insert" => Some("oltp_insert"),
            "delete" => Some("oltp_delete"),
            "update_index" => Some("oltp_update_index"),
            "update_non_index" => Some("oltp_update_non_index"),
            "parallel_prepare" => Some("oltp_read_write"),
            _ => None,
        };
        if let Some(m) = mapped {
            return Ok(m.into());
        }
    }
    Ok(match base {
        // 0.5's oltp.lua ignores --oltp-test-mode; 0.4's built-in test follows it.
        "oltp" => OltpLegacy::resolve("OLTP", own_options(raw, OltpLegacy::OPTIONS))?
            .test(!script)
            .into(),
        other => other.to_string(),
    })
}

/// sysbench's boolean spellings.
fn flag(raw: &Option<String>, option: &'static str, default: bool) -> Result<bool, PlanError> {
    match raw.as_deref() {
        None => Ok(default),
        Some(s) => parse_flag(s).ok_or_else(|| invalid(option, s, "expected on or off")),
    }
}

pub use fleetbench_model::options::{parse_flag, parse_size};

/// Validates the OLTP options of `script`.
/// Loading connections of a TPC-C prepare without --threads.
pub const TPCC_LOAD_THREADS: u32 = 4;

/// Contiguous shares of warehouses 1..=w over `n` agents, larger shares first; an agent
/// beyond the w-th gets none (an empty range is never returned: n is capped at w).
pub fn warehouse_shares(w: u32, n: usize) -> Vec<(u32, u32)> {
    let n = n.clamp(1, w.max(1) as usize);
    let mut first = 1u32;
    split_evenly(u64::from(w), n)
        .into_iter()
        .map(|k| {
            let share = (first, first + k as u32 - 1);
            first += k as u32;
            share
        })
        .collect()
}

/// With `--warehouse-split=partition`, every agent with threads needs warehouses of its
/// own, and its terminals fit them: ten per warehouse, one per district (clause 4.2.2).
pub fn check_tpcc_partition(w: u32, threads: &[u64]) -> Result<(), PlanError> {
    let active: Vec<u64> = threads.iter().copied().filter(|&t| t > 0).collect();
    if active.len() > w as usize {
        return Err(PlanError::NotSupported(format!(
            "--warehouse-split=partition with {} agents and {w} warehouses (every agent needs one of its own; give --warehouses at least {})",
            active.len(),
            active.len()
        )));
    }
    for (t, (first, last)) in active.iter().zip(warehouse_shares(w, active.len())) {
        let allowed = 10 * u64::from(last - first + 1);
        if *t > allowed {
            return Err(PlanError::NotSupported(format!(
                "--warehouse-split=partition: {t} terminals on warehouses {first}..{last} (at most 10 per warehouse: {allowed}; raise --warehouses or lower --threads)"
            )));
        }
    }
    Ok(())
}

/// TPC-C's options: one target (the `--mysql-*` options or one `--target`), W, and how
/// the warehouses and the terminals' wait are shared out.
fn tpcc(raw: &RawArgs) -> Result<TpccConfig, PlanError> {
    check_targets(raw)?;
    let options = TpccOptions::resolve("tpcc", own_options(raw, TpccOptions::OPTIONS))?;
    let via = TargetOptions::resolve("tpcc", own_options(raw, TargetOptions::OPTIONS))?;
    let mut target = match &raw.target[..] {
        // tpcc-mysql's users name their database tpcc.
        [] => via.default_target("tpcc"),
        [one] => parse_target(one)?,
        _ => {
            return Err(PlanError::NotSupported(
                "tpcc with more than one --target (the TPC-C tables live on one server)".into(),
            ));
        }
    };
    if target.host.contains(',') {
        return Err(invalid(
            "mysql-host",
            &target.host,
            "tpcc connects to one host",
        ));
    }
    via.fill_in(&mut target);
    target
        .ssl
        .validate()
        .map_err(|e| PlanError::Ssl(target.name.clone(), e))?;
    let server = ServerOptions::resolve("tpcc", own_options(raw, ServerOptions::OPTIONS))?;
    // As the agent sets it from the same options (fleetbench_model::wire).
    target.connect_timeout = Some(server.connect_timeout);
    Ok(TpccConfig {
        target,
        options,
        first_warehouse: 1,
        last_warehouse: options.warehouses,
        server,
        ..TpccConfig::default()
    })
}

/// The declared options given for `defs`: a test reads its own and ignores the others'
/// (OLTP's with cpu, say), as sysbench does.
fn own_options<'a>(
    raw: &'a RawArgs,
    defs: &'static [OptionDef],
) -> impl Iterator<Item = (&'a str, &'a str)> {
    raw.options
        .iter()
        .filter(move |(n, _)| defs.iter().any(|o| o.name == n))
        .map(|(n, v)| (n.as_str(), v.as_str()))
}

fn oltp(script: Script, raw: &RawArgs, threads: u32) -> Result<OltpSpec, PlanError> {
    check_targets(raw)?;
    let set = TableSet::resolve("OLTP", own_options(raw, TableSet::OPTIONS))?;
    let tables = if script == Script::BulkInsert {
        // bulk_insert works on one table per thread, as in sysbench.
        let per_thread = TableSet {
            tables: threads.max(1),
            ..set
        };
        per_thread.check()?;
        per_thread.tables
    } else {
        set.tables
    };
    let mut options = OltpOptions::resolve("OLTP", own_options(raw, OltpOptions::OPTIONS))?;
    let server = ServerOptions::resolve("OLTP", own_options(raw, ServerOptions::OPTIONS))?;
    let db = OltpDb::resolve("OLTP", own_options(raw, OltpDb::OPTIONS))?;
    let distribution = Distribution::resolve("OLTP", own_options(raw, Distribution::OPTIONS))?;
    let via = TargetOptions::resolve("OLTP", own_options(raw, TargetOptions::OPTIONS))?;
    let mut targets = if raw.target.is_empty() {
        vec![via.default_target("sbtest")]
    } else {
        raw.target
            .iter()
            .map(|t| parse_target(t))
            .collect::<Result<Vec<_>, _>>()?
    };
    for t in &mut targets {
        via.fill_in(t);
        // As the agent sets it from the same options (fleetbench_model::wire).
        t.connect_timeout = Some(server.connect_timeout);
        t.ssl
            .validate()
            .map_err(|e| PlanError::Ssl(t.name.clone(), e))?;
    }
    let map = match &raw.table_map {
        Some(m) => parse_table_map(m, tables, &targets)?,
        None if targets.len() == 1 => vec![0; tables as usize],
        None => {
            return Err(PlanError::TableMap(
                "several --target given: say which holds which tables, e.g. --table-map 'sbtest1-5=a,sbtest6-10=b'".into(),
            ));
        }
    };
    let legacy = OltpLegacy::resolve("OLTP", own_options(raw, OltpLegacy::OPTIONS))?;
    if legacy.reconnect_mode == ReconnectMode::Query && !script.single_statement() {
        return Err(PlanError::NotSupported(format!(
            "--oltp-reconnect-mode=query with {} (a reconnect between the statements of a transaction; with one statement per event, as --oltp-test-mode=simple or nontrx, query is transaction)",
            script.name()
        )));
    }
    // 0.4's engine without transactions runs without BEGIN/COMMIT.
    options.skip_trx |= !legacy.transactional(&server.engine, raw.legacy);
    // 0.4's reconnect modes in 1.0 terms: every transaction is --reconnect=1, and so is
    // every query where an event is one statement; random is decided after each
    // transaction (the worker draws).
    match legacy.reconnect_mode {
        ReconnectMode::Session => {}
        ReconnectMode::Transaction | ReconnectMode::Query => options.reconnect = 1,
        ReconnectMode::Random => options.reconnect = 0,
    }
    let config = OltpConfig {
        script,
        targets,
        tables: (1..=tables).zip(map).collect(),
        options,
        db,
        distribution,
        reconnect_random: legacy.reconnect_mode == ReconnectMode::Random,
        create_options: legacy.table_options(&server.engine, raw.legacy),
        table_name: match &legacy.table_name {
            Some(name) => name.clone(),
            // 0.4's built-in test has one table, named sbtest (no number), unless the
            // command line counts tables (a 0.5 option): then sbtest1..N as in 0.5.
            None if is_builtin_oltp_0_4(raw) && !raw.options.iter().any(|(n, _)| n == "tables") => {
                "sbtest".into()
            }
            None => String::new(),
        },
        server,
        // 0.4 takes the name in every mode (OltpLegacy checks it is one) and uses it in sp
        // mode only.
        sp_name: match (script, legacy.sp_name.as_str()) {
            (Script::StoredProcedure, "") => {
                return Err(invalid(
                    "oltp-sp-name",
                    "",
                    "--oltp-test-mode=sp (oltp_sp) calls the stored procedure named here",
                ));
            }
            (Script::StoredProcedure, n) => n.to_string(),
            _ => String::new(),
        },
    };
    Ok(OltpSpec {
        config,
        split: set.split,
    })
}

/// The `--mysql-*` options that say where and as whom to connect: a `--target` URL says
/// all of them itself. (TLS and public-key options are not among them: targets without
/// their own take those.)
const CONNECTION_OPTIONS: [&str; 6] = [
    "mysql-host",
    "mysql-port",
    "mysql-socket",
    "mysql-user",
    "mysql-password",
    "mysql-db",
];

/// Refuses `--target`s that contradict each other (one name twice) or the `--mysql-*`
/// connection options: otherwise one of them would be silently ignored.
fn check_targets(raw: &RawArgs) -> Result<(), PlanError> {
    let mut names: Vec<&str> = Vec::with_capacity(raw.target.len());
    for t in &raw.target {
        let name = t.split_once('=').map_or(t.as_str(), |(n, _)| n).trim();
        if names.contains(&name) {
            return Err(PlanError::TargetTwice(name.to_string()));
        }
        names.push(name);
    }
    let connection = raw
        .options
        .iter()
        .find(|(n, _)| CONNECTION_OPTIONS.contains(&n.as_str()));
    if let (Some(target), Some((option, _))) = (names.first(), connection) {
        return Err(PlanError::TargetAndConnection {
            target: target.to_string(),
            option: option.clone(),
        });
    }
    Ok(())
}

/// Parses `NAME=mysql://USER:PASSWORD@HOST:PORT/DB[?socket=PATH]`. User defaults to sbtest,
/// password to empty, port to 3306, database to sbtest; `%XX` escapes are decoded.
pub fn parse_target(s: &str) -> Result<Target, PlanError> {
    let bad = |why: &str| PlanError::Target(redact(s), why.to_string());
    let (name, url) = s
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=mysql://USER:PASSWORD@HOST:PORT/DB"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(bad("the name may hold letters, digits, '_', '-' and '.'"));
    }
    let rest = url
        .strip_prefix("mysql://")
        .ok_or_else(|| bad("the URL must start with mysql://"))?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    let (user, password) = match auth {
        Some(a) => match a.split_once(':') {
            Some((u, p)) => (
                decode(u).ok_or_else(|| bad("bad %-escape"))?,
                decode(p).ok_or_else(|| bad("bad %-escape"))?,
            ),
            None => (decode(a).ok_or_else(|| bad("bad %-escape"))?, String::new()),
        },
        None => ("sbtest".to_string(), String::new()),
    };
    let (hostport, db) = hostpart.split_once('/').unwrap_or((hostpart, ""));
    let port_of = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| bad("the port must be a number from 1 to 65535"))
    };
    // An IPv6 literal stands in brackets, as in any URL: [::1]:3306.
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
        if h.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad("not an IPv6 address between '[' and ']'"));
        }
        match after {
            "" => (h, 3306),
            p => match p.strip_prefix(':') {
                Some(p) => (h, port_of(p)?),
                None => return Err(bad("expected ':PORT' after ']'")),
            },
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((h, _)) if h.contains(':') => {
                return Err(bad("write an IPv6 address in brackets: [::1]:3306"));
            }
            Some((h, p)) => (h, port_of(p)?),
            None => (hostport, 3306),
        }
    };
    let mut socket = None;
    let mut sec = Target::default();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad("URL parameters are KEY=VALUE"))?;
        let v = decode(v).ok_or_else(|| bad("bad %-escape"))?;
        match k.replace('_', "-").as_str() {
            "socket" => socket = Some(v),
            "ssl-mode" => {
                sec.ssl.mode = SslMode::parse(&v)
                    .ok_or_else(|| bad(&format!("ssl-mode must be {}", SslMode::NAMES)))?
            }
            "ssl-ca" => sec.ssl.ca = Some(v.into()),
            "ssl-cert" => sec.ssl.cert = Some(v.into()),
            "ssl-key" => sec.ssl.key = Some(v.into()),
            "server-public-key" => sec.server_public_key = Some(v.into()),
            "get-server-public-key" => {
                sec.get_server_public_key = flag(&Some(v), "get-server-public-key", false)
                    .map_err(|_| bad("get-server-public-key must be on or off"))?
            }
            _ => {
                return Err(bad(
                    "URL parameters understood: socket, ssl-mode, ssl-ca, ssl-cert, ssl-key, \
                     server-public-key, get-server-public-key",
                ));
            }
        }
    }
    if host.is_empty() && socket.is_none() {
        return Err(bad("no host"));
    }
    Ok(Target {
        name: name.to_string(),
        host: if host.is_empty() {
            "localhost".into()
        } else {
            host.to_string()
        },
        port,
        socket,
        user,
        password,
        database: if db.is_empty() {
            "sbtest".into()
        } else {
            decode(db).ok_or_else(|| bad("bad %-escape"))?
        },
        ..sec
    })
}

/// The target text without its password, for messages.
fn redact(s: &str) -> String {
    match (s.find("://"), s.rfind('@')) {
        (Some(a), Some(b)) if b > a => {
            let auth = &s[a + 3..b];
            match auth.split_once(':') {
                Some((u, _)) => format!("{}{u}:***{}", &s[..a + 3], &s[b..]),
                None => s.to_string(),
            }
        }
        _ => s.to_string(),
    }
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses 'sbtest1-5=master,sbtest6-10=slave' (the 'sbtest' prefix is optional) into the
/// target index of each table 1..=tables. Every table must be mapped exactly once.
pub fn parse_table_map(s: &str, tables: u32, targets: &[Target]) -> Result<Vec<usize>, PlanError> {
    let mut map: Vec<Option<usize>> = vec![None; tables as usize];
    for entry in s.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(PlanError::TableMap("an empty item in the list".into()));
        }
        let (range, name) = entry
            .split_once('=')
            .ok_or_else(|| PlanError::TableMap(format!("'{entry}' is not TABLES=TARGET")))?;
        let t = targets
            .iter()
            .position(|t| t.name == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                PlanError::TableMap(format!(
                    "unknown target '{}' (targets: {})",
                    name.trim(),
                    names.join(", ")
                ))
            })?;
        let range = range.trim();
        let range = range.strip_prefix("sbtest").unwrap_or(range);
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let lo = lo.trim().trim_start_matches("sbtest");
        let hi = hi.trim().trim_start_matches("sbtest");
        let (lo, hi): (u32, u32) = match (lo.parse(), hi.parse()) {
            (Ok(a), Ok(b)) if a >= 1 && a <= b => (a, b),
            _ => {
                return Err(PlanError::TableMap(format!(
                    "'{entry}': expected sbtestA-B=TARGET with 1 <= A <= B"
                )));
            }
        };
        if hi > tables {
            return Err(PlanError::TableMap(format!(
                "'{entry}' names sbtest{hi}, but --tables={tables}"
            )));
        }
        for n in lo..=hi {
            if map[n as usize - 1].replace(t).is_some() {
                return Err(PlanError::TableMap(format!("sbtest{n} is mapped twice")));
            }
        }
    }
    let unmapped: Vec<String> = map
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_none())
        .map(|(i, _)| format!("sbtest{}", i + 1))
        .collect();
    if !unmapped.is_empty() {
        return Err(PlanError::TableMap(format!(
            "no target for {}",
            unmapped.join(", ")
        )));
    }
    Ok(map.into_iter().map(|m| m.unwrap_or(0)).collect())
}

/// The tables each agent works on: all of them (shared) or a contiguous share each
/// (partition; larger shares first). For prepare and cleanup, always a share each.
pub fn tables_for_agents(
    tables: &[(u32, usize)],
    agents: usize,
    shared: bool,
) -> Vec<Vec<(u32, usize)>> {
    if shared {
        return vec![tables.to_vec(); agents];
    }
    let shares = split_evenly(tables.len() as u64, agents);
    let mut out = Vec::with_capacity(agents);
    let mut at = 0usize;
    for n in shares {
        out.push(tables[at..at + n as usize].to_vec());
        at += n as usize;
    }
    out
}

fn invalid(option: &'static str, value: impl ToString, why: &'static str) -> PlanError {
    PlanError::Invalid {
        option,
        value: value.to_string(),
        why,
    }
}

pub fn num<T: std::str::FromStr>(
    raw: &Option<String>,
    option: &'static str,
    default: T,
) -> Result<T, PlanError> {
    match raw {
        None => Ok(default),
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| invalid(option, s, "not a non-negative integer")),
    }
}

/// Parses `95` or `50,95,99.9`; each value must lie in (0, 100].
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, PlanError> {
    // sysbench's --percentile=0: percentiles off (the report says "disabled").
    if s.trim().parse::<f64>() == Ok(0.0) {
        return Ok(vec![0.0]);
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| invalid("percentile", s, "not a number"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(invalid(
                "percentile",
                part.trim(),
                "must lie in (0, 100]; 0 alone turns percentiles off",
            ));
        }
        out.push(v);
    }
    Ok(out)
}

/// Parses `--agents` (comma-separated, repeatable) into HOST:PORT addresses. An agent
/// listed twice is refused: it would be asked for two shares and answer the second "busy".
pub fn parse_agents(list: &[String]) -> Result<Vec<String>, PlanError> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<(String, u16)> = Vec::new();
    for a in list.iter().flat_map(|s| s.split(',')).map(str::trim) {
        let Some(key) = agent_key(a) else {
            return Err(invalid("agents", a, "expected HOST:PORT"));
        };
        if let Some(i) = seen.iter().position(|k| *k == key) {
            let spellings = if out[i] == a {
                String::new()
            } else {
                format!(" (as {} and {a})", out[i])
            };
            return Err(PlanError::AgentTwice(out[i].clone(), spellings));
        }
        seen.push(key);
        out.push(a.to_string());
    }
    if out.is_empty() {
        return Err(invalid("agents", "", "expected HOST:PORT"));
    }
    Ok(out)
}

/// An agent's address as a comparable key: the host without brackets, an IP address in
/// its canonical form and a name in lower case, and the port as a number (so that
/// `[::1]:7600`, `[0::1]:07600` are one agent, and `Client1:7600`, `client1:7600` another).
/// None when `a` is not HOST:PORT. (A name and its address, `localhost` and `127.0.0.1`,
/// stay two: telling them apart would need a lookup.)
fn agent_key(a: &str) -> Option<(String, u16)> {
    let (host, port) = a.rsplit_once(':')?;
    let port = port.parse::<u16>().ok().filter(|p| *p > 0)?;
    if host.is_empty() {
        return None;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let host = match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => bare.trim_end_matches('.').to_ascii_lowercase(),
    };
    Some((host, port))
}

/// Splits `total` into `parts` shares as evenly as possible, larger shares first:
/// 10 over 3 gives 4, 3, 3.
pub fn split_evenly(total: u64, parts: usize) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let base = total / parts as u64;
    let extra = (total % parts as u64) as usize;
    (0..parts).map(|i| base + u64::from(i < extra)).collect()
}

/// Splits an event limit over agents in proportion to their threads: the events are first
/// spread over all threads evenly, then each agent gets the sum over its threads.
pub fn split_by_threads(events: u64, threads: &[u64]) -> Vec<u64> {
    let total: u64 = threads.iter().sum();
    let per_thread = split_evenly(events, total as usize);
    let mut out = Vec::with_capacity(threads.len());
    let mut at = 0usize;
    for &t in threads {
        out.push(per_thread[at..at + t as usize].iter().sum());
        at += t as usize;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse;

    fn plan(args: &[&str]) -> Result<Plan, PlanError> {
        build(&parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap())
    }

    /// The option the plan of `args` refuses as invalid (None for a plan or another error).
    fn refused_option(args: &[&str]) -> Option<&'static str> {
        match plan(args) {
            Err(PlanError::Invalid { option, .. }) => Some(option),
            _ => None,
        }
    }

    #[test]
    fn split_is_even_with_larger_shares_first() {
        assert_eq!(split_evenly(10, 3), vec![4, 3, 3]);
        assert_eq!(split_evenly(8, 2), vec![4, 4]);
        assert_eq!(split_evenly(2, 3), vec![1, 1, 0]);
        assert_eq!(split_evenly(0, 2), vec![0, 0]);
        for (total, parts) in [(97u64, 7usize), (256, 3), (1, 1)] {
            let s = split_evenly(total, parts);
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn old_command_lines_without_limits_run_ten_thousand_events() {
        let limits = |args: &[&str]| {
            let p = plan(args).unwrap();
            (p.time.map(|t| t.as_secs()), p.events)
        };
        assert_eq!(limits(&["--test=cpu", "run"]), (None, Some(10_000)));
        assert_eq!(
            limits(&["cpu", "--num-threads=2", "run"]),
            (None, Some(10_000))
        );
        assert_eq!(
            limits(&["--test=tests/db/oltp.lua", "--oltp-table-size=1000", "run"]),
            (None, Some(10_000))
        );
        // A limit given keeps its own meaning; an event limit alone has 0.4/0.5's time
        // limit (none); 1.0 spellings keep 1.0's 10 s.
        assert_eq!(
            limits(&["--test=cpu", "--max-time=5", "run"]),
            (Some(5), None)
        );
        assert_eq!(
            limits(&["--test=cpu", "--max-requests=7", "run"]),
            (None, Some(7))
        );
        assert_eq!(limits(&["cpu", "--events=7", "run"]), (Some(10), Some(7)));
        assert_eq!(limits(&["cpu", "--threads=2", "run"]), (Some(10), None));
        // memory ends by its total size, as before.
        assert_ne!(limits(&["--test=memory", "run"]).1, Some(10_000));
    }

    #[test]
    fn forced_shutdown_counts_seconds_or_a_share_of_the_time() {
        let f =
            |args: &[&str]| plan(&[&["cpu"], args, &["run"]].concat()).map(|p| p.forced_shutdown);
        assert_eq!(f(&[]).unwrap(), None);
        assert_eq!(f(&["--forced-shutdown=off"]).unwrap(), None);
        assert_eq!(
            f(&["--forced-shutdown=5"]).unwrap(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            f(&["--time=60", "--forced-shutdown=10%"]).unwrap(),
            Some(Duration::from_secs(6))
        );
        for bad in ["x", "-1", "5s", "200000%", "99999999999"] {
            assert!(f(&[&format!("--forced-shutdown={bad}")]).is_err(), "{bad}");
        }
        assert!(f(&["--time=0", "--events=10", "--forced-shutdown=5"]).is_err());
    }

    #[test]
    fn checkpoints_are_sorted_seconds() {
        let c = |v: &str| {
            plan(&["cpu", &format!("--report-checkpoints={v}"), "run"]).map(|p| p.checkpoints)
        };
        assert_eq!(c("30,10,20,10").unwrap(), vec![10, 20, 30]);
        for bad in ["", "0", "x", "5,,6", "-1"] {
            assert!(c(bad).is_err(), "{bad:?}");
        }
        assert!(plan(&["cpu", "run"]).unwrap().checkpoints.is_empty());
    }

    #[test]
    fn old_seed_switches_and_options_without_effect() {
        let seed = |args: &[&str]| plan(&[&["cpu"], args, &["run"]].concat()).map(|p| p.seed);
        assert_eq!(seed(&["--rand-init=on"]).unwrap(), 0);
        assert_eq!(seed(&["--rand-init"]).unwrap(), 0);
        assert_eq!(seed(&["--init-rng=off"]).unwrap(), FIXED_SEED);
        assert_eq!(seed(&["--rand-init=off", "--rand-seed=7"]).unwrap(), 7);
        assert!(matches!(
            seed(&["--rand-init=on", "--rand-seed=7"]),
            Err(PlanError::Conflict(_))
        ));
        assert!(seed(&["--rand-init=maybe"]).is_err());
        // 0.4's OLTP options in 1.0 terms.
        let oltp = |args: &[&str]| match plan(args).unwrap().workload {
            Workload::Oltp(o) => o.config,
            w => panic!("{w:?}"),
        };
        let c = oltp(&[
            "--test=oltp",
            "--mysql-table-engine=myisam",
            "--oltp-dist-type=uniform",
            "--oltp-auto-inc=off",
            "run",
        ]);
        assert!(c.options.skip_trx && !c.options.auto_inc);
        assert_eq!(c.distribution.name(), "uniform");
        assert!(
            !oltp(&["--test=oltp", "--mysql-table-engine=innodb", "run"])
                .options
                .skip_trx
        );
        assert!(
            oltp(&["--test=oltp", "--mysql-engine-trx=no", "run"])
                .options
                .skip_trx
        );
        assert!(
            !oltp(&[
                "--test=oltp",
                "--mysql-table-engine=myisam",
                "--mysql-engine-trx=yes",
                "run"
            ])
            .options
            .skip_trx
        );
        // A 1.0 command line keeps BEGIN/COMMIT with MyISAM, as sysbench 1.0 does.
        assert!(
            !oltp(&["oltp_read_write", "--mysql-storage-engine=myisam", "run"])
                .options
                .skip_trx
        );
        let c = oltp(&[
            "--test=oltp",
            "--oltp-dist-type=gaussian",
            "--oltp-dist-iter=6",
            "run",
        ]);
        assert_eq!(
            c.distribution,
            fleetbench_model::rand::Distribution::Gaussian { iter: 6 }
        );
        assert_eq!(
            oltp(&["--test=oltp", "--oltp-reconnect-mode=transaction", "run"])
                .options
                .reconnect,
            1
        );
        assert_eq!(
            oltp(&["--test=oltp", "--oltp-reconnect-mode=session", "run"])
                .options
                .reconnect,
            0
        );
        assert!(matches!(
            plan(&["--test=oltp", "--oltp-reconnect-mode=query", "run"]),
            Err(PlanError::NotSupported(_))
        ));
        let c = oltp(&[
            "--test=oltp",
            "--oltp-test-mode=simple",
            "--oltp-reconnect-mode=query",
            "run",
        ]);
        assert_eq!((c.options.reconnect, c.reconnect_random), (1, false));
        let c = oltp(&["--test=oltp", "--oltp-reconnect-mode=random", "run"]);
        assert_eq!((c.options.reconnect, c.reconnect_random), (0, true));
        assert!(plan(&["--test=oltp", "--oltp-reconnect-mode=often", "run"]).is_err());
        assert!(plan(&["--test=oltp", "--mysql-engine-trx=maybe", "run"]).is_err());
        let c = oltp(&[
            "--test=oltp",
            "--mysql-table-engine=myisam",
            "--mysql-create-options=CHECKSUM=1",
            "run",
        ]);
        assert_eq!(c.create_options, "CHECKSUM=1 MAX_ROWS = 1000000");
        let c = oltp(&[
            "oltp_read_write",
            "--mysql-storage-engine=myisam",
            "--myisam-max-rows=5000",
            "run",
        ]);
        assert_eq!(c.create_options, "MAX_ROWS = 5000");
        assert_eq!(
            oltp(&["oltp_read_write", "--mysql-storage-engine=myisam", "run"]).create_options,
            ""
        );
        assert!(
            plan(&[
                "oltp_read_write",
                "--mysql-create-options=x; DROP TABLE t",
                "run"
            ])
            .is_err()
        );
        let c = oltp(&[
            "--test=oltp",
            "--oltp-connect-delay=500",
            "--oltp-user-delay-min=10",
            "--oltp-user-delay-max=20",
            "run",
        ]);
        assert_eq!(
            (c.options.connect_delay_us, c.options.user_delay_us),
            (500, (10, 20))
        );
        assert!(
            plan(&[
                "--test=oltp",
                "--oltp-user-delay-min=30",
                "--oltp-user-delay-max=20",
                "run"
            ])
            .is_err()
        );
        // 0.4's test modes as the 1.0 tests that send the same statements.
        for (mode, want) in [
            ("--oltp-test-mode=complex", "oltp_read_write"),
            ("--oltp-test-mode=simple", "oltp_point_select"),
            ("--oltp-test-mode=nontrx", "oltp_point_select"),
            ("--oltp-nontrx-mode=update_key", "oltp_update_index"),
            ("--oltp-nontrx-mode=update_nokey", "oltp_update_non_index"),
            ("--oltp-nontrx-mode=insert", "oltp_insert"),
            ("--oltp-nontrx-mode=delete", "oltp_delete"),
        ] {
            let mut args = vec!["--test=oltp", mode, "run"];
            if mode.starts_with("--oltp-nontrx") {
                args.insert(1, "--oltp-test-mode=nontrx");
            }
            assert_eq!(plan(&args).unwrap().workload.name(), want, "{mode}");
        }
        // 0.5's oltp.lua ignores the mode, as 0.5 did.
        let p = plan(&["--test=tests/db/oltp.lua", "--oltp-test-mode=simple", "run"]).unwrap();
        assert_eq!(p.workload.name(), "oltp_read_write");
        // sp calls the named procedure; without a name there is nothing to call, and the
        // name is ignored in the other modes, as 0.4 did.
        assert_eq!(
            refused_option(&["--test=oltp", "--oltp-test-mode=sp", "run"]),
            Some("oltp-sp-name")
        );
        let p = plan(&[
            "--test=oltp",
            "--oltp-test-mode=sp",
            "--oltp-sp-name=db1.p",
            "run",
        ])
        .unwrap();
        assert_eq!(p.workload.name(), "oltp_sp");
        let Workload::Oltp(o) = &p.workload else {
            panic!("not OLTP")
        };
        assert_eq!(o.config.sp_name, "db1.p");
        let p = plan(&["--test=oltp", "--oltp-sp-name=p", "run"]).unwrap();
        let Workload::Oltp(o) = &p.workload else {
            panic!("not OLTP")
        };
        assert_eq!(
            (p.workload.name(), o.config.sp_name.as_str()),
            ("oltp_read_write", "")
        );
        assert!(
            plan(&[
                "--test=oltp",
                "--oltp-test-mode=nontrx",
                "--oltp-nontrx-mode=x",
                "run"
            ])
            .is_err()
        );
        // 0.5's parallel_prepare.lua: run means prepare (oltp_read_write's tables).
        let p = plan(&[
            "--test=/opt/sysbench/tests/db/parallel_prepare.lua",
            "--oltp-tables-count=4",
            "run",
        ])
        .unwrap();
        assert_eq!(
            (p.command, p.workload.name()),
            (Command::Prepare, "oltp_read_write")
        );
        let p = plan(&["--test=parallel_prepare.lua", "cleanup"]).unwrap();
        assert_eq!(p.command, Command::Cleanup);
        // Open loop: --rate and 0.5's --tx-rate; 0 is the closed loop.
        assert_eq!(plan(&["cpu", "--rate=100", "run"]).unwrap().rate, 100.0);
        assert_eq!(
            plan(&["cpu", "--tx-rate=250.5", "run"]).unwrap().rate,
            250.5
        );
        assert_eq!(plan(&["cpu", "--tx-rate=0", "run"]).unwrap().rate, 0.0);
        for bad in [
            "--rate=-1",
            "--rate=fast",
            "--rate=inf",
            "--rate=NaN",
            "--rate=1e12",
        ] {
            assert_eq!(refused_option(&["cpu", bad, "run"]), Some("rate"), "{bad}");
        }
        assert!(matches!(
            plan(&["mutex", "--rate=10", "run"]),
            Err(PlanError::NotSupported(m)) if m.contains("nothing to pace")
        ));
        assert_eq!(split_rate(900.0, &[1, 2, 0]), vec![300.0, 600.0, 0.0]);
        assert_eq!(split_rate(5.0, &[]), Vec::<f64>::new());
        let p = plan(&[
            "cpu",
            "--thread-stack-size=64K",
            "--debug",
            "--validate=on",
            "run",
        ])
        .unwrap();
        assert_eq!(p.notes.len(), 3, "{:?}", p.notes);
        assert!(p.notes[0].starts_with("--thread-stack-size is accepted"));
        assert!(plan(&["cpu", "run"]).unwrap().notes.is_empty());
    }

    #[test]
    fn sysbench_0_5_scripts_map_to_their_1_0_tests() {
        let name = |test: &str| match plan(&[&format!("--test={test}"), "run"]) {
            Ok(p) => p.workload.name().to_string(),
            Err(e) => panic!("{test}: {e}"),
        };
        for (script, test) in [
            ("tests/db/oltp.lua", "oltp_read_write"),
            (
                "/data/sysbench-0.5/sysbench/tests/db/select.lua",
                "oltp_point_select",
            ),
            ("oltp_simple.lua", "oltp_point_select"),
            ("tests/db/insert.lua", "oltp_insert"),
            ("tests/db/delete.lua", "oltp_delete"),
            ("tests/db/update_index.lua", "oltp_update_index"),
            ("tests/db/update_non_index.lua", "oltp_update_non_index"),
            ("tests/db/select_random_points.lua", "select_random_points"),
            ("select_random_ranges.lua", "select_random_ranges"),
            ("tests/db/bulk_insert.lua", "bulk_insert"),
        ] {
            assert_eq!(name(script), test, "{script}");
        }
        // A bare word is a 1.0 test name, not a script: `insert` is no test of 1.0.
        assert!(plan(&["insert", "run"]).is_err());
    }

    #[test]
    fn events_follow_thread_shares() {
        assert_eq!(split_by_threads(100, &[4, 3, 3]), vec![40, 30, 30]);
        assert_eq!(split_by_threads(11, &[2, 1]), vec![8, 3]);
        assert_eq!(split_by_threads(7, &[4, 3, 3]).iter().sum::<u64>(), 7);
    }

    #[test]
    fn sizes_counts_and_durations_are_bounded_before_anything_is_allocated() {
        // Row 4 of issue 17: a time that overflows a clock.
        let huge = ["cpu", "--time=18446744073709551615", "--events=10", "run"];
        assert_eq!(refused_option(&huge), Some("time"));
        for opt in ["--report-interval", "--ready-timeout"] {
            assert!(plan(&["cpu", &format!("{opt}=99999999999"), "run"]).is_err());
        }
        // Row 3: a billion tables.
        let r = plan(&["oltp_read_write", "--tables=1000000000", "run"]);
        assert!(
            matches!(
                r,
                Err(PlanError::Spec(SpecError::Invalid {
                    option: "tables",
                    ..
                }))
            ),
            "{r:?}"
        );
        // Row 16: a billion threads, remote or embedded.
        let r = plan(&["cpu", "--agents=a:1", "--threads=1000000000", "run"]);
        assert!(matches!(r, Err(PlanError::Limit(_))), "{r:?}");
        assert!(plan(&["cpu", "--threads=1000000000", "run"]).is_err());
        assert!(plan(&["cpu", "--agents=a:1,b:2", "--threads=150000", "run"]).is_ok());
        // Row 1: a memory block no host has, with embedded agents.
        let r = plan(&[
            "memory",
            "--memory-block-size=1000000T",
            "--memory-total-size=1000000T",
            "run",
        ]);
        assert!(matches!(r, Err(PlanError::Limit(_))), "{r:?}");
        // Row 12: embedded agents are bounded.
        let many = ["cpu", "--local-agents=100000", "run"];
        assert_eq!(refused_option(&many), Some("local-agents"));
        // OLTP limits the agent checks too.
        let r = plan(&["select_random_points", "--random-points=70000", "run"]);
        assert!(matches!(r, Err(PlanError::Spec(_))), "{r:?}");
    }

    #[test]
    fn ipv6_targets_ports_and_empty_items() {
        let t = parse_target("a=mysql://u:p@[::1]:3307/db").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 3307));
        let t = parse_target("a=mysql://u:p@[fe80::1]/db").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", 3306));
        assert!(parse_target("a=mysql://u:p@::1:3306/db").is_err());
        assert!(parse_target("a=mysql://u:p@[::1/db").is_err());
        assert!(parse_target("a=mysql://u:p@[nohost]:1/db").is_err());
        for port in ["70000", "0", "-1", "x"] {
            let e = parse_target(&format!("a=mysql://u:p@db:{port}/db")).unwrap_err();
            assert!(e.to_string().contains("from 1 to 65535"), "{port}: {e}");
        }
        for h in ["--mysql-host=[::1]", "--mysql-host=::1"] {
            let p = plan(&["oltp_read_write", h, "run"]).unwrap();
            let Workload::Oltp(o) = &p.workload else {
                panic!("not OLTP")
            };
            assert_eq!(o.config.targets[0].host, "::1", "{h}");
        }
        assert!(plan(&["oltp_read_write", "--mysql-port=70000", "run"]).is_err());
        assert!(plan(&["oltp_read_write", "--mysql-port=0", "run"]).is_err());
        assert!(
            plan(&[
                "oltp_read_write",
                "--tables=2",
                "--target=a=mysql://h/d",
                "--table-map=sbtest1=a,,sbtest2=a",
                "run"
            ])
            .is_err()
        );
        assert!(plan(&["fileio", "--file-extra-flags=sync,,direct", "prepare"]).is_err());
        assert!(plan(&["cpu", "--agents=a:1,,b:2", "run"]).is_err());
        assert!(crate::sweep::parse_thread_list("4,,8").is_err());
    }

    #[test]
    fn conflicting_targets_and_agents_are_refused() {
        let a = "--target=a=mysql://u:p@db1:3306/sbtest";
        let a2 = "--target=a=mysql://u:p@db2:3306/sbtest";
        let e = plan(&["oltp_read_write", a, a2, "run"]).unwrap_err();
        assert_eq!(e, PlanError::TargetTwice("a".into()));
        assert!(
            e.to_string().starts_with("--target a is given twice"),
            "{e}"
        );
        let e = plan(&["tpcc", a, a2, "prepare"]).unwrap_err();
        assert_eq!(e, PlanError::TargetTwice("a".into()));
        for option in CONNECTION_OPTIONS {
            let given = format!("--{option}=x");
            for args in [
                ["oltp_read_write", a, &given, "run"],
                ["tpcc", &given, a, "prepare"],
            ] {
                let e = plan(&args).unwrap_err();
                let msg = e.to_string();
                assert!(
                    msg.contains("--target a") && msg.contains(&format!("--{option} ")),
                    "{msg}"
                );
                assert!(!msg.contains('\n'), "{msg}");
            }
        }
        // tpcc-mysql's letters are the same options.
        assert!(matches!(
            plan(&["tpcc", a, "-P3307", "prepare"]),
            Err(PlanError::TargetAndConnection { .. })
        ));
        // TLS options are not connection options: targets without their own take them.
        assert!(plan(&["oltp_read_write", a, "--mysql-ssl-mode=required", "run"]).is_ok());
        // Two names, or one target alone, plan.
        assert!(
            plan(&[
                "oltp_read_write",
                "--tables=2",
                a,
                "--target=b=mysql://u:p@db1:3306/sbtest",
                "--table-map=sbtest1=a,sbtest2=b",
                "run"
            ])
            .is_ok()
        );
        // The same agent twice, as given or spelled otherwise.
        for (list, says) in [
            (&["--agents=a:7600,a:7600"][..], "a:7600 twice"),
            (&["--agents=a:7600", "--agents=b:1,a:7600"], "a:7600 twice"),
            (
                &["--agents=Host:7600,host:07600"],
                "Host:7600 twice (as Host:7600 and host:07600)",
            ),
            (
                &["--agents=[::1]:7600,[0::1]:7600"],
                "[::1]:7600 twice (as [::1]:7600 and [0::1]:7600)",
            ),
            (
                &["--agents=127.0.0.1:7600,127.0.0.1:7600"],
                "127.0.0.1:7600 twice",
            ),
        ] {
            let args: Vec<&str> = ["cpu"]
                .iter()
                .chain(list)
                .chain(&["run"])
                .copied()
                .collect();
            let e = plan(&args).unwrap_err();
            assert!(matches!(e, PlanError::AgentTwice(..)), "{list:?}: {e}");
            assert!(e.to_string().contains(says), "{list:?}: {e}");
        }
        assert!(plan(&["cpu", "--agents=a:7600,a:7601,b:7600", "run"]).is_ok());
        assert!(plan(&["cpu", "--agents=localhost:7600,127.0.0.1:7600", "run"]).is_ok());
    }

    #[test]
    fn defaults_match_sysbench() {
        let p = plan(&["cpu", "run"]).unwrap();
        assert_eq!(p.workload, Workload::Cpu(CpuSpec { max_prime: 10_000 }));
        assert_eq!(p.threads, 1);
        assert_eq!(p.time, Some(Duration::from_secs(10)));
        assert_eq!(p.events, None);
        assert_eq!(p.percentiles, vec![95.0]);
        assert_eq!(p.agents, AgentSource::Local(1));
        assert_eq!(p.tick(), Duration::from_secs(1));
    }

    #[test]
    fn tpcc_mysql_letters_give_the_same_plan_as_the_long_options() {
        let letters = plan(&[
            "tpcc",
            "-h127.0.0.1",
            "-P3307",
            "-dtpcc",
            "-uroot",
            "-p",
            "",
            "-w50",
            "-c100",
            "-r300",
            "-l600",
            "-i10",
            "run",
        ])
        .unwrap();
        let long = plan(&[
            "tpcc",
            "--mysql-host=127.0.0.1",
            "--mysql-port=3307",
            "--mysql-db=tpcc",
            "--mysql-user=root",
            "--mysql-password=",
            "--warehouses=50",
            "--threads=100",
            "--warmup-time=300",
            "--time=600",
            "--report-interval=10",
            "run",
        ])
        .unwrap();
        assert_eq!(letters, long);
        let Workload::Tpcc(t) = &letters.workload else {
            panic!("{:?}", letters.workload)
        };
        assert_eq!(
            (t.options.warehouses, t.target.port, t.target.user.as_str()),
            (50, 3307, "root")
        );
        assert_eq!(
            (letters.threads, letters.time),
            (100, Some(Duration::from_secs(600)))
        );
        // Bad values name the option.
        for (args, want) in [
            (&["tpcc", "-w0", "run"][..], "--warehouses"),
            (
                &["tpcc", "--warehouse-split=half", "run"],
                "--warehouse-split",
            ),
            (&["tpcc", "--keying-think=yes", "run"], "--keying-think"),
            (&["tpcc", "--mysql-host=a,b", "run"], "one host"),
            (
                &[
                    "tpcc",
                    "--target=a=mysql://u@h/d",
                    "--target=b=mysql://u@h/d",
                    "run",
                ],
                "one --target",
            ),
            (&["tpcc", "prewarm"], "prewarm"),
        ] {
            let e = plan(args).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
        assert_eq!(plan(&["tpcc", "check"]).unwrap().command, Command::Check);
    }

    #[test]
    fn warehouse_shares_are_contiguous_and_cover_all() {
        assert_eq!(warehouse_shares(10, 3), vec![(1, 4), (5, 7), (8, 10)]);
        assert_eq!(warehouse_shares(2, 5), vec![(1, 1), (2, 2)]);
        assert_eq!(warehouse_shares(1, 1), vec![(1, 1)]);
        check_tpcc_partition(2, &[10, 10]).unwrap();
        check_tpcc_partition(4, &[20, 20]).unwrap();
        assert!(check_tpcc_partition(2, &[11, 10]).is_err());
        assert!(check_tpcc_partition(1, &[1, 1]).is_err());
        // An agent without threads needs no warehouse.
        check_tpcc_partition(1, &[5, 0]).unwrap();
    }

    #[test]
    fn sysbench_spellings_give_the_same_plan() {
        let a = plan(&[
            "--test=cpu",
            "--num-threads=8",
            "--cpu-max-prime=20000",
            "--max-time=10",
            "run",
        ])
        .unwrap();
        let b = plan(&[
            "cpu",
            "--threads",
            "8",
            "run",
            "--cpu_max_prime=20000",
            "--time=10",
        ])
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.threads, 8);
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(
            plan(&["nosuch", "run"]),
            Err(PlanError::UnknownTest("nosuch".into()))
        );
        for t in ["--threads=0", "--threads=x"] {
            assert_eq!(refused_option(&["cpu", t, "run"]), Some("threads"), "{t}");
        }
        assert_eq!(
            plan(&["cpu", "--time=0", "--events=0", "run"]),
            Err(PlanError::Endless)
        );
        for p in ["0,95", "101", "-5", "abc", "95,0"] {
            let pct = format!("--percentile={p}");
            assert_eq!(
                refused_option(&["cpu", &pct, "run"]),
                Some("percentile"),
                "{p}"
            );
        }
        assert!(matches!(
            plan(&["cpu", "prepare"]),
            Err(PlanError::Unsupported { .. })
        ));
        assert!(matches!(plan(&["cpu"]), Err(PlanError::MissingCommand(_))));
        assert_eq!(
            refused_option(&["cpu", "--agents=nohost", "run"]),
            Some("agents")
        );
        assert_eq!(
            plan(&["cpu", "--agents=a:1", "--local-agents=2", "run"]),
            Err(PlanError::AgentsConflict)
        );
    }

    #[test]
    fn percentile_list_and_agents_list() {
        let p = plan(&[
            "cpu",
            "--percentile=50,95,99.9",
            "--agents",
            "a:1,b:2",
            "--agents=c:3",
            "run",
        ])
        .unwrap();
        assert_eq!(p.percentiles, vec![50.0, 95.0, 99.9]);
        assert_eq!(
            p.agents,
            AgentSource::Remote(vec!["a:1".into(), "b:2".into(), "c:3".into()])
        );
        assert_eq!(
            plan(&["cpu", "--percentile=100", "run"])
                .unwrap()
                .percentiles,
            vec![100.0]
        );
    }
}
