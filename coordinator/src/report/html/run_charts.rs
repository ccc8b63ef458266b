//! Charts of one run document over time: TPS (or events/s), QPS, TpmC, latency, each
//! agent's rate and its host's load (agents named as in the tables), and the run's spectrum; and
//! a sweep's steps over time, a line per step.

use super::names::agent_names;
use super::spectrum::{step_label, steps_spectrum};
use super::svg::{Chart, Line, XAxis};
use crate::report::doc::{Interval, IntervalHost, Report};

/// Bytes in a GiB, for the memory chart.
const GIB: f64 = (1u64 << 30) as f64;

/// Charts of one run document: TPS (or events/s), QPS, latency and per-agent rate over
/// time, and the spectrum. TPS and QPS differ by an order of magnitude, so each has its
/// own chart and axis.
pub fn run_charts(run: &Report, prefix: &str) -> Vec<Chart> {
    let t = TimeCharts::new(run, prefix);
    let mut charts = t.throughput();
    charts.extend(t.tpcc());
    charts.push(t.latency());
    charts.push(t.per_agent());
    charts.extend(t.hosts());
    charts.extend(t.disks());
    charts.extend(t.servers());
    charts.push(steps_spectrum(
        &format!("{prefix}spectrum"),
        "Latency percentile spectrum",
        &[(step_label(run, None, false), run)],
    ));
    charts
}

/// A run's charts over time: its intervals, and how their charts are named and drawn.
struct TimeCharts<'a> {
    run: &'a Report,
    /// Prefixed to every chart's id (a sweep's step has its own).
    prefix: &'a str,
    /// A SQL workload: transactions rather than events.
    db: bool,
    /// Whole seconds (the usual 1 s tick) get whole-second ticks.
    whole: bool,
    /// Each agent's name in the legends, in the run's agent order.
    names: Vec<String>,
}

