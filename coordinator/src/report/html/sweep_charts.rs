//! Charts across series (sweeps and scenarios): figures against thread counts, and for
//! rate sweeps the achieved rate against the offered one and the throughput-latency
//! curve.

use super::svg::{Chart, Line, XAxis};
use crate::report::compare;
use crate::sweep::Summary;

/// Charts across series (sweeps, scenarios): QPS, TPS, p95 and p99 against threads, one
/// line per series. Thread axes have whole-number ticks only.
pub fn sweep_charts(series: &[compare::Series]) -> Vec<Chart> {
    // With --repeat, one line per series and measurement: a line through all of them would
    // run back and forth over the thread counts.
    let line = |f: &dyn Fn(&Summary) -> Option<f64>| -> Vec<Line> {
        series
            .iter()
            .flat_map(|s| {
                let mut reps: Vec<u32> = s.rows.iter().map(|r| r.repeat).collect();
                reps.sort_unstable();
                reps.dedup();
                let many = reps.len() > 1;
                reps.into_iter().map(move |rep| Line {
                    offered: Vec::new(),
                    name: if many {
                        format!("{} #{rep}", s.label)
                    } else {
                        s.label.clone()
                    },
                    points: s
                        .rows
                        .iter()
                        .filter(|r| r.repeat == rep)
                        .filter_map(|r| Some((f64::from(r.threads), f(r)?)))
                        .collect(),
                })
            })
            .collect()
    };
    let db = series.iter().flat_map(|s| &s.rows).any(|r| r.qps.is_some());
    let mut charts = Vec::new();
    if series
        .iter()
        .flat_map(|s| &s.rows)
        .any(|r| r.tpmc.is_some())
    {
        charts.push((
            "tpmc-threads",
            "TpmC by thread count",
            "New-Orders/min",
            line(&|r| r.tpmc),
        ));
    }
    if db {
        charts.push((
            "qps-threads",
            "QPS by thread count",
            "queries/s",
            line(&|r| r.qps),
        ));
    }
    charts.push((
        "tps-threads",
        if db {
            "TPS by thread count"
        } else {
            "Events/s by thread count"
        },
        if db { "transactions/s" } else { "events/s" },
        line(&|r| Some(r.tps)),
    ));
    charts.push((
        "p95-threads",
        "p95 latency by thread count",
        "latency (ms)",
        line(&|r| r.latency_ms.get("p95").copied()),
    ));
    charts.push((
        "p99-threads",
        "p99 latency by thread count",
        "latency (ms)",
        line(&|r| r.latency_ms.get("p99").copied()),
    ));
    let mut out: Vec<Chart> = charts
        .into_iter()
        .map(|(id, title, y, lines)| Chart {
            id: id.into(),
            title: title.into(),
            x_label: "threads".into(),
            y_label: y.into(),
            lines,
            x_axis: XAxis::Integer,
            log_y: false,
        })
        .collect();
    // What a transaction cost the servers, against threads: efficiency as load grows.
    let names = crate::servers::COMPARED
        .into_iter()
        .chain(crate::servers::HOSTS_COMPARED);
    for name in names {
        let rows = || series.iter().flat_map(|s| &s.rows);
        if !rows().any(|r| r.server.contains_key(name)) {
            continue;
        }
        let slug: String = name
            .trim_start_matches("server ")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        out.push(Chart {
            id: format!("server-{slug}-threads"),
            title: format!("{} by thread count", name.replace("server ", "Server ")),
            x_label: "threads".into(),
            y_label: name.rsplit(' ').next().unwrap_or(name).into(),
            lines: line(&|r| r.server.get(name).copied()),
            x_axis: XAxis::Integer,
            log_y: false,
        });
    }
    out
}

/// A point (x, y) of a row for a key ("p95", ...) of a rate chart, if the row has it.
type RatePoint = dyn Fn(&Summary, &str) -> Option<(f64, f64)>;

