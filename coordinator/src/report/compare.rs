//! `fleetbench compare A.json B.json [...]`: results side by side, with the change in % of
//! TPS, QPS and every latency figure against the first file (the baseline). Run documents
//! are compared as they are; sweeps and scenario documents are lined up by thread count,
//! rate sweeps by offered rate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

pub use super::compare_table::{Change, Comparison};
use super::doc::{Document, Report, Step};
use super::stats::Verdict;
use crate::error::DocError;
use crate::sweep::{Summary, is_rate_sweep};

pub use super::compare_series::{Series, Server};

/// The servers of a run, one per address (two targets naming one server are one), in the
/// order of its targets.
fn servers_of(run: &Report) -> Vec<Server> {
    let configured = run.config.workload.get("targets").and_then(Value::as_array);
    let addr_of = |name: &str| -> String {
        let t = configured.and_then(|ts| ts.iter().find(|t| t["name"] == name));
        match t {
            Some(t) => match (t["socket"].as_str(), t["host"].as_str()) {
                (Some(sock), _) if !sock.is_empty() => sock.to_string(),
                (_, Some(host)) => format!("{host}:{}", t["port"]),
                _ => name.to_string(),
            },
            None => name.to_string(),
        }
    };
    let mut out: Vec<Server> = Vec::new();
    for t in &run.totals.targets {
        let addr = addr_of(&t.name);
        if out.iter().any(|s| s.addr == addr) {
            continue;
        }
        // The connection that says what the server is (files before that have none).
        let c = t
            .connections
            .iter()
            .find(|c| !c.server_version.is_empty())
            .or(t.connections.first());
        out.push(Server {
            addr,
            version: c.map(|c| c.server_version.clone()).unwrap_or_default(),
            vars: c.map(|c| c.server_vars.clone()).unwrap_or_default(),
        });
    }
    out
}

/// Each series' server settings, keyed so that the same server compares with itself:
/// when every series reached one server, `server` (its address and version) and `server
/// VAR`, so that a tuning study's servers line up whatever their addresses; else `server
/// ADDR` (its version) and `server ADDR VAR`. Per series: the servers (their identities)
/// and, apart, their variables.
fn server_settings(series: &[Series]) -> Vec<(BTreeMap<String, String>, BTreeMap<String, String>)> {
    let one_each = series.iter().all(|s| s.servers.len() <= 1);
    series
        .iter()
        .map(|s| {
            let (mut ids, mut vars) = (BTreeMap::new(), BTreeMap::new());
            for srv in &s.servers {
                let (key, identity) = if one_each {
                    let id = if srv.version.is_empty() {
                        srv.addr.clone()
                    } else {
                        format!("{} ({})", srv.addr, srv.version)
                    };
                    ("server".to_string(), Some(id))
                } else {
                    let v = (!srv.version.is_empty()).then(|| srv.version.clone());
                    (format!("server {}", srv.addr), v)
                };
                if let Some(id) = identity {
                    ids.insert(key.clone(), id);
                }
                for (k, v) in &srv.vars {
                    vars.insert(format!("{key} {k}"), v.clone());
                }
            }
            (ids, vars)
        })
        .collect()
}

/// Reads and checks a result document written by `--json`.
pub fn load(path: &Path) -> Result<Document, DocError> {
    let name = path.display().to_string();
    let bytes = fleetbench_model::capped::read(path, "", fleetbench_model::capped::RESULT_CAP)?;
    Document::from_slice(&bytes).map_err(|e| DocError::Format(name, e.to_string()))
}

/// A run document's configuration as `key: value` lines, the test included, without the
/// keys in `skip`.
fn settings_of(run: &Report, skip: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert("test".into(), run.test.clone());
    // The user's labels are what tells two runs apart (--tag buffer_pool=8G).
    for (k, v) in run.meta.iter().flat_map(|m| &m.tags) {
        out.insert(format!("tag {k}"), v.clone());
    }
    // The run's own keys and the workload's are shown alike, as the file holds them.
    for (k, v) in &run.config.entries() {
        if skip.contains(&k.as_str()) {
            continue;
        }
        // Embedded agents listen on a new port every run: not a setting.
        let v = match (k.as_str(), v) {
            ("agents", Value::Array(a)) => Value::Array(
                a.iter()
                    .map(|x| match x.as_str() {
                        Some(s) if s.starts_with("local:") => "local".into(),
                        _ => x.clone(),
                    })
                    .collect(),
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), setting_text(v));
    }
    out
}

