//! A comparison as files: `compare --csv` (one row per series, block and metric under one
//! header of fixed columns) and `compare --json` (the layout docs/output.md describes,
//! `"format": 1`). Both are drawn from the same [`Comparison`] as the text and the HTML
//! page. Pure, beside its tests; commands/docs.rs writes the files.

use serde::Serialize;

use super::compare::{Change, Rule, SettingsDiff};
use super::compare_table::{Block, Comparison, Row};
use super::stats::{Better, Estimate};

/// The version of the comparison's JSON layout, its `format` field.
pub const FORMAT: u32 = 1;

/// The CSV's columns, in order (its header line).
pub const CSV_COLUMNS: [&str; 16] = [
    "series",
    "test",
    "threads",
    "offered_rate",
    "block",
    "metric",
    "key",
    "better",
    "baseline",
    "baseline_ci_half_width",
    "value",
    "value_ci_half_width",
    "change_pct",
    "change_ci_low_pct",
    "change_ci_high_pct",
    "verdict",
];

/// One compared figure of one series in one block: a row of the CSV, an item of a block's
/// `figures` in the JSON. `None` is an empty cell (CSV) or `null` (JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub series: String,
    pub test: String,
    /// The series' own thread count and offered rate in this block (None: it has no
    /// measurement there).
    pub threads: Option<u32>,
    pub offered_rate: Option<f64>,
    /// Where the block stands: "16 threads", "offered rate 2000/s", "threads 16 / 32".
    pub block: String,
    pub metric: String,
    pub key: String,
    /// "higher" or "lower": which way the figure improves.
    pub better: &'static str,
    pub baseline: Option<f64>,
    pub baseline_ci_half_width: Option<f64>,
    pub value: Option<f64>,
    pub value_ci_half_width: Option<f64>,
    pub change_pct: Option<f64>,
    pub change_ci_low_pct: Option<f64>,
    pub change_ci_high_pct: Option<f64>,
    /// "better", "worse", "within noise", "no spread"; "baseline" for the baseline's own
    /// figures; "n/a" where no change can be computed.
    pub verdict: &'static str,
}

/// A figure rounded to 4 decimals, as files give it (None stays None, as do NaN and
/// infinities, which JSON cannot hold).
fn round(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).map(|x| (x * 1e4).round() / 1e4)
}

/// The figures of one metric row of a block, one per series.
fn row_figures(c: &Comparison, b: &Block, r: &Row) -> Vec<Figure> {
    let base: Option<&Estimate> = r.values.first().and_then(Option::as_ref);
    b.entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let value = r.values[i].as_ref();
            let change: Option<&Change> = r.changes[i].as_ref();
            let verdict = match (i, value, change) {
                (0, Some(_), _) => "baseline",
                (_, _, Some(ch)) => ch.verdict.text(),
                _ => "n/a",
            };
            Figure {
                series: e.label.clone(),
                test: c.tests.get(i).cloned().unwrap_or_default(),
                threads: e.at.map(|a| a.0),
                offered_rate: e.at.map(|a| a.1),
                block: b.place.clone(),
                metric: r.metric.clone(),
                key: r.key.clone(),
                better: match r.better {
                    Better::Higher => "higher",
                    Better::Lower => "lower",
                },
                baseline: round(base.map(|x| x.mean)),
                baseline_ci_half_width: round(base.and_then(Estimate::half_width)),
                value: round(value.map(|x| x.mean)),
                value_ci_half_width: round(value.and_then(Estimate::half_width)),
                change_pct: round(change.map(|ch| ch.pct)),
                change_ci_low_pct: round(change.and_then(Change::interval).map(|x| x.0)),
                change_ci_high_pct: round(change.and_then(Change::interval).map(|x| x.1)),
                verdict,
            }
        })
        .collect()
}

/// Every figure of a block: metric by metric, series by series.
fn block_figures(c: &Comparison, b: &Block) -> Vec<Figure> {
    b.rows.iter().flat_map(|r| row_figures(c, b, r)).collect()
}

/// Every figure of the comparison, block by block.
pub fn figures(c: &Comparison) -> Vec<Figure> {
    c.blocks.iter().flat_map(|b| block_figures(c, b)).collect()
}

