//! pgbench's script language, as PostgreSQL 15's pgbench documents it, for `fleetbench
//! pgbench -f`: a script file becomes a [`Program`] of commands (SQL with `:variables`,
//! `\set`, `\sleep`, `\if`/`\elif`/`\else`/`\endif`, `\gset`/`\aset`, pipelines), checked
//! whole before a run starts (a mistake is one error with its line and column); the
//! expression language of `\set` and `\if` evaluates over a client's [`Vars`].
//!
//! Pure logic only: the agent runs the SQL and the sleeps; the coordinator parses each
//! file once to refuse a bad one before anything starts, and the agents parse the same
//! text again.

pub mod env;
pub mod expr;
pub mod func;
pub mod hash;
pub mod script;
pub mod sql;
pub mod value;

pub use expr::Expr;
pub use script::{Command, Program, SqlEnd};
pub use sql::{Piece, SqlText};
pub use value::{Value, Vars};

/// A mistake in a script, found where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ScriptError {
    /// 1-based line of the script file.
    pub line: usize,
    /// 1-based column (in characters) on that line.
    pub column: usize,
    pub message: String,
}

/// What can go wrong while a client evaluates an expression or runs a command; the
/// client ends, as a pgbench client does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

impl EvalError {
    pub fn new(s: impl Into<String>) -> EvalError {
        EvalError(s.into())
    }
}

/// The random numbers expressions draw (the agent's generator).
pub trait Random {
    /// 64 uniformly random bits.
    fn next_u64(&mut self) -> u64;

    /// A uniform double in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}
