//! prepare and cleanup of the sbtest tables: a dry-run check (connectivity, database, no
//! table already there), parallel creation and loading with multi-row inserts, and dropping
//! exactly the sbtestN tables of the run's options.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::rand::{Rng, fill_c, fill_pad};
use crate::sql::dialect::{Dialect, SbtestTable};
use crate::sql::open_error::OpenError;
use crate::sql::setup::SetupConn;
use crate::sql::{Sockets, SqlError};
use fleetbench_model::workloads::oltp::{OltpConfig, Script, create_index_sql};
use fleetbench_model::workloads::server::Target;

/// Largest INSERT statement built while loading (sysbench uses about 512 KiB too).
const MAX_INSERT_BYTES: usize = 512 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(
        "tables already exist on target {target}: {tables}; nothing was created or dropped (run cleanup first, or pick other --tables)"
    )]
    Exists { target: String, tables: String },
    #[error("{what} failed on target {target}: {message}{created}")]
    Failed {
        what: String,
        target: String,
        message: String,
        created: String,
    },
    #[error("stopped before it finished{created}")]
    Stopped { created: String },
}

/// Connects to every target this agent's tables live on and checks that none of the tables
/// exists yet (for prepare) — before anything is created anywhere.
pub async fn check(cfg: &OltpConfig, for_prepare: bool) -> Result<(), PrepareError> {
    let cfg = cfg.clone();
    blocking(move || check_tables(&cfg, for_prepare, &Arc::new(Sockets::default()))).await
}

fn check_tables(
    cfg: &OltpConfig,
    for_prepare: bool,
    sockets: &Arc<Sockets>,
) -> Result<(), PrepareError> {
    for (t, mine) in cfg.targets_in_use() {
        let target = &cfg.targets[t];
        let mut conn = SetupConn::open(target, sockets)?;
        if for_prepare {
            let names = conn
                .table_names()
                .map_err(|e| failed("listing the tables".into(), target, &e))?;
            let clash: Vec<String> = mine
                .iter()
                .map(|n| cfg.table(*n))
                .filter(|n| names.iter().any(|x| x.eq_ignore_ascii_case(n)))
                .collect();
            if !clash.is_empty() {
                conn.quit();
                return Err(PrepareError::Exists {
                    target: target.describe(),
                    tables: clash.join(", "),
                });
            }
        }
        conn.quit();
    }
    Ok(())
}

/// Runs set-up work that blocks on its connections off the async runtime; it starts at
/// once (several loaders run side by side), the returned future only waits for it.
fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, PrepareError> + Send + 'static,
) -> impl Future<Output = Result<T, PrepareError>> {
    let task = tokio::task::spawn_blocking(f);
    async move {
        task.await.unwrap_or_else(|e| {
            Err(PrepareError::Stopped {
                created: format!(" (a loader failed: {e})"),
            })
        })
    }
}

/// Shared state of one prepare or cleanup.
pub struct Job {
    cfg: Arc<OltpConfig>,
    /// Rows loaded (prepare) or tables dropped (cleanup) so far.
    pub done: AtomicU64,
    pub stop: AtomicBool,
    /// The job's connections: [`Job::halt`] shuts them, so a statement in flight ends.
    pub sockets: Arc<Sockets>,
    created: Mutex<Vec<String>>,
    /// The tables of `created` loaded in full (with their index), for [`Job::stopped_note`].
    loaded: Mutex<Vec<String>>,
    log: Mutex<Vec<String>>,
    /// How many of `log`'s lines were sent as notes.
    noted: std::sync::atomic::AtomicUsize,
}

impl Job {
    pub fn new(cfg: Arc<OltpConfig>) -> Arc<Job> {
        Arc::new(Job {
            cfg,
            done: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            sockets: Arc::new(Sockets::default()),
            created: Mutex::default(),
            loaded: Mutex::default(),
            log: Mutex::default(),
            noted: Default::default(),
        })
    }

    /// Stops the job: loaders stop between statements, and the statements in flight end
    /// at once with their connections.
    pub fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.sockets.cancel();
    }

    pub fn prepare_total(&self) -> u64 {
        if self.cfg.script == Script::BulkInsert {
            return 0;
        }
        self.cfg.tables.len() as u64 * self.cfg.options.table_size
    }

    pub fn cleanup_total(&self) -> u64 {
        self.cfg.tables.len() as u64
    }

    pub fn config(&self) -> &OltpConfig {
        &self.cfg
    }

    /// What was done, line by line, in sysbench's words.
    pub fn summary(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// The lines noted since the last call (streamed to the coordinator as they come; the
    /// summary still holds them all).
    pub fn take_notes(&self) -> Vec<String> {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let from = self
            .noted
            .swap(log.len(), std::sync::atomic::Ordering::Relaxed);
        log.get(from..).map(<[String]>::to_vec).unwrap_or_default()
    }

    fn note(&self, line: String) {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }

    fn created_note(&self) -> String {
        let c = self.created.lock().unwrap_or_else(|p| p.into_inner());
        if c.is_empty() {
            "; no table was created".into()
        } else {
            format!(
                "; created so far (run cleanup to drop them): {}",
                c.join(", ")
            )
        }
    }
}

