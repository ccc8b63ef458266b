//! The raw functions of a worker's Lua state (`sysbench`'s SQL, random-number and counter
//! functions that the prelude builds on): connections and statements over the SQL driver,
//! their errors as sysbench's drivers give them, and the hot path's FFI entry points.

use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{IntoLuaMulti, Lua, Table, Value};

use super::ctx::*;
use crate::sql::{Client, Param, Reply, SqlError};

fn gone() -> (u32, String, String, &'static str) {
    (
        2013,
        "HY000".into(),
        "Lost connection to server (reconnecting)".into(),
        "reconnect",
    )
}

/// Reads a bound value as a statement parameter; `scratch` keeps the text of numbers
/// that are not whole.
fn param_of<'a>(
    v: &'a Value,
    strs: &'a [mlua::BorrowedBytes],
    si: &mut usize,
    scratch: &'a [String],
    fi: &mut usize,
) -> Param<'a> {
    match v {
        Value::Integer(i) => Param::Int(*i),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Param::Int(*n as i64),
        Value::Number(_) => {
            let p = Param::Str(scratch[*fi].as_bytes());
            *fi += 1;
            p
        }
        Value::Boolean(b) => Param::Int(i64::from(*b)),
        Value::String(_) => {
            let p = Param::Str(&strs[*si]);
            *si += 1;
            p
        }
        _ => Param::Null,
    }
}

fn execute<C: Client>(ctx: &Shared<C>, h: usize, values: &[Value]) -> Result<Failed, mlua::Error> {
    let strs: Vec<mlua::BorrowedBytes> = values
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.as_bytes()),
            _ => None,
        })
        .collect();
    let scratch: Vec<String> = values
        .iter()
        .filter_map(|v| match v {
            Value::Number(n) if !(n.fract() == 0.0 && n.abs() < 9.0e15) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    let (mut si, mut fi) = (0, 0);
    let mut params: [Param; 8] = [Param::Null; 8];
    let mut more: Vec<Param> = Vec::new();
    let n = values.len();
    let params: &[Param] = if n <= 8 {
        for (i, v) in values.iter().enumerate() {
            params[i] = param_of(v, &strs, &mut si, &scratch, &mut fi);
        }
        &params[..n]
    } else {
        for v in values {
            more.push(param_of(v, &strs, &mut si, &scratch, &mut fi));
        }
        &more
    };
    ctx.borrow_mut().run_stmt(h, params)
}

impl<C: Client> Ctx<C> {
    /// Executes statement `h` with `params`: prepared again first after a reconnect,
    /// counted, its failure classified.
    fn run_stmt(&mut self, h: usize, params: &[Param]) -> Result<Failed, mlua::Error> {
        let slot = self
            .stmts
            .get_mut(h)
            .and_then(Option::as_mut)
            .ok_or_else(|| mlua::Error::runtime("the statement was closed"))?;
        let conn_h = slot.conn;
        let generation = self.conns.get(conn_h).map_or(0, |s| s.generation);
        if self.live(conn_h)?.is_none() {
            return Ok(Some(gone()));
        }
        let slot = self.stmts[h].as_mut().expect("checked above");
        let conn = self.conns[conn_h].conn.as_mut().expect("live");
        // Prepared before a reconnect: prepare it again on the new connection.
        if !slot.text && (slot.stmt.is_none() || slot.generation != generation) {
            match conn.prepare(&slot.sql) {
                Ok(s) => {
                    slot.stmt = Some(s);
                    slot.generation = generation;
                }
                Err(e) if e.code() == Some(1295) => slot.text = true,
                Err(e) => return Ok(Some(self.failure(conn_h, e))),
            }
        }
        let r = match slot.stmt.as_mut() {
            Some(s) if !slot.text => conn.execute(s, params),
            _ => {
                crate::workloads::oltp::worker::render(&mut self.sql, &slot.sql, params);
                conn.query(&self.sql)
            }
        };
        match r {
            Ok(reply) => {
                self.count(counted_as(&reply));
                self.last_rows = match reply {
                    Reply::Rows(n) => Some(n),
                    Reply::Ok { .. } => None,
                };
                Ok(None)
            }
            Err(e) => Ok(Some(self.failure(conn_h, e))),
        }
    }

    /// Executes statement `h` with the values bound through the FFI calls.
    fn run_bound(&mut self, h: usize) -> Result<Failed, mlua::Error> {
        let Some(Some(slot)) = self.stmts.get_mut(h) else {
            return Err(mlua::Error::runtime("the statement was closed"));
        };
        let binds = std::mem::take(&mut slot.binds);
        let mut small: [Param; 8] = [Param::Null; 8];
        let mut more: Vec<Param> = Vec::new();
        fn as_param(b: &BindVal) -> Param<'_> {
            match b {
                BindVal::Null => Param::Null,
                BindVal::Int(i) => Param::Int(*i),
                BindVal::Text(t) => Param::Str(t),
            }
        }
        let params: &[Param] = if binds.len() <= small.len() {
            for (p, b) in small.iter_mut().zip(&binds) {
                *p = as_param(b);
            }
            &small[..binds.len()]
        } else {
            more.extend(binds.iter().map(as_param));
            &more
        };
        let r = self.run_stmt(h, params);
        if let Some(Some(slot)) = self.stmts.get_mut(h) {
            slot.binds = binds;
        }
        r
    }

    /// The bind slot `i` of statement `h` (made when first used).
    fn bind_slot(&mut self, h: usize, i: usize) -> Option<&mut BindVal> {
        let slot = self.stmts.get_mut(h)?.as_mut()?;
        // A statement has at most 65,535 parameters (the protocol's limit).
        if i >= usize::from(u16::MAX) {
            return None;
        }
        if slot.binds.len() <= i {
            slot.binds.resize_with(i + 1, BindVal::default);
        }
        slot.binds.get_mut(i)
    }
}

