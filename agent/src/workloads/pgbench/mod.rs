//! pgbench on an agent: its built-in scripts as a native workload (one lean PostgreSQL
//! connection per client, the clients cooperative workers sharing the agent's `-j`
//! threads, transactions recorded by script) and its initialisation steps (`init`). What a run asks for is the model's
//! (`fleetbench_model::workloads::pgbench`); the statements are in `sql`.

pub mod init;
pub mod sql;
pub mod worker;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleetbench_model::workloads::pgbench::PgbenchConfig;
use fleetbench_model::workloads::server::DEFAULT_CONNECT_CONCURRENCY;
use tokio::sync::mpsc;

use crate::runner::{OpenProgress, PreparedRun, RunConfig};
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::sql::{Client, ConnInfo};
use worker::{CommandSink, PgbenchWorker};

/// What the clients of one agent are opened with.
pub struct PgbenchThreads {
    pub cfg: Arc<PgbenchConfig>,
    /// This agent's first client among all agents' (seeds).
    pub first_thread: u64,
    pub seed: u64,
    pub progress: Arc<OpenProgress>,
    pub ready_timeout: Duration,
}

/// Opens `config.threads` clients, each connecting (and preparing, with `-M prepared`)
/// as a cooperative worker of one of `cfg.jobs` threads (or on an OS thread of its own
/// with `jobs` 0), parked at the start gate. Fails, every connection closed again,
/// if one cannot open. `-t` is a limit per client (the agent's event limit is then left
/// to older agents), `-L` the run's latency limit, skipping late transactions with `-R`.
pub async fn open_run(
    open: PgbenchThreads,
    mut config: RunConfig,
) -> Result<PreparedRun, OpenError> {
    let PgbenchThreads {
        cfg,
        first_thread,
        seed,
        progress,
        ready_timeout,
    } = open;
    if cfg.transactions_per_client > 0 {
        config.events_per_thread = Some(cfg.transactions_per_client);
        config.event_limit = None;
    }
    if cfg.latency_limit_us > 0 {
        config.latency_limit = Some(Duration::from_micros(cfg.latency_limit_us));
        config.skip_late = config.rate.is_some();
    }
    let sink: Option<CommandSink> = cfg.per_statement.then(Arc::default);
    let mut run = PreparedRun::empty(config);
    run.commands = sink.clone();
    progress.attach(run.control.sockets.clone());
    let threads = run.config.threads;
    let concurrency = DEFAULT_CONNECT_CONCURRENCY.parse().unwrap_or(16);
    let gate = Arc::new(ConnectGate::new(
        concurrency,
        u64::from(threads),
        1,
        ready_timeout,
    ));
    // How the first client got in, and the server's version, for Ready.
    let info: Arc<Mutex<Option<ConnInfo>>> = Arc::default();
    let (tx, mut rx) = mpsc::unbounded_channel::<Result<(), LeanOpenError>>();
    // The clients share `jobs` threads, each one epoll loop of cooperative workers (see
    // `crate::coop`), as pgbench's threads multiplex their connections: replies that come
    // together cost one wake-up, not one a client. 0 (an older coordinator): a thread each.
    let loops = (cfg.jobs as usize).min(threads as usize);
    let mut tasks: Vec<crate::coop::Task> = Vec::new();
    for t in 0..threads {
        let (own, progress, gate, info) =
            (cfg.clone(), progress.clone(), gate.clone(), info.clone());
        let sockets = run.control.sockets.clone();
        let sink = sink.clone();
        let client = first_thread + u64::from(t);
        let seed = seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let open = move || {
            if progress.is_cancelled() {
                return Err(OpenError::Cancelled.into());
            }
            let w = PgbenchWorker::open(own, client, seed, sockets, &gate, sink)?;
            let mut first = info.lock().unwrap_or_else(|p| p.into_inner());
            if first.is_none() {
                let mut i = w.info();
                i.server_version = w.server_version();
                *first = Some(i);
            }
            drop(first);
            progress.done.fetch_add(1, Ordering::Relaxed);
            Ok(w)
        };
        if loops > 0 {
            tasks.push(Box::new(run.worker_task(
                t,
                open,
                |w: PgbenchWorker, _| w.close(),
                Some(tx.clone()),
                None,
            )));
            continue;
        }
        let spawned = run.spawn_worker(
            t,
            format!("fb-pgbench-{t}"),
            Some(<crate::sql::pgsql::PgConn as Client>::STACK_SIZE),
            open,
            |w: PgbenchWorker, _| w.close(),
            Some(tx.clone()),
            None,
        );
        if let Err(e) = spawned {
            run.running
                .fetch_sub((threads - t) as usize, Ordering::AcqRel);
            run.release_workers().await;
            return Err(OpenError::Connect {
                target: cfg.target.describe(),
                message: format!("cannot start client threads: {e}"),
            });
        }
    }
    let stack = <crate::sql::pgsql::PgConn as Client>::STACK_SIZE;
    if loops > 0
        && let Err(e) = run.spawn_loops(tasks, loops, stack, tx.clone())
    {
        run.release_workers().await;
        return Err(OpenError::Connect {
            target: cfg.target.describe(),
            message: format!("cannot start client threads: {e}"),
        });
    }
    drop(tx);
    let mut failure = None;
    for _ in 0..threads {
        let Some(r) = rx.recv().await else { break };
        if let Err(e) = r {
            progress.cancel();
            failure.get_or_insert(e);
        }
    }
    if let Some(e) = failure {
        run.release_workers().await;
        return Err(e.into_open(&cfg.target));
    }
    let first = info.lock().unwrap_or_else(|p| p.into_inner()).take();
    run.set_target(first.unwrap_or_default());
    run.connect_retries = gate.retries();
    Ok(run)
}
