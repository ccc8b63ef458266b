//! The workloads' specs and results in their wire form (fleetbench.proto) and back: every
//! conversion between the contract and the domain types, in one place, with round-trip
//! tests. The coordinator encodes specs and decodes results; an agent the other way round.

use std::collections::HashMap;
use std::path::Path;

use fleetbench_proto::v1::{self as pb, workload_spec};

use crate::counters::{DbCounters, IoCounters, counter_fields};
use crate::options::OptionDef;
use crate::options::{Declared, SpecError};
use crate::rand::Distribution;
use crate::spec::{OltpSpec, TableSplit, Workload};
use crate::workloads::fileio::FileioConfig;
use crate::workloads::oltp::tls::{SslMode, SslSettings};
use crate::workloads::oltp::{OltpConfig, OltpDb, OltpOptions, Script};
use crate::workloads::pgbench::{
    Builtin, PartitionMethod, PgbenchConfig, QueryMode, Script as PgScript, Step,
};
use crate::workloads::script::{Files, OptKind, OptValue, ScriptConfig};
use crate::workloads::server::ServerOptions;
use crate::workloads::server::{Driver, Target};
use crate::workloads::tpcc::{PrepareStep, TpccConfig, TpccOptions};

/// What is wrong with a message's workload (the agent answers it as an invalid argument).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

impl From<SpecError> for WireError {
    fn from(e: SpecError) -> WireError {
        WireError(e.to_string())
    }
}

/// Decodes and validates a workload, each kind once; `work_dir` and `seed` are this
/// agent's (fileio keeps its files under the work directory). An OLTP workload holds this
/// agent's tables only, and its split is the coordinator's business (left as shared).
pub fn workload_from_proto(
    spec: Option<&pb::WorkloadSpec>,
    work_dir: &Path,
    seed: u64,
) -> Result<Workload, WireError> {
    use workload_spec::Kind as K;
    let w = match spec.and_then(|w| w.kind.as_ref()) {
        Some(K::Oltp(o)) => Workload::Oltp(Box::new(OltpSpec {
            config: oltp_from_proto(o)?,
            split: TableSplit::Shared,
        })),
        Some(K::Options(o)) => {
            let mut w = options_from_proto(o)?;
            if let Workload::Fileio(f) = &mut w {
                f.work_dir = work_dir.to_path_buf();
                f.seed = seed;
            }
            w
        }
        Some(K::Tpcc(t)) => Workload::Tpcc(Box::new(tpcc_from_proto(t)?)),
        Some(K::Script(s)) => Workload::Script(Box::new(script_from_proto(s)?)),
        Some(K::Pgbench(p)) => Workload::Pgbench(Box::new(pgbench_from_proto(p)?)),
        None => return Err(WireError("Start names no workload this agent knows".into())),
    };
    Ok(w)
}

/// A declared workload (crate::spec::DECLARED) from its options, checked by the same
/// function as the coordinator's plan.
fn options_from_proto(o: &pb::OptionSpec) -> Result<Workload, WireError> {
    let given = o.options.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    match Workload::from_options(&o.test, given) {
        Some(w) => Ok(w?),
        None => Err(WireError(format!(
            "Start names no workload this agent knows ('{}')",
            o.test
        ))),
    }
}

/// The wire form of a workload; `tables` are the OLTP tables this agent works on.
pub fn workload_to_proto(w: &Workload, tables: &[(u32, usize)]) -> pb::WorkloadSpec {
    use pb::workload_spec::Kind;
    let kind = match w {
        Workload::Oltp(o) => Kind::Oltp(oltp_to_proto(&o.config, tables)),
        Workload::Tpcc(t) => Kind::Tpcc(tpcc_to_proto(t)),
        Workload::Script(s) => Kind::Script(script_to_proto(s)),
        Workload::Pgbench(p) => Kind::Pgbench(pgbench_to_proto(p)),
        declared => {
            let (test, options) = declared
                .options()
                .expect("every other workload is declared");
            Kind::Options(pb::OptionSpec {
                test: test.into(),
                options: options.into_bag(),
            })
        }
    };
    pb::WorkloadSpec { kind: Some(kind) }
}

