//! A board, intervals and a sample reader the metrics' tests share.

use std::time::Duration;

use super::board::Board;
use super::series::RunLabels;
use crate::merge::{DbCounters, IntervalPart, Latency};

pub(super) fn latency(us: &[u64]) -> Latency {
    let mut l = Latency::default();
    for &v in us {
        l.hist.record(v).unwrap();
        l.sum_ns += v * 1000;
    }
    l.min_ns = us.iter().min().copied().unwrap_or(0) * 1000;
    l.max_ns = us.iter().max().copied().unwrap_or(0) * 1000;
    l
}

pub(super) fn part(events: u64, us: &[u64]) -> IntervalPart {
    IntervalPart {
        duration: Duration::from_secs(1),
        events,
        threads_running: 4,
        latency: latency(us),
        db: DbCounters {
            reads: events * 10,
            writes: events * 4,
            others: events * 2,
            ignored_errors: 1,
            reconnects: 0,
            errors_by_code: [(1213, 1)].into_iter().collect(),
            reconnect_failures: 0,
            connect_ns: 0,
        },
        ..Default::default()
    }
}

pub(super) fn board() -> Board {
    let b = Board::default();
    b.begin(RunLabels {
        run_id: "r1".into(),
        workload: "oltp_read_write".into(),
        tags: vec![
            ("buffer-pool".into(), "8G".into()),
            ("proxy".into(), "my\"cat".into()),
        ],
        agents: vec![
            ("10.0.0.1:7600".into(), "c1".into()),
            ("10.0.0.2:7600".into(), "c2".into()),
        ],
        targets: vec![
            ("a".into(), "h0:3306".into()),
            ("b".into(), "h1:3306".into()),
        ],
    });
    b
}

/// The value of the one sample line starting with `prefix`.
pub(super) fn value(text: &str, prefix: &str) -> f64 {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix} in\n{text}");
    lines[0].rsplit(' ').next().unwrap().parse().unwrap()
}
