//! The mutex workload: each thread runs exactly one event of `locks` rounds; a round spins
//! an empty loop of `loops` iterations, then locks a mutex picked at random among `num`,
//! bumps a counter shared by all threads and unlocks, as sysbench's mutex test does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{Step, ThreadWorkload, WorkerLoop};
use crate::rand::Rng;
use fleetbench_model::counters::IoCounters;
use fleetbench_model::spec::MutexSpec;

/// A mutex on a cache line of its own (sysbench pads its mutexes too), so rounds on
/// different mutexes do not contend.
#[repr(align(64))]
struct Padded(Mutex<()>);

struct Shared {
    cfg: MutexSpec,
    seed: u64,
    mutexes: Vec<Padded>,
    /// Bumped under whichever mutex a round holds: contended across threads on purpose.
    global: AtomicU64,
}

pub struct MutexTest(Arc<Shared>);

impl MutexTest {
    /// Bytes `num` mutexes take, to check against the host before `new`.
    pub fn bytes_for(num: u32) -> u64 {
        u64::from(num.max(1)) * std::mem::size_of::<Padded>() as u64
    }

    /// `num` must be at least 1 ([`MutexSpec`]'s validation).
    pub fn new(cfg: MutexSpec, seed: u64) -> MutexTest {
        MutexTest(Arc::new(Shared {
            cfg,
            seed,
            mutexes: (0..cfg.num.max(1))
                .map(|_| Padded(Mutex::new(())))
                .collect(),
            global: AtomicU64::new(0),
        }))
    }
}

/// A mutex run, its mutexes within what the host has.
pub fn plan(spec: MutexSpec, seed: u64) -> Result<Box<dyn super::Workload>, super::PlanError> {
    fleetbench_model::limits::check_memory(
        MutexTest::bytes_for(spec.num),
        &format!("{} mutexes (--mutex-num)", spec.num),
    )
    .map_err(super::PlanError::Exhausted)?;
    Ok(super::Threads::boxed(MutexTest::new(spec, seed)))
}

impl ThreadWorkload for MutexTest {
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop + Send> {
        Box::new(MutexWorker {
            shared: self.0.clone(),
            rng: Rng::new(self.0.seed.wrapping_add(u64::from(thread))),
            done: false,
        })
    }
}

struct MutexWorker {
    shared: Arc<Shared>,
    rng: Rng,
    /// Each thread runs one event only.
    done: bool,
}

impl WorkerLoop for MutexWorker {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        if self.done {
            return Step::Stopped;
        }
        self.done = true;
        let s = &*self.shared;
        let last = s.mutexes.len() as u64 - 1;
        for round in 0..s.cfg.locks {
            if round & 1023 == 1023 && stop.load(Ordering::Relaxed) {
                return Step::Stopped;
            }
            let m = &s.mutexes[self.rng.uniform(0, last) as usize];
            spin(s.cfg.loops);
            let g = m.0.lock().unwrap_or_else(|p| p.into_inner());
            // A plain read-modify-write, not an atomic add: the mutexes differ, so this
            // races like sysbench's counter does; only the cache traffic matters.
            let v = s.global.load(Ordering::Relaxed);
            s.global.store(v + 1, Ordering::Relaxed);
            drop(g);
        }
        Step::Done
    }
}

/// An empty loop of `n` iterations that the compiler may not remove or fold.
#[inline(never)]
fn spin(n: u32) {
    for _ in 0..n {
        // An empty asm statement is opaque to the optimiser: one loop iteration each.
        // SAFETY: it has no instructions.
        unsafe { std::arch::asm!("", options(nomem, nostack, preserves_flags)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_per_thread_with_every_round() {
        let m = MutexTest::new(
            MutexSpec {
                num: 4,
                locks: 1000,
                loops: 10,
            },
            1,
        );
        let stop = AtomicBool::new(false);
        let mut handles = Vec::new();
        for t in 0..3 {
            let mut w = m.worker(t);
            handles.push(std::thread::spawn(move || {
                let stop = AtomicBool::new(false);
                let first = w.event(&stop, &mut IoCounters::default());
                let second = w.event(&stop, &mut IoCounters::default());
                (first, second)
            }));
        }
        for h in handles {
            assert_eq!(h.join().unwrap(), (Step::Done, Step::Stopped));
        }
        assert!(!stop.load(Ordering::Relaxed));
        // Rounds on different mutexes may race on the counter, so at most 3000.
        let g = m.0.global.load(Ordering::Relaxed);
        assert!(g > 0 && g <= 3000, "{g}");
    }
}
