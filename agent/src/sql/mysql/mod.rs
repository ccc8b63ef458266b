//! A lean, blocking client for the MySQL client/server protocol, used on the OLTP run's hot
//! path only (preparing tables, cleanup and checks use mysql_async).
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

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod auth;
pub mod tls;

use crate::sql::{Client, ConnInfo, Param, Reply, Sockets, SqlError, show_variables_sql};
use fleetbench_model::workloads::oltp::tls::SslMode;
use fleetbench_model::workloads::server::Target;
use tls::TlsStream;

// Capability flags (protocol documentation, "Capabilities Flags").
const CLIENT_LONG_PASSWORD: u32 = 0x1;
const CLIENT_LONG_FLAG: u32 = 0x4;
const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_PLUGIN_AUTH_LENENC_DATA: u32 = 0x20_0000;
const CLIENT_SSL: u32 = 0x800;

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

/// Where to connect and as whom.
#[derive(Debug, Clone)]
pub struct ConnectOpts<'a> {
    /// Unix socket path; when set, host and port are not used.
    pub socket: Option<&'a str>,
    pub host: &'a str,
    pub port: u16,
    pub user: &'a str,
    pub password: &'a str,
    pub database: &'a str,
    pub ssl_mode: SslMode,
    /// Built from the target's TLS settings; None when TLS is disabled.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The server's RSA public key (PEM) for caching_sha2_password without TLS.
    pub server_public_key: Option<&'a str>,
    /// Whether the server may be asked for its RSA public key (it could be an impostor's).
    pub get_server_public_key: bool,
    /// The TCP connect, the server's greeting and the login together take at most this
    /// long (`--db-connect-timeout`); a server that accepts and never speaks fails here.
    pub connect_timeout: Duration,
}

/// A socket to the server. On a cooperative worker (`crate::coop`) the socket does not
/// block: a read or write that would block waits in the worker's loop instead, so the
/// code above (TLS, packets) reads as blocking code either way.
struct Plain {
    sock: Sock,
    /// The socket does not block: it belongs to a cooperative worker.
    cooperative: bool,
    /// Something was written since the last read: on a cooperative socket the next read
    /// waits for the reply before it tries, which saves the read that would find nothing.
    sent: bool,
    /// While logging in: every read and write ends with TimedOut at this instant.
    deadline: Option<Instant>,
}

enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    /// Read and write timeouts of a blocking socket (None: block without a limit).
    fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Sock::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(buf),
            Sock::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Plain {
    fn new(sock: Sock) -> Self {
        Plain {
            sock,
            cooperative: false,
            sent: false,
            deadline: None,
        }
    }

    fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match &self.sock {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Unix(s) => s.as_raw_fd(),
        }
    }

    /// On a cooperative worker, makes the socket non-blocking (see the type's docs).
    fn cooperate(&mut self) -> io::Result<()> {
        if !crate::coop::in_worker() {
            return Ok(());
        }
        match &self.sock {
            Sock::Tcp(s) => s.set_nonblocking(true)?,
            Sock::Unix(s) => s.set_nonblocking(true)?,
        }
        self.cooperative = true;
        Ok(())
    }

    /// Bounds every read and write by `deadline` (a login), or lifts the bound (None).
    fn set_deadline(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        self.deadline = deadline;
        if deadline.is_none() && !self.cooperative {
            // Blocking again without a limit, as the benchmark's statements are.
            self.sock.set_timeouts(None)?;
        }
        Ok(())
    }

    /// Runs `op` until it does not say it would block, by the deadline: a blocking socket
    /// is given the time left as its timeout, a cooperative one waits in its loop until
    /// the socket is ready or the deadline comes (`readable` says which way it waits).
    fn by_deadline<T>(
        &mut self,
        deadline: Instant,
        readable: bool,
        mut op: impl FnMut(&mut Sock) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the server did not answer within the connect timeout",
                ));
            }
            if !self.cooperative {
                self.sock.set_timeouts(Some(deadline - now))?;
            }
            match op(&mut self.sock) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if self.cooperative {
                        let fd = self.fd();
                        crate::coop::wait(if readable {
                            crate::coop::Wait::ReadableBy(fd, deadline)
                        } else {
                            crate::coop::Wait::WritableBy(fd, deadline)
                        });
                    }
                }
                r => return r,
            }
        }
    }

    fn shutdown(&self) -> io::Result<()> {
        match &self.sock {
            Sock::Tcp(s) => s.shutdown(Shutdown::Both),
            Sock::Unix(s) => s.shutdown(Shutdown::Both),
        }
    }

    /// Runs `op` on the socket until it does not say it would block, waiting for `ready`
    /// in between (only a cooperative socket says so).
    fn retry<T>(
        &mut self,
        ready: fn(std::os::fd::RawFd) -> crate::coop::Wait,
        mut op: impl FnMut(&mut Sock) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            match op(&mut self.sock) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::coop::wait(ready(self.fd()));
                }
                r => return r,
            }
        }
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        if self.cooperative {
            crate::coop::closing(self.fd());
        }
    }
}

