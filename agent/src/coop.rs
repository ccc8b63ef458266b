//! Cooperative workers: many workers on one OS thread, each on a small stack of its own
//! (a stackful coroutine), switched by one `epoll` loop.
//!
//! An open loop (`--rate`) of thread-per-connection workers wakes a thread for every
//! arrival that finds it idle, beside the wake for every reply. Where a wake-up costs a
//! timer and an idle CPU's exit (tens of µs on a virtual machine), that is most of the
//! open loop's extra client CPU. Here one thread waits for the next arrival and for all its
//! workers' replies in one `epoll_pwait2`, so an arrival that comes while the thread is
//! awake costs no wake at all, and replies that come together cost one. Before it sleeps
//! with replies outstanding, it yields its CPU once and looks again (see `YieldFirst`): a
//! server on the same machine then answers without the sleep and the wake-up.
//!
//! The worker code stays blocking code: a socket read or write that would block, a TCP
//! connect ([`connect`]), a sleep or the start barrier calls [`wait`], which switches back
//! to the loop when running on a cooperative thread and blocks the OS thread otherwise. So
//! the same worker runs either way, and code outside a cooperative thread never notices.

use std::cell::{Cell, RefCell};
use std::collections::{BinaryHeap, VecDeque};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// What a worker waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The socket has something to read (or was closed).
    Readable(RawFd),
    /// As [`Wait::Readable`], or the clock reaches the instant, whichever comes first: a
    /// login's reads have a deadline.
    ReadableBy(RawFd, Instant),
    /// The reply to what was just written on the socket: as [`Wait::Readable`], without a
    /// read that found nothing first. It may be there already: then the worker goes on.
    Reply(RawFd),
    /// The socket takes more bytes.
    Writable(RawFd),
    /// As [`Wait::Writable`], or the clock reaches the instant, whichever comes first: a
    /// connect in progress ends (either way) when its socket becomes writable.
    WritableBy(RawFd, Instant),
    /// The clock reaches this instant.
    Until(Instant),
    /// Every worker of the thread is at the barrier: the loop runs its barrier function
    /// once and hands its answer to all of them.
    Barrier,
}

impl Wait {
    /// The socket a socket wait is for: while any worker waits so, a reply may be on its way.
    fn socket(self) -> Option<RawFd> {
        match self {
            Wait::Readable(fd)
            | Wait::ReadableBy(fd, _)
            | Wait::Reply(fd)
            | Wait::Writable(fd)
            | Wait::WritableBy(fd, _) => Some(fd),
            Wait::Until(_) | Wait::Barrier => None,
        }
    }

    /// The instant a timed wait ends at, if nothing ends it first.
    fn deadline(self) -> Option<Instant> {
        match self {
            Wait::Until(t) | Wait::WritableBy(_, t) | Wait::ReadableBy(_, t) => Some(t),
            _ => None,
        }
    }
}

/// One worker's body.
pub type Task = Box<dyn FnOnce() + Send>;

type Co = Coroutine<bool, Wait, ()>;

