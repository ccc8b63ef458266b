//! The page of `compare --html` (and `report A.json B.json --html`): one self-contained
//! file, in the report's style and with its checking script, that shows what was compared,
//! the settings that differ, the comparison's tables as the text prints them, a chart per
//! figure of each series' change against the baseline with its 95 % interval
//! (change_chart), and the `--fail-if` rules' outcomes.

use std::fmt::Write;

use super::change_chart::{ChangeChart, ChangeLine, ChangePoint, svg};
use super::markup::esc;
use super::page::{SCRIPT, STYLE};
use crate::report::compare::SettingsDiff;
use crate::report::compare_files::RuleOutcome;
use crate::report::compare_table::{Block, Comparison};
use crate::report::stats::Verdict;

/// Extra style of the comparison's page: verdict colours, right-aligned figures.
const COMPARE_STYLE: &str = "td.better{color:#1a7f37;font-weight:bold}td.worse{color:#c0392b;font-weight:bold}\
td.num{text-align:right;white-space:nowrap}p.rule.failed{color:#a00;font-weight:bold}";

/// The whole page.
pub fn render(c: &Comparison, settings: &SettingsDiff, rules: &[RuleOutcome]) -> String {
    let base = c.labels.first().map_or("", String::as_str);
    let title = format!(
        "fleetbench comparison: {} against {base}",
        c.labels.get(1..).unwrap_or_default().join(", ")
    );
    let mut body = String::new();
    body.push_str("<h2 id=\"compared\">What was compared</h2>");
    body.push_str(&compared_table(c));
    body.push_str("<h2 id=\"settings\">Settings that differ</h2>");
    body.push_str(&settings_table(settings));
    for (i, b) in c.blocks.iter().enumerate() {
        let _ = write!(body, "<h2 id=\"block-{i}\">{}</h2>", esc(&b.title));
        body.push_str(&block_table(b));
    }
    let _ = write!(
        body,
        "<h2 id=\"changes\">Changes against {}</h2><p>Each point is a series' change in % against {} (the dashed line), the whisker its 95% interval; a filled point stands out from the noise, a hollow one does not.</p>",
        esc(base),
        esc(base)
    );
    body.push_str(&charts(c));
    if !rules.is_empty() {
        body.push_str("<h2 id=\"fail-if\">--fail-if</h2>");
        body.push_str(&rules_html(rules));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title><style>{STYLE}{COMPARE_STYLE}</style></head>\n<body><h1>{t}</h1><div id=\"status\" hidden data-ok=\"false\">script did not run</div>\n{body}\n<p>fleetbench {v}</p><script>{SCRIPT}</script></body></html>\n",
        t = esc(&title),
        v = env!("CARGO_PKG_VERSION"),
    )
}

/// The series compared: label, test, and which is the baseline.
fn compared_table(c: &Comparison) -> String {
    let mut s =
        String::from("<table class=\"compared\"><tr><th>series</th><th>test</th><th></th></tr>");
    for (i, (label, test)) in c.labels.iter().zip(&c.tests).enumerate() {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(label),
            esc(test),
            if i == 0 { "baseline" } else { "" }
        );
    }
    s.push_str("</table>");
    s
}

/// The settings that differ, a column per series, and the count of one-sided server
/// settings left out.
fn settings_table(d: &SettingsDiff) -> String {
    let mut s = String::new();
    if d.rows.is_empty() && d.one_sided == 0 {
        s.push_str("<p>None: the results ran with the same settings.</p>");
    } else if !d.rows.is_empty() {
        s.push_str("<div class=\"wide\"><table class=\"settings\"><tr><th>setting</th>");
        for l in &d.labels {
            let _ = write!(s, "<th>{}</th>", esc(l));
        }
        s.push_str("</tr>");
        for (k, vals) in &d.rows {
            let _ = write!(s, "<tr><td>{}</td>", esc(k));
            for v in vals {
                let _ = write!(s, "<td>{}</td>", esc(v.as_deref().unwrap_or("n/a")));
            }
            s.push_str("</tr>");
        }
        s.push_str("</table></div>");
    }
    if let Some(note) = d.one_sided_note() {
        let _ = write!(s, "<p class=\"one-sided\">{}</p>", esc(&note));
    }
    s
}

/// A chart id of a figure's key: `change-p99-9` for `p99.9`.
fn chart_id(key: &str) -> String {
    let slug: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("change-{slug}")
}