impl Read for Plain {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(d) = self.deadline {
            self.sent = false;
            return self.by_deadline(d, true, |s| s.read(buf));
        }
        if std::mem::take(&mut self.sent) {
            // A reply takes a round trip: wait for it rather than find nothing first.
            crate::coop::wait(crate::coop::Wait::Reply(self.fd()));
        }
        self.retry(crate::coop::Wait::Readable, |s| s.read(buf))
    }
}

impl Write for Plain {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(d) = self.deadline {
            return self.by_deadline(d, false, |s| s.write(buf));
        }
        let n = self.retry(crate::coop::Wait::Writable, |s| s.write(buf))?;
        self.sent = self.cooperative;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Stream {
    Plain(Plain),
    Tls(Box<TlsStream<Plain>>),
    /// Only while the socket moves under TLS.
    Moving,
}

impl Stream {
    fn plain(&self) -> Option<&Plain> {
        match self {
            Stream::Plain(p) => Some(p),
            Stream::Tls(t) => Some(t.sock()),
            Stream::Moving => None,
        }
    }

    fn plain_mut(&mut self) -> Option<&mut Plain> {
        match self {
            Stream::Plain(p) => Some(p),
            Stream::Tls(t) => Some(t.sock_mut()),
            Stream::Moving => None,
        }
    }

    fn shutdown(&self) {
        if let Some(p) = self.plain() {
            let _ = p.shutdown();
        }
    }

    fn raw_fd(&self) -> std::os::fd::RawFd {
        self.plain().map_or(-1, Plain::fd)
    }

