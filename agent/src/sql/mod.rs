//! The SQL driver layer: one interface ([`Client`]) through which the workloads
//! connect, run simple and prepared statements and read rows, whatever the database: the
//! lean MySQL client ([`mysql`]) and the lean PostgreSQL client ([`pgsql`]) implement it. Opening many connections at
//! once ([`opening`]) and what a failed opening says ([`open_error`]) are the layer's too.

pub mod asynch;
pub mod choose;
pub mod dialect;
pub mod mysql;
pub mod open_error;
pub mod opening;
pub mod pgsql;
pub mod setup;
pub mod sockets;
pub(crate) mod stream;
pub mod tls;

pub use sockets::Sockets;

use std::io;
use std::sync::Arc;

use fleetbench_model::workloads::server::Target;

/// One connection to a database target.
pub trait Client: Sized {
    type Stmt;

    /// Stack of a worker thread driving this client. The lean client's calls are shallow;
    /// a small stack keeps thousands of worker threads cheap in address space and page
    /// tables. mysql_async's futures are large, so its workers keep the usual size.
    const STACK_SIZE: usize;

    /// Whether every wait of this client goes through `crate::coop`, so that its workers
    /// can share a thread as cooperative workers.
    const COOPERATIVE: bool;

    /// Connects and logs in. The connection stops (its statement fails) once `sockets` is
    /// cancelled, so a statement blocked on a lock does not hold an aborted run.
    fn connect(target: &Target, sockets: &Arc<Sockets>) -> Result<Self, SqlError>;

    fn prepare(&mut self, sql: &str) -> Result<Self::Stmt, SqlError>;

    fn execute(&mut self, stmt: &mut Self::Stmt, params: &[Param]) -> Result<Reply, SqlError>;

    fn query(&mut self, sql: &str) -> Result<Reply, SqlError>;

    /// Runs a text query and returns its rows, each column as text (None for NULL): for
    /// checks and set-up, not the hot path. At most [`FACT_ROWS`] rows are kept.
    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        self.query_rows_upto(sql, FACT_ROWS)
    }

    /// [`Client::query_rows`] keeping the first `max_rows` rows (the rest are read and
    /// dropped): a script's `con:query` keeps them all, as sysbench does.
    fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError>;

    /// Says goodbye and closes; errors no longer matter.
    fn quit(self);

    /// How this connection was made, for the result.
    fn info(&self) -> ConnInfo;

    /// The server's version and the values of the global variables named in `vars` (read
    /// once per target, for the result: which server with which settings).
    fn server_facts(
        &mut self,
        vars: &[String],
    ) -> Result<(String, Vec<(String, String)>), SqlError>;
}

/// The rows a check or set-up query keeps: it asks for a few.
pub const FACT_ROWS: usize = 1024;

/// `SHOW GLOBAL VARIABLES` for `vars` (names already checked: letters, digits and `_`).
pub fn show_variables_sql(vars: &[String]) -> String {
    let names: Vec<String> = vars.iter().map(|v| format!("'{v}'")).collect();
    format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
        names.join(", ")
    )
}

/// Rows of (name, value) text columns as pairs, rows without a name left out: the server
/// settings `Client::server_facts` reads.
pub(crate) fn name_value_pairs(rows: Vec<Vec<Option<String>>>) -> Vec<(String, String)> {
    rows.into_iter()
        .filter_map(|r| {
            let mut r = r.into_iter();
            Some((r.next()??, r.next()?.unwrap_or_default()))
        })
        .collect()
}

/// How a worker's connection to a target was made: which client, which authentication
/// plugin logged it in ("" when the client does not say), which TLS version ("" for none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnInfo {
    pub client: &'static str,
    pub auth_plugin: String,
    pub tls: String,
    /// The server's version and chosen global variables (first connection to a target).
    pub server_version: String,
    pub server_vars: Vec<(String, String)>,
}

/// What a failed statement means for the event that ran it, as the driver classifies its
/// errors ([`SqlError::classify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The server refused the statement with a code the run ignores (sysbench's
    /// `--mysql-ignore-errors`, TPC-C's deadlocks): count it and restart the event.
    Ignorable(u32),
    /// The connection is gone: reconnect, then restart the event.
    Reconnect,
    /// Anything else: the run cannot go on.
    Fatal,
}

/// What a statement returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reply {
    /// An OK packet, with the rows it changed.
    Ok { affected_rows: u64 },
    /// A result set, with the number of rows skipped.
    Rows(u64),
}

/// What can go wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The server answered with an error: MySQL's code, or PostgreSQL's SQLSTATE as
    /// `fleetbench_model::sqlstate` numbers it.
    #[error("{message} (error {})", fleetbench_model::sqlstate::name(*code))]
    Server { code: u32, message: String },
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server sent something this client does not understand.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The account needs an authentication plugin this client does not implement.
    #[error("authentication plugin '{0}' is not supported by the lean client")]
    UnsupportedAuth(String),
    /// TLS could not be set up, or the server does not offer it where it is required.
    #[error("TLS: {0}")]
    Tls(String),
    /// Logging in needs something the settings do not allow (a password in the clear
    /// without TLS, the server's public key).
    #[error("{0}")]
    Auth(String),
}

/// Server codes that mean the connection is gone (MySQL's; PostgreSQL's class 08,
/// connection exception, and 57P01-57P03, the server shutting down, are checked apart).
const LOST_CODES: [u32; 5] = [2013, 2006, 1927, 1053, 1152];

/// Whether `code` says the connection is gone.
fn is_lost(code: u32) -> bool {
    if fleetbench_model::sqlstate::is_sqlstate(code) {
        let s = fleetbench_model::sqlstate::state(code);
        return s.starts_with("08") || matches!(s.as_str(), "57P01" | "57P02" | "57P03");
    }
    LOST_CODES.contains(&code)
}

impl SqlError {
    pub fn code(&self) -> Option<u32> {
        match self {
            SqlError::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// What this error means for the event: a server code the run ignores (`ignores`)
    /// restarts it, a lost connection (a code that says so, or anything but a server's
    /// answer) reconnects, any other answer of the server is fatal.
    pub fn classify(&self, ignores: impl Fn(u32) -> bool) -> ErrorClass {
        match self {
            SqlError::Server { code, .. } if ignores(*code) => ErrorClass::Ignorable(*code),
            SqlError::Server { code, .. } if !is_lost(*code) => ErrorClass::Fatal,
            _ => ErrorClass::Reconnect,
        }
    }
}

/// A parameter of a prepared statement (or a value rendered into a text query).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Int(i64),
    Null,
    Str(&'a [u8]),
}
