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
    /// Workers that never return from the opening (a script's endless loop in
    /// `thread_init`): they are left behind, and a standalone agent ends to stop them.
    #[error("{0}")]
    Stuck(String),
    /// A setting of the agent's environment is not valid.
    #[error("{0}")]
    Setting(String),
}

impl LeanOpenError {
    /// The error as it is, where no other client could try instead (PostgreSQL).
    pub fn into_open(self, target: &Target) -> OpenError {
        match self {
            LeanOpenError::Open(e) => e,
            LeanOpenError::Unsupported(message) => OpenError::Connect {
                target: target.describe(),
                message,
            },
        }
    }
}

/// Why opening a connection through the gate (`crate::sql::opening`) gave up, as the user
/// is told.
pub fn gate_error(target: &Target, e: super::opening::GateError) -> LeanOpenError {
    use super::opening::GateError;
    match e {
        GateError::Failed(e) => open_error(target, e),
        GateError::Cancelled => OpenError::Cancelled.into(),
        GateError::GaveUp(message) => OpenError::Connect {
            target: target.describe(),
            message,
        }
        .into(),
    }
}

/// A readable error for a failed connect (the codes mysql_async's path maps too; a
/// PostgreSQL server's SQLSTATEs as `fleetbench_model::sqlstate` numbers them).
pub fn open_error(target: &Target, e: SqlError) -> LeanOpenError {
    let text = e.to_string();
    let state = |s| fleetbench_model::sqlstate::encode(s);
    let code = e.code();
    if code.is_some() && (code == state("28P01") || code == state("28000")) {
        return LeanOpenError::Open(OpenError::Access {
            target: target.describe(),
            message: text,
        });
    }
    if code.is_some() && code == state("3D000") {
        return LeanOpenError::Open(OpenError::NoDatabase {
            target: target.describe(),
            database: target.database.clone(),
        });
    }
    LeanOpenError::Open(match code {
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
