//! The functions of the expression language: their names and argument counts (checked
//! when a script is parsed) and what they compute, the random distributions included.

use crate::env::Env;
use crate::hash;
use crate::value::{Num, Value};
use crate::{EvalError, Random};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Abs,
    Debug,
    Double,
    Exp,
    Greatest,
    Hash,
    HashFnv1a,
    HashMurmur2,
    Int,
    Least,
    Ln,
    Mod,
    Permute,
    Pi,
    Pow,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
    Sqrt,
}

const NAMES: [(&str, Func); 21] = [
    ("abs", Func::Abs),
    ("debug", Func::Debug),
    ("double", Func::Double),
    ("exp", Func::Exp),
    ("greatest", Func::Greatest),
    ("hash", Func::Hash),
    ("hash_fnv1a", Func::HashFnv1a),
    ("hash_murmur2", Func::HashMurmur2),
    ("int", Func::Int),
    ("least", Func::Least),
    ("ln", Func::Ln),
    ("mod", Func::Mod),
    ("permute", Func::Permute),
    ("pi", Func::Pi),
    ("pow", Func::Pow),
    ("power", Func::Pow),
    ("random", Func::Random),
    ("random_exponential", Func::RandomExponential),
    ("random_gaussian", Func::RandomGaussian),
    ("random_zipfian", Func::RandomZipfian),
    ("sqrt", Func::Sqrt),
];

/// The smallest parameter of random_gaussian and the bounds of random_zipfian's.
pub const MIN_GAUSSIAN: f64 = 2.0;
pub const MIN_ZIPFIAN: f64 = 1.001;
pub const MAX_ZIPFIAN: f64 = 1000.0;

impl Func {
    /// The function a (lower-case) name calls.
    pub fn by_name(name: &str) -> Option<Func> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// Whether `n` arguments are right for it.
    pub fn arity_ok(self, n: usize) -> bool {
        use Func::*;
        match self {
            Pi => n == 0,
            Abs | Debug | Double | Exp | Int | Ln | Sqrt => n == 1,
            Greatest | Least => n >= 1,
            Hash | HashFnv1a | HashMurmur2 => n == 1 || n == 2,
            Mod | Pow | Random => n == 2,
            Permute => n == 2 || n == 3,
            RandomExponential | RandomGaussian | RandomZipfian => n == 3,
        }
    }
}

/// Calls `f` with its arguments' values (NULL in gives NULL out).
pub fn call(f: Func, vals: &[Value], env: &mut Env<'_>) -> Result<Value, EvalError> {
    if vals.contains(&Value::Null) {
        return Ok(Value::Null);
    }
    let int = |k: usize| -> Result<i64, EvalError> {
        vals[k]
            .int()?
            .ok_or_else(|| EvalError::new("unexpected NULL"))
    };
    let dbl = |k: usize| -> Result<f64, EvalError> {
        vals[k]
            .double()?
            .ok_or_else(|| EvalError::new("unexpected NULL"))
    };
    use Func::*;
    Ok(match f {
        Pi => Value::Double(std::f64::consts::PI),
        Debug => vals[0].clone(),
        Abs => match vals[0].num()? {
            Some(Num::Int(i)) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| EvalError::new("bigint out of range"))?,
            ),
            Some(Num::Double(d)) => Value::Double(d.abs()),
            None => Value::Null,
        },
        Double => Value::Double(dbl(0)?),
        Int => Value::Int(int(0)?),
        Exp => Value::Double(dbl(0)?.exp()),
        Ln => Value::Double(dbl(0)?.ln()),
        Sqrt => Value::Double(dbl(0)?.sqrt()),
        Pow => Value::Double(dbl(0)?.powf(dbl(1)?)),
        Mod => {
            let (a, b) = (int(0)?, int(1)?);
            if b == 0 {
                return Err(EvalError::new("division by zero"));
            }
            Value::Int(a.checked_rem(b).unwrap_or(0))
        }
        Greatest | Least => extreme(vals, f == Greatest)?,
        Hash | HashMurmur2 | HashFnv1a => {
            let seed = if vals.len() > 1 {
                int(1)?
            } else {
                env.default_seed
            };
            let h = if f == HashFnv1a {
                hash::fnv1a
            } else {
                hash::murmur2
            };
            Value::Int(h(int(0)?, seed))
        }
        Permute => {
            let size = int(1)?;
            if size <= 0 {
                return Err(EvalError::new(
                    "pseudorandom permutation size must be greater than zero",
                ));
            }
            let seed = if vals.len() > 2 {
                int(2)?
            } else {
                env.default_seed
            };
            Value::Int(hash::permute(int(0)?, size, seed))
        }
        Random => Value::Int(uniform(env.rng, int(0)?, int(1)?)?),
        RandomExponential => Value::Int(exponential(env.rng, int(0)?, int(1)?, dbl(2)?)?),
        RandomGaussian => Value::Int(gaussian(env.rng, int(0)?, int(1)?, dbl(2)?)?),
        RandomZipfian => Value::Int(zipfian(env.rng, int(0)?, int(1)?, dbl(2)?)?),
    })
}

