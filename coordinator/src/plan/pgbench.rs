//! `fleetbench pgbench`'s command line: pgbench's own options (PostgreSQL 15), its
//! environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) and fleetbench's
//! `--agents`, `--json` and `--token-file`, read into a checked [`PgbenchArgs`]. Pure: the
//! environment comes in as a function.

use std::path::PathBuf;

use fleetbench_model::workloads::oltp::tls::{SslMode, SslSettings};
use fleetbench_model::workloads::pgbench::{
    Builtin, MAX_PARTITIONS, MAX_SCALE, MAX_TRIES, PartitionMethod, PgbenchConfig, QueryMode,
    Script, Step,
};
use fleetbench_model::workloads::server::{Driver, Target};

/// pgbench's default initialisation steps.
pub const DEFAULT_STEPS: &str = "dtgvp";

/// Transactions per client when neither -T nor -t is given (pgbench's default).
pub const DEFAULT_TRANSACTIONS: u64 = 10;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct PgbenchArgs {
    /// `-i`: initialise instead of running.
    pub init: bool,
    pub steps: Vec<Step>,
    /// `-s`, if given (a run reads the scale from the tables).
    pub scale: Option<u32>,
    pub fillfactor: u32,
    pub unlogged: bool,
    pub partitions: u32,
    pub partition_method: PartitionMethod,
    /// The scripts in order with their weights; a file's text is read by
    /// [`load_scripts`], after the command line.
    pub scripts: Vec<(Script, u32)>,
    /// `-D NAME=VALUE`, in order (a later one wins).
    pub defines: Vec<(String, String)>,
    /// `-C`: a new connection per transaction.
    pub connect_each: bool,
    /// `-l`: the transaction log the coordinator writes.
    pub log: Option<LogArgs>,
    pub clients: u32,
    pub jobs: u32,
    /// `-T` seconds, or `-t` transactions per client.
    pub duration: Option<u64>,
    pub transactions: Option<u64>,
    /// `-P` seconds.
    pub progress: Option<u64>,
    /// `-R` transactions per second over all clients.
    pub rate: Option<f64>,
    /// `-L` milliseconds.
    pub latency_limit_ms: Option<f64>,
    pub mode: QueryMode,
    pub per_statement: bool,
    pub max_tries: u32,
    pub failures_detailed: bool,
    pub no_vacuum: bool,
    pub seed: Option<u64>,
    pub target: Target,
    pub agents: Option<Vec<String>>,
    pub json: Option<PathBuf>,
    pub token_file: Option<PathBuf>,
    /// `--ready-timeout` seconds: how long opening the clients may take (fleetbench's own
    /// option, with its default).
    pub ready_timeout: u64,
    /// Options accepted without an effect here, said on stderr.
    pub notes: Vec<String>,
    /// `--help` or `--version`: print and stop.
    pub shown: Option<String>,
}

impl PgbenchArgs {
    /// The threads of each agent (`-j` shared out over the agents, at least one each, and
    /// no more than its clients need), as pgbench's `-j` threads run its clients.
    pub fn agent_jobs(&self) -> u32 {
        let agents = self.agents.as_ref().map_or(1, |l| l.len().max(1)) as u32;
        let clients = self.clients.div_ceil(agents);
        self.jobs.div_ceil(agents).clamp(1, clients.max(1))
    }

    /// The workload of a step or a run at `scale`.
    pub fn config(&self, scale: u32, step: Step) -> PgbenchConfig {
        PgbenchConfig {
            target: self.target.clone(),
            scale,
            scripts: self.scripts.clone(),
            defines: self.defines.clone(),
            connect_each: self.connect_each,
            log_sampling: self.log.as_ref().map(|l| l.sampling),
            mode: self.mode,
            max_tries: self.max_tries,
            step,
            fillfactor: self.fillfactor,
            unlogged: self.unlogged,
            partitions: self.partitions,
            partition_method: self.partition_method,
            first_aid: 0,
            last_aid: 0,
            load_small: false,
            jobs: self.agent_jobs(),
            latency_limit_us: self
                .latency_limit_ms
                .map_or(0, |ms| ((ms * 1_000.0).round() as u64).max(1)),
            transactions_per_client: self.transactions.unwrap_or(0),
            per_statement: self.per_statement,
        }
    }
}

/// `-l` and its options: pgbench's log files, written on the coordinator.
#[derive(Debug, Clone, PartialEq)]
pub struct LogArgs {
    /// `--sampling-rate`: the share of transactions logged (1: all).
    pub sampling: f64,
    /// `--aggregate-interval` seconds: one line per interval instead of one per
    /// transaction.
    pub aggregate: Option<u64>,
    /// `--log-prefix` (default pgbench_log).
    pub prefix: String,
}

