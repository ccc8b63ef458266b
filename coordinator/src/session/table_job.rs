//! Table jobs: prepare (create and load), cleanup (drop) and prewarm, shared out over the
//! agents. Every agent first checks (dry run) what it will do, so a bad setup creates
//! nothing anywhere; a signal to the coordinator stops the job on every agent and says
//! where it stands.

use std::time::Duration;

use fleetbench_proto::v1 as pb;
use futures::future::join_all;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tonic::{Status, Streaming};
use tracing::warn;

use super::connect::{AgentConn, CONNECT_TIMEOUT, status_text};
use super::ids::{now_nanos, run_id};
use crate::error::{AgentEnd, Interrupted, SessionError};
use crate::plan::{Plan, Workload, split_evenly, tables_for_agents};

/// Creates and loads (`create`) or drops the OLTP tables, each agent taking a contiguous
/// share of the tables and of the threads. Every agent first checks (dry run) that it can
/// reach its targets and, for prepare, that none of its tables exists, so a bad setup
/// creates nothing anywhere. `progress` sees (done, total) summed over agents. Returns
/// each agent's summary lines.
pub async fn table_job(
    conns: Vec<AgentConn>,
    plan: &Plan,
    create: bool,
    mut progress: impl FnMut(u64, u64, &[String]),
) -> Result<Vec<JobSummary>, SessionError> {
    let Some(shares) = Shares::of(plan, conns.len(), create) else {
        return Ok(Vec::new());
    };
    let job = Job::new(plan, create, shares);
    let conns: Vec<AgentConn> = conns
        .into_iter()
        .take(job.shares.checkers.unwrap_or(job.shares.n))
        .collect();
    // From here on a signal (Ctrl-C, SIGTERM, a closed terminal) stops the job on every
    // agent and says where it stands, instead of ending the process mid-load.
    let mut signals = interrupt_signals();
    job.dry_run(plan, &conns, &mut signals).await?;
    let conns: Vec<AgentConn> = conns.into_iter().take(job.shares.n).collect();
    let rx = job.start(&conns);
    let state = follow(plan, &conns, job.shares.n, rx, &mut signals, &mut progress).await;
    state.outcome(plan, &conns)
}

/// How a table job is shared out. OLTP: each agent a contiguous share of the tables and
/// threads. fileio: every agent its own full set of files, with all the threads. TPC-C:
/// one agent creates, indexes and drops; loads and checks go by contiguous shares of the
/// warehouses.
struct Shares {
    /// The working agents.
    n: usize,
    /// Each agent's workload, and its threads.
    specs: Vec<pb::WorkloadSpec>,
    threads: Vec<u64>,
    /// Agents that dry-run when more than the working ones: for TPC-C's create step every
    /// agent, so that one that cannot reach the server stops the prepare before a table
    /// exists.
    checkers: Option<usize>,
}

impl Shares {
    /// The shares of `plan`'s job over `agents` agents; None for a workload without tables.
    fn of(plan: &Plan, agents: usize, create: bool) -> Option<Shares> {
        Some(match &plan.workload {
            Workload::Oltp(o) => {
                let n = agents.min(o.config.tables.len()).max(1);
                let shares = tables_for_agents(&o.config.tables, n, false);
                let threads = split_evenly(u64::from(plan.threads).max(n as u64), n);
                let specs = shares
                    .iter()
                    .map(|s| fleetbench_model::wire::workload_to_proto(&plan.workload, s))
                    .collect();
                Shares {
                    n,
                    specs,
                    threads,
                    checkers: None,
                }
            }
            Workload::Fileio(_) => {
                let spec = fleetbench_model::wire::workload_to_proto(&plan.workload, &[]);
                Shares {
                    n: agents,
                    specs: vec![spec; agents],
                    threads: vec![u64::from(plan.threads); agents],
                    checkers: None,
                }
            }
            Workload::Tpcc(t) => Shares::tpcc(t, plan.threads, agents, create),
            Workload::Pgbench(p) => Shares::pgbench(p, plan.threads, agents),
            _ => return None,
        })
    }

