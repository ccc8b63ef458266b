//! sysbench Lua scripts on an agent: `init` once in a state of the agent's own, then one
//! worker per thread ([`worker::ScriptWorker`]), each with its own state and connections,
//! then `done` in the first state. The script and its modules come in the Start message;
//! nothing is read from this host's disk. Agents run scripts only when their operator
//! allows it (`--allow-scripts`).

mod ctx;
pub mod memory;
mod output;
mod raw;
pub mod worker;

use std::rc::Rc;
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;

use fleetbench_model::workloads::script::ScriptConfig;
use fleetbench_model::workloads::server::Driver;
use fleetbench_script::state::{self, StateEnv};

use crate::runner::{
    Control, OpenProgress, PreparedRun, RunConfig, STUCK_GRACE, Workers, until_stuck,
};
use crate::sql::Client;
use crate::sql::choose::{ForClient, open_with};
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::stats::WorkerTail;
use crate::workloads::{OpenFuture, Opened, Share, ThreadWorkload, Workload};
pub use output::Output;
use worker::{Opening, ScriptWorker};

/// A script run on this agent, as a Start message plans it.
pub struct ScriptRun {
    cfg: Arc<ScriptConfig>,
    share: Share,
    /// Where the states' output gathers until it is sent.
    output: Arc<Output>,
}

/// A script run: its states and connections are made when it opens.
pub fn plan(cfg: Box<ScriptConfig>, share: &Share) -> Box<dyn Workload> {
    Box::new(ScriptRun {
        cfg: Arc::new(*cfg),
        share: *share,
        output: Arc::default(),
    })
}

impl Workload for ScriptRun {
    fn connections(&self) -> u64 {
        u64::from(self.share.threads)
    }

    fn output(&self) -> Option<Arc<dyn crate::workloads::Output>> {
        Some(self.output.clone())
    }

    fn open(self: Box<Self>, config: RunConfig, progress: Arc<OpenProgress>) -> OpenFuture {
        Box::pin(open_run(*self, config, progress))
    }
}

/// The agent's own state: `init()` ran in it; `done()` runs in it at the end (in
/// sysbench, the main thread's state).
struct MainState {
    done: std_mpsc::Sender<std_mpsc::Sender<Result<(), String>>>,
}

impl MainState {
    /// Starts the state on a thread of its own and runs the script's body and `init`;
    /// gives up on an `init` that has not returned [`STUCK_GRACE`] after `progress` was
    /// cancelled (the thread is left behind).
    async fn start(
        cfg: Arc<ScriptConfig>,
        tid: u32,
        output: Arc<Output>,
        progress: &OpenProgress,
    ) -> Result<MainState, OpenError> {
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Result<(), String>>();
        let (done_tx, done_rx) = std_mpsc::channel::<std_mpsc::Sender<Result<(), String>>>();
        std::thread::Builder::new()
            .name("fb-script-main".into())
            .spawn(move || {
                let env = StateEnv {
                    files: &cfg.files,
                    command: &cfg.command,
                    tid,
                    opt: &cfg.opt,
                    output: Rc::new(move |s: &str| output.push(s)),
                    driver: cfg.targets.first().map_or("mysql", |t| t.driver.name()),
                    fast_calls: false,
                    argv: &cfg.argv,
                };
                let made = state::new_state(&env, |_, _| Ok(())).and_then(|lua| {
                    state::run_script(&lua, &cfg.files)?;
                    if cfg.command == "run"
                        && let Some(init) = state::function(&lua, "init")
                    {
                        state::call::<_, ()>(&lua, &init, ())?;
                    }
                    Ok(lua)
                });
                let lua = match made {
                    Ok(l) => {
                        let _ = ready_tx.send(Ok(()));
                        l
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("script error: {}", e.message)));
                        return;
                    }
                };
                // Waits for the end of the run (or for the run to be dropped).
                if let Ok(reply) = done_rx.recv() {
                    let r = match state::function(&lua, "done") {
                        Some(done) if cfg.command == "run" => state::call::<_, ()>(&lua, &done, ())
                            .map_err(|e| format!("script error in done(): {}", e.message)),
                        _ => Ok(()),
                    };
                    let _ = reply.send(r);
                }
            })
            .map_err(|e| OpenError::Setting(format!("cannot start the script's thread: {e}")))?;
        let ready = until_stuck(ready_rx, progress, || {
            "the script's init() did not return".to_string()
        })
        .await?;
        ready
            .map_err(|_| OpenError::Setting("the script's thread ended".into()))?
            .map_err(OpenError::Setting)?;
        Ok(MainState { done: done_tx })
    }
}

/// Runs `done()` when the last worker leaves (the runner's end step of a workload); the
/// run's control, once the run exists, tells it when to give up on a `done()` that never
/// returns.
struct Done(
    Mutex<Option<MainState>>,
    Mutex<Option<Arc<Control>>>,
    /// The run's memory watchdog, which lives as long as the run.
    Arc<memory::Watch>,
);

