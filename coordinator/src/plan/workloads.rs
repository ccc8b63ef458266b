//! The workloads a plan can run, from their options: the names sysbench 0.4 and 0.5 gave
//! the tests, OLTP's options and targets, TPC-C's.

use fleetbench_model::options::Declared;
use fleetbench_model::options::OptionDef;
use fleetbench_model::rand::Distribution;
use fleetbench_model::spec::TableSet;
use fleetbench_model::workloads::oltp::legacy::{OltpLegacy, ReconnectMode};
use fleetbench_model::workloads::oltp::{OltpConfig, OltpDb, OltpOptions, Script};
use fleetbench_model::workloads::server::{ServerOptions, TargetOptions};
use fleetbench_model::workloads::tpcc::{TpccConfig, TpccOptions};

use super::model::{OltpSpec, PlanError, Workload};
use super::targets::{check_targets, parse_table_map, parse_target};
use super::values::{invalid, num};
use crate::cli::RawArgs;

/// Whether the test is 0.4's built-in `--test=oltp` (not a 0.5 script such as oltp.lua).
fn is_builtin_oltp_0_4(raw: &RawArgs) -> bool {
    raw.test
        .as_deref()
        .or(raw.words.first().map(String::as_str))
        == Some("oltp")
}

/// Maps sysbench's other spellings of a test to its 1.0 name: `tests/db/oltp.lua` and
/// `oltp` (0.5) mean oltp_read_write, or oltp_read_only with --oltp-read-only=on; the other
/// 0.5 scripts (`select.lua`, `insert.lua`, ...) their 1.0 tests; a path or a `.lua`
/// suffix is dropped.
pub(super) fn test_name(test: &str, raw: &RawArgs) -> Result<String, PlanError> {
    let base = test.rsplit('/').next().unwrap_or(test);
    // A 0.5 script (a path, or a name ending in .lua): only its file name matters, and
    // each maps to its 1.0 test.
    let script = base.len() != test.len() || base.ends_with(".lua");
    let base = base.strip_suffix(".lua").unwrap_or(base);
    if script {
        let mapped = match base {
            "select" | "oltp_simple" => Some("oltp_point_select"),
            "insert" => Some("oltp_insert"),
            "delete" => Some("oltp_delete"),
            "update_index" => Some("oltp_update_index"),
            "update_non_index" => Some("oltp_update_non_index"),
            "parallel_prepare" => Some("oltp_read_write"),
            _ => None,
        };
        if let Some(m) = mapped {
            return Ok(m.into());
        }
    }
    Ok(match base {
        // 0.5's oltp.lua ignores --oltp-test-mode; 0.4's built-in test follows it.
        "oltp" => OltpLegacy::resolve("OLTP", own_options(raw, OltpLegacy::OPTIONS))?
            .test(!script)
            .into(),
        other => other.to_string(),
    })
}

/// The declared options given for `defs`: a test reads its own and ignores the others'
/// (OLTP's with cpu, say), as sysbench does.
pub(super) fn own_options<'a>(
    raw: &'a RawArgs,
    defs: &'static [OptionDef],
) -> impl Iterator<Item = (&'a str, &'a str)> {
    raw.options
        .iter()
        .filter(move |(n, _)| defs.iter().any(|o| o.name == n))
        .map(|(n, v)| (n.as_str(), v.as_str()))
}

