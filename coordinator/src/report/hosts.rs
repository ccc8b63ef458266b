//! The client hosts' own load over a run (from each agent's per-interval /proc figures):
//! average and peak per agent, and the intervals in which a host was saturated, when the
//! figures measure the client rather than the server.

use fleetbench_agent::host::HostFigures;
use std::fmt::Write;
use std::time::Duration;

/// CPU busy at or above this share of all cores saturates a host.
pub const BUSY_PCT: f64 = 90.0;

/// An interval saturated its host: CPU busy at or over [`BUSY_PCT`], or more than twice as
/// many runnable tasks as cores (threads ready to run that no core runs).
pub fn saturated(f: &HostFigures) -> bool {
    f.cpu_busy_pct >= BUSY_PCT || f.run_queue > 2 * f.cores.max(1)
}

/// One agent host over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    pub addr: String,
    pub intervals: usize,
    pub cpu_busy_avg: f64,
    pub cpu_busy_peak: f64,
    pub agent_cpu_avg: f64,
    pub agent_cpu_peak: f64,
    pub run_queue_peak: u32,
    pub cores: u32,
    pub mem_used_peak_bytes: u64,
    pub mem_total_bytes: u64,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// Tick numbers of the saturated intervals.
    pub saturated: Vec<u32>,
}

/// Summaries of the agents that reported their host's load; `tick` is the interval length.
pub fn summarize(hosts: &[(String, Vec<(u32, HostFigures)>)], tick: Duration) -> Vec<HostSummary> {
    hosts
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(addr, v)| {
            let n = v.len() as f64;
            let peak = |f: fn(&HostFigures) -> f64| v.iter().map(|(_, h)| f(h)).fold(0.0, f64::max);
            let avg = |f: fn(&HostFigures) -> f64| v.iter().map(|(_, h)| f(h)).sum::<f64>() / n;
            let secs = (tick.as_secs_f64() * n).max(f64::MIN_POSITIVE);
            HostSummary {
                addr: addr.clone(),
                intervals: v.len(),
                cpu_busy_avg: avg(|h| h.cpu_busy_pct),
                cpu_busy_peak: peak(|h| h.cpu_busy_pct),
                agent_cpu_avg: avg(|h| h.agent_cpu_pct),
                agent_cpu_peak: peak(|h| h.agent_cpu_pct),
                run_queue_peak: v.iter().map(|(_, h)| h.run_queue).max().unwrap_or(0),
                cores: v.iter().map(|(_, h)| h.cores).max().unwrap_or(0),
                mem_used_peak_bytes: v.iter().map(|(_, h)| h.mem_used_bytes).max().unwrap_or(0),
                mem_total_bytes: v.iter().map(|(_, h)| h.mem_total_bytes).max().unwrap_or(0),
                net_rx_bytes_per_sec: v.iter().map(|(_, h)| h.net_rx_bytes as f64).sum::<f64>()
                    / secs,
                net_tx_bytes_per_sec: v.iter().map(|(_, h)| h.net_tx_bytes as f64).sum::<f64>()
                    / secs,
                saturated: v
                    .iter()
                    .filter(|(_, h)| saturated(h))
                    .map(|(s, _)| *s)
                    .collect(),
            }
        })
        .collect()
}

