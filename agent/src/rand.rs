//! Random numbers for every workload (the generator) and for OLTP (sysbench 1.0's
//! distributions and column values), compatible in *behaviour* with sysbench 1.0.
//!
//! * [`Rng`]: xoshiro256** seeded through splitmix64. Small, fast, no dependencies; each worker
//!   thread owns one, so there is no shared state on the hot path.
//! * [`Distribution`] / [`Picker`]: sysbench's `--rand-type` choices over an inclusive range
//!   `[a, b]` (uniform, gaussian, special, pareto, zipfian). A [`Picker`] precomputes everything
//!   that depends only on the distribution and the range, so [`Picker::pick`] neither allocates
//!   nor recomputes constants.
//! * [`fill_c`] / [`fill_pad`]: the `c` and `pad` column values (groups of 11 random digits
//!   joined by `-`), written into a reused buffer.
//!
//! Everything here is deterministic for a given seed, which the tests rely on.

use fleetbench_model::rand::Distribution;

/// Length of a `c` value: ten 11-digit groups plus nine dashes.
pub const C_LEN: usize = 10 * 11 + 9;
/// Length of a `pad` value: five 11-digit groups plus four dashes.
pub const PAD_LEN: usize = 5 * 11 + 4;

/// One step of splitmix64: used to expand a single `u64` seed into xoshiro's 256-bit state.
/// Its output is never all-zero across four consecutive calls, which xoshiro requires.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** pseudo-random generator (Blackman & Vigna). Not cryptographic; fast and of
/// ample statistical quality for load generation.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Creates a generator from a 64-bit seed. Any seed (including 0) is fine: splitmix64
    /// spreads it over the whole state. Give each worker thread its own seed.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        Rng {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    /// Next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform integer in the inclusive range `[a, b]`; requires `a <= b`.
    ///
    /// Lemire's multiply-shift with rejection, so it is exactly unbiased and usually costs one
    /// multiplication (the rare rejection path needs one division).
    #[inline]
    pub fn uniform(&mut self, a: u64, b: u64) -> u64 {
        debug_assert!(a <= b, "uniform({a}, {b}): a > b");
        let span = b.wrapping_sub(a);
        if span == u64::MAX {
            return self.next_u64();
        }
        let n = span + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // Values of the low word below 2^64 mod n would make some results more likely.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        a.wrapping_add((m >> 64) as u64)
    }

    /// Uniform `f64` in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Per-(distribution, range) constants, so that picking is cheap.
#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    Gaussian {
        iter: u32,
    },
    Special {
        iter: u32,
        /// Probability of drawing from the centre window.
        res_frac: f64,
        win_lo: u64,
        win_hi: u64,
    },
    Pareto {
        n: f64,
        power: f64,
    },
    Zipfian {
        n: f64,
        zetan: f64,
        /// `u * zetan` below this (and >= 1) selects rank 1: zeta(2) = 1 + 0.5^exp.
        zeta2: f64,
        tail: ZipfTail,
    },
}

/// How ranks >= 2 are mapped from `u` in Gray et al.'s method.
#[derive(Clone, Copy, Debug)]
enum ZipfTail {
    /// `n * (1 - eta * (1 - u))^alpha`, computed as `exp(alpha * ln_1p(-eta * (1 - u)))` so it
    /// stays accurate for exponents near 1 (alpha huge, eta tiny).
    Power { alpha: f64, eta: f64 },
    /// The exponent == 1 limit of the above: `n * exp(-c * (1 - u))`.
    Exp { c: f64 },
}

/// Exact terms summed before switching to the Euler-Maclaurin tail in [`zeta`].
const ZETA_EXACT_TERMS: u64 = 10_000;

/// Generalised harmonic number `sum_{i=1..n} i^-theta` (n given as `span + 1`).
///
/// The first [`ZETA_EXACT_TERMS`] terms are summed directly, the rest with Euler-Maclaurin
/// (integral plus end corrections up to the third derivative); at that cut-off the neglected
/// terms are far below f64 precision, so cost is O(1) in `n` instead of O(n) and even
/// `[0, u64::MAX]` is fine.
fn zeta(span: u64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    let exact_terms = span.saturating_add(1).min(ZETA_EXACT_TERMS);
    let mut sum: f64 = (1..=exact_terms).map(|i| f(i as f64)).sum();
    if span >= ZETA_EXACT_TERMS {
        let m = ZETA_EXACT_TERMS as f64;
        let n = span as f64 + 1.0;
        // Integral of x^-theta over [m, n], written to avoid cancellation when theta ~ 1.
        let e = 1.0 - theta;
        let log_ratio = (n / m).ln();
        let integral = if e == 0.0 {
            log_ratio
        } else {
            m.powf(e) * (e * log_ratio).exp_m1() / e
        };
        let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
        let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
        sum += integral + (f(n) - f(m)) / 2.0 + (d1(n) - d1(m)) / 12.0 - (d3(n) - d3(m)) / 720.0;
    }
    sum
}

