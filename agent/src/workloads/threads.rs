//! The threads workload (scheduler stress): each event takes one of `locks` mutexes, in
//! turn over all events of the agent, and `yields` times locks it, yields the CPU and
//! unlocks it, as sysbench's threads test does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{Step, ThreadWorkload, WorkerLoop};
use fleetbench_model::counters::IoCounters;
use fleetbench_model::spec::ThreadsSpec;

/// Shared by the workers of one run.
struct Shared {
    yields: u32,
    mutexes: Vec<Mutex<()>>,
    /// Events begun on this agent: picks each event's mutex round-robin.
    next: AtomicU64,
}

pub struct Threads(Arc<Shared>);

impl Threads {
    /// Bytes the mutexes of `locks` take, to check against the host before `new`.
    pub fn bytes_for(locks: u32) -> u64 {
        u64::from(locks.max(1)) * std::mem::size_of::<Mutex<()>>() as u64
    }

    /// `locks` must be at least 1 ([`ThreadsSpec`]'s validation).
    pub fn new(cfg: ThreadsSpec) -> Threads {
        Threads(Arc::new(Shared {
            yields: cfg.yields,
            mutexes: (0..cfg.locks.max(1)).map(|_| Mutex::new(())).collect(),
            next: AtomicU64::new(0),
        }))
    }
}

/// A threads run, its locks within what the host has.
pub fn plan(spec: ThreadsSpec) -> Result<Box<dyn super::Workload>, super::PlanError> {
    fleetbench_model::limits::check_memory(
        Threads::bytes_for(spec.locks),
        &format!("{} thread locks (--thread-locks)", spec.locks),
    )
    .map_err(super::PlanError::Exhausted)?;
    Ok(super::Threads::boxed(Threads::new(spec)))
}

impl ThreadWorkload for Threads {
    fn worker(&self, _thread: u32) -> Box<dyn WorkerLoop + Send> {
        Box::new(ThreadsWorker(self.0.clone()))
    }
}

struct ThreadsWorker(Arc<Shared>);

impl WorkerLoop for ThreadsWorker {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        let s = &*self.0;
        let n = s.next.fetch_add(1, Ordering::Relaxed);
        let m = &s.mutexes[(n % s.mutexes.len() as u64) as usize];
        for i in 0..s.yields {
            if i & 127 == 127 && stop.load(Ordering::Relaxed) {
                return Step::Stopped;
            }
            let g = m.lock().unwrap_or_else(|p| p.into_inner());
            std::thread::yield_now();
            drop(g);
        }
        Step::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_take_the_mutexes_in_turn() {
        let t = Threads::new(ThreadsSpec {
            yields: 3,
            locks: 2,
        });
        let mut w = t.worker(0);
        let stop = AtomicBool::new(false);
        for _ in 0..5 {
            assert_eq!(w.event(&stop, &mut IoCounters::default()), Step::Done);
        }
        assert_eq!(t.0.next.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn stop_cuts_a_long_event_short() {
        let t = Threads::new(ThreadsSpec {
            yields: 1_000_000,
            locks: 1,
        });
        let stop = AtomicBool::new(true);
        assert_eq!(
            t.worker(0).event(&stop, &mut IoCounters::default()),
            Step::Stopped
        );
    }
}