/// The functions the prelude calls through LuaJIT's FFI on the hot path (binding values,
/// executing a statement, drawing a random number): no Lua C API in between. `ctx` is the
/// worker's `RefCell<Ctx<C>>`, which outlives its state; the prelude keeps these pointers
/// in locals no script can reach. They never unwind: a panic or a reentrant call is an
/// error code.
mod ffi_calls {
    use std::cell::RefCell;
    use std::ffi::c_void;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use super::{BindVal, Ctx};
    use crate::sql::Client;

    fn with<C: Client, R>(ctx: *const c_void, err: R, f: impl FnOnce(&mut Ctx<C>) -> R) -> R {
        // SAFETY: the prelude passes the address the worker gave it, of a RefCell<Ctx<C>>
        // that lives as long as the Lua state calling here.
        let cell = unsafe { &*ctx.cast::<RefCell<Ctx<C>>>() };
        let Ok(mut g) = cell.try_borrow_mut() else {
            return err;
        };
        catch_unwind(AssertUnwindSafe(|| f(&mut g))).unwrap_or(err)
    }

    /// Binds a number: whole numbers as integers, others as their text.
    pub extern "C" fn bind_num<C: Client>(ctx: *const c_void, h: u32, i: u32, v: f64) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                *b = if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    BindVal::Int(v as i64)
                } else {
                    let mut t = match std::mem::take(b) {
                        BindVal::Text(t) => t,
                        _ => Vec::new(),
                    };
                    t.clear();
                    t.extend_from_slice(v.to_string().as_bytes());
                    BindVal::Text(t)
                };
                0
            }
            None => -1,
        })
    }

    /// Binds `len` bytes at `p` (a Lua string, valid for the call), reusing the buffer.
    pub extern "C" fn bind_str<C: Client>(
        ctx: *const c_void,
        h: u32,
        i: u32,
        p: *const u8,
        len: usize,
    ) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                // SAFETY: LuaJIT passes a string's bytes and its length.
                let bytes = unsafe { std::slice::from_raw_parts(p, len) };
                let mut t = match std::mem::take(b) {
                    BindVal::Text(t) => t,
                    _ => Vec::with_capacity(len),
                };
                t.clear();
                t.extend_from_slice(bytes);
                *b = BindVal::Text(t);
                0
            }
            None => -1,
        })
    }

    pub extern "C" fn bind_null<C: Client>(ctx: *const c_void, h: u32, i: u32) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.bind_slot(h as usize, i as usize) {
            Some(b) => {
                *b = BindVal::Null;
                0
            }
            None => -1,
        })
    }

    /// Executes statement `h`: 0 done, 1 failed (the prelude asks `raw.last_error` why),
    /// -1 the call itself failed.
    pub extern "C" fn execute<C: Client>(ctx: *const c_void, h: u32) -> i32 {
        with::<C, _>(ctx, -1, |c| match c.run_bound(h as usize) {
            // 2 + the rows of a statement that returned rows (a result set for the script).
            Ok(None) => match c.last_rows {
                Some(n) => 2 + n.min(i32::MAX as u64 - 2) as i32,
                None => 0,
            },
            Ok(Some(f)) => {
                c.last_failure = Some(f);
                1
            }
            Err(_) => -1,
        })
    }

    /// A random number in [a, b] from distribution `kind` (0 uniform, 1 the run's
    /// --rand-type, 2 gaussian, 3 special, 4 pareto, 5 zipfian).
    pub extern "C" fn rand<C: Client>(ctx: *const c_void, kind: i32, a: f64, b: f64) -> f64 {
        with::<C, _>(ctx, f64::NAN, |c| c.draw(kind, a as i64, b as i64) as f64)
    }

    /// sysbench.rand.string: fills `len` bytes at `out` from the format at `fmt` (the
    /// prelude's own buffer, at least `len` long).
    pub extern "C" fn rand_string<C: Client>(
        ctx: *const c_void,
        fmt: *const u8,
        len: usize,
        out: *mut u8,
    ) -> i32 {
        with::<C, _>(ctx, -1, |c| {
            // SAFETY: the prelude passes a Lua string and a buffer of at least `len` bytes.
            let (fmt, out) = unsafe {
                (
                    std::slice::from_raw_parts(fmt, len),
                    std::slice::from_raw_parts_mut(out, len),
                )
            };
            c.rand_text.fill(&mut c.rng, fmt, out);
            0
        })
    }

    /// The addresses the prelude casts to its FFI function types.
    pub fn addresses<C: Client>() -> [(&'static str, usize); 6] {
        [
            ("rand_string", rand_string::<C> as *const () as usize),
            ("bind_num", bind_num::<C> as *const () as usize),
            ("bind_str", bind_str::<C> as *const () as usize),
            ("bind_null", bind_null::<C> as *const () as usize),
            ("execute", execute::<C> as *const () as usize),
            ("rand", rand::<C> as *const () as usize),
        ]
    }
}

