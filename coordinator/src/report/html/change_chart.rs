//! The chart of one figure's change against the baseline, for `compare --html`: along the
//! x axis the comparison's blocks (thread counts, offered rates, or the one block of
//! single runs), for every series but the baseline a point at its change in % with a
//! whisker over the change's 95 % interval, and the baseline as the dashed zero line. A
//! point is filled when the change stands out from the noise and hollow when it does not.
//! Every point is a `circle.pt` carrying its values (`data-x`, `data-y`, `data-low`,
//! `data-high`, `data-verdict`), so the page's script checks these charts as it checks the
//! report's.

use std::fmt::Write;

use super::axis::ticks;
use super::markup::{esc, num};
use super::svg::{COLORS, text_width};
use crate::report::stats::Verdict;

const WIDTH: f64 = 760.0;
const PLOT_HEIGHT: f64 = 240.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 30.0;
/// From the x axis to the first legend row: category labels, then the axis label.
const BELOW_AXIS: f64 = 56.0;
const LEGEND_ROW: f64 = 18.0;
const FONT: f64 = 11.0;
const TITLE_FONT: f64 = 14.0;

/// One series' change in one block: in %, its 95 % interval (low, high) when it has a
/// spread, and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    pub pct: f64,
    pub interval: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// One series' changes, one per category (None: no change there).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeLine {
    pub name: String,
    pub points: Vec<Option<ChangePoint>>,
}

/// A chart of one figure's changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeChart {
    pub id: String,
    pub title: String,
    /// What the categories are ("thread count", "offered rate"), or empty.
    pub x_label: String,
    pub categories: Vec<String>,
    pub lines: Vec<ChangeLine>,
}

impl ChangeChart {
    /// How many points it draws.
    pub fn point_count(&self) -> usize {
        self.lines
            .iter()
            .flat_map(|l| l.points.iter().flatten())
            .count()
    }

