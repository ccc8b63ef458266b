//! `fleetbench pgbench`'s text from its result document: `report FILE` (and `runs show`)
//! of a pgbench run prints pgbench's report as the run printed it, banner first, from
//! `totals.pgbench` and the run's configuration; then fleetbench's blocks, which the run
//! itself prints from the same document ([`blocks_after_agents`], [`percentiles_line`]):
//! the latency percentiles, the agents counted in clients, the servers, and the client
//! hosts with their saturation warning.

use std::fmt::Write;
use std::time::Duration;

use fleetbench_model::workloads::pgbench::{Builtin, QueryMode, Script};

use super::pgbench::{CommandLine, Figures, RunFacts, ScriptFigures, run_report};
use crate::plan::pgbench::PgbenchArgs;
use crate::report::doc::{LatencyMs, PgbenchTotals, Report, TargetJson};
use crate::report::hosts;

/// The whole text of a pgbench run's result, or None for another test's or for a pgbench
/// result written before its report's facts were kept (it then reads in sysbench's layout).
pub fn render(doc: &Report) -> Option<String> {
    let p = doc.totals.pgbench.as_ref()?;
    let args = args_of(doc, p)?;
    let facts = RunFacts {
        server_version: server_version(&doc.totals.targets),
        scale: u32::try_from(doc.config.workload.get("scale")?.as_u64()?).ok()?,
        conn_time: Duration::from_secs_f64(p.initial_connection_time_ms?.max(0.0) / 1e3),
    };
    let mut s = run_report(&args, &facts, &figures_of(doc, p));
    let _ = write!(s, "\n{}", percentiles_line(&doc.totals.latency_ms));
    let key = format!(
        "p{}",
        crate::report::pct_label(doc.config.percentiles.first().copied().unwrap_or(95.0))
    );
    s.push_str(&crate::report::doc_agents::agents(
        &doc.agents,
        &doc.agent_names(),
        &key,
        "clients",
    ));
    s.push_str(&blocks_after_agents(doc));
    Some(s)
}

/// The server's version as the first connection recorded it (as the run's banner took it).
pub fn server_version(targets: &[TargetJson]) -> String {
    targets
        .iter()
        .flat_map(|t| &t.connections)
        .next()
        .map(|c| c.server_version.clone())
        .unwrap_or_default()
}

/// fleetbench's line after pgbench's report: the latency percentiles and the maximum,
/// exact to HDR precision over every agent's transactions (as the result rounds them).
pub fn percentiles_line(l: &LatencyMs) -> String {
    let mut s = String::from("latency percentiles (ms):");
    for p in ["p50", "p90", "p95", "p99", "p99.9"] {
        let _ = write!(s, " {p} {:.3},", l.get(p).unwrap_or(0.0));
    }
    let _ = writeln!(s, " max {:.3}", l.max);
    s
}

/// After the per-agent block: the servers' block and the client hosts' (their load, a
/// warning for each saturated host, the client's CPU per transaction).
pub fn blocks_after_agents(doc: &Report) -> String {
    let mut s = super::servers::block(&doc.totals.targets);
    let mut summary = hosts::of_doc(doc);
    // The client's CPU per transaction, as the result keeps it per agent.
    for h in &mut summary {
        if let Some(a) = doc.agents.iter().find(|a| a.addr == h.addr) {
            let us = a.host_load.as_ref().and_then(|l| l.agent_cpu_us_per_event);
            h.agent_cpu_s = us.map_or(0.0, |us| us * a.events as f64 / 1e6);
        }
    }
    s.push_str(&hosts::block(&summary, super::AGENTS_LISTED, false));
    let events: Vec<(String, u64)> = doc
        .agents
        .iter()
        .map(|a| (a.addr.clone(), a.events))
        .collect();
    s.push_str(&hosts::client_cpu_line(&summary, &events));
    s
}

