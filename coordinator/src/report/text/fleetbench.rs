//! fleetbench's own blocks after sysbench 1.0's report: the open loop's figures, one row
//! per agent (condensed past [`AGENTS_LISTED`] agents), one per target, the ignored errors
//! by code, the client hosts' load and the run's id; the header's agents line and connections; `fleetbench
//! agents`' table.

use std::fmt::Write;

use super::common::{MIB, lat_row, row};
use crate::merge::{AgentResult, AgentStatus, RunResult};
use crate::plan::{Plan, Workload};
use crate::report::format::{age, rate_label};
use crate::report::{hosts, pct_label};

/// fleetbench's blocks after sysbench 1.0's end report: the open loop, the agents, the
/// targets, the client hosts and the run's line.
pub fn blocks(plan: &Plan, r: &RunResult) -> String {
    let mut s = open_loop_block(plan, r);
    s.push_str(&agents_block(plan, r));
    s.push_str(&targets_block(plan, r));
    // sysbench's "ignored errors:" line gives their total; here, which they were.
    let d = r.db();
    s.push_str(&crate::report::errors::line(
        &crate::report::errors::named(&d.errors_by_code),
        d.ignored_errors,
    ));
    s.push_str(&super::servers::block(&crate::report::json::targets(
        plan, r,
    )));
    let mut summary = hosts::summarize(&r.hosts, plan.tick());
    hosts::name_hosts(&mut summary, &hosts::agent_names(r));
    // cpu, memory, threads and mutex saturate the client on purpose: no warning.
    if hosts::measures_the_client(plan) {
        for h in &mut summary {
            h.saturated.clear();
        }
    }
    s.push_str(&hosts::block(
        &summary,
        AGENTS_LISTED,
        matches!(plan.workload, Workload::Fileio(_)),
    ));
    // Database tests: what a transaction costs the client, beside what it costs the server.
    if !plan.workload.targets().is_empty() {
        let events: Vec<(String, u64)> = r
            .agents
            .iter()
            .map(|a| (a.addr.clone(), a.events))
            .collect();
        s.push_str(&hosts::client_cpu_line(&summary, &events));
    }
    s.push_str(&run_line(plan, r));
    s
}

/// An open loop's figures after sysbench's report: the rate asked for, arrivals and events
/// run per second, the queue left at the end, and the service time (latency above counts
/// from each event's arrival). Empty in a closed loop.
pub fn open_loop_block(plan: &Plan, r: &RunResult) -> String {
    let Some(o) = r.open() else {
        return String::new();
    };
    let secs = r.total_time();
    let mut s = String::new();
    let _ = writeln!(s, "Open loop (--rate={}):", rate_label(plan.rate));
    row(
        &mut s,
        "    arrivals:",
        41,
        &format!(
            "{} ({:.2} per sec.)",
            o.arrivals,
            crate::merge::per_sec(o.arrivals, secs)
        ),
    );
    row(
        &mut s,
        "    events run:",
        41,
        &format!("{} ({:.2} per sec.)", r.events(), r.events_per_sec()),
    );
    row(
        &mut s,
        "    queue length at the end:",
        41,
        &o.queue_length.to_string(),
    );
    s.push_str(
        "    service time (ms, from a thread taking the event):
",
    );
    let svc = &o.service;
    lat_row(&mut s, "min", svc.min_ms());
    lat_row(&mut s, "avg", svc.avg_ms());
    lat_row(&mut s, "max", svc.max_ms());
    for &p in plan.percentiles.iter().filter(|&&p| p > 0.0) {
        lat_row(
            &mut s,
            &format!("{}th percentile", pct_label(p)),
            svc.percentile_ms(p),
        );
    }
    if let Some(why) = rate_shortfall(plan, r) {
        let _ = writeln!(s, "\nWARNING: {why}");
    }
    s.push('\n');
    s
}

