//! caching_sha2_password, the default login of MySQL 8 and later, which MariaDB has no
//! server side for: the lean client's exchange against a login-only server written here
//! from the protocol documentation (greeting, TLS upgrade, fast path from the server's
//! cache, full authentication over TLS or with the server's RSA key, auth switch), and
//! mysql_clear_password, which servers with PAM or LDAP logins switch clients to. The
//! server checks each answer the way MySQL does, the inverse of what the client computes.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use fleetbench_agent::sql::SqlError;
use fleetbench_agent::sql::mysql::{Conn, ConnectOpts};
use fleetbench_agent::sql::tls::client_config;
use fleetbench_model::workloads::oltp::tls::{SslMode, SslSettings};
use fleetbench_tests::{Scratch, make_certs};
use rsa::pkcs8::EncodePublicKey;
use sha2::{Digest, Sha256};

const PASSWORD: &[u8] = b"s3cret-pw";

/// How the test server authenticates.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Path {
    /// The account is in the server's cache: the scramble is enough.
    Fast,
    /// Not cached: the password itself, over TLS or RSA-encrypted.
    Full,
    /// Greets with mysql_native_password, then switches the client to caching_sha2 (fast).
    Switch,
    /// Switches the client to mysql_clear_password (as servers with PAM or LDAP logins do).
    Clear,
}

struct Server {
    addr: String,
    handle: std::thread::JoinHandle<Result<String, String>>,
}

/// What the server saw, for the test to check ("ok", "rsa-key-sent", ...).
struct Log(Vec<String>);

fn read_packet(s: &mut impl Read) -> Result<(u8, Vec<u8>), String> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h)
        .map_err(|e| format!("read header: {e}"))?;
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0; len];
    s.read_exact(&mut p)
        .map_err(|e| format!("read payload: {e}"))?;
    Ok((h[3], p))
}

fn write_packet(s: &mut impl Write, seq: u8, payload: &[u8]) -> Result<(), String> {
    let len = payload.len() as u32;
    let mut out = len.to_le_bytes()[..3].to_vec();
    out.push(seq);
    out.extend_from_slice(payload);
    s.write_all(&out)
        .and_then(|_| s.flush())
        .map_err(|e| e.to_string())
}

fn ok_packet() -> Vec<u8> {
    vec![0x00, 0, 0, 0x02, 0, 0, 0]
}

fn err_packet(msg: &str) -> Vec<u8> {
    let mut p = vec![0xff, 0x15, 0x04, b'#'];
    p.extend_from_slice(b"28000");
    p.extend_from_slice(msg.as_bytes());
    p
}

