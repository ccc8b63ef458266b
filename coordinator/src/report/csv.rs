//! The sweep and scenario table as CSV: one row per (scenario, thread count), latencies in
//! milliseconds, for spreadsheets and plotting scripts.

use std::path::Path;

use crate::sweep::{Summary, percentile_keys};

/// The CSV text: header, then one row per entry of `rows`.
pub fn text(rows: &[(Option<&str>, &Summary)]) -> String {
    let pcts = percentile_keys(rows.iter().map(|r| r.1));
    let mut head = vec![
        "scenario",
        "threads",
        "time_s",
        "events",
        "tps",
        "qps",
        "lat_min_ms",
        "lat_avg_ms",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    head.extend(pcts.iter().map(|p| format!("lat_{p}_ms")));
    head.extend(["lat_max_ms", "errors_per_sec", "reconnects_per_sec"].map(String::from));
    let mut s = head.join(",");
    s.push('\n');
    for (name, r) in rows {
        let mut f = vec![
            quote(name.unwrap_or("")),
            r.threads.to_string(),
            r.time_s.to_string(),
            r.events.to_string(),
            r.tps.to_string(),
            r.qps.map(|q| q.to_string()).unwrap_or_default(),
            r.latency("min").to_string(),
            r.latency("avg").to_string(),
        ];
        f.extend(pcts.iter().map(|p| r.latency(p).to_string()));
        f.push(r.latency("max").to_string());
        f.push(r.errors_per_sec.to_string());
        f.push(r.reconnects_per_sec.to_string());
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
    std::fs::write(path, text(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_row_with_quoted_names() {
        let doc = crate::sweep::tests::run_doc(16, 100.0, 2000.0, 5.5);
        let s = Summary::from_run(&doc).unwrap();
        let t = text(&[(Some("a,b"), &s), (None, &s)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "scenario,threads,time_s,events,tps,qps,lat_min_ms,lat_avg_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,errors_per_sec,reconnects_per_sec"
        );
        assert_eq!(lines[1], "\"a,b\",16,10,1000,100,2000,1,2,2,5.5,11,9,2,0");
        assert!(lines[2].starts_with(",16,"));
    }
}
