//! Charts on the page: a grid as wide as the window (the page's CSS makes columns of at
//! least 600 px), and the charts without anything to show left out, with one line saying
//! which and why: a chart of no points, or whose every value is 0 (the client hosts'
//! network when agents and servers talk over loopback, which the figures leave out).

use std::fmt::Write;

use super::markup::esc;
use super::svg::{Chart, point_count, svg};

/// Why a chart has nothing to show, if it has nothing.
pub(super) fn left_out_reason(c: &Chart) -> Option<&'static str> {
    if point_count(c) == 0 {
        return Some("no data");
    }
    let all_zero = c.lines.iter().flat_map(|l| &l.points).all(|p| p.1 == 0.0);
    if !all_zero {
        return None;
    }
    Some(if c.id.ends_with("hosts-net-time") {
        "every value is 0 (traffic over loopback is not counted)"
    } else {
        "every value is 0"
    })
}

/// The charts with something to show in one grid, then one line naming those left out
/// (with `data-left-out`: their ids).
pub(super) fn charts_grid(charts: &[Chart]) -> String {
    let (shown, out): (Vec<&Chart>, Vec<&Chart>) =
        charts.iter().partition(|c| left_out_reason(c).is_none());
    let mut s = String::new();
    if !shown.is_empty() {
        s.push_str("<div class=\"charts\">");
        for c in shown {
            s.push_str(&svg(c));
        }
        s.push_str("</div>");
    }
    if !out.is_empty() {
        let ids: Vec<&str> = out.iter().map(|c| c.id.as_str()).collect();
        let items: Vec<String> = out
            .iter()
            .map(|c| format!("{}: {}", c.title, left_out_reason(c).unwrap_or("no data")))
            .collect();
        let _ = write!(
            s,
            "<p class=\"nodata\" data-left-out=\"{}\">Left out, nothing to show: {}.</p>",
            esc(&ids.join(" ")),
            esc(&items.join("; "))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::svg::Line;
    use super::super::test_support::thread_chart;
    use super::*;

    #[test]
    fn charts_without_anything_to_show_are_named_in_one_line() {
        let shown = thread_chart("a", vec![(1.0, 0.0), (2.0, 3.0)]);
        let mut net = thread_chart("vm rx", vec![(1.0, 0.0), (2.0, 0.0)]);
        net.id = "s0-1-hosts-net-time".into();
        net.title = "Client host network".into();
        let mut empty = thread_chart("x", Vec::new());
        empty.id = "latency-time".into();
        empty.title = "p95 <and> p99".into();
        empty.lines.push(Line {
            name: "y".into(),
            points: Vec::new(),
            offered: Vec::new(),
        });
        assert_eq!(left_out_reason(&shown), None);
        let html = charts_grid(&[shown, net, empty]);
        assert_eq!(html.matches("<svg").count(), 1, "{html}");
        assert!(html.starts_with("<div class=\"charts\"><svg"), "{html}");
        assert!(
            html.ends_with(
                "<p class=\"nodata\" data-left-out=\"s0-1-hosts-net-time latency-time\">Left out, nothing to show: Client host network: every value is 0 (traffic over loopback is not counted); p95 &lt;and&gt; p99: no data.</p>"
            ),
            "{html}"
        );
        // Nothing shown: no empty grid.
        let none = charts_grid(&[thread_chart("x", Vec::new())]);
        assert!(!none.contains("class=\"charts\""), "{none}");
    }
}
