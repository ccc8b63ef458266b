//! What a run asks of each workload, as the coordinator and the agents both see it: one spec
//! type per workload with its name, its validation and the options a result records of it.
//!
//! The coordinator's plan builds these from flags and checks them with [`Workload::validate`];
//! an agent decodes the same types from a Start message (crate::wire) and calls the same
//! function, so a hand-made Start is held to the bounds of the command line. Checks that
//! depend on the host (memory, threads, files) stay with the agent's workloads.

use serde_json::Value;

use crate::options::{
    Declared, Kind, OptionDef, Options, SpecError, Words, Written, declare_options,
};
use crate::rand::Distribution;
use crate::workloads::fileio::{ExtraFlags, FileioConfig, IoMode, TestMode};
use crate::workloads::oltp::legacy::OltpLegacy;
use crate::workloads::oltp::{OltpConfig, OltpDb, OltpOptions, Script};
use crate::workloads::server::{ServerOptions, TargetOptions};

use crate::workloads::memory::{MemoryConfig, MemoryError, Oper};
use crate::workloads::pgbench::{PgbenchConfig, Script as PgScript};
use crate::workloads::script::ScriptConfig;
use crate::workloads::tpcc::{TpccConfig, TpccOptions};

/// One workload's spec: what the coordinator plans and an agent runs.
pub trait Spec {
    /// The test's name as the user gives it (sysbench's names).
    fn name(&self) -> &str;
    /// The bounds both sides hold the spec to.
    fn validate(&self) -> Result<(), SpecError>;
    /// The options a result document records, under their JSON names (docs/result-format.md).
    fn fields(&self) -> Vec<(String, Value)>;
}

/// A workload whose every option is declared: its spec is its [`Declared`] value.
pub trait DeclaredTest: Declared {
    /// The test's name (sysbench's).
    const TEST: &'static str;
}

impl<S: DeclaredTest> Spec for S {
    fn name(&self) -> &str {
        S::TEST
    }

    fn validate(&self) -> Result<(), SpecError> {
        self.check()
    }

    fn fields(&self) -> Vec<(String, Value)> {
        self.to_options().fields(S::OPTIONS)
    }
}

/// A declared workload in the registry: its options, and how they become a [`Workload`].
pub struct Declaration {
    pub test: &'static str,
    pub options: &'static [OptionDef],
    build: fn(&Options) -> Result<Workload, SpecError>,
}

impl Declaration {
    /// The workload from its options as given (name without dashes, value), checked; a
    /// name this test does not declare is refused.
    pub fn workload<'a>(
        &self,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Workload, SpecError> {
        (self.build)(&Options::resolve(self.test, self.options, given)?)
    }
}

fn make<S: DeclaredTest>(o: &Options, wrap: fn(S) -> Workload) -> Result<Workload, SpecError> {
    S::read(o).map(wrap)
}

/// Every workload whose options are declared: the command line learns its options here.
pub const DECLARED: &[Declaration] = &[
    Declaration {
        test: CpuSpec::TEST,
        options: CpuSpec::OPTIONS,
        build: |o| make(o, Workload::Cpu),
    },
    Declaration {
        test: FileioConfig::TEST,
        options: FileioConfig::OPTIONS,
        build: |o| make(o, |f| Workload::Fileio(Box::new(f))),
    },
    Declaration {
        test: MemorySpec::TEST,
        options: MemorySpec::OPTIONS,
        build: |o| make(o, Workload::Memory),
    },
    Declaration {
        test: ThreadsSpec::TEST,
        options: ThreadsSpec::OPTIONS,
        build: |o| make(o, Workload::Threads),
    },
    Declaration {
        test: MutexSpec::TEST,
        options: MutexSpec::OPTIONS,
        build: |o| make(o, Workload::Mutex),
    },
];

/// Groups of options declared for the tests whose other options are not (yet): their
/// `fleetbench TEST help` heading and options. The command line takes them out by these.
pub const GROUPS: &[(&str, &[OptionDef])] = &[
    ("OLTP", OltpOptions::OPTIONS),
    ("OLTP", TableSet::OPTIONS),
    ("OLTP", OltpLegacy::OPTIONS),
    ("Server", ServerOptions::OPTIONS),
    ("Statements", OltpDb::OPTIONS),
    ("Database", TargetOptions::OPTIONS),
    ("Random numbers", Distribution::OPTIONS),
    ("TPC-C", TpccOptions::OPTIONS),
];

