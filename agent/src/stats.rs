//! Per-worker recorder: exact counters plus a small batch of latencies, drained by the
//! ticker once per interval. Each worker owns its slot; the only other party to its lock is
//! the ticker, once per tick, so the lock is practically uncontended. Full batches are
//! folded into histograms shared by the run, so a worker holds no histogram of its own:
//! an HDR histogram at three digits is 16-64 KB, which at thousands of connections per
//! agent was most of the memory per connection.

use std::sync::{Arc, Mutex};

use fleetbench_model::add_counters;
use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::oltp::Kind;

use crate::sql::ConnInfo;
use fleetbench_proto::histogram::new_histogram;
use hdrhistogram::Histogram;

/// One transaction type's counters (TPC-C): completed transactions with their exact
/// extremes and sum, retries, failures and intended rollbacks. What a worker keeps per
/// interval; the latencies go to the run's shared histograms.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnCounts {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    pub retried: u64,
    pub failed: u64,
    pub rolled_back: u64,
    /// Transactions tried more than once, successful or failed in the end.
    pub retried_txns: u64,
    /// Transactions skipped for being late already when a thread could take them.
    pub skipped: u64,
}

impl Default for TxnCounts {
    fn default() -> Self {
        TxnCounts {
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            retried: 0,
            failed: 0,
            rolled_back: 0,
            retried_txns: 0,
            skipped: 0,
        }
    }
}

impl TxnCounts {
    fn add(&mut self, o: &TxnCounts) {
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        add_counters!(
            self,
            o,
            count,
            sum_ns,
            retried,
            failed,
            rolled_back,
            retried_txns,
            skipped
        );
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0 && self.retried == 0 && self.failed == 0 && self.skipped == 0
    }
}

/// One transaction type's figures over an interval or a run: its counters and the
/// latencies (microseconds) of its completed transactions.
#[derive(Debug, Clone)]
pub struct TxnSample {
    pub hist: Histogram<u64>,
    pub counts: TxnCounts,
}

impl Default for TxnSample {
    fn default() -> Self {
        TxnSample {
            hist: new_histogram(),
            counts: TxnCounts::default(),
        }
    }
}