/// A path for the wire ("" for none); agents read it on their own host.
fn path_text(p: &Option<std::path::PathBuf>) -> String {
    p.as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn oltp_to_proto(c: &OltpConfig, tables: &[(u32, usize)]) -> pb::OltpSpec {
    pb::OltpSpec {
        script: c.script.name().into(),
        targets: c.targets.iter().map(target_to_proto).collect(),
        tables: tables
            .iter()
            .map(|&(number, t)| pb::TableRef {
                number,
                target: t as u32,
            })
            .collect(),
        options: {
            // The groups in one bag: their names are disjoint.
            let mut bag = c.options.to_options();
            bag.0.extend(c.server.to_options().0);
            bag.0.extend(c.db.to_options().0);
            bag.0.extend(c.distribution.to_options().0);
            bag.into_bag()
        },
        create_options: c.create_options.clone(),
        table_name: c.table_name.clone(),
        sp_name: c.sp_name.clone(),
        reconnect_random: c.reconnect_random,
    }
}

/// Validates a Prepare's or Cleanup's fileio options into the agent's configuration.
pub fn fileio_from_proto(
    o: &pb::OptionSpec,
    work_dir: &Path,
    seed: u64,
) -> Result<FileioConfig, WireError> {
    match options_from_proto(o)? {
        Workload::Fileio(mut f) => {
            f.work_dir = work_dir.to_path_buf();
            f.seed = seed;
            Ok(*f)
        }
        other => Err(WireError(format!(
            "prepare and cleanup need an OLTP, TPC-C or fileio workload, not {}",
            other.name()
        ))),
    }
}

/// A database target in its wire form.
pub fn target_to_proto(t: &Target) -> pb::Target {
    pb::Target {
        name: t.name.clone(),
        driver: match t.driver {
            Driver::Mysql => String::new(),
            Driver::Pgsql => "pgsql".into(),
        },
        host: t.host.clone(),
        port: u32::from(t.port),
        socket: t.socket.clone().unwrap_or_default(),
        user: t.user.clone(),
        password: t.password.clone(),
        database: t.database.clone(),
        ssl_mode: t.ssl.mode.name().into(),
        ssl_ca: path_text(&t.ssl.ca),
        ssl_cert: path_text(&t.ssl.cert),
        ssl_key: path_text(&t.ssl.key),
        server_public_key: path_text(&t.server_public_key),
        get_server_public_key: t.get_server_public_key,
    }
}

/// A database target as the agent connects to it; its TLS and key files are yet to be read.
pub fn target_from_proto(t: &pb::Target) -> Result<Target, WireError> {
    let bad = WireError;
    let path = |s: &str| (!s.is_empty()).then(|| std::path::PathBuf::from(s));
    let mode = if t.ssl_mode.is_empty() {
        SslMode::Disabled
    } else {
        SslMode::parse(&t.ssl_mode).ok_or_else(|| {
            bad(format!(
                "unknown ssl mode '{}' for target {}",
                t.ssl_mode, t.name
            ))
        })?
    };
    let driver = match t.driver.as_str() {
        "" => Driver::Mysql,
        d => Driver::parse(d)
            .ok_or_else(|| bad(format!("unknown driver '{d}' for target {}", t.name)))?,
    };
    let target = Target {
        name: t.name.clone(),
        driver,
        host: t.host.clone(),
        port: u16::try_from(t.port)
            .map_err(|_| bad(format!("target {}: port {} is not a port", t.name, t.port)))?,
        socket: (!t.socket.is_empty()).then(|| t.socket.clone()),
        user: t.user.clone(),
        password: t.password.clone(),
        database: t.database.clone(),
        ssl: SslSettings {
            mode,
            ca: path(&t.ssl_ca),
            cert: path(&t.ssl_cert),
            key: path(&t.ssl_key),
        },
        server_public_key: path(&t.server_public_key),
        get_server_public_key: t.get_server_public_key,
        loaded: Default::default(),
        connect_timeout: None,
    };
    // The files are the agent's to read (oltp::client::load_files), on its own host.
    Ok(target)
}

/// pgbench's options in their wire form.
pub fn pgbench_to_proto(c: &PgbenchConfig) -> pb::PgbenchSpec {
    pb::PgbenchSpec {
        target: Some(target_to_proto(&c.target)),
        scale: c.scale,
        scripts: scripts_to_proto(&c.scripts),
        files: c
            .scripts
            .iter()
            .filter_map(|(s, _)| match s {
                PgScript::File { name, text } => Some(pb::PgbenchFile {
                    name: name.clone(),
                    text: text.clone(),
                }),
                PgScript::Builtin(_) => None,
            })
            .collect(),
        defines: c.defines.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        connect_each: c.connect_each,
        log_transactions: c.log_sampling.is_some(),
        sampling_rate: c.log_sampling.unwrap_or(0.0),
        query_mode: c.mode.name().into(),
        max_tries: c.max_tries,
        step: c.step.name().into(),
        fillfactor: c.fillfactor,
        unlogged: c.unlogged,
        partitions: c.partitions,
        partition_method: c.partition_method.name().into(),
        first_aid: c.first_aid,
        last_aid: c.last_aid,
        load_small: c.load_small,
        jobs: c.jobs,
        latency_limit_us: c.latency_limit_us,
        transactions_per_client: c.transactions_per_client,
        per_statement: c.per_statement,
    }
}

/// The scripts in order: "tpcb-like@1" for a built-in one, "file:N@W" for the N-th file.
fn scripts_to_proto(scripts: &[(PgScript, u32)]) -> Vec<String> {
    let mut files = 0;
    scripts
        .iter()
        .map(|(s, w)| match s {
            PgScript::Builtin(b) => format!("{}@{w}", b.name()),
            PgScript::File { .. } => {
                files += 1;
                format!("file:{}@{w}", files - 1)
            }
        })
        .collect()
}

fn scripts_from_proto(p: &pb::PgbenchSpec) -> Result<Vec<(PgScript, u32)>, WireError> {
    p.scripts
        .iter()
        .map(|s| {
            let (name, weight) = s.rsplit_once('@').unwrap_or((s.as_str(), "1"));
            let w = weight
                .parse::<u32>()
                .map_err(|_| WireError(format!("invalid weight in script '{s}'")))?;
            let script = match name.strip_prefix("file:") {
                Some(n) => {
                    let f = n
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| p.files.get(n))
                        .ok_or_else(|| WireError(format!("no script file for '{s}'")))?;
                    PgScript::File {
                        name: f.name.clone(),
                        text: f.text.clone(),
                    }
                }
                None => PgScript::Builtin(Builtin::find(name).map_err(WireError)?),
            };
            Ok((script, w))
        })
        .collect()
}

