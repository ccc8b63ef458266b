//! Every run remembered: after each run, sweep or scenario file, its measurements go to the
//! catalog (fleetbench_catalog) and each is checked against the earlier runs of its
//! comparison key for regressions. A catalog that cannot be written is a warning, never a
//! failed run: the result files are written first and kept.

pub mod record;
pub mod regress;

use std::path::PathBuf;

use fleetbench_catalog::{Catalog, Filter, Location, Record};

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::report::doc::Document;

/// Where runs are recorded, and what a regression does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// None: `--no-catalog`, FLEETBENCH_CATALOG=off, or no home to keep one in.
    pub location: Option<Location>,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
}

/// The environment variable that names the catalog (or `off`) for every command, pgbench's
/// included.
pub const ENV: &str = "FLEETBENCH_CATALOG";

impl Settings {
    /// From `--catalog`, `--no-catalog` and `--fail-on-regression`, else the environment.
    pub fn of(raw: &RawArgs) -> Result<Settings, UsageError> {
        let location = if raw.no_catalog {
            None
        } else if let Some(c) = &raw.catalog {
            Some(parse(c, "--catalog")?)
        } else {
            from_env()?
        };
        if raw.fail_on_regression && location.is_none() {
            return Err(UsageError::new(
                "--fail-on-regression compares with the earlier runs in the catalog: drop --no-catalog (or FLEETBENCH_CATALOG=off)",
            ));
        }
        Ok(Settings {
            location,
            fail_on_regression: raw.fail_on_regression,
        })
    }

    /// From the environment alone (`fleetbench pgbench`, whose options are pgbench's).
    pub fn from_env() -> Result<Settings, UsageError> {
        Ok(Settings {
            location: from_env()?,
            fail_on_regression: false,
        })
    }
}

/// FLEETBENCH_CATALOG, else the default file; None for `off` or without a home.
fn from_env() -> Result<Option<Location>, UsageError> {
    match std::env::var(ENV) {
        Ok(v) if v.eq_ignore_ascii_case("off") => Ok(None),
        Ok(v) if !v.trim().is_empty() => parse(&v, ENV).map(Some),
        _ => Ok(default_path().map(Location::File)),
    }
}

fn parse(value: &str, what: &str) -> Result<Location, UsageError> {
    if value.trim().is_empty() {
        return Err(UsageError(format!(
            "{what}: give a file or a postgres:// or mysql:// URL"
        )));
    }
    Ok(Location::parse(value.trim()))
}

/// `$XDG_DATA_HOME/fleetbench/catalog.db`, else `~/.local/share/fleetbench/catalog.db`.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("fleetbench").join("catalog.db"))
}

/// Most runs a trend shows: the newest of its key.
pub const TREND_RUNS: u32 = 1000;

/// The complete runs of `base`'s comparison key, oldest first (the newest [`TREND_RUNS`]),
/// each with its figure `metric`, and the change points of that series; a usage error for
/// a whole sweep or a figure no run has.
pub async fn trend(
    c: &mut Catalog,
    base: &Record,
    metric: &str,
) -> anyhow::Result<(Vec<(Record, f64)>, Vec<usize>)> {
    if base.cmp_hash.is_empty() {
        return Err(UsageError(format!(
            "run {} is a whole {}: give one of its steps (runs list shows them)",
            base.id, base.kind
        ))
        .into());
    }
    let mut runs = c
        .list(&Filter {
            cmp_hash: Some(base.cmp_hash.clone()),
            complete_only: true,
            limit: Some(TREND_RUNS),
            ..Default::default()
        })
        .await?;
    runs.reverse();
    let name = figure_name(metric, base);
    let points: Vec<(Record, f64)> = runs
        .into_iter()
        .filter_map(|r| {
            let v = figure(&r, &name)?;
            Some((r, v))
        })
        .collect();
    if points.is_empty() {
        let known: Vec<String> = base.figures.keys().cloned().collect();
        return Err(UsageError(format!(
            "--metric '{metric}': these runs have no such figure (tps, qps, avg, max, errors, {})",
            known.join(", ")
        ))
        .into());
    }
    let values: Vec<f64> = points.iter().map(|(_, v)| *v).collect();
    let changes = regress::change_points(&name, &values);
    Ok((points, changes))
}

/// The recorded name of figure `metric` (`p95` is recorded as `p95 latency`).
fn figure_name(metric: &str, r: &Record) -> String {
    if !r.figures.contains_key(metric) && r.figures.contains_key(&format!("{metric} latency")) {
        format!("{metric} latency")
    } else {
        metric.to_string()
    }
}

