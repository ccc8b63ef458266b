//! Workloads an agent can run. Each turns a wire spec into something the runner drives.

pub mod cpu;
pub mod fileio;
pub mod memory;
pub mod mutex;
pub mod oltp;
pub mod threads;
pub mod tpcc;

use std::sync::atomic::AtomicBool;

use crate::stats::IoCounters;

/// Names of the workloads this agent offers (sent in Hello).
pub const AVAILABLE: &[&str] = &[
    "cpu", "oltp", "fileio", "memory", "threads", "mutex", "tpcc",
];

/// A workload run on dedicated OS threads (CPU-bound work never runs on the async runtime).
pub trait ThreadWorkload: Send + Sync + 'static {
    /// Creates the per-thread state of worker `thread` (0-based within this agent).
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop>;

    /// Runs once after every worker has stopped (fileio's fsync at the end of the test).
    fn finish(&self) -> Result<(), String> {
        Ok(())
    }

    /// The sockets of the workers' database connections, which an abort shuts so that a
    /// statement waiting on a lock returns at once (TPC-C); None without connections.
    fn sockets(&self) -> Option<std::sync::Arc<oltp::wire::Sockets>> {
        None
    }
}

/// How one event ended.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// Finished; it is counted.
    Done,
    /// A transaction of a typed workload (TPC-C) ended: counted under its type, and as an
    /// event unless it failed.
    Txn(crate::stats::TxnEnd),
    /// Cut short by `stop`, or the worker has no more events to run (mutex runs one per
    /// thread); not counted, and the worker leaves its loop.
    Stopped,
    /// Cannot go on (an I/O error): the whole run stops with this reason.
    Fatal(String),
}

/// One worker thread's event loop body.
pub trait WorkerLoop: Send {
    /// Runs one event, adding the file operations it completed to `io`.
    fn event(&mut self, stop: &AtomicBool, io: &mut IoCounters) -> Step;

    /// Called once when the worker leaves its loop: waits for operations still in flight
    /// (async I/O) and counts them in `io`.
    fn finish(&mut self, _io: &mut IoCounters) -> Result<(), String> {
        Ok(())
    }
}
