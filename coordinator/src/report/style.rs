//! `--report-style`: which layout the text report takes, fleetbench's own or one of
//! sysbench's. The text writers follow it; the command line sets it (crate::sweep).

/// `--report-style`: what the text report holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReportStyle {
    /// sysbench 1.0's report, then fleetbench's own blocks (agents, targets, connections).
    #[default]
    Fleetbench,
    /// sysbench 1.0's report alone, for scripts that expect nothing else.
    Sysbench10,
    /// sysbench 0.5's interval lines and end report ("Test execution summary").
    Sysbench05,
    /// sysbench 0.4's end report ("General statistics", "response time"); its interval
    /// lines (0.4 had none) are 0.5's.
    Sysbench04,
}

impl ReportStyle {
    /// One of sysbench's own layouts, without fleetbench's blocks.
    pub fn is_sysbench(self) -> bool {
        self != ReportStyle::Fleetbench
    }
}