    /// The range of its y axis: every change and interval end, and 0, with a margin.
    fn y_range(&self) -> (f64, f64) {
        let mut lo: f64 = 0.0;
        let mut hi: f64 = 0.0;
        for p in self.lines.iter().flat_map(|l| l.points.iter().flatten()) {
            let (a, b) = p.interval.unwrap_or((p.pct, p.pct));
            for v in [p.pct, a, b].into_iter().filter(|v| v.is_finite()) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        let pad = ((hi - lo) * 0.08).max(1.0);
        (lo - pad, hi + pad)
    }
}

/// `s` cut short with an ellipsis to at most `max` px at `size` px.
fn fit(s: &str, size: f64, max: f64) -> String {
    if text_width(s, size) <= max {
        return s.to_string();
    }
    let mut t = s.to_string();
    while !t.is_empty() && text_width(&format!("{t}…"), size) > max {
        t.pop();
    }
    format!("{t}…")
}

/// The legend's items below the plot (starting at `top`): (x, y, color, name shown, full
/// name) left to right, wrapping into rows; and how many rows it takes.
fn legend(c: &ChangeChart, top: f64) -> (Vec<(f64, f64, String, String)>, usize) {
    let mut out = Vec::new();
    let (mut x, mut row) = (LEFT, 0usize);
    for l in &c.lines {
        let shown = fit(&l.name, FONT, WIDTH - LEFT - 40.0);
        let w = 18.0 + text_width(&shown, FONT) + 18.0;
        if x > LEFT && x + w > WIDTH - 10.0 {
            x = LEFT;
            row += 1;
        }
        out.push((x, top + row as f64 * LEGEND_ROW, shown, l.name.clone()));
        x += w;
    }
    let rows = if c.lines.is_empty() { 0 } else { row + 1 };
    (out, rows)
}

/// A change as its tooltip says it: `+12.3%`, with its interval when it has one.
fn change_text(p: &ChangePoint) -> String {
    match p.interval {
        Some((a, b)) => format!("{:+.1}% (95% interval {a:+.1}% to {b:+.1}%)", p.pct),
        None => format!("{:+.1}% (no spread)", p.pct),
    }
}

/// The chart as one SVG element of class `chart change`.
pub fn svg(c: &ChangeChart) -> String {
    let (y0, y1) = c.y_range();
    let y_ticks: Vec<(f64, String)> = ticks(y0, y1, 5)
        .into_iter()
        .map(|t| {
            (
                t,
                if t > 0.0 {
                    format!("+{}%", num(t))
                } else {
                    format!("{}%", num(t))
                },
            )
        })
        .collect();
    // Room for the widest tick label beside the rotated axis label.
    let widest = y_ticks
        .iter()
        .map(|(_, l)| text_width(l, FONT))
        .fold(0.0, f64::max);
    let left = (30.0 + widest + 8.0).max(LEFT);
    let pw = WIDTH - left - RIGHT;
    let sy = |v: f64| TOP + PLOT_HEIGHT - (v - y0) / (y1 - y0) * PLOT_HEIGHT;
    let n = c.categories.len().max(1) as f64;
    let cw = pw / n;
    let legend_top = TOP + PLOT_HEIGHT + BELOW_AXIS;
    let (items, rows) = legend(c, legend_top);
    let height = legend_top + rows as f64 * LEGEND_ROW;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart change" id="{id}" data-points="{pts}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{t}"><text class="title" x="{left}" y="18">{shown}</text>"#,
        id = esc(&c.id),
        pts = c.point_count(),
        t = esc(&c.title),
        shown = esc(&fit(&c.title, TITLE_FONT * 1.1, WIDTH - left - 10.0)),
    );
    for (t, label) in &y_ticks {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{left}" x2="{x2:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick y" x="{tx:.1}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            x2 = left + pw,
            y = sy(*t),
            tx = left - 6.0,
            ty = sy(*t) + 4.0,
        );
    }
    let zero = sy(0.0);
    let _ = write!(
        s,
        r##"<line class="axis" x1="{left}" x2="{left}" y1="{TOP}" y2="{bottom:.1}"/><line class="axis" x1="{left}" x2="{x2:.1}" y1="{bottom:.1}" y2="{bottom:.1}"/><line class="zero" x1="{left}" x2="{x2:.1}" y1="{zero:.1}" y2="{zero:.1}" stroke="#333" stroke-dasharray="5 3"/><text class="tick baseline" x="{bx:.1}" y="{by:.1}" text-anchor="end">baseline</text>"##,
        bottom = TOP + PLOT_HEIGHT,
        x2 = left + pw,
        bx = left + pw - 2.0,
        by = zero - 4.0,
    );
    for (i, cat) in c.categories.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text class="tick x" x="{x:.1}" y="{y:.1}" text-anchor="middle"><title>{full}</title>{shown}</text>"#,
            x = left + cw * (i as f64 + 0.5),
            y = TOP + PLOT_HEIGHT + 16.0,
            full = esc(cat),
            shown = esc(&fit(cat, FONT, cw - 6.0)),
        );
    }
    if !c.x_label.is_empty() {
        let _ = write!(
            s,
            r#"<text class="label" x="{x:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            x = left + pw / 2.0,
            y = TOP + PLOT_HEIGHT + 36.0,
            l = esc(&c.x_label),
        );
    }
    let _ = write!(
        s,
        r#"<text class="label" transform="translate(16 {ly:.1}) rotate(-90)" text-anchor="middle">change</text>"#,
        ly = TOP + PLOT_HEIGHT / 2.0,
    );
    let m = c.lines.len().max(1) as f64;
    let step = (cw * 0.6 / m).min(28.0);
    for (k, (line, item)) in c.lines.iter().zip(&items).enumerate() {
        let color = COLORS[k % COLORS.len()];
        let dx = (k as f64 - (m - 1.0) / 2.0) * step;
        for (i, p) in line.points.iter().enumerate() {
            let Some(p) = p else { continue };
            point(
                &mut s,
                (left + cw * (i as f64 + 0.5) + dx, color),
                p,
                &sy,
                (&line.name, &c.categories[i]),
            );
        }
        let (lx, ly, shown, full) = item;
        let _ = write!(
            s,
            r#"<g class="legend-item"><title>{full}</title><circle cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{color}"/><text class="legend" x="{tx:.1}" y="{ly:.1}">{shown}</text></g>"#,
            full = esc(full),
            cx = lx + 7.0,
            cy = ly - 4.0,
            tx = lx + 18.0,
            shown = esc(shown),
        );
    }
    s.push_str("</svg>");
    s
}

