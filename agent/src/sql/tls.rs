//! TLS to the database: sysbench's and the MySQL client's `--mysql-ssl*` settings, the
//! rustls client configuration the lean client uses, built once per target on the agent
//! (the certificate files are read on the agent's host), and the lean client's TLS stream.
//!
//! [`TlsStream`]: rustls does the handshake (and keeps the key schedule, for TLS 1.3 key
//! updates and session tickets); the records after it are sealed and opened here with
//! ring's AEAD, in place in the stream's own buffers. A statement costs one record, one
//! write and no allocation, and a reply is decrypted where it was read, instead of going
//! through rustls's buffered connection (its queues, deframer and state machine, and a copy
//! and an allocation each way).

use std::io::{self, Read, Write};
use std::sync::Arc;

use ring::aead;
use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::kernel::KernelConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};
use rustls::{ConnectionTrafficSecrets, ProtocolVersion, SupportedCipherSuite};

use fleetbench_model::workloads::oltp::tls::{SslMode, SslSettings};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// Reads the files and builds the client configuration (None when TLS is disabled).
/// Errors name the file.
pub fn client_config(s: &SslSettings) -> Result<Option<Arc<ClientConfig>>, String> {
    client_config_for(s, fleetbench_model::workloads::server::Driver::Mysql)
}

/// [`client_config`] for a target of `driver`, whose options its errors name.
pub fn client_config_for(
    s: &SslSettings,
    driver: fleetbench_model::workloads::server::Driver,
) -> Result<Option<Arc<ClientConfig>>, String> {
    if s.mode == SslMode::Disabled {
        return Ok(None);
    }
    s.validate_for(driver)?;
    let mut provider = rustls::crypto::ring::default_provider();
    // AES-128-GCM first: a statement and its reply are records of a few hundred bytes,
    // where 10 AES rounds instead of 14 show in the client CPU per query.
    provider.cipher_suites.sort_by_key(|s| {
        let name = format!("{:?}", s.suite());
        !name.contains("AES_128_GCM")
    });
    let provider = Arc::new(provider);
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?;
    let builder = match s.mode {
        SslMode::Disabled => unreachable!("handled above"),
        SslMode::Preferred | SslMode::Required => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Relaxed {
                chain: None,
                provider,
            })),
        SslMode::VerifyCa | SslMode::VerifyIdentity => {
            let roots = roots(s)?;
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots),
                provider.clone(),
            )
            .build()
            .map_err(|e| format!("TLS setup: {e}"))?;
            if s.mode == SslMode::VerifyIdentity {
                builder.with_webpki_verifier(webpki)
            } else {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(Relaxed {
                        chain: Some(webpki),
                        provider,
                    }))
            }
        }
    };
    let config = match (&s.cert, &s.key) {
        (Some(cert), Some(key)) => {
            let certs = read_certs(cert)?;
            let pem = fleetbench_model::capped::read(
                key,
                "the private key",
                fleetbench_model::capped::SECRET_CAP,
            )
            .map_err(|e| e.to_string())?;
            let key = PrivateKeyDer::from_pem_slice(&pem)
                .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| format!("client certificate {}: {e}", cert.display()))?
        }
        _ => builder.with_no_client_auth(),
    };
    let mut config = config;
    // TlsStream takes the traffic keys over from rustls after the handshake.
    config.enable_secret_extraction = true;
    Ok(Some(Arc::new(config)))
}

fn roots(s: &SslSettings) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if let Some(ca) = &s.ca {
        for c in read_certs(ca)? {
            roots
                .add(c)
                .map_err(|e| format!("CA file {}: {e}", ca.display()))?;
        }
    }
    Ok(roots)
}

/// The PEM certificates in `path`, read with the size cap of secrets (see fleetbench_model::capped).
fn read_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = fleetbench_model::capped::read(
        path,
        "the certificate file",
        fleetbench_model::capped::SECRET_CAP,
    )
    .map_err(|e| e.to_string())?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read the certificates in {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// The server name a certificate is checked against: the host (an address or a DNS
/// name), or "localhost" over a Unix socket.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string())
        .map_err(|e| format!("'{host}' is no TLS server name: {e}"))
}

