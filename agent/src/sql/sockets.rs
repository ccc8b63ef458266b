//! Every open connection's socket of a run, whatever its driver, so that an abort can shut
//! them all down at once.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Every open connection's socket of a run, so that an abort can shut them all down and a
/// worker blocked reading (a statement waiting on a lock) gets an error at once.
pub struct Sockets {
    inner: Mutex<SocketsInner>,
    next: AtomicU64,
    /// Raised with the cancel, for connections whose sockets are not ours to shut down
    /// (mysql_async's): they watch it instead.
    cancelled: tokio::sync::watch::Sender<bool>,
}

impl Default for Sockets {
    fn default() -> Self {
        Sockets {
            inner: Mutex::default(),
            next: AtomicU64::new(0),
            cancelled: tokio::sync::watch::Sender::new(false),
        }
    }
}

#[derive(Default)]
struct SocketsInner {
    cancelled: bool,
    /// The descriptors of the open connections. Not duplicates: a second descriptor per
    /// connection would halve how many connections fit under the open-files limit. A
    /// connection forgets its entry (under this lock) before its socket is closed, so a
    /// descriptor here is always still that connection's.
    open: HashMap<u64, RawFd>,
}

/// Shuts a socket down both ways (its descriptor stays open for its owner to close).
fn shutdown_fd(fd: RawFd) {
    // SAFETY: shutdown(2) on a descriptor only changes the socket's state; `fd` is open
    // (see SocketsInner::open).
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

impl std::fmt::Debug for Sockets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.lock();
        f.debug_struct("Sockets")
            .field("cancelled", &g.cancelled)
            .field("open", &g.open.len())
            .finish()
    }
}

impl Sockets {
    fn lock(&self) -> std::sync::MutexGuard<'_, SocketsInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps a handle on `s`; once cancelled, any socket registered is shut down at once.
    pub(crate) fn register(&self, fd: RawFd) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut g = self.lock();
        if g.cancelled {
            shutdown_fd(fd);
        } else {
            g.open.insert(id, fd);
        }
        id
    }

    pub(crate) fn forget(&self, id: u64) {
        self.lock().open.remove(&id);
    }

    /// Shuts down every registered socket, and every one registered from now on.
    pub fn cancel(&self) {
        let mut g = self.lock();
        g.cancelled = true;
        for (_, fd) in g.open.drain() {
            shutdown_fd(fd);
        }
        self.cancelled.send_replace(true);
    }

    /// A receiver that sees the cancel.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<bool> {
        self.cancelled.subscribe()
    }

    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }
}
