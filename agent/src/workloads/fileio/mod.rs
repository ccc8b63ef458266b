//! The fileio workload: sysbench's file I/O test on `test_file.0..N-1` inside the agent's
//! work directory. Prepare writes the files, run reads and writes blocks of them
//! (sequentially or at random, synchronously, through io_uring or a thread pool, or through
//! mmap) with periodic fsyncs, cleanup removes exactly those files.
//!
//! Safety rule: nothing is ever created, written or removed outside the work directory. The
//! file directory is relative, has no `..`, and no part of it may be a symbolic link; the
//! test files are opened with `O_NOFOLLOW`.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::{Step, ThreadWorkload, WorkerLoop};
use crate::rand::Rng;
use fleetbench_model::counters::IoCounters;
pub use fleetbench_model::workloads::fileio::{
    ExtraFlags, FileError, FileioConfig, IoMode, TestMode,
};

mod aio;
mod buffer;
mod plan;

pub use plan::plan;

use buffer::AlignedBuf;

/// Checks what this host must give `threads` threads before anything is allocated or
/// written: their I/O buffers against the memory available, the threads against the
/// host's limits, and for prepare (`create`) the files against the free space, for a
/// run the open files against the open-files limit.
pub fn check_host(cfg: &FileioConfig, threads: u32, create: bool) -> Result<(), FileError> {
    let refuse = FileError::Options;
    let threads = if create {
        threads.clamp(1, cfg.file_num.max(1))
    } else {
        threads
    };
    fleetbench_model::limits::check_threads(u64::from(threads)).map_err(refuse)?;
    let per_thread = if cfg.io_mode == IoMode::Async && !create {
        u64::from(cfg.async_backlog)
    } else {
        1
    };
    let need = cfg
        .block_size
        .saturating_mul(per_thread)
        .saturating_mul(u64::from(threads));
    fleetbench_model::limits::check_memory(
        need,
        &format!(
            "{threads} threads' I/O buffers of --file-block-size={}",
            cfg.block_size
        ),
    )
    .map_err(refuse)?;
    if create {
        let dir = match resolve_dir(&cfg.work_dir, &cfg.file_dir, false) {
            Ok(d) => d,
            Err(FileError::Missing { .. }) => cfg.work_dir.clone(),
            Err(e) => return Err(e),
        };
        let free = fleetbench_model::limits::free_space(&dir).map_err(|e| io_err(&dir, e))?;
        // Test files left by an earlier prepare are rewritten in place.
        let mut existing = 0u64;
        for n in 0..cfg.file_num {
            match std::fs::symlink_metadata(file_path(&dir, n)) {
                Ok(m) if m.is_file() => existing = existing.saturating_add(m.len()),
                _ => break,
            }
        }
        let need = cfg.file_size().saturating_mul(u64::from(cfg.file_num));
        if need > free.saturating_add(existing) {
            return Err(refuse(format!(
                "the test files need {need} bytes (--file-total-size), but {} has only {free} bytes free",
                dir.display()
            )));
        }
    } else {
        let (soft, hard) =
            fleetbench_model::limits::nofile().map_err(|e| io_err(&cfg.work_dir, e))?;
        let need = u64::from(cfg.file_num) + fleetbench_model::limits::RESERVED_FILES;
        if need > soft {
            return Err(refuse(format!(
                "a run keeps all {} test files open, but the agent's open-files limit is {soft} (hard limit {hard}): use a smaller --file-num or raise LimitNOFILE=",
                cfg.file_num
            )));
        }
    }
    Ok(())
}

