//! The comparison `compare` shows, as data: blocks (one per thread count, per offered rate,
//! or one for single steps), a row per metric, a column per entry with its estimate, and
//! each entry's change against the first (the baseline) with its 95 % interval and verdict.
//! The text table, the HTML page, the CSV and the JSON of a comparison are all drawn from
//! it, so they cannot disagree. Pure, beside its tests (compare.rs tests the text).

use std::fmt::Write;

use super::compare_series::Series;
use super::stats::{self, Better, Estimate, Spread, Verdict};
use crate::report::format::rate_label;
use crate::sweep::{Summary, is_rate_sweep, percentile_keys};

/// A compared figure: its name, key (for `--fail-if`), which way is better, and how to read
/// it and its interval series from a summary.
struct Metric {
    name: String,
    key: String,
    better: Better,
    get: Box<Figure>,
    series: Box<FigureSeries>,
}

impl Metric {
    /// A figure where more is better, with its interval series.
    fn higher(
        name: &str,
        key: &str,
        get: fn(&Summary) -> Option<f64>,
        series: fn(&Summary) -> &Vec<f64>,
    ) -> Metric {
        Metric {
            name: name.into(),
            key: key.into(),
            better: Better::Higher,
            get: Box::new(get),
            series: Box::new(move |s| Some(series(s).clone())),
        }
    }
}

/// Reads a figure from a summary (None when the summary lacks it).
type Figure = dyn Fn(&Summary) -> Option<f64>;
/// Reads a figure's interval series from a summary.
type FigureSeries = dyn Fn(&Summary) -> Option<Vec<f64>>;

/// The metrics compared for rows like `rows`.
fn metrics(rows: &[&Summary]) -> Vec<Metric> {
    let mut m: Vec<Metric> = Vec::new();
    let db = rows.iter().any(|r| r.qps.is_some());
    let plain = rows.iter().any(|r| r.qps.is_none());
    m.push(Metric {
        name: match (db, plain) {
            (true, false) => "tps",
            (false, _) => "events/s",
            (true, true) => "tps or events/s",
        }
        .into(),
        key: "tps".into(),
        better: Better::Higher,
        get: Box::new(|s| Some(s.tps)),
        series: Box::new(|s| Some(s.series.tps.clone())),
    });
    if rows.iter().any(|r| r.tpmc.is_some()) {
        m.push(Metric::higher(
            "TpmC",
            "tpmc",
            |s| s.tpmc,
            |s| &s.series.tpmc,
        ));
    }
    if db {
        m.push(Metric::higher("qps", "qps", |s| s.qps, |s| &s.series.qps));
    }
    let mut lat = vec!["min".to_string(), "avg".to_string()];
    lat.extend(percentile_keys(rows.iter().copied()));
    lat.push("max".into());
    for k in lat {
        let (key, key2) = (k.clone(), k.clone());
        m.push(Metric {
            name: format!("lat {k} (ms)"),
            key: k,
            better: Better::Lower,
            get: Box::new(move |s| s.latency_ms.get(&key).copied()),
            series: Box::new(move |s| s.series.latency_ms.get(&key2).cloned()),
        });
    }
    for name in crate::servers::COMPARED
        .into_iter()
        .chain(crate::servers::HOSTS_COMPARED)
    {
        if rows.iter().any(|r| r.server.contains_key(name)) {
            m.push(Metric {
                name: name.into(),
                key: name.trim_start_matches("server ").into(),
                better: Better::Lower,
                get: Box::new(move |s| s.server.get(name).copied()),
                series: Box::new(move |s| s.series.server.get(name).cloned()),
            });
        }
    }
    if db {
        m.push(Metric {
            name: "err/s".into(),
            key: "err/s".into(),
            better: Better::Lower,
            get: Box::new(|s| s.qps.map(|_| s.errors_per_sec)),
            series: Box::new(|s| Some(s.series.errors_per_sec.clone())),
        });
    }
    m
}

/// One entry's estimate of a metric: from its repeats when it has several measurements,
/// else from its single run's interval series. None when the figure is missing.
fn estimate(rows: &[&Summary], m: &Metric) -> Option<(Estimate, Spread)> {
    match rows {
        [] => None,
        [one] => {
            let v = (m.get)(one)?;
            Some(stats::from_intervals(
                v,
                &(m.series)(one).unwrap_or_default(),
            ))
        }
        many => {
            let v: Vec<f64> = many.iter().filter_map(|r| (m.get)(r)).collect();
            if v.is_empty() {
                return None;
            }
            let n = v.len();
            Some((stats::from_repeats(&v), Spread::Repeats(n)))
        }
    }
}

/// A figure with its interval: `12.34 ±0.56`, or just the figure without a spread.
fn with_interval(e: &Estimate) -> String {
    match e.half_width() {
        Some(hw) => format!("{:.2} ±{:.2}", e.mean, hw),
        None => format!("{:.2}", e.mean),
    }
}

/// A compared figure of one entry against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: String,
    pub key: String,
    pub entry: String,
    pub threads: u32,
    /// The offered rate of the block (events/s) when rate sweeps are lined up by rate, else 0.
    pub rate: f64,
    /// Change in percent of the baseline, with the half-width of its interval.
    pub pct: f64,
    pub pct_half_width: Option<f64>,
    pub verdict: Verdict,
}