/// Validates the OLTP options of `script`.
pub(super) fn oltp(script: Script, raw: &RawArgs, threads: u32) -> Result<OltpSpec, PlanError> {
    check_targets(raw)?;
    let set = TableSet::resolve("OLTP", own_options(raw, TableSet::OPTIONS))?;
    let tables = if script == Script::BulkInsert {
        // bulk_insert works on one table per thread, as in sysbench.
        let per_thread = TableSet {
            tables: threads.max(1),
            ..set
        };
        per_thread.check()?;
        per_thread.tables
    } else {
        set.tables
    };
    let mut options = OltpOptions::resolve("OLTP", own_options(raw, OltpOptions::OPTIONS))?;
    let server = ServerOptions::resolve("OLTP", own_options(raw, ServerOptions::OPTIONS))?;
    let db = OltpDb::resolve("OLTP", own_options(raw, OltpDb::OPTIONS))?;
    let distribution = Distribution::resolve("OLTP", own_options(raw, Distribution::OPTIONS))?;
    let targets = targets_of(raw, &server)?;
    let map = match &raw.table_map {
        Some(m) => parse_table_map(m, tables, &targets)?,
        None if targets.len() == 1 => vec![0; tables as usize],
        None => {
            return Err(PlanError::TableMap(
                "several --target given: say which holds which tables, e.g. --table-map 'sbtest1-5=a,sbtest6-10=b'".into(),
            ));
        }
    };
    let legacy = OltpLegacy::resolve("OLTP", own_options(raw, OltpLegacy::OPTIONS))?;
    if legacy.reconnect_mode == ReconnectMode::Query && !script.single_statement() {
        return Err(PlanError::NotSupported(format!(
            "--oltp-reconnect-mode=query with {} (a reconnect between the statements of a transaction; with one statement per event, as --oltp-test-mode=simple or nontrx, query is transaction)",
            script.name()
        )));
    }
    // 0.4's engine without transactions runs without BEGIN/COMMIT.
    options.skip_trx |= !legacy.transactional(&server.engine, raw.legacy);
    // 0.4's reconnect modes in 1.0 terms: every transaction is --reconnect=1, and so is
    // every query where an event is one statement; random is decided after each
    // transaction (the worker draws).
    match legacy.reconnect_mode {
        ReconnectMode::Session => {}
        ReconnectMode::Transaction | ReconnectMode::Query => options.reconnect = 1,
        ReconnectMode::Random => options.reconnect = 0,
    }
    let config = OltpConfig {
        script,
        targets,
        tables: (1..=tables).zip(map).collect(),
        options,
        db,
        distribution,
        reconnect_random: legacy.reconnect_mode == ReconnectMode::Random,
        create_options: legacy.table_options(&server.engine, raw.legacy),
        table_name: match &legacy.table_name {
            Some(name) => name.clone(),
            // 0.4's built-in test has one table, named sbtest (no number), unless the
            // command line counts tables (a 0.5 option): then sbtest1..N as in 0.5.
            None if is_builtin_oltp_0_4(raw) && !raw.options.iter().any(|(n, _)| n == "tables") => {
                "sbtest".into()
            }
            None => String::new(),
        },
        server,
        // 0.4 takes the name in every mode (OltpLegacy checks it is one) and uses it in sp
        // mode only.
        sp_name: match (script, legacy.sp_name.as_str()) {
            (Script::StoredProcedure, "") => {
                return Err(invalid(
                    "oltp-sp-name",
                    "",
                    "--oltp-test-mode=sp (oltp_sp) calls the stored procedure named here",
                ));
            }
            (Script::StoredProcedure, n) => n.to_string(),
            _ => String::new(),
        },
    };
    Ok(OltpSpec {
        config,
        split: set.split,
    })
}

/// The database targets of the `--mysql-*` options (the target "default") or of
/// `--target` NAME=URL, with the connect timeout and TLS settings checked.
pub(super) fn targets_of(
    raw: &RawArgs,
    server: &ServerOptions,
) -> Result<Vec<fleetbench_model::workloads::server::Target>, PlanError> {
    let via = TargetOptions::resolve("OLTP", own_options(raw, TargetOptions::OPTIONS))?;
    let mut targets = if raw.target.is_empty() {
        vec![via.default_target("sbtest")]
    } else {
        raw.target
            .iter()
            .map(|t| parse_target(t))
            .collect::<Result<Vec<_>, _>>()?
    };
    if let (Some(first), Some(other)) = (
        targets.first(),
        targets.iter().find(|t| t.driver != targets[0].driver),
    ) {
        return Err(PlanError::Conflict(format!(
            "--target {} ({}) and --target {} ({}): one run speaks to one kind of database (compare them in two steps of a scenario)",
            first.name,
            first.driver.name(),
            other.name,
            other.driver.name()
        )));
    }
    for t in &mut targets {
        via.fill_in(t);
        // As the agent sets it from the same options (fleetbench_model::wire).
        t.connect_timeout = Some(server.connect_timeout);
        t.ssl
            .validate_for(t.driver)
            .map_err(|e| PlanError::Ssl(t.name.clone(), e))?;
    }
    Ok(targets)
}

/// TPC-C's options: one target (the `--mysql-*` options or one `--target`), W, and how
/// the warehouses and the terminals' wait are shared out.
pub(super) fn tpcc(raw: &RawArgs) -> Result<TpccConfig, PlanError> {
    check_targets(raw)?;
    let options = TpccOptions::resolve("tpcc", own_options(raw, TpccOptions::OPTIONS))?;
    let via = TargetOptions::resolve("tpcc", own_options(raw, TargetOptions::OPTIONS))?;
    let mut target = match &raw.target[..] {
        // tpcc-mysql's users name their database tpcc.
        [] => via.default_target("tpcc"),
        [one] => parse_target(one)?,
        _ => {
            return Err(PlanError::NotSupported(
                "tpcc with more than one --target (the TPC-C tables live on one server)".into(),
            ));
        }
    };
    if target.host.contains(',') {
        return Err(invalid(
            "mysql-host",
            &target.host,
            "tpcc connects to one host",
        ));
    }
    via.fill_in(&mut target);
    target
        .ssl
        .validate_for(target.driver)
        .map_err(|e| PlanError::Ssl(target.name.clone(), e))?;
    let server = ServerOptions::resolve("tpcc", own_options(raw, ServerOptions::OPTIONS))?;
    // As the agent sets it from the same options (fleetbench_model::wire).
    target.connect_timeout = Some(server.connect_timeout);
    Ok(TpccConfig {
        target,
        options,
        first_warehouse: 1,
        last_warehouse: options.warehouses,
        server,
        ..TpccConfig::default()
    })
}

