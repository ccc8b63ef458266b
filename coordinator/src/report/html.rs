//! The HTML report: one self-contained file (inline CSS, SVG and a small script; nothing
//! fetched from the network) with charts drawn from a result document: for a run,
//! throughput and p95/p99 over time, merged and per agent; for sweeps and scenarios, QPS,
//! TPS and p95 against thread count with one line per scenario; a latency percentile
//! spectrum; and the run's configuration. Every data point is an SVG circle carrying its
//! values in data-* attributes, and the inline script writes its verdict (or any error)
//! into the page, so a headless browser's DOM dump shows both.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

use super::compare::{self, kind};
use crate::sweep::Summary;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart: its id, title, axis labels and lines. `x_labels` replaces numeric x ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub x_labels: Option<Vec<(f64, String)>>,
}

/// About `n` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of 10).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
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
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
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
        hi = lo + 1.0;
    }
    (lo, hi)
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

/// Number of data points of a chart.
pub fn point_count(c: &Chart) -> usize {
    c.lines.iter().map(|l| l.points.len()).sum()
}

/// The chart as an SVG element.
pub fn svg(c: &Chart) -> String {
    let (x0, x1) = span(
        c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        false,
    );
    let (y0, y1) = span(
        c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    let pw = WIDTH - LEFT - RIGHT;
    let ph = HEIGHT - TOP - BOTTOM;
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="{id}" data-points="{n}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{t}">"#,
        id = esc(&c.id),
        n = point_count(c),
        t = esc(&c.title)
    );
    let _ = write!(
        s,
        r#"<text class="title" x="{}" y="18">{}</text>"#,
        LEFT,
        esc(&c.title)
    );
    // Axes, grid and ticks.
    for y in ticks(y0, y1, 5) {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT + pw,
            LEFT - 6.0,
            sy(y) + 4.0,
            num(y),
            y = sy(y)
        );
    }
    let xt: Vec<(f64, String)> = match &c.x_labels {
        Some(l) => l.clone(),
        None => ticks(x0, x1, 8).into_iter().map(|v| (v, num(v))).collect(),
    };
    for (x, label) in xt {
        let _ = write!(
            s,
            r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
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
        HEIGHT - 10.0,
        esc(&c.x_label),
        TOP + ph / 2.0,
        esc(&c.y_label)
    );
    for (i, line) in c.lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let name = esc(&line.name);
        let pts: Vec<String> = line
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="series" data-series="{name}" fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        for &(x, y) in &line.points {
            let _ = write!(
                s,
                r#"<circle class="pt" data-series="{name}" data-x="{}" data-y="{}" cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{name}: {} at {}</title></circle>"#,
                num(x),
                num(y),
                sx(x),
                sy(y),
                num(y),
                num(x)
            );
        }
        let ly = TOP + 14.0 + i as f64 * 18.0;
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{color}"/><text class="legend" x="{:.1}" y="{:.1}">{name}</text>"#,
            LEFT + pw + 14.0,
            ly - 10.0,
            LEFT + pw + 32.0,
            ly
        );
    }
    s.push_str("</svg>");
    s
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

fn spectrum_line(name: &str, run: &Value) -> Option<Line> {
    let pts = run.pointer("/totals/latency_spectrum_ms")?.as_array()?;
    let points: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((nines(p["percentile"].as_f64()?), p["ms"].as_f64()?)))
        .collect();
    (!points.is_empty()).then(|| Line {
        name: name.to_string(),
        points,
    })
}

fn spectrum_chart(id: &str, lines: Vec<Line>) -> Chart {
    Chart {
        id: id.into(),
        title: "Latency percentile spectrum".into(),
        x_label: "percentile".into(),
        y_label: "latency (ms)".into(),
        lines,
        x_labels: Some(
            [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0]
                .iter()
                .map(|&p| (nines(p), crate::report::pct_label(p)))
                .collect(),
        ),
    }
}

