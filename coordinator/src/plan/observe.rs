//! Observer agents (`--observe TARGET=AGENT[,AGENT]`): agents on a database server's (or a
//! proxy's) host that sample it each interval instead of loading it, with the server's
//! processes (`--observe-process`) and its data directory (`--observe-dir`).

pub use super::model::ObservePlan;
use super::model::{PlanError, Workload};
use super::values::invalid;

/// The observers of `--observe` (each `TARGET=AGENT[,AGENT]`; the `--mysql-*` target is
/// `default`) for `workload`'s targets and then `replicas` (numbered after the targets, as
/// the servers read each interval are).
pub fn observe_of(
    given: &[String],
    processes: &[String],
    dir: Option<&str>,
    workload: &Workload,
    replicas: &[(fleetbench_model::workloads::server::Target, usize)],
) -> Result<ObservePlan, PlanError> {
    let names: Vec<&str> = workload
        .targets()
        .iter()
        .map(|t| t.name.as_str())
        .chain(replicas.iter().map(|(r, _)| r.name.as_str()))
        .collect();
    let mut hosts: Vec<(usize, String)> = Vec::new();
    for g in given {
        let Some((target, agents)) = g.split_once('=') else {
            return Err(invalid(
                "observe",
                g,
                "expected TARGET=HOST:PORT[,HOST:PORT]",
            ));
        };
        let Some(i) = names.iter().position(|n| *n == target.trim()) else {
            return Err(if names.is_empty() {
                invalid(
                    "observe",
                    g,
                    "this test reaches no database server to observe",
                )
            } else {
                invalid(
                    "observe",
                    g,
                    "names no target or replica of this run (the --mysql-*/--pgsql-* one is 'default')",
                )
            });
        };
        for a in agents.split(',').map(str::trim) {
            let port = a
                .rsplit_once(':')
                .and_then(|(h, p)| (!h.is_empty()).then_some(p));
            if port
                .and_then(|p| p.parse::<u16>().ok())
                .is_none_or(|p| p == 0)
            {
                return Err(invalid(
                    "observe",
                    g,
                    "an agent is HOST:PORT, e.g. db1:7600",
                ));
            }
            if !hosts.iter().any(|(t, h)| *t == i && h == a) {
                hosts.push((i, a.to_string()));
            }
        }
    }
    if hosts.is_empty() && (!processes.is_empty() || dir.is_some()) {
        let which = if processes.is_empty() {
            "observe-dir"
        } else {
            "observe-process"
        };
        return Err(invalid(
            which,
            "",
            "has no effect without --observe TARGET=AGENT",
        ));
    }
    Ok(ObservePlan {
        no_status: false,
        replicas: replicas.to_vec(),
        hosts,
        processes: processes.to_vec(),
        dir: dir.map(String::from),
    })
}

/// The replicas of `--replica NAME=URL[@PRIMARY]` (PRIMARY: a target's name; the first
/// target when left out), each read each interval beside the run without load.
pub fn replicas_of(
    given: &[String],
    workload: &Workload,
) -> Result<Vec<(fleetbench_model::workloads::server::Target, usize)>, PlanError> {
    let names: Vec<&str> = workload.targets().iter().map(|t| t.name.as_str()).collect();
    let mut out: Vec<(fleetbench_model::workloads::server::Target, usize)> = Vec::new();
    for g in given {
        let (spec, primary) = match g.rsplit_once('@') {
            Some((spec, p)) if names.contains(&p) => (spec, p),
            _ => (g.as_str(), names.first().copied().unwrap_or("")),
        };
        let Some(i) = names.iter().position(|n| *n == primary) else {
            return Err(invalid(
                "replica",
                "",
                "this test reaches no database server to replicate",
            ));
        };
        let t = super::targets::parse_target(spec).map_err(|e| match e {
            PlanError::Target(s, why) => PlanError::Replica(s, why),
            other => other,
        })?;
        if names.contains(&t.name.as_str()) || out.iter().any(|(r, _)| r.name == t.name) {
            return Err(invalid(
                "replica",
                t.name.clone(),
                "names a target already: give the replica a name of its own",
            ));
        }
        out.push((t, i));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oltp() -> Workload {
        crate::plan::build(&crate::cli::parse(["fb", "oltp_read_only", "run"]).unwrap())
            .unwrap()
            .workload
    }

    #[test]
    fn observers_name_a_target_and_agents() {
        let w = oltp();
        let o = observe_of(
            &[
                "default=db1:7600,db1:7601".into(),
                "default=db1:7600".into(),
            ],
            &["mariadbd".into()],
            Some("/var/lib/mysql"),
            &w,
            &[],
        )
        .unwrap();
        assert_eq!(
            o.hosts,
            [(0, "db1:7600".to_string()), (0, "db1:7601".to_string())]
        );
        assert_eq!(o.dir.as_deref(), Some("/var/lib/mysql"));
        for bad in [
            "db1:7600",
            "nosuch=db1:7600",
            "default=db1",
            "default=:7600",
            "default=db1:0",
        ] {
            let e = observe_of(&[bad.into()], &[], None, &w, &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains("--observe"), "{bad}: {e}");
        }
        let e = observe_of(&[], &["postgres".into()], None, &w, &[]).unwrap_err();
        assert!(e.to_string().contains("--observe-process"), "{e}");
        let e = replicas_of(&["r=nonsense".into()], &w)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("invalid --replica 'r=nonsense'"), "{e}");
        let e = replicas_of(&["default=mysql://u:p@h:3306/db".into()], &w).unwrap_err();
        assert!(e.to_string().contains("names a target already"), "{e}");
        let r = replicas_of(&["copy=mysql://u:p@h:3306/db@default".into()], &w).unwrap();
        assert_eq!(
            (r[0].0.name.as_str(), r[0].0.host.as_str(), r[0].1),
            ("copy", "h", 0)
        );
        let cpu = crate::plan::build(&crate::cli::parse(["fb", "cpu", "run"]).unwrap()).unwrap();
        let e =
            observe_of(&["default=db1:7600".into()], &[], None, &cpu.workload, &[]).unwrap_err();
        assert!(e.to_string().contains("no database server"), "{e}");
        // A replica's host is observed as the server after the targets.
        let o = observe_of(&["copy=db2:7600".into()], &[], None, &w, &r).unwrap();
        assert_eq!(o.hosts, [(1, "db2:7600".to_string())]);
        assert_eq!(o.replicas.len(), 1);
    }
}
