//! tpcc-mysql's TPC-C schema: the nine tables with their columns in tpcc-mysql's order, the
//! CREATE TABLE statements, the secondary indexes and optional foreign keys added after the
//! load, and the initial row counts for W warehouses.
//!
//! Key columns are NOT NULL and every other column is nullable, as in tpcc-mysql's
//! create_table.sql; the secondary indexes come after the load because building them once is
//! cheaper than maintaining them row by row.
//!
//! On PostgreSQL the tables, keys, indexes and foreign keys are the same; the types are
//! PostgreSQL's nearest ([`Dialect::column_type`]: tinyint becomes smallint, datetime timestamp, decimal
//! numeric, int integer), there is no storage engine, and the step after the load ends with
//! VACUUM ANALYZE of every table, as pgbench's initialisation does, so that a run starts
//! with statistics and a visibility map.

use fleetbench_model::workloads::server::Driver;

use crate::sql::dialect::Dialect;
use fleetbench_model::workloads::tpcc::TABLES;

/// One column: its name and SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub sql_type: &'static str,
}

/// One table's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableDef {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// Empty for history, which has no primary key.
    pub primary_key: &'static [&'static str],
}

const fn col(name: &'static str, sql_type: &'static str) -> Column {
    Column { name, sql_type }
}

const VC20: &str = "varchar(20)";

const DEFS: [TableDef; 9] = [
    TableDef {
        name: "warehouse",
        columns: &[
            col("w_id", "smallint"),
            col("w_name", "varchar(10)"),
            col("w_street_1", VC20),
            col("w_street_2", VC20),
            col("w_city", VC20),
            col("w_state", "char(2)"),
            col("w_zip", "char(9)"),
            col("w_tax", "decimal(4,2)"),
            col("w_ytd", "decimal(12,2)"),
        ],
        primary_key: &["w_id"],
    },
    TableDef {
        name: "district",
        columns: &[
            col("d_id", "tinyint"),
            col("d_w_id", "smallint"),
            col("d_name", "varchar(10)"),
            col("d_street_1", VC20),
            col("d_street_2", VC20),
            col("d_city", VC20),
            col("d_state", "char(2)"),
            col("d_zip", "char(9)"),
            col("d_tax", "decimal(4,2)"),
            col("d_ytd", "decimal(12,2)"),
            col("d_next_o_id", "int"),
        ],
        primary_key: &["d_w_id", "d_id"],
    },
    TableDef {
        name: "customer",
        columns: &[
            col("c_id", "int"),
            col("c_d_id", "tinyint"),
            col("c_w_id", "smallint"),
            col("c_first", "varchar(16)"),
            col("c_middle", "char(2)"),
            col("c_last", "varchar(16)"),
            col("c_street_1", VC20),
            col("c_street_2", VC20),
            col("c_city", VC20),
            col("c_state", "char(2)"),
            col("c_zip", "char(9)"),
            col("c_phone", "char(16)"),
            col("c_since", "datetime"),
            col("c_credit", "char(2)"),
            col("c_credit_lim", "bigint"),
            col("c_discount", "decimal(4,2)"),
            col("c_balance", "decimal(12,2)"),
            col("c_ytd_payment", "decimal(12,2)"),
            col("c_payment_cnt", "smallint"),
            col("c_delivery_cnt", "smallint"),
            col("c_data", "text"),
        ],
        primary_key: &["c_w_id", "c_d_id", "c_id"],
    },
    TableDef {
        name: "history",
        columns: &[
            col("h_c_id", "int"),
            col("h_c_d_id", "tinyint"),
            col("h_c_w_id", "smallint"),
            col("h_d_id", "tinyint"),
            col("h_w_id", "smallint"),
            col("h_date", "datetime"),
            col("h_amount", "decimal(6,2)"),
            col("h_data", "varchar(24)"),
        ],
        primary_key: &[],
    },
    TableDef {
        name: "new_orders",
        columns: &[
            col("no_o_id", "int"),
            col("no_d_id", "tinyint"),
            col("no_w_id", "smallint"),
        ],
        primary_key: &["no_w_id", "no_d_id", "no_o_id"],
    },
    TableDef {
        name: "orders",
        columns: &[
            col("o_id", "int"),
            col("o_d_id", "tinyint"),
            col("o_w_id", "smallint"),
            col("o_c_id", "int"),
            col("o_entry_d", "datetime"),
            col("o_carrier_id", "tinyint"),
            col("o_ol_cnt", "tinyint"),
            col("o_all_local", "tinyint"),
        ],
        primary_key: &["o_w_id", "o_d_id", "o_id"],
    },
    TableDef {
        name: "order_line",
        columns: &[
            col("ol_o_id", "int"),
            col("ol_d_id", "tinyint"),
            col("ol_w_id", "smallint"),
            col("ol_number", "tinyint"),
            col("ol_i_id", "int"),
            col("ol_supply_w_id", "smallint"),
            col("ol_delivery_d", "datetime"),
            col("ol_quantity", "tinyint"),
            col("ol_amount", "decimal(6,2)"),
            col("ol_dist_info", "char(24)"),
        ],
        primary_key: &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
    },
    TableDef {
        name: "item",
        columns: &[
            col("i_id", "int"),
            col("i_im_id", "int"),
            col("i_name", "varchar(24)"),
            col("i_price", "decimal(5,2)"),
            col("i_data", "varchar(50)"),
        ],
        primary_key: &["i_id"],
    },
    TableDef {
        name: "stock",
        columns: &[
            col("s_i_id", "int"),
            col("s_w_id", "smallint"),
            col("s_quantity", "smallint"),
            col("s_dist_01", "char(24)"),
            col("s_dist_02", "char(24)"),
            col("s_dist_03", "char(24)"),
            col("s_dist_04", "char(24)"),
            col("s_dist_05", "char(24)"),
            col("s_dist_06", "char(24)"),
            col("s_dist_07", "char(24)"),
            col("s_dist_08", "char(24)"),
            col("s_dist_09", "char(24)"),
            col("s_dist_10", "char(24)"),
            col("s_ytd", "decimal(8,0)"),
            col("s_order_cnt", "smallint"),
            col("s_remote_cnt", "smallint"),
            col("s_data", "varchar(50)"),
        ],
        primary_key: &["s_w_id", "s_i_id"],
    },
];