/// Charts of one run document: throughput and latency over time, per agent, spectrum.
pub fn run_charts(run: &Value, prefix: &str) -> Vec<Chart> {
    let empty = Vec::new();
    let intervals = run["intervals"].as_array().unwrap_or(&empty);
    let db = run.pointer("/totals/sql").is_some_and(Value::is_object);
    let series = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<(f64, f64)> {
        intervals
            .iter()
            .filter_map(|iv| Some((iv["t_s"].as_f64()?, f(iv)?)))
            .collect()
    };
    let mut throughput = vec![Line {
        name: if db { "TPS" } else { "events/s" }.into(),
        points: series(&|iv| iv["events_per_sec"].as_f64()),
    }];
    if db {
        throughput.push(Line {
            name: "QPS".into(),
            points: series(&|iv| iv.pointer("/sql/qps")?.as_f64()),
        });
    }
    let latency = ["p95", "p99"]
        .iter()
        .map(|k| Line {
            name: (*k).into(),
            points: series(&|iv| iv["latency_ms"][*k].as_f64()),
        })
        .collect();
    let agents = run["agents"].as_array().unwrap_or(&empty);
    let per_agent = agents
        .iter()
        .enumerate()
        .map(|(i, a)| Line {
            name: a["addr"].as_str().unwrap_or("?").to_string(),
            points: series(&|iv| {
                let n = iv["agent_events"].get(i)?.as_f64()?;
                let d = iv["duration_s"].as_f64().filter(|d| *d > 0.0)?;
                Some(n / d)
            }),
        })
        .collect();
    let mut charts = vec![
        Chart {
            id: format!("{prefix}throughput-time"),
            title: format!(
                "{} over time (merged)",
                if db { "TPS and QPS" } else { "Events/s" }
            ),
            x_label: "seconds".into(),
            y_label: "per second".into(),
            lines: throughput,
            x_labels: None,
        },
        Chart {
            id: format!("{prefix}latency-time"),
            title: "p95 and p99 latency over time (merged)".into(),
            x_label: "seconds".into(),
            y_label: "latency (ms)".into(),
            lines: latency,
            x_labels: None,
        },
        Chart {
            id: format!("{prefix}agents-time"),
            title: format!(
                "{} per agent over time",
                if db { "TPS" } else { "Events/s" }
            ),
            x_label: "seconds".into(),
            y_label: "per second".into(),
            lines: per_agent,
            x_labels: None,
        },
    ];
    if let Some(l) = spectrum_line("all", run) {
        charts.push(spectrum_chart(&format!("{prefix}spectrum"), vec![l]));
    }
    charts
}

/// Charts across series (sweeps, scenarios): QPS, TPS, p95 and p99 against threads, and
/// the spectrum of each series at its highest thread count.
pub fn sweep_charts(series: &[compare::Series], runs: &[(String, Vec<Value>)]) -> Vec<Chart> {
    let line = |f: &dyn Fn(&Summary) -> Option<f64>| -> Vec<Line> {
        series
            .iter()
            .map(|s| Line {
                name: s.label.clone(),
                points: s
                    .rows
                    .iter()
                    .filter_map(|r| Some((f64::from(r.threads), f(r)?)))
                    .collect(),
            })
            .collect()
    };
    let db = series.iter().flat_map(|s| &s.rows).any(|r| r.qps.is_some());
    let mut charts = Vec::new();
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
        "per second",
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
            x_labels: None,
        })
        .collect();
    let spectra: Vec<Line> = runs
        .iter()
        .filter_map(|(name, rs)| {
            let last = rs
                .iter()
                .max_by_key(|r| r.pointer("/config/threads").and_then(Value::as_u64))?;
            let threads = last.pointer("/config/threads")?.as_u64()?;
            spectrum_line(&format!("{name} ({threads} threads)"), last)
        })
        .collect();
    if !spectra.is_empty() {
        out.push(spectrum_chart("spectrum", spectra));
    }
    out
}

