//! The whole page for a result document: a run's summary, charts, agents and
//! configuration; a sweep's or scenario file's summary, charts by rate and by thread
//! count, spectra, each step over time and the configurations.

use std::fmt::Write;
use std::path::Path;

use super::checks::{constraint_table, errors_line, errors_table};
use super::grid::charts_grid;
use super::header::{run_header, saturation_warnings, steps_header};
use super::markup::esc;
use super::run_charts::{run_charts, steps_over_time};
use super::spectrum::{step_label, steps_spectrum};
use super::svg::Chart;
use super::sweep_charts::{rate_charts, sweep_charts};
use super::tables::{agents_table, config_table, rows_table, steps_config_table, tpcc_table};
use crate::report::compare;
use crate::report::doc::{Document, Report, ScenarioDoc, Step};

pub(super) const STYLE: &str = "body{font-family:sans-serif;margin:20px;color:#222}h1{font-size:22px}\
p.warning{color:#a00;font-weight:bold}\
h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:12px;align-items:start;margin:10px 0}\
svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #ddd;box-sizing:border-box}\
.title{font-size:14px;font-weight:bold}.tick,.legend{font-size:11px}.label{font-size:12px}\
.grid{stroke:#eee}.axis{stroke:#333}table{border-collapse:collapse;font-size:12px;margin:8px 0}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}td{overflow-wrap:anywhere;max-width:640px}\
table.facts td{max-width:1100px}table.facts code{font-size:12px}.vars{color:#555}\
p.nodata{max-width:1100px;padding:6px 12px;margin:6px 0;border:1px dashed #bbb;color:#666;font-style:italic}\
nav.toc{font-size:13px;margin:8px 0 16px}nav.toc ol{margin:2px 0;padding-left:22px}\
.picker{margin:10px 0;font-size:13px}.wide{overflow-x:auto;max-width:100%}\
table.rows td,table.rows th{white-space:nowrap;overflow-wrap:normal}\
table.rows td.text{white-space:normal;min-width:240px}\
#status{font-family:monospace;padding:4px}#status.error{color:#fff;background:#c00}";

/// Checks every chart once the page has loaded and records the verdict as data
/// attributes of the hidden #status element; an error (a chart missing points, any script
/// error on the page) is shown on the page. Also the step pickers of sweeps and scenario
/// files: each shows one step's charts over time at a time, and a link to a step shows it.
pub(super) const SCRIPT: &str = r#"(function () {
  var st = document.getElementById('status');
  function fail(m) { st.textContent = 'error: ' + m; st.className = 'error'; st.hidden = false; st.setAttribute('data-ok', 'false'); }
  window.addEventListener('error', function (e) { fail(e.message); });
  function show(group, id) {
    var steps = document.querySelectorAll('div.step[data-group="' + group + '"]');
    for (var i = 0; i < steps.length; i++) { steps[i].hidden = steps[i].id !== id; }
    var pick = document.getElementById(group + '-pick');
    if (pick) { pick.value = id; }
  }
  var picks = document.querySelectorAll('select.pick');
  for (var i = 0; i < picks.length; i++) {
    picks[i].addEventListener('change', function (e) { show(e.target.getAttribute('data-group'), e.target.value); });
  }
  function follow() {
    var el = location.hash && document.getElementById(location.hash.slice(1));
    if (el && el.classList.contains('step')) { show(el.getAttribute('data-group'), el.id); el.scrollIntoView(); }
  }
  window.addEventListener('hashchange', follow);
  follow();
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
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title><style>{STYLE}</style></head>\n<body><h1>{t}</h1><div id=\"status\" hidden data-ok=\"false\">script did not run</div>\n{body}\n<p>fleetbench {v}, result format {f}</p><script>{SCRIPT}</script></body></html>\n",
        t = esc(&title),
        v = esc(doc.fleetbench_version()),
        f = doc.format_version()
    )
}

