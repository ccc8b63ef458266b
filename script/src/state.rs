//! A sandboxed LuaJIT state with sysbench's interface: the prelude (sysbench's Lua-side
//! API, `require` and `dofile` from the shipped files, the 0.5 globals), then the script.
//! What the state may reach: Lua's string, table, math, bit, jit and coroutine libraries,
//! the clock functions of `os`, output through `print`/`io.write`, and what the caller
//! puts in the raw table ([`StateEnv`]); no processes, files, C modules or ffi beyond
//! sysbench's counter function and `usleep`.

use std::rc::Rc;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};

use fleetbench_model::workloads::script::Files;
use fleetbench_model::workloads::script::{OptKind, OptValue, ScriptOption};

const PRELUDE: &str = include_str!("prelude.lua");

/// What a script's failure says: where (file:line) and what, as one line, plus Lua's
/// traceback when there is one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ScriptError {
    /// `oltp.lua:12: attempt to call a nil value` (one line).
    pub message: String,
    /// The rest: Lua's stack traceback, for logs.
    pub traceback: String,
}

impl ScriptError {
    pub fn new(message: impl Into<String>) -> ScriptError {
        ScriptError {
            message: message.into(),
            traceback: String::new(),
        }
    }

    /// From what mlua returned: the first line of Lua's message is the error, the rest
    /// its traceback.
    pub fn from_lua(e: &mlua::Error) -> ScriptError {
        let text = match e {
            mlua::Error::SyntaxError { message, .. } => message.clone(),
            mlua::Error::RuntimeError(m) => m.clone(),
            mlua::Error::CallbackError { traceback, cause } => {
                format!("{}\n{traceback}", ScriptError::from_lua(cause).message)
            }
            mlua::Error::MemoryError(m) => format!("out of memory: {m}"),
            other => other.to_string(),
        };
        let text = text.strip_prefix("runtime error: ").unwrap_or(&text);
        let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
        ScriptError {
            message: truncated(first.trim(), MAX_ERROR_BYTES),
            traceback: truncated(rest.trim(), MAX_TRACEBACK_BYTES),
        }
    }
}

/// The most of a script error's message that is kept (logged, sent to the coordinator,
/// printed): `error(string.rep("E", 2^28))` is one line, not 256 MiB on every hop.
pub const MAX_ERROR_BYTES: usize = 4 << 10;
/// The most of an error's traceback that is kept, for logs.
pub const MAX_TRACEBACK_BYTES: usize = 16 << 10;
/// The most of one `print` or `io.write` that is kept (each thread's output is capped per
/// interval besides).
pub const MAX_PRINT_BYTES: usize = 64 << 10;

/// `text` cut to at most `max` bytes (on a character boundary), saying how long it was.
pub fn truncated(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}... [{} bytes in all; cut at {max}]",
        &text[..end],
        text.len()
    )
}

/// The raw functions a state's prelude builds on, as the caller (the agent, or the
/// coordinator) fills them in.
pub type Raw = Table;

/// What a state is made with.
pub struct StateEnv<'a> {
    pub files: &'a Files,
    /// The command being run (`sysbench.cmdline.command`).
    pub command: &'a str,
    /// This thread's id over the whole run (`sysbench.tid`).
    pub tid: u32,
    /// Every option's value: the built-in ones and the script's (`sysbench.opt`).
    pub opt: &'a [OptValue],
    /// Where `print` and `io.write` go.
    pub output: Rc<dyn Fn(&str)>,
    /// The SQL driver's name (`mysql`); scripts ask `drv:name()`.
    pub driver: &'a str,
    /// The state gets LuaJIT's FFI for the prelude's hot path (the caller's raw table
    /// then has `ffi`: the addresses of its functions); scripts never see it.
    pub fast_calls: bool,
    /// `sysbench.cmdline.argv`: the command line word by word, the program at index 0.
    pub argv: &'a [String],
}

