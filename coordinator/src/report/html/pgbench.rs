//! A `fleetbench pgbench` run's page: pgbench's figures as its report gives them (from the
//! result's `totals.pgbench`): transactions processed, tps, latency average and stddev,
//! failed, skipped, retried and retries, late ones and the schedule lag where the run had
//! them, then one row per script and, with `-r`, each script's commands. Also the word for
//! what such a run counts: clients, not threads.

use std::fmt::Write;

use super::markup::esc;
use crate::report::doc::{PgbenchScript, PgbenchTotals, Report};

/// Whether `run` is a `fleetbench pgbench` run.
fn is_pgbench(run: &Report) -> bool {
    run.test == "pgbench"
}

/// What the run's threads are: pgbench's clients, else threads ("client", "thread").
pub(super) fn worker(run: &Report) -> &'static str {
    if is_pgbench(run) { "client" } else { "thread" }
}

/// "4 clients", "1 thread": `n` of the run's [`worker`]s.
pub(super) fn count_text(run: &Report, n: u32) -> String {
    format!("{n} {}{}", worker(run), if n == 1 { "" } else { "s" })
}

/// The summary table of a pgbench run with its threads column named clients; other runs'
/// as they are.
pub(super) fn summary_in_clients(run: &Report, table: String) -> String {
    if is_pgbench(run) {
        table.replacen("<th>threads</th>", "<th>clients</th>", 1)
    } else {
        table
    }
}

/// "N (P%)", a count and its share of `all`, as pgbench words it.
fn share(n: u64, all: u64) -> String {
    let pct = if all == 0 {
        0.0
    } else {
        100.0 * n as f64 / all as f64
    };
    format!("{n} ({pct:.3}%)")
}

/// The section: a heading, the run's figures and the scripts'; empty for other runs.
pub(super) fn section(run: &Report) -> String {
    let Some(p) = run.totals.pgbench.as_ref().filter(|_| is_pgbench(run)) else {
        return String::new();
    };
    let mut s = String::from("<h2 id=\"pgbench\">pgbench's report</h2>");
    s.push_str(&figures_table(run, p));
    s.push_str(&scripts_table(p));
    for (i, sc) in p.scripts.iter().enumerate() {
        s.push_str(&commands_table(i, sc));
    }
    s
}

/// The run's settings as pgbench's report states them, in its order: transaction type,
/// scaling factor, query mode, clients, threads, tries, duration or transactions.
fn settings_rows(run: &Report, p: &PgbenchTotals) -> Vec<(&'static str, String)> {
    let cfg = &run.config;
    let setting = |key: &str| {
        cfg.workload
            .get(key)
            .map(super::markup::value_text)
            .unwrap_or_default()
    };
    let kind = match &p.scripts[..] {
        [one] => one.name.clone(),
        _ => "multiple scripts".into(),
    };
    let mut rows = vec![
        ("transaction type", kind),
        ("scaling factor", setting("scale")),
        ("query mode", setting("query_mode")),
        ("number of clients", cfg.threads.to_string()),
    ];
    if let Some(j) = p.threads {
        rows.push(("number of threads", j.to_string()));
    }
    rows.push(("maximum number of tries", setting("max_tries")));
    if cfg.time_s > 0 {
        rows.push(("duration", format!("{} s", cfg.time_s)));
    } else {
        let per_client = cfg.events / u64::from(cfg.threads.max(1));
        rows.push(("number of transactions per client", per_client.to_string()));
    }
    rows
}

