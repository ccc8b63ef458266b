//! The client hosts' own load over a run (from each agent's per-interval /proc figures):
//! average and peak per agent, and the intervals in which a host was saturated, when the
//! figures measure the client rather than the server. Also one line per host saying what
//! it is (cores, CPU model, kernel, memory).

use fleetbench_model::host::{HostFacts, HostFigures};
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
    /// What the report calls the agent (its address until [`name_hosts`] says).
    pub agent: String,
    /// The host the agent runs on, as its Hello named it (its address until
    /// [`name_hosts`] says): agents on one host share one saturation warning.
    pub host: String,
    pub intervals: usize,
    pub cpu_busy_avg: f64,
    pub cpu_busy_peak: f64,
    pub agent_cpu_avg: f64,
    pub agent_cpu_peak: f64,
    /// CPU seconds the agent process used over its intervals.
    pub agent_cpu_s: f64,
    pub run_queue_peak: u32,
    pub cores: u32,
    pub mem_used_peak_bytes: u64,
    pub mem_total_bytes: u64,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// Tick numbers of the saturated intervals.
    pub saturated: Vec<u32>,
    /// The work directory's disk, over the intervals that had its figures (fileio).
    pub disk: Option<DiskSummary>,
}

/// A disk's utilisation and queue depth over a run: average and peak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskSummary {
    pub util_avg: f64,
    pub util_peak: f64,
    pub queue_avg: f64,
    pub queue_peak: f64,
}

/// Average and peak of the intervals that carried disk figures; None when none did.
fn disk_summary(v: &[(u32, HostFigures)]) -> Option<DiskSummary> {
    let d: Vec<_> = v.iter().filter_map(|(_, h)| h.disk).collect();
    if d.is_empty() {
        return None;
    }
    let n = d.len() as f64;
    Some(DiskSummary {
        util_avg: d.iter().map(|x| x.util_pct).sum::<f64>() / n,
        util_peak: d.iter().map(|x| x.util_pct).fold(0.0, f64::max),
        queue_avg: d.iter().map(|x| x.queue_depth).sum::<f64>() / n,
        queue_peak: d.iter().map(|x| x.queue_depth).fold(0.0, f64::max),
    })
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
                agent: addr.clone(),
                host: addr.clone(),
                intervals: v.len(),
                cpu_busy_avg: avg(|h| h.cpu_busy_pct),
                cpu_busy_peak: peak(|h| h.cpu_busy_pct),
                agent_cpu_avg: avg(|h| h.agent_cpu_pct),
                agent_cpu_peak: peak(|h| h.agent_cpu_pct),
                agent_cpu_s: v
                    .iter()
                    .map(|(_, h)| h.agent_cpu_pct / 100.0 * f64::from(h.cores) * tick.as_secs_f64())
                    .sum(),
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
                disk: disk_summary(v),
            }
        })
        .collect()
}

/// The client's side of the ledger: the agents' CPU per transaction over all of them and
/// its range per agent, and how many transactions one client CPU second drives, so that a
/// reader sees how many client hosts a load needs. Worded without "transactions" or
/// "queries": scripts that parse sysbench's report match those words. `events` is each agent's (address,
/// transactions); empty when no agent reported its CPU or ran any.
pub fn client_cpu_line(s: &[HostSummary], events: &[(String, u64)]) -> String {
    let per_agent: Vec<(f64, u64)> = s
        .iter()
        .filter_map(|h| {
            let (_, n) = events.iter().find(|(a, _)| *a == h.addr)?;
            (*n > 0 && h.agent_cpu_s > 0.0).then_some((h.agent_cpu_s, *n))
        })
        .collect();
    let cpu: f64 = per_agent.iter().map(|(c, _)| c).sum();
    let n: u64 = per_agent.iter().map(|(_, n)| n).sum();
    if n == 0 {
        return String::new();
    }
    let us = |c: f64, n: u64| c * 1e6 / n as f64;
    let mut line = format!(
        "Client CPU: {:.1} µs per transaction over the agents ({:.0} of them per client CPU second)",
        us(cpu, n),
        n as f64 / cpu
    );
    if per_agent.len() > 1 {
        let each: Vec<f64> = per_agent.iter().map(|&(c, n)| us(c, n)).collect();
        let lo = each.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = each.iter().copied().fold(0.0, f64::max);
        line.push_str(&format!("; {lo:.1}-{hi:.1} µs per agent"));
    }
    line.push('\n');
    line
}