/// greatest/least: a double if any argument is one, else an integer.
fn extreme(vals: &[Value], greatest: bool) -> Result<Value, EvalError> {
    let mut nums = Vec::with_capacity(vals.len());
    for v in vals {
        nums.push(v.num()?.ok_or_else(|| EvalError::new("unexpected NULL"))?);
    }
    if nums.iter().all(|n| matches!(n, Num::Int(_))) {
        let ints = nums.iter().map(|n| match n {
            Num::Int(i) => *i,
            Num::Double(d) => *d as i64,
        });
        let v = if greatest { ints.max() } else { ints.min() };
        return Ok(Value::Int(v.unwrap_or(0)));
    }
    let ds = nums.iter().map(|n| match n {
        Num::Int(i) => *i as f64,
        Num::Double(d) => *d,
    });
    let v = ds.fold(None, |acc: Option<f64>, d| match acc {
        None => Some(d),
        Some(a) if (greatest && d > a) || (!greatest && d < a) => Some(d),
        keep => keep,
    });
    Ok(Value::Double(v.unwrap_or(0.0)))
}

/// The number of integers in [lb, ub], refused when empty or too large.
fn range(lb: i64, ub: i64) -> Result<u64, EvalError> {
    if lb > ub {
        return Err(EvalError::new("empty range given to random"));
    }
    let n = i128::from(ub) - i128::from(lb) + 1;
    if n > i128::from(i64::MAX) {
        return Err(EvalError::new("random range is too large"));
    }
    Ok(n as u64)
}

/// A uniform integer in [lb, ub] (multiply-shift, as unbiased as 64 bits allow).
pub fn uniform(rng: &mut dyn Random, lb: i64, ub: i64) -> Result<i64, EvalError> {
    let n = range(lb, ub)?;
    let r = ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as i64;
    Ok(lb + r)
}

/// An integer drawn with probability f(i) - f(i + 1), where
/// f(x) = exp(-p (x - lb) / n) / (1 - exp(-p)): the inverse of that distribution at a
/// uniform draw in (0, 1].
pub fn exponential(rng: &mut dyn Random, lb: i64, ub: i64, p: f64) -> Result<i64, EvalError> {
    let n = range(lb, ub)?;
    if p <= 0.0 {
        return Err(EvalError::new(
            "exponential parameter must be greater than zero",
        ));
    }
    let cut = (-p).exp();
    let u = 1.0 - rng.unit();
    let r = -(cut + (1.0 - cut) * u).ln() / p;
    Ok(lb + ((n as f64 * r) as i64).min(n as i64 - 1))
}

/// An integer from a standard normal truncated at ±p (Box-Muller, drawn again when
/// outside), mapped onto [lb, ub].
pub fn gaussian(rng: &mut dyn Random, lb: i64, ub: i64, p: f64) -> Result<i64, EvalError> {
    let n = range(lb, ub)?;
    if p < MIN_GAUSSIAN {
        return Err(EvalError::new(format!(
            "gaussian parameter must be at least {MIN_GAUSSIAN:.1}"
        )));
    }
    let z = loop {
        let u1 = 1.0 - rng.unit();
        let u2 = rng.unit();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
        if z > -p && z < p {
            break z;
        }
    };
    let r = (z + p) / (2.0 * p);
    Ok(lb + ((n as f64 * r) as i64).min(n as i64 - 1))
}

