//! The HTML report: one self-contained file (inline CSS, SVG and a small script; nothing
//! fetched from the network) with charts drawn from a result document: for a run, TPS (or
//! events/s), QPS, p95/p99 and the per-agent rate over time, each on its own axis; for
//! sweeps and scenarios, QPS, TPS, p95 and p99 against thread count with one line per
//! scenario; for rate sweeps, the achieved rate against the offered one and the
//! throughput-latency curve (p50, p95 and p99 against the achieved rate, or one line per
//! scenario and percentile chart), each point carrying its offered rate; a latency
//! percentile spectrum with one line per step; and the configuration (for a sweep, every
//! step's). A chart without any data point is replaced by a line saying "no data for
//! ...". Every data point is an SVG circle carrying its values in data-* attributes; the
//! inline script checks them and records its verdict as data attributes of a hidden
//! element (an error is shown on the page), so a headless browser's DOM dump shows it
//! without the reader seeing it.
//!
//! One module a part of the page: the page itself (`page`), the charts of a run over
//! time (`run_charts`), across a sweep's steps (`sweep_charts`) and of the latency
//! spectrum (`spectrum`), the tables (`tables`); SVG drawing (`svg`, its axes in
//! `axis`) and the page's text (`markup`).

pub mod axis;
mod markup;
pub mod page;
pub mod run_charts;
pub mod spectrum;
pub mod svg;
pub mod sweep_charts;
mod tables;

pub use axis::{integer_ticks, ticks};
pub use page::{render, write};
pub use run_charts::run_charts;
pub use spectrum::{nines, steps_spectrum};
pub use svg::{Chart, Line, XAxis, chart_html, point_count, svg, text_width};
pub use sweep_charts::{rate_charts, sweep_charts};

#[cfg(test)]
mod test_support;
