//! The agent's gRPC service: Hello, and Run with its Start / Ready / Go / Interval / Final
//! exchange. One run at a time; the Run stream is the lease, so a broken stream stops the load.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::v1::agent_server::Agent;
use fleetbench_proto::v1::{
    self as pb, HelloReply, HelloRequest, RunEvent, RunRequest, run_event, run_request,
    workload_spec,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use tracing::{error, info, warn};

use crate::report;
use crate::runner::{IntervalReport, OpenProgress, PreparedRun, RunConfig};
use crate::sql::open_error::OpenError;
use crate::workloads::fileio::{self, FileJob, FileSet};
use crate::workloads::oltp::open::{OltpThreads, open_run};
use crate::workloads::oltp::prepare::{self as oltp_prepare, Job};
use crate::workloads::pgbench::init::PgbenchJob;
use crate::workloads::tpcc::job::TpccJob;
use crate::workloads::{self, ThreadWorkload, memory, mutex, threads};
use fleetbench_model::spec::Workload;
use fleetbench_model::wire;
use fleetbench_model::workloads::oltp::OltpConfig;
use fleetbench_model::workloads::server::Target;

/// How long the coordinator may take to send Start, and then Go after Ready.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);
/// The coordinator's ready timeout when its Start does not say (`--ready-timeout`'s default).
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Facts about the run in progress, for the "busy" answer.
#[derive(Debug, Clone)]
struct BusyInfo {
    run_id: String,
    since: SystemTime,
    peer: String,
}

/// Settings of an agent that are the operator's, not the coordinator's, to choose.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Token every call must carry; None only on loopback or with --insecure.
    pub token: Option<String>,
    /// Serve TLS with this certificate and key (PEM); None = plain text.
    pub tls: Option<TlsFiles>,
    /// The only directory fileio may write in (absolute; --file-dir is relative to it).
    pub work_dir: std::path::PathBuf,
    /// The name reports show for this agent (`--name`); None = the host name.
    pub name: Option<String>,
    /// Runs sysbench Lua scripts its coordinators send (`--allow-scripts`): a script is
    /// code, so an agent refuses them unless its operator says otherwise.
    pub allow_scripts: bool,
    /// Told when a run leaves worker threads behind that never return (a script's endless
    /// loop: LuaJIT's compiled code cannot be interrupted). Only the process's end stops
    /// them, so the agent binary exits on it and its service manager starts it again; the
    /// coordinator's embedded agents end with the coordinator anyway.
    pub stuck: Option<Arc<tokio::sync::Notify>>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            token: None,
            tls: None,
            work_dir: std::env::current_dir().unwrap_or_else(|_| "/".into()),
            name: None,
            allow_scripts: false,
            stuck: None,
        }
    }
}

/// PEM contents for TLS: the agent's certificate and key, and optionally the CA that
/// client certificates must be signed by (then every client must present one).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
    pub client_ca: Option<Vec<u8>>,
}

/// Stops the work in progress, whatever it is; called with the reason.
type Stopper = Arc<dyn Fn(String) + Send + Sync>;

/// State shared by every call to this agent.
pub struct AgentService {
    hostname: String,
    /// Cores, CPU model, kernel and memory, read once at start.
    facts: fleetbench_model::host::HostFacts,
    options: AgentOptions,
    /// The run in progress, if any: an agent runs one at a time.
    busy: Arc<Mutex<Option<BusyInfo>>>,
    /// How to stop it (the Stop RPC).
    stopper: Arc<Mutex<Option<Stopper>>>,
}

impl Default for AgentService {
    fn default() -> Self {
        AgentService::new(AgentOptions::default())
    }
}

/// Marks the agent busy for as long as it lives.
struct BusyGuard(
    Arc<Mutex<Option<BusyInfo>>>,
    Arc<Mutex<Option<Stopper>>>,
    Option<Arc<tokio::sync::Notify>>,
);

impl BusyGuard {
    /// Lets the Stop RPC stop this work.
    fn set_stopper(&self, stop: Stopper) {
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop);
    }

    /// The work left worker threads behind that never return ([`AgentOptions::stuck`]).
    fn left_stuck_workers(&self) {
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
pub struct StopHandle(Arc<Mutex<Option<Stopper>>>);

impl StopHandle {
    /// Stops the run, prepare or cleanup in progress, if any, giving `reason`.
    pub fn stop(&self, reason: &str) {
        let stopper = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(stop) = stopper {
            warn!("stopping the work in progress: {reason}");
            stop(reason.to_string());
        }
    }
}

impl AgentService {
    /// A handle that stops this agent's work in progress.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.stopper.clone())
    }

    pub fn new(options: AgentOptions) -> Self {
        AgentService {
            hostname: options
                .name
                .clone()
                .unwrap_or_else(|| gethostname::gethostname().to_string_lossy().into_owned()),
            facts: fleetbench_model::host::HostFacts::read(),
            options,
            busy: Arc::default(),
            stopper: Arc::default(),
        }
    }

    fn claim(&self, info: BusyInfo) -> Result<BusyGuard, Status> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
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
        Ok(BusyGuard(
            self.busy.clone(),
            self.stopper.clone(),
            self.options.stuck.clone(),
        ))
    }
}

