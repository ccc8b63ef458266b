//! The plan of a command line: its test and command, workload, threads, limits, seed,
//! rate and agents, each checked in the order the user meets them.

use super::READY_TIMEOUT_SECS;
use fleetbench_model::run;
use std::time::Duration;

use super::agents::{agents_of, check_threads};
use super::model::{AgentSource, Command, Plan, PlanError, Workload};
use super::values::{
    checkpoints, flag, forced_shutdown, invalid, num, parse_percentiles, parse_rate, seconds,
};
use super::workloads::workload_of;
use crate::cli::RawArgs;

/// Validates raw flags into a plan.
pub fn build(raw: &RawArgs) -> Result<Plan, PlanError> {
    let (workload, command) = match &raw.script {
        Some(sa) => super::script::workload(raw, sa)?,
        None => {
            let (test, command) = test_and_command(raw)?;
            let workload = workload_of(&test, raw)?;
            check_command(&workload, command, test)?;
            (workload, command)
        }
    };
    workload_options(raw, &workload)?;
    let threads = threads_of(raw, &workload, command)?;
    let (time, events) = limits(raw, &workload, command)?;
    let report_interval: u64 = seconds(
        &raw.report_interval,
        "report-interval",
        run::default_number("report-interval"),
    )?;
    let percentiles = parse_percentiles(
        raw.percentile
            .as_deref()
            .unwrap_or(run::default_of("percentile")),
    )?;
    let seed = seed_of(raw)?;
    let rate = rate_of(raw, &workload)?;
    let notes = notes_of(raw);
    let ready_timeout: u64 = seconds(&raw.ready_timeout, "ready-timeout", READY_TIMEOUT_SECS)?;
    if ready_timeout == 0 {
        return Err(invalid("ready-timeout", 0, "must be at least 1"));
    }
    let max_downtime_pct = max_downtime(raw)?;
    let agents = agents_of(raw)?;
    check_threads(threads, &agents)?;
    check_memory(&workload, &agents, threads)?;
    let replicas = super::observe::replicas_of(&raw.replica, &workload)?;
    let mut observe = super::observe::observe_of(
        &raw.observe,
        &raw.observe_process,
        raw.observe_dir.as_deref(),
        &workload,
        &replicas,
    )?;
    observe.no_status = !super::values::flag(&raw.server_status, "server-status", true)?;
    let mut plan = Plan {
        workload,
        command,
        threads,
        time: (time > 0).then(|| Duration::from_secs(time)),
        events: (events > 0).then_some(events),
        report_interval: (report_interval > 0).then(|| Duration::from_secs(report_interval)),
        percentiles,
        seed,
        json: raw.json.clone(),
        agents,
        ready_timeout: Duration::from_secs(ready_timeout),
        max_downtime_pct,
        notes,
        forced_shutdown: forced_shutdown(&raw.forced_shutdown, time)?,
        checkpoints: checkpoints(&raw.report_checkpoints)?,
        rate,
        tags: crate::report::meta::parse_tags(&raw.tag).map_err(PlanError::Tag)?,
        command_line: String::new(),
        warmup: Duration::ZERO,
        warn_client_saturation: raw.warn_client_saturation,
        observe,
    };
    super::script::add_built_ins(&mut plan, raw);
    Ok(plan)
}

/// The test as given (the TEST word or --test) and the command.
fn test_and_command(raw: &RawArgs) -> Result<(String, Command), PlanError> {
    let mut words = raw.words.iter();
    let test = match &raw.test {
        Some(t) => t.clone(),
        None => words.next().cloned().ok_or(PlanError::MissingTest)?,
    };
    let command = match words.next().map(String::as_str) {
        None => return Err(PlanError::MissingCommand(test)),
        Some("prepare") => Command::Prepare,
        Some("run") => Command::Run,
        Some("cleanup") => Command::Cleanup,
        Some("prewarm") => Command::Prewarm,
        Some("check") => Command::Check,
        Some(other) => return Err(PlanError::UnknownCommand(other.to_string())),
    };
    if let Some(extra) = words.next() {
        return Err(PlanError::ExtraArgument(extra.clone()));
    }
    // 0.5's parallel_prepare.lua: its `run` creates and loads the tables in parallel, one
    // share per thread, which is what prepare does here.
    let base = test.rsplit('/').next().unwrap_or(&test);
    let command = match (base.strip_suffix(".lua").unwrap_or(base), command) {
        ("parallel_prepare", Command::Run) => Command::Prepare,
        _ => command,
    };
    Ok((test, command))
}

