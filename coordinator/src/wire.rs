//! Conversions from the agents' wire messages (`Hello`, `Interval`, `Final`) to the
//! coordinator's result types, histograms decoded on the way. Pure functions: the session
//! calls them in each agent's reader task, the merge benchmark on messages it builds itself.

use std::time::Duration;

use fleetbench_proto::histogram::{self, CodecError};
use fleetbench_proto::v1 as pb;
use tracing::warn;

use crate::error::SessionError;
use crate::merge::{
    AgentResult, AgentStatus, ClientFigures, CommandFigures, Connection, DbCounters, IntervalPart,
    IoCounters, Latency, OpenLoop, TxnFigures, Txns,
};
use fleetbench_model::host::HostFacts;
use fleetbench_model::workloads::tpcc::TXN_NAMES;

/// An agent's final report: its own row of the result, and what it adds to the run's
/// per-statement-kind and per-target figures (merged into the run, not kept per agent).
#[derive(Debug, Clone)]
pub struct AgentFinal {
    pub agent: AgentResult,
    /// Latency per statement kind (OLTP), by kind name.
    pub kinds: Vec<(String, Latency)>,
    /// Per database target (index into the plan's targets): counters and statement latency.
    pub targets: Vec<(usize, DbCounters, Latency)>,
    /// Skipped and late events and aborted clients (no messages: the ticks had them).
    pub clients: ClientFigures,
    /// pgbench's -r: per script and command.
    pub commands: Vec<CommandFigures>,
}

/// Who sent a final report: the agent's address, host name, what its host is (from its
/// Hello) and thread count.
#[derive(Debug, Clone)]
pub struct Sender {
    pub addr: String,
    /// What reports call it (see [`crate::merge::AgentResult::name`]).
    pub name: String,
    pub host: String,
    pub facts: HostFacts,
    pub threads: u32,
}

/// What `fleetbench agents` shows of one agent.
pub struct AgentStatusLine {
    pub addr: String,
    /// What its Hello said, or why there was none.
    pub result: Result<AgentFacts, SessionError>,
}

/// An agent's answer to Hello, and how long a second one took on the open connection.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFacts {
    pub version: String,
    pub hostname: String,
    pub cores: u32,
    /// Its host's CPU model, kernel and memory (empty from agents that send none).
    pub host: fleetbench_model::host::HostFacts,
    /// The run it is busy with: id, since when (Unix seconds) and for whom.
    pub busy: Option<(String, u64, String)>,
    pub rtt: Duration,
}

impl AgentFacts {
    pub fn of(h: pb::HelloReply, rtt: Duration) -> AgentFacts {
        AgentFacts {
            host: host_facts(&h),
            version: h.agent_version,
            hostname: h.hostname,
            cores: h.cores,
            busy: (!h.busy_run_id.is_empty()).then_some((
                h.busy_run_id,
                h.busy_since_unix,
                h.busy_peer,
            )),
            rtt,
        }
    }
}

