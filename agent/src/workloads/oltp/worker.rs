//! One OLTP worker on an OS thread of its own, one blocking connection per target it uses
//! (as sysbench does with libmysqlclient): statements prepared once per connection and
//! table, one sysbench event (transaction) per call. Queries are counted as sysbench counts
//! them; listed errors are counted and the event retried; lost connections are re-opened
//! (statements prepared again) and counted as reconnects.
//!
//! The connection is a [`Client`]: the lean protocol client (no async runtime, no
//! per-statement allocation, result rows skipped undecoded), or mysql_async where the
//! server wants a login the lean client cannot do.
//!
//! Cancellation: every connection watches the run's [`Sockets`]; an abort shuts them
//! down, so a statement blocked on a lock returns at once and the worker leaves.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::rand::{Picker, Rng, fill_c, fill_pad};
use crate::sql::Client;
use crate::sql::dialect::Dialect;
use crate::sql::open_error::{LeanOpenError, OpenError, gate_error, open_error};
use crate::sql::opening::ConnectGate;
use crate::sql::{ErrorClass, Sockets};
use crate::sql::{Param, Reply, SqlError};
use crate::stats::{BATCH, WorkerTail};
use crate::workloads::{EventDb, Step, WorkerLoop};
use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::oltp::{Kind, OltpConfig, Script};
use fleetbench_model::workloads::server::Target;

/// A worker's statement latencies not yet folded into the shared [`WorkerTail`]: a
/// fixed-size buffer instead of a histogram per kind and target per worker, which at
/// thousands of connections was most of an agent's memory.
struct StmtLog {
    /// (kind index, target index, nanoseconds).
    pending: Vec<(u16, u16, u64)>,
    shared: Arc<Mutex<WorkerTail>>,
    /// Warming up: statements are not recorded.
    muted: bool,
}

impl StmtLog {
    fn new(shared: Arc<Mutex<WorkerTail>>) -> Self {
        StmtLog {
            pending: Vec::with_capacity(BATCH),
            shared,
            muted: false,
        }
    }

    fn record(&mut self, kind: usize, target: usize, ns: u64) {
        if self.muted {
            return;
        }
        self.pending.push((kind as u16, target as u16, ns));
        if self.pending.len() >= BATCH {
            self.fold();
        }
    }

    fn fold(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut guard = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        let tail = &mut *guard;
        let per_target = tail.one_target.is_none();
        for &(k, t, ns) in &self.pending {
            if let Some(s) = tail.kinds.get_mut(usize::from(k)) {
                s.record(ns);
            }
            if per_target && let Some(tt) = tail.targets.get_mut(usize::from(t)) {
                tt.statements.record(ns);
            }
        }
        self.pending.clear();
    }

    fn heap_bytes(&self) -> usize {
        self.pending.capacity() * std::mem::size_of::<(u16, u16, u64)>()
    }
}

/// What one event attempt ran into.
enum Failure {
    Ignored(u32),
    Lost(usize),
    Fatal(String),
}

/// An open connection with its statements, indexed by table slot and kind.
struct DbConn<C: Client> {
    conn: C,
    stmts: Vec<Option<C::Stmt>>,
    /// BEGIN and COMMIT, prepared like the rest (sysbench executes them as prepared
    /// statements too, which shows in the server's Com_stmt_execute).
    begin: Option<C::Stmt>,
    commit: Option<C::Stmt>,
    in_trx: bool,
}

pub struct OltpWorker<C: Client> {
    cfg: Arc<OltpConfig>,
    thread: u64,
    total_threads: u64,
    rng: Rng,
    ids: Picker,
    conns: Vec<Option<DbConn<C>>>,
    sockets: Arc<Sockets>,
    /// Statement texts per table slot and kind (`slot * Kind::COUNT + kind`).
    templates: Vec<String>,
    c: String,
    pad: String,
    sql: String,
    /// Parameters of the many-valued statements (random points and ranges), reused.
    params: Vec<Param<'static>>,
    /// Queries of the event in progress, moved to the recorder when it ends.
    pub tally: DbCounters,
    /// Per-target counters of the event in progress, moved to the recorder when it ends
    /// (only read when the worker's load goes to more than one target; the run's
    /// per-target figures are its intervals' sum).
    pub target_tally: Vec<DbCounters>,
    log: StmtLog,
    events: u64,
    unique: u64,
    bulk: String,
    bulk_rows: u64,
    groups: Arc<[(Kind, u32)]>,
    /// When the last statement ended (the next one's start): one clock read per statement.
    last: Instant,
    /// Whether this worker's tables are on more than one target (then its events are
    /// counted per target too).
    several_targets: bool,
    /// The event in progress failed and the loop calls it again (see [`Step::Again`]):
    /// it goes on where it was instead of starting anew.
    retrying: bool,
    /// A target whose connection was lost and is not back yet, and how long to wait
    /// after the next failed attempt to reach it.
    lost: Option<(usize, Duration)>,
}

