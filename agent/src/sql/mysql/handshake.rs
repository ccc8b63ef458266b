//! Connecting and logging in: the TCP or socket connect within the deadline, the server's
//! greeting, TLS, and the authentication exchange (the plugins themselves are `auth.rs`).

use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleetbench_model::workloads::oltp::tls::SslMode;
use fleetbench_model::workloads::server::Target;

use super::{COLLATION, Conn, MAX_PACKET, SqlError, auth, parse_err, put_lenenc};
use crate::sql::Sockets;
use crate::sql::stream::{Plain, Sock, Stream};
use crate::sql::tls;

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
pub(super) const CLIENT_PLUGIN_AUTH_LENENC_DATA: u32 = 0x20_0000;
const CLIENT_SSL: u32 = 0x800;
/// Set in a MySQL server's greeting; MariaDB (10.2 and later) clears it and says what else
/// it can do in four bytes of the greeting's filler, its extended capabilities.
const CLIENT_MYSQL: u32 = 0x1;
/// MariaDB's extended capability (bit 36, bit 4 of the extended four bytes): the server
/// sends a prepared statement's result metadata only when it changed, not with every
/// execution. MariaDB's own client library asks for it, so sysbench's server work per
/// point select has no column definition in it; ours must not have one either.
pub(super) const MARIADB_CLIENT_CACHE_METADATA: u32 = 0x10;

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
                let s = crate::sql::stream::connect_tcp(host, opts.port, deadline, &cancelled)?;
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
        // MariaDB's extended capabilities count only when the server says it is MariaDB
        // (CLIENT_MYSQL clear), and then only when our own CLIENT_MYSQL is clear too.
        let ext = if hello.capabilities & CLIENT_MYSQL == 0 {
            caps &= !CLIENT_MYSQL;
            hello.mariadb_capabilities & MARIADB_CLIENT_CACHE_METADATA
        } else {
            0
        };
        if caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(SqlError::Protocol(
                "server does not speak protocol 4.1".into(),
            ));
        }
        let server_tls = hello.capabilities & CLIENT_SSL != 0;
        match (&opts.tls, server_tls) {
            (Some(cfg), true) => {
                caps |= CLIENT_SSL;
                self.start_tls(caps, ext, cfg.clone(), opts)?;
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
        put_filler(&mut self.wbuf, ext);
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

    /// Sends the SSL request and puts TLS under the connection.
    // Never inlined: the TLS handshake's state is kilobytes of stack, which inlined into
    // the login would lie under every connection's login, TLS or not, on thousands of
    // small worker stacks (measured: a page a worker).
    #[inline(never)]
    fn start_tls(
        &mut self,
        caps: u32,
        ext: u32,
        cfg: Arc<rustls::ClientConfig>,
        opts: &ConnectOpts,
    ) -> Result<(), SqlError> {
        self.start_packet();
        self.wbuf.extend_from_slice(&caps.to_le_bytes());
        self.wbuf.extend_from_slice(&MAX_PACKET.to_le_bytes());
        self.wbuf.push(COLLATION);
        put_filler(&mut self.wbuf, ext);
        self.send()?;
        let host = if opts.socket.is_some() || opts.host == "localhost" {
            "localhost"
        } else {
            opts.host
        };
        self.stream.start_tls(cfg, host)
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
}

/// The handshake response's 23 reserved bytes: zero, but for MariaDB's extended
/// capabilities in the last four.
fn put_filler(out: &mut Vec<u8>, mariadb_capabilities: u32) {
    out.extend_from_slice(&[0; 19]);
    out.extend_from_slice(&mariadb_capabilities.to_le_bytes());
}

/// What the server's greeting says.
#[derive(Debug, PartialEq)]
pub(super) struct Hello {
    pub(super) server_version: String,
    pub(super) capabilities: u32,
    /// MariaDB's extended capabilities (0 from a MySQL server).
    pub(super) mariadb_capabilities: u32,
    pub(super) scramble: Vec<u8>,
    pub(super) plugin: String,
}

pub(super) fn parse_handshake(p: &[u8]) -> Result<Hello, SqlError> {
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
    let mut mariadb_capabilities = 0;
    if p.len() >= i + 16 {
        let high = u16::from_le_bytes([p[i + 3], p[i + 4]]);
        capabilities |= u32::from(high) << 16;
        if capabilities & CLIENT_MYSQL == 0 {
            mariadb_capabilities = u32::from_le_bytes([p[i + 12], p[i + 13], p[i + 14], p[i + 15]]);
        }
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
        mariadb_capabilities,
        scramble,
        plugin,
    })
}

/// An AuthSwitchRequest's plugin name and data (the data without its trailing NUL).
pub(super) fn parse_auth_switch(p: &[u8]) -> (&[u8], &[u8]) {
    let rest = &p[1.min(p.len())..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let data = rest.get(end + 1..).unwrap_or(&[]);
    // Kept whole: ed25519's 32-byte nonce may end in a zero byte; native and caching_sha2
    // take their 20 bytes from the front.
    (&rest[..end], data)
}

/// Reads the certificate and key files named by the settings (on this host) and
/// builds the TLS configuration once for every connection to this target. Errors
/// name the target and the file.
pub fn load_files(t: &mut Target) -> Result<(), String> {
    let on = |e: String| format!("target {}: {e}", t.name);
    t.loaded.tls = tls::client_config_for(&t.ssl, t.driver).map_err(on)?;
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
