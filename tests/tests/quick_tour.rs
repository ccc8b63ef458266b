//! The README's quick tour, run command for command as a newcomer would (issue 60): the
//! binaries put on PATH by the README's install block (the freshly built ones in place of
//! `target/release`), the README's SQL run on a throwaway MariaDB, then every command of the
//! tour in order, by one bash from a clean directory with a clean environment (a new HOME,
//! a plain PATH), pointed at that server the way the tour says (its `--mysql-port`) and
//! with its agents on free ports. Each command must exit 0 and print what it is there for;
//! a sample of output the README shows must match what the command before it printed.
//! Changing the tour means changing what this test expects of a command it does not know.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::shell::run_in_group;
use fleetbench_tests::tour::{self, Step};
use fleetbench_tests::{Scratch, bin, free_port};
use regex::Regex;

const CHECKOUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// The PATH of a fresh login before the README adds to it.
const PLAIN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

#[test]
fn the_readme_quick_tour_runs_command_for_command() {
    let readme = std::fs::read_to_string(format!("{CHECKOUT}/README.md")).expect("README.md");
    let tour = tour::read(&readme).unwrap_or_else(|e| panic!("README.md's quick tour: {e}"));
    let db = MariaDb::start();
    // The README's SQL makes sysbench's database and user; the harness's own go first.
    db.sql("DROP DATABASE sbtest; DROP USER 'sbtest'@'%'; DROP USER 'sbtest'@'localhost';");
    db.sql(&tour.sql);

    let scratch = Scratch::new("quick-tour");
    let (home, work, out) = (
        scratch.path("home"),
        scratch.path("work"),
        scratch.path("out"),
    );
    for d in [&home, &work, &out] {
        std::fs::create_dir(d).unwrap();
    }
    let steps = pointed_at(&tour.steps, db.port());
    let script = script(&tour.install, &steps, &work, &out);
    let ended = run_in_group(
        Command::new("/bin/bash")
            .arg(scratch.write("tour.sh", &script))
            .env_clear()
            .env("HOME", &home)
            .env("PATH", PLAIN_PATH)
            .env("LANG", "C.UTF-8")
            .current_dir(&home),
        Duration::from_secs(150),
    );
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    for (i, command) in tour.install.iter().enumerate() {
        if !command.starts_with("cargo ") {
            expect_ok(&format!("i{i}"), command, &read);
        }
    }
    // The README's PATH finds the copies it made, not some other fleetbench.
    let local_bin = home.join(".local/bin");
    assert_eq!(
        read("which").lines().collect::<Vec<_>>(),
        [
            local_bin.join("fleetbench"),
            local_bin.join("fleetbench-agent")
        ]
        .map(|p| p.display().to_string()),
        "the README's install block does not put the binaries on PATH\nbash: {}",
        ended.stderr
    );
    let mut seen = Seen::default();
    for (i, step) in steps.iter().enumerate() {
        let (stdout, stderr) = expect_ok(&i.to_string(), &step.command, &read);
        if let Some(sample) = &step.sample {
            tour::sample_matches(sample, &stdout).unwrap_or_else(|e| {
                panic!(
                    "README sample after `{}`: {e}\noutput:\n{stdout}",
                    step.command
                )
            });
        }
        seen.check(&step.command, &stdout, &stderr, &work, &db);
    }
    seen.after_the_tour(&work, &read("running"));
    assert!(ended.status.success(), "bash: {}", ended.stderr);
}

/// The tour's steps pointed at the test's server (its port for every `--mysql-port`) and
/// with its agents' loopback addresses on free ports. Panics if a command would reach a
/// server without naming its port (the machine's own, on 3306).
fn pointed_at(steps: &[Step], db_port: u16) -> Vec<Step> {
    let port = Regex::new(r"--mysql-port=[0-9]+").unwrap();
    let agent = Regex::new(r"127\.0\.0\.1:(76[0-9][0-9])\b").unwrap();
    let mut agents: BTreeMap<String, u16> = BTreeMap::new();
    steps
        .iter()
        .map(|s| {
            assert!(
                !s.command.contains("--mysql-host") || port.is_match(&s.command),
                "a quick-tour command names a host but not its port: {}",
                s.command
            );
            let c = port.replace_all(&s.command, format!("--mysql-port={db_port}").as_str());
            let c = agent.replace_all(&c, |m: &regex::Captures| {
                if !agents.contains_key(&m[1]) {
                    // Two probes may find the same port: each agent gets its own.
                    let free = std::iter::repeat_with(free_port)
                        .find(|p| !agents.values().any(|q| q == p))
                        .unwrap();
                    agents.insert(m[1].to_string(), free);
                }
                format!("127.0.0.1:{}", agents[&m[1]])
            });
            Step {
                command: c.into_owned(),
                sample: s.sample.clone(),
            }
        })
        .collect()
}

