//! sysbench 1.0's OLTP workloads as a run carries them: configuration, statement texts,
//! schema, and which statements one event (transaction) runs for each script.

pub mod legacy;
pub mod tls;

use crate::options::{Codec, OptionValue, Options, Words, declare_options};
use crate::options::{Declared, SpecError};
use crate::workloads::server::{ServerOptions, Target};
use std::fmt::Write;

/// sysbench's OLTP scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    Insert,
    Delete,
    UpdateIndex,
    UpdateNonIndex,
    SelectRandomPoints,
    SelectRandomRanges,
    /// One table per thread (sbtest1..=threads, columns id and k); an event appends one row
    /// to the thread's pending multi-row INSERT, sent when it reaches ~512 KiB.
    BulkInsert,
    /// 0.4's `--oltp-test-mode=sp`: an event calls the stored procedure `--oltp-sp-name`
    /// (the user's own, created beside the tables).
    StoredProcedure,
}

impl Script {
    pub const ALL: [Script; 12] = [
        Script::ReadWrite,
        Script::ReadOnly,
        Script::WriteOnly,
        Script::PointSelect,
        Script::Insert,
        Script::Delete,
        Script::UpdateIndex,
        Script::UpdateNonIndex,
        Script::SelectRandomPoints,
        Script::SelectRandomRanges,
        Script::BulkInsert,
        Script::StoredProcedure,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Script::ReadWrite => "oltp_read_write",
            Script::ReadOnly => "oltp_read_only",
            Script::WriteOnly => "oltp_write_only",
            Script::PointSelect => "oltp_point_select",
            Script::Insert => "oltp_insert",
            Script::Delete => "oltp_delete",
            Script::UpdateIndex => "oltp_update_index",
            Script::UpdateNonIndex => "oltp_update_non_index",
            Script::SelectRandomPoints => "select_random_points",
            Script::SelectRandomRanges => "select_random_ranges",
            Script::BulkInsert => "bulk_insert",
            Script::StoredProcedure => "oltp_sp",
        }
    }

    pub fn from_name(name: &str) -> Option<Script> {
        Script::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether an event is one statement (no BEGIN/COMMIT around several).
    pub fn single_statement(self) -> bool {
        !matches!(
            self,
            Script::ReadWrite | Script::ReadOnly | Script::WriteOnly | Script::BulkInsert
        )
    }
}

/// Statement kinds; also the keys of the per-kind latency figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Point,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    RandomPoints,
    RandomRanges,
    Begin,
    Commit,
    /// `CALL` of the stored procedure (oltp_sp).
    Call,
}

