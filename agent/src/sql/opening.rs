//! Opening thousands of connections against a server whose accept queue (`back_log`,
//! `net.core.somaxconn`) is smaller than the connection count. An agent has at most
//! `--db-connect-concurrency` connections being opened at once, and a connect that times
//! out, is reset or refused, or is told "Too many connections" is tried again after an
//! exponential backoff with jitter, for as long as the agent still makes progress (the
//! coordinator's ready timeout counts from the last progress). Opening so ends with every
//! connection open, or with one error that says how far it got, what failed and why.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::SqlError;
use crate::sql::Sockets;

/// Why a connect was tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// No TCP handshake, greeting or login within the connect timeout: the server's
    /// accept queue dropped it, or the server is too busy to answer.
    TimedOut,
    /// The server closed or reset the connection while it was being opened.
    Reset,
    /// Nobody listened (or the accept queue overflowed with `tcp_abort_on_overflow`).
    Refused,
    /// The server's `max_connections` (or the account's limit) was reached.
    TooMany,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::TimedOut => "timed out",
            Reason::Reset => "reset",
            Reason::Refused => "refused",
            Reason::TooMany => "too many connections",
        }
    }

    /// What the user can change when connects keep failing so.
    fn hint(self) -> &'static str {
        match self {
            Reason::TimedOut | Reason::Reset => {
                "the server's accept queue is likely full: raise its back_log and the host's net.core.somaxconn, or open fewer connections at once (--db-connect-concurrency)"
            }
            Reason::Refused => {
                "the server stopped listening, or its accept queue overflowed (back_log, net.core.somaxconn)"
            }
            Reason::TooMany => {
                "the server refuses more connections: raise its max_connections (and max_user_connections)"
            }
        }
    }
}

/// Whether (and why) a failed connect is worth another try; None for a failure that
/// another try would not mend (a wrong password, no database, TLS).
pub fn retry_reason(e: &SqlError) -> Option<Reason> {
    use std::io::ErrorKind as K;
    match e {
        // ER_CON_COUNT_ERROR, ER_TOO_MANY_USER_CONNECTIONS.
        SqlError::Server {
            code: 1040 | 1203, ..
        } => Some(Reason::TooMany),
        // PostgreSQL's too_many_connections, and cannot_connect_now (starting up).
        SqlError::Server { code, .. }
            if Some(*code) == fleetbench_model::sqlstate::encode("53300")
                || Some(*code) == fleetbench_model::sqlstate::encode("57P03") =>
        {
            Some(Reason::TooMany)
        }
        SqlError::Io(e) => match e.kind() {
            K::TimedOut | K::WouldBlock => Some(Reason::TimedOut),
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                Some(Reason::Reset)
            }
            K::ConnectionRefused => Some(Reason::Refused),
            _ => None,
        },
        _ => None,
    }
}

/// How long to wait before try number `attempt` (1-based) after a failed connect:
/// doubling from 50 ms up to 2 s, with `jitter` (0..1) taking up to half of it off, so
/// that connects turned away together do not come back together.
pub fn backoff(attempt: u32, jitter: f64) -> Duration {
    let base = 50u64
        .saturating_mul(1 << attempt.saturating_sub(1).min(6))
        .min(2_000);
    let ms = base as f64 * (1.0 - 0.5 * jitter.clamp(0.0, 1.0));
    Duration::from_micros((ms * 1000.0) as u64)
}

/// Why [`ConnectGate::open`] gave up.
#[derive(Debug)]
pub enum GateError {
    /// A failure another try would not mend, or the first connect to a target that has
    /// never answered: the server's own error.
    Failed(SqlError),
    /// Connects kept failing; the message says how far opening got and why.
    GaveUp(String),
    /// The opening was called off.
    Cancelled,
}