/// A number as a CSV cell: whole numbers without decimals, others with up to 4.
fn cell_number(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) => {
            let s = format!("{x:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// RFC 4180 quoting when a field needs it.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The whole CSV file: the header, then a row per figure.
pub fn csv(c: &Comparison) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for f in figures(c) {
        let cells = [
            quote(&f.series),
            quote(&f.test),
            f.threads.map(|t| t.to_string()).unwrap_or_default(),
            cell_number(f.offered_rate),
            quote(&f.block),
            quote(&f.metric),
            quote(&f.key),
            f.better.to_string(),
            cell_number(f.baseline),
            cell_number(f.baseline_ci_half_width),
            cell_number(f.value),
            cell_number(f.value_ci_half_width),
            cell_number(f.change_pct),
            cell_number(f.change_ci_low_pct),
            cell_number(f.change_ci_high_pct),
            f.verdict.to_string(),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The outcome of one `--fail-if` rule: the changes that broke it (none: it passed).
pub struct RuleOutcome<'a> {
    pub rule: &'a Rule,
    pub broken: Vec<&'a Change>,
}

#[derive(Serialize)]
struct SeriesJson<'a> {
    label: &'a str,
    test: &'a str,
}

#[derive(Serialize)]
struct SettingJson<'a> {
    setting: &'a str,
    values: &'a [Option<String>],
}

#[derive(Serialize)]
struct BlockJson<'a> {
    title: &'a str,
    block: &'a str,
    threads: u32,
    offered_rate: f64,
    intervals_from: Vec<String>,
    figures: Vec<Figure>,
}

#[derive(Serialize)]
struct BrokenJson<'a> {
    series: &'a str,
    metric: &'a str,
    threads: u32,
    offered_rate: f64,
    change_pct: Option<f64>,
    change_ci_half_width: Option<f64>,
    verdict: &'static str,
}

#[derive(Serialize)]
struct RuleJson<'a> {
    rule: &'a str,
    passed: bool,
    broken_by: Vec<BrokenJson<'a>>,
}

#[derive(Serialize)]
struct ComparisonJson<'a> {
    format: u32,
    kind: &'static str,
    fleetbench_version: &'static str,
    baseline: &'a str,
    series: Vec<SeriesJson<'a>>,
    settings_that_differ: Vec<SettingJson<'a>>,
    one_sided_server_settings: usize,
    blocks: Vec<BlockJson<'a>>,
    fail_if: Vec<RuleJson<'a>>,
}

/// The comparison as its JSON document (docs/output.md: "compare --json"), pretty, its
/// fields in the documented order, ending in a newline.
pub fn json(c: &Comparison, settings: &SettingsDiff, rules: &[RuleOutcome]) -> String {
    let mut text = serde_json::to_string_pretty(&document(c, settings, rules))
        .unwrap_or_else(|_| "null".into());
    text.push('\n');
    text
}

