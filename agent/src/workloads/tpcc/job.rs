//! The TPC-C table jobs an agent runs for prepare, check and cleanup: the dry-run check,
//! creating the tables, loading this agent's warehouses over several connections, the
//! indexes and foreign keys after the load, the consistency conditions, and dropping
//! exactly the nine tables. Blocking code over the lean client of the target's database
//! (MySQL's or PostgreSQL's, through the driver interface), run on its own threads; the
//! little SQL that differs between the two (the table list, the load's clock, session
//! settings, dropping) is chosen by the target's driver.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::check::{condition_sql, count_sql, violation};
use super::r#gen::NuRandC;
use super::load::{ITEMS, Part, part_batches, warehouse_parts};
use super::schema::{after_load_for, create_table_for};
use super::txn::retried;
use crate::sql::dialect::Dialect;
use crate::sql::{Client, ConnInfo, Sockets};
use fleetbench_model::workloads::server::Target;
use fleetbench_model::workloads::tpcc::TABLES;
use fleetbench_model::workloads::tpcc::{PrepareStep, TpccConfig};

/// Largest INSERT statement built while loading.
const MAX_INSERT_BYTES: usize = 512 * 1024;
/// Attempts of one load statement that deadlocks before the load fails.
const LOAD_ATTEMPTS: u32 = 5;

/// A deadlock or lock-wait timeout (PostgreSQL: also a serialization failure): the
/// statement may be sent again.
fn is_retried(e: &crate::sql::SqlError) -> bool {
    matches!(e.classify(retried), crate::sql::ErrorClass::Ignorable(_))
}

/// Calls `self.$method::<C>(args)` with the lean client of the target's database as `C`.
macro_rules! on_driver {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        $crate::with_lean_client!($self.target().driver, C => $self.$method::<C>($($arg),*))
    };
}

/// Violations named per condition (the count covers all of them).
const NAMED_VIOLATIONS: u32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum TpccError {
    #[error("cannot connect to target {target}: {message}")]
    Connect { target: String, message: String },
    #[error(
        "TPC-C tables already exist on target {target}: {tables}; nothing was created (run `fleetbench tpcc cleanup` first)"
    )]
    Exists { target: String, tables: String },
    #[error(
        "target {target} is not prepared for TPC-C: {what} (run `fleetbench tpcc --warehouses=N prepare` first)"
    )]
    NotPrepared { target: String, what: String },
    #[error("{what} failed on target {target}: {message}")]
    Failed {
        what: String,
        target: String,
        message: String,
    },
    #[error("stopped before it finished")]
    Stopped,
}

/// What a Prepare or Cleanup call does, and how far it has got.
pub struct TpccJob {
    pub cfg: Arc<TpccConfig>,
    pub stop: AtomicBool,
    pub done: AtomicU64,
    summary: Mutex<String>,
    /// Check: violations in all, and the first ones named.
    pub violations: Mutex<(u64, Vec<String>)>,
    /// The load's seed (the same on every agent, so the data follows from it alone).
    seed: u64,
}

impl TpccJob {
    pub fn new(cfg: Arc<TpccConfig>, seed: u64) -> Arc<TpccJob> {
        Arc::new(TpccJob {
            seed,
            cfg,
            stop: AtomicBool::new(false),
            done: AtomicU64::new(0),
            summary: Mutex::new(String::new()),
            violations: Mutex::new((0, Vec::new())),
        })
    }

    /// The steps (rows, for a load) the job will have done when it is over.
    pub fn total(&self, cleanup: bool) -> u64 {
        if cleanup {
            return TABLES.len() as u64;
        }
        match self.cfg.step {
            PrepareStep::Create => TABLES.len() as u64,
            PrepareStep::Load => share_rows(&self.cfg, self.seed),
            PrepareStep::Index => {
                after_load_for(self.target().driver, self.cfg.options.foreign_keys).len() as u64
            }
            PrepareStep::Check => 4,
        }
    }

