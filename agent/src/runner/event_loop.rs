//! The one event loop every worker runs, whatever its workload: claim an event, wait for
//! its arrival in an open loop, run it, record it; and the panic guard around a worker.

use std::time::{Duration, Instant};

use crate::coop::panic_text;
use crate::stats::WorkerSlot;
use fleetbench_model::counters::IoCounters;

use super::control::{Claim, Control};
use super::worker::{EventDb, Step, WorkerLoop};

/// Runs a worker's part of the run; a panic in it ends the run on this agent with its
/// message (in the final report, so the coordinator and the JSON say it too) instead of
/// leaving the run waiting for a worker that is gone.
pub(super) fn guarded(control: &Control, thread: u32, f: impl FnOnce()) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        let msg = panic_text(&*p);
        tracing::error!("worker thread {thread} panicked: {msg}");
        control.abort(format!("worker thread {thread} failed: {msg}"));
    }
}

/// A worker's event loop, for every workload: claim an event (or stop), wait for its
/// arrival in an open loop, run it, record it. Latency counts from the arrival in an open
/// loop, beside the service time from the moment the thread took the event. A workload
/// that reads the clock itself ([`WorkerLoop::ended_at`], OLTP's statements) lends the
/// loop its end-of-event instant: in a closed loop that is the next event's start too,
/// one clock read per statement and none extra per event.
pub(super) fn event_loop<W: WorkerLoop + ?Sized>(w: &mut W, control: &Control, slot: &WorkerSlot) {
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
        let step = run_event(w, control, slot, &mut io, t0, warming);
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
    leave(w, control, slot, &mut io);
}

/// Runs one event that starts at `t0`, again as long as the workload asks (an ignored
/// error, a lost connection): the database work of each failed try is recorded at once,
/// in the interval in which it happened, with no event or latency.
#[inline(always)]
fn run_event<W: WorkerLoop + ?Sized>(
    w: &mut W,
    control: &Control,
    slot: &WorkerSlot,
    io: &mut IoCounters,
    t0: Instant,
    warming: bool,
) -> Step {
    loop {
        let step = w.event_at(&control.stop, io, t0);
        if step != Step::Again {
            return step;
        }
        if !warming && let Some(db) = w.db() {
            add_db(slot, db);
        }
        w.reset_db();
    }
}

/// The worker leaves its loop: operations of an event cut short, and completions still in
/// flight, happened too; so did the queries of an event cut short.
fn leave<W: WorkerLoop + ?Sized>(
    w: &mut W,
    control: &Control,
    slot: &WorkerSlot,
    io: &mut IoCounters,
) {
    if let Err(msg) = w.finish(io) {
        control.abort(msg);
    }
    if !io.is_zero() {
        slot.add_io(io);
    }
    if let Some(db) = w.db() {
        add_db(slot, db);
    }
}

/// Adds database work done outside a recorded event to the worker's counters.
#[inline(always)]
fn add_db(slot: &WorkerSlot, db: EventDb<'_>) {
    slot.add_db(db.all);
    if let Some(targets) = db.targets {
        slot.add_targets(targets);
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
