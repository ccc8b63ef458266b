//! Property test over the coordinator's command line: random argument vectors (every
//! option clap knows, under its names and aliases, with good, edge and garbage values,
//! repeated, misplaced, among random words) and mutated valid command lines go through
//! the real parser and planner (`cli::parse`, `sweep::take_extras`, `plan::build`,
//! `plan::check_threads`, as `fleetbench` runs them). None may panic, abort or allocate
//! without bound: each gives a plan or an error with a message.
//!
//! Bounded and repeatable: a fixed number of cases from a seeded generator (the seed is in
//! every failure message; FLEETBENCH_PROP_SEED and FLEETBENCH_PROP_CASES change them). The
//! address space is capped first, so an unbounded allocation fails this test rather than
//! the machine.

use clap::CommandFactory;
use fleetbench::{cli, plan, sweep};
use fleetbench_testkit::{SplitMix64, cap_address_space, env_u64};

/// The shared generator with this test's kind of garbage (option-like punctuation).
struct Rng(SplitMix64);

impl std::ops::Deref for Rng {
    type Target = SplitMix64;
    fn deref(&self) -> &SplitMix64 {
        &self.0
    }
}

impl std::ops::DerefMut for Rng {
    fn deref_mut(&mut self) -> &mut SplitMix64 {
        &mut self.0
    }
}

impl Rng {
    fn garbage(&mut self) -> String {
        let punct = ['-', '=', ',', ':', '@', '[', ']', '/', '%', ' '];
        self.0.garbage(24, &punct, b'0', 43)
    }
}

const WORDS: &[&str] = &[
    "cpu",
    "fileio",
    "memory",
    "threads",
    "mutex",
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_insert",
    "oltp_delete",
    "oltp_update_index",
    "oltp_update_non_index",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
    "oltp",
    "tests/db/oltp.lua",
    "tpcc",
    "check",
    "-w",
    "-c2",
    "-h",
    "-p",
    "prepare",
    "run",
    "cleanup",
    "run",
];

/// Values that mean something to some option, at and past their limits.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "8",
    "-1",
    "10",
    "95",
    "99.9",
    "101",
    "1.5",
    "nan",
    "inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1000000000",
    "100000",
    "4,8,16",
    "4,,8",
    ",",
    "1,2,3,4,5,6,7,8,9,10",
    "95,99,99.9",
    "1K",
    "16K",
    "1M",
    "8G",
    "1T",
    "1000000T",
    "18446744073709551615T",
    "on",
    "off",
    "true",
    "disable",
    "auto",
    "all",
    "1213,1020",
    "seqwr",
    "rndrw",
    "async",
    "mmap",
    "direct,sync",
    "sync,,direct",
    "fdatasync",
    "global",
    "local",
    "rnd",
    "write",
    "partition",
    "spec",
    "special",
    "zipfian",
    "shared",
    "partition",
    "required",
    "verify_identity",
    "127.0.0.1:7600",
    "[::1]:7600",
    "a:1,b:2",
    "host:70000",
    "default=mysql://u:p@127.0.0.1:3306/sbtest",
    "a=mysql://u:p@[::1]:3306/db",
    "b=mysql://u@h:70000/d",
    "c=mysql://u:p@h/d?socket=/tmp/s",
    "=mysql://",
    "sbtest1-5=a,sbtest6-10=b",
    "sbtest1-4294967295=a",
    "sbtest0-0=",
    "",
    "=",
    "--",
];

/// One random argument vector, program name first.
fn argv(r: &mut Rng, options: &[String]) -> Vec<String> {
    let mut args = vec!["fleetbench".to_string()];
    for _ in 0..r.below(12) {
        match r.below(10) {
            0..=1 => args.push(r.pick(WORDS).to_string()),
            2 => args.push(r.garbage()),
            3 => {
                // --opt value, as two arguments (or a missing value at the end).
                args.push(format!("--{}", r.pick(options)));
                if r.below(4) != 0 {
                    args.push(r.pick(VALUES).to_string());
                }
            }
            4 => {
                let name = r.pick(options).replace('-', "_");
                args.push(format!("--{name}={}", r.garbage()));
            }
            _ => args.push(format!("--{}={}", r.pick(options), r.pick(VALUES))),
        }
    }
    args
}

