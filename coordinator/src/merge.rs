//! Merging agents' results: latency histograms are added (never averaged), counters summed,
//! interval reports lined up by tick number. Pure functions, no I/O.

use std::collections::BTreeMap;
use std::time::Duration;

use fleetbench_model::add_counters;
pub use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_proto::histogram::new_histogram;
use hdrhistogram::Histogram;

/// Latency of a set of events. Percentiles come from the histogram (microseconds, 3
/// significant digits); min, max and sum are exact nanoseconds.
#[derive(Debug, Clone)]
pub struct Latency {
    pub hist: Histogram<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: new_histogram(),
            min_ns: 0,
            max_ns: 0,
            sum_ns: 0,
        }
    }
}

impl Latency {
    /// Number of events recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn merge(&mut self, other: &Latency) {
        if other.count() == 0 {
            return;
        }
        self.min_ns = if self.count() == 0 {
            other.min_ns
        } else {
            self.min_ns.min(other.min_ns)
        };
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        // Both sides auto-resize; adding cannot fail for histograms made by new_histogram.
        let _ = self.hist.add(&other.hist);
    }

    pub fn min_ms(&self) -> f64 {
        self.min_ns as f64 / 1e6
    }

    pub fn max_ms(&self) -> f64 {
        self.max_ns as f64 / 1e6
    }

    pub fn sum_ms(&self) -> f64 {
        self.sum_ns as f64 / 1e6
    }

    pub fn avg_ms(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_ns as f64 / n as f64 / 1e6,
        }
    }

    /// A percentile the user asked for: as [`Latency::percentile_ms`], but 0 for
    /// `--percentile=0` (percentiles off, as in sysbench, whose lines then show 0.00).
    pub fn requested_ms(&self, p: f64) -> f64 {
        if p == 0.0 { 0.0 } else { self.percentile_ms(p) }
    }

    /// The `p`th percentile (p in (0, 100]) in milliseconds, 0 without events. Kept within
    /// the exact [min, max], which the histogram's bucket edges may overshoot.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.count() == 0 {
            return 0.0;
        }
        let ms = self.hist.value_at_quantile(p / 100.0) as f64 / 1e3;
        // An agent that sent min > max gets its histogram's word, unclamped.
        if self.min_ms() <= self.max_ms() {
            ms.clamp(self.min_ms(), self.max_ms())
        } else {
            ms
        }
    }
}

/// Open-loop (`--rate`) figures of an interval or a run, summed over agents. Latency
/// counts from each event's arrival; `service` from the moment a thread took it.
#[derive(Debug, Clone, Default)]
pub struct OpenLoop {
    pub service: Latency,
    /// Events arrived and not yet taken by a thread, at the end.
    pub queue_length: u64,
    /// Threads inside an event, at the end.
    pub concurrency: u32,
    /// Events that arrived (taken or not).
    pub arrivals: u64,
    /// The longest time from an event's arrival to its start (the schedule lag).
    pub lag_max_ns: u64,
}

impl OpenLoop {
    /// Adds another agent's (or the next interval's, see `extend`) figures, saturating.
    pub fn merge(&mut self, o: &OpenLoop) {
        self.service.merge(&o.service);
        add_counters!(self, o, queue_length, concurrency, arrivals);
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
    }

    /// Merges `o` into `into`, either side possibly absent.
    pub fn merge_into(into: &mut Option<OpenLoop>, o: Option<&OpenLoop>) {
        if let Some(o) = o {
            into.get_or_insert_with(OpenLoop::default).merge(o);
        }
    }

    /// Whether the threads fell behind the offered rate for good rather than for a moment:
    /// more than 1 % of the arrivals (and more than 10) were still queued at the end.
    pub fn fell_behind(&self) -> bool {
        self.queue_length > 10 && self.queue_length.saturating_mul(100) > self.arrivals
    }

    /// The next interval of the same agents: queue and concurrency are its, at its end;
    /// service times and arrivals add up.
    fn follow(&mut self, o: &OpenLoop) {
        self.service.merge(&o.service);
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
        self.arrivals = self.arrivals.saturating_add(o.arrivals);
        self.queue_length = o.queue_length;
        self.concurrency = o.concurrency;
    }
}

/// One transaction type's figures (TPC-C), over a tick or a run.
#[derive(Debug, Clone, Default)]
pub struct TxnFigures {
    /// Completed transactions' response times; its count is the completed transactions.
    pub latency: Latency,
    pub retried: u64,
    pub failed: u64,
    pub rolled_back: u64,
    /// Transactions tried more than once (pgbench's "transactions retried").
    pub retried_txns: u64,
    /// Transactions skipped for being late already (pgbench's -R with -L).
    pub skipped: u64,
}

impl TxnFigures {
    pub fn merge(&mut self, o: &TxnFigures) {
        self.latency.merge(&o.latency);
        add_counters!(self, o, retried, failed, rolled_back, retried_txns, skipped);
    }

    pub fn count(&self) -> u64 {
        self.latency.count()
    }
}

/// TPC-C's five transaction types, in tpcc-mysql's order
/// (fleetbench_model::workloads::tpcc::TXN_NAMES); all empty for other workloads.
#[derive(Debug, Clone, Default)]
pub struct Txns(pub [TxnFigures; 5]);

