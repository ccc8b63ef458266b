//! Observer agents during a run: each is greeted like any agent (token, TLS, protocol
//! version) and asked to Observe from the measurement's start (after any warm-up); its
//! samples are kept by tick number until the run ends. One that cannot be reached, or is
//! lost, is a warning naming it and a note in the result; the run goes on.

use std::time::Duration;

use fleetbench_model::server_host;
use fleetbench_proto::v1 as pb;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::warn;

use super::connect::{Link, connect_one, status_text};
use crate::plan::Plan;
use crate::servers::ObservedHost;

/// The observations of one run, running.
pub struct Observing {
    tasks: Vec<JoinHandle<ObservedHost>>,
    stop: watch::Sender<bool>,
}

/// Starts every observer of `plan` (none: nothing runs); `connections` (the agents' Ready)
/// say where each target keeps its data.
pub fn start(
    plan: &Plan,
    link: Option<&Link>,
    run_id: &str,
    connections: &[(usize, crate::merge::Connection)],
) -> Observing {
    let (stop, stopped) = watch::channel(false);
    let tasks = match link {
        Some(link) => plan
            .observe
            .hosts
            .iter()
            .map(|(target, addr)| {
                let req = pb::ObserveRequest {
                    run_id: run_id.to_string(),
                    tick_ms: plan.tick().as_millis() as u64,
                    processes: plan.observe.processes.clone(),
                    dir: plan.observe.dir.clone().unwrap_or_default(),
                    server_dir: server_dir(connections, *target).unwrap_or_default(),
                };
                let host = ObservedHost {
                    target: *target,
                    addr: addr.clone(),
                    ..Default::default()
                };
                tokio::spawn(observe(
                    host,
                    link.clone(),
                    req,
                    plan.warmup,
                    stopped.clone(),
                ))
            })
            .collect(),
        None => Vec::new(),
    };
    Observing { tasks, stop }
}

/// The data directory target `target`'s server reported to the agents that connected to
/// it (MySQL's datadir, PostgreSQL's data_directory), if one did.
fn server_dir(connections: &[(usize, crate::merge::Connection)], target: usize) -> Option<String> {
    connections
        .iter()
        .filter(|(t, _)| *t == target)
        .find_map(|(_, c)| {
            ["datadir", "data_directory"]
                .iter()
                .find_map(|k| c.server_vars.get(*k).cloned())
        })
}

impl Observing {
    /// Ends the observations: what each observer sent, or why it sent nothing.
    pub async fn finish(self) -> Vec<ObservedHost> {
        let _ = self.stop.send(true);
        let mut out = Vec::new();
        for t in self.tasks {
            if let Ok(h) = t.await {
                out.push(h);
            }
        }
        out
    }
}

/// One observer: greeted after the warm-up, then its samples until `stop`.
async fn observe(
    mut host: ObservedHost,
    link: Link,
    req: pb::ObserveRequest,
    warmup: Duration,
    mut stop: watch::Receiver<bool>,
) -> ObservedHost {
    tokio::select! {
        () = tokio::time::sleep(warmup) => {}
        _ = stop.changed() => return host,
    }
    let lost = |host: &mut ObservedHost, why: String| {
        warn!(
            "observer {}: {why}; the run goes on without its figures",
            host.addr
        );
        host.error = Some(why);
    };
    let mut conn = match connect_one(host.addr.clone(), link).await {
        Ok(c) => c,
        Err(e) => {
            lost(&mut host, e.to_string());
            return host;
        }
    };
    let mut stream = match conn.client.observe(req).await {
        Ok(s) => s.into_inner(),
        Err(s) => {
            lost(&mut host, status_text(&s));
            return host;
        }
    };
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            msg = stream.message() => match msg {
                Ok(Some(s)) => host.samples.push(server_host::from_proto(&s)),
                Ok(None) => {
                    lost(&mut host, "it ended its observation".into());
                    break;
                }
                Err(s) => {
                    lost(&mut host, status_text(&s));
                    break;
                }
            },
        }
    }
    host
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::Connection;

    #[test]
    fn the_observer_is_told_the_data_directory_its_server_reported() {
        let with = |k: &str, v: &str| Connection {
            server_vars: [(k.to_string(), v.to_string())].into(),
            ..Default::default()
        };
        let seen = [
            (0, Connection::default()),
            (0, with("datadir", "/var/lib/mysql/")),
            (1, with("data_directory", "/var/lib/postgresql/15/main")),
        ];
        assert_eq!(server_dir(&seen, 0).as_deref(), Some("/var/lib/mysql/"));
        assert_eq!(
            server_dir(&seen, 1).as_deref(),
            Some("/var/lib/postgresql/15/main")
        );
        // A replica read beside the run has no connection of the load's.
        assert_eq!(server_dir(&seen, 2), None);
    }
}