/// Why an open loop's target rate was not reached, if it was not (see
/// [`crate::merge::OpenLoop::fell_behind`]).
pub fn rate_shortfall(plan: &Plan, r: &RunResult) -> Option<String> {
    let o = r.open()?;
    o.fell_behind().then(|| {
        format!(
            "the target rate was not reached: {} events/s asked for, {:.2}/s run; {} arrived events were still waiting for a thread at the end",
            rate_label(plan.rate),
            r.events_per_sec(),
            o.queue_length
        )
    })
}

/// The run's id, when it ran (UTC) and its tags, as the last line of fleetbench's own
/// blocks.
pub fn run_line(plan: &Plan, r: &RunResult) -> String {
    if r.run_id.is_empty() {
        return String::new();
    }
    let at = |t: Option<std::time::SystemTime>| {
        t.and_then(crate::report::meta::utc)
            .unwrap_or_else(|| "?".into())
    };
    let mut s = format!("\nRun {}: {} to {}", r.run_id, at(r.started), at(r.ended));
    if !plan.tags.is_empty() {
        let tags: Vec<String> = plan.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!("; tags: {}", tags.join(", ")));
    }
    s.push('\n');
    s
}

/// Before "Threads started!": per target, how the agents connected to it (client, login,
/// TLS), e.g. `Connections to default (db1:3306): lean client, caching_sha2_password, TLSv1_3`,
/// and the connects tried again while opening, with why.
pub fn connections_header(plan: &Plan, ready: &RunResult) -> String {
    let mut s = String::new();
    for (i, t) in plan.workload.targets().iter().enumerate() {
        let these: Vec<String> = ready
            .connections
            .iter()
            .filter(|(n, _)| *n == i)
            .map(|(_, c)| c.describe())
            .collect();
        if !these.is_empty() {
            let _ = writeln!(s, "Connections to {}: {}", t.describe(), these.join("; "));
        }
        s.push_str(&retried_line(plan, ready, i));
    }
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// The connects retried while opening, one line per target that had any (for the layouts
/// without fleetbench's header, on stderr).
pub fn connect_retries(plan: &Plan, ready: &RunResult) -> String {
    (0..plan.workload.targets().len())
        .map(|i| retried_line(plan, ready, i))
        .collect()
}

/// `Connects to T retried while opening: N (timed out a, reset b)` for target `i`, or
/// nothing when none was.
fn retried_line(plan: &Plan, ready: &RunResult, i: usize) -> String {
    let retried: Vec<(&str, u64)> = ready
        .connect_retries
        .iter()
        .filter(|(n, _, _)| *n == i)
        .map(|(_, why, k)| (why.as_str(), *k))
        .collect();
    let Some(t) = plan
        .workload
        .targets()
        .get(i)
        .filter(|_| !retried.is_empty())
    else {
        return String::new();
    };
    let total: u64 = retried.iter().map(|(_, k)| k).sum();
    let why: Vec<String> = retried.iter().map(|(w, k)| format!("{w} {k}")).collect();
    format!(
        "Connects to {} retried while opening: {total} ({})\n",
        t.describe(),
        why.join(", ")
    )
}

/// One row per target: where it is, the queries it received by class, errors, reconnects
/// and the latency of single statements.
pub fn targets_block(plan: &Plan, r: &RunResult) -> String {
    if plan.workload.targets().is_empty() {
        return String::new();
    }
    let p = plan.percentiles.first().copied().unwrap_or(95.0);
    let secs = r.total_time().as_secs_f64().max(f64::MIN_POSITIVE);
    let names: Vec<String> = plan
        .workload
        .targets()
        .iter()
        .map(|t| t.describe())
        .collect();
    let w = names.iter().map(String::len).max().unwrap_or(6).max(6);
    let mut s = String::from("\nPer target:\n");
    let _ = writeln!(
        s,
        "    {:<w$}  {:>10}  {:>10}  {:>10}  {:>12}  {:>8}  {:>8}  {:>17}",
        "target",
        "rd stmts",
        "wr stmts",
        "oth stmts",
        "stmts/s",
        "ign errs",
        "reconn",
        format!("stmt {}", own_pct_head(p))
    );
    for (i, d, l) in &r.targets {
        let name = names.get(*i).cloned().unwrap_or_else(|| format!("#{i}"));
        let q = d.reads + d.writes + d.others;
        // TPC-C times transactions, not single statements.
        let stmt = if l.count() == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", l.requested_ms(p))
        };
        let _ = writeln!(
            s,
            "    {name:<w$}  {:>10}  {:>10}  {:>10}  {:>12.2}  {:>8}  {:>8}  {stmt:>17}",
            d.reads,
            d.writes,
            d.others,
            q as f64 / secs,
            d.ignored_errors,
            d.reconnects,
        );
    }
    // How the connections were made: the client on the hot path, the login, TLS.
    for (i, name) in names.iter().enumerate() {
        let ways: Vec<String> = r.connections_to(i).map(|c| c.describe()).collect();
        if !ways.is_empty() {
            let _ = writeln!(s, "    {name:<w$}  connections: {}", ways.join("; "));
        }
        // The server's settings the result records (--server-vars), as its first
        // connection read them.
        if let Some(c) = r.connections_to(i).find(|c| !c.server_vars.is_empty()) {
            let vars: Vec<String> = c
                .server_vars
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let _ = writeln!(s, "    {name:<w$}  server variables: {}", vars.join(", "));
        }
    }
    s
}