/// How an option is spelled and whether it takes a value.
struct Opt {
    short: Option<char>,
    long: &'static str,
    value: bool,
}

const fn o(short: Option<char>, long: &'static str, value: bool) -> Opt {
    Opt { short, long, value }
}

/// Every option read, pgbench's and fleetbench's.
const OPTS: &[Opt] = &[
    o(Some('i'), "initialize", false),
    o(Some('I'), "init-steps", true),
    o(Some('s'), "scale", true),
    o(Some('F'), "fillfactor", true),
    o(None, "foreign-keys", false),
    o(None, "unlogged-tables", false),
    o(None, "partitions", true),
    o(None, "partition-method", true),
    o(Some('q'), "quiet", false),
    o(None, "tablespace", true),
    o(None, "index-tablespace", true),
    o(Some('b'), "builtin", true),
    o(Some('f'), "file", true),
    o(Some('N'), "skip-some-updates", false),
    o(Some('S'), "select-only", false),
    o(Some('c'), "client", true),
    o(Some('C'), "connect", false),
    o(Some('D'), "define", true),
    o(Some('j'), "jobs", true),
    o(Some('l'), "log", false),
    o(Some('L'), "latency-limit", true),
    o(Some('M'), "protocol", true),
    o(Some('n'), "no-vacuum", false),
    o(Some('P'), "progress", true),
    o(Some('r'), "report-per-command", false),
    o(Some('R'), "rate", true),
    o(Some('t'), "transactions", true),
    o(Some('T'), "time", true),
    o(Some('v'), "vacuum-all", false),
    o(None, "aggregate-interval", true),
    o(None, "failures-detailed", false),
    o(None, "log-prefix", true),
    o(None, "max-tries", true),
    o(None, "progress-timestamp", false),
    o(None, "random-seed", true),
    o(None, "sampling-rate", true),
    o(None, "show-script", true),
    o(None, "verbose-errors", false),
    o(Some('h'), "host", true),
    o(Some('p'), "port", true),
    o(Some('U'), "username", true),
    o(Some('d'), "debug", false),
    o(Some('V'), "version", false),
    o(Some('?'), "help", false),
    o(None, "agents", true),
    o(None, "json", true),
    o(None, "token-file", true),
    o(None, "ready-timeout", true),
];

/// Options that only initialisation takes, and only a run.
const INIT_ONLY: &[&str] = &[
    "init-steps",
    "fillfactor",
    "foreign-keys",
    "unlogged-tables",
    "partitions",
    "partition-method",
    "quiet",
];
const RUN_ONLY: &[&str] = &[
    "builtin",
    "log",
    "sampling-rate",
    "aggregate-interval",
    "log-prefix",
    "file",
    "define",
    "connect",
    "skip-some-updates",
    "select-only",
    "client",
    "jobs",
    "latency-limit",
    "protocol",
    "no-vacuum",
    "progress",
    "report-per-command",
    "rate",
    "transactions",
    "time",
    "failures-detailed",
    "max-tries",
    "json",
];

/// Options as given, (long name, value), and the positional words.
type Tokens = (Vec<(&'static str, Option<String>)>, Vec<String>);

/// Splits `args` (after `fleetbench pgbench`) into (option, value) pairs and positional
/// words, by pgbench's spelling: `-c4`, `-c 4`, `--client=4`, `--client 4`, `-nS`.
fn tokens(args: &[String]) -> Result<Tokens, String> {
    let mut opts = Vec::new();
    let mut words = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            words.extend(it.by_ref().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let opt = OPTS.iter().find(|o| o.long == name).ok_or_else(|| {
                format!("unrecognized option '--{name}' (try \"fleetbench pgbench --help\")")
            })?;
            let value = match (opt.value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| format!("option '--{name}' requires an argument"))?,
                ),
                (false, Some(_)) => {
                    return Err(format!("option '--{name}' doesn't allow an argument"));
                }
                (false, None) => None,
            };
            opts.push((opt.long, value));
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let opt = OPTS.iter().find(|o| o.short == Some(c)).ok_or_else(|| {
                    format!("invalid option -- '{c}' (try \"fleetbench pgbench --help\")")
                })?;
                if opt.value {
                    let rest: String = chars[k + 1..].iter().collect();
                    let v = if rest.is_empty() {
                        it.next()
                            .cloned()
                            .ok_or_else(|| format!("option requires an argument -- '{c}'"))?
                    } else {
                        rest
                    };
                    opts.push((opt.long, Some(v)));
                    break;
                }
                opts.push((opt.long, None));
                k += 1;
            }
            continue;
        }
        words.push(a.clone());
    }
    Ok((opts, words))
}