impl Change {
    /// The change as the table shows it: `+12.3% ±4.5%`, or `+12.3%` without a spread.
    pub fn pct_text(&self) -> String {
        match self.pct_half_width {
            Some(h) => format!("{:+.1}% ±{h:.1}%", self.pct),
            None => format!("{:+.1}%", self.pct),
        }
    }

    /// The change's 95 % interval in percent, (low, high), when it has a spread.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.pct_half_width.map(|h| (self.pct - h, self.pct + h))
    }

    /// Where the change was seen: "16 threads", "offered rate 2000/s".
    pub fn place(&self) -> String {
        if self.rate > 0.0 {
            format!("offered rate {}/s", rate_label(self.rate))
        } else {
            format!("{} threads", self.threads)
        }
    }
}

/// What `compare` lines steps up by.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    Threads(u32),
    /// Offered rate (events/s), for rate sweeps: their thread count is one setting.
    Rate(f64),
}

impl Key {
    fn of(r: &Summary, by_rate: bool) -> Key {
        if by_rate {
            Key::Rate(r.rate)
        } else {
            Key::Threads(r.threads)
        }
    }

    /// "16 threads", "offered rate 2000/s" (a closed loop's rows in a rate comparison:
    /// "closed loop").
    fn text(self) -> String {
        match self {
            Key::Threads(n) => crate::report::format::count_of(n, "thread", "threads"),
            Key::Rate(r) if r > 0.0 => format!("offered rate {}/s", rate_label(r)),
            Key::Rate(_) => "closed loop".into(),
        }
    }
}

/// One entry of a block: its label, where its intervals come from, and the thread count
/// and offered rate of its measurement there (None when it has none in this block).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub label: String,
    pub spread: Spread,
    pub at: Option<(u32, f64)>,
}

/// One metric of a block: each entry's estimate (None where it lacks the figure) and each
/// entry's change against the baseline (None for the baseline itself, and where no change
/// can be computed: a figure missing on either side, or a baseline of 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub metric: String,
    pub key: String,
    pub better: Better,
    pub values: Vec<Option<Estimate>>,
    pub changes: Vec<Option<Change>>,
}

/// One block of the comparison: its title, where it stands (thread count, or offered rate
/// when rate sweeps line up by rate), its entries and a row per metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub title: String,
    /// What the block's steps share, for a chart's axis: "16 threads", "offered rate
    /// 2000/s"; for the one block of single steps, their thread counts ("threads 16 / 32").
    pub place: String,
    pub threads: u32,
    /// The offered rate (events/s) when lined up by rate, else 0.
    pub rate: f64,
    pub entries: Vec<Entry>,
    pub rows: Vec<Row>,
}

/// The whole comparison: the series' labels (the first the baseline), the test each ran,
/// and its blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub tests: Vec<String>,
    pub blocks: Vec<Block>,
}

/// The change of `new` against `base` for metric `m` of entry `entry` in a block at
/// (`threads`, `rate`); None when the baseline is 0.
fn change_of(
    base: &Estimate,
    new: &Estimate,
    m: &Metric,
    entry: &str,
    (threads, rate): (u32, f64),
) -> Option<Change> {
    if base.mean == 0.0 {
        return None;
    }
    let (d, hw) = stats::difference(base, new);
    Some(Change {
        metric: m.name.clone(),
        key: m.key.clone(),
        entry: entry.to_string(),
        threads,
        rate,
        pct: d / base.mean * 100.0,
        pct_half_width: hw.map(|h| h / base.mean.abs() * 100.0),
        verdict: stats::verdict(d, hw, m.better),
    })
}

/// One block: a row per metric of the rows present, an entry per series.
fn block(title: String, place: String, key: Key, entries: &[(&str, Vec<&Summary>)]) -> Block {
    let present: Vec<&Summary> = entries.iter().flat_map(|e| e.1.iter().copied()).collect();
    let at = match key {
        Key::Threads(n) => (n, 0.0),
        Key::Rate(r) => (present.first().map_or(0, |s| s.threads), r),
    };
    let mut spreads: Vec<Option<Spread>> = vec![None; entries.len()];
    let mut rows = Vec::new();
    for m in &metrics(&present) {
        let ests: Vec<Option<(Estimate, Spread)>> =
            entries.iter().map(|(_, rows)| estimate(rows, m)).collect();
        for (i, e) in ests.iter().enumerate() {
            if let Some((_, sp)) = e
                && spreads[i].is_none()
            {
                spreads[i] = Some(*sp);
            }
        }
        let changes = ests
            .iter()
            .enumerate()
            .map(|(i, e)| match (i, &ests[0], e) {
                (0, _, _) => None,
                (_, Some((base, _)), Some((new, _))) => change_of(base, new, m, entries[i].0, at),
                _ => None,
            })
            .collect();
        rows.push(Row {
            metric: m.name.clone(),
            key: m.key.clone(),
            better: m.better,
            values: ests.into_iter().map(|e| e.map(|(e, _)| e)).collect(),
            changes,
        });
    }
    Block {
        title,
        place,
        threads: at.0,
        rate: at.1,
        entries: entries
            .iter()
            .zip(spreads)
            .map(|((label, rows), sp)| Entry {
                label: label.to_string(),
                spread: sp.unwrap_or(Spread::None),
                at: rows.first().map(|r| (r.threads, r.rate)),
            })
            .collect(),
        rows,
    }
}