/// The verifier of the modes that check less than verify_identity: preferred and required
/// check nothing of who is at the other end (as the MySQL client's modes of those names);
/// verify_ca checks that the chain leads to the CA but lets the name differ. Both still
/// check the handshake's signatures.
#[derive(Debug)]
struct Relaxed {
    /// verify_ca's chain check; None for preferred and required.
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    /// The signature algorithms the handshake's signatures are checked with.
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

// --- The lean client's TLS stream ------------------------------------------------------------

/// A record's header: content type, legacy version, body length.
const HEADER: usize = 5;
/// The most plaintext one record carries.
const MAX_FRAGMENT: usize = 16 * 1024;
/// The longest record body accepted (TLS 1.2 allows 2,048 bytes over the plaintext, 1.3 256).
const MAX_BODY: usize = MAX_FRAGMENT + 2048;
/// AES-GCM's and ChaCha20-Poly1305's tag.
const TAG: usize = 16;
/// TLS 1.2 AES-GCM: the part of the nonce that each record carries in front.
const EXPLICIT_NONCE: usize = 8;
/// What the read buffer starts with; it grows to the longest record seen.
const FIRST_BUFFER: usize = 4096;

const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;

const HELLO_REQUEST: u8 = 0;
const NEW_SESSION_TICKET: u8 = 4;
const KEY_UPDATE: u8 = 24;

const CLOSE_NOTIFY: u8 = 0;
const USER_CANCELED: u8 = 90;

/// A TLS failure (rustls's errors as they are; ours say "TLS").
fn tls_error(msg: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// One direction's traffic key, its IV and the next record's sequence number.
struct Keys {
    key: aead::LessSafeKey,
    iv: [u8; 12],
    seq: u64,
    /// TLS 1.2 AES-GCM: the last 8 bytes of the nonce travel in front of each record.
    explicit_nonce: bool,
}

impl Keys {
    fn new(seq: u64, secrets: ConnectionTrafficSecrets, tls13: bool) -> io::Result<Keys> {
        let (alg, key, iv, gcm) = match &secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&aead::AES_128_GCM, key, iv, true),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&aead::AES_256_GCM, key, iv, true),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&aead::CHACHA20_POLY1305, key, iv, false)
            }
            _ => {
                return Err(tls_error(
                    "the negotiated TLS cipher suite is not supported",
                ));
            }
        };
        let key = aead::UnboundKey::new(alg, key.as_ref()).map_err(|_| tls_error("bad TLS key"))?;
        let iv = iv
            .as_ref()
            .try_into()
            .map_err(|_| tls_error("bad TLS IV length"))?;
        Ok(Keys {
            key: aead::LessSafeKey::new(key),
            iv,
            seq,
            explicit_nonce: gcm && !tls13,
        })
    }

    /// The nonce of the record numbered `seq`: the IV with the sequence number XORed into
    /// its last 8 bytes (TLS 1.3; TLS 1.2 ChaCha20; what TLS 1.2 AES-GCM records are sent
    /// with, as rustls does).
    fn nonce(&self) -> [u8; 12] {
        let mut n = self.iv;
        for (b, s) in n[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    }

    fn next(&mut self) -> io::Result<()> {
        self.seq = self
            .seq
            .checked_add(1)
            .ok_or_else(|| tls_error("TLS record sequence numbers used up"))?;
        Ok(())
    }

    /// Appends one record of `typ` holding `data` (at most MAX_FRAGMENT bytes) to `out`.
    fn seal(&mut self, tls13: bool, out: &mut Vec<u8>, typ: u8, data: &[u8]) -> io::Result<()> {
        let nonce = self.nonce();
        let start = out.len();
        let body = if tls13 {
            data.len() + 1 + TAG
        } else if self.explicit_nonce {
            EXPLICIT_NONCE + data.len() + TAG
        } else {
            data.len() + TAG
        };
        out.push(if tls13 { APPLICATION_DATA } else { typ });
        out.extend_from_slice(&[3, 3]);
        out.extend_from_slice(&(body as u16).to_be_bytes());
        if self.explicit_nonce {
            out.extend_from_slice(&nonce[4..]);
        }
        let text = out.len();
        out.extend_from_slice(data);
        let nonce = aead::Nonce::assume_unique_for_key(nonce);
        let tag = if tls13 {
            // TLS 1.3: the real content type is the plaintext's last byte, and the record
            // header is the additional data.
            out.push(typ);
            let mut header = [0; HEADER];
            header.copy_from_slice(&out[start..start + HEADER]);
            self.key
                .seal_in_place_separate_tag(nonce, aead::Aad::from(header), &mut out[text..])
        } else {
            let aad = tls12_aad(self.seq, typ, data.len());
            self.key
                .seal_in_place_separate_tag(nonce, aead::Aad::from(aad), &mut out[text..])
        }
        .map_err(|_| tls_error("TLS encryption failed"))?;
        out.extend_from_slice(tag.as_ref());
        self.next()
    }

    /// Opens the record `rec` (header and body) in place: its content type and where its
    /// plaintext is in `rec`.
    fn open(&mut self, tls13: bool, rec: &mut [u8]) -> io::Result<(u8, std::ops::Range<usize>)> {
        let (header, body) = rec.split_at_mut(HEADER);
        let typ = header[0];
        if tls13 {
            if typ != APPLICATION_DATA || body.len() > MAX_FRAGMENT + 256 {
                return Err(tls_error(format!(
                    "unexpected TLS record (type {typ}, {} bytes)",
                    body.len()
                )));
            }
            let nonce = aead::Nonce::assume_unique_for_key(self.nonce());
            let mut aad = [0; HEADER];
            aad.copy_from_slice(header);
            let plain = self
                .key
                .open_in_place(nonce, aead::Aad::from(aad), body)
                .map_err(|_| tls_error("a TLS record failed to decrypt (bad record MAC)"))?;
            // The content type is the last byte that is not padding.
            let end = plain
                .iter()
                .rposition(|&b| b != 0)
                .ok_or_else(|| tls_error("a TLS record without a content type"))?;
            let typ = plain[end];
            self.next()?;
            Ok((typ, HEADER..HEADER + end))
        } else {
            let skip = if self.explicit_nonce {
                EXPLICIT_NONCE
            } else {
                0
            };
            if body.len() < skip + TAG {
                return Err(tls_error("a TLS record too short to be encrypted"));
            }
            let nonce = if self.explicit_nonce {
                let mut n = self.iv;
                n[4..].copy_from_slice(&body[..EXPLICIT_NONCE]);
                n
            } else {
                self.nonce()
            };
            let len = body.len() - skip - TAG;
            let aad = tls12_aad(self.seq, typ, len);
            self.key
                .open_in_place(
                    aead::Nonce::assume_unique_for_key(nonce),
                    aead::Aad::from(aad),
                    &mut body[skip..],
                )
                .map_err(|_| tls_error("a TLS record failed to decrypt (bad record MAC)"))?;
            self.next()?;
            Ok((typ, HEADER + skip..HEADER + skip + len))
        }
    }
}

