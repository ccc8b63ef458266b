//! Progress of a run's start on stderr: how many connections the agents have opened, as
//! `opening connections: 2500/4000`. A bar that redraws in place on a terminal; otherwise
//! (logs, CI, pipes) a plain line at most once a second and when all are open.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The text of one progress line.
pub fn opening_line(done: u64, total: u64) -> String {
    format!("opening connections: {done}/{total}")
}

/// Shows connection-opening progress; clears its bar when dropped.
pub struct Opening {
    bar: Option<indicatif::ProgressBar>,
    last_line: Option<Instant>,
}

impl Default for Opening {
    fn default() -> Self {
        Self::new()
    }
}

impl Opening {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "opening connections: {pos}/{len} {bar:30}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Opening {
            bar,
            last_line: None,
        }
    }

    pub fn update(&mut self, done: u64, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(done);
            return;
        }
        let due = self
            .last_line
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if due || done >= total {
            eprintln!("{}", opening_line(done, total));
            self.last_line = Some(Instant::now());
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_says_open_of_total() {
        assert_eq!(opening_line(2500, 4000), "opening connections: 2500/4000");
    }
}