/// Figure `name` of a run: a column's (tps, qps, avg, max, errors) or a recorded one.
pub fn figure(r: &Record, name: &str) -> Option<f64> {
    match name {
        "tps" => Some(r.tps),
        "qps" => r.qps,
        "avg" => Some(r.lat_avg_ms),
        "max" => Some(r.lat_max_ms),
        "errors" => Some(r.errors_per_sec),
        other => r.figures.get(other).copied(),
    }
}

/// Records `doc`'s measurements and says, on stderr, where, and which of their figures
/// moved beyond the noise of earlier runs. Whether any regressed (the worse way).
pub async fn remember(settings: &Settings, doc: &Document) -> bool {
    let Some(location) = &settings.location else {
        return false;
    };
    let records = record::records_of(doc);
    if records.is_empty() {
        return false;
    }
    match store(location, &records).await {
        Ok((ids, lines, regressed)) => {
            let first = ids.first().map(String::as_str).unwrap_or("");
            let which = if ids.len() == 1 {
                format!("as {first}")
            } else {
                match &ids[1..] {
                    [one] => format!("as {first} with its step {one}"),
                    steps => format!(
                        "as {first} with its {} steps ({} to {})",
                        steps.len(),
                        steps[0],
                        steps[steps.len() - 1]
                    ),
                }
            };
            eprintln!(
                "catalog: recorded {which} in {} (fleetbench runs show {first})",
                location.describe()
            );
            for l in lines {
                eprintln!("{l}");
            }
            regressed
        }
        Err(e) => {
            eprintln!(
                "warning: the run was not recorded in the catalog ({e}); its result files are written as asked"
            );
            false
        }
    }
}

/// Inserts `records` and checks each against its key's earlier runs: their ids, the
/// lines to print, and whether a figure regressed.
async fn store(
    location: &Location,
    records: &[Record],
) -> Result<(Vec<String>, Vec<String>, bool), fleetbench_catalog::CatalogError> {
    let mut c = Catalog::open(location).await?;
    let mut ids = Vec::new();
    let mut lines = Vec::new();
    let mut regressed = false;
    for r in records {
        // The baseline is read before the run joins it; a whole sweep has no figure.
        let history = if r.interrupted || r.cmp_hash.is_empty() {
            Vec::new()
        } else {
            c.list(&Filter {
                cmp_hash: Some(r.cmp_hash.clone()),
                before_ms: Some(r.started_ms),
                complete_only: true,
                limit: Some(regress::BASELINE_RUNS as u32),
                ..Default::default()
            })
            .await?
        };
        let id = c.insert(r).await?;
        let (said, worse) = verdict_lines(r, &id, &history);
        regressed |= worse;
        lines.extend(said);
        ids.push(id);
    }
    Ok((ids, lines, regressed))
}

/// What to say of run `id` (record `r`) against `history` (newest first), and whether a
/// figure regressed.
pub fn verdict_lines(r: &Record, id: &str, history: &[Record]) -> (Vec<String>, bool) {
    if history.len() < regress::MIN_RUNS {
        return (Vec::new(), false);
    }
    let summary_figures: Vec<(String, f64, regress::Better)> = r
        .figures
        .iter()
        .map(|(k, v)| (k.clone(), *v, regress::better(k)))
        .collect();
    let past: Vec<_> = history.iter().map(|h| h.figures.clone()).collect();
    let moved = regress::check(&summary_figures, &past);
    let names: Vec<&str> = history
        .iter()
        .take(regress::BASELINE_RUNS)
        .map(|h| h.id.as_str())
        .collect();
    let step = if r.label.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.label)
    };
    let lines = moved
        .iter()
        .map(|m| {
            format!(
                "{}: run {id}{step}: {} {} is {:.1} % {} the median of the {} earlier runs of this test and setup ({}, noise band ±{:.1} %): {}",
                if m.worse { "regression" } else { "improvement" },
                m.figure,
                figure_text(m.value),
                m.change_pct.abs(),
                if m.change_pct < 0.0 { "below" } else { "above" },
                m.runs,
                figure_text(m.median),
                m.noise_pct,
                names.join(", ")
            )
        })
        .collect();
    (lines, moved.iter().any(|m| m.worse))
}

/// A figure with as many decimals as its size wants.
fn figure_text(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trend_figure_is_a_column_or_a_recorded_figure() {
        let r = Record {
            tps: 5.0,
            figures: [("p95 latency".to_string(), 3.0)].into(),
            ..Default::default()
        };
        assert_eq!(figure(&r, &figure_name("p95", &r)), Some(3.0));
        assert_eq!(figure(&r, &figure_name("tps", &r)), Some(5.0));
        assert_eq!(figure(&r, "nosuch"), None);
        assert_eq!(figure(&r, "qps"), None);
    }
}