/// The definition of `table`, if it is one of `TABLES`.
pub fn table(name: &str) -> Option<&'static TableDef> {
    DEFS.iter().find(|t| t.name == name)
}

/// Like [`table`], for the functions whose callers pass names from `TABLES`.
fn known(name: &str) -> &'static TableDef {
    table(name).unwrap_or_else(|| panic!("{name:?} is not a TPC-C table"))
}

/// The column names of `table` joined by commas, for explicit INSERT column lists.
///
/// # Panics
/// If `table` is not one of `TABLES`.
pub fn column_list(table: &str) -> String {
    let def = known(table);
    let names: Vec<&str> = def.columns.iter().map(|c| c.name).collect();
    names.join(",")
}

/// The CREATE TABLE statement of `table` for the target's database (`engine` is MySQL's):
/// the key columns NOT NULL, the others nullable, the primary key, the database's types
/// and table options.
///
/// # Panics
/// If `table` is not one of `TABLES`.
pub fn create_table_for(driver: Driver, table: &str, engine: &str) -> String {
    let dialect = Dialect::of(driver);
    let def = known(table);
    let mut lines: Vec<String> = def
        .columns
        .iter()
        .map(|c| {
            let null = if def.primary_key.contains(&c.name) {
                " NOT NULL"
            } else {
                ""
            };
            format!("  {} {}{null}", c.name, dialect.column_type(c.sql_type))
        })
        .collect();
    if !def.primary_key.is_empty() {
        lines.push(format!("  PRIMARY KEY ({})", def.primary_key.join(",")));
    }
    format!(
        "CREATE TABLE {} (\n{}\n){}",
        def.name,
        lines.join(",\n"),
        dialect.table_options(engine)
    )
}

/// Secondary indexes: (name, table, columns). The two named `fkey_*` are the ones the foreign
/// keys of the same name use, so adding those keys needs no further index.
const INDEXES: [(&str, &str, &str); 4] = [
    ("idx_customer", "customer", "c_w_id,c_d_id,c_last,c_first"),
    ("idx_orders", "orders", "o_w_id,o_d_id,o_c_id,o_id"),
    ("fkey_stock_2", "stock", "s_i_id"),
    ("fkey_order_line_2", "order_line", "ol_supply_w_id,ol_i_id"),
];