    /// pgbench's steps: the loads (g, G) by contiguous ranges of accounts over the agents,
    /// the first one loading the branches and tellers too; every other step on one agent.
    /// The first steps (d, t) are checked on every agent, so that one that cannot reach
    /// the server stops the initialisation before anything is dropped.
    fn pgbench(
        p: &fleetbench_model::workloads::pgbench::PgbenchConfig,
        threads: u32,
        agents: usize,
    ) -> Shares {
        use fleetbench_model::workloads::pgbench::{PgbenchConfig, Step, account_shares};
        let spec = |c: PgbenchConfig| {
            fleetbench_model::wire::workload_to_proto(&Workload::Pgbench(Box::new(c)), &[])
        };
        if !p.step.spread() {
            let all = agents.max(1);
            let first = matches!(p.step, Step::Drop | Step::Create);
            return Shares {
                n: 1,
                specs: vec![spec(p.clone()); all],
                threads: vec![u64::from(threads).max(1)],
                checkers: first.then_some(all),
            };
        }
        let shares = account_shares(p.scale, agents);
        let n = shares.len();
        let specs = shares
            .iter()
            .enumerate()
            .map(|(i, &(first, last))| {
                spec(PgbenchConfig {
                    first_aid: first,
                    last_aid: last,
                    load_small: i == 0,
                    ..p.clone()
                })
            })
            .collect();
        Shares {
            n,
            specs,
            threads: split_evenly(u64::from(threads).max(n as u64), n),
            checkers: None,
        }
    }

    fn tpcc(
        t: &fleetbench_model::workloads::tpcc::TpccConfig,
        threads: u32,
        agents: usize,
        create: bool,
    ) -> Shares {
        use fleetbench_model::workloads::tpcc::PrepareStep;
        let spread = create && matches!(t.step, PrepareStep::Load | PrepareStep::Check);
        let n = if spread {
            agents.min(t.options.warehouses as usize).max(1)
        } else {
            1
        };
        let mut checkers = None;
        let mut shares = crate::plan::warehouse_shares(t.options.warehouses, n);
        if create && t.step == PrepareStep::Create {
            // The same check (the server answers, no table exists) on every agent.
            shares = vec![(1, t.options.warehouses); agents.max(1)];
            checkers = Some(agents);
        }
        let specs = shares
            .into_iter()
            .enumerate()
            .map(|(i, (first, last))| {
                let c = fleetbench_model::workloads::tpcc::TpccConfig {
                    first_warehouse: first,
                    last_warehouse: last,
                    load_items: i == 0,
                    ..t.clone()
                };
                fleetbench_model::wire::workload_to_proto(&Workload::Tpcc(Box::new(c)), &[])
            })
            .collect();
        Shares {
            n,
            specs,
            threads: split_evenly(u64::from(threads).max(n as u64), n),
            checkers,
        }
    }
}

/// A table job about to go: its shares, id and seed, and which call it makes.
struct Job {
    shares: Shares,
    run_id: String,
    seed: u64,
    /// prewarm goes by the Prepare call, with its own flag.
    prewarm: bool,
    /// Prepare's Prepare call (create and prewarm), else Cleanup's.
    prepares: bool,
}

impl Job {
    fn new(plan: &Plan, create: bool, shares: Shares) -> Job {
        let run_id = run_id();
        let seed = if plan.seed == 0 {
            now_nanos()
        } else {
            plan.seed
        };
        let prewarm = plan.command == crate::plan::Command::Prewarm;
        Job {
            shares,
            run_id,
            seed,
            prewarm,
            prepares: create || prewarm,
        }
    }

    /// Agent `i`'s request, for the dry run or the job itself.
    fn request(&self, i: usize, dry_run: bool) -> pb::PrepareRequest {
        pb::PrepareRequest {
            run_id: self.run_id.clone(),
            workload: Some(self.shares.specs[i].clone()),
            // A checker beyond the working agents (TPC-C create) checks with one connection.
            threads: self.shares.threads.get(i).copied().unwrap_or(1) as u32,
            dry_run,
            seed: self.seed.wrapping_add(i as u64),
            prewarm: self.prewarm,
        }
    }