/// Validates wire pgbench options into the agent's configuration.
pub fn pgbench_from_proto(p: &pb::PgbenchSpec) -> Result<PgbenchConfig, WireError> {
    let target = p
        .target
        .as_ref()
        .ok_or_else(|| WireError("no database target given".into()))?;
    let scripts = scripts_from_proto(p)?;
    let defines = p
        .defines
        .iter()
        .map(|d| match d.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(WireError(format!("invalid variable definition '{d}'"))),
        })
        .collect::<Result<Vec<_>, WireError>>()?;
    let cfg = PgbenchConfig {
        target: target_from_proto(target)?,
        scale: p.scale,
        scripts,
        defines,
        connect_each: p.connect_each,
        log_sampling: p.log_transactions.then_some(p.sampling_rate),
        mode: QueryMode::parse(&p.query_mode)
            .ok_or_else(|| WireError(format!("unknown query mode '{}'", p.query_mode)))?,
        max_tries: p.max_tries,
        step: Step::from_name(&p.step)
            .ok_or_else(|| WireError(format!("unknown pgbench step '{}'", p.step)))?,
        fillfactor: p.fillfactor,
        unlogged: p.unlogged,
        partitions: p.partitions,
        partition_method: PartitionMethod::parse(&p.partition_method).ok_or_else(|| {
            WireError(format!("unknown partition method '{}'", p.partition_method))
        })?,
        first_aid: p.first_aid,
        last_aid: p.last_aid,
        load_small: p.load_small,
        jobs: p.jobs,
        latency_limit_us: p.latency_limit_us,
        transactions_per_client: p.transactions_per_client,
        per_statement: p.per_statement,
    };
    cfg.validate().map_err(WireError)?;
    Ok(cfg)
}

