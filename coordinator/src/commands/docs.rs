//! `fleetbench compare FILE...` and `fleetbench report FILE [--html OUT]`: result files
//! read back, compared, and shown as text or HTML.

use crate::cli::RawArgs;

/// `fleetbench compare BASELINE.json OTHER.json ...`.
pub fn compare(raw: &RawArgs) -> anyhow::Result<i32> {
    crate::report::compare::main(raw)
}

/// `fleetbench report FILE` (text) or `fleetbench report FILE --html OUT.html`.
pub fn report(raw: &RawArgs) -> anyhow::Result<i32> {
    if raw.html.is_none() {
        crate::report::doc_text::main(raw)
    } else {
        crate::report::html::main(raw)
    }
}
