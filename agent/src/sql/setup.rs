//! Connections for prepare, prewarm, cleanup and checks: the lean client, or mysql_async
//! where the lean client cannot log in (as the workers fall back). Used through the driver
//! interface, off the hot path.

use std::sync::Arc;

use fleetbench_model::workloads::server::Target;

use super::asynch::AsyncClient;
use super::mysql::Conn;
use super::open_error::{LeanOpenError, OpenError, open_error};
use super::{Client, Reply, Sockets, SqlError};

/// One set-up connection, of whichever client could log in.
pub enum SetupConn {
    Lean(Conn),
    Async(AsyncClient),
}

impl SetupConn {
    /// Connects to `target` within its connect timeout; the error says what the user
    /// should know (access, a missing database, no answer). Cancelling `sockets` shuts
    /// the connection, so a statement in flight (a CREATE INDEX, a lock wait) ends at once.
    pub fn open(target: &Target, sockets: &Arc<Sockets>) -> Result<SetupConn, OpenError> {
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
        }
    }

    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        match self {
            SetupConn::Lean(c) => Client::query_rows(c, sql),
            SetupConn::Async(c) => c.query_rows(sql),
        }
    }

    pub fn quit(self) {
        match self {
            SetupConn::Lean(c) => Client::quit(c),
            SetupConn::Async(c) => c.quit(),
        }
    }
}
