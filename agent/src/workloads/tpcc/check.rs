//! TPC-C's four consistency conditions (clause 3.3.2.1-4) as SQL over a warehouse range, and
//! the violations they report.
//!
//! Each query returns only the violating warehouses or districts. Every table is read once,
//! grouped by (warehouse, district) in a derived table and joined to the district rows, rather
//! than through correlated subqueries, so a check of 100 warehouses reads each table's range
//! once (MAX over the primary key is an index-only group-by in InnoDB). Comparisons are
//! NULL-safe (MySQL's `NOT (a <=> b)`, PostgreSQL's `a IS DISTINCT FROM b`: the only
//! difference between the two databases' queries), so a missing group (a district without
//! orders, say) is a violation rather than silently skipped.

use std::fmt;

use fleetbench_model::workloads::server::Driver;

/// The conditions, by their clause number 3.3.2.N.
pub const CONDITIONS: [u8; 4] = [1, 2, 3, 4];

/// One violating warehouse (condition 1) or district (conditions 2-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub condition: u8,
    pub warehouse: u32,
    pub district: Option<u32>,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "condition {} failed in warehouse {}",
            self.condition, self.warehouse
        )?;
        if let Some(d) = self.district {
            write!(f, " district {d}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// A row that [`violation`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("there is no consistency condition {0} (they are 1 to 4)")]
    UnknownCondition(u8),
    #[error("condition {condition} rows have {expected} columns, this one has {got}")]
    Columns {
        condition: u8,
        expected: usize,
        got: usize,
    },
    #[error("condition {condition}: {column} is {value:?}, not an id")]
    BadId {
        condition: u8,
        column: &'static str,
        value: Option<String>,
    },
}

/// The columns each condition's query returns, in order; the first one or two are the
/// warehouse and district ids, the rest are the compared values shown in the detail.
fn columns(condition: u8) -> Option<&'static [&'static str]> {
    Some(match condition {
        1 => &["w_id", "w_ytd", "sum(d_ytd)"],
        2 => &[
            "d_w_id",
            "d_id",
            "d_next_o_id - 1",
            "max(o_id)",
            "max(no_o_id)",
        ],
        3 => &[
            "no_w_id",
            "no_d_id",
            "max(no_o_id) - min(no_o_id) + 1",
            "count(*)",
        ],
        4 => &["d_w_id", "d_id", "sum(o_ol_cnt)", "count(*)"],
        _ => return None,
    })
}

/// `a` and `b` differ, NULL being a value like any other, in the database's words.
fn differ(driver: Driver, a: &str, b: &str) -> String {
    crate::sql::dialect::Dialect::of(driver).differ(a, b)
}

/// The SELECT of the violations of `condition` in warehouses `first_w..=last_w`, without
/// ORDER BY and LIMIT.
fn violations_sql(driver: Driver, condition: u8, first_w: u32, last_w: u32) -> String {
    let range = |col: &str| format!("{col} BETWEEN {first_w} AND {last_w}");
    let differ = |a: &str, b: &str| differ(driver, a, b);
    match condition {
        1 => format!(
            "SELECT w.w_id, w.w_ytd, d.sum_d_ytd FROM warehouse w \
             LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS sum_d_ytd FROM district \
             WHERE {} GROUP BY d_w_id) d ON d.d_w_id = w.w_id \
             WHERE {} AND {}",
            range("d_w_id"),
            range("w.w_id"),
            differ("w.w_ytd", "d.sum_d_ytd"),
        ),
        // Districts without new orders compare d_next_o_id - 1 with max(o_id) only.
        2 => format!(
            "SELECT d.d_w_id, d.d_id, d.d_next_o_id - 1, o.max_o_id, n.max_no_o_id \
             FROM district d \
             LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS max_o_id FROM orders \
             WHERE {} GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id \
             LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS max_no_o_id FROM new_orders \
             WHERE {} GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id \
             WHERE {} AND ({} \
             OR (n.max_no_o_id IS NOT NULL AND {}))",
            range("o_w_id"),
            range("no_w_id"),
            range("d.d_w_id"),
            differ("d.d_next_o_id - 1", "o.max_o_id"),
            differ("n.max_no_o_id", "o.max_o_id"),
        ),
        // Only districts with new orders have a min and max to compare.
        3 => format!(
            "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) \
             FROM new_orders WHERE {} GROUP BY no_w_id, no_d_id \
             HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
            range("no_w_id"),
        ),
        // A district without orders or lines has a sum and count of 0.
        4 => format!(
            "SELECT d.d_w_id, d.d_id, COALESCE(o.sum_ol_cnt, 0), COALESCE(l.ol_count, 0) \
             FROM district d \
             LEFT JOIN (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS sum_ol_cnt FROM orders \
             WHERE {} GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id \
             LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS ol_count FROM order_line \
             WHERE {} GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = d.d_w_id AND l.ol_d_id = d.d_id \
             WHERE {} AND COALESCE(o.sum_ol_cnt, 0) <> COALESCE(l.ol_count, 0)",
            range("o_w_id"),
            range("ol_w_id"),
            range("d.d_w_id"),
        ),
        _ => panic!("there is no consistency condition {condition} (they are 1 to 4)"),
    }
}

