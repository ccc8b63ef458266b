//! `runs trend`: one figure of one setup over time, as a table with a terminal sparkline,
//! or as a self-contained HTML page with a chart (inline SVG, no script), the change points
//! marked in both. Pure, beside its tests.

use fleetbench_catalog::Record;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The sparkline of `values`: one bar per value, scaled from the smallest to the largest.
pub fn sparkline(values: &[f64]) -> String {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    values
        .iter()
        .map(|v| {
            if hi > lo {
                let i = ((v - lo) / (hi - lo) * 7.0).round() as usize;
                BARS[i.min(7)]
            } else {
                BARS[3]
            }
        })
        .collect()
}

/// The table: a heading naming the figure and the setup, the sparkline, then one row per
/// run (oldest first), a change point marked `<- change`.
pub fn table(metric: &str, key: &str, points: &[(&Record, f64)], changes: &[usize]) -> String {
    let values: Vec<f64> = points.iter().map(|(_, v)| *v).collect();
    let mut s = format!(
        "{metric} over {} runs of: {key}\n{}\n\n{:<14}  {:<20}  {:>12}\n",
        points.len(),
        sparkline(&values),
        "id",
        "started (UTC)",
        metric
    );
    for (i, (r, v)) in points.iter().enumerate() {
        let started = crate::report::meta::rfc3339((r.started_ms.max(0) / 1000) as u64);
        let mark = if changes.contains(&i) {
            "  <- change"
        } else {
            ""
        };
        s.push_str(&format!(
            "{:<14}  {:<20}  {:>12.3}{mark}\n",
            r.id, started, v
        ));
    }
    s
}

/// The page: the chart of the values in run order, the change points as red dots, and the
/// same table.
pub fn html(metric: &str, key: &str, points: &[(&Record, f64)], changes: &[usize]) -> String {
    let (w, h, pad) = (800.0, 300.0, 40.0);
    let values: Vec<f64> = points.iter().map(|(_, v)| *v).collect();
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let n = values.len().max(2) - 1;
    let xy = |i: usize, v: f64| {
        (
            pad + (w - 2.0 * pad) * i as f64 / n as f64,
            h - pad - (h - 2.0 * pad) * (v - lo) / span,
        )
    };
    let line: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (x, y) = xy(i, *v);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let mut dots = String::new();
    for (i, v) in values.iter().enumerate() {
        let (x, y) = xy(i, *v);
        let (r, color) = if changes.contains(&i) {
            (6, "#c0392b")
        } else {
            (3, "#2c6fbb")
        };
        dots.push_str(&format!(
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{color}\"><title>{} {v:.3}</title></circle>",
            esc(&points[i].0.id)
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fleetbench trend: {m}</title>\
<style>body{{font-family:sans-serif;margin:2em}}pre{{font-size:13px}}</style></head><body>\
<h1>{m} over {count} runs</h1><p>{k}</p>\
<svg id=\"trend\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{m} by run\">\
<text x=\"{pad}\" y=\"20\" font-size=\"12\">{hi:.3}</text><text x=\"{pad}\" y=\"{bottom}\" font-size=\"12\">{lo:.3}</text>\
<polyline fill=\"none\" stroke=\"#2c6fbb\" stroke-width=\"2\" points=\"{pts}\"/>{dots}</svg>\
<p>Red dots: change points (a run outside the noise band of the runs before it).</p>\
<pre>{table}</pre></body></html>\n",
        m = esc(metric),
        count = values.len(),
        k = esc(key),
        bottom = h - 5.0,
        pts = line.join(" "),
        table = esc(&table(metric, key, points, changes)),
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sparkline_spans_the_smallest_to_the_largest() {
        assert_eq!(sparkline(&[1.0, 2.0, 8.0]), "▁▂█");
        assert_eq!(sparkline(&[5.0, 5.0]), "▄▄");
        assert_eq!(sparkline(&[]), "");
    }

    #[test]
    fn the_table_and_the_page_mark_the_change_points() {
        let runs: Vec<Record> = (0..3)
            .map(|i| Record {
                id: format!("6500000{i}000000"),
                started_ms: 1000 * i,
                ..Default::default()
            })
            .collect();
        let points: Vec<(&Record, f64)> = runs.iter().zip([10.0, 10.0, 5.0]).collect();
        let t = table("tps", "cpu threads=1", &points, &[2]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "tps over 3 runs of: cpu threads=1");
        assert_eq!(lines[1], "██▁");
        assert!(lines[4].contains("10.000") && !lines[4].contains("change"));
        assert!(lines[6].ends_with("5.000  <- change"), "{t}");
        let page = html("tps", "a<b", &points, &[2]);
        assert_eq!(page.matches("<circle").count(), 3);
        assert_eq!(page.matches("#c0392b").count(), 1);
        assert!(page.contains("a&lt;b") && !page.contains("a<b"));
    }
}
