//! What a run asks of each workload, as the coordinator and the agents both see it: one spec
//! type per workload with its name, its validation and the options a result records of it.
//!
//! The coordinator's plan builds these from flags and checks them with [`Workload::validate`];
//! an agent decodes the same types from a Start message (crate::wire) and calls the same
//! function, so a hand-made Start is held to the bounds of the command line. Checks that
//! depend on the host (memory, threads, files) stay with the agent's workloads.

use serde_json::Value;

use crate::workloads::fileio::FileioConfig;
use crate::workloads::oltp::{OltpConfig, Script};

use crate::workloads::memory::Oper;
use crate::workloads::tpcc::TpccConfig;

/// Why a spec is refused; the message names the option as the command line spells it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("invalid value for --{option}: '{value}' ({why})")]
    Invalid {
        option: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("{0}")]
    Options(String),
}

impl SpecError {
    pub fn invalid(option: &'static str, value: impl ToString, why: &'static str) -> SpecError {
        SpecError::Invalid {
            option,
            value: value.to_string(),
            why,
        }
    }
}

/// One workload's spec: what the coordinator plans and an agent runs.
pub trait Spec {
    /// The test's name as the user gives it (sysbench's names).
    fn name(&self) -> &'static str;
    /// The bounds both sides hold the spec to.
    fn validate(&self) -> Result<(), SpecError>;
    /// The options a result document records, under their JSON names (docs/result-format.md).
    fn fields(&self) -> Vec<(&'static str, Value)>;
}

/// cpu's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSpec {
    /// `--cpu-max-prime`: each event counts the primes below it.
    pub max_prime: u64,
}

impl Spec for CpuSpec {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn validate(&self) -> Result<(), SpecError> {
        if self.max_prime < 3 {
            return Err(SpecError::invalid(
                "cpu-max-prime",
                self.max_prime,
                "must be at least 3",
            ));
        }
        Ok(())
    }

    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("cpu_max_prime", self.max_prime.into())]
    }
}

/// threads' options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadsSpec {
    /// `--thread-yields`: lock, yield, unlock rounds per event.
    pub yields: u32,
    /// `--thread-locks`: mutexes the events take in turn.
    pub locks: u32,
}

impl Spec for ThreadsSpec {
    fn name(&self) -> &'static str {
        "threads"
    }

    fn validate(&self) -> Result<(), SpecError> {
        if self.locks == 0 {
            return Err(SpecError::invalid("thread-locks", 0, "must be at least 1"));
        }
        Ok(())
    }

    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("thread_yields", self.yields.into()),
            ("thread_locks", self.locks.into()),
        ]
    }
}

/// mutex's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MutexSpec {
    /// `--mutex-num`: mutexes to pick from.
    pub num: u32,
    /// `--mutex-locks`: rounds of each thread's one event.
    pub locks: u32,
    /// `--mutex-loops`: empty iterations before each lock.
    pub loops: u32,
}

impl Spec for MutexSpec {
    fn name(&self) -> &'static str {
        "mutex"
    }

    fn validate(&self) -> Result<(), SpecError> {
        if self.num == 0 {
            return Err(SpecError::invalid("mutex-num", 0, "must be at least 1"));
        }
        Ok(())
    }

    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("mutex_num", self.num.into()),
            ("mutex_locks", self.locks.into()),
            ("mutex_loops", self.loops.into()),
        ]
    }
}

/// memory's options, as planned over the whole run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemorySpec {
    /// `--memory-block-size`: bytes each event walks.
    pub block_size: u64,
    /// `--memory-total-size`: over the whole run (all agents); the coordinator ends the run
    /// after total_size / block_size events. Not sent to agents.
    pub total_size: u64,
    /// `--memory-scope`: one block shared by every thread (global) or one per thread.
    pub global: bool,
    pub hugetlb: bool,
    pub oper: Oper,
    /// `--memory-access-mode=rnd`: random word offsets instead of a sequential walk.
    pub random: bool,
}

impl Default for MemorySpec {
    /// sysbench's defaults.
    fn default() -> MemorySpec {
        MemorySpec {
            block_size: 1024,
            total_size: 100 << 30,
            global: true,
            hugetlb: false,
            oper: Oper::Write,
            random: false,
        }
    }
}

impl Spec for MemorySpec {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn validate(&self) -> Result<(), SpecError> {
        if self.block_size == 0 || !self.block_size.is_multiple_of(8) {
            return Err(SpecError::invalid(
                "memory-block-size",
                self.block_size,
                "must be a positive multiple of 8 bytes",
            ));
        }
        if self.total_size < self.block_size {
            return Err(SpecError::invalid(
                "memory-total-size",
                self.total_size,
                "must be at least one block (--memory-block-size)",
            ));
        }
        Ok(())
    }

    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("memory_block_size", self.block_size.into()),
            ("memory_total_size", self.total_size.into()),
            (
                "memory_scope",
                if self.global { "global" } else { "local" }.into(),
            ),
            ("memory_hugetlb", self.hugetlb.into()),
            ("memory_oper", self.oper.name().into()),
            (
                "memory_access_mode",
                if self.random { "rnd" } else { "seq" }.into(),
            ),
        ]
    }
}