impl ThreadWorkload for Done {
    fn worker(&self, _thread: u32) -> Box<dyn crate::workloads::WorkerLoop + Send> {
        unreachable!("script workers are opened on their threads")
    }

    fn finish(&self) -> Result<(), String> {
        let Some(main) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Ok(());
        };
        let (tx, rx) = std_mpsc::channel();
        if main.done.send(tx).is_err() {
            return Ok(());
        }
        let mut cancelled_at: Option<std::time::Instant> = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => return r,
                Err(std_mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            }
            let control = self.1.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let Some(control) = control.filter(|c| c.is_cancelled()) else {
                continue;
            };
            let at = *cancelled_at.get_or_insert_with(std::time::Instant::now);
            if at.elapsed() >= STUCK_GRACE {
                control.left_behind(1);
                let msg = format!(
                    "the script's done() did not return within {}s of the cancel (code that never returns, such as an endless loop): left behind",
                    STUCK_GRACE.as_secs()
                );
                tracing::error!("{msg}");
                return Err(msg);
            }
        }
    }
}

/// One attempt at opening the workers, in one client.
struct Attempt {
    run: ScriptRun,
    config: RunConfig,
    progress: Arc<OpenProgress>,
    done: Arc<Done>,
}

/// Opens a script run: the agent's state with `init()`, then `config.threads` workers,
/// each on an OS thread of its own with its state and the connections its
/// `thread_init` opens, waiting at the start gate.
async fn open_run(
    run: ScriptRun,
    config: RunConfig,
    progress: Arc<OpenProgress>,
) -> Result<Opened, OpenError> {
    let limit = memory::limit(run.share.script_memory);
    let watch = memory::Watch::start(&run.cfg.files.main, limit, progress.clone());
    // Past the memory limit while opening: that is the error, whatever the opening says.
    let overrun = |e: OpenError| watch.reason().map_or(e, OpenError::Setting);
    let main = MainState::start(
        run.cfg.clone(),
        run.share.first_thread as u32,
        run.output.clone(),
        &progress,
    )
    .await
    .map_err(overrun)?;
    let done = Arc::new(Done(
        Mutex::new(Some(main)),
        Mutex::new(None),
        watch.clone(),
    ));
    let driver = run.cfg.targets.first().map_or(Driver::Mysql, |t| t.driver);
    let attempt = Attempt {
        run,
        config,
        progress,
        done,
    };
    open_with(driver, "script", &attempt, &attempt.progress.done)
        .await
        .map_err(overrun)
}

impl ForClient for Attempt {
    type Out = Opened;

    fn open<C: Client + 'static>(
        &self,
    ) -> impl std::future::Future<Output = Result<Opened, LeanOpenError>> + Send {
        let (cfg, share, output) = (
            self.run.cfg.clone(),
            self.run.share,
            self.run.output.clone(),
        );
        let (config, progress, done) = (
            self.config.clone(),
            self.progress.clone(),
            self.done.clone(),
        );
        async move {
            let mut run = PreparedRun::empty(config);
            *done.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.control.clone());
            done.2.attach(&run.control);
            let mut tail = WorkerTail::new(cfg.targets.len());
            // A script's statements have no kinds; its figures are per target.
            tail.kinds.clear();
            tail.one_target = (cfg.targets.len() == 1).then_some(0);
            let tail = run.set_tail(tail);
            let threads = run.config.threads;
            let gate = Arc::new(ConnectGate::new(
                cfg.server.connect_concurrency,
                u64::from(threads),
                cfg.targets.len(),
                share.ready_timeout,
            ));
            let how = Workers {
                name: "fb-script",
                // A Lua state's C calls nest deeper than the lean client's own.
                stack: C::STACK_SIZE.max(512 * 1024),
                loops: 0,
                connections_each: 1,
                last: Some(done as Arc<dyn ThreadWorkload>),
                stuck_in: Some("the script's thread_init()"),
            };
            let control = run.control.clone();
            let run = run
                .open_workers(how, &progress, |t| {
                    let opening = Opening {
                        cfg: cfg.clone(),
                        tid: share.first_thread + u64::from(t),
                        total_threads: share.total_threads,
                        seed: share.seed,
                        sockets: control.sockets.clone(),
                        tail: tail.clone(),
                        control: control.clone(),
                        gate: gate.clone(),
                        output: output.clone(),
                    };
                    (move || ScriptWorker::<C>::open(opening), end::<C>)
                })
                .await?;
            Ok(Opened {
                retries: gate.retries(),
                ..Opened::run(run)
            })
        }
    }
}

/// A worker's end: after an abort the sockets are shut, and there is nothing left to say.
fn end<C: Client + 'static>(w: ScriptWorker<C>, control: &Control) {
    if control.sockets.is_cancelled() {
        w.abandon()
    } else {
        w.close()
    }
}
