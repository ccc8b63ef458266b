//! Where the load runs: `--agents` or `--local-agents`, and the threads each agent may
//! take.

use super::model::{AgentSource, PlanError};
use super::values::{invalid, num};
use crate::cli::RawArgs;

/// The most embedded agents (`--local-agents`): each is a gRPC server in this process.
pub const MAX_LOCAL_AGENTS: u32 = 256;

/// Checks `threads` over `agents`: at most [`fleetbench_model::limits::MAX_THREADS`] on
/// each, and, for embedded agents (all threads in this process), this host's limits.
pub fn check_threads(threads: u32, agents: &AgentSource) -> Result<(), PlanError> {
    let n = match agents {
        AgentSource::Remote(a) => a.len().max(1) as u64,
        AgentSource::Local(k) => u64::from(*k),
    };
    let per_agent = u64::from(threads).div_ceil(n);
    let checked = match agents {
        AgentSource::Local(_) => fleetbench_model::limits::check_threads(u64::from(threads)),
        AgentSource::Remote(_) if per_agent > fleetbench_model::limits::MAX_THREADS => {
            Err(format!(
                "{per_agent} threads on one agent are more than the {} accepted: spread them over more agents",
                fleetbench_model::limits::MAX_THREADS
            ))
        }
        AgentSource::Remote(_) => Ok(()),
    };
    checked.map_err(|why| PlanError::Limit(format!("--threads={threads}: {why}")))
}

/// Parses `--agents` (comma-separated, repeatable) into HOST:PORT addresses. An agent
/// listed twice is refused: it would be asked for two shares and answer the second "busy".
pub fn parse_agents(list: &[String]) -> Result<Vec<String>, PlanError> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<(String, u16)> = Vec::new();
    for a in list.iter().flat_map(|s| s.split(',')).map(str::trim) {
        let Some(key) = agent_key(a) else {
            return Err(invalid("agents", a, "expected HOST:PORT"));
        };
        if let Some(i) = seen.iter().position(|k| *k == key) {
            let spellings = if out[i] == a {
                String::new()
            } else {
                format!(" (as {} and {a})", out[i])
            };
            return Err(PlanError::AgentTwice(out[i].clone(), spellings));
        }
        seen.push(key);
        out.push(a.to_string());
    }
    if out.is_empty() {
        return Err(invalid("agents", "", "expected HOST:PORT"));
    }
    Ok(out)
}

/// An agent's address as a comparable key: the host without brackets, an IP address in
/// its canonical form and a name in lower case, and the port as a number (so that
/// `[::1]:7600`, `[0::1]:07600` are one agent, and `Client1:7600`, `client1:7600` another).
/// None when `a` is not HOST:PORT. (A name and its address, `localhost` and `127.0.0.1`,
/// stay two: telling them apart would need a lookup.)
fn agent_key(a: &str) -> Option<(String, u16)> {
    let (host, port) = a.rsplit_once(':')?;
    let port = port.parse::<u16>().ok().filter(|p| *p > 0)?;
    if host.is_empty() {
        return None;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let host = match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => bare.trim_end_matches('.').to_ascii_lowercase(),
    };
    Some((host, port))
}

/// The agents the command line names: `--agents`, `--local-agents`, or one embedded agent.
pub(super) fn agents_of(raw: &RawArgs) -> Result<AgentSource, PlanError> {
    Ok(match (&raw.agents[..], &raw.local_agents) {
        ([], None) => AgentSource::Local(1),
        ([], Some(_)) => {
            let k: u32 = num(&raw.local_agents, "local-agents", 1)?;
            if k == 0 {
                return Err(invalid("local-agents", 0, "must be at least 1"));
            }
            if k > MAX_LOCAL_AGENTS {
                return Err(invalid(
                    "local-agents",
                    k,
                    "at most 256 embedded agents; start fleetbench-agent processes for more",
                ));
            }
            AgentSource::Local(k)
        }
        (_, Some(_)) => return Err(PlanError::AgentsConflict),
        (list, None) => AgentSource::Remote(parse_agents(list)?),
    })
}
