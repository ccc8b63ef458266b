//! Opening an OLTP run on an agent: one worker per thread, each with its connections and
//! prepared statements, on an OS thread of its own (as sysbench) or as cooperative workers
//! in an open loop; in the client `crate::sql::choose` picks.

use std::sync::Arc;

use fleetbench_model::workloads::oltp::OltpConfig;
use fleetbench_model::workloads::server::Driver;

use super::worker::OltpWorker;
use crate::runner::{Control, OpenProgress, PreparedRun, RunConfig, Workers};
use crate::sql::Client;
use crate::sql::choose::{ForClient, open_with};
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::stats::WorkerTail;
use crate::workloads::{OpenFuture, Opened, PlanError, Share, Workload};

/// The OLTP workers of one agent, as a Start message plans them.
pub struct OltpRun {
    cfg: Arc<OltpConfig>,
    share: Share,
}

/// An OLTP run: its connections (one per worker and target in use) within the host's
/// open-files limit.
pub fn plan(cfg: OltpConfig, share: &Share) -> Result<Box<dyn Workload>, PlanError> {
    let run = OltpRun {
        cfg: Arc::new(cfg),
        share: *share,
    };
    let (soft, hard) = fleetbench_model::limits::nofile()
        .map_err(|e| PlanError::Failed(format!("cannot read the open-files limit: {e}")))?;
    fleetbench_model::limits::check_files(run.connections(), soft, hard)
        .map_err(PlanError::Exhausted)?;
    Ok(Box::new(run))
}

impl Workload for OltpRun {
    fn connections(&self) -> u64 {
        u64::from(self.share.threads) * self.cfg.targets_in_use().len() as u64
    }

    fn open(self: Box<Self>, config: RunConfig, progress: Arc<OpenProgress>) -> OpenFuture {
        Box::pin(open_run(*self, config, progress))
    }
}

/// One attempt at opening the workers, in one client.
struct Attempt {
    run: OltpRun,
    config: RunConfig,
    progress: Arc<OpenProgress>,
}

/// Opens `config.threads` OLTP workers (connections and prepared statements), waiting at
/// the start gate. Fails, with every connection closed again, if any worker cannot open.
async fn open_run(
    run: OltpRun,
    config: RunConfig,
    progress: Arc<OpenProgress>,
) -> Result<Opened, OpenError> {
    let drivers: Vec<Driver> = run
        .cfg
        .targets_in_use()
        .iter()
        .map(|(t, _)| run.cfg.targets[*t].driver)
        .collect();
    if drivers.contains(&Driver::Pgsql) && drivers.contains(&Driver::Mysql) {
        return Err(OpenError::Setting(
            "one run's tables are on MySQL and PostgreSQL targets both: a run speaks to one kind of database (compare them in steps of a scenario)".into(),
        ));
    }
    let driver = drivers.first().copied().unwrap_or(Driver::Mysql);
    let attempt = Attempt {
        run,
        config,
        progress,
    };
    open_with(driver, "OLTP", &attempt, &attempt.progress.done).await
}

impl ForClient for Attempt {
    type Out = Opened;

    /// Opens OLTP workers speaking `C`, each with blocking connections (like sysbench): no
    /// async runtime between a worker and its socket.
    fn open<C: Client + 'static>(
        &self,
    ) -> impl std::future::Future<Output = Result<Opened, LeanOpenError>> + Send {
        let (cfg, share) = (self.run.cfg.clone(), self.run.share);
        let (config, progress) = (self.config.clone(), self.progress.clone());
        async move {
            let mut run = PreparedRun::empty(config);
            let in_use = cfg.targets_in_use();
            let one = match in_use[..] {
                [(t, _)] => Some(t),
                _ => None,
            };
            let tail = run.set_tail(WorkerTail {
                one_target: one,
                ..WorkerTail::new(cfg.targets.len())
            });
            let threads = run.config.threads;
            let conns_per_worker = in_use.len() as u64;
            let gate = Arc::new(ConnectGate::new(
                cfg.server.connect_concurrency,
                u64::from(threads) * conns_per_worker,
                cfg.targets.len(),
                share.ready_timeout,
            ));
            let how = Workers {
                name: "fb-oltp",
                stack: C::STACK_SIZE,
                loops: cooperative_threads::<C>(&run.config)?,
                connections_each: conns_per_worker,
                last: None,
                stuck_in: None,
            };
            let sockets = run.control.sockets.clone();
            let run = run
                .open_workers(how, &progress, |t| {
                    let (cfg, tail, gate) = (cfg.clone(), tail.clone(), gate.clone());
                    let sockets = sockets.clone();
                    let thread = share.first_thread + u64::from(t);
                    let open = move || {
                        let total = share.total_threads;
                        OltpWorker::<C>::open(cfg, thread, total, share.seed, sockets, tail, &gate)
                    };
                    (open, end::<C>)
                })
                .await?;
            Ok(Opened {
                retries: gate.retries(),
                ..Opened::run(run)
            })
        }
    }
}

/// A worker's end: after an abort the sockets are shut, and there is nothing left to say.
fn end<C: Client>(w: OltpWorker<C>, control: &Control) {
    if control.sockets.is_cancelled() {
        w.abandon()
    } else {
        w.close()
    }
}

/// How many cooperative threads carry the OLTP workers of a run with `config` speaking `C`:
/// 0 (one OS thread per worker, as sysbench) for a closed loop or a client that cannot
/// cooperate. An open loop's workers share FLEETBENCH_OPEN_LOOP_THREADS threads (0: a
/// thread each), by default one per two cores: each thread wakes once for all the replies
/// and arrivals that come together, and fewer threads share more wake-ups, while one
/// thread serves some 100,000 point selects a second.
fn cooperative_threads<C: Client>(config: &RunConfig) -> Result<usize, OpenError> {
    if !C::COOPERATIVE || !config.rate.is_some_and(|r| r > 0.0) {
        return Ok(0);
    }
    let wanted = match std::env::var("FLEETBENCH_OPEN_LOOP_THREADS") {
        Ok(v) => v.trim().parse::<usize>().map_err(|_| {
            OpenError::Setting(format!(
                "FLEETBENCH_OPEN_LOOP_THREADS must be a whole number of threads (0: one per worker), not '{v}'"
            ))
        })?,
        Err(_) => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores / 2).max(1)
        }
    };
    Ok(wanted.min(config.threads as usize))
}