/// The header's line of agents: each with its threads, or past [`AGENTS_LISTED`] agents,
/// the count, the range of threads per agent and the first and last agent's name.
pub fn agents_line(agents: &[(String, u32)]) -> String {
    if agents.len() <= AGENTS_LISTED {
        let list: Vec<String> = agents
            .iter()
            .map(|(a, t)| {
                format!(
                    "{a} ({})",
                    crate::report::format::count_of(*t, "thread", "threads")
                )
            })
            .collect();
        return format!("Agents: {}: {}", agents.len(), list.join(", "));
    }
    let min = agents.iter().map(|a| a.1).min().unwrap_or(0);
    let max = agents.iter().map(|a| a.1).max().unwrap_or(0);
    let threads = if min == max {
        format!("{min}")
    } else {
        format!("{min}-{max}")
    };
    format!(
        "Agents: {} ({threads} {} each): {} ... {}",
        agents.len(),
        if max == 1 { "thread" } else { "threads" },
        agents[0].0,
        agents[agents.len() - 1].0
    )
}

/// `fleetbench agents`: one row per agent with version, host, cores, state and round trip.
pub fn agents_status(lines: &[crate::wire::AgentStatusLine]) -> String {
    let w = lines.iter().map(|l| l.addr.len()).max().unwrap_or(5).max(5);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9}  state",
        "agent", "version", "host", "cores", "rtt (ms)"
    );
    for l in lines {
        match &l.result {
            Ok(h) => {
                let state = match &h.busy {
                    None => "idle".to_string(),
                    Some((run, since, peer)) => {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_secs());
                        format!(
                            "busy: run {run} for {} from {peer}",
                            age(now.saturating_sub(*since))
                        )
                    }
                };
                let _ = writeln!(
                    s,
                    "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9.2}  {state}",
                    l.addr,
                    h.version,
                    h.hostname,
                    h.cores,
                    h.rtt.as_secs_f64() * 1e3
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "{:<w$}  {:<8}  {:<20}  {:>5}  {:>9}  error: {e}",
                    l.addr, "-", "-", "-", "-"
                );
            }
        }
    }
    // What the hosts are (CPU model, kernel, memory), each distinct host once.
    let facts: Vec<(&str, &fleetbench_model::host::HostFacts)> = lines
        .iter()
        .filter_map(|l| l.result.as_ref().ok())
        .map(|h| (h.hostname.as_str(), &h.host))
        .collect();
    s.push_str(&crate::report::hosts::facts_block(&facts, AGENTS_LISTED));
    s
}

