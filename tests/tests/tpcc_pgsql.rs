//! TPC-C on PostgreSQL end to end: a private PostgreSQL, two real agent processes,
//! `--db-driver=pgsql` with sysbench's `--pgsql-*` options (and a postgres:// target); the
//! schema as tpcc-mysql's in PostgreSQL's types, exact row counts, the mix and TpmC of a run,
//! serialization failures retried, the consistency check passing and then failing on a
//! changed row, cleanup dropping the nine tables only, and a run or prepare refused with one
//! line where the tables are missing or already there.

use fleetbench_tests::postgres::Postgres;
use fleetbench_tests::{AgentProc, Scratch, fleetbench, fleetbench_ok, json};
use serde_json::Value;

use fleetbench_tests::tpcc::{self, SCHEMA, TYPES};

/// A MySQL type of [`SCHEMA`] as PostgreSQL's `format_type` shows the type standing for it:
/// no one-byte integer (smallint), timestamp for datetime, numeric for decimal.
fn pg_type(mysql: &str) -> String {
    let (base, args) = match mysql.find('(') {
        Some(i) => (&mysql[..i], &mysql[i..]),
        None => (mysql, ""),
    };
    let base = match base {
        "tinyint" | "smallint" => "smallint",
        "int" => "integer",
        "bigint" => "bigint",
        "varchar" => "character varying",
        "char" => "character",
        "decimal" => "numeric",
        "datetime" => "timestamp without time zone",
        "text" => "text",
        other => panic!("no PostgreSQL type for {other}"),
    };
    format!("{base}{args}")
}

/// The `fleetbench tpcc` command line on `pg` with sysbench's pgsql options.
fn cmd(parts: &[&str], pg: &Postgres, agents: &str) -> Vec<String> {
    let mut v = vec!["tpcc".to_string()];
    v.extend(pg.pgsql_args());
    v.extend(parts.iter().map(|s| s.to_string()));
    v.push(format!("--agents={agents}"));
    v
}

fn count(pg: &Postgres, sql: &str) -> u64 {
    let out = pg.sql(sql);
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{sql}: {out:?}"))
}

/// The key columns, in order and comma-separated, of the index that `index_filter` (a
/// condition on pg_index `i`) selects.
fn index_columns(pg: &Postgres, index_filter: &str) -> String {
    pg.sql(&format!(
        "SELECT coalesce(string_agg(a.attname, ',' ORDER BY k.ord), '') FROM pg_index i \
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) \
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
         WHERE {index_filter}"
    ))
}

/// The tables of schema public, sorted, one per line.
fn tables(pg: &Postgres) -> String {
    pg.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
}

