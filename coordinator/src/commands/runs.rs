//! `fleetbench runs ...`: the catalog of runs read back. `list` (filters), `show` (the
//! report as `report FILE` prints it), `compare` (as `compare` does, by id), `trend` (one
//! figure of one setup over time, its change points marked), `import`, `export`, `rm` and
//! `tag`. Runs are named by id, a unique prefix of one, `last` or `last~N`.

use std::collections::BTreeMap;
use std::path::Path;

use fleetbench_catalog::{Catalog, Filter, IdSpec, Location, Record};

use crate::catalog::record;
use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit::EXIT_OK;
use crate::report::doc::Document;
use crate::report::{compare, doc_text, stdout};

const USAGE: &str = "usage: fleetbench runs list|show ID|compare ID ID...|trend [ID] [--metric FIGURE] [--html OUT]|import FILE...|export ID|rm ID|tag ID KEY=VALUE... [--catalog PATH|URL]";

/// Runs one `runs` command.
pub async fn run(raw: &RawArgs) -> anyhow::Result<i32> {
    let words: Vec<&str> = raw.words[1..].iter().map(String::as_str).collect();
    let Some((&verb, args)) = words.split_first() else {
        return Err(UsageError::new(USAGE).into());
    };
    let settings = crate::catalog::Settings::of(raw)?;
    let Some(location) = settings.location else {
        return Err(UsageError::new(
            "no catalog: give --catalog PATH|URL (FLEETBENCH_CATALOG is off, or there is no home directory)",
        )
        .into());
    };
    let known = [
        "list", "show", "compare", "trend", "import", "export", "rm", "tag",
    ];
    if !known.contains(&verb) {
        return Err(UsageError(format!("runs: unknown command '{verb}'; {USAGE}")).into());
    }
    let mut c = open(&location).await?;
    match verb {
        "list" => list(&mut c, raw, args).await,
        "show" => show(&mut c, one(args, "show ID")?).await,
        "compare" => compare_runs(&mut c, raw, args).await,
        "trend" => trend(&mut c, raw, args).await,
        "import" => import(&mut c, args).await,
        "export" => export(&mut c, one(args, "export ID")?).await,
        "rm" => {
            let id = c.remove(&spec(one(args, "rm ID")?)?).await?;
            stdout::line(format!("removed {id}"));
            Ok(EXIT_OK)
        }
        _ => tag(&mut c, args).await,
    }
}

async fn open(location: &Location) -> anyhow::Result<Catalog> {
    Ok(Catalog::open(location).await?)
}

/// The only argument of `what`.
fn one<'a>(args: &[&'a str], what: &str) -> Result<&'a str, UsageError> {
    match args {
        [a] => Ok(a),
        _ => Err(UsageError(format!("usage: fleetbench runs {what}"))),
    }
}

fn spec(s: &str) -> Result<IdSpec, UsageError> {
    IdSpec::parse(s).map_err(|e| UsageError(e.to_string()))
}

async fn list(c: &mut Catalog, raw: &RawArgs, args: &[&str]) -> anyhow::Result<i32> {
    if !args.is_empty() {
        return Err(UsageError::new(
            "usage: fleetbench runs list [--test TEST] [--tag KEY=VALUE] [--target NAME] [--since DATE|Nd]",
        )
        .into());
    }
    let tag = match raw.tag.as_slice() {
        [] => None,
        [t] => Some(
            t.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| UsageError(format!("--tag '{t}': expected KEY=VALUE")))?,
        ),
        _ => return Err(UsageError::new("runs list takes one --tag").into()),
    };
    let since_ms = raw
        .since
        .as_deref()
        .map(|s| since(s, now_ms()))
        .transpose()
        .map_err(UsageError)?;
    let f = Filter {
        test: raw.test.clone(),
        tag,
        target: raw.target.first().cloned(),
        since_ms,
        limit: Some(200),
        ..Default::default()
    };
    stdout::print(&list_table(&c.list(&f).await?));
    Ok(EXIT_OK)
}

