//! The catalog of runs, end to end: every run recorded where the default says (under
//! XDG_DATA_HOME), five steady runs and a sixth at half the rate, whose regression is named
//! and fails the run with --fail-on-regression; `runs list`, `show`, `compare`, `trend`,
//! `tag`, `rm`, `import` and `export`; the same catalog on the tests' private PostgreSQL
//! and MariaDB; and the bad input a catalog meets.

use std::process::Output;

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::postgres::Postgres;
use fleetbench_tests::{Scratch, fleetbench_env};

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs the coordinator with `env`; asserts exit `code`; (stdout, stderr).
fn expect(args: &[&str], env: &[(&str, &str)], code: i32) -> (String, String) {
    let out = fleetbench_env(args, env);
    let (o, e) = text(&out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}\nstdout:\n{o}\nstderr:\n{e}"
    );
    (o, e)
}

/// The id a run's "catalog: recorded as ID" line names.
fn recorded_id(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("catalog: recorded as "))
        .unwrap_or_else(|| panic!("no catalog line in {stderr}"));
    line["catalog: recorded as ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// An open-loop cpu run at `rate` events/s for two seconds: its throughput is its rate.
fn cpu_run(rate: u32, extra: &[&str], env: &[(&str, &str)], code: i32) -> (String, String) {
    let rate = format!("--rate={rate}");
    let args = [
        &[
            "cpu",
            "--threads=2",
            "--time=2",
            "--cpu-max-prime=2000",
            &rate,
        ][..],
        extra,
        &["run"],
    ]
    .concat();
    expect(&args, env, code)
}

/// Five runs at 400 events/s and a sixth at 200 against the catalog `env` names: the sixth
/// is a regression, and `--fail-on-regression` turns it into exit 1. The sixth's id.
fn five_and_a_slow_one(env: &[(&str, &str)], json: &str) -> String {
    for _ in 0..5 {
        // Steady: the rate wobbles by the machine's noise at most (short runs on a shared
        // machine may pass the band by a little), never by the sixth's half.
        let (_, err) = cpu_run(400, &[], env, 0);
        for l in err
            .lines()
            .filter(|l| l.contains(" tps ") && l.contains(" % "))
        {
            let pct: f64 = l
                .split(" is ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(pct < 15.0, "{err}");
        }
    }
    let json_opt = format!("--json={json}");
    let (_, err) = cpu_run(200, &[&json_opt], env, 0);
    let sixth = recorded_id(&err);
    let line = err
        .lines()
        .find(|l| l.starts_with("regression: ") && l.contains(" tps "))
        .unwrap_or_else(|| panic!("no tps regression in {err}"));
    assert!(line.contains(&format!("run {sixth}")), "{line}");
    assert!(
        line.contains("% below the median of the 5 earlier runs"),
        "{line}"
    );
    let (_, err) = cpu_run(200, &["--fail-on-regression"], env, 1);
    assert!(err.contains("--fail-on-regression"), "{err}");
    sixth
}

#[test]
fn runs_are_remembered_and_a_slower_one_is_named() {
    let scratch = Scratch::new("catalog-sqlite");
    let xdg = scratch.path("xdg");
    let xdg = xdg.to_str().unwrap();
    let env = [("XDG_DATA_HOME", xdg)];
    let json = scratch.path("sixth.json");
    let sixth = five_and_a_slow_one(&env, json.to_str().unwrap());
    assert!(scratch.path("xdg/fleetbench/catalog.db").is_file());

    let (list, _) = expect(&["runs", "list"], &env, 0);
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 7, "{list}");
    assert!(rows[1].starts_with(&sixth), "{list}");
    let (list, _) = expect(&["runs", "list", "--test=cpu", "--since=1d"], &env, 0);
    assert_eq!(list.lines().count(), 8, "{list}");
    let (list, _) = expect(&["runs", "list", "--test=memory"], &env, 0);
    assert!(list.contains("(no runs)"), "{list}");

    // Shown as `report FILE` shows the same result.
    let (shown, _) = expect(&["runs", "show", &sixth[..8]], &env, 0);
    let (report, _) = expect(&["report", json.to_str().unwrap()], &env, 0);
    assert_eq!(shown, report);
    let (cmp, _) = expect(&["runs", "compare", "last~1", "last~2"], &env, 0);
    assert!(cmp.contains(&sixth) && cmp.contains("events/s"), "{cmp}");
    // As compare's, its comparison also as a file.
    let cmp_json = scratch.path("cmp.json");
    let cmp_path = cmp_json.to_str().unwrap();
    expect(
        &["runs", "compare", "last~1", "last~2", "--json", cmp_path],
        &env,
        0,
    );
    let doc = fleetbench_tests::json(&cmp_json);
    assert_eq!(
        (doc["format"].as_u64(), doc["baseline"].as_str()),
        (Some(1), Some(&sixth[..])),
        "{doc}"
    );

    // The trend marks where the rate fell.
    let (trend, _) = expect(&["runs", "trend", "last"], &env, 0);
    assert!(
        trend.starts_with("tps over 7 runs of: cpu threads=2"),
        "{trend}"
    );
    let change: Vec<&str> = trend.lines().filter(|l| l.ends_with("<- change")).collect();
    assert_eq!(change.len(), 1, "{trend}");
    assert!(change[0].starts_with(&sixth), "{trend}");
    let html = scratch.path("trend.html");
    expect(
        &["runs", "trend", "last", "--html", html.to_str().unwrap()],
        &env,
        0,
    );
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("<svg id=\"trend\"")
    );

    // Tags, export, re-import and removal.
    let (tagged, _) = expect(&["runs", "tag", &sixth, "pool=8G"], &env, 0);
    assert!(tagged.contains("pool=8G"), "{tagged}");
    let (one, _) = expect(&["runs", "list", "--tag=pool=8G"], &env, 0);
    assert_eq!(one.lines().count(), 2, "{one}");
    let (exported, _) = expect(&["runs", "export", &sixth], &env, 0);
    let file = scratch.write("exported.json", &exported);
    let (imported, _) = expect(&["runs", "import", file.to_str().unwrap()], &env, 0);
    assert!(imported.contains("1 run"), "{imported}");
    let (removed, _) = expect(&["runs", "rm", &sixth], &env, 0);
    assert_eq!(removed.trim(), format!("removed {sixth}"));
    let (list, _) = expect(&["runs", "list"], &env, 0);
    assert_eq!(list.lines().count(), 8, "{list}");

    // Bad input: one line each, non-zero.
    for (args, says) in [
        (&["runs", "show", "zz"][..], "'zz'"),
        (&["runs", "show", "ffffffff"], "no run ffffffff"),
        (&["runs", "show", "last~99"], "no run last~99"),
        (&["runs", "frobnicate"], "unknown command 'frobnicate'"),
        (
            &["runs", "import", "/nonexistent.json"],
            "/nonexistent.json",
        ),
        (&["runs", "trend", "--metric=nosuch"], "--metric 'nosuch'"),
    ] {
        let out = fleetbench_env(args, &env);
        let (_, err) = text(&out);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // --no-catalog records nothing; a newer catalog is refused in one line, and a run
    // whose catalog cannot be written still writes its files and succeeds.
    let (_, err) = cpu_run(400, &["--no-catalog"], &env, 0);
    assert!(!err.contains("catalog"), "{err}");
    let junk = scratch.write("junk.db", "this is not a database, just some text here");
    let junk_env = [("FLEETBENCH_CATALOG", junk.to_str().unwrap())];
    let kept = scratch.path("kept.json");
    let kept_opt = format!("--json={}", kept.display());
    let (_, err) = cpu_run(400, &[&kept_opt], &junk_env, 0);
    assert!(
        err.contains("warning: the run was not recorded in the catalog"),
        "{err}"
    );
    assert!(kept.is_file());
}

#[test]
fn a_sweep_is_one_record_with_its_steps_and_shows_as_its_file() {
    let scratch = Scratch::new("catalog-sweep");
    let db = scratch.path("c.db");
    let env = [("FLEETBENCH_CATALOG", db.to_str().unwrap())];
    let json = scratch.path("sweep.json");
    let json_opt = format!("--json={}", json.display());
    let (_, err) = expect(
        &[
            "cpu",
            "--threads=1,2",
            "--time=1",
            "--cpu-max-prime=2000",
            &json_opt,
            "run",
        ],
        &env,
        0,
    );
    assert!(err.contains("with its 2 steps"), "{err}");
    let (list, _) = expect(&["runs", "list"], &env, 0);
    assert_eq!(list.lines().count(), 4, "{list}");
    assert!(
        list.contains("sweep of 2 steps") && list.contains("2 threads"),
        "{list}"
    );
    let whole = recorded_id(&err);
    let (shown, _) = expect(&["runs", "show", &whole], &env, 0);
    let (report, _) = expect(&["report", json.to_str().unwrap()], &env, 0);
    assert_eq!(shown, report);
    // Imported from its file: the same three records again.
    let (imported, _) = expect(&["runs", "import", json.to_str().unwrap()], &env, 0);
    assert!(imported.contains("3 runs"), "{imported}");
    let out = fleetbench_env(&["runs", "trend", &whole], &env);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out).1);
    // Result files of earlier versions import and show as `report` shows them; a file that
    // is not a result stores nothing.
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for f in ["compare-base.json", "html-oltp-sweep.json"] {
        let path = fixtures.join(f);
        let path = path.to_str().unwrap();
        let (imported, _) = expect(&["runs", "import", path], &env, 0);
        let first = imported
            .split('(')
            .nth(1)
            .unwrap()
            .split([',', ')'])
            .next()
            .unwrap();
        let (shown, _) = expect(&["runs", "show", first], &env, 0);
        let (report, _) = expect(&["report", path], &env, 0);
        assert_eq!(shown, report, "{f}");
    }
    let before = expect(&["runs", "list"], &env, 0).0.lines().count();
    let bad = scratch.write("bad.json", "{ not json");
    let out = fleetbench_env(
        &[
            "runs",
            "import",
            json.to_str().unwrap(),
            bad.to_str().unwrap(),
        ],
        &env,
    );
    let (_, err) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.json"), "{err}");
    assert_eq!(expect(&["runs", "list"], &env, 0).0.lines().count(), before);
}