/// Makes a state for `env`: the sandboxed libraries, the raw functions (`register` adds
/// the caller's to the table), then the prelude. The script is not run yet
/// ([`run_script`]).
pub fn new_state(
    env: &StateEnv,
    register: impl FnOnce(&Lua, &Raw) -> mlua::Result<()>,
) -> Result<Lua, ScriptError> {
    let libs =
        StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::BIT | StdLib::JIT | StdLib::OS;
    let lua = if env.fast_calls {
        // SAFETY: the FFI library is loaded for the prelude's own calls into fleetbench; the
        // prelude takes it out of the globals before any script code runs, and scripts get
        // a proxy whose ffi.C has sysbench's counter function and usleep only.
        unsafe { Lua::unsafe_new_with(libs | StdLib::FFI, LuaOptions::default()) }
    } else {
        Lua::new_with(libs, LuaOptions::default()).map_err(|e| ScriptError::from_lua(&e))?
    };
    let made = (|| -> mlua::Result<()> {
        let raw = lua.create_table()?;
        let output = env.output.clone();
        raw.set(
            "output",
            lua.create_function(move |_, s: mlua::LuaString| {
                let bytes = s.as_bytes();
                if bytes.len() <= MAX_PRINT_BYTES {
                    output(&String::from_utf8_lossy(&bytes));
                } else {
                    let text = String::from_utf8_lossy(&bytes[..MAX_PRINT_BYTES]);
                    output(&format!(
                        "{text}... [{} bytes in all; cut at {MAX_PRINT_BYTES}]\n",
                        bytes.len()
                    ));
                }
                Ok(())
            })?,
        )?;
        let files = env.files.clone();
        raw.set(
            "file",
            lua.create_function(move |lua, name: String| match files.get(&name) {
                Some(t) => Ok(Value::String(lua.create_string(t)?)),
                None => Ok(Value::Nil),
            })?,
        )?;
        raw.set(
            "traceback",
            lua.create_function(|lua, msg: Option<mlua::LuaString>| {
                // A huge message is cut before the traceback copies it again.
                let msg = msg.map(|m| {
                    let bytes = m.as_bytes();
                    let cut = bytes.len().min(MAX_ERROR_BYTES + 4);
                    truncated(&String::from_utf8_lossy(&bytes[..cut]), MAX_ERROR_BYTES)
                });
                Ok(lua.traceback(msg.as_deref(), 2)?.to_string_lossy())
            })?,
        )?;
        raw.set("driver_name", env.driver)?;
        register(&lua, &raw)?;
        // Functions the caller leaves out fail when a script calls them.
        for name in [
            "connect",
            "query",
            "prepare",
            "execute",
            "execute_list",
            "close",
            "disconnect",
            "reconnect",
            "ignored",
            "counter",
            "usleep",
            "report",
        ] {
            if raw.get::<Value>(name)?.is_nil() {
                let msg = format!("{name}: not available here (the coordinator runs no SQL)");
                raw.set(
                    name,
                    lua.create_function(move |_, _: mlua::MultiValue| -> mlua::Result<()> {
                        Err(mlua::Error::runtime(msg.clone()))
                    })?,
                )?;
            }
        }
        let e = lua.create_table()?;
        e.set("version", crate::SYSBENCH_VERSION)?;
        e.set("command", env.command)?;
        e.set("script_path", env.files.path.as_str())?;
        e.set("tid", env.tid)?;
        e.set(
            "jit_off",
            std::env::var("FLEETBENCH_LUA_JIT").is_ok_and(|v| v == "off"),
        )?;
        let opts = lua.create_table()?;
        for (i, o) in env.opt.iter().enumerate() {
            let t = lua.create_table()?;
            t.raw_set(1, o.name.as_str())?;
            t.raw_set(2, o.kind.name())?;
            if let Some(v) = &o.text {
                t.raw_set(3, v.as_str())?;
            }
            opts.raw_set(i + 1, t)?;
        }
        e.set("opt", opts)?;
        let argv = lua.create_table()?;
        for (i, a) in env.argv.iter().enumerate() {
            argv.raw_set(i, a.as_str())?;
        }
        e.set("argv", argv)?;
        lua.load(PRELUDE)
            .set_name("@fleetbench-prelude.lua")
            .call::<()>((raw, e))?;
        Ok(())
    })();
    made.map_err(|e| ScriptError::from_lua(&e))?;
    Ok(lua)
}

/// Runs the script's body in `lua` (its options, functions and top-level code).
pub fn run_script(lua: &Lua, files: &Files) -> Result<(), ScriptError> {
    lua.load(files.main_text())
        .set_name(format!("@{}", files.main))
        .exec()
        .map_err(|e| ScriptError::from_lua(&e))?;
    // The script has declared its options (or not): the prelude settles its globals.
    let loaded: Function = lua
        .globals()
        .get("__fb_loaded")
        .map_err(|e| ScriptError::from_lua(&e))?;
    loaded.call(()).map_err(|e| ScriptError::from_lua(&e))
}

