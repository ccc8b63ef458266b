//! The HTML report: one self-contained file (inline CSS, SVG and a small script; nothing
//! fetched from the network) that says what ran (test, command line, run id, start and
//! duration, tags, agents by host name, targets with their servers) and draws charts,
//! in a grid as wide as the window, from a result document: for a run, TPS (or
//! events/s), QPS, p95/p99 and the per-agent rate over time, each on its own axis; for
//! sweeps and scenarios, QPS, TPS, p95 and p99 against thread count with one line per
//! scenario; for rate sweeps, the achieved rate against the offered one and the
//! throughput-latency curve (p50, p95 and p99 against the achieved rate, or one line per
//! scenario and percentile chart), each point carrying its offered rate; a latency
//! percentile spectrum with one line per step; and the configuration (for a sweep, every
//! step's). Charts without anything to show (no point, or every value 0) are left out,
//! named in one line saying why. Every data point is an SVG circle carrying its values in data-* attributes; the
//! inline script checks them and records its verdict as data attributes of a hidden
//! element (an error is shown on the page), so a headless browser's DOM dump shows it
//! without the reader seeing it.
//!
//! One module a part of the page: the page itself (`page`: its sections, a table of
//! contents for sweeps and scenario files, each step's charts behind a picker), what ran
//! (`header`, with the client hosts' saturation warnings), what the text report says
//! beside the figures (`checks`: ignored errors by code, TPC-C's Constraint Check), the
//! charts of a run over time (`run_charts`), across a sweep's steps
//! (`sweep_charts`) and of the latency spectrum (`spectrum`), the grid they sit in and
//! the charts left out for want of data (`grid`), the tables (`tables`: the summary with
//! TpmC, TPC-C's transaction types, agents, configurations), pgbench's figures of a
//! `fleetbench pgbench` run (`pgbench`); SVG drawing (`svg`, its axes in `axis`), names of
//! agents (as the text report and the tables name them), targets and settings (`names`)
//! and the page's text (`markup`).

pub mod axis;
mod change_chart;
mod checks;
pub mod compare_page;
mod grid;
mod header;
mod markup;
mod names;
pub mod page;
mod pgbench;
pub mod run_charts;
pub mod spectrum;
pub mod svg;
pub mod sweep_charts;
mod tables;

pub use axis::{integer_ticks, ticks};
pub use page::{render, write};
pub use run_charts::run_charts;
pub use spectrum::{nines, steps_spectrum};
pub use svg::{Chart, Line, XAxis, point_count, svg, text_width};
pub use sweep_charts::{rate_charts, sweep_charts};

#[cfg(test)]
mod test_support;
