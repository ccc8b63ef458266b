//! The memory workload: each event reads, writes or just walks one block of memory, word by
//! word, sequentially or at random word offsets, as sysbench's memory test does.
//!
//! Words are `AtomicU64` with relaxed loads and stores: on x86-64 and arm64 those compile to
//! plain 8-byte moves (what sysbench's word loop executes), and they keep the global scope,
//! where every thread writes the same block, free of data races.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::{Step, ThreadWorkload, WorkerLoop};
use crate::rand::Rng;
use fleetbench_model::counters::IoCounters;
use fleetbench_model::workloads::memory::{MemoryConfig, MemoryError, Oper, check_sizes};

/// A block of words, from the heap or from huge pages.
struct Block {
    ptr: *mut AtomicU64,
    words: usize,
    /// Mapped length when the block came from mmap (huge pages), else 0.
    mapped: usize,
    _heap: Option<Box<[AtomicU64]>>,
}

// SAFETY: the block is only accessed through `&[AtomicU64]`, which is Sync; the pointer
// stays valid until drop.
unsafe impl Send for Block {}
unsafe impl Sync for Block {}

impl Block {
    fn new(bytes: usize, hugetlb: bool) -> Result<Block, MemoryError> {
        let words = bytes / 8;
        if !hugetlb {
            let mut heap: Box<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
            return Ok(Block {
                ptr: heap.as_mut_ptr(),
                words,
                mapped: 0,
                _heap: Some(heap),
            });
        }
        // Huge pages are 2 MiB on the platforms we run on; round the mapping up.
        let len = bytes.div_ceil(2 << 20) * (2 << 20);
        // SAFETY: anonymous private mapping, checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MemoryError::HugeTlb {
                size: bytes,
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(Block {
            ptr: p.cast(),
            words,
            mapped: len,
            _heap: None,
        })
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` points at `words` initialised (zeroed) AtomicU64s that live as long
        // as `self`; mmap memory is zero-filled, and zero is a valid AtomicU64.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // SAFETY: unmapping exactly what `new` mapped.
            unsafe {
                libc::munmap(self.ptr.cast(), self.mapped);
            }
        }
    }
}

/// The memory workload on this agent.
pub struct Memory {
    cfg: MemoryConfig,
    /// The shared block of the global scope.
    global: Option<Arc<Block>>,
}

/// Checks a block size for `threads` threads before anything is allocated: a positive
/// multiple of 8 bytes, and the blocks (one, or one per thread in the local scope) within
impl Memory {
    /// Checks the sizes for `threads` threads, then allocates the shared block.
    pub fn new(cfg: MemoryConfig, threads: u32) -> Result<Memory, MemoryError> {
        check_sizes(cfg.block_size as u64, threads, cfg.global)?;
        let global = if cfg.global {
            Some(Arc::new(Block::new(cfg.block_size, cfg.hugetlb)?))
        } else {
            // Fail now rather than in a worker when huge pages are not there.
            if cfg.hugetlb {
                Block::new(cfg.block_size, true)?;
            }
            None
        };
        Ok(Memory { cfg, global })
    }
}

/// A memory run: the global block (with `--memory-scope=global`) allocated now, within
/// what the host has.
pub fn plan(
    spec: &fleetbench_model::spec::MemorySpec,
    share: &super::Share,
) -> Result<Box<dyn super::Workload>, super::PlanError> {
    let failed = |e: MemoryError| super::PlanError::Failed(e.to_string());
    let cfg = spec.config(share.seed).map_err(failed)?;
    Ok(super::Threads::boxed(
        Memory::new(cfg, share.threads).map_err(failed)?,
    ))
}

impl ThreadWorkload for Memory {
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop + Send> {
        let block = match &self.global {
            Some(b) => b.clone(),
            // Checked in `new`; a failure here (memory exhausted since) falls back to the heap.
            None => Arc::new(
                Block::new(self.cfg.block_size, self.cfg.hugetlb)
                    .or_else(|_| Block::new(self.cfg.block_size, false))
                    .expect("heap allocation does not fail"),
            ),
        };
        Box::new(MemoryWorker {
            block,
            oper: self.cfg.oper,
            random: self.cfg.random,
            rng: Rng::new(self.cfg.seed.wrapping_add(u64::from(thread))),
        })
    }
}

struct MemoryWorker {
    block: Arc<Block>,
    oper: Oper,
    random: bool,
    rng: Rng,
}

impl WorkerLoop for MemoryWorker {
    fn event(&mut self, _stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        let words = self.block.words();
        if self.random {
            random_pass(words, self.oper, &mut self.rng);
        } else {
            seq_pass(words, self.oper);
        }
        Step::Done
    }
}

/// One sequential pass over the block.
#[inline(never)]
pub fn seq_pass(words: &[AtomicU64], oper: Oper) {
    match oper {
        Oper::Write => {
            for (i, w) in words.iter().enumerate() {
                w.store(i as u64, Ordering::Relaxed);
            }
        }
        Oper::Read => {
            let mut acc = 0u64;
            for w in words {
                acc ^= w.load(Ordering::Relaxed);
            }
            std::hint::black_box(acc);
        }
        Oper::None => {
            for w in words {
                std::hint::black_box(w as *const AtomicU64);
            }
        }
    }
}

/// As many accesses as the block has words, each at a random word.
#[inline(never)]
pub fn random_pass(words: &[AtomicU64], oper: Oper, rng: &mut Rng) {
    let last = words.len() as u64 - 1;
    let mut acc = 0u64;
    for _ in 0..words.len() {
        let i = rng.uniform(0, last) as usize;
        match oper {
            Oper::Write => words[i].store(i as u64, Ordering::Relaxed),
            Oper::Read => acc ^= words[i].load(Ordering::Relaxed),
            Oper::None => acc ^= i as u64,
        }
    }
    std::hint::black_box(acc);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(oper: Oper, random: bool, global: bool) -> MemoryConfig {
        MemoryConfig {
            block_size: 1024,
            global,
            hugetlb: false,
            oper,
            random,
            seed: 7,
        }
    }

    #[test]
    fn sequential_write_touches_every_word() {
        let m = Memory::new(cfg(Oper::Write, false, true), 1).unwrap();
        let mut w = m.worker(0);
        let stop = AtomicBool::new(false);
        assert_eq!(w.event(&stop, &mut IoCounters::default()), Step::Done);
        let words = m.global.as_ref().unwrap().words();
        assert_eq!(words.len(), 128);
        assert!(
            words
                .iter()
                .enumerate()
                .all(|(i, v)| v.load(Ordering::Relaxed) == i as u64)
        );
    }

    #[test]
    fn random_write_stays_inside_the_block() {
        let m = Memory::new(cfg(Oper::Write, true, true), 1).unwrap();
        let mut w = m.worker(1);
        for _ in 0..50 {
            w.event(&AtomicBool::new(false), &mut IoCounters::default());
        }
        let words = m.global.as_ref().unwrap().words();
        // Each written word holds its own index; unwritten ones are still zero.
        let written = words
            .iter()
            .enumerate()
            .filter(|(i, v)| *i > 0 && v.load(Ordering::Relaxed) == *i as u64)
            .count();
        assert!(written > 100, "only {written} of 127 words written");
    }

    #[test]
    fn block_size_must_be_whole_words() {
        let mut c = cfg(Oper::Read, false, false);
        c.block_size = 12;
        assert!(matches!(Memory::new(c, 1), Err(MemoryError::BlockSize(12))));
        // Nothing is allocated for a block the host cannot hold, in either scope.
        // (block size, global, threads): one huge global block, a large block per thread.
        for (block_size, global, threads) in [(1 << 62, true, 1), (1 << 30, false, 1_000_000)] {
            let c = MemoryConfig {
                block_size,
                ..cfg(Oper::Write, false, global)
            };
            let r = Memory::new(c, threads);
            assert!(matches!(r, Err(MemoryError::TooLarge(_))), "{block_size}");
        }
    }
}
