//! A replica's lag over a run, interval by interval: what the replica says
//! (Seconds_Behind_Master; PostgreSQL's time since the last replayed commit) and what its
//! position says on its primary's clock: the replica has applied up to position P, the
//! primary's readings say when the primary had written P, so the replica is at least that
//! far behind. The second still speaks while the replica's SQL thread is stopped, when
//! Seconds_Behind_Master is NULL. Pure, beside its tests.

use serde::{Deserialize, Serialize};

/// A replica's lag over the run, in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LagJson {
    pub avg: f64,
    pub max: f64,
    /// Intervals with a figure.
    pub intervals: u32,
}

/// One reading of a replica: its tick, the tick's end (seconds since the measurement
/// began), the lag it reported (ms) and the position it had applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaReading {
    pub seq: u32,
    pub end_s: f64,
    pub lag_ms: Option<u64>,
    pub position: Option<u64>,
}

/// One reading of the primary: its tick, the tick's end and the position it had written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrimaryReading {
    pub seq: u32,
    pub end_s: f64,
    pub position: u64,
}

/// Each replica reading's lag in seconds (None where neither way gives one): the larger of
/// the reported lag and the position's. `primary` in tick order.
pub fn lag_series(
    replica: &[ReplicaReading],
    primary: &[PrimaryReading],
) -> Vec<(u32, Option<f64>)> {
    replica
        .iter()
        .map(|r| {
            let reported = r.lag_ms.map(|ms| ms as f64 / 1000.0);
            let by_position = r.position.and_then(|p| position_lag(r, p, primary));
            let lag = match (reported, by_position) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            (r.seq, lag)
        })
        .collect()
}

/// How long before `r`'s reading the primary had first written position `p` (0 when the
/// replica has applied all the primary had written by then).
fn position_lag(r: &ReplicaReading, p: u64, primary: &[PrimaryReading]) -> Option<f64> {
    let upto: Vec<&PrimaryReading> = primary.iter().filter(|x| x.seq <= r.seq).collect();
    let now = upto.last()?;
    if now.position <= p {
        return Some(0.0);
    }
    let reached = upto.iter().find(|x| x.position >= p)?;
    Some((r.end_s - reached.end_s).max(0.0))
}

/// The average and maximum of a lag series; None when it has no figure.
pub fn summarize(series: &[(u32, Option<f64>)]) -> Option<LagJson> {
    let v: Vec<f64> = series.iter().filter_map(|(_, l)| *l).collect();
    if v.is_empty() {
        return None;
    }
    Some(LagJson {
        avg: v.iter().sum::<f64>() / v.len() as f64,
        max: v.iter().copied().fold(0.0, f64::max),
        intervals: v.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(seq: u32, position: u64) -> PrimaryReading {
        PrimaryReading {
            seq,
            end_s: f64::from(seq),
            position,
        }
    }

    fn r(seq: u32, lag_ms: Option<u64>, position: Option<u64>) -> ReplicaReading {
        ReplicaReading {
            seq,
            end_s: f64::from(seq),
            lag_ms,
            position,
        }
    }

    #[test]
    fn a_stopped_replica_falls_behind_by_the_primarys_clock() {
        // The primary writes 100 a second; the replica's SQL thread stops after tick 2
        // (position 200) and starts again at tick 6.
        let primary: Vec<_> = (1..=7).map(|s| p(s, 100 * u64::from(s))).collect();
        let replica = [
            r(1, Some(0), Some(100)),
            r(2, Some(0), Some(200)),
            r(3, None, Some(200)),
            r(4, None, Some(200)),
            r(5, None, Some(200)),
            r(6, Some(4000), Some(450)),
            r(7, Some(0), Some(700)),
        ];
        let lags = lag_series(&replica, &primary);
        let l: Vec<f64> = lags.iter().map(|(_, l)| l.unwrap()).collect();
        assert_eq!(l, [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0]);
        let s = summarize(&lags).unwrap();
        assert_eq!((s.max, s.intervals), (4.0, 7));
        assert!((s.avg - 10.0 / 7.0).abs() < 1e-9);
    }

    #[test]
    fn without_positions_the_reported_lag_speaks_alone() {
        let lags = lag_series(&[r(1, Some(1500), None), r(2, None, None)], &[]);
        assert_eq!(lags, [(1, Some(1.5)), (2, None)]);
        assert_eq!(summarize(&[(1, None)]), None);
    }
}
