//! Sweeps: `--threads 16,32,48` runs one measurement per thread count, `--rate
//! 1000,2000,4000` one per offered rate (open loop, at one thread count), each after an
//! optional warm-up that is not measured, with an optional rest between steps, and prints
//! one table: threads (or offered and achieved rate), TPS, QPS, latency percentiles and
//! errors per second. Also the output options every run shares (`--csv`, `--html`,
//! `--histogram`) and the summary row that tables, CSV, `compare` and the HTML report are
//! built from.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RawArgs;
use crate::plan::{Plan, PlanError, Workload};
use crate::report;
use crate::report::doc::SweepDoc;
pub use crate::report::doc::{IntervalSeries, Step, Summary};
use crate::report::style::ReportStyle;

/// Output and sweep options beyond a single run's plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// Thread counts of a sweep; None for a single run.
    pub counts: Option<Vec<u32>>,
    /// Offered rates (events/s) of a rate sweep; None otherwise. Never together with
    /// `counts`.
    pub rates: Option<Vec<f64>>,
    /// Load before each measurement, excluded from the figures.
    pub warmup: Duration,
    /// Rest between two steps of a sweep.
    pub cooldown: Duration,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// HdrHistogram interval log of a single run (`--hlog`), and whether it holds each
    /// agent's histograms too (`--hlog-per-agent`).
    pub hlog: Option<PathBuf>,
    pub hlog_per_agent: bool,
    /// Print the merged latency histogram, as sysbench's --histogram does.
    pub histogram: bool,
    /// The report's layout.
    pub style: ReportStyle,
    /// Measurements per step (`--repeat`), at least 1.
    pub repeat: u32,
    /// `--metrics-listen`: where to serve the live run to Prometheus.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--metrics-push`: the Pushgateway that gets each run's final figures.
    pub metrics_push: Option<crate::metrics::PushUrl>,
    /// The running exporter of either, once the command has started it.
    pub metrics: Option<crate::metrics::Exporter>,
    /// Where the measurements are recorded (`--catalog`), and whether a regression fails
    /// the command.
    pub catalog: crate::catalog::Settings,
    /// `--web`: the live page's view of the runs, once the command has started the page.
    pub web: Option<std::sync::Arc<crate::web::live::LiveView>>,
    /// `--live-agents`: a line per agent under each interval line.
    pub live_agents: bool,
}

/// Most measurements `--repeat` takes per step.
pub const MAX_REPEAT: u32 = 100;

