//! The plan of a script run: its options (the script's own, typed by its declarations,
//! and the built-in ones a script sees in `sysbench.opt`), its command and its targets.

use fleetbench_model::options::{Declared, OptionDef};
use fleetbench_model::rand::Distribution;
use fleetbench_model::run;
use fleetbench_model::workloads::oltp::OltpDb;
use fleetbench_model::workloads::script::{self, OptKind, OptValue, ScriptConfig, options};
use fleetbench_model::workloads::server::Driver;
use fleetbench_model::workloads::server::{ServerOptions, TargetOptions};

use super::model::{Command, Plan, PlanError, Workload};
use super::workloads::{own_options, targets_of};
use crate::cli::RawArgs;
use crate::script::ScriptArgs;

/// The built-in option groups a script run takes: how to reach and log in to the server,
/// the SQL settings and the random numbers. Others (OLTP's tables, fileio's files) are not
/// the script's, and are refused as sysbench refuses an option it does not know.
const GROUPS: [&[OptionDef]; 4] = [
    ServerOptions::OPTIONS,
    TargetOptions::OPTIONS,
    OltpDb::OPTIONS,
    Distribution::OPTIONS,
];

/// The workload and command of a script run.
pub(super) fn workload(raw: &RawArgs, sa: &ScriptArgs) -> Result<(Workload, Command), PlanError> {
    let script = &sa.files.main;
    if let Some((name, _)) = raw
        .options
        .iter()
        .find(|(n, _)| !GROUPS.iter().any(|g| g.iter().any(|o| o.name == n)))
    {
        return Err(PlanError::Script(format!(
            "unknown option '--{name}': {script} does not declare it (`fleetbench {script} help` lists its options)"
        )));
    }
    if raw.table_map.is_some() {
        return Err(PlanError::Script(format!(
            "--table-map is for the built-in OLTP tests: {script} chooses its own tables"
        )));
    }
    let values =
        options::resolve(&sa.declared, &sa.given).map_err(|e| PlanError::Script(e.to_string()))?;
    let (command, parallel) = match (sa.command.as_str(), sa.commands.find(&sa.command)) {
        ("run", Some(_)) => (Command::Run, true),
        ("run", None) => {
            return Err(PlanError::Script(format!(
                "{script} defines no event function: it cannot run (its commands: {})",
                sa.commands.names().join(", ")
            )));
        }
        (_, Some(parallel)) => (Command::Script, parallel),
        (other, None) => {
            return Err(PlanError::Script(format!(
                "{script} does not define the command '{other}' (its commands: {})",
                sa.commands.names().join(", ")
            )));
        }
    };
    let server = ServerOptions::resolve("script", own_options(raw, ServerOptions::OPTIONS))?;
    let db = OltpDb::resolve("script", own_options(raw, OltpDb::OPTIONS))?;
    let distribution = Distribution::resolve("script", own_options(raw, Distribution::OPTIONS))?;
    let targets = targets_of(raw, &server)?;
    Ok((
        Workload::Script(Box::new(ScriptConfig {
            name: sa.files.stem().to_string(),
            files: sa.files.clone(),
            command: sa.command.clone(),
            parallel,
            opt: values,
            targets,
            server,
            db,
            distribution,
            argv: Vec::new(),
        })),
        command,
    ))
}

/// A built-in option as `sysbench.opt` shows it: name, kind, value.
type Opt = (String, OptKind, Option<String>);

fn int(n: &str, v: String) -> Opt {
    (n.to_string(), OptKind::Int, Some(v))
}

fn text(n: &str, v: String) -> Opt {
    (n.to_string(), OptKind::String, Some(v))
}

fn flag(n: &str, on: bool) -> Opt {
    let v = if on { "on" } else { "off" };
    (n.to_string(), OptKind::Bool, Some(v.to_string()))
}

fn list(n: &str, v: String) -> Opt {
    (n.to_string(), OptKind::List, Some(v))
}

/// The declared default of the option `name` of `defs` (a programming error if it has none).
fn declared(defs: &[OptionDef], name: &str) -> String {
    let def = defs.iter().find(|d| d.name == name);
    def.unwrap_or_else(|| panic!("no option {name} declared"))
        .default
        .to_string()
}

/// The last value given of one of fleetbench's own options (any of `names`), else `or`.
fn last(raw: &RawArgs, names: &[&str], or: &str) -> String {
    raw.options
        .iter()
        .rev()
        .find(|(n, _)| names.contains(&n.as_str()))
        .map_or(or.to_string(), |(_, v)| v.clone())
}

