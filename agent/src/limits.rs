//! The open-files limit: raised to the hard limit when the agent starts, and checked
//! against what a run needs before any connection is opened, so a run too big for this
//! host is refused with the numbers instead of failing halfway with EMFILE.

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
}
