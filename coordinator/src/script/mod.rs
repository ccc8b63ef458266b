//! `fleetbench SCRIPT [options] COMMAND`: finding a sysbench Lua script on the command
//! line (a path, or NAME.lua in the current directory), reading it with the modules beside
//! it, loading it once here to learn its options and commands, and taking its options out
//! of the command line before the built-in ones are parsed. Errors in the script (a
//! missing file, a syntax error) are the user's to fix: one line, exit 2.

use std::cell::RefCell;
use std::ffi::OsString;
use std::rc::Rc;

use fleetbench_model::workloads::script::files::{self, Files};
use fleetbench_model::workloads::script::options::{self as sopts, OptKind, ScriptOption};
use fleetbench_script::state::{self, Commands, StateEnv};

use crate::error::UsageError;
pub use args::ScriptArgs;

pub mod args;

/// What the command line turned out to be.
pub enum Taken {
    /// No script: the arguments as they were.
    NoScript(Vec<OsString>),
    /// A script run: the arguments left for the built-in options, and the script.
    Script(Vec<OsString>, Box<ScriptArgs>),
    /// `SCRIPT help`: its text.
    Help(String),
}

/// Built-in option names that take a value in the next argument when given without `=`
/// are not told apart here; a word right after an option without `=` is taken as its
/// value unless it names a `.lua` file.
fn is_value_of(prev: Option<&str>) -> bool {
    prev.is_some_and(|p| p.starts_with("--") && !p.contains('=') && !is_flag(p))
}

/// Built-in options that take no value.
fn is_flag(arg: &str) -> bool {
    matches!(
        arg,
        "--hlog-per-agent" | "--force" | "--histogram" | "--debug" | "--validate" | "--rand-init"
    )
}

const COMMAND_WORDS: [&str; 6] = ["run", "prepare", "cleanup", "prewarm", "help", "check"];

/// The position of the script's word (or of `--test=SCRIPT`) and its path, if the
/// command line names a script file.
fn find(args: &[OsString]) -> Option<(usize, std::path::PathBuf, bool)> {
    let mut prev: Option<&str> = None;
    for (i, a) in args.iter().enumerate().skip(1) {
        let Some(s) = a.to_str() else {
            prev = None;
            continue;
        };
        if let Some(t) = s.strip_prefix("--test=") {
            return files::resolve(t).map(|p| (i, p, true));
        }
        if s.starts_with('-') {
            prev = Some(s);
            continue;
        }
        if s.ends_with(".lua") || !is_value_of(prev) {
            // The first word is the test's: a script, or a built-in test.
            if COMMAND_WORDS.contains(&s) {
                return None;
            }
            return files::resolve(s).map(|p| (i, p, false));
        }
        prev = Some(s);
    }
    None
}

/// The first word after position `after` that is not an option or an option's value.
fn command_word(args: &[OsString], after: usize, test_flag: bool) -> Option<(usize, String)> {
    let mut prev: Option<&str> = None;
    for (i, a) in args.iter().enumerate().skip(1) {
        let Some(s) = a.to_str() else { continue };
        if (!test_flag && i <= after) || (test_flag && i == after) {
            prev = None;
            continue;
        }
        if s.starts_with('-') {
            prev = Some(s);
            continue;
        }
        if !is_value_of(prev) {
            return Some((i, s.to_string()));
        }
        prev = Some(s);
    }
    None
}

/// Loads the script in a state of its own (its output dropped): its options and
/// commands.
fn discover(files: &Files, command: &str) -> Result<(Vec<ScriptOption>, Commands), UsageError> {
    let sink = Rc::new(RefCell::new(String::new()));
    let out = sink.clone();
    let env = StateEnv {
        files,
        command,
        tid: 0,
        opt: &[],
        output: Rc::new(move |s: &str| out.borrow_mut().push_str(s)),
        driver: "mysql",
        fast_calls: false,
        argv: &[],
    };
    let failed =
        |e: fleetbench_script::ScriptError| UsageError(format!("{}: {}", files.path, e.message));
    let lua = state::new_state(&env, |_, _| Ok(())).map_err(failed)?;
    state::run_script(&lua, files).map_err(|e| {
        // The script's own words for a missing command (oltp_common's check) stand as they are.
        UsageError(format!("{}: {}", files.path, e.message))
    })?;
    let declared = state::declared_options(&lua).map_err(failed)?;
    Ok((declared, state::commands(&lua)))
}

