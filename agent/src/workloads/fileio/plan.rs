//! fileio as the service sees it: a run planned from a Start message (the files opened
//! now, within what the host has) and the prepare and cleanup of the files as a table job.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use super::{FileJob, FileSet, Fileio, FileioConfig, check_host, resolve_dir};
use crate::workloads::{JobFuture, PlanError, TableJob, TableOp, Threads, Workload, blocking};

/// A fileio run: the host's limits checked and the files opened before Ready; each
/// interval's host load then describes the disk of the files' directory.
pub fn plan(cfg: Box<FileioConfig>, threads: u32) -> Result<Box<dyn Workload>, PlanError> {
    if cfg.mode.is_none() {
        return Err(PlanError::Invalid("fileio run needs a test mode".into()));
    }
    check_host(&cfg, threads, false).map_err(|e| PlanError::Exhausted(e.to_string()))?;
    let dir =
        resolve_dir(&cfg.work_dir, &cfg.file_dir, false).unwrap_or_else(|_| cfg.work_dir.clone());
    let set = FileSet::open(*cfg).map_err(|e| PlanError::Failed(e.to_string()))?;
    if let Some(engine) = set.async_engine() {
        tracing::info!(engine, "asynchronous file I/O");
    }
    Ok(Box::new(Threads {
        workload: Arc::new(Fileio(Arc::new(set))),
        disk_dir: Some(dir),
    }))
}

impl TableJob for FileJob {
    fn progress(&self) -> (&AtomicBool, &AtomicU64) {
        (&self.stop, &self.done)
    }

    fn total(&self, op: TableOp) -> u64 {
        match op {
            TableOp::Prepare => self.prepare_total(),
            _ => self.cleanup_total(),
        }
    }

    fn summary(&self) -> String {
        FileJob::summary(self)
    }

    fn check_host(&self, op: TableOp, threads: u32) -> Result<(), PlanError> {
        check_host(&self.cfg, threads, op == TableOp::Prepare)
            .map_err(|e| PlanError::Exhausted(e.to_string()))
    }

    fn check(self: Arc<Self>, _op: TableOp) -> JobFuture {
        Box::pin(async move { FileJob::check(&self).map_err(|e| e.to_string()) })
    }

    fn work(self: Arc<Self>, op: TableOp, threads: u32, _seed: u64) -> JobFuture {
        Box::pin(blocking("file job", move || {
            if op == TableOp::Prepare {
                self.prepare(threads)
            } else {
                self.cleanup()
            }
        }))
    }
}
