//! A database server's host as an observer agent sees it, once per interval, from /proc and
//! /sys (no root needed): CPU busy split into user, system, iowait and steal; the server
//! process's own CPU (every process of its name: PostgreSQL's backends included); the
//! block devices' reads, writes, kilobytes, utilisation and average wait; network bytes;
//! memory; context switches. Parsing is pure, beside its tests; reading is thin around it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::host::{block_stat_path, parse_meminfo, parse_net_dev, parse_own_jiffies};

/// The server processes looked for when none is named: MariaDB, MySQL, PostgreSQL, and a
/// Java proxy (Mycat, ShardingSphere-Proxy).
pub const DEFAULT_PROCESSES: [&str; 4] = ["mariadbd", "mysqld", "postgres", "java"];

/// Where the host's CPU time went over an interval, each a share of all cores, 0..=100.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuSplit {
    /// user + nice.
    pub user_pct: f64,
    /// system + irq + softirq.
    pub system_pct: f64,
    pub iowait_pct: f64,
    /// Taken by the hypervisor for other guests.
    pub steal_pct: f64,
}

impl CpuSplit {
    pub fn busy_pct(&self) -> f64 {
        self.user_pct + self.system_pct
    }
}

/// The block devices' work over an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskIo {
    pub reads: u64,
    pub writes: u64,
    pub read_kb: u64,
    pub write_kb: u64,
    /// The busiest device's share of the interval with I/O in flight, 0..=100.
    pub util_pct: f64,
    /// Average time a request took, queue included (iostat's await), in ms.
    pub await_ms: f64,
}

/// One interval of a server's host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerHostFigures {
    pub secs: f64,
    pub cores: u32,
    pub cpu: CpuSplit,
    /// CPU seconds the server's processes used; None when no process matched.
    pub process_cpu_s: Option<f64>,
    /// How many processes matched at the interval's end.
    pub processes: u32,
    /// None where no device has block statistics (overlay, tmpfs).
    pub disk: Option<DiskIo>,
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    pub context_switches: u64,
}

/// Which processes are the server's: by name (`/proc/PID/comm`), or the process whose id
/// a pid file holds and its children.
#[derive(Debug, Clone, PartialEq)]
pub enum Processes {
    Named(Vec<String>),
    PidFile(PathBuf),
}

impl Processes {
    /// From `--observe-process`: a path (it has a `/`) is a pid file, anything else names;
    /// none given means [`DEFAULT_PROCESSES`].
    pub fn from_option(given: &[String]) -> Processes {
        match given {
            [one] if one.contains('/') => Processes::PidFile(PathBuf::from(one)),
            [] => Processes::Named(DEFAULT_PROCESSES.iter().map(|s| s.to_string()).collect()),
            names => Processes::Named(names.to_vec()),
        }
    }
}

/// Cumulative counters at one moment.
#[derive(Debug, Clone, Default)]
struct Reading {
    /// /proc/stat's cpu line: user nice system idle iowait irq softirq steal.
    cpu: [u64; 8],
    ctxt: u64,
    /// Jiffies of each matched process.
    procs: BTreeMap<u32, u64>,
    /// Per device: the fields of its stat line.
    disks: Vec<[u64; 11]>,
    net: (u64, u64),
}

/// Turns successive readings into per-interval figures.
pub struct ServerHostSampler {
    processes: Processes,
    /// The block stat files watched: the directory's device, else every disk.
    disks: Vec<PathBuf>,
    hz: f64,
    cores: u32,
    prev: Option<(Instant, Reading)>,
}

impl ServerHostSampler {
    /// Watches `processes` and the device under `dir` (every disk when None or when the
    /// directory's device has no block statistics), and takes the first reading.
    pub fn new(processes: Processes, dir: Option<&Path>) -> ServerHostSampler {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let disks = match dir.and_then(block_stat_path) {
            Some(p) => vec![p],
            None => every_disk(),
        };
        let mut s = ServerHostSampler {
            processes,
            disks,
            hz: if hz > 0 { hz as f64 } else { 100.0 },
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            prev: None,
        };
        s.prev = s.read().map(|r| (Instant::now(), r));
        s
    }

