//! A lean, blocking client for PostgreSQL's frontend/backend protocol (version 3), used on
//! the hot path of OLTP runs and scripts and for their set-up, behind the driver interface
//! ([`Client`]); `auth.rs` connects and logs in.
//!
//! It does what a sysbench event needs: the startup message, optionally after an SSLRequest
//! and TLS (the same rustls stream as the MySQL client), trust, cleartext, md5 and
//! SCRAM-SHA-256 logins, the extended protocol for server-side prepared statements (Parse
//! once; then Bind, Execute and Sync in one write per statement, parameters as text so the
//! server types them as the statement needs), and simple queries. Rows are counted, not
//! decoded. Messages are framed and built with the `postgres-protocol` crate (its
//! `Header` on the hot path, its full parser for the login and for errors).
//!
//! A statement that fails inside a transaction leaves the transaction aborted; the client
//! rolls it back at once, so that a retried event (an ignored deadlock, a serialization
//! failure) starts on a usable connection, as a MySQL server's own rollback leaves it.

mod auth;
pub mod script;

use std::ops::Range;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use fleetbench_model::workloads::server::Target;
use postgres_protocol::IsNull;
use postgres_protocol::message::backend::{ErrorFields, ErrorResponseBody, Header, Message};
use postgres_protocol::message::frontend;

use crate::sql::stream::Stream;
use crate::sql::{Client, ConnInfo, Param, Reply, Sockets, SqlError};
use fallible_iterator::FallibleIterator;

/// Messages longer than this are refused rather than buffered (the read buffer grows to
/// hold a whole message): nothing the benchmark reads comes near it, and it is the MySQL
/// client's packet bound too.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// A statement prepared on one connection: its name there and its parameter count.
#[derive(Debug, Clone, PartialEq)]
pub struct PgStmt {
    name: String,
    pub params: u16,
    /// BEGIN, COMMIT or ROLLBACK: sent as a simple query, the same one round trip, and
    /// the server accounts for each one as a statement (pg_stat_statements does not count
    /// a transaction command's executions through the extended protocol).
    simple: Option<&'static str>,
    /// Results asked for in binary, as sysbench's pgsql driver asks for them (libpq's
    /// PQexecPrepared with resultFormat 1): the server then sends each value with its
    /// type's send function instead of making text of it, which for numbers, floats,
    /// dates and timestamps is most of its work on a wide result set. The rows are counted,
    /// never read, so the format costs the client nothing. pgbench asks for text, and so
    /// do statements whose values are read (pgbench scripts' `\gset`).
    binary: bool,
}

/// Transaction control as a simple query: the command of `sql`, if it is one.
fn transaction_command(sql: &str) -> Option<&'static str> {
    match sql
        .trim()
        .trim_end_matches(';')
        .trim()
        .to_ascii_uppercase()
        .as_str()
    {
        "BEGIN" => Some("BEGIN"),
        "COMMIT" => Some("COMMIT"),
        "ROLLBACK" => Some("ROLLBACK"),
        _ => None,
    }
}

/// One connection to a PostgreSQL server.
pub struct PgConn {
    stream: Stream,
    /// Bytes read from the socket; `rbuf[rpos..rend]` are not consumed yet.
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// The messages being written.
    wbuf: BytesMut,
    registry: Option<(Arc<Sockets>, u64)>,
    /// How the server logged this connection in (trust, password, md5, scram-sha-256).
    auth: &'static str,
    /// The server's `server_version` parameter.
    server_version: String,
    /// Statements prepared so far: the next one's name.
    next_stmt: u32,
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if let Some((r, id)) = self.registry.take() {
            r.forget(id);
        }
    }
}

/// What reading a reply up to ReadyForQuery found.
struct Outcome {
    reply: Reply,
    error: Option<SqlError>,
    /// ReadyForQuery's transaction status: `I` idle, `T` in a transaction, `E` in a
    /// failed one.
    status: u8,
}

impl PgConn {
    /// The server's version ("15.8 (Debian 15.8-0+deb12u1)").
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The TLS version, if the connection is encrypted.
    pub fn tls_version(&self) -> Option<String> {
        match &self.stream {
            Stream::Tls(t) => Some(t.version()),
            _ => None,
        }
    }

