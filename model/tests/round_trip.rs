//! Every declared option of every workload, given a value other than its default, reaches
//! the agent and the result document with that value: the coordinator builds the spec and
//! encodes it (`wire::workload_to_proto`), the agent decodes it (`wire::workload_from_proto`)
//! and writes its options back as the result does (`to_options`, `fields`). Options the
//! coordinator's plan reads and turns into something else (tables, targets, a 1.0 test)
//! are read and written back on the coordinator's side.
//!
//! The options come from the registry (`spec::DECLARED`, `spec::GROUPS`), the values from
//! each option's kind and default, so an option added to a declared group is covered
//! without a change here; a text option needs its value in [`TEXTS`] (checked), and a new
//! group its route in [`route`] (checked).

use std::path::Path;

use serde_json::Value;

use fleetbench_model::options::Declared;
use fleetbench_model::options::{Kind, OptionDef, Written, parse_flag, parse_size};
use fleetbench_model::rand::Distribution;
use fleetbench_model::spec::{DECLARED, GROUPS, OltpSpec, TableSet, TableSplit, Workload};
use fleetbench_model::wire::{
    target_from_proto, target_to_proto, workload_from_proto, workload_to_proto,
};
use fleetbench_model::workloads::oltp::legacy::OltpLegacy;
use fleetbench_model::workloads::oltp::{OltpConfig, OltpDb, OltpOptions, Script};
use fleetbench_model::workloads::server::Target;
use fleetbench_model::workloads::server::{ServerOptions, TargetOptions};
use fleetbench_model::workloads::tpcc::{TpccConfig, TpccOptions};

/// A valid value other than the default of each text option.
const TEXTS: &[(&str, &str)] = &[
    // memory
    ("memory-scope", "local"),
    ("memory-oper", "read"),
    ("memory-access-mode", "rnd"),
    // fileio
    ("file-test-mode", "rndrw"),
    ("file-io-mode", "mmap"),
    ("file-extra-flags", "dsync,direct"),
    ("file-fsync-mode", "fdatasync"),
    ("file-dir", "sub/dir"),
    // OLTP
    ("table-split", "partition"),
    ("db-ps-mode", "disable"),
    ("mysql-ignore-errors", "1062,1213"),
    ("rand-type", "pareto"),
    ("oltp-test-mode", "simple"),
    ("oltp-nontrx-mode", "delete"),
    ("oltp-reconnect-mode", "random"),
    ("oltp-table-name", "t1"),
    ("oltp-sp-name", "bench.sp1"),
    ("mysql-create-options", "ROW_FORMAT=COMPRESSED"),
    ("mysql-engine-trx", "no"),
    // The server and how to reach it
    ("mysql-storage-engine", "myisam"),
    ("server-vars", "max_connections,log_bin"),
    ("db-driver", "pgsql"),
    ("mysql-host", "db1,db2"),
    ("mysql-socket", "/run/mysqld.sock"),
    ("mysql-user", "bench"),
    ("mysql-password", "secret"),
    ("mysql-db", "bench"),
    ("mysql-ssl-mode", "required"),
    ("mysql-ssl-ca", "/ca.pem"),
    ("mysql-ssl-cert", "/client.pem"),
    ("mysql-ssl-key", "/client.key"),
    ("mysql-server-public-key", "/server.pub"),
    ("pgsql-host", "pg1,pg2"),
    ("pgsql-user", "bench"),
    ("pgsql-password", "secret"),
    ("pgsql-db", "bench"),
    ("pgsql-sslmode", "require"),
    ("pgsql-sslrootcert", "/ca.pem"),
    ("pgsql-sslcert", "/client.pem"),
    ("pgsql-sslkey", "/client.key"),
    ("pgsql-ignore-errors", "40P01,57014"),
    // TPC-C
    ("warehouse-split", "partition"),
    ("keying-think", "spec"),
];

/// Options declared for sysbench's command lines that take their default only: the value
/// derived for them must be refused.
const DEFAULT_ONLY: &[&str] = &["mysql-compression", "file-merged-requests"];

