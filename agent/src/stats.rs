//! Per-worker recorder: a latency histogram plus exact counters, swapped out by the ticker
//! once per interval. Each worker owns its slot; the only other party to its lock is the
//! ticker, once per tick, so the lock is practically uncontended.

use std::collections::BTreeMap;
use std::sync::Mutex;

use fleetbench_proto::histogram::new_histogram;
use hdrhistogram::Histogram;

/// Counters of database work (OLTP only; zero for other workloads).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbCounters {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// Ignored errors by server error code.
    pub errors_by_code: BTreeMap<u32, u64>,
}

impl DbCounters {
    /// Adds `o` in. Saturating: the coordinator merges what agents send, and a broken
    /// agent's nonsense must not crash it.
    pub fn merge(&mut self, o: &DbCounters) {
        self.reads = self.reads.saturating_add(o.reads);
        self.writes = self.writes.saturating_add(o.writes);
        self.others = self.others.saturating_add(o.others);
        self.ignored_errors = self.ignored_errors.saturating_add(o.ignored_errors);
        self.reconnects = self.reconnects.saturating_add(o.reconnects);
        for (code, n) in &o.errors_by_code {
            let e = self.errors_by_code.entry(*code).or_default();
            *e = e.saturating_add(*n);
        }
    }

    /// Counts one ignored error with its server error code.
    pub fn count_ignored(&mut self, code: u16) {
        self.ignored_errors += 1;
        *self.errors_by_code.entry(u32::from(code)).or_default() += 1;
    }

    pub fn is_zero(&self) -> bool {
        *self == DbCounters::default()
    }

    /// Empties the counters, keeping nothing allocated worth keeping.
    pub fn reset(&mut self) {
        *self = DbCounters::default();
    }
}

/// File operations (fileio only; zero for other workloads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl IoCounters {
    /// Adds `o` in, saturating (see [`DbCounters::merge`]).
    pub fn merge(&mut self, o: &IoCounters) {
        self.reads = self.reads.saturating_add(o.reads);
        self.writes = self.writes.saturating_add(o.writes);
        self.fsyncs = self.fsyncs.saturating_add(o.fsyncs);
        self.bytes_read = self.bytes_read.saturating_add(o.bytes_read);
        self.bytes_written = self.bytes_written.saturating_add(o.bytes_written);
    }

    pub fn is_zero(&self) -> bool {
        *self == IoCounters::default()
    }
}

/// Latencies and event counts of a set of events.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Latencies in microseconds (percentiles come from here).
    pub hist: Histogram<u64>,
    pub events: u64,
    /// Exact extremes and sum in nanoseconds; the histogram rounds, these do not.
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    pub db: DbCounters,
    pub io: IoCounters,
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            hist: new_histogram(),
            events: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            db: DbCounters::default(),
            io: IoCounters::default(),
        }
    }
}

impl Sample {
    /// Records one finished event that took `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        // Auto-resizing histogram: recording cannot fail for any u64 value.
        let _ = self.hist.record(ns / 1_000);
        self.events += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns;
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Sample) {
        let _ = self.hist.add(&other.hist);
        self.events += other.events;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.db.merge(&other.db);
        self.io.merge(&other.io);
    }

    /// Empties the sample, keeping the histogram's allocation.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.events = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.db.reset();
        self.io = IoCounters::default();
    }
}

/// What one worker has recorded: the current interval's sample and its lifetime totals.
#[derive(Debug, Default)]
pub struct WorkerStats {
    /// Events since the last tick.
    pub interval: Sample,
    /// Events finished over the whole run (for threads fairness).
    pub events: u64,
    /// Nanoseconds spent inside events over the whole run.
    pub busy_ns: u64,
}

/// A worker's slot, shared between the worker and the ticker.
#[derive(Debug, Default)]
pub struct WorkerSlot(Mutex<WorkerStats>);

impl WorkerSlot {
    /// Records one finished event.
    pub fn record(&self, ns: u64) {
        let mut s = self.lock();
        s.interval.record(ns);
        s.events += 1;
        s.busy_ns += ns;
    }

    /// Records one finished event with the database work it did.
    pub fn record_db(&self, ns: u64, db: &DbCounters) {
        let mut s = self.lock();
        s.interval.record(ns);
        s.interval.db.merge(db);
        s.events += 1;
        s.busy_ns += ns;
    }

    /// Records one finished event with the file operations it did.
    pub fn record_io(&self, ns: u64, io: &IoCounters) {
        let mut s = self.lock();
        s.interval.record(ns);
        s.interval.io.merge(io);
        s.events += 1;
        s.busy_ns += ns;
    }

    /// Adds file operations that belong to no finished event (completions reaped at the
    /// end of the run).
    pub fn add_io(&self, io: &IoCounters) {
        self.lock().interval.io.merge(io);
    }

    /// Adds database work that belongs to no finished event (an event cut short).
    pub fn add_db(&self, db: &DbCounters) {
        self.lock().interval.db.merge(db);
    }

    /// Moves this worker's interval sample into `into` and starts a new interval.
    pub fn drain_into(&self, into: &mut Sample) {
        let mut s = self.lock();
        into.merge(&s.interval);
        s.interval.reset();
    }

    /// Lifetime totals: (events, busy nanoseconds).
    pub fn totals(&self) -> (u64, u64) {
        let s = self.lock();
        (s.events, s.busy_ns)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WorkerStats> {
        // A worker that panicked mid-record leaves consistent-enough counters behind.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_moves_interval_and_keeps_totals() {
        let slot = WorkerSlot::default();
        slot.record(2_000);
        slot.record(5_000);
        let mut s = Sample::default();
        slot.drain_into(&mut s);
        assert_eq!(s.events, 2);
        assert_eq!((s.min_ns, s.max_ns, s.sum_ns), (2_000, 5_000, 7_000));
        assert_eq!(s.hist.len(), 2);
        let mut again = Sample::default();
        slot.drain_into(&mut again);
        assert_eq!(again.events, 0);
        assert_eq!(slot.totals(), (2, 7_000));
    }
}
