//! pgbench's log files (`-l`), written on the coordinator from what the agents send with
//! their intervals: one file per agent, named as pgbench names its threads' files
//! (`PREFIX.PID` for the first, `PREFIX.PID.N` for the others), either a line per
//! transaction or, with `--aggregate-interval`, a line per interval in pgbench's 15
//! fields.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use fleetbench_proto::v1::TxnLogEntry;

/// What a line says besides the transaction: the columns pgbench adds for `-R` (the
/// schedule lag) and `--max-tries` (the retries), and `--failures-detailed`'s kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Columns {
    pub lag: bool,
    pub retries: bool,
    pub detailed: bool,
}

/// One transaction's line: `client number time script epoch micros [lag] [retries]`,
/// the time being the latency in microseconds, `skipped`, or `failed` (or its kind).
pub fn txn_line(e: &TxnLogEntry, c: Columns) -> String {
    let time = match (e.status, c.detailed) {
        (0, _) => e.latency_us.to_string(),
        (1, _) => "skipped".into(),
        (_, false) => "failed".into(),
        (2, true) => "serialization".into(),
        _ => "deadlock".into(),
    };
    let mut s = format!(
        "{} {} {time} {} {} {}",
        e.client,
        e.number,
        e.script,
        e.end_us / 1_000_000,
        e.end_us % 1_000_000
    );
    if c.lag {
        s.push_str(&format!(" {}", e.lag_us));
    }
    if c.retries {
        s.push_str(&format!(" {}", e.retries));
    }
    s
}

/// One aggregation interval's figures.
#[derive(Debug, Clone, Default, PartialEq)]
struct Window {
    start: u64,
    count: u64,
    sum: u64,
    sum2: u128,
    min: u64,
    max: u64,
    lag_sum: u64,
    lag_sum2: u128,
    lag_min: u64,
    lag_max: u64,
    skipped: u64,
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlocks: u64,
}

impl Window {
    fn new(start: u64) -> Window {
        Window {
            start,
            ..Window::default()
        }
    }

    fn add(&mut self, e: &TxnLogEntry) {
        self.retried += u64::from(e.retries > 0);
        self.retries += u64::from(e.retries);
        match e.status {
            1 => self.skipped += 1,
            2 => self.serialization += 1,
            3 => self.deadlocks += 1,
            _ => {
                let (l, g) = (e.latency_us, e.lag_us);
                if self.count == 0 {
                    (self.min, self.max, self.lag_min, self.lag_max) = (l, l, g, g);
                }
                self.count += 1;
                self.sum += l;
                self.sum2 += u128::from(l) * u128::from(l);
                (self.min, self.max) = (self.min.min(l), self.max.max(l));
                self.lag_sum += g;
                self.lag_sum2 += u128::from(g) * u128::from(g);
                (self.lag_min, self.lag_max) = (self.lag_min.min(g), self.lag_max.max(g));
            }
        }
    }

    /// pgbench's 15 fields.
    fn line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            self.start,
            self.count,
            self.sum,
            self.sum2,
            self.min,
            self.max,
            self.lag_sum,
            self.lag_sum2,
            self.lag_min,
            self.lag_max,
            self.skipped,
            self.retried,
            self.retries,
            self.serialization,
            self.deadlocks
        )
    }
}

/// `--aggregate-interval`: transactions into windows of `secs` by the time they ended.
/// A window is written once a later one begins (the empty ones between too); the last,
/// cut by the run's end, is not, as in pgbench.
#[derive(Debug, Clone)]
pub struct Aggregator {
    secs: u64,
    current: Option<Window>,
}

impl Aggregator {
    pub fn new(secs: u64) -> Aggregator {
        Aggregator {
            secs: secs.max(1),
            current: None,
        }
    }

    /// Adds `e`; the lines of the windows it closes.
    pub fn add(&mut self, e: &TxnLogEntry) -> Vec<String> {
        let at = e.end_us / 1_000_000;
        let start = at - at % self.secs;
        let mut out = Vec::new();
        let w = self.current.get_or_insert_with(|| Window::new(start));
        while w.start + self.secs <= at {
            out.push(w.line());
            *w = Window::new(w.start + self.secs);
        }
        w.add(e);
        out
    }
}

