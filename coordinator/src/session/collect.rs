//! What comes back once a run goes: every agent's intervals, merged tick by tick as they
//! arrive, and its final report, until all have finished or are lost. Signals and
//! `--forced-shutdown` stop the agents without ending the collection, so what ran is
//! still reported.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleetbench_model::host::HostFigures;
use fleetbench_proto::histogram::CodecError;
use fleetbench_proto::v1::{self as pb, RunEvent, RunRequest, run_event, run_request};
use tokio::signal::unix::Signal;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tonic::Streaming;
use tracing::warn;

use super::connect::status_text;
use super::observer::{AgentTick, RunObserver};
use super::participant::Participant;
use crate::merge::{
    AgentResult, IntervalMerger, IntervalPart, MergedInterval, Received, RunResult,
};
use crate::plan::Plan;
use crate::servers::ServerTick;
use crate::wire::{self, AgentFinal};

/// How long past the configured time an agent may take to deliver its final report.
const FINAL_GRACE: Duration = Duration::from_secs(15);

/// What a participant's stream delivered, already decoded by its reader task so that the
/// histograms of many agents are decoded in parallel rather than one by one in the merge.
enum Delivery {
    /// Tick number and the report, or why its histogram was unreadable; the agent host's
    /// load over it.
    Interval(
        u32,
        Result<Box<IntervalPart>, CodecError>,
        Option<HostFigures>,
        Vec<ServerTick>,
        // pgbench's -l: the transactions logged in it.
        Vec<pb::TxnLogEntry>,
    ),
    Final(Box<AgentFinal>),
    Broken(String),
}

/// Receives every agent's intervals and final report until all have finished or are lost.
/// Ctrl-C sends Stop to every agent and keeps collecting, so what ran is still reported.
pub(super) async fn collect(
    parts: &mut [Participant],
    plan: &Plan,
    watch: &mut impl RunObserver,
) -> RunResult {
    let (tx, mut rx) = mpsc::channel::<(usize, Delivery)>(64);
    // What each agent's intervals added up to: a lost agent's share of the totals. Kept
    // by the agent's reader task, off the merge's path.
    let received: Vec<Arc<Mutex<Received>>> =
        (0..parts.len()).map(|_| Default::default()).collect();
    for (i, p) in parts.iter_mut().enumerate() {
        let Some(stream) = p.events.take() else {
            continue;
        };
        let reader = Reader {
            slot: i,
            sender: p.sender(),
            sum: received[i].clone(),
            tx: tx.clone(),
        };
        tokio::spawn(reader.read(stream));
    }
    drop(tx);

    let mut c = Collector::new(parts.len(), plan, received);
    // The run's time counts from the end of the warm-up.
    let deadline = plan
        .time
        .map(|t| Instant::now() + plan.warmup + t + FINAL_GRACE);
    // --forced-shutdown: agents still running this long after the run's time are stopped.
    let mut forced = match (plan.time, plan.forced_shutdown) {
        (Some(t), Some(after)) => Some((Instant::now() + plan.warmup + t + after, after)),
        _ => None,
    };
    let mut interrupts = 0u32;
    // One stream per signal for the whole run: a signal that arrives while an interval is
    // being merged waits in it instead of being lost between two select! rounds. SIGTERM
    // (systemd, Kubernetes) and SIGHUP (a closed terminal) stop the run like Ctrl-C, so
    // the partial result is still printed and saved.
    let mut signals = stop_signals();
    while c.pending > 0 {
        let released = tokio::select! {
            got = rx.recv() => match got {
                None => break,
                Some((i, d)) => c.deliver(parts, i, d, watch),
            },
            _ = sleep_until(forced.map(|f| f.0)) => {
                let after = forced.take().map_or(0, |f| f.1.as_secs());
                let reason =
                    format!("forced shutdown {after}s after the run's time (--forced-shutdown)");
                send_stop(parts, &reason);
                Vec::new()
            }
            _ = any_signal(&mut signals) => {
                interrupts += 1;
                c.result.interrupted = true;
                if interrupts > 1 {
                    break;
                }
                send_stop(parts, "interrupted by the user");
                Vec::new()
            }
            _ = sleep_until(deadline) => {
                let why = format!(
                    "no final report within {}s after the run's time",
                    FINAL_GRACE.as_secs()
                );
                c.lose_the_rest(parts, &why);
                c.pending = 0;
                Vec::new()
            }
        };
        c.release(released, watch);
    }
    c.finish(parts, watch)
}

