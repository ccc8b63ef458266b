//! The database servers' own figures over a run: the status changes the agents read once
//! per interval (`SHOW GLOBAL STATUS`, `pg_stat_database`), lined up with the load of the
//! same intervals, and what each transaction cost the server (rows read and written, reads
//! from storage, log bytes, statements). Pure arithmetic, beside its tests.
//!
//! A target's transactions in an interval are the interval's events when the run has one
//! target; with several, each gets the events in the share of the statements it received
//! (exact when each event's statements go to one target and the mix is fixed, as in
//! sysbench's tests). Intervals without figures (a late or failed read, a restart) are left
//! out of both sides of every ratio, so a gap never shows as zero.

use std::collections::BTreeMap;

use fleetbench_model::server_status::{MYSQL_GAUGES, PG_GAUGES};
use fleetbench_model::workloads::server::Driver;
use serde::{Deserialize, Serialize};

use crate::merge::{MergedInterval, RunResult};
pub use crate::server_ticks::{ObservedHost, ServerTick};

/// What one transaction cost the server, each figure where the server counts it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerTx {
    /// Rows the server read (InnoDB rows read, MariaDB's Rows_read; PostgreSQL tuples
    /// returned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_read: Option<f64>,
    /// Rows inserted, updated and deleted (InnoDB's counts; MariaDB's Handler_write,
    /// _update and _delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_written: Option<f64>,
    /// Pages read from storage because the cache did not hold them (InnoDB buffer-pool
    /// misses; PostgreSQL blks_read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_reads: Option<f64>,
    /// Bytes written to the redo log or WAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_bytes: Option<f64>,
    /// Statements the server received (MySQL's Questions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<f64>,
    /// The server host's busy CPU in microseconds, as its first observer (in `--observe`
    /// order) with figures saw it; the other observers' are in `hosts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<f64>,
    /// Reads from the block devices under the server's data, from the same observer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_reads: Option<f64>,
    /// Kilobytes written to those devices, from the same observer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_write_kb: Option<f64>,
}

impl PerTx {
    /// Takes the host figures from the first of `hosts` (cpu, disk reads, disk KB written
    /// per transaction) that has them.
    pub fn with_host(&mut self, hosts: impl IntoIterator<Item = [Option<f64>; 3]>) {
        if let Some([cpu, reads, kb]) = hosts.into_iter().find(|h| h[0].is_some()) {
            (self.cpu_us, self.disk_reads, self.disk_write_kb) = (cpu, reads, kb);
        }
    }
}

/// A server's figures over the run (or one interval): its counters' changes summed over
/// the intervals that have them, and what they make per transaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerJson {
    /// Where the figures come from: "SHOW GLOBAL STATUS" or "pg_stat_database".
    pub source: String,
    /// The target's transactions over the intervals with figures.
    pub transactions: u64,
    /// Intervals with figures, and without.
    pub intervals: u32,
    pub missing_intervals: u32,
    pub per_tx: PerTx,
    /// Reads that missed the cache per 1,000 logical reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_misses_per_1000: Option<f64>,
    /// Where the server has a query cache in use: the share of SELECTs it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_cache_hit_pct: Option<f64>,
    /// Statements running at each reading, averaged (Threads_running; active backends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_running_avg: Option<f64>,
    /// The counters' changes, by the server's names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    /// Why intervals have no figures, each reason once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the reading could not get and how to give it (a privilege, its GRANT).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What observer agents on the server's host saw (`--observe`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostJson>,
    /// A replica's lag over the run (`--replica`), in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_lag_s: Option<crate::replication::LagJson>,
}

