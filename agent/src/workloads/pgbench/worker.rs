//! One pgbench client with one connection (the lean PostgreSQL client), as a cooperative
//! worker of one of the agent's `-j` threads (blocking code either way, see `crate::coop`): each event draws a script by weight and its values, and runs its
//! statements one round trip each, as pgbench does, in the query mode asked for.
//! Serialization failures and deadlocks are tried again up to `--max-tries`; a
//! transaction that still fails is counted as failed under its script, by its SQLSTATE.
//! Any other error aborts this client alone, with pgbench's message; the others go on.
//! With `-r` each command (the `\set` draws too) is timed, and the failures and retries
//! counted where they happened; the figures go to the run as the client ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::pgbench::{
    ACCOUNTS_PER_SCALE, Builtin, PgbenchConfig, QueryMode, TELLERS_PER_SCALE,
};

use super::sql::{Stmt, Vals, script};
use crate::rand::Rng;
use crate::sql::open_error::{LeanOpenError, OpenError, gate_error};
use crate::sql::opening::ConnectGate;
use crate::sql::pgsql::{PgConn, PgStmt};
use crate::sql::{Client, Param, Reply, Sockets, SqlError};
use crate::stats::{CommandTally, TxnEnd};
use crate::workloads::{Step, WorkerLoop};

/// SQLSTATEs a transaction is tried again after: serialization_failure and
/// deadlock_detected (pgbench's retriable errors).
pub(super) fn retriable(code: u32) -> bool {
    use fleetbench_model::sqlstate::encode;
    Some(code) == encode("40001") || Some(code) == encode("40P01")
}

pub struct PgbenchWorker {
    cfg: Arc<PgbenchConfig>,
    conn: PgConn,
    sockets: Arc<Sockets>,
    /// `-M prepared`: the statements by [`Stmt::index`].
    stmts: Vec<Option<PgStmt>>,
    rng: Rng,
    sql: String,
    db: DbCounters,
    /// The run's scripts (all built-in on this path); a script's place is its
    /// transaction-type slot.
    builtins: Vec<Builtin>,
    total_weight: u64,
    accounts: u64,
    tellers: u64,
    branches: u64,
    /// This client's number over the whole run (pgbench's "client N").
    client: u64,
    /// `-r`: per script (by its place in the run's list) and command, and where they go
    /// when the client ends. Empty and None without `-r`.
    commands: Vec<Vec<CommandTally>>,
    sink: Option<CommandSink>,
}

/// What a client leaves its per-command figures in (`-r`): the run's figures that its
/// workers hand back as they end.
pub type CommandSink = Arc<Mutex<crate::stats::WorkerTail>>;

impl PgbenchWorker {
    /// Connects (through `gate`) and, in prepared mode, prepares the scripts' statements.
    /// `client` is its number over the run; `sink` (with `-r`) receives its per-command
    /// figures when it ends.
    pub fn open(
        cfg: Arc<PgbenchConfig>,
        client: u64,
        seed: u64,
        sockets: Arc<Sockets>,
        gate: &ConnectGate,
        sink: Option<CommandSink>,
    ) -> Result<Self, LeanOpenError> {
        let target = &cfg.target;
        let mut conn = gate
            .open(0, &sockets, || {
                PgConn::connect(target, Some(sockets.clone()))
            })
            .map_err(|e| gate_error(target, e))?;
        let mut stmts: Vec<Option<PgStmt>> = vec![None; Stmt::ALL.len()];
        if cfg.mode == QueryMode::Prepared {
            for b in cfg.scripts.iter().filter_map(|(s, _)| s.builtin()) {
                for &s in script(b) {
                    if stmts[s.index()].is_some() {
                        continue;
                    }
                    let p = conn
                        .prepare_named(s.text())
                        .map_err(|e| prepare_error(&cfg, e))?;
                    stmts[s.index()] = Some(p);
                }
            }
        }
        let scale = u64::from(cfg.scale);
        Ok(PgbenchWorker {
            builtins: cfg
                .scripts
                .iter()
                .filter_map(|(s, _)| s.builtin())
                .collect(),
            total_weight: cfg.total_weight(),
            accounts: scale * ACCOUNTS_PER_SCALE,
            tellers: scale * TELLERS_PER_SCALE,
            branches: scale,
            rng: Rng::new(seed),
            sql: String::with_capacity(256),
            db: DbCounters::default(),
            client,
            commands: match &sink {
                Some(_) => cfg
                    .scripts
                    .iter()
                    .map(|(s, _)| vec![CommandTally::default(); s.commands().len()])
                    .collect(),
                None => Vec::new(),
            },
            sink,
            conn,
            stmts,
            sockets,
            cfg,
        })
    }