/// The lines of a chart of open-loop rows: per series (and measurement, with `--repeat`)
/// and per key of `keys`, the points `f` gives for each row with an offered rate, in the
/// order of the offered rates and labelled with them. A key's name is added to the
/// series' when there are several keys; with one series, the key alone names the line.
fn rate_lines(series: &[&compare::Series], keys: &[&str], f: &RatePoint) -> Vec<Line> {
    let mut out = Vec::new();
    for s in series {
        let mut reps: Vec<u32> = s.rows.iter().map(|r| r.repeat).collect();
        reps.sort_unstable();
        reps.dedup();
        let many = reps.len() > 1;
        for &rep in &reps {
            let mut rows: Vec<&Summary> = s
                .rows
                .iter()
                .filter(|r| r.repeat == rep && r.rate > 0.0)
                .collect();
            rows.sort_by(|a, b| a.rate.total_cmp(&b.rate));
            for key in keys {
                let mut name = match (series.len() > 1, keys.len() > 1) {
                    (_, false) => s.label.clone(),
                    (false, true) => (*key).to_string(),
                    (true, true) => format!("{} {key}", s.label),
                };
                if many {
                    name = format!("{name} #{rep}");
                }
                let (points, offered) = rows
                    .iter()
                    .filter_map(|r| Some((f(r, key)?, r.rate)))
                    .unzip();
                out.push(Line {
                    name,
                    points,
                    offered,
                });
            }
        }
    }
    out
}

