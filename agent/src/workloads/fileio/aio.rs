//! Asynchronous file I/O for --file-io-mode=async: each worker thread keeps up to
//! --file-async-backlog requests in flight, through its own io_uring where the kernel offers
//! it, otherwise through a thread pool shared by the agent's workers. An event submits one
//! request (waiting first for a free slot when the backlog is full); requests are counted
//! when they complete.

use std::os::fd::AsRawFd;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};

use io_uring::{IoUring, opcode, types};

use super::buffer::AlignedBuf;
use super::{FileSet, Op};
use fleetbench_model::counters::IoCounters;

/// Whether io_uring works here (kernel support, not forbidden by seccomp); checked once.
pub fn uring_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| IoUring::new(2).is_ok())
}

/// A finished request: its slot and the result (bytes transferred, or an errno).
struct Completion {
    slot: usize,
    result: Result<usize, std::io::Error>,
    /// Pool mode hands the buffer back with the completion.
    buf: Option<AlignedBuf>,
}

/// A request for the pool.
struct Job {
    set: Arc<FileSet>,
    op: Op,
    file: usize,
    off: u64,
    slot: usize,
    buf: AlignedBuf,
    done: Sender<Completion>,
}

/// Threads that run blocking requests for workers when io_uring is not available.
pub struct Pool {
    jobs: Mutex<Option<Sender<Job>>>,
}

impl Pool {
    /// Up to `backlog` threads, at most 64.
    pub fn new(backlog: u32) -> Pool {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..backlog.clamp(1, 64) {
            let rx = rx.clone();
            let _ = std::thread::Builder::new()
                .name(format!("fb-aio-{i}"))
                .spawn(move || {
                    loop {
                        let job = {
                            let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
                            rx.recv()
                        };
                        let Ok(mut job) = job else { break };
                        let f = &job.set.files[job.file];
                        let result = match job.op {
                            Op::Read => {
                                use std::os::unix::fs::FileExt;
                                f.read_exact_at(job.buf.as_mut_slice(), job.off)
                                    .map(|_| job.buf.as_slice().len())
                            }
                            Op::Write => {
                                use std::os::unix::fs::FileExt;
                                f.write_all_at(job.buf.as_slice(), job.off)
                                    .map(|_| job.buf.as_slice().len())
                            }
                            Op::Fsync if job.set.cfg.fdatasync => f.sync_data().map(|_| 0),
                            Op::Fsync => f.sync_all().map(|_| 0),
                        };
                        let _ = job.done.send(Completion {
                            slot: job.slot,
                            result,
                            buf: Some(job.buf),
                        });
                    }
                });
        }
        Pool {
            jobs: Mutex::new(Some(tx)),
        }
    }

