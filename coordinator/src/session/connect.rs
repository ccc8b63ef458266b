//! Reaching agents: connecting with the token and TLS, the Hello that says who an agent
//! is and whether it can take the run, and the calls that need nothing more (the agents'
//! state, stopping their runs).

use std::time::Duration;

use fleetbench_model::auth::Attach;
use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::v1::agent_client::AgentClient;
use fleetbench_proto::v1::{self as pb, HelloReply, HelloRequest};
use futures::future::join_all;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};

use super::ids::started_here;
use crate::error::SessionError;
use crate::plan::{Workload, split_evenly};
use crate::wire::{self, AgentFacts, AgentStatusLine};

/// How long connecting to and greeting an agent may take.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A greeted agent, ready for a run.
#[derive(Debug, Clone)]
pub struct AgentConn {
    pub addr: String,
    /// What reports and errors call it: its address, or `embedded` for an agent inside
    /// this process ([`crate::local::agent_name`]).
    pub name: String,
    pub hello: HelloReply,
    pub(super) client: AgentClient<InterceptedService<Channel, Attach>>,
    /// How it was reached: observers of the run are reached the same way.
    pub(super) link: Link,
}

/// How to reach agents: the token to attach and, when they serve TLS, how to check them.
#[derive(Clone)]
pub struct Link {
    pub auth: Attach,
    pub tls: Option<ClientTlsConfig>,
}

/// Says whether TLS is used, never the token.
impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
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
            if matches!(workload, Workload::Script(_)) {
                return Err(SessionError::Refused {
                    agent: c.name.clone(),
                    reason: "it does not run Lua scripts: start fleetbench-agent with --allow-scripts on that host".into(),
                });
            }
            return Err(SessionError::MissingWorkload {
                agent: c.name.clone(),
                workload: workload.capability().into(),
                offers: c.hello.workloads.join(", "),
            });
        }
        if !c.hello.busy_run_id.is_empty() {
            return Err(SessionError::Refused {
                agent: c.name.clone(),
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
    for (c, &share) in conns.iter().zip(&shares) {
        // What the host must give is OS threads: pgbench's clients share its -j threads.
        let (threads, option) = workload.os_threads(share);
        let limit = |reason: String| SessionError::Limit {
            agent: c.name.clone(),
            threads,
            reason,
        };
        if let Some((max, why)) = wire::thread_ceiling(&c.hello)
            && threads > max
        {
            // The option to lower, where it is not --threads itself.
            let lower = match option {
                "--threads" => String::new(),
                other => format!(", lower {other}"),
            };
            return Err(limit(format!(
                "its host allows at most {} ({why}): raise that limit{lower}, or spread the threads over more agents",
                fleetbench_model::limits::grouped(max)
            )));
        }
        let files = c.hello.max_open_files;
        if files > 0 && matches!(workload, Workload::Oltp(_)) {
            fleetbench_model::limits::check_files(share, files, files).map_err(limit)?;
        }
    }
    Ok(())
}

/// What speaks first on `addr`, if it is a server that greets its clients (a MySQL server
/// sends its handshake at once; a gRPC agent waits for the client): "a MySQL server
/// (5.7.44)", or None.
/// The largest message an agent may send (an interval with pgbench's transaction log).
const MAX_AGENT_MESSAGE: usize = 64 * 1024 * 1024;

async fn who_answers(addr: &str) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut sock =
        tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr))
            .await
            .ok()?
            .ok()?;
    let mut buf = [0u8; 128];
    let n = tokio::time::timeout(Duration::from_millis(500), sock.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    greeting_of(&buf[..n])
}

/// A MySQL server's greeting, by its first packet: sequence 0, protocol 10, then the
/// server's version up to a NUL.
fn greeting_of(b: &[u8]) -> Option<String> {
    if b.len() > 6 && b[3] == 0 && b[4] == 10 {
        let version: String = b[5..]
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| char::from(c))
            .collect();
        return Some(format!("a MySQL server ({version})"));
    }
    None
}