/// Valid command lines to damage.
const SEEDS: &[&[&str]] = &[
    &[
        "cpu",
        "--threads=4",
        "--time=10",
        "--cpu-max-prime=20000",
        "run",
    ],
    &[
        "--test=fileio",
        "--file-total-size=8G",
        "--file-test-mode=rndrw",
        "--num-threads=8",
        "run",
    ],
    &[
        "oltp_read_write",
        "--tables=10",
        "--table-size=1000000",
        "--target",
        "master=mysql://sbtest:pw@db1:3306/sbtest",
        "--target",
        "slave=mysql://sbtest:pw@[::1]:3306/sbtest",
        "--table-map",
        "sbtest1-5=master,sbtest6-10=slave",
        "--threads=16,32,48",
        "--warmup-time=5",
        "run",
    ],
    &[
        "memory",
        "--memory-block-size=1M",
        "--memory-total-size=10G",
        "--agents=a:7600,b:7600",
        "run",
    ],
    &["mutex", "--mutex-num=4096", "--local-agents=2", "run"],
    &["threads", "--thread-locks=8", "--thread-yields=100", "run"],
];

fn mutate(r: &mut Rng, seed: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = std::iter::once("fleetbench")
        .chain(seed.iter().copied())
        .map(String::from)
        .collect();
    for _ in 0..1 + r.below(4) {
        let at = 1 + r.below(args.len() as u64 - 1) as usize;
        match r.below(5) {
            0 => {
                let mut chars: Vec<char> = args[at].chars().collect();
                if !chars.is_empty() {
                    let i = r.below(chars.len() as u64) as usize;
                    chars[i] = r.garbage().chars().next().unwrap_or('9');
                }
                args[at] = chars.into_iter().collect();
            }
            1 => {
                // Repeat an argument: a repeated option takes the last value (sysbench 1.0), a
                // repeated agent is refused; either way, never a panic.
                let a = args[at].clone();
                args.insert(at, a);
            }
            2 if args.len() > 2 => {
                args.remove(at);
            }
            3 => {
                let v = r.pick(VALUES).to_string();
                args[at].push_str(&v);
            }
            _ => {
                let v = r.pick(VALUES).to_string();
                args.insert(at, v);
            }
        }
    }
    args
}

/// What `fleetbench` does with a command line before it talks to any agent.
fn parse_and_plan(args: &[String]) -> Result<(), String> {
    let mut raw = cli::parse(args).map_err(|e| e.to_string())?;
    let extras = sweep::take_extras(&mut raw).map_err(|e| e.to_string())?;
    if raw.test.is_none()
        && matches!(
            raw.words.first().map(String::as_str),
            Some("agents" | "stop" | "compare" | "report" | "scenario")
        )
    {
        return Ok(());
    }
    let p = plan::build(&raw).map_err(|e| e.to_string())?;
    for &n in extras.counts.iter().flatten() {
        plan::check_threads(n, &p.agents).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn random_and_mutated_command_lines_plan_or_are_refused() {
    let seed = env_u64("FLEETBENCH_PROP_SEED", 0xC0DE_5EED);
    let cases = env_u64("FLEETBENCH_PROP_CASES", 4000);
    // Every long name and alias clap accepts, so new options are covered without edits.
    let cmd = cli::RawArgs::command();
    let mut options: Vec<String> = cmd
        .get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().into_iter().flatten())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|o| o != "help" && o != "version")
        .collect();
    // And every declared one (the tests' and the groups'), with its aliases.
    let declared = fleetbench_model::spec::DECLARED
        .iter()
        .flat_map(|d| d.options)
        .chain(fleetbench_model::spec::GROUPS.iter().flat_map(|g| g.1));
    options.extend(declared.flat_map(|o| {
        std::iter::once(o.name)
            .chain(o.aliases.iter().copied())
            .map(str::to_string)
    }));
    options.sort();
    options.dedup();
    assert!(options.len() > 150, "{options:?}");
    cap_address_space(512 << 20);

    let mut r = Rng(SplitMix64(seed));
    let (mut planned, mut refused) = (0u32, 0u32);
    for case in 0..cases {
        let args = if case % 2 == 0 {
            argv(&mut r, &options)
        } else {
            let s = SEEDS[r.below(SEEDS.len() as u64) as usize];
            mutate(&mut r, s)
        };
        match std::panic::catch_unwind(|| parse_and_plan(&args)) {
            Ok(Ok(())) => planned += 1,
            Ok(Err(msg)) => {
                assert!(
                    !msg.trim().is_empty(),
                    "seed {seed:#x} case {case}: an error without a message for {args:?}"
                );
                refused += 1;
            }
            Err(_) => panic!("seed {seed:#x} case {case} panicked on {args:?}"),
        }
    }
    eprintln!("seed {seed:#x}: {planned} planned, {refused} refused");
    // Both outcomes are reached, or the generator proves little.
    assert!(
        planned > 0 && refused > 0,
        "{planned} planned, {refused} refused"
    );
    // The valid seeds themselves plan.
    for s in SEEDS {
        let args: Vec<String> = std::iter::once("fleetbench")
            .chain(s.iter().copied())
            .map(String::from)
            .collect();
        assert_eq!(parse_and_plan(&args), Ok(()), "{args:?}");
    }
}