/// The greeting: protocol 10, a 20-byte nonce, the capabilities, the default plugin.
fn greeting(nonce: &[u8; 20], tls: bool, plugin: &str) -> Vec<u8> {
    // LONG_PASSWORD, CONNECT_WITH_DB, PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION,
    // MULTI_RESULTS, PS_MULTI_RESULTS, PLUGIN_AUTH, PLUGIN_AUTH_LENENC_DATA (+ SSL).
    let mut caps: u32 =
        0x1 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x2_0000 | 0x4_0000 | 0x8_0000 | 0x20_0000;
    if tls {
        caps |= 0x800;
    }
    let mut p = vec![10];
    p.extend_from_slice(b"8.4.0-test\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(&nonce[..8]);
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(&nonce[8..]);
    p.push(0);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

/// The auth data of a HandshakeResponse41 (lenenc length, as the client asked for).
fn auth_data(p: &[u8]) -> Result<Vec<u8>, String> {
    let mut i = 4 + 4 + 1 + 23;
    let nul = p[i..].iter().position(|&b| b == 0).ok_or("no user")?;
    i += nul + 1;
    let n = usize::from(*p.get(i).ok_or("no auth length")?);
    Ok(p.get(i + 1..i + 1 + n).ok_or("short auth data")?.to_vec())
}

/// MySQL's check of the fast answer: SHA256(stored + nonce) XOR answer must hash to the
/// stored SHA256(SHA256(password)).
fn fast_answer_ok(answer: &[u8], nonce: &[u8]) -> bool {
    let stored = Sha256::digest(Sha256::digest(PASSWORD));
    let mut h = Sha256::new();
    h.update(stored);
    h.update(nonce);
    let mask = h.finalize();
    if answer.len() != 32 {
        return false;
    }
    let candidate: Vec<u8> = answer.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect();
    Sha256::digest(&candidate) == stored
}

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

/// Serves one login; returns what it saw.
fn serve_one(
    mut tcp: TcpStream,
    path: Path,
    tls: Option<Arc<rustls::ServerConfig>>,
    key: &rsa::RsaPrivateKey,
) -> Result<String, String> {
    let mut log = Log(Vec::new());
    let nonce: [u8; 20] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11) | 1);
    let first = if path == Path::Switch {
        "mysql_native_password"
    } else {
        "caching_sha2_password"
    };
    write_packet(&mut tcp, 0, &greeting(&nonce, tls.is_some(), first))?;
    let (mut seq, mut p) = read_packet(&mut tcp)?;
    let mut stream: Box<dyn Stream> = Box::new(tcp.try_clone().map_err(|e| e.to_string())?);
    let mut secure = false;
    if p.len() == 32 {
        // SSLRequest: the rest goes over TLS.
        let cfg = tls.ok_or("SSLRequest without TLS offered")?;
        let conn = rustls::ServerConnection::new(cfg).map_err(|e| e.to_string())?;
        let mut s = rustls::StreamOwned::new(conn, tcp);
        let (sq, pp) = read_packet(&mut s)?;
        (seq, p) = (sq, pp);
        stream = Box::new(s);
        secure = true;
        log.0.push("tls".into());
    }
    let mut answer = auth_data(&p)?;
    let mut nonce = nonce.to_vec();
    if path == Path::Switch {
        nonce = (50..70).collect();
        let mut sw = vec![0xfe];
        sw.extend_from_slice(b"caching_sha2_password\0");
        sw.extend_from_slice(&nonce);
        sw.push(0);
        seq += 1;
        write_packet(&mut stream, seq, &sw)?;
        let (sq, a) = read_packet(&mut stream)?;
        (seq, answer) = (sq, a);
        log.0.push("switched".into());
    }
    if path == Path::Clear {
        let mut sw = vec![0xfe];
        sw.extend_from_slice(b"mysql_clear_password\0");
        seq += 1;
        write_packet(&mut stream, seq, &sw)?;
        let (sq, a) = read_packet(&mut stream)?;
        (seq, answer) = (sq, a);
        log.0.push(
            if secure {
                "clear-over-tls"
            } else {
                "clear-in-the-open"
            }
            .into(),
        );
    }
    let verdict = match path {
        Path::Clear => answer.strip_suffix(&[0]) == Some(PASSWORD),
        Path::Fast | Path::Switch => {
            let ok = fast_answer_ok(&answer, &nonce);
            seq += 1;
            if ok {
                write_packet(&mut stream, seq, &[0x01, 0x03])?;
            }
            ok
        }
        Path::Full => {
            // Not cached: ask for the password itself.
            seq += 1;
            write_packet(&mut stream, seq, &[0x01, 0x04])?;
            let (sq, mut a) = read_packet(&mut stream)?;
            seq = sq;
            if a == [0x02] {
                log.0.push("rsa-key-sent".into());
                let pem = key
                    .to_public_key()
                    .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
                    .map_err(|e| e.to_string())?;
                let mut reply = vec![0x01];
                reply.extend_from_slice(pem.as_bytes());
                seq += 1;
                write_packet(&mut stream, seq, &reply)?;
                let (sq, aa) = read_packet(&mut stream)?;
                (seq, a) = (sq, aa);
            }
            let plain = if secure {
                log.0.push("clear-over-tls".into());
                a
            } else {
                log.0.push("rsa".into());
                let mut d = key
                    .decrypt(rsa::Oaep::new::<sha1::Sha1>(), &a)
                    .map_err(|e| format!("decrypt: {e}"))?;
                for (i, b) in d.iter_mut().enumerate() {
                    *b ^= nonce[i % nonce.len()];
                }
                d
            };
            plain.strip_suffix(&[0]) == Some(PASSWORD)
        }
    };
    seq += 1;
    if verdict {
        write_packet(&mut stream, seq, &ok_packet())?;
        log.0.push("ok".into());
        // The client's COM_QUIT, or its close.
        let _ = read_packet(&mut stream);
    } else {
        write_packet(&mut stream, seq, &err_packet("Access denied for user 'u'"))?;
        log.0.push("denied".into());
    }
    Ok(log.0.join(","))
}

fn start(
    path: Path,
    tls: Option<Arc<rustls::ServerConfig>>,
    key: Arc<rsa::RsaPrivateKey>,
) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        let (tcp, _) = l.accept().map_err(|e| e.to_string())?;
        serve_one(tcp, path, tls, &key)
    });
    Server { addr, handle }
}