pub(super) async fn connect_one(addr: String, link: Link) -> Result<AgentConn, SessionError> {
    let name = crate::local::agent_name(&addr);
    let plain = link.tls.is_none();
    let unreachable = |reason: String| {
        // A plain-text client meeting a TLS agent gets past TCP and fails in the handshake.
        let hint = if plain && !reason.contains("tcp connect") && !reason.contains("dns error") {
            " (if the agent serves TLS, give --tls-ca)"
        } else {
            ""
        };
        SessionError::Unreachable {
            agent: name.clone(),
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
    // An interval of pgbench's -l carries each transaction it logged: at 100,000
    // transactions a second an agent's interval passes tonic's 4 MiB default. Bounded still,
    // so that a broken agent cannot make the coordinator buffer without end.
    let mut client = AgentClient::with_interceptor(channel, link.auth.clone())
        .max_decoding_message_size(MAX_AGENT_MESSAGE);
    let req = HelloRequest {
        protocol_version: PROTOCOL_VERSION,
        coordinator_version: env!("CARGO_PKG_VERSION").into(),
    };
    let answer = tokio::time::timeout(CONNECT_TIMEOUT, client.hello(req)).await;
    // Not an agent at all (a database's port given by mistake): say what answered instead
    // of suggesting TLS.
    if matches!(&answer, Ok(Err(s)) if !matches!(
        s.code(),
        Code::FailedPrecondition | Code::Unauthenticated | Code::PermissionDenied
    )) && let Some(what) = who_answers(&addr).await
    {
        return Err(SessionError::Unreachable {
            agent: name.clone(),
            reason: format!(
                "{what} answers there, not a fleetbench agent (agents listen on port 7600 unless started with --listen)"
            ),
        });
    }
    let hello = answer
        .map_err(|_| {
            unreachable(format!(
                "no Hello answer within {}s",
                CONNECT_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|s| match s.code() {
            Code::FailedPrecondition => SessionError::Refused {
                agent: name.clone(),
                reason: s.message().to_string(),
            },
            Code::Unauthenticated => SessionError::Auth {
                agent: name.clone(),
                reason: s.message().to_string(),
            },
            _ => unreachable(status_text(&s)),
        })?
        .into_inner();
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(SessionError::Protocol {
            agent: name.clone(),
            theirs: hello.protocol_version,
            ours: PROTOCOL_VERSION,
            version: hello.agent_version,
        });
    }
    Ok(AgentConn {
        addr,
        name,
        hello,
        client,
        link,
    })
}

pub(super) fn status_text(s: &Status) -> String {
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

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mysql_greeting_is_told_from_other_bytes() {
        let mut g = vec![0x4a, 0, 0, 0, 10];
        g.extend_from_slice(b"10.11.19-MariaDB\0rest");
        assert_eq!(
            greeting_of(&g).as_deref(),
            Some("a MySQL server (10.11.19-MariaDB)")
        );
        // An HTTP/2 SETTINGS frame (what a gRPC server sends) is not one.
        assert_eq!(greeting_of(&[0, 0, 6, 4, 0, 0, 0, 0, 0]), None);
        assert_eq!(greeting_of(b""), None);
    }
    use fleetbench_model::spec::CpuSpec;

    /// A greeted agent whose Hello says `max_threads` (never dialled).
    fn agent(addr: &str, max_threads: u64) -> AgentConn {
        let channel = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        AgentConn {
            addr: addr.into(),
            name: addr.into(),
            hello: HelloReply {
                max_threads,
                max_threads_limit: "vm.max_map_count 65,530, at 5 mappings a thread".into(),
                ..Default::default()
            },
            client: AgentClient::with_interceptor(channel, Attach::new(None).unwrap()),
            link: Link {
                auth: Attach::new(None).unwrap(),
                tls: None,
            },
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

    /// pgbench's clients are cooperative workers of its -j threads (issue 57): 13,000
    /// clients on one thread are one thread to the host; -j beyond the ceiling is refused
    /// naming -j.
    #[tokio::test]
    async fn pgbench_clients_count_as_their_jobs_threads() {
        use fleetbench_model::workloads::pgbench::PgbenchConfig;
        let pgbench = |jobs| {
            Workload::Pgbench(Box::new(PgbenchConfig {
                jobs,
                ..Default::default()
            }))
        };
        let conns = [agent("a:1", 12_861)];
        assert!(check_ceilings(&conns, 13_000, &pgbench(1), false).is_ok());
        let e = check_ceilings(&conns, 13_000, &pgbench(13_000), false).unwrap_err();
        assert!(e.to_string().contains("cannot run 13000 threads"), "{e}");
        assert!(e.to_string().contains("lower -j"), "{e}");
    }
}