    /// The dry run on every agent of `conns`: Ok when none refuses; every refusal (not
    /// only the first) otherwise, agents refusing for the same reason named together.
    async fn dry_run(
        &self,
        plan: &Plan,
        conns: &[AgentConn],
        signals: &mut [(&'static str, tokio::signal::unix::Signal)],
    ) -> Result<(), SessionError> {
        let checks = conns
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, c)| check_one(c, self.request(i, true), self.prepares));
        let checked = tokio::select! {
            r = join_all(checks) => r,
            signal = next_interrupt(signals) => {
                return Err(SessionError::Interrupted(Box::new(Interrupted {
                    what: job_name(plan),
                    signal,
                    begun: false,
                    agents: Vec::new(),
                    done: 0,
                    total: 0,
                })));
            }
        };
        let refusals = refusals(checked);
        if refusals.is_empty() {
            return Ok(());
        }
        let exists = matches!(plan.workload, Workload::Oltp(_))
            && refusals.iter().any(|r| r.contains("tables already exist"));
        Err(SessionError::CheckRefused {
            what: job_name(plan),
            reasons: format!(
                "{}{}",
                refusals.join("; "),
                if exists {
                    " (run cleanup first, or pick other --tables)"
                } else {
                    ""
                }
            ),
        })
    }

    /// Starts the job on every agent of `conns`; their progress comes on the receiver.
    fn start(&self, conns: &[AgentConn]) -> mpsc::Receiver<(usize, Result<pb::Progress, Status>)> {
        let (tx, rx) = mpsc::channel(64);
        for (i, conn) in conns.iter().cloned().enumerate() {
            tokio::spawn(run_share(
                conn,
                self.request(i, false),
                self.prepares,
                i,
                tx.clone(),
            ));
        }
        rx
    }
}

/// Opens `conn`'s job with `req`: the Prepare call, or Cleanup's.
async fn open_job(
    conn: &mut AgentConn,
    req: pb::PrepareRequest,
    prepares: bool,
) -> Result<tonic::Response<Streaming<pb::Progress>>, Status> {
    if prepares {
        conn.client.prepare(req).await
    } else {
        conn.client.cleanup(req).await
    }
}

/// One agent's dry run: its name and last summary, or why it refused.
async fn check_one(
    mut conn: AgentConn,
    req: pb::PrepareRequest,
    prepares: bool,
) -> Result<(String, String), SessionError> {
    let r = open_job(&mut conn, req, prepares).await;
    let refused = |s: Status| SessionError::Refused {
        agent: conn.name.clone(),
        reason: status_text(&s),
    };
    let mut stream = r.map_err(refused)?.into_inner();
    Ok((
        conn.name.clone(),
        stream_progress(&mut stream).await.map_err(refused)?,
    ))
}

/// The dry run's refusals, agents refusing for the same reason (one server seen by all)
/// named together.
fn refusals(checked: Vec<Result<(String, String), SessionError>>) -> Vec<String> {
    let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
    for r in checked {
        let (agent, reason) = match r {
            Ok(_) => continue,
            Err(SessionError::Refused { agent, reason }) => {
                // Said once for all of them, in the error's own words.
                let reason = reason
                    .replace("; nothing was created or dropped", "")
                    .replace(" (run cleanup first, or pick other --tables)", "");
                (agent, reason)
            }
            Err(e) => (String::new(), e.to_string()),
        };
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, agents)) => agents.push(agent),
            None => by_reason.push((reason, vec![agent])),
        }
    }
    by_reason
        .into_iter()
        .map(|(reason, agents)| match &agents[..] {
            [a] if a.is_empty() => reason,
            [a] => format!("agent {a}: {reason}"),
            many => format!("agents {}: {reason}", many.join(", ")),
        })
        .collect()
}

