//! sysbench 0.4's OLTP options, declared once: `--test=oltp`'s modes, its reconnect modes,
//! its table and stored-procedure names and its storage-engine switches. The coordinator's
//! plan translates them into 1.0 terms (a test, `--reconnect`, `--skip-trx`, CREATE TABLE's
//! options); an agent is sent the translation, not these options.

use super::{is_routine_name, is_table_name, is_table_options};
use crate::options::SpecError;
use crate::options::{OptionValue, Options, Trim, Words, declare_options, parse_flag};
// The tests read and write the options through the trait.
#[cfg(test)]
use crate::options::Declared;

/// `--oltp-test-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestMode {
    /// The read/write (or, with `--oltp-read-only`, read-only) transaction.
    Complex,
    /// One point select per event.
    Simple,
    /// One statement per event, by `--oltp-nontrx-mode`.
    Nontrx,
    /// A call of the stored procedure `--oltp-sp-name` per event.
    Sp,
}

/// `--oltp-reconnect-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconnectMode {
    /// Keep connections.
    Session,
    /// Reconnect after every transaction.
    Transaction,
    /// Reconnect after every query (only where an event is one statement).
    Query,
    /// After each transaction, reconnect with probability 1/2.
    Random,
}

const TEST_MODES_WHY: &str = "expected complex, simple, nontrx or sp";
const TEST_MODES: [(&str, TestMode); 4] = [
    ("complex", TestMode::Complex),
    ("simple", TestMode::Simple),
    ("nontrx", TestMode::Nontrx),
    ("sp", TestMode::Sp),
];

/// `--oltp-nontrx-mode` and the 1.0 test that sends its statement.
const NONTRX_MODES_WHY: &str = "expected select, update_key, update_nokey, insert or delete";
const NONTRX_MODES: [(&str, &str); 5] = [
    ("select", "oltp_point_select"),
    ("update_key", "oltp_update_index"),
    ("update_nokey", "oltp_update_non_index"),
    ("insert", "oltp_insert"),
    ("delete", "oltp_delete"),
];

const RECONNECT_WHY: &str = "expected session, transaction, query or random";
const RECONNECT_MODES: [(&str, ReconnectMode); 4] = [
    ("session", ReconnectMode::Session),
    ("transaction", ReconnectMode::Transaction),
    ("query", ReconnectMode::Query),
    ("random", ReconnectMode::Random),
];

/// Engines 0.4's `--mysql-engine-trx=auto` takes for having no transactions.
const ENGINES_WITHOUT_TRX: [&str; 7] = [
    "myisam",
    "heap",
    "memory",
    "archive",
    "csv",
    "aria",
    "blackhole",
];

/// MAX_ROWS 0.4 gives MyISAM tables when `--myisam-max-rows` is not given.
pub const DEFAULT_MYISAM_MAX_ROWS: u64 = 1_000_000;

declare_options! {
    /// 0.4's OLTP options as given; "" (not given) where the meaning of the default depends
    /// on whether the command line is a 0.4 one.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct OltpLegacy {
        pub test_mode: TestMode = option(
            "oltp-test-mode",
            Text,
            "complex",
            "0.4's --test=oltp mode: complex (the read/write transaction, read-only with --oltp-read-only), simple (a point select per event), nontrx (one statement per event, see --oltp-nontrx-mode) or sp (--oltp-sp-name)",
        ) => Words(&TEST_MODES, TEST_MODES_WHY);
        pub read_only: bool = option(
            "oltp-read-only",
            Flag,
            "off",
            "0.4/0.5: read-only OLTP (with --test=oltp or oltp.lua)",
        );
        /// The 1.0 test that sends the nontrx mode's statement.
        nontrx: &'static str = option(
            "oltp-nontrx-mode",
            Text,
            "select",
            "0.4's nontrx statement: select, update_key, update_nokey, insert or delete (as oltp_point_select, oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete)",
        ) => Words(&NONTRX_MODES, NONTRX_MODES_WHY);
        pub reconnect_mode: ReconnectMode = option(
            "oltp-reconnect-mode",
            Text,
            "session",
            "0.4: session (keep connections), transaction (reconnect after every transaction, as --reconnect=1), query (after every statement, with one statement per event) or random",
        ) => Words(&RECONNECT_MODES, RECONNECT_WHY);
        /// `--oltp-table-name`; None: sbtest on 0.4's built-in test with one table, else
        /// 1.0's sbtest1..N.
        pub table_name: Option<String> = option(
            "oltp-table-name",
            Text,
            "",
            "The one table's name [default: sbtest with 0.4's --test=oltp, else sbtest1]",
        ) => Trim;
        /// `--oltp-sp-name`, used in sp mode only (0.4 takes it in every mode).
        pub sp_name: String = option(
            "oltp-sp-name",
            Text,
            "",
            "0.4's --oltp-test-mode=sp (oltp_sp): the stored procedure each event calls, name or database.name",
        ) => Trim;
        /// `--mysql-create-options`: appended to CREATE TABLE.
        pub create_options: String = option(
            "mysql-create-options",
            Text,
            "",
            "0.4: table options appended to CREATE TABLE, e.g. 'ROW_FORMAT=COMPRESSED'",
        );
        /// `--myisam-max-rows`; None: 1,000,000 on a 0.4/0.5 command line, else none.
        pub myisam_max_rows: Option<u64> = option(
            "myisam-max-rows",
            Count,
            "",
            "0.4: MAX_ROWS of MyISAM tables [default: 1000000 on 0.4/0.5 command lines]",
        );
        /// `--mysql-engine-trx`.
        engine_trx: EngineTrx = option(
            "mysql-engine-trx",
            Text,
            "",
            "0.4: whether the engine is transactional: yes, no (no BEGIN/COMMIT, as --skip-trx=on) or auto (no for MyISAM, MEMORY/HEAP, ARCHIVE, CSV, Aria, BLACKHOLE) [default: auto on 0.4/0.5 command lines, else yes]",
        );
    }
    check = OltpLegacy::bounds;
}

