//! The whole page for a result document: a run's summary, charts, agents and
//! configuration; a sweep's or scenario file's summary, charts by rate and by thread
//! count, spectra, each step over time and the configurations.

use std::fmt::Write;
use std::path::Path;

use super::markup::{esc, json_text};
use super::run_charts::run_charts;
use super::spectrum::{step_label, steps_spectrum, threads_text};
use super::svg::{Chart, chart_html};
use super::sweep_charts::{rate_charts, sweep_charts};
use super::tables::{agents_table, config_table, rows_table, steps_config_table};
use crate::report::compare;
use crate::report::doc::{Document, Report, ScenarioDoc, Step};

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

/// The steps of a sweep or scenario file, group by group, and the settings they share.
struct Groups<'a> {
    groups: Vec<Group<'a>>,
    repeat: u32,
    warmup_s: u64,
    cooldown_s: u64,
}

/// Each group's name and its steps, each step named and with its result.
type StepRuns<'a> = Vec<(String, Vec<(String, &'a Report)>)>;

/// The whole page for a result document.
pub fn render(doc: &Document) -> String {
    let (title, body) = match doc {
        Document::Run(run) => run_page(doc, run),
        Document::Sweep(_) | Document::Scenarios(_) => steps_page(doc),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\n<body><h1>{t}</h1><div id=\"status\" hidden data-ok=\"false\">script did not run</div>\n{body}\n<p>fleetbench {v}, result format {f}</p><script>{SCRIPT}</script></body></html>\n",
        t = esc(&title),
        v = esc(doc.fleetbench_version()),
        f = doc.format_version()
    )
}

fn add_charts(body: &mut String, charts: &[Chart]) {
    for c in charts {
        body.push_str(&chart_html(c));
    }
}

/// A run's title, and its page: summary, charts, agents and configuration.
fn run_page(doc: &Document, run: &Report) -> (String, String) {
    let title = format!(
        "fleetbench {} run, {}",
        run.test,
        threads_text(run.config.threads)
    );
    let mut body = String::new();
    let series = compare::series(doc, "this run");
    body.push_str("<h2>Summary</h2>");
    body.push_str(&rows_table(&series));
    body.push_str("<h2>Charts</h2>");
    add_charts(&mut body, &run_charts(run, ""));
    body.push_str(&agents_table(run));
    body.push_str("<h2>Configuration</h2>");
    body.push_str(&config_table(run));
    (title, body)
}

/// A sweep's or scenario file's title, and its page.
fn steps_page(doc: &Document) -> (String, String) {
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
    let groups = groups(doc, &series);
    // Rate sweeps get charts against the rate; series that step over thread counts (all
    // of them, when none is a rate sweep) charts against threads.
    let any_by_rate = series.iter().any(by_rate);
    let runs = step_runs(&groups, &series);
    let title = match doc {
        Document::Sweep(sw) => format!(
            "fleetbench {} sweep of {}",
            if any_by_rate { "rate" } else { "thread" },
            sw.test
        ),
        Document::Scenarios(sc) => format!("fleetbench scenarios from {}", sc.file),
        Document::Run(_) => unreachable!("a run is rendered by run_page"),
    };
    let mut body = String::new();
    body.push_str("<h2>Summary</h2>");
    body.push_str(&rows_table(&series));
    series_charts(&mut body, &series, any_by_rate);
    spectra(&mut body, &runs, sweep, any_by_rate);
    over_time(&mut body, &runs, &groups);
    (title, body)
}

/// Whether a series steps over offered rates.
fn by_rate(s: &compare::Series) -> bool {
    crate::sweep::is_rate_sweep(&s.rows)
}

/// The groups of a sweep (one) or scenario file (one per scenario).
fn groups<'a>(doc: &'a Document, series: &[compare::Series]) -> Groups<'a> {
    match doc {
        Document::Sweep(sw) => Groups {
            groups: series
                .first()
                .map(|s| (s.label.clone(), &sw.steps[..], None))
                .into_iter()
                .collect(),
            repeat: sw.repeat,
            warmup_s: sw.warmup_time_s,
            cooldown_s: sw.cooldown_s,
        },
        Document::Scenarios(sc) => Groups {
            groups: sc
                .scenarios
                .iter()
                .map(|s| (s.name.clone(), &s.steps[..], Some(s)))
                .collect(),
            repeat: sc.repeat,
            warmup_s: sc.warmup_time_s,
            cooldown_s: sc.cooldown_s,
        },
        Document::Run(_) => unreachable!("a run is rendered by run_page"),
    }
}

/// Each group's steps, named by thread count or offered rate (and measurement, with
/// `--repeat`).
fn step_runs<'a>(groups: &Groups<'a>, series: &[compare::Series]) -> StepRuns<'a> {
    let repeated = groups.repeat > 1;
    groups
        .groups
        .iter()
        .zip(series)
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
        .collect()
}

/// The charts across series: by offered rate (rate sweeps), by thread count.
fn series_charts(body: &mut String, series: &[compare::Series], any_by_rate: bool) {
    if any_by_rate {
        let open: Vec<&compare::Series> = series
            .iter()
            .filter(|s| s.rows.iter().any(|r| r.rate > 0.0))
            .collect();
        body.push_str("<h2>Throughput and latency by rate</h2>");
        add_charts(body, &rate_charts(&open));
    }
    let by_threads: Vec<compare::Series> = series
        .iter()
        .filter(|s| !any_by_rate || s.rows.iter().any(|r| r.threads != s.rows[0].threads))
        .cloned()
        .collect();
    if !by_threads.is_empty() {
        body.push_str("<h2>By thread count</h2>");
        add_charts(body, &sweep_charts(&by_threads));
    }
}

/// A spectrum per group, a line per step.
fn spectra(body: &mut String, runs: &StepRuns, sweep: bool, any_by_rate: bool) {
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
        add_charts(body, &[steps_spectrum(&id, &chart_title, rs)]);
    }
}

/// Per group: each step's charts over time, then the group's configuration.
fn over_time(body: &mut String, runs: &StepRuns, groups: &Groups) {
    for (i, ((name, rs), (_, _, scenario))) in runs.iter().zip(&groups.groups).enumerate() {
        let _ = write!(body, "<h2>{} over time</h2>", esc(name));
        for (j, (label, r)) in rs.iter().enumerate() {
            let _ = write!(body, "<h3>{}</h3>", esc(label));
            let charts: Vec<Chart> = run_charts(r, &format!("s{i}-{j}-"))
                .into_iter()
                .filter(|c| !c.id.ends_with("spectrum"))
                .collect();
            add_charts(body, &charts);
        }
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some(sc) = scenario {
            if let Some(d) = &sc.description {
                extra.push(("description", d.clone()));
            }
            extra.push(("test", sc.test.clone()));
            extra.push(("targets", json_text(&sc.targets)));
        }
        extra.push(("warmup_time_s", groups.warmup_s.to_string()));
        extra.push(("cooldown_s", groups.cooldown_s.to_string()));
        let _ = write!(body, "<h3>Configuration of {}</h3>", esc(name));
        let results: Vec<&Report> = rs.iter().map(|(_, r)| *r).collect();
        body.push_str(&steps_config_table(&extra, &results));
    }
}

/// Writes the page for `doc` to `path`.
pub fn write(path: &Path, doc: &Document) -> std::io::Result<()> {
    crate::output::write(path, |w| w.write_all(render(doc).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::tests::{run_doc, step, sweep_of};

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
}