/// A configuration object as a two-column table (nested values as JSON).
fn config_table(cfg: &Value) -> String {
    let mut s = String::from("<table class=\"config\">");
    if let Some(map) = cfg.as_object() {
        for (k, v) in map {
            let text = match v {
                Value::String(x) => x.clone(),
                other => other.to_string(),
            };
            let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&text));
        }
    }
    s.push_str("</table>");
    s
}

/// The summary table of series rows.
fn rows_table(series: &[compare::Series]) -> String {
    let pcts = crate::sweep::percentile_keys(series.iter().flat_map(|s| &s.rows));
    let mut s = String::from(
        "<table class=\"rows\"><tr><th>series</th><th>threads</th><th>TPS</th><th>QPS</th><th>avg ms</th>",
    );
    for p in &pcts {
        let _ = write!(s, "<th>{} ms</th>", esc(p));
    }
    s.push_str("<th>max ms</th><th>err/s</th></tr>");
    for se in series {
        for r in &se.rows {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.3}</td>",
                esc(&se.label),
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
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}#status{font-family:monospace;padding:4px}\
#status.error{color:#fff;background:#c00}";

/// Checks every chart once the page has loaded and writes the verdict into #status; any
/// script error anywhere on the page lands there too.
const SCRIPT: &str = r#"(function () {
  var st = document.getElementById('status');
  function fail(m) { st.textContent = 'error: ' + m; st.className = 'error'; st.setAttribute('data-ok', 'false'); }
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
    st.textContent = 'ok: ' + charts.length + ' charts, ' + total + ' points' + (empty.length ? '; empty: ' + empty.join(', ') : '');
    st.setAttribute('data-ok', 'true');
    st.setAttribute('data-charts', String(charts.length));
    st.setAttribute('data-total-points', String(total));
  } catch (e) { fail(e.message); }
})();"#;

/// The whole page for a result document.
pub fn render(doc: &Value) -> Result<String, String> {
    let mut body = String::new();
    let add_charts = |body: &mut String, charts: &[Chart]| {
        for c in charts {
            body.push_str(&svg(c));
        }
    };
    let title;
    match kind(doc) {
        "run" => {
            title = format!(
                "fleetbench {} run, {} threads",
                doc["test"].as_str().unwrap_or("?"),
                doc.pointer("/config/threads")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            );
            let series = compare::series(doc, "this run")?;
            body.push_str("<h2>Summary</h2>");
            body.push_str(&rows_table(&series));
            body.push_str("<h2>Charts</h2>");
            add_charts(&mut body, &run_charts(doc, ""));
            body.push_str("<h2>Per agent</h2><table class=\"rows\"><tr><th>agent</th><th>host</th><th>threads</th><th>events/s</th><th>p95 ms</th><th>p99 ms</th><th>status</th></tr>");
            for a in doc["agents"].as_array().into_iter().flatten() {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(a["addr"].as_str().unwrap_or("")),
                    esc(a["host"].as_str().unwrap_or("")),
                    a["threads"],
                    a["events_per_sec"].as_f64().unwrap_or(0.0),
                    a["latency_ms"]["p95"],
                    a["latency_ms"]["p99"],
                    esc(a["status"].as_str().unwrap_or(""))
                );
            }
            body.push_str("</table><h2>Configuration</h2>");
            body.push_str(&config_table(&doc["config"]));
        }
        "sweep" | "scenarios" => {
            let series = compare::series(doc, "")?;
            let series: Vec<compare::Series> = series
                .into_iter()
                .map(|mut s| {
                    if s.label.is_empty() {
                        s.label = doc["test"].as_str().unwrap_or("sweep").to_string();
                    }
                    s
                })
                .collect();
            let groups: Vec<(String, &Value)> = if kind(doc) == "sweep" {
                vec![(series[0].label.clone(), doc)]
            } else {
                doc["scenarios"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|sc| (sc["name"].as_str().unwrap_or("?").to_string(), sc))
                    .collect()
            };
            let runs: Vec<(String, Vec<Value>)> = groups
                .iter()
                .map(|(n, g)| {
                    let rs = g["steps"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| s["result"].clone())
                        .collect();
                    (n.clone(), rs)
                })
                .collect();
            title = if kind(doc) == "sweep" {
                format!(
                    "fleetbench thread sweep of {}",
                    doc["test"].as_str().unwrap_or("?")
                )
            } else {
                format!(
                    "fleetbench scenarios from {}",
                    doc["file"].as_str().unwrap_or("?")
                )
            };
            body.push_str("<h2>Summary</h2>");
            body.push_str(&rows_table(&series));
            body.push_str("<h2>By thread count</h2>");
            add_charts(&mut body, &sweep_charts(&series, &runs));
            for (i, (name, rs)) in runs.iter().enumerate() {
                let _ = write!(body, "<h2>{} over time</h2>", esc(name));
                for (j, r) in rs.iter().enumerate() {
                    let threads = r
                        .pointer("/config/threads")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    let _ = write!(body, "<h3>{} threads</h3>", threads);
                    let charts: Vec<Chart> = run_charts(r, &format!("s{i}-{j}-"))
                        .into_iter()
                        .filter(|c| !c.id.ends_with("spectrum"))
                        .collect();
                    add_charts(&mut body, &charts);
                }
                if let Some(first) = rs.first() {
                    let _ = write!(body, "<h3>Configuration of {}</h3>", esc(name));
                    body.push_str(&config_table(&first["config"]));
                }
            }
        }
        other => return Err(format!("unknown kind '{other}'")),
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\n<body><h1>{t}</h1><div id=\"status\" data-ok=\"false\">script did not run</div>\n{body}\n<p>fleetbench {v}, result format {f}</p><script>{SCRIPT}</script></body></html>\n",
        t = esc(&title),
        v = esc(doc["fleetbench_version"].as_str().unwrap_or("?")),
        f = doc["format_version"]
    ))
}

