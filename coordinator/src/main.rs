//! `fleetbench`: the coordinator CLI. Parses, runs, prints the whole error chain on failure.

// The system allocator, on purpose: OLTP runs one OS thread per connection, and
// mimalloc's per-thread heaps and eagerly committed arenas cost 1.6 GB at 1,000
// connections where glibc's shared arenas need 46 MB (scripts/bench-scale.sh). The lean
// client's hot path does not allocate per statement, so the allocator's speed no longer
// shows in the client CPU per query (scripts/bench-oltp.sh).

#[tokio::main]
async fn main() {
    die_quietly_on_closed_output();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // FLEETBENCH_LOG, else sysbench's --verbosity, else warnings.
    let quiet = fleetbench::cli::verbosity_filter(&args).unwrap_or("warn");
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLEETBENCH_LOG")
                .unwrap_or_else(|_| quiet.into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into logs or journald.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // Embedded agents open their database connections in this process.
    if let Err(e) = fleetbench_model::limits::raise_nofile() {
        tracing::warn!("cannot raise the open-files limit: {e}");
    }
    let code = match fleetbench::run(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fleetbench: error: {e:#}");
            fleetbench::exit_code(&e)
        }
    };
    std::process::exit(code);
}

/// Ends the process the way other command-line tools end when the reader of their output
/// goes away (`fleetbench --help | head -1`): killed by SIGPIPE, with no panic message.
/// Rust ignores SIGPIPE so that sockets report EPIPE as an error (a lost agent must not
/// kill the coordinator), which makes `print!` panic on a closed pipe instead.
fn die_quietly_on_closed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        let closed = (msg.starts_with("failed printing to stdout")
            || msg.starts_with("failed printing to stderr"))
            && msg.contains("Broken pipe");
        if closed {
            // SAFETY: restoring the default action and raising a signal have no
            // preconditions; the process ends here either way.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::raise(libc::SIGPIPE);
            }
            std::process::exit(128 + libc::SIGPIPE);
        }
        default(info);
    }));
}
