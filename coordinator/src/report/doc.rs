//! The result documents `--json` writes and `compare`, `report`, the HTML page, the CSV
//! table and sweep summaries read back: one set of types for the run document, the sweep
//! document and the scenarios document, so writer and readers cannot drift apart. The
//! shape is documented in docs/result-format.md and docs/result-schema.json.
//!
//! Readers accept every file written so far: a field added after the first writer of its
//! document is `#[serde(default)]` (format 1 had runs only, without `kind` or the latency
//! spectrum). The workload's own options (`config`) and the percentiles of a latency
//! object stay open maps, flattened into their objects.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The version of the documents this build writes, and the newest it reads. Bumped whenever
/// a field changes meaning or disappears, or a new kind of document appears (2: `kind`,
/// sweep and scenario documents, `totals.latency_spectrum_ms`). The shape is documented in
/// docs/result-format.md and docs/result-schema.json.
pub const FORMAT_VERSION: u32 = 2;

/// What goes wrong reading a document.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("no format_version")]
    NoVersion,
    #[error("format_version {found} is newer than this fleetbench reads ({reads})")]
    Newer { found: u64, reads: u32 },
    #[error("unknown kind '{0}'")]
    UnknownKind(String),
    /// The document does not have the shape of its kind.
    #[error("{0}")]
    Shape(String),
}

/// Any result document, by its `kind`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Document {
    Run(Box<Report>),
    Sweep(SweepDoc),
    Scenarios(ScenariosDoc),
}

impl Document {
    /// Reads a document from JSON text, checking its version first: a newer file is
    /// refused by its version, not by the first field this build does not know.
    pub fn from_slice(bytes: &[u8]) -> Result<Document, LoadError> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| LoadError::Json(e.to_string()))?;
        Document::from_value(v)
    }

    /// A document from parsed JSON; a missing `kind` is a run (format 1 had nothing else).
    pub fn from_value(v: Value) -> Result<Document, LoadError> {
        let found = v
            .get("format_version")
            .and_then(Value::as_u64)
            .ok_or(LoadError::NoVersion)?;
        if found > u64::from(FORMAT_VERSION) {
            return Err(LoadError::Newer {
                found,
                reads: FORMAT_VERSION,
            });
        }
        let kind = v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("run")
            .to_string();
        let shape = |e: serde_json::Error| LoadError::Shape(e.to_string());
        Ok(match kind.as_str() {
            "run" => Document::Run(Box::new(serde_json::from_value(v).map_err(shape)?)),
            "sweep" => Document::Sweep(serde_json::from_value(v).map_err(shape)?),
            "scenarios" => Document::Scenarios(serde_json::from_value(v).map_err(shape)?),
            _ => return Err(LoadError::UnknownKind(kind)),
        })
    }

    /// "run", "sweep" or "scenarios".
    pub fn kind(&self) -> &str {
        match self {
            Document::Run(r) => &r.kind,
            Document::Sweep(s) => &s.kind,
            Document::Scenarios(s) => &s.kind,
        }
    }

    pub fn format_version(&self) -> u32 {
        match self {
            Document::Run(r) => r.format_version,
            Document::Sweep(s) => s.format_version,
            Document::Scenarios(s) => s.format_version,
        }
    }

    pub fn fleetbench_version(&self) -> &str {
        match self {
            Document::Run(r) => &r.fleetbench_version,
            Document::Sweep(s) => &s.fleetbench_version,
            Document::Scenarios(s) => &s.fleetbench_version,
        }
    }
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Document::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

fn one() -> u32 {
    1
}

fn run_kind() -> String {
    "run".into()
}

/// A run (`kind` "run").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format_version: u32,
    /// "run" (this document); sweeps and scenarios are "sweep" and "scenarios".
    #[serde(default = "run_kind")]
    pub kind: String,
    pub fleetbench_version: String,
    pub test: String,
    pub command: String,
    /// Absent in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    pub config: Config,
    pub interrupted: bool,
    pub totals: Totals,
    pub intervals: Vec<Interval>,
    pub agents: Vec<Agent>,
}

/// What the result says about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The run's id, as the agents log it.
    pub run_id: String,
    /// When the measurement began (after any warm-up) and when the last agent's outcome
    /// arrived: RFC 3339, UTC.
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// `--tag key=value`.
    pub tags: BTreeMap<String, String>,
    /// The command line, secrets masked; empty for a plan from a scenario file.
    pub command_line: String,
    /// The git commit of the fleetbench build.
    pub fleetbench_commit: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub threads: u32,
    pub time_s: u64,
    pub events: u64,
    pub report_interval_s: u64,
    /// The tick the interval series below uses.
    pub interval_s: f64,
    pub percentiles: Vec<f64>,
    pub rand_seed: u64,
    /// Agent addresses, or "local" entries for embedded agents.
    pub agents: Vec<String>,
    /// `--rate`: events per second over all agents in an open loop; 0 = closed loop. None
    /// only in files written before the open loop (kept apart from 0 so that such a file
    /// reads and lists as it always did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// `--warmup-time`: seconds of load before the measurement, on the same threads and
    /// connections, in none of the figures. None in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_time_s: Option<f64>,
    /// `--warn-client-saturation`: a test that loads the client host on purpose (cpu,
    /// memory, threads, mutex) still warns of a saturated one. Absent when not given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warn_client_saturation: bool,
    /// The workload's own options (cpu_max_prime, tables, file_num, ...).
    #[serde(flatten)]
    pub workload: BTreeMap<String, Value>,
}

impl Config {
    /// The offered rate (events/s); 0 in a closed loop.
    pub fn rate(&self) -> f64 {
        self.rate.unwrap_or(0.0)
    }

    /// The configuration as the file holds it, the run's own keys and the workload's in one
    /// map (in key order): what `compare` and the HTML page list as settings.
    pub fn entries(&self) -> serde_json::Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        }
    }
}

/// Latency figures in milliseconds; percentiles as "p50", "p99.9", ...
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub count: u64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub sum: f64,
    #[serde(flatten)]
    pub percentiles: BTreeMap<String, f64>,
}

