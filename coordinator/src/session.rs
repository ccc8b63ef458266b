//! Talks to agents: Hello (reachability, protocol version, capabilities), then one Run
//! stream per agent with the Start / Ready / Go barrier, merging what comes back.
//! Wire messages become result types in [`crate::wire`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fleetbench_model::auth::Attach;
use fleetbench_model::host::HostFigures;
use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::histogram::CodecError;
use fleetbench_proto::v1::agent_client::AgentClient;
use fleetbench_proto::v1::{
    self as pb, HelloReply, HelloRequest, RunEvent, RunRequest, run_event, run_request,
};
use futures::future::join_all;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status, Streaming};
use tracing::warn;

use crate::error::{AgentEnd, Interrupted, SessionError};
use crate::merge::{
    AgentResult, Connection, IntervalMerger, IntervalPart, MergedInterval, Received, RunResult,
};
use crate::plan::{Plan, TableSplit, Workload, split_by_threads, split_evenly, tables_for_agents};
use crate::wire::{self, AgentFacts, AgentFinal, AgentStatusLine};

/// How long connecting to and greeting an agent may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long past the configured time an agent may take to deliver its final report.
const FINAL_GRACE: Duration = Duration::from_secs(15);

/// A greeted agent, ready for a run.
#[derive(Debug, Clone)]
pub struct AgentConn {
    pub addr: String,
    pub hello: HelloReply,
    client: AgentClient<InterceptedService<Channel, Attach>>,
}

/// Greets every agent (concurrently) and times a second Hello on the open connection.
pub async fn probe(addrs: &[String], link: &Link) -> Vec<AgentStatusLine> {
    join_all(addrs.iter().map(|a| async move {
        let result = match connect_one(a.clone(), link.clone()).await {
            Err(e) => Err(e),
            Ok(mut c) => {
                let t0 = std::time::Instant::now();
                let req = HelloRequest {
                    protocol_version: PROTOCOL_VERSION,
                    coordinator_version: env!("CARGO_PKG_VERSION").into(),
                };
                match c.client.hello(req).await {
                    Ok(r) => Ok(AgentFacts::of(r.into_inner(), t0.elapsed())),
                    Err(s) => Err(SessionError::Unreachable {
                        agent: a.clone(),
                        reason: status_text(&s),
                    }),
                }
            }
        };
        AgentStatusLine {
            addr: a.clone(),
            result,
        }
    }))
    .await
}

/// How to reach agents: the token to attach and, when they serve TLS, how to check them.
#[derive(Clone)]
pub struct Link {
    pub auth: Attach,
    pub tls: Option<ClientTlsConfig>,
}

/// Asks every agent to stop whatever it runs; per agent the stopped run id ("" if idle).
pub async fn stop_all(
    addrs: &[String],
    link: &Link,
    reason: &str,
) -> Vec<(String, Result<String, SessionError>)> {
    join_all(addrs.iter().map(|a| async move {
        let r = match connect_one(a.clone(), link.clone()).await {
            Err(e) => Err(e),
            Ok(mut c) => c
                .client
                .stop(pb::StopRequest {
                    reason: reason.into(),
                })
                .await
                .map(|r| r.into_inner().run_id)
                .map_err(|s| SessionError::Refused {
                    agent: a.clone(),
                    reason: status_text(&s),
                }),
        };
        (a.clone(), r)
    }))
    .await
}

/// Connects to every agent concurrently and greets it. Fails on the first agent (in the
/// given order) that is unreachable, speaks another protocol or is already busy.
pub async fn connect(
    addrs: &[String],
    workload: &Workload,
    link: &Link,
) -> Result<Vec<AgentConn>, SessionError> {
    let results = join_all(addrs.iter().map(|a| connect_one(a.clone(), link.clone()))).await;
    let conns = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    for c in &conns {
        if !c.hello.workloads.iter().any(|w| w == workload.capability()) {
            return Err(SessionError::MissingWorkload {
                agent: c.addr.clone(),
                workload: workload.capability().into(),
                offers: c.hello.workloads.join(", "),
            });
        }
        if !c.hello.busy_run_id.is_empty() {
            return Err(SessionError::Refused {
                agent: c.addr.clone(),
                reason: format!(
                    "busy: run {} for {} from {}",
                    c.hello.busy_run_id,
                    crate::report::format::age(
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_secs())
                            .saturating_sub(c.hello.busy_since_unix)
                    ),
                    c.hello.busy_peer
                ),
            });
        }
    }
    Ok(conns)
}