/// Foreign keys per table, numbered from 1 in the constraint names: (columns, parent, parent
/// columns).
type ForeignKey = (&'static str, &'static str, &'static str);
const FOREIGN_KEYS: [(&str, &[ForeignKey]); 7] = [
    ("district", &[("d_w_id", "warehouse", "w_id")]),
    ("customer", &[("c_w_id,c_d_id", "district", "d_w_id,d_id")]),
    (
        "history",
        &[
            ("h_c_w_id,h_c_d_id,h_c_id", "customer", "c_w_id,c_d_id,c_id"),
            ("h_w_id,h_d_id", "district", "d_w_id,d_id"),
        ],
    ),
    (
        "new_orders",
        &[("no_w_id,no_d_id,no_o_id", "orders", "o_w_id,o_d_id,o_id")],
    ),
    (
        "orders",
        &[("o_w_id,o_d_id,o_c_id", "customer", "c_w_id,c_d_id,c_id")],
    ),
    (
        "order_line",
        &[
            ("ol_w_id,ol_d_id,ol_o_id", "orders", "o_w_id,o_d_id,o_id"),
            ("ol_supply_w_id,ol_i_id", "stock", "s_w_id,s_i_id"),
        ],
    ),
    (
        "stock",
        &[("s_w_id", "warehouse", "w_id"), ("s_i_id", "item", "i_id")],
    ),
];

/// The statements to run after the initial load: the four secondary indexes, then (when
/// `foreign_keys`) one ALTER TABLE per child table adding all its foreign keys, so each table
/// is rebuilt once.
pub fn after_load(foreign_keys: bool) -> Vec<String> {
    let mut out: Vec<String> = INDEXES
        .iter()
        .map(|(name, table, cols)| format!("CREATE INDEX {name} ON {table} ({cols})"))
        .collect();
    if foreign_keys {
        for (table, keys) in FOREIGN_KEYS {
            let clauses: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(i, (cols, parent, parent_cols))| {
                    format!(
                        "ADD CONSTRAINT fkey_{table}_{n} FOREIGN KEY ({cols}) \
                         REFERENCES {parent}({parent_cols})",
                        n = i + 1
                    )
                })
                .collect();
            out.push(format!("ALTER TABLE {table} {}", clauses.join(", ")));
        }
    }
    out
}

/// The statements after the initial load on the target's database: [`after_load`]'s, then
/// on PostgreSQL a VACUUM ANALYZE per table (statistics for the planner, hint bits and the
/// visibility map set once rather than by the run's first readers).
pub fn after_load_for(driver: Driver, foreign_keys: bool) -> Vec<String> {
    let mut out = after_load(foreign_keys);
    out.extend(
        TABLES
            .iter()
            .filter_map(|t| Dialect::of(driver).after_load(t)),
    );
    out
}