impl Txns {
    pub fn merge(&mut self, o: &Txns) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            a.merge(b);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0
            .iter()
            .all(|t| t.count() == 0 && t.failed == 0 && t.retried == 0)
    }

    /// Completed transactions of every type.
    pub fn total(&self) -> u64 {
        self.0.iter().map(TxnFigures::count).sum()
    }
}

/// What a latency limit and clients' own ends add to a tick or a run (pgbench's `-L`,
/// `-R` with `-L`, and clients aborted on an error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientFigures {
    /// Events skipped for being late already when a client could start them.
    pub skipped: u64,
    /// Events above the latency limit.
    pub late: u64,
    /// Clients that ended on an error of their own, and what they said (a tick's only).
    pub clients_aborted: u64,
    pub client_errors: Vec<String>,
}

impl ClientFigures {
    pub fn merge(&mut self, o: &ClientFigures) {
        add_counters!(self, o, skipped, late, clients_aborted);
        // An agent keeps at most a hundred messages a tick; so does a merged tick.
        let room = 100usize.saturating_sub(self.client_errors.len());
        self.client_errors
            .extend(o.client_errors.iter().take(room).cloned());
    }
}

/// One command of a script over a run, summed over agents (pgbench's -r).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandFigures {
    /// The script's index in the run's list, the command's in the script.
    pub script: usize,
    pub command: usize,
    pub count: u64,
    pub sum_ns: u64,
    pub failures: u64,
    pub retries: u64,
}

impl CommandFigures {
    /// Its average time in milliseconds (0 when it never completed).
    pub fn avg_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64 / 1e6
        }
    }
}

/// One agent's report for one tick.
#[derive(Debug, Clone, Default)]
pub struct IntervalPart {
    pub duration: Duration,
    pub events: u64,
    pub threads_running: u32,
    pub latency: Latency,
    pub db: DbCounters,
    pub io: IoCounters,
    /// The agent's last interval: from its last full tick to the end of its run.
    pub last: bool,
    /// Open loop only.
    pub open: Option<OpenLoop>,
    /// TPC-C only.
    pub txns: Txns,
    /// Database workloads: (target index, what it received in this interval).
    pub targets: Vec<(usize, DbCounters)>,
    pub clients: ClientFigures,
}

/// What one agent's interval reports add up to: its share of the run when it is lost
/// before its final report, so that the totals count what the intervals showed.
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub intervals: u32,
    pub elapsed: Duration,
    pub events: u64,
    pub latency: Latency,
    pub db: DbCounters,
    pub io: IoCounters,
    pub open: Option<OpenLoop>,
    pub txns: Txns,
    pub clients: ClientFigures,
}

impl Received {
    pub fn add(&mut self, p: &IntervalPart) {
        self.intervals += 1;
        self.clients.merge(&ClientFigures {
            client_errors: Vec::new(),
            ..p.clients.clone()
        });
        self.elapsed += p.duration;
        self.events = self.events.saturating_add(p.events);
        self.latency.merge(&p.latency);
        self.db.merge(&p.db);
        self.io.merge(&p.io);
        self.txns.merge(&p.txns);
        if let Some(o) = &p.open {
            self.open.get_or_insert_with(OpenLoop::default).follow(o);
        }
    }

    /// A lost agent's result: what its intervals reported, and a status saying so.
    pub fn into_lost(self, mut lost: AgentResult) -> AgentResult {
        if let AgentStatus::Lost(why) = &lost.status {
            lost.status = AgentStatus::Lost(format!(
                "{why}; its figures are those of its {} interval report(s) ({:.1}s)",
                self.intervals,
                self.elapsed.as_secs_f64()
            ));
        }
        lost.elapsed = self.elapsed;
        lost.events = self.events;
        lost.latency = self.latency;
        lost.db = self.db;
        lost.io = self.io;
        lost.open = self.open;
        lost.txns = self.txns;
        lost
    }
}

/// One tick, merged over all agents.
#[derive(Debug, Clone, Default)]
pub struct MergedInterval {
    pub seq: u32,
    /// Time since Go at the end of this tick; for the run's last, partial interval the
    /// end of the run.
    pub end: Duration,
    /// The run's last interval, shorter than a tick: every agent's part was its last.
    pub last: bool,
    pub duration: Duration,
    pub threads: u32,
    pub events: u64,
    pub latency: Latency,
    pub db: DbCounters,
    pub io: IoCounters,
    /// Per agent (by index): events in this tick, None if the agent had already finished.
    pub per_agent: Vec<Option<u64>>,
    /// Open loop only: service time and arrivals of the tick, queue at its end.
    pub open: Option<OpenLoop>,
    /// TPC-C only: per transaction type.
    pub txns: Txns,
    /// Database workloads: (target index, what it received in this tick), by index.
    pub targets: Vec<(usize, DbCounters)>,
    pub clients: ClientFigures,
}

impl MergedInterval {
    pub fn events_per_sec(&self) -> f64 {
        per_sec(self.events, self.duration)
    }

    /// Adds the next interval `o` into this one, as one longer interval (the span of a
    /// `--report-checkpoints` report): counters and histograms merged, durations summed.
    pub fn extend(&mut self, o: &MergedInterval) {
        self.end = o.end;
        self.duration = self.duration.saturating_add(o.duration);
        self.threads = self.threads.max(o.threads);
        self.add_counts(o.events, &o.latency, &o.db, &o.io);
        self.txns.merge(&o.txns);
        merge_targets(&mut self.targets, &o.targets);
        self.clients.merge(&o.clients);
        if let Some(n) = &o.open {
            self.open.get_or_insert_with(OpenLoop::default).follow(n);
        }
    }

