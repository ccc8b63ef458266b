//! The coordinator's commands, one module each: a benchmark (one run, a sweep, or a table
//! job), a scenario file, the agents' status and stop, and the result files' compare and
//! report. Each calls the pure planning, the session, the merge and the report writers;
//! what it shows goes through crate::report::stdout.

pub mod agents;
pub mod bench;
pub mod docs;
pub mod honoured;
pub mod measure;
pub mod pgbench;
pub mod runs;
pub mod scenario;
pub mod script;
pub mod serve;
pub mod sweep;
pub mod tables;

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Context;

use crate::cli::{self, RawArgs};
use crate::error::UsageError;
use crate::merge::RunResult;
use crate::plan::Plan;
use crate::report;
use crate::report::doc::Document;
use crate::session::Link;
use crate::sweep::Extras;

/// What a bench or scenario command runs from: the parsed command line, the options taken
/// out of it for sweeps and reports, and the command line as results record it (secrets
/// masked).
pub struct Invocation {
    pub raw: Box<RawArgs>,
    pub extras: Extras,
    pub command_line: String,
    /// The same words one by one, for a script's `sysbench.cmdline.argv`.
    pub argv: Vec<String>,
}

/// A command line after clap: the arguments to run, or text it asked for (help, version).
pub enum Parsed {
    Args(Box<RawArgs>),
    Shown(String),
}

/// Parses the command line; `fleetbench help` and `fleetbench TEST help` (or
/// `--test=TEST help`) give their text instead of arguments.
pub fn parse(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    if scenario::asks_help(&args) {
        return Ok(Parsed::Shown(scenario::HELP.to_string()));
    }
    let (args, script) = match crate::script::take(args)? {
        crate::script::Taken::Help(text) => return Ok(Parsed::Shown(text)),
        crate::script::Taken::NoScript(args) => (args, None),
        crate::script::Taken::Script(args, s) => (args, Some(s)),
    };
    let mut raw = match cli::parse(args) {
        Ok(raw) => raw,
        Err(e) if !e.use_stderr() => {
            // --help / --version.
            return Ok(Parsed::Shown(e.to_string()));
        }
        Err(e) => {
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid arguments");
            let mut line = first.trim_start_matches("error: ").to_string();
            // clap's "did you mean" hint, on the same line.
            let hints = cli::suggestions(&e);
            if !hints.is_empty() {
                line.push_str(&format!(" (did you mean '{}'?)", hints.join("' or '")));
            }
            return Err(UsageError(line));
        }
    };
    if script.is_some() {
        raw.script = script;
        return Ok(Parsed::Args(Box::new(raw)));
    }
    // `fleetbench help` and `fleetbench TEST help` (or `--test=TEST help`).
    let words: Vec<&str> = raw.words.iter().map(String::as_str).collect();
    let help_of = match (raw.test.as_deref(), &words[..]) {
        (None, ["help"]) => Some(None),
        (None, [test, "help"]) => Some(Some(*test)),
        (Some(test), ["help"]) => Some(Some(test)),
        _ => None,
    };
    match help_of {
        None => Ok(Parsed::Args(Box::new(raw))),
        Some(None) => {
            use clap::CommandFactory;
            Ok(Parsed::Shown(
                cli::RawArgs::command().render_help().to_string(),
            ))
        }
        Some(Some(t)) => cli::test_help(t)
            .map(Parsed::Shown)
            .ok_or_else(|| UsageError(format!("unknown test '{t}': try `fleetbench help`"))),
    }
}

/// The command a parsed line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Compare,
    Report,
    Agents,
    Stop,
    Scenario,
    /// `runs ...`: the catalog read back.
    Runs,
    /// `serve --web ADDR`: the catalog's page.
    Serve,
    /// A test with prepare, run, cleanup or prewarm.
    Bench,
}

impl Which {
    pub fn of(raw: &RawArgs) -> Which {
        // `runs list --test TEST` filters by test: the word comes first.
        if raw.words.first().is_some_and(|w| w == "runs") {
            return Which::Runs;
        }
        if raw.test.is_none() && raw.words.first().is_some_and(|w| w == "serve") {
            return Which::Serve;
        }
        if raw.test.is_some() {
            return Which::Bench;
        }
        match raw.words.first().map(String::as_str) {
            Some("compare") => Which::Compare,
            Some("report") => Which::Report,
            Some("agents") => Which::Agents,
            Some("stop") => Which::Stop,
            Some("scenario") => Which::Scenario,
            _ => Which::Bench,
        }
    }
}

/// How to reach the agents: the token (file or environment) and TLS.
pub fn link(raw: &RawArgs) -> anyhow::Result<Link> {
    let token = fleetbench_model::auth::load(raw.token_file.as_deref()).map_err(UsageError)?;
    let auth = fleetbench_model::auth::Attach::new(token.as_deref()).map_err(UsageError)?;
    Ok(Link {
        auth,
        tls: tls_config(raw)?,
    })
}

/// TLS settings for talking to agents, from --tls-ca (and --tls-cert/--tls-key).
fn tls_config(raw: &RawArgs) -> anyhow::Result<Option<tonic::transport::ClientTlsConfig>> {
    let Some(ca) = &raw.tls_ca else {
        return Ok(None);
    };
    let read = |p: &std::path::Path| {
        fleetbench_model::capped::read(p, "the TLS file", fleetbench_model::capped::SECRET_CAP)
            .map_err(|e| UsageError(e.to_string()))
    };
    let mut cfg = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(read(ca)?));
    if let (Some(c), Some(k)) = (&raw.tls_cert, &raw.tls_key) {
        cfg = cfg.identity(tonic::transport::Identity::from_pem(read(c)?, read(k)?));
    }
    Ok(Some(cfg))
}

/// The exit code of a command whose measurements regressed (`regressed`): 1 with
/// `--fail-on-regression` where it would have been 0, else `code`.
pub fn after_regression(code: i32, regressed: bool, catalog: &crate::catalog::Settings) -> i32 {
    if code == crate::exit::EXIT_OK && regressed && catalog.fail_on_regression {
        eprintln!(
            "error: a figure regressed (--fail-on-regression): see the regression lines above"
        );
        crate::exit::EXIT_FAILED
    } else {
        code
    }
}

/// `--csv` and `--html` of a single run.
pub fn single_outputs(plan: &Plan, r: &RunResult, extras: &Extras) -> anyhow::Result<()> {
    if extras.csv.is_none() && extras.html.is_none() {
        return Ok(());
    }
    let doc = report::json::build(plan, r);
    write_outputs(None, extras, &Document::Run(Box::new(doc)))
}

/// Writes the JSON, HTML and CSV files asked for. The CSV comes last: it is the one a
/// file's earlier content can refuse (another column layout), and the others are kept then.
pub fn write_outputs(
    json: Option<&PathBuf>,
    extras: &Extras,
    doc: &Document,
) -> anyhow::Result<()> {
    if let Some(path) = json {
        report::json::write_value(path, doc)
            .with_context(|| format!("cannot write the JSON result to {}", path.display()))?;
    }
    if let Some(path) = &extras.html {
        report::html::write(path, doc)
            .with_context(|| format!("cannot write the HTML report to {}", path.display()))?;
    }
    if let Some(path) = &extras.csv {
        report::csv::append(path, doc)?;
    }
    Ok(())
}
