//! Opening an OLTP run on an agent: one worker per thread, each with its connections and
//! prepared statements, on an OS thread of its own (as sysbench) or as cooperative workers
//! in an open loop; the lean client first, mysql_async for logins it does not speak.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleetbench_model::workloads::oltp::OltpConfig;
use tokio::sync::mpsc;

use super::worker::OltpWorker;
use crate::runner::{Control, OpenProgress, PreparedRun, RunConfig};
use crate::sql::Client;
use crate::sql::asynch::AsyncClient;
use crate::sql::mysql;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::sql::pgsql::PgConn;
use crate::stats::WorkerTail;
use fleetbench_model::workloads::server::Driver;

/// What the OLTP workers of one agent are opened with.
#[derive(Clone)]
pub struct OltpThreads {
    pub cfg: Arc<OltpConfig>,
    /// This agent's first thread number among all agents' (threads pick their host of a
    /// list and their share of ids from it), and the count of all.
    pub first_thread: u64,
    pub total_threads: u64,
    pub seed: u64,
    /// How many connections are open, and whether the opening was given up.
    pub progress: Arc<OpenProgress>,
    /// The coordinator's ready timeout: failed connects are retried within it.
    pub ready_timeout: Duration,
}

/// Opens `config.threads` OLTP workers (connections and prepared statements), each on
/// an OS thread of its own and waiting at the start gate. Fails, with every connection
/// closed again, if any worker cannot open.
///
/// Workers on PostgreSQL targets use the lean PostgreSQL client. On MySQL, they use the
/// lean protocol client unless the server wants an authentication plugin it does not
/// speak (or FLEETBENCH_OLTP_CLIENT is `mysql_async`); then they use mysql_async, with
/// the same logic.
pub async fn open_run(open: OltpThreads, config: RunConfig) -> Result<PreparedRun, OpenError> {
    let drivers: Vec<Driver> = open
        .cfg
        .targets_in_use()
        .iter()
        .map(|(t, _)| open.cfg.targets[*t].driver)
        .collect();
    if drivers.contains(&Driver::Pgsql) {
        if drivers.contains(&Driver::Mysql) {
            return Err(OpenError::Setting(
                "one run's tables are on MySQL and PostgreSQL targets both: a run speaks to one kind of database (compare them in steps of a scenario)".into(),
            ));
        }
        tracing::info!(
            threads = config.threads,
            "OLTP workers use the lean PostgreSQL client"
        );
        return open_workers::<PgConn>(open, config)
            .await
            .map_err(|e| match e {
                LeanOpenError::Open(e) => e,
                LeanOpenError::Unsupported(m) => OpenError::Setting(m),
            });
    }
    let forced_async = std::env::var("FLEETBENCH_OLTP_CLIENT").is_ok_and(|v| v == "mysql_async");
    if !forced_async {
        match open_workers::<mysql::Conn>(open.clone(), config.clone()).await {
            Ok(run) => {
                tracing::info!(
                    threads = config.threads,
                    "OLTP workers use the lean protocol client"
                );
                return Ok(run);
            }
            Err(LeanOpenError::Open(e)) => return Err(e),
            Err(LeanOpenError::Unsupported(msg)) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    tracing::warn!(
                        "OLTP workers fall back to mysql_async (slower per query): {msg}"
                    );
                });
            }
        }
    }
    tracing::info!(threads = config.threads, "OLTP workers use mysql_async");
    open.progress.done.store(0, Ordering::Relaxed);
    open_workers::<AsyncClient>(open, config)
        .await
        .map_err(|e| match e {
            LeanOpenError::Open(e) => e,
            LeanOpenError::Unsupported(m) => OpenError::Connect {
                target: "(none)".into(),
                message: m,
            },
        })
}