/// One agent's reader task: decodes what its stream delivers and passes it on, until its
/// final report or the stream's end.
struct Reader {
    /// The agent's place among the participants.
    slot: usize,
    sender: wire::Sender,
    /// What its intervals added up to so far.
    sum: Arc<Mutex<Received>>,
    tx: mpsc::Sender<(usize, Delivery)>,
}

impl Reader {
    async fn read(self, mut stream: Streaming<RunEvent>) {
        loop {
            let d = match stream.message().await {
                Ok(Some(RunEvent {
                    msg: Some(run_event::Msg::Interval(mut iv)),
                })) => {
                    let part = wire::interval_part(&iv).map(Box::new);
                    if let Ok(p) = &part {
                        self.sum.lock().unwrap_or_else(|p| p.into_inner()).add(p);
                    }
                    let servers = wire::server_ticks(&iv);
                    let log = std::mem::take(&mut iv.txn_log);
                    let host = iv.host.as_ref().map(wire::host_load);
                    Delivery::Interval(iv.seq, part, host, servers, log)
                }
                Ok(Some(RunEvent {
                    msg: Some(run_event::Msg::Final(f)),
                })) => Delivery::Final(Box::new(wire::agent_final(&self.sender, &f))),
                Ok(Some(RunEvent {
                    msg: Some(run_event::Msg::Output(o)),
                })) => {
                    // A script's print: shown as it comes, as sysbench shows it.
                    crate::report::stdout::script_output(&o.text);
                    continue;
                }
                Ok(Some(_)) => continue,
                Ok(None) => Delivery::Broken("its stream ended without a final report".into()),
                Err(s) => Delivery::Broken(status_text(&s)),
            };
            let last = !matches!(d, Delivery::Interval(..));
            if self.tx.send((self.slot, d)).await.is_err() || last {
                break;
            }
        }
    }
}

/// The run's result as the agents' deliveries build it.
struct Collector {
    merger: IntervalMerger,
    result: RunResult,
    /// Each agent's row once it has finished or is lost.
    outcome: Vec<Option<AgentResult>>,
    /// Agents without an outcome yet: counted, not searched for on every message.
    pending: usize,
    /// Each agent host's load per tick, as its intervals said.
    hosts: Vec<Vec<(u32, HostFigures)>>,
    received: Vec<Arc<Mutex<Received>>>,
    /// A script run: an agent that stops on an error stops the others.
    stop_on_abort: bool,
}

impl Collector {
    fn new(agents: usize, plan: &Plan, received: Vec<Arc<Mutex<Received>>>) -> Collector {
        Collector {
            merger: IntervalMerger::new(agents, plan.tick()),
            result: RunResult::default(),
            outcome: vec![None; agents],
            pending: agents,
            hosts: vec![Vec::new(); agents],
            received,
            stop_on_abort: matches!(plan.workload, crate::plan::Workload::Script(_)),
        }
    }

