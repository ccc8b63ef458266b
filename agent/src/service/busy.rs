//! One run at a time: the agent's claim on its work in progress, and how to stop that work
//! from a Stop call or a signal.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tonic::Status;
use tracing::warn;

/// Facts about the run in progress, for the "busy" answer.
#[derive(Debug, Clone)]
pub(super) struct BusyInfo {
    pub(super) run_id: String,
    pub(super) since: SystemTime,
    pub(super) peer: String,
}

/// Stops the work in progress, whatever it is; called with the reason.
pub(super) type Stopper = Arc<dyn Fn(String) + Send + Sync>;

/// The run in progress and how to stop it, shared by every call to the agent.
#[derive(Clone, Default)]
pub(super) struct Busy {
    /// The run in progress, if any: an agent runs one at a time.
    pub(super) run: Arc<Mutex<Option<BusyInfo>>>,
    /// How to stop it (the Stop RPC).
    pub(super) stopper: Arc<Mutex<Option<Stopper>>>,
}

impl Busy {
    /// The run in progress, if any.
    pub(super) fn current(&self) -> Option<BusyInfo> {
        self.run.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Stops the work in progress, if any, giving `reason`; true if there was some.
    pub(super) fn stop(&self, reason: String) -> bool {
        let stopper = self
            .stopper
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match stopper {
            Some(stop) => {
                stop(reason);
                true
            }
            None => false,
        }
    }

    /// Claims the agent for `info`'s work, or says whose work holds it; `stuck` is told
    /// if the work leaves threads behind.
    pub(super) fn claim(
        &self,
        info: BusyInfo,
        stuck: Option<Arc<tokio::sync::Notify>>,
    ) -> Result<BusyGuard, Status> {
        let mut busy = self.run.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = busy.as_ref() {
            let secs = b
                .since
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            return Err(Status::unavailable(format!(
                "busy: run {} since {} (unix time) from {}",
                b.run_id, secs, b.peer
            )));
        }
        *busy = Some(info);
        Ok(BusyGuard(self.run.clone(), self.stopper.clone(), stuck))
    }
}

/// Marks the agent busy for as long as it lives.
pub(super) struct BusyGuard(
    Arc<Mutex<Option<BusyInfo>>>,
    Arc<Mutex<Option<Stopper>>>,
    Option<Arc<tokio::sync::Notify>>,
);

impl BusyGuard {
    /// Lets the Stop RPC stop this work.
    pub(super) fn set_stopper(&self, stop: Stopper) {
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop);
    }

    /// The work left worker threads behind that never return ([`AgentOptions::stuck`]).
    pub(super) fn left_stuck_workers(&self) {
        if let Some(n) = &self.2 {
            n.notify_one();
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
        release_free_memory();
    }
}

/// Hands the memory a finished job freed back to the system. Thousands of worker threads
/// spread their buffers over malloc's arenas, which keep what is freed: without this, each
/// run of an agent that stays up started from the last one's leftovers (measured: peak
/// RSS 455 MiB for one run of 10,000 connections, 542 MiB after five in a row).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // Off the caller's thread: it walks every arena.
        let _ = std::thread::Builder::new()
            .name("fb-trim".into())
            .spawn(|| {
                // SAFETY: malloc_trim only returns free memory of the allocator's own heaps.
                unsafe {
                    libc::malloc_trim(0);
                }
            });
    }
}

/// Stops whatever an agent runs, from outside its gRPC service (a signal to the process).
#[derive(Clone)]
pub struct StopHandle(pub(super) Busy);

impl StopHandle {
    /// Stops the run, prepare or cleanup in progress, if any, giving `reason`.
    pub fn stop(&self, reason: &str) {
        if self.0.stop(reason.to_string()) {
            warn!("stopping the work in progress: {reason}");
        }
    }
}