/// The open log files, one per agent.
pub struct LogFiles {
    files: Vec<(PathBuf, BufWriter<File>, Option<Aggregator>)>,
    columns: Columns,
    /// Set once a write failed: said once, then nothing more is written.
    failed: bool,
}

impl LogFiles {
    /// Creates `agents` files `PREFIX.PID[.N]`, in the current directory as pgbench does
    /// (a prefix may name another one).
    pub fn create(
        prefix: &str,
        agents: usize,
        aggregate: Option<u64>,
        columns: Columns,
    ) -> std::io::Result<LogFiles> {
        let pid = std::process::id();
        let mut files = Vec::with_capacity(agents);
        for k in 0..agents {
            let path = PathBuf::from(match k {
                0 => format!("{prefix}.{pid}"),
                k => format!("{prefix}.{pid}.{k}"),
            });
            let f = File::create(&path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            files.push((path, BufWriter::new(f), aggregate.map(Aggregator::new)));
        }
        Ok(LogFiles {
            files,
            columns,
            failed: false,
        })
    }

    /// Writes agent `k`'s entries.
    pub fn write(&mut self, k: usize, entries: &[TxnLogEntry]) {
        let columns = self.columns;
        let Some((path, w, agg)) = self.files.get_mut(k) else {
            return;
        };
        if self.failed {
            return;
        }
        let mut res = Ok(());
        for e in entries {
            let lines = match agg {
                Some(a) => a.add(e),
                None => vec![txn_line(e, columns)],
            };
            for l in lines {
                res = res.and_then(|_| writeln!(w, "{l}"));
            }
        }
        if let Err(e) = res {
            eprintln!(
                "pgbench: error: could not write log file {}: {e}; the log stops here",
                path.display()
            );
            self.failed = true;
        }
    }

    /// Flushes every file.
    pub fn finish(mut self) {
        for (path, w, _) in &mut self.files {
            if let Err(e) = w.flush()
                && !self.failed
            {
                eprintln!(
                    "pgbench: error: could not write log file {}: {e}",
                    path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(end_us: u64, latency_us: u64, status: u32) -> TxnLogEntry {
        TxnLogEntry {
            client: 3,
            number: 7,
            script: 1,
            status,
            latency_us,
            end_us,
            lag_us: 40,
            retries: 2,
        }
    }

    #[test]
    fn transaction_lines_are_pgbenchs() {
        let e = entry(1_412_881_037_912_698, 4621, 0);
        assert_eq!(
            txn_line(&e, Columns::default()),
            "3 7 4621 1 1412881037 912698"
        );
        let all = Columns {
            lag: true,
            retries: true,
            detailed: true,
        };
        assert_eq!(txn_line(&e, all), "3 7 4621 1 1412881037 912698 40 2");
        assert_eq!(
            txn_line(&entry(1_000_001, 0, 1), Columns::default()),
            "3 7 skipped 1 1 1"
        );
        assert_eq!(
            txn_line(&entry(0, 0, 2), Columns::default())
                .split(' ')
                .nth(2),
            Some("failed")
        );
        assert_eq!(
            txn_line(&entry(0, 0, 3), all).split(' ').nth(2),
            Some("deadlock")
        );
    }

    #[test]
    fn windows_close_when_a_later_one_begins() {
        let mut a = Aggregator::new(2);
        assert!(a.add(&entry(10_000_000, 100, 0)).is_empty());
        assert!(a.add(&entry(11_500_000, 300, 0)).is_empty());
        assert!(a.add(&entry(11_600_000, 0, 1)).is_empty());
        // 16 s: the 10..12 window closes, then the empty 12..14 and 14..16.
        let lines = a.add(&entry(16_000_000, 50, 2));
        assert_eq!(
            lines,
            vec![
                "10 2 400 100000 100 300 80 3200 40 40 1 3 6 0 0".to_string(),
                "12 0 0 0 0 0 0 0 0 0 0 0 0 0 0".to_string(),
                "14 0 0 0 0 0 0 0 0 0 0 0 0 0 0".to_string(),
            ]
        );
    }
}