/// The page's sections in order, for the table of contents: (id, title, depth).
#[derive(Default)]
struct Toc(Vec<(String, String, usize)>);

impl Toc {
    /// A section heading (`<h2>` at depth 0, `<h3>` deeper) with its id, noted for the
    /// table of contents.
    fn heading(&mut self, body: &mut String, id: &str, title: &str, depth: usize) {
        let h = if depth == 0 { "h2" } else { "h3" };
        let _ = write!(body, "<{h} id=\"{}\">{}</{h}>", esc(id), esc(title));
        self.0.push((id.to_string(), title.to_string(), depth));
    }

    /// An entry for a part of the page that is not a heading (a step behind a picker).
    fn entry(&mut self, id: &str, title: &str, depth: usize) {
        self.0.push((id.to_string(), title.to_string(), depth));
    }

    /// The table of contents as nested lists (a section one deeper than the one before
    /// it opens a list inside it).
    fn html(&self) -> String {
        let mut s = String::from("<nav class=\"toc\" id=\"toc\"><b>Contents</b><ol>");
        let mut depth = 0;
        for (i, (id, title, d)) in self.0.iter().enumerate() {
            if i > 0 {
                if *d > depth {
                    s.push_str("<ol>");
                    depth += 1;
                } else {
                    s.push_str("</li>");
                    while depth > *d {
                        s.push_str("</ol></li>");
                        depth -= 1;
                    }
                }
            }
            let _ = write!(s, "<li><a href=\"#{}\">{}</a>", esc(id), esc(title));
        }
        if !self.0.is_empty() {
            s.push_str("</li>");
        }
        while depth > 0 {
            s.push_str("</ol></li>");
            depth -= 1;
        }
        s.push_str("</ol></nav>");
        s
    }
}

/// A table that may be wider than a narrow window, scrolled on its own rather than
/// widening the page.
fn wide(table: &str) -> String {
    format!("<div class=\"wide\">{table}</div>")
}

/// A run's title, and its page: what ran, summary, charts, agents and configuration.
fn run_page(doc: &Document, run: &Report) -> (String, String) {
    let title = format!(
        "fleetbench {} run, {}",
        run.test,
        super::pgbench::count_text(run, run.config.threads)
    );
    let mut body = String::new();
    body.push_str("<h2>What ran</h2>");
    body.push_str(&run_header(run));
    body.push_str(&saturation_warnings(run));
    let series = compare::series(doc, "this run");
    body.push_str("<h2>Summary</h2>");
    body.push_str(&wide(&super::pgbench::summary_in_clients(
        run,
        rows_table(&series),
    )));
    body.push_str(&super::pgbench::section(run));
    if let Some(t) = errors_table(run) {
        body.push_str("<h2 id=\"errors\">Ignored errors by code</h2>");
        body.push_str(&wide(&t));
    }
    if let Some(t) = tpcc_table(&[("this run".to_string(), run)]) {
        body.push_str("<h2>TPC-C response times by transaction type</h2>");
        body.push_str(&wide(&t));
    }
    if let Some(t) = constraint_table(run) {
        body.push_str("<h2 id=\"tpcc-constraints\">TPC-C Constraint Check</h2>");
        body.push_str(&wide(&t));
    }
    body.push_str("<h2>Charts</h2>");
    body.push_str(&charts_grid(&run_charts(run, "")));
    body.push_str(&agents_table(run));
    body.push_str("<h2>Configuration</h2>");
    body.push_str(&config_table(run));
    (title, body)
}