/// Takes the sweep and output options out of `raw`. A thread or rate list leaves its first
/// value in `raw.threads` or `raw.rate`, so the plan built from `raw` is that of the first
/// step.
pub fn take_extras(raw: &mut RawArgs) -> Result<Extras, PlanError> {
    let counts = match raw.threads.as_deref() {
        Some(s) if s.contains(',') => Some(parse_thread_list(s)?),
        _ => None,
    };
    let rates = match raw.rate.as_deref() {
        Some(s) if s.contains(',') => Some(parse_rate_list(s)?),
        _ => None,
    };
    // One sweep steps over one thing: a grid of both would multiply the run time
    // unnoticed, and its table and charts would have no single axis.
    if let (Some(_), Some(_)) = (&counts, &rates) {
        return Err(PlanError::TwoSweeps {
            threads: raw.threads.clone().unwrap_or_default(),
            rates: raw.rate.clone().unwrap_or_default(),
        });
    }
    if let Some(c) = &counts {
        raw.threads = Some(c[0].to_string());
    }
    if let Some(r) = &rates {
        raw.rate = Some(r[0].to_string());
    }
    let secs = |v: &Option<String>, option: &'static str| -> Result<Duration, PlanError> {
        crate::plan::seconds(v, option, 0).map(Duration::from_secs)
    };
    let histogram = match raw
        .histogram
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("off" | "false" | "no" | "0") => false,
        Some("on" | "true" | "yes" | "1") => true,
        Some(_) => {
            return Err(PlanError::Invalid {
                option: "histogram",
                value: raw.histogram.clone().unwrap_or_default(),
                why: "expected on or off",
            });
        }
    };
    let style = match raw.report_style.as_deref().map(str::trim) {
        None | Some("fleetbench") => ReportStyle::Fleetbench,
        Some("1.0" | "1") => ReportStyle::Sysbench10,
        Some("0.5") => ReportStyle::Sysbench05,
        Some("0.4") => ReportStyle::Sysbench04,
        Some(v) => {
            return Err(PlanError::Invalid {
                option: "report-style",
                value: v.to_string(),
                why: "expected fleetbench, 1.0, 0.5 or 0.4",
            });
        }
    };
    let repeat = crate::plan::num(&raw.repeat, "repeat", 1u32)?;
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(PlanError::Invalid {
            option: "repeat",
            value: repeat.to_string(),
            why: "must lie in 1..=100",
        });
    }
    if raw.hlog.is_some() && (counts.is_some() || rates.is_some() || repeat > 1) {
        return Err(PlanError::NotSupported(
            "--hlog with a sweep or --repeat (it logs one run: run the steps one by one)".into(),
        ));
    }
    if raw.hlog_per_agent && raw.hlog.is_none() {
        return Err(PlanError::Invalid {
            option: "hlog-per-agent",
            value: "on".into(),
            why: "needs --hlog FILE to write to",
        });
    }
    let metrics_listen = match raw.metrics_listen.as_deref().map(str::trim) {
        None => None,
        Some(v) => Some(parse_listen(v).ok_or_else(|| PlanError::Invalid {
            option: "metrics-listen",
            value: v.to_string(),
            why: "expected IP:PORT, e.g. 0.0.0.0:9464, [::]:9464 or localhost:9464",
        })?),
    };
    let metrics_push = match raw.metrics_push.as_deref().map(str::trim) {
        None => None,
        Some(v) => Some(
            crate::metrics::PushUrl::parse(v).map_err(|why| PlanError::Invalid {
                option: "metrics-push",
                value: v.to_string(),
                why,
            })?,
        ),
    };
    Ok(Extras {
        counts,
        rates,
        warmup: secs(&raw.warmup_time, "warmup-time")?,
        cooldown: secs(&raw.cooldown, "cooldown")?,
        csv: raw.csv.clone(),
        html: raw.html.clone(),
        hlog: raw.hlog.clone(),
        hlog_per_agent: raw.hlog_per_agent,
        histogram,
        style,
        repeat,
        metrics_listen,
        metrics_push,
        metrics: None,
        catalog: Default::default(),
        web: None,
        live_agents: raw.live_agents,
    })
}

/// `IP:PORT`, or `localhost:PORT` (the loopback address).
fn parse_listen(v: &str) -> Option<std::net::SocketAddr> {
    if let Ok(a) = v.parse() {
        return Some(a);
    }
    let port = v.strip_prefix("localhost:")?.parse().ok()?;
    Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}

/// Parses `16,32,48`: positive counts, no duplicates, in the order given.
pub fn parse_thread_list(s: &str) -> Result<Vec<u32>, PlanError> {
    let bad = |why| PlanError::Invalid {
        option: "threads",
        value: s.to_string(),
        why,
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("an empty item in the list"));
        }
        let n: u32 = part
            .parse()
            .map_err(|_| bad("expected a thread count or a comma-separated list of them"))?;
        if n == 0 {
            return Err(bad("every thread count must be at least 1"));
        }
        if out.contains(&n) {
            return Err(bad("a thread count is listed twice"));
        }
        out.push(n);
    }
    if out.is_empty() {
        return Err(bad(
            "expected a thread count or a comma-separated list of them",
        ));
    }
    Ok(out)
}

