//! Which options each command honours, so that none is ever silently ignored: before a
//! command starts, an option it does not take is refused in one line that says which
//! command takes it ("compare does not take --threads: an option of `TEST run`"), exit 2.
//! The table is by clap's ids (the fields of [`RawArgs`]); a new option is refused by
//! every command until it is added to those that honour it, and a test walks every
//! option of every command (commands/honoured.rs's tests, tests/tests/options.rs).
//!
//! One exception keeps sysbench's command lines working: sysbench accepts its general
//! options (`--time`, `--report-interval`, ...) with every command, so that one option line
//! serves prepare, run and cleanup. A table job (prepare, cleanup, prewarm, check, a
//! script's own command) accepts those it does not use with a note on stderr saying so.

use super::Which;
use crate::cli::RawArgs;
use crate::error::UsageError;

/// A command, as the table of options knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Run,
    Prepare,
    Cleanup,
    Prewarm,
    /// TPC-C's consistency check.
    Check,
    /// A Lua script's command other than `run` (its prepare, cleanup or its own).
    ScriptCommand,
    Compare,
    Report,
    /// `report` given several results: a comparison.
    ReportMany,
    ScenarioRun,
    ScenarioCleanup,
    RunsList,
    RunsShow,
    RunsCompare,
    RunsTrend,
    RunsImport,
    RunsExport,
    RunsRm,
    RunsTag,
    Serve,
    Agents,
    Stop,
}

/// Every command, for the tests' walk and the refusals' hints (in the order a hint names
/// them).
pub const ALL: [Cmd; 22] = [
    Cmd::Run,
    Cmd::Prepare,
    Cmd::Cleanup,
    Cmd::Prewarm,
    Cmd::Check,
    Cmd::ScriptCommand,
    Cmd::Compare,
    Cmd::Report,
    Cmd::ReportMany,
    Cmd::ScenarioRun,
    Cmd::ScenarioCleanup,
    Cmd::RunsList,
    Cmd::RunsShow,
    Cmd::RunsCompare,
    Cmd::RunsTrend,
    Cmd::RunsImport,
    Cmd::RunsExport,
    Cmd::RunsRm,
    Cmd::RunsTag,
    Cmd::Serve,
    Cmd::Agents,
    Cmd::Stop,
];

/// How to reach agents: honoured by every command that talks to them.
const LINK: [&str; 6] = [
    "agents",
    "local_agents",
    "token_file",
    "tls_ca",
    "tls_cert",
    "tls_key",
];

/// sysbench's general options: a table job accepts those it does not use, with a note.
pub const SYSBENCH_GENERAL: [&str; 12] = [
    "threads",
    "time",
    "events",
    "rate",
    "report_interval",
    "report_checkpoints",
    "percentile",
    "histogram",
    "warmup_time",
    "forced_shutdown",
    "rand_seed",
    "rand_init",
];

/// What a run takes: every option of the command line but compare's and the catalog's
/// readers' (`--fail-if`, `--force`, `--since`, `--metric`) and scenario files' (`--only`).
const RUN: [&str; 50] = [
    "test",
    "threads",
    "time",
    "events",
    "report_interval",
    "percentile",
    "rand_seed",
    "rand_init",
    "rate",
    "verbosity",
    "report_checkpoints",
    "forced_shutdown",
    // sysbench 0.4/0.5's: the plan notes that they have no effect.
    "thread_stack_size",
    "debug",
    "validate",
    "json",
    "warmup_time",
    "cooldown",
    "csv",
    "html",
    "tag",
    "hlog",
    "hlog_per_agent",
    "metrics_listen",
    "metrics_push",
    "histogram",
    "warn_client_saturation",
    "report_style",
    "repeat",
    "catalog",
    "no_catalog",
    "fail_on_regression",
    "live_agents",
    "web",
    "web_token_file",
    "agents",
    "token_file",
    "ready_timeout",
    "max_downtime",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "local_agents",
    "target",
    "server_status",
    "replica",
    "observe",
    "observe_process",
    "observe_dir",
    "table_map",
];

/// What a table job takes besides [`LINK`]: its test, threads, seed, targets.
const TABLE_JOB: [&str; 9] = [
    "test",
    "verbosity",
    "threads",
    "target",
    "table_map",
    "ready_timeout",
    "thread_stack_size",
    "debug",
    "validate",
];