thread_local! {
    /// The yielder of the worker running on this thread, null outside a worker.
    static CURRENT: Cell<*const Yielder<bool, Wait>> = const { Cell::new(std::ptr::null()) };
    /// Sockets this thread's loop has registered with its epoll instance, by descriptor;
    /// forgotten as their owner closes them so that a reused number is registered anew.
    /// Indexed by descriptor (they are small numbers), [`UNREGISTERED`] where none.
    static REGISTERED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// A descriptor no worker of this thread registered.
const UNREGISTERED: usize = usize::MAX;

/// Whether the caller runs as a cooperative worker.
pub fn in_worker() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Suspends the calling worker until `w` happens. The value is the barrier's answer
/// (whether the run starts); only [`Wait::Barrier`]'s caller needs it. Outside a worker:
/// sleeps for [`Wait::Until`], and returns true at once for the rest (blocking sockets do
/// not ask).
pub fn wait(w: Wait) -> bool {
    let y = CURRENT.with(|c| c.get());
    if y.is_null() {
        if let Wait::Until(t) = w {
            let now = Instant::now();
            if t > now {
                std::thread::sleep(t - now);
            }
        }
        return true;
    }
    // SAFETY: CURRENT holds the running worker's yielder, set by that worker's own
    // coroutine body below, which outlives every call made from inside it.
    let answer = unsafe { &*y }.suspend(w);
    // Other workers ran meanwhile and set their own yielder; this one runs again.
    CURRENT.with(|c| c.set(y));
    answer
}

/// Sleeps until `t`: a worker yields to its loop, any other thread blocks.
pub fn sleep_until(t: Instant) {
    if Instant::now() < t {
        wait(Wait::Until(t));
    }
}

/// How often a connect in progress looks whether it was called off.
const CONNECT_SLICE: Duration = Duration::from_millis(100);

/// Connects to `addr` over TCP by `deadline`, giving up early (Interrupted) once
/// `cancelled` says so; it is asked every 100 ms, so a run called off while thousands of
/// handshakes wait for a full accept queue ends within a second. A worker waits for the
/// handshake in its loop, so the other workers of its thread run meanwhile (over a WAN, a
/// blocking connect would stall them all for a round trip per connection); any other
/// thread waits in poll(2) and gets a blocking socket back.
pub fn connect(
    addr: &SocketAddr,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let sock = Socket::new(Domain::for_address(*addr), Type::STREAM, None)?;
    sock.set_nonblocking(true)?;
    let cooperative = in_worker();
    match sock.connect(&(*addr).into()) {
        Ok(()) => return finish_connect(sock, cooperative),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let fd = sock.as_raw_fd();
    let done = loop {
        let now = Instant::now();
        if cancelled() {
            break Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "the connect was called off",
            ));
        }
        if now >= deadline {
            break Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "connection timed out",
            ));
        }
        let slice = (deadline - now).min(CONNECT_SLICE);
        let wait_ms = if cooperative {
            wait(Wait::WritableBy(fd, now + slice));
            0
        } else {
            slice.as_millis().max(1) as libc::c_int
        };
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll(2) on one pollfd that lives across the call.
        match unsafe { libc::poll(&mut p, 1, wait_ms) } {
            // Writable: connected, or failed with the error the socket holds.
            1.. => break sock.take_error().and_then(|e| e.map_or(Ok(()), Err)),
            0 => {}
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    break Err(e);
                }
            }
        }
    };
    if let Err(e) = done {
        closing(fd);
        return Err(e);
    }
    finish_connect(sock, cooperative)
}

/// A connected socket, blocking again unless a cooperative worker owns it.
fn finish_connect(sock: socket2::Socket, cooperative: bool) -> std::io::Result<TcpStream> {
    if !cooperative {
        sock.set_nonblocking(false)?;
    }
    Ok(sock.into())
}

/// Says that socket `fd` is about to be closed, so that its number, when reused, is
/// registered again. Harmless outside a cooperative thread.
pub fn closing(fd: RawFd) {
    let _ = REGISTERED.try_with(|r| {
        if let Some(slot) = r.borrow_mut().get_mut(fd as usize) {
            *slot = UNREGISTERED;
        }
    });
}

/// Runs `tasks` to their end on the calling thread, each on a stack of `stack_size` bytes.
/// `barrier` is called once every live worker waits at [`Wait::Barrier`]; its answer is
/// handed to each of them.
///
/// If the loop itself fails (epoll, a stack that cannot be mapped), the workers not yet
/// ended are left as they are, never resumed nor unwound (their sockets stay open until
/// the caller shuts them down), and the error says how many there are.
pub fn run(
    tasks: Vec<Task>,
    stack_size: usize,
    barrier: impl Fn() -> bool,
) -> Result<(), LoopError> {
    let n = tasks.len();
    let failed = |error| LoopError {
        error,
        unfinished: n,
    };
    let mut lp = Loop::new().map_err(failed)?;
    #[cfg(test)]
    if tests::WITHOUT_PWAIT2.get() {
        lp.use_timerfd().map_err(failed)?;
    }
    for task in tasks {
        let stack = DefaultStack::new(stack_size).map_err(failed)?;
        lp.tasks.push(Some(Coroutine::with_stack(
            stack,
            move |y: &Yielder<bool, Wait>, _: bool| {
                CURRENT.with(|c| c.set(y as *const _));
                // A panic must not cross the loop: it would end every worker of the thread.
                if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)) {
                    let msg = panic_text(&*p);
                    tracing::error!("a cooperative worker panicked: {msg}");
                }
                CURRENT.with(|c| c.set(std::ptr::null()));
            },
        )));
        lp.waits.push(None);
        lp.unread.push(None);
    }
    lp.runq.extend(0..lp.tasks.len());
    lp.live = lp.tasks.len();
    let r = lp.drive(&barrier);
    REGISTERED.with(|r| r.borrow_mut().clear());
    r.map_err(|error| {
        let unfinished = lp.live;
        // Unwinding a suspended worker would run its code on without its loop.
        for co in lp.tasks.drain(..).flatten() {
            std::mem::forget(co);
        }
        LoopError { error, unfinished }
    })
}