impl Kind {
    pub const COUNT: usize = 14;
    pub const ALL: [Kind; Kind::COUNT] = [
        Kind::Point,
        Kind::SimpleRange,
        Kind::SumRange,
        Kind::OrderRange,
        Kind::DistinctRange,
        Kind::IndexUpdate,
        Kind::NonIndexUpdate,
        Kind::Delete,
        Kind::Insert,
        Kind::RandomPoints,
        Kind::RandomRanges,
        Kind::Begin,
        Kind::Commit,
        Kind::Call,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Point => "point_select",
            Kind::SimpleRange => "simple_range",
            Kind::SumRange => "sum_range",
            Kind::OrderRange => "order_range",
            Kind::DistinctRange => "distinct_range",
            Kind::IndexUpdate => "index_update",
            Kind::NonIndexUpdate => "non_index_update",
            Kind::Delete => "delete",
            Kind::Insert => "insert",
            Kind::RandomPoints => "random_points",
            Kind::RandomRanges => "random_ranges",
            Kind::Begin => "begin",
            Kind::Commit => "commit",
            Kind::Call => "call",
        }
    }

    /// Statements that return a result set count as reads.
    #[inline]
    pub fn is_select(self) -> bool {
        matches!(
            self,
            Kind::Point
                | Kind::SimpleRange
                | Kind::SumRange
                | Kind::OrderRange
                | Kind::DistinctRange
                | Kind::RandomPoints
                | Kind::RandomRanges
        )
    }

    /// Statement text for `table`; `points`/`ranges` size the IN list and the OR'ed ranges,
    /// `procedure` is what a call calls.
    pub fn sql(self, table: &str, points: u32, ranges: u32, procedure: &str) -> String {
        match self {
            Kind::Point => format!("SELECT c FROM {table} WHERE id=?"),
            Kind::SimpleRange => format!("SELECT c FROM {table} WHERE id BETWEEN ? AND ?"),
            Kind::SumRange => format!("SELECT SUM(k) FROM {table} WHERE id BETWEEN ? AND ?"),
            Kind::OrderRange => {
                format!("SELECT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::DistinctRange => {
                format!("SELECT DISTINCT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::IndexUpdate => format!("UPDATE {table} SET k=k+1 WHERE id=?"),
            Kind::NonIndexUpdate => format!("UPDATE {table} SET c=? WHERE id=?"),
            Kind::Delete => format!("DELETE FROM {table} WHERE id=?"),
            Kind::Insert => format!("INSERT INTO {table} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            Kind::RandomPoints => {
                let marks = vec!["?"; points.max(1) as usize].join(", ");
                format!("SELECT id, k, c, pad FROM {table} WHERE k IN ({marks})")
            }
            Kind::RandomRanges => {
                let ors = vec!["k BETWEEN ? AND ?"; ranges.max(1) as usize].join(" OR ");
                format!("SELECT count(k) FROM {table} WHERE {ors}")
            }
            Kind::Begin => "BEGIN".into(),
            Kind::Commit => "COMMIT".into(),
            Kind::Call => format!("CALL {procedure}()"),
        }
    }
}

/// Validated OLTP options as the agent uses them.
#[derive(Debug, Clone, PartialEq)]
pub struct OltpConfig {
    pub script: Script,
    pub targets: Vec<Target>,
    /// (table number, index into `targets`) of the tables this agent uses.
    pub tables: Vec<(u32, usize)>,
    /// The table and range sizes, statement counts, schema switches, transactions and
    /// reconnects, delays (declared options).
    pub options: OltpOptions,
    /// The storage engine and the server variables recorded (declared options).
    pub server: ServerOptions,
    /// Prepared statements and the errors to ignore (declared options).
    pub db: OltpDb,
    pub distribution: crate::rand::Distribution,
    /// Table options after `ENGINE = ...` in CREATE TABLE.
    pub create_options: String,
    /// 0.4's --oltp-table-name: the one table's name; empty = sbtest1..N.
    pub table_name: String,
    /// 0.4's --oltp-reconnect-mode=random: after each event, reconnect or not, at random.
    pub reconnect_random: bool,
    /// oltp_sp (0.4's --oltp-sp-name): the stored procedure an event calls, optionally
    /// `database.name`; empty for every other test.
    pub sp_name: String,
}

/// Whether `s` may follow `ENGINE = ...` in CREATE TABLE: letters, digits, spaces and
/// = ' , . ( ) _ - only, and no comment (`--`).
pub fn is_table_options(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || " =',.()_-".contains(c))
        && !s.contains("--")
}

/// Whether `name` is a table's name that goes into SQL unquoted: 1..=64 letters, digits
/// and `_`.
pub fn is_table_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` is a routine's name that goes into SQL unquoted: one or two (database
/// and routine) parts of letters, digits, `_` and `$`, each at most 64 long.
pub fn is_routine_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() <= 2
        && parts.iter().all(|p| {
            (1..=64).contains(&p.len())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
}

/// Longest delay (connect or think time) accepted: a minute.
pub const MAX_DELAY_US: u64 = 60_000_000;

/// The most placeholders one prepared statement may have in MySQL and MariaDB; bounds
/// --random-points (one each) and --number-of-ranges (two each).
pub const MAX_PLACEHOLDERS: u32 = 65_535;

/// `--table-size` and `--range-size`, as the plan and an agent decoding a Start both check
/// them: a row id fits MySQL's INT, and a range never runs past the table.
pub fn check_sizes(table_size: u64, range_size: u32) -> Result<(), SpecError> {
    if table_size == 0 || table_size > i32::MAX as u64 {
        return Err(SpecError::invalid(
            "table-size",
            table_size,
            "must be between 1 and 2147483647",
        ));
    }
    if range_size == 0 {
        return Err(SpecError::invalid("range-size", 0, "must be at least 1"));
    }
    if u64::from(range_size) > table_size {
        return Err(SpecError::RangeTooLarge {
            range: range_size,
            size: table_size,
        });
    }
    Ok(())
}

declare_options! {
    /// The OLTP options sysbench's oltp_common declares (1.0's names, 0.4/0.5's `oltp-`
    /// names as aliases): what an event runs and how the tables are made. Declared once, so
    /// the command line, `fleetbench TEST help`, a Start's option bag and the result document
    /// all follow from its entries.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct OltpOptions {
        /// `--table-size`: rows per table.
        pub table_size: u64 = option(
            "table-size",
            Count,
            "10000",
            "Number of rows per table",
            aliases = ["oltp-table-size"],
        );
        /// `--range-size`: rows a range SELECT spans.
        pub range_size: u32 = option(
            "range-size",
            Count,
            "100",
            "Range size for range SELECT queries",
            aliases = ["oltp-range-size"],
        );
        /// Statements of each kind per oltp_read_write/read_only/write_only transaction.
        pub point_selects: u32 = option(
            "point-selects",
            Count,
            "10",
            "Number of point SELECT queries per transaction",
            aliases = ["oltp-point-selects"],
        );
        pub simple_ranges: u32 = option(
            "simple-ranges",
            Count,
            "1",
            "Number of simple range SELECT queries per transaction",
            aliases = ["oltp-simple-ranges"],
        );
        pub sum_ranges: u32 = option(
            "sum-ranges",
            Count,
            "1",
            "Number of SELECT SUM() queries per transaction",
            aliases = ["oltp-sum-ranges"],
        );
        pub order_ranges: u32 = option(
            "order-ranges",
            Count,
            "1",
            "Number of SELECT ORDER BY queries per transaction",
            aliases = ["oltp-order-ranges"],
        );
        pub distinct_ranges: u32 = option(
            "distinct-ranges",
            Count,
            "1",
            "Number of SELECT DISTINCT queries per transaction",
            aliases = ["oltp-distinct-ranges"],
        );
        pub index_updates: u32 = option(
            "index-updates",
            Count,
            "1",
            "Number of UPDATE index queries per transaction",
            aliases = ["oltp-index-updates"],
        );
        pub non_index_updates: u32 = option(
            "non-index-updates",
            Count,
            "1",
            "Number of UPDATE non-index queries per transaction",
            aliases = ["oltp-non-index-updates"],
        );
        pub delete_inserts: u32 = option(
            "delete-inserts",
            Count,
            "1",
            "Number of DELETE/INSERT combinations per transaction",
            aliases = ["oltp-delete-inserts"],
        );
        /// `--range-selects=off` drops the four range kinds whatever their counts.
        pub range_selects: bool = option(
            "range-selects",
            Flag,
            "on",
            "Enable/disable all range SELECT queries",
        );
        /// `--auto-inc`: the id column is AUTO_INCREMENT and inserts leave it to the server.
        pub auto_inc: bool = option(
            "auto-inc",
            Flag,
            "on",
            "Use AUTO_INCREMENT column as Primary Key",
            aliases = ["oltp-auto-inc"],
        );
        /// `--secondary`: the id is a secondary index, not the PRIMARY KEY.
        pub secondary: bool = option(
            "secondary",
            Flag,
            "off",
            "Use a secondary index in place of the PRIMARY KEY",
        );
        /// `--create-secondary`: an index on k beside the key.
        pub create_secondary: bool = option(
            "create-secondary",
            Flag,
            "on",
            "Create a secondary index in addition to the PRIMARY KEY",
        );
        /// select_random_points: values in the IN list.
        pub random_points: u32 = option(
            "random-points",
            Count,
            "10",
            "select_random_points: number of random points",
        );
        /// select_random_ranges: ranges OR'ed together, and each one's width.
        pub number_of_ranges: u32 = option(
            "number-of-ranges",
            Count,
            "10",
            "select_random_ranges: number of ranges",
        );
        pub delta: u32 = option(
            "delta",
            Count,
            "5",
            "select_random_ranges: delta of each range",
        );
        /// `--skip-trx`: no BEGIN/COMMIT around a transaction's statements (the plan also
        /// sets it for an engine without transactions, 0.4's --mysql-engine-trx).
        pub skip_trx: bool = option(
            "skip-trx",
            Flag,
            "off",
            "Don't start explicit transactions",
            aliases = ["oltp-skip-trx"],
        );
        /// `--reconnect`: reconnect after every N events per thread; 0 = never (0.4's
        /// --oltp-reconnect-mode=transaction is 1).
        pub reconnect: u64 = option(
            "reconnect",
            Count,
            "0",
            "Reconnect after every N events per thread; 0 = never",
        );
        /// 0.4's `--oltp-connect-delay`: microseconds to sleep after opening each connection.
        pub connect_delay_us: u64 = option(
            "oltp-connect-delay",
            Count,
            "0",
            "0.4: microseconds to sleep after opening each connection",
        );
        /// 0.4's `--oltp-user-delay-min/max`: think time between two events of a thread,
        /// uniform in [min, max] microseconds; not part of any event's latency.
        pub user_delay_us: (u64, u64) = option(
            "oltp-user-delay-min",
            Count,
            "0",
            "0.4: least think time between a thread's events, in microseconds",
        ), option(
            "oltp-user-delay-max",
            Count,
            "",
            "0.4: most think time between a thread's events, in microseconds [default: the minimum]",
        ) => MinMax;
    }
    check = OltpOptions::bounds;
}

/// `--oltp-user-delay-min` and `--oltp-user-delay-max` as one range: a minimum alone is a
/// fixed delay.
struct MinMax;

impl Codec<(u64, u64), 2> for MinMax {
    fn read(&self, o: &Options, [min, max]: [&'static str; 2]) -> Result<(u64, u64), SpecError> {
        let lo = o.num(min)?;
        let hi = match o.text(max) {
            "" => lo,
            _ => o.num(max)?,
        };
        Ok((lo, hi))
    }

    fn write(&self, &(lo, hi): &(u64, u64)) -> [String; 2] {
        [lo.to_string(), hi.to_string()]
    }
}

impl OltpOptions {
    fn bounds(&self) -> Result<(), SpecError> {
        check_sizes(self.table_size, self.range_size)?;
        if self.random_points > MAX_PLACEHOLDERS {
            return Err(SpecError::Options(format!(
                "--random-points={} is more than the {MAX_PLACEHOLDERS} placeholders a statement may have",
                self.random_points
            )));
        }
        if self.number_of_ranges > MAX_PLACEHOLDERS / 2 {
            return Err(SpecError::Options(format!(
                "--number-of-ranges={} is more than the {} ranges a statement may have",
                self.number_of_ranges,
                MAX_PLACEHOLDERS / 2
            )));
        }
        let (lo, hi) = self.user_delay_us;
        if hi < lo {
            return Err(SpecError::invalid(
                "oltp-user-delay-max",
                hi,
                "must not be below --oltp-user-delay-min",
            ));
        }
        for (option, us) in [
            ("oltp-connect-delay", self.connect_delay_us),
            ("oltp-user-delay-max", hi),
        ] {
            if us > MAX_DELAY_US {
                return Err(SpecError::invalid(
                    option,
                    us,
                    "at most 60000000 microseconds (a minute)",
                ));
            }
        }
        Ok(())
    }
}

declare_options! {
    /// How OLTP talks to its servers (sysbench's `--db-ps-mode`, `--mysql-ignore-errors`),
    /// declared once under the Database heading.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct OltpDb {
        /// `--db-ps-mode=auto`: server-side prepared statements; `disable`: text statements.
        pub prepared: bool = option(
            "db-ps-mode",
            Text,
            "auto",
            "Prepared statements mode: auto or disable",
        ) => Words(&[("auto", true), ("disable", false)], "expected auto or disable");
        /// `--mysql-ignore-errors`: server error codes counted as ignored errors (the event
        /// is retried), or every code (`all`).
        pub ignore_errors: IgnoredErrors = option(
            "mysql-ignore-errors",
            Text,
            "1213,1020,1205",
            "Error codes to ignore (count and retry), \"all\", or \"none\"",
        );
        /// `--pgsql-ignore-errors`: the SQLSTATEs a PostgreSQL target's errors are ignored
        /// for, or every one (`all`). Lost connections reconnect whatever it says.
        pub pgsql_ignore_errors: SqlStates = option(
            "pgsql-ignore-errors",
            Text,
            "40P01,23505,40001",
            "SQLSTATEs to ignore (count and retry) on PostgreSQL, \"all\", or \"none\"",
        );
    }
    check = OltpDb::bounds;
}

/// Most error codes `--mysql-ignore-errors` may list.
pub const MAX_IGNORED_CODES: usize = 1024;

/// The server errors `--mysql-ignore-errors` names: counted as ignored errors and retried
/// rather than failed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoredErrors {
    /// `all`: every error code.
    All,
    /// These codes; none for `none` (or a blank value).
    Codes(Vec<u32>),
}

impl IgnoredErrors {
    /// Whether server error `code` is one of them.
    pub fn contains(&self, code: u32) -> bool {
        match self {
            IgnoredErrors::All => true,
            IgnoredErrors::Codes(codes) => codes.contains(&code),
        }
    }
}

/// `all`, `none` (or blank) or a comma-separated list of codes.
impl OptionValue for IgnoredErrors {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        match o.text(name).trim() {
            "all" => Ok(IgnoredErrors::All),
            "none" | "" => Ok(IgnoredErrors::Codes(Vec::new())),
            // Counted before anything is allocated for them.
            list if list.split(',').count() > MAX_IGNORED_CODES => Err(SpecError::invalid(
                name,
                format!("{}...", list.chars().take(32).collect::<String>()),
                "at most 1024 error codes",
            )),
            list => list
                .split(',')
                .map(|c| c.trim().parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .map(IgnoredErrors::Codes)
                .map_err(|_| SpecError::invalid(name, list, "expected error codes or 'all'")),
        }
    }

    fn write(&self) -> String {
        match self {
            IgnoredErrors::All => "all".to_string(),
            IgnoredErrors::Codes(codes) if codes.is_empty() => "none".to_string(),
            IgnoredErrors::Codes(codes) => codes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// `--pgsql-ignore-errors`: SQLSTATEs (as [`crate::sqlstate`] numbers them), `all` or
/// `none`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlStates(pub IgnoredErrors);

impl OptionValue for SqlStates {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        match o.text(name).trim() {
            "all" => Ok(SqlStates(IgnoredErrors::All)),
            "none" | "" => Ok(SqlStates(IgnoredErrors::Codes(Vec::new()))),
            list if list.split(',').count() > MAX_IGNORED_CODES => Err(SpecError::invalid(
                name,
                format!("{}...", list.chars().take(32).collect::<String>()),
                "at most 1024 SQLSTATEs",
            )),
            list => list
                .split(',')
                .map(|c| crate::sqlstate::encode(c.trim()))
                .collect::<Option<Vec<_>>>()
                .map(|c| SqlStates(IgnoredErrors::Codes(c)))
                .ok_or_else(|| {
                    SpecError::invalid(name, list, "expected SQLSTATEs such as 40P01, or 'all'")
                }),
        }
    }

    fn write(&self) -> String {
        match &self.0 {
            IgnoredErrors::All => "all".to_string(),
            IgnoredErrors::Codes(codes) if codes.is_empty() => "none".to_string(),
            IgnoredErrors::Codes(codes) => codes
                .iter()
                .map(|&c| crate::sqlstate::state(c))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

impl OltpDb {
    /// Whether server error `code` is to be counted and retried: a SQLSTATE by
    /// `--pgsql-ignore-errors`, a MySQL code by `--mysql-ignore-errors`.
    #[inline]
    pub fn ignores(&self, code: u32) -> bool {
        if crate::sqlstate::is_sqlstate(code) {
            self.pgsql_ignore_errors.0.contains(code)
        } else {
            self.ignore_errors.contains(code)
        }
    }

    fn bounds(&self) -> Result<(), SpecError> {
        match &self.ignore_errors {
            IgnoredErrors::Codes(codes) if codes.len() > MAX_IGNORED_CODES => {
                Err(SpecError::Options(format!(
                    "--mysql-ignore-errors lists {} codes, more than the {MAX_IGNORED_CODES} accepted",
                    codes.len()
                )))
            }
            _ => Ok(()),
        }
    }
}

impl OltpConfig {
    /// Table `n`'s name: sbtest`n`, or 0.4's single table named by --oltp-table-name.
    pub fn table(&self, n: u32) -> String {
        if self.table_name.is_empty() {
            format!("sbtest{n}")
        } else {
            self.table_name.clone()
        }
    }

    /// Checks what the coordinator's plan and the agent's wire decoding both rely on, so
    /// that a Start or Prepare from anyone is held to the same bounds as the command line.
    pub fn validate(&self) -> Result<(), String> {
        if self.targets.is_empty() {
            return Err("no database target given".into());
        }
        for t in &self.targets {
            if t.port == 0 && t.socket.is_none() {
                return Err(format!("target {}: port 0 is not a port", t.name));
            }
        }
        if self.tables.is_empty() {
            return Err("no tables given".into());
        }
        if self.tables.len() > crate::limits::MAX_TABLES as usize {
            return Err(format!(
                "{} tables are more than the {} accepted",
                self.tables.len(),
                crate::limits::MAX_TABLES
            ));
        }
        if let Some((n, _)) = self.tables.iter().find(|(n, _)| *n == 0) {
            return Err(format!("sbtest{n} is not a table: tables count from 1"));
        }
        if self.tables.iter().any(|&(_, t)| t >= self.targets.len()) {
            return Err("a table maps to an unknown target".into());
        }
        self.options.check().map_err(|e| e.to_string())?;
        if !is_table_options(&self.create_options) {
            return Err(format!(
                "table options '{}' may hold only letters, digits, spaces and = ' , . ( ) _ -",
                self.create_options
            ));
        }
        if !self.table_name.is_empty()
            && (self.tables.len() != 1 || !is_table_name(&self.table_name))
        {
            return Err(format!(
                "table name '{}' must be one table's name (letters, digits and _, at most 64) with one table",
                self.table_name
            ));
        }
        if (self.script == Script::StoredProcedure) == self.sp_name.is_empty()
            || !self.sp_name.is_empty() && !is_routine_name(&self.sp_name)
        {
            return Err(if self.script == Script::StoredProcedure {
                format!(
                    "stored procedure name '{}' must be a routine's name (letters, digits, _ and $, at most 64, optionally database.name)",
                    self.sp_name
                )
            } else {
                "a stored procedure name is for oltp_sp only".to_string()
            });
        }
        self.server.check().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The statement groups one event runs, in order, as (kind, count).
    pub fn groups(&self) -> Vec<(Kind, u32)> {
        let reads = |v: &mut Vec<(Kind, u32)>| {
            v.push((Kind::Point, self.options.point_selects));
            if self.options.range_selects {
                v.push((Kind::SimpleRange, self.options.simple_ranges));
                v.push((Kind::SumRange, self.options.sum_ranges));
                v.push((Kind::OrderRange, self.options.order_ranges));
                v.push((Kind::DistinctRange, self.options.distinct_ranges));
            }
        };
        let writes = |v: &mut Vec<(Kind, u32)>| {
            v.push((Kind::IndexUpdate, self.options.index_updates));
            v.push((Kind::NonIndexUpdate, self.options.non_index_updates));
            // Each delete-insert deletes an id and inserts it again.
            v.push((Kind::Delete, self.options.delete_inserts));
        };
        let mut v = Vec::new();
        match self.script {
            Script::ReadWrite => {
                reads(&mut v);
                writes(&mut v);
            }
            Script::ReadOnly => reads(&mut v),
            Script::WriteOnly => writes(&mut v),
            Script::PointSelect => v.push((Kind::Point, 1)),
            Script::Insert => v.push((Kind::Insert, 1)),
            Script::Delete => v.push((Kind::Delete, 1)),
            Script::UpdateIndex => v.push((Kind::IndexUpdate, 1)),
            Script::UpdateNonIndex => v.push((Kind::NonIndexUpdate, 1)),
            Script::SelectRandomPoints => v.push((Kind::RandomPoints, 1)),
            Script::SelectRandomRanges => v.push((Kind::RandomRanges, 1)),
            Script::StoredProcedure => v.push((Kind::Call, 1)),
            // Rows are batched by the worker itself; nothing to prepare per event.
            Script::BulkInsert => {}
        }
        v.retain(|&(_, n)| n > 0);
        v
    }

    /// Whether events are wrapped in BEGIN/COMMIT.
    #[inline]
    pub fn transactional(&self) -> bool {
        !self.options.skip_trx
            && matches!(
                self.script,
                Script::ReadWrite | Script::ReadOnly | Script::WriteOnly
            )
    }

    /// Every kind a worker must prepare.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut v: Vec<Kind> = self.groups().iter().map(|g| g.0).collect();
        if v.contains(&Kind::Delete) && self.script != Script::Delete {
            v.push(Kind::Insert);
        }
        v
    }

    /// Numbers of the tables that target `t` holds.
    pub fn tables_on(&self, t: usize) -> Vec<u32> {
        self.tables
            .iter()
            .filter(|x| x.1 == t)
            .map(|x| x.0)
            .collect()
    }

    /// The targets this agent's tables live on, each with the numbers of its tables.
    pub fn targets_in_use(&self) -> Vec<(usize, Vec<u32>)> {
        (0..self.targets.len())
            .map(|t| (t, self.tables_on(t)))
            .filter(|(_, tables)| !tables.is_empty())
            .collect()
    }

    /// Whether `code` is an error to count and retry rather than fail on.
    #[inline]
    pub fn ignores(&self, code: u32) -> bool {
        self.db.ignores(code)
    }
}

/// The CREATE TABLE statement of sbtest`n` (sysbench's DDL for MySQL).
pub fn create_table_sql(
    table: &str,
    auto_inc: bool,
    secondary: bool,
    engine: &str,
    options: &str,
) -> String {
    let id = if auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if secondary {
        "KEY xid (id)"
    } else {
        "PRIMARY KEY (id)"
    };
    format!(
        "CREATE TABLE {table}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key}\n) ENGINE = {engine}{}{options}",
        if options.is_empty() { "" } else { " " }
    )
}

/// bulk_insert's table: ids written by one thread, k random.
pub fn create_bulk_table_sql(table: &str, engine: &str) -> String {
    format!(
        "CREATE TABLE {table}(\n  id INTEGER NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id)\n) ENGINE = {engine}"
    )
}

/// The sbtest tables' DDL on PostgreSQL (sysbench's pgsql driver's).
pub mod pg {
    /// sbtest`n` as sysbench creates it on PostgreSQL: SERIAL id with --auto-inc, no
    /// engine; with --secondary the id index is created apart (no KEY clause here).
    pub fn create_table_sql(table: &str, auto_inc: bool, secondary: bool, options: &str) -> String {
        let id = if auto_inc {
            "SERIAL"
        } else {
            "INTEGER NOT NULL"
        };
        let key = if secondary {
            ""
        } else {
            ",\n  PRIMARY KEY (id)"
        };
        format!(
            "CREATE TABLE {table}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}\n){}{options}",
            if options.is_empty() { "" } else { " " }
        )
    }

    /// bulk_insert's table on PostgreSQL.
    pub fn create_bulk_table_sql(table: &str) -> String {
        format!(
            "CREATE TABLE {table}(\n  id INTEGER NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id)\n)"
        )
    }

    #[cfg(test)]
    #[test]
    fn the_table_is_sysbenchs() {
        assert_eq!(
            create_table_sql("sbtest1", true, false, ""),
            "CREATE TABLE sbtest1(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)"
        );
        assert!(create_table_sql("t", false, true, "").contains("id INTEGER NOT NULL,"));
        assert!(!create_table_sql("t", false, true, "").contains("PRIMARY"));
    }
}

/// The secondary index sysbench creates after loading (--create-secondary=on).
pub fn create_index_sql(n: u32, table: &str) -> String {
    format!("CREATE INDEX k_{n} ON {table}(k)")
}

/// Appends `v` as a quoted SQL string literal (text protocol); values here are digits and '-'.
pub fn push_quoted(sql: &mut String, v: &str) {
    sql.push('\'');
    for ch in v.chars() {
        if ch == '\'' || ch == '\\' {
            sql.push('\\');
        }
        sql.push(ch);
    }
    sql.push('\'');
}

/// Appends a number to `sql` without allocating.
pub fn push_num(sql: &mut String, v: i64) {
    let _ = write!(sql, "{v}");
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn config(script: Script) -> OltpConfig {
        OltpConfig {
            script,
            targets: Vec::new(),
            tables: vec![(1, 0)],
            options: OltpOptions::defaults(),
            server: ServerOptions::defaults(),
            db: OltpDb::defaults(),
            distribution: crate::rand::Distribution::Uniform,
            create_options: String::new(),
            table_name: String::new(),
            reconnect_random: false,
            sp_name: String::new(),
        }
    }

    fn statements(c: &OltpConfig) -> (u32, u32, u32) {
        // (reads, writes, others) of one event when every DML affects a row.
        let mut r = (0, 0, 0);
        for (k, n) in c.groups() {
            if k.is_select() {
                r.0 += n;
            } else if k == Kind::Delete && c.script != Script::Delete {
                r.1 += 2 * n;
            } else {
                r.1 += n;
            }
        }
        if c.transactional() {
            r.2 += 2;
        }
        r
    }

    #[test]
    fn a_host_list_is_spread_over_threads_round_robin() {
        let t = Target {
            host: "127.0.0.1,127.0.0.2,db3".into(),
            ..Target::default()
        };
        let hosts: Vec<String> = (0..5).map(|i| t.for_thread(i).unwrap().host).collect();
        assert_eq!(
            hosts,
            ["127.0.0.1", "127.0.0.2", "db3", "127.0.0.1", "127.0.0.2"]
        );
        assert_eq!(t.first_host(), "127.0.0.1");
        let one = Target {
            host: "db1".into(),
            ..Target::default()
        };
        assert!(one.for_thread(3).is_none());
    }

    #[test]
    fn database_options_read_back_what_they_write() {
        let back = |d: &OltpDb| {
            let w = d.to_options();
            OltpDb::resolve("t", w.0.iter().map(|(k, v)| (*k, v.as_str()))).unwrap()
        };
        let d = OltpDb::defaults();
        assert!(d.prepared);
        assert_eq!(
            d.ignore_errors,
            IgnoredErrors::Codes(vec![1213, 1020, 1205])
        );
        for d in [
            d.clone(),
            OltpDb {
                prepared: false,
                ignore_errors: IgnoredErrors::All,
                pgsql_ignore_errors: SqlStates(IgnoredErrors::All),
            },
            OltpDb {
                prepared: true,
                ignore_errors: IgnoredErrors::Codes(Vec::new()),
                pgsql_ignore_errors: SqlStates(IgnoredErrors::Codes(Vec::new())),
            },
        ] {
            assert_eq!(back(&d), d);
        }
        let e = OltpDb::resolve("t", [("mysql-ignore-errors", "1213,x")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value for --mysql-ignore-errors: '1213,x' (expected error codes or 'all')"
        );
        let many = vec!["é"; MAX_IGNORED_CODES + 1].join(",");
        let e = OltpDb::resolve("t", [("mysql-ignore-errors", many.as_str())]).unwrap_err();
        assert!(e.to_string().contains("at most 1024 error codes"), "{e}");
        let e = OltpDb::resolve("t", [("pgsql-ignore-errors", "40P01,1213")]).unwrap_err();
        assert!(e.to_string().contains("SQLSTATEs"), "{e}");
    }

    #[test]
    fn mysql_codes_and_sqlstates_are_ignored_by_their_own_option() {
        let mut c = config(Script::ReadWrite);
        let state = |s| crate::sqlstate::encode(s).unwrap();
        assert!(c.ignores(1213) && c.ignores(state("40P01")) && c.ignores(state("40001")));
        assert!(!c.ignores(state("42P01")) && !c.ignores(1062));
        c.db.ignore_errors = IgnoredErrors::All;
        assert!(c.ignores(1062) && !c.ignores(state("42P01")));
    }

    #[test]
    fn read_write_default_is_14_4_2() {
        assert_eq!(statements(&config(Script::ReadWrite)), (14, 4, 2));
        assert_eq!(statements(&config(Script::ReadOnly)), (14, 0, 2));
        assert_eq!(statements(&config(Script::WriteOnly)), (0, 4, 2));
        assert_eq!(statements(&config(Script::PointSelect)), (1, 0, 0));
        let mut c = config(Script::ReadWrite);
        c.options.point_selects = 3;
        c.options.range_selects = false;
        assert_eq!(statements(&c), (3, 4, 2));
        c.options.skip_trx = true;
        assert_eq!(statements(&c), (3, 4, 0));
    }

    #[test]
    fn ddl_follows_the_options() {
        let d = create_table_sql("sbtest3", true, false, "innodb", "");
        assert!(d.starts_with("CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,"));
        assert!(d.contains("PRIMARY KEY (id)") && d.ends_with("ENGINE = innodb"));
        let d = create_table_sql("sbtest1", false, true, "myisam", "MAX_ROWS = 1000000");
        assert!(
            d.contains("id INTEGER NOT NULL,")
                && d.contains("KEY xid (id)")
                && d.ends_with("ENGINE = myisam MAX_ROWS = 1000000")
        );
        assert_eq!(
            create_index_sql(7, "sbtest7"),
            "CREATE INDEX k_7 ON sbtest7(k)"
        );
    }

    #[test]
    fn statement_texts() {
        assert_eq!(
            Kind::Point.sql("sbtest2", 0, 0, ""),
            "SELECT c FROM sbtest2 WHERE id=?"
        );
        assert_eq!(
            Kind::RandomPoints.sql("sbtest1", 3, 0, ""),
            "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)"
        );
        assert_eq!(
            Kind::RandomRanges.sql("sbtest1", 0, 2, ""),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        assert!(config(Script::ReadWrite).kinds().contains(&Kind::Insert));
        assert_eq!(
            Kind::Call.sql("sbtest1", 0, 0, "bench.sp1"),
            "CALL bench.sp1()"
        );
    }

    #[test]
    fn a_stored_procedure_call_is_one_unwrapped_statement_with_a_checked_name() {
        let mut c = config(Script::StoredProcedure);
        c.targets = vec![Target {
            name: "db".into(),
            host: "127.0.0.1".into(),
            port: 3306,
            ..Target::default()
        }];
        assert!(c.validate().is_err(), "oltp_sp needs a procedure name");
        c.sp_name = "bench.new_order$2".into();
        c.validate().unwrap();
        assert_eq!(c.groups(), [(Kind::Call, 1)]);
        assert!(!c.transactional());
        for bad in ["p()", "a.b.c", "p; DROP TABLE t", "", &"x".repeat(65), "p`"] {
            assert!(!is_routine_name(bad), "{bad}");
        }
        // Other tests refuse a name, so it cannot ride along unnoticed.
        let mut rw = config(Script::ReadWrite);
        rw.targets = c.targets.clone();
        rw.validate().unwrap();
        rw.sp_name = "p".into();
        assert!(rw.validate().is_err());
    }

    #[test]
    fn database_options_are_all_written_back() {
        crate::spec::assert_written_back::<OltpDb>(
            &[
                &[
                    ("db-ps-mode", "disable"),
                    ("mysql-ignore-errors", "1062,1213"),
                ],
                &[("mysql-ignore-errors", "all")],
                &[("mysql-ignore-errors", "none")],
                &[("pgsql-ignore-errors", "40P01,57014")],
                &[("pgsql-ignore-errors", "all")],
            ],
            &[],
        );
    }
}
