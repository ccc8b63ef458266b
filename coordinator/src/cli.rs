//! Raw command-line flags, as the user typed them. sysbench's conventions apply: options may
//! stand before or after the words `TEST COMMAND`, `--opt=value` and `--opt value` both work,
//! dashes and underscores in option names are interchangeable, and 0.4/0.5 spellings
//! (`--num-threads`, `--max-time`, `--max-requests`, `--test=NAME`) are aliases.
//! Nothing here is validated beyond its type; `plan` turns this into a checked plan.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;
use fleetbench_model::options::{Kind, OptionDef};
use fleetbench_model::spec::{DECLARED, GROUPS};

/// `fleetbench --help`'s commands, first: what a newcomer looks for.
const COMMANDS_HELP: &str = "\
Commands (`fleetbench TEST help`: a test's own options and their defaults):
  TEST prepare|run|cleanup|prewarm  sysbench's tests (listed at the end) and commands
  tpcc prepare|run|check|cleanup    tpcc-mysql's TPC-C (`fleetbench tpcc help`)
  pgbench [OPTION]... [DBNAME]      pgbench's command line (`fleetbench pgbench --help`)
  SCRIPT.lua prepare|run|cleanup    a sysbench Lua script (`fleetbench SCRIPT.lua help`)
  scenario run|cleanup FILE         setups compared from one file (`fleetbench scenario help`)
  compare A.json B.json [...]       results side by side, with their noise
  report RESULT.json [--html OUT]   a saved result again, as text or an HTML page
  runs list|show|compare|trend|...  the catalog of past runs (`fleetbench runs`: its usage)
  serve --web IP:PORT               the catalog's runs as a web page
  agents --agents HOST:PORT,...     the agents' state
  stop --agents HOST:PORT,...       stop what the agents run
  help                              this text";

/// `fleetbench --help`'s last lines: the tests, and where the load runs.
const TESTS_HELP: &str = "\
Tests: cpu, fileio, memory, threads, mutex, oltp_read_write, oltp_read_only, oltp_write_only,
oltp_point_select, oltp_insert, oltp_delete, oltp_update_index, oltp_update_non_index,
select_random_points, select_random_ranges, bulk_insert, oltp_sp, tpcc, or a Lua script.
Without --agents, one embedded agent runs in this process (--local-agents K for more).";

/// fleetbench: a distributed, sysbench-compatible load generator.
#[derive(Debug, Default, Parser)]
#[command(
    name = "fleetbench",
    version,
    // An option given twice (or under an alias and its main name) takes the last value, as
    // in sysbench 1.0: scripts put their overrides after a common option string. Options
    // that collect (`--agents`, `--target`, `--tag`, ...) keep every occurrence.
    args_override_self = true,
    override_usage = "fleetbench [OPTIONS] TEST COMMAND\n       fleetbench --test=TEST [OPTIONS] COMMAND",
    help_template = "{about-with-newline}\n{usage-heading} {usage}\n\n{before-help}{all-args}{after-help}",
    before_help = COMMANDS_HELP,
    after_help = TESTS_HELP
)]
pub struct RawArgs {
    /// TEST and COMMAND, e.g. `cpu run` (only the command when --test is given).
    #[arg(value_name = "TEST COMMAND")]
    pub words: Vec<String>,

    /// The command line uses sysbench 0.4/0.5 spellings (set by [`parse`], not a flag).
    #[arg(skip)]
    pub legacy: bool,

    /// The options given on the command line, by clap id, in order (set by [`parse`]; what
    /// commands::honoured checks against the command).
    #[arg(skip)]
    pub given: Vec<String>,

    /// Test to run (sysbench 0.4/0.5 spelling of the TEST word).
    #[arg(long, help_heading = "Run options")]
    pub test: Option<String>,

    /// Number of threads, split over the agents, or a comma-separated list for a sweep
    /// (one measurement per count) [default: 1].
    #[arg(long, alias = "num-threads", help_heading = "Run options")]
    pub threads: Option<String>,

    /// Limit for total execution time in seconds; 0 = none [default: 10].
    #[arg(long, alias = "max-time", help_heading = "Run options")]
    pub time: Option<String>,

    /// Limit for total number of events over all agents; 0 = none [default: 0].
    #[arg(long, alias = "max-requests", help_heading = "Run options")]
    pub events: Option<String>,

    /// Print merged intermediate results every N seconds; 0 = off [default: 0].
    #[arg(long, help_heading = "Output options")]
    pub report_interval: Option<String>,

    /// Latency percentiles to report, comma-separated, each in (0, 100]; 0 = none [default: 95].
    #[arg(long, help_heading = "Output options")]
    pub percentile: Option<String>,

    /// Seed for the random number generators; 0 = from the current time [default: 0].
    #[arg(long, help_heading = "Run options")]
    pub rand_seed: Option<String>,

    /// sysbench 0.5 (`--rand-init`) and 0.4 (`--init-rng`): on = seed the generators from
    /// the clock (as --rand-seed=0), off = a fixed seed (1) unless --rand-seed gives one.
    #[arg(long, alias = "init-rng", num_args = 0..=1, require_equals = true, default_missing_value = "on", help_heading = "Run options")]
    pub rand_init: Option<String>,