/// Runs `fleetbench` with `args`: its exit code, stdout and stderr.
fn run(args: &[String]) -> (Option<i32>, String, String) {
    let out = fleetbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prepare_run_check_and_cleanup_over_two_agents() {
    let pg = Postgres::start();
    let (_a, _b, agents) = AgentProc::pair();
    let scratch = Scratch::new("tpcc-pgsql");

    let out = fleetbench_ok(&cmd(&["-w2", "-c4", "prepare"], &pg, &agents));
    assert!(out.contains("created the 9 TPC-C tables"), "{out}");
    assert!(out.contains("warehouses 1..1 and the items"), "{out}");
    assert!(out.contains("warehouses 2..2 on target"), "{out}");
    assert!(
        out.contains(
            "secondary indexes and foreign keys created on target default, \
             tables vacuumed and analysed"
        ),
        "{out}"
    );

    // The schema: tpcc-mysql's columns in order, in PostgreSQL's types, and its keys.
    for (table, columns, key) in SCHEMA {
        let want: Vec<String> = columns
            .split(", ")
            .map(|c| {
                let (name, ty) = c.split_once(' ').unwrap();
                format!("{name} {}", pg_type(ty))
            })
            .collect();
        let got = pg.sql(&format!(
            "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) \
             FROM pg_attribute WHERE attrelid = 'public.{table}'::regclass AND attnum > 0 AND NOT attisdropped"
        ));
        assert_eq!(got, want.join(", "), "columns of {table}");
        let pk = index_columns(
            &pg,
            &format!("i.indrelid = 'public.{table}'::regclass AND i.indisprimary"),
        );
        assert_eq!(pk, key, "primary key of {table}");
        // Key columns NOT NULL, every other column nullable, as tpcc-mysql's.
        let not_null = pg.sql(&format!(
            "SELECT coalesce(string_agg(attname, ',' ORDER BY attname), '') FROM pg_attribute \
             WHERE attrelid = 'public.{table}'::regclass AND attnum > 0 AND attnotnull"
        ));
        let mut key_cols: Vec<&str> = key.split(',').filter(|c| !c.is_empty()).collect();
        key_cols.sort();
        assert_eq!(not_null, key_cols.join(","), "NOT NULL columns of {table}");
        // The load's role owns what it created.
        let owner = pg.sql(&format!(
            "SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = '{table}'"
        ));
        assert_eq!(owner, "sbtest", "{table}");
    }
    for (index, cols) in [
        ("idx_customer", "c_w_id,c_d_id,c_last,c_first"),
        ("idx_orders", "o_w_id,o_d_id,o_c_id,o_id"),
        ("fkey_stock_2", "s_i_id"),
        ("fkey_order_line_2", "ol_supply_w_id,ol_i_id"),
    ] {
        let got = index_columns(&pg, &format!("i.indexrelid = 'public.{index}'::regclass"));
        assert_eq!(got, cols, "{index}");
    }
    let fks = count(
        &pg,
        "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace",
    );
    assert_eq!(fks, 10, "tpcc-mysql's foreign keys");
    // The step after the load analysed every table, as pgbench's initialisation does.
    let analysed = count(
        &pg,
        "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = 'public' \
         AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)",
    );
    assert_eq!(analysed, 9);

    // Exact row counts for W = 2.
    tpcc::assert_initial_rows_w2(|sql| count(&pg, sql), "");
    // Undelivered orders have no carrier and their lines no date, the others have both.
    assert_eq!(
        count(
            &pg,
            "SELECT count(*) FROM orders WHERE (o_carrier_id IS NULL) <> (o_id >= 2101)"
        ),
        0
    );
    assert_eq!(
        count(
            &pg,
            "SELECT count(*) FROM order_line WHERE (ol_delivery_d IS NULL) <> (ol_o_id >= 2101)"
        ),
        0
    );
    // The database holds a consistent initial state.
    let out = fleetbench_ok(&cmd(&["-w2", "check"], &pg, &agents));
    assert!(out.contains("TPC-C consistency check passed"), "{out}");

    // A run over both agents with tpcc-mysql's letters.
    let path = scratch.path("run.json");
    let text = fleetbench_ok(&cmd(&tpcc::run_letters(&path), &pg, &agents));
    tpcc::assert_run_text(&text);
    assert!(text.contains("server PostgreSQL "), "{text}");
    let v = json(&path);
    let n = tpcc::assert_mix(&v, &text, 300, 1.5);
    for k in TYPES {
        let count = |part: &Value| part["tpcc"]["transactions"][k]["count"].as_u64().unwrap();
        for agent in v["agents"].as_array().unwrap() {
            assert!(count(agent) > 0, "{k} on every agent");
        }
    }
    // No error but, at most, a deadlock retried.
    let sql = &v["totals"]["sql"];
    assert_eq!(sql["reconnects"], 0, "{sql}");
    for code in sql["errors_by_code"].as_object().unwrap().keys() {
        assert_eq!(code, "SQLSTATE 40P01", "{sql}");
    }
    let rollbacks = n("new_order", "rolled_back") as f64 / n("new_order", "count") as f64;
    assert!((0.0..0.04).contains(&rollbacks), "rolled back: {rollbacks}");
    // The server saw what the agents counted: one order per New-Order that committed.
    let new_orders = count(&pg, "SELECT count(*) FROM orders") - 60_000;
    let committed = n("new_order", "count") - n("new_order", "rolled_back");
    assert!(
        new_orders >= committed,
        "{new_orders} orders for {committed} committed New-Orders"
    );
    fleetbench_ok(&cmd(&["-w2", "check"], &pg, &agents));

    // Under REPEATABLE READ concurrent updates of a district or warehouse row fail with
    // SQLSTATE 40001: the transaction is rolled back and tried again, as a deadlock, and
    // the database stays consistent.
    pg.sql("ALTER DATABASE sbtest SET default_transaction_isolation = 'repeatable read'");
    let path = scratch.path("rr.json");
    fleetbench_ok(&cmd(
        &["-w2", "-c4", "-l4", "--json", path.to_str().unwrap(), "run"],
        &pg,
        &agents,
    ));
    pg.sql("ALTER DATABASE sbtest RESET default_transaction_isolation");
    let v = json(&path);
    let t = &v["totals"]["tpcc"]["transactions"];
    let retried: u64 = TYPES
        .iter()
        .map(|k| t[k]["retried"].as_u64().unwrap())
        .sum();
    let ignored = v["totals"]["sql"]["errors_by_code"]["SQLSTATE 40001"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        retried > 0 && ignored >= retried,
        "{retried} retried, {ignored} 40001"
    );
    assert_eq!(v["totals"]["sql"]["reconnects"], 0);
    fleetbench_ok(&cmd(&["-w2", "check"], &pg, &agents));

    // A row changed by hand is named, and the check fails.
    pg.sql("UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 2 AND d_id = 7");
    let (code, stdout, _) = run(&cmd(&["-w2", "check"], &pg, &agents));
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("condition 2 failed in warehouse 2 district 7: d_next_o_id - 1 = "),
        "{stdout}"
    );
    assert!(stdout.contains("FAILED: 1 violation"), "{stdout}");
    assert!(
        stdout.contains("warehouses 1..1: all hold"),
        "the other agent's share holds: {stdout}"
    );

    // Cleanup drops the nine tables and nothing else.
    pg.sql("CREATE TABLE mine (x int); ALTER TABLE mine OWNER TO sbtest");
    let out = fleetbench_ok(&cmd(&["cleanup"], &pg, &agents));
    assert!(out.contains("dropped 9 TPC-C tables"), "{out}");
    assert_eq!(tables(&pg), "mine");
    // And again: nothing left to drop is not an error.
    fleetbench_ok(&cmd(&["cleanup"], &pg, &agents));
    assert_eq!(tables(&pg), "mine");
}

