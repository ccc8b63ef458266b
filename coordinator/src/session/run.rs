//! A run: Start on every agent's stream, the Ready barrier (with the agents' progress
//! opening their connections), Go, then the collection of what comes back
//! ([`super::collect`]).

use std::future::Future;
use std::time::Duration;

use fleetbench_model::run::RunLimits;
use fleetbench_proto::v1::{self as pb, RunEvent, RunRequest, run_event, run_request};
use futures::future::join_all;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::collect::collect;
use super::connect::{AgentConn, check_ceilings, status_text};
use super::ids::{now_nanos, run_id};
use super::observer::RunObserver;
use super::participant::Participant;
use crate::error::SessionError;
use crate::merge::{Connection, RunResult};
use crate::plan::{Plan, TableSplit, Workload, split_by_threads, split_evenly, tables_for_agents};
use crate::wire;

/// Connections the agents have opened so far, per agent (done, total), as their Opening
/// messages say.
type OpeningTally = std::sync::Mutex<Vec<(u64, u64)>>;

/// Runs the plan over `conns`: threads (and events) split evenly, all agents started
/// together once every one is Ready; `watch` is told how it goes. Agents given no threads
/// (fewer threads than agents) sit the run out.
pub async fn run(
    conns: Vec<AgentConn>,
    plan: &Plan,
    watch: &mut impl RunObserver,
) -> Result<RunResult, SessionError> {
    let one_process = matches!(plan.agents, crate::plan::AgentSource::Local(_));
    check_ceilings(&conns, plan.threads, &plan.workload, one_process)?;
    let run_id = run_id();
    let conns_link = conns.first().map(|c| c.link.clone());
    let starts = start_messages(plan, &run_id, conns.len());
    let tally: OpeningTally = std::sync::Mutex::new(vec![(0, 0); starts.iter().flatten().count()]);
    let mut pending = Vec::new();
    for (conn, start) in conns.into_iter().zip(starts) {
        let Some(start) = start else {
            continue;
        };
        let slot = pending.len();
        pending.push(start_one(conn, start, plan.ready_timeout, (&tally, slot)));
    }
    let link = conns_link.as_ref();
    let mut parts = all_ready(pending, &tally, watch).await?;
    let seen = ready_result(&parts);
    watch.go(&run_id, &seen);
    let started = std::time::SystemTime::now();
    for p in &parts {
        let go = RunRequest {
            msg: Some(run_request::Msg::Go(pb::Go {})),
        };
        // A failed send shows up as a broken stream below and marks the agent lost.
        let _ = p.requests.send(go).await;
    }
    let observing = super::observe::start(plan, link, &run_id, &seen.connections);
    let mut collected = collect(&mut parts, plan, watch).await;
    collected.observed = observing.finish().await;
    // How the agents connected, as their Ready said: once, for the header and the report.
    collected.connections = seen.connections;
    collected.connect_retries = seen.connect_retries;
    collected.run_id = run_id;
    // The measurement's start: Go, then the warm-up.
    collected.started = Some(started + plan.warmup);
    collected.ended = Some(std::time::SystemTime::now());
    Ok(collected)
}