impl LatencyMs {
    /// A figure by its key: "min", "avg", "max", "sum" or a percentile ("p95").
    pub fn get(&self, key: &str) -> Option<f64> {
        match key {
            "min" => Some(self.min),
            "avg" => Some(self.avg),
            "max" => Some(self.max),
            "sum" => Some(self.sum),
            "count" => Some(self.count as f64),
            p => self.percentiles.get(p).copied(),
        }
    }

    /// min, avg, max and the percentiles: what tables and charts compare (count and sum
    /// are not latencies).
    pub fn figures(&self) -> impl Iterator<Item = (String, f64)> + '_ {
        [("min", self.min), ("avg", self.avg), ("max", self.max)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(self.percentiles.iter().map(|(k, v)| (k.clone(), *v)))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub time_s: f64,
    pub threads: u32,
    pub events: u64,
    pub events_per_sec: f64,
    pub latency_ms: LatencyMs,
    /// Latency at many percentiles, for the percentile spectrum chart (format 2).
    #[serde(default)]
    pub latency_spectrum_ms: Vec<SpectrumPoint>,
    pub fairness: Fairness,
    pub agents_lost: usize,
    /// The workload's own figures (OLTP `sql`, fileio `file`, memory `memory`).
    #[serde(flatten)]
    pub figures: Figures,
    /// OLTP: latency of single statements per kind (point_select, commit, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub statements_latency_ms: BTreeMap<String, LatencyMs>,
    /// OLTP: what each database target received.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetJson>,
    /// Open loop (`--rate`) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopTotals>,
    /// `fleetbench pgbench` only: the figures of pgbench's own report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbench: Option<PgbenchTotals>,
}

/// `fleetbench pgbench`'s run in pgbench's terms: what its text report prints, so that a
/// script reads the counts of failed, retried, skipped and late transactions and the
/// per-command latencies of `-r` from the JSON rather than from the text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PgbenchTotals {
    /// Transactions completed, and pgbench's tps (processed over the run's time).
    pub processed: u64,
    pub tps: f64,
    pub failed: u64,
    pub serialization_failures: u64,
    pub deadlock_failures: u64,
    /// Transactions tried more than once (`--max-tries`), and the retries.
    pub retried: u64,
    pub retries: u64,
    /// `-R` with `-L`: transactions skipped for being late already.
    pub skipped: u64,
    /// `-L`: the limit and the transactions that took longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// Clients that ended on an error that is not retried (the run then exits 2).
    pub clients_aborted: u64,
    pub latency_avg_ms: f64,
    pub latency_stddev_ms: f64,
    /// `-R`: from each transaction's schedule to its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<ScheduleLag>,
    /// Per script (`-b NAME@WEIGHT`), in the order given.
    pub scripts: Vec<PgbenchScript>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleLag {
    pub avg: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PgbenchScript {
    /// pgbench's name for it ("<builtin: TPC-B (sort of)>").
    pub name: String,
    pub weight: u32,
    pub processed: u64,
    pub tps: f64,
    pub failed: u64,
    pub retried: u64,
    pub retries: u64,
    pub skipped: u64,
    pub latency_avg_ms: f64,
    pub latency_stddev_ms: f64,
    /// `-r`: one per command of the script, in its order (empty without `-r`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<PgbenchCommand>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PgbenchCommand {
    /// The command as the script has it (`\set aid random(1, 100000 * :scale)`, `BEGIN;`).
    pub command: String,
    pub latency_avg_ms: f64,
    pub failures: u64,
    pub retries: u64,
}

/// An open loop's run: the rate asked for and reached, the queue left, and service time
/// beside `latency_ms` (which counts from each event's arrival).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopTotals {
    pub target_rate: f64,
    pub arrivals: u64,
    pub arrivals_per_sec: f64,
    /// Events run per second (the achieved rate).
    pub events_per_sec: f64,
    pub queue_length_end: u64,
    /// False when the threads fell behind the rate for good (see the text report).
    pub rate_reached: bool,
    pub service_ms: LatencyMs,
    pub service_spectrum_ms: Vec<SpectrumPoint>,
    /// The merged histograms themselves, in microseconds: HdrHistogram V2 with deflate,
    /// base64, as HdrHistogram's own tools read them.
    pub latency_hdr: String,
    pub service_hdr: String,
}

/// An open loop's interval or agent: service time and the queue at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopPart {
    pub arrivals: u64,
    pub queue_length: u64,
    pub concurrency: u32,
    pub service_ms: LatencyMs,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sql {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub queries: u64,
    pub transactions: u64,
    pub tps: f64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    pub reconnects: u64,
    /// Failed attempts to reconnect to a lost server (absent when none failed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
}

impl Sql {
    /// The counters these figures were made from (an error code that is neither a number
    /// nor a SQLSTATE is left out).
    pub fn counters(&self) -> crate::merge::DbCounters {
        crate::merge::DbCounters {
            reads: self.reads,
            writes: self.writes,
            others: self.others,
            ignored_errors: self.ignored_errors,
            errors_by_code: self
                .errors_by_code
                .iter()
                .filter_map(|(code, n)| Some((fleetbench_model::sqlstate::parse(code)?, *n)))
                .collect(),
            reconnects: self.reconnects,
            reconnect_failures: self.reconnect_failures,
            // Only pgbench's -C report reads it, from the run itself.
            connect_ns: 0,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetJson {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub queries: u64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub statement_latency_ms: LatencyMs,
    /// How the agents' connections to it were made, each distinct way once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<crate::merge::Connection>,
    /// Connects tried again while the agents opened their connections, by reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connect_retries: BTreeMap<String, u64>,
    /// When it could not be reached during the run (absent when it always could).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downtime: Option<DowntimeJson>,
    /// A replica read beside the run (`--replica`): the target it replicates. It received
    /// no statements from the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_of: Option<String>,
    /// The server's own figures over the run, read over SQL each interval (absent where
    /// none were read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::servers::ServerJson>,
}

/// A target's failed reconnects over a run, and the whole intervals it was down.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DowntimeJson {
    pub reconnect_failures: u64,
    pub down_s: f64,
    pub down_intervals: u32,
    /// Seconds since the measurement began: the first and last interval with failures.
    pub from_s: f64,
    pub to_s: f64,
    /// Whether it failed the run (exit 4; see --max-downtime).
    pub failed_run: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub execution_time_avg_s: f64,
    pub execution_time_stddev_s: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since start at the end of the interval.
    pub t_s: f64,
    pub duration_s: f64,
    pub threads: u32,
    pub events: u64,
    pub events_per_sec: f64,
    pub latency_ms: LatencyMs,
    /// Events per agent in this interval (same order as `agents`); null once an agent ended.
    pub agent_events: Vec<Option<u64>>,
    /// Each agent host's CPU busy % in this interval (same order; null where it sent none).
    /// Also in `agent_hosts`; kept for readers of files written before that.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_cpu_busy_pct: Vec<Option<f64>>,
    /// Each agent host's figures in this interval (same order; null where it sent none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_hosts: Vec<Option<IntervalHost>>,
    #[serde(flatten)]
    pub figures: Figures,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopPart>,
    /// The servers' own figures in this interval, one per target read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<crate::servers::IntervalServer>,
}

/// A workload's own figures, at most one of them present: OLTP's SQL statistics,
/// fileio's file operations and throughput, memory's transfer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<Sql>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileOps>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryOps>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<Tpcc>,
}

/// TPC-C: TpmC and, per transaction type (new_order, payment, order_status, delivery,
/// stock_level), tpcc-mysql's counts and the merged response times.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Tpcc {
    /// New-Orders completed per minute of the span.
    pub tpmc: f64,
    /// tpcc-mysql's Constraint Check: the mix and the 90 % within the limits.
    pub constraints_ok: bool,
    pub transactions: BTreeMap<String, TxnJson>,
}

/// One transaction type's figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TxnJson {
    /// Completed transactions, their share of all completed ones, and how many of them
    /// finished within the type's response-time limit (tpcc-mysql's sc; the rest are lt).
    pub count: u64,
    pub mix_pct: f64,
    pub within_limit: u64,
    pub late: u64,
    /// Retries after deadlocks or lock-wait timeouts (rt), transactions that failed after
    /// their retries (fl), and New-Orders rolled back on purpose.
    pub retried: u64,
    pub failed: u64,
    pub rolled_back: u64,
    pub latency_ms: LatencyMs,
}