    /// Adds events, latencies and counters. Saturating throughout: agents' figures are
    /// input, and input may be garbage.
    fn add_counts(&mut self, events: u64, latency: &Latency, db: &DbCounters, io: &IoCounters) {
        self.events = self.events.saturating_add(events);
        self.latency.merge(latency);
        self.db.merge(db);
        self.io.merge(io);
    }

    /// The whole seconds an interval line shows, as sysbench's `[ 10s ]`: a tick's end, and
    /// for the last, partial interval its end rounded, but always after the tick before it.
    pub fn label_secs(&self) -> u64 {
        if !self.last {
            return self.end.as_secs();
        }
        let start = self.end.saturating_sub(self.duration).as_secs();
        (self.end.as_secs_f64().round() as u64).max(start.saturating_add(1))
    }
}

/// Events per second over `d`, 0 for an empty duration.
pub fn per_sec(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 { n as f64 / s } else { 0.0 }
}

/// Lines up agents' interval reports by tick number and releases a tick, merged, once every
/// agent still running has reported it. Each report is merged into its tick as it arrives
/// and then dropped, so memory holds one merged histogram per tick in flight, whatever the
/// number of agents, and releasing a tick costs nothing that grows with them.
#[derive(Debug)]
pub struct IntervalMerger {
    tick: Duration,
    /// Per agent: still expected to report ticks.
    active: Vec<bool>,
    /// Agents still expected to report ticks.
    active_count: usize,
    pending: BTreeMap<u32, PendingTick>,
    /// The last tick released: reports for it or an earlier one come too late.
    released: Option<u32>,
}

/// A tick some agents have reported.
#[derive(Debug)]
struct PendingTick {
    merged: MergedInterval,
    /// Active agents that have not reported this tick yet.
    missing: usize,
}

impl IntervalMerger {
    pub fn new(agents: usize, tick: Duration) -> Self {
        IntervalMerger {
            tick,
            active: vec![true; agents],
            active_count: agents,
            pending: BTreeMap::new(),
            released: None,
        }
    }

    /// Adds agent `agent`'s report of tick `seq`; returns the ticks now complete, in order.
    /// A second report of the same tick from the same agent, a report of a tick already
    /// released and a report from an unknown agent are ignored.
    pub fn add(&mut self, agent: usize, seq: u32, part: IntervalPart) -> Vec<MergedInterval> {
        let n = self.active.len();
        if agent >= n || self.released.is_some_and(|r| seq <= r) {
            return Vec::new();
        }
        let (tick, active_count) = (self.tick, self.active_count);
        let pending = self.pending.entry(seq).or_insert_with(|| PendingTick {
            merged: MergedInterval {
                seq,
                end: tick * seq,
                last: true,
                duration: Duration::ZERO,
                threads: 0,
                events: 0,
                latency: Latency::default(),
                db: DbCounters::default(),
                io: IoCounters::default(),
                per_agent: vec![None; n],
                open: None,
                txns: Txns::default(),
                targets: Vec::new(),
                clients: ClientFigures::default(),
            },
            missing: active_count,
        });
        if pending.merged.per_agent[agent].is_some() {
            return Vec::new();
        }
        absorb(&mut pending.merged, agent, &part);
        // A report from an agent that already finished still counts, but nobody waits for it.
        if self.active[agent] {
            pending.missing -= 1;
        }
        self.release()
    }

    /// Agent `agent` will report no more ticks (finished or lost).
    pub fn finish(&mut self, agent: usize) -> Vec<MergedInterval> {
        if let Some(a) = self.active.get_mut(agent)
            && *a
        {
            *a = false;
            self.active_count -= 1;
            for p in self.pending.values_mut() {
                if p.merged.per_agent[agent].is_none() {
                    p.missing -= 1;
                }
            }
        }
        self.release()
    }

    fn release(&mut self) -> Vec<MergedInterval> {
        let mut out = Vec::new();
        while let Some(entry) = self.pending.first_entry() {
            if entry.get().missing > 0 {
                break;
            }
            let mut m = entry.remove().merged;
            if m.last {
                // Only agents' last parts: the interval ends where the longest of them does.
                m.end = (self.tick.checked_mul(m.seq.saturating_sub(1)))
                    .and_then(|d| d.checked_add(m.duration))
                    .unwrap_or(Duration::MAX);
            } else if m.duration.is_zero() {
                m.duration = self.tick;
            }
            self.released = Some(m.seq);
            out.push(m);
        }
        out
    }
}

/// Adds agent `agent`'s report to its tick.
fn absorb(m: &mut MergedInterval, agent: usize, p: &IntervalPart) {
    m.per_agent[agent] = Some(p.events);
    m.last &= p.last;
    m.duration = m.duration.max(p.duration);
    m.threads = m.threads.saturating_add(p.threads_running);
    m.add_counts(p.events, &p.latency, &p.db, &p.io);
    m.txns.merge(&p.txns);
    m.clients.merge(&p.clients);
    OpenLoop::merge_into(&mut m.open, p.open.as_ref());
    merge_targets(&mut m.targets, &p.targets);
}

