//! The sweep and scenario table as CSV: one row per (scenario, thread count or offered
//! rate), latencies in milliseconds, for spreadsheets and plotting scripts.

use std::path::Path;

use crate::sweep::{Summary, percentile_keys};

/// The CSV text: header, then one row per entry of `rows`. The `scenario` column is there
/// when a row has a scenario and `repeat` when a step was measured more than once; with an
/// open loop (`--rate`) `rate` (offered, events/s; empty for a closed-loop row), `achieved`
/// (events or transactions per second, as `tps`) and `rate_reached` (true or false) come
/// next. Rates and latencies are rounded to what the text table shows and a little more.
pub fn text(rows: &[(Option<&str>, &Summary)]) -> String {
    let pcts = percentile_keys(rows.iter().map(|r| r.1));
    let named = rows.iter().any(|r| r.0.is_some());
    let repeated = rows.iter().any(|r| r.1.repeat > 1);
    let open = rows.iter().any(|r| r.1.rate > 0.0);
    let mut head: Vec<String> = Vec::new();
    if named {
        head.push("scenario".into());
    }
    if repeated {
        head.push("repeat".into());
    }
    if open {
        head.extend(["rate", "achieved", "rate_reached"].map(String::from));
    }
    head.extend(
        [
            "threads",
            "time_s",
            "events",
            "tps",
            "qps",
            "lat_min_ms",
            "lat_avg_ms",
        ]
        .map(String::from),
    );
    head.extend(pcts.iter().map(|p| format!("lat_{p}_ms")));
    head.extend(["lat_max_ms", "errors_per_sec", "reconnects_per_sec"].map(String::from));
    let mut s = head.join(",");
    s.push('\n');
    let r3 = |v: f64| format!("{v:.3}");
    for (name, r) in rows {
        let mut f: Vec<String> = Vec::new();
        if named {
            f.push(quote(name.unwrap_or("")));
        }
        if repeated {
            f.push(r.repeat.to_string());
        }
        if open {
            f.push(if r.rate > 0.0 {
                crate::report::format::rate_label(r.rate)
            } else {
                String::new()
            });
            f.push(format!("{:.2}", r.tps));
            f.push(r.rate_reached.map(|b| b.to_string()).unwrap_or_default());
        }
        f.extend([
            r.threads.to_string(),
            r3(r.time_s),
            r.events.to_string(),
            format!("{:.2}", r.tps),
            r.qps.map(|q| format!("{q:.2}")).unwrap_or_default(),
            r3(r.latency("min")),
            r3(r.latency("avg")),
        ]);
        f.extend(pcts.iter().map(|p| r3(r.latency(p))));
        f.push(r3(r.latency("max")));
        f.push(format!("{:.2}", r.errors_per_sec));
        f.push(format!("{:.2}", r.reconnects_per_sec));
        s.push_str(&f.join(","));
        s.push('\n');
    }
    s
}

/// RFC 4180 quoting when a field needs it.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write(path: &Path, rows: &[(Option<&str>, &Summary)]) -> std::io::Result<()> {
    crate::output::write(path, |w| w.write_all(text(rows).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_row_with_quoted_names() {
        let doc = crate::sweep::tests::run_doc(16, 100.0, 2000.0, 5.5);
        let s = Summary::from_run(&doc);
        let t = text(&[(Some("a,b"), &s), (None, &s)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "scenario,threads,time_s,events,tps,qps,lat_min_ms,lat_avg_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,errors_per_sec,reconnects_per_sec"
        );
        assert_eq!(
            lines[1],
            "\"a,b\",16,10.000,1000,100.00,2000.00,1.000,2.000,2.000,5.500,11.000,9.000,2.00,0.00"
        );
        assert!(lines[2].starts_with(",16,"));
    }

    #[test]
    fn open_loop_rows_lead_with_offered_and_achieved_rates() {
        let a = Summary::from_run(&crate::sweep::tests::open_doc(4, 100.0, 99.5, 2.0));
        let b = Summary::from_run(&crate::sweep::tests::open_doc(4, 200.0, 150.0, 9.0));
        let t = text(&[(None, &a), (None, &b)]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("rate,achieved,rate_reached,threads,time_s,"),
            "{t}"
        );
        assert!(lines[1].starts_with("100,99.50,true,4,"), "{t}");
        assert!(lines[2].starts_with("200,150.00,false,4,"), "{t}");
        // Beside a closed-loop row, which has no rate.
        let closed = Summary::from_run(&crate::sweep::tests::run_doc(8, 300.0, 6000.0, 4.0));
        let t = text(&[(Some("open"), &a), (Some("closed"), &closed)]);
        assert!(
            t.lines().nth(2).unwrap().starts_with("closed,,300.00,,8,"),
            "{t}"
        );
    }

    #[test]
    fn single_runs_have_no_scenario_column_and_repeats_a_repeat_column() {
        let doc = crate::sweep::tests::run_doc(16, 100.0 / 3.0, 2000.0, 5.5);
        let mut s = Summary::from_run(&doc);
        let t = text(&[(None, &s)]);
        assert!(t.starts_with("threads,time_s,"), "{t}");
        assert!(
            t.lines().nth(1).unwrap().contains(",33.33,"),
            "rounded: {t}"
        );
        let first = s.clone();
        s.repeat = 2;
        let t = text(&[(None, &first), (None, &s)]);
        assert!(t.starts_with("repeat,threads,"), "{t}");
        assert!(t.lines().nth(2).unwrap().starts_with("2,16,"), "{t}");
    }
}
