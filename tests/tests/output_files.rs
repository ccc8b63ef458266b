//! Result files and the files fleetbench reads (issue 42): `--json` at a symbolic link, a
//! FIFO and a character device is written through and never replaced; `--json -` is
//! standard output; a path in a missing directory is refused before the run; a full
//! standard output never panics and never loses the JSON file; `/dev/zero` as a token,
//! scenario or certificate file is refused quickly with one line. The processes that read
//! `/dev/zero` have their address space capped, so a regression fails instead of eating the
//! machine's memory. docs/output-files.md describes the behaviour.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{AgentProc, Scratch, bin, expect_usage_error, fleetbench, json};

/// The address-space cap of the processes given `/dev/zero` to read.
const CAP: u64 = 2 << 30;

fn c_path(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// `fleetbench cpu --time=1 ARGS run` with `--json=PATH`.
fn cpu_json(path: &Path, extra: &[&str]) -> Output {
    let json_opt = format!("--json={}", path.display());
    let mut args = vec!["cpu", "--time=1", json_opt.as_str()];
    args.extend_from_slice(extra);
    args.push("run");
    fleetbench(&args)
}

fn expect_ok(out: &Output, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn json_at_a_symlink_writes_the_target_and_keeps_the_link() {
    let dir = Scratch::new("out-symlink");
    let target = dir.write("target.json", "an older and much longer file than nothing");
    let link = dir.path("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    let html_link = dir.path("link.html");
    std::os::unix::fs::symlink("target.html", &html_link).unwrap();
    let html_opt = format!("--html={}", html_link.display());
    let out = cpu_json(&link, &[&html_opt]);
    expect_ok(&out, "--json at a symlink");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("target.json"));
    assert_eq!(json(&target)["test"], "cpu");
    // A dangling link: its target is created, the link kept.
    assert!(
        std::fs::symlink_metadata(&html_link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let page = std::fs::read_to_string(dir.path("target.html")).unwrap();
    assert!(page.contains("<html"), "{}", &page[..page.len().min(200)]);
}

#[test]
fn json_at_a_fifo_is_written_into_it() {
    let dir = Scratch::new("out-fifo");
    let fifo = dir.path("result.fifo");
    // SAFETY: a valid C string, and mkfifo has no other precondition.
    assert_eq!(unsafe { libc::mkfifo(c_path(&fifo).as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    let out = cpu_json(&fifo, &[]);
    expect_ok(&out, "--json at a FIFO");
    let text = reader.join().unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).expect("the FIFO carried JSON");
    assert_eq!(doc["test"], "cpu");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
}

#[test]
fn json_at_a_character_device_is_written_through() {
    let dir = Scratch::new("out-device");
    // A private copy of /dev/null (the tests run as root); the real one is never used.
    let null = dir.path("null");
    // SAFETY: a valid C string; mknod has no other precondition.
    let made = unsafe {
        libc::mknod(
            c_path(&null).as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(1, 3),
        )
    };
    assert_eq!(made, 0, "mknod: {}", std::io::Error::last_os_error());
    let csv_opt = format!("--csv={}", null.display());
    let hlog_opt = format!("--hlog={}", null.display());
    for extra in [&[][..], &[csv_opt.as_str()], &[hlog_opt.as_str()]] {
        let out = cpu_json(&null, extra);
        expect_ok(&out, &format!("--json at a device, {extra:?}"));
        let meta = std::fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "the device was replaced");
    }
    // Nothing else was left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 1);
}

#[test]
fn json_dash_is_standard_output_and_the_text_goes_to_stderr() {
    let dir = Scratch::new("out-dash");
    let out = Command::new(bin("fleetbench"))
        .args(["cpu", "--time=1", "--json", "-", "run"])
        .current_dir(&dir.0)
        .env_remove("FLEETBENCH_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    expect_ok(&out, "--json -");
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout holds the JSON document alone");
    assert_eq!(doc["test"], "cpu");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("General statistics"), "{err}");
    assert!(!dir.path("-").exists(), "a file named '-' was written");
    // Two outputs on standard output are refused.
    expect_usage_error(
        &fleetbench(&["cpu", "--time=1", "--json=-", "--csv=-", "run"]),
        "--json - --csv -",
        &["standard output"],
    );
}

#[test]
fn an_output_in_a_missing_directory_is_refused_before_the_run() {
    let dir = Scratch::new("out-missing");
    let missing = dir.path("no/such/dir/r.out");
    let missing = missing.to_str().unwrap();
    for flag in ["--json", "--csv", "--html", "--hlog"] {
        let t0 = Instant::now();
        let opt = format!("{flag}={missing}");
        let out = fleetbench(&["cpu", "--time=30", &opt, "run"]);
        let line = expect_usage_error(&out, flag, &[flag, missing, "does not exist"]);
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{flag}: refused only after {:?}: {line}",
            t0.elapsed()
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("Threads started"),
            "{flag}: the run started"
        );
    }
    // A directory is no file to write.
    let d = dir.0.to_str().unwrap();
    expect_usage_error(
        &fleetbench(&["cpu", "--time=30", &format!("--json={d}"), "run"]),
        "--json at a directory",
        &["is a directory"],
    );
}

#[test]
fn a_full_standard_output_fails_without_panic_and_keeps_the_json() {
    let dir = Scratch::new("out-full");
    let path = dir.path("r.json");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(bin("fleetbench"))
        // The catalog's line on stderr is not this test's business.
        .args(["cpu", "--time=1", "--report-interval=1", "--no-catalog"])
        .arg(format!("--json={}", path.display()))
        .arg("run")
        .env_remove("FLEETBENCH_TOKEN")
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "one line expected:\n{err}");
    assert!(err.contains("standard output"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let doc = json(&path);
    assert_eq!(doc["test"], "cpu");
    assert!(doc["totals"].is_object(), "{doc}");
}

/// Checks a refusal of `/dev/zero` by the coordinator: exit 2, one line naming the file and
/// the cap, within a few seconds.
fn zero_refused(args: &[&str], needles: &[&str]) {
    zero_refused_env(args, &[], needles)
}

/// [`zero_refused`] with extra environment variables.
fn zero_refused_env(args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let t0 = Instant::now();
    let out = fleetbench_tests::fleetbench_capped_env(args, CAP, env);
    let mut all = vec!["/dev/zero", "MiB"];
    all.extend_from_slice(needles);
    let line = expect_usage_error(&out, &format!("{args:?}"), &all);
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "{args:?}: refused only after {:?}: {line}",
        t0.elapsed()
    );
}

#[test]
fn dev_zero_as_token_or_scenario_file_is_refused_with_one_line() {
    zero_refused(
        &["cpu", "--time=1", "--token-file=/dev/zero", "run"],
        &["token file"],
    );
    zero_refused(&["scenario", "run", "/dev/zero"], &["scenario file"]);
    // The agent's own token file: it refuses to start, with one line.
    let t0 = Instant::now();
    let mut cmd = Command::new(bin("fleetbench-agent"));
    fleetbench_tests::cap_memory(&mut cmd, CAP);
    let out = cmd
        .args(["--listen", "127.0.0.1:0", "--token-file", "/dev/zero"])
        .env("FLEETBENCH_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(out.status.code().is_some(), "killed by a signal: {err}");
    assert!(err.contains("/dev/zero") && err.contains("1 MiB"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn dev_zero_as_a_certificate_is_refused_embedded_and_through_an_agent() {
    let dir = Scratch::new("out-certs");
    fleetbench_tests::make_certs(&dir.0);
    let file = |name: &str| dir.path(name).display().to_string();
    let agent = AgentProc::start_capped(CAP, &[]);
    let agents_opt = format!("--agents={}", agent.addr);
    // Port 1: nothing listens there, but the files are read before any connection.
    let base = [
        "oltp_point_select",
        "--time=1",
        "--mysql-host=127.0.0.1",
        "--mysql-port=1",
    ];
    let cases: [Vec<String>; 3] = [
        vec![
            "--mysql-ssl-mode=verify_ca".into(),
            "--mysql-ssl-ca=/dev/zero".into(),
        ],
        vec![
            "--mysql-ssl-mode=required".into(),
            "--mysql-ssl-cert=/dev/zero".into(),
            format!("--mysql-ssl-key={}", file("client.key")),
        ],
        vec![
            "--mysql-ssl-mode=required".into(),
            format!("--mysql-ssl-cert={}", file("client.pem")),
            "--mysql-ssl-key=/dev/zero".into(),
        ],
    ];
    for case in &cases {
        let mut embedded: Vec<&str> = base.to_vec();
        embedded.extend(case.iter().map(String::as_str));
        let mut remote = embedded.clone();
        remote.push(&agents_opt);
        embedded.push("run");
        remote.push("run");
        zero_refused(&embedded, &[]);
        zero_refused(&remote, &[]);
    }
    // The agent is alive and takes the next run.
    let mut agent = agent;
    assert!(agent.child.try_wait().unwrap().is_none(), "the agent died");
    let out = fleetbench(&["cpu", "--time=1", &agents_opt, "run"]);
    expect_ok(&out, "a run after the refusals");
}

#[test]
fn csv_collects_runs_under_one_header_and_refuses_another_layout() {
    let dir = Scratch::new("out-csv");
    let csv = dir.path("runs.csv");
    let csv_opt = format!("--csv={}", csv.display());
    let run = |extra: &[&str]| {
        let mut args = vec!["cpu", "--time=1", "--cpu-max-prime=2000", csv_opt.as_str()];
        args.extend_from_slice(extra);
        args.push("run");
        fleetbench(&args)
    };
    expect_ok(&run(&["--tag=box=a"]), "first run");
    expect_ok(&run(&["--tag=box=b"]), "second run");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with(
            "test,run_id,started_at,scenario,step,repeat,tags,threads,rate,rate_reached,time_s,events,events_per_sec,lat_min_ms,lat_avg_ms,lat_p50_ms,"
        ),
        "{text}"
    );
    assert!(
        !lines[0].contains("tps") && !lines[0].contains("qps"),
        "{text}"
    );
    // Each row: the test, its own run id and start, no step (a single run), its tags.
    let rows: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][0], "cpu");
    assert_ne!(rows[0][1], rows[1][1], "two run ids: {text}");
    assert!(rows[0][2].ends_with('Z'), "{text}");
    assert_eq!((rows[0][4], rows[0][6]), ("", "box=a"));
    assert_eq!(rows[1][6], "box=b");

    // Another percentile is another column: refused after the run, the file untouched.
    let out = run(&["--percentile=97"]);
    expect_usage_error(
        &out,
        "--csv with other columns",
        &[
            "--csv ",
            "its columns differ from this result's (only in the file: none; only in this result: lat_p97_ms)",
            "nothing was appended",
        ],
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);

    // A file that is not fleetbench's CSV is refused before the run starts.
    let other = dir.write("other.csv", "a,b\n1,2\n");
    let started = Instant::now();
    let out = fleetbench(&[
        "cpu",
        "--time=5",
        &format!("--csv={}", other.display()),
        "run",
    ]);
    expect_usage_error(
        &out,
        "--csv at another file",
        &["its first line is not a fleetbench CSV header"],
    );
    assert!(started.elapsed() < Duration::from_secs(4), "the run ran");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "a,b\n1,2\n");
}

/// Two outputs on one file (issue 57): `--json F --hlog F`, or `--html` a link to the JSON
/// file, would leave one result where both were asked for. Refused before the run with one
/// line that names both options, and nothing is written.
#[test]
fn two_outputs_naming_one_file_are_refused_before_the_run() {
    let dir = Scratch::new("out-same-file");
    let same = dir.path("result.json");
    let hlog = format!("--hlog={}", same.display());
    let out = cpu_json(&same, &[&hlog]);
    expect_usage_error(
        &out,
        "--json and --hlog on one file",
        &["--json and --hlog", "result.json"],
    );
    assert!(!same.exists(), "a file was written");
    // A link to the JSON file is the same file.
    let link = dir.path("report.html");
    std::os::unix::fs::symlink("result.json", &link).unwrap();
    let html = format!("--html={}", link.display());
    let out = cpu_json(&same, &[&html]);
    expect_usage_error(
        &out,
        "--html a link to the JSON",
        &["--json and --html", "report.html"],
    );
    assert!(!same.exists(), "a file was written");
    // Two outputs to /dev/null discard both, as asked.
    let out = fleetbench(&[
        "cpu",
        "--time=1",
        "--json=/dev/null",
        "--csv=/dev/null",
        "run",
    ]);
    expect_ok(&out, "two outputs to /dev/null");
}

/// Every other option or variable that names a file the coordinator reads, pointed at a
/// device (issue 57): the agents' TLS files, a result to `report` or `compare`, pgbench's
/// password file (PGPASSFILE, and ~/.pgpass as a directory), and the PostgreSQL
/// certificates. Each is refused with one line naming the file, under an address-space cap
/// that a whole read of /dev/zero would break. (The token, scenario and MySQL certificate
/// files have tests of their own above; a script must be a regular file to be one.)
#[test]
fn every_other_file_option_refuses_a_device_with_one_line() {
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let tls = |file: &str| format!("--{file}=/dev/zero");
    let (ca, cert, key) = (tls("tls-ca"), tls("tls-cert"), tls("tls-key"));
    let others = [
        format!("--tls-ca={readme}"),
        format!("--tls-cert={readme}"),
        format!("--tls-key={readme}"),
    ];
    for (given, rest) in [
        (&ca, [&others[1], &others[2]]),
        (&cert, [&others[0], &others[2]]),
        (&key, [&others[0], &others[1]]),
    ] {
        zero_refused(
            &[
                "cpu",
                "--time=1",
                "--agents=127.0.0.1:1",
                given,
                rest[0],
                rest[1],
                "run",
            ],
            &["TLS file"],
        );
    }
    zero_refused(&["report", "/dev/zero"], &[]);
    zero_refused(&["compare", "/dev/zero", "/dev/zero"], &[]);
    let pgbench = [
        "pgbench",
        "-h",
        "127.0.0.1",
        "-p",
        "1",
        "-U",
        "u",
        "-T",
        "1",
    ];
    zero_refused_env(&pgbench, &[("PGPASSFILE", "/dev/zero")], &["password file"]);
    let home = Scratch::new("out-pgpass-home");
    std::fs::create_dir(home.path(".pgpass")).unwrap();
    let home_dir = home.0.display().to_string();
    let out = fleetbench_tests::fleetbench_capped_env(
        &pgbench,
        CAP,
        &[("HOME", home_dir.as_str()), ("PGPASSFILE", "")],
    );
    expect_usage_error(&out, "~/.pgpass a directory", &["password file", ".pgpass"]);
    let certs = Scratch::new("out-pg-certs");
    fleetbench_tests::make_certs(&certs.0);
    let file = |name: &str| certs.path(name).display().to_string();
    let pg_cases = [
        [
            "--pgsql-sslmode=verify-ca".to_string(),
            "--pgsql-sslrootcert=/dev/zero".into(),
        ],
        [
            "--pgsql-sslcert=/dev/zero".into(),
            format!("--pgsql-sslkey={}", file("client.key")),
        ],
        [
            format!("--pgsql-sslcert={}", file("client.pem")),
            "--pgsql-sslkey=/dev/zero".into(),
        ],
    ];
    for [a, b] in &pg_cases {
        zero_refused(
            &[
                "oltp_point_select",
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                "--pgsql-port=1",
                a,
                b,
                "--time=1",
                "run",
            ],
            &[],
        );
    }
}