impl Job {
    /// Where a stopped prepare leaves this agent's tables (an interrupted coordinator
    /// prints it): those loaded in full, those created and partly loaded, and those not
    /// begun, each as "sbtestN on TARGET".
    fn stopped_note(&self) -> String {
        let lock = |m: &Mutex<Vec<String>>| m.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (created, loaded) = (lock(&self.created), lock(&self.loaded));
        // In the order of the tables, whichever loader got to each first.
        let (mut complete, mut partial, mut not_started) = (Vec::new(), Vec::new(), Vec::new());
        for &(n, t) in &self.cfg.tables {
            let table = format!("{} on {}", self.cfg.table(n), self.cfg.targets[t].name);
            if loaded.contains(&table) {
                complete.push(table);
            } else if created.contains(&table) {
                partial.push(table);
            } else {
                not_started.push(table);
            }
        }
        let list = |v: &[String]| match v {
            [] => "none".to_string(),
            v => v.join(", "),
        };
        format!(
            "; complete: {}; partial: {}; not started: {}",
            list(&complete),
            list(&partial),
            list(&not_started)
        )
    }
}

/// Creates and loads this agent's tables with `threads` connections, one table at a time
/// per connection.
pub async fn prepare(job: Arc<Job>, threads: u32, seed: u64) -> Result<(), PrepareError> {
    check(&job.cfg, true).await?;
    let queue: Arc<Mutex<VecDeque<(u32, usize)>>> =
        Arc::new(Mutex::new(job.cfg.tables.iter().copied().collect()));
    let loaders = (threads.max(1) as usize).min(job.cfg.tables.len().max(1));
    let mut tasks = Vec::new();
    for i in 0..loaders {
        let (job, queue) = (job.clone(), queue.clone());
        tasks.push(blocking(move || {
            let mut rng = Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some((n, t)) = next else { return Ok(()) };
                if job.stop.load(Ordering::Relaxed) {
                    return Err(PrepareError::Stopped {
                        created: job.stopped_note(),
                    });
                }
                load_table(&job, n, t, &mut rng)?;
            }
        }));
    }
    let mut first_err = None;
    for t in tasks {
        if let Err(e) = t.await {
            job.stop.store(true, Ordering::Relaxed);
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

fn load_table(job: &Job, n: u32, t: usize, rng: &mut Rng) -> Result<(), PrepareError> {
    let cfg = &job.cfg;
    let target = &cfg.targets[t];
    let failed = |what: String, e: SqlError| {
        if job.stop.load(Ordering::Relaxed) {
            // Halted: the statement in flight ended with its connection.
            return PrepareError::Stopped {
                created: job.stopped_note(),
            };
        }
        PrepareError::Failed {
            what,
            target: target.describe(),
            message: e.to_string(),
            created: job.created_note(),
        }
    };
    let mut conn = SetupConn::open(target, &job.sockets)?;
    let name = cfg.table(n);
    job.note(format!("Creating table '{name}'..."));
    let bulk = cfg.script == Script::BulkInsert;
    let create = Dialect::of(target.driver).sbtest_table(
        &name,
        bulk,
        &SbtestTable {
            auto_inc: cfg.options.auto_inc,
            secondary: cfg.options.secondary,
            engine: &cfg.server.engine,
            options: &cfg.create_options,
        },
    );
    conn.query(&create)
        .map_err(|e| failed(format!("CREATE TABLE {name}"), e))?;
    job.created
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(format!("{name} on {}", target.name));
    if bulk {
        // bulk_insert's tables start empty.
        job.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("{name} on {}", target.name));
        conn.quit();
        return Ok(());
    }
    job.note(format!(
        "Inserting {} records into '{name}'",
        cfg.options.table_size
    ));
    let head = if cfg.options.auto_inc {
        format!("INSERT INTO {name}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO {name}(id, k, c, pad) VALUES")
    };
    let mut sql = String::with_capacity(MAX_INSERT_BYTES + 512);
    let (mut c, mut pad) = (String::with_capacity(128), String::with_capacity(64));
    let mut rows_in_stmt = 0u64;
    for id in 1..=cfg.options.table_size {
        if rows_in_stmt == 0 {
            sql.clear();
            sql.push_str(&head);
        } else {
            sql.push(',');
        }
        let k = rng.uniform(1, cfg.options.table_size);
        fill_c(rng, &mut c);
        fill_pad(rng, &mut pad);
        sql.push('(');
        if !cfg.options.auto_inc {
            fleetbench_model::workloads::oltp::push_num(&mut sql, id as i64);
            sql.push_str(", ");
        }
        fleetbench_model::workloads::oltp::push_num(&mut sql, k as i64);
        sql.push_str(", ");
        fleetbench_model::workloads::oltp::push_quoted(&mut sql, &c);
        sql.push_str(", ");
        fleetbench_model::workloads::oltp::push_quoted(&mut sql, &pad);
        sql.push(')');
        rows_in_stmt += 1;
        if sql.len() >= MAX_INSERT_BYTES || id == cfg.options.table_size {
            conn.query(&sql)
                .map_err(|e| failed(format!("loading {name}"), e))?;
            job.done.fetch_add(rows_in_stmt, Ordering::Relaxed);
            rows_in_stmt = 0;
            if job.stop.load(Ordering::Relaxed) {
                return Err(PrepareError::Stopped {
                    created: job.stopped_note(),
                });
            }
        }
    }
    if let Some(index) = Dialect::of(target.driver).sbtest_id_index(n, &name, cfg.options.secondary)
    {
        conn.query(&index)
            .map_err(|e| failed(format!("CREATE INDEX xid_{n}"), e))?;
    }
    if cfg.options.create_secondary {
        job.note(format!("Creating a secondary index on '{name}'..."));
        conn.query(&create_index_sql(n, &name))
            .map_err(|e| failed(format!("CREATE INDEX k_{n}"), e))?;
    }
    job.loaded
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(format!("{name} on {}", target.name));
    conn.quit();
    Ok(())
}

/// sysbench 1.0's prewarm: reads every one of this agent's tables, by its primary key and
/// by its secondary index, into the server's buffer pool, with up to `threads` connections.
pub async fn prewarm(job: Arc<Job>, threads: u32) -> Result<(), PrepareError> {
    check(&job.cfg, false).await?;
    let queue: Arc<Mutex<VecDeque<(u32, usize)>>> =
        Arc::new(Mutex::new(job.cfg.tables.iter().copied().collect()));
    let workers = (threads.max(1) as usize).min(job.cfg.tables.len().max(1));
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (job, queue) = (job.clone(), queue.clone());
            blocking(move || {
                loop {
                    if job.stop.load(Ordering::Relaxed) {
                        return Ok::<(), PrepareError>(());
                    }
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    let Some((n, t)) = next else {
                        return Ok(());
                    };
                    prewarm_table(&job, n, t)?;
                    job.done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await?;
    }
    Ok(())
}

fn prewarm_table(job: &Job, n: u32, t: usize) -> Result<(), PrepareError> {
    let target = &job.cfg.targets[t];
    let mut conn = SetupConn::open(target, &job.sockets)?;
    let name = job.cfg.table(n);
    job.note(format!("Prewarming table '{name}'..."));
    let limit = job.cfg.options.table_size;
    let reads = Dialect::of(target.driver).prewarm_reads(&name, limit);
    for sql in reads {
        conn.query(&sql)
            .map_err(|e| failed(format!("prewarm of {name}"), target, &e))?;
    }
    conn.quit();
    Ok(())
}

/// `what` failed on `target`, where nothing had been created.
fn failed(what: String, target: &Target, e: &SqlError) -> PrepareError {
    PrepareError::Failed {
        what,
        target: target.describe(),
        message: e.to_string(),
        created: String::new(),
    }
}

/// Drops this agent's sbtestN tables (DROP TABLE IF EXISTS: only the run's own names).
pub async fn cleanup(job: Arc<Job>) -> Result<(), PrepareError> {
    blocking(move || {
        let cfg = job.cfg.clone();
        for (t, mine) in cfg.targets_in_use() {
            let target = &cfg.targets[t];
            let mut conn = SetupConn::open(target, &job.sockets)?;
            for n in mine {
                let name = cfg.table(n);
                job.note(format!("Dropping table '{name}'..."));
                conn.query(&format!("DROP TABLE IF EXISTS {name}"))
                    .map_err(|e| failed(format!("DROP TABLE {name}"), target, &e))?;
                job.done.fetch_add(1, Ordering::Relaxed);
            }
            conn.quit();
        }
        Ok(())
    })
    .await
}