    /// What agent `i`'s intervals added up to, taken.
    fn take_received(&self, i: usize) -> Received {
        std::mem::take(&mut *self.received[i].lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Takes in what agent `i` delivered; returns the merged intervals it completes.
    fn deliver(
        &mut self,
        parts: &[Participant],
        i: usize,
        d: Delivery,
        watch: &mut impl RunObserver,
    ) -> Vec<MergedInterval> {
        match d {
            Delivery::Interval(seq, part, host, servers, txn_log) => {
                if let Some(h) = host {
                    self.hosts[i].push((seq, h));
                }
                let tick = |part| AgentTick {
                    addr: &parts[i].conn.addr,
                    seq,
                    part,
                    load: host.as_ref(),
                    servers: &servers,
                    txn_log: &txn_log,
                };
                let merged = match part {
                    Ok(part) => {
                        watch.agent_interval(tick(&part));
                        self.merger.add(i, seq, *part)
                    }
                    Err(e) => {
                        warn!(agent = %parts[i].conn.addr, "dropping an interval: {e}");
                        Vec::new()
                    }
                };
                self.result.servers.extend(servers);
                merged
            }
            Delivery::Final(f) => {
                let AgentFinal {
                    agent,
                    kinds,
                    targets,
                    clients,
                    commands,
                } = *f;
                if self.outcome[i].is_none() {
                    self.pending -= 1;
                    self.result.add_statements(kinds, targets);
                    self.result.clients.merge(&clients);
                    self.result.add_commands(&commands);
                    // A script's error on one agent ends the run on every agent.
                    if let (true, crate::merge::AgentStatus::Aborted(why)) =
                        (self.stop_on_abort, &agent.status)
                        && self.pending > 0
                    {
                        let why = format!("agent {} stopped: {why}", parts[i].conn.addr);
                        send_stop(parts, &why);
                    }
                    self.outcome[i] = Some(agent);
                }
                self.merger.finish(i)
            }
            Delivery::Broken(why) => {
                if self.outcome[i].is_none() {
                    self.pending -= 1;
                    let received = self.take_received(i);
                    self.result.clients.merge(&received.clients);
                    self.outcome[i] = Some(received.into_lost(lost(&parts[i], why)));
                }
                self.merger.finish(i)
            }
        }
    }

    /// Every agent without an outcome yet is lost, for `why`.
    fn lose_the_rest(&mut self, parts: &[Participant], why: &str) {
        for (i, p) in parts.iter().enumerate() {
            if self.outcome[i].is_none() {
                let row = self.take_received(i).into_lost(lost(p, why.to_string()));
                self.outcome[i] = Some(row);
            }
        }
    }

    /// Merged intervals to `watch` and into the result.
    fn release(&mut self, merged: Vec<MergedInterval>, watch: &mut impl RunObserver) {
        for m in merged {
            watch.interval(&m);
            self.result.intervals.push(m);
        }
    }

    /// The result: agents still without an outcome (after a second interrupt) are lost,
    /// the intervals still held are released.
    fn finish(mut self, parts: &[Participant], watch: &mut impl RunObserver) -> RunResult {
        self.lose_the_rest(parts, "abandoned after a second interrupt");
        for i in 0..parts.len() {
            let merged = self.merger.finish(i);
            self.release(merged, watch);
        }
        self.result.agents = self.outcome.into_iter().flatten().collect();
        self.result.hosts = parts
            .iter()
            .zip(self.hosts)
            .map(|(p, h)| (p.conn.addr.clone(), h))
            .collect();
        self.result
    }
}

fn lost(p: &Participant, why: String) -> AgentResult {
    p.sender().lost(why)
}

/// Asks every agent to stop its run, for `reason`; does not wait.
fn send_stop(parts: &[Participant], reason: &str) {
    for p in parts {
        let stop = RunRequest {
            msg: Some(run_request::Msg::Stop(pb::Stop {
                reason: reason.to_string(),
            })),
        };
        let _ = p.requests.try_send(stop);
    }
}

/// Sleeps until `at`, or for ever without it.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// SIGINT, SIGTERM and SIGHUP (those that can be listened to).
fn stop_signals() -> Vec<Signal> {
    use tokio::signal::unix::{SignalKind, signal};
    [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ]
    .into_iter()
    .filter_map(|k| signal(k).ok())
    .collect()
}

/// Waits for the next of `signals` (for ever without any).
async fn any_signal(signals: &mut [Signal]) {
    if signals.is_empty() {
        std::future::pending::<()>().await;
    }
    futures::future::select_all(signals.iter_mut().map(|s| Box::pin(s.recv()))).await;
}
