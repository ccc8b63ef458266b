//! Scenario files: named database targets, agents, table maps and per-scenario options in
//! TOML, so that one command (`fleetbench scenario run FILE [--only NAME]`) prepares, sweeps
//! and cleans up every topology a comparison needs and prints one table, scenario by thread
//! count (or by offered rate). Everything in the file is checked before any load starts;
//! errors name the line and the field.
//!
//! ```toml
//! test = "oltp_read_write"          # defaults for every scenario
//! threads = [16, 32, 64]
//! # rate = [1000, 2000, 4000]       # open loop: one rate, or a rate sweep at one thread count
//! time = 60
//! warmup-time = 10                  # seconds before each step, not measured
//! cooldown = 5                      # seconds of rest between steps
//! agents = ["client1:7600"]         # else --agents / --local-agents / one embedded agent
//! prepare = true                    # prepare and clean up around each scenario
//! [options]                         # any fleetbench option, without the dashes
//! tables = 10
//! [targets]
//! master = "mysql://sbtest:pw@master:3306/sbtest"
//! [[scenario]]
//! name = "direct"
//! targets = ["master"]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::cli::{self, RawArgs};
use crate::error::ScenarioError;
use crate::plan::{self, Command, Plan, PlanError};
use crate::report::doc::{ScenarioDoc, ScenariosDoc};
use crate::sweep::{self, Extras, Step};

/// Options a scenario sets through its own fields, never through `options`.
const MANAGED: [&str; 14] = [
    "threads",
    "num-threads",
    "rate",
    "tx-rate",
    "test",
    "target",
    "table-map",
    "agents",
    "json",
    "csv",
    "html",
    "warmup-time",
    "cooldown",
    "only",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileToml {
    test: Option<Spanned<String>>,
    threads: Option<Spanned<Vec<u32>>>,
    rate: Option<Spanned<RateToml>>,
    time: Option<Spanned<u64>>,
    warmup_time: Option<u64>,
    cooldown: Option<u64>,
    agents: Option<Vec<String>>,
    prepare: Option<bool>,
    #[serde(default)]
    options: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    targets: BTreeMap<Spanned<String>, Spanned<TargetToml>>,
    #[serde(default)]
    scenario: Vec<ScenarioToml>,
}

/// A target of `[targets]`: its URL, or a table with the URL and the observer agents on
/// its host (`db = { url = "mysql://...", observers = ["db1:7600"] }`).
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "a URL such as \"mysql://user:password@host:3306/sbtest\", or { url = \"...\", observers = [\"host:7600\"] }"
)]
enum TargetToml {
    Url(String),
    Full(TargetTable),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetTable {
    url: String,
    #[serde(default)]
    observers: Vec<String>,
    /// The target it replicates: read beside every scenario that loads that one.
    replica_of: Option<String>,
}

impl TargetToml {
    fn url(&self) -> &str {
        match self {
            TargetToml::Url(u) | TargetToml::Full(TargetTable { url: u, .. }) => u,
        }
    }

    fn replica_of(&self) -> Option<&str> {
        match self {
            TargetToml::Url(_) => None,
            TargetToml::Full(t) => t.replica_of.as_deref(),
        }
    }

