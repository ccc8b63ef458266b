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

    /// How much a script run may grow this agent's memory (bytes, with K, M or G), beyond
    /// which the run is stopped with an error; default: a quarter of the memory the host
    /// has available when the run starts.
    #[arg(long, value_name = "SIZE", value_parser = size)]
    script_memory: Option<u64>,
}

/// `--script-memory`: a size as sysbench writes them (16M, 2G), at least 1 MiB.
fn size(s: &str) -> Result<u64, String> {
    match fleetbench_model::options::parse_size(s) {
        Some(n) if n >= 1 << 20 => Ok(n),
        Some(_) => Err("at least 1M".into()),
        None => Err("expected a size such as 512M or 2G".into()),
    }
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
    let inherited = inherited_listener()?;
    let again = inherited.is_some();
    let listener = match inherited {
        Some(l) => l,
        None => TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?,
    };
    let listen_fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && token.is_none() && !args.insecure {
        anyhow::bail!(
            "refusing to listen on {} without a token: anyone reaching it could start load on \
             this host; give --token-file or FLEETBENCH_TOKEN (or --insecure)",
            args.listen
        );
    }
    tracing::info!(%addr, version = env!("CARGO_PKG_VERSION"), work_dir = %work_dir.display(), "fleetbench-agent listening");
    // A stable first line on stdout so scripts and tests learn the port chosen for port 0
    // (once: started again in place, the agent keeps its port, and whoever read the line
    // may have closed the pipe since).
    if !again {
        let mut out = std::io::stdout();
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
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
        script_memory: args.script_memory,
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
        // process: the agent starts itself again in place, on the same socket, so that it
        // stays available; where that fails, it exits for its service manager.
        _ = stuck.notified() => {
            tracing::error!("a run left worker threads that never return: the agent starts itself again in place");
            let e = restart_in_place(listen_fd);
            tracing::error!("cannot start the agent again in place ({e}): exiting so that its service manager does");
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

/// The exit code when a run left worker threads behind that never return and the agent
/// could not start itself again in place (`Restart=` of the systemd unit does it then).
const EXIT_STUCK: i32 = 75;

/// The environment variable that hands the listening socket to the agent started again in
/// place: the number of its file descriptor.
const LISTEN_FD: &str = "FLEETBENCH_LISTEN_FD";

/// Replaces this process by a fresh agent with the same command line and the same
/// listening socket (the threads left behind end with the old image; the process id, and
/// so systemd's view of the service, stays). Returns only on failure, with the reason.
fn restart_in_place(listen_fd: i32) -> std::io::Error {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |b: &[u8]| CString::new(b).map_err(std::io::Error::other);
    let built = (|| -> std::io::Result<(Vec<CString>, Vec<CString>)> {
        let argv = std::env::args_os()
            .map(|a| c(a.as_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut envp = std::env::vars_os()
            .filter(|(k, _)| k != LISTEN_FD)
            .map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
            .collect::<Result<Vec<_>, _>>()?;
        envp.push(c(format!("{LISTEN_FD}={listen_fd}").as_bytes())?);
        Ok((argv, envp))
    })();
    let (argv, envp) = match built {
        Ok(b) => b,
        Err(e) => return e,
    };
    let ptrs = |v: &[CString]| -> Vec<*const libc::c_char> {
        v.iter()
            .map(|s| s.as_ptr())
            .chain([std::ptr::null()])
            .collect()
    };
    let (argv_p, envp_p) = (ptrs(&argv), ptrs(&envp));
    // SAFETY: the socket stays open across exec once FD_CLOEXEC is cleared; argv and envp
    // are NUL-terminated arrays of C strings that live until the call.
    unsafe {
        let flags = libc::fcntl(listen_fd, libc::F_GETFD);
        if flags < 0 || libc::fcntl(listen_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
            return std::io::Error::last_os_error();
        }
        libc::execve(c"/proc/self/exe".as_ptr(), argv_p.as_ptr(), envp_p.as_ptr());
    }
    std::io::Error::last_os_error()
}

/// The listening socket handed over by [`restart_in_place`], if this agent was started so.
fn inherited_listener() -> anyhow::Result<Option<TcpListener>> {
    use std::os::fd::FromRawFd;
    let Some(fd) = std::env::var_os(LISTEN_FD) else {
        return Ok(None);
    };
    let fd: i32 = fd
        .to_str()
        .and_then(|s| s.parse().ok())
        .filter(|&fd| fd > 2)
        .with_context(|| format!("{LISTEN_FD} is not a file descriptor number"))?;
    // SAFETY: the agent that started this one in place left its listening socket open
    // under this number for it, and nothing else in this process owns it.
    let std_listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    // SAFETY: fcntl on a descriptor this process owns; closed again on a later exec.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
    }
    std_listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(std_listener)
        .with_context(|| format!("the socket of {LISTEN_FD}={fd} is not a TCP listener"))?;
    tracing::info!("started again in place: the run before left threads that never return");
    Ok(Some(listener))
}

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
