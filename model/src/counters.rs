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

/// The one list of a counters struct's fields, for the code that must name every one of
/// them (the merge here, the wire mirror in `wire`), so that neither can miss a counter:
/// `counter_fields!(DbCounters, m!(ARGS))` calls `m! { ARGS [counts], maps [counts by
/// code] }` (`IoCounters` has no maps).
macro_rules! counter_fields {
    (DbCounters, $then:ident!($($args:tt)*)) => {
        $then! {
            $($args)*
            [reads, writes, others, ignored_errors, reconnects, reconnect_failures, connect_ns],
            maps [errors_by_code]
        }
    };
    (IoCounters, $then:ident!($($args:tt)*)) => {
        $then! { $($args)* [reads, writes, fsyncs, bytes_read, bytes_written] }
    };
}

pub(crate) use counter_fields;

/// Adds the counts of `$o` into `$into` and, code by code, its counts by code: the merge
/// of the fields [`counter_fields`] lists.
macro_rules! merge_counters {
    ($into:expr, $o:expr, [$($f:ident),*] $(, maps [$($m:ident),*])?) => {
        add_counters!($into, $o, $($f),*);
        $($(
            // Usually empty: no map walk (an OLTP worker's counters merge every event).
            if !$o.$m.is_empty() {
                for (code, n) in &$o.$m {
                    let e = $into.$m.entry(*code).or_default();
                    *e = e.saturating_add(*n);
                }
            }
        )*)?
    };
}

/// Zeroes the fields [`counter_fields`] lists and empties the maps, keeping their
/// allocation: field by field, because an OLTP worker resets after every event and
/// dropping a map (a call, empty or not) was most of the cost.
macro_rules! reset_counters {
    ($c:expr, [$($f:ident),*] $(, maps [$($m:ident),*])?) => {
        $( $c.$f = 0; )*
        $($(
            if !$c.$m.is_empty() {
                $c.$m.clear();
            }
        )*)?
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
    /// Ignored errors by server error code (a SQLSTATE as [`crate::sqlstate`] says).
    pub errors_by_code: BTreeMap<u32, u64>,
    /// Attempts to reconnect to a lost server that failed: while these grow and nothing
    /// else does, the server is down.
    pub reconnect_failures: u64,
    /// Time spent opening the connections counted in `reconnects` (pgbench's `-C`:
    /// "average connection time"), in nanoseconds.
    pub connect_ns: u64,
}

impl DbCounters {
    /// Adds `o` in. Saturating: the coordinator merges what agents send, and a broken
    /// agent's nonsense must not crash it.
    #[inline]
    pub fn merge(&mut self, o: &DbCounters) {
        counter_fields!(DbCounters, merge_counters!(self, o,));
    }

    /// Counts one ignored error with its server error code.
    #[inline]
    pub fn count_ignored(&mut self, code: u32) {
        self.ignored_errors += 1;
        *self.errors_by_code.entry(code).or_default() += 1;
    }

    /// Field by field, without building an empty value to compare with: a script worker
    /// asks this every event.
    #[inline]
    pub fn is_zero(&self) -> bool {
        let DbCounters {
            reads,
            writes,
            others,
            ignored_errors,
            reconnects,
            errors_by_code,
            reconnect_failures,
            connect_ns,
        } = self;
        (*reads
            | *writes
            | *others
            | *ignored_errors
            | *reconnects
            | *reconnect_failures
            | *connect_ns)
            == 0
            && errors_by_code.is_empty()
    }

    /// Empties the counters (see `reset_counters`).
    #[inline]
    pub fn reset(&mut self) {
        counter_fields!(DbCounters, reset_counters!(self,));
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
    #[inline]
    pub fn merge(&mut self, o: &IoCounters) {
        counter_fields!(IoCounters, merge_counters!(self, o,));
    }

    pub fn is_zero(&self) -> bool {
        *self == IoCounters::default()
    }
}
