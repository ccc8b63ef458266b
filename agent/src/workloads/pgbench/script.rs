//! One pgbench client running scripts in pgbench's language (`-f` files, and the
//! built-in scripts written out when they run beside files or with `-C`): each event
//! draws a script by weight and interprets its commands in order over the client's own
//! variables, sending its SQL in the run's query mode, pipelines included. Errors are
//! handled as the native worker handles them (`super::worker`): serialization failures
//! and deadlocks are retried from the script's start with the same random draws, up to
//! `--max-tries`; any other error ends this client alone, with pgbench's message.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::pgbench::{PgbenchConfig, QueryMode};
use fleetbench_pgscript::expr::Env;
use fleetbench_pgscript::script::SleepFor;
use fleetbench_pgscript::{Command, EvalError, Expr, Program, SqlEnd, SqlText, Value, Vars};

use super::worker::{CommandSink, prepare_error, retriable};
use crate::rand::Rng;
use crate::sql::open_error::{LeanOpenError, gate_error};
use crate::sql::opening::ConnectGate;
use crate::sql::pgsql::script::{Capture, ScriptReply};
use crate::sql::pgsql::{PgConn, PgStmt};
use crate::sql::{Client, Param, Sockets, SqlError};
use crate::stats::{CommandTally, TxnEnd};
use crate::workloads::{Step, WorkerLoop};

/// The scripts of a run, parsed once per agent and shared by its clients, with each SQL
/// command's `$n` form and parameter names.
pub struct Scripts {
    pub programs: Vec<Program>,
    numbered: Vec<Vec<Option<(String, Vec<String>)>>>,
}