    /// Parses `sql` (its `?` placeholders become `$1`, `$2`, ... as sysbench's pgsql
    /// driver does) as a named statement of this connection; BEGIN, COMMIT and ROLLBACK
    /// stay simple queries (see [`transaction_command`]).
    pub fn prepare(&mut self, sql: &str) -> Result<PgStmt, SqlError> {
        if let Some(cmd) = transaction_command(sql) {
            return Ok(PgStmt {
                name: String::new(),
                params: 0,
                simple: Some(cmd),
                binary: false,
            });
        }
        let mut stmt = self.prepare_named(sql)?;
        stmt.binary = true;
        Ok(stmt)
    }

    /// [`Self::prepare`] for every statement, transaction control too: pgbench's
    /// `-M prepared` prepares its `BEGIN;` and `END;` as any other command.
    pub fn prepare_named(&mut self, sql: &str) -> Result<PgStmt, SqlError> {
        let (sql, params) = numbered_placeholders(sql);
        self.next_stmt += 1;
        let name = format!("fb{}", self.next_stmt);
        self.wbuf.clear();
        frontend::parse(&name, &sql, std::iter::empty(), &mut self.wbuf)?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.finish()?;
        Ok(PgStmt {
            name,
            params,
            simple: None,
            binary: false,
        })
    }

    /// Binds `params` (as text) to `stmt` and executes it: one write, one reply.
    #[inline]
    pub fn execute(&mut self, stmt: &mut PgStmt, params: &[Param]) -> Result<Reply, SqlError> {
        if let Some(cmd) = stmt.simple {
            return self.query(cmd);
        }
        self.wbuf.clear();
        self.bind_execute(&stmt.name, params, stmt.binary)
    }

    /// Parses `sql` (`$n` parameters) as the unnamed statement and runs it with `params`:
    /// Parse, Bind, Execute and Sync in one write (pgbench's `-M extended`).
    #[inline]
    pub fn execute_unnamed(&mut self, sql: &str, params: &[Param]) -> Result<Reply, SqlError> {
        self.wbuf.clear();
        frontend::parse("", sql, std::iter::empty(), &mut self.wbuf)?;
        self.bind_execute("", params, false)
    }

    /// Appends Bind (params as text; results in binary if `binary`), Execute and Sync of
    /// statement `name`, sends what is in the buffer and reads the reply.
    #[inline]
    fn bind_execute(
        &mut self,
        name: &str,
        params: &[Param],
        binary: bool,
    ) -> Result<Reply, SqlError> {
        self.bind(name, params, binary)?;
        frontend::execute("", 0, &mut self.wbuf)?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.finish()
    }

    /// Appends Bind of statement `name` to the unnamed portal, the parameters as text and
    /// every result column in binary if `binary` (one format code for all), else as text.
    #[inline]
    fn bind(&mut self, name: &str, params: &[Param], binary: bool) -> Result<(), SqlError> {
        let results: &[i16] = if binary { &[1] } else { &[] };
        let bound = frontend::bind(
            "",
            name,
            std::iter::empty(),
            params.iter(),
            |p, buf| {
                match p {
                    Param::Int(v) => put_int(buf, *v),
                    Param::Str(s) => buf.put_slice(s),
                    Param::Null => return Ok(IsNull::Yes),
                }
                Ok(IsNull::No)
            },
            results.iter().copied(),
            &mut self.wbuf,
        );
        bound.map_err(|_| SqlError::Protocol("a parameter is too long".into()))
    }

    /// Runs `sql`, a `COPY ... FROM STDIN`, sending the rows `fill` writes (text format)
    /// chunk by chunk until it returns false; the rows the server copied.
    pub fn copy_in(
        &mut self,
        sql: &str,
        mut fill: impl FnMut(&mut Vec<u8>) -> bool,
    ) -> Result<u64, SqlError> {
        self.wbuf.clear();
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        loop {
            let (tag, body) = self.next_message()?;
            match tag {
                // CopyInResponse: the server takes the rows now.
                b'G' => break,
                b'E' => {
                    let e = self.error_of(body);
                    self.read_until_ready(|_| Ok(()))?;
                    return Err(e);
                }
                b'Z' => return Err(SqlError::Protocol("the server did not start a COPY".into())),
                _ => {}
            }
        }
        let mut chunk = Vec::with_capacity(256 * 1024);
        loop {
            chunk.clear();
            let more = fill(&mut chunk);
            if !chunk.is_empty() {
                self.wbuf.clear();
                frontend::CopyData::new(&chunk[..])?.write(&mut self.wbuf);
                self.flush()?;
            }
            if !more {
                break;
            }
        }
        self.wbuf.clear();
        frontend::copy_done(&mut self.wbuf);
        self.flush()?;
        match self.finish()? {
            Reply::Ok { affected_rows } => Ok(affected_rows),
            Reply::Rows(n) => Ok(n),
        }
    }