    /// How the connection was made.
    pub fn info(&self) -> crate::sql::ConnInfo {
        self.conn.info()
    }

    /// The server's version, as the result records it.
    pub fn server_version(&self) -> String {
        format!("PostgreSQL {}", self.conn.server_version())
    }

    /// Closes the connection (politely unless the run was aborted), leaving the
    /// per-command figures of `-r` with the run.
    pub fn close(self) {
        if let Some(sink) = &self.sink {
            let mut all = sink.lock().unwrap_or_else(|p| p.into_inner());
            crate::stats::merge_commands(&mut all.commands, &self.commands);
        }
        if self.sockets.is_cancelled() {
            drop(self.conn);
        } else {
            self.conn.quit();
        }
    }

    /// Runs statement `s` with `v` in the run's query mode, counting it as sysbench would.
    #[inline]
    fn run(&mut self, s: Stmt, v: &Vals) -> Result<(), SqlError> {
        let mut p = [0i64; 4];
        let n = v.params(s, &mut p);
        let params = [
            Param::Int(p[0]),
            Param::Int(p[1]),
            Param::Int(p[2]),
            Param::Int(p[3]),
        ];
        let reply = match self.cfg.mode {
            QueryMode::Simple => {
                v.render(s, &mut self.sql);
                self.conn.query(&self.sql)?
            }
            QueryMode::Extended => self.conn.execute_unnamed(s.text(), &params[..n])?,
            QueryMode::Prepared => match &mut self.stmts[s.index()] {
                Some(st) => self.conn.execute(st, &params[..n])?,
                None => self.conn.execute_unnamed(s.text(), &params[..n])?,
            },
        };
        match reply {
            Reply::Rows(_) => self.db.reads += 1,
            Reply::Ok { affected_rows } if affected_rows > 0 => self.db.writes += 1,
            Reply::Ok { .. } => self.db.others += 1,
        }
        Ok(())
    }

    /// One try of script `i`'s statements with `v`; on an error, the failing
    /// statement's place in the script with it.
    fn attempt(&mut self, i: usize, v: &Vals) -> Result<(), (usize, SqlError)> {
        let b = self.builtins[i];
        if self.commands.is_empty() {
            for (k, &s) in script(b).iter().enumerate() {
                self.run(s, v).map_err(|e| (k, e))?;
            }
            return Ok(());
        }
        // -r: one clock read per statement, each end the next one's start.
        let sets = b.sets();
        let mut t = Instant::now();
        for (k, &s) in script(b).iter().enumerate() {
            self.run(s, v).map_err(|e| (k, e))?;
            let now = Instant::now();
            self.commands[i][sets + k].done(now.duration_since(t).as_nanos() as u64);
            t = now;
        }
        Ok(())
    }

    /// The script of the next transaction, by weight.
    fn pick(&mut self) -> usize {
        if self.builtins.len() == 1 {
            0
        } else {
            self.cfg.pick(self.rng.uniform(0, self.total_weight - 1))
        }
    }

