//! The memory test's options as a run carries them.

/// What an event does with each word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oper {
    Read,
    Write,
    None,
}

impl Oper {
    pub fn parse(s: &str) -> Option<Oper> {
        match s {
            "read" => Some(Oper::Read),
            "write" => Some(Oper::Write),
            "none" => Some(Oper::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        }
    }
}

/// Options of a memory run on this agent.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryConfig {
    pub block_size: usize,
    /// One block shared by every thread (global) or one per thread (local).
    pub global: bool,
    pub hugetlb: bool,
    pub oper: Oper,
    /// Random word offsets instead of a sequential walk.
    pub random: bool,
    pub seed: u64,
}

/// Why a memory run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("memory block size must be a positive multiple of 8 bytes, not {0}")]
    BlockSize(usize),
    #[error("{0}")]
    TooLarge(String),
    #[error("cannot allocate {size} bytes of huge pages (--memory-hugetlb=on): {source}")]
    HugeTlb { size: usize, source: std::io::Error },
}

/// the memory this host can still give. Used by the coordinator and the agent alike.
pub fn check_sizes(block_size: u64, threads: u32, global: bool) -> Result<(), MemoryError> {
    if block_size == 0 || !block_size.is_multiple_of(8) {
        return Err(MemoryError::BlockSize(
            usize::try_from(block_size).unwrap_or(usize::MAX),
        ));
    }
    let blocks = if global { 1 } else { u64::from(threads) };
    let what = if global {
        "the memory block (--memory-block-size)".to_string()
    } else {
        format!(
            "{threads} memory blocks (--memory-block-size, one per thread with --memory-scope=local)"
        )
    };
    crate::limits::check_memory(block_size.saturating_mul(blocks), &what)
        .map_err(MemoryError::TooLarge)
}
