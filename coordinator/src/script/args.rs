//! A script as the command line names it, once loaded: what the built-in command line
//! carries of it (`RawArgs::script`) and the plan reads.

use fleetbench_model::workloads::script::files::Files;
use fleetbench_model::workloads::script::options::ScriptOption;
use fleetbench_script::state::Commands;

/// A script as the command line names it, loaded.
#[derive(Debug, Clone)]
pub struct ScriptArgs {
    pub files: Files,
    pub declared: Vec<ScriptOption>,
    /// The script's options as given (canonical names), in order.
    pub given: Vec<(String, String)>,
    pub command: String,
    pub commands: Commands,
}
