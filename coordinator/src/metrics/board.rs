//! The board: the live figures of the run in progress (or the last one), which the
//! measured run updates and the HTTP server and the push read.

use std::sync::Mutex;

use fleetbench_model::host::HostFigures;

use super::exposition::render;
use super::series::{AgentSeries, Rates, RunLabels, State, TargetSeries};
use crate::merge::{IntervalPart, MergedInterval, RunResult};

/// The live figures of the run in progress (or the last one), shared by the run and the
/// HTTP server.
#[derive(Debug, Default)]
pub struct Board {
    state: Mutex<State>,
}

impl Board {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A new run begins: the last run's series are dropped.
    pub fn begin(&self, run: RunLabels) {
        self.with(|s| {
            *s = State {
                agents: run
                    .agents
                    .iter()
                    .map(|(a, h)| {
                        let series = AgentSeries {
                            host: h.clone(),
                            ..Default::default()
                        };
                        (a.clone(), series)
                    })
                    .collect(),
                targets: run
                    .targets
                    .iter()
                    .map(|(name, addr)| TargetSeries {
                        name: name.clone(),
                        addr: addr.clone(),
                        ..Default::default()
                    })
                    .collect(),
                run,
                ..Default::default()
            }
        });
    }

    /// One agent's part of an interval, and its host's load over it.
    pub fn agent_interval(&self, addr: &str, part: &IntervalPart, load: Option<&HostFigures>) {
        self.with(|s| {
            let a = s.agents.entry(addr.to_string()).or_default();
            a.events = a.events.saturating_add(part.events);
            a.db.merge(&part.db);
            a.io.merge(&part.io);
            a.latency.merge(&part.latency);
            let mut rates = Rates::of(
                part.events,
                &part.db,
                part.duration,
                part.threads_running,
                &part.latency,
            );
            rates.open = part.open.as_ref().map(|o| (o.queue_length, o.concurrency));
            a.last = Some(rates);
            if !part.txns.is_empty() {
                for (i, t) in part.txns.0.iter().enumerate() {
                    let c = &mut a.txns[i];
                    *c = (
                        c.0.saturating_add(t.count()),
                        c.1.saturating_add(t.failed),
                        c.2.saturating_add(t.retried),
                    );
                    a.txn_per_min[i] = crate::merge::per_sec(t.count(), part.duration) * 60.0;
                }
            }
            if let Some(h) = load {
                a.net_rx = a.net_rx.saturating_add(h.net_rx_bytes);
                a.net_tx = a.net_tx.saturating_add(h.net_tx_bytes);
                a.load = Some(*h);
            }
            // Targets the plan does not name are not ours: left out.
            for (i, d) in &part.targets {
                if let Some(t) = s.targets.get_mut(*i) {
                    t.db.merge(d);
                    let per = |n: u64| crate::merge::per_sec(n, part.duration);
                    let rates = [per(d.reads), per(d.writes), per(d.others)];
                    t.qps.insert(addr.to_string(), rates);
                }
            }
        });
    }

    /// A merged interval: its exact percentiles over all agents.
    pub fn merged(&self, iv: &MergedInterval) {
        let rates = Rates::of(iv.events, &iv.db, iv.duration, iv.threads, &iv.latency);
        self.with(|s| s.merged = Some((iv.seq, iv.end.as_secs_f64(), rates)));
    }

    /// The servers' own figures in the last merged interval.
    pub fn servers(&self, figures: Vec<crate::servers::IntervalServer>) {
        self.with(|s| s.servers = figures);
    }

    /// The run ended: each target's counters become the run's totals (the agents' final
    /// reports), and its statements' latency joins.
    pub fn finish(&self, r: &RunResult) {
        self.with(|s| {
            s.finished = true;
            for (i, db, l) in &r.targets {
                if let Some(t) = s.targets.get_mut(*i) {
                    t.db = db.clone();
                    t.statements = l.clone();
                }
            }
        });
    }

    /// The board in Prometheus' text format, or in OpenMetrics when `openmetrics`.
    pub fn render(&self, openmetrics: bool) -> String {
        self.with(|s| render(s, openmetrics))
    }