/// `--mysql-engine-trx` as given: yes, no, auto or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EngineTrx {
    NotGiven,
    Auto,
    Yes,
    No,
}

impl OptionValue for EngineTrx {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        Ok(match o.text(name).trim().to_ascii_lowercase().as_str() {
            "" => EngineTrx::NotGiven,
            "auto" => EngineTrx::Auto,
            v => match parse_flag(v) {
                Some(true) => EngineTrx::Yes,
                Some(false) => EngineTrx::No,
                None => {
                    return Err(SpecError::invalid(
                        name,
                        o.text(name),
                        "expected yes, no or auto",
                    ));
                }
            },
        })
    }

    fn write(&self) -> String {
        match self {
            EngineTrx::NotGiven => "",
            EngineTrx::Auto => "auto",
            EngineTrx::Yes => "yes",
            EngineTrx::No => "no",
        }
        .to_string()
    }
}

impl OltpLegacy {
    /// The 1.0 test that sends what 0.4's built-in `--test=oltp` sends in this mode, or
    /// (not `builtin`) what 0.5's oltp.lua sends: it ignores `--oltp-test-mode`.
    pub fn test(&self, builtin: bool) -> &'static str {
        let mode = if builtin {
            self.test_mode
        } else {
            TestMode::Complex
        };
        match mode {
            TestMode::Complex if self.read_only => "oltp_read_only",
            TestMode::Complex => "oltp_read_write",
            TestMode::Simple => "oltp_point_select",
            TestMode::Nontrx => self.nontrx,
            TestMode::Sp => "oltp_sp",
        }
    }

    /// CREATE TABLE's options with `engine`: `--mysql-create-options`, and for MyISAM
    /// `MAX_ROWS = --myisam-max-rows` (0.4 always set it, 1,000,000 by default, so a
    /// 0.4/0.5 command line gets it without the option).
    pub fn table_options(&self, engine: &str, legacy: bool) -> String {
        let mut options = self.create_options.trim().to_string();
        let rows = match self.myisam_max_rows {
            Some(rows) => Some(rows),
            None if legacy => Some(DEFAULT_MYISAM_MAX_ROWS),
            None => None,
        };
        if let Some(rows) = rows.filter(|_| engine.eq_ignore_ascii_case("myisam")) {
            if !options.is_empty() {
                options.push(' ');
            }
            options.push_str(&format!("MAX_ROWS = {rows}"));
        }
        options
    }

    /// Whether events use transactions with `engine` (`--mysql-engine-trx`): `auto` (0.4's
    /// default, so that of a 0.4/0.5 command line) says no for engines that have none; a
    /// 1.0 command line without the option keeps 1.0's BEGIN/COMMIT whatever the engine.
    pub fn transactional(&self, engine: &str, legacy: bool) -> bool {
        match self.engine_trx {
            EngineTrx::Yes => true,
            EngineTrx::No => false,
            EngineTrx::NotGiven if !legacy => true,
            EngineTrx::NotGiven | EngineTrx::Auto => {
                !ENGINES_WITHOUT_TRX.contains(&engine.to_ascii_lowercase().as_str())
            }
        }
    }
}