/// A server's host as an observer agent saw it over the run, per transaction where the
/// figure is work done for the load (the target's transactions of the same intervals).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostJson {
    /// The observer agent.
    pub addr: String,
    /// Intervals with a sample, and the run's intervals without one.
    pub intervals: u32,
    pub missing_intervals: u32,
    /// The target's transactions over the intervals with a sample.
    #[serde(default)]
    pub transactions: u64,
    /// The host's busy CPU (user and system) per transaction, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_tx: Option<f64>,
    /// The server processes' own CPU per transaction, in µs (absent when none matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpu_us_per_tx: Option<f64>,
    /// Block device reads and kilobytes written per transaction (absent without block
    /// statistics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_reads_per_tx: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_write_kb_per_tx: Option<f64>,
    /// Averages over the samples, shares of all cores.
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_steal_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_util_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_await_ms: Option<f64>,
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    pub context_switches_per_tx: Option<f64>,
    /// The server processes found at the last sample.
    pub processes: u32,
    /// Why it observed nothing, or stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One server's figures in one interval of the JSON's series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalServer {
    /// The target's name.
    pub target: String,
    pub transactions: u64,
    pub per_tx: PerTx,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_misses_per_1000: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_running: Option<f64>,
    /// Why this interval has no figures (the rest is then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// What the observers of the server's host saw in this interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<IntervalHost>,
    /// A replica's lag at the interval's end, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_lag_s: Option<f64>,
}

/// An observed host in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalHost {
    pub addr: String,
    pub cpu_busy_pct: f64,
    pub cpu_iowait_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_tx: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpu_us_per_tx: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_util_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_reads_per_tx: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_write_kb_per_tx: Option<f64>,
}

/// The status source a driver's figures come from.
pub fn source(driver: Driver) -> &'static str {
    match driver {
        Driver::Mysql => "SHOW GLOBAL STATUS",
        Driver::Pgsql => "pg_stat_database",
    }
}

fn gauges(driver: Driver) -> &'static [&'static str] {
    match driver {
        Driver::Mysql => &MYSQL_GAUGES,
        Driver::Pgsql => &PG_GAUGES,
    }
}

/// `n` per transaction, where the server counts `n` (some name of `names` is present).
fn per(c: &BTreeMap<String, u64>, names: &[&str], tx: u64) -> Option<f64> {
    if tx == 0 || !names.iter().any(|n| c.contains_key(*n)) {
        return None;
    }
    let n: u64 = names.iter().filter_map(|k| c.get(*k)).sum();
    Some(n as f64 / tx as f64)
}

const INNODB_WRITES: [&str; 3] = [
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
];
const HANDLER_WRITES: [&str; 3] = ["Handler_write", "Handler_update", "Handler_delete"];

/// What `tx` transactions cost a server whose counters changed by `c`.
pub fn per_tx(driver: Driver, c: &BTreeMap<String, u64>, tx: u64) -> PerTx {
    match driver {
        // InnoDB's row counts where the server has them (MySQL), else MariaDB's own.
        Driver::Mysql => PerTx {
            rows_read: per(c, &["Innodb_rows_read"], tx).or_else(|| per(c, &["Rows_read"], tx)),
            rows_written: per(c, &INNODB_WRITES, tx).or_else(|| per(c, &HANDLER_WRITES, tx)),
            server_reads: per(c, &["Innodb_buffer_pool_reads"], tx),
            log_bytes: per(c, &["Innodb_os_log_written"], tx),
            statements: per(c, &["Questions"], tx),
            ..PerTx::default()
        },
        Driver::Pgsql => PerTx {
            rows_read: per(c, &["tup_returned"], tx),
            rows_written: per(c, &["tup_inserted", "tup_updated", "tup_deleted"], tx),
            server_reads: per(c, &["blks_read"], tx),
            log_bytes: per(c, &["wal_bytes"], tx),
            ..PerTx::default()
        },
    }
}

/// Reads that missed the cache per 1,000 logical reads (None without reads).
pub fn read_misses_per_1000(driver: Driver, c: &BTreeMap<String, u64>) -> Option<f64> {
    let get = |k: &str| c.get(k).copied();
    let (misses, all) = match driver {
        Driver::Mysql => (
            get("Innodb_buffer_pool_reads")?,
            get("Innodb_buffer_pool_read_requests")?,
        ),
        Driver::Pgsql => {
            let read = get("blks_read")?;
            (read, read + get("blks_hit")?)
        }
    };
    (all > 0).then(|| 1000.0 * misses as f64 / all as f64)
}

/// The share of SELECTs the query cache answered, where one is in use (MySQL/MariaDB).
pub fn query_cache_hit_pct(c: &BTreeMap<String, u64>) -> Option<f64> {
    let get = |k: &str| c.get(k).copied().unwrap_or(0);
    let used = get("Qcache_hits") + get("Qcache_inserts") + get("Qcache_not_cached");
    let all = get("Qcache_hits") + get("Com_select");
    (used > 0 && all > 0).then(|| 100.0 * get("Qcache_hits") as f64 / all as f64)
}