/// A bounded Zipfian integer (k drawn (k+1)/k)^s times as often as k+1), by Devroye's
/// rejection method for the Zipf distribution, restricted to [lb, ub].
pub fn zipfian(rng: &mut dyn Random, lb: i64, ub: i64, s: f64) -> Result<i64, EvalError> {
    let n = range(lb, ub)? as f64;
    if !(MIN_ZIPFIAN..=MAX_ZIPFIAN).contains(&s) {
        return Err(EvalError::new(format!(
            "zipfian parameter must be in range [{MIN_ZIPFIAN:.3}, {MAX_ZIPFIAN:.0}]"
        )));
    }
    let b = 2f64.powf(s - 1.0);
    let x = loop {
        let u = 1.0 - rng.unit();
        let v = rng.unit();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if x <= n && v * x * (t - 1.0) / (b - 1.0) <= t / b {
            break x;
        }
    };
    Ok(lb + x as i64 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lcg(u64);
    impl Random for Lcg {
        fn next_u64(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut z = self.0;
            z = (z ^ (z >> 33)).wrapping_mul(0xff51afd7ed558ccd);
            z ^ (z >> 33)
        }
    }

    /// `draws` values of a distribution: each within [lb, ub], and their counts.
    fn histogram(f: impl Fn(&mut Lcg) -> i64, lb: i64, ub: i64, draws: usize) -> Vec<usize> {
        let mut rng = Lcg(42);
        let mut counts = vec![0usize; (ub - lb + 1) as usize];
        for _ in 0..draws {
            let v = f(&mut rng);
            assert!((lb..=ub).contains(&v), "{v} outside {lb}..{ub}");
            counts[(v - lb) as usize] += 1;
        }
        counts
    }

    #[test]
    fn uniform_draws_cover_the_range_evenly() {
        let c = histogram(|r| uniform(r, -5, 4).unwrap(), -5, 4, 100_000);
        for k in c {
            assert!((9_000..11_000).contains(&k), "{k}");
        }
        assert!(uniform(&mut Lcg(1), 3, 2).is_err());
        assert_eq!(uniform(&mut Lcg(1), 7, 7).unwrap(), 7);
    }

    #[test]
    fn zipfian_ratios_follow_the_parameter() {
        // P(k) / P(k+1) = ((k+1)/k)^s: about 5.66 for 1 against 2 at s = 2.5.
        let c = histogram(|r| zipfian(r, 1, 1000, 2.5).unwrap(), 1, 1000, 200_000);
        let ratio = c[0] as f64 / c[1] as f64;
        assert!((5.0..6.4).contains(&ratio), "{ratio}");
        assert!(zipfian(&mut Lcg(1), 1, 10, 1.0).is_err());
    }

    #[test]
    fn exponential_and_gaussian_follow_their_shapes() {
        // Exponential, p = 3: f(x) as documented gives the first tenth
        // (1 - e^-0.3) / (1 - e^-3) = 27.2% of the draws.
        let c = histogram(|r| exponential(r, 1, 100, 3.0).unwrap(), 1, 100, 100_000);
        let first: usize = c[..10].iter().sum();
        assert!((26_000..28_500).contains(&first), "{first}");
        assert!(exponential(&mut Lcg(1), 1, 10, 0.0).is_err());
        // Gaussian, p = 4: about 67% of the draws in the middle quarter.
        let c = histogram(|r| gaussian(r, 1, 800, 4.0).unwrap(), 1, 800, 100_000);
        let middle: usize = c[300..500].iter().sum();
        assert!((66_000..70_000).contains(&middle), "{middle}");
        assert!(gaussian(&mut Lcg(1), 1, 10, 1.5).is_err());
    }
}
