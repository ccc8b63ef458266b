-- fleetbench: sysbench's Lua interface, the parts written in Lua. Runs first in every
-- state, with `raw` (the functions fleetbench gives this state: output, the bundled files,
-- and on agents SQL, random numbers and counters) and `env` (command, script path, thread
-- id, the options' values). Scripts see none of `raw` directly.
local raw, env = ...
-- LuaJIT's ffi, when the state has it (an agent's worker): kept here for the hot path's
-- calls, out of every script's reach (scripts get the small proxy below).
local ffi_lib = rawget(_G, "ffi")
_G.ffi = nil

local error, type, tostring, setmetatable, select, pairs, ipairs, unpack, rawget =
   error, type, tostring, setmetatable, select, pairs, ipairs, unpack, rawget
local concat, format = table.concat, string.format

-- What a script may reach: no processes, no files, no C modules.
do
   local keep = { time = true, clock = true, date = true, difftime = true }
   for k in pairs(os) do
      if not keep[k] then os[k] = nil end
   end
end
-- sysbench-tpcc sleeps with os.execute("sleep N"): that one command is done here, without
-- a process; any other is refused.
function os.execute(cmd)
   local n = type(cmd) == "string" and cmd:match("^%s*sleep%s+(%d+%.?%d*)%s*$")
   if n then
      raw.usleep(tonumber(n) * 1000000)
      return 0
   end
   error("os.execute is not available to scripts under fleetbench (only 'sleep N', done without a process)", 2)
end
local function out(...)
   local n = select("#", ...)
   local parts = {}
   for i = 1, n do parts[i] = tostring((select(i, ...))) end
   return parts
end
function print(...)
   raw.output(concat(out(...), "\t") .. "\n")
end
local stream = {}
function stream:write(...)
   raw.output(concat(out(...)))
   return self
end
function stream:flush() return self end
io = { stdout = stream, stderr = stream, write = function(...) return stream:write(...) end }
function io.open(path, mode)
   return nil, "io.open is not available to scripts under fleetbench (" .. tostring(path) .. ")"
end
function io.popen() error("io.popen is not available to scripts under fleetbench", 2) end
function io.lines() error("io.lines is not available to scripts under fleetbench", 2) end
debug = { traceback = function(msg) return raw.traceback(msg) end }

-- Text chunks only: binary (bytecode) chunks could leave the sandbox.
local load_text = load
function load(chunk, name, _, fenv)
   local f, e = load_text(chunk, name, "t")
   if f and fenv then setfenv(f, fenv) end
   return f, e
end
function loadstring(s, name) return load_text(s, name, "t") end

-- Files come from the bundle the coordinator sent, never from the agent's disk.
local function load_file(name)
   local text = raw.file(name)
   if not text then return nil, "cannot open " .. tostring(name) .. " (no such file beside the script)" end
   local chunk = name:match("[^/]+$")
   return load_text(text, "@" .. chunk, "t")
end
function loadfile(name)
   return load_file(name)
end
function dofile(name)
   local f, e = load_file(name)
   if not f then error(e, 2) end
   return f()
end

-- require: what is loaded, then the built-in modules, then NAME.lua from the bundle.
local ffi_proxy
package = { loaded = { string = string, table = table, math = math, bit = bit, jit = jit, os = os, io = io },
            preload = {}, path = "./?.lua", cpath = "" }
function require(name)
   local got = package.loaded[name]
   if got ~= nil then return got end
   if name == "ffi" then
      package.loaded.ffi = ffi_proxy
      return ffi_proxy
   end
   local pre = package.preload[name]
   local f
   if pre then
      f = pre
   else
      local e
      f, e = load_file((name:gsub("%.", "/")) .. ".lua")
      if not f then
         error("module '" .. name .. "' not found: " .. e, 2)
      end
   end
   local r = f(name)
   if r == nil then r = package.loaded[name] end
   if r == nil then r = true end
   package.loaded[name] = r
   return r
