//! TPC-C as the service sees it: a run whose tables are checked before any terminal
//! starts, and the table jobs (create, load, index, check, cleanup) with their progress.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use fleetbench_model::workloads::tpcc::TpccConfig;

use super::job::TpccJob;
use super::txn::Tpcc;
use crate::runner::{OpenProgress, PreparedRun, RunConfig};
use crate::sql::open_error::OpenError;
use crate::workloads::{
    JobFuture, OpenFuture, Opened, Share, TableJob, TableOp, Workload, blocking,
};

/// A TPC-C run on this agent's share of the warehouses.
pub struct TpccRun {
    cfg: Arc<TpccConfig>,
    share: Share,
}

/// A TPC-C run; its tables are checked when it opens.
pub fn plan(cfg: Box<TpccConfig>, share: &Share) -> Box<dyn Workload> {
    Box::new(TpccRun {
        cfg: Arc::new(*cfg),
        share: *share,
    })
}

impl Workload for TpccRun {
    fn open(self: Box<Self>, config: RunConfig, _progress: Arc<OpenProgress>) -> OpenFuture {
        Box::pin(async move {
            let TpccRun { cfg, share } = *self;
            // A run on tables that are not there (or hold fewer warehouses) is refused with
            // one line before any terminal starts.
            let job = TpccJob::new(cfg.clone(), share.seed);
            let conn = tokio::task::spawn_blocking(move || job.check_run())
                .await
                .map_err(|e| OpenError::Setting(format!("check failed: {e}")))?
                .map_err(|e| OpenError::Setting(e.to_string()))?;
            let workload = Tpcc::new(cfg, share.seed, share.first_thread);
            let mut run = PreparedRun::new(Arc::new(workload), config)
                .map_err(|e| OpenError::Setting(format!("cannot start worker threads: {e}")))?;
            run.set_target(Some(conn));
            Ok(Opened::run(run))
        })
    }
}

impl TableJob for TpccJob {
    fn progress(&self) -> (&AtomicBool, &AtomicU64) {
        (&self.stop, &self.done)
    }

    fn total(&self, op: TableOp) -> u64 {
        TpccJob::total(self, op == TableOp::Cleanup)
    }

    fn summary(&self) -> String {
        TpccJob::summary(self)
    }

    fn violations(&self) -> (u64, Vec<String>) {
        self.violations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn check(self: Arc<Self>, op: TableOp) -> JobFuture {
        Box::pin(blocking("check", move || {
            TpccJob::check(&self, op == TableOp::Cleanup)
        }))
    }

    fn work(self: Arc<Self>, op: TableOp, threads: u32, _seed: u64) -> JobFuture {
        Box::pin(async move {
            if op == TableOp::Prewarm {
                return Err("prewarm is for OLTP tables".into());
            }
            blocking("TPC-C job", move || {
                TpccJob::work(&self, op == TableOp::Cleanup, threads)
            })
            .await
        })
    }
}
