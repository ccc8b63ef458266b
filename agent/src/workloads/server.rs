//! What OLTP and TPC-C share about their server: the storage engine their tables are
//! created with and the global variables a result records of it, declared once (the
//! "Server" group of `fleetbench TEST help`).

use crate::options::{Kind as OK, OptionDef, Options, Written};
use crate::spec::{Declared, SpecError};

/// Most server variables one run records.
pub const MAX_SERVER_VARS: usize = 64;

/// The server variables a result records by default: what tuning studies vary.
pub const DEFAULT_SERVER_VARS: &str = "innodb_buffer_pool_size,innodb_log_file_size,\
innodb_flush_log_at_trx_commit,innodb_flush_method,innodb_io_capacity,innodb_doublewrite,\
sync_binlog,log_bin,max_connections,thread_handling,thread_cache_size,table_open_cache";

/// `--mysql-storage-engine` and `--server-vars`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    /// `ENGINE = ...` of every table created (as given: the server matches it in any case).
    pub engine: String,
    /// Global variables read once per target on its first connection; names of letters,
    /// digits and `_`, lower case.
    pub server_vars: Vec<String>,
}

/// Whether `s` is a name that goes into SQL unquoted: 1..=64 letters, digits and `_`.
fn is_plain_name(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Declared for ServerOptions {
    const OPTIONS: &'static [OptionDef] = &[
        OptionDef::new(
            "mysql-storage-engine",
            OK::Text,
            "innodb",
            "Storage engine of the tables created",
        )
        .aliases(&["mysql-table-engine"]),
        OptionDef::new(
            "server-vars",
            OK::Text,
            DEFAULT_SERVER_VARS,
            "Server variables the result records, comma-separated (empty: none)",
        ),
    ];

    fn from_options(o: &Options) -> Result<Self, SpecError> {
        let list = o.text("server-vars");
        // Counted before anything is allocated for them.
        if list.split(',').count() > MAX_SERVER_VARS {
            return Err(SpecError::invalid(
                "server-vars",
                format!("{}...", list.chars().take(32).collect::<String>()),
                "at most 64 variable names",
            ));
        }
        Ok(ServerOptions {
            engine: o.text("mysql-storage-engine").trim().to_string(),
            server_vars: list
                .split(',')
                .map(|v| v.trim().to_ascii_lowercase())
                .filter(|v| !v.is_empty())
                .collect(),
        })
    }

    fn to_options(&self) -> Written {
        let mut w = Written::default();
        w.put("mysql-storage-engine", &self.engine)
            .put("server-vars", self.server_vars.join(","));
        w
    }

    fn check(&self) -> Result<(), SpecError> {
        if !is_plain_name(&self.engine) {
            return Err(SpecError::invalid(
                "mysql-storage-engine",
                &self.engine,
                "not an engine name (letters, digits and _)",
            ));
        }
        if self.server_vars.len() > MAX_SERVER_VARS {
            return Err(SpecError::invalid(
                "server-vars",
                self.server_vars.len(),
                "at most 64 variable names",
            ));
        }
        if let Some(v) = self.server_vars.iter().find(|v| !is_plain_name(v)) {
            return Err(SpecError::invalid(
                "server-vars",
                v,
                "expected variable names of letters, digits and _ (at most 64 each)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(given: &[(&str, &str)]) -> Result<ServerOptions, SpecError> {
        ServerOptions::resolve("t", given.iter().copied())
    }

    #[test]
    fn defaults_are_innodb_and_the_tuning_variables() {
        let d = ServerOptions::defaults();
        assert_eq!(d.engine, "innodb");
        assert_eq!(d.server_vars.len(), 12);
        assert_eq!(d.server_vars[0], "innodb_buffer_pool_size");
    }

    #[test]
    fn an_empty_list_records_none_and_names_are_lowered() {
        assert!(read(&[("server-vars", "")]).unwrap().server_vars.is_empty());
        let s = read(&[("server-vars", " Max_Connections, ,log_bin")]).unwrap();
        assert_eq!(s.server_vars, ["max_connections", "log_bin"]);
    }

    #[test]
    fn what_would_reach_sql_is_refused() {
        let e = read(&[("mysql-storage-engine", "x;drop")]).unwrap_err();
        assert!(e.to_string().contains("--mysql-storage-engine"), "{e}");
        assert!(read(&[("mysql-storage-engine", "")]).is_err());
        let e = read(&[("server-vars", "a b")]).unwrap_err();
        assert!(e.to_string().contains("'a b'"), "{e}");
        let many = vec!["v"; 65].join(",");
        let e = read(&[("server-vars", many.as_str())]).unwrap_err();
        assert!(e.to_string().contains("at most 64"), "{e}");
    }

    #[test]
    fn options_read_back_what_they_write() {
        let s = read(&[("mysql-storage-engine", "MyISAM"), ("server-vars", "a,b")]).unwrap();
        let w = s.to_options();
        let back = ServerOptions::resolve("t", w.0.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back.unwrap(), s);
    }
}