/// Past this many agents the per-agent block is condensed to a summary; the JSON result
/// always lists every agent.
pub const AGENTS_LISTED: usize = 20;

/// How many of the slowest and of the fastest agents the condensed block names.
pub const EXTREMES: usize = 3;

/// Per agent: up to [`AGENTS_LISTED`] agents one row each (name, host, threads, events,
/// events/s, first percentile, status); more are summarised by [`agents_summary`]. Then a
/// warning for each agent that stopped early or was lost.
pub fn agents_block(plan: &Plan, r: &RunResult) -> String {
    let mut s = if r.agents.len() <= AGENTS_LISTED {
        let all: Vec<&AgentResult> = r.agents.iter().collect();
        let table = AgentTable::new(plan, &all);
        let mut s = String::from("Per agent:\n");
        s.push_str(&table.head());
        for a in &all {
            s.push_str(&table.row(a));
        }
        s
    } else {
        agents_summary(plan, r)
    };
    let facts: Vec<(&str, &fleetbench_model::host::HostFacts)> = r
        .agents
        .iter()
        .map(|a| (a.host.as_str(), &a.facts))
        .collect();
    s.push_str(&hosts::facts_block(&facts, AGENTS_LISTED));
    s.push_str(&agent_warnings(&r.agents));
    s
}

/// The condensed per-agent block: how many agents and threads and how their runs ended,
/// min/median/max over agents of events/s (tps for OLTP) and of the first percentile, the
/// [`EXTREMES`] slowest and fastest agents in the full block's layout, and where the full
/// list is. Lost agents delivered no figures and are left out of the spread.
pub fn agents_summary(plan: &Plan, r: &RunResult) -> String {
    let p = plan.percentiles.first().copied().unwrap_or(95.0);
    let rate = if plan.workload.is_sql() {
        "txns/s"
    } else {
        "evts/s"
    };
    let count = |f: fn(&AgentStatus) -> bool| r.agents.iter().filter(|a| f(&a.status)).count();
    let ok = count(|s| *s == AgentStatus::Completed);
    let stopped = count(|s| matches!(s, AgentStatus::Aborted(_)));
    let lost = count(|s| matches!(s, AgentStatus::Lost(_)));
    let mut s = String::from("Per agent (condensed):\n");
    let _ = write!(
        s,
        "    {} agents, {} {}: {ok} completed",
        r.agents.len(),
        r.threads(),
        workers(plan)
    );
    if stopped > 0 {
        let _ = write!(s, ", {stopped} stopped early");
    }
    if lost > 0 {
        let _ = write!(s, ", {lost} lost");
    }
    s.push('\n');
    let ran: Vec<&AgentResult> = r
        .agents
        .iter()
        .filter(|a| !matches!(a.status, AgentStatus::Lost(_)))
        .collect();
    let rates = spread(ran.iter().map(|a| a.events_per_sec()).collect());
    let lats = spread(ran.iter().map(|a| a.latency.requested_ms(p)).collect());
    if let (Some(rates), Some(lats)) = (rates, lats) {
        let lat_head = own_pct_head(p);
        let w = lat_head.len().max(rate.len()) + 1;
        for (head, [min, median, max]) in [(rate, rates), (lat_head.as_str(), lats)] {
            let _ = writeln!(
                s,
                "    {:<w$}  min {min:>12.2}  median {median:>12.2}  max {max:>12.2}",
                format!("{head}:")
            );
        }
        let (slowest, fastest) = extremes(&ran, EXTREMES);
        let shown: Vec<&AgentResult> = slowest.iter().chain(&fastest).copied().collect();
        let table = AgentTable::new(plan, &shown);
        for (title, list) in [("Slowest", &slowest), ("Fastest", &fastest)] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  {title} {} by {rate}:", list.len());
            s.push_str(&table.head());
            for a in list {
                s.push_str(&table.row(a));
            }
        }
    } else {
        s.push_str("    no agent delivered its figures\n");
    }
    match &plan.json {
        Some(path) => {
            let _ = writeln!(s, "The full list of agents is in {}.", path.display());
        }
        None => s.push_str("The full list of agents is in the JSON result (--json FILE).\n"),
    }
    s
}

