//! How the page names what ran: agents as the text report and the page's tables name
//! them (their address, or `embedded`), database targets and their servers as text, and configuration values as a person reads
//! them rather than as JSON.

use serde_json::Value;

use super::markup::{num, value_text};
use crate::report::doc::Report;

/// Each agent's name on the page, in the run's agent order: the same in the charts'
/// legends, the tables and the warnings, and the same as the text report's (its address,
/// or `embedded` for an agent inside the coordinator: [`Report::agent_names`]). Host
/// names are not names: several agents may share a host.
pub(super) fn agent_names(run: &Report) -> Vec<String> {
    run.agent_names()
}

/// Table numbers as short text: runs of consecutive numbers as ranges ("1-4, 7").
fn number_ranges(ns: &[Value]) -> String {
    let mut v: Vec<u64> = ns.iter().filter_map(Value::as_u64).collect();
    if v.len() != ns.len() {
        return list_text(ns);
    }
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

/// A list as comma-separated text.
fn list_text(vs: &[Value]) -> String {
    vs.iter().map(readable).collect::<Vec<_>>().join(", ")
}

/// A database target of the configuration (`{"name", "user", "host", "port", "socket",
/// "database", "tables"}`) as one line: "default: sbtest@127.0.0.1:3306, database sbtest,
/// tables 1-4"; keys it does not know follow as `key=value`.
pub(super) fn target_text(t: &Value) -> String {
    let Some(m) = t.as_object() else {
        return readable(t);
    };
    let s = |k: &str| m.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
    let mut where_ = String::new();
    if let Some(u) = s("user") {
        where_.push_str(u);
        where_.push('@');
    }
    match (s("socket"), s("host")) {
        (Some(sock), _) => where_.push_str(sock),
        (None, Some(h)) => {
            where_.push_str(h);
            if let Some(p) = m.get("port").and_then(Value::as_u64) {
                where_.push_str(&format!(":{p}"));
            }
        }
        (None, None) => {}
    }
    let mut parts = vec![where_];
    if let Some(d) = s("database") {
        parts.push(format!("database {d}"));
    }
    if let Some(Value::Array(tables)) = m.get("tables")
        && !tables.is_empty()
    {
        parts.push(format!("tables {}", number_ranges(tables)));
    }
    for (k, v) in m {
        if !matches!(
            k.as_str(),
            "name" | "user" | "host" | "port" | "socket" | "database" | "tables"
        ) && !v.is_null()
        {
            parts.push(format!("{k}={}", readable(v)));
        }
    }
    let body: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    match s("name") {
        Some(n) => format!("{n}: {}", body.join(", ")),
        None => body.join(", "),
    }
}

/// Any configuration value as text: strings bare, numbers short, lists comma-separated,
/// database targets as [`target_text`] says, other objects as `key=value` pairs.
pub(super) fn readable(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map(num).unwrap_or_else(|| n.to_string()),
        Value::Array(a) if a.iter().all(|x| x.get("name").is_some() && x.is_object()) => {
            a.iter().map(target_text).collect::<Vec<_>>().join("; ")
        }
        Value::Array(a) => list_text(a),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", readable(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => value_text(other),
    }
}

/// A configuration's rows as the page lists them: the keys in the file's order with their
/// values as text, except that of the two intervals only the report interval is kept
/// (`interval_s` is the tick the charts use: the report interval, or 1 s without one).
pub(super) fn config_rows(config: &serde_json::Map<String, Value>) -> Vec<(String, Value)> {
    config
        .iter()
        .filter(|(k, _)| k.as_str() != "interval_s")
        .map(|(k, v)| {
            if k == "report_interval_s" {
                let tick = config.get("interval_s").and_then(Value::as_f64);
                let shown = match (v.as_u64(), tick) {
                    (Some(0), Some(t)) => format!("off (charts per {} s)", num(t)),
                    (Some(0), None) => "off".to_string(),
                    _ => readable(v),
                };
                ("report interval (s)".to_string(), Value::String(shown))
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Agent;
    use serde_json::json;

    #[test]
    fn agents_are_named_as_the_text_report_names_them() {
        let mut run = crate::sweep::tests::run_doc(4, 1.0, 1.0, 1.0);
        let agent = |addr: &str, name: &str, host: &str| Agent {
            addr: addr.into(),
            name: name.into(),
            host: host.into(),
            ..Default::default()
        };
        run.agents = vec![
            agent("10.0.0.1:7600", "10.0.0.1:7600", "c1"),
            agent("127.0.0.1:1", "embedded-1", "vm"),
            agent("127.0.0.1:2", "embedded-2", "vm"),
        ];
        assert_eq!(
            agent_names(&run),
            ["10.0.0.1:7600", "embedded-1", "embedded-2"]
        );
        // A file written before agents had names: the configuration says which were
        // embedded; the others go by their address.
        run.config.agents = vec!["local:127.0.0.1:1".into()];
        run.agents = vec![agent("127.0.0.1:1", "", "vm")];
        assert_eq!(agent_names(&run), ["embedded"]);
        run.config.agents = vec!["10.0.0.9:7600".into()];
        run.agents = vec![agent("10.0.0.9:7600", "", "")];
        assert_eq!(agent_names(&run), ["10.0.0.9:7600"]);
    }

    #[test]
    fn targets_and_lists_read_as_text() {
        let t = json!({"database": "sbtest", "host": "127.0.0.1", "name": "default",
            "port": 33917, "socket": null, "tables": [1, 2, 3, 5], "user": "sbtest"});
        assert_eq!(
            target_text(&t),
            "default: sbtest@127.0.0.1:33917, database sbtest, tables 1-3, 5"
        );
        let sock = json!({"name": "s", "socket": "/run/my.sock", "host": "x", "user": "u"});
        assert_eq!(target_text(&sock), "s: u@/run/my.sock");
        assert_eq!(
            readable(&json!([t.clone(), sock])),
            "default: sbtest@127.0.0.1:33917, database sbtest, tables 1-3, 5; s: u@/run/my.sock"
        );
        assert_eq!(readable(&json!([95.0, 99.9])), "95, 99.9");
        assert_eq!(readable(&json!({"a": 1, "b": "x"})), "a=1, b=x");
    }

    #[test]
    fn one_interval_row_labelled_as_the_report_interval() {
        let c = |ri: u64, tick: f64| {
            let m = json!({"interval_s": tick, "report_interval_s": ri, "threads": 4});
            config_rows(m.as_object().unwrap())
        };
        let rows = c(0, 1.0);
        let keys: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["report interval (s)", "threads"]);
        assert_eq!(rows[0].1, json!("off (charts per 1 s)"));
        assert_eq!(c(10, 10.0)[0].1, json!("10"));
    }
}