/// Opens OLTP workers speaking `C`, each on an OS thread with blocking connections (like
/// sysbench): no async runtime between a worker and its socket.
async fn open_workers<C: Client + 'static>(
    open: OltpThreads,
    config: RunConfig,
) -> Result<PreparedRun, LeanOpenError> {
    let OltpThreads {
        cfg,
        first_thread,
        total_threads,
        seed,
        progress,
        ready_timeout,
    } = open;
    let mut run = PreparedRun::empty(config);
    progress.attach(run.control.sockets.clone());
    if let [(t, _)] = cfg.targets_in_use()[..] {
        run.single_target = Some(t);
    }
    let tail = Arc::new(Mutex::new(WorkerTail {
        one_target: run.single_target,
        ..WorkerTail::new(cfg.targets.len())
    }));
    run.oltp_tail = Some(tail.clone());
    let (tx, mut rx) = mpsc::unbounded_channel::<Result<(), LeanOpenError>>();
    let threads = run.config.threads;
    let conns_per_worker = cfg.targets_in_use().len() as u64;
    let connect_gate = Arc::new(ConnectGate::new(
        cfg.server.connect_concurrency,
        u64::from(threads) * conns_per_worker,
        cfg.targets.len(),
        ready_timeout,
    ));
    // Open loop: workers share a few threads (see `crate::coop`); else one thread each.
    let loops = cooperative_threads::<C>(&run.config)?;
    let mut tasks: Vec<crate::coop::Task> = Vec::new();
    for t in 0..threads {
        let (cfg, tail, progress) = (cfg.clone(), tail.clone(), progress.clone());
        let sockets = run.control.sockets.clone();
        let connect_gate = connect_gate.clone();
        let open = move || {
            if progress.is_cancelled() {
                return Err(OpenError::Cancelled.into());
            }
            let w = OltpWorker::<C>::open(
                cfg,
                first_thread + u64::from(t),
                total_threads,
                seed,
                sockets,
                tail,
                &connect_gate,
            )?;
            progress.done.fetch_add(conns_per_worker, Ordering::Relaxed);
            Ok(w)
        };
        let end = |w: OltpWorker<C>, control: &Control| {
            // After an abort the sockets are shut: nothing left to say.
            if control.sockets.is_cancelled() {
                w.abandon()
            } else {
                w.close()
            }
        };
        if loops > 0 {
            tasks.push(Box::new(run.worker_task(
                t,
                open,
                end,
                Some(tx.clone()),
                None,
            )));
            continue;
        }
        let spawned = run.spawn_worker(
            t,
            format!("fb-oltp-{t}"),
            Some(C::STACK_SIZE),
            open,
            end,
            Some(tx.clone()),
            None,
        );
        if let Err(e) = spawned {
            let missing = (threads - t) as usize;
            run.running.fetch_sub(missing, Ordering::AcqRel);
            run.release_workers().await;
            return Err(OpenError::Connect {
                target: "(none)".into(),
                message: format!("cannot start worker threads: {e}"),
            }
            .into());
        }
    }
    if loops > 0 {
        tracing::info!(
            threads,
            loops,
            "open loop: OLTP workers run as cooperative workers on {loops} thread(s)"
        );
        if let Err(e) = run.spawn_loops(tasks, loops, C::STACK_SIZE, tx.clone()) {
            run.release_workers().await;
            return Err(OpenError::Connect {
                target: "(none)".into(),
                message: format!("cannot start worker threads: {e}"),
            }
            .into());
        }
    }
    drop(tx);
    let failure = first_failure(&mut rx, threads, &progress).await;
    if let Some(e) = failure {
        run.release_workers().await;
        return Err(e);
    }
    run.connect_retries = connect_gate.retries();
    Ok(run)
}

/// Waits for every worker to say how its opening went, and keeps the failure that decides
/// the run's: the first, unless a worker needs a login the lean client does not speak
/// (then all fall back to mysql_async).
async fn first_failure(
    rx: &mut mpsc::UnboundedReceiver<Result<(), LeanOpenError>>,
    threads: u32,
    progress: &OpenProgress,
) -> Option<LeanOpenError> {
    let mut failure = None;
    // Every worker says once how its opening went. Counting matters: a cooperative
    // thread whose loop failed keeps its workers (and their senders) unfinished, and
    // answers for them itself, with a failure for each, even one that had opened; the
    // count may then be reached early, but only with a failure, which releases every
    // worker below.
    let mut reports = 0;
    while reports < threads {
        let Some(r) = rx.recv().await else { break };
        reports += 1;
        if let Err(e) = r {
            // One worker's failure fails the run: the others need not open theirs.
            if matches!(e, LeanOpenError::Open(_)) {
                progress.cancel();
            }
            // An unsupported login anywhere means falling back for all; it wins over
            // other errors, which are otherwise reported first come.
            let keep = match &failure {
                None => true,
                Some(LeanOpenError::Unsupported(_)) => false,
                Some(_) => matches!(e, LeanOpenError::Unsupported(_)),
            };
            if keep {
                failure = Some(e);
            }
        }
    }
    failure
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
