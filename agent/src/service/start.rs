//! A Start message checked and planned: the run's limits ([`RunConfig`]) and the workload's
//! own type ([`Workload`]), dispatched once, here, one line per workload.

use std::path::Path;
use std::time::Duration;

use fleetbench_model::limits;
use fleetbench_model::run::RunLimits;
use fleetbench_model::spec::Workload as Spec;
use fleetbench_model::wire;
use fleetbench_model::workloads::server::Target;
use fleetbench_proto::v1 as pb;
use tonic::Status;

use super::AgentOptions;
use crate::runner::RunConfig;
use crate::workloads::{self, PlanError, Share, Workload};

/// The coordinator's ready timeout when its Start does not say (`--ready-timeout`'s default).
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What an agent without `--allow-scripts` answers a script run.
pub const SCRIPTS_REFUSED: &str = "this agent does not run Lua scripts: start fleetbench-agent with --allow-scripts to let coordinators run scripts on it";

/// A Start message as this agent will run it.
pub(super) struct Planned {
    pub(super) workload: Box<dyn Workload>,
    pub(super) config: RunConfig,
    /// The servers whose status this agent reads each interval (target index, target,
    /// what it is to replication).
    pub(super) servers: Vec<(u32, Target, crate::servers::Role)>,
}

/// Plans `start` on an agent with `options`, or says what is wrong with it.
pub(super) fn plan(start: &pb::Start, options: &AgentOptions) -> Result<Planned, Status> {
    let planned = plan_from_start(start, options)?;
    let script = matches!(
        start.workload.as_ref().and_then(|w| w.kind.as_ref()),
        Some(pb::workload_spec::Kind::Script(_))
    );
    if script && !options.allow_scripts {
        return Err(Status::permission_denied(SCRIPTS_REFUSED));
    }
    Ok(planned)
}

/// Checks a Start message exactly as Run does, without running it: the workload is built
/// (fileio's files opened, a global memory block allocated, each within the host's
/// limits) and dropped. For tests that feed the agent random and mutated messages.
pub fn validate_start(start: &pb::Start, work_dir: &Path) -> Result<(), Status> {
    let options = AgentOptions {
        work_dir: work_dir.to_path_buf(),
        ..AgentOptions::default()
    };
    plan_from_start(start, &options).map(drop)
}

/// Turns a Start message into a workload and run limits, or says what is wrong with it.
fn plan_from_start(start: &pb::Start, options: &AgentOptions) -> Result<Planned, Status> {
    let config = run_config(start)?;
    let mut spec =
        wire::workload_from_proto(start.workload.as_ref(), &options.work_dir, start.seed)
            .map_err(|e| Status::invalid_argument(e.0))?;
    load_files(spec.targets_mut())?;
    // What the host must give is OS threads (pgbench's clients share its -j threads), checked
    // before any is spawned; the error names the option that set their number.
    let (os_threads, option) = spec.os_threads(u64::from(start.threads));
    limits::check_threads(os_threads).map_err(|e| match option {
        "--threads" => Status::resource_exhausted(e),
        other => Status::resource_exhausted(format!("{other}: {e}")),
    })?;
    let share = Share {
        first_thread: u64::from(start.first_thread),
        total_threads: u64::from(start.total_threads)
            .max(u64::from(start.first_thread) + u64::from(start.threads)),
        threads: start.threads,
        seed: start.seed,
        ready_timeout: match start.ready_timeout_ms {
            0 => DEFAULT_READY_TIMEOUT,
            ms => Duration::from_millis(ms),
        },
        script_memory: options.script_memory,
    };
    let mut readable = spec.targets().to_vec();
    for r in &start.replicas {
        let mut t = wire::target_from_proto(r).map_err(|e| Status::invalid_argument(e.0))?;
        crate::sql::mysql::load_files(&mut t).map_err(Status::invalid_argument)?;
        readable.push(t);
    }
    let loaded = spec.targets().len();
    let servers = sampled_servers(&start.sample_servers, &readable)?
        .into_iter()
        .map(|(i, t)| {
            use crate::servers::Role;
            let role = if i as usize >= loaded {
                Role::Replica
            } else if start.replication_primaries.contains(&i) {
                Role::Primary
            } else {
                Role::Unknown
            };
            (i, t, role)
        })
        .collect();
    let workload = dispatch(spec, &share).map_err(status)?;
    Ok(Planned {
        workload,
        config,
        servers,
    })
}