/// What an agent's Hello says its host is; an agent that does not say gives "" and 0.
/// The texts go into reports as they are, so control characters (a line break would
/// forge a report line) become spaces and they are cut at 200 characters.
pub fn host_facts(h: &pb::HelloReply) -> HostFacts {
    let printable = |s: &str| -> String {
        s.chars()
            .take(200)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    HostFacts {
        cores: h.cores,
        cpu_model: printable(&h.cpu_model),
        kernel: printable(&h.kernel),
        mem_total_bytes: h.mem_total_bytes,
    }
}

/// The most worker threads an agent's Hello says its host can give, and the limit that
/// sets it (printable, as in [`host_facts`]); None from an agent that does not say.
pub fn thread_ceiling(h: &pb::HelloReply) -> Option<(u64, String)> {
    let why: String = h
        .max_threads_limit
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    (h.max_threads > 0).then_some((h.max_threads, why))
}

impl Sender {
    /// The result of an agent that delivered no usable final report.
    pub fn lost(&self, why: String) -> AgentResult {
        AgentResult {
            addr: self.addr.clone(),
            name: self.name.clone(),
            host: self.host.clone(),
            facts: self.facts.clone(),
            threads: self.threads,
            elapsed: Duration::ZERO,
            events: 0,
            latency: Latency::default(),
            per_thread: Vec::new(),
            status: AgentStatus::Lost(why),
            db: DbCounters::default(),
            io: IoCounters::default(),
            open: None,
            txns: Txns::default(),
        }
    }
}

/// How an agent connected to a target: (target index, the way).
pub fn connection(c: &pb::Connection) -> (usize, Connection) {
    (
        c.target as usize,
        Connection {
            client: c.client.clone(),
            auth_plugin: c.auth_plugin.clone(),
            tls: c.tls.clone(),
            server_version: c.server_version.clone(),
            server_vars: c
                .server_vars
                .iter()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        },
    )
}

pub fn db_counters(d: Option<&pb::DbCounters>) -> DbCounters {
    d.map_or_else(DbCounters::default, fleetbench_model::wire::db_from_proto)
}

pub fn io_counters(d: Option<&pb::IoCounters>) -> IoCounters {
    d.map_or_else(IoCounters::default, fleetbench_model::wire::io_from_proto)
}

/// A latency message with its histogram decoded; no message is no events.
pub fn latency(l: Option<&pb::Latency>) -> Result<Latency, CodecError> {
    let Some(l) = l else {
        return Ok(Latency::default());
    };
    Ok(Latency {
        hist: histogram::decode(&l.histogram)?,
        min_ns: l.min_ns,
        max_ns: l.max_ns,
        sum_ns: l.sum_ns,
    })
}

/// One agent's report of one tick, ready for [`crate::merge::IntervalMerger::add`].
/// A host's load as the agent reported it; shares clamped to 0..=100 (input may be garbage).
pub fn host_load(h: &pb::HostLoad) -> fleetbench_model::host::HostFigures {
    let pct = |v: f64| {
        if v.is_finite() {
            v.clamp(0.0, 100.0)
        } else {
            0.0
        }
    };
    let mut f = fleetbench_model::wire::host_from_proto(h);
    f.cpu_busy_pct = pct(f.cpu_busy_pct);
    f.agent_cpu_pct = pct(f.agent_cpu_pct);
    f
}

pub fn interval_part(iv: &pb::Interval) -> Result<IntervalPart, CodecError> {
    Ok(IntervalPart {
        duration: Duration::from_nanos(iv.duration_ns),
        events: iv.events,
        threads_running: iv.threads_running,
        latency: latency(iv.latency.as_ref())?,
        db: db_counters(iv.db.as_ref()),
        io: io_counters(iv.io.as_ref()),
        last: iv.last,
        open: open_loop(iv.open_loop.as_ref())?,
        txns: txns(&iv.txns)?,
        // An agent talks to a handful of targets; a longer list is not one of ours.
        targets: iv
            .targets
            .iter()
            .take(MAX_TARGETS)
            .map(|t| (t.target as usize, db_counters(t.db.as_ref())))
            .collect(),
        clients: ClientFigures {
            skipped: iv.skipped,
            late: iv.late,
            clients_aborted: u64::from(iv.clients_aborted),
            // As the agent keeps them: a hundred a tick, one line each.
            client_errors: iv
                .client_errors
                .iter()
                .take(100)
                .map(|m| printable_line(m))
                .collect(),
        },
    })
}

/// A message from an agent as one line of at most 2,000 characters: control characters
/// (a server's multi-line error) become spaces.
fn printable_line(m: &str) -> String {
    m.chars()
        .take(2_000)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// pgbench's -r figures of an agent; at most a few thousand commands are read.
fn commands(list: &[pb::CommandStats]) -> Vec<CommandFigures> {
    list.iter()
        .take(4096)
        .map(|c| CommandFigures {
            script: c.script as usize,
            command: c.command as usize,
            count: c.count,
            sum_ns: c.sum_ns,
            failures: c.failures,
            retries: c.retries,
        })
        .collect()
}

/// The most per-target entries read from one interval.
const MAX_TARGETS: usize = 4096;

/// Per transaction type (TPC-C), by the agents' type names; unknown names are ignored.
pub fn txns(list: &[pb::TxnStats]) -> Result<Txns, CodecError> {
    let mut t = Txns::default();
    for s in list {
        let Some(i) = TXN_NAMES.iter().position(|n| *n == s.kind) else {
            continue;
        };
        t.0[i].merge(&TxnFigures {
            latency: latency(s.latency.as_ref())?,
            retried: s.retried,
            failed: s.failed,
            rolled_back: s.rolled_back,
            retried_txns: s.retried_transactions,
            skipped: s.skipped,
        });
    }
    Ok(t)
}

/// Open-loop figures with the service-time histogram decoded; None in a closed loop.
pub fn open_loop(o: Option<&pb::OpenLoop>) -> Result<Option<OpenLoop>, CodecError> {
    let Some(o) = o else {
        return Ok(None);
    };
    Ok(Some(OpenLoop {
        service: latency(o.service.as_ref())?,
        queue_length: o.queue_length,
        concurrency: o.concurrency,
        arrivals: o.arrivals,
        lag_max_ns: o.lag_max_ns,
    }))
}

/// An agent's final report. An unreadable overall histogram makes the agent lost; an
/// unreadable per-kind or per-target histogram drops just that figure, with a warning.
pub fn agent_final(from: &Sender, f: &pb::Final) -> AgentFinal {
    let latency = match latency(f.latency.as_ref()) {
        Ok(l) => l,
        Err(e) => {
            return AgentFinal {
                agent: from.lost(format!("its final report was unreadable: {e}")),
                kinds: Vec::new(),
                targets: Vec::new(),
                clients: ClientFigures::default(),
                commands: Vec::new(),
            };
        }
    };
    let mut kinds = Vec::new();
    for k in &f.kinds {
        match self::latency(k.latency.as_ref()) {
            Ok(l) => kinds.push((k.kind.clone(), l)),
            Err(e) => warn!(agent = %from.addr, "dropping {} latency: {e}", k.kind),
        }
    }
    let mut targets = Vec::new();
    for t in &f.targets {
        let Ok(l) = self::latency(t.statements.as_ref()) else {
            warn!(agent = %from.addr, "dropping unreadable target figures");
            continue;
        };
        targets.push((t.target as usize, db_counters(t.db.as_ref()), l));
    }
    AgentFinal {
        agent: AgentResult {
            addr: from.addr.clone(),
            name: from.name.clone(),
            host: from.host.clone(),
            facts: from.facts.clone(),
            threads: from.threads,
            elapsed: Duration::from_nanos(f.elapsed_ns),
            events: f.events,
            latency,
            per_thread: f.threads.iter().map(|t| (t.events, t.busy_ns)).collect(),
            status: if f.aborted.is_empty() {
                AgentStatus::Completed
            } else {
                AgentStatus::Aborted(f.aborted.clone())
            },
            db: db_counters(f.db.as_ref()),
            io: io_counters(f.io.as_ref()),
            open: open_loop(f.open_loop.as_ref()).unwrap_or_else(|e| {
                warn!(agent = %from.addr, "dropping unreadable service times: {e}");
                None
            }),
            txns: txns(&f.txns).unwrap_or_else(|e| {
                warn!(agent = %from.addr, "dropping unreadable transaction figures: {e}");
                Txns::default()
            }),
        },
        kinds,
        targets,
        clients: ClientFigures {
            skipped: f.skipped,
            late: f.late,
            clients_aborted: u64::from(f.clients_aborted),
            client_errors: Vec::new(),
        },
        commands: commands(&f.commands),
    }
}

/// The servers' figures an interval carries (its agent reads them), one per target.
pub fn server_ticks(iv: &pb::Interval) -> Vec<crate::servers::ServerTick> {
    iv.servers
        .iter()
        .map(|s| crate::servers::ServerTick {
            target: s.target as usize,
            seq: iv.seq,
            values: s.values.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            missing: (!s.missing.is_empty()).then(|| s.missing.clone()),
            note: (!s.note.is_empty()).then(|| s.note.clone()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts_from_an_agent_cannot_break_report_lines() {
        let h = pb::HelloReply {
            cores: 4,
            cpu_model: "EPYC\nWARNING: forged".into(),
            kernel: "k".repeat(500),
            mem_total_bytes: 7,
            ..Default::default()
        };
        let f = host_facts(&h);
        assert_eq!(f.cpu_model, "EPYC WARNING: forged");
        assert_eq!(f.kernel.len(), 200);
        assert_eq!((f.cores, f.mem_total_bytes), (4, 7));
    }

    #[test]
    fn an_agent_that_says_no_ceiling_has_none() {
        assert_eq!(thread_ceiling(&pb::HelloReply::default()), None);
        let h = pb::HelloReply {
            max_threads: 12_861,
            max_threads_limit: "vm.max_map_count 65,530\nforged".into(),
            ..Default::default()
        };
        assert_eq!(
            thread_ceiling(&h),
            Some((12_861, "vm.max_map_count 65,530 forged".into()))
        );
    }
}
