//! Runs one benchmark on this agent: worker OS threads held at a start gate until Go, an
//! interval ticker that drains every worker's recorder once per tick, and a final summary.

mod control;
mod event_loop;
mod open;
pub mod worker;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio::time::sleep_until;

use crate::rate::QueueState;
use crate::stats::{IntervalHists, Sample, WorkerSlot, WorkerTail};

pub use control::{Claim, Control, OpenProgress};
use control::{Clock, Gate, GateState};
pub use open::{Workers, until_stuck};
use worker::ThreadWorkload;

/// How long past its time a run may take to wind down before in-flight work is cancelled.
pub const HARD_DEADLINE_GRACE: Duration = Duration::from_secs(10);

/// How long workers may take to leave once the run is cancelled (their sockets shut).
/// One still busy then is in code that does not return (a script's endless loop, which
/// no hook reaches in LuaJIT's compiled code): the run ends without it, and only the
/// process's end stops it.
pub const STUCK_GRACE: Duration = Duration::from_secs(3);

/// Limits and cadence of one run on this agent.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub threads: u32,
    /// Stop after this long from Go; None = only the event limit ends the run.
    pub time_limit: Option<Duration>,
    /// Total events over all of this agent's threads; None = unlimited.
    pub event_limit: Option<u64>,
    /// Interval length.
    pub tick: Duration,
    /// Open loop: events per second this agent starts on average (Poisson arrivals);
    /// None = closed loop (each thread starts its next event when the last one ends).
    pub rate: Option<f64>,
    /// Seeds the arrival schedule.
    pub seed: u64,
    /// Load run first on the same threads and connections with statistics off (sysbench
    /// 1.0's --warmup-time); the time limit and the event limit count after it.
    pub warmup: Duration,
    /// Events each thread (worker) runs at most, besides `event_limit` (pgbench's `-t`,
    /// per client); None = no such limit.
    pub events_per_thread: Option<u64>,
    /// Typed events (transactions) that take longer are counted as late (pgbench's `-L`).
    pub latency_limit: Option<Duration>,
    /// Open loop with a latency limit: an event already later than the limit when a
    /// worker could start it is skipped and counted, not run (pgbench's `-R` with `-L`).
    pub skip_late: bool,
    /// pgbench's `-l`: each transaction logged as it ends (sampled), with its interval.
    pub txn_log: Option<crate::txnlog::TxnLogConfig>,
}

/// One tick's worth of results.
#[derive(Debug)]
pub struct IntervalReport {
    /// 1-based tick number since Go.
    pub seq: u32,
    pub duration: Duration,
    pub threads_running: u32,
    pub sample: Sample,
    /// The run's last interval: from the last full tick to the end of the run.
    pub last: bool,
    /// Open loop: the queue at the interval's end, and its arrivals.
    pub open: Option<QueueState>,
}

/// The whole run's results on this agent.
#[derive(Debug)]
pub struct FinalReport {
    /// From Go until the last worker stopped.
    pub elapsed: Duration,
    pub sample: Sample,
    /// Per thread: (events, busy nanoseconds).
    pub threads: Vec<(u64, u64)>,
    pub aborted: Option<String>,
    /// Per statement kind and per target figures (OLTP only).
    pub tail: WorkerTail,
    /// Open loop: the queue when the run ended, and all its arrivals.
    pub open: Option<QueueState>,
    /// Workers still busy [`STUCK_GRACE`] after the cancel, left behind on their threads.
    pub stuck: u32,
}

/// A run whose workers exist and wait for Go. Dropping it without `go` releases them.
pub struct PreparedRun {
    pub(crate) config: RunConfig,
    pub(crate) control: Arc<Control>,
    slots: Vec<Arc<WorkerSlot>>,
    /// The interval histograms the slots fold their latencies into.
    intervals: Arc<IntervalHists>,
    gate: Arc<Gate>,
    pub(crate) running: Arc<AtomicUsize>,
    all_done: Arc<Notify>,
    handles: Vec<JoinHandle<()>>,
    /// Per-kind and per-target figures the database workers hand back as they end.
    pub(crate) tail: Option<Arc<Mutex<WorkerTail>>>,
    /// The one database target all of this run's load goes to, if there is one: its
    /// per-interval figures are the interval's (workers count per target only when their
    /// load goes to several).
    pub(crate) single_target: Option<usize>,
}