fn io_err(path: &Path, source: std::io::Error) -> FileError {
    FileError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Resolves --file-dir inside `work_dir`, creating missing directories when `create`. Refuses
/// absolute paths, `..`, and symbolic links anywhere on the way, so that nothing outside the
/// work directory can be reached.
pub fn resolve_dir(work_dir: &Path, file_dir: &str, create: bool) -> Result<PathBuf, FileError> {
    let refuse = |why: &str| FileError::Escape {
        dir: file_dir.to_string(),
        why: why.to_string(),
    };
    let rel = Path::new(file_dir);
    if rel.is_absolute() {
        return Err(refuse(
            "it must be relative to the agent's work directory, not absolute",
        ));
    }
    let mut path = work_dir.to_path_buf();
    for c in rel.components() {
        match c {
            Component::CurDir => continue,
            Component::Normal(part) => path.push(part),
            Component::ParentDir => {
                return Err(refuse("'..' would leave the agent's work directory"));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse("it must be relative"));
            }
        }
        // Another agent or prepare sharing this work directory may create the same
        // directory between the look and the create: look again then.
        let mut meta = std::fs::symlink_metadata(&path);
        if create && matches!(&meta, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            match std::fs::create_dir(&path) {
                Ok(()) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    meta = std::fs::symlink_metadata(&path);
                }
                Err(e) => return Err(io_err(&path, e)),
            }
        }
        match meta {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse(&format!(
                    "{} is a symbolic link, which could lead outside the agent's work directory",
                    path.display()
                )));
            }
            Ok(m) if !m.is_dir() => {
                return Err(refuse(&format!("{} is not a directory", path.display())));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(FileError::Missing {
                    path: path.display().to_string(),
                });
            }
            Err(e) => return Err(io_err(&path, e)),
        }
    }
    Ok(path)
}

/// `test_file.N` in `dir`.
pub fn file_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("test_file.{n}"))
}

/// Why a test file that exists must not be written or removed: another name (hard link)
/// for it, or another user's file. O_NOFOLLOW stops symbolic links, not hard links, and a
/// hard link in the work directory can name any file the agent's user may write.
fn foreign(path: &Path, m: &std::fs::Metadata) -> Result<(), FileError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let why = if m.nlink() > 1 {
        format!("has {} links", m.nlink())
    } else if m.uid() != me {
        format!("belongs to uid {}, not to the agent's uid {me}", m.uid())
    } else {
        return Ok(());
    };
    Err(FileError::Foreign {
        path: path.display().to_string(),
        why,
    })
}

/// Opens (or creates) one test file without following symbolic links, and refuses one
/// with other names or another owner before anything is written to it.
///
/// An existing file is never truncated here: agents sharing one work directory prepare
/// the same files at the same time, and each writes the same bytes over the whole file,
/// so a file another agent has already finished must not shrink under it.
/// [`FileJob::write_file`] sets the length after writing instead.
fn open_file(path: &Path, flags: ExtraFlags, create: bool) -> Result<File, FileError> {
    let mut o = OpenOptions::new();
    o.read(true).write(true);
    if create {
        // Not O_TRUNC: an existing file is checked first. O_CREAT without O_EXCL: another
        // agent may create the same file first, and then this one opens it.
        o.create(true).mode(0o600);
    }
    o.custom_flags(libc::O_NOFOLLOW | flags.bits());
    let f = o.open(path).map_err(|e| open_err(path, flags, create, e))?;
    let m = f.metadata().map_err(|e| io_err(path, e))?;
    if !m.is_file() {
        return Err(FileError::NotRegular {
            path: path.display().to_string(),
        });
    }
    foreign(path, &m)?;
    Ok(f)
}

fn open_err(path: &Path, flags: ExtraFlags, create: bool, e: std::io::Error) -> FileError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => FileError::NotRegular {
            path: path.display().to_string(),
        },
        Some(libc::EINVAL) if flags.direct => FileError::NoDirect {
            dir: path
                .parent()
                .map_or_else(String::new, |d| d.display().to_string()),
        },
        Some(libc::ENOENT) if !create => FileError::Missing {
            path: path.display().to_string(),
        },
        _ => io_err(path, e),
    }
}

/// A prepare or cleanup in progress, shared with whoever reports progress or stops it.
#[derive(Debug)]
pub struct FileJob {
    pub cfg: FileioConfig,
    /// Bytes written (prepare) or files removed (cleanup).
    pub done: AtomicU64,
    pub stop: AtomicBool,
    summary: std::sync::Mutex<String>,
}

impl FileJob {
    pub fn new(cfg: FileioConfig) -> Arc<FileJob> {
        Arc::new(FileJob {
            cfg,
            done: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            summary: std::sync::Mutex::new(String::new()),
        })
    }

