//! What a plan is: the validated invocation, where its load runs, and what can be wrong
//! with a command line.

use std::path::PathBuf;
use std::time::Duration;

/// What is wrong with the command line; always the user's to fix (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("missing test name: try `fleetbench cpu run`")]
    MissingTest,
    #[error("the '{0}' test requires a command argument: prepare, run, cleanup or prewarm")]
    MissingCommand(String),
    #[error(
        "unknown test '{0}': available tests are: cpu, fileio, memory, threads, mutex, oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select, oltp_insert, oltp_delete, oltp_update_index, oltp_update_non_index, select_random_points, select_random_ranges, bulk_insert, oltp_sp, tpcc, or a sysbench Lua script (a path, or NAME.lua in the current directory)"
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
    #[error("invalid --replica '{0}': {1}")]
    Replica(String, String),
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
    /// A script's options or commands.
    #[error("{0}")]
    Script(String),
    #[error(
        "missing required argument: --file-test-mode (seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw)"
    )]
    MissingTestMode,
}

pub use fleetbench_model::options::SpecError;
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
    /// `--warn-client-saturation`: a saturated client host is warned about for the tests
    /// that load the client on purpose (cpu, memory, threads, mutex) too.
    pub warn_client_saturation: bool,
    /// Observer agents on the servers' hosts (`--observe`).
    pub observe: ObservePlan,
}

/// Which hosts observe which targets, and what they look for there; and the replicas read
/// beside the targets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservePlan {
    /// `--server-status=off`: the targets' own counters are not read (replicas still are).
    pub no_status: bool,
    /// Servers read each interval but not loaded (`--replica NAME=URL`), each with the
    /// index of the target it replicates.
    pub replicas: Vec<(fleetbench_model::workloads::server::Target, usize)>,
    /// (target index, agent address), in the order given.
    pub hosts: Vec<(usize, String)>,
    /// Process names, or one pid file; empty: the agent's defaults.
    pub processes: Vec<String>,
    /// A directory on the data device, on the observer's host.
    pub dir: Option<String>,
}

impl Plan {
    /// The tick agents report at: the report interval, or one second when none is asked
    /// for (the JSON always carries a per-second series).
    pub fn tick(&self) -> Duration {
        self.report_interval.unwrap_or(Duration::from_secs(1))
    }
}
