//! The validated plan of a fleetbench invocation, built from raw flags, plus the pure
//! functions that split work over agents. Everything here is checked before any agent is
//! contacted, so bad input never starts load anywhere.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RawArgs;

/// What is wrong with the command line; always the user's to fix (exit code 2).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    #[error("missing test name: try `fleetbench cpu run`")]
    MissingTest,
    #[error("the '{0}' test requires a command argument: prepare, run or cleanup")]
    MissingCommand(String),
    #[error("unknown test '{0}': available tests are: cpu")]
    UnknownTest(String),
    #[error("unknown command '{0}': expected prepare, run or cleanup")]
    UnknownCommand(String),
    #[error("unexpected argument '{0}'")]
    ExtraArgument(String),
    #[error("the '{test}' test does not implement the '{command}' command")]
    Unsupported { test: String, command: String },
    #[error("invalid value for --{option}: '{value}' ({why})")]
    Invalid {
        option: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("--time and --events are both 0: the run would never end; set one of them")]
    Endless,
    #[error("--agents and --local-agents exclude each other")]
    AgentsConflict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
        }
    }
}

/// The load to run, with its options.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    Cpu { max_prime: u64 },
}

impl Workload {
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Cpu { .. } => "cpu",
        }
    }

    /// The commands this test implements.
    pub fn commands(&self) -> &'static [Command] {
        match self {
            Workload::Cpu { .. } => &[Command::Run],
        }
    }
}

/// Where the load runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentSource {
    /// Agents already running elsewhere, by address.
    Remote(Vec<String>),
    /// This many agents embedded in the coordinator's process.
    Local(u32),
}

/// A fully validated invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub workload: Workload,
    pub command: Command,
    pub threads: u32,
    pub time: Option<Duration>,
    pub events: Option<u64>,
    pub report_interval: Option<Duration>,
    /// Requested percentiles, in (0, 100], in the order given.
    pub percentiles: Vec<f64>,
    pub seed: u64,
    pub json: Option<PathBuf>,
    pub agents: AgentSource,
}

impl Plan {
    /// The tick agents report at: the report interval, or one second when none is asked
    /// for (the JSON always carries a per-second series).
    pub fn tick(&self) -> Duration {
        self.report_interval.unwrap_or(Duration::from_secs(1))
    }
}

/// Validates raw flags into a plan.
pub fn build(raw: &RawArgs) -> Result<Plan, PlanError> {
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
        Some(other) => return Err(PlanError::UnknownCommand(other.to_string())),
    };
    if let Some(extra) = words.next() {
        return Err(PlanError::ExtraArgument(extra.clone()));
    }
    let workload = match test.as_str() {
        "cpu" => {
            let max_prime = num(&raw.cpu_max_prime, "cpu-max-prime", 10_000)?;
            if max_prime < 3 {
                return Err(invalid("cpu-max-prime", max_prime, "must be at least 3"));
            }
            Workload::Cpu { max_prime }
        }
        other => return Err(PlanError::UnknownTest(other.to_string())),
    };
    if !workload.commands().contains(&command) {
        return Err(PlanError::Unsupported {
            test,
            command: command.name().into(),
        });
    }
    let threads: u32 = num(&raw.threads, "threads", 1)?;
    if threads == 0 {
        return Err(invalid("threads", 0, "must be at least 1"));
    }
    let time: u64 = num(&raw.time, "time", 10)?;
    let events: u64 = num(&raw.events, "events", 0)?;
    if command == Command::Run && time == 0 && events == 0 {
        return Err(PlanError::Endless);
    }
    let report_interval: u64 = num(&raw.report_interval, "report-interval", 0)?;
    let percentiles = parse_percentiles(raw.percentile.as_deref().unwrap_or("95"))?;
    let seed = num(&raw.rand_seed, "rand-seed", 0)?;
    let agents = match (&raw.agents[..], &raw.local_agents) {
        ([], None) => AgentSource::Local(1),
        ([], Some(_)) => {
            let k: u32 = num(&raw.local_agents, "local-agents", 1)?;
            if k == 0 {
                return Err(invalid("local-agents", 0, "must be at least 1"));
            }
            AgentSource::Local(k)
        }
        (_, Some(_)) => return Err(PlanError::AgentsConflict),
        (list, None) => AgentSource::Remote(parse_agents(list)?),
    };
    Ok(Plan {
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
    })
}

fn invalid(option: &'static str, value: impl ToString, why: &'static str) -> PlanError {
    PlanError::Invalid {
        option,
        value: value.to_string(),
        why,
    }
}

