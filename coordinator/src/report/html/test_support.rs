//! Charts the HTML report's tests share.

use super::svg::{Chart, Line, XAxis};

/// A chart over thread counts with one line `name` of `points`.
pub(super) fn thread_chart(name: &str, points: Vec<(f64, f64)>) -> Chart {
    Chart {
        id: "tps-threads".into(),
        title: "t".into(),
        x_label: "threads".into(),
        y_label: "y".into(),
        lines: vec![Line {
            offered: Vec::new(),
            name: name.into(),
            points,
        }],
        x_axis: XAxis::Integer,
        log_y: false,
    }
}