/// The run's figures, one row each, named as pgbench's report names them and in its
/// order, after the settings; then fleetbench's count of aborted clients.
fn figures_table(run: &Report, p: &PgbenchTotals) -> String {
    let all = p.processed + p.failed + p.skipped;
    let mut rows = settings_rows(run, p);
    rows.push((
        "number of transactions actually processed",
        p.processed.to_string(),
    ));
    rows.push(("number of failed transactions", share(p.failed, all)));
    if p.failures_detailed {
        rows.push((
            "number of serialization failures",
            share(p.serialization_failures, all),
        ));
        rows.push((
            "number of deadlock failures",
            share(p.deadlock_failures, all),
        ));
    }
    rows.push(("number of transactions retried", share(p.retried, all)));
    rows.push(("total number of retries", p.retries.to_string()));
    rows.push(("number of transactions skipped", share(p.skipped, all)));
    if let (Some(limit), Some(late)) = (p.latency_limit_ms, p.late) {
        rows.push((
            "number of transactions above the latency limit",
            format!("{} (limit {limit:.1} ms)", share(late, p.processed)),
        ));
    }
    rows.push(("latency average", format!("{:.3} ms", p.latency_avg_ms)));
    rows.push(("latency stddev", format!("{:.3} ms", p.latency_stddev_ms)));
    if let Some(l) = &p.schedule_lag_ms {
        rows.push((
            "rate limit schedule lag",
            format!("avg {:.3} (max {:.3}) ms", l.avg, l.max),
        ));
    }
    if let Some(ms) = p.initial_connection_time_ms {
        rows.push(("initial connection time", format!("{ms:.3} ms")));
    }
    rows.push(("tps", format!("{:.6}", p.tps)));
    rows.push(("clients aborted", p.clients_aborted.to_string()));
    let mut s = String::from("<table class=\"facts\" id=\"pgbench-figures\">");
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    s.push_str("</table>");
    s
}

/// One row per script: its name and weight, and its figures.
fn scripts_table(p: &PgbenchTotals) -> String {
    let weights: u64 = p.scripts.iter().map(|s| u64::from(s.weight)).sum();
    let mut s = String::from(
        "<h3>Scripts</h3><table class=\"rows\" id=\"pgbench-scripts\"><tr><th>script</th><th>weight</th><th>transactions</th><th>tps</th><th>failed</th><th>retried</th><th>retries</th><th>skipped</th><th>latency average ms</th><th>latency stddev ms</th></tr>",
    );
    for sc in &p.scripts {
        let all = sc.processed + sc.failed + sc.skipped;
        let weight_pct = if weights == 0 {
            0.0
        } else {
            100.0 * f64::from(sc.weight) / weights as f64
        };
        let _ = write!(
            s,
            "<tr><td class=\"text\">{}</td><td>{} ({weight_pct:.1}%)</td><td>{}</td><td>{:.6}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td></tr>",
            esc(&sc.name),
            sc.weight,
            share(sc.processed, p.processed),
            sc.tps,
            share(sc.failed, all),
            share(sc.retried, all),
            sc.retries,
            share(sc.skipped, all),
            sc.latency_avg_ms,
            sc.latency_stddev_ms,
        );
    }
    s.push_str("</table>");
    s
}