/// One chart per figure (in the order the blocks first show them), its categories the
/// blocks, a line per series but the baseline.
pub fn change_charts(c: &Comparison) -> Vec<ChangeChart> {
    let mut figures: Vec<(String, String)> = Vec::new();
    for r in c.blocks.iter().flat_map(|b| &b.rows) {
        if !figures.iter().any(|(k, _)| *k == r.key) {
            figures.push((r.key.clone(), r.metric.clone()));
        }
    }
    let x_label = match c.blocks.as_slice() {
        [_] => String::new(),
        bs if bs.iter().any(|b| b.rate > 0.0) => "offered rate".to_string(),
        _ => "thread count".to_string(),
    };
    let base = c.labels.first().map_or("", String::as_str);
    figures
        .into_iter()
        .map(|(key, metric)| ChangeChart {
            id: chart_id(&key),
            title: format!("{metric}: change against {base}"),
            x_label: x_label.clone(),
            categories: c.blocks.iter().map(|b| b.place.clone()).collect(),
            lines: (1..c.labels.len())
                .map(|i| ChangeLine {
                    name: c.labels[i].clone(),
                    points: c
                        .blocks
                        .iter()
                        .map(|b| {
                            let ch = b.rows.iter().find(|r| r.key == key)?.changes[i].as_ref()?;
                            Some(ChangePoint {
                                pct: ch.pct,
                                interval: ch.interval(),
                                verdict: ch.verdict,
                            })
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// The charts with a change to show in one grid, then one line naming the figures without
/// any (a baseline of 0, or a figure one side lacks).
fn charts(c: &Comparison) -> String {
    let (shown, out): (Vec<ChangeChart>, Vec<ChangeChart>) = change_charts(c)
        .into_iter()
        .partition(|ch| ch.point_count() > 0);
    let mut s = String::new();
    if !shown.is_empty() {
        s.push_str("<div class=\"charts\">");
        for ch in &shown {
            s.push_str(&svg(ch));
        }
        s.push_str("</div>");
    }
    if !out.is_empty() {
        let ids: Vec<&str> = out.iter().map(|ch| ch.id.as_str()).collect();
        let names: Vec<&str> = out
            .iter()
            .map(|ch| ch.title.split(": change").next().unwrap_or(&ch.title))
            .collect();
        let _ = write!(
            s,
            "<p class=\"nodata\" data-left-out=\"{}\">No change to chart (a baseline of 0, or a figure one side lacks): {}.</p>",
            esc(&ids.join(" ")),
            esc(&names.join("; "))
        );
    }
    s
}

/// A block as the text shows it: a row per figure, each series' value with its
/// interval, and after each series but the baseline its change and verdict.
fn block_table(b: &Block) -> String {
    let mut s = format!(
        "<p>95% intervals from {}</p><div class=\"wide\"><table class=\"rows compare\"><tr><th>metric</th>",
        esc(&b.sources().join("; "))
    );
    for (i, e) in b.entries.iter().enumerate() {
        let _ = write!(s, "<th>{}</th>", esc(&e.label));
        if i > 0 {
            s.push_str("<th>change</th><th>verdict</th>");
        }
    }
    s.push_str("</tr>");
    for r in &b.rows {
        let _ = write!(
            s,
            "<tr data-key=\"{}\"><td>{}</td>",
            esc(&r.key),
            esc(&r.metric)
        );
        for (i, v) in r.values.iter().enumerate() {
            let value = v
                .as_ref()
                .map_or("n/a".to_string(), |e| match e.half_width() {
                    Some(hw) => format!("{:.2} ±{hw:.2}", e.mean),
                    None => format!("{:.2}", e.mean),
                });
            let _ = write!(s, "<td class=\"num\">{}</td>", esc(&value));
            if i == 0 {
                continue;
            }
            match &r.changes[i] {
                Some(ch) => {
                    let class = match ch.verdict {
                        Verdict::Better => "better",
                        Verdict::Worse => "worse",
                        _ => "",
                    };
                    let _ = write!(
                        s,
                        "<td class=\"num\">{}</td><td class=\"{class}\">{}</td>",
                        esc(&ch.pct_text()),
                        ch.verdict.text()
                    );
                }
                None => s.push_str("<td class=\"num\">n/a</td><td>n/a</td>"),
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table></div>");
    s
}

/// Each `--fail-if` rule: passed, or the changes that broke it.
fn rules_html(rules: &[RuleOutcome]) -> String {
    let mut s = String::new();
    for o in rules {
        if o.broken.is_empty() {
            let _ = write!(
                s,
                "<p class=\"rule passed\">fail-if {}: passed</p>",
                esc(&o.rule.text)
            );
        }
        for ch in &o.broken {
            let _ = write!(
                s,
                "<p class=\"rule failed\">fail-if {}: FAILED: {} of {} at {} changed {} ({})</p>",
                esc(&o.rule.text),
                esc(&ch.metric),
                esc(&ch.entry),
                esc(&ch.place()),
                esc(&ch.pct_text()),
                ch.verdict.text()
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::{series, settings_diff};
    use crate::sweep::tests::cpu_sweep;

    #[test]
    fn a_chart_per_figure_with_a_point_per_block_and_series() {
        let a = series(&cpu_sweep([(1, 1, 100.0), (2, 1, 180.0)]), "a.json");
        let b = series(&cpu_sweep([(1, 1, 110.0), (2, 1, 150.0)]), "b.json");
        let all = [a[0].clone(), b[0].clone()];
        let c = Comparison::of(&all);
        let charts = change_charts(&c);
        let tps = charts.iter().find(|ch| ch.id == "change-tps").unwrap();
        assert_eq!(tps.categories, ["1 thread", "2 threads"]);
        assert_eq!(tps.x_label, "thread count");
        assert_eq!(tps.lines.len(), 1);
        let pcts: Vec<f64> = tps.lines[0]
            .points
            .iter()
            .map(|p| p.as_ref().unwrap().pct)
            .collect();
        assert!(
            (pcts[0] - 10.0).abs() < 1e-9 && (pcts[1] + 30.0 / 1.8).abs() < 1e-9,
            "{pcts:?}"
        );
        // Every figure of the table has its chart.
        for r in &c.blocks[0].rows {
            assert!(
                charts.iter().any(|ch| ch.id == chart_id(&r.key)),
                "{}",
                r.key
            );
        }
        let page = render(&c, &settings_diff(&all), &[]);
        assert!(
            page.contains("<svg class=\"chart change\" id=\"change-tps\""),
            "{page}"
        );
        assert!(page.contains("<h2 id=\"block-1\">2 threads, compared with a.json</h2>"));
        assert!(page.starts_with("<!DOCTYPE html>") && page.contains("data-ok=\"false\""));
        assert_eq!(chart_id("p99.9"), "change-p99-9");
        assert_eq!(chart_id("err/s"), "change-err-s");
    }
}