/// Each agent's Start for run `run_id`, in the agents' order: its share of the threads,
/// events, rate and tables (or warehouses), its first thread's number and seed; None for
/// an agent given no threads.
fn start_messages(plan: &Plan, run_id: &str, agents: usize) -> Vec<Option<pb::Start>> {
    let shares = split_evenly(u64::from(plan.threads), agents);
    let events = plan.events.map(|e| split_by_threads(e, &shares));
    let rates = crate::plan::split_rate(plan.rate, &shares);
    let seed = if plan.seed == 0 {
        now_nanos()
    } else {
        plan.seed
    };
    let active = shares.iter().filter(|&&t| t > 0).count();
    let tables = match &plan.workload {
        Workload::Oltp(o) => {
            let shared = o.split == TableSplit::Shared;
            tables_for_agents(&o.config.tables, active, shared)
        }
        _ => vec![Vec::new(); active],
    };
    let warehouse_shares = match &plan.workload {
        Workload::Tpcc(t) => crate::plan::warehouse_shares(t.options.warehouses, active),
        _ => Vec::new(),
    };
    let mut first_thread = 0u32;
    let mut slot = 0;
    let mut starts = Vec::with_capacity(agents);
    for (i, &threads) in shares.iter().enumerate() {
        let threads = threads as u32;
        if threads == 0 {
            starts.push(None);
            continue;
        }
        let workload = agent_workload(&plan.workload, &warehouse_shares, slot);
        let mut start = pb::Start {
            run_id: run_id.to_string(),
            workload: Some(fleetbench_model::wire::workload_to_proto(
                &workload,
                &tables[slot],
            )),
            threads,
            first_thread,
            seed: seed.wrapping_add(u64::from(first_thread)),
            total_threads: plan.threads,
            ready_timeout_ms: plan.ready_timeout.as_millis() as u64,
            ..Default::default()
        };
        RunLimits {
            time: plan.time,
            events: events.as_ref().map(|e| e[i]).filter(|&e| e > 0),
            tick: plan.tick(),
            rate: Some(rates[i]).filter(|&r| r > 0.0),
            warmup: plan.warmup,
        }
        .to_start(&mut start);
        start.sample_servers = servers_read_by(plan, slot, active);
        start.replicas = plan
            .observe
            .replicas
            .iter()
            .map(|(t, _)| fleetbench_model::wire::target_to_proto(t))
            .collect();
        start.replication_primaries = plan
            .observe
            .replicas
            .iter()
            .map(|(_, p)| *p as u32)
            .collect();
        starts.push(Some(start));
        first_thread += threads;
        slot += 1;
    }
    starts
}

/// The targets whose server status the `slot`-th of `active` agents reads each interval:
/// the targets are dealt out over the agents, so each server is read once per interval.
/// A script's targets are left out: a script need not use the database it could reach.
fn servers_read_by(plan: &Plan, slot: usize, active: usize) -> Vec<u32> {
    if matches!(plan.workload, Workload::Script(_)) || active == 0 {
        return Vec::new();
    }
    let loaded = plan.workload.targets().len();
    let first = if plan.observe.no_status { loaded } else { 0 };
    (first..loaded + plan.observe.replicas.len())
        .filter(|i| i % active == slot)
        .map(|i| i as u32)
        .collect()
}

/// The workload of the `slot`-th agent with threads: the plan's, except that TPC-C's
/// partition keeps its terminals to its share of the warehouses.
fn agent_workload(workload: &Workload, warehouse_shares: &[(u32, u32)], slot: usize) -> Workload {
    match workload {
        Workload::Tpcc(t) if t.options.partition => {
            let (first, last) = warehouse_shares[slot];
            Workload::Tpcc(Box::new(fleetbench_model::workloads::tpcc::TpccConfig {
                first_warehouse: first,
                last_warehouse: last,
                ..(**t).clone()
            }))
        }
        w => w.clone(),
    }
}

/// Waits until every agent is Ready, telling `watch` how many connections they have
/// opened every half second while that takes (and the last count, when it moved). If any
/// agent fails here, dropping the others' streams releases them unstarted.
async fn all_ready(
    starts: Vec<impl Future<Output = Result<Participant, SessionError>>>,
    tally: &OpeningTally,
    watch: &mut impl RunObserver,
) -> Result<Vec<Participant>, SessionError> {
    let joined = join_all(starts);
    tokio::pin!(joined);
    let period = Duration::from_millis(500);
    let mut every = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut shown = (0, 0);
    let started = loop {
        tokio::select! {
            r = &mut joined => break r,
            _ = every.tick() => {
                let now = opening_sum(tally);
                if now != shown && now.1 > 0 {
                    shown = now;
                    watch.opening(now.0, now.1);
                }
            }
        }
    };
    if shown.1 > 0 {
        // Whoever saw the count move sees it end.
        let last = opening_sum(tally);
        if last != shown {
            watch.opening(last.0, last.1);
        }
    }
    started.into_iter().collect()
}