    /// Runs `sql` as a simple query.
    pub fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        self.wbuf.clear();
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        self.finish()
    }

    /// Runs `sql` as a simple query and returns its first `max_rows` rows, each column as
    /// text (None for NULL; the rest are read past): for checks, set-up and scripts' result
    /// sets, never the hot path. `Client::query_rows` keeps a check's few.
    pub fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        self.wbuf.clear();
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        let mut rows = Vec::new();
        let out = self.read_until_ready(|body| {
            if rows.len() < max_rows {
                rows.push(parse_data_row(body)?);
            }
            Ok(())
        })?;
        match out.error {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }

    /// Says goodbye and closes.
    pub fn quit(mut self) {
        self.wbuf.clear();
        frontend::terminate(&mut self.wbuf);
        let _ = self.flush();
        self.stream.shutdown();
    }

    fn flush(&mut self) -> Result<(), SqlError> {
        self.stream.write_all(&self.wbuf)?;
        Ok(())
    }

    /// Reads a statement's reply up to ReadyForQuery; an error leaves the transaction
    /// usable again (rolled back) before it is returned.
    #[inline]
    fn finish(&mut self) -> Result<Reply, SqlError> {
        let out = self.read_until_ready(|_| Ok(()))?;
        match out.error {
            None => Ok(out.reply),
            Some(e) => {
                if out.status == b'E' {
                    self.roll_back()?;
                }
                Err(e)
            }
        }
    }

    /// Ends a failed transaction, so that the next statement is not refused as part of it.
    #[cold]
    fn roll_back(&mut self) -> Result<(), SqlError> {
        self.wbuf.clear();
        frontend::query("ROLLBACK", &mut self.wbuf)?;
        self.flush()?;
        let out = self.read_until_ready(|_| Ok(()))?;
        out.error.map_or(Ok(()), Err)
    }

    /// Reads messages up to ReadyForQuery: rows are counted (and handed to `row`), the
    /// last CommandComplete makes the reply, an ErrorResponse is kept.
    #[inline]
    fn read_until_ready(
        &mut self,
        mut row: impl FnMut(&[u8]) -> Result<(), SqlError>,
    ) -> Result<Outcome, SqlError> {
        let mut rows = 0u64;
        let mut described = false;
        let mut reply = Reply::Ok { affected_rows: 0 };
        let mut error = None;
        loop {
            let (tag, body) = self.next_message()?;
            match tag {
                b'D' => {
                    rows += 1;
                    row(&self.rbuf[body])?;
                }
                b'T' => described = true,
                b'C' => {
                    reply = command_reply(&self.rbuf[body], described, rows);
                    rows = 0;
                    described = false;
                }
                b'I' => reply = Reply::Ok { affected_rows: 0 },
                b'E' => error = Some(self.error_of(body)),
                b'Z' => {
                    let status = self.rbuf[body].first().copied().unwrap_or(b'I');
                    return Ok(Outcome {
                        reply,
                        error,
                        status,
                    });
                }
                // ParseComplete, BindComplete, CloseComplete, NoData, notices, parameter
                // status and notifications: nothing to count.
                _ => {}
            }
        }
    }

    /// The error an ErrorResponse says (its SQLSTATE as the code).
    #[cold]
    fn error_of(&self, body: Range<usize>) -> SqlError {
        error_response(&self.rbuf[body.start - 5..body.end])
    }

    /// Reads one message and returns its tag and where its body is in `rbuf` (valid until
    /// the next read). A message already read whole is taken without a read.
    #[inline]
    fn next_message(&mut self) -> Result<(u8, Range<usize>), SqlError> {
        if let Ok(Some(h)) = Header::parse(&self.rbuf[self.rpos..self.rend]) {
            let len = h.len() as usize - 4;
            if self.rend - self.rpos - 5 >= len {
                let start = self.rpos + 5;
                self.rpos = start + len;
                return Ok((h.tag(), start..start + len));
            }
        }
        self.read_message()
    }

    /// [`Self::next_message`] when the message is not all in `rbuf` yet.
    #[inline(never)]
    fn read_message(&mut self) -> Result<(u8, Range<usize>), SqlError> {
        self.fill(5)?;
        let h = Header::parse(&self.rbuf[self.rpos..self.rend])?
            .ok_or_else(|| SqlError::Protocol("short message header".into()))?;
        let len = h.len() as usize - 4;
        if len > MAX_MESSAGE {
            return Err(SqlError::Protocol(format!(
                "a {len}-byte message is too long for the lean client"
            )));
        }
        self.fill(5 + len)?;
        let start = self.rpos + 5;
        self.rpos = start + len;
        Ok((h.tag(), start..start + len))
    }

    /// Makes sure `need` unread bytes are in `rbuf`, reading from the socket as needed.
    fn fill(&mut self, need: usize) -> Result<(), SqlError> {
        crate::sql::stream::fill(
            &mut self.stream,
            &mut self.rbuf,
            &mut self.rpos,
            &mut self.rend,
            need,
        )?;
        Ok(())
    }

    /// Reads one whole message for the login, parsed by `postgres-protocol`.
    fn next_parsed(&mut self) -> Result<Message, SqlError> {
        let (tag, body) = self.next_message()?;
        let mut whole = BytesMut::with_capacity(body.len() + 5);
        whole.put_u8(tag);
        whole.put_i32(body.len() as i32 + 4);
        whole.put_slice(&self.rbuf[body]);
        Message::parse(&mut whole)?
            .ok_or_else(|| SqlError::Protocol("a message ended early".into()))
    }
}

