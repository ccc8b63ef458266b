//! A script worker's context: what the raw functions of its Lua state share (its
//! connections and statements, generators, counts), and how statements are classed and
//! counted as sysbench counts them.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fleetbench_model::counters::DbCounters;
use fleetbench_model::rand::Distribution;
use fleetbench_model::workloads::script::ScriptConfig;
use fleetbench_model::workloads::server::Target;

use crate::rand::{Picker, Rng};
use crate::runner::Control;
use crate::sql::opening::{ConnectGate, GateError};
use crate::sql::{Client, ErrorClass, Reply, Sockets, SqlError};
use crate::stats::WorkerTail;

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
pub(super) struct ConnSlot<C> {
    pub(super) conn: Option<C>,
    /// Bumped by every reconnect: statements prepared before it are prepared again.
    pub(super) generation: u64,
}

/// A statement a script prepared.
pub(super) struct StmtSlot<C: Client> {
    pub(super) conn: usize,
    pub(super) sql: String,
    /// The server's statement, prepared on connection generation `generation`; None when
    /// it runs as text (`--db-ps-mode=disable`, or a server that cannot prepare it).
    pub(super) stmt: Option<C::Stmt>,
    pub(super) generation: u64,
    pub(super) text: bool,
    /// The values bound through the FFI calls.
    pub(super) binds: Vec<BindVal>,
}

/// Random-number pickers by (distribution, range), the last few kept: scripts draw from
/// a handful of ranges over and over.
pub(super) struct Pickers {
    pub(super) cached: Vec<((u8, i64, i64), Picker)>,
}

impl Pickers {
    pub(super) fn pick(
        &mut self,
        rng: &mut Rng,
        dist: &Distribution,
        key: u8,
        a: i64,
        b: i64,
    ) -> i64 {
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
pub(super) const RAND_NAMES: [&str; 6] = [
    "rand_uniform",
    "rand_default",
    "rand_gaussian",
    "rand_special",
    "rand_pareto",
    "rand_zipfian",
];

/// Each kind's distribution: the run's own parameters where it uses that distribution
/// (--rand-type's), sysbench's defaults for the others; `default` is the run's.
pub(super) fn distributions(run: &Distribution) -> [(u8, Distribution); 6] {
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
    pub(super) digits: u64,
    pub(super) digits_left: u32,
    pub(super) letters: u64,
    pub(super) letters_left: u32,
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
    pub(super) cfg: Arc<ScriptConfig>,
    /// This thread's target (thread id mod targets), its index.
    pub(super) target: Target,
    pub(super) target_index: usize,
    pub(super) sockets: Arc<Sockets>,
    /// While the run opens: connects go through the agent's gate (bounded, retried).
    pub(super) gate: Option<Arc<ConnectGate>>,
    pub(super) tail: Arc<Mutex<WorkerTail>>,
    pub(super) control: Arc<Control>,
    pub(super) conns: Vec<ConnSlot<C>>,
    pub(super) stmts: Vec<Option<StmtSlot<C>>>,
    /// The event's counts.
    pub tally: DbCounters,
    /// `sb_counter_inc(tid, SB_CNT_TRX)` calls not yet handed to the runner
    /// ([`crate::workloads::WorkerLoop::extra_events`]): events beyond the ones run.
    pub(super) trx: u64,
    pub(super) rng: Rng,
    pub(super) pickers: Pickers,
    /// `sysbench.rand.unique()`: this thread's next, unique over the run's threads.
    pub(super) unique: u64,
    pub(super) tid: u64,
    pub(super) total_threads: u64,
    /// A login the lean client does not speak: the run falls back to mysql_async.
    pub unsupported: Option<String>,
    pub(super) sql: String,
    /// The distribution of each sysbench.rand kind.
    pub(super) dists: [(u8, Distribution); 6],
    /// sysbench.rand.string's digits and letters, many from one draw.
    pub(super) rand_text: RandText,
    /// The last failed statement of the FFI path, for `raw.last_error`.
    pub(super) last_failure: Failed,
    /// The rows the last executed prepared statement returned (None: it returns none),
    /// for the result set `stmt:execute()` gives.
    pub(super) last_rows: Option<u64>,
}

/// A failed statement's `sql_errno` and `sql_state` as sysbench's drivers give them:
/// MySQL's code and HY000; PostgreSQL's SQLSTATE with errno 0.
pub(super) fn lost_error(e: &SqlError) -> (u32, String) {
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
    pub(super) fn draw(&mut self, kind: i32, a: i64, b: i64) -> i64 {
        let (key, dist) = match self.dists.get(kind as usize) {
            Some((k, d)) => (*k, d),
            None => (0, &Distribution::Uniform),
        };
        self.pickers.pick(&mut self.rng, dist, key, a, b)
    }

    pub(super) fn connect_now(&mut self) -> Result<C, SqlError> {
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
    pub(super) fn record_facts(&self, conn: &mut C) {
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

    pub(super) fn conn(&mut self, h: usize) -> Result<&mut ConnSlot<C>, mlua::Error> {
        self.conns
            .get_mut(h)
            .ok_or_else(|| mlua::Error::runtime("the connection was closed"))
    }

    /// Reopens a lost connection once: counted as a reconnect, or as a failed one (then
    /// a pause, so that a dead server is not hammered; the next statement tries again).
    pub(super) fn reopen(&mut self, h: usize) {
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
    pub(super) fn failure(&mut self, h: usize, e: SqlError) -> (u32, String, String, &'static str) {
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

    pub(super) fn count(&mut self, class: Class) {
        match class {
            Class::Read => self.tally.reads += 1,
            Class::Write => self.tally.writes += 1,
            Class::Other => self.tally.others += 1,
        }
    }

    /// A live connection `h`, reopening it first if it was lost.
    pub(super) fn live(&mut self, h: usize) -> Result<Option<&mut C>, mlua::Error> {
        if self.conn(h)?.conn.is_none() && !self.control.is_stopped() {
            self.reopen(h);
        }
        Ok(self.conn(h)?.conn.as_mut())
    }
}

/// A state's context, shared by its raw functions.
pub(super) type Shared<C> = Rc<RefCell<Ctx<C>>>;

/// A failure as the raw functions return it (nothing on success).
pub(super) type Failed = Option<(u32, String, String, &'static str)>;

/// A bound value of a statement, as `p:set()` left it (the FFI path keeps them here).
#[derive(Debug, Default)]
pub enum BindVal {
    #[default]
    Null,
    Int(i64),
    Text(Vec<u8>),
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
