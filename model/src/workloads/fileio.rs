//! The fileio test's options as a run carries them (sysbench's --file-* options).

use std::path::{Component, Path, PathBuf};

/// sysbench's --file-test-mode values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestMode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
}

impl TestMode {
    pub const NAMES: &'static [&'static str] =
        &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];

    pub fn parse(s: &str) -> Option<TestMode> {
        Some(match s {
            "seqwr" => TestMode::SeqWr,
            "seqrewr" => TestMode::SeqRewr,
            "seqrd" => TestMode::SeqRd,
            "rndrd" => TestMode::RndRd,
            "rndwr" => TestMode::RndWr,
            "rndrw" => TestMode::RndRw,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TestMode::SeqWr => "seqwr",
            TestMode::SeqRewr => "seqrewr",
            TestMode::SeqRd => "seqrd",
            TestMode::RndRd => "rndrd",
            TestMode::RndWr => "rndwr",
            TestMode::RndRw => "rndrw",
        }
    }

    /// sysbench's description, for the run's header.
    pub fn describe(self) -> &'static str {
        match self {
            TestMode::SeqWr => "sequential write (creation) test",
            TestMode::SeqRewr => "sequential rewrite test",
            TestMode::SeqRd => "sequential read test",
            TestMode::RndRd => "random read test",
            TestMode::RndWr => "random write test",
            TestMode::RndRw => "random r/w test",
        }
    }

    pub fn sequential(self) -> bool {
        matches!(self, TestMode::SeqWr | TestMode::SeqRewr | TestMode::SeqRd)
    }

    /// Modes that write, and so fsync periodically.
    pub fn writes(self) -> bool {
        !matches!(self, TestMode::SeqRd | TestMode::RndRd)
    }
}

/// sysbench's --file-io-mode values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    Sync,
    Async,
    Mmap,
}

impl IoMode {
    pub fn parse(s: &str) -> Option<IoMode> {
        Some(match s {
            "sync" => IoMode::Sync,
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            IoMode::Sync => "sync",
            IoMode::Async => "async",
            IoMode::Mmap => "mmap",
        }
    }
}

/// --file-extra-flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtraFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

impl ExtraFlags {
    /// Parses a comma-separated list of sync, dsync, direct (empty = none).
    pub fn parse(s: &str) -> Option<ExtraFlags> {
        let mut f = ExtraFlags::default();
        if s.trim().is_empty() {
            return Some(f);
        }
        // An empty item ("sync,,direct") is refused like any other unknown one.
        for part in s.split(',').map(str::trim) {
            match part {
                "sync" => f.sync = true,
                "dsync" => f.dsync = true,
                "direct" => f.direct = true,
                _ => return None,
            }
        }
        Some(f)
    }

    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.sync {
            v.push("sync");
        }
        if self.dsync {
            v.push("dsync");
        }
        if self.direct {
            v.push("direct");
        }
        v
    }

    pub fn bits(self) -> i32 {
        let mut b = 0;
        if self.sync {
            b |= libc::O_SYNC;
        }
        if self.dsync {
            b |= libc::O_DSYNC;
        }
        if self.direct {
            b |= libc::O_DIRECT;
        }
        b
    }
}

/// The most test files in one set: a run keeps every one of them open.
pub const MAX_FILES: u32 = 1_000_000;

/// The most asynchronous operations queued per thread (io_uring's own queue limit).
pub const MAX_ASYNC_BACKLOG: u32 = 32_768;

/// Options of a fileio prepare, run or cleanup on this agent.
#[derive(Debug, Clone, PartialEq)]
pub struct FileioConfig {
    /// The agent's work directory (absolute, canonical).
    pub work_dir: PathBuf,
    /// --file-dir, relative to `work_dir` ("" = the work directory).
    pub file_dir: String,
    pub file_num: u32,
    pub block_size: u64,
    pub total_size: u64,
    /// None for prepare and cleanup.
    pub mode: Option<TestMode>,
    pub io_mode: IoMode,
    pub async_backlog: u32,
    pub flags: ExtraFlags,
    pub fsync_freq: u32,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fdatasync: bool,
    pub rw_ratio: f64,
    pub seed: u64,
}

impl FileioConfig {
    /// Size of each file: the total divided evenly, as sysbench does.
    pub fn file_size(&self) -> u64 {
        self.total_size / u64::from(self.file_num.max(1))
    }

    pub fn blocks_per_file(&self) -> u64 {
        self.file_size() / self.block_size.max(1)
    }

    /// Checks the options that do not depend on the file system.
    pub fn validate(&self) -> Result<(), FileError> {
        if self.file_num == 0 {
            return Err(FileError::Options("--file-num must be at least 1".into()));
        }
        if self.block_size == 0 {
            return Err(FileError::Options(
                "--file-block-size must be at least 1".into(),
            ));
        }
        if self.file_size() < self.block_size {
            return Err(FileError::Options(format!(
                "each file would be {} bytes (--file-total-size / --file-num), smaller than one block of {} bytes (--file-block-size)",
                self.file_size(),
                self.block_size
            )));
        }
        if self.flags.direct && !self.block_size.is_multiple_of(512) {
            return Err(FileError::Options(format!(
                "--file-extra-flags=direct needs a --file-block-size that is a multiple of 512, not {}",
                self.block_size
            )));
        }
        let rel = Path::new(&self.file_dir);
        if rel.is_absolute() || rel.components().any(|c| c == Component::ParentDir) {
            return Err(FileError::Escape {
                dir: self.file_dir.clone(),
                why: "it must be relative to the agent's work directory and must not contain '..'"
                    .into(),
            });
        }
        if self.io_mode == IoMode::Async && self.async_backlog == 0 {
            return Err(FileError::Options(
                "--file-async-backlog must be at least 1".into(),
            ));
        }
        if self.file_num > MAX_FILES {
            return Err(FileError::Options(format!(
                "--file-num={} is more than the {MAX_FILES} files accepted",
                self.file_num
            )));
        }
        if self.async_backlog > MAX_ASYNC_BACKLOG {
            return Err(FileError::Options(format!(
                "--file-async-backlog={} is more than the {MAX_ASYNC_BACKLOG} accepted",
                self.async_backlog
            )));
        }
        Ok(())
    }
}

/// What went wrong with the files; every message names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Options(String),
    #[error("--file-dir '{dir}' is refused: {why}")]
    Escape { dir: String, why: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "{path} is missing: run fleetbench fileio with the same --file-num, --file-total-size and --file-dir and the prepare command first"
    )]
    Missing { path: String },
    #[error(
        "{path} is {size} bytes, smaller than the {want} bytes each file needs: run prepare again with the same --file-num and --file-total-size"
    )]
    TooSmall { path: String, size: u64, want: u64 },
    #[error("{path} is not a regular file (a symbolic link or a directory): refused")]
    NotRegular { path: String },
    #[error(
        "{path} {why}: refused, it may be another file's name (a hard link) in the work directory"
    )]
    Foreign { path: String, why: String },
    #[error("the file system of {dir} does not support O_DIRECT (--file-extra-flags=direct)")]
    NoDirect { dir: String },
    #[error("prepare stopped")]
    Stopped,
    #[error("cleanup stopped after removing {removed} test files from {dir}")]
    CleanupStopped { removed: u32, dir: String },
}