/// Greets `addrs`, waiting for an agent that is still releasing a run this coordinator
/// has just finished (a warm-up, a previous sweep step). An agent busy with anyone else's
/// run is refused at once: waiting would only delay the answer, or start a run in the
/// moment the other one ends.
pub async fn connect_idle(
    addrs: &[String],
    workload: &Workload,
    link: &Link,
) -> Result<Vec<AgentConn>, SessionError> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let ours = |reason: &str| {
        reason
            .strip_prefix("busy: run ")
            .and_then(|r| r.split(' ').next())
            .is_some_and(started_here)
    };
    loop {
        match connect(addrs, workload, link).await {
            Err(SessionError::Refused { reason, .. })
                if ours(&reason) && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

/// Refuses, before anything starts, an agent's share of `threads` beyond what its Hello
/// says its host can give: more threads than its thread ceiling, or (OLTP, at least one
/// connection a thread) more connections than its open-files limit. An agent that says
/// nothing (0) is left to check its Start itself, as every agent does. Embedded agents
/// (`one_process`) share this process and its limits: each is held to all the threads.
pub fn check_ceilings(
    conns: &[AgentConn],
    threads: u32,
    workload: &Workload,
    one_process: bool,
) -> Result<(), SessionError> {
    let shares = if one_process {
        vec![u64::from(threads); conns.len()]
    } else {
        split_evenly(u64::from(threads), conns.len())
    };
    for (c, &threads) in conns.iter().zip(&shares) {
        let limit = |reason: String| SessionError::Limit {
            agent: c.addr.clone(),
            threads,
            reason,
        };
        if let Some((max, why)) = wire::thread_ceiling(&c.hello)
            && threads > max
        {
            return Err(limit(format!(
                "its host allows at most {} ({why}): raise that limit, or spread the threads over more agents",
                fleetbench_model::limits::grouped(max)
            )));
        }
        let files = c.hello.max_open_files;
        if files > 0 && matches!(workload, Workload::Oltp(_)) {
            fleetbench_model::limits::check_files(threads, files, files).map_err(limit)?;
        }
    }
    Ok(())
}

/// The line that says the run warms up first (None without a warm-up).
pub fn warmup_line(plan: &Plan) -> Option<String> {
    (!plan.warmup.is_zero()).then(|| {
        format!(
            "Warming up for {}s (not measured)...",
            plan.warmup.as_secs_f64()
        )
    })
}

async fn connect_one(addr: String, link: Link) -> Result<AgentConn, SessionError> {
    let plain = link.tls.is_none();
    let unreachable = |reason: String| {
        // A plain-text client meeting a TLS agent gets past TCP and fails in the handshake.
        let hint = if plain && !reason.contains("tcp connect") && !reason.contains("dns error") {
            " (if the agent serves TLS, give --tls-ca)"
        } else {
            ""
        };
        SessionError::Unreachable {
            agent: addr.clone(),
            reason: format!("{reason}{hint}"),
        }
    };
    let scheme = if plain { "http" } else { "https" };
    let mut endpoint =
        Endpoint::from_shared(format!("{scheme}://{addr}")).map_err(|e| unreachable(chain(&e)))?;
    if let Some(tls) = &link.tls {
        let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        endpoint = endpoint
            .tls_config(tls.clone().domain_name(host))
            .map_err(|e| unreachable(chain(&e)))?;
    }
    let endpoint = endpoint
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(1))
        .keep_alive_timeout(fleetbench_model::KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    let channel = tokio::time::timeout(CONNECT_TIMEOUT, endpoint.connect())
        .await
        .map_err(|_| unreachable(format!("no answer within {}s", CONNECT_TIMEOUT.as_secs())))?
        .map_err(|e| unreachable(chain(&e)))?;
    let mut client = AgentClient::with_interceptor(channel, link.auth);
    let req = HelloRequest {
        protocol_version: PROTOCOL_VERSION,
        coordinator_version: env!("CARGO_PKG_VERSION").into(),
    };
    let hello = tokio::time::timeout(CONNECT_TIMEOUT, client.hello(req))
        .await
        .map_err(|_| {
            unreachable(format!(
                "no Hello answer within {}s",
                CONNECT_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|s| match s.code() {
            Code::FailedPrecondition => SessionError::Refused {
                agent: addr.clone(),
                reason: s.message().to_string(),
            },
            Code::Unauthenticated => SessionError::Auth {
                agent: addr.clone(),
                reason: s.message().to_string(),
            },
            _ => unreachable(status_text(&s)),
        })?
        .into_inner();
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(SessionError::Protocol {
            agent: addr,
            theirs: hello.protocol_version,
            ours: PROTOCOL_VERSION,
            version: hello.agent_version,
        });
    }
    Ok(AgentConn {
        addr,
        hello,
        client,
    })
}

/// An agent taking part in the run, with its open stream.
struct Participant {
    conn: AgentConn,
    threads: u32,
    requests: mpsc::Sender<RunRequest>,
    /// Taken by the reader task once the run goes.
    events: Option<Streaming<RunEvent>>,
    /// How its connections to each target were made, as its Ready said.
    connections: Vec<(usize, Connection)>,
    /// Connects it tried again while opening: (target, reason, count).
    retries: Vec<(usize, String, u64)>,
}

/// Connections the agents have opened so far, per agent (done, total), as their Opening
/// messages say.
type OpeningTally = std::sync::Mutex<Vec<(u64, u64)>>;

impl Participant {
    fn sender(&self) -> wire::Sender {
        wire::Sender {
            addr: self.conn.addr.clone(),
            host: self.conn.hello.hostname.clone(),
            facts: wire::host_facts(&self.conn.hello),
            threads: self.threads,
        }
    }
}

/// What the caller of [`run`] is told while the run goes, in this order: the opening,
/// Go, then the intervals.
pub trait RunObserver {
    /// (open, total) connections summed over the agents while they open them (only when
    /// that takes a while).
    fn opening(&mut self, open: u64, total: u64);
    /// Once all agents are Ready, just before Go: the run's id and what their Ready said
    /// (how the agents connected to each target, each distinct way once, and the connects
    /// retried). Called once.
    fn go(&mut self, run_id: &str, ready: &RunResult);
    /// Each merged tick as it completes.
    fn interval(&mut self, iv: &MergedInterval);
    /// Each agent's part of a tick as it arrives: the agent's address, the tick's number,
    /// its host's load.
    fn agent_interval(
        &mut self,
        addr: &str,
        seq: u32,
        part: &IntervalPart,
        load: Option<&HostFigures>,
    );
}

/// Runs the plan over `conns`: threads (and events) split evenly, all agents started
/// together once every one is Ready; `watch` is told how it goes. Agents given no threads
/// (fewer threads than agents) sit the run out.
pub async fn run(
    conns: Vec<AgentConn>,
    plan: &Plan,
    watch: &mut impl RunObserver,
) -> Result<RunResult, SessionError> {
    let one_process = matches!(plan.agents, crate::plan::AgentSource::Local(_));
    check_ceilings(&conns, plan.threads, &plan.workload, one_process)?;
    let shares = split_evenly(u64::from(plan.threads), conns.len());
    let events = plan.events.map(|e| split_by_threads(e, &shares));
    let rates = crate::plan::split_rate(plan.rate, &shares);
    let run_id = run_id();
    let seed = if plan.seed == 0 {
        now_nanos()
    } else {
        plan.seed
    };
    let active = shares.iter().filter(|&&t| t > 0).count();
    let tables = match &plan.workload {
        Workload::Oltp(o) => {
            let shared = o.split == TableSplit::Shared;
            tables_for_agents(&o.config.tables, active, shared)
        }
        _ => vec![Vec::new(); active],
    };
    let warehouse_shares = match &plan.workload {
        Workload::Tpcc(t) => crate::plan::warehouse_shares(t.options.warehouses, active),
        _ => Vec::new(),
    };
    let tally: OpeningTally = std::sync::Mutex::new(vec![(0, 0); active]);
    let mut first_thread = 0u32;
    let mut starts = Vec::new();
    for (i, conn) in conns.into_iter().enumerate() {
        let threads = shares[i] as u32;
        if threads == 0 {
            continue;
        }
        let workload = match &plan.workload {
            // Partition: this agent's terminals keep to its share of the warehouses.
            Workload::Tpcc(t) if t.options.partition => {
                let (first, last) = warehouse_shares[starts.len()];
                Workload::Tpcc(Box::new(fleetbench_model::workloads::tpcc::TpccConfig {
                    first_warehouse: first,
                    last_warehouse: last,
                    ..(**t).clone()
                }))
            }
            w => w.clone(),
        };
        let start = pb::Start {
            run_id: run_id.clone(),
            workload: Some(fleetbench_model::wire::workload_to_proto(
                &workload,
                &tables[starts.len()],
            )),
            threads,
            first_thread,
            time_limit_ms: plan.time.map_or(0, |t| t.as_millis() as u64),
            event_limit: events.as_ref().map_or(0, |e| e[i]),
            tick_ms: plan.tick().as_millis() as u64,
            seed: seed.wrapping_add(u64::from(first_thread)),
            total_threads: plan.threads,
            rate: rates[i],
            warmup_ms: plan.warmup.as_millis() as u64,
            ready_timeout_ms: plan.ready_timeout.as_millis() as u64,
        };
        first_thread += threads;
        let slot = starts.len();
        starts.push(start_one(conn, start, plan.ready_timeout, (&tally, slot)));
    }
    // If any agent fails here, dropping the others' streams releases them unstarted.
    let joined = join_all(starts);
    tokio::pin!(joined);
    let period = Duration::from_millis(500);
    let mut every = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut shown = (0, 0);
    let started = loop {
        tokio::select! {
            r = &mut joined => break r,
            _ = every.tick() => {
                let now = opening_sum(&tally);
                if now != shown && now.1 > 0 {
                    shown = now;
                    watch.opening(now.0, now.1);
                }
            }
        }
    };
    if shown.1 > 0 {
        // Whoever saw the count move sees it end.
        let last = opening_sum(&tally);
        if last != shown {
            watch.opening(last.0, last.1);
        }
    }
    let mut parts = started.into_iter().collect::<Result<Vec<_>, _>>()?;
    let ways: Vec<(usize, Connection)> = parts.iter().flat_map(|p| p.connections.clone()).collect();
    let mut seen = RunResult::default();
    seen.add_connections(ways);
    for p in &parts {
        seen.add_connect_retries(&p.retries);
    }
    watch.go(&run_id, &seen);
    let started = std::time::SystemTime::now();
    for p in &parts {
        let go = RunRequest {
            msg: Some(run_request::Msg::Go(pb::Go {})),
        };
        // A failed send shows up as a broken stream below and marks the agent lost.
        let _ = p.requests.send(go).await;
    }
    let mut collected = collect(&mut parts, plan, watch).await;
    // How the agents connected, as their Ready said: once, for the header and the report.
    collected.connections = seen.connections;
    collected.connect_retries = seen.connect_retries;
    collected.run_id = run_id;
    // The measurement's start: Go, then the warm-up.
    collected.started = Some(started + plan.warmup);
    collected.ended = Some(std::time::SystemTime::now());
    Ok(collected)
}

/// (open, total) connections over all agents.
fn opening_sum(tally: &OpeningTally) -> (u64, u64) {
    let t = tally.lock().unwrap_or_else(|p| p.into_inner());
    t.iter().fold((0, 0), |(d, n), &(a, b)| {
        (d.saturating_add(a), n.saturating_add(b))
    })
}

/// Sends Start and waits for Ready. The agent may first stream how far it has got with
/// opening its connections (recorded in `tally`); `ready_timeout` counts from the last
/// such progress, so a big agent is never cancelled for being slow, but a stuck one is.
async fn start_one(
    conn: AgentConn,
    start: pb::Start,
    ready_timeout: Duration,
    (tally, slot): (&OpeningTally, usize),
) -> Result<Participant, SessionError> {
    let threads = start.threads;
    let (tx, rx) = mpsc::channel(4);
    let msg = RunRequest {
        msg: Some(run_request::Msg::Start(start)),
    };
    tx.send(msg).await.expect("receiver is alive");
    let refused = |reason: String| SessionError::Refused {
        agent: conn.addr.clone(),
        reason,
    };
    // The agent opens its workers (threads, database connections) before it answers, so
    // the timeout covers the call and the first message together.
    let not_ready = |conn: &AgentConn| SessionError::NotReady {
        agent: conn.addr.clone(),
        secs: ready_timeout.as_secs(),
    };
    let mut client = conn.client.clone();
    let mut events =
        match tokio::time::timeout(ready_timeout, client.run(ReceiverStream::new(rx))).await {
            Err(_) => return Err(not_ready(&conn)),
            Ok(Err(s)) => return Err(refused(status_text(&s))),
            Ok(Ok(r)) => r.into_inner(),
        };
    loop {
        match tokio::time::timeout(ready_timeout, events.message()).await {
            Err(_) => return Err(not_ready(&conn)),
            Ok(Err(s)) => return Err(refused(status_text(&s))),
            Ok(Ok(Some(RunEvent {
                msg: Some(run_event::Msg::Opening(p)),
            }))) => {
                let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = t.get_mut(slot) {
                    *e = (p.done.min(p.total), p.total);
                }
            }
            Ok(Ok(Some(RunEvent {
                msg: Some(run_event::Msg::Ready(ready)),
            }))) => {
                // Ready means all open, whatever the last progress message said.
                let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = t.get_mut(slot) {
                    e.0 = e.1;
                }
                drop(t);
                return Ok(Participant {
                    conn,
                    threads,
                    requests: tx,
                    events: Some(events),
                    connections: ready.connections.iter().map(wire::connection).collect(),
                    retries: ready
                        .retries
                        .iter()
                        .map(|r| (r.target as usize, r.reason.clone(), r.count))
                        .collect(),
                });
            }
            Ok(Ok(_)) => {
                return Err(refused(
                    "it answered Start with something other than Ready".into(),
                ));
            }
        }
    }
}

/// Creates and loads (`create`) or drops the OLTP tables, each agent taking a contiguous
/// share of the tables and of the threads. Every agent first checks (dry run) that it can
/// reach its targets and, for prepare, that none of its tables exists, so a bad setup
/// creates nothing anywhere. `progress` sees (done, total) summed over agents. Returns
/// each agent's summary lines.
pub async fn table_job(
    conns: Vec<AgentConn>,
    plan: &Plan,
    create: bool,
    mut progress: impl FnMut(u64, u64),
) -> Result<Vec<JobSummary>, SessionError> {
    // OLTP: each agent a contiguous share of the tables and threads. fileio: every agent
    // its own full set of files, with all the threads. TPC-C: one agent creates, indexes
    // and drops; loads and checks go by contiguous shares of the warehouses.
    // Agents that dry-run: those that work, and for TPC-C's create step every agent, so
    // that one that cannot reach the server stops the prepare before a table exists.
    let mut checkers = None;
    let (n, specs, threads) = match &plan.workload {
        Workload::Oltp(o) => {
            let n = conns.len().min(o.config.tables.len()).max(1);
            let shares = tables_for_agents(&o.config.tables, n, false);
            let threads = split_evenly(u64::from(plan.threads).max(n as u64), n);
            let specs = shares
                .iter()
                .map(|s| fleetbench_model::wire::workload_to_proto(&plan.workload, s))
                .collect();
            (n, specs, threads)
        }
        Workload::Fileio(_) => {
            let n = conns.len();
            let spec = fleetbench_model::wire::workload_to_proto(&plan.workload, &[]);
            (n, vec![spec; n], vec![u64::from(plan.threads); n])
        }
        Workload::Tpcc(t) => {
            use fleetbench_model::workloads::tpcc::PrepareStep;
            let spread = create && matches!(t.step, PrepareStep::Load | PrepareStep::Check);
            let n = if spread {
                conns.len().min(t.options.warehouses as usize).max(1)
            } else {
                1
            };
            let mut shares = crate::plan::warehouse_shares(t.options.warehouses, n);
            if create && t.step == PrepareStep::Create {
                // The same check (the server answers, no table exists) on every agent.
                shares = vec![(1, t.options.warehouses); conns.len().max(1)];
                checkers = Some(conns.len());
            }
            let specs = shares
                .into_iter()
                .enumerate()
                .map(|(i, (first, last))| {
                    let c = fleetbench_model::workloads::tpcc::TpccConfig {
                        first_warehouse: first,
                        last_warehouse: last,
                        load_items: i == 0,
                        ..(**t).clone()
                    };
                    fleetbench_model::wire::workload_to_proto(&Workload::Tpcc(Box::new(c)), &[])
                })
                .collect();
            let threads = split_evenly(u64::from(plan.threads).max(n as u64), n);
            (n, specs, threads)
        }
        _ => return Ok(Vec::new()),
    };
    let run_id = run_id();
    let seed = if plan.seed == 0 {
        now_nanos()
    } else {
        plan.seed
    };
    // prewarm goes by the Prepare call, with its own flag.
    let prewarm = plan.command == crate::plan::Command::Prewarm;
    let request = |i: usize, dry_run: bool| pb::PrepareRequest {
        run_id: run_id.clone(),
        workload: Some(specs[i].clone()),
        // A checker beyond the working agents (TPC-C create) checks with one connection.
        threads: threads.get(i).copied().unwrap_or(1) as u32,
        dry_run,
        seed: seed.wrapping_add(i as u64),
        prewarm,
    };
    let call = |mut conn: AgentConn, req: pb::PrepareRequest| async move {
        let r = if create || prewarm {
            conn.client.prepare(req).await
        } else {
            conn.client.cleanup(req).await
        };
        let refused = |s: Status| SessionError::Refused {
            agent: conn.addr.clone(),
            reason: status_text(&s),
        };
        let mut stream = r.map_err(refused)?.into_inner();
        Ok::<_, SessionError>((
            conn.addr.clone(),
            stream_progress(&mut stream).await.map_err(refused)?,
        ))
    };
    let conns: Vec<AgentConn> = conns.into_iter().take(checkers.unwrap_or(n)).collect();
    // Dry run everywhere first.
    let checks = conns
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, c)| call(c, request(i, true)));
    // From here on a signal (Ctrl-C, SIGTERM, a closed terminal) stops the job on every
    // agent and says where it stands, instead of ending the process mid-load.
    let mut signals = interrupt_signals();
    let checked = tokio::select! {
        r = join_all(checks) => r,
        signal = next_interrupt(&mut signals) => {
            return Err(SessionError::Interrupted(Box::new(Interrupted {
                what: plan.command.name(),
                signal,
                begun: false,
                agents: Vec::new(),
                done: 0,
                total: 0,
            })));
        }
    };
    // Agents refusing for the same reason (one server seen by all) are named together.
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
    let refusals: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, agents)| match &agents[..] {
            [a] if a.is_empty() => reason,
            [a] => format!("agent {a}: {reason}"),
            many => format!("agents {}: {reason}", many.join(", ")),
        })
        .collect();
    if !refusals.is_empty() {
        let exists = matches!(plan.workload, Workload::Oltp(_))
            && refusals.iter().any(|r| r.contains("tables already exist"));
        return Err(SessionError::CheckRefused {
            what: plan.command.name(),
            reasons: format!(
                "{}{}",
                refusals.join("; "),
                if exists {
                    " (run cleanup first, or pick other --tables)"
                } else {
                    ""
                }
            ),
        });
    }

    let (tx, mut rx) = mpsc::channel::<(usize, Result<pb::Progress, Status>)>(64);
    let conns: Vec<AgentConn> = conns.into_iter().take(n).collect();
    for (i, mut conn) in conns.iter().cloned().enumerate() {
        let req = request(i, false);
        let tx = tx.clone();
        tokio::spawn(async move {
            let r = if create || prewarm {
                conn.client.prepare(req).await
            } else {
                conn.client.cleanup(req).await
            };
            match r {
                Err(s) => {
                    let _ = tx.send((i, Err(s))).await;
                }
                Ok(resp) => {
                    let mut stream = resp.into_inner();
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
                                let _ = tx
                                    .send((
                                        i,
                                        Err(Status::unavailable(
                                            "the agent closed the stream early",
                                        )),
                                    ))
                                    .await;
                                break;
                            }
                            Err(s) => {
                                let _ = tx.send((i, Err(s))).await;
                                break;
                            }
                        }
                    }
                }
            }
        });
    }
    drop(tx);
    let mut done = vec![0u64; n];
    let mut total = vec![0u64; n];
    let mut summaries = vec![JobSummary::default(); n];
    let mut failures = Vec::new();
    let mut ends: Vec<AgentEnd> = vec![AgentEnd::Silent; n];
    // The signal that stopped the job, and until when the agents' last words are awaited.
    let mut stopping: Option<(&'static str, tokio::time::Instant)> = None;
    loop {
        let grace = async {
            match stopping {
                Some((_, until)) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            got = rx.recv() => {
                let Some((i, r)) = got else { break };
                match r {
                    Ok(p) => {
                        done[i] = p.done;
                        total[i] = p.total;
                        if !p.summary.is_empty() {
                            ends[i] = AgentEnd::Finished(p.summary.clone());
                            summaries[i] = JobSummary {
                                summary: p.summary,
                                violation_count: p.violation_count,
                                violations: p.violations,
                            };
                        }
                        progress(done.iter().sum(), total.iter().sum());
                    }
                    Err(s) => {
                        ends[i] = AgentEnd::Stopped(status_text(&s));
                        failures.push(format!("{}: {}", conns[i].addr, status_text(&s)));
                    }
                }
            }
            signal = next_interrupt(&mut signals) => {
                if stopping.is_some() {
                    // A second signal: no more waiting for the agents.
                    break;
                }
                tracing::info!("{signal}: stopping the {} on every agent", plan.command.name());
                stop_table_job(&conns, signal);
                stopping = Some((signal, tokio::time::Instant::now() + TABLE_STOP_GRACE));
            }
            _ = grace => break,
        }
    }
    if let Some((signal, _)) = stopping {
        return Err(SessionError::Interrupted(Box::new(Interrupted {
            what: plan.command.name(),
            signal,
            begun: true,
            agents: conns.iter().map(|c| c.addr.clone()).zip(ends).collect(),
            done: done.iter().sum(),
            total: total.iter().sum(),
        })));
    }
    if !failures.is_empty() {
        return Err(SessionError::TableJob {
            what: plan.command.name(),
            reason: failures.join("; "),
        });
    }
    Ok(summaries)
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

/// What a participant's stream delivered, already decoded by its reader task so that the
/// histograms of many agents are decoded in parallel rather than one by one in the merge.
enum Delivery {
    /// Tick number and the report, or why its histogram was unreadable; the agent host's
    /// load over it.
    Interval(
        u32,
        Result<Box<IntervalPart>, CodecError>,
        Option<HostFigures>,
    ),
    Final(Box<AgentFinal>),
    Broken(String),
}

/// Receives every agent's intervals and final report until all have finished or are lost.
/// Ctrl-C sends Stop to every agent and keeps collecting, so what ran is still reported.
async fn collect(
    parts: &mut [Participant],
    plan: &Plan,
    watch: &mut impl RunObserver,
) -> RunResult {
    let (tx, mut rx) = mpsc::channel::<(usize, Delivery)>(64);
    // What each agent's intervals added up to: a lost agent's share of the totals. Kept
    // by the agent's reader task, off the merge's path.
    let received: Vec<std::sync::Arc<std::sync::Mutex<Received>>> =
        (0..parts.len()).map(|_| Default::default()).collect();
    for (i, p) in parts.iter_mut().enumerate() {
        let Some(mut stream) = p.events.take() else {
            continue;
        };
        let tx = tx.clone();
        let sender = p.sender();
        let sum = received[i].clone();
        tokio::spawn(async move {
            loop {
                let d = match stream.message().await {
                    Ok(Some(RunEvent {
                        msg: Some(run_event::Msg::Interval(iv)),
                    })) => {
                        let part = wire::interval_part(&iv).map(Box::new);
                        if let Ok(p) = &part {
                            sum.lock().unwrap_or_else(|p| p.into_inner()).add(p);
                        }
                        Delivery::Interval(iv.seq, part, iv.host.as_ref().map(wire::host_load))
                    }
                    Ok(Some(RunEvent {
                        msg: Some(run_event::Msg::Final(f)),
                    })) => Delivery::Final(Box::new(wire::agent_final(&sender, &f))),
                    Ok(Some(_)) => continue,
                    Ok(None) => Delivery::Broken("its stream ended without a final report".into()),
                    Err(s) => Delivery::Broken(status_text(&s)),
                };
                let last = !matches!(d, Delivery::Interval(..));
                if tx.send((i, d)).await.is_err() || last {
                    break;
                }
            }
        });
    }
    drop(tx);

    let mut merger = IntervalMerger::new(parts.len(), plan.tick());
    let mut result = RunResult::default();
    let mut outcome: Vec<Option<AgentResult>> = vec![None; parts.len()];
    let take_received =
        |i: usize| std::mem::take(&mut *received[i].lock().unwrap_or_else(|p| p.into_inner()));
    // Agents without an outcome yet: counted, not searched for on every message.
    let mut pending = parts.len();
    // Each agent host's load per tick, as its intervals said.
    let mut hosts: Vec<Vec<(u32, HostFigures)>> = vec![Vec::new(); parts.len()];
    // The run's time counts from the end of the warm-up.
    let deadline = plan
        .time
        .map(|t| tokio::time::Instant::now() + plan.warmup + t + FINAL_GRACE);
    // --forced-shutdown: agents still running this long after the run's time are stopped.
    let mut forced = match (plan.time, plan.forced_shutdown) {
        (Some(t), Some(after)) => {
            Some((tokio::time::Instant::now() + plan.warmup + t + after, after))
        }
        _ => None,
    };
    let mut interrupts = 0u32;
    // One stream per signal for the whole run: a signal that arrives while an interval is
    // being merged waits in it instead of being lost between two select! rounds. SIGTERM
    // (systemd, Kubernetes) and SIGHUP (a closed terminal) stop the run like Ctrl-C, so
    // the partial result is still printed and saved.
    use tokio::signal::unix::{SignalKind, signal};
    let mut sigint: Vec<tokio::signal::unix::Signal> = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ]
    .into_iter()
    .filter_map(|k| signal(k).ok())
    .collect();
    let interrupted = async |s: &mut Vec<tokio::signal::unix::Signal>| {
        if s.is_empty() {
            std::future::pending::<()>().await;
        }
        futures::future::select_all(s.iter_mut().map(|s| Box::pin(s.recv()))).await;
    };
    while pending > 0 {
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let released = tokio::select! {
            got = rx.recv() => match got {
                None => break,
                Some((i, Delivery::Interval(seq, part, host))) => {
                    if let Some(h) = host {
                        hosts[i].push((seq, h));
                    }
                    match part {
                    Ok(part) => {
                        watch.agent_interval(&parts[i].conn.addr, seq, &part, host.as_ref());
                        merger.add(i, seq, *part)
                    }
                    Err(e) => {
                        warn!(agent = %parts[i].conn.addr, "dropping an interval: {e}");
                        Vec::new()
                    }
                }
                }
                Some((i, Delivery::Final(f))) => {
                    let AgentFinal {
                        agent,
                        kinds,
                        targets,
                    } = *f;
                    if outcome[i].is_none() {
                        pending -= 1;
                        result.add_statements(kinds, targets);
                        outcome[i] = Some(agent);
                    }
                    merger.finish(i)
                }
                Some((i, Delivery::Broken(why))) => {
                    if outcome[i].is_none() {
                        pending -= 1;
                        outcome[i] = Some(take_received(i).into_lost(lost(&parts[i], why)));
                    }
                    merger.finish(i)
                }
            },
            _ = async {
                match forced {
                    Some((at, _)) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {
                let after = forced.take().map_or(0, |f| f.1.as_secs());
                for p in parts.iter() {
                    let reason = format!("forced shutdown {after}s after the run's time (--forced-shutdown)");
                    let stop = RunRequest { msg: Some(run_request::Msg::Stop(pb::Stop { reason })) };
                    let _ = p.requests.try_send(stop);
                }
                Vec::new()
            }
            _ = interrupted(&mut sigint) => {
                interrupts += 1;
                result.interrupted = true;
                if interrupts > 1 {
                    break;
                }
                for p in parts.iter() {
                    let stop = RunRequest { msg: Some(run_request::Msg::Stop(pb::Stop { reason: "interrupted by the user".into() })) };
                    let _ = p.requests.try_send(stop);
                }
                Vec::new()
            }
            _ = sleep => {
                for (i, o) in outcome.iter_mut().enumerate() {
                    if o.is_none() {
                        let why = format!("no final report within {}s after the run's time", FINAL_GRACE.as_secs());
                        *o = Some(take_received(i).into_lost(lost(&parts[i], why)));
                    }
                }
                pending = 0;
                Vec::new()
            }
        };
        for m in released {
            watch.interval(&m);
            result.intervals.push(m);
        }
    }
    for (i, o) in outcome.iter_mut().enumerate() {
        if o.is_none() {
            let why = "abandoned after a second interrupt".into();
            *o = Some(take_received(i).into_lost(lost(&parts[i], why)));
        }
    }
    for i in 0..parts.len() {
        for m in merger.finish(i) {
            watch.interval(&m);
            result.intervals.push(m);
        }
    }
    result.agents = outcome.into_iter().flatten().collect();
    result.hosts = parts
        .iter()
        .zip(hosts)
        .map(|(p, h)| (p.conn.addr.clone(), h))
        .collect();
    result
}

fn lost(p: &Participant, why: String) -> AgentResult {
    p.sender().lost(why)
}

fn status_text(s: &Status) -> String {
    if s.message().is_empty() {
        format!("{:?}", s.code())
    } else {
        s.message().to_string()
    }
}

/// The error and its causes on one line, deduplicated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = c.source();
    }
    parts.join(": ")
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

fn run_id() -> String {
    format!("{:x}-{:x}", now_nanos() / 1_000_000, std::process::id())
}

/// Whether `run_id` was made by this process (its pid is the id's suffix).
pub fn started_here(run_id: &str) -> bool {
    run_id.ends_with(&format!("-{:x}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetbench_model::spec::CpuSpec;

    /// A greeted agent whose Hello says `max_threads` (never dialled).
    fn agent(addr: &str, max_threads: u64) -> AgentConn {
        let channel = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        AgentConn {
            addr: addr.into(),
            hello: HelloReply {
                max_threads,
                max_threads_limit: "vm.max_map_count 65,530, at 5 mappings a thread".into(),
                ..Default::default()
            },
            client: AgentClient::with_interceptor(channel, Attach::new(None).unwrap()),
        }
    }

    #[tokio::test]
    async fn a_share_beyond_an_agents_ceiling_is_refused_naming_it() {
        let cpu = Workload::Cpu(CpuSpec { max_prime: 10_000 });
        let conns = [agent("a:1", 12_861), agent("b:1", 20_000)];
        // Up to the ceiling on each agent: not refused.
        assert!(check_ceilings(&conns, 2 * 12_861, &cpu, false).is_ok());
        let e = check_ceilings(&conns, 2 * 12_861 + 2, &cpu, false).unwrap_err();
        assert!(matches!(e, SessionError::Limit { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "agent a:1 cannot run 12862 threads: its host allows at most 12,861 \
             (vm.max_map_count 65,530, at 5 mappings a thread): raise that limit, or spread \
             the threads over more agents"
        );
        // An agent that says nothing is left to check its Start itself.
        assert!(check_ceilings(&[agent("c:1", 0)], 1_000_000, &cpu, false).is_ok());
        // Embedded agents share one process: each holds all the threads.
        let local = [agent("127.0.0.1:1", 12_861), agent("127.0.0.1:2", 12_861)];
        assert!(check_ceilings(&local, 12_861, &cpu, true).is_ok());
        let e = check_ceilings(&local, 12_862, &cpu, true).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("agent 127.0.0.1:1 cannot run 12862 threads"),
            "{e}"
        );
    }
}