    /// Agents on its host that observe it (`--observe`).
    fn observers(&self) -> &[String] {
        match self {
            TargetToml::Url(_) => &[],
            TargetToml::Full(t) => &t.observers,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ScenarioToml {
    name: Spanned<String>,
    description: Option<String>,
    targets: Spanned<Vec<Spanned<String>>>,
    table_map: Option<Spanned<String>>,
    test: Option<Spanned<String>>,
    threads: Option<Spanned<Vec<u32>>>,
    rate: Option<Spanned<RateToml>>,
    time: Option<Spanned<u64>>,
    prepare: Option<bool>,
    #[serde(default)]
    options: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// `rate = 1000`, `rate = [1000, 2000]` or, as on the command line, `rate = "1000,2000"`.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected events per second: a number, a list of numbers or a string such as \"1000,2000\""
)]
enum RateToml {
    One(f64),
    List(Vec<f64>),
    Text(String),
}

impl RateToml {
    /// The value as the command line would give it.
    fn text(&self) -> String {
        match self {
            RateToml::One(r) => r.to_string(),
            RateToml::List(l) => l.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
            RateToml::Text(t) => t.clone(),
        }
    }
}

/// One checked scenario: the command-line arguments it stands for, and where each came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub targets: Vec<String>,
    pub threads: Vec<u32>,
    /// Offered rates (`rate`): empty for a closed loop, one for an open loop at that rate,
    /// more for a rate sweep (then `threads` has one count).
    pub rates: Vec<f64>,
    pub prepare: bool,
    /// Arguments after the program name, without the command word and --threads, each
    /// with where it was set (for error messages).
    args: Vec<Arg>,
    /// Line of the scenario's name, for errors with no better place.
    line: usize,
}

/// A checked scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFile {
    pub path: String,
    pub scenarios: Vec<Scenario>,
    pub warmup_s: Option<u64>,
    pub cooldown_s: Option<u64>,
}

/// 1-based line of byte `offset` in `src`.
pub fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key written on the line holding `offset` (`key = value` or `[table]`), if any.
fn key_at(src: &str, offset: usize) -> Option<String> {
    let start = src[..offset.min(src.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = src[start..].lines().next().unwrap_or("").trim();
    if let Some((k, _)) = line.split_once('=') {
        return Some(k.trim().trim_matches('"').to_string());
    }
    line.strip_prefix('[')
        .map(|t| t.trim_matches(|c| c == '[' || c == ']').trim().to_string())
}

/// The field a serde message names (`unknown field `x``, `missing field `x``).
fn field_in_message(msg: &str) -> Option<String> {
    let rest = msg.split_once("field `")?.1;
    Some(rest.split_once('`')?.0.to_string())
}

/// For serde's `unknown field `x`, expected one of `a`, `b``: the expected field closest
/// to `x` (as the command line's "did you mean").
fn field_hint(msg: &str, field: &str) -> Option<String> {
    let expected = msg
        .strip_prefix("unknown field `")?
        .split_once("expected")?
        .1;
    let names = expected.split('`').skip(1).step_by(2);
    cli::closest(field, names).map(str::to_string)
}

/// The file being read, for errors that name its line and field.
struct Source<'a> {
    path: &'a str,
    src: &'a str,
}

impl Source<'_> {
    /// 1-based line of the start of `span`.
    fn line(&self, span: Range<usize>) -> usize {
        line_of(self.src, span.start)
    }

    fn err(&self, span: Range<usize>, field: &str, message: String) -> ScenarioError {
        ScenarioError {
            file: self.path.to_string(),
            line: self.line(span),
            field: field.to_string(),
            message,
        }
    }

    /// `item` as the command-line argument `text`, set at `span` for option `option`
    /// through `field`.
    fn arg<T>(&self, text: String, option: &str, item: &Spanned<T>, field: &str) -> Arg {
        Arg {
            text,
            origin: Some(Origin {
                option: option.to_string(),
                line: self.line(item.span()),
                field: field.to_string(),
            }),
        }
    }
}

/// One command-line argument a scenario stands for, and where in the file it was set.
#[derive(Debug, Clone, PartialEq)]
struct Arg {
    text: String,
    /// None for what the file does not set at one place (the agents).
    origin: Option<Origin>,
}

/// Where in the file an argument was set: the option (as in `--name`), the line and the
/// field.
#[derive(Debug, Clone, PartialEq)]
struct Origin {
    option: String,
    line: usize,
    field: String,
}

/// Parses and checks a scenario file's text. `cli_agents` are the command line's options
/// for every scenario: agent options (`--agents=...`, `--local-agents=...`), which win
/// over the file's `agents`, and tags (`--tag=...`).
pub fn parse(path: &str, src: &str, cli_agents: &[String]) -> Result<ScenarioFile, ScenarioError> {
    let at = Source { path, src };
    let file: FileToml = toml::from_str(src).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let mut msg = e.message().trim().to_string();
        let field = field_in_message(&msg)
            .or_else(|| key_at(src, span.start))
            .unwrap_or_else(|| "-".into());
        if let Some(hint) = field_hint(&msg, &field) {
            msg = format!("{msg} (did you mean '{hint}'?)");
        }
        at.err(span, &field, msg)
    })?;
    if file.scenario.is_empty() {
        return Err(at.err(
            0..0,
            "scenario",
            "no [[scenario]]: the file must define at least one".into(),
        ));
    }
    for (k, v) in &file.targets {
        plan::parse_target(&format!("{}={}", k.get_ref(), v.get_ref().url()))
            .map_err(|e| at.err(v.span(), &format!("targets.{}", k.get_ref()), e.to_string()))?;
    }
    let mut scenarios: Vec<Scenario> = Vec::new();
    for sc in &file.scenario {
        let name = sc.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(at.err(sc.name.span(), "name", "empty scenario name".into()));
        }
        if scenarios.iter().any(|s| s.name == name) {
            return Err(at.err(
                sc.name.span(),
                "name",
                format!("scenario '{name}' is defined twice"),
            ));
        }
        scenarios.push(scenario(&at, &file, sc, name, cli_agents)?);
    }
    Ok(ScenarioFile {
        path: path.to_string(),
        scenarios,
        warmup_s: file.warmup_time,
        cooldown_s: file.cooldown,
    })
}