/// Whether the workload can run `command` (fileio's run needs a test mode), within the
/// bounds the agents hold a Start to, checked here first so that bad options never reach
/// an agent.
fn check_command(workload: &Workload, command: Command, test: String) -> Result<(), PlanError> {
    if let Workload::Fileio(f) = workload
        && f.mode.is_none()
        && command == Command::Run
    {
        return Err(PlanError::MissingTestMode);
    }
    workload.validate()?;
    if !workload.commands().contains(&command) {
        return Err(PlanError::Unsupported {
            test,
            command: command.name().into(),
        });
    }
    Ok(())
}

/// The options only some workloads take, refused for the others rather than ignored: a
/// test that reaches no database server (cpu, fileio, ...) takes no database option, and
/// only the built-in OLTP tests spread tables over targets.
fn workload_options(raw: &RawArgs, workload: &Workload) -> Result<(), PlanError> {
    let no_server = workload.targets().is_empty();
    // A scenario file must name a target even for a test that reaches no database: only
    // a --target typed on the command line is refused.
    let typed_target = raw.given.iter().any(|g| g == "target");
    let refused = [
        (
            no_server && typed_target && !raw.target.is_empty(),
            "--target",
        ),
        (no_server && raw.server_status.is_some(), "--server-status"),
        (no_server && raw.max_downtime.is_some(), "--max-downtime"),
        (
            raw.table_map.is_some() && !matches!(workload, Workload::Oltp(_)),
            "--table-map",
        ),
    ];
    match refused.iter().find(|(given, _)| *given) {
        None => Ok(()),
        Some((_, option)) => Err(PlanError::NotSupported(format!(
            "{option} with {} ({})",
            workload.name(),
            if no_server {
                "it reaches no database server"
            } else {
                "only the built-in OLTP tests spread their tables over targets"
            }
        ))),
    }
}

/// `--threads`, at least 1.
fn threads_of(raw: &RawArgs, workload: &Workload, command: Command) -> Result<u32, PlanError> {
    // TPC-C's load has no thread option in tpcc-mysql (tpcc_load is single-threaded):
    // without --threads it loads over 4 connections, spread over the agents.
    let default_threads = match (workload, command) {
        (Workload::Tpcc(_), Command::Prepare) => TPCC_LOAD_THREADS,
        _ => run::default_number("threads") as u32,
    };
    let threads: u32 = num(&raw.threads, "threads", default_threads)?;
    if threads == 0 {
        return Err(invalid("threads", 0, "must be at least 1"));
    }
    // A script's command that is not parallel runs once, in one thread.
    if let Workload::Script(s) = workload
        && !s.parallel
    {
        return Ok(1);
    }
    Ok(threads)
}

/// The run's time limit in seconds and its event limit (0: none); a run needs one.
fn limits(raw: &RawArgs, workload: &Workload, command: Command) -> Result<(u64, u64), PlanError> {
    // An old (0.4/0.5) command line without limits runs 0.4/0.5's default of 10,000
    // events and no time limit; 1.0 spellings keep 1.0's 10 seconds.
    // An old command line with an event limit alone has 0.4/0.5's time limit: none.
    let old_limits = raw.legacy && !matches!(workload, Workload::Memory(_) | Workload::Mutex(_));
    let (time_default, events_default) = match (old_limits, &raw.time, &raw.events) {
        (true, None, None) => (0, LEGACY_EVENTS),
        (true, None, Some(_)) => (0, 0),
        _ => (run::default_number("time"), run::default_number("events")),
    };
    let time: u64 = seconds(&raw.time, "time", time_default)?;
    let mut events: u64 = num(&raw.events, "events", events_default)?;
    match workload {
        // memory ends when --memory-total-size has been transferred.
        Workload::Memory(m) => {
            let by_size = m.total_size / m.block_size;
            events = if events == 0 {
                by_size
            } else {
                events.min(by_size)
            };
        }
        // Each mutex thread runs exactly one event; --events does not apply.
        Workload::Mutex(_) => events = 0,
        _ => {}
    }
    // A script's command (prepare, cleanup, its own) runs to its end.
    if command == Command::Script {
        return Ok((0, 0));
    }
    let one_shot = matches!(workload, Workload::Mutex(_));
    if command == Command::Run && time == 0 && events == 0 && !one_shot {
        return Err(PlanError::Endless);
    }
    Ok((time, events))
}

