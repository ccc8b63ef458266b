//! What OLTP and TPC-C share about their server, declared once: how to reach it (the
//! `--mysql-*` options, the "Database" group of `fleetbench TEST help`), the storage engine
//! their tables are created with and the global variables a result records of it (the
//! "Server" group).

use std::path::PathBuf;

pub use super::driver::Driver;
use crate::options::{
    Codec, Kind as OK, OptionDef, Options, Trim, Written, declare_options, parse_flag,
};
use crate::options::{Declared, SpecError};
use crate::workloads::oltp::tls::{SslMode, SslSettings};

/// Connections an agent opens at once by default (`--db-connect-concurrency`). Measured
/// against a server with back_log=16 and thread_cache_size=0, 2,000 connections: 8, 16
/// and 32 opened with no retry (2.1-2.5 s for the whole run), 64 overflowed the queue
/// (18 handshakes timed out and were retried: 11.4 s), 2,000 at once 1,864 (32 s). 16
/// never fills such a queue from one agent, and keeps a WAN's round trips overlapped.
pub const DEFAULT_CONNECT_CONCURRENCY: &str = "16";

/// Most server variables one run records.
pub const MAX_SERVER_VARS: usize = 64;

/// The server variables a result records by default: what tuning studies vary, and the data
/// directory (an observer of the server's host watches the disk under it).
pub const DEFAULT_SERVER_VARS: &str = "innodb_buffer_pool_size,innodb_log_file_size,\
innodb_flush_log_at_trx_commit,innodb_flush_method,innodb_io_capacity,innodb_doublewrite,\
sync_binlog,log_bin,max_connections,thread_handling,thread_cache_size,table_open_cache,datadir";

declare_options! {
    /// `--mysql-storage-engine`, `--server-vars` and how connections to the server open.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ServerOptions {
        /// `ENGINE = ...` of every table created (as given: the server matches it in any
        /// case).
        pub engine: String = option(
            "mysql-storage-engine",
            Text,
            "innodb",
            "Storage engine of the tables created",
            aliases = ["mysql-table-engine"],
        ) => Trim;
        /// Global variables read once per target on its first connection; names of
        /// letters, digits and `_`, lower case.
        pub server_vars: Vec<String> = option(
            "server-vars",
            Text,
            DEFAULT_SERVER_VARS,
            "Server variables the result records, comma-separated (empty: none)",
        ) => NameList;
        /// `--db-connect-timeout`: the TCP connect, greeting and login of one connection
        /// together, in prepare, cleanup and run.
        pub connect_timeout: std::time::Duration = option(
            "db-connect-timeout",
            Count,
            "10",
            "Seconds one connection may take to connect and log in (prepare, cleanup and run)",
        ) => Seconds;
        /// `--db-connect-concurrency`: at most this many connections of an agent are being
        /// opened at once, so that a server's small accept queue (back_log) does not
        /// overflow.
        pub connect_concurrency: u32 = option(
            "db-connect-concurrency",
            Count,
            DEFAULT_CONNECT_CONCURRENCY,
            "Connections an agent opens at once; failed opens (full accept queue, too many connections) are retried within --ready-timeout",
        );
    }
    check = ServerOptions::bounds;
}

/// The most seconds `--db-connect-timeout` takes: a day.
const MAX_CONNECT_TIMEOUT_S: u64 = 86_400;

