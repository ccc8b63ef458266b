//! `fleetbench-agent`: serves benchmark runs to a fleetbench coordinator.

// The system allocator, on purpose: OLTP runs one OS thread per connection, and
// mimalloc's per-thread heaps and eagerly committed arenas cost 1.6 GB at 1,000
// connections where glibc's shared arenas need 46 MB (scripts/bench-scale.sh). The lean
// client's hot path does not allocate per statement, so the allocator's speed no longer
// shows in the client CPU per query (scripts/bench-oltp.sh).

use std::io::Write;

use anyhow::Context;
use clap::Parser;
use tokio::net::TcpListener;

/// Runs benchmark load on this host for a fleetbench coordinator.
#[derive(Debug, Parser)]
#[command(name = "fleetbench-agent", version)]
struct Args {
    /// Address to listen on; port 0 picks a free port (the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:7600")]
    listen: String,

    /// File holding the token every call must carry (default: FLEETBENCH_TOKEN, else the
    /// systemd credential `token`, $CREDENTIALS_DIRECTORY/token).
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,

    /// Serve TLS with this certificate (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,

    /// Private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,

    /// Require client certificates signed by this CA (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_client_ca: Option<std::path::PathBuf>,

    /// The only directory fileio may create, write and remove files in; --file-dir is
    /// relative to it (default: $STATE_DIRECTORY under systemd, else the current directory).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<std::path::PathBuf>,

    /// The name coordinators show for this agent in reports instead of its host name
    /// (useful when every client host is called the same, as in containers).
    #[arg(long, value_name = "NAME", value_parser = agent_name)]
    name: Option<String>,

    /// Allow listening on a non-loopback address without a token: anyone who reaches the
    /// port could then start load on this host.
    #[arg(long)]
    insecure: bool,

    /// Run the sysbench Lua scripts coordinators send. A script is code: it runs in a
    /// sandbox (no processes, no files, no C modules), with this agent's network reach.
    /// Off by default.
    #[arg(long)]
    allow_scripts: bool,
}

/// `--name`: 1 to 64 printable characters without spaces, so report columns stay columns.
fn agent_name(s: &str) -> Result<String, String> {
    let ok = (1..=64).contains(&s.chars().count())
        && s.chars().all(|c| !c.is_whitespace() && !c.is_control());
    if ok {
        Ok(s.to_string())
    } else {
        Err("expected 1 to 64 printable characters without spaces".into())
    }
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("fleetbench-agent: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLEETBENCH_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into logs or journald.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let args = Args::parse();
    // Each database connection of a run is an open file: take all the system allows.
    match fleetbench_model::limits::raise_nofile() {
        Ok((before, after)) if before != after => {
            tracing::info!("open-files limit raised from {before} to {after} (the hard limit)")
        }
        Ok((_, after)) => tracing::info!("open-files limit {after}"),
        Err(e) => tracing::warn!("cannot raise the open-files limit: {e}"),
    }
    let work_dir = match &args.work_dir {
        Some(d) => d.clone(),
        // systemd's StateDirectory= (possibly a list: the first one).
        None => match std::env::var_os("STATE_DIRECTORY") {
            Some(s) => s.to_string_lossy().split(':').next().unwrap_or(".").into(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        },
    };
    let work_dir = work_dir
        .canonicalize()
        .with_context(|| format!("work directory {} is not usable", work_dir.display()))?;
    if !work_dir.is_dir() {
        anyhow::bail!("work directory {} is not a directory", work_dir.display());
    }
    let token =
        fleetbench_model::auth::load(args.token_file.as_deref()).map_err(anyhow::Error::msg)?;
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && token.is_none() && !args.insecure {
        anyhow::bail!(
            "refusing to listen on {} without a token: anyone reaching it could start load on \
             this host; give --token-file or FLEETBENCH_TOKEN (or --insecure)",
            args.listen
        );
    }
    tracing::info!(%addr, version = env!("CARGO_PKG_VERSION"), work_dir = %work_dir.display(), "fleetbench-agent listening");
    // A stable first line on stdout so scripts and tests learn the port chosen for port 0.
    let mut out = std::io::stdout();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    notify_systemd_ready();
    let read = |p: &std::path::Path| {
        fleetbench_model::capped::read(p, "the TLS file", fleetbench_model::capped::SECRET_CAP)
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some(fleetbench_agent::TlsFiles {
            cert: read(c)?,
            key: read(k)?,
            client_ca: args.tls_client_ca.as_deref().map(read).transpose()?,
        }),
        _ => None,
    };
    let stuck = std::sync::Arc::new(tokio::sync::Notify::new());
    let options = fleetbench_agent::AgentOptions {
        token,
        tls,
        work_dir,
        name: args.name.clone(),
        allow_scripts: args.allow_scripts,
        stuck: Some(stuck.clone()),
    };
    let (signalled, mut exit_soon) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown_signal().await;
        let _ = signalled.send(());
    };
    let serve = fleetbench_agent::serve(listener, options, shutdown);
    tokio::pin!(serve);
    tokio::select! {
        r = &mut serve => r?,
        // Worker threads that never return (a script's endless loop) end only with the
        // process: exit, so that the service manager starts a clean agent.
        _ = stuck.notified() => {
            tracing::error!("a run left worker threads that never return: exiting so that the agent starts again clean");
            std::process::exit(EXIT_STUCK);
        }
        // The work is stopped at once; a coordinator that does not hang up afterwards
        // must not keep the agent alive.
        _ = async {
            let _ = (&mut exit_soon).await;
            tokio::time::sleep(EXIT_GRACE).await;
        } => tracing::warn!("calls still open {}s after the signal: exiting anyway", EXIT_GRACE.as_secs()),
    }
    Ok(())
}

/// The exit code when a run left worker threads behind that never return (`Restart=` of
/// the systemd unit starts the agent again).
const EXIT_STUCK: i32 = 75;

/// How long after SIGTERM or SIGINT the agent waits for its calls to end before exiting.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Tells systemd (Type=notify) that the agent is listening, when started by it.
fn notify_systemd_ready() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let path = path.to_string_lossy().into_owned();
    // A leading '@' names an abstract socket.
    let addr = match path.strip_prefix('@') {
        Some(name) => SocketAddr::from_abstract_name(name.as_bytes()),
        None => SocketAddr::from_pathname(&path),
    };
    let sent = addr.and_then(|a| UnixDatagram::unbound()?.send_to_addr(b"READY=1", &a));
    if let Err(e) = sent {
        tracing::warn!("cannot notify systemd at {path}: {e}");
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
}
