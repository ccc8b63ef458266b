//! A run after its Start was planned, alike for every workload: the opening with its
//! progress, Ready, the wait for Go, one Interval per tick with the host's load, and the
//! Final report; the Run stream is the lease that stops the load when it breaks.

use std::sync::Arc;
use std::time::Duration;

use fleetbench_model::wire;
use fleetbench_proto::v1::{self as pb, RunEvent, RunRequest, run_event, run_request};
use tokio::sync::mpsc;
use tonic::{Status, Streaming};
use tracing::{error, info, warn};

use super::HANDSHAKE_TIMEOUT;
use super::busy::BusyGuard;
use super::start::Planned;
use crate::report;
use crate::runner::{Control, IntervalReport, OpenProgress};
use crate::servers::ServerWatch;
use crate::sql::open_error::OpenError;
use crate::workloads::{Opened, Output};

type Events = mpsc::Sender<Result<RunEvent, Status>>;

/// One Run call of a coordinator, from its Start on.
pub(super) struct Run {
    /// The stream of events to the coordinator.
    pub(super) tx: Events,
    /// The agent's claim, released when the run is over.
    pub(super) guard: BusyGuard,
    /// The coordinator's messages: Go, Stop; its end is the lease's.
    pub(super) inbound: Streaming<RunRequest>,
    pub(super) run_id: String,
    pub(super) threads: u32,
    pub(super) peer: String,
}

impl Run {
    /// Opens the planned run while streaming how far it got, then Ready and the run (or
    /// the error) on the same stream.
    pub(super) async fn open_then_drive(self, planned: Planned) {
        let Planned {
            workload,
            config,
            servers,
        } = planned;
        let warmup = config.warmup;
        let (connections, output) = (workload.connections(), workload.output());
        let progress = Arc::new(OpenProgress::default());
        // A Stop (or SIGTERM) while connections open: the rest are not opened.
        let p = progress.clone();
        self.guard.set_stopper(Arc::new(move |_| p.cancel()));
        let opening = workload.open(config, progress.clone());
        match report_opening(opening, &progress, connections, &self.tx).await {
            // Stopped as the last connection opened: nothing runs.
            Ok(_) if progress.is_cancelled() => {
                let stopped = Status::aborted("stopped while its connections were opening");
                let _ = self.tx.send(Err(stopped)).await;
            }
            Ok(opened) => {
                let servers = crate::servers::ServerWatch::start(servers);
                self.drive(opened, output, servers, warmup).await
            }
            Err(e) => {
                // What a script printed before it failed (its thread_init) goes first.
                send_output(&self.tx, output.as_deref()).await;
                let stuck = matches!(e, OpenError::Stuck(_));
                let failed = Status::failed_precondition(e.to_string());
                let _ = self.tx.send(Err(failed)).await;
                if stuck {
                    error!("{e}");
                    let _ = tokio::time::timeout(Duration::from_secs(3), self.tx.closed()).await;
                    self.guard.left_stuck_workers();
                }
            }
        }
    }

    /// Drives one opened run: Ready, wait for Go, stream intervals (with the servers'
    /// figures when it reads any), send Final.
    async fn drive(
        mut self,
        opened: Opened,
        output: Option<Arc<dyn Output>>,
        servers: Option<ServerWatch>,
        warmup: Duration,
    ) {
        let Opened {
            run: prepared,
            retries,
            disk_dir,
        } = opened;
        let control = prepared.control();
        let c = control.clone();
        self.guard
            .set_stopper(Arc::new(move |reason| c.abort(reason)));
        info!(run = %self.run_id, peer = %self.peer, threads = self.threads, "run prepared");
        let ready = ready(&prepared, &retries);
        let tx = self.tx.clone();
        send_output(&tx, output.as_deref()).await;
        if tx
            .send(Ok(event(run_event::Msg::Ready(ready))))
            .await
            .is_err()
        {
            return;
        }
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.inbound.message()).await {
            Ok(Ok(Some(RunRequest {
                msg: Some(run_request::Msg::Go(_)),
            }))) => {}
            other => {
                // Dropping `prepared` releases the parked workers without running anything.
                warn!(run = %self.run_id, "run cancelled before Go: {}", describe(&other));
                return;
            }
        }
        let watcher = tokio::spawn(lease(self.inbound, control.clone()));
        let (itx, mut irx) = mpsc::channel::<IntervalReport>(16);
        let run = tokio::spawn(prepared.go(itx));
        // The host's load, read as each interval goes out: what the interval ran beside.
        let mut host = fleetbench_model::host::HostSampler::with_disk(disk_dir.as_deref());
        if let Some(dir) = &disk_dir
            && !host.has_disk()
        {
            info!(dir = %dir.display(), "no disk figures: the directory's device has no block statistics");
        }
        // The servers' baseline when the measurement begins, after any warm-up; what it
        // noted (a missing privilege) goes out with the first interval.
        let (servers, mut noted) = match servers {
            Some(w) => {
                tokio::time::sleep(warmup).await;
                let baseline = w.read().await;
                (Some(w), baseline)
            }
            None => (None, Vec::new()),
        };
        while let Some(iv) = irx.recv().await {
            let mut msg = report::interval_to_proto(&iv);
            msg.host = host.sample().map(|h| wire::host_to_proto(&h));
            if let Some(w) = &servers {
                msg.servers = if iv.last {
                    w.read_last().await
                } else {
                    w.read().await
                };
                for s in &mut msg.servers {
                    if let Some(b) = noted
                        .iter_mut()
                        .find(|b| b.target == s.target && s.note.is_empty())
                    {
                        s.note = std::mem::take(&mut b.note);
                    }
                }
                noted.clear();
            }
            send_output(&tx, output.as_deref()).await;
            if tx
                .send(Ok(event(run_event::Msg::Interval(msg))))
                .await
                .is_err()
            {
                control.abort("coordinator went away");
            }
        }
        let fin = match run.await {
            Ok(f) => f,
            Err(e) => {
                let _ = tx
                    .send(Err(Status::internal(format!("run failed: {e}"))))
                    .await;
                watcher.abort();
                return;
            }
        };
        info!(run = %self.run_id, events = fin.sample.events, aborted = ?fin.aborted, "run finished");
        // The workers are gone: the agent is free before the coordinator learns the run is
        // over, so a next coordinator started right after it is never turned away as busy.
        // Unless some were left behind: then it stays busy until it ends, after the report.
        let left_behind = (fin.stuck > 0).then_some(self.guard);
        send_output(&tx, output.as_deref()).await;
        let fin = event(run_event::Msg::Final(report::final_to_proto(&fin)));
        let _ = tx.send(Ok(fin)).await;
        watcher.abort();
        if let Some(busy) = left_behind {
            // Until the coordinator has read it (it hangs up), for at most a few seconds.
            let _ = tokio::time::timeout(Duration::from_secs(3), tx.closed()).await;
            busy.left_stuck_workers();
        }
    }
}