impl PreparedRun {
    /// Spawns `config.threads` worker threads, each parked at the start gate.
    pub fn new(workload: Arc<dyn ThreadWorkload>, config: RunConfig) -> std::io::Result<Self> {
        let mut run = PreparedRun::empty(config);
        if let (Some(sockets), Some(control)) = (workload.sockets(), Arc::get_mut(&mut run.control))
        {
            control.sockets = sockets;
        }
        for t in 0..run.config.threads {
            // Made here, before Ready: a worker's set-up (memory's buffers) is not run time.
            let worker = workload.worker(t);
            let spawned = run.spawn_worker(
                t,
                format!("fb-worker-{t}"),
                None,
                move || Ok(worker),
                |_, _| {},
                None,
                Some(workload.clone()),
            );
            if let Err(e) = spawned {
                // Threads not spawned never decrement; account for them here.
                let missing = (run.config.threads - t) as usize;
                run.running.fetch_sub(missing, Ordering::AcqRel);
                return Err(e);
            }
        }
        Ok(run)
    }

    pub(crate) fn empty(config: RunConfig) -> Self {
        PreparedRun {
            control: Arc::new(Control::new(&config)),
            gate: Arc::new(Gate::new()),
            running: Arc::new(AtomicUsize::new(config.threads as usize)),
            all_done: Arc::new(Notify::new()),
            config,
            slots: Vec::new(),
            intervals: Arc::new(IntervalHists::default()),
            handles: Vec::new(),
            tail: None,
            single_target: None,
        }
    }

    /// Marks the run as going to one database target, connected as `conn` says: the run's
    /// counters become that target's, and Ready says how it was reached (TPC-C, pgbench).
    /// Returns the figures its workers hand back as they end (pgbench's per command).
    pub fn set_target(&mut self, conn: Option<crate::sql::ConnInfo>) -> Arc<Mutex<WorkerTail>> {
        let mut tail = WorkerTail::new(1);
        tail.kinds.clear();
        tail.targets[0].conn = conn;
        let tail = Arc::new(Mutex::new(tail));
        self.tail = Some(tail.clone());
        self.single_target = Some(0);
        tail
    }

    /// Takes the figures the database workers hand back as they end, with their statement
    /// kinds and targets (`targets` of them; `one` when all load goes to one).
    pub fn set_tail(&mut self, tail: WorkerTail) -> Arc<Mutex<WorkerTail>> {
        self.single_target = tail.one_target;
        let tail = Arc::new(Mutex::new(tail));
        self.tail = Some(tail.clone());
        tail
    }

    pub fn threads(&self) -> u32 {
        self.config.threads
    }

    pub fn control(&self) -> Arc<Control> {
        self.control.clone()
    }

