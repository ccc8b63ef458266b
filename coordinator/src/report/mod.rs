//! Report writers: sysbench-layout text for people, JSON for programs, and the tables,
//! comparisons and charts built from them.

pub mod compare;
pub mod compare_files;
pub mod compare_series;
pub mod compare_table;
pub mod csv;
pub mod doc;
pub mod doc_agents;
pub mod doc_text;
pub mod errors;
pub mod format;
pub mod histogram;
pub mod hlog;
pub mod hosts;
pub mod html;
pub mod json;
pub mod meta;
pub mod pgbench_log;
pub mod progress;
pub mod stats;
pub mod stdout;
pub mod style;
pub mod text;
pub mod tpcc;
pub mod trend;

pub use format::pct_label;