/// The commands a test may implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Prepare,
    Run,
    Cleanup,
    /// Reads every table into the server's buffer pool (sysbench 1.0's prewarm).
    Prewarm,
    /// TPC-C: the consistency conditions over the tables.
    Check,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
            Command::Prewarm => "prewarm",
            Command::Check => "check",
        }
    }
}

/// How the tables are shared among agents during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableSplit {
    /// Every thread picks among all tables (sysbench's semantics).
    Shared,
    /// Each agent owns a disjoint, contiguous set of tables.
    Partition,
}

impl TableSplit {
    pub fn name(self) -> &'static str {
        match self {
            TableSplit::Shared => "shared",
            TableSplit::Partition => "partition",
        }
    }
}

/// OLTP: the configuration with every table (1..=tables) mapped to its target, plus how the
/// coordinator shares the tables out (an agent's Start carries only its own tables).
#[derive(Debug, Clone, PartialEq)]
pub struct OltpSpec {
    pub config: OltpConfig,
    pub split: TableSplit,
}

impl Spec for OltpSpec {
    fn name(&self) -> &'static str {
        self.config.script.name()
    }

    fn validate(&self) -> Result<(), SpecError> {
        self.config.validate().map_err(SpecError::Options)
    }

    fn fields(&self) -> Vec<(&'static str, Value)> {
        let c = &self.config;
        let mut f: Vec<(&'static str, Value)> = vec![
            ("tables", c.tables.len().into()),
            ("table_size", c.table_size.into()),
            ("range_size", c.range_size.into()),
            ("point_selects", c.point_selects.into()),
            ("simple_ranges", c.simple_ranges.into()),
            ("sum_ranges", c.sum_ranges.into()),
            ("order_ranges", c.order_ranges.into()),
            ("distinct_ranges", c.distinct_ranges.into()),
            ("index_updates", c.index_updates.into()),
            ("non_index_updates", c.non_index_updates.into()),
            ("delete_inserts", c.delete_inserts.into()),
            ("range_selects", c.range_selects.into()),
            ("auto_inc", c.auto_inc.into()),
            ("skip_trx", c.skip_trx.into()),
            ("secondary", c.secondary.into()),
            ("create_secondary", c.create_secondary.into()),
            ("mysql_storage_engine", c.engine.clone().into()),
            (
                "db_ps_mode",
                if c.prepared { "auto" } else { "disable" }.into(),
            ),
            ("rand_type", c.distribution.name().into()),
        ];
        for (option, value) in c.distribution.options() {
            f.push((option, value.into()));
        }
        f.push(("table_split", self.split.name().into()));
        // The targets without their passwords.
        let targets: Vec<Value> = c
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({
                    "name": t.name, "host": t.host, "port": t.port, "socket": t.socket,
                    "user": t.user, "database": t.database, "tables": c.tables_on(i),
                })
            })
            .collect();
        f.push(("targets", targets.into()));
        f
    }
}

impl Spec for FileioConfig {
    fn name(&self) -> &'static str {
        "fileio"
    }

    fn validate(&self) -> Result<(), SpecError> {
        FileioConfig::validate(self).map_err(|e| SpecError::Options(e.to_string()))
    }

    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("file_num", self.file_num.into()),
            ("file_block_size", self.block_size.into()),
            ("file_total_size", self.total_size.into()),
            ("file_test_mode", self.mode.map_or("", |m| m.name()).into()),
            ("file_io_mode", self.io_mode.name().into()),
            ("file_async_backlog", self.async_backlog.into()),
            ("file_extra_flags", self.flags.names().join(",").into()),
            ("file_fsync_freq", self.fsync_freq.into()),
            ("file_fsync_all", self.fsync_all.into()),
            ("file_fsync_end", self.fsync_end.into()),
            (
                "file_fsync_mode",
                if self.fdatasync { "fdatasync" } else { "fsync" }.into(),
            ),
            ("file_rw_ratio", self.rw_ratio.into()),
            ("file_dir", self.file_dir.clone().into()),
        ]
    }
}

impl Spec for TpccConfig {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn validate(&self) -> Result<(), SpecError> {
        TpccConfig::validate(self).map_err(SpecError::Options)
    }

    fn fields(&self) -> Vec<(&'static str, Value)> {
        let t = &self.target;
        vec![
            ("warehouses", self.warehouses.into()),
            ("foreign_keys", self.foreign_keys.into()),
            (
                "warehouse_split",
                if self.partition {
                    "partition"
                } else {
                    "random"
                }
                .into(),
            ),
            (
                "keying_think",
                if self.keying_think { "spec" } else { "off" }.into(),
            ),
            ("mysql_storage_engine", self.engine.clone().into()),
            (
                "targets",
                serde_json::json!([{
                    "name": t.name, "host": t.host, "port": t.port, "socket": t.socket,
                    "user": t.user, "database": t.database,
                }]),
            ),
        ]
    }
}

