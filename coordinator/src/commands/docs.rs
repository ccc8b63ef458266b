//! `fleetbench compare FILE...` and `fleetbench report FILE [--html OUT]`: result files
//! read back, compared, and shown as text, or written as HTML (a comparison also as CSV
//! and JSON). `report` given several results is `compare`.

use std::path::Path;

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit::{EXIT_FAILED, EXIT_OK};
use crate::report::compare_files::{self, RuleOutcome};
use crate::report::{compare, doc_text, html, stdout};

/// `fleetbench compare A.json B.json [...] [--fail-if RULE]... [--force] [--html OUT]
/// [--csv OUT] [--json OUT]`: prints the comparison and writes the files asked for; exit
/// 0, or 1 when a `--fail-if` rule is broken.
pub fn compare(raw: &RawArgs) -> anyhow::Result<i32> {
    let files: Vec<&Path> = raw.words[1..].iter().map(Path::new).collect();
    let usage = "usage: fleetbench compare BASELINE.json OTHER.json [...] (or one scenario file's result) [--fail-if 'tps<-5%'] [--force] [--html OUT.html] [--csv OUT.csv] [--json OUT.json]";
    if files.is_empty() {
        return Err(UsageError::new(usage).into());
    }
    let all = compare::load_series(&files, raw.force)?;
    // One file compares what it holds: a scenario file's scenarios, the first the baseline.
    if all.len() < 2 {
        return Err(UsageError(format!(
            "{}: one result alone has nothing to compare with; {usage}",
            files[0].display()
        ))
        .into());
    }
    print_comparison(&all, &raw.fail_if, &Files::of(raw))
}

/// Where a comparison's files go (`--html`, `--csv`, `--json`), each optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct Files<'a> {
    pub html: Option<&'a Path>,
    pub csv: Option<&'a Path>,
    pub json: Option<&'a Path>,
}

impl<'a> Files<'a> {
    pub fn of(raw: &'a RawArgs) -> Files<'a> {
        Files {
            html: raw.html.as_deref(),
            csv: raw.csv.as_deref(),
            json: raw.json.as_deref(),
        }
    }
}

/// Prints the comparison of `all` (at least two series) and the verdicts of the
/// `--fail-if` rules, then writes the files asked for (also when a rule is broken); exit
/// 0, or 1 when a rule is broken.
pub fn print_comparison(
    all: &[compare::Series],
    fail_if: &[String],
    files: &Files,
) -> anyhow::Result<i32> {
    let rules = fail_if
        .iter()
        .map(|r| compare::parse_rule(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(UsageError)?;
    let c = compare::Comparison::of(all);
    let changes = c.changes();
    // A rule naming a figure these files lack is refused before anything is shown.
    let (verdicts, failed) = compare::fail_if_report(&rules, &changes).map_err(UsageError)?;
    let settings = compare::settings_diff(all);
    stdout::print(&format!("{}{}{verdicts}", settings.text(), c.text()));
    let outcomes: Vec<RuleOutcome> = rules
        .iter()
        .map(|rule| RuleOutcome {
            rule,
            broken: compare::breaches(rule, &changes),
        })
        .collect();
    write_files(files, &c, &settings, &outcomes)?;
    Ok(if failed { EXIT_FAILED } else { EXIT_OK })
}

/// Writes the comparison's HTML page, CSV and JSON where `files` says.
fn write_files(
    files: &Files,
    c: &compare::Comparison,
    settings: &compare::SettingsDiff,
    outcomes: &[RuleOutcome],
) -> anyhow::Result<()> {
    let write = |path: &Path, what: &str, text: String| {
        crate::output::write(path, |w| w.write_all(text.as_bytes()))
            .map_err(|e| anyhow::anyhow!("cannot write the {what} to {}: {e}", path.display()))
    };
    if let Some(p) = files.html {
        write(
            p,
            "comparison's HTML page",
            html::compare_page::render(c, settings, outcomes),
        )?;
    }
    if let Some(p) = files.csv {
        write(p, "comparison's CSV table", compare_files::csv(c))?;
    }
    if let Some(p) = files.json {
        write(
            p,
            "comparison's JSON",
            compare_files::json(c, settings, outcomes),
        )?;
    }
    Ok(())
}

/// `fleetbench report FILE` (text) or `fleetbench report FILE --html OUT.html`.
pub fn report(raw: &RawArgs) -> anyhow::Result<i32> {
    let [_, file] = &raw.words[..] else {
        // Several results: a comparison, as `compare` makes it (its HTML page included).
        if raw.words.len() > 2 {
            return compare(raw);
        }
        return Err(UsageError::new(match raw.html {
            None => "usage: fleetbench report RESULT.json [--html OUT.html]",
            Some(_) => "usage: fleetbench report RESULT.json --html OUT.html",
        })
        .into());
    };
    let doc = compare::load(Path::new(file))?;
    match &raw.html {
        None => stdout::print(&doc_text::render(&doc)),
        Some(out) => {
            html::write(out, &doc)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
            if !crate::output::is_stdout(out) {
                stdout::line(format!("wrote {}", out.display()));
            }
        }
    }
    Ok(EXIT_OK)
}