/// Adds per-target counters into `into`, kept sorted by target index.
fn merge_targets(into: &mut Vec<(usize, DbCounters)>, add: &[(usize, DbCounters)]) {
    for (t, d) in add {
        match into.binary_search_by_key(t, |x| x.0) {
            Ok(i) => into[i].1.merge(d),
            Err(i) => into.insert(i, (*t, d.clone())),
        }
    }
}

/// sysbench's "Threads fairness": mean and population standard deviation of events per
/// thread and of seconds each thread spent inside events.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub time_avg_s: f64,
    pub time_stddev_s: f64,
}

/// Computes fairness over (events, busy nanoseconds) per thread, across all agents.
pub fn fairness(threads: &[(u64, u64)]) -> Fairness {
    fn mean_sd(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
        let n = v.clone().count();
        if n == 0 {
            return (0.0, 0.0);
        }
        let mean = v.clone().sum::<f64>() / n as f64;
        let var = v.map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        (mean, var.sqrt())
    }
    let (events_avg, events_stddev) = mean_sd(threads.iter().map(|t| t.0 as f64));
    let (time_avg_s, time_stddev_s) = mean_sd(threads.iter().map(|t| t.1 as f64 / 1e9));
    Fairness {
        events_avg,
        events_stddev,
        time_avg_s,
        time_stddev_s,
    }
}

/// How an agent's part of the run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentStatus {
    /// Ran to its time or event limit.
    Completed,
    /// Stopped early, by a Stop or its own decision; its results up to then are included.
    Aborted(String),
    /// Its stream broke or it sent nonsense; what it reported before is kept in the intervals.
    Lost(String),
}

/// One agent's whole run.
#[derive(Debug, Clone)]
pub struct AgentResult {
    pub addr: String,
    /// What reports and errors call it: its address, or `embedded` (`embedded-N`) for an
    /// agent inside the coordinator's process (crate::local::agent_name).
    pub name: String,
    pub host: String,
    /// Cores, CPU model, kernel and memory of its host, as its Hello said.
    pub facts: fleetbench_model::host::HostFacts,
    pub threads: u32,
    /// From Go until its last worker stopped.
    pub elapsed: Duration,
    pub events: u64,
    pub latency: Latency,
    /// Per thread: (events, busy nanoseconds).
    pub per_thread: Vec<(u64, u64)>,
    pub status: AgentStatus,
    pub db: DbCounters,
    pub io: IoCounters,
    /// Open loop only: service time, arrivals and the queue left at the end.
    pub open: Option<OpenLoop>,
    /// TPC-C only: per transaction type.
    pub txns: Txns,
}

impl AgentResult {
    pub fn events_per_sec(&self) -> f64 {
        per_sec(self.events, self.elapsed)
    }
}

/// How agents' connections to a target were made (from their Ready messages). Read back
/// from result documents too, where the server's fields are missing in older files.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(default)]
pub struct Connection {
    /// "lean" or "mysql_async".
    pub client: String,
    /// The plugin that logged in; empty when the client does not say.
    pub auth_plugin: String,
    /// The TLS version; empty for none.
    pub tls: String,
    /// The server's version and the chosen global variables, as the agent read them.
    pub server_version: String,
    pub server_vars: std::collections::BTreeMap<String, String>,
}

impl Connection {
    /// "lean client, caching_sha2_password, TLSv1_3, server 10.11.19-MariaDB".
    pub fn describe(&self) -> String {
        let mut s = format!("{} client", self.client);
        if !self.auth_plugin.is_empty() {
            s.push_str(", ");
            s.push_str(&self.auth_plugin);
        }
        s.push_str(", ");
        s.push_str(if self.tls.is_empty() {
            "no TLS"
        } else {
            &self.tls
        });
        if !self.server_version.is_empty() {
            s.push_str(", server ");
            s.push_str(&self.server_version);
        }
        s
    }
}

/// The merged outcome of a run over all agents.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub agents: Vec<AgentResult>,
    pub intervals: Vec<MergedInterval>,
    /// The user interrupted the run (Ctrl-C); figures cover what ran until then.
    pub interrupted: bool,
    /// Statement latency per kind (OLTP), merged over agents ([`RunResult::add_statements`]),
    /// in first-seen order.
    pub kinds: Vec<(String, Latency)>,
    /// Per database target (index into the plan's targets): counters and statement latency,
    /// merged over agents, by index.
    pub targets: Vec<(usize, DbCounters, Latency)>,
    /// Per target index, each distinct way agents connected to it, sorted.
    pub connections: Vec<(usize, Connection)>,
    /// Connects the agents tried again while opening, summed over agents: (target index,
    /// reason, count), sorted.
    pub connect_retries: Vec<(usize, String, u64)>,
    /// The run's id (as the agents log it), when the measurement began (Go, then any
    /// warm-up) and when the last agent's outcome arrived.
    pub run_id: String,
    pub started: Option<std::time::SystemTime>,
    pub ended: Option<std::time::SystemTime>,
    /// Per agent (address): its host's load per tick number.
    pub hosts: Vec<(String, Vec<(u32, fleetbench_model::host::HostFigures)>)>,
    /// Skipped and late events and aborted clients, summed over agents (their Finals,
    /// or a lost agent's intervals); no messages (the ticks carried them).
    pub clients: ClientFigures,
    /// pgbench's -r: per script and command, summed over agents, sorted.
    pub commands: Vec<CommandFigures>,
    /// The database servers' own figures, per target and tick, as the agents read them.
    pub servers: Vec<crate::server_ticks::ServerTick>,
    /// What the observer agents saw of the servers' hosts.
    pub observed: Vec<crate::server_ticks::ObservedHost>,
}