/// The agent's connections being opened for one run: how many at once, what was retried.
pub struct ConnectGate {
    /// Connections being opened now, at most `max`.
    busy: Mutex<u32>,
    freed: Condvar,
    max: u32,
    /// Connections to open in all, for the messages.
    total: u64,
    /// Connects that succeeded, per target. A target that answered once is alive, so its
    /// later failures are the accept queue's and worth another try; one that never
    /// answered fails at once (a wrong port, a server that does not speak).
    opened: Vec<AtomicU64>,
    /// Retries by target and reason.
    retries: Mutex<BTreeMap<(usize, Reason), u64>>,
    /// When any connection last opened, in ns since `epoch`.
    epoch: Instant,
    last_open_ns: AtomicU64,
    /// Opening gives up once no connection opened for this long: shortly before the
    /// coordinator's ready timeout, so the agent's reasons arrive before its verdict.
    patience: Duration,
    /// Feeds the jitter.
    seed: AtomicU64,
}

/// A connection being opened; dropping it lets the next one start.
struct Permit<'a>(&'a ConnectGate);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut busy = self.0.busy.lock().unwrap_or_else(|p| p.into_inner());
        *busy -= 1;
        self.0.freed.notify_one();
    }
}

impl ConnectGate {
    /// A gate for `total` connections to `targets` targets, `max` at once, giving up after
    /// `ready_timeout` (the coordinator's) less a margin without progress.
    pub fn new(max: u32, total: u64, targets: usize, ready_timeout: Duration) -> ConnectGate {
        let margin = (ready_timeout / 10).clamp(Duration::from_millis(500), Duration::from_secs(3));
        ConnectGate {
            busy: Mutex::new(0),
            freed: Condvar::new(),
            max: max.max(1),
            total,
            opened: (0..targets).map(|_| AtomicU64::new(0)).collect(),
            retries: Mutex::default(),
            epoch: Instant::now(),
            last_open_ns: AtomicU64::new(0),
            patience: ready_timeout
                .saturating_sub(margin)
                .max(Duration::from_secs(1)),
            seed: AtomicU64::new(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// Opens one connection to target `t` with `connect`, within the gate's concurrency,
    /// trying again after failures worth it (see the module's docs).
    pub fn open<T>(
        &self,
        t: usize,
        sockets: &Sockets,
        mut connect: impl FnMut() -> Result<T, SqlError>,
    ) -> Result<T, GateError> {
        let mut attempt = 0u32;
        loop {
            let permit = self.acquire(sockets).ok_or(GateError::Cancelled)?;
            let r = connect();
            drop(permit);
            match r {
                Ok(c) => {
                    self.opened[t].fetch_add(1, Ordering::Relaxed);
                    self.last_open_ns
                        .fetch_max(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    return Ok(c);
                }
                Err(e) => self.after_failure(t, e, &mut attempt, sockets)?,
            }
        }
    }

    /// After connect number `attempt` to target `t` failed with `e`: Ok once it is worth
    /// another try (after a backoff), else why not.
    #[cold]
    #[inline(never)]
    fn after_failure(
        &self,
        t: usize,
        e: SqlError,
        attempt: &mut u32,
        sockets: &Sockets,
    ) -> Result<(), GateError> {
        if sockets.is_cancelled() {
            return Err(GateError::Cancelled);
        }
        let Some(reason) = retry_reason(&e) else {
            return Err(GateError::Failed(e));
        };
        let alive = self.opened[t].load(Ordering::Relaxed) > 0 || reason == Reason::TooMany;
        if !alive {
            // Not the accept queue: the address is wrong, or nothing answers there.
            return Err(match reason {
                Reason::TimedOut => GateError::GaveUp(self.never_answered(&e)),
                _ => GateError::Failed(e),
            });
        }
        *attempt += 1;
        let wait = backoff(*attempt, self.jitter());
        if self.quiet_for() + wait > self.patience {
            return Err(GateError::GaveUp(self.gave_up(t, reason, &e)));
        }
        *self
            .retries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((t, reason))
            .or_default() += 1;
        tracing::debug!(
            target_index = t,
            reason = reason.name(),
            ?wait,
            "connect retried: {e}"
        );
        self.sleep(wait, sockets)
    }

    /// Connects that were tried again, by target and reason.
    pub fn retries(&self) -> Vec<(usize, Reason, u64)> {
        let r = self.retries.lock().unwrap_or_else(|p| p.into_inner());
        r.iter().map(|(&(t, why), &n)| (t, why, n)).collect()
    }

    /// How long since a connection last opened (or since the gate was made).
    fn quiet_for(&self) -> Duration {
        let last = Duration::from_nanos(self.last_open_ns.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }

    fn jitter(&self) -> f64 {
        // splitmix64 over a shared counter: cheap, and different for every caller.
        let mut z = self
            .seed
            .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }

    /// Takes a place among the connections being opened; None once the opening is
    /// called off. A cooperative worker must not block its thread, so it naps instead.
    fn acquire(&self, sockets: &Sockets) -> Option<Permit<'_>> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if sockets.is_cancelled() {
                return None;
            }
            if *busy < self.max {
                *busy += 1;
                return Some(Permit(self));
            }
            if crate::coop::in_worker() {
                drop(busy);
                crate::coop::sleep_until(Instant::now() + Duration::from_millis(1));
                busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
            } else {
                busy = self
                    .freed
                    .wait_timeout(busy, Duration::from_millis(100))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
    }

    /// Sleeps `d`, looking every 100 ms whether the opening was called off.
    fn sleep(&self, d: Duration, sockets: &Sockets) -> Result<(), GateError> {
        let end = Instant::now() + d;
        loop {
            if sockets.is_cancelled() {
                return Err(GateError::Cancelled);
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            crate::coop::sleep_until(now + (end - now).min(Duration::from_millis(100)));
        }
    }

    /// "X of N connections opened", the start of every message.
    fn opened_of_total(&self) -> String {
        let opened: u64 = self.opened.iter().map(|o| o.load(Ordering::Relaxed)).sum();
        format!("{opened} of {} connections opened", self.total)
    }

    /// The message of a first connect to a target that timed out.
    fn never_answered(&self, e: &SqlError) -> String {
        format!(
            "{}; {e} (--db-connect-timeout): is the address right, and does a MySQL server answer there?",
            self.opened_of_total()
        )
    }

    /// The message of an opening that gave up on target `t` after `e`, having tried again
    /// for as long as the ready timeout allows.
    fn gave_up(&self, t: usize, reason: Reason, e: &SqlError) -> String {
        let tried: Vec<String> = self
            .retries()
            .into_iter()
            .filter(|&(tt, _, _)| tt == t)
            .map(|(_, why, n)| format!("{} {n}", why.name()))
            .collect();
        let mut s = format!(
            "{}; connects kept failing for {}s with none opening",
            self.opened_of_total(),
            self.quiet_for().as_secs()
        );
        if !tried.is_empty() {
            s.push_str(&format!(" (retried: {})", tried.join(", ")));
        }
        s.push_str(&format!("; last error: {e}; {}", reason.hint()));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn io_err(k: io::ErrorKind) -> SqlError {
        SqlError::Io(io::Error::new(k, "x"))
    }

    #[test]
    fn failures_of_a_full_queue_are_retried_and_login_failures_are_not() {
        assert_eq!(
            retry_reason(&io_err(io::ErrorKind::TimedOut)),
            Some(Reason::TimedOut)
        );
        assert_eq!(
            retry_reason(&io_err(io::ErrorKind::UnexpectedEof)),
            Some(Reason::Reset)
        );
        assert_eq!(
            retry_reason(&io_err(io::ErrorKind::ConnectionRefused)),
            Some(Reason::Refused)
        );
        let too_many = SqlError::Server {
            code: 1040,
            message: "Too many connections".into(),
        };
        assert_eq!(retry_reason(&too_many), Some(Reason::TooMany));
        let denied = SqlError::Server {
            code: 1045,
            message: "Access denied".into(),
        };
        assert_eq!(retry_reason(&denied), None);
        assert_eq!(retry_reason(&SqlError::Tls("x".into())), None);
    }

    #[test]
    fn backoff_doubles_to_a_ceiling_and_jitter_takes_at_most_half() {
        assert_eq!(backoff(1, 0.0), Duration::from_millis(50));
        assert_eq!(backoff(2, 0.0), Duration::from_millis(100));
        assert_eq!(backoff(3, 1.0), Duration::from_millis(100));
        assert_eq!(backoff(30, 0.0), Duration::from_secs(2));
        assert_eq!(backoff(u32::MAX, 0.0), Duration::from_secs(2));
    }

    #[test]
    fn a_target_that_never_answered_fails_at_once_naming_the_timeout() {
        let gate = ConnectGate::new(4, 10, 1, Duration::from_secs(30));
        let sockets = Sockets::default();
        let mut tries = 0;
        let r: Result<(), _> = gate.open(0, &sockets, || {
            tries += 1;
            Err(io_err(io::ErrorKind::TimedOut))
        });
        assert_eq!(tries, 1);
        match r {
            Err(GateError::GaveUp(m)) => {
                assert!(m.starts_with("0 of 10 connections opened"), "{m}");
                assert!(m.contains("--db-connect-timeout"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_first_connect_fails_with_the_servers_own_error() {
        let gate = ConnectGate::new(4, 10, 1, Duration::from_secs(30));
        let r: Result<(), _> = gate.open(0, &Sockets::default(), || {
            Err(io_err(io::ErrorKind::ConnectionRefused))
        });
        assert!(matches!(r, Err(GateError::Failed(_))), "{r:?}");
        assert!(gate.retries().is_empty());
    }

    #[test]
    fn a_live_target_is_retried_and_the_retries_are_counted() {
        let gate = ConnectGate::new(4, 10, 2, Duration::from_secs(30));
        let sockets = Sockets::default();
        gate.open(1, &sockets, || Ok(())).unwrap();
        let mut tries = 0;
        gate.open(1, &sockets, || {
            tries += 1;
            match tries {
                1 => Err(io_err(io::ErrorKind::ConnectionReset)),
                2 => Err(io_err(io::ErrorKind::TimedOut)),
                _ => Ok(()),
            }
        })
        .unwrap();
        assert_eq!(
            gate.retries(),
            vec![(1, Reason::TimedOut, 1), (1, Reason::Reset, 1)]
        );
    }

    #[test]
    fn retrying_ends_when_nothing_opened_for_the_patience() {
        // A 1 s ready timeout leaves the 1 s floor of patience.
        let gate = ConnectGate::new(4, 3, 1, Duration::from_secs(1));
        let sockets = Sockets::default();
        gate.open(0, &sockets, || Ok(())).unwrap();
        let t0 = Instant::now();
        let r: Result<(), _> = gate.open(0, &sockets, || {
            Err(SqlError::Server {
                code: 1040,
                message: "Too many connections".into(),
            })
        });
        let took = t0.elapsed();
        match r {
            Err(GateError::GaveUp(m)) => {
                assert!(m.starts_with("1 of 3 connections opened"), "{m}");
                assert!(m.contains("too many connections"), "{m}");
                assert!(m.contains("max_connections"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_cancel_ends_a_wait_for_a_place() {
        let gate = std::sync::Arc::new(ConnectGate::new(1, 2, 1, Duration::from_secs(30)));
        let sockets = std::sync::Arc::new(Sockets::default());
        let (g, s) = (gate.clone(), sockets.clone());
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let _ = g.open(0, &s, || {
                held_tx.send(()).unwrap();
                while !s.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err::<(), _>(io_err(io::ErrorKind::UnexpectedEof))
            });
        });
        held_rx.recv().unwrap();
        let (g, s) = (gate.clone(), sockets.clone());
        let waiter = std::thread::spawn(move || g.open(0, &s, || Ok(())));
        std::thread::sleep(Duration::from_millis(50));
        let t0 = Instant::now();
        sockets.cancel();
        assert!(matches!(waiter.join().unwrap(), Err(GateError::Cancelled)));
        holder.join().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
}