/// Whether `s` is a name that goes into SQL unquoted: 1..=64 letters, digits and `_`.
fn is_plain_name(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `--server-vars`: comma-separated names, lowered, blanks dropped; at most
/// [`MAX_SERVER_VARS`], counted before anything is allocated for them.
struct NameList;

impl Codec<Vec<String>, 1> for NameList {
    fn read(&self, o: &Options, [name]: [&'static str; 1]) -> Result<Vec<String>, SpecError> {
        let list = o.text(name);
        if list.split(',').count() > MAX_SERVER_VARS {
            return Err(SpecError::invalid(
                name,
                format!("{}...", list.chars().take(32).collect::<String>()),
                "at most 64 variable names",
            ));
        }
        Ok(list
            .split(',')
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty())
            .collect())
    }

    fn write(&self, v: &Vec<String>) -> [String; 1] {
        [v.join(",")]
    }
}

/// A duration given in whole seconds.
struct Seconds;

impl Codec<std::time::Duration, 1> for Seconds {
    fn read(
        &self,
        o: &Options,
        [name]: [&'static str; 1],
    ) -> Result<std::time::Duration, SpecError> {
        Ok(std::time::Duration::from_secs(o.num(name)?))
    }

    fn write(&self, v: &std::time::Duration) -> [String; 1] {
        [v.as_secs().to_string()]
    }
}

impl ServerOptions {
    /// What a result's config records: the engine. The variables asked for are not a
    /// setting of the run (the result holds what each server answered for them, and
    /// `compare` compares those).
    pub fn recorded(&self) -> Vec<(String, serde_json::Value)> {
        let mut fields = self.to_options().fields(Self::OPTIONS);
        // How connections open (timeout, concurrency) is not a setting of the measurement.
        fields.retain(|(k, _)| k == "mysql_storage_engine");
        fields
    }

    fn bounds(&self) -> Result<(), SpecError> {
        match self.connect_timeout.as_secs() {
            0 => {
                return Err(SpecError::invalid(
                    "db-connect-timeout",
                    0,
                    "at least 1 second",
                ));
            }
            s if s > MAX_CONNECT_TIMEOUT_S => {
                return Err(SpecError::invalid(
                    "db-connect-timeout",
                    s,
                    "at most 86400 seconds",
                ));
            }
            _ => {}
        }
        if self.connect_concurrency == 0 {
            return Err(SpecError::invalid(
                "db-connect-concurrency",
                0,
                "at least 1",
            ));
        }
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

/// The `--mysql-*` options: the target called "default", and the TLS and public-key
/// settings every target without its own takes. The coordinator's plan reads them; an
/// agent is sent the targets they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetOptions {
    /// `--db-driver`: which options below were read (`--mysql-*` or `--pgsql-*`).
    pub driver: Driver,
    /// The host or, comma-separated, the hosts (threads take them round-robin).
    pub hosts: Vec<String>,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub password: String,
    /// `--mysql-db`; None: the test's own (sbtest, tpcc for tpcc).
    pub database: Option<String>,
    /// TLS as `--mysql-ssl` and `--mysql-ssl-mode` resolve, with its files.
    pub ssl: SslSettings,
    pub server_public_key: Option<PathBuf>,
    pub get_server_public_key: bool,
}

impl TargetOptions {
    /// The target called "default"; `database` unless `--mysql-db` names one.
    pub fn default_target(&self, database: &str) -> Target {
        let mut t = Target {
            name: "default".into(),
            driver: self.driver,
            host: self.hosts.join(","),
            port: self.port,
            socket: self.socket.clone(),
            user: self.user.clone(),
            password: self.password.clone(),
            database: self.database.clone().unwrap_or_else(|| database.into()),
            ..Target::default()
        };
        self.fill_in(&mut t);
        t
    }

    /// Gives `t` the TLS and public-key settings it does not set itself (a target of the
    /// same driver only).
    pub fn fill_in(&self, t: &mut Target) {
        // The --mysql-* TLS options are not a PostgreSQL target's, nor the other way round.
        if t.driver != self.driver {
            return;
        }
        if t.ssl.mode == SslMode::Disabled {
            t.ssl.mode = self.ssl.mode;
        }
        t.ssl.ca = t.ssl.ca.take().or_else(|| self.ssl.ca.clone());
        t.ssl.cert = t.ssl.cert.take().or_else(|| self.ssl.cert.clone());
        t.ssl.key = t.ssl.key.take().or_else(|| self.ssl.key.clone());
        t.server_public_key = t
            .server_public_key
            .take()
            .or_else(|| self.server_public_key.clone());
        t.get_server_public_key |= self.get_server_public_key;
    }
}

/// Written by hand: `--mysql-ssl`, `--mysql-ssl-mode` and `--mysql-ssl-ca` make one TLS
/// mode, `--db-driver` and `--mysql-compression` take their defaults only, and the TLS
/// files sit in [`SslSettings`] (`target_options_are_all_written_back` guards the write).
impl Declared for TargetOptions {
    const OPTIONS: &'static [OptionDef] = &[
        OptionDef::new(
            "db-driver",
            OK::Text,
            "mysql",
            "Database driver: mysql or pgsql",
        ),
        OptionDef::new(
            "mysql-host",
            OK::Text,
            "localhost",
            "MySQL server host, or hosts comma-separated (threads take them round-robin); localhost is 127.0.0.1 without --mysql-socket",
        ),
        OptionDef::new("mysql-port", OK::Count, "3306", "MySQL server port"),
        OptionDef::new("mysql-socket", OK::Text, "", "MySQL socket"),
        OptionDef::new("mysql-user", OK::Text, "sbtest", "MySQL user"),
        OptionDef::new(
            "mysql-password",
            OK::Text,
            "",
            "MySQL password [default: empty]",
        ),
        OptionDef::new(
            "mysql-db",
            OK::Text,
            "",
            // The default is the test's own: `TEST help` shows it (sbtest, tpcc for tpcc).
            "MySQL database name",
        ),
        OptionDef::new(
            "mysql-ssl",
            OK::Flag,
            "",
            "TLS to the server: on means --mysql-ssl-mode=required (verify_ca with --mysql-ssl-ca) [default: off]",
        ),
        OptionDef::new(
            "mysql-ssl-mode",
            OK::Text,
            "",
            "disabled, preferred, required, verify_ca or verify_identity [default: disabled]",
        ),
        OptionDef::new(
            "mysql-ssl-ca",
            OK::Text,
            "",
            "CA certificate (PEM) the server's certificate is checked against (a path on the agents' hosts)",
        ),
        OptionDef::new(
            "mysql-ssl-cert",
            OK::Text,
            "",
            "Client certificate (PEM) for servers that want one (a path on the agents' hosts)",
        ),
        OptionDef::new(
            "mysql-ssl-key",
            OK::Text,
            "",
            "Private key (PEM) of --mysql-ssl-cert (a path on the agents' hosts)",
        ),
        OptionDef::new(
            "mysql-server-public-key",
            OK::Text,
            "",
            "The server's RSA public key (PEM, a path on the agents' hosts), for caching_sha2_password's full authentication without TLS",
        ),
        OptionDef::new(
            "mysql-get-server-public-key",
            OK::Flag,
            "off",
            "Allow asking the server for its RSA public key",
        ),
        OptionDef::new(
            "mysql-compression",
            OK::Flag,
            "off",
            "Compression: only off is supported",
        ),
        OptionDef::new(
            "pgsql-host",
            OK::Text,
            "localhost",
            "PostgreSQL server host, or hosts comma-separated (threads take them round-robin)",
        ),
        OptionDef::new("pgsql-port", OK::Count, "5432", "PostgreSQL server port"),
        OptionDef::new("pgsql-user", OK::Text, "sbtest", "PostgreSQL user"),
        OptionDef::new(
            "pgsql-password",
            OK::Text,
            "",
            "PostgreSQL password [default: empty]",
        ),
        OptionDef::new(
            "pgsql-db",
            OK::Text,
            "",
            // The default is the test's own, as for --mysql-db.
            "PostgreSQL database name",
        ),
        OptionDef::new(
            "pgsql-sslmode",
            OK::Text,
            "prefer",
            "TLS as libpq's sslmode: disable, allow, prefer, require, verify-ca or verify-full",
        ),
        OptionDef::new(
            "pgsql-sslrootcert",
            OK::Text,
            "",
            "CA certificate (PEM) the server's certificate is checked against (a path on the agents' hosts)",
        ),
        OptionDef::new(
            "pgsql-sslcert",
            OK::Text,
            "",
            "Client certificate (PEM) for servers that want one (a path on the agents' hosts)",
        ),
        OptionDef::new(
            "pgsql-sslkey",
            OK::Text,
            "",
            "Private key (PEM) of --pgsql-sslcert (a path on the agents' hosts)",
        ),
    ];

    fn from_options(o: &Options) -> Result<Self, SpecError> {
        let driver = Driver::parse(o.text("db-driver").trim()).ok_or_else(|| {
            SpecError::invalid("db-driver", o.text("db-driver"), "expected mysql or pgsql")
        })?;
        if driver == Driver::Pgsql {
            return Self::pgsql_from_options(o);
        }
        if o.flag("mysql-compression")? {
            return Err(SpecError::Options(
                "--mysql-compression=on is not supported".into(),
            ));
        }
        let hosts = host_list(o, "mysql-host")?;
        let port = match o.num::<u16>("mysql-port")? {
            0 => {
                return Err(SpecError::invalid(
                    "mysql-port",
                    0,
                    "must be from 1 to 65535",
                ));
            }
            p => p,
        };
        let on = match o.text("mysql-ssl") {
            "" => None,
            v => Some(
                parse_flag(v)
                    .ok_or_else(|| SpecError::invalid("mysql-ssl", v, "expected on or off"))?,
            ),
        };
        let path = |name| Some(PathBuf::from(o.text(name))).filter(|p| !p.as_os_str().is_empty());
        let ca = path("mysql-ssl-ca");
        let mode = match (o.text("mysql-ssl-mode"), on) {
            ("", Some(true)) if ca.is_some() => SslMode::VerifyCa,
            ("", Some(true)) => SslMode::Required,
            ("", _) => SslMode::Disabled,
            (m, on) => {
                let mode = SslMode::parse(m)
                    .ok_or_else(|| SpecError::invalid("mysql-ssl-mode", m, SslMode::NAMES))?;
                if on == Some(false) && mode != SslMode::Disabled {
                    return Err(SpecError::Options(format!(
                        "--mysql-ssl=off and --mysql-ssl-mode={m} contradict each other"
                    )));
                }
                mode
            }
        };
        let text = |name| Some(o.text(name).to_string()).filter(|s| !s.is_empty());
        Ok(TargetOptions {
            driver,
            hosts,
            port,
            socket: text("mysql-socket"),
            user: o.text("mysql-user").to_string(),
            password: o.text("mysql-password").to_string(),
            database: text("mysql-db"),
            ssl: SslSettings {
                mode,
                ca,
                cert: path("mysql-ssl-cert"),
                key: path("mysql-ssl-key"),
            },
            server_public_key: path("mysql-server-public-key"),
            get_server_public_key: o.flag("mysql-get-server-public-key")?,
        })
    }

    fn to_options(&self) -> Written {
        let path = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut w = Written::default();
        if self.driver == Driver::Pgsql {
            w.put("db-driver", "pgsql")
                .put("pgsql-host", self.hosts.join(","))
                .put("pgsql-port", self.port)
                .put("pgsql-user", &self.user)
                .put("pgsql-password", &self.password)
                .put("pgsql-db", self.database.clone().unwrap_or_default())
                .put("pgsql-sslmode", self.ssl.mode.libpq_name())
                .put("pgsql-sslrootcert", path(&self.ssl.ca))
                .put("pgsql-sslcert", path(&self.ssl.cert))
                .put("pgsql-sslkey", path(&self.ssl.key));
            return w;
        }
        w.put("db-driver", "mysql")
            .put("mysql-host", self.hosts.join(","))
            .put("mysql-port", self.port)
            .put("mysql-socket", self.socket.clone().unwrap_or_default())
            .put("mysql-user", &self.user)
            .put("mysql-password", &self.password)
            .put("mysql-db", self.database.clone().unwrap_or_default())
            .put("mysql-ssl-mode", self.ssl.mode.name())
            .put("mysql-ssl-ca", path(&self.ssl.ca))
            .put("mysql-ssl-cert", path(&self.ssl.cert))
            .put("mysql-ssl-key", path(&self.ssl.key))
            .put("mysql-server-public-key", path(&self.server_public_key))
            .switch("mysql-get-server-public-key", self.get_server_public_key)
            .switch("mysql-compression", false);
        w
    }
}

impl TargetOptions {
    /// `--db-driver=pgsql`: the `--pgsql-*` options make the default target (the
    /// `--mysql-*` ones are not read, as in sysbench).
    fn pgsql_from_options(o: &Options) -> Result<Self, SpecError> {
        let hosts = host_list(o, "pgsql-host")?;
        let port = match o.num::<u16>("pgsql-port")? {
            0 => {
                return Err(SpecError::invalid(
                    "pgsql-port",
                    0,
                    "must be from 1 to 65535",
                ));
            }
            p => p,
        };
        let mode = SslMode::parse_libpq(o.text("pgsql-sslmode")).ok_or_else(|| {
            SpecError::invalid(
                "pgsql-sslmode",
                o.text("pgsql-sslmode"),
                SslMode::LIBPQ_NAMES,
            )
        })?;
        let path = |name| Some(PathBuf::from(o.text(name))).filter(|p| !p.as_os_str().is_empty());
        Ok(TargetOptions {
            driver: Driver::Pgsql,
            hosts,
            port,
            socket: None,
            user: o.text("pgsql-user").to_string(),
            password: o.text("pgsql-password").to_string(),
            database: Some(o.text("pgsql-db").to_string()).filter(|s| !s.is_empty()),
            ssl: SslSettings {
                mode,
                ca: path("pgsql-sslrootcert"),
                cert: path("pgsql-sslcert"),
                key: path("pgsql-sslkey"),
            },
            server_public_key: None,
            get_server_public_key: false,
        })
    }
}

/// A comma-separated host list: IPv6 literals in brackets or bare, none empty.
fn host_list(o: &Options, name: &'static str) -> Result<Vec<String>, SpecError> {
    let given = o.text(name);
    let mut hosts = Vec::new();
    for h in given.split(',').map(str::trim) {
        // An IPv6 literal may come in URL brackets ([::1]) or bare (::1).
        let h = h
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(h);
        if h.is_empty() {
            return Err(SpecError::invalid(name, given, "an empty host in the list"));
        }
        hosts.push(h.to_string());
    }
    Ok(hosts)
}

/// A database server, as the agent connects to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Target {
    pub name: String,
    /// Which database this is (mysql:// or postgres:// URL, `--db-driver`).
    pub driver: Driver,
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub password: String,
    pub database: String,
    /// TLS settings; certificate files are on the agent's host.
    pub ssl: SslSettings,
    /// File (on the agent's host) with the server's RSA public key, for
    /// caching_sha2_password's full authentication without TLS.
    pub server_public_key: Option<std::path::PathBuf>,
    /// Whether the server may be asked for its RSA public key (an impostor could send its
    /// own, so only when the user allows it).
    pub get_server_public_key: bool,
    /// What the agent read from those files ([`Target::load_files`]).
    pub loaded: Loaded,
    /// How long one connection may take to connect and log in (`--db-connect-timeout`,
    /// which the agent sets on every target); None: [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Option<std::time::Duration>,
}

/// `--db-connect-timeout`'s default.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A target's TLS configuration and public key as read on the agent. Equal whatever they
/// hold: they follow from the settings, which are compared.
#[derive(Clone, Default)]
pub struct Loaded {
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    pub server_public_key: Option<String>,
}

impl PartialEq for Loaded {
    fn eq(&self, _: &Loaded) -> bool {
        true
    }
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("tls", &self.tls.is_some())
            .field("server_public_key", &self.server_public_key.is_some())
            .finish()
    }
}

