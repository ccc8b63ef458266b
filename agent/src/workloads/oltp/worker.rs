//! One OLTP worker: a connection per target it uses, statements prepared once per
//! connection and table, and one sysbench event (transaction) per call. Queries are counted
//! as sysbench counts them; listed errors are counted and the event retried; lost connections
//! are re-opened (statements prepared again) and counted as reconnects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Statement, Value};

use super::rand::{Picker, Rng, fill_c, fill_pad};
use super::{Kind, OltpConfig, Target};
use crate::stats::{DbCounters, Sample};

/// Client error codes and server codes that mean the connection is gone.
const LOST_CODES: [u16; 7] = [2013, 2006, 2011, 2055, 1927, 1053, 1152];

/// Why a worker could not open its connections or statements.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("access denied on target {target}: {message}")]
    Access { target: String, message: String },
    #[error(
        "database '{database}' does not exist on target {target}: create it first (CREATE DATABASE {database})"
    )]
    NoDatabase { target: String, database: String },
    #[error("table sbtest{table} does not exist on target {target}: run prepare first")]
    NoTable { target: String, table: u32 },
    #[error("cannot connect to target {target}: {message}")]
    Connect { target: String, message: String },
    #[error("cannot prepare a statement on target {target}: {message}")]
    Prepare { target: String, message: String },
}

/// What one event attempt ran into.
enum Failure {
    /// An error listed in --mysql-ignore-errors: count it, roll back, retry the event.
    Ignored(u16),
    /// The connection to target `usize` is gone: reconnect, retry the event.
    Lost(usize),
    /// Anything else ends the run.
    Fatal(String),
}

/// How an event ended.
pub enum Outcome {
    Done,
    /// The run was stopped while this event waited (e.g. for a reconnect).
    Stopped,
    Fatal(String),
}

/// Per-target figures a worker keeps over the whole run.
#[derive(Debug, Default, Clone)]
pub struct TargetTally {
    pub db: DbCounters,
    pub statements: Sample,
}

/// What a worker hands back when it ends: per-kind and per-target figures.
#[derive(Debug, Default)]
pub struct WorkerTail {
    pub kinds: Vec<Sample>,
    pub targets: Vec<TargetTally>,
}

/// An open connection with its statements, indexed by table slot and kind.
struct DbConn {
    conn: Conn,
    /// `None` where the server cannot prepare (proxy without prepared statements) or
    /// prepared statements are off: the text of `templates` is sent instead.
    stmts: Vec<Option<Statement>>,
    /// BEGIN and COMMIT, prepared like the rest (sysbench executes them as prepared
    /// statements too, which shows in the server's Com_stmt_execute).
    begin: Option<Statement>,
    commit: Option<Statement>,
    in_trx: bool,
}

pub struct OltpWorker {
    cfg: Arc<OltpConfig>,
    /// Index of this thread in the whole run (unique across agents).
    thread: u64,
    total_threads: u64,
    rng: Rng,
    ids: Picker,
    conns: Vec<Option<DbConn>>,
    /// Statement texts per table slot and kind (`slot * Kind::COUNT + kind`).
    templates: Vec<String>,
    c: String,
    pad: String,
    sql: String,
    /// Queries of the event in progress, moved to the recorder when it ends.
    pub tally: DbCounters,
    tail: WorkerTail,
    events: u64,
    unique: u64,
    /// bulk_insert: the pending multi-row INSERT and the number of rows in it.
    bulk: String,
    bulk_rows: u64,
    /// The statement groups of one event, worked out once.
    groups: Arc<[(Kind, u32)]>,
}

