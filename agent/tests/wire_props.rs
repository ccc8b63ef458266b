//! Property test over the wire: random and mutated Start messages of every workload kind
//! (OLTP, cpu, fileio, memory, threads, mutex) go through the agent's own validation
//! (`service::validate_start`, what Run calls before anything starts). None may panic,
//! abort or allocate without bound: each either validates or is refused with a Status.
//!
//! Bounded and repeatable: a fixed number of cases from a seeded generator (the seed is in
//! every failure message; FLEETBENCH_PROP_SEED and FLEETBENCH_PROP_CASES change them). The
//! process's address space is capped first, so the agent's memory checks see a small host
//! and a missing check fails the test instead of taking the machine down.

use fleetbench_agent::service::validate_start;
use fleetbench_model::workloads::oltp::Script;
use fleetbench_proto::v1::{self as pb, workload_spec::Kind};
use fleetbench_testkit::{SplitMix64, cap_address_space, env_u64};
use prost::Message;

/// The shared generator, and `sane`: while set, values are the plausible ones (first good
/// word, small numbers), so that whole messages validate often enough for the paths after
/// validation to be exercised too.
struct Rng {
    mix: SplitMix64,
    sane: bool,
}

impl std::ops::Deref for Rng {
    type Target = SplitMix64;
    fn deref(&self) -> &SplitMix64 {
        &self.mix
    }
}

impl std::ops::DerefMut for Rng {
    fn deref_mut(&mut self) -> &mut SplitMix64 {
        &mut self.mix
    }
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng {
            mix: SplitMix64(seed),
            sane: false,
        }
    }
    /// Edge values, small values and values of every magnitude (log-uniform).
    fn u64(&mut self) -> u64 {
        if self.sane {
            return 1 + self.below(16);
        }
        match self.below(6) {
            0 => [0, 1, 2, 3, 7, 8, 511, 512, 4096, 16384][self.below(10) as usize],
            1 => u64::MAX - self.below(3),
            2 => 1u64 << self.below(64),
            3 => self.below(100),
            _ => self.next_u64() >> self.below(64),
        }
    }
    fn u32(&mut self) -> u32 {
        if self.sane {
            return 1 + self.below(16) as u32;
        }
        match self.below(4) {
            0 => u32::MAX - self.below(3) as u32,
            _ => self.u64() as u32,
        }
    }
    fn f64(&mut self) -> f64 {
        if self.sane {
            return 0.5;
        }
        match self.below(5) {
            0 => [
                0.0,
                -1.0,
                1.0,
                0.5,
                100.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MIN_POSITIVE,
                1e308,
            ][self.below(10) as usize],
            1 => (self.next_u64() as i64) as f64,
            _ => f64::from_bits(self.next_u64()) % 200.0,
        }
    }
    /// A known good word, or bytes a client might send instead.
    fn word(&mut self, good: &[&str]) -> String {
        if self.sane {
            return good[0].to_string();
        }
        match self.below(4) {
            0 => self.garbage(),
            _ => self.pick(good).to_string(),
        }
    }
    fn garbage(&mut self) -> String {
        self.mix
            .garbage(40, &['/', '.', '\0', '\n', ',', '=', '%', ' '], b'a', 26)
    }
}

fn target(r: &mut Rng) -> pb::Target {
    pb::Target {
        name: r.word(&["default", "master", "slave", ""]),
        driver: r.word(&["", "", "pgsql", "mysql"]),
        host: r.word(&["127.0.0.1", "::1", "db1", "", "localhost"]),
        port: r.word(&["3306"]).parse().unwrap_or_else(|_| r.u32()),
        socket: r.word(&["", "", "/nonexistent/mysqld.sock"]),
        user: r.word(&["sbtest", "", "root"]),
        password: r.word(&["", "pw"]),
        database: r.word(&["sbtest", ""]),
        ssl_mode: r.word(&[
            "",
            "disabled",
            "preferred",
            "required",
            "verify_ca",
            "VERIFY-IDENTITY",
        ]),
        // Paths the agent reads: only ones that do not exist or are empty here.
        ssl_ca: r.word(&["", "", "/nonexistent/ca.pem", "/dev/null"]),
        ssl_cert: r.word(&["", "", "/nonexistent/cert.pem"]),
        ssl_key: r.word(&["", "", "/nonexistent/key.pem"]),
        server_public_key: r.word(&["", "", "/nonexistent/public.pem", "/dev/null"]),
        get_server_public_key: r.chance(2),
    }
}

