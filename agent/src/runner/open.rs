//! Starting a run's workers: one OS thread each or cooperative workers sharing a few
//! ([`crate::coop`]), each opening itself (its connections, its script state) on the thread
//! it runs on; the one opening every database workload shares ([`PreparedRun::open_workers`]:
//! spawn with rollback, wait for each worker's word, keep the failure that decides, count the
//! connections).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::coop::panic_text;
use crate::sql::open_error::{LeanOpenError, OpenError};
use crate::stats::WorkerSlot;

use super::control::{Control, GateState, OpenProgress};
use super::event_loop::{event_loop, guarded};
use super::worker::{ThreadWorkload, WorkerLoop};
use super::{PreparedRun, STUCK_GRACE};

/// How the workers of a run that open themselves are started.
pub struct Workers {
    /// Their threads' name: worker t's is `{name}-{t}` (a cooperative thread's `fb-loop-i`).
    pub name: &'static str,
    /// Bytes of stack each worker gets (its thread's, or its coroutine's).
    pub stack: usize,
    /// Cooperative threads the workers share (worker t on thread t % loops); 0: an OS
    /// thread each, as sysbench.
    pub loops: usize,
    /// Connections each worker opens, counted in the opening's progress as it opens.
    pub connections_each: u64,
    /// Runs once after the last worker leaves (a script's `done()`).
    pub last: Option<Arc<dyn ThreadWorkload>>,
    /// Workers still silent [`STUCK_GRACE`] after the opening was cancelled are given up
    /// (left behind) with this said of where they hang, e.g. "the script's thread_init()";
    /// None: waited for (a cancel shuts their sockets, which ends them).
    pub stuck_in: Option<&'static str>,
}

impl PreparedRun {
    /// Starts this run's workers as `how` says, worker t opening itself with `make(t).0` on
    /// its thread (after Go it runs the event loop) and ending with `make(t).1`; waits until
    /// each has said how its opening went. Fails, every worker released again, if one could
    /// not open: with the first failure, unless a worker needs a login the lean client does
    /// not speak (then all fall back to another client, see `crate::sql::choose`).
    pub async fn open_workers<W, Open, End>(
        mut self,
        how: Workers,
        progress: &Arc<OpenProgress>,
        mut make: impl FnMut(u32) -> (Open, End),
    ) -> Result<PreparedRun, LeanOpenError>
    where
        W: WorkerLoop,
        Open: FnOnce() -> Result<W, LeanOpenError> + Send + 'static,
        End: FnOnce(W, &Control) + Send + 'static,
    {
        progress.attach(self.control.sockets.clone());
        let (tx, mut rx) = mpsc::unbounded_channel::<Result<(), LeanOpenError>>();
        let threads = self.config.threads;
        let mut tasks: Vec<crate::coop::Task> = Vec::new();
        for t in 0..threads {
            let (open, end) = make(t);
            let progress = progress.clone();
            let each = how.connections_each;
            let open = move || {
                if progress.is_cancelled() {
                    return Err(OpenError::Cancelled.into());
                }
                let w = open()?;
                progress.done.fetch_add(each, Ordering::Relaxed);
                Ok(w)
            };
            let (opened, last) = (Some(tx.clone()), how.last.clone());
            if how.loops > 0 {
                tasks.push(Box::new(self.worker_task(t, open, end, opened, last)));
                continue;
            }
            let name = format!("{}-{t}", how.name);
            if let Err(e) = self.spawn_worker(t, name, Some(how.stack), open, end, opened, last) {
                // Threads not spawned never count themselves out.
                let missing = (threads - t) as usize;
                self.running.fetch_sub(missing, Ordering::AcqRel);
                return Err(self.not_started(e).await);
            }
        }
        if how.loops > 0 {
            tracing::info!(
                threads,
                loops = how.loops,
                "workers run as cooperative workers on {} thread(s)",
                how.loops
            );
            if let Err(e) = self.spawn_loops(tasks, how.loops, how.stack, tx.clone()) {
                return Err(self.not_started(e).await);
            }
        }
        drop(tx);
        match first_failure(&mut rx, threads, progress, how.stuck_in).await {
            Ok(None) => Ok(self),
            // Left behind: joining them (release_workers) would wait forever.
            Err(stuck) => Err(stuck.into()),
            Ok(Some(e)) => {
                self.release_workers().await;
                Err(e)
            }
        }
    }