/// What `raw.execute` returns to the prelude: the failure's errno, state, message and
/// class, or four nils and the rows of a statement that returned rows (None otherwise).
fn executed<C: Client>(lua: &Lua, c: &Shared<C>, r: Failed) -> mlua::Result<mlua::MultiValue> {
    match r {
        None => (
            Value::Nil,
            Value::Nil,
            Value::Nil,
            Value::Nil,
            c.borrow().last_rows,
        )
            .into_lua_multi(lua),
        Some((errno, state, msg, class)) => (errno, state, msg, class).into_lua_multi(lua),
    }
}

/// Where a state's raw functions go: the state, its `raw` table and the context they share.
struct Raw<'a, C: Client> {
    lua: &'a Lua,
    table: &'a Table,
    ctx: &'a Shared<C>,
}

impl<C: Client> Raw<'_, C> {
    /// Sets `raw[name]` to the Lua function `f`.
    fn set<A, R>(
        &self,
        name: &str,
        f: impl Fn(&Lua, A) -> mlua::Result<R> + 'static,
    ) -> mlua::Result<()>
    where
        A: mlua::FromLuaMulti,
        R: IntoLuaMulti,
    {
        self.table.set(name, self.lua.create_function(f)?)
    }
}

/// Puts the raw functions of a worker's state into `raw`.
pub(super) fn register<C: Client + 'static>(
    lua: &Lua,
    raw: &Table,
    ctx: &Shared<C>,
) -> mlua::Result<()> {
    let r = Raw {
        lua,
        table: raw,
        ctx,
    };
    register_conns(&r)?;
    register_text(&r)?;
    register_stmts(&r)?;
    register_counts(&r)?;
    register_ffi(&r)?;
    register_rand(&r)
}

/// The raw functions of connections: connect, disconnect, reconnect.
fn register_conns<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let ctx = r.ctx;
    let c = ctx.clone();
    r.set("connect", move |_, ()| {
        let mut g = c.borrow_mut();
        match g.connect_now() {
            Ok(mut conn) => {
                g.record_facts(&mut conn);
                g.conns.push(ConnSlot {
                    conn: Some(conn),
                    generation: 0,
                });
                Ok((Some(g.conns.len() - 1), 0, String::new(), String::new()))
            }
            Err(e) => {
                if let SqlError::UnsupportedAuth(p) = &e {
                    g.unsupported =
                        Some(format!("the server wants the authentication plugin '{p}'"));
                }
                let (errno, state) = lost_error(&e);
                Ok((None, errno, state, e.to_string()))
            }
        }
    })?;
    let c = ctx.clone();
    r.set("disconnect", move |_, h: usize| {
        let mut g = c.borrow_mut();
        if let Some(slot) = g.conns.get_mut(h)
            && let Some(conn) = slot.conn.take()
        {
            conn.quit();
        }
        Ok(())
    })?;
    let c = ctx.clone();
    r.set("reconnect", move |_, h: usize| {
        let mut g = c.borrow_mut();
        if let Some(slot) = g.conns.get_mut(h)
            && let Some(conn) = slot.conn.take()
        {
            conn.quit();
        }
        match g.connect_now() {
            Ok(conn) => {
                g.tally.reconnects += 1;
                let slot = g.conn(h)?;
                slot.conn = Some(conn);
                slot.generation += 1;
                Ok((true, 0, String::new(), String::new()))
            }
            Err(e) => {
                let (errno, state) = lost_error(&e);
                Ok((false, errno, state, e.to_string()))
            }
        }
    })?;
    Ok(())
}

