//! sysbench Lua scripts on an agent: `init` once in a state of the agent's own, then one
//! worker per thread ([`worker::ScriptWorker`]), each with its own state and connections,
//! then `done` in the first state. The script and its modules come in the Start message;
//! nothing is read from this host's disk. Agents run scripts only when their operator
//! allows it (`--allow-scripts`).

pub mod worker;

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;

use fleetbench_model::workloads::script::ScriptConfig;
use fleetbench_script::state::{self, StateEnv};
use tokio::sync::mpsc;

use crate::runner::{Control, OpenProgress, PreparedRun, RunConfig, STUCK_GRACE};
use crate::sql::Client;
use crate::sql::asynch::AsyncClient;
use crate::sql::mysql;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::sql::opening::ConnectGate;
use crate::sql::pgsql::PgConn;
use crate::stats::WorkerTail;
use crate::workloads::ThreadWorkload;
use fleetbench_model::workloads::server::Driver;
use worker::{Opening, Output, ScriptWorker};

/// What the script workers of one agent are opened with.
#[derive(Clone)]
pub struct ScriptThreads {
    pub cfg: Arc<ScriptConfig>,
    /// This agent's first thread among all agents' (`sysbench.tid` counts over the whole
    /// run), and the count of all.
    pub first_thread: u64,
    pub total_threads: u64,
    pub seed: u64,
    pub progress: Arc<OpenProgress>,
    pub ready_timeout: Duration,
    /// Where the states' output gathers until it is sent.
    pub output: Arc<Output>,
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
struct Done(Mutex<Option<MainState>>, Mutex<Option<Arc<Control>>>);

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

/// Opens a script run: the agent's state with `init()`, then `config.threads` workers,
/// each on an OS thread of its own with its state and the connections its
/// `thread_init` opens, waiting at the start gate. The lean client of the target's
/// database; for MySQL, mysql_async when the server wants a login the lean client does
/// not speak.
pub async fn open_run(open: ScriptThreads, config: RunConfig) -> Result<PreparedRun, OpenError> {
    let main = MainState::start(
        open.cfg.clone(),
        open.first_thread as u32,
        open.output.clone(),
        &open.progress,
    )
    .await?;
    let done = Arc::new(Done(Mutex::new(Some(main)), Mutex::new(None)));
    if open.cfg.targets.first().map(|t| t.driver) == Some(Driver::Pgsql) {
        return open_workers::<PgConn>(open, config, done)
            .await
            .map_err(|e| match e {
                LeanOpenError::Open(e) => e,
                LeanOpenError::Unsupported(m) => OpenError::Setting(m),
            });
    }
    match open_workers::<mysql::Conn>(open.clone(), config.clone(), done.clone()).await {
        Ok(run) => return Ok(run),
        Err(LeanOpenError::Open(e)) => return Err(e),
        Err(LeanOpenError::Unsupported(msg)) => {
            tracing::warn!("script workers fall back to mysql_async (slower per query): {msg}");
        }
    }
    open.progress.done.store(0, Ordering::Relaxed);
    open_workers::<AsyncClient>(open, config, done)
        .await
        .map_err(|e| match e {
            LeanOpenError::Open(e) => e,
            LeanOpenError::Unsupported(m) => OpenError::Setting(m),
        })
}

async fn open_workers<C: Client + 'static>(
    open: ScriptThreads,
    config: RunConfig,
    done: Arc<Done>,
) -> Result<PreparedRun, LeanOpenError> {
    let mut run = PreparedRun::empty(config);
    *done.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.control.clone());
    open.progress.attach(run.control.sockets.clone());
    let cfg = open.cfg.clone();
    let mut tail = WorkerTail::new(cfg.targets.len());
    // A script's statements have no kinds; its figures are per target.
    tail.kinds.clear();
    if cfg.targets.len() == 1 {
        run.single_target = Some(0);
        tail.one_target = Some(0);
    }
    let tail = Arc::new(Mutex::new(tail));
    run.oltp_tail = Some(tail.clone());
    let threads = run.config.threads;
    let gate = Arc::new(ConnectGate::new(
        cfg.server.connect_concurrency,
        u64::from(threads),
        cfg.targets.len(),
        open.ready_timeout,
    ));
    let (tx, mut rx) = mpsc::unbounded_channel::<Result<(), LeanOpenError>>();
    // A Lua state's C calls nest deeper than the lean client's own.
    let stack = C::STACK_SIZE.max(512 * 1024);
    for t in 0..threads {
        let o = (
            cfg.clone(),
            tail.clone(),
            run.control.clone(),
            gate.clone(),
            open.output.clone(),
            open.progress.clone(),
        );
        let tid = open.first_thread + u64::from(t);
        let (total_threads, seed) = (open.total_threads, open.seed);
        let opener = move || {
            let (cfg, tail, control, gate, output, progress) = o;
            if progress.is_cancelled() {
                return Err(OpenError::Cancelled.into());
            }
            let w = ScriptWorker::<C>::open(Opening {
                cfg,
                tid,
                total_threads,
                seed,
                sockets: control.sockets.clone(),
                tail,
                control,
                gate,
                output,
            })?;
            progress.done.fetch_add(1, Ordering::Relaxed);
            Ok(w)
        };
        let end = |w: ScriptWorker<C>, control: &crate::runner::Control| {
            if control.sockets.is_cancelled() {
                w.abandon()
            } else {
                w.close()
            }
        };
        let spawned = run.spawn_worker(
            t,
            format!("fb-script-{t}"),
            Some(stack),
            opener,
            end,
            Some(tx.clone()),
            Some(done.clone() as Arc<dyn ThreadWorkload>),
        );
        if let Err(e) = spawned {
            let missing = (threads - t) as usize;
            run.running.fetch_sub(missing, Ordering::AcqRel);
            run.release_workers().await;
            return Err(OpenError::Setting(format!("cannot start worker threads: {e}")).into());
        }
    }
    drop(tx);
    let mut failure: Option<LeanOpenError> = None;
    let mut reports = 0;
    while reports < threads {
        let next = until_stuck(rx.recv(), &open.progress, || {
            format!(
                "{} worker thread(s) did not return from the script's thread_init()",
                threads - reports
            )
        });
        // Left behind: joining them (release_workers) would wait forever.
        let Some(r) = next.await.map_err(LeanOpenError::Open)? else {
            break;
        };
        reports += 1;
        if let Err(e) = r {
            if matches!(e, LeanOpenError::Open(_)) {
                open.progress.cancel();
            }
            let keep = match &failure {
                None => true,
                Some(LeanOpenError::Unsupported(_)) => false,
                Some(_) => matches!(e, LeanOpenError::Unsupported(_)),
            };
            if keep {
                failure = Some(e);
            }
        }
    }
    if let Some(e) = failure {
        run.release_workers().await;
        return Err(e);
    }
    run.connect_retries = gate.retries();
    Ok(run)
}

/// Awaits `f`, unless `progress` is cancelled and `f` is still not done [`STUCK_GRACE`]
/// later: then script code that never returns holds it (LuaJIT's compiled loops reach no
/// hook), and the error says what did not return (`what`) and that only the agent's end
/// stops it.
async fn until_stuck<T>(
    f: impl std::future::Future<Output = T>,
    progress: &OpenProgress,
    what: impl FnOnce() -> String,
) -> Result<T, OpenError> {
    tokio::pin!(f);
    let mut cancelled_at: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            v = &mut f => return Ok(v),
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        if progress.is_cancelled() {
            let at = *cancelled_at.get_or_insert_with(tokio::time::Instant::now);
            if at.elapsed() >= STUCK_GRACE {
                return Err(OpenError::Stuck(format!(
                    "{} within {}s of the cancel (code that never returns, such as an endless loop): left behind",
                    what(),
                    STUCK_GRACE.as_secs()
                )));
            }
        }
    }
}