    /// Releases the workers started so far after a thread could not start.
    async fn not_started(&mut self, e: std::io::Error) -> LeanOpenError {
        self.release_workers().await;
        OpenError::Setting(format!("cannot start worker threads: {e}")).into()
    }

    /// Spawns worker thread `t` (named `name`, with `stack_size` bytes of stack if given),
    /// the one way every thread workload's threads start; its body is [`Self::worker_task`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn spawn_worker<W, Open, End>(
        &mut self,
        t: u32,
        name: String,
        stack_size: Option<usize>,
        open: Open,
        end: End,
        opened: Option<mpsc::UnboundedSender<Result<(), LeanOpenError>>>,
        last: Option<Arc<dyn ThreadWorkload>>,
    ) -> std::io::Result<()>
    where
        W: WorkerLoop,
        Open: FnOnce() -> Result<W, LeanOpenError> + Send + 'static,
        End: FnOnce(W, &Control) + Send + 'static,
    {
        let body = self.worker_task(t, open, end, opened, last);
        let mut builder = std::thread::Builder::new().name(name);
        if let Some(bytes) = stack_size {
            builder = builder.stack_size(bytes);
        }
        self.handles.push(builder.spawn(body)?);
        Ok(())
    }

    /// Worker `t`'s whole life, on an OS thread of its own or as a cooperative worker
    /// (`crate::coop`). It opens its worker itself (`open`: an OLTP worker's connections are
    /// made where they are used) and says how that went on `opened`; then it waits at the
    /// start gate, runs [`event_loop`] after Go and hands its worker to `end` (closing
    /// connections). The last worker out runs `last`'s end step (fileio's fsync) before the
    /// run is over.
    fn worker_task<W, Open, End>(
        &mut self,
        t: u32,
        open: Open,
        end: End,
        opened: Option<mpsc::UnboundedSender<Result<(), LeanOpenError>>>,
        last: Option<Arc<dyn ThreadWorkload>>,
    ) -> impl FnOnce() + Send + 'static
    where
        W: WorkerLoop,
        Open: FnOnce() -> Result<W, LeanOpenError> + Send + 'static,
        End: FnOnce(W, &Control) + Send + 'static,
    {
        let slot = Arc::new(WorkerSlot::new(self.intervals.clone()));
        if let Some(log) = self.config.txn_log {
            slot.log_transactions(log, t);
        }
        self.slots.push(slot.clone());
        let (control, gate) = (self.control.clone(), self.gate.clone());
        let (running, all_done) = (self.running.clone(), self.all_done.clone());
        move || {
            let made =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(open)).unwrap_or_else(|p| {
                    let msg = panic_text(&*p);
                    tracing::error!("worker {t} panicked while opening: {msg}");
                    Err(OpenError::Connect {
                        target: "(worker)".into(),
                        message: format!("worker thread {t} failed: {msg}"),
                    }
                    .into())
                });
            let mut ran = false;
            match made {
                Ok(mut w) => {
                    if let Some(tx) = opened {
                        let _ = tx.send(Ok(()));
                    }
                    guarded(&control, t, || {
                        ran = gate.wait();
                        if ran {
                            event_loop(&mut w, &control, &slot);
                            control.worker_finished();
                        }
                        end(w, &control);
                    });
                }
                Err(e) => {
                    if let Some(tx) = opened {
                        let _ = tx.send(Err(e));
                    }
                }
            }
            if running.fetch_sub(1, Ordering::AcqRel) == 1 {
                if let (true, Some(workload)) = (ran, last) {
                    guarded(&control, t, || {
                        if let Err(msg) = workload.finish() {
                            control.abort(msg);
                        }
                    });
                }
                all_done.notify_one();
            }
        }
    }

    /// Runs `tasks` as cooperative workers on `loops` threads (worker t on thread t % loops),
    /// each worker on a stack of `stack_size` bytes. A thread that cannot start accounts
    /// for its workers, as if they had ended; one whose loop fails reports a failed
    /// opening on `opened` for each worker it leaves unfinished (the run may still be
    /// opening) and aborts the run.
    fn spawn_loops(
        &mut self,
        tasks: Vec<crate::coop::Task>,
        loops: usize,
        stack_size: usize,
        opened: mpsc::UnboundedSender<Result<(), LeanOpenError>>,
    ) -> std::io::Result<()> {
        let mut groups: Vec<Vec<crate::coop::Task>> = (0..loops).map(|_| Vec::new()).collect();
        for (t, task) in tasks.into_iter().enumerate() {
            groups[t % loops].push(task);
        }
        let mut groups = groups.into_iter().enumerate();
        while let Some((i, group)) = groups.next() {
            let gate = self.gate.clone();
            let (control, n) = (self.control.clone(), group.len());
            let (running, all_done) = (self.running.clone(), self.all_done.clone());
            let opened = opened.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("fb-loop-{i}"))
                .spawn(move || {
                    if let Err(e) = crate::coop::run(group, stack_size, || gate.block()) {
                        let message = format!("worker loop {i} failed: {e}");
                        tracing::error!("{message}");
                        for _ in 0..e.unfinished {
                            let _ = opened.send(Err(OpenError::Connect {
                                target: "(none)".into(),
                                message: message.clone(),
                            }
                            .into()));
                        }
                        control.abort(message);
                        // Its unfinished workers will not count themselves out.
                        let left = running.fetch_sub(e.unfinished, Ordering::AcqRel);
                        if e.unfinished > 0 && left == e.unfinished {
                            all_done.notify_one();
                        }
                    }
                });
            match spawned {
                Ok(h) => self.handles.push(h),
                Err(e) => {
                    let missing = n + groups.map(|(_, g)| g.len()).sum::<usize>();
                    self.running.fetch_sub(missing, Ordering::AcqRel);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Sends OLTP workers that never started home (closing their connections politely)
    /// and waits until they are gone.
    pub(super) async fn release_workers(&mut self) {
        self.gate.set(GateState::Abandoned);
        let handles: Vec<_> = self.handles.drain(..).collect();
        let _ = tokio::task::spawn_blocking(move || {
            for h in handles {
                let _ = h.join();
            }
        })
        .await;
    }
}

/// Waits for every worker to say how its opening went, and keeps the failure that decides
/// the run's: the first, unless a worker needs a login the lean client does not speak
/// (then all fall back to another client). With `stuck_in`, gives up on workers still
/// silent [`STUCK_GRACE`] after a cancel (Err).
async fn first_failure(
    rx: &mut mpsc::UnboundedReceiver<Result<(), LeanOpenError>>,
    threads: u32,
    progress: &OpenProgress,
    stuck_in: Option<&'static str>,
) -> Result<Option<LeanOpenError>, OpenError> {
    let mut failure = None;
    // Every worker says once how its opening went. Counting matters: a cooperative
    // thread whose loop failed keeps its workers (and their senders) unfinished, and
    // answers for them itself, with a failure for each, even one that had opened; the
    // count may then be reached early, but only with a failure, which releases every
    // worker below.
    let mut reports = 0;
    while reports < threads {
        let next = match stuck_in {
            None => rx.recv().await,
            Some(place) => {
                let what = || {
                    format!(
                        "{} worker thread(s) did not return from {place}",
                        threads - reports
                    )
                };
                until_stuck(rx.recv(), progress, what).await?
            }
        };
        let Some(r) = next else { break };
        reports += 1;
        if let Err(e) = r {
            // One worker's failure fails the run: the others need not open theirs.
            if matches!(e, LeanOpenError::Open(_)) {
                progress.cancel();
            }
            // An unsupported login anywhere means falling back for all; it wins over
            // other errors, which are otherwise reported first come.
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
    Ok(failure)
}

/// Awaits `f`, unless `progress` is cancelled and `f` is still not done [`STUCK_GRACE`]
/// later: then code that never returns holds it (a script's endless loop: LuaJIT's
/// compiled loops reach no hook), and the error says what did not return (`what`) and that
/// only the agent's end stops it.
pub async fn until_stuck<T>(
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