/// Draws values of one [`Distribution`] over a fixed inclusive range `[a, b]`.
///
/// Construction does all the per-range work (zipfian's zeta constants: up to 10k `powf` calls
/// plus an O(1) tail, so it is cheap even for huge ranges); build one per (distribution, range),
/// e.g. per worker and table size, and reuse it.
#[derive(Clone, Debug)]
pub struct Picker {
    dist: Distribution,
    a: u64,
    b: u64,
    kind: Kind,
}

impl Picker {
    /// Prepares `dist` over `[a, b]`. Panics if `a > b`.
    ///
    /// Parameters should come from [`Distribution::parse`]; if built by hand, `iter == 0` is
    /// treated as 1 and a negative or NaN zipfian exponent as 0, and every other odd value
    /// still yields results within `[a, b]`.
    pub fn new(dist: &Distribution, a: u64, b: u64) -> Picker {
        assert!(a <= b, "Picker::new: empty range [{a}, {b}]");
        let span = b - a;
        // Range size as f64; exact enough (2^64 when span is u64::MAX).
        let n = span as f64 + 1.0;
        let kind = match *dist {
            Distribution::Uniform => Kind::Uniform,
            Distribution::Gaussian { iter } => Kind::Gaussian { iter: iter.max(1) },
            Distribution::Special { iter, pct, res } => {
                // Window of pct% of the range, at least one value, centred in [a, b].
                let width = ((n * pct / 100.0) as u64).max(1);
                let width_m1 = (width - 1).min(span);
                let win_lo = a + (span - width_m1) / 2;
                Kind::Special {
                    iter: iter.max(1),
                    res_frac: res / 100.0,
                    win_lo,
                    win_hi: win_lo + width_m1,
                }
            }
            Distribution::Pareto { h } => Kind::Pareto {
                n,
                power: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Zipfian { exp } => {
                let theta = if exp >= 0.0 { exp } else { 0.0 };
                let zetan = zeta(span, theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let tail = if span < 2 {
                    // n <= 2: ranks 0 and 1 cover every draw; the tail is never used.
                    ZipfTail::Power {
                        alpha: 1.0,
                        eta: 0.0,
                    }
                } else {
                    let e = 1.0 - theta;
                    let ln_half_n = (n / 2.0).ln();
                    let denom = 1.0 - zeta2 / zetan;
                    if e == 0.0 {
                        ZipfTail::Exp {
                            c: ln_half_n / denom,
                        }
                    } else {
                        // eta = (1 - (2/n)^(1-theta)) / (1 - zeta2/zetan), cancellation-free.
                        ZipfTail::Power {
                            alpha: 1.0 / e,
                            eta: -(-e * ln_half_n).exp_m1() / denom,
                        }
                    }
                };
                Kind::Zipfian {
                    n,
                    zetan,
                    zeta2,
                    tail,
                }
            }
        };
        Picker {
            dist: dist.clone(),
            a,
            b,
            kind,
        }
    }

    /// The distribution this picker draws from.
    pub fn dist(&self) -> &Distribution {
        &self.dist
    }

    /// Lower bound of the range (inclusive).
    pub fn a(&self) -> u64 {
        self.a
    }

    /// Upper bound of the range (inclusive).
    pub fn b(&self) -> u64 {
        self.b
    }

    /// One value in `[a, b]`.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        let (a, b) = (self.a, self.b);
        match self.kind {
            Kind::Uniform => rng.uniform(a, b),
            Kind::Gaussian { iter } => gaussian(rng, a, b, iter),
            Kind::Special {
                iter,
                res_frac,
                win_lo,
                win_hi,
            } => {
                if rng.unit_f64() < res_frac {
                    rng.uniform(win_lo, win_hi)
                } else {
                    gaussian(rng, a, b, iter)
                }
            }
            Kind::Pareto { n, power } => {
                // `as` saturates (and maps NaN to 0), so the clamp keeps us in range.
                let off = (n * rng.unit_f64().powf(power)) as u64;
                a + off.min(b - a)
            }
            Kind::Zipfian {
                n,
                zetan,
                zeta2,
                tail,
            } => {
                // Gray et al., "Quickly generating billion-record synthetic databases" (1994),
                // as used by YCSB: ranks 0 and 1 exactly, the rest by an inverse-CDF fit.
                let u = rng.unit_f64();
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < zeta2 {
                    1
                } else {
                    let x = match tail {
                        ZipfTail::Power { alpha, eta } => {
                            (alpha * (-eta * (1.0 - u)).ln_1p()).exp()
                        }
                        ZipfTail::Exp { c } => (-c * (1.0 - u)).exp(),
                    };
                    (n * x) as u64
                };
                a + rank.min(b - a)
            }
        }
    }
}

/// Floor of the mean of `iter` uniform draws over `[a, b]` (u128 sum: no overflow).
#[inline]
fn gaussian(rng: &mut Rng, a: u64, b: u64, iter: u32) -> u64 {
    let span = b - a;
    let sum: u128 = (0..iter).map(|_| u128::from(rng.uniform(0, span))).sum();
    a + (sum / u128::from(iter)) as u64
}

/// Appends `groups` groups of 11 random decimal digits joined by '-'.
fn fill_groups(rng: &mut Rng, buf: &mut String, groups: usize) {
    buf.clear();
    // No-op when the buffer is already big enough: a reused buffer never reallocates.
    buf.reserve(groups * 12 - 1);
    for g in 0..groups {
        if g > 0 {
            buf.push('-');
        }
        // One draw gives all 11 digits (10^11 < 2^37), uniformly.
        let mut v = rng.uniform(0, 99_999_999_999);
        let mut digits = [b'0'; 11];
        for d in digits.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        for &d in &digits {
            buf.push(char::from(d));
        }
    }
}

/// Replaces `buf` with a fresh `c` value ([`C_LEN`] = 119 chars: ten 11-digit groups).
pub fn fill_c(rng: &mut Rng, buf: &mut String) {
    fill_groups(rng, buf, 10);
}

/// Replaces `buf` with a fresh `pad` value ([`PAD_LEN`] = 59 chars: five 11-digit groups).
pub fn fill_pad(rng: &mut Rng, buf: &mut String) {
    fill_groups(rng, buf, 5);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetbench_model::options::Declared;
    use fleetbench_model::rand::DISTRIBUTION_NAMES;

    const DRAWS: usize = 100_000;

    fn rng_from_state(s: [u64; 4]) -> Rng {
        Rng { s }
    }

    fn draws(dist: &Distribution, a: u64, b: u64, seed: u64, count: usize) -> Vec<u64> {
        let picker = Picker::new(dist, a, b);
        let mut rng = Rng::new(seed);
        (0..count).map(|_| picker.pick(&mut rng)).collect()
    }

    fn mean_var(v: &[u64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var)
    }

    fn counts(v: &[u64], a: u64, n: usize) -> Vec<usize> {
        let mut c = vec![0; n];
        for &x in v {
            c[(x - a) as usize] += 1;
        }
        c
    }

    fn all_dists() -> Vec<Distribution> {
        vec![
            Distribution::Uniform,
            Distribution::Gaussian { iter: 1 },
            Distribution::Gaussian { iter: 12 },
            Distribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            Distribution::Special {
                iter: 3,
                pct: 0.0,
                res: 100.0,
            },
            Distribution::Special {
                iter: 12,
                pct: 100.0,
                res: 50.0,
            },
            Distribution::Pareto { h: 0.2 },
            Distribution::Pareto { h: 0.5 },
            Distribution::Pareto { h: 0.9 },
            Distribution::Zipfian { exp: 0.0 },
            Distribution::Zipfian { exp: 0.8 },
            Distribution::Zipfian { exp: 1.0 },
            Distribution::Zipfian { exp: 1.5 },
        ]
    }

    #[test]
    fn names_and_options_parse_back() {
        for d in all_dists() {
            let written = d.to_options();
            let back = Distribution::resolve("t", written.0.iter().map(|(k, v)| (*k, v.as_str())))
                .unwrap();
            assert_eq!(back, d);
        }
    }

    #[test]
    fn xoshiro_matches_reference_vector() {
        // Reference outputs of xoshiro256** from state {1, 2, 3, 4}.
        let mut rng = rng_from_state([1, 2, 3, 4]);
        let expected = [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600,
        ];
        for e in expected {
            assert_eq!(rng.next_u64(), e);
        }
    }

    #[test]
    fn splitmix_matches_reference_vector() {
        let mut s = 0;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different() {
        let seq = |seed| {
            let mut r = Rng::new(seed);
            (0..1000).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(seq(42), seq(42));
        assert_eq!(seq(0), seq(0));
        assert_ne!(seq(42), seq(43));
        assert_ne!(seq(0), seq(1));
        // Also through a picker and the string fillers.
        let d = Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        };
        assert_eq!(draws(&d, 1, 10_000, 7, 1000), draws(&d, 1, 10_000, 7, 1000));
        assert_ne!(draws(&d, 1, 10_000, 7, 1000), draws(&d, 1, 10_000, 8, 1000));
        let c = |seed| {
            let mut r = Rng::new(seed);
            let mut s = String::new();
            fill_c(&mut r, &mut s);
            s
        };
        assert_eq!(c(5), c(5));
        assert_ne!(c(5), c(6));
    }

    #[test]
    fn uniform_bounds_and_mean() {
        let mut rng = Rng::new(1);
        for &(a, b) in &[
            (0, 0),
            (7, 7),
            (u64::MAX, u64::MAX),
            (0, 1),
            (u64::MAX - 3, u64::MAX),
        ] {
            for _ in 0..1000 {
                let v = rng.uniform(a, b);
                assert!((a..=b).contains(&v));
            }
        }
        // Full range must not panic and should hit both halves.
        let hi = (0..1000)
            .filter(|_| rng.uniform(0, u64::MAX) > u64::MAX / 2)
            .count();
        assert!((400..600).contains(&hi), "{hi}");
        // Small range: every value about equally often.
        let mut c = [0usize; 3];
        for _ in 0..30_000 {
            c[rng.uniform(0, 2) as usize] += 1;
        }
        for x in c {
            assert!((9_500..10_500).contains(&x), "{c:?}");
        }
        let (mean, var) = mean_var(&draws(&Distribution::Uniform, 1, 1000, 3, DRAWS));
        assert!((mean - 500.5).abs() < 5.0, "mean {mean}");
        let expected_var = (1000.0f64 * 1000.0 - 1.0) / 12.0;
        assert!((var / expected_var - 1.0).abs() < 0.03, "var {var}");
    }

    #[test]
    fn unit_f64_in_unit_interval() {
        let mut rng = Rng::new(9);
        let mut sum = 0.0;
        for _ in 0..DRAWS {
            let u = rng.unit_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        let mean = sum / DRAWS as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }

    #[test]
    fn every_distribution_stays_in_range() {
        let ranges = [
            (1, 1),
            (0, 0),
            (u64::MAX, u64::MAX),
            (5, 6),
            (1, 3),
            (1, 10),
            (1, 10_000),
            (1_000_000, 1_000_000_000),
            (u64::MAX - 9, u64::MAX),
            (0, u64::MAX),
        ];
        for dist in all_dists() {
            for (i, &(a, b)) in ranges.iter().enumerate() {
                let picker = Picker::new(&dist, a, b);
                assert_eq!((picker.a(), picker.b()), (a, b));
                assert_eq!(picker.dist(), &dist);
                let mut rng = Rng::new(i as u64);
                for _ in 0..DRAWS {
                    let v = picker.pick(&mut rng);
                    assert!(v >= a && v <= b, "{dist:?} [{a}, {b}] gave {v}");
                }
            }
        }
    }

    #[test]
    fn small_ranges_reach_both_ends() {
        for dist in [
            Distribution::Uniform,
            Distribution::Gaussian { iter: 1 },
            Distribution::Pareto { h: 0.5 },
            Distribution::Zipfian { exp: 0.8 },
        ] {
            let c = counts(&draws(&dist, 5, 6, 11, 10_000), 5, 2);
            assert!(c[0] > 0 && c[1] > 0, "{dist:?} {c:?}");
        }
    }

    #[test]
    fn gaussian_is_centred_and_narrower_than_uniform() {
        let (a, b) = (1, 10_000);
        let (umean, uvar) = mean_var(&draws(&Distribution::Uniform, a, b, 1, DRAWS));
        let (gmean, gvar) = mean_var(&draws(&Distribution::Gaussian { iter: 12 }, a, b, 1, DRAWS));
        assert!((gmean - 5000.5).abs() < 30.0, "gaussian mean {gmean}");
        assert!((umean - 5000.5).abs() < 60.0, "uniform mean {umean}");
        // Mean of 12 uniforms: variance ~ uniform / 12.
        let ratio = gvar / uvar;
        assert!(
            ratio > 1.0 / 14.0 && ratio < 1.0 / 10.0,
            "variance ratio {ratio}"
        );
    }

    #[test]
    fn special_puts_res_percent_in_centre_window() {
        let (a, b) = (1, 10_000);
        // pct=1 of 10000 values: the 100 values 4951..=5050.
        let inside = |v: &[u64]| v.iter().filter(|&&x| (4951..=5050).contains(&x)).count() as f64;
        let d = Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        };
        let frac = inside(&draws(&d, a, b, 2, DRAWS)) / DRAWS as f64;
        // 75% forced in, plus the gaussian's own ~5% share of the other 25%.
        assert!(frac > 0.75 && frac < 0.78, "fraction inside window {frac}");
        // res=0: only the gaussian's own share lands there.
        let d0 = Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 0.0,
        };
        let frac0 = inside(&draws(&d0, a, b, 2, DRAWS)) / DRAWS as f64;
        assert!(frac0 < 0.07, "{frac0}");
        // res=100: everything inside, spread over the whole window.
        let d100 = Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 100.0,
        };
        let v = draws(&d100, a, b, 2, DRAWS);
        assert_eq!(inside(&v) as usize, DRAWS);
        let c = counts(&v, 4951, 100);
        assert!(c.iter().all(|&x| x > 700), "window not uniform");
        // pct=0 still means a one-value window in the middle.
        let d1 = Distribution::Special {
            iter: 12,
            pct: 0.0,
            res: 100.0,
        };
        assert!(draws(&d1, 1, 10, 2, 1000).iter().all(|&x| x == 5));
    }

