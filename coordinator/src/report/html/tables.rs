//! The page's tables: the summary rows of every series, a run's agents, and the
//! configurations (a sweep's with what differs per step).

use std::fmt::Write;

use serde_json::Value;

use super::markup::{esc, json_text, num, value_text};
use crate::report::compare;
use crate::report::doc::Report;

/// A configuration as a two-column table (nested values as JSON).
pub(super) fn config_table(run: &Report) -> String {
    let mut s = String::from("<table class=\"config\">");
    for (k, v) in &run.config.entries() {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(&value_text(v))
        );
    }
    s.push_str("</table>");
    s
}

/// The configuration of a sweep's steps as one table: `extra` rows first (the sweep's own
/// settings), then every key of the steps' configurations; a key whose value differs
/// between steps (threads, ...) is marked "per step" and lists each step's value in step
/// order.
pub(super) fn steps_config_table(extra: &[(&str, String)], runs: &[&Report]) -> String {
    let configs: Vec<serde_json::Map<String, Value>> =
        runs.iter().map(|r| r.config.entries()).collect();
    let mut keys: Vec<&String> = Vec::new();
    for c in &configs {
        for k in c.keys() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut s = String::from("<table class=\"config\">");
    for (k, v) in extra {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    for k in keys {
        let vals: Vec<&Value> = configs
            .iter()
            .map(|c| c.get(k).unwrap_or(&Value::Null))
            .collect();
        if vals.windows(2).all(|w| w[0] == w[1]) {
            let _ = write!(
                s,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(k),
                esc(&value_text(vals[0]))
            );
        } else {
            let scalar = vals.iter().all(|v| !v.is_object() && !v.is_array());
            let list: Vec<String> = vals.iter().map(|v| value_text(v)).collect();
            let _ = write!(
                s,
                "<tr><th>{} (per step)</th><td>{}</td></tr>",
                esc(k),
                esc(&list.join(if scalar { ", " } else { " | " }))
            );
        }
    }
    s.push_str("</table>");
    s
}

/// The summary table of series rows.
pub(super) fn rows_table(series: &[compare::Series]) -> String {
    let pcts = crate::sweep::percentile_keys(series.iter().flat_map(|s| &s.rows));
    let db = series.iter().flat_map(|s| &s.rows).any(|r| r.qps.is_some());
    let repeated = series.iter().flat_map(|s| &s.rows).any(|r| r.repeat > 1);
    let open = series.iter().flat_map(|s| &s.rows).any(|r| r.rate > 0.0);
    let mut s = format!(
        "<table class=\"rows\"><tr><th>series</th>{}{}<th>threads</th><th>{}</th><th>QPS</th><th>avg ms</th>",
        if repeated { "<th>measurement</th>" } else { "" },
        if open {
            "<th>offered rate</th><th>rate reached</th>"
        } else {
            ""
        },
        if db { "TPS" } else { "events/s" }
    );
    for p in &pcts {
        let _ = write!(s, "<th>{} ms</th>", esc(p));
    }
    s.push_str("<th>max ms</th><th>err/s</th></tr>");
    for se in series {
        for r in &se.rows {
            let open_cells = match (open, r.rate > 0.0) {
                (false, _) => String::new(),
                (true, false) => "<td>-</td><td>-</td>".into(),
                (true, true) => format!(
                    "<td>{}</td><td>{}</td>",
                    num(r.rate),
                    match r.rate_reached {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    }
                ),
            };
            let _ = write!(
                s,
                "<tr><td>{}</td>{}{open_cells}<td>{}</td><td>{:.2}</td><td>{}</td><td>{:.3}</td>",
                esc(&se.label),
                if repeated {
                    format!("<td>{}</td>", r.repeat)
                } else {
                    String::new()
                },
                r.threads,
                r.tps,
                r.qps
                    .map(|q| format!("{q:.2}"))
                    .unwrap_or_else(|| "-".into()),
                r.latency("avg")
            );
            for p in &pcts {
                let _ = write!(s, "<td>{:.3}</td>", r.latency(p));
            }
            let _ = write!(
                s,
                "<td>{:.3}</td><td>{:.2}</td></tr>",
                r.latency("max"),
                r.errors_per_sec
            );
        }
    }
    s.push_str("</table>");
    s
}

/// A run's agents, one row each: address, host, what the host is, threads, rate, p95 and
/// p99, status.
pub(super) fn agents_table(run: &Report) -> String {
    let db = run.totals.figures.sql.is_some();
    let mut s = String::new();
    let _ = write!(
        s,
        "<h2>Per agent</h2><table class=\"rows\"><tr><th>agent</th><th>host</th><th>host facts</th><th>threads</th><th>{}</th><th>p95 ms</th><th>p99 ms</th><th>status</th></tr>",
        if db { "TPS" } else { "events/s" }
    );
    for a in &run.agents {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&a.addr),
            esc(&a.host),
            esc(&crate::report::hosts::facts_line(
                &fleetbench_model::host::HostFacts {
                    cores: a.cores,
                    cpu_model: a.cpu_model.clone(),
                    kernel: a.kernel.clone(),
                    mem_total_bytes: a.mem_total_bytes,
                }
            )),
            a.threads,
            a.events_per_sec,
            json_text(&a.latency_ms.percentiles.get("p95")),
            json_text(&a.latency_ms.percentiles.get("p99")),
            esc(&a.status)
        );
    }
    s.push_str("</table>");
    s
}
