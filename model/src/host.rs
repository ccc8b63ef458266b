//! The client host's own load, sampled once per interval from /proc (no root needed): CPU
//! busy of the host and of this agent process, the run queue, memory in use, network
//! bytes and, for fileio, the utilisation and queue depth of the work directory's disk.
//! With them a report can tell when the client, not the server, was the bottleneck. Also
//! what the host is (CPU model, kernel, memory), read once for Hello.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// What this host is: read once, sent in Hello, so a result says which machines ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// Cores this process may run on.
    pub cores: u32,
    /// /proc/cpuinfo's first "model name", or "unknown".
    pub cpu_model: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// MemTotal (0 when unreadable).
    pub mem_total_bytes: u64,
}

impl HostFacts {
    /// This host's facts; what cannot be read is "unknown" (0 for memory).
    pub fn read() -> HostFacts {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| parse_cpu_model(&t))
            .unwrap_or_else(|| "unknown".into());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|k| !k.is_empty())
            .or_else(uname_release)
            .unwrap_or_else(|| "unknown".into());
        let mem_total_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| meminfo_kib(&t, "MemTotal:"))
            .unwrap_or(0);
        HostFacts {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            cpu_model,
            kernel,
            mem_total_bytes,
        }
    }
}

/// The first "model name" of /proc/cpuinfo, its spaces collapsed.
fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "model name")
        .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|v| !v.is_empty())
}

/// uname(2)'s release, where /proc/sys is not mounted.
fn uname_release() -> Option<String> {
    // SAFETY: utsname is plain bytes; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    let r = String::from_utf8_lossy(&bytes).trim().to_string();
    (!r.is_empty()).then_some(r)
}

/// A disk's figures over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskFigures {
    /// Share of the interval the device had I/O in flight (iostat's %util), 0..=100.
    pub util_pct: f64,
    /// Requests in flight on average (iostat's aqu-sz).
    pub queue_depth: f64,
}

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
    /// The disk under the work directory (fileio runs whose device has block statistics).
    pub disk: Option<DiskFigures>,
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
    /// The disk's (io_ticks, weighted time in queue), in milliseconds.
    disk: Option<(u64, u64)>,
}

/// Turns successive readings of /proc into per-interval figures.
pub struct HostSampler {
    prev: Option<Counters>,
    cores: u32,
    /// Clock ticks per second of /proc's jiffies.
    hz: f64,
    /// The block statistics file of the disk to watch, if any.
    disk_stat: Option<PathBuf>,
}

impl Default for HostSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl HostSampler {
    /// Takes the first reading; [`HostSampler::sample`] then gives what happened since.
    pub fn new() -> Self {
        Self::with_disk(None)
    }

    /// Like [`HostSampler::new`], also watching the disk that holds `dir` when its device
    /// has block statistics (see [`block_stat_path`]).
    pub fn with_disk(dir: Option<&Path>) -> Self {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let mut s = HostSampler {
            prev: None,
            cores,
            hz: if hz > 0 { hz as f64 } else { 100.0 },
            disk_stat: dir.and_then(block_stat_path),
        };
        s.prev = s.read();
        s
    }

    /// Whether a disk is watched.
    pub fn has_disk(&self) -> bool {
        self.disk_stat.is_some()
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
            disk: self
                .disk_stat
                .as_ref()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| parse_block_stat(&t)),
        })
    }
}

/// /sys/dev/block/MAJ:MIN/stat of the device holding `dir` (a whole disk or a partition),
/// or None where there is none to read: overlay, tmpfs, btrfs and other devices of major 0.
pub fn block_stat_path(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None;
    }
    let path = PathBuf::from(format!("/sys/dev/block/{major}:{minor}/stat"));
    let text = std::fs::read_to_string(&path).ok()?;
    parse_block_stat(&text).map(|_| path)
}

/// (io_ticks, time_in_queue) in milliseconds: fields 10 and 11 of a block stat line.
fn parse_block_stat(text: &str) -> Option<(u64, u64)> {
    let f: Vec<&str> = text.split_whitespace().collect();
    Some((f.get(9)?.parse().ok()?, f.get(10)?.parse().ok()?))
}

/// The disk's figures between two readings `secs` apart.
fn disk_figures(prev: (u64, u64), now: (u64, u64), secs: f64) -> DiskFigures {
    let ms = secs * 1000.0;
    if ms <= 0.0 {
        return DiskFigures::default();
    }
    let busy = now.0.saturating_sub(prev.0) as f64;
    let queued = now.1.saturating_sub(prev.1) as f64;
    DiskFigures {
        // Ticks and the clock are read a moment apart: a busy disk may read a little over.
        util_pct: (100.0 * busy / ms).min(100.0),
        queue_depth: queued / ms,
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
        disk: match (prev.disk, now.disk) {
            (Some(a), Some(b)) => Some(disk_figures(a, b, secs)),
            _ => None,
        },
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
pub(crate) fn parse_own_jiffies(stat: &str) -> Option<u64> {
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
pub(crate) fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    Some((
        meminfo_kib(text, "MemTotal:")?,
        meminfo_kib(text, "MemAvailable:")?,
    ))
}

/// One /proc/meminfo line's value (`key` with its colon), in bytes.
fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|k| k * 1024)
}