/// A global function of the script, if it defines one.
pub fn function(lua: &Lua, name: &str) -> Option<Function> {
    lua.globals().get::<Option<Function>>(name).ok().flatten()
}

/// Calls `f` through the prelude's error handler (a traceback for Lua errors, the SQL
/// error's text for an error table).
pub fn call<A: mlua::IntoLuaMulti, R: mlua::FromLuaMulti>(
    lua: &Lua,
    f: &Function,
    args: A,
) -> Result<R, ScriptError> {
    let call: Function = lua
        .globals()
        .get("__fb_call")
        .map_err(|e| ScriptError::from_lua(&e))?;
    let mut all = args
        .into_lua_multi(lua)
        .map_err(|e| ScriptError::from_lua(&e))?;
    all.push_front(Value::Function(f.clone()));
    call.call::<R>(all).map_err(|e| ScriptError::from_lua(&e))
}

/// The script's commands: `sysbench.cmdline.commands` entries, then global `prepare`,
/// `cleanup`, `help` functions. Each with whether it runs in every thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Commands {
    pub declared: Vec<(String, bool)>,
    /// Global functions named like a command (`prepare`, `cleanup`, `help`, `prewarm`).
    pub functions: Vec<String>,
    /// Whether the script defines `event` (it can `run`).
    pub event: bool,
}

impl Commands {
    /// Whether the script can run `command`, and if so whether in every thread.
    pub fn find(&self, command: &str) -> Option<bool> {
        if command == "run" {
            return self.event.then_some(true);
        }
        if let Some((_, p)) = self.declared.iter().find(|(n, _)| n == command) {
            return Some(*p);
        }
        self.functions.iter().any(|f| f == command).then_some(false)
    }

    /// Every command the script offers, for messages.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        if self.event {
            v.push("run".into());
        }
        for (n, _) in &self.declared {
            v.push(n.clone());
        }
        for f in &self.functions {
            if !v.contains(f) {
                v.push(f.clone());
            }
        }
        v
    }
}

/// The command `name`'s function: `sysbench.cmdline.commands[name][1]`, or the global.
pub fn command_function(lua: &Lua, name: &str) -> Option<Function> {
    let from_table = (|| -> mlua::Result<Option<Function>> {
        let sb: Table = lua.globals().get("sysbench")?;
        let cmdline: Table = sb.get("cmdline")?;
        let Some(cmds) = cmdline.get::<Option<Table>>("commands")? else {
            return Ok(None);
        };
        let Some(entry) = cmds.get::<Option<Table>>(name)? else {
            return Ok(None);
        };
        entry.get::<Option<Function>>(1)
    })()
    .ok()
    .flatten();
    from_table.or_else(|| function(lua, name))
}

/// What the script offers, read after its body ran.
pub fn commands(lua: &Lua) -> Commands {
    let mut declared = Vec::new();
    let _ = (|| -> mlua::Result<()> {
        let sb: Table = lua.globals().get("sysbench")?;
        let cmdline: Table = sb.get("cmdline")?;
        let parallel: Value = cmdline.get("PARALLEL_COMMAND")?;
        if let Some(cmds) = cmdline.get::<Option<Table>>("commands")? {
            for pair in cmds.pairs::<String, Table>() {
                let (name, entry) = pair?;
                let p: Value = entry.get(2)?;
                declared.push((name, !p.is_nil() && p == parallel));
            }
        }
        Ok(())
    })();
    declared.sort();
    let functions = ["prepare", "cleanup", "help", "prewarm"]
        .iter()
        .filter(|n| function(lua, n).is_some())
        .map(|n| n.to_string())
        .collect();
    Commands {
        declared,
        functions,
        event: function(lua, "event").is_some(),
    }
}