/// A setting's structured value as text: a list as its items, a database target as
/// `NAME: USER@ADDRESS/DATABASE (tables 1-4)`, another object as `key=value` pairs.
fn structured_text(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let texts: Vec<String> = items.iter().map(structured_text).collect();
            let sep = if items.iter().any(Value::is_object) {
                "; "
            } else {
                ", "
            };
            texts.join(sep)
        }
        Value::Object(o) if o.contains_key("name") && o.contains_key("database") => {
            let addr = match (o.get("socket").and_then(Value::as_str), o.get("host")) {
                (Some(sock), _) if !sock.is_empty() => sock.to_string(),
                (_, Some(h)) => format!(
                    "{}:{}",
                    h.as_str().unwrap_or(""),
                    o.get("port").map_or(String::new(), |p| p.to_string())
                ),
                _ => String::new(),
            };
            let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("");
            let mut s = format!(
                "{}: {}@{addr}/{}",
                text("name"),
                text("user"),
                text("database")
            );
            if let Some(t) = o.get("tables").and_then(Value::as_array) {
                let n: Vec<u64> = t.iter().filter_map(Value::as_u64).collect();
                s.push_str(&format!(" (tables {})", number_ranges(&n)));
            }
            s
        }
        Value::Object(o) => o
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{k}={}", structured_text(v)))
            .collect::<Vec<_>>()
            .join(" "),
        scalar => setting_text(scalar.clone()),
    }
}