/// One change at `x` in `color`: its whisker with caps, then its point.
fn point(
    s: &mut String,
    (x, color): (f64, &str),
    p: &ChangePoint,
    sy: &dyn Fn(f64) -> f64,
    (name, category): (&str, &str),
) {
    if let Some((a, b)) = p.interval {
        let _ = write!(
            s,
            r#"<g class="ci" stroke="{color}" stroke-width="1.5"><line x1="{x:.1}" x2="{x:.1}" y1="{ya:.1}" y2="{yb:.1}"/><line x1="{l:.1}" x2="{r:.1}" y1="{ya:.1}" y2="{ya:.1}"/><line x1="{l:.1}" x2="{r:.1}" y1="{yb:.1}" y2="{yb:.1}"/></g>"#,
            ya = sy(a),
            yb = sy(b),
            l = x - 4.0,
            r = x + 4.0,
        );
    }
    let solid = matches!(p.verdict, Verdict::Better | Verdict::Worse);
    let (low, high) = p
        .interval
        .map_or((String::new(), String::new()), |(a, b)| (num(a), num(b)));
    let _ = write!(
        s,
        r#"<circle class="pt" data-series="{n}" data-x="{cat}" data-y="{y}" data-low="{low}" data-high="{high}" data-verdict="{v}" cx="{x:.1}" cy="{cy:.1}" r="4.5" fill="{fill}" stroke="{color}" stroke-width="2"><title>{n} at {cat}: {text}, {v}</title></circle>"#,
        n = esc(name),
        cat = esc(category),
        y = num(p.pct),
        v = p.verdict.text(),
        cy = sy(p.pct),
        fill = if solid { color } else { "#fff" },
        text = change_text(p),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> ChangeChart {
        ChangeChart {
            id: "change-tps".into(),
            title: "tps: change against a.json".into(),
            x_label: "thread count".into(),
            categories: vec!["16 threads".into(), "32 threads".into()],
            lines: vec![
                ChangeLine {
                    name: "b.json".into(),
                    points: vec![
                        Some(ChangePoint {
                            pct: 12.5,
                            interval: Some((4.0, 21.0)),
                            verdict: Verdict::Better,
                        }),
                        None,
                    ],
                },
                ChangeLine {
                    name: "c <new>.json".into(),
                    points: vec![
                        Some(ChangePoint {
                            pct: -3.0,
                            interval: Some((-9.0, 3.0)),
                            verdict: Verdict::Noise,
                        }),
                        Some(ChangePoint {
                            pct: -20.0,
                            interval: None,
                            verdict: Verdict::Unknown,
                        }),
                    ],
                },
            ],
        }
    }

    #[test]
    fn every_change_is_a_point_with_its_interval() {
        let c = chart();
        let s = svg(&c);
        assert_eq!(c.point_count(), 3);
        assert!(s.contains(r#"data-points="3""#), "{s}");
        assert_eq!(s.matches("<circle class=\"pt\"").count(), 3);
        assert!(
            s.contains(r#"data-series="b.json" data-x="16 threads" data-y="12.5" data-low="4" data-high="21" data-verdict="better""#),
            "{s}"
        );
        // A change without a spread has no whisker and empty interval attributes.
        assert!(s.contains(r#"data-y="-20" data-low="" data-high="" data-verdict="no spread""#));
        assert_eq!(s.matches("<g class=\"ci\"").count(), 2);
        assert!(s.contains("c &lt;new&gt;.json") && !s.contains("c <new>"));
        // Beyond noise filled, within noise hollow.
        assert!(s.contains(r##"fill="#1f77b4" stroke="#1f77b4""##), "{s}");
        assert!(s.contains(r##"fill="#fff" stroke="#d62728""##), "{s}");
    }

    #[test]
    fn the_axis_spans_every_interval_and_zero() {
        let (lo, hi) = chart().y_range();
        assert!(lo < -20.0 && hi > 21.0, "{lo} {hi}");
        let up = ChangeChart {
            lines: vec![ChangeLine {
                name: "x".into(),
                points: vec![Some(ChangePoint {
                    pct: 5.0,
                    interval: Some((4.0, 6.0)),
                    verdict: Verdict::Better,
                })],
            }],
            ..chart()
        };
        let (lo, hi) = up.y_range();
        assert!(lo < 0.0 && hi > 6.0, "{lo} {hi}");
    }
}