/// [min, median, max] of `v` (the median of an even count is the mean of the middle two);
/// None when empty. NaN sorts last.
pub fn spread(mut v: Vec<f64>) -> Option<[f64; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some([v[0], median, v[n - 1]])
}

/// The `k` agents with the fewest events/s (slowest first) and the `k` with the most
/// (fastest first), never the same agent twice; equal rates keep the agents' order.
pub fn extremes<'a>(
    agents: &[&'a AgentResult],
    k: usize,
) -> (Vec<&'a AgentResult>, Vec<&'a AgentResult>) {
    // Stable sorts: equal rates stay in agent order.
    let mut slowest: Vec<&AgentResult> = agents.to_vec();
    slowest.sort_by(|a, b| a.events_per_sec().total_cmp(&b.events_per_sec()));
    let slow = k.min(slowest.len());
    let fast = k.min(slowest.len() - slow);
    let mut fastest = slowest.split_off(slowest.len() - fast);
    fastest.sort_by(|a, b| b.events_per_sec().total_cmp(&a.events_per_sec()));
    slowest.truncate(slow);
    (slowest, fastest)
}

/// A warning line for each agent that stopped early or was lost, at most
/// [`AGENTS_LISTED`], then how many more there are.
pub fn agent_warnings(agents: &[AgentResult]) -> String {
    let mut notes: Vec<String> = Vec::new();
    for a in agents {
        match &a.status {
            AgentStatus::Completed => {}
            AgentStatus::Aborted(why) => {
                notes.push(format!("WARNING: agent {} stopped early: {why}", a.name))
            }
            AgentStatus::Lost(why) => {
                notes.push(format!("WARNING: agent {} was lost: {why}", a.name))
            }
        }
    }
    let mut s = String::new();
    if notes.is_empty() {
        return s;
    }
    s.push('\n');
    for n in notes.iter().take(AGENTS_LISTED) {
        let _ = writeln!(s, "{n}");
    }
    if notes.len() > AGENTS_LISTED {
        let _ = writeln!(
            s,
            "WARNING: {} more agents stopped early or were lost; the JSON result lists them all",
            notes.len() - AGENTS_LISTED
        );
    }
    s
}

/// The layout of the per-agent table for a plan and the agents it will show.
struct AgentTable {
    percentile: f64,
    name_w: usize,
    host_w: usize,
    db: bool,
    fileio: bool,
    /// memory: its block size.
    memory: Option<u64>,
    /// What its "threads" column counts ([`workers`]).
    workers: &'static str,
}

/// What a run's threads are called: pgbench's clients (each a connection, however many
/// threads run them), else threads.
fn workers(plan: &Plan) -> &'static str {
    match plan.workload {
        Workload::Pgbench(_) => "clients",
        _ => "threads",
    }
}

impl AgentTable {
    fn new(plan: &Plan, agents: &[&AgentResult]) -> Self {
        AgentTable {
            percentile: plan.percentiles.first().copied().unwrap_or(95.0),
            name_w: agents
                .iter()
                .map(|a| a.name.len())
                .max()
                .unwrap_or(5)
                .max(5),
            host_w: agents
                .iter()
                .map(|a| a.host.len())
                .max()
                .unwrap_or(4)
                .max(4),
            db: plan.workload.is_sql(),
            fileio: matches!(plan.workload, Workload::Fileio(_)),
            memory: match plan.workload {
                Workload::Memory(m) => Some(m.block_size),
                _ => None,
            },
            workers: workers(plan),
        }
    }