/// The query returning at most `limit` violations of `condition` in warehouses
/// `first_w..=last_w`, ordered by warehouse then district; [`violation`] reads its rows.
///
/// # Panics
/// If `condition` is not one of [`CONDITIONS`].
pub fn condition_sql(
    driver: Driver,
    condition: u8,
    first_w: u32,
    last_w: u32,
    limit: u32,
) -> String {
    let order = match condition {
        1 => "w.w_id",
        3 => "no_w_id, no_d_id",
        _ => "d.d_w_id, d.d_id",
    };
    format!(
        "{} ORDER BY {order} LIMIT {limit}",
        violations_sql(driver, condition, first_w, last_w)
    )
}

/// The query counting all violations of `condition` in warehouses `first_w..=last_w` (one
/// row, one column).
///
/// # Panics
/// If `condition` is not one of [`CONDITIONS`].
pub fn count_sql(driver: Driver, condition: u8, first_w: u32, last_w: u32) -> String {
    format!(
        "SELECT COUNT(*) FROM ({}) v",
        violations_sql(driver, condition, first_w, last_w)
    )
}

/// One row of [`condition_sql`]'s result (values as text, NULL as `None`) as a violation.
pub fn violation(condition: u8, row: &[Option<String>]) -> Result<Violation, CheckError> {
    let cols = columns(condition).ok_or(CheckError::UnknownCondition(condition))?;
    if row.len() != cols.len() {
        return Err(CheckError::Columns {
            condition,
            expected: cols.len(),
            got: row.len(),
        });
    }
    let id = |i: usize| {
        row[i]
            .as_deref()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| CheckError::BadId {
                condition,
                column: cols[i],
                value: row[i].clone(),
            })
    };
    let warehouse = id(0)?;
    let (district, first_value) = if condition == 1 {
        (None, 1)
    } else {
        (Some(id(1)?), 2)
    };
    let detail = cols[first_value..]
        .iter()
        .zip(&row[first_value..])
        .map(|(name, value)| format!("{name} = {}", value.as_deref().unwrap_or("NULL")))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Violation {
        condition,
        warehouse,
        district,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(values: &[Option<&str>]) -> Vec<Option<String>> {
        values.iter().map(|v| v.map(str::to_owned)).collect()
    }

    #[test]
    fn every_query_has_range_order_and_limit() {
        for c in CONDITIONS {
            let sql = condition_sql(Driver::Mysql, c, 11, 20, 25);
            assert!(sql.starts_with("SELECT "), "{sql}");
            assert!(sql.ends_with(" LIMIT 25"), "{sql}");
            assert!(sql.contains(" ORDER BY "), "{sql}");
            assert!(sql.contains("BETWEEN 11 AND 20"), "{sql}");
            // Every table read is restricted to the range.
            let reads = sql.matches(" FROM ").count();
            assert_eq!(sql.matches("BETWEEN 11 AND 20").count(), reads, "{sql}");
            // No correlated subqueries: no SELECT inside a WHERE or select list.
            assert!(!sql.contains("(SELECT MAX") && !sql.contains("= (SELECT"));
            // Balanced parentheses.
            assert_eq!(sql.matches('(').count(), sql.matches(')').count(), "{sql}");
            let count = count_sql(Driver::Mysql, c, 11, 20);
            assert!(
                count.starts_with("SELECT COUNT(*) FROM (SELECT "),
                "{count}"
            );
            assert!(
                count.ends_with(") v") && !count.contains("LIMIT"),
                "{count}"
            );
            assert!(count.contains("BETWEEN 11 AND 20"));
        }
    }

    #[test]
    fn queries_compare_what_the_clauses_say() {
        let c1 = condition_sql(Driver::Mysql, 1, 1, 1, 10);
        assert!(c1.contains("SUM(d_ytd)") && c1.contains("NOT (w.w_ytd <=> d.sum_d_ytd)"));
        assert!(c1.contains("ORDER BY w.w_id LIMIT"));
        let c2 = condition_sql(Driver::Mysql, 2, 1, 1, 10);
        assert!(c2.contains("MAX(o_id)") && c2.contains("MAX(no_o_id)"));
        assert!(c2.contains("d.d_next_o_id - 1 <=> o.max_o_id"));
        assert!(c2.contains("n.max_no_o_id IS NOT NULL"));
        assert!(c2.contains("ORDER BY d.d_w_id, d.d_id LIMIT"));
        let c3 = condition_sql(Driver::Mysql, 3, 1, 1, 10);
        assert!(c3.contains("HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)"));
        assert!(c3.contains("GROUP BY no_w_id, no_d_id"));
        let c4 = condition_sql(Driver::Mysql, 4, 1, 1, 10);
        assert!(c4.contains("SUM(o_ol_cnt)") && c4.contains("FROM order_line"));
        assert!(c4.contains("COALESCE(o.sum_ol_cnt, 0) <> COALESCE(l.ol_count, 0)"));
        // Each query returns the columns violation() expects.
        for c in CONDITIONS {
            let sql = condition_sql(Driver::Mysql, c, 1, 1, 1);
            let select = &sql["SELECT ".len()..sql.find(" FROM ").unwrap()];
            let n = select.split(", ").count();
            // COALESCE(x, 0) holds a ", " of its own.
            let n = n - select.matches("COALESCE").count();
            assert_eq!(n, columns(c).unwrap().len(), "condition {c}: {select}");
        }
    }

    #[test]
    fn postgresql_queries_differ_only_in_the_null_safe_comparison() {
        for c in CONDITIONS {
            let (my, pg) = (
                condition_sql(Driver::Mysql, c, 3, 4, 5),
                condition_sql(Driver::Pgsql, c, 3, 4, 5),
            );
            assert!(!pg.contains("<=>"), "{pg}");
            let mut want = my.clone();
            for (a, b) in [
                ("w.w_ytd", "d.sum_d_ytd"),
                ("d.d_next_o_id - 1", "o.max_o_id"),
                ("n.max_no_o_id", "o.max_o_id"),
            ] {
                want = want.replace(
                    &format!("NOT ({a} <=> {b})"),
                    &format!("{a} IS DISTINCT FROM {b}"),
                );
            }
            assert_eq!(pg, want, "condition {c}");
            assert_eq!(
                count_sql(Driver::Pgsql, c, 3, 4),
                format!(
                    "SELECT COUNT(*) FROM ({}) v",
                    violations_sql(Driver::Pgsql, c, 3, 4)
                )
            );
        }
        assert!(
            condition_sql(Driver::Pgsql, 1, 1, 1, 1)
                .contains("w.w_ytd IS DISTINCT FROM d.sum_d_ytd")
        );
    }

    #[test]
    #[should_panic(expected = "no consistency condition 5")]
    fn unknown_condition_sql_panics() {
        condition_sql(Driver::Mysql, 5, 1, 1, 1);
    }

    #[test]
    fn violation_display_per_condition() {
        let v = violation(
            2,
            &row(&[
                Some("1"),
                Some("3"),
                Some("3005"),
                Some("3004"),
                Some("3004"),
            ]),
        )
        .unwrap();
        assert_eq!((v.condition, v.warehouse, v.district), (2, 1, Some(3)));
        assert_eq!(
            v.to_string(),
            "condition 2 failed in warehouse 1 district 3: d_next_o_id - 1 = 3005, \
             max(o_id) = 3004, max(no_o_id) = 3004"
        );
        let v = violation(1, &row(&[Some("7"), Some("300000.00"), None])).unwrap();
        assert_eq!(v.district, None);
        assert_eq!(
            v.to_string(),
            "condition 1 failed in warehouse 7: w_ytd = 300000.00, sum(d_ytd) = NULL"
        );
        let v = violation(3, &row(&[Some("2"), Some("10"), Some("901"), Some("900")])).unwrap();
        assert_eq!(
            v.to_string(),
            "condition 3 failed in warehouse 2 district 10: \
             max(no_o_id) - min(no_o_id) + 1 = 901, count(*) = 900"
        );
        let v = violation(
            4,
            &row(&[Some("5"), Some("1"), Some("30012"), Some("30011")]),
        )
        .unwrap();
        assert_eq!(
            v.to_string(),
            "condition 4 failed in warehouse 5 district 1: sum(o_ol_cnt) = 30012, count(*) = 30011"
        );
    }

    #[test]
    fn violation_rejects_bad_rows() {
        assert_eq!(
            violation(0, &row(&[Some("1")])),
            Err(CheckError::UnknownCondition(0))
        );
        assert_eq!(
            violation(4, &row(&[Some("1"), Some("2"), Some("3")])),
            Err(CheckError::Columns {
                condition: 4,
                expected: 4,
                got: 3
            })
        );
        let err = violation(2, &row(&[Some("1"), None, Some("1"), Some("1"), None])).unwrap_err();
        assert_eq!(
            err,
            CheckError::BadId {
                condition: 2,
                column: "d_id",
                value: None
            }
        );
        assert!(err.to_string().contains("d_id is None"));
        assert!(matches!(
            violation(1, &row(&[Some("-1"), Some("1"), Some("2")])),
            Err(CheckError::BadId { column: "w_id", .. })
        ));
    }
}
