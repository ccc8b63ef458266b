//! Runs one benchmark on this agent: worker OS threads held at a start gate until Go, an
//! interval ticker that drains every worker's recorder once per tick, and a final summary.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc};
use tokio::time::sleep_until;

use crate::coop::panic_text;
use crate::rate::{QueueState, Schedule};
use crate::sql::Sockets;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::Reason;
use crate::stats::{IntervalHists, Sample, WorkerSlot, WorkerTail};
use crate::workloads::{EventDb, Step, ThreadWorkload, WorkerLoop};
use fleetbench_model::counters::IoCounters;

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
}

/// A run's clock, set at Go.
#[derive(Debug, Clone, Copy)]
struct Clock {
    go: Instant,
    /// End of the warm-up: events claimed before it are not counted.
    measure_from: Instant,
    /// When the run's time is up (None: only the event limit ends it).
    deadline: Option<Instant>,
}

/// What a worker may do with its next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Run it and count it.
    Measured,
    /// Run it, count nothing of it: the run is warming up.
    Warmup,
    /// The run is over.
    Stop,
}

/// Shared by the workers and whoever may stop them.
#[derive(Debug)]
pub struct Control {
    /// Raised to stop every worker; workers check it between (and inside long) events.
    pub stop: AtomicBool,
    /// Events still to hand out when the run has an event limit.
    events_left: Option<AtomicU64>,
    /// Why the run was stopped early, if it was.
    abort_reason: Mutex<Option<String>>,
    /// Set at Go: when the run started and when its time is up. Workers check the deadline
    /// themselves after each event (as sysbench does) rather than wait for the ticker to be
    /// scheduled on a busy machine.
    clock: std::sync::OnceLock<Clock>,
    /// Latest moment, in nanoseconds after Go, at which a worker stopped.
    last_finish_ns: AtomicU64,
    /// Raised with an abort (not when time is up): the hard deadline need not fire again.
    cancelled: AtomicBool,
    /// Threads of the workload's own given up as stuck (a script's `done()` that never
    /// returns), beside workers the run leaves behind.
    left_behind: AtomicU32,
    /// Sockets of the OLTP workers' connections, shut down by an abort so that a
    /// blocking read (a statement waiting on a lock) returns at once.
    pub(crate) sockets: Arc<Sockets>,
    /// Open loop: when each event is due. None in a closed loop.
    pace: Option<Schedule>,
    /// See [`RunConfig::events_per_thread`], [`RunConfig::latency_limit`] (here in
    /// nanoseconds) and [`RunConfig::skip_late`].
    events_per_thread: Option<u64>,
    latency_limit_ns: Option<u64>,
    skip_late: bool,
}

impl Control {
    fn new(config: &RunConfig) -> Self {
        Control {
            stop: AtomicBool::new(false),
            pace: config
                .rate
                .filter(|r| *r > 0.0)
                .map(|r| Schedule::new(r, config.seed ^ 0x5bd1_e995_a7c3_1f27)),
            events_left: config.event_limit.map(AtomicU64::new),
            abort_reason: Mutex::new(None),
            clock: std::sync::OnceLock::new(),
            last_finish_ns: AtomicU64::new(0),
            cancelled: AtomicBool::new(false),
            left_behind: AtomicU32::new(0),
            sockets: Arc::new(Sockets::default()),
            events_per_thread: config.events_per_thread,
            latency_limit_ns: config.latency_limit.map(|l| l.as_nanos() as u64),
            skip_late: config.skip_late,
        }
    }

    /// Takes the right to run one more event; `now` is the current time, already read.
    /// Warm-up events do not count against the event limit.
    fn claim_event_at(&self, now: Instant) -> Claim {
        if self.stop.load(Ordering::Relaxed) {
            return Claim::Stop;
        }
        if let Some(c) = self.clock.get() {
            if c.deadline.is_some_and(|d| now >= d) {
                self.finish();
                return Claim::Stop;
            }
            if now < c.measure_from {
                return Claim::Warmup;
            }
        }
        match &self.events_left {
            None => Claim::Measured,
            Some(left) => {
                match left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                {
                    Ok(_) => Claim::Measured,
                    Err(_) => Claim::Stop,
                }
            }
        }
    }

