//! Why OLTP connections could not be opened: shared by the clients that open them and the
//! workers and loaders that use them, so that neither depends on the other for it.

use fleetbench_model::workloads::server::Target;

use super::SqlError;

/// Why a worker could not open (see [`OpenError`] for what the user is told).
#[derive(Debug, thiserror::Error)]
pub enum LeanOpenError {
    /// The lean client cannot log in to this server (authentication plugin): use mysql_async.
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Open(#[from] OpenError),
}

/// Why a worker could not open its connections or statements.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("access denied on target {target}: {message}")]
    Access { target: String, message: String },
    #[error(
        "database '{database}' does not exist on target {target}: create it first (CREATE DATABASE {database})"
    )]
    NoDatabase { target: String, database: String },
    #[error("table {table} does not exist on target {target}: run prepare first")]
    NoTable { target: String, table: String },
    #[error("cannot connect to target {target}: {message}")]
    Connect { target: String, message: String },
    #[error("cannot prepare a statement on target {target}: {message}")]
    Prepare { target: String, message: String },
    #[error("the run was cancelled while its connections were opening")]
    Cancelled,
    /// A setting of the agent's environment is not valid.
    #[error("{0}")]
    Setting(String),
}

/// A readable error for a failed connect (the codes mysql_async's path maps too).
pub fn open_error(target: &Target, e: SqlError) -> LeanOpenError {
    let text = e.to_string();
    LeanOpenError::Open(match e.code() {
        Some(1045) => OpenError::Access {
            target: target.describe(),
            message: text,
        },
        Some(1044) => OpenError::Access {
            target: target.describe(),
            message: format!(
                "{text} (if the database does not exist, create it: CREATE DATABASE {})",
                target.database
            ),
        },
        Some(1049) => OpenError::NoDatabase {
            target: target.describe(),
            database: target.database.clone(),
        },
        _ => match e {
            SqlError::UnsupportedAuth(_) => return LeanOpenError::Unsupported(text),
            _ => OpenError::Connect {
                target: target.describe(),
                message: text,
            },
        },
    })
}
