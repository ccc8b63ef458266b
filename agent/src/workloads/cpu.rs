//! The cpu workload: sysbench's prime search by trial division, one search per event.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Step, ThreadWorkload, WorkerLoop};
use fleetbench_model::counters::IoCounters;

/// sysbench's default `--cpu-max-prime`.
pub const DEFAULT_MAX_PRIME: u64 = 10_000;

#[derive(Debug, Clone, Copy)]
pub struct Cpu {
    pub max_prime: u64,
}

/// A cpu run: its threads need no opening.
pub fn plan(spec: &fleetbench_model::spec::CpuSpec) -> Box<dyn super::Workload> {
    super::Threads::boxed(Cpu {
        max_prime: spec.max_prime,
    })
}

impl ThreadWorkload for Cpu {
    fn worker(&self, _thread: u32) -> Box<dyn WorkerLoop + Send> {
        Box::new(*self)
    }
}

impl WorkerLoop for Cpu {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        match std::hint::black_box(count_primes(std::hint::black_box(self.max_prime), stop)) {
            Some(_) => Step::Done,
            None => Step::Stopped,
        }
    }
}

/// Counts the primes in `3..max_prime` by trial division up to the square root, comparing in
/// floating point as sysbench does, so one event costs the same work as one sysbench event.
/// Returns None when `stop` is raised mid-way (checked every 1024 candidates).
pub fn count_primes(max_prime: u64, stop: &AtomicBool) -> Option<u64> {
    let mut primes = 0u64;
    let mut c = 3u64;
    while c < max_prime {
        if c & 1023 == 0 && stop.load(Ordering::Relaxed) {
            return None;
        }
        // Candidates stay far below 2^63: the signed conversion is exact.
        let t = (c as i64 as f64).sqrt();
        // Divisor 2 is tested by a bit test, the rest by full 64-bit divides: the
        // instructions Debian's gcc build of sysbench executes for the same loop.
        let mut l = 2u64;
        if 2.0 <= t && c & 1 == 1 {
            l = 3;
            while (l as i64 as f64) <= t {
                if rem64(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if (l as i64 as f64) > t {
            primes += 1;
        }
        c += 1;
    }
    Some(primes)
}

/// `a % b` as one full 64-bit divide. LLVM would narrow it to a 32-bit divide when both
/// operands fit, which is faster on many CPUs; but events/s is what users compare with
/// sysbench, so one event must cost the same instructions.
#[inline(always)]
fn rem64(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let rem: u64;
        // SAFETY: `div` reads rdx:rax and the divisor register, writes rax and rdx, touches
        // no memory; callers pass b >= 2 so it cannot fault, and rdx = 0 keeps the
        // quotient within 64 bits.
        unsafe {
            std::arch::asm!(
                "div {d}",
                d = in(reg) b,
                inout("rax") a => _,
                inout("rdx") 0u64 => rem,
                options(pure, nomem, nostack),
            );
        }
        rem
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a % b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_odd_primes_below_the_limit() {
        let go = AtomicBool::new(false);
        // Primes below 100 except 2: 24 of them.
        assert_eq!(count_primes(100, &go), Some(24));
        // pi(10000) = 1229, minus the prime 2 that the search starts above.
        assert_eq!(count_primes(10_000, &go), Some(1228));
        assert_eq!(count_primes(3, &go), Some(0));
    }

    #[test]
    fn rem64_is_the_remainder() {
        for (a, b) in [(10u64, 3u64), (1 << 40, 7), (u64::MAX, 2), (17, 17), (5, 9)] {
            assert_eq!(rem64(a, b), a % b, "{a} % {b}");
        }
    }

    #[test]
    fn stop_cuts_an_event_short() {
        let stop = AtomicBool::new(true);
        assert_eq!(count_primes(1_000_000, &stop), None);
    }
}
