//! Prepare and Cleanup calls: a workload's table job (or fileio's files) chosen once, here,
//! then run alike for all with its progress streamed every 250 ms.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fleetbench_model::wire;
use fleetbench_proto::v1::{self as pb, workload_spec::Kind};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::AgentService;
use super::busy::BusyInfo;
use super::start::{load_files, status};
use crate::workloads::fileio::FileJob;
use crate::workloads::oltp::prepare::Job;
use crate::workloads::pgbench::init::PgbenchJob;
use crate::workloads::tpcc::job::TpccJob;
use crate::workloads::{TableJob, TableOp};

type Progress = ReceiverStream<Result<pb::Progress, Status>>;

impl AgentService {
    /// Prepare (create and load) or cleanup (drop) this agent's tables, streaming progress
    /// every 250 ms. A dry run only checks what the real one would need.
    pub(super) async fn table_job(
        &self,
        req: Request<pb::PrepareRequest>,
        create: bool,
    ) -> Result<Response<Progress>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let r = req.into_inner();
        let op = match (create, r.prewarm) {
            (true, false) => TableOp::Prepare,
            (true, true) => TableOp::Prewarm,
            (false, _) => TableOp::Cleanup,
        };
        let kind = r.workload.as_ref().and_then(|w| w.kind.as_ref());
        let job = self.job(kind, op, r.seed)?;
        let guard = self.claim(BusyInfo {
            run_id: r.run_id.clone(),
            since: SystemTime::now(),
            peer,
        })?;
        job.check_host(op, r.threads).map_err(status)?;
        let stop_job = job.clone();
        guard.set_stopper(Arc::new(move |_| stop_job.halt()));
        let total = job.total(op);
        let (tx, rx) = mpsc::channel(16);
        if r.dry_run {
            job.clone()
                .check(op)
                .await
                .map_err(Status::failed_precondition)?;
            let ok = pb::Progress {
                done: 0,
                total,
                summary: "ok".into(),
                ..Default::default()
            };
            let _ = tx.send(Ok(ok)).await;
            return Ok(Response::new(ReceiverStream::new(rx)));
        }
        let (threads, seed) = (r.threads, r.seed);
        tokio::spawn(async move {
            let result = with_progress(&job, op, threads, seed, total, &tx).await;
            let msg = match result {
                Ok(()) => {
                    let (violation_count, violations) = job.violations();
                    Ok(pb::Progress {
                        done: job.done(),
                        total,
                        summary: job.summary(),
                        violation_count,
                        violations,
                        notes: Vec::new(),
                    })
                }
                Err(e) => Err(Status::aborted(e)),
            };
            // Free before the coordinator hears the job is over (see `drive`).
            drop(guard);
            let _ = tx.send(msg).await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    /// The one place that names every workload with tables (or files) of its own.
    fn job(
        &self,
        kind: Option<&Kind>,
        op: TableOp,
        seed: u64,
    ) -> Result<Arc<dyn TableJob>, Status> {
        let invalid = |e: wire::WireError| Status::invalid_argument(e.0);
        Ok(match kind {
            Some(Kind::Oltp(o)) => {
                let mut cfg = wire::oltp_from_proto(o).map_err(invalid)?;
                load_files(&mut cfg.targets)?;
                Job::new(Arc::new(cfg))
            }
            Some(Kind::Tpcc(t)) => {
                let mut cfg = wire::tpcc_from_proto(t).map_err(invalid)?;
                load_files(std::slice::from_mut(&mut cfg.target))?;
                TpccJob::new(Arc::new(cfg), seed)
            }
            Some(Kind::Pgbench(p)) => {
                let mut cfg = wire::pgbench_from_proto(p).map_err(invalid)?;
                load_files(std::slice::from_mut(&mut cfg.target))?;
                PgbenchJob::new(Arc::new(cfg))
            }
            Some(Kind::Options(_)) if op == TableOp::Prewarm => {
                return Err(Status::invalid_argument("prewarm is for OLTP tables"));
            }
            Some(Kind::Options(f)) => FileJob::new(
                wire::fileio_from_proto(f, &self.options.work_dir, seed).map_err(invalid)?,
            ),
            _ => {
                return Err(Status::invalid_argument(
                    "prepare and cleanup need an OLTP or fileio workload",
                ));
            }
        })
    }
}

/// Runs `job` while sending its progress every 250 ms; stops it if nobody listens.
async fn with_progress(
    job: &Arc<dyn TableJob>,
    op: TableOp,
    threads: u32,
    seed: u64,
    total: u64,
    tx: &mpsc::Sender<Result<pb::Progress, Status>>,
) -> Result<(), String> {
    let work = job.clone().work(op, threads, seed);
    tokio::pin!(work);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            r = &mut work => return r,
            _ = tick.tick() => {
                let p = pb::Progress {
                    done: job.done(),
                    total,
                    notes: job.take_notes(),
                    ..Default::default()
                };
                if tx.send(Ok(p)).await.is_err() {
                    // Nobody is watching any more: stop loading.
                    job.halt();
                }
            }
        }
    }
}