    #[test]
    fn pareto_concentrates_near_a() {
        let (a, b) = (1, 10_000);
        let v = draws(&Distribution::Pareto { h: 0.2 }, a, b, 4, DRAWS);
        let low = v.iter().filter(|&&x| x <= 2_000).count() as f64 / DRAWS as f64;
        // P(u^7.21 < 0.2) = 0.2^(1/7.21) ~ 0.80.
        assert!(low > 0.75 && low < 0.85, "lowest 20% got {low}");
        // h = 0.5 is uniform.
        let v = draws(&Distribution::Pareto { h: 0.5 }, a, b, 4, DRAWS);
        let (mean, _) = mean_var(&v);
        assert!((mean - 5000.5).abs() < 60.0, "{mean}");
    }

    #[test]
    fn zeta_tail_matches_exact_sum() {
        let span = 199_999u64;
        for theta in [0.0, 0.5, 0.8, 0.99, 1.0, 1.01, 1.5, 2.0] {
            let exact: f64 = (1..=span + 1).map(|i| (i as f64).powf(-theta)).sum();
            let approx = zeta(span, theta);
            assert!(
                ((approx - exact) / exact).abs() < 1e-10,
                "theta {theta}: {approx} vs {exact}"
            );
        }
        // Small n is summed exactly.
        assert_eq!(zeta(0, 0.8), 1.0);
        assert_eq!(zeta(1, 1.0), 1.5);
    }