/// `--rand-seed`, and 0.4/0.5's switch between a clock seed and a fixed one.
fn seed_of(raw: &RawArgs) -> Result<u64, PlanError> {
    let mut seed = num(
        &raw.rand_seed,
        "rand-seed",
        run::default_number("rand-seed"),
    )?;
    match (
        raw.rand_init.is_some(),
        flag(&raw.rand_init, "rand-init", false)?,
    ) {
        (true, true) if seed != 0 => {
            return Err(PlanError::Conflict(
                "--rand-init=on (a seed from the clock) and --rand-seed".into(),
            ));
        }
        (true, false) if raw.rand_seed.is_none() => seed = FIXED_SEED,
        _ => {}
    }
    Ok(seed)
}

/// `--rate`: events per second in an open loop (0: the closed loop).
fn rate_of(raw: &RawArgs, workload: &Workload) -> Result<f64, PlanError> {
    let rate = match raw.rate.as_deref() {
        None => 0.0,
        Some(r) => parse_rate(r)?,
    };
    if rate > 0.0 && workload.one_event_per_thread() {
        return Err(PlanError::NotSupported(format!(
            "--rate with {} (each thread runs one event; there is nothing to pace)",
            workload.name()
        )));
    }
    Ok(rate)
}

/// Notes on old options accepted without an effect here.
fn notes_of(raw: &RawArgs) -> Vec<String> {
    let mut notes = Vec::new();
    for (given, option, why) in [
        (
            raw.thread_stack_size.is_some(),
            "--thread-stack-size",
            "fleetbench sizes its worker stacks itself",
        ),
        (
            raw.debug.is_some(),
            "--debug",
            "for debug logs set FLEETBENCH_LOG=debug",
        ),
        (
            raw.validate.is_some(),
            "--validate",
            "fleetbench counts results exactly anyway",
        ),
    ] {
        if given {
            notes.push(format!(
                "{option} is accepted for sysbench 0.4/0.5 command lines and has no effect: {why}"
            ));
        }
    }
    notes
}

/// `--max-downtime`: a percent of the run, from 0 to 100.
fn max_downtime(raw: &RawArgs) -> Result<Option<f64>, PlanError> {
    Ok(match raw.max_downtime.as_deref().map(str::trim) {
        None => None,
        Some(v) => match v.parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => Some(p),
            _ => return Err(invalid("max-downtime", v, "a percent from 0 to 100")),
        },
    })
}

/// memory with embedded agents: they allocate in this process, so their blocks are
/// checked before any is started. Remote agents check their own memory when the Start
/// arrives.
fn check_memory(workload: &Workload, agents: &AgentSource, threads: u32) -> Result<(), PlanError> {
    if let (Workload::Memory(m), AgentSource::Local(k)) = (workload, agents) {
        // One shared block per embedded agent (global), or one per thread (local).
        let (blocks, one) = match (m.global, *k) {
            (true, 1) => (1, true),
            (true, k) => (k, false),
            (false, _) => (threads, false),
        };
        fleetbench_model::workloads::memory::check_sizes(m.block_size, blocks, one)
            .map_err(|e| PlanError::Limit(e.to_string()))?;
    }
    Ok(())
}

/// sysbench 0.4/0.5's `--max-requests` default, for old command lines without limits.
pub const LEGACY_EVENTS: u64 = 10_000;

/// The seed of `--rand-init=off` (0.4/0.5's fixed seed) when --rand-seed gives none.
pub const FIXED_SEED: u64 = 1;

/// Loading connections of a TPC-C prepare without --threads.
pub const TPCC_LOAD_THREADS: u32 = 4;