fn login(
    server: &Server,
    password: &str,
    tls: Option<Arc<rustls::ClientConfig>>,
    public_key: Option<&str>,
    get_key: bool,
) -> Result<(), SqlError> {
    let (host, port) = server.addr.rsplit_once(':').unwrap();
    let opts = ConnectOpts {
        socket: None,
        host,
        port: port.parse().unwrap(),
        user: "u",
        password,
        database: "sbtest",
        ssl_mode: if tls.is_some() {
            SslMode::Required
        } else {
            SslMode::Disabled
        },
        tls,
        server_public_key: public_key,
        get_server_public_key: get_key,
        connect_timeout: std::time::Duration::from_secs(10),
    };
    Conn::connect(&opts, None).map(Conn::quit)
}

fn server_tls(dir: &std::path::Path) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(dir.join("agent.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("agent.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    )
}

#[test]
fn caching_sha2_password_logs_in_on_every_path() {
    let scratch = Scratch::new("caching-sha2");
    make_certs(&scratch.0);
    let tls = server_tls(&scratch.0);
    let client_tls = client_config(&SslSettings {
        mode: SslMode::VerifyIdentity,
        ca: Some(scratch.0.join("ca.pem")),
        ..Default::default()
    })
    .unwrap();
    let key = Arc::new(rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap());
    let pw = std::str::from_utf8(PASSWORD).unwrap();
    let done = |s: Server| s.handle.join().unwrap().unwrap();

    // Fast path: the scramble.
    let s = start(Path::Fast, None, key.clone());
    login(&s, pw, None, None, false).unwrap();
    assert_eq!(done(s), "ok");

    // Fast path with a wrong password: the server's refusal, with its code.
    let s = start(Path::Fast, None, key.clone());
    match login(&s, "wrong", None, None, false) {
        Err(SqlError::Server { code: 1045, .. }) => {}
        other => panic!("expected access denied, got {other:?}"),
    }
    assert_eq!(done(s), "denied");

    // Auth switch from mysql_native_password.
    let s = start(Path::Switch, None, key.clone());
    login(&s, pw, None, None, false).unwrap();
    assert_eq!(done(s), "switched,ok");

    // Full authentication over TLS: the password in the clear inside TLS.
    let s = start(Path::Full, Some(tls.clone()), key.clone());
    login(&s, pw, client_tls.clone(), None, false).unwrap();
    assert_eq!(done(s), "tls,clear-over-tls,ok");

    // Full authentication over plain TCP with the key fetched from the server (allowed).
    let s = start(Path::Full, None, key.clone());
    login(&s, pw, None, None, true).unwrap();
    assert_eq!(done(s), "rsa-key-sent,rsa,ok");

    // ... with the key given: the server is not asked.
    let pem = key
        .to_public_key()
        .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
        .unwrap();
    let s = start(Path::Full, None, key.clone());
    login(&s, pw, None, Some(&pem), false).unwrap();
    assert_eq!(done(s), "rsa,ok");

    // ... with a wrong password: refused.
    let s = start(Path::Full, None, key.clone());
    assert!(matches!(
        login(&s, "wrong", None, Some(&pem), false),
        Err(SqlError::Server { code: 1045, .. })
    ));
    assert_eq!(done(s), "rsa,denied");

    // mysql_clear_password: over TLS the password goes; without TLS the client refuses.
    let s = start(Path::Clear, Some(tls.clone()), key.clone());
    login(&s, pw, client_tls.clone(), None, false).unwrap();
    assert_eq!(done(s), "tls,clear-over-tls,ok");
    let s = start(Path::Clear, None, key.clone());
    match login(&s, pw, None, None, false) {
        Err(SqlError::Auth(m)) => assert!(m.contains("TLS"), "{m}"),
        other => panic!("expected a refusal to send the password in the clear, got {other:?}"),
    }
    assert!(
        s.handle.join().unwrap().is_err(),
        "the server got no password"
    );

    // ... with neither key nor permission: the client says what to give, sends nothing.
    let s = start(Path::Full, None, key.clone());
    match login(&s, pw, None, None, false) {
        Err(SqlError::Auth(m)) => {
            assert!(
                m.contains("--mysql-server-public-key") && m.contains("--mysql-ssl"),
                "{m}"
            )
        }
        other => panic!("expected a refusal to send the password, got {other:?}"),
    }
    assert!(
        s.handle.join().unwrap().is_err(),
        "the server got no password"
    );
}
