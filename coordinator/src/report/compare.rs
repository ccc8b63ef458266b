//! `fleetbench compare A.json B.json [...]`: results side by side, with the change in % of
//! TPS, QPS and every latency figure against the first file (the baseline). Run documents
//! are compared as they are; sweeps and scenario documents are lined up by thread count.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

use crate::sweep::{Summary, percentile_keys};

/// What is wrong with a file given to `compare` or `report`.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    #[error("{0} is not a fleetbench result: {1}")]
    Format(String, String),
}

/// One line of results: a run, a sweep or a scenario, with its measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub rows: Vec<Summary>,
}

/// Reads and checks a result document written by `--json`.
pub fn load(path: &Path) -> Result<Value, DocError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| DocError::Read(name.clone(), e.to_string()))?;
    let doc: Value = serde_json::from_slice(&bytes)
        .map_err(|e| DocError::Format(name.clone(), format!("invalid JSON: {e}")))?;
    let version = doc.get("format_version").and_then(Value::as_u64);
    match version {
        Some(v) if v as u32 <= super::json::FORMAT_VERSION => Ok(doc),
        Some(v) => Err(DocError::Format(
            name,
            format!(
                "format_version {v} is newer than this fleetbench reads ({})",
                super::json::FORMAT_VERSION
            ),
        )),
        None => Err(DocError::Format(name, "no format_version".into())),
    }
}

/// The kind of a document; format 1 had only runs and no `kind` field.
pub fn kind(doc: &Value) -> &str {
    doc.get("kind").and_then(Value::as_str).unwrap_or("run")
}

/// The series a document holds, labelled with `label` (scenarios add their name).
pub fn series(doc: &Value, label: &str) -> Result<Vec<Series>, String> {
    let steps = |v: &Value| -> Result<Vec<Summary>, String> {
        v.as_array()
            .ok_or("no steps")?
            .iter()
            .map(|s| {
                s.get("result")
                    .and_then(Summary::from_run)
                    .ok_or_else(|| "a step without a result".to_string())
            })
            .collect()
    };
    match kind(doc) {
        "run" => Ok(vec![Series {
            label: label.to_string(),
            rows: vec![Summary::from_run(doc).ok_or("a run without totals")?],
        }]),
        "sweep" => Ok(vec![Series {
            label: label.to_string(),
            rows: steps(doc.get("steps").unwrap_or(&Value::Null))?,
        }]),
        "scenarios" => doc
            .get("scenarios")
            .and_then(Value::as_array)
            .ok_or("no scenarios")?
            .iter()
            .map(|sc| {
                let name = sc.get("name").and_then(Value::as_str).unwrap_or("?");
                Ok(Series {
                    label: if label.is_empty() {
                        name.to_string()
                    } else {
                        format!("{label}:{name}")
                    },
                    rows: steps(sc.get("steps").unwrap_or(&Value::Null))?,
                })
            })
            .collect(),
        other => Err(format!("unknown kind '{other}'")),
    }
}

/// Change from `base` to `new` in percent; None when the baseline is 0.
pub fn pct_change(base: f64, new: f64) -> Option<f64> {
    (base != 0.0).then(|| (new - base) / base * 100.0)
}

fn change_text(base: f64, new: f64) -> String {
    match pct_change(base, new) {
        Some(p) => format!("{p:+.1}%"),
        None => "n/a".into(),
    }
}

/// A compared figure: its label and how to read it from a summary.
type Metric = (String, Box<dyn Fn(&Summary) -> f64>);

/// The metrics compared for rows like `rows`.
fn metrics(rows: &[&Summary]) -> Vec<Metric> {
    let mut m: Vec<Metric> = Vec::new();
    let db = rows.iter().any(|r| r.qps.is_some());
    m.push((
        if db { "tps" } else { "events/s" }.into(),
        Box::new(|s: &Summary| s.tps),
    ));
    if db {
        m.push(("qps".into(), Box::new(|s: &Summary| s.qps.unwrap_or(0.0))));
    }
    let mut lat = vec!["min".to_string(), "avg".to_string()];
    lat.extend(percentile_keys(rows.iter().copied()));
    lat.push("max".into());
    for k in lat {
        let key = k.clone();
        m.push((
            format!("lat {k} (ms)"),
            Box::new(move |s: &Summary| s.latency(&key)),
        ));
    }
    if db {
        m.push(("err/s".into(), Box::new(|s: &Summary| s.errors_per_sec)));
    }
    m
}

/// One block: a row per metric, a column per entry, a change column after each entry but
/// the first (the baseline).
fn block(title: &str, entries: &[(&str, Option<&Summary>)]) -> String {
    let present: Vec<&Summary> = entries.iter().filter_map(|e| e.1).collect();
    let metrics = metrics(&present);
    let w0 = metrics.iter().map(|m| m.0.len()).max().unwrap_or(6).max(6);
    let wc = entries
        .iter()
        .map(|e| e.0.len())
        .max()
        .unwrap_or(10)
        .max(10);
    let mut s = format!("{title}\n");
    let _ = write!(s, "{:<w0$}", "metric");
    for (i, (label, _)) in entries.iter().enumerate() {
        let _ = write!(s, "  {label:>wc$}");
        if i > 0 {
            let _ = write!(s, "  {:>8}", "change");
        }
    }
    s.push('\n');
    let base = entries.first().and_then(|e| e.1);
    for (name, get) in &metrics {
        let _ = write!(s, "{name:<w0$}");
        for (i, (_, r)) in entries.iter().enumerate() {
            match r {
                Some(r) => {
                    let _ = write!(s, "  {:>wc$.2}", get(r));
                }
                None => {
                    let _ = write!(s, "  {:>wc$}", "-");
                }
            }
            if i > 0 {
                let c = match (base, r) {
                    (Some(b), Some(r)) => change_text(get(b), get(r)),
                    _ => "-".into(),
                };
                let _ = write!(s, "  {c:>8}");
            }
        }
        s.push('\n');
    }
    s
}