#[cfg(test)]
mod tests {
    use super::super::test_support::{plan, refused_option};
    use super::*;
    use crate::plan::*;

    #[test]
    fn old_command_lines_without_limits_run_ten_thousand_events() {
        let limits = |args: &[&str]| {
            let p = plan(args).unwrap();
            (p.time.map(|t| t.as_secs()), p.events)
        };
        assert_eq!(limits(&["--test=cpu", "run"]), (None, Some(10_000)));
        assert_eq!(
            limits(&["cpu", "--num-threads=2", "run"]),
            (None, Some(10_000))
        );
        assert_eq!(
            limits(&["--test=tests/db/oltp.lua", "--oltp-table-size=1000", "run"]),
            (None, Some(10_000))
        );
        // A limit given keeps its own meaning; an event limit alone has 0.4/0.5's time
        // limit (none); 1.0 spellings keep 1.0's 10 s.
        assert_eq!(
            limits(&["--test=cpu", "--max-time=5", "run"]),
            (Some(5), None)
        );
        assert_eq!(
            limits(&["--test=cpu", "--max-requests=7", "run"]),
            (None, Some(7))
        );
        assert_eq!(limits(&["cpu", "--events=7", "run"]), (Some(10), Some(7)));
        assert_eq!(limits(&["cpu", "--threads=2", "run"]), (Some(10), None));
        // memory ends by its total size, as before.
        assert_ne!(limits(&["--test=memory", "run"]).1, Some(10_000));
    }