/// Parses `1000,2000,4000`: offered rates in events per second for a rate sweep, each
/// above 0 (0 is the closed loop, not a rate), no duplicates, in the order given.
pub fn parse_rate_list(s: &str) -> Result<Vec<f64>, PlanError> {
    let bad = |why| PlanError::Invalid {
        option: "rate",
        value: s.to_string(),
        why,
    };
    let mut out: Vec<f64> = Vec::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("an empty item in the list"));
        }
        let r = crate::plan::parse_rate(part)?;
        if r == 0.0 {
            return Err(bad(
                "every rate of a rate sweep must be above 0 (0 is the closed loop)",
            ));
        }
        if out.contains(&r) {
            return Err(bad("a rate is listed twice"));
        }
        out.push(r);
    }
    Ok(out)
}

/// What a sweep steps over.
#[derive(Debug, Clone, PartialEq)]
pub enum Axis {
    /// Thread counts, at the plan's rate (0: the closed loop).
    Threads(Vec<u32>),
    /// Offered rates in events per second, at the plan's thread count.
    Rates(Vec<f64>),
}

impl Axis {
    /// The axis of a command line's sweep: its rate list, else its thread list, else the
    /// plan's one thread count (a repeated single run).
    pub fn of(plan: &Plan, extras: &Extras) -> Axis {
        match (&extras.rates, &extras.counts) {
            (Some(r), _) => Axis::Rates(r.clone()),
            (None, Some(c)) => Axis::Threads(c.clone()),
            (None, None) => Axis::Threads(vec![plan.threads]),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Axis::Threads(v) => v.len(),
            Axis::Rates(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `plan` moved to step `i`.
    pub fn at(&self, plan: &Plan, i: usize) -> Plan {
        let mut p = plan.clone();
        match self {
            Axis::Threads(v) => p.threads = v[i],
            Axis::Rates(v) => p.rate = v[i],
        }
        p
    }

    /// The name of step `i` in progress lines: "16 threads", "2000 events/s (4 threads)".
    pub fn step_name(&self, plan: &Plan, i: usize) -> String {
        match self {
            Axis::Threads(v) => report::format::count_of(v[i], "thread", "threads"),
            Axis::Rates(v) => format!(
                "{} {} ({})",
                report::format::rate_label(v[i]),
                rate_unit(&plan.workload),
                report::format::count_of(plan.threads, "thread", "threads")
            ),
        }
    }
}

/// The unit of an offered rate: transactions per second for OLTP, events otherwise.
pub fn rate_unit(workload: &Workload) -> &'static str {
    match workload {
        Workload::Oltp(_) | Workload::Script(_) => "tx/s",
        _ => "events/s",
    }
}

/// Whether `rows` step over offered rates: more than one distinct rate among them.
pub fn is_rate_sweep<'a>(rows: impl IntoIterator<Item = &'a Summary>) -> bool {
    let mut seen: Vec<f64> = Vec::new();
    for r in rows {
        if r.rate > 0.0 && !seen.contains(&r.rate) {
            seen.push(r.rate);
        }
    }
    seen.len() > 1
}

/// The percentile keys of `rows` ("p50", "p95", ...), in numeric order.
pub fn percentile_keys<'a>(rows: impl IntoIterator<Item = &'a Summary>) -> Vec<String> {
    let mut keys: Vec<(f64, String)> = Vec::new();
    for r in rows {
        for k in r.latency_ms.keys() {
            if let Some(p) = k.strip_prefix('p').and_then(|p| p.parse::<f64>().ok())
                && !keys.iter().any(|(_, x)| x == k)
            {
                keys.push((p, k.clone()));
            }
        }
    }
    keys.sort_by(|a, b| a.0.total_cmp(&b.0));
    keys.into_iter().map(|(_, k)| k).collect()
}

