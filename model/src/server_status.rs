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
/// The replication ones come from [`REPLICA_QUERY`] and [`MARIADB_GTID_QUERY`], where the
/// server has them.
pub const MYSQL_GAUGES: [&str; 7] = [
    "Threads_running",
    "Threads_connected",
    REPLICA_LAG,
    REPLICA_SQL_RUNNING,
    REPLICA_IO_RUNNING,
    PRIMARY_POSITION,
    REPLICA_POSITION,
];

/// Levels that count the reading's own connection, which [`change`] leaves out.
const CONNECTION_LEVELS: [&str; 3] = ["Threads_running", "Threads_connected", "active_backends"];

/// A replica's lag as the server says it (Seconds_Behind_Master; PostgreSQL: seconds since
/// the last replayed transaction's commit), in milliseconds.
pub const REPLICA_LAG: &str = "replica_lag_ms";
/// Whether a MySQL/MariaDB replica's SQL and I/O threads run (1) or not (0).
pub const REPLICA_SQL_RUNNING: &str = "replica_sql_running";
pub const REPLICA_IO_RUNNING: &str = "replica_io_running";
/// How far a primary has written (MariaDB: gtid_binlog_pos's sequence number; PostgreSQL:
/// the WAL position), and how far a replica has applied (gtid_slave_pos; the replayed WAL
/// position): the coordinator times a replica's position on its primary's clock.
pub const PRIMARY_POSITION: &str = "primary_position";
/// On a PostgreSQL primary: its standbys' largest replay_lag, in milliseconds, which the
/// coordinator weighs into its replicas' lag.
pub const STANDBY_LAG: &str = "standby_replay_lag_ms";
pub const REPLICA_POSITION: &str = "replica_position";

/// A replica's status (MariaDB, MySQL before 8.4): one positional row, or none on a server
/// that is not a replica.
pub const REPLICA_QUERY: &str = "SHOW SLAVE STATUS";
/// The same on MySQL 8.0.22 and later (8.4 has no SHOW SLAVE STATUS).
pub const REPLICA_QUERY_NEW: &str = "SHOW REPLICA STATUS";
/// MariaDB's GTID positions as (name, value) rows (none elsewhere). A SHOW, not a SELECT:
/// the server's Com_select counts the load's statements only.
pub const MARIADB_GTID_QUERY: &str =
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('gtid_binlog_pos', 'gtid_slave_pos')";

/// The replica's levels from a row of [`REPLICA_QUERY`], by the column order both MySQL and
/// MariaDB document (I/O thread running 10, SQL thread running 11, seconds behind 32).
pub fn replica_status(row: &[Option<String>]) -> Reading {
    let mut out = Reading::new();
    if row.len() < 33 {
        return out;
    }
    let running = |i: usize| row[i].as_deref().map(|v| u64::from(v == "Yes"));
    if let Some(v) = running(10) {
        out.insert(REPLICA_IO_RUNNING.into(), v);
    }
    if let Some(v) = running(11) {
        out.insert(REPLICA_SQL_RUNNING.into(), v);
    }
    // NULL while the SQL thread does not run: no figure, the positions tell.
    if let Some(s) = row[32].as_deref().and_then(|v| v.parse::<u64>().ok()) {
        out.insert(REPLICA_LAG.into(), s * 1000);
    }
    out
}

/// The highest sequence number of a MariaDB GTID list (`0-1-1234,1-2-7`), None when empty.
pub fn gtid_seq(list: &str) -> Option<u64> {
    list.split(',')
        .filter_map(|g| g.trim().rsplit('-').next()?.parse::<u64>().ok())
        .max()
}

/// The positions from the rows of [`MARIADB_GTID_QUERY`].
pub fn gtid_positions(rows: &[Vec<Option<String>>]) -> Reading {
    let mut out = Reading::new();
    for r in rows {
        let (Some(Some(name)), Some(Some(value))) = (r.first(), r.get(1)) else {
            continue;
        };
        let key = match name.as_str() {
            "gtid_binlog_pos" => PRIMARY_POSITION,
            "gtid_slave_pos" => REPLICA_POSITION,
            _ => continue,
        };
        if let Some(seq) = gtid_seq(value) {
            out.insert(key.into(), seq);
        }
    }
    out
}