/// A postgres:// target: a run or check on a database nobody prepared, and a prepare over
/// a table that is there, are refused with one line before anything is touched.
#[test]
fn a_postgres_target_is_refused_where_the_tables_are_missing_or_there() {
    let pg = Postgres::start();
    let (a, b, agents) = AgentProc::pair();
    let target = format!("--target=pg={}", pg.url());
    let tpcc = |parts: &[&str]| {
        let mut v = vec!["tpcc".to_string(), target.clone()];
        v.extend(parts.iter().map(|s| s.to_string()));
        v.push(format!("--agents={agents}"));
        run(&v)
    };
    let (code, _, err) = tpcc(&["-w1", "-c2", "-l5", "run"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("not prepared for TPC-C") && err.contains("no table warehouse"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = tpcc(&["-w1", "check"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not prepared"), "{err}");
    assert_eq!(tables(&pg), "");

    // Prepare over a table that exists is refused by every agent's dry run, together.
    pg.sql("CREATE TABLE warehouse (w_id smallint)");
    let (code, _, err) = tpcc(&["-w1", "prepare"]);
    assert_eq!(code, Some(2), "{err}");
    let both = format!("agents {}, {}: TPC-C tables already exist", a.addr, b.addr);
    assert!(err.contains(&both) && err.contains("warehouse"), "{err}");
    assert_eq!(tables(&pg), "warehouse");

    // A table of the same name in another schema is not ours: the current schema counts.
    pg.sql(
        "DROP TABLE warehouse; CREATE SCHEMA other; CREATE TABLE other.warehouse (w_id smallint)",
    );
    let (code, _, err) = tpcc(&["-w1", "-c2", "-l5", "run"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no table warehouse"), "{err}");
}
