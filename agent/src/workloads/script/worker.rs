//! One script worker: a Lua state of its own on its thread (as sysbench), with the SQL,
//! random-number and counter functions the prelude's `sysbench.*` builds on. Statements go
//! through the driver layer's [`Client`] (the lean MySQL client: server-side prepared
//! statements, one round trip each). Each statement is counted as sysbench counts it (read,
//! write or other by its first word); an event is one call of `event()` (or of a command's
//! function).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::rand::Distribution;
use fleetbench_model::workloads::script::ScriptConfig;
use fleetbench_model::workloads::server::Target;
use fleetbench_script::state::{self, StateEnv};
use mlua::{Function, Lua, Table, Value};

pub use super::output::Output;
use crate::rand::{Picker, Rng};
use crate::runner::Control;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::{ConnectGate, GateError};
use crate::sql::{Client, ErrorClass, Param, Reply, Sockets, SqlError};
use crate::stats::WorkerTail;
use crate::workloads::{EventDb, Step, WorkerLoop};

/// What a statement counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Read,
    Write,
    Other,
}

/// What a statement's text says it is: SELECT (and SHOW, WITH) read, INSERT, UPDATE,
/// DELETE and REPLACE write, the rest (BEGIN, COMMIT, SET, DDL) other. Only decides whether
/// `con:query` fetches rows; a statement is counted by its reply ([`counted_as`]).
pub fn classify(sql: &str) -> Class {
    let word = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    if is("select") || is("show") || is("with") {
        Class::Read
    } else if is("insert") || is("update") || is("delete") || is("replace") {
        Class::Write
    } else {
        Class::Other
    }
}

/// sysbench's counting of a statement that succeeded, by its reply: a result set is a
/// read, an OK that changed rows a write, the rest other (BEGIN, COMMIT, SET, and an UPDATE
/// or DELETE that matched nothing). A failed statement is an error, not one of these.
pub fn counted_as(reply: &Reply) -> Class {
    match reply {
        Reply::Rows(_) => Class::Read,
        Reply::Ok { affected_rows } if *affected_rows > 0 => Class::Write,
        Reply::Ok { .. } => Class::Other,
    }
}

/// A connection a script opened; None while it is lost and not yet reopened.
struct ConnSlot<C> {
    conn: Option<C>,
    /// Bumped by every reconnect: statements prepared before it are prepared again.
    generation: u64,
}

/// A statement a script prepared.
struct StmtSlot<C: Client> {
    conn: usize,
    sql: String,
    /// The server's statement, prepared on connection generation `generation`; None when
    /// it runs as text (`--db-ps-mode=disable`, or a server that cannot prepare it).
    stmt: Option<C::Stmt>,
    generation: u64,
    text: bool,
    /// The values bound through the FFI calls.
    binds: Vec<BindVal>,
}

/// Random-number pickers by (distribution, range), the last few kept: scripts draw from
/// a handful of ranges over and over.
struct Pickers {
    cached: Vec<((u8, i64, i64), Picker)>,
}

impl Pickers {
    fn pick(&mut self, rng: &mut Rng, dist: &Distribution, key: u8, a: i64, b: i64) -> i64 {
        if b <= a {
            return a;
        }
        if key == 0 {
            return a + rng.uniform(0, (b - a) as u64) as i64;
        }
        let k = (key, a, b);
        let i = match self.cached.iter().position(|(kk, _)| *kk == k) {
            Some(i) => i,
            None => {
                if self.cached.len() >= 8 {
                    self.cached.remove(0);
                }
                self.cached.push((k, Picker::new(dist, 0, (b - a) as u64)));
                self.cached.len() - 1
            }
        };
        a + self.cached[i].1.pick(rng) as i64
    }
}

/// The raw functions of sysbench.rand's distributions, by kind (the FFI's numbering).
const RAND_NAMES: [&str; 6] = [
    "rand_uniform",
    "rand_default",
    "rand_gaussian",
    "rand_special",
    "rand_pareto",
    "rand_zipfian",
];

/// Each kind's distribution: the run's own parameters where it uses that distribution
/// (--rand-type's), sysbench's defaults for the others; `default` is the run's.
fn distributions(run: &Distribution) -> [(u8, Distribution); 6] {
    let own = |d: Distribution| {
        if d.name() == run.name() {
            run.clone()
        } else {
            d
        }
    };
    let all = [
        Distribution::Uniform,
        run.clone(),
        own(Distribution::Gaussian { iter: 12 }),
        own(Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        }),
        own(Distribution::Pareto { h: 0.2 }),
        own(Distribution::Zipfian { exp: 0.8 }),
    ];
    let mut i = 0u8;
    all.map(|d| {
        i += 1;
        // Uniform draws need no picker (key 0).
        let key = if matches!(d, Distribution::Uniform) {
            0
        } else {
            i
        };
        (key, d)
    })
}

/// sysbench.rand.string's characters: `#` a random digit, `@` a random lowercase letter,
/// others as they are. A 64-bit draw is read as a fraction, one character a multiply: its
/// next digit (or letter) is the integer part of the fraction times 10 (or 26), the rest
/// the new fraction; each multiply uses up a low bit or two, so a draw gives 16 digits or
/// 12 letters before another is taken, with no division per character.
#[derive(Default)]
pub struct RandText {
    digits: u64,
    digits_left: u32,
    letters: u64,
    letters_left: u32,
}

