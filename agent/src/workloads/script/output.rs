//! What a script prints (`print`, `io.write`, its report hooks' text on an agent), kept
//! until the service sends it to the coordinator.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Script output not yet sent to the coordinator, shared by an agent's workers.
#[derive(Default)]
pub struct Output {
    text: Mutex<String>,
    dropped: AtomicBool,
}

/// Output kept at most while the coordinator has not taken it.
const OUTPUT_CAP: usize = 1 << 20;

impl Output {
    pub fn push(&self, s: &str) {
        let mut t = self.text.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() + s.len() > OUTPUT_CAP {
            self.dropped.store(true, Ordering::Relaxed);
            return;
        }
        t.push_str(s);
    }

    /// What came since the last call ("" for nothing).
    pub fn take(&self) -> String {
        let mut t = std::mem::take(&mut *self.text.lock().unwrap_or_else(|p| p.into_inner()));
        if self.dropped.swap(false, Ordering::Relaxed) {
            t.push_str("[fleetbench: script output beyond 1 MiB per interval was left out]\n");
        }
        t
    }
}

impl crate::workloads::Output for Output {
    fn take(&self) -> String {
        Output::take(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_capped_and_says_so() {
        let o = Output::default();
        o.push("a\n");
        assert_eq!(o.take(), "a\n");
        assert_eq!(o.take(), "");
        let big = "x".repeat(OUTPUT_CAP);
        o.push("b\n");
        o.push(&big);
        let t = o.take();
        assert!(
            t.starts_with("b\n") && t.contains("left out"),
            "{}",
            &t[..40]
        );
    }
}