    #[test]
    fn zipfian_head_ratio_and_mode() {
        let (a, n) = (1u64, 1000usize);
        for exp in [0.5, 0.8, 1.0, 1.5] {
            let d = Distribution::Zipfian { exp };
            let v = draws(&d, a, a + n as u64 - 1, 5, 200_000);
            let c = counts(&v, a, n);
            let max = *c.iter().max().unwrap();
            assert_eq!(c[0], max, "exp {exp}: item a is not the most frequent");
            let ratio = c[0] as f64 / c[1] as f64;
            let want = 2f64.powf(exp);
            assert!(
                (ratio / want - 1.0).abs() < 0.1,
                "exp {exp}: ratio {ratio} vs {want}"
            );
            // Head mass against the exact zipf pmf (Gray's tail is an approximation).
            let zn: f64 = (1..=n).map(|i| (i as f64).powf(-exp)).sum();
            let p_head: f64 = (1..=100).map(|i| (i as f64).powf(-exp)).sum::<f64>() / zn;
            let head = c[..100].iter().sum::<usize>() as f64 / v.len() as f64;
            assert!(
                (head - p_head).abs() < 0.03,
                "exp {exp}: head {head} vs {p_head}"
            );
        }
        // Exponent 0 is uniform.
        let v = draws(&Distribution::Zipfian { exp: 0.0 }, 1, 1000, 5, DRAWS);
        let (mean, _) = mean_var(&v);
        assert!((mean - 500.5).abs() < 6.0, "{mean}");
    }

