//! The page's tables: the summary rows of every series, a run's agents, and the
//! configurations (a sweep's with what differs per step).

use std::fmt::Write;

use serde_json::Value;

use super::markup::{esc, json_text, num};
use super::names::{config_rows, readable};
use crate::report::compare;
use crate::report::doc::Report;

/// A configuration as a two-column table, values as text ([`config_rows`]).
pub(super) fn config_table(run: &Report) -> String {
    let mut s = String::from("<table class=\"config\">");
    for (k, v) in &config_rows(&run.config.entries()) {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(&readable(v))
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
    let configs: Vec<serde_json::Map<String, Value>> = runs
        .iter()
        .map(|r| config_rows(&r.config.entries()).into_iter().collect())
        .collect();
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
                esc(&readable(vals[0]))
            );
        } else {
            let scalar = vals.iter().all(|v| !v.is_object() && !v.is_array());
            let list: Vec<String> = vals.iter().map(|v| readable(v)).collect();
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
    // TPC-C's headline figure: New-Orders per minute.
    let tpcc = series
        .iter()
        .flat_map(|s| &s.rows)
        .any(|r| r.tpmc.is_some());
    let mut s = format!(
        "<table class=\"rows\"><tr><th>series</th>{}{}<th>threads</th>{}<th>{}</th><th>QPS</th><th>avg ms</th>",
        if repeated { "<th>measurement</th>" } else { "" },
        if open {
            "<th>offered rate</th><th>rate reached</th>"
        } else {
            ""
        },
        if tpcc { "<th>TpmC</th>" } else { "" },
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
            let tpmc_cell = match (tpcc, r.tpmc) {
                (false, _) => String::new(),
                (true, Some(t)) => format!("<td>{t:.2}</td>"),
                (true, None) => "<td>-</td>".into(),
            };
            let _ = write!(
                s,
                "<tr><td>{}</td>{}{open_cells}<td>{}</td>{tpmc_cell}<td>{:.2}</td><td>{}</td><td>{:.3}</td>",
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

/// The percentiles the TPC-C table gives per transaction type, as tpcc-mysql reports
/// them.
const TPCC_PERCENTILES: [&str; 2] = ["p95", "p99"];

/// TPC-C's response times per transaction type: a row per run (`label`, the run), with
/// its TpmC, each type's count, p95, p99 and max in ms, and tpcc-mysql's Constraint Check
/// ([OK] or [NG], as the JSON's `constraints_ok`); None when no run is TPC-C's.
pub(super) fn tpcc_table(runs: &[(String, &Report)]) -> Option<String> {
    let names = fleetbench_model::workloads::tpcc::TXN_NAMES;
    let rows: Vec<(&String, &crate::report::doc::Tpcc)> = runs
        .iter()
        .filter_map(|(l, r)| Some((l, r.totals.figures.tpcc.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let per_type = 2 + TPCC_PERCENTILES.len();
    let mut s = String::from(
        "<table class=\"rows tpcc\"><tr><th rowspan=\"2\">run</th><th rowspan=\"2\">TpmC</th>",
    );
    for n in names {
        let _ = write!(s, "<th colspan=\"{per_type}\">{}</th>", esc(n));
    }
    s.push_str("<th rowspan=\"2\">Constraint Check</th></tr><tr>");
    for _ in names {
        s.push_str("<th>count</th>");
        for p in TPCC_PERCENTILES {
            let _ = write!(s, "<th>{p} ms</th>");
        }
        s.push_str("<th>max ms</th>");
    }
    s.push_str("</tr>");
    for (label, t) in rows {
        let _ = write!(s, "<tr><td>{}</td><td>{:.2}</td>", esc(label), t.tpmc);
        for n in names {
            match t.transactions.get(n).filter(|x| x.count > 0) {
                Some(x) => {
                    let _ = write!(s, "<td>{}</td>", x.count);
                    for p in TPCC_PERCENTILES {
                        let v = x.latency_ms.percentiles.get(p);
                        let _ = match v {
                            Some(v) => write!(s, "<td>{v:.3}</td>"),
                            None => write!(s, "<td>-</td>"),
                        };
                    }
                    let _ = write!(s, "<td>{:.3}</td>", x.latency_ms.max);
                }
                None => {
                    s.push_str("<td>0</td>");
                    for _ in 0..=TPCC_PERCENTILES.len() {
                        s.push_str("<td>-</td>");
                    }
                }
            }
        }
        let _ = write!(
            s,
            "<td class=\"check\">{}</td></tr>",
            if t.constraints_ok { "[OK]" } else { "[NG]" }
        );
    }
    s.push_str("</table>");
    Some(s)
}

/// A run's agents, one row each: its name (as the charts' legends and the text report
/// give it), host, what the host is, threads, rate, p95 and p99, status.
pub(super) fn agents_table(run: &Report) -> String {
    let db = run.totals.figures.sql.is_some();
    let mut s = String::new();
    let _ = write!(
        s,
        "<h2>Per agent</h2><table class=\"rows\"><tr><th>agent</th><th>host</th><th>host facts</th><th>{}s</th><th>{}</th><th>p95 ms</th><th>p99 ms</th><th>status</th></tr>",
        super::pgbench::worker(run),
        if db { "TPS" } else { "events/s" }
    );
    for (a, name) in run.agents.iter().zip(super::names::agent_names(run)) {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&name),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Document, Tpcc, TxnJson};
    use crate::sweep::tests::{latency, run_doc, step, sweep_of};

    /// A TPC-C run at `threads` with this TpmC and New-Order p95 (p99 twice that).
    fn tpcc_run(threads: u32, tpmc: f64, p95: f64) -> Report {
        let mut run = run_doc(threads, tpmc / 60.0 * 2.2, tpmc, p95);
        run.test = "tpcc".into();
        let txn = |count: u64, p95: f64| TxnJson {
            count,
            latency_ms: latency(count, 1.0, 2.0, 40.0, &[("p95", p95), ("p99", p95 * 2.0)]),
            ..Default::default()
        };
        run.totals.figures.tpcc = Some(Tpcc {
            tpmc,
            constraints_ok: true,
            transactions: [
                ("new_order".to_string(), txn(100, p95)),
                ("payment".to_string(), txn(98, 1.5)),
                ("order_status".to_string(), txn(0, 0.0)),
            ]
            .into(),
        });
        run
    }

    #[test]
    fn tpcc_rows_carry_tpmc_and_each_types_percentiles() {
        let doc = sweep_of(
            "tpcc",
            vec![
                step(tpcc_run(4, 1200.0, 12.5), 1),
                step(tpcc_run(8, 2000.5, 20.0), 1),
            ],
            None,
        );
        let series = compare::series(&doc, "tpcc");
        let t = rows_table(&series);
        assert!(
            t.contains("<th>threads</th><th>TpmC</th><th>TPS</th>"),
            "{t}"
        );
        assert!(t.contains("<td>8</td><td>2000.50</td>"), "{t}");
        // Not TPC-C: no TpmC column.
        let plain = sweep_of(
            "oltp_read_write",
            vec![step(run_doc(4, 1.0, 2.0, 3.0), 1)],
            None,
        );
        assert!(!rows_table(&compare::series(&plain, "rw")).contains("TpmC"));

        let Document::Sweep(sw) = &doc else {
            unreachable!()
        };
        let runs: Vec<(String, &Report)> = sw
            .steps
            .iter()
            .map(|s| (format!("{} threads", s.threads), &s.result))
            .collect();
        let t = tpcc_table(&runs).unwrap();
        assert!(t.contains(r#"<th colspan="4">new_order</th>"#), "{t}");
        assert!(
            t.contains("<tr><td>4 threads</td><td>1200.00</td><td>100</td><td>12.500</td><td>25.000</td><td>40.000</td><td>98</td><td>1.500</td>"),
            "{t}"
        );
        // A type that did not run: a count of 0 and no latency.
        assert!(
            t.contains("<td>0</td><td>-</td><td>-</td><td>-</td>"),
            "{t}"
        );
        // The Constraint Check's verdict, last.
        assert!(t.contains("<td class=\"check\">[OK]</td></tr>"), "{t}");
        assert!(tpcc_table(&[("x".into(), &run_doc(4, 1.0, 2.0, 3.0))]).is_none());
        // On the page: the summary's column and the table.
        let page = super::super::page::render(&doc);
        assert!(page.contains("<th>TpmC</th>") && page.contains("href=\"#tpcc\""));
        // A single run's page too.
        let page = super::super::page::render(&Document::Run(Box::new(tpcc_run(4, 1200.0, 12.5))));
        assert!(page.contains("<th>TpmC</th>"), "{page}");
        assert!(
            page.contains("<tr><td>this run</td><td>1200.00</td><td>100</td><td>12.500</td>"),
            "{page}"
        );
    }
}