/// A sweep's or scenario file's title, and its page: what ran, a table of contents, the
/// summary, the charts across steps, then per group its steps over time (one chart per
/// figure with a line per step, and each step's own charts behind a picker, one step at a
/// time) and its configuration.
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
    let mut toc = Toc::default();
    let mut body = String::new();
    toc.heading(&mut body, "what-ran-h", "What ran", 0);
    let all: Vec<&Report> = runs
        .iter()
        .flat_map(|(_, rs)| rs.iter().map(|r| r.1))
        .collect();
    body.push_str(&steps_header(doc, &all));
    toc.heading(&mut body, "summary", "Summary", 0);
    body.push_str(&wide(&rows_table(&series)));
    let labelled: Vec<(String, &Report)> = runs
        .iter()
        .flat_map(|(n, rs)| {
            rs.iter().map(move |(l, r)| {
                let label = if sweep {
                    l.clone()
                } else {
                    format!("{n}, {l}")
                };
                (label, *r)
            })
        })
        .collect();
    if let Some(t) = tpcc_table(&labelled) {
        toc.heading(
            &mut body,
            "tpcc",
            "TPC-C response times by transaction type",
            0,
        );
        body.push_str(&wide(&t));
    }
    series_charts(&mut body, &mut toc, &series, any_by_rate);
    spectra(&mut body, &mut toc, &runs, sweep, any_by_rate);
    over_time(&mut body, &mut toc, &runs, &groups);
    let body = format!("{}{body}", toc.html());
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
fn series_charts(body: &mut String, toc: &mut Toc, series: &[compare::Series], any_by_rate: bool) {
    if any_by_rate {
        let open: Vec<&compare::Series> = series
            .iter()
            .filter(|s| s.rows.iter().any(|r| r.rate > 0.0))
            .collect();
        toc.heading(body, "by-rate", "Throughput and latency by rate", 0);
        body.push_str(&charts_grid(&rate_charts(&open)));
    }
    let by_threads: Vec<compare::Series> = series
        .iter()
        .filter(|s| !any_by_rate || s.rows.iter().any(|r| r.threads != s.rows[0].threads))
        .cloned()
        .collect();
    if !by_threads.is_empty() {
        toc.heading(body, "by-threads", "By thread count", 0);
        body.push_str(&charts_grid(&sweep_charts(&by_threads)));
    }
}

/// A spectrum per group, a line per step, all in one grid.
fn spectra(body: &mut String, toc: &mut Toc, runs: &StepRuns, sweep: bool, any_by_rate: bool) {
    toc.heading(body, "spectra", "Latency percentile spectrum", 0);
    let charts: Vec<Chart> = runs
        .iter()
        .enumerate()
        .map(|(i, (name, rs))| {
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
            steps_spectrum(&id, &chart_title, rs)
        })
        .collect();
    body.push_str(&charts_grid(&charts));
}

