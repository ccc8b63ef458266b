//! What the text report says beside a run's figures, on the page too: the errors it
//! ignored, by code (MySQL's error number or PostgreSQL's SQLSTATE, with what the common
//! ones mean: crate::report::errors), and TPC-C's Constraint Check (the mix and the
//! response times, as tpcc-mysql's `<Constraint Check>` block says them).

use std::fmt::Write;

use fleetbench_model::workloads::tpcc::TXN_NAMES;

use super::markup::esc;
use crate::report::doc::Report;
use crate::report::errors;
use crate::report::text::tpcc::{LABELS, constraint_check, doc_types};
use crate::report::tpcc::MIN_MIX;

/// The ignored errors of a run by code, commonest first, as a table with the total above
/// it; None when the run ignored none (or is not a database test).
pub(super) fn errors_table(run: &Report) -> Option<String> {
    let sql = run.totals.figures.sql.as_ref()?;
    let rows = errors::rows(&sql.errors_by_code, sql.ignored_errors);
    if rows.is_empty() {
        return None;
    }
    let mut s = format!(
        "<p>{} errors ignored ({:.2} a second), by code:</p>",
        sql.ignored_errors,
        sql.ignored_errors as f64 / run.totals.time_s.max(f64::MIN_POSITIVE)
    );
    s.push_str(
        "<table class=\"rows\" id=\"ignored-errors\"><tr><th>code</th><th>meaning</th><th>count</th></tr>",
    );
    for (code, meaning, n) in rows {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{n}</td></tr>",
            esc(&code),
            esc(meaning.unwrap_or("-"))
        );
    }
    s.push_str("</table>");
    Some(s)
}

/// One line of the ignored errors by code, as the text report's: for a step of a sweep.
/// Empty without any.
pub(super) fn errors_line(run: &Report) -> String {
    let Some(sql) = &run.totals.figures.sql else {
        return String::new();
    };
    let t = errors::text(&sql.errors_by_code, sql.ignored_errors);
    if t.is_empty() {
        return String::new();
    }
    format!(
        "<p class=\"errors\">Ignored errors by code: {}</p>",
        esc(&t)
    )
}

/// TPC-C's Constraint Check of a run: its verdict, then per transaction type its share of
/// the mix against the minimum and its percent within the response-time limit, each [OK]
/// or [NG]; None for a run that is not TPC-C's.
pub(super) fn constraint_table(run: &Report) -> Option<String> {
    let t = run.totals.figures.tpcc.as_ref()?;
    let check = constraint_check(&doc_types(t));
    let verdict = |ok: bool| if ok { "[OK]" } else { "[NG]" };
    let mut s = format!(
        "<p class=\"{}\" id=\"tpcc-check-verdict\">Constraint Check: {}</p>",
        if t.constraints_ok { "check" } else { "warning" },
        if t.constraints_ok {
            "every check passed [OK] (tpcc-mysql: all must be [OK])"
        } else {
            "a check failed [NG] (tpcc-mysql: all must be [OK])"
        }
    );
    s.push_str(
        "<table class=\"rows\" id=\"tpcc-check\"><tr><th>type</th><th>mix %</th><th>at least %</th><th>mix</th><th>within its limit %</th><th>at least 90 %</th></tr>",
    );
    for (i, label) in LABELS.iter().enumerate() {
        let (share, mix_ok) = check.mix[i];
        let (within, within_ok) = check.within[i];
        // New-Order has no minimum share (it is what the others are counted against).
        let (min, mix_verdict) = if i == 0 {
            ("-".to_string(), "-")
        } else {
            (format!("{:.1}", MIN_MIX[i]), verdict(mix_ok))
        };
        let _ = write!(
            s,
            "<tr data-type=\"{}\"><td>{}</td><td>{share:.2}</td><td>{min}</td><td>{mix_verdict}</td><td>{within:.2}</td><td>{}</td></tr>",
            TXN_NAMES[i],
            esc(label),
            verdict(within_ok)
        );
    }
    s.push_str("</table>");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Sql, Tpcc, TxnJson};
    use crate::sweep::tests::run_doc;

    #[test]
    fn ignored_errors_are_listed_by_code_commonest_first() {
        let mut run = run_doc(4, 100.0, 2000.0, 3.0);
        run.totals.figures.sql = Some(Sql::default());
        assert!(errors_table(&run).is_none(), "no error, no table");
        assert_eq!(errors_line(&run), "");
        run.totals.figures.sql = Some(Sql {
            ignored_errors: 8,
            errors_by_code: [("1205".to_string(), 2), ("1213".to_string(), 5)].into(),
            ..Default::default()
        });
        let t = errors_table(&run).unwrap();
        assert!(
            t.contains("<tr><td>1213</td><td>deadlock</td><td>5</td></tr><tr><td>1205</td><td>lock wait timeout</td><td>2</td></tr><tr><td>without a code</td><td>-</td><td>1</td></tr>"),
            "{t}"
        );
        assert!(t.contains("<p>8 errors ignored"), "{t}");
        assert_eq!(
            errors_line(&run),
            "<p class=\"errors\">Ignored errors by code: 1213 (deadlock) x 5, 1205 (lock wait timeout) x 2, without a code x 1</p>"
        );
    }

    #[test]
    fn the_constraint_check_says_each_types_mix_and_response_times() {
        let mut run = run_doc(4, 100.0, 2000.0, 3.0);
        assert!(constraint_table(&run).is_none(), "not TPC-C");
        let txn = |count: u64, within: u64| TxnJson {
            count,
            within_limit: within,
            ..Default::default()
        };
        // Stock-Level under its 4 % of the mix; Delivery 80 % within its limit.
        run.totals.figures.tpcc = Some(Tpcc {
            tpmc: 100.0,
            constraints_ok: false,
            transactions: [
                ("new_order".to_string(), txn(450, 450)),
                ("payment".to_string(), txn(430, 430)),
                ("order_status".to_string(), txn(50, 50)),
                ("delivery".to_string(), txn(50, 40)),
                ("stock_level".to_string(), txn(20, 20)),
            ]
            .into(),
        });
        let t = constraint_table(&run).unwrap();
        assert!(t.contains("Constraint Check: a check failed [NG]"), "{t}");
        assert!(
            t.contains("<tr data-type=\"stock_level\"><td>Stock-Level</td><td>2.00</td><td>4.0</td><td>[NG]</td><td>100.00</td><td>[OK]</td></tr>"),
            "{t}"
        );
        assert!(
            t.contains("<tr data-type=\"delivery\"><td>Delivery</td><td>5.00</td><td>4.0</td><td>[OK]</td><td>80.00</td><td>[NG]</td></tr>"),
            "{t}"
        );
        assert!(
            t.contains(
                "<tr data-type=\"new_order\"><td>New-Order</td><td>45.00</td><td>-</td><td>-</td>"
            ),
            "{t}"
        );
    }
}
