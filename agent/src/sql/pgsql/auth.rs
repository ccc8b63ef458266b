//! Connecting and logging in to PostgreSQL: the TCP connect within the deadline, TLS after
//! an SSLRequest as the target's sslmode asks, the startup message, and the trust,
//! cleartext, md5 and SCRAM-SHA-256 exchanges (`postgres-protocol` computes md5 and
//! SCRAM).

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use fleetbench_model::workloads::server::Target;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::PgConn;
use crate::sql::stream::{Plain, Sock, Stream};
use crate::sql::{Sockets, SqlError};
use fallible_iterator::FallibleIterator;

impl PgConn {
    /// Connects and logs in to `target` by its connect timeout; the socket is registered
    /// in `sockets` for cancellation, and a connect in progress gives up once they are
    /// cancelled.
    pub fn connect(target: &Target, sockets: Option<Arc<Sockets>>) -> Result<PgConn, SqlError> {
        let deadline = Instant::now() + target.connect_timeout();
        let cancelled = || sockets.as_ref().is_some_and(|s| s.is_cancelled());
        // libpq's "localhost" may try ::1 first; the servers this measures listen on
        // IPv4 loopback at least, as for MySQL.
        let host = if target.host == "localhost" {
            "127.0.0.1"
        } else {
            target.host.as_str()
        };
        // A host that is a directory names the server's Unix socket in it, as in libpq.
        let unix = host.starts_with('/');
        let sock = if unix {
            let path = format!("{}/.s.PGSQL.{}", host.trim_end_matches('/'), target.port);
            Sock::Unix(std::os::unix::net::UnixStream::connect(&path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot connect to socket {path}: {e}"))
            })?)
        } else {
            Sock::Tcp(crate::sql::stream::connect_tcp(
                host,
                target.port,
                deadline,
                &cancelled,
            )?)
        };
        let mut plain = Plain::new(sock);
        plain.cooperate()?;
        plain.set_deadline(Some(deadline))?;
        let mut conn = PgConn {
            stream: Stream::Plain(plain),
            rbuf: vec![0; 16 * 1024],
            rpos: 0,
            rend: 0,
            wbuf: BytesMut::with_capacity(4096),
            registry: None,
            auth: "trust",
            server_version: String::new(),
            next_stmt: 0,
        };
        if let Some(r) = sockets {
            let id = r.register(conn.stream.raw_fd());
            conn.registry = Some((r, id));
        }
        // No TLS over a Unix socket (libpq does not ask for it there either).
        if !unix && target.ssl.mode != fleetbench_model::workloads::oltp::tls::SslMode::Disabled {
            conn.start_tls(target, host)?;
        }
        conn.log_in(target)?;
        if let Some(p) = conn.stream.plain_mut() {
            p.set_deadline(None)?;
        }
        Ok(conn)
    }

    /// Asks for TLS; a server that will not is refused when the mode requires TLS.
    fn start_tls(&mut self, target: &Target, host: &str) -> Result<(), SqlError> {
        self.wbuf.clear();
        frontend::ssl_request(&mut self.wbuf);
        self.flush()?;
        let mut answer = [0u8; 1];
        let Stream::Plain(plain) = &mut self.stream else {
            return Err(SqlError::Protocol("TLS started twice".into()));
        };
        read_exact(plain, &mut answer)?;
        match answer[0] {
            b'S' => {}
            b'N' if target.ssl.mode.requires_tls() => {
                return Err(SqlError::Tls(format!(
                    "the server does not offer TLS, and sslmode is {}",
                    target.ssl.mode.libpq_name()
                )));
            }
            b'N' => return Ok(()),
            other => {
                return Err(SqlError::Protocol(format!(
                    "unexpected answer {other:#04x} to the SSL request"
                )));
            }
        }
        let cfg = target.loaded.tls.clone().ok_or_else(|| {
            SqlError::Tls("no TLS configuration was loaded for this target".into())
        })?;
        self.stream.start_tls(cfg, host)
    }

    /// The startup message and the authentication exchange, up to ReadyForQuery.
    fn log_in(&mut self, target: &Target) -> Result<(), SqlError> {
        self.wbuf.clear();
        frontend::startup_message(
            [
                ("user", target.user.as_str()),
                ("database", target.database.as_str()),
                ("application_name", "fleetbench"),
                ("client_encoding", "UTF8"),
            ],
            &mut self.wbuf,
        )?;
        self.flush()?;
        let password = target.password.as_bytes();
        let mut scram: Option<ScramSha256> = None;
        loop {
            match self.next_parsed()? {
                Message::AuthenticationOk => {}
                Message::AuthenticationCleartextPassword => {
                    self.auth = "password";
                    self.send_password(password)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    self.auth = "md5";
                    let hash = md5_hash(target.user.as_bytes(), password, body.salt());
                    self.send_password(hash.as_bytes())?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut offered = Vec::new();
                    let mut it = body.mechanisms();
                    while let Ok(Some(m)) = it.next() {
                        offered.push(m.to_string());
                    }
                    if !offered.iter().any(|m| m == SCRAM_SHA_256) {
                        return Err(SqlError::UnsupportedAuth(offered.join(", ")));
                    }
                    self.auth = "scram-sha-256";
                    let s = ScramSha256::new(password, ChannelBinding::unsupported());
                    self.wbuf.clear();
                    frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut self.wbuf)?;
                    self.flush()?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| SqlError::Protocol("SCRAM continued unasked".into()))?;
                    s.update(body.data())
                        .map_err(|e| SqlError::Auth(format!("SCRAM-SHA-256: {e}")))?;
                    self.wbuf.clear();
                    frontend::sasl_response(s.message(), &mut self.wbuf)?;
                    self.flush()?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| SqlError::Protocol("SCRAM ended unasked".into()))?;
                    // Checks the server's signature: it knew the password too.
                    s.finish(body.data())
                        .map_err(|e| SqlError::Auth(format!("SCRAM-SHA-256: {e}")))?;
                }
                Message::AuthenticationKerberosV5
                | Message::AuthenticationScmCredential
                | Message::AuthenticationGss
                | Message::AuthenticationSspi
                | Message::AuthenticationGssContinue(_) => {
                    return Err(SqlError::UnsupportedAuth(
                        "Kerberos, GSSAPI, SSPI or SCM credentials".into(),
                    ));
                }
                Message::ParameterStatus(p) if p.name()? == "server_version" => {
                    self.server_version = p.value()?.to_string();
                }
                Message::ErrorResponse(body) => return Err(super::error_from(&body)),
                Message::ReadyForQuery(_) => return Ok(()),
                // BackendKeyData, notices.
                _ => {}
            }
        }
    }

    fn send_password(&mut self, password: &[u8]) -> Result<(), SqlError> {
        self.wbuf.clear();
        frontend::password_message(password, &mut self.wbuf)?;
        self.flush()
    }
}

/// Fills `buf` from the socket (by its deadline).
fn read_exact(p: &mut Plain, buf: &mut [u8]) -> Result<(), SqlError> {
    let mut at = 0;
    while at < buf.len() {
        let n = p.read(&mut buf[at..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            )
            .into());
        }
        at += n;
    }
    Ok(())
}