/// TLS 1.2's additional data: sequence number, content type, version, plaintext length.
fn tls12_aad(seq: u64, typ: u8, len: usize) -> [u8; 13] {
    let mut aad = [0; 13];
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    aad[8] = typ;
    aad[9..11].copy_from_slice(&[3, 3]);
    aad[11..].copy_from_slice(&(len as u16).to_be_bytes());
    aad
}

/// A TLS client connection over `S` (TLS 1.2 or 1.3).
pub struct TlsStream<S> {
    sock: S,
    /// rustls after the handshake: new keys for key updates, session tickets.
    kernel: KernelConnection<ClientConnectionData>,
    tls13: bool,
    tx: Keys,
    rx: Keys,
    /// Records sealed under one key before it is replaced (TLS 1.3) or the connection gives
    /// up (TLS 1.2): the cipher suite's confidentiality limit.
    tx_limit: u64,
    /// Bytes read from the socket: `inbuf[ipos..iend]` are not processed yet.
    inbuf: Vec<u8>,
    ipos: usize,
    iend: usize,
    /// A record's plaintext not handed out yet, `inbuf[ppos..pend]`.
    ppos: usize,
    pend: usize,
    /// Records to send.
    out: Vec<u8>,
    /// A post-handshake message that continues in the next record.
    handshake: Vec<u8>,
    /// The server said close_notify.
    closed: bool,
}

