//! What differs between MySQL/MariaDB and PostgreSQL in the SQL the agent sends, in one
//! place: column types, table options, listing and finding tables, the server's clock,
//! settings for a bulk load, what comes before and after keys are added, dropping tables,
//! NULL-safe comparison, string literals, the sysbench tables' DDL and their prewarm reads.
//! A workload asks its target's [`Dialect`] (or its client's, [`crate::sql::Client::DIALECT`])
//! and never branches on the driver itself; a third database is a new variant here.

use fleetbench_model::workloads::oltp::{self as sb, pg as sb_pg};
use fleetbench_model::workloads::server::Driver;

/// The SQL dialect of one kind of database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL and MariaDB (and proxies that speak their protocol).
    Mysql,
    Pgsql,
}

impl Dialect {
    /// The dialect of a target's driver.
    pub const fn of(driver: Driver) -> Dialect {
        match driver {
            Driver::Mysql => Dialect::Mysql,
            Driver::Pgsql => Dialect::Pgsql,
        }
    }

    /// A column type as this database spells MySQL's `sql_type`: on PostgreSQL smallint
    /// for tinyint (it has no one-byte integer), timestamp (without time zone, as MySQL's
    /// datetime) for datetime, numeric for decimal, integer for int; the others (smallint,
    /// bigint, char, varchar, text) are spelled alike.
    pub fn column_type(self, sql_type: &str) -> String {
        if self == Dialect::Mysql {
            return sql_type.to_string();
        }
        if let Some(rest) = sql_type.strip_prefix("decimal") {
            return format!("numeric{rest}");
        }
        match sql_type {
            "tinyint" => "smallint".into(),
            "datetime" => "timestamp".into(),
            "int" => "integer".into(),
            other => other.into(),
        }
    }

    /// What follows a CREATE TABLE's closing parenthesis: MySQL's storage engine, nothing
    /// on PostgreSQL.
    pub fn table_options(self, engine: &str) -> String {
        match self {
            Dialect::Mysql => format!(" ENGINE={engine}"),
            Dialect::Pgsql => String::new(),
        }
    }