    pub fn prepare_total(&self) -> u64 {
        self.cfg.file_size() * u64::from(self.cfg.file_num)
    }

    pub fn cleanup_total(&self) -> u64 {
        u64::from(self.cfg.file_num)
    }

    pub fn summary(&self) -> String {
        self.summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_summary(&self, s: String) {
        *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    /// Checks, without writing anything, that the options are sound and the directory is
    /// inside the work directory (prepare creates it when missing; cleanup then has
    /// nothing to remove).
    pub fn check(&self) -> Result<(), FileError> {
        self.cfg.validate()?;
        match resolve_dir(&self.cfg.work_dir, &self.cfg.file_dir, false) {
            Ok(_) | Err(FileError::Missing { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Writes every file to its full size over `threads` threads (blocking). On failure or
    /// stop, the files this prepare wrote are removed again and the error says so.
    pub fn prepare(&self, threads: u32) -> Result<(), FileError> {
        let cfg = &self.cfg;
        cfg.validate()?;
        let dir = resolve_dir(&cfg.work_dir, &cfg.file_dir, true)?;
        let t0 = Instant::now();
        let next = AtomicU64::new(0);
        let threads = threads.clamp(1, cfg.file_num);
        let failure = std::sync::Mutex::new(None::<FileError>);
        // The files that were not there before this prepare: the only ones a failed
        // prepare removes again (another agent sharing the directory may have made the
        // others, or an earlier prepare).
        let created = std::sync::Mutex::new(Vec::<u32>::new());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n >= u64::from(cfg.file_num) {
                            break;
                        }
                        if self.stop.load(Ordering::Relaxed) {
                            failure
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .get_or_insert(FileError::Stopped);
                            break;
                        }
                        let fresh = std::fs::symlink_metadata(file_path(&dir, n as u32)).is_err();
                        if fresh {
                            created
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(n as u32);
                        }
                        if let Err(e) = self.write_file(&dir, n as u32) {
                            self.stop.store(true, Ordering::Relaxed);
                            failure
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .get_or_insert(e);
                            break;
                        }
                    }
                });
            }
        });
        if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            let created = created.into_inner().unwrap_or_else(|p| p.into_inner());
            let removed = remove_files(&dir, &created);
            return Err(FileError::Options(format!(
                "{e}; removed the {removed} test files this prepare had created in {}",
                dir.display()
            )));
        }
        let secs = t0.elapsed().as_secs_f64().max(1e-9);
        let bytes = self.prepare_total();
        self.set_summary(format!(
            "{} files, {} bytes written in {:.2} seconds ({:.2} MiB/sec) in {}",
            cfg.file_num,
            bytes,
            secs,
            bytes as f64 / secs / 1048576.0,
            dir.display()
        ));
        Ok(())
    }

    fn write_file(&self, dir: &Path, n: u32) -> Result<(), FileError> {
        let cfg = &self.cfg;
        let path = file_path(dir, n);
        let f = open_file(&path, cfg.flags, true)?;
        let mut buf = AlignedBuf::new(cfg.block_size as usize);
        buf.fill(n as u8);
        let size = cfg.file_size();
        let mut off = 0u64;
        while off < size {
            if self.stop.load(Ordering::Relaxed) {
                return Err(FileError::Stopped);
            }
            let len = (size - off).min(cfg.block_size) as usize;
            f.write_all_at(&buf.as_slice()[..len], off)
                .map_err(|e| direct_err(&path, cfg.flags, e))?;
            off += len as u64;
            self.done.fetch_add(len as u64, Ordering::Relaxed);
        }
        // What an earlier, larger prepare left beyond the size goes; a file written at the
        // same time by another agent sharing the directory has the same bytes and size.
        f.set_len(size).map_err(|e| io_err(&path, e))?;
        f.sync_all().map_err(|e| io_err(&path, e))
    }

    /// Removes test_file.0..N-1 (regular files only), counting them. A file already gone
    /// is not an error: another agent sharing the work directory may remove it between the
    /// look and the removal.
    pub fn cleanup(&self) -> Result<(), FileError> {
        let cfg = &self.cfg;
        let dir = match resolve_dir(&cfg.work_dir, &cfg.file_dir, false) {
            Ok(d) => d,
            Err(FileError::Missing { path }) => {
                self.done.store(self.cleanup_total(), Ordering::Relaxed);
                self.set_summary(format!("no test files: {path} does not exist"));
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let mut removed = 0;
        let mut skipped = Vec::new();
        for n in 0..cfg.file_num {
            // --file-num may be in the millions: a Stop, a lost coordinator or a signal
            // must not wait for all of them.
            if self.stop.load(Ordering::Relaxed) {
                return Err(FileError::CleanupStopped {
                    removed,
                    dir: dir.display().to_string(),
                });
            }
            let path = file_path(&dir, n);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() && foreign(&path, &m).is_ok() => {
                    match std::fs::remove_file(&path) {
                        Ok(()) => removed += 1,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io_err(&path, e)),
                    }
                }
                Ok(_) => skipped.push(path.display().to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&path, e)),
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        let mut s = format!("Removed {removed} test files from {}", dir.display());
        if !skipped.is_empty() {
            s.push_str(&format!(
                "; left alone (not regular files, hard links or another user's): {}",
                skipped.join(", ")
            ));
        }
        self.set_summary(s);
        Ok(())
    }
}