    pub fn summary(&self) -> String {
        self.summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn say(&self, s: String) {
        *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    fn target(&self) -> &Target {
        &self.cfg.target
    }

    /// The SQL of the target's database.
    fn dialect(&self) -> Dialect {
        Dialect::of(self.target().driver)
    }

    /// A connection for prepare, check and cleanup: the lean client of the target's
    /// database (`C`, as [`on_driver`] picks it), used through the driver interface.
    fn connect<C: Client>(&self) -> Result<C, TpccError> {
        let sockets = Arc::new(Sockets::default());
        C::connect(self.target(), &sockets).map_err(|e| TpccError::Connect {
            target: self.target().describe(),
            message: e.to_string(),
        })
    }

    fn failed(&self, what: impl Into<String>, e: impl std::fmt::Display) -> TpccError {
        TpccError::Failed {
            what: what.into(),
            target: self.target().describe(),
            message: e.to_string(),
        }
    }

    /// The dry run: the target answers, and (create) none of the tables is there yet, or
    /// (everything else but cleanup) all of them are.
    pub fn check(&self, cleanup: bool) -> Result<(), TpccError> {
        on_driver!(self.check_on(cleanup))
    }

    fn check_on<C: Client>(&self, cleanup: bool) -> Result<(), TpccError> {
        let mut conn = self.connect::<C>()?;
        let r = if cleanup {
            Ok(())
        } else if self.cfg.step == PrepareStep::Create {
            let there = self.existing(&mut conn)?;
            if there.is_empty() {
                Ok(())
            } else {
                Err(TpccError::Exists {
                    target: self.target().describe(),
                    tables: there.join(", "),
                })
            }
        } else if self.cfg.step == PrepareStep::Load {
            // Created a moment ago by the create step: there, and empty.
            let there = self.existing(&mut conn)?;
            let missing: Vec<&str> = TABLES.into_iter().filter(|t| !there.contains(t)).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(TpccError::NotPrepared {
                    target: self.target().describe(),
                    what: format!("no table {}", missing.join(", ")),
                })
            }
        } else {
            self.check_prepared(&mut conn)
        };
        conn.quit();
        r
    }

    /// Before a run: the target answers and holds prepared tables for W warehouses. Says
    /// how the connection was made and which server with which settings it reached.
    pub fn check_run(&self) -> Result<ConnInfo, TpccError> {
        on_driver!(self.check_run_on())
    }

    fn check_run_on<C: Client>(&self) -> Result<ConnInfo, TpccError> {
        let mut conn = self.connect::<C>()?;
        self.check_prepared(&mut conn)?;
        let mut info = Client::info(&conn);
        let (version, vars) = conn
            .server_facts(&self.cfg.server.server_vars)
            .map_err(|e| self.failed("reading the server's variables", e))?;
        info.server_version = version;
        info.server_vars = vars;
        conn.quit();
        Ok(info)
    }

    /// The TPC-C tables that exist on the target (PostgreSQL: in the connection's current
    /// schema, where CREATE TABLE puts them).
    fn existing(&self, conn: &mut impl Client) -> Result<Vec<&'static str>, TpccError> {
        let names = conn
            .query_rows(self.dialect().list_tables())
            .map_err(|e| self.failed("listing the tables", e))?;
        Ok(TABLES
            .into_iter()
            .filter(|t| {
                names.iter().any(|r| {
                    r.first()
                        .cloned()
                        .flatten()
                        .is_some_and(|n| n.eq_ignore_ascii_case(t))
                })
            })
            .collect())
    }

    /// Every table is there and the warehouse table holds W warehouses.
    pub fn check_prepared(&self, conn: &mut impl Client) -> Result<(), TpccError> {
        let there = self.existing(conn)?;
        let missing: Vec<&str> = TABLES.into_iter().filter(|t| !there.contains(t)).collect();
        let not = |what: String| TpccError::NotPrepared {
            target: self.target().describe(),
            what,
        };
        if !missing.is_empty() {
            return Err(not(format!("no table {}", missing.join(", "))));
        }
        let rows = conn
            .query_rows("SELECT COUNT(*), COALESCE(MAX(w_id), 0) FROM warehouse")
            .map_err(|e| self.failed("counting warehouses", e))?;
        let n: u64 = rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if n < u64::from(self.cfg.options.warehouses) {
            return Err(not(format!(
                "it holds {n} warehouses, the run asks for {} (--warehouses)",
                self.cfg.options.warehouses
            )));
        }
        let items = conn
            .query_rows("SELECT COUNT(*) FROM item")
            .map_err(|e| self.failed("counting items", e))?;
        if items
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .as_deref()
            != Some("100000")
        {
            return Err(not("the item table does not hold 100,000 items".into()));
        }
        Ok(())
    }

    /// Runs the job; blocking.
    pub fn work(self: &Arc<Self>, cleanup: bool, threads: u32) -> Result<(), TpccError> {
        on_driver!(self.work_on(cleanup, threads))
    }

