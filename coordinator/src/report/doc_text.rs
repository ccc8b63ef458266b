//! `fleetbench report RESULT.json` without `--html`: the text report of a saved result. A
//! run reads as it printed (sysbench 1.0's interval lines and end report, then one row per
//! agent); a sweep or scenario file as its table (a rate sweep's with its offered and
//! achieved rates).

use std::fmt::Write;

use serde_json::Value;

use super::{compare, pct_label};
use crate::sweep::{self, Summary};

/// The text of a result document; an error names what it lacks.
pub fn render(doc: &Value) -> Result<String, String> {
    match compare::kind(doc) {
        "run" => run(doc),
        "sweep" | "scenarios" => {
            let series = compare::series(doc, "")?;
            let named = compare::kind(doc) == "scenarios";
            let rows: Vec<(Option<&str>, &Summary)> = series
                .iter()
                .flat_map(|s| {
                    s.rows
                        .iter()
                        .map(move |r| (named.then_some(s.label.as_str()), r))
                })
                .collect();
            let pcts: Vec<f64> = doc
                .pointer("/steps/0/result/config/percentiles")
                .or_else(|| doc.pointer("/scenarios/0/steps/0/result/config/percentiles"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_else(|| vec![95.0]);
            let by_rate = sweep::is_rate_sweep(rows.iter().map(|r| r.1));
            let title = match doc.get("test").and_then(Value::as_str) {
                Some(t) if by_rate => format!("Rate sweep of {t}:\n"),
                Some(t) => format!("Thread sweep of {t}:\n"),
                None => "Scenarios compared:\n".to_string(),
            };
            Ok(format!("{title}{}", sweep::table(&rows, &pcts)))
        }
        other => Err(format!("unknown kind '{other}'")),
    }
}

fn f(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `fleetbench report RESULT.json`: prints the text report; exit 0.
pub fn main(raw: &crate::cli::RawArgs) -> anyhow::Result<i32> {
    let [_, file] = &raw.words[..] else {
        return Err(crate::UsageError(
            "usage: fleetbench report RESULT.json [--html OUT.html]".into(),
        )
        .into());
    };
    let path = std::path::Path::new(file);
    let doc = compare::load(path)?;
    let text =
        render(&doc).map_err(|e| compare::DocError::Format(path.display().to_string(), e))?;
    print!("{text}");
    Ok(crate::EXIT_OK)
}

/// The run's id, times and tags from its meta (nothing for files written before meta).
fn meta_line(doc: &Value) -> String {
    let Some(m) = doc.get("meta") else {
        return String::new();
    };
    let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
    let mut s = format!(
        "Run {}: {} to {}",
        text("run_id"),
        text("started_at"),
        text("ended_at")
    );
    if let Some(tags) = m.get("tags").and_then(Value::as_object)
        && !tags.is_empty()
    {
        let t: Vec<String> = tags
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        s.push_str(&format!("; tags: {}", t.join(", ")));
    }
    s.push_str("\n\n");
    s
}

/// A run: header line, interval lines, sysbench's end report, agents.
fn run(doc: &Value) -> Result<String, String> {
    let totals = doc.get("totals").ok_or("a run without totals")?;
    let cfg = doc.get("config").unwrap_or(&Value::Null);
    let test = doc.get("test").and_then(Value::as_str).unwrap_or("?");
    let p = cfg
        .get("percentiles")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_f64)
        .unwrap_or(95.0);
    let key = format!("p{}", pct_label(p));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{test}: {} threads over {} agent(s), fleetbench {}\n",
        u(cfg, "threads"),
        cfg.get("agents")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        doc.get("fleetbench_version")
            .and_then(Value::as_str)
            .unwrap_or("?"),
    );
    s.push_str(&meta_line(doc));
    let empty = Vec::new();
    let intervals = doc
        .get("intervals")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for iv in intervals {
        s.push_str(&interval_line(iv, &key, p));
        s.push('\n');
        // An open loop's second line, as the run printed it.
        if let Some(o) = iv.get("open_loop").filter(|v| v.is_object()) {
            let line = interval_line(iv, &key, p);
            let label = line.split(" ]").next().unwrap_or("[ ?s");
            let _ = writeln!(
                s,
                "{label} ] queue length: {}, concurrency: {}",
                u(o, "queue_length"),
                u(o, "concurrency")
            );
        }
    }
    if !intervals.is_empty() {
        s.push('\n');
    }
    let secs = f(totals, "time_s").max(f64::MIN_POSITIVE);
    if let Some(q) = totals.get("sql").filter(|v| v.is_object()) {
        let rate = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / secs);
        s.push_str("SQL statistics:\n    queries performed:\n");
        for (label, k) in [
            ("read", "reads"),
            ("write", "writes"),
            ("other", "others"),
            ("total", "queries"),
        ] {
            let _ = writeln!(s, "{:<41}{}", format!("        {label}:"), u(q, k));
        }
        for (label, n) in [
            ("transactions", u(q, "transactions")),
            ("queries", u(q, "queries")),
            ("ignored errors", u(q, "ignored_errors")),
            ("reconnects", u(q, "reconnects")),
        ] {
            let _ = writeln!(s, "{:<41}{}", format!("    {label}:"), rate(n));
        }
        s.push('\n');
    }
    if let Some(io) = totals.get("file").filter(|v| v.is_object()) {
        s.push_str("File operations:\n");
        for (label, k) in [
            ("reads/s", "reads_per_sec"),
            ("writes/s", "writes_per_sec"),
            ("fsyncs/s", "fsyncs_per_sec"),
        ] {
            let _ = writeln!(s, "{:<34}{:.2}", format!("    {label}:"), f(io, k));
        }
        s.push_str("\nThroughput:\n");
        for (label, k) in [
            ("read, MiB/s", "read_mib_per_sec"),
            ("written, MiB/s", "written_mib_per_sec"),
        ] {
            let _ = writeln!(s, "{:<34}{:.2}", format!("    {label}:"), f(io, k));
        }
        s.push('\n');
    }
    s.push_str("General statistics:\n");
    let _ = writeln!(s, "{:<41}{:.4}s", "    total time:", f(totals, "time_s"));
    let _ = writeln!(
        s,
        "{:<41}{}",
        "    total number of events:",
        u(totals, "events")
    );
    s.push_str("\nLatency (ms):\n");
    let lat = totals.get("latency_ms").unwrap_or(&Value::Null);
    let mut rows = vec![
        ("min".to_string(), f(lat, "min")),
        ("avg".into(), f(lat, "avg")),
        ("max".into(), f(lat, "max")),
    ];
    rows.push((format!("{}th percentile", pct_label(p)), f(lat, &key)));
    rows.push(("sum".into(), f(lat, "sum")));
    for (label, v) in rows {
        let label = format!("         {label}:");
        let _ = writeln!(
            s,
            "{label}{v:>w$.2}",
            w = 53usize.saturating_sub(label.len())
        );
    }
    if let Some(o) = totals.get("open_loop").filter(|v| v.is_object()) {
        let svc = o.get("service_ms").unwrap_or(&Value::Null);
        let _ = writeln!(
            s,
            "\nOpen loop (--rate={}): {} arrivals ({:.2}/s), {:.2} events/s run, {} queued at the end\n    service time (ms): avg {:.2}, {}th percentile {:.2}, max {:.2}",
            crate::report::text::rate_label(f(o, "target_rate")),
            u(o, "arrivals"),
            f(o, "arrivals_per_sec"),
            f(o, "events_per_sec"),
            u(o, "queue_length_end"),
            f(svc, "avg"),
            pct_label(p),
            f(svc, &key),
            f(svc, "max"),
        );
        if o.get("rate_reached") == Some(&Value::Bool(false)) {
            s.push_str("    WARNING: the target rate was not reached\n");
        }
    }
    let fair = totals.get("fairness").unwrap_or(&Value::Null);
    s.push_str("\nThreads fairness:\n");
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    events (avg/stddev):",
        f(fair, "events_avg"),
        f(fair, "events_stddev")
    );
    let _ = writeln!(
        s,
        "{:<35}{:.4}/{:3.2}",
        "    execution time (avg/stddev):",
        f(fair, "execution_time_avg_s"),
        f(fair, "execution_time_stddev_s")
    );
    let agents = doc
        .get("agents")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if !agents.is_empty() {
        let _ = writeln!(
            s,
            "\nPer agent:\n    {:<22}  {:<16}  {:>7}  {:>12}  {:>12}  {:>10}  status",
            "agent",
            "host",
            "threads",
            "evts",
            "evts/s",
            format!("{key} ms")
        );
        for a in agents {
            let _ = writeln!(
                s,
                "    {:<22}  {:<16}  {:>7}  {:>12}  {:>12.2}  {:>10.2}  {}",
                a.get("addr").and_then(Value::as_str).unwrap_or("?"),
                a.get("host").and_then(Value::as_str).unwrap_or("?"),
                u(a, "threads"),
                u(a, "events"),
                f(a, "events_per_sec"),
                a.get("latency_ms").map_or(0.0, |l| f(l, &key)),
                a.get("status").and_then(Value::as_str).unwrap_or("?"),
            );
        }
    }
    Ok(s)
}