/// Adds the built-in options' values to `sysbench.opt` once the plan knows them (the
/// script's own options of the same name stay).
pub(super) fn add_built_ins(plan: &mut Plan, raw: &RawArgs) {
    let run = run_opts(plan, raw);
    let Workload::Script(s) = &mut plan.workload else {
        return;
    };
    let mut built_in = run;
    built_in.extend(connection_opts(s, raw));
    built_in.extend(fixed_opts(raw));
    built_in.extend(distribution_opts(raw));
    debug_assert!(
        built_in
            .iter()
            .all(|(n, _, _)| script::BUILT_IN.contains(&n.as_str()))
    );
    for (name, kind, text) in built_in {
        if s.opt.iter().any(|o| o.name == name) {
            continue;
        }
        s.opt.push(OptValue { name, kind, text });
    }
}

/// The run's own options as their declarations name them ([`run::RUN_OPTIONS`]), then
/// sysbench 0.5's names of those that had one, and the random numbers' type.
fn run_opts(plan: &Plan, raw: &RawArgs) -> Vec<Opt> {
    let secs = |d: Option<std::time::Duration>| d.map_or(0, |d| d.as_secs()).to_string();
    let Workload::Script(s) = &plan.workload else {
        return Vec::new();
    };
    // The plan's value of each run option, as sysbench.opt shows it.
    let value = |name: &str| match name {
        // --threads as given, also for a command that runs in one thread (bulk_insert.lua's
        // prepare makes one table per thread of the run to come, as in sysbench).
        "threads" => super::values::num(&raw.threads, "threads", plan.threads)
            .unwrap_or(plan.threads)
            .to_string(),
        "time" => secs(plan.time),
        "events" => plan.events.unwrap_or(0).to_string(),
        "rate" => (plan.rate as u64).to_string(),
        "report-interval" => secs(plan.report_interval),
        "percentile" => plan
            .percentiles
            .first()
            .map_or(run::default_of("percentile").into(), |p| p.to_string()),
        "rand-seed" => plan.seed.to_string(),
        "warmup-time" => secs(Some(plan.warmup)),
        other => run::default_of(other).to_string(),
    };
    let mut out: Vec<Opt> = run::RUN_OPTIONS
        .iter()
        .map(|def| int(&run::script_name(def.name), value(def.name)))
        .collect();
    // sysbench 1.0 keeps 0.5's names beside them: their values when the command line
    // spells them so, 0.5's defaults otherwise (no time limit: max_time 0).
    for def in run::RUN_OPTIONS {
        for old in def.aliases {
            let v = match (raw.legacy, def.name) {
                (true, _) => value(def.name),
                (false, "time") => "0".into(),
                (false, _) => def.default.into(),
            };
            out.push(int(&run::script_name(old), v));
        }
    }
    out.push(text("rand_type", s.distribution.name().into()));
    out
}

/// How the script reaches its database: the driver, and each driver's connection options.
fn connection_opts(s: &ScriptConfig, raw: &RawArgs) -> Vec<Opt> {
    use fleetbench_model::workloads::server::Target;
    let t = s.targets.first().cloned().unwrap_or_default();
    let ps = if s.db.prepared { "auto" } else { "disable" };
    // The connection options of the target's own driver carry its values; the other
    // driver's keep their declared defaults, as sysbench.opt shows them in sysbench.
    let idle = |driver: &str| Target {
        host: declared(TargetOptions::OPTIONS, &format!("{driver}-host")),
        port: declared(TargetOptions::OPTIONS, &format!("{driver}-port"))
            .parse()
            .unwrap_or_default(),
        user: declared(TargetOptions::OPTIONS, &format!("{driver}-user")),
        // --mysql-db's and --pgsql-db's default is the test's own: sysbench's scripts use sbtest.
        database: "sbtest".into(),
        ..Default::default()
    };
    let (my, pg) = match t.driver {
        Driver::Mysql => (t.clone(), idle("pgsql")),
        Driver::Pgsql => (idle("mysql"), t.clone()),
    };
    // A MySQL list option over the run's MySQL targets (the default's one when there are none).
    let my_list = |f: &dyn Fn(&Target) -> Option<String>, none: &str| {
        let items: Vec<String> = s
            .targets
            .iter()
            .filter(|t| t.driver == Driver::Mysql)
            .filter_map(f)
            .collect();
        if items.is_empty() {
            none.to_string()
        } else {
            items.join(",")
        }
    };
    vec![
        text("db_driver", t.driver.name().into()),
        text("db_ps_mode", ps.into()),
        // Lists in sysbench (--mysql-host=a,b): the MySQL targets' hosts, ports, sockets.
        list("mysql_host", my_list(&|t| Some(t.host.clone()), &my.host)),
        list(
            "mysql_port",
            my_list(&|t| Some(t.port.to_string()), &my.port.to_string()),
        ),
        list("mysql_socket", my_list(&|t| t.socket.clone(), "")),
        text("mysql_user", my.user.clone()),
        text("mysql_password", my.password.clone()),
        text("mysql_db", my.database.clone()),
        list(
            "mysql_ignore_errors",
            last(
                raw,
                &["mysql-ignore-errors"],
                &declared(OltpDb::OPTIONS, "mysql-ignore-errors"),
            ),
        ),
        text("mysql_storage_engine", s.server.engine.clone()),
        // sysbench 0.5's MySQL options, globals its tests/db scripts read.
        text("mysql_table_engine", s.server.engine.clone()),
        int("myisam_max_rows", "1000000".into()),
        text("mysql_engine_trx", "auto".into()),
        text("pgsql_host", pg.host.clone()),
        int("pgsql_port", pg.port.to_string()),
        text("pgsql_user", pg.user.clone()),
        text("pgsql_password", pg.password.clone()),
        text("pgsql_db", pg.database.clone()),
    ]
}