/// The reply a CommandComplete tag makes: a result set for a query that returned rows
/// (`SELECT n`, or any command that described rows), else the rows it changed (the last
/// number of `INSERT 0 n`, `UPDATE n`, `DELETE n`; 0 for BEGIN, COMMIT, DDL).
#[inline]
fn command_reply(tag: &[u8], described: bool, rows: u64) -> Reply {
    let tag = tag.strip_suffix(b"\0").unwrap_or(tag);
    if described || tag.starts_with(b"SELECT") {
        return Reply::Rows(rows);
    }
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or(b"");
    let affected_rows = if !last.is_empty() && last.iter().all(u8::is_ascii_digit) {
        last.iter()
            .fold(0u64, |n, d| n.saturating_mul(10) + u64::from(d - b'0'))
    } else {
        0
    };
    Reply::Ok { affected_rows }
}

/// An ErrorResponse (the whole message, tag first) as an error: its SQLSTATE as the code
/// and its message.
fn error_response(whole: &[u8]) -> SqlError {
    let mut buf = BytesMut::from(whole);
    match Message::parse(&mut buf) {
        Ok(Some(Message::ErrorResponse(body))) => error_from(&body),
        _ => SqlError::Protocol("an unreadable error response".into()),
    }
}

/// The error an ErrorResponse's fields say.
fn error_from(body: &ErrorResponseBody) -> SqlError {
    let (mut state, mut message, mut detail) = (String::new(), String::new(), String::new());
    let mut fields: ErrorFields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        let value = String::from_utf8_lossy(f.value_bytes()).into_owned();
        match f.type_() {
            b'C' => state = value,
            b'M' => message = value,
            b'D' => detail = value,
            _ => {}
        }
    }
    if !detail.is_empty() {
        message = format!("{message}: {detail}");
    }
    match fleetbench_model::sqlstate::encode(&state) {
        Some(code) => SqlError::Server { code, message },
        None => SqlError::Protocol(format!("{message} (no SQLSTATE)")),
    }
}

/// A DataRow's columns as text (None for NULL).
fn parse_data_row(body: &[u8]) -> Result<Vec<Option<String>>, SqlError> {
    let short = || SqlError::Protocol("a short data row".into());
    let n = i16::from_be_bytes(body.get(..2).ok_or_else(short)?.try_into().unwrap());
    let mut at = 2;
    let mut out = Vec::with_capacity(n.max(0) as usize);
    for _ in 0..n {
        let len = i32::from_be_bytes(body.get(at..at + 4).ok_or_else(short)?.try_into().unwrap());
        at += 4;
        if len < 0 {
            out.push(None);
            continue;
        }
        let v = body.get(at..at + len as usize).ok_or_else(short)?;
        out.push(Some(String::from_utf8_lossy(v).into_owned()));
        at += len as usize;
    }
    Ok(out)
}