/// fileio: sysbench's "File operations" and "Throughput" figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FileOps {
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub reads_per_sec: f64,
    pub writes_per_sec: f64,
    pub fsyncs_per_sec: f64,
    pub read_mib_per_sec: f64,
    pub written_mib_per_sec: f64,
}

/// memory: operations (blocks) and MiB transferred.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryOps {
    pub operations: u64,
    pub operations_per_sec: f64,
    pub mib_transferred: f64,
    pub mib_per_sec: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    pub addr: String,
    pub host: String,
    /// What its host is, as its Hello said ("" and 0 from agents and files before them).
    #[serde(default)]
    pub cores: u32,
    #[serde(default)]
    pub cpu_model: String,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub mem_total_bytes: u64,
    pub threads: u32,
    pub time_s: f64,
    pub events: u64,
    pub events_per_sec: f64,
    pub latency_ms: LatencyMs,
    /// "completed", "stopped" or "lost".
    pub status: String,
    #[serde(flatten)]
    pub figures: Figures,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopPart>,
    /// The agent host's own load over the run (absent when it sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<HostLoad>,
}

/// A client host's figures over one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalHost {
    pub cpu_busy_pct: f64,
    pub agent_cpu_pct: f64,
    pub run_queue: u32,
    pub mem_used_bytes: u64,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// fileio, where the work directory's device has block statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<IntervalDisk>,
}

/// The disk under an agent's work directory over one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalDisk {
    /// Share of the interval with I/O in flight, 0..=100.
    pub util_pct: f64,
    /// Requests in flight on average.
    pub queue_depth: f64,
}

/// The disk under an agent's work directory over the run: averages and peaks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskLoad {
    pub util_pct_avg: f64,
    pub util_pct_peak: f64,
    pub queue_depth_avg: f64,
    pub queue_depth_peak: f64,
}

/// A client host's load over the run: averages and peaks over its intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub cpu_busy_pct_avg: f64,
    pub cpu_busy_pct_peak: f64,
    pub agent_cpu_pct_avg: f64,
    pub agent_cpu_pct_peak: f64,
    /// The agent process's CPU per event (per transaction for database tests), in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_cpu_us_per_event: Option<f64>,
    pub run_queue_peak: u32,
    pub cores: u32,
    pub mem_used_bytes_peak: u64,
    pub mem_total_bytes: u64,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// Interval numbers (1-based) in which the host was saturated.
    pub saturated_intervals: Vec<u32>,
    /// fileio, where the work directory's device has block statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskLoad>,
}

/// One point of the percentile spectrum.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpectrumPoint {
    pub percentile: f64,
    pub ms: f64,
}

/// One step of a sweep or scenario: its summary and the whole run document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub threads: u32,
    /// The offered rate (events/s); 0 in a closed loop (and in files written before).
    #[serde(default)]
    pub rate: f64,
    /// Which measurement of this thread count or rate (`--repeat`), from 1.
    #[serde(default = "one")]
    pub repeat: u32,
    pub summary: Summary,
    pub result: Report,
}

impl Step {
    /// Measurement `repeat` of `result`'s thread count and rate, with its summary.
    pub fn of(result: Report, repeat: u32) -> Step {
        let mut summary = Summary::from_run(&result);
        summary.repeat = repeat;
        Step {
            threads: result.config.threads,
            rate: result.config.rate(),
            repeat,
            summary,
            result,
        }
    }
}