impl Target {
    /// How long one connection may take to connect and log in.
    pub fn connect_timeout(&self) -> std::time::Duration {
        self.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// The target as worker `thread` connects to it: with a list of hosts (`db1,db2`,
    /// sysbench's `--mysql-host` list) the thread's host, round-robin; None when there is
    /// one host (use the target as it is).
    pub fn for_thread(&self, thread: u64) -> Option<Target> {
        if !self.host.contains(',') || self.socket.is_some() {
            return None;
        }
        let hosts: Vec<&str> = self.host.split(',').collect();
        let host = hosts[(thread % hosts.len() as u64) as usize].to_string();
        Some(Target {
            host,
            ..self.clone()
        })
    }

    /// The first of a list of hosts (prepare and cleanup use one server of a cluster).
    pub fn first_host(&self) -> &str {
        self.host.split(',').next().unwrap_or(&self.host)
    }

    /// Where this target is, for messages.
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(s) => format!("{} ({s})", self.name),
            None => format!("{} ({}:{})", self.name, self.host, self.port),
        }
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
        assert_eq!(d.server_vars.len(), 13);
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

    fn target(given: &[(&str, &str)]) -> Result<TargetOptions, SpecError> {
        TargetOptions::resolve("t", given.iter().copied())
    }

    #[test]
    fn the_default_target_takes_the_tests_database_unless_named() {
        let t = target(&[]).unwrap();
        let d = t.default_target("tpcc");
        assert_eq!(
            (d.host.as_str(), d.port, d.database.as_str()),
            ("localhost", 3306, "tpcc")
        );
        assert_eq!((d.user.as_str(), d.ssl.mode), ("sbtest", SslMode::Disabled));
        let named = target(&[("mysql-db", "x"), ("mysql-host", "[::1], db2")]).unwrap();
        let d = named.default_target("sbtest");
        assert_eq!((d.host.as_str(), d.database.as_str()), ("::1,db2", "x"));
    }

