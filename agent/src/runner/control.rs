//! A run's shared state: [`Control`] (stop, limits, clock, pace) that every worker checks
//! between events, [`OpenProgress`] of an opening, and the start [`Gate`] the workers wait at.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::rate::{QueueState, Schedule};
use crate::sql::Sockets;

use super::RunConfig;

/// A run's clock, set at Go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) go: Instant,
    /// End of the warm-up: events claimed before it are not counted.
    pub(super) measure_from: Instant,
    /// When the run's time is up (None: only the event limit ends it).
    pub(super) deadline: Option<Instant>,
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
    pub(super) events_left: Option<AtomicU64>,
    /// Why the run was stopped early, if it was.
    pub(super) abort_reason: Mutex<Option<String>>,
    /// Set at Go: when the run started and when its time is up. Workers check the deadline
    /// themselves after each event (as sysbench does) rather than wait for the ticker to be
    /// scheduled on a busy machine.
    pub(super) clock: std::sync::OnceLock<Clock>,
    /// Latest moment, in nanoseconds after Go, at which a worker stopped.
    pub(super) last_finish_ns: AtomicU64,
    /// Raised with an abort (not when time is up): the hard deadline need not fire again.
    pub(super) cancelled: AtomicBool,
    /// Threads of the workload's own given up as stuck (a script's `done()` that never
    /// returns), beside workers the run leaves behind.
    pub(super) left_behind: AtomicU32,
    /// Sockets of the OLTP workers' connections, shut down by an abort so that a
    /// blocking read (a statement waiting on a lock) returns at once.
    pub(crate) sockets: Arc<Sockets>,
    /// Open loop: when each event is due. None in a closed loop.
    pub(super) pace: Option<Schedule>,
    /// See [`RunConfig::events_per_thread`], [`RunConfig::latency_limit`] (here in
    /// nanoseconds) and [`RunConfig::skip_late`].
    pub(super) events_per_thread: Option<u64>,
    pub(super) latency_limit_ns: Option<u64>,
    pub(super) skip_late: bool,
}

impl Control {
    pub(super) fn new(config: &RunConfig) -> Self {
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
    pub(super) fn claim_event_at(&self, now: Instant) -> Claim {
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
    pub(super) fn arrival(&self, now: Instant) -> Option<Instant> {
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
    pub(super) fn queue_at(&self, now: Instant) -> Option<QueueState> {
        let pace = self.pace.as_ref()?;
        let go = self.clock.get()?.go;
        Some(pace.state_at(now.saturating_duration_since(go).as_nanos() as u64))
    }

    /// Notes that a worker stopped now.
    pub(super) fn worker_finished(&self) {
        if let Some(c) = self.clock.get() {
            let ns = c.go.elapsed().as_nanos() as u64;
            self.last_finish_ns.fetch_max(ns, Ordering::AcqRel);
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub(super) fn abort_reason(&self) -> Option<String> {
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
    pub(super) cancelled: AtomicBool,
    /// The sockets of the connections being opened: a cancel shuts them down, so that
    /// workers waiting for a greeting that never comes give up at once.
    pub(super) sockets: Mutex<Option<Arc<Sockets>>>,
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

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum GateState {
    Closed,
    Open,
    Abandoned,
}

/// Start gate the workers wait at; abandoned (workers exit) if the run never starts.
/// Worker threads block on the condvar.
#[derive(Debug)]
pub(super) struct Gate {
    pub(super) state: Mutex<GateState>,
    pub(super) cond: Condvar,
}

impl Gate {
    pub(super) fn new() -> Self {
        Gate {
            state: Mutex::new(GateState::Closed),
            cond: Condvar::new(),
        }
    }

    pub(super) fn set(&self, to: GateState) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if *s == GateState::Closed {
            *s = to;
        }
        self.cond.notify_all();
    }

    pub(super) fn wait(&self) -> bool {
        // A cooperative worker waits in its loop, which blocks here once for all of them.
        if crate::coop::in_worker() {
            return crate::coop::wait(crate::coop::Wait::Barrier);
        }
        self.block()
    }

    pub(super) fn block(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while *s == GateState::Closed {
            s = self.cond.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        *s == GateState::Open
    }
}
