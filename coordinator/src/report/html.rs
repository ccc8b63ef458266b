//! The HTML report: one self-contained file (inline CSS, SVG and a small script; nothing
//! fetched from the network) with charts drawn from a result document: for a run, TPS (or
//! events/s), QPS, p95/p99 and the per-agent rate over time, each on its own axis; for
//! sweeps and scenarios, QPS, TPS, p95 and p99 against thread count with one line per
//! scenario; for rate sweeps, the achieved rate against the offered one and the
//! throughput-latency curve (p50, p95 and p99 against the achieved rate, or one line per
//! scenario and percentile chart), each point carrying its offered rate; a latency
//! percentile spectrum with one line per step; and the configuration (for a sweep, every
//! step's). A chart without any data point is replaced by a line saying "no data for
//! ...". Every data point is an SVG circle carrying its values in data-* attributes; the
//! inline script checks them and records its verdict as data attributes of a hidden
//! element (an error is shown on the page), so a headless browser's DOM dump shows it
//! without the reader seeing it.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

use super::compare;
use super::doc::{Document, Interval, Report, ScenarioDoc, Step};
use crate::sweep::Summary;

const WIDTH: f64 = 760.0;
/// Height of the plot area; the SVG adds the title above and the axis labels and the
/// legend below.
const PLOT_HEIGHT: f64 = 240.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 30.0;
/// From the x axis to the first legend row: tick labels, then the axis label.
const BELOW_AXIS: f64 = 56.0;
const LEGEND_ROW: f64 = 18.0;
const TICK_FONT: f64 = 11.0;
const TITLE_FONT: f64 = 14.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
/// Dash patterns for lines past the eighth, so that no two lines look alike.
const DASHES: [&str; 3] = ["", "6 3", "2 3"];

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// The offered rate (events/s) of each point, for throughput-latency charts: shown
    /// in the point's tooltip and `data-offered`. Empty for other charts.
    pub offered: Vec<f64>,
}

/// How a chart's x axis is labelled.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Round ticks, fractions allowed (seconds).
    Numeric,
    /// Round ticks from 0 (rates: a throughput-latency curve reads from the origin, and a
    /// wide first label would otherwise sit on the y axis' 0).
    FromZero,
    /// Whole numbers only (thread counts): the measured values themselves when they are
    /// far enough apart to read, else round integer ticks.
    Integer,
    /// Fixed labels at the given positions (the percentile spectrum).
    Labels(Vec<(f64, String)>),
}

/// A chart: its id, title, axis labels and lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub x_axis: XAxis,
    /// A logarithmic y axis (the spectrum: latency spans several orders of magnitude).
    pub log_y: bool,
}

/// About `n` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of 10).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    ticks_from(lo, hi, n, 0.0)
}

/// Like [`ticks`], with steps of at least `min_step` (1 gives whole numbers only).
fn ticks_from(lo: f64, hi: f64, n: usize, min_step: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .max(min_step);
    let mut out = Vec::new();
    let mut k = (lo / step).ceil();
    // Multiples of the step, computed afresh each time so that no rounding error builds up.
    while k * step <= hi + step * 1e-9 {
        let v = k * step;
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        k += 1.0;
    }
    out
}

/// Tick positions of a thread-count axis: the measured counts when there are few of them
/// and they are at least 36 px apart, else round integer ticks.
pub fn integer_ticks(xs: &[f64], lo: f64, hi: f64, px_per_unit: f64) -> Vec<f64> {
    let mut v: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && x.fract() == 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let readable = v.windows(2).all(|w| (w[1] - w[0]) * px_per_unit >= 36.0);
    if !v.is_empty() && v.len() <= 16 && readable {
        return v;
    }
    ticks_from(lo, hi, 8, 1.0)
        .into_iter()
        .filter(|t| t.fract() == 0.0)
        .collect()
}

/// The value range a chart's axis spans: from 0 (or the minimum, for x) to a round top.
fn span(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (0.0, 1.0);
    }
    let mut lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if from_zero {
        lo = lo.min(0.0);
        hi *= 1.05;
    }
    if hi <= lo {
        // A single value (one step, one interval): put it in the middle.
        if from_zero {
            hi = lo + 1.0;
        } else {
            (lo, hi) = (lo - 1.0, hi + 1.0);
        }
    }
    (lo, hi)
}