/// Whether `name` (canonical) is one of fleetbench's own options a script run takes:
/// the command line's (threads, time, ...) and the server, login, SQL and random-number
/// groups.
fn built_in(name: &str) -> bool {
    use clap::CommandFactory;
    use fleetbench_model::options::Declared;
    let cmd = crate::cli::RawArgs::command();
    let clap_knows = cmd.get_arguments().any(|a| {
        a.get_long()
            .into_iter()
            .chain(a.get_all_aliases().into_iter().flatten())
            .any(|l| sopts::canonical(l) == name)
    });
    let groups: [&[fleetbench_model::options::OptionDef]; 4] = [
        fleetbench_model::workloads::server::ServerOptions::OPTIONS,
        fleetbench_model::workloads::server::TargetOptions::OPTIONS,
        fleetbench_model::workloads::oltp::OltpDb::OPTIONS,
        fleetbench_model::rand::Distribution::OPTIONS,
    ];
    clap_knows
        || groups.iter().any(|g| {
            g.iter().any(|o| {
                std::iter::once(&o.name)
                    .chain(o.aliases)
                    .any(|n| sopts::canonical(n) == name)
            })
        })
}

/// The type of an undeclared (0.5) option's value: a number when it reads as one.
fn guess_kind(value: &str) -> OptKind {
    if value.parse::<i64>().is_ok() {
        OptKind::Int
    } else if value.parse::<f64>().is_ok() {
        OptKind::Double
    } else {
        OptKind::String
    }
}

/// Finds a script on the command line and takes its options out.
pub fn take(args: Vec<OsString>) -> Result<Taken, UsageError> {
    let Some((at, path, test_flag)) = find(&args) else {
        return Ok(Taken::NoScript(args));
    };
    let files = Files::read(&path).map_err(|e| UsageError(e.to_string()))?;
    let command = command_word(&args, at, test_flag);
    let command_name = command.as_ref().map_or("", |(_, c)| c.as_str()).to_string();
    let (declared, commands) = discover(
        &files,
        if command_name.is_empty() {
            "help"
        } else {
            &command_name
        },
    )?;
    let Some((_, command)) = command else {
        return Err(UsageError(format!(
            "{} needs a command: {}",
            files.path,
            commands.names().join(", ")
        )));
    };
    if command == "help" {
        return Ok(Taken::Help(sopts::help(&files.main, &declared)));
    }
    // Its options out of the command line; the rest is for the built-in ones.
    let mut rest = Vec::with_capacity(args.len());
    let mut given = Vec::new();
    let mut undeclared: Vec<ScriptOption> = Vec::new();
    let mut it = args.into_iter().peekable();
    rest.extend(it.next());
    while let Some(a) = it.next() {
        let Some(s) = a.to_str().map(str::to_string) else {
            rest.push(a);
            continue;
        };
        let Some(flag) = s.strip_prefix("--") else {
            rest.push(a);
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (sopts::canonical(n), Some(v.to_string())),
            None => (sopts::canonical(flag), None),
        };
        let decl = match declared.iter().find(|d| d.name == name) {
            Some(d) => d.clone(),
            // A 0.5 script declares nothing: every option that is not fleetbench's own
            // becomes one of its globals (`--oltp-table-size=5` is `oltp_table_size`).
            None if declared.is_empty() && !built_in(&name) => ScriptOption {
                name: name.clone(),
                description: String::new(),
                kind: OptKind::String,
                default: None,
            },
            None => {
                rest.push(a);
                continue;
            }
        };
        let value = match value {
            Some(v) => v,
            None if decl.kind == OptKind::Bool => "on".into(),
            None => match it.next_if(|n| !n.to_string_lossy().starts_with("--")) {
                Some(v) => v.to_string_lossy().into_owned(),
                None => {
                    return Err(UsageError(format!(
                        "a value is required for '--{name}' but none was supplied"
                    )));
                }
            },
        };
        if declared.is_empty() && !undeclared.iter().any(|d: &ScriptOption| d.name == name) {
            undeclared.push(ScriptOption {
                kind: guess_kind(&value),
                ..decl
            });
        }
        given.push((name, value));
    }
    let declared = if declared.is_empty() {
        undeclared
    } else {
        declared
    };
    Ok(Taken::Script(
        rest,
        Box::new(ScriptArgs {
            files,
            declared,
            given,
            command,
            commands,
        }),
    ))
}