    #[test]
    fn zipfian_exponent_one_is_continuous() {
        let mean_at = |exp| mean_var(&draws(&Distribution::Zipfian { exp }, 0, 9_999, 6, DRAWS)).0;
        let (below, at, above) = (mean_at(0.999_999), mean_at(1.0), mean_at(1.000_001));
        assert!((at - below).abs() / at < 0.01, "{below} vs {at}");
        assert!((at - above).abs() / at < 0.01, "{above} vs {at}");
    }

    fn check_groups(s: &str, groups: usize) {
        assert_eq!(s.len(), groups * 12 - 1);
        for (i, ch) in s.bytes().enumerate() {
            if i % 12 == 11 {
                assert_eq!(ch, b'-', "position {i} of {s}");
            } else {
                assert!(ch.is_ascii_digit(), "position {i} of {s}");
            }
        }
    }

    #[test]
    fn fill_c_and_pad_shape_and_reuse() {
        assert_eq!((C_LEN, PAD_LEN), (119, 59));
        let mut rng = Rng::new(10);
        let mut c = String::from("old contents that must go away");
        fill_c(&mut rng, &mut c);
        check_groups(&c, 10);
        let mut pad = String::from("x");
        fill_pad(&mut rng, &mut pad);
        check_groups(&pad, 5);

        // A buffer with enough capacity is reused, never reallocated.
        let (ptr, cap) = (c.as_ptr(), c.capacity());
        let first = c.clone();
        let mut digit_counts = [0usize; 10];
        for _ in 0..1000 {
            fill_c(&mut rng, &mut c);
            check_groups(&c, 10);
            assert_eq!((c.as_ptr(), c.capacity()), (ptr, cap));
            fill_pad(&mut rng, &mut c);
            check_groups(&c, 5);
            for d in c.bytes().filter(u8::is_ascii_digit) {
                digit_counts[(d - b'0') as usize] += 1;
            }
        }
        assert_ne!(first, c);
        // 55,000 digits: each about 5,500.
        assert!(
            digit_counts.iter().all(|&x| (5_000..6_000).contains(&x)),
            "{digit_counts:?}"
        );
    }

