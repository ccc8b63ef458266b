//! The preamble every layout prints before the run starts (sysbench's options and test
//! lines; fleetbench's adds the agents and the targets), and the warm-up line.

use std::fmt::Write;

use super::common::{banner, size_label, table_ranges};
use super::fleetbench::agents_line;
use crate::plan::{Plan, Workload};
use crate::report::format::rate_label;
use crate::report::style::ReportStyle;
use fleetbench_model::workloads::fileio::{FileioConfig, IoMode};

/// The line that says the run warms up first (None without a warm-up).
pub fn warmup_line(plan: &Plan) -> Option<String> {
    (!plan.warmup.is_zero()).then(|| {
        format!(
            "Warming up for {}s (not measured)...",
            plan.warmup.as_secs_f64()
        )
    })
}

/// The preamble printed before the run starts. `agents` is (address, threads) per agent.
pub fn header(plan: &Plan, agents: &[(String, u32)]) -> String {
    header_in(plan, agents, ReportStyle::Fleetbench)
}

/// The preamble in `style`: sysbench 1.0's alone leaves out the agents and targets.
pub fn header_in(plan: &Plan, agents: &[(String, u32)], style: ReportStyle) -> String {
    let own = style == ReportStyle::Fleetbench;
    let mut s = String::new();
    let _ = writeln!(s, "{}", banner());
    let _ = writeln!(s, "Running the test with following options:");
    let _ = writeln!(s, "Number of threads: {}", plan.threads);
    if let Some(r) = plan.report_interval {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            r.as_secs()
        );
    }
    if plan.rate > 0.0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", rate_label(plan.rate));
    }
    if own {
        let _ = writeln!(s, "{}", agents_line(agents));
    }
    if plan.seed == 0 {
        let _ = writeln!(s, "Initializing random number generator from current time");
    } else {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({}).",
            plan.seed
        );
    }
    s.push_str("\n\n");
    match &plan.workload {
        Workload::Cpu(c) => {
            let _ = writeln!(s, "Prime numbers limit: {}\n", c.max_prime);
        }
        Workload::Oltp(o) if own => {
            for (i, t) in o.config.targets.iter().enumerate() {
                let tables = o.config.tables_on(i);
                let names = match (tables.first(), o.config.table_name.is_empty()) {
                    (Some(&n), false) => o.config.table(n),
                    _ => table_ranges(&tables),
                };
                let _ = writeln!(s, "Target {}: {names}", t.describe());
            }
            let _ = writeln!(s, "Script: built-in ({})", o.config.script.name());
            s.push('\n');
        }
        Workload::Oltp(_) => {}
        Workload::Script(sc) => {
            let _ = writeln!(s, "Script: {} ({})\n", sc.files.path, sc.command);
        }
        Workload::Fileio(f) => s.push_str(&fileio_options(f, true)),
        Workload::Memory(m) => {
            let _ = writeln!(
                s,
                "Running memory speed test with the following options:\n  block size: {}\n  total size: {}MiB\n  operation: {}\n  scope: {}\n",
                size_label(m.block_size),
                m.total_size >> 20,
                m.oper.name(),
                if m.global { "global" } else { "local" }
            );
        }
        Workload::Threads(_) | Workload::Mutex(_) => {}
        Workload::Pgbench(p) => {
            let _ = writeln!(s, "pgbench on target {}\n", p.target.describe());
        }
        Workload::Tpcc(t) => {
            let _ = writeln!(
                s,
                "TPC-C: {} on target {}, home warehouses {}, {}\n",
                crate::report::format::count_of(t.options.warehouses, "warehouse", "warehouses"),
                t.target.describe(),
                if t.options.partition {
                    "from each agent's share"
                } else {
                    "random over all"
                },
                if t.options.keying_think {
                    "the specification's keying and think times"
                } else {
                    "no keying or think time"
                }
            );
        }
    }
    s.push_str("Initializing worker threads...\n\n");
    s
}

/// sysbench's description of the fileio options; `run` adds the run-only lines.
pub fn fileio_options(f: &FileioConfig, run: bool) -> String {
    let mut s = String::new();
    let flags = f.flags.names();
    let _ = writeln!(
        s,
        "Extra file open flags: {}",
        if flags.is_empty() {
            "(none)".to_string()
        } else {
            flags.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "{} files, {} each\n{} total file size",
        f.file_num,
        size_label(f.file_size()),
        size_label(f.file_size() * u64::from(f.file_num))
    );
    let _ = writeln!(
        s,
        "Files: test_file.0..{} in each agent's work directory{}",
        f.file_num.saturating_sub(1),
        if f.file_dir.is_empty() {
            String::new()
        } else {
            format!(", under {}", f.file_dir)
        }
    );
    if !run {
        return s;
    }
    let _ = writeln!(s, "Block size {}", size_label(f.block_size));
    let _ = writeln!(
        s,
        "Read/Write ratio for combined random IO test: {:.2}",
        f.rw_ratio
    );
    if f.fsync_all {
        let _ = writeln!(s, "Calling fsync() after each write operation.");
    } else if f.fsync_freq > 0 {
        let _ = writeln!(
            s,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            f.fsync_freq
        );
    } else {
        let _ = writeln!(s, "Periodic FSYNC disabled.");
    }
    let _ = writeln!(
        s,
        "Calling fsync() at the end of test, {}.",
        if f.fsync_end { "Enabled" } else { "Disabled" }
    );
    let _ = writeln!(
        s,
        "Using {} I/O mode",
        match f.io_mode {
            IoMode::Sync => "synchronous".to_string(),
            IoMode::Async => format!("asynchronous (backlog {})", f.async_backlog),
            IoMode::Mmap => "mmap".to_string(),
        }
    );
    if let Some(m) = f.mode {
        let _ = writeln!(s, "Doing {}", m.describe());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::test_support::plan;
    use super::*;

    #[test]
    fn header_names_agents_and_options() {
        let h = header(&plan(), &[("a:1".into(), 2), ("b:2".into(), 1)]);
        assert!(h.contains("Number of threads: 3\n"));
        assert!(h.contains("Report intermediate results every 1 second(s)\n"));
        assert!(h.contains("Agents: 2: a:1 (2 threads), b:2 (1 thread)\n"));
        assert!(h.contains("Prime numbers limit: 10000\n"));
    }
}