/// What the report says once when a fileio run's agents sent no disk figures.
pub const NO_DISK: &str = "disk figures: none (work dir on a device without block statistics)";

/// The note for the fileio agents that sent host figures but none of their disk, if any:
/// [`NO_DISK`] when none did, else naming those that did not.
pub fn no_disk_note(s: &[HostSummary]) -> Option<String> {
    let without: Vec<&str> = s
        .iter()
        .filter(|h| h.disk.is_none())
        .map(|h| h.agent.as_str())
        .collect();
    if without.is_empty() {
        None
    } else if without.len() == s.len() {
        Some(NO_DISK.to_string())
    } else {
        Some(format!(
            "disk figures: none for {} (work dir on a device without block statistics)",
            without.join(", ")
        ))
    }
}

/// `8 cores, AMD EPYC 7B13, Linux 6.1.0-18-amd64, 31.3 GiB`; what an agent did not say is
/// left out (older agents send no model, kernel or memory).
pub fn facts_line(f: &HostFacts) -> String {
    let mut parts = Vec::new();
    if f.cores > 0 {
        parts.push(format!("{} cores", f.cores));
    }
    if !f.cpu_model.is_empty() {
        parts.push(f.cpu_model.clone());
    }
    if !f.kernel.is_empty() {
        parts.push(format!("Linux {}", f.kernel));
    }
    if f.mem_total_bytes > 0 {
        parts.push(format!(
            "{:.1} GiB",
            f.mem_total_bytes as f64 / f64::from(1u32 << 30)
        ));
    }
    if parts.is_empty() {
        "not reported".into()
    } else {
        parts.join(", ")
    }
}

