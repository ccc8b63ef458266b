//! The memory bound of a script run: a watchdog thread reads the agent's resident memory
//! every [`EVERY`] and stops the run once it has grown by more than the limit since the
//! run began opening (`fleetbench-agent --script-memory`, by default a quarter of the
//! memory the host has available then). LuaJIT allocates outside the process's malloc and
//! its compiled loops reach no hook, so the process's own figure is what is watched; a
//! state that keeps allocating after the stop is left behind with its thread, and the
//! agent starts itself again (see the binary).

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::runner::{Control, OpenProgress};

/// How often the resident memory is read: a script allocating 350 MB/s overshoots the
/// limit by some 7 MB before the watchdog sees it.
pub const EVERY: Duration = Duration::from_millis(20);

/// The share of the host's available memory a script run may take when the agent's
/// operator gives no `--script-memory`.
pub const DEFAULT_SHARE: u64 = 4;

/// The least default limit, on a host with little memory available.
const MIN_DEFAULT: u64 = 256 << 20;

/// The limit of a run: the operator's, else a quarter of what the host has available now.
pub fn limit(given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| {
        fleetbench_model::limits::available_memory()
            .map_or(MIN_DEFAULT, |a| (a / DEFAULT_SHARE).max(MIN_DEFAULT))
    })
}

/// A run's watchdog: what it stops, and why it did.
#[derive(Default)]
pub struct Watch {
    /// The run, once it exists (its workers opened).
    control: Mutex<Option<Weak<Control>>>,
    /// Why the run was stopped, once it was.
    reason: Mutex<Option<String>>,
}

impl Watch {
    /// Starts watching the agent's memory for a run of `script` that may grow it by
    /// `limit` bytes; `progress` is the opening's, cancelled if the limit is passed before
    /// the run exists. The watchdog ends with the returned handle's last clone.
    pub fn start(script: &str, limit: u64, progress: Arc<OpenProgress>) -> Arc<Watch> {
        let watch = Arc::new(Watch::default());
        let weak = Arc::downgrade(&watch);
        let script = script.to_string();
        let base = resident_bytes().unwrap_or(0);
        let spawned = std::thread::Builder::new()
            .name("fb-script-mem".into())
            .stack_size(64 << 10)
            .spawn(move || watch_loop(weak, &script, base, limit, &progress));
        if let Err(e) = spawned {
            tracing::warn!("cannot watch the script's memory: {e}");
        }
        watch
    }

    /// The run to stop once the limit is passed.
    pub fn attach(&self, control: &Arc<Control>) {
        *self.control.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::downgrade(control));
    }

    /// Why the run was stopped, if the limit was passed.
    pub fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Reads the resident memory until the watch is dropped or the limit is passed.
fn watch_loop(watch: Weak<Watch>, script: &str, base: u64, limit: u64, progress: &OpenProgress) {
    loop {
        std::thread::sleep(EVERY);
        let Some(w) = watch.upgrade() else { return };
        let Some(now) = resident_bytes() else { return };
        let grown = now.saturating_sub(base);
        if grown <= limit {
            continue;
        }
        let reason = format!(
            "script error: {script}: the run's Lua states took {} MiB of memory, more than this agent's --script-memory of {} MiB: the run was stopped",
            grown >> 20,
            limit >> 20
        );
        tracing::error!("{reason}");
        *w.reason.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.clone());
        let control = w.control.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match control.and_then(|c| c.upgrade()) {
            Some(c) => c.abort(reason),
            None => progress.cancel(),
        }
        return;
    }
}

/// This process's resident memory in bytes, from /proc/self/statm.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_grows_past_its_limit_is_stopped_with_the_reason() {
        let progress = Arc::new(OpenProgress::default());
        let watch = Watch::start("grow.lua", 32 << 20, progress.clone());
        // Memory touched page by page, as a growing Lua heap would be; after each 4 MiB the
        // watchdog gets a few of its rounds to look, so that a busy machine's scheduling
        // does not decide how far past the limit this gets.
        let mut held: Vec<Vec<u8>> = Vec::new();
        let t0 = std::time::Instant::now();
        while watch.reason().is_none() && t0.elapsed() < Duration::from_secs(20) {
            held.push(vec![1u8; 4 << 20]);
            let looked = std::time::Instant::now();
            while watch.reason().is_none() && looked.elapsed() < EVERY * 5 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let reason = watch.reason().expect("stopped");
        assert!(
            reason.contains("grow.lua") && reason.contains("--script-memory of 32 MiB"),
            "{reason}"
        );
        // Before the run existed, the opening was called off.
        assert!(progress.is_cancelled());
        assert!(
            held.len() * 4 < 32 + 64,
            "stopped only after {} MiB",
            held.len() * 4
        );
    }

    #[test]
    fn the_default_is_a_share_of_the_available_memory() {
        assert_eq!(limit(Some(1 << 30)), 1 << 30);
        let d = limit(None);
        assert!(d >= MIN_DEFAULT);
        if let Some(a) = fleetbench_model::limits::available_memory() {
            assert!(d <= (a / DEFAULT_SHARE).max(MIN_DEFAULT));
        }
    }
}
