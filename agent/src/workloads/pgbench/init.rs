//! pgbench's initialisation on an agent, one step per Prepare call: drop, create, load
//! this agent's share of the accounts (COPY from the client, or generate_series on the
//! server), vacuum, keys; and what a run needs first (the tables' scale, the vacuum).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use fleetbench_model::workloads::pgbench::{PgbenchConfig, Step, TELLERS_PER_SCALE};

use super::sql;
use crate::sql::Sockets;
use crate::sql::pgsql::PgConn;
use crate::sql::{Client, Reply, SqlError};

/// Rows a COPY chunk carries before it is sent (and progress counted).
const CHUNK_ROWS: u64 = 10_000;

/// Why a step failed, as the coordinator prints it.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("target {target}: {source}")]
    Sql {
        target: String,
        #[source]
        source: SqlError,
    },
    #[error(
        "target {0}: the pgbench tables are not there (run `fleetbench pgbench -i` first): {1}"
    )]
    NotInitialised(String, SqlError),
    #[error("stopped")]
    Stopped,
}

/// One Prepare call's step and its progress.
pub struct PgbenchJob {
    pub cfg: Arc<PgbenchConfig>,
    pub stop: AtomicBool,
    /// Rows loaded (g, G) or statements run (other steps).
    pub done: AtomicU64,
    sockets: Arc<Sockets>,
    summary: Mutex<String>,
}

impl PgbenchJob {
    pub fn new(cfg: Arc<PgbenchConfig>) -> Arc<PgbenchJob> {
        Arc::new(PgbenchJob {
            cfg,
            stop: AtomicBool::new(false),
            done: AtomicU64::new(0),
            sockets: Arc::new(Sockets::default()),
            summary: Mutex::new(String::new()),
        })
    }