#[tonic::async_trait]
impl Agent for AgentService {
    async fn hello(&self, req: Request<HelloRequest>) -> Result<Response<HelloReply>, Status> {
        let req = req.into_inner();
        if req.protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "protocol version mismatch: agent {} speaks v{PROTOCOL_VERSION}, coordinator {} speaks v{}",
                env!("CARGO_PKG_VERSION"),
                req.coordinator_version,
                req.protocol_version
            )));
        }
        // What this host can give a run now, so that a coordinator refuses a plan beyond it.
        let ceiling = fleetbench_model::limits::thread_ceiling();
        let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        Ok(Response::new(HelloReply {
            protocol_version: PROTOCOL_VERSION,
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
            hostname: self.hostname.clone(),
            cores: self.facts.cores,
            workloads: workloads::AVAILABLE
                .iter()
                .filter(|w| self.options.allow_scripts || **w != "script")
                .map(|s| s.to_string())
                .collect(),
            busy_run_id: busy.as_ref().map(|b| b.run_id.clone()).unwrap_or_default(),
            busy_since_unix: busy
                .as_ref()
                .map(|b| {
                    b.since
                        .duration_since(UNIX_EPOCH)
                        .unwrap_or_default()
                        .as_secs()
                })
                .unwrap_or_default(),
            busy_peer: busy.as_ref().map(|b| b.peer.clone()).unwrap_or_default(),
            cpu_model: self.facts.cpu_model.clone(),
            kernel: self.facts.kernel.clone(),
            mem_total_bytes: self.facts.mem_total_bytes,
            max_threads: ceiling.threads,
            max_threads_limit: ceiling.reason(),
            max_open_files: fleetbench_model::limits::nofile().map_or(0, |(soft, _)| soft),
            mem_available_bytes: fleetbench_model::limits::available_memory().unwrap_or(0),
        }))
    }

    type RunStream = ReceiverStream<Result<RunEvent, Status>>;

    async fn stop(&self, req: Request<pb::StopRequest>) -> Result<Response<pb::StopReply>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let reason = req.into_inner().reason;
        let run_id = self
            .busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|b| b.run_id.clone())
            .unwrap_or_default();
        let stopper = self
            .stopper
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(stop) = stopper {
            warn!(run = %run_id, %peer, "stopped on request: {reason}");
            stop(format!("stopped by {peer}: {reason}"));
        }
        Ok(Response::new(pb::StopReply { run_id }))
    }
    type PrepareStream = ReceiverStream<Result<pb::Progress, Status>>;
    type CleanupStream = ReceiverStream<Result<pb::Progress, Status>>;

    async fn prepare(
        &self,
        req: Request<pb::PrepareRequest>,
    ) -> Result<Response<Self::PrepareStream>, Status> {
        self.table_job(req, true).await
    }

    async fn cleanup(
        &self,
        req: Request<pb::PrepareRequest>,
    ) -> Result<Response<Self::CleanupStream>, Status> {
        self.table_job(req, false).await
    }

    async fn run(
        &self,
        req: Request<Streaming<RunRequest>>,
    ) -> Result<Response<Self::RunStream>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a: SocketAddr| a.to_string());
        let mut inbound = req.into_inner();
        let start = match tokio::time::timeout(HANDSHAKE_TIMEOUT, inbound.message()).await {
            Ok(Ok(Some(RunRequest {
                msg: Some(run_request::Msg::Start(s)),
            }))) => s,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(Status::deadline_exceeded("no Start message within 60s")),
            Ok(_) => {
                return Err(Status::invalid_argument(
                    "the first Run message must be Start",
                ));
            }
        };
        // Claimed before the spec is looked at: a busy agent allocates nothing for a
        // second coordinator, whatever it asks for.
        let guard = self.claim(BusyInfo {
            run_id: start.run_id.clone(),
            since: SystemTime::now(),
            peer: peer.clone(),
        })?;
        let planned = plan_from_start(&start, &self.options.work_dir)?;
        if matches!(planned, Planned::Script(..)) && !self.options.allow_scripts {
            return Err(Status::permission_denied(SCRIPTS_REFUSED));
        }
        let (tx, rx) = mpsc::channel(16);
        // fileio: its files' directory, whose disk each interval's host load describes.
        let mut disk_dir = None;
        let no_threads = |e| Status::internal(format!("cannot start worker threads: {e}"));
        let prepared = match planned {
            Planned::Threads(workload, config) => {
                PreparedRun::new(workload, config).map_err(no_threads)?
            }
            Planned::Files(workload, config, dir) => {
                disk_dir = Some(dir);
                PreparedRun::new(workload, config).map_err(no_threads)?
            }
            Planned::Tpcc(cfg, config) => {
                // A run on tables that are not there (or hold fewer warehouses) is refused
                // with one line before any terminal starts.
                let job = TpccJob::new(cfg.clone(), start.seed);
                let conn = tokio::task::spawn_blocking(move || job.check_run())
                    .await
                    .map_err(|e| Status::internal(format!("check failed: {e}")))?
                    .map_err(|e| Status::failed_precondition(e.to_string()))?;
                let workload =
                    workloads::tpcc::txn::Tpcc::new(cfg, start.seed, u64::from(start.first_thread));
                let mut run = PreparedRun::new(Arc::new(workload), config)
                    .map_err(|e| Status::internal(format!("cannot start worker threads: {e}")))?;
                run.set_target(conn);
                run
            }
            Planned::Pgbench(cfg, config) => {
                let progress = Arc::new(OpenProgress::default());
                let threads = workloads::pgbench::PgbenchThreads {
                    cfg,
                    first_thread: u64::from(start.first_thread),
                    seed: start.seed,
                    progress: progress.clone(),
                    ready_timeout: ready_timeout(&start),
                };
                let opening = Opening {
                    connections: u64::from(config.threads),
                    run: workloads::pgbench::open_run(threads, config),
                    progress,
                    output: None,
                };
                tokio::spawn(opening.then_drive(tx, guard, inbound, start.clone(), peer));
                return Ok(Response::new(ReceiverStream::new(rx)));
            }
            Planned::Script(cfg, config, total_threads) => {
                let progress = Arc::new(OpenProgress::default());
                let output = Arc::new(workloads::script::worker::Output::default());
                let threads = workloads::script::ScriptThreads {
                    cfg,
                    first_thread: u64::from(start.first_thread),
                    total_threads,
                    seed: start.seed,
                    progress: progress.clone(),
                    ready_timeout: ready_timeout(&start),
                    output: output.clone(),
                };
                let opening = Opening {
                    connections: u64::from(config.threads),
                    run: workloads::script::open_run(threads, config),
                    progress,
                    output: Some(output),
                };
                tokio::spawn(opening.then_drive(tx, guard, inbound, start.clone(), peer));
                return Ok(Response::new(ReceiverStream::new(rx)));
            }
            Planned::Oltp(cfg, config, total_threads) => {
                let connections = u64::from(config.threads) * cfg.targets_in_use().len() as u64;
                let (soft, hard) = fleetbench_model::limits::nofile().map_err(|e| {
                    Status::internal(format!("cannot read the open-files limit: {e}"))
                })?;
                fleetbench_model::limits::check_files(connections, soft, hard)
                    .map_err(Status::resource_exhausted)?;
                // Thousands of connections take a while: answer at once and stream how
                // far the opening has got, then Ready (or the error) on the same stream.
                let progress = Arc::new(OpenProgress::default());
                let threads = OltpThreads {
                    cfg,
                    first_thread: u64::from(start.first_thread),
                    total_threads,
                    seed: start.seed,
                    progress: progress.clone(),
                    ready_timeout: ready_timeout(&start),
                };
                let opening = Opening {
                    connections,
                    run: open_run(threads, config),
                    progress,
                    output: None,
                };
                tokio::spawn(opening.then_drive(tx, guard, inbound, start.clone(), peer));
                return Ok(Response::new(ReceiverStream::new(rx)));
            }
        };
        let control = prepared.control();
        guard.set_stopper(Arc::new(move |reason| control.abort(reason)));
        info!(run = %start.run_id, %peer, threads = start.threads, "run prepared");
        tokio::spawn(drive(prepared, inbound, tx, guard, start.run_id, disk_dir));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// The coordinator's ready timeout of a Start (how long the agent may take to open).