    /// A query whose rows' first column names the tables of the connection's database
    /// (PostgreSQL: of its current schema, where CREATE TABLE puts them).
    pub fn list_tables(self) -> &'static str {
        match self {
            Dialect::Mysql => "SHOW TABLES",
            Dialect::Pgsql => "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
        }
    }

    /// A text query that returns a row if and only if `table` exists, without counting as
    /// a SELECT on MySQL (Com_select stays as the run leaves it).
    pub fn table_exists(self, table: &str) -> String {
        match self {
            Dialect::Mysql => format!("SHOW TABLES LIKE '{table}'"),
            Dialect::Pgsql => format!(
                "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = '{table}'"
            ),
        }
    }

    /// A query of the server's clock as 'YYYY-MM-DD HH:MM:SS' (local time).
    pub fn now_text(self) -> &'static str {
        match self {
            Dialect::Mysql => "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')",
            Dialect::Pgsql => "SELECT to_char(LOCALTIMESTAMP, 'YYYY-MM-DD HH24:MI:SS')",
        }
    }

    /// The session setting for loading data that is consistent by construction: MySQL
    /// need not check keys row by row; PostgreSQL's commits need not wait for their WAL
    /// flush (a load cut short is redone from cleanup; its keys come after the load).
    pub fn bulk_load_session(self) -> &'static str {
        match self {
            Dialect::Mysql => "SET SESSION foreign_key_checks = 0, unique_checks = 0",
            Dialect::Pgsql => "SET synchronous_commit = off",
        }
    }

    /// What to set before adding indexes and foreign keys to loaded tables: on MySQL the
    /// checks off, so that InnoDB adds foreign keys in place instead of copying each table
    /// (PostgreSQL validates each key with one query, without a copy).
    pub fn before_keys(self) -> Option<&'static str> {
        match self {
            Dialect::Mysql => Some("SET SESSION foreign_key_checks = 0, unique_checks = 0"),
            Dialect::Pgsql => None,
        }
    }

    /// What to run on each table after its load and keys: PostgreSQL's VACUUM ANALYZE
    /// (statistics for the planner, hint bits and the visibility map set once rather than
    /// by the run's first readers), nothing on MySQL.
    pub fn after_load(self, table: &str) -> Option<String> {
        match self {
            Dialect::Mysql => None,
            Dialect::Pgsql => Some(format!("VACUUM ANALYZE {table}")),
        }
    }

    /// What [`Dialect::after_load`] did to the tables, for the line that says the keys were
    /// added (", tables vacuumed and analysed"), or "".
    pub fn after_load_said(self) -> &'static str {
        match self {
            Dialect::Mysql => "",
            Dialect::Pgsql => ", tables vacuumed and analysed",
        }
    }

    /// The statements that drop `tables` (those there; the others are skipped), each with
    /// the number of tables it drops. MySQL's go table by table with the foreign-key
    /// checks off, so the keys between them need no order; PostgreSQL drops them all in
    /// one statement, without CASCADE, so nothing outside them is touched.
    pub fn drop_tables(self, tables: &[&str]) -> Vec<(String, u64)> {
        match self {
            Dialect::Mysql => std::iter::once(("SET SESSION foreign_key_checks = 0".into(), 0))
                .chain(
                    tables
                        .iter()
                        .map(|t| (format!("DROP TABLE IF EXISTS {t}"), 1)),
                )
                .collect(),
            Dialect::Pgsql => vec![(
                format!("DROP TABLE IF EXISTS {}", tables.join(", ")),
                tables.len() as u64,
            )],
        }
    }

    /// `a` and `b` differ, NULL being a value like any other.
    pub fn differ(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Mysql => format!("NOT ({a} <=> {b})"),
            Dialect::Pgsql => format!("{a} IS DISTINCT FROM {b}"),
        }
    }

    /// Appends `s` to `out` as a string literal. MySQL: quote and backslash escaped with a
    /// backslash. PostgreSQL: quotes doubled; with a backslash, an escape string
    /// (`E'...'`, backslashes doubled), so the value is the same whatever the server's
    /// standard_conforming_strings.
    #[inline]
    pub fn push_literal(self, out: &mut String, s: &str) {
        match self {
            Dialect::Mysql => {
                out.push('\'');
                for ch in s.chars() {
                    if ch == '\'' || ch == '\\' {
                        out.push('\\');
                    }
                    out.push(ch);
                }
            }
            Dialect::Pgsql => {
                if s.contains('\\') {
                    out.push('E');
                }
                out.push('\'');
                for ch in s.chars() {
                    if ch == '\'' || ch == '\\' {
                        out.push(ch);
                    }
                    out.push(ch);
                }
            }
        }
        out.push('\'');
    }

    /// An auto-increment id is assigned only when the INSERT leaves the column out
    /// (PostgreSQL's SERIAL refuses NULL); MySQL assigns one for NULL too.
    pub fn omits_serial_id(self) -> bool {
        self == Dialect::Pgsql
    }

    /// sysbench's CREATE TABLE of sbtest table `table` (`bulk`: bulk_insert's two-column
    /// table), as sysbench's driver for this database sends it.
    pub fn sbtest_table(self, table: &str, bulk: bool, t: &SbtestTable<'_>) -> String {
        match (self, bulk) {
            (Dialect::Mysql, true) => sb::create_bulk_table_sql(table, t.engine),
            (Dialect::Pgsql, true) => sb_pg::create_bulk_table_sql(table),
            (Dialect::Mysql, false) => {
                sb::create_table_sql(table, t.auto_inc, t.secondary, t.engine, t.options)
            }
            (Dialect::Pgsql, false) => {
                sb_pg::create_table_sql(table, t.auto_inc, t.secondary, t.options)
            }
        }
    }

    /// With `--secondary` (the id an index apart from the primary key), the id index
    /// created after the load where CREATE TABLE cannot declare it (PostgreSQL).
    pub fn sbtest_id_index(self, n: u32, table: &str, secondary: bool) -> Option<String> {
        (self == Dialect::Pgsql && secondary)
            .then(|| format!("CREATE INDEX xid_{n} ON {table}(id)"))
    }

    /// The two reads that bring sbtest table `table`'s first `limit` rows into the buffer
    /// pool: by the primary key, then by the secondary index on k. MySQL forces the key;
    /// PostgreSQL has no hints, so the rows are read in key order (the primary key's index
    /// and the heap), then the k values in order (the secondary index).
    pub fn prewarm_reads(self, table: &str, limit: u64) -> [String; 2] {
        match self {
            Dialect::Mysql => [
                format!(
                    "SELECT AVG(id) FROM (SELECT * FROM {table} FORCE KEY (PRIMARY) LIMIT {limit}) t"
                ),
                format!(
                    "SELECT COUNT(*) FROM (SELECT * FROM {table} WHERE k LIKE '%0%' LIMIT {limit}) t"
                ),
            ],
            Dialect::Pgsql => [
                format!("SELECT AVG(id) FROM (SELECT * FROM {table} ORDER BY id LIMIT {limit}) t"),
                format!("SELECT COUNT(*) FROM (SELECT k FROM {table} ORDER BY k LIMIT {limit}) t"),
            ],
        }
    }
}

