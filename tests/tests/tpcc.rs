//! TPC-C end to end: a private MariaDB, two real agent processes, tpcc-mysql's command
//! line; the schema against the reference, exact row counts, the mix, rollbacks and TpmC
//! of a run, the consistency check passing and then failing on a changed row, and bad
//! input refused with one line.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{AgentProc, Scratch, fleetbench, fleetbench_ok, json};

use fleetbench_tests::tpcc::{self, SCHEMA};

/// The database options of tpcc-mysql's command line for `db`, database tpcc.
fn letters(db: &MariaDb) -> Vec<String> {
    vec![
        "-h127.0.0.1".into(),
        format!("-P{}", db.port()),
        "-dtpcc".into(),
        "-usbtest".into(),
        "-p".into(),
        "sbtest-pw".into(),
    ]
}

fn cmd(parts: &[&str], db: &MariaDb, agents: &str) -> Vec<String> {
    let mut v = vec!["tpcc".to_string()];
    v.extend(letters(db));
    v.extend(parts.iter().map(|s| s.to_string()));
    v.push(format!("--agents={agents}"));
    v
}

fn count(db: &MariaDb, sql: &str) -> u64 {
    db.sql(sql)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{sql}"))
}

#[test]
fn prepare_run_check_and_cleanup_over_two_agents() {
    let db = MariaDb::start();
    db.sql("CREATE DATABASE tpcc");
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let agents = format!("{},{}", a.addr, b.addr);
    let scratch = Scratch::new("tpcc");

    let out = fleetbench_ok(&cmd(&["-w2", "-c4", "prepare"], &db, &agents));
    assert!(out.contains("created the 9 TPC-C tables"), "{out}");
    assert!(out.contains("warehouses 1..1 and the items"), "{out}");
    assert!(out.contains("warehouses 2..2 on target"), "{out}");

    // The schema: columns, types and keys as the reference has them.
    for (table, columns, key) in SCHEMA {
        let got = db.sql(&format!(
            "SELECT GROUP_CONCAT(CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE) ORDER BY ORDINAL_POSITION SEPARATOR ', ') \
             FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'tpcc' AND TABLE_NAME = '{table}'"
        ));
        // MariaDB shows integer display widths on some versions (smallint(6)).
        let got = strip_widths(got.trim());
        assert_eq!(got, columns, "columns of {table}");
        let pk = db.sql(&format!(
            "SELECT IFNULL(GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX), '') FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = 'tpcc' AND TABLE_NAME = '{table}' AND INDEX_NAME = 'PRIMARY'"
        ));
        assert_eq!(pk.trim(), key, "primary key of {table}");
        let engine = db.sql(&format!(
            "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tpcc' AND TABLE_NAME = '{table}'"
        ));
        assert_eq!(engine.trim(), "InnoDB", "{table}");
    }
    for (table, index, cols) in [
        ("customer", "idx_customer", "c_w_id,c_d_id,c_last,c_first"),
        ("orders", "idx_orders", "o_w_id,o_d_id,o_c_id,o_id"),
        ("stock", "fkey_stock_2", "s_i_id"),
        ("order_line", "fkey_order_line_2", "ol_supply_w_id,ol_i_id"),
    ] {
        let got = db.sql(&format!(
            "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = 'tpcc' AND TABLE_NAME = '{table}' AND INDEX_NAME = '{index}'"
        ));
        assert_eq!(got.trim(), cols, "{table}.{index}");
    }
    let fks = count(
        &db,
        "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'tpcc'",
    );
    assert_eq!(fks, 10, "tpcc-mysql's foreign keys");

    // Exact row counts for W = 2.
    tpcc::assert_initial_rows_w2(|sql| count(&db, sql), "tpcc.");
    // The database holds a consistent initial state.
    fleetbench_ok(&cmd(&["-w2", "check"], &db, &agents));

    // A run with tpcc-mysql's own letters.
    let path = scratch.path("run.json");
    let text = fleetbench_ok(&cmd(&tpcc::run_letters(&path), &db, &agents));
    tpcc::assert_run_text(&text);
    assert!(text.contains("Response time by transaction type"), "{text}");
    let v = json(&path);
    let tp = &v["totals"]["tpcc"];
    let n = tpcc::assert_mix(&v, &text, 500, 1.0);
    let rollbacks = n("new_order", "rolled_back") as f64 / n("new_order", "count") as f64;
    assert!(
        (0.002..0.03).contains(&rollbacks),
        "rolled back: {rollbacks}"
    );
    assert_eq!(tp["constraints_ok"], true);
    // The last line repeats the <TpmC> block's figure, for whoever reads the tail.
    let last = text.lines().rev().find(|l| !l.is_empty()).unwrap();
    let block_tpmc = text
        .split("<TpmC>\n")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap();
    assert_eq!(last, format!("TpmC: {block_tpmc}"), "{text}");
    // `report FILE` reprints the run as it printed: tpcc-mysql's interval lines, Raw
    // Results, Constraint Check and TpmC, then the response times by type (the average
    // response times aside: the file keeps them to the microsecond, the run printed them
    // from the histograms, so a tenth may round the other way).
    let again = fleetbench_ok(&["report", path.to_str().unwrap()]);
    let trx = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains(", trx: "))
            .map(String::from)
            .collect()
    };
    assert!(!trx(&text).is_empty(), "{text}");
    assert_eq!(trx(&again), trx(&text), "{again}");
    let block = |t: &str| -> String {
        let from = t.find("<Raw Results>").expect("Raw Results");
        let to = from + t[from..].find("SQL statistics").expect("SQL statistics");
        t[from..to]
            .lines()
            .map(|l| l.split("avg_rt:").next().unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(block(&again), block(&text), "{again}");
    assert!(again.ends_with(&format!("\n{last}\n")), "{again}");
    assert!(!again.contains("thds:"), "not sysbench's layout: {again}");
    // The server saw what the agents counted: one order per New-Order that committed.
    let new_orders = count(&db, "SELECT COUNT(*) FROM tpcc.orders") - 60_000;
    let committed = n("new_order", "count") - n("new_order", "rolled_back");
    assert!(
        new_orders >= committed,
        "{new_orders} orders for {committed} committed New-Orders"
    );

    // After the run the database is consistent; a row changed by hand is named.
    fleetbench_ok(&cmd(&["-w2", "check"], &db, &agents));
    db.sql("UPDATE tpcc.district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 2 AND d_id = 7");
    let out = fleetbench(
        &cmd(&["-w2", "check"], &db, &agents)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("condition 2 failed in warehouse 2 district 7"),
        "{stdout}"
    );
    assert!(stdout.contains("FAILED: 1 violation"), "{stdout}");

    // Cleanup drops the nine tables and nothing else.
    db.sql("CREATE TABLE tpcc.mine (x int)");
    fleetbench_ok(&cmd(&["cleanup"], &db, &agents));
    assert_eq!(db.sql("SHOW TABLES FROM tpcc").trim(), "mine");
}

/// `smallint(6)` → `smallint`: the display widths some MariaDB versions show.
fn strip_widths(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("int(") {
        out.push_str(&rest[..i + 3]);
        let after = &rest[i + 4..];
        let close = after.find(')').map_or(0, |c| c + 1);
        rest = &after[close..];
    }
    out.push_str(rest);
    out
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let db = MariaDb::start();
    db.sql("CREATE DATABASE tpcc");
    let a = AgentProc::start();
    let b = AgentProc::start();
    let agents = format!("{},{}", a.addr, b.addr);
    let run = |parts: &[&str]| {
        let args = cmd(parts, &db, &agents);
        let out = fleetbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), err)
    };
    let (code, err) = run(&["-w0", "prepare"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--warehouses") && err.lines().count() == 1,
        "{err}"
    );
    let (code, err) = run(&["-w1", "-c11", "--warehouse-split=partition", "-l5", "run"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("partition") && err.lines().count() == 1,
        "{err}"
    );
    let (code, err) = run(&["-w3", "-c40", "--warehouse-split=partition", "-l5", "run"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("at most 10 per warehouse"), "{err}");
    // A run on a database nobody prepared.
    let (code, err) = run(&["-w1", "-c2", "-l5", "run"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("not prepared for TPC-C") && err.lines().count() == 1,
        "{err}"
    );
    let (code, err) = run(&["-w1", "check"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not prepared"), "{err}");
    // Nothing was created by any of it.
    assert_eq!(db.sql("SHOW TABLES FROM tpcc").trim(), "");
    // Prepare over tables that exist is refused before anything is touched.
    db.sql("CREATE TABLE tpcc.warehouse (w_id smallint)");
    let (code, err) = run(&["-w1", "prepare"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("already exist") && err.contains("warehouse"),
        "{err}"
    );
    // Every agent checked, and said the same: named together, once.
    let both = format!("agents {}, {}: TPC-C tables already exist", a.addr, b.addr);
    assert!(err.contains(&both), "{err}");
    assert_eq!(err.matches("already exist").count(), 1, "{err}");
    assert_eq!(db.sql("SHOW TABLES FROM tpcc").trim(), "warehouse");
}

/// deploy/'s tuning study, shrunk: the same TPC-C run against two servers that differ in
/// their buffer pool, one table of TpmC by setting.
#[test]
fn the_buffer_pool_study_gives_one_tpmc_row_per_setting() {
    let small = MariaDb::start_with(&["--innodb-buffer-pool-size=32M"]);
    let large = MariaDb::start_with(&["--innodb-buffer-pool-size=256M"]);
    for db in [&small, &large] {
        db.sql("CREATE DATABASE tpcc");
    }
    let (a, b) = (AgentProc::start(), AgentProc::start());
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/scenarios-tpcc-buffer-pool.toml"
    ))
    .unwrap();
    let tpcc_url = |db: &MariaDb| {
        let u = db.url();
        format!("{}/tpcc", u.strip_suffix("/sbtest").unwrap())
    };
    let src = src
        .replace("threads = [16, 32, 64]", "threads = [2]")
        .replace("time = 600", "time = 3")
        .replace("warmup-time = 120", "warmup-time = 1")
        .replace("cooldown = 30", "cooldown = 0")
        .replace("warehouses = 100", "warehouses = 1")
        .replace("report-interval = 10", "report-interval = 1")
        .replace(
            r#"agents = ["client1:7600", "client2:7600"]"#,
            &format!(r#"agents = ["{}", "{}"]"#, a.addr, b.addr),
        )
        .replace("mysql://tpcc:pw@db-small:3306/tpcc", &tpcc_url(&small))
        .replace("mysql://tpcc:pw@db-large:3306/tpcc", &tpcc_url(&large));
    let dir = Scratch::new("tpcc-study");
    let file = dir.path("study.toml");
    std::fs::write(&file, src).unwrap();
    let json_path = dir.path("study.json");
    let out = fleetbench_ok(&[
        "scenario",
        "run",
        file.to_str().unwrap(),
        &format!("--json={}", json_path.display()),
    ]);
    // One table: a row per setting, with its TpmC.
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("scenario"))
        .collect();
    assert!(table[0].contains("TpmC"), "{out}");
    let v = json(&json_path);
    for (name, db) in [("bp-small", &small), ("bp-large", &large)] {
        let row = table
            .iter()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"));
        let sc = v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap();
        let tpmc = sc["steps"][0]["result"]["totals"]["tpcc"]["tpmc"]
            .as_f64()
            .unwrap();
        assert!(tpmc > 0.0, "{name}");
        // The result says which setting produced it.
        let pool = &sc["steps"][0]["result"]["totals"]["targets"][0]["connections"][0]["server_vars"]
            ["innodb_buffer_pool_size"];
        let want = if name == "bp-small" {
            32 << 20
        } else {
            256 << 20
        };
        assert_eq!(pool.as_str(), Some(want.to_string().as_str()), "{name}");
        assert!(row.contains(&format!("{tpmc:.1}")), "{row} vs {tpmc}");
        // Each scenario cleaned up after itself.
        assert_eq!(db.sql("SHOW TABLES FROM tpcc").trim(), "", "{name}");
    }
}