impl TxnSample {
    pub fn merge(&mut self, o: &TxnSample) {
        let _ = self.hist.add(&o.hist);
        self.counts.add(&o.counts);
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

/// How one transaction of a typed workload (TPC-C) ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxnEnd {
    /// Index of its type (the workload's list of names).
    pub kind: usize,
    /// Attempts that hit a deadlock or lock-wait timeout before this one.
    pub retried: u32,
    /// Gave up after its retries (not counted as an event).
    pub failed: bool,
    /// Rolled back as the workload asks (TPC-C's 1 % of New-Orders).
    pub rolled_back: bool,
    /// Statements and errors.
    pub db: DbCounters,
}

/// Merges `from` into `into` by type index, growing `into` as needed.
pub fn merge_txns(into: &mut Vec<TxnSample>, from: &[TxnSample]) {
    merge_indexed(into, from, TxnSample::merge);
}

/// Merges `from` into `into` element by element, growing `into` to `from`'s length.
fn merge_indexed<T: Default>(into: &mut Vec<T>, from: &[T], merge: impl Fn(&mut T, &T)) {
    if into.len() < from.len() {
        into.resize_with(from.len(), T::default);
    }
    for (a, b) in into.iter_mut().zip(from) {
        merge(a, b);
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
    /// Open loop only: the events' service time (from the moment a thread took each one),
    /// while `hist` and the extremes above count from its arrival. Empty in a closed loop,
    /// where the two are the same.
    pub service: Service,
    /// Per transaction type (TPC-C); empty for other workloads.
    pub txns: Vec<TxnSample>,
    /// Per database target (by target index) when a worker's load goes to several;
    /// empty otherwise, where `db` is the one target's.
    pub targets: Vec<DbCounters>,
    /// Events skipped for being late already (a latency limit in an open loop), and
    /// events above the latency limit.
    pub skipped: u64,
    pub late: u64,
    /// Workers that left the run on an error of their own (a pgbench client aborted),
    /// and their messages (at most [`MAX_CLIENT_ERRORS`] kept per interval).
    pub clients_aborted: u32,
    pub client_errors: Vec<String>,
    /// pgbench's `-l`: the transactions logged this interval.
    pub log: Vec<fleetbench_proto::v1::TxnLogEntry>,
}

/// The SQLSTATE of a deadlock, as the counters code it.
fn deadlock() -> Option<u32> {
    fleetbench_model::sqlstate::encode("40P01")
}

/// Messages of aborted workers an interval keeps; the count stays exact.
pub const MAX_CLIENT_ERRORS: usize = 100;

/// Adds `from`'s messages to `into`, up to [`MAX_CLIENT_ERRORS`].
fn add_errors(into: &mut Vec<String>, from: &[String]) {
    let room = MAX_CLIENT_ERRORS.saturating_sub(into.len());
    into.extend(from.iter().take(room).cloned());
}

/// Adds per-target counters `from` into `into`, growing it to as many targets.
fn merge_targets(into: &mut Vec<DbCounters>, from: &[DbCounters]) {
    merge_indexed(into, from, DbCounters::merge);
}

/// Service times of a set of events: histogram in microseconds, exact extremes and sum.
#[derive(Debug, Clone)]
pub struct Service {
    pub hist: Histogram<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    /// The longest schedule lag (arrival to start) of the events.
    pub lag_max_ns: u64,
}

impl Default for Service {
    fn default() -> Self {
        Service {
            hist: new_histogram(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            lag_max_ns: 0,
        }
    }
}

impl Service {
    fn merge(&mut self, o: &Service) {
        let _ = self.hist.add(&o.hist);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(o.sum_ns);
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
    }

    fn add_extremes(&mut self, c: &Counts) {
        self.min_ns = self.min_ns.min(c.svc_min_ns);
        self.max_ns = self.max_ns.max(c.svc_max_ns);
        self.sum_ns = self.sum_ns.saturating_add(c.svc_sum_ns);
        self.lag_max_ns = self.lag_max_ns.max(c.lag_max_ns);
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }
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
            service: Service::default(),
            txns: Vec::new(),
            targets: Vec::new(),
            skipped: 0,
            late: 0,
            clients_aborted: 0,
            client_errors: Vec::new(),
            log: Vec::new(),
        }
    }
}

impl Sample {
    /// Nothing recorded: no event, no counted statement or I/O.
    pub fn is_empty(&self) -> bool {
        self.events == 0
            && self.db.is_zero()
            && self.io.is_zero()
            && self.txns.iter().all(TxnSample::is_empty)
            && self.skipped == 0
            && self.clients_aborted == 0
    }

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
        self.service.merge(&other.service);
        merge_txns(&mut self.txns, &other.txns);
        merge_targets(&mut self.targets, &other.targets);
        self.skipped += other.skipped;
        self.late += other.late;
        self.clients_aborted += other.clients_aborted;
        add_errors(&mut self.client_errors, &other.client_errors);
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
        self.service = Service::default();
        self.txns.clear();
        self.targets.clear();
        self.skipped = 0;
        self.late = 0;
        self.clients_aborted = 0;
        self.client_errors.clear();
    }
}

/// Latencies a worker buffers before it folds them into a histogram shared by the run.
/// One lock per `BATCH` events keeps contention out of the hot path, and the buffer keeps
/// a worker's recording memory small and fixed: it does not grow with the number of
/// histograms fed (interval, statement kinds, targets) nor with the number of intervals.
pub const BATCH: usize = 64;

/// Interval histograms shared by every worker of a run. There are two, chosen by the
/// parity of the interval number: while the ticker empties interval n's, workers it has
/// already drained fold their batches into n+1's (see [`WorkerSlot::drain_into`]).
/// Each half holds the latency histogram and, in an open loop, the service-time one.
#[derive(Debug)]
pub struct IntervalHists([Mutex<Halves>; 2]);

#[derive(Debug)]
struct Halves {
    latency: Histogram<u64>,
    service: Histogram<u64>,
    /// Per transaction type (TPC-C), recorded as each transaction ends: such workloads run
    /// a few thousand transactions a second, far from where this lock would matter.
    txns: Vec<Histogram<u64>>,
}

