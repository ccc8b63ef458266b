//! The OLTP workloads of sysbench 1.0 as an agent runs them: the workers and prepare and
//! cleanup, over the SQL driver layer (`crate::sql`). What a run asks for (options,
//! statement texts, schema) is the model's (`fleetbench_model::workloads::oltp`).

pub mod open;
pub mod prepare;
pub mod worker;

pub use open::plan;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::workloads::{JobFuture, TableJob, TableOp};
use prepare::Job;

impl TableJob for Job {
    fn progress(&self) -> (&AtomicBool, &AtomicU64) {
        (&self.stop, &self.done)
    }

    fn halt(&self) {
        Job::halt(self)
    }

    fn total(&self, op: TableOp) -> u64 {
        match op {
            TableOp::Prepare => self.prepare_total(),
            // One step per table.
            _ => self.cleanup_total(),
        }
    }

    fn take_notes(&self) -> Vec<String> {
        Job::take_notes(self)
    }

    fn summary(&self) -> String {
        Job::summary(self)
    }

    fn check(self: Arc<Self>, op: TableOp) -> JobFuture {
        Box::pin(async move {
            prepare::check(self.config(), op == TableOp::Prepare)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn work(self: Arc<Self>, op: TableOp, threads: u32, seed: u64) -> JobFuture {
        Box::pin(async move {
            match op {
                TableOp::Prepare => prepare::prepare(self, threads, seed).await,
                TableOp::Cleanup => prepare::cleanup(self).await,
                TableOp::Prewarm => prepare::prewarm(self, threads).await,
            }
            .map_err(|e| e.to_string())
        })
    }
}