/// Target `target`'s transactions in interval `iv` of a run with `targets` targets.
pub fn target_transactions(iv: &MergedInterval, target: usize, targets: usize) -> u64 {
    if targets <= 1 || iv.targets.is_empty() {
        return iv.events;
    }
    let stmts = |d: &crate::merge::DbCounters| d.reads + d.writes + d.others;
    let all: u64 = iv.targets.iter().map(|(_, d)| stmts(d)).sum();
    let mine: u64 = iv
        .targets
        .iter()
        .filter(|(i, _)| *i == target)
        .map(|(_, d)| stmts(d))
        .sum();
    if all == 0 {
        return 0;
    }
    (iv.events as f64 * mine as f64 / all as f64).round() as u64
}

/// The per-transaction figures `compare` weighs, by the name its rows show (lower is
/// better for each).
pub const COMPARED: [&str; 5] = [
    "server rows read/tx",
    "server rows written/tx",
    "server disk reads/tx",
    "server log KB/tx",
    "server stmts/tx",
];

impl PerTx {
    /// The figures in [`COMPARED`]'s order.
    fn compared(&self) -> [Option<f64>; 5] {
        [
            self.rows_read,
            self.rows_written,
            self.server_reads,
            self.log_bytes.map(|b| b / 1024.0),
            self.statements,
        ]
    }
}

/// What `compare` weighs of the observed hosts, by the name its rows show.
pub const HOSTS_COMPARED: [&str; 2] = ["server host CPU µs/tx", "server process CPU µs/tx"];

/// The observed hosts' CPU per transaction of the run: their costs added up per
/// transaction, as [`fleet_per_tx`] does for the servers' counters; each host given with
/// its transactions and its (host, process) figures.
pub fn fleet_host_per_tx(parts: &[(u64, Option<f64>, Option<f64>)]) -> BTreeMap<String, f64> {
    let all: u64 = parts.iter().map(|(tx, _, _)| tx).sum();
    let mut out = BTreeMap::new();
    if all == 0 {
        return out;
    }
    let pick = [
        |p: &(u64, Option<f64>, Option<f64>)| p.1,
        |p: &(u64, Option<f64>, Option<f64>)| p.2,
    ];
    for (name, get) in HOSTS_COMPARED.iter().zip(pick) {
        let v: Vec<f64> = parts
            .iter()
            .filter_map(|p| get(p).map(|v| v * p.0 as f64))
            .collect();
        if !v.is_empty() {
            out.insert(name.to_string(), v.iter().sum::<f64>() / all as f64);
        }
    }
    out
}

/// The whole fleet's figures per transaction over several servers, each given with its
/// transactions: the servers' costs added up per transaction of the run (a sharded run's
/// transaction costs each shard its share). A figure no server counts is left out.
pub fn fleet_per_tx(parts: &[(u64, &PerTx)]) -> BTreeMap<String, f64> {
    let all: u64 = parts.iter().map(|(tx, _)| tx).sum();
    let mut out = BTreeMap::new();
    if all == 0 {
        return out;
    }
    for (k, name) in COMPARED.iter().enumerate() {
        let counted: Vec<f64> = parts
            .iter()
            .filter_map(|(tx, p)| p.compared()[k].map(|v| v * *tx as f64))
            .collect();
        if !counted.is_empty() {
            out.insert(name.to_string(), counted.iter().sum::<f64>() / all as f64);
        }
    }
    out
}