/// The script's declared options (`sysbench.cmdline.options`), read after its body ran.
pub fn declared_options(lua: &Lua) -> Result<Vec<ScriptOption>, ScriptError> {
    let read = || -> mlua::Result<Vec<ScriptOption>> {
        let sb: Table = lua.globals().get("sysbench")?;
        let cmdline: Table = sb.get("cmdline")?;
        let Some(opts) = cmdline.get::<Option<Table>>("options")? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for pair in opts.pairs::<String, Value>() {
            let (name, decl) = pair?;
            let Value::Table(decl) = decl else {
                return Err(mlua::Error::runtime(format!(
                    "sysbench.cmdline.options.{name} must be a table {{description, default}}"
                )));
            };
            let description: Option<String> = decl.get(1)?;
            let default: Value = decl.get(2)?;
            let forced: Option<i64> = decl.get(3)?;
            let inferred = match &default {
                Value::Boolean(_) => OptKind::Bool,
                Value::Integer(_) => OptKind::Int,
                Value::Number(n) if n.fract() == 0.0 => OptKind::Int,
                Value::Number(_) => OptKind::Double,
                Value::Table(_) => OptKind::List,
                _ => OptKind::String,
            };
            let kind = forced.and_then(OptKind::from_arg).unwrap_or(inferred);
            let default = match default {
                Value::Nil => None,
                Value::Boolean(b) => Some(if b { "on" } else { "off" }.to_string()),
                Value::Integer(i) => Some(i.to_string()),
                Value::Number(n) if n.fract() == 0.0 && n.abs() < 9e15 => {
                    Some((n as i64).to_string())
                }
                Value::Number(n) => Some(n.to_string()),
                Value::String(s) => Some(s.to_string_lossy()),
                Value::Table(t) => {
                    let items: Vec<String> = t
                        .sequence_values::<Value>()
                        .filter_map(|v| v.ok())
                        .map(|v| v.to_string().unwrap_or_default())
                        .collect();
                    Some(items.join(","))
                }
                other => Some(other.to_string().unwrap_or_default()),
            };
            out.push(ScriptOption {
                name: fleetbench_model::workloads::script::options::canonical(&name),
                description: description.unwrap_or_default(),
                kind,
                default,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    };
    read().map_err(|e| ScriptError::from_lua(&e))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn files(main: &str, extra: &[(&str, &str)]) -> Files {
        let mut f = vec![("t.lua".to_string(), main.to_string())];
        f.extend(extra.iter().map(|(n, t)| (n.to_string(), t.to_string())));
        Files {
            path: "dir/t.lua".into(),
            main: "t.lua".into(),
            files: f,
        }
    }

    fn state(f: &Files, sink: Rc<RefCell<String>>) -> Result<Lua, ScriptError> {
        let env = StateEnv {
            files: f,
            command: "run",
            tid: 3,
            opt: &[OptValue {
                name: "threads".into(),
                kind: OptKind::Int,
                text: Some("8".into()),
            }],
            output: Rc::new(move |s| sink.borrow_mut().push_str(s)),
            driver: "mysql",
            fast_calls: true,
            argv: &[],
        };
        new_state(&env, |_, _| Ok(()))
    }

    #[test]
    fn huge_errors_and_prints_are_cut_to_their_caps() {
        let e = ScriptError::from_lua(&mlua::Error::RuntimeError(format!(
            "x.lua:1: {}\n{}",
            "E".repeat(1 << 20),
            "T".repeat(1 << 20)
        )));
        assert!(
            e.message.len() < MAX_ERROR_BYTES + 64,
            "{}",
            e.message.len()
        );
        assert!(
            e.message.starts_with("x.lua:1: EEE"),
            "{}",
            &e.message[..20]
        );
        assert!(
            e.message.ends_with("cut at 4096]"),
            "{}",
            &e.message[e.message.len() - 40..]
        );
        assert!(e.traceback.len() < MAX_TRACEBACK_BYTES + 64);
        assert_eq!(truncated("short", 10), "short");
        assert_eq!(truncated("ééé", 3), "é... [6 bytes in all; cut at 3]");
    }

    #[test]
    fn a_script_sees_sysbench_and_its_modules_and_prints_to_the_sink() {
        let f = files(
            "local c = require('common')\nprint('tid', sysbench.tid, thread_id, sysbench.opt.threads, c.x, sysbench.cmdline.command)\nio.write('a', 1, '\\n')",
            &[("common.lua", "return { x = 'mod' }")],
        );
        let out = Rc::new(RefCell::new(String::new()));
        let lua = state(&f, out.clone()).unwrap();
        run_script(&lua, &f).unwrap();
        assert_eq!(*out.borrow(), "tid\t3\t3\t8\tmod\trun\na1\n");
    }

    #[test]
    fn the_sandbox_keeps_processes_files_and_c_out() {
        let out = Rc::new(RefCell::new(String::new()));
        for (code, what) in [
            ("os.execute('true')", "os.execute is not available"),
            ("io.popen('ls')", "io.popen"),
            ("require('ffi').C.system('ls')", "ffi.C.system"),
            ("require('ffi').cast('int', 1)", "ffi.cast"),
            // The global ffi (sysbench has one) is the same proxy, never the real ffi the
            // prelude keeps.
            ("ffi.C.system('ls')", "ffi.C.system"),
            ("ffi.new('int[1]')", "ffi.new"),
            ("package.loadlib('x', 'y')", "loadlib"),
            ("require('socket')", "module 'socket' not found"),
            (
                "assert(io.open('/etc/passwd', 'w'))",
                "io.open is not available",
            ),
            (
                "load(string.dump(function() end))()",
                "attempt to load a binary chunk",
            ),
        ] {
            let f = files(code, &[]);
            let lua = state(&f, out.clone()).unwrap();
            let e = run_script(&lua, &f).unwrap_err();
            assert!(
                e.message.contains(what) || e.message.contains("nil"),
                "{code}: {e:?}"
            );
            assert!(e.message.starts_with("t.lua:1:"), "{code}: {e:?}");
        }
    }

    #[test]
    fn syntax_errors_say_file_and_line() {
        let f = files("x = 1\nlocal = 2", &[]);
        let lua = state(&f, Rc::new(RefCell::new(String::new()))).unwrap();
        let e = run_script(&lua, &f).unwrap_err();
        assert!(e.message.starts_with("t.lua:2:"), "{e:?}");
    }

    #[test]
    fn options_and_commands_are_read_from_the_script() {
        let f = files(
            r#"
sysbench.cmdline.options = {
  table_size = {"Rows", 10000}, ratio = {"Ratio", 0.5}, on = {"Flag", true},
  name = {"Name", "x"}, list = {"List", {"a", "b"}}, none = {"Nothing"},
  big = {"Forced size", "1K", sysbench.cmdline.ARG_SIZE},
}
function cmd_a() end
function cleanup() end
function event() end
sysbench.cmdline.commands = { a = {cmd_a, sysbench.cmdline.PARALLEL_COMMAND}, b = {cmd_a} }
"#,
            &[],
        );
        let lua = state(&f, Rc::new(RefCell::new(String::new()))).unwrap();
        run_script(&lua, &f).unwrap();
        let o = declared_options(&lua).unwrap();
        let by = |n: &str| o.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(by("table_size").kind, OptKind::Int);
        assert_eq!(by("table_size").default.as_deref(), Some("10000"));
        assert_eq!(by("ratio").kind, OptKind::Double);
        assert_eq!(by("on").default.as_deref(), Some("on"));
        assert_eq!(by("list").default.as_deref(), Some("a,b"));
        assert_eq!(by("none").default, None);
        assert_eq!(by("big").kind, OptKind::Size);
        let c = commands(&lua);
        assert_eq!(c.find("a"), Some(true));
        assert_eq!(c.find("b"), Some(false));
        assert_eq!(c.find("cleanup"), Some(false));
        assert_eq!(c.find("run"), Some(true));
        assert_eq!(c.find("prepare"), None);
        assert!(command_function(&lua, "a").is_some());
    }

    #[test]
    fn legacy_globals_and_dofile_work() {
        let f = files(
            "pathtest = string.match(test, '(.*/)')\ndofile(pathtest .. 'common.lua')\nprint(shared, oltp_table_size, db_driver)",
            &[("common.lua", "shared = 'common loaded'")],
        );
        let out = Rc::new(RefCell::new(String::new()));
        let env = StateEnv {
            files: &f,
            command: "run",
            tid: 0,
            opt: &[OptValue {
                name: "oltp_table_size".into(),
                kind: OptKind::Int,
                text: Some("100".into()),
            }],
            output: Rc::new({
                let out = out.clone();
                move |s| out.borrow_mut().push_str(s)
            }),
            driver: "mysql",
            fast_calls: false,
            argv: &[],
        };
        let lua = new_state(&env, |_, _| Ok(())).unwrap();
        run_script(&lua, &f).unwrap();
        assert_eq!(*out.borrow(), "common loaded\t100\tmysql\n");
    }
}