/// The options `cmd` honours, by clap id.
pub fn honoured(cmd: Cmd) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = vec!["verbosity"];
    match cmd {
        Cmd::Run => v.extend(RUN),
        Cmd::Prepare => v.extend(
            TABLE_JOB
                .iter()
                .chain(&LINK)
                .chain(&["rand_seed", "rand_init"]),
        ),
        Cmd::Cleanup | Cmd::Prewarm | Cmd::Check => v.extend(TABLE_JOB.iter().chain(&LINK)),
        // The script sees the run options in sysbench.opt (a command runs to its end).
        Cmd::ScriptCommand => v.extend(TABLE_JOB.iter().chain(&LINK).chain(&[
            "rand_seed",
            "rand_init",
            "rate",
            "report_interval",
            "percentile",
            "warmup_time",
        ])),
        Cmd::Compare | Cmd::ReportMany => v.extend(["fail_if", "force", "html", "csv", "json"]),
        Cmd::Report => v.push("html"),
        Cmd::ScenarioRun => v.extend(LINK.iter().chain(&[
            "only",
            "repeat",
            "json",
            "csv",
            "html",
            "tag",
            "warmup_time",
            "cooldown",
            "catalog",
            "no_catalog",
            "fail_on_regression",
            "web",
            "web_token_file",
            "metrics_listen",
            "metrics_push",
            "histogram",
            "report_style",
            "live_agents",
        ])),
        Cmd::ScenarioCleanup => v.extend(LINK.iter().chain(&["only"])),
        Cmd::RunsList => v.extend(["catalog", "no_catalog", "test", "tag", "target", "since"]),
        Cmd::RunsShow | Cmd::RunsImport | Cmd::RunsExport | Cmd::RunsRm | Cmd::RunsTag => {
            v.extend(["catalog", "no_catalog"])
        }
        Cmd::RunsCompare => v.extend([
            "catalog",
            "no_catalog",
            "fail_if",
            "force",
            "html",
            "csv",
            "json",
        ]),
        Cmd::RunsTrend => v.extend(["catalog", "no_catalog", "metric", "html"]),
        // --token-file: the page's token when it listens beyond loopback.
        Cmd::Serve => v.extend([
            "catalog",
            "no_catalog",
            "web",
            "web_token_file",
            "token_file",
        ]),
        Cmd::Agents | Cmd::Stop => {
            v.extend(["agents", "token_file", "tls_ca", "tls_cert", "tls_key"])
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether `cmd` is a table job, which accepts sysbench's general options it does not use.
fn is_table_job(cmd: Cmd) -> bool {
    matches!(
        cmd,
        Cmd::Prepare | Cmd::Cleanup | Cmd::Prewarm | Cmd::Check | Cmd::ScriptCommand
    )
}

impl Cmd {
    /// The command of a parsed command line; None when its words name none (the
    /// command's own usage error says so then).
    pub fn of(raw: &RawArgs) -> Option<Cmd> {
        let w: Vec<&str> = raw.words.iter().map(String::as_str).collect();
        // `compare ... --test=cpu`: the command its first word names, which does not take
        // --test (dispatch would read the line as a test's, and fail on its words).
        let which = match w.first() {
            Some(&"compare") => Which::Compare,
            Some(&"report") => Which::Report,
            Some(&"agents") => Which::Agents,
            Some(&"stop") => Which::Stop,
            Some(&"scenario") => Which::Scenario,
            Some(&"serve") => Which::Serve,
            _ => Which::of(raw),
        };
        Some(match which {
            Which::Compare => Cmd::Compare,
            Which::Report if w.len() > 2 => Cmd::ReportMany,
            Which::Report => Cmd::Report,
            Which::Agents => Cmd::Agents,
            Which::Stop => Cmd::Stop,
            Which::Serve => Cmd::Serve,
            Which::Scenario => match w.get(1).copied()? {
                "run" => Cmd::ScenarioRun,
                "cleanup" => Cmd::ScenarioCleanup,
                _ => return None,
            },
            Which::Runs => match w.get(1).copied()? {
                "list" => Cmd::RunsList,
                "show" => Cmd::RunsShow,
                "compare" => Cmd::RunsCompare,
                "trend" => Cmd::RunsTrend,
                "import" => Cmd::RunsImport,
                "export" => Cmd::RunsExport,
                "rm" => Cmd::RunsRm,
                "tag" => Cmd::RunsTag,
                _ => return None,
            },
            Which::Bench => bench_command(raw)?,
        })
    }

    /// How a hint names the command.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Run => "TEST run",
            Cmd::Prepare => "TEST prepare",
            Cmd::Cleanup => "TEST cleanup",
            Cmd::Prewarm => "TEST prewarm",
            Cmd::Check => "tpcc check",
            Cmd::ScriptCommand => "SCRIPT COMMAND",
            Cmd::Compare => "compare",
            Cmd::Report => "report",
            Cmd::ReportMany => "report A B",
            Cmd::ScenarioRun => "scenario run",
            Cmd::ScenarioCleanup => "scenario cleanup",
            Cmd::RunsList => "runs list",
            Cmd::RunsShow => "runs show",
            Cmd::RunsCompare => "runs compare",
            Cmd::RunsTrend => "runs trend",
            Cmd::RunsImport => "runs import",
            Cmd::RunsExport => "runs export",
            Cmd::RunsRm => "runs rm",
            Cmd::RunsTag => "runs tag",
            Cmd::Serve => "serve",
            Cmd::Agents => "agents",
            Cmd::Stop => "stop",
        }
    }
}

