//! `fleetbench`: the coordinator CLI. Parses, runs, prints the whole error chain on failure.

// The database driver allocates per statement; with glibc malloc that was ~16% of the
// agent's instructions per query, with mimalloc far less (callgrind, scripts/bench-oltp.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLEETBENCH_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let code = match fleetbench::run(std::env::args_os().collect()).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fleetbench: error: {e:#}");
            fleetbench::exit_code(&e)
        }
    };
    std::process::exit(code);
}