impl RandText {
    pub fn fill(&mut self, rng: &mut Rng, fmt: &[u8], out: &mut [u8]) {
        for (o, &f) in out.iter_mut().zip(fmt) {
            *o = match f {
                b'#' => {
                    if self.digits_left == 0 {
                        self.digits = rng.next_u64();
                        self.digits_left = 16;
                    }
                    self.digits_left -= 1;
                    let m = u128::from(self.digits) * 10;
                    self.digits = m as u64;
                    b'0' + (m >> 64) as u8
                }
                b'@' => {
                    if self.letters_left == 0 {
                        self.letters = rng.next_u64();
                        self.letters_left = 12;
                    }
                    self.letters_left -= 1;
                    let m = u128::from(self.letters) * 26;
                    self.letters = m as u64;
                    b'a' + (m >> 64) as u8
                }
                other => other,
            };
        }
    }
}

/// Everything the raw functions of one state share.
pub struct Ctx<C: Client> {
    cfg: Arc<ScriptConfig>,
    /// This thread's target (thread id mod targets), its index.
    target: Target,
    target_index: usize,
    sockets: Arc<Sockets>,
    /// While the run opens: connects go through the agent's gate (bounded, retried).
    gate: Option<Arc<ConnectGate>>,
    tail: Arc<Mutex<WorkerTail>>,
    control: Arc<Control>,
    conns: Vec<ConnSlot<C>>,
    stmts: Vec<Option<StmtSlot<C>>>,
    /// The event's counts.
    pub tally: DbCounters,
    /// `sb_counter_inc(tid, SB_CNT_TRX)` calls not yet handed to the runner
    /// ([`WorkerLoop::extra_events`]): events beyond the ones run.
    trx: u64,
    rng: Rng,
    pickers: Pickers,
    /// `sysbench.rand.unique()`: this thread's next, unique over the run's threads.
    unique: u64,
    tid: u64,
    total_threads: u64,
    /// A login the lean client does not speak: the run falls back to mysql_async.
    pub unsupported: Option<String>,
    sql: String,
    /// The distribution of each sysbench.rand kind.
    dists: [(u8, Distribution); 6],
    /// sysbench.rand.string's digits and letters, many from one draw.
    rand_text: RandText,
    /// The last failed statement of the FFI path, for `raw.last_error`.
    last_failure: Failed,
    /// The rows the last executed prepared statement returned (None: it returns none),
    /// for the result set `stmt:execute()` gives.
    last_rows: Option<u64>,
}

/// A failed statement's `sql_errno` and `sql_state` as sysbench's drivers give them:
/// MySQL's code and HY000; PostgreSQL's SQLSTATE with errno 0.
fn lost_error(e: &SqlError) -> (u32, String) {
    match e {
        SqlError::Server { code, .. } if fleetbench_model::sqlstate::is_sqlstate(*code) => {
            (0, fleetbench_model::sqlstate::state(*code))
        }
        SqlError::Server { code, .. } => (*code, "HY000".into()),
        // What libmysqlclient says for a connection that went away.
        _ => (2013, "HY000".into()),
    }
}

impl<C: Client> Ctx<C> {
    /// A random number in [a, b] of sysbench.rand kind `kind`.
    fn draw(&mut self, kind: i32, a: i64, b: i64) -> i64 {
        let (key, dist) = match self.dists.get(kind as usize) {
            Some((k, d)) => (*k, d),
            None => (0, &Distribution::Uniform),
        };
        self.pickers.pick(&mut self.rng, dist, key, a, b)
    }