fn kind_index(k: Kind) -> usize {
    Kind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

fn code_of(e: &mysql_async::Error) -> Option<u16> {
    match e {
        mysql_async::Error::Server(s) => Some(s.code),
        _ => None,
    }
}

fn is_lost(e: &mysql_async::Error) -> bool {
    match e {
        mysql_async::Error::Io(_) => true,
        mysql_async::Error::Driver(_) => true,
        mysql_async::Error::Server(s) => LOST_CODES.contains(&s.code),
        _ => false,
    }
}

impl OltpWorker {
    /// Opens this worker's connections and prepares its statements.
    pub async fn open(
        cfg: Arc<OltpConfig>,
        thread: u64,
        total_threads: u64,
        seed: u64,
    ) -> Result<Self, OpenError> {
        let ids = Picker::new(&cfg.distribution, 1, cfg.table_size.max(1));
        let mut templates = Vec::with_capacity(cfg.tables.len() * Kind::COUNT);
        for &(n, _) in &cfg.tables {
            for k in Kind::ALL {
                templates.push(k.sql(n, cfg.random_points, cfg.number_of_ranges));
            }
        }
        let mut w = OltpWorker {
            thread,
            total_threads: total_threads.max(1),
            rng: Rng::new(seed ^ thread.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ids,
            conns: (0..cfg.targets.len()).map(|_| None).collect(),
            templates,
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
            sql: String::with_capacity(256),
            tally: DbCounters::default(),
            tail: WorkerTail {
                kinds: (0..Kind::COUNT).map(|_| Sample::default()).collect(),
                targets: (0..cfg.targets.len())
                    .map(|_| TargetTally::default())
                    .collect(),
            },
            events: 0,
            unique: 0,
            bulk: String::new(),
            bulk_rows: 0,
            groups: cfg.groups().into(),
            cfg,
        };
        for (t, _) in w.cfg.targets_in_use() {
            w.conns[t] = Some(w.connect(t).await?);
        }
        Ok(w)
    }

    async fn connect(&self, t: usize) -> Result<DbConn, OpenError> {
        let target: &Target = &self.cfg.targets[t];
        let mut conn = open(target).await?;
        let mut stmts = vec![None; self.templates.len()];
        let kinds = self.cfg.kinds();
        for (slot, &(n, tt)) in self.cfg.tables.iter().enumerate() {
            if tt != t {
                continue;
            }
            if !self.cfg.prepared {
                // Text protocol: check the table exists without touching Com_select.
                let found: Option<String> = conn
                    .query_first(format!("SHOW TABLES LIKE 'sbtest{n}'"))
                    .await
                    .map_err(|e| open_error(target, &e))?;
                if found.is_none() {
                    return Err(OpenError::NoTable {
                        target: target.describe(),
                        table: n,
                    });
                }
                continue;
            }
            for &k in &kinds {
                let i = slot * Kind::COUNT + kind_index(k);
                match conn.prep(self.templates[i].as_str()).await {
                    Ok(s) => stmts[i] = Some(s),
                    // 1295: this server (or proxy) cannot prepare it; sysbench's auto mode
                    // falls back to the text protocol.
                    Err(e) if code_of(&e) == Some(1295) => {}
                    Err(e) if code_of(&e) == Some(1146) => {
                        return Err(OpenError::NoTable {
                            target: target.describe(),
                            table: n,
                        });
                    }
                    Err(e) => {
                        return Err(OpenError::Prepare {
                            target: target.describe(),
                            message: error_text(&e),
                        });
                    }
                }
            }
        }
        let (mut begin, mut commit) = (None, None);
        if self.cfg.prepared && self.cfg.transactional() {
            // A server or proxy that cannot prepare them gets the text form (1295).
            begin = conn.prep("BEGIN").await.ok();
            commit = conn.prep("COMMIT").await.ok();
        }
        Ok(DbConn {
            conn,
            stmts,
            begin,
            commit,
            in_trx: false,
        })
    }

    /// Runs one event, retrying it after ignored errors and reconnects.
    pub async fn event(&mut self, stop: &std::sync::atomic::AtomicBool) -> Outcome {
        use std::sync::atomic::Ordering::Relaxed;
        if self.cfg.reconnect > 0
            && self.events > 0
            && self.events.is_multiple_of(self.cfg.reconnect)
        {
            for t in 0..self.conns.len() {
                if self.conns[t].is_some() {
                    if let Some(old) = self.conns[t].take() {
                        let _ = old.conn.disconnect().await;
                    }
                    match self.reopen(t, stop).await {
                        Some(o) => return o,
                        None => self.tally.reconnects += 1,
                    }
                }
            }
        }
        if self.cfg.script == super::Script::BulkInsert {
            return self.bulk_row(stop).await;
        }
        loop {
            match self.attempt().await {
                Ok(()) => {
                    self.events += 1;
                    return Outcome::Done;
                }
                Err(Failure::Ignored(code)) => {
                    self.tally.count_ignored(code);
                    self.rollback_all().await;
                }
                Err(Failure::Lost(t)) => {
                    self.conns[t] = None;
                    self.rollback_all().await;
                    if let Some(o) = self.reopen(t, stop).await {
                        return o;
                    }
                    self.tally.reconnects += 1;
                    self.tail.targets[t].db.reconnects += 1;
                }
                Err(Failure::Fatal(msg)) => return Outcome::Fatal(msg),
            }
            if stop.load(Relaxed) {
                return Outcome::Stopped;
            }
        }
    }

    /// bulk_insert: appends one row to this thread's pending INSERT and sends it once it
    /// reaches the size sysbench's bulk inserts use.
    async fn bulk_row(&mut self, stop: &std::sync::atomic::AtomicBool) -> Outcome {
        const FLUSH_BYTES: usize = 512 * 1024;
        let Some(slot) = self
            .cfg
            .tables
            .iter()
            .position(|&(n, _)| u64::from(n) == self.thread + 1)
        else {
            return Outcome::Fatal(format!(
                "bulk_insert: no table sbtest{} for thread {}",
                self.thread + 1,
                self.thread
            ));
        };
        let (n, _) = self.cfg.tables[slot];
        if self.bulk_rows == 0 {
            self.bulk.clear();
            self.bulk.push_str(&format!("INSERT INTO sbtest{n} VALUES"));
        } else {
            self.bulk.push(',');
        }
        self.events += 1;
        let k = self.ids.pick(&mut self.rng);
        self.bulk.push('(');
        super::push_num(&mut self.bulk, self.events as i64);
        self.bulk.push(',');
        super::push_num(&mut self.bulk, k as i64);
        self.bulk.push(')');
        self.bulk_rows += 1;
        if self.bulk.len() >= FLUSH_BYTES {
            return self.flush_bulk(slot, stop).await;
        }
        Outcome::Done
    }

    /// Sends the pending bulk INSERT, reconnecting if the connection was lost.
    async fn flush_bulk(&mut self, slot: usize, stop: &std::sync::atomic::AtomicBool) -> Outcome {
        if self.bulk_rows == 0 {
            return Outcome::Done;
        }
        let t = self.cfg.tables[slot].1;
        loop {
            let t0 = Instant::now();
            let Some(c) = self.conns[t].as_mut() else {
                return Outcome::Stopped;
            };
            let r = c.conn.query_drop(self.bulk.as_str()).await.map(|_| true);
            match self.finish(t, Kind::Insert, t0, r) {
                Ok(()) => {
                    self.bulk_rows = 0;
                    return Outcome::Done;
                }
                Err(Failure::Lost(t)) => {
                    self.conns[t] = None;
                    if let Some(o) = self.reopen(t, stop).await {
                        return o;
                    }
                    self.tally.reconnects += 1;
                    self.tail.targets[t].db.reconnects += 1;
                }
                Err(Failure::Ignored(code)) => {
                    self.tally.count_ignored(code);
                }
                Err(Failure::Fatal(m)) => return Outcome::Fatal(m),
            }
        }
    }

    /// Re-opens target `t`, retrying until it answers or the run stops. None on success.
    async fn reopen(&mut self, t: usize, stop: &std::sync::atomic::AtomicBool) -> Option<Outcome> {
        let mut wait = Duration::from_millis(20);
        loop {
            match self.connect(t).await {
                Ok(c) => {
                    self.conns[t] = Some(c);
                    return None;
                }
                Err(
                    e @ (OpenError::NoTable { .. }
                    | OpenError::Access { .. }
                    | OpenError::NoDatabase { .. }),
                ) => {
                    return Some(Outcome::Fatal(e.to_string()));
                }
                Err(_) => {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return Some(Outcome::Stopped);
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(500));
                }
            }
        }
    }

    async fn rollback_all(&mut self) {
        for t in 0..self.conns.len() {
            let in_trx = self.conns[t].as_ref().is_some_and(|c| c.in_trx);
            if in_trx {
                let c = self.conns[t].as_mut().expect("checked");
                c.in_trx = false;
                if c.conn.query_drop("ROLLBACK").await.is_ok() {
                    self.tally.others += 1;
                    self.tail.targets[t].db.others += 1;
                }
            }
        }
    }

    /// One try at the event's statements.
    async fn attempt(&mut self) -> Result<(), Failure> {
        let cfg = self.cfg.clone();
        let size = cfg.table_size.max(1);
        let groups = self.groups.clone();
        for &(kind, count) in groups.iter() {
            // Each group picks one table, as sysbench does.
            let slot = self.rng.uniform(0, cfg.tables.len() as u64 - 1) as usize;
            for _ in 0..count {
                match kind {
                    Kind::Point | Kind::IndexUpdate => {
                        let id = self.ids.pick(&mut self.rng);
                        self.exec(slot, kind, vec![Value::Int(id as i64)]).await?;
                    }
                    Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                        let lo = self.ids.pick(&mut self.rng);
                        let hi = lo + u64::from(cfg.range_size) - 1;
                        self.exec(
                            slot,
                            kind,
                            vec![Value::Int(lo as i64), Value::Int(hi as i64)],
                        )
                        .await?;
                    }
                    Kind::NonIndexUpdate => {
                        let id = self.ids.pick(&mut self.rng);
                        fill_c(&mut self.rng, &mut self.c);
                        let c = Value::Bytes(self.c.as_bytes().to_vec());
                        self.exec(slot, kind, vec![c, Value::Int(id as i64)])
                            .await?;
                    }
                    Kind::Delete => {
                        let id = self.ids.pick(&mut self.rng);
                        self.exec(slot, Kind::Delete, vec![Value::Int(id as i64)])
                            .await?;
                        if cfg.script != super::Script::Delete {
                            let k = self.rng.uniform(1, size);
                            self.insert(slot, id as i64, k).await?;
                        }
                    }
                    Kind::Insert => {
                        let id = if cfg.auto_inc {
                            0
                        } else {
                            // Unique across threads and agents, never one of prepare's ids.
                            self.unique += 1;
                            -((self.thread + self.unique * self.total_threads) as i64)
                        };
                        let k = self.ids.pick(&mut self.rng);
                        self.insert(slot, id, k).await?;
                    }
                    Kind::RandomPoints => {
                        let vals = (0..cfg.random_points.max(1))
                            .map(|_| Value::Int(self.ids.pick(&mut self.rng) as i64))
                            .collect();
                        self.exec(slot, kind, vals).await?;
                    }
                    Kind::RandomRanges => {
                        let mut vals = Vec::with_capacity(2 * cfg.number_of_ranges as usize);
                        for _ in 0..cfg.number_of_ranges.max(1) {
                            let lo = self.ids.pick(&mut self.rng);
                            vals.push(Value::Int(lo as i64));
                            vals.push(Value::Int((lo + u64::from(cfg.delta)) as i64));
                        }
                        self.exec(slot, kind, vals).await?;
                    }
                    Kind::Begin | Kind::Commit => {}
                }
            }
        }
        if cfg.transactional() {
            for t in 0..self.conns.len() {
                if self.conns[t].as_ref().is_some_and(|c| c.in_trx) {
                    self.simple(t, Kind::Commit).await?;
                    if let Some(c) = self.conns[t].as_mut() {
                        c.in_trx = false;
                    }
                }
            }
        }
        Ok(())
    }

    async fn insert(&mut self, slot: usize, id: i64, k: u64) -> Result<(), Failure> {
        fill_c(&mut self.rng, &mut self.c);
        fill_pad(&mut self.rng, &mut self.pad);
        let vals = vec![
            if id == 0 { Value::NULL } else { Value::Int(id) },
            Value::Int(k as i64),
            Value::Bytes(self.c.as_bytes().to_vec()),
            Value::Bytes(self.pad.as_bytes().to_vec()),
        ];
        self.exec(slot, Kind::Insert, vals).await
    }

    /// BEGIN or COMMIT on target `t`, counted as "other".
    async fn simple(&mut self, t: usize, kind: Kind) -> Result<(), Failure> {
        let t0 = Instant::now();
        let c = self.conns[t].as_mut().ok_or(Failure::Lost(t))?;
        let (stmt, text) = match kind {
            Kind::Begin => (&c.begin, "BEGIN"),
            _ => (&c.commit, "COMMIT"),
        };
        let r = match stmt {
            Some(s) => c.conn.exec_drop(s, ()).await,
            None => c.conn.query_drop(text).await,
        };
        self.finish(t, kind, t0, r.map(|_| false))
    }

    /// Runs one statement of `kind` on table slot `slot`.
    async fn exec(&mut self, slot: usize, kind: Kind, vals: Vec<Value>) -> Result<(), Failure> {
        let t = self.cfg.tables[slot].1;
        if self.cfg.transactional() && !self.conns[t].as_ref().is_some_and(|c| c.in_trx) {
            self.simple(t, Kind::Begin).await?;
            if let Some(c) = self.conns[t].as_mut() {
                c.in_trx = true;
            }
        }
        let i = slot * Kind::COUNT + kind_index(kind);
        let t0 = Instant::now();
        let c = self.conns[t].as_mut().ok_or(Failure::Lost(t))?;
        let r = match &c.stmts[i] {
            Some(stmt) => c.conn.exec_drop(stmt, Params::Positional(vals)).await,
            None => {
                render(&mut self.sql, &self.templates[i], &vals);
                c.conn.query_drop(self.sql.as_str()).await
            }
        };
        let wrote = r.map(|_| c.conn.affected_rows() > 0);
        self.finish(t, kind, t0, wrote)
    }

    /// Counts a finished statement (read / write / other) or classifies its error.
    fn finish(
        &mut self,
        t: usize,
        kind: Kind,
        t0: Instant,
        r: Result<bool, mysql_async::Error>,
    ) -> Result<(), Failure> {
        match r {
            Ok(wrote) => {
                let ns = t0.elapsed().as_nanos() as u64;
                self.tail.kinds[kind_index(kind)].record(ns);
                let tt = &mut self.tail.targets[t];
                tt.statements.record(ns);
                if kind.is_select() {
                    self.tally.reads += 1;
                    tt.db.reads += 1;
                } else if wrote {
                    self.tally.writes += 1;
                    tt.db.writes += 1;
                } else {
                    self.tally.others += 1;
                    tt.db.others += 1;
                }
                Ok(())
            }
            Err(e) => {
                if let Some(code) = code_of(&e)
                    && self.cfg.ignores(code)
                {
                    self.tail.targets[t].db.count_ignored(code);
                    return Err(Failure::Ignored(code));
                }
                if is_lost(&e) {
                    return Err(Failure::Lost(t));
                }
                Err(Failure::Fatal(format!(
                    "{} failed on target {}: {}",
                    kind.name(),
                    self.cfg.targets[t].describe(),
                    error_text(&e)
                )))
            }
        }
    }

    /// Drops every connection without a goodbye (a statement may be in flight).
    pub fn abandon(self) -> WorkerTail {
        self.tail
    }

    /// Closes every connection politely and hands back the run's per-kind/target figures.
    /// bulk_insert's pending rows are sent first.
    pub async fn close(mut self) -> WorkerTail {
        if self.bulk_rows > 0
            && let Some(slot) = self
                .cfg
                .tables
                .iter()
                .position(|&(n, _)| u64::from(n) == self.thread + 1)
        {
            let never = std::sync::atomic::AtomicBool::new(true);
            let _ = self.flush_bulk(slot, &never).await;
        }
        for c in self.conns.iter_mut().filter_map(Option::take) {
            let _ = c.conn.disconnect().await;
        }
        self.tail
    }
}