/// The raw functions of text statements and preparing: query, prepare.
fn register_text<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let ctx = r.ctx;
    let c = ctx.clone();
    r.set("query", move |lua, (h, sql): (usize, mlua::LuaString)| {
        let sql = sql.to_str()?.to_string();
        let mut guard = c.borrow_mut();
        let g = &mut *guard;
        let class = classify(&sql);
        let Some(conn) = g.live(h)? else {
            let (errno, state, msg, class) = gone();
            return (false, errno, state, msg, class).into_lua_multi(lua);
        };
        // Rows only for statements that return them: the rest skip building tables.
        // Counted as sysbench counts it: by the reply, and only when it succeeded.
        let r = if class == Class::Read {
            conn.query_rows_upto(&sql, usize::MAX)
                .map(|rows| (Class::Read, Some(rows)))
        } else {
            conn.query(&sql).map(|reply| match reply {
                Reply::Rows(_) => (Class::Read, Some(Vec::new())),
                Reply::Ok { .. } => (counted_as(&reply), None),
            })
        };
        let r = r.map(|(counted, rows)| {
            g.count(counted);
            rows
        });
        match r {
            Ok(None) => true.into_lua_multi(lua),
            Ok(Some(rows)) => {
                let nfields = rows.first().map_or(0, Vec::len);
                let t = lua.create_table_with_capacity(rows.len(), 0)?;
                for (i, row) in rows.into_iter().enumerate() {
                    let r = lua.create_table_with_capacity(row.len(), 0)?;
                    for (j, col) in row.into_iter().enumerate() {
                        if let Some(v) = col {
                            r.raw_set(j + 1, v)?;
                        }
                    }
                    t.raw_set(i + 1, r)?;
                }
                (t, nfields).into_lua_multi(lua)
            }
            Err(e) => {
                let (errno, state, msg, class) = g.failure(h, e);
                (false, errno, state, msg, class).into_lua_multi(lua)
            }
        }
    })?;
    let c = ctx.clone();
    r.set("prepare", move |lua, (h, sql): (usize, String)| {
        let mut guard = c.borrow_mut();
        let g = &mut *guard;
        let text = !g.cfg.db.prepared;
        let generation = g.conn(h)?.generation;
        let mut stmt = None;
        let mut as_text = text;
        if !text {
            let Some(conn) = g.live(h)? else {
                let (errno, state, msg, class) = gone();
                return (Value::Nil, errno, state, msg, class).into_lua_multi(lua);
            };
            match conn.prepare(&sql) {
                Ok(s) => stmt = Some(s),
                // This server (or proxy) cannot prepare it: sysbench emulates.
                Err(e) if e.code() == Some(1295) => as_text = true,
                Err(e) => {
                    let (errno, state, msg, class) = g.failure(h, e);
                    return (Value::Nil, errno, state, msg, class).into_lua_multi(lua);
                }
            }
        }
        g.stmts.push(Some(StmtSlot {
            conn: h,
            sql,
            stmt,
            generation,
            text: as_text,
            binds: Vec::new(),
        }));
        (g.stmts.len() - 1).into_lua_multi(lua)
    })?;
    Ok(())
}

/// The raw functions of prepared statements: execute, execute_list, close.
fn register_stmts<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let ctx = r.ctx;
    let c = ctx.clone();
    r.set(
        "execute",
        move |lua, (h, n, a, b, d, e): (usize, usize, Value, Value, Value, Value)| {
            let wanted = n.min(4);
            let vals = [a, b, d, e];
            let r = execute(&c, h, &vals[..wanted])?;
            executed(lua, &c, r)
        },
    )?;
    let c = ctx.clone();
    r.set(
        "execute_list",
        move |lua, (h, t, n): (usize, Table, usize)| {
            let vals: Vec<Value> = (1..=n)
                .map(|i| t.raw_get(i).unwrap_or(Value::Nil))
                .collect();
            let r = execute(&c, h, &vals)?;
            executed(lua, &c, r)
        },
    )?;
    let c = ctx.clone();
    r.set("close", move |_, h: usize| {
        if let Some(s) = c.borrow_mut().stmts.get_mut(h) {
            *s = None;
        }
        Ok(())
    })?;
    Ok(())
}

