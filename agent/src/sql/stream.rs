//! The lean client's socket: TCP or a Unix socket, plain or TLS, with the login's deadline,
//! and cooperative (non-blocking, waiting in the worker's loop) on an open loop's workers.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::tls::TlsStream;

/// A socket to the server. On a cooperative worker (`crate::coop`) the socket does not
/// block: a read or write that would block waits in the worker's loop instead, so the
/// code above (TLS, packets) reads as blocking code either way.
pub(super) struct Plain {
    sock: Sock,
    /// The socket does not block: it belongs to a cooperative worker.
    cooperative: bool,
    /// Something was written since the last read: on a cooperative socket the next read
    /// waits for the reply before it tries, which saves the read that would find nothing.
    sent: bool,
    /// While logging in: every read and write ends with TimedOut at this instant.
    deadline: Option<Instant>,
    /// The last read brought a large chunk: a result set is streaming in (see
    /// [`Plain::read_streaming`]).
    streaming: bool,
}

/// A read of at least this many bytes means a result set streams in: a server flushes
/// its send buffer (8 KiB for PostgreSQL, 16 KiB for MariaDB) as it fills, and a reply to a
/// point select or an update is a few hundred bytes.
const STREAM_CHUNK: usize = 8 * 1024;
/// How long a read in the middle of a streaming result looks again before it sleeps.
const STREAM_SPIN: Duration = Duration::from_micros(200);

pub(super) enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    /// Read and write timeouts of a blocking socket (None: block without a limit).
    pub(super) fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
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
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Sock {
    #[inline]
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

/// Connects to `host:port` (each of its addresses in turn) by `deadline`, giving up once
/// `cancelled` says so; Nagle off, as every statement is one write awaiting its reply.
pub(super) fn connect_tcp(
    host: &str,
    port: u16,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for addr in (host, port).to_socket_addrs()? {
        match crate::coop::connect(&addr, deadline, cancelled) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"))
    }))
}

impl Plain {
    pub(super) fn new(sock: Sock) -> Self {
        Plain {
            sock,
            cooperative: false,
            sent: false,
            deadline: None,
            streaming: false,
        }
    }