/// The range and ticks of a logarithmic axis: whole decades around the positive values
/// (at least 0.001, the histograms' resolution in ms), with 2 and 5 in between when the
/// range spans at most two decades.
fn log_span(values: impl Iterator<Item = f64>) -> (f64, f64, Vec<f64>) {
    let v: Vec<f64> = values.filter(|x| x.is_finite() && *x > 0.0).collect();
    let (lo, hi) = if v.is_empty() {
        (1.0, 10.0)
    } else {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min).max(0.001);
        (lo, v.iter().copied().fold(lo, f64::max))
    };
    let d0 = lo.log10().floor();
    let d1 = hi.log10().ceil().max(d0 + 1.0);
    let mut out = Vec::new();
    let mut d = d0;
    while d <= d1 {
        // 1 / 100 is the double nearest 0.01; 10^-2 computed as a power may not be.
        let base = if d < 0.0 {
            1.0 / 10f64.powi(-d as i32)
        } else {
            10f64.powi(d as i32)
        };
        out.push(base);
        if d1 - d0 <= 2.0 && d < d1 {
            out.push(base * 2.0);
            out.push(base * 5.0);
        }
        d += 1.0;
    }
    (out[0], *out.last().unwrap_or(&1.0), out)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number as short text: integers without decimals, others with up to 3.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A generous estimate of the width in px of `s` in the page's sans-serif font at `size`
/// px (wider than DejaVu Sans and Liberation Sans for every character), so that text
/// laid out with it stays inside its chart.
pub fn text_width(s: &str, size: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | 'f' | 't' | 'r' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' '
            | '(' | ')' | '[' | ']' | '-' => 0.42,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 1.0,
            c if c.is_ascii_uppercase() => 0.8,
            c if c.is_ascii() => 0.66,
            _ => 1.0,
        })
        .sum();
    em * size
}

/// `s` cut short with an ellipsis so that it is at most `max` px wide at `size` px.
fn fit(s: &str, size: f64, max: f64) -> String {
    if text_width(s, size) <= max {
        return s.to_string();
    }
    let mut t: String = s.to_string();
    while !t.is_empty() && text_width(&format!("{t}…"), size) > max {
        t.pop();
    }
    format!("{t}…")
}

/// Number of data points of a chart.
pub fn point_count(c: &Chart) -> usize {
    c.lines.iter().map(|l| l.points.len()).sum()
}

/// The chart as an SVG element. Its height grows with the rows its legend needs below
/// the plot; legend names too long for a row are cut short (the full name is the
/// tooltip).
pub fn svg(c: &Chart) -> String {
    let (x0, x1) = span(
        c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        c.x_axis == XAxis::FromZero,
    );
    let ys = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (y0, y1, y_ticks) = if c.log_y {
        log_span(ys)
    } else {
        let (lo, hi) = span(ys, true);
        (lo, hi, ticks(lo, hi, 5))
    };
    // On a log axis, values at or below its bottom (0 ms) sit on the bottom line.
    let ty = |y: f64| if c.log_y { y.max(y0).log10() } else { y };
    let pw = WIDTH - LEFT - RIGHT;
    let ph = PLOT_HEIGHT;
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + ph - (ty(y) - ty(y0)) / (ty(y1) - ty(y0)) * ph;

    // Legend below the plot: items left to right, wrapping into rows.
    let legend_top = TOP + ph + BELOW_AXIS;
    let max_item = WIDTH - LEFT - 10.0;
    let mut legend = Vec::new();
    let (mut lx, mut row) = (LEFT, 0usize);
    for line in &c.lines {
        let full = if line.points.is_empty() {
            format!("{} (no data)", line.name)
        } else {
            line.name.clone()
        };
        let shown = fit(&full, TICK_FONT, max_item - 18.0);
        let w = 18.0 + text_width(&shown, TICK_FONT) + 18.0;
        if lx > LEFT && lx + w > WIDTH - 10.0 {
            lx = LEFT;
            row += 1;
        }
        legend.push((lx, legend_top + row as f64 * LEGEND_ROW, full, shown));
        lx += w;
    }
    let rows = if c.lines.is_empty() { 0 } else { row + 1 };
    let height = legend_top + rows as f64 * LEGEND_ROW;

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="{id}" data-points="{n}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{t}">"#,
        id = esc(&c.id),
        n = point_count(c),
        t = esc(&c.title)
    );
    let _ = write!(
        s,
        r#"<text class="title" x="{}" y="18">{}</text>"#,
        LEFT,
        esc(&fit(&c.title, TITLE_FONT * 1.1, WIDTH - LEFT - 10.0))
    );
    // Axes, grid and ticks.
    for y in y_ticks {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick y" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT + pw,
            LEFT - 6.0,
            sy(y) + 4.0,
            num(y),
            y = sy(y)
        );
    }
    let xt: Vec<(f64, String)> = match &c.x_axis {
        XAxis::Labels(l) => l.clone(),
        XAxis::Numeric | XAxis::FromZero => {
            ticks(x0, x1, 8).into_iter().map(|v| (v, num(v))).collect()
        }
        XAxis::Integer => {
            let xs: Vec<f64> = c
                .lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0))
                .collect();
            integer_ticks(&xs, x0, x1, pw / (x1 - x0))
                .into_iter()
                .map(|v| (v, num(v)))
                .collect()
        }
    };
    for (x, label) in xt {
        let _ = write!(
            s,
            r#"<text class="tick x" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            sx(x),
            TOP + ph + 16.0,
            esc(&label)
        );
    }
    let _ = write!(
        s,
        r#"<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{:.1}"/><line class="axis" x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}"/>"#,
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        TOP + ph
    );
    let _ = write!(
        s,
        r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        TOP + ph + 36.0,
        esc(&c.x_label),
        TOP + ph / 2.0,
        esc(&c.y_label)
    );
    for (i, (line, (lx, ly, full, shown))) in c.lines.iter().zip(&legend).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let dash = DASHES[(i / COLORS.len()) % DASHES.len()];
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let name = esc(&line.name);
        let pts: Vec<String> = line
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="series" data-series="{name}" fill="none" stroke="{color}" stroke-width="2"{dash_attr} points="{}"/>"#,
            pts.join(" ")
        );
        for (k, &(x, y)) in line.points.iter().enumerate() {
            let (offered_attr, offered_note) = match line.offered.get(k) {
                Some(&o) => (
                    format!(r#" data-offered="{}""#, num(o)),
                    format!(" (offered {}/s)", num(o)),
                ),
                None => (String::new(), String::new()),
            };
            let _ = write!(
                s,
                r#"<circle class="pt" data-series="{name}" data-x="{}" data-y="{}"{offered_attr} cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{name}: {} at {}{offered_note}</title></circle>"#,
                num(x),
                num(y),
                sx(x),
                sy(y),
                num(y),
                num(x)
            );
        }
        let _ = write!(
            s,
            r#"<g class="legend-item"><title>{}</title><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="3"{dash_attr}/><text class="legend" x="{:.1}" y="{:.1}">{}</text></g>"#,
            esc(full),
            lx,
            lx + 14.0,
            ly - 4.0,
            ly - 4.0,
            lx + 18.0,
            ly,
            esc(shown)
        );
    }
    s.push_str("</svg>");
    s
}

