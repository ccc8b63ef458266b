//! sysbench's random distributions (`--rand-type` and its parameters) as options: what a
//! run asks for. The agent draws from them (its `rand` module).

use crate::options::{Declared, SpecError};
use crate::options::{Kind as OK, OptionDef, Options, Written};

/// Names accepted by [`Distribution::parse`], in sysbench's order.
pub const DISTRIBUTION_NAMES: &[&str] = &["uniform", "gaussian", "special", "pareto", "zipfian"];

/// A sysbench `--rand-type` with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Every value equally likely.
    Uniform,
    /// Mean of `iter` uniform draws (a bell-ish curve centred on the middle of the range).
    Gaussian { iter: u32 },
    /// `res` % of values uniform in a window of `pct` % of the range at its centre, the rest
    /// [`Distribution::Gaussian`] with `iter`. sysbench's default (`iter=12 pct=1 res=75`).
    Special { iter: u32, pct: f64, res: f64 },
    /// `a + floor(n * u^(ln h / ln(1-h)))`: concentrated near `a` for `h < 0.5`.
    Pareto { h: f64 },
    /// Zipfian with exponent `exp` over the `n` values; `a` is the most frequent.
    Zipfian { exp: f64 },
}

impl Distribution {
    /// The `--rand-type` name.
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Special { .. } => "special",
            Distribution::Pareto { .. } => "pareto",
            Distribution::Zipfian { .. } => "zipfian",
        }
    }

    /// Builds a distribution from a `--rand-type` name and the `--rand-spec-iter`,
    /// `--rand-spec-pct`, `--rand-spec-res`, `--rand-pareto-h` and `--rand-zipfian-exp` values.
    /// Only the parameters the named distribution uses are validated and kept.
    pub fn parse(
        name: &str,
        iter: u32,
        pct: f64,
        res: f64,
        h: f64,
        zipf_exp: f64,
    ) -> Result<Distribution, String> {
        let check_iter = || {
            if iter == 0 {
                Err("--rand-spec-iter must be at least 1".to_string())
            } else {
                Ok(())
            }
        };
        let check_percent = |opt: &str, v: f64| {
            if (0.0..=100.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{opt} must be within [0, 100], got {v}"))
            }
        };
        match name {
            "uniform" => Ok(Distribution::Uniform),
            "gaussian" => {
                check_iter()?;
                Ok(Distribution::Gaussian { iter })
            }
            "special" => {
                check_iter()?;
                check_percent("--rand-spec-pct", pct)?;
                check_percent("--rand-spec-res", res)?;
                Ok(Distribution::Special { iter, pct, res })
            }
            "pareto" => {
                // h = 0 or 1 makes the exponent 0/inf or inf/0.
                if h > 0.0 && h < 1.0 {
                    Ok(Distribution::Pareto { h })
                } else {
                    Err(format!("--rand-pareto-h must be within (0, 1), got {h}"))
                }
            }
            "zipfian" => {
                if zipf_exp.is_finite() && zipf_exp >= 0.0 {
                    Ok(Distribution::Zipfian { exp: zipf_exp })
                } else {
                    Err(format!(
                        "--rand-zipfian-exp must be a finite number >= 0, got {zipf_exp}"
                    ))
                }
            }
            _ => Err(format!(
                "unknown random distribution '{name}': expected one of {}",
                DISTRIBUTION_NAMES.join(", ")
            )),
        }
    }
}

/// sysbench's random-number options (0.4's `--oltp-dist-*` as aliases), declared once: the
/// command line, `TEST help`, a Start's option bag and the result document follow from it.
/// Only the parameters of the chosen distribution are checked, kept and recorded: written
/// by hand, one variant's options each (`every_distributions_options_are_written_back`
/// guards the write).
impl Declared for Distribution {
    const OPTIONS: &'static [OptionDef] = &[
        OptionDef::new(
            "rand-type",
            OK::Text,
            "special",
            "Random distribution: uniform, gaussian, special, pareto, zipfian",
        )
        .aliases(&["oltp-dist-type"]),
        OptionDef::new(
            "rand-spec-iter",
            OK::Count,
            "12",
            "Iterations for the gaussian and special distributions",
        )
        .aliases(&["oltp-dist-iter"]),
        OptionDef::new(
            "rand-spec-pct",
            OK::Float,
            "1",
            "Percentage of the range treated as 'special'",
        )
        .aliases(&["oltp-dist-pct"]),
        OptionDef::new(
            "rand-spec-res",
            OK::Float,
            "75",
            "Percentage of 'special' values to use",
        )
        .aliases(&["oltp-dist-res"]),
        OptionDef::new(
            "rand-pareto-h",
            OK::Float,
            "0.2",
            "Parameter h of the pareto distribution",
        ),
        OptionDef::new(
            "rand-zipfian-exp",
            OK::Float,
            "0.8",
            "Exponent of the zipfian distribution",
        ),
    ];

    fn from_options(o: &Options) -> Result<Self, SpecError> {
        let name = o.choice(
            "rand-type",
            DISTRIBUTION_NAMES,
            "expected uniform, gaussian, special, pareto or zipfian",
        )?;
        Distribution::parse(
            name,
            o.num("rand-spec-iter")?,
            o.float("rand-spec-pct")?,
            o.float("rand-spec-res")?,
            o.float("rand-pareto-h")?,
            o.float("rand-zipfian-exp")?,
        )
        .map_err(|e| SpecError::Options(format!("invalid random distribution: {e}")))
    }

    fn to_options(&self) -> Written {
        let mut w = Written::default();
        w.put("rand-type", self.name());
        match *self {
            Distribution::Uniform => {}
            Distribution::Gaussian { iter } => {
                w.put("rand-spec-iter", iter);
            }
            Distribution::Special { iter, pct, res } => {
                w.put("rand-spec-iter", iter)
                    .put("rand-spec-pct", pct)
                    .put("rand-spec-res", res);
            }
            Distribution::Pareto { h } => {
                w.put("rand-pareto-h", h);
            }
            Distribution::Zipfian { exp } => {
                w.put("rand-zipfian-exp", exp);
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distributions_options_are_written_back() {
        // Only the chosen distribution's parameters are kept and written: one set each.
        crate::spec::assert_written_back::<Distribution>(
            &[
                &[("rand-type", "uniform")],
                &[("rand-type", "gaussian"), ("rand-spec-iter", "3")],
                &[
                    ("rand-spec-iter", "4"),
                    ("rand-spec-pct", "2.5"),
                    ("rand-spec-res", "50"),
                ],
                &[("rand-type", "pareto"), ("rand-pareto-h", "0.3")],
                &[("rand-type", "zipfian"), ("rand-zipfian-exp", "1.5")],
            ],
            &[],
        );
    }
}