/// One bash script: the install block in the checkout (its `cargo` lines left out: the
/// suite built these sources already, so `target/release` is the test's own build), then
/// the tour in `work`. Each command runs as written, in the script's own shell (so that
/// `export` and `&` jobs last), its output, errors and exit code kept in `out` under its
/// name (`iN` for install, `N` for the tour); the first failure ends the script.
fn script(install: &[String], steps: &[Step], work: &Path, out: &Path) -> String {
    let profile = bin("fleetbench").parent().unwrap().display().to_string();
    let mut s = format!(
        "out='{}'\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\ncd '{CHECKOUT}'\n",
        out.display()
    );
    let run = |s: &mut String, name: &str, command: &str| {
        s.push_str(&format!(
            "{{\n{command}\n}} >\"$out/{name}.out\" 2>\"$out/{name}.err\"\n\
             echo $? >\"$out/{name}.rc\"; [ \"$(cat \"$out/{name}.rc\")\" = 0 ] || exit 1\n"
        ));
    };
    for (i, command) in install.iter().enumerate() {
        if command.starts_with("cargo ") {
            assert_eq!(
                tour::words(command)[..4],
                ["cargo", "build", "--release", "--locked"],
                "the install block's cargo line"
            );
            continue;
        }
        run(
            &mut s,
            &format!("i{i}"),
            &command.replace("target/release/", &format!("{profile}/")),
        );
    }
    s.push_str("command -v fleetbench fleetbench-agent >\"$out/which\"\n");
    s.push_str(&format!("cd '{}'\n", work.display()));
    for (i, step) in steps.iter().enumerate() {
        run(&mut s, &i.to_string(), &step.command);
    }
    // What is still running in the background once the tour is over (its agents should not).
    s.push_str("sleep 0.5; jobs -r >\"$out/running\"\n");
    s
}

