//! What a database server says about its own work, read over SQL once per interval per
//! target: the status figures of MySQL/MariaDB (`SHOW GLOBAL STATUS`) and PostgreSQL (the
//! `pg_stat_*` views), the query that reads them, and the change between two readings.
//!
//! Both queries return rows of (name, value), so a reading is a map whatever the server.
//! Counters only grow while the server runs; one that went backwards means the server
//! restarted, and the reading starts a new baseline instead of a change.

use std::collections::BTreeMap;

/// MySQL/MariaDB status counters read each interval (their change is what counts).
/// MariaDB (10.6 on) has no Innodb_rows_* and counts rows in Rows_read and the Handler_*
/// writes instead; MySQL has both.
pub const MYSQL_COUNTERS: [&str; 22] = [
    "Questions",
    "Com_select",
    "Com_commit",
    "Com_rollback",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Rows_read",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Qcache_hits",
    "Qcache_inserts",
    "Qcache_not_cached",
];

/// MySQL/MariaDB status values that are a level, not a count: their value at the reading.
pub const MYSQL_GAUGES: [&str; 2] = ["Threads_running", "Threads_connected"];

/// PostgreSQL's counters, as [`pg_query`] names them: pg_stat_database's for the
/// benchmark's database, pg_stat_wal's bytes and the checkpointer's counts.
pub const PG_COUNTERS: [&str; 12] = [
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "wal_bytes",
    "checkpoints",
    "buffers_checkpoint",
];

/// PostgreSQL's levels: the backends running a statement at the reading.
pub const PG_GAUGES: [&str; 1] = ["active_backends"];

/// The statement that reads MySQL/MariaDB's figures: (Variable_name, Value) rows. A name
/// the server does not have (MySQL 8 has no query cache) is simply not among them.
pub fn mysql_query() -> String {
    let names: Vec<String> = MYSQL_COUNTERS
        .iter()
        .chain(MYSQL_GAUGES.iter())
        .map(|n| format!("'{n}'"))
        .collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(", ")
    )
}

/// The statement that reads PostgreSQL's figures as (name, value) rows, for a server of
/// `version_num` (`SHOW server_version_num`): 17 moved the checkpointer's counters from
/// pg_stat_bgwriter to pg_stat_checkpointer; before 14 there is no pg_stat_wal.
pub fn pg_query(version_num: u32) -> String {
    let db: Vec<String> = PG_COUNTERS[..9]
        .iter()
        .map(|c| format!("('{c}', d.{c})"))
        .collect();
    let mut q = format!(
        "SELECT s.name, s.value::text FROM pg_stat_database d, LATERAL (VALUES {}) AS s(name, value) \
         WHERE d.datname = current_database()",
        db.join(", ")
    );
    if version_num >= 140000 {
        q.push_str(" UNION ALL SELECT 'wal_bytes', wal_bytes::bigint::text FROM pg_stat_wal");
    }
    if version_num >= 170000 {
        q.push_str(
            " UNION ALL SELECT 'checkpoints', (num_timed + num_requested)::text FROM pg_stat_checkpointer \
             UNION ALL SELECT 'buffers_checkpoint', buffers_written::text FROM pg_stat_checkpointer",
        );
    } else {
        q.push_str(
            " UNION ALL SELECT 'checkpoints', (checkpoints_timed + checkpoints_req)::text FROM pg_stat_bgwriter \
             UNION ALL SELECT 'buffers_checkpoint', buffers_checkpoint::text FROM pg_stat_bgwriter",
        );
    }
    q.push_str(
        " UNION ALL SELECT 'active_backends', count(*)::text FROM pg_stat_activity WHERE state = 'active'",
    );
    q
}

/// One reading: each figure's value by name.
pub type Reading = BTreeMap<String, u64>;

/// A reading from the rows of [`mysql_query`] or [`pg_query`]; rows whose value is not a
/// whole number are left out.
pub fn reading(rows: &[Vec<Option<String>>]) -> Reading {
    rows.iter()
        .filter_map(|r| {
            let name = r.first()?.as_ref()?;
            let value = r.get(1)?.as_ref()?.trim().parse::<u64>().ok()?;
            Some((name.clone(), value))
        })
        .collect()
}

/// What changed between two readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Each counter's growth, and each gauge (`gauges`) at the later reading, less the
    /// reading's own connection (which is running and connected while it reads).
    Values(Reading),
    /// A counter went backwards: the server restarted between the readings. The later
    /// reading is the new baseline; this interval has no figures.
    Restarted,
}

/// The change from `prev` to `cur`; names in only one of them are left out.
pub fn change(prev: &Reading, cur: &Reading, gauges: &[&str]) -> Change {
    let mut out = Reading::new();
    for (name, &now) in cur {
        if gauges.contains(&name.as_str()) {
            out.insert(name.clone(), now.saturating_sub(1));
            continue;
        }
        let Some(&before) = prev.get(name) else {
            continue;
        };
        if now < before {
            return Change::Restarted;
        }
        out.insert(name.clone(), now - before);
    }
    Change::Values(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pairs: &[(&str, u64)]) -> Reading {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn counters_change_by_their_growth_and_gauges_give_their_level_without_the_reader() {
        let prev = r(&[("Questions", 100), ("Threads_running", 9), ("Gone", 1)]);
        let cur = r(&[("Questions", 160), ("Threads_running", 3), ("New", 5)]);
        assert_eq!(
            change(&prev, &cur, &MYSQL_GAUGES),
            Change::Values(r(&[("Questions", 60), ("Threads_running", 2)]))
        );
    }

    #[test]
    fn a_counter_that_went_backwards_is_a_restart() {
        let prev = r(&[("Questions", 100), ("Com_commit", 10)]);
        let cur = r(&[("Questions", 5), ("Com_commit", 12)]);
        assert_eq!(change(&prev, &cur, &MYSQL_GAUGES), Change::Restarted);
    }

    #[test]
    fn rows_become_a_reading_and_odd_values_are_left_out() {
        let row = |k: &str, v: Option<&str>| vec![Some(k.to_string()), v.map(String::from)];
        let rows = vec![
            row("Questions", Some("42")),
            row("Innodb_have_atomic_builtins", Some("ON")),
            row("wal_bytes", None),
            vec![None],
        ];
        assert_eq!(reading(&rows), r(&[("Questions", 42)]));
    }

    #[test]
    fn the_queries_name_every_figure() {
        let my = mysql_query();
        for n in MYSQL_COUNTERS.iter().chain(&MYSQL_GAUGES) {
            assert!(my.contains(&format!("'{n}'")), "{n}");
        }
        for v in [130000, 150000, 170000] {
            let pg = pg_query(v);
            let names = PG_COUNTERS.iter().chain(&PG_GAUGES);
            let expected = names.filter(|n| v >= 140000 || **n != "wal_bytes");
            for n in expected {
                assert!(pg.contains(&format!("'{n}'")), "{n} for {v}");
            }
            assert_eq!(pg.contains("pg_stat_checkpointer"), v >= 170000);
        }
    }
}