fn ready_timeout(start: &pb::Start) -> Duration {
    match start.ready_timeout_ms {
        0 => DEFAULT_READY_TIMEOUT,
        ms => Duration::from_millis(ms),
    }
}

/// A run whose workers open their connections first (OLTP, scripts): the opening, its
/// progress and, for a script, the output its states make meanwhile.
struct Opening<F> {
    run: F,
    progress: Arc<OpenProgress>,
    connections: u64,
    output: Option<Arc<workloads::script::worker::Output>>,
}

impl<F: std::future::Future<Output = Result<PreparedRun, OpenError>>> Opening<F> {
    /// Opens while streaming how far it got, then Ready and the run (or the error) on the
    /// same stream.
    async fn then_drive(
        self,
        tx: mpsc::Sender<Result<RunEvent, Status>>,
        guard: BusyGuard,
        inbound: Streaming<RunRequest>,
        start: pb::Start,
        peer: String,
    ) {
        let Opening {
            run,
            progress,
            connections,
            output,
        } = self;
        // A Stop (or SIGTERM) while connections open: the rest are not opened.
        let p = progress.clone();
        guard.set_stopper(Arc::new(move |_| p.cancel()));
        match report_opening(run, &progress, connections, &tx).await {
            // Stopped as the last connection opened: nothing runs.
            Ok(_) if progress.is_cancelled() => {
                let _ = tx
                    .send(Err(Status::aborted(
                        "stopped while its connections were opening",
                    )))
                    .await;
            }
            Ok(mut prepared) => {
                prepared.output = output;
                let control = prepared.control();
                guard.set_stopper(Arc::new(move |reason| control.abort(reason)));
                info!(run = %start.run_id, %peer, threads = start.threads, "run prepared");
                drive(prepared, inbound, tx, guard, start.run_id, None).await;
            }
            Err(e) => {
                // What a script printed before it failed (its thread_init) goes first.
                let text = output.map(|o| o.take()).unwrap_or_default();
                if !text.is_empty() {
                    let msg = event(run_event::Msg::Output(pb::ScriptOutput { text }));
                    let _ = tx.send(Ok(msg)).await;
                }
                let stuck = matches!(e, OpenError::Stuck(_));
                let _ = tx
                    .send(Err(Status::failed_precondition(e.to_string())))
                    .await;
                if stuck {
                    error!("{e}");
                    let _ = tokio::time::timeout(Duration::from_secs(3), tx.closed()).await;
                    guard.left_stuck_workers();
                }
            }
        }
    }
}

