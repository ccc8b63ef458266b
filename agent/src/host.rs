//! The client host's own load, sampled once per interval from /proc (no root needed): CPU
//! busy of the host and of this agent process, the run queue, memory in use and network
//! bytes. With them a report can tell when the client, not the server, was the bottleneck.

use std::time::Instant;

/// One interval's figures of this host.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostFigures {
    /// Share of all cores' time spent busy (not idle, iowait or stolen), 0..=100.
    pub cpu_busy_pct: f64,
    /// This process's CPU time over the interval, as a share of all cores, 0..=100.
    pub agent_cpu_pct: f64,
    /// Runnable tasks at the interval's end (the reading thread not counted).
    pub run_queue: u32,
    pub cores: u32,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    /// Bytes received and sent over the interval on every interface but loopback.
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
}

/// Cumulative counters read at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counters {
    at: Instant,
    /// (busy, total) jiffies over all cores.
    cpu: (u64, u64),
    /// This process's user + system jiffies.
    own: u64,
    net: (u64, u64),
}

/// Turns successive readings of /proc into per-interval figures.
pub struct HostSampler {
    prev: Option<Counters>,
    cores: u32,
    /// Clock ticks per second of /proc's jiffies.
    hz: f64,
}

impl Default for HostSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl HostSampler {
    /// Takes the first reading; [`HostSampler::sample`] then gives what happened since.
    pub fn new() -> Self {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let mut s = HostSampler {
            prev: None,
            cores,
            hz: if hz > 0 { hz as f64 } else { 100.0 },
        };
        s.prev = s.read();
        s
    }

    /// The figures since the last call (None where /proc cannot be read: not Linux).
    pub fn sample(&mut self) -> Option<HostFigures> {
        let now = self.read()?;
        let prev = self.prev.replace(now)?;
        let mem = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| parse_meminfo(&t));
        let run_queue = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| parse_running(&t))
            .unwrap_or(0);
        let secs = now.at.duration_since(prev.at).as_secs_f64();
        Some(figures(
            &prev, &now, secs, self.hz, self.cores, mem, run_queue,
        ))
    }

    fn read(&self) -> Option<Counters> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        let net = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
        Some(Counters {
            at: Instant::now(),
            cpu: parse_cpu(&stat)?,
            own: parse_own_jiffies(&own)?,
            net: parse_net_dev(&net),
        })
    }
}

/// The figures between two readings `secs` apart.
fn figures(
    prev: &Counters,
    now: &Counters,
    secs: f64,
    hz: f64,
    cores: u32,
    mem: Option<(u64, u64)>,
    running: u32,
) -> HostFigures {
    let busy = now.cpu.0.saturating_sub(prev.cpu.0) as f64;
    let total = now.cpu.1.saturating_sub(prev.cpu.1) as f64;
    let own = now.own.saturating_sub(prev.own) as f64 / hz;
    let capacity = secs * f64::from(cores.max(1));
    let (mem_total, mem_available) = mem.unwrap_or((0, 0));
    HostFigures {
        cpu_busy_pct: if total > 0.0 {
            100.0 * busy / total
        } else {
            0.0
        },
        agent_cpu_pct: if capacity > 0.0 {
            (100.0 * own / capacity).min(100.0)
        } else {
            0.0
        },
        run_queue: running,
        cores,
        mem_used_bytes: mem_total.saturating_sub(mem_available),
        mem_total_bytes: mem_total,
        net_rx_bytes: now.net.0.saturating_sub(prev.net.0),
        net_tx_bytes: now.net.1.saturating_sub(prev.net.1),
    }
}

/// (busy, total) jiffies from /proc/stat's first `cpu` line; idle and iowait are not busy.
fn parse_cpu(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    if v.len() < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest is inside user already). Time a
    // hypervisor stole went to other guests: not this host's work, so not busy.
    let total: u64 = v.iter().take(8).sum();
    let not_busy = v[3] + v.get(4).copied().unwrap_or(0) + v.get(7).copied().unwrap_or(0);
    Some((total.saturating_sub(not_busy), total))
}

/// utime + stime of /proc/self/stat (fields 14 and 15, counted after the command's
/// closing parenthesis, which may itself hold spaces).
fn parse_own_jiffies(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Runnable tasks from /proc/loadavg's fourth field (`running/total`), less the reader.
fn parse_running(loadavg: &str) -> Option<u32> {
    let field = loadavg.split_whitespace().nth(3)?;
    let running: u32 = field.split('/').next()?.parse().ok()?;
    Some(running.saturating_sub(1))
}

/// (MemTotal, MemAvailable) in bytes.
fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    let kib = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))?
            .split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    };
    Some((kib("MemTotal:")?, kib("MemAvailable:")?))
}

/// Bytes received and sent over every interface but loopback.
fn parse_net_dev(text: &str) -> (u64, u64) {
    let mut rx = 0u64;
    let mut tx = 0u64;
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.trim() == "lo" {
            continue;
        }
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if v.len() >= 9 {
            rx = rx.saturating_add(v[0]);
            tx = tx.saturating_add(v[8]);
        }
    }
    (rx, tx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        let stat = "cpu  100 5 50 800 40 3 2 10 0 0\ncpu0 50 2 25 400 20 1 1 5 0 0\n";
        assert_eq!(parse_cpu(stat), Some((160, 1010)));
        let own = "4242 (fleet bench) S 1 4242 4242 0 -1 4194560 900 0 0 0 37 12 0 0 20 0 9 0";
        assert_eq!(parse_own_jiffies(own), Some(49));
        assert_eq!(parse_running("0.52 0.58 0.59 3/467 12345\n"), Some(2));
        let mem = "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(
            parse_meminfo(mem),
            Some((16_000_000 * 1024, 12_000_000 * 1024))
        );
        let net = "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes\n    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n  eth1: 5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n";
        assert_eq!(parse_net_dev(net), (1005, 2007));
    }

    #[test]
    fn figures_are_shares_of_the_interval() {
        let t0 = Instant::now();
        let prev = Counters {
            at: t0,
            cpu: (1_000, 10_000),
            own: 500,
            net: (0, 0),
        };
        let now = Counters {
            at: t0,
            cpu: (1_180, 10_200),
            own: 600,
            net: (4_000, 1_000),
        };
        // 2 s on 2 cores at 100 jiffies/s: 400 jiffies of capacity, the agent used 100.
        let f = figures(&prev, &now, 2.0, 100.0, 2, Some((8 << 30, 6 << 30)), 3);
        assert!((f.cpu_busy_pct - 90.0).abs() < 1e-9, "{f:?}");
        assert!((f.agent_cpu_pct - 25.0).abs() < 1e-9, "{f:?}");
        assert_eq!((f.run_queue, f.cores), (3, 2));
        assert_eq!((f.mem_used_bytes, f.mem_total_bytes), (2 << 30, 8 << 30));
        assert_eq!((f.net_rx_bytes, f.net_tx_bytes), (4_000, 1_000));
    }

    #[test]
    fn a_live_sample_reads_this_host() {
        let mut s = HostSampler::new();
        // Burn a little CPU so the agent's own share is above zero.
        let mut x = 0u64;
        let end = Instant::now() + std::time::Duration::from_millis(50);
        while Instant::now() < end {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let f = s.sample().expect("Linux /proc");
        assert!((0.0..=100.0).contains(&f.cpu_busy_pct), "{f:?}");
        assert!(
            f.agent_cpu_pct > 0.0 && f.cores >= 1 && f.mem_total_bytes > 0,
            "{f:?}"
        );
    }
}