    #[test]
    fn old_seed_switches_and_options_without_effect() {
        let seed = |args: &[&str]| plan(&[&["cpu"], args, &["run"]].concat()).map(|p| p.seed);
        assert_eq!(seed(&["--rand-init=on"]).unwrap(), 0);
        assert_eq!(seed(&["--rand-init"]).unwrap(), 0);
        assert_eq!(seed(&["--init-rng=off"]).unwrap(), FIXED_SEED);
        assert_eq!(seed(&["--rand-init=off", "--rand-seed=7"]).unwrap(), 7);
        assert!(matches!(
            seed(&["--rand-init=on", "--rand-seed=7"]),
            Err(PlanError::Conflict(_))
        ));
        assert!(seed(&["--rand-init=maybe"]).is_err());
        // 0.4's OLTP options in 1.0 terms.
        let oltp = |args: &[&str]| match plan(args).unwrap().workload {
            Workload::Oltp(o) => o.config,
            w => panic!("{w:?}"),
        };
        let c = oltp(&[
            "--test=oltp",
            "--mysql-table-engine=myisam",
            "--oltp-dist-type=uniform",
            "--oltp-auto-inc=off",
            "run",
        ]);
        assert!(c.options.skip_trx && !c.options.auto_inc);
        assert_eq!(c.distribution.name(), "uniform");
        assert!(
            !oltp(&["--test=oltp", "--mysql-table-engine=innodb", "run"])
                .options
                .skip_trx
        );
        assert!(
            oltp(&["--test=oltp", "--mysql-engine-trx=no", "run"])
                .options
                .skip_trx
        );
        assert!(
            !oltp(&[
                "--test=oltp",
                "--mysql-table-engine=myisam",
                "--mysql-engine-trx=yes",
                "run"
            ])
            .options
            .skip_trx
        );
        // A 1.0 command line keeps BEGIN/COMMIT with MyISAM, as sysbench 1.0 does.
        assert!(
            !oltp(&["oltp_read_write", "--mysql-storage-engine=myisam", "run"])
                .options
                .skip_trx
        );
        let c = oltp(&[
            "--test=oltp",
            "--oltp-dist-type=gaussian",
            "--oltp-dist-iter=6",
            "run",
        ]);
        assert_eq!(
            c.distribution,
            fleetbench_model::rand::Distribution::Gaussian { iter: 6 }
        );
        assert_eq!(
            oltp(&["--test=oltp", "--oltp-reconnect-mode=transaction", "run"])
                .options
                .reconnect,
            1
        );
        assert_eq!(
            oltp(&["--test=oltp", "--oltp-reconnect-mode=session", "run"])
                .options
                .reconnect,
            0
        );
        assert!(matches!(
            plan(&["--test=oltp", "--oltp-reconnect-mode=query", "run"]),
            Err(PlanError::NotSupported(_))
        ));
        let c = oltp(&[
            "--test=oltp",
            "--oltp-test-mode=simple",
            "--oltp-reconnect-mode=query",
            "run",
        ]);
        assert_eq!((c.options.reconnect, c.reconnect_random), (1, false));
        let c = oltp(&["--test=oltp", "--oltp-reconnect-mode=random", "run"]);
        assert_eq!((c.options.reconnect, c.reconnect_random), (0, true));
        assert!(plan(&["--test=oltp", "--oltp-reconnect-mode=often", "run"]).is_err());
        assert!(plan(&["--test=oltp", "--mysql-engine-trx=maybe", "run"]).is_err());
        for (args, create_options) in [
            (
                &[
                    "--test=oltp",
                    "--mysql-table-engine=myisam",
                    "--mysql-create-options=CHECKSUM=1",
                    "run",
                ][..],
                "CHECKSUM=1 MAX_ROWS = 1000000",
            ),
            (
                &[
                    "oltp_read_write",
                    "--mysql-storage-engine=myisam",
                    "--myisam-max-rows=5000",
                    "run",
                ],
                "MAX_ROWS = 5000",
            ),
            (
                &["oltp_read_write", "--mysql-storage-engine=myisam", "run"],
                "",
            ),
        ] {
            assert_eq!(oltp(args).create_options, create_options, "{args:?}");
        }
        assert!(
            plan(&[
                "oltp_read_write",
                "--mysql-create-options=x; DROP TABLE t",
                "run"
            ])
            .is_err()
        );
        let c = oltp(&[
            "--test=oltp",
            "--oltp-connect-delay=500",
            "--oltp-user-delay-min=10",
            "--oltp-user-delay-max=20",
            "run",
        ]);
        assert_eq!(
            (c.options.connect_delay_us, c.options.user_delay_us),
            (500, (10, 20))
        );
        assert!(
            plan(&[
                "--test=oltp",
                "--oltp-user-delay-min=30",
                "--oltp-user-delay-max=20",
                "run"
            ])
            .is_err()
        );
        // 0.4's test modes as the 1.0 tests that send the same statements.
        for (mode, want) in [
            ("--oltp-test-mode=complex", "oltp_read_write"),
            ("--oltp-test-mode=simple", "oltp_point_select"),
            ("--oltp-test-mode=nontrx", "oltp_point_select"),
            ("--oltp-nontrx-mode=update_key", "oltp_update_index"),
            ("--oltp-nontrx-mode=update_nokey", "oltp_update_non_index"),
            ("--oltp-nontrx-mode=insert", "oltp_insert"),
            ("--oltp-nontrx-mode=delete", "oltp_delete"),
        ] {
            let mut args = vec!["--test=oltp", mode, "run"];
            if mode.starts_with("--oltp-nontrx") {
                args.insert(1, "--oltp-test-mode=nontrx");
            }
            assert_eq!(plan(&args).unwrap().workload.name(), want, "{mode}");
        }
        // 0.5's oltp.lua ignores the mode, as 0.5 did.
        let p = plan(&["--test=tests/db/oltp.lua", "--oltp-test-mode=simple", "run"]).unwrap();
        assert_eq!(p.workload.name(), "oltp_read_write");
        // sp calls the named procedure; without a name there is nothing to call, and the
        // name is ignored in the other modes, as 0.4 did.
        assert_eq!(
            refused_option(&["--test=oltp", "--oltp-test-mode=sp", "run"]),
            Some("oltp-sp-name")
        );
        let p = plan(&[
            "--test=oltp",
            "--oltp-test-mode=sp",
            "--oltp-sp-name=db1.p",
            "run",
        ])
        .unwrap();
        assert_eq!(p.workload.name(), "oltp_sp");
        let Workload::Oltp(o) = &p.workload else {
            panic!("not OLTP")
        };
        assert_eq!(o.config.sp_name, "db1.p");
        let p = plan(&["--test=oltp", "--oltp-sp-name=p", "run"]).unwrap();
        let Workload::Oltp(o) = &p.workload else {
            panic!("not OLTP")
        };
        assert_eq!(
            (p.workload.name(), o.config.sp_name.as_str()),
            ("oltp_read_write", "")
        );
        assert!(
            plan(&[
                "--test=oltp",
                "--oltp-test-mode=nontrx",
                "--oltp-nontrx-mode=x",
                "run"
            ])
            .is_err()
        );
        // 0.5's parallel_prepare.lua: run means prepare (oltp_read_write's tables).
        let p = plan(&[
            "--test=/opt/sysbench/tests/db/parallel_prepare.lua",
            "--oltp-tables-count=4",
            "run",
        ])
        .unwrap();
        assert_eq!(
            (p.command, p.workload.name()),
            (Command::Prepare, "oltp_read_write")
        );
        let p = plan(&["--test=parallel_prepare.lua", "cleanup"]).unwrap();
        assert_eq!(p.command, Command::Cleanup);
        // Open loop: --rate and 0.5's --tx-rate; 0 is the closed loop.
        assert_eq!(plan(&["cpu", "--rate=100", "run"]).unwrap().rate, 100.0);
        assert_eq!(
            plan(&["cpu", "--tx-rate=250.5", "run"]).unwrap().rate,
            250.5
        );
        assert_eq!(plan(&["cpu", "--tx-rate=0", "run"]).unwrap().rate, 0.0);
        for bad in [
            "--rate=-1",
            "--rate=fast",
            "--rate=inf",
            "--rate=NaN",
            "--rate=1e12",
        ] {
            assert_eq!(refused_option(&["cpu", bad, "run"]), Some("rate"), "{bad}");
        }
        assert!(matches!(
            plan(&["mutex", "--rate=10", "run"]),
            Err(PlanError::NotSupported(m)) if m.contains("nothing to pace")
        ));
        assert_eq!(split_rate(900.0, &[1, 2, 0]), vec![300.0, 600.0, 0.0]);
        assert_eq!(split_rate(5.0, &[]), Vec::<f64>::new());
        let p = plan(&[
            "cpu",
            "--thread-stack-size=64K",
            "--debug",
            "--validate=on",
            "run",
        ])
        .unwrap();
        assert_eq!(p.notes.len(), 3, "{:?}", p.notes);
        assert!(p.notes[0].starts_with("--thread-stack-size is accepted"));
        assert!(plan(&["cpu", "run"]).unwrap().notes.is_empty());
    }