/// Removes the files `created` after a failed prepare; returns how many went.
fn remove_files(dir: &Path, created: &[u32]) -> u32 {
    created
        .iter()
        .filter(|&&i| {
            let p = file_path(dir, i);
            std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file() && foreign(&p, &m).is_ok())
                && std::fs::remove_file(&p).is_ok()
        })
        .count() as u32
}

fn direct_err(path: &Path, flags: ExtraFlags, e: std::io::Error) -> FileError {
    if flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
        FileError::NoDirect {
            dir: path
                .parent()
                .map_or_else(String::new, |d| d.display().to_string()),
        }
    } else {
        io_err(path, e)
    }
}

/// The open test files of a run, shared by its workers.
pub struct FileSet {
    cfg: FileioConfig,
    mode: TestMode,
    dir: PathBuf,
    files: Vec<File>,
    /// mmap mode: each file mapped whole.
    maps: Vec<Map>,
    /// Next block of the sequential modes, over all files in turn.
    seq_next: AtomicU64,
    /// Requests begun on this agent, for --file-fsync-freq.
    requests: AtomicU64,
    /// fsyncs of a periodic round still to hand out: whichever thread asks next takes one,
    /// so the workers fsync the files in parallel, as sysbench's do.
    fsync_due: AtomicU64,
    /// The file the next periodic fsync goes to.
    fsync_next: AtomicU64,
    /// Async mode: the thread pool used when io_uring is not available.
    pool: Option<Arc<aio::Pool>>,
}

/// A shared, writable mapping of one whole file.
struct Map {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping lives as long as the FileSet; workers copy in and out of it with
// ptr::copy, like concurrent pwrite/pread on the same file would.
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what was mapped.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

impl FileSet {
    /// Opens every test file for a run (checking it exists and is big enough), maps them
    /// in mmap mode, and decides how async I/O is done.
    pub fn open(cfg: FileioConfig) -> Result<FileSet, FileError> {
        cfg.validate()?;
        let mode = cfg
            .mode
            .ok_or_else(|| FileError::Options("--file-test-mode is required for run".into()))?;
        let dir = resolve_dir(&cfg.work_dir, &cfg.file_dir, false)?;
        let want = cfg.file_size();
        let mut files = Vec::new();
        let mut maps = Vec::new();
        for n in 0..cfg.file_num {
            let path = file_path(&dir, n);
            let f = open_file(&path, cfg.flags, false)?;
            let m = f.metadata().map_err(|e| io_err(&path, e))?;
            if !m.is_file() {
                return Err(FileError::NotRegular {
                    path: path.display().to_string(),
                });
            }
            if m.len() < want {
                return Err(FileError::TooSmall {
                    path: path.display().to_string(),
                    size: m.len(),
                    want,
                });
            }
            if cfg.io_mode == IoMode::Mmap {
                use std::os::fd::AsRawFd;
                // SAFETY: shared mapping of an open file over its first `want` bytes,
                // checked for failure.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        want as usize,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED,
                        f.as_raw_fd(),
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return Err(io_err(&path, std::io::Error::last_os_error()));
                }
                maps.push(Map {
                    ptr: p.cast(),
                    len: want as usize,
                });
            }
            files.push(f);
        }
        let pool = (cfg.io_mode == IoMode::Async && aio::use_pool())
            .then(|| Arc::new(aio::Pool::new(cfg.async_backlog)));
        Ok(FileSet {
            cfg,
            mode,
            dir,
            files,
            maps,
            seq_next: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            fsync_due: AtomicU64::new(0),
            fsync_next: AtomicU64::new(0),
            pool,
        })
    }

