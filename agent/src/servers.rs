//! The database servers' own figures, read once per interval over SQL (the targets a Start
//! names in `sample_servers`): one thread per run holds a connection to each server, reads
//! its status when the run's drive loop asks, and answers with each server's change since
//! the last reading. The drive loop never waits for it longer than [`READ_WAIT`]: a late or
//! failed reading is an interval without figures, said so, never zeros.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use fleetbench_model::server_status::{self as status, Change, Reading};
use fleetbench_model::workloads::server::{Driver, Target};
use fleetbench_proto::v1 as pb;
use tokio::sync::oneshot;
use tracing::{info, warn};

use crate::sql::sockets::Sockets;
use crate::sql::{Client, SqlError, mysql, pgsql::PgConn};

/// How long an interval waits for its readings before it goes out without them.
pub const READ_WAIT: Duration = Duration::from_secs(1);

/// How long the run's last interval waits for its readings (see [`ServerWatch::read_last`]).
pub const LAST_READ_WAIT: Duration = Duration::from_secs(5);

/// How long the run's last reading waits when a target is PostgreSQL. A backend sends
/// its statistics to the shared counters at most once a second while it works, and the
/// rest as it exits, a few milliseconds after the workers' Terminate: read at once, the
/// last interval missed up to a second of each backend's rows (a 3 s run's rows written
/// per transaction read as 1.8 where the test wrote 4).
pub const PG_SETTLE: Duration = Duration::from_millis(300);

/// What an interval without figures says when the reading is the run's first (the
/// baseline the next one is measured from).
pub const BASELINE: &str = "first reading (the baseline)";

/// What a server is to replication, which decides the statements read beside its status:
/// none for a plain target after its first reading, so that it costs one statement per
/// interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Not known yet: the first reading asks whether it is a replica.
    Unknown,
    /// Neither: its status alone.
    Plain,
    /// A replica: its replication status and applied position.
    Replica,
    /// The primary of a replica read beside the run: its written position.
    Primary,
}

/// The reading thread of one run; dropping it ends the thread and closes its connections.
pub struct ServerWatch {
    asks: mpsc::Sender<oneshot::Sender<Vec<pb::ServerSample>>>,
    /// Cancelled on drop: a reading blocked on a server that stopped answering ends.
    sockets: Arc<Sockets>,
    targets: Vec<u32>,
    /// What the last reading waits for first ([`PG_SETTLE`] or nothing).
    settle: Duration,
}

impl ServerWatch {
    /// Starts reading these targets (index, target, role); None when there are none.
    pub fn start(targets: Vec<(u32, Target, Role)>) -> Option<ServerWatch> {
        if targets.is_empty() {
            return None;
        }
        let sockets = Arc::new(Sockets::default());
        let (asks, rx) = mpsc::channel();
        let indexes = targets.iter().map(|(i, _, _)| *i).collect();
        let settle = if targets.iter().any(|(_, t, _)| t.driver == Driver::Pgsql) {
            PG_SETTLE
        } else {
            Duration::ZERO
        };
        let mut servers: Vec<Server> = targets.into_iter().map(Server::new).collect();
        let s = sockets.clone();
        let spawned = std::thread::Builder::new()
            .name("fb-servers".into())
            .spawn(move || serve(&mut servers, &rx, &s));
        if let Err(e) = spawned {
            warn!("cannot start the thread that reads the servers' status: {e}");
            return None;
        }
        Some(ServerWatch {
            asks,
            sockets,
            targets: indexes,
            settle,
        })
    }

    /// [`Self::read`] for the run's last interval, read after the workers closed their
    /// connections: PostgreSQL's backends are given [`PG_SETTLE`] to report as they exit,
    /// and the reading [`LAST_READ_WAIT`]: no next interval waits behind it, and a late
    /// last reading would lose the end of the run's figures.
    pub async fn read_last(&self) -> Vec<pb::ServerSample> {
        tokio::time::sleep(self.settle).await;
        self.read_within(LAST_READ_WAIT, "the last status read took over 5 seconds")
            .await
    }