/// A whole number within `lo..=hi`, or pgbench's kind of message.
fn int<T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy>(
    what: &str,
    v: &str,
    lo: T,
    hi: T,
) -> Result<T, String> {
    match v.trim().parse::<T>() {
        Ok(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(format!("invalid {what}: \"{v}\" (expected {lo}..{hi})")),
    }
}

fn number(what: &str, v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "invalid {what}: \"{v}\" (expected a positive number)"
        )),
    }
}

/// A `-b NAME[@WEIGHT]`.
fn builtin(v: &str) -> Result<(Script, u32), String> {
    let (name, weight) = match v.rsplit_once('@') {
        Some((n, w)) => (n, int("weight", w, 0u32, i32::MAX as u32)?),
        None => (v, 1),
    };
    Ok((Script::Builtin(Builtin::find(name)?), weight))
}

/// `-f FILE[@WEIGHT]`: the file (read later) and its weight. As in pgbench, what follows
/// the last `@` is a weight only when it is a number.
fn file(v: &str) -> Result<(Script, u32), String> {
    let (name, weight) = match v.rsplit_once('@') {
        Some((n, w)) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => {
            (n, int("weight", w, 0u32, i32::MAX as u32)?)
        }
        _ => (v, 1),
    };
    if name.is_empty() {
        return Err("-f needs a script file's name".into());
    }
    let script = Script::File {
        name: name.to_string(),
        text: String::new(),
    };
    Ok((script, weight))
}

/// `-D NAME=VALUE`.
fn define(v: &str) -> Result<(String, String), String> {
    match v.split_once('=') {
        Some((k, val)) if fleetbench_pgscript::value::valid_name(k) => {
            Ok((k.to_string(), val.to_string()))
        }
        Some((k, _)) => Err(format!("invalid variable name: \"{k}\"")),
        None => Err(format!("invalid variable definition: \"{v}\" (NAME=VALUE)")),
    }
}

/// `-l` with its options, checked together as pgbench checks them.
fn log_args(l: &Loose, duration: Option<u64>) -> Result<Option<LogArgs>, String> {
    if !l.log {
        return match (l.aggregate, l.sampling, &l.prefix) {
            (Some(_), _, _) => Err(
                "log aggregation is allowed only when actually logging transactions (-l)".into(),
            ),
            (_, Some(_), _) => Err(
                "log sampling (--sampling-rate) is allowed only when logging transactions (-l)"
                    .into(),
            ),
            (_, _, Some(_)) => Err(
                "log file prefix (--log-prefix) is allowed only when logging transactions (-l)"
                    .into(),
            ),
            _ => Ok(None),
        };
    }
    if l.aggregate.is_some() && l.sampling.is_some() {
        return Err("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time".into());
    }
    if let (Some(agg), Some(d)) = (l.aggregate, duration)
        && d % agg != 0
    {
        return Err(format!(
            "duration ({d}) must be a multiple of aggregation interval ({agg})"
        ));
    }
    let prefix = l.prefix.clone().unwrap_or_else(|| "pgbench_log".into());
    if prefix.is_empty() || prefix.contains('\0') {
        return Err("invalid log file prefix".into());
    }
    Ok(Some(LogArgs {
        sampling: l.sampling.unwrap_or(1.0),
        aggregate: l.aggregate,
        prefix,
    }))
}