/// The scripts of the run's configuration with their weights: a built-in one by its name,
/// a file by its name and (from `totals.pgbench`) its text.
fn scripts_of(doc: &Report, p: &PgbenchTotals) -> Option<Vec<(Script, u32)>> {
    let listed = doc.config.workload.get("scripts")?.as_array()?;
    if listed.len() != p.scripts.len() {
        return None;
    }
    listed
        .iter()
        .zip(&p.scripts)
        .map(|(s, figures)| {
            let name = s.get("name")?.as_str()?;
            let script = if s.get("file").and_then(|f| f.as_bool()) == Some(true) {
                Script::File {
                    name: name.to_string(),
                    text: figures.file_text.clone()?,
                }
            } else {
                Script::Builtin(Builtin::find(name).ok()?)
            };
            Some((script, u32::try_from(s.get("weight")?.as_u64()?).ok()?))
        })
        .collect()
}

/// The command line's options again, as far as the report shows them, from the run's
/// configuration (`config`: clients, -T or -t, -P, -R, scale, scripts, query mode, tries)
/// and `totals.pgbench` (-j, -L, -r, -C, --failures-detailed, the files' texts).
fn args_of(doc: &Report, p: &PgbenchTotals) -> Option<PgbenchArgs> {
    let cfg = &doc.config;
    let w = &cfg.workload;
    let mut a =
        crate::plan::pgbench::parse(&[], &|k| (k == "USER").then(|| "report".into())).ok()?;
    a.scripts = scripts_of(doc, p)?;
    a.mode = QueryMode::parse(w.get("query_mode")?.as_str()?)?;
    a.max_tries = u32::try_from(w.get("max_tries")?.as_u64()?).ok()?;
    a.clients = cfg.threads;
    a.jobs = p.threads?;
    a.duration = (cfg.time_s > 0).then_some(cfg.time_s);
    a.transactions = (cfg.time_s == 0).then(|| cfg.events / u64::from(cfg.threads.max(1)));
    a.progress = (cfg.report_interval_s > 0).then_some(cfg.report_interval_s);
    a.rate = (cfg.rate() > 0.0).then(|| cfg.rate());
    a.latency_limit_ms = p.latency_limit_ms;
    a.per_statement = p.scripts.iter().any(|s| !s.commands.is_empty());
    a.failures_detailed = p.failures_detailed;
    a.connect_each = p.average_connection_time_ms.is_some();
    Some(a)
}

