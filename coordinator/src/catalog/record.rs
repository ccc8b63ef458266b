//! A result document as catalog records: one per measurement (a run, or each step of a
//! sweep or scenario file), with the columns runs are listed by, the figures a regression
//! is looked for in, and the comparison key: the test, the options that change the
//! workload, the thread count and the targets' names. Pure, beside its tests.

use std::collections::BTreeMap;

use fleetbench_catalog::Record;
use serde_json::Value;

use crate::report::doc::{Document, Report, Summary};

/// The run's own settings that do not change what is measured (how long, how often it is
/// reported, where the agents are), left out of the comparison key. The offered rate is
/// left out too: a run that reached less of the same load is the change to flag.
const NOT_IN_KEY: [&str; 11] = [
    "threads",
    "time_s",
    "events",
    "report_interval_s",
    "interval_s",
    "percentiles",
    "rand_seed",
    "agents",
    "rate",
    "warmup_time_s",
    "warn_client_saturation",
];

/// Kinds of records that hold a whole sweep or scenario file's document: shown, exported
/// and compared as such, with no figure of their own (their steps have them).
pub const GROUP_KINDS: [&str; 2] = ["sweep", "scenarios"];

/// Every measurement of `doc`, as records; a sweep or scenario file's document also as one
/// record of its own, first, sharing its steps' group.
pub fn records_of(doc: &Document) -> Vec<Record> {
    match doc {
        Document::Run(r) => vec![record_of(r, "run", "", "")],
        Document::Sweep(s) => {
            let group = group_id(s.steps.first().map(|st| &st.result));
            let steps: Vec<Record> = s
                .steps
                .iter()
                .map(|st| {
                    let label = step_label(st.threads, st.rate, st.repeat, s.repeat);
                    record_of(&st.result, "sweep step", &group, &label)
                })
                .collect();
            let label = format!("sweep of {} steps", s.steps.len());
            let whole = group_record(
                doc,
                ("sweep", &group, &label),
                &s.test,
                s.interrupted,
                &steps,
            );
            std::iter::once(whole).chain(steps).collect()
        }
        Document::Scenarios(d) => {
            let all: Vec<_> = d
                .scenarios
                .iter()
                .flat_map(|sc| sc.steps.iter().map(move |st| (sc, st)))
                .collect();
            let group = group_id(all.first().map(|(_, st)| &st.result));
            let steps: Vec<Record> = all
                .iter()
                .map(|(sc, st)| {
                    let step = step_label(st.threads, st.rate, st.repeat, d.repeat);
                    let label = format!("{}, {step}", sc.name);
                    record_of(&st.result, "scenario step", &group, &label)
                })
                .collect();
            let names: Vec<&str> = d.scenarios.iter().map(|s| s.name.as_str()).collect();
            let label = format!("scenarios {}", names.join(", "));
            let test = d.scenarios.first().map_or("", |s| s.test.as_str());
            let kind = ("scenarios", group.as_str(), label.as_str());
            let whole = group_record(doc, kind, test, d.interrupted, &steps);
            std::iter::once(whole).chain(steps).collect()
        }
    }
}

/// The record of a whole sweep or scenario file (`kind`, group and label): its document,
/// the span and setup of its `steps`, and no figures.
fn group_record(
    doc: &Document,
    (kind, group, label): (&str, &str, &str),
    test: &str,
    interrupted: bool,
    steps: &[Record],
) -> Record {
    Record {
        kind: kind.into(),
        group_id: group.into(),
        label: label.into(),
        started_ms: steps.iter().map(|r| r.started_ms).min().unwrap_or(0),
        ended_ms: steps.iter().map(|r| r.ended_ms).max().unwrap_or(0),
        test: test.into(),
        command_line: steps
            .first()
            .map(|r| r.command_line.clone())
            .unwrap_or_default(),
        targets: steps.iter().flat_map(|r| r.targets.clone()).collect(),
        agents: steps.first().map(|r| r.agents.clone()).unwrap_or_default(),
        tags: steps.first().map(|r| r.tags.clone()).unwrap_or_default(),
        interrupted,
        format_version: steps.first().map_or(0, |r| r.format_version),
        doc: serde_json::to_string(doc).unwrap_or_default(),
        ..Default::default()
    }
}