/// The load to run, with its options.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    Cpu(CpuSpec),
    Oltp(Box<OltpSpec>),
    /// fileio: every agent works on the full set of files in its own work directory (N
    /// agents on N hosts measure N disks at once). `work_dir` and `seed` are each agent's
    /// own and left empty in the coordinator.
    Fileio(Box<FileioConfig>),
    Memory(MemorySpec),
    Threads(ThreadsSpec),
    Mutex(MutexSpec),
    /// TPC-C; each agent's Start carries its own share of the warehouses.
    Tpcc(Box<TpccConfig>),
}

impl Workload {
    fn spec(&self) -> &dyn Spec {
        match self {
            Workload::Cpu(s) => s,
            Workload::Oltp(s) => s.as_ref(),
            Workload::Fileio(s) => s.as_ref(),
            Workload::Memory(s) => s,
            Workload::Threads(s) => s,
            Workload::Mutex(s) => s,
            Workload::Tpcc(s) => s.as_ref(),
        }
    }

    /// The test's name as the user gave it (sysbench's names).
    pub fn name(&self) -> &'static str {
        self.spec().name()
    }

    /// The bounds of its options, the same in the coordinator's plan and in an agent.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.spec().validate()
    }

    /// The options a result records, under their JSON names.
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        self.spec().fields()
    }

    /// The database servers it talks to (OLTP, TPC-C), in target-index order.
    pub fn targets(&self) -> &[crate::workloads::oltp::Target] {
        match self {
            Workload::Oltp(o) => &o.config.targets,
            Workload::Tpcc(t) => std::slice::from_ref(&t.target),
            _ => &[],
        }
    }

    /// The capability an agent must offer to run it (crate::workloads::AVAILABLE).
    pub fn capability(&self) -> &'static str {
        match self {
            Workload::Oltp(_) => "oltp",
            other => other.name(),
        }
    }

    /// The commands this test implements.
    pub fn commands(&self) -> &'static [Command] {
        match self {
            Workload::Oltp(o) if o.config.script != Script::BulkInsert => &[
                Command::Prepare,
                Command::Run,
                Command::Cleanup,
                Command::Prewarm,
            ],
            Workload::Oltp(_) | Workload::Fileio(_) => {
                &[Command::Prepare, Command::Run, Command::Cleanup]
            }
            Workload::Tpcc(_) => &[
                Command::Prepare,
                Command::Run,
                Command::Check,
                Command::Cleanup,
            ],
            _ => &[Command::Run],
        }
    }

    /// Whether each thread runs one event only (nothing for `--rate` to pace).
    pub fn one_event_per_thread(&self) -> bool {
        match self {
            Workload::Mutex(_) => true,
            Workload::Oltp(o) => o.config.script == Script::BulkInsert,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_spec_is_held_to_its_bounds_with_the_option_named() {
        let bad = [
            (Workload::Cpu(CpuSpec { max_prime: 2 }), "--cpu-max-prime"),
            (
                Workload::Threads(ThreadsSpec {
                    yields: 1,
                    locks: 0,
                }),
                "--thread-locks",
            ),
            (
                Workload::Mutex(MutexSpec {
                    num: 0,
                    locks: 1,
                    loops: 1,
                }),
                "--mutex-num",
            ),
            (
                Workload::Memory(MemorySpec {
                    block_size: 12,
                    ..MemorySpec::default()
                }),
                "--memory-block-size",
            ),
            (
                Workload::Memory(MemorySpec {
                    block_size: 4096,
                    total_size: 1024,
                    ..MemorySpec::default()
                }),
                "--memory-total-size",
            ),
        ];
        for (w, option) in bad {
            let e = w.validate().unwrap_err().to_string();
            assert!(e.contains(option), "{e}");
        }
        for good in [
            Workload::Cpu(CpuSpec { max_prime: 3 }),
            Workload::Memory(MemorySpec {
                oper: Oper::Read,
                ..MemorySpec::default()
            }),
            Workload::Threads(ThreadsSpec {
                yields: 0,
                locks: 1,
            }),
        ] {
            good.validate().unwrap();
        }
    }

    #[test]
    fn fields_carry_the_documented_names() {
        let w = Workload::Threads(ThreadsSpec {
            yields: 7,
            locks: 3,
        });
        assert_eq!(
            w.fields(),
            vec![("thread_yields", 7.into()), ("thread_locks", 3.into())]
        );
        assert_eq!(w.name(), "threads");
        assert_eq!(w.commands(), &[Command::Run]);
        let m = Workload::Memory(MemorySpec::default());
        let names: Vec<&str> = m.fields().iter().map(|f| f.0).collect();
        assert_eq!(
            names,
            [
                "memory_block_size",
                "memory_total_size",
                "memory_scope",
                "memory_hugetlb",
                "memory_oper",
                "memory_access_mode"
            ]
        );
    }
}
