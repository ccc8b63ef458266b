//! The page's header: what ran, as the result document records it: the test, the command
//! line, the run's id, when it started and how long it measured, the `--tag` labels, the
//! agents by name and the database targets with their servers' versions and the server
//! variables the agents read. A sweep or scenario file has one run per step: the header
//! gives the first's id and start and the last's end.

use std::fmt::Write;

use super::markup::{esc, num};
use super::names::{agent_names, target_text};
use crate::report::doc::{Document, Report};

/// Most agents the header lists by name; the per-agent table has them all.
const AGENTS_LISTED: usize = 16;

/// One row of the facts table: its label and its HTML (already escaped).
type Fact = (String, String);

/// The header of a run's page.
pub(super) fn run_header(run: &Report) -> String {
    let mut facts = vec![("test".to_string(), esc(&run.test))];
    facts.extend(common_facts(run, run, 1, run.totals.time_s));
    facts_table(&facts)
}

/// The header of a sweep's or scenario file's page: the steps' runs, in order.
pub(super) fn steps_header(doc: &Document, runs: &[&Report]) -> String {
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        return String::new();
    };
    let mut facts = Vec::new();
    match doc {
        Document::Sweep(sw) => {
            facts.push(("test".to_string(), esc(&sw.test)));
            let over = match &sw.rates {
                Some(r) => format!(
                    "offered rates {} /s at {} threads",
                    r.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", "),
                    first.config.threads
                ),
                None => format!(
                    "threads {}",
                    sw.threads
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            facts.push(("sweep".to_string(), esc(&over)));
        }
        Document::Scenarios(sc) => {
            let mut tests: Vec<&str> = sc.scenarios.iter().map(|s| s.test.as_str()).collect();
            tests.dedup();
            facts.push(("test".to_string(), esc(&tests.join(", "))));
            let names: Vec<&str> = sc.scenarios.iter().map(|s| s.name.as_str()).collect();
            facts.push((
                "scenario file".to_string(),
                format!(
                    "{} ({} scenario{}: {})",
                    esc(&sc.file),
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                    esc(&names.join(", "))
                ),
            ));
        }
        Document::Run(_) => {}
    }
    let measured: f64 = runs.iter().map(|r| r.totals.time_s).sum();
    facts.extend(common_facts(first, last, runs.len(), measured));
    // A sweep's first step may run on fewer agents than it has (1 thread, 1 agent): name
    // the agents of the step that used the most.
    if let Some(most) = runs.iter().max_by_key(|r| r.agents.len())
        && let Some(row) = facts.iter_mut().find(|(k, _)| k == "agents")
    {
        row.1 = agents_text(most);
    }
    if let Document::Scenarios(sc) = doc {
        // Each scenario names its own targets: list them under its name.
        facts.retain(|(k, _)| !k.starts_with("target "));
        for s in &sc.scenarios {
            if let Some(step) = s.steps.first() {
                for (name, text) in targets(&step.result) {
                    facts.push((format!("target {name} ({})", s.name), text));
                }
            }
        }
    }
    facts_table(&facts)
}

/// The facts a run and a series of runs share: the command line, run id, start, end and
/// measured time, tags, agents and targets, from the `first` and `last` runs of `count`.
fn common_facts(first: &Report, last: &Report, count: usize, measured_s: f64) -> Vec<Fact> {
    let mut facts = Vec::new();
    let meta = first.meta.as_ref();
    let command = meta
        .map(|m| m.command_line.as_str())
        .filter(|c| !c.is_empty());
    if let Some(c) = command {
        facts.push(("command line".into(), format!("<code>{}</code>", esc(c))));
    }
    if let Some(m) = meta {
        let id = if count > 1 {
            format!(
                "{} (the first of {count} runs, one per step; each step's section names its own)",
                esc(&m.run_id)
            )
        } else {
            esc(&m.run_id)
        };
        facts.push(("run id".into(), id));
        if let Some(s) = &m.started_at {
            facts.push(("started".into(), esc(s)));
        }
    }
    let ended = last.meta.as_ref().and_then(|m| m.ended_at.as_ref());
    let duration = if count > 1 {
        format!("{} s measured over {count} steps", num(round1(measured_s)))
    } else {
        format!("{} s measured", num(round1(measured_s)))
    };
    let duration = match ended {
        Some(e) => format!("{duration}; ended {}", esc(e)),
        None => duration,
    };
    facts.push(("duration".into(), duration));
    if let Some(m) = meta
        && !m.tags.is_empty()
    {
        let tags: Vec<String> = m.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        facts.push(("tags".into(), esc(&tags.join(", "))));
    }
    facts.push(("agents".into(), agents_text(first)));
    for (name, text) in targets(first) {
        facts.push((format!("target {name}"), text));
    }
    facts
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The agents by name as the tables name them, each with its host, its address where the
/// name is not it (`embedded`), and its threads (the first [`AGENTS_LISTED`]).
fn agents_text(run: &Report) -> String {
    let names = agent_names(run);
    let mut items: Vec<String> = run
        .agents
        .iter()
        .zip(&names)
        .take(AGENTS_LISTED)
        .map(|(a, n)| {
            let mut about = Vec::new();
            if !a.host.is_empty() {
                about.push(format!("host {}", a.host));
            }
            if a.addr != *n {
                about.push(a.addr.clone());
            }
            about.push(super::pgbench::count_text(run, a.threads));
            format!("<b>{}</b> ({})", esc(n), esc(&about.join(", ")))
        })
        .collect();
    if run.agents.len() > AGENTS_LISTED {
        items.push(format!(
            "and {} more (the JSON's agents list them all)",
            run.agents.len() - AGENTS_LISTED
        ));
    }
    format!("{}: {}", run.agents.len(), items.join(", "))
}

/// The run's database targets by name: where each is, and its server's version and the
/// server variables the agents read (from the first connection that recorded them).
fn targets(run: &Report) -> Vec<(String, String)> {
    let Some(serde_json::Value::Array(ts)) = run.config.workload.get("targets") else {
        return Vec::new();
    };
    ts.iter()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string();
            let text = target_text(t);
            let place = text
                .strip_prefix(&format!("{name}: "))
                .unwrap_or(&text)
                .to_string();
            let mut html = esc(&place);
            let conns = run
                .totals
                .targets
                .iter()
                .filter(|x| x.name == name)
                .flat_map(|x| &x.connections);
            let mut version = None;
            let mut vars = None;
            for c in conns {
                if version.is_none() && !c.server_version.is_empty() {
                    version = Some(&c.server_version);
                }
                if vars.is_none() && !c.server_vars.is_empty() {
                    vars = Some(&c.server_vars);
                }
            }
            if let Some(v) = version {
                let _ = write!(html, "; server <b>{}</b>", esc(v));
            }
            if let Some(vars) = vars {
                let list: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = write!(
                    html,
                    "<br><span class=\"vars\">server variables: {}</span>",
                    esc(&list.join(", "))
                );
            }
            (name, html)
        })
        .collect()
}