    /// Open loop: events (transactions) per second over all agents, arriving at random
    /// (Poisson) and waiting for a free thread; latency counts from the arrival. A
    /// comma-separated list runs one step per rate (a rate sweep). 0 = closed loop
    /// (`--tx-rate` in 0.5) [default: 0].
    #[arg(
        long,
        alias = "tx-rate",
        value_name = "R[,R...]",
        help_heading = "Run options"
    )]
    pub rate: Option<String>,

    /// Log verbosity, 0 (only critical messages) to 5 (debug), as sysbench's; the
    /// FLEETBENCH_LOG environment variable takes precedence [default: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=5), help_heading = "Output options")]
    pub verbosity: Option<u8>,

    /// Full reports of the time since the previous one at these seconds, e.g. 10,20,30
    /// (sysbench 0.5/1.0).
    #[arg(long, value_name = "LIST", help_heading = "Output options")]
    pub report_checkpoints: Option<String>,

    /// Stop agents still running this many seconds (or N% of --time) after the run's time;
    /// off = only the agents' own hard deadline (10 s) [default: off].
    #[arg(long, value_name = "off|N|N%", help_heading = "Run options")]
    pub forced_shutdown: Option<String>,

    /// sysbench 0.4/0.5: worker stack size. Accepted; fleetbench sizes its own stacks.
    #[arg(long, value_name = "SIZE", hide = true)]
    pub thread_stack_size: Option<String>,
    /// sysbench 0.4/0.5: debug output. Accepted; fleetbench logs with FLEETBENCH_LOG=debug.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", hide = true)]
    pub debug: Option<String>,
    /// sysbench 0.4: result validation. Accepted; fleetbench checks what it counts anyway.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", hide = true)]
    pub validate: Option<String>,

    /// Write the whole result as JSON to this file (`compare`: the comparison).
    #[arg(long, value_name = "FILE", help_heading = "Output options")]
    pub json: Option<PathBuf>,

    /// Seconds of load before each measurement, on its threads and connections with
    /// statistics off (sysbench 1.0); --time counts after it [default: 0].
    #[arg(long, help_heading = "Run options")]
    pub warmup_time: Option<String>,
    /// Thread sweeps: seconds of rest between two steps [default: 0].
    #[arg(long, help_heading = "Run options")]
    pub cooldown: Option<String>,
    /// Write the run's, sweep's or scenarios' table as CSV to this file (`compare`: the
    /// comparison's figures).
    #[arg(long, value_name = "FILE", help_heading = "Output options")]
    pub csv: Option<PathBuf>,
    /// Write a self-contained HTML report with charts to this file (also: `report FILE
    /// --html`; `compare`: the comparison's page).
    #[arg(long, value_name = "FILE", help_heading = "Output options")]
    pub html: Option<PathBuf>,
    /// Label the result: KEY=VALUE, stored in the JSON's meta and shown by `compare`
    /// (repeatable), e.g. --tag buffer_pool=8G --tag proxy=mycat.
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Output options")]
    pub tag: Vec<String>,
    /// Write every interval's merged latency histogram to this file as an HdrHistogram
    /// interval log (V2 compressed, microseconds), for HdrHistogram's own tools.
    #[arg(long, value_name = "FILE", help_heading = "Output options")]
    pub hlog: Option<PathBuf>,
    /// With --hlog: each agent's interval histograms too, tagged with its address.
    #[arg(long, help_heading = "Output options")]
    pub hlog_per_agent: bool,
    /// Serve the live run to Prometheus at http://ADDR/metrics (text format, or OpenMetrics
    /// when the scraper asks for it), e.g. --metrics-listen 0.0.0.0:9464.
    #[arg(long, value_name = "ADDR", help_heading = "Output options")]
    pub metrics_listen: Option<String>,
    /// Push each run's final figures to this Prometheus Pushgateway when it ends, e.g.
    /// --metrics-push http://pushgateway:9091 (grouped by job fleetbench and the run id).
    #[arg(long, value_name = "URL", help_heading = "Output options")]
    pub metrics_push: Option<String>,
    /// Print the merged latency histogram, as sysbench does: --histogram or --histogram=on.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", help_heading = "Output options")]
    pub histogram: Option<String>,
    /// Warn about a saturated client host for cpu, memory, threads and mutex too (they load
    /// the client on purpose, so by default they get no such warning).
    #[arg(long, help_heading = "Output options")]
    pub warn_client_saturation: bool,
    /// Report layout: `fleetbench` (sysbench 1.0's report, then fleetbench's per-agent and
    /// per-target blocks), or sysbench's own alone: `1.0`, `0.5` or `0.4` [default: fleetbench].
    #[arg(long, value_name = "STYLE", help_heading = "Output options")]
    pub report_style: Option<String>,
    /// Measurements per step of a run, sweep or scenario file (back and forth between
    /// scenarios), all kept in the JSON; `compare` derives confidence intervals from them
    /// [default: 1].
    #[arg(long, value_name = "N", help_heading = "Run options")]
    pub repeat: Option<String>,
    /// `compare`: exit 1 when a figure changes past this threshold beyond noise, e.g.
    /// `tps<-5%` or `p99>+10%` (repeatable).
    #[arg(long, value_name = "RULE", help_heading = "Catalog, compare and runs")]
    pub fail_if: Vec<String>,
    /// `compare`: compare documents of different tests anyway.
    #[arg(long, help_heading = "Catalog, compare and runs")]
    pub force: bool,
    /// The catalog every run is recorded in: an SQLite file, or postgres://... or
    /// mysql://... for a shared one [default: $XDG_DATA_HOME/fleetbench/catalog.db, i.e.
    /// ~/.local/share/fleetbench/catalog.db; or $FLEETBENCH_CATALOG].
    #[arg(
        long,
        value_name = "PATH|URL",
        help_heading = "Catalog, compare and runs"
    )]
    pub catalog: Option<String>,
    /// Record nothing in the catalog (also FLEETBENCH_CATALOG=off).
    #[arg(
        long,
        conflicts_with = "catalog",
        help_heading = "Catalog, compare and runs"
    )]
    pub no_catalog: bool,
    /// Exit 1 when a figure of the run moved beyond the noise of the earlier runs of the
    /// same test and setup in the catalog, the worse way (docs/catalog.md).
    #[arg(long, help_heading = "Catalog, compare and runs")]
    pub fail_on_regression: bool,
    /// Under each interval line, one line per agent: its rate, latency and host load.
    #[arg(long, help_heading = "Output options")]
    pub live_agents: bool,
    /// Serve a live web page of the run, sweep or scenario file (and of the catalog's runs)
    /// at this address, e.g. localhost:8080 (docs/web.md); an address other than loopback
    /// needs a token.
    #[arg(long, value_name = "IP:PORT", help_heading = "Output options")]
    pub web: Option<String>,
    /// The token the web page asks for on an address other than loopback [default: the
    /// agents' token].
    #[arg(long, value_name = "FILE", help_heading = "Output options")]
    pub web_token_file: Option<PathBuf>,
    /// `runs list`: runs that started on or after this date (YYYY-MM-DD, UTC) or this many
    /// days ago (Nd).
    #[arg(
        long,
        value_name = "DATE|Nd",
        help_heading = "Catalog, compare and runs"
    )]
    pub since: Option<String>,
    /// `runs trend`: the figure followed (tps, qps, avg, the percentile as p95, errors, or
    /// a server figure) [default: tps].
    #[arg(
        long,
        value_name = "FIGURE",
        help_heading = "Catalog, compare and runs"
    )]
    pub metric: Option<String>,
    /// `scenario run`: run only this scenario (repeatable).
    #[arg(long, value_name = "NAME", help_heading = "Catalog, compare and runs")]
    pub only: Vec<String>,

    /// Agents to run the load on, comma-separated HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT,...", help_heading = "Agents")]
    pub agents: Vec<String>,

    /// File holding the agents' token (default: FLEETBENCH_TOKEN); sent with every call.
    #[arg(long, value_name = "FILE", help_heading = "Agents")]
    pub token_file: Option<PathBuf>,

    /// Seconds an agent may go without progress while it opens its workers (connections)
    /// before answering Ready [default: 30].
    #[arg(long, help_heading = "Agents")]
    pub ready_timeout: Option<String>,

    /// A run fails (exit 4) when a database target was down (failed reconnects and
    /// nothing done) for more than this percent of the run [default: any whole interval].
    #[arg(long, value_name = "PCT", help_heading = "Run options")]
    pub max_downtime: Option<String>,

    /// Agents serve TLS: check their certificates against this CA (PEM).
    #[arg(long, value_name = "FILE", help_heading = "Agents")]
    pub tls_ca: Option<PathBuf>,

    /// Client certificate (PEM) for agents that require one; needs --tls-key and --tls-ca.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        requires = "tls_ca",
        help_heading = "Agents"
    )]
    pub tls_cert: Option<PathBuf>,

    /// Private key (PEM) of --tls-cert.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_cert",
        help_heading = "Agents"
    )]
    pub tls_key: Option<PathBuf>,

    /// Number of embedded agents to start in this process when --agents is not given [default: 1].
    #[arg(long, help_heading = "Agents")]
    pub local_agents: Option<String>,

    /// The declared options (those of cpu, fileio, memory, threads and mutex:
    /// fleetbench_model::spec::DECLARED, and OLTP's and TPC-C's groups, spec::GROUPS), as
    /// given: the declared name (an alias given is read as it) without dashes, value.
    /// Taken out of the command line by [`parse`] before clap sees it.
    #[arg(skip)]
    pub options: Vec<(String, String)>,

    /// A sysbench Lua script named in the TEST position, loaded, with its own options
    /// (taken out of the command line by `crate::script::take` before clap sees it).
    #[arg(skip)]
    pub script: Option<Box<crate::script::args::ScriptArgs>>,

    // --- Database ---
    /// A named database target, NAME=mysql://USER:PASSWORD@HOST:PORT/DB (repeatable);
    /// replaces the --mysql-* target called "default".
    #[arg(long, value_name = "NAME=URL", help_heading = "Database")]
    pub target: Vec<String>,
    /// Read each target server's own counters once per interval over SQL, on one extra
    /// connection per target (docs/servers.md) [default: on].
    #[arg(long, value_name = "on|off", help_heading = "Database")]
    pub server_status: Option<String>,
    /// A replica read each interval beside the run, without load: its lag and its own
    /// counters, NAME=URL[@PRIMARY] (the first target's replica unless PRIMARY names one).
    #[arg(long, value_name = "NAME=URL[@PRIMARY]", help_heading = "Database")]
    pub replica: Vec<String>,
    /// Agents on a server's host that observe it each interval instead of loading it: its
    /// CPU split, the server process's CPU, disks, network (repeatable; docs/servers.md).
    #[arg(
        long,
        value_name = "TARGET=HOST:PORT[,HOST:PORT]",
        help_heading = "Database"
    )]
    pub observe: Vec<String>,
    /// The server's processes on the observed hosts: names (repeatable) or a pid file
    /// [default: mariadbd, mysqld, postgres, java].
    #[arg(long, value_name = "NAME|PIDFILE", help_heading = "Database")]
    pub observe_process: Vec<String>,
    /// A directory on the server's data device, on the observed hosts [default: every disk].
    #[arg(long, value_name = "DIR", help_heading = "Database")]
    pub observe_dir: Option<String>,
    /// Which target holds which tables, e.g. 'sbtest1-5=master,sbtest6-10=slave'.
    #[arg(long, value_name = "MAP", help_heading = "OLTP")]
    pub table_map: Option<String>,
}

