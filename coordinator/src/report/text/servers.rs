//! The Servers block: what each database server's own counters say one transaction cost it
//! (rows read and written, reads from storage, cache misses, log, statements) and how busy
//! it was. Written from the result document's targets, so that a run and `report FILE`
//! print the same lines, digit for digit.

use std::fmt::Write as _;

use crate::report::doc::TargetJson;
use crate::servers::{HostJson, ServerJson};

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

/// A sweep or scenario step's servers in one line each (`None` when none was read): a
/// server's host CPU (first observer) and its processes' per transaction, rows read and
/// written, reads from storage, and a replica's lag.
pub fn step_lines(targets: &[TargetJson]) -> Vec<String> {
    targets
        .iter()
        .filter_map(|t| {
            let sv = t.server.as_ref()?;
            let p = &sv.per_tx;
            let mut parts = Vec::new();
            if let Some(cpu) = p.cpu_us {
                let process = sv.hosts.iter().find_map(|h| h.process_cpu_us_per_tx);
                parts.push(match process {
                    Some(pr) => format!("CPU {cpu:.1} µs/tx (server processes {pr:.1})"),
                    None => format!("CPU {cpu:.1} µs/tx"),
                });
            }
            if let Some(kb) = p.disk_write_kb {
                parts.push(format!("disk {kb:.2} KB written/tx"));
            }
            for (v, what) in [
                (p.rows_read, "rows read"),
                (p.rows_written, "rows written"),
                (p.server_reads, "storage reads"),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{what} {v:.2}/tx"));
                }
            }
            if let Some(l) = &sv.replica_lag_s {
                parts.push(format!(
                    "replica lag {:.1} s avg, {:.1} s max",
                    l.avg, l.max
                ));
            }
            (!parts.is_empty()).then(|| format!("server {}: {}", t.name, parts.join(", ")))
        })
        .collect()
}

/// What an observer saw of the server's host, on one line.
fn host_line(h: &HostJson) -> String {
    if h.intervals == 0 {
        let why = h.error.as_deref().unwrap_or("no samples");
        return format!("host {}: not observed ({why})", h.addr);
    }
    let mut s = format!("host {}: CPU {} µs/tx", h.addr, fig(h.cpu_us_per_tx, 1));
    match h.process_cpu_us_per_tx {
        Some(p) => {
            let _ = write!(s, " (server processes {p:.1})");
        }
        None => s.push_str(" (no server process found: see --observe-process)"),
    }
    let _ = write!(
        s,
        ", user {:.1} % sys {:.1} % iowait {:.1} % steal {:.1} %",
        h.cpu_user_pct, h.cpu_system_pct, h.cpu_iowait_pct, h.cpu_steal_pct
    );
    match (h.disk_reads_per_tx, h.disk_write_kb_per_tx) {
        (Some(r), Some(w)) => {
            let _ = write!(
                s,
                "; disk {r:.3} reads and {w:.2} KB written/tx (util {} %, await {} ms)",
                fig(h.disk_util_pct, 1),
                fig(h.disk_await_ms, 2)
            );
        }
        _ => s.push_str("; disk: no block statistics"),
    }
    if h.missing_intervals > 0 {
        let _ = write!(s, "; no sample in {} intervals", h.missing_intervals);
    }
    if let Some(e) = &h.error {
        let _ = write!(s, "; lost: {e}");
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
    if let Some(l) = &sv.replica_lag_s {
        let _ = writeln!(
            s,
            "    {name:<w$}  replica lag: {:.1} s on average, {:.1} s at most ({} intervals)",
            l.avg, l.max, l.intervals
        );
    }
    for h in &sv.hosts {
        let _ = writeln!(s, "    {name:<w$}  {}", host_line(h));
    }
    for warning in &sv.warnings {
        let _ = writeln!(s, "    {name:<w$}  {warning}");
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
    fn a_step_says_each_servers_cost_and_a_replicas_lag_on_one_line() {
        let primary = ServerJson {
            per_tx: PerTx {
                rows_read: Some(3.0),
                rows_written: Some(4.0),
                cpu_us: Some(674.14),
                disk_write_kb: Some(14.25),
                ..PerTx::default()
            },
            hosts: vec![HostJson {
                process_cpu_us_per_tx: Some(500.0),
                ..Default::default()
            }],
            ..Default::default()
        };
        let replica = ServerJson {
            replica_lag_s: Some(crate::replication::LagJson {
                avg: 0.5,
                max: 2.25,
                intervals: 4,
            }),
            ..Default::default()
        };
        let lines = step_lines(&[
            target("master", Some(primary)),
            target("unread", None),
            target("slave", Some(replica)),
            target("empty", Some(ServerJson::default())),
        ]);
        assert_eq!(
            lines,
            [
                "server master: CPU 674.1 µs/tx (server processes 500.0), disk 14.25 KB written/tx, rows read 3.00/tx, rows written 4.00/tx",
                "server slave: replica lag 0.5 s avg, 2.2 s max",
            ]
        );
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
                ..PerTx::default()
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
        // An observer's line under its server; one that could not be reached says why.
        let seen = ServerJson {
            hosts: vec![
                HostJson {
                    addr: "db1:7600".into(),
                    intervals: 10,
                    cpu_us_per_tx: Some(412.25),
                    process_cpu_us_per_tx: Some(380.0),
                    cpu_user_pct: 35.0,
                    cpu_system_pct: 10.0,
                    cpu_iowait_pct: 2.0,
                    disk_reads_per_tx: Some(0.02),
                    disk_write_kb_per_tx: Some(1.25),
                    disk_util_pct: Some(12.0),
                    disk_await_ms: Some(0.5),
                    ..Default::default()
                },
                HostJson {
                    addr: "db2:7600".into(),
                    error: Some("connection refused".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let b = block(&[target("db", Some(seen))]);
        assert!(
            b.contains("    db      host db1:7600: CPU 412.2 µs/tx (server processes 380.0), user 35.0 % sys 10.0 % iowait 2.0 % steal 0.0 %; disk 0.020 reads and 1.25 KB written/tx (util 12.0 %, await 0.50 ms)"),
            "{b}"
        );
        assert!(
            b.contains("host db2:7600: not observed (connection refused)"),
            "{b}"
        );
        let replica = ServerJson {
            intervals: 5,
            replica_lag_s: Some(crate::replication::LagJson {
                avg: 0.84,
                max: 3.0,
                intervals: 5,
            }),
            ..Default::default()
        };
        let b = block(&[target("replica", Some(replica))]);
        assert!(
            b.contains("    replica  replica lag: 0.8 s on average, 3.0 s at most (5 intervals)"),
            "{b}"
        );
    }
}
