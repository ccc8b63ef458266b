//! Charts as SVG: a chart's lines, axes and legend drawn into one self-contained SVG
//! element whose every data point carries its values (`data-x`, `data-y`).

use std::fmt::Write;

use super::axis::{integer_ticks, log_span, span, ticks};
use super::markup::{esc, num};

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

pub(super) const COLORS: [&str; 8] = [
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

/// Where a chart's values land: the ranges its axes span and the plot area's size.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    log_y: bool,
    /// The plot area's width and height.
    pw: f64,
    ph: f64,
}

impl Frame {
    /// The frame of `c`, and the ticks of its y axis.
    fn of(c: &Chart) -> (Frame, Vec<f64>) {
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
        let frame = Frame {
            x0,
            x1,
            y0,
            y1,
            log_y: c.log_y,
            pw: WIDTH - LEFT - RIGHT,
            ph: PLOT_HEIGHT,
        };
        (frame, y_ticks)
    }

    /// On a log axis, values at or below its bottom (0 ms) sit on the bottom line.
    fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            y.max(self.y0).log10()
        } else {
            y
        }
    }

    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * self.pw
    }

    fn sy(&self, y: f64) -> f64 {
        TOP + self.ph
            - (self.ty(y) - self.ty(self.y0)) / (self.ty(self.y1) - self.ty(self.y0)) * self.ph
    }
}

/// One item of the legend: where it stands, the line's full name (the tooltip) and the
/// name shown, cut short to fit.
struct LegendItem {
    x: f64,
    y: f64,
    full: String,
    shown: String,
}

/// The legend below the plot (which starts at `top`): items left to right, wrapping into
/// rows; and how many rows it takes.
fn legend(c: &Chart, top: f64) -> (Vec<LegendItem>, usize) {
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
        legend.push(LegendItem {
            x: lx,
            y: top + row as f64 * LEGEND_ROW,
            full,
            shown,
        });
        lx += w;
    }
    let rows = if c.lines.is_empty() { 0 } else { row + 1 };
    (legend, rows)
}

/// The chart as an SVG element. Its height grows with the rows its legend needs below
/// the plot; legend names too long for a row are cut short (the full name is the
/// tooltip).
pub fn svg(c: &Chart) -> String {
    let (f, y_ticks) = Frame::of(c);
    let legend_top = TOP + f.ph + BELOW_AXIS;
    let (legend, rows) = legend(c, legend_top);
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
    axes(&mut s, c, &f, y_ticks);
    for (i, (line, item)) in c.lines.iter().zip(&legend).enumerate() {
        series(&mut s, i, line, item, &f);
    }
    s.push_str("</svg>");
    s
}

/// Axes, grid, ticks and the axes' labels.
fn axes(s: &mut String, c: &Chart, f: &Frame, y_ticks: Vec<f64>) {
    let (pw, ph) = (f.pw, f.ph);
    for y in y_ticks {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick y" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT + pw,
            LEFT - 6.0,
            f.sy(y) + 4.0,
            num(y),
            y = f.sy(y)
        );
    }
    for (x, label) in x_ticks(c, f) {
        let _ = write!(
            s,
            r#"<text class="tick x" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            f.sx(x),
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
}

/// The x axis' ticks and their labels, as the chart's kind of axis wants them.
fn x_ticks(c: &Chart, f: &Frame) -> Vec<(f64, String)> {
    match &c.x_axis {
        XAxis::Labels(l) => l.clone(),
        XAxis::Numeric | XAxis::FromZero => ticks(f.x0, f.x1, 8)
            .into_iter()
            .map(|v| (v, num(v)))
            .collect(),
        XAxis::Integer => {
            let xs: Vec<f64> = c
                .lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0))
                .collect();
            integer_ticks(&xs, f.x0, f.x1, f.pw / (f.x1 - f.x0))
                .into_iter()
                .map(|v| (v, num(v)))
                .collect()
        }
    }
}

/// Line `i` of the chart: its polyline, a circle per point carrying its values, and its
/// legend item.
fn series(s: &mut String, i: usize, line: &Line, item: &LegendItem, f: &Frame) {
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
        .map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y)))
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
            f.sx(x),
            f.sy(y),
            num(y),
            num(x)
        );
    }
    let (lx, ly) = (item.x, item.y);
    let _ = write!(
        s,
        r#"<g class="legend-item"><title>{}</title><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="3"{dash_attr}/><text class="legend" x="{:.1}" y="{:.1}">{}</text></g>"#,
        esc(&item.full),
        lx,
        lx + 14.0,
        ly - 4.0,
        ly - 4.0,
        lx + 18.0,
        ly,
        esc(&item.shown)
    );
}

#[cfg(test)]
mod tests {
    use super::super::test_support::thread_chart;
    use super::*;

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
    fn a_line_without_data_says_so() {
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
        let mut c2 = c.clone();
        c2.lines.push(Line {
            offered: Vec::new(),
            name: "b".into(),
            points: vec![(1.0, 2.0)],
        });
        assert!(svg(&c2).contains(">a (no data)</text>"));
    }
}