/// The whole comparison: one block when every series is a single run, else one block per
/// thread count (in the order they first appear).
pub fn text(series: &[Series]) -> String {
    if series.iter().all(|s| s.rows.len() == 1) {
        let entries: Vec<(&str, Option<&Summary>)> = series
            .iter()
            .map(|s| (s.label.as_str(), s.rows.first()))
            .collect();
        let threads: Vec<String> = series
            .iter()
            .map(|s| s.rows[0].threads.to_string())
            .collect();
        return block(
            &format!(
                "Compared with {} (threads: {})",
                series[0].label,
                threads.join(" / ")
            ),
            &entries,
        );
    }
    let mut counts: Vec<u32> = Vec::new();
    for s in series {
        for r in &s.rows {
            if !counts.contains(&r.threads) {
                counts.push(r.threads);
            }
        }
    }
    let mut out = String::new();
    for (i, n) in counts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let entries: Vec<(&str, Option<&Summary>)> = series
            .iter()
            .map(|s| (s.label.as_str(), s.rows.iter().find(|r| r.threads == *n)))
            .collect();
        out.push_str(&block(
            &format!("{n} threads, compared with {}", series[0].label),
            &entries,
        ));
    }
    out
}

/// Labels for files: their names, or their paths when two names are equal.
pub fn labels(paths: &[&Path]) -> Vec<String> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect();
    let unique = names
        .iter()
        .enumerate()
        .all(|(i, n)| !names[..i].contains(n));
    if unique {
        names
    } else {
        paths.iter().map(|p| p.display().to_string()).collect()
    }
}

/// Loads `paths` and returns the comparison text.
pub fn compare_files(paths: &[&Path]) -> Result<String, DocError> {
    let labels = labels(paths);
    let mut all = Vec::new();
    for (p, label) in paths.iter().zip(&labels) {
        let doc = load(p)?;
        let s = series(&doc, label).map_err(|e| DocError::Format(p.display().to_string(), e))?;
        all.extend(s);
    }
    Ok(text(&all))
}

/// `fleetbench compare A.json B.json [...]`: prints the comparison; exit 0.
pub fn main(raw: &crate::cli::RawArgs) -> anyhow::Result<i32> {
    let files: Vec<&Path> = raw.words[1..].iter().map(Path::new).collect();
    if files.len() < 2 {
        return Err(crate::UsageError(
            "usage: fleetbench compare BASELINE.json OTHER.json [...]".into(),
        )
        .into());
    }
    print!("{}", compare_files(&files)?);
    Ok(crate::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::tests::run_doc;

    #[test]
    fn percentages() {
        assert_eq!(pct_change(100.0, 110.0), Some(10.0));
        assert_eq!(pct_change(200.0, 150.0), Some(-25.0));
        assert_eq!(pct_change(0.0, 5.0), None);
        assert_eq!(change_text(8.0, 10.0), "+25.0%");
        assert_eq!(change_text(10.0, 10.0), "+0.0%");
    }

    #[test]
    fn runs_side_by_side() {
        let a = series(&run_doc(16, 100.0, 2000.0, 4.0), "a.json").unwrap();
        let b = series(&run_doc(16, 120.0, 1800.0, 5.0), "b.json").unwrap();
        let t = text(&[a[0].clone(), b[0].clone()]);
        let line = |m: &str| {
            t.lines()
                .find(|l| l.starts_with(m))
                .unwrap_or_else(|| panic!("{m} in {t}"))
                .to_string()
        };
        assert!(line("tps ").ends_with("+20.0%"), "{t}");
        assert!(line("qps ").ends_with("-10.0%"), "{t}");
        assert!(line("lat p95 (ms)").ends_with("+25.0%"), "{t}");
        assert!(line("lat p99 (ms)").ends_with("+25.0%"), "{t}");
    }

    #[test]
    fn sweeps_line_up_by_threads() {
        let sweep = |tps: &[f64]| {
            let steps: Vec<Value> = tps
                .iter()
                .enumerate()
                .map(|(i, &t)| serde_json::json!({"result": run_doc(8 << i, t, t * 20.0, 3.0)}))
                .collect();
            serde_json::json!({"format_version": 2, "kind": "sweep", "steps": steps})
        };
        let a = series(&sweep(&[100.0, 200.0]), "a").unwrap();
        let b = series(&sweep(&[50.0, 300.0, 400.0]), "b").unwrap();
        let t = text(&[a[0].clone(), b[0].clone()]);
        assert!(t.contains("8 threads, compared with a"));
        assert!(t.contains("16 threads, compared with a"));
        assert!(t.contains("32 threads, compared with a"));
        let tps: Vec<&str> = t.lines().filter(|l| l.starts_with("tps")).collect();
        assert!(tps[0].ends_with("-50.0%"));
        assert!(tps[1].ends_with("+50.0%"));
        assert!(
            tps[2].ends_with("-"),
            "no baseline at 32 threads: {}",
            tps[2]
        );
        assert!(series(&serde_json::json!({"kind": "other"}), "x").is_err());
    }
}