/// The raw functions of counters, the run's state and sleeping: ignored, counter, stopped, usleep, last_error.
fn register_counts<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let ctx = r.ctx;
    let c = ctx.clone();
    r.set(
        "ignored",
        move |_, (errno, _class, state): (u32, String, Option<String>)| {
            let mut g = c.borrow_mut();
            g.tally.ignored_errors += 1;
            // PostgreSQL's errors come with errno 0: count them by their SQLSTATE.
            let code = match (errno, state.as_deref()) {
                (0, Some(s)) => fleetbench_model::sqlstate::encode(s).unwrap_or(0),
                _ => errno,
            };
            *g.tally.errors_by_code.entry(code).or_default() += 1;
            Ok(())
        },
    )?;
    let c = ctx.clone();
    r.set("counter", move |_, kind: i64| {
        let mut g = c.borrow_mut();
        match kind {
            0 => g.tally.others += 1,
            1 => g.tally.reads += 1,
            2 => g.tally.writes += 1,
            // SB_CNT_TRX: one more event, as sysbench counts it (not timed).
            3 => g.trx += 1,
            4 => g.tally.ignored_errors += 1,
            5 => g.tally.reconnects += 1,
            _ => {}
        }
        Ok(())
    })?;
    let c = ctx.clone();
    r.set("stopped", move |_, ()| Ok(c.borrow().control.is_stopped()))?;
    let c = ctx.clone();
    r.set("usleep", move |_, us: f64| {
        let control = c.borrow().control.clone();
        let until = Instant::now() + Duration::from_micros(us.max(0.0) as u64);
        // In slices, so that the run's end does not wait for a long sleep.
        loop {
            let now = Instant::now();
            if now >= until || control.is_stopped() {
                return Ok(());
            }
            std::thread::sleep((until - now).min(Duration::from_millis(10)));
        }
    })?;
    let c = ctx.clone();
    r.set("last_error", move |lua, ()| {
        match c.borrow_mut().last_failure.take() {
            Some((errno, state, msg, class)) => (errno, state, msg, class).into_lua_multi(lua),
            None => (2013, "HY000", "unknown error", "fatal").into_lua_multi(lua),
        }
    })?;
    Ok(())
}

/// The hot path's functions for LuaJIT's FFI, as addresses.
fn register_ffi<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let (lua, raw, ctx) = (r.lua, r.table, r.ctx);
    // The hot path's functions for LuaJIT's FFI: addresses as numbers (exact below 2^53).
    let addrs = lua.create_table()?;
    addrs.set("ctx", Rc::as_ptr(ctx) as usize as f64)?;
    for (name, addr) in ffi_calls::addresses::<C>() {
        addrs.set(name, addr as f64)?;
    }
    raw.set("ffi", addrs)?;
    Ok(())
}

/// sysbench.rand's functions on this thread's generator.
fn register_rand<C: Client + 'static>(r: &Raw<'_, C>) -> mlua::Result<()> {
    let (lua, raw, ctx) = (r.lua, r.table, r.ctx);
    for (kind, name) in RAND_NAMES.iter().enumerate() {
        let c = ctx.clone();
        raw.set(
            *name,
            lua.create_function(move |_, (a, b): (i64, i64)| {
                Ok(c.borrow_mut().draw(kind as i32, a, b))
            })?,
        )?;
    }
    let c = ctx.clone();
    r.set("rand_unique", move |_, ()| {
        let mut g = c.borrow_mut();
        let v = g.unique.wrapping_mul(g.total_threads).wrapping_add(g.tid);
        g.unique += 1;
        Ok(v & 0xffff_ffff)
    })?;
    let c = ctx.clone();
    r.set("rand_uint64", move |_, ()| {
        Ok(c.borrow_mut().rng.next_u64() as f64)
    })?;
    let c = ctx.clone();
    r.set("rand_double", move |_, ()| {
        Ok(c.borrow_mut().rng.unit_f64())
    })?;
    let c = ctx.clone();
    r.set("rand_string", move |lua, fmt: mlua::LuaString| {
        let fmt = fmt.as_bytes();
        let mut out = vec![0u8; fmt.len()];
        let mut guard = c.borrow_mut();
        let g = &mut *guard;
        g.rand_text.fill(&mut g.rng, &fmt, &mut out);
        lua.create_string(&out)
    })?;
    Ok(())
}