/// One `[[scenario]]` named `name`, with the file's defaults, checked: every command's
/// plan is built now, so a mistake never surfaces half-way through.
fn scenario(
    at: &Source,
    file: &FileToml,
    sc: &ScenarioToml,
    name: String,
    cli_agents: &[String],
) -> Result<Scenario, ScenarioError> {
    let test = sc.test.as_ref().or(file.test.as_ref()).ok_or_else(|| {
        at.err(
            sc.name.span(),
            "test",
            format!("scenario '{name}' has no test: set `test` at the top or in the scenario"),
        )
    })?;
    let mut args = vec![at.arg(test.get_ref().clone(), "test", test, "test")];
    let counts = thread_counts(at, file, sc, &name)?;
    let rates = match sc.rate.as_ref().or(file.rate.as_ref()) {
        Some(r) => {
            let rates = rate_list(at, r, &counts, &name)?;
            let text = format!("--rate={}", crate::report::format::rate_label(rates[0]));
            args.push(at.arg(text, "rate", r, "rate"));
            rates
        }
        None => Vec::new(),
    };
    if let Some(t) = sc.time.as_ref().or(file.time.as_ref()) {
        args.push(at.arg(format!("--time={}", t.get_ref()), "time", t, "time"));
    }
    option_args(at, [&file.options, &sc.options], &mut args)?;
    let targets = target_args(at, file, sc, &name, &mut args)?;
    if let Some(m) = &sc.table_map {
        let text = format!("--table-map={}", m.get_ref());
        args.push(at.arg(text, "table-map", m, "table-map"));
    }
    let agents_given = cli_agents
        .iter()
        .any(|a| a.starts_with("--agents=") || a.starts_with("--local-agents="));
    if !agents_given && let Some(a) = &file.agents {
        args.push(Arg::plain(format!("--agents={}", a.join(","))));
    }
    args.extend(cli_agents.iter().cloned().map(Arg::plain));
    let mut s = Scenario {
        name,
        description: sc.description.clone(),
        targets,
        threads: counts,
        rates,
        prepare: sc.prepare.or(file.prepare).unwrap_or(true),
        args,
        line: at.line(sc.name.span()),
    };
    // A test without prepare (cpu) just runs.
    let run = s.plan("run", s.threads[0], at.path)?;
    s.prepare &= run.workload.commands().contains(&Command::Prepare);
    if s.prepare {
        s.plan("prepare", s.threads[0], at.path)?;
        s.plan("cleanup", s.threads[0], at.path)?;
    }
    Ok(s)
}

/// The scenario's thread counts (its own `threads`, else the file's).
fn thread_counts(
    at: &Source,
    file: &FileToml,
    sc: &ScenarioToml,
    name: &str,
) -> Result<Vec<u32>, ScenarioError> {
    let threads = sc
        .threads
        .as_ref()
        .or(file.threads.as_ref())
        .ok_or_else(|| {
            at.err(
                sc.name.span(),
                "threads",
                format!("scenario '{name}' has no threads: set e.g. `threads = [16, 32]`"),
            )
        })?;
    sweep::parse_thread_list(
        &threads
            .get_ref()
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    )
    .map_err(|e| at.err(threads.span(), "threads", e.to_string()))
}

/// The scenario's offered rates from `rate`: one, or a rate sweep at one thread count.
fn rate_list(
    at: &Source,
    r: &Spanned<RateToml>,
    counts: &[u32],
    name: &str,
) -> Result<Vec<f64>, ScenarioError> {
    let text = r.get_ref().text();
    let rates = if text.contains(',') {
        sweep::parse_rate_list(&text)
    } else {
        plan::parse_rate(&text).map(|one| vec![one])
    }
    .map_err(|e| at.err(r.span(), "rate", e.to_string()))?;
    if rates.len() > 1 && counts.len() > 1 {
        return Err(at.err(
            r.span(),
            "rate",
            format!(
                "scenario '{name}' lists {} thread counts and {} rates: a sweep steps over one of them; give it one thread count, e.g. `threads = [{}]`",
                counts.len(),
                rates.len(),
                counts[0]
            ),
        ));
    }
    Ok(rates)
}