/// The chart, or when it has no data point at all a line saying so in its place.
pub fn chart_html(c: &Chart) -> String {
    if point_count(c) == 0 {
        format!(
            r#"<p class="nodata" id="{}" data-points="0">no data for {}</p>"#,
            esc(&c.id),
            esc(&c.title)
        )
    } else {
        svg(c)
    }
}

/// x position of a percentile on the spectrum's axis: "nines" (90 -> 1, 99 -> 2, ...),
/// with 100 drawn one step past 99.999.
pub fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        6.0
    } else {
        -(1.0 - p / 100.0).log10()
    }
}

fn spectrum_line(name: &str, run: &Report) -> Line {
    let points = run
        .totals
        .latency_spectrum_ms
        .iter()
        .map(|p| (nines(p.percentile), p.ms))
        .collect();
    Line {
        offered: Vec::new(),
        name: name.to_string(),
        points,
    }
}

fn spectrum_chart(id: &str, title: &str, lines: Vec<Line>) -> Chart {
    Chart {
        id: id.into(),
        title: title.into(),
        x_label: "percentile".into(),
        y_label: "latency (ms, log scale)".into(),
        lines,
        log_y: true,
        x_axis: XAxis::Labels(
            [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0]
                .iter()
                .map(|&p| (nines(p), crate::report::pct_label(p)))
                .collect(),
        ),
    }
}