    pub fn run_id(&self) -> String {
        self.with(|s| s.run.run_id.clone())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::test_support::{board, latency, part, value};
    use super::*;

    #[test]
    fn counters_add_up_per_agent_and_rates_are_the_last_interval() {
        let b = board();
        b.agent_interval("10.0.0.1:7600", &part(100, &[1000, 2000]), None);
        b.agent_interval("10.0.0.1:7600", &part(50, &[4000]), None);
        b.agent_interval("10.0.0.2:7600", &part(70, &[300]), None);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_events_total{{{base},agent=\"10.0.0.1:7600\"}}")
            ),
            150.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_tps{{{base},agent=\"10.0.0.1:7600\"}}")
            ),
            50.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_tps{{{base},agent=\"10.0.0.2:7600\"}}")
            ),
            70.0
        );
        assert_eq!(
            value(
                &t,
                &format!(
                    "fleetbench_queries_total{{{base},agent=\"10.0.0.1:7600\",kind=\"read\"}}"
                )
            ),
            1500.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_errors_total{{{base},agent=\"10.0.0.1:7600\",code=\"1213\"}}")
            ),
            2.0
        );
        // The histogram: cumulative, +Inf equal to the count, sum in seconds.
        let a1 = format!("{base},agent=\"10.0.0.1:7600\"");
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"0.001\"}}")
            ),
            1.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"0.0025\"}}")
            ),
            2.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_latency_seconds_bucket{{{a1},le=\"+Inf\"}}")
            ),
            3.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_latency_seconds_count{{{a1}}}")),
            3.0
        );
        assert!(
            (value(&t, &format!("fleetbench_latency_seconds_sum{{{a1}}}")) - 0.007).abs() < 1e-9
        );
        // The last interval's percentiles: one event of 4 ms.
        let p99 = value(
            &t,
            &format!("fleetbench_interval_latency_seconds{{{a1},percentile=\"99\"}}"),
        );
        assert!((p99 - 0.004).abs() < 0.00001, "{p99}");
        assert_eq!(
            value(&t, &format!("fleetbench_run_finished{{{base}}}")),
            0.0
        );
        // Text format: a counter's family is named as its samples; no EOF.
        assert!(t.contains("# TYPE fleetbench_events_total counter\n"));
        assert!(!t.contains("# EOF"));
    }

    #[test]
    fn openmetrics_names_counter_families_without_total_and_ends_with_eof() {
        let b = board();
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), None);
        let t = b.render(true);
        assert!(t.contains("# TYPE fleetbench_events counter\n"));
        assert!(t.contains("# TYPE fleetbench_latency_seconds histogram\n"));
        assert!(t.ends_with("# EOF\n"));
        // Every family is declared once, and every sample line belongs to a declared one.
        let families: Vec<&str> = t
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let mut dedup = families.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), families.len());
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split('{').next().unwrap();
            assert!(
                families.iter().any(|f| name == *f
                    || name == format!("{f}_total")
                    || name == format!("{f}_bucket")
                    || name == format!("{f}_sum")
                    || name == format!("{f}_count")),
                "{name}"
            );
        }
    }

    #[test]
    fn merged_percentiles_host_load_and_targets_appear_when_known() {
        let b = board();
        let t = b.render(false);
        assert!(!t.contains("fleetbench_merged_latency_seconds{"));
        assert!(!t.contains("fleetbench_host_cpu_busy_percent{"));
        let load = HostFigures {
            cpu_busy_pct: 93.5,
            net_rx_bytes: 1000,
            net_tx_bytes: 10,
            cores: 8,
            disk: Some(fleetbench_model::host::DiskFigures {
                util_pct: 41.5,
                queue_depth: 2.25,
            }),
            ..Default::default()
        };
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), Some(&load));
        b.agent_interval("10.0.0.1:7600", &part(10, &[500]), Some(&load));
        let iv = MergedInterval {
            seq: 3,
            end: Duration::from_secs(3),
            duration: Duration::from_secs(1),
            events: 20,
            latency: latency(&[500, 9000]),
            ..Default::default()
        };
        b.merged(&iv);
        let mut r = RunResult::default();
        r.targets.push((1, part(5, &[]).db, latency(&[200])));
        b.finish(&r);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        let a1 = format!("{base},agent=\"10.0.0.1:7600\"");
        assert_eq!(
            value(&t, &format!("fleetbench_host_cpu_busy_percent{{{a1}}}")),
            93.5
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_host_network_receive_bytes_total{{{a1}}}")
            ),
            2000.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_host_disk_util_percent{{{a1}}}")),
            41.5
        );
        assert_eq!(
            value(&t, &format!("fleetbench_host_disk_queue_depth{{{a1}}}")),
            2.25
        );
        assert_eq!(value(&t, &format!("fleetbench_interval{{{base}}}")), 3.0);
        let max = value(
            &t,
            &format!("fleetbench_merged_latency_seconds{{{base},percentile=\"100\"}}"),
        );
        assert!((max - 0.009).abs() < 0.00001, "{max}");
        assert_eq!(
            value(
                &t,
                &format!(
                    "fleetbench_target_queries_total{{{base},target=\"b\",target_addr=\"h1:3306\",kind=\"write\"}}"
                )
            ),
            20.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_run_finished{{{base}}}")),
            1.0
        );
        // A new run drops the last one's series.
        b.begin(RunLabels {
            run_id: "r2".into(),
            ..Default::default()
        });
        let t = b.render(false);
        assert!(!t.contains("r1") && !t.contains("fleetbench_target_queries_total{"));
    }

    #[test]
    fn targets_are_live_from_the_agents_intervals_and_final_at_the_end() {
        let b = board();
        let mut p1 = part(10, &[500]);
        p1.targets = vec![(0, p1.db.clone())];
        let mut p2 = part(20, &[500]);
        // An agent whose tables are on both targets; an index the plan does not name.
        p2.targets = vec![
            (0, part(5, &[]).db),
            (1, part(15, &[]).db),
            (9, p2.db.clone()),
        ];
        b.agent_interval("10.0.0.1:7600", &p1, None);
        b.agent_interval("10.0.0.2:7600", &p2, None);
        let t = b.render(false);
        let base = r#"run_id="r1",tag_buffer_pool="8G",tag_proxy="my\"cat""#;
        let ta = format!("{base},target=\"a\",target_addr=\"h0:3306\"");
        let tb = format!("{base},target=\"b\",target_addr=\"h1:3306\"");
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{ta},kind=\"read\"}}")
            ),
            150.0
        );
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{tb},kind=\"read\"}}")
            ),
            150.0
        );
        // Rates: both agents' last intervals (1 s each) summed.
        assert_eq!(
            value(&t, &format!("fleetbench_target_qps{{{ta},kind=\"write\"}}")),
            60.0
        );
        assert!(!t.contains("target=\"#9\""));
        assert!(!t.contains("fleetbench_target_statement_latency_seconds{"));
        // The end: the final reports' totals replace what the intervals added up to.
        let mut r = RunResult::default();
        r.targets.push((0, part(100, &[]).db, latency(&[200])));
        b.finish(&r);
        let t = b.render(false);
        assert_eq!(
            value(
                &t,
                &format!("fleetbench_target_queries_total{{{ta},kind=\"read\"}}")
            ),
            1000.0
        );
        assert!(t.contains(&format!(
            "fleetbench_target_statement_latency_seconds{{{ta},percentile=\"99\"}}"
        )));
    }

    #[test]
    fn the_servers_figures_of_the_last_interval_are_gauges() {
        let b = board();
        assert!(!b.render(false).contains("fleetbench_server_"));
        b.servers(vec![crate::servers::IntervalServer {
            target: "db".into(),
            transactions: 100,
            per_tx: crate::servers::PerTx {
                rows_read: Some(12.5),
                ..Default::default()
            },
            threads_running: Some(3.0),
            replica_lag_s: Some(1.5),
            ..Default::default()
        }]);
        let t = b.render(false);
        assert!(t.contains("# TYPE fleetbench_server_per_tx gauge"), "{t}");
        let per_tx = t
            .lines()
            .find(|l| l.starts_with("fleetbench_server_per_tx{"))
            .unwrap();
        assert!(
            per_tx.contains("target=\"db\"") && per_tx.contains("figure=\"rows_read\""),
            "{t}"
        );
        assert_eq!(value(&t, "fleetbench_server_per_tx{"), 12.5);
        assert_eq!(value(&t, "fleetbench_server_threads_running{"), 3.0);
        assert_eq!(value(&t, "fleetbench_server_replica_lag_seconds{"), 1.5);
        assert!(!t.contains("fleetbench_server_read_misses_per_1000"), "{t}");
    }

    #[test]
    fn tpcc_runs_get_their_transactions_by_type() {
        let b = Board::default();
        b.begin(RunLabels {
            run_id: "t".into(),
            workload: "tpcc".into(),
            ..Default::default()
        });
        let mut p = part(4, &[1000, 1000, 1000, 1000]);
        p.txns.0[0] = crate::merge::TxnFigures {
            retried_txns: 0,
            skipped: 0,
            latency: latency(&[1000, 1000, 1000]),
            failed: 1,
            retried: 2,
            rolled_back: 0,
        };
        p.txns.0[1].latency = latency(&[500]);
        b.agent_interval("a:1", &p, None);
        b.agent_interval("a:1", &p, None);
        let t = b.render(false);
        let l = r#"run_id="t",agent="a:1",type="new_order""#;
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_transactions_total{{{l}}}")),
            6.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_failed_total{{{l}}}")),
            2.0
        );
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_retried_total{{{l}}}")),
            4.0
        );
        // 3 New-Orders in a 1 s interval: 180 a minute.
        assert_eq!(
            value(&t, &format!("fleetbench_tpcc_per_minute{{{l}}}")),
            180.0
        );
        assert!(!board().render(false).contains("fleetbench_tpcc_"));
    }
}