    /// How the OLTP workers' connections to each target were made (target index, info).
    pub fn connections(&self) -> Vec<(usize, crate::sql::ConnInfo)> {
        let Some(tail) = &self.tail else {
            return Vec::new();
        };
        let tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        tail.targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, t.conn.clone()?)))
            .collect()
    }

    /// An interval's sample with its per-target counters: the workers' own when their load
    /// goes to several targets, else the whole sample's under its one target.
    fn per_target(&self, mut sample: Sample) -> Sample {
        if let Some(t) = self.single_target
            && sample.targets.is_empty()
        {
            sample.targets = vec![Default::default(); t + 1];
            sample.targets[t] = sample.db.clone();
        }
        sample
    }

    /// Opens the gate and drives the run to its end, sending one report per tick.
    /// If `intervals` is closed (nobody listening) the run is aborted.
    pub async fn go(mut self, intervals: mpsc::Sender<IntervalReport>) -> FinalReport {
        let go = tokio::time::Instant::now();
        // The measurement starts after the warm-up; ticks, time and limits count from here.
        let start = go + self.config.warmup;
        let deadline = self.config.time_limit.map(|t| start + t);
        let _ = self.control.clock.set(Clock {
            go: go.into_std(),
            measure_from: start.into_std(),
            deadline: deadline.map(|d| d.into_std()),
        });
        let mut warming = !self.config.warmup.is_zero();
        self.gate.set(GateState::Open);
        let mut ticks = Ticks {
            start,
            seq: 0,
            last_tick: start,
            next_tick: start + self.config.tick,
            cumulative: Sample::default(),
            arrivals_before: 0,
            warmup_arrivals: 0,
            last_running: self.slots.len() as u32,
        };
        // When the loop first saw the run cancelled: workers get STUCK_GRACE from then.
        let mut cancelled_at: Option<tokio::time::Instant> = None;
        let mut stuck = 0;
        loop {
            // Ticks that would end at or after the deadline are never sent (as in sysbench):
            // what runs past the last full tick is in the final report only.
            let ticking = deadline.is_none_or(|d| ticks.next_tick < d);
            let (mut wake, hard) = self.next_wake(warming, &ticks, ticking, deadline);
            if self.control.is_cancelled() {
                let give_up =
                    *cancelled_at.get_or_insert_with(tokio::time::Instant::now) + STUCK_GRACE;
                wake = Some(wake.map_or(give_up, |w| w.min(give_up)));
            }
            tokio::select! {
                _ = self.all_done.notified() => break,
                _ = sleep_until_some(wake) => {}
            }
            let now = tokio::time::Instant::now();
            if cancelled_at.is_some_and(|c| now >= c + STUCK_GRACE) {
                stuck = self.running.load(Ordering::Acquire) as u32;
                if stuck > 0 {
                    tracing::error!(
                        "{stuck} worker(s) still busy {}s after the run was cancelled: left behind (code that does not return, such as a script's endless loop)",
                        STUCK_GRACE.as_secs()
                    );
                    break;
                }
            }
            if warming && now >= start {
                // Nothing of the warm-up was recorded; only its arrivals are left to skip.
                warming = false;
                ticks.warmup_arrivals = self
                    .control
                    .queue_at(start.into_std())
                    .map_or(0, |q| q.arrivals);
                ticks.arrivals_before = ticks.warmup_arrivals;
            }
            // Counted before the deadline stops anyone: the threads that ran this tick.
            let threads_running = self.running.load(Ordering::Acquire) as u32;
            if deadline.is_some_and(|d| now >= d) {
                self.control.finish();
            }
            if hard.is_some_and(|h| now >= h) {
                self.control.abort(format!(
                    "hard deadline: workers still busy {}s after the run's time were cancelled",
                    HARD_DEADLINE_GRACE.as_secs()
                ));
            }
            if ticking && now >= ticks.next_tick {
                self.tick(&mut ticks, now, threads_running, &intervals)
                    .await;
            }
        }
        if stuck == 0 {
            for h in self.handles.drain(..) {
                let _ = h.join();
            }
        } else {
            // Joining would wait forever: the threads are left to the process's end.
            self.handles.clear();
        }
        let mut fin = self.final_report(ticks, &intervals).await;
        let stuck = stuck + self.control.left_behind.load(Ordering::Acquire);
        if stuck > 0 {
            fin.stuck = stuck;
            fin.aborted = Some(format!(
                "{}; {stuck} thread(s) of the run did not return within {}s (code that never returns, such as an endless loop in a script) and were left running",
                fin.aborted.as_deref().unwrap_or("stopped"),
                STUCK_GRACE.as_secs()
            ));
        }
        fin
    }

    /// When the ticker wakes next: the end of the warm-up, the next tick, the deadline;
    /// and the hard deadline, after which workers still busy (a statement stuck on a lock,
    /// a lost server) are cancelled.
    fn next_wake(
        &self,
        warming: bool,
        ticks: &Ticks,
        ticking: bool,
        deadline: Option<tokio::time::Instant>,
    ) -> (Option<tokio::time::Instant>, Option<tokio::time::Instant>) {
        let mut wake = if warming {
            Some(ticks.start)
        } else {
            ticking.then_some(ticks.next_tick)
        };
        if let Some(d) = deadline
            && !self.control.is_stopped()
        {
            wake = Some(wake.map_or(d, |w| w.min(d)));
        }
        let hard = deadline.map(|d| d + HARD_DEADLINE_GRACE);
        if let Some(h) = hard
            && !self.control.is_cancelled()
        {
            wake = Some(wake.map_or(h, |w| w.min(h)));
        }
        (wake, hard)
    }

    /// Sends the interval that ends at `now`.
    async fn tick(
        &self,
        ticks: &mut Ticks,
        now: tokio::time::Instant,
        threads_running: u32,
        intervals: &mpsc::Sender<IntervalReport>,
    ) {
        ticks.seq += 1;
        let seq = ticks.seq;
        let mut sample = Sample::default();
        for slot in &self.slots {
            slot.drain_into(seq, &mut sample);
        }
        self.intervals.take_into(seq, &mut sample);
        let sample = self.per_target(sample);
        ticks.cumulative.merge(&sample);
        ticks.last_running = threads_running;
        let open = self.control.queue_at(now.into_std()).map(|q| {
            let arrivals = q.arrivals - ticks.arrivals_before;
            ticks.arrivals_before = q.arrivals;
            let concurrency = self.slots.iter().filter(|s| s.is_busy()).count() as u32;
            QueueState {
                arrivals,
                concurrency,
                ..q
            }
        });
        let report = IntervalReport {
            seq,
            // Measured, not nominal: the ticker may wake a little late.
            duration: now - ticks.last_tick,
            threads_running,
            sample,
            last: false,
            open,
        };
        if intervals.send(report).await.is_err() {
            self.control.abort("coordinator went away");
        }
        ticks.last_tick = now;
        ticks.next_tick += self.config.tick;
    }

    /// After the workers have ended: what ran since the last tick as a last interval of its
    /// own, then the run's totals.
    async fn final_report(
        &mut self,
        ticks: Ticks,
        intervals: &mpsc::Sender<IntervalReport>,
    ) -> FinalReport {
        let Ticks {
            start,
            seq,
            last_tick,
            mut cumulative,
            arrivals_before,
            warmup_arrivals,
            last_running,
            ..
        } = ticks;
        let mut tail = match self.tail.take() {
            Some(t) => std::mem::take(&mut *t.lock().unwrap_or_else(|p| p.into_inner())),
            None => WorkerTail::default(),
        };
        tail.finish();
        // From the end of the warm-up (none when the run stopped during it).
        let elapsed = Duration::from_nanos(self.control.last_finish_ns.load(Ordering::Acquire))
            .saturating_sub(self.config.warmup);
        let mut rest = Sample::default();
        for slot in &self.slots {
            slot.drain_into(seq + 1, &mut rest);
        }
        self.intervals.take_into(seq + 1, &mut rest);
        let rest = self.per_target(rest);
        cumulative.merge(&rest);
        // Each target's figures over the run: what its intervals added up to.
        for (into, db) in tail.targets.iter_mut().zip(&cumulative.targets) {
            into.db = db.clone();
        }
        // The queue as the run ended: arrivals up to the end that no thread took.
        let open = self
            .control
            .clock
            .get()
            .and_then(|c| self.control.queue_at(c.measure_from + elapsed));
        // What ran after the last full tick is an interval of its own (as sysbench prints
        // its last line), so the intervals add up to the totals exactly.
        // An empty sliver after a tick (an event-limited run ending just after it) is left out.
        let since_tick = last_tick
            .into_std()
            .saturating_duration_since(start.into_std());
        let duration = elapsed.saturating_sub(since_tick);
        if !rest.is_empty() || duration >= self.config.tick / 10 {
            let report = IntervalReport {
                seq: seq + 1,
                duration,
                threads_running: last_running,
                sample: rest,
                last: true,
                open: open.map(|q| QueueState {
                    arrivals: q.arrivals.saturating_sub(arrivals_before),
                    ..q
                }),
            };
            // Nobody listening: the run is over anyway.
            let _ = intervals.send(report).await;
        }
        FinalReport {
            elapsed,
            sample: cumulative,
            threads: self.slots.iter().map(|s| s.totals()).collect(),
            aborted: self.control.abort_reason(),
            stuck: 0,
            tail,
            open: open.map(|q| QueueState {
                arrivals: q.arrivals.saturating_sub(warmup_arrivals),
                ..q
            }),
        }
    }
}