/// Reads each script file of `a` with `read` and checks it whole (its syntax, and that
/// the query mode can run it): a mistake is one line naming the file, the line and the
/// column, before anything starts.
pub fn load_scripts(
    a: &mut PgbenchArgs,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<(), String> {
    let extended = a.mode != QueryMode::Simple;
    for (s, _) in &mut a.scripts {
        let Script::File { name, text } = s else {
            continue;
        };
        *text = read(name).map_err(|e| format!("could not open file \"{name}\": {e}"))?;
        let p = fleetbench_pgscript::Program::parse(text).map_err(|e| format!("{name}:{e}"))?;
        p.check_mode(extended).map_err(|e| format!("{name}:{e}"))?;
    }
    Ok(())
}

/// Options read loose from the command line and settled once all are read.
#[derive(Default)]
struct Loose {
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    foreign_keys: bool,
    method_given: bool,
    log: bool,
    sampling: Option<f64>,
    aggregate: Option<u64>,
    prefix: Option<String>,
}

/// Reads pgbench's command line; `env` gives the PG environment variables (and USER).
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<PgbenchArgs, String> {
    let (opts, words) = tokens(args)?;
    let mut a = defaults()?;
    let mut loose = Loose::default();
    let mut given: Vec<&'static str> = Vec::new();
    for (name, value) in opts {
        given.push(name);
        apply(&mut a, &mut loose, name, value.unwrap_or_default())?;
    }
    if a.shown.is_some() {
        return Ok(a);
    }
    if words.len() > 1 {
        return Err(format!(
            "too many command-line arguments (first is \"{}\")",
            words[1]
        ));
    }
    check_modes(&a, &given)?;
    if loose.foreign_keys && !a.steps.contains(&Step::ForeignKeys) {
        a.steps.push(Step::ForeignKeys);
    }
    if loose.method_given && a.partitions == 0 {
        return Err("--partition-method requires greater than zero --partitions".into());
    }
    if a.duration.is_some() && a.transactions.is_some() {
        return Err(
            "specify either a number of transactions (-t) or a duration (-T), not both".into(),
        );
    }
    if !a.init && a.duration.is_none() && a.transactions.is_none() {
        a.transactions = Some(DEFAULT_TRANSACTIONS);
    }
    if a.scripts.is_empty() {
        a.scripts.push((Script::Builtin(Builtin::TpcbLike), 1));
    }
    a.scripts = merge_scripts(std::mem::take(&mut a.scripts));
    if a.scripts.len() > fleetbench_model::workloads::pgbench::MAX_SCRIPTS {
        return Err(format!(
            "at most {} scripts (-b, -f, -N, -S) in one run, {} given",
            fleetbench_model::workloads::pgbench::MAX_SCRIPTS,
            a.scripts.len()
        ));
    }
    if a.scripts.iter().all(|(_, w)| *w == 0) {
        return Err("total script weight must not be zero".into());
    }
    a.log = log_args(&loose, a.duration)?;
    let Loose {
        host, port, user, ..
    } = loose;
    a.target = target(host, port, user, words.first().cloned(), env)?;
    Ok(a)
}

/// pgbench's defaults, before the command line.
fn defaults() -> Result<PgbenchArgs, String> {
    Ok(PgbenchArgs {
        init: false,
        steps: Step::parse_letters(DEFAULT_STEPS)?,
        scale: None,
        fillfactor: 100,
        unlogged: false,
        partitions: 0,
        partition_method: PartitionMethod::Range,
        scripts: Vec::new(),
        defines: Vec::new(),
        connect_each: false,
        log: None,
        clients: 1,
        jobs: 1,
        duration: None,
        transactions: None,
        progress: None,
        rate: None,
        latency_limit_ms: None,
        mode: QueryMode::Simple,
        per_statement: false,
        max_tries: 1,
        failures_detailed: false,
        no_vacuum: false,
        seed: None,
        target: Target {
            name: "postgres".into(),
            driver: Driver::Pgsql,
            ..Target::default()
        },
        agents: None,
        json: None,
        token_file: None,
        ready_timeout: super::READY_TIMEOUT_SECS,
        notes: Vec::new(),
        shown: None,
    })
}

/// Applies option `name` (its long name) with value `v` ("" for a flag).
fn apply(a: &mut PgbenchArgs, loose: &mut Loose, name: &str, v: String) -> Result<(), String> {
    match name {
        "initialize" => a.init = true,
        "init-steps" => a.steps = Step::parse_letters(&v)?,
        "scale" => a.scale = Some(int("scaling factor", &v, 1, MAX_SCALE)?),
        "fillfactor" => a.fillfactor = int("fillfactor", &v, 10, 100)?,
        "foreign-keys" => loose.foreign_keys = true,
        "unlogged-tables" => a.unlogged = true,
        "partitions" => a.partitions = int("number of partitions", &v, 0, MAX_PARTITIONS)?,
        "partition-method" => {
            loose.method_given = true;
            a.partition_method = PartitionMethod::parse(&v).ok_or_else(|| {
                format!("invalid partition method, expecting \"range\" or \"hash\", got: \"{v}\"")
            })?
        }
        "quiet" | "debug" => {}
        "builtin" => a.scripts.push(builtin(&v)?),
        "skip-some-updates" => a.scripts.push((Script::Builtin(Builtin::SimpleUpdate), 1)),
        "select-only" => a.scripts.push((Script::Builtin(Builtin::SelectOnly), 1)),
        "file" => a.scripts.push(file(&v)?),
        "define" => a.defines.push(define(&v)?),
        "connect" => a.connect_each = true,
        "log" => loose.log = true,
        "sampling-rate" => {
            let r = number("sampling rate", &v)?;
            if !(r > 0.0 && r <= 1.0) {
                return Err(format!("invalid sampling rate: \"{v}\" (0 < rate <= 1)"));
            }
            loose.sampling = Some(r);
        }
        "aggregate-interval" => {
            loose.aggregate = Some(int("aggregation interval", &v, 1, 86_400)?)
        }
        "log-prefix" => loose.prefix = Some(v),
        "client" => a.clients = int("number of clients", &v, 1, 1_000_000)?,
        "jobs" => a.jobs = int("number of threads", &v, 1, 1_000_000)?,
        "time" => a.duration = Some(int("duration", &v, 1, 31_536_000)?),
        "transactions" => {
            a.transactions = Some(int("number of transactions", &v, 1, 1_000_000_000_000)?)
        }
        "progress" => a.progress = Some(int("thread progress delay", &v, 1, 86_400)?),
        "rate" => {
            let r = number("rate", &v)?;
            // The bound of every other test's --rate (and of the agents' check).
            if r > super::MAX_RATE {
                return Err(format!(
                    "invalid rate: \"{v}\" (at most 100000000 transactions per second)"
                ));
            }
            a.rate = Some(r);
        }
        "latency-limit" => a.latency_limit_ms = Some(number("latency limit", &v)?),
        "protocol" => {
            a.mode = QueryMode::parse(&v).ok_or_else(|| {
                format!("invalid query mode (-M): \"{v}\" (simple, extended or prepared)")
            })?
        }
        "report-per-command" => a.per_statement = true,
        "max-tries" => a.max_tries = int("number of maximum tries", &v, 1, MAX_TRIES)?,
        "failures-detailed" => a.failures_detailed = true,
        "no-vacuum" => a.no_vacuum = true,
        "random-seed" => {
            a.seed = match v.as_str() {
                "time" | "rand" => None,
                s => Some(s.parse::<u64>().map_err(|_| {
                    format!("unrecognized random seed option \"{v}\": expecting an unsigned integer, \"time\" or \"rand\"")
                })?),
            }
        }
        "host" => loose.host = Some(v),
        "port" => loose.port = Some(v),
        "username" => loose.user = Some(v),
        "agents" => {
            let list: Vec<String> = v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            if list.is_empty() {
                return Err("--agents needs host:port[,host:port...]".into());
            }
            a.agents = Some(list);
        }
        "json" => a.json = Some(PathBuf::from(v)),
        "token-file" => a.token_file = Some(PathBuf::from(v)),
        "ready-timeout" => {
            a.ready_timeout = int("ready timeout", &v, 1, fleetbench_model::limits::MAX_SECONDS)?
        }
        "version" => {
            a.shown = Some(format!(
                "fleetbench pgbench (fleetbench {})",
                env!("CARGO_PKG_VERSION")
            ))
        }
        "help" => a.shown = Some(HELP.to_string()),
        other => {
            return Err(format!(
                "--{other} is not supported by fleetbench pgbench (see docs/pgbench.md)"
            ));
        }
    }
    Ok(())
}

/// One slot per built-in script: the same one named twice has its weights added (files
/// stay apart, each its own script).
fn merge_scripts(scripts: Vec<(Script, u32)>) -> Vec<(Script, u32)> {
    let mut merged: Vec<(Script, u32)> = Vec::new();
    for (b, w) in scripts {
        let same = |m: &&mut (Script, u32)| b.builtin().is_some() && m.0 == b;
        match merged.iter_mut().find(same) {
            Some(m) => m.1 = m.1.saturating_add(w),
            None => merged.push((b, w)),
        }
    }
    merged
}

/// pgbench's rule: initialisation options with `-i` only, run options without it.
fn check_modes(a: &PgbenchArgs, given: &[&str]) -> Result<(), String> {
    let wrong: Vec<&str> = given
        .iter()
        .copied()
        .filter(|g| {
            if a.init {
                RUN_ONLY.contains(g)
            } else {
                INIT_ONLY.contains(g)
            }
        })
        .collect();
    match (wrong.first(), a.init) {
        (None, _) => Ok(()),
        (Some(w), true) => Err(format!(
            "some of the specified options cannot be used in initialization (-i) mode (--{w})"
        )),
        (Some(w), false) => Err(format!(
            "some of the specified options cannot be used in benchmarking mode (--{w})"
        )),
    }
}

/// Where libpq (as Debian builds it) looks for the server's Unix socket when no host is
/// given.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// The server from -h, -p, -U and the database word, else PGHOST, PGPORT, PGUSER and
/// PGDATABASE, else libpq's defaults (the Unix socket in /var/run/postgresql, 5432, the
/// OS user, a database named as the user). A host that is a directory names a Unix
/// socket, on each agent's own host. PGPASSWORD is the password; PGSSLMODE (default
/// prefer), PGSSLROOTCERT, PGSSLCERT and PGSSLKEY are the TLS settings.
fn target(
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    db: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Target, String> {
    let nonempty = |v: Option<String>| v.filter(|s| !s.is_empty());
    let host = nonempty(host)
        .or_else(|| nonempty(env("PGHOST")))
        .unwrap_or_else(|| DEFAULT_SOCKET_DIR.into());
    if host.contains(',') {
        return Err(format!(
            "host \"{host}\": fleetbench pgbench connects to one host (host lists are not supported); give -h HOST"
        ));
    }
    let mut ssl = SslSettings {
        mode: SslMode::Preferred,
        ..SslSettings::default()
    };
    if let Some(m) = nonempty(env("PGSSLMODE")) {
        ssl.mode = SslMode::parse_libpq(&m)
            .ok_or_else(|| format!("PGSSLMODE \"{m}\": must be {}", SslMode::LIBPQ_NAMES))?;
    }
    ssl.ca = nonempty(env("PGSSLROOTCERT")).map(PathBuf::from);
    ssl.cert = nonempty(env("PGSSLCERT")).map(PathBuf::from);
    ssl.key = nonempty(env("PGSSLKEY")).map(PathBuf::from);
    // In libpq's words: pgbench takes these from the environment.
    ssl.validate_for(Driver::Pgsql).map_err(|e| {
        e.replace("--pgsql-sslmode=", "PGSSLMODE=")
            .replace("--pgsql-sslrootcert", "PGSSLROOTCERT")
            .replace("--pgsql-sslcert", "PGSSLCERT")
            .replace("--pgsql-sslkey", "PGSSLKEY")
    })?;
    // PGPASSWORD, else the password file (PGPASSFILE or ~/.pgpass), as libpq reads it.
    let port_text = nonempty(port)
        .or_else(|| nonempty(env("PGPORT")))
        .unwrap_or_else(|| "5432".into());
    let port = int("port", &port_text, 1u16, u16::MAX)?;
    let user = nonempty(user)
        .or_else(|| nonempty(env("PGUSER")))
        .or_else(|| nonempty(env("USER")))
        .ok_or("no user name: give -U USER or set PGUSER")?;
    let database = nonempty(db)
        .or_else(|| nonempty(env("PGDATABASE")))
        .unwrap_or_else(|| user.clone());
    // (An empty PGPASSWORD is no password, as in libpq: the file is read then.)
    let password = match nonempty(env("PGPASSWORD")) {
        Some(p) => p,
        None => match nonempty(env("PGPASSFILE"))
            .map(PathBuf::from)
            .or_else(|| nonempty(env("HOME")).map(|h| PathBuf::from(h).join(".pgpass")))
        {
            Some(path) => password_file(&path)?
                .and_then(|text| pgpass_lookup(&text, &host, port, &database, &user))
                .unwrap_or_default(),
            None => String::new(),
        },
    };
    Ok(Target {
        name: "postgres".into(),
        driver: Driver::Pgsql,
        host,
        port,
        user,
        password,
        database,
        ssl,
        ..Target::default()
    })
}

/// The most of a password file fleetbench reads: a libpq password file is a few lines.
const MAX_PASSWORD_FILE: u64 = 1 << 20;

/// The text of the password file at `path`; None where there is none (as libpq, which
/// then connects without a password). Larger than [`MAX_PASSWORD_FILE`] (a device, a
/// wrong path) or unreadable for another reason: refused with one line.
fn password_file(path: &std::path::Path) -> Result<Option<String>, String> {
    use fleetbench_model::capped::{CappedError, read_to_string};
    match read_to_string(path, "the password file", MAX_PASSWORD_FILE) {
        Ok(text) => Ok(Some(text)),
        Err(CappedError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The password a libpq password file gives for the connection: the first line
/// `host:port:database:user:password` whose fields match (`*` matches anything, `\`
/// escapes `:` and `\`; a socket directory matches `localhost`, as in libpq).
fn pgpass_lookup(text: &str, host: &str, port: u16, database: &str, user: &str) -> Option<String> {
    let host = if host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let port = port.to_string();
    let wanted = [host, port.as_str(), database, user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = pgpass_fields(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4].clone())
        })
}

/// A password file line's fields, split at unescaped `:`.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one at least").push(n);
                }
            }
            // The password is the rest of the line, colons and all.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one at least").push(c),
        }
    }
    fields
}