#[test]
fn a_shared_catalog_on_postgresql_and_on_mariadb_works_the_same() {
    let pg = Postgres::start();
    let maria = MariaDb::start();
    let scratch = Scratch::new("catalog-servers");
    let maria_url = format!("mysql://sbtest:sbtest-pw@127.0.0.1:{}/sbtest", maria.port());
    for (n, url) in [pg.url(), maria_url].iter().enumerate() {
        let env = [("FLEETBENCH_CATALOG", url.as_str())];
        let json = scratch.path(&format!("sixth-{n}.json"));
        let sixth = five_and_a_slow_one(&env, json.to_str().unwrap());
        let (list, _) = expect(&["runs", "list"], &env, 0);
        assert_eq!(list.lines().count(), 8, "{url}: {list}");
        let (shown, _) = expect(&["runs", "show", &sixth], &env, 0);
        let (report, _) = expect(&["report", json.to_str().unwrap()], &env, 0);
        assert_eq!(shown, report, "{url}");
        let (cmp, _) = expect(&["runs", "compare", "last", "last~1"], &env, 0);
        assert!(cmp.contains("events/s"), "{cmp}");
    }
    // A scenario file on MariaDB, recorded in the MariaDB catalog: one record for the file,
    // shown as `report` shows its result, and one for its step.
    let maria_url = format!("mysql://sbtest:sbtest-pw@127.0.0.1:{}/sbtest", maria.port());
    let env = [("FLEETBENCH_CATALOG", maria_url.as_str())];
    let toml = format!(
        "test = \"oltp_point_select\"\nthreads = [2]\ntime = 1\n[options]\ntables = 1\ntable-size = 200\nlocal-agents = 1\n[targets]\ndb = \"{maria_url}\"\n[[scenario]]\nname = \"direct\"\ntargets = [\"db\"]\n"
    );
    let file = scratch.write("s.toml", &toml);
    let json = scratch.path("s.json");
    let json_opt = format!("--json={}", json.display());
    let (_, err) = expect(
        &["scenario", "run", file.to_str().unwrap(), &json_opt],
        &env,
        0,
    );
    assert!(err.contains("with its step "), "{err}");
    let (shown, _) = expect(&["runs", "show", &recorded_id(&err)], &env, 0);
    let (report, _) = expect(&["report", json.to_str().unwrap()], &env, 0);
    assert_eq!(shown, report);
    // And its result file imported again: the file and its step.
    let (imported, _) = expect(&["runs", "import", json.to_str().unwrap()], &env, 0);
    assert!(imported.contains(": 2 runs ("), "{imported}");
    let first = imported
        .split('(')
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert_eq!(expect(&["runs", "show", first], &env, 0).0, report);
    // A server that is not there: one line, and the run itself goes on.
    let env = [(
        "FLEETBENCH_CATALOG",
        "postgres://nobody:pw@127.0.0.1:1/none",
    )];
    let out = fleetbench_env(&["runs", "list"], &env);
    let (_, err) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("nobody:***@127.0.0.1:1") && !err.contains(":pw@"),
        "{err}"
    );
    let (_, err) = cpu_run(400, &[], &env, 0);
    assert!(err.contains("not recorded in the catalog"), "{err}");
}