/// `1-3, 5, 7-8`: tick numbers as ranges.
pub fn ranges(ticks: &[u32]) -> String {
    let mut t = ticks.to_vec();
    t.sort_unstable();
    t.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let mut j = i;
        while j + 1 < t.len() && t[j + 1] == t[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            t[i].to_string()
        } else {
            format!("{}-{}", t[i], t[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// One warning line per saturated host.
pub fn warnings(s: &[HostSummary]) -> Vec<String> {
    s.iter()
        .filter(|h| !h.saturated.is_empty())
        .map(|h| {
            format!(
                "WARNING: agent {}: its host was saturated (CPU busy {:.0} % at peak, run queue {} on {} cores) in {} of {} intervals ({}): these figures may measure the client, not the server",
                h.addr,
                h.cpu_busy_peak,
                h.run_queue_peak,
                h.cores,
                h.saturated.len(),
                h.intervals,
                ranges(&h.saturated)
            )
        })
        .collect()
}

/// Most warning lines the text report prints; the JSON names every saturated host.
const WARNINGS_LISTED: usize = 5;

/// The warnings, at most [`WARNINGS_LISTED`] of them and a line saying how many more.
pub fn capped_warnings(s: &[HostSummary]) -> Vec<String> {
    let mut w = warnings(s);
    if w.len() > WARNINGS_LISTED {
        let more = w.len() - WARNINGS_LISTED;
        w.truncate(WARNINGS_LISTED);
        w.push(format!(
            "... and {more} more saturated agent hosts (host_load in the JSON names them)"
        ));
    }
    w
}

/// The "Client hosts" block of the text report (empty when no agent reported): a row per
/// agent, or past `listed` agents one summary line, as the per-agent block condenses.
pub fn block(s: &[HostSummary], listed: usize) -> String {
    if s.is_empty() {
        return String::new();
    }
    if s.len() > listed {
        let n = s.len() as f64;
        let saturated = s.iter().filter(|h| !h.saturated.is_empty()).count();
        let mut out = format!(
            "\nClient hosts (condensed):\n    {} agent hosts: CPU busy {:.1} % on average, {:.1} % at the busiest; agent CPU {:.1} % at the busiest; {} saturated\n",
            s.len(),
            s.iter().map(|h| h.cpu_busy_avg).sum::<f64>() / n,
            s.iter().map(|h| h.cpu_busy_peak).fold(0.0, f64::max),
            s.iter().map(|h| h.agent_cpu_peak).fold(0.0, f64::max),
            saturated
        );
        for line in capped_warnings(s) {
            let _ = writeln!(out, "{line}");
        }
        return out;
    }
    let mut out = String::from("\nClient hosts (avg/peak; run queue and memory: peak/total):\n");
    let _ = writeln!(
        out,
        "    {:<21} {:>14} {:>14} {:>11} {:>13} {:>17}",
        "agent", "cpu busy %", "agent cpu %", "run queue", "mem GiB", "net rx/tx MB/s"
    );
    for h in s {
        let line = format!(
            "    {:<21} {:>7.1}/{:<6.1} {:>7.1}/{:<6.1} {:>7}/{:<3} {:>6.1}/{:<6.1} {:>8.2}/{:<8.2}",
            h.addr,
            h.cpu_busy_avg,
            h.cpu_busy_peak,
            h.agent_cpu_avg,
            h.agent_cpu_peak,
            h.run_queue_peak,
            h.cores,
            h.mem_used_peak_bytes as f64 / f64::from(1u32 << 30),
            h.mem_total_bytes as f64 / f64::from(1u32 << 30),
            h.net_rx_bytes_per_sec / 1e6,
            h.net_tx_bytes_per_sec / 1e6,
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for w in capped_warnings(s) {
        let _ = writeln!(out, "{w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(cpu: f64, queue: u32) -> HostFigures {
        HostFigures {
            cpu_busy_pct: cpu,
            agent_cpu_pct: cpu / 2.0,
            run_queue: queue,
            cores: 2,
            mem_used_bytes: 1 << 30,
            mem_total_bytes: 4 << 30,
            net_rx_bytes: 2_000_000,
            net_tx_bytes: 1_000_000,
        }
    }

    #[test]
    fn averages_peaks_and_saturated_intervals() {
        let hosts = vec![
            (
                "10.0.0.1:7600".to_string(),
                vec![
                    (1, load(50.0, 1)),
                    (2, load(95.0, 1)),
                    (3, load(40.0, 5)),
                    (4, load(30.0, 0)),
                ],
            ),
            ("10.0.0.2:7600".to_string(), vec![]),
        ];
        let s = summarize(&hosts, Duration::from_secs(1));
        assert_eq!(s.len(), 1, "an agent without figures is left out");
        let h = &s[0];
        assert!((h.cpu_busy_avg - 53.75).abs() < 1e-9 && h.cpu_busy_peak == 95.0);
        assert_eq!((h.run_queue_peak, h.cores), (5, 2));
        // Busy over 90 % in 2, more than twice the cores runnable in 3.
        assert_eq!(h.saturated, [2, 3]);
        assert!((h.net_rx_bytes_per_sec - 2_000_000.0).abs() < 1e-6);
        let w = warnings(&s);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("WARNING: agent 10.0.0.1:7600: its host was saturated (CPU busy 95 % at peak, run queue 5 on 2 cores) in 2 of 4 intervals (2-3)"), "{}", w[0]);
        assert!(block(&s, 20).contains("10.0.0.1:7600"));
        assert!(block(&[], 20).is_empty());
        // Past the listed number: one summary line, at most five warnings.
        let many: Vec<HostSummary> = (0..30)
            .map(|i| HostSummary {
                addr: format!("10.0.1.{i}:7600"),
                ..h.clone()
            })
            .collect();
        let b = block(&many, 20);
        assert!(
            b.contains("    30 agent hosts: CPU busy 53.8 % on average, 95.0 % at the busiest"),
            "{b}"
        );
        assert_eq!(
            b.lines().filter(|l| l.starts_with("WARNING")).count(),
            5,
            "{b}"
        );
        assert!(b.contains("... and 25 more saturated agent hosts"), "{b}");
    }

    #[test]
    fn tick_ranges() {
        assert_eq!(ranges(&[7, 1, 2, 3, 5, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[]), "");
    }
}