/// `fleetbench pgbench --help`.
pub const HELP: &str = "\
fleetbench pgbench: pgbench's built-in benchmark, over fleetbench agents.

Usage:
  fleetbench pgbench -i [OPTION]... [DBNAME]
  fleetbench pgbench [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[dtgGvpf]+ (default \"dtgvp\")
  -F, --fillfactor=NUM     set fill factor
  -q, --quiet              accepted (progress is sampled anyway)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables
  --partition-method=(range|hash)
  --partitions=NUM         partition pgbench_accounts into NUM parts (default: 0)
  --unlogged-tables        create tables as unlogged tables

Benchmarking options:
  -b, --builtin=NAME[@W]   tpcb-like, simple-update or select-only (weight W)
  -N, --skip-some-updates  same as \"-b simple-update\"
  -S, --select-only        same as \"-b select-only\"
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -j, --jobs=NUM           number of threads (shared out over the agents)
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
  -n, --no-vacuum          do not run VACUUM before tests
  -P, --progress=NUM       show progress report every NUM seconds
  -R, --rate=NUM           target rate in transactions per second
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  --failures-detailed      report the failures grouped by basic types
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --random-seed=SEED       set random seed (integer, \"time\" or \"rand\")

Connection options (and PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE,
PGSSLROOTCERT, PGSSLCERT, PGSSLKEY):
  -h, --host=HOSTNAME      database server host or socket directory (default:
                           /var/run/postgresql)
  -p, --port=PORT          database server port number (default: 5432)
  -U, --username=USERNAME  connect as specified database user

fleetbench options:
  --agents=HOST:PORT,...   spread the clients (and the load of -i) over these agents
                           (default: one agent inside this process)
  --json=FILE              write the result document to FILE
  --token-file=FILE        the agents' bearer token
  --ready-timeout=SECS     give up opening the clients after this long (default: 30)

Custom scripts (-f) are not supported. See docs/pgbench.md.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn ok(line: &str) -> PgbenchArgs {
        parse(&args(line), &env(&[("USER", "me")])).unwrap()
    }

    fn err(line: &str) -> String {
        parse(&args(line), &env(&[("USER", "me")])).unwrap_err()
    }

    #[test]
    fn run_defaults_are_pgbench_s() {
        let a = ok("");
        assert!(!a.init);
        assert_eq!(a.scripts, vec![(Script::Builtin(Builtin::TpcbLike), 1)]);
        assert_eq!(a.clients, 1);
        assert_eq!(a.transactions, Some(10));
        assert_eq!(a.mode, QueryMode::Simple);
        assert_eq!(a.target.host, "/var/run/postgresql");
        assert_eq!(a.target.ssl.mode, SslMode::Preferred);
        assert_eq!(a.target.port, 5432);
        assert_eq!(a.target.user, "me");
        assert_eq!(a.target.database, "me");
    }

    #[test]
    fn jobs_are_shared_out_over_the_agents() {
        assert_eq!(ok("-c 4").agent_jobs(), 1);
        assert_eq!(ok("-c 64 -j 8").agent_jobs(), 8);
        // No more threads than clients, at least one per agent.
        assert_eq!(ok("-c 2 -j 8").agent_jobs(), 2);
        assert_eq!(ok("-c 8 -j 4 --agents a:1,b:1").agent_jobs(), 2);
        assert_eq!(ok("-c 8 -j 1 --agents a:1,b:1,c:1").agent_jobs(), 1);
        assert_eq!(ok("-c 8 -j 4").config(1, Step::Check).jobs, 4);
    }

    #[test]
    fn short_options_take_values_attached_or_apart() {
        let a = ok("-c4 -j 2 -T 10 -P1 -M prepared -S -h db1 -p 6543 -U bench pgdb");
        assert_eq!((a.clients, a.jobs), (4, 2));
        assert_eq!(a.duration, Some(10));
        assert_eq!(a.transactions, None);
        assert_eq!(a.progress, Some(1));
        assert_eq!(a.mode, QueryMode::Prepared);
        assert_eq!(a.scripts, vec![(Script::Builtin(Builtin::SelectOnly), 1)]);
        assert_eq!(
            (
                a.target.host.as_str(),
                a.target.port,
                a.target.user.as_str()
            ),
            ("db1", 6543, "bench")
        );
        assert_eq!(a.target.database, "pgdb");
        let b = ok("-nS --client=3 --builtin=simple-update@2 --rate 100 -L 5");
        assert!(b.no_vacuum);
        assert_eq!(
            b.scripts,
            vec![
                (Script::Builtin(Builtin::SelectOnly), 1),
                (Script::Builtin(Builtin::SimpleUpdate), 2)
            ]
        );
        assert_eq!(b.rate, Some(100.0));
        let e = parse(
            &["-U".into(), "u".into(), "-R".into(), "1e300".into()],
            &|_| None,
        )
        .unwrap_err();
        assert!(e.contains("at most 100000000"), "{e}");
        assert_eq!(b.latency_limit_ms, Some(5.0));
    }

    #[test]
    fn init_reads_steps_scale_and_table_options() {
        let a = ok("-i -s 2 -F 90 --foreign-keys --unlogged-tables --partitions=4");
        assert!(a.init);
        assert_eq!(a.scale, Some(2));
        assert_eq!(a.fillfactor, 90);
        assert!(a.unlogged);
        assert_eq!(a.partitions, 4);
        assert_eq!(a.steps.last(), Some(&Step::ForeignKeys));
        assert_eq!(a.transactions, None);
        let b = ok("-i -I dtG");
        assert_eq!(
            b.steps,
            vec![Step::Drop, Step::Create, Step::ServerGenerate]
        );
    }

    #[test]
    fn the_environment_fills_in_the_server() {
        let a = parse(
            &[],
            &env(&[
                ("PGHOST", "10.0.0.5"),
                ("PGPORT", "5433"),
                ("PGUSER", "u"),
                ("PGPASSWORD", "pw"),
                ("PGDATABASE", "bench"),
            ]),
        )
        .unwrap();
        assert_eq!(a.target.host, "10.0.0.5");
        assert_eq!(a.target.port, 5433);
        assert_eq!(a.target.user, "u");
        assert_eq!(a.target.password, "pw");
        assert_eq!(a.target.database, "bench");
        // The command line wins.
        let b = parse(
            &args("-h h2 other"),
            &env(&[("PGHOST", "h1"), ("PGUSER", "u")]),
        )
        .unwrap();
        assert_eq!(b.target.host, "h2");
        assert_eq!(b.target.database, "other");
        // libpq's TLS variables.
        let c = parse(
            &args("-U u"),
            &env(&[
                ("PGSSLMODE", "verify-full"),
                ("PGSSLROOTCERT", "/ca.pem"),
                ("PGSSLCERT", "/c.pem"),
                ("PGSSLKEY", "/k.pem"),
            ]),
        )
        .unwrap();
        assert_eq!(c.target.ssl.mode, SslMode::VerifyIdentity);
        assert_eq!(c.target.ssl.ca, Some(PathBuf::from("/ca.pem")));
        assert_eq!(c.target.ssl.key, Some(PathBuf::from("/k.pem")));
        let e = parse(&args("-U u"), &env(&[("PGSSLMODE", "always")])).unwrap_err();
        assert!(e.contains("PGSSLMODE \"always\""), "{e}");
        let e = parse(&args("-U u"), &env(&[("PGSSLMODE", "verify-ca")])).unwrap_err();
        assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    }

    #[test]
    fn the_password_file_gives_the_first_matching_line() {
        let text = "# comment\n\
                    other:5432:*:u:nope\n\
                    db1:5433:*:u:wrongport\n\
                    db1:5432:bench:u:p\\:w\\\\x\n\
                    *:*:*:*:fallback\n\
                    localhost:5432:*:*:sock\n";
        assert_eq!(
            pgpass_lookup(text, "db1", 5432, "bench", "u").as_deref(),
            Some("p:w\\x")
        );
        assert_eq!(
            pgpass_lookup(text, "db1", 5432, "other", "u").as_deref(),
            Some("fallback")
        );
        let sock = "localhost:5432:*:*:sock\n";
        assert_eq!(
            pgpass_lookup(sock, "/var/run/postgresql", 5432, "d", "u").as_deref(),
            Some("sock")
        );
        assert_eq!(pgpass_lookup("db1:5432:*:u\n", "db1", 5432, "d", "u"), None);
        assert_eq!(pgpass_lookup("", "db1", 5432, "d", "u"), None);
        // Read through PGPASSFILE when PGPASSWORD is not set.
        let dir = std::env::temp_dir().join(format!("fb-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pass");
        std::fs::write(&file, "h:5432:*:u:secret\n").unwrap();
        let f = file.to_string_lossy().into_owned();
        let file_only = |k: &str| (k == "PGPASSFILE").then(|| f.clone());
        let a = parse(&args("-h h -U u"), &file_only).unwrap();
        assert_eq!(a.target.password, "secret");
        let both = |k: &str| match k {
            "PGPASSWORD" => Some("given".to_string()),
            _ => file_only(k),
        };
        let b = parse(&args("-h h -U u"), &both).unwrap();
        assert_eq!(b.target.password, "given");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_input_is_one_clear_line() {
        assert!(err("-f my.sql").contains("custom scripts (-f/--file) are not supported"));
        assert!(err("--file=x.sql").contains("not supported"));
        assert!(err("--bogus").contains("unrecognized option '--bogus'"));
        assert!(err("-Z").contains("invalid option -- 'Z'"));
        assert!(err("-c zero").contains("invalid number of clients"));
        assert!(err("-c 0").contains("invalid number of clients"));
        assert!(err("-T 5 -t 5").contains("not both"));
        assert!(err("-M fast").contains("invalid query mode"));
        assert!(err("-b nope").contains("no builtin script"));
        assert!(err("-i -c 4").contains("initialization (-i) mode"));
        assert!(err("-F 90").contains("benchmarking mode"));
        assert!(err("-i -I dx").contains("initialization step"));
        assert!(err("-h db1,db2").contains("host lists are not supported"));
        assert!(err("a b").contains("too many command-line arguments"));
        assert!(err("-c").contains("requires an argument"));
        assert!(err("-l").contains("not supported"));
        assert!(err("-i --partition-method=hash").contains("--partitions"));
        assert!(err("-b select-only@0").contains("weight must not be zero"));
        for e in [err("-f x"), err("--bogus"), err("-c 0")] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn help_and_version_are_shown() {
        assert!(ok("--help").shown.unwrap().contains("Usage:"));
        assert!(ok("-V").shown.unwrap().starts_with("fleetbench pgbench"));
    }
}
