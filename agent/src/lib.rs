//! fleetbench agent: runs benchmark load on its host on behalf of a coordinator.
//!
//! The binary is a thin wrapper around [`serve`]; the coordinator also embeds agents through
//! the same function when the user names no remote agents.

pub mod auth;
pub mod limits;
pub mod runner;
pub mod service;
pub mod stats;
pub mod workloads;

use std::future::Future;
use std::time::Duration;

use fleetbench_proto::v1::agent_server::AgentServer;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

pub use service::{AgentOptions, AgentService, StopHandle, TlsFiles};

/// How long a keepalive ping may go unanswered before the peer counts as gone.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the agent on `listener` until `shutdown` completes. Then the work in progress is
/// stopped (load ends within a second and its connections close), its final report goes
/// to the coordinator, and the server returns once the calls have ended.
pub async fn serve(
    listener: TcpListener,
    options: AgentOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &options.tls {
        let mut cfg = tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(&tls.cert, &tls.key));
        if let Some(ca) = &tls.client_ca {
            cfg = cfg.client_ca_root(tonic::transport::Certificate::from_pem(ca));
        }
        builder = builder.tls_config(cfg)?;
    }
    let service = AgentService::new(options.clone());
    let stop = service.stop_handle();
    // Graceful shutdown waits for the calls in progress: stop their work first, or a
    // signal would let the load run to its end.
    let shutdown = async move {
        shutdown.await;
        stop.stop("the agent is shutting down");
    };
    builder
        // Notice a vanished coordinator host even when no data flows. A coordinator process
        // that dies closes its socket and is noticed at once; the timeout is for hosts that
        // drop off the network, and is generous because a client host saturated by its own
        // load (or a stalled VM) can answer pings seconds late, which must not end a run.
        .http2_keepalive_interval(Some(Duration::from_secs(1)))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .tcp_nodelay(true)
        .add_service(AgentServer::with_interceptor(
            service,
            auth::Check::new(options.token.clone()),
        ))
        .serve_with_incoming_shutdown(TcpListenerStream::new(listener), shutdown)
        .await
}