/// The declaration of `test`, if its options are declared.
pub fn declared(test: &str) -> Option<&'static Declaration> {
    DECLARED.iter().find(|d| d.test == test)
}

declare_options! {
    /// cpu's options.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct CpuSpec {
        /// `--cpu-max-prime`: each event counts the primes below it.
        pub max_prime: u64 =
            option("cpu-max-prime", Count, "10000", "Upper limit for primes generator");
    }
    check = CpuSpec::bounds;
}

impl DeclaredTest for CpuSpec {
    const TEST: &'static str = "cpu";
}

impl CpuSpec {
    fn bounds(&self) -> Result<(), SpecError> {
        if self.max_prime < 3 {
            return Err(SpecError::invalid(
                "cpu-max-prime",
                self.max_prime,
                "must be at least 3",
            ));
        }
        Ok(())
    }
}

declare_options! {
    /// threads' options.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ThreadsSpec {
        /// `--thread-yields`: lock, yield, unlock rounds per event.
        pub yields: u32 = option("thread-yields", Count, "1000", "Yields per event");
        /// `--thread-locks`: mutexes the events take in turn.
        pub locks: u32 = option("thread-locks", Count, "8", "Mutexes to lock");
    }
    check = ThreadsSpec::bounds;
}

impl DeclaredTest for ThreadsSpec {
    const TEST: &'static str = "threads";
}

impl ThreadsSpec {
    fn bounds(&self) -> Result<(), SpecError> {
        if self.locks == 0 {
            return Err(SpecError::invalid("thread-locks", 0, "must be at least 1"));
        }
        Ok(())
    }
}

declare_options! {
    /// mutex's options.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MutexSpec {
        /// `--mutex-num`: mutexes to pick from.
        pub num: u32 = option("mutex-num", Count, "4096", "Number of mutexes");
        /// `--mutex-locks`: rounds of each thread's one event.
        pub locks: u32 = option("mutex-locks", Count, "50000", "Locks per thread");
        /// `--mutex-loops`: empty iterations before each lock.
        pub loops: u32 = option(
            "mutex-loops",
            Count,
            "10000",
            "Empty loop iterations before each lock",
        );
    }
    check = MutexSpec::bounds;
}

impl DeclaredTest for MutexSpec {
    const TEST: &'static str = "mutex";
}

impl MutexSpec {
    fn bounds(&self) -> Result<(), SpecError> {
        if self.num == 0 {
            return Err(SpecError::invalid("mutex-num", 0, "must be at least 1"));
        }
        Ok(())
    }
}

declare_options! {
    /// memory's options, as planned over the whole run.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct MemorySpec {
        /// `--memory-block-size`: bytes each event walks.
        pub block_size: u64 = option(
            "memory-block-size",
            Size,
            "1K",
            "Size of the memory block per event, e.g. 1K",
        );
        /// `--memory-total-size`: over the whole run (all agents); the coordinator ends the
        /// run after total_size / block_size events (an agent only checks it is one block or
        /// more).
        pub total_size: u64 = option(
            "memory-total-size",
            Size,
            "100G",
            "Total size to transfer, over all agents, e.g. 100G",
        );
        /// `--memory-scope`: one block shared by every thread (global) or one per thread.
        pub global: bool = option(
            "memory-scope",
            Text,
            "global",
            "global (one block shared) or local (one per thread)",
        ) => Words(&[("global", true), ("local", false)], "expected global or local");
        /// `--memory-hugetlb`: the blocks come from huge pages.
        pub hugetlb: bool =
            option("memory-hugetlb", Flag, "off", "Allocate from huge pages");
        /// `--memory-oper`: what an event does with each word.
        pub oper: Oper = option("memory-oper", Text, "write", "read, write or none")
            => Words(
                &[("read", Oper::Read), ("write", Oper::Write), ("none", Oper::None)],
                "expected read, write or none",
            );
        /// `--memory-access-mode=rnd`: random word offsets instead of a sequential walk.
        pub random: bool = option("memory-access-mode", Text, "seq", "seq or rnd")
            => Words(&[("seq", false), ("rnd", true)], "expected seq or rnd");
    }
    check = MemorySpec::bounds;
}