/// Fills `out` with `template`, each '?' replaced by the next value as an SQL literal.
fn render(out: &mut String, template: &str, vals: &[Value]) {
    out.clear();
    let mut vals = vals.iter();
    for ch in template.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match vals.next() {
            Some(Value::Int(v)) => super::push_num(out, *v),
            Some(Value::Bytes(b)) => super::push_quoted(out, &String::from_utf8_lossy(b)),
            _ => out.push_str("NULL"),
        }
    }
}

/// A driver error as one short line: the server's message with its code, or the root
/// cause of an I/O error (the driver's own wrapping repeats itself).
pub fn error_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("{} (error {})", s.message, s.code),
        _ => {
            let mut msg = e.to_string();
            let mut cur = std::error::Error::source(e);
            while let Some(c) = cur {
                msg = c.to_string();
                cur = c.source();
            }
            msg
        }
    }
}

/// Opens a connection to `target`, with a readable error.
pub(crate) async fn open(target: &Target) -> Result<Conn, OpenError> {
    Conn::new(target.opts())
        .await
        .map_err(|e| open_error(target, &e))
}

/// A readable error for a failed connect.
pub(crate) fn open_error(target: &Target, e: &mysql_async::Error) -> OpenError {
    match code_of(e) {
        Some(1045) => OpenError::Access {
            target: target.describe(),
            message: error_text(e),
        },
        Some(1044) => OpenError::Access {
            target: target.describe(),
            message: format!(
                "{} (if the database does not exist, create it: CREATE DATABASE {})",
                error_text(e),
                target.database
            ),
        },
        Some(1049) => OpenError::NoDatabase {
            target: target.describe(),
            database: target.database.clone(),
        },
        _ => OpenError::Connect {
            target: target.describe(),
            message: error_text(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_substitutes_literals_in_order() {
        let mut out = String::new();
        render(
            &mut out,
            "UPDATE sbtest1 SET c=? WHERE id=?",
            &[Value::Bytes(b"12-34".to_vec()), Value::Int(7)],
        );
        assert_eq!(out, "UPDATE sbtest1 SET c='12-34' WHERE id=7");
        render(
            &mut out,
            "INSERT INTO t VALUES (?, ?)",
            &[Value::NULL, Value::Int(-3)],
        );
        assert_eq!(out, "INSERT INTO t VALUES (NULL, -3)");
    }
}