/// The first wait between attempts to reach a lost server; it doubles up to
/// [`REOPEN_WAIT_MAX`].
const REOPEN_WAIT_MIN: Duration = Duration::from_millis(20);
const REOPEN_WAIT_MAX: Duration = Duration::from_millis(500);

fn kind_index(k: Kind) -> usize {
    Kind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

impl<C: Client> OltpWorker<C> {
    /// Opens this worker's connections (through `gate`, the agent's opening) and
    /// prepares its statements.
    pub fn open(
        cfg: Arc<OltpConfig>,
        thread: u64,
        total_threads: u64,
        seed: u64,
        sockets: Arc<Sockets>,
        tail: Arc<Mutex<WorkerTail>>,
        gate: &ConnectGate,
    ) -> Result<Self, LeanOpenError> {
        let ids = Picker::new(&cfg.distribution, 1, cfg.options.table_size.max(1));
        let mut templates = Vec::with_capacity(cfg.tables.len() * Kind::COUNT);
        for &(n, _) in &cfg.tables {
            for k in Kind::ALL {
                templates.push(k.sql(
                    &cfg.table(n),
                    cfg.options.random_points,
                    cfg.options.number_of_ranges,
                    &cfg.sp_name,
                ));
            }
        }
        let mut w = OltpWorker {
            thread,
            total_threads: total_threads.max(1),
            rng: Rng::new(seed ^ thread.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ids,
            conns: (0..cfg.targets.len()).map(|_| None).collect(),
            sockets,
            templates,
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
            sql: String::with_capacity(256),
            params: Vec::with_capacity(64),
            tally: DbCounters::default(),
            target_tally: vec![DbCounters::default(); cfg.targets.len()],
            log: StmtLog::new(tail),
            events: 0,
            unique: 0,
            bulk: String::new(),
            bulk_rows: 0,
            groups: cfg.groups().into(),
            last: Instant::now(),
            several_targets: cfg.targets_in_use().len() > 1,
            retrying: false,
            lost: None,
            cfg,
        };
        for (t, _) in w.cfg.targets_in_use() {
            w.conns[t] = Some(w.connect(t, Some(gate))?);
        }
        Ok(w)
    }

    /// Connects to target `t` and prepares its statements: while the run opens through
    /// `gate` (bounded, retried), later (a reconnect) straight.
    fn connect(&self, t: usize, gate: Option<&ConnectGate>) -> Result<DbConn<C>, LeanOpenError> {
        // A list of hosts: this thread's (a copy only then, and only while connecting).
        let own = self.cfg.targets[t].for_thread(self.thread);
        let target: &Target = own.as_ref().unwrap_or(&self.cfg.targets[t]);
        let connect = || C::connect(target, &self.sockets);
        let mut conn = match gate {
            None => connect().map_err(|e| open_error(target, e))?,
            Some(g) => g
                .open(t, &self.sockets, connect)
                .map_err(|e| gate_error(target, e))?,
        };
        // The first connection to a target says how it was made and reads the server's
        // version and variables, once for the run on this agent.
        let first = {
            let mut tail = self.log.shared.lock().unwrap_or_else(|p| p.into_inner());
            tail.targets
                .get_mut(t)
                .is_some_and(|tt| !std::mem::replace(&mut tt.facts_taken, true))
        };
        if first {
            let mut info = conn.info();
            match conn.server_facts(&self.cfg.server.server_vars) {
                Ok((version, vars)) => (info.server_version, info.server_vars) = (version, vars),
                // Facts are for the record: a server that refuses SHOW still benchmarks.
                Err(e) => {
                    tracing::warn!(target = %target.describe(), "cannot read the server's variables: {e}")
                }
            }
            let mut tail = self.log.shared.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(tt) = tail.targets.get_mut(t) {
                tt.conn = Some(info);
            }
        }
        let mut stmts: Vec<Option<C::Stmt>> = (0..self.templates.len()).map(|_| None).collect();
        let kinds = self.cfg.kinds();
        let prepare_failed = |e: SqlError| {
            LeanOpenError::Open(OpenError::Prepare {
                target: target.describe(),
                message: e.to_string(),
            })
        };
        for (slot, &(n, tt)) in self.cfg.tables.iter().enumerate() {
            if tt != t {
                continue;
            }
            if !self.cfg.db.prepared {
                // Text protocol: check the table exists without touching Com_select.
                let exists = Dialect::of(target.driver).table_exists(&self.cfg.table(n));
                match conn.query(&exists) {
                    Ok(Reply::Rows(r)) if r > 0 => continue,
                    Ok(_) => {
                        return Err(OpenError::NoTable {
                            target: target.describe(),
                            table: self.cfg.table(n),
                        }
                        .into());
                    }
                    Err(e) => return Err(prepare_failed(e)),
                }
            }
            for &k in &kinds {
                let i = slot * Kind::COUNT + kind_index(k);
                match conn.prepare(&self.templates[i]) {
                    Ok(s) => stmts[i] = Some(s),
                    // 1295: this server (or proxy) cannot prepare it; sysbench's auto mode
                    // falls back to the text protocol.
                    Err(e) if e.code() == Some(1295) => {}
                    // No such table: MySQL's 1146, PostgreSQL's 42P01.
                    Err(e)
                        if e.code() == Some(1146)
                            || e.code() == fleetbench_model::sqlstate::encode("42P01") =>
                    {
                        return Err(OpenError::NoTable {
                            target: target.describe(),
                            table: self.cfg.table(n),
                        }
                        .into());
                    }
                    Err(e) => return Err(prepare_failed(e)),
                }
            }
        }
        let (mut begin, mut commit) = (None, None);
        if self.cfg.db.prepared && self.cfg.transactional() {
            begin = conn.prepare("BEGIN").ok();
            commit = conn.prepare("COMMIT").ok();
        }
        if self.cfg.options.connect_delay_us > 0 {
            // 0.4's --oltp-connect-delay: a pause after every connect.
            crate::coop::sleep_until(
                Instant::now() + Duration::from_micros(self.cfg.options.connect_delay_us),
            );
        }
        Ok(DbConn {
            conn,
            stmts,
            begin,
            commit,
            in_trx: false,
        })
    }

    /// Counts on target `t`, in the event's per-target counters.
    fn on_target(&mut self, t: usize, f: impl Fn(&mut DbCounters)) {
        f(&mut self.target_tally[t]);
    }

    /// Runs one event that started at `t0`. After an ignored error, or a lost connection,
    /// it returns [`Step::Again`], so that what the try did and the error are counted in
    /// the interval in which they happened (as sysbench counts them); the loop then calls
    /// it again and it goes on with the same event: reaching the lost server first (one
    /// attempt a call, a failed one counted), then the event's statements from the start.
    fn run_event(&mut self, stop: &AtomicBool, t0: Instant) -> Step {
        if std::mem::take(&mut self.retrying) {
            self.last = Instant::now();
            if let Some((t, wait)) = self.lost {
                match self.reopen_once(t, stop) {
                    Ok(()) => self.lost = None,
                    Err(Some(step)) => return step,
                    Err(None) => {
                        self.lost = Some((t, (wait * 2).min(REOPEN_WAIT_MAX)));
                        return self.again_after(wait, stop);
                    }
                }
            }
        } else {
            self.last = t0;
            if let Some(step) = self.reconnect_if_due(stop) {
                return step;
            }
        }
        if self.cfg.script == Script::BulkInsert {
            return self.bulk_row(stop);
        }
        match self.attempt() {
            Ok(()) => {
                self.events += 1;
                Step::Done
            }
            Err(Failure::Ignored(code)) => {
                self.tally.count_ignored(code);
                self.rollback_all();
                self.again_after(Duration::ZERO, stop)
            }
            Err(Failure::Lost(t)) => {
                self.conns[t] = None;
                // An abort shut the socket down: leave rather than reconnect.
                if stop.load(Relaxed) {
                    return Step::Stopped;
                }
                self.rollback_all();
                self.lost = Some((t, REOPEN_WAIT_MIN));
                self.again_after(Duration::ZERO, stop)
            }
            Err(Failure::Fatal(msg)) => Step::Fatal(msg),
        }
    }

    /// The event will be tried again after `wait` (cut short when the run stops).
    fn again_after(&mut self, wait: Duration, stop: &AtomicBool) -> Step {
        let end = Instant::now() + wait;
        loop {
            if stop.load(Relaxed) {
                return Step::Stopped;
            }
            let now = Instant::now();
            if now >= end {
                break;
            }
            crate::coop::sleep_until(now + (end - now).min(Duration::from_millis(50)));
        }
        self.retrying = true;
        Step::Again
    }

    /// sysbench's --reconnect (and 0.4's random reconnect mode): every so many events,
    /// each connection is closed and opened again before the event.
    fn reconnect_if_due(&mut self, stop: &AtomicBool) -> Option<Step> {
        let due = if self.cfg.reconnect_random {
            self.events > 0 && self.rng.next_u64() & 1 == 0
        } else {
            self.cfg.options.reconnect > 0
                && self.events > 0
                && self.events.is_multiple_of(self.cfg.options.reconnect)
        };
        if !due {
            return None;
        }
        for t in 0..self.conns.len() {
            if let Some(old) = self.conns[t].take() {
                old.conn.quit();
                if let Some(o) = self.reopen(t, stop) {
                    return Some(o);
                }
            }
        }
        self.last = Instant::now();
        None
    }

    /// bulk_insert: appends one row to this thread's pending INSERT and sends it once it
    /// reaches the size sysbench's bulk inserts use.
    fn bulk_row(&mut self, stop: &AtomicBool) -> Step {
        const FLUSH_BYTES: usize = 512 * 1024;
        let Some(slot) = self.bulk_slot() else {
            return Step::Fatal(format!(
                "bulk_insert: no table sbtest{} for thread {}",
                self.thread + 1,
                self.thread
            ));
        };
        let (n, _) = self.cfg.tables[slot];
        if self.bulk_rows == 0 {
            self.bulk.clear();
            self.bulk
                .push_str(&format!("INSERT INTO {} VALUES", self.cfg.table(n)));
        } else {
            self.bulk.push(',');
        }
        self.events += 1;
        let k = self.ids.pick(&mut self.rng);
        self.bulk.push('(');
        fleetbench_model::workloads::oltp::push_num(&mut self.bulk, self.events as i64);
        self.bulk.push(',');
        fleetbench_model::workloads::oltp::push_num(&mut self.bulk, k as i64);
        self.bulk.push(')');
        self.bulk_rows += 1;
        if self.bulk.len() >= FLUSH_BYTES {
            return self.flush_bulk(slot, stop);
        }
        self.last = Instant::now();
        Step::Done
    }

    fn bulk_slot(&self) -> Option<usize> {
        self.cfg
            .tables
            .iter()
            .position(|&(n, _)| u64::from(n) == self.thread + 1)
    }

    /// Sends the pending bulk INSERT, reconnecting if the connection was lost.
    fn flush_bulk(&mut self, slot: usize, stop: &AtomicBool) -> Step {
        if self.bulk_rows == 0 {
            return Step::Done;
        }
        let t = self.cfg.tables[slot].1;
        loop {
            self.last = Instant::now();
            let Some(c) = self.conns[t].as_mut() else {
                return Step::Stopped;
            };
            let r = c.conn.query(&self.bulk);
            match self.finish(t, Kind::Insert, r) {
                Ok(()) => {
                    self.bulk_rows = 0;
                    return Step::Done;
                }
                Err(Failure::Lost(t)) => {
                    self.conns[t] = None;
                    if self.sockets.is_cancelled() {
                        return Step::Stopped;
                    }
                    if let Some(o) = self.reopen(t, stop) {
                        return o;
                    }
                }
                Err(Failure::Ignored(code)) => self.tally.count_ignored(code),
                Err(Failure::Fatal(m)) => return Step::Fatal(m),
            }
        }
    }

    /// Re-opens target `t`, retrying until it answers or the run stops. None on success.
    fn reopen(&mut self, t: usize, stop: &AtomicBool) -> Option<Step> {
        let mut wait = REOPEN_WAIT_MIN;
        loop {
            match self.reopen_once(t, stop) {
                Ok(()) => return None,
                Err(Some(step)) => return Some(step),
                Err(None) => {
                    crate::coop::sleep_until(Instant::now() + wait);
                    wait = (wait * 2).min(REOPEN_WAIT_MAX);
                }
            }
        }
    }

    /// One attempt to re-open target `t`, counted as a reconnect or a failed one. Err(None):
    /// the server cannot be reached now; Err(Some(step)): the run stops, or cannot go on
    /// (the server answers but refuses: no table, no access).
    fn reopen_once(&mut self, t: usize, stop: &AtomicBool) -> Result<(), Option<Step>> {
        match self.connect(t, None) {
            Ok(c) => {
                self.conns[t] = Some(c);
                self.tally.reconnects += 1;
                self.on_target(t, |c| c.reconnects += 1);
                Ok(())
            }
            Err(LeanOpenError::Open(
                e @ (OpenError::NoTable { .. }
                | OpenError::Access { .. }
                | OpenError::NoDatabase { .. }),
            )) => Err(Some(Step::Fatal(e.to_string()))),
            Err(LeanOpenError::Unsupported(m)) => Err(Some(Step::Fatal(m))),
            Err(_) if stop.load(Relaxed) || self.sockets.is_cancelled() => Err(Some(Step::Stopped)),
            Err(e) => {
                tracing::debug!(target = t, error = %e, "reconnect failed");
                self.tally.reconnect_failures += 1;
                self.on_target(t, |c| c.reconnect_failures += 1);
                Err(None)
            }
        }
    }

    fn rollback_all(&mut self) {
        for t in 0..self.conns.len() {
            if let Some(c) = self.conns[t].as_mut()
                && c.in_trx
            {
                c.in_trx = false;
                if c.conn.query("ROLLBACK").is_ok() {
                    self.tally.others += 1;
                    self.on_target(t, |c| c.others += 1);
                }
            }
        }
    }

    /// One try at the event's statements.
    fn attempt(&mut self) -> Result<(), Failure> {
        // By index, and the configuration through self: cloning the Arcs to hold them over
        // the loop cost two atomic increments and decrements per event.
        for g in 0..self.groups.len() {
            let (kind, count) = self.groups[g];
            // Each group picks one table, as sysbench does.
            let slot = self.rng.uniform(0, self.cfg.tables.len() as u64 - 1) as usize;
            for _ in 0..count {
                match kind {
                    Kind::Point | Kind::IndexUpdate => {
                        let id = self.ids.pick(&mut self.rng) as i64;
                        self.exec(slot, kind, &[Param::Int(id)])?;
                    }
                    Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                        let lo = self.ids.pick(&mut self.rng);
                        let hi = lo + u64::from(self.cfg.options.range_size) - 1;
                        self.exec(slot, kind, &[Param::Int(lo as i64), Param::Int(hi as i64)])?;
                    }
                    Kind::NonIndexUpdate => {
                        let id = self.ids.pick(&mut self.rng) as i64;
                        fill_c(&mut self.rng, &mut self.c);
                        // Moved out for the call (no copy), so the statement can borrow it.
                        let c = std::mem::take(&mut self.c);
                        let r = self.exec(slot, kind, &[Param::Str(c.as_bytes()), Param::Int(id)]);
                        self.c = c;
                        r?;
                    }
                    Kind::Delete => {
                        let id = self.ids.pick(&mut self.rng);
                        self.exec(slot, Kind::Delete, &[Param::Int(id as i64)])?;
                        if self.cfg.script != Script::Delete {
                            // sysbench 1.0 draws the new row's k as it draws ids
                            // (--rand-type), not uniformly.
                            let k = self.ids.pick(&mut self.rng);
                            self.insert(slot, id as i64, k)?;
                        }
                    }
                    Kind::Insert => {
                        let id = if self.cfg.options.auto_inc {
                            0
                        } else {
                            // Unique across threads and agents, never one of prepare's ids.
                            self.unique += 1;
                            -((self.thread + self.unique * self.total_threads) as i64)
                        };
                        let k = self.ids.pick(&mut self.rng);
                        self.insert(slot, id, k)?;
                    }
                    Kind::RandomPoints => {
                        let mut p = std::mem::take(&mut self.params);
                        p.clear();
                        for _ in 0..self.cfg.options.random_points.max(1) {
                            p.push(Param::Int(self.ids.pick(&mut self.rng) as i64));
                        }
                        let r = self.exec(slot, kind, &p);
                        self.params = p;
                        r?;
                    }
                    Kind::RandomRanges => {
                        let mut p = std::mem::take(&mut self.params);
                        p.clear();
                        for _ in 0..self.cfg.options.number_of_ranges.max(1) {
                            let lo = self.ids.pick(&mut self.rng);
                            p.push(Param::Int(lo as i64));
                            p.push(Param::Int((lo + u64::from(self.cfg.options.delta)) as i64));
                        }
                        let r = self.exec(slot, kind, &p);
                        self.params = p;
                        r?;
                    }
                    Kind::Call => self.exec(slot, kind, &[])?,
                    Kind::Begin | Kind::Commit => {}
                }
            }
        }
        if self.cfg.transactional() {
            for t in 0..self.conns.len() {
                if self.conns[t].as_ref().is_some_and(|c| c.in_trx) {
                    self.simple(t, Kind::Commit)?;
                    if let Some(c) = self.conns[t].as_mut() {
                        c.in_trx = false;
                    }
                }
            }
        }
        Ok(())
    }

    fn insert(&mut self, slot: usize, id: i64, k: u64) -> Result<(), Failure> {
        fill_c(&mut self.rng, &mut self.c);
        fill_pad(&mut self.rng, &mut self.pad);
        let (c, pad) = (std::mem::take(&mut self.c), std::mem::take(&mut self.pad));
        let (n, t) = self.cfg.tables[slot];
        if id == 0 && Dialect::of(self.cfg.targets[t].driver).omits_serial_id() {
            // A SERIAL id takes its default only when the column is left out (NULL is
            // refused): the text INSERT sysbench's pgsql driver sends.
            let r = self.insert_default_id(t, n, k, &c, &pad);
            (self.c, self.pad) = (c, pad);
            return r;
        }
        let id = if id == 0 { Param::Null } else { Param::Int(id) };
        let r = self.exec(
            slot,
            Kind::Insert,
            &[
                id,
                Param::Int(k as i64),
                Param::Str(c.as_bytes()),
                Param::Str(pad.as_bytes()),
            ],
        );
        (self.c, self.pad) = (c, pad);
        r
    }

    /// `INSERT INTO sbtestN (k, c, pad) VALUES (...)` as text on target `t`.
    #[cold]
    fn insert_default_id(
        &mut self,
        t: usize,
        n: u32,
        k: u64,
        c: &str,
        pad: &str,
    ) -> Result<(), Failure> {
        use fleetbench_model::workloads::oltp::{push_num, push_quoted};
        let mut sql = std::mem::take(&mut self.sql);
        sql.clear();
        sql.push_str("INSERT INTO ");
        sql.push_str(&self.cfg.table(n));
        sql.push_str(" (k, c, pad) VALUES (");
        push_num(&mut sql, k as i64);
        sql.push_str(", ");
        push_quoted(&mut sql, c);
        sql.push_str(", ");
        push_quoted(&mut sql, pad);
        sql.push(')');
        let r = match self.conns[t].as_mut() {
            Some(conn) => conn.conn.query(&sql),
            None => {
                self.sql = sql;
                return Err(Failure::Lost(t));
            }
        };
        self.sql = sql;
        self.finish(t, Kind::Insert, r)
    }

    /// BEGIN or COMMIT on target `t`, counted as "other".
    fn simple(&mut self, t: usize, kind: Kind) -> Result<(), Failure> {
        let c = self.conns[t].as_mut().ok_or(Failure::Lost(t))?;
        let (stmt, text) = match kind {
            Kind::Begin => (&mut c.begin, "BEGIN"),
            _ => (&mut c.commit, "COMMIT"),
        };
        let r = match stmt {
            Some(s) => c.conn.execute(s, &[]),
            None => c.conn.query(text),
        };
        self.finish(t, kind, r)
    }

    /// Runs one statement of `kind` on table slot `slot`.
    fn exec(&mut self, slot: usize, kind: Kind, params: &[Param]) -> Result<(), Failure> {
        let t = self.cfg.tables[slot].1;
        if self.cfg.transactional() && !self.conns[t].as_ref().is_some_and(|c| c.in_trx) {
            self.simple(t, Kind::Begin)?;
            if let Some(c) = self.conns[t].as_mut() {
                c.in_trx = true;
            }
        }
        let i = slot * Kind::COUNT + kind_index(kind);
        let c = self.conns[t].as_mut().ok_or(Failure::Lost(t))?;
        let r = match &mut c.stmts[i] {
            Some(stmt) => c.conn.execute(stmt, params),
            None => {
                render(&mut self.sql, &self.templates[i], params);
                c.conn.query(&self.sql)
            }
        };
        self.finish(t, kind, r)
    }

    /// What a failed statement means for the event (see [`ErrorClass`]); an ignored error
    /// is counted. Out of line: the statement path stays small.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, t: usize, kind: Kind, e: SqlError) -> Failure {
        match e.classify(|code| self.cfg.ignores(code)) {
            ErrorClass::Ignorable(code) => {
                self.on_target(t, |c| c.count_ignored(code));
                Failure::Ignored(code)
            }
            ErrorClass::Reconnect => Failure::Lost(t),
            ErrorClass::Fatal => Failure::Fatal(format!(
                "{} failed on target {}: {e}",
                kind.name(),
                self.cfg.targets[t].describe(),
            )),
        }
    }

    /// Counts a finished statement (read / write / other) or classifies its error.
    fn finish(&mut self, t: usize, kind: Kind, r: Result<Reply, SqlError>) -> Result<(), Failure> {
        match r {
            Ok(reply) => {
                let now = Instant::now();
                let ns = now.duration_since(self.last).as_nanos() as u64;
                self.last = now;
                self.log.record(kind_index(kind), t, ns);
                // A statement returning a result set is a read, DML that changed rows a write;
                // a CALL is neither, whatever its procedure did last.
                let wrote = kind != Kind::Call
                    && matches!(reply, Reply::Ok { affected_rows } if affected_rows > 0);
                if kind.is_select() {
                    self.tally.reads += 1;
                    self.on_target(t, |c| c.reads += 1);
                } else if wrote {
                    self.tally.writes += 1;
                    self.on_target(t, |c| c.writes += 1);
                } else {
                    self.tally.others += 1;
                    self.on_target(t, |c| c.others += 1);
                }
                Ok(())
            }
            Err(e) => Err(self.failed(t, kind, e)),
        }
    }

    /// Drops every connection without a goodbye (a statement may be in flight).
    pub fn abandon(mut self) {
        self.hand_in();
    }

    /// Folds this worker's last statement latencies into the run's shared per-kind and
    /// per-target figures (the per-target counters come from the intervals).
    fn hand_in(&mut self) {
        self.log.fold();
    }

    /// Heap bytes of this worker's recording structures: fixed, whatever the run does.
    pub fn recording_heap_bytes(&self) -> usize {
        self.log.heap_bytes() + self.target_tally.len() * std::mem::size_of::<DbCounters>()
    }

    /// Closes every connection politely and hands in the run's per-kind/target figures.
    /// bulk_insert's pending rows are sent first.
    pub fn close(mut self) {
        if self.bulk_rows > 0
            && let Some(slot) = self.bulk_slot()
        {
            let never = AtomicBool::new(true);
            let _ = self.flush_bulk(slot, &never);
        }
        for c in self.conns.iter_mut().filter_map(Option::take) {
            c.conn.quit();
        }
        self.hand_in();
    }
}