/// Parses the command line. Returns clap's error for --help/--version too (its kind says so).
pub fn parse<I, T>(args: I) -> Result<RawArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = tpcc_letters(args.into_iter().map(Into::into).collect());
    let args: Vec<OsString> = args.into_iter().map(normalize).collect();
    let args = bare_booleans_on(args);
    // Before the declared options (some spelt `--oltp-*`) are taken out.
    let legacy = args.iter().skip(1).any(|a| {
        let a = a.to_string_lossy();
        let name = a.split('=').next().unwrap_or("");
        LEGACY.contains(&name) || name.starts_with("--oltp-")
    });
    let (args, options) = declared_options(args)?;
    let command = <RawArgs as clap::CommandFactory>::command();
    let ids: Vec<String> = command
        .get_arguments()
        .filter(|a| !a.is_positional())
        .map(|a| a.get_id().to_string())
        .collect();
    let matches = command
        .try_get_matches_from(args)
        .map_err(suggest_declared)?;
    let mut raw = <RawArgs as clap::FromArgMatches>::from_arg_matches(&matches)?;
    raw.given = matches
        .ids()
        .filter(|id| ids.iter().any(|o| o == id.as_str()))
        .filter(|id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .map(|id| id.to_string())
        .collect();
    raw.legacy = legacy;
    raw.options = options;
    Ok(raw)
}