    /// Stops the step: the statement in flight ends with its connection.
    pub fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.sockets.cancel();
    }

    /// What the step's progress counts up to.
    pub fn total(&self) -> u64 {
        let c = &self.cfg;
        match c.step {
            Step::Generate | Step::ServerGenerate => self.share_rows(),
            Step::Drop | Step::Truncate | Step::Check => 1,
            Step::Create => sql::create_tables(c).len() as u64,
            Step::Vacuum => sql::VACUUM.len() as u64,
            Step::RunVacuum => sql::RUN_VACUUM.len() as u64,
            Step::PrimaryKeys => sql::PRIMARY_KEYS.len() as u64,
            Step::ForeignKeys => sql::FOREIGN_KEYS.len() as u64,
        }
    }

    /// Rows this agent loads: its accounts, and the small tables when it loads them.
    fn share_rows(&self) -> u64 {
        let c = &self.cfg;
        let accounts = if c.first_aid == 0 {
            0
        } else {
            c.last_aid - c.first_aid + 1
        };
        let small = if c.load_small {
            u64::from(c.scale) * (1 + TELLERS_PER_SCALE)
        } else {
            0
        };
        accounts + small
    }

    /// What the step found, for the coordinator (the check: `scale=N`); never empty,
    /// as it marks the job's last message.
    pub fn summary(&self) -> String {
        let s = self
            .summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if s.is_empty() {
            format!("step {} done", self.cfg.step.name())
        } else {
            s
        }
    }

    fn connect(&self) -> Result<PgConn, InitError> {
        PgConn::connect(&self.cfg.target, Some(self.sockets.clone())).map_err(|e| self.sql(e))
    }

    fn sql(&self, source: SqlError) -> InitError {
        if self.stop.load(Ordering::Relaxed) {
            return InitError::Stopped;
        }
        InitError::Sql {
            target: self.cfg.target.describe(),
            source,
        }
    }

    /// The dry run: the server is there and lets us in.
    pub fn check(&self) -> Result<(), InitError> {
        let mut conn = self.connect()?;
        conn.query("SELECT 1").map_err(|e| self.sql(e))?;
        conn.quit();
        Ok(())
    }

    /// Runs the step, with `threads` connections for a load.
    pub fn work(&self, threads: u32) -> Result<(), InitError> {
        let c = self.cfg.clone();
        match c.step {
            Step::Drop => self.run_all(&[sql::drop_tables()]),
            Step::Create => self.run_all(&sql::create_tables(&c)),
            Step::Truncate => self.run_all(&[format!("TRUNCATE {}", sql::TABLES.join(", "))]),
            Step::ServerGenerate => self.run_all(&sql::server_generate(&c)),
            Step::Generate => self.copy(threads),
            Step::Vacuum => self.run_all(&sql::VACUUM),
            Step::RunVacuum => self.run_all(&sql::RUN_VACUUM),
            Step::PrimaryKeys => self.run_all(&sql::PRIMARY_KEYS),
            Step::ForeignKeys => self.run_all(&sql::FOREIGN_KEYS),
            Step::Check => self.read_scale(),
        }
    }

    /// Runs `stmts` in order on one connection, counting each; a G load counts rows.
    fn run_all<S: AsRef<str>>(&self, stmts: &[S]) -> Result<(), InitError> {
        let mut conn = self.connect()?;
        for s in stmts {
            if self.stop.load(Ordering::Relaxed) {
                return Err(InitError::Stopped);
            }
            let r = conn.query(s.as_ref()).map_err(|e| self.sql(e))?;
            let n = match (self.cfg.step, r) {
                (Step::ServerGenerate, Reply::Ok { affected_rows }) => affected_rows,
                _ => 1,
            };
            self.done.fetch_add(n, Ordering::Relaxed);
        }
        conn.quit();
        Ok(())
    }

    /// The scale of the tables there: pgbench_branches' rows.
    fn read_scale(&self) -> Result<(), InitError> {
        let mut conn = self.connect()?;
        let rows = conn
            .query_rows("SELECT count(*) FROM pgbench_branches")
            .map_err(|e| match e {
                SqlError::Server { .. } => InitError::NotInitialised(self.cfg.target.describe(), e),
                e => self.sql(e),
            })?;
        let scale = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_default();
        *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = format!("scale={scale}");
        self.done.store(1, Ordering::Relaxed);
        conn.quit();
        Ok(())
    }

    /// Step g: the small tables (when this agent loads them), then this agent's accounts
    /// over `threads` connections, each a contiguous part of the share, by COPY.
    fn copy(&self, threads: u32) -> Result<(), InitError> {
        let c = &self.cfg;
        if c.load_small
            && c.first_aid == 1
            && c.last_aid == c.accounts()
            && threads <= 1
            && c.partitions == 0
        {
            return self.copy_frozen();
        }
        if c.load_small {
            let mut conn = self.connect()?;
            let scale = u64::from(c.scale);
            self.copy_rows(
                &mut conn,
                "pgbench_branches (bid, bbalance)",
                1,
                scale,
                |b, out| {
                    push_row(out, &[b, 0]);
                },
            )?;
            let tellers = scale * TELLERS_PER_SCALE;
            self.copy_rows(
                &mut conn,
                "pgbench_tellers (tid, bid, tbalance)",
                1,
                tellers,
                |t, out| push_row(out, &[t, (t - 1) / TELLERS_PER_SCALE + 1, 0]),
            )?;
            conn.quit();
        }
        if c.first_aid == 0 {
            return Ok(());
        }
        let rows = c.last_aid - c.first_aid + 1;
        let parts = u64::from(threads.max(1))
            .min(rows.div_ceil(CHUNK_ROWS))
            .max(1);
        let each = rows.div_ceil(parts);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..parts)
                .map(|i| {
                    let first = c.first_aid + i * each;
                    let last = (first + each - 1).min(c.last_aid);
                    s.spawn(move || -> Result<(), InitError> {
                        if first > last {
                            return Ok(());
                        }
                        let mut conn = self.connect()?;
                        self.copy_rows(
                            &mut conn,
                            "pgbench_accounts (aid, bid, abalance, filler)",
                            first,
                            last,
                            account_row,
                        )?;
                        conn.quit();
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(InitError::Stopped)))
                .collect::<Result<Vec<()>, InitError>>()
        })?;
        Ok(())
    }

    /// Step g when this agent loads every table over one connection, as pgbench does: the
    /// tables emptied and loaded in one transaction, so that COPY can write the rows
    /// frozen (`FREEZE`) and the vacuum after it has little to do. (A load spread over
    /// several connections cannot: each COPY would need the table emptied in its own
    /// transaction.)
    fn copy_frozen(&self) -> Result<(), InitError> {
        let c = &self.cfg;
        let scale = u64::from(c.scale);
        let mut conn = self.connect()?;
        let sql = |conn: &mut PgConn, q: &str| conn.query(q).map(|_| ()).map_err(|e| self.sql(e));
        sql(&mut conn, "BEGIN")?;
        sql(&mut conn, &format!("TRUNCATE {}", sql::TABLES.join(", ")))?;
        self.copy_rows_with(
            &mut conn,
            "pgbench_branches (bid, bbalance)",
            " WITH (FREEZE ON)",
            1,
            scale,
            |b, out| push_row(out, &[b, 0]),
        )?;
        self.copy_rows_with(
            &mut conn,
            "pgbench_tellers (tid, bid, tbalance)",
            " WITH (FREEZE ON)",
            1,
            scale * TELLERS_PER_SCALE,
            |t, out| push_row(out, &[t, (t - 1) / TELLERS_PER_SCALE + 1, 0]),
        )?;
        self.copy_rows_with(
            &mut conn,
            "pgbench_accounts (aid, bid, abalance, filler)",
            " WITH (FREEZE ON)",
            1,
            c.last_aid,
            account_row,
        )?;
        sql(&mut conn, "COMMIT")?;
        conn.quit();
        Ok(())
    }

    /// COPYs rows `first..=last` of `table (columns)`, `row` writing each line.
    fn copy_rows(
        &self,
        conn: &mut PgConn,
        table: &str,
        first: u64,
        last: u64,
        row: impl Fn(u64, &mut Vec<u8>),
    ) -> Result<(), InitError> {
        self.copy_rows_with(conn, table, "", first, last, row)
    }

    /// [`Self::copy_rows`] with COPY's `options` (" WITH (...)" or nothing).
    fn copy_rows_with(
        &self,
        conn: &mut PgConn,
        table: &str,
        options: &str,
        first: u64,
        last: u64,
        row: impl Fn(u64, &mut Vec<u8>),
    ) -> Result<(), InitError> {
        let mut next = first;
        let stop = &self.stop;
        let done = &self.done;
        conn.copy_in(&format!("COPY {table} FROM STDIN{options}"), |out| {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            let end = (next + CHUNK_ROWS - 1).min(last);
            for i in next..=end {
                row(i, out);
            }
            done.fetch_add(end - next + 1, Ordering::Relaxed);
            next = end + 1;
            next <= last
        })
        .map_err(|e| self.sql(e))?;
        if self.stop.load(Ordering::Relaxed) {
            return Err(InitError::Stopped);
        }
        Ok(())
    }
}

/// The COPY line of account `a`: its branch, a zero balance and an empty filler, as
/// pgbench's.
fn account_row(a: u64, out: &mut Vec<u8>) {
    push_row(out, &[a, sql::branch_of_account(a), 0]);
    out.pop();
    out.extend_from_slice(b"\t\n");
}

/// One line of COPY's text format: the values tab-separated, then a newline.
fn push_row(out: &mut Vec<u8>, values: &[u64]) {
    use std::io::Write;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        let _ = write!(out, "{v}");
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_lines_are_tab_separated() {
        let mut out = Vec::new();
        push_row(&mut out, &[7, 1, 0]);
        assert_eq!(out, b"7\t1\t0\n");
    }

    #[test]
    fn a_load_counts_its_share_and_the_small_tables() {
        let cfg = PgbenchConfig {
            scale: 2,
            step: Step::Generate,
            first_aid: 1,
            last_aid: 100_000,
            load_small: true,
            ..PgbenchConfig::default()
        };
        let job = PgbenchJob::new(Arc::new(cfg));
        assert_eq!(job.total(), 100_000 + 2 + 20);
    }
}