/// The ticker's state over a run.
struct Ticks {
    /// The end of the warm-up: the measurement's start.
    start: tokio::time::Instant,
    /// Intervals sent so far.
    seq: u32,
    last_tick: tokio::time::Instant,
    next_tick: tokio::time::Instant,
    /// Everything the intervals sent so far held.
    cumulative: Sample,
    /// Open loop: arrivals counted in the intervals sent so far.
    arrivals_before: u64,
    /// Open loop: arrivals during the warm-up, not the measurement's.
    warmup_arrivals: u64,
    /// Threads that ran in the last tick; every thread before the first one.
    last_running: u32,
}

/// Sleeps until `at`, or forever when there is nothing to wake for.
async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Drop for PreparedRun {
    fn drop(&mut self) {
        // Never started (or dropped mid-run): make sure every worker leaves.
        self.control.abort("run abandoned before it finished");
        self.gate.set(GateState::Abandoned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::cpu::Cpu;
    use fleetbench_model::counters::IoCounters;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    /// A cpu run of `max_prime` per event, its workers waiting for Go.
    fn cpu_run(max_prime: u64, config: RunConfig) -> PreparedRun {
        PreparedRun::new(Arc::new(Cpu { max_prime }), config).unwrap()
    }

    fn config(threads: u32, time_ms: Option<u64>, events: Option<u64>) -> RunConfig {
        RunConfig {
            threads,
            time_limit: time_ms.map(Duration::from_millis),
            event_limit: events,
            tick: Duration::from_millis(100),
            rate: None,
            seed: 1,
            warmup: Duration::ZERO,
            events_per_thread: None,
            latency_limit: None,
            skip_late: false,
            txn_log: None,
        }
    }

    #[tokio::test]
    async fn event_limit_is_exact_across_threads() {
        let run = cpu_run(2_000, config(3, None, Some(500)));
        let (tx, mut rx) = mpsc::channel(64);
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let fin = run.go(tx).await;
        drain.await.unwrap();
        assert_eq!(fin.sample.events, 500);
        assert_eq!(fin.threads.iter().map(|t| t.0).sum::<u64>(), 500);
        assert_eq!(fin.sample.hist.len(), 500);
        assert!(fin.aborted.is_none());
    }

    #[tokio::test]
    async fn a_limit_per_thread_runs_exactly_that_many_on_each() {
        let mut c = config(3, None, None);
        c.events_per_thread = Some(7);
        let run = cpu_run(2_000, c);
        let (tx, _rx) = mpsc::channel(1024);
        let fin = run.go(tx).await;
        assert_eq!(fin.sample.events, 21);
        assert!(fin.threads.iter().all(|t| t.0 == 7), "{:?}", fin.threads);
        assert!(fin.aborted.is_none());
    }

    #[tokio::test]
    async fn late_arrivals_are_skipped_with_a_latency_limit() {
        // One thread, far more arrivals than it can serve: most are late by more than
        // 1 ms when it gets to them and are skipped, not run.
        let mut c = config(1, Some(300), None);
        c.rate = Some(50_000.0);
        c.latency_limit = Some(Duration::from_millis(1));
        c.skip_late = true;
        let run = cpu_run(20_000, c);
        let (tx, _rx) = mpsc::channel(1024);
        let fin = run.go(tx).await;
        assert!(fin.sample.skipped > 0, "nothing skipped");
        let arrivals = fin.open.map_or(0, |q| q.arrivals);
        assert!(
            fin.sample.events + fin.sample.skipped <= arrivals,
            "{} run + {} skipped of {arrivals} arrivals",
            fin.sample.events,
            fin.sample.skipped
        );
        // The ones that ran started within the limit of their schedule.
        assert!(fin.sample.events > 0);
        assert!(
            fin.sample.service.lag_max_ns <= 1_000_000,
            "{}",
            fin.sample.service.lag_max_ns
        );
    }

    #[tokio::test]
    async fn a_warm_up_runs_first_and_counts_in_nothing() {
        // Time-limited: the ticks and the time start after the warm-up.
        let mut c = config(2, Some(250), None);
        c.warmup = Duration::from_millis(200);
        let run = PreparedRun::new(Arc::new(Cpu { max_prime: 1_000 }), c).unwrap();
        let (tx, mut rx) = mpsc::channel(64);
        let collect = tokio::spawn(async move {
            let mut v = Vec::new();
            while let Some(r) = rx.recv().await {
                v.push(r);
            }
            v
        });
        let began = std::time::Instant::now();
        let fin = run.go(tx).await;
        let ticks = collect.await.unwrap();
        assert!(began.elapsed() >= Duration::from_millis(450));
        // With the warm-up counted it would be 450 ms or more.
        assert!(
            fin.elapsed >= Duration::from_millis(250) && fin.elapsed < Duration::from_millis(450),
            "measured time only: {:?}",
            fin.elapsed
        );
        assert_eq!(
            ticks.iter().map(|t| (t.seq, t.last)).collect::<Vec<_>>(),
            vec![(1, false), (2, false), (3, true)]
        );
        let ticked: u64 = ticks.iter().map(|t| t.sample.events).sum();
        assert_eq!(ticked, fin.sample.events);
        assert_eq!(
            fin.threads.iter().map(|t| t.0).sum::<u64>(),
            fin.sample.events
        );
        let busy: u64 = fin.threads.iter().map(|t| t.1).sum();
        assert!(busy <= 2 * fin.elapsed.as_nanos() as u64, "{busy}");

        // Event-limited: the warm-up's events do not use up the limit.
        let mut c = config(3, None, Some(200));
        c.warmup = Duration::from_millis(100);
        let run = PreparedRun::new(Arc::new(Cpu { max_prime: 1_000 }), c).unwrap();
        let (tx, mut rx) = mpsc::channel(64);
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let fin = run.go(tx).await;
        drain.await.unwrap();
        assert_eq!(fin.sample.events, 200);
        assert_eq!(fin.sample.hist.len(), 200);
        assert_eq!(fin.threads.iter().map(|t| t.0).sum::<u64>(), 200);
    }

    #[tokio::test]
    async fn time_limit_ends_the_run_and_ticks_cover_it() {
        let run = cpu_run(1_000, config(2, Some(350), None));
        let (tx, mut rx) = mpsc::channel(64);
        let collect = tokio::spawn(async move {
            let mut v = Vec::new();
            while let Some(r) = rx.recv().await {
                v.push(r);
            }
            v
        });
        let fin = run.go(tx).await;
        let ticks = collect.await.unwrap();
        assert!(
            fin.elapsed >= Duration::from_millis(350),
            "{:?}",
            fin.elapsed
        );
        assert!(
            fin.elapsed < Duration::from_millis(1_000),
            "{:?}",
            fin.elapsed
        );
        // Three full ticks of 100 ms, then the last 50 ms as a partial interval.
        assert_eq!(
            ticks.iter().map(|t| (t.seq, t.last)).collect::<Vec<_>>(),
            vec![(1, false), (2, false), (3, false), (4, true)]
        );
        // The partial interval is what the last full tick left (shorter when a tick woke
        // late on a busy machine): the intervals' lengths add up to the run's.
        let last = ticks[3].duration;
        assert!(
            last > Duration::ZERO && last < Duration::from_millis(400),
            "{last:?}"
        );
        let covered: Duration = ticks.iter().map(|t| t.duration).sum();
        let gap = covered.as_secs_f64() - fin.elapsed.as_secs_f64();
        assert!(gap.abs() < 0.005, "{covered:?} against {:?}", fin.elapsed);
        // The intervals add up to the totals exactly.
        let ticked: u64 = ticks.iter().map(|t| t.sample.events).sum();
        assert_eq!(ticked, fin.sample.events);
        let samples: u64 = ticks.iter().map(|t| t.sample.hist.len()).sum();
        assert_eq!(samples, fin.sample.hist.len());
    }

    #[tokio::test]
    async fn dropping_an_unstarted_run_releases_its_threads() {
        let run = cpu_run(1_000, config(4, Some(10_000), None));
        let running = run.running.clone();
        drop(run);
        let t0 = Instant::now();
        while running.load(Ordering::Acquire) > 0 {
            assert!(
                t0.elapsed() < Duration::from_secs(1),
                "workers still parked"
            );
            std::thread::yield_now();
        }
    }

    /// A workload whose events panic after a few.
    struct Panicky;

    impl ThreadWorkload for Panicky {
        fn worker(&self, _thread: u32) -> Box<dyn crate::workloads::WorkerLoop + Send> {
            struct W(u32);
            impl crate::workloads::WorkerLoop for W {
                fn event(
                    &mut self,
                    _stop: &AtomicBool,
                    _io: &mut IoCounters,
                ) -> crate::workloads::Step {
                    self.0 += 1;
                    assert!(self.0 < 5, "event {} went wrong", self.0);
                    crate::workloads::Step::Done
                }
            }
            Box::new(W(0))
        }
    }

    #[tokio::test]
    async fn a_panicking_worker_ends_the_run_with_its_message() {
        let run = PreparedRun::new(Arc::new(Panicky), config(2, None, None)).unwrap();
        let (tx, mut rx) = mpsc::channel(64);
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let fin = tokio::time::timeout(Duration::from_secs(5), run.go(tx))
            .await
            .expect("the run ends instead of waiting for a dead worker");
        drain.await.unwrap();
        let why = fin.aborted.expect("aborted");
        assert!(why.contains("event 5 went wrong"), "{why}");
    }

    #[tokio::test]
    async fn closed_receiver_aborts_the_run() {
        let run = cpu_run(1_000, config(1, Some(60_000), None));
        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        let fin = tokio::time::timeout(Duration::from_secs(2), run.go(tx))
            .await
            .unwrap();
        assert_eq!(fin.aborted.as_deref(), Some("coordinator went away"));
    }
}