    fn connect_now(&mut self) -> Result<C, SqlError> {
        let (target, sockets) = (&self.target, &self.sockets);
        let connect = || C::connect(target, sockets);
        match &self.gate {
            None => connect(),
            Some(g) => g
                .open(self.target_index, sockets, connect)
                .map_err(|e| match e {
                    GateError::Failed(e) => e,
                    GateError::Cancelled => SqlError::Io(std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "the run was stopped",
                    )),
                    GateError::GaveUp(m) => SqlError::Io(std::io::Error::other(m)),
                }),
        }
    }

    /// The first connection to the target on this agent says how it was made, for Ready.
    fn record_facts(&self, conn: &mut C) {
        let first = {
            let mut tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
            tail.targets
                .get_mut(self.target_index)
                .is_some_and(|tt| !std::mem::replace(&mut tt.facts_taken, true))
        };
        if !first {
            return;
        }
        let mut info = conn.info();
        if let Ok((version, vars)) = conn.server_facts(&self.cfg.server.server_vars) {
            (info.server_version, info.server_vars) = (version, vars);
        }
        let mut tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tt) = tail.targets.get_mut(self.target_index) {
            tt.conn = Some(info);
        }
    }

    fn conn(&mut self, h: usize) -> Result<&mut ConnSlot<C>, mlua::Error> {
        self.conns
            .get_mut(h)
            .ok_or_else(|| mlua::Error::runtime("the connection was closed"))
    }

    /// Reopens a lost connection once: counted as a reconnect, or as a failed one (then
    /// a pause, so that a dead server is not hammered; the next statement tries again).
    fn reopen(&mut self, h: usize) {
        match self.connect_now() {
            Ok(c) => {
                self.tally.reconnects += 1;
                if let Some(slot) = self.conns.get_mut(h) {
                    slot.conn = Some(c);
                    slot.generation += 1;
                }
            }
            Err(_) => {
                self.tally.reconnect_failures += 1;
                let until = Instant::now() + Duration::from_millis(100);
                while Instant::now() < until && !self.control.is_stopped() {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }

    /// What a failed statement on connection `h` means: the values the prelude's
    /// `failed` takes (errno, state, message, class). A lost connection is reopened.
    fn failure(&mut self, h: usize, e: SqlError) -> (u32, String, String, &'static str) {
        let db = &self.cfg.db;
        let class = e.classify(|c| db.ignores(c));
        let (errno, state) = lost_error(&e);
        let msg = e.to_string();
        let class = match class {
            ErrorClass::Ignorable(_) => "ignorable",
            ErrorClass::Fatal => "fatal",
            ErrorClass::Reconnect => {
                if let Some(slot) = self.conns.get_mut(h)
                    && let Some(c) = slot.conn.take()
                {
                    drop(c);
                }
                if !self.control.is_stopped() {
                    self.reopen(h);
                }
                "reconnect"
            }
        };
        (errno, state, msg, class)
    }

    fn count(&mut self, class: Class) {
        match class {
            Class::Read => self.tally.reads += 1,
            Class::Write => self.tally.writes += 1,
            Class::Other => self.tally.others += 1,
        }
    }

    /// A live connection `h`, reopening it first if it was lost.
    fn live(&mut self, h: usize) -> Result<Option<&mut C>, mlua::Error> {
        if self.conn(h)?.conn.is_none() && !self.control.is_stopped() {
            self.reopen(h);
        }
        Ok(self.conn(h)?.conn.as_mut())
    }
}

type Shared<C> = Rc<RefCell<Ctx<C>>>;

/// A failure as the raw functions return it (nothing on success).
type Failed = Option<(u32, String, String, &'static str)>;

fn gone() -> (u32, String, String, &'static str) {
    (
        2013,
        "HY000".into(),
        "Lost connection to server (reconnecting)".into(),
        "reconnect",
    )
}

/// Reads a bound value as a statement parameter; `scratch` keeps the text of numbers
/// that are not whole.
fn param_of<'a>(
    v: &'a Value,
    strs: &'a [mlua::BorrowedBytes],
    si: &mut usize,
    scratch: &'a [String],
    fi: &mut usize,
) -> Param<'a> {
    match v {
        Value::Integer(i) => Param::Int(*i),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Param::Int(*n as i64),
        Value::Number(_) => {
            let p = Param::Str(scratch[*fi].as_bytes());
            *fi += 1;
            p
        }
        Value::Boolean(b) => Param::Int(i64::from(*b)),
        Value::String(_) => {
            let p = Param::Str(&strs[*si]);
            *si += 1;
            p
        }
        _ => Param::Null,
    }
}

fn execute<C: Client>(ctx: &Shared<C>, h: usize, values: &[Value]) -> Result<Failed, mlua::Error> {
    let strs: Vec<mlua::BorrowedBytes> = values
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.as_bytes()),
            _ => None,
        })
        .collect();
    let scratch: Vec<String> = values
        .iter()
        .filter_map(|v| match v {
            Value::Number(n) if !(n.fract() == 0.0 && n.abs() < 9.0e15) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    let (mut si, mut fi) = (0, 0);
    let mut params: [Param; 8] = [Param::Null; 8];
    let mut more: Vec<Param> = Vec::new();
    let n = values.len();
    let params: &[Param] = if n <= 8 {
        for (i, v) in values.iter().enumerate() {
            params[i] = param_of(v, &strs, &mut si, &scratch, &mut fi);
        }
        &params[..n]
    } else {
        for v in values {
            more.push(param_of(v, &strs, &mut si, &scratch, &mut fi));
        }
        &more
    };
    ctx.borrow_mut().run_stmt(h, params)
}

/// A bound value of a statement, as `p:set()` left it (the FFI path keeps them here).
#[derive(Debug, Default)]
pub enum BindVal {
    #[default]
    Null,
    Int(i64),
    Text(Vec<u8>),
}

impl<C: Client> Ctx<C> {
    /// Executes statement `h` with `params`: prepared again first after a reconnect,
    /// counted, its failure classified.
    fn run_stmt(&mut self, h: usize, params: &[Param]) -> Result<Failed, mlua::Error> {
        let slot = self
            .stmts
            .get_mut(h)
            .and_then(Option::as_mut)
            .ok_or_else(|| mlua::Error::runtime("the statement was closed"))?;
        let conn_h = slot.conn;
        let generation = self.conns.get(conn_h).map_or(0, |s| s.generation);
        if self.live(conn_h)?.is_none() {
            return Ok(Some(gone()));
        }
        let slot = self.stmts[h].as_mut().expect("checked above");
        let conn = self.conns[conn_h].conn.as_mut().expect("live");
        // Prepared before a reconnect: prepare it again on the new connection.
        if !slot.text && (slot.stmt.is_none() || slot.generation != generation) {
            match conn.prepare(&slot.sql) {
                Ok(s) => {
                    slot.stmt = Some(s);
                    slot.generation = generation;
                }
                Err(e) if e.code() == Some(1295) => slot.text = true,
                Err(e) => return Ok(Some(self.failure(conn_h, e))),
            }
        }
        let r = match slot.stmt.as_mut() {
            Some(s) if !slot.text => conn.execute(s, params),
            _ => {
                crate::workloads::oltp::worker::render(&mut self.sql, &slot.sql, params);
                conn.query(&self.sql)
            }
        };
        match r {
            Ok(reply) => {
                self.count(counted_as(&reply));
                self.last_rows = match reply {
                    Reply::Rows(n) => Some(n),
                    Reply::Ok { .. } => None,
                };
                Ok(None)
            }
            Err(e) => Ok(Some(self.failure(conn_h, e))),
        }
    }

    /// Executes statement `h` with the values bound through the FFI calls.
    fn run_bound(&mut self, h: usize) -> Result<Failed, mlua::Error> {
        let Some(Some(slot)) = self.stmts.get_mut(h) else {
            return Err(mlua::Error::runtime("the statement was closed"));
        };
        let binds = std::mem::take(&mut slot.binds);
        let mut small: [Param; 8] = [Param::Null; 8];
        let mut more: Vec<Param> = Vec::new();
        fn as_param(b: &BindVal) -> Param<'_> {
            match b {
                BindVal::Null => Param::Null,
                BindVal::Int(i) => Param::Int(*i),
                BindVal::Text(t) => Param::Str(t),
            }
        }
        let params: &[Param] = if binds.len() <= small.len() {
            for (p, b) in small.iter_mut().zip(&binds) {
                *p = as_param(b);
            }
            &small[..binds.len()]
        } else {
            more.extend(binds.iter().map(as_param));
            &more
        };
        let r = self.run_stmt(h, params);
        if let Some(Some(slot)) = self.stmts.get_mut(h) {
            slot.binds = binds;
        }
        r
    }

    /// The bind slot `i` of statement `h` (made when first used).
    fn bind_slot(&mut self, h: usize, i: usize) -> Option<&mut BindVal> {
        let slot = self.stmts.get_mut(h)?.as_mut()?;
        // A statement has at most 65,535 parameters (the protocol's limit).
        if i >= usize::from(u16::MAX) {
            return None;
        }
        if slot.binds.len() <= i {
            slot.binds.resize_with(i + 1, BindVal::default);
        }
        slot.binds.get_mut(i)
    }
}

