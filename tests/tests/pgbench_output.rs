//! `fleetbench pgbench`'s output as pgbench's, end to end (a private PostgreSQL, real agent
//! processes, PostgreSQL's own `pgbench` beside it): stdout and stderr read together as a
//! terminal shows them follow pgbench's order line for line (the banner first, then the
//! scale warning and the vacuum, the progress lines, the report); every `-P` period has its
//! line, the last one included (T/P lines); the per-agent block counts clients; the client
//! hosts block and its saturation warning are there; `report FILE` of the result (a
//! built-in script and a script file) prints pgbench's report as the run printed it;
//! `--html` writes a page with pgbench's figures, checked in headless Chromium.
//!
//! They need PostgreSQL and Chromium (scripts/test.sh installs both) and fail, rather than
//! skip, without them.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{AgentProc, Postgres, Scratch, bin, fleetbench_env};

/// The PG variables of a `fleetbench pgbench` run: the password, nothing else inherited.
const PG_ENV: [(&str, &str); 5] = [
    ("PGPASSWORD", "sbpass"),
    ("PGHOST", ""),
    ("PGPORT", ""),
    ("PGUSER", ""),
    ("PGDATABASE", ""),
];

/// `ARGS... -h 127.0.0.1 -p PORT -U sbtest sbtest`: a pgbench command line against `pg`.
fn line(pg: &Postgres, args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let port = pg.port().to_string();
    v.extend(
        [
            "-h",
            "127.0.0.1",
            "-p",
            port.as_str(),
            "-U",
            "sbtest",
            "sbtest",
        ]
        .map(String::from),
    );
    v
}

/// Runs `cmd` to its end with stdout and stderr on one pipe, as a terminal shows them:
/// (exit code, the lines in the order they were written). At most 120 s.
fn interleaved(mut cmd: Command) -> (Option<i32>, Vec<String>) {
    let (mut reader, writer) = std::io::pipe().expect("a pipe");
    cmd.stdout(writer.try_clone().expect("the pipe again"))
        .stderr(writer)
        .stdin(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    // The command holds the pipe's writing end: without it the reader sees the end.
    drop(cmd);
    let read = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = reader.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = read.join().expect("the reader");
    (status.code(), text.lines().map(String::from).collect())
}

/// `fleetbench pgbench ARGS...` against `pg`, its output interleaved.
fn fleetbench_interleaved(pg: &Postgres, args: &[&str]) -> Vec<String> {
    let mut cmd = Command::new(bin("fleetbench"));
    cmd.arg("pgbench")
        .args(line(pg, args))
        .env_remove("FLEETBENCH_TOKEN")
        .env_remove("FLEETBENCH_CATALOG")
        .envs(PG_ENV);
    let (code, lines) = interleaved(cmd);
    assert_eq!(
        code,
        Some(0),
        "fleetbench pgbench {args:?}:\n{}",
        lines.join("\n")
    );
    lines
}

/// `fleetbench pgbench ARGS...` against `pg`: (stdout, stderr), exit code 0.
fn fleetbench_ok(pg: &Postgres, args: &[&str]) -> (String, String) {
    let mut all = vec!["pgbench".to_string()];
    all.extend(line(pg, args));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = fleetbench_env(&refs, &PG_ENV);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "fleetbench pgbench {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

/// What kind of line `l` is, for setting two outputs' orders side by side: the banner, a
/// progress line, or the report's label ("number of clients", "tps", a warning's words).
fn kind(l: &str) -> String {
    if l.starts_with("pgbench (") {
        "banner".into()
    } else if l.starts_with("progress: ") {
        "progress".into()
    } else if let Some((k, _)) = l.split_once(" = ") {
        k.into()
    } else if let Some((k, _)) = l.split_once(" (") {
        // "pgbench: warning: scale option ignored, using count from ... table (1)"
        k.into()
    } else if let Some((k, _)) = l.split_once(": ") {
        k.into()
    } else {
        l.into()
    }
}

/// The kinds of `lines` up to pgbench's last report line ("tps = ..."), each run of
/// progress lines as one.
fn order(lines: &[String]) -> Vec<String> {
    let end = lines
        .iter()
        .position(|l| l.starts_with("tps = "))
        .unwrap_or_else(|| panic!("no tps line in\n{}", lines.join("\n")));
    let mut kinds: Vec<String> = Vec::new();
    for l in &lines[..=end] {
        let k = kind(l);
        if !(k == "progress" && kinds.last().is_some_and(|p| p == "progress")) {
            kinds.push(k);
        }
    }
    kinds
}

/// The lines that are the same whatever the run measured: the warning, the vacuum and the
/// run's settings.
fn settings(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| {
            l.starts_with("pgbench: warning:")
                || l.starts_with("starting vacuum")
                || [
                    "transaction type:",
                    "scaling factor:",
                    "query mode:",
                    "number of clients:",
                    "number of threads:",
                    "maximum number of tries:",
                    "duration:",
                ]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

fn progress_lines(lines: &[String]) -> usize {
    lines.iter().filter(|l| l.starts_with("progress: ")).count()
}

#[test]
fn the_output_follows_pgbenchs_order_with_every_progress_line() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    fleetbench_ok(&pg, &["-i", "-s", "1"]);

    // The same run of each: -s 2 against tables of scale 1 adds pgbench's warning.
    let args = ["-c", "2", "-j", "2", "-T", "3", "-P", "1", "-s", "2"];
    let mut real = pg.pgbench_command();
    real.args(line(&pg, &args)).env("PGPASSWORD", "sbpass");
    let (code, theirs) = interleaved(real);
    assert_eq!(code, Some(0), "pgbench:\n{}", theirs.join("\n"));
    let mut ours_args = vec![agents.as_str()];
    ours_args.extend(args);
    let ours = fleetbench_interleaved(&pg, &ours_args);
    let both = format!(
        "pgbench:\n{}\nfleetbench:\n{}",
        theirs.join("\n"),
        ours.join("\n")
    );
    // The banner first, then line for line in pgbench's order.
    assert!(ours[0].starts_with("pgbench (fleetbench "), "{both}");
    assert!(theirs[0].starts_with("pgbench ("), "{both}");
    assert_eq!(order(&ours), order(&theirs), "{both}");
    assert_eq!(settings(&ours), settings(&theirs), "{both}");
    assert!(
        ours.contains(&"starting vacuum...end.".to_string()),
        "{both}"
    );
    // Every second of the three has its line, the last one too.
    assert_eq!(progress_lines(&ours), 3, "{both}");
    let last = ours.iter().rfind(|l| l.starts_with("progress: ")).unwrap();
    assert!(last.starts_with("progress: 3.0 s, "), "{both}");

    // No vacuum: the banner is the very first line; -T 4 -P 2 has two periods.
    let ours = fleetbench_interleaved(&pg, &[&agents, "-n", "-c", "2", "-T", "4", "-P", "2"]);
    assert!(ours[0].starts_with("pgbench (fleetbench "), "{ours:?}");
    assert_eq!(progress_lines(&ours), 2, "{ours:?}");
    assert!(
        ours.iter().any(|l| l.starts_with("progress: 4.0 s, ")),
        "{ours:?}"
    );
}

/// The lines of `text` from the first through the one starting with `last`.
fn through<'a>(text: &'a str, last: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with(last))
        .unwrap_or_else(|| panic!("no line {last:?} in\n{text}"));
    lines[..=end].to_vec()
}

/// The figure after `label` on its line of pgbench's report ("tps = 459.1 (...)": 459.1).
fn figure(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {label:?} in\n{text}"))
        .to_string()
}

/// The row of the page's table `id` whose header cell is `th`: its value cell's text.
fn cell<'a>(dom: &'a str, id: &str, th: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &dom[at..at + dom[at..].find("</table>").unwrap()];
    let row = format!("<tr><th>{th}</th><td>");
    let from = table
        .find(&row)
        .unwrap_or_else(|| panic!("no row {th} in {table}"))
        + row.len();
    &table[from..from + table[from..].find("</td>").unwrap()]
}