/// A sweep's or scenario run's shared id: its first measurement's run id.
fn group_id(first: Option<&Report>) -> String {
    first
        .and_then(|r| r.meta.as_ref())
        .map(|m| m.run_id.clone())
        .unwrap_or_default()
}

/// "32 threads", "500 events/s", "32 threads #2".
fn step_label(threads: u32, rate: f64, repeat: u32, repeats: u32) -> String {
    let mut s = if rate > 0.0 {
        format!("{rate} events/s")
    } else {
        format!("{threads} threads")
    };
    if repeats > 1 {
        s.push_str(&format!(" #{repeat}"));
    }
    s
}

/// One measurement's record.
pub fn record_of(r: &Report, kind: &str, group: &str, label: &str) -> Record {
    let summary = Summary::from_run(r);
    let meta = r.meta.clone().unwrap_or_default();
    let pct = r.config.percentiles.first().copied().unwrap_or(95.0);
    let pct_key = format!("p{}", crate::report::pct_label(pct));
    let key = cmp_key(r);
    Record {
        kind: kind.into(),
        group_id: group.into(),
        label: label.into(),
        started_ms: meta
            .started_at
            .as_deref()
            .and_then(parse_utc_ms)
            .unwrap_or(0),
        ended_ms: meta.ended_at.as_deref().and_then(parse_utc_ms).unwrap_or(0),
        test: r.test.clone(),
        command_line: meta.command_line.clone(),
        targets: r
            .totals
            .targets
            .iter()
            .map(|t| {
                let version = t.connections.first().map(|c| c.server_version.clone());
                (t.name.clone(), version.unwrap_or_default())
            })
            .collect(),
        agents: r.config.agents.clone(),
        threads: i64::from(r.config.threads),
        rate: r.config.rate(),
        tags: meta.tags.clone(),
        tps: summary.tps,
        qps: summary.qps,
        lat_avg_ms: summary.latency_ms.get("avg").copied().unwrap_or(0.0),
        lat_pct: pct,
        lat_pct_ms: summary.latency_ms.get(&pct_key).copied().unwrap_or(0.0),
        lat_max_ms: summary.latency_ms.get("max").copied().unwrap_or(0.0),
        errors_per_sec: summary.errors_per_sec,
        interrupted: r.interrupted,
        figures: figures(&summary, &pct_key),
        cmp_hash: hash(&key),
        cmp_key: key,
        format_version: i64::from(r.format_version),
        doc: serde_json::to_string(&Document::Run(Box::new(r.clone()))).unwrap_or_default(),
        id: String::new(),
    }
}

/// The figures a regression is looked for in (see [`super::regress::better`] for which way
/// each is better): the rate of transactions (or events), the first percentile's latency,
/// and the servers' costs per transaction where they were read.
pub fn figures(s: &Summary, pct_key: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::from([("tps".to_string(), s.tps)]);
    if let Some(l) = s.latency_ms.get(pct_key) {
        out.insert(format!("{pct_key} latency"), *l);
    }
    out.extend(s.server.iter().map(|(k, v)| (k.clone(), *v)));
    out
}

/// What makes two runs comparable, as text: the test, the thread count, the workload's
/// options and the targets' names.
pub fn cmp_key(r: &Report) -> String {
    let mut parts = vec![r.test.clone(), format!("threads={}", r.config.threads)];
    for (k, v) in r.config.entries() {
        if NOT_IN_KEY.contains(&k.as_str()) {
            continue;
        }
        let v = match (k.as_str(), &v) {
            // Where a target is (host, port, user) may change; its name says what it is.
            ("targets", Value::Array(a)) => {
                let names: Vec<&str> = a.iter().filter_map(|t| t["name"].as_str()).collect();
                names.join(",")
            }
            (_, Value::String(s)) => s.clone(),
            _ => v.to_string(),
        };
        parts.push(format!("{k}={v}"));
    }
    parts.join(" ")
}