/// What sysbench shows for options fleetbench has no use for, and the switches.
fn fixed_opts(raw: &RawArgs) -> Vec<Opt> {
    // --mysql-ssl: on or off as sysbench 1.0 shows it.
    let ssl_on = matches!(
        last(raw, &["mysql-ssl"], "off").as_str(),
        "on" | "true" | "yes" | "1"
    );
    vec![
        flag("histogram", raw.histogram.is_some()),
        int("verbosity", raw.verbosity.unwrap_or(3).to_string()),
        flag("debug", false),
        flag("validate", false),
        text("forced_shutdown", "off".into()),
        flag("help", false),
        int("thread_stack_size", "65536".into()),
        list("report_checkpoints", String::new()),
        flag("mysql_compression", false),
        flag("mysql_dry_run", false),
        text("mysql_ssl_cipher", String::new()),
        flag("db_debug", false),
        flag("mysql_debug", false),
        flag("version", false),
        flag("mysql_ssl", ssl_on),
    ]
}

/// The random numbers' parameters (--rand-zipf-exp and the rest), as last given.
fn distribution_opts(raw: &RawArgs) -> Vec<Opt> {
    Distribution::OPTIONS
        .iter()
        .filter(|d| d.name != "rand-type")
        .map(|def| {
            let kind = match def.kind {
                fleetbench_model::options::Kind::Count => OptKind::Int,
                _ => OptKind::Double,
            };
            let names: Vec<&str> = std::iter::once(def.name)
                .chain(def.aliases.iter().copied())
                .collect();
            (
                def.name.replace('-', "_"),
                kind,
                Some(last(raw, &names, def.default)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sysbench.opt`'s values of a script planned with these arguments.
    fn opts(args: &[&str]) -> Vec<OptValue> {
        let dir = std::env::temp_dir().join(format!("fb-plan-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.lua");
        std::fs::write(&file, "function event() end\n").unwrap();
        let mut argv = vec!["fleetbench", file.to_str().unwrap()];
        argv.extend_from_slice(args);
        argv.push("run");
        let argv = argv.into_iter().map(Into::into).collect();
        let Ok(crate::commands::Parsed::Args(raw)) = crate::commands::parse(argv) else {
            panic!("not a command line to run")
        };
        let plan = crate::plan::build(&raw).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let Workload::Script(s) = plan.workload else {
            panic!("not a script plan")
        };
        s.opt
    }

    fn value(opts: &[OptValue], name: &str) -> String {
        let o = opts.iter().find(|o| o.name == name);
        o.unwrap_or_else(|| panic!("no {name}"))
            .text
            .clone()
            .unwrap()
    }

    #[test]
    fn the_other_drivers_options_show_their_declared_defaults() {
        let my = opts(&["--mysql-port=3307", "--mysql-user=u"]);
        assert_eq!(value(&my, "mysql_port"), "3307");
        assert_eq!(value(&my, "mysql_user"), "u");
        assert_eq!(
            (value(&my, "pgsql_host"), value(&my, "pgsql_port")),
            ("localhost".into(), "5432".into())
        );
        assert_eq!(value(&my, "pgsql_user"), "sbtest");
        assert_eq!(value(&my, "mysql_ignore_errors"), "1213,1020,1205");
        let pg = opts(&["--db-driver=pgsql", "--pgsql-port=6543"]);
        assert_eq!(value(&pg, "pgsql_port"), "6543");
        assert_eq!(
            (value(&pg, "mysql_host"), value(&pg, "mysql_port")),
            ("localhost".into(), "3306".into())
        );
        assert_eq!(value(&pg, "mysql_db"), "sbtest");
    }
}
