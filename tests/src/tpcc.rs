//! What the TPC-C tests on MariaDB and PostgreSQL check alike.

/// tpcc-mysql's schema as the reference gives it (docs: shared/reference/tpcc.md): per
/// table the columns with their types, and the primary key.
pub const SCHEMA: [(&str, &str, &str); 9] = [
    (
        "warehouse",
        "w_id smallint, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,2), w_ytd decimal(12,2)",
        "w_id",
    ),
    (
        "district",
        "d_id tinyint, d_w_id smallint, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), d_next_o_id int",
        "d_w_id,d_id",
    ),
    (
        "customer",
        "c_id int, c_d_id tinyint, c_w_id smallint, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since datetime, c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt smallint, c_delivery_cnt smallint, c_data text",
        "c_w_id,c_d_id,c_id",
    ),
    (
        "history",
        "h_c_id int, h_c_d_id tinyint, h_c_w_id smallint, h_d_id tinyint, h_w_id smallint, h_date datetime, h_amount decimal(6,2), h_data varchar(24)",
        "",
    ),
    (
        "new_orders",
        "no_o_id int, no_d_id tinyint, no_w_id smallint",
        "no_w_id,no_d_id,no_o_id",
    ),
    (
        "orders",
        "o_id int, o_d_id tinyint, o_w_id smallint, o_c_id int, o_entry_d datetime, o_carrier_id tinyint, o_ol_cnt tinyint, o_all_local tinyint",
        "o_w_id,o_d_id,o_id",
    ),
    (
        "order_line",
        "ol_o_id int, ol_d_id tinyint, ol_w_id smallint, ol_number tinyint, ol_i_id int, ol_supply_w_id smallint, ol_delivery_d datetime, ol_quantity tinyint, ol_amount decimal(6,2), ol_dist_info char(24)",
        "ol_w_id,ol_d_id,ol_o_id,ol_number",
    ),
    (
        "item",
        "i_id int, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50)",
        "i_id",
    ),
    (
        "stock",
        "s_i_id int, s_w_id smallint, s_quantity smallint, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50)",
        "s_w_id,s_i_id",
    ),
];

/// A run as tpcc-mysql's letters ask for it: 2 warehouses, 4 connections, 1 s of ramp-up,
/// 8 s measured, a report every 2 s; the result as JSON in `json`.
pub fn run_letters(json: &std::path::Path) -> Vec<&str> {
    let json = json.to_str().expect("a UTF-8 path");
    vec!["-w2", "-c4", "-r1", "-l8", "-i2", "--json", json, "run"]
}

/// What a run's report in tpcc-mysql's layout holds whatever the database: the TpmC and
/// constraint-check blocks and the interval lines.
pub fn assert_run_text(text: &str) {
    assert!(
        text.contains("<TpmC>") && text.contains("<Constraint Check>"),
        "{text}"
    );
    assert!(text.contains("   2, trx: "), "{text}");
}

/// Checks the initial rows of 2 warehouses, as tpcc-mysql loads them: each table's exact
/// count, the order lines matching the orders' counts (some 300,000 a warehouse), and 10 %
/// of the customers with bad credit (6,000 of 60,000, give or take a few standard
/// deviations). `count` runs a `SELECT COUNT(*)`; `schema` prefixes the table names.
pub fn assert_initial_rows_w2(count: impl Fn(&str) -> u64, schema: &str) {
    for (table, rows) in [
        ("warehouse", 2),
        ("district", 20),
        ("customer", 60_000),
        ("history", 60_000),
        ("orders", 60_000),
        ("new_orders", 18_000),
        ("item", 100_000),
        ("stock", 200_000),
    ] {
        assert_eq!(
            count(&format!("SELECT COUNT(*) FROM {schema}{table}")),
            rows,
            "{table}"
        );
    }
    let lines = count(&format!("SELECT COUNT(*) FROM {schema}order_line"));
    assert_eq!(
        lines,
        count(&format!("SELECT SUM(o_ol_cnt) FROM {schema}orders"))
    );
    assert!((594_000..=606_000).contains(&lines), "{lines}");
    let bc = count(&format!(
        "SELECT COUNT(*) FROM {schema}customer WHERE c_credit = 'BC'"
    ));
    assert!((5_600..=6_400).contains(&bc), "{bc} BC customers");
}

/// TPC-C's transaction types as a run document names them, in the spec's order.
pub const TYPES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Asserts a run document's TPC-C figures: at least `min_total` transactions, each type's
/// share within `tolerance` points of the mix tpcc-mysql runs, none failed, each type's
/// count the sum of the agents' and of the intervals', and the TpmC (New-Orders per minute)
/// as `text` printed it. Returns a reader of `totals.tpcc.transactions[type][field]`.
pub fn assert_mix<'a>(
    v: &'a serde_json::Value,
    text: &str,
    min_total: u64,
    tolerance: f64,
) -> impl Fn(&str, &str) -> u64 + 'a {
    let tp = &v["totals"]["tpcc"];
    let n = move |k: &str, f: &str| tp["transactions"][k][f].as_u64().unwrap();
    let total: u64 = TYPES.iter().map(|k| n(k, "count")).sum();
    assert!(total > min_total, "{total} transactions");
    for (k, want) in TYPES.iter().zip([43.48, 43.48, 4.35, 4.35, 4.35]) {
        let share = 100.0 * n(k, "count") as f64 / total as f64;
        assert!(
            (share - want).abs() < tolerance,
            "{k}: {share:.2} % of {total}"
        );
        assert_eq!(n(k, "failed"), 0, "{k}");
        let count =
            |part: &serde_json::Value| part["tpcc"]["transactions"][k]["count"].as_u64().unwrap();
        for part in ["agents", "intervals"] {
            let sum = crate::sum_over(&v[part], count);
            assert_eq!(sum, n(k, "count"), "{k} over {part}");
        }
    }
    let minutes = v["totals"]["time_s"].as_f64().unwrap() / 60.0;
    let tpmc = tp["tpmc"].as_f64().unwrap();
    let want = n("new_order", "count") as f64 / minutes;
    assert!((tpmc - want).abs() <= 0.01 * want, "TpmC {tpmc} vs {want}");
    assert!(text.contains(&format!("{tpmc:.3} TpmC")), "{text}");
    n
}