/// Writes the page for `doc` to `path`.
pub fn write(path: &Path, doc: &Value) -> std::io::Result<()> {
    let page = render(doc).map_err(std::io::Error::other)?;
    std::fs::write(path, page)
}

/// `fleetbench report RESULT.json --html OUT.html`: writes the page; exit 0.
pub fn main(raw: &crate::cli::RawArgs) -> anyhow::Result<i32> {
    let (Some(html), [_, file]) = (&raw.html, &raw.words[..]) else {
        return Err(crate::UsageError(
            "usage: fleetbench report RESULT.json --html OUT.html".into(),
        )
        .into());
    };
    let path = Path::new(file);
    let doc = compare::load(path)?;
    let page =
        render(&doc).map_err(|e| compare::DocError::Format(path.display().to_string(), e))?;
    std::fs::write(html, page)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", html.display()))?;
    println!("wrote {}", html.display());
    Ok(crate::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn points_carry_their_values() {
        let c = Chart {
            id: "qps".into(),
            title: "QPS <by> threads".into(),
            x_label: "threads".into(),
            y_label: "q/s".into(),
            lines: vec![Line {
                name: "direct".into(),
                points: vec![(16.0, 1000.0), (32.0, 1500.5)],
            }],
            x_labels: None,
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
    fn a_sweep_page_has_a_line_per_series() {
        let steps: Vec<Value> = [(8u32, 100.0), (16, 180.0)]
            .iter()
            .map(|&(t, tps)| serde_json::json!({"result": crate::sweep::tests::run_doc(t, tps, tps * 20.0, 4.0)}))
            .collect();
        let doc = serde_json::json!({"format_version": 2, "kind": "sweep", "test": "oltp_read_write", "steps": steps});
        let page = render(&doc).unwrap();
        assert!(
            page.contains(r#"id="qps-threads" data-points="2""#),
            "{page}"
        );
        assert!(page.contains(r#"data-x="16" data-y="3600""#));
        assert!(!page.contains("http://") || !page.contains("src=\"http"));
        assert!(render(&serde_json::json!({"kind": "nope"})).is_err());
    }
}