/// A declared option by its name or alias on the command line (`--file-num`,
/// `--oltp-table-size`).
fn declared_option(arg: &str) -> Option<&'static OptionDef> {
    let name = arg.strip_prefix("--")?;
    declared_defs().find(|o| o.answers_to(name))
}

/// Every declared option: the declared tests' and the groups' (spec::GROUPS).
fn declared_defs() -> impl Iterator<Item = &'static OptionDef> {
    DECLARED
        .iter()
        .flat_map(|d| d.options)
        .chain(GROUPS.iter().flat_map(|g| g.1))
}

/// clap's "did you mean" knows only clap's options: for an unknown option, a declared one
/// that is closer (by clap's own measure, Jaro above 0.7) becomes the suggestion.
fn suggest_declared(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let given = given.split('=').next().unwrap_or_default().to_string();
    let score = |candidate: &str| strsim::jaro(&given, candidate);
    let clap_score = match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => score(s),
        _ => 0.0,
    };
    let best = declared_defs()
        .flat_map(|o| std::iter::once(&o.name).chain(o.aliases))
        .map(|name| format!("--{name}"))
        .map(|c| (score(&c), c))
        .filter(|(s, _)| *s > 0.7 && *s > clap_score)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, name)) = best {
        e.insert(ContextKind::SuggestedArg, ContextValue::String(name));
    }
    e
}

/// clap's "did you mean" suggestions for an error (`--threads`), if it has any.
pub fn suggestions(e: &clap::Error) -> Vec<String> {
    use clap::error::{ContextKind, ContextValue};
    let mut out = Vec::new();
    for kind in [ContextKind::SuggestedArg, ContextKind::SuggestedValue] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => out.push(s.clone()),
            Some(ContextValue::Strings(v)) => out.extend(v.iter().cloned()),
            _ => {}
        }
    }
    out
}

/// The candidate closest to `given` by the measure clap's "did you mean" uses (Jaro), if
/// one is above 0.7.
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro(given, c), c))
        .filter(|(s, _)| *s > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The arguments left for clap, and the declared tests' options taken out of them.
type Split = (Vec<OsString>, Vec<(String, String)>);

/// Takes the declared tests' options (`--name=value` or `--name value`) out of the
/// arguments. One given again, under its name or an alias, replaces the earlier value (the
/// last one wins, as in sysbench 1.0) and takes the later place.
fn declared_options(args: Vec<OsString>) -> Result<Split, clap::Error> {
    use clap::error::ErrorKind;
    let mut rest = Vec::with_capacity(args.len());
    let mut options: Vec<(String, String)> = Vec::new();
    let mut it = args.into_iter();
    rest.extend(it.next());
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            rest.push(a);
            continue;
        };
        let (name, value) = match s.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (s, None),
        };
        let Some(def) = declared_option(name) else {
            rest.push(a);
            continue;
        };
        let value = match value {
            Some(v) => v,
            None => it
                .next()
                .map(|v| v.to_string_lossy().into_owned())
                .ok_or_else(|| {
                    clap::Error::raw(
                        ErrorKind::InvalidValue,
                        format!(
                            "a value is required for '--{}' but none was supplied\n",
                            def.name
                        ),
                    )
                })?,
        };
        options.retain(|(n, _)| n != def.name);
        options.push((def.name.to_string(), value));
    }
    Ok((rest, options))
}