/// The file's `[options]`, then the scenario's, as arguments. A scenario's option replaces
/// the file's. (The command line would let the last one win too; one entry per option
/// keeps each argument's origin at the line that counts.)
fn option_args(
    at: &Source,
    tables: [&BTreeMap<Spanned<String>, Spanned<toml::Value>>; 2],
    args: &mut Vec<Arg>,
) -> Result<(), ScenarioError> {
    for opts in tables {
        for (k, v) in opts {
            let key = k.get_ref().replace('_', "-");
            let field = format!("options.{}", k.get_ref());
            if MANAGED.contains(&key.as_str()) {
                return Err(at.err(
                    k.span(),
                    &field,
                    format!("'{key}' is set by the scenario's own fields, not in options"),
                ));
            }
            let value = option_value(v.get_ref()).ok_or_else(|| {
                at.err(
                    v.span(),
                    &field,
                    "expected a string, number, boolean or a list of them".into(),
                )
            })?;
            if let Some(pos) = args.iter().position(|a| a.sets(&key)) {
                args.remove(pos);
            }
            args.push(at.arg(format!("--{key}={value}"), &key, k, &field));
        }
    }
    Ok(())
}

/// The scenario's targets as `--target` arguments, each with its URL from `[targets]`;
/// returns their names.
fn target_args(
    at: &Source,
    file: &FileToml,
    sc: &ScenarioToml,
    name: &str,
    args: &mut Vec<Arg>,
) -> Result<Vec<String>, ScenarioError> {
    if sc.targets.get_ref().is_empty() {
        return Err(at.err(
            sc.targets.span(),
            "targets",
            format!("scenario '{name}' names no target"),
        ));
    }
    let mut names = Vec::new();
    for t in sc.targets.get_ref() {
        let Some((_, url)) = file
            .targets
            .iter()
            .find(|(k, _)| k.get_ref() == t.get_ref())
        else {
            let known: Vec<&str> = file.targets.keys().map(|k| k.get_ref().as_str()).collect();
            return Err(at.err(
                t.span(),
                "targets",
                format!(
                    "unknown target '{}' (defined in [targets]: {})",
                    t.get_ref(),
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        let text = format!("--target={}={}", t.get_ref(), url.get_ref().url());
        args.push(at.arg(text, "target", t, "targets"));
        for o in url.get_ref().observers() {
            let text = format!("--observe={}={o}", t.get_ref());
            args.push(at.arg(text, "observe", t, "targets"));
        }
        names.push(t.get_ref().clone());
    }
    // The replicas of the targets it loads, read beside it (`--replica`).
    for (k, v) in &file.targets {
        let Some(primary) = v.get_ref().replica_of() else {
            continue;
        };
        if !file.targets.keys().any(|t| t.get_ref() == primary) {
            return Err(at.err(
                v.span(),
                &format!("targets.{}", k.get_ref()),
                format!("replica_of names no target: '{primary}'"),
            ));
        }
        if names.iter().any(|n| n == primary) && !names.contains(k.get_ref()) {
            let text = format!("--replica={}={}@{primary}", k.get_ref(), v.get_ref().url());
            args.push(at.arg(text, "replica", k, "targets"));
            for o in v.get_ref().observers() {
                let text = format!("--observe={}={o}", k.get_ref());
                args.push(at.arg(text, "observe", k, "targets"));
            }
        }
    }
    Ok(names)
}

impl Arg {
    /// An argument the file does not set at one place.
    fn plain(text: String) -> Arg {
        Arg { text, origin: None }
    }

    /// Whether it sets `option`.
    fn sets(&self, option: &str) -> bool {
        self.origin.as_ref().is_some_and(|o| o.option == option)
    }
}

/// The options a clap error is about, as named on the command line (`--name`, without
/// value or placeholder): the argument in question and, for a conflict, the one it
/// conflicts with.
fn options_named(e: &clap::Error) -> Vec<String> {
    use clap::error::{ContextKind, ContextValue};
    let mut out = Vec::new();
    for kind in [ContextKind::InvalidArg, ContextKind::PriorArg] {
        let given: Vec<&str> = match e.get(kind) {
            Some(ContextValue::String(s)) => vec![s.as_str()],
            Some(ContextValue::Strings(v)) => v.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        for g in given {
            if let Some(name) = g.strip_prefix("--") {
                let end = name.find(['=', ' ', '<']).unwrap_or(name.len());
                out.push(name[..end].to_string());
            }
        }
    }
    out
}

/// A TOML value as a command-line option value; booleans as on/off, lists comma-joined.
fn option_value(v: &toml::Value) -> Option<String> {
    Some(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.into(),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| match x {
                toml::Value::Array(_) | toml::Value::Table(_) => None,
                other => option_value(other),
            })
            .collect::<Option<Vec<_>>>()?
            .join(","),
        _ => return None,
    })
}

impl Scenario {
    /// What the scenario's sweep steps over: its rates when it lists several, else its
    /// thread counts.
    pub fn axis(&self) -> sweep::Axis {
        if self.rates.len() > 1 {
            sweep::Axis::Rates(self.rates.clone())
        } else {
            sweep::Axis::Threads(self.threads.clone())
        }
    }

    /// The raw arguments of `command` at `threads`; errors point at the file.
    fn raw(&self, command: &str, threads: u32, path: &str) -> Result<RawArgs, ScenarioError> {
        let argv: Vec<std::ffi::OsString> = std::iter::once("fleetbench".to_string())
            .chain(self.args.iter().map(|a| a.text.clone()))
            .chain([format!("--threads={threads}"), command.to_string()])
            .map(Into::into)
            .collect();
        // A scenario may run a Lua script: it is read and its options taken out first.
        let (argv, script) = match crate::script::take(argv) {
            Ok(crate::script::Taken::Script(rest, s)) => (rest, Some(s)),
            Ok(crate::script::Taken::NoScript(rest)) => (rest, None),
            Ok(crate::script::Taken::Help(_)) => {
                return Err(self.error(path, None, "a scenario cannot run help".into()));
            }
            Err(e) => return Err(self.error(path, None, e.0)),
        };
        let parsed = cli::parse(argv).map(|mut raw| {
            raw.script = script;
            // Every scenario names its targets, even one whose test reaches no database:
            // they are the file's structure, not a --target the user typed.
            raw.given.retain(|g| g != "target");
            raw
        });
        parsed.map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("invalid option")
                .trim_start_matches("error: ")
                .to_string();
            let named = options_named(&e);
            let place = self.origins().find(|o| named.contains(&o.option));
            // clap's "did you mean", as the file spells options (no dashes).
            let hints: Vec<String> = cli::suggestions(&e)
                .iter()
                .map(|h| h.trim_start_matches("--").to_string())
                .collect();
            let first = match &hints[..] {
                [] => first,
                h => format!("{first} (did you mean '{}'?)", h.join("' or '")),
            };
            self.error(path, place, first)
        })
    }

    /// The validated plan of `command` at `threads`.
    pub fn plan(&self, command: &str, threads: u32, path: &str) -> Result<Plan, ScenarioError> {
        let raw = self.raw(command, threads, path)?;
        plan::build(&raw).map_err(|e| {
            let option = match &e {
                PlanError::Invalid { option, .. }
                | PlanError::Spec(fleetbench_model::options::SpecError::Invalid {
                    option, ..
                }) => Some(option.to_string()),
                PlanError::Target(..) => Some("target".into()),
                PlanError::Replica(..) => Some("replica".into()),
                PlanError::TableMap(..) => Some("table-map".into()),
                PlanError::Spec(fleetbench_model::options::SpecError::RangeTooLarge { .. }) => {
                    Some("range-size".into())
                }
                PlanError::UnknownTest(_) => Some("test".into()),
                _ => None,
            };
            let place = option.and_then(|o| self.origins().find(|p| p.option == o));
            self.error(path, place, e.to_string())
        })
    }

    /// Where each argument the file sets at one place was set, in order.
    fn origins(&self) -> impl Iterator<Item = &Origin> {
        self.args.iter().filter_map(|a| a.origin.as_ref())
    }

    fn error(&self, path: &str, place: Option<&Origin>, message: String) -> ScenarioError {
        let (line, field) = match place {
            Some(o) => (o.line, o.field.clone()),
            None => (self.line, "name".to_string()),
        };
        ScenarioError {
            file: path.to_string(),
            line,
            field,
            message: format!("scenario '{}': {message}", self.name),
        }
    }
}

/// Reads and checks `path`.
pub fn load(path: &Path, cli_agents: &[String]) -> Result<ScenarioFile, ScenarioError> {
    let name = path.display().to_string();
    let src = fleetbench_model::capped::read_to_string(
        path,
        "the scenario file",
        fleetbench_model::capped::SCENARIO_CAP,
    )
    .map_err(|e| ScenarioError {
        file: name.clone(),
        line: 0,
        field: "-".into(),
        message: e.to_string(),
    })?;
    parse(&name, &src, cli_agents)
}

/// The JSON document of a scenario run (`kind` "scenarios").
pub fn scenarios_doc(
    path: &str,
    extras: &Extras,
    done: &[(&Scenario, Plan, Vec<Step>)],
    interrupted: bool,
) -> ScenariosDoc {
    ScenariosDoc {
        format_version: crate::report::doc::FORMAT_VERSION,
        kind: "scenarios".into(),
        fleetbench_version: env!("CARGO_PKG_VERSION").into(),
        file: path.into(),
        warmup_time_s: extras.warmup.as_secs(),
        cooldown_s: extras.cooldown.as_secs(),
        repeat: extras.repeat,
        interrupted,
        scenarios: done
            .iter()
            .map(|(sc, plan, steps)| ScenarioDoc {
                name: sc.name.clone(),
                description: sc.description.clone(),
                test: plan.workload.name().into(),
                targets: sc.targets.clone(),
                threads: sc.threads.clone(),
                steps: steps.clone(),
                rates: match sc.axis() {
                    sweep::Axis::Rates(r) => Some(r),
                    sweep::Axis::Threads(_) => None,
                },
            })
            .collect(),
    }
}

/// A short description of the scenarios in a file, for `--help`-like listings and tests.
pub fn describe(f: &ScenarioFile) -> String {
    let mut s = String::new();
    for sc in &f.scenarios {
        let _ = write!(
            s,
            "{}: targets {} threads {:?}",
            sc.name,
            sc.targets.join(","),
            sc.threads
        );
        if !sc.rates.is_empty() {
            let _ = write!(s, " rates {:?}", sc.rates);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
test = "oltp_read_write"
threads = [16, 32]
time = 30
[options]
tables = 10
table-size = 1000

[targets]
master = "mysql://sbtest:pw@master:3306/sbtest"
slave = "mysql://sbtest:pw@slave:3306/sbtest"
mycat = "mysql://sbtest:pw@mycat:8066/sbtest"

[[scenario]]
name = "direct"
targets = ["master"]

[[scenario]]
name = "proxy"
targets = ["mycat"]
prepare = false
[scenario.options]
db-ps-mode = "disable"
auto-inc = false

[[scenario]]
name = "sharded-2"
targets = ["master", "slave"]
table-map = "sbtest1-5=master,sbtest6-10=slave"
threads = [8]
"#;

    fn bad(src: &str) -> ScenarioError {
        parse("s.toml", src, &[]).expect_err("should be refused")
    }

    #[test]
    fn a_target_names_the_agents_that_observe_its_host() {
        let src = r#"
test = "oltp_read_only"
threads = [4]
[targets]
db = { url = "mysql://u:p@db1:3306/sbtest", observers = ["db1:7600", "db1:7601"] }
plain = "mysql://u:p@db2:3306/sbtest"
[[scenario]]
name = "observed"
targets = ["db"]
[[scenario]]
name = "not"
targets = ["plain"]
"#;
        let f = parse("s.toml", src, &[]).unwrap();
        let p = f.scenarios[0].plan("run", 4, "s.toml").unwrap();
        assert_eq!(
            p.observe.hosts,
            [(0, "db1:7600".to_string()), (0, "db1:7601".to_string())]
        );
        assert!(
            f.scenarios[1]
                .plan("run", 4, "s.toml")
                .unwrap()
                .observe
                .hosts
                .is_empty()
        );
        let e = bad(&src.replace("\"db1:7601\"", "\"db1\""));
        assert!(e.to_string().contains("observe"), "{e}");
        let e = bad(&src.replace("observers", "watchers"));
        assert!(e.to_string().contains("a URL such as"), "{e}");
        // A replica is read beside the scenarios that load its primary.
        let copy = "copy = { url = \"mysql://u:p@db3:3306/sbtest\", replica_of = \"db\", observers = [\"db3:7600\"] }\nplain =";
        let f = parse("s.toml", &src.replace("plain =", copy), &[]).unwrap();
        let p = f.scenarios[0].plan("run", 4, "s.toml").unwrap();
        let names: Vec<(&str, usize)> = p
            .observe
            .replicas
            .iter()
            .map(|(t, i)| (t.name.as_str(), *i))
            .collect();
        assert_eq!(names, [("copy", 0)]);
        // Its observer watches the server numbered after the loaded target.
        assert!(p.observe.hosts.contains(&(1, "db3:7600".to_string())));
        let p = f.scenarios[1].plan("run", 4, "s.toml").unwrap();
        assert!(p.observe.replicas.is_empty());
        let e = bad(&src.replace(
            "plain =",
            &copy.replace("replica_of = \"db\"", "replica_of = \"nosuch\""),
        ));
        assert!(e.to_string().contains("replica_of names no target"), "{e}");
    }

    #[test]
    fn a_good_file_gives_plans_per_scenario() {
        let f = parse("s.toml", GOOD, &[]).unwrap();
        assert_eq!(
            describe(&f),
            "direct: targets master threads [16, 32]\nproxy: targets mycat threads [16, 32]\nsharded-2: targets master,slave threads [8]\n"
        );
        let proxy = f.scenarios[1].plan("run", 16, "s.toml").unwrap();
        let plan::Workload::Oltp(o) = &proxy.workload else {
            panic!("oltp expected")
        };
        assert!(!o.config.db.prepared && !o.config.options.auto_inc);
        assert_eq!(o.config.targets[0].port, 8066);
        assert_eq!(o.config.tables.len(), 10);
        assert!(!f.scenarios[1].prepare && f.scenarios[0].prepare);
        let sharded = f.scenarios[2].plan("run", 8, "s.toml").unwrap();
        let plan::Workload::Oltp(o) = &sharded.workload else {
            panic!("oltp expected")
        };
        assert_eq!(o.config.tables_on(1), vec![6, 7, 8, 9, 10]);
        assert_eq!(sharded.threads, 8);
        assert_eq!(sharded.time, Some(std::time::Duration::from_secs(30)));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = bad(&GOOD.replace("time = 30", "time = 30\nthreadz = [1]"));
        assert_eq!((e.line, e.field.as_str()), (5, "threadz"), "{e}");
        assert!(e.message.contains("unknown field"), "{e}");

        let e = bad(&GOOD.replace("time = 30", "time = \"long\""));
        assert_eq!((e.line, e.field.as_str()), (4, "time"), "{e}");
        assert!(e.message.contains("invalid type"), "{e}");

        let e = bad(&GOOD.replace("targets = [\"mycat\"]", "targets = [\"nosuch\"]"));
        assert_eq!((e.line, e.field.as_str()), (20, "targets"), "{e}");
        assert!(e.message.contains("unknown target 'nosuch'"), "{e}");

        let e = bad(&GOOD.replace("targets = [\"mycat\"]\n", ""));
        assert!(e.message.contains("missing field `targets`"), "{e}");
        assert_eq!(e.field, "targets");

        let e = bad(&GOOD.replace("db-ps-mode = \"disable\"", "db-ps-mode = \"sometimes\""));
        assert_eq!(
            (e.line, e.field.as_str()),
            (23, "options.db-ps-mode"),
            "{e}"
        );

        // A typo gets the closest name, in the file's spelling: top-level, a scenario's
        // field and an option.
        let e = bad(&GOOD.replace("time = 30", "time = 30\nthredas = [1]"));
        assert!(e.message.contains("(did you mean 'threads'?)"), "{e}");
        let e = bad(&GOOD.replace(
            "targets = [\"mycat\"]",
            "targets = [\"mycat\"]\ntabel-map = \"x\"",
        ));
        assert!(e.message.contains("(did you mean 'table-map'?)"), "{e}");
        let e = bad(&GOOD.replace("table-size = 1000", "table-size = 1000\ntabels = 2"));
        assert_eq!((e.line, e.field.as_str()), (8, "options.tabels"), "{e}");
        assert!(e.message.ends_with("(did you mean 'tables'?)"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");

        let e = bad(&GOOD.replace("auto-inc = false", "no-such-option = 1"));
        assert_eq!(
            (e.line, e.field.as_str()),
            (24, "options.no-such-option"),
            "{e}"
        );

        // The OLTP size checks are the agent's (check_sizes): still pointed at their line.
        let e = bad(&GOOD.replace("table-size = 1000", "table-size = 1000\nrange-size = 5000"));
        assert_eq!((e.line, e.field.as_str()), (8, "options.range-size"), "{e}");
        assert!(e.message.contains("larger than --table-size=1000"), "{e}");
        let e = bad(&GOOD.replace("table-size = 1000", "table-size = 0"));
        assert_eq!((e.line, e.field.as_str()), (7, "options.table-size"), "{e}");

        let e = bad(&GOOD.replace("table-size = 1000", "threads = 4"));
        assert_eq!((e.line, e.field.as_str()), (7, "options.threads"), "{e}");

        let e = bad(&GOOD.replace("sbtest6-10=slave", "sbtest6-9=slave"));
        assert_eq!((e.line, e.field.as_str()), (29, "table-map"), "{e}");

        let e = bad(&GOOD.replace("name = \"proxy\"", "name = \"direct\""));
        assert_eq!((e.line, e.field.as_str()), (19, "name"), "{e}");

        let e = bad("test = \"cpu\"\n");
        assert_eq!(e.field, "scenario");

        let e = bad(&GOOD.replace("threads = [8]", "threads = [8, 0]"));
        assert_eq!((e.line, e.field.as_str()), (30, "threads"), "{e}");

        let e = bad(&GOOD.replace(
            "slave = \"mysql://sbtest:pw@slave:3306/sbtest\"",
            "slave = \"oracle://x\"",
        ));
        assert_eq!((e.line, e.field.as_str()), (11, "targets.slave"), "{e}");
        assert_eq!(
            e.to_string().split(": ").take(3).collect::<Vec<_>>(),
            ["s.toml", "line 11", "field 'targets.slave'"]
        );
    }

    #[test]
    fn rates_sweep_like_thread_lists() {
        let src = GOOD
            .replace("threads = [16, 32]", "threads = [4]\nrate = [100, 200.5]")
            .replace("threads = [8]", "rate = \"300,600\"")
            .replace("prepare = false", "prepare = false\nrate = 50");
        let f = parse("s.toml", &src, &[]).unwrap();
        let [direct, proxy, sharded] = &f.scenarios[..] else {
            panic!("three scenarios")
        };
        assert_eq!(direct.rates, [100.0, 200.5]);
        assert_eq!(direct.axis(), sweep::Axis::Rates(vec![100.0, 200.5]));
        assert_eq!(proxy.rates, [50.0]);
        assert_eq!(proxy.axis(), sweep::Axis::Threads(vec![4]));
        assert_eq!(sharded.axis(), sweep::Axis::Rates(vec![300.0, 600.0]));
        // The plan starts at the first rate; the sweep moves it.
        let p = direct.plan("run", 4, "s.toml").unwrap();
        assert_eq!((p.threads, p.rate), (4, 100.0));
        assert_eq!(proxy.plan("run", 4, "s.toml").unwrap().rate, 50.0);
        assert!(
            describe(&f).starts_with("direct: targets master threads [4] rates [100.0, 200.5]\n")
        );

        // A thread list and a rate list in one scenario: refused at the rate.
        let e = bad(&GOOD.replace("threads = [8]", "rate = [100, 200]"));
        assert_eq!((e.line, e.field.as_str()), (30, "rate"), "{e}");
        assert!(
            e.message.contains("16 threads") || e.message.contains("thread counts"),
            "{e}"
        );
        let e = bad(&GOOD.replace("threads = [8]", "threads = [8]\nrate = [100, 0]"));
        assert_eq!((e.line, e.field.as_str()), (31, "rate"), "{e}");
        assert!(e.message.contains("above 0"), "{e}");
        let e = bad(&GOOD.replace("time = 30", "time = 30\nrate = \"fast\""));
        assert_eq!((e.line, e.field.as_str()), (5, "rate"), "{e}");
        let e = bad(&GOOD.replace("time = 30", "time = 30\nrate = true"));
        assert_eq!((e.line, e.field.as_str()), (5, "rate"), "{e}");
        assert!(e.message.contains("a list of numbers"), "{e}");
        // As threads, the rate is the scenario's own field, not an option.
        let e = bad(&GOOD.replace("auto-inc = false", "rate = 100"));
        assert_eq!((e.line, e.field.as_str()), (24, "options.rate"), "{e}");
    }

    #[test]
    fn the_example_in_deploy_is_valid() {
        let src = include_str!("../../deploy/scenarios-master-slave-mycat.toml");
        let f = parse("example.toml", src, &[]).unwrap();
        let names: Vec<&str> = f.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["direct", "proxy", "sharded-2"]);
        assert_eq!(f.scenarios[0].threads, [16, 32, 48, 64, 96, 128]);
        assert_eq!((f.warmup_s, f.cooldown_s), (Some(30), Some(10)));
        // Loading the master reads its replica beside it, both hosts observed.
        let p = f.scenarios[0].plan("run", 16, "example.toml").unwrap();
        assert_eq!(p.observe.replicas.len(), 1);
        assert_eq!(
            p.observe.hosts,
            [
                (0, "master:7600".to_string()),
                (1, "slave:7600".to_string())
            ]
        );
        let p = f.scenarios[2].plan("run", 64, "example.toml").unwrap();
        assert_eq!(p.percentiles, [95.0, 99.0]);
        assert_eq!(
            p.agents,
            crate::plan::AgentSource::Remote(vec!["client1:7600".into(), "client2:7600".into()])
        );
    }

    #[test]
    fn line_numbers() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
        assert_eq!(key_at("x = 1\n  y = \"z\"\n", 9).as_deref(), Some("y"));
    }
}