impl<'a> TimeCharts<'a> {
    fn new(run: &'a Report, prefix: &'a str) -> TimeCharts<'a> {
        TimeCharts {
            run,
            prefix,
            db: run.totals.figures.sql.is_some(),
            whole: run.intervals.iter().all(|iv| iv.t_s.fract() == 0.0),
            names: agent_names(run),
        }
    }

    /// The points (time, value) of the intervals `f` gives a value for.
    fn series(&self, f: &dyn Fn(&Interval) -> Option<f64>) -> Vec<(f64, f64)> {
        self.run
            .intervals
            .iter()
            .filter_map(|iv| Some((iv.t_s, f(iv)?)))
            .collect()
    }

    /// A chart over time.
    fn chart(&self, id: &str, title: &str, y_label: &str, lines: Vec<Line>) -> Chart {
        Chart {
            id: format!("{}{id}", self.prefix),
            title: title.into(),
            x_label: "seconds".into(),
            y_label: y_label.into(),
            lines,
            x_axis: if self.whole {
                XAxis::Integer
            } else {
                XAxis::Numeric
            },
            log_y: false,
        }
    }

    /// One line named `name` of the intervals' values `f` gives.
    fn line(&self, name: &str, f: &dyn Fn(&Interval) -> Option<f64>) -> Line {
        Line {
            offered: Vec::new(),
            name: name.into(),
            points: self.series(f),
        }
    }

    /// What the rate is called, and its unit.
    fn rate(&self) -> (&'static str, &'static str) {
        if self.db {
            ("TPS", "transactions/s")
        } else {
            ("events/s", "events/s")
        }
    }

    /// The merged rate of events (transactions), and for SQL of queries.
    fn throughput(&self) -> Vec<Chart> {
        let (rate, unit) = self.rate();
        let title = if self.db {
            "TPS over time (merged)"
        } else {
            "Events/s over time (merged)"
        };
        let events = self.line(rate, &|iv| Some(iv.events_per_sec));
        let mut charts = vec![self.chart("throughput-time", title, unit, vec![events])];
        if self.db {
            let qps = self.line("QPS", &|iv| iv.figures.sql.as_ref().map(|q| q.qps));
            charts.push(self.chart("qps-time", "QPS over time (merged)", "queries/s", vec![qps]));
        }
        charts
    }

    /// TPC-C: TpmC, and each transaction type's p95.
    fn tpcc(&self) -> Vec<Chart> {
        if !self
            .run
            .intervals
            .iter()
            .any(|iv| iv.figures.tpcc.is_some())
        {
            return Vec::new();
        }
        let tpmc = self.line("TpmC", &|iv| iv.figures.tpcc.as_ref().map(|t| t.tpmc));
        let types = fleetbench_model::workloads::tpcc::TXN_NAMES
            .iter()
            .map(|k| {
                self.line(k, &|iv| {
                    let t = iv.figures.tpcc.as_ref()?.transactions.get(*k)?;
                    (t.count > 0).then(|| t.latency_ms.percentiles.get("p95").copied())?
                })
            })
            .collect();
        vec![
            self.chart(
                "tpmc-time",
                "TpmC over time (merged)",
                "New-Orders/min",
                vec![tpmc],
            ),
            self.chart(
                "tpcc-p95-time",
                "p95 response time by transaction type over time (merged)",
                "latency (ms)",
                types,
            ),
        ]
    }

    /// The merged p95 and p99.
    fn latency(&self) -> Chart {
        let lines = ["p95", "p99"]
            .iter()
            .map(|k| self.line(k, &|iv| iv.latency_ms.percentiles.get(*k).copied()))
            .collect();
        self.chart(
            "latency-time",
            "p95 and p99 latency over time (merged)",
            "latency (ms)",
            lines,
        )
    }

    /// One line per agent: named `label` of its name, `f` of an interval and its index.
    fn agent_lines(
        &self,
        label: &dyn Fn(&str) -> String,
        f: &dyn Fn(&Interval, usize) -> Option<f64>,
    ) -> Vec<Line> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| Line {
                offered: Vec::new(),
                name: label(name),
                points: self.series(&|iv| f(iv, i)),
            })
            .collect()
    }

    /// One line per agent of a figure of its host, `f`; files written before
    /// `agent_hosts` have none.
    fn host_lines(
        &self,
        label: &dyn Fn(&str) -> String,
        f: &dyn Fn(&IntervalHost) -> Option<f64>,
    ) -> Vec<Line> {
        self.agent_lines(label, &|iv, i| f(iv.agent_hosts.get(i)?.as_ref()?))
    }

    /// Each agent's rate.
    fn per_agent(&self) -> Chart {
        let (rate, unit) = self.rate();
        let lines = self.agent_lines(&name, &|iv, i| {
            let n = (*iv.agent_events.get(i)?)? as f64;
            let d = Some(iv.duration_s).filter(|d| *d > 0.0)?;
            Some(n / d)
        });
        self.chart(
            "agents-time",
            &format!("{rate} per agent over time"),
            unit,
            lines,
        )
    }

    /// The client hosts' own load, one line per agent (per agent and direction for the
    /// network): a saturated host measures itself, not the server.
    fn hosts(&self) -> Vec<Chart> {
        let intervals = &self.run.intervals;
        let mut charts = Vec::new();
        if intervals.iter().any(|iv| !iv.agent_cpu_busy_pct.is_empty()) {
            let cpu = self.agent_lines(&name, &|iv, i| *iv.agent_cpu_busy_pct.get(i)?);
            charts.push(self.chart(
                "hosts-cpu-time",
                "Client host CPU busy per agent over time",
                "CPU busy %",
                cpu,
            ));
        }
        if !intervals.iter().any(|iv| !iv.agent_hosts.is_empty()) {
            return charts;
        }
        charts.push(self.chart(
            "hosts-agent-cpu-time",
            "Agent process CPU per agent over time (share of all cores)",
            "agent CPU %",
            self.host_lines(&name, &|h| Some(h.agent_cpu_pct)),
        ));
        charts.push(self.chart(
            "hosts-run-queue-time",
            "Client host run queue per agent over time",
            "runnable tasks",
            self.host_lines(&name, &|h| Some(f64::from(h.run_queue))),
        ));
        charts.push(self.chart(
            "hosts-mem-time",
            "Client host memory in use per agent over time",
            "GiB",
            self.host_lines(&name, &|h| Some(h.mem_used_bytes as f64 / GIB)),
        ));
        let mut net = self.host_lines(&|a| format!("{a} rx"), &|h| {
            Some(h.net_rx_bytes_per_sec / 1e6)
        });
        net.extend(self.host_lines(&|a| format!("{a} tx"), &|h| {
            Some(h.net_tx_bytes_per_sec / 1e6)
        }));
        charts.push(self.chart(
            "hosts-net-time",
            "Client host network per agent over time (loopback excluded)",
            "MB/s",
            net,
        ));
        charts
    }

    /// fileio: the work directory's disk, per agent.
    /// The servers' own figures over time (on the same axis as TPS): rows read and reads
    /// from storage per transaction, the observed hosts' CPU per transaction, replicas'
    /// lag; a line per server (per observed host), each chart where some interval has it.
    fn servers(&self) -> Vec<Chart> {
        let mut names: Vec<&str> = Vec::new();
        let mut hosts: Vec<(&str, &str)> = Vec::new();
        for sv in self.run.intervals.iter().flat_map(|iv| &iv.servers) {
            if !names.contains(&sv.target.as_str()) {
                names.push(&sv.target);
            }
            for h in &sv.hosts {
                if !hosts.contains(&(sv.target.as_str(), h.addr.as_str())) {
                    hosts.push((&sv.target, &h.addr));
                }
            }
        }
        type Get = fn(&crate::servers::IntervalServer) -> Option<f64>;
        let per_server: [(&str, &str, &str, Get); 3] = [
            (
                "servers-rows-time",
                "Server rows read per transaction over time",
                "rows/tx",
                |s| s.per_tx.rows_read,
            ),
            (
                "servers-reads-time",
                "Server reads from storage per transaction over time",
                "reads/tx",
                |s| s.per_tx.server_reads,
            ),
            (
                "servers-lag-time",
                "Replica lag over time",
                "seconds",
                |s| s.replica_lag_s,
            ),
        ];
        let mut charts = Vec::new();
        for (id, title, unit, get) in per_server {
            let lines: Vec<Line> = names
                .iter()
                .map(|n| self.line(n, &|iv| get(iv.servers.iter().find(|s| s.target == *n)?)))
                .filter(|l| !l.points.is_empty())
                .collect();
            if !lines.is_empty() {
                charts.push(self.chart(id, title, unit, lines));
            }
        }
        let host_line = |(t, a): &(&str, &str), process: bool| {
            let name = if process {
                format!("{t} {a} server processes")
            } else {
                format!("{t} {a}")
            };
            self.line(&name, &|iv| {
                let h = iv
                    .servers
                    .iter()
                    .find(|s| s.target == *t)?
                    .hosts
                    .iter()
                    .find(|h| h.addr == *a)?;
                if process {
                    h.process_cpu_us_per_tx
                } else {
                    h.cpu_us_per_tx
                }
            })
        };
        let lines: Vec<Line> = hosts
            .iter()
            .flat_map(|h| [host_line(h, false), host_line(h, true)])
            .filter(|l| !l.points.is_empty())
            .collect();
        if !lines.is_empty() {
            charts.push(self.chart(
                "servers-host-cpu-time",
                "Server host CPU per transaction over time (observed)",
                "CPU µs/tx",
                lines,
            ));
        }
        charts
    }

    fn disks(&self) -> Vec<Chart> {
        let has_disk = |iv: &Interval| iv.agent_hosts.iter().flatten().any(|h| h.disk.is_some());
        if !self.run.intervals.iter().any(has_disk) {
            return Vec::new();
        }
        vec![
            self.chart(
                "hosts-disk-time",
                "Work directory disk utilisation per agent over time",
                "disk util %",
                self.host_lines(&name, &|h| h.disk.as_ref().map(|d| d.util_pct)),
            ),
            self.chart(
                "hosts-disk-queue-time",
                "Work directory disk queue depth per agent over time",
                "requests in flight",
                self.host_lines(&name, &|h| h.disk.as_ref().map(|d| d.queue_depth)),
            ),
        ]
    }
}