/// A server's figures over these ticks (one target's, any order), each paired with the
/// target's transactions in the same interval.
pub fn summarize(driver: Driver, ticks: &[(&ServerTick, u64)]) -> ServerJson {
    let gauges = gauges(driver);
    let mut out = ServerJson {
        source: source(driver).into(),
        ..Default::default()
    };
    let (mut gauge_sum, mut gauge_n) = (0u64, 0u32);
    for (t, tx) in ticks {
        if let Some(note) = &t.note
            && !out.warnings.contains(note)
        {
            out.warnings.push(note.clone());
        }
        if let Some(why) = &t.missing {
            out.missing_intervals += 1;
            if !out.notes.contains(why) {
                out.notes.push(why.clone());
            }
            continue;
        }
        out.intervals += 1;
        out.transactions += tx;
        for (k, v) in &t.values {
            if gauges.contains(&k.as_str()) {
                if k == gauges[0] {
                    gauge_sum += v;
                    gauge_n += 1;
                }
            } else {
                *out.counters.entry(k.clone()).or_default() += v;
            }
        }
    }
    out.per_tx = per_tx(driver, &out.counters, out.transactions);
    out.read_misses_per_1000 = read_misses_per_1000(driver, &out.counters);
    out.query_cache_hit_pct = query_cache_hit_pct(&out.counters);
    out.threads_running_avg = (gauge_n > 0).then(|| gauge_sum as f64 / f64::from(gauge_n));
    out
}

/// One tick of one server as the JSON's interval series shows it.
pub fn interval(driver: Driver, name: &str, t: &ServerTick, tx: u64) -> IntervalServer {
    if let Some(why) = &t.missing {
        return IntervalServer {
            target: name.into(),
            missing: Some(why.clone()),
            ..Default::default()
        };
    }
    IntervalServer {
        target: name.into(),
        transactions: tx,
        per_tx: per_tx(driver, &t.values, tx),
        read_misses_per_1000: read_misses_per_1000(driver, &t.values),
        threads_running: t.values.get(gauges(driver)[0]).map(|&v| v as f64),
        missing: None,
        hosts: Vec::new(),
        replica_lag_s: None,
    }
}

/// Target `target`'s ticks of run `r`, each with the target's transactions in the same
/// interval; a tick whose interval has no load figures (no agent delivered it) counts as
/// missing.
fn ticks_of(r: &RunResult, s: &Readable, loaded: usize) -> Vec<(ServerTick, u64)> {
    r.servers
        .iter()
        .filter(|t| t.target == s.index)
        .map(|t| match r.intervals.iter().find(|iv| iv.seq == t.seq) {
            Some(iv) => (t.clone(), target_transactions(iv, s.tx_of, loaded)),
            None => {
                let mut t = t.clone();
                t.missing
                    .get_or_insert_with(|| "no load figures for the interval".into());
                t.values.clear();
                (t, 0)
            }
        })
        .collect()
}

/// A server read each interval: a loaded target, or a replica read beside them.
#[derive(Debug, Clone, PartialEq)]
pub struct Readable {
    /// Its number among the servers read (the targets first, then the replicas).
    pub index: usize,
    pub name: String,
    pub driver: Driver,
    /// The loaded target whose transactions it serves: itself, or a replica's primary.
    pub tx_of: usize,
    /// A replica's primary (its index).
    pub primary: Option<usize>,
}

/// Server `s` over run `r` of `loaded` loaded targets; None when no agent read it.
pub fn over_run(r: &RunResult, s: &Readable, loaded: usize) -> Option<ServerJson> {
    let ticks = ticks_of(r, s, loaded);
    let pairs: Vec<(&ServerTick, u64)> = ticks.iter().map(|(t, tx)| (t, *tx)).collect();
    if pairs.is_empty() {
        return None;
    }
    let mut out = summarize(s.driver, &pairs);
    // A replica read beside the run is timed on its primary's clock too; a target that
    // turned out to be a replica has the lag it reports (no primary: usize::MAX).
    let primary = s.primary.unwrap_or(usize::MAX);
    out.replica_lag_s = crate::replication::summarize(&lag_of(r, s.index, primary));
    Some(out)
}

