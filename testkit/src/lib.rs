//! What the property tests of the agent (random Start messages) and the coordinator
//! (random command lines) share: a small seedable generator, the knobs that change its
//! seed and case count, and the address-space cap that turns an unbounded allocation
//! into a test failure instead of taking the machine down.

/// SplitMix64: small, seedable, good enough to spread cases; the same seed gives the
/// same cases, so the seed in a failure message replays it.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in 0..n (0 for n = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True once in `one_in` draws on average.
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a, T: AsRef<str>>(&mut self, from: &'a [T]) -> &'a str {
        from[self.below(from.len() as u64) as usize].as_ref()
    }

    /// Fewer than `max_len` characters, each any code point, one of `punct`, or one of the
    /// `span` ASCII characters from `first` on.
    pub fn garbage(&mut self, max_len: u64, punct: &[char], first: u8, span: u8) -> String {
        let len = self.below(max_len) as usize;
        (0..len)
            .map(|_| match self.below(4) {
                0 => char::from_u32(self.below(0x11_0000) as u32).unwrap_or('\u{fffd}'),
                1 => punct[self.below(punct.len() as u64) as usize],
                _ => (first + self.below(u64::from(span)) as u8) as char,
            })
            .collect()
    }
}

/// The variable `name` as a number, or `default` when it is unset or not a number.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Caps this process's address space at what it uses now plus `extra` bytes.
pub fn cap_address_space(extra: u64) {
    let pages: u64 = std::fs::read_to_string("/proc/self/statm")
        .expect("/proc/self/statm")
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .expect("statm's first field is the size in pages");
    // SAFETY: sysconf takes no pointer.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let limit = libc::rlimit {
        rlim_cur: pages * page + extra,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct we own.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_values() {
        let values = |seed| {
            let mut r = SplitMix64(seed);
            (0..100).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(values(42), values(42));
        assert_ne!(values(42), values(43));
    }

    #[test]
    fn draws_stay_in_range() {
        let mut r = SplitMix64(1);
        for n in [0, 1, 2, 7, 1000] {
            for _ in 0..1000 {
                assert!(r.below(n) < n.max(1));
            }
        }
        for _ in 0..1000 {
            let g = r.garbage(5, &['-'], b'a', 26);
            assert!(g.chars().count() < 5, "{g:?}");
            assert!(["x", "y"].contains(&r.pick(&["x", "y"])));
        }
        assert!(r.chance(1), "once in one draw is every draw");
    }
}