/// A test's command: its word after the test (or `--test`), or a script's command.
fn bench_command(raw: &RawArgs) -> Option<Cmd> {
    if let Some(s) = &raw.script {
        return Some(if s.command == "run" {
            Cmd::Run
        } else {
            Cmd::ScriptCommand
        });
    }
    let mut words = raw.words.iter().map(String::as_str);
    let test = match &raw.test {
        Some(t) => t.as_str(),
        None => words.next()?,
    };
    let base = test.rsplit('/').next().unwrap_or(test);
    Some(match (words.next()?, base.trim_end_matches(".lua")) {
        // 0.5's parallel_prepare.lua: its run is a prepare (plan::build).
        ("run", "parallel_prepare") => Cmd::Prepare,
        ("run", _) => Cmd::Run,
        ("prepare", _) => Cmd::Prepare,
        ("cleanup", _) => Cmd::Cleanup,
        ("prewarm", _) => Cmd::Prewarm,
        ("check", _) => Cmd::Check,
        _ => return None,
    })
}

/// The command as the refusal names it: the word typed (`prepare`, `runs list`).
fn typed(cmd: Cmd, raw: &RawArgs) -> String {
    match cmd {
        Cmd::Run | Cmd::Prepare | Cmd::Cleanup | Cmd::Prewarm | Cmd::Check => {
            raw.words.last().cloned().unwrap_or_default()
        }
        Cmd::ScriptCommand => raw
            .script
            .as_ref()
            .map_or_else(String::new, |s| s.command.clone()),
        Cmd::ReportMany => "report with several results".into(),
        other => other.name().to_string(),
    }
}

