//! Observing a database server's (or a proxy's) host while a run loads it: one sample per
//! tick from /proc and /sys, streamed until the coordinator hangs up. An observer takes no
//! load and does not make the agent busy, so the same agent may load and observe at once.

use std::path::PathBuf;
use std::time::Duration;

use fleetbench_model::server_host::{self, Processes, ServerHostSampler};
use fleetbench_proto::v1 as pb;
use tokio::sync::mpsc;
use tonic::Status;
use tracing::info;

/// The shortest tick an observer takes: /proc's counters move in 10 ms jiffies.
const MIN_TICK: Duration = Duration::from_millis(100);

/// Starts observing as `req` asks; the samples come on the returned channel until its
/// receiver is dropped (the coordinator hung up or its run ended).
pub fn start(
    req: &pb::ObserveRequest,
    peer: &str,
) -> Result<mpsc::Receiver<Result<pb::HostSample, Status>>, Status> {
    let tick = Duration::from_millis(req.tick_ms);
    if tick < MIN_TICK || tick > Duration::from_secs(3600) {
        return Err(Status::invalid_argument(format!(
            "observe: a tick of {} ms is outside 100 ms to one hour",
            req.tick_ms
        )));
    }
    let processes = Processes::from_option(&req.processes);
    let dir = (!req.dir.is_empty()).then(|| PathBuf::from(&req.dir));
    if let Some(d) = &dir
        && !d.is_dir()
    {
        return Err(Status::invalid_argument(format!(
            "observe: {} is not a directory on this host",
            d.display()
        )));
    }
    // The server's own data directory, where this host has it (an observer on a proxy's
    // host, or a server in a container, may not): else every disk.
    let dir = dir.or_else(|| {
        let reported = PathBuf::from(&req.server_dir);
        (!req.server_dir.is_empty() && reported.is_dir()).then_some(reported)
    });
    let (tx, rx) = mpsc::channel(16);
    info!(run = %req.run_id, %peer, ?processes, "observing this host");
    let run_id = req.run_id.clone();
    tokio::spawn(async move {
        // The sampler reads files: its first reading off the async threads.
        let mut sampler =
            tokio::task::spawn_blocking(move || ServerHostSampler::new(processes, dir.as_deref()))
                .await
                .expect("the first reading does not panic");
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
        let mut seq = 0u32;
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = tx.closed() => break,
            }
            seq += 1;
            let Some(f) = sampler.sample() else {
                let _ = tx
                    .send(Err(Status::unavailable("this host's /proc cannot be read")))
                    .await;
                break;
            };
            if tx.send(Ok(server_host::to_proto(seq, &f))).await.is_err() {
                break;
            }
        }
        info!(run = %run_id, samples = seq, "observation ended");
    });
    Ok(rx)
}