/// Waits for `opening` while sending the coordinator an `Opening` message whenever more
/// connections are open (at most every 250 ms). If the coordinator goes away meanwhile,
/// the connections not yet opened are called off.
async fn report_opening(
    opening: impl std::future::Future<Output = Result<PreparedRun, OpenError>>,
    progress: &OpenProgress,
    total: u64,
    tx: &mpsc::Sender<Result<RunEvent, Status>>,
) -> Result<PreparedRun, OpenError> {
    tokio::pin!(opening);
    let mut every = tokio::time::interval(Duration::from_millis(250));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sent = 0;
    let mut listening = true;
    loop {
        tokio::select! {
            r = &mut opening => return r,
            _ = every.tick(), if listening => {
                let done = progress.done();
                if done != sent {
                    sent = done;
                    let msg = event(run_event::Msg::Opening(pb::Progress {
                        done,
                        total,
                        ..Default::default()
                    }));
                    if tx.send(Ok(msg)).await.is_err() {
                        listening = false;
                    }
                }
            }
            _ = tx.closed(), if listening => listening = false,
        }
        if !listening {
            progress.cancel();
        }
    }
}

/// A prepare or cleanup: of OLTP tables, or of fileio's test files.
#[derive(Clone)]
enum TableWork {
    Oltp(Arc<Job>),
    Files(Arc<FileJob>),
    Tpcc(Arc<TpccJob>),
    Pgbench(Arc<PgbenchJob>),
}

/// What a Prepare or Cleanup call does to the tables (or files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableOp {
    Prepare,
    Cleanup,
    /// Reads the OLTP tables into the server's buffer pool (Prepare with `prewarm`).
    Prewarm,
}