    fn send(&self, job: Job) -> Result<(), String> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        match jobs.as_ref() {
            Some(tx) => tx
                .send(job)
                .map_err(|_| "the I/O thread pool is gone".into()),
            None => Err("the I/O thread pool is shut down".into()),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the channel lets every pool thread leave.
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

enum Backend {
    Uring(Box<IoUring>),
    Pool {
        pool: Arc<Pool>,
        done_tx: Sender<Completion>,
        done_rx: Receiver<Completion>,
    },
}

/// One worker's asynchronous requests.
pub struct Engine {
    backend: Backend,
    /// One buffer per slot; `None` while the pool holds it.
    bufs: Vec<Option<AlignedBuf>>,
    /// What each slot is doing, on which file.
    ops: Vec<(Op, usize)>,
    free: Vec<usize>,
    backlog: usize,
    block: u64,
    fsync_all: bool,
}

impl Engine {
    /// io_uring when `pool` is None (the set found io_uring available), else the pool. A
    /// ring that cannot be created for this worker falls back to a pool of its own.
    pub fn new(set: &FileSet, pool: Option<Arc<Pool>>) -> Engine {
        let backlog = set.cfg.async_backlog.max(1) as usize;
        let backend = match pool {
            Some(pool) => pool_backend(pool),
            None => match IoUring::new(backlog.next_power_of_two() as u32) {
                Ok(ring) => Backend::Uring(Box::new(ring)),
                Err(_) => pool_backend(Arc::new(Pool::new(backlog as u32))),
            },
        };
        Engine {
            backend,
            bufs: (0..backlog)
                .map(|_| Some(AlignedBuf::new(set.cfg.block_size as usize)))
                .collect(),
            ops: vec![(Op::Read, 0); backlog],
            free: (0..backlog).rev().collect(),
            backlog,
            block: set.cfg.block_size,
            fsync_all: set.cfg.fsync_all,
        }
    }

    fn in_flight(&self) -> usize {
        self.backlog - self.free.len()
    }

    /// Submits one request, first waiting for a completion if every slot is busy; then
    /// counts whatever has completed meanwhile.
    pub fn submit(
        &mut self,
        set: &Arc<FileSet>,
        op: Op,
        file: usize,
        off: u64,
        io: &mut IoCounters,
    ) -> Result<(), String> {
        if self.free.is_empty() {
            self.reap(set, io, 1)?;
        }
        let slot = self.free.pop().expect("a free slot after reaping");
        self.ops[slot] = (op, file);
        match &mut self.backend {
            Backend::Uring(ring) => {
                let fd = types::Fd(set.files[file].as_raw_fd());
                let buf = self.bufs[slot].as_mut().expect("uring keeps its buffers");
                let len = buf.as_slice().len() as u32;
                let ptr = buf.as_mut_slice().as_mut_ptr();
                let entry = match op {
                    Op::Read => opcode::Read::new(fd, ptr, len).offset(off).build(),
                    Op::Write => opcode::Write::new(fd, ptr, len).offset(off).build(),
                    Op::Fsync if set.cfg.fdatasync => opcode::Fsync::new(fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
                    Op::Fsync => opcode::Fsync::new(fd).build(),
                }
                .user_data(slot as u64);
                // SAFETY: the buffer stays alive and untouched until this slot completes
                // (slots are only reused after their completion is reaped, and `Drop`
                // waits for everything in flight).
                unsafe {
                    ring.submission()
                        .push(&entry)
                        .map_err(|_| "io_uring submission queue full".to_string())?;
                }
                ring.submit().map_err(|e| format!("io_uring submit: {e}"))?;
            }
            Backend::Pool { pool, done_tx, .. } => {
                let buf = self.bufs[slot].take().expect("slot buffer is home");
                pool.send(Job {
                    set: set.clone(),
                    op,
                    file,
                    off,
                    slot,
                    buf,
                    done: done_tx.clone(),
                })?;
            }
        }
        self.reap(set, io, 0)
    }

    /// Waits for everything in flight and counts it.
    pub fn drain(&mut self, set: &FileSet, io: &mut IoCounters) -> Result<(), String> {
        let mut first_err = Ok(());
        while self.in_flight() > 0 {
            if let Err(e) = self.reap(set, io, 1) {
                first_err = first_err.and(Err(e));
            }
        }
        first_err
    }

    /// Counts completed requests, waiting for at least `wait` of them.
    fn reap(&mut self, set: &FileSet, io: &mut IoCounters, wait: usize) -> Result<(), String> {
        let mut done = Vec::new();
        match &mut self.backend {
            Backend::Uring(ring) => {
                if wait > 0 {
                    ring.submit_and_wait(wait)
                        .map_err(|e| format!("io_uring wait: {e}"))?;
                }
                for cqe in ring.completion() {
                    let r = cqe.result();
                    done.push(Completion {
                        slot: cqe.user_data() as usize,
                        result: if r < 0 {
                            Err(std::io::Error::from_raw_os_error(-r))
                        } else {
                            Ok(r as usize)
                        },
                        buf: None,
                    });
                }
            }
            Backend::Pool { done_rx, .. } => {
                if wait > 0 {
                    match done_rx.recv() {
                        Ok(c) => done.push(c),
                        Err(_) => return Err("the I/O thread pool is gone".into()),
                    }
                }
                done.extend(done_rx.try_iter());
            }
        }
        let mut result = Ok(());
        for c in done {
            if let Some(b) = c.buf {
                self.bufs[c.slot] = Some(b);
            }
            self.free.push(c.slot);
            let (op, file) = self.ops[c.slot];
            match c.result {
                Ok(n) if op != Op::Fsync && n as u64 != self.block => {
                    result = result.and(Err(format!(
                        "short {} of {n} bytes instead of {}",
                        if op == Op::Read { "read" } else { "write" },
                        self.block
                    )));
                }
                Ok(_) => match op {
                    Op::Read => {
                        io.reads += 1;
                        io.bytes_read += self.block;
                    }
                    Op::Write => {
                        io.writes += 1;
                        io.bytes_written += self.block;
                        if self.fsync_all {
                            // --file-fsync-all: flush each write once it has landed.
                            match set.fsync(file) {
                                Ok(()) => io.fsyncs += 1,
                                Err(e) => result = result.and(Err(e.to_string())),
                            }
                        }
                    }
                    Op::Fsync => io.fsyncs += 1,
                },
                Err(e) => result = result.and(Err(format!("asynchronous {op:?}: {e}"))),
            }
        }
        result
    }
}

fn pool_backend(pool: Arc<Pool>) -> Backend {
    let (done_tx, done_rx) = channel();
    Backend::Pool {
        pool,
        done_tx,
        done_rx,
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The kernel may still write into our buffers: wait for every request first.
        if let Backend::Uring(ring) = &mut self.backend {
            let mut left = self.backlog - self.free.len();
            while left > 0 {
                if ring.submit_and_wait(1).is_err() {
                    break;
                }
                left = left.saturating_sub(ring.completion().count());
            }
        }
    }
}

/// Whether async runs use the thread pool: io_uring is missing, or the environment asks for
/// the pool (FLEETBENCH_AIO=pool, to exercise it where io_uring works).
pub fn use_pool() -> bool {
    std::env::var("FLEETBENCH_AIO").is_ok_and(|v| v == "pool") || !uring_available()
}