/// The facts as a two-column table.
fn facts_table(facts: &[Fact]) -> String {
    let mut s = String::from("<table class=\"facts\" id=\"what-ran\">");
    for (k, v) in facts {
        let _ = write!(s, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    }
    s.push_str("</table>");
    s
}

/// The tests that load the client host on purpose: a saturated host is what they measure,
/// so their pages warn of nothing (as the text report, without --warn-client-saturation).
const MEASURE_THE_CLIENT: [&str; 4] = ["cpu", "memory", "threads", "mutex"];

/// The text report's warnings of saturated client hosts, word for word (one per host,
/// naming its agents; at most five and how many more), from the JSON's
/// `host_load.saturated_intervals`: these figures may measure the client, not the server.
/// Empty when none was, or for a test that measures the client.
pub(super) fn saturation_warnings(run: &Report) -> String {
    if MEASURE_THE_CLIENT.contains(&run.test.as_str()) && !run.config.warn_client_saturation {
        return String::new();
    }
    let summaries = crate::report::hosts::of_doc(run);
    crate::report::hosts::capped_warnings(&summaries)
        .iter()
        .map(|w| format!("<p class=\"warning\">{}</p>", esc(w)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::Connection;
    use crate::report::doc::{Agent, Meta, TargetJson};

    /// A run with meta, two agents on one host and a target whose server was recorded.
    pub(in super::super) fn described_run() -> Report {
        let mut run = crate::sweep::tests::run_doc(4, 100.0, 2000.0, 3.0);
        run.test = "oltp_read_write".into();
        run.meta = Some(Meta {
            run_id: "1a2b-33".into(),
            started_at: Some("2026-12-01T23:38:54Z".into()),
            ended_at: Some("2026-12-01T23:39:04Z".into()),
            tags: [("buffer_pool".to_string(), "8G".to_string())].into(),
            command_line: "fleetbench oltp_read_write --mysql-password=*** run".into(),
            fleetbench_commit: "abc".into(),
        });
        run.config.agents = vec!["local:127.0.0.1:1".into(), "local:127.0.0.1:2".into()];
        run.agents = (1..=2)
            .map(|i| Agent {
                addr: format!("127.0.0.1:{i}"),
                host: "vm".into(),
                threads: 2,
                ..Default::default()
            })
            .collect();
        run.config.workload.insert(
            "targets".into(),
            serde_json::json!([{"name": "default", "host": "127.0.0.1", "port": 3306,
                "user": "sbtest", "database": "sbtest", "socket": null, "tables": [1, 2]}]),
        );
        run.totals.targets = vec![TargetJson {
            name: "default".into(),
            connections: vec![Connection {
                client: "lean".into(),
                server_version: "10.11.6-MariaDB".into(),
                server_vars: [(
                    "innodb_buffer_pool_size".to_string(),
                    "134217728".to_string(),
                )]
                .into(),
                ..Default::default()
            }],
            ..Default::default()
        }];
        run
    }

    #[test]
    fn a_run_says_what_ran() {
        let h = run_header(&described_run());
        for want in [
            "<th>test</th><td>oltp_read_write</td>",
            "<th>command line</th><td><code>fleetbench oltp_read_write --mysql-password=*** run</code></td>",
            "<th>run id</th><td>1a2b-33</td>",
            "<th>started</th><td>2026-12-01T23:38:54Z</td>",
            "<th>duration</th><td>10 s measured; ended 2026-12-01T23:39:04Z</td>",
            "<th>tags</th><td>buffer_pool=8G</td>",
            "<b>embedded-1</b> (host vm, 127.0.0.1:1, 2 threads)",
            "<th>target default</th><td>sbtest@127.0.0.1:3306, database sbtest, tables 1-2; server <b>10.11.6-MariaDB</b>",
            "server variables: innodb_buffer_pool_size=134217728",
        ] {
            assert!(h.contains(want), "{want} in {h}");
        }
        // A file written before `meta`: no id, no start, still the rest.
        let mut old = described_run();
        old.meta = None;
        let h = run_header(&old);
        assert!(
            !h.contains("run id") && h.contains("<th>agents</th>"),
            "{h}"
        );
    }
}