impl TableWork {
    /// Stops the job; an OLTP job's statements in flight end with their connections.
    fn halt(&self) {
        let stop = match self {
            TableWork::Oltp(j) => return j.halt(),
            TableWork::Pgbench(j) => return j.halt(),
            TableWork::Files(j) => &j.stop,
            TableWork::Tpcc(j) => &j.stop,
        };
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn done(&self) -> u64 {
        let done = match self {
            TableWork::Oltp(j) => &j.done,
            TableWork::Files(j) => &j.done,
            TableWork::Tpcc(j) => &j.done,
            TableWork::Pgbench(j) => &j.done,
        };
        done.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn total(&self, op: TableOp) -> u64 {
        match (self, op) {
            (TableWork::Oltp(j), TableOp::Prepare) => j.prepare_total(),
            // One step per table.
            (TableWork::Oltp(j), _) => j.cleanup_total(),
            (TableWork::Files(j), TableOp::Prepare) => j.prepare_total(),
            (TableWork::Files(j), _) => j.cleanup_total(),
            (TableWork::Tpcc(j), op) => j.total(op == TableOp::Cleanup),
            (TableWork::Pgbench(j), _) => j.total(),
        }
    }

    /// Lines noted since the last call (OLTP's "Creating table ..."), sent as they come.
    fn take_notes(&self) -> Vec<String> {
        match self {
            TableWork::Oltp(j) => j.take_notes(),
            _ => Vec::new(),
        }
    }

    fn summary(&self) -> String {
        match self {
            TableWork::Oltp(j) => j.summary(),
            TableWork::Files(j) => j.summary(),
            TableWork::Tpcc(j) => j.summary(),
            TableWork::Pgbench(j) => j.summary(),
        }
    }

    /// TPC-C check: the violations in all and the first ones named.
    fn violations(&self) -> (u64, Vec<String>) {
        match self {
            TableWork::Tpcc(j) => j
                .violations
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            _ => (0, Vec::new()),
        }
    }

    /// The dry run: what the real job needs is there, and nothing is in the way.
    async fn check(&self, op: TableOp) -> Result<(), String> {
        match self {
            TableWork::Oltp(j) => oltp_prepare::check(j.config(), op == TableOp::Prepare)
                .await
                .map_err(|e| e.to_string()),
            TableWork::Files(j) => j.check().map_err(|e| e.to_string()),
            TableWork::Tpcc(j) => {
                let (j, cleanup) = (j.clone(), op == TableOp::Cleanup);
                tokio::task::spawn_blocking(move || j.check(cleanup))
                    .await
                    .map_err(|e| format!("check failed: {e}"))?
                    .map_err(|e| e.to_string())
            }
            TableWork::Pgbench(j) => {
                let j = j.clone();
                tokio::task::spawn_blocking(move || j.check())
                    .await
                    .map_err(|e| format!("check failed: {e}"))?
                    .map_err(|e| e.to_string())
            }
        }
    }

    async fn work(self, op: TableOp, threads: u32, seed: u64) -> Result<(), String> {
        match (self, op) {
            (TableWork::Oltp(j), TableOp::Prepare) => oltp_prepare::prepare(j, threads, seed)
                .await
                .map_err(|e| e.to_string()),
            (TableWork::Oltp(j), TableOp::Cleanup) => {
                oltp_prepare::cleanup(j).await.map_err(|e| e.to_string())
            }
            (TableWork::Oltp(j), TableOp::Prewarm) => oltp_prepare::prewarm(j, threads)
                .await
                .map_err(|e| e.to_string()),
            (TableWork::Tpcc(_) | TableWork::Pgbench(_), TableOp::Prewarm) => {
                Err("prewarm is for OLTP tables".into())
            }
            (TableWork::Pgbench(_), TableOp::Cleanup) => {
                Err("pgbench's tables are dropped by its init step d".into())
            }
            (TableWork::Pgbench(j), TableOp::Prepare) => {
                tokio::task::spawn_blocking(move || j.work(threads))
                    .await
                    .map_err(|e| format!("pgbench step failed: {e}"))?
                    .map_err(|e| e.to_string())
            }
            (TableWork::Tpcc(j), op) => {
                tokio::task::spawn_blocking(move || j.work(op == TableOp::Cleanup, threads))
                    .await
                    .map_err(|e| format!("TPC-C job failed: {e}"))?
                    .map_err(|e| e.to_string())
            }
            (TableWork::Files(j), op) => tokio::task::spawn_blocking(move || {
                if op == TableOp::Prepare {
                    j.prepare(threads)
                } else {
                    j.cleanup()
                }
            })
            .await
            .map_err(|e| format!("file job failed: {e}"))?
            .map_err(|e| e.to_string()),
        }
    }
}

/// What a Start message asks for.
enum Planned {
    Threads(Arc<dyn ThreadWorkload>, RunConfig),
    /// fileio: a thread workload, and the directory its files are in.
    Files(Arc<dyn ThreadWorkload>, RunConfig, std::path::PathBuf),
    /// OLTP options, limits, and the number of threads in the whole run (for unique ids).
    Oltp(Arc<OltpConfig>, RunConfig, u64),
    /// TPC-C options and limits; the tables are checked before the terminals start.
    Tpcc(
        Arc<fleetbench_model::workloads::tpcc::TpccConfig>,
        RunConfig,
    ),
    /// pgbench's built-in scripts and limits.
    Pgbench(
        Arc<fleetbench_model::workloads::pgbench::PgbenchConfig>,
        RunConfig,
    ),
    /// A Lua script, limits, and the number of threads in the whole run (sysbench.tid).
    Script(
        Arc<fleetbench_model::workloads::script::ScriptConfig>,
        RunConfig,
        u64,
    ),
}

/// What an agent without `--allow-scripts` answers a script run.
pub const SCRIPTS_REFUSED: &str = "this agent does not run Lua scripts: start fleetbench-agent with --allow-scripts to let coordinators run scripts on it";

impl AgentService {
    /// Prepare (create and load) or cleanup (drop) this agent's tables, streaming progress
    /// every 250 ms. A dry run only checks what the real one would need.
    async fn table_job(
        &self,
        req: Request<pb::PrepareRequest>,
        create: bool,
    ) -> Result<Response<ReceiverStream<Result<pb::Progress, Status>>>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let r = req.into_inner();
        let op = match (create, r.prewarm) {
            (true, false) => TableOp::Prepare,
            (true, true) => TableOp::Prewarm,
            (false, _) => TableOp::Cleanup,
        };
        let job = match r.workload.as_ref().and_then(|w| w.kind.as_ref()) {
            Some(workload_spec::Kind::Oltp(o)) => {
                let mut cfg =
                    wire::oltp_from_proto(o).map_err(|e| Status::invalid_argument(e.0))?;
                load_files(&mut cfg.targets)?;
                TableWork::Oltp(Job::new(Arc::new(cfg)))
            }
            Some(workload_spec::Kind::Tpcc(t)) => {
                let mut cfg =
                    wire::tpcc_from_proto(t).map_err(|e| Status::invalid_argument(e.0))?;
                load_files(std::slice::from_mut(&mut cfg.target))?;
                TableWork::Tpcc(TpccJob::new(Arc::new(cfg), r.seed))
            }
            Some(workload_spec::Kind::Pgbench(p)) => {
                let mut cfg =
                    wire::pgbench_from_proto(p).map_err(|e| Status::invalid_argument(e.0))?;
                load_files(std::slice::from_mut(&mut cfg.target))?;
                TableWork::Pgbench(PgbenchJob::new(Arc::new(cfg)))
            }
            Some(workload_spec::Kind::Options(_)) if op == TableOp::Prewarm => {
                return Err(Status::invalid_argument("prewarm is for OLTP tables"));
            }
            Some(workload_spec::Kind::Options(f)) => TableWork::Files(FileJob::new(
                wire::fileio_from_proto(f, &self.options.work_dir, r.seed)
                    .map_err(|e| Status::invalid_argument(e.0))?,
            )),
            _ => {
                return Err(Status::invalid_argument(
                    "prepare and cleanup need an OLTP or fileio workload",
                ));
            }
        };
        let guard = self.claim(BusyInfo {
            run_id: r.run_id.clone(),
            since: SystemTime::now(),
            peer,
        })?;
        match &job {
            TableWork::Files(j) => fileio::check_host(&j.cfg, r.threads, op == TableOp::Prepare)
                .map_err(|e| Status::resource_exhausted(e.to_string()))?,
            TableWork::Oltp(_) | TableWork::Tpcc(_) | TableWork::Pgbench(_) => {
                fleetbench_model::limits::check_threads(u64::from(r.threads))
                    .map_err(Status::resource_exhausted)?
            }
        }
        let stop_job = job.clone();
        guard.set_stopper(Arc::new(move |_| stop_job.halt()));
        let total = job.total(op);
        let (tx, rx) = mpsc::channel(16);
        if r.dry_run {
            job.check(op).await.map_err(Status::failed_precondition)?;
            let _ = tx
                .send(Ok(pb::Progress {
                    done: 0,
                    total,
                    summary: "ok".into(),
                    ..Default::default()
                }))
                .await;
            return Ok(Response::new(ReceiverStream::new(rx)));
        }
        let (threads, seed) = (r.threads, r.seed);
        tokio::spawn(async move {
            let busy = guard;
            let work = job.clone().work(op, threads, seed);
            tokio::pin!(work);
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            let result = loop {
                tokio::select! {
                    r = &mut work => break r,
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
            };
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
            drop(busy);
            let _ = tx.send(msg).await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// Checks a Start message exactly as Run does, without running it: the workload is built
/// (fileio's files opened, a global memory block allocated, each within the host's
/// limits) and dropped. For tests that feed the agent random and mutated messages.
pub fn validate_start(start: &pb::Start, work_dir: &Path) -> Result<(), Status> {
    plan_from_start(start, work_dir).map(drop)
}

/// Turns a Start message into a workload and run limits, or says what is wrong with it.
fn plan_from_start(start: &pb::Start, work_dir: &Path) -> Result<Planned, Status> {
    if start.threads == 0 {
        return Err(Status::invalid_argument("threads must be at least 1"));
    }
    // A script's command (prepare, cleanup, its own) runs to its end instead.
    let command = matches!(
        start.workload.as_ref().and_then(|w| w.kind.as_ref()),
        Some(pb::workload_spec::Kind::Script(s)) if s.command != "run"
    );
    if start.time_limit_ms == 0 && start.event_limit == 0 && !command {
        return Err(Status::invalid_argument(
            "a run needs a time limit or an event limit",
        ));
    }
    // Checked before any thread is spawned or clock deadline computed.
    fleetbench_model::limits::check_seconds("the time limit", start.time_limit_ms / 1000)
        .and_then(|_| {
            fleetbench_model::limits::check_seconds("the warm-up", start.warmup_ms / 1000)
        })
        .and_then(|_| {
            fleetbench_model::limits::check_seconds("the report interval", start.tick_ms / 1000)
        })
        .map_err(Status::invalid_argument)?;
    fleetbench_model::limits::check_threads(u64::from(start.threads))
        .map_err(Status::resource_exhausted)?;
    if start.first_thread.checked_add(start.threads).is_none() {
        return Err(Status::invalid_argument(
            "first thread and threads overflow the thread numbering",
        ));
    }
    if !(start.rate.is_finite() && (0.0..=fleetbench_model::limits::MAX_RATE).contains(&start.rate))
    {
        return Err(Status::invalid_argument(format!(
            "an agent paces at most {} events per second, not {} (spread the rate over more agents)",
            fleetbench_model::limits::MAX_RATE,
            start.rate
        )));
    }
    let config = RunConfig {
        threads: start.threads,
        time_limit: (start.time_limit_ms > 0).then(|| Duration::from_millis(start.time_limit_ms)),
        event_limit: (start.event_limit > 0).then_some(start.event_limit),
        tick: Duration::from_millis(start.tick_ms.max(10)),
        rate: (start.rate > 0.0).then_some(start.rate),
        seed: start.seed,
        warmup: Duration::from_millis(start.warmup_ms),
        events_per_thread: None,
        latency_limit: None,
        skip_late: false,
    };
    let mut workload = wire::workload_from_proto(start.workload.as_ref(), work_dir, start.seed)
        .map_err(|e| Status::invalid_argument(e.0))?;
    load_files(workload.targets_mut())?;
    // What the spec's validation cannot know: what this host can give.
    let failed = |e: String| Status::failed_precondition(e);
    match workload {
        Workload::Cpu(c) => Ok(Planned::Threads(
            Arc::new(workloads::cpu::Cpu {
                max_prime: c.max_prime,
            }),
            config,
        )),
        Workload::Oltp(o) => {
            let total = u64::from(start.total_threads)
                .max(u64::from(start.first_thread) + u64::from(start.threads));
            Ok(Planned::Oltp(Arc::new(o.config), config, total))
        }
        Workload::Fileio(cfg) => {
            if cfg.mode.is_none() {
                return Err(Status::invalid_argument("fileio run needs a test mode"));
            }
            fileio::check_host(&cfg, start.threads, false)
                .map_err(|e| Status::resource_exhausted(e.to_string()))?;
            let dir = fileio::resolve_dir(&cfg.work_dir, &cfg.file_dir, false)
                .unwrap_or_else(|_| cfg.work_dir.clone());
            let set = FileSet::open(*cfg).map_err(|e| failed(e.to_string()))?;
            if let Some(engine) = set.async_engine() {
                info!(engine, "asynchronous file I/O");
            }
            Ok(Planned::Files(
                Arc::new(fileio::Fileio(Arc::new(set))),
                config,
                dir,
            ))
        }
        Workload::Memory(m) => {
            let cfg = m.config(start.seed).map_err(|e| failed(e.to_string()))?;
            let w = memory::Memory::new(cfg, start.threads).map_err(|e| failed(e.to_string()))?;
            Ok(Planned::Threads(Arc::new(w), config))
        }
        Workload::Threads(t) => {
            fleetbench_model::limits::check_memory(
                threads::Threads::bytes_for(t.locks),
                &format!("{} thread locks (--thread-locks)", t.locks),
            )
            .map_err(Status::resource_exhausted)?;
            Ok(Planned::Threads(Arc::new(threads::Threads::new(t)), config))
        }
        Workload::Tpcc(t) => Ok(Planned::Tpcc(Arc::new(*t), config)),
        Workload::Pgbench(p) => Ok(Planned::Pgbench(Arc::new(*p), config)),
        Workload::Script(s) => {
            let total = u64::from(start.total_threads)
                .max(u64::from(start.first_thread) + u64::from(start.threads));
            Ok(Planned::Script(Arc::new(*s), config, total))
        }
        Workload::Mutex(m) => {
            fleetbench_model::limits::check_memory(
                mutex::MutexTest::bytes_for(m.num),
                &format!("{} mutexes (--mutex-num)", m.num),
            )
            .map_err(Status::resource_exhausted)?;
            Ok(Planned::Threads(
                Arc::new(mutex::MutexTest::new(m, start.seed)),
                config,
            ))
        }
    }
}

/// Drives one run after Start: Ready, wait for Go, stream intervals, send Final.
async fn drive(
    prepared: PreparedRun,
    mut inbound: Streaming<RunRequest>,
    tx: mpsc::Sender<Result<RunEvent, Status>>,
    busy: BusyGuard,
    run_id: String,
    disk_dir: Option<std::path::PathBuf>,
) {
    let ready = event(run_event::Msg::Ready(pb::Ready {
        threads: prepared.threads(),
        connections: prepared
            .connections()
            .into_iter()
            .map(|(t, c)| pb::Connection {
                target: t as u32,
                client: c.client.to_string(),
                auth_plugin: c.auth_plugin,
                tls: c.tls,
                server_version: c.server_version,
                server_vars: c
                    .server_vars
                    .into_iter()
                    .map(|(name, value)| pb::ServerVar { name, value })
                    .collect(),
            })
            .collect(),
        retries: prepared
            .connect_retries()
            .iter()
            .map(|&(t, why, count)| pb::ConnectRetries {
                target: t as u32,
                reason: why.name().into(),
                count,
            })
            .collect(),
    }));
    let output = prepared.output.clone();
    let send_output = |tx: &mpsc::Sender<Result<RunEvent, Status>>| {
        let text = output.as_ref().map(|o| o.take()).unwrap_or_default();
        let tx = tx.clone();
        async move {
            if !text.is_empty() {
                let _ = tx
                    .send(Ok(event(run_event::Msg::Output(pb::ScriptOutput { text }))))
                    .await;
            }
        }
    };
    send_output(&tx).await;
    if tx.send(Ok(ready)).await.is_err() {
        return;
    }
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, inbound.message()).await {
        Ok(Ok(Some(RunRequest {
            msg: Some(run_request::Msg::Go(_)),
        }))) => {}
        other => {
            // Dropping `prepared` releases the parked workers without running anything.
            warn!(run = %run_id, "run cancelled before Go: {}", describe(&other));
            return;
        }
    }
    let control = prepared.control();
    // The lease: a Stop, or the stream ending or breaking, stops all load.
    let watcher = {
        let control = control.clone();
        tokio::spawn(async move {
            loop {
                match inbound.message().await {
                    Ok(Some(RunRequest {
                        msg: Some(run_request::Msg::Stop(s)),
                    })) => {
                        control.abort(format!("stopped by the coordinator: {}", s.reason));
                        break;
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => {
                        control.abort("coordinator went away");
                        break;
                    }
                }
            }
        })
    };
    let (itx, mut irx) = mpsc::channel::<IntervalReport>(16);
    let run = tokio::spawn(prepared.go(itx));
    // The host's load, read as each interval goes out: what the interval ran beside.
    let mut host = fleetbench_model::host::HostSampler::with_disk(disk_dir.as_deref());
    if let Some(dir) = &disk_dir
        && !host.has_disk()
    {
        info!(dir = %dir.display(), "no disk figures: the directory's device has no block statistics");
    }
    while let Some(iv) = irx.recv().await {
        let mut msg = report::interval_to_proto(&iv);
        msg.host = host.sample().map(|h| wire::host_to_proto(&h));
        let msg = event(run_event::Msg::Interval(msg));
        send_output(&tx).await;
        if tx.send(Ok(msg)).await.is_err() {
            control.abort("coordinator went away");
        }
    }
    let fin = match run.await {
        Ok(f) => f,
        Err(e) => {
            let _ = tx
                .send(Err(Status::internal(format!("run failed: {e}"))))
                .await;
            watcher.abort();
            return;
        }
    };
    info!(run = %run_id, events = fin.sample.events, aborted = ?fin.aborted, "run finished");
    // The workers are gone: the agent is free before the coordinator learns the run is
    // over, so a next coordinator started right after it is never turned away as busy.
    // Unless some were left behind: then it stays busy until it ends, after the report.
    let left_behind = (fin.stuck > 0).then_some(busy);
    send_output(&tx).await;
    let _ = tx
        .send(Ok(event(run_event::Msg::Final(report::final_to_proto(
            &fin,
        )))))
        .await;
    watcher.abort();
    if let Some(busy) = left_behind {
        // Until the coordinator has read it (it hangs up), for at most a few seconds.
        let _ = tokio::time::timeout(Duration::from_secs(3), tx.closed()).await;
        busy.left_stuck_workers();
    }
}

fn describe<T, E: std::fmt::Display>(
    r: &Result<Result<Option<T>, E>, tokio::time::error::Elapsed>,
) -> String {
    match r {
        Err(_) => "no Go within 60s".into(),
        Ok(Err(e)) => format!("stream error: {e}"),
        Ok(Ok(None)) => "coordinator closed the stream".into(),
        Ok(Ok(Some(_))) => "coordinator sent Stop or an unexpected message".into(),
    }
}

fn event(msg: run_event::Msg) -> RunEvent {
    RunEvent { msg: Some(msg) }
}

/// Reads the TLS and key files the targets name, on this host, once for every connection
/// to them; the error names the target and the file.
fn load_files(targets: &mut [Target]) -> Result<(), Status> {
    for t in targets {
        crate::sql::mysql::load_files(t).map_err(Status::invalid_argument)?;
    }
    Ok(())
}