    #[test]
    fn sizes_counts_and_durations_are_bounded_before_anything_is_allocated() {
        // Row 4 of issue 17: a time that overflows a clock.
        let huge = ["cpu", "--time=18446744073709551615", "--events=10", "run"];
        assert_eq!(refused_option(&huge), Some("time"));
        for opt in ["--report-interval", "--ready-timeout"] {
            assert!(plan(&["cpu", &format!("{opt}=99999999999"), "run"]).is_err());
        }
        // Row 3: a billion tables.
        let r = plan(&["oltp_read_write", "--tables=1000000000", "run"]);
        assert!(
            matches!(
                r,
                Err(PlanError::Spec(SpecError::Invalid {
                    option: "tables",
                    ..
                }))
            ),
            "{r:?}"
        );
        // Row 16: a billion threads, remote or embedded.
        let r = plan(&["cpu", "--agents=a:1", "--threads=1000000000", "run"]);
        assert!(matches!(r, Err(PlanError::Limit(_))), "{r:?}");
        assert!(plan(&["cpu", "--threads=1000000000", "run"]).is_err());
        assert!(plan(&["cpu", "--agents=a:1,b:2", "--threads=150000", "run"]).is_ok());
        // Row 1: a memory block no host has, with embedded agents.
        let r = plan(&[
            "memory",
            "--memory-block-size=1000000T",
            "--memory-total-size=1000000T",
            "run",
        ]);
        assert!(matches!(r, Err(PlanError::Limit(_))), "{r:?}");
        // Row 12: embedded agents are bounded.
        let many = ["cpu", "--local-agents=100000", "run"];
        assert_eq!(refused_option(&many), Some("local-agents"));
        // OLTP limits the agent checks too.
        let r = plan(&["select_random_points", "--random-points=70000", "run"]);
        assert!(matches!(r, Err(PlanError::Spec(_))), "{r:?}");
    }