/// Bytes received and sent over every interface but loopback.
pub(crate) fn parse_net_dev(text: &str) -> (u64, u64) {
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
        let at = |cpu, own, net, disk| Counters {
            at: t0,
            cpu,
            own,
            net,
            disk: Some(disk),
        };
        let prev = at((1_000, 10_000), 500, (0, 0), (10_000, 50_000));
        let now = at((1_180, 10_200), 600, (4_000, 1_000), (11_500, 53_000));
        // 2 s on 2 cores at 100 jiffies/s: 400 jiffies of capacity, the agent used 100.
        let f = figures(&prev, &now, 2.0, 100.0, 2, Some((8 << 30, 6 << 30)), 3);
        assert!((f.cpu_busy_pct - 90.0).abs() < 1e-9, "{f:?}");
        assert!((f.agent_cpu_pct - 25.0).abs() < 1e-9, "{f:?}");
        assert_eq!((f.run_queue, f.cores), (3, 2));
        assert_eq!((f.mem_used_bytes, f.mem_total_bytes), (2 << 30, 8 << 30));
        assert_eq!((f.net_rx_bytes, f.net_tx_bytes), (4_000, 1_000));
        // 1,500 of 2,000 ms busy, 3,000 ms of weighted queue time over 2,000 ms.
        let d = f.disk.expect("both readings had the disk");
        assert!((d.util_pct - 75.0).abs() < 1e-9, "{d:?}");
        assert!((d.queue_depth - 1.5).abs() < 1e-9, "{d:?}");
        let unwatched = Counters { disk: None, ..now };
        assert_eq!(
            figures(&prev, &unwatched, 2.0, 100.0, 2, None, 0).disk,
            None
        );
    }

    #[test]
    fn host_facts_and_block_stat_parse() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  CPU E5-2680 v4 @ 2.40GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: Other\n";
        assert_eq!(
            parse_cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz")
        );
        // ARM's cpuinfo has no model name: the caller says "unknown".
        assert_eq!(parse_cpu_model("processor\t: 0\nBogoMIPS\t: 50.00\n"), None);
        let mem = "MemTotal:       32812345 kB\nMemFree:  100 kB\n";
        assert_eq!(meminfo_kib(mem, "MemTotal:"), Some(32_812_345 * 1024));
        assert_eq!(meminfo_kib(mem, "MemAvailable:"), None);
        // A disk and a partition (both have 11 fields or more); io_ticks and time in queue
        // are fields 10 and 11.
        let disk = "   12345      678   987654    4321    23456      789  1234567    8765        3     9876    13086        0        0        0        0        5       67\n";
        assert_eq!(parse_block_stat(disk), Some((9876, 13086)));
        let part = "  100 0 800 50 200 0 1600 70 0 120 120\n";
        assert_eq!(parse_block_stat(part), Some((120, 120)));
        assert_eq!(parse_block_stat("1 2 3 4\n"), None);
        let d = disk_figures((1_000, 2_000), (1_900, 5_000), 1.0);
        assert!((d.util_pct - 90.0).abs() < 1e-9 && (d.queue_depth - 3.0).abs() < 1e-9);
        // A reading a little late: never over 100 %.
        assert_eq!(disk_figures((0, 0), (1_010, 0), 1.0).util_pct, 100.0);
        assert_eq!(disk_figures((5, 5), (5, 5), 0.0), DiskFigures::default());
    }

    #[test]
    fn facts_and_disk_of_this_host() {
        let f = HostFacts::read();
        assert!(!f.kernel.is_empty() && !f.cpu_model.is_empty(), "{f:?}");
        assert!(f.mem_total_bytes > 0 && f.cores >= 1, "{f:?}");
        // No block device behind /proc; whatever holds the current directory may have one.
        assert_eq!(block_stat_path(Path::new("/proc")), None);
        if let Some(p) = block_stat_path(Path::new(".")) {
            let mut s = HostSampler::with_disk(Some(Path::new(".")));
            assert!(s.has_disk(), "{}", p.display());
            std::thread::sleep(std::time::Duration::from_millis(20));
            let d = s.sample().and_then(|h| h.disk).expect("disk figures");
            assert!(
                (0.0..=100.0).contains(&d.util_pct) && d.queue_depth >= 0.0,
                "{d:?}"
            );
        }
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