end
module = nil

-- A script's own event loop (`thread_run`) runs as a coroutine that hands control back to
-- fleetbench's runner after each event, so that the runner times, counts and paces those
-- events as it does calls of `event`: `co` is that coroutine, `pending` says an event
-- ended (sb_event_stop) since it was last resumed, `more` is what the runner answered.
local tr = { co = nil, pending = false, more = true }

-- ffi: the declarations sysbench makes for scripts, and only them. ffi.C has sysbench's
-- counter function and enum, its event loop's three functions, and usleep; nothing else
-- of C is reachable.
do
   local C = {
      SB_CNT_OTHER = 0, SB_CNT_READ = 1, SB_CNT_WRITE = 2, SB_CNT_TRX = 3,
      SB_CNT_ERROR = 4, SB_CNT_RECONNECT = 5,
   }
   function C.sb_event_start(_) end
   function C.sb_event_stop(_) tr.pending = true end
   -- Whether to run another event: after one ended, the runner is asked (the coroutine
   -- yields); a loop that never ends an event still stops with the run.
   function C.sb_more_events(_)
      if tr.pending and tr.co ~= nil and coroutine.running() == tr.co then
         tr.pending = false
         tr.more = coroutine.yield()
      end
      return tr.more and not (raw.stopped and raw.stopped())
   end
   function C.sb_counter_inc(_, kind) raw.counter(tonumber(kind)) end
   function C.usleep(us) raw.usleep(tonumber(us)) return 0 end
   setmetatable(C, { __index = function(_, k)
      error("ffi.C." .. tostring(k) .. " is not available to scripts under fleetbench " ..
            "(only sb_counter_inc, sb_event_start, sb_event_stop, sb_more_events, usleep " ..
            "and sysbench's SB_CNT_* values)", 2)
   end })
   local function refused(what)
      return function() error("ffi." .. what .. " is not available to scripts under fleetbench", 2) end
   end
   ffi_proxy = setmetatable({ C = C, cdef = function() end, os = "Linux", arch = "x64",
                              abi = function() return false end },
                            { __index = function(_, k) return refused(tostring(k)) end })
   -- sysbench 1.0 loads ffi as a global before the script runs; scripts use it unrequired.
   ffi = ffi_proxy
end