    pub(super) fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match &self.sock {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Unix(s) => s.as_raw_fd(),
        }
    }

    /// On a cooperative worker, makes the socket non-blocking (see the type's docs).
    pub(super) fn cooperate(&mut self) -> io::Result<()> {
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
    pub(super) fn set_deadline(&mut self, deadline: Option<Instant>) -> io::Result<()> {
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
    pub(super) fn by_deadline<T>(
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

    pub(super) fn shutdown(&self) -> io::Result<()> {
        match &self.sock {
            Sock::Tcp(s) => s.shutdown(Shutdown::Both),
            Sock::Unix(s) => s.shutdown(Shutdown::Both),
        }
    }

    /// Runs `op` on the socket until it does not say it would block, waiting for `ready`
    /// in between (only a cooperative socket says so).
    pub(super) fn retry<T>(
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

impl Plain {
    /// A blocking socket outside a login (a closed loop's statements): its reads and
    /// writes go straight to the socket (it never says it would block, and `sent` stays
    /// false); only a cooperative socket or a login's deadline takes the waiting paths.
    #[inline]
    fn is_direct(&self) -> bool {
        !self.cooperative && self.deadline.is_none()
    }

    /// [`Read::read`] on a cooperative socket or by a deadline.
    #[inline(never)]
    fn read_waiting(&mut self, buf: &mut [u8]) -> io::Result<usize> {
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

    /// [`Write::write`] on a cooperative socket or by a deadline.
    #[inline(never)]
    fn write_waiting(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(d) = self.deadline {
            return self.by_deadline(d, false, |s| s.write(buf));
        }
        let n = self.retry(crate::coop::Wait::Writable, |s| s.write(buf))?;
        self.sent = self.cooperative;
        Ok(n)
    }
}

impl Plain {
    /// A direct read while a result set streams in: the next chunk is a few tens of µs
    /// away, so look for it (giving the CPU to anything runnable in between) for up to
    /// [`STREAM_SPIN`] before sleeping on the socket. A reader asleep on the socket makes
    /// the server's every send wake it, and on one machine (loopback) that wake-up is
    /// the server's CPU time: it was a tenth of PostgreSQL's time serving a 2,000-row
    /// result to a reader that drains each chunk at once (see docs/benchmarks.md).
    #[inline(never)]
    fn read_streaming(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = self.fd();
        let until = Instant::now() + STREAM_SPIN;
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
            let n =
                unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
            if Instant::now() >= until {
                return self.sock.read(buf);
            }
            std::thread::yield_now();
        }
    }
}

impl Read for Plain {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.is_direct() {
            let n = if self.streaming {
                self.read_streaming(buf)?
            } else {
                self.sock.read(buf)?
            };
            // A read that filled what it was offered may have left more behind.
            self.streaming = n >= STREAM_CHUNK || n == buf.len();
            return Ok(n);
        }
        self.read_waiting(buf)
    }
}

impl Write for Plain {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.is_direct() {
            // A new request: its reply is a round trip away, not the next chunk of one.
            self.streaming = false;
            return self.sock.write(buf);
        }
        self.write_waiting(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub(super) enum Stream {
    Plain(Plain),
    Tls(Box<TlsStream<Plain>>),
    /// Only while the socket moves under TLS.
    Moving,
}

impl Stream {
    pub(super) fn plain(&self) -> Option<&Plain> {
        match self {
            Stream::Plain(p) => Some(p),
            Stream::Tls(t) => Some(t.sock()),
            Stream::Moving => None,
        }
    }

    pub(super) fn plain_mut(&mut self) -> Option<&mut Plain> {
        match self {
            Stream::Plain(p) => Some(p),
            Stream::Tls(t) => Some(t.sock_mut()),
            Stream::Moving => None,
        }
    }

    pub(super) fn shutdown(&self) {
        if let Some(p) = self.plain() {
            let _ = p.shutdown();
        }
    }

    /// Moves the plain socket under TLS to `host` (the handshake runs now). A failed
    /// handshake leaves the socket plain and this connection's (it is registered for
    /// cancelling): InvalidData errors are TLS's, others the socket's.
    pub(super) fn start_tls(
        &mut self,
        cfg: std::sync::Arc<rustls::ClientConfig>,
        host: &str,
    ) -> Result<(), super::SqlError> {
        use super::SqlError;
        let name = super::tls::server_name(host).map_err(SqlError::Tls)?;
        let Stream::Plain(plain) = std::mem::replace(self, Stream::Moving) else {
            return Err(SqlError::Protocol("TLS started twice".into()));
        };
        match TlsStream::connect(cfg, name, plain) {
            Ok(tls) => {
                *self = Stream::Tls(Box::new(tls));
                Ok(())
            }
            Err((e, plain)) => {
                *self = Stream::Plain(plain);
                Err(match e.kind() {
                    io::ErrorKind::InvalidData => SqlError::Tls(e.to_string()),
                    _ => SqlError::Io(e),
                })
            }
        }
    }

    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.plain().map_or(-1, Plain::fd)
    }

    /// Whether the password may travel in the clear: over TLS or a local socket.
    pub(super) fn is_secure(&self) -> bool {
        match self {
            Stream::Tls(_) => true,
            Stream::Plain(p) => matches!(p.sock, Sock::Unix(_)),
            Stream::Moving => false,
        }
    }

    // Inlined into the statement code of mod.rs (another module, so perhaps another
    // codegen unit): a call here per packet showed in the instructions per statement.
    #[inline]
    pub(super) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.read(buf),
            Stream::Tls(t) => t.read(buf),
            Stream::Moving => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    #[inline]
    pub(super) fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(p) => p.write_all(buf),
            Stream::Tls(t) => t.write_all(buf),
            Stream::Moving => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

/// Makes sure `need` unread bytes are in `buf[*pos..*end]` (a client's read buffer),
/// reading from `stream` as needed: the buffer starts over at the front once all is
/// consumed, moves what is unread to the front when `need` would run past its end, and
/// grows for a message longer than itself. Both clients' reads come here when a reply is
/// not all in their buffer yet.
pub(super) fn fill(
    stream: &mut Stream,
    buf: &mut Vec<u8>,
    pos: &mut usize,
    end: &mut usize,
    need: usize,
) -> io::Result<()> {
    if *end - *pos >= need {
        return Ok(());
    }
    if *pos == *end {
        // All consumed (the usual case between replies): start over at the front.
        *pos = 0;
        *end = 0;
    }
    if *pos + need > buf.len() {
        buf.copy_within(*pos..*end, 0);
        *end -= *pos;
        *pos = 0;
        if need > buf.len() {
            buf.resize(need, 0);
        }
    }
    while *end - *pos < need {
        let n = stream.read(&mut buf[*end..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ));
        }
        *end += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A reply streaming in chunks with gaps shorter and longer than the look-again time
    /// arrives whole and in order; a large read marks the socket as streaming, and a write
    /// (the next request) clears it.
    #[test]
    fn a_streaming_reply_is_read_whole_across_short_and_long_gaps() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let total: Vec<u8> = (0..120_000u32).map(|i| (i % 251) as u8).collect();
        let sent = total.clone();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut req = [0u8; 1];
            s.read_exact(&mut req).unwrap();
            for (i, chunk) in sent.chunks(16 * 1024).enumerate() {
                s.write_all(chunk).unwrap();
                // Gaps inside and beyond the look-again time.
                let gap = if i % 3 == 2 { 1_000 } else { 20 };
                std::thread::sleep(Duration::from_micros(gap));
            }
            s.read_exact(&mut req).unwrap();
            s.write_all(b"ok").unwrap();
        });
        let mut p = Plain::new(Sock::Tcp(TcpStream::connect(addr).unwrap()));
        p.write_all(b"q").unwrap();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 32 * 1024];
        let mut streamed = false;
        while got.len() < total.len() {
            let n = p.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
            streamed |= p.streaming;
        }
        assert_eq!(got, total);
        assert!(
            streamed,
            "no read of a 16 KiB chunk marked the socket as streaming"
        );
        p.write_all(b"q").unwrap();
        assert!(!p.streaming, "a new request still counts as streaming");
        let mut ok = [0u8; 2];
        p.read_exact(&mut ok).unwrap();
        assert_eq!(&ok, b"ok");
        server.join().unwrap();
    }
}
