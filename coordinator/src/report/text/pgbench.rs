//! `fleetbench pgbench`'s report in pgbench's (PostgreSQL 15) layout, so that what reads
//! pgbench's output reads it unchanged: the run's summary, the per-script blocks, the
//! progress lines of `-P` and the "done in" line of `-i`. The figures are computed from
//! the merged result first ([`figures`]); the layout is pure. The same figures make the
//! JSON result's `totals.pgbench` ([`json`]).

use std::fmt::Write;
use std::time::Duration;

use fleetbench_model::workloads::pgbench::{Script, Step};

use crate::merge::{CommandFigures, Latency, MergedInterval, RunResult, TxnFigures};
use crate::plan::pgbench::PgbenchArgs;

/// What a run's report says besides its figures.
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// The server's version, as the agents' Ready said it ("PostgreSQL 15.8 ...").
    pub server_version: String,
    pub scale: u32,
    /// From the Start messages to every agent's Ready: opening the connections.
    pub conn_time: Duration,
}

/// One script's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptFigures {
    pub processed: u64,
    pub failed: u64,
    /// Transactions tried more than once, and the retries.
    pub retried: u64,
    pub retries: u64,
    /// `-R` with `-L`: transactions skipped for being late already.
    pub skipped: u64,
    pub avg_ms: f64,
    pub stddev_ms: f64,
    /// `-r`: per command of the script, in its order.
    pub commands: Vec<CommandLine>,
}

/// One command's line of `-r`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandLine {
    pub avg_ms: f64,
    pub failures: u64,
    pub retries: u64,
}

/// A run's figures, merged over agents.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub processed: u64,
    pub failed: u64,
    pub serialization: u64,
    pub deadlocks: u64,
    /// Transactions tried more than once, and the retries.
    pub retried: u64,
    pub retries: u64,
    /// `-R` with `-L`: transactions skipped for being late already.
    pub skipped: u64,
    pub avg_ms: f64,
    pub stddev_ms: f64,
    /// `-R`: the average and the longest time from a transaction's schedule to its start.
    pub lag_ms: Option<(f64, f64)>,
    /// `-L`: transactions that took longer.
    pub late: Option<u64>,
    /// Clients that ended on an error that is not retried.
    pub aborted: u64,
    /// Seconds from Go to the last client's end.
    pub secs: f64,
    /// Per script, in the order given.
    pub scripts: Vec<ScriptFigures>,
    /// `-C`: the average time to open a transaction's connection, in milliseconds.
    pub connect_ms: Option<f64>,
}

/// Average and standard deviation of `l`, in milliseconds (HDR precision).
fn avg_stddev(l: &Latency) -> (f64, f64) {
    if l.count() == 0 {
        return (0.0, 0.0);
    }
    (l.avg_ms(), l.hist.stdev() / 1_000.0)
}

/// The `-r` lines of script `script` of `b`, from the merged per-command figures.
fn command_lines(b: &Script, script: usize, all: &[CommandFigures]) -> Vec<CommandLine> {
    (0..b.commands().len())
        .map(|command| {
            let c = all
                .iter()
                .find(|c| c.script == script && c.command == command)
                .copied()
                .unwrap_or_default();
            CommandLine {
                avg_ms: c.avg_ms(),
                failures: c.failures,
                retries: c.retries,
            }
        })
        .collect()
}

/// The schedule lag of an open loop's events, (average, longest) in milliseconds: from
/// the sums of their latencies (from schedule) and service times (from start), exact.
fn lag(events: u64, latency: &Latency, o: &crate::merge::OpenLoop) -> (f64, f64) {
    let avg = if events == 0 {
        0.0
    } else {
        latency.sum_ns.saturating_sub(o.service.sum_ns) as f64 / events as f64 / 1e6
    };
    (avg, o.lag_max_ns as f64 / 1e6)
}