/// The log filter for sysbench's `--verbosity=N` (0 critical only .. 5 debug), read from the
/// raw arguments before they are parsed, since logging starts first. None without it.
pub fn verbosity_filter(args: &[OsString]) -> Option<&'static str> {
    let mut it = args.iter().skip(1).map(|a| a.to_string_lossy());
    let mut value = None;
    while let Some(a) = it.next() {
        let a = a.replace('_', "-");
        if let Some(v) = a.strip_prefix("--verbosity=") {
            value = Some(v.to_string());
        } else if a == "--verbosity" {
            value = it.next().map(|v| v.to_string());
        }
    }
    Some(match value?.trim().parse::<u8>().ok()? {
        0 | 1 => "error",
        // sysbench's default (3) prints its notes and warnings: ours are warnings.
        2 | 3 => "warn",
        4 => "info",
        _ => "debug",
    })
}

/// tpcc-mysql's option letters, the long options they stand for and what they mean.
const TPCC_LETTERS: [(char, &str, &str); 10] = [
    ('h', "--mysql-host", "server host"),
    ('P', "--mysql-port", "server port"),
    ('d', "--mysql-db", "database name"),
    ('u', "--mysql-user", "user"),
    ('p', "--mysql-password", "password"),
    ('w', "--warehouses", "warehouses"),
    ('c', "--threads", "connections (threads)"),
    ('r', "--warmup-time", "warm-up seconds (ramp-up)"),
    ('l', "--time", "measured seconds (run length)"),
    ('i', "--report-interval", "seconds between interval lines"),
];

/// The options of the command line itself (not a test's) that apply to TPC-C's run.
const TPCC_GENERAL: [&str; 4] = ["threads", "time", "warmup-time", "report-interval"];

/// On a tpcc command line, rewrites tpcc-mysql's letters (`-h127.0.0.1`, `-p ''`, `-w 50`)
/// as the long options, so that a tuning report's command line runs as it is. Other
/// command lines are left alone (`-h` stays help).
fn tpcc_letters(args: Vec<OsString>) -> Vec<OsString> {
    let is_tpcc = args
        .iter()
        .skip(1)
        .any(|a| a == "tpcc" || a == "--test=tpcc");
    if !is_tpcc {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    out.extend(it.next());
    while let Some(a) = it.next() {
        let letter = a.to_str().and_then(|s| {
            let mut ch = s.strip_prefix('-')?.chars();
            let c = ch.next()?;
            let long = TPCC_LETTERS.iter().find(|(l, _, _)| *l == c)?.1;
            Some((long, ch.as_str().to_string()))
        });
        match letter {
            Some((long, attached)) if !attached.is_empty() => {
                out.push(format!("{long}={attached}").into());
            }
            Some((long, _)) => match it.next() {
                Some(v) => out.push(format!("{long}={}", v.to_string_lossy()).into()),
                // A letter at the end without its value: clap says what is missing.
                None => out.push(long.into()),
            },
            None => out.push(a),
        }
    }
    out
}

/// Option names only sysbench 0.4/0.5 had (besides every `--oltp-*`): a command line using
/// one is an old one, and gets 0.4/0.5's limits when it sets none (10,000 events).
const LEGACY: [&str; 10] = [
    "--mysql-create-options",
    "--mysql-engine-trx",
    "--myisam-max-rows",
    "--num-threads",
    "--max-time",
    "--max-requests",
    "--test",
    "--init-rng",
    "--rand-init",
    "--tx-rate",
];

/// The option groups (help headings) a test's own options are listed under.
/// (The declared tests list theirs from their declaration, [`test_help`].)
pub fn test_headings(test: &str) -> Option<&'static [&'static str]> {
    Some(match test {
        "tpcc" => &["TPC-C", "Server", "Database"],
        t if t.starts_with("oltp_") || t.starts_with("select_random_") || t == "bulk_insert" => {
            &["OLTP", "Server", "Statements", "Database", "Random numbers"]
        }
        _ => return None,
    })
}

