//! Every option named in the sysbench references (shared/reference: 1.0, and 0.4/0.5)
//! is accepted, with its value as `--name=value` and, for booleans, bare; the old spellings
//! that have a 1.0 equivalent give the same plan as that equivalent. Every such plan's
//! workload also survives the wire: encoded as a Start's workload and decoded the way an
//! agent decodes it, it is the spec the plan holds, so a field forgotten in either direction
//! of `fleetbench_model::wire` shows up here.

use std::path::Path;

use fleetbench::plan::Workload;
use fleetbench::{cli, plan, sweep};
use fleetbench_model::options::Declared;
use fleetbench_model::wire::{workload_from_proto, workload_to_proto};

/// Parses and plans a command line as `fleetbench` does (extras taken out first).
fn plan_of(args: &[&str]) -> Result<plan::Plan, String> {
    // A script is read and its options taken out first, as the command line's parse does.
    let argv: Vec<std::ffi::OsString> = std::iter::once("fleetbench")
        .chain(args.iter().copied())
        .map(Into::into)
        .collect();
    let (argv, script) = match fleetbench::script::take(argv).map_err(|e| e.to_string())? {
        fleetbench::script::Taken::Script(rest, s) => (rest, Some(s)),
        fleetbench::script::Taken::NoScript(rest) => (rest, None),
        fleetbench::script::Taken::Help(_) => return Err("help".into()),
    };
    let mut raw = cli::parse(argv).map_err(|e| e.to_string())?;
    raw.script = script;
    sweep::take_extras(&mut raw).map_err(|e| e.to_string())?;
    plan::build(&raw).map_err(|e| e.to_string())
}