impl Default for MemorySpec {
    /// sysbench's defaults.
    fn default() -> MemorySpec {
        let o = Options::resolve("memory", Self::OPTIONS, []).expect("no options given");
        MemorySpec::from_options(&o).expect("the declared defaults are valid")
    }
}

impl MemorySpec {
    /// This agent's configuration, with its seed for random offsets.
    pub fn config(&self, seed: u64) -> Result<MemoryConfig, MemoryError> {
        Ok(MemoryConfig {
            block_size: usize::try_from(self.block_size)
                .map_err(|_| MemoryError::TooLarge("memory block size too large".into()))?,
            global: self.global,
            hugetlb: self.hugetlb,
            oper: self.oper,
            random: self.random,
            seed,
        })
    }
}

impl DeclaredTest for MemorySpec {
    const TEST: &'static str = "memory";
}

impl MemorySpec {
    fn bounds(&self) -> Result<(), SpecError> {
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
    /// A script's command other than `run` (prepare, cleanup, one of its own): its name
    /// is the script's (`ScriptConfig::command`).
    Script,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Prepare => "prepare",
            Command::Run => "run",
            Command::Cleanup => "cleanup",
            Command::Prewarm => "prewarm",
            Command::Check => "check",
            Command::Script => "script command",
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

declare_options! {
    /// How many tables OLTP works on and how agents share them (`--tables`, `--table-split`):
    /// the coordinator's plan reads them to build the table map and each agent's share; an
    /// agent is sent its tables, not these options.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct TableSet {
        pub tables: u32 = option(
            "tables",
            Count,
            "1",
            "Number of tables",
            aliases = ["oltp-tables-count"],
        );
        pub split: TableSplit = option(
            "table-split",
            Text,
            "shared",
            "How agents share the tables: shared (every thread picks among all, as sysbench) or partition (each agent owns a disjoint set)",
        ) => Words(
            &[("shared", TableSplit::Shared), ("partition", TableSplit::Partition)],
            "expected shared or partition",
        );
    }
    check = TableSet::bounds;
}

impl TableSet {
    fn bounds(&self) -> Result<(), SpecError> {
        // Before the table map is allocated from it.
        match self.tables {
            0 => Err(SpecError::invalid("tables", 0, "must be at least 1")),
            n if n > crate::limits::MAX_TABLES => {
                Err(SpecError::invalid("tables", n, "at most 100000 tables"))
            }
            _ => Ok(()),
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
    fn name(&self) -> &str {
        self.config.script.name()
    }

    fn validate(&self) -> Result<(), SpecError> {
        self.config.validate().map_err(SpecError::Options)
    }

    fn fields(&self) -> Vec<(String, Value)> {
        let c = &self.config;
        let mut out: Vec<(String, Value)> = vec![("tables".into(), c.tables.len().into())];
        out.extend(c.options.to_options().fields(OltpOptions::OPTIONS));
        out.extend(c.server.recorded());
        out.extend(c.db.to_options().fields(OltpDb::OPTIONS));
        out.extend(c.distribution.to_options().fields(Distribution::OPTIONS));
        let mut f: Vec<(&'static str, Value)> = vec![("table_split", self.split.name().into())];
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
        out.extend(f.into_iter().map(|(k, v)| (k.to_string(), v)));
        out
    }
}

impl DeclaredTest for FileioConfig {
    const TEST: &'static str = "fileio";
}

/// Written by hand: the configuration holds the agent's own fields (work directory, seed)
/// beside the options, and `--file-merged-requests` is refused rather than kept
/// (`fileio_options_are_all_written_back` guards the write).
impl Declared for FileioConfig {
    const OPTIONS: &'static [OptionDef] = &[
        OptionDef::new("file-num", Kind::Count, "128", "Number of files to create"),
        OptionDef::new(
            "file-block-size",
            Kind::Size,
            "16384",
            "Block size for all I/O operations",
        ),
        OptionDef::new(
            "file-total-size",
            Kind::Size,
            "2G",
            "Total size of the files on each agent, e.g. 2G",
        ),
        OptionDef::new(
            "file-test-mode",
            Kind::Text,
            "",
            "seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw (run needs it)",
        ),
        OptionDef::new(
            "file-io-mode",
            Kind::Text,
            "sync",
            "sync, async (io_uring, else a thread pool) or mmap",
        ),
        OptionDef::new(
            "file-async-backlog",
            Kind::Count,
            "128",
            "Asynchronous operations queued per thread",
        ),
        OptionDef::new(
            "file-extra-flags",
            Kind::Text,
            "",
            "Extra open flags, comma-separated: sync, dsync, direct [default: none]",
        ),
        OptionDef::new(
            "file-fsync-freq",
            Kind::Count,
            "100",
            "fsync() every N requests; 0 = never",
        ),
        OptionDef::new(
            "file-fsync-all",
            Kind::Flag,
            "off",
            "fsync() after every write",
        ),
        OptionDef::new(
            "file-fsync-end",
            Kind::Flag,
            "on",
            "fsync() at the end of the test",
        ),
        OptionDef::new("file-fsync-mode", Kind::Text, "fsync", "fsync or fdatasync"),
        OptionDef::new(
            "file-merged-requests",
            Kind::Count,
            "0",
            "Merge at most N requests; only 0 is supported",
        ),
        OptionDef::new(
            "file-rw-ratio",
            Kind::Float,
            "1.5",
            "Reads per write in rndrw",
        ),
        OptionDef::new(
            "file-dir",
            Kind::Text,
            "",
            "Directory of the test files, relative to each agent's --work-dir [default: .]",
        ),
    ];

    fn from_options(o: &Options) -> Result<Self, SpecError> {
        let mode = match o.text("file-test-mode") {
            "" => None,
            m => Some(TestMode::parse(m).ok_or_else(|| {
                SpecError::invalid(
                    "file-test-mode",
                    m,
                    "expected seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw",
                )
            })?),
        };
        let io_mode = IoMode::parse(o.text("file-io-mode")).ok_or_else(|| {
            SpecError::invalid(
                "file-io-mode",
                o.text("file-io-mode"),
                "expected sync, async or mmap",
            )
        })?;
        let flags = ExtraFlags::parse(o.text("file-extra-flags")).ok_or_else(|| {
            SpecError::invalid(
                "file-extra-flags",
                o.text("file-extra-flags"),
                "expected a comma-separated list of sync, dsync, direct",
            )
        })?;
        if o.num::<u32>("file-merged-requests")? != 0 {
            return Err(SpecError::Options(
                "--file-merged-requests other than 0 is not supported".into(),
            ));
        }
        Ok(FileioConfig {
            work_dir: Default::default(),
            seed: 0,
            file_dir: o.text("file-dir").to_string(),
            file_num: o.num("file-num")?,
            block_size: o.size("file-block-size")?,
            total_size: o.size("file-total-size")?,
            mode,
            io_mode,
            async_backlog: o.num("file-async-backlog")?,
            flags,
            fsync_freq: o.num("file-fsync-freq")?,
            fsync_all: o.flag("file-fsync-all")?,
            fsync_end: o.flag("file-fsync-end")?,
            fdatasync: o.choice(
                "file-fsync-mode",
                &["fsync", "fdatasync"],
                "expected fsync or fdatasync",
            )? == "fdatasync",
            rw_ratio: o.float("file-rw-ratio")?,
        })
    }

    fn to_options(&self) -> Written {
        let mut w = Written::default();
        w.put("file-num", self.file_num)
            .put("file-block-size", self.block_size)
            .put("file-total-size", self.total_size)
            .put("file-test-mode", self.mode.map_or("", |m| m.name()))
            .put("file-io-mode", self.io_mode.name())
            .put("file-async-backlog", self.async_backlog)
            .put("file-extra-flags", self.flags.names().join(","))
            .put("file-fsync-freq", self.fsync_freq)
            .switch("file-fsync-all", self.fsync_all)
            .switch("file-fsync-end", self.fsync_end)
            .put(
                "file-fsync-mode",
                if self.fdatasync { "fdatasync" } else { "fsync" },
            )
            .put("file-rw-ratio", self.rw_ratio)
            .put("file-dir", &self.file_dir);
        w
    }

    fn check(&self) -> Result<(), SpecError> {
        if self.rw_ratio < 0.0 {
            return Err(SpecError::invalid(
                "file-rw-ratio",
                self.rw_ratio,
                "must not be negative",
            ));
        }
        FileioConfig::validate(self).map_err(|e| SpecError::Options(e.to_string()))
    }
}

impl Spec for ScriptConfig {
    fn name(&self) -> &str {
        &self.name
    }

    fn validate(&self) -> Result<(), SpecError> {
        self.db.check()?;
        self.distribution.check()
    }

    fn fields(&self) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = vec![
            ("script".into(), self.files.path.clone().into()),
            ("command".into(), self.command.clone().into()),
        ];
        let opts: serde_json::Map<String, Value> = self
            .opt
            .iter()
            .filter(|o| !crate::workloads::script::BUILT_IN.contains(&o.name.as_str()))
            .map(|o| {
                (
                    o.name.clone(),
                    o.text.clone().map_or(Value::Null, Value::from),
                )
            })
            .collect();
        out.push(("script_options".into(), Value::Object(opts)));
        out.extend(self.server.recorded());
        out.extend(self.db.to_options().fields(OltpDb::OPTIONS));
        out.extend(self.distribution.to_options().fields(Distribution::OPTIONS));
        let targets: Vec<Value> = self
            .targets
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name, "host": t.host, "port": t.port, "socket": t.socket,
                    "user": t.user, "database": t.database,
                })
            })
            .collect();
        out.push(("targets".into(), Value::Array(targets)));
        out
    }
}