impl Scripts {
    /// Parses the run's scripts (the coordinator checked them already).
    pub fn parse(cfg: &PgbenchConfig) -> Result<Scripts, String> {
        let mut programs = Vec::new();
        for (s, _) in &cfg.scripts {
            programs.push(Program::parse(&s.text()).map_err(|e| format!("{}:{e}", s.title()))?);
        }
        let numbered = programs
            .iter()
            .map(|p| {
                p.commands
                    .iter()
                    .map(|c| match c {
                        Command::Sql { sql, .. } => Some((sql.numbered(), sql.params())),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        Ok(Scripts { programs, numbered })
    }
}

/// Why a try of a script stopped: the command and what went wrong.
enum Failure {
    Sql(usize, SqlError),
    Eval(usize, EvalError),
    /// The run's end came during a `\sleep`.
    Stopped,
}

pub struct ScriptWorker {
    cfg: Arc<PgbenchConfig>,
    scripts: Arc<Scripts>,
    /// None between transactions with `-C`.
    conn: Option<PgConn>,
    /// How the first connection was made and the server's version, kept for the run's
    /// record when `-C` closes it.
    first: (crate::sql::ConnInfo, String),
    sockets: Arc<Sockets>,
    /// `-M prepared`: each script's SQL commands, prepared on this connection.
    stmts: Vec<Vec<Option<PgStmt>>>,
    rng: Rng,
    vars: Vars,
    default_seed: i64,
    /// Scratch: a simple query's text, an extended one's parameters.
    sql: String,
    texts: Vec<String>,
    db: DbCounters,
    /// The last reply's transaction status (`T`: a transaction is open).
    status: u8,
    client: u64,
    total_weight: u64,
    commands: Vec<Vec<CommandTally>>,
    sink: Option<CommandSink>,
}

impl ScriptWorker {
    /// Connects (through `gate`), prepares the scripts' statements with `-M prepared`,
    /// and sets the client's variables: `-D`'s, then `client_id`, `default_seed`,
    /// `random_seed` and `scale` unless `-D` set them.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        cfg: Arc<PgbenchConfig>,
        scripts: Arc<Scripts>,
        client: u64,
        seed: u64,
        run_seed: u64,
        sockets: Arc<Sockets>,
        gate: &ConnectGate,
        sink: Option<CommandSink>,
    ) -> Result<Self, LeanOpenError> {
        let target = &cfg.target;
        let conn = gate
            .open(0, &sockets, || {
                PgConn::connect(target, Some(sockets.clone()))
            })
            .map_err(|e| gate_error(target, e))?;
        let mut vars = Vars::default();
        for (k, v) in &cfg.defines {
            vars.set(k, Value::Text(v.clone()));
        }
        let default_seed = fleetbench_pgscript::hash::murmur2(run_seed as i64, 0x5eed);
        vars.preset("client_id", Value::Int(client as i64));
        vars.preset("default_seed", Value::Int(default_seed));
        vars.preset("random_seed", Value::Int(run_seed as i64));
        vars.preset("scale", Value::Int(i64::from(cfg.scale)));
        let default_seed = vars
            .get("default_seed")
            .and_then(|v| v.int().ok().flatten())
            .unwrap_or(default_seed);
        let mut w = ScriptWorker {
            total_weight: cfg.total_weight(),
            commands: match &sink {
                Some(_) => scripts
                    .programs
                    .iter()
                    .map(|p| vec![CommandTally::default(); p.commands.len()])
                    .collect(),
                None => Vec::new(),
            },
            stmts: Vec::new(),
            first: (conn.info(), format!("PostgreSQL {}", conn.server_version())),
            conn: Some(conn),
            rng: Rng::new(seed),
            vars,
            default_seed,
            sql: String::with_capacity(256),
            texts: Vec::new(),
            db: DbCounters::default(),
            status: b'I',
            client,
            sink,
            sockets,
            scripts,
            cfg,
        };
        w.prepare().map_err(|e| prepare_error(&w.cfg, e))?;
        // -C: every transaction opens its own (the statements were checked on this one).
        if w.cfg.connect_each
            && let Some(c) = w.conn.take()
        {
            c.quit();
        }
        Ok(w)
    }

    /// `-M prepared`: every SQL command of every script, as a named statement of the
    /// connection.
    fn prepare(&mut self) -> Result<(), SqlError> {
        self.stmts.clear();
        if self.cfg.mode != QueryMode::Prepared {
            return Ok(());
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        for script in &self.scripts.numbered {
            let mut out = Vec::with_capacity(script.len());
            for c in script {
                out.push(match c {
                    Some((text, _)) => Some(conn.prepare_as_is(text)?),
                    None => None,
                });
            }
            self.stmts.push(out);
        }
        Ok(())
    }

    pub fn info(&self) -> crate::sql::ConnInfo {
        self.first.0.clone()
    }

    pub fn server_version(&self) -> String {
        self.first.1.clone()
    }

    /// Closes the connection (politely unless the run was aborted), leaving the
    /// per-command figures of `-r` with the run.
    pub fn close(self) {
        if let Some(sink) = &self.sink {
            let mut all = sink.lock().unwrap_or_else(|p| p.into_inner());
            crate::stats::merge_commands(&mut all.commands, &self.commands);
        }
        if let Some(conn) = self.conn {
            if self.sockets.is_cancelled() {
                drop(conn);
            } else {
                conn.quit();
            }
        }
    }

    /// `expr`'s value for this client now.
    fn eval(&mut self, expr: &Expr) -> Result<Value, EvalError> {
        expr.eval(&mut Env {
            vars: &self.vars,
            rng: &mut self.rng,
            default_seed: self.default_seed,
        })
    }

    /// Where a false `\if` or `\elif` at `target`'s block goes: the first branch whose
    /// condition holds (or the `\else`, or past the `\endif`).
    fn branch_from(&mut self, p: &Program, mut target: usize) -> Result<usize, Failure> {
        loop {
            match &p.commands[target] {
                Command::Elif { cond, next, .. } => {
                    let v = self.eval(cond).map_err(|e| Failure::Eval(target, e))?;
                    if v.truth().map_err(|e| Failure::Eval(target, e))? {
                        return Ok(target + 1);
                    }
                    target = *next;
                }
                _ => return Ok(target + 1),
            }
        }
    }

    /// `\sleep`: in slices, so that the run's end is not held up.
    fn sleep(
        &mut self,
        k: usize,
        amount: &SleepFor,
        unit_us: u64,
        stop: &AtomicBool,
    ) -> Result<(), Failure> {
        let n = match amount {
            SleepFor::Const(n) => *n,
            SleepFor::Var(v) => self
                .vars
                .lookup(v)
                .and_then(|x| x.int()?.ok_or_else(|| EvalError::new("\\sleep: NULL")))
                .map_err(|e| Failure::Eval(k, e))?,
        };
        let end = Instant::now() + Duration::from_micros((n.max(0) as u64).saturating_mul(unit_us));
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Failure::Stopped);
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            crate::coop::sleep_until(end.min(now + Duration::from_millis(100)));
        }
    }

    /// An SQL command: sent in the run's query mode (only sent, inside a pipeline), its
    /// statements counted and what `\gset`/`\aset` keep set as variables.
    fn run_sql(
        &mut self,
        i: usize,
        k: usize,
        sql: &SqlText,
        end: &SqlEnd,
        piped: bool,
    ) -> Result<(), Failure> {
        let (cap, prefix) = match end {
            SqlEnd::Plain => (Capture::Nothing, ""),
            SqlEnd::Gset(p) => (Capture::OneRow, p.as_str()),
            SqlEnd::Aset(p) => (Capture::LastRows, p.as_str()),
        };
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| Failure::Sql(k, SqlError::Protocol("no connection".into())))?;
        let reply = if self.cfg.mode == QueryMode::Simple {
            sql.render(&self.vars, &mut self.sql);
            Some(conn.script_simple(&self.sql, cap))
        } else {
            let Some((text, names)) = &self.scripts.numbered[i][k] else {
                return Ok(());
            };
            self.texts.clear();
            let mut kinds = Vec::with_capacity(names.len());
            for n in names {
                let v = self.vars.lookup(n).map_err(|e| Failure::Eval(k, e))?;
                kinds.push(match v {
                    Value::Null => None,
                    v => {
                        self.texts.push(v.to_string());
                        Some(self.texts.len() - 1)
                    }
                });
            }
            let params: Vec<Param> = kinds
                .iter()
                .map(|t| t.map_or(Param::Null, |t| Param::Str(self.texts[t].as_bytes())))
                .collect();
            let stmt = self.stmts.get(i).and_then(|s| s[k].as_ref());
            conn.script_extended(stmt, text, &params, cap, !piped)
                .transpose()
        };
        match reply {
            None => Ok(()),
            Some(Ok(r)) => {
                self.take(r, prefix);
                Ok(())
            }
            Some(Err(e)) => Err(Failure::Sql(k, e)),
        }
    }

    /// Counts a reply's statements and sets its kept columns as variables.
    fn take(&mut self, r: ScriptReply, prefix: &str) {
        self.db.reads += r.reads;
        self.db.writes += r.writes;
        self.db.others += r.others;
        self.status = r.status;
        for (name, v) in r.assigns {
            let v = v.map_or(Value::Null, Value::Text);
            if prefix.is_empty() {
                self.vars.set(&name, v);
            } else {
                self.vars.set(&format!("{prefix}{name}"), v);
            }
        }
    }
}

impl ScriptWorker {
    /// One try of script `i`, command by command; with `-r` each command timed.
    fn attempt(&mut self, i: usize, stop: &AtomicBool) -> Result<(), Failure> {
        let scripts = self.scripts.clone();
        let p = &scripts.programs[i];
        let timing = !self.commands.is_empty();
        let mut t = Instant::now();
        let mut piped = false;
        let mut pc = 0;
        while pc < p.commands.len() {
            let next = match &p.commands[pc] {
                Command::Set { var, expr } => {
                    let v = self.eval(expr).map_err(|e| Failure::Eval(pc, e))?;
                    self.vars.set(var, v);
                    pc + 1
                }
                Command::Sleep { amount, unit_us } => {
                    self.sleep(pc, amount, *unit_us, stop)?;
                    pc + 1
                }
                Command::If { cond, next } => {
                    let v = self.eval(cond).map_err(|e| Failure::Eval(pc, e))?;
                    if v.truth().map_err(|e| Failure::Eval(pc, e))? {
                        pc + 1
                    } else {
                        self.branch_from(p, *next)?
                    }
                }
                // Run off the end of a branch taken: past the block.
                Command::Elif { end, .. } | Command::Else { end } => *end + 1,
                Command::Endif => pc + 1,
                Command::StartPipeline => {
                    piped = true;
                    pc + 1
                }
                Command::EndPipeline => {
                    piped = false;
                    let conn = self.conn.as_mut().ok_or(Failure::Stopped)?;
                    let r = conn.script_sync().map_err(|e| Failure::Sql(pc, e))?;
                    self.take(r, "");
                    pc + 1
                }
                Command::Sql { sql, end } => {
                    self.run_sql(i, pc, sql, end, piped)?;
                    pc + 1
                }
            };
            if timing {
                let now = Instant::now();
                self.commands[i][pc].done(now.duration_since(t).as_nanos() as u64);
                t = now;
            }
            pc = next;
        }
        Ok(())
    }

