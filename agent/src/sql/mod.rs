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
