//! Live figures for Prometheus (`--metrics-listen ADDR`, `--metrics-push URL`). A board
//! that the measured run updates as agents' intervals arrive (`board`, over the series
//! table in `series`); a pure renderer of Prometheus' text format (0.0.4) and
//! OpenMetrics 1.0 (`exposition`); a small HTTP server that answers scrapes from the
//! board (`server`); and a push of a run's final figures to a Pushgateway (`push`).
//!
//! Counters and the latency histogram are per agent, so `sum()` over agents gives the
//! fleet's figures exactly; the merged percentiles of the last interval (which no sum of
//! per-agent percentiles can give) are a series of their own. Every series carries the
//! run id and the run's tags as labels.

pub mod board;
pub mod exposition;
pub mod push;
pub mod series;
pub mod server;

pub use board::Board;
pub use exposition::{OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};
pub use push::PushUrl;
pub use series::RunLabels;
pub use server::{Exporter, ListenError};

#[cfg(test)]
mod test_support;