/// Options whose value counts only with another's (a distribution's parameter): given
/// together.
const GIVEN_WITH: &[(&str, (&str, &str))] = &[
    ("rand-pareto-h", ("rand-type", "pareto")),
    ("rand-zipfian-exp", ("rand-type", "zipfian")),
    // The --pgsql-* connection options are read with --db-driver=pgsql only.
    ("pgsql-host", ("db-driver", "pgsql")),
    ("pgsql-port", ("db-driver", "pgsql")),
    ("pgsql-user", ("db-driver", "pgsql")),
    ("pgsql-password", ("db-driver", "pgsql")),
    ("pgsql-db", ("db-driver", "pgsql")),
    ("pgsql-sslmode", ("db-driver", "pgsql")),
    ("pgsql-sslrootcert", ("db-driver", "pgsql")),
    ("pgsql-sslcert", ("db-driver", "pgsql")),
    ("pgsql-sslkey", ("db-driver", "pgsql")),
];

/// Options written back as another option (what they mean, resolved): (option, (written
/// as, value)).
const WRITTEN_AS: &[(&str, (&str, &str))] = &[("mysql-ssl", ("mysql-ssl-mode", "required"))];

/// Options that reach the agent but that a result does not record
/// (`ServerOptions::recorded`: how connections open is not a setting of the measurement).
const NOT_RECORDED: &[&str] = &[
    "server-vars",
    "db-connect-timeout",
    "db-connect-concurrency",
];

fn lookup<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// A value of `d` other than its default, from its kind and default.
fn other_value(d: &OptionDef) -> String {
    match d.kind {
        // An empty default (not given) counts as 0.
        Kind::Count => (parse_size(d.default).unwrap_or(0) + 1).to_string(),
        Kind::Size => (parse_size(d.default).expect("a size") * 2).to_string(),
        Kind::Flag => match parse_flag(d.default) {
            Some(true) => "off".into(),
            _ => "on".into(),
        },
        Kind::Float => (d.default.parse::<f64>().expect("a number") + 0.5).to_string(),
        Kind::Text => lookup(TEXTS, d.name)
            .unwrap_or_else(|| panic!("--{} is a text option: give it a value in TEXTS", d.name))
            .into(),
    }
}

/// Whether two texts of an option of `kind` are the same value.
fn same(kind: Kind, a: &str, b: &str) -> bool {
    match kind {
        Kind::Count | Kind::Size => parse_size(a).is_some() && parse_size(a) == parse_size(b),
        Kind::Flag => parse_flag(a).is_some() && parse_flag(a) == parse_flag(b),
        Kind::Float => a.parse::<f64>().ok() == b.parse::<f64>().ok(),
        Kind::Text => a == b,
    }
}

/// How a group the plan reads is read and written back.
type Plan = fn(&[(&str, &str)]) -> Result<Written, String>;

/// How an option travels from the command line to where a run uses it.
#[derive(Clone, Copy)]
enum Route {
    /// A declared test: its spec goes to the agent as an option bag.
    Test(&'static str),
    /// OLTP's groups, in the OLTP spec's option bag.
    Oltp,
    /// TPC-C's groups, in the TPC-C spec's option bag.
    Tpcc,
    /// Read by the coordinator's plan (the group named), which sends what it makes of
    /// them.
    Plan(&'static str, Plan),
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Route::Test(test) => write!(f, "{test} through the wire"),
            Route::Oltp => write!(f, "OLTP through the wire"),
            Route::Tpcc => write!(f, "TPC-C through the wire"),
            Route::Plan(group, _) => write!(f, "{group} in the plan"),
        }
    }
}

/// What came out at the end: the options written back and the result's fields (None
/// where the agent is not sent the options).
struct Out {
    written: Written,
    fields: Option<Vec<(String, Value)>>,
}

/// The routes of one option of `GROUPS`, by the group that declares it.
fn route(name: &str) -> Vec<Route> {
    let declares = |defs: &[OptionDef]| defs.iter().any(|d| d.name == name);
    let mut routes = Vec::new();
    if [
        OltpOptions::OPTIONS,
        ServerOptions::OPTIONS,
        OltpDb::OPTIONS,
        Distribution::OPTIONS,
    ]
    .into_iter()
    .any(declares)
    {
        routes.push(Route::Oltp);
    }
    if [TpccOptions::OPTIONS, ServerOptions::OPTIONS]
        .into_iter()
        .any(declares)
    {
        routes.push(Route::Tpcc);
    }
    if declares(TableSet::OPTIONS) {
        routes.push(Route::Plan("TableSet", plan::<TableSet>));
    }
    if declares(OltpLegacy::OPTIONS) {
        routes.push(Route::Plan("OltpLegacy", plan::<OltpLegacy>));
    }
    if declares(TargetOptions::OPTIONS) {
        routes.push(Route::Plan("TargetOptions", targets));
    }
    assert!(
        !routes.is_empty(),
        "--{name} is in GROUPS but its group has no route here: add it to `route`"
    );
    routes
}