/// The runner's event loop drives an OLTP worker as any other, with its database hooks:
/// the event's statements are counted in `tally` (and per target), the clock is read
/// once per statement, and 0.4's think time and the warm-up's muted statistics are its own.
impl<C: Client> WorkerLoop for OltpWorker<C> {
    fn event(&mut self, stop: &AtomicBool, io: &mut IoCounters) -> Step {
        self.event_at(stop, io, Instant::now())
    }

    // Inlined into the runner's event loop (another module, perhaps another codegen unit):
    // the call showed in the instructions per statement.
    #[inline]
    fn event_at(&mut self, stop: &AtomicBool, _io: &mut IoCounters, t0: Instant) -> Step {
        self.run_event(stop, t0)
    }

    /// When the last statement ended: the end of the event just run.
    fn ended_at(&self) -> Option<Instant> {
        Some(self.last)
    }

    fn db(&self) -> Option<EventDb<'_>> {
        Some(EventDb {
            all: &self.tally,
            // A worker on one target needs no per-target counts: the run's are its.
            targets: self.several_targets.then_some(&self.target_tally[..]),
        })
    }

    fn reset_db(&mut self) {
        self.tally.reset();
        if self.several_targets {
            self.target_tally.iter_mut().for_each(DbCounters::reset);
        }
    }

    /// Turns statistics off (`on`: warming up) or back on. What the warm-up counted per
    /// target is dropped when it ends, so the figures start from zero with the measurement.
    fn set_warmup(&mut self, on: bool) {
        self.log.muted = on;
        if !on {
            self.tally.reset();
            for t in &mut self.target_tally {
                t.reset();
            }
        }
    }

    /// 0.4's think time (--oltp-user-delay-min/max) after an event, outside its latency;
    /// false when there is none. Cut short when the run stops.
    #[inline]
    fn think(&mut self, stop: &AtomicBool) -> bool {
        let (lo, hi) = self.cfg.options.user_delay_us;
        hi != 0 && self.think_for(lo, hi, stop)
    }
}