/// `1-4, 7, 9-10` from a list of numbers in order.
fn number_ranges(n: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < n.len() {
        let mut j = i;
        while j + 1 < n.len() && n[j + 1] == n[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", n[i], n[j])
        } else {
            n[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A setting as compared and shown. A whole number reads the same however the file wrote
/// it: files before protocol 9 have `rand_spec_iter` as 12.0, later ones as 12.
fn setting_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "none".into(),
        other => structured_text(&other),
    }
}

/// The series a document holds, labelled with `label` (scenarios add their name).
pub fn series(doc: &Document, label: &str) -> Vec<Series> {
    let rows = |steps: &[Step]| -> Vec<Summary> { steps.iter().map(Summary::from_step).collect() };
    // What varies from step to step is not a setting of the whole sweep; a rate sweep's
    // one thread count is.
    let settings = |steps: &[Step], rows: &[Summary]| {
        let skip: &[&str] = if is_rate_sweep(rows) {
            &["rate"]
        } else {
            &["threads"]
        };
        steps
            .first()
            .map_or_else(BTreeMap::new, |s| settings_of(&s.result, skip))
    };
    match doc {
        Document::Run(run) => vec![Series {
            label: label.to_string(),
            test: run.test.clone(),
            settings: settings_of(run, &[]),
            servers: servers_of(run),
            rows: vec![Summary::from_run(run)],
        }],
        Document::Sweep(sw) => {
            let rows = rows(&sw.steps);
            vec![Series {
                label: label.to_string(),
                test: sw.test.clone(),
                settings: settings(&sw.steps, &rows),
                servers: sw
                    .steps
                    .first()
                    .map_or_else(Vec::new, |s| servers_of(&s.result)),
                rows,
            }]
        }
        Document::Scenarios(sc) => sc
            .scenarios
            .iter()
            .map(|sc| {
                let rows = rows(&sc.steps);
                Series {
                    label: if label.is_empty() {
                        sc.name.clone()
                    } else {
                        format!("{label}:{}", sc.name)
                    },
                    test: sc
                        .steps
                        .first()
                        .map_or_else(|| sc.test.clone(), |s| s.result.test.clone()),
                    settings: settings(&sc.steps, &rows),
                    servers: sc
                        .steps
                        .first()
                        .map_or_else(Vec::new, |s| servers_of(&s.result)),
                    rows,
                }
            })
            .collect(),
    }
}

/// Change from `base` to `new` in percent; None when the baseline is 0.
pub fn pct_change(base: f64, new: f64) -> Option<f64> {
    (base != 0.0).then(|| (new - base) / base * 100.0)
}

/// The whole comparison as text, and the changes it shows (see [`Comparison`]).
pub fn text(series: &[Series]) -> (String, Vec<Change>) {
    let c = Comparison::of(series);
    (c.text(), c.changes())
}

/// The settings in which series differ from the first, each with its value per series
/// (None where a series lacks it). Server variables only some series have (a MariaDB
/// server's beside a PostgreSQL one's) are not listed, only counted: they say nothing about
/// a change of setting, and a cross-engine comparison would open with a screen of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsDiff {
    pub labels: Vec<String>,
    pub rows: Vec<(String, Vec<Option<String>>)>,
    /// Server variables present in some series and missing in others, left out of `rows`.
    pub one_sided: usize,
}

/// The settings in which `series` differ (see [`SettingsDiff`]); the servers' settings
/// by server (see [`server_settings`]).
pub fn settings_diff(series: &[Series]) -> SettingsDiff {
    let servers = server_settings(series);
    let all: Vec<BTreeMap<String, String>> = series
        .iter()
        .zip(&servers)
        .map(|(x, (ids, vars))| {
            let mut all = ids.clone();
            all.extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
            all.extend(x.settings.iter().map(|(k, v)| (k.clone(), v.clone())));
            all
        })
        .collect();
    let is_var = |k: &str| servers.iter().any(|(_, vars)| vars.contains_key(k));
    let mut keys: Vec<&String> = all.iter().flat_map(|s| s.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut diff = SettingsDiff {
        labels: series.iter().map(|x| x.label.clone()).collect(),
        ..Default::default()
    };
    for k in keys {
        let vals: Vec<Option<String>> = all.iter().map(|x| x.get(k).cloned()).collect();
        if vals.iter().all(|v| *v == vals[0]) {
            continue;
        }
        if is_var(k) && vals.iter().any(Option::is_none) {
            diff.one_sided += 1;
            continue;
        }
        diff.rows.push((k.clone(), vals));
    }
    diff
}

impl SettingsDiff {
    /// `Settings that differ (a / b):`, then `    key: base / other / ...` lines and the
    /// count of one-sided server settings; empty when nothing differs.
    pub fn text(&self) -> String {
        if self.rows.is_empty() && self.one_sided == 0 {
            return String::new();
        }
        let mut s = format!("Settings that differ ({}):\n", self.labels.join(" / "));
        for (k, vals) in &self.rows {
            let vals: Vec<&str> = vals.iter().map(|v| v.as_deref().unwrap_or("n/a")).collect();
            let _ = writeln!(s, "    {k}: {}", vals.join(" / "));
        }
        if let Some(note) = self.one_sided_note() {
            let _ = writeln!(s, "    {note}");
        }
        s.push('\n');
        s
    }

    /// `(14 server settings only on one side not shown)`, when there are such.
    pub fn one_sided_note(&self) -> Option<String> {
        let side = if self.labels.len() > 2 {
            "on some sides only"
        } else {
            "only on one side"
        };
        match self.one_sided {
            0 => None,
            1 => Some(format!("(1 server setting {side} not shown)")),
            n => Some(format!("({n} server settings {side} not shown)")),
        }
    }
}

/// The settings in which series differ from the first, as text (see [`SettingsDiff`]).
pub fn differing_settings(series: &[Series]) -> String {
    settings_diff(series).text()
}

/// A `--fail-if` rule: a figure, a direction and a threshold in percent.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub text: String,
    /// The metric key ("tps", "qps", "p99", "avg", "err/s", ...).
    pub key: String,
    /// True for `<` (fails when the change is below the threshold).
    pub below: bool,
    pub pct: f64,
}

/// Parses `tps<-5%`, `p99>+10%`, `lat p95 > 20%`: a figure, `<` or `>`, a percentage.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let bad = || {
        format!(
            "--fail-if '{text}': expected FIGURE<PCT% or FIGURE>PCT%, e.g. 'tps<-5%' or 'p99>+10%' \
             (figures: tps, qps, events/s, min, avg, max, p50, p95, p99, ..., err/s, rows read/tx, disk reads/tx, log KB/tx)"
        )
    };
    let at = text.find(['<', '>']).ok_or_else(bad)?;
    let below = text[at..].starts_with('<');
    let name = text[..at].trim().to_ascii_lowercase();
    let key = name
        .strip_prefix("lat")
        .map(|k| k.trim_start_matches(['_', ' ']))
        .unwrap_or(&name)
        .trim_end_matches(" (ms)")
        .to_string();
    let key = match key.as_str() {
        "events/s" | "eps" | "events_per_sec" => "tps".to_string(),
        "errors" | "err" | "errors_per_sec" => "err/s".to_string(),
        _ => key,
    };
    let pct = text[at + 1..]
        .trim()
        .strip_suffix('%')
        .ok_or_else(bad)?
        .trim()
        .parse::<f64>()
        .map_err(|_| bad())?;
    if key.is_empty() || !pct.is_finite() {
        return Err(bad());
    }
    Ok(Rule {
        text: text.to_string(),
        key,
        below,
        pct,
    })
}