/// The functions the prelude calls through LuaJIT's FFI on the hot path (binding values,
/// executing a statement, drawing a random number): no Lua C API in between. `ctx` is the
/// worker's `RefCell<Ctx<C>>`, which outlives its state; the prelude keeps these pointers
/// in locals no script can reach. They never unwind: a panic or a reentrant call is an
/// error code.
mod ffi_calls {
    use std::cell::RefCell;
    use std::ffi::c_void;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use super::{BindVal, Ctx};
    use crate::sql::Client;

    fn with<C: Client, R>(ctx: *const c_void, err: R, f: impl FnOnce(&mut Ctx<C>) -> R) -> R {
        // SAFETY: the prelude passes the address the worker gave it, of a RefCell<Ctx<C>>
        // that lives as long as the Lua state calling here.
        let cell = unsafe { &*ctx.cast::<RefCell<Ctx<C>>>() };
        let Ok(mut g) = cell.try_borrow_mut() else {
            return err;
        };
        catch_unwind(AssertUnwindSafe(|| f(&mut g))).unwrap_or(err)
    }

    /// Binds a number: whole numbers as integers, others as their text.
    pub extern "C" fn bind_num<C: Client>(ctx: *const c_void, h: u32, i: u32, v: f64) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                *b = if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    BindVal::Int(v as i64)
                } else {
                    let mut t = match std::mem::take(b) {
                        BindVal::Text(t) => t,
                        _ => Vec::new(),
                    };
                    t.clear();
                    t.extend_from_slice(v.to_string().as_bytes());
                    BindVal::Text(t)
                };
                0
            }
            None => -1,
        })
    }

    /// Binds `len` bytes at `p` (a Lua string, valid for the call), reusing the buffer.
    pub extern "C" fn bind_str<C: Client>(
        ctx: *const c_void,
        h: u32,
        i: u32,
        p: *const u8,
        len: usize,
    ) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                // SAFETY: LuaJIT passes a string's bytes and its length.
                let bytes = unsafe { std::slice::from_raw_parts(p, len) };
                let mut t = match std::mem::take(b) {
                    BindVal::Text(t) => t,
                    _ => Vec::with_capacity(len),
                };
                t.clear();
                t.extend_from_slice(bytes);
                *b = BindVal::Text(t);
                0
            }
            None => -1,
        })
    }

    pub extern "C" fn bind_null<C: Client>(ctx: *const c_void, h: u32, i: u32) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                *b = BindVal::Null;
                0
            }
            None => -1,
        })
    }

    /// Executes statement `h`: 0 done, 1 failed (the prelude asks `raw.last_error` why),
    /// -1 the call itself failed.
    pub extern "C" fn execute<C: Client>(ctx: *const c_void, h: u32) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.run_bound(h as usize) {
            // 2 + the rows of a statement that returned rows (a result set for the script).
            Ok(None) => match c.last_rows {
                Some(n) => 2 + n.min(i32::MAX as u64 - 2) as i32,
                None => 0,
            },
            Ok(Some(f)) => {
                c.last_failure = Some(f);
                1
            }
            Err(_) => -1,
        })
    }

    /// A random number in [a, b] from distribution `kind` (0 uniform, 1 the run's
    /// --rand-type, 2 gaussian, 3 special, 4 pareto, 5 zipfian).
    pub extern "C" fn rand<C: Client>(ctx: *const c_void, kind: i32, a: f64, b: f64) -> f64 {
        with::<C, _>(ctx, f64::NAN, |c| c.draw(kind, a as i64, b as i64) as f64)
    }

    /// sysbench.rand.string: fills `len` bytes at `out` from the format at `fmt` (the
    /// prelude's own buffer, at least `len` long).
    pub extern "C" fn rand_string<C: Client>(
        ctx: *const c_void,
        fmt: *const u8,
        len: usize,
        out: *mut u8,
    ) -> i32 {
        with::<C, _>(ctx, -1, |c| {
            // SAFETY: the prelude passes a Lua string and a buffer of at least `len` bytes.
            let (fmt, out) = unsafe {
                (
                    std::slice::from_raw_parts(fmt, len),
                    std::slice::from_raw_parts_mut(out, len),
                )
            };
            c.rand_text.fill(&mut c.rng, fmt, out);
            0
        })
    }

    /// The addresses the prelude casts to its FFI function types.
    pub fn addresses<C: Client>() -> [(&'static str, usize); 6] {
        [
            ("rand_string", rand_string::<C> as *const () as usize),
            ("bind_num", bind_num::<C> as *const () as usize),
            ("bind_str", bind_str::<C> as *const () as usize),
            ("bind_null", bind_null::<C> as *const () as usize),
            ("execute", execute::<C> as *const () as usize),
            ("rand", rand::<C> as *const () as usize),
        ]
    }
}