    fn work_on<C: Client + 'static>(
        self: &Arc<Self>,
        cleanup: bool,
        threads: u32,
    ) -> Result<(), TpccError> {
        if cleanup {
            return self.cleanup::<C>();
        }
        match self.cfg.step {
            PrepareStep::Create => self.create::<C>(),
            PrepareStep::Load => self.load::<C>(threads, self.seed),
            PrepareStep::Index => self.index::<C>(),
            PrepareStep::Check => self.consistency::<C>(),
        }
    }

    fn create<C: Client>(&self) -> Result<(), TpccError> {
        self.check(false)?;
        let mut conn = self.connect::<C>()?;
        let driver = self.target().driver;
        for (i, t) in TABLES.into_iter().enumerate() {
            if let Err(e) = conn.query(&create_table_for(driver, t, &self.cfg.server.engine)) {
                let made = TABLES[..i].join(", ");
                let note = if made.is_empty() {
                    String::new()
                } else {
                    format!(" (created before it: {made}; `fleetbench tpcc cleanup` drops them)")
                };
                return Err(self.failed(format!("CREATE TABLE {t}"), format!("{e}{note}")));
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        conn.quit();
        self.say(format!(
            "created the {} TPC-C tables on target {}",
            TABLES.len(),
            self.target().name
        ));
        Ok(())
    }

    fn load<C: Client + 'static>(
        self: &Arc<Self>,
        threads: u32,
        seed: u64,
    ) -> Result<(), TpccError> {
        let mut probe = self.connect::<C>()?;
        // The server's clock, as a datetime literal for c_since, h_date and the dates of
        // the delivered orders.
        let now = probe
            .query_rows(self.dialect().now_text())
            .ok()
            .and_then(|r| r.first().and_then(|r| r.first().cloned().flatten()))
            .unwrap_or_else(|| "2000-01-01 00:00:00".into());
        probe.quit();
        let c = NuRandC {
            c_last: u64::from(self.cfg.c_last_load),
            ..NuRandC::load(&mut crate::rand::Rng::new(seed))
        };
        // Small parts (a district's customers, a quarter of the stock), so that even one
        // warehouse keeps every loading connection busy.
        let parts: VecDeque<(u32, Part)> = load_parts(&self.cfg).into();
        let work = Arc::new(Mutex::new(parts));
        let (c, now) = (Arc::new(c), Arc::new(now));
        let loaders = threads.max(1);
        let handles: Vec<_> = (0..loaders)
            .map(|_| {
                let (job, work, c, now) = (self.clone(), work.clone(), c.clone(), now.clone());
                std::thread::spawn(move || job.loader::<C>(&work, seed, &c, &now))
            })
            .collect();
        let mut first = None;
        for h in handles {
            let r = h.join().unwrap_or(Err(TpccError::Stopped));
            if let Err(e) = r {
                self.stop.store(true, Ordering::Relaxed);
                first.get_or_insert(e);
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
        let share = &self.cfg;
        self.say(format!(
            "loaded {} rows: warehouses {}..{}{} on target {}",
            self.done.load(Ordering::Relaxed),
            share.first_warehouse,
            share.last_warehouse,
            if share.load_items {
                " and the items"
            } else {
                ""
            },
            self.target().name
        ));
        Ok(())
    }

    /// One loading connection: takes the next part until none is left.
    fn loader<C: Client>(
        &self,
        work: &Mutex<VecDeque<(u32, Part)>>,
        seed: u64,
        c: &NuRandC,
        now: &str,
    ) -> Result<(), TpccError> {
        let mut conn = self.connect::<C>()?;
        // The data is consistent by construction: the server need not check it row by row,
        // nor wait for each commit's log flush (a load cut short is redone from cleanup).
        let _ = conn.query(self.dialect().bulk_load_session());
        loop {
            let next = work.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
            let Some((w, part)) = next else { break };
            for b in part_batches(&[part], w, seed, c, now, MAX_INSERT_BYTES) {
                let mut attempt = 1;
                loop {
                    if self.stop.load(Ordering::Relaxed) {
                        return Err(TpccError::Stopped);
                    }
                    match conn.query(&b.sql) {
                        Ok(_) => break,
                        // Parallel inserts into one table can deadlock on InnoDB's gap
                        // locks; the statement rolled back whole, so it is sent again.
                        Err(e) if is_retried(&e) && attempt < LOAD_ATTEMPTS => attempt += 1,
                        Err(e) => return Err(self.failed(format!("loading {}", b.table), e)),
                    }
                }
                self.done.fetch_add(b.rows, Ordering::Relaxed);
            }
        }
        conn.quit();
        Ok(())
    }

    fn index<C: Client>(&self) -> Result<(), TpccError> {
        let mut conn = self.connect::<C>()?;
        let driver = self.target().driver;
        // As tpcc-mysql's add_fkey_idx.sql: the data is consistent by construction (`check`
        // verifies it), so the keys go in without the server's checks where it has them.
        if let Some(set) = self.dialect().before_keys() {
            conn.query(set).map_err(|e| self.failed(set, e))?;
        }
        for sql in after_load_for(driver, self.cfg.options.foreign_keys) {
            if self.stop.load(Ordering::Relaxed) {
                return Err(TpccError::Stopped);
            }
            conn.query(&sql).map_err(|e| self.failed(sql.clone(), e))?;
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        conn.quit();
        self.say(format!(
            "secondary indexes{} created on target {}{}",
            if self.cfg.options.foreign_keys {
                " and foreign keys"
            } else {
                ""
            },
            self.target().name,
            self.dialect().after_load_said()
        ));
        Ok(())
    }

    fn consistency<C: Client>(&self) -> Result<(), TpccError> {
        let mut conn = self.connect::<C>()?;
        self.check_prepared(&mut conn)?;
        let (first, last) = (self.cfg.first_warehouse, self.cfg.last_warehouse);
        let driver = self.target().driver;
        let mut total = 0u64;
        let mut named = Vec::new();
        for cond in 1..=4u8 {
            let count = conn
                .query_rows(&count_sql(driver, cond, first, last))
                .map_err(|e| self.failed(format!("consistency condition {cond}"), e))?;
            let n: u64 = count
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if n > 0 {
                total += n;
                let rows = conn
                    .query_rows(&condition_sql(driver, cond, first, last, NAMED_VIOLATIONS))
                    .map_err(|e| self.failed(format!("consistency condition {cond}"), e))?;
                for r in rows {
                    match violation(cond, &r) {
                        Ok(v) => named.push(v.to_string()),
                        Err(e) => named.push(format!("condition {cond}: {e}")),
                    }
                }
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        conn.quit();
        self.say(format!(
            "consistency conditions 1-4 over warehouses {first}..{last}: {}",
            if total == 0 {
                "all hold".to_string()
            } else {
                format!("{total} violations")
            }
        ));
        *self.violations.lock().unwrap_or_else(|p| p.into_inner()) = (total, named);
        Ok(())
    }

    fn cleanup<C: Client>(&self) -> Result<(), TpccError> {
        let mut conn = self.connect::<C>()?;
        let there = self.existing(&mut conn)?;
        // The keys between the nine tables dictate no order, and nothing else is touched.
        for (sql, tables) in self.dialect().drop_tables(&TABLES) {
            conn.query(&sql).map_err(|e| self.failed(sql.clone(), e))?;
            self.done.fetch_add(tables, Ordering::Relaxed);
        }
        conn.quit();
        self.say(format!(
            "dropped {} TPC-C tables on target {}",
            there.len(),
            self.target().name
        ));
        Ok(())
    }
}

/// What this agent loads, in parts: the items (when it loads them) and each warehouse of
/// its share.
fn load_parts(cfg: &TpccConfig) -> Vec<(u32, Part)> {
    const SLICES: u32 = 4;
    let slice = |first: u32, last: u32, make: fn(u32, u32) -> Part| {
        let n = (last - first + 1).div_ceil(SLICES);
        (0..SLICES)
            .map(move |i| (first + i * n, (first + (i + 1) * n - 1).min(last)))
            .filter(|(a, b)| a <= b)
            .map(move |(a, b)| make(a, b))
    };
    let mut parts = Vec::new();
    if cfg.load_items {
        for p in slice(1, ITEMS, |first, last| Part::Items { first, last }) {
            parts.push((0, p));
        }
    }
    for w in cfg.share() {
        for p in warehouse_parts() {
            match p {
                Part::Stock { first, last } => {
                    for s in slice(first, last, |first, last| Part::Stock { first, last }) {
                        parts.push((w, s));
                    }
                }
                p => parts.push((w, p)),
            }
        }
    }
    parts
}

/// Rows this agent's load inserts, exactly (the order lines counted from the seed's order
/// sizes).
pub fn share_rows(cfg: &TpccConfig, seed: u64) -> u64 {
    load_parts(cfg).iter().map(|(w, p)| p.rows(*w, seed)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_cover_the_items_and_each_warehouse_once() {
        let cfg = TpccConfig::with_share(3, 2, 3);
        let parts = load_parts(&cfg);
        let rows = |table: &str, w: u32| -> u64 {
            parts
                .iter()
                .filter(|(pw, p)| *pw == w && p.table() == table)
                .map(|(pw, p)| p.rows(*pw, 9))
                .sum()
        };
        assert_eq!(rows("item", 0), 100_000);
        for w in [2, 3] {
            assert_eq!(rows("stock", w), 100_000);
            assert_eq!(rows("customer", w), 30_000);
            assert_eq!(rows("new_orders", w), 9_000);
            assert_eq!(
                rows("order_line", w),
                crate::workloads::tpcc::load::order_line_rows(w, 9)
            );
        }
        assert_eq!(rows("stock", 1), 0);
        let no_items = TpccConfig {
            load_items: false,
            ..cfg
        };
        assert_eq!(
            share_rows(&no_items, 9) + 100_000,
            share_rows(
                &TpccConfig {
                    load_items: true,
                    ..no_items.clone()
                },
                9
            )
        );
    }
}