impl OltpLegacy {
    fn bounds(&self) -> Result<(), SpecError> {
        if let Some(name) = self.table_name.as_deref().filter(|n| !is_table_name(n)) {
            return Err(SpecError::invalid(
                "oltp-table-name",
                name,
                "expected a table's name: letters, digits and _ (at most 64)",
            ));
        }
        if !self.sp_name.is_empty() && !is_routine_name(&self.sp_name) {
            return Err(SpecError::invalid(
                "oltp-sp-name",
                &self.sp_name,
                "expected a procedure's name: letters, digits, _ and $ (at most 64), optionally database.name",
            ));
        }
        if !is_table_options(&self.create_options) {
            return Err(SpecError::invalid(
                "mysql-create-options",
                &self.create_options,
                "letters, digits, spaces and = ' , . ( ) _ - only",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(given: &[(&str, &str)]) -> Result<OltpLegacy, SpecError> {
        OltpLegacy::resolve("t", given.iter().copied())
    }

    #[test]
    fn each_mode_is_its_1_0_test() {
        let test = |g: &[(&str, &str)]| read(g).unwrap().test(true);
        assert_eq!(test(&[]), "oltp_read_write");
        assert_eq!(test(&[("oltp-read-only", "on")]), "oltp_read_only");
        assert_eq!(test(&[("oltp-test-mode", "simple")]), "oltp_point_select");
        assert_eq!(test(&[("oltp-test-mode", "sp")]), "oltp_sp");
        assert_eq!(test(&[("oltp-test-mode", "nontrx")]), "oltp_point_select");
        // 0.5's oltp.lua ignores the mode.
        let simple = read(&[("oltp-test-mode", "simple")]).unwrap();
        assert_eq!(simple.test(false), "oltp_read_write");
        assert_eq!(test(&[("oltp-test-mode", " simple ")]), "oltp_point_select");
        for (mode, want) in NONTRX_MODES {
            let g = [("oltp-test-mode", "nontrx"), ("oltp-nontrx-mode", mode)];
            assert_eq!(test(&g), want);
        }
    }

    #[test]
    fn unknown_words_are_refused_by_name() {
        for (name, why) in [
            ("oltp-test-mode", "complex, simple"),
            ("oltp-nontrx-mode", "update_key"),
            ("oltp-reconnect-mode", "session"),
            ("mysql-engine-trx", "yes, no or auto"),
            ("myisam-max-rows", "integer"),
            ("oltp-read-only", "on or off"),
            ("oltp-table-name", "table's name"),
            ("oltp-sp-name", "procedure's name"),
            ("mysql-create-options", "letters, digits"),
        ] {
            let e = read(&[(name, "bogus;")]).unwrap_err().to_string();
            assert!(e.contains(&format!("--{name}: 'bogus;'")), "{e}");
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn myisam_gets_max_rows_on_old_command_lines_or_when_asked() {
        let none = read(&[]).unwrap();
        assert_eq!(none.table_options("MyISAM", true), "MAX_ROWS = 1000000");
        assert_eq!(none.table_options("myisam", false), "");
        assert_eq!(none.table_options("innodb", true), "");
        let asked = read(&[
            ("myisam-max-rows", "500"),
            ("mysql-create-options", " ROW_FORMAT=FIXED "),
        ])
        .unwrap();
        assert_eq!(
            asked.table_options("myisam", false),
            "ROW_FORMAT=FIXED MAX_ROWS = 500"
        );
        assert_eq!(asked.table_options("innodb", false), "ROW_FORMAT=FIXED");
    }

    #[test]
    fn engines_without_transactions_skip_them_where_0_4_would() {
        let none = read(&[]).unwrap();
        // A 1.0 command line keeps BEGIN/COMMIT whatever the engine.
        assert!(none.transactional("myisam", false));
        assert!(!none.transactional("MyISAM", true));
        assert!(none.transactional("innodb", true));
        let auto = read(&[("mysql-engine-trx", "auto")]).unwrap();
        assert!(!auto.transactional("memory", false));
        assert!(
            !read(&[("mysql-engine-trx", "no")])
                .unwrap()
                .transactional("innodb", true)
        );
        assert!(
            read(&[("mysql-engine-trx", "yes")])
                .unwrap()
                .transactional("myisam", true)
        );
    }

    #[test]
    fn options_read_back_what_they_write() {
        for given in [
            vec![],
            vec![
                ("oltp-test-mode", "nontrx"),
                ("oltp-nontrx-mode", "delete"),
                ("oltp-reconnect-mode", "random"),
                ("oltp-table-name", "t1"),
                ("myisam-max-rows", "7"),
                ("mysql-engine-trx", "auto"),
            ],
            vec![("mysql-engine-trx", "no"), ("oltp-read-only", "on")],
        ] {
            let l = read(&given).unwrap();
            let w = l.to_options();
            let back = OltpLegacy::resolve("t", w.0.iter().map(|(k, v)| (*k, v.as_str())));
            assert_eq!(back.unwrap(), l, "{given:?}");
        }
    }
}
