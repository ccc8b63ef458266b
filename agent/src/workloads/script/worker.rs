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

use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::workloads::script::ScriptConfig;
use fleetbench_model::workloads::server::Target;
use fleetbench_script::state::{self, StateEnv};
use mlua::{Function, Lua};

pub use super::output::Output;
use crate::rand::Rng;
use crate::runner::Control;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::sql::{Client, Sockets};
use crate::stats::WorkerTail;
use crate::workloads::{EventDb, Step, WorkerLoop};

use super::ctx::*;
use super::raw;

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
        let lua = state::new_state(&env, |lua, raw| raw::register(lua, raw, &ctx))
            .map_err(script_failed)?;
        let unsupported = |ctx: &Shared<C>| ctx.borrow_mut().unsupported.take();
        if let Err(e) = state::run_script(&lua, &cfg.files) {
            return Err(match unsupported(&ctx) {
                Some(u) => LeanOpenError::Unsupported(u),
                None => script_failed(e),
            });
        }
        let body = Self::body(&lua, &cfg, o.tid, &ctx, &target)?;
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

    /// What the worker runs per event: for a run, `event` (or the script's own
    /// `thread_run`) after `thread_init`; for a command, its function once.
    fn body(
        lua: &Lua,
        cfg: &ScriptConfig,
        tid: u64,
        ctx: &Shared<C>,
        target: &Target,
    ) -> Result<Body, LeanOpenError> {
        let unsupported = |ctx: &Shared<C>| ctx.borrow_mut().unsupported.take();
        Ok(if cfg.command == "run" {
            let event = state::function(lua, "event").ok_or_else(|| {
                script_failed(fleetbench_script::ScriptError::new(format!(
                    "{} defines no event function: it cannot run",
                    cfg.files.main
                )))
            })?;
            if let Some(init) = state::function(lua, "thread_init") {
                let r: Result<(), _> = state::call(lua, &init, tid);
                if let Err(e) = r {
                    return Err(match unsupported(ctx) {
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
            match state::function(lua, "thread_run") {
                Some(own_loop) => Body::ThreadRun(own_loop),
                None => Body::Event(event),
            }
        } else {
            Body::Once(Some(
                state::command_function(lua, &cfg.command).ok_or_else(|| {
                    script_failed(fleetbench_script::ScriptError::new(format!(
                        "{} does not define the command '{}'",
                        cfg.files.main, cfg.command
                    )))
                })?,
            ))
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
            // The run was cancelled under a statement (its socket shut): not the script's
            // error. One that ends after the run's time is the script's all the same.
            Err(_) if self.ctx.borrow().sockets.is_cancelled() => Step::Stopped,
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
