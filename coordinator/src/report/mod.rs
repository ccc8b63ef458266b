//! Report writers: sysbench-layout text for people, JSON for programs, and the tables,
//! comparisons and charts built from them.

pub mod compare;
pub mod csv;
pub mod doc;
pub mod doc_text;
pub mod histogram;
pub mod hlog;
pub mod hosts;
pub mod html;
pub mod json;
pub mod meta;
pub mod progress;
pub mod stats;
pub mod stdout;
pub mod text;
pub mod tpcc;

/// Label of a percentile as sysbench prints it: 95 -> "95", 99.9 -> "99.9".
pub fn pct_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        let s = format!("{p:.3}");
        s.trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentile_labels() {
        assert_eq!(super::pct_label(95.0), "95");
        assert_eq!(super::pct_label(99.9), "99.9");
        assert_eq!(super::pct_label(99.99), "99.99");
        assert_eq!(super::pct_label(100.0), "100");
    }
}