/// What the agents' Ready said, as a result: how they connected to each target (each
/// distinct way once) and the connects they retried.
fn ready_result(parts: &[Participant]) -> RunResult {
    let ways: Vec<(usize, Connection)> = parts.iter().flat_map(|p| p.connections.clone()).collect();
    let mut seen = RunResult::default();
    seen.add_connections(ways);
    for p in parts {
        seen.add_connect_retries(&p.retries);
    }
    seen
}

/// (open, total) connections over all agents.
fn opening_sum(tally: &OpeningTally) -> (u64, u64) {
    let t = tally.lock().unwrap_or_else(|p| p.into_inner());
    t.iter().fold((0, 0), |(d, n), &(a, b)| {
        (d.saturating_add(a), n.saturating_add(b))
    })
}

/// Sends Start and waits for Ready. The agent may first stream how far it has got with
/// opening its connections (recorded in `tally`); `ready_timeout` counts from the last
/// such progress, so a big agent is never cancelled for being slow, but a stuck one is.
async fn start_one(
    conn: AgentConn,
    start: pb::Start,
    ready_timeout: Duration,
    (tally, slot): (&OpeningTally, usize),
) -> Result<Participant, SessionError> {
    let threads = start.threads;
    let (tx, rx) = mpsc::channel(4);
    let msg = RunRequest {
        msg: Some(run_request::Msg::Start(start)),
    };
    tx.send(msg).await.expect("receiver is alive");
    let refused = |reason: String| SessionError::Refused {
        agent: conn.name.clone(),
        reason,
    };
    // The agent opens its workers (threads, database connections) before it answers, so
    // the timeout covers the call and the first message together.
    let not_ready = |conn: &AgentConn| SessionError::NotReady {
        agent: conn.name.clone(),
        secs: ready_timeout.as_secs(),
    };
    let mut client = conn.client.clone();
    let mut events =
        match tokio::time::timeout(ready_timeout, client.run(ReceiverStream::new(rx))).await {
            Err(_) => return Err(not_ready(&conn)),
            Ok(Err(s)) => return Err(refused(status_text(&s))),
            Ok(Ok(r)) => r.into_inner(),
        };
    loop {
        match tokio::time::timeout(ready_timeout, events.message()).await {
            Err(_) => return Err(not_ready(&conn)),
            Ok(Err(s)) => return Err(refused(status_text(&s))),
            Ok(Ok(Some(RunEvent {
                msg: Some(run_event::Msg::Opening(p)),
            }))) => {
                let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = t.get_mut(slot) {
                    *e = (p.done.min(p.total), p.total);
                }
            }
            Ok(Ok(Some(RunEvent {
                msg: Some(run_event::Msg::Output(o)),
            }))) => crate::report::stdout::script_output(&o.text),
            Ok(Ok(Some(RunEvent {
                msg: Some(run_event::Msg::Ready(ready)),
            }))) => {
                // Ready means all open, whatever the last progress message said.
                let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = t.get_mut(slot) {
                    e.0 = e.1;
                }
                drop(t);
                return Ok(Participant {
                    conn,
                    threads,
                    requests: tx,
                    events: Some(events),
                    connections: ready.connections.iter().map(wire::connection).collect(),
                    retries: ready
                        .retries
                        .iter()
                        .map(|r| (r.target as usize, r.reason.clone(), r.count))
                        .collect(),
                });
            }
            Ok(Ok(_)) => {
                return Err(refused(
                    "it answered Start with something other than Ready".into(),
                ));
            }
        }
    }
}