/// The long name of an option by its clap id (`report_interval` -> `--report-interval`).
pub fn long(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// Where an option given to `cmd` belongs instead: the commands that honour it.
fn hint(cmd: Cmd, id: &str) -> String {
    let takers: Vec<&str> = ALL
        .iter()
        .filter(|c| !matches!(c, Cmd::ReportMany | Cmd::ScriptCommand))
        .filter(|c| honoured(**c).contains(&id))
        .map(|c| c.name())
        .take(3)
        .collect();
    let file =
        if matches!(cmd, Cmd::ScenarioRun | Cmd::ScenarioCleanup) && takers.contains(&"TEST run") {
            "the scenario file sets it; "
        } else {
            ""
        };
    match takers.as_slice() {
        [] => String::new(),
        [one] => format!(": {file}an option of `{one}`"),
        many => format!(": {file}an option of `{}`", many.join("`, `")),
    }
}

/// Checks the options of a parsed command line against its command: Err with the one line
/// that refuses the first option it does not take; else the notes to show (a table job's
/// sysbench options it accepts without using them).
pub fn check(raw: &RawArgs) -> Result<Vec<String>, UsageError> {
    let Some(cmd) = Cmd::of(raw) else {
        return Ok(Vec::new());
    };
    let taken = honoured(cmd);
    let name = typed(cmd, raw);
    let mut unused = Vec::new();
    for id in &raw.given {
        if taken.contains(&id.as_str()) {
            continue;
        }
        if is_table_job(cmd) && SYSBENCH_GENERAL.contains(&id.as_str()) {
            unused.push(long(id));
            continue;
        }
        return Err(UsageError(format!(
            "{name} does not take {}{}",
            long(id),
            hint(cmd, id)
        )));
    }
    // The tests' declared options (`--tables`, `--mysql-host`): a test's plan checks them.
    let runs_a_test = matches!(
        cmd,
        Cmd::Run | Cmd::Prepare | Cmd::Cleanup | Cmd::Prewarm | Cmd::Check | Cmd::ScriptCommand
    );
    if let Some((option, _)) = raw.options.first().filter(|_| !runs_a_test) {
        let file = if matches!(cmd, Cmd::ScenarioRun | Cmd::ScenarioCleanup) {
            "the scenario file sets it"
        } else {
            "an option of the tests (`fleetbench TEST help`)"
        };
        return Err(UsageError(format!(
            "{name} does not take --{option}: {file}"
        )));
    }
    if unused.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![format!(
        "{name} does not use {} (accepted, as sysbench accepts its general options with every command, so that one option line serves prepare, run and cleanup)",
        unused.join(", ")
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every option clap knows, by id (not the positional words).
    fn every_option() -> Vec<String> {
        RawArgs::command()
            .get_arguments()
            .filter(|a| !a.is_positional())
            .map(|a| a.get_id().to_string())
            .collect()
    }

    /// A command line of `cmd` (words that name it).
    fn words_of(cmd: Cmd) -> &'static [&'static str] {
        match cmd {
            Cmd::Run => &["oltp_read_only", "run"],
            Cmd::Prepare => &["oltp_read_only", "prepare"],
            Cmd::Cleanup => &["oltp_read_only", "cleanup"],
            Cmd::Prewarm => &["oltp_read_only", "prewarm"],
            Cmd::Check => &["tpcc", "check"],
            Cmd::ScriptCommand => &[],
            Cmd::Compare => &["compare", "a.json", "b.json"],
            Cmd::Report => &["report", "a.json"],
            Cmd::ReportMany => &["report", "a.json", "b.json"],
            Cmd::ScenarioRun => &["scenario", "run", "s.toml"],
            Cmd::ScenarioCleanup => &["scenario", "cleanup", "s.toml"],
            Cmd::RunsList => &["runs", "list"],
            Cmd::RunsShow => &["runs", "show", "last"],
            Cmd::RunsCompare => &["runs", "compare", "last", "last~1"],
            Cmd::RunsTrend => &["runs", "trend"],
            Cmd::RunsImport => &["runs", "import", "a.json"],
            Cmd::RunsExport => &["runs", "export", "last"],
            Cmd::RunsRm => &["runs", "rm", "last"],
            Cmd::RunsTag => &["runs", "tag", "last", "a=b"],
            Cmd::Serve => &["serve"],
            Cmd::Agents => &["agents"],
            Cmd::Stop => &["stop"],
        }
    }

    #[test]
    fn every_option_is_honoured_somewhere_and_every_name_is_an_option() {
        let all = every_option();
        for id in &all {
            assert!(
                ALL.iter().any(|c| honoured(*c).contains(&id.as_str())),
                "--{id} is honoured by no command: add it to the commands that use it"
            );
        }
        for c in ALL {
            for id in honoured(c) {
                assert!(
                    all.iter().any(|a| a == id),
                    "{c:?} honours {id}, which is no option"
                );
            }
        }
    }

    #[test]
    fn every_command_refuses_in_one_line_what_it_does_not_honour() {
        for c in ALL.into_iter().filter(|c| *c != Cmd::ScriptCommand) {
            let honours = honoured(c);
            for id in every_option() {
                // The option given with a value that parses for every option of its kind.
                let arg = RawArgs::command()
                    .get_arguments()
                    .find(|a| a.get_id() == id.as_str())
                    .map(|a| match a.get_action().takes_values() {
                        true if a.get_num_args().is_some_and(|n| n.min_values() == 0) => long(&id),
                        true => format!("{}=1", long(&id)),
                        false => long(&id),
                    })
                    .unwrap();
                let mut line = vec!["fleetbench".to_string()];
                match (id.as_str(), words_of(c)) {
                    // sysbench 0.4's spelling of a test's line: --test=NAME COMMAND.
                    ("test", [test, command])
                        if honours.contains(&"test") && c != Cmd::RunsList =>
                    {
                        line.extend([format!("--test={test}"), command.to_string()]);
                    }
                    (_, words) => {
                        line.extend(words.iter().map(|w| w.to_string()));
                        line.push(arg.clone());
                    }
                }
                // Options that need a partner (clap's `requires`).
                match id.as_str() {
                    "tls_cert" => line.extend(["--tls-key=k".into(), "--tls-ca=c".into()]),
                    "tls_key" => line.extend(["--tls-cert=k".into(), "--tls-ca=c".into()]),
                    _ => {}
                }
                let raw = crate::cli::parse(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
                assert_eq!(Cmd::of(&raw), Some(c), "{line:?}");
                let r = check(&raw);
                let partners_ok = |e: &UsageError| {
                    // A partner may be the first refused (tls_cert needs tls_key and tls_ca).
                    e.0.contains("--tls-")
                };
                if honours.contains(&id.as_str()) {
                    match r {
                        Ok(notes) => assert!(notes.is_empty(), "{line:?}: {notes:?}"),
                        Err(e) => assert!(partners_ok(&e), "{line:?} refused: {}", e.0),
                    }
                } else if is_table_job(c) && SYSBENCH_GENERAL.contains(&id.as_str()) {
                    let notes = r.unwrap_or_else(|e| panic!("{line:?} refused: {}", e.0));
                    assert_eq!(notes.len(), 1, "{line:?}");
                    assert!(
                        notes[0].contains(&format!("does not use {}", long(&id))),
                        "{notes:?}"
                    );
                } else {
                    let e = r.expect_err(&format!("{line:?} is accepted"));
                    assert!(!e.0.contains('\n'), "{}", e.0);
                    let named = if id.starts_with("tls_") {
                        "--tls-".to_string()
                    } else {
                        long(&id)
                    };
                    assert!(
                        e.0.contains(&format!(" does not take {named}")),
                        "{line:?}: {}",
                        e.0
                    );
                }
            }
        }
    }

    #[test]
    fn refusals_say_which_command_takes_the_option() {
        let e = |args: &[&str]| {
            let raw = crate::cli::parse(std::iter::once("fleetbench").chain(args.iter().copied()))
                .unwrap();
            check(&raw).unwrap_err().0
        };
        assert_eq!(
            e(&["compare", "a.json", "b.json", "--threads=4"]),
            "compare does not take --threads: an option of `TEST run`, `TEST prepare`, `TEST cleanup`"
        );
        assert_eq!(
            e(&["oltp_read_only", "prepare", "--json=x.json"]),
            "prepare does not take --json: an option of `TEST run`, `compare`, `scenario run`"
        );
        assert_eq!(
            e(&["scenario", "run", "s.toml", "--percentile=99"]),
            "scenario run does not take --percentile: the scenario file sets it; an option of `TEST run`"
        );
        assert_eq!(
            e(&["compare", "a.json", "b.json", "--tables=4"]),
            "compare does not take --tables: an option of the tests (`fleetbench TEST help`)"
        );
        assert_eq!(
            e(&["report", "a.json", "--csv=x.csv"]),
            "report does not take --csv: an option of `TEST run`, `compare`, `scenario run`"
        );
        // A table job accepts sysbench's general options it does not use, saying so.
        let raw = crate::cli::parse([
            "fleetbench",
            "oltp_read_only",
            "--time=60",
            "--report-interval=10",
            "--threads=8",
            "cleanup",
        ])
        .unwrap();
        assert_eq!(
            check(&raw).unwrap(),
            [
                "cleanup does not use --time, --report-interval (accepted, as sysbench accepts its general options with every command, so that one option line serves prepare, run and cleanup)"
            ]
        );
    }
}