impl Default for IntervalHists {
    fn default() -> Self {
        let half = || {
            Mutex::new(Halves {
                latency: new_histogram(),
                service: new_histogram(),
                txns: Vec::new(),
            })
        };
        IntervalHists([half(), half()])
    }
}

impl IntervalHists {
    fn half(&self, seq: u32) -> std::sync::MutexGuard<'_, Halves> {
        self.0[(seq & 1) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Moves interval `seq`'s shared histograms into `into`. Call it after every slot of
    /// the run was drained for `seq`: from then on no worker folds into them.
    pub fn take_into(&self, seq: u32, into: &mut Sample) {
        let mut h = self.half(seq);
        let _ = into.hist.add(&h.latency);
        h.latency.reset();
        if !h.service.is_empty() {
            let _ = into.service.hist.add(&h.service);
            h.service.reset();
        }
        if into.txns.len() < h.txns.len() {
            into.txns.resize_with(h.txns.len(), TxnSample::default);
        }
        for (t, hist) in into.txns.iter_mut().zip(&mut h.txns) {
            let _ = t.hist.add(&*hist);
            hist.reset();
        }
    }
}

/// Counters, exact extremes and sum of the events a worker finished this interval: a
/// [`Sample`] without its histogram (the latencies travel in batches).
#[derive(Debug, Clone)]
struct Counts {
    events: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u64,
    db: DbCounters,
    io: IoCounters,
    /// Service time (open loop only).
    svc_min_ns: u64,
    svc_max_ns: u64,
    svc_sum_ns: u64,
    /// Per transaction type (the latencies are in the shared histograms).
    txns: Vec<TxnCounts>,
    /// Per database target, when the worker's load goes to several.
    targets: Vec<DbCounters>,
    /// The longest schedule lag (open loop only).
    lag_max_ns: u64,
    skipped: u64,
    late: u64,
    clients_aborted: u32,
    client_errors: Vec<String>,
    /// pgbench's `-l`: the transactions that ended this interval.
    log: Vec<fleetbench_proto::v1::TxnLogEntry>,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            events: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            db: DbCounters::default(),
            io: IoCounters::default(),
            svc_min_ns: u64::MAX,
            svc_max_ns: 0,
            svc_sum_ns: 0,
            txns: Vec::new(),
            targets: Vec::new(),
            lag_max_ns: 0,
            skipped: 0,
            late: 0,
            clients_aborted: 0,
            client_errors: Vec::new(),
            log: Vec::new(),
        }
    }
}

/// What one worker has recorded: the current interval's counters and latencies not yet
/// folded, and its lifetime totals.
#[derive(Debug)]
struct WorkerStats {
    interval: Counts,
    /// Latencies in microseconds since the last fold (at most `BATCH`).
    pending: Vec<u32>,
    /// Service times of the same events (open loop only; never allocated otherwise).
    svc_pending: Vec<u32>,
    /// The last interval the ticker drained this worker for: pending latencies belong
    /// to the next one.
    drained: u32,
    /// Events finished over the whole run (for threads fairness).
    events: u64,
    /// Nanoseconds spent inside events over the whole run.
    busy_ns: u64,
    /// pgbench's `-l`: this worker's transactions are logged.
    log: Option<crate::txnlog::LogState>,
}

/// A worker's slot, shared between the worker and the ticker.
#[derive(Debug)]
pub struct WorkerSlot {
    stats: Mutex<WorkerStats>,
    shared: Arc<IntervalHists>,
    /// Open loop: the worker is inside an event (sysbench's "concurrency"). Written by
    /// the worker alone, read by the ticker: no counter shared by every worker.
    busy: std::sync::atomic::AtomicBool,
}