/// A cooperative thread's loop failed.
#[derive(Debug, thiserror::Error)]
#[error("{error} ({unfinished} of its workers left unfinished)")]
pub struct LoopError {
    pub error: std::io::Error,
    /// Workers that had not ended.
    pub unfinished: usize,
}

/// Whether the loop, about to sleep while replies are outstanding, first yields its CPU
/// and looks again. A database server on the same machine is often runnable on this very
/// CPU, woken by the statement just sent: yielding lets it answer at once, and the loop
/// finds the reply without a sleep and the wake-up that ends it (each of which costs an
/// idle CPU's exit, several µs on a virtual machine). Where that rarely helps (the server
/// is elsewhere), yielding costs two system calls for nothing, so the loop stops trying
/// for a while when fewer than a quarter of its tries spare a sleep.
#[derive(Debug, Default)]
struct YieldFirst {
    /// Tries and the ones that found a reply, in the current round of [`Self::ROUND`].
    tries: u32,
    hits: u32,
    /// Sleeps left before the next round of tries.
    paused: u32,
}

impl YieldFirst {
    const ROUND: u32 = 64;
    const PAUSE: u32 = 1024;

    /// Whether to yield before this sleep.
    fn now(&mut self) -> bool {
        if self.paused > 0 {
            self.paused -= 1;
            return false;
        }
        true
    }

    /// What a try found: whether the reply was there after yielding.
    fn record(&mut self, hit: bool) {
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries == Self::ROUND {
            if self.hits * 4 < self.tries {
                self.paused = Self::PAUSE;
            }
            (self.tries, self.hits) = (0, 0);
        }
    }
}

/// The loop's state: the workers, what each waits for, and the epoll instance.
struct Loop {
    tasks: Vec<Option<Co>>,
    /// What each suspended worker waits for (None: runnable or done).
    waits: Vec<Option<Wait>>,
    /// Per worker, a socket of its that became readable while it waited for something
    /// else (or ran): its next [`Wait::Reply`] on it need not wait.
    unread: Vec<Option<RawFd>>,
    runq: VecDeque<usize>,
    /// Sleeping workers by wake-up time, earliest first.
    timers: BinaryHeap<std::cmp::Reverse<(Instant, usize)>>,
    /// Workers at the barrier.
    parked: Vec<usize>,
    live: usize,
    /// Workers waiting on a socket: while there are any, a reply may be on its way.
    io_waits: usize,
    /// Whether to give the CPU away before sleeping (see [`YieldFirst`]).
    yield_first: YieldFirst,
    epoll: RawFd,
    /// Set when the loop waits with `epoll_wait` and this timer instead of
    /// `epoll_pwait2`, which kernels before 5.11 lack (RHEL 8's 4.18, say): a timerfd
    /// keeps timeouts to the nanosecond where `epoll_wait` counts milliseconds.
    timer: Option<RawFd>,
}

/// Set once `epoll_pwait2` said ENOSYS: later loops start with the timerfd at once.
static NO_PWAIT2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The epoll data of the loop's own timer; worker sockets carry their worker's index in
/// the high half, which never reaches u32::MAX.
const TIMER: u64 = u64::MAX;

impl Drop for Loop {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this loop's own, closed once.
        unsafe {
            libc::close(self.epoll);
            if let Some(t) = self.timer {
                libc::close(t);
            }
        }
    }
}