    /// Value `k` of pgbench's `\set` lines: aid, bid, tid, delta.
    #[inline]
    fn value(&mut self, k: usize) -> i64 {
        match k {
            0 => self.rng.uniform(1, self.accounts) as i64,
            1 => self.rng.uniform(1, self.branches) as i64,
            2 => self.rng.uniform(1, self.tellers) as i64,
            _ => self.rng.uniform(0, 10_000) as i64 - 5_000,
        }
    }

    /// The next transaction's script and values; with `-r` each of the script's `\set`
    /// lines timed (the values it does not use are drawn all the same, untimed).
    fn draw(&mut self) -> (usize, Vals) {
        let i = self.pick();
        let mut x = [0i64; 4];
        if self.commands.is_empty() {
            for (k, x) in x.iter_mut().enumerate() {
                *x = self.value(k);
            }
        } else {
            let sets = self.builtins[i].sets();
            let mut t = Instant::now();
            for (k, x) in x.iter_mut().enumerate() {
                *x = self.value(k);
                if k < sets {
                    let now = Instant::now();
                    self.commands[i][k].done(now.duration_since(t).as_nanos() as u64);
                    t = now;
                }
            }
        }
        let v = Vals {
            aid: x[0],
            bid: x[1],
            tid: x[2],
            delta: x[3],
        };
        (i, v)
    }

    /// pgbench's line for a client that cannot go on: "client 3 script 0 aborted in
    /// command 9 query 0: ERROR:  ..." (commands counted from the script's first
    /// `\set` line).
    fn abort_message(&self, i: usize, k: usize, e: &SqlError) -> String {
        let command = self.builtins[i].sets() + k;
        let what = match e {
            SqlError::Server { message, .. } => format!("ERROR:  {message}"),
            other => other.to_string(),
        };
        format!(
            "client {} script {i} aborted in command {command} query 0: {what}",
            self.client
        )
    }
}

pub(super) fn prepare_error(cfg: &PgbenchConfig, e: SqlError) -> LeanOpenError {
    let message = match e.code() {
        Some(c) if Some(c) == fleetbench_model::sqlstate::encode("42P01") => {
            format!("{e}: the pgbench tables are not there; run `fleetbench pgbench -i` first")
        }
        _ => e.to_string(),
    };
    OpenError::Prepare {
        target: cfg.target.describe(),
        message,
    }
    .into()
}

impl WorkerLoop for PgbenchWorker {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        let (i, v) = self.draw();
        let mut end = TxnEnd {
            kind: i,
            ..TxnEnd::default()
        };
        let mut tries = 1;
        loop {
            match self.attempt(i, &v) {
                Ok(()) => break,
                Err((k, e)) => {
                    let stopped = stop.load(Ordering::Relaxed);
                    let at = self.builtins[i].sets() + k;
                    match e.code() {
                        Some(code) if retriable(code) => {
                            // The client rolled the failed transaction back already.
                            // Once the run is over it is not tried again but fails, as
                            // in pgbench.
                            if tries < self.cfg.max_tries && !stopped {
                                tries += 1;
                                end.retried += 1;
                                if let Some(c) = self.commands.get_mut(i) {
                                    c[at].retries += 1;
                                }
                                continue;
                            }
                            self.db.count_ignored(code);
                            end.failed = true;
                            if let Some(c) = self.commands.get_mut(i) {
                                c[at].failures += 1;
                            }
                            break;
                        }
                        // The run's end cut it short (an abort shuts the sockets).
                        _ if stopped => return Step::Stopped,
                        // As pgbench: this client ends, the others go on.
                        _ => return Step::Quit(self.abort_message(i, k, &e)),
                    }
                }
            }
        }
        end.db = std::mem::take(&mut self.db);
        Step::Txn(end)
    }

    fn skip(&mut self) -> Option<usize> {
        Some(self.pick())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_failures_and_deadlocks_are_retried() {
        let code = |s| fleetbench_model::sqlstate::encode(s).unwrap();
        assert!(retriable(code("40001")));
        assert!(retriable(code("40P01")));
        assert!(!retriable(code("23505")));
        assert!(!retriable(1213));
    }
}
