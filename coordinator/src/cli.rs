//! Raw command-line flags, as the user typed them. sysbench's conventions apply: options may
//! stand before or after the words `TEST COMMAND`, `--opt=value` and `--opt value` both work,
//! dashes and underscores in option names are interchangeable, and 0.4/0.5 spellings
//! (`--num-threads`, `--max-time`, `--max-requests`, `--test=NAME`) are aliases.
//! Nothing here is validated beyond its type; `plan` turns this into a checked plan.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

/// fleetbench: a distributed, sysbench-compatible load generator.
#[derive(Debug, Default, Parser)]
#[command(
    name = "fleetbench",
    version,
    override_usage = "fleetbench [OPTIONS] TEST COMMAND\n       fleetbench --test=TEST [OPTIONS] COMMAND",
    after_help = "Tests: cpu.  Commands: prepare, run, cleanup.\n\
                  Without --agents, one embedded agent runs in this process (--local-agents K for more)."
)]
pub struct RawArgs {
    /// TEST and COMMAND, e.g. `cpu run` (only the command when --test is given).
    #[arg(value_name = "TEST COMMAND")]
    pub words: Vec<String>,

    /// Test to run (sysbench 0.4/0.5 spelling of the TEST word).
    #[arg(long)]
    pub test: Option<String>,

    /// Number of threads, split over the agents [default: 1].
    #[arg(long, alias = "num-threads")]
    pub threads: Option<String>,

    /// Limit for total execution time in seconds; 0 = none [default: 10].
    #[arg(long, alias = "max-time")]
    pub time: Option<String>,

    /// Limit for total number of events over all agents; 0 = none [default: 0].
    #[arg(long, alias = "max-requests")]
    pub events: Option<String>,

    /// Print merged intermediate results every N seconds; 0 = off [default: 0].
    #[arg(long)]
    pub report_interval: Option<String>,

    /// Latency percentiles to report, comma-separated, each in (0, 100] [default: 95].
    #[arg(long)]
    pub percentile: Option<String>,

    /// Seed for the random number generators; 0 = from the current time [default: 0].
    #[arg(long)]
    pub rand_seed: Option<String>,

    /// Write the whole result as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Agents to run the load on, comma-separated HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT,...")]
    pub agents: Vec<String>,

    /// Number of embedded agents to start in this process when --agents is not given [default: 1].
    #[arg(long)]
    pub local_agents: Option<String>,

    /// cpu: upper limit for primes generator [default: 10000].
    #[arg(long)]
    pub cpu_max_prime: Option<String>,
}

/// Parses the command line. Returns clap's error for --help/--version too (its kind says so).
pub fn parse<I, T>(args: I) -> Result<RawArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    RawArgs::try_parse_from(args.into_iter().map(|a| normalize(a.into())))
}

/// Rewrites `--some_option[=v]` as `--some-option[=v]`: sysbench treats `_` and `-` alike.
fn normalize(arg: OsString) -> OsString {
    let Some(s) = arg.to_str() else { return arg };
    let Some(rest) = s.strip_prefix("--") else {
        return arg;
    };
    match rest.split_once('=') {
        Some((name, value)) => format!("--{}={value}", name.replace('_', "-")).into(),
        None => format!("--{}", rest.replace('_', "-")).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> RawArgs {
        parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn options_before_or_after_the_words() {
        let a = p(&["cpu", "--threads=8", "run"]);
        assert_eq!(a.words, ["cpu", "run"]);
        assert_eq!(a.threads.as_deref(), Some("8"));
        let b = p(&["--threads", "8", "cpu", "run", "--time", "3"]);
        assert_eq!(b.words, ["cpu", "run"]);
        assert_eq!(b.time.as_deref(), Some("3"));
    }

    #[test]
    fn old_spellings_and_underscores() {
        let a = p(&[
            "--test=cpu",
            "--num-threads=8",
            "--cpu_max_prime=20000",
            "--max-time=10",
            "run",
        ]);
        assert_eq!(a.test.as_deref(), Some("cpu"));
        assert_eq!(a.words, ["run"]);
        assert_eq!(a.threads.as_deref(), Some("8"));
        assert_eq!(a.cpu_max_prime.as_deref(), Some("20000"));
        assert_eq!(a.time.as_deref(), Some("10"));
        let b = p(&["--num_threads=2", "--max_requests=5", "cpu", "run"]);
        assert_eq!(
            (b.threads.as_deref(), b.events.as_deref()),
            (Some("2"), Some("5"))
        );
    }

    #[test]
    fn underscores_in_values_are_kept() {
        let a = p(&["--json=my_file.json", "cpu", "run"]);
        assert_eq!(a.json.unwrap().to_str(), Some("my_file.json"));
    }

    #[test]
    fn unknown_option_is_an_error() {
        assert!(parse(["fleetbench", "--no-such-option=1", "cpu", "run"]).is_err());
    }
}
