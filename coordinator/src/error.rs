//! The errors that are the user's to fix (exit code 2, see crate::exit): a command line
//! refused, agents that cannot take the run, a scenario file or a result file that is
//! wrong. Each module that finds such a mistake returns one of these; nothing here
//! depends on the rest of the coordinator.

/// A command line that cannot be run, reduced to its one-line message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn new(msg: impl Into<String>) -> UsageError {
        UsageError(msg.into())
    }
}

/// Why a session could not start or finish. Every variant names the agent.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot reach agent {agent}: {reason}")]
    Unreachable { agent: String, reason: String },
    #[error(
        "agent {agent} speaks protocol v{theirs} (fleetbench-agent {version}), this coordinator speaks v{ours}: run the same fleetbench version on both sides"
    )]
    Protocol {
        agent: String,
        theirs: u32,
        ours: u32,
        version: String,
    },
    #[error("agent {agent} cannot run the {workload} test (it offers: {offers})")]
    MissingWorkload {
        agent: String,
        workload: String,
        offers: String,
    },
    #[error("agent {agent} refused the run: {reason}")]
    Refused { agent: String, reason: String },
    /// A share of the plan beyond what the agent's Hello says its host can give.
    #[error("agent {agent} cannot run {threads} threads: {reason}")]
    Limit {
        agent: String,
        threads: u64,
        reason: String,
    },
    #[error(
        "agent {agent} was not ready within {secs}s (no progress opening its connections for that long); the run was cancelled on every agent"
    )]
    NotReady { agent: String, secs: u64 },
    #[error("agent {agent} refused the token: {reason}")]
    Auth { agent: String, reason: String },
    #[error("{what} failed on agent {reason}")]
    TableJob { what: &'static str, reason: String },
    /// The dry run before a prepare or cleanup: every agent's refusal, not only the first.
    #[error("{} refused{}: {}", .what, nothing_done(.what), .reasons)]
    CheckRefused { what: &'static str, reasons: String },
    /// A prepare, cleanup or prewarm stopped by a signal to the coordinator.
    #[error("{0}")]
    Interrupted(Box<Interrupted>),
}

/// A table job that a signal to the coordinator stopped: what each agent said last.
#[derive(Debug)]
pub struct Interrupted {
    /// The command: prepare, cleanup or prewarm.
    pub what: &'static str,
    /// SIGINT, SIGTERM or SIGHUP.
    pub signal: &'static str,
    /// Whether the real job had begun on the agents; before it (in the dry run) nothing
    /// was created or dropped.
    pub begun: bool,
    /// Each working agent's address and how its job ended.
    pub agents: Vec<(String, AgentEnd)>,
    /// Progress summed over the agents when it stopped (rows, bytes, tables or steps).
    pub done: u64,
    pub total: u64,
}

/// How one agent's part of an interrupted table job ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEnd {
    /// It finished before the stop reached it; its summary.
    Finished(String),
    /// It stopped (or failed); its own words on what it leaves behind.
    Stopped(String),
    /// No answer within the grace period (or a second signal ended the wait).
    Silent,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} interrupted by {}", self.what, self.signal)?;
        if !self.begun {
            return write!(f, " before it began: nothing was created or dropped");
        }
        for (agent, end) in &self.agents {
            match end {
                AgentEnd::Finished(_) => write!(f, "; agent {agent}: finished")?,
                AgentEnd::Stopped(why) => write!(f, "; agent {agent}: {why}")?,
                AgentEnd::Silent => write!(f, "; agent {agent}: no answer")?,
            }
        }
        Ok(())
    }
}

/// A mistake in a scenario file, with the line (1-based) and field it concerns.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}: line {line}: field '{field}': {message}")]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// What is wrong with a file given to `compare` or `report`.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    /// Missing, unreadable or beyond the size cap; the message names the file.
    #[error(transparent)]
    Read(#[from] fleetbench_model::capped::CappedError),
    #[error("{0} is not a fleetbench result: {1}")]
    Format(String, String),
    #[error("{0}")]
    Mismatch(String),
}

/// What a refused table job's dry run left alone: a check creates and drops nothing anyway.
fn nothing_done(what: &str) -> &'static str {
    // A check (TPC-C's, pgbench's of its tables before a run) creates nothing anyway.
    if what == "check" || what.contains("check of") {
        ""
    } else {
        ", nothing was created or dropped"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_check_does_not_speak_of_creating_or_dropping() {
        let check = SessionError::CheckRefused {
            what: "check",
            reasons: "agent a: no table tpcc.warehouse".into(),
        };
        assert_eq!(
            check.to_string(),
            "check refused: agent a: no table tpcc.warehouse"
        );
        let prepare = SessionError::CheckRefused {
            what: "prepare",
            reasons: "agent a: table sbtest1 exists".into(),
        };
        assert_eq!(
            prepare.to_string(),
            "prepare refused, nothing was created or dropped: agent a: table sbtest1 exists"
        );
    }
}
