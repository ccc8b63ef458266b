//! An agent taking part in a run, from its Ready to its final report.

use fleetbench_proto::v1::{RunEvent, RunRequest};
use tokio::sync::mpsc;
use tonic::Streaming;

use super::connect::AgentConn;
use crate::merge::Connection;
use crate::wire;

/// An agent taking part in the run, with its open stream.
pub(super) struct Participant {
    pub(super) conn: AgentConn,
    pub(super) threads: u32,
    pub(super) requests: mpsc::Sender<RunRequest>,
    /// Taken by the reader task once the run goes.
    pub(super) events: Option<Streaming<RunEvent>>,
    /// How its connections to each target were made, as its Ready said.
    pub(super) connections: Vec<(usize, Connection)>,
    /// Connects it tried again while opening: (target, reason, count).
    pub(super) retries: Vec<(usize, String, u64)>,
}

impl Participant {
    pub(super) fn sender(&self) -> wire::Sender {
        wire::Sender {
            addr: self.conn.addr.clone(),
            name: self.conn.name.clone(),
            host: self.conn.hello.hostname.clone(),
            facts: wire::host_facts(&self.conn.hello),
            threads: self.threads,
        }
    }
}
