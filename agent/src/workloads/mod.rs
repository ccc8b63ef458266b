//! Workloads an agent can run. Each turns a wire spec into something the runner drives.

pub mod cpu;
pub mod fileio;
pub mod memory;
pub mod mutex;
pub mod oltp;
pub mod pgbench;
pub mod script;
pub mod threads;
pub mod tpcc;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

pub use crate::runner::worker::{EventDb, Step, ThreadWorkload, WorkerLoop};
use crate::runner::{OpenProgress, PreparedRun, RunConfig};
use crate::sql::open_error::OpenError;
use crate::sql::opening::Reason;

/// Names of the workloads this agent offers (sent in Hello).
pub const AVAILABLE: &[&str] = &[
    "cpu", "oltp", "fileio", "memory", "threads", "mutex", "tpcc", "script", "pgbench",
];

/// A future a workload hands back from a trait method.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
/// A run's opening ([`Workload::open`]).
pub type OpenFuture = BoxFuture<Result<Opened, OpenError>>;
/// A table job's check or work ([`TableJob`]), with the reason it failed.
pub type JobFuture = BoxFuture<Result<(), String>>;

/// Why a Start (or a Prepare) cannot be run here; the service tells the coordinator so,
/// each with its own status code.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The request itself is not valid.
    #[error("{0}")]
    Invalid(String),
    /// This host cannot give what it asks for (threads, open files, memory, disk).
    #[error("{0}")]
    Exhausted(String),
    /// It cannot run here as things stand (a file that cannot be opened).
    #[error("{0}")]
    Failed(String),
}

/// What a Start message says about this agent's part of the run, beside its limits.
#[derive(Debug, Clone, Copy)]
pub struct Share {
    /// This agent's first thread among all agents' (ids, `sysbench.tid`).
    pub first_thread: u64,
    /// Threads of the whole run, over every agent.
    pub total_threads: u64,
    /// This agent's threads.
    pub threads: u32,
    pub seed: u64,
    /// The coordinator's ready timeout: failed connects are retried within it, and an
    /// opening that never ends is given up after it.
    pub ready_timeout: Duration,
    /// The agent's operator's bound on a script run's memory (`--script-memory`); None:
    /// the default share of the host's available memory.
    pub script_memory: Option<u64>,
}

/// A run as its workload planned it from a Start message, ready to open. The service
/// dispatches once, at the edge, into the workload's own type; from there on only this
/// trait is called.
pub trait Workload: Send {
    /// Connections the opening makes, for its progress messages (0: it makes none).
    fn connections(&self) -> u64 {
        0
    }

    /// Where the output of the run's code (a script's `print`) gathers until it is sent.
    fn output(&self) -> Option<Arc<dyn Output>> {
        None
    }

    /// Opens the run: its workers exist (connections, files, states) and wait for Go.
    /// `progress` counts the connections open; its cancel calls the opening off.
    fn open(self: Box<Self>, config: RunConfig, progress: Arc<OpenProgress>) -> OpenFuture;
}

/// Text a run's own code printed, taken as it is sent.
pub trait Output: Send + Sync {
    /// What was printed since the last call.
    fn take(&self) -> String;
}

/// A run opened by its workload: the runner's part, and what the workload adds to the
/// run's messages.
pub struct Opened {
    pub run: PreparedRun,
    /// Connects tried again while the run opened, by target and reason (for Ready).
    pub retries: Vec<(usize, Reason, u64)>,
    /// The directory whose disk each interval's host load describes (fileio's files).
    pub disk_dir: Option<PathBuf>,
}

impl Opened {
    /// A run with nothing more to say.
    pub fn run(run: PreparedRun) -> Opened {
        Opened {
            run,
            retries: Vec::new(),
            disk_dir: None,
        }
    }
}

/// A workload whose threads need no opening of their own (cpu, memory, threads, mutex,
/// fileio): they start at once, each with its worker, and wait at the gate.
pub struct Threads {
    pub workload: Arc<dyn ThreadWorkload>,
    /// fileio: the directory its files are in.
    pub disk_dir: Option<PathBuf>,
}

impl Threads {
    /// `workload`'s run, boxed for the service.
    pub fn boxed(workload: impl ThreadWorkload) -> Box<dyn Workload> {
        Box::new(Threads {
            workload: Arc::new(workload),
            disk_dir: None,
        })
    }
}

impl Workload for Threads {
    fn open(self: Box<Self>, config: RunConfig, _progress: Arc<OpenProgress>) -> OpenFuture {
        Box::pin(async move {
            let run = PreparedRun::new(self.workload, config)
                .map_err(|e| OpenError::Setting(format!("cannot start worker threads: {e}")))?;
            Ok(Opened {
                disk_dir: self.disk_dir,
                ..Opened::run(run)
            })
        })
    }
}

/// What a Prepare or Cleanup call does to the tables (or files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOp {
    Prepare,
    Cleanup,
    /// Reads the OLTP tables into the server's buffer pool (Prepare with `prewarm`).
    Prewarm,
}

/// A prepare, prewarm or cleanup of a workload's tables (or files), as its workload runs
/// it; the service streams its progress and says how it ended.
pub trait TableJob: Send + Sync {
    /// The job's stop switch and its count of steps (rows, bytes, tables) done.
    fn progress(&self) -> (&AtomicBool, &AtomicU64);
    /// Stops the job (a job with connections also shuts them, so that statements in
    /// flight end).
    fn halt(&self) {
        self.progress().0.store(true, Ordering::Relaxed);
    }
    /// Steps done so far.
    fn done(&self) -> u64 {
        self.progress().1.load(Ordering::Relaxed)
    }
    /// Steps of the whole job.
    fn total(&self, op: TableOp) -> u64;
    /// Lines noted since the last call (OLTP's "Creating table ..."), sent as they come.
    fn take_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The line that says what the job did.
    fn summary(&self) -> String;
    /// A consistency check's violations in all, and the first ones named (TPC-C).
    fn violations(&self) -> (u64, Vec<String>) {
        (0, Vec::new())
    }
    /// Refuses what this host cannot give `threads` of the job before anything starts.
    fn check_host(&self, _op: TableOp, threads: u32) -> Result<(), PlanError> {
        fleetbench_model::limits::check_threads(u64::from(threads)).map_err(PlanError::Exhausted)
    }
    /// The dry run: what the real job needs is there, and nothing is in the way.
    fn check(self: Arc<Self>, op: TableOp) -> JobFuture;
    /// The job itself, with `threads` loaders (rows seeded with `seed`).
    fn work(self: Arc<Self>, op: TableOp, threads: u32, seed: u64) -> JobFuture;
}

/// Runs a blocking job step off the runtime; `what` names it if its thread fails.
pub async fn blocking<E: std::fmt::Display + Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<(), E> + Send + 'static,
) -> Result<(), String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("{what} failed: {e}"))?
        .map_err(|e| e.to_string())
}
