//! The OLTP workloads of sysbench 1.0 against MySQL/MariaDB as an agent runs them: the
//! lean client and its TLS and logins, opening connections at scale, the workers, prepare
//! and cleanup. What a run asks for (options, statement texts, schema) is the model's
//! (`fleetbench_model::workloads::oltp`).

pub mod auth;
pub mod client;
pub mod open_error;
pub mod opening;
pub mod prepare;
pub mod tls;
pub mod wire;
pub mod worker;