impl WorkerSlot {
    /// A slot whose latencies are folded into `shared`, the run's interval histograms.
    pub fn new(shared: Arc<IntervalHists>) -> Self {
        WorkerSlot {
            stats: Mutex::new(WorkerStats {
                interval: Counts::default(),
                pending: Vec::with_capacity(BATCH),
                svc_pending: Vec::new(),
                drained: 0,
                events: 0,
                busy_ns: 0,
                log: None,
            }),
            shared,
            busy: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Logs this worker's transactions (pgbench's `-l`) as worker `t` of the agent.
    pub fn log_transactions(&self, cfg: crate::txnlog::TxnLogConfig, t: u32) {
        self.lock().log = Some(crate::txnlog::LogState::new(cfg, t));
    }

    /// The worker starts (true) or ends (false) an event.
    pub fn set_busy(&self, busy: bool) {
        self.busy.store(busy, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn is_busy(&self) -> bool {
        self.busy.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records one finished event.
    pub fn record(&self, ns: u64) {
        let mut s = self.lock();
        self.record_locked(&mut s, ns, None);
    }

    /// Records one finished event of an open loop: `ns` from its arrival, `svc_ns` from
    /// the moment a thread took it, with the database work or file operations it did.
    pub fn record_open(
        &self,
        ns: u64,
        svc_ns: u64,
        db: Option<&DbCounters>,
        io: Option<&IoCounters>,
    ) {
        let mut s = self.lock();
        self.record_locked(&mut s, ns, Some(svc_ns));
        if let Some(db) = db {
            s.interval.db.merge(db);
        }
        if let Some(io) = io {
            s.interval.io.merge(io);
        }
    }

    /// Records one finished event with the database work it did.
    pub fn record_db(&self, ns: u64, db: &DbCounters) {
        let mut s = self.lock();
        self.record_locked(&mut s, ns, None);
        s.interval.db.merge(db);
    }

    /// Records one finished event with the file operations it did.
    pub fn record_io(&self, ns: u64, io: &IoCounters) {
        let mut s = self.lock();
        self.record_locked(&mut s, ns, None);
        s.interval.io.merge(io);
    }

    /// Records one transaction of a typed workload (TPC-C): as an event that took `ns`
    /// unless it failed, and under its type in any case. In an open loop `svc_ns` is its
    /// service time and `ns` counts from its arrival.
    /// `late`: it took longer than the run's latency limit.
    pub fn record_txn(&self, ns: u64, svc_ns: Option<u64>, end: &TxnEnd, late: bool) {
        let mut s = self.lock();
        if let Some(log) = s.log.as_mut() {
            let status = match end.failed {
                false => crate::txnlog::DONE,
                true if end.db.errors_by_code.keys().any(|&c| Some(c) == deadlock()) => {
                    crate::txnlog::DEADLOCK
                }
                true => crate::txnlog::SERIALIZATION,
            };
            let lag = svc_ns.map_or(0, |svc| ns.saturating_sub(svc));
            if let Some(e) = log.entry(end.kind, status, ns, lag, end.retried) {
                s.interval.log.push(e);
            }
        }
        if !end.failed {
            self.record_locked(&mut s, ns, svc_ns);
            s.interval.late += u64::from(late);
        }
        s.interval.db.merge(&end.db);
        let txns = &mut s.interval.txns;
        if txns.len() <= end.kind {
            txns.resize_with(end.kind + 1, TxnCounts::default);
        }
        let t = &mut txns[end.kind];
        t.retried += u64::from(end.retried);
        t.retried_txns += u64::from(end.retried > 0);
        if end.failed {
            t.failed += 1;
            return;
        }
        t.count += 1;
        t.min_ns = t.min_ns.min(ns);
        t.max_ns = t.max_ns.max(ns);
        t.sum_ns += ns;
        t.rolled_back += u64::from(end.rolled_back);
        let mut h = self.shared.half(s.drained.wrapping_add(1));
        if h.txns.len() <= end.kind {
            h.txns.resize_with(end.kind + 1, new_histogram);
        }
        let _ = h.txns[end.kind].record(ns / 1_000);
    }

    /// Records an event that took `ns`; in an open loop `svc_ns` is its service time.
    fn record_locked(&self, s: &mut WorkerStats, ns: u64, svc_ns: Option<u64>) {
        let c = &mut s.interval;
        c.events += 1;
        c.min_ns = c.min_ns.min(ns);
        c.max_ns = c.max_ns.max(ns);
        c.sum_ns += ns;
        s.events += 1;
        // A thread is busy for an event's service time; in a closed loop that is all of it.
        let busy = svc_ns.unwrap_or(ns);
        s.busy_ns += busy;
        s.pending.push(micros(ns));
        if let Some(svc) = svc_ns {
            c.svc_min_ns = c.svc_min_ns.min(svc);
            c.svc_max_ns = c.svc_max_ns.max(svc);
            c.svc_sum_ns += svc;
            c.lag_max_ns = c.lag_max_ns.max(ns.saturating_sub(svc));
            s.svc_pending.push(micros(svc));
        }
        if s.pending.len() >= BATCH {
            // Under this slot's lock, so the ticker cannot drain it meanwhile: the batch
            // goes to the interval after the last one drained, exactly as its counters do.
            let mut h = self.shared.half(s.drained.wrapping_add(1));
            for &us in &s.pending {
                let _ = h.latency.record(u64::from(us));
            }
            s.pending.clear();
            for &us in &s.svc_pending {
                let _ = h.service.record(u64::from(us));
            }
            s.svc_pending.clear();
        }
    }

    /// Counts an event skipped for being late already when the worker could take it,
    /// under transaction type `kind` if the workload has types.
    pub fn skip(&self, kind: Option<usize>) {
        let mut s = self.lock();
        s.interval.skipped += 1;
        if let Some(log) = s.log.as_mut()
            && let Some(e) = log.entry(kind.unwrap_or(0), crate::txnlog::SKIPPED, 0, 0, 0)
        {
            s.interval.log.push(e);
        }
        if let Some(k) = kind {
            let txns = &mut s.interval.txns;
            if txns.len() <= k {
                txns.resize_with(k + 1, TxnCounts::default);
            }
            txns[k].skipped += 1;
        }
    }

    /// Counts this worker as having left the run on an error of its own, saying `why`.
    pub fn quit(&self, why: String) {
        let mut s = self.lock();
        s.interval.clients_aborted += 1;
        if s.interval.client_errors.len() < MAX_CLIENT_ERRORS {
            s.interval.client_errors.push(why);
        }
    }

    /// Adds file operations that belong to no finished event (completions reaped at the
    /// end of the run).
    pub fn add_io(&self, io: &IoCounters) {
        self.lock().interval.io.merge(io);
    }

    /// Adds events that were counted without being timed (see
    /// `WorkerLoop::extra_events`): to the interval's count only.
    pub fn add_events(&self, n: u64) {
        self.lock().interval.events += n;
    }

    /// Adds database work that belongs to no finished event (an event cut short).
    pub fn add_db(&self, db: &DbCounters) {
        self.lock().interval.db.merge(db);
    }

    /// Adds an event's queries per database target (index = target), for a worker whose
    /// load goes to several targets.
    pub fn add_targets(&self, targets: &[DbCounters]) {
        let mut s = self.lock();
        merge_targets(&mut s.interval.targets, targets);
    }

    /// Moves this worker's part of interval `seq` into `into` (its counters and the
    /// latencies it has not folded yet) and starts the next interval. The batches it
    /// folded before are in the shared histogram of `seq`, taken by
    /// [`IntervalHists::take_into`] once every slot is drained.
    pub fn drain_into(&self, seq: u32, into: &mut Sample) {
        let mut s = self.lock();
        let c = std::mem::take(&mut s.interval);
        into.events += c.events;
        into.min_ns = into.min_ns.min(c.min_ns);
        into.max_ns = into.max_ns.max(c.max_ns);
        into.sum_ns += c.sum_ns;
        into.db.merge(&c.db);
        into.io.merge(&c.io);
        into.service.add_extremes(&c);
        if into.txns.len() < c.txns.len() {
            into.txns.resize_with(c.txns.len(), TxnSample::default);
        }
        for (a, b) in into.txns.iter_mut().zip(&c.txns) {
            a.counts.add(b);
        }
        merge_targets(&mut into.targets, &c.targets);
        into.skipped += c.skipped;
        into.late += c.late;
        into.clients_aborted += c.clients_aborted;
        add_errors(&mut into.client_errors, &c.client_errors);
        into.log.extend(c.log);
        for &us in &s.pending {
            let _ = into.hist.record(u64::from(us));
        }
        s.pending.clear();
        for &us in &s.svc_pending {
            let _ = into.service.hist.record(u64::from(us));
        }
        s.svc_pending.clear();
        s.drained = seq;
    }

    /// Lifetime totals: (events, busy nanoseconds).
    pub fn totals(&self) -> (u64, u64) {
        let s = self.lock();
        (s.events, s.busy_ns)
    }

    /// Heap bytes this slot holds: fixed, whatever the run records.
    pub fn heap_bytes(&self) -> usize {
        let s = self.lock();
        (s.pending.capacity() + s.svc_pending.capacity()) * std::mem::size_of::<u32>()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WorkerStats> {
        // A worker that panicked mid-record leaves consistent-enough counters behind.
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Nanoseconds as whole microseconds, saturating at about 71 minutes.
fn micros(ns: u64) -> u32 {
    u32::try_from(ns / 1_000).unwrap_or(u32::MAX)
}

/// Per-target figures a worker keeps over the whole run.
#[derive(Debug, Default, Clone)]
pub struct TargetTally {
    pub db: DbCounters,
    pub statements: Sample,
    /// How the first connection to it was made.
    pub conn: Option<ConnInfo>,
    /// A worker took on reading the server's facts (once per target).
    pub facts_taken: bool,
}

/// Per-kind and per-target figures of a run, shared by its workers: each folds its
/// statement latencies in by batches; the runner fills in the per-target counters from
/// the intervals at the end.
#[derive(Debug, Default)]
pub struct WorkerTail {
    pub kinds: Vec<Sample>,
    pub targets: Vec<TargetTally>,
    /// Every statement of the run goes to this one target: its statement latencies are
    /// the kinds' together, added up by [`WorkerTail::finish`] instead of recorded twice.
    pub one_target: Option<usize>,
    /// Per script and command (pgbench's -r): `commands[script][command]`.
    pub commands: Vec<Vec<CommandTally>>,
}

/// One command of a script over a run (pgbench's -r): completed executions and their
/// summed time, transactions that failed in it and retries it caused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandTally {
    pub count: u64,
    pub sum_ns: u64,
    pub failures: u64,
    pub retries: u64,
}

impl CommandTally {
    /// One completed execution that took `ns`.
    #[inline]
    pub fn done(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns;
    }

    pub fn merge(&mut self, o: &CommandTally) {
        add_counters!(self, o, count, sum_ns, failures, retries);
    }
}

/// Adds per-script command tallies `from` into `into`, growing it as needed.
pub fn merge_commands(into: &mut Vec<Vec<CommandTally>>, from: &[Vec<CommandTally>]) {
    merge_indexed(into, from, |a, b| merge_indexed(a, b, CommandTally::merge));
}

impl WorkerTail {
    /// Room for every statement kind and `targets` targets.
    pub fn new(targets: usize) -> Self {
        WorkerTail {
            kinds: (0..Kind::COUNT).map(|_| Sample::default()).collect(),
            targets: (0..targets).map(|_| TargetTally::default()).collect(),
            one_target: None,
            commands: Vec::new(),
        }
    }

    /// Completes the figures once every worker handed its statements in.
    pub fn finish(&mut self) {
        if let Some(t) = self.one_target.take()
            && let Some(tt) = self.targets.get_mut(t)
        {
            for s in &self.kinds {
                tt.statements.merge(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> (Arc<IntervalHists>, WorkerSlot) {
        let shared = Arc::new(IntervalHists::default());
        (shared.clone(), WorkerSlot::new(shared))
    }

    /// What the ticker does for interval `seq`: drain every slot, then the shared half.
    fn tick(shared: &IntervalHists, slots: &[&WorkerSlot], seq: u32) -> Sample {
        let mut s = Sample::default();
        for slot in slots {
            slot.drain_into(seq, &mut s);
        }
        shared.take_into(seq, &mut s);
        s
    }

    #[test]
    fn drain_moves_interval_and_keeps_totals() {
        let (shared, slot) = slot();
        slot.record(2_000);
        slot.record(5_000);
        let s = tick(&shared, &[&slot], 1);
        assert_eq!(s.events, 2);
        assert_eq!((s.min_ns, s.max_ns, s.sum_ns), (2_000, 5_000, 7_000));
        assert_eq!(s.hist.len(), 2);
        let again = tick(&shared, &[&slot], 2);
        assert_eq!(again.events, 0);
        assert_eq!(slot.totals(), (2, 7_000));
    }

    #[test]
    fn batched_latencies_land_in_their_interval() {
        let (shared, a) = slot();
        let b = WorkerSlot::new(shared.clone());
        // Several batches and a remainder per interval, from two workers.
        let mut want = Vec::new();
        for seq in 1..=4u32 {
            let n = BATCH as u64 * u64::from(seq) + 7;
            for i in 0..n {
                a.record(1_000 * (i + 1));
                b.record(500);
            }
            want.push(2 * n);
            let mut s = Sample::default();
            b.drain_into(seq, &mut s);
            a.drain_into(seq, &mut s);
            shared.take_into(seq, &mut s);
            assert_eq!(s.hist.len(), s.events, "interval {seq}");
            assert_eq!(s.events, 2 * n);
        }
        assert_eq!(a.totals().0 + b.totals().0, want.iter().sum::<u64>());
    }

    #[test]
    fn a_fold_after_the_slot_was_drained_goes_to_the_next_interval() {
        let (shared, a) = slot();
        let b = WorkerSlot::new(shared.clone());
        let mut s1 = Sample::default();
        a.drain_into(1, &mut s1);
        // a is past interval 1 now; a full batch of it belongs to interval 2.
        for _ in 0..BATCH {
            a.record(3_000);
        }
        b.record(1_000);
        b.drain_into(1, &mut s1);
        shared.take_into(1, &mut s1);
        assert_eq!((s1.events, s1.hist.len()), (1, 1));
        let s2 = tick(&shared, &[&a, &b], 2);
        assert_eq!((s2.events, s2.hist.len()), (BATCH as u64, BATCH as u64));
    }

    #[test]
    fn transactions_are_counted_by_type_and_their_latencies_land_in_their_interval() {
        let (shared, a) = slot();
        let b = WorkerSlot::new(shared.clone());
        let end = |kind, failed| TxnEnd {
            kind,
            retried: 1,
            failed,
            rolled_back: kind == 0,
            db: DbCounters::default(),
        };
        a.record_txn(2_000_000, None, &end(0, false), true);
        b.record_txn(3_000_000, None, &end(2, false), false);
        b.record_txn(9_000_000, None, &end(2, true), true);
        b.skip(Some(2));
        let s = tick(&shared, &[&a, &b], 1);
        assert_eq!(s.events, 2, "a failed transaction is no event");
        assert_eq!(s.late, 1, "a failed transaction is not late");
        assert_eq!((s.skipped, s.txns[2].counts.skipped), (1, 1));
        assert_eq!(s.txns[2].counts.retried_txns, 2);
        assert_eq!(s.txns.len(), 3);
        assert_eq!(
            (s.txns[0].counts.count, s.txns[0].counts.rolled_back),
            (1, 1)
        );
        assert_eq!(s.txns[1].counts.count, 0);
        let t = &s.txns[2];
        assert_eq!(
            (t.counts.count, t.counts.failed, t.counts.retried),
            (1, 1, 2)
        );
        assert_eq!((t.hist.len(), t.counts.max_ns), (1, 3_000_000));
        assert_eq!(s.txns[0].hist.len(), 1);
        let next = tick(&shared, &[&a, &b], 2);
        assert!(next.txns.iter().all(|t| t.is_empty() && t.hist.is_empty()));
    }

    #[test]
    fn slot_memory_does_not_grow_with_what_it_records() {
        let (shared, slot) = slot();
        let before = slot.heap_bytes();
        for seq in 1..=20u32 {
            for i in 0..10_000u64 {
                slot.record(i * 997 % 5_000_000);
            }
            tick(&shared, &[&slot], seq);
        }
        assert_eq!(slot.heap_bytes(), before);
        assert!(before <= BATCH * 4, "{before}");
    }
}
