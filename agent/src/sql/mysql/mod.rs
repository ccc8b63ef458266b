//! A lean, blocking client for the MySQL client/server protocol, used on the OLTP run's hot
//! path and for set-up (`crate::sql::setup`), behind the driver interface.
//!
//! This file holds the connection and its statements; `handshake.rs` connects and logs in,
//! `crate::sql::stream` is the socket under both.
//!
//! It does what a sysbench event needs and nothing more: handshake v10, optionally over TLS
//! (rustls), with mysql_native_password, caching_sha2_password, client_ed25519 or
//! mysql_clear_password and auth switches between them (see `auth.rs`), COM_STMT_PREPARE,
//! COM_STMT_EXECUTE with
//! binary LONGLONG/NULL/STRING parameters, COM_QUERY, and reading OK/ERR/EOF while skipping
//! result-set rows without decoding them. One read and one write buffer per connection are
//! reused for every statement, so a statement allocates nothing. Any other authentication
//! plugin is reported as [`SqlError::UnsupportedAuth`] so the caller can fall back to
//! mysql_async.

use std::sync::Arc;

pub mod auth;
mod handshake;

use crate::sql::stream::Stream;
pub use handshake::{ConnectOpts, connect_opts, load_files};

use crate::sql::{Client, ConnInfo, Param, Reply, Sockets, SqlError, show_variables_sql};
use fleetbench_model::workloads::server::Target;

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

const TYPE_LONGLONG: u8 = 0x08;
const TYPE_STRING: u8 = 0xfe;

/// utf8mb4_general_ci.
const COLLATION: u8 = 45;
const MAX_PACKET: u32 = 16 * 1024 * 1024;
/// Payloads this long continue in the next packet; nothing the benchmark sends or reads
/// comes near it, so such packets are refused rather than reassembled.
const MAX_PAYLOAD: usize = 0xff_ffff;

/// A statement prepared on one connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stmt {
    pub id: u32,
    pub params: u16,
    /// Parameter types already sent: later executions leave them out, as libmysqlclient
    /// does, so the server does not set up its conversions again for every statement.
    pub bound: bool,
}

/// One connection to the server.
pub struct Conn {
    stream: Stream,
    /// Bytes read from the socket; `rbuf[rpos..rend]` are not consumed yet.
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// The packet being written, its 4-byte header first.
    wbuf: Vec<u8>,
    seq: u8,
    registry: Option<(Arc<Sockets>, u64)>,
    /// The authentication plugin that logged this connection in.
    plugin: String,
    /// The server's version, as its greeting said.
    server_version: String,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some((r, id)) = self.registry.take() {
            r.forget(id);
        }
    }
}

impl Conn {
    /// The authentication plugin that logged this connection in.
    pub fn auth_plugin(&self) -> &str {
        &self.plugin
    }

    /// The server's version string ("10.11.19-MariaDB-0+deb12u1").
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Runs `sql` with the text protocol and returns its first `max_rows` rows (NULL as
    /// None; the rest are read past). For facts read once per target and scripts' result
    /// sets, never on the benchmark's path; `Client::query_rows` keeps a check's few.
    pub fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        self.command(COM_QUERY);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let p = self.next_packet()?;
        let pkt = &self.rbuf[p];
        let columns = match pkt.first() {
            Some(0x00) => return Ok(Vec::new()),
            Some(0xff) => return Err(parse_err(pkt)),
            _ => {
                get_lenenc(pkt)
                    .ok_or_else(|| SqlError::Protocol("bad column count".into()))?
                    .0
            }
        };
        self.skip_to_eof()?;
        let mut rows = Vec::new();
        loop {
            let p = self.next_packet()?;
            let pkt = &self.rbuf[p];
            if is_eof(pkt) {
                return Ok(rows);
            }
            if pkt.first() == Some(&0xff) {
                return Err(parse_err(pkt));
            }
            if rows.len() < max_rows {
                rows.push(parse_text_row(pkt, columns)?);
            }
        }
    }