/// "1 thread", "16 threads".
fn threads_text(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// A step's name: "16 threads", in a rate sweep "offered 2000/s", and with `--repeat`
/// "16 threads, measurement 2".
fn step_label(run: &Report, repeat: Option<u32>, by_rate: bool) -> String {
    let rate = run.config.rate();
    let name = if by_rate && rate > 0.0 {
        format!("offered {}/s", num(rate))
    } else {
        threads_text(run.config.threads)
    };
    match repeat {
        Some(r) => format!("{name}, measurement {r}"),
        None => name,
    }
}

/// The spectrum of a sweep's steps, one line per step (thread count, and measurement).
pub fn steps_spectrum(id: &str, title: &str, runs: &[(String, &Report)]) -> Chart {
    let lines = runs
        .iter()
        .map(|(name, r)| spectrum_line(name, r))
        .collect();
    spectrum_chart(id, title, lines)
}

/// Charts of one run document: TPS (or events/s), QPS, latency and per-agent rate over
/// time, and the spectrum. TPS and QPS differ by an order of magnitude, so each has its
/// own chart and axis.
/// Bytes in a GiB, for the memory chart.
const GIB: f64 = (1u64 << 30) as f64;

pub fn run_charts(run: &Report, prefix: &str) -> Vec<Chart> {
    let intervals = &run.intervals;
    let db = run.totals.figures.sql.is_some();
    let series = |f: &dyn Fn(&Interval) -> Option<f64>| -> Vec<(f64, f64)> {
        intervals
            .iter()
            .filter_map(|iv| Some((iv.t_s, f(iv)?)))
            .collect()
    };
    // Whole seconds (the usual 1 s tick) get whole-second ticks.
    let whole = intervals.iter().all(|iv| iv.t_s.fract() == 0.0);
    let time_chart = |id: &str, title: &str, y_label: &str, lines: Vec<Line>| Chart {
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
    let rate = if db { "TPS" } else { "events/s" };
    let mut charts = vec![time_chart(
        "throughput-time",
        if db {
            "TPS over time (merged)"
        } else {
            "Events/s over time (merged)"
        },
        if db { "transactions/s" } else { "events/s" },
        vec![Line {
            offered: Vec::new(),
            name: rate.into(),
            points: series(&|iv| Some(iv.events_per_sec)),
        }],
    )];
    if db {
        charts.push(time_chart(
            "qps-time",
            "QPS over time (merged)",
            "queries/s",
            vec![Line {
                offered: Vec::new(),
                name: "QPS".into(),
                points: series(&|iv| iv.figures.sql.as_ref().map(|q| q.qps)),
            }],
        ));
    }
    if intervals.iter().any(|iv| iv.figures.tpcc.is_some()) {
        charts.push(time_chart(
            "tpmc-time",
            "TpmC over time (merged)",
            "New-Orders/min",
            vec![Line {
                offered: Vec::new(),
                name: "TpmC".into(),
                points: series(&|iv| iv.figures.tpcc.as_ref().map(|t| t.tpmc)),
            }],
        ));
        let types = fleetbench_model::workloads::tpcc::TXN_NAMES
            .iter()
            .map(|k| Line {
                offered: Vec::new(),
                name: (*k).into(),
                points: series(&|iv| {
                    let t = iv.figures.tpcc.as_ref()?.transactions.get(*k)?;
                    (t.count > 0).then(|| t.latency_ms.percentiles.get("p95").copied())?
                }),
            })
            .collect();
        charts.push(time_chart(
            "tpcc-p95-time",
            "p95 response time by transaction type over time (merged)",
            "latency (ms)",
            types,
        ));
    }
    let latency = ["p95", "p99"]
        .iter()
        .map(|k| Line {
            offered: Vec::new(),
            name: (*k).into(),
            points: series(&|iv| iv.latency_ms.percentiles.get(*k).copied()),
        })
        .collect();
    charts.push(time_chart(
        "latency-time",
        "p95 and p99 latency over time (merged)",
        "latency (ms)",
        latency,
    ));
    let agents = &run.agents;
    // One line per agent: named `label` of its address, `f` of an interval and its index.
    let agent_lines = |label: &dyn Fn(&str) -> String,
                       f: &dyn Fn(&Interval, usize) -> Option<f64>|
     -> Vec<Line> {
        agents
            .iter()
            .enumerate()
            .map(|(i, a)| Line {
                offered: Vec::new(),
                name: label(&a.addr),
                points: series(&|iv| f(iv, i)),
            })
            .collect()
    };
    let addr = |a: &str| a.to_string();
    let per_agent = agent_lines(&addr, &|iv, i| {
        let n = (*iv.agent_events.get(i)?)? as f64;
        let d = Some(iv.duration_s).filter(|d| *d > 0.0)?;
        Some(n / d)
    });
    charts.push(time_chart(
        "agents-time",
        &format!("{rate} per agent over time"),
        if db { "transactions/s" } else { "events/s" },
        per_agent,
    ));
    // The client hosts' own load: a saturated host measures itself, not the server.
    if intervals.iter().any(|iv| !iv.agent_cpu_busy_pct.is_empty()) {
        let cpu = agent_lines(&addr, &|iv, i| *iv.agent_cpu_busy_pct.get(i)?);
        charts.push(time_chart(
            "hosts-cpu-time",
            "Client host CPU busy per agent over time",
            "CPU busy %",
            cpu,
        ));
    }
    // Each of the hosts' other figures, one line per agent (per agent and direction for
    // the network); files written before `agent_hosts` have none of them.
    let host_lines =
        |label: &dyn Fn(&str) -> String,
         f: &dyn Fn(&crate::report::doc::IntervalHost) -> Option<f64>|
         -> Vec<Line> { agent_lines(label, &|iv, i| f(iv.agent_hosts.get(i)?.as_ref()?)) };
    if intervals.iter().any(|iv| !iv.agent_hosts.is_empty()) {
        charts.push(time_chart(
            "hosts-agent-cpu-time",
            "Agent process CPU per agent over time (share of all cores)",
            "agent CPU %",
            host_lines(&addr, &|h| Some(h.agent_cpu_pct)),
        ));
        charts.push(time_chart(
            "hosts-run-queue-time",
            "Client host run queue per agent over time",
            "runnable tasks",
            host_lines(&addr, &|h| Some(f64::from(h.run_queue))),
        ));
        charts.push(time_chart(
            "hosts-mem-time",
            "Client host memory in use per agent over time",
            "GiB",
            host_lines(&addr, &|h| Some(h.mem_used_bytes as f64 / GIB)),
        ));
        let mut net = host_lines(&|a| format!("{a} rx"), &|h| {
            Some(h.net_rx_bytes_per_sec / 1e6)
        });
        net.extend(host_lines(&|a| format!("{a} tx"), &|h| {
            Some(h.net_tx_bytes_per_sec / 1e6)
        }));
        charts.push(time_chart(
            "hosts-net-time",
            "Client host network per agent over time (loopback excluded)",
            "MB/s",
            net,
        ));
    }
    let has_disk = |iv: &Interval| iv.agent_hosts.iter().flatten().any(|h| h.disk.is_some());
    if intervals.iter().any(has_disk) {
        charts.push(time_chart(
            "hosts-disk-time",
            "Work directory disk utilisation per agent over time",
            "disk util %",
            host_lines(&addr, &|h| h.disk.as_ref().map(|d| d.util_pct)),
        ));
        charts.push(time_chart(
            "hosts-disk-queue-time",
            "Work directory disk queue depth per agent over time",
            "requests in flight",
            host_lines(&addr, &|h| h.disk.as_ref().map(|d| d.queue_depth)),
        ));
    }
    charts.push(steps_spectrum(
        &format!("{prefix}spectrum"),
        "Latency percentile spectrum",
        &[(step_label(run, None, false), run)],
    ));
    charts
}

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
    charts
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
        .collect()
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

/// A JSON value as table text: strings bare, the rest as JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(x) => x.clone(),
        other => other.to_string(),
    }
}