fn oltp(r: &mut Rng) -> pb::OltpSpec {
    let targets: Vec<_> = (0..r.below(4).max(u64::from(r.sane)))
        .map(|_| target(r))
        .collect();
    let tables = (0..match r.below(8) {
        0 if !r.sane => 0,
        // Over the agent's table limit now and then.
        1 if !r.sane => 70_000,
        _ => r.below(20),
    })
        .map(|i| pb::TableRef {
            number: if r.chance(10) { r.u32() } else { i as u32 + 1 },
            target: if r.chance(10) {
                r.u32()
            } else {
                r.below(3) as u32
            },
        })
        .collect();
    let mix = vec![
        ("table-size", r.u64().to_string()),
        ("range-size", r.u32().to_string()),
        ("point-selects", r.u32().to_string()),
        ("simple-ranges", r.u32().to_string()),
        ("sum-ranges", r.u32().to_string()),
        ("order-ranges", r.u32().to_string()),
        ("distinct-ranges", r.u32().to_string()),
        ("index-updates", r.u32().to_string()),
        ("non-index-updates", r.u32().to_string()),
        ("delete-inserts", r.u32().to_string()),
        ("range-selects", switch(r, 2)),
        ("auto-inc", switch(r, 2)),
        ("secondary", switch(r, 2)),
        ("create-secondary", switch(r, 2)),
        ("random-points", r.u32().to_string()),
        ("number-of-ranges", r.u32().to_string()),
        ("delta", r.u32().to_string()),
        ("skip-trx", switch(r, 2)),
        ("db-ps-mode", r.word(&["auto", "disable", "auto"])),
        (
            "mysql-ignore-errors",
            match r.below(4) {
                0 => "all".to_string(),
                1 => "none".to_string(),
                _ => (0..r.below(5))
                    .map(|_| r.u32().to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            },
        ),
        ("reconnect", r.u64().to_string()),
        // The 0.4 delays mostly at their defaults, so that OLTP specs still validate often
        // enough for the test to reach both outcomes.
        (
            "oltp-connect-delay",
            if r.chance(8) { r.u64() } else { 0 }.to_string(),
        ),
        (
            "oltp-user-delay-min",
            if r.chance(8) { r.u64() } else { 0 }.to_string(),
        ),
        (
            "oltp-user-delay-max",
            if r.chance(8) { r.u64() } else { 0 }.to_string(),
        ),
        (
            "rand-type",
            r.word(&["special", "uniform", "gaussian", "pareto", "zipfian", ""]),
        ),
        ("rand-spec-iter", r.u32().to_string()),
        ("rand-spec-pct", r.f64().to_string()),
        ("rand-spec-res", r.f64().to_string()),
        ("rand-pareto-h", r.f64().to_string()),
        ("rand-zipfian-exp", r.f64().to_string()),
        (
            "mysql-storage-engine",
            r.word(&["innodb", "myisam", "", "x;y"]),
        ),
        ("server-vars", server_vars(r)),
    ];
    pb::OltpSpec {
        script: r.word(&Script::ALL.map(Script::name)),
        targets,
        tables,
        options: bag(r, mix),
        // The 0.4 extras are mostly left at their defaults, so that OLTP specs still
        // validate often enough for the test to reach both outcomes.
        create_options: rarely_garbage(r),
        table_name: rarely_garbage(r),
        reconnect_random: r.chance(2),
        sp_name: rarely_garbage(r),
    }
}

/// `--server-vars`: now and then garbage, else a few names or none.
fn server_vars(r: &mut Rng) -> String {
    if r.chance(8) {
        r.garbage()
    } else {
        r.word(&["", "max_connections", "log_bin,sync_binlog"])
    }
}

/// A declared workload's options as text: mostly the generated values, now and then a
/// garbage value or a name the test does not declare.
fn declared(r: &mut Rng, test: &str, options: Vec<(&str, String)>) -> Kind {
    Kind::Options(pb::OptionSpec {
        test: test.into(),
        options: bag(r, options),
    })
}

/// Declared options as an option bag: some left out (their defaults apply), now and then
/// one garbage value or an undeclared name.
fn bag(r: &mut Rng, mut options: Vec<(&str, String)>) -> std::collections::HashMap<String, String> {
    if r.chance(10) && !options.is_empty() {
        let i = r.below(options.len() as u64) as usize;
        options[i].1 = r.garbage();
    }
    let mut map: std::collections::HashMap<String, String> = options
        .into_iter()
        .filter(|_| !r.chance(12))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    if r.chance(12) {
        map.insert(r.garbage(), r.garbage());
    }
    map
}

/// Empty (the default) but one time in eight garbage.
fn rarely_garbage(r: &mut Rng) -> String {
    if r.chance(8) {
        r.garbage()
    } else {
        String::new()
    }
}

fn switch(r: &mut Rng, one_in: u64) -> String {
    if r.chance(one_in) { "on" } else { "off" }.into()
}

fn fileio(r: &mut Rng) -> Kind {
    // Now and then exactly the small file set made in the work directory, so that the
    // opening (and mapping) of real files is exercised, not only refusals.
    let real = r.chance(3);
    let flags: Vec<String> = (0..r.below(3))
        .map(|_| r.word(&["sync", "dsync", "direct", ""]))
        .collect();
    let options = vec![
        (
            "file-dir",
            if real {
                "set".into()
            } else {
                r.word(&["", ".", "set", "..", "/etc", "a/../../b"])
            },
        ),
        (
            "file-num",
            if real { 1 + r.below(4) as u32 } else { r.u32() }.to_string(),
        ),
        (
            "file-block-size",
            if real {
                [512, 4096, 16384][r.below(3) as usize]
            } else {
                r.u64()
            }
            .to_string(),
        ),
        (
            "file-total-size",
            if real {
                65536 * (1 + r.below(4))
            } else {
                r.u64()
            }
            .to_string(),
        ),
        (
            "file-test-mode",
            r.word(&["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw", ""]),
        ),
        ("file-io-mode", r.word(&["sync", "async", "mmap"])),
        ("file-async-backlog", r.u32().to_string()),
        ("file-extra-flags", flags.join(",")),
        ("file-fsync-freq", r.u32().to_string()),
        ("file-fsync-all", switch(r, 2)),
        ("file-fsync-end", switch(r, 2)),
        ("file-fsync-mode", r.word(&["fsync", "fdatasync", ""])),
        ("file-rw-ratio", r.f64().to_string()),
    ];
    declared(r, "fileio", options)
}

fn memory(r: &mut Rng) -> Kind {
    let block_size = r.u64();
    // Mostly a whole number of blocks, sometimes anything.
    let total_size = if r.chance(8) {
        r.u64()
    } else {
        block_size.saturating_mul(2)
    };
    let options = vec![
        ("memory-block-size", block_size.to_string()),
        ("memory-total-size", total_size.to_string()),
        ("memory-scope", r.word(&["global", "local"])),
        ("memory-hugetlb", switch(r, 8)),
        ("memory-oper", r.word(&["read", "write", "none"])),
        ("memory-access-mode", r.word(&["seq", "rnd"])),
    ];
    declared(r, "memory", options)
}

fn kind(r: &mut Rng, which: u64) -> Option<Kind> {
    Some(match which {
        0 => Kind::Oltp(oltp(r)),
        1 => {
            let o = vec![("cpu-max-prime", r.u64().to_string())];
            declared(r, "cpu", o)
        }
        2 => fileio(r),
        3 => memory(r),
        4 => {
            let o = vec![
                ("thread-yields", r.u32().to_string()),
                ("thread-locks", r.u32().to_string()),
            ];
            declared(r, "threads", o)
        }
        5 => {
            let o = vec![
                ("mutex-num", r.u32().to_string()),
                ("mutex-locks", r.u32().to_string()),
                ("mutex-loops", r.u32().to_string()),
            ];
            declared(r, "mutex", o)
        }
        6 => Kind::Tpcc(tpcc(r)),
        _ => return None,
    })
}

fn tpcc(r: &mut Rng) -> pb::TpccSpec {
    // Mostly a sensible share of a small W, so that specs validate often enough.
    let warehouses = if r.chance(4) {
        r.u32()
    } else {
        1 + r.below(20) as u32
    };
    let first = if r.chance(4) {
        r.u32()
    } else {
        1 + r.below(u64::from(warehouses.max(1))) as u32
    };
    let last = if r.chance(4) {
        r.u32()
    } else {
        first.saturating_add(r.below(3) as u32)
    };
    let own = vec![
        ("warehouses", warehouses.to_string()),
        ("foreign-keys", switch(r, 2)),
        ("warehouse-split", r.word(&["random", "partition", "half"])),
        ("keying-think", r.word(&["off", "spec", "off"])),
        (
            "mysql-storage-engine",
            if r.chance(8) {
                r.garbage()
            } else {
                r.word(&["innodb", "myisam"])
            },
        ),
        ("server-vars", server_vars(r)),
    ];
    pb::TpccSpec {
        target: (!r.chance(10)).then(|| target(r)),
        options: bag(r, own),
        first_warehouse: first,
        last_warehouse: last,
        step: r.word(&["create", "load", "index", "check", ""]),
        load_items: r.chance(2),
        c_last_load: if r.chance(8) {
            r.u32()
        } else {
            r.below(256) as u32
        },
    }
}

fn start(r: &mut Rng, which: u64) -> pb::Start {
    pb::Start {
        run_id: r.garbage(),
        workload: (!r.chance(20)).then(|| pb::WorkloadSpec {
            kind: kind(r, which),
        }),
        threads: if r.chance(2) {
            1 + r.below(8) as u32
        } else {
            r.u32()
        },
        first_thread: if r.chance(2) { 0 } else { r.u32() },
        time_limit_ms: if r.chance(2) { 1000 } else { r.u64() },
        event_limit: r.u64(),
        tick_ms: r.u64(),
        seed: r.next_u64(),
        total_threads: r.u32(),
        rate: match r.below(8) {
            0 => f64::from_bits(r.next_u64()),
            1 => [f64::NAN, f64::INFINITY, -1.0, 1e300][r.below(4) as usize],
            2..=4 => r.below(10_000) as f64,
            _ => 0.0,
        },
        warmup_ms: match r.below(8) {
            0 => r.u64(),
            1 => r.below(200),
            _ => 0,
        },
        // Targets past the workload's are refused, never read.
        sample_servers: (0..r.below(3)).map(|_| r.below(4) as u32).collect(),
        replicas: Vec::new(),
        replication_primaries: Vec::new(),
        ready_timeout_ms: if r.chance(2) { 0 } else { r.u64() },
    }
}

/// Flips, inserts, deletes or truncates bytes of an encoded message.
fn mutate(r: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + r.below(8) {
        let at = r.below(bytes.len() as u64 + 1) as usize;
        match r.below(4) {
            0 if at < bytes.len() => bytes[at] ^= 1 << r.below(8),
            1 => bytes.insert(at, r.next_u64() as u8),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => bytes.truncate(at),
        }
    }
}

#[test]
fn random_and_mutated_start_messages_validate_or_are_refused() {
    let seed = env_u64("FLEETBENCH_PROP_SEED", 0x5EED_F1EE_7BE7);
    let cases = env_u64("FLEETBENCH_PROP_CASES", 3000);
    let work = std::env::temp_dir().join(format!("fleetbench-wire-props-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("set")).unwrap();
    // The file set fileio cases may open: 4 files of 256 KiB, as fileio prepare makes them.
    for n in 0..4 {
        std::fs::write(work.join(format!("set/test_file.{n}")), vec![0u8; 262_144]).unwrap();
    }
    cap_address_space(512 << 20);

    let mut r = Rng::new(seed);
    let mut ok = [0u32; 7];
    let mut refused = [0u32; 7];
    for case in 0..cases {
        let which = case % 7;
        r.sane = case % 28 < 7;
        let msg = start(&mut r, which);
        r.sane = false;
        let mut check = |msg: &pb::Start, what: &str| {
            let result = std::panic::catch_unwind(|| validate_start(msg, &work));
            match result {
                Ok(Ok(())) => ok[which as usize] += 1,
                Ok(Err(status)) => {
                    assert!(
                        !status.message().is_empty(),
                        "seed {seed:#x} case {case} ({what}): a refusal without a reason: {msg:?}"
                    );
                    refused[which as usize] += 1;
                }
                Err(_) => panic!("seed {seed:#x} case {case} ({what}) panicked on {msg:?}"),
            }
        };
        check(&msg, "generated");
        // The same message as bytes with damage, as a broken or hostile client sends it.
        let mut bytes = msg.encode_to_vec();
        mutate(&mut r, &mut bytes);
        if let Ok(mutated) = pb::Start::decode(bytes.as_slice()) {
            check(&mutated, "mutated");
        }
    }
    std::fs::remove_dir_all(&work).unwrap();
    eprintln!(
        "seed {seed:#x}: validated {ok:?}, refused {refused:?} (oltp, cpu, fileio, memory, threads, mutex, tpcc)"
    );
    // The generator reaches both outcomes for every kind, or the test proves little.
    for (i, name) in [
        "oltp", "cpu", "fileio", "memory", "threads", "mutex", "tpcc",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            refused[i] > 0,
            "no {name} case was refused: {ok:?} {refused:?}"
        );
        assert!(ok[i] > 0, "no {name} case validated: {ok:?} {refused:?}");
    }
}

#[test]
fn the_generator_is_repeatable() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    for which in 0..7 {
        assert_eq!(start(&mut a, which), start(&mut b, which));
    }
}
