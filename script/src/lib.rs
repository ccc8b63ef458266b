//! fleetbench's runtime for sysbench Lua scripts, the parts both binaries share: the
//! script and the modules it may load ([`Files`], from the model), a sandboxed LuaJIT state with sysbench's
//! interface in it ([`state`]), the script's own options ([`options`]) and the report
//! hooks ([`hooks`]). The SQL and random-number functions are the agent's: it registers them
//! in each state it makes (`fleetbench_agent::workloads::script`).

pub mod hooks;
pub mod state;

pub use fleetbench_model::workloads::script::{Files, FilesError, OptKind, OptValue, ScriptOption};
pub use state::{Raw, ScriptError, StateEnv};

/// The sysbench version scripts see (`sysbench.version`): the interface this runtime
/// implements.
pub const SYSBENCH_VERSION: &str = "1.0.20";