/// `fleetbench TEST help`: the test's own options with their defaults, as `sysbench TEST
/// help` lists them; None for an unknown test.
pub fn test_help(test: &str) -> Option<String> {
    use clap::CommandFactory;
    use std::fmt::Write;
    let declared = |s: &mut String, options: &[OptionDef]| {
        for o in options {
            // --mysql-db's and --pgsql-db's default is the test's own database.
            let default = match (o.name, o.default) {
                ("mysql-db" | "pgsql-db", _) if test == "tpcc" => " [default: tpcc]".to_string(),
                ("mysql-db" | "pgsql-db", _) => " [default: sbtest]".to_string(),
                (_, "") => String::new(),
                (_, d) => format!(" [default: {d}]"),
            };
            let _ = writeln!(s, "  --{:<32} {}{default}", o.name, o.help);
        }
    };
    if let Some(d) = fleetbench_model::spec::declared(test) {
        let mut s = format!("{test} options ({test}):\n");
        declared(&mut s, d.options);
        s.push('\n');
        return Some(s);
    }
    let headings = test_headings(test)?;
    let cmd = RawArgs::command();
    let mut s = String::new();
    let clap_line = |s: &mut String, a: &clap::Arg| {
        if let (Some(long), Some(help)) = (a.get_long(), a.get_help()) {
            let _ = writeln!(s, "  --{long:<32} {help}");
        }
    };
    if test == "tpcc" {
        let _ = writeln!(
            s,
            "tpcc-mysql's option letters (on a tpcc command line, `-w50` or `-w 50`):"
        );
        for (letter, long, meaning) in TPCC_LETTERS {
            let _ = writeln!(s, "  -{letter}  {long:<20} {meaning}");
        }
        let _ = writeln!(s, "\ntpcc options (General):");
        for name in TPCC_GENERAL {
            if let Some(a) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                clap_line(&mut s, a);
            }
        }
        s.push('\n');
    }
    for h in headings {
        let _ = writeln!(s, "{test} options ({h}):");
        for (_, defs) in GROUPS.iter().filter(|g| g.0 == *h) {
            declared(&mut s, defs);
        }
        for a in cmd
            .get_arguments()
            .filter(|a| a.get_help_heading() == Some(*h) && !a.is_hide_set())
        {
            clap_line(&mut s, a);
        }
        s.push('\n');
    }
    Some(s)
}

/// On/off options: sysbench reads `--name` alone as `--name=on`, wherever it stands
/// (with the declared tests' [`Kind::Flag`] options).
const BOOLEANS: &[&str] = &[
    "--debug",
    "--histogram",
    "--init-rng",
    "--rand-init",
    "--validate",
];