/// TPC-C's options in their wire form.
pub fn tpcc_to_proto(c: &TpccConfig) -> pb::TpccSpec {
    pb::TpccSpec {
        target: Some(target_to_proto(&c.target)),
        options: {
            let mut bag = c.options.to_options();
            bag.0.extend(c.server.to_options().0);
            bag.into_bag()
        },
        first_warehouse: c.first_warehouse,
        last_warehouse: c.last_warehouse,
        step: c.step.name().into(),
        load_items: c.load_items,
        c_last_load: c.c_last_load,
    }
}

/// Validates wire TPC-C options into the agent's configuration.
pub fn tpcc_from_proto(t: &pb::TpccSpec) -> Result<TpccConfig, WireError> {
    let target = t
        .target
        .as_ref()
        .ok_or_else(|| WireError("no database target given".into()))?;
    only_declared(
        &t.options,
        "tpcc",
        &[TpccOptions::OPTIONS, ServerOptions::OPTIONS],
    )?;
    let server: ServerOptions = group(&t.options, "tpcc")?;
    let mut target = target_from_proto(target)?;
    target.connect_timeout = Some(server.connect_timeout);
    let cfg = TpccConfig {
        target,
        options: group(&t.options, "tpcc")?,
        server,
        first_warehouse: t.first_warehouse,
        last_warehouse: t.last_warehouse,
        step: PrepareStep::from_name(&t.step)
            .ok_or_else(|| WireError(format!("unknown TPC-C prepare step '{}'", t.step)))?,
        load_items: t.load_items,
        c_last_load: t.c_last_load,
    };
    cfg.validate().map_err(WireError)?;
    Ok(cfg)
}