/// From the client hosts block to the end.
fn hosts_part(text: &str) -> Option<&str> {
    text.find("\nClient hosts (").map(|i| &text[i..])
}

/// The number of data rows of the page's table `id`.
fn rows(dom: &str, id: &str) -> usize {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &dom[at..at + dom[at..].find("</table>").unwrap()];
    table.matches("<tr>").count() - 1
}

#[test]
fn report_file_html_clients_and_client_hosts() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let agents = format!("--agents={agents}");
    fleetbench_ok(&pg, &["-i", "-s", "1"]);
    let tmp = Scratch::new("pgbench-output");
    let (json, html) = (tmp.path("run.json"), tmp.path("run.html"));
    // A script file beside a built-in script: a statement over two lines, \gset.
    let file = tmp.write(
        "balance.sql",
        "\\set aid random(1, 100000 * :scale)\nSELECT abalance\n  FROM pgbench_accounts WHERE aid = :aid \\gset\nUPDATE pgbench_accounts SET abalance = :abalance WHERE aid = :aid;\n",
    );
    let file_opt = format!("--file={}@1", file.display());
    let (json_opt, html_opt) = (
        format!("--json={}", json.display()),
        format!("--html={}", html.display()),
    );
    let (out, _) = fleetbench_ok(
        &pg,
        &[
            &agents,
            "-c",
            "4",
            "-j",
            "2",
            "-T",
            "2",
            "-P",
            "1",
            "-r",
            "-b",
            "select-only@2",
            &file_opt,
            "--max-tries=2",
            &json_opt,
            &html_opt,
        ],
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON result"))
            .expect("JSON");
    let p = &doc["totals"]["pgbench"];
    assert_eq!(p["threads"], 2, "{p}");
    assert_eq!(
        format!("{:.3}", p["initial_connection_time_ms"].as_f64().unwrap()),
        figure(&out, "initial connection time = "),
        "{p}\n{out}"
    );

    // Standard output starts with the banner and counts clients per agent.
    assert!(out.starts_with("pgbench (fleetbench "), "{out}");
    let head = out
        .lines()
        .skip_while(|l| *l != "Per agent:")
        .nth(1)
        .unwrap_or_else(|| panic!("no per-agent block in\n{out}"));
    assert!(
        head.split_whitespace().any(|w| w == "clients") && !head.contains("threads"),
        "{head}"
    );
    // The client hosts block, a row per agent, and its warning exactly when a host was
    // saturated (as the JSON says).
    let hosts: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Client hosts ("))
        .skip(2)
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert_eq!(hosts.len(), 2, "{out}");
    assert!(out.contains("\nClient CPU: "), "{out}");
    let saturated = doc["agents"].as_array().unwrap().iter().any(|a| {
        !a["host_load"]["saturated_intervals"]
            .as_array()
            .unwrap()
            .is_empty()
    });
    assert_eq!(
        out.contains("these figures may measure the client"),
        saturated,
        "{out}"
    );

    // `report FILE`: pgbench's report as the run printed it, banner to percentiles, then
    // the same blocks.
    let j = json.to_string_lossy().into_owned();
    let report = fleetbench_tests::fleetbench_ok(&["report", j.as_str()]);
    assert_eq!(
        through(&report, "latency percentiles (ms):"),
        through(&out, "latency percentiles (ms):"),
        "report FILE:\n{report}\nrun:\n{out}"
    );
    assert!(
        report.contains(&format!("SQL script 2: {}", file.display())),
        "{report}"
    );
    assert!(
        report.contains(" - statement latencies in milliseconds, failures and retries:"),
        "{report}"
    );
    let rhead = report
        .lines()
        .skip_while(|l| *l != "Per agent:")
        .nth(1)
        .unwrap_or_else(|| panic!("no per-agent block in\n{report}"));
    assert!(rhead.split_whitespace().any(|w| w == "clients"), "{rhead}");
    assert_eq!(
        report.contains("these figures may measure the client"),
        saturated,
        "{report}"
    );
    assert_eq!(
        hosts_part(&report),
        hosts_part(&out),
        "report FILE:\n{report}\nrun:\n{out}"
    );

    // The page in a real browser: its script ran clean and it has pgbench's figures, the
    // text's, and counts clients.
    let dom = fleetbench_tests::browser::dump_dom(&tmp.0, &html);
    assert!(dom.contains("data-ok=\"true\""), "the page's script: {dom}");
    assert!(
        dom.contains("<title>fleetbench pgbench run, 4 clients</title>"),
        "{dom}"
    );
    assert_eq!(cell(&dom, "pgbench-figures", "tps"), figure(&out, "tps = "));
    assert_eq!(
        cell(&dom, "pgbench-figures", "latency average"),
        format!("{} ms", figure(&out, "latency average = "))
    );
    assert_eq!(
        cell(&dom, "pgbench-figures", "latency stddev"),
        format!("{} ms", figure(&out, "latency stddev = "))
    );
    assert_eq!(
        cell(
            &dom,
            "pgbench-figures",
            "number of transactions actually processed"
        ),
        figure(&out, "number of transactions actually processed: ")
    );
    for (label, text) in [
        (
            "number of failed transactions",
            "number of failed transactions: ",
        ),
        (
            "number of transactions retried",
            "number of transactions retried: ",
        ),
    ] {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(text))
            .unwrap_or_else(|| panic!("no {text:?} in\n{out}"));
        assert_eq!(cell(&dom, "pgbench-figures", label), line);
    }
    assert_eq!(cell(&dom, "pgbench-figures", "number of threads"), "2");
    assert_eq!(rows(&dom, "pgbench-scripts"), 2);
    assert_eq!(rows(&dom, "pgbench-commands-1"), 2);
    assert_eq!(rows(&dom, "pgbench-commands-2"), 3);
    assert!(dom.contains("<code>SELECT abalance \\gset</code>"), "{dom}");
    // The same page again from the JSON.
    let again = tmp.path("again.html");
    let a = again.to_string_lossy().into_owned();
    fleetbench_tests::fleetbench_ok(&["report", j.as_str(), "--html", a.as_str()]);
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&html).unwrap()
    );
}

#[test]
fn html_is_a_run_option_checked_before_anything_runs() {
    for (args, needle) in [
        (
            &["-i", "--html=x.html"][..],
            "cannot be used in initialization (-i) mode (--html)",
        ),
        (
            &["-t", "1", "--html=/nonexistent-fleetbench-dir/x.html"][..],
            "--html /nonexistent-fleetbench-dir/x.html: the directory /nonexistent-fleetbench-dir does not exist",
        ),
    ] {
        let mut all = vec!["pgbench"];
        all.extend_from_slice(args);
        // No server: the refusal comes before any connection.
        let out = fleetbench_env(
            &all,
            &[("PGHOST", "127.0.0.1"), ("PGPORT", "1"), ("PGUSER", "u")],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