    /// The figures since the last call; None where /proc cannot be read.
    pub fn sample(&mut self) -> Option<ServerHostFigures> {
        let now = (Instant::now(), self.read()?);
        let (at, prev) = self.prev.replace(now.clone())?;
        let secs = now.0.duration_since(at).as_secs_f64();
        let mem = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| parse_meminfo(&t))
            .unwrap_or((0, 0));
        let mut f = figures(&prev, &now.1, secs, self.hz, self.cores);
        (f.mem_total_bytes, f.mem_used_bytes) = (mem.0, mem.0.saturating_sub(mem.1));
        Some(f)
    }

    fn read(&self) -> Option<Reading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let (cpu, ctxt) = parse_stat(&stat)?;
        let disks = self
            .disks
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|t| parse_disk(&t))
            .collect();
        let net = parse_net_dev(&std::fs::read_to_string("/proc/net/dev").unwrap_or_default());
        Some(Reading {
            cpu,
            ctxt,
            procs: read_processes(&self.processes),
            disks,
            net,
        })
    }
}

/// Every whole disk's stat file: /sys/block's devices but loop, ram, zram, optical and
/// device-mapper ones (those count the same requests again).
fn every_disk() -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = dir
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            !["loop", "ram", "zram", "sr", "dm-"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .map(|n| PathBuf::from(format!("/sys/block/{n}/stat")))
        .collect();
    out.sort();
    out
}

/// The jiffies of the server's processes now, by pid.
fn read_processes(p: &Processes) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    let parent = match p {
        Processes::PidFile(f) => std::fs::read_to_string(f)
            .ok()
            .and_then(|t| t.lines().next()?.trim().parse::<u32>().ok()),
        Processes::Named(_) => None,
    };
    for e in dir.filter_map(Result::ok) {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ours = match p {
            Processes::Named(names) => std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| names.iter().any(|n| n == c.trim())),
            Processes::PidFile(_) => {
                parent.is_some_and(|pp| pid == pp || parent_of(&stat) == Some(pp))
            }
        };
        if ours && let Some(j) = parse_own_jiffies(&stat) {
            out.insert(pid, j);
        }
    }
    out
}