    /// How async I/O is done on this agent ("io_uring" or "thread pool"), None otherwise.
    pub fn async_engine(&self) -> Option<&'static str> {
        match self.cfg.io_mode {
            IoMode::Async if self.pool.is_some() => Some("thread pool"),
            IoMode::Async => Some("io_uring"),
            _ => None,
        }
    }

    fn path(&self, n: usize) -> PathBuf {
        file_path(&self.dir, n as u32)
    }

    fn fsync(&self, n: usize) -> Result<(), FileError> {
        let r = if let Some(m) = self.maps.get(n) {
            // SAFETY: msync over exactly the mapping.
            let rc = unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) };
            if rc == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        } else if self.cfg.fdatasync {
            self.files[n].sync_data()
        } else {
            self.files[n].sync_all()
        };
        r.map_err(|e| io_err(&self.path(n), e))
    }
}

/// The fileio workload of a run.
pub struct Fileio(pub Arc<FileSet>);

impl ThreadWorkload for Fileio {
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop + Send> {
        let set = self.0.clone();
        let engine = match set.cfg.io_mode {
            IoMode::Async => Some(aio::Engine::new(&set, set.pool.clone())),
            _ => None,
        };
        Box::new(FileWorker {
            buf: AlignedBuf::new(set.cfg.block_size as usize),
            rng: Rng::new(set.cfg.seed.wrapping_add(u64::from(thread))),
            reads: 0,
            writes: 0,
            engine,
            set,
        })
    }

