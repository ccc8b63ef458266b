//! `fleetbench`: the coordinator CLI. Parses, runs, prints the whole error chain on failure.

// The system allocator, on purpose: OLTP runs one OS thread per connection, and
// mimalloc's per-thread heaps and eagerly committed arenas cost 1.6 GB at 1,000
// connections where glibc's shared arenas need 46 MB (scripts/bench-scale.sh). The lean
// client's hot path does not allocate per statement, so the allocator's speed no longer
// shows in the client CPU per query (scripts/bench-oltp.sh).

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLEETBENCH_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    // Embedded agents open their database connections in this process.
    if let Err(e) = fleetbench_agent::limits::raise_nofile() {
        tracing::warn!("cannot raise the open-files limit: {e}");
    }
    let code = match fleetbench::run(std::env::args_os().collect()).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fleetbench: error: {e:#}");
            fleetbench::exit_code(&e)
        }
    };
    std::process::exit(code);
}