impl<S: Read + Write> TlsStream<S> {
    /// Does the handshake over `sock`. On failure the socket is handed back with the error
    /// (InvalidData for TLS errors).
    pub fn connect(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        mut sock: S,
    ) -> Result<TlsStream<S>, (io::Error, S)> {
        match handshake(config, name, &mut sock) {
            Ok((kernel, secrets, inbuf, iend)) => {
                let tls13 = kernel.protocol_version() == ProtocolVersion::TLSv1_3;
                let tx_limit = match kernel.negotiated_cipher_suite() {
                    SupportedCipherSuite::Tls13(s) => s.common.confidentiality_limit,
                    SupportedCipherSuite::Tls12(s) => s.common.confidentiality_limit,
                };
                let keys = Keys::new(secrets.tx.0, secrets.tx.1, tls13)
                    .and_then(|tx| Keys::new(secrets.rx.0, secrets.rx.1, tls13).map(|rx| (tx, rx)));
                match keys {
                    Ok((tx, rx)) => Ok(TlsStream {
                        sock,
                        kernel,
                        tls13,
                        tx,
                        rx,
                        tx_limit,
                        inbuf,
                        ipos: 0,
                        iend,
                        ppos: 0,
                        pend: 0,
                        out: Vec::new(),
                        handshake: Vec::new(),
                        closed: false,
                    }),
                    Err(e) => Err((e, sock)),
                }
            }
            Err(e) => Err((e, sock)),
        }
    }

    pub fn sock(&self) -> &S {
        &self.sock
    }

    pub fn sock_mut(&mut self) -> &mut S {
        &mut self.sock
    }

    /// The protocol version, as rustls names it ("TLSv1_3").
    pub fn version(&self) -> String {
        format!("{:?}", self.kernel.protocol_version())
    }