/// An interval line as the run printed it, from the document's interval.
fn interval_line(iv: &Value, key: &str, p: f64) -> String {
    let d = f(iv, "duration_s").max(f64::MIN_POSITIVE);
    let t = f(iv, "t_s");
    // A last, partial interval ends between whole seconds: after the one before it.
    // (A millisecond of slack: the seconds were stored as floating point.)
    let label = (t.round().max((t - d + 1e-3).floor() + 1.0)).max(0.0) as u64;
    let lat = iv.get("latency_ms").map_or(0.0, |l| f(l, key));
    if let Some(q) = iv.get("sql").filter(|v| v.is_object()) {
        return format!(
            "[ {label}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {lat:.2} err/s: {:.2} reconn/s: {:.2}",
            u(iv, "threads"),
            f(q, "tps"),
            f(q, "qps"),
            u(q, "reads") as f64 / d,
            u(q, "writes") as f64 / d,
            u(q, "others") as f64 / d,
            pct_label(p),
            u(q, "ignored_errors") as f64 / d,
            u(q, "reconnects") as f64 / d,
        );
    }
    if let Some(io) = iv.get("file").filter(|v| v.is_object()) {
        return format!(
            "[ {label}s ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{}%): {lat:.3}",
            f(io, "read_mib_per_sec"),
            f(io, "written_mib_per_sec"),
            f(io, "fsyncs_per_sec"),
            pct_label(p)
        );
    }
    format!(
        "[ {label}s ] thds: {} eps: {:.2} lat (ms,{}%): {lat:.2}",
        u(iv, "threads"),
        f(iv, "events_per_sec"),
        pct_label(p)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reads_as_it_printed() {
        let mut doc = crate::sweep::tests::run_doc(4, 100.0, 2000.0, 5.5);
        doc["test"] = "oltp_read_write".into();
        doc["config"]["percentiles"] = serde_json::json!([95.0]);
        doc["totals"]["sql"]["transactions"] = 1000.into();
        doc["intervals"] = serde_json::json!([
            {"t_s": 1.0, "duration_s": 1.0, "threads": 4, "events_per_sec": 100.0,
             "latency_ms": {"p95": 5.0}, "sql": {"tps": 100.0, "qps": 2000.0, "reads": 1400, "writes": 400, "others": 200}},
            {"t_s": 1.4, "duration_s": 0.4, "threads": 4, "events_per_sec": 100.0,
             "latency_ms": {"p95": 6.0}, "sql": {"tps": 100.0, "qps": 2000.0, "reads": 560, "writes": 160, "others": 80}}
        ]);
        let t = render(&doc).unwrap();
        assert!(t.contains("[ 1s ] thds: 4 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 5.00"), "{t}");
        assert!(
            t.contains("[ 2s ] thds: 4"),
            "the partial last interval: {t}"
        );
        assert!(
            t.contains("    transactions:                        1000   (100.00 per sec.)"),
            "{t}"
        );
        assert!(
            t.contains("         95th percentile:                        5.50"),
            "{t}"
        );
        assert!(render(&serde_json::json!({"kind": "run"})).is_err());
    }
}
