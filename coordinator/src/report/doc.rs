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

use crate::sweep::Summary;

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
        if found > u64::from(super::json::FORMAT_VERSION) {
            return Err(LoadError::Newer {
                found,
                reads: super::json::FORMAT_VERSION,
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
    /// `--rate`: events per second over all agents in an open loop; 0 = closed loop.
    #[serde(default)]
    pub rate: f64,
    /// `--warmup-time`: seconds of load before the measurement, on the same threads and
    /// connections, in none of the figures.
    #[serde(default)]
    pub warmup_time_s: f64,
    /// The workload's own options (cpu_max_prime, tables, file_num, ...).
    #[serde(flatten)]
    pub workload: BTreeMap<String, Value>,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_cpu_busy_pct: Vec<Option<f64>>,
    #[serde(flatten)]
    pub figures: Figures,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopPart>,
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

/// A client host's load over the run: averages and peaks over its intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub cpu_busy_pct_avg: f64,
    pub cpu_busy_pct_peak: f64,
    pub agent_cpu_pct_avg: f64,
    pub agent_cpu_pct_peak: f64,
    pub run_queue_peak: u32,
    pub cores: u32,
    pub mem_used_bytes_peak: u64,
    pub mem_total_bytes: u64,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// Interval numbers (1-based) in which the host was saturated.
    pub saturated_intervals: Vec<u32>,
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