/// Per group: its figures over time with a line per step, each step's own charts behind
/// a picker (one step shown at a time, so that 3 scenarios of 6 steps read as 3 sections,
/// not 170 charts), then the group's configuration.
fn over_time(body: &mut String, toc: &mut Toc, runs: &StepRuns, groups: &Groups) {
    for (i, ((name, rs), (_, _, scenario))) in runs.iter().zip(&groups.groups).enumerate() {
        let group = format!("s{i}");
        toc.heading(
            body,
            &format!("{group}-time"),
            &format!("{name} over time"),
            0,
        );
        body.push_str(&charts_grid(&steps_over_time(
            rs,
            &format!("{group}-steps-"),
        )));
        let _ = write!(
            body,
            "<div class=\"picker\"><label>Each step's charts: <select class=\"pick\" id=\"{group}-pick\" data-group=\"{group}\">"
        );
        for (j, (label, _)) in rs.iter().enumerate() {
            let _ = write!(
                body,
                "<option value=\"{group}-{j}\">{}</option>",
                esc(label)
            );
        }
        body.push_str("</select></label></div>");
        for (j, (label, r)) in rs.iter().enumerate() {
            // A link to a step shows it (the page's script).
            toc.entry(&format!("{group}-{j}"), label, 1);
            let _ = write!(
                body,
                "<div class=\"step\" id=\"{group}-{j}\" data-group=\"{group}\"{}><h3>{}</h3>",
                if j == 0 { "" } else { " hidden" },
                esc(label)
            );
            // What the text said of this step: its saturated hosts, its ignored errors.
            body.push_str(&saturation_warnings(r));
            body.push_str(&errors_line(r));
            if let Some(m) = &r.meta {
                let _ = write!(
                    body,
                    "<p class=\"run\">run {}{}</p>",
                    esc(&m.run_id),
                    m.started_at
                        .as_ref()
                        .map(|s| format!(", started {}", esc(s)))
                        .unwrap_or_default()
                );
            }
            let charts: Vec<Chart> = run_charts(r, &format!("{group}-{j}-"))
                .into_iter()
                .filter(|c| !c.id.ends_with("spectrum"))
                .collect();
            body.push_str(&charts_grid(&charts));
            body.push_str("</div>");
        }
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some(sc) = scenario {
            if let Some(d) = &sc.description {
                extra.push(("description", d.clone()));
            }
            extra.push(("test", sc.test.clone()));
            extra.push(("targets", sc.targets.join(", ")));
        }
        extra.push(("warmup_time_s", groups.warmup_s.to_string()));
        extra.push(("cooldown_s", groups.cooldown_s.to_string()));
        toc.heading(
            body,
            &format!("{group}-config"),
            &format!("Configuration of {name}"),
            1,
        );
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
    use crate::sweep::tests::{agents_of, run_doc, scenarios_of, step, sweep_of};

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
        assert!(
            page.contains(
                r#"<p class="nodata" data-left-out="spectrum">Left out, nothing to show: Latency percentile spectrum per thread count: no data.</p>"#
            ),
            "{page}"
        );
        // A table of contents, each entry a link to its section.
        let toc = &page[page.find("<nav class=\"toc\"").unwrap()..page.find("</nav>").unwrap()];
        for (id, title) in [
            ("what-ran-h", "What ran"),
            ("summary", "Summary"),
            ("by-threads", "By thread count"),
            ("spectra", "Latency percentile spectrum"),
            ("s0-time", "oltp_read_write over time"),
            ("s0-config", "Configuration of oltp_read_write"),
        ] {
            assert!(
                toc.contains(&format!("<li><a href=\"#{id}\">{title}</a>")),
                "{id} in {toc}"
            );
            assert!(page.contains(&format!(" id=\"{id}\">{title}</h")), "{id}");
        }
        assert!(
            toc.ends_with(
                "<li><a href=\"#s0-time\">oltp_read_write over time</a><ol><li><a href=\"#s0-0\">8 threads</a></li><li><a href=\"#s0-1\">16 threads</a></li><li><a href=\"#s0-config\">Configuration of oltp_read_write</a></li></ol></li></ol>"
            ),
            "{toc}"
        );
        // Each step's charts behind a picker: the first shown, the others hidden.
        assert!(
            page.contains(r#"<option value="s0-1">16 threads</option>"#),
            "{page}"
        );
        assert!(page.contains(r#"<div class="step" id="s0-0" data-group="s0"><h3>"#));
        assert!(page.contains(r#"<div class="step" id="s0-1" data-group="s0" hidden><h3>"#));
    }

    /// Each step of a sweep says what its text said: its saturated client host and its
    /// ignored errors by code, in its own section.
    #[test]
    fn a_steps_warnings_and_errors_are_under_it() {
        use crate::report::doc::{Agent, HostLoad, Sql};
        let mut hot = run_doc(16, 180.0, 3600.0, 4.0);
        // A database test: the client's saturation is worth a warning.
        hot.test = "oltp_read_write".into();
        hot.agents = vec![Agent {
            addr: "10.0.0.1:7600".into(),
            name: "10.0.0.1:7600".into(),
            host: "c1".into(),
            host_load: Some(HostLoad {
                cpu_busy_pct_peak: 96.0,
                run_queue_peak: 5,
                cores: 2,
                saturated_intervals: vec![2],
                ..Default::default()
            }),
            ..Default::default()
        }];
        hot.totals.figures.sql = Some(Sql {
            ignored_errors: 3,
            errors_by_code: [("1213".to_string(), 3)].into(),
            ..Default::default()
        });
        let steps = vec![step(run_doc(8, 100.0, 2000.0, 4.0), 1), step(hot, 1)];
        let page = render(&sweep_of("oltp_read_write", steps, None));
        let second = &page[page.find("<div class=\"step\" id=\"s0-1\"").unwrap()..];
        let second = &second[..second.find("</div>").unwrap()];
        assert!(
            second.contains("<p class=\"warning\">WARNING: agent 10.0.0.1:7600: its host c1 was saturated (CPU busy 96 % at peak, run queue 5 on 2 cores) in 1 of "),
            "{second}"
        );
        assert!(
            second.contains("<p class=\"errors\">Ignored errors by code: 1213 (deadlock) x 3</p>"),
            "{second}"
        );
        let first = &page[page.find("<div class=\"step\" id=\"s0-0\"").unwrap()..];
        let first = &first[..first.find("</div>").unwrap()];
        assert!(!first.contains("WARNING"), "{first}");
    }

    /// Charts a reader sees on `page`: all but those of the steps the pickers hide.
    fn charts_shown(page: &str) -> usize {
        let all = page.matches("<svg class=\"chart\"").count();
        let hidden: usize = page
            .split("<div class=\"step\"")
            .skip(1)
            .filter(|d| d[..d.find('>').unwrap()].ends_with(" hidden"))
            .map(|d| {
                let end = d.find("<div class=\"step\"").unwrap_or(d.len());
                let end = d[..end].find("<h3 id=").unwrap_or(end);
                d[..end].matches("<svg class=\"chart\"").count()
            })
            .sum();
        all - hidden
    }

    #[test]
    fn three_scenarios_of_six_steps_read_as_a_page_not_a_pile_of_charts() {
        use crate::report::doc::{Interval, ScenarioDoc};
        let threads = [1u32, 2, 4, 8, 16, 32];
        let scenario = |name: &str, k: f64| {
            let steps = threads
                .iter()
                .map(|&t| {
                    let mut r = run_doc(t, k * f64::from(t), k * f64::from(t) * 20.0, 3.0);
                    r.agents = agents_of(&[("10.0.0.1:7600", "c1"), ("10.0.0.2:7600", "c2")]);
                    r.intervals = (1..=5)
                        .map(|s| Interval {
                            t_s: f64::from(s),
                            duration_s: 1.0,
                            events: 10,
                            events_per_sec: k * f64::from(t),
                            agent_events: vec![Some(5), Some(5)],
                            agent_cpu_busy_pct: vec![Some(30.0), Some(40.0)],
                            ..Default::default()
                        })
                        .collect();
                    step(r, 1)
                })
                .collect();
            ScenarioDoc {
                name: name.into(),
                description: None,
                test: "oltp_read_write".into(),
                targets: vec!["db".into()],
                threads: threads.to_vec(),
                steps,
                rates: None,
            }
        };
        let doc = scenarios_of(vec![
            scenario("direct", 100.0),
            scenario("proxy", 80.0),
            scenario("sharded", 150.0),
        ]);
        let page = render(&doc);
        // Every step's charts are there, behind the pickers...
        assert!(page.matches("<svg class=\"chart\"").count() > 50);
        for i in 0..3 {
            for j in 0..6 {
                assert!(page.contains(&format!("<option value=\"s{i}-{j}\">")));
            }
            // ...and one chart per figure shows every step of a scenario at once.
            assert!(page.contains(&format!(
                "id=\"s{i}-steps-throughput-time\" data-points=\"30\""
            )));
        }
        // What a reader sees: the charts across scenarios, a spectrum and the steps' charts
        // per scenario, and one step's own charts per scenario.
        let shown = charts_shown(&page);
        assert!(shown <= 40, "{shown} charts shown");
        assert!(page.contains("<nav class=\"toc\""));
    }
}
