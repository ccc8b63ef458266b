//! What this host allows, and the bounds every size, count and duration must respect before
//! anything is allocated or started. The open-files limit is raised to the hard limit when
//! the agent starts and checked against what a run needs before any connection is opened;
//! memory, threads and free disk space are checked the same way, so a run too big for this
//! host is refused with the numbers instead of aborting, panicking or being killed halfway.
//! The coordinator uses the same bounds on its command line, and the agent again on the wire,
//! since a hostile or buggy coordinator can send anything.

use std::path::Path;

/// The longest duration (run time, report interval, timeouts) accepted, in seconds: a
/// year. Far beyond any benchmark, far below where adding it to a clock could overflow.
pub const MAX_SECONDS: u64 = 366 * 24 * 3600;

/// The most worker threads (or connections) one agent runs: ten times the 10,000
/// connections per agent the design aims for.
pub const MAX_THREADS: u64 = 100_000;

/// The most OLTP tables in one run. The table map travels in every Start message, and
/// gRPC's 4 MB message limit holds about 500,000 entries.
pub const MAX_TABLES: u32 = 100_000;

/// Highest open-loop rate one agent paces, in events per second. Beyond what one host
/// drives (a higher rate goes over more agents), and low enough that counting the
/// arrivals of an interval stays a small fraction of a tick.
pub const MAX_RATE: f64 = 1_000_000.0;

/// Threads the agent needs besides the workers (runtime, gRPC, blocking pool).
const RESERVED_THREADS: u64 = 64;

/// Descriptors the agent uses besides the run's connections: its listener, the gRPC
/// connections, logs, the runtime's own, a few files of the libraries. Generous on purpose.
pub const RESERVED_FILES: u64 = 256;

/// The process's open-files limit: (soft, hard).
pub fn nofile() -> std::io::Result<(u64, u64)> {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((l.rlim_cur, l.rlim_max))
}

/// Raises the soft open-files limit to the hard one. Returns (before, after).
pub fn raise_nofile() -> std::io::Result<(u64, u64)> {
    let (soft, hard) = nofile()?;
    if soft >= hard {
        return Ok((soft, soft));
    }
    let l = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((soft, hard))
}

/// Checks that `connections` more open files fit under the limit `soft` (hard limit
/// `hard`); the error says what is needed and how to get it.
pub fn check_files(connections: u64, soft: u64, hard: u64) -> Result<(), String> {
    let need = connections.saturating_add(RESERVED_FILES);
    if need <= soft {
        return Ok(());
    }
    Err(format!(
        "this run needs {connections} database connections ({need} open files with the \
         agent's own), but the agent's open-files limit is {soft} (hard limit {hard}): raise \
         it (LimitNOFILE= in the systemd unit, ulimit -n before starting the agent), or \
         spread the threads over more agents"
    ))
}

/// Checks that `secs` (of `option`) does not exceed [`MAX_SECONDS`].
pub fn check_seconds(option: &str, secs: u64) -> Result<(), String> {
    if secs <= MAX_SECONDS {
        return Ok(());
    }
    Err(format!(
        "{option} is {secs} seconds, more than the {MAX_SECONDS} (a year) accepted"
    ))
}

/// Bytes this process can still allocate: the least of the host's available memory, what
/// its cgroup allows, and what its address-space limit leaves. None when none is known.
pub fn available_memory() -> Option<u64> {
    least(resident_room(), address_space_room())
}

fn least(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Memory the host and this process's cgroup can still give: MemAvailable, and the
/// cgroup's limit less its usage (v2 memory.max, v1 memory.limit_in_bytes).
fn resident_room() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let host = meminfo
        .as_deref()
        .and_then(|i| meminfo_kb(i, "MemAvailable:"))
        .map(|kb| kb.saturating_mul(1024));
    let cgroup = cgroup_dir("memory").and_then(|dir| {
        let pair =
            |max: &str, cur: &str| Some((read_num(&dir.join(max))?, read_num(&dir.join(cur))?));
        let (max, cur) = pair("memory.max", "memory.current")
            .or_else(|| pair("memory.limit_in_bytes", "memory.usage_in_bytes"))?;
        Some(max.saturating_sub(cur))
    });
    least(host, cgroup)
}