/// The latency columns a table shows: avg, p50, p95, p99, any other requested percentile
/// present in every row, and max.
fn latency_columns(rows: &[(Option<&str>, &Summary)], requested: &[f64]) -> Vec<String> {
    let mut cols = vec!["avg".to_string()];
    let wanted: Vec<String> = [50.0, 95.0, 99.0]
        .iter()
        .chain(requested)
        .map(|&p| format!("p{}", report::pct_label(p)))
        .collect();
    for k in percentile_keys(rows.iter().map(|r| r.1)) {
        if wanted.contains(&k) && rows.iter().all(|r| r.1.latency_ms.contains_key(&k)) {
            cols.push(k);
        }
    }
    cols.push("max".into());
    cols
}

/// Said at the end of a table row whose offered rate was not reached.
pub const NOT_REACHED: &str = "rate not reached";

/// Said at the end of a table row, and of its step's line, whose run was interrupted: its
/// figures cover the time until the interrupt.
pub const INTERRUPTED: &str = "interrupted";

/// The sweep or scenario table: one row per (scenario, threads or rate). Scenario names
/// appear in a first column when any row has one. With an open loop (`--rate`) the first
/// figures are the offered rate and the achieved one (events or transactions per second),
/// and a row whose rate was not reached ends with [`NOT_REACHED`]. Latencies in ms.
pub fn table(rows: &[(Option<&str>, &Summary)], requested: &[f64]) -> String {
    let named = rows.iter().any(|r| r.0.is_some());
    let db = rows.iter().any(|r| r.1.qps.is_some());
    let tpcc = rows.iter().any(|r| r.1.tpmc.is_some());
    let open = rows.iter().any(|r| r.1.rate > 0.0);
    let w = rows
        .iter()
        .filter_map(|r| r.0.map(str::len))
        .max()
        .unwrap_or(0)
        .max(8);
    let lat = latency_columns(rows, requested);
    let repeated = rows.iter().any(|r| r.1.repeat > 1);
    let mut s = String::new();
    if named {
        let _ = write!(s, "{:<w$}  ", "scenario");
    }
    if repeated {
        let _ = write!(s, "{:>6}  ", "repeat");
    }
    if open {
        let _ = write!(s, "{:>10}  {:>10}  {:>7}", "rate", "achieved", "threads");
    } else {
        let _ = write!(
            s,
            "{:>7}  {:>10}",
            "threads",
            if db { "tps" } else { "events/s" }
        );
    }
    if tpcc {
        let _ = write!(s, "  {:>11}", "TpmC");
    }
    if db {
        let _ = write!(s, "  {:>11}", "qps");
    }
    for c in &lat {
        let _ = write!(s, "  {:>9}", format!("{c} ms"));
    }
    if db {
        let _ = write!(s, "  {:>8}  {:>8}", "err/s", "reconn/s");
    }
    s.push('\n');
    for (name, r) in rows {
        if named {
            let _ = write!(s, "{:<w$}  ", name.unwrap_or("-"));
        }
        if repeated {
            let _ = write!(s, "{:>6}  ", r.repeat);
        }
        if open {
            let offered = if r.rate > 0.0 {
                report::format::rate_label(r.rate)
            } else {
                "-".into()
            };
            let _ = write!(s, "{offered:>10}  {:>10.2}  {:>7}", r.tps, r.threads);
        } else {
            let _ = write!(s, "{:>7}  {:>10.2}", r.threads, r.tps);
        }
        if tpcc {
            let _ = write!(s, "  {:>11.1}", r.tpmc.unwrap_or(0.0));
        }
        if db {
            let _ = write!(s, "  {:>11.2}", r.qps.unwrap_or(0.0));
        }
        for c in &lat {
            let _ = write!(s, "  {:>9.2}", r.latency(c));
        }
        if db {
            let _ = write!(
                s,
                "  {:>8.2}  {:>8.2}",
                r.errors_per_sec, r.reconnects_per_sec
            );
        }
        if r.rate_reached == Some(false) {
            let _ = write!(s, "  {NOT_REACHED}");
        }
        if r.interrupted {
            let _ = write!(s, "  {INTERRUPTED}");
        }
        s.push('\n');
    }
    s
}

