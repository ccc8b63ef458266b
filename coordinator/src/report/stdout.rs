//! The one writer of standard output. Commands hand it the text the report writers made;
//! each piece is flushed at once, so that a pipe or `tee` sees every interval line as it
//! happens. Progress, notes and warnings go to stderr instead.

use std::fmt::Display;
use std::io::Write;

/// Prints `text` as it is.
pub fn print(text: &str) {
    // print! rather than a locked write: on a closed pipe it panics, which the binary's
    // hook turns into the quiet SIGPIPE exit other tools have.
    print!("{text}");
    std::io::stdout().flush().ok();
}

/// Prints `text` and a newline.
pub fn line(text: impl Display) {
    println!("{text}");
    std::io::stdout().flush().ok();
}