/// What the address-space limit (RLIMIT_AS) leaves this process; None without one.
fn address_space_room() -> Option<u64> {
    let (soft, _) = rlimit(libc::RLIMIT_AS)?;
    let used = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |pages| pages.saturating_mul(page_size()));
    Some(soft.saturating_sub(used))
}

/// A resource limit of this process: (soft, hard), None when the soft one is unlimited.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<(u64, u64)> {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(resource, &mut l) } != 0 || l.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some((l.rlim_cur, l.rlim_max))
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

/// A field of /proc/meminfo (`key` with its colon), in KiB.
fn meminfo_kb(info: &str, key: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A file holding one number; None when missing, unreadable or "max".
fn read_num(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// This process's cgroup (v2) directory, if it can be found.
fn own_cgroup() -> Option<std::path::PathBuf> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = s.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/')))
}

/// This process's cgroup directory for `controller` ("memory", "pids"): its cgroup v1
/// hierarchy when the controller has one, else the v2 (unified) directory.
fn cgroup_dir(controller: &str) -> Option<std::path::PathBuf> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let v1 = s.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, names, path) = (f.next()?, f.next()?, f.next()?);
        names.split(',').any(|n| n == controller).then(|| {
            Path::new("/sys/fs/cgroup")
                .join(names)
                .join(path.trim_start_matches('/'))
        })
    });
    v1.or_else(own_cgroup)
}

/// Checks that `need` bytes for `what` fit in the memory this process can still get,
/// keeping a quarter of it for everything else.
pub fn check_memory(need: u64, what: &str) -> Result<(), String> {
    check_memory_in(need, what, available_memory())
}

fn check_memory_in(need: u64, what: &str, available: Option<u64>) -> Result<(), String> {
    let Some(avail) = available else {
        return Ok(());
    };
    if need <= avail / 4 * 3 {
        return Ok(());
    }
    Err(format!(
        "{what} needs {need} bytes of memory, but this host can give the agent only {avail} \
         (available memory, cgroup and address-space limits): use smaller sizes"
    ))
}

/// Mappings (`/proc/self/maps` lines, counted against `vm.max_map_count`) one worker
/// thread adds. Measured 4 (4.008 a thread over 4,000 threads, Linux x86_64, glibc, Rust
/// 1.95): its stack and the stack's guard page, and the alternate signal stack Rust's
/// runtime maps for every thread, with its own guard page. Beyond the limit the runtime
/// aborts the whole process while starting a thread ("failed to set up alternative stack
/// guard page"), which is why the ceiling is checked before any thread starts. One more
/// a thread for what a worker maps itself (a buffer or a block big enough for malloc to
/// map it on its own, a thread arena).
pub const MAPS_PER_THREAD: u64 = 5;

/// Mappings kept for everything else the process maps while it runs: libraries loaded
/// late, malloc arenas, the runtime's and the drivers' buffers.
const RESERVED_MAPS: u64 = 1_024;

/// Memory one worker thread takes from the host beyond its workload's own: kernel stack
/// and task, page tables, the pages of its stack and TLS it touches. Measured 10-25 KiB
/// for an idle thread (RSS and MemAvailable before and after 4,000 threads); a busy one
/// touches more of its stack.
pub const MEMORY_PER_THREAD: u64 = 64 * 1024;

/// The stack a worker thread reserves: Rust's default, which the thread workloads use,
/// and OLTP's mysql_async fallback (its lean client asks for 256 KiB, but may fall back).
/// It is address space, and committed memory under strict overcommit; resident only as
/// far as it is touched.
pub const WORKER_STACK: u64 = 2 * 1024 * 1024;

/// Address space a thread takes beyond its stack: guard page, alternate signal stack
/// and its guard page, TLS. Generous on purpose.
const THREAD_EXTRA_SPACE: u64 = 64 * 1024;

/// Which limit sets how many threads this host can give a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadLimit {
    /// fleetbench's own bound, [`MAX_THREADS`].
    Fleetbench,
    MaxMapCount,
    Nproc,
    ThreadsMax,
    PidsMax,
    Memory,
    AddressSpace,
    /// Committed memory under strict overcommit (vm.overcommit_memory = 2).
    Commit,
}