/// The lease: a Stop, or the stream ending or breaking, stops all load.
async fn lease(mut inbound: Streaming<RunRequest>, control: Arc<Control>) {
    loop {
        match inbound.message().await {
            Ok(Some(RunRequest {
                msg: Some(run_request::Msg::Stop(s)),
            })) => {
                control.abort(format!("stopped by the coordinator: {}", s.reason));
                break;
            }
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => {
                control.abort("coordinator went away");
                break;
            }
        }
    }
}

/// The Ready message of an opened run: its threads, how its connections were made and
/// the connects retried.
fn ready(
    prepared: &crate::runner::PreparedRun,
    retries: &[(usize, crate::sql::opening::Reason, u64)],
) -> pb::Ready {
    pb::Ready {
        threads: prepared.threads(),
        connections: prepared
            .connections()
            .into_iter()
            .map(|(t, c)| pb::Connection {
                target: t as u32,
                client: c.client.to_string(),
                auth_plugin: c.auth_plugin,
                tls: c.tls,
                server_version: c.server_version,
                server_vars: c
                    .server_vars
                    .into_iter()
                    .map(|(name, value)| pb::ServerVar { name, value })
                    .collect(),
            })
            .collect(),
        retries: retries
            .iter()
            .map(|&(t, why, count)| pb::ConnectRetries {
                target: t as u32,
                reason: why.name().into(),
                count,
            })
            .collect(),
    }
}

/// Sends what the run's code printed since the last call, if anything.
async fn send_output(tx: &Events, output: Option<&dyn Output>) {
    let text = output.map(|o| o.take()).unwrap_or_default();
    if !text.is_empty() {
        let _ = tx
            .send(Ok(event(run_event::Msg::Output(pb::ScriptOutput { text }))))
            .await;
    }
}

/// Waits for `opening` while sending the coordinator an `Opening` message whenever more
/// connections are open (at most every 250 ms). If the coordinator goes away meanwhile,
/// the connections not yet opened are called off.
async fn report_opening(
    opening: impl std::future::Future<Output = Result<Opened, OpenError>>,
    progress: &OpenProgress,
    total: u64,
    tx: &Events,
) -> Result<Opened, OpenError> {
    tokio::pin!(opening);
    let mut every = tokio::time::interval(Duration::from_millis(250));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sent = 0;
    let mut listening = true;
    loop {
        tokio::select! {
            r = &mut opening => return r,
            _ = every.tick(), if listening => {
                let done = progress.done();
                if done != sent {
                    sent = done;
                    let msg = event(run_event::Msg::Opening(pb::Progress {
                        done,
                        total,
                        ..Default::default()
                    }));
                    if tx.send(Ok(msg)).await.is_err() {
                        listening = false;
                    }
                }
            }
            _ = tx.closed(), if listening => listening = false,
        }
        if !listening {
            progress.cancel();
        }
    }
}

fn describe<T, E: std::fmt::Display>(
    r: &Result<Result<Option<T>, E>, tokio::time::error::Elapsed>,
) -> String {
    match r {
        Err(_) => "no Go within 60s".into(),
        Ok(Err(e)) => format!("stream error: {e}"),
        Ok(Ok(None)) => "coordinator closed the stream".into(),
        Ok(Ok(Some(_))) => "coordinator sent Stop or an unexpected message".into(),
    }
}

pub(super) fn event(msg: run_event::Msg) -> RunEvent {
    RunEvent { msg: Some(msg) }
}
