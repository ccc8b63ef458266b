//! Open-loop schedule (`--rate`): this agent's share of the target rate as a Poisson
//! process on its own clock from Go. Workers take arrivals in order, wait for each one's
//! time, and count latency from it, so time an event spent waiting for a free thread is in
//! its latency (no coordinated omission).
//!
//! No arrival is stored. The process is a deterministic sequence (seeded exponential
//! gaps); workers walk one copy of it as they take arrivals, and the ticker walks a second
//! copy up to "now" to count what has arrived. The queue length is the difference, so
//! memory stays constant however far the load falls behind the rate.

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::rand::Rng;

/// One walk over the arrival times: nanoseconds after Go.
#[derive(Debug, Clone)]
struct Arrivals {
    rng: Rng,
    /// Mean gap between arrivals, in nanoseconds.
    gap_ns: f64,
    /// Time of the next arrival of this walk.
    next_ns: f64,
    /// Arrivals this walk has passed.
    passed: u64,
}

impl Arrivals {
    fn new(rate: f64, seed: u64) -> Self {
        let mut a = Arrivals {
            rng: Rng::new(seed),
            gap_ns: 1e9 / rate,
            next_ns: 0.0,
            passed: 0,
        };
        a.next_ns = a.gap();
        a
    }

    /// An exponential gap: the time to the next arrival of a Poisson process.
    fn gap(&mut self) -> f64 {
        // 1 - u lies in (0, 1], so the logarithm is finite.
        -(1.0 - self.rng.unit_f64()).ln() * self.gap_ns
    }

    /// Passes the next arrival, returning its time.
    fn pass(&mut self) -> u64 {
        let t = self.next_ns;
        self.next_ns += self.gap();
        self.passed += 1;
        t as u64
    }
}

/// What the ticker reads at the end of an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueState {
    /// Arrived, not taken by a thread yet.
    pub queue_length: u64,
    /// Threads inside an event (filled in by the runner, which sees the workers).
    pub concurrency: u32,
    /// Arrivals so far (taken or not).
    pub arrivals: u64,
}

/// The arrival schedule of one run on this agent.
#[derive(Debug)]
pub struct Schedule {
    /// The walk workers take arrivals from.
    taken: Mutex<Arrivals>,
    /// The walk the ticker advances to "now" to count arrivals.
    arrived: Mutex<Arrivals>,
}

/// The longest a waiting worker sleeps before it looks at the stop flag again.
const NAP: Duration = Duration::from_millis(50);

impl Schedule {
    /// A schedule of `rate` events per second on average (`rate` > 0 and finite).
    pub fn new(rate: f64, seed: u64) -> Self {
        let walk = Arrivals::new(rate, seed);
        Schedule {
            taken: Mutex::new(walk.clone()),
            arrived: Mutex::new(walk),
        }
    }

    /// Takes the next arrival: its time in nanoseconds after Go.
    pub fn take(&self) -> u64 {
        self.taken.lock().unwrap_or_else(|p| p.into_inner()).pass()
    }

    /// Queue length and arrivals at `now_ns` after Go.
    pub fn state_at(&self, now_ns: u64) -> QueueState {
        let arrivals = {
            let mut a = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
            while a.next_ns as u64 <= now_ns {
                a.pass();
            }
            a.passed
        };
        let taken = self.taken.lock().unwrap_or_else(|p| p.into_inner()).passed;
        QueueState {
            // Idle threads take arrivals ahead of their time: then nothing is queued.
            queue_length: arrivals.saturating_sub(taken),
            concurrency: 0,
            arrivals,
        }
    }

    /// Waits for the next arrival, taken now. Returns its instant, or None when the run
    /// ends first: `stop` raised, or the arrival lies at or past `deadline` (then it
    /// returns at the deadline, so the worker's time covers the run's).
    pub fn next(
        &self,
        start: Instant,
        deadline: Option<Instant>,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Option<Instant> {
        let at = start + Duration::from_nanos(self.take());
        let until = deadline.map_or(at, |d| at.min(d));
        loop {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let now = Instant::now();
            if now >= until {
                break;
            }
            // `now` was just read: wait at once (sleep_until would read the clock again).
            crate::coop::wait(crate::coop::Wait::Until(now + (until - now).min(NAP)));
        }
        match deadline {
            Some(d) if at >= d => None,
            _ => Some(at),
        }
    }
}

/// Lets the calling thread's sleeps end within a microsecond of their time instead of
/// Linux's default 50 µs slack: the wait for an arrival is part of nobody's latency, but a
/// late wake-up is.
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_average_the_rate_with_exponential_gaps() {
        let mut a = Arrivals::new(1_000.0, 7);
        let n = 100_000;
        let mut gaps = Vec::with_capacity(n);
        let mut last = 0u64;
        for _ in 0..n {
            let t = a.pass();
            gaps.push((t - last) as f64 / 1e6);
            last = t;
        }
        // 100,000 arrivals at 1,000/s take 100 s, within a fraction of a percent.
        let secs = last as f64 / 1e9;
        assert!((secs - 100.0).abs() < 1.5, "{secs}");
        // Exponential: mean 1 ms, standard deviation equal to the mean, about 36.8 % of
        // gaps longer than the mean.
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 1.0).abs() < 0.03, "{}", var.sqrt());
        let longer = gaps.iter().filter(|&&g| g > 1.0).count() as f64 / n as f64;
        assert!((longer - (-1f64).exp()).abs() < 0.01, "{longer}");
    }

    #[test]
    fn queue_is_what_arrived_and_was_not_taken() {
        let s = Schedule::new(1_000.0, 3);
        // Nobody takes anything for a second: about 1,000 arrivals wait.
        let q = s.state_at(1_000_000_000);
        assert_eq!(q.queue_length, q.arrivals);
        assert!((900..1_100).contains(&q.arrivals), "{q:?}");
        // Taking them all, and 5 ahead of their time, leaves none queued.
        let mut last = 0;
        for _ in 0..q.arrivals + 5 {
            let t = s.take();
            assert!(t >= last);
            last = t;
        }
        assert!(last > 1_000_000_000);
        let q2 = s.state_at(1_000_000_000);
        assert_eq!((q2.queue_length, q2.arrivals), (0, q.arrivals));
        // The two walks see the same arrival times.
        let later = s.state_at(last);
        assert_eq!(later.arrivals, q.arrivals + 5);
    }

    #[test]
    fn a_wait_ends_at_the_deadline_or_on_stop() {
        let s = Schedule::new(0.5, 1);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let start = Instant::now();
        // The first arrival is seconds away on average; a deadline 30 ms on cuts it short
        // unless the arrival happens to come first.
        let d = start + Duration::from_millis(30);
        let got = s.next(start, Some(d), &stop);
        let now = Instant::now();
        match got {
            Some(at) => assert!(at < d && now >= at),
            None => assert!(now >= d && now < d + Duration::from_millis(500)),
        }
        stop.store(true, Ordering::Relaxed);
        let t0 = Instant::now();
        assert_eq!(s.next(start, None, &stop), None);
        assert!(t0.elapsed() < Duration::from_millis(100));
    }
}
