//! `--metrics-listen` and `--metrics-push` against the real thing: Debian's Prometheus
//! server scrapes a run over two agent processes and its query API returns the run's
//! series; Prometheus' own linter accepts the exposition; a Pushgateway receives the
//! final figures. Prometheus and the Pushgateway are started here on free ports with
//! private data directories (scripts/test.sh installs the packages).

use fleetbench_tests::{AgentProc, Scratch, bin, fleetbench, free_port, json, wait_until};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A program of Debian's prometheus packages; fails loudly when it is missing.
fn program(name: &str) -> PathBuf {
    let p = Path::new("/usr/bin").join(name);
    assert!(
        p.exists(),
        "{} is missing: run scripts/test.sh, which installs it (apt-get install prometheus prometheus-pushgateway)",
        p.display()
    );
    p
}

/// GET `path` from `addr`: (status code, body). HTTP/1.0, so the body is never chunked.
fn get(addr: &str, path: &str, accept: &str) -> Option<(u16, String)> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n"
    )
    .ok()?;
    let mut raw = String::new();
    c.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let code = head.split(' ').nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

/// Percent-encodes a query parameter.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a server on a free port and waits until `ready` answers 200.
fn start(mut cmd: Command, port: u16, ready: &str) -> Server {
    let s = Server(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server"),
    );
    let addr = format!("127.0.0.1:{port}");
    assert!(
        wait_until(Duration::from_secs(60), || get(&addr, ready, "*/*")
            .is_some_and(|(c, _)| c == 200)),
        "{cmd:?} did not get ready on {addr}"
    );
    s
}

/// A Prometheus query's result vector: (labels, value) per series.
/// An instant query evaluated `at` (Unix seconds): while the run still served its metrics,
/// so that the failed scrapes after the coordinator's exit (which mark every series stale)
/// never hide its data, however late the query comes.
fn query(prom: &str, q: &str, at: f64) -> Vec<(serde_json::Value, f64)> {
    let url = format!("/api/v1/query?query={}&time={at:.3}", enc(q));
    let (code, body) = get(prom, &url, "*/*").expect("Prometheus answers");
    assert_eq!(code, 200, "{q}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{q}: {body}"))
        .iter()
        .map(|r| {
            let value = r["value"][1].as_str().unwrap().parse().unwrap();
            (r["metric"].clone(), value)
        })
        .collect()
}