    #[test]
    fn tls_follows_ssl_and_its_mode() {
        let mode = |g: &[(&str, &str)]| target(g).map(|t| t.ssl.mode);
        assert_eq!(mode(&[("mysql-ssl", "on")]), Ok(SslMode::Required));
        assert_eq!(
            mode(&[("mysql-ssl", "on"), ("mysql-ssl-ca", "/ca.pem")]),
            Ok(SslMode::VerifyCa)
        );
        assert_eq!(
            mode(&[("mysql-ssl-mode", "verify-identity")]),
            Ok(SslMode::VerifyIdentity)
        );
        let e = mode(&[("mysql-ssl", "off"), ("mysql-ssl-mode", "required")]).unwrap_err();
        assert!(e.to_string().contains("contradict"), "{e}");
        assert!(mode(&[("mysql-ssl-mode", "sometimes")]).is_err());
    }

    #[test]
    fn what_cannot_be_reached_is_refused() {
        for (name, value, why) in [
            ("mysql-port", "0", "1 to 65535"),
            ("mysql-port", "70000", "integer"),
            ("mysql-host", "a,,b", "empty host"),
            ("db-driver", "oracle", "mysql or pgsql"),
            ("mysql-compression", "on", "not supported"),
        ] {
            let e = target(&[(name, value)]).unwrap_err().to_string();
            assert!(e.contains(why), "{name}={value}: {e}");
        }
    }

