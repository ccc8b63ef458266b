//! The agent's gRPC service: Hello, Stop, Prepare/Cleanup, and Run with its Start / Ready /
//! Go / Interval / Final exchange. One run at a time; the Run stream is the lease, so a
//! broken stream stops the load. The service dispatches a Start once, at the edge
//! (`start`), into the workload's own type; from there on it drives any run alike (`drive`).

mod busy;
mod drive;
mod start;
mod table_job;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::v1::agent_server::Agent;
use fleetbench_proto::v1::{
    self as pb, HelloReply, HelloRequest, RunEvent, RunRequest, run_request,
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use tracing::warn;

use crate::workloads;
pub use busy::StopHandle;
use busy::{Busy, BusyInfo};
pub use start::{SCRIPTS_REFUSED, validate_start};

/// How long the coordinator may take to send Start, and then Go after Ready.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// How much a script run may grow this process's memory (`--script-memory`); None: a
    /// quarter of the host's available memory when the run starts.
    pub script_memory: Option<u64>,
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
            script_memory: None,
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

/// State shared by every call to this agent.
pub struct AgentService {
    hostname: String,
    /// Cores, CPU model, kernel and memory, read once at start.
    facts: fleetbench_model::host::HostFacts,
    options: AgentOptions,
    /// The run (or table job) in progress, if any, and how to stop it.
    busy: Busy,
}

impl Default for AgentService {
    fn default() -> Self {
        AgentService::new(AgentOptions::default())
    }
}

impl AgentService {
    /// A handle that stops this agent's work in progress.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.busy.clone())
    }

    pub fn new(options: AgentOptions) -> Self {
        AgentService {
            hostname: options
                .name
                .clone()
                .unwrap_or_else(|| gethostname::gethostname().to_string_lossy().into_owned()),
            facts: fleetbench_model::host::HostFacts::read(),
            options,
            busy: Busy::default(),
        }
    }

    /// Claims the agent for `info`'s work, or says whose work holds it.
    fn claim(&self, info: BusyInfo) -> Result<busy::BusyGuard, Status> {
        self.busy.claim(info, self.options.stuck.clone())
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
        let busy = self.busy.current();
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
        let run_id = self.busy.current().map(|b| b.run_id).unwrap_or_default();
        let stop = format!("stopped by {peer}: {reason}");
        if self.busy.stop(stop) {
            warn!(run = %run_id, %peer, "stopped on request: {reason}");
        }
        Ok(Response::new(pb::StopReply { run_id }))
    }
    type ObserveStream = ReceiverStream<Result<pb::HostSample, Status>>;

    async fn observe(
        &self,
        req: Request<pb::ObserveRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        let peer = req
            .remote_addr()
            .map_or_else(|| "unknown".to_string(), |a| a.to_string());
        let rx = crate::observe::start(req.get_ref(), &peer)?;
        Ok(Response::new(ReceiverStream::new(rx)))
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
        let planned = start::plan(&start, &self.options)?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let run = drive::Run {
            tx,
            guard,
            inbound,
            run_id: start.run_id.clone(),
            threads: start.threads,
            peer,
        };
        tokio::spawn(run.open_then_drive(planned));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