/// The one place that names every workload: each plans its own run.
fn dispatch(spec: Spec, share: &Share) -> Result<Box<dyn Workload>, PlanError> {
    match spec {
        Spec::Cpu(c) => Ok(workloads::cpu::plan(&c)),
        Spec::Oltp(o) => workloads::oltp::plan(o.config, share),
        Spec::Fileio(f) => workloads::fileio::plan(f, share.threads),
        Spec::Memory(m) => workloads::memory::plan(&m, share),
        Spec::Threads(t) => workloads::threads::plan(t),
        Spec::Mutex(m) => workloads::mutex::plan(m, share.seed),
        Spec::Tpcc(t) => Ok(workloads::tpcc::run::plan(t, share)),
        Spec::Pgbench(p) => Ok(workloads::pgbench::plan(p, share)),
        Spec::Script(s) => Ok(workloads::script::plan(s, share)),
    }
}

/// A workload's planning error as the coordinator hears it.
pub(super) fn status(e: PlanError) -> Status {
    match e {
        PlanError::Invalid(m) => Status::invalid_argument(m),
        PlanError::Exhausted(m) => Status::resource_exhausted(m),
        PlanError::Failed(m) => Status::failed_precondition(m),
    }
}

/// The run's limits and cadence, each checked before any thread is spawned or clock
/// deadline computed.
fn run_config(start: &pb::Start) -> Result<RunConfig, Status> {
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
    let run = RunLimits::from_start(start).map_err(Status::invalid_argument)?;
    if start.first_thread.checked_add(start.threads).is_none() {
        return Err(Status::invalid_argument(
            "first thread and threads overflow the thread numbering",
        ));
    }
    Ok(RunConfig {
        threads: start.threads,
        time_limit: run.time,
        event_limit: run.events,
        tick: run.tick,
        rate: run.rate,
        seed: start.seed,
        warmup: run.warmup,
        events_per_thread: None,
        latency_limit: None,
        skip_late: false,
        txn_log: None,
    })
}

/// The targets a Start asks this agent to read the status of, each once; an index past the
/// workload's targets is refused.
fn sampled_servers(asked: &[u32], targets: &[Target]) -> Result<Vec<(u32, Target)>, Status> {
    let mut out: Vec<(u32, Target)> = Vec::new();
    for &i in asked {
        let Some(t) = targets.get(i as usize) else {
            return Err(Status::invalid_argument(format!(
                "sample_servers names target {i}, but the workload has {} target(s)",
                targets.len()
            )));
        };
        if !out.iter().any(|(j, _)| *j == i) {
            out.push((i, t.clone()));
        }
    }
    Ok(out)
}

/// Reads the TLS and key files the targets name, on this host, once for every connection
/// to them; the error names the target and the file.
pub(super) fn load_files(targets: &mut [Target]) -> Result<(), Status> {
    for t in targets {
        crate::sql::mysql::load_files(t).map_err(Status::invalid_argument)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetbench_model::workloads::pgbench::PgbenchConfig;

    /// A Start of `clients` pgbench clients on `jobs` threads, as a coordinator sends it.
    fn pgbench_start(clients: u32, jobs: u32) -> pb::Start {
        let spec = Spec::Pgbench(Box::new(PgbenchConfig {
            jobs,
            ..Default::default()
        }));
        pb::Start {
            workload: Some(wire::workload_to_proto(&spec, &[])),
            threads: clients,
            time_limit_ms: 1000,
            ..Default::default()
        }
    }

    /// The host's ceiling counts OS threads: pgbench's clients share its -j threads, so
    /// more clients than the host has threads are planned on one thread; as many -j
    /// threads are refused, naming -j.
    #[test]
    fn pgbench_clients_are_not_counted_as_threads() {
        let ceiling = fleetbench_model::limits::thread_ceiling().threads;
        let many = u32::try_from(ceiling + 1).unwrap_or(u32::MAX);
        let dir = std::env::temp_dir();
        assert!(validate_start(&pgbench_start(many, 1), &dir).is_ok());
        let e = validate_start(&pgbench_start(many, many), &dir).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
        assert!(e.message().starts_with("-j: "), "{e}");
    }
}