/// The report's figures from `totals.pgbench` (the run's time from `totals`).
fn figures_of(doc: &Report, p: &PgbenchTotals) -> Figures {
    Figures {
        processed: p.processed,
        failed: p.failed,
        serialization: p.serialization_failures,
        deadlocks: p.deadlock_failures,
        retried: p.retried,
        retries: p.retries,
        skipped: p.skipped,
        avg_ms: p.latency_avg_ms,
        stddev_ms: p.latency_stddev_ms,
        lag_ms: p.schedule_lag_ms.as_ref().map(|l| (l.avg, l.max)),
        late: p.late,
        aborted: p.clients_aborted,
        secs: doc.totals.time_s,
        connect_ms: p.average_connection_time_ms,
        scripts: p
            .scripts
            .iter()
            .map(|s| ScriptFigures {
                processed: s.processed,
                failed: s.failed,
                retried: s.retried,
                retries: s.retries,
                skipped: s.skipped,
                avg_ms: s.latency_avg_ms,
                stddev_ms: s.latency_stddev_ms,
                commands: s
                    .commands
                    .iter()
                    .map(|c| CommandLine {
                        avg_ms: c.latency_avg_ms,
                        failures: c.failures,
                        retries: c.retries,
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::pgbench::parse;
    use crate::report::doc::{Agent, HostLoad, Interval, IntervalHost};

    fn args(line: &str) -> PgbenchArgs {
        let v: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&v, &|k| (k == "USER").then(|| "me".to_string())).unwrap()
    }

    /// The result document of a run of `line` with figures `f`, as `fleetbench pgbench`
    /// writes it: the plan's configuration and `totals.pgbench`.
    fn doc_of(line: &str, f: &Figures, facts: &RunFacts) -> Report {
        doc_of_args(&args(line), f, facts)
    }

    fn doc_of_args(a: &PgbenchArgs, f: &Figures, facts: &RunFacts) -> Report {
        let mut doc = crate::sweep::tests::run_doc(a.clients, 100.0, 0.0, 2.0);
        doc.test = "pgbench".into();
        doc.config.threads = a.clients;
        doc.config.time_s = a.duration.unwrap_or(0);
        doc.config.events = a.transactions.map_or(0, |t| t * u64::from(a.clients));
        doc.config.report_interval_s = a.progress.unwrap_or(0);
        doc.config.rate = Some(a.rate.unwrap_or(0.0));
        let cfg = fleetbench_model::spec::Workload::Pgbench(Box::new(a.config(
            facts.scale,
            fleetbench_model::workloads::pgbench::Step::Check,
        )));
        doc.config.workload = cfg.fields().into_iter().collect();
        doc.totals.time_s = f.secs;
        doc.totals.targets = vec![TargetJson {
            name: "postgres".into(),
            connections: vec![crate::merge::Connection {
                server_version: facts.server_version.clone(),
                ..Default::default()
            }],
            ..Default::default()
        }];
        let mut p = super::super::pgbench::json(a, f);
        p.initial_connection_time_ms = Some(facts.conn_time.as_secs_f64() * 1e3);
        doc.totals.pgbench = Some(p);
        doc
    }

    fn facts() -> RunFacts {
        RunFacts {
            server_version: "PostgreSQL 15.8 (Debian 15.8-0+deb12u1)".into(),
            scale: 3,
            conn_time: Duration::from_micros(12_345),
        }
    }

    /// Figures with something in every count, two scripts and their commands.
    fn busy(scripts: usize, commands: &[usize]) -> Figures {
        Figures {
            processed: 1234,
            failed: 5,
            serialization: 4,
            deadlocks: 1,
            retried: 7,
            retries: 11,
            skipped: 3,
            avg_ms: 1.234,
            stddev_ms: 0.567,
            lag_ms: Some((0.125, 2.5)),
            late: Some(9),
            aborted: 0,
            secs: 2.000_123,
            connect_ms: None,
            scripts: (0..scripts)
                .map(|i| ScriptFigures {
                    processed: 600 + i as u64 * 34,
                    failed: i as u64,
                    avg_ms: 1.0 + i as f64,
                    stddev_ms: 0.25,
                    commands: (0..commands.get(i).copied().unwrap_or(0))
                        .map(|c| CommandLine {
                            avg_ms: 0.001 * c as f64,
                            failures: c as u64 % 2,
                            retries: c as u64,
                        })
                        .collect(),
                    ..ScriptFigures::default()
                })
                .collect(),
        }
    }

    /// Whatever the options, the text from the document is the run's report line for line.
    #[test]
    fn the_document_reprints_the_run_s_report() {
        for (line, f) in [
            ("-c 4 -j 2 -T 3 -P 1", busy(1, &[])),
            ("-c 2 -t 50 -M prepared -S", busy(1, &[])),
            ("-c 3 -t 7 -r --max-tries=3", busy(1, &[11])),
            (
                "-c 8 -j 4 -T 10 -R 100 -L 5 -b select-only@3 -N --max-tries 5 --failures-detailed -r",
                busy(2, &[2, 9]),
            ),
            ("-T 2 -L 1 -M extended -N", busy(1, &[])),
        ] {
            let a = args(line);
            let live = run_report(&a, &facts(), &f);
            let doc = doc_of(line, &f, &facts());
            let text = render(&doc).unwrap_or_else(|| panic!("{line}: no pgbench layout"));
            assert!(text.starts_with(&live), "{line}:\n{live}\n---\n{text}");
        }
    }

    /// A script file (its commands listed by `-r` from its text, a multi-line statement by
    /// its first line) beside a built-in one, and `-C`'s connection time.
    #[test]
    fn a_script_file_and_a_connection_per_transaction_reprint_too() {
        let mut a = args("-c 2 -T 2 -r -C -S");
        let text = "\\set aid random(1, 10)\nSELECT abalance\n  FROM pgbench_accounts WHERE aid = :aid \\gset\n\\sleep 1 ms\n";
        a.scripts.push((
            Script::File {
                name: "my.sql".into(),
                text: text.into(),
            },
            2,
        ));
        let mut f = busy(2, &[2, 3]);
        f.connect_ms = Some(1.75);
        let live = run_report(&a, &facts(), &f);
        assert!(live.contains("\nSQL script 2: my.sql\n"), "{live}");
        assert!(
            live.contains("average connection time = 1.750 ms"),
            "{live}"
        );
        let doc = doc_of_args(&a, &f, &facts());
        let p = doc.totals.pgbench.as_ref().unwrap();
        assert_eq!(p.scripts[1].file_text.as_deref(), Some(text));
        assert_eq!(p.average_connection_time_ms, Some(1.75));
        let again = render(&doc).expect("pgbench's layout");
        assert!(again.starts_with(&live), "{live}\n---\n{again}");
        // A file's text missing (a result that did not keep it): not in pgbench's layout.
        let mut lost = doc.clone();
        if let Some(p) = lost.totals.pgbench.as_mut() {
            p.scripts[1].file_text = None;
        }
        assert!(render(&lost).is_none());
    }

    #[test]
    fn the_reprint_adds_percentiles_agents_in_clients_and_hosts() {
        let mut doc = doc_of("-c 4 -T 3", &busy(1, &[]), &facts());
        doc.totals.latency_ms.percentiles = [("p50", 1.0), ("p90", 2.0), ("p95", 2.5)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .chain([("p99".to_string(), 3.25), ("p99.9".to_string(), 4.0)])
            .collect();
        doc.totals.latency_ms.max = 9.5;
        doc.agents = vec![Agent {
            addr: "10.0.0.1:7600".into(),
            host: "c1".into(),
            threads: 4,
            events: 1234,
            status: "completed".into(),
            host_load: Some(HostLoad {
                cpu_busy_pct_avg: 95.0,
                cpu_busy_pct_peak: 99.0,
                run_queue_peak: 9,
                cores: 2,
                agent_cpu_us_per_event: Some(40.0),
                saturated_intervals: vec![1, 2],
                ..HostLoad::default()
            }),
            ..Agent::default()
        }];
        doc.intervals = (0..3)
            .map(|_| Interval {
                agent_hosts: vec![Some(IntervalHost::default())],
                ..Interval::default()
            })
            .collect();
        let text = render(&doc).unwrap();
        assert!(
            text.contains(
                "\nlatency percentiles (ms): p50 1.000, p90 2.000, p95 2.500, p99 3.250, p99.9 4.000, max 9.500\n"
            ),
            "{text}"
        );
        assert!(text.contains("\nPer agent:\n    agent "), "{text}");
        let head = text.lines().find(|l| l.contains("evts/s")).unwrap();
        assert!(
            head.contains("clients") && !head.contains("threads"),
            "{head}"
        );
        assert!(text.contains("\nClient hosts ("), "{text}");
        assert!(
            text.contains("WARNING: agent 10.0.0.1:7600: its host c1 was saturated (CPU busy 99 % at peak, run queue 9 on 2 cores) in 2 of 3 intervals (1-2)"),
            "{text}"
        );
        assert!(
            text.contains("Client CPU: 40.0 µs per transaction"),
            "{text}"
        );
    }

    #[test]
    fn other_results_and_older_pgbench_ones_are_not_in_pgbench_s_layout() {
        let plain = crate::sweep::tests::run_doc(4, 100.0, 0.0, 2.0);
        assert!(render(&plain).is_none());
        let mut old = doc_of("-c 2 -T 2", &busy(1, &[]), &facts());
        if let Some(p) = old.totals.pgbench.as_mut() {
            p.threads = None;
            p.initial_connection_time_ms = None;
        }
        assert!(render(&old).is_none());
        // Its JSON, read back: the fields are optional.
        let text = serde_json::to_string(&old).unwrap();
        assert!(!text.contains("initial_connection_time_ms"), "{text}");
    }
}