    fn finish(&self) -> Result<(), String> {
        let set = &self.0;
        if set.cfg.fsync_end && set.mode.writes() {
            for n in 0..set.files.len() {
                set.fsync(n).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

/// One request of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
}

struct FileWorker {
    set: Arc<FileSet>,
    buf: AlignedBuf,
    rng: Rng,
    /// This thread's reads and writes, for --file-rw-ratio.
    reads: u64,
    writes: u64,
    engine: Option<aio::Engine>,
}

impl FileWorker {
    /// The next request: an fsync due from a periodic round, or a read or write of a block.
    fn next_request(&mut self) -> (Op, usize, u64) {
        let set = &*self.set;
        let files = set.files.len();
        if set.fsync_due.load(Ordering::Relaxed) > 0
            && set
                .fsync_due
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
        {
            let n = set.fsync_next.fetch_add(1, Ordering::Relaxed) % files as u64;
            return (Op::Fsync, n as usize, 0);
        }
        let mode = set.mode;
        let op = match mode {
            TestMode::SeqWr | TestMode::SeqRewr | TestMode::RndWr => Op::Write,
            TestMode::SeqRd | TestMode::RndRd => Op::Read,
            TestMode::RndRw => {
                if (self.reads as f64) < set.cfg.rw_ratio * self.writes as f64 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let blocks = set.cfg.blocks_per_file();
        let (file, block) = if mode.sequential() {
            let i = set.seq_next.fetch_add(1, Ordering::Relaxed) % (blocks * files as u64);
            ((i / blocks) as usize, i % blocks)
        } else {
            (
                self.rng.uniform(0, files as u64 - 1) as usize,
                self.rng.uniform(0, blocks - 1),
            )
        };
        match op {
            Op::Read => self.reads += 1,
            _ => self.writes += 1,
        }
        if mode.writes() && set.cfg.fsync_freq > 0 && !set.cfg.fsync_all {
            let n = set.requests.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(u64::from(set.cfg.fsync_freq)) {
                // The following events, on any thread, fsync every file in turn.
                set.fsync_due.fetch_add(files as u64, Ordering::Relaxed);
            }
        }
        (op, file, block * set.cfg.block_size)
    }

    fn sync_request(&mut self, op: Op, file: usize, off: u64, io: &mut IoCounters) -> Step {
        let set = &*self.set;
        let bs = set.cfg.block_size;
        let r = match op {
            Op::Fsync => set.fsync(file).map(|_| io.fsyncs += 1),
            Op::Read => {
                if let Some(m) = set.maps.get(file) {
                    // SAFETY: off + bs <= file size = mapping length (blocks_per_file).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            m.ptr.add(off as usize),
                            self.buf.as_mut_slice().as_mut_ptr(),
                            bs as usize,
                        )
                    };
                    Ok(())
                } else {
                    set.files[file]
                        .read_exact_at(self.buf.as_mut_slice(), off)
                        .map_err(|e| io_err(&set.path(file), e))
                }
                .map(|_| {
                    io.reads += 1;
                    io.bytes_read += bs;
                })
            }
            Op::Write => {
                if let Some(m) = set.maps.get(file) {
                    // SAFETY: as for reads.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            self.buf.as_slice().as_ptr(),
                            m.ptr.add(off as usize),
                            bs as usize,
                        )
                    };
                    Ok(())
                } else {
                    set.files[file]
                        .write_all_at(self.buf.as_slice(), off)
                        .map_err(|e| io_err(&set.path(file), e))
                }
                .map(|_| {
                    io.writes += 1;
                    io.bytes_written += bs;
                })
                .and_then(|_| {
                    if set.cfg.fsync_all {
                        set.fsync(file).map(|_| io.fsyncs += 1)
                    } else {
                        Ok(())
                    }
                })
            }
        };
        match r {
            Ok(()) => Step::Done,
            Err(e) => Step::Fatal(e.to_string()),
        }
    }
}

impl WorkerLoop for FileWorker {
    fn event(&mut self, _stop: &AtomicBool, io: &mut IoCounters) -> Step {
        let (op, file, off) = self.next_request();
        match self.engine.as_mut() {
            None => self.sync_request(op, file, off, io),
            Some(engine) => match engine.submit(&self.set, op, file, off, io) {
                Ok(()) => Step::Done,
                Err(e) => Step::Fatal(e),
            },
        }
    }