    #[test]
    fn pgsql_reads_the_pgsql_options_with_libpqs_defaults() {
        let t = target(&[("db-driver", "pgsql"), ("mysql-port", "3307")]).unwrap();
        let d = t.default_target("sbtest");
        assert_eq!(d.driver, Driver::Pgsql);
        assert_eq!(
            (d.host.as_str(), d.port, d.user.as_str()),
            ("localhost", 5432, "sbtest")
        );
        assert_eq!(
            (d.database.as_str(), d.ssl.mode),
            ("sbtest", SslMode::Preferred)
        );
        let t = target(&[("db-driver", "pgsql"), ("pgsql-sslmode", "verify-full")]).unwrap();
        assert_eq!(t.ssl.mode, SslMode::VerifyIdentity);
        for (name, value, why) in [
            ("pgsql-sslmode", "sometimes", "verify-full"),
            ("pgsql-port", "0", "1 to 65535"),
            ("pgsql-host", "a,,b", "empty host"),
        ] {
            let e = target(&[("db-driver", "pgsql"), (name, value)]).unwrap_err();
            assert!(e.to_string().contains(why), "{name}={value}: {e}");
        }
    }

    #[test]
    fn target_options_read_back_what_they_write() {
        let t = target(&[
            ("mysql-host", "db1,db2"),
            ("mysql-ssl-mode", "verify_ca"),
            ("mysql-ssl-ca", "/ca.pem"),
            ("mysql-get-server-public-key", "on"),
        ])
        .unwrap();
        let w = t.to_options();
        let back = TargetOptions::resolve("t", w.0.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back.unwrap(), t);
    }

