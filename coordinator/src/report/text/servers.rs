//! The Servers block: what each database server's own counters say one transaction cost it
//! (rows read and written, reads from storage, cache misses, log, statements) and how busy
//! it was. Written from the result document's targets, so that a run and `report FILE`
//! print the same lines, digit for digit.

use std::fmt::Write as _;

use crate::report::doc::TargetJson;
use crate::servers::ServerJson;

/// The block, empty when no server was read.
pub fn block(targets: &[TargetJson]) -> String {
    let read: Vec<(&str, &ServerJson)> = targets
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.server.as_ref()?)))
        .collect();
    if read.is_empty() {
        return String::new();
    }
    let w = read.iter().map(|(n, _)| n.len()).max().unwrap_or(6).max(6);
    let mut s =
        String::from("\nServers (their own counters, read each interval; per transaction):\n");
    let _ = writeln!(
        s,
        "    {:<w$}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}  {:>10}  {:>8}",
        "target",
        "rows read",
        "rows wrtn",
        "disk reads",
        "miss/1k rd",
        "log KB",
        "stmts",
        "running",
    );
    for (name, sv) in &read {
        let p = &sv.per_tx;
        let _ = writeln!(
            s,
            "    {name:<w$}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}  {:>10}  {:>8}",
            fig(p.rows_read, 2),
            fig(p.rows_written, 2),
            fig(p.server_reads, 3),
            fig(sv.read_misses_per_1000, 2),
            fig(p.log_bytes.map(|b| b / 1024.0), 2),
            fig(p.statements, 2),
            fig(sv.threads_running_avg, 1),
        );
    }
    for (name, sv) in &read {
        s.push_str(&notes(name, w, sv));
    }
    s
}

/// A figure with `decimals`, or "-" where the server does not count it.
fn fig(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.decimals$}"))
}

/// The lines under the table for one server: the query cache where one works, and the
/// intervals without figures with why.
fn notes(name: &str, w: usize, sv: &ServerJson) -> String {
    let mut s = String::new();
    if let Some(pct) = sv.query_cache_hit_pct {
        let _ = writeln!(
            s,
            "    {name:<w$}  query cache: {pct:.1} % of SELECTs answered from it"
        );
    }
    if sv.missing_intervals > 0 {
        let all = sv.intervals + sv.missing_intervals;
        let _ = writeln!(
            s,
            "    {name:<w$}  no figures in {} of {all} intervals ({}): left out of the figures above",
            sv.missing_intervals,
            sv.notes.join("; "),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::PerTx;

    fn target(name: &str, server: Option<ServerJson>) -> TargetJson {
        TargetJson {
            name: name.into(),
            server,
            ..Default::default()
        }
    }

    #[test]
    fn each_read_server_gets_a_row_and_what_it_does_not_count_is_a_dash() {
        let my = ServerJson {
            intervals: 9,
            missing_intervals: 1,
            per_tx: PerTx {
                rows_read: Some(101.25),
                rows_written: Some(4.0),
                server_reads: Some(0.0125),
                log_bytes: Some(2048.0),
                statements: Some(18.0),
            },
            read_misses_per_1000: Some(0.5),
            query_cache_hit_pct: Some(42.0),
            threads_running_avg: Some(3.25),
            notes: vec!["the status read took over a second".into()],
            ..Default::default()
        };
        let pg = ServerJson {
            intervals: 3,
            per_tx: PerTx {
                rows_read: Some(10.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let b = block(&[
            target("mysql-primary", Some(my)),
            target("unread", None),
            target("pg", Some(pg)),
        ]);
        let lines: Vec<&str> = b.lines().collect();
        assert_eq!(lines[0], "");
        assert!(lines[1].starts_with("Servers "), "{b}");
        assert!(
            lines[2].contains("rows read") && lines[2].contains("miss/1k rd"),
            "{b}"
        );
        let cols: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "mysql-primary",
                "101.25",
                "4.00",
                "0.013",
                "0.50",
                "2.00",
                "18.00",
                "3.2"
            ]
        );
        let cols: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(cols, ["pg", "10.00", "-", "-", "-", "-", "-", "-"]);
        assert!(!b.contains("unread"), "{b}");
        assert!(
            b.contains("mysql-primary  query cache: 42.0 % of SELECTs"),
            "{b}"
        );
        assert!(
            b.contains("no figures in 1 of 10 intervals (the status read took over a second)"),
            "{b}"
        );
        assert_eq!(block(&[target("x", None)]), "");
    }
}