impl RunResult {
    /// Notes how an agent connected to its targets (each distinct way once).
    pub fn add_connections(&mut self, conns: Vec<(usize, Connection)>) {
        for c in conns {
            if let Err(i) = self.connections.binary_search(&c) {
                self.connections.insert(i, c);
            }
        }
    }

    /// Adds one agent's retried connects in.
    pub fn add_connect_retries(&mut self, retries: &[(usize, String, u64)]) {
        for (t, why, n) in retries {
            match self
                .connect_retries
                .binary_search_by(|(tt, w, _)| (tt, w.as_str()).cmp(&(t, why.as_str())))
            {
                Ok(i) => self.connect_retries[i].2 = self.connect_retries[i].2.saturating_add(*n),
                Err(i) => self.connect_retries.insert(i, (*t, why.clone(), *n)),
            }
        }
    }

    /// The ways agents connected to target `t`.
    pub fn connections_to(&self, t: usize) -> impl Iterator<Item = &Connection> {
        self.connections
            .iter()
            .filter(move |(i, _)| *i == t)
            .map(|(_, c)| c)
    }

    /// Wall time of the run: until the last agent stopped.
    pub fn total_time(&self) -> Duration {
        self.agents
            .iter()
            .map(|a| a.elapsed)
            .max()
            .unwrap_or_default()
    }

    pub fn events(&self) -> u64 {
        self.agents
            .iter()
            .fold(0u64, |n, a| n.saturating_add(a.events))
    }

    pub fn events_per_sec(&self) -> f64 {
        per_sec(self.events(), self.total_time())
    }

    /// TPC-C: per transaction type, merged over agents.
    pub fn txns(&self) -> Txns {
        self.merged(|a| &a.txns, Txns::merge)
    }

    pub fn latency(&self) -> Latency {
        self.merged(|a| &a.latency, Latency::merge)
    }

    pub fn threads(&self) -> u32 {
        self.agents
            .iter()
            .fold(0u32, |n, a| n.saturating_add(a.threads))
    }

    pub fn fairness(&self) -> Fairness {
        let all: Vec<(u64, u64)> = self
            .agents
            .iter()
            .flat_map(|a| a.per_thread.iter().copied())
            .collect();
        fairness(&all)
    }

    pub fn io(&self) -> IoCounters {
        self.merged(|a| &a.io, IoCounters::merge)
    }

    pub fn db(&self) -> DbCounters {
        self.merged(|a| &a.db, DbCounters::merge)
    }

    /// Every agent's `part` merged into one.
    fn merged<T: Default>(
        &self,
        part: impl Fn(&AgentResult) -> &T,
        merge: impl Fn(&mut T, &T),
    ) -> T {
        let mut all = T::default();
        for a in &self.agents {
            merge(&mut all, part(a));
        }
        all
    }

    /// Merges one agent's statement latency per kind and figures per target into the
    /// run's. Agents' own copies are not kept: at a thousand agents with a dozen statement
    /// kinds they would be most of the coordinator's memory.
    pub fn add_statements(
        &mut self,
        kinds: Vec<(String, Latency)>,
        targets: Vec<(usize, DbCounters, Latency)>,
    ) {
        for (k, l) in kinds {
            match self.kinds.iter_mut().find(|(n, _)| *n == k) {
                Some((_, m)) => m.merge(&l),
                None => self.kinds.push((k, l)),
            }
        }
        for (t, d, l) in targets {
            match self.targets.binary_search_by_key(&t, |x| x.0) {
                Ok(i) => {
                    self.targets[i].1.merge(&d);
                    self.targets[i].2.merge(&l);
                }
                Err(i) => self.targets.insert(i, (t, d, l)),
            }
        }
    }

    /// Adds one agent's per-command figures in.
    pub fn add_commands(&mut self, commands: &[CommandFigures]) {
        for c in commands {
            let key = (c.script, c.command);
            match self
                .commands
                .binary_search_by_key(&key, |x| (x.script, x.command))
            {
                Ok(i) => {
                    let m = &mut self.commands[i];
                    add_counters!(m, c, count, sum_ns, failures, retries);
                }
                Err(i) => self.commands.insert(i, *c),
            }
        }
    }

    /// Open-loop figures merged over the agents; None in a closed loop.
    pub fn open(&self) -> Option<OpenLoop> {
        let mut o = None;
        for a in &self.agents {
            OpenLoop::merge_into(&mut o, a.open.as_ref());
        }
        o
    }