    /// Sends `data`: one record per 16 KiB, all in one write.
    pub fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.out.clear();
        for chunk in data.chunks(MAX_FRAGMENT) {
            if self.tx.seq >= self.tx_limit {
                self.update_tx_keys()?;
            }
            self.tx
                .seal(self.tls13, &mut self.out, APPLICATION_DATA, chunk)?;
        }
        self.sock.write_all(&self.out)
    }

    /// Reads plaintext: what is left of the last record, then what the records already
    /// read hold, reading the socket only when no whole record is buffered. Ok(0) at the
    /// end (close_notify, or the socket closed between records).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        loop {
            if self.ppos < self.pend {
                let k = (self.pend - self.ppos).min(buf.len() - n);
                buf[n..n + k].copy_from_slice(&self.inbuf[self.ppos..self.ppos + k]);
                self.ppos += k;
                n += k;
            }
            if n == buf.len() || self.closed || (n > 0 && self.buffered_record().is_none()) {
                return Ok(n);
            }
            self.next_record()?;
        }
    }

    /// The body length of the whole record at `ipos`, if there is one.
    fn buffered_record(&self) -> Option<usize> {
        let b = self.inbuf.get(self.ipos..self.iend)?;
        if b.len() < HEADER {
            return None;
        }
        let len = usize::from(u16::from_be_bytes([b[3], b[4]]));
        (b.len() >= HEADER + len).then_some(len)
    }

    /// Reads and opens the next record (the last one's plaintext is all handed out).
    fn next_record(&mut self) -> io::Result<()> {
        if self.ipos == self.iend {
            self.ipos = 0;
            self.iend = 0;
        }
        let len = loop {
            if let Some(len) = self.buffered_record() {
                break len;
            }
            let have = self.iend - self.ipos;
            let need = if have >= HEADER {
                let b = &self.inbuf[self.ipos..];
                let len = usize::from(u16::from_be_bytes([b[3], b[4]]));
                if len > MAX_BODY {
                    return Err(tls_error(format!("a {len}-byte TLS record is too long")));
                }
                HEADER + len
            } else {
                HEADER
            };
            if self.ipos + need > self.inbuf.len() {
                self.inbuf.copy_within(self.ipos..self.iend, 0);
                self.iend = have;
                self.ipos = 0;
                if need > self.inbuf.len() {
                    self.inbuf.resize(need, 0);
                }
            }
            let got = match self.sock.read(&mut self.inbuf[self.iend..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if got == 0 {
                if have == 0 {
                    // Closed between records: the caller sees the end.
                    self.closed = true;
                    return Ok(());
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection inside a TLS record",
                ));
            }
            self.iend += got;
        };
        let start = self.ipos;
        self.ipos += HEADER + len;
        let (typ, plain) = self
            .rx
            .open(self.tls13, &mut self.inbuf[start..start + HEADER + len])?;
        let plain = start + plain.start..start + plain.end;
        match typ {
            APPLICATION_DATA => {
                self.ppos = plain.start;
                self.pend = plain.end;
                Ok(())
            }
            HANDSHAKE => self.post_handshake(plain),
            ALERT => self.alert(plain),
            _ => Err(tls_error(format!("unexpected TLS record of type {typ}"))),
        }
    }

    /// Handshake messages after the handshake: session tickets and key updates (TLS 1.3),
    /// a renegotiation request (TLS 1.2), ignored as the protocol allows.
    fn post_handshake(&mut self, plain: std::ops::Range<usize>) -> io::Result<()> {
        self.handshake.extend_from_slice(&self.inbuf[plain]);
        while self.handshake.len() >= 4 {
            let h = &self.handshake;
            let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
            if len > 1 << 16 {
                return Err(tls_error("an oversized TLS post-handshake message"));
            }
            if h.len() < 4 + len {
                break;
            }
            let body = &h[4..4 + len];
            match (h[0], self.tls13) {
                (NEW_SESSION_TICKET, true) => self
                    .kernel
                    .handle_new_session_ticket(body)
                    .map_err(tls_error)?,
                (KEY_UPDATE, true) => {
                    // The new key starts with the next record.
                    if len != 1 || h.len() != 5 {
                        return Err(tls_error("a malformed TLS key update"));
                    }
                    let requested = match body[0] {
                        0 => false,
                        1 => true,
                        _ => return Err(tls_error("a malformed TLS key update")),
                    };
                    let (seq, secrets) = self.kernel.update_rx_secret().map_err(tls_error)?;
                    self.rx = Keys::new(seq, secrets, true)?;
                    if requested {
                        self.out.clear();
                        self.update_tx_keys()?;
                        self.sock.write_all(&self.out)?;
                    }
                }
                (HELLO_REQUEST, false) if len == 0 => {}
                (t, _) => {
                    return Err(tls_error(format!(
                        "unexpected TLS handshake message {t} after the handshake"
                    )));
                }
            }
            self.handshake.drain(..4 + len);
        }
        Ok(())
    }

    /// Appends a key update (not asking the server for one) to `out`, sealed with the old
    /// key, and takes the next key for what follows.
    fn update_tx_keys(&mut self) -> io::Result<()> {
        if !self.tls13 {
            return Err(tls_error(
                "this TLS 1.2 connection sent as many records as its key allows",
            ));
        }
        self.tx
            .seal(true, &mut self.out, HANDSHAKE, &[KEY_UPDATE, 0, 0, 1, 0])?;
        let (seq, secrets) = self.kernel.update_tx_secret().map_err(tls_error)?;
        self.tx = Keys::new(seq, secrets, true)?;
        Ok(())
    }

    fn alert(&mut self, plain: std::ops::Range<usize>) -> io::Result<()> {
        let &[level, what] = &self.inbuf[plain] else {
            return Err(tls_error("a malformed TLS alert"));
        };
        match what {
            CLOSE_NOTIFY => {
                self.closed = true;
                Ok(())
            }
            // A warning (TLS 1.2 only; TLS 1.3 alerts other than these two are fatal).
            USER_CANCELED => Ok(()),
            _ if level == 1 && !self.tls13 => Ok(()),
            _ => Err(tls_error(format!("the server sent TLS alert {what}"))),
        }
    }
}

