//! The runner's reports in their wire form (fleetbench.proto): intervals and the final
//! report with their histograms, counters and open-loop figures, as an agent streams them.

use fleetbench_model::wire::{db_to_proto, io_to_proto};
use fleetbench_model::workloads::oltp::Kind;
use fleetbench_model::workloads::tpcc::TXN_NAMES;
use fleetbench_proto::histogram;
use fleetbench_proto::v1 as pb;

use crate::rate::QueueState;
use crate::runner::{FinalReport, IntervalReport};
use crate::stats::Sample;

/// Per transaction type, the types that saw anything (TPC-C; empty otherwise).
pub fn txns_to_proto(s: &Sample) -> Vec<pb::TxnStats> {
    s.txns
        .iter()
        .zip(TXN_NAMES)
        .filter(|(t, _)| !t.is_empty())
        .map(|(t, kind)| {
            let c = &t.counts;
            pb::TxnStats {
                kind: kind.into(),
                count: c.count,
                latency: Some(pb::Latency {
                    histogram: histogram::encode_plain(&t.hist).unwrap_or_default(),
                    min_ns: if c.count == 0 { 0 } else { c.min_ns },
                    max_ns: c.max_ns,
                    sum_ns: c.sum_ns,
                }),
                retried: c.retried,
                failed: c.failed,
                rolled_back: c.rolled_back,
                retried_transactions: c.retried_txns,
                skipped: c.skipped,
            }
        })
        .collect()
}

pub fn latency_to_proto(s: &Sample) -> pb::Latency {
    pb::Latency {
        // Encoding an in-memory histogram into a Vec cannot fail in practice; an empty
        // payload decodes as "no samples" rather than losing the whole report.
        histogram: histogram::encode_plain(&s.hist).unwrap_or_default(),
        min_ns: if s.events == 0 { 0 } else { s.min_ns },
        max_ns: s.max_ns,
        sum_ns: s.sum_ns,
    }
}

pub fn interval_to_proto(iv: &IntervalReport) -> pb::Interval {
    pb::Interval {
        seq: iv.seq,
        duration_ns: iv.duration.as_nanos() as u64,
        events: iv.sample.events,
        threads_running: iv.threads_running,
        latency: Some(latency_to_proto(&iv.sample)),
        db: db_to_proto(&iv.sample.db),
        io: io_to_proto(&iv.sample.io),
        last: iv.last,
        open_loop: open_to_proto(&iv.sample, iv.open),
        host: None,
        txns: txns_to_proto(&iv.sample),
        targets: iv
            .sample
            .targets
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_zero())
            .map(|(i, d)| pb::TargetStats {
                target: i as u32,
                db: db_to_proto(d),
                statements: None,
            })
            .collect(),
        skipped: iv.sample.skipped,
        late: iv.sample.late,
        clients_aborted: iv.sample.clients_aborted,
        client_errors: iv.sample.client_errors.clone(),
        // Read beside the run, by the drive loop (crate::servers).
        servers: Vec::new(),
        txn_log: iv.sample.log.clone(),
    }
}

/// Open-loop figures: the service-time histogram and the queue (None in a closed loop).
pub fn open_to_proto(s: &Sample, q: Option<QueueState>) -> Option<pb::OpenLoop> {
    let q = q?;
    let svc = &s.service;
    Some(pb::OpenLoop {
        service: Some(pb::Latency {
            histogram: histogram::encode_plain(&svc.hist).unwrap_or_default(),
            min_ns: if svc.is_empty() { 0 } else { svc.min_ns },
            max_ns: svc.max_ns,
            sum_ns: svc.sum_ns,
        }),
        queue_length: q.queue_length,
        concurrency: q.concurrency,
        arrivals: q.arrivals,
        lag_max_ns: svc.lag_max_ns,
    })
}

pub fn final_to_proto(f: &FinalReport) -> pb::Final {
    pb::Final {
        elapsed_ns: f.elapsed.as_nanos() as u64,
        events: f.sample.events,
        latency: Some(latency_to_proto(&f.sample)),
        threads: f
            .threads
            .iter()
            .map(|&(events, busy_ns)| pb::ThreadStat { events, busy_ns })
            .collect(),
        aborted: f.aborted.clone().unwrap_or_default(),
        open_loop: open_to_proto(&f.sample, f.open),
        txns: txns_to_proto(&f.sample),
        db: db_to_proto(&f.sample.db),
        io: io_to_proto(&f.sample.io),
        kinds: f
            .tail
            .kinds
            .iter()
            .zip(Kind::ALL)
            .filter(|(s, _)| s.events > 0)
            .map(|(s, k)| pb::KindLatency {
                kind: k.name().into(),
                latency: Some(latency_to_proto(s)),
            })
            .collect(),
        targets: f
            .tail
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| pb::TargetStats {
                target: i as u32,
                db: db_to_proto(&t.db),
                statements: Some(latency_to_proto(&t.statements)),
            })
            .collect(),
        skipped: f.sample.skipped,
        late: f.sample.late,
        clients_aborted: f.sample.clients_aborted,
        commands: commands_to_proto(&f.tail.commands),
    }
}

/// pgbench's -r figures, per script and command.
fn commands_to_proto(c: &[Vec<crate::stats::CommandTally>]) -> Vec<pb::CommandStats> {
    c.iter()
        .enumerate()
        .flat_map(|(script, cmds)| {
            cmds.iter()
                .enumerate()
                .map(move |(command, t)| pb::CommandStats {
                    script: script as u32,
                    command: command as u32,
                    count: t.count,
                    sum_ns: t.sum_ns,
                    failures: t.failures,
                    retries: t.retries,
                })
        })
        .collect()
}