impl ThreadLimit {
    /// The limit's name as the user would look it up.
    pub fn name(self) -> &'static str {
        match self {
            ThreadLimit::Fleetbench => "fleetbench's bound",
            ThreadLimit::MaxMapCount => "vm.max_map_count",
            ThreadLimit::Nproc => "RLIMIT_NPROC",
            ThreadLimit::ThreadsMax => "kernel.threads-max",
            ThreadLimit::PidsMax => "the cgroup's pids.max",
            ThreadLimit::Memory => "available memory",
            ThreadLimit::AddressSpace => "RLIMIT_AS",
            ThreadLimit::Commit => "the commit limit",
        }
    }
}

/// The host's figures a thread ceiling comes from, read at one moment; None where the
/// limit is not set, does not apply or cannot be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLimits {
    /// vm.max_map_count, and the mappings this process has now.
    pub max_map_count: Option<u64>,
    pub maps_in_use: u64,
    /// RLIMIT_NPROC's soft limit (every thread of the user counts; not enforced for root).
    pub nproc: Option<u64>,
    /// kernel.threads-max, and the threads the whole host runs now.
    pub threads_max: Option<u64>,
    pub threads_in_use: u64,
    /// The cgroup's pids.max and pids.current.
    pub pids_max: Option<u64>,
    pub pids_in_use: u64,
    /// Memory the host and the cgroup can still give, in bytes.
    pub memory: Option<u64>,
    /// Address space RLIMIT_AS leaves, in bytes.
    pub address_space: Option<u64>,
    /// Under strict overcommit: CommitLimit less Committed_AS, in bytes.
    pub commit: Option<u64>,
}

/// The most worker threads this host can give a run, and the limit that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceiling {
    pub threads: u64,
    pub limit: ThreadLimit,
    /// The limit's value (a count, or bytes for the memory limits).
    pub figure: u64,
    /// What a thread costs against it (mappings or bytes; 1 for counts).
    pub per_thread: u64,
    /// What of it is used already (mappings, threads, pids), where known.
    pub in_use: u64,
}

impl HostLimits {
    /// Reads this host's and this process's figures now.
    pub fn read() -> HostLimits {
        let proc_num = |p: &str| read_num(Path::new(p));
        let maps_in_use = std::fs::read("/proc/self/maps")
            .map_or(0, |m| m.iter().filter(|&&b| b == b'\n').count() as u64);
        // /proc/loadavg's fourth field: runnable/total scheduling entities (threads).
        let threads_in_use = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().nth(3)?.split_once('/')?.1.parse().ok())
            .unwrap_or(0);
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let pids = cgroup_dir("pids");
        let commit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
            .is_ok_and(|m| m.trim() == "2")
            .then(|| {
                let info = std::fs::read_to_string("/proc/meminfo").ok()?;
                let limit = meminfo_kb(&info, "CommitLimit:")?;
                let used = meminfo_kb(&info, "Committed_AS:")?;
                Some(limit.saturating_sub(used).saturating_mul(1024))
            })
            .flatten();
        HostLimits {
            max_map_count: proc_num("/proc/sys/vm/max_map_count"),
            maps_in_use,
            nproc: if root {
                None
            } else {
                rlimit(libc::RLIMIT_NPROC).map(|l| l.0)
            },
            threads_max: proc_num("/proc/sys/kernel/threads-max"),
            threads_in_use,
            pids_max: pids.as_ref().and_then(|d| read_num(&d.join("pids.max"))),
            pids_in_use: pids
                .as_ref()
                .and_then(|d| read_num(&d.join("pids.current")))
                .unwrap_or(0),
            memory: resident_room(),
            address_space: address_space_room(),
            commit,
        }
    }

    /// The most worker threads with `stack` bytes of stack each that fit in every limit,
    /// each limit less what is in use and a reserve for the agent's own needs; memory
    /// limits keep a quarter for everything else. The least names its limit; at most
    /// [`MAX_THREADS`].
    pub fn ceiling(&self, stack: u64) -> Ceiling {
        let mut best = Ceiling {
            threads: MAX_THREADS,
            limit: ThreadLimit::Fleetbench,
            figure: MAX_THREADS,
            per_thread: 1,
            in_use: 0,
        };
        let mut take = |limit, figure: Option<u64>, in_use: u64, reserve: u64, per_thread: u64| {
            let Some(figure) = figure else { return };
            let threads = figure.saturating_sub(in_use.saturating_add(reserve)) / per_thread;
            if threads < best.threads {
                best = Ceiling {
                    threads,
                    limit,
                    figure,
                    per_thread,
                    in_use,
                };
            }
        };
        let maps = self.max_map_count;
        take(
            ThreadLimit::MaxMapCount,
            maps,
            self.maps_in_use,
            RESERVED_MAPS,
            MAPS_PER_THREAD,
        );
        take(ThreadLimit::Nproc, self.nproc, 0, RESERVED_THREADS, 1);
        let max = self.threads_max;
        take(
            ThreadLimit::ThreadsMax,
            max,
            self.threads_in_use,
            RESERVED_THREADS,
            1,
        );
        take(
            ThreadLimit::PidsMax,
            self.pids_max,
            self.pids_in_use,
            RESERVED_THREADS,
            1,
        );
        let quarter = |b: Option<u64>| b.map(|b| b - b / 4);
        take(
            ThreadLimit::Memory,
            quarter(self.memory),
            0,
            0,
            MEMORY_PER_THREAD,
        );
        let space = stack.saturating_add(THREAD_EXTRA_SPACE).max(1);
        take(
            ThreadLimit::AddressSpace,
            quarter(self.address_space),
            0,
            0,
            space,
        );
        take(ThreadLimit::Commit, quarter(self.commit), 0, 0, space);
        best
    }
}