    /// The TLS version in use ("TLSv1_3"), or None over plain TCP or a socket.
    pub fn tls_version(&self) -> Option<String> {
        match &self.stream {
            Stream::Tls(t) => Some(t.version()),
            _ => None,
        }
    }

    /// Prepares `sql`; the statement lives as long as this connection.
    pub fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        self.command(COM_STMT_PREPARE);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let p = self.next_packet()?;
        let pkt = &self.rbuf[p];
        match pkt.first() {
            Some(0x00) if pkt.len() >= 9 => {}
            Some(0xff) => return Err(parse_err(pkt)),
            _ => return Err(SqlError::Protocol("bad COM_STMT_PREPARE reply".into())),
        }
        let id = u32::from_le_bytes([pkt[1], pkt[2], pkt[3], pkt[4]]);
        let columns = u16::from_le_bytes([pkt[5], pkt[6]]);
        let params = u16::from_le_bytes([pkt[7], pkt[8]]);
        // Parameter and column definitions, each list closed by an EOF packet: not needed.
        for n in [params, columns] {
            if n > 0 {
                self.skip_to_eof()?;
            }
        }
        Ok(Stmt {
            id,
            params,
            bound: false,
        })
    }

    /// Executes a prepared statement with `params` (binary protocol). The parameters' types
    /// must be the same at every execution of `stmt` (NULL goes as a LONGLONG).
    pub fn execute(&mut self, stmt: &mut Stmt, params: &[Param]) -> Result<Reply, SqlError> {
        if params.len() != usize::from(stmt.params) {
            return Err(SqlError::Protocol(format!(
                "statement takes {} parameters, {} given",
                stmt.params,
                params.len()
            )));
        }
        self.command(COM_STMT_EXECUTE);
        encode_execute(&mut self.wbuf, stmt.id, params, !stmt.bound);
        self.send()?;
        // Sent, so the server has the types whatever the reply (a failed execution too).
        stmt.bound = true;
        self.read_reply()
    }

    /// Runs `sql` with the text protocol.
    pub fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        self.command(COM_QUERY);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        self.read_reply()
    }

    /// Says goodbye (COM_QUIT) and closes; errors do not matter any more.
    pub fn quit(mut self) {
        self.command(COM_QUIT);
        let _ = self.send();
        self.stream.shutdown();
    }

    /// Reads a statement's reply: OK, ERR, or a result set whose rows are skipped.
    fn read_reply(&mut self) -> Result<Reply, SqlError> {
        loop {
            let p = self.next_packet()?;
            let pkt = &self.rbuf[p];
            let (reply, status) = match pkt.first() {
                Some(0x00) => {
                    let (affected_rows, status) = parse_ok(pkt)?;
                    (Reply::Ok { affected_rows }, status)
                }
                Some(0xff) => return Err(parse_err(pkt)),
                Some(0xfb) => {
                    return Err(SqlError::Protocol("LOCAL INFILE is not supported".into()));
                }
                Some(_) => {
                    // Column count, column definitions up to an EOF, then rows up to an EOF.
                    self.skip_to_eof()?;
                    let (rows, status) = self.skip_rows()?;
                    (Reply::Rows(rows), status)
                }
                None => return Err(SqlError::Protocol("empty packet".into())),
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(reply);
            }
        }
    }

    /// Skips packets up to and including the next EOF packet.
    fn skip_to_eof(&mut self) -> Result<(), SqlError> {
        loop {
            let p = self.next_packet()?;
            let pkt = &self.rbuf[p];
            if is_eof(pkt) {
                return Ok(());
            }
            if pkt.first() == Some(&0xff) {
                return Err(parse_err(pkt));
            }
        }
    }

    /// Skips result rows; returns their number and the closing EOF's status flags.
    fn skip_rows(&mut self) -> Result<(u64, u16), SqlError> {
        let mut rows = 0;
        loop {
            let p = self.next_packet()?;
            let pkt = &self.rbuf[p];
            if is_eof(pkt) {
                let status = if pkt.len() >= 5 {
                    u16::from_le_bytes([pkt[3], pkt[4]])
                } else {
                    0
                };
                return Ok((rows, status));
            }
            // No row starts with 0xff: text rows begin with a length, binary rows with 0x00.
            if pkt.first() == Some(&0xff) {
                return Err(parse_err(pkt));
            }
            rows += 1;
        }
    }

    fn start_packet(&mut self) {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0; 4]);
    }

    /// Starts a command packet: a new exchange, so the sequence restarts at 0.
    fn command(&mut self, cmd: u8) {
        self.seq = 0;
        self.wbuf.clear();
        // The header (filled in by send) and the command in one append.
        self.wbuf.extend_from_slice(&[0, 0, 0, 0, cmd]);
    }

    fn send(&mut self) -> Result<(), SqlError> {
        let len = self.wbuf.len() - 4;
        if len >= MAX_PAYLOAD {
            return Err(SqlError::Protocol(format!(
                "a {len}-byte packet is too long for the lean client"
            )));
        }
        self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.wbuf[3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.stream.write_all(&self.wbuf)?;
        Ok(())
    }

    /// Reads one packet and returns where its payload is in `rbuf` (valid until the next read).
    /// A packet already read whole (a reply's packets usually come in one read) is taken
    /// in a few instructions; only a read from the socket goes through [`Self::read_packet`].
    #[inline]
    fn next_packet(&mut self) -> Result<std::ops::Range<usize>, SqlError> {
        if let Some(h) = self.rbuf.get(self.rpos..self.rend)
            && let [a, b, c, seq, ..] = *h
        {
            let len = usize::from(a) | usize::from(b) << 8 | usize::from(c) << 16;
            if len < MAX_PAYLOAD && h.len() - 4 >= len {
                let start = self.rpos + 4;
                self.rpos = start + len;
                self.seq = seq.wrapping_add(1);
                return Ok(start..start + len);
            }
        }
        self.read_packet()
    }

    /// [`Self::next_packet`] when the packet is not all in `rbuf` yet.
    #[inline(never)]
    fn read_packet(&mut self) -> Result<std::ops::Range<usize>, SqlError> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let seq = h[3];
        if len == MAX_PAYLOAD {
            return Err(SqlError::Protocol(
                "packets of 16 MiB and more are not supported".into(),
            ));
        }
        self.rpos += 4;
        self.fill(len)?;
        let start = self.rpos;
        self.rpos += len;
        self.seq = seq.wrapping_add(1);
        Ok(start..start + len)
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
}