/// An agent's line named by its name.
fn name(a: &str) -> String {
    a.to_string()
}

/// A sweep's or scenario's steps over time, one chart per figure with a line per step
/// (named `label`): TPS (or events/s), QPS, TpmC, p95, and the busiest client host's CPU.
/// Ids are `prefix` and the figure's (`throughput-time`, ...).
pub fn steps_over_time(runs: &[(String, &Report)], prefix: &str) -> Vec<Chart> {
    let Some((_, first)) = runs.first() else {
        return Vec::new();
    };
    let db = first.totals.figures.sql.is_some();
    let whole = runs
        .iter()
        .all(|(_, r)| r.intervals.iter().all(|iv| iv.t_s.fract() == 0.0));
    let lines = |f: &dyn Fn(&Interval) -> Option<f64>| -> Vec<Line> {
        runs.iter()
            .map(|(label, r)| Line {
                offered: Vec::new(),
                name: label.clone(),
                points: r
                    .intervals
                    .iter()
                    .filter_map(|iv| Some((iv.t_s, f(iv)?)))
                    .collect(),
            })
            .collect()
    };
    let chart = |id: &str, title: &str, y_label: &str, lines: Vec<Line>| Chart {
        id: format!("{prefix}{id}"),
        title: title.into(),
        x_label: "seconds".into(),
        y_label: y_label.into(),
        lines,
        x_axis: if whole {
            XAxis::Integer
        } else {
            XAxis::Numeric
        },
        log_y: false,
    };
    let mut charts = vec![if db {
        chart(
            "throughput-time",
            "TPS over time, a line per step",
            "transactions/s",
            lines(&|iv| Some(iv.events_per_sec)),
        )
    } else {
        chart(
            "throughput-time",
            "Events/s over time, a line per step",
            "events/s",
            lines(&|iv| Some(iv.events_per_sec)),
        )
    }];
    if db {
        charts.push(chart(
            "qps-time",
            "QPS over time, a line per step",
            "queries/s",
            lines(&|iv| iv.figures.sql.as_ref().map(|q| q.qps)),
        ));
    }
    if runs
        .iter()
        .any(|(_, r)| r.intervals.iter().any(|iv| iv.figures.tpcc.is_some()))
    {
        charts.push(chart(
            "tpmc-time",
            "TpmC over time, a line per step",
            "New-Orders/min",
            lines(&|iv| iv.figures.tpcc.as_ref().map(|t| t.tpmc)),
        ));
    }
    charts.push(chart(
        "p95-time",
        "p95 latency over time, a line per step",
        "latency (ms)",
        lines(&|iv| {
            (iv.events > 0)
                .then(|| iv.latency_ms.percentiles.get("p95").copied())
                .flatten()
        }),
    ));
    if runs.iter().any(|(_, r)| {
        r.intervals
            .iter()
            .any(|iv| !iv.agent_cpu_busy_pct.is_empty())
    }) {
        charts.push(chart(
            "hosts-cpu-time",
            "Busiest client host's CPU over time, a line per step",
            "CPU busy %",
            lines(&|iv| {
                iv.agent_cpu_busy_pct
                    .iter()
                    .flatten()
                    .copied()
                    .reduce(f64::max)
            }),
        ));
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::super::page::render;
    use super::*;
    use crate::report::doc::Document;
    use crate::sweep::tests::{agents_of, latency, run_doc};

    #[test]
    fn tps_and_qps_over_time_have_their_own_charts() {
        let mut run = run_doc(4, 500.0, 10000.0, 4.0);
        let interval = |t_s: f64, eps: f64, qps: f64, p95: f64, p99: f64| Interval {
            t_s,
            duration_s: 1.0,
            events_per_sec: eps,
            figures: crate::report::doc::Figures {
                sql: Some(crate::report::doc::Sql {
                    qps,
                    ..Default::default()
                }),
                ..Default::default()
            },
            latency_ms: latency(1, p95, p95, p99, &[("p95", p95), ("p99", p99)]),
            ..Default::default()
        };
        run.intervals = vec![
            interval(1.0, 480.0, 9600.0, 4.0, 6.0),
            interval(2.0, 520.0, 10400.0, 4.5, 6.5),
        ];
        let charts = run_charts(&run, "");
        assert!(
            charts.iter().all(|c| c.id != "hosts-cpu-time"),
            "no host chart without host figures"
        );
        let mut with_hosts = run.clone();
        with_hosts.agents = vec![crate::report::doc::Agent {
            addr: "10.0.0.1:7600".into(),
            ..Default::default()
        }];
        with_hosts.intervals[0].agent_cpu_busy_pct = vec![Some(35.5)];
        with_hosts.intervals[1].agent_cpu_busy_pct = vec![Some(97.0)];
        let cpu = run_charts(&with_hosts, "");
        let cpu = cpu.iter().find(|c| c.id == "hosts-cpu-time").unwrap();
        assert_eq!(cpu.lines[0].name, "10.0.0.1:7600");
        assert_eq!(cpu.lines[0].points, vec![(1.0, 35.5), (2.0, 97.0)]);
        assert!(
            run_charts(&with_hosts, "")
                .iter()
                .all(|c| c.id == "hosts-cpu-time" || !c.id.starts_with("hosts-")),
            "no chart of figures the document does not have"
        );
        let tps = charts.iter().find(|c| c.id == "throughput-time").unwrap();
        let qps = charts.iter().find(|c| c.id == "qps-time").unwrap();
        assert_eq!(tps.lines.len(), 1);
        assert_eq!(tps.lines[0].points, vec![(1.0, 480.0), (2.0, 520.0)]);
        assert_eq!(qps.lines[0].points, vec![(1.0, 9600.0), (2.0, 10400.0)]);
        let page = render(&Document::Run(Box::new(run)));
        // The script's verdict is kept out of view.
        assert!(page.contains(r#"<div id="status" hidden"#));
        // The per-agent table says what each host is.
        with_hosts.agents[0].cores = 8;
        with_hosts.agents[0].cpu_model = "AMD EPYC <7B13>".into();
        with_hosts.agents[0].kernel = "6.1.0-18-amd64".into();
        with_hosts.agents[0].mem_total_bytes = 32 << 30;
        let page = render(&Document::Run(Box::new(with_hosts)));
        assert!(
            page.contains(
                "<td class=\"text\">8 cores, AMD EPYC &lt;7B13&gt;, Linux 6.1.0-18-amd64, 32.0 GiB</td>"
            ),
            "host facts in the per-agent table"
        );
    }

    #[test]
    fn one_chart_per_host_figure_and_one_line_per_agent() {
        use crate::report::doc::{Agent, IntervalDisk, IntervalHost};
        let host = |cpu: f64, q: u32, disk: Option<(f64, f64)>| IntervalHost {
            cpu_busy_pct: cpu,
            agent_cpu_pct: cpu / 4.0,
            run_queue: q,
            mem_used_bytes: u64::from(q) << 30,
            net_rx_bytes_per_sec: 2e6 * f64::from(q),
            net_tx_bytes_per_sec: 1e6 * f64::from(q),
            disk: disk.map(|(u, d)| IntervalDisk {
                util_pct: u,
                queue_depth: d,
            }),
        };
        let interval = |t_s: f64, hosts: Vec<Option<IntervalHost>>| Interval {
            t_s,
            duration_s: 1.0,
            agent_cpu_busy_pct: hosts
                .iter()
                .map(|h| h.as_ref().map(|h| h.cpu_busy_pct))
                .collect(),
            agent_hosts: hosts,
            ..Default::default()
        };
        let mut run = run_doc(4, 500.0, 10000.0, 4.0);
        run.agents = ["10.0.0.1:7600", "10.0.0.2:7600"]
            .iter()
            .map(|a| Agent {
                addr: a.to_string(),
                ..Default::default()
            })
            .collect();
        run.intervals = vec![
            interval(
                1.0,
                vec![
                    Some(host(40.0, 2, Some((55.5, 1.5)))),
                    Some(host(20.0, 1, None)),
                ],
            ),
            // The second agent sent nothing this interval.
            interval(2.0, vec![Some(host(80.0, 4, Some((99.0, 7.25)))), None]),
        ];
        let charts = run_charts(&run, "");
        let chart = |id: &str| {
            charts
                .iter()
                .find(|c| c.id == id)
                .unwrap_or_else(|| panic!("{id}"))
        };
        let points = |id: &str, line: usize| chart(id).lines[line].points.clone();
        for id in [
            "hosts-cpu-time",
            "hosts-agent-cpu-time",
            "hosts-run-queue-time",
            "hosts-mem-time",
            "hosts-disk-time",
            "hosts-disk-queue-time",
        ] {
            let names: Vec<&str> = chart(id).lines.iter().map(|l| l.name.as_str()).collect();
            assert_eq!(names, ["10.0.0.1:7600", "10.0.0.2:7600"], "{id}");
        }
        // Every point is the document's value, where it has one.
        for (i, iv) in run.intervals.iter().enumerate() {
            for (a, h) in iv.agent_hosts.iter().enumerate() {
                let at = |id: &str, line: usize| {
                    points(id, line)
                        .into_iter()
                        .find(|p| p.0 == iv.t_s)
                        .map(|p| p.1)
                };
                let Some(h) = h else {
                    assert_eq!(at("hosts-mem-time", a), None, "interval {i}");
                    continue;
                };
                assert_eq!(at("hosts-cpu-time", a), Some(h.cpu_busy_pct));
                assert_eq!(at("hosts-agent-cpu-time", a), Some(h.agent_cpu_pct));
                assert_eq!(at("hosts-run-queue-time", a), Some(f64::from(h.run_queue)));
                assert_eq!(at("hosts-mem-time", a), Some(h.mem_used_bytes as f64 / GIB));
                assert_eq!(at("hosts-net-time", a), Some(h.net_rx_bytes_per_sec / 1e6));
                assert_eq!(
                    at("hosts-net-time", 2 + a),
                    Some(h.net_tx_bytes_per_sec / 1e6)
                );
                assert_eq!(
                    at("hosts-disk-time", a),
                    h.disk.as_ref().map(|d| d.util_pct)
                );
                assert_eq!(
                    at("hosts-disk-queue-time", a),
                    h.disk.as_ref().map(|d| d.queue_depth)
                );
            }
        }
        assert_eq!(points("hosts-disk-time", 0), vec![(1.0, 55.5), (2.0, 99.0)]);
        assert_eq!(points("hosts-mem-time", 0), vec![(1.0, 2.0), (2.0, 4.0)]);
        assert_eq!(chart("hosts-net-time").lines[3].name, "10.0.0.2:7600 tx");
        // No disk figures: no disk charts.
        let mut no_disk = run.clone();
        for iv in &mut no_disk.intervals {
            for h in iv.agent_hosts.iter_mut().flatten() {
                h.disk = None;
            }
        }
        let charts = run_charts(&no_disk, "");
        assert!(charts.iter().any(|c| c.id == "hosts-net-time"));
        assert!(!charts.iter().any(|c| c.id.starts_with("hosts-disk")));
    }

    #[test]
    fn legends_name_agents_as_the_tables_do_and_steps_share_a_chart_per_figure() {
        let mut run = run_doc(4, 500.0, 10000.0, 4.0);
        run.agents = agents_of(&[("10.0.0.1:7600", "c1"), ("10.0.0.2:7600", "c2")]);
        run.intervals = (1..=3)
            .map(|t| Interval {
                t_s: f64::from(t),
                duration_s: 1.0,
                events: 10,
                events_per_sec: 10.0 * f64::from(t),
                agent_events: vec![Some(4), Some(6)],
                agent_cpu_busy_pct: vec![Some(20.0), Some(30.0 + f64::from(t))],
                latency_ms: latency(10, 1.0, 1.0, 9.0, &[("p95", f64::from(t))]),
                ..Default::default()
            })
            .collect();
        let charts = run_charts(&run, "");
        for id in ["agents-time", "hosts-cpu-time"] {
            let c = charts.iter().find(|c| c.id == id).unwrap();
            let names: Vec<&str> = c.lines.iter().map(|l| l.name.as_str()).collect();
            // Not the host names ("c1"): several agents may share a host.
            assert_eq!(names, ["10.0.0.1:7600", "10.0.0.2:7600"], "{id}");
        }
        let mut other = run.clone();
        other.config.threads = 8;
        let steps = steps_over_time(
            &[
                ("4 threads".to_string(), &run),
                ("8 threads".to_string(), &other),
            ],
            "s0-steps-",
        );
        let ids: Vec<&str> = steps.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "s0-steps-throughput-time",
                "s0-steps-qps-time",
                "s0-steps-p95-time",
                "s0-steps-hosts-cpu-time"
            ]
        );
        let names: Vec<&str> = steps[0].lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["4 threads", "8 threads"]);
        assert_eq!(
            steps[0].lines[0].points,
            [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]
        );
        // The busiest host of each interval.
        assert_eq!(steps[3].lines[1].points[2], (3.0, 33.0));
    }
}
