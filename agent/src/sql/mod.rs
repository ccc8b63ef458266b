//! The SQL driver layer: one interface ([`client::Client`]) through which the workloads
//! connect, run simple and prepared statements and read rows, whatever the database; the
//! lean MySQL client ([`mysql`]) is its first implementation. Opening many connections at
//! once ([`opening`]) and what a failed opening says ([`open_error`]) are the layer's too.

pub mod client;
pub mod mysql;
pub mod open_error;
pub mod opening;
pub mod sockets;

pub use sockets::Sockets;

/// What a failed statement means for the event that ran it, as the driver classifies its
/// errors ([`mysql::WireError::classify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The server refused the statement with a code the run ignores (sysbench's
    /// `--mysql-ignore-errors`, TPC-C's deadlocks): count it and restart the event.
    Ignorable(u16),
    /// The connection is gone: reconnect, then restart the event.
    Reconnect,
    /// Anything else: the run cannot go on.
    Fatal,
}
