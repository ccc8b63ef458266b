//! pgbench on an agent: its built-in scripts as a native workload (one lean PostgreSQL
//! connection per client, the clients cooperative workers sharing the agent's `-j`
//! threads, transactions recorded by script) and its initialisation steps (`init`). What a run asks for is the model's
//! (`fleetbench_model::workloads::pgbench`); the statements are in `sql`.

pub mod init;
pub mod script;
pub mod sql;
pub mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleetbench_model::workloads::pgbench::PgbenchConfig;
use fleetbench_model::workloads::server::DEFAULT_CONNECT_CONCURRENCY;

use crate::runner::{Control, OpenProgress, PreparedRun, RunConfig, Workers};
use crate::sql::open_error::OpenError;
use crate::sql::opening::ConnectGate;
use crate::sql::pgsql::PgConn;
use crate::sql::{Client, ConnInfo};
use crate::workloads::{
    JobFuture, OpenFuture, Opened, Share, TableJob, TableOp, Workload, blocking,
};
use init::PgbenchJob;
use script::{ScriptWorker, Scripts};
use worker::PgbenchWorker;

/// One client: the native worker runs built-in scripts alone; script files (and `-C`)
/// run in the interpreter.
pub enum PgClient {
    Native(PgbenchWorker),
    Script(ScriptWorker),
}

impl PgClient {
    fn info(&self) -> crate::sql::ConnInfo {
        match self {
            PgClient::Native(w) => w.info(),
            PgClient::Script(w) => w.info(),
        }
    }

    fn server_version(&self) -> String {
        match self {
            PgClient::Native(w) => w.server_version(),
            PgClient::Script(w) => w.server_version(),
        }
    }

    fn close(self) {
        match self {
            PgClient::Native(w) => w.close(),
            PgClient::Script(w) => w.close(),
        }
    }
}

impl crate::workloads::WorkerLoop for PgClient {
    #[inline]
    fn event(
        &mut self,
        stop: &std::sync::atomic::AtomicBool,
        io: &mut fleetbench_model::counters::IoCounters,
    ) -> crate::workloads::Step {
        match self {
            PgClient::Native(w) => w.event(stop, io),
            PgClient::Script(w) => w.event(stop, io),
        }
    }

    fn skip(&mut self) -> Option<usize> {
        match self {
            PgClient::Native(w) => w.skip(),
            PgClient::Script(w) => w.skip(),
        }
    }
}

/// pgbench's clients on this agent.
pub struct PgbenchRun {
    cfg: Arc<PgbenchConfig>,
    share: Share,
}

/// A pgbench run of its built-in scripts; its clients connect when it opens.
pub fn plan(cfg: Box<PgbenchConfig>, share: &Share) -> Box<dyn Workload> {
    Box::new(PgbenchRun {
        cfg: Arc::new(*cfg),
        share: *share,
    })
}

impl Workload for PgbenchRun {
    fn connections(&self) -> u64 {
        u64::from(self.share.threads)
    }

    fn open(self: Box<Self>, config: RunConfig, progress: Arc<OpenProgress>) -> OpenFuture {
        Box::pin(open_run(*self, config, progress))
    }
}