    pub fn lost_agents(&self) -> impl Iterator<Item = &AgentResult> {
        self.agents
            .iter()
            .filter(|a| matches!(a.status, AgentStatus::Lost(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_kept_once_per_way_and_target() {
        let c = |client: &str, plugin: &str, tls: &str| Connection {
            client: client.into(),
            auth_plugin: plugin.into(),
            tls: tls.into(),
            ..Connection::default()
        };
        let mut r = RunResult::default();
        r.add_connections(vec![(0, c("lean", "client_ed25519", "TLSv1_3"))]);
        r.add_connections(vec![
            (0, c("lean", "client_ed25519", "TLSv1_3")),
            (1, c("mysql_async", "", "")),
        ]);
        assert_eq!(r.connections.len(), 2);
        let t0: Vec<String> = r.connections_to(0).map(Connection::describe).collect();
        assert_eq!(t0, ["lean client, client_ed25519, TLSv1_3"]);
        let t1: Vec<String> = r.connections_to(1).map(Connection::describe).collect();
        assert_eq!(t1, ["mysql_async client, no TLS"]);
    }

    fn lat(values_us: &[u64]) -> Latency {
        let mut l = Latency::default();
        for &v in values_us {
            let mut one = Latency::default();
            one.hist.record(v).unwrap();
            one.min_ns = v * 1000;
            one.max_ns = v * 1000;
            one.sum_ns = v * 1000;
            l.merge(&one);
        }
        l
    }

    #[test]
    fn merged_histograms_give_the_percentiles_of_all_samples() {
        // K agents with different latency shapes; merging must equal one histogram of all.
        let mut all = Vec::new();
        let mut merged = Latency::default();
        for k in 0..5u64 {
            let samples: Vec<u64> = (0..2_000)
                .map(|i| 50 + (i * 37 + k * 1_000) % (3_000 * (k + 1)))
                .collect();
            merged.merge(&lat(&samples));
            all.extend(samples);
        }
        let single = lat(&all);
        for p in [50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            assert_eq!(merged.percentile_ms(p), single.percentile_ms(p), "p{p}");
        }
        assert_eq!(merged.count(), all.len() as u64);
        assert_eq!(merged.sum_ns, single.sum_ns);
        assert_eq!(
            (merged.min_ns, merged.max_ns),
            (single.min_ns, single.max_ns)
        );
        // And the percentile is what sorting says, to HDR precision (0.1%).
        all.sort_unstable();
        let exact = all[(all.len() as f64 * 0.95).ceil() as usize - 1] as f64 / 1e3;
        assert!(
            (merged.percentile_ms(95.0) - exact).abs() <= exact * 0.001,
            "{exact}"
        );
    }

    #[test]
    fn averaging_percentiles_would_be_wrong() {
        // Guard against the classic mistake: agent A fast, agent B slow.
        let a = lat(&vec![100; 900]);
        let b = lat(&vec![10_000; 100]);
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.percentile_ms(95.0), 10.0);
        assert!((a.percentile_ms(95.0) + b.percentile_ms(95.0)) / 2.0 != m.percentile_ms(95.0));
    }

    #[test]
    fn empty_latency_reports_zeros() {
        let l = Latency::default();
        assert_eq!(
            (l.min_ms(), l.avg_ms(), l.max_ms(), l.percentile_ms(95.0)),
            (0.0, 0.0, 0.0, 0.0)
        );
        let mut m = lat(&[500]);
        m.merge(&Latency::default());
        assert_eq!(m.min_ns, 500_000);
    }

    fn part(events: u64, threads: u32) -> IntervalPart {
        IntervalPart {
            clients: Default::default(),
            duration: Duration::from_secs(1),
            events,
            threads_running: threads,
            latency: lat(&vec![1_000; events as usize]),
            db: DbCounters::default(),
            io: IoCounters::default(),
            last: false,
            open: None,
            txns: Default::default(),
            targets: Vec::new(),
        }
    }

    #[test]
    fn ticks_are_released_in_order_once_every_active_agent_reported() {
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        assert!(m.add(0, 1, part(10, 2)).is_empty());
        assert!(m.add(0, 2, part(11, 2)).is_empty());
        let out = m.add(1, 1, part(5, 1));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq, out[0].events, out[0].threads), (1, 15, 3));
        assert_eq!(out[0].per_agent, vec![Some(10), Some(5)]);
        assert_eq!(out[0].events_per_sec(), 15.0);
        // Agent 1 finishes without reporting tick 2: tick 2 is released with agent 0 alone.
        let out = m.finish(1);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].seq, out[0].events, out[0].end),
            (2, 11, Duration::from_secs(2))
        );
        assert_eq!(out[0].per_agent, vec![Some(11), None]);
    }

    #[test]
    fn garbage_from_an_agent_never_panics() {
        let mut weird = lat(&[5, 50_000]);
        weird.min_ns = u64::MAX;
        weird.max_ns = 3;
        weird.sum_ns = u64::MAX;
        let mut m = lat(&[100]);
        m.merge(&weird);
        m.merge(&weird);
        let _ = (
            m.percentile_ms(95.0),
            m.avg_ms(),
            m.max_ms(),
            weird.percentile_ms(99.9),
        );
        let mut merger = IntervalMerger::new(2, Duration::from_secs(1));
        let huge = IntervalPart {
            clients: Default::default(),
            duration: Duration::from_nanos(u64::MAX),
            events: u64::MAX,
            threads_running: u32::MAX,
            latency: weird.clone(),
            db: DbCounters {
                reads: u64::MAX,
                writes: u64::MAX,
                errors_by_code: [(1213, u64::MAX)].into(),
                ..Default::default()
            },
            last: true,
            io: IoCounters::default(),
            open: None,
            txns: Default::default(),
            targets: Vec::new(),
        };
        assert!(
            merger.add(7, 1, huge.clone()).is_empty(),
            "unknown agent index ignored"
        );
        merger.add(0, u32::MAX, huge.clone());
        let out = merger.add(1, u32::MAX, huge);
        assert_eq!(out[0].events, u64::MAX);
        assert_eq!(out[0].db.reads, u64::MAX);
        assert_eq!(out[0].db.errors_by_code[&1213], u64::MAX);
        let _ = (out[0].events_per_sec(), out[0].label_secs());
    }

    #[test]
    fn the_last_partial_interval_ends_with_the_run() {
        let last = |events, ms| IntervalPart {
            duration: Duration::from_millis(ms),
            last: true,
            ..part(events, 2)
        };
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        m.add(0, 1, part(10, 2));
        m.add(1, 1, part(10, 2));
        assert!(m.add(0, 2, last(4, 400)).is_empty());
        let out = m.add(1, 2, last(5, 500));
        assert_eq!((out[0].seq, out[0].events, out[0].last), (2, 9, true));
        assert_eq!(out[0].end, Duration::from_millis(1500));
        assert_eq!(out[0].duration, Duration::from_millis(500));
        assert_eq!(
            out[0].label_secs(),
            2,
            "after [ 1s ], rounded up to the next second"
        );

        // One agent's last part inside another's full tick: the tick as usual.
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        m.add(0, 1, last(3, 300));
        let out = m.add(1, 1, part(10, 2));
        assert_eq!(
            (out[0].end, out[0].last, out[0].label_secs()),
            (Duration::from_secs(1), false, 1)
        );

        // A time-limited run's last interval ends a little after the deadline: [ 10s ].
        let mut m = IntervalMerger::new(1, Duration::from_secs(1));
        let out = m.add(0, 10, last(7, 1_004));
        assert_eq!(out[0].label_secs(), 10);
    }

    #[test]
    fn intervals_extend_into_one_span() {
        let mut m = IntervalMerger::new(1, Duration::from_secs(1));
        let a = m.add(0, 1, part(10, 2)).remove(0);
        let b = m.add(0, 2, part(5, 3)).remove(0);
        let mut span = a.clone();
        span.extend(&b);
        assert_eq!((span.events, span.threads), (15, 3));
        assert_eq!(
            (span.end, span.duration),
            (Duration::from_secs(2), Duration::from_secs(2))
        );
        assert_eq!(span.latency.count(), 15);
    }

    #[test]
    fn repeated_late_and_stray_reports_are_ignored() {
        let mut m = IntervalMerger::new(2, Duration::from_secs(1));
        assert!(m.add(0, 1, part(10, 1)).is_empty());
        // The same tick again from the same agent: the first report stands.
        assert!(m.add(0, 1, part(99, 1)).is_empty());
        let out = m.add(1, 1, part(5, 1));
        assert_eq!((out[0].events, out[0].latency.count()), (15, 15));
        // Tick 1 is out: a report of it now is too late and must not start a new tick 1.
        assert!(m.add(1, 1, part(7, 1)).is_empty());
        assert!(m.add(0, 2, part(1, 1)).is_empty());
        let out = m.add(1, 2, part(2, 1));
        assert_eq!(out.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![2]);
        assert_eq!(out[0].events, 3);
    }

    #[test]
    fn a_finished_agent_is_no_longer_waited_for_but_its_late_report_counts() {
        let mut m = IntervalMerger::new(3, Duration::from_secs(1));
        assert!(m.add(0, 1, part(1, 1)).is_empty());
        assert!(m.add(0, 2, part(2, 1)).is_empty());
        assert!(m.add(1, 1, part(10, 1)).is_empty());
        // Agent 2 finishes: tick 1 is complete, tick 2 still waits for agent 1.
        let out = m.finish(2);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].per_agent, vec![Some(1), Some(10), None]);
        // Finishing twice changes nothing.
        assert!(m.finish(2).is_empty());
        // A report agent 2 sent before its end still arrives; it counts, tick 2 waits on.
        assert!(m.add(2, 2, part(100, 1)).is_empty());
        let out = m.add(1, 2, part(20, 1));
        assert_eq!(out[0].events, 122);
        assert_eq!(out[0].per_agent, vec![Some(2), Some(20), Some(100)]);
        // Once nobody is active, a new tick is released at once.
        m.finish(0);
        m.finish(1);
        let out = m.add(0, 3, part(4, 1));
        assert_eq!((out[0].seq, out[0].events), (3, 4));
    }

    #[test]
    fn many_agents_merge_to_the_sums_and_the_histogram_of_all() {
        let n = 1_000;
        let mut m = IntervalMerger::new(n, Duration::from_secs(1));
        let mut all = Latency::default();
        let mut released = Vec::new();
        for seq in 1..=2u32 {
            // Agents report in an order that differs per tick.
            for k in 0..n {
                let a = (k * 7 + seq as usize) % n;
                let p = IntervalPart {
                    clients: Default::default(),
                    duration: Duration::from_millis(1_000 + a as u64 % 3),
                    events: a as u64,
                    threads_running: 2,
                    latency: lat(&[100 + a as u64, 5_000 + 10 * a as u64]),
                    db: DbCounters {
                        reads: 1,
                        ..Default::default()
                    },
                    io: IoCounters::default(),
                    last: false,
                    open: None,
                    txns: Default::default(),
                    targets: Vec::new(),
                };
                all.merge(&p.latency);
                released.extend(m.add(a, seq, p));
            }
        }
        assert_eq!(released.len(), 2);
        let want: u64 = (0..n as u64).sum();
        for iv in &released {
            assert_eq!((iv.events, iv.threads, iv.db.reads), (want, 2_000, 1_000));
            assert_eq!(iv.duration, Duration::from_millis(1_002));
            assert_eq!(iv.per_agent[17], Some(17));
            assert_eq!(iv.latency.count(), 2 * n as u64);
        }
        let mut both = released[0].latency.clone();
        both.merge(&released[1].latency);
        for p in [50.0, 95.0, 99.9] {
            assert_eq!(both.percentile_ms(p), all.percentile_ms(p));
        }
    }

    #[test]
    fn open_loop_histograms_merge_to_the_histogram_of_all_samples() {
        // Three agents, two ticks each: latency (from arrival) and service time merged over
        // agents and ticks give exactly the percentiles of one histogram of every sample.
        let mut m = IntervalMerger::new(3, Duration::from_secs(1));
        let (mut all_lat, mut all_svc) = (Latency::default(), Latency::default());
        let mut released = Vec::new();
        let mut x = 12345u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1 + (x >> 40) % 200_000
        };
        let mut agents = vec![RunResult::default().open(); 3];
        for seq in 1..=2u32 {
            for (a, agent) in agents.iter_mut().enumerate() {
                let svc: Vec<u64> = (0..500).map(|_| next()).collect();
                // Queueing adds to some events' latency.
                let lat_us: Vec<u64> = svc.iter().map(|v| v + next() % 3 * next()).collect();
                let open = OpenLoop {
                    lag_max_ns: 0,
                    service: lat(&svc),
                    queue_length: a as u64 + seq as u64,
                    concurrency: 1,
                    arrivals: 500,
                };
                all_lat.merge(&lat(&lat_us));
                all_svc.merge(&open.service);
                OpenLoop::merge_into(agent, Some(&open));
                let p = IntervalPart {
                    clients: Default::default(),
                    duration: Duration::from_secs(1),
                    events: 500,
                    threads_running: 1,
                    latency: lat(&lat_us),
                    db: DbCounters::default(),
                    io: IoCounters::default(),
                    last: false,
                    open: Some(open),
                    txns: Default::default(),
                    targets: Vec::new(),
                };
                released.extend(m.add(a, seq, p));
            }
        }
        assert_eq!(released.len(), 2);
        // Per tick: queue and concurrency summed over agents.
        assert_eq!(released[0].open.as_ref().unwrap().queue_length, 1 + 2 + 3);
        assert_eq!(released[1].open.as_ref().unwrap().concurrency, 3);
        let mut span = released[0].clone();
        span.extend(&released[1]);
        let o = span.open.as_ref().unwrap();
        assert_eq!(o.arrivals, 3_000);
        // A span's queue is its last tick's.
        assert_eq!(o.queue_length, 2 + 3 + 4);
        let run = RunResult {
            agents: agents
                .into_iter()
                .map(|open| AgentResult {
                    addr: String::new(),
                    name: String::new(),
                    host: String::new(),
                    facts: Default::default(),
                    threads: 1,
                    elapsed: Duration::from_secs(2),
                    events: 1_000,
                    latency: Latency::default(),
                    per_thread: Vec::new(),
                    status: AgentStatus::Completed,
                    db: DbCounters::default(),
                    io: IoCounters::default(),
                    open,
                    txns: Default::default(),
                })
                .collect(),
            ..RunResult::default()
        };
        let total = run.open().unwrap();
        for p in [1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                span.latency.percentile_ms(p),
                all_lat.percentile_ms(p),
                "{p}"
            );
            assert_eq!(o.service.percentile_ms(p), all_svc.percentile_ms(p), "{p}");
            assert_eq!(
                total.service.percentile_ms(p),
                all_svc.percentile_ms(p),
                "{p}"
            );
        }
        assert_eq!(total.service.count(), 3_000);
        assert_eq!(
            (
                total.service.min_ns,
                total.service.max_ns,
                total.service.sum_ns
            ),
            (all_svc.min_ns, all_svc.max_ns, all_svc.sum_ns)
        );
    }

    #[test]
    fn statements_are_merged_by_kind_and_by_target() {
        let mut r = RunResult::default();
        let db = |reads| DbCounters {
            reads,
            ..Default::default()
        };
        r.add_statements(
            vec![
                ("commit".into(), lat(&[10])),
                ("point_select".into(), lat(&[1])),
            ],
            vec![(1, db(5), lat(&[7])), (0, db(1), lat(&[3]))],
        );
        r.add_statements(
            vec![("point_select".into(), lat(&[2, 3]))],
            vec![(1, db(6), lat(&[8]))],
        );
        let kinds: Vec<(&str, u64)> = r
            .kinds
            .iter()
            .map(|(k, l)| (k.as_str(), l.count()))
            .collect();
        assert_eq!(kinds, vec![("commit", 1), ("point_select", 3)]);
        let targets: Vec<(usize, u64, u64)> = r
            .targets
            .iter()
            .map(|(i, d, l)| (*i, d.reads, l.count()))
            .collect();
        assert_eq!(targets, vec![(0, 1, 1), (1, 11, 2)]);
    }

    #[test]
    fn fairness_matches_sysbench_population_stddev() {
        // sysbench printed 4421.0000/13.00 for two threads with 4408 and 4434 events.
        let f = fairness(&[(4408, 2_000_000_000), (4434, 2_000_000_000)]);
        assert_eq!(f.events_avg, 4421.0);
        assert_eq!(f.events_stddev, 13.0);
        assert_eq!((f.time_avg_s, f.time_stddev_s), (2.0, 0.0));
        assert_eq!(fairness(&[]), Fairness::default());
    }
}