    #[test]
    fn parse_accepts_known_and_rejects_unknown() {
        let p = |name| Distribution::parse(name, 12, 1.0, 75.0, 0.2, 0.8);
        assert_eq!(p("uniform"), Ok(Distribution::Uniform));
        assert_eq!(p("gaussian"), Ok(Distribution::Gaussian { iter: 12 }));
        assert_eq!(
            p("special"),
            Ok(Distribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0
            })
        );
        assert_eq!(p("pareto"), Ok(Distribution::Pareto { h: 0.2 }));
        assert_eq!(p("zipfian"), Ok(Distribution::Zipfian { exp: 0.8 }));
        for bad in ["", "normal", "Uniform", "zipf", "special "] {
            let err = p(bad).unwrap_err();
            for name in DISTRIBUTION_NAMES {
                assert!(err.contains(name), "{err}");
            }
        }
    }

    #[test]
    fn parse_rejects_bad_parameters() {
        let parse = Distribution::parse;
        assert!(parse("gaussian", 0, 1.0, 75.0, 0.2, 0.8).is_err());
        assert!(parse("special", 0, 1.0, 75.0, 0.2, 0.8).is_err());
        assert!(parse("special", 12, 101.0, 75.0, 0.2, 0.8).is_err());
        assert!(parse("special", 12, 1.0, -1.0, 0.2, 0.8).is_err());
        assert!(parse("special", 12, f64::NAN, 75.0, 0.2, 0.8).is_err());
        for h in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(parse("pareto", 12, 1.0, 75.0, h, 0.8).is_err(), "{h}");
        }
        for e in [-0.1, f64::NAN, f64::INFINITY] {
            assert!(parse("zipfian", 12, 1.0, 75.0, 0.2, e).is_err(), "{e}");
        }
        // Parameters of other distributions are not checked.
        assert_eq!(
            parse("uniform", 0, -5.0, 500.0, 7.0, f64::NAN),
            Ok(Distribution::Uniform)
        );
    }
}