/// Starts `fleetbench ARGS` (which include `--metrics-listen=127.0.0.1:0`) and reads the
/// address it serves the metrics at from its first line on stderr: the child, the rest of
/// its stderr, and the address.
fn with_metrics<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
) -> (Child, BufReader<std::process::ChildStderr>, String) {
    let mut run = Command::new(bin("fleetbench"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(run.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let metrics = line
        .trim()
        .strip_prefix("note: serving the run's metrics for Prometheus at http://")
        .and_then(|l| l.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("no metrics address in {line:?}"))
        .to_string();
    (run, err, metrics)
}

#[test]
fn prometheus_scrapes_a_run_and_serves_its_series_with_agent_labels() {
    let dir = Scratch::new("prometheus");
    let (a1, a2) = (AgentProc::start(), AgentProc::start());
    // Prometheus first, scraping whatever the targets file names (fleetbench's address is
    // known only once it listens on its port 0).
    let targets = dir.path("targets.json");
    std::fs::write(&targets, "[]").unwrap();
    let config = dir.path("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: fleetbench\n    file_sd_configs:\n      - files: ['{}']\n        refresh_interval: 1s\n",
            targets.display()
        ),
    )
    .unwrap();
    let port = free_port();
    let prom = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(program("prometheus"));
    cmd.arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path("data").display()
        ))
        .arg(format!("--web.listen-address={prom}"));
    let _prometheus = start(cmd, port, "/-/ready");

    let out_json = dir.path("run.json");
    let (mut run, mut err, metrics) = with_metrics(&[
        "cpu",
        &format!("--agents={},{}", a1.addr, a2.addr),
        "--threads=2",
        "--cpu-max-prime=5000",
        "--time=9",
        "--report-interval=1",
        "--tag=study=prom-test",
        "--metrics-listen=127.0.0.1:0",
        &format!("--json={}", out_json.display()),
        "run",
    ]);
    // Renamed into place, so that Prometheus never reads half a file.
    let tmp = dir.path("targets.json.tmp");
    std::fs::write(&tmp, format!("[{{\"targets\": [\"{metrics}\"]}}]")).unwrap();
    std::fs::rename(&tmp, &targets).unwrap();

    // While it runs: Prometheus' linter accepts the text exposition.
    assert!(wait_until(Duration::from_secs(10), || {
        get(&metrics, "/metrics", "text/plain").is_some_and(|(_, b)| b.contains("fleetbench_tps{"))
    }));
    let (code, text) = get(&metrics, "/metrics", "text/plain").unwrap();
    assert_eq!(code, 200);
    let mut lint = Command::new(program("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    lint.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let lint = lint.wait_with_output().unwrap();
    assert!(
        lint.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );

    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    // Its stderr closes as it exits: a moment before that, its last scrapes had worked.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 0.3;
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    let doc = json(&out_json);
    let run_id = doc["meta"]["run_id"].as_str().unwrap().to_string();

    // Every scrape worked: Prometheus (which asks for OpenMetrics first) parsed them all.
    let up = query(&prom, "min_over_time(up{job=\"fleetbench\"}[5m])", at);
    assert_eq!(up.len(), 1, "{up:?}");
    assert_eq!(up[0].1, 1.0, "a scrape failed");
    // The TPS series: one per agent, labelled with its address, the run id and the tag.
    let tps = query(&prom, "last_over_time(fleetbench_tps[5m])", at);
    let mut agents: Vec<String> = tps
        .iter()
        .map(|(m, _)| m["agent"].as_str().unwrap().to_string())
        .collect();
    agents.sort();
    let mut want = vec![a1.addr.clone(), a2.addr.clone()];
    want.sort();
    assert_eq!(agents, want);
    for (m, _) in &tps {
        assert_eq!(m["run_id"], run_id.as_str());
        assert_eq!(m["tag_study"], "prom-test");
    }
    // The last value agrees with the report within one interval: each agent's last TPS
    // is its rate in one of the run's last intervals (the very last may end after the
    // last scrape).
    let order: Vec<String> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["addr"].as_str().unwrap().to_string())
        .collect();
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 8, "{}", intervals.len());
    for (m, v) in &tps {
        let i = order.iter().position(|a| m["agent"] == a.as_str()).unwrap();
        let rates: Vec<f64> = intervals[intervals.len() - 3..]
            .iter()
            .map(|iv| iv["agent_events"][i].as_f64().unwrap() / iv["duration_s"].as_f64().unwrap())
            .collect();
        assert!(
            rates.iter().any(|r| (r - v).abs() <= 0.03 * r),
            "agent {i}: Prometheus' last TPS {v}, the report's last intervals {rates:?}"
        );
    }
    // The counters: the events Prometheus saw last are the run's, less at most its last
    // two intervals'.
    let seen: f64 = query(
        &prom,
        "sum(last_over_time(fleetbench_events_total[5m]))",
        at,
    )[0]
    .1;
    let total = doc["totals"]["events"].as_f64().unwrap();
    let tail: f64 = intervals[intervals.len() - 2..]
        .iter()
        .map(|iv| iv["events"].as_f64().unwrap())
        .sum();
    assert!(
        seen <= total && seen >= total - tail,
        "Prometheus saw {seen} events, the report {total} (last two intervals {tail})"
    );
    // The histogram derived from HDR is one Prometheus can take percentiles of.
    let p99 = query(
        &prom,
        "histogram_quantile(0.99, sum by (le) (last_over_time(fleetbench_latency_seconds_bucket[5m])))",
        at,
    );
    assert_eq!(p99.len(), 1);
    assert!(p99[0].1 > 0.0 && p99[0].1.is_finite(), "{p99:?}");
    // And the client hosts' figures, per agent.
    assert_eq!(
        query(
            &prom,
            "last_over_time(fleetbench_host_cpu_busy_percent[5m])",
            at
        )
        .len(),
        2
    );
    // The Grafana dashboard is built on these series: each of its queries is valid PromQL
    // and, but for the ones a closed-loop cpu run has nothing for (errors, the open loop's
    // queue, fileio's disk, database targets, TPC-C), finds this run's data.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/grafana-dashboard.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut checked = 0;
    for panel in dash["panels"].as_array().unwrap() {
        let title = panel["title"].as_str().unwrap();
        let none_here = title.contains("errors")
            || title.contains("queue length")
            || title.starts_with("fileio")
            || title.contains("database target")
            || title.starts_with("TPC-C");
        for t in panel["targets"].as_array().unwrap() {
            let expr = t["expr"]
                .as_str()
                .unwrap()
                .replace("$run_id", &run_id)
                .replace("$__rate_interval", "1m");
            let got = query(&prom, &expr, at);
            assert!(
                none_here || !got.is_empty(),
                "{title}: {expr} found nothing"
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked} dashboard queries");
}

/// Runs `fleetbench cpu ARGS --json=<path> run` and asserts it exited 0; its stderr (where
/// the notes and warnings go).
fn cpu_run(args: &[&str], path: &Path) -> String {
    let json_opt = format!("--json={}", path.display());
    let out = fleetbench(&[&["cpu"], args, &[&json_opt, "run"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn the_pushgateway_gets_the_final_figures() {
    let dir = Scratch::new("pushgateway");
    let port = free_port();
    let pgw = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(program("prometheus-pushgateway"));
    cmd.arg(format!("--web.listen-address={pgw}"));
    let _pushgateway = start(cmd, port, "/-/ready");
    let out_json = dir.path("run.json");
    let stderr = cpu_run(
        &[
            "--local-agents=2",
            "--threads=2",
            "--time=2",
            "--cpu-max-prime=3000",
            &format!("--metrics-push=http://{pgw}"),
        ],
        &out_json,
    );
    let doc = json(&out_json);
    let run_id = doc["meta"]["run_id"].as_str().unwrap();
    assert!(
        stderr.contains(&format!(
            "note: pushed the run's metrics to http://{pgw}/metrics/job/fleetbench/run_id/{run_id}"
        )),
        "{stderr}"
    );
    let (_, text) = get(&pgw, "/metrics", "text/plain").unwrap();
    let events: f64 = text
        .lines()
        .filter(|l| {
            l.starts_with("fleetbench_events_total{") && l.contains(&format!("run_id=\"{run_id}\""))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    // The final figures: every event of the run.
    assert_eq!(events, doc["totals"]["events"].as_f64().unwrap(), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("fleetbench_run_finished{")
                && l.contains(&format!("run_id=\"{run_id}\""))
                && l.ends_with(" 1")),
        "{text}"
    );

    // A Pushgateway that is not there: a warning, and the run's result is still written.
    let gone = free_port();
    let out_json2 = dir.path("run2.json");
    let push = format!("--metrics-push=http://127.0.0.1:{gone}");
    let stderr = cpu_run(&["--threads=1", "--time=1", &push], &out_json2);
    assert!(
        stderr.contains("warning: cannot push the run's metrics: http://127.0.0.1:"),
        "{stderr}"
    );
    assert!(out_json2.exists());
}

#[test]
fn bad_metrics_options_get_one_line_and_exit_2() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().to_string();
    for (args, want) in [
        (
            vec!["--metrics-listen=9464"],
            "invalid value for --metrics-listen: '9464'",
        ),
        (
            vec!["--metrics-push=https://pgw:9091"],
            "https is not supported",
        ),
        (
            vec!["--metrics-push=pgw:9091"],
            "expected http://HOST[:PORT][/PATH]",
        ),
    ] {
        let mut a = vec!["cpu", "--time=1"];
        a.extend(args);
        a.push("run");
        let out = fleetbench(&a);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(want), "{a:?}: {stderr}");
    }
    // A port in use: refused before any agent starts.
    let listen = format!("--metrics-listen={busy}");
    let out = fleetbench(&["cpu", "--time=1", &listen, "run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on {busy} for --metrics-listen")),
        "{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The value of every sample line starting with `prefix` (and holding `also`), summed.
fn sum_of(text: &str, prefix: &str, also: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix) && l.contains(also))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[test]
fn tables_over_two_servers_show_each_target_live() {
    let (m, s) = (
        fleetbench_tests::mariadb::MariaDb::start(),
        fleetbench_tests::mariadb::MariaDb::start(),
    );
    let (a1, a2) = (AgentProc::start(), AgentProc::start());
    let t = m.master_slave_args(&s);
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["oltp_read_only".into()];
        v.extend(t.iter().cloned());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    fleetbench_tests::fleetbench_ok(&with(&["--threads=2", "prepare"]));
    let agents = format!("--agents={},{}", a1.addr, a2.addr);
    let (mut run, mut err, metrics) = with_metrics(&with(&[
        &agents,
        "--threads=4",
        "--time=6",
        "--report-interval=1",
        "--metrics-listen=127.0.0.1:0",
        "run",
    ]));
    // Three intervals in, while the run goes on: both servers' series, from every agent's
    // intervals (each agent runs tables on both servers).
    let mut text = String::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            text = get(&metrics, "/metrics", "text/plain").map_or_else(String::new, |r| r.1);
            sum_of(&text, "fleetbench_interval{", "") >= 3.0
        }),
        "no third interval: {text}"
    );
    assert!(text.contains("fleetbench_run_finished{run_id=") && text.contains("} 0\n"));
    let master = "target=\"master\"";
    let slave = "target=\"slave\"";
    let reads = |t: &str| sum_of(&text, "fleetbench_target_queries_total{", t);
    let (rm, rs) = (
        reads(&format!(
            "{master},target_addr=\"127.0.0.1:{}\",kind=\"read\"",
            m.port()
        )),
        reads(&format!(
            "{slave},target_addr=\"127.0.0.1:{}\",kind=\"read\"",
            s.port()
        )),
    );
    assert!(rm > 0.0 && rs > 0.0, "master {rm}, slave {rs}:\n{text}");
    // The targets' counters are the agents' counters, split: they add up exactly.
    let by_agents = sum_of(&text, "fleetbench_queries_total{", "kind=\"read\"");
    assert_eq!(rm + rs, by_agents, "{text}");
    assert!(
        sum_of(&text, "fleetbench_target_qps{", master) > 0.0,
        "{text}"
    );
    // Each server's own counters per transaction, live: both read rows for their share.
    for t in [master, slave] {
        let rows = sum_of(
            &text,
            "fleetbench_server_per_tx{",
            &format!("{t},figure=\"rows_read\""),
        );
        assert!(rows > 0.0, "{t}:\n{text}");
    }
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(0), "{rest}");
    fleetbench_tests::fleetbench_ok(&with(&["cleanup"]));
}

#[test]
fn a_tpcc_run_pushes_its_transactions_by_type() {
    let db = fleetbench_tests::mariadb::MariaDb::start();
    db.sql("CREATE DATABASE tpcc");
    let port = free_port();
    let pgw = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(program("prometheus-pushgateway"));
    cmd.arg(format!("--web.listen-address={pgw}"));
    let _pushgateway = start(cmd, port, "/-/ready");
    let dir = Scratch::new("pushgateway-tpcc");
    let out_json = dir.path("run.json");
    let mut base = vec!["tpcc".to_string(), "--warehouses=1".into()];
    base.extend(
        db.fleetbench_args()
            .into_iter()
            .filter(|a| !a.starts_with("--mysql-db=")),
    );
    base.push("--mysql-db=tpcc".into());
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v = base.clone();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    fleetbench_tests::fleetbench_ok(&with(&["prepare"]));
    let push = format!("--metrics-push=http://{pgw}");
    let json_opt = format!("--json={}", out_json.display());
    fleetbench_tests::fleetbench_ok(&with(&["--threads=2", "--time=3", &push, &json_opt, "run"]));
    let doc = json(&out_json);
    let run_id = doc["meta"]["run_id"].as_str().unwrap();
    let (_, text) = get(&pgw, "/metrics", "text/plain").unwrap();
    let types = &doc["totals"]["tpcc"]["transactions"];
    for t in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        let pushed = sum_of(
            &text,
            "fleetbench_tpcc_transactions_total{",
            &format!("type=\"{t}\""),
        );
        let want = types[t]["count"].as_f64().unwrap();
        assert!(want > 0.0, "{t}: {types}");
        assert_eq!(pushed, want, "{t} (run {run_id})");
    }
    fleetbench_tests::fleetbench_ok(&with(&["cleanup"]));
}