    /// Stops the run because its time is up.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Stops the run early; the first reason given is kept for the final report.
    pub fn abort(&self, reason: impl Into<String>) {
        let mut r = self.abort_reason.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_none() {
            *r = Some(reason.into());
        }
        self.stop.store(true, Ordering::Relaxed);
        self.cancelled.store(true, Ordering::Relaxed);
        self.sockets.cancel();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Notes `n` threads of the workload's own given up as stuck (see [`FinalReport::stuck`]).
    pub(crate) fn left_behind(&self, n: u32) {
        self.left_behind.fetch_add(n, Ordering::AcqRel);
    }

    /// Open loop: waits for the next event's arrival and returns it, or None when the run
    /// ended meanwhile. Closed loop: `now`, at once.
    fn arrival(&self, now: Instant) -> Option<Instant> {
        let Some(pace) = &self.pace else {
            return Some(now);
        };
        let Clock { go, deadline, .. } = *self.clock.get()?;
        let at = pace.next(go, deadline, &self.stop);
        if at.is_none() && deadline.is_some_and(|d| Instant::now() >= d) {
            self.finish();
        }
        at
    }

    /// The queue at `now` (open loop only).
    fn queue_at(&self, now: Instant) -> Option<QueueState> {
        let pace = self.pace.as_ref()?;
        let go = self.clock.get()?.go;
        Some(pace.state_at(now.saturating_duration_since(go).as_nanos() as u64))
    }

    /// Notes that a worker stopped now.
    fn worker_finished(&self) {
        if let Some(c) = self.clock.get() {
            let ns = c.go.elapsed().as_nanos() as u64;
            self.last_finish_ns.fetch_max(ns, Ordering::AcqRel);
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn abort_reason(&self) -> Option<String> {
        self.abort_reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// How far the opening of a run's connections has got, read by whoever reports it, and
/// how to call it off (the coordinator went away).
#[derive(Debug, Default)]
pub struct OpenProgress {
    /// Connections open (with their statements prepared).
    pub(crate) done: AtomicU64,
    cancelled: AtomicBool,
    /// The sockets of the connections being opened: a cancel shuts them down, so that
    /// workers waiting for a greeting that never comes give up at once.
    sockets: Mutex<Option<Arc<Sockets>>>,
}

impl OpenProgress {
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Workers not yet connected give up instead of connecting, and those connecting
    /// have their sockets shut down.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
        let sockets = self
            .sockets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(s) = sockets {
            s.cancel();
        }
    }

    /// Hands over the sockets a cancel shuts down (cancelled at once if it came first).
    pub(crate) fn attach(&self, sockets: Arc<Sockets>) {
        *self.sockets.lock().unwrap_or_else(|p| p.into_inner()) = Some(sockets.clone());
        if self.is_cancelled() {
            sockets.cancel();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum GateState {
    Closed,
    Open,
    Abandoned,
}

/// Start gate the workers wait at; abandoned (workers exit) if the run never starts.
/// Worker threads block on the condvar.
#[derive(Debug)]
struct Gate {
    state: Mutex<GateState>,
    cond: Condvar,
}

impl Gate {
    fn new() -> Self {
        Gate {
            state: Mutex::new(GateState::Closed),
            cond: Condvar::new(),
        }
    }

    fn set(&self, to: GateState) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if *s == GateState::Closed {
            *s = to;
        }
        self.cond.notify_all();
    }

    fn wait(&self) -> bool {
        // A cooperative worker waits in its loop, which blocks here once for all of them.
        if crate::coop::in_worker() {
            return crate::coop::wait(crate::coop::Wait::Barrier);
        }
        self.block()
    }

    fn block(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while *s == GateState::Closed {
            s = self.cond.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        *s == GateState::Open
    }
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
    /// Per-kind/per-target figures the OLTP worker threads hand back as they end.
    pub(crate) oltp_tail: Option<Arc<Mutex<WorkerTail>>>,
    /// The one database target all of this run's load goes to, if there is one: its
    /// per-interval figures are the interval's (workers count per target only when their
    /// load goes to several).
    pub(crate) single_target: Option<usize>,
    /// pgbench's -r: where the clients leave their per-command figures as they end,
    /// for the final report.
    pub(crate) commands: Option<Arc<Mutex<Vec<Vec<crate::stats::CommandTally>>>>>,
    /// OLTP: connects tried again while opening, by target and reason (for Ready).
    pub(crate) connect_retries: Vec<(usize, Reason, u64)>,
    /// A script's output (print), sent to the coordinator as it gathers.
    pub(crate) output: Option<Arc<crate::workloads::script::worker::Output>>,
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
            oltp_tail: None,
            single_target: None,
            commands: None,
            connect_retries: Vec::new(),
            output: None,
        }
    }

    /// Marks a thread workload's run as going to one database target, connected as
    /// `conn` says: the run's counters become that target's, and Ready says how it was
    /// reached (TPC-C).
    pub fn set_target(&mut self, conn: crate::sql::ConnInfo) {
        let mut tail = WorkerTail::new(1);
        tail.kinds.clear();
        tail.targets[0].conn = Some(conn);
        self.oltp_tail = Some(Arc::new(Mutex::new(tail)));
        self.single_target = Some(0);
    }

    /// OLTP: connects tried again while the run opened, by target and reason.
    pub fn connect_retries(&self) -> &[(usize, Reason, u64)] {
        &self.connect_retries
    }

    /// Spawns worker thread `t` (named `name`, with `stack_size` bytes of stack if given),
    /// the one way every thread workload's threads start; its body is [`Self::worker_task`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn spawn_worker<W, Open, End>(
        &mut self,
        t: u32,
        name: String,
        stack_size: Option<usize>,
        open: Open,
        end: End,
        opened: Option<mpsc::UnboundedSender<Result<(), LeanOpenError>>>,
        last: Option<Arc<dyn ThreadWorkload>>,
    ) -> std::io::Result<()>
    where
        W: WorkerLoop,
        Open: FnOnce() -> Result<W, LeanOpenError> + Send + 'static,
        End: FnOnce(W, &Control) + Send + 'static,
    {
        let body = self.worker_task(t, open, end, opened, last);
        let mut builder = std::thread::Builder::new().name(name);
        if let Some(bytes) = stack_size {
            builder = builder.stack_size(bytes);
        }
        self.handles.push(builder.spawn(body)?);
        Ok(())
    }

    /// Worker `t`'s whole life, on an OS thread of its own or as a cooperative worker
    /// (`crate::coop`). It opens its worker itself (`open`: an OLTP worker's connections are
    /// made where they are used) and says how that went on `opened`; then it waits at the
    /// start gate, runs [`event_loop`] after Go and hands its worker to `end` (closing
    /// connections). The last worker out runs `last`'s end step (fileio's fsync) before the
    /// run is over.
    pub(crate) fn worker_task<W, Open, End>(
        &mut self,
        t: u32,
        open: Open,
        end: End,
        opened: Option<mpsc::UnboundedSender<Result<(), LeanOpenError>>>,
        last: Option<Arc<dyn ThreadWorkload>>,
    ) -> impl FnOnce() + Send + 'static
    where
        W: WorkerLoop,
        Open: FnOnce() -> Result<W, LeanOpenError> + Send + 'static,
        End: FnOnce(W, &Control) + Send + 'static,
    {
        let slot = Arc::new(WorkerSlot::new(self.intervals.clone()));
        self.slots.push(slot.clone());
        let (control, gate) = (self.control.clone(), self.gate.clone());
        let (running, all_done) = (self.running.clone(), self.all_done.clone());
        move || {
            let made =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(open)).unwrap_or_else(|p| {
                    let msg = panic_text(&*p);
                    tracing::error!("worker {t} panicked while opening: {msg}");
                    Err(OpenError::Connect {
                        target: "(worker)".into(),
                        message: format!("worker thread {t} failed: {msg}"),
                    }
                    .into())
                });
            let mut ran = false;
            match made {
                Ok(mut w) => {
                    if let Some(tx) = opened {
                        let _ = tx.send(Ok(()));
                    }
                    guarded(&control, t, || {
                        ran = gate.wait();
                        if ran {
                            event_loop(&mut w, &control, &slot);
                            control.worker_finished();
                        }
                        end(w, &control);
                    });
                }
                Err(e) => {
                    if let Some(tx) = opened {
                        let _ = tx.send(Err(e));
                    }
                }
            }
            if running.fetch_sub(1, Ordering::AcqRel) == 1 {
                if let (true, Some(workload)) = (ran, last) {
                    guarded(&control, t, || {
                        if let Err(msg) = workload.finish() {
                            control.abort(msg);
                        }
                    });
                }
                all_done.notify_one();
            }
        }
    }

    /// Runs `tasks` as cooperative workers on `loops` threads (worker t on thread t % loops),
    /// each worker on a stack of `stack_size` bytes. A thread that cannot start accounts
    /// for its workers, as if they had ended; one whose loop fails reports a failed
    /// opening on `opened` for each worker it leaves unfinished (the run may still be
    /// opening) and aborts the run.
    pub(crate) fn spawn_loops(
        &mut self,
        tasks: Vec<crate::coop::Task>,
        loops: usize,
        stack_size: usize,
        opened: mpsc::UnboundedSender<Result<(), LeanOpenError>>,
    ) -> std::io::Result<()> {
        let mut groups: Vec<Vec<crate::coop::Task>> = (0..loops).map(|_| Vec::new()).collect();
        for (t, task) in tasks.into_iter().enumerate() {
            groups[t % loops].push(task);
        }
        let mut groups = groups.into_iter().enumerate();
        while let Some((i, group)) = groups.next() {
            let gate = self.gate.clone();
            let (control, n) = (self.control.clone(), group.len());
            let (running, all_done) = (self.running.clone(), self.all_done.clone());
            let opened = opened.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("fb-loop-{i}"))
                .spawn(move || {
                    if let Err(e) = crate::coop::run(group, stack_size, || gate.block()) {
                        let message = format!("worker loop {i} failed: {e}");
                        tracing::error!("{message}");
                        for _ in 0..e.unfinished {
                            let _ = opened.send(Err(OpenError::Connect {
                                target: "(none)".into(),
                                message: message.clone(),
                            }
                            .into()));
                        }
                        control.abort(message);
                        // Its unfinished workers will not count themselves out.
                        let left = running.fetch_sub(e.unfinished, Ordering::AcqRel);
                        if e.unfinished > 0 && left == e.unfinished {
                            all_done.notify_one();
                        }
                    }
                });
            match spawned {
                Ok(h) => self.handles.push(h),
                Err(e) => {
                    let missing = n + groups.map(|(_, g)| g.len()).sum::<usize>();
                    self.running.fetch_sub(missing, Ordering::AcqRel);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Sends OLTP workers that never started home (closing their connections politely)
    /// and waits until they are gone.
    pub(crate) async fn release_workers(&mut self) {
        self.gate.set(GateState::Abandoned);
        let handles: Vec<_> = self.handles.drain(..).collect();
        let _ = tokio::task::spawn_blocking(move || {
            for h in handles {
                let _ = h.join();
            }
        })
        .await;
    }

    pub fn threads(&self) -> u32 {
        self.config.threads
    }

    pub fn control(&self) -> Arc<Control> {
        self.control.clone()
    }

    /// How the OLTP workers' connections to each target were made (target index, info).
    pub fn connections(&self) -> Vec<(usize, crate::sql::ConnInfo)> {
        let Some(tail) = &self.oltp_tail else {
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
        let mut tail = match self.oltp_tail.take() {
            Some(t) => std::mem::take(&mut *t.lock().unwrap_or_else(|p| p.into_inner())),
            None => WorkerTail::default(),
        };
        tail.finish();
        if let Some(c) = self.commands.take() {
            tail.commands = std::mem::take(&mut *c.lock().unwrap_or_else(|p| p.into_inner()));
        }
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

/// Runs a worker's part of the run; a panic in it ends the run on this agent with its
/// message (in the final report, so the coordinator and the JSON say it too) instead of
/// leaving the run waiting for a worker that is gone.
fn guarded(control: &Control, thread: u32, f: impl FnOnce()) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        let msg = panic_text(&*p);
        tracing::error!("worker thread {thread} panicked: {msg}");
        control.abort(format!("worker thread {thread} failed: {msg}"));
    }
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

/// A worker's event loop, for every workload: claim an event (or stop), wait for its
/// arrival in an open loop, run it, record it. Latency counts from the arrival in an open
/// loop, beside the service time from the moment the thread took the event. A workload
/// that reads the clock itself ([`WorkerLoop::ended_at`], OLTP's statements) lends the
/// loop its end-of-event instant: in a closed loop that is the next event's start too,
/// one clock read per statement and none extra per event.
fn event_loop<W: WorkerLoop + ?Sized>(w: &mut W, control: &Control, slot: &WorkerSlot) {
    let open = control.pace.is_some();
    if open {
        crate::rate::tighten_timer_slack();
    }
    let mut io = IoCounters::default();
    let mut now = Instant::now();
    let mut warming = false;
    // This thread's events still to run under a per-thread limit (warm-up ones aside).
    let mut left = control.events_per_thread;
    let limit = control.latency_limit_ns;
    let skip_after = limit.filter(|_| open && control.skip_late);
    loop {
        if left == Some(0) {
            break;
        }
        let claim = control.claim_event_at(now);
        if claim == Claim::Stop {
            break;
        }
        if warming != (claim == Claim::Warmup) {
            warming = !warming;
            w.set_warmup(warming);
        }
        if claim == Claim::Measured
            && let Some(n) = left.as_mut()
        {
            *n -= 1;
        }
        let Some(arrival) = control.arrival(now) else {
            break;
        };
        // After a wait the clock has moved on; in a closed loop of a self-timed workload
        // `now` is the start.
        let t0 = match w.ended_at() {
            Some(_) if !open => now,
            _ => Instant::now(),
        };
        // Already later than the limit before it starts: skipped, as pgbench does.
        if let Some(l) = skip_after
            && t0.saturating_duration_since(arrival).as_nanos() as u64 > l
        {
            let kind = w.skip();
            if !warming {
                slot.skip(kind);
            }
            now = t0;
            continue;
        }
        if open {
            slot.set_busy(true);
        }
        let step = loop {
            let step = w.event_at(&control.stop, &mut io, t0);
            if step != Step::Again {
                break step;
            }
            if !warming && let Some(db) = w.db() {
                slot.add_db(db.all);
                if let Some(targets) = db.targets {
                    slot.add_targets(targets);
                }
            }
            w.reset_db();
        };
        now = w.ended_at().unwrap_or_else(Instant::now);
        if open {
            slot.set_busy(false);
        }
        let service = now.duration_since(t0).as_nanos() as u64;
        let extra = w.extra_events();
        if extra > 0 && !warming {
            slot.add_events(extra);
        }
        match step {
            Step::Done => {
                if !warming {
                    record(
                        slot,
                        &io,
                        w.db(),
                        open.then(|| now.duration_since(arrival)),
                        service,
                    );
                }
                if !io.is_zero() {
                    io = IoCounters::default();
                }
                w.reset_db();
                if w.think(&control.stop) {
                    now = Instant::now();
                }
            }
            Step::Txn(end) => {
                if !warming {
                    let (ns, svc) = if open {
                        let from_arrival = now.duration_since(arrival).as_nanos() as u64;
                        (from_arrival, Some(service))
                    } else {
                        (service, None)
                    };
                    slot.record_txn(ns, svc, &end, limit.is_some_and(|l| ns > l));
                }
            }
            Step::Stopped => break,
            Step::Quit(msg) => {
                slot.quit(msg);
                break;
            }
            Step::Fatal(msg) => {
                control.abort(msg);
                break;
            }
            Step::Again => unreachable!("tried again above"),
        }
    }
    // Operations of an event cut short, and completions still in flight, happened too;
    // so did the queries of an event cut short.
    if let Err(msg) = w.finish(&mut io) {
        control.abort(msg);
    }
    if !io.is_zero() {
        slot.add_io(&io);
    }
    if let Some(db) = w.db() {
        slot.add_db(db.all);
        if let Some(targets) = db.targets {
            slot.add_targets(targets);
        }
    }
}

/// Records one finished event: `service` nanoseconds from its start, and in an open loop
/// `from_arrival` as its latency; with the file operations or database work it did.
fn record(
    slot: &WorkerSlot,
    io: &IoCounters,
    db: Option<EventDb<'_>>,
    from_arrival: Option<Duration>,
    service: u64,
) {
    let io_done = (!io.is_zero()).then_some(io);
    match (from_arrival, db) {
        (Some(latency), db) => slot.record_open(
            latency.as_nanos() as u64,
            service,
            db.map(|d| d.all),
            io_done,
        ),
        (None, Some(db)) => slot.record_db(service, db.all),
        (None, None) => match io_done {
            Some(io) => slot.record_io(service, io),
            None => slot.record(service),
        },
    }
    if let Some(targets) = db.and_then(|d| d.targets) {
        slot.add_targets(targets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::cpu::Cpu;

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