impl Block {
    /// The block as text: its title, where the intervals come from, then a row per
    /// metric, a column per entry, change and verdict columns after each entry but the
    /// first.
    pub fn text(&self) -> String {
        let mut cells: Vec<Vec<String>> = Vec::new();
        let mut head = vec!["metric".to_string()];
        for (i, e) in self.entries.iter().enumerate() {
            head.push(e.label.clone());
            if i > 0 {
                head.push("change".into());
                head.push("verdict".into());
            }
        }
        cells.push(head);
        for r in &self.rows {
            let mut row = vec![r.metric.clone()];
            for (i, v) in r.values.iter().enumerate() {
                row.push(v.as_ref().map_or("n/a".into(), with_interval));
                if i == 0 {
                    continue;
                }
                match &r.changes[i] {
                    Some(c) => {
                        row.push(c.pct_text());
                        row.push(c.verdict.text().into());
                    }
                    None => {
                        row.push("n/a".into());
                        row.push("n/a".into());
                    }
                }
            }
            cells.push(row);
        }
        let cols = cells.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                cells
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|x| x.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut s = format!("{}\n", self.title);
        let _ = writeln!(s, "95% intervals from {}", self.sources().join("; "));
        for row in &cells {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c == 0 {
                    let _ = write!(line, "{cell:<w$}", w = widths[0]);
                } else {
                    let _ = write!(line, "  {cell:>w$}", w = widths[c]);
                }
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
        s
    }

    /// Where each entry's intervals come from: "a.json: 4 repeats".
    pub fn sources(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| format!("{}: {}", e.label, e.spread.describe()))
            .collect()
    }
}

impl Comparison {
    /// The comparison of `series` (the first the baseline): one block when every series
    /// is a single step (however often repeated), else one block per thread count, or per
    /// offered rate when a series is a rate sweep (in the order they first appear).
    pub fn of(series: &[Series]) -> Comparison {
        let labels = series.iter().map(|s| s.label.clone()).collect();
        let tests = series.iter().map(|s| s.test.clone()).collect();
        let by_rate = series.iter().any(|s| is_rate_sweep(&s.rows));
        let single = series.iter().all(|s| {
            s.rows.first().is_some_and(|f| {
                s.rows
                    .iter()
                    .all(|r| Key::of(r, by_rate) == Key::of(f, by_rate))
            })
        });
        if single {
            return Comparison {
                labels,
                tests,
                blocks: vec![single_block(series)],
            };
        }
        let mut keys: Vec<Key> = Vec::new();
        for s in series {
            for r in &s.rows {
                let k = Key::of(r, by_rate);
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let blocks = keys
            .iter()
            .map(|k| {
                let entries: Vec<(&str, Vec<&Summary>)> = series
                    .iter()
                    .map(|s| {
                        (
                            s.label.as_str(),
                            s.rows
                                .iter()
                                .filter(|r| Key::of(r, by_rate) == *k)
                                .collect(),
                        )
                    })
                    .collect();
                block(
                    format!("{}, compared with {}", k.text(), series[0].label),
                    k.text(),
                    *k,
                    &entries,
                )
            })
            .collect();
        Comparison {
            labels,
            tests,
            blocks,
        }
    }

    /// The comparison as text: its blocks, a blank line between two.
    pub fn text(&self) -> String {
        let texts: Vec<String> = self.blocks.iter().map(Block::text).collect();
        texts.join("\n")
    }

    /// Every change the comparison shows, block by block.
    pub fn changes(&self) -> Vec<Change> {
        self.blocks
            .iter()
            .flat_map(|b| &b.rows)
            .flat_map(|r| r.changes.iter().flatten().cloned())
            .collect()
    }
}

/// The one block of series that are single steps (each perhaps repeated).
fn single_block(series: &[Series]) -> Block {
    let entries: Vec<(&str, Vec<&Summary>)> = series
        .iter()
        .map(|s| (s.label.as_str(), s.rows.iter().collect()))
        .collect();
    let column = |f: &dyn Fn(&Summary) -> String| {
        series
            .iter()
            .map(|s| f(&s.rows[0]))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let threads = column(&|r| r.threads.to_string());
    let rates = if series.iter().any(|s| s.rows[0].rate > 0.0) {
        format!(
            "; offered rate: {}",
            column(&|r| if r.rate > 0.0 {
                format!("{}/s", rate_label(r.rate))
            } else {
                "closed loop".into()
            })
        )
    } else {
        String::new()
    };
    block(
        format!(
            "Compared with {} (threads: {threads}{rates})",
            series[0].label
        ),
        format!("threads {threads}{rates}"),
        Key::Threads(series[0].rows[0].threads),
        &entries,
    )
}