/// PostgreSQL's replication, as (name, value) rows: the WAL written (on a primary) or
/// replayed (on a standby) as a byte position; on a standby the time since the last
/// replayed commit while it has WAL received but not yet replayed (0 when it has replayed
/// all it received: an idle primary is not a lagging standby); on a primary its standbys'
/// largest `replay_lag` (pg_stat_replication; needs pg_monitor or pg_read_all_stats).
pub const PG_REPLICATION_QUERY: &str = "SELECT 'primary_position', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint::text WHERE NOT pg_is_in_recovery() \
     UNION ALL SELECT 'replica_position', pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint::text WHERE pg_is_in_recovery() \
     UNION ALL SELECT 'replica_lag_ms', CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN '0' \
     ELSE (1000 * EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()))::bigint::text END \
     WHERE pg_is_in_recovery() AND pg_last_xact_replay_timestamp() IS NOT NULL \
     UNION ALL SELECT 'standby_replay_lag_ms', (1000 * EXTRACT(EPOCH FROM max(replay_lag)))::bigint::text \
     FROM pg_stat_replication WHERE NOT pg_is_in_recovery() HAVING max(replay_lag) IS NOT NULL";

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

/// PostgreSQL's levels: the backends running a statement at the reading, and replication.
pub const PG_GAUGES: [&str; 5] = [
    "active_backends",
    REPLICA_LAG,
    PRIMARY_POSITION,
    REPLICA_POSITION,
    STANDBY_LAG,
];

/// The statement that reads MySQL/MariaDB's figures: (Variable_name, Value) rows. A name
/// the server does not have (MySQL 8 has no query cache) is simply not among them.
pub fn mysql_query() -> String {
    let names: Vec<String> = MYSQL_COUNTERS
        .iter()
        .chain(MYSQL_GAUGES[..2].iter())
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
            let own = u64::from(CONNECTION_LEVELS.contains(&name.as_str()));
            out.insert(name.clone(), now.saturating_sub(own));
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
    fn replication_levels_come_from_the_replica_row_and_the_gtid_positions() {
        let mut row: Vec<Option<String>> = vec![Some("x".into()); 40];
        row[10] = Some("Yes".into());
        row[11] = Some("No".into());
        row[32] = None;
        let r = replica_status(&row);
        assert_eq!(r.get(REPLICA_IO_RUNNING), Some(&1));
        assert_eq!(r.get(REPLICA_SQL_RUNNING), Some(&0));
        assert_eq!(r.get(REPLICA_LAG), None);
        row[32] = Some("3".into());
        assert_eq!(replica_status(&row).get(REPLICA_LAG), Some(&3000));
        assert!(replica_status(&row[..20]).is_empty());
        assert_eq!(gtid_seq("0-1-1234,1-2-7"), Some(1234));
        assert_eq!(gtid_seq(""), None);
        let row = |k: &str, v: &str| vec![Some(k.to_string()), Some(v.to_string())];
        let p = gtid_positions(&[
            row("gtid_binlog_pos", "0-1-50"),
            row("gtid_slave_pos", "0-1-42"),
        ]);
        assert_eq!((p[PRIMARY_POSITION], p[REPLICA_POSITION]), (50, 42));
        // Positions and lag are levels: the reading's connection is not taken off them.
        let prev = r_of(&[(PRIMARY_POSITION, 10)]);
        let cur = r_of(&[(PRIMARY_POSITION, 50), ("Threads_running", 1)]);
        assert_eq!(
            change(&prev, &cur, &MYSQL_GAUGES),
            Change::Values(r_of(&[(PRIMARY_POSITION, 50), ("Threads_running", 0)]))
        );
    }

    fn r_of(pairs: &[(&str, u64)]) -> Reading {
        r(pairs)
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
        for n in MYSQL_COUNTERS.iter().chain(&MYSQL_GAUGES[..2]) {
            assert!(my.contains(&format!("'{n}'")), "{n}");
        }
        for v in [130000, 150000, 170000] {
            let pg = pg_query(v);
            let names = PG_COUNTERS.iter().chain(&PG_GAUGES[..1]);
            let expected = names.filter(|n| v >= 140000 || **n != "wal_bytes");
            for n in expected {
                assert!(pg.contains(&format!("'{n}'")), "{n} for {v}");
            }
            assert_eq!(pg.contains("pg_stat_checkpointer"), v >= 170000);
        }
        for n in &PG_GAUGES[1..] {
            assert!(PG_REPLICATION_QUERY.contains(&format!("'{n}'")), "{n}");
        }
    }
}