    /// Each server's change since the last reading, or why there is none.
    pub async fn read(&self) -> Vec<pb::ServerSample> {
        self.read_within(READ_WAIT, "the status read took over a second")
            .await
    }

    /// [`Self::read`], waiting up to `wait` for the readings (`late` says why there are
    /// none when they come later).
    async fn read_within(&self, wait: Duration, late: &str) -> Vec<pb::ServerSample> {
        let (tx, rx) = oneshot::channel();
        if self.asks.send(tx).is_err() {
            return self.missing("the reading thread has ended");
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(samples)) => samples,
            Ok(Err(_)) => self.missing("the reading thread has ended"),
            Err(_) => self.missing(late),
        }
    }

    fn missing(&self, why: &str) -> Vec<pb::ServerSample> {
        self.targets
            .iter()
            .map(|&target| pb::ServerSample {
                target,
                missing: why.to_string(),
                ..Default::default()
            })
            .collect()
    }
}

impl Drop for ServerWatch {
    fn drop(&mut self) {
        self.sockets.cancel();
    }
}

/// Answers each ask with a reading of every server, until the watch is dropped.
fn serve(
    servers: &mut [Server],
    asks: &mpsc::Receiver<oneshot::Sender<Vec<pb::ServerSample>>>,
    sockets: &Arc<Sockets>,
) {
    while let Ok(reply) = asks.recv() {
        let samples = servers.iter_mut().map(|s| s.sample(sockets)).collect();
        if reply.send(samples).is_err() {
            // The interval went out without this reading: the next one is a new baseline,
            // so that no change is counted in an interval it does not belong to.
            for s in servers.iter_mut() {
                s.prev = None;
            }
        }
    }
    for s in servers {
        if let Some(c) = s.conn.take() {
            c.quit();
        }
    }
}

/// A connection with either database's lean client.
enum Conn {
    Mysql(mysql::Conn),
    Pgsql(PgConn),
}

impl Conn {
    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        match self {
            Conn::Mysql(c) => c.query_rows_upto(sql, 1000),
            Conn::Pgsql(c) => c.query_rows_upto(sql, 1000),
        }
    }

    fn quit(self) {
        match self {
            Conn::Mysql(c) => c.quit(),
            Conn::Pgsql(c) => c.quit(),
        }
    }
}

/// One server read each interval.
struct Server {
    index: u32,
    target: Target,
    conn: Option<Conn>,
    /// The status statement for this server (PostgreSQL's depends on its version).
    query: String,
    gauges: &'static [&'static str],
    prev: Option<Reading>,
    /// The last failure said in the log, so that a server down for a minute is said once.
    said: Option<String>,
    /// Replication statements this server refused (not a replica's, no GTIDs, a missing
    /// privilege): not asked again in this run.
    refused: Vec<&'static str>,
    role: Role,
    /// What the next sample says once (a missing privilege, with its GRANT).
    note: Option<String>,
}