/// The JSON document of a sweep (`kind` "sweep"); a rate sweep adds `rates`, the offered
/// rates in the order given.
pub fn sweep_doc(plan: &Plan, extras: &Extras, steps: &[Step], interrupted: bool) -> SweepDoc {
    SweepDoc {
        format_version: report::doc::FORMAT_VERSION,
        kind: "sweep".into(),
        fleetbench_version: env!("CARGO_PKG_VERSION").into(),
        test: plan.workload.name().into(),
        threads: extras.counts.clone().unwrap_or_else(|| vec![plan.threads]),
        warmup_time_s: extras.warmup.as_secs(),
        cooldown_s: extras.cooldown.as_secs(),
        repeat: extras.repeat,
        interrupted,
        steps: steps.to_vec(),
        rates: extras.rates.clone(),
    }
}

/// The order of the `n` steps (or scenarios) in measurement pass `rep` (from 1): forward on
/// odd passes, backward on even ones (A B, B A, A B, ...). Going back and forth cancels a
/// drift that grows steadily over the session, which plain rounds (A B, A B) would put on
/// whichever comes later in every round.
pub fn pass_order(n: usize, rep: u32) -> Vec<usize> {
    if rep % 2 == 1 {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {

    #[test]
    fn passes_go_back_and_forth_so_steady_drift_cancels() {
        assert_eq!(pass_order(3, 1), [0, 1, 2]);
        assert_eq!(pass_order(3, 2), [2, 1, 0]);
        assert_eq!(pass_order(3, 3), [0, 1, 2]);
        assert!(pass_order(0, 2).is_empty());
        // Over an even number of passes every step has the same mean position, so a drift
        // linear in time adds the same to each.
        let n = 3;
        let mut position_sum = vec![0; n];
        for rep in 1..=4 {
            for (pos, i) in pass_order(n, rep).into_iter().enumerate() {
                position_sum[i] += (rep as usize - 1) * n + pos;
            }
        }
        assert!(
            position_sum.iter().all(|&p| p == position_sum[0]),
            "{position_sum:?}"
        );
    }
    use super::*;
    use crate::merge::RunResult;
    use crate::report::doc::{Document, Report};

    #[test]
    fn thread_lists() {
        assert_eq!(
            parse_thread_list("16,32, 48,64,96,128").unwrap(),
            vec![16, 32, 48, 64, 96, 128]
        );
        // An empty item is a typo, not a separator to skip (issue 17, row 13).
        for bad in ["", ",", "8,", "4,,8", "4,x", "4,0", "4,4", "-1,2"] {
            assert!(
                matches!(
                    parse_thread_list(bad),
                    Err(PlanError::Invalid {
                        option: "threads",
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    /// The raw command line of `fleetbench ARGS`.
    fn raw_args(args: &[&str]) -> RawArgs {
        crate::cli::parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn extras_take_the_first_count_into_the_plan() {
        let mut raw = raw_args(&[
            "cpu",
            "--threads=2,4,8",
            "--warmup-time=3",
            "--cooldown=1",
            "--histogram",
            "run",
        ]);
        let e = take_extras(&mut raw).unwrap();
        assert_eq!(e.counts, Some(vec![2, 4, 8]));
        assert_eq!(raw.threads.as_deref(), Some("2"));
        assert_eq!(
            (e.warmup, e.cooldown, e.histogram),
            (Duration::from_secs(3), Duration::from_secs(1), true)
        );
        let mut raw = raw_args(&["cpu", "--histogram=maybe", "run"]);
        assert!(take_extras(&mut raw).is_err());
        let mut raw = raw_args(&["cpu", "--threads=3", "run"]);
        assert_eq!(take_extras(&mut raw).unwrap().counts, None);
    }

    /// A cpu run document written by [`report::json::build`], with these totals and SQL
    /// figures (as an OLTP run has them).
    pub(crate) fn run_doc(threads: u32, tps: f64, qps: f64, p95: f64) -> Report {
        let plan =
            crate::plan::build(&crate::cli::parse(["fleetbench", "cpu", "run"]).unwrap()).unwrap();
        let mut doc = report::json::build(&plan, &RunResult::default());
        doc.config.threads = threads;
        let t = &mut doc.totals;
        t.time_s = 10.0;
        t.events = (tps * 10.0) as u64;
        t.events_per_sec = tps;
        t.latency_ms = latency(
            5,
            1.0,
            2.0,
            9.0,
            &[("p50", 2.0), ("p95", p95), ("p99", p95 * 2.0)],
        );
        t.latency_ms.sum = 10.0;
        t.figures.sql = Some(report::json::Sql {
            tps,
            qps,
            ignored_errors: 20,
            ..Default::default()
        });
        doc
    }

    /// A step measuring `result` (measurement `repeat` of its thread count or rate).
    pub(crate) fn step(result: Report, repeat: u32) -> Step {
        Step::of(result, repeat)
    }

    /// A sweep document of `test` with these steps (and offered rates, for a rate sweep).
    pub(crate) fn sweep_of(test: &str, steps: Vec<Step>, rates: Option<Vec<f64>>) -> Document {
        let mut threads: Vec<u32> = steps.iter().map(|s| s.threads).collect();
        threads.dedup();
        Document::Sweep(SweepDoc {
            format_version: 2,
            kind: "sweep".into(),
            fleetbench_version: env!("CARGO_PKG_VERSION").into(),
            test: test.into(),
            threads,
            warmup_time_s: 0,
            cooldown_s: 0,
            repeat: steps.iter().map(|s| s.repeat).max().unwrap_or(1),
            interrupted: false,
            steps,
            rates,
        })
    }

    /// A scenarios document (file s.toml, measured once) of these scenarios.
    pub(crate) fn scenarios_of(scenarios: Vec<crate::report::doc::ScenarioDoc>) -> Document {
        Document::Scenarios(crate::report::doc::ScenariosDoc {
            format_version: 2,
            kind: "scenarios".into(),
            fleetbench_version: env!("CARGO_PKG_VERSION").into(),
            file: "s.toml".into(),
            warmup_time_s: 0,
            cooldown_s: 0,
            repeat: 1,
            interrupted: false,
            scenarios,
        })
    }

    /// Agents at these addresses on these hosts, as a run document lists them.
    pub(crate) fn agents_of(agents: &[(&str, &str)]) -> Vec<crate::report::doc::Agent> {
        agents
            .iter()
            .map(|(addr, host)| crate::report::doc::Agent {
                addr: addr.to_string(),
                host: host.to_string(),
                ..Default::default()
            })
            .collect()
    }

    /// A cpu sweep of closed-loop steps (threads, measurement, tps), each a [`run_doc`] with
    /// 20 queries per transaction and a p95 of 3 ms.
    pub(crate) fn cpu_sweep(points: impl IntoIterator<Item = (u32, u32, f64)>) -> Document {
        let steps = points
            .into_iter()
            .map(|(threads, repeat, tps)| step(run_doc(threads, tps, tps * 20.0, 3.0), repeat))
            .collect();
        sweep_of("cpu", steps, None)
    }

    /// A latency object with these figures and percentiles.
    pub(crate) fn latency(
        count: u64,
        min: f64,
        avg: f64,
        max: f64,
        pcts: &[(&str, f64)],
    ) -> report::json::LatencyMs {
        report::json::LatencyMs {
            count,
            min,
            avg,
            max,
            sum: 0.0,
            percentiles: pcts.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn summary_from_a_run_document() {
        let s = Summary::from_run(&run_doc(16, 100.0, 2000.0, 5.5));
        assert_eq!((s.threads, s.tps, s.qps), (16, 100.0, Some(2000.0)));
        assert_eq!(s.errors_per_sec, 2.0);
        assert_eq!(s.latency("p95"), 5.5);
        assert!(!s.latency_ms.contains_key("count") && !s.latency_ms.contains_key("sum"));
        assert_eq!(percentile_keys([&s]), ["p50", "p95", "p99"]);
    }

    #[test]
    fn rate_lists() {
        assert_eq!(
            parse_rate_list("1000, 2000,4000.5").unwrap(),
            vec![1000.0, 2000.0, 4000.5]
        );
        for bad in [
            ",", "100,", "100,,200", "100,x", "100,0", "100,100", "-1,2", "100,1e12", "100,inf",
        ] {
            assert!(
                matches!(
                    parse_rate_list(bad),
                    Err(PlanError::Invalid { option: "rate", .. })
                ),
                "{bad}"
            );
        }
        assert!(
            parse_rate_list("100,0")
                .unwrap_err()
                .to_string()
                .contains("must be above 0"),
        );
    }

    #[test]
    fn extras_take_the_first_rate_into_the_plan() {
        let mut raw = raw_args(&["cpu", "--threads=4", "--rate=100,200,400", "run"]);
        let e = take_extras(&mut raw).unwrap();
        assert_eq!(e.rates, Some(vec![100.0, 200.0, 400.0]));
        assert_eq!(e.counts, None);
        assert_eq!(raw.rate.as_deref(), Some("100"));
        let plan = crate::plan::build(&raw).unwrap();
        assert_eq!((plan.threads, plan.rate), (4, 100.0));
        let axis = Axis::of(&plan, &e);
        assert_eq!(axis, Axis::Rates(vec![100.0, 200.0, 400.0]));
        let second = axis.at(&plan, 1);
        assert_eq!((second.threads, second.rate), (4, 200.0));
        assert_eq!(axis.step_name(&second, 1), "200 events/s (4 threads)");
        // sysbench 0.5's spelling takes a list too.
        let mut raw = raw_args(&["cpu", "--tx-rate=50,75.5", "run"]);
        assert_eq!(take_extras(&mut raw).unwrap().rates, Some(vec![50.0, 75.5]));
        // One rate is a plain open loop; with a thread list, a thread sweep at that rate.
        let mut raw = raw_args(&["cpu", "--threads=2,4", "--rate=100", "run"]);
        let e = take_extras(&mut raw).unwrap();
        assert_eq!((&e.counts, &e.rates), (&Some(vec![2, 4]), &None));
        let plan = crate::plan::build(&raw).unwrap();
        assert_eq!(plan.rate, 100.0);
        let axis = Axis::of(&plan, &e);
        assert_eq!(axis.step_name(&axis.at(&plan, 1), 1), "4 threads");
    }

    #[test]
    fn a_thread_list_and_a_rate_list_are_refused_together() {
        let mut raw = raw_args(&["cpu", "--threads=2,4", "--rate=100,200", "run"]);
        let e = take_extras(&mut raw).unwrap_err();
        assert!(matches!(e, PlanError::TwoSweeps { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with("--threads=2,4 and --rate=100,200: a sweep steps over")
                && !msg.contains('\n'),
            "{msg}"
        );
    }

    /// An open-loop run document at `rate` offered, `achieved` events/s run.
    pub(crate) fn open_doc(threads: u32, rate: f64, achieved: f64, p95: f64) -> Report {
        let mut doc = run_doc(threads, achieved, achieved * 20.0, p95);
        doc.config.rate = Some(rate);
        doc.totals.open_loop = Some(report::json::OpenLoopTotals {
            target_rate: rate,
            events_per_sec: achieved,
            rate_reached: achieved > rate * 0.9,
            ..Default::default()
        });
        doc
    }

    #[test]
    fn summaries_carry_the_offered_rate() {
        let s = Summary::from_run(&open_doc(4, 2000.0, 1990.0, 3.0));
        assert_eq!(
            (s.rate, s.rate_reached, s.tps),
            (2000.0, Some(true), 1990.0)
        );
        // A document from before the open loop: a closed loop.
        let old = Summary::from_run(&run_doc(16, 100.0, 2000.0, 5.5));
        assert_eq!((old.rate, old.rate_reached), (0.0, None));
        let v = serde_json::to_value(&old).unwrap();
        assert_eq!(v["rate"], 0.0);
        assert!(v.get("rate_reached").is_none());
        // A summary written before rates existed still reads.
        let mut written = v.clone();
        written.as_object_mut().unwrap().remove("rate");
        let back: Summary = serde_json::from_value(written).unwrap();
        assert_eq!(back.rate, 0.0);
        assert!(is_rate_sweep([
            &s,
            &Summary::from_run(&open_doc(4, 4000.0, 3990.0, 3.0))
        ]));
        assert!(!is_rate_sweep([&s, &s]));
        assert!(!is_rate_sweep([&old]));
        // The sweep document names its rates; a thread sweep's does not.
        let plan = crate::plan::build(
            &crate::cli::parse(["fleetbench", "cpu", "--rate=100", "run"]).unwrap(),
        )
        .unwrap();
        let extras = Extras {
            rates: Some(vec![100.0, 200.0]),
            repeat: 1,
            ..Extras::default()
        };
        let doc = serde_json::to_value(sweep_doc(&plan, &extras, &[], false)).unwrap();
        assert_eq!(doc["rates"], serde_json::json!([100.0, 200.0]));
        assert_eq!(doc["threads"], serde_json::json!([1]));
        let doc = serde_json::to_value(sweep_doc(&plan, &Extras::default(), &[], false)).unwrap();
        assert!(doc.get("rates").is_none());
    }

    #[test]
    fn a_rate_table_leads_with_offered_and_achieved_rates() {
        let a = Summary::from_run(&open_doc(4, 100.0, 99.5, 2.0));
        let b = Summary::from_run(&open_doc(4, 200.0, 120.25, 80.0));
        let t = table(&[(None, &a), (None, &b)], &[95.0]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        let head: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(head[..4], ["rate", "achieved", "threads", "qps"], "{t}");
        let row: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(row[..3], ["100", "99.50", "4"], "{t}");
        assert!(!lines[1].contains(NOT_REACHED), "{t}");
        assert!(lines[2].ends_with(&format!("  {NOT_REACHED}")), "{t}");
        assert!(
            lines[2].contains("80.00") && lines[2].contains("120.25"),
            "{t}"
        );
        // A closed-loop row beside them (a scenario file mixing both) has no rate.
        let closed = Summary::from_run(&run_doc(8, 300.0, 6000.0, 4.0));
        let t = table(&[(Some("open"), &a), (Some("closed"), &closed)], &[95.0]);
        let row: Vec<&str> = t.lines().nth(2).unwrap().split_whitespace().collect();
        assert_eq!(row[..4], ["closed", "-", "300.00", "8"], "{t}");
    }

    #[test]
    fn table_has_one_row_per_step() {
        let a = Summary::from_run(&run_doc(16, 100.0, 2000.0, 5.5));
        let b = Summary::from_run(&run_doc(32, 150.0, 3000.0, 7.25));
        let t = table(&[(None, &a), (None, &b)], &[95.0]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert!(lines[0].contains("threads") && lines[0].contains("p95 ms"));
        assert!(lines[2].trim_start().starts_with("32"));
        assert!(lines[2].contains("150.00") && lines[2].contains("3000.00"));
        assert!(lines[2].contains("7.25") && lines[2].contains("14.50"));
        let named = table(&[(Some("direct"), &a), (Some("proxy"), &b)], &[95.0]);
        assert!(named.lines().nth(1).unwrap().starts_with("direct "));
    }
}