/// What the handshake leaves: rustls's key schedule, the traffic keys, and the read buffer
/// with the bytes after the handshake's last record (`buf[..end]`).
type Shaken = (
    KernelConnection<ClientConnectionData>,
    rustls::ExtractedSecrets,
    Vec<u8>,
    usize,
);

/// rustls's handshake over `sock` (unbuffered: the records come and go through our buffers).
fn handshake<S: Read + Write>(
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    sock: &mut S,
) -> io::Result<Shaken> {
    let mut conn = UnbufferedClientConnection::new(config, name).map_err(tls_error)?;
    let mut inbuf = vec![0; FIRST_BUFFER];
    let mut used = 0;
    let mut out = vec![0; FIRST_BUFFER];
    let mut out_len = 0;
    loop {
        let UnbufferedStatus { discard, state } = conn.process_tls_records(&mut inbuf[..used]);
        let mut done = false;
        let mut read_more = false;
        match state.map_err(tls_error)? {
            ConnectionState::EncodeTlsData(mut e) => loop {
                match e.encode(&mut out[out_len..]) {
                    Ok(n) => {
                        out_len += n;
                        break;
                    }
                    Err(EncodeError::InsufficientSize(s)) => {
                        out.resize(out_len + s.required_size, 0)
                    }
                    Err(e) => return Err(tls_error(e)),
                }
            },
            ConnectionState::TransmitTlsData(t) => {
                sock.write_all(&out[..out_len])?;
                out_len = 0;
                t.done();
            }
            ConnectionState::BlockedHandshake => read_more = true,
            ConnectionState::WriteTraffic(_) => done = true,
            ConnectionState::PeerClosed | ConnectionState::Closed => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during the TLS handshake",
                ));
            }
            other => {
                return Err(tls_error(format!(
                    "unexpected {other:?} in the TLS handshake"
                )));
            }
        }
        if discard > 0 {
            inbuf.copy_within(discard..used, 0);
            used -= discard;
        }
        if done {
            break;
        }
        if read_more {
            if used == inbuf.len() {
                if inbuf.len() >= 1 << 20 {
                    return Err(tls_error("the server's handshake is too long"));
                }
                inbuf.resize(inbuf.len() * 2, 0);
            }
            let n = loop {
                match sock.read(&mut inbuf[used..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during the TLS handshake",
                ));
            }
            used += n;
        }
    }
    let (secrets, kernel) = conn.dangerous_into_kernel_connection().map_err(tls_error)?;
    Ok((kernel, secrets, inbuf, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_both_spellings() {
        assert_eq!(
            SslMode::parse("VERIFY_IDENTITY"),
            Some(SslMode::VerifyIdentity)
        );
        assert_eq!(SslMode::parse("verify-ca"), Some(SslMode::VerifyCa));
        assert_eq!(SslMode::parse("on"), None);
        for m in [
            "disabled",
            "preferred",
            "required",
            "verify_ca",
            "verify_identity",
        ] {
            assert_eq!(SslMode::parse(m).unwrap().name(), m);
        }
    }

    #[test]
    fn verification_without_a_ca_and_half_a_client_identity_are_refused() {
        let s = SslSettings {
            mode: SslMode::VerifyCa,
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().contains("--mysql-ssl-ca"));
        let s = SslSettings {
            mode: SslMode::Required,
            cert: Some("c.pem".into()),
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().contains("go together"));
        assert!(client_config(&SslSettings::default()).unwrap().is_none());
    }

    /// A self-signed P-256 certificate for localhost and its key, made with openssl for
    /// these tests (preferred/required modes do not check it).
    const TEST_CERT: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBmjCCAUGgAwIBAgIUSOpjYxJTFnGegM8O+8PQtUtV+ogwCgYIKoZIzj0EAwIw\n\
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMTA1NTkzMloYDzIxMjYxMTA3\n\
MDU1OTMyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO\n\
PQMBBwNCAAQmb9HZzBdmasOaMDzb1mFVSq3pkYk/nbUVPqqCh9Z7Xp3yYhwD8kuB\n\
+16CGFWXlrrvrkrLgDempK1pMFVKzFC3o28wbTAdBgNVHQ4EFgQUkbrm0LcrKqaI\n\
0GH9zGf1TxKfzrMwHwYDVR0jBBgwFoAUkbrm0LcrKqaI0GH9zGf1TxKfzrMwDwYD\n\
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI\n\
zj0EAwIDRwAwRAIgL0eUao2Ukvktd9WG9gzZ4oLbT5z6lsWGro9c9u3Cxq8CICNM\n\
Jym1cD6A6WpUtLmwYLdrGiTA8ZUHIjckUjawj+yE\n\
-----END CERTIFICATE-----";
    const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6+rxVHosAn/TBSlD\n\
y/OOKbvuFFofkHIDRCGyjDbVIMWhRANCAAQmb9HZzBdmasOaMDzb1mFVSq3pkYk/\n\
nbUVPqqCh9Z7Xp3yYhwD8kuB+16CGFWXlrrvrkrLgDempK1pMFVKzFC3\n\
-----END PRIVATE KEY-----";

    fn server_config(
        version: &'static rustls::SupportedProtocolVersion,
        chacha: bool,
    ) -> Arc<rustls::ServerConfig> {
        let mut provider = rustls::crypto::ring::default_provider();
        provider
            .cipher_suites
            .retain(|s| format!("{:?}", s.suite()).contains("CHACHA20") == chacha);
        let cert = CertificateDer::from_pem_slice(TEST_CERT.as_bytes()).unwrap();
        let key = PrivateKeyDer::from_pem_slice(TEST_KEY.as_bytes()).unwrap();
        Arc::new(
            rustls::ServerConfig::builder_with_provider(Arc::new(provider))
                .with_protocol_versions(&[version])
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert], key)
                .unwrap(),
        )
    }

    /// A rustls server on loopback for one connection: it answers each length-prefixed
    /// message with the message reversed (in two writes, so two records); "key update"
    /// makes it update its keys first (asking for ours too), "close" makes it say
    /// close_notify and stop.
    fn serve(
        cfg: Arc<rustls::ServerConfig>,
    ) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            let (sock, _) = l.accept().unwrap();
            let conn = rustls::ServerConnection::new(cfg).unwrap();
            let mut s = rustls::StreamOwned::new(conn, sock);
            loop {
                let mut len = [0; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                let mut msg = vec![0; u32::from_be_bytes(len) as usize];
                s.read_exact(&mut msg).unwrap();
                match msg.as_slice() {
                    b"key update" => s.conn.refresh_traffic_keys().unwrap(),
                    b"close" => {
                        s.conn.send_close_notify();
                        s.flush().unwrap();
                        return;
                    }
                    _ => {}
                }
                msg.reverse();
                s.write_all(&len).unwrap();
                s.write_all(&msg).unwrap();
                s.flush().unwrap();
            }
        });
        (addr, h)
    }

    /// A client connected to an echo server of `version` (AES-GCM), records already gone
    /// both ways.
    fn talking(
        version: &'static rustls::SupportedProtocolVersion,
    ) -> (TlsStream<std::net::TcpStream>, std::thread::JoinHandle<()>) {
        let (addr, h) = serve(server_config(version, false));
        let mut t = client(addr);
        round_trips(&mut t);
        (t, h)
    }

    fn client(addr: std::net::SocketAddr) -> TlsStream<std::net::TcpStream> {
        let cfg = client_config(&SslSettings {
            mode: SslMode::Required,
            ..Default::default()
        })
        .unwrap()
        .unwrap();
        let sock = std::net::TcpStream::connect(addr).unwrap();
        TlsStream::connect(cfg, server_name("localhost").unwrap(), sock)
            .map_err(|(e, _)| e)
            .unwrap()
    }

    /// Sends `msg` and reads the answer through a small buffer (so records are handed out
    /// in pieces).
    fn exchange(t: &mut TlsStream<std::net::TcpStream>, msg: &[u8]) -> Vec<u8> {
        let mut out = (msg.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(msg);
        t.write_all(&out).unwrap();
        let mut got = Vec::new();
        let mut buf = [0; 1000];
        while got.len() < 4
            || got.len() < 4 + u32::from_be_bytes(got[..4].try_into().unwrap()) as usize
        {
            let n = t.read(&mut buf).unwrap();
            assert!(n > 0, "the server closed early");
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(&got[..4], &out[..4]);
        got.split_off(4)
    }

    fn round_trips(t: &mut TlsStream<std::net::TcpStream>) {
        let big: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
        for msg in [&b"SELECT 1"[..], &big, b"x", &big[..MAX_FRAGMENT]] {
            let mut want = msg.to_vec();
            want.reverse();
            assert_eq!(exchange(t, msg), want);
        }
    }

    #[test]
    fn records_go_both_ways_with_every_version_and_cipher() {
        for (version, chacha, name) in [
            (&rustls::version::TLS13, false, "TLSv1_3"),
            (&rustls::version::TLS13, true, "TLSv1_3"),
            (&rustls::version::TLS12, false, "TLSv1_2"),
            (&rustls::version::TLS12, true, "TLSv1_2"),
        ] {
            let (addr, h) = serve(server_config(version, chacha));
            let mut t = client(addr);
            assert_eq!(t.version(), name);
            let suite = format!("{:?}", t.kernel.negotiated_cipher_suite().suite());
            assert_eq!(suite.contains("CHACHA20"), chacha, "{suite}");
            assert_eq!(t.tx.explicit_nonce, name == "TLSv1_2" && !chacha);
            round_trips(&mut t);
            // close_notify: the end of the stream, not an error.
            t.write_all(&[0, 0, 0, 5]).unwrap();
            t.write_all(b"close").unwrap();
            assert_eq!(t.read(&mut [0; 10]).unwrap(), 0);
            h.join().unwrap();
        }
    }

    #[test]
    fn tls13_keys_are_updated_both_ways() {
        let (addr, h) = serve(server_config(&rustls::version::TLS13, false));
        let mut t = client(addr);
        // The server updates its keys and asks for ours.
        let mut want = b"key update".to_vec();
        want.reverse();
        round_trips(&mut t);
        assert_eq!(exchange(&mut t, b"key update"), want);
        // Counted from 0 again after the key update: the answer's two records.
        assert_eq!(t.rx.seq, 2);
        // And ours, asked for: nothing sent under the new key yet.
        assert_eq!(t.tx.seq, 0);
        round_trips(&mut t);
        // Ours run out: a key update goes ahead of the next record, and the sequence
        // numbers start again.
        let before = t.tx.seq;
        t.tx_limit = before + 1;
        round_trips(&mut t);
        assert!(t.tx.seq < before, "{} {before}", t.tx.seq);
        drop(t);
        h.join().unwrap();
    }

    #[test]
    fn a_tls12_key_that_runs_out_ends_the_connection() {
        let (mut t, h) = talking(&rustls::version::TLS12);
        t.tx_limit = t.tx.seq;
        let e = t.write_all(b"more").unwrap_err();
        assert!(
            e.to_string().contains("as many records as its key allows"),
            "{e}"
        );
        drop(t);
        h.join().unwrap();
    }

    #[test]
    fn a_damaged_record_is_refused() {
        let (mut t, _h) = talking(&rustls::version::TLS13);
        // One flipped bit in a record as read: the tag no longer matches.
        t.write_all(&[0, 0, 0, 1, b'a']).unwrap();
        let mut buf = [0; 10];
        assert_eq!((t.ipos, t.ppos), (t.iend, t.pend));
        (t.ipos, t.iend) = (0, 0);
        while t.buffered_record().is_none() {
            let have = t.iend;
            let n = t.sock.read(&mut t.inbuf[have..]).unwrap();
            assert!(n > 0);
            t.iend += n;
        }
        t.inbuf[t.ipos + HEADER] ^= 1;
        let e = t.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("bad record MAC"), "{e}");
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let s = SslSettings {
            mode: SslMode::VerifyIdentity,
            ca: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        let e = client_config(&s).unwrap_err();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