    #[test]
    fn defaults_match_sysbench() {
        let p = plan(&["cpu", "run"]).unwrap();
        assert_eq!(p.workload, Workload::Cpu(CpuSpec { max_prime: 10_000 }));
        assert_eq!(p.threads, 1);
        assert_eq!(p.time, Some(Duration::from_secs(10)));
        assert_eq!(p.events, None);
        assert_eq!(p.percentiles, vec![95.0]);
        assert_eq!(p.agents, AgentSource::Local(1));
        assert_eq!(p.tick(), Duration::from_secs(1));
    }

    #[test]
    fn sysbench_spellings_give_the_same_plan() {
        let a = plan(&[
            "--test=cpu",
            "--num-threads=8",
            "--cpu-max-prime=20000",
            "--max-time=10",
            "run",
        ])
        .unwrap();
        let b = plan(&[
            "cpu",
            "--threads",
            "8",
            "run",
            "--cpu_max_prime=20000",
            "--time=10",
        ])
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.threads, 8);
    }

    #[test]
    fn database_options_are_refused_for_a_test_without_a_database() {
        for (args, option) in [
            (
                &["cpu", "--target=a=mysql://u@h/d", "run"][..],
                "--target with cpu",
            ),
            (
                &["cpu", "--server-status=off", "run"][..],
                "--server-status with cpu",
            ),
            (
                &["fileio", "--max-downtime=5", "prepare"][..],
                "--max-downtime with fileio",
            ),
            (
                &["memory", "--table-map=sbtest1=default", "run"][..],
                "--table-map with memory",
            ),
            (
                &["tpcc", "--table-map=x=default", "run"][..],
                "--table-map with tpcc (only the built-in OLTP",
            ),
        ] {
            let raw = crate::cli::parse(std::iter::once("fleetbench").chain(args.iter().copied()))
                .unwrap();
            let e = build(&raw).unwrap_err().to_string();
            assert!(
                e.starts_with(option) && e.ends_with("is not supported"),
                "{args:?}: {e}"
            );
        }
        // A database test takes them.
        let raw = crate::cli::parse([
            "fleetbench",
            "oltp_read_only",
            "--server-status=off",
            "--max-downtime=5",
            "run",
        ])
        .unwrap();
        assert!(build(&raw).is_ok());
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(
            plan(&["nosuch", "run"]),
            Err(PlanError::UnknownTest("nosuch".into()))
        );
        for t in ["--threads=0", "--threads=x"] {
            assert_eq!(refused_option(&["cpu", t, "run"]), Some("threads"), "{t}");
        }
        assert_eq!(
            plan(&["cpu", "--time=0", "--events=0", "run"]),
            Err(PlanError::Endless)
        );
        for p in ["0,95", "101", "-5", "abc", "95,0"] {
            let pct = format!("--percentile={p}");
            assert_eq!(
                refused_option(&["cpu", &pct, "run"]),
                Some("percentile"),
                "{p}"
            );
        }
        assert!(matches!(
            plan(&["cpu", "prepare"]),
            Err(PlanError::Unsupported { .. })
        ));
        assert!(matches!(plan(&["cpu"]), Err(PlanError::MissingCommand(_))));
        assert_eq!(
            refused_option(&["cpu", "--agents=nohost", "run"]),
            Some("agents")
        );
        assert_eq!(
            plan(&["cpu", "--agents=a:1", "--local-agents=2", "run"]),
            Err(PlanError::AgentsConflict)
        );
    }

    #[test]
    fn percentile_list_and_agents_list() {
        let p = plan(&[
            "cpu",
            "--percentile=50,95,99.9",
            "--agents",
            "a:1,b:2",
            "--agents=c:3",
            "run",
        ])
        .unwrap();
        assert_eq!(p.percentiles, vec![50.0, 95.0, 99.9]);
        assert_eq!(
            p.agents,
            AgentSource::Remote(vec!["a:1".into(), "b:2".into(), "c:3".into()])
        );
        assert_eq!(
            plan(&["cpu", "--percentile=100", "run"])
                .unwrap()
                .percentiles,
            vec![100.0]
        );
    }
}