/// Asserts that the script ran command `name` and it exited 0; its stdout and stderr.
fn expect_ok(name: &str, command: &str, read: &dyn Fn(&str) -> String) -> (String, String) {
    let (stdout, stderr) = (read(&format!("{name}.out")), read(&format!("{name}.err")));
    assert_eq!(
        read(&format!("{name}.rc")).trim(),
        "0",
        "README command `{command}` failed (or did not run)\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

/// What the tour has done so far, for the checks of the commands after it.
#[derive(Default)]
struct Seen {
    /// The runs kept as JSON, in order: (file, threads, tps, p95 ms).
    runs: Vec<(String, u64, f64, f64)>,
    /// The agents started in the background: (address, log file).
    agents: Vec<(String, String)>,
}

impl Seen {
    /// Checks that a command that exited 0 printed what it is in the tour for.
    fn check(&mut self, command: &str, stdout: &str, stderr: &str, work: &Path, db: &MariaDb) {
        let words = tour::words(command);
        let opt = |name: &str| option(&words, name);
        if words[0] == "fleetbench-agent" {
            let log = words.iter().find_map(|w| w.strip_prefix('>')).expect("log");
            self.agents
                .push((opt("--listen").expect("--listen"), log.into()));
            return;
        }
        if words[0] == "kill" {
            assert_eq!(self.agents.len(), 2, "kill before the agents");
            return;
        }
        let fb = words.iter().position(|w| *w == "fleetbench");
        let args = &words[fb.unwrap_or_else(|| panic!("no expectation for `{command}`")) + 1..];
        let has = |needle: &str| {
            assert!(
                stdout.contains(needle),
                "`{command}` printed no {needle:?}:\n{stdout}"
            )
        };
        match (args[0], args[args.len() - 1]) {
            ("agents", _) => {
                for addr in opt("--agents").expect("--agents").split(',') {
                    let line = stdout.lines().find(|l| l.starts_with(addr));
                    assert!(
                        line.is_some_and(|l| l.ends_with("idle")),
                        "{addr}:\n{stdout}"
                    );
                }
            }
            (_, "prepare") => {
                for t in 1..=opt("--tables").unwrap().parse::<u32>().unwrap() {
                    has(&format!("Creating table 'sbtest{t}'..."));
                    has(&format!(
                        "Inserting {} records into 'sbtest{t}'",
                        opt("--table-size").unwrap()
                    ));
                }
            }
            (_, "run") => self.run(command, &words, stdout, stderr, work),
            ("compare", _) => {
                has(&format!("Compared with {}", args[1]));
                assert!(stdout.lines().any(|l| l.starts_with("tps ")), "{stdout}");
            }
            ("runs", "list") => self.runs_list(stdout),
            (_, "cleanup") => {
                has("Dropping table 'sbtest1'...");
                assert_eq!(db.sql("SHOW TABLES FROM sbtest"), "", "tables left");
            }
            _ => panic!("no expectation for the quick-tour command `{command}`"),
        }
    }

    /// A run: sysbench's report, the agents it names each with its part, the result file.
    fn run(&mut self, command: &str, words: &[&str], stdout: &str, stderr: &str, work: &Path) {
        for needle in [
            "SQL statistics:",
            "transactions:",
            "95th percentile:",
            "Per agent:",
        ] {
            assert!(
                stdout.contains(needle),
                "`{command}`: no {needle:?}:\n{stdout}"
            );
        }
        assert!(stderr.contains("catalog: recorded as"), "{stderr}");
        let threads: u64 = option(words, "--threads").unwrap().parse().unwrap();
        if let Some(agents) = option(words, "--agents") {
            let per = threads / agents.split(',').count() as u64;
            for addr in agents.split(',') {
                let line = stdout.lines().map(str::trim).find(|l| l.starts_with(addr));
                let cols: Vec<&str> = line.unwrap_or_default().split_whitespace().collect();
                assert!(
                    cols.get(2) == Some(&per.to_string().as_str()) && cols.last() == Some(&"ok"),
                    "agent {addr} with {per} threads, ok:\n{stdout}"
                );
            }
        }
        let file = option(words, "--json").expect("the tour keeps each run as JSON");
        let doc = fleetbench_tests::json(&work.join(&file));
        assert_eq!(doc["config"]["threads"], threads, "{file}");
        let tps = doc["totals"]["sql"]["tps"].as_f64().unwrap();
        let p95 = doc["totals"]["latency_ms"]["p95"].as_f64().unwrap();
        assert!(tps > 0.0 && p95 > 0.0, "{file}: tps {tps}, p95 {p95}");
        self.runs.push((file, threads, tps, p95));
    }

    /// `runs list`: every run of the tour, newest first, with its threads, TPS and p95.
    fn runs_list(&self, stdout: &str) {
        let lines: Vec<&str> = stdout.lines().collect();
        let head: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            head[..6],
            ["id", "started", "(UTC)", "test", "thr", "tps"],
            "{stdout}"
        );
        assert_eq!(
            lines.len() - 1,
            self.runs.len(),
            "one line a run:\n{stdout}"
        );
        for (line, (file, threads, tps, p95)) in lines[1..].iter().zip(self.runs.iter().rev()) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                cols[3..7],
                [
                    "oltp_read_write",
                    &threads.to_string(),
                    &format!("{tps:.2}"),
                    &format!("p95={p95:.2}")
                ],
                "{file} in the list:\n{stdout}"
            );
        }
    }

    /// After the tour: each agent said where it listened, and none is left running.
    fn after_the_tour(&self, work: &Path, running: &str) {
        for (addr, log) in &self.agents {
            let text = std::fs::read_to_string(work.join(log)).unwrap_or_default();
            assert!(
                text.contains(&format!("listening on {addr}")),
                "{log}:\n{text}"
            );
        }
        assert_eq!(running.trim(), "", "the tour leaves jobs running");
    }
}

/// The value of `--name VALUE` or `--name=VALUE` in `words`.
fn option(words: &[&str], name: &str) -> Option<String> {
    words.iter().enumerate().find_map(|(i, w)| {
        let rest = w.strip_prefix(name)?;
        match rest.strip_prefix('=') {
            Some(v) => Some(v.to_string()),
            None if rest.is_empty() => words.get(i + 1).map(|v| v.to_string()),
            None => None,
        }
    })
}