/// A thread sweep, a rate sweep or a repeated run (`kind` "sweep").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepDoc {
    pub format_version: u32,
    pub kind: String,
    pub fleetbench_version: String,
    pub test: String,
    /// The thread counts stepped over (a rate sweep's one count).
    pub threads: Vec<u32>,
    pub warmup_time_s: u64,
    pub cooldown_s: u64,
    #[serde(default = "one")]
    pub repeat: u32,
    pub interrupted: bool,
    pub steps: Vec<Step>,
    /// A rate sweep's offered rates, in the order given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<Vec<f64>>,
}

/// `fleetbench scenario run FILE` (`kind` "scenarios"): one sweep per scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenariosDoc {
    pub format_version: u32,
    pub kind: String,
    pub fleetbench_version: String,
    /// The scenario file.
    pub file: String,
    pub warmup_time_s: u64,
    pub cooldown_s: u64,
    #[serde(default = "one")]
    pub repeat: u32,
    pub interrupted: bool,
    pub scenarios: Vec<ScenarioDoc>,
}

/// One scenario of a scenarios document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioDoc {
    pub name: String,
    /// Written as null when the file gives none.
    pub description: Option<String>,
    pub test: String,
    pub targets: Vec<String>,
    pub threads: Vec<u32>,
    pub steps: Vec<Step>,
    /// A rate sweep's offered rates, in the order given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<Vec<f64>>,
}

/// One measurement reduced to the figures tables and charts compare: from a run's JSON
/// document, so that files written earlier give the same rows as a run in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub threads: u32,
    /// The offered rate (`--rate`, events/s); 0 in a closed loop and in documents written
    /// before the open loop.
    #[serde(default)]
    pub rate: f64,
    /// Open loop only: whether the offered rate was reached (the achieved rate is `tps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_reached: Option<bool>,
    pub time_s: f64,
    pub events: u64,
    /// Transactions per second for OLTP, events per second otherwise.
    pub tps: f64,
    /// Queries per second (OLTP only).
    pub qps: Option<f64>,
    /// TPC-C only: New-Orders per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpmc: Option<f64>,
    /// Latency in ms: min, avg, max and percentiles ("p50", "p99.9", ...).
    pub latency_ms: BTreeMap<String, f64>,
    /// Ignored errors per second (OLTP only, else 0).
    pub errors_per_sec: f64,
    pub reconnects_per_sec: f64,
    /// The servers' own figures per transaction, where they were read
    /// ([`crate::servers::COMPARED`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server: BTreeMap<String, f64>,
    /// Which measurement of its step this is (`--repeat`), from 1.
    #[serde(default = "one")]
    pub repeat: u32,
    /// The run was interrupted: its figures cover the time until the interrupt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The run's figures per interval, for `compare`'s noise estimate from one run.
    #[serde(skip)]
    pub series: IntervalSeries,
}

/// A run's figures interval by interval (intervals shorter than half a tick, such as a
/// short last one, left out): the spread `compare` estimates from a single run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalSeries {
    pub tps: Vec<f64>,
    /// TPC-C only.
    pub tpmc: Vec<f64>,
    pub qps: Vec<f64>,
    pub errors_per_sec: Vec<f64>,
    /// Latency per key ("min", "avg", "max", "p95", ...), in ms.
    pub latency_ms: BTreeMap<String, Vec<f64>>,
    /// The servers' figures per transaction ([`crate::servers::COMPARED`]).
    pub server: BTreeMap<String, Vec<f64>>,
}

impl IntervalSeries {
    fn from_run(doc: &Report) -> IntervalSeries {
        let mut s = IntervalSeries::default();
        let tick = doc.config.interval_s;
        for iv in &doc.intervals {
            let d = iv.duration_s;
            if d <= 0.0 || d < tick / 2.0 {
                continue;
            }
            let sql = iv.figures.sql.as_ref();
            s.tps.push(sql.map_or(iv.events_per_sec, |q| q.tps));
            if let Some(c) = &iv.figures.tpcc {
                s.tpmc.push(c.tpmc);
            }
            if let Some(q) = sql {
                s.qps.push(q.qps);
                s.errors_per_sec.push(q.ignored_errors as f64 / d);
            }
            let parts: Vec<(u64, &crate::servers::PerTx)> = iv
                .servers
                .iter()
                .filter(|sv| sv.missing.is_none())
                .map(|sv| (sv.transactions, &sv.per_tx))
                .collect();
            for (k, v) in crate::servers::fleet_per_tx(&parts) {
                s.server.entry(k).or_default().push(v);
            }
            let hosts: Vec<(u64, Option<f64>, Option<f64>)> = iv
                .servers
                .iter()
                .flat_map(|sv| sv.hosts.iter().map(|h| (sv.transactions, h)))
                .map(|(tx, h)| (tx, h.cpu_us_per_tx, h.process_cpu_us_per_tx))
                .collect();
            for (k, v) in crate::servers::fleet_host_per_tx(&hosts) {
                s.server.entry(k).or_default().push(v);
            }
            // An interval without events has no latency to speak of.
            if iv.events > 0 {
                for (k, v) in iv.latency_ms.figures() {
                    s.latency_ms.entry(k).or_default().push(v);
                }
            }
        }
        s
    }
}

/// The servers' and their observed hosts' figures per transaction that `compare` weighs.
fn server_figures(targets: &[TargetJson]) -> BTreeMap<String, f64> {
    let servers: Vec<&crate::servers::ServerJson> =
        targets.iter().filter_map(|t| t.server.as_ref()).collect();
    let counters: Vec<(u64, &crate::servers::PerTx)> = servers
        .iter()
        .filter(|sv| sv.intervals > 0)
        .map(|sv| (sv.transactions, &sv.per_tx))
        .collect();
    let hosts: Vec<(u64, Option<f64>, Option<f64>)> = servers
        .iter()
        .flat_map(|sv| &sv.hosts)
        .map(|h| (h.transactions, h.cpu_us_per_tx, h.process_cpu_us_per_tx))
        .collect();
    let mut out = crate::servers::fleet_per_tx(&counters);
    out.extend(crate::servers::fleet_host_per_tx(&hosts));
    out
}

