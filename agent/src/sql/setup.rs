//! Connections for prepare, prewarm, cleanup and checks: the lean client of the target's
//! database, or mysql_async where the lean MySQL client cannot log in (as the workers fall
//! back). Used through the driver interface, off the hot path.

use std::sync::Arc;

use fleetbench_model::workloads::server::{Driver, Target};

use super::asynch::AsyncClient;
use super::mysql::Conn;
use super::open_error::{LeanOpenError, OpenError, open_error};
use super::pgsql::PgConn;
use super::{Client, Reply, Sockets, SqlError};

/// One set-up connection, of whichever client could log in.
pub enum SetupConn {
    Lean(Conn),
    Async(AsyncClient),
    Pg(PgConn),
}

impl SetupConn {
    /// Connects to `target` within its connect timeout; the error says what the user
    /// should know (access, a missing database, no answer). Cancelling `sockets` shuts
    /// the connection, so a statement in flight (a CREATE INDEX, a lock wait) ends at once.
    pub fn open(target: &Target, sockets: &Arc<Sockets>) -> Result<SetupConn, OpenError> {
        if target.driver == Driver::Pgsql {
            return match <PgConn as Client>::connect(target, sockets) {
                Ok(c) => Ok(SetupConn::Pg(c)),
                Err(e) => Err(open_error(target, e).into_open(target)),
            };
        }
        let forced_async =
            std::env::var("FLEETBENCH_OLTP_CLIENT").is_ok_and(|v| v == "mysql_async");
        if !forced_async {
            match <Conn as Client>::connect(target, sockets) {
                Ok(c) => return Ok(SetupConn::Lean(c)),
                Err(e) => match open_error(target, e) {
                    LeanOpenError::Open(e) => return Err(e),
                    LeanOpenError::Unsupported(_) => {}
                },
            }
        }
        match AsyncClient::connect(target, sockets) {
            Ok(c) => Ok(SetupConn::Async(c)),
            Err(e) => Err(match open_error(target, e) {
                LeanOpenError::Open(e) => e,
                LeanOpenError::Unsupported(message) => OpenError::Connect {
                    target: target.describe(),
                    message,
                },
            }),
        }
    }

    pub fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        match self {
            SetupConn::Lean(c) => Client::query(c, sql),
            SetupConn::Async(c) => c.query(sql),
            SetupConn::Pg(c) => Client::query(c, sql),
        }
    }

    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        match self {
            SetupConn::Lean(c) => Client::query_rows(c, sql),
            SetupConn::Async(c) => c.query_rows(sql),
            SetupConn::Pg(c) => Client::query_rows(c, sql),
        }
    }

    pub fn quit(self) {
        match self {
            SetupConn::Lean(c) => Client::quit(c),
            SetupConn::Async(c) => c.quit(),
            SetupConn::Pg(c) => Client::quit(c),
        }
    }

    /// The database this connection speaks to.
    pub fn driver(&self) -> Driver {
        match self {
            SetupConn::Pg(_) => Driver::Pgsql,
            _ => Driver::Mysql,
        }
    }

    /// The names of the tables in the connection's database (its current schema on
    /// PostgreSQL).
    pub fn table_names(&mut self) -> Result<Vec<String>, SqlError> {
        let sql = match self.driver() {
            Driver::Mysql => "SHOW TABLES",
            Driver::Pgsql => "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
        };
        Ok(self
            .query_rows(sql)?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }
}