/// The workload test `test` names, from its options.
pub(super) fn workload_of(test: &str, raw: &RawArgs) -> Result<Workload, PlanError> {
    let name = test_name(test, raw)?;
    Ok(
        match (fleetbench_model::spec::declared(&name), name.as_str()) {
            (Some(d), _) => d.workload(own_options(raw, d.options))?,
            (None, "tpcc") => Workload::Tpcc(Box::new(tpcc(raw)?)),
            (None, other) => match Script::from_name(other) {
                Some(script) => Workload::Oltp(Box::new(oltp(
                    script,
                    raw,
                    num(&raw.threads, "threads", 1)?,
                )?)),
                // A script that is not there (and no built-in test by that name).
                None if test.ends_with(".lua") => {
                    return Err(PlanError::Script(format!(
                        "cannot read the script {test}: no such file"
                    )));
                }
                None => return Err(PlanError::UnknownTest(test.to_string())),
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::test_support::plan;
    use super::*;
    use crate::plan::*;

    #[test]
    fn sysbench_0_5_scripts_map_to_their_1_0_tests() {
        let name = |test: &str| match plan(&[&format!("--test={test}"), "run"]) {
            Ok(p) => p.workload.name().to_string(),
            Err(e) => panic!("{test}: {e}"),
        };
        for (script, test) in [
            ("tests/db/oltp.lua", "oltp_read_write"),
            (
                "/data/sysbench-0.5/sysbench/tests/db/select.lua",
                "oltp_point_select",
            ),
            ("oltp_simple.lua", "oltp_point_select"),
            ("tests/db/insert.lua", "oltp_insert"),
            ("tests/db/delete.lua", "oltp_delete"),
            ("tests/db/update_index.lua", "oltp_update_index"),
            ("tests/db/update_non_index.lua", "oltp_update_non_index"),
            ("tests/db/select_random_points.lua", "select_random_points"),
            ("select_random_ranges.lua", "select_random_ranges"),
            ("tests/db/bulk_insert.lua", "bulk_insert"),
        ] {
            assert_eq!(name(script), test, "{script}");
        }
        // A bare word is a 1.0 test name, not a script: `insert` is no test of 1.0.
        assert!(plan(&["insert", "run"]).is_err());
    }

    #[test]
    fn tpcc_mysql_letters_give_the_same_plan_as_the_long_options() {
        let letters = plan(&[
            "tpcc",
            "-h127.0.0.1",
            "-P3307",
            "-dtpcc",
            "-uroot",
            "-p",
            "",
            "-w50",
            "-c100",
            "-r300",
            "-l600",
            "-i10",
            "run",
        ])
        .unwrap();
        let long = plan(&[
            "tpcc",
            "--mysql-host=127.0.0.1",
            "--mysql-port=3307",
            "--mysql-db=tpcc",
            "--mysql-user=root",
            "--mysql-password=",
            "--warehouses=50",
            "--threads=100",
            "--warmup-time=300",
            "--time=600",
            "--report-interval=10",
            "run",
        ])
        .unwrap();
        assert_eq!(letters, long);
        let Workload::Tpcc(t) = &letters.workload else {
            panic!("{:?}", letters.workload)
        };
        assert_eq!(
            (t.options.warehouses, t.target.port, t.target.user.as_str()),
            (50, 3307, "root")
        );
        assert_eq!(
            (letters.threads, letters.time),
            (100, Some(Duration::from_secs(600)))
        );
        // Bad values name the option.
        for (args, want) in [
            (&["tpcc", "-w0", "run"][..], "--warehouses"),
            (
                &["tpcc", "--warehouse-split=half", "run"],
                "--warehouse-split",
            ),
            (&["tpcc", "--keying-think=yes", "run"], "--keying-think"),
            (&["tpcc", "--mysql-host=a,b", "run"], "one host"),
            (
                &[
                    "tpcc",
                    "--target=a=mysql://u@h/d",
                    "--target=b=mysql://u@h/d",
                    "run",
                ],
                "one --target",
            ),
            (&["tpcc", "prewarm"], "prewarm"),
        ] {
            let e = plan(args).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
        assert_eq!(plan(&["tpcc", "check"]).unwrap().command, Command::Check);
    }

    #[test]
    fn one_run_speaks_to_one_kind_of_database() {
        let e = plan(&[
            "oltp_read_write",
            "--target=a=mysql://u@h/d",
            "--target=b=postgres://u@h/d",
            "run",
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--target a (mysql) and --target b (pgsql)"),
            "{e}"
        );
        let p = plan(&["oltp_read_write", "--target=a=postgres://u@h:5433/d", "run"]).unwrap();
        let Workload::Oltp(o) = &p.workload else {
            panic!("{:?}", p.workload)
        };
        assert_eq!(o.config.targets[0].port, 5433);
    }
}