impl Loop {
    fn new() -> std::io::Result<Self> {
        // SAFETY: plain system call; the result is checked.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Loop {
            tasks: Vec::new(),
            waits: Vec::new(),
            unread: Vec::new(),
            runq: VecDeque::new(),
            timers: BinaryHeap::new(),
            parked: Vec::new(),
            live: 0,
            io_waits: 0,
            yield_first: YieldFirst::default(),
            epoll,
            timer: None,
        })
    }

    /// Switches to waiting with `epoll_wait` and a timerfd (see [`Loop::timer`]).
    fn use_timerfd(&mut self) -> std::io::Result<()> {
        // SAFETY: plain system calls; results are checked, the descriptor is ours.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        self.timer = Some(fd);
        // Edge-triggered: every expiry wakes the loop once, with no read to reset it.
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: TIMER,
        };
        // SAFETY: as above.
        if unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn drive(&mut self, barrier: &dyn Fn() -> bool) -> std::io::Result<()> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
        let mut answer = true;
        loop {
            while let Some(i) = self.runq.pop_front() {
                self.resume(i, answer)?;
            }
            if self.live == 0 {
                return Ok(());
            }
            if !self.parked.is_empty() && self.parked.len() == self.live {
                answer = barrier();
                self.runq.extend(self.parked.drain(..));
                continue;
            }
            let now = Instant::now();
            while let Some(std::cmp::Reverse((t, i))) = self.timers.peek().copied() {
                if t > now {
                    break;
                }
                self.timers.pop();
                // A socket may have woken a worker waiting for either before its time came.
                if self.waits[i].and_then(Wait::deadline) == Some(t) {
                    self.wake(i);
                }
            }
            // Due timers run first; a zero timeout still collects the sockets that are ready.
            let timeout = if !self.runq.is_empty() {
                Some(Duration::ZERO)
            } else {
                self.timers
                    .peek()
                    .map(|r| r.0.0.saturating_duration_since(now))
            };
            let mut n = 0;
            if timeout != Some(Duration::ZERO) && self.io_waits > 0 && self.yield_first.now() {
                // SAFETY: plain system call without arguments.
                unsafe { libc::sched_yield() };
                n = self.poll(&mut events, Some(Duration::ZERO))?;
                self.yield_first.record(n > 0);
            }
            if n == 0 {
                n = self.poll(&mut events, timeout)?;
            }
            for ev in &events[..n] {
                self.event(ev.events, ev.u64);
            }
        }
    }

    /// Wakes the worker a socket event is for, if it waits for it; a socket that became
    /// readable while its worker waits for something else is remembered for its reply.
    fn event(&mut self, flags: u32, data: u64) {
        const IN: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        const OUT: u32 = (libc::EPOLLOUT | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        let (i, fd) = ((data >> 32) as usize, data as u32 as RawFd);
        // The timer's expiry only woke the loop, which looks at its timers anyway.
        if data == TIMER || i >= self.waits.len() {
            return;
        }
        match self.waits[i] {
            Some(Wait::Readable(f) | Wait::ReadableBy(f, _)) if f == fd && flags & IN != 0 => {
                self.unread[i] = None;
                self.wake(i);
                return;
            }
            Some(Wait::Writable(f) | Wait::WritableBy(f, _)) if f == fd && flags & OUT != 0 => {
                self.wake(i)
            }
            _ => {}
        }
        if flags & IN != 0 {
            self.unread[i] = Some(fd);
        }
    }

    fn wake(&mut self, i: usize) {
        if self.waits[i].and_then(Wait::socket).is_some() {
            self.io_waits -= 1;
        }
        self.waits[i] = None;
        self.runq.push_back(i);
    }

    /// Runs worker `i` until it waits or ends.
    fn resume(&mut self, i: usize, answer: bool) -> std::io::Result<()> {
        let Some(co) = self.tasks[i].as_mut() else {
            return Ok(());
        };
        match co.resume(answer) {
            CoroutineResult::Return(()) => {
                self.tasks[i] = None;
                self.live -= 1;
            }
            CoroutineResult::Yield(w) => {
                let w = match w {
                    Wait::Reply(fd) if self.unread[i] == Some(fd) => {
                        self.unread[i] = None;
                        self.runq.push_back(i);
                        return Ok(());
                    }
                    Wait::Reply(fd) => Wait::Readable(fd),
                    w => w,
                };
                if let Some(fd) = w.socket() {
                    self.register(fd, i)?;
                    self.io_waits += 1;
                }
                if let Some(t) = w.deadline() {
                    self.timers.push(std::cmp::Reverse((t, i)));
                }
                if w == Wait::Barrier {
                    self.parked.push(i);
                }
                self.waits[i] = Some(w);
            }
        }
        Ok(())
    }

    /// Registers `fd` for worker `i`, once per socket: edge-triggered for both directions,
    /// since a worker waits only after a read or write said it would block.
    fn register(&mut self, fd: RawFd, i: usize) -> std::io::Result<()> {
        if fd < 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EBADF));
        }
        let known = REGISTERED.with(|r| {
            r.borrow()
                .get(fd as usize)
                .copied()
                .filter(|&w| w != UNREGISTERED)
        });
        if known == Some(i) {
            return Ok(());
        }
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
            u64: (i as u64) << 32 | u64::from(fd as u32),
        };
        let op = if known.is_some() {
            libc::EPOLL_CTL_MOD
        } else {
            libc::EPOLL_CTL_ADD
        };
        // SAFETY: plain system calls on our epoll instance; results are checked.
        let mut rc = unsafe { libc::epoll_ctl(self.epoll, op, fd, &mut ev) };
        if rc < 0 {
            // A number closed without `closing` and reused, or moved between workers.
            let alt = match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EEXIST) => libc::EPOLL_CTL_MOD,
                Some(libc::ENOENT) => libc::EPOLL_CTL_ADD,
                _ => return Err(std::io::Error::last_os_error()),
            };
            rc = unsafe { libc::epoll_ctl(self.epoll, alt, fd, &mut ev) };
            if rc < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        REGISTERED.with(|r| {
            let mut r = r.borrow_mut();
            let at = fd as usize;
            if r.len() <= at {
                r.resize(at + 1, UNREGISTERED);
            }
            r[at] = i;
        });
        Ok(())
    }

    /// Waits up to `timeout` (None: without limit) for sockets; the events are in `events`.
    fn poll(
        &mut self,
        events: &mut [libc::epoll_event],
        timeout: Option<Duration>,
    ) -> std::io::Result<usize> {
        if self.timer.is_none() && NO_PWAIT2.load(std::sync::atomic::Ordering::Relaxed) {
            self.use_timerfd()?;
        }
        if let Some(timer) = self.timer {
            return self.poll_with_timer(timer, events, timeout);
        }
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        loop {
            // SAFETY: epoll_pwait2(2) with our epoll instance, a buffer of `events.len()`
            // events and a timespec that lives across the call (or null: no limit).
            let n = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.epoll,
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    tsp,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::ENOSYS) => {
                    tracing::debug!("no epoll_pwait2 in this kernel: waits use a timerfd");
                    NO_PWAIT2.store(true, std::sync::atomic::Ordering::Relaxed);
                    self.use_timerfd()?;
                    return self.poll(events, timeout);
                }
                _ => return Err(e),
            }
        }
    }

    /// [`Loop::poll`] on kernels without `epoll_pwait2`: the timer is armed for the
    /// timeout, and `epoll_wait` waits without a limit of its own.
    fn poll_with_timer(
        &self,
        timer: RawFd,
        events: &mut [libc::epoll_event],
        timeout: Option<Duration>,
    ) -> std::io::Result<usize> {
        let mut ms = -1;
        match timeout {
            Some(Duration::ZERO) => ms = 0,
            Some(d) => {
                let spec = libc::itimerspec {
                    it_interval: libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    it_value: libc::timespec {
                        tv_sec: d.as_secs() as libc::time_t,
                        tv_nsec: d.subsec_nanos() as libc::c_long,
                    },
                };
                // SAFETY: timerfd_settime(2) on our timer with a spec that lives across
                // the call. A one-shot relative timer; one left over from an earlier wait
                // is replaced, and one that fires late only wakes the loop once more.
                if unsafe { libc::timerfd_settime(timer, 0, &spec, std::ptr::null_mut()) } < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            None => {}
        }
        loop {
            // SAFETY: epoll_wait(2) with our epoll instance and a buffer of
            // `events.len()` events.
            let n = unsafe {
                libc::epoll_wait(
                    self.epoll,
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    ms,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// The message of a panic payload.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::{Arc, Mutex};

    thread_local! {
        /// Makes `run` on this thread wait as on a kernel without `epoll_pwait2`.
        pub(super) static WITHOUT_PWAIT2: Cell<bool> = const { Cell::new(false) };
    }

    /// A blocking-style read on a non-blocking socket, as the lean client does it.
    fn read_some(s: &mut UnixStream, buf: &mut [u8]) -> usize {
        loop {
            match s.read(buf) {
                Ok(n) => return n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    wait(Wait::Readable(s.as_raw_fd()));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn workers_ping_pong_over_sockets_on_one_thread() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (la, lb) = (log.clone(), log.clone());
        let tasks: Vec<Task> = vec![
            Box::new(move || {
                let mut buf = [0u8; 8];
                for i in 0..100u8 {
                    a.write_all(&[i]).unwrap();
                    assert_eq!(read_some(&mut a, &mut buf), 1);
                    assert_eq!(buf[0], i + 1);
                }
                la.lock().unwrap().push("a");
            }),
            Box::new(move || {
                let mut buf = [0u8; 8];
                for _ in 0..100 {
                    assert_eq!(read_some(&mut b, &mut buf), 1);
                    b.write_all(&[buf[0] + 1]).unwrap();
                }
                lb.lock().unwrap().push("b");
            }),
        ];
        run(tasks, 64 * 1024, || true).expect("loop");
        let mut l = log.lock().unwrap().clone();
        l.sort();
        assert_eq!(l, ["a", "b"]);
    }

    #[test]
    fn a_reply_is_waited_for_whether_it_came_before_the_wait_or_after() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        let done = Arc::new(Mutex::new(0));
        let d = done.clone();
        let tasks: Vec<Task> = vec![
            Box::new(move || {
                let mut buf = [0u8; 8];
                for late in [false, true, false, true] {
                    a.write_all(b"q").unwrap();
                    if !late {
                        // The peer answers while this worker sleeps: the loop sees the
                        // socket readable while nobody waits for it.
                        sleep_until(Instant::now() + Duration::from_millis(5));
                    }
                    wait(Wait::Reply(a.as_raw_fd()));
                    assert_eq!(a.read(&mut buf).unwrap(), 1);
                    *d.lock().unwrap() += 1;
                }
                drop(a);
            }),
            Box::new(move || {
                let mut buf = [0u8; 8];
                while read_some(&mut b, &mut buf) > 0 {
                    b.write_all(b"r").unwrap();
                }
            }),
        ];
        run(tasks, 64 * 1024, || true).expect("loop");
        assert_eq!(*done.lock().unwrap(), 4);
    }

    /// Workers sleeping for `delays` from a common start wake in time order, none early.
    fn sleepers_wake_in_order(delays: &[Duration]) {
        let start = Instant::now();
        let order = Arc::new(Mutex::new(Vec::new()));
        let tasks: Vec<Task> = delays
            .iter()
            .map(|&d| {
                let order = order.clone();
                Box::new(move || {
                    let t = start + d;
                    sleep_until(t);
                    assert!(Instant::now() >= t);
                    order.lock().unwrap().push(d);
                }) as Task
            })
            .collect();
        run(tasks, 64 * 1024, || true).expect("loop");
        let mut sorted = delays.to_vec();
        sorted.sort();
        assert_eq!(*order.lock().unwrap(), sorted);
    }

    #[test]
    fn sleeping_workers_wake_in_time_order_and_not_early() {
        sleepers_wake_in_order(&[30, 10, 20].map(Duration::from_millis));
    }

    #[test]
    fn without_epoll_pwait2_sockets_and_sleeps_work_as_with_it() {
        WITHOUT_PWAIT2.set(true);
        workers_ping_pong_over_sockets_on_one_thread();
        a_reply_is_waited_for_whether_it_came_before_the_wait_or_after();
        // Sub-millisecond sleeps keep their order and are not cut short, as epoll_wait's
        // millisecond timeout alone would not allow.
        sleepers_wake_in_order(&[300, 100, 200, 2_000].map(Duration::from_micros));
        WITHOUT_PWAIT2.set(false);
    }

    /// A listener that lets one connection in and drops every later handshake, as a full
    /// accept queue does: connecting to it hangs until the caller gives up.
    fn black_hole() -> (socket2::Socket, std::net::TcpStream, SocketAddr) {
        use socket2::{Domain, Socket, Type};
        let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        l.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        l.listen(0).unwrap();
        let addr = l.local_addr().unwrap().as_socket().unwrap();
        let first = std::net::TcpStream::connect(addr).unwrap();
        (l, first, addr)
    }

    #[test]
    fn a_connecting_worker_lets_the_others_run_and_gives_up_at_its_timeout() {
        let (_listener, _first, addr) = black_hole();
        let ends = Arc::new(Mutex::new(Vec::new()));
        let (e1, e2) = (ends.clone(), ends.clone());
        let start = Instant::now();
        let tasks: Vec<Task> = vec![
            Box::new(move || {
                let r = connect(&addr, Instant::now() + Duration::from_millis(300), &|| {
                    false
                });
                let e = r.expect_err("the handshake was dropped");
                assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
                e1.lock().unwrap().push(("connect", start.elapsed()));
            }),
            Box::new(move || {
                for _ in 0..10 {
                    sleep_until(Instant::now() + Duration::from_millis(5));
                }
                e2.lock().unwrap().push(("sleeper", start.elapsed()));
            }),
        ];
        run(tasks, 64 * 1024, || true).expect("loop");
        let ends = ends.lock().unwrap().clone();
        // The sleeper ran while the connect was waiting, so it ended first.
        assert_eq!(ends[0].0, "sleeper", "{ends:?}");
        assert!(ends[0].1 < Duration::from_millis(300), "{ends:?}");
        assert!(ends[1].1 >= Duration::from_millis(300), "{ends:?}");
        assert!(ends[1].1 < Duration::from_secs(3), "{ends:?}");
    }

    #[test]
    fn a_worker_connects_to_a_listener_and_is_refused_by_a_closed_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
        });
        let got = Arc::new(Mutex::new(None));
        let g = got.clone();
        let tasks: Vec<Task> = vec![Box::new(move || {
            let refused = connect(&closed, Instant::now() + Duration::from_secs(5), &|| false)
                .expect_err("nobody listens");
            assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
            let mut s = connect(&addr, Instant::now() + Duration::from_secs(5), &|| false)
                .expect("connect");
            s.set_nonblocking(true).unwrap();
            s.write_all(b"ping").unwrap();
            let mut buf = [0u8; 4];
            let mut n = 0;
            while n < 4 {
                match s.read(&mut buf[n..]) {
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        wait(Wait::Readable(s.as_raw_fd()));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            closing(s.as_raw_fd());
            *g.lock().unwrap() = Some(buf);
        })];
        run(tasks, 64 * 1024, || true).expect("loop");
        server.join().unwrap();
        assert_eq!(*got.lock().unwrap(), Some(*b"ping"));
    }

    #[test]
    fn yielding_first_pauses_where_it_rarely_spares_a_sleep_and_is_tried_again() {
        let mut y = YieldFirst::default();
        // Helps every other time: kept.
        for i in 0..10 * YieldFirst::ROUND {
            assert!(y.now());
            y.record(i % 2 == 0);
        }
        // Helps one time in eight: paused after the round, for PAUSE sleeps.
        for i in 0..YieldFirst::ROUND {
            assert!(y.now());
            y.record(i % 8 == 0);
        }
        for _ in 0..YieldFirst::PAUSE {
            assert!(!y.now());
        }
        // Then tried again, and kept while a quarter helps.
        for i in 0..YieldFirst::ROUND {
            assert!(y.now());
            y.record(i % 4 == 0);
        }
        assert!(y.now());
    }

    #[test]
    fn the_barrier_runs_once_when_every_worker_is_there() {
        let calls = Arc::new(Mutex::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let tasks: Vec<Task> = (0..3u64)
            .map(|i| {
                let seen = seen.clone();
                Box::new(move || {
                    // Workers reach the barrier at different times.
                    sleep_until(Instant::now() + Duration::from_millis(i * 5));
                    let open = wait(Wait::Barrier);
                    seen.lock().unwrap().push(open);
                }) as Task
            })
            .collect();
        let c = calls.clone();
        run(tasks, 64 * 1024, move || {
            *c.lock().unwrap() += 1;
            false
        })
        .unwrap();
        assert_eq!(*calls.lock().unwrap(), 1);
        assert_eq!(*seen.lock().unwrap(), [false, false, false]);
    }

    #[test]
    fn outside_a_worker_waits_block_the_thread() {
        assert!(!in_worker());
        let t = Instant::now() + Duration::from_millis(5);
        sleep_until(t);
        assert!(Instant::now() >= t);
        assert!(wait(Wait::Readable(0)));
    }

    #[test]
    fn a_worker_knows_it_is_one() {
        let inside = Arc::new(Mutex::new(false));
        let i = inside.clone();
        run(
            vec![Box::new(move || *i.lock().unwrap() = in_worker())],
            64 * 1024,
            || true,
        )
        .unwrap();
        assert!(*inside.lock().unwrap());
        assert!(!in_worker());
    }
}
