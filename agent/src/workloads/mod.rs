//! Workloads an agent can run. Each turns a wire spec into something the runner drives.

pub mod cpu;
pub mod oltp;

use std::sync::atomic::AtomicBool;

/// Names of the workloads this agent offers (sent in Hello).
pub const AVAILABLE: &[&str] = &["cpu", "oltp"];

/// A workload run on dedicated OS threads (CPU-bound work never runs on the async runtime).
pub trait ThreadWorkload: Send + Sync + 'static {
    /// Creates the per-thread state of worker `thread` (0-based within this agent).
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop>;
}

/// One worker thread's event loop body.
pub trait WorkerLoop: Send {
    /// Runs one event. Returns false if `stop` cut it short (the event is then not counted).
    fn event(&mut self, stop: &AtomicBool) -> bool;
}