/// (test and command to give the option with, the option with a value from the reference)
const ACCEPTED: &[(&[&str], &str)] = &[
    // General (1.0 and 0.4/0.5).
    (&["cpu", "run"], "--threads=4"),
    (&["cpu", "run"], "--num-threads=4"),
    (&["cpu", "run"], "--events=100"),
    (&["cpu", "run"], "--max-requests=100"),
    (&["cpu", "run"], "--time=5"),
    (&["cpu", "run"], "--max-time=5"),
    (&["cpu", "run"], "--forced-shutdown=off"),
    (&["cpu", "run"], "--forced-shutdown=10%"),
    (&["cpu", "run"], "--thread-stack-size=64K"),
    (&["cpu", "run"], "--init-rng=on"),
    (&["cpu", "run"], "--rand-init=off"),
    (&["cpu", "run"], "--rate=100"),
    (&["cpu", "run"], "--tx-rate=100"),
    (&["cpu", "run"], "--report-interval=10"),
    (&["cpu", "run"], "--report-checkpoints=5,10"),
    (&["cpu", "run"], "--rand-type=uniform"),
    (&["cpu", "run"], "--rand-spec-iter=12"),
    (&["cpu", "run"], "--rand-spec-pct=1"),
    (&["cpu", "run"], "--rand-spec-res=75"),
    (&["cpu", "run"], "--rand-pareto-h=0.2"),
    (&["cpu", "run"], "--rand-seed=7"),
    (&["cpu", "run"], "--percentile=99"),
    (&["cpu", "run"], "--histogram=on"),
    (&["cpu", "run"], "--verbosity=3"),
    (&["cpu", "run"], "--debug=on"),
    (&["cpu", "run"], "--validate=on"),
    (&["cpu", "run"], "--cpu-max-prime=20000"),
    (&["--test=cpu", "run"], "--cpu-max-prime=20000"),
    // fileio.
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-num=16",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-block-size=16384",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-total-size=1G",
    ),
    (&["fileio", "run"], "--file-test-mode=seqwr"),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-io-mode=async",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-async-backlog=64",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-extra-flags=direct",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-fsync-freq=50",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-fsync-all=on",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-fsync-end=off",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-fsync-mode=fdatasync",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-merged-requests=0",
    ),
    (
        &["fileio", "--file-test-mode=rndrw", "run"],
        "--file-rw-ratio=2",
    ),
    // memory, threads, mutex.
    (&["memory", "run"], "--memory-block-size=4K"),
    (&["memory", "run"], "--memory-total-size=1G"),
    (&["memory", "run"], "--memory-scope=local"),
    (&["memory", "run"], "--memory-hugetlb=off"),
    (&["memory", "run"], "--memory-oper=read"),
    (&["memory", "run"], "--memory-access-mode=rnd"),
    (&["threads", "run"], "--thread-yields=100"),
    (&["threads", "run"], "--thread-locks=4"),
    (&["mutex", "run"], "--mutex-num=1024"),
    (&["mutex", "run"], "--mutex-locks=1000"),
    (&["mutex", "run"], "--mutex-loops=1000"),
    // OLTP, 1.0.
    (&["oltp_read_write", "run"], "--tables=4"),
    (&["oltp_read_write", "run"], "--table-size=1000"),
    (&["oltp_read_write", "run"], "--range-size=50"),
    (&["oltp_read_write", "run"], "--point-selects=5"),
    (&["oltp_read_write", "run"], "--simple-ranges=2"),
    (&["oltp_read_write", "run"], "--sum-ranges=2"),
    (&["oltp_read_write", "run"], "--order-ranges=2"),
    (&["oltp_read_write", "run"], "--distinct-ranges=2"),
    (&["oltp_read_write", "run"], "--index-updates=2"),
    (&["oltp_read_write", "run"], "--non-index-updates=2"),
    (&["oltp_read_write", "run"], "--delete-inserts=2"),
    (&["oltp_read_write", "run"], "--range-selects=off"),
    (&["oltp_read_write", "run"], "--auto-inc=off"),
    (&["oltp_read_write", "run"], "--skip-trx=on"),
    (&["oltp_read_write", "run"], "--secondary=on"),
    (&["oltp_read_write", "run"], "--create-secondary=off"),
    (&["oltp_read_write", "run"], "--mysql-storage-engine=myisam"),
    (&["select_random_points", "run"], "--random-points=5"),
    (&["select_random_ranges", "run"], "--number-of-ranges=5"),
    (&["select_random_ranges", "run"], "--delta=3"),
    (&["oltp_read_write", "run"], "--reconnect=10"),
    (&["oltp_read_write", "run"], "--db-driver=mysql"),
    (&["oltp_read_write", "run"], "--db-ps-mode=disable"),
    (&["oltp_read_write", "run"], "--mysql-host=db1,db2"),
    (&["oltp_read_write", "run"], "--mysql-port=3307"),
    (
        &["oltp_read_write", "run"],
        "--mysql-socket=/run/mysqld/mysqld.sock",
    ),
    (&["oltp_read_write", "run"], "--mysql-user=bench"),
    (&["oltp_read_write", "run"], "--mysql-password=pw"),
    (&["oltp_read_write", "run"], "--mysql-db=bench"),
    (&["oltp_read_write", "run"], "--mysql-ignore-errors=all"),
    (&["oltp_read_write", "run"], "--mysql-ssl=off"),
    (&["oltp_read_write", "run"], "--mysql-compression=off"),
    // OLTP, 0.4/0.5.
    (&["--test=oltp", "run"], "--oltp-tables-count=4"),
    (&["--test=oltp", "run"], "--oltp_tables_count=4"),
    (&["--test=oltp", "run"], "--oltp-table-size=1000"),
    (&["--test=oltp", "run"], "--oltp-read-only=on"),
    (&["--test=oltp", "run"], "--oltp-point-selects=5"),
    (&["--test=oltp", "run"], "--oltp-range-size=50"),
    (&["--test=oltp", "run"], "--oltp-simple-ranges=2"),
    (&["--test=oltp", "run"], "--oltp-sum-ranges=2"),
    (&["--test=oltp", "run"], "--oltp-order-ranges=2"),
    (&["--test=oltp", "run"], "--oltp-distinct-ranges=2"),
    (&["--test=oltp", "run"], "--oltp-index-updates=2"),
    (&["--test=oltp", "run"], "--oltp-non-index-updates=2"),
    (&["--test=oltp", "run"], "--oltp-skip-trx=on"),
    (&["--test=oltp", "run"], "--oltp-auto-inc=off"),
    (&["--test=oltp", "run"], "--oltp-test-mode=complex"),
    (&["--test=oltp", "run"], "--oltp-test-mode=simple"),
    (
        &["--test=oltp", "--oltp-sp-name=bench_sp", "run"],
        "--oltp-test-mode=sp",
    ),
    (&["--test=oltp", "run"], "--oltp-sp-name=bench_sp"),
    (
        &["--test=oltp", "--oltp-test-mode=nontrx", "run"],
        "--oltp-nontrx-mode=delete",
    ),
    (&["--test=oltp", "run"], "--oltp-reconnect-mode=transaction"),
    (&["--test=oltp", "run"], "--oltp-connect-delay=10000"),
    (&["--test=oltp", "run"], "--oltp-user-delay-min=10"),
    (&["--test=oltp", "run"], "--oltp-user-delay-max=10"),
    (&["--test=oltp", "run"], "--oltp-dist-type=uniform"),
    (&["--test=oltp", "run"], "--oltp-dist-iter=12"),
    (&["--test=oltp", "run"], "--oltp-dist-pct=1"),
    (&["--test=oltp", "run"], "--oltp-dist-res=75"),
    (&["--test=oltp", "run"], "--mysql-table-engine=innodb"),
    (&["--test=oltp", "run"], "--mysql-engine-trx=auto"),
    (
        &["--test=oltp", "--mysql-table-engine=myisam", "run"],
        "--myisam-max-rows=5000",
    ),
    (
        &["--test=oltp", "run"],
        "--mysql-create-options=ROW_FORMAT=DYNAMIC",
    ),
    (
        &["--test=tests/db/oltp.lua", "run"],
        "--oltp-tables-count=4",
    ),
];

