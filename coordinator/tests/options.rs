//! Never a silently ignored option: every option clap knows (walked from
//! `RawArgs::command()`, so a new one is covered without touching this file), given to
//! every command of the real `fleetbench` binary, is either one the command honours
//! (commands::honoured's table, whose unit tests check the gate against it) or refused in
//! one line on stderr naming the command and the option, with exit code 2, before anything
//! runs and without a file written.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;
use fleetbench::cli::RawArgs;
use fleetbench::commands::honoured::{ALL, Cmd, SYSBENCH_GENERAL, honoured, long};

/// A scratch directory of this test process, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        let p =
            std::env::temp_dir().join(format!("fleetbench-options-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Lua script in `dir` with a command of its own (`hello`) and no options of its own.
fn script(dir: &Path) -> String {
    let path = dir.join("hello.lua");
    std::fs::write(
        &path,
        "function hello() print('hello') end\n\
         sysbench.cmdline.commands = { hello = {hello} }\n\
         function event() end\n",
    )
    .unwrap();
    path.display().to_string()
}

/// Words that name `cmd` (files that need not exist but the script in `dir`: the refusal
/// comes first).
fn words_of(cmd: Cmd, dir: &Path) -> Vec<String> {
    let w: &[&str] = match cmd {
        Cmd::Run => &["oltp_read_only", "run"],
        Cmd::Prepare => &["oltp_read_only", "prepare"],
        Cmd::Cleanup => &["oltp_read_only", "cleanup"],
        Cmd::Prewarm => &["oltp_read_only", "prewarm"],
        Cmd::Check => &["tpcc", "check"],
        Cmd::ScriptCommand => return vec![script(dir), "hello".into()],
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
    };
    w.iter().map(|s| s.to_string()).collect()
}

/// The option `id` on a command line, with a value where it takes one (a path in `dir`
/// for the options that name files), and the partners clap requires it with.
fn option_args(arg: &clap::Arg, dir: &Path) -> Vec<String> {
    let id = arg.get_id().as_str();
    let optional_value = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
    let mut v = vec![if !arg.get_action().takes_values() || optional_value {
        long(id)
    } else {
        format!("{}={}", long(id), dir.join(format!("{id}.out")).display())
    }];
    match id {
        "tls_cert" => v.extend(["--tls-key=k".into(), "--tls-ca=c".into()]),
        "tls_key" => v.extend(["--tls-cert=c".into(), "--tls-ca=c".into()]),
        _ => {}
    }
    v
}

#[test]
fn every_option_of_every_command_is_honoured_or_refused_in_one_line() {
    let dir = Scratch::new("walk");
    let scripts = Scratch::new("script");
    let options: Vec<clap::Arg> = RawArgs::command()
        .get_arguments()
        .filter(|a| !a.is_positional())
        .cloned()
        .collect();
    // The walk found clap's options, not an empty list.
    assert!(options.len() > 40, "{} options", options.len());
    let mut refused = 0;
    for cmd in ALL {
        let honours = honoured(cmd);
        let table_job = matches!(
            cmd,
            Cmd::Prepare | Cmd::Cleanup | Cmd::Prewarm | Cmd::Check | Cmd::ScriptCommand
        );
        for arg in &options {
            let id = arg.get_id().as_str();
            // Honoured ones would run the command (unit tests check the gate passes them);
            // a table job notes sysbench's general options it does not use.
            if honours.contains(&id) || (table_job && SYSBENCH_GENERAL.contains(&id)) {
                continue;
            }
            let mut line = words_of(cmd, &scripts.0);
            line.extend(option_args(arg, &dir.0));
            let out = Command::new(env!("CARGO_BIN_EXE_fleetbench"))
                .args(&line)
                .env("FLEETBENCH_CATALOG", "off")
                .env_remove("FLEETBENCH_TOKEN")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{line:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{line:?}: {err}");
            let named = if id.starts_with("tls_") {
                "--tls-".to_string()
            } else {
                long(id)
            };
            assert!(
                err.contains(" does not take ") && err.contains(&named),
                "{line:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "{line:?}");
            refused += 1;
        }
    }
    // Nothing was written where an output option pointed.
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);
    assert!(refused > 500, "{refused} refusals");
}

#[test]
fn a_table_job_says_which_general_options_it_does_not_use() {
    // fileio's cleanup (nothing to remove in an empty directory) given run options, as a
    // sysbench option line has them: it runs, and says which it did not use.
    let dir = Scratch::new("fileio");
    let out = Command::new(env!("CARGO_BIN_EXE_fleetbench"))
        .args(["fileio", "--time=60", "--report-interval=10", "cleanup"])
        .current_dir(&dir.0)
        .env("FLEETBENCH_CATALOG", "off")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with(
            "note: cleanup does not use --time, --report-interval (accepted, as sysbench accepts"
        ),
        "{err}"
    );
}

#[test]
fn pgbench_takes_its_own_options_and_refuses_the_others_in_one_line() {
    // `fleetbench pgbench` reads pgbench's command line (plan/pgbench.rs), not clap's: an
    // option of the other commands is either one of pgbench's own (then `--version`
    // shows the version, and nothing runs) or refused in one line.
    let mut own = Vec::new();
    for arg in RawArgs::command()
        .get_arguments()
        .filter(|a| !a.is_positional())
    {
        let id = arg.get_id().as_str();
        let line = [
            "pgbench".to_string(),
            format!("{}=1", long(id)),
            "--version".into(),
        ];
        let out = Command::new(env!("CARGO_BIN_EXE_fleetbench"))
            .args(&line)
            .env("FLEETBENCH_CATALOG", "off")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {
                assert!(
                    String::from_utf8_lossy(&out.stdout).starts_with("fleetbench pgbench"),
                    "{line:?}"
                );
                own.push(id.to_string());
            }
            Some(2) => assert_eq!(err.lines().count(), 1, "{line:?}: {err}"),
            other => panic!("{line:?}: exit {other:?}: {err}"),
        }
    }
    // pgbench's own long options that share a name with the others' (its -R, --agents, ...).
    assert!(own.contains(&"agents".to_string()), "{own:?}");
    assert!(own.len() < 10, "{own:?}");
}