/// The figures of `r` for a run of `args`.
pub fn figures(args: &PgbenchArgs, r: &RunResult) -> Figures {
    let txns = r.txns();
    let lat = r.latency();
    let (avg_ms, stddev_ms) = avg_stddev(&lat);
    let db = r.db();
    let code = |s| fleetbench_model::sqlstate::encode(s).unwrap_or(0);
    let scripts = args
        .scripts
        .iter()
        .enumerate()
        .map(|(i, (b, _))| {
            let t: &TxnFigures = &txns.0[i];
            let (avg_ms, stddev_ms) = avg_stddev(&t.latency);
            ScriptFigures {
                processed: t.count(),
                failed: t.failed,
                retried: t.retried_txns,
                retries: t.retried,
                skipped: t.skipped,
                avg_ms,
                stddev_ms,
                commands: if args.per_statement {
                    command_lines(b, i, &r.commands)
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    let lag_ms = r.open().map(|o| lag(r.events(), &lat, &o));
    Figures {
        processed: r.events(),
        failed: txns.0.iter().map(|t| t.failed).sum(),
        serialization: db.errors_by_code.get(&code("40001")).copied().unwrap_or(0),
        deadlocks: db.errors_by_code.get(&code("40P01")).copied().unwrap_or(0),
        retried: txns.0.iter().map(|t| t.retried_txns).sum(),
        retries: txns.0.iter().map(|t| t.retried).sum(),
        skipped: r.clients.skipped,
        avg_ms,
        stddev_ms,
        lag_ms,
        late: args.latency_limit_ms.map(|_| r.clients.late),
        aborted: r.clients.clients_aborted,
        secs: r.total_time().as_secs_f64(),
        scripts,
        connect_ms: args
            .connect_each
            .then(|| db.connect_ns as f64 / db.reconnects.max(1) as f64 / 1e6),
    }
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

/// How pgbench names a script ("<builtin: TPC-B (sort of)>").
/// The counts of transactions that did not simply pass, for the run or one script.
struct Counts {
    failed: u64,
    /// Serialization and deadlock failures, where they are printed (--failures-detailed).
    detailed: Option<(u64, u64)>,
    retried: u64,
    retries: u64,
    skipped: u64,
}

/// "number of WHAT: N (P%)", as pgbench words its counts.
fn count_line(s: &mut String, prefix: &str, what: &str, n: u64, all: u64) {
    let _ = writeln!(s, "{prefix}number of {what}: {n} ({:.3}%)", pct(n, all));
}

/// The failed, retried and skipped lines of the run or of one script (prefix " - "), each
/// where pgbench prints it: the kinds of failure with --failures-detailed, retries with
/// --max-tries other than 1, skipped with -R and -L.
fn counts_lines(s: &mut String, args: &PgbenchArgs, prefix: &str, c: &Counts, all: u64) {
    count_line(s, prefix, "failed transactions", c.failed, all);
    if let Some((serialization, deadlocks)) = c.detailed {
        count_line(s, prefix, "serialization failures", serialization, all);
        count_line(s, prefix, "deadlock failures", deadlocks, all);
    }
    if args.max_tries != 1 {
        count_line(s, prefix, "transactions retried", c.retried, all);
        let _ = writeln!(s, "{prefix}total number of retries: {}", c.retries);
    }
    if args.rate.is_some() && args.latency_limit_ms.is_some() {
        count_line(s, prefix, "transactions skipped", c.skipped, all);
    }
}

fn script_name(b: &Script) -> String {
    b.title()
}

/// The end-of-run report in pgbench's layout.
pub fn run_report(args: &PgbenchArgs, facts: &RunFacts, f: &Figures) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "pgbench (fleetbench {}, {})",
        env!("CARGO_PKG_VERSION"),
        if facts.server_version.is_empty() {
            "PostgreSQL"
        } else {
            &facts.server_version
        }
    );
    let kind = match &args.scripts[..] {
        [(b, _)] => script_name(b),
        _ => "multiple scripts".into(),
    };
    let _ = writeln!(s, "transaction type: {kind}");
    let _ = writeln!(s, "scaling factor: {}", facts.scale);
    let _ = writeln!(s, "query mode: {}", args.mode.name());
    let _ = writeln!(s, "number of clients: {}", args.clients);
    let _ = writeln!(s, "number of threads: {}", args.jobs);
    let _ = writeln!(s, "maximum number of tries: {}", args.max_tries);
    // pgbench's shares are of every transaction: processed, failed and skipped.
    let all = f.processed + f.failed + f.skipped;
    match (args.duration, args.transactions) {
        (Some(t), _) => {
            let _ = writeln!(s, "duration: {t} s");
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}",
                f.processed
            );
        }
        (None, Some(t)) => {
            let _ = writeln!(s, "number of transactions per client: {t}");
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}/{}",
                f.processed,
                t * u64::from(args.clients)
            );
        }
        (None, None) => {
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}",
                f.processed
            );
        }
    }
    let counts = Counts {
        failed: f.failed,
        detailed: args
            .failures_detailed
            .then_some((f.serialization, f.deadlocks)),
        retried: f.retried,
        retries: f.retries,
        skipped: f.skipped,
    };
    counts_lines(&mut s, args, "", &counts, all);
    if let (Some(limit), Some(late)) = (args.latency_limit_ms, f.late) {
        let _ = writeln!(
            s,
            "number of transactions above the {limit:.1} ms latency limit: {late}/{} ({:.3}%)",
            f.processed,
            pct(late, f.processed)
        );
    }
    let _ = writeln!(s, "latency average = {:.3} ms", f.avg_ms);
    let _ = writeln!(s, "latency stddev = {:.3} ms", f.stddev_ms);
    if let Some((avg, max)) = f.lag_ms {
        let _ = writeln!(s, "rate limit schedule lag: avg {avg:.3} (max {max:.3}) ms");
    }
    let tps = if f.secs > 0.0 {
        f.processed as f64 / f.secs
    } else {
        0.0
    };
    // -C: every transaction opened its connection, timed within it.
    if let Some(ms) = f.connect_ms {
        let _ = writeln!(s, "average connection time = {ms:.3} ms");
        let _ = writeln!(s, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(
            s,
            "initial connection time = {:.3} ms",
            facts.conn_time.as_secs_f64() * 1_000.0
        );
        let _ = writeln!(s, "tps = {tps:.6} (without initial connection time)");
    }
    if args.scripts.len() > 1 {
        s.push_str(&script_blocks(args, f));
    } else if let (true, Some(sf)) = (args.per_statement, f.scripts.first()) {
        s.push_str(&command_block(args, "", &args.scripts[0].0, &sf.commands));
    }
    s
}