impl Summary {
    /// The summary of a run document.
    pub fn from_run(doc: &Report) -> Summary {
        let t = &doc.totals;
        let time_s = t.time_s;
        let per_s = |n: f64| if time_s > 0.0 { n / time_s } else { 0.0 };
        let sql = t.figures.sql.as_ref();
        Summary {
            threads: doc.config.threads,
            rate: doc.config.rate(),
            rate_reached: t.open_loop.as_ref().map(|o| o.rate_reached),
            time_s,
            events: t.events,
            tps: sql.map_or(t.events_per_sec, |s| s.tps),
            qps: sql.map(|s| s.qps),
            tpmc: t.figures.tpcc.as_ref().map(|c| c.tpmc),
            latency_ms: t.latency_ms.figures().collect(),
            errors_per_sec: per_s(sql.map_or(0.0, |s| s.ignored_errors as f64)),
            reconnects_per_sec: per_s(sql.map_or(0.0, |s| s.reconnects as f64)),
            server: server_figures(&t.targets),
            repeat: 1,
            interrupted: doc.interrupted,
            series: IntervalSeries::from_run(doc),
        }
    }

    /// The summary of a sweep's or scenario's step, recomputed from its run (the stored
    /// summary lacks the interval series).
    pub fn from_step(step: &Step) -> Summary {
        let mut s = Summary::from_run(&step.result);
        s.repeat = step.repeat;
        s
    }