#[test]
fn every_reference_option_is_accepted() {
    let mut refused = Vec::new();
    for (base, option) in ACCEPTED {
        let mut args: Vec<&str> = base.to_vec();
        args.insert(args.len() - 1, option);
        if let Err(e) = plan_of(&args) {
            refused.push(format!("{args:?}: {e}"));
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
}

#[test]
fn boolean_options_stand_bare_for_on() {
    for (base, option) in [
        (&["cpu", "run"][..], "--histogram"),
        (&["cpu", "run"], "--debug"),
        (&["cpu", "run"], "--validate"),
        (&["cpu", "run"], "--rand-init"),
        (&["cpu", "run"], "--init-rng"),
        (&["oltp_read_write", "run"], "--skip-trx"),
        (&["oltp_read_write", "run"], "--secondary"),
        (&["--test=oltp", "run"], "--oltp-read-only"),
        (&["--test=oltp", "run"], "--oltp-skip-trx"),
        (&["oltp_read_write", "run"], "--mysql-ssl"),
    ] {
        let bare: Vec<&str> = [&[option][..], base].concat();
        let on = format!("{option}=on");
        let with_on: Vec<&str> = [&[on.as_str()][..], base].concat();
        let (a, b) = (plan_of(&bare), plan_of(&with_on));
        assert!(a.is_ok(), "{bare:?}: {a:?}");
        // The seed from the clock differs from run to run; the rest must not.
        let strip = |mut p: plan::Plan| {
            p.seed = 0;
            p
        };
        assert_eq!(a.map(strip), b.map(strip), "{option}");
    }
}

#[test]
fn old_spellings_plan_as_their_1_0_equivalents() {
    // (0.4/0.5 command line, 1.0 command line with the same meaning)
    let pairs: &[(&[&str], &[&str])] = &[
        (
            &[
                "--test=oltp",
                "--oltp-tables-count=4",
                "--oltp-table-size=1000",
                "--num-threads=8",
                "--max-time=60",
                "run",
            ],
            &[
                "oltp_read_write",
                "--tables=4",
                "--table-size=1000",
                "--threads=8",
                "--time=60",
                "run",
            ],
        ),
        (
            &[
                "--test=oltp",
                "--oltp-read-only=on",
                "--oltp-point-selects=5",
                "--oltp-range-size=50",
                "--max-requests=0",
                "--max-time=10",
                "run",
            ],
            &[
                "oltp_read_only",
                "--point-selects=5",
                "--range-size=50",
                "--time=10",
                "run",
            ],
        ),
        (
            &[
                "--test=oltp",
                "--oltp-simple-ranges=2",
                "--oltp-sum-ranges=3",
                "--oltp-order-ranges=4",
                "--oltp-distinct-ranges=5",
                "--oltp-index-updates=6",
                "--oltp-non-index-updates=7",
                "--oltp-skip-trx=on",
                "--oltp-auto-inc=off",
                "--max-time=10",
                "run",
            ],
            &[
                "oltp_read_write",
                "--simple-ranges=2",
                "--sum-ranges=3",
                "--order-ranges=4",
                "--distinct-ranges=5",
                "--index-updates=6",
                "--non-index-updates=7",
                "--skip-trx=on",
                "--auto-inc=off",
                "--time=10",
                "run",
            ],
        ),
        (
            &[
                "--test=oltp",
                "--oltp-dist-type=gaussian",
                "--oltp-dist-iter=6",
                "--oltp-dist-pct=2",
                "--oltp-dist-res=50",
                "--max-time=10",
                "run",
            ],
            &[
                "oltp_read_write",
                "--rand-type=gaussian",
                "--rand-spec-iter=6",
                "--rand-spec-pct=2",
                "--rand-spec-res=50",
                "--time=10",
                "run",
            ],
        ),
        (
            &[
                "--test=oltp",
                "--mysql-table-engine=innodb",
                "--oltp-reconnect-mode=transaction",
                "--max-time=10",
                "run",
            ],
            &[
                "oltp_read_write",
                "--mysql-storage-engine=innodb",
                "--reconnect=1",
                "--time=10",
                "run",
            ],
        ),
        (
            &[
                "--test=oltp",
                "--oltp-test-mode=nontrx",
                "--oltp-nontrx-mode=update_key",
                "--max-time=10",
                "run",
            ],
            &["oltp_update_index", "--time=10", "run"],
        ),
        (
            &[
                "--test=/usr/share/sysbench/tests/db/select.lua",
                "--oltp-table-size=500",
                "--max-time=10",
                "run",
            ],
            &["oltp_point_select", "--table-size=500", "--time=10", "run"],
        ),
        (
            &[
                "--test=tests/db/oltp.lua",
                "--oltp-tables-count=2",
                "--tx-rate=50",
                "--max-time=10",
                "run",
            ],
            &[
                "oltp_read_write",
                "--tables=2",
                "--rate=50",
                "--time=10",
                "run",
            ],
        ),
        (
            &[
                "--test=cpu",
                "--cpu-max-prime=20000",
                "--num-threads=2",
                "--max-requests=500",
                "run",
            ],
            &[
                "cpu",
                "--cpu-max-prime=20000",
                "--threads=2",
                "--events=500",
                "--time=0",
                "run",
            ],
        ),
        (
            &[
                "--test=fileio",
                "--file-test-mode=rndrw",
                "--file-total-size=1G",
                "--max-time=30",
                "run",
            ],
            &[
                "fileio",
                "--file-test-mode=rndrw",
                "--file-total-size=1G",
                "--time=30",
                "run",
            ],
        ),
    ];
    for (old, new) in pairs {
        // 0.4's built-in test names its one table sbtest, where 1.0 says sbtest1.
        let mut new = new.to_vec();
        if old[0] == "--test=oltp" && !old.iter().any(|o| o.starts_with("--oltp-tables-count")) {
            new.insert(1, "--oltp-table-name=sbtest");
        }
        let (a, b) = (plan_of(old), plan_of(&new));
        assert!(a.is_ok(), "{old:?}: {a:?}");
        assert_eq!(a, b, "{old:?} against {new:?}");
    }
}

/// fleetbench's own options that change a workload's spec (the references have the rest).
const OWN: &[&[&str]] = &[
    &[
        "fileio",
        "--file-dir=sub/dir",
        "--file-test-mode=rndrw",
        "run",
    ],
    &[
        "oltp_point_select",
        "--server-vars=max_connections,sync_binlog",
        "run",
    ],
    &[
        "oltp_point_select",
        "--rand-type=zipfian",
        "--rand-zipfian-exp=1.1",
        "run",
    ],
    &["oltp_point_select", "--mysql-ignore-errors=all", "run"],
    &[
        "oltp_read_write",
        "--tables=3",
        "--target",
        "a=mysql://u:secret@db1:3307/one",
        "--target",
        "b=mysql://v:other@db2:3308/two?socket=/run/my.sock&ssl-mode=preferred",
        "--table-map",
        "sbtest1-2=a,sbtest3=b",
        "run",
    ],
    &[
        "tpcc",
        "--mysql-port=3307",
        "--mysql-password=pw",
        "--warehouses=7",
        "--foreign-keys=off",
        "--warehouse-split=partition",
        "--keying-think=spec",
        "--mysql-storage-engine=myisam",
        "--server-vars=sync_binlog",
        "run",
    ],
    &[
        "tpcc",
        "--target",
        "db=mysql://u:p@db1:3308/t?ssl-mode=required",
        "--warehouses=3",
        "prepare",
    ],
    // A Lua script: its own options, the built-in ones it takes, a command of its own.
    &[
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/lua/fleet/fleet_test.lua"
        ),
        "--rows=9",
        "--fail_once",
        "--mysql-ignore-errors=1062",
        "--db-ps-mode=disable",
        "--rand-type=pareto",
        "--mysql-host=db1,db2",
        "--time=5",
        "run",
    ],
    &[
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/lua/fleet/fleet_test.lua"
        ),
        "--threads=3",
        "check",
    ],
];