    /// `-C`: the connection of the transaction about to start (a new one, prepared
    /// again), or the end of the last one's.
    fn reconnect(&mut self) -> Result<(), SqlError> {
        if self.conn.is_none() {
            let t0 = Instant::now();
            self.conn = Some(PgConn::connect(
                &self.cfg.target,
                Some(self.sockets.clone()),
            )?);
            self.db.reconnects += 1;
            self.db.connect_ns += t0.elapsed().as_nanos() as u64;
            self.prepare()?;
        }
        Ok(())
    }

    /// pgbench's line for a client that cannot go on.
    fn abort_message(&self, i: usize, k: usize, what: &str) -> String {
        format!(
            "client {} script {i} aborted in command {k} query 0: {what}",
            self.client
        )
    }

    fn pick(&mut self) -> usize {
        if self.scripts.programs.len() == 1 {
            0
        } else {
            self.cfg.pick(self.rng.uniform(0, self.total_weight - 1))
        }
    }
}

/// How pgbench words a server's error.
fn sql_text(e: &SqlError) -> String {
    match e {
        SqlError::Server { message, .. } => format!("ERROR:  {message}"),
        other => other.to_string(),
    }
}

impl WorkerLoop for ScriptWorker {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        let i = self.pick();
        if let Err(e) = self.reconnect() {
            if stop.load(Ordering::Relaxed) {
                return Step::Stopped;
            }
            return Step::Quit(format!(
                "client {} aborted while establishing connection: {e}",
                self.client
            ));
        }
        let mut end = TxnEnd {
            kind: i,
            ..TxnEnd::default()
        };
        // A retry draws the same values: the generator starts where this try did.
        let start = self.rng.clone();
        let mut tries = 1;
        loop {
            let failure = match self.attempt(i, stop) {
                Ok(()) => break,
                Err(f) => f,
            };
            let stopped = stop.load(Ordering::Relaxed);
            match failure {
                Failure::Stopped => return Step::Stopped,
                Failure::Eval(k, e) => return Step::Quit(self.abort_message(i, k, &e.0)),
                Failure::Sql(k, e) => match e.code() {
                    Some(code) if retriable(code) => {
                        if tries < self.cfg.max_tries && !stopped {
                            tries += 1;
                            end.retried += 1;
                            if let Some(c) = self.commands.get_mut(i) {
                                c[k].retries += 1;
                            }
                            self.rng = start.clone();
                            continue;
                        }
                        self.db.count_ignored(code);
                        end.failed = true;
                        if let Some(c) = self.commands.get_mut(i) {
                            c[k].failures += 1;
                        }
                        break;
                    }
                    _ if stopped => return Step::Stopped,
                    _ => return Step::Quit(self.abort_message(i, k, &sql_text(&e))),
                },
            }
        }
        if self.status == b'T' {
            let k = self.scripts.programs[i].commands.len();
            return Step::Quit(self.abort_message(
                i,
                k,
                "end of script reached without completing the last transaction block",
            ));
        }
        if self.cfg.connect_each
            && let Some(c) = self.conn.take()
        {
            c.quit();
        }
        end.db = std::mem::take(&mut self.db);
        Step::Txn(end)
    }

    fn skip(&mut self) -> Option<usize> {
        Some(self.pick())
    }
}

impl fleetbench_pgscript::Random for Rng {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        Rng::next_u64(self)
    }
}