/// Group `G` of the options given (each group reads its own from one bag).
fn group<G: Declared>(given: &[(&str, &str)], test: &str) -> Result<G, String> {
    G::resolve(test, given.iter().copied().filter(|(k, _)| G::declares(k)))
        .map_err(|e| e.to_string())
}

fn target(database: &str) -> Target {
    Target {
        name: "default".into(),
        host: "127.0.0.1".into(),
        port: 3306,
        user: "sbtest".into(),
        database: database.into(),
        ..Target::default()
    }
}

/// The coordinator's spec through the wire to an agent, checked on both sides.
fn through_the_wire(w: Workload, tables: &[(u32, usize)]) -> Result<Workload, String> {
    w.validate().map_err(|e| e.to_string())?;
    let message = workload_to_proto(&w, tables);
    workload_from_proto(Some(&message), Path::new("/agent/work"), 7).map_err(|e| e.to_string())
}

fn run(route: Route, given: &[(&str, &str)]) -> Result<Out, String> {
    match route {
        Route::Test(test) => {
            let w = Workload::from_options(test, given.iter().copied())
                .expect("a declared test")
                .map_err(|e| e.to_string())?;
            let agent = through_the_wire(w, &[])?;
            let (name, written) = agent.options().expect("a declared test");
            assert_eq!(name, test);
            Ok(Out {
                written,
                fields: Some(agent.fields()),
            })
        }
        Route::Oltp => {
            let config = OltpConfig {
                script: Script::ReadWrite,
                targets: vec![target("sbtest")],
                tables: vec![(1, 0)],
                options: group(given, "OLTP")?,
                server: group(given, "OLTP")?,
                db: group(given, "OLTP")?,
                distribution: group(given, "OLTP")?,
                create_options: String::new(),
                table_name: String::new(),
                reconnect_random: false,
                sp_name: String::new(),
            };
            let tables = config.tables.clone();
            let w = Workload::Oltp(Box::new(OltpSpec {
                config,
                split: TableSplit::Shared,
            }));
            let agent = through_the_wire(w, &tables)?;
            let Workload::Oltp(o) = &agent else {
                panic!("OLTP came back as {}", agent.name())
            };
            let c = &o.config;
            let mut written = c.options.to_options();
            written.0.extend(c.server.to_options().0);
            written.0.extend(c.db.to_options().0);
            written.0.extend(c.distribution.to_options().0);
            Ok(Out {
                written,
                fields: Some(agent.fields()),
            })
        }
        Route::Tpcc => {
            let options: TpccOptions = group(given, "tpcc")?;
            let w = Workload::Tpcc(Box::new(TpccConfig {
                target: target("tpcc"),
                options,
                server: group(given, "tpcc")?,
                first_warehouse: 1,
                last_warehouse: options.warehouses,
                ..TpccConfig::default()
            }));
            let agent = through_the_wire(w, &[])?;
            let Workload::Tpcc(t) = &agent else {
                panic!("TPC-C came back as {}", agent.name())
            };
            let mut written = t.options.to_options();
            written.0.extend(t.server.to_options().0);
            Ok(Out {
                written,
                fields: Some(agent.fields()),
            })
        }
        Route::Plan(_, plan) => Ok(Out {
            written: plan(given)?,
            fields: None,
        }),
    }
}

/// A group the plan reads: its options written back, which read back the same.
fn plan<G: Declared + PartialEq + std::fmt::Debug>(
    given: &[(&str, &str)],
) -> Result<Written, String> {
    let value: G = group(given, "OLTP")?;
    let written = value.to_options();
    let back = G::resolve("OLTP", written.0.iter().map(|(k, v)| (*k, v.as_str())));
    assert_eq!(
        back.as_ref(),
        Ok(&value),
        "{given:?} written as {written:?}"
    );
    Ok(written)
}