/// Replica `replica`'s lag interval by interval, against primary `primary`'s readings.
pub fn lag_of(r: &RunResult, replica: usize, primary: usize) -> Vec<(u32, Option<f64>)> {
    use crate::replication::{PrimaryReading, ReplicaReading, lag_series};
    use fleetbench_model::server_status::{
        PRIMARY_POSITION, REPLICA_LAG, REPLICA_POSITION, STANDBY_LAG,
    };
    let ends: BTreeMap<u32, f64> = r
        .intervals
        .iter()
        .map(|iv| (iv.seq, iv.end.as_secs_f64()))
        .collect();
    let end = |seq: u32| ends.get(&seq).copied();
    let mut prim: Vec<PrimaryReading> = r
        .servers
        .iter()
        .filter(|t| t.target == primary)
        .filter_map(|t| {
            Some(PrimaryReading {
                seq: t.seq,
                end_s: end(t.seq)?,
                position: *t.values.get(PRIMARY_POSITION)?,
            })
        })
        .collect();
    prim.sort_by_key(|p| p.seq);
    // A PostgreSQL primary's view of its standbys' replay lag, by tick.
    let standby: BTreeMap<u32, u64> = r
        .servers
        .iter()
        .filter(|t| t.target == primary)
        .filter_map(|t| Some((t.seq, *t.values.get(STANDBY_LAG)?)))
        .collect();
    let rep: Vec<ReplicaReading> = r
        .servers
        .iter()
        .filter(|t| t.target == replica && t.missing.is_none())
        .filter_map(|t| {
            Some(ReplicaReading {
                seq: t.seq,
                end_s: end(t.seq)?,
                lag_ms: t
                    .values
                    .get(REPLICA_LAG)
                    .copied()
                    .max(standby.get(&t.seq).copied()),
                position: t.values.get(REPLICA_POSITION).copied(),
            })
        })
        .collect();
    lag_series(&rep, &prim)
}

/// What the observers of target `target` (of `targets`) saw over run `r`.
pub fn observed(r: &RunResult, target: usize, targets: usize) -> Vec<HostJson> {
    r.observed
        .iter()
        .filter(|h| h.target == target)
        .map(|h| {
            let paired: Vec<(&fleetbench_model::server_host::ServerHostFigures, u64)> = h
                .samples
                .iter()
                .filter_map(|(seq, f)| {
                    let iv = r.intervals.iter().find(|iv| iv.seq == *seq)?;
                    Some((f, target_transactions(iv, target, targets)))
                })
                .collect();
            let mut j = host_json(&paired);
            j.addr = h.addr.clone();
            j.missing_intervals = (r.intervals.len() as u32).saturating_sub(j.intervals);
            j.error = h.error.clone();
            j
        })
        .collect()
}

/// A host's figures over these samples, each with the target's transactions in its interval.
pub fn host_json(samples: &[(&fleetbench_model::server_host::ServerHostFigures, u64)]) -> HostJson {
    let n = samples.len();
    let mut j = HostJson {
        intervals: n as u32,
        ..Default::default()
    };
    if n == 0 {
        return j;
    }
    let tx: u64 = samples.iter().map(|(_, t)| t).sum();
    j.transactions = tx;
    let sum = |f: &dyn Fn(&fleetbench_model::server_host::ServerHostFigures) -> f64| -> f64 {
        samples.iter().map(|(s, _)| f(s)).sum()
    };
    let avg =
        |f: &dyn Fn(&fleetbench_model::server_host::ServerHostFigures) -> f64| sum(f) / n as f64;
    let per_tx = |v: f64| (tx > 0).then(|| v / tx as f64);
    let busy_s = sum(&|s| s.cpu.busy_pct() / 100.0 * f64::from(s.cores) * s.secs);
    j.cpu_us_per_tx = per_tx(busy_s * 1e6);
    if samples.iter().any(|(s, _)| s.process_cpu_s.is_some()) {
        j.process_cpu_us_per_tx = per_tx(sum(&|s| s.process_cpu_s.unwrap_or(0.0)) * 1e6);
    }
    if samples.iter().all(|(s, _)| s.disk.is_some()) {
        let d = |f: fn(&fleetbench_model::server_host::DiskIo) -> f64| {
            sum(&|s| s.disk.as_ref().map_or(0.0, f))
        };
        j.disk_reads_per_tx = per_tx(d(|d| d.reads as f64));
        j.disk_write_kb_per_tx = per_tx(d(|d| d.write_kb as f64));
        j.disk_util_pct = Some(d(|d| d.util_pct) / n as f64);
        j.disk_await_ms = Some(d(|d| d.await_ms) / n as f64);
    }
    j.cpu_user_pct = avg(&|s| s.cpu.user_pct);
    j.cpu_system_pct = avg(&|s| s.cpu.system_pct);
    j.cpu_iowait_pct = avg(&|s| s.cpu.iowait_pct);
    j.cpu_steal_pct = avg(&|s| s.cpu.steal_pct);
    let secs = sum(&|s| s.secs).max(f64::MIN_POSITIVE);
    j.net_rx_bytes_per_sec = sum(&|s| s.net_rx_bytes as f64) / secs;
    j.net_tx_bytes_per_sec = sum(&|s| s.net_tx_bytes as f64) / secs;
    j.context_switches_per_tx = per_tx(sum(&|s| s.context_switches as f64));
    j.processes = samples.last().map_or(0, |(s, _)| s.processes);
    j
}