    pub fn latency(&self, key: &str) -> f64 {
        self.latency_ms.get(key).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::{AgentResult, AgentStatus, Latency, RunResult};
    use crate::report::{compare, doc_text, html, json};

    fn plan(words: &[&str]) -> crate::plan::Plan {
        let mut all = vec!["fleetbench"];
        all.extend_from_slice(words);
        all.push("run");
        crate::plan::build(&crate::cli::parse(all).unwrap()).unwrap()
    }

    /// A run with two agents, a latency histogram, statement kinds, a target and its
    /// connection, and by hand every optional part `build` leaves out without such
    /// figures (an interval with the open loop and host load, open-loop totals).
    fn rich_run() -> Report {
        let mut latency = Latency::default();
        for v in [120u64, 250, 900, 4000] {
            latency.hist.record(v).unwrap();
            latency.sum_ns += v * 1000;
        }
        latency.min_ns = 120_000;
        latency.max_ns = 4_000_000;
        let agent = |i: u32, status| AgentResult {
            addr: format!("10.0.0.{i}:7600"),
            host: format!("c{i}"),
            facts: fleetbench_model::host::HostFacts {
                cores: 8,
                cpu_model: "AMD EPYC 7B13".into(),
                kernel: "6.1.0-18-amd64".into(),
                mem_total_bytes: 32 << 30,
            },
            threads: 2,
            elapsed: std::time::Duration::from_secs(2),
            events: 4,
            latency: latency.clone(),
            per_thread: vec![(2, 1), (2, 1)],
            status,
            db: Default::default(),
            io: Default::default(),
            open: None,
            txns: Default::default(),
        };
        let r = RunResult {
            agents: vec![
                agent(1, AgentStatus::Completed),
                agent(2, AgentStatus::Lost("gone".into())),
            ],
            kinds: vec![("point_select".into(), latency.clone())],
            targets: vec![(0, Default::default(), latency.clone())],
            connections: vec![(
                0,
                crate::merge::Connection {
                    client: "lean".into(),
                    server_version: "10.11.6-MariaDB".into(),
                    server_vars: [("innodb_buffer_pool_size".to_string(), "8G".to_string())].into(),
                    ..Default::default()
                },
            )],
            run_id: "r-1".into(),
            started: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000)),
            ended: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_010)),
            ..RunResult::default()
        };
        let p = plan(&[
            "oltp_read_write",
            "--mysql-host=db",
            "--tag=pool=8G",
            "--percentile=97.5",
        ]);
        let mut doc = json::build(&p, &r);
        let service = doc.totals.latency_ms.clone();
        doc.intervals.push(Interval {
            t_s: 1.0,
            duration_s: 1.0,
            threads: 4,
            events: 8,
            events_per_sec: 8.0,
            latency_ms: service.clone(),
            agent_events: vec![Some(4), None],
            agent_cpu_busy_pct: vec![Some(35.5), None],
            agent_hosts: vec![
                Some(IntervalHost {
                    cpu_busy_pct: 35.5,
                    agent_cpu_pct: 12.25,
                    run_queue: 3,
                    mem_used_bytes: 3 << 30,
                    net_rx_bytes_per_sec: 1500.0,
                    net_tx_bytes_per_sec: 250.0,
                    disk: Some(IntervalDisk {
                        util_pct: 64.5,
                        queue_depth: 2.125,
                    }),
                }),
                None,
            ],
            figures: Figures {
                sql: Some(Sql {
                    transactions: 8,
                    tps: 8.0,
                    ..Default::default()
                }),
                ..Default::default()
            },
            open_loop: Some(OpenLoopPart {
                arrivals: 9,
                queue_length: 1,
                concurrency: 4,
                service_ms: service.clone(),
            }),
            servers: vec![
                crate::servers::IntervalServer {
                    target: "db".into(),
                    transactions: 8,
                    per_tx: crate::servers::PerTx {
                        rows_read: Some(12.5),
                        server_reads: Some(0.125),
                        ..Default::default()
                    },
                    read_misses_per_1000: Some(0.75),
                    threads_running: Some(3.0),
                    missing: None,
                    replica_lag_s: Some(2.5),
                    hosts: vec![crate::servers::IntervalHost {
                        addr: "db1:7600".into(),
                        cpu_busy_pct: 45.5,
                        cpu_iowait_pct: 1.5,
                        cpu_us_per_tx: Some(820.25),
                        process_cpu_us_per_tx: Some(700.0),
                        disk_util_pct: None,
                        disk_reads_per_tx: None,
                        disk_write_kb_per_tx: None,
                    }],
                },
                crate::servers::IntervalServer {
                    target: "replica".into(),
                    missing: Some("the status read took over a second".into()),
                    ..Default::default()
                },
            ],
        });
        doc.totals.targets.push(TargetJson {
            name: "db".into(),
            server: Some(crate::servers::ServerJson {
                source: "SHOW GLOBAL STATUS".into(),
                transactions: 8,
                intervals: 1,
                missing_intervals: 1,
                per_tx: crate::servers::PerTx {
                    rows_read: Some(12.5),
                    log_bytes: Some(1536.0),
                    ..Default::default()
                },
                query_cache_hit_pct: Some(40.0),
                counters: [("Innodb_rows_read".to_string(), 100)].into(),
                notes: vec!["the status read took over a second".into()],
                replica_lag_s: Some(crate::replication::LagJson {
                    avg: 1.5,
                    max: 3.0,
                    intervals: 1,
                }),
                hosts: vec![crate::servers::HostJson {
                    addr: "db1:7600".into(),
                    intervals: 1,
                    cpu_us_per_tx: Some(820.25),
                    disk_reads_per_tx: Some(0.5),
                    cpu_user_pct: 30.0,
                    context_switches_per_tx: Some(12.0),
                    processes: 1,
                    error: Some("it ended its observation".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        });
        doc.totals.open_loop = Some(OpenLoopTotals {
            target_rate: 10.0,
            arrivals: 9,
            arrivals_per_sec: 4.5,
            events_per_sec: 4.0,
            queue_length_end: 1,
            rate_reached: false,
            service_ms: service,
            service_spectrum_ms: doc.totals.latency_spectrum_ms.clone(),
            latency_hdr: json::hdr_base64(&latency.hist),
            service_hdr: json::hdr_base64(&latency.hist),
        });
        doc.agents[0].host_load = Some(HostLoad {
            cpu_busy_pct_avg: 35.5,
            cores: 8,
            saturated_intervals: vec![2],
            disk: Some(DiskLoad {
                util_pct_avg: 64.5,
                util_pct_peak: 64.5,
                queue_depth_avg: 2.125,
                queue_depth_peak: 2.125,
            }),
            ..Default::default()
        });
        doc
    }

    /// Serialises, reads back and serialises again: the same text, the same document.
    fn round_trip(doc: &Document) -> Document {
        let text = serde_json::to_string_pretty(doc).unwrap();
        let back = Document::from_slice(text.as_bytes()).unwrap();
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
        back
    }

    #[test]
    fn run_documents_read_back_as_they_were_written() {
        let rich = rich_run();
        let v = serde_json::to_value(&rich).unwrap();
        for k in ["meta", "open_loop", "statements_latency_ms", "targets"] {
            assert!(v.get(k).is_some() || v["totals"].get(k).is_some(), "{k}");
        }
        assert_eq!(
            v["totals"]["targets"][0]["connections"][0]["server_vars"]["innodb_buffer_pool_size"],
            "8G"
        );
        let back = round_trip(&Document::Run(Box::new(rich.clone())));
        assert!(matches!(&back, Document::Run(r) if **r == rich));
        // Every workload's figures, from an empty run too.
        for words in [
            &["cpu"][..],
            &["fileio", "--file-test-mode=rndrw"],
            &["memory", "--threads=1"],
            &["threads"],
            &["mutex"],
            &["cpu", "--rate=100", "--warmup-time=2"],
        ] {
            let doc = json::build(&plan(words), &RunResult::default());
            round_trip(&Document::Run(Box::new(doc)));
        }
    }

    fn step(result: Report, repeat: u32) -> Step {
        Step::of(result, repeat)
    }

    #[test]
    fn sweep_and_scenarios_documents_read_back_as_they_were_written() {
        let mut raw =
            crate::cli::parse(["fleetbench", "cpu", "--rate=100,200", "--repeat=2", "run"])
                .unwrap();
        let extras = crate::sweep::take_extras(&mut raw).unwrap();
        let p = crate::plan::build(&raw).unwrap();
        let steps = vec![step(rich_run(), 1), step(rich_run(), 2)];
        let sweep = crate::sweep::sweep_doc(&p, &extras, &steps, true);
        assert_eq!(sweep.rates, Some(vec![100.0, 200.0]));
        let back = round_trip(&Document::Sweep(sweep.clone()));
        // The summaries' interval series are not written: the runs are what must match.
        let Document::Sweep(read) = &back else {
            panic!("a sweep")
        };
        assert!(
            read.steps
                .iter()
                .zip(&sweep.steps)
                .all(|(a, b)| a.result == b.result)
        );
        // The stored summary keeps its repeat; compare recomputes the rest from the run.
        let series = compare::series(&back, "s");
        assert_eq!(
            series[0].rows.iter().map(|r| r.repeat).collect::<Vec<_>>(),
            [1, 2]
        );

        let doc = Document::Scenarios(ScenariosDoc {
            format_version: super::FORMAT_VERSION,
            kind: "scenarios".into(),
            fleetbench_version: env!("CARGO_PKG_VERSION").into(),
            file: "s.toml".into(),
            warmup_time_s: 5,
            cooldown_s: 1,
            repeat: 2,
            interrupted: false,
            scenarios: vec![
                ScenarioDoc {
                    name: "direct".into(),
                    description: Some("to the server".into()),
                    test: "oltp_read_write".into(),
                    targets: vec!["db".into()],
                    threads: vec![4],
                    steps: steps.clone(),
                    rates: Some(vec![100.0, 200.0]),
                },
                ScenarioDoc {
                    name: "proxy".into(),
                    description: None,
                    test: "oltp_read_write".into(),
                    targets: vec!["proxy".into()],
                    threads: vec![4],
                    steps,
                    rates: None,
                },
            ],
        });
        let text = serde_json::to_value(&doc).unwrap();
        assert!(text["scenarios"][1]["description"].is_null());
        assert!(text["scenarios"][1].get("rates").is_none());
        round_trip(&doc);
    }

    /// A run document with only what the first format-2 writer wrote.
    const OLD_RUN: &str = r#"{
      "format_version": 2, "kind": "run", "fleetbench_version": "0.1.0",
      "test": "oltp_read_write", "command": "run",
      "config": {"threads": 8, "time_s": 10, "events": 0, "report_interval_s": 1,
                 "interval_s": 1.0, "percentiles": [95.0], "rand_seed": 0,
                 "agents": ["c1:7600"], "tables": 4, "rand_type": "uniform"},
      "interrupted": false,
      "totals": {"time_s": 10.0, "threads": 8, "events": 1000, "events_per_sec": 100.0,
        "latency_ms": {"count": 1000, "min": 1.0, "avg": 2.0, "max": 9.0, "sum": 2000.0,
                       "p50": 2.0, "p90": 3.0, "p95": 4.0, "p99": 6.0, "p99.9": 8.0},
        "latency_spectrum_ms": [{"percentile": 0.0, "ms": 1.0}, {"percentile": 50.0, "ms": 2.0},
                                {"percentile": 100.0, "ms": 9.0}],
        "fairness": {"events_avg": 1000.0, "events_stddev": 0.0,
                     "execution_time_avg_s": 10.0, "execution_time_stddev_s": 0.0},
        "agents_lost": 0,
        "sql": {"reads": 14000, "writes": 4000, "others": 2000, "queries": 20000,
                "transactions": 1000, "tps": 100.0, "qps": 2000.0, "ignored_errors": 10,
                "errors_by_code": {"1213": 10}, "reconnects": 0},
        "targets": [{"name": "db", "reads": 14000, "writes": 4000, "others": 2000,
                     "queries": 20000, "qps": 2000.0, "ignored_errors": 10, "reconnects": 0,
                     "statement_latency_ms": {"count": 20000, "min": 0.1, "avg": 0.2,
                                              "max": 1.0, "sum": 4000.0, "p95": 0.4}}]},
      "intervals": [{"t_s": 1.0, "duration_s": 1.0, "threads": 8, "events": 100,
        "events_per_sec": 100.0,
        "latency_ms": {"count": 100, "min": 1.0, "avg": 2.0, "max": 9.0, "sum": 200.0,
                       "p95": 4.0},
        "agent_events": [100],
        "sql": {"reads": 1400, "writes": 400, "others": 200, "queries": 2000,
                "transactions": 100, "tps": 100.0, "qps": 2000.0, "ignored_errors": 1,
                "errors_by_code": {}, "reconnects": 0}}],
      "agents": [{"addr": "c1:7600", "host": "c1", "threads": 8, "time_s": 10.0,
        "events": 1000, "events_per_sec": 100.0,
        "latency_ms": {"count": 1000, "min": 1.0, "avg": 2.0, "max": 9.0, "sum": 2000.0,
                       "p95": 4.0, "p99": 6.0},
        "status": "completed"}]
    }"#;

    /// A sweep document as the first format-2 writer wrote it: no repeat, rates, or
    /// step rate and repeat.
    fn old_sweep() -> String {
        let summary = r#"{"threads": 8, "time_s": 10.0, "events": 1000, "tps": 100.0,
            "qps": 2000.0, "latency_ms": {"min": 1.0, "avg": 2.0, "max": 9.0, "p95": 4.0},
            "errors_per_sec": 1.0, "reconnects_per_sec": 0.0}"#;
        format!(
            r#"{{"format_version": 2, "kind": "sweep", "fleetbench_version": "0.1.0",
            "test": "oltp_read_write", "threads": [8, 16], "warmup_time_s": 0,
            "cooldown_s": 0, "interrupted": false,
            "steps": [{{"threads": 8, "summary": {summary}, "result": {OLD_RUN}}},
                      {{"threads": 16, "summary": {summary}, "result": {}}}]}}"#,
            OLD_RUN.replace("\"threads\": 8,", "\"threads\": 16,")
        )
    }

    #[test]
    fn files_of_the_first_format_2_writer_still_read() {
        let run = Document::from_slice(OLD_RUN.as_bytes()).unwrap();
        let Document::Run(r) = &run else {
            panic!("a run")
        };
        assert!(r.meta.is_none() && r.totals.open_loop.is_none());
        assert_eq!((r.config.rate, r.config.warmup_time_s), (None, None));
        assert_eq!(r.config.rate(), 0.0);
        assert_eq!(r.config.workload["tables"], 4);
        assert!(r.totals.targets[0].connections.is_empty());
        let s = compare::series(&run, "old");
        assert_eq!((s[0].rows[0].tps, s[0].rows[0].qps), (100.0, Some(2000.0)));
        assert_eq!(s[0].rows[0].series.tps, [100.0]);
        assert_eq!(s[0].settings["tables"], "4");
        let page = html::render(&run);
        assert!(page.contains("<h1>fleetbench oltp_read_write run, 8 threads</h1>"));
        assert!(
            page.contains(
                "<td>c1:7600</td><td>c1</td><td class=\"text\">not reported</td><td>8</td><td>100.00</td><td>4.0</td><td>6.0</td>"
            ),
            "{page}"
        );
        let text = doc_text::render(&run);
        assert!(
            text.starts_with(
                "oltp_read_write: 8 threads over 1 agent(s), fleetbench 0.1.0\n\n[ 1s ]"
            ),
            "{text}"
        );

        let sweep = Document::from_slice(old_sweep().as_bytes()).unwrap();
        let s = compare::series(&sweep, "old");
        assert_eq!(
            s[0].rows
                .iter()
                .map(|r| (r.threads, r.repeat))
                .collect::<Vec<_>>(),
            [(8, 1), (16, 1)]
        );
        assert!(!s[0].settings.contains_key("threads"));
        let page = html::render(&sweep);
        assert!(page.contains("<h1>fleetbench thread sweep of oltp_read_write</h1>"));
        assert!(
            page.contains("<th>threads (per step)</th><td>8, 16</td>"),
            "{page}"
        );
        assert!(doc_text::render(&sweep).starts_with("Thread sweep of oltp_read_write:\n"));

        // A format 1 run had no kind and no spectrum.
        let v1 = OLD_RUN
            .replace(
                "\"format_version\": 2, \"kind\": \"run\",",
                "\"format_version\": 1,",
            )
            .replace("\"latency_spectrum_ms\": [", "\"spectrum_was_not_here\": [");
        let Document::Run(r) = Document::from_slice(v1.as_bytes()).unwrap() else {
            panic!("a run")
        };
        assert_eq!(r.kind, "run");
        assert!(r.totals.latency_spectrum_ms.is_empty());
    }

    #[test]
    fn the_schema_names_every_agent_and_interval_field_written() {
        let schema: Value =
            serde_json::from_str(include_str!("../../../docs/result-schema.json")).unwrap();
        let run = &schema["$defs"]["run"]["properties"];
        let doc = serde_json::to_value(rich_run()).unwrap();
        let known = |at: &Value, what: &str| -> Vec<String> {
            let props = at["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{what}"));
            props.keys().cloned().collect()
        };
        let check = |written: &Value, schema: &Value, what: &str| {
            let known = known(schema, what);
            for k in written.as_object().unwrap().keys() {
                assert!(known.contains(k), "{what}.{k} is not in the schema");
            }
        };
        let agent = &run["agents"]["items"];
        let interval = &run["intervals"]["items"];
        let host = &interval["properties"]["agent_hosts"]["items"]["oneOf"][1];
        let disk = &schema["$defs"]["interval_disk"];
        check(&doc["agents"][0], agent, "agent");
        check(
            &doc["agents"][0]["host_load"],
            &agent["properties"]["host_load"],
            "host_load",
        );
        check(
            &doc["agents"][0]["host_load"]["disk"],
            &agent["properties"]["host_load"]["properties"]["disk"],
            "host_load.disk",
        );
        // rich_run's own interval is the last (build's from an empty run have no hosts).
        let iv = doc["intervals"].as_array().unwrap().last().unwrap();
        check(iv, interval, "interval");
        check(&iv["agent_hosts"][0], host, "agent_hosts[]");
        check(&iv["agent_hosts"][0]["disk"], disk, "agent_hosts[].disk");
        assert_eq!(doc["agents"][0]["kernel"], "6.1.0-18-amd64");
        assert_eq!(doc["agents"][0]["mem_total_bytes"], 32u64 << 30);
    }

    #[test]
    fn host_figures_of_files_before_agent_hosts_still_read() {
        // As written before the agents' host facts, per-interval host figures and disks:
        // only each interval's CPU busy and a host_load without disk.
        let before = OLD_RUN
            .replace(
                "\"agent_events\": [100],",
                "\"agent_events\": [100], \"agent_cpu_busy_pct\": [35.5],",
            )
            .replace(
                "\"status\": \"completed\"}]",
                r#""status": "completed", "host_load": {"cpu_busy_pct_avg": 35.5,
                  "cpu_busy_pct_peak": 35.5, "agent_cpu_pct_avg": 5.0,
                  "agent_cpu_pct_peak": 5.0, "run_queue_peak": 1, "cores": 8,
                  "mem_used_bytes_peak": 1024, "mem_total_bytes": 4096,
                  "net_rx_bytes_per_sec": 1.0, "net_tx_bytes_per_sec": 2.0,
                  "saturated_intervals": []}}]"#,
            );
        let doc = Document::from_slice(before.as_bytes()).unwrap();
        let Document::Run(r) = &doc else {
            panic!("a run")
        };
        assert_eq!(r.intervals[0].agent_cpu_busy_pct, [Some(35.5)]);
        assert!(r.intervals[0].agent_hosts.is_empty());
        let a = &r.agents[0];
        assert_eq!(
            a.host_load.as_ref().map(|h| (h.cores, h.disk.is_none())),
            Some((8, true))
        );
        assert_eq!(
            (
                a.cores,
                a.cpu_model.as_str(),
                a.kernel.as_str(),
                a.mem_total_bytes
            ),
            (0, "", "", 0)
        );
        // Its CPU chart still draws; the figures it did not have get no chart.
        let ids: Vec<String> = html::run_charts(r, "").into_iter().map(|c| c.id).collect();
        assert!(ids.iter().any(|i| i == "hosts-cpu-time"), "{ids:?}");
        assert!(!ids.iter().any(|i| i == "hosts-mem-time"), "{ids:?}");
        // Written again, it has no fields it did not have.
        let again = serde_json::to_value(&doc).unwrap();
        assert!(again["intervals"][0].get("agent_hosts").is_none());
        assert!(again["agents"][0]["host_load"].get("disk").is_none());
    }

    #[test]
    fn what_is_not_a_document_of_this_version_is_refused() {
        let err = |text: &str| {
            Document::from_slice(text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert!(err("{").starts_with("invalid JSON"));
        assert_eq!(err("{}"), "no format_version");
        assert_eq!(
            err(r#"{"format_version": 3, "kind": "run"}"#),
            "format_version 3 is newer than this fleetbench reads (2)"
        );
        assert_eq!(
            err(r#"{"format_version": 2, "kind": "other"}"#),
            "unknown kind 'other'"
        );
        assert!(err(r#"{"format_version": 2, "kind": "run"}"#).contains("missing field"));
    }

    #[test]
    fn compare_reads_written_files() {
        let dir = std::env::temp_dir().join(format!("fb-doc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        let base = rich_run();
        let mut faster = base.clone();
        let sql = faster.totals.figures.sql.as_mut().unwrap();
        sql.tps *= 2.0;
        json::write(&a, &base).unwrap();
        json::write_value(&b, &Document::Run(Box::new(faster))).unwrap();
        let out = compare::compare_files(&[a.as_path(), b.as_path()]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(out.contains("Compared with a.json"), "{out}");
        let tps = out.lines().find(|l| l.starts_with("tps  ")).unwrap();
        assert!(tps.contains("+100.0%"), "{out}");
    }
}