    #[test]
    fn a_result_records_the_engine_not_the_names_asked_for() {
        let s = read(&[("mysql-storage-engine", "MyISAM"), ("server-vars", "a,b")]).unwrap();
        assert_eq!(
            s.recorded(),
            [("mysql_storage_engine".to_string(), "MyISAM".into())]
        );
    }

    #[test]
    fn options_read_back_what_they_write() {
        let s = read(&[("mysql-storage-engine", "MyISAM"), ("server-vars", "a,b")]).unwrap();
        let w = s.to_options();
        let back = ServerOptions::resolve("t", w.0.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back.unwrap(), s);
    }

    #[test]
    fn target_options_are_all_written_back() {
        crate::spec::assert_written_back::<TargetOptions>(
            &[
                &[
                    ("mysql-host", "db1,[::1]"),
                    ("mysql-port", "3307"),
                    ("mysql-socket", "/run/mysqld.sock"),
                    ("mysql-user", "bench"),
                    ("mysql-password", "secret"),
                    ("mysql-db", "bench"),
                    ("mysql-ssl", "on"),
                    ("mysql-ssl-ca", "/ca.pem"),
                    ("mysql-ssl-cert", "/client.pem"),
                    ("mysql-ssl-key", "/client.key"),
                    ("mysql-server-public-key", "/server.pub"),
                    ("mysql-get-server-public-key", "on"),
                ],
                &[("mysql-ssl-mode", "verify_identity")],
                &[
                    ("db-driver", "pgsql"),
                    ("pgsql-host", "pg1,pg2"),
                    ("pgsql-port", "5433"),
                    ("pgsql-user", "bench"),
                    ("pgsql-password", "secret"),
                    ("pgsql-db", "bench"),
                    ("pgsql-sslmode", "verify-full"),
                    ("pgsql-sslrootcert", "/ca.pem"),
                    ("pgsql-sslcert", "/client.pem"),
                    ("pgsql-sslkey", "/client.key"),
                ],
            ],
            // Declared for sysbench's command lines; only off is supported.
            &["mysql-compression"],
        );
    }
}