/// The changes that break `rule`: past its threshold and not within noise (a change
/// without a spread is judged on its value alone).
pub fn breaches<'a>(rule: &Rule, changes: &'a [Change]) -> Vec<&'a Change> {
    changes
        .iter()
        .filter(|c| c.key == rule.key)
        .filter(|c| {
            if rule.below {
                c.pct < rule.pct
            } else {
                c.pct > rule.pct
            }
        })
        .filter(|c| c.verdict != Verdict::Noise)
        .collect()
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

/// Loads `paths` and returns their series, refusing documents of different tests unless
/// `force`.
pub fn load_series(paths: &[&Path], force: bool) -> Result<Vec<Series>, DocError> {
    let labels = labels(paths);
    let mut docs = Vec::new();
    for (p, label) in paths.iter().zip(labels) {
        docs.push((load(p)?, label));
    }
    series_of(&docs, force)
}

/// The series of `docs` (each with its label), checked to be of one test unless `force`.
pub fn series_of(docs: &[(Document, String)], force: bool) -> Result<Vec<Series>, DocError> {
    let mut all: Vec<Series> = Vec::new();
    for (doc, label) in docs {
        all.extend(series(doc, label));
    }
    // Every document names its test (a required field).
    if !force
        && let Some(base) = all.first()
        && let Some(other) = all.iter().find(|s| s.test != base.test)
    {
        return Err(DocError::Mismatch(format!(
            "{} ran {} and {} ran {}: figures of different tests do not compare (--force compares them anyway)",
            base.label, base.test, other.label, other.test
        )));
    }
    Ok(all)
}

/// Loads `paths` and returns the comparison text.
pub fn compare_files(paths: &[&Path]) -> Result<String, DocError> {
    let all = load_series(paths, false)?;
    Ok(format!("{}{}", differing_settings(&all), text(&all).0))
}