/// Agent `i`'s share of the job: its progress passed on to `tx` until its summary (the
/// last message), a failure, or a stream that ends early.
async fn run_share(
    mut conn: AgentConn,
    req: pb::PrepareRequest,
    prepares: bool,
    i: usize,
    tx: mpsc::Sender<(usize, Result<pb::Progress, Status>)>,
) {
    let mut stream = match open_job(&mut conn, req, prepares).await {
        Err(s) => {
            let _ = tx.send((i, Err(s))).await;
            return;
        }
        Ok(resp) => resp.into_inner(),
    };
    loop {
        match stream.message().await {
            Ok(Some(p)) => {
                let last = !p.summary.is_empty();
                let _ = tx.send((i, Ok(p))).await;
                if last {
                    break;
                }
            }
            Ok(None) => {
                let early = Status::unavailable("the agent closed the stream early");
                let _ = tx.send((i, Err(early))).await;
                break;
            }
            Err(s) => {
                let _ = tx.send((i, Err(s))).await;
                break;
            }
        }
    }
}

/// Where a table job stands as its agents' progress arrives.
struct JobState {
    done: Vec<u64>,
    total: Vec<u64>,
    summaries: Vec<JobSummary>,
    failures: Vec<String>,
    ends: Vec<AgentEnd>,
    /// Each agent's notes shown so far (its summary's first lines).
    noted: Vec<usize>,
    /// The signal that stopped the job, and until when the agents' last words are awaited.
    stopping: Option<(&'static str, Instant)>,
}

/// Follows the job's progress on `rx` until every agent is done, or, after a signal,
/// until the agents have said where they stand (or a second signal).
async fn follow(
    plan: &Plan,
    conns: &[AgentConn],
    n: usize,
    mut rx: mpsc::Receiver<(usize, Result<pb::Progress, Status>)>,
    signals: &mut [(&'static str, tokio::signal::unix::Signal)],
    progress: &mut impl FnMut(u64, u64, &[String]),
) -> JobState {
    let mut state = JobState {
        done: vec![0u64; n],
        total: vec![0u64; n],
        summaries: vec![JobSummary::default(); n],
        failures: Vec::new(),
        ends: vec![AgentEnd::Silent; n],
        noted: vec![0; n],
        stopping: None,
    };
    loop {
        let grace = async {
            match state.stopping {
                Some((_, until)) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            got = rx.recv() => {
                let Some((i, r)) = got else { break };
                let notes = match &r {
                    Ok(p) => p.notes.clone(),
                    Err(_) => Vec::new(),
                };
                if state.take(conns, i, r) {
                    progress(state.done.iter().sum(), state.total.iter().sum(), &notes);
                }
            }
            signal = next_interrupt(signals) => {
                if state.stopping.is_some() {
                    // A second signal: no more waiting for the agents.
                    break;
                }
                tracing::info!("{signal}: stopping the {} on every agent", plan.command.name());
                stop_table_job(conns, signal);
                state.stopping = Some((signal, Instant::now() + TABLE_STOP_GRACE));
            }
            _ = grace => break,
        }
    }
    state
}

impl JobState {
    /// Takes in agent `i`'s message; whether it was progress (not a failure).
    fn take(&mut self, conns: &[AgentConn], i: usize, r: Result<pb::Progress, Status>) -> bool {
        match r {
            Ok(p) => {
                self.done[i] = p.done;
                self.total[i] = p.total;
                self.noted[i] += p.notes.len();
                if !p.summary.is_empty() {
                    self.ends[i] = AgentEnd::Finished(p.summary.clone());
                    // Its first lines were shown as they came (the notes).
                    let rest: Vec<&str> = p.summary.lines().skip(self.noted[i]).collect();
                    self.summaries[i] = JobSummary {
                        summary: rest.join("\n"),
                        violation_count: p.violation_count,
                        violations: p.violations,
                    };
                }
                true
            }
            Err(s) => {
                self.ends[i] = AgentEnd::Stopped(status_text(&s));
                self.failures
                    .push(format!("{}: {}", conns[i].name, status_text(&s)));
                false
            }
        }
    }

    /// How the job ended: each agent's summary, or where an interrupted job stands, or
    /// the agents' failures.
    fn outcome(self, plan: &Plan, conns: &[AgentConn]) -> Result<Vec<JobSummary>, SessionError> {
        if let Some((signal, _)) = self.stopping {
            return Err(SessionError::Interrupted(Box::new(Interrupted {
                what: job_name(plan),
                signal,
                begun: true,
                agents: conns
                    .iter()
                    .map(|c| c.name.clone())
                    .zip(self.ends)
                    .collect(),
                done: self.done.iter().sum(),
                total: self.total.iter().sum(),
            })));
        }
        if !self.failures.is_empty() {
            return Err(SessionError::TableJob {
                what: job_name(plan),
                reason: self.failures.join("; "),
            });
        }
        Ok(self.summaries)
    }
}

/// What one agent's table job said when it was done.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobSummary {
    pub summary: String,
    /// TPC-C check: violations of the consistency conditions, and the first ones named.
    pub violation_count: u64,
    pub violations: Vec<String>,
}

/// How long an interrupted table job waits for the agents to stop and say where they
/// stand (an agent stops its prepare within a second of being asked).
const TABLE_STOP_GRACE: Duration = Duration::from_secs(5);

/// SIGINT, SIGTERM and SIGHUP, each with its name (those that can be listened to).
fn interrupt_signals() -> Vec<(&'static str, tokio::signal::unix::Signal)> {
    use tokio::signal::unix::{SignalKind, signal};
    [
        ("SIGINT", SignalKind::interrupt()),
        ("SIGTERM", SignalKind::terminate()),
        ("SIGHUP", SignalKind::hangup()),
    ]
    .into_iter()
    .filter_map(|(name, k)| signal(k).ok().map(|s| (name, s)))
    .collect()
}

/// The name of the next of `signals` to arrive (never, without any).
async fn next_interrupt(
    signals: &mut [(&'static str, tokio::signal::unix::Signal)],
) -> &'static str {
    if signals.is_empty() {
        std::future::pending::<()>().await;
    }
    let (_, i, _) =
        futures::future::select_all(signals.iter_mut().map(|(_, s)| Box::pin(s.recv()))).await;
    signals[i].0
}

/// Asks every agent of a table job to stop it (each stops within a second and answers
/// on its progress stream with what it leaves behind); does not wait.
fn stop_table_job(conns: &[AgentConn], signal: &'static str) {
    for c in conns {
        let mut client = c.client.clone();
        let addr = c.addr.clone();
        tokio::spawn(async move {
            let req = pb::StopRequest {
                reason: format!("the coordinator got {signal}"),
            };
            match tokio::time::timeout(CONNECT_TIMEOUT, client.stop(req)).await {
                Ok(Ok(_)) => {}
                Ok(Err(s)) => warn!(agent = %addr, "stop refused: {}", status_text(&s)),
                Err(_) => warn!(agent = %addr, "no answer to stop"),
            }
        });
    }
}

/// Reads a progress stream to its end; the last message's summary.
async fn stream_progress(stream: &mut Streaming<pb::Progress>) -> Result<String, Status> {
    let mut summary = String::new();
    while let Some(p) = stream.message().await? {
        summary = p.summary;
    }
    Ok(summary)
}

/// What the job is called in its errors: the command's name, or for pgbench the step's
/// (a run's check of its tables is not a prepare).
fn job_name(plan: &Plan) -> &'static str {
    use fleetbench_model::workloads::pgbench::Step;
    match &plan.workload {
        Workload::Pgbench(p) => match p.step {
            Step::Check => "pgbench's check of its tables",
            Step::RunVacuum => "pgbench's vacuum before the run",
            _ => "pgbench's initialisation",
        },
        _ => plan.command.name(),
    }
}
