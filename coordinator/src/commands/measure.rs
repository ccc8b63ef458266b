//! The one measured run that single runs and sweep steps share: the warm-up line, interval
//! lines, checkpoint reports, the HdrHistogram log and the metrics board as the run goes.

use std::iter::Peekable;

use crate::merge::{MergedInterval, RunResult};
use crate::metrics::{Board, Exporter, RunLabels};
use crate::plan::Plan;
use crate::report::hlog::RunLog;
use crate::report::progress::{Opening, RunLines};
use crate::report::style::ReportStyle;
use crate::report::{self, stdout};
use crate::session::{self, AgentConn, AgentTick, RunObserver};

/// What a measured run shows while it goes.
pub struct Live {
    /// The layout of the interval lines.
    pub style: ReportStyle,
    /// The connections line and "Threads started!" at Go (a single run's report; a sweep
    /// step has its own line instead).
    pub banner: bool,
    /// `--hlog`'s log, begun at Go and finished (or abandoned) at the end.
    pub hlog: Option<RunLog>,
    /// `--metrics-listen`/`--metrics-push`: the board the run keeps up to date, and the
    /// push of its final figures.
    pub metrics: Option<Exporter>,
    /// A script's report hooks: they replace the interval lines when set.
    pub hooks: Option<std::sync::Arc<crate::script::Hooks>>,
    /// `--web`: the live page's view, updated as the run goes.
    pub web: Option<std::sync::Arc<crate::web::live::LiveView>>,
    /// `--live-agents`: a line per agent under each interval line.
    pub live_agents: bool,
}

/// Runs `plan` on `conns`: the warm-up line, an interval line per tick when
/// `--report-interval` asks for them, checkpoint reports when they fall due, the
/// HdrHistogram log, the metrics board. A log of a run that fails is removed, or kept with
/// a note when it holds intervals already.
pub async fn measure(plan: &Plan, conns: Vec<AgentConn>, live: Live) -> anyhow::Result<RunResult> {
    let board = live.metrics.as_ref().map(Exporter::board);
    let mut watch = Watch::new(plan, &conns, board, live.style, live.banner, live.hlog);
    watch.hooks = live.hooks.clone();
    if live.live_agents {
        watch.agent_lines = Some(Vec::new());
    }
    if let Some(w) = &live.web {
        let agents: Vec<(String, String)> = conns
            .iter()
            .map(|c| (c.addr.clone(), c.hello.hostname.clone()))
            .collect();
        let title = format!("{} ({} threads)", plan.workload.name(), plan.threads);
        w.begin(&title, &agents);
        watch.web = Some(w.clone());
    }
    let result = session::run(conns, plan, &mut watch).await;
    let hlog = watch.hlog.take();
    match result {
        Ok(r) => {
            if let Some(log) = hlog {
                log.finish().map_err(anyhow::Error::msg)?;
            }
            if let Some(m) = &live.metrics {
                push_metrics(m, &r).await;
            }
            Ok(r)
        }
        Err(e) => {
            // Nothing half-written left behind unannounced.
            if let Some(note) = hlog.and_then(|l| l.abandon()) {
                eprintln!("note: {note}");
            }
            Err(e.into())
        }
    }
}

/// The run's final figures onto the board, and to the Pushgateway when there is one (the
/// figures are kept whether or not the push works).
async fn push_metrics(m: &Exporter, r: &RunResult) {
    m.board().finish(r);
    match m.push().await {
        Some(Ok(at)) => eprintln!("note: pushed the run's metrics to {at}"),
        Some(Err(why)) => eprintln!("warning: cannot push the run's metrics: {why}"),
        None => {}
    }
}

/// What a measured run updates as the session tells it how the run goes.
struct Watch<'a> {
    plan: &'a Plan,
    style: ReportStyle,
    banner: bool,
    hlog: Option<RunLog>,
    board: Option<&'a Board>,
    /// The board's labels of the agents, (address, host), and of the targets, (name,
    /// where): given to the board at Go.
    agents: Vec<(String, String)>,
    targets: Vec<(String, String)>,
    /// --report-checkpoints: the intervals since the last checkpoint merged into one (a
    /// histogram's worth of memory, however long), and the checkpoints to come.
    since_checkpoint: Option<MergedInterval>,
    checkpoints: Peekable<std::iter::Copied<std::slice::Iter<'a, u64>>>,
    opening: Opening,
    hooks: Option<std::sync::Arc<crate::script::Hooks>>,
    /// The servers' figures the agents sent for intervals not merged yet (the board's).
    server_ticks: Vec<crate::servers::ServerTick>,
    /// The servers the run reads, worked out once from the plan.
    readables: Vec<crate::servers::Readable>,
    /// `--web`'s view.
    web: Option<std::sync::Arc<crate::web::live::LiveView>>,
    /// `--live-agents`: each agent's line of the ticks not printed yet, (tick, line).
    agent_lines: Option<Vec<(u32, String)>>,
    /// A plain progress line every 10 s on stderr when it is no terminal and the run
    /// prints no interval lines (a run logged to a file shows that it moves).
    plain: Option<RunLines>,
}

