//! Embedded agents: when the user names no `--agents`, the coordinator serves agents inside
//! its own process on loopback and talks to them over the same gRPC path as remote ones.
//! They share this process's limits (threads, mappings, open files): the plan checks all
//! their threads against the host's ceiling, the session holds each embedded agent to the
//! whole run, and each refuses a Start beyond it, so a run too big for the host is refused
//! with one line, never started until the runtime aborts the process.
//!
//! An embedded agent listens on a port the system picks, which says nothing to a reader:
//! reports and errors name it `embedded` (`embedded-1`, `embedded-2`, ... with
//! `--local-agents`), as [`agent_name`] says; the result's JSON keeps its address too.

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The embedded agents serving in this process now: (address, name). An address is
/// unique while its listener is open, so agents of two runs at once (tests) never mix.
static NAMES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// The name an agent goes by in reports and errors: `embedded` (or `embedded-N`) for an
/// agent serving inside this process, else its address as given.
pub fn agent_name(addr: &str) -> String {
    let names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    names
        .iter()
        .find(|(a, _)| a == addr)
        .map_or_else(|| addr.to_string(), |(_, n)| n.clone())
}

/// Agents running inside this process.
pub struct LocalAgents {
    pub addrs: Vec<String>,
    stops: Vec<oneshot::Sender<()>>,
    tasks: Vec<JoinHandle<()>>,
}

/// Starts `k` agents on 127.0.0.1 with ports the system picks. With `own_dirs` (fileio
/// with several embedded agents, whose files would otherwise collide) agent i works in
/// `fleetbench-agent-i` under the given work directory, created when missing.
pub async fn start(
    k: u32,
    options: fleetbench_agent::AgentOptions,
    own_dirs: bool,
) -> std::io::Result<LocalAgents> {
    let mut agents = LocalAgents {
        addrs: Vec::new(),
        stops: Vec::new(),
        tasks: Vec::new(),
    };
    for i in 0..k {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?.to_string();
        NAMES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((addr.clone(), crate::report::format::embedded_name(i, k)));
        agents.addrs.push(addr);
        let (stop, stopped) = oneshot::channel::<()>();
        let mut options = options.clone();
        if own_dirs {
            options.work_dir = options.work_dir.join(format!("fleetbench-agent-{i}"));
            std::fs::create_dir_all(&options.work_dir)?;
        }
        agents.stops.push(stop);
        agents.tasks.push(tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(e) = fleetbench_agent::serve(listener, options, shutdown).await {
                tracing::error!("embedded agent failed: {e}");
            }
        }));
    }
    Ok(agents)
}

/// Starts the embedded agents a plan asks for (`AgentSource::Local`), working in the current
/// directory; None when the plan names remote agents.
pub async fn start_for(plan: &crate::plan::Plan) -> anyhow::Result<Option<LocalAgents>> {
    use anyhow::Context;
    let crate::plan::AgentSource::Local(k) = &plan.agents else {
        return Ok(None);
    };
    // In-process agents on loopback: no token needed between us and ourselves.
    let options = fleetbench_agent::AgentOptions {
        token: None,
        tls: None,
        work_dir: std::env::current_dir().context("cannot read the current directory")?,
        name: None,
        // An embedded agent runs scripts, as sysbench itself would on this host.
        allow_scripts: true,
        // The same default bound on a script's memory as a standalone agent's.
        script_memory: None,
        // Threads a run leaves behind end with this process.
        stuck: None,
    };
    let own_dirs = *k > 1 && matches!(plan.workload, crate::plan::Workload::Fileio(_));
    start(*k, options, own_dirs)
        .await
        .map(Some)
        .context("cannot start the embedded agents")
}

/// Runs `f` with the agents of `plan`: embedded ones are started before and stopped after.
pub async fn with_agents<F, Fut, T>(plan: &crate::plan::Plan, f: F) -> anyhow::Result<T>
where
    F: FnOnce(Vec<String>) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    match &plan.agents {
        crate::plan::AgentSource::Remote(a) => f(a.clone()).await,
        crate::plan::AgentSource::Local(..) => {
            let agents = start_for(plan).await?.expect("local agents");
            let out = f(agents.addrs.clone()).await;
            agents.stop().await;
            out
        }
    }
}

impl LocalAgents {
    /// Stops every embedded agent and waits for it.
    pub async fn stop(self) {
        NAMES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(a, _)| !self.addrs.contains(a));
        for s in self.stops {
            let _ = s.send(());
        }
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn embedded_agents_go_by_their_names_while_they_serve() {
        let options = fleetbench_agent::AgentOptions {
            token: None,
            tls: None,
            work_dir: std::env::temp_dir(),
            name: None,
            allow_scripts: false,
            script_memory: None,
            stuck: None,
        };
        let two = start(2, options.clone(), false).await.unwrap();
        let one = start(1, options, false).await.unwrap();
        let names =
            |a: &LocalAgents| -> Vec<String> { a.addrs.iter().map(|x| agent_name(x)).collect() };
        assert_eq!(names(&two), ["embedded-1", "embedded-2"]);
        assert_eq!(names(&one), ["embedded"]);
        // Any other agent goes by its address.
        assert_eq!(agent_name("10.0.0.1:7600"), "10.0.0.1:7600");
        let addrs = two.addrs.clone();
        two.stop().await;
        assert_eq!(
            agent_name(&addrs[0]),
            addrs[0],
            "a stopped agent is no longer named"
        );
        assert_eq!(names(&one), ["embedded"]);
        one.stop().await;
    }
}