/// The `--mysql-*` options: as [`plan`], and the target they make crosses the wire whole.
fn targets(given: &[(&str, &str)]) -> Result<Written, String> {
    let written = plan::<TargetOptions>(given)?;
    let t = group::<TargetOptions>(given, "OLTP")?.default_target("sbtest");
    let agent = target_from_proto(&target_to_proto(&t)).map_err(|e| e.to_string())?;
    assert_eq!(agent, t, "{given:?}");
    Ok(written)
}

/// Every option, with its routes and its group's declarations (to type its value).
fn registry() -> Vec<(&'static OptionDef, &'static [OptionDef], Vec<Route>)> {
    let mut all = Vec::new();
    for d in DECLARED {
        for o in d.options {
            all.push((o, d.options, vec![Route::Test(d.test)]));
        }
    }
    for (_, defs) in GROUPS {
        for o in *defs {
            all.push((o, *defs, route(o.name)));
        }
    }
    all
}

#[test]
fn every_declared_option_survives_the_way_to_the_agent_and_the_result() {
    let all = registry();
    let declared = |name: &str| all.iter().any(|(d, _, _)| d.name == name);
    // The tables name declared options only, and every text option has its value.
    for name in TEXTS
        .iter()
        .map(|t| t.0)
        .chain(DEFAULT_ONLY.iter().copied())
    {
        assert!(declared(name), "--{name} is not declared");
    }
    for name in GIVEN_WITH.iter().chain(WRITTEN_AS).map(|t| t.0) {
        assert!(declared(name), "--{name} is not declared");
    }
    for name in NOT_RECORDED {
        assert!(declared(name), "--{name} is not declared");
    }
    for (d, _, _) in &all {
        assert!(
            d.kind != Kind::Text || lookup(TEXTS, d.name).is_some(),
            "--{} is a text option: give it a value in TEXTS",
            d.name
        );
    }

    let mut covered = 0;
    let mut passages = 0;
    for (d, defs, routes) in &all {
        let value = other_value(d);
        assert!(
            !same(d.kind, &value, d.default),
            "--{}={value} is its default",
            d.name
        );
        let mut given = vec![(d.name, value.as_str())];
        given.extend(lookup(GIVEN_WITH, d.name));
        for &route in routes {
            let out = run(route, &given);
            if DEFAULT_ONLY.contains(&d.name) {
                assert!(
                    out.is_err(),
                    "--{}={value} is taken ({route:?}): it is no longer default-only",
                    d.name
                );
                continue;
            }
            let out = out.unwrap_or_else(|e| panic!("--{}={value} ({route:?}): {e}", d.name));
            // The option as written back, or what it is written as.
            let (name, want) = lookup(WRITTEN_AS, d.name).unwrap_or((d.name, value.as_str()));
            let want_def = defs.iter().find(|o| o.name == name).expect("declared");
            let got = out.written.0.iter().find(|(k, _)| *k == name);
            let Some((_, got)) = got else {
                panic!(
                    "--{}={value} ({route:?}): --{name} is not written back: {:?}",
                    d.name, out.written
                )
            };
            assert!(
                same(want_def.kind, got, want),
                "--{}={value} ({route:?}) came back as --{name}={got}, not {want}",
                d.name
            );
            if let Some(fields) = &out.fields {
                let typed = Written(vec![(want_def.name, want.to_string())])
                    .fields(std::slice::from_ref(want_def))
                    .remove(0);
                match fields.iter().find(|(k, _)| *k == typed.0) {
                    Some((_, v)) => assert_eq!(
                        v, &typed.1,
                        "--{}={value} ({route:?}): the result records {} as {v}",
                        d.name, typed.0
                    ),
                    None => assert!(
                        NOT_RECORDED.contains(&name),
                        "--{}={value} ({route:?}): the result does not record {}",
                        d.name,
                        typed.0
                    ),
                }
            }
            passages += 1;
        }
        covered += 1;
    }
    eprintln!(
        "{covered} options ({} default-only), {passages} passages checked",
        DEFAULT_ONLY.len()
    );
}