impl<'a> Watch<'a> {
    fn new(
        plan: &'a Plan,
        conns: &[AgentConn],
        board: Option<&'a Board>,
        style: ReportStyle,
        banner: bool,
        hlog: Option<RunLog>,
    ) -> Watch<'a> {
        let agents = conns
            .iter()
            .map(|c| (c.addr.clone(), c.hello.hostname.clone()))
            .collect();
        Watch {
            plan,
            style,
            banner,
            hlog,
            board,
            agents,
            targets: target_labels(plan),
            since_checkpoint: None,
            checkpoints: plan.checkpoints.iter().copied().peekable(),
            opening: Opening::new(),
            hooks: None,
            server_ticks: Vec::new(),
            readables: crate::report::json::readables(plan),
            web: None,
            agent_lines: None,
            plain: plan
                .report_interval
                .is_none()
                .then(|| RunLines::new(plan.time.map_or(0, |t| t.as_secs())))
                .flatten(),
        }
    }

    /// Adds `iv` to the span since the last checkpoint, and prints the checkpoint report
    /// when one falls due: at the first interval whose line reaches it (a tick's end, or
    /// the run's last, partial interval, which may end a little before the run's time when
    /// a tick woke late).
    fn checkpoint(&mut self, iv: &MergedInterval) {
        if self.checkpoints.peek().is_none() {
            return;
        }
        match &mut self.since_checkpoint {
            Some(acc) => acc.extend(iv),
            None => self.since_checkpoint = Some(iv.clone()),
        }
        let mut due = None;
        while let Some(&c) = self.checkpoints.peek()
            && iv.label_secs() >= c
        {
            due = Some(c);
            self.checkpoints.next();
        }
        if let Some(c) = due
            && let Some(span) = self.since_checkpoint.take()
        {
            stdout::print(&report::text::checkpoint_report(self.plan, c, &span));
        }
    }
}

/// Each target of `plan` as the metrics name it: (name, where).
fn target_labels(plan: &Plan) -> Vec<(String, String)> {
    plan.workload
        .targets()
        .iter()
        .map(|t| {
            let at = t
                .socket
                .clone()
                .unwrap_or_else(|| format!("{}:{}", t.host, t.port));
            (t.name.clone(), at)
        })
        .collect()
}

impl RunObserver for Watch<'_> {
    fn opening(&mut self, open: u64, total: u64) {
        self.opening.update(open, total);
        if let Some(w) = &self.web {
            w.opening(open, total);
        }
    }

    fn go(&mut self, run_id: &str, ready: &RunResult) {
        let plan = self.plan;
        if let Some(w) = &self.web {
            w.go(run_id);
        }
        if let Some(b) = self.board {
            b.begin(RunLabels {
                run_id: run_id.to_string(),
                workload: plan.workload.name().to_string(),
                tags: plan.tags.clone(),
                agents: std::mem::take(&mut self.agents),
                targets: std::mem::take(&mut self.targets),
            });
        }
        if let Some(log) = self.hlog.as_mut() {
            let title = format!(
                "fleetbench {} {}: latency in microseconds",
                env!("CARGO_PKG_VERSION"),
                plan.workload.name()
            );
            log.begin(&title, std::time::SystemTime::now() + plan.warmup);
        }
        if self.banner {
            if self.style == ReportStyle::Fleetbench {
                stdout::print(&report::text::connections_header(plan, ready));
            } else {
                // sysbench's layouts have no such header: said beside them.
                eprint!("{}", report::text::connect_retries(plan, ready));
            }
            stdout::line("Threads started!\n");
        }
        if let Some(line) = report::text::warmup_line(plan) {
            stdout::line(line);
        }
    }

    fn interval(&mut self, iv: &MergedInterval) {
        if let Some(log) = self.hlog.as_mut() {
            log.merged(iv);
        }
        if let Some(w) = &self.web {
            w.interval(iv);
        }
        if let Some(b) = self.board {
            b.merged(iv);
            let loaded = self.plan.workload.targets().len();
            b.servers(crate::servers::of_tick(
                iv,
                &self.server_ticks,
                &self.readables,
                loaded,
            ));
            self.server_ticks.retain(|t| t.seq > iv.seq);
        }
        let hooked = self.plan.report_interval.is_some()
            && self
                .hooks
                .as_ref()
                .is_some_and(|h| h.interval(iv, self.plan.percentiles[0]));
        if self.plan.report_interval.is_some() && !hooked {
            stdout::line(report::text::interval_line_in(
                iv,
                self.plan.percentiles[0],
                &self.plan.workload,
                self.style,
            ));
            if let Some(lines) = self.agent_lines.as_mut() {
                for (_, l) in lines.iter().filter(|(seq, _)| *seq == iv.seq) {
                    stdout::line(l.clone());
                }
                lines.retain(|(seq, _)| *seq > iv.seq);
            }
        }
        self.checkpoint(iv);
        if let Some(p) = self.plain.as_mut()
            && let Some(line) = p.at(iv.label_secs(), iv.events_per_sec())
        {
            eprintln!("{line}");
        }
    }

    fn agent_interval(&mut self, t: AgentTick) {
        if let Some(log) = self.hlog.as_mut() {
            log.agent(t.addr, t.seq, t.part);
        }
        if let Some(lines) = self.agent_lines.as_mut() {
            let pct = self.plan.percentiles[0];
            lines.push((t.seq, report::text::agent_line(t.name, t.part, t.load, pct)));
        }
        if let Some(w) = &self.web {
            let rate = crate::merge::per_sec(t.part.events, t.part.duration);
            w.agent(t.addr, rate, t.part.events, t.load);
        }
        if let Some(b) = self.board {
            b.agent_interval(t.addr, t.part, t.load);
            self.server_ticks.extend_from_slice(t.servers);
        }
    }
}