/// `-r`: a script's commands with their average latency, failures and retries (empty
/// without `-r`).
fn commands_table(i: usize, sc: &PgbenchScript) -> String {
    if sc.commands.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>Statement latencies of script {}: {}</h3><table class=\"rows\" id=\"pgbench-commands-{}\"><tr><th>latency average ms</th><th>failures</th><th>retries</th><th>command</th></tr>",
        i + 1,
        esc(&sc.name),
        i + 1
    );
    for c in &sc.commands {
        let _ = write!(
            s,
            "<tr><td>{:.3}</td><td>{}</td><td>{}</td><td class=\"text\"><code>{}</code></td></tr>",
            c.latency_avg_ms,
            c.failures,
            c.retries,
            esc(&c.command)
        );
    }
    s.push_str("</table>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Document, PgbenchCommand, ScheduleLag};

    /// A pgbench run's document: 4 clients on 2 threads, two scripts, the second with -r.
    fn pgbench_run() -> Report {
        let mut run = crate::sweep::tests::run_doc(4, 450.0, 0.0, 3.0);
        run.test = "pgbench".into();
        run.config.workload.insert("scale".into(), 3.into());
        run.config
            .workload
            .insert("query_mode".into(), "prepared".into());
        run.config.workload.insert("max_tries".into(), 3.into());
        run.config.agents = vec!["local:127.0.0.1:1".into()];
        run.agents = vec![crate::report::doc::Agent {
            addr: "127.0.0.1:1".into(),
            host: "vm".into(),
            threads: 2,
            ..Default::default()
        }];
        let script = |name: &str, weight, processed, commands| PgbenchScript {
            name: name.into(),
            weight,
            processed,
            tps: processed as f64 / 2.0,
            latency_avg_ms: 1.5,
            latency_stddev_ms: 0.25,
            retried: 1,
            retries: 2,
            commands,
            ..PgbenchScript::default()
        };
        run.totals.pgbench = Some(PgbenchTotals {
            processed: 900,
            tps: 450.123456,
            failed: 3,
            retried: 2,
            retries: 4,
            skipped: 0,
            latency_avg_ms: 4.354,
            latency_stddev_ms: 2.541,
            latency_limit_ms: Some(5.0),
            late: Some(90),
            schedule_lag_ms: Some(ScheduleLag {
                avg: 0.1,
                max: 1.25,
            }),
            threads: Some(2),
            initial_connection_time_ms: Some(41.282),
            scripts: vec![
                script("<builtin: select only>", 3, 600, Vec::new()),
                script(
                    "<builtin: simple update>",
                    1,
                    300,
                    vec![PgbenchCommand {
                        command: "END;".into(),
                        latency_avg_ms: 0.75,
                        failures: 1,
                        retries: 2,
                    }],
                ),
            ],
            ..PgbenchTotals::default()
        });
        run
    }

    #[test]
    fn the_page_has_pgbench_s_figures_and_counts_clients() {
        let run = pgbench_run();
        let page = crate::report::html::render(&Document::Run(Box::new(run)));
        for want in [
            "<title>fleetbench pgbench run, 4 clients</title>",
            "<h2 id=\"pgbench\">pgbench's report</h2>",
            "<tr><th>transaction type</th><td>multiple scripts</td></tr><tr><th>scaling factor</th><td>3</td></tr><tr><th>query mode</th><td>prepared</td></tr>",
            "<tr><th>number of clients</th><td>4</td></tr><tr><th>number of threads</th><td>2</td></tr><tr><th>maximum number of tries</th><td>3</td></tr><tr><th>duration</th><td>10 s</td></tr>",
            "<tr><th>tps</th><td>450.123456</td></tr>",
            "<tr><th>latency average</th><td>4.354 ms</td></tr>",
            "<tr><th>latency stddev</th><td>2.541 ms</td></tr>",
            "<tr><th>number of failed transactions</th><td>3 (0.332%)</td></tr>",
            "<tr><th>number of transactions retried</th><td>2 (0.221%)</td></tr>",
            "<tr><th>number of transactions skipped</th><td>0 (0.000%)</td></tr>",
            "<tr><th>number of transactions above the latency limit</th><td>90 (10.000%) (limit 5.0 ms)</td></tr>",
            "<tr><th>rate limit schedule lag</th><td>avg 0.100 (max 1.250) ms</td></tr>",
            "<tr><th>initial connection time</th><td>41.282 ms</td></tr>",
            "<td class=\"text\">&lt;builtin: select only&gt;</td><td>3 (75.0%)</td><td>600 (66.667%)</td><td>300.000000</td>",
            "id=\"pgbench-commands-2\"",
            "<tr><td>0.750</td><td>1</td><td>2</td><td class=\"text\"><code>END;</code></td></tr>",
            "<th>clients</th><th>TPS</th>",
            "<b>embedded</b> (host vm, 127.0.0.1:1, 2 clients)",
        ] {
            assert!(page.contains(want), "{want} in\n{page}");
        }
        assert!(!page.contains("pgbench-commands-1"), "{page}");
        // The summary's column; the configuration keeps the result's key ("threads").
        assert!(page.contains("<th>series</th><th>clients</th>"), "{page}");
    }

    #[test]
    fn other_runs_have_no_pgbench_section_and_count_threads() {
        let mut run = pgbench_run();
        run.test = "oltp_read_write".into();
        assert_eq!(section(&run), "");
        assert_eq!(count_text(&run, 1), "1 thread");
        let page = crate::report::html::render(&Document::Run(Box::new(run)));
        assert!(page.contains("<th>series</th><th>threads</th>"), "{page}");
        assert!(
            page.contains("<th>host facts</th><th>threads</th>"),
            "{page}"
        );
        assert!(!page.contains("pgbench's report"), "{page}");
    }
}