/// 64-bit FNV-1a of `key`, as 16 hex digits: the key's index in the catalog.
pub fn hash(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Milliseconds since 1970 of an RFC 3339 UTC time as results write it
/// (`2026-12-07T16:55:11Z`, maybe with a fraction); None for anything else.
pub fn parse_utc_ms(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let ms = if frac.is_empty() {
        0
    } else {
        format!("{:0<3}", &frac[..frac.len().min(3)]).parse().ok()?
    };
    let days = days_from_civil(y, m, day);
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1000) + ms)
}

/// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The tags of `raw` (`--tag k=v`), checked, as a map.
pub fn tags_of(raw: &[String]) -> Result<BTreeMap<String, String>, String> {
    crate::report::meta::parse_tags(raw).map(|t| t.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Meta;

    fn report(threads: u32, rate: f64, host: &str) -> Report {
        let words = ["fb", "oltp_read_only", "run"];
        let plan = crate::plan::build(&crate::cli::parse(words).unwrap()).unwrap();
        let mut r = crate::report::json::build(&plan, &crate::merge::RunResult::default());
        r.config.threads = threads;
        r.config.rate = Some(rate);
        r.config.workload.insert("tables".into(), 4.into());
        r.config.workload.insert(
            "targets".into(),
            serde_json::json!([{"name": "master", "host": host, "port": 3306}]),
        );
        r.meta = Some(Meta {
            run_id: "abc".into(),
            started_at: Some("2026-12-07T16:55:11.25Z".into()),
            ended_at: Some("2026-12-07T16:55:21Z".into()),
            ..Default::default()
        });
        r
    }

    #[test]
    fn the_key_is_what_is_measured_not_where_or_how_long() {
        let a = report(8, 100.0, "db1");
        let mut b = report(8, 50.0, "db2");
        b.config.time_s = 999;
        assert_eq!(cmp_key(&a), cmp_key(&b));
        assert!(cmp_key(&a).contains("threads=8") && cmp_key(&a).contains("targets=master"));
        assert_ne!(cmp_key(&a), cmp_key(&report(16, 100.0, "db1")));
        let mut c = report(8, 100.0, "db1");
        c.config.workload.insert("tables".into(), 8.into());
        assert_ne!(hash(&cmp_key(&a)), hash(&cmp_key(&c)));
        assert_eq!(hash("").len(), 16);
    }

    #[test]
    fn a_run_becomes_one_record_with_its_times_and_figures() {
        let r = report(8, 0.0, "db1");
        let rec = &records_of(&Document::Run(Box::new(r.clone())))[0];
        assert_eq!(rec.started_ms, 1_796_662_511_250);
        assert_eq!(rec.ended_ms - rec.started_ms, 9_750);
        assert_eq!((rec.kind.as_str(), rec.threads), ("run", 8));
        assert_eq!(rec.figures["tps"], rec.tps);
        let back = Document::from_slice(rec.doc.as_bytes()).unwrap();
        assert!(matches!(back, Document::Run(b) if *b == r));
    }

    #[test]
    fn utc_times_parse_to_milliseconds() {
        assert_eq!(parse_utc_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_utc_ms("2000-03-01T00:00:01.5Z"),
            Some(951_868_801_500)
        );
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-12-07 16:55:11",
            "x",
            "2026-12-07T16:55Z",
        ] {
            assert_eq!(parse_utc_ms(bad), None, "{bad}");
        }
        assert_eq!(step_label(32, 0.0, 2, 3), "32 threads #2");
        assert_eq!(step_label(4, 500.0, 1, 1), "500 events/s");
    }
}