/// Group `G` of an option bag that holds several groups (their names are disjoint).
fn group<G: Declared>(bag: &HashMap<String, String>, test: &str) -> Result<G, WireError> {
    G::resolve(
        test,
        bag.iter()
            .filter(|(k, _)| G::declares(k))
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(|e| WireError(e.to_string()))
}

/// Refuses a name in the bag that none of `groups` declares: a coordinator that plans
/// another workload than the one it names.
fn only_declared(
    bag: &HashMap<String, String>,
    test: &str,
    groups: &[&[OptionDef]],
) -> Result<(), WireError> {
    match bag.keys().find(|k| {
        !groups
            .iter()
            .any(|g| g.iter().any(|o| o.name == k.as_str()))
    }) {
        Some(k) => Err(WireError(format!("{test} has no option --{k}"))),
        None => Ok(()),
    }
}

/// Validates the wire OLTP options into the agent's configuration.
pub fn oltp_from_proto(o: &pb::OltpSpec) -> Result<OltpConfig, WireError> {
    let bad = WireError;
    let script = Script::from_name(&o.script)
        .ok_or_else(|| bad(format!("unknown OLTP script '{}'", o.script)))?;
    if o.targets.is_empty() {
        return Err(bad("no database target given".into()));
    }
    let mut targets = o
        .targets
        .iter()
        .map(target_from_proto)
        .collect::<Result<Vec<_>, WireError>>()?;
    if o.tables.len() > crate::limits::MAX_TABLES as usize {
        return Err(bad(format!(
            "{} tables are more than the {} accepted",
            o.tables.len(),
            crate::limits::MAX_TABLES
        )));
    }
    let mut tables = Vec::new();
    for t in &o.tables {
        if t.target as usize >= targets.len() {
            return Err(bad(format!(
                "table sbtest{} maps to an unknown target",
                t.number
            )));
        }
        tables.push((t.number, t.target as usize));
    }
    if tables.is_empty() {
        return Err(bad("no tables given".into()));
    }
    // One bag for the groups: each reads its own.
    only_declared(
        &o.options,
        "OLTP",
        &[
            OltpOptions::OPTIONS,
            ServerOptions::OPTIONS,
            OltpDb::OPTIONS,
            Distribution::OPTIONS,
        ],
    )?;
    let server: ServerOptions = group(&o.options, "OLTP")?;
    for t in &mut targets {
        t.connect_timeout = Some(server.connect_timeout);
    }
    let cfg = OltpConfig {
        script,
        targets,
        tables,
        options: group(&o.options, "OLTP")?,
        server,
        db: group(&o.options, "OLTP")?,
        distribution: group(&o.options, "OLTP")?,
        create_options: o.create_options.clone(),
        table_name: o.table_name.clone(),
        sp_name: o.sp_name.clone(),
        reconnect_random: o.reconnect_random,
    };
    cfg.validate().map_err(bad)?;
    Ok(cfg)
}

pub fn script_to_proto(c: &ScriptConfig) -> pb::ScriptSpec {
    pb::ScriptSpec {
        path: c.files.path.clone(),
        main: c.files.main.clone(),
        files: c.files.files.iter().cloned().collect(),
        command: c.command.clone(),
        parallel: c.parallel,
        opt: c
            .opt
            .iter()
            .map(|o| pb::ScriptOpt {
                name: o.name.clone(),
                kind: o.kind.name().into(),
                value: o.text.clone(),
            })
            .collect(),
        targets: c.targets.iter().map(target_to_proto).collect(),
        options: {
            let mut bag = c.server.to_options();
            bag.0.extend(c.db.to_options().0);
            bag.0.extend(c.distribution.to_options().0);
            bag.into_bag()
        },
        argv: c.argv.clone(),
    }
}

/// A script run as the agent runs it, checked as the plan checks it.
pub fn script_from_proto(s: &pb::ScriptSpec) -> Result<ScriptConfig, WireError> {
    let bad = WireError;
    if s.targets.is_empty() {
        return Err(bad("no database target given".into()));
    }
    if !s.files.contains_key(&s.main) {
        return Err(bad(format!("the script {} was not sent", s.main)));
    }
    let total: usize = s.files.values().map(String::len).sum();
    if total > crate::workloads::script::files::MAX_TOTAL_BYTES {
        return Err(bad("the script's files are larger than accepted".into()));
    }
    if s.argv.iter().map(String::len).sum::<usize>()
        > crate::workloads::script::files::MAX_ARGV_BYTES
    {
        return Err(bad(
            "the script's command line (argv) is longer than accepted".into(),
        ));
    }
    let mut targets = s
        .targets
        .iter()
        .map(target_from_proto)
        .collect::<Result<Vec<_>, WireError>>()?;
    only_declared(
        &s.options,
        "script",
        &[
            ServerOptions::OPTIONS,
            OltpDb::OPTIONS,
            Distribution::OPTIONS,
        ],
    )?;
    let server: ServerOptions = group(&s.options, "script")?;
    for t in &mut targets {
        t.connect_timeout = Some(server.connect_timeout);
    }
    let opt = s
        .opt
        .iter()
        .map(|o| {
            let kind = OptKind::from_name(&o.kind)
                .ok_or_else(|| bad(format!("option {}: unknown type '{}'", o.name, o.kind)))?;
            Ok(OptValue {
                name: o.name.clone(),
                kind,
                text: o.value.clone(),
            })
        })
        .collect::<Result<Vec<_>, WireError>>()?;
    let mut files: Vec<(String, String)> = s
        .files
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    files.sort();
    Ok(ScriptConfig {
        name: s.main.strip_suffix(".lua").unwrap_or(&s.main).to_string(),
        files: Files {
            path: s.path.clone(),
            main: s.main.clone(),
            files,
        },
        command: s.command.clone(),
        parallel: s.parallel,
        opt,
        targets,
        server,
        db: group(&s.options, "script")?,
        distribution: group(&s.options, "script")?,
        argv: s.argv.clone(),
    })
}

/// Both directions between a counters struct and its message, whose fields carry the same
/// names, over the struct's one list of fields (`counters::counter_fields`), so that
/// neither direction can miss one. `maps` are fields holding (code, count) pairs.
macro_rules! mirror {
    ($to:ident, $from:ident, $domain:path, $msg:path, [$($f:ident),*] $(, maps [$($m:ident),*])?) => {
        pub fn $to(d: &$domain) -> $msg {
            $msg {
                $($f: d.$f,)*
                $($($m: d.$m.iter().map(|(k, v)| (*k, *v)).collect(),)*)?
            }
        }

        pub fn $from(m: &$msg) -> $domain {
            $domain {
                $($f: m.$f,)*
                $($($m: m.$m.iter().map(|(k, v)| (*k, *v)).collect(),)*)?
            }
        }
    };
}

counter_fields!(
    DbCounters,
    mirror!(db_message, db_from_proto, DbCounters, pb::DbCounters,)
);
counter_fields!(
    IoCounters,
    mirror!(io_message, io_from_proto, IoCounters, pb::IoCounters,)
);
pub fn host_to_proto(h: &crate::host::HostFigures) -> pb::HostLoad {
    pb::HostLoad {
        cpu_busy_pct: h.cpu_busy_pct,
        agent_cpu_pct: h.agent_cpu_pct,
        run_queue: h.run_queue,
        cores: h.cores,
        mem_used_bytes: h.mem_used_bytes,
        mem_total_bytes: h.mem_total_bytes,
        net_rx_bytes: h.net_rx_bytes,
        net_tx_bytes: h.net_tx_bytes,
        disk: h.disk.map(|d| pb::DiskLoad {
            util_pct: d.util_pct,
            queue_depth: d.queue_depth,
        }),
    }
}

pub fn host_from_proto(m: &pb::HostLoad) -> crate::host::HostFigures {
    crate::host::HostFigures {
        cpu_busy_pct: m.cpu_busy_pct,
        agent_cpu_pct: m.agent_cpu_pct,
        run_queue: m.run_queue,
        cores: m.cores,
        mem_used_bytes: m.mem_used_bytes,
        mem_total_bytes: m.mem_total_bytes,
        net_rx_bytes: m.net_rx_bytes,
        net_tx_bytes: m.net_tx_bytes,
        disk: m.disk.as_ref().map(|d| crate::host::DiskFigures {
            util_pct: d.util_pct,
            queue_depth: d.queue_depth,
        }),
    }
}

/// Counters for the wire; none at all are left out.
pub fn db_to_proto(d: &DbCounters) -> Option<pb::DbCounters> {
    (!d.is_zero()).then(|| db_message(d))
}

pub fn io_to_proto(d: &IoCounters) -> Option<pb::IoCounters> {
    (!d.is_zero()).then(|| io_message(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripts_argv_round_trips_and_an_oversized_one_is_refused() {
        let mut spec = pb::ScriptSpec {
            path: "t.lua".into(),
            main: "t.lua".into(),
            files: [("t.lua".to_string(), "function event() end".to_string())].into(),
            command: "run".into(),
            parallel: true,
            targets: vec![pb::Target {
                name: "default".into(),
                host: "127.0.0.1".into(),
                port: 3306,
                ..Default::default()
            }],
            argv: vec!["fleetbench".into(), "t.lua".into(), "run".into()],
            ..Default::default()
        };
        let cfg = script_from_proto(&spec).expect("a valid script");
        assert_eq!(cfg.argv, ["fleetbench", "t.lua", "run"]);
        assert_eq!(script_to_proto(&cfg).argv, spec.argv);
        spec.argv
            .push("x".repeat(crate::workloads::script::files::MAX_ARGV_BYTES));
        let err = script_from_proto(&spec).expect_err("over the cap");
        assert!(err.0.contains("argv"), "{}", err.0);
    }

    #[test]
    fn counters_and_host_figures_round_trip() {
        let db = DbCounters {
            reads: 1,
            writes: 2,
            others: 3,
            ignored_errors: 4,
            reconnects: 5,
            reconnect_failures: 6,
            connect_ns: 7,
            errors_by_code: [(1213, 4)].into_iter().collect(),
        };
        assert_eq!(db_from_proto(&db_to_proto(&db).unwrap()), db);
        assert_eq!(db_to_proto(&DbCounters::default()), None);
        let io = IoCounters {
            reads: 1,
            writes: 2,
            fsyncs: 3,
            bytes_read: 4,
            bytes_written: 5,
        };
        assert_eq!(io_from_proto(&io_to_proto(&io).unwrap()), io);
        let host = crate::host::HostFigures {
            cpu_busy_pct: 12.5,
            agent_cpu_pct: 3.25,
            run_queue: 4,
            cores: 2,
            mem_used_bytes: 5,
            mem_total_bytes: 6,
            net_rx_bytes: 7,
            net_tx_bytes: 8,
            disk: Some(crate::host::DiskFigures {
                util_pct: 42.5,
                queue_depth: 1.25,
            }),
        };
        assert_eq!(host_from_proto(&host_to_proto(&host)), host);
        let no_disk = crate::host::HostFigures { disk: None, ..host };
        assert_eq!(host_to_proto(&no_disk).disk, None);
        assert_eq!(host_from_proto(&host_to_proto(&no_disk)), no_disk);
    }
}