impl Spec for PgbenchConfig {
    fn name(&self) -> &str {
        "pgbench"
    }

    fn validate(&self) -> Result<(), SpecError> {
        PgbenchConfig::validate(self).map_err(SpecError::Options)
    }

    fn fields(&self) -> Vec<(String, Value)> {
        let t = &self.target;
        let scripts: Vec<Value> = self
            .scripts
            .iter()
            .map(|(s, w)| match s {
                PgScript::Builtin(b) => serde_json::json!({"name": b.name(), "weight": w}),
                PgScript::File { name, .. } => {
                    serde_json::json!({"name": name, "file": true, "weight": w})
                }
            })
            .collect();
        let mut out = vec![
            ("scale".into(), Value::from(self.scale)),
            ("scripts".into(), Value::Array(scripts)),
            ("query_mode".into(), Value::from(self.mode.name())),
            ("max_tries".into(), Value::from(self.max_tries)),
            (
                "targets".into(),
                serde_json::json!([{
                    "name": t.name, "host": t.host, "port": t.port,
                    "user": t.user, "database": t.database,
                }]),
            ),
        ];
        // Only when used: older results and comparison keys stay as they were.
        if !self.defines.is_empty() {
            let d: serde_json::Map<String, Value> = self
                .defines
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            out.push(("defines".into(), Value::Object(d)));
        }
        if self.connect_each {
            out.push(("connect".into(), Value::Bool(true)));
        }
        out
    }
}

