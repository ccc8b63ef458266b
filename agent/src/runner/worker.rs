//! What the runner drives: a workload's worker threads ([`ThreadWorkload`]) and the body of
//! each one's event loop ([`WorkerLoop`]), with how an event ended ([`Step`]). Workloads
//! implement these; the runner names none of them.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use fleetbench_model::counters::{DbCounters, IoCounters};

/// A workload run on dedicated OS threads (CPU-bound work never runs on the async runtime).
pub trait ThreadWorkload: Send + Sync + 'static {
    /// Creates the per-thread state of worker `thread` (0-based within this agent).
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop + Send>;

    /// Runs once after every worker has stopped (fileio's fsync at the end of the test).
    fn finish(&self) -> Result<(), String> {
        Ok(())
    }

    /// The sockets of the workers' database connections, which an abort shuts so that a
    /// statement waiting on a lock returns at once (TPC-C); None without connections.
    fn sockets(&self) -> Option<std::sync::Arc<crate::sql::Sockets>> {
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
    /// This worker cannot go on (a pgbench client's error that is not retried): it
    /// leaves its loop, counted as aborted with this message, and the others go on.
    Quit(String),
    /// The event failed and is to be tried again (OLTP: an ignored error, a lost
    /// connection): the database work it did so far is recorded now, in the interval in
    /// which it happened, with no event or latency; the loop then calls it again with the
    /// same start.
    Again,
}

/// One worker thread's event loop body: what the runner's one event loop
/// (crate::runner) calls per event. The provided methods are the hooks a database
/// workload (OLTP) needs; the others leave them be. Not `Send` itself: an OLTP worker is
/// opened on its thread and never leaves it; the boxed workers of [`ThreadWorkload`] are.
pub trait WorkerLoop {
    /// Runs one event, adding the file operations it completed to `io`.
    fn event(&mut self, stop: &AtomicBool, io: &mut IoCounters) -> Step;

    /// Runs one event that the loop starts at `t0` (a workload that times its own
    /// statements starts its clock there).
    fn event_at(&mut self, stop: &AtomicBool, io: &mut IoCounters, _t0: Instant) -> Step {
        self.event(stop, io)
    }

    /// When the event just run ended, if the workload read the clock itself then (OLTP's
    /// last statement): the loop takes it as the event's end and, in a closed loop, as
    /// the next event's start, so no clock read is added per event. None: the loop
    /// reads the clock around each event itself.
    fn ended_at(&self) -> Option<Instant> {
        None
    }

    /// The database work of the event just run (or cut short), which the loop records
    /// with it; None for a workload without a database.
    fn db(&self) -> Option<EventDb<'_>> {
        None
    }

    /// Starts the next event's database counters from zero (after [`WorkerLoop::db`]
    /// was recorded).
    fn reset_db(&mut self) {}

    /// The event this worker was to run next is skipped (it was late already when the
    /// worker could start it): the workload draws what it would have run, as pgbench
    /// picks the script, and says its transaction type, if it has types.
    fn skip(&mut self) -> Option<usize> {
        None
    }

    /// Events the workload counted since the last call beyond the ones it ran: a script's
    /// `ffi.C.sb_counter_inc(tid, SB_CNT_TRX)`. sysbench adds those to its events and
    /// transactions (their count and rate), not to the latency or the threads' fairness;
    /// so does the loop.
    fn extra_events(&mut self) -> u64 {
        0
    }

    /// The warm-up starts (true) or ends: what the workload counts itself is muted.
    fn set_warmup(&mut self, _on: bool) {}

    /// Think time after an event, outside its latency; false when there is none.
    fn think(&mut self, _stop: &AtomicBool) -> bool {
        false
    }

    /// Called once when the worker leaves its loop: waits for operations still in flight
    /// (async I/O) and counts them in `io`.
    fn finish(&mut self, _io: &mut IoCounters) -> Result<(), String> {
        Ok(())
    }
}

/// A boxed worker ([`ThreadWorkload::worker`]) runs as the worker in it.
impl<T: WorkerLoop + ?Sized> WorkerLoop for Box<T> {
    fn event(&mut self, stop: &AtomicBool, io: &mut IoCounters) -> Step {
        (**self).event(stop, io)
    }
    fn event_at(&mut self, stop: &AtomicBool, io: &mut IoCounters, t0: Instant) -> Step {
        (**self).event_at(stop, io, t0)
    }
    fn ended_at(&self) -> Option<Instant> {
        (**self).ended_at()
    }
    fn db(&self) -> Option<EventDb<'_>> {
        (**self).db()
    }
    fn reset_db(&mut self) {
        (**self).reset_db()
    }
    fn skip(&mut self) -> Option<usize> {
        (**self).skip()
    }
    fn extra_events(&mut self) -> u64 {
        (**self).extra_events()
    }

    fn set_warmup(&mut self, on: bool) {
        (**self).set_warmup(on)
    }
    fn think(&mut self, stop: &AtomicBool) -> bool {
        (**self).think(stop)
    }
    fn finish(&mut self, io: &mut IoCounters) -> Result<(), String> {
        (**self).finish(io)
    }
}

/// An event's database work: its statements, and the same per target when the worker's
/// load goes to several (the run's own counters are the one target's otherwise).
#[derive(Debug, Clone, Copy)]
pub struct EventDb<'a> {
    pub all: &'a DbCounters,
    pub targets: Option<&'a [DbCounters]>,
}