    fn head(&self) -> String {
        let (name_w, host_w) = (self.name_w, self.host_w);
        // fleetbench's own labels, none of which a pattern written for sysbench's report
        // ("transactions", "tps", "lat (ms,95%)", "read:") matches.
        let (events_head, rate_head) = if self.db {
            ("txns", "txns/s")
        } else {
            ("evts", "evts/s")
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "    {:<name_w$}  {:<host_w$}  {:>7}  {:>12}  {:>12}  ",
            "agent", "host", self.workers, events_head, rate_head
        );
        if self.db {
            let _ = write!(s, "{:>12}  ", "stmts/s");
        }
        if self.fileio {
            let _ = write!(
                s,
                "{:>10}  {:>10}  {:>10}  {:>10}  {:>10}  ",
                "rd ops/s", "wr ops/s", "syncs/s", "rd MiB/s", "wr MiB/s"
            );
        }
        if self.memory.is_some() {
            let _ = write!(s, "{:>12}  ", "MiB/s");
        }
        let lat_head = own_pct_head(self.percentile);
        let _ = writeln!(s, "{lat_head:>13}  status");
        s
    }

    fn row(&self, a: &AgentResult) -> String {
        let (name_w, host_w) = (self.name_w, self.host_w);
        let status = match &a.status {
            AgentStatus::Completed => "ok",
            AgentStatus::Aborted(_) => "stopped",
            AgentStatus::Lost(_) => "LOST",
        };
        let mut s = String::new();
        let _ = write!(
            s,
            "    {:<name_w$}  {:<host_w$}  {:>7}  {:>12}  {:>12.2}  ",
            a.name,
            a.host,
            a.threads,
            a.events,
            a.events_per_sec(),
        );
        if self.db {
            let q = a.db.reads + a.db.writes + a.db.others;
            let _ = write!(s, "{:>12.2}  ", crate::merge::per_sec(q, a.elapsed));
        }
        let secs = a.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        if self.fileio {
            let _ = write!(
                s,
                "{:>10.2}  {:>10.2}  {:>10.2}  {:>10.2}  {:>10.2}  ",
                a.io.reads as f64 / secs,
                a.io.writes as f64 / secs,
                a.io.fsyncs as f64 / secs,
                a.io.bytes_read as f64 / MIB / secs,
                a.io.bytes_written as f64 / MIB / secs,
            );
        }
        if let Some(block) = self.memory {
            let _ = write!(s, "{:>12.2}  ", a.events as f64 * block as f64 / MIB / secs);
        }
        let _ = writeln!(
            s,
            "{:>13.2}  {status}",
            // As the result document stores it, for `report FILE`'s reprint.
            crate::report::json::round(a.latency.requested_ms(self.percentile))
        );
        s
    }
}