/// Every read server's figures in the interval `seq` of run `r`; `lags` holds each read
/// server's lag series ([`lag_of`]), in `read`'s order, computed once for all intervals.
pub fn in_interval(
    r: &RunResult,
    seq: u32,
    read: &[Readable],
    loaded: usize,
    lags: &[Vec<(u32, Option<f64>)>],
) -> Vec<IntervalServer> {
    let Some(iv) = r.intervals.iter().find(|iv| iv.seq == seq) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, s) in read.iter().enumerate() {
        let (i, name, driver) = (s.index, &s.name, &s.driver);
        let tx = target_transactions(iv, s.tx_of, loaded);
        let tick = r.servers.iter().find(|t| t.seq == seq && t.target == i);
        let hosts: Vec<IntervalHost> = r
            .observed
            .iter()
            .filter(|h| h.target == i)
            .filter_map(|h| {
                let (_, f) = h.samples.iter().find(|(s, _)| *s == seq)?;
                Some(interval_host(&h.addr, f, tx))
            })
            .collect();
        let mut sv = match tick {
            Some(t) => interval(*driver, name, t, tx),
            None if hosts.is_empty() => continue,
            None => IntervalServer {
                target: name.clone(),
                transactions: tx,
                missing: Some("not read over SQL".into()),
                ..Default::default()
            },
        };
        sv.per_tx.with_host(
            hosts
                .iter()
                .map(|h| [h.cpu_us_per_tx, h.disk_reads_per_tx, h.disk_write_kb_per_tx]),
        );
        sv.hosts = hosts;
        sv.replica_lag_s = lags
            .get(k)
            .and_then(|l| l.iter().find(|(q, _)| *q == seq))
            .and_then(|(_, l)| *l);
        out.push(sv);
    }
    out
}

/// The servers' figures of merged interval `iv` from the ticks the agents sent for it (the
/// live view: no observed hosts, a replica's lag as it reports it).
pub fn of_tick(
    iv: &MergedInterval,
    ticks: &[ServerTick],
    read: &[Readable],
    loaded: usize,
) -> Vec<IntervalServer> {
    ticks
        .iter()
        .filter(|t| t.seq == iv.seq)
        .filter_map(|t| {
            let s = read.iter().find(|s| s.index == t.target)?;
            let tx = target_transactions(iv, s.tx_of, loaded);
            let mut sv = interval(s.driver, &s.name, t, tx);
            sv.replica_lag_s = t
                .values
                .get(fleetbench_model::server_status::REPLICA_LAG)
                .map(|&ms| ms as f64 / 1000.0);
            Some(sv)
        })
        .collect()
}