/// The script's report hooks for a run, on the coordinator: None when the plan is not
/// a script run or the script sets neither hook. Their output goes where the report goes.
pub fn hooks(plan: &crate::plan::Plan) -> Result<Option<Hooks>, UsageError> {
    let crate::plan::Workload::Script(s) = &plan.workload else {
        return Ok(None);
    };
    let host = fleetbench_script::hooks::Host::start(
        s.files.clone(),
        s.command.clone(),
        s.opt.clone(),
        s.argv.clone(),
        plan.percentiles.first().copied().unwrap_or(95.0),
        crate::report::stdout::script_output,
    )
    .map_err(|e| UsageError(format!("{}: {}", s.files.path, e.message)))?;
    Ok(host.map(|h| Hooks(std::sync::Mutex::new(h))))
}

/// A script's report hooks (`sysbench.hooks.report_intermediate` and
/// `report_cumulative`), called with the figures merged over every agent.
pub struct Hooks(std::sync::Mutex<fleetbench_script::hooks::Host>);

impl Hooks {
    /// The run is over: what `sysbench.report_json` left open is closed.
    pub fn finish(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).finish();
    }

    /// Whether the script replaces the interval lines.
    pub fn intermediate(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .intermediate
    }

    /// Calls `report_intermediate` with one merged interval; false when the script sets
    /// no such hook (the usual line is printed then).
    pub fn interval(&self, iv: &crate::merge::MergedInterval, percentile: f64) -> bool {
        use fleetbench_script::hooks::{Stat, Which};
        let host = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !host.intermediate {
            return false;
        }
        let stat = Stat {
            threads_running: iv.threads,
            time_interval: iv.duration.as_secs_f64(),
            time_total: iv.label_secs() as f64,
            latency_pct: iv.latency.requested_ms(percentile) / 1000.0,
            events: iv.events,
            reads: iv.db.reads,
            writes: iv.db.writes,
            other: iv.db.others,
            errors: iv.db.ignored_errors,
            reconnects: iv.db.reconnects,
            queue_length: iv.open.as_ref().map_or(0, |o| o.queue_length),
            concurrency: u64::from(iv.threads),
            ..Stat::default()
        };
        if let Err(e) = host.call(Which::Intermediate, stat) {
            eprintln!(
                "warning: the script's report_intermediate hook failed: {}",
                e.message
            );
        }
        true
    }

    /// Calls `report_cumulative` with the whole run's merged figures; false when the
    /// script sets no such hook. As in sysbench, the hook's output is the end report: the
    /// usual one is printed only when this is false.
    pub fn cumulative(&self, r: &crate::merge::RunResult, percentile: f64) -> bool {
        use fleetbench_script::hooks::{Stat, Which};
        let host = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !host.cumulative {
            return false;
        }
        let (lat, db) = (r.latency(), r.db());
        let stat = Stat {
            // Every thread has stopped by the end report (sysbench shows 0 too).
            threads_running: 0,
            time_interval: r.total_time().as_secs_f64(),
            time_total: r.total_time().as_secs_f64(),
            latency_pct: lat.requested_ms(percentile) / 1000.0,
            events: r.events(),
            reads: db.reads,
            writes: db.writes,
            other: db.others,
            errors: db.ignored_errors,
            reconnects: db.reconnects,
            latency_min: lat.min_ms() / 1000.0,
            latency_max: lat.max_ms() / 1000.0,
            latency_avg: lat.avg_ms() / 1000.0,
            latency_sum: lat.sum_ms() / 1000.0,
            ..Stat::default()
        };
        if let Err(e) = host.call(Which::Cumulative, stat) {
            eprintln!(
                "warning: the script's report_cumulative hook failed: {}",
                e.message
            );
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_script_is_found_in_the_test_position_only() {
        let dir = std::env::temp_dir().join(format!("fb-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("s.lua");
        std::fs::write(&script, "function event() end").unwrap();
        let p = script.to_string_lossy().into_owned();
        let found = find(&os(&["fleetbench", "--threads", "4", &p, "run"])).unwrap();
        assert_eq!(found.0, 3);
        let found = find(&os(&["fleetbench", &format!("--test={p}"), "run"])).unwrap();
        assert_eq!((found.0, found.2), (1, true));
        assert!(find(&os(&["fleetbench", "oltp_read_write", "run"])).is_none());
        assert!(find(&os(&["fleetbench", "/no/such.lua", "run"])).is_none());
        assert_eq!(
            command_word(&os(&["fleetbench", &p, "--x", "1", "run"]), 1, false).map(|c| c.1),
            Some("run".to_string())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