/// fleetbench's own head for a latency percentile in ms ("p95 ms", "p99.9 ms"): unlike
/// sysbench's "lat (ms,95%)", which scripts count and parse.
fn own_pct_head(p: f64) -> String {
    format!("p{} ms", pct_label(p))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{many, plan};
    use super::*;

    #[test]
    fn up_to_twenty_agents_are_listed_one_row_each() {
        let text = agents_block(&plan(), &many(AGENTS_LISTED));
        assert!(text.starts_with("Per agent:\n    agent"), "{text}");
        assert_eq!(text.lines().count(), 2 + AGENTS_LISTED, "{text}");
        assert!(
            text.contains(
                "    10.0.0.19:7600  c19         1           290         29.00          20.00  ok\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn past_twenty_agents_the_block_is_condensed() {
        let mut r = many(25);
        // The slowest agent by rate is lost: it is left out of the spread and the extremes.
        r.agents[0].status = AgentStatus::Lost("connection reset".into());
        r.agents[0].events = 0;
        r.agents[3].status = AgentStatus::Aborted("stopped by the user".into());
        let mut plan = plan();
        let text = agents_block(&plan, &r);
        let expected = "\
Per agent (condensed):
    25 agents, 25 threads: 23 completed, 1 stopped early, 1 lost
    evts/s:  min        11.00  median        22.50  max        34.00
    p95 ms:  min         2.00  median        13.50  max        25.00
  Slowest 3 by evts/s:
    agent           host  threads          evts        evts/s         p95 ms  status
    10.0.0.1:7600   c1          1           110         11.00           2.00  ok
    10.0.0.2:7600   c2          1           120         12.00           3.00  ok
    10.0.0.3:7600   c3          1           130         13.00           4.00  stopped
  Fastest 3 by evts/s:
    agent           host  threads          evts        evts/s         p95 ms  status
    10.0.0.24:7600  c24         1           340         34.00          25.00  ok
    10.0.0.23:7600  c23         1           330         33.00          24.00  ok
    10.0.0.22:7600  c22         1           320         32.00          23.00  ok
The full list of agents is in the JSON result (--json FILE).

WARNING: agent 10.0.0.0:7600 was lost: connection reset
WARNING: agent 10.0.0.3:7600 stopped early: stopped by the user
";
        assert_eq!(text, expected);
        plan.json = Some("out/run.json".into());
        assert!(agents_block(&plan, &r).contains("The full list of agents is in out/run.json.\n"));
        // Every agent lost: no spread, no extremes, and the warnings are capped.
        for a in &mut r.agents {
            a.status = AgentStatus::Lost("gone".into());
        }
        let text = agents_block(&plan, &r);
        assert!(
            text.contains(
                "25 agents, 25 threads: 0 completed, 25 lost\n    no agent delivered its figures\n"
            ),
            "{text}"
        );
        assert_eq!(
            text.matches("was lost: gone").count(),
            AGENTS_LISTED,
            "{text}"
        );
        assert!(text.ends_with("WARNING: 5 more agents stopped early or were lost; the JSON result lists them all\n"), "{text}");
    }

    #[test]
    fn spread_gives_min_median_max() {
        assert_eq!(spread(vec![]), None);
        assert_eq!(spread(vec![3.0]), Some([3.0, 3.0, 3.0]));
        assert_eq!(spread(vec![4.0, 1.0, 3.0, 2.0]), Some([1.0, 2.5, 4.0]));
        assert_eq!(spread(vec![5.0, 1.0, 2.0]), Some([1.0, 2.0, 5.0]));
    }

    #[test]
    fn extremes_never_name_an_agent_twice() {
        let r = many(5);
        let all: Vec<&AgentResult> = r.agents.iter().rev().collect();
        let names = |v: &[&AgentResult]| v.iter().map(|a| a.host.clone()).collect::<Vec<_>>();
        let (slow, fast) = extremes(&all, 3);
        assert_eq!(names(&slow), ["c0", "c1", "c2"]);
        assert_eq!(names(&fast), ["c4", "c3"]);
        let (slow, fast) = extremes(&all[..1], 3);
        assert_eq!((names(&slow), fast.len()), (vec!["c4".to_string()], 0));
        // Equal rates keep the given order at both ends.
        let mut r = many(4);
        for a in &mut r.agents {
            a.events = 7;
        }
        let all: Vec<&AgentResult> = r.agents.iter().collect();
        let (slow, fast) = extremes(&all, 2);
        assert_eq!(
            (names(&slow), names(&fast)),
            (
                vec!["c0".to_string(), "c1".into()],
                vec!["c2".to_string(), "c3".into()]
            )
        );
    }

    #[test]
    fn header_lists_up_to_twenty_agents_then_summarises() {
        let few: Vec<(String, u32)> = (0..AGENTS_LISTED).map(|i| (format!("h{i}:1"), 2)).collect();
        let line = agents_line(&few);
        assert!(
            line.starts_with("Agents: 20: h0:1 (2 threads), h1:1 (2 threads), "),
            "{line}"
        );
        let mut many: Vec<(String, u32)> = (0..1000).map(|i| (format!("h{i}:1"), 4)).collect();
        assert_eq!(
            agents_line(&many),
            "Agents: 1000 (4 threads each): h0:1 ... h999:1"
        );
        many[5].1 = 3;
        assert_eq!(
            agents_line(&many),
            "Agents: 1000 (3-4 threads each): h0:1 ... h999:1"
        );
    }
}