/// Any part of a document as JSON text, as the file holds it.
fn json_text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A configuration as a two-column table (nested values as JSON).
fn config_table(run: &Report) -> String {
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
fn steps_config_table(extra: &[(&str, String)], runs: &[&Report]) -> String {
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
fn rows_table(series: &[compare::Series]) -> String {
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

const STYLE: &str = "body{font-family:sans-serif;margin:20px;color:#222}h1{font-size:22px}\
h2{font-size:18px;margin-top:28px}svg.chart{display:block;margin:10px 0;background:#fff;border:1px solid #ddd}\
.title{font-size:14px;font-weight:bold}.tick,.legend{font-size:11px}.label{font-size:12px}\
.grid{stroke:#eee}.axis{stroke:#333}table{border-collapse:collapse;font-size:12px;margin:8px 0}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}td{overflow-wrap:anywhere;max-width:640px}\
p.nodata{width:720px;padding:12px 18px;margin:10px 0;border:1px dashed #bbb;color:#666;font-style:italic}\
#status{font-family:monospace;padding:4px}#status.error{color:#fff;background:#c00}";

/// Checks every chart once the page has loaded and records the verdict as data
/// attributes of the hidden #status element; an error (a chart missing points, any script
/// error on the page) is shown on the page.
const SCRIPT: &str = r#"(function () {
  var st = document.getElementById('status');
  function fail(m) { st.textContent = 'error: ' + m; st.className = 'error'; st.hidden = false; st.setAttribute('data-ok', 'false'); }
  window.addEventListener('error', function (e) { fail(e.message); });
  try {
    var charts = document.querySelectorAll('svg.chart');
    var total = 0, empty = [];
    for (var i = 0; i < charts.length; i++) {
      var c = charts[i];
      var n = c.querySelectorAll('circle.pt').length;
      if (n !== parseInt(c.getAttribute('data-points'), 10)) {
        throw new Error('chart ' + c.id + ' shows ' + n + ' points of ' + c.getAttribute('data-points'));
      }
      var pts = c.querySelectorAll('circle.pt');
      for (var j = 0; j < pts.length; j++) {
        if (!isFinite(parseFloat(pts[j].getAttribute('data-y')))) { throw new Error('chart ' + c.id + ': a point without a value'); }
      }
      if (n === 0) { empty.push(c.id); }
      total += n;
    }
    st.setAttribute('data-charts', String(charts.length));
    st.setAttribute('data-total-points', String(total));
    st.setAttribute('data-empty', empty.join(' '));
    st.setAttribute('data-ok', 'true');
  } catch (e) { fail(e.message); }
})();"#;

/// A sweep's or scenario's steps on the page: its name, its steps, and the scenario (None
/// for a sweep's one group).
type Group<'a> = (String, &'a [Step], Option<&'a ScenarioDoc>);

/// The whole page for a result document.
pub fn render(doc: &Document) -> String {
    let mut body = String::new();
    let add_charts = |body: &mut String, charts: &[Chart]| {
        for c in charts {
            body.push_str(&chart_html(c));
        }
    };
    let title;
    match doc {
        Document::Run(run) => {
            title = format!(
                "fleetbench {} run, {}",
                run.test,
                threads_text(run.config.threads)
            );
            let series = compare::series(doc, "this run");
            body.push_str("<h2>Summary</h2>");
            body.push_str(&rows_table(&series));
            body.push_str("<h2>Charts</h2>");
            add_charts(&mut body, &run_charts(run, ""));
            let db = run.totals.figures.sql.is_some();
            let _ = write!(
                body,
                "<h2>Per agent</h2><table class=\"rows\"><tr><th>agent</th><th>host</th><th>host facts</th><th>threads</th><th>{}</th><th>p95 ms</th><th>p99 ms</th><th>status</th></tr>",
                if db { "TPS" } else { "events/s" }
            );
            for a in &run.agents {
                let _ = write!(
                    body,
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
            body.push_str("</table><h2>Configuration</h2>");
            body.push_str(&config_table(run));
        }
        Document::Sweep(_) | Document::Scenarios(_) => {
            let (sweep, test) = match doc {
                Document::Sweep(sw) => (true, Some(sw.test.as_str())),
                _ => (false, None),
            };
            let series: Vec<compare::Series> = compare::series(doc, "")
                .into_iter()
                .map(|mut s| {
                    if s.label.is_empty() {
                        s.label = test.unwrap_or("sweep").to_string();
                    }
                    s
                })
                .collect();
            let (groups, repeat, warmup, cooldown): (Vec<Group>, u32, u64, u64) = match doc {
                Document::Sweep(sw) => (
                    series
                        .first()
                        .map(|s| (s.label.clone(), &sw.steps[..], None))
                        .into_iter()
                        .collect(),
                    sw.repeat,
                    sw.warmup_time_s,
                    sw.cooldown_s,
                ),
                Document::Scenarios(sc) => (
                    sc.scenarios
                        .iter()
                        .map(|s| (s.name.clone(), &s.steps[..], Some(s)))
                        .collect(),
                    sc.repeat,
                    sc.warmup_time_s,
                    sc.cooldown_s,
                ),
                Document::Run(_) => unreachable!("a run is rendered above"),
            };
            let repeated = repeat > 1;
            // Rate sweeps get charts against the rate; series that step over thread
            // counts (all of them, when none is a rate sweep) charts against threads.
            let by_rate = |s: &compare::Series| crate::sweep::is_rate_sweep(&s.rows);
            let any_by_rate = series.iter().any(by_rate);
            let runs: Vec<(String, Vec<(String, &Report)>)> = groups
                .iter()
                .zip(&series)
                .map(|((n, steps, _), se)| {
                    let rate_steps = by_rate(se);
                    let rs = steps
                        .iter()
                        .map(|s| {
                            let rep = Some(s.repeat).filter(|_| repeated);
                            (step_label(&s.result, rep, rate_steps), &s.result)
                        })
                        .collect();
                    (n.clone(), rs)
                })
                .collect();
            title = match doc {
                Document::Sweep(sw) => format!(
                    "fleetbench {} sweep of {}",
                    if any_by_rate { "rate" } else { "thread" },
                    sw.test
                ),
                Document::Scenarios(sc) => format!("fleetbench scenarios from {}", sc.file),
                Document::Run(_) => unreachable!("a run is rendered above"),
            };
            body.push_str("<h2>Summary</h2>");
            body.push_str(&rows_table(&series));
            if any_by_rate {
                let open: Vec<&compare::Series> = series
                    .iter()
                    .filter(|s| s.rows.iter().any(|r| r.rate > 0.0))
                    .collect();
                body.push_str("<h2>Throughput and latency by rate</h2>");
                add_charts(&mut body, &rate_charts(&open));
            }
            let by_threads: Vec<compare::Series> = series
                .iter()
                .filter(|s| !any_by_rate || s.rows.iter().any(|r| r.threads != s.rows[0].threads))
                .cloned()
                .collect();
            if !by_threads.is_empty() {
                body.push_str("<h2>By thread count</h2>");
                add_charts(&mut body, &sweep_charts(&by_threads));
            }
            body.push_str("<h2>Latency percentile spectrum</h2>");
            for (i, (name, rs)) in runs.iter().enumerate() {
                let (id, chart_title) = if sweep {
                    (
                        "spectrum".to_string(),
                        format!(
                            "Latency percentile spectrum per {}",
                            if any_by_rate {
                                "offered rate"
                            } else {
                                "thread count"
                            }
                        ),
                    )
                } else {
                    (
                        format!("s{i}-spectrum"),
                        format!("Latency percentile spectrum of {name}"),
                    )
                };
                add_charts(&mut body, &[steps_spectrum(&id, &chart_title, rs)]);
            }
            for (i, ((name, rs), (_, _, scenario))) in runs.iter().zip(&groups).enumerate() {
                let _ = write!(body, "<h2>{} over time</h2>", esc(name));
                for (j, (label, r)) in rs.iter().enumerate() {
                    let _ = write!(body, "<h3>{}</h3>", esc(label));
                    let charts: Vec<Chart> = run_charts(r, &format!("s{i}-{j}-"))
                        .into_iter()
                        .filter(|c| !c.id.ends_with("spectrum"))
                        .collect();
                    add_charts(&mut body, &charts);
                }
                let mut extra: Vec<(&str, String)> = Vec::new();
                if let Some(sc) = scenario {
                    if let Some(d) = &sc.description {
                        extra.push(("description", d.clone()));
                    }
                    extra.push(("test", sc.test.clone()));
                    extra.push(("targets", json_text(&sc.targets)));
                }
                extra.push(("warmup_time_s", warmup.to_string()));
                extra.push(("cooldown_s", cooldown.to_string()));
                let _ = write!(body, "<h3>Configuration of {}</h3>", esc(name));
                let results: Vec<&Report> = rs.iter().map(|(_, r)| *r).collect();
                body.push_str(&steps_config_table(&extra, &results));
            }
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\n<body><h1>{t}</h1><div id=\"status\" hidden data-ok=\"false\">script did not run</div>\n{body}\n<p>fleetbench {v}, result format {f}</p><script>{SCRIPT}</script></body></html>\n",
        t = esc(&title),
        v = esc(doc.fleetbench_version()),
        f = doc.format_version()
    )
}

/// Writes the page for `doc` to `path`.
pub fn write(path: &Path, doc: &Document) -> std::io::Result<()> {
    crate::output::write(path, |w| w.write_all(render(doc).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::tests::{latency, open_doc, run_doc, step, sweep_of};

    #[test]
    fn round_ticks() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.5, 1.0]);
        assert_eq!(
            ticks(16.0, 128.0, 8),
            vec![20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
        );
        assert_eq!(ticks(3.0, 3.0, 5), vec![3.0]);
    }

    /// A chart over thread counts with one line `name` of `points`.
    fn thread_chart(name: &str, points: Vec<(f64, f64)>) -> Chart {
        Chart {
            id: "tps-threads".into(),
            title: "t".into(),
            x_label: "threads".into(),
            y_label: "y".into(),
            lines: vec![Line {
                offered: Vec::new(),
                name: name.into(),
                points,
            }],
            x_axis: XAxis::Integer,
            log_y: false,
        }
    }

    #[test]
    fn points_carry_their_values() {
        let c = Chart {
            title: "QPS <by> threads".into(),
            ..thread_chart("direct", vec![(16.0, 1000.0), (32.0, 1500.5)])
        };
        let s = svg(&c);
        assert!(s.contains(r#"data-points="2""#));
        assert!(s.contains(r#"data-series="direct" data-x="16" data-y="1000""#));
        assert!(s.contains(r#"data-x="32" data-y="1500.5""#));
        assert!(s.contains("QPS &lt;by&gt; threads"));
        // The first point sits at the left edge, the largest value below the top.
        assert!(s.contains(&format!(r#"cx="{LEFT:.1}""#)));
        assert_eq!(s.matches("<circle").count(), 2);
    }

    #[test]
    fn nines_axis() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0), 6.0);
    }

    #[test]
    fn thread_axes_have_whole_number_ticks() {
        // Few, well spaced counts: the counts themselves.
        assert_eq!(
            integer_ticks(&[4.0, 16.0, 64.0], 4.0, 64.0, 11.0),
            vec![4.0, 16.0, 64.0]
        );
        // 1 and 2 threads: never 1.2, 1.5.
        assert_eq!(integer_ticks(&[1.0, 2.0], 1.0, 2.0, 660.0), vec![1.0, 2.0]);
        // Counts too close to label each: round integer ticks.
        let t = integer_ticks(&[1.0, 2.0, 4.0, 8.0, 128.0], 1.0, 128.0, 5.0);
        assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
        assert_eq!(t, vec![20.0, 40.0, 60.0, 80.0, 100.0, 120.0]);
        assert!(
            ticks_from(2.0, 3.0, 8, 1.0)
                .iter()
                .all(|v| v.fract() == 0.0)
        );
        let c = thread_chart("a", vec![(2.0, 1.0), (3.0, 2.0)]);
        let s = svg(&c);
        let labels: Vec<&str> = s
            .split(r#"<text class="tick x""#)
            .skip(1)
            .map(|t| &t[t.find('>').unwrap() + 1..t.find('<').unwrap()])
            .collect();
        assert_eq!(labels, ["2", "3"]);
    }

    #[test]
    fn long_legends_wrap_inside_the_chart() {
        let lines: Vec<Line> = (0..12)
            .map(|i| Line {
                offered: Vec::new(),
                name: format!("oltp_read_write scenario number {i} (128 threads)"),
                points: vec![(0.0, 1.0), (1.0, f64::from(i))],
            })
            .collect();
        let c = Chart {
            id: "spectrum".into(),
            title: "x".into(),
            x_label: "p".into(),
            y_label: "ms".into(),
            lines,
            x_axis: XAxis::Numeric,
            log_y: false,
        };
        let s = svg(&c);
        // Every legend text starts inside and, by the generous width estimate, ends inside.
        for t in s.split(r#"<text class="legend" x=""#).skip(1) {
            let x: f64 = t[..t.find('"').unwrap()].parse().unwrap();
            let text = &t[t.find('>').unwrap() + 1..t.find('<').unwrap()];
            assert!(x + text_width(text, TICK_FONT) <= WIDTH, "{text} at {x}");
        }
        let height: f64 = {
            let at = s.find(r#"height=""#).unwrap() + 8;
            s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
        };
        assert!(
            height > TOP + PLOT_HEIGHT + BELOW_AXIS + 4.0 * LEGEND_ROW,
            "{height}"
        );
        // A name too long for any row is cut short, the full name kept as the tooltip.
        let long = "x".repeat(300);
        assert!(fit(&long, TICK_FONT, 200.0).ends_with('…'));
        assert!(text_width(&fit(&long, TICK_FONT, 200.0), TICK_FONT) <= 200.0);
    }

    #[test]
    fn the_spectrum_has_a_log_axis() {
        let (lo, hi, t) = log_span([0.0, 0.05, 0.2, 380.0].into_iter());
        assert_eq!((lo, hi), (0.01, 1000.0));
        assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]);
        let (_, _, t) = log_span([2.0, 30.0].into_iter());
        assert_eq!(t, vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        let (lo, hi, _) = log_span(std::iter::empty());
        assert!(lo > 0.0 && hi > lo);
    }

    #[test]
    fn a_chart_without_data_says_so() {
        let c = Chart {
            id: "agents-time".into(),
            title: "TPS per agent over time".into(),
            x_label: "s".into(),
            y_label: "y".into(),
            lines: vec![Line {
                offered: Vec::new(),
                name: "a".into(),
                points: vec![],
            }],
            x_axis: XAxis::Numeric,
            log_y: false,
        };
        let h = chart_html(&c);
        assert!(h.contains("no data for TPS per agent over time"), "{h}");
        assert!(!h.contains("<svg"));
        let mut c2 = c.clone();
        c2.lines.push(Line {
            offered: Vec::new(),
            name: "b".into(),
            points: vec![(1.0, 2.0)],
        });
        assert!(chart_html(&c2).contains(">a (no data)</text>"));
    }

    #[test]
    fn a_sweep_page_has_a_line_per_series() {
        let steps = [(8u32, 100.0), (16, 180.0)]
            .iter()
            .map(|&(t, tps)| step(run_doc(t, tps, tps * 20.0, 4.0), 1))
            .collect();
        let doc = sweep_of("oltp_read_write", steps, None);
        let page = render(&doc);
        assert!(
            page.contains(r#"id="qps-threads" data-points="2""#),
            "{page}"
        );
        assert!(page.contains(r#"data-x="16" data-y="3600""#));
        assert!(!page.contains("http://") || !page.contains("src=\"http"));
        // Every step's thread count in the configuration, not the first one's only.
        assert!(
            page.contains("<th>threads (per step)</th><td>8, 16</td>"),
            "{page}"
        );
        // No spectrum in these documents: a note, not an empty chart.
        assert!(page.contains("no data for Latency percentile spectrum"));
    }

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
        let doc = Document::Scenarios(crate::report::doc::ScenariosDoc {
            format_version: 2,
            kind: "scenarios".into(),
            fleetbench_version: env!("CARGO_PKG_VERSION").into(),
            file: "s.toml".into(),
            warmup_time_s: 0,
            cooldown_s: 0,
            repeat: 1,
            interrupted: false,
            scenarios: vec![
                scenario("direct", &[(100.0, 100.0), (200.0, 200.0)]),
                scenario("proxy", &[(100.0, 99.0), (200.0, 180.0)]),
            ],
        });
        let series = compare::series(&doc, "");
        let charts = rate_charts(&series.iter().collect::<Vec<_>>());
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["achieved-rate", "p50-rate", "p95-rate", "p99-rate"]);
        let names: Vec<&str> = charts[2].lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["direct", "proxy"]);
        assert_eq!(charts[2].lines[1].points, [(99.0, 0.99), (180.0, 1.8)]);
        assert!(render(&doc).contains(r#"id="p99-rate" data-points="4""#));
    }

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
                "<td>8 cores, AMD EPYC &lt;7B13&gt;, Linux 6.1.0-18-amd64, 32.0 GiB</td>"
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
}
