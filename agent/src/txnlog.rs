//! pgbench's per-transaction log (`-l`) on the agent: each client's transactions as they
//! end, sampled by `--sampling-rate`, kept with the interval they ended in and sent with
//! it; the coordinator writes the files.

use std::time::{SystemTime, UNIX_EPOCH};

use fleetbench_proto::v1::TxnLogEntry;

/// What a run logs: the first client's number on this agent and the share of
/// transactions kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxnLogConfig {
    pub first_client: u64,
    pub sampling: f64,
}

/// A transaction's outcome in the log.
pub const DONE: u32 = 0;
pub const SKIPPED: u32 = 1;
pub const SERIALIZATION: u32 = 2;
pub const DEADLOCK: u32 = 3;

/// One worker's logging: its client number, its count and its sampling draws.
#[derive(Debug, Clone)]
pub struct LogState {
    client: u64,
    number: u64,
    /// A transaction is kept when the next draw is below this (all: u64::MAX).
    keep_below: u64,
    rng: u64,
}

impl LogState {
    pub fn new(cfg: TxnLogConfig, t: u32) -> LogState {
        let client = cfg.first_client + u64::from(t);
        LogState {
            client,
            number: 0,
            keep_below: if cfg.sampling >= 1.0 {
                u64::MAX
            } else {
                (cfg.sampling.max(0.0) * u64::MAX as f64) as u64
            },
            rng: client.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// The entry of the transaction that just ended, if the sample keeps it.
    pub fn entry(
        &mut self,
        script: usize,
        status: u32,
        ns: u64,
        lag_ns: u64,
        retries: u32,
    ) -> Option<TxnLogEntry> {
        self.number += 1;
        if self.keep_below != u64::MAX {
            // xorshift64*: cheap and good enough for a sample.
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            if self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >= self.keep_below {
                return None;
            }
        }
        let end_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        Some(TxnLogEntry {
            client: self.client,
            number: self.number,
            script: script as u32,
            status,
            latency_us: ns / 1_000,
            end_us,
            lag_us: lag_ns / 1_000,
            retries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_numbered_per_client_and_sampled() {
        let cfg = TxnLogConfig {
            first_client: 10,
            sampling: 1.0,
        };
        let mut s = LogState::new(cfg, 2);
        let e = s.entry(1, DONE, 2_500_000, 0, 0).unwrap();
        assert_eq!(
            (e.client, e.number, e.script, e.latency_us),
            (12, 1, 1, 2_500)
        );
        assert_eq!(s.entry(0, SKIPPED, 0, 0, 0).unwrap().number, 2);
        let mut half = LogState::new(
            TxnLogConfig {
                sampling: 0.25,
                ..cfg
            },
            0,
        );
        let kept = (0..10_000)
            .filter(|_| half.entry(0, DONE, 1, 0, 0).is_some())
            .count();
        assert!((2_200..2_800).contains(&kept), "{kept}");
        assert_eq!(half.number, 10_000);
    }
}