impl<C: Client> OltpWorker<C> {
    /// Sleeps a think time between `lo` and `hi` µs, in slices that notice the stop.
    #[inline(never)]
    fn think_for(&mut self, lo: u64, hi: u64, stop: &AtomicBool) -> bool {
        let end = Instant::now() + Duration::from_micros(self.rng.uniform(lo, hi));
        loop {
            let now = Instant::now();
            if now >= end || stop.load(Relaxed) {
                return true;
            }
            crate::coop::sleep_until(now + (end - now).min(Duration::from_millis(50)));
        }
    }
}

/// Fills `out` with `template`, each '?' replaced by the next value as an SQL literal.
pub(crate) fn render(out: &mut String, template: &str, params: &[Param]) {
    out.clear();
    let mut vals = params.iter();
    for ch in template.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match vals.next() {
            Some(Param::Int(v)) => fleetbench_model::workloads::oltp::push_num(out, *v),
            Some(Param::Str(b)) => {
                fleetbench_model::workloads::oltp::push_quoted(out, &String::from_utf8_lossy(b))
            }
            _ => out.push_str("NULL"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_log_memory_does_not_grow_with_kinds_targets_or_statements() {
        let targets = 3;
        let shared = Arc::new(Mutex::new(WorkerTail::new(targets)));
        let mut log = StmtLog::new(shared.clone());
        let before = log.heap_bytes();
        let mut n = 0u64;
        for i in 0..50_000u64 {
            let (k, t) = (
                (i % Kind::COUNT as u64) as usize,
                (i % targets as u64) as usize,
            );
            log.record(k, t, 1_000 + i);
            n += 1;
            assert!(log.heap_bytes() <= before, "statement {i}");
        }
        log.fold();
        let tail = shared.lock().unwrap();
        let by_kind: u64 = tail.kinds.iter().map(|s| s.events).sum();
        let by_target: u64 = tail.targets.iter().map(|t| t.statements.events).sum();
        assert_eq!((by_kind, by_target), (n, n));
        assert!(
            tail.kinds
                .iter()
                .all(|s| s.hist.len() == s.events && s.events > 0)
        );
        assert_eq!(tail.kinds[0].min_ns, 1_000);
        assert!(before <= BATCH * 16, "{before}");
    }

    #[test]
    fn one_target_gets_the_kinds_statements_without_a_second_record() {
        let record = |one_target| {
            let shared = Arc::new(Mutex::new(WorkerTail {
                one_target,
                ..WorkerTail::new(2)
            }));
            let mut log = StmtLog::new(shared.clone());
            for i in 0..1_000u64 {
                log.record((i % 3) as usize, 1, 1_000 + 7 * i);
            }
            log.fold();
            let mut tail = std::mem::take(&mut *shared.lock().unwrap());
            tail.finish();
            tail
        };
        let (each, one) = (record(None), record(Some(1)));
        let (a, b) = (&each.targets[1].statements, &one.targets[1].statements);
        assert_eq!(
            (a.events, a.min_ns, a.max_ns, a.sum_ns),
            (b.events, b.min_ns, b.max_ns, b.sum_ns)
        );
        assert_eq!(a.hist, b.hist);
        assert_eq!(b.events, 1_000);
        assert_eq!(one.targets[0].statements.events, 0);
    }

    #[test]
    fn render_substitutes_literals_in_order() {
        let mut out = String::new();
        render(
            &mut out,
            "UPDATE sbtest1 SET c=? WHERE id=?",
            &[Param::Str(b"12-34"), Param::Int(7)],
        );
        assert_eq!(out, "UPDATE sbtest1 SET c='12-34' WHERE id=7");
        render(
            &mut out,
            "INSERT INTO t VALUES (?, ?)",
            &[Param::Null, Param::Int(-3)],
        );
        assert_eq!(out, "INSERT INTO t VALUES (NULL, -3)");
    }

    #[test]
    fn lost_connections_are_told_from_statement_errors() {
        let server = |code| SqlError::Server {
            code,
            message: String::new(),
        };
        let none = |_| false;
        assert_eq!(server(1927).classify(none), ErrorClass::Reconnect);
        assert_eq!(server(1213).classify(none), ErrorClass::Fatal);
        assert_eq!(
            server(1213).classify(|c| c == 1213),
            ErrorClass::Ignorable(1213)
        );
        let broken = SqlError::Io(std::io::ErrorKind::BrokenPipe.into());
        assert_eq!(broken.classify(none), ErrorClass::Reconnect);
    }
}