/// The "Agent hosts" lines: one per distinct (host name, facts) up to `listed`, agents on
/// one host once; past that, one per distinct set of facts with how many hosts have it.
/// Agents that said nothing of their host are left out (empty when none said anything).
pub fn facts_block(agents: &[(&str, &HostFacts)], listed: usize) -> String {
    let mut seen: Vec<(&str, &HostFacts)> = Vec::new();
    for &(host, f) in agents {
        if *f != HostFacts::default() && !seen.contains(&(host, f)) {
            seen.push((host, f));
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut out = String::from("Agent hosts:\n");
    if seen.len() <= listed {
        for (host, f) in seen {
            let _ = writeln!(out, "    {host}: {}", facts_line(f));
        }
        return out;
    }
    let mut kinds: Vec<(&HostFacts, usize)> = Vec::new();
    for (_, f) in seen {
        match kinds.iter_mut().find(|(k, _)| *k == f) {
            Some((_, n)) => *n += 1,
            None => kinds.push((f, 1)),
        }
    }
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    for (f, n) in kinds.iter().take(listed) {
        let s = if *n == 1 { "" } else { "s" };
        let _ = writeln!(out, "    {n} host{s}: {}", facts_line(f));
    }
    if kinds.len() > listed {
        let _ = writeln!(
            out,
            "    ... and {} more kinds of host (the JSON's agents say which)",
            kinds.len() - listed
        );
    }
    out
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

/// Names each summary's agent and host as its agent's (`agents`: address, host name and
/// the agent's name in reports).
pub fn name_hosts(s: &mut [HostSummary], agents: &[(String, String, String)]) {
    for h in s {
        let Some((_, host, name)) = agents.iter().find(|(a, _, _)| *a == h.addr) else {
            continue;
        };
        if !host.is_empty() {
            h.host = host.clone();
        }
        if !name.is_empty() {
            h.agent = name.clone();
        }
    }
}

/// A saved run's client hosts as summaries (what its JSON keeps of them), so that a report
/// of the file warns as the run's text did: each agent that sent its host's load, named
/// as the reports name it. The intervals are those that carried the agent's host figures
/// (all of the run's in files written before the per-interval figures).
pub fn of_doc(run: &crate::report::doc::Report) -> Vec<HostSummary> {
    let names = run.agent_names();
    run.agents
        .iter()
        .zip(names)
        .enumerate()
        .filter_map(|(i, (a, name))| {
            let h = a.host_load.as_ref()?;
            let with_figures = run
                .intervals
                .iter()
                .filter(|iv| iv.agent_hosts.get(i).is_some_and(Option::is_some))
                .count();
            let intervals = if with_figures > 0 {
                with_figures
            } else {
                run.intervals.len()
            };
            Some(HostSummary {
                addr: a.addr.clone(),
                agent: name,
                host: if a.host.is_empty() {
                    a.addr.clone()
                } else {
                    a.host.clone()
                },
                intervals,
                cpu_busy_avg: h.cpu_busy_pct_avg,
                cpu_busy_peak: h.cpu_busy_pct_peak,
                agent_cpu_avg: h.agent_cpu_pct_avg,
                agent_cpu_peak: h.agent_cpu_pct_peak,
                agent_cpu_s: 0.0,
                run_queue_peak: h.run_queue_peak,
                cores: h.cores,
                mem_used_peak_bytes: h.mem_used_bytes_peak,
                mem_total_bytes: h.mem_total_bytes,
                net_rx_bytes_per_sec: h.net_rx_bytes_per_sec,
                net_tx_bytes_per_sec: h.net_tx_bytes_per_sec,
                saturated: h.saturated_intervals.clone(),
                disk: h.disk.as_ref().map(|d| DiskSummary {
                    util_avg: d.util_pct_avg,
                    util_peak: d.util_pct_peak,
                    queue_avg: d.queue_depth_avg,
                    queue_peak: d.queue_depth_peak,
                }),
            })
        })
        .collect()
}

/// Whether a run's saturated client host goes unwarned: cpu, memory, threads and mutex
/// load the client host on purpose, unless the run asks (`--warn-client-saturation`).
pub fn measures_the_client(plan: &crate::plan::Plan) -> bool {
    use crate::plan::Workload as W;
    !plan.warn_client_saturation
        && matches!(
            plan.workload,
            W::Cpu(_) | W::Memory(_) | W::Threads(_) | W::Mutex(_)
        )
}

/// One warning line per saturated host (agents sharing a host: one line naming them).
pub fn warnings(s: &[HostSummary]) -> Vec<String> {
    let mut hosts: Vec<(&str, Vec<&HostSummary>)> = Vec::new();
    for h in s.iter().filter(|h| !h.saturated.is_empty()) {
        match hosts.iter_mut().find(|(name, _)| *name == h.host) {
            Some((_, v)) => v.push(h),
            None => hosts.push((&h.host, vec![h])),
        }
    }
    hosts
        .into_iter()
        .map(|(name, v)| {
            // The agent that saw the most saturated intervals speaks for its host.
            let h = v
                .iter()
                .max_by_key(|h| h.saturated.len())
                .expect("a host has an agent");
            let who = match (v.len(), h.addr == name) {
                (1, true) => format!("agent {}: its host", h.agent),
                (1, false) => format!("agent {}: its host {name}", h.agent),
                _ => {
                    let agents: Vec<&str> = v.iter().map(|h| h.agent.as_str()).collect();
                    format!("agents {}: their host {name}", agents.join(", "))
                }
            };
            format!(
                "WARNING: {who} was saturated (CPU busy {:.0} % at peak, run queue {} on {} cores) in {} of {} intervals ({}): these figures may measure the client, not the server",
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

/// The saturated hosts of a run as named in a sweep's summary line: "vm" or
/// "10.0.0.1:7600"; empty for none, or for a test that measures the client.
pub fn saturated_hosts(plan: &crate::plan::Plan, r: &crate::merge::RunResult) -> Vec<String> {
    if measures_the_client(plan) {
        return Vec::new();
    }
    let mut s = summarize(&r.hosts, plan.tick());
    name_hosts(&mut s, &agent_names(r));
    let mut out: Vec<String> = Vec::new();
    for h in s.iter().filter(|h| !h.saturated.is_empty()) {
        if !out.contains(&h.host) {
            out.push(h.host.clone());
        }
    }
    out
}

/// Each agent's address, host name and name in reports.
pub fn agent_names(r: &crate::merge::RunResult) -> Vec<(String, String, String)> {
    r.agents
        .iter()
        .map(|a| (a.addr.clone(), a.host.clone(), a.name.clone()))
        .collect()
}

/// A run's warnings, none for a test that measures the client.
pub fn run_warnings(plan: &crate::plan::Plan, r: &crate::merge::RunResult) -> Vec<String> {
    if measures_the_client(plan) {
        return Vec::new();
    }
    let mut s = summarize(&r.hosts, plan.tick());
    name_hosts(&mut s, &agent_names(r));
    capped_warnings(&s)
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
/// agent, or past `listed` agents one summary line, as the per-agent block condenses. A
/// `fileio` run adds its disks, or says once that there are none.
pub fn block(s: &[HostSummary], listed: usize, fileio: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let note = if fileio { no_disk_note(s) } else { None };
    let disks = fileio && s.iter().any(|h| h.disk.is_some());
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
        let d: Vec<DiskSummary> = s.iter().filter_map(|h| h.disk).collect();
        if disks {
            let _ = writeln!(
                out,
                "    {} disks: util {:.1} % on average, {:.1} % at the busiest; queue depth {:.2} at the deepest",
                d.len(),
                d.iter().map(|x| x.util_avg).sum::<f64>() / d.len() as f64,
                d.iter().map(|x| x.util_peak).fold(0.0, f64::max),
                d.iter().map(|x| x.queue_peak).fold(0.0, f64::max),
            );
        }
        if let Some(n) = &note {
            let _ = writeln!(out, "{n}");
        }
        for line in capped_warnings(s) {
            let _ = writeln!(out, "{line}");
        }
        return out;
    }
    let mut out = String::from(
        "\nClient hosts (avg/peak; run queue: peak/cores; memory: peak/total; net: loopback left out):\n",
    );
    let mut head = format!(
        "    {:<21} {:>14} {:>14} {:>11} {:>13} {:>17}",
        "agent", "cpu busy %", "agent cpu %", "run queue", "mem GiB", "net rx/tx MB/s"
    );
    if disks {
        let _ = write!(head, " {:>14} {:>14}", "disk util %", "disk queue");
    }
    let _ = writeln!(out, "{head}");
    for h in s {
        let mut line = format!(
            "    {:<21} {:>7.1}/{:<6.1} {:>7.1}/{:<6.1} {:>7}/{:<3} {:>6.1}/{:<6.1} {:>8.2}/{:<8.2}",
            h.agent,
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
        if disks {
            match h.disk {
                Some(d) => {
                    let _ = write!(
                        line,
                        " {:>7.1}/{:<6.1} {:>7.2}/{:<6.2}",
                        d.util_avg, d.util_peak, d.queue_avg, d.queue_peak
                    );
                }
                None => {
                    let _ = write!(line, " {:>14} {:>14}", "-", "-");
                }
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if let Some(n) = &note {
        let _ = writeln!(out, "{n}");
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
            disk: None,
        }
    }

    /// Agent `addr` with `figures` as its ticks 1, 2, ...
    fn host<const N: usize>(
        addr: &str,
        figures: [HostFigures; N],
    ) -> (String, Vec<(u32, HostFigures)>) {
        (addr.to_string(), (1..).zip(figures).collect())
    }

    #[test]
    fn averages_peaks_and_saturated_intervals() {
        let busy = [load(50.0, 1), load(95.0, 1), load(40.0, 5), load(30.0, 0)];
        let hosts = vec![host("10.0.0.1:7600", busy), host("10.0.0.2:7600", [])];
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
        assert!(block(&s, 20, false).contains("10.0.0.1:7600"));
        // The heading says what the columns' pairs are, and that loopback is not counted.
        assert!(
            block(&s, 20, false).contains(
                "Client hosts (avg/peak; run queue: peak/cores; memory: peak/total; net: loopback left out):"
            ),
            "{}",
            block(&s, 20, false)
        );
        assert!(block(&[], 20, false).is_empty());
        assert_eq!(h.disk, None);
        // Two agents on one host: one warning naming both.
        let mut two = vec![
            h.clone(),
            HostSummary {
                addr: "10.0.0.1:7601".into(),
                agent: "10.0.0.1:7601".into(),
                ..h.clone()
            },
        ];
        name_hosts(
            &mut two,
            &[
                ("10.0.0.1:7600".into(), "db-client".into(), String::new()),
                ("10.0.0.1:7601".into(), "db-client".into(), String::new()),
            ],
        );
        assert_eq!(
            warnings(&two),
            [
                "WARNING: agents 10.0.0.1:7600, 10.0.0.1:7601: their host db-client was saturated (CPU busy 95 % at peak, run queue 5 on 2 cores) in 2 of 4 intervals (2-3): these figures may measure the client, not the server"
            ]
        );
        // The client's CPU per transaction: agent CPU % of all cores, over the intervals.
        let mut a = h.clone();
        a.agent_cpu_s = 2.0;
        let mut b = a.clone();
        b.addr = "10.0.0.2:7600".into();
        b.agent_cpu_s = 1.0;
        let line = client_cpu_line(
            &[a, b],
            &[
                ("10.0.0.1:7600".into(), 10_000),
                ("10.0.0.2:7600".into(), 10_000),
            ],
        );
        assert_eq!(
            line,
            "Client CPU: 150.0 µs per transaction over the agents (6667 of them per client CPU second); 100.0-200.0 µs per agent\n"
        );
        assert_eq!(client_cpu_line(&two, &[]), "");
        // Past the listed number: one summary line, at most five warnings.
        let many: Vec<HostSummary> = (0..30)
            .map(|i| HostSummary {
                addr: format!("10.0.1.{i}:7600"),
                agent: format!("10.0.1.{i}:7600"),
                host: format!("10.0.1.{i}:7600"),
                ..h.clone()
            })
            .collect();
        let b = block(&many, 20, false);
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
    fn disks_are_averaged_and_their_absence_said_once() {
        use fleetbench_model::host::DiskFigures;
        let disk = |u: f64, q: f64| HostFigures {
            disk: Some(DiskFigures {
                util_pct: u,
                queue_depth: q,
            }),
            ..load(10.0, 0)
        };
        // An interval without the disk (a failed read) is left out of its figures.
        let with_disk = [disk(20.0, 1.0), disk(60.0, 3.0), load(10.0, 0)];
        let hosts = vec![
            host("10.0.0.1:7600", with_disk),
            host("10.0.0.2:7600", [load(10.0, 0)]),
        ];
        let s = summarize(&hosts, Duration::from_secs(1));
        let d = s[0].disk.unwrap();
        assert_eq!(
            (d.util_avg, d.util_peak, d.queue_avg, d.queue_peak),
            (40.0, 60.0, 2.0, 3.0)
        );
        assert_eq!(s[1].disk, None);
        let b = block(&s, 20, true);
        assert!(
            b.contains("disk util %") && b.contains("   40.0/60.0"),
            "{b}"
        );
        assert!(
            b.contains("disk figures: none for 10.0.0.2:7600 (work dir on a device without block statistics)"),
            "{b}"
        );
        // Not fileio: no disk columns, no note.
        assert!(!block(&s, 20, false).contains("disk"));
        let none = summarize(&hosts[1..], Duration::from_secs(1));
        let b = block(&none, 20, true);
        assert_eq!(b.matches(NO_DISK).count(), 1, "{b}");
        assert!(!b.contains("disk util %"), "{b}");
        assert_eq!(block(&none, 0, true).matches(NO_DISK).count(), 1);
    }

    #[test]
    fn host_facts_read_in_one_line() {
        let f = HostFacts {
            cores: 8,
            cpu_model: "Intel(R) Xeon(R) Gold 6230".into(),
            kernel: "6.1.0-18-amd64".into(),
            mem_total_bytes: 33_607_000_000,
        };
        assert_eq!(
            facts_line(&f),
            "8 cores, Intel(R) Xeon(R) Gold 6230, Linux 6.1.0-18-amd64, 31.3 GiB"
        );
        // An older agent says only its cores.
        let old = HostFacts {
            cores: 2,
            ..Default::default()
        };
        assert_eq!(facts_line(&old), "2 cores");
        assert_eq!(facts_line(&HostFacts::default()), "not reported");
        // Two agents on one host: one line.
        let b = facts_block(&[("c1", &f), ("c1", &f), ("c2", &old)], 20);
        assert_eq!(
            b,
            "Agent hosts:\n    c1: 8 cores, Intel(R) Xeon(R) Gold 6230, Linux 6.1.0-18-amd64, 31.3 GiB\n    c2: 2 cores\n"
        );
        // Past `listed` hosts: one line per kind of host, the commonest first.
        let names: Vec<String> = (0..5).map(|i| format!("c{i}")).collect();
        let many: Vec<(&str, &HostFacts)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), if i < 4 { &f } else { &old }))
            .collect();
        let b = facts_block(&many, 3);
        assert!(
            b.contains("    4 hosts: 8 cores, Intel") && b.contains("    1 host: 2 cores"),
            "{b}"
        );
        assert!(facts_block(&[], 3).is_empty());
        assert!(facts_block(&[("c1", &HostFacts::default())], 3).is_empty());
    }

    #[test]
    fn tick_ranges() {
        assert_eq!(ranges(&[7, 1, 2, 3, 5, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[]), "");
    }
}
