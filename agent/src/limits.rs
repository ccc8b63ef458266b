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
    let mut best: Option<u64> = None;
    let mut take = |v: u64| best = Some(best.map_or(v, |b| b.min(v)));
    if let Ok(info) = std::fs::read_to_string("/proc/meminfo")
        && let Some(kb) = meminfo_available(&info)
    {
        take(kb.saturating_mul(1024));
    }
    if let Some(dir) = own_cgroup() {
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        if let (Some(max), Some(cur)) = (read("memory.max"), read("memory.current")) {
            take(max.saturating_sub(cur));
        }
    }
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut l) } == 0 && l.rlim_cur != libc::RLIM_INFINITY
    {
        let used = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |pages| pages.saturating_mul(page_size()));
        take(l.rlim_cur.saturating_sub(used));
    }
    best
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

/// MemAvailable of /proc/meminfo, in KiB.
fn meminfo_available(info: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// This process's cgroup (v2) directory, if it can be found.
fn own_cgroup() -> Option<std::path::PathBuf> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = s.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/')))
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

/// The most threads this process may add: the least of the user's process limit, the
/// kernel's thread limit and the cgroup's pids.max, less what is in use where known.
pub fn thread_room() -> u64 {
    let mut room = u64::MAX;
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut l) } == 0
        && l.rlim_cur != libc::RLIM_INFINITY
    {
        room = room.min(l.rlim_cur);
    }
    let num = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    if let Some(max) = num(Path::new("/proc/sys/kernel/threads-max")) {
        room = room.min(max);
    }
    if let Some(dir) = own_cgroup()
        && let Some(max) = num(&dir.join("pids.max"))
    {
        room = room.min(max.saturating_sub(num(&dir.join("pids.current")).unwrap_or(0)));
    }
    room
}

/// Checks that `threads` more worker threads are within [`MAX_THREADS`] and this host's
/// limits.
pub fn check_threads(threads: u64) -> Result<(), String> {
    check_threads_in(threads, thread_room())
}

fn check_threads_in(threads: u64, room: u64) -> Result<(), String> {
    if threads > MAX_THREADS {
        return Err(format!(
            "{threads} threads on one agent are more than the {MAX_THREADS} accepted: spread \
             them over more agents"
        ));
    }
    if threads.saturating_add(RESERVED_THREADS) > room {
        return Err(format!(
            "{threads} threads do not fit in this host's limits (room for {room} more \
             threads: RLIMIT_NPROC, kernel.threads-max, the cgroup's pids.max; TasksMax= \
             under systemd)"
        ));
    }
    Ok(())
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

    #[test]
    fn threads_beyond_the_bounds_or_the_host_are_refused() {
        assert!(check_threads_in(1_000, 10_000).is_ok());
        assert!(check_threads_in(1_000_000_000, u64::MAX).is_err());
        let e = check_threads_in(5_000, 1_000).unwrap_err();
        assert!(e.contains("room for 1000 more threads"), "{e}");
        assert!(check_threads(1).is_ok());
        assert!(check_threads(1_000_000_000).is_err());
    }

    #[test]
    fn free_space_is_known_for_the_temp_dir() {
        assert!(free_space(&std::env::temp_dir()).unwrap() > 0);
    }
}