/// A /proc/PID/stat line's parent pid (field 4, after the command's closing parenthesis).
fn parent_of(stat: &str) -> Option<u32> {
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// /proc/stat's first cpu line (its eight first fields) and its context switches.
fn parse_stat(stat: &str) -> Option<([u64; 8], u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let mut cpu = [0u64; 8];
    for (i, v) in line.split_whitespace().skip(1).take(8).enumerate() {
        cpu[i] = v.parse().ok()?;
    }
    let ctxt = stat
        .lines()
        .find_map(|l| l.strip_prefix("ctxt "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Some((cpu, ctxt))
}

/// A block device's stat line: its first eleven fields.
fn parse_disk(text: &str) -> Option<[u64; 11]> {
    let mut f = [0u64; 11];
    let mut it = text.split_whitespace();
    for v in &mut f {
        *v = it.next()?.parse().ok()?;
    }
    Some(f)
}

/// The figures between two readings `secs` apart.
fn figures(prev: &Reading, now: &Reading, secs: f64, hz: f64, cores: u32) -> ServerHostFigures {
    let d = |i: usize| now.cpu[i].saturating_sub(prev.cpu[i]) as f64;
    let total: f64 = (0..8).map(d).sum();
    let pct = |v: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    let process_jiffies: u64 = now
        .procs
        .iter()
        .map(|(pid, j)| j.saturating_sub(prev.procs.get(pid).copied().unwrap_or(0)))
        .sum();
    ServerHostFigures {
        secs,
        cores,
        cpu: CpuSplit {
            user_pct: pct(d(0) + d(1)),
            system_pct: pct(d(2) + d(5) + d(6)),
            iowait_pct: pct(d(4)),
            steal_pct: pct(d(7)),
        },
        process_cpu_s: (!now.procs.is_empty()).then(|| process_jiffies as f64 / hz),
        processes: now.procs.len() as u32,
        disk: disk_io(&prev.disks, &now.disks, secs),
        net_rx_bytes: now.net.0.saturating_sub(prev.net.0),
        net_tx_bytes: now.net.1.saturating_sub(prev.net.1),
        mem_used_bytes: 0,
        mem_total_bytes: 0,
        context_switches: now.ctxt.saturating_sub(prev.ctxt),
    }
}

/// The devices' work between two readings (the same devices in the same order).
fn disk_io(prev: &[[u64; 11]], now: &[[u64; 11]], secs: f64) -> Option<DiskIo> {
    if now.is_empty() || prev.len() != now.len() {
        return None;
    }
    let mut io = DiskIo::default();
    let mut ticks = 0u64;
    for (a, b) in prev.iter().zip(now) {
        let d = |i: usize| b[i].saturating_sub(a[i]);
        io.reads += d(0);
        io.writes += d(4);
        // Sectors are 512 bytes whatever the device's own block size.
        io.read_kb += d(2) / 2;
        io.write_kb += d(6) / 2;
        ticks += d(3) + d(7);
        let util = if secs > 0.0 {
            100.0 * d(9) as f64 / (secs * 1000.0)
        } else {
            0.0
        };
        io.util_pct = io.util_pct.max(util.min(100.0));
    }
    let requests = io.reads + io.writes;
    io.await_ms = if requests > 0 {
        ticks as f64 / requests as f64
    } else {
        0.0
    };
    Some(io)
}

/// A sample as the wire carries it, tick `seq`.
pub fn to_proto(seq: u32, f: &ServerHostFigures) -> fleetbench_proto::v1::HostSample {
    let d = f.disk.unwrap_or_default();
    fleetbench_proto::v1::HostSample {
        seq,
        duration_ns: (f.secs * 1e9) as u64,
        cores: f.cores,
        cpu_user_pct: f.cpu.user_pct,
        cpu_system_pct: f.cpu.system_pct,
        cpu_iowait_pct: f.cpu.iowait_pct,
        cpu_steal_pct: f.cpu.steal_pct,
        has_process: f.process_cpu_s.is_some(),
        process_cpu_s: f.process_cpu_s.unwrap_or(0.0),
        processes: f.processes,
        has_disk: f.disk.is_some(),
        disk_reads: d.reads,
        disk_writes: d.writes,
        disk_read_kb: d.read_kb,
        disk_write_kb: d.write_kb,
        disk_util_pct: d.util_pct,
        disk_await_ms: d.await_ms,
        net_rx_bytes: f.net_rx_bytes,
        net_tx_bytes: f.net_tx_bytes,
        mem_used_bytes: f.mem_used_bytes,
        mem_total_bytes: f.mem_total_bytes,
        context_switches: f.context_switches,
    }
}

/// A sample off the wire: its tick and figures (what is not finite reads as zero).
pub fn from_proto(p: &fleetbench_proto::v1::HostSample) -> (u32, ServerHostFigures) {
    let fin = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let f = ServerHostFigures {
        secs: p.duration_ns as f64 / 1e9,
        cores: p.cores,
        cpu: CpuSplit {
            user_pct: fin(p.cpu_user_pct),
            system_pct: fin(p.cpu_system_pct),
            iowait_pct: fin(p.cpu_iowait_pct),
            steal_pct: fin(p.cpu_steal_pct),
        },
        process_cpu_s: p.has_process.then(|| fin(p.process_cpu_s)),
        processes: p.processes,
        disk: p.has_disk.then(|| DiskIo {
            reads: p.disk_reads,
            writes: p.disk_writes,
            read_kb: p.disk_read_kb,
            write_kb: p.disk_write_kb,
            util_pct: fin(p.disk_util_pct),
            await_ms: fin(p.disk_await_ms),
        }),
        net_rx_bytes: p.net_rx_bytes,
        net_tx_bytes: p.net_tx_bytes,
        mem_used_bytes: p.mem_used_bytes,
        mem_total_bytes: p.mem_total_bytes,
        context_switches: p.context_switches,
    };
    (p.seq, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_splits_into_user_system_iowait_and_steal() {
        let stat = |f: [u64; 8], ctxt: u64| {
            let v: Vec<String> = f.iter().map(u64::to_string).collect();
            format!("cpu  {}\ncpu0 1 2 3\nctxt {ctxt}\n", v.join(" "))
        };
        let (a, ca) = parse_stat(&stat([100, 0, 50, 800, 10, 0, 0, 0], 1000)).unwrap();
        let (b, cb) = parse_stat(&stat([160, 20, 70, 1000, 30, 5, 5, 10], 1600)).unwrap();
        let prev = Reading {
            cpu: a,
            ctxt: ca,
            ..Default::default()
        };
        let mut now = Reading {
            cpu: b,
            ctxt: cb,
            ..Default::default()
        };
        now.procs.insert(7, 250);
        now.procs.insert(9, 40);
        let mut prev_procs = prev.clone();
        prev_procs.procs.insert(7, 200);
        let f = figures(&prev_procs, &now, 1.0, 100.0, 4);
        // 340 jiffies in all: user 80, system 30, iowait 20, steal 10, idle 200.
        let near = |x: f64, want: f64| (x - want).abs() < 1e-9;
        assert!(near(f.cpu.user_pct, 100.0 * 80.0 / 340.0), "{f:?}");
        assert!(near(f.cpu.system_pct, 100.0 * 30.0 / 340.0), "{f:?}");
        assert!(near(f.cpu.iowait_pct, 100.0 * 20.0 / 340.0), "{f:?}");
        assert!(near(f.cpu.steal_pct, 100.0 * 10.0 / 340.0), "{f:?}");
        assert_eq!(f.context_switches, 600);
        // Process 7 grew by 50 jiffies, process 9 is new with 40: 0.9 s at 100 Hz.
        assert_eq!(f.process_cpu_s, Some(0.9));
        assert_eq!(f.processes, 2);
        // No process matched: no figure rather than zero.
        assert_eq!(
            figures(&prev, &Reading::default(), 1.0, 100.0, 4).process_cpu_s,
            None
        );
    }

    #[test]
    fn disks_add_up_and_the_busiest_gives_the_utilisation() {
        let line = |f: [u64; 11]| {
            let v: Vec<String> = f.iter().map(u64::to_string).collect();
            parse_disk(&format!("   {}  0 0 0 0\n", v.join(" "))).unwrap()
        };
        let a = [line([0; 11]), line([0; 11])];
        let b = [
            line([10, 0, 80, 30, 5, 0, 40, 20, 0, 500, 0]),
            line([0, 0, 0, 0, 5, 0, 2048, 50, 0, 100, 0]),
        ];
        let io = disk_io(&a, &b, 1.0).unwrap();
        assert_eq!(
            (io.reads, io.writes, io.read_kb, io.write_kb),
            (10, 10, 40, 1044)
        );
        assert_eq!(io.util_pct, 50.0);
        assert_eq!(io.await_ms, 5.0);
        assert_eq!(disk_io(&[], &[], 1.0), None);
    }

    #[test]
    fn a_pid_file_or_names_choose_the_processes() {
        assert_eq!(
            Processes::from_option(&["/run/mysqld/mysqld.pid".into()]),
            Processes::PidFile("/run/mysqld/mysqld.pid".into())
        );
        assert_eq!(
            Processes::from_option(&[]),
            Processes::Named(DEFAULT_PROCESSES.iter().map(|s| s.to_string()).collect())
        );
        assert_eq!(parent_of("12 (my (odd) name) S 34 12 12"), Some(34));
    }

    #[test]
    fn a_sample_crosses_the_wire_unchanged() {
        let f = ServerHostFigures {
            secs: 1.5,
            cores: 8,
            cpu: CpuSplit {
                user_pct: 40.0,
                system_pct: 10.0,
                iowait_pct: 2.5,
                steal_pct: 0.5,
            },
            process_cpu_s: Some(3.25),
            processes: 12,
            disk: Some(DiskIo {
                reads: 5,
                writes: 9,
                read_kb: 80,
                write_kb: 144,
                util_pct: 12.5,
                await_ms: 0.75,
            }),
            net_rx_bytes: 1000,
            net_tx_bytes: 2000,
            mem_used_bytes: 3 << 30,
            mem_total_bytes: 8 << 30,
            context_switches: 4000,
        };
        assert_eq!(from_proto(&to_proto(7, &f)), (7, f.clone()));
        let none = ServerHostFigures {
            process_cpu_s: None,
            disk: None,
            ..f
        };
        assert_eq!(from_proto(&to_proto(1, &none)).1, none);
    }

    #[test]
    fn this_host_reads() {
        // The test process itself, by its pid file of sorts: its own pid.
        let dir = std::env::temp_dir().join(format!("fb-server-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("pid");
        std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
        let mut s = ServerHostSampler::new(Processes::PidFile(pidfile), Some(&dir));
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert_ne!(x, 1);
        let f = s.sample().expect("/proc reads on Linux");
        assert_eq!(f.processes, 1);
        assert!(f.process_cpu_s.is_some());
        assert!(f.cores >= 1 && f.mem_total_bytes > 0, "{f:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