/// A text-protocol row of `columns` length-encoded strings (0xfb: NULL).
fn parse_text_row(p: &[u8], columns: u64) -> Result<Vec<Option<String>>, SqlError> {
    let bad = || SqlError::Protocol("bad result row".into());
    let mut i = 0;
    let mut row = Vec::new();
    for _ in 0..columns {
        if p.get(i) == Some(&0xfb) {
            row.push(None);
            i += 1;
            continue;
        }
        let (len, n) = get_lenenc(p.get(i..).ok_or_else(bad)?).ok_or_else(bad)?;
        let start = i + n;
        let end = start
            .checked_add(usize::try_from(len).map_err(|_| bad())?)
            .ok_or_else(bad)?;
        row.push(Some(
            String::from_utf8_lossy(p.get(start..end).ok_or_else(bad)?).into_owned(),
        ));
        i = end;
    }
    Ok(row)
}

/// An EOF packet: 0xfe with a short payload (a row or a column count starting with 0xfe
/// would be an 8-byte length, far longer).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xfe) && p.len() < 9
}

/// An OK packet's affected rows and status flags.
fn parse_ok(p: &[u8]) -> Result<(u64, u16), SqlError> {
    let bad = || SqlError::Protocol("bad OK packet".into());
    let (affected, n1) = get_lenenc(&p[1..]).ok_or_else(bad)?;
    let (_, n2) = get_lenenc(&p[1 + n1..]).ok_or_else(bad)?;
    let i = 1 + n1 + n2;
    let status = p
        .get(i..i + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
    Ok((affected, status))
}

fn parse_err(p: &[u8]) -> SqlError {
    if p.len() < 3 {
        return SqlError::Protocol("bad ERR packet".into());
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let mut msg = &p[3..];
    if msg.first() == Some(&b'#') && msg.len() >= 6 {
        msg = &msg[6..];
    }
    SqlError::Server {
        code: u32::from(code),
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xfd);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads a length-encoded integer: its value and how many bytes it took.
pub fn get_lenenc(p: &[u8]) -> Option<(u64, usize)> {
    let le = |n: usize| -> Option<u64> {
        let b = p.get(1..1 + n)?;
        Some(b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
    };
    match *p.first()? {
        x @ 0..=250 => Some((u64::from(x), 1)),
        0xfc => Some((le(2)?, 3)),
        0xfd => Some((le(3)?, 4)),
        0xfe => Some((le(8)?, 9)),
        _ => None,
    }
}

/// Appends a COM_STMT_EXECUTE body (after the command byte): no cursor, one iteration,
/// the parameter types when `types` (the first execution) and the values.
fn encode_execute(out: &mut Vec<u8>, id: u32, params: &[Param], types: bool) {
    // The statement, no cursor, one iteration: one append (each is a capacity check).
    let [a, b, c, d] = id.to_le_bytes();
    out.extend_from_slice(&[a, b, c, d, 0, 1, 0, 0, 0]);
    if params.is_empty() {
        return;
    }
    let bitmap = out.len();
    // Pushed byte by byte: a resize would call memset for what is usually one byte.
    for _ in 0..params.len().div_ceil(8) {
        out.push(0);
    }
    for (i, p) in params.iter().enumerate() {
        if *p == Param::Null {
            out[bitmap + i / 8] |= 1 << (i % 8);
        }
    }
    out.push(u8::from(types));
    if types {
        for p in params {
            // A NULL is marked in the bitmap; its type is that of the column's other values.
            let t = match p {
                Param::Int(_) | Param::Null => TYPE_LONGLONG,
                Param::Str(_) => TYPE_STRING,
            };
            out.extend_from_slice(&[t, 0]);
        }
    }
    for p in params {
        match p {
            Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Null => {}
            Param::Str(s) => {
                put_lenenc(out, s.len() as u64);
                out.extend_from_slice(s);
            }
        }
    }
}

impl Client for Conn {
    type Stmt = Stmt;
    const STACK_SIZE: usize = 256 * 1024;
    const COOPERATIVE: bool = true;

    fn connect(target: &Target, sockets: &Arc<Sockets>) -> Result<Self, SqlError> {
        Conn::connect(&connect_opts(target), Some(sockets.clone()))
    }

    fn prepare(&mut self, sql: &str) -> Result<Self::Stmt, SqlError> {
        Conn::prepare(self, sql)
    }

    fn execute(&mut self, stmt: &mut Self::Stmt, params: &[Param]) -> Result<Reply, SqlError> {
        Conn::execute(self, stmt, params)
    }

    fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        Conn::query(self, sql)
    }

    fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        Conn::query_rows_upto(self, sql, max_rows)
    }

    fn quit(self) {
        Conn::quit(self)
    }

    fn info(&self) -> ConnInfo {
        ConnInfo {
            client: "lean",
            auth_plugin: self.auth_plugin().to_string(),
            tls: self.tls_version().unwrap_or_default(),
            ..ConnInfo::default()
        }
    }

    fn server_facts(
        &mut self,
        vars: &[String],
    ) -> Result<(String, Vec<(String, String)>), SqlError> {
        let version = self.server_version().to_string();
        if vars.is_empty() {
            return Ok((version, Vec::new()));
        }
        let rows = self.query_rows(&show_variables_sql(vars))?;
        Ok((version, crate::sql::name_value_pairs(rows)))
    }
}

#[cfg(test)]
mod tests {
    use super::handshake::{CLIENT_PLUGIN_AUTH_LENENC_DATA, parse_auth_switch, parse_handshake};
    use super::*;
    use crate::sql::stream::{Plain, Sock};
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpStream};

    #[test]
    fn scramble_matches_a_known_vector() {
        // Computed independently: SHA1("secret") XOR SHA1(01..14 || SHA1(SHA1("secret"))).
        let scramble: Vec<u8> = (1..=20).collect();
        let out = auth::native_password(b"secret", &scramble);
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "b32bb3a583e1340c0a1108d58b1be49781ad8c2f");
        assert!(auth::native_password(b"", &scramble).is_empty());
    }

    #[test]
    fn lenenc_round_trips_at_every_width() {
        for v in [
            0,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            let want = match v {
                0..=250 => 1,
                251..=0xffff => 3,
                0x1_0000..=0xff_ffff => 4,
                _ => 9,
            };
            assert_eq!(b.len(), want, "{v}");
            assert_eq!(get_lenenc(&b), Some((v, want)));
        }
        assert_eq!(get_lenenc(&[0xfc, 1]), None);
        assert_eq!(get_lenenc(&[0xff]), None);
    }

    #[test]
    fn execute_packet_layout() {
        let mut b = Vec::new();
        let params = [Param::Null, Param::Int(-2), Param::Str(b"ab")];
        encode_execute(&mut b, 7, &params, true);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            7, 0, 0, 0, 0, 1, 0, 0, 0, // id, flags, iterations
            0b001, 1,                  // NULL bitmap, new params bound
            TYPE_LONGLONG, 0, TYPE_LONGLONG, 0, TYPE_STRING, 0,
            0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            2, b'a', b'b',
        ];
        assert_eq!(b, want);
        // Later executions: no types, the values alone.
        b.clear();
        encode_execute(&mut b, 7, &params, false);
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            7, 0, 0, 0, 0, 1, 0, 0, 0, 0b001, 0,
            0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            2, b'a', b'b',
        ];
        assert_eq!(b, want);
        b.clear();
        encode_execute(&mut b, 1, &[], true);
        assert_eq!(b, vec![1, 0, 0, 0, 0, 1, 0, 0, 0]);
    }

    /// A MariaDB 10.11 greeting as captured on loopback (connection id and scramble varied).
    fn greeting() -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.6-MariaDB\0");
        p.extend_from_slice(&[0x2a, 0, 0, 0]);
        p.extend_from_slice(b"ABCDEFGH\0");
        p.extend_from_slice(&[0xfe, 0xf7]); // low capabilities
        p.push(45);
        p.extend_from_slice(&[2, 0]);
        p.extend_from_slice(&[0xff, 0x81]); // high capabilities
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&[0x1d, 0, 0, 0]); // MariaDB's extended capabilities
        p.extend_from_slice(b"IJKLMNOPQRST\0");
        p.extend_from_slice(b"mysql_native_password\0");
        p
    }

    #[test]
    fn text_rows_parse_with_nulls_and_long_values() {
        let mut p = Vec::new();
        put_lenenc(&mut p, 3);
        p.extend_from_slice(b"abc");
        p.push(0xfb);
        let long = "x".repeat(300);
        put_lenenc(&mut p, 300);
        p.extend_from_slice(long.as_bytes());
        assert_eq!(
            parse_text_row(&p, 3).unwrap(),
            [Some("abc".to_string()), None, Some(long)]
        );
        // A row shorter than its lengths say is refused, not read past.
        assert!(parse_text_row(&p[..10], 3).is_err());
        assert!(parse_text_row(&[0xfe, 1], 1).is_err());
    }

    #[test]
    fn greeting_gives_scramble_capabilities_and_plugin() {
        let h = parse_handshake(&greeting()).unwrap();
        assert_eq!(h.scramble, b"ABCDEFGHIJKLMNOPQRST");
        assert_eq!(h.plugin, auth::NATIVE);
        assert_eq!(h.server_version, "10.11.6-MariaDB");
        assert_eq!(h.capabilities, 0x81ff_f7fe);
        assert!(h.capabilities & CLIENT_PLUGIN_AUTH_LENENC_DATA != 0);
        // CLIENT_MYSQL clear: MariaDB's extended capabilities are read from the filler.
        assert_eq!(h.mariadb_capabilities, 0x1d);
        let mut mysql = greeting();
        mysql[36] |= 1;
        assert_eq!(parse_handshake(&mysql).unwrap().mariadb_capabilities, 0);
        let mut err = vec![0xff, 0x10, 0x04];
        err.extend_from_slice(b"Too many connections");
        match parse_handshake(&err) {
            Err(SqlError::Server {
                code: 1040,
                message,
            }) => {
                assert_eq!(message, "Too many connections")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_handshake(&greeting()[..20]),
            Err(SqlError::Protocol(_))
        ));
    }

    #[test]
    fn auth_switch_and_error_packets() {
        let mut p = vec![0xfe];
        p.extend_from_slice(b"caching_sha2_password\0");
        p.extend_from_slice(b"0123456789abcdefghij\0");
        let (plugin, data) = parse_auth_switch(&p);
        assert_eq!(plugin, b"caching_sha2_password");
        assert_eq!(data, b"0123456789abcdefghij\0");
        let mut e = vec![0xff, 0xbd, 0x04, b'#'];
        e.extend_from_slice(b"40001Deadlock found");
        match parse_err(&e) {
            SqlError::Server { code, message } => {
                assert_eq!((code, message.as_str()), (1213, "Deadlock found"))
            }
            other => panic!("{other:?}"),
        }
        // OK: 3 affected rows, last insert id 0, status SERVER_MORE_RESULTS_EXISTS | autocommit.
        assert_eq!(parse_ok(&[0, 3, 0, 0x0a, 0, 0, 0]).unwrap(), (3, 0x000a));
        assert!(is_eof(&[0xfe, 0, 0, 2, 0]));
        assert!(!is_eof(&[0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    }

    /// Serves `bytes` on a loopback socket to a Conn, then compares what the client did.
    fn replay(server_bytes: Vec<u8>) -> (Conn, std::thread::JoinHandle<Vec<u8>>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.write_all(&server_bytes).unwrap();
            s.shutdown(Shutdown::Write).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            got
        });
        let stream = Stream::Plain(Plain::new(Sock::Tcp(TcpStream::connect(addr).unwrap())));
        let conn = Conn {
            stream,
            rbuf: vec![0; 16],
            rpos: 0,
            rend: 0,
            wbuf: Vec::new(),
            seq: 0,
            registry: None,
            plugin: String::new(),
            server_version: String::new(),
        };
        (conn, h)
    }

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn result_set_rows_are_skipped_and_counted() {
        // SELECT c FROM sbtest1 WHERE id=? answered in the binary protocol: column count,
        // one column definition, EOF, two rows, EOF; then an OK for the next statement.
        let mut col = b"\x03def\x06sbtest\x07sbtest1\x07sbtest1\x01c\x01c\x0c".to_vec();
        col.extend_from_slice(&[0x2d, 0, 0xe0, 1, 0, 0, 0xfe, 0x01, 0x10, 0, 0, 0]);
        let mut row = vec![0, 0, 120];
        row.extend_from_slice(&[b'7'; 120]);
        let mut s = Vec::new();
        s.extend(packet(1, &[1]));
        s.extend(packet(2, &col));
        s.extend(packet(3, &[0xfe, 0, 0, 0x22, 0]));
        s.extend(packet(4, &row));
        s.extend(packet(5, &row));
        s.extend(packet(6, &[0xfe, 0, 0, 0x22, 0]));
        s.extend(packet(1, &[0, 1, 0, 2, 0, 0, 0]));
        let (mut c, h) = replay(s);
        let mut stmt = Stmt {
            id: 1,
            params: 1,
            bound: false,
        };
        assert_eq!(
            c.execute(&mut stmt, &[Param::Int(5)]).unwrap(),
            Reply::Rows(2)
        );
        assert!(stmt.bound);
        assert_eq!(
            c.query("UPDATE t SET k=k+1").unwrap(),
            Reply::Ok { affected_rows: 1 }
        );
        match c.query("x") {
            Err(SqlError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof),
            other => panic!("{other:?}"),
        }
        drop(c);
        let sent = h.join().unwrap();
        let want = packet(
            0,
            &[
                COM_STMT_EXECUTE,
                1,
                0,
                0,
                0,
                0,
                1,
                0,
                0,
                0,
                0,
                1,
                TYPE_LONGLONG,
                0,
                5,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            ],
        );
        assert_eq!(&sent[..want.len()], &want[..]);
        let query = packet(0, b"\x03UPDATE t SET k=k+1");
        assert_eq!(&sent[want.len()..want.len() + query.len()], &query[..]);
    }

    #[test]
    fn cached_metadata_replies_are_read_with_or_without_definitions() {
        // MARIADB_CLIENT_CACHE_METADATA: the column count carries a "metadata follows" byte;
        // 0 goes straight to the EOF before the rows, 1 (the table changed) sends them.
        let col = b"\x03def\x06sbtest\x07sbtest1\x07sbtest1\x01c\x01c\x0c\x2d\x00";
        let row = [0u8, 0, 1, b'x'];
        let eof = [0xfe, 0, 0, 0x22, 0];
        let mut s = Vec::new();
        s.extend(packet(1, &[1, 0]));
        s.extend(packet(2, &eof));
        s.extend(packet(3, &row));
        s.extend(packet(4, &eof));
        s.extend(packet(1, &[1, 1]));
        s.extend(packet(2, col));
        s.extend(packet(3, &eof));
        s.extend(packet(4, &row));
        s.extend(packet(5, &row));
        s.extend(packet(6, &eof));
        let (mut c, _h) = replay(s);
        let mut stmt = Stmt {
            id: 1,
            params: 0,
            bound: false,
        };
        assert_eq!(c.execute(&mut stmt, &[]).unwrap(), Reply::Rows(1));
        assert_eq!(c.execute(&mut stmt, &[]).unwrap(), Reply::Rows(2));
    }

    #[test]
    fn prepare_skips_definitions() {
        let col =
            b"\x03def\x00\x00\x00\x01?\x00\x0c\x3f\x00\x00\x00\x00\x00\xfd\x80\x00\x00\x00\x00";
        let mut s = Vec::new();
        s.extend(packet(1, &[0, 9, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0]));
        s.extend(packet(2, col));
        s.extend(packet(3, col));
        s.extend(packet(4, &[0xfe, 0, 0, 2, 0]));
        s.extend(packet(5, col));
        s.extend(packet(6, &[0xfe, 0, 0, 2, 0]));
        let mut e = vec![0xff, 0x7a, 0x04, b'#'];
        e.extend_from_slice(b"42S02Table 'x.sbtest9' doesn't exist");
        s.extend(packet(1, &e));
        let (mut c, _h) = replay(s);
        assert_eq!(
            c.prepare("SELECT c FROM t WHERE id BETWEEN ? AND ?")
                .unwrap(),
            Stmt {
                id: 9,
                params: 2,
                bound: false
            }
        );
        assert_eq!(
            c.prepare("SELECT 1 FROM sbtest9").unwrap_err().code(),
            Some(1146)
        );
    }
}
