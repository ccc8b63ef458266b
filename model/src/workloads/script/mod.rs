//! A sysbench Lua script run: the script and its modules as the coordinator ships them,
//! its options' values, the command, and the database settings the agent connects with.

pub mod files;
pub mod options;

pub use files::{Files, FilesError};
pub use options::{OptKind, OptValue, ScriptOption};

use crate::rand::Distribution;
use crate::workloads::oltp::OltpDb;
use crate::workloads::server::{ServerOptions, Target};

/// The built-in options a script finds in `sysbench.opt` beside its own (those the
/// script declares itself take their place).
pub const BUILT_IN: &[&str] = &[
    "threads",
    "time",
    "events",
    "rate",
    "report_interval",
    "percentile",
    "rand_type",
    "rand_seed",
    "warmup_time",
    "db_driver",
    "db_ps_mode",
    "mysql_host",
    "mysql_port",
    "mysql_socket",
    "mysql_user",
    "mysql_password",
    "mysql_db",
    "mysql_ignore_errors",
    "mysql_storage_engine",
    "mysql_table_engine",
    "myisam_max_rows",
    "mysql_engine_trx",
    "pgsql_host",
    "pgsql_port",
    "pgsql_user",
    "pgsql_password",
    "pgsql_db",
    "histogram",
    "verbosity",
    // The random numbers' parameters, and sysbench 1.0's options fleetbench takes under
    // other names or not at all, with the values sysbench shows for them.
    "rand_spec_iter",
    "rand_spec_pct",
    "rand_spec_res",
    "rand_pareto_h",
    "rand_zipfian_exp",
    "num_threads",
    "max_requests",
    "max_time",
    "tx_rate",
    "debug",
    "validate",
    "forced_shutdown",
    "help",
    "thread_stack_size",
    "report_checkpoints",
    "mysql_compression",
    "mysql_dry_run",
    "mysql_ssl",
    "mysql_ssl_cipher",
    "db_debug",
    "mysql_debug",
    "version",
];

/// A script run as the plan validated it and an agent runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptConfig {
    /// The test's name in reports: the script's file name without `.lua`.
    pub name: String,
    pub files: Files,
    /// `run`, `prepare`, `cleanup`, `prewarm` or a command of the script's own.
    pub command: String,
    /// Whether the command runs in every thread (`run`, a PARALLEL_COMMAND) or once.
    pub parallel: bool,
    /// `sysbench.opt`: the built-in options' values and the script's.
    pub opt: Vec<OptValue>,
    /// The servers threads connect to, thread i to target i mod n (sysbench's
    /// `--mysql-host` list).
    pub targets: Vec<Target>,
    pub server: ServerOptions,
    /// --db-ps-mode and --mysql-ignore-errors.
    pub db: OltpDb,
    pub distribution: Distribution,
    /// `sysbench.cmdline.argv`: the coordinator's command line word by word (the program
    /// first, secrets masked); empty for a run from a scenario file.
    pub argv: Vec<String>,
}