/// The figures of [`run_report`] for the JSON result (`totals.pgbench`).
pub fn json(args: &PgbenchArgs, f: &Figures) -> crate::report::doc::PgbenchTotals {
    use crate::report::doc::{PgbenchCommand, PgbenchScript, PgbenchTotals, ScheduleLag};
    let per_sec = |n: u64| if f.secs > 0.0 { n as f64 / f.secs } else { 0.0 };
    PgbenchTotals {
        processed: f.processed,
        tps: per_sec(f.processed),
        failed: f.failed,
        serialization_failures: f.serialization,
        deadlock_failures: f.deadlocks,
        retried: f.retried,
        retries: f.retries,
        skipped: f.skipped,
        latency_limit_ms: args.latency_limit_ms,
        late: f.late,
        clients_aborted: f.aborted,
        latency_avg_ms: f.avg_ms,
        latency_stddev_ms: f.stddev_ms,
        schedule_lag_ms: f.lag_ms.map(|(avg, max)| ScheduleLag { avg, max }),
        scripts: args
            .scripts
            .iter()
            .zip(&f.scripts)
            .map(|((b, w), sf)| PgbenchScript {
                name: script_name(b),
                weight: *w,
                processed: sf.processed,
                tps: per_sec(sf.processed),
                failed: sf.failed,
                retried: sf.retried,
                retries: sf.retries,
                skipped: sf.skipped,
                latency_avg_ms: sf.avg_ms,
                latency_stddev_ms: sf.stddev_ms,
                commands: b
                    .commands()
                    .iter()
                    .zip(&sf.commands)
                    .map(|(text, c)| PgbenchCommand {
                        command: text.to_string(),
                        latency_avg_ms: c.avg_ms,
                        failures: c.failures,
                        retries: c.retries,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// `-r`'s block of one script: a heading (after `prefix`, " - " inside a script's
/// block), then a line per command: average latency, failures (and retries), text.
fn command_block(args: &PgbenchArgs, prefix: &str, b: &Script, lines: &[CommandLine]) -> String {
    let retries = args.max_tries != 1;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{prefix}statement latencies in milliseconds{}:",
        if retries {
            ", failures and retries"
        } else {
            " and failures"
        }
    );
    for (text, c) in b.commands().iter().zip(lines) {
        let _ = write!(s, "   {:11.3}  {:10}", c.avg_ms, c.failures);
        if retries {
            let _ = write!(s, "  {:10}", c.retries);
        }
        let _ = writeln!(s, "  {text}");
    }
    s
}

/// pgbench's block per script, when there are several.
fn script_blocks(args: &PgbenchArgs, f: &Figures) -> String {
    let mut s = String::new();
    let weights: u64 = args.scripts.iter().map(|(_, w)| u64::from(*w)).sum();
    for (i, ((b, w), sf)) in args.scripts.iter().zip(&f.scripts).enumerate() {
        let _ = writeln!(s, "SQL script {}: {}", i + 1, script_name(b));
        let _ = writeln!(
            s,
            " - weight: {w} (targets {:.1}% of total)",
            pct(u64::from(*w), weights)
        );
        let tps = if f.secs > 0.0 {
            sf.processed as f64 / f.secs
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            " - {} transactions ({:.1}% of total, tps = {tps:.6})",
            sf.processed,
            pct(sf.processed, f.processed)
        );
        let all = sf.processed + sf.failed + sf.skipped;
        let counts = Counts {
            failed: sf.failed,
            detailed: None,
            retried: sf.retried,
            retries: sf.retries,
            skipped: sf.skipped,
        };
        counts_lines(&mut s, args, " - ", &counts, all);
        let _ = writeln!(s, " - latency average = {:.3} ms", sf.avg_ms);
        let _ = writeln!(s, " - latency stddev = {:.3} ms", sf.stddev_ms);
        if args.per_statement {
            s.push_str(&command_block(args, " - ", b, &sf.commands));
        }
    }
    s
}

/// fleetbench's line after pgbench's report: the latency percentiles, exact to HDR
/// precision over every agent's transactions.
pub fn percentiles_line(lat: &Latency) -> String {
    let mut s = String::from("latency percentiles (ms):");
    for p in [50.0, 90.0, 95.0, 99.0, 99.9] {
        let _ = write!(s, " p{p} {:.3},", lat.percentile_ms(p));
    }
    let _ = writeln!(s, " max {:.3}", lat.max_ms());
    s
}

/// A `-P` line: "progress: 1.0 s, 4500.1 tps, lat 0.886 ms stddev 0.204, 0 failed"
/// (", lag 0.123 ms" with `-R`, ", 3 skipped" with `-R` and `-L`, ", 2 retried, 2
/// retries" with `--max-tries` other than 1).
pub fn progress_line(args: &PgbenchArgs, iv: &MergedInterval) -> String {
    let (avg, sd) = avg_stddev(&iv.latency);
    let failed: u64 = iv.txns.0.iter().map(|t| t.failed).sum();
    let mut s = format!(
        "progress: {:.1} s, {:.1} tps, lat {avg:.3} ms stddev {sd:.3}, {failed} failed",
        iv.end.as_secs_f64(),
        iv.events_per_sec()
    );
    if let Some(o) = &iv.open {
        let _ = write!(s, ", lag {:.3} ms", lag(iv.events, &iv.latency, o).0);
        if args.latency_limit_ms.is_some() {
            let _ = write!(s, ", {} skipped", iv.clients.skipped);
        }
    }
    if args.max_tries != 1 {
        let retried: u64 = iv.txns.0.iter().map(|t| t.retried_txns).sum();
        let retries: u64 = iv.txns.0.iter().map(|t| t.retried).sum();
        let _ = write!(s, ", {retried} retried, {retries} retries");
    }
    s
}

/// A load's progress line: "100000 of 200000 tuples (50%) done (elapsed 0.04 s,
/// remaining 0.04 s)".
pub fn tuples_line(done: u64, total: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let remaining = if done > 0 {
        secs * (total.saturating_sub(done)) as f64 / done as f64
    } else {
        0.0
    };
    format!(
        "{done} of {total} tuples ({}%) done (elapsed {secs:.2} s, remaining {remaining:.2} s)",
        (pct(done, total) as u64).min(100)
    )
}

/// `-i`'s last line: "done in 0.40 s (drop tables 0.00 s, create tables 0.02 s, ...)."
pub fn done_line(total: Duration, steps: &[(Step, Duration)]) -> String {
    let parts: Vec<String> = steps
        .iter()
        .map(|(st, d)| format!("{} {:.2} s", st.label(), d.as_secs_f64()))
        .collect();
    format!(
        "done in {:.2} s ({}).",
        total.as_secs_f64(),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::pgbench::parse;

    fn args(line: &str) -> PgbenchArgs {
        let v: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&v, &|k| (k == "USER").then(|| "me".to_string())).unwrap()
    }

    fn facts() -> RunFacts {
        RunFacts {
            server_version: "PostgreSQL 15.8".into(),
            scale: 2,
            conn_time: Duration::from_micros(19_364),
        }
    }

    #[test]
    fn the_report_has_pgbench_s_lines() {
        let f = Figures {
            processed: 953,
            avg_ms: 4.16,
            stddev_ms: 2.248,
            secs: 2.0,
            scripts: vec![ScriptFigures::default()],
            ..Figures::default()
        };
        let text = run_report(&args("-c 2 -T 2"), &facts(), &f);
        let expected = "\
pgbench (fleetbench VERSION, PostgreSQL 15.8)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 2
query mode: simple
number of clients: 2
number of threads: 1
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 953
number of failed transactions: 0 (0.000%)
latency average = 4.160 ms
latency stddev = 2.248 ms
initial connection time = 19.364 ms
tps = 476.500000 (without initial connection time)
"
        .replace("VERSION", env!("CARGO_PKG_VERSION"));
        assert_eq!(text, expected);
    }

    /// Two scripts' figures with every option's counts: failures, retries, skipped, late.
    fn two_scripts() -> Figures {
        Figures {
            processed: 100,
            failed: 2,
            serialization: 2,
            retried: 3,
            retries: 5,
            skipped: 8,
            avg_ms: 1.0,
            lag_ms: Some((0.25, 1.5)),
            late: Some(10),
            secs: 1.0,
            scripts: vec![
                ScriptFigures {
                    processed: 60,
                    skipped: 5,
                    ..ScriptFigures::default()
                },
                ScriptFigures {
                    processed: 40,
                    failed: 2,
                    retried: 3,
                    retries: 5,
                    skipped: 3,
                    ..ScriptFigures::default()
                },
            ],
            ..Figures::default()
        }
    }

    #[test]
    fn options_add_their_lines() {
        let f = two_scripts();
        let a =
            args("-t 50 -c 2 -b select-only@2 -N -R 100 -L 5 --max-tries 3 --failures-detailed");
        let text = run_report(&a, &facts(), &f);
        // In pgbench's order; the shares are of processed, failed and skipped (110).
        let want = [
            "transaction type: multiple scripts",
            "number of transactions per client: 50",
            "number of transactions actually processed: 100/100",
            "number of failed transactions: 2 (1.818%)",
            "number of serialization failures: 2 (1.818%)",
            "number of deadlock failures: 0 (0.000%)",
            "number of transactions retried: 3 (2.727%)",
            "total number of retries: 5",
            "number of transactions skipped: 8 (7.273%)",
            "number of transactions above the 5.0 ms latency limit: 10/100 (10.000%)",
            "latency average = 1.000 ms",
            "rate limit schedule lag: avg 0.250 (max 1.500) ms",
            "SQL script 1: <builtin: select only>",
            " - weight: 2 (targets 66.7% of total)",
            " - 60 transactions (60.0% of total, tps = 60.000000)",
            " - number of transactions skipped: 5 (7.692%)",
            "SQL script 2: <builtin: simple update>",
            " - number of failed transactions: 2 (4.444%)",
            " - number of transactions retried: 3 (6.667%)",
            " - total number of retries: 5",
            " - number of transactions skipped: 3 (6.667%)",
        ];
        let lines: Vec<&str> = text.lines().collect();
        let mut at = 0;
        for line in want {
            let found = lines[at..].iter().position(|l| *l == line);
            assert!(found.is_some(), "{line:?} (in order) in\n{text}");
            at += found.unwrap_or(0) + 1;
        }
        // No -R: neither skipped nor lag; -L alone counts late ones.
        let closed = Figures {
            lag_ms: None,
            skipped: 0,
            ..f.clone()
        };
        let b = run_report(&args("-T 5 -L 2"), &facts(), &closed);
        assert!(!b.contains("skipped") && !b.contains("schedule lag"), "{b}");
        assert!(
            b.contains("above the 2.0 ms latency limit: 10/100 (10.000%)"),
            "{b}"
        );
    }

    /// The JSON section carries the text's figures, and the schema in docs names every
    /// field it writes (all optional ones present here) and requires those always there.
    #[test]
    fn the_json_section_has_the_report_s_figures_and_follows_the_schema() {
        let mut f = Figures {
            stddev_ms: 0.5,
            aborted: 1,
            secs: 2.0,
            ..two_scripts()
        };
        f.scripts[1].commands = vec![CommandLine::default(); 9];
        let a = args("-r -c 2 -b select-only@2 -N -R 100 -L 5");
        let j = json(&a, &f);
        assert_eq!(
            (j.processed, j.tps, j.skipped, j.late),
            (100, 50.0, 8, Some(10))
        );
        assert_eq!(j.latency_limit_ms, Some(5.0));
        assert_eq!(j.clients_aborted, 1);
        assert_eq!(j.scripts[0].name, "<builtin: select only>");
        assert_eq!((j.scripts[0].weight, j.scripts[1].weight), (2, 1));
        assert_eq!(j.scripts[1].tps, 20.0);
        assert_eq!(j.scripts[1].commands.len(), 9);
        assert_eq!(j.scripts[1].commands[8].command, "END;");

        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../../docs/result-schema.json")).unwrap();
        let def = &schema["$defs"]["totals"]["properties"]["pgbench"];
        let v = serde_json::to_value(&j).unwrap();
        let check = |def: &serde_json::Value, v: &serde_json::Value, what: &str| {
            let props = def["properties"].as_object().unwrap();
            let obj = v.as_object().unwrap();
            for k in obj.keys() {
                assert!(props.contains_key(k), "{what}.{k} is not in the schema");
            }
            for k in def["required"].as_array().unwrap() {
                assert!(
                    obj.contains_key(k.as_str().unwrap()),
                    "{what}.{k} is required"
                );
            }
        };
        check(def, &v, "pgbench");
        let script = &def["properties"]["scripts"]["items"];
        check(script, &v["scripts"][1], "pgbench.scripts[]");
        check(
            &script["properties"]["commands"]["items"],
            &v["scripts"][1]["commands"][0],
            "pgbench.scripts[].commands[]",
        );
        check(
            &def["properties"]["schedule_lag_ms"],
            &v["schedule_lag_ms"],
            "pgbench.schedule_lag_ms",
        );
    }

    /// `-r` lines, laid out as pgbench 15's (column widths measured on its output).
    #[test]
    fn statement_latencies_follow_the_summary_or_each_script() {
        let cmd = |avg_ms, failures, retries| CommandLine {
            avg_ms,
            failures,
            retries,
        };
        let select = vec![cmd(0.001, 0, 0), cmd(0.237, 0, 0)];
        let f = Figures {
            processed: 10,
            secs: 1.0,
            scripts: vec![ScriptFigures {
                processed: 10,
                commands: select.clone(),
                ..ScriptFigures::default()
            }],
            ..Figures::default()
        };
        let text = run_report(&args("-S -r -t 5 -c 2"), &facts(), &f);
        let tail = "\
tps = 10.000000 (without initial connection time)
statement latencies in milliseconds and failures:
         0.001           0  \\set aid random(1, 100000 * :scale)
         0.237           0  SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";
        assert!(text.ends_with(tail), "{text}");
        let mut update = vec![cmd(0.001, 0, 0); 4];
        update.extend([cmd(0.151, 0, 0), cmd(0.261, 1, 12), cmd(0.417, 0, 0)]);
        update.extend([cmd(0.1, 0, 0), cmd(2.287, 0, 3)]);
        let f = Figures {
            scripts: vec![
                ScriptFigures {
                    commands: select,
                    ..ScriptFigures::default()
                },
                ScriptFigures {
                    commands: update,
                    ..ScriptFigures::default()
                },
            ],
            ..f
        };
        let text = run_report(&args("-r -b select -b simple --max-tries=2"), &facts(), &f);
        for block in [
            "\
 - latency stddev = 0.000 ms
 - statement latencies in milliseconds, failures and retries:
         0.001           0           0  \\set aid random(1, 100000 * :scale)
         0.237           0           0  SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SQL script 2: <builtin: simple update>
",
            "\
         0.261           1          12  UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
",
            "\
         2.287           0           3  END;
",
        ] {
            assert!(text.contains(block), "{block:?} in\n{text}");
        }
        assert!(text.ends_with("  END;\n"), "{text}");
    }

    #[test]
    fn progress_lines_add_lag_skipped_and_retries() {
        let mut iv = MergedInterval {
            end: Duration::from_secs(2),
            duration: Duration::from_secs(1),
            events: 2,
            ..MergedInterval::default()
        };
        for us in [1_000, 3_000] {
            iv.latency.hist.record(us).unwrap();
        }
        iv.latency.sum_ns = 4_000_000;
        iv.txns.0[0].retried_txns = 1;
        iv.txns.0[0].retried = 2;
        iv.clients.skipped = 7;
        let plain = progress_line(&args("-T 5 -P 1"), &iv);
        assert_eq!(
            plain,
            "progress: 2.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 0 failed"
        );
        iv.open = Some(crate::merge::OpenLoop {
            service: Latency {
                sum_ns: 3_000_000,
                ..Latency::default()
            },
            ..Default::default()
        });
        let a = args("-T 5 -P 1 -R 10 -L 3 --max-tries 2");
        assert_eq!(
            progress_line(&a, &iv),
            "progress: 2.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 0 failed, lag 0.500 ms, 7 skipped, 1 retried, 2 retries"
        );
    }

    #[test]
    fn progress_and_init_lines() {
        assert_eq!(
            tuples_line(100_000, 200_000, Duration::from_millis(40)),
            "100000 of 200000 tuples (50%) done (elapsed 0.04 s, remaining 0.04 s)"
        );
        assert_eq!(
            done_line(
                Duration::from_millis(400),
                &[
                    (Step::Drop, Duration::ZERO),
                    (Step::Create, Duration::from_millis(20)),
                    (Step::Generate, Duration::from_millis(200)),
                ]
            ),
            "done in 0.40 s (drop tables 0.00 s, create tables 0.02 s, client-side generate 0.20 s)."
        );
    }
}
