//! One pgbench client with one connection (the lean PostgreSQL client), as a cooperative
//! worker of one of the agent's `-j` threads (blocking code either way, see `crate::coop`): each event draws a script by weight and its values, and runs its
//! statements one round trip each, as pgbench does, in the query mode asked for.
//! Serialization failures and deadlocks are tried again up to `--max-tries`; a
//! transaction that still fails is counted as failed under its script, by its SQLSTATE.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::pgbench::{
    ACCOUNTS_PER_SCALE, PgbenchConfig, QueryMode, TELLERS_PER_SCALE,
};

use super::sql::{Stmt, Vals, script};
use crate::rand::Rng;
use crate::sql::open_error::{LeanOpenError, OpenError, open_error};
use crate::sql::opening::{ConnectGate, GateError};
use crate::sql::pgsql::{PgConn, PgStmt};
use crate::sql::{Client, Param, Reply, Sockets, SqlError};
use crate::stats::TxnEnd;
use crate::workloads::{Step, WorkerLoop};

/// SQLSTATEs a transaction is tried again after: serialization_failure and
/// deadlock_detected (pgbench's retriable errors).
fn retriable(code: u32) -> bool {
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
    /// The transaction-type slot of each script (its builtin's index).
    slots: Vec<usize>,
    total_weight: u64,
    accounts: u64,
    tellers: u64,
    branches: u64,
}

impl PgbenchWorker {
    /// Connects (through `gate`) and, in prepared mode, prepares the scripts' statements.
    pub fn open(
        cfg: Arc<PgbenchConfig>,
        seed: u64,
        sockets: Arc<Sockets>,
        gate: &ConnectGate,
    ) -> Result<Self, LeanOpenError> {
        let target = &cfg.target;
        let mut conn = gate
            .open(0, &sockets, || {
                PgConn::connect(target, Some(sockets.clone()))
            })
            .map_err(|e| match e {
                GateError::Failed(e) => open_error(target, e),
                GateError::Cancelled => OpenError::Cancelled.into(),
                GateError::GaveUp(message) => OpenError::Connect {
                    target: target.describe(),
                    message,
                }
                .into(),
            })?;
        let mut stmts: Vec<Option<PgStmt>> = vec![None; Stmt::ALL.len()];
        if cfg.mode == QueryMode::Prepared {
            for &(b, _) in &cfg.scripts {
                for &s in script(b) {
                    if stmts[s.index()].is_some() {
                        continue;
                    }
                    let p = conn.prepare(s.text()).map_err(|e| prepare_error(&cfg, e))?;
                    stmts[s.index()] = Some(p);
                }
            }
        }
        let scale = u64::from(cfg.scale);
        Ok(PgbenchWorker {
            slots: cfg.scripts.iter().map(|(b, _)| b.index()).collect(),
            total_weight: cfg.total_weight(),
            accounts: scale * ACCOUNTS_PER_SCALE,
            tellers: scale * TELLERS_PER_SCALE,
            branches: scale,
            rng: Rng::new(seed),
            sql: String::with_capacity(256),
            db: DbCounters::default(),
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

    /// Closes the connection (politely unless the run was aborted).
    pub fn close(self) {
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

    /// One try of script `i`'s statements with `v`.
    fn attempt(&mut self, i: usize, v: &Vals) -> Result<(), SqlError> {
        let (b, _) = self.cfg.scripts[i];
        for &s in script(b) {
            self.run(s, v)?;
        }
        Ok(())
    }

    fn draw(&mut self) -> (usize, Vals) {
        let i = if self.slots.len() == 1 {
            0
        } else {
            self.cfg.pick(self.rng.uniform(0, self.total_weight - 1))
        };
        let v = Vals {
            aid: self.rng.uniform(1, self.accounts) as i64,
            bid: self.rng.uniform(1, self.branches) as i64,
            tid: self.rng.uniform(1, self.tellers) as i64,
            delta: self.rng.uniform(0, 10_000) as i64 - 5_000,
        };
        (i, v)
    }
}

fn prepare_error(cfg: &PgbenchConfig, e: SqlError) -> LeanOpenError {
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
            kind: self.slots[i],
            ..TxnEnd::default()
        };
        let mut tries = 1;
        loop {
            match self.attempt(i, &v) {
                Ok(()) => break,
                Err(e) => {
                    if stop.load(Ordering::Relaxed) {
                        return Step::Stopped;
                    }
                    match e.code() {
                        Some(code) if retriable(code) => {
                            // The client rolled the failed transaction back already.
                            if tries < self.cfg.max_tries {
                                tries += 1;
                                end.retried += 1;
                                continue;
                            }
                            self.db.count_ignored(code);
                            end.failed = true;
                            break;
                        }
                        _ => {
                            return Step::Fatal(format!(
                                "target {}: client aborted in a {} transaction: {e}",
                                self.cfg.target.name,
                                self.cfg.scripts[i].0.name()
                            ));
                        }
                    }
                }
            }
        }
        end.db = std::mem::take(&mut self.db);
        Step::Txn(end)
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
