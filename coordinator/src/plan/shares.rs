//! The pure functions that split work over agents: threads, events, the offered rate,
//! tables and TPC-C's warehouses.

use super::model::PlanError;

/// Splits `total` into `parts` shares as evenly as possible, larger shares first:
/// 10 over 3 gives 4, 3, 3.
pub fn split_evenly(total: u64, parts: usize) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let base = total / parts as u64;
    let extra = (total % parts as u64) as usize;
    (0..parts).map(|i| base + u64::from(i < extra)).collect()
}

/// Splits an event limit over agents in proportion to their threads: the events are first
/// spread over all threads evenly, then each agent gets the sum over its threads.
pub fn split_by_threads(events: u64, threads: &[u64]) -> Vec<u64> {
    let total: u64 = threads.iter().sum();
    let per_thread = split_evenly(events, total as usize);
    let mut out = Vec::with_capacity(threads.len());
    let mut at = 0usize;
    for &t in threads {
        out.push(per_thread[at..at + t as usize].iter().sum());
        at += t as usize;
    }
    out
}

/// Each agent's share of `rate`: in proportion to its threads, so that every thread
/// faces the same offered load.
pub fn split_rate(rate: f64, threads: &[u64]) -> Vec<f64> {
    let total: u64 = threads.iter().sum();
    if total == 0 {
        return vec![0.0; threads.len()];
    }
    threads
        .iter()
        .map(|&t| rate * t as f64 / total as f64)
        .collect()
}

/// The tables each agent works on: all of them (shared) or a contiguous share each
/// (partition; larger shares first). For prepare and cleanup, always a share each.
pub fn tables_for_agents(
    tables: &[(u32, usize)],
    agents: usize,
    shared: bool,
) -> Vec<Vec<(u32, usize)>> {
    if shared {
        return vec![tables.to_vec(); agents];
    }
    let shares = split_evenly(tables.len() as u64, agents);
    let mut out = Vec::with_capacity(agents);
    let mut at = 0usize;
    for n in shares {
        out.push(tables[at..at + n as usize].to_vec());
        at += n as usize;
    }
    out
}

/// Contiguous shares of warehouses 1..=w over `n` agents, larger shares first; an agent
/// beyond the w-th gets none (an empty range is never returned: n is capped at w).
pub fn warehouse_shares(w: u32, n: usize) -> Vec<(u32, u32)> {
    let n = n.clamp(1, w.max(1) as usize);
    let mut first = 1u32;
    split_evenly(u64::from(w), n)
        .into_iter()
        .map(|k| {
            let share = (first, first + k as u32 - 1);
            first += k as u32;
            share
        })
        .collect()
}

/// With `--warehouse-split=partition`, every agent with threads needs warehouses of its
/// own, and its terminals fit them: ten per warehouse, one per district (clause 4.2.2).
pub fn check_tpcc_partition(w: u32, threads: &[u64]) -> Result<(), PlanError> {
    let active: Vec<u64> = threads.iter().copied().filter(|&t| t > 0).collect();
    if active.len() > w as usize {
        return Err(PlanError::NotSupported(format!(
            "--warehouse-split=partition with {} agents and {w} warehouses (every agent needs one of its own; give --warehouses at least {})",
            active.len(),
            active.len()
        )));
    }
    for (t, (first, last)) in active.iter().zip(warehouse_shares(w, active.len())) {
        let allowed = 10 * u64::from(last - first + 1);
        if *t > allowed {
            return Err(PlanError::NotSupported(format!(
                "--warehouse-split=partition: {t} terminals on warehouses {first}..{last} (at most 10 per warehouse: {allowed}; raise --warehouses or lower --threads)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_even_with_larger_shares_first() {
        assert_eq!(split_evenly(10, 3), vec![4, 3, 3]);
        assert_eq!(split_evenly(8, 2), vec![4, 4]);
        assert_eq!(split_evenly(2, 3), vec![1, 1, 0]);
        assert_eq!(split_evenly(0, 2), vec![0, 0]);
        for (total, parts) in [(97u64, 7usize), (256, 3), (1, 1)] {
            let s = split_evenly(total, parts);
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn events_follow_thread_shares() {
        assert_eq!(split_by_threads(100, &[4, 3, 3]), vec![40, 30, 30]);
        assert_eq!(split_by_threads(11, &[2, 1]), vec![8, 3]);
        assert_eq!(split_by_threads(7, &[4, 3, 3]).iter().sum::<u64>(), 7);
    }

    #[test]
    fn warehouse_shares_are_contiguous_and_cover_all() {
        assert_eq!(warehouse_shares(10, 3), vec![(1, 4), (5, 7), (8, 10)]);
        assert_eq!(warehouse_shares(2, 5), vec![(1, 1), (2, 2)]);
        assert_eq!(warehouse_shares(1, 1), vec![(1, 1)]);
        check_tpcc_partition(2, &[10, 10]).unwrap();
        check_tpcc_partition(4, &[20, 20]).unwrap();
        assert!(check_tpcc_partition(2, &[11, 10]).is_err());
        assert!(check_tpcc_partition(1, &[1, 1]).is_err());
        // An agent without threads needs no warehouse.
        check_tpcc_partition(1, &[5, 0]).unwrap();
    }
}