/// Opens `config.threads` clients, each connecting (and preparing, with `-M prepared`)
/// as a cooperative worker of one of `cfg.jobs` threads (or on an OS thread of its own
/// with `jobs` 0), parked at the start gate. Fails, every connection closed again,
/// if one cannot open. `-t` is a limit per client (the agent's event limit is then left
/// to older agents), `-L` the run's latency limit, skipping late transactions with `-R`.
async fn open_run(
    open: PgbenchRun,
    mut config: RunConfig,
    progress: Arc<OpenProgress>,
) -> Result<Opened, OpenError> {
    let PgbenchRun { cfg, share } = open;
    if cfg.transactions_per_client > 0 {
        config.events_per_thread = Some(cfg.transactions_per_client);
        config.event_limit = None;
    }
    if cfg.latency_limit_us > 0 {
        config.latency_limit = Some(Duration::from_micros(cfg.latency_limit_us));
        config.skip_late = config.rate.is_some();
    }
    if let Some(sampling) = cfg.log_sampling {
        config.txn_log = Some(crate::txnlog::TxnLogConfig {
            first_client: share.first_thread,
            sampling,
        });
    }
    let mut run = PreparedRun::empty(config);
    // How the first client got in, and the server's version, are set once all are in.
    let tail = run.set_target(None);
    let sink = cfg.per_statement.then(|| tail.clone());
    let threads = run.config.threads;
    let concurrency = DEFAULT_CONNECT_CONCURRENCY.parse().unwrap_or(16);
    let gate = Arc::new(ConnectGate::new(
        concurrency,
        u64::from(threads),
        1,
        share.ready_timeout,
    ));
    let info: Arc<Mutex<Option<ConnInfo>>> = Arc::default();
    // The clients share `jobs` threads, each one epoll loop of cooperative workers (see
    // `crate::coop`), as pgbench's threads multiplex their connections: replies that come
    // together cost one wake-up, not one a client. 0 (an older coordinator): a thread each.
    let how = Workers {
        name: "fb-pgbench",
        stack: <PgConn as Client>::STACK_SIZE,
        loops: (cfg.jobs as usize).min(threads as usize),
        connections_each: 1,
        last: None,
        stuck_in: None,
    };
    let scripts = if cfg.builtins_only() && !cfg.connect_each {
        None
    } else {
        let parsed = Scripts::parse(&cfg).map_err(|message| OpenError::Prepare {
            target: cfg.target.describe(),
            message,
        })?;
        Some(Arc::new(parsed))
    };
    let sockets = run.control.sockets.clone();
    let run = run
        .open_workers(how, &progress, |t| {
            let (own, gate, info) = (cfg.clone(), gate.clone(), info.clone());
            let (sockets, sink, scripts) = (sockets.clone(), sink.clone(), scripts.clone());
            let client = share.first_thread + u64::from(t);
            let seed = share.seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            // The coordinator gives each agent the run's seed plus its first client's number.
            let run_seed = share.seed.wrapping_sub(share.first_thread);
            let open = move || {
                let w = match scripts {
                    Some(s) => PgClient::Script(ScriptWorker::open(
                        own, s, client, seed, run_seed, sockets, &gate, sink,
                    )?),
                    None => PgClient::Native(PgbenchWorker::open(
                        own, client, seed, sockets, &gate, sink,
                    )?),
                };
                let mut first = info.lock().unwrap_or_else(|p| p.into_inner());
                if first.is_none() {
                    let mut i = w.info();
                    i.server_version = w.server_version();
                    *first = Some(i);
                }
                Ok(w)
            };
            (open, |w: PgClient, _: &Control| w.close())
        })
        .await
        .map_err(|e| e.into_open(&cfg.target))?;
    let first = info.lock().unwrap_or_else(|p| p.into_inner()).take();
    tail.lock().unwrap_or_else(|p| p.into_inner()).targets[0].conn =
        Some(first.unwrap_or_default());
    Ok(Opened {
        retries: gate.retries(),
        ..Opened::run(run)
    })
}

impl TableJob for PgbenchJob {
    fn progress(&self) -> (&AtomicBool, &AtomicU64) {
        (&self.stop, &self.done)
    }

    fn halt(&self) {
        PgbenchJob::halt(self)
    }

    fn total(&self, _op: TableOp) -> u64 {
        PgbenchJob::total(self)
    }

    fn summary(&self) -> String {
        PgbenchJob::summary(self)
    }

    fn check(self: Arc<Self>, _op: TableOp) -> JobFuture {
        Box::pin(blocking("check", move || PgbenchJob::check(&self)))
    }

    fn work(self: Arc<Self>, op: TableOp, threads: u32, _seed: u64) -> JobFuture {
        Box::pin(async move {
            match op {
                TableOp::Prewarm => Err("prewarm is for OLTP tables".into()),
                TableOp::Cleanup => Err("pgbench's tables are dropped by its init step d".into()),
                TableOp::Prepare => {
                    blocking("pgbench step", move || PgbenchJob::work(&self, threads)).await
                }
            }
        })
    }
}