/// The `--fail-if` lines for `changes`, and whether any rule failed; an error names a rule
/// whose figure these documents do not have.
pub fn fail_if_report(rules: &[Rule], changes: &[Change]) -> Result<(String, bool), String> {
    let mut out = String::new();
    let mut failed = false;
    for rule in rules {
        if !changes.iter().any(|c| c.key == rule.key) {
            return Err(format!(
                "--fail-if '{}': these documents have no figure '{}'",
                rule.text, rule.key
            ));
        }
        let broken = breaches(rule, changes);
        if broken.is_empty() {
            let _ = writeln!(out, "\nfail-if {}: passed", rule.text);
        }
        for c in broken {
            failed = true;
            let hw = c
                .pct_half_width
                .map(|h| format!(" ±{h:.1}%"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "\nfail-if {}: FAILED: {} of {} at {} changed {:+.1}%{hw} ({})",
                rule.text,
                c.metric,
                c.entry,
                c.place(),
                c.pct,
                c.verdict.text()
            );
        }
    }
    Ok((out, failed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Figures, Interval, Sql};
    use crate::sweep::tests::{cpu_sweep, latency, open_doc, run_doc, step, sweep_of};

    fn run(doc: Report) -> Document {
        Document::Run(Box::new(doc))
    }

    /// A run document with an interval series of `tps` values (1 s ticks).
    fn run_with_intervals(tps: &[f64]) -> Document {
        let mean = tps.iter().sum::<f64>() / tps.len() as f64;
        let mut doc = run_doc(16, mean, mean * 20.0, 4.0);
        doc.config.interval_s = 1.0;
        doc.test = "oltp_read_write".into();
        doc.intervals = tps
            .iter()
            .map(|&t| Interval {
                duration_s: 1.0,
                events: t as u64,
                events_per_sec: t,
                latency_ms: latency(1, 4.0, 4.0, 4.0, &[("p95", 4.0)]),
                figures: Figures {
                    sql: Some(Sql {
                        tps: t,
                        qps: t * 20.0,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect();
        run(doc)
    }

    /// The cells of `metric`'s row: two or more spaces apart.
    fn cells(t: &str, metric: &str) -> Vec<String> {
        let line = t
            .lines()
            .find(|l| l.starts_with(&format!("{metric}  ")))
            .unwrap_or_else(|| panic!("{metric} in {t}"));
        line[metric.len()..]
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn percentages() {
        assert_eq!(pct_change(100.0, 110.0), Some(10.0));
        assert_eq!(pct_change(200.0, 150.0), Some(-25.0));
        assert_eq!(pct_change(0.0, 5.0), None);
    }

    #[test]
    fn runs_side_by_side() {
        let a = series(&run(run_doc(16, 100.0, 2000.0, 4.0)), "a.json");
        let b = series(&run(run_doc(16, 120.0, 1800.0, 5.0)), "b.json");
        let (t, changes) = text(&[a[0].clone(), b[0].clone()]);
        assert_eq!(
            cells(&t, "tps"),
            ["100.00", "120.00", "+20.0%", "no spread"]
        );
        assert_eq!(cells(&t, "qps")[2], "-10.0%");
        assert_eq!(cells(&t, "lat p95 (ms)")[2], "+25.0%");
        assert_eq!(cells(&t, "lat p99 (ms)")[2], "+25.0%");
        let tps = changes.iter().find(|c| c.key == "tps").unwrap();
        assert_eq!((tps.pct, tps.verdict), (20.0, Verdict::Unknown));
    }

    #[test]
    fn a_single_run_gets_its_spread_from_its_intervals() {
        let steady: Vec<f64> = (0..20).map(|i| 100.0 + (i % 3) as f64).collect();
        let faster: Vec<f64> = steady.iter().map(|t| t * 1.5).collect();
        let wobbly: Vec<f64> = (0..20).map(|i| if i < 10 { 60.0 } else { 143.0 }).collect();
        let a = series(&run_with_intervals(&steady), "a");
        let b = series(&run_with_intervals(&faster), "b");
        let c = series(&run_with_intervals(&wobbly), "c");
        let (t, _) = text(&[a[0].clone(), b[0].clone(), c[0].clone()]);
        assert!(
            t.contains("95% intervals from a: the interval series (10 batches)"),
            "{t}"
        );
        let tps = cells(&t, "tps");
        assert!(tps[0].starts_with("100.95 ±"), "{t}");
        assert_eq!(tps[3], "better", "{t}");
        assert_eq!(tps[6], "within noise", "{t}");
    }

    #[test]
    fn repeats_are_grouped_and_judged() {
        // Three measurements at 8 threads.
        let sweep = |tps: &[f64]| cpu_sweep((1..).zip(tps).map(|(i, &t)| (8, i, t)));
        let a = series(&sweep(&[100.0, 102.0, 98.0]), "a");
        let same = series(&sweep(&[99.0, 101.0, 100.5]), "same");
        let worse = series(&sweep(&[80.0, 81.0, 79.0]), "worse");
        let (t, changes) = text(&[a[0].clone(), same[0].clone(), worse[0].clone()]);
        assert!(
            t.starts_with("Compared with a (threads: 8 / 8 / 8)\n"),
            "{t}"
        );
        assert!(
            t.contains("a: 3 repeats; same: 3 repeats; worse: 3 repeats"),
            "{t}"
        );
        let tps = cells(&t, "tps");
        assert_eq!(tps[0], "100.00 ±4.97", "{t}");
        assert_eq!(
            (tps[3].as_str(), tps[6].as_str()),
            ("within noise", "worse"),
            "{t}"
        );
        let rule = parse_rule("tps<-5%").unwrap();
        let broken = breaches(&rule, &changes);
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].entry, "worse");
        assert!(breaches(&parse_rule("tps<-25%").unwrap(), &changes).is_empty());
    }

    #[test]
    fn rules_parse_or_say_how_they_should_look() {
        let r = parse_rule("tps<-5%").unwrap();
        assert_eq!((r.key.as_str(), r.below, r.pct), ("tps", true, -5.0));
        let r = parse_rule("lat p99 > +10%").unwrap();
        assert_eq!((r.key.as_str(), r.below, r.pct), ("p99", false, 10.0));
        assert_eq!(parse_rule("events/s<0%").unwrap().key, "tps");
        assert_eq!(parse_rule("lat_p95>1.5%").unwrap().key, "p95");
        for bad in ["tps", "tps<5", "<5%", "tps<x%", "tps=5%"] {
            assert!(parse_rule(bad).unwrap_err().contains("--fail-if"), "{bad}");
        }
    }

    #[test]
    fn whole_numbers_compare_alike_however_written() {
        assert_eq!(setting_text(serde_json::json!(12.0)), "12");
        assert_eq!(setting_text(serde_json::json!(12)), "12");
        assert_eq!(setting_text(serde_json::json!(0.25)), "0.25");
        assert_eq!(setting_text(serde_json::json!("on")), "on");
        assert_eq!(setting_text(serde_json::json!(true)), "true");
    }

    #[test]
    fn differing_settings_are_listed() {
        let mut a = run_doc(16, 100.0, 2000.0, 4.0);
        a.config.workload.insert("tables".into(), 10.into());
        let mut b = a.clone();
        b.config.workload.insert("tables".into(), 20.into());
        let sa = series(&run(a), "a");
        let sb = series(&run(b), "b");
        assert_eq!(
            differing_settings(&[sa[0].clone(), sb[0].clone()]),
            "Settings that differ (a / b):\n    tables: 10 / 20\n\n"
        );
        assert_eq!(differing_settings(&[sa[0].clone(), sa[0].clone()]), "");
    }

    /// An OLTP run against target `name` at `port`, the server reporting `vars`.
    fn on_server(name: &str, port: u16, vars: &[(&str, &str)]) -> Report {
        let mut doc = run_doc(16, 100.0, 2000.0, 4.0);
        doc.config.workload.insert(
            "targets".into(),
            serde_json::json!([{"name": name, "host": "127.0.0.1", "port": port,
                "socket": null, "user": "sbtest", "database": "sbtest", "tables": [1, 2, 3, 5]}]),
        );
        doc.totals.targets = vec![crate::report::doc::TargetJson {
            name: name.into(),
            connections: vec![crate::merge::Connection {
                client: "lean".into(),
                server_version: "10.11.6-MariaDB".into(),
                server_vars: vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }];
        doc
    }

    #[test]
    fn server_settings_are_compared_by_server_not_by_target_name() {
        let vars = [
            ("innodb_doublewrite", "ON"),
            ("innodb_buffer_pool_size", "128M"),
        ];
        let a = series(&run(on_server("default", 3306, &vars)), "sweep.json");
        let b = series(&run(on_server("a", 3306, &vars)), "scen.json");
        // The same server under another name: only the targets differ, as text.
        assert_eq!(
            differing_settings(&[a[0].clone(), b[0].clone()]),
            "Settings that differ (sweep.json / scen.json):\n    targets: default: sbtest@127.0.0.1:3306/sbtest (tables 1-3, 5) / a: sbtest@127.0.0.1:3306/sbtest (tables 1-3, 5)\n\n"
        );
        // A tuning study: two servers, one setting apart. The servers line up, and only
        // the setting that differs is listed beside them.
        let big = [
            ("innodb_doublewrite", "ON"),
            ("innodb_buffer_pool_size", "8G"),
        ];
        let c = series(&run(on_server("default", 3307, &big)), "big.json");
        let t = differing_settings(&[a[0].clone(), c[0].clone()]);
        assert!(
            t.contains(
                "    server: 127.0.0.1:3306 (10.11.6-MariaDB) / 127.0.0.1:3307 (10.11.6-MariaDB)\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("    server innodb_buffer_pool_size: 128M / 8G\n"),
            "{t}"
        );
        assert!(!t.contains("doublewrite") && !t.contains("n/a"), "{t}");
        // Runs over two servers: each server by its address.
        let mut two = on_server("default", 3306, &vars);
        let mut second = on_server("shard2", 3308, &[("innodb_doublewrite", "OFF")])
            .totals
            .targets;
        two.totals.targets.append(&mut second);
        let cfg = &mut two.config.workload;
        cfg.insert(
            "targets".into(),
            serde_json::json!([
                {"name": "default", "host": "127.0.0.1", "port": 3306, "user": "u", "database": "d"},
                {"name": "shard2", "host": "127.0.0.1", "port": 3308, "user": "u", "database": "d"}]),
        );
        let d = series(&run(two), "two.json");
        let t = differing_settings(&[a[0].clone(), d[0].clone()]);
        // The second server is named; its settings, which the other run cannot have, are
        // counted, not listed as n/a.
        assert!(
            t.contains("    server 127.0.0.1:3308: n/a / 10.11.6-MariaDB\n"),
            "{t}"
        );
        assert!(
            t.contains("    (1 server setting only on one side not shown)\n"),
            "{t}"
        );
        assert!(!t.contains("innodb_doublewrite"), "{t}");
        assert!(!t.contains("server 127.0.0.1:3306"), "{t}");
    }

    #[test]
    fn a_cross_engine_comparison_lists_only_the_settings_both_servers_have() {
        let maria = on_server(
            "default",
            3306,
            &[
                ("innodb_buffer_pool_size", "128M"),
                ("max_connections", "151"),
            ],
        );
        let mut pg = on_server(
            "default",
            5432,
            &[
                ("shared_buffers", "128MB"),
                ("work_mem", "4MB"),
                ("max_connections", "100"),
            ],
        );
        pg.totals.targets[0].connections[0].server_version = "PostgreSQL 16.4".into();
        let (a, b) = (
            series(&run(maria), "maria.json"),
            series(&run(pg), "pg.json"),
        );
        let all = [a[0].clone(), b[0].clone()];
        let d = settings_diff(&all);
        assert_eq!(d.one_sided, 3, "{d:?}");
        assert_eq!(
            d.text(),
            "Settings that differ (maria.json / pg.json):\n\
             \x20   server: 127.0.0.1:3306 (10.11.6-MariaDB) / 127.0.0.1:5432 (PostgreSQL 16.4)\n\
             \x20   server max_connections: 151 / 100\n\
             \x20   targets: default: sbtest@127.0.0.1:3306/sbtest (tables 1-3, 5) / default: sbtest@127.0.0.1:5432/sbtest (tables 1-3, 5)\n\
             \x20   (3 server settings only on one side not shown)\n\n"
        );
        // Three series: "on some sides only".
        let three = [a[0].clone(), b[0].clone(), a[0].clone()];
        assert!(
            differing_settings(&three)
                .contains("    (3 server settings on some sides only not shown)\n"),
            "{}",
            differing_settings(&three)
        );
    }

    #[test]
    fn structured_settings_read_as_text() {
        let v = serde_json::json!(["client1:7600", "client2:7600"]);
        assert_eq!(setting_text(v), "client1:7600, client2:7600");
        assert_eq!(setting_text(serde_json::json!([95.0, 99.0])), "95, 99");
        let sock = serde_json::json!([{"name": "db", "host": "x", "port": 1,
            "socket": "/run/mysqld.sock", "user": "u", "database": "d"}]);
        assert_eq!(setting_text(sock), "db: u@/run/mysqld.sock/d");
        assert_eq!(setting_text(serde_json::json!({"a": 1, "b": null})), "a=1");
        assert_eq!(setting_text(serde_json::Value::Null), "none");
        assert_eq!(number_ranges(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
    }

    #[test]
    fn rate_sweeps_line_up_by_offered_rate() {
        let sweep = |threads: u32, points: &[(f64, f64)]| {
            let steps = points
                .iter()
                .map(|&(rate, achieved)| step(open_doc(threads, rate, achieved, 3.0), 1))
                .collect();
            sweep_of("cpu", steps, Some(points.iter().map(|p| p.0).collect()))
        };
        // The same rates at 4 and at 8 threads, given in another order, plus one more.
        let a = series(&sweep(4, &[(100.0, 100.0), (200.0, 150.0)]), "a");
        let b = series(
            &sweep(8, &[(200.0, 198.0), (100.0, 99.0), (400.0, 390.0)]),
            "b",
        );
        let all = [a[0].clone(), b[0].clone()];
        let (t, changes) = text(&all);
        let titles: Vec<&str> = t.lines().filter(|l| l.contains("compared with")).collect();
        assert_eq!(
            titles,
            [
                "offered rate 100/s, compared with a",
                "offered rate 200/s, compared with a",
                "offered rate 400/s, compared with a"
            ],
            "{t}"
        );
        let tps: Vec<&str> = t.lines().filter(|l| l.starts_with("tps")).collect();
        assert!(tps[0].contains("-1.0%"), "{t}");
        assert!(tps[1].contains("+32.0%"), "{t}");
        let c = changes
            .iter()
            .find(|c| c.key == "tps" && c.rate == 200.0)
            .unwrap();
        assert_eq!(c.place(), "offered rate 200/s");
        // The thread count is what differs; the rates are the sweeps' axis, not a setting.
        assert_eq!(
            differing_settings(&all),
            "Settings that differ (a / b):\n    threads: 4 / 8\n\n"
        );
        // Single open-loop runs say their rates in the title.
        let one = series(&run(open_doc(4, 100.0, 99.0, 3.0)), "one");
        let two = series(&run(open_doc(8, 100.0, 99.5, 2.0)), "two");
        let (t, _) = text(&[one[0].clone(), two[0].clone()]);
        assert!(
            t.starts_with("Compared with one (threads: 4 / 8; offered rate: 100/s / 100/s)\n"),
            "{t}"
        );
    }

    #[test]
    fn sweeps_line_up_by_threads() {
        // 8, 16, 32 ... threads, one measurement each.
        let sweep = |tps: &[f64]| cpu_sweep((0..).zip(tps).map(|(i, &t)| (8 << i, 1, t)));
        let a = series(&sweep(&[100.0, 200.0]), "a");
        let b = series(&sweep(&[50.0, 300.0, 400.0]), "b");
        let (t, _) = text(&[a[0].clone(), b[0].clone()]);
        assert!(t.contains("8 threads, compared with a"));
        assert!(t.contains("16 threads, compared with a"));
        assert!(t.contains("32 threads, compared with a"));
        let tps: Vec<&str> = t.lines().filter(|l| l.starts_with("tps")).collect();
        assert!(tps[0].contains("-50.0%"), "{t}");
        assert!(tps[1].contains("+50.0%"), "{t}");
        assert_eq!(
            cells(tps[2], "tps"),
            ["n/a", "400.00", "n/a", "n/a"],
            "no baseline at 32 threads"
        );
        assert!(matches!(
            Document::from_value(serde_json::json!({"format_version": 2, "kind": "other"})),
            Err(crate::report::doc::LoadError::UnknownKind(k)) if k == "other"
        ));
    }
}