/// `v` in decimal, as a text parameter.
#[inline]
fn put_int(buf: &mut BytesMut, v: i64) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        buf.put_u8(b'-');
    }
    buf.put_slice(&digits[i..]);
}

/// `sql` with its `?` placeholders numbered `$1`, `$2`, ... (outside quoted strings and
/// identifiers), and how many there were.
pub fn numbered_placeholders(sql: &str) -> (String, u16) {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n: u16 = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    (out, n)
}

/// Default server settings a result records for a PostgreSQL target, when `--server-vars`
/// keeps its (MySQL) default: what tuning studies of PostgreSQL vary, and the data directory
/// (visible to superusers and pg_read_all_settings, which pg_monitor includes).
const DEFAULT_SETTINGS: [&str; 11] = [
    "shared_buffers",
    "max_connections",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "max_wal_size",
    "checkpoint_timeout",
    "work_mem",
    "effective_cache_size",
    "full_page_writes",
    "data_directory",
];

impl Client for PgConn {
    type Stmt = PgStmt;
    const STACK_SIZE: usize = 256 * 1024;
    const COOPERATIVE: bool = true;

    fn connect(target: &Target, sockets: &Arc<Sockets>) -> Result<Self, SqlError> {
        PgConn::connect(target, Some(sockets.clone()))
    }

    fn prepare(&mut self, sql: &str) -> Result<Self::Stmt, SqlError> {
        PgConn::prepare(self, sql)
    }

    #[inline]
    fn execute(&mut self, stmt: &mut Self::Stmt, params: &[Param]) -> Result<Reply, SqlError> {
        PgConn::execute(self, stmt, params)
    }

    fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        PgConn::query(self, sql)
    }

    fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        PgConn::query_rows_upto(self, sql, max_rows)
    }

    fn quit(self) {
        PgConn::quit(self)
    }

    fn info(&self) -> ConnInfo {
        ConnInfo {
            client: "lean",
            auth_plugin: self.auth.to_string(),
            tls: self.tls_version().unwrap_or_default(),
            ..ConnInfo::default()
        }
    }

    fn server_facts(
        &mut self,
        vars: &[String],
    ) -> Result<(String, Vec<(String, String)>), SqlError> {
        let version = format!("PostgreSQL {}", self.server_version);
        let mysql_default: Vec<&str> = fleetbench_model::workloads::server::DEFAULT_SERVER_VARS
            .split(',')
            .collect();
        let names: Vec<String> = if vars.iter().map(String::as_str).eq(mysql_default) {
            DEFAULT_SETTINGS.iter().map(|s| s.to_string()).collect()
        } else {
            vars.to_vec()
        };
        if names.is_empty() {
            return Ok((version, Vec::new()));
        }
        let list: Vec<String> = names.iter().map(|v| format!("'{v}'")).collect();
        let rows = self.query_rows(&format!(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({})",
            list.join(", ")
        ))?;
        Ok((version, crate::sql::name_value_pairs(rows)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        let (sql, n) = numbered_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ?");
        assert_eq!(
            (sql.as_str(), n),
            ("SELECT c FROM t WHERE id BETWEEN $1 AND $2", 2)
        );
        let (sql, n) = numbered_placeholders("SELECT '?', \"a?\" FROM t WHERE k = ?");
        assert_eq!(
            (sql.as_str(), n),
            ("SELECT '?', \"a?\" FROM t WHERE k = $1", 1)
        );
        assert_eq!(numbered_placeholders("SELECT $1").1, 0);
    }

    #[test]
    fn transaction_commands_are_told_apart() {
        assert_eq!(transaction_command(" begin "), Some("BEGIN"));
        assert_eq!(transaction_command("COMMIT;"), Some("COMMIT"));
        assert_eq!(
            transaction_command("BEGIN ISOLATION LEVEL SERIALIZABLE"),
            None
        );
        assert_eq!(transaction_command("SELECT 1"), None);
    }

    #[test]
    fn command_tags_make_replies() {
        assert_eq!(command_reply(b"SELECT 3\0", false, 3), Reply::Rows(3));
        assert_eq!(command_reply(b"SHOW\0", true, 1), Reply::Rows(1));
        assert_eq!(
            command_reply(b"INSERT 0 5\0", false, 0),
            Reply::Ok { affected_rows: 5 }
        );
        assert_eq!(
            command_reply(b"UPDATE 1\0", false, 0),
            Reply::Ok { affected_rows: 1 }
        );
        assert_eq!(
            command_reply(b"COMMIT\0", false, 0),
            Reply::Ok { affected_rows: 0 }
        );
    }

    #[test]
    fn integers_are_written_in_decimal() {
        for v in [0i64, 7, -7, 1234567, i64::MIN, i64::MAX] {
            let mut b = BytesMut::new();
            put_int(&mut b, v);
            assert_eq!(std::str::from_utf8(&b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn an_error_response_gives_its_sqlstate_and_message() {
        // 'E', length, then fields: S ERROR, C 40P01, M deadlock detected, end.
        let mut body = Vec::new();
        for (t, v) in [
            (b'S', "ERROR"),
            (b'C', "40P01"),
            (b'M', "deadlock detected"),
        ] {
            body.push(t);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut whole = vec![b'E'];
        whole.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        whole.extend_from_slice(&body);
        let e = error_response(&whole);
        assert_eq!(e.code(), fleetbench_model::sqlstate::encode("40P01"));
        assert_eq!(e.to_string(), "deadlock detected (error SQLSTATE 40P01)");
    }

    #[test]
    fn data_rows_read_text_and_nulls() {
        let mut b = Vec::new();
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"42");
        b.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(parse_data_row(&b).unwrap(), [Some("42".into()), None]);
        assert!(parse_data_row(&b[..5]).is_err());
    }
    /// A backend message: tag, length, body.
    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    /// The sysbench path's statements ask for every result column in binary, as
    /// sysbench's pgsql driver does; pgbench's (prepare_named) and scripts' ask for text.
    #[test]
    fn sysbench_statements_ask_for_binary_results_and_pgbench_ones_for_text() {
        use crate::sql::stream::{Plain, Sock};
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let ready = msg(b'Z', b"I");
        let mut reply = Vec::new();
        for _ in 0..2 {
            // Parse + Sync, then Bind + Execute + Sync of one row.
            reply.extend(msg(b'1', b""));
            reply.extend(ready.clone());
            reply.extend(msg(b'2', b""));
            reply.extend(msg(b'D', &[0, 1, 0, 0, 0, 1, b'7']));
            reply.extend(msg(b'C', b"SELECT 1\0"));
            reply.extend(ready.clone());
        }
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.write_all(&reply).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            got
        });
        let sock = Sock::Tcp(std::net::TcpStream::connect(addr).unwrap());
        let mut c = PgConn {
            stream: Stream::Plain(Plain::new(sock)),
            rbuf: vec![0; 1024],
            rpos: 0,
            rend: 0,
            wbuf: BytesMut::new(),
            registry: None,
            auth: "trust",
            server_version: String::new(),
            next_stmt: 0,
        };
        let mut sb = c.prepare("SELECT c FROM sbtest1 WHERE id = ?").unwrap();
        assert_eq!(
            c.execute(&mut sb, &[Param::Int(5)]).unwrap(),
            Reply::Rows(1)
        );
        let mut pg = c
            .prepare_named("SELECT abalance FROM pgbench_accounts WHERE aid = $1")
            .unwrap();
        assert_eq!(
            c.execute(&mut pg, &[Param::Int(5)]).unwrap(),
            Reply::Rows(1)
        );
        c.stream.shutdown();
        let sent = server.join().unwrap();
        let bind = |stmt: &str, results: &[i16]| {
            let mut b = BytesMut::new();
            frontend::bind(
                "",
                stmt,
                std::iter::empty(),
                [b"5".as_slice()],
                |p, buf| {
                    buf.put_slice(p);
                    Ok::<_, Box<dyn std::error::Error + Sync + Send>>(IsNull::No)
                },
                results.iter().copied(),
                &mut b,
            )
            .map_err(|_| "bind")
            .unwrap();
            b.to_vec()
        };
        let has = |needle: &[u8]| sent.windows(needle.len()).any(|w| w == needle);
        assert!(
            has(&bind("fb1", &[1])),
            "no binary-result Bind for the sysbench statement"
        );
        assert!(
            has(&bind("fb2", &[])),
            "no text-result Bind for pgbench's statement"
        );
    }
}
