//! The one writer of standard output. Commands hand it the text the report writers made;
//! each piece is flushed at once, so that a pipe or `tee` sees every interval line as it
//! happens. Progress, notes and warnings go to stderr instead.
//!
//! Standard output failing never panics and never stops a run: the first error is kept,
//! nothing more is written to it, the run goes on and writes its result files, and the
//! command then ends with one line naming the failure ([`settle`]). One exception keeps
//! pipelines quiet: a reader that went away (EPIPE) while no result file is to be written
//! ends the process at once by SIGPIPE, as other tools end (`fleetbench --help | head -1`).
//!
//! When a result file goes to standard output (`--json -`), the text report goes to stderr
//! instead ([`divert_text`]), so that stdout holds the document alone.

use std::fmt::Display;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The text report goes to stderr: a result file is written to stdout.
static DIVERTED: AtomicBool = AtomicBool::new(false);
/// Result files are to be written, so a closed stdout must not end the process early.
static FILES_PENDING: AtomicBool = AtomicBool::new(false);
/// The first error standard output returned.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Prints `text` as it is.
pub fn print(text: &str) {
    emit(text.as_bytes());
}

/// Prints `text` and a newline.
pub fn line(text: impl Display) {
    emit(format!("{text}\n").as_bytes());
}

/// A script's own output (`print`, `io.write`), as an agent sent it.
pub fn script_output(text: &str) {
    emit(text.as_bytes());
}

/// Sends the text report to stderr from now on (a result file is written to stdout).
pub fn divert_text() {
    DIVERTED.store(true, Ordering::Relaxed);
}

/// Result files are to be written: a closed stdout is then kept as an error to report at
/// the end instead of ending the process at once.
pub fn files_pending() {
    FILES_PENDING.store(true, Ordering::Relaxed);
}

/// Writes a result document to standard output through `body`, flushed; its errors are
/// returned (and standard output counts as failed).
pub fn write_document(body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let out = io::stdout();
    let mut w = io::BufWriter::new(out.lock());
    let result = body(&mut w).and_then(|()| w.flush());
    if let Err(e) = &result {
        remember(io::Error::new(e.kind(), e.to_string()));
    }
    result
}

/// The command's outcome once standard output is accounted for: a command that succeeded
/// but could not write its report becomes an error naming the failure.
pub fn settle(outcome: anyhow::Result<i32>) -> anyhow::Result<i32> {
    let failed = FAILED.lock().unwrap_or_else(|p| p.into_inner()).take();
    match (outcome, failed) {
        (Ok(_), Some(e)) => Err(anyhow::anyhow!(
            "cannot write to standard output: {e}{}",
            if FILES_PENDING.load(Ordering::Relaxed) {
                " (the result files were written)"
            } else {
                ""
            }
        )),
        (outcome, _) => outcome,
    }
}

fn emit(bytes: &[u8]) {
    if DIVERTED.load(Ordering::Relaxed) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(bytes).and_then(|()| err.flush());
        return;
    }
    if FAILED.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
        return;
    }
    let result = {
        let mut out = io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush())
    };
    if let Err(e) = result {
        if e.kind() == io::ErrorKind::BrokenPipe && !FILES_PENDING.load(Ordering::Relaxed) {
            end_by_sigpipe();
        }
        tracing::debug!("standard output failed: {e}");
        remember(e);
    }
}

fn remember(e: io::Error) {
    FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert(e);
}

/// Ends the process the way other command-line tools end when the reader of their output
/// goes away: killed by SIGPIPE, with no message. (Rust ignores SIGPIPE so that a lost
/// agent's socket is an error rather than the end of the coordinator.)
fn end_by_sigpipe() -> ! {
    // SAFETY: restoring the default action and raising a signal have no preconditions;
    // the process ends here either way.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE);
}