    fn finish(&mut self, io: &mut IoCounters) -> Result<(), String> {
        match self.engine.as_mut() {
            Some(engine) => engine.drain(&self.set, io),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetbench_model::workloads::fileio::MAX_FILES;

    fn cfg(work: &Path) -> FileioConfig {
        FileioConfig {
            work_dir: work.to_path_buf(),
            file_dir: String::new(),
            file_num: 4,
            block_size: 4096,
            total_size: 4 * 64 * 1024,
            mode: None,
            io_mode: IoMode::Sync,
            async_backlog: 8,
            flags: ExtraFlags::default(),
            fsync_freq: 10,
            fsync_all: false,
            fsync_end: true,
            fdatasync: false,
            rw_ratio: 1.5,
            seed: 3,
        }
    }

    #[test]
    fn a_hard_link_to_an_outside_file_is_neither_written_nor_removed() {
        let work = tmp("hardlink");
        let outside = tmp("hardlink-outside").join("precious");
        std::fs::write(&outside, b"keep me").unwrap();
        std::fs::hard_link(&outside, work.join("test_file.1")).unwrap();
        let job = FileJob::new(cfg(&work));
        let e = job.prepare(2).unwrap_err().to_string();
        assert!(e.contains("test_file.1 has 2 links: refused"), "{e}");
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep me");
        // The link is left in place by prepare's own clean-up and by cleanup.
        assert!(work.join("test_file.1").exists());
        let job = FileJob::new(cfg(&work));
        job.cleanup().unwrap();
        assert!(job.summary().contains("left alone"), "{}", job.summary());
        assert!(work.join("test_file.1").exists());
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep me");
        // A run refuses to open it as well.
        let run = FileioConfig {
            mode: Some(TestMode::SeqRd),
            file_num: 2,
            total_size: 2 * 64 * 1024,
            ..cfg(&work)
        };
        std::fs::write(work.join("test_file.0"), vec![0u8; 64 * 1024]).unwrap();
        let e = FileSet::open(run).err().expect("refused").to_string();
        assert!(e.contains("has 2 links"), "{e}");
        std::fs::remove_dir_all(&work).unwrap();
        std::fs::remove_dir_all(outside.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_failed_prepare_removes_only_the_files_it_created() {
        let work = tmp("failed-prepare");
        // test_file.0 is another agent's (it shares the directory); test_file.3 cannot be
        // written (a directory), so the prepare fails.
        std::fs::write(work.join("test_file.0"), vec![0u8; 64 * 1024]).unwrap();
        std::fs::create_dir(work.join("test_file.3")).unwrap();
        let e = FileJob::new(cfg(&work)).prepare(1).unwrap_err().to_string();
        assert!(
            e.contains("removed the 2 test files this prepare had created"),
            "{e}"
        );
        assert!(work.join("test_file.0").exists());
        assert!(!work.join("test_file.1").exists());
        assert!(!work.join("test_file.2").exists());
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn cleanup_stops_when_asked() {
        let work = tmp("stopclean");
        let job = FileJob::new(FileioConfig {
            file_num: MAX_FILES,
            total_size: u64::from(MAX_FILES) << 20,
            ..cfg(&work)
        });
        job.stop.store(true, Ordering::Relaxed);
        let e = job.cleanup().unwrap_err().to_string();
        assert!(
            e.starts_with("cleanup stopped after removing 0 test files"),
            "{e}"
        );
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn sizes_the_host_cannot_give_are_refused_before_anything_is_written() {
        let work = tmp("host");
        assert!(check_host(&cfg(&work), 2, true).is_ok());
        assert!(check_host(&cfg(&work), 2, false).is_ok());
        // Row 2 of issue 17: one 1 TiB file with a 1 TiB block.
        let huge = FileioConfig {
            file_num: 1,
            block_size: 1 << 40,
            total_size: 1 << 40,
            ..cfg(&work)
        };
        huge.validate().unwrap();
        let e = check_host(&huge, 1, true).unwrap_err().to_string();
        assert!(e.contains("I/O buffers"), "{e}");
        // Files larger than the disk, with small blocks.
        let big = FileioConfig {
            file_num: 1,
            total_size: 1 << 60,
            ..cfg(&work)
        };
        let e = check_host(&big, 1, true).unwrap_err().to_string();
        assert!(e.contains("bytes free"), "{e}");
        assert!(std::fs::read_dir(&work).unwrap().next().is_none());
        let many = FileioConfig {
            file_num: MAX_FILES + 1,
            total_size: u64::MAX,
            ..cfg(&work)
        };
        assert!(many.validate().is_err());
        std::fs::remove_dir_all(&work).unwrap();
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fb-fileio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap()
    }

    #[test]
    fn prepares_racing_to_create_the_same_dir_all_succeed() {
        let work = tmp("race");
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let w = work.clone();
                std::thread::spawn(move || resolve_dir(&w, "a/b/c", true))
            })
            .collect();
        for h in handles {
            let got = h.join().unwrap().expect("a racing prepare failed");
            assert_eq!(got, work.join("a/b/c"));
        }
        assert!(work.join("a/b/c").is_dir());
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn jobs_sharing_one_directory_prepare_and_clean_up_side_by_side() {
        // Two agents on one host with one work directory: each prepares and removes the
        // same files at the same time; neither may fail because the other was first.
        let work = tmp("shared");
        for round in 0..20 {
            for prepare in [true, false] {
                let jobs: Vec<_> = (0..2).map(|_| FileJob::new(cfg(&work))).collect();
                std::thread::scope(|s| {
                    let hs: Vec<_> = jobs
                        .iter()
                        .map(|j| s.spawn(move || if prepare { j.prepare(2) } else { j.cleanup() }))
                        .collect();
                    for h in hs {
                        h.join()
                            .unwrap()
                            .unwrap_or_else(|e| panic!("round {round}, prepare {prepare}: {e}"));
                    }
                });
                for n in 0..4 {
                    let p = file_path(&work, n);
                    if prepare {
                        let bytes = std::fs::read(&p).unwrap();
                        assert_eq!(bytes.len(), 64 * 1024, "{}", p.display());
                        assert!(bytes.iter().all(|&b| b == n as u8), "{}", p.display());
                    } else {
                        assert!(!p.exists(), "{}", p.display());
                    }
                }
            }
        }
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn prepare_over_larger_files_trims_them_to_size() {
        let work = tmp("trim");
        std::fs::write(file_path(&work, 1), vec![7u8; 200 * 1024]).unwrap();
        FileJob::new(cfg(&work)).prepare(1).unwrap();
        let bytes = std::fs::read(file_path(&work, 1)).unwrap();
        assert_eq!(bytes.len(), 64 * 1024);
        assert!(bytes.iter().all(|&b| b == 1));
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn dirs_that_leave_the_work_directory_are_refused() {
        let work = tmp("escape");
        for bad in ["/tmp", "..", "a/../../b", "../x"] {
            assert!(
                matches!(resolve_dir(&work, bad, true), Err(FileError::Escape { .. })),
                "{bad}"
            );
        }
        std::os::unix::fs::symlink("/tmp", work.join("out")).unwrap();
        assert!(matches!(
            resolve_dir(&work, "out/sub", true),
            Err(FileError::Escape { .. })
        ));
        assert!(!Path::new("/tmp/sub").exists() || Path::new("/tmp/sub").is_dir());
        assert_eq!(resolve_dir(&work, "a/b", true).unwrap(), work.join("a/b"));
        assert_eq!(resolve_dir(&work, "", false).unwrap(), work);
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn prepare_writes_exact_sizes_and_cleanup_removes_only_test_files() {
        let work = tmp("prep");
        std::fs::write(work.join("keep.txt"), b"x").unwrap();
        let job = FileJob::new(cfg(&work));
        job.prepare(2).unwrap();
        for n in 0..4 {
            assert_eq!(
                std::fs::metadata(file_path(&work, n)).unwrap().len(),
                64 * 1024
            );
        }
        assert_eq!(job.done.load(Ordering::Relaxed), job.prepare_total());
        let job = FileJob::new(cfg(&work));
        job.cleanup().unwrap();
        assert!(!file_path(&work, 0).exists());
        assert!(work.join("keep.txt").exists());
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn request_mix_follows_the_mode() {
        let work = tmp("mix");
        FileJob::new(cfg(&work)).prepare(1).unwrap();
        let mut c = cfg(&work);
        c.mode = Some(TestMode::RndRw);
        let set = Arc::new(FileSet::open(c).unwrap());
        let w = Fileio(set.clone());
        let mut worker = w.worker(0);
        let mut io = IoCounters::default();
        let stop = AtomicBool::new(false);
        for _ in 0..1000 {
            assert_eq!(worker.event(&stop, &mut io), Step::Done);
        }
        // 1.5 reads per write, and a round of 4 fsyncs after every 10 requests: 71 cycles
        // of 14 events, then 6 requests.
        assert_eq!((io.reads + io.writes, io.fsyncs), (716, 284));
        assert!(
            (io.reads as f64 / io.writes as f64 - 1.5).abs() < 0.01,
            "{io:?}"
        );
        assert_eq!(io.bytes_read, io.reads * 4096);
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn run_without_prepare_names_the_file() {
        let work = tmp("missing");
        let mut c = cfg(&work);
        c.mode = Some(TestMode::SeqRd);
        match FileSet::open(c) {
            Err(FileError::Missing { path }) => assert!(path.ends_with("test_file.0"), "{path}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("opened missing files"),
        }
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn direct_needs_512_byte_blocks() {
        let mut c = cfg(Path::new("/nonexistent"));
        c.flags.direct = true;
        c.block_size = 1000;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("multiple of 512"), "{e}");
    }
}