impl Server {
    fn new((index, target, role): (u32, Target, Role)) -> Server {
        let gauges: &'static [&'static str] = match target.driver {
            Driver::Mysql => &status::MYSQL_GAUGES,
            Driver::Pgsql => &status::PG_GAUGES,
        };
        Server {
            index,
            target,
            conn: None,
            query: String::new(),
            gauges,
            prev: None,
            said: None,
            refused: Vec::new(),
            role,
            note: None,
        }
    }

    fn sample(&mut self, sockets: &Arc<Sockets>) -> pb::ServerSample {
        let mut out = pb::ServerSample {
            target: self.index,
            ..Default::default()
        };
        let note = self.note.take();
        match self.read(sockets) {
            Ok(cur) => {
                self.said = None;
                match self
                    .prev
                    .replace(cur.clone())
                    .map(|p| status::change(&p, &cur, self.gauges))
                {
                    None => out.missing = BASELINE.into(),
                    Some(Change::Values(v)) => out.values = v.into_iter().collect(),
                    Some(Change::Restarted) => {
                        info!(target = %self.target.name, "the server's counters went backwards (a restart): a new baseline");
                        out.missing =
                            "the server restarted: its counters start over from this reading"
                                .into();
                    }
                }
            }
            Err(why) => {
                // Reconnect for the next reading; the one after it is measured from anew.
                if let Some(c) = self.conn.take() {
                    c.quit();
                }
                self.prev = None;
                if self.said.as_deref() != Some(why.as_str()) {
                    warn!(target = %self.target.name, "cannot read the server's status: {why}");
                    self.said = Some(why.clone());
                }
                out.missing = format!("cannot read its status: {why}");
            }
        }
        out.note = self.note.take().or(note).unwrap_or_default();
        out
    }

    fn read(&mut self, sockets: &Arc<Sockets>) -> Result<Reading, String> {
        if self.conn.is_none() {
            self.connect(sockets).map_err(|e| e.to_string())?;
        }
        let conn = self.conn.as_mut().expect("connected above");
        let rows = conn.rows(&self.query).map_err(|e| e.to_string())?;
        let mut reading = status::reading(&rows);
        reading.extend(self.replication());
        Ok(reading)
    }

    /// The replication levels where the server has them: a replica's lag and threads, and
    /// the positions a primary has written and a replica has applied. A statement the
    /// server refuses is not asked again (said once in the log: a missing privilege).
    fn replication(&mut self) -> Reading {
        let asks: &[&'static str] = match (self.target.driver, self.role) {
            (_, Role::Plain) => &[],
            (Driver::Mysql, Role::Unknown) => &[status::REPLICA_QUERY, status::REPLICA_QUERY_NEW],
            (Driver::Mysql, Role::Primary) => &[status::MARIADB_GTID_QUERY],
            (Driver::Mysql, Role::Replica) => &[
                status::REPLICA_QUERY,
                status::REPLICA_QUERY_NEW,
                status::MARIADB_GTID_QUERY,
            ],
            (Driver::Pgsql, _) => &[status::PG_REPLICATION_QUERY],
        };
        let mut out = Reading::new();
        for &q in asks {
            // One of SHOW SLAVE STATUS and SHOW REPLICA STATUS is enough.
            if q == status::REPLICA_QUERY_NEW && !self.refused.contains(&status::REPLICA_QUERY) {
                continue;
            }
            if self.refused.contains(&q) {
                continue;
            }
            let Some(conn) = self.conn.as_mut() else {
                break;
            };
            match conn.rows(q) {
                Ok(rows) => out.extend(match q {
                    status::REPLICA_QUERY | status::REPLICA_QUERY_NEW => rows
                        .first()
                        .map(|r| status::replica_status(r))
                        .unwrap_or_default(),
                    status::MARIADB_GTID_QUERY => status::gtid_positions(&rows),
                    _ => status::reading(&rows),
                }),
                Err(SqlError::Server { code, message }) => {
                    if code == 1227 || code == 1044 || code == 1045 {
                        let note = format!(
                            "no replication figures: {message} (GRANT REPLICATION CLIENT, or SLAVE MONITOR on MariaDB 10.5 and later, ON *.* TO the run's user)"
                        );
                        warn!(target = %self.target.name, "{note}");
                        self.note = Some(note);
                    }
                    self.refused.push(q);
                }
                Err(_) => self.refused.push(q),
            }
        }
        // A server's first reading says whether it is a replica; else its status alone.
        if self.role == Role::Unknown {
            let replica = out.contains_key(status::REPLICA_SQL_RUNNING)
                || out.contains_key(status::REPLICA_POSITION);
            self.role = if replica { Role::Replica } else { Role::Plain };
        }
        out
    }

    fn connect(&mut self, sockets: &Arc<Sockets>) -> Result<(), SqlError> {
        let (conn, query) = match self.target.driver {
            Driver::Mysql => (
                Conn::Mysql(<mysql::Conn as Client>::connect(&self.target, sockets)?),
                status::mysql_query(),
            ),
            Driver::Pgsql => {
                let mut c = <PgConn as Client>::connect(&self.target, sockets)?;
                let version = c
                    .query_rows_upto("SHOW server_version_num", 1)?
                    .first()
                    .and_then(|r| r.first().cloned().flatten())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                (Conn::Pgsql(c), status::pg_query(version))
            }
        };
        self.conn = Some(conn);
        self.query = query;
        Ok(())
    }
}