impl Spec for TpccConfig {
    fn name(&self) -> &str {
        "tpcc"
    }

    fn validate(&self) -> Result<(), SpecError> {
        TpccConfig::validate(self).map_err(SpecError::Options)
    }

    fn fields(&self) -> Vec<(String, Value)> {
        let t = &self.target;
        let mut out = self.options.to_options().fields(TpccOptions::OPTIONS);
        out.extend(self.server.recorded());
        out.push((
            "targets".into(),
            serde_json::json!([{
                "name": t.name, "host": t.host, "port": t.port, "socket": t.socket,
                "user": t.user, "database": t.database,
            }]),
        ));
        out
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
    /// A sysbench Lua script, shipped to the agents with its modules.
    Script(Box<ScriptConfig>),
    /// pgbench's built-in scripts, or one of its initialisation steps (a Prepare).
    Pgbench(Box<PgbenchConfig>),
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
            Workload::Script(s) => s.as_ref(),
            Workload::Pgbench(s) => s.as_ref(),
        }
    }

    /// The test's name as the user gave it (sysbench's names; a script's file name
    /// without `.lua`).
    pub fn name(&self) -> &str {
        self.spec().name()
    }

    /// Whether its figures are SQL statements and transactions (sysbench's "SQL
    /// statistics"): OLTP and scripts.
    pub fn is_sql(&self) -> bool {
        matches!(self, Workload::Oltp(_) | Workload::Script(_))
    }

    /// The bounds of its options, the same in the coordinator's plan and in an agent.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.spec().validate()
    }

    /// The options a result records, under their JSON names.
    pub fn fields(&self) -> Vec<(String, Value)> {
        self.spec().fields()
    }

    /// A declared test ([`DECLARED`]) from its options as given (name without dashes,
    /// value), checked; None for a test whose options are not declared. A name the test
    /// does not declare is refused.
    pub fn from_options<'a>(
        test: &str,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Option<Result<Workload, SpecError>> {
        Some(declared(test)?.workload(given))
    }

    /// A declared test's name and options, as [`Workload::from_options`] reads them back.
    pub fn options(&self) -> Option<(&'static str, Written)> {
        Some(match self {
            Workload::Cpu(s) => (CpuSpec::TEST, s.to_options()),
            Workload::Fileio(s) => (FileioConfig::TEST, s.to_options()),
            Workload::Memory(s) => (MemorySpec::TEST, s.to_options()),
            Workload::Threads(s) => (ThreadsSpec::TEST, s.to_options()),
            Workload::Mutex(s) => (MutexSpec::TEST, s.to_options()),
            Workload::Oltp(_) | Workload::Tpcc(_) | Workload::Script(_) | Workload::Pgbench(_) => {
                return None;
            }
        })
    }

    /// The database servers it talks to (OLTP, TPC-C), in target-index order.
    pub fn targets(&self) -> &[crate::workloads::server::Target] {
        match self {
            Workload::Oltp(o) => &o.config.targets,
            Workload::Tpcc(t) => std::slice::from_ref(&t.target),
            Workload::Script(s) => &s.targets,
            Workload::Pgbench(p) => std::slice::from_ref(&p.target),
            _ => &[],
        }
    }

    /// The same, to fill in what an agent reads on its host (TLS files, keys).
    pub fn targets_mut(&mut self) -> &mut [crate::workloads::server::Target] {
        match self {
            Workload::Oltp(o) => &mut o.config.targets,
            Workload::Tpcc(t) => std::slice::from_mut(&mut t.target),
            Workload::Script(s) => &mut s.targets,
            Workload::Pgbench(p) => std::slice::from_mut(&mut p.target),
            _ => &mut [],
        }
    }

    /// The capability an agent must offer to run it (crate::workloads::AVAILABLE).
    pub fn capability(&self) -> &'static str {
        match self {
            Workload::Oltp(_) => "oltp",
            Workload::Script(_) => "script",
            Workload::Cpu(_) => "cpu",
            Workload::Fileio(_) => "fileio",
            Workload::Memory(_) => "memory",
            Workload::Threads(_) => "threads",
            Workload::Mutex(_) => "mutex",
            Workload::Tpcc(_) => "tpcc",
            Workload::Pgbench(_) => "pgbench",
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
            Workload::Script(_) => &[Command::Run, Command::Script],
            Workload::Pgbench(_) => &[Command::Prepare, Command::Run],
            _ => &[Command::Run],
        }
    }

    /// The OS threads an agent starts for `threads` of this workload's threads (its
    /// clients), and the option that sets their number: pgbench's clients share its `-j`
    /// threads; every other workload runs a thread each.
    pub fn os_threads(&self, threads: u64) -> (u64, &'static str) {
        match self {
            Workload::Pgbench(p) if p.jobs > 0 => (threads.min(u64::from(p.jobs)), "-j"),
            _ => (threads, "--threads"),
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

/// The guard of a group whose reading and writing are written by hand (not declared with
/// [`declare_options!`](crate::options::declare_options)): each of `sets` (options given,
/// none at its default) reads back equal through [`Declared::to_options`], each option of
/// a set changes the value read, and the sets and `unsupported` (options that take their
/// default only) name every option of the group, so that an option added to the group
/// without its write, or without its read, fails its test.
#[cfg(test)]
pub(crate) fn assert_written_back<G: Declared + PartialEq + std::fmt::Debug>(
    sets: &[&[(&'static str, &'static str)]],
    unsupported: &[&str],
) {
    let mut named: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.iter().map(|(n, _)| *n))
        .collect();
    named.extend(unsupported);
    named.sort_unstable();
    named.dedup();
    let mut declared: Vec<&str> = G::OPTIONS.iter().map(|d| d.name).collect();
    declared.sort_unstable();
    assert_eq!(
        named, declared,
        "every option, given a value other than its default"
    );
    for set in sets {
        let read = |given: &[(&'static str, &'static str)]| {
            G::resolve("t", given.iter().copied()).unwrap_or_else(|e| panic!("{given:?}: {e}"))
        };
        let value = read(set);
        let written = value.to_options();
        let back = G::resolve("t", written.0.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back.as_ref(), Ok(&value), "{set:?} written as {written:?}");
        for (name, _) in set.iter() {
            let without: Vec<_> = set.iter().copied().filter(|(n, _)| n != name).collect();
            assert_ne!(read(&without), value, "--{name} in {set:?} changes nothing");
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
    fn declared_specs_round_trip_through_their_options() {
        let specs = [
            Workload::Cpu(CpuSpec { max_prime: 77 }),
            Workload::Threads(ThreadsSpec {
                yields: 0,
                locks: 5,
            }),
            Workload::Mutex(MutexSpec {
                num: 3,
                locks: 9,
                loops: 0,
            }),
            Workload::Memory(MemorySpec {
                block_size: 8 << 20,
                global: false,
                hugetlb: true,
                oper: Oper::None,
                random: true,
                ..MemorySpec::default()
            }),
        ];
        let fileio = Workload::from_options(
            "fileio",
            [
                ("file-test-mode", "rndrw"),
                ("file-extra-flags", "dsync,direct"),
                ("file-fsync-mode", "fdatasync"),
                ("file-rw-ratio", "0.25"),
                ("file-fsync-end", "off"),
                ("file-dir", "sub/dir"),
                ("file-block-size", "4K"),
            ],
        )
        .unwrap()
        .unwrap();
        for w in specs.into_iter().chain([fileio]) {
            let (test, written) = w.options().unwrap();
            let given = written.0.iter().map(|(k, v)| (*k, v.as_str()));
            let back = Workload::from_options(test, given).unwrap().unwrap();
            assert_eq!(back, w, "{test}");
        }
        // Defaults alone give sysbench's defaults, and each test's defaults are valid.
        for d in DECLARED {
            let w = Workload::from_options(d.test, []).unwrap().unwrap();
            assert_eq!(w.name(), d.test);
        }
        assert_eq!(
            Workload::from_options("cpu", []),
            Some(Ok(Workload::Cpu(CpuSpec { max_prime: 10_000 })))
        );
        assert_eq!(Workload::from_options("oltp_read_write", []), None);
    }

    #[test]
    fn declared_option_names_are_unique_and_spelled_as_the_command_line() {
        let mut names: Vec<&str> = DECLARED
            .iter()
            .flat_map(|d| d.options.iter().map(|o| o.name))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "one option, one test");
        for name in names {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{name}"
            );
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
            vec![
                ("thread_yields".to_string(), 7.into()),
                ("thread_locks".to_string(), 3.into())
            ]
        );
        assert_eq!(w.name(), "threads");
        assert_eq!(w.commands(), &[Command::Run]);
        let m = Workload::Memory(MemorySpec::default());
        let names: Vec<String> = m.fields().into_iter().map(|f| f.0).collect();
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

    #[test]
    fn fileio_options_are_all_written_back() {
        assert_written_back::<FileioConfig>(
            &[&[
                ("file-num", "64"),
                ("file-block-size", "4K"),
                ("file-total-size", "1G"),
                ("file-test-mode", "rndrw"),
                ("file-io-mode", "mmap"),
                ("file-async-backlog", "64"),
                ("file-extra-flags", "dsync,direct"),
                ("file-fsync-freq", "0"),
                ("file-fsync-all", "on"),
                ("file-fsync-end", "off"),
                ("file-fsync-mode", "fdatasync"),
                ("file-rw-ratio", "0.25"),
                ("file-dir", "sub/dir"),
            ]],
            // Declared for sysbench's command lines; only 0 is supported.
            &["file-merged-requests"],
        );
    }
}