/// The plan's workload through the wire (as bytes, as gRPC carries them) and back, as an
/// agent holding every table would see it.
fn round_trip(w: &Workload) -> Result<Workload, String> {
    let tables = match w {
        Workload::Oltp(o) => o.config.tables.clone(),
        _ => Vec::new(),
    };
    let bytes = prost::Message::encode_to_vec(&workload_to_proto(w, &tables));
    let spec: fleetbench_proto::v1::WorkloadSpec =
        prost::Message::decode(&bytes[..]).map_err(|e| e.to_string())?;
    workload_from_proto(Some(&spec), Path::new(""), 0).map_err(|e| e.to_string())
}

#[test]
fn every_option_survives_the_wire() {
    let lines = ACCEPTED
        .iter()
        .map(|(base, option)| {
            let mut args: Vec<&str> = base.to_vec();
            args.insert(args.len() - 1, option);
            args
        })
        .chain(OWN.iter().map(|l| l.to_vec()));
    let mut seen = std::collections::BTreeSet::new();
    let mut wrong = Vec::new();
    for args in lines {
        let p = plan_of(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        seen.insert(p.workload.capability());
        match (&p.workload, round_trip(&p.workload)) {
            (_, Err(e)) => wrong.push(format!("{args:?}: not decoded: {e}")),
            // An agent gets the tables, never the split, which is the coordinator's.
            (Workload::Oltp(a), Ok(Workload::Oltp(b))) if a.config == b.config => {}
            (a, Ok(b)) if !matches!(a, Workload::Oltp(_)) && *a == b => {}
            (a, Ok(b)) => wrong.push(format!("{args:?}:\n  sent {a:?}\n  got  {b:?}")),
        }
    }
    // pgbench's command line has a parser of its own (fleetbench pgbench ...).
    for line in [
        &[
            "-U",
            "bench",
            "-c",
            "4",
            "-T",
            "10",
            "-M",
            "prepared",
            "-b",
            "select-only@2",
            "-N",
        ][..],
        // -t per client, -L and -r travel too.
        &[
            "-U", "bench", "-c", "3", "-t", "7", "-R", "100", "-L", "2.5", "-r",
        ],
        &[
            "-U",
            "bench",
            "-i",
            "-s",
            "3",
            "-F",
            "90",
            "--partitions=2",
            "--unlogged-tables",
        ],
    ] {
        let args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        let a = fleetbench::plan::pgbench::parse(&args, &|_| None)
            .unwrap_or_else(|e| panic!("pgbench {line:?}: {e}"));
        for step in [
            fleetbench_model::workloads::pgbench::Step::Check,
            fleetbench_model::workloads::pgbench::Step::Generate,
        ] {
            let w = Workload::Pgbench(Box::new(a.config(3, step)));
            seen.insert(w.capability());
            match round_trip(&w) {
                Ok(b) if b == w => {}
                other => wrong.push(format!("pgbench {line:?}:\n  sent {w:?}\n  got  {other:?}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let all: std::collections::BTreeSet<&str> = fleetbench_agent::workloads::AVAILABLE
        .iter()
        .copied()
        .collect();
    assert_eq!(seen, all, "a round trip for every workload");
}

#[test]
fn an_agent_refuses_what_the_plan_refuses_with_the_same_words() {
    // A spec the command line would refuse, sent by hand.
    let p = plan_of(&["cpu", "run"]).unwrap();
    let mut spec = workload_to_proto(&p.workload, &[]);
    if let Some(fleetbench_proto::v1::workload_spec::Kind::Options(o)) = &mut spec.kind {
        o.options.insert("cpu-max-prime".into(), "2".into());
    }
    let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
        .unwrap_err()
        .to_string();
    let planner = plan_of(&["cpu", "--cpu-max-prime=2", "run"]).unwrap_err();
    assert_eq!(agent, planner);
    assert!(agent.contains("--cpu-max-prime"), "{agent}");
}

#[test]
fn every_declared_option_is_refused_alike_on_the_command_line_and_on_the_wire() {
    let mut refused = 0;
    for d in fleetbench_model::spec::DECLARED {
        for o in d.options {
            let arg = format!("--{}=x?", o.name);
            let mode = "--file-test-mode=seqwr";
            let mut args = vec![d.test, arg.as_str()];
            if d.test == "fileio" && o.name != "file-test-mode" {
                args.push(mode);
            }
            args.push("run");
            let Err(planner) = plan_of(&args) else {
                // Only a free-form path takes any word.
                assert_eq!(o.name, "file-dir", "{args:?} was accepted");
                continue;
            };
            assert!(planner.contains(&format!("--{}", o.name)), "{planner}");
            let mut options = std::collections::HashMap::from([(o.name.to_string(), "x?".into())]);
            if d.test == "fileio" && o.name != "file-test-mode" {
                options.insert("file-test-mode".into(), "seqwr".into());
            }
            let spec = fleetbench_proto::v1::WorkloadSpec {
                kind: Some(fleetbench_proto::v1::workload_spec::Kind::Options(
                    fleetbench_proto::v1::OptionSpec {
                        test: d.test.into(),
                        options,
                    },
                )),
            };
            let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
                .unwrap_err()
                .to_string();
            assert_eq!(agent, planner, "{args:?}");
            refused += 1;
        }
    }
    let declared: usize = fleetbench_model::spec::DECLARED
        .iter()
        .map(|d| d.options.len())
        .sum();
    assert_eq!(refused, declared - 1, "all but --file-dir");
}

#[test]
fn oltp_sizes_are_refused_alike_by_the_plan_and_an_agent() {
    let p = plan_of(&["oltp_read_write", "run"]).unwrap();
    let cases: [(&str, u64, u32); 4] = [
        ("--table-size=0", 0, 100),
        ("--table-size=3000000000", 3_000_000_000, 100),
        ("--range-size=0", 10_000, 0),
        ("--table-size=50", 50, 100),
    ];
    for (arg, table_size, range_size) in cases {
        let planner = plan_of(&["oltp_read_write", arg, "run"]).unwrap_err();
        let mut spec = workload_to_proto(&p.workload, &[(1, 0)]);
        if let Some(fleetbench_proto::v1::workload_spec::Kind::Oltp(o)) = &mut spec.kind {
            o.options
                .insert("table-size".into(), table_size.to_string());
            o.options
                .insert("range-size".into(), range_size.to_string());
        }
        let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
            .unwrap_err()
            .to_string();
        assert_eq!(agent, planner, "{arg}");
        let option = if arg.starts_with("--range") || table_size == 50 {
            "--range-size"
        } else {
            "--table-size"
        };
        assert!(agent.contains(option), "{agent}");
    }
}

#[test]
fn every_grouped_option_is_refused_alike_on_the_command_line_and_on_the_wire() {
    use fleetbench_proto::v1::workload_spec::Kind;
    // The wire's option bag of an OLTP or TPC-C spec.
    fn bag(spec: &mut fleetbench_proto::v1::WorkloadSpec) -> &mut HashMap<String, String> {
        match &mut spec.kind {
            Some(Kind::Oltp(w)) => &mut w.options,
            Some(Kind::Tpcc(w)) => &mut w.options,
            other => panic!("{other:?}"),
        }
    }
    use std::collections::HashMap;
    let mut refused = 0;
    let groups = fleetbench_model::spec::GROUPS
        .iter()
        .flat_map(|(heading, defs)| {
            // The Server group is OLTP's and TPC-C's alike.
            let tests: &[&str] = match *heading {
                "TPC-C" => &["tpcc"],
                "Server" => &["oltp_read_write", "tpcc"],
                _ => &["oltp_read_write"],
            };
            tests.iter().map(move |t| (*t, *defs))
        });
    for (test, defs) in groups {
        let good = plan_of(&[test, "run"]).unwrap();
        for o in defs {
            // Hosts, users, passwords and paths take any text (their refusals are
            // server.rs's tests); an agent is sent the targets they make.
            if fleetbench_model::workloads::server::TargetOptions::declares(o.name) {
                continue;
            }
            // Each spelling the command line takes, and what an agent is sent.
            for name in std::iter::once(&o.name).chain(o.aliases) {
                let arg = format!("--{name}=x?");
                let planner = plan_of(&[test, &arg, "run"]).unwrap_err();
                assert!(planner.contains(&format!("--{}:", o.name)), "{planner}");
                refused += 1;
                let mut spec = workload_to_proto(&good.workload, &[(1, 0)]);
                // The plan's own options (--tables, --table-split, 0.4's, which it
                // translates) are not sent.
                if fleetbench_model::spec::TableSet::declares(o.name)
                    || fleetbench_model::workloads::oltp::legacy::OltpLegacy::declares(o.name)
                {
                    assert!(!bag(&mut spec).contains_key(o.name), "{}", o.name);
                    continue;
                }
                bag(&mut spec).insert(o.name.into(), "x?".into());
                let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
                    .unwrap_err()
                    .to_string();
                assert_eq!(agent, planner, "{arg}");
            }
        }
        // A name the declaration lacks is refused by an agent, not ignored.
        let mut spec = workload_to_proto(&good.workload, &[(1, 0)]);
        bag(&mut spec).insert("no-such-option".into(), "1".into());
        let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
            .unwrap_err()
            .to_string();
        assert!(agent.contains("--no-such-option"), "{agent}");
    }
    assert!(refused > 30, "{refused}");
}

#[test]
fn oltp_options_reach_an_agent_as_given_by_either_spelling() {
    let old = plan_of(&[
        "--test=oltp",
        "--oltp-table-size=777",
        "--oltp-point-selects=4",
        "--oltp-auto-inc=off",
        "--delta=9",
        "--oltp-dist-type=gaussian",
        "--oltp-dist-iter=5",
        "run",
    ])
    .unwrap();
    let new = plan_of(&[
        "oltp_read_write",
        "--table-size=777",
        "--point-selects=4",
        "--auto-inc=off",
        "--delta=9",
        "--rand-type=gaussian",
        "--rand-spec-iter=5",
        "run",
    ])
    .unwrap();
    let options = |w: &Workload| match w {
        Workload::Oltp(o) => (o.config.options, o.config.distribution.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(options(&old.workload), options(&new.workload));
    assert_eq!(
        options(&new.workload).1,
        fleetbench_model::rand::Distribution::Gaussian { iter: 5 }
    );
    let (o, distribution) = options(&new.workload);
    assert_eq!(
        (o.table_size, o.point_selects, o.auto_inc, o.delta),
        (777, 4, false, 9)
    );
    // What an agent decodes from the Start is what the plan holds.
    let spec = workload_to_proto(&new.workload, &[(1, 0)]);
    match workload_from_proto(Some(&spec), Path::new(""), 0).unwrap() {
        Workload::Oltp(a) => {
            assert_eq!(a.config.options, o);
            assert_eq!(a.config.distribution, distribution);
        }
        other => panic!("{other:?}"),
    }
    // The result document records them under the JSON names, typed.
    let fields: std::collections::BTreeMap<String, serde_json::Value> =
        new.workload.fields().into_iter().collect();
    assert_eq!(fields["table_size"], 777);
    assert_eq!(fields["auto_inc"], false);
    assert_eq!(fields["delta"], 9);
    assert_eq!(fields["range_size"], 100);
    assert_eq!(fields["rand_type"], "gaussian");
    assert_eq!(fields["rand_spec_iter"], 5);
    // Only the parameters the distribution uses are recorded.
    assert!(!fields.contains_key("rand_spec_pct"), "{fields:?}");
}