/// One observed host's figures in one interval of `tx` transactions.
fn interval_host(
    addr: &str,
    f: &fleetbench_model::server_host::ServerHostFigures,
    tx: u64,
) -> IntervalHost {
    let per_tx = |v: f64| (tx > 0).then(|| v / tx as f64);
    IntervalHost {
        addr: addr.into(),
        cpu_busy_pct: f.cpu.busy_pct(),
        cpu_iowait_pct: f.cpu.iowait_pct,
        cpu_us_per_tx: per_tx(f.cpu.busy_pct() / 100.0 * f64::from(f.cores) * f.secs * 1e6),
        process_cpu_us_per_tx: f.process_cpu_s.and_then(|c| per_tx(c * 1e6)),
        disk_util_pct: f.disk.map(|d| d.util_pct),
        disk_reads_per_tx: f.disk.and_then(|d| per_tx(d.reads as f64)),
        disk_write_kb_per_tx: f.disk.and_then(|d| per_tx(d.write_kb as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(seq: u32, pairs: &[(&str, u64)]) -> ServerTick {
        ServerTick {
            target: 0,
            seq,
            values: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            missing: None,
            note: None,
        }
    }

    #[test]
    fn mysql_figures_per_transaction_come_from_innodb_and_questions() {
        let t = tick(
            1,
            &[
                ("Innodb_rows_read", 1000),
                ("Innodb_rows_inserted", 10),
                ("Innodb_rows_updated", 20),
                ("Innodb_buffer_pool_reads", 5),
                ("Innodb_buffer_pool_read_requests", 5000),
                ("Innodb_os_log_written", 40_000),
                ("Questions", 1800),
                ("Threads_running", 4),
            ],
        );
        let s = summarize(Driver::Mysql, &[(&t, 100)]);
        assert_eq!(s.transactions, 100);
        assert_eq!(s.per_tx.rows_read, Some(10.0));
        assert_eq!(s.per_tx.rows_written, Some(0.3));
        assert_eq!(s.per_tx.server_reads, Some(0.05));
        assert_eq!(s.per_tx.log_bytes, Some(400.0));
        assert_eq!(s.per_tx.statements, Some(18.0));
        assert_eq!(s.read_misses_per_1000, Some(1.0));
        assert_eq!(s.threads_running_avg, Some(4.0));
        // A gauge is not a counter.
        assert!(!s.counters.contains_key("Threads_running"));
        // No query cache in use: no hit ratio.
        assert_eq!(s.query_cache_hit_pct, None);
    }

    #[test]
    fn mariadb_rows_come_from_its_own_counters() {
        let t = tick(
            1,
            &[
                ("Rows_read", 900),
                ("Handler_write", 30),
                ("Handler_update", 60),
                ("Handler_delete", 30),
            ],
        );
        let s = summarize(Driver::Mysql, &[(&t, 30)]);
        assert_eq!(s.per_tx.rows_read, Some(30.0));
        assert_eq!(s.per_tx.rows_written, Some(4.0));
    }

    #[test]
    fn postgresql_figures_come_from_its_statistics_views() {
        let t = tick(
            1,
            &[
                ("tup_returned", 500),
                ("tup_updated", 50),
                ("blks_read", 10),
                ("blks_hit", 990),
                ("wal_bytes", 10_000),
                ("active_backends", 2),
            ],
        );
        let s = summarize(Driver::Pgsql, &[(&t, 50)]);
        assert_eq!(s.source, "pg_stat_database");
        assert_eq!(s.per_tx.rows_read, Some(10.0));
        assert_eq!(s.per_tx.rows_written, Some(1.0));
        assert_eq!(s.per_tx.server_reads, Some(0.2));
        assert_eq!(s.per_tx.log_bytes, Some(200.0));
        assert_eq!(s.per_tx.statements, None);
        assert_eq!(s.read_misses_per_1000, Some(10.0));
        assert_eq!(s.threads_running_avg, Some(2.0));
    }

    #[test]
    fn missing_intervals_leave_both_sides_of_the_ratio() {
        let a = tick(1, &[("Innodb_rows_read", 100)]);
        let mut gap = tick(2, &[]);
        gap.missing = Some("the status read took over a second".into());
        let mut restart = tick(3, &[]);
        restart.missing = Some("the server restarted".into());
        let b = tick(4, &[("Innodb_rows_read", 300)]);
        let s = summarize(
            Driver::Mysql,
            &[(&a, 10), (&gap, 1000), (&restart, 1000), (&b, 30)],
        );
        assert_eq!((s.intervals, s.missing_intervals), (2, 2));
        assert_eq!(s.transactions, 40);
        assert_eq!(s.per_tx.rows_read, Some(10.0));
        assert_eq!(s.notes.len(), 2);
        // A note is said once, whatever the intervals.
        let mut noted = tick(5, &[("Innodb_rows_read", 10)]);
        noted.note = Some("no replication figures: denied (GRANT ...)".into());
        let s = summarize(Driver::Mysql, &[(&noted, 1), (&noted, 1)]);
        assert_eq!(s.warnings, ["no replication figures: denied (GRANT ...)"]);
        // Without transactions there is no per-transaction figure, not an infinity.
        assert_eq!(summarize(Driver::Mysql, &[(&a, 0)]).per_tx.rows_read, None);
        // A counter the server does not have is absent, not zero.
        assert_eq!(s.per_tx.log_bytes, None);
        let iv = interval(Driver::Mysql, "db", &gap, 5);
        assert_eq!(
            iv.missing.as_deref(),
            Some("the status read took over a second")
        );
        assert_eq!(iv.per_tx, PerTx::default());
    }

    #[test]
    fn the_query_cache_ratio_shows_only_where_the_cache_works() {
        let c = |pairs: &[(&str, u64)]| tick(1, pairs).values;
        assert_eq!(
            query_cache_hit_pct(&c(&[
                ("Qcache_hits", 300),
                ("Qcache_inserts", 10),
                ("Com_select", 100)
            ])),
            Some(75.0)
        );
        let off = c(&[
            ("Qcache_hits", 0),
            ("Qcache_inserts", 0),
            ("Com_select", 100),
        ]);
        assert_eq!(query_cache_hit_pct(&off), None);
    }

    #[test]
    fn an_observed_host_costs_cpu_and_disk_per_transaction() {
        use fleetbench_model::server_host::{CpuSplit, DiskIo, ServerHostFigures};
        let f = |busy: f64, proc_s: f64| ServerHostFigures {
            secs: 1.0,
            cores: 4,
            cpu: CpuSplit {
                user_pct: busy * 0.75,
                system_pct: busy * 0.25,
                iowait_pct: 2.0,
                steal_pct: 0.0,
            },
            process_cpu_s: Some(proc_s),
            processes: 3,
            disk: Some(DiskIo {
                reads: 10,
                write_kb: 100,
                util_pct: 20.0,
                await_ms: 1.0,
                ..Default::default()
            }),
            context_switches: 500,
            ..Default::default()
        };
        let (a, b) = (f(50.0, 1.5), f(25.0, 0.5));
        let j = host_json(&[(&a, 1000), (&b, 1000)]);
        // Busy: 2 and 1 core-seconds over 2000 transactions.
        assert_eq!(j.cpu_us_per_tx, Some(1500.0));
        assert_eq!(j.process_cpu_us_per_tx, Some(1000.0));
        assert_eq!(j.disk_reads_per_tx, Some(0.01));
        assert_eq!(j.disk_write_kb_per_tx, Some(0.1));
        assert_eq!((j.disk_util_pct, j.cpu_iowait_pct), (Some(20.0), 2.0));
        assert_eq!(j.context_switches_per_tx, Some(0.5));
        // Without block statistics or a matching process: absent, not zero.
        let bare = ServerHostFigures {
            disk: None,
            process_cpu_s: None,
            ..a
        };
        let j = host_json(&[(&bare, 10)]);
        assert_eq!((j.disk_reads_per_tx, j.process_cpu_us_per_tx), (None, None));
        assert_eq!(host_json(&[]).intervals, 0);
    }

    #[test]
    fn the_fleet_figure_adds_the_servers_costs_per_transaction() {
        let a = PerTx {
            rows_read: Some(10.0),
            log_bytes: Some(2048.0),
            ..Default::default()
        };
        let b = PerTx {
            rows_read: Some(30.0),
            ..Default::default()
        };
        let f = fleet_per_tx(&[(75, &a), (25, &b)]);
        assert_eq!(f["server rows read/tx"], 15.0);
        assert_eq!(f["server log KB/tx"], 1.5);
        assert!(!f.contains_key("server stmts/tx"));
        assert!(fleet_per_tx(&[(0, &a)]).is_empty());
        // Observed hosts: a proxy's and a shard's CPU add up per transaction of the run.
        let h = fleet_host_per_tx(&[(100, Some(300.0), Some(200.0)), (100, Some(100.0), None)]);
        assert_eq!(h["server host CPU µs/tx"], 200.0);
        assert_eq!(h["server process CPU µs/tx"], 100.0);
    }

    #[test]
    fn several_targets_share_the_events_by_their_statements() {
        use crate::merge::DbCounters;
        let iv = MergedInterval {
            events: 100,
            targets: vec![
                (
                    0,
                    DbCounters {
                        reads: 300,
                        ..Default::default()
                    },
                ),
                (
                    1,
                    DbCounters {
                        reads: 100,
                        ..Default::default()
                    },
                ),
            ],
            ..Default::default()
        };
        assert_eq!(target_transactions(&iv, 0, 2), 75);
        assert_eq!(target_transactions(&iv, 1, 2), 25);
        assert_eq!(target_transactions(&iv, 1, 1), 100);
    }
}
