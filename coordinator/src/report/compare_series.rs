//! What `compare` lines up: a result file read back as a series of measurements, and the
//! database servers it reached (shared by the comparison and its table).

use std::collections::BTreeMap;

use crate::sweep::Summary;

/// One line of results: a run, a sweep or a scenario, with its measurements (several per
/// thread count with `--repeat`).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    /// The test it ran ("oltp_read_write", "cpu", ...).
    pub test: String,
    /// Its configuration, flattened to `key: value` (thread counts of thread sweeps and
    /// rates of rate sweeps left out).
    pub settings: BTreeMap<String, String>,
    /// The database servers it reached, with the settings the agents read from them:
    /// compared by server, not by the target names the runs gave them.
    pub servers: Vec<Server>,
    pub rows: Vec<Summary>,
}

/// A database server a run reached: where it is, what it is, and its recorded variables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Server {
    /// `host:port`, or the socket's path (the target's name in files without targets).
    pub addr: String,
    /// Empty in files written before the agents reported it.
    pub version: String,
    pub vars: BTreeMap<String, String>,
}