/// The JSON document of a comparison.
fn document<'a>(
    c: &'a Comparison,
    settings: &'a SettingsDiff,
    rules: &'a [RuleOutcome],
) -> ComparisonJson<'a> {
    ComparisonJson {
        format: FORMAT,
        kind: "comparison",
        fleetbench_version: env!("CARGO_PKG_VERSION"),
        baseline: c.labels.first().map_or("", String::as_str),
        series: c
            .labels
            .iter()
            .zip(&c.tests)
            .map(|(label, test)| SeriesJson { label, test })
            .collect(),
        settings_that_differ: settings
            .rows
            .iter()
            .map(|(setting, values)| SettingJson { setting, values })
            .collect(),
        one_sided_server_settings: settings.one_sided,
        blocks: c
            .blocks
            .iter()
            .map(|b| BlockJson {
                title: &b.title,
                block: &b.place,
                threads: b.threads,
                offered_rate: b.rate,
                intervals_from: b.entries.iter().map(|e| e.spread.describe()).collect(),
                figures: block_figures(c, b),
            })
            .collect(),
        fail_if: rules
            .iter()
            .map(|o| RuleJson {
                rule: &o.rule.text,
                passed: o.broken.is_empty(),
                broken_by: o
                    .broken
                    .iter()
                    .map(|ch| BrokenJson {
                        series: &ch.entry,
                        metric: &ch.metric,
                        threads: ch.threads,
                        offered_rate: ch.rate,
                        change_pct: round(Some(ch.pct)),
                        change_ci_half_width: round(ch.pct_half_width),
                        verdict: ch.verdict.text(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::{parse_rule, series, settings_diff};
    use crate::report::doc::{Document, Figures, Interval, Sql};
    use crate::sweep::tests::{latency, run_doc};

    /// An OLTP run of `threads` threads with a TPS series (1 s intervals) around its mean.
    fn oltp(threads: u32, tps: &[f64]) -> Document {
        let mean = tps.iter().sum::<f64>() / tps.len() as f64;
        let mut doc = run_doc(threads, mean, mean * 20.0, 4.0);
        doc.test = "oltp_read_only".into();
        doc.config.interval_s = 1.0;
        doc.intervals = tps
            .iter()
            .map(|&t| Interval {
                duration_s: 1.0,
                events: t as u64,
                events_per_sec: t,
                latency_ms: latency(1, 4.0, 4.0, 4.0, &[("p95", 4.0)]),
                figures: Figures {
                    sql: Some(Sql {
                        tps: t,
                        qps: t * 20.0,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect();
        Document::Run(Box::new(doc))
    }

    fn comparison() -> (Comparison, SettingsDiff) {
        let flat: Vec<f64> = (0..20).map(|i| 100.0 + f64::from((i * 7) % 5)).collect();
        let up: Vec<f64> = flat.iter().map(|v| v * 1.5).collect();
        let mut all = series(&oltp(2, &flat), "a.json");
        all.extend(series(&oltp(4, &up), "b, \"new\".json"));
        (Comparison::of(&all), settings_diff(&all))
    }

    #[test]
    fn the_csv_has_a_row_per_series_and_metric_under_fixed_columns() {
        let (c, _) = comparison();
        let text = csv(&c);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(CSV_COLUMNS.join(",").as_str()));
        let rows: Vec<&str> = lines.collect();
        let metrics = c.blocks[0].rows.len();
        assert_eq!(rows.len(), 2 * metrics, "{text}");
        // The baseline's own row: no change, verdict "baseline".
        let hw = cell_number(c.blocks[0].rows[0].values[0].unwrap().half_width());
        assert!(!hw.is_empty() && hw != "0", "{text}");
        assert_eq!(
            rows[0],
            format!(
                "a.json,oltp_read_only,2,0,threads 2 / 4,tps,tps,higher,102,{hw},102,{hw},,,,baseline"
            )
        );
        // The other series: quoted, its own thread count, +50% with an interval.
        let tps = rows[1];
        assert!(
            tps.starts_with(
                "\"b, \"\"new\"\".json\",oltp_read_only,4,0,threads 2 / 4,tps,tps,higher,102,"
            ),
            "{tps}"
        );
        assert!(tps.ends_with(",better"), "{tps}");
        let cells: Vec<&str> = tps.rsplit(',').collect();
        // change_pct, low, high are the 4th, 3rd and 2nd cells from the end.
        let (pct, low, high): (f64, f64, f64) = (
            cells[3].parse().unwrap(),
            cells[2].parse().unwrap(),
            cells[1].parse().unwrap(),
        );
        assert_eq!(pct, 50.0, "{tps}");
        assert!(low < pct && pct < high && low > 0.0, "{tps}");
        // Every row has every column.
        for r in &rows {
            let unquoted = r.replace("\"b, \"\"new\"\".json\"", "b");
            assert_eq!(unquoted.split(',').count(), CSV_COLUMNS.len(), "{r}");
        }
    }

    #[test]
    fn the_json_holds_every_figure_with_its_interval_and_the_rules() {
        let (c, settings) = comparison();
        let rule = parse_rule("tps<-5%").unwrap();
        let changes = c.changes();
        let broken = crate::report::compare::breaches(&rule, &changes);
        let text = json(
            &c,
            &settings,
            &[RuleOutcome {
                rule: &rule,
                broken,
            }],
        );
        assert!(
            text.starts_with("{\n  \"format\": 1,\n  \"kind\": \"comparison\","),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["format"], 1);
        assert_eq!(v["kind"], "comparison");
        assert_eq!(v["baseline"], "a.json");
        assert_eq!(v["series"][1]["label"], "b, \"new\".json");
        assert_eq!(v["series"][1]["test"], "oltp_read_only");
        assert_eq!(v["settings_that_differ"][0]["setting"], "threads", "{v}");
        assert_eq!(
            v["settings_that_differ"][0]["values"],
            serde_json::json!(["2", "4"])
        );
        assert_eq!(v["one_sided_server_settings"], 0);
        let b = &v["blocks"][0];
        assert_eq!(b["title"], "Compared with a.json (threads: 2 / 4)");
        assert_eq!(b["intervals_from"][0], "the interval series (10 batches)");
        let figs = b["figures"].as_array().unwrap();
        assert_eq!(figs.len(), 2 * c.blocks[0].rows.len());
        let tps = &figs[1];
        assert_eq!(tps["key"], "tps");
        assert_eq!(tps["value"], 153.0);
        assert_eq!(tps["baseline"], 102.0);
        assert_eq!(tps["change_pct"], 50.0);
        assert_eq!(tps["verdict"], "better");
        assert!(tps["change_ci_low_pct"].as_f64().unwrap() < 50.0);
        assert_eq!(figs[0]["verdict"], "baseline");
        assert!(figs[0]["change_pct"].is_null());
        assert_eq!(v["fail_if"][0]["rule"], "tps<-5%");
        assert_eq!(v["fail_if"][0]["passed"], true);
    }

    #[test]
    fn numbers_in_cells_are_short() {
        assert_eq!(cell_number(Some(12.0)), "12");
        assert_eq!(cell_number(Some(0.123456)), "0.1235");
        assert_eq!(cell_number(Some(-2.5)), "-2.5");
        assert_eq!(cell_number(None), "");
        assert_eq!(round(Some(f64::NAN)), None);
        assert_eq!(round(Some(20.000000000000004)), Some(20.0));
    }
}