    /// Whether the password may travel in the clear: over TLS or a local socket.
    fn is_secure(&self) -> bool {
        match self {
            Stream::Tls(_) => true,
            Stream::Plain(p) => matches!(p.sock, Sock::Unix(_)),
            Stream::Moving => false,
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.read(buf),
            Stream::Tls(t) => t.read(buf),
            Stream::Moving => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(p) => p.write_all(buf),
            Stream::Tls(t) => t.write_all(buf),
            Stream::Moving => Err(io::ErrorKind::NotConnected.into()),
        }
    }
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
    /// Connects and logs in by `opts.connect_timeout`; the socket is registered in
    /// `sockets` for cancellation, and a connect in progress gives up once they are
    /// cancelled.
    pub fn connect(opts: &ConnectOpts, sockets: Option<Arc<Sockets>>) -> Result<Conn, SqlError> {
        let deadline = Instant::now() + opts.connect_timeout;
        let cancelled = || sockets.as_ref().is_some_and(|s| s.is_cancelled());
        let mut stream = match opts.socket {
            Some(path) => Stream::Plain(Plain::new(Sock::Unix(UnixStream::connect(path)?))),
            None => {
                // libmysqlclient's "localhost" means the socket; without one, loopback TCP.
                let host = if opts.host == "localhost" {
                    "127.0.0.1"
                } else {
                    opts.host
                };
                let mut last = None;
                let mut found = None;
                for addr in (host, opts.port).to_socket_addrs()? {
                    match crate::coop::connect(&addr, deadline, &cancelled) {
                        Ok(s) => {
                            found = Some(s);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                let s = match (found, last) {
                    (Some(s), _) => s,
                    (None, Some(e)) => return Err(e.into()),
                    (None, None) => {
                        return Err(SqlError::Protocol(format!("{host} has no address")));
                    }
                };
                s.set_nodelay(true)?;
                Stream::Plain(Plain::new(Sock::Tcp(s)))
            }
        };
        if let Stream::Plain(p) = &mut stream {
            p.cooperate()?;
            p.set_deadline(Some(deadline))?;
        }
        let mut conn = Conn {
            stream,
            rbuf: vec![0; 16 * 1024],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(4096),
            seq: 0,
            registry: None,
            plugin: String::new(),
            server_version: String::new(),
        };
        if let Some(r) = sockets {
            let id = r.register(conn.stream.raw_fd());
            conn.registry = Some((r, id));
        }
        conn.handshake(opts)?;
        if let Some(p) = conn.stream.plain_mut() {
            p.set_deadline(None)?;
        }
        Ok(conn)
    }

    fn handshake(&mut self, opts: &ConnectOpts) -> Result<(), SqlError> {
        let p = self.next_packet()?;
        let hello = parse_handshake(&self.rbuf[p])?;
        self.server_version = hello.server_version.clone();
        let mut caps = CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_DATA;
        if !opts.database.is_empty() {
            caps |= CLIENT_CONNECT_WITH_DB;
        }
        caps &= hello.capabilities;
        if caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(SqlError::Protocol(
                "server does not speak protocol 4.1".into(),
            ));
        }
        let server_tls = hello.capabilities & CLIENT_SSL != 0;
        match (&opts.tls, server_tls) {
            (Some(cfg), true) => {
                caps |= CLIENT_SSL;
                self.start_tls(caps, cfg.clone(), opts)?;
            }
            (_, false) if opts.ssl_mode.requires_tls() => {
                return Err(SqlError::Tls(format!(
                    "the server does not offer TLS, and --mysql-ssl-mode is {}",
                    opts.ssl_mode.name()
                )));
            }
            _ => {}
        }
        // Answer in the server's default plugin when we speak it: no switch round trip.
        let mut plugin = if auth::supported(&hello.plugin) && hello.plugin != auth::CLEAR {
            hello.plugin.clone()
        } else {
            auth::NATIVE.to_string()
        };
        let mut nonce = hello.scramble.clone();
        let answer = self.auth_answer(&plugin, &nonce, opts)?;
        self.start_packet();
        self.wbuf.extend_from_slice(&caps.to_le_bytes());
        self.wbuf.extend_from_slice(&MAX_PACKET.to_le_bytes());
        self.wbuf.push(COLLATION);
        self.wbuf.extend_from_slice(&[0; 23]);
        self.wbuf.extend_from_slice(opts.user.as_bytes());
        self.wbuf.push(0);
        if caps & CLIENT_PLUGIN_AUTH_LENENC_DATA != 0 {
            put_lenenc(&mut self.wbuf, answer.len() as u64);
        } else {
            self.wbuf.push(answer.len() as u8);
        }
        self.wbuf.extend_from_slice(&answer);
        if caps & CLIENT_CONNECT_WITH_DB != 0 {
            self.wbuf.extend_from_slice(opts.database.as_bytes());
            self.wbuf.push(0);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            self.wbuf.extend_from_slice(plugin.as_bytes());
            self.wbuf.push(0);
        }
        self.send()?;
        // At most a few rounds: a switch, then a plugin's extra exchange.
        for _ in 0..8 {
            let p = self.next_packet()?;
            let pkt = &self.rbuf[p];
            match pkt.first() {
                Some(0x00) => {
                    self.plugin = plugin;
                    return Ok(());
                }
                Some(0xff) => return Err(parse_err(pkt)),
                Some(0xfe) => {
                    let (name, data) = parse_auth_switch(pkt);
                    plugin = String::from_utf8_lossy(name).into_owned();
                    nonce = data.to_vec();
                    if !auth::supported(&plugin) {
                        return Err(SqlError::UnsupportedAuth(plugin));
                    }
                    let answer = self.auth_answer(&plugin, &nonce, opts)?;
                    self.start_packet();
                    self.wbuf.extend_from_slice(&answer);
                    self.send()?;
                }
                Some(0x01) if plugin == auth::CACHING_SHA2 => {
                    match pkt.get(1) {
                        // Fast authentication from the server's cache: an OK follows.
                        Some(3) => {}
                        // Full authentication: the password itself, protected.
                        Some(4) => self.caching_sha2_full(&nonce, opts)?,
                        _ => {
                            return Err(SqlError::Protocol(
                                "unexpected caching_sha2_password message".into(),
                            ));
                        }
                    }
                }
                _ => return Err(SqlError::UnsupportedAuth(plugin)),
            }
        }
        Err(SqlError::Protocol("the login did not end".into()))
    }

    /// The authentication plugin that logged this connection in.
    pub fn auth_plugin(&self) -> &str {
        &self.plugin
    }

    /// The server's version string ("10.11.19-MariaDB-0+deb12u1").
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Runs `sql` with the text protocol and returns its rows (NULL as None). For the few
    /// facts read once per target (server variables), never on the benchmark's path.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
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
            // A few rows are asked for; a server sending more is read past, not kept.
            if rows.len() < MAX_FACT_ROWS {
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

    /// Sends the SSL request and puts TLS under the connection.
    // Never inlined: the TLS handshake's state is kilobytes of stack, which inlined into
    // the login would lie under every connection's login, TLS or not, on thousands of
    // small worker stacks (measured: a page a worker).
    #[inline(never)]
    fn start_tls(
        &mut self,
        caps: u32,
        cfg: Arc<rustls::ClientConfig>,
        opts: &ConnectOpts,
    ) -> Result<(), SqlError> {
        self.start_packet();
        self.wbuf.extend_from_slice(&caps.to_le_bytes());
        self.wbuf.extend_from_slice(&MAX_PACKET.to_le_bytes());
        self.wbuf.push(COLLATION);
        self.wbuf.extend_from_slice(&[0; 23]);
        self.send()?;
        let host = if opts.socket.is_some() || opts.host == "localhost" {
            "localhost"
        } else {
            opts.host
        };
        let name = tls::server_name(host).map_err(SqlError::Tls)?;
        let Stream::Plain(plain) = std::mem::replace(&mut self.stream, Stream::Moving) else {
            return Err(SqlError::Protocol("TLS started twice".into()));
        };
        // The socket stays this connection's either way (it is registered for cancelling).
        match TlsStream::connect(cfg, name, plain) {
            Ok(tls) => {
                self.stream = Stream::Tls(Box::new(tls));
                Ok(())
            }
            Err((e, plain)) => {
                self.stream = Stream::Plain(plain);
                Err(match e.kind() {
                    io::ErrorKind::InvalidData => SqlError::Tls(e.to_string()),
                    _ => SqlError::Io(e),
                })
            }
        }
    }

    /// The first answer of `plugin` to the server's `nonce`.
    fn auth_answer(
        &self,
        plugin: &str,
        nonce: &[u8],
        opts: &ConnectOpts,
    ) -> Result<Vec<u8>, SqlError> {
        let pw = opts.password.as_bytes();
        Ok(match plugin {
            auth::CACHING_SHA2 => auth::caching_sha2(pw, nonce),
            auth::ED25519 => auth::ed25519(pw, nonce).to_vec(),
            auth::CLEAR if self.stream.is_secure() => auth::clear(pw),
            auth::CLEAR => {
                return Err(SqlError::Auth(
                    "the server asks for the password in the clear (mysql_clear_password): \
                     allowed over TLS only (--mysql-ssl=on)"
                        .into(),
                ));
            }
            _ => auth::native_password(pw, nonce),
        })
    }

    /// caching_sha2_password's full authentication: the password in the clear over TLS or
    /// a socket, else encrypted with the server's RSA key (given, or asked for if allowed).
    fn caching_sha2_full(&mut self, nonce: &[u8], opts: &ConnectOpts) -> Result<(), SqlError> {
        let pw = opts.password.as_bytes();
        let answer = if self.stream.is_secure() {
            auth::clear(pw)
        } else {
            let pem = match opts.server_public_key {
                Some(k) => k.to_string(),
                None if opts.get_server_public_key => {
                    self.start_packet();
                    self.wbuf.push(0x02);
                    self.send()?;
                    let p = self.next_packet()?;
                    let pkt = &self.rbuf[p];
                    match pkt.first() {
                        Some(0x01) => String::from_utf8_lossy(&pkt[1..]).into_owned(),
                        Some(0xff) => return Err(parse_err(pkt)),
                        _ => {
                            return Err(SqlError::Protocol("the server sent no public key".into()));
                        }
                    }
                }
                None => {
                    return Err(SqlError::Auth(
                        "caching_sha2_password needs the password sent protected: use TLS \
                         (--mysql-ssl=on), give the server's public key \
                         (--mysql-server-public-key=FILE), or allow asking the server for it \
                         (--mysql-get-server-public-key=on)"
                            .into(),
                    ));
                }
            };
            auth::rsa_password(pw, nonce, &pem).map_err(SqlError::Auth)?
        };
        self.start_packet();
        self.wbuf.extend_from_slice(&answer);
        self.send()?;
        Ok(())
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
        self.start_packet();
        self.wbuf.push(cmd);
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
    fn next_packet(&mut self) -> Result<std::ops::Range<usize>, SqlError> {
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
        if self.rend - self.rpos >= need {
            return Ok(());
        }
        if self.rpos == self.rend {
            // All consumed (the usual case between replies): start over at the front.
            self.rpos = 0;
            self.rend = 0;
        }
        if self.rpos + need > self.rbuf.len() {
            // Move what is unread to the front (and grow for a big packet).
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
            if need > self.rbuf.len() {
                self.rbuf.resize(need, 0);
            }
        }
        while self.rend - self.rpos < need {
            let n = self.stream.read(&mut self.rbuf[self.rend..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed the connection",
                )
                .into());
            }
            self.rend += n;
        }
        Ok(())
    }
}

/// What the server's greeting says.
#[derive(Debug, PartialEq)]
struct Hello {
    server_version: String,
    capabilities: u32,
    scramble: Vec<u8>,
    plugin: String,
}

fn parse_handshake(p: &[u8]) -> Result<Hello, SqlError> {
    let bad = || SqlError::Protocol("bad server greeting".into());
    match p.first() {
        Some(10) => {}
        Some(0xff) => return Err(parse_err(p)),
        _ => return Err(bad()),
    }
    let nul = p[1..].iter().position(|&b| b == 0).ok_or_else(bad)?;
    let mut i = 1 + nul + 1 + 4; // server version, connection id
    let part1 = p.get(i..i + 8).ok_or_else(bad)?;
    let mut scramble = part1.to_vec();
    i += 8 + 1;
    let low = p.get(i..i + 2).ok_or_else(bad)?;
    let mut capabilities = u32::from(u16::from_le_bytes([low[0], low[1]]));
    i += 2;
    let mut plugin = String::new();
    if p.len() >= i + 16 {
        let high = u16::from_le_bytes([p[i + 3], p[i + 4]]);
        capabilities |= u32::from(high) << 16;
        let auth_len = usize::from(p[i + 5]);
        i += 16; // charset, status, high capabilities, auth data length, reserved
        if capabilities & CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part2 = p.get(i..i + n).ok_or_else(bad)?;
            i += n;
            // The last byte is a terminating NUL, not part of the scramble.
            let part2 = part2.strip_suffix(&[0]).unwrap_or(part2);
            scramble.extend_from_slice(part2);
        }
        if capabilities & CLIENT_PLUGIN_AUTH != 0 {
            let rest = &p[i.min(p.len())..];
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            plugin = String::from_utf8_lossy(&rest[..end]).into_owned();
        }
    }
    Ok(Hello {
        // MariaDB prefixes "5.5.5-" for old replication clients; its clients drop it.
        server_version: {
            let v = String::from_utf8_lossy(&p[1..1 + nul]);
            v.strip_prefix("5.5.5-").unwrap_or(&v).to_string()
        },
        capabilities,
        scramble,
        plugin,
    })
}

/// An AuthSwitchRequest's plugin name and data (the data without its trailing NUL).
fn parse_auth_switch(p: &[u8]) -> (&[u8], &[u8]) {
    let rest = &p[1.min(p.len())..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let data = rest.get(end + 1..).unwrap_or(&[]);
    // Kept whole: ed25519's 32-byte nonce may end in a zero byte; native and caching_sha2
    // take their 20 bytes from the front.
    (&rest[..end], data)
}

/// Most rows [`Conn::query_rows`] keeps.
const MAX_FACT_ROWS: usize = 1024;

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
        code,
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
    out.extend_from_slice(&id.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&1u32.to_le_bytes());
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

/// Reads the certificate and key files named by the settings (on this host) and
/// builds the TLS configuration once for every connection to this target. Errors
/// name the target and the file.
pub fn load_files(t: &mut Target) -> Result<(), String> {
    let on = |e: String| format!("target {}: {e}", t.name);
    t.loaded.tls = tls::client_config(&t.ssl).map_err(on)?;
    if let Some(p) = &t.server_public_key {
        let pem = fleetbench_model::capped::read_to_string(
            p,
            "the server's public key",
            fleetbench_model::capped::SECRET_CAP,
        )
        .map_err(|e| on(e.to_string()))?;
        t.loaded.server_public_key = Some(pem);
    }
    Ok(())
}

/// The lean client's connection settings.
pub fn connect_opts(t: &Target) -> ConnectOpts<'_> {
    ConnectOpts {
        socket: t.socket.as_deref(),
        host: &t.host,
        port: t.port,
        user: &t.user,
        password: &t.password,
        database: &t.database,
        ssl_mode: t.ssl.mode,
        tls: t.loaded.tls.clone(),
        server_public_key: t.loaded.server_public_key.as_deref(),
        get_server_public_key: t.get_server_public_key,
        connect_timeout: t.connect_timeout(),
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

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        Conn::query_rows(self, sql)
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
        let values = rows
            .into_iter()
            .filter_map(|r| {
                let mut r = r.into_iter();
                Some((r.next()??, r.next()?.unwrap_or_default()))
            })
            .collect();
        Ok((version, values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Err(SqlError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof),
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
