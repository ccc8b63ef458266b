//! The TPC-C specification's random values (clauses 2.1.6 and 4.3.2): NURand and its run
//! constants, customer last names from syllables, and the random strings of the initial data.
//!
//! The string functions *append* to `out`, so the loader writes values straight into the SQL
//! text it is building. Every string is made of ASCII letters and digits only, so it is safe
//! inside a single-quoted SQL literal without escaping.

use crate::rand::Rng;

/// NURand(A, x, y) with run constant `c` (clause 2.1.6):
/// `(((uniform(0, A) | uniform(x, y)) + C) % (y - x + 1)) + x`. Requires `x <= y`.
pub fn nurand(rng: &mut Rng, a: u64, x: u64, y: u64, c: u64) -> u64 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

/// The constants C of NURand for A = 255 (C_LAST), 1023 (C_ID) and 8191 (OL_I_ID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandC {
    pub c_last: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

impl NuRandC {
    /// The constants used while loading: each uniform over `0..=A`.
    pub fn load(rng: &mut Rng) -> Self {
        NuRandC {
            c_last: rng.uniform(0, 255),
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }

    /// The constants of a measured run given those of the load: C_LAST differs from the load's
    /// by 65..=119 but neither 96 nor 112 (clause 2.1.6.1), so the run's last names are not the
    /// loaded ones' distribution; C_ID and OL_I_ID are drawn afresh.
    pub fn run(load: &NuRandC, rng: &mut Rng) -> Self {
        let ok = |c: u64| {
            let delta = c.abs_diff(load.c_last);
            (65..=119).contains(&delta) && delta != 96 && delta != 112
        };
        // At least 53 of the 256 values qualify whatever the load's constant (0..=255), so
        // picking the k-th qualifying value is uniform over them and never fails.
        let valid = (0..=255).filter(|&c| ok(c)).count() as u64;
        let k = rng.uniform(0, valid - 1) as usize;
        let c_last = (0..=255)
            .filter(|&c| ok(c))
            .nth(k)
            .expect("k is below the number of valid constants");
        NuRandC {
            c_last,
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Appends the customer last name of `num` (0..=999): the syllables of its three decimal
/// digits, hundreds first (clause 4.3.2.3), e.g. 371 gives "PRICALLYOUGHT".
pub fn last_name(num: u64, out: &mut String) {
    debug_assert!(num <= 999, "last_name({num})");
    out.push_str(SYLLABLES[(num / 100 % 10) as usize]);
    out.push_str(SYLLABLES[(num / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(num % 10) as usize]);
}

/// Appends the loaded last name of customer `c_id`: customers 1..=1000 of a district take
/// the name of `c_id - 1`, so every name exists; the others NURand(255, 0, 999) with the
/// load's C_LAST. (Transactions pick names with `nurand(255, 0, 999, run.c_last)`.)
pub fn customer_last(rng: &mut Rng, c_id: u64, c: &NuRandC, out: &mut String) {
    if (1..=1000).contains(&c_id) {
        last_name(c_id - 1, out);
    } else {
        last_name(nurand(rng, 255, 0, 999, c.c_last), out);
    }
}

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &[u8; 10] = b"0123456789";

/// Appends `len` characters of `alphabet`. One 64-bit draw read as a fraction yields several
/// characters (multiply by the alphabet size: the integer part is the character, the rest the
/// next fraction). `per_draw` keeps `size^per_draw` far below 2^64, which holds the bias under
/// 1e-4 with one draw per 8 letters-and-digits or per 15 digits.
fn chars(rng: &mut Rng, alphabet: &[u8], per_draw: usize, len: usize, out: &mut String) {
    out.reserve(len);
    let size = alphabet.len() as u128;
    let mut x = 0u64;
    for i in 0..len {
        if i % per_draw == 0 {
            x = rng.next_u64();
        }
        let m = u128::from(x) * size;
        out.push(char::from(alphabet[(m >> 64) as usize]));
        x = m as u64;
    }
}

/// Appends exactly `len` random letters and digits.
fn alnum(rng: &mut Rng, len: usize, out: &mut String) {
    // 62^8 = 2.2e14 against 2^64 = 1.8e19.
    chars(rng, ALNUM, 8, len, out);
}

fn length(rng: &mut Rng, min: usize, max: usize) -> usize {
    rng.uniform(min as u64, max as u64) as usize
}

/// Appends a random a-string: letters and digits, of length uniform in `min..=max`.
pub fn astring(rng: &mut Rng, min: usize, max: usize, out: &mut String) {
    let len = length(rng, min, max);
    alnum(rng, len, out);
}

/// Appends a random n-string: digits, of length uniform in `min..=max`.
pub fn nstring(rng: &mut Rng, min: usize, max: usize, out: &mut String) {
    let len = length(rng, min, max);
    // 10^15 against 2^64 = 1.8e19.
    chars(rng, DIGITS, 15, len, out);
}

/// Appends a zip code: four random digits then "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut Rng, out: &mut String) {
    nstring(rng, 4, 4, out);
    out.push_str("11111");
}

/// Appends I_DATA / S_DATA: an a-string of length `min..=max` (`min >= 8`) that in 10 % of
/// cases holds "ORIGINAL" at a random position (clause 4.3.3.1).
pub fn data_original(rng: &mut Rng, min: usize, max: usize, out: &mut String) {
    debug_assert!(min >= 8, "data_original needs room for ORIGINAL");
    let len = length(rng, min, max);
    if rng.uniform(1, 10) == 1 {
        let before = length(rng, 0, len - 8);
        alnum(rng, before, out);
        out.push_str("ORIGINAL");
        alnum(rng, len - 8 - before, out);
    } else {
        alnum(rng, len, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::new(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            let v = nurand(&mut rng, 255, 0, 999, 123);
            assert!(v <= 999);
            counts[v as usize] += 1;
        }
        // Uniform would give 200 each; NURand's OR makes some values far more frequent.
        let max = *counts.iter().max().unwrap();
        let min = *counts.iter().min().unwrap();
        assert!(max > 400 && min < 100, "max {max} min {min}");
        for _ in 0..10_000 {
            let v = nurand(&mut rng, 8191, 1, 100_000, 77);
            assert!((1..=100_000).contains(&v));
            let v = nurand(&mut rng, 1023, 1, 3000, 1023);
            assert!((1..=3000).contains(&v));
        }
    }

    #[test]
    fn nurand_formula_with_degenerate_ranges() {
        let mut rng = Rng::new(2);
        // x == y: always x.
        assert_eq!(nurand(&mut rng, 255, 7, 7, 200), 7);
        // A = 0 and x..y = 0..=0: (0 | 0 + C) % 1 + 0 = 0.
        assert_eq!(nurand(&mut rng, 0, 0, 0, 5), 0);
        // A = 0, range 0..=9: (uniform(0,9) + C) % 10; C = 10 leaves it uniform.
        let mut seen = [false; 10];
        for _ in 0..1000 {
            seen[nurand(&mut rng, 0, 0, 9, 10) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn load_constants_in_range() {
        for seed in 0..200 {
            let c = NuRandC::load(&mut Rng::new(seed));
            assert!(c.c_last <= 255 && c.c_id <= 1023 && c.ol_i_id <= 8191);
        }
        let a = NuRandC::load(&mut Rng::new(5));
        assert_eq!(a, NuRandC::load(&mut Rng::new(5)));
    }

    #[test]
    fn run_c_last_delta_obeys_clause_2_1_6_1() {
        let mut rng = Rng::new(3);
        for c_last in 0..=255 {
            let load = NuRandC {
                c_last,
                c_id: 0,
                ol_i_id: 0,
            };
            let mut seen = std::collections::HashSet::new();
            for _ in 0..200 {
                let run = NuRandC::run(&load, &mut rng);
                let delta = run.c_last.abs_diff(c_last);
                assert!(run.c_last <= 255);
                assert!(
                    (65..=119).contains(&delta),
                    "load {c_last} run {}",
                    run.c_last
                );
                assert!(delta != 96 && delta != 112);
                assert!(run.c_id <= 1023 && run.ol_i_id <= 8191);
                seen.insert(run.c_last);
            }
            // Not stuck on one value.
            assert!(seen.len() > 10, "load {c_last}: {seen:?}");
        }
    }

    #[test]
    fn last_names_from_digits() {
        let name = |n| {
            let mut s = String::new();
            last_name(n, &mut s);
            s
        };
        assert_eq!(name(0), "BARBARBAR");
        assert_eq!(name(371), "PRICALLYOUGHT");
        assert_eq!(name(999), "EINGEINGEING");
        assert_eq!(name(40), "BARPRESBAR");
        // Appends.
        let mut s = String::from("x");
        last_name(1, &mut s);
        assert_eq!(s, "xBARBAROUGHT");
    }

    #[test]
    fn customer_last_uses_id_then_nurand() {
        let c = NuRandC {
            c_last: 100,
            c_id: 0,
            ol_i_id: 0,
        };
        let mut rng = Rng::new(4);
        let mut s = String::new();
        customer_last(&mut rng, 1, &c, &mut s);
        assert_eq!(s, "BARBARBAR");
        s.clear();
        customer_last(&mut rng, 1000, &c, &mut s);
        assert_eq!(s, "EINGEINGEING");
        // Above 1000: the name NURand picks from the same generator state.
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        s.clear();
        customer_last(&mut a, 1001, &c, &mut s);
        let mut want = String::new();
        last_name(nurand(&mut b, 255, 0, 999, 100), &mut want);
        assert_eq!(s, want);
    }

    #[test]
    fn strings_have_lengths_and_alphabets() {
        let mut rng = Rng::new(5);
        let mut lens = std::collections::HashSet::new();
        let mut classes = [false; 3];
        for _ in 0..2000 {
            let mut s = String::from("__");
            astring(&mut rng, 3, 9, &mut s);
            let v = &s[2..];
            assert!((3..=9).contains(&v.len()));
            lens.insert(v.len());
            assert!(v.bytes().all(|b| b.is_ascii_alphanumeric()), "{v}");
            for b in v.bytes() {
                classes
                    [usize::from(b.is_ascii_lowercase()) + 2 * usize::from(b.is_ascii_digit())] =
                    true;
            }
            let mut n = String::new();
            nstring(&mut rng, 16, 16, &mut n);
            assert_eq!(n.len(), 16);
            assert!(n.bytes().all(|b| b.is_ascii_digit()), "{n}");
            let mut z = String::new();
            zip(&mut rng, &mut z);
            assert_eq!(z.len(), 9);
            assert!(z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
        }
        assert_eq!(lens.len(), 7, "every length 3..=9 occurs");
        assert_eq!(classes, [true; 3], "upper, lower and digits all occur");
    }

    #[test]
    fn characters_are_about_uniform() {
        let mut rng = Rng::new(6);
        let mut s = String::new();
        for _ in 0..10_000 {
            astring(&mut rng, 62, 62, &mut s);
        }
        let mut counts = [0u32; 128];
        for b in s.bytes() {
            counts[usize::from(b)] += 1;
        }
        // 620,000 characters over 62 symbols: 10,000 each.
        for &ch in ALNUM {
            let n = counts[usize::from(ch)];
            assert!((9_500..10_500).contains(&n), "{} {n}", char::from(ch));
        }
        let mut d = String::new();
        for _ in 0..10_000 {
            nstring(&mut rng, 50, 50, &mut d);
        }
        let mut dc = [0u32; 10];
        for b in d.bytes() {
            dc[usize::from(b - b'0')] += 1;
        }
        assert!(dc.iter().all(|&n| (48_500..51_500).contains(&n)), "{dc:?}");
    }

    #[test]
    fn data_original_ten_percent() {
        let mut rng = Rng::new(7);
        let mut with = 0;
        let mut at_start = 0;
        let mut at_end = 0;
        for _ in 0..20_000 {
            let mut s = String::new();
            data_original(&mut rng, 26, 50, &mut s);
            assert!((26..=50).contains(&s.len()));
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
            if let Some(p) = s.find("ORIGINAL") {
                with += 1;
                at_start += usize::from(p == 0);
                at_end += usize::from(p + 8 == s.len());
            }
        }
        assert!((1_800..2_200).contains(&with), "{with} of 20000");
        // The position varies, reaching both ends sometimes.
        assert!(at_start > 0 && at_end > 0 && at_start < with / 5);
        // The shortest case fits ORIGINAL.
        let mut s = String::new();
        for _ in 0..200 {
            s.clear();
            data_original(&mut rng, 8, 8, &mut s);
            assert_eq!(s.len(), 8);
        }
    }
}