impl Ceiling {
    /// The limit with its figures, e.g. "vm.max_map_count 65530 (5 mappings a thread,
    /// 301 in use)".
    pub fn reason(&self) -> String {
        let (name, n, per, used) = (
            self.limit.name(),
            grouped(self.figure),
            grouped(self.per_thread),
            grouped(self.in_use),
        );
        match self.limit {
            ThreadLimit::Fleetbench => format!("{name} of {n} threads on one agent"),
            ThreadLimit::MaxMapCount => {
                format!("{name} {n}, at {per} mappings a thread, {used} in use")
            }
            ThreadLimit::Nproc => format!("{name} {n}, which counts every thread of its user"),
            ThreadLimit::ThreadsMax => format!("{name} {n}, {used} threads on the host"),
            ThreadLimit::PidsMax => format!("{name} {n}, {used} in use"),
            ThreadLimit::Memory => format!("{name} {n} bytes, at {per} bytes a thread"),
            ThreadLimit::AddressSpace => {
                format!("{name} leaves {n} bytes, at {per} bytes of stack a thread")
            }
            ThreadLimit::Commit => format!(
                "vm.overcommit_memory=2 leaves {n} bytes to commit, at {per} bytes of stack a thread"
            ),
        }
    }

    /// What to raise so that `threads` fit.
    pub fn hint(&self, threads: u64) -> String {
        match self.limit {
            ThreadLimit::Fleetbench => "spread the threads over more agents".into(),
            ThreadLimit::MaxMapCount => {
                let need = threads
                    .saturating_mul(MAPS_PER_THREAD)
                    .saturating_add(self.in_use + RESERVED_MAPS);
                format!(
                    "raise it with sysctl -w vm.max_map_count={need}, or spread the threads over more agents"
                )
            }
            ThreadLimit::Nproc => "raise it (LimitNPROC= in the systemd unit, ulimit -u before \
                 starting the agent), or spread the threads over more agents"
                .into(),
            ThreadLimit::ThreadsMax => {
                "raise it with sysctl -w kernel.threads-max=..., or spread the threads over more agents"
                    .into()
            }
            ThreadLimit::PidsMax => "raise it (TasksMax= in the systemd unit, the container's \
                 pids limit), or spread the threads over more agents"
                .into(),
            ThreadLimit::Memory | ThreadLimit::Commit => {
                "spread the threads over more agents".into()
            }
            ThreadLimit::AddressSpace => {
                "raise it (ulimit -v before starting the agent), or spread the threads over more agents"
                    .into()
            }
        }
    }

    /// Checks that `threads` fit under this ceiling; the error says the numbers, which
    /// limit and what to raise.
    pub fn check(&self, threads: u64) -> Result<(), String> {
        if threads <= self.threads {
            return Ok(());
        }
        Err(format!(
            "{threads} threads exceed this host's limit of {} threads ({}): {}",
            grouped(self.threads),
            self.reason(),
            self.hint(threads)
        ))
    }
}