fn num<T: std::str::FromStr>(
    raw: &Option<String>,
    option: &'static str,
    default: T,
) -> Result<T, PlanError> {
    match raw {
        None => Ok(default),
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| invalid(option, s, "not a non-negative integer")),
    }
}

/// Parses `95` or `50,95,99.9`; each value must lie in (0, 100].
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, PlanError> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| invalid("percentile", s, "not a number"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(invalid("percentile", part.trim(), "must lie in (0, 100]"));
        }
        out.push(v);
    }
    Ok(out)
}

fn parse_agents(list: &[String]) -> Result<Vec<String>, PlanError> {
    let mut out = Vec::new();
    for a in list.iter().flat_map(|s| s.split(',')).map(str::trim) {
        let ok = a.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !ok {
            return Err(invalid("agents", a, "expected HOST:PORT"));
        }
        out.push(a.to_string());
    }
    if out.is_empty() {
        return Err(invalid("agents", "", "expected HOST:PORT"));
    }
    Ok(out)
}

/// Splits `total` into `parts` shares as evenly as possible, larger shares first:
/// 10 over 3 gives 4, 3, 3.
pub fn split_evenly(total: u64, parts: usize) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let base = total / parts as u64;
    let extra = (total % parts as u64) as usize;
    (0..parts).map(|i| base + u64::from(i < extra)).collect()
}

/// Splits an event limit over agents in proportion to their threads: the events are first
/// spread over all threads evenly, then each agent gets the sum over its threads.
pub fn split_by_threads(events: u64, threads: &[u64]) -> Vec<u64> {
    let total: u64 = threads.iter().sum();
    let per_thread = split_evenly(events, total as usize);
    let mut out = Vec::with_capacity(threads.len());
    let mut at = 0usize;
    for &t in threads {
        out.push(per_thread[at..at + t as usize].iter().sum());
        at += t as usize;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse;

    fn plan(args: &[&str]) -> Result<Plan, PlanError> {
        build(&parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap())
    }

    #[test]
    fn split_is_even_with_larger_shares_first() {
        assert_eq!(split_evenly(10, 3), vec![4, 3, 3]);
        assert_eq!(split_evenly(8, 2), vec![4, 4]);
        assert_eq!(split_evenly(2, 3), vec![1, 1, 0]);
        assert_eq!(split_evenly(0, 2), vec![0, 0]);
        for (total, parts) in [(97u64, 7usize), (256, 3), (1, 1)] {
            let s = split_evenly(total, parts);
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn events_follow_thread_shares() {
        assert_eq!(split_by_threads(100, &[4, 3, 3]), vec![40, 30, 30]);
        assert_eq!(split_by_threads(11, &[2, 1]), vec![8, 3]);
        assert_eq!(split_by_threads(7, &[4, 3, 3]).iter().sum::<u64>(), 7);
    }

    #[test]
    fn defaults_match_sysbench() {
        let p = plan(&["cpu", "run"]).unwrap();
        assert_eq!(p.workload, Workload::Cpu { max_prime: 10_000 });
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
    fn bad_input_is_refused() {
        assert_eq!(
            plan(&["nosuch", "run"]),
            Err(PlanError::UnknownTest("nosuch".into()))
        );
        assert!(matches!(
            plan(&["cpu", "--threads=0", "run"]),
            Err(PlanError::Invalid {
                option: "threads",
                ..
            })
        ));
        assert!(matches!(
            plan(&["cpu", "--threads=x", "run"]),
            Err(PlanError::Invalid {
                option: "threads",
                ..
            })
        ));
        assert_eq!(
            plan(&["cpu", "--time=0", "--events=0", "run"]),
            Err(PlanError::Endless)
        );
        for p in ["0", "101", "-5", "abc", "95,0"] {
            let r = plan(&["cpu", &format!("--percentile={p}"), "run"]);
            assert!(
                matches!(
                    r,
                    Err(PlanError::Invalid {
                        option: "percentile",
                        ..
                    })
                ),
                "{p}: {r:?}"
            );
        }
        assert!(matches!(
            plan(&["cpu", "prepare"]),
            Err(PlanError::Unsupported { .. })
        ));
        assert!(matches!(plan(&["cpu"]), Err(PlanError::MissingCommand(_))));
        assert!(matches!(
            plan(&["cpu", "--agents=nohost", "run"]),
            Err(PlanError::Invalid {
                option: "agents",
                ..
            })
        ));
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