/// The options of an sbtest table's DDL.
#[derive(Debug, Clone, Copy)]
pub struct SbtestTable<'a> {
    pub auto_inc: bool,
    pub secondary: bool,
    /// MySQL's storage engine.
    pub engine: &'a str,
    /// `--create-table-options`.
    pub options: &'a str,
}

/// Runs `$body` with `$C` standing for the lean client of `$driver`'s database: the one
/// place that maps a driver to its client type, for code generic over [`crate::sql::Client`].
#[macro_export]
macro_rules! with_lean_client {
    ($driver:expr, $C:ident => $body:expr) => {
        match $crate::sql::dialect::Dialect::of($driver) {
            $crate::sql::dialect::Dialect::Mysql => {
                type $C = $crate::sql::mysql::Conn;
                $body
            }
            $crate::sql::dialect::Dialect::Pgsql => {
                type $C = $crate::sql::pgsql::PgConn;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_and_backslashes() {
        let mut s = String::new();
        Dialect::Mysql.push_literal(&mut s, r"O'Brien\x");
        assert_eq!(s, r"'O\'Brien\\x'");
    }

    #[test]
    fn postgresql_quoting_doubles_quotes_and_escapes_backslashes_only_when_there() {
        let mut s = String::new();
        Dialect::Pgsql.push_literal(&mut s, "O'Brien");
        assert_eq!(s, "'O''Brien'");
        s.clear();
        Dialect::Pgsql.push_literal(&mut s, r"a\b'c");
        assert_eq!(s, r"E'a\\b''c'");
        s.clear();
        Dialect::Pgsql.push_literal(&mut s, "BARBARBAR");
        assert_eq!(s, "'BARBARBAR'");
    }

    #[test]
    fn types_and_drops_follow_the_database() {
        assert_eq!(Dialect::Pgsql.column_type("decimal(4,2)"), "numeric(4,2)");
        assert_eq!(Dialect::Mysql.column_type("tinyint"), "tinyint");
        assert_eq!(Dialect::Pgsql.column_type("tinyint"), "smallint");
        let my = Dialect::Mysql.drop_tables(&["a", "b"]);
        assert_eq!(my.iter().map(|d| d.1).sum::<u64>(), 2);
        assert_eq!(my.len(), 3);
        let pg = Dialect::Pgsql.drop_tables(&["a", "b"]);
        assert_eq!(pg, vec![("DROP TABLE IF EXISTS a, b".to_string(), 2)]);
    }
}
