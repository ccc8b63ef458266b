//! The counters a run reports beside its latencies: database work and file operations.
//! Agents count them, the coordinator merges them (saturating: a broken agent cannot crash
//! it).

use std::collections::BTreeMap;

/// Adds each named counter of `$o` into `$into`, saturating: the coordinator merges what
/// agents send, and a broken agent's nonsense must not crash it.
#[macro_export]
macro_rules! add_counters {
    ($into:expr, $o:expr, $($field:ident),+ $(,)?) => {
        $( $into.$field = $into.$field.saturating_add($o.$field); )+
    };
}

/// Counters of database work (OLTP only; zero for other workloads).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbCounters {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// Ignored errors by server error code.
    pub errors_by_code: BTreeMap<u32, u64>,
    /// Attempts to reconnect to a lost server that failed: while these grow and nothing
    /// else does, the server is down.
    pub reconnect_failures: u64,
}

impl DbCounters {
    /// Adds `o` in. Saturating: the coordinator merges what agents send, and a broken
    /// agent's nonsense must not crash it.
    pub fn merge(&mut self, o: &DbCounters) {
        add_counters!(
            self,
            o,
            reads,
            writes,
            others,
            ignored_errors,
            reconnects,
            reconnect_failures
        );
        for (code, n) in &o.errors_by_code {
            let e = self.errors_by_code.entry(*code).or_default();
            *e = e.saturating_add(*n);
        }
    }

    /// Counts one ignored error with its server error code.
    pub fn count_ignored(&mut self, code: u16) {
        self.ignored_errors += 1;
        *self.errors_by_code.entry(u32::from(code)).or_default() += 1;
    }

    pub fn is_zero(&self) -> bool {
        *self == DbCounters::default()
    }

    /// Empties the counters, keeping nothing allocated worth keeping.
    pub fn reset(&mut self) {
        *self = DbCounters::default();
    }
}

/// File operations (fileio only; zero for other workloads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl IoCounters {
    /// Adds `o` in, saturating (see [`DbCounters::merge`]).
    pub fn merge(&mut self, o: &IoCounters) {
        add_counters!(self, o, reads, writes, fsyncs, bytes_read, bytes_written);
    }

    pub fn is_zero(&self) -> bool {
        *self == IoCounters::default()
    }
}