/// What `raw.execute` returns to the prelude: the failure's errno, state, message and
/// class, or four nils and the rows of a statement that returned rows (None otherwise).
fn executed<C: Client>(lua: &Lua, c: &Shared<C>, r: Failed) -> mlua::Result<mlua::MultiValue> {
    match r {
        None => (
            Value::Nil,
            Value::Nil,
            Value::Nil,
            Value::Nil,
            c.borrow().last_rows,
        )
            .into_lua_multi(lua),
        Some((errno, state, msg, class)) => (errno, state, msg, class).into_lua_multi(lua),
    }
}

/// Puts the raw functions of a worker's state into `raw`.
fn register<C: Client + 'static>(lua: &Lua, raw: &Table, ctx: &Shared<C>) -> mlua::Result<()> {
    let c = ctx.clone();
    raw.set(
        "connect",
        lua.create_function(move |_, ()| {
            let mut g = c.borrow_mut();
            match g.connect_now() {
                Ok(mut conn) => {
                    g.record_facts(&mut conn);
                    g.conns.push(ConnSlot {
                        conn: Some(conn),
                        generation: 0,
                    });
                    Ok((Some(g.conns.len() - 1), 0, String::new(), String::new()))
                }
                Err(e) => {
                    if let SqlError::UnsupportedAuth(p) = &e {
                        g.unsupported =
                            Some(format!("the server wants the authentication plugin '{p}'"));
                    }
                    let (errno, state) = lost_error(&e);
                    Ok((None, errno, state, e.to_string()))
                }
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "disconnect",
        lua.create_function(move |_, h: usize| {
            let mut g = c.borrow_mut();
            if let Some(slot) = g.conns.get_mut(h)
                && let Some(conn) = slot.conn.take()
            {
                conn.quit();
            }
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "reconnect",
        lua.create_function(move |_, h: usize| {
            let mut g = c.borrow_mut();
            if let Some(slot) = g.conns.get_mut(h)
                && let Some(conn) = slot.conn.take()
            {
                conn.quit();
            }
            match g.connect_now() {
                Ok(conn) => {
                    g.tally.reconnects += 1;
                    let slot = g.conn(h)?;
                    slot.conn = Some(conn);
                    slot.generation += 1;
                    Ok((true, 0, String::new(), String::new()))
                }
                Err(e) => {
                    let (errno, state) = lost_error(&e);
                    Ok((false, errno, state, e.to_string()))
                }
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "query",
        lua.create_function(move |lua, (h, sql): (usize, mlua::LuaString)| {
            let sql = sql.to_str()?.to_string();
            let mut guard = c.borrow_mut();
            let g = &mut *guard;
            let class = classify(&sql);
            let Some(conn) = g.live(h)? else {
                let (errno, state, msg, class) = gone();
                return (false, errno, state, msg, class).into_lua_multi(lua);
            };
            // Rows only for statements that return them: the rest skip building tables.
            // Counted as sysbench counts it: by the reply, and only when it succeeded.
            let r = if class == Class::Read {
                conn.query_rows_upto(&sql, usize::MAX)
                    .map(|rows| (Class::Read, Some(rows)))
            } else {
                conn.query(&sql).map(|reply| match reply {
                    Reply::Rows(_) => (Class::Read, Some(Vec::new())),
                    Reply::Ok { .. } => (counted_as(&reply), None),
                })
            };
            let r = r.map(|(counted, rows)| {
                g.count(counted);
                rows
            });
            match r {
                Ok(None) => true.into_lua_multi(lua),
                Ok(Some(rows)) => {
                    let nfields = rows.first().map_or(0, Vec::len);
                    let t = lua.create_table_with_capacity(rows.len(), 0)?;
                    for (i, row) in rows.into_iter().enumerate() {
                        let r = lua.create_table_with_capacity(row.len(), 0)?;
                        for (j, col) in row.into_iter().enumerate() {
                            if let Some(v) = col {
                                r.raw_set(j + 1, v)?;
                            }
                        }
                        t.raw_set(i + 1, r)?;
                    }
                    (t, nfields).into_lua_multi(lua)
                }
                Err(e) => {
                    let (errno, state, msg, class) = g.failure(h, e);
                    (false, errno, state, msg, class).into_lua_multi(lua)
                }
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "prepare",
        lua.create_function(move |lua, (h, sql): (usize, String)| {
            let mut guard = c.borrow_mut();
            let g = &mut *guard;
            let text = !g.cfg.db.prepared;
            let generation = g.conn(h)?.generation;
            let mut stmt = None;
            let mut as_text = text;
            if !text {
                let Some(conn) = g.live(h)? else {
                    let (errno, state, msg, class) = gone();
                    return (Value::Nil, errno, state, msg, class).into_lua_multi(lua);
                };
                match conn.prepare(&sql) {
                    Ok(s) => stmt = Some(s),
                    // This server (or proxy) cannot prepare it: sysbench emulates.
                    Err(e) if e.code() == Some(1295) => as_text = true,
                    Err(e) => {
                        let (errno, state, msg, class) = g.failure(h, e);
                        return (Value::Nil, errno, state, msg, class).into_lua_multi(lua);
                    }
                }
            }
            g.stmts.push(Some(StmtSlot {
                conn: h,
                sql,
                stmt,
                generation,
                text: as_text,
                binds: Vec::new(),
            }));
            (g.stmts.len() - 1).into_lua_multi(lua)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "execute",
        lua.create_function(
            move |lua, (h, n, a, b, d, e): (usize, usize, Value, Value, Value, Value)| {
                let wanted = n.min(4);
                let vals = [a, b, d, e];
                let r = execute(&c, h, &vals[..wanted])?;
                executed(lua, &c, r)
            },
        )?,
    )?;
    let c = ctx.clone();
    raw.set(
        "execute_list",
        lua.create_function(move |lua, (h, t, n): (usize, Table, usize)| {
            let vals: Vec<Value> = (1..=n)
                .map(|i| t.raw_get(i).unwrap_or(Value::Nil))
                .collect();
            let r = execute(&c, h, &vals)?;
            executed(lua, &c, r)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "close",
        lua.create_function(move |_, h: usize| {
            if let Some(s) = c.borrow_mut().stmts.get_mut(h) {
                *s = None;
            }
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "ignored",
        lua.create_function(
            move |_, (errno, _class, state): (u32, String, Option<String>)| {
                let mut g = c.borrow_mut();
                g.tally.ignored_errors += 1;
                // PostgreSQL's errors come with errno 0: count them by their SQLSTATE.
                let code = match (errno, state.as_deref()) {
                    (0, Some(s)) => fleetbench_model::sqlstate::encode(s).unwrap_or(0),
                    _ => errno,
                };
                *g.tally.errors_by_code.entry(code).or_default() += 1;
                Ok(())
            },
        )?,
    )?;
    let c = ctx.clone();
    raw.set(
        "counter",
        lua.create_function(move |_, kind: i64| {
            let mut g = c.borrow_mut();
            match kind {
                0 => g.tally.others += 1,
                1 => g.tally.reads += 1,
                2 => g.tally.writes += 1,
                // SB_CNT_TRX: one more event, as sysbench counts it (not timed).
                3 => g.trx += 1,
                4 => g.tally.ignored_errors += 1,
                5 => g.tally.reconnects += 1,
                _ => {}
            }
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "stopped",
        lua.create_function(move |_, ()| Ok(c.borrow().control.is_stopped()))?,
    )?;
    let c = ctx.clone();
    raw.set(
        "usleep",
        lua.create_function(move |_, us: f64| {
            let control = c.borrow().control.clone();
            let until = Instant::now() + Duration::from_micros(us.max(0.0) as u64);
            // In slices, so that the run's end does not wait for a long sleep.
            loop {
                let now = Instant::now();
                if now >= until || control.is_stopped() {
                    return Ok(());
                }
                std::thread::sleep((until - now).min(Duration::from_millis(10)));
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "last_error",
        lua.create_function(move |lua, ()| match c.borrow_mut().last_failure.take() {
            Some((errno, state, msg, class)) => (errno, state, msg, class).into_lua_multi(lua),
            None => (2013, "HY000", "unknown error", "fatal").into_lua_multi(lua),
        })?,
    )?;
    // The hot path's functions for LuaJIT's FFI: addresses as numbers (exact below 2^53).
    let addrs = lua.create_table()?;
    addrs.set("ctx", Rc::as_ptr(ctx) as usize as f64)?;
    for (name, addr) in ffi_calls::addresses::<C>() {
        addrs.set(name, addr as f64)?;
    }
    raw.set("ffi", addrs)?;
    register_rand(lua, raw, ctx)
}

/// sysbench.rand's functions on this thread's generator.
fn register_rand<C: Client + 'static>(lua: &Lua, raw: &Table, ctx: &Shared<C>) -> mlua::Result<()> {
    for (kind, name) in RAND_NAMES.iter().enumerate() {
        let c = ctx.clone();
        raw.set(
            *name,
            lua.create_function(move |_, (a, b): (i64, i64)| {
                Ok(c.borrow_mut().draw(kind as i32, a, b))
            })?,
        )?;
    }
    let c = ctx.clone();
    raw.set(
        "rand_unique",
        lua.create_function(move |_, ()| {
            let mut g = c.borrow_mut();
            let v = g.unique.wrapping_mul(g.total_threads).wrapping_add(g.tid);
            g.unique += 1;
            Ok(v & 0xffff_ffff)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "rand_uint64",
        lua.create_function(move |_, ()| Ok(c.borrow_mut().rng.next_u64() as f64))?,
    )?;
    let c = ctx.clone();
    raw.set(
        "rand_double",
        lua.create_function(move |_, ()| Ok(c.borrow_mut().rng.unit_f64()))?,
    )?;
    let c = ctx.clone();
    raw.set(
        "rand_string",
        lua.create_function(move |lua, fmt: mlua::LuaString| {
            let fmt = fmt.as_bytes();
            let mut out = vec![0u8; fmt.len()];
            let mut guard = c.borrow_mut();
            let g = &mut *guard;
            g.rand_text.fill(&mut g.rng, &fmt, &mut out);
            lua.create_string(&out)
        })?,
    )?;
    Ok(())
}

use mlua::IntoLuaMulti;

/// What a worker runs per event: the script's `event`, its own loop `thread_run` up to
/// the end of its next event, or a command's function once.
enum Body {
    Event(Function),
    ThreadRun(Function),
    Once(Option<Function>),
}

/// A worker thread's script: its state, its functions and its counts.
pub struct ScriptWorker<C: Client + 'static> {
    lua: Lua,
    ctx: Shared<C>,
    body: Body,
    tid: u64,
    /// The event's counts as the runner reads them ([`WorkerLoop::db`]).
    tally: DbCounters,
    targets: Vec<DbCounters>,
    several_targets: bool,
    muted: bool,
}

/// What opening a worker needs.
pub struct Opening {
    pub cfg: Arc<ScriptConfig>,
    pub tid: u64,
    pub total_threads: u64,
    pub seed: u64,
    pub sockets: Arc<Sockets>,
    pub tail: Arc<Mutex<WorkerTail>>,
    pub control: Arc<Control>,
    pub gate: Arc<ConnectGate>,
    pub output: Arc<Output>,
}

fn script_failed(e: fleetbench_script::ScriptError) -> LeanOpenError {
    OpenError::Setting(format!("script error: {}", e.message)).into()
}

impl<C: Client + 'static> ScriptWorker<C> {
    /// Makes the thread's state (the script's body runs in it), then calls
    /// `thread_init` for a run; a command's function waits for the first event.
    pub fn open(o: Opening) -> Result<Self, LeanOpenError> {
        let cfg = o.cfg;
        let n = cfg.targets.len().max(1);
        let target_index = (o.tid as usize) % n;
        let target = cfg.targets[target_index]
            .for_thread(o.tid)
            .unwrap_or_else(|| cfg.targets[target_index].clone());
        let ctx: Shared<C> = Rc::new(RefCell::new(Ctx {
            cfg: cfg.clone(),
            target: target.clone(),
            target_index,
            sockets: o.sockets,
            gate: Some(o.gate),
            tail: o.tail,
            control: o.control,
            conns: Vec::new(),
            stmts: Vec::new(),
            tally: DbCounters::default(),
            trx: 0,
            rng: Rng::new(o.seed ^ o.tid.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            pickers: Pickers { cached: Vec::new() },
            unique: 0,
            tid: o.tid,
            total_threads: o.total_threads.max(1),
            unsupported: None,
            sql: String::new(),
            dists: distributions(&cfg.distribution),
            rand_text: RandText::default(),
            last_failure: None,
            last_rows: None,
        }));
        let output = o.output;
        let env = StateEnv {
            files: &cfg.files,
            command: &cfg.command,
            tid: o.tid as u32,
            opt: &cfg.opt,
            output: Rc::new(move |s: &str| output.push(s)),
            driver: cfg.targets.first().map_or("mysql", |t| t.driver.name()),
            fast_calls: true,
            argv: &cfg.argv,
        };
        let lua =
            state::new_state(&env, |lua, raw| register(lua, raw, &ctx)).map_err(script_failed)?;
        let unsupported = |ctx: &Shared<C>| ctx.borrow_mut().unsupported.take();
        if let Err(e) = state::run_script(&lua, &cfg.files) {
            return Err(match unsupported(&ctx) {
                Some(u) => LeanOpenError::Unsupported(u),
                None => script_failed(e),
            });
        }
        let body = if cfg.command == "run" {
            let event = state::function(&lua, "event").ok_or_else(|| {
                script_failed(fleetbench_script::ScriptError::new(format!(
                    "{} defines no event function: it cannot run",
                    cfg.files.main
                )))
            })?;
            if let Some(init) = state::function(&lua, "thread_init") {
                let r: Result<(), _> = state::call(&lua, &init, o.tid);
                if let Err(e) = r {
                    return Err(match unsupported(&ctx) {
                        Some(u) => LeanOpenError::Unsupported(u),
                        None => match ctx.borrow().conns.is_empty() {
                            // A connection that could not open says so as the run's
                            // connections do (the target, the server's reason).
                            true if e.message.contains("connection failed") => OpenError::Connect {
                                target: target.describe(),
                                message: e
                                    .message
                                    .split("connection failed: ")
                                    .nth(1)
                                    .unwrap_or(&e.message)
                                    .to_string(),
                            }
                            .into(),
                            _ => script_failed(e),
                        },
                    });
                }
            }
            // sysbench wants `event` even then, and so does this.
            match state::function(&lua, "thread_run") {
                Some(own_loop) => Body::ThreadRun(own_loop),
                None => Body::Event(event),
            }
        } else {
            Body::Once(Some(
                state::command_function(&lua, &cfg.command).ok_or_else(|| {
                    script_failed(fleetbench_script::ScriptError::new(format!(
                        "{} does not define the command '{}'",
                        cfg.files.main, cfg.command
                    )))
                })?,
            ))
        };
        // Reconnects later go straight to the server.
        ctx.borrow_mut().gate = None;
        // What loading the script left behind (its source, the parse) goes now, not at
        // the collector's leisure: a thousand threads each hold a state.
        let _ = lua.gc_collect();
        // Each call of the body is one event, through the prelude's runner (its error
        // handling) bound to the function and the thread's id.
        let bind = |f: Function, runner: &str| -> Result<Function, LeanOpenError> {
            let runner: Function = lua
                .globals()
                .get(runner)
                .map_err(|e| script_failed(fleetbench_script::ScriptError::from_lua(&e)))?;
            runner
                .call::<Function>((f, o.tid))
                .map_err(|e| script_failed(fleetbench_script::ScriptError::from_lua(&e)))
        };
        let body = match body {
            Body::Event(f) => Body::Event(bind(f, "__fb_runner")?),
            Body::ThreadRun(f) => Body::ThreadRun(bind(f, "__fb_thread_runner")?),
            Body::Once(Some(f)) => Body::Once(Some(bind(f, "__fb_runner")?)),
            Body::Once(None) => Body::Once(None),
        };
        let targets = vec![DbCounters::default(); cfg.targets.len()];
        Ok(ScriptWorker {
            lua,
            several_targets: cfg.targets.len() > 1,
            ctx,
            body,
            tid: o.tid,
            tally: DbCounters::default(),
            targets,
            muted: false,
        })
    }

    /// Lets a script's own loop end (its `sb_more_events` says no now), calls
    /// `thread_done` (a run) and closes the script's connections.
    pub fn close(self) {
        if let Body::ThreadRun(run) = &self.body {
            let r: Result<Option<bool>, _> = run.call(false);
            if let Err(e) = r {
                let e = fleetbench_script::ScriptError::from_lua(&e);
                tracing::warn!(
                    "thread_run of thread {} at its end: {}",
                    self.tid,
                    e.message
                );
            }
        }
        if matches!(self.body, Body::Event(_) | Body::ThreadRun(_))
            && let Some(done) = state::function(&self.lua, "thread_done")
        {
            let r: Result<(), _> = state::call(&self.lua, &done, self.tid);
            if let Err(e) = r {
                tracing::warn!("thread_done of thread {}: {}", self.tid, e.message);
            }
        }
        self.abandon();
    }

    /// Drops the connections without a goodbye (after an abort).
    pub fn abandon(self) {
        let mut g = self.ctx.borrow_mut();
        g.stmts.clear();
        for slot in g.conns.drain(..) {
            if let Some(c) = slot.conn {
                c.quit();
            }
        }
    }

    fn take_tally(&mut self) {
        let mut g = self.ctx.borrow_mut();
        if self.muted {
            g.tally.reset();
            return;
        }
        let t = g.target_index;
        if self.several_targets
            && let Some(tt) = self.targets.get_mut(t)
        {
            tt.merge(&g.tally);
        }
        // The runner took and reset the last event's counts (reset_db): this event's are
        // swapped in, not added.
        if self.tally.is_zero() {
            std::mem::swap(&mut self.tally, &mut g.tally);
        } else {
            self.tally.merge(&g.tally);
            g.tally.reset();
        }
    }
}

impl<C: Client + 'static> WorkerLoop for ScriptWorker<C> {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        if stop.load(Ordering::Relaxed) {
            return Step::Stopped;
        }
        let r = match &mut self.body {
            Body::Event(run) | Body::ThreadRun(run) => run.call::<Option<bool>>(()),
            Body::Once(slot) => match slot.take() {
                Some(run) => {
                    let r = run.call::<Option<bool>>(());
                    // Restarted: the command's function runs again.
                    if matches!(r, Ok(Some(false))) {
                        *slot = Some(run);
                    }
                    r
                }
                None => return Step::Stopped,
            },
        };
        self.take_tally();
        match r {
            Ok(None) => Step::Done,
            Ok(Some(true)) => Step::Stopped,
            Ok(Some(false)) => {
                if stop.load(Ordering::Relaxed) {
                    Step::Stopped
                } else {
                    Step::Again
                }
            }
            // The run was stopped under a statement: not the script's error.
            Err(_) if stop.load(Ordering::Relaxed) || self.ctx.borrow().sockets.is_cancelled() => {
                Step::Stopped
            }
            Err(e) => {
                let e = fleetbench_script::ScriptError::from_lua(&e);
                // The coordinator reports it; the agent's log keeps it too.
                tracing::info!("script error: {}", e.message);
                tracing::debug!("{}", e.traceback);
                Step::Fatal(format!("script error: {}", e.message))
            }
        }
    }

    fn db(&self) -> Option<EventDb<'_>> {
        Some(EventDb {
            all: &self.tally,
            targets: self.several_targets.then_some(&self.targets[..]),
        })
    }

    fn reset_db(&mut self) {
        self.tally.reset();
        for t in &mut self.targets {
            t.reset();
        }
    }

    fn extra_events(&mut self) -> u64 {
        let n = std::mem::take(&mut self.ctx.borrow_mut().trx);
        // The warm-up's count nothing, as the rest of what a muted worker counts.
        if self.muted { 0 } else { n }
    }

    fn set_warmup(&mut self, on: bool) {
        self.muted = on;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_count_by_their_reply_as_sysbench_counts_them() {
        assert_eq!(counted_as(&Reply::Rows(0)), Class::Read);
        assert_eq!(counted_as(&Reply::Rows(3)), Class::Read);
        assert_eq!(counted_as(&Reply::Ok { affected_rows: 1 }), Class::Write);
        // An UPDATE or DELETE that matched nothing, BEGIN, SET: other.
        assert_eq!(counted_as(&Reply::Ok { affected_rows: 0 }), Class::Other);
    }

    #[test]
    fn a_statements_text_says_whether_it_returns_rows() {
        assert_eq!(classify("SELECT c FROM t"), Class::Read);
        assert_eq!(classify("  (select 1)"), Class::Read);
        assert_eq!(classify("show tables"), Class::Read);
        assert_eq!(classify("INSERT INTO t VALUES (1)"), Class::Write);
        assert_eq!(classify("replace into t values (1)"), Class::Write);
        assert_eq!(classify("Update t set a=1"), Class::Write);
        assert_eq!(classify("DELETE FROM t"), Class::Write);
        assert_eq!(classify("BEGIN"), Class::Other);
        assert_eq!(classify("CREATE TABLE t (a int)"), Class::Other);
        assert_eq!(classify(""), Class::Other);
    }

    #[test]
    fn digits_and_letters_fill_their_places_and_others_stay() {
        let mut t = RandText::default();
        let mut rng = Rng::new(7);
        let fmt = b"##-@@@ x#@";
        let mut out = [0u8; 10];
        t.fill(&mut rng, fmt, &mut out);
        for (o, f) in out.iter().zip(fmt) {
            match f {
                b'#' => assert!(o.is_ascii_digit()),
                b'@' => assert!(o.is_ascii_lowercase()),
                _ => assert_eq!(o, f),
            }
        }
        // Every digit and letter comes up over many draws.
        let mut seen = [false; 36];
        for _ in 0..200 {
            let mut out = [0u8; 20];
            t.fill(&mut rng, b"##########@@@@@@@@@@", &mut out);
            for c in out {
                let i = if c.is_ascii_digit() {
                    usize::from(c - b'0')
                } else {
                    10 + usize::from(c - b'a')
                };
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&x| x), "{seen:?}");
        // And about equally often: 100,000 digits, each within 5 % of a tenth.
        let mut counts = [0u32; 10];
        let fmt = [b'#'; 1000];
        let mut out = [0u8; 1000];
        for _ in 0..100 {
            t.fill(&mut rng, &fmt, &mut out);
            for c in out {
                counts[usize::from(c - b'0')] += 1;
            }
        }
        assert!(
            counts.iter().all(|&n| (9_500..=10_500).contains(&n)),
            "{counts:?}"
        );
    }
}
