//! fleetbench agent: runs benchmark load on its host on behalf of a coordinator.
//!
//! The binary is a thin wrapper around [`serve`]; the coordinator also embeds agents through
//! the same function when the user names no remote agents.

pub mod coop;
pub mod observe;
pub mod rand;
pub mod rate;
pub mod report;
pub mod runner;
pub mod servers;
pub mod service;
pub mod sql;
pub mod stats;
pub mod txnlog;
pub mod workloads;

use std::future::Future;
use std::time::Duration;

use fleetbench_proto::v1::agent_server::AgentServer;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

pub use service::{AgentOptions, AgentService, StopHandle, TlsFiles};

/// The agent's gRPC service name, as the health service reports it.
pub const AGENT_SERVICE_NAME: &str =
    <AgentServer<AgentService> as tonic::server::NamedService>::NAME;

use fleetbench_model::KEEPALIVE_TIMEOUT;

/// How long a new connection may take to send the HTTP/2 preface (or the start of its TLS
/// handshake) before it is closed. A real client sends it at once; a socket that sends
/// nothing would otherwise hold a connection open forever, token or not.
pub const PREFACE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a TLS handshake may take once begun.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the agent on `listener` until `shutdown` completes. Then the work in progress is
/// stopped (load ends within a second and its connections close), its final report goes
/// to the coordinator, and the server returns once the calls have ended.
///
/// Beside the agent's own service the listener serves the standard gRPC health service
/// (`grpc.health.v1.Health`, for Kubernetes' gRPC probes and `grpc_health_probe`) without
/// the token, since probes cannot send one: it tells only whether the agent serves
/// (service "" and "fleetbench.v1.Agent"). Every call to the agent's own service still
/// needs the token.
pub async fn serve(
    listener: TcpListener,
    options: AgentOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = &options.tls {
        let mut cfg = tonic::transport::ServerTlsConfig::new()
            .timeout(TLS_HANDSHAKE_TIMEOUT)
            .identity(tonic::transport::Identity::from_pem(&tls.cert, &tls.key));
        if let Some(ca) = &tls.client_ca {
            cfg = cfg.client_ca_root(tonic::transport::Certificate::from_pem(ca));
        }
        builder = builder.tls_config(cfg)?;
    }
    let service = AgentService::new(options.clone());
    let stop = service.stop_handle();
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status(AGENT_SERVICE_NAME, tonic_health::ServingStatus::Serving)
        .await;
    // Graceful shutdown waits for the calls in progress: stop their work first, or a
    // signal would let the load run to its end. Probes hear it is going at once.
    let shutdown = async move {
        shutdown.await;
        for name in ["", AGENT_SERVICE_NAME] {
            health
                .set_service_status(name, tonic_health::ServingStatus::NotServing)
                .await;
        }
        stop.stop("the agent is shutting down");
    };
    builder
        // Notice a vanished coordinator host even when no data flows. A coordinator process
        // that dies closes its socket and is noticed at once; the timeout is for hosts that
        // drop off the network, and is generous because a client host saturated by its own
        // load (or a stalled VM) can answer pings seconds late, which must not end a run.
        .http2_keepalive_interval(Some(Duration::from_secs(1)))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .add_service(AgentServer::with_interceptor(
            service,
            fleetbench_model::auth::Check::new(options.token.clone()),
        ))
        .add_service(health_service)
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await
}

/// Accepted connections that have sent their first bytes within [`PREFACE_TIMEOUT`];
/// the others are closed. Accepting ends when the server drops the stream.
fn incoming(listener: TcpListener) -> ReceiverStream<std::io::Result<TcpStream>> {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let (stream, peer) = tokio::select! {
                _ = tx.closed() => break,
                r = listener.accept() => match r {
                    Ok(s) => s,
                    Err(e) => {
                        // EMFILE and the like: wait rather than spin, and keep serving.
                        tracing::warn!("cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                match tokio::time::timeout(PREFACE_TIMEOUT, preface(&stream)).await {
                    Ok(Ok(())) => {
                        // The builder's tcp_nodelay applies only to listeners it binds.
                        let _ = stream.set_nodelay(true);
                        let _ = tx.send(Ok(stream)).await;
                    }
                    Ok(Err(e)) => tracing::debug!(%peer, "connection ended before a request: {e}"),
                    Err(_) => tracing::warn!(
                        %peer,
                        "closed a connection that did not start HTTP/2 or TLS within {}s",
                        PREFACE_TIMEOUT.as_secs()
                    ),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

/// Waits, without consuming anything, until the peer has sent as many bytes as the HTTP/2
/// client preface has (a TLS ClientHello is longer).
async fn preface(stream: &TcpStream) -> std::io::Result<()> {
    let mut buf = [0u8; 24];
    loop {
        match stream.peek(&mut buf).await? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n if n == buf.len() => return Ok(()),
            // Part of it: peek would return at once again, so wait a little.
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}
