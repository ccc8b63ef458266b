//! A saved result's per-agent block, as the run printed it: shared by the report of a
//! saved run (`doc_text`) and of a saved pgbench run (`text::pgbench_doc`).

use std::fmt::Write;

use super::doc::Agent;

/// One row per agent (named by `names`), then what the hosts are, as the run printed it
/// (files before the facts have none); `workers` names the third column ("threads",
/// pgbench's "clients").
pub fn agents(agents: &[Agent], names: &[String], key: &str, workers: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nPer agent:\n    {:<22}  {:<16}  {:>7}  {:>12}  {:>12}  {:>10}  status",
        "agent",
        "host",
        workers,
        "evts",
        "evts/s",
        format!("{key} ms")
    );
    for (a, name) in agents.iter().zip(names) {
        let _ = writeln!(
            s,
            "    {:<22}  {:<16}  {:>7}  {:>12}  {:>12.2}  {:>10.2}  {}",
            name,
            a.host,
            a.threads,
            a.events,
            a.events_per_sec,
            a.latency_ms.get(key).unwrap_or(0.0),
            a.status,
        );
    }
    let facts: Vec<(&str, fleetbench_model::host::HostFacts)> = agents
        .iter()
        .map(|a| {
            (
                a.host.as_str(),
                fleetbench_model::host::HostFacts {
                    cores: a.cores,
                    cpu_model: a.cpu_model.clone(),
                    kernel: a.kernel.clone(),
                    mem_total_bytes: a.mem_total_bytes,
                },
            )
        })
        .collect();
    let facts: Vec<(&str, &fleetbench_model::host::HostFacts)> =
        facts.iter().map(|(h, f)| (*h, f)).collect();
    s.push_str(&super::hosts::facts_block(
        &facts,
        super::text::AGENTS_LISTED,
    ));
    s
}
