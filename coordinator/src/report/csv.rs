//! `--csv FILE`: a result's measurements as CSV rows appended to a file that collects runs,
//! for spreadsheets and plotting scripts. One row per measurement (a run, or each step of
//! a sweep or scenario file), each saying which test and run it is, when it started, which
//! step and tags it had, then the figures that test has: TPS (or events/s), QPS where
//! there are queries, TpmC and each transaction type's percentiles for TPC-C, and latencies
//! in milliseconds.
//!
//! The header is written once, when the file is new or empty; a later result is appended
//! under it when its columns are the same. When they differ (another test, other
//! percentiles) nothing is written and the user is told in one line (exit 2): a file
//! keeps one column layout, never rows that do not match its header.

use std::path::Path;

use super::doc::{Document, Report, Step};
use crate::error::UsageError;
use crate::report::format::rate_label;
use crate::sweep::{Summary, percentile_keys};
use fleetbench_model::workloads::tpcc::TXN_NAMES;

/// The columns every file starts with: what identifies a measurement. Also how an existing
/// file is recognised as one of these (see [`check_existing`]).
const IDENTITY: [&str; 7] = [
    "test",
    "run_id",
    "started_at",
    "scenario",
    "step",
    "repeat",
    "tags",
];

/// One measurement with what identifies it.
pub struct Row<'a> {
    /// The scenario's name (scenario files only).
    pub scenario: Option<&'a str>,
    /// A sweep's step: its thread count, or its offered rate in a rate sweep (None for a
    /// single run and for the repeats of one thread count).
    pub step: Option<String>,
    pub run: &'a Report,
    pub summary: Summary,
}

/// The measurements a document holds, in its order.
pub fn rows(doc: &Document) -> Vec<Row<'_>> {
    match doc {
        Document::Run(r) => vec![Row {
            scenario: None,
            step: None,
            run: r,
            summary: Summary::from_run(r),
        }],
        Document::Sweep(sw) => {
            step_rows(&sw.steps, None, sw.rates.is_some(), sw.threads.len()).collect()
        }
        Document::Scenarios(sc) => sc
            .scenarios
            .iter()
            .flat_map(|s| {
                step_rows(
                    &s.steps,
                    Some(s.name.as_str()),
                    s.rates.is_some(),
                    s.threads.len(),
                )
            })
            .collect(),
    }
}

/// A sweep's rows: its axis names the steps, rates when it has them, else threads when it
/// steps over more than one count.
fn step_rows<'a>(
    steps: &'a [Step],
    name: Option<&'a str>,
    rates: bool,
    threads: usize,
) -> impl Iterator<Item = Row<'a>> + 'a {
    steps.iter().map(move |s| Row {
        scenario: name,
        step: if rates {
            Some(rate_label(s.rate))
        } else if threads > 1 {
            Some(s.threads.to_string())
        } else {
            None
        },
        run: &s.result,
        summary: Summary::from_step(s),
    })
}

