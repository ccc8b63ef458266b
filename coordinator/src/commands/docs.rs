//! `fleetbench compare FILE...` and `fleetbench report FILE [--html OUT]`: result files
//! read back, compared, and shown as text or HTML.

use std::path::Path;

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit::{EXIT_FAILED, EXIT_OK};
use crate::report::{compare, doc_text, html, stdout};

/// `fleetbench compare A.json B.json [...] [--fail-if RULE]... [--force]`: prints the
/// comparison; exit 0, or 1 when a `--fail-if` rule is broken.
pub fn compare(raw: &RawArgs) -> anyhow::Result<i32> {
    let files: Vec<&Path> = raw.words[1..].iter().map(Path::new).collect();
    let usage = "usage: fleetbench compare BASELINE.json OTHER.json [...] (or one scenario file's result) [--fail-if 'tps<-5%'] [--force]";
    if files.is_empty() {
        return Err(UsageError::new(usage).into());
    }
    // Never a silent ignore: a comparison is written to standard output only, so far.
    let files_asked: Vec<&str> = [
        ("--html", raw.html.is_some()),
        ("--csv", raw.csv.is_some()),
        ("--json", raw.json.is_some()),
        ("--hlog", raw.hlog.is_some()),
    ]
    .into_iter()
    .filter_map(|(o, given)| given.then_some(o))
    .collect();
    if !files_asked.is_empty() {
        return Err(UsageError(format!(
            "compare prints its table on standard output and writes no {} file yet: redirect it (fleetbench compare A.json B.json > compare.txt), or give each result to `fleetbench report FILE --html OUT.html`",
            files_asked.join(" or ")
        ))
        .into());
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
    print_comparison(&all, &raw.fail_if)
}

/// Prints the comparison of `all` (at least two series) and the verdicts of the
/// `--fail-if` rules; exit 0, or 1 when a rule is broken.
pub fn print_comparison(all: &[compare::Series], fail_if: &[String]) -> anyhow::Result<i32> {
    let rules = fail_if
        .iter()
        .map(|r| compare::parse_rule(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(UsageError)?;
    let (body, changes) = compare::text(all);
    // A rule naming a figure these files lack is refused before anything is shown.
    let (verdicts, failed) = compare::fail_if_report(&rules, &changes).map_err(UsageError)?;
    stdout::print(&format!(
        "{}{body}{verdicts}",
        compare::differing_settings(all)
    ));
    Ok(if failed { EXIT_FAILED } else { EXIT_OK })
}

/// `fleetbench report FILE` (text) or `fleetbench report FILE --html OUT.html`.
pub fn report(raw: &RawArgs) -> anyhow::Result<i32> {
    let [_, file] = &raw.words[..] else {
        // Several results: that is a comparison, and says so.
        if raw.words.len() > 2 {
            return Err(UsageError(format!(
                "report takes one result; to set {} results side by side run `fleetbench compare {}`",
                raw.words.len() - 1,
                raw.words[1..].join(" ")
            ))
            .into());
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