/// `--since`: `YYYY-MM-DD` (UTC midnight) or `Nd` (N days before `now_ms`).
pub fn since(s: &str, now_ms: i64) -> Result<i64, String> {
    if let Some(days) = s.strip_suffix('d')
        && let Ok(n) = days.parse::<u32>()
    {
        return Ok(now_ms - i64::from(n) * 86_400_000);
    }
    record::parse_utc_ms(&format!("{s}T00:00:00Z"))
        .ok_or_else(|| format!("--since '{s}': expected a date (2026-12-01) or days (7d)"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The list as a table that fits 100 columns: id, start, test, threads, the rate of
/// transactions, the percentile, and the step or tags.
pub fn list_table(runs: &[Record]) -> String {
    let mut s = format!(
        "{:<14}  {:<16}  {:<20}  {:>5}  {:>10}  {:>9}  {}\n",
        "id", "started (UTC)", "test", "thr", "tps", "lat ms", "step / tags"
    );
    for r in runs {
        let mut note = r.label.clone();
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !tags.is_empty() {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(&tags.join(" "));
        }
        if r.interrupted {
            note.push_str(" (interrupted)");
        }
        // A whole sweep's figures are its steps' (listed beside it).
        let (threads, tps, lat) = if record::GROUP_KINDS.contains(&r.kind.as_str()) {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            (
                r.threads.to_string(),
                format!("{:.2}", r.tps),
                format!(
                    "p{}={:.2}",
                    crate::report::pct_label(r.lat_pct),
                    r.lat_pct_ms
                ),
            )
        };
        s.push_str(&format!(
            "{:<14}  {:<16}  {:<20}  {threads:>5}  {tps:>10}  {lat:>9}  {}\n",
            r.id,
            short_time(r.started_ms),
            clip(&r.test, 20),
            clip(note.trim(), 30)
        ));
    }
    if runs.is_empty() {
        s.push_str("(no runs)\n");
    }
    s
}

/// `2026-12-07 16:55` of milliseconds since 1970.
fn short_time(ms: i64) -> String {
    let full = crate::report::meta::rfc3339((ms.max(0) / 1000) as u64);
    full.replacen('T', " ", 1).chars().take(16).collect()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

async fn doc_of(c: &mut Catalog, id: &str) -> anyhow::Result<(Record, Document)> {
    let r = c.get(&spec(id)?).await?;
    let doc = Document::from_slice(r.doc.as_bytes())
        .map_err(|e| anyhow::anyhow!("run {}: its stored document does not read: {e}", r.id))?;
    Ok((r, doc))
}

async fn show(c: &mut Catalog, id: &str) -> anyhow::Result<i32> {
    let (_, doc) = doc_of(c, id).await?;
    stdout::print(&doc_text::render(&doc));
    Ok(EXIT_OK)
}

async fn export(c: &mut Catalog, id: &str) -> anyhow::Result<i32> {
    let (_, doc) = doc_of(c, id).await?;
    let text = serde_json::to_string_pretty(&doc)?;
    stdout::print(&format!("{text}\n"));
    Ok(EXIT_OK)
}

async fn compare_runs(c: &mut Catalog, raw: &RawArgs, ids: &[&str]) -> anyhow::Result<i32> {
    if ids.len() < 2 {
        return Err(UsageError::new(
            "usage: fleetbench runs compare ID ID... [--html OUT] [--csv OUT] [--json OUT] (the first the baseline; last, last~1, ... name the newest)",
        )
        .into());
    }
    let mut docs = Vec::new();
    for id in ids {
        let (r, doc) = doc_of(c, id).await?;
        docs.push((doc, r.id));
    }
    let all = compare::series_of(&docs, raw.force)?;
    super::docs::print_comparison(&all, &raw.fail_if, &super::docs::Files::of(raw))
}

/// Most files one `runs import` takes.
const MAX_IMPORT: usize = 1000;

async fn import(c: &mut Catalog, files: &[&str]) -> anyhow::Result<i32> {
    if files.is_empty() {
        return Err(UsageError::new("usage: fleetbench runs import RESULT.json...").into());
    }
    // Every file is held until all are read: a bounded number of them (each is capped).
    if files.len() > MAX_IMPORT {
        return Err(UsageError(format!(
            "runs import takes at most {MAX_IMPORT} files at once ({} given): import them in batches",
            files.len()
        ))
        .into());
    }
    // Every file is read before any is stored: a bad one stores nothing.
    let mut all = Vec::new();
    for f in files {
        let doc = compare::load(Path::new(f))?;
        let mut records = record::records_of(&doc);
        let mtime = std::fs::metadata(f)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        for r in &mut records {
            // A file from before the results had times: when it was written.
            if r.started_ms == 0 {
                r.started_ms = mtime;
                r.ended_ms = mtime;
            }
        }
        all.push((f, records));
    }
    for (f, records) in all {
        let mut ids = Vec::new();
        for r in &records {
            ids.push(c.insert(r).await?);
        }
        stdout::line(format!(
            "imported {f}: {} {} ({})",
            ids.len(),
            if ids.len() == 1 { "run" } else { "runs" },
            ids.join(", ")
        ));
    }
    Ok(EXIT_OK)
}

async fn tag(c: &mut Catalog, args: &[&str]) -> anyhow::Result<i32> {
    let Some((id, pairs)) = args.split_first().filter(|(_, p)| !p.is_empty()) else {
        return Err(UsageError::new("usage: fleetbench runs tag ID KEY=VALUE...").into());
    };
    let given: Vec<String> = pairs.iter().map(|p| p.to_string()).collect();
    let new = record::tags_of(&given).map_err(|e| UsageError(format!("runs tag: {e}")))?;
    let r = c.get(&spec(id)?).await?;
    let mut tags: BTreeMap<String, String> = r.tags;
    tags.extend(new);
    let id = c.set_tags(&IdSpec::Prefix(r.id), &tags).await?;
    let shown: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    stdout::line(format!("{id}: {}", shown.join(" ")));
    Ok(EXIT_OK)
}

async fn trend(c: &mut Catalog, raw: &RawArgs, args: &[&str]) -> anyhow::Result<i32> {
    let id = match args {
        [] => "last",
        [id] => id,
        _ => {
            return Err(UsageError::new(
                "usage: fleetbench runs trend [ID] [--metric FIGURE] [--html OUT]",
            )
            .into());
        }
    };
    let base = c.get(&spec(id)?).await?;
    let metric = raw.metric.clone().unwrap_or_else(|| "tps".into());
    let (points, changes) = crate::catalog::trend(c, &base, &metric).await?;
    let points: Vec<(&Record, f64)> = points.iter().map(|(r, v)| (r, *v)).collect();
    stdout::print(&crate::report::trend::table(
        &metric,
        &base.cmp_key,
        &points,
        &changes,
    ));
    if let Some(out) = &raw.html {
        let page = crate::report::trend::html(&metric, &base.cmp_key, &points, &changes);
        crate::output::write(out, |w| w.write_all(page.as_bytes()))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
        if !crate::output::is_stdout(out) {
            stdout::line(format!("wrote {}", out.display()));
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_a_date_or_days() {
        assert_eq!(since("1970-01-02", 0).unwrap(), 86_400_000);
        assert_eq!(since("7d", 8 * 86_400_000).unwrap(), 86_400_000);
        assert!(since("yesterday", 0).unwrap_err().contains("--since"));
    }

    #[test]
    fn the_list_fits_a_terminal_and_says_what_each_run_was() {
        let r = Record {
            id: "65a1b2c3d4e5f6".into(),
            started_ms: 86_400_000,
            test: "oltp_read_write_with_a_long_name".into(),
            threads: 64,
            tps: 1234.5,
            lat_pct: 95.0,
            lat_pct_ms: 2.25,
            label: "32 threads".into(),
            tags: [("pool".to_string(), "8G".to_string())].into(),
            ..Default::default()
        };
        let t = list_table(&[r]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].starts_with("65a1b2c3d4e5f6  1970-01-02 00:00  oltp_read_write_wit…"));
        assert!(
            lines[1].contains("1234.50") && lines[1].contains("p95=2.25"),
            "{t}"
        );
        assert!(lines[1].ends_with("32 threads; pool=8G"), "{t}");
        assert!(lines.iter().all(|l| l.chars().count() <= 110), "{t}");
        assert!(list_table(&[]).contains("(no runs)"));
    }
}