-- sysbench
local function opt_value(kind, text)
   if text == nil then return nil end
   if kind == "bool" then return text == "on" end
   if kind == "int" or kind == "size" or kind == "double" then return tonumber(text) end
   if kind == "list" then
      local t = {}
      for item in text:gmatch("[^,]+") do t[#t + 1] = item end
      return t
   end
   return text
end

sysbench = {
   version = env.version,
   version_string = "sysbench " .. env.version .. " (fleetbench)",
   tid = env.tid,
   opt = {},
   hooks = {},
   error = { NONE = 0, RESTART_EVENT = 1, FATAL = 2 },
   cmdline = {
      options = {},
      ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4,
      ARG_STRING = 5, ARG_LIST = 6, ARG_FILE = 7,
      PARALLEL_COMMAND = true, ARG_MAX = 8,
      command = env.command,
      script_path = env.script_path,
      argv = env.argv,
   },
   rand = {},
   sql = {
      type = { NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
               DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11,
               VARCHAR = 12 },
      -- sysbench's driver-level codes (IGNORABLE); RESTART_EVENT kept for scripts that
      -- compare with it here rather than in sysbench.error.
      error = { NONE = 0, IGNORABLE = 1, RESTART_EVENT = 1, FATAL = 2 },
   },
}
-- Whether the script defines a command, and whether it runs in every thread.
function sysbench.cmdline.command_defined(name)
   local c = sysbench.cmdline.commands
   return type(c) == "table" and c[name] ~= nil
end
function sysbench.cmdline.command_parallel(name)
   local c = sysbench.cmdline.commands
   return type(c) == "table" and type(c[name]) == "table"
      and c[name][2] == sysbench.cmdline.PARALLEL_COMMAND
end
for _, o in ipairs(env.opt) do
   sysbench.opt[o[1]] = opt_value(o[2], o[3])
end

-- sysbench.rand: the agent's generators (each thread its own, seeded by --rand-seed).
do
   local r = sysbench.rand
   r.default = raw.rand_default
   r.uniform = raw.rand_uniform
   r.gaussian = raw.rand_gaussian
   r.special = raw.rand_special
   r.pareto = raw.rand_pareto
   r.zipfian = raw.rand_zipfian
   r.unique = raw.rand_unique
   r.uniform_uint64 = raw.rand_uint64
   r.uniform_double = raw.rand_double
   r.string = raw.rand_string
   function r.varstring(min, max)
      local n = r.uniform(min, max)
      local t = {}
      for i = 1, n do t[i] = string.char(r.uniform(33, 126)) end
      return concat(t)
   end
end

-- sysbench.sql: drivers, connections, statements, result sets.
local RESTART = sysbench.error.RESTART_EVENT
local Driver, Con, Stmt, Bind, Result = {}, {}, {}, {}, {}
Driver.__index, Con.__index, Stmt.__index, Bind.__index, Result.__index =
   Driver, Con, Stmt, Bind, Result

-- A failed statement: an error sysbench.hooks.sql_error_ignorable (or, without the hook,
-- --mysql-ignore-errors) lets pass restarts the event, any other ends the run.
local function failed(con, sql, errno, state, msg, class)
   local e = { errcode = RESTART, sql_errno = errno, sql_state = state, sql_errmsg = msg,
               connection = con, query = sql }
   local hook = sysbench.hooks.sql_error_ignorable
   local ignorable
   if hook then ignorable = hook(e) else ignorable = class ~= "fatal" end
   if ignorable then
      -- A lost connection counts as a reconnect (done already), not as an ignored error.
      if class ~= "reconnect" then raw.ignored(errno, class, state) end
      error(e, 0)
   end
   -- The statement as far as it reads on one line: a bulk insert's is up to 512 KiB.
   local shown = sql
   if #shown > 200 then
      shown = shown:sub(1, 200) .. format("... (%d bytes)", #sql)
   end
   error(format("SQL error, errno = %d, state = '%s': %s (%s)", errno, state, msg, shown), 0)
end

function sysbench.sql.driver(name)
   name = name or sysbench.opt.db_driver or "mysql"
   if name ~= raw.driver_name then
      error("SQL driver '" .. tostring(name) .. "' is not available (fleetbench runs scripts against " ..
            tostring(raw.driver_name) .. ")", 2)
   end
   return setmetatable({}, Driver)
end
function Driver:name() return raw.driver_name end
function Driver:connect()
   local h, errno, state, msg = raw.connect()
   if not h then error(format("connection failed: %s (errno %d)", msg, errno), 2) end
   return setmetatable({ h = h, bulk = nil }, Con)
end

local function result(rows, nfields)
   return setmetatable({ rows = rows, nrows = #rows, nfields = nfields, pos = 0 }, Result)
end
function Result:fetch_row()
   local p = self.pos + 1
   local row = self.rows[p]
   if row == nil then return nil end
   self.pos = p
   return row
end
function Result:free() self.rows = {} self.nrows = 0 end

function Con:query(sql)
   local rows, nfields, state, msg, class = raw.query(self.h, sql)
   if rows == false then failed(self, sql, nfields, state, msg, class) end
   if rows == true then return nil end
   return result(rows, nfields)
end
function Con:query_row(sql)
   local rs = self:query(sql)
   if rs == nil then return nil end
   local row = rs:fetch_row()
   if row == nil then return nil end
   return unpack(row, 1, rs.nfields)
end
function Con:disconnect() raw.disconnect(self.h) end
Con.close = Con.disconnect
function Con:reconnect()
   local ok, errno, state, msg = raw.reconnect(self.h)
   if not ok then error(format("reconnect failed: %s (errno %d)", msg, errno), 2) end
end

-- Bulk inserts: rows gather into one multi-row INSERT, sent when it reaches 512 KiB.
local BULK_BYTES = 512 * 1024
function Con:bulk_insert_init(head)
   self.bulk = { head = head, rows = {}, n = 0, size = #head }
end
function Con:bulk_insert_next(values)
   local b = self.bulk
   if not b then error("bulk_insert_next without bulk_insert_init", 2) end
   if b.n > 0 and b.size + #values + 1 > BULK_BYTES then
      self:bulk_flush()
   end
   b.n = b.n + 1
   b.rows[b.n] = values
   b.size = b.size + #values + 1
end
function Con:bulk_flush()
   local b = self.bulk
   if not b or b.n == 0 then return end
   local sql = b.head .. " " .. concat(b.rows, ",", 1, b.n)
   b.rows, b.n, b.size = {}, 0, #b.head
   self:query(sql)
end
function Con:bulk_insert_done()
   self:bulk_flush()
   self.bulk = nil
end

function Con:prepare(sql)
   local h, errno, state, msg, class = raw.prepare(self.h, sql)
   if not h then failed(self, sql, errno, state, msg, class) end
   return setmetatable({ h = h, con = self, sql = sql, binds = {}, n = 0 }, Stmt)
end
function Stmt:bind_create(btype, len)
   return setmetatable({ t = btype, len = len, v = nil }, Bind)
end
function Stmt:bind_param(...)
   local n = select("#", ...)
   self.binds = { ... }
   self.n = n
end
local exec = raw.execute
-- What stmt:execute() returns for a statement with rows, as sysbench's drivers do for
-- server-side prepared statements: the row count, no columns to fetch. One per statement,
-- reused, so that the hot path allocates nothing.
local function stmt_result(stmt, nrows)
   local rs = stmt.rs
   if not rs then
      rs = setmetatable({ rows = {}, nfields = 0, pos = 0 }, Result)
      stmt.rs = rs
   end
   rs.nrows, rs.pos = nrows, 0
   return rs
end
function Stmt:execute()
   local b, n, errno, state, msg, class, nrows = self.binds, self.n
   if n == 0 then
      errno, state, msg, class, nrows = exec(self.h, 0)
   elseif n == 1 then
      errno, state, msg, class, nrows = exec(self.h, 1, b[1].v)
   elseif n == 2 then
      errno, state, msg, class, nrows = exec(self.h, 2, b[1].v, b[2].v)
   elseif n == 3 then
      errno, state, msg, class, nrows = exec(self.h, 3, b[1].v, b[2].v, b[3].v)
   elseif n == 4 then
      errno, state, msg, class, nrows = exec(self.h, 4, b[1].v, b[2].v, b[3].v, b[4].v)
   else
      local v = {}
      for i = 1, n do v[i] = b[i].v end
      errno, state, msg, class, nrows = raw.execute_list(self.h, v, n)
   end
   if errno then failed(self.con, self.sql, errno, state, msg, class) end
   if nrows then return stmt_result(self, nrows) end
end
function Stmt:close() raw.close(self.h) end
function Bind:set(v) self.v = v end
function Bind:set_rand_str(fmt) self.v = sysbench.rand.string(fmt) end

-- The hot path through LuaJIT's FFI (binding, executing, drawing random numbers): plain C
-- calls into fleetbench, which LuaJIT's compiled code makes without the Lua C API.
if ffi_lib and raw.ffi then
   local F = raw.ffi
   local cast = ffi_lib.cast
   local ctx = cast("void *", F.ctx)
   local f_num = cast("int (*)(void *, uint32_t, uint32_t, double)", F.bind_num)
   local f_str = cast("int (*)(void *, uint32_t, uint32_t, const char *, size_t)", F.bind_str)
   local f_null = cast("int (*)(void *, uint32_t, uint32_t)", F.bind_null)
   local f_exec = cast("int (*)(void *, uint32_t)", F.execute)
   local f_rand = cast("double (*)(void *, int32_t, double, double)", F.rand)
   local f_rstr = cast("int (*)(void *, const char *, size_t, uint8_t *)", F.rand_string)
   local sbuf_len = 4096
   local sbuf = ffi_lib.new("uint8_t[?]", sbuf_len)
   local ffi_string, raw_string = ffi_lib.string, raw.rand_string
   local tonumber_, tostring_ = tonumber, tostring
   function Stmt:execute()
      local h, b = self.h, self.binds
      for i = 1, self.n do
         local v = b[i].v
         local t = type(v)
         if t == "number" then
            f_num(ctx, h, i - 1, v)
         elseif t == "string" then
            f_str(ctx, h, i - 1, v, #v)
         elseif v == nil then
            f_null(ctx, h, i - 1)
         elseif t == "boolean" then
            f_num(ctx, h, i - 1, v and 1 or 0)
         elseif t == "cdata" then
            f_num(ctx, h, i - 1, tonumber_(v))
         else
            local s = tostring_(v)
            f_str(ctx, h, i - 1, s, #s)
         end
      end
      local r = f_exec(ctx, h)
      if r == 0 then return nil end
      if r >= 2 then return stmt_result(self, r - 2) end
      if r < 0 then error("the statement could not be run (closed, or a fleetbench fault)", 2) end
      local errno, state, msg, class = raw.last_error()
      failed(self.con, self.sql, errno, state, msg, class)
   end
   local r = sysbench.rand
   r.uniform = function(a, b) return f_rand(ctx, 0, a, b) end
   r.default = function(a, b) return f_rand(ctx, 1, a, b) end
   r.gaussian = function(a, b) return f_rand(ctx, 2, a, b) end
   r.special = function(a, b) return f_rand(ctx, 3, a, b) end
   r.pareto = function(a, b) return f_rand(ctx, 4, a, b) end
   r.zipfian = function(a, b) return f_rand(ctx, 5, a, b) end
   r.string = function(fmt)
      local n = #fmt
      if n > sbuf_len then return raw_string(fmt) end
      f_rstr(ctx, fmt, n, sbuf)
      return ffi_string(sbuf, n)
   end
end
ffi_lib = nil
-- FLEETBENCH_LUA_JIT=off: every state interprets (no trace compiler), for comparisons.
if env.jit_off and jit then jit.off() end

-- Report hooks a script may assign (sysbench.hooks.report_* = sysbench.report_csv).
sysbench.report_default = function(stat) raw.report("default", stat) end
sysbench.report_csv = function(stat) raw.report("csv", stat) end
sysbench.report_json = function(stat) raw.report("json", stat) end

-- sysbench 0.5's interface: option globals, db_* and sb_rand*.
db_driver = raw.driver_name
DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2
-- Every option reads as a global too, as sysbench does for a script that declares no
-- options of its own (0.5's); a script that declares some (1.0's) finds none, as in
-- sysbench. Looked up in sysbench.opt rather than copied into every state's globals.
local function declares_options()
   local declared = sysbench.cmdline.options
   return type(declared) == "table" and next(declared) ~= nil
end
do
   local opt = sysbench.opt
   setmetatable(_G, { __index = function(_, k)
      if declares_options() then return nil end
      return opt[k]
   end })
end
-- Called once the script's body has run: a script with options of its own reads its
-- undefined globals as plain nils from then on (no lookup on its hot path).
function __fb_loaded()
   if declares_options() then setmetatable(_G, nil) end
end
test = env.script_path
-- sysbench 1.0 sets the global thread_id (sysbench.tid) in every state too; its bundled
-- bulk_insert.lua reads it.
thread_id = env.tid
sb_rand = function(a, b) return sysbench.rand.default(a, b) end
sb_rand_uniform = function(a, b) return sysbench.rand.uniform(a, b) end
sb_rand_gaussian = function(a, b) return sysbench.rand.gaussian(a, b) end
sb_rand_special = function(a, b) return sysbench.rand.special(a, b) end
sb_rand_str = function(fmt) return sysbench.rand.string(fmt) end
sb_rnd = function() return sysbench.rand.uniform(0, 4294967295) end
function sb_rand_uniq(a, b)
   return a + sysbench.rand.unique() % (b - a + 1)
end
local legacy_con
local function legacy()
   if not legacy_con then legacy_con = sysbench.sql.driver():connect() end
   return legacy_con
end
function db_connect() legacy() end
function db_disconnect()
   if legacy_con then legacy_con:disconnect() legacy_con = nil end
end
function db_query(sql) return legacy():query(sql) end
function db_bulk_insert_init(sql) legacy():bulk_insert_init(sql) end
function db_bulk_insert_next(v) legacy():bulk_insert_next(v) end
function db_bulk_insert_done() legacy():bulk_insert_done() end
function db_prepare(sql) return legacy():prepare(sql) end
function db_bind_param(stmt, params)
   -- 0.5 binds Lua variables by table: their values are read at each db_execute.
   stmt.legacy = params
end
function db_bind_result() end
function db_execute(stmt)
   local p = stmt.legacy
   if p then
      local binds = {}
      for i = 1, #p do binds[i] = { v = p[i] } end
      stmt.binds, stmt.n = binds, #p
   end
   stmt:execute()
end
function db_close(stmt) stmt:close() end
function db_store_results() end
function db_free_results(rs) if rs then rs:free() end end

-- The runner's entry points, called from Rust.
local function handler(e)
   if type(e) == "table" then return e end
   return raw.traceback(tostring(e))
end
-- The runner of `fn` (event, or a command's function) for thread `tid`: each call is one
-- event: nil done, true the thread stops (fn returned true), false restarted (an
-- ignorable error; before_restart_event ran). Other errors propagate with their
-- traceback. (nil and booleans: the cheapest answers to read from Rust per event.)
function __fb_runner(fn, tid)
   return function()
      local ok, r = xpcall(fn, handler, tid)
      if ok then
         if r then return true end
         return
      end
      if type(r) == "table" and r.errcode == RESTART then
         local hook = sysbench.hooks.before_restart_event
         if hook then hook(r) end
         return false
      end
      if type(r) == "table" then r = tostring(r.sql_errmsg or r.message or r) end
      error(r, 0)
   end
end
-- The runner of a script's `thread_run` for thread `tid`: each call resumes it up to the
-- end of its next event (nil), or to its end (true: the thread stops; an event it ended
-- just before returning counts first). Called with false (the run is over), the loop's next
-- sb_more_events says no, so that the script's own code after its loop runs.
function __fb_thread_runner(fn, tid)
   local finished = false
   local co = coroutine.create(function()
      local ok, e = xpcall(fn, handler, tid)
      if not ok then
         if type(e) == "table" then e = tostring(e.sql_errmsg or e.message or e) end
         error(e, 0)
      end
   end)
   tr.co = co
   return function(go_on)
      if finished then return true end
      local ok, e = coroutine.resume(co, go_on ~= false)
      if not ok then
         finished = true
         error(e, 0)
      end
      if coroutine.status(co) == "dead" then
         finished = true
         if tr.pending then
            tr.pending = false
            return
         end
         return true
      end
   end
end
-- Calls a hook or command function, with a traceback on error.
function __fb_call(fn, ...)
   local ok, r = xpcall(fn, handler, ...)
   if ok then return r end
   if type(r) == "table" then
      r = "error " .. tostring(r.sql_errno) .. ": " .. tostring(r.sql_errmsg)
   end
   error(r, 0)
end