/// Charts of rate sweeps, from the series' open-loop rows: the achieved rate against the
/// offered one, and the throughput-latency curve: latency against the achieved rate, each
/// point labelled with its offered rate. One series gets one curve chart with a line per
/// percentile (p50, p95, p99); several get a chart per percentile with a line per series.
pub fn rate_charts(series: &[&compare::Series]) -> Vec<Chart> {
    let rows = || series.iter().flat_map(|s| &s.rows);
    let db = rows().any(|r| r.qps.is_some());
    let unit = if db { "transactions/s" } else { "events/s" };
    let pcts: Vec<&str> = ["p50", "p95", "p99"]
        .into_iter()
        .filter(|k| rows().any(|r| r.latency_ms.contains_key(*k)))
        .collect();
    let latency = |r: &Summary, k: &str| Some((r.tps, *r.latency_ms.get(k)?));
    let chart = |id: String, title: String, x_label: String, y_label: &str, lines| Chart {
        id,
        title,
        x_label,
        y_label: y_label.into(),
        lines,
        x_axis: XAxis::FromZero,
        log_y: false,
    };
    let mut charts = vec![chart(
        "achieved-rate".into(),
        "Achieved rate by offered rate".into(),
        format!("offered rate ({unit})"),
        &format!("achieved ({unit})"),
        rate_lines(series, &["achieved"], &|r, _| Some((r.rate, r.tps))),
    )];
    let x_label = format!("achieved rate ({unit})");
    if series.len() == 1 {
        charts.push(chart(
            "latency-rate".into(),
            format!("Latency by achieved rate ({})", pcts.join(", ")),
            x_label,
            "latency (ms)",
            rate_lines(series, &pcts, &latency),
        ));
    } else {
        for k in &pcts {
            charts.push(chart(
                format!("{k}-rate"),
                format!("{k} latency by achieved rate"),
                x_label.clone(),
                "latency (ms)",
                rate_lines(series, &[k], &latency),
            ));
        }
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::super::page::render;
    use super::super::svg::svg;
    use super::*;
    use crate::report::doc::{Document, ScenarioDoc, Step};
    use crate::sweep::tests::{open_doc, run_doc, scenarios_of, step, sweep_of};

    #[test]
    fn repeated_measurements_get_a_line_and_a_name_each() {
        let steps = [
            (8u32, 1, 100.0),
            (16, 1, 180.0),
            (8, 2, 110.0),
            (16, 2, 170.0),
        ]
        .iter()
        .map(|&(t, rep, tps)| step(run_doc(t, tps, tps * 20.0, 4.0), rep))
        .collect();
        let doc = sweep_of("oltp_read_write", steps, None);
        let series = compare::series(&doc, "rw");
        let charts = sweep_charts(&series);
        let tps = charts.iter().find(|c| c.id == "tps-threads").unwrap();
        let lines: Vec<(&str, &[(f64, f64)])> = tps
            .lines
            .iter()
            .map(|l| (l.name.as_str(), l.points.as_slice()))
            .collect();
        assert_eq!(
            lines,
            [
                ("rw #1", &[(8.0, 100.0), (16.0, 180.0)][..]),
                ("rw #2", &[(8.0, 110.0), (16.0, 170.0)][..])
            ]
        );
        let page = render(&doc);
        assert!(page.contains("<th>measurement</th>"), "{page}");
        assert!(
            page.contains("<h3>16 threads, measurement 2</h3>"),
            "{page}"
        );
    }

    /// A rate sweep document over `points` (offered, achieved) at 4 threads.
    fn rate_sweep(points: &[(f64, f64)]) -> Document {
        sweep_of(
            "cpu",
            rate_steps(points),
            Some(points.iter().map(|p| p.0).collect()),
        )
    }

    /// The steps of a rate sweep over `points` (offered, achieved) at 4 threads.
    fn rate_steps(points: &[(f64, f64)]) -> Vec<Step> {
        points
            .iter()
            .map(|&(rate, achieved)| step(open_doc(4, rate, achieved, achieved / 100.0), 1))
            .collect()
    }

    #[test]
    fn the_servers_cost_per_transaction_is_charted_against_threads() {
        let steps = [(8u32, 2.0), (16, 3.5)]
            .iter()
            .map(|&(t, reads)| {
                let mut r = run_doc(t, 100.0, 2000.0, 4.0);
                r.totals.targets.push(crate::report::doc::TargetJson {
                    name: "db".into(),
                    server: Some(crate::servers::ServerJson {
                        intervals: 10,
                        transactions: 1000,
                        per_tx: crate::servers::PerTx {
                            server_reads: Some(reads),
                            ..Default::default()
                        },
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                step(r, 1)
            })
            .collect();
        let doc = sweep_of("oltp_read_only", steps, None);
        let charts = sweep_charts(&compare::series(&doc, "ro"));
        let c = charts
            .iter()
            .find(|c| c.id == "server-disk-reads-tx-threads")
            .unwrap_or_else(|| panic!("{:?}", charts.iter().map(|c| &c.id).collect::<Vec<_>>()));
        assert_eq!(c.title, "Server disk reads/tx by thread count");
        assert_eq!(c.lines[0].points, [(8.0, 2.0), (16.0, 3.5)]);
        assert!(!charts.iter().any(|c| c.id == "server-rows-read-tx-threads"));
    }

    #[test]
    fn a_rate_sweep_has_a_throughput_latency_curve() {
        // Given out of order: the lines follow the offered rate.
        let doc = rate_sweep(&[(200.0, 199.5), (100.0, 100.25), (400.0, 310.0)]);
        let series = compare::series(&doc, "cpu");
        let charts = rate_charts(&series.iter().collect::<Vec<_>>());
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["achieved-rate", "latency-rate"]);
        let achieved = &charts[0].lines[0];
        assert_eq!(
            achieved.points,
            [(100.0, 100.25), (200.0, 199.5), (400.0, 310.0)]
        );
        let curve = &charts[1];
        let names: Vec<&str> = curve.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["p50", "p95", "p99"]);
        // run_doc: p95 as given (achieved / 100), p99 twice that.
        assert_eq!(
            curve.lines[2].points,
            [(100.25, 2.005), (199.5, 3.99), (310.0, 6.2)]
        );
        assert_eq!(curve.lines[2].offered, [100.0, 200.0, 400.0]);
        // Rate axes start at 0: the curve reads from the origin.
        let svg = svg(curve);
        let first_x = svg.split(r#"<text class="tick x""#).nth(1).unwrap();
        assert_eq!(
            &first_x[first_x.find('>').unwrap() + 1..first_x.find('<').unwrap()],
            "0"
        );
        let page = render(&doc);
        assert!(
            page.contains("<h1>fleetbench rate sweep of cpu</h1>"),
            "{page}"
        );
        assert!(
            page.contains(r#"data-series="p95" data-x="310" data-y="3.1" data-offered="400""#),
            "{page}"
        );
        assert!(page.contains("(offered 400/s)</title>"), "{page}");
        // No chart against threads: every step ran at 4.
        assert!(!page.contains("-threads\""), "{page}");
        assert!(page.contains("<td>400</td><td>no</td><td>4</td>"), "{page}");
        assert!(
            page.contains("<h3>offered 100/s</h3>"),
            "steps named by rate"
        );
    }

    #[test]
    fn rate_sweeps_of_several_scenarios_get_a_chart_per_percentile() {
        let scenario = |name: &str, points: &[(f64, f64)]| ScenarioDoc {
            name: name.into(),
            description: None,
            test: "cpu".into(),
            targets: Vec::new(),
            threads: vec![4],
            steps: rate_steps(points),
            rates: Some(points.iter().map(|p| p.0).collect()),
        };
        let doc = scenarios_of(vec![
            scenario("direct", &[(100.0, 100.0), (200.0, 200.0)]),
            scenario("proxy", &[(100.0, 99.0), (200.0, 180.0)]),
        ]);
        let series = compare::series(&doc, "");
        let charts = rate_charts(&series.iter().collect::<Vec<_>>());
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["achieved-rate", "p50-rate", "p95-rate", "p99-rate"]);
        let names: Vec<&str> = charts[2].lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["direct", "proxy"]);
        assert_eq!(charts[2].lines[1].points, [(99.0, 0.99), (180.0, 1.8)]);
        assert!(render(&doc).contains(r#"id="p99-rate" data-points="4""#));
    }
}