/// `n` with thousands separated by commas: 16,000.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The most worker threads (with [`WORKER_STACK`] each) this host can give a run now.
pub fn thread_ceiling() -> Ceiling {
    HostLimits::read().ceiling(WORKER_STACK)
}

/// Checks that `threads` more worker threads are within [`MAX_THREADS`] and this host's
/// limits (see [`HostLimits::ceiling`]).
pub fn check_threads(threads: u64) -> Result<(), String> {
    if threads > MAX_THREADS {
        return Err(format!(
            "{threads} threads on one agent are more than the {MAX_THREADS} accepted: spread \
             them over more agents"
        ));
    }
    thread_ceiling().check(threads)
}

/// Bytes an unprivileged user can still write on the file system holding `dir`.
pub fn free_space(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statvfs fills the zeroed struct we own from a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_fits_passes_and_one_that_does_not_says_the_numbers() {
        assert!(check_files(1_000, 1_024 + RESERVED_FILES, 4_096).is_ok());
        let e = check_files(4_000, 1_024, 4_096).unwrap_err();
        assert!(e.contains("4000 database connections"), "{e}");
        assert!(
            e.contains(&format!("{} open files", 4_000 + RESERVED_FILES)),
            "{e}"
        );
        assert!(e.contains("limit is 1024 (hard limit 4096)"), "{e}");
        assert!(check_files(u64::MAX, u64::MAX - 1, u64::MAX).is_err());
    }

    #[test]
    fn raising_leaves_the_soft_limit_at_the_hard_one() {
        let (_, after) = raise_nofile().unwrap();
        let (soft, hard) = nofile().unwrap();
        assert_eq!((soft, soft), (after, hard));
    }

    #[test]
    fn durations_beyond_a_year_are_refused() {
        assert!(check_seconds("--time", MAX_SECONDS).is_ok());
        let e = check_seconds("--time", u64::MAX).unwrap_err();
        assert!(
            e.starts_with("--time is 18446744073709551615 seconds"),
            "{e}"
        );
    }

    #[test]
    fn memory_beyond_what_is_available_is_refused() {
        assert!(check_memory_in(1 << 20, "x", Some(4 << 20)).is_ok());
        let e = check_memory_in(1 << 40, "the memory block", Some(4 << 30)).unwrap_err();
        assert!(
            e.starts_with("the memory block needs 1099511627776 bytes"),
            "{e}"
        );
        assert!(check_memory_in(u64::MAX, "x", None).is_ok());
        // The real host: a terabyte is out of reach here, a kilobyte is not.
        assert!(check_memory(1 << 50, "x").is_err());
        assert!(check_memory(1 << 10, "x").is_ok());
    }

    /// A host like the one issue 42 was measured on: 65530 mappings, room elsewhere.
    fn roomy() -> HostLimits {
        HostLimits {
            max_map_count: Some(65_530),
            maps_in_use: 300,
            nproc: Some(96_553),
            threads_max: Some(193_107),
            threads_in_use: 400,
            pids_max: None,
            pids_in_use: 0,
            memory: Some(24 << 30),
            address_space: None,
            commit: None,
        }
    }

    #[test]
    fn the_least_limit_sets_the_ceiling_and_names_itself() {
        let c = roomy().ceiling(WORKER_STACK);
        assert_eq!(c.limit, ThreadLimit::MaxMapCount);
        assert_eq!(c.threads, (65_530 - 300 - RESERVED_MAPS) / MAPS_PER_THREAD);
        assert!(
            c.reason().starts_with("vm.max_map_count 65,530"),
            "{}",
            c.reason()
        );
        let nproc = HostLimits {
            nproc: Some(4_096),
            ..roomy()
        };
        let c = nproc.ceiling(WORKER_STACK);
        assert_eq!(
            (c.limit, c.threads),
            (ThreadLimit::Nproc, 4_096 - RESERVED_THREADS)
        );
        let max = HostLimits {
            threads_max: Some(10_000),
            threads_in_use: 2_000,
            ..roomy()
        };
        let c = max.ceiling(WORKER_STACK);
        assert_eq!(
            (c.limit, c.threads),
            (ThreadLimit::ThreadsMax, 8_000 - RESERVED_THREADS)
        );
        let pids = HostLimits {
            pids_max: Some(1_000),
            pids_in_use: 100,
            ..roomy()
        };
        let c = pids.ceiling(WORKER_STACK);
        assert_eq!(
            (c.limit, c.threads),
            (ThreadLimit::PidsMax, 900 - RESERVED_THREADS)
        );
        assert!(c.reason().contains("pids.max 1,000"), "{}", c.reason());
        // 64 MiB of memory, three quarters of it at 64 KiB a thread.
        let small = HostLimits {
            memory: Some(64 << 20),
            ..roomy()
        };
        let c = small.ceiling(WORKER_STACK);
        assert_eq!((c.limit, c.threads), (ThreadLimit::Memory, 768));
        // A 1 GiB address space: 2 MiB stacks count in full there.
        let capped = HostLimits {
            address_space: Some(1 << 30),
            ..roomy()
        };
        let c = capped.ceiling(WORKER_STACK);
        assert_eq!(c.limit, ThreadLimit::AddressSpace);
        assert_eq!(c.threads, (3 << 28) / (WORKER_STACK + THREAD_EXTRA_SPACE));
        let strict = HostLimits {
            commit: Some(1 << 30),
            ..roomy()
        };
        assert_eq!(strict.ceiling(WORKER_STACK).limit, ThreadLimit::Commit);
        // Nothing known: fleetbench's own bound.
        let c = HostLimits::default().ceiling(WORKER_STACK);
        assert_eq!((c.limit, c.threads), (ThreadLimit::Fleetbench, MAX_THREADS));
        // Everything used up: none, not an underflow.
        let full = HostLimits {
            maps_in_use: 70_000,
            ..roomy()
        };
        assert_eq!(full.ceiling(WORKER_STACK).threads, 0);
    }

    #[test]
    fn just_under_the_ceiling_passes_and_just_over_says_the_limit() {
        let c = roomy().ceiling(WORKER_STACK);
        assert!(c.check(c.threads).is_ok());
        assert!(c.check(1).is_ok());
        let e = c.check(20_000).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "20000 threads exceed this host's limit of {} threads (vm.max_map_count 65,530",
                grouped(c.threads)
            )),
            "{e}"
        );
        let need = 20_000 * MAPS_PER_THREAD + 300 + RESERVED_MAPS;
        assert!(
            e.contains(&format!("sysctl -w vm.max_map_count={need}")),
            "{e}"
        );
        assert!(c.check(c.threads + 1).is_err());
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(16_000), "16,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn threads_beyond_the_bounds_or_the_host_are_refused() {
        let e = check_threads(1_000_000_000).unwrap_err();
        assert!(e.contains("more than the 100000 accepted"), "{e}");
        assert!(check_threads(1).is_ok());
        // The real host: its ceiling passes, one more does not.
        let c = thread_ceiling();
        assert!(c.threads > 100, "{c:?}");
        assert!(c.check(c.threads).is_ok());
        assert!(check_threads(c.threads + 1_000).is_err() || c.threads + 1_000 > MAX_THREADS);
    }

    /// What a thread costs in mappings here, measured as MAPS_PER_THREAD assumes: the
    /// lines of /proc/self/maps before and after starting threads that wait. Other tests
    /// run beside it, so their mappings may add to the count: it is only held to the
    /// figure with its headroom.
    #[test]
    fn a_thread_costs_no_more_mappings_than_counted() {
        let maps = || HostLimits::read().maps_in_use;
        const N: u64 = 200;
        let gate = std::sync::Arc::new(std::sync::Barrier::new(N as usize + 1));
        let before = maps();
        let threads: Vec<_> = (0..N)
            .map(|_| {
                let g = gate.clone();
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK as usize)
                    .spawn(move || {
                        g.wait();
                    })
                    .unwrap()
            })
            .collect();
        let after = maps();
        gate.wait();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let per = (after - before) as f64 / N as f64;
        eprintln!("{N} threads: {before} -> {after} mappings, {per:.2} a thread");
        assert!(per >= 2.0 && per <= MAPS_PER_THREAD as f64, "{per}");
    }

    #[test]
    fn free_space_is_known_for_the_temp_dir() {
        assert!(free_space(&std::env::temp_dir()).unwrap() > 0);
    }
}