/// What the rows have, which decides the columns.
struct Columns {
    /// Every row has queries: the rate is transactions per second.
    tps: bool,
    qps: bool,
    tpmc: bool,
    /// Latency percentiles ("p50", "p95", ...), overall and per TPC-C type.
    pcts: Vec<String>,
    /// (target, figure) of the servers' figures some row has, in first-seen order.
    servers: Vec<(String, &'static str)>,
}

/// A server's figure in the CSV: its column's suffix and where the JSON has it.
type ServerFigure = (&'static str, fn(&crate::servers::ServerJson) -> Option<f64>);

/// The servers' figures the CSV has a column for, per target (`server_<target>_<figure>`).
const SERVER_FIGURES: [ServerFigure; 9] = [
    ("rows_read_per_tx", |s| s.per_tx.rows_read),
    ("rows_written_per_tx", |s| s.per_tx.rows_written),
    ("disk_reads_per_tx", |s| s.per_tx.server_reads),
    ("log_bytes_per_tx", |s| s.per_tx.log_bytes),
    ("stmts_per_tx", |s| s.per_tx.statements),
    ("read_misses_per_1000", |s| s.read_misses_per_1000),
    ("replica_lag_max_s", |s| {
        s.replica_lag_s.as_ref().map(|l| l.max)
    }),
    ("host_cpu_us_per_tx", |s| {
        s.hosts.first().and_then(|h| h.cpu_us_per_tx)
    }),
    ("process_cpu_us_per_tx", |s| {
        s.hosts.first().and_then(|h| h.process_cpu_us_per_tx)
    }),
];

/// Target `name`'s figure `figure` in `run`, where it has one.
fn server_figure(run: &Report, name: &str, figure: &str) -> Option<f64> {
    let t = run.totals.targets.iter().find(|t| t.name == name)?;
    let (_, get) = SERVER_FIGURES.iter().find(|(f, _)| *f == figure)?;
    get(t.server.as_ref()?)
}

impl Columns {
    fn of(rows: &[Row]) -> Columns {
        let qps = rows.iter().any(|r| r.summary.qps.is_some());
        Columns {
            tps: qps && rows.iter().all(|r| r.summary.qps.is_some()),
            qps,
            tpmc: rows.iter().any(|r| r.summary.tpmc.is_some()),
            pcts: percentile_keys(rows.iter().map(|r| &r.summary)),
            servers: server_columns(rows),
        }
    }

    fn names(&self) -> Vec<String> {
        let mut head: Vec<String> = IDENTITY.map(String::from).to_vec();
        head.extend(["threads", "rate", "rate_reached", "time_s", "events"].map(String::from));
        head.push(if self.tps { "tps" } else { "events_per_sec" }.into());
        if self.qps {
            head.push("qps".into());
        }
        if self.tpmc {
            head.push("tpmc".into());
        }
        head.extend(["lat_min_ms", "lat_avg_ms"].map(String::from));
        head.extend(self.pcts.iter().map(|p| format!("lat_{p}_ms")));
        head.push("lat_max_ms".into());
        if self.tpmc {
            for t in TXN_NAMES {
                head.extend(self.pcts.iter().map(|p| format!("{t}_{p}_ms")));
            }
        }
        if self.qps {
            head.extend(["errors_per_sec", "reconnects_per_sec"].map(String::from));
        }
        head.extend(
            self.servers
                .iter()
                .map(|(t, f)| format!("server_{}_{f}", column_word(t))),
        );
        head
    }

    fn fields(&self, row: &Row) -> Vec<String> {
        let (r, s) = (row.run, &row.summary);
        let meta = r.meta.as_ref();
        let r2 = |v: f64| format!("{v:.2}");
        let r3 = |v: f64| format!("{v:.3}");
        let tags: Vec<String> = meta
            .iter()
            .flat_map(|m| &m.tags)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut f = vec![
            quote(&r.test),
            quote(meta.map_or("", |m| m.run_id.as_str())),
            quote(meta.and_then(|m| m.started_at.as_deref()).unwrap_or("")),
            quote(row.scenario.unwrap_or("")),
            row.step.clone().unwrap_or_default(),
            s.repeat.to_string(),
            quote(&tags.join(";")),
            s.threads.to_string(),
            if s.rate > 0.0 {
                rate_label(s.rate)
            } else {
                String::new()
            },
            s.rate_reached.map(|b| b.to_string()).unwrap_or_default(),
            r3(s.time_s),
            s.events.to_string(),
            r2(s.tps),
        ];
        if self.qps {
            f.push(s.qps.map(r2).unwrap_or_default());
        }
        if self.tpmc {
            f.push(s.tpmc.map(r2).unwrap_or_default());
        }
        f.extend([r3(s.latency("min")), r3(s.latency("avg"))]);
        f.extend(self.pcts.iter().map(|p| r3(s.latency(p))));
        f.push(r3(s.latency("max")));
        if self.tpmc {
            let types = r.totals.figures.tpcc.as_ref().map(|t| &t.transactions);
            for t in TXN_NAMES {
                let lat = types.and_then(|m| m.get(t)).map(|x| &x.latency_ms);
                f.extend(
                    self.pcts
                        .iter()
                        .map(|p| lat.and_then(|l| l.get(p)).map(r3).unwrap_or_default()),
                );
            }
        }
        if self.qps {
            f.extend([r2(s.errors_per_sec), r2(s.reconnects_per_sec)]);
        }
        f.extend(
            self.servers
                .iter()
                .map(|(t, fig)| server_figure(r, t, fig).map(r3).unwrap_or_default()),
        );
        f
    }
}

/// The (target, figure) columns the rows' servers have a value for.
fn server_columns(rows: &[Row]) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for row in rows {
        for t in &row.run.totals.targets {
            let Some(sv) = &t.server else { continue };
            for (fig, get) in SERVER_FIGURES {
                if get(sv).is_some() && !out.iter().any(|(n, f)| *n == t.name && *f == fig) {
                    out.push((t.name.clone(), fig));
                }
            }
        }
    }
    out
}

/// A target's name as part of a column name: letters, digits and `_`.
fn column_word(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The header line and the rows' lines (each without its newline).
pub fn lines(rows: &[Row]) -> (String, Vec<String>) {
    let cols = Columns::of(rows);
    let head = cols.names().join(",");
    let body = rows.iter().map(|r| cols.fields(r).join(",")).collect();
    (head, body)
}

/// RFC 4180 quoting when a field needs it.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// What a file gets when it already holds `existing` (None: nothing, or a FIFO or device
/// that is only written): the whole new content, or the one-line reason the rows cannot
/// go under its header.
pub fn appended(existing: Option<&str>, head: &str, body: &[String]) -> Result<String, String> {
    let mut out = String::new();
    match existing.filter(|t| !t.is_empty()) {
        None => {
            out.push_str(head);
            out.push('\n');
        }
        Some(text) => {
            let first = text.lines().next().unwrap_or("").trim_end_matches('\r');
            if first != head {
                return Err(mismatch(first, head));
            }
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    for line in body {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// Why a file's header does not take these rows: the columns only one of them has.
fn mismatch(first: &str, head: &str) -> String {
    if !first.starts_with(&IDENTITY.join(",")) {
        return "its first line is not a fleetbench CSV header: nothing was written (name a new file)".into();
    }
    let file: Vec<&str> = first.split(',').collect();
    let new: Vec<&str> = head.split(',').collect();
    let only = |a: &[&str], b: &[&str]| -> String {
        let v: Vec<&str> = a.iter().filter(|c| !b.contains(c)).copied().collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(" ")
        }
    };
    format!(
        "its columns differ from this result's (only in the file: {}; only in this result: {}): nothing was appended (name a new file for this test)",
        only(&file, &new),
        only(&new, &file)
    )
}

/// Before a run: a file that exists and is not empty must start with fleetbench's CSV
/// header, so that a wrong file is refused before the run rather than after it.
pub fn check_existing(path: &Path) -> Result<(), String> {
    if crate::output::is_stdout(path) {
        return Ok(());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() > 0 => {}
        _ => return Ok(()),
    }
    use std::io::BufRead;
    let mut first = String::new();
    let f = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    // The first line only, however long the file.
    let _ = std::io::BufReader::new(std::io::Read::take(f, 64 << 10)).read_line(&mut first);
    if first.starts_with(&IDENTITY.join(",")) {
        Ok(())
    } else {
        Err("its first line is not a fleetbench CSV header, so rows cannot be appended to it (name a new file)".into())
    }
}

/// Appends `doc`'s rows to `path` (the header first when it is new or empty). A regular
/// file is rewritten whole, atomically (crate::output), so a reader never sees half a row.
pub fn append(path: &Path, doc: &Document) -> anyhow::Result<()> {
    let rows = rows(doc);
    let (head, body) = lines(&rows);
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let existing = if regular && !crate::output::is_stdout(path) {
        Some(
            fleetbench_model::capped::read_to_string(
                path,
                "the CSV file",
                fleetbench_model::capped::RESULT_CAP,
            )
            .map_err(|e| UsageError(format!("--csv {}: {e}", path.display())))?,
        )
    } else {
        None
    };
    let text = appended(existing.as_deref(), &head, &body)
        .map_err(|why| UsageError(format!("--csv {}: {why}", path.display())))?;
    crate::output::write(path, |w| w.write_all(text.as_bytes()))
        .map_err(|e| anyhow::anyhow!("cannot write the CSV table to {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Meta, Tpcc, TxnJson};
    use crate::sweep::tests::{
        cpu_sweep, latency, open_doc, run_doc, scenarios_of, step, sweep_of,
    };

    fn with_meta(mut doc: Report, id: &str) -> Report {
        doc.test = "oltp_read_write".into();
        doc.meta = Some(Meta {
            run_id: id.into(),
            started_at: Some("2026-12-01T23:38:54Z".into()),
            tags: [("buffer_pool".to_string(), "8G".to_string())].into(),
            ..Default::default()
        });
        doc
    }

    /// A cpu run as `json::build` writes one: events per second, no queries.
    fn cpu_run() -> Report {
        let mut doc = run_doc(4, 250.0, 0.0, 2.0);
        doc.totals.figures.sql = None;
        doc
    }

    fn text(doc: &Document) -> String {
        let (head, body) = lines(&rows(doc));
        appended(None, &head, &body).unwrap()
    }

    #[test]
    fn each_read_server_has_its_columns() {
        let mut doc = run_doc(4, 100.0, 2000.0, 3.0);
        doc.totals.targets.push(crate::report::doc::TargetJson {
            name: "db-1".into(),
            server: Some(crate::servers::ServerJson {
                per_tx: crate::servers::PerTx {
                    rows_read: Some(12.5),
                    ..Default::default()
                },
                hosts: vec![crate::servers::HostJson {
                    cpu_us_per_tx: Some(250.0),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        });
        let doc = Document::Run(Box::new(doc));
        let (head, body) = lines(&rows(&doc));
        let cols: Vec<&str> = head.split(',').collect();
        let cells: Vec<&str> = body[0].split(',').collect();
        let at = |name: &str| {
            cols.iter()
                .position(|c| *c == name)
                .unwrap_or_else(|| panic!("{name} in {head}"))
        };
        assert_eq!(cells[at("server_db_1_rows_read_per_tx")], "12.500");
        assert_eq!(cells[at("server_db_1_host_cpu_us_per_tx")], "250.000");
        assert!(!head.contains("server_db_1_log_bytes_per_tx"), "{head}");
    }

    #[test]
    fn a_run_is_one_row_under_its_identity() {
        let doc = Document::Run(Box::new(with_meta(run_doc(16, 100.0, 2000.0, 5.5), "r1")));
        let t = text(&doc);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "test,run_id,started_at,scenario,step,repeat,tags,threads,rate,rate_reached,time_s,events,tps,qps,lat_min_ms,lat_avg_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,errors_per_sec,reconnects_per_sec"
        );
        assert_eq!(
            lines[1],
            "oltp_read_write,r1,2026-12-01T23:38:54Z,,,1,buffer_pool=8G,16,,,10.000,1000,100.00,2000.00,1.000,2.000,2.000,5.500,11.000,9.000,2.00,0.00"
        );
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn cpu_has_events_per_second_and_no_query_columns() {
        let t = text(&Document::Run(Box::new(cpu_run())));
        let head = t.lines().next().unwrap();
        assert!(
            head.contains(",events,events_per_sec,lat_min_ms,"),
            "{head}"
        );
        assert!(!head.contains("tps") && !head.contains("qps"), "{head}");
        assert!(!head.contains("errors_per_sec"), "{head}");
        assert!(t.lines().nth(1).unwrap().contains(",2500,250.00,"), "{t}");
    }

    #[test]
    fn sweeps_name_their_steps_and_scenarios_quote_their_names() {
        // A thread sweep: the step is the thread count.
        let sweep = cpu_sweep([(8, 1, 100.0), (16, 1, 150.0)]);
        let t = text(&sweep);
        let steps: Vec<&str> = t
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(4).unwrap())
            .collect();
        assert_eq!(steps, ["8", "16"], "{t}");
        // Repeats of one count: no step, the repeat tells them apart.
        let t = text(&cpu_sweep([(8, 1, 100.0), (8, 2, 101.0)]));
        let cells: Vec<Vec<&str>> = t
            .lines()
            .skip(1)
            .map(|l| l.split(',').skip(4).take(2).collect())
            .collect();
        assert_eq!(cells, [["", "1"], ["", "2"]], "{t}");
        // A rate sweep: the step is the offered rate, and the rate columns are filled.
        let rates = sweep_of(
            "cpu",
            vec![
                step(open_doc(4, 100.0, 99.5, 2.0), 1),
                step(open_doc(4, 200.0, 150.0, 9.0), 1),
            ],
            Some(vec![100.0, 200.0]),
        );
        let t = text(&rates);
        assert!(
            t.lines().nth(1).unwrap().contains(",100,1,,4,100,true,"),
            "{t}"
        );
        assert!(
            t.lines().nth(2).unwrap().contains(",200,1,,4,200,false,"),
            "{t}"
        );
        // A scenario's name with a comma is quoted.
        let Document::Sweep(sw) = cpu_sweep([(8, 1, 100.0)]) else {
            unreachable!()
        };
        let doc = scenarios_of(vec![crate::report::doc::ScenarioDoc {
            name: "a,b".into(),
            description: None,
            test: "cpu".into(),
            targets: vec![],
            threads: vec![8],
            steps: sw.steps,
            rates: None,
        }]);
        assert!(text(&doc).lines().nth(1).unwrap().contains(",\"a,b\",,1,"));
    }

    #[test]
    fn tpcc_rows_carry_tpmc_and_each_types_percentiles() {
        let mut doc = run_doc(8, 50.0, 1500.0, 20.0);
        doc.test = "tpcc".into();
        doc.totals.figures.tpcc = Some(Tpcc {
            tpmc: 1234.5,
            constraints_ok: true,
            transactions: TXN_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let v = (i + 1) as f64;
                    let l = latency(
                        1,
                        v,
                        v,
                        v,
                        &[("p50", v), ("p95", v * 2.0), ("p99", v * 3.0)],
                    );
                    (
                        n.to_string(),
                        TxnJson {
                            latency_ms: l,
                            ..Default::default()
                        },
                    )
                })
                .collect(),
        });
        let t = text(&Document::Run(Box::new(doc)));
        let head: Vec<&str> = t.lines().next().unwrap().split(',').collect();
        let row: Vec<&str> = t.lines().nth(1).unwrap().split(',').collect();
        let cell = |name: &str| row[head.iter().position(|h| *h == name).expect(name)];
        assert_eq!(cell("tpmc"), "1234.50");
        assert_eq!(cell("tps"), "50.00");
        assert_eq!(cell("new_order_p95_ms"), "2.000");
        assert_eq!(cell("stock_level_p99_ms"), "15.000");
    }

    #[test]
    fn rows_are_appended_under_the_same_header_only() {
        let doc = Document::Run(Box::new(with_meta(run_doc(16, 100.0, 2000.0, 5.5), "r1")));
        let (head, body) = lines(&rows(&doc));
        let first = appended(None, &head, &body).unwrap();
        // An empty file gets the header, a file with it only the rows.
        assert_eq!(appended(Some(""), &head, &body).unwrap(), first);
        let second = appended(Some(&first), &head, &body).unwrap();
        assert_eq!(second.lines().count(), 3);
        assert_eq!(second.matches("test,run_id").count(), 1);
        // A file without a last newline gets one before the rows.
        let cut = first.trim_end();
        assert_eq!(appended(Some(cut), &head, &body).unwrap(), second);
        // A cpu result's columns under an OLTP header: refused, saying which columns.
        let cpu = Document::Run(Box::new(cpu_run()));
        let (chead, cbody) = lines(&rows(&cpu));
        let why = appended(Some(&first), &chead, &cbody).unwrap_err();
        assert_eq!(
            why,
            "its columns differ from this result's (only in the file: tps qps errors_per_sec reconnects_per_sec; only in this result: events_per_sec): nothing was appended (name a new file for this test)"
        );
        // A file of another layout (fleetbench's CSV before it collected runs).
        let old = "threads,time_s,events,tps\n16,10.000,1000,100.00\n";
        let why = appended(Some(old), &head, &body).unwrap_err();
        assert!(
            why.starts_with("its first line is not a fleetbench CSV header"),
            "{why}"
        );
    }

    #[test]
    fn a_file_of_another_layout_is_refused_before_the_run() {
        let dir = std::env::temp_dir().join(format!("fb-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (new, ours, other, empty) = (
            dir.join("new.csv"),
            dir.join("ours.csv"),
            dir.join("other.csv"),
            dir.join("empty.csv"),
        );
        std::fs::write(&ours, format!("{}\n", IDENTITY.join(","))).unwrap();
        std::fs::write(&other, "threads,time_s\n").unwrap();
        std::fs::write(&empty, "").unwrap();
        let results: Vec<bool> = [&new, &ours, &empty, &other]
            .iter()
            .map(|p| check_existing(p).is_ok())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(results, [true, true, true, false]);
        // Standard output is never read, whatever file is named `-`.
        assert!(check_existing(Path::new("-")).is_ok());
    }
}
