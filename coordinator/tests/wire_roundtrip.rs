//! Every workload's spec survives the wire: a plan built from a command line that sets
//! each option away from its default, encoded as a Start's workload and decoded the way an
//! agent decodes it, is the spec the plan holds. A field forgotten in either direction of
//! `fleetbench_agent::wire` shows up here.

use std::path::Path;

use fleetbench::plan::{self, Workload};
use fleetbench_agent::wire::{workload_from_proto, workload_to_proto};

fn plan_of(words: &[&str]) -> plan::Plan {
    let mut argv = vec!["fleetbench"];
    argv.extend_from_slice(words);
    let raw = fleetbench::cli::parse(argv).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    plan::build(&raw).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

/// The plan's workload through the wire and back, as agent `0` of one would see it.
fn round_trip(w: &Workload) -> Workload {
    let tables = match w {
        Workload::Oltp(o) => o.config.tables.clone(),
        _ => Vec::new(),
    };
    let spec = workload_to_proto(w, &tables);
    // Through the bytes too, as gRPC carries them.
    let bytes = prost::Message::encode_to_vec(&spec);
    let spec: fleetbench_proto::v1::WorkloadSpec = prost::Message::decode(&bytes[..]).unwrap();
    workload_from_proto(Some(&spec), Path::new(""), 0)
        .unwrap_or_else(|e| panic!("{} did not decode: {e}", w.name()))
}

#[test]
fn every_workload_spec_round_trips() {
    let lines: &[&[&str]] = &[
        &["cpu", "--cpu-max-prime=777", "run"],
        &[
            "memory",
            "--memory-block-size=4K",
            "--memory-total-size=1G",
            "--memory-scope=local",
            "--memory-oper=read",
            "--memory-access-mode=rnd",
            "run",
        ],
        &["threads", "--thread-yields=12", "--thread-locks=3", "run"],
        &[
            "mutex",
            "--mutex-num=9",
            "--mutex-locks=8",
            "--mutex-loops=7",
            "run",
        ],
        &[
            "fileio",
            "--file-num=3",
            "--file-block-size=8192",
            "--file-total-size=3M",
            "--file-test-mode=rndrw",
            "--file-io-mode=sync",
            "--file-async-backlog=7",
            "--file-extra-flags=dsync",
            "--file-fsync-freq=5",
            "--file-fsync-all=on",
            "--file-fsync-end=off",
            "--file-fsync-mode=fdatasync",
            "--file-rw-ratio=2.5",
            "--file-dir=sub/dir",
            "run",
        ],
        &[
            "oltp_read_write",
            "--tables=3",
            "--table-size=500",
            "--range-size=7",
            "--point-selects=3",
            "--simple-ranges=2",
            "--sum-ranges=3",
            "--order-ranges=4",
            "--distinct-ranges=5",
            "--index-updates=6",
            "--non-index-updates=7",
            "--delete-inserts=8",
            "--range-selects=off",
            "--auto-inc=off",
            "--skip-trx=on",
            "--secondary=on",
            "--create-secondary=off",
            "--mysql-storage-engine=myisam",
            "--mysql-create-options=ROW_FORMAT=FIXED",
            "--myisam-max-rows=5000",
            "--db-ps-mode=disable",
            "--mysql-ignore-errors=1062,1213",
            "--rand-type=pareto",
            "--rand-pareto-h=0.3",
            "--reconnect=11",
            "--oltp-connect-delay=5",
            "--oltp-user-delay-min=1",
            "--oltp-user-delay-max=2",
            "--server-vars=max_connections,sync_binlog",
            "--target",
            "a=mysql://u:secret@db1:3307/one",
            "--target",
            "b=mysql://v:other@db2:3308/two?socket=/run/my.sock&ssl-mode=preferred",
            "--table-map",
            "sbtest1-2=a,sbtest3=b",
            "run",
        ],
        &[
            "select_random_ranges",
            "--number-of-ranges=3",
            "--delta=9",
            "--rand-type=gaussian",
            "--mysql-ignore-errors=all",
            "run",
        ],
        &[
            "select_random_points",
            "--random-points=4",
            "--rand-type=special",
            "--rand-spec-iter=5",
            "--rand-spec-pct=2",
            "--rand-spec-res=60",
            "run",
        ],
        &[
            "--test=oltp",
            "--oltp-test-mode=sp",
            "--oltp-sp-name=db.proc",
            "--oltp-table-name=t0",
            "--oltp-reconnect-mode=random",
            "--rand-type=zipfian",
            "--rand-zipfian-exp=1.1",
            "run",
        ],
    ];
    let mut seen = std::collections::BTreeSet::new();
    for words in lines {
        let p = plan_of(words);
        seen.insert(p.workload.capability());
        let back = round_trip(&p.workload);
        match (&p.workload, &back) {
            // An agent gets the tables, never the split, which is the coordinator's.
            (Workload::Oltp(a), Workload::Oltp(b)) => assert_eq!(a.config, b.config, "{words:?}"),
            (a, b) => assert_eq!(a, b, "{words:?}"),
        }
        // The same validation on both sides: what the plan accepted, the agent accepts.
        back.validate().unwrap();
    }
    let all: std::collections::BTreeSet<&str> = fleetbench_agent::workloads::AVAILABLE
        .iter()
        .copied()
        .collect();
    assert_eq!(seen, all, "a round trip for every workload");
}

#[test]
fn an_agent_refuses_what_the_plan_refuses_with_the_same_words() {
    // A spec the command line would refuse, sent by hand.
    let p = plan_of(&["cpu", "run"]);
    let mut spec = workload_to_proto(&p.workload, &[]);
    if let Some(fleetbench_proto::v1::workload_spec::Kind::Cpu(c)) = &mut spec.kind {
        c.max_prime = 2;
    }
    let agent = workload_from_proto(Some(&spec), Path::new(""), 0)
        .unwrap_err()
        .to_string();
    let raw = fleetbench::cli::parse(["fleetbench", "cpu", "--cpu-max-prime=2", "run"]).unwrap();
    let planner = plan::build(&raw).unwrap_err().to_string();
    assert_eq!(agent, planner);
    assert!(agent.contains("--cpu-max-prime"), "{agent}");
}