/// Gives a bare on/off option its `=on`, so that it never takes the next word (a test
/// name, a command) as its value. Followed by an on/off word, it is left to take it.
fn bare_booleans_on(args: Vec<OsString>) -> Vec<OsString> {
    let is_switch_word = |a: Option<&OsString>| {
        a.and_then(|a| a.to_str()).is_some_and(|w| {
            matches!(
                w.to_ascii_lowercase().as_str(),
                "on" | "off" | "true" | "false" | "yes" | "no" | "1" | "0"
            )
        })
    };
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        match a.to_str() {
            Some(s)
                if (BOOLEANS.contains(&s)
                    || declared_option(s).is_some_and(|o| o.kind == Kind::Flag))
                    && !is_switch_word(args.get(i + 1)) =>
            {
                out.push(format!("{s}=on").into());
            }
            _ => out.push(a.clone()),
        }
    }
    out
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

    /// The run's options (fleetbench_model::run) are the command line's: the same names
    /// and the same old spellings, so the declaration the script planner and the agents
    /// follow is the one the user types.
    #[test]
    fn the_run_options_declared_are_the_command_lines() {
        use clap::CommandFactory;
        let cmd = RawArgs::command();
        for def in fleetbench_model::run::RUN_OPTIONS {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(def.name))
                .unwrap_or_else(|| {
                    panic!("--{} is declared but not on the command line", def.name)
                });
            let aliases: Vec<&str> = arg.get_all_aliases().unwrap_or_default();
            for old in def.aliases {
                assert!(
                    aliases.contains(old),
                    "--{old} is not an alias of --{}",
                    def.name
                );
            }
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                help.contains(&format!("[default: {}]", def.default)),
                "--{}'s help does not say its declared default {}: {help}",
                def.name,
                def.default
            );
        }
    }

    #[test]
    fn report_style_help_names_every_layout() {
        use clap::CommandFactory;
        let help = RawArgs::command().render_long_help().to_string();
        let line: String = help
            .split("--report-style")
            .nth(1)
            .unwrap_or_default()
            .chars()
            .take(400)
            .collect();
        for style in ["`fleetbench`", "`1.0`", "`0.5`", "`0.4`"] {
            assert!(line.contains(style), "{style} missing: {line}");
        }
    }

    /// `fleetbench --help` (issue 60): the commands first (pgbench, tpcc, scenario and runs
    /// among them, and `TEST help`), then every option in a group, none in a flat list.
    #[test]
    fn help_lists_the_commands_then_the_options_in_groups() {
        use clap::CommandFactory;
        let help = RawArgs::command().render_long_help().to_string();
        let commands = help.find("Commands (").expect("the commands");
        assert!(commands < help.find("Run options:").unwrap(), "{help}");
        for c in [
            "\n  pgbench ",
            "\n  tpcc ",
            "\n  scenario ",
            "\n  runs ",
            "`fleetbench TEST help`",
        ] {
            assert!(help[commands..].contains(c), "{c} in {help}");
        }
        let mut cmd = RawArgs::command();
        cmd.build();
        for a in cmd.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if a.is_hide_set() || ["help", "version"].contains(&long) {
                continue;
            }
            assert!(a.get_help_heading().is_some(), "--{long} has no group");
        }
    }

    fn p(args: &[&str]) -> RawArgs {
        parse(std::iter::once("fleetbench").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn verbosity_maps_to_a_log_filter() {
        let f = |args: &[&str]| {
            let v: Vec<OsString> = std::iter::once("fleetbench")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            verbosity_filter(&v)
        };
        assert_eq!(f(&["cpu", "run"]), None);
        assert_eq!(f(&["--verbosity=0", "cpu", "run"]), Some("error"));
        assert_eq!(f(&["--verbosity", "5", "cpu", "run"]), Some("debug"));
        assert_eq!(f(&["--verbosity=4"]), Some("info"));
        assert_eq!(f(&["--verbosity=x"]), None);
        assert!(parse(["fleetbench", "cpu", "--verbosity=6", "run"]).is_err());
        assert_eq!(p(&["cpu", "--verbosity=3", "run"]).verbosity, Some(3));
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
        assert_eq!(
            a.options,
            [("cpu-max-prime".to_string(), "20000".to_string())]
        );
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
    fn a_repeated_option_or_an_alias_next_to_its_name_takes_the_last_value() {
        // A value option: the last one wins, wherever each stands.
        let a = p(&["cpu", "--time=10", "run", "--time=3"]);
        assert_eq!(a.time.as_deref(), Some("3"));
        let a = p(&["--threads=1", "cpu", "--threads", "3", "run"]);
        assert_eq!(a.threads.as_deref(), Some("3"));
        // An alias next to its main name, in either order.
        let a = p(&["cpu", "--num-threads=8", "--threads=4", "run"]);
        assert_eq!(a.threads.as_deref(), Some("4"));
        let a = p(&["cpu", "--threads=4", "--num-threads=8", "run"]);
        assert_eq!(a.threads.as_deref(), Some("8"));
        let a = p(&["cpu", "--max-time=5", "--time=7", "--max_time=9", "run"]);
        assert_eq!(a.time.as_deref(), Some("9"));
        // Flags: a plain one repeated, and an on/off one turned on, then off.
        let a = p(&["compare", "--force", "--force", "a.json", "b.json"]);
        assert!(a.force);
        let a = p(&["cpu", "--histogram", "run", "--histogram=off"]);
        assert_eq!(a.histogram.as_deref(), Some("off"));
        let a = p(&["cpu", "--histogram=off", "--histogram", "run"]);
        assert_eq!(a.histogram.as_deref(), Some("on"));
        // Repeatable options stay repeatable: every occurrence is kept.
        let a = p(&["cpu", "--agents=a:1", "--agents=b:2", "run"]);
        assert_eq!(a.agents, ["a:1", "b:2"]);
        let a = p(&["cpu", "--tag=a=1", "--tag=b=2", "run"]);
        assert_eq!(a.tag, ["a=1", "b=2"]);
    }

    #[test]
    fn a_repeated_declared_option_or_its_alias_takes_the_last_value() {
        let o = |k: &str, v: &str| (k.to_string(), v.to_string());
        // A value option.
        let a = p(&["cpu", "--cpu-max-prime=3", "run", "--cpu-max-prime=4"]);
        assert_eq!(a.options, [o("cpu-max-prime", "4")]);
        // An alias (0.5's --oltp-range-size) and its main name, in either order; the
        // option takes the place of its last occurrence.
        let a = p(&[
            "--oltp-range-size=5",
            "--tables=2",
            "--range-size=6",
            "oltp_read_only",
            "run",
        ]);
        assert_eq!(a.options, [o("tables", "2"), o("range-size", "6")]);
        let a = p(&[
            "--range-size=6",
            "--oltp-range-size",
            "5",
            "oltp_read_only",
            "run",
        ]);
        assert_eq!(a.options, [o("range-size", "5")]);
        // A declared flag: bare, then off; off, then bare.
        let a = p(&["fileio", "--file-fsync-all", "--file-fsync-all=off", "run"]);
        assert_eq!(a.options, [o("file-fsync-all", "off")]);
        let a = p(&["fileio", "--file-fsync-all=off", "--file-fsync-all", "run"]);
        assert_eq!(a.options, [o("file-fsync-all", "on")]);
    }

    #[test]
    fn tpcc_mysql_letters_are_rewritten_on_tpcc_command_lines_only() {
        // (That they plan as the long options do: plan.rs's tests.)
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            tpcc_letters(os(&[
                "fb",
                "tpcc",
                "-h127.0.0.1",
                "-p",
                "",
                "-w",
                "50",
                "run"
            ])),
            os(&[
                "fb",
                "tpcc",
                "--mysql-host=127.0.0.1",
                "--mysql-password=",
                "--warehouses=50",
                "run"
            ])
        );
        // A letter without its value is left for clap to say what is missing.
        assert_eq!(
            tpcc_letters(os(&["fb", "--test=tpcc", "run", "-c"])),
            os(&["fb", "--test=tpcc", "run", "--threads"])
        );
        // Not a tpcc command line: -h stays help, so this is refused, not a host.
        let cpu = os(&["fb", "cpu", "-h127.0.0.1", "run"]);
        assert_eq!(tpcc_letters(cpu.clone()), cpu);
        assert!(parse(["fleetbench", "cpu", "-h127.0.0.1", "run"]).is_err());
    }

    #[test]
    fn declared_test_options_are_taken_out_and_listed_by_test_help() {
        let a = p(&[
            "fileio",
            "--file-num",
            "4",
            "--file_fsync_all",
            "run",
            "--file-block-size=4K",
        ]);
        assert_eq!(a.words, ["fileio", "run"]);
        let o = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            a.options,
            [
                o("file-num", "4"),
                o("file-fsync-all", "on"),
                o("file-block-size", "4K")
            ]
        );
        let e = parse(["fleetbench", "cpu", "run", "--cpu-max-prime"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("a value is required for '--cpu-max-prime'"),
            "{e}"
        );
        // No declared option shadows one of clap's.
        use clap::CommandFactory;
        let cmd = RawArgs::command();
        for def in declared_defs() {
            for &name in std::iter::once(&def.name).chain(def.aliases) {
                assert!(
                    cmd.get_arguments().all(|a| a.get_long() != Some(name)
                        && !a.get_all_aliases().unwrap_or_default().contains(&name)),
                    "--{name} is declared twice",
                );
            }
        }
        let help = test_help("memory").unwrap();
        assert!(help.contains("--memory-block-size"), "{help}");
        assert!(help.contains("[default: 1K]"), "{help}");
        assert!(!help.contains("--file-num"), "{help}");
    }

    #[test]
    fn a_mistyped_declared_option_is_told_what_was_meant() {
        use clap::error::{ContextKind, ContextValue};
        for (typo, meant) in [
            ("--point-selcts=3", "--point-selects"),
            ("--oltp-point-selcts=3", "--oltp-point-selects"),
            ("--cpu-max-prme=9", "--cpu-max-prime"),
            ("--threds=2", "--threads"),
        ] {
            let e = parse(["fleetbench", typo, "oltp_read_write", "run"]).unwrap_err();
            assert_eq!(
                e.get(ContextKind::SuggestedArg),
                Some(&ContextValue::String(meant.into())),
                "{typo}: {e}"
            );
        }
    }

    #[test]
    fn oltp_options_are_declared_with_their_old_spellings() {
        let raw = parse([
            "fleetbench",
            "--oltp-table-size=500",
            "--point_selects",
            "3",
            "--auto-inc",
            "oltp_read_write",
            "run",
        ])
        .unwrap();
        assert_eq!(
            raw.options,
            [
                ("table-size".to_string(), "500".to_string()),
                ("point-selects".to_string(), "3".to_string()),
                ("auto-inc".to_string(), "on".to_string()),
            ]
        );
        assert_eq!(raw.words, ["oltp_read_write", "run"]);
        // An `--oltp-*` spelling makes a 0.4/0.5 command line, as before.
        assert!(raw.legacy);
        assert!(
            !parse(["fleetbench", "--table-size=5", "oltp_read_write", "run"])
                .unwrap()
                .legacy
        );
        let help = test_help("oltp_read_write").unwrap();
        assert!(
            help.contains("--point-selects") && help.contains("[default: 10]"),
            "{help}"
        );
        assert!(
            help.contains("--tables") && help.contains("--mysql-host"),
            "{help}"
        );
    }

    #[test]
    fn tpcc_help_lists_what_tpcc_reads() {
        let help = test_help("tpcc").unwrap();
        for o in [
            "--warehouses",
            "--mysql-host",
            "--mysql-ssl-mode",
            "--mysql-storage-engine",
        ] {
            assert!(help.contains(o), "{o}: {help}");
        }
        // tpcc-mysql's letters, what each means, and the run's own options.
        for l in [
            "-h  --mysql-host",
            "-P  --mysql-port",
            "-d  --mysql-db",
            "-u  --mysql-user",
            "-p  --mysql-password",
            "-w  --warehouses",
            "-c  --threads",
            "-r  --warmup-time",
            "-l  --time",
            "-i  --report-interval",
        ] {
            assert!(help.contains(l), "{l}: {help}");
        }
        let general = help.split("tpcc options (General):").nth(1).expect(&help);
        for o in [
            "--threads ",
            "--time ",
            "--warmup-time ",
            "--report-interval ",
        ] {
            assert!(general.contains(&format!("\n  {o}")), "{o}: {help}");
        }
        let db = help
            .lines()
            .find(|l| l.starts_with("  --mysql-db "))
            .unwrap();
        assert!(db.ends_with("[default: tpcc]"), "{db}");
        assert!(!help.contains("sbtest;"), "{help}");
        let pg_db = help
            .lines()
            .find(|l| l.starts_with("  --pgsql-db "))
            .unwrap();
        assert!(pg_db.ends_with("[default: tpcc]"), "{pg_db}");
        let oltp = test_help("oltp_read_write").unwrap();
        let db = oltp
            .lines()
            .find(|l| l.starts_with("  --mysql-db "))
            .unwrap();
        assert!(db.ends_with("[default: sbtest]"), "{db}");
        // OLTP's statements and table map are not TPC-C's.
        for o in [
            "--db-ps-mode",
            "--mysql-ignore-errors",
            "--table-map",
            "--tables",
        ] {
            assert!(!help.contains(&format!("{o} ")), "{o}: {help}");
        }
    }

    #[test]
    fn the_closest_candidate_is_suggested_above_0_7_only() {
        let names = ["test", "threads", "time", "tables"];
        assert_eq!(closest("tabels", names), Some("tables"));
        assert_eq!(closest("thredas", names), Some("threads"));
        assert_eq!(closest("zzzzzz", names), None);
    }

    #[test]
    fn unknown_option_is_an_error() {
        assert!(parse(["fleetbench", "--no-such-option=1", "cpu", "run"]).is_err());
    }
}