/// Initial rows of `table` for `warehouses` warehouses. Exact for every table but order_line,
/// whose orders have 5..15 lines each: for it this is the expected 300,000 per warehouse, and
/// `load::order_line_rows` gives the exact count the loader produces for a seed.
///
/// # Panics
/// If `table` is not one of `TABLES`.
pub fn rows(table: &str, warehouses: u64) -> u64 {
    match known(table).name {
        "item" => 100_000,
        "warehouse" => warehouses,
        "district" => 10 * warehouses,
        "customer" | "history" | "orders" => 30_000 * warehouses,
        "new_orders" => 9_000 * warehouses,
        "order_line" => 300_000 * warehouses,
        "stock" => 100_000 * warehouses,
        other => unreachable!("no row count for {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_table(table: &str, engine: &str) -> String {
        create_table_for(Driver::Mysql, table, engine)
    }

    fn create_table_pg(table: &str) -> String {
        create_table_for(Driver::Pgsql, table, "")
    }

    fn pg_type(sql_type: &str) -> String {
        Dialect::Pgsql.column_type(sql_type)
    }

    #[test]
    fn every_table_is_defined_once_in_order() {
        let names: Vec<&str> = DEFS.iter().map(|d| d.name).collect();
        assert_eq!(names, TABLES);
        assert!(table("items").is_none());
        for def in DEFS {
            for pk in def.primary_key {
                assert!(
                    def.columns.iter().any(|c| c.name == *pk),
                    "{}: key column {pk} missing",
                    def.name
                );
            }
        }
    }

    #[test]
    fn warehouse_ddl_is_exact() {
        assert_eq!(
            create_table("warehouse", "InnoDB"),
            "CREATE TABLE warehouse (\n  w_id smallint NOT NULL,\n  w_name varchar(10),\n  \
             w_street_1 varchar(20),\n  w_street_2 varchar(20),\n  w_city varchar(20),\n  \
             w_state char(2),\n  w_zip char(9),\n  w_tax decimal(4,2),\n  \
             w_ytd decimal(12,2),\n  PRIMARY KEY (w_id)\n) ENGINE=InnoDB"
        );
    }

    #[test]
    fn keys_not_null_others_nullable_history_without_key() {
        let ol = create_table("order_line", "MyISAM");
        assert!(ol.ends_with(") ENGINE=MyISAM"));
        assert!(ol.contains("PRIMARY KEY (ol_w_id,ol_d_id,ol_o_id,ol_number)"));
        for c in [
            "ol_o_id int",
            "ol_d_id tinyint",
            "ol_w_id smallint",
            "ol_number tinyint",
        ] {
            assert!(ol.contains(&format!("{c} NOT NULL,")), "{c}");
        }
        assert!(ol.contains("ol_i_id int,\n"));
        assert!(ol.contains("ol_dist_info char(24),\n  PRIMARY KEY"));
        let h = create_table("history", "InnoDB");
        assert!(!h.contains("PRIMARY KEY"));
        assert!(!h.contains("NOT NULL"));
        assert!(h.contains("h_data varchar(24)\n)"));
        let s = create_table("stock", "InnoDB");
        let d01 = s.find("s_dist_01 char(24),").unwrap();
        let d10 = s.find("s_dist_10 char(24),").unwrap();
        assert!(d01 < d10 && s.find("s_quantity").unwrap() < d01);
        assert!(s.contains("s_ytd decimal(8,0)"));
        let c = create_table("customer", "InnoDB");
        assert!(c.contains("c_data text,\n  PRIMARY KEY (c_w_id,c_d_id,c_id)\n)"));
        assert!(c.contains("c_since datetime,"));
    }

    #[test]
    fn column_list_follows_schema_order() {
        assert_eq!(column_list("new_orders"), "no_o_id,no_d_id,no_w_id");
        assert_eq!(column_list("stock").split(',').count(), 17);
        assert_eq!(column_list("customer").split(',').count(), 21);
    }

    #[test]
    #[should_panic(expected = "not a TPC-C table")]
    fn unknown_table_panics() {
        create_table("items", "InnoDB");
    }

    #[test]
    fn after_load_indexes_then_grouped_foreign_keys() {
        let plain = after_load(false);
        assert_eq!(
            plain,
            [
                "CREATE INDEX idx_customer ON customer (c_w_id,c_d_id,c_last,c_first)",
                "CREATE INDEX idx_orders ON orders (o_w_id,o_d_id,o_c_id,o_id)",
                "CREATE INDEX fkey_stock_2 ON stock (s_i_id)",
                "CREATE INDEX fkey_order_line_2 ON order_line (ol_supply_w_id,ol_i_id)",
            ]
        );
        let all = after_load(true);
        assert_eq!(all[..4], plain[..]);
        assert_eq!(all.len(), 4 + 7);
        assert!(all[4..].iter().all(|s| s.starts_with("ALTER TABLE ")));
        let history = all
            .iter()
            .find(|s| s.starts_with("ALTER TABLE history "))
            .unwrap();
        assert_eq!(
            history,
            "ALTER TABLE history ADD CONSTRAINT fkey_history_1 FOREIGN KEY \
             (h_c_w_id,h_c_d_id,h_c_id) REFERENCES customer(c_w_id,c_d_id,c_id), \
             ADD CONSTRAINT fkey_history_2 FOREIGN KEY (h_w_id,h_d_id) \
             REFERENCES district(d_w_id,d_id)"
        );
        let stock = all
            .iter()
            .find(|s| s.starts_with("ALTER TABLE stock "))
            .unwrap();
        assert!(stock.contains("fkey_stock_1 FOREIGN KEY (s_w_id) REFERENCES warehouse(w_id)"));
        assert!(stock.contains("fkey_stock_2 FOREIGN KEY (s_i_id) REFERENCES item(i_id)"));
        let ol = all
            .iter()
            .find(|s| s.contains("TABLE order_line "))
            .unwrap();
        assert!(ol.contains(
            "fkey_order_line_2 FOREIGN KEY (ol_supply_w_id,ol_i_id) REFERENCES stock(s_w_id,s_i_id)"
        ));
        // Ten constraints in all, each name once.
        let n = all
            .iter()
            .map(|s| s.matches("ADD CONSTRAINT").count())
            .sum::<usize>();
        assert_eq!(n, 10);
        // Every referenced and referencing column exists in its table.
        for (child, keys) in FOREIGN_KEYS {
            for (cols, parent, pcols) in keys {
                let has = |t: &str, c: &str| table(t).unwrap().columns.iter().any(|x| x.name == c);
                assert!(cols.split(',').all(|c| has(child, c)), "{child} {cols}");
                assert!(pcols.split(',').all(|c| has(parent, c)), "{parent} {pcols}");
                assert_eq!(cols.split(',').count(), pcols.split(',').count());
            }
        }
    }

    #[test]
    fn postgresql_ddl_has_the_same_columns_and_keys_in_its_types() {
        assert_eq!(
            create_table_pg("warehouse"),
            "CREATE TABLE warehouse (\n  w_id smallint NOT NULL,\n  w_name varchar(10),\n  \
             w_street_1 varchar(20),\n  w_street_2 varchar(20),\n  w_city varchar(20),\n  \
             w_state char(2),\n  w_zip char(9),\n  w_tax numeric(4,2),\n  \
             w_ytd numeric(12,2),\n  PRIMARY KEY (w_id)\n)"
        );
        for t in TABLES {
            let (my, pg) = (create_table(t, "InnoDB"), create_table_pg(t));
            assert!(!pg.contains("ENGINE") && !pg.contains("tinyint"), "{pg}");
            assert!(!pg.contains("datetime") && !pg.contains("decimal"), "{pg}");
            assert!(!pg.contains("unsigned"), "{pg}");
            // Line by line: the same column names, NOT NULL and key in the same order.
            let (ml, pl): (Vec<&str>, Vec<&str>) = (my.lines().collect(), pg.lines().collect());
            assert_eq!(ml.len(), pl.len(), "{t}");
            for (m, p) in ml.iter().zip(&pl).skip(1) {
                let name = |l: &str| l.split_whitespace().next().map(str::to_owned);
                assert_eq!(name(m), name(p), "{t}");
                assert_eq!(m.contains("NOT NULL"), p.contains("NOT NULL"), "{t}");
            }
            assert_eq!(create_table_for(Driver::Mysql, t, "InnoDB"), my);
            assert_eq!(create_table_for(Driver::Pgsql, t, "InnoDB"), pg);
        }
        let c = create_table_pg("customer");
        assert!(c.contains("c_since timestamp,") && c.contains("c_d_id smallint NOT NULL,"));
        assert!(c.contains("c_id integer NOT NULL,") && c.contains("c_credit_lim bigint,"));
        assert!(create_table_pg("stock").contains("s_ytd numeric(8,0),"));
        assert_eq!(pg_type("varchar(24)"), "varchar(24)");
        assert_eq!(pg_type("text"), "text");
    }

    #[test]
    fn postgresql_after_load_vacuums_every_table_last() {
        assert_eq!(after_load_for(Driver::Mysql, true), after_load(true));
        let pg = after_load_for(Driver::Pgsql, false);
        assert_eq!(pg[..4], after_load(false)[..]);
        assert_eq!(pg.len(), 4 + 9);
        assert_eq!(pg[4], "VACUUM ANALYZE warehouse");
        assert_eq!(pg.last().unwrap(), "VACUUM ANALYZE stock");
        assert_eq!(after_load_for(Driver::Pgsql, true).len(), 4 + 7 + 9);
        assert_eq!(
            Dialect::Pgsql.drop_tables(&TABLES)[0].0,
            "DROP TABLE IF EXISTS warehouse, district, customer, history, new_orders, \
             orders, order_line, item, stock"
        );
    }

    #[test]
    fn initial_row_counts() {
        assert_eq!(rows("item", 1), 100_000);
        assert_eq!(rows("item", 50), 100_000);
        assert_eq!(rows("warehouse", 7), 7);
        assert_eq!(rows("district", 7), 70);
        assert_eq!(rows("customer", 2), 60_000);
        assert_eq!(rows("history", 2), 60_000);
        assert_eq!(rows("orders", 2), 60_000);
        assert_eq!(rows("new_orders", 2), 18_000);
        assert_eq!(rows("order_line", 2), 600_000);
        assert_eq!(rows("stock", 3), 300_000);
        assert_eq!(TABLES.iter().map(|t| rows(t, 0)).sum::<u64>(), 100_000);
    }
}
